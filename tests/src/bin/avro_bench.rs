//! Avro converter benchmark (issue 36): the throughput and CPU of a source task writing Avro
//! through a schema registry, Apache Kafka Connect 4.4 with Apicurio's Java `AvroConverter`
//! against this worker with its native `io.confluent.connect.avro.AvroConverter`, with JSON as
//! the baseline; one after the other against the same broker and registry (prints figures; not
//! a test). See tests/apache/BENCH.md for how to run it and the figures of a run.
//!
//! The workload: one source task, unthrottled, `batch.size` records per poll, `records` records
//! of the verifiable source's `complete.record.data=true` shape (key INT32 = the task id, value
//! the struct {name STRING, task INT32, topic STRING, time_ms INT64, seqno INT64}),
//! at-least-once, the key through JsonConverter without schemas. Apache's worker runs the
//! project's Java connector of that shape (tests/apache/bench, `connectrs.bench.BenchSourceConnector`
//! with `complete.record.data=true`), ours its `VerifiableSourceConnector`. Runs (the third
//! argument, comma-separated, in this order by default):
//!
//! - `apache-avro`: Apache's worker, `value.converter=io.apicurio.registry.utils.converter.AvroConverter`
//!   (Apicurio 2.6.13.Final from Maven Central as an isolated plugin, tests/apache/apicurio/pom.xml)
//!   against the registry's native v2 API (`/apis/registry/v2`), configured to register the
//!   schema and write the Confluent-compatible format with the 4-byte content id:
//!   `apicurio.registry.auto-register=true`, `apicurio.registry.as-confluent=true`,
//!   `apicurio.registry.use-id=contentId`, `apicurio.registry.headers.enabled=false`;
//! - `ours-avro`: ours, `value.converter=io.confluent.connect.avro.AvroConverter` with
//!   `schema.registry.url` the registry's Confluent API (auto-registering, the default);
//! - `ours-json`: ours, `value.converter=org.apache.kafka.connect.json.JsonConverter` with
//!   `schemas.enable=false`: the baseline;
//! - `apache-json`: Apache's worker with the same JsonConverter: Java's own baseline.
//!
//! Each run gets a fresh worker (Apache's from tests/apache/apache-connect.sh with
//! `APACHE_CONNECT_BENCH_PLUGIN=1` and `APACHE_CONNECT_APICURIO_CONVERTER=1`, the measured
//! process its JVM; ours `connect_tests::worker`, the binary of `CONNECT_WORKER_BIN`: point it
//! at a release build), a fresh topic of one partition and fresh internal topics, all deleted
//! after. Per run it prints records/s from the first to the last record's timestamp
//! (CreateTime; worker start-up excluded), the worker process's CPU seconds from the
//! connector's creation until the topic's end stood still for a second (task start-up and the
//! schema's registration included), µs of CPU per record, records per CPU second, and the peak
//! RSS. Then the ratios: ours / Apache with Avro (the goal: at least 2x Apache's
//! records per CPU second), and Avro / JSON on each worker.
//!
//! Every record is then read back (after the measurement) and checked: the key `0`; an Avro
//! value in the registry wire format (magic byte 0, a 4-byte schema id) whose id the registry
//! serves (`GET /schemas/ids/{id}` of its Confluent API) and is the latest of the subject
//! `<topic>-value`, decoded through this project's own converter (`connect-registry`, in this
//! process: so Apache's bytes are read by our consumer side) into the struct the task wrote
//! (name, task 0, topic, seqno = its position); a JSON value parsed into the same fields. The
//! ids are also looked up in the registry's native v3 API, which tells whether the 4-byte id is
//! the content id or the global id of the version.
//!
//! Apache's JVM gets `APACHE_CONNECT_HEAP_OPTS` (default `-Xms256M -Xmx2G`) and
//! `APACHE_CONNECT_JVM_OPTS` (default the options of Apache's bin/kafka-run-class.sh).
//!
//! Run (with `deploy/kafka.sh up` and `deploy/registry.sh up`, serialized with the machine's
//! other benchmarks):
//! `SCHEMA_REGISTRY_URL=http://127.0.0.1:38081/apis/ccompat/v7 CONNECT_WORKER_BIN=target/release/connect-worker
//! flock /tmp/bench.lock target/release/avro_bench [records] [batch] [runs]`; defaults 1000000,
//! 1000, `apache-avro,ours-avro,ours-json,apache-json`. The Apicurio converter's v2 URL is
//! derived from `SCHEMA_REGISTRY_URL` (`/apis/ccompat/v7` → `/apis/registry/v2`), or
//! `APICURIO_REGISTRY_URL`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use connect_api::{ConfigMap, Converter, Value};
use connect_registry::avro::converter::AvroConverter;
use connect_tests::bench::{
    apache_start_with, apache_stop, cpu_seconds, delete_topics, peak_rss_kib,
};
use connect_tests::kafka::{self, client_config};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use serde_json::{Value as Json, json};

const APICURIO_AVRO: &str = "io.apicurio.registry.utils.converter.AvroConverter";
const CONFLUENT_AVRO: &str = "io.confluent.connect.avro.AvroConverter";
const JSON: &str = "org.apache.kafka.connect.json.JsonConverter";
const CONNECTOR: &str = "bench";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Worker {
    Apache,
    Ours,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Avro,
    Json,
}

struct Case {
    key: &'static str,
    label: &'static str,
    worker: Worker,
    format: Format,
}

const CASES: [Case; 4] = [
    Case {
        key: "apache-avro",
        label: "Apache 4.4 + Apicurio 2.6.13 AvroConverter",
        worker: Worker::Apache,
        format: Format::Avro,
    },
    Case {
        key: "ours-avro",
        label: "connect-worker + AvroConverter",
        worker: Worker::Ours,
        format: Format::Avro,
    },
    Case {
        key: "ours-json",
        label: "connect-worker + JsonConverter",
        worker: Worker::Ours,
        format: Format::Json,
    },
    Case {
        key: "apache-json",
        label: "Apache 4.4 + JsonConverter",
        worker: Worker::Apache,
        format: Format::Json,
    },
];

/// Where the registry is: its Confluent API, and the Apicurio native APIs beside it.
struct Registry {
    ccompat: String,
    v2: String,
    v3: String,
}

impl Registry {
    fn from_env() -> Self {
        let ccompat = std::env::var("SCHEMA_REGISTRY_URL")
            .expect("SCHEMA_REGISTRY_URL: start the registry with deploy/registry.sh up");
        let ccompat = ccompat.trim_end_matches('/').to_owned();
        let base = ccompat
            .strip_suffix("/apis/ccompat/v7")
            .unwrap_or(&ccompat)
            .to_owned();
        let v2 = std::env::var("APICURIO_REGISTRY_URL")
            .unwrap_or_else(|_| format!("{base}/apis/registry/v2"));
        Registry {
            ccompat,
            v2,
            v3: format!("{base}/apis/registry/v3"),
        }
    }
}

/// What one worker run measured.
#[derive(Clone, Copy, Debug)]
struct Run {
    rate: f64,
    secs: f64,
    cpu: f64,
    rss_kib: u64,
}

impl Run {
    fn us_per_record(&self, n: usize) -> f64 {
        self.cpu * 1e6 / n as f64
    }

    fn per_cpu_second(&self, n: usize) -> f64 {
        n as f64 / self.cpu
    }
}

fn connector_config(case: &Case, reg: &Registry, topic: &str, n: usize, batch: usize) -> Json {
    let class = match case.worker {
        Worker::Apache => "connectrs.bench.BenchSourceConnector",
        Worker::Ours => "org.apache.kafka.connect.tools.VerifiableSourceConnector",
    };
    let mut config = json!({
        "connector.class": class,
        "tasks.max": "1", "topic": topic, "throughput": "-1",
        "batch.size": batch.to_string(), "max.records": n.to_string(),
        "complete.record.data": "true",
    });
    let converter: Vec<(&str, &str)> = match (case.worker, case.format) {
        (Worker::Apache, Format::Avro) => vec![
            ("value.converter", APICURIO_AVRO),
            ("value.converter.apicurio.registry.url", reg.v2.as_str()),
            ("value.converter.apicurio.registry.auto-register", "true"),
            ("value.converter.apicurio.registry.as-confluent", "true"),
            ("value.converter.apicurio.registry.use-id", "contentId"),
            ("value.converter.apicurio.registry.headers.enabled", "false"),
        ],
        (Worker::Ours, Format::Avro) => vec![
            ("value.converter", CONFLUENT_AVRO),
            ("value.converter.schema.registry.url", reg.ccompat.as_str()),
        ],
        (_, Format::Json) => vec![
            ("value.converter", JSON),
            ("value.converter.schemas.enable", "false"),
        ],
    };
    for (k, v) in converter {
        config[k] = json!(v);
    }
    config
}

/// `POST /connectors` on the worker at `url`, which must answer 201.
async fn create_connector(url: &str, config: Json) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/connectors"))
        .json(&json!({"name": CONNECTOR, "config": config}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        201,
        "{}",
        resp.text().await.unwrap_or_default()
    );
}

/// The first task's state and the non-`at` lines of its trace, when the run failed.
async fn task_status(url: &str) -> String {
    let Ok(r) = reqwest::get(format!("{url}/connectors/{CONNECTOR}/status")).await else {
        return "no status".into();
    };
    let body: Json = r.json().await.unwrap_or_default();
    let trace = body["tasks"][0]["trace"].as_str().unwrap_or("");
    let causes: Vec<&str> = trace
        .lines()
        .filter(|l| !l.trim_start().starts_with("at "))
        .collect();
    format!("{} {}", body["tasks"][0]["state"], causes.join(" / "))
}

/// One run of `case`: measured, then every record checked. `Err` says why the run failed.
#[allow(clippy::print_stdout)]
async fn run_case(
    case: &Case,
    reg: &Registry,
    n: usize,
    batch: usize,
) -> Result<(Run, BTreeSet<i32>), String> {
    let topic = unique(&format!("avrobench-{}", case.key));
    kafka::create_topics(&[&topic], 1).await;
    let config = connector_config(case, reg, &topic, n, batch);
    match case.worker {
        Worker::Apache => {
            let worker = apache_start_with(
                "disabled",
                "offset.flush.interval.ms=1000",
                &[("APACHE_CONNECT_APICURIO_CONVERTER", "1")],
            );
            let (url, pid) = (worker.url.clone(), worker.pid);
            let cpu_before = cpu_seconds(pid);
            create_connector(&url, config).await;
            let result = measure_and_check(case.format, reg, &topic, n, pid, cpu_before).await;
            if result.is_err() {
                println!("  Apache's task: {}", task_status(&url).await);
            }
            apache_stop(worker, std::slice::from_ref(&topic)).await;
            result
        }
        Worker::Ours => {
            let spec = ClusterSpec::new("avrobench").set("offset.flush.interval.ms", "1000");
            let w: WorkerProc = spec.start_worker().await;
            let pid = w.pid().expect("worker pid");
            let cpu_before = cpu_seconds(pid);
            create_connector(&w.url(""), config).await;
            let result = measure_and_check(case.format, reg, &topic, n, pid, cpu_before).await;
            if result.is_err() {
                println!("  our task: {}", task_status(&w.url("")).await);
            }
            drop(w);
            let g = &spec.group_id;
            delete_topics(&[
                topic.clone(),
                format!("{g}-configs"),
                format!("{g}-offsets"),
                format!("{g}-status"),
            ])
            .await;
            result
        }
    }
}

async fn measure_and_check(
    format: Format,
    reg: &Registry,
    topic: &str,
    n: usize,
    pid: i32,
    cpu_before: f64,
) -> Result<(Run, BTreeSet<i32>), String> {
    let (t, ccompat) = (topic.to_owned(), reg.ccompat.clone());
    let (run, ids) =
        tokio::task::spawn_blocking(move || measure(format, &ccompat, &t, n, pid, cpu_before))
            .await
            .unwrap()?;
    if format == Format::Avro {
        check_ids(reg, topic, &ids).await?;
    }
    Ok((run, ids))
}

/// Waits until the task has written everything, takes the worker's CPU, then reads and checks
/// the `n` records of `topic` (Avro: through our converter; the schema ids seen are returned),
/// and takes the worker's peak RSS.
fn measure(
    format: Format,
    ccompat: &str,
    topic: &str,
    n: usize,
    pid: i32,
    cpu_before: f64,
) -> Result<(Run, BTreeSet<i32>), String> {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("avrobench"))
        .set("auto.offset.reset", "earliest")
        .set("fetch.max.bytes", "52428800")
        .create()
        .unwrap();
    // Read only once the task has written everything (the high watermark holds at or above `n`
    // for a second): a reader running alongside would take CPU from the worker and the broker.
    let deadline = Instant::now() + Duration::from_secs(900);
    let mut settled = (0i64, Instant::now());
    while Instant::now() < deadline {
        let (_, high) = consumer
            .fetch_watermarks(topic, 0, Duration::from_secs(10))
            .unwrap_or((0, 0));
        if high != settled.0 {
            settled = (high, Instant::now());
        } else if high >= n as i64 && settled.1.elapsed() >= Duration::from_secs(1) {
            break;
        } else if settled.1.elapsed() >= Duration::from_secs(60) {
            break; // the task stopped writing (failed?): the read below tells
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let cpu = cpu_seconds(pid) - cpu_before;
    let rss_kib = peak_rss_kib(pid);
    let mut check = Checker::new(format, ccompat, topic)?;
    consumer.subscribe(&[topic]).unwrap();
    let (mut first, mut last, mut seen) = (i64::MAX, i64::MIN, 0usize);
    let mut progress = Instant::now();
    while seen < n && Instant::now() < deadline && progress.elapsed() < Duration::from_secs(30) {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            progress = Instant::now();
            let (key, value) = (m.key().unwrap_or_default(), m.payload().unwrap_or_default());
            check
                .record(seen, key, value)
                .map_err(|e| format!("record {seen} of {topic}: {e}"))?;
            if let Some(ts) = m.timestamp().to_millis() {
                first = first.min(ts);
                last = last.max(ts);
            }
            seen += 1;
        }
    }
    if seen < n {
        return Err(format!(
            "only {seen} of {n} records of {topic} could be read"
        ));
    }
    let secs = ((last - first).max(1) as f64) / 1e3;
    Ok((
        Run {
            rate: n as f64 / secs,
            secs,
            cpu,
            rss_kib,
        },
        check.ids,
    ))
}

/// Checks each record read back: key, wire format, and the decoded value.
struct Checker {
    format: Format,
    topic: String,
    avro: Option<AvroConverter>,
    ids: BTreeSet<i32>,
}

impl Checker {
    fn new(format: Format, ccompat: &str, topic: &str) -> Result<Self, String> {
        let avro = if format == Format::Avro {
            let mut c = AvroConverter::default();
            let config: ConfigMap = [("schema.registry.url".to_owned(), ccompat.to_owned())]
                .into_iter()
                .collect();
            c.configure(&config, false).map_err(|e| e.to_string())?;
            Some(c)
        } else {
            None
        };
        Ok(Checker {
            format,
            topic: topic.to_owned(),
            avro,
            ids: BTreeSet::new(),
        })
    }

    fn record(&mut self, seqno: usize, key: &[u8], value: &[u8]) -> Result<(), String> {
        if key != b"0" {
            return Err(format!("key {:?}, not 0", String::from_utf8_lossy(key)));
        }
        let fields: [(&str, Json); 4] = match self.format {
            Format::Json => {
                let v: Json = serde_json::from_slice(value).map_err(|e| format!("{e}"))?;
                if !v["time_ms"].is_i64() {
                    return Err(format!("no time_ms in {v}"));
                }
                [
                    ("name", v["name"].clone()),
                    ("task", v["task"].clone()),
                    ("topic", v["topic"].clone()),
                    ("seqno", v["seqno"].clone()),
                ]
            }
            Format::Avro => {
                let [0, a, b, c, d, ..] = value else {
                    return Err(format!(
                        "not in the registry wire format: {:02x?}",
                        &value[..value.len().min(8)]
                    ));
                };
                self.ids.insert(i32::from_be_bytes([*a, *b, *c, *d]));
                let converter = self.avro.as_ref().expect("configured");
                let sv = converter
                    .to_connect_data(&self.topic, Some(value))
                    .map_err(|e| format!("our AvroConverter cannot read it: {e}"))?;
                let Value::Struct(s) = &sv.value else {
                    return Err(format!("decoded to {:?}, not a struct", sv.value));
                };
                let json = |f: &str| match s.get(f) {
                    Some(Value::String(x)) => json!(x),
                    Some(Value::Int32(x)) => json!(x),
                    Some(Value::Int64(x)) => json!(x),
                    other => json!(format!("{other:?}")),
                };
                if !matches!(s.get("time_ms"), Some(Value::Int64(_))) {
                    return Err(format!("no time_ms in {s:?}"));
                }
                [
                    ("name", json("name")),
                    ("task", json("task")),
                    ("topic", json("topic")),
                    ("seqno", json("seqno")),
                ]
            }
        };
        let expected = [json!(CONNECTOR), json!(0), json!(self.topic), json!(seqno)];
        for ((field, got), want) in fields.iter().zip(expected) {
            if *got != want {
                return Err(format!("{field} is {got}, expected {want}"));
            }
        }
        Ok(())
    }
}

/// Each schema id of the records must be served by the registry (its Confluent API) as the
/// latest of `<topic>-value`; the native v3 API's version metadata tells content id from
/// global id.
#[allow(clippy::print_stdout)]
async fn check_ids(reg: &Registry, topic: &str, ids: &BTreeSet<i32>) -> Result<(), String> {
    let get = |url: String| async move {
        let r = reqwest::get(&url)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let status = r.status().as_u16();
        let body: Json = r.json().await.unwrap_or_default();
        if status == 200 {
            Ok(body)
        } else {
            Err(format!("{url}: {status} {body}"))
        }
    };
    let subject = format!("{topic}-value");
    let latest = get(format!(
        "{}/subjects/{subject}/versions/latest",
        reg.ccompat
    ))
    .await?;
    let meta = get(format!(
        "{}/groups/default/artifacts/{subject}/versions/branch=latest",
        reg.v3
    ))
    .await
    .unwrap_or_default();
    for id in ids {
        let schema = get(format!("{}/schemas/ids/{id}", reg.ccompat)).await?;
        if latest["id"] != json!(id) {
            return Err(format!(
                "schema id {id} of the records is not the latest of {subject}: {latest}"
            ));
        }
        println!(
            "  schema id {id}: registered as {subject} version {}, the registry's contentId {} / globalId {}; {}",
            latest["version"], meta["contentId"], meta["globalId"], schema["schema"]
        );
    }
    if ids.len() != 1 {
        return Err(format!("{} schema ids in the records: {ids:?}", ids.len()));
    }
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print_run(case: &Case, n: usize, r: &Run) {
    println!(
        "{:<44} {n:>8} records in {:>6.2}s  {:>8.0} records/s  CPU {:>6.2}s ({:>5.2} µs/record, {:>7.0} records/CPU-s)  peak RSS {:>6.1} MiB",
        case.label,
        r.secs,
        r.rate,
        r.cpu,
        r.us_per_record(n),
        r.per_cpu_second(n),
        r.rss_kib as f64 / 1024.0
    );
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let runs = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "apache-avro,ours-avro,ours-json,apache-json".into());
    let on = |m: &str| runs.split(',').any(|x| x.trim() == m);
    let reg = Registry::from_env();
    println!(
        "Avro converter benchmark: {n} records of the verifiable source's struct, batch.size {batch}, one task, at-least-once; \
         connect-worker {}, Kafka at {}, registry {} (Apicurio's converter: {})",
        connect_tests::worker::worker_binary().display(),
        kafka::bootstrap_servers(),
        reg.ccompat,
        reg.v2
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut results: Vec<(&Case, Option<Run>)> = Vec::new();
    for case in CASES.iter().filter(|c| on(c.key)) {
        match rt.block_on(run_case(case, &reg, n, batch)) {
            Ok((run, _)) => {
                print_run(case, n, &run);
                results.push((case, Some(run)));
            }
            Err(e) => {
                println!("{:<44} FAILED: {e}", case.label);
                results.push((case, None));
            }
        }
    }
    println!();
    println!(
        "| run | records/s | CPU s | CPU µs/record | records per CPU second | peak RSS MiB |\n|---|---:|---:|---:|---:|---:|"
    );
    for (case, r) in &results {
        match r {
            Some(r) => println!(
                "| {} | {:.0} | {:.2} | {:.2} | {:.0} | {:.1} |",
                case.label,
                r.rate,
                r.cpu,
                r.us_per_record(n),
                r.per_cpu_second(n),
                r.rss_kib as f64 / 1024.0
            ),
            None => println!("| {} | failed | | | | |", case.label),
        }
    }
    let get = |key: &str| {
        results
            .iter()
            .find(|(c, _)| c.key == key)
            .and_then(|(_, r)| *r)
    };
    let pairs = [
        ("ours-avro", "apache-avro", "Avro: ours / Apache"),
        ("ours-json", "apache-json", "JSON: ours / Apache"),
        ("ours-avro", "ours-json", "ours: Avro / JSON"),
        ("apache-avro", "apache-json", "Apache: Avro / JSON"),
    ];
    println!();
    println!(
        "| ratio | records/s | CPU s | records per CPU second | peak RSS |\n|---|---:|---:|---:|---:|"
    );
    for (a, b, label) in pairs {
        if let (Some(a), Some(b)) = (get(a), get(b)) {
            println!(
                "| {label} | {:.2} | {:.2} | {:.2} | {:.3} |",
                a.rate / b.rate,
                a.cpu / b.cpu,
                a.per_cpu_second(n) / b.per_cpu_second(n),
                a.rss_kib as f64 / b.rss_kib as f64
            );
        }
    }
    if let (Some(ours), Some(apache)) = (get("ours-avro"), get("apache-avro")) {
        let x = ours.per_cpu_second(n) / apache.per_cpu_second(n);
        println!();
        println!(
            "goal (issue 36): ours >= 2x Apache's Avro records per CPU second: {x:.2}x, {}",
            if x >= 2.0 { "met" } else { "NOT met" }
        );
    }
}
