//! The schema registry converters against a real registry (Apicurio Registry's Confluent API,
//! `deploy/registry.sh`): the wire format and the registered schemas, Avro from an exactly-once
//! source into a Postgres sink while the registry is cut off and a worker is killed, a record
//! whose schema id the registry does not know, and Apicurio's Avro and Protobuf classes.

use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::proxy::TcpProxy;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use serde_json::{Value, json};
use sqlx::Row;

const AVRO: &str = "io.confluent.connect.avro.AvroConverter";
const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const OFFSETS_SINK: &str = "connect_connectors::jdbc::PostgresOffsetsSinkConnector";

/// The registry's Confluent API (`SCHEMA_REGISTRY_URL`, printed by `deploy/registry.sh up`).
fn registry_url() -> String {
    std::env::var("SCHEMA_REGISTRY_URL")
        .expect("SCHEMA_REGISTRY_URL: start the registry with deploy/registry.sh up")
}

/// `host:port` and path of a URL (`http://h:p/path`).
fn split_url(url: &str) -> (String, String) {
    let rest = url
        .strip_prefix("http://")
        .expect("an http:// registry URL");
    match rest.split_once('/') {
        Some((hp, path)) => (hp.to_owned(), format!("/{path}")),
        None => (rest.to_owned(), String::new()),
    }
}

async fn registry_get(path: &str) -> Value {
    reqwest::get(format!("{}{path}", registry_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn avro_settings(prefix: &str, url: &str) -> Vec<(String, String)> {
    vec![
        (prefix.to_owned(), AVRO.to_owned()),
        (format!("{prefix}.schema.registry.url"), url.to_owned()),
    ]
}

async fn create(w: &WorkerProc, name: &str, config: Value) {
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": name, "config": config})),
        )
        .await;
    assert_eq!(status, 201, "create {name}: {body}");
}

fn with(mut config: Value, settings: Vec<(String, String)>) -> Value {
    for (k, v) in settings {
        config[k] = Value::String(v);
    }
    config
}

/// Records in the wire format: magic byte 0, a schema id the registry serves with the text our
/// converter registered under `<topic>-key` / `<topic>-value`, and values that read back.
#[tokio::test(flavor = "multi_thread")]
async fn records_carry_the_registry_wire_format_and_registered_schemas() {
    let spec = ClusterSpec::new("registry-wire");
    let w = spec.start_worker().await;
    let topic = unique("avro-wire");
    let config = with(
        json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
               "throughput": "200", "max.records": "20", "complete.record.data": "true"}),
        [
            avro_settings("key.converter", &registry_url()),
            avro_settings("value.converter", &registry_url()),
        ]
        .concat(),
    );
    create(&w, &format!("{topic}-src"), config).await;
    let records = tokio::task::spawn_blocking({
        let topic = topic.clone();
        move || {
            kafka::read_until(
                &[&topic],
                Isolation::ReadCommitted,
                Duration::from_secs(60),
                |r| r.len() >= 20,
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(records.len(), 20, "{}", w.log_text());
    let raw = records[0].value_bytes.as_deref().unwrap();
    assert_eq!(raw[0], 0, "magic byte");
    let id = i32::from_be_bytes(raw[1..5].try_into().unwrap());
    let schema = registry_get(&format!("/schemas/ids/{id}")).await;
    assert_eq!(
        schema["schema"].as_str().unwrap(),
        r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"name","type":"string"},{"name":"task","type":"int"},{"name":"topic","type":"string"},{"name":"time_ms","type":"long"},{"name":"seqno","type":"long"}]}"#
    );
    let latest = registry_get(&format!("/subjects/{topic}-value/versions/latest")).await;
    assert_eq!(latest["id"], json!(id), "{latest}");
    let key = registry_get(&format!("/subjects/{topic}-key/versions/latest")).await;
    assert_eq!(key["schema"], json!("\"int\""), "{key}");
    // The key is the task id: 0 as an Avro int after the header.
    assert_eq!(&records[0].key_bytes.as_deref().unwrap()[5..], [0]);
}

/// Avro from an exactly-once source through Kafka into the offsets-with-data Postgres sink,
/// both converting through a proxy to the registry. Mid-run the proxy is cut and the worker
/// SIGKILLed: restarted, its tasks cannot reach the registry and fail (never skip a record),
/// restart on their own once it is back, and every (task, seqno) lands exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn avro_through_a_registry_cut_mid_run_loses_and_duplicates_nothing() {
    const TASKS: i64 = 2;
    const MAX: i64 = 1500;
    let (upstream, path) = split_url(&registry_url());
    let proxy = TcpProxy::start(&upstream).await;
    let via_proxy = format!("http://{}{path}", proxy.addr);
    let spec = ClusterSpec::new("registry-eos")
        .set("exactly.once.source.support", "enabled")
        .set("auto.restart.backoff.initial.ms", "1000")
        .set("auto.restart.backoff.max.ms", "2000");
    let mut w = spec.start_worker().await;
    let topic = unique("avro-eos");
    let table = unique_table("avro_eos");
    kafka::create_topics(&[&topic], 2).await;
    let converters = [
        avro_settings("key.converter", &via_proxy),
        avro_settings("value.converter", &via_proxy),
    ]
    .concat();
    create(
        &w,
        &format!("{topic}-src"),
        with(
            json!({"connector.class": VERIFIABLE, "tasks.max": TASKS.to_string(), "topic": topic,
                   "throughput": "300", "max.records": MAX.to_string(),
                   "complete.record.data": "true",
                   "exactly.once.support": "required"}),
            converters.clone(),
        ),
    )
    .await;
    create(
        &w,
        &format!("{topic}-sink"),
        with(
            json!({"connector.class": OFFSETS_SINK, "tasks.max": "2", "topics": topic,
                   "connection.url": database_url(), "table.name.format": table,
                   "auto.create": "true", "offsets.table.name": format!("{table}_offsets"),
                   "consumer.override.isolation.level": "read_committed"}),
            converters,
        ),
    )
    .await;
    let count = |table: String| async move {
        let p = pool().await;
        let n = sqlx::query(&format!("SELECT count(*) FROM {table}"))
            .fetch_one(&p)
            .await
            .map(|r| r.get::<i64, _>(0))
            .unwrap_or(0);
        p.close().await;
        n
    };
    eventually(Duration::from_secs(60), "rows arrive", || async {
        (count(table.clone()).await >= 300).then_some(())
    })
    .await;

    proxy.cut();
    w.kill9();
    w.restart().await;
    w.wait_healthy().await;
    // Restarted without the registry: the tasks fail on their first record, naming it.
    eventually(
        Duration::from_secs(60),
        "a task fails on the registry",
        || async {
            let s = w
                .get(&format!("/connectors/{topic}-src/status"))
                .await
                .ok()?;
            let traces = s["tasks"]
                .as_array()?
                .iter()
                .filter_map(|t| t["trace"].as_str());
            traces
                .into_iter()
                .any(|t| t.contains("schema registry could not be reached"))
                .then_some(())
        },
    )
    .await;
    let before = count(table.clone()).await;
    proxy.restore();

    eventually(Duration::from_secs(120), "every row arrives", || async {
        (count(table.clone()).await >= TASKS * MAX).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let p = pool().await;
    let row = sqlx::query(&format!(
        "SELECT count(*), count(DISTINCT (task, seqno)), min(seqno), max(seqno) FROM {table}"
    ))
    .fetch_one(&p)
    .await
    .unwrap();
    p.close().await;
    assert_eq!(
        (
            row.get::<i64, _>(0),
            row.get::<i64, _>(1),
            row.get::<i64, _>(2),
            row.get::<i64, _>(3)
        ),
        (TASKS * MAX, TASKS * MAX, 0, MAX - 1),
        "rows before the restore: {before}; log:\n{}",
        w.log_text()
    );
    // And the topic itself: each record committed once.
    let committed = kafka::read_all(&[&topic], Isolation::ReadCommitted, Duration::from_secs(30));
    assert_eq!(committed.len() as i64, TASKS * MAX);
}

/// A record whose schema id the registry does not know is a data error naming the id; with
/// `errors.tolerance=all` it goes to the dead-letter queue with its original bytes and the
/// records after it are written.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_schema_id_goes_to_the_dead_letter_queue_with_its_bytes() {
    let spec = ClusterSpec::new("registry-unknown-id");
    let w = spec.start_worker().await;
    let topic = unique("avro-unknown");
    let dlq = format!("{topic}-dlq");
    let out = spec.dir.join("sink.txt");
    kafka::create_topics(&[&topic], 1).await;
    // Id 2147483000 is not registered; then a good record (the Avro string "ok" under a schema
    // the registry has).
    let reg: Value = reqwest::Client::new()
        .post(format!(
            "{}/subjects/{topic}-value/versions",
            registry_url()
        ))
        .header("content-type", "application/vnd.schemaregistry.v1+json")
        .body(json!({"schema": "\"string\""}).to_string())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let good_id = reg["id"].as_i64().unwrap() as i32;
    let mut bad = vec![0u8];
    bad.extend_from_slice(&2_147_483_000i32.to_be_bytes());
    bad.extend_from_slice(&[4, b'n', b'o']);
    let mut good = vec![0u8];
    good.extend_from_slice(&good_id.to_be_bytes());
    good.extend_from_slice(&[4, b'o', b'k']);
    kafka::produce_bytes(&topic, vec![bad.clone(), good]).await;
    create(
        &w,
        &format!("{topic}-sink"),
        with(
            json!({"connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic,
                   "file": out.display().to_string(),
                   "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
                   "errors.deadletterqueue.topic.replication.factor": "1",
                   "errors.deadletterqueue.context.headers.enable": "true"}),
            avro_settings("value.converter", &registry_url()),
        ),
    )
    .await;
    eventually(
        Duration::from_secs(60),
        "the good record is written",
        || async {
            let text = std::fs::read_to_string(&out).ok()?;
            (text.trim() == "ok").then_some(())
        },
    )
    .await;
    let dead = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&dlq],
            Isolation::ReadCommitted,
            Duration::from_secs(30),
            |r| !r.is_empty(),
        )
    })
    .await
    .unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        dead[0].value_bytes.as_deref(),
        Some(&bad[..]),
        "the original bytes"
    );
    let message = dead[0]
        .headers
        .iter()
        .find(|(k, _)| k == "__connect.errors.exception.message")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    assert!(message.contains("2147483000"), "{message}");
}

/// `value.converter.schema.registry.url` without `value.converter` does nothing (Apache's
/// semantics: the worker's converter runs with the worker's settings); the worker says so.
#[tokio::test(flavor = "multi_thread")]
async fn converter_settings_without_their_class_are_named_in_the_log() {
    let spec = ClusterSpec::new("registry-orphan");
    let w = spec.start_worker().await;
    let topic = unique("avro-orphan");
    create(
        &w,
        &format!("{topic}-src"),
        json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
               "throughput": "10", "max.records": "1",
               "value.converter.schema.registry.url": registry_url()}),
    )
    .await;
    eventually(Duration::from_secs(30), "the warning", || async {
        w.log_text()
            .contains("the connector sets value.converter.schema.registry.url but not value.converter: they have no effect")
            .then_some(())
    })
    .await;
}

/// Apicurio's class with Apicurio's keys (its native API URL, `auto-register`) writes what
/// Confluent's class reads: the same 4-byte content id, the same subject. And Apicurio's
/// `ExtJsonConverter` writes `{"schemaId":..,"payload":..}` records a sink reads back with it.
#[tokio::test(flavor = "multi_thread")]
async fn apicurios_class_writes_what_confluents_class_reads() {
    let spec = ClusterSpec::new("registry-apicurio");
    let w = spec.start_worker().await;
    let topic = unique("avro-apicurio");
    let out = spec.dir.join("sink.txt");
    let native = registry_url().replace("/apis/ccompat/v7", "/apis/registry/v3");
    let ext_topic = unique("ext-json-apicurio");
    let ext_out = spec.dir.join("ext-json-sink.txt");
    let ext_json = |c: Value| {
        with(
            c,
            vec![
                (
                    "value.converter".into(),
                    "io.apicurio.registry.utils.converter.ExtJsonConverter".into(),
                ),
                (
                    "value.converter.apicurio.registry.url".into(),
                    native.clone(),
                ),
                (
                    "value.converter.apicurio.registry.auto-register".into(),
                    "true".into(),
                ),
            ],
        )
    };
    create(
        &w,
        &format!("{ext_topic}-src"),
        ext_json(
            json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": ext_topic,
                        "throughput": "100", "max.records": "10"}),
        ),
    )
    .await;
    create(
        &w,
        &format!("{ext_topic}-sink"),
        ext_json(
            json!({"connector.class": "FileStreamSink", "tasks.max": "1", "topics": ext_topic,
                        "file": ext_out.display().to_string()}),
        ),
    )
    .await;
    create(
        &w,
        &format!("{topic}-src"),
        json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
               "throughput": "100", "max.records": "10",
               "value.converter": "io.apicurio.registry.utils.converter.AvroConverter",
               "value.converter.apicurio.registry.url": native,
               "value.converter.apicurio.registry.auto-register": "true"}),
    )
    .await;
    create(
        &w,
        &format!("{topic}-sink"),
        with(
            json!({"connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic,
                   "file": out.display().to_string()}),
            avro_settings("value.converter", &registry_url()),
        ),
    )
    .await;
    eventually(Duration::from_secs(60), "10 seqnos in the file", || async {
        let text = std::fs::read_to_string(&out).ok()?;
        (text.lines().collect::<Vec<_>>() == (0..10).map(|n| n.to_string()).collect::<Vec<_>>())
            .then_some(())
    })
    .await;
    let latest = registry_get(&format!("/subjects/{topic}-value/versions/latest")).await;
    assert_eq!(latest["schema"], json!("\"long\""), "{latest}");
    eventually(
        Duration::from_secs(60),
        "10 seqnos in the ExtJson sink's file",
        || async {
            let text = std::fs::read_to_string(&ext_out).ok()?;
            (text.lines().collect::<Vec<_>>() == (0..10).map(|n| n.to_string()).collect::<Vec<_>>())
                .then_some(())
        },
    )
    .await;
    let records = kafka::read_all(
        &[&ext_topic],
        Isolation::ReadUncommitted,
        Duration::from_secs(10),
    );
    let first = String::from_utf8(records[0].value_bytes.clone().expect("a value")).unwrap();
    assert!(
        first.starts_with("{\"schemaId\":") && first.contains(",\"payload\":"),
        "{first}"
    );
    // A key Apicurio's serdes have but this worker does not implement: refused, naming it.
    let (status, body) = w
        .send(
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            Some(
                json!({"connector.class": VERIFIABLE, "name": "v", "topic": topic,
                        "value.converter": "io.apicurio.registry.utils.converter.AvroConverter",
                        "value.converter.apicurio.registry.url": native,
                        "value.converter.apicurio.registry.headers.enabled": "true"}),
            ),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let errors: Vec<String> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "value.converter.apicurio.registry.headers.enabled")
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .map(|e| e.as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(errors.iter().any(|e| e.contains("must be false")), "{body}");
}

/// Apicurio's Protobuf class with Apicurio's keys: the records carry Apicurio 3.x's default
/// layout (magic byte 0, the 4-byte content id, a length-delimited `Ref` naming the message, the
/// message), the artifact `<topic>-value` is PROTOBUF with the text Apicurio's serializer
/// registers, a sink with the same class reads the values back, the class is listed, and a key
/// it does not implement is refused by validation, naming it.
#[tokio::test(flavor = "multi_thread")]
async fn apicurios_protobuf_class_writes_and_reads_its_format() {
    const APICURIO_PROTOBUF: &str = "io.apicurio.registry.utils.converter.ProtobufConverter";
    let spec = ClusterSpec::new("registry-apicurio-protobuf");
    let w = spec.start_worker().await;
    let topic = unique("protobuf-apicurio");
    let out = spec.dir.join("sink.txt");
    let native = registry_url().replace("/apis/ccompat/v7", "/apis/registry/v3");
    let (status, plugins) = w
        .send("GET", "/connector-plugins?connectorsOnly=false", None)
        .await;
    assert_eq!(status, 200);
    assert!(
        plugins
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["class"] == APICURIO_PROTOBUF),
        "{plugins}"
    );
    create(
        &w,
        &format!("{topic}-src"),
        json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
               "throughput": "100", "max.records": "10", "complete.record.data": "true",
               "value.converter": APICURIO_PROTOBUF,
               "value.converter.apicurio.registry.url": native,
               "value.converter.apicurio.registry.auto-register": "true"}),
    )
    .await;
    let records = tokio::task::spawn_blocking({
        let topic = topic.clone();
        move || {
            kafka::read_until(
                &[&topic],
                Isolation::ReadCommitted,
                Duration::from_secs(60),
                |r| r.len() >= 10,
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(records.len(), 10, "{}", w.log_text());
    let raw = records[0].value_bytes.as_deref().unwrap();
    assert_eq!(raw[0], 0, "magic byte");
    let id = i32::from_be_bytes(raw[1..5].try_into().unwrap());
    assert_eq!(&raw[5..8], [16, 0x0a, 14], "Ref {{ name: ConnectMessage }}");
    assert_eq!(&raw[8..22], b"ConnectMessage");
    let schema = registry_get(&format!("/schemas/ids/{id}")).await;
    assert_eq!(schema["schemaType"], json!("PROTOBUF"), "{schema}");
    assert_eq!(
        schema["schema"].as_str().unwrap(),
        "// Proto schema formatted by Wire, do not edit.\n// Source: \n\nsyntax = \"proto3\";\n\npackage io.apicurio.registry.connect;\n\nmessage ConnectMessage {\n  string name = 1;\n\n  int32 task = 2;\n\n  string topic = 3;\n\n  int64 time_ms = 4;\n\n  int64 seqno = 5;\n}\n"
    );
    let latest = registry_get(&format!("/subjects/{topic}-value/versions/latest")).await;
    assert_eq!(latest["id"], json!(id), "{latest}");

    create(
        &w,
        &format!("{topic}-sink"),
        json!({"connector.class": "FileStreamSink", "tasks.max": "1", "topics": topic,
               "file": out.display().to_string(),
               "value.converter": APICURIO_PROTOBUF,
               "value.converter.apicurio.registry.url": native}),
    )
    .await;
    eventually(
        Duration::from_secs(60),
        "10 records in the file",
        || async {
            let text = std::fs::read_to_string(&out).ok()?;
            let lines: Vec<&str> = text.lines().collect();
            // FileStreamSink writes a struct as compact JSON.
            (lines.len() == 10
                && lines.iter().enumerate().all(|(n, l)| {
                    serde_json::from_str::<Value>(l).is_ok_and(|v| {
                        v["seqno"] == json!(n)
                            && v["task"] == json!(0)
                            && v["topic"] == json!(topic)
                    })
                }))
            .then_some(())
        },
    )
    .await;

    let (status, body) = w
        .send(
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            Some(
                json!({"connector.class": VERIFIABLE, "name": "v", "topic": topic,
                        "value.converter": APICURIO_PROTOBUF,
                        "value.converter.apicurio.registry.url": native,
                        "value.converter.apicurio.registry.find-latest": "true"}),
            ),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let errors: Vec<String> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "value.converter.apicurio.registry.find-latest")
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .map(|e| e.as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(errors.iter().any(|e| e.contains("not supported")), "{body}");
}

/// Runs `tests/registry/fastavro_client.py` in its own virtualenv (fastavro from PyPI, made on
/// first use under `.local/fastavro-venv`) with `input` on stdin; its stdout lines.
fn fastavro_client(args: &[&str], input: &str) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = root.join(".local/fastavro-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    "fastavro>=1.9",
                ])
                .status()
                .is_ok_and(|s| s.success());
        assert!(ok, "could not make {} with fastavro", venv.display());
    }
    let mut child = Command::new(&python)
        .arg(root.join("tests/registry/fastavro_client.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run fastavro_client.py");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "fastavro_client.py {args:?} failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// An independent client (Python's fastavro, registering through the REST API itself): the
/// records it writes land in Postgres with their values (Decimal, Date, an optional int), and
/// the records the worker writes decode there.
#[tokio::test(flavor = "multi_thread")]
async fn an_independent_avro_client_and_the_worker_read_each_other() {
    let spec = ClusterSpec::new("registry-fastavro");
    let w = spec.start_worker().await;
    let topic = unique("avro-fastavro");
    let table = unique_table("avro_fastavro");
    kafka::create_topics(&[&topic], 1).await;
    let written = tokio::task::spawn_blocking({
        let subject = format!("{topic}-value");
        move || fastavro_client(&["encode", &registry_url(), &subject, "20"], "")
    })
    .await
    .unwrap();
    let bytes: Vec<Vec<u8>> = written
        .iter()
        .map(|h| {
            (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect();
    kafka::produce_bytes(&topic, bytes).await;
    create(
        &w,
        &format!("{topic}-sink"),
        with(
            json!({"connector.class": OFFSETS_SINK, "tasks.max": "1", "topics": topic,
                   "connection.url": database_url(), "table.name.format": table,
                   "auto.create": "true", "offsets.table.name": format!("{table}_offsets")}),
            avro_settings("value.converter", &registry_url()),
        ),
    )
    .await;
    let rows = eventually(Duration::from_secs(60), "20 rows", || async {
        let p = pool().await;
        let rows = sqlx::query(&format!(
            "SELECT id, name, price::text, qty, day::text FROM {table} ORDER BY id"
        ))
        .fetch_all(&p)
        .await
        .ok()?;
        p.close().await;
        (rows.len() == 20).then_some(rows)
    })
    .await;
    for (i, r) in rows.iter().enumerate() {
        let i = i as i64;
        assert_eq!(r.get::<i64, _>(0), i);
        assert_eq!(r.get::<String, _>(1), format!("row-{i}"));
        let cents = i * 125 - 300;
        let sign = if cents < 0 { "-" } else { "" };
        assert_eq!(
            r.get::<String, _>(2),
            format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
        );
        assert_eq!(r.get::<Option<i32>, _>(3), (i % 3 != 0).then_some(i as i32));
    }
    assert_eq!(rows[0].get::<String, _>(4), "2024-01-01");
    assert_eq!(rows[19].get::<String, _>(4), "2024-01-20");

    // The other way: what the worker writes, read by fastavro.
    let ours = unique("avro-to-fastavro");
    create(
        &w,
        &format!("{ours}-src"),
        with(
            json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": ours,
                   "throughput": "100", "max.records": "10", "complete.record.data": "true"}),
            avro_settings("value.converter", &registry_url()),
        ),
    )
    .await;
    let records = tokio::task::spawn_blocking({
        let ours = ours.clone();
        move || {
            kafka::read_until(
                &[&ours],
                Isolation::ReadCommitted,
                Duration::from_secs(60),
                |r| r.len() >= 10,
            )
        }
    })
    .await
    .unwrap();
    let hex: String = records
        .iter()
        .map(|r| {
            let b = r.value_bytes.as_deref().unwrap();
            b.iter().map(|x| format!("{x:02x}")).collect::<String>() + "\n"
        })
        .collect();
    let decoded =
        tokio::task::spawn_blocking(move || fastavro_client(&["decode", &registry_url()], &hex))
            .await
            .unwrap();
    let seqnos: Vec<i64> = decoded
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["seqno"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqnos, (0..10).collect::<Vec<_>>());
    let first: Value = serde_json::from_str(&decoded[0]).unwrap();
    assert_eq!(first["topic"], json!(ours));
    assert_eq!(first["task"], json!(0));
}
