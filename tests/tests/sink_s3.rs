//! The S3 sink under Confluent's class and keys (`io.confluent.connect.s3.S3SinkConnector`)
//! against the S3-compatible server at `S3_ENDPOINT` (fails when unset, never skips):
//!
//! - each format's files, read back by independent readers (Python's `fastavro` and `pyarrow`
//!   from PyPI, in `.local/s3-readers-venv`), hold the records, under Confluent's object names;
//! - each partitioner names objects as Confluent's does (hand-computed names for records with
//!   known times and fields);
//! - a worker SIGKILLed mid-run and a replay write the same object names with the same bytes,
//!   for Avro and Parquet; an S3 connection cut during multipart uploads leaves each record in
//!   exactly one object, named as an uninterrupted run names them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::proxy::TcpProxy;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, ObjectStoreExt};
use serde_json::{Value, json};

const SINK: &str = "io.confluent.connect.s3.S3SinkConnector";
const JSON: &str = "io.confluent.connect.s3.format.json.JsonFormat";
const AVRO: &str = "io.confluent.connect.s3.format.avro.AvroFormat";
const PARQUET: &str = "io.confluent.connect.s3.format.parquet.ParquetFormat";
const BYTES: &str = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat";
const PARTITIONERS: &str = "io.confluent.connect.storage.partitioner.";

/// A fresh bucket and a client on it.
struct Bucket {
    endpoint: String,
    name: String,
    store: Arc<dyn ObjectStore>,
}

async fn bucket() -> Bucket {
    let endpoint = std::env::var("S3_ENDPOINT").expect(
        "S3_ENDPOINT is not set: start the S3-compatible server with `deploy/s3.sh up` and export \
         the S3_ENDPOINT=... line it prints (tests/run.sh does both)",
    );
    let endpoint = endpoint.trim_end_matches('/').to_owned();
    let name = unique("s3sink");
    let res = reqwest::Client::new()
        .put(format!("{endpoint}/{name}"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("S3 server at {endpoint} does not answer: {e}"));
    assert!(
        res.status().is_success(),
        "creating bucket {name}: {}",
        res.status()
    );
    let store: Arc<dyn ObjectStore> = Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(&endpoint)
            .with_bucket_name(&name)
            .with_access_key_id(key())
            .with_secret_access_key(secret())
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .expect("S3 client"),
    );
    Bucket {
        endpoint,
        name,
        store,
    }
}

fn key() -> String {
    std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".to_owned())
}

fn secret() -> String {
    std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".to_owned())
}

impl Bucket {
    /// Confluent-style config of a sink writing to this bucket through `endpoint`.
    fn config(&self, endpoint: &str, topic: &str, topics_dir: &str, extra: Value) -> Value {
        let mut c = json!({
            "connector.class": SINK,
            "tasks.max": "2",
            "topics": topic,
            "s3.bucket.name": self.name,
            "s3.region": "us-east-1",
            "store.url": endpoint,
            "aws.access.key.id": key(),
            "aws.secret.access.key": secret(),
            "topics.dir": topics_dir,
            "storage.class": "io.confluent.connect.s3.storage.S3Storage",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }

    /// Name (without `prefix/`) -> bytes of every object under `prefix`.
    async fn objects(&self, prefix: &str) -> BTreeMap<String, Vec<u8>> {
        let prefix = object_store::path::Path::from(prefix);
        let list: Vec<_> = self
            .store
            .list(Some(&prefix))
            .try_collect()
            .await
            .unwrap_or_else(|e| panic!("listing objects under {prefix}: {e}"));
        let mut out = BTreeMap::new();
        for meta in list {
            let bytes = async { self.store.get(&meta.location).await?.bytes().await }
                .await
                .unwrap_or_else(|e| panic!("reading {}: {e}", meta.location));
            let name = meta.location.to_string();
            let rel = name
                .strip_prefix(&format!("{prefix}/"))
                .unwrap_or(&name)
                .to_owned();
            out.insert(rel, bytes.to_vec());
        }
        out
    }

    /// Waits until the objects under `prefix` are exactly `names`; returns them.
    async fn wait_for(&self, prefix: &str, names: &[String]) -> BTreeMap<String, Vec<u8>> {
        let want: Vec<&String> = names.iter().collect();
        eventually(
            Duration::from_secs(240),
            &format!("objects under {prefix}"),
            || async {
                let got = self.objects(prefix).await;
                (got.keys().collect::<Vec<_>>() == want).then_some(got)
            },
        )
        .await
    }
}

/// A HEAD request signed as the S3 client signs (SigV4 with the test credentials), for the
/// response headers `object_store` does not expose.
async fn signed_head(url: &str) -> reqwest::Response {
    signed("HEAD", url).await
}

/// A body-less request signed as the S3 client signs (SigV4 with the test credentials).
async fn signed(method: &str, url: &str) -> reqwest::Response {
    use object_store::aws::{AwsAuthorizer, AwsCredential};
    use object_store::client::{HttpRequest, HttpRequestBody};
    let mut req = HttpRequest::new(HttpRequestBody::empty());
    *req.method_mut() = method.parse().unwrap();
    *req.uri_mut() = url.parse().unwrap();
    let credential = AwsCredential {
        key_id: key(),
        secret_key: secret(),
        token: None,
    };
    AwsAuthorizer::new(&credential, "s3", "us-east-1")
        .try_authorize(&mut req, None)
        .unwrap();
    let mut r = reqwest::Client::new().request(method.parse().unwrap(), url);
    for (name, value) in req.headers() {
        r = r.header(name.as_str(), value.as_bytes());
    }
    r.send().await.unwrap()
}

impl Bucket {
    /// The S3 tags of object `key` (GetObjectTagging).
    async fn tags(&self, key: &str) -> BTreeMap<String, String> {
        let key = key.replace('+', "%2B").replace('=', "%3D");
        let res = signed(
            "GET",
            &format!("{}/{}/{key}?tagging", self.endpoint, self.name),
        )
        .await;
        assert!(res.status().is_success(), "tags of {key}: {}", res.status());
        let xml = res.text().await.unwrap();
        let inside = |text: &str, tag: &str| -> String {
            let open = format!("<{tag}>");
            let start = text.find(&open).map_or(0, |i| i + open.len());
            let end = text[start..].find("</").map_or(text.len(), |i| start + i);
            text[start..end].to_owned()
        };
        xml.split("<Tag>")
            .skip(1)
            .map(|t| (inside(t, "Key"), inside(t, "Value")))
            .collect()
    }
}

async fn create(w: &WorkerProc, name: &str, config: Value) {
    let body = json!({"name": name, "config": config});
    eventually(Duration::from_secs(60), "connector created", || async {
        let (status, answer) = w.send("POST", "/connectors", Some(body.clone())).await;
        assert_ne!(status, 400, "connector {name} refused: {answer}");
        (status == 201 || status == 409 && w.get(&format!("/connectors/{name}")).await.is_ok())
            .then_some(())
    })
    .await;
}

/// The Connect schema of the test records (JsonConverter's envelope form).
fn order_schema() -> Value {
    json!({"type": "struct", "name": "com.example.Order", "optional": false, "fields": [
        {"field": "id", "type": "int64", "optional": false},
        {"field": "country", "type": "string", "optional": false},
        {"field": "amount", "type": "double", "optional": true},
        {"field": "tags", "type": "array", "items": {"type": "string", "optional": false}, "optional": false},
        {"field": "ts", "type": "int64", "optional": false}
    ]})
}

/// Record `i` of partition `p`: its payload as the readers should return it.
fn order(p: i32, i: i64, ts: i64) -> Value {
    let id = i64::from(p) * 100_000 + i;
    json!({
        "id": id,
        "country": if i % 2 == 0 { "fr" } else { "de" },
        "amount": if i % 3 == 0 { Value::Null } else { json!(i as f64 / 4.0) },
        "tags": (0..i % 3).map(|t| format!("t{t}")).collect::<Vec<_>>(),
        "ts": ts,
    })
}

/// Produces `(partition, timestamp, payload)` as JsonConverter envelopes, each partition in
/// order with one idempotent producer. The timestamps are fixed ones from the past: the topic
/// must be made with [`kafka::create_topics_keeping_old_records`], or the broker's retention
/// deletes the records at its next check, mid-test (issue 38: the kill test's sinks "stalled"
/// after the rebalance because their records were gone).
async fn produce(topic: &str, records: &[(i32, i64, Value)]) {
    use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
    use rdkafka::client::DefaultClientContext;
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let admin: AdminClient<DefaultClientContext> =
        kafka::client_config().create().expect("admin client");
    let described = admin
        .describe_configs(
            [&ResourceSpecifier::Topic(topic)],
            &AdminOptions::new().request_timeout(Some(Duration::from_secs(30))),
        )
        .await
        .expect("describe the topic's configs");
    let retention = described
        .into_iter()
        .next()
        .and_then(|r| r.ok())
        .and_then(|r| r.get("retention.ms").and_then(|e| e.value.clone()));
    assert_eq!(
        retention.as_deref(),
        Some("-1"),
        "{topic} would lose records timestamped in the past at the broker's next retention \
         check: create it with kafka::create_topics_keeping_old_records"
    );
    let producer: FutureProducer = kafka::client_config()
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .create()
        .expect("producer config");
    let bodies: Vec<(i32, i64, String)> = records
        .iter()
        .map(|(p, ts, v)| {
            (
                *p,
                *ts,
                json!({"schema": order_schema(), "payload": v}).to_string(),
            )
        })
        .collect();
    let mut pending = Vec::new();
    for (p, ts, body) in &bodies {
        let r: FutureRecord<'_, str, str> = FutureRecord::to(topic)
            .partition(*p)
            .timestamp(*ts)
            .payload(body);
        pending.push(
            producer
                .send_result(r)
                .map_err(|(e, _)| e)
                .expect("enqueue"),
        );
    }
    for p in pending {
        p.await
            .expect("delivery")
            .map_err(|(e, _)| e)
            .expect("acknowledged");
    }
}

/// Runs `tests/objectstore/read_files.py` on `files` (written to a temporary directory) in
/// `.local/s3-readers-venv` (pyarrow, fastavro and cramjam, fastavro's snappy, from PyPI, made
/// on first use); its output
/// per file name.
fn read_back(format: &str, files: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Value> {
    use std::process::Command;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = root.join(".local/s3-readers-venv");
    let python = venv.join("bin/python");
    let ready = || {
        Command::new(&python)
            .args(["-c", "import pyarrow, fastavro, cramjam"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ready() {
        let ok = (python.exists()
            || Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success()))
            && Command::new(venv.join("bin/pip"))
                .args(["install", "-q", "--disable-pip-version-check"])
                .args(["pyarrow>=15", "fastavro>=1.9", "cramjam"])
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            ok,
            "could not make {} with pyarrow, fastavro and cramjam",
            venv.display()
        );
    }
    let dir = std::env::temp_dir().join(unique("s3-read"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = BTreeMap::new();
    for (i, (name, bytes)) in files.iter().enumerate() {
        let path = dir.join(format!("{i}"));
        std::fs::write(&path, bytes).unwrap();
        paths.insert(path.to_string_lossy().into_owned(), name.clone());
    }
    let out = Command::new(&python)
        .arg(root.join("tests/objectstore/read_files.py"))
        .arg(format)
        .args(paths.keys())
        .output()
        .expect("run read_files.py");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "read_files.py {format} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (paths[v["file"].as_str().unwrap()].clone(), v)
        })
        .collect()
}

/// `<topic>/<encoded>/<topic>+<p>+<offset, 10 digits><ext>`.
fn name(topic: &str, encoded: &str, p: i32, offset: i64, ext: &str) -> String {
    format!("{topic}/{encoded}/{topic}+{p}+{offset:010}{ext}")
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// JSON (plain and gzipped), Avro (deflate) and Parquet (snappy and gzip) files of one topic,
/// and ByteArray files
/// of another: Confluent's names, and the records in each file as independent readers see them.
#[tokio::test(flavor = "multi_thread")]
async fn each_format_reads_back_with_independent_readers() {
    const PER_PARTITION: i64 = 60;
    const FLUSH: i64 = 20;
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-formats");
    let w = spec.start_worker().await;
    let topic = unique("orders");
    kafka::create_topics_keeping_old_records(&[&topic], 2).await;
    let records: Vec<(i32, i64, Value)> = (0..2)
        .flat_map(|p| (0..PER_PARTITION).map(move |i| (p, 1_700_000_000_000 + i, order(p, i, i))))
        .collect();
    produce(&topic, &records).await;
    let formats = [
        ("json", JSON, json!({}), ".json"),
        ("avro", AVRO, json!({"avro.codec": "deflate"}), ".avro"),
        ("parquet", PARQUET, json!({}), ".snappy.parquet"),
        (
            "parquetgz",
            PARQUET,
            json!({"parquet.codec": "gzip"}),
            ".gz.parquet",
        ),
        (
            "jsongz",
            JSON,
            json!({"s3.compression.type": "gzip"}),
            ".json.gz",
        ),
    ];
    for (dir, class, extra, _) in &formats {
        let mut extra = extra.clone();
        extra["format.class"] = json!(class);
        extra["flush.size"] = json!(FLUSH.to_string());
        create(
            &w,
            &format!("s3-fmt-{dir}-{topic}"),
            b.config(&b.endpoint, &topic, dir, extra),
        )
        .await;
    }
    for (dir, _, _, ext) in &formats {
        let names: Vec<String> = (0..2)
            .flat_map(|p| (0..PER_PARTITION / FLUSH).map(move |f| (p, f * FLUSH)))
            .map(|(p, o)| name(&topic, &format!("partition={p}"), p, o, ext))
            .collect();
        let files = b.wait_for(dir, &names).await;
        let read: BTreeMap<String, Vec<Value>> = match *dir {
            "json" => files
                .iter()
                .map(|(n, b)| (n.clone(), json_lines(b)))
                .collect(),
            "avro" | "parquet" | "parquetgz" | "jsongz" => {
                let reader = match *dir {
                    "avro" | "jsongz" => *dir,
                    _ => "parquet",
                };
                read_back(reader, &files)
                    .into_iter()
                    .map(|(n, v)| {
                        if *dir == "jsongz" {
                            assert_eq!(v["codec"], "gzip", "{n}");
                        } else if *dir == "avro" {
                            assert_eq!(v["codec"], "deflate", "{n}");
                            assert!(
                                v["schema"].as_str().unwrap().contains("com.example.Order"),
                                "{v}"
                            );
                        } else {
                            let want = if *dir == "parquet" { "SNAPPY" } else { "GZIP" };
                            assert_eq!(v["codec"], want, "{n}");
                        }
                        (n, v["records"].as_array().unwrap().clone())
                    })
                    .collect()
            }
            _ => unreachable!(),
        };
        for p in 0..2 {
            for f in 0..PER_PARTITION / FLUSH {
                let n = name(&topic, &format!("partition={p}"), p, f * FLUSH, ext);
                let want: Vec<Value> = (f * FLUSH..(f + 1) * FLUSH)
                    .map(|i| order(p, i, i))
                    .collect();
                assert_eq!(read[&n], want, "{dir}: {n}");
            }
        }
    }

    // ByteArrayFormat: the values' bytes, each followed by the separator.
    let raw = unique("raw");
    kafka::create_topics(&[&raw], 1).await;
    kafka::produce_to_partitions(&raw, (0..30).map(|i| (0, format!("value-{i}")))).await;
    let mut c = b.config(
        &b.endpoint,
        &raw,
        "bytes",
        json!({"format.class": BYTES, "flush.size": "10", "format.bytearray.separator": "|",
               "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}),
    );
    c.as_object_mut()
        .unwrap()
        .remove("value.converter.schemas.enable");
    create(&w, &format!("s3-fmt-bytes-{raw}"), c).await;
    let names: Vec<String> = (0..3)
        .map(|f| name(&raw, "partition=0", 0, f * 10, ".bin"))
        .collect();
    let files = b.wait_for("bytes", &names).await;
    for f in 0..3 {
        let want: String = (f * 10..(f + 1) * 10)
            .map(|i| format!("value-{i}|"))
            .collect();
        assert_eq!(
            String::from_utf8(files[&names[f as usize]].clone()).unwrap(),
            want
        );
    }
}

/// Field, Daily, Hourly and TimeBased (RecordField extractor, rotate.interval.ms) partitioners,
/// and the schema name prefix (`s3.schema.partition.affix.type`),
/// on twelve records 20 minutes apart from 2024-02-29T23:00Z, countries alternating fr/de:
/// the object names Confluent's sink gives them, worked out by hand from its rules (all open
/// files of a partition end together when flush.size records were written since the last end;
/// rotate.interval.ms ends them when a record's time is that far from the first one's or its
/// encoded partition changes).
#[tokio::test(flavor = "multi_thread")]
async fn partitioners_name_objects_as_confluent_does() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-partitioners");
    let w = spec.start_worker().await;
    let topic = unique("parts");
    kafka::create_topics_keeping_old_records(&[&topic], 1).await;
    let base = 1_709_247_600_000i64; // 2024-02-29T23:00:00Z
    let records: Vec<(i32, i64, Value)> = (0..12)
        .map(|i| {
            let ts = base + i * 1_200_000;
            (0, ts, order(0, i, ts))
        })
        .collect();
    produce(&topic, &records).await;
    let time = |class: &str| {
        json!({"partitioner.class": format!("{PARTITIONERS}{class}"), "locale": "en-US",
               "timezone": "UTC", "timestamp.extractor": "Record", "flush.size": "4"})
    };
    let mut hourly = time("HourlyPartitioner");
    hourly["timezone"] = json!("+01:00");
    // (topics.dir, partitioner keys, expected (encoded partition, start offset) of each object)
    type Case = (&'static str, Value, Vec<(&'static str, i64)>);
    let cases: Vec<Case> = vec![
        (
            "field",
            json!({"partitioner.class": format!("{PARTITIONERS}FieldPartitioner"),
                   "partition.field.name": "country", "flush.size": "4"}),
            vec![
                ("country=fr", 0),
                ("country=de", 1),
                ("country=fr", 4),
                ("country=de", 5),
                ("country=fr", 8),
                ("country=de", 9),
            ],
        ),
        (
            "schema",
            json!({"s3.schema.partition.affix.type": "PREFIX", "flush.size": "4"}),
            vec![
                ("schema_name=com.example.Order/partition=0", 0),
                ("schema_name=com.example.Order/partition=0", 4),
                ("schema_name=com.example.Order/partition=0", 8),
            ],
        ),
        (
            "daily",
            time("DailyPartitioner"),
            vec![
                ("year=2024/month=02/day=29", 0),
                ("year=2024/month=03/day=01", 3),
                ("year=2024/month=03/day=01", 4),
                ("year=2024/month=03/day=01", 8),
            ],
        ),
        (
            "hourly",
            hourly,
            vec![
                ("year=2024/month=03/day=01/hour=00", 0),
                ("year=2024/month=03/day=01/hour=01", 3),
                ("year=2024/month=03/day=01/hour=01", 4),
                ("year=2024/month=03/day=01/hour=02", 6),
                ("year=2024/month=03/day=01/hour=02", 8),
                ("year=2024/month=03/day=01/hour=03", 9),
            ],
        ),
        (
            "timebased",
            json!({"partitioner.class": format!("{PARTITIONERS}TimeBasedPartitioner"),
                   "path.format": "'dt'=yyyy-MM-dd/'hr'=HH/", "partition.duration.ms": "7200000",
                   "locale": "en", "timezone": "UTC", "timestamp.extractor": "RecordField",
                   "timestamp.field": "ts", "rotate.interval.ms": "3600000", "flush.size": "100"}),
            // The last three records (hr=02, from offset 9) stay open: no rule ends them yet.
            vec![
                ("dt=2024-02-29/hr=22", 0),
                ("dt=2024-03-01/hr=00", 3),
                ("dt=2024-03-01/hr=00", 6),
            ],
        ),
    ];
    for (dir, extra, _) in &cases {
        let mut extra = extra.clone();
        extra["format.class"] = json!(JSON);
        create(
            &w,
            &format!("s3-part-{dir}-{topic}"),
            b.config(&b.endpoint, &topic, dir, extra),
        )
        .await;
    }
    for (dir, _, expected) in &cases {
        let mut names: Vec<String> = expected
            .iter()
            .map(|(enc, o)| name(&topic, enc, 0, *o, ".json"))
            .collect();
        names.sort();
        let files = b.wait_for(dir, &names).await;
        // Each record in exactly one file, files in offset order inside.
        let mut ids: Vec<i64> = files
            .values()
            .flat_map(|bytes| json_lines(bytes))
            .map(|v| v["id"].as_i64().unwrap())
            .collect();
        ids.sort();
        let want: Vec<i64> = if *dir == "timebased" {
            (0..9).collect()
        } else {
            (0..12).collect()
        };
        assert_eq!(ids, want, "{dir}: {:?}", files.keys());
        if *dir == "field" {
            for (n, bytes) in &files {
                let country = if n.contains("country=fr") { "fr" } else { "de" };
                assert!(
                    json_lines(bytes).iter().all(|v| v["country"] == country),
                    "{n}"
                );
            }
        }
    }
    // Nothing else got written in the meantime.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(b.objects("timebased").await.len(), 3);
}

/// A connector with an unimplemented Confluent key set to something else than its default is
/// refused, naming the key.
#[tokio::test(flavor = "multi_thread")]
async fn an_unimplemented_confluent_key_is_a_validation_error_naming_it() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-validate");
    let w = spec.start_worker().await;
    let mut c = b.config(
        &b.endpoint,
        "t",
        "x",
        json!({"format.class": JSON, "flush.size": "3",
        "s3.acl.canned": "private", "s3.wan.mode": "false"}),
    );
    c["name"] = json!("s3-validate");
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{SINK}/config/validate"),
            Some(c),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let errors: Vec<(String, Vec<Value>)> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["value"]["errors"].as_array().unwrap().is_empty())
        .map(|c| {
            (
                c["value"]["name"].as_str().unwrap().to_owned(),
                c["value"]["errors"].as_array().unwrap().clone(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "s3.acl.canned");
    assert!(
        errors[0].1[0].as_str().unwrap().contains("not implemented"),
        "{errors:?}"
    );
}

/// Avro and Parquet (DailyPartitioner on record time): a first connector runs while its worker
/// is SIGKILLed, a second one replays the topic from the start. Both end with the same object
/// names and bytes, and each record is in exactly one object.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_worker_and_a_replay_write_identical_avro_and_parquet_objects() {
    const PER_PARTITION: i64 = 3000;
    const FLUSH: i64 = 50;
    let b = bucket().await;
    // Uploads and the sink runtime's batches in the workers' logs, to say where the tasks are
    // should a run stall. (The stalls of issue 38, after the rebalance that follows the kill,
    // were the broker deleting this topic's 2024-stamped records at a retention check during
    // the run: the topic now keeps its records.)
    let spec = ClusterSpec::new("s3-kill").env(
        "RUST_LOG",
        "info,rdkafka=warn,connect_connectors=debug,connect_worker::runtime::sink=debug",
    );
    let mut w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let topic = unique("kill");
    kafka::create_topics_keeping_old_records(&[&topic], 2).await;
    let base = 1_709_247_600_000i64;
    // Two days per partition: 2.4 s apart from 23:00, the day changes at record 1500.
    let records: Vec<(i32, i64, Value)> = (0..2)
        .flat_map(|p| {
            (0..PER_PARTITION).map(move |i| {
                let ts = base + i * 2_400;
                (p, ts, order(p, i, ts))
            })
        })
        .collect();
    produce(&topic, &records).await;
    let formats = [
        ("avro", AVRO, json!({"avro.codec": "snappy"})),
        ("parquet", PARQUET, json!({"parquet.codec": "zstd"})),
    ];
    let config = |dir: &str, class: &str, extra: &Value| {
        let mut extra = extra.clone();
        extra["format.class"] = json!(class);
        extra["flush.size"] = json!(FLUSH.to_string());
        extra["partitioner.class"] = json!(format!("{PARTITIONERS}DailyPartitioner"));
        extra["locale"] = json!("en");
        extra["timezone"] = json!("UTC");
        extra["timestamp.extractor"] = json!("Record");
        b.config(&b.endpoint, &topic, dir, extra)
    };
    for (dir, class, extra) in &formats {
        create(
            &w1,
            &format!("s3-kill-a-{dir}-{topic}"),
            config(&format!("a-{dir}"), class, extra),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    w1.kill9();
    for (dir, _, _) in &formats {
        let n = b.objects(&format!("a-{dir}")).await.len();
        eprintln!("{dir}: {n} of 120 objects written when the worker was killed");
    }
    // Every record is in an object once there are as many as the flushes make: the day
    // changes on a flush boundary (record 1500), so 60 objects per partition.
    for (dir, _, _) in &formats {
        let prefix = format!("a-{dir}");
        // Long enough for the dead worker's consumers to time out of the groups on a loaded
        // machine.
        eventually(Duration::from_secs(300), "objects of run a", || async {
            (b.objects(&prefix).await.len() >= 2 * (PER_PARTITION / FLUSH) as usize).then_some(())
        })
        .await;
    }
    for (dir, class, extra) in &formats {
        create(
            &w2,
            &format!("s3-kill-b-{dir}-{topic}"),
            config(&format!("b-{dir}"), class, extra),
        )
        .await;
    }
    for (dir, _, _) in &formats {
        let (pa, pb) = (format!("a-{dir}"), format!("b-{dir}"));
        let a_names: Vec<String> = b.objects(&pa).await.into_keys().collect();
        b.wait_for(&pb, &a_names).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (a, bb) = (b.objects(&pa).await, b.objects(&pb).await);
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            bb.keys().collect::<Vec<_>>(),
            "{dir}"
        );
        assert!(a == bb, "{dir}: a replay wrote different bytes");
        // Each record once, read back independently.
        let reader = if *dir == "avro" { "avro" } else { "parquet" };
        let read = read_back(reader, &a);
        let mut seen: Vec<i64> = read
            .values()
            .flat_map(|v| v["records"].as_array().unwrap().clone())
            .map(|r| r["id"].as_i64().unwrap())
            .collect();
        seen.sort();
        let want: Vec<i64> = (0..2)
            .flat_map(|p| (0..PER_PARTITION).map(move |i| i64::from(p) * 100_000 + i))
            .collect();
        assert_eq!(seen, want, "{dir}: each record exactly once");
        assert!(
            a.keys().any(|k| k.contains("day=29/")) && a.keys().any(|k| k.contains("day=01/")),
            "{:?}",
            a.keys()
        );
    }
}

/// ByteArray files of ~12 MB with 5 MB multipart parts while the S3 endpoint is cut twice (a
/// proxy in front of the server): failed parts abort the upload and the partition is re-read
/// from the last completed file. Afterwards each record is in exactly one object, the objects
/// are the ones an uninterrupted run names (start offsets 0, 1500, 3000), and the worker logs
/// show the cuts did fail uploads.
#[tokio::test(flavor = "multi_thread")]
async fn a_cut_s3_connection_during_multipart_uploads_loses_and_duplicates_nothing() {
    const RECORDS: i64 = 4500;
    const FLUSH: i64 = 1500;
    const SIZE: usize = 8 * 1024;
    let b = bucket().await;
    let upstream = b.endpoint.trim_start_matches("http://").to_owned();
    let proxy = TcpProxy::start(&upstream).await;
    let spec = ClusterSpec::new("s3-cut");
    let w = spec.start_worker().await;
    let topic = unique("big");
    kafka::create_topics(&[&topic], 1).await;
    let value = |i: i64| {
        let head = format!("{i:08}:");
        format!("{head}{}", "x".repeat(SIZE - head.len()))
    };
    let mut c = b.config(
        &format!("http://{}", proxy.addr),
        &topic,
        "run",
        json!({"format.class": BYTES, "flush.size": FLUSH.to_string(),
               "s3.part.size": (5 * 1024 * 1024).to_string(), "tasks.max": "1",
               "retry.backoff.ms": "1000", "s3.part.retries": "2",
               "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}),
    );
    c.as_object_mut()
        .unwrap()
        .remove("value.converter.schemas.enable");
    create(&w, &format!("s3-cut-{topic}"), c).await;
    let producer = {
        let topic = topic.clone();
        tokio::spawn(async move {
            let mut start = 0;
            while start < RECORDS {
                let end = (start + 300).min(RECORDS);
                kafka::produce_to_partitions(&topic, (start..end).map(|i| (0, value(i)))).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                start = end;
            }
        })
    };
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        proxy.cut();
        tokio::time::sleep(Duration::from_secs(3)).await;
        proxy.restore();
    }
    producer.await.unwrap();
    let names: Vec<String> = (0..RECORDS / FLUSH)
        .map(|f| name(&topic, "partition=0", 0, f * FLUSH, ".bin"))
        .collect();
    let files = b.wait_for("run", &names).await;
    for (f, n) in names.iter().enumerate() {
        let bytes = &files[n];
        let start = f as i64 * FLUSH;
        let want: Vec<u8> = (start..start + FLUSH)
            .flat_map(|i| {
                let mut v = value(i).into_bytes();
                v.push(b'\n');
                v
            })
            .collect();
        assert_eq!(bytes.len(), want.len(), "{n}");
        assert!(bytes == &want, "{n}: each record once, in order");
    }
    assert!(
        w.log_text().contains("a multipart upload failed"),
        "the cuts never failed a multipart upload; the test tested nothing"
    );
    let status = w
        .get(&format!("/connectors/s3-cut-{topic}/status"))
        .await
        .unwrap();
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
}

/// `s3.object.tagging`: each object carries its first and last offsets, its record count and
/// `s3.object.tagging.key.value.pairs` as S3 tags (read back with GetObjectTagging), as
/// Confluent's sink tags them. A tagging the server refuses (eleven tags; S3 takes ten) is
/// logged and skipped under the default `s3.object.behavior.on.tagging.error=ignore`, and
/// fails the task under `fail` (the refused object itself is stored).
#[tokio::test(flavor = "multi_thread")]
async fn objects_are_tagged_with_their_offsets_and_record_count() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-tags");
    let w = spec.start_worker().await;
    let topic = unique("tagged");
    kafka::create_topics(&[&topic], 1).await;
    let bodies = (0..6).map(|i| {
        (
            0,
            json!({"schema": order_schema(), "payload": order(0, i, i)}).to_string(),
        )
    });
    kafka::produce_to_partitions(&topic, bodies).await;
    let eleven = (0..8)
        .map(|i| format!("k{i}:v{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let cases = [
        (
            "tagged",
            json!({"s3.object.tagging.key.value.pairs": "team:data, env:test"}),
        ),
        (
            "ignored",
            json!({"s3.object.tagging.key.value.pairs": eleven}),
        ),
        (
            "failing",
            json!({"s3.object.tagging.key.value.pairs": eleven,
                   "s3.object.behavior.on.tagging.error": "fail"}),
        ),
    ];
    for (dir, extra) in &cases {
        let mut extra = extra.clone();
        extra["format.class"] = json!(JSON);
        extra["flush.size"] = json!("3");
        extra["tasks.max"] = json!("1");
        extra["s3.object.tagging"] = json!("true");
        let c = b.config(&b.endpoint, &topic, dir, extra);
        create(&w, &format!("s3-tags-{dir}-{topic}"), c).await;
    }
    let names: Vec<String> = [0, 3]
        .iter()
        .map(|o| name(&topic, "partition=0", 0, *o, ".json"))
        .collect();
    b.wait_for("tagged", &names).await;
    for (n, first) in names.iter().zip([0i64, 3]) {
        let want: BTreeMap<String, String> = [
            ("startOffset", first.to_string()),
            ("endOffset", (first + 2).to_string()),
            ("recordCount", "3".to_owned()),
            ("team", "data".to_owned()),
            ("env", "test".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(b.tags(&format!("tagged/{n}")).await, want, "{n}");
    }
    b.wait_for("ignored", &names).await;
    for n in &names {
        assert!(b.tags(&format!("ignored/{n}")).await.is_empty(), "{n}");
    }
    assert!(
        w.log_text().contains("Unable to tag S3 object. Ignoring."),
        "the refused tagging is logged"
    );
    let failing = format!("s3-tags-failing-{topic}");
    let status = eventually(
        Duration::from_secs(60),
        "the failing task FAILED",
        || async {
            let s = w.get(&format!("/connectors/{failing}/status")).await.ok()?;
            (s["tasks"][0]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains(&format!("Unable to tag S3 object failing/{}", names[0])),
        "{status}"
    );
    assert_eq!(
        b.objects("failing").await.into_keys().collect::<Vec<_>>(),
        vec![names[0].clone()]
    );
}

/// Without `aws.access.key.id` and without keys in the environment, the credentials come from
/// the `AWS_PROFILE` profile of the AWS shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`),
/// as the AWS default chain Confluent's sink uses finds them.
#[tokio::test(flavor = "multi_thread")]
async fn credentials_come_from_the_aws_profile_file_when_no_key_is_set() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-profile");
    let file = spec.dir.join("aws-credentials");
    std::fs::write(
        &file,
        format!(
            "[default]\naws_access_key_id = not-this-one\naws_secret_access_key = nor-this\n\n\
             [ci]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            key(),
            secret()
        ),
    )
    .unwrap();
    let spec = spec
        .env("AWS_SHARED_CREDENTIALS_FILE", &file.display().to_string())
        .env("AWS_PROFILE", "ci")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN");
    let w = spec.start_worker().await;
    let topic = unique("profile");
    kafka::create_topics(&[&topic], 1).await;
    let bodies = (0..3).map(|i| {
        (
            0,
            json!({"schema": order_schema(), "payload": order(0, i, i)}).to_string(),
        )
    });
    kafka::produce_to_partitions(&topic, bodies).await;
    let mut c = b.config(
        &b.endpoint,
        &topic,
        "profile",
        json!({"format.class": JSON, "flush.size": "3", "tasks.max": "1"}),
    );
    let config = c.as_object_mut().unwrap();
    config.remove("aws.access.key.id");
    config.remove("aws.secret.access.key");
    create(&w, &format!("s3-profile-{topic}"), c).await;
    let names = vec![name(&topic, "partition=0", 0, 0, ".json")];
    b.wait_for("profile", &names).await;
    let log = w.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("S3 credentials from an AWS shared credentials profile"))
        .unwrap_or_else(|| panic!("no profile line in the log:\n{log}"));
    assert!(
        line.contains("profile=ci") && line.contains("aws-credentials"),
        "{line}"
    );
}

/// Connect's logical types and nested types through Avro and Parquet, as the independent
/// readers type them: Decimal as a decimal, Date as a date, Timestamp as a UTC timestamp, a map,
/// an optional nested struct (absent and present).
#[tokio::test(flavor = "multi_thread")]
async fn logical_and_nested_types_read_back_as_their_types() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-types");
    let w = spec.start_worker().await;
    let topic = unique("types");
    kafka::create_topics(&[&topic], 1).await;
    let schema = json!({"type": "struct", "name": "com.example.Typed", "optional": false, "fields": [
        {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
         "version": 1, "parameters": {"scale": "2"}, "optional": false},
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "optional": false},
        {"field": "at", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1, "optional": false},
        {"field": "counts", "type": "map", "keys": {"type": "string", "optional": false},
         "values": {"type": "int64", "optional": false}, "optional": false},
        {"field": "inner", "type": "struct", "name": "com.example.Inner", "optional": true, "fields": [
            {"field": "a", "type": "int32", "optional": false}]}
    ]});
    // 12.34 (unscaled 1234 = 0x04D2), 2024-02-29 (day 19782), 2024-02-29T23:00:00Z.
    let payload = |i: i64| {
        json!({"price": "BNI=", "day": 19782, "at": 1_709_247_600_000i64,
               "counts": {"k": i}, "inner": if i == 0 { Value::Null } else { json!({"a": i}) }})
    };
    let bodies: Vec<(i32, String)> = (0..2)
        .map(|i| {
            (
                0,
                json!({"schema": schema, "payload": payload(i)}).to_string(),
            )
        })
        .collect();
    kafka::produce_to_partitions(&topic, bodies.into_iter()).await;
    for (dir, class) in [("avro", AVRO), ("parquet", PARQUET)] {
        let c = b.config(
            &b.endpoint,
            &topic,
            dir,
            json!({"format.class": class, "flush.size": "2", "tasks.max": "1"}),
        );
        create(&w, &format!("s3-types-{dir}-{topic}"), c).await;
    }
    for dir in ["avro", "parquet"] {
        let ext = if dir == "avro" {
            ".avro"
        } else {
            ".snappy.parquet"
        };
        let names = vec![name(&topic, "partition=0", 0, 0, ext)];
        let files = b.wait_for(dir, &names).await;
        let read = read_back(dir, &files);
        let records = read[&names[0]]["records"].as_array().unwrap().clone();
        assert_eq!(records.len(), 2, "{dir}");
        for (i, r) in records.iter().enumerate() {
            assert_eq!(r["price"], "12.34", "{dir}: {r}");
            assert_eq!(r["day"], "2024-02-29", "{dir}: {r}");
            assert_eq!(r["at"], "2024-02-29T23:00:00+00:00", "{dir}: {r}");
            let counts = if dir == "avro" {
                json!({"k": i})
            } else {
                json!([["k", i]])
            };
            assert_eq!(r["counts"], counts, "{dir}: {r}");
            let inner = if i == 0 { Value::Null } else { json!({"a": i}) };
            assert_eq!(r["inner"], inner, "{dir}: {r}");
        }
        let schema_text = read[&names[0]]["schema"].as_str().unwrap();
        if dir == "parquet" {
            for t in [
                "decimal",
                "date32",
                "timestamp[ms, tz=UTC]",
                "map<string, int64",
            ] {
                assert!(schema_text.contains(t), "{t} in {schema_text}");
            }
        }
    }
}

/// Records Parquet cannot hold (a schemaless value) and null values with
/// `behavior.on.null.values=ignore` go to the dead letter queue; the others are written. As in
/// Confluent's sink, the schemaless record ends the open file before it fails (a change between
/// a schema and none rotates), so the files start at offsets 0 and 2.
#[tokio::test(flavor = "multi_thread")]
async fn unwritable_records_and_ignored_nulls_go_to_the_dead_letter_queue() {
    use connect_tests::kafka::Isolation;
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-dlq");
    let w = spec.start_worker().await;
    let topic = unique("dlqsrc");
    let dlq = unique("s3dlq");
    kafka::create_topics(&[&topic], 1).await;
    let good =
        |i: i64| Some(json!({"schema": order_schema(), "payload": order(0, i, i)}).to_string());
    let records = vec![
        (None, good(0)),
        (
            None,
            Some(json!({"schema": null, "payload": {"x": 1}}).to_string()),
        ),
        (None, good(1)),
        (None, None),
        (None, good(2)),
        (None, good(3)),
    ];
    kafka::produce(&topic, records.into_iter()).await;
    let c = b.config(
        &b.endpoint,
        &topic,
        "dlq",
        json!({"format.class": PARQUET, "flush.size": "3", "tasks.max": "1",
               "behavior.on.null.values": "ignore",
               "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
               "errors.deadletterqueue.topic.replication.factor": "1"}),
    );
    create(&w, &format!("s3-dlq-{topic}"), c).await;
    let names: Vec<String> = [0, 2]
        .iter()
        .map(|o| name(&topic, "partition=0", 0, *o, ".snappy.parquet"))
        .collect();
    let files = b.wait_for("dlq", &names).await;
    let read = read_back("parquet", &files);
    let ids = |n: &String| -> Vec<i64> {
        read[n]["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&names[0]), vec![0]);
    assert_eq!(ids(&names[1]), vec![1, 2, 3]);
    let dead = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&dlq],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| r.len() >= 2,
        )
    })
    .await
    .unwrap();
    assert_eq!(dead.len(), 2, "{dead:?}");
    assert!(
        dead[0].value.as_deref().unwrap_or("").contains("\"x\""),
        "{:?}",
        dead[0]
    );
    assert!(dead[1].value.is_none(), "{:?}", dead[1]);
}

/// `store.kafka.keys` and `store.kafka.headers`: beside each Parquet value file, the keys as
/// JSON lines and the headers as an Avro file of `{key, value}` arrays, named as Confluent's
/// sink names them (`.keys` / `.headers` before the format's extension), record for record.
#[tokio::test(flavor = "multi_thread")]
async fn keys_and_headers_are_stored_in_files_of_their_own() {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-keys");
    let w = spec.start_worker().await;
    let topic = unique("keyed");
    kafka::create_topics(&[&topic], 1).await;
    let producer: FutureProducer = kafka::client_config()
        .set("acks", "all")
        .create()
        .expect("producer config");
    for i in 0..4i64 {
        let body = json!({"schema": order_schema(), "payload": order(0, i, i)}).to_string();
        let key = format!("k{i}");
        let value = format!("v{i}");
        let headers = OwnedHeaders::new().insert(Header {
            key: "h",
            value: Some(value.as_str()),
        });
        producer
            .send(
                FutureRecord::to(&topic)
                    .partition(0)
                    .key(&key)
                    .payload(&body)
                    .headers(headers),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("acknowledged");
    }
    let c = b.config(
        &b.endpoint,
        &topic,
        "kv",
        json!({"format.class": PARQUET, "flush.size": "4", "tasks.max": "1",
               "store.kafka.keys": "true", "keys.format.class": JSON,
               "store.kafka.headers": "true"}),
    );
    create(&w, &format!("s3-keys-{topic}"), c).await;
    let base = format!("{topic}/partition=0/{topic}+0+0000000000");
    let mut names = vec![
        format!("{base}.snappy.parquet"),
        format!("{base}.keys.json"),
        format!("{base}.headers.avro"),
    ];
    names.sort();
    let files = b.wait_for("kv", &names).await;
    let keys = json_lines(&files[&format!("{base}.keys.json")]);
    assert_eq!(
        keys,
        vec![json!("k0"), json!("k1"), json!("k2"), json!("k3")]
    );
    let values = read_back(
        "parquet",
        &files
            .iter()
            .filter(|(n, _)| n.ends_with(".parquet"))
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect(),
    );
    let ids: Vec<i64> = values[&format!("{base}.snappy.parquet")]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![0, 1, 2, 3]);
    let headers = read_back(
        "avro",
        &files
            .iter()
            .filter(|(n, _)| n.ends_with(".avro"))
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect(),
    );
    let want: Vec<Value> = (0..4)
        .map(|i| json!([{"key": "h", "value": format!("v{i}")}]))
        .collect();
    assert_eq!(
        headers[&format!("{base}.headers.avro")]["records"],
        json!(want)
    );
}

/// `behavior.on.null.values=write` with `store.kafka.keys`: tombstones go to the `tombstone`
/// encoded partition, where only their keys are written; the other records' values and keys
/// go to their own partition's files.
#[tokio::test(flavor = "multi_thread")]
async fn tombstones_are_written_as_their_keys_under_the_tombstone_partition() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-tombstones");
    let w = spec.start_worker().await;
    let topic = unique("tomb");
    kafka::create_topics(&[&topic], 1).await;
    let records = (0..4i64).map(|i| {
        let value = (i % 2 == 0)
            .then(|| json!({"schema": order_schema(), "payload": order(0, i, i)}).to_string());
        (Some(format!("k{i}")), value)
    });
    kafka::produce(&topic, records).await;
    let c = b.config(
        &b.endpoint,
        &topic,
        "tomb",
        json!({"format.class": JSON, "flush.size": "4", "tasks.max": "1",
               "store.kafka.keys": "true", "keys.format.class": JSON,
               "behavior.on.null.values": "write"}),
    );
    create(&w, &format!("s3-tomb-{topic}"), c).await;
    let values = format!("{topic}/partition=0/{topic}+0+0000000000");
    let tombs = format!("{topic}/tombstone/{topic}+0+0000000001");
    let mut names = vec![
        format!("{values}.json"),
        format!("{values}.keys.json"),
        format!("{tombs}.keys.json"),
    ];
    names.sort();
    let files = b.wait_for("tomb", &names).await;
    let ids: Vec<i64> = json_lines(&files[&format!("{values}.json")])
        .iter()
        .map(|v| v["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![0, 2]);
    assert_eq!(
        json_lines(&files[&format!("{values}.keys.json")]),
        vec![json!("k0"), json!("k2")]
    );
    assert_eq!(
        json_lines(&files[&format!("{tombs}.keys.json")]),
        vec![json!("k1"), json!("k3")]
    );
}

/// `s3.ssea.name=AES256` asks S3 to encrypt every object (the server reports it), and
/// `partitioner.max.open.files=1` ends the open file whenever a record goes to another encoded
/// partition, as Confluent's sink does.
#[tokio::test(flavor = "multi_thread")]
async fn server_side_encryption_and_max_open_files() {
    let b = bucket().await;
    let spec = ClusterSpec::new("s3-sse");
    let w = spec.start_worker().await;
    let topic = unique("sse");
    kafka::create_topics_keeping_old_records(&[&topic], 1).await;
    let records: Vec<(i32, i64, Value)> = (0..5).map(|i| (0, i, order(0, i, i))).collect();
    produce(&topic, &records).await;
    let c = b.config(
        &b.endpoint,
        &topic,
        "sse",
        json!({"format.class": JSON, "flush.size": "100", "tasks.max": "1",
               "partitioner.class": format!("{PARTITIONERS}FieldPartitioner"),
               "partition.field.name": "country", "partitioner.max.open.files": "1",
               "s3.ssea.name": "AES256"}),
    );
    create(&w, &format!("s3-sse-{topic}"), c).await;
    // Countries alternate fr, de, fr, de, fr: each record ends the file before it; the last
    // stays open.
    let mut names: Vec<String> = [("fr", 0), ("de", 1), ("fr", 2), ("de", 3)]
        .iter()
        .map(|(c, o)| name(&topic, &format!("country={c}"), 0, *o, ".json"))
        .collect();
    names.sort();
    let files = b.wait_for("sse", &names).await;
    for (n, bytes) in &files {
        assert_eq!(json_lines(bytes).len(), 1, "{n}");
    }
    let key = format!("sse/{}", names[0])
        .replace('+', "%2B")
        .replace('=', "%3D");
    let head = signed_head(&format!("{}/{}/{key}", b.endpoint, b.name)).await;
    assert!(head.status().is_success(), "HEAD {key}: {}", head.status());
    assert_eq!(
        head.headers()
            .get("x-amz-server-side-encryption")
            .and_then(|v| v.to_str().ok()),
        Some("AES256"),
        "{:?}",
        head.headers()
    );
}
