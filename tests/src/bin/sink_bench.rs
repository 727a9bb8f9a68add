//! Sink throughput benchmark (prints figures; not a test).
//!
//! For each sink, one worker against the local Kafka (`KAFKA_BOOTSTRAP_SERVERS`), PostgreSQL
//! (`DATABASE_URL`) and, when `S3_ENDPOINT` is set, the S3-compatible server (`deploy/s3.sh up`;
//! credentials from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, default `test`). The input
//! topic is filled first (round robin over `tasks` partitions), then the connector is created;
//! the clock runs from the moment all its tasks are RUNNING (worker start-up and the rebalance
//! are excluded) until the destination holds everything:
//!
//! - `upsert`: `PostgresSinkConnector`, `pk.mode=record_key`, distinct keys; rows/s until the
//!   table has every row.
//! - `offsets`: `PostgresOffsetsSinkConnector` (rows and offsets in one transaction); rows/s.
//! - `files`: `ObjectStoreSinkConnector` on the local filesystem; MB/s of JSON lines written
//!   (1 MB = 10^6 bytes) until every file of `flush.size` records exists.
//! - `s3`: the same on `S3_ENDPOINT` (skipped, and said so, when it is not set).
//! - `s3-json`, `s3-bytes`, `s3-avro`, `s3-parquet`: `io.confluent.connect.s3.S3SinkConnector`
//!   on `S3_ENDPOINT` with `JsonFormat`, `ByteArrayFormat`, `AvroFormat` (`avro.codec=snappy`)
//!   and `ParquetFormat` (`parquet.codec=snappy`): the same records (a struct of `n` and a
//!   `--value-bytes` string, through `JsonConverter` with schemas; raw bytes for ByteArray);
//!   records/s, MB/s of the records as JSON lines (to compare with `s3`), MB/s of objects
//!   written, and the worker's CPU seconds per million records and peak RSS.
//!
//! Run (the worker binary is the debug build unless CONNECT_WORKER_BIN points at another):
//!
//! ```sh
//! cargo build --release -p connect-worker && CONNECT_WORKER_BIN=target/release/connect-worker \
//!   cargo run --release -p connect-tests --bin sink_bench -- [--rows N] [--object-records N] \
//!   [--value-bytes B] [--flush-size N] [--tasks N]
//!   [--only upsert,offsets,files,s3,s3-json,s3-bytes,s3-avro,s3-parquet]
//! ```
//!
//! Each flag also reads `SINK_BENCH_<FLAG>` (e.g. `SINK_BENCH_ROWS=100000`).

#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use connect_tests::kafka::{self, client_config};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually, running_tasks};
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, ObjectStoreExt};
use rdkafka::admin::{AdminClient, AdminOptions};
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use serde_json::{Value, json};

struct Args {
    rows: usize,
    object_records: usize,
    value_bytes: usize,
    flush_size: usize,
    tasks: usize,
    only: Vec<String>,
}

impl Args {
    fn parse() -> Self {
        let argv: Vec<String> = std::env::args().skip(1).collect();
        let mut flags = BTreeMap::new();
        let mut it = argv.iter();
        while let Some(a) = it.next() {
            let name = a
                .strip_prefix("--")
                .unwrap_or_else(|| panic!("unexpected argument {a}; flags are --name value"));
            let value = it
                .next()
                .unwrap_or_else(|| panic!("--{name} needs a value"));
            flags.insert(name.to_owned(), value.clone());
        }
        let get = |name: &str, default: &str| -> String {
            let env = format!("SINK_BENCH_{}", name.replace('-', "_").to_uppercase());
            flags
                .get(name)
                .cloned()
                .or_else(|| std::env::var(env).ok())
                .unwrap_or_else(|| default.to_owned())
        };
        let num = |name: &str, default: usize| -> usize {
            let v = get(name, &default.to_string());
            v.parse()
                .unwrap_or_else(|_| panic!("--{name} must be a number, not {v}"))
        };
        let args = Args {
            rows: num("rows", 2_000_000),
            object_records: num("object-records", 2_000_000),
            value_bytes: num("value-bytes", 200),
            flush_size: num("flush-size", 10_000),
            tasks: num("tasks", 2).max(1),
            only: get("only", "upsert,offsets,files,s3")
                .split(',')
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        };
        for name in flags.keys() {
            assert!(
                [
                    "rows",
                    "object-records",
                    "value-bytes",
                    "flush-size",
                    "tasks",
                    "only"
                ]
                .contains(&name.as_str()),
                "unknown flag --{name}"
            );
        }
        args
    }

    fn runs(&self, name: &str) -> bool {
        self.only.iter().any(|o| o == name)
    }
}

/// Produces `n` records to `topic`, record `i` to partition `i % partitions` (so every
/// partition gets the same count), and waits for every acknowledgement.
fn fill_topic(
    topic: &str,
    partitions: usize,
    n: usize,
    record: impl Fn(usize) -> (String, String),
) {
    let p: ThreadedProducer<DefaultProducerContext> = client_config()
        .set("acks", "all")
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("compression.type", "lz4")
        .create()
        .expect("producer");
    for i in 0..n {
        let (k, v) = record(i);
        let mut r = BaseRecord::<str, str>::to(topic)
            .key(&k)
            .payload(&v)
            .partition((i % partitions) as i32);
        loop {
            match p.send(r) {
                Ok(()) => break,
                Err((_, back)) => {
                    r = back;
                    p.poll(Duration::from_millis(5));
                }
            }
        }
    }
    p.flush(Duration::from_secs(120)).expect("flush");
}

/// Deletes a benchmark's input topic (hundreds of MB at the default sizes).
async fn delete_topic(topic: &str) {
    let admin: AdminClient<DefaultClientContext> = client_config().create().expect("admin client");
    let _ = admin.delete_topics(&[topic], &AdminOptions::new()).await;
}

/// A fresh one-worker cluster, the topic filled, the connector created; returns when all its
/// tasks run (the start of the clock) with the worker to keep alive.
async fn start(tasks: usize, config: Value) -> (WorkerProc, Instant) {
    let spec = ClusterSpec::new("sink-bench");
    let w = spec.start_worker().await;
    // A fresh name, so a fresh consumer group (`connect-<name>`): reusing one would make the
    // new consumers wait out the session timeout of the previous run's killed members.
    let name = unique("bench");
    create_connector(&w, &name, config).await;
    eventually(Duration::from_secs(120), "sink tasks running", || {
        running_tasks(&w, &name, tasks)
    })
    .await;
    (w, Instant::now())
}

/// What a run measured: the amount written per second between the first time the
/// destination showed progress and the time it was complete (steady state: the first poll of
/// the consumer is excluded, as start-up is), and the time from tasks RUNNING to complete.
struct Rate {
    per_second: f64,
    total: Duration,
    /// The amount at completion.
    amount: f64,
}

/// Polls `progress` every 250 ms (at most 20 minutes): it returns the amount written so far
/// (rows, bytes) and whether the destination is complete.
async fn measure<F, Fut>(t0: Instant, what: &str, mut progress: F) -> Rate
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (f64, bool)>,
{
    let deadline = Instant::now() + Duration::from_secs(1200);
    let mut first: Option<(Instant, f64)> = None;
    loop {
        let (amount, complete) = progress().await;
        let now = Instant::now();
        if first.is_none() && amount > 0.0 {
            first = Some((now, amount));
        }
        if complete {
            let (t1, a1) = first.unwrap_or((t0, 0.0));
            let span = now.duration_since(t1).max(Duration::from_millis(1));
            return Rate {
                per_second: (amount - a1) / span.as_secs_f64(),
                total: now.duration_since(t0),
                amount,
            };
        }
        assert!(now < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn count_rows(db: &sqlx::PgPool, table: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(db)
        .await
        .unwrap_or(-1)
}

/// rows/s of a Postgres sink: the upsert sink, or with `offsets_sink` the offsets-with-data one.
async fn postgres_run(label: &str, args: &Args, offsets_sink: bool) {
    let n = args.rows;
    let topic = unique("sink-bench-pg");
    let table = unique_table("sink_bench");
    kafka::create_topics(&[&topic], args.tasks as i32).await;
    let db = pool().await;
    let ddl = if offsets_sink {
        format!("CREATE TABLE {table} (n BIGINT NOT NULL, note TEXT NOT NULL)")
    } else {
        format!(
            "CREATE TABLE {table} (id BIGINT PRIMARY KEY, n BIGINT NOT NULL, note TEXT NOT NULL)"
        )
    };
    sqlx::query(&ddl).execute(&db).await.expect("create table");
    let t = topic.clone();
    let tasks = args.tasks;
    tokio::task::spawn_blocking(move || {
        fill_topic(&t, tasks, n, |i| {
            (
                i.to_string(),
                json!({"n": i, "note": format!("row {i} of the sink benchmark")}).to_string(),
            )
        })
    })
    .await
    .unwrap();
    let mut config = json!({
        "tasks.max": args.tasks.to_string(), "topics": topic,
        "connection.url": database_url(), "table.name.format": table,
        "batch.size": "1000",
    });
    if offsets_sink {
        config["connector.class"] = json!("connect_connectors::jdbc::PostgresOffsetsSinkConnector");
        config["offsets.table.name"] = json!(format!("{table}_offsets"));
    } else {
        config["connector.class"] = json!("connect_connectors::jdbc::PostgresSinkConnector");
        config["pk.mode"] = json!("record_key");
        config["pk.fields"] = json!("id");
    }
    let (w, t0) = start(args.tasks, config).await;
    let rate = measure(t0, &format!("{n} rows in {table}"), || async {
        let rows = count_rows(&db, &table).await;
        (rows.max(0) as f64, rows == n as i64)
    })
    .await;
    drop(w);
    println!(
        "{label:<30} {n:>9} rows    {:>10.0} rows/s  (all in {:.1}s from tasks RUNNING)",
        rate.per_second,
        rate.total.as_secs_f64()
    );
    for t in [table.clone(), format!("{table}_offsets")] {
        let _ = sqlx::query(&format!("DROP TABLE IF EXISTS {t}"))
            .execute(&db)
            .await;
    }
    db.close().await;
    delete_topic(&topic).await;
}

/// Where the object-store sink writes, and how many `.jsonl` files and bytes are there.
enum Dest {
    Local(std::path::PathBuf),
    S3 {
        store: Arc<dyn ObjectStore>,
        prefix: object_store::path::Path,
    },
}

/// Every object below `prefix` (none if the listing fails).
async fn list_objects(
    store: &Arc<dyn ObjectStore>,
    prefix: &object_store::path::Path,
) -> Vec<object_store::ObjectMeta> {
    store
        .list(Some(prefix))
        .try_collect()
        .await
        .unwrap_or_default()
}

impl Dest {
    /// Deletes what the run wrote.
    async fn clear(&self) {
        match self {
            Dest::Local(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Dest::S3 { store, prefix } => {
                let list = list_objects(store, prefix).await;
                for meta in list {
                    let _ = store.delete(&meta.location).await;
                }
            }
        }
    }

    /// Every object (any extension) and their bytes.
    async fn objects_and_bytes(&self) -> (usize, u64) {
        match self {
            Dest::Local(_) => self.files_and_bytes().await,
            Dest::S3 { store, prefix } => {
                let list = list_objects(store, prefix).await;
                (list.len(), list.iter().map(|m| m.size).sum())
            }
        }
    }

    async fn files_and_bytes(&self) -> (usize, u64) {
        match self {
            Dest::Local(dir) => {
                let files = connect_tests::jsonl_files(dir);
                let bytes = files
                    .iter()
                    .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
                    .sum();
                (files.len(), bytes)
            }
            Dest::S3 { store, prefix } => {
                let list = list_objects(store, prefix).await;
                let jsonl = list
                    .iter()
                    .filter(|m| m.location.as_ref().ends_with(".jsonl"));
                (jsonl.clone().count(), jsonl.map(|m| m.size).sum())
            }
        }
    }
}

/// MB/s of the object-store sink into `dest` (`extra` adds the store's configs).
async fn object_store_run(label: &str, args: &Args, store_url: String, extra: Value, dest: Dest) {
    let per_file = args.flush_size;
    // Only whole files are ever written: round down to full files in every partition.
    let n = (args.object_records / (args.tasks * per_file)).max(1) * args.tasks * per_file;
    let files_expected = n / per_file;
    let topic = unique("sink-bench-files");
    kafka::create_topics(&[&topic], args.tasks as i32).await;
    let t = topic.clone();
    let (tasks, filler) = (args.tasks, "x".repeat(args.value_bytes));
    tokio::task::spawn_blocking(move || {
        fill_topic(&t, tasks, n, |i| {
            (i.to_string(), json!({"n": i, "s": filler}).to_string())
        })
    })
    .await
    .unwrap();
    let mut config = json!({
        "connector.class": "connect_connectors::objectstore::ObjectStoreSinkConnector",
        "tasks.max": args.tasks.to_string(), "topics": topic,
        "store.url": store_url, "flush.size": per_file.to_string(),
    });
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    let (w, t0) = start(args.tasks, config).await;
    let rate = measure(t0, &format!("{files_expected} files"), || async {
        let (files, bytes) = dest.files_and_bytes().await;
        (bytes as f64, files == files_expected)
    })
    .await;
    drop(w);
    delete_topic(&topic).await;
    dest.clear().await;
    let total_bytes = rate.amount;
    let record_bytes = total_bytes / n as f64;
    println!(
        "{label:<30} {n:>9} records {:>10.1} MB/s  ({:.0} records/s of {record_bytes:.0} bytes; {:.1} MB in {files_expected} files, all in {:.1}s from tasks RUNNING)",
        rate.per_second / 1e6,
        rate.per_second / record_bytes,
        total_bytes / 1e6,
        rate.total.as_secs_f64()
    );
}

/// A fresh bucket on `S3_ENDPOINT` and a client on it; `None` (said so) when it is not set.
async fn s3_bucket(label: &str) -> Option<(String, String, String, String, Arc<dyn ObjectStore>)> {
    let Ok(endpoint) = std::env::var("S3_ENDPOINT") else {
        println!("{label:<30} skipped: S3_ENDPOINT is not set (deploy/s3.sh up)");
        return None;
    };
    let endpoint = endpoint.trim_end_matches('/').to_owned();
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".to_owned());
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".to_owned());
    let bucket = unique("sink-bench");
    let res = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .expect("S3 server answers");
    assert!(res.status().is_success(), "create bucket: {}", res.status());
    let store: Arc<dyn ObjectStore> = Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(&endpoint)
            .with_bucket_name(&bucket)
            .with_access_key_id(&key)
            .with_secret_access_key(&secret)
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .expect("S3 client"),
    );
    Some((endpoint, key, secret, bucket, store))
}

/// `S3SinkConnector` with `format` (`json`, `bytes`, `avro`, `parquet`) on `S3_ENDPOINT`.
async fn confluent_run(format: &str, args: &Args) {
    let label = format!("S3SinkConnector {format}");
    let Some((endpoint, key, secret, bucket, store)) = s3_bucket(&label).await else {
        return;
    };
    let per_file = args.flush_size;
    let n = (args.object_records / (args.tasks * per_file)).max(1) * args.tasks * per_file;
    let files_expected = n / per_file;
    let topic = unique("sink-bench-s3");
    kafka::create_topics(&[&topic], args.tasks as i32).await;
    let (tasks, filler) = (args.tasks, "x".repeat(args.value_bytes));
    let schema = json!({"type": "struct", "name": "bench.Row", "optional": false, "fields": [
        {"field": "n", "type": "int64", "optional": false},
        {"field": "s", "type": "string", "optional": false}]});
    let bytes = format == "bytes";
    let json_line_bytes: f64 = {
        let t = topic.clone();
        let fill = filler.clone();
        tokio::task::spawn_blocking(move || {
            fill_topic(&t, tasks, n, |i| {
                let row = json!({"n": i, "s": fill});
                let v = if bytes {
                    row.to_string()
                } else {
                    json!({"schema": schema, "payload": row}).to_string()
                };
                (i.to_string(), v)
            })
        })
        .await
        .unwrap();
        // The same records as this sink's JSON lines (`s3`), to compare the rates.
        (0..n)
            .step_by((n / 1000).max(1))
            .map(|i| json!({"n": i, "s": filler}).to_string().len() + 1)
            .sum::<usize>() as f64
            / n.div_ceil((n / 1000).max(1)) as f64
    };
    let class = match format {
        "json" => "io.confluent.connect.s3.format.json.JsonFormat",
        "bytes" => "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
        "avro" => "io.confluent.connect.s3.format.avro.AvroFormat",
        _ => "io.confluent.connect.s3.format.parquet.ParquetFormat",
    };
    let mut config = json!({
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "tasks.max": args.tasks.to_string(), "topics": topic,
        "s3.bucket.name": bucket, "s3.region": "us-east-1", "store.url": endpoint,
        "aws.access.key.id": key, "aws.secret.access.key": secret, "topics.dir": "bench",
        "format.class": class, "flush.size": per_file.to_string(),
        "avro.codec": "snappy", "parquet.codec": "snappy",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",
    });
    if bytes {
        config["value.converter"] = json!("org.apache.kafka.connect.converters.ByteArrayConverter");
    }
    let dest = Dest::S3 {
        store,
        prefix: object_store::path::Path::from("bench"),
    };
    let (w, t0) = start(args.tasks, config).await;
    let pid = w.pid().unwrap_or(0);
    let cpu0 = connect_tests::bench::cpu_seconds(pid);
    let rate = measure(t0, &format!("{files_expected} objects"), || async {
        let (files, bytes) = dest.objects_and_bytes().await;
        (bytes as f64, files == files_expected)
    })
    .await;
    let cpu = connect_tests::bench::cpu_seconds(pid) - cpu0;
    let rss_mib = connect_tests::bench::peak_rss_kib(pid) as f64 / 1024.0;
    drop(w);
    delete_topic(&topic).await;
    dest.clear().await;
    let secs = rate.total.as_secs_f64().max(1e-3);
    let records_per_s = n as f64 / secs;
    println!(
        "{label:<30} {n:>9} records {records_per_s:>10.0} records/s  {:>7.1} MB/s as JSON lines  {:>7.1} MB/s written ({:.1} MB in {files_expected} objects)  {:.2} CPU s per M records  peak RSS {rss_mib:.0} MiB",
        records_per_s * json_line_bytes / 1e6,
        rate.amount / secs / 1e6,
        rate.amount / 1e6,
        cpu / (n as f64 / 1e6),
    );
}

async fn s3_run(args: &Args) {
    let Ok(endpoint) = std::env::var("S3_ENDPOINT") else {
        println!(
            "{:<30} skipped: S3_ENDPOINT is not set (deploy/s3.sh up)",
            "object store (S3)"
        );
        return;
    };
    let endpoint = endpoint.trim_end_matches('/').to_owned();
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".to_owned());
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".to_owned());
    let bucket = unique("sink-bench");
    let res = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .expect("S3 server answers");
    assert!(res.status().is_success(), "create bucket: {}", res.status());
    let store: Arc<dyn ObjectStore> = Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(&endpoint)
            .with_bucket_name(&bucket)
            .with_access_key_id(&key)
            .with_secret_access_key(&secret)
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .expect("S3 client"),
    );
    let extra = json!({
        "s3.endpoint": endpoint, "s3.access.key.id": key, "s3.secret.access.key": secret,
        "s3.allow.http": "true",
    });
    object_store_run(
        "object store (S3)",
        args,
        format!("s3://{bucket}/bench"),
        extra,
        Dest::S3 {
            store,
            prefix: object_store::path::Path::from("bench"),
        },
    )
    .await;
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let bin = connect_tests::worker::worker_binary();
    println!(
        "sink benchmark: worker {}{}, {} task(s), Kafka at {}, Postgres at {}, S3 at {}",
        bin.display(),
        if bin.to_string_lossy().contains("release") {
            ""
        } else {
            " (NOT a release build: set CONNECT_WORKER_BIN=target/release/connect-worker)"
        },
        args.tasks,
        kafka::bootstrap_servers(),
        database_url(),
        std::env::var("S3_ENDPOINT").unwrap_or_else(|_| "(S3_ENDPOINT not set)".to_owned())
    );
    if args.runs("upsert") {
        postgres_run("upsert (Postgres)", &args, false).await;
    }
    if args.runs("offsets") {
        postgres_run("offsets-with-data (Postgres)", &args, true).await;
    }
    if args.runs("files") {
        let dir = std::env::temp_dir().join(unique("sink-bench-files"));
        object_store_run(
            "object store (local files)",
            &args,
            format!("file://{}", dir.display()),
            json!({}),
            Dest::Local(dir),
        )
        .await;
    }
    if args.runs("s3") {
        s3_run(&args).await;
    }
    for format in ["json", "bytes", "avro", "parquet"] {
        if args.runs(&format!("s3-{format}")) {
            confluent_run(format, &args).await;
        }
    }
}
