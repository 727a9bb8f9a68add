//! Side-by-side source benchmark: Apache Kafka Connect 4.4 and this worker, the same workload
//! one after the other against the same broker (prints figures; not a test). See
//! tests/apache/BENCH.md for how to run it and the figures of a run.
//!
//! The workload: one source task, unthrottled, `batch.size` records per poll, `records` records
//! of the verifiable source's shape (key INT32 = the task id, value INT64 = the seqno, source
//! partition `{"id": 0}`, offset `{"seqno": n}`), JsonConverter without schemas for key and
//! value. Apache's worker runs the project's own Java connector of that shape
//! (tests/apache/bench, `connectrs.bench.BenchSourceConnector`: Apache's test-plugins artifact
//! is not on Maven Central), ours its `VerifiableSourceConnector`. Modes:
//!
//! - `alo`: `exactly.once.source.support=disabled` (at-least-once)
//! - `poll`: `exactly.once.source.support=enabled`, `transaction.boundary=poll`
//! - `interval`: the same with `transaction.boundary=interval`,
//!   `transaction.boundary.interval.ms=100`
//!
//! For each mode it runs Apache's worker (tests/apache/apache-connect.sh with
//! `APACHE_CONNECT_BENCH_PLUGIN=1`; the measured process is its JVM, from the script's run/pid),
//! then ours (`connect_tests::worker`, the binary of `CONNECT_WORKER_BIN`: point it at a release
//! build), each with a fresh topic of one partition and fresh internal topics, all deleted after.
//! Per run it prints:
//!
//! - records/s from the first to the last record's timestamp (CreateTime, stamped by the
//!   worker's producer), read with `read_committed` once the topic's end has stood still for a
//!   second, so worker start-up is excluded;
//! - the worker process's CPU seconds (user + system, `/proc/<pid>/stat`) from the connector's
//!   creation until the topic's end stood still (task start-up included), and per record;
//! - its peak RSS (`VmHWM` of `/proc/<pid>/status`, read just before the worker is stopped).
//!
//! Every record read is checked: key `0`, value the seqno, in order, so both workers are seen
//! to write the same bytes. Then per mode the ratios ours / Apache.
//!
//! Density modes (`density-alo`, `density-eos`; issue 15's item 5): one connector of
//! `DENSITY_TASKS` tasks (default 100) at `DENSITY_RATE` records/s each (default 10), one record
//! per poll, into a topic of 10 partitions, at-least-once or exactly-once per poll, each worker
//! at its defaults otherwise. Once every task is RUNNING (or after 180 s) and 10 s more, the
//! worker's CPU seconds over 30 s, its thread count, the committed records stamped in those
//! 30 s (both workers must keep up) and its peak RSS; then the ratios.
//!
//! Apache's JVM gets `APACHE_CONNECT_HEAP_OPTS` (default `-Xms256M -Xmx2G`, the heap Apache's
//! bin/connect-distributed.sh sets) and `APACHE_CONNECT_JVM_OPTS` (default the options Apache's
//! bin/kafka-run-class.sh sets: G1, `MaxGCPauseMillis=20`, ...).
//!
//! Run (serialized with the machine's other benchmarks):
//! `flock /tmp/bench.lock cargo run --release -p connect-tests --bin side_by_side -- [records]
//! [batch] [modes]` with `CONNECT_WORKER_BIN=target/release/connect-worker`; defaults 2000000,
//! 1000, `alo,poll,interval,density-alo,density-eos`.

use std::time::{Duration, Instant};

use connect_tests::bench::{
    apache_start, apache_stop, cpu_seconds, delete_topics, peak_rss_kib, proc_status_field,
};
use connect_tests::kafka::{self, client_config};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use serde_json::{Value, json};

/// What one worker run measured.
#[derive(Clone, Copy, Debug)]
struct Run {
    rate: f64,
    secs: f64,
    cpu: f64,
    rss_kib: u64,
}

/// One benchmark mode: label, `exactly.once.source.support`, `transaction.boundary`.
struct Mode {
    key: &'static str,
    label: &'static str,
    support: &'static str,
    boundary: Option<&'static str>,
}

const MODES: [Mode; 3] = [
    Mode {
        key: "alo",
        label: "at-least-once",
        support: "disabled",
        boundary: None,
    },
    Mode {
        key: "poll",
        label: "eos poll",
        support: "enabled",
        boundary: Some("poll"),
    },
    Mode {
        key: "interval",
        label: "eos interval 100ms",
        support: "enabled",
        boundary: Some("interval"),
    },
];

fn connector_config(class: &str, topic: &str, n: usize, batch: usize, mode: &Mode) -> Value {
    let mut config = json!({
        "connector.class": class,
        "tasks.max": "1", "topic": topic, "throughput": "-1",
        "batch.size": batch.to_string(), "max.records": n.to_string(),
    });
    if let Some(b) = mode.boundary {
        config["transaction.boundary"] = json!(b);
        if b == "interval" {
            config["transaction.boundary.interval.ms"] = json!("100");
        }
    }
    config
}

/// `POST /connectors` on the worker at `url`, which must answer 201.
async fn create_connector(url: &str, name: &str, config: Value) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/connectors"))
        .json(&json!({"name": name, "config": config}))
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

/// Apache Kafka Connect's run of `mode`.
#[allow(clippy::print_stdout)]
async fn apache_run(mode: &Mode, n: usize, batch: usize) -> Option<Run> {
    let worker = apache_start(mode.support, "offset.flush.interval.ms=1000");
    let (url, pid) = (worker.url.clone(), worker.pid);
    let topic = unique("sbs-apache");
    kafka::create_topics(&[&topic], 1).await;
    let config = connector_config(
        "connectrs.bench.BenchSourceConnector",
        &topic,
        n,
        batch,
        mode,
    );
    let cpu_before = cpu_seconds(pid);
    create_connector(&url, "bench", config).await;
    let t = topic.clone();
    let run = tokio::task::spawn_blocking(move || measure(&t, n, pid, cpu_before))
        .await
        .unwrap();
    if run.is_none() {
        let status = reqwest::get(format!("{url}/connectors/bench/status")).await;
        if let Ok(r) = status {
            let body: Value = r.json().await.unwrap_or_default();
            let trace = body["tasks"][0]["trace"].as_str().unwrap_or("");
            let causes: Vec<&str> = trace
                .lines()
                .filter(|l| !l.trim_start().starts_with("at "))
                .collect();
            println!(
                "Apache's task: {} {}",
                body["tasks"][0]["state"],
                causes.join(" / ")
            );
        }
    }
    apache_stop(worker, &[topic]).await;
    run
}

/// This worker's run of `mode`.
#[allow(clippy::print_stdout)]
async fn ours_run(mode: &Mode, n: usize, batch: usize) -> Option<Run> {
    let spec = ClusterSpec::new("sbs")
        .set("exactly.once.source.support", mode.support)
        .set("offset.flush.interval.ms", "1000");
    let w: WorkerProc = spec.start_worker().await;
    let pid = w.pid().expect("worker pid");
    let topic = unique("sbs-ours");
    kafka::create_topics(&[&topic], 1).await;
    let config = connector_config(
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        &topic,
        n,
        batch,
        mode,
    );
    let cpu_before = cpu_seconds(pid);
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "bench", "config": config})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let t = topic.clone();
    let run = tokio::task::spawn_blocking(move || measure(&t, n, pid, cpu_before))
        .await
        .unwrap();
    drop(w);
    let g = &spec.group_id;
    delete_topics(&[
        topic,
        format!("{g}-configs"),
        format!("{g}-offsets"),
        format!("{g}-status"),
    ])
    .await;
    run
}

/// The density workload (issue 15, item 5): `tasks` tasks of one connector on one worker, each
/// trickling `rate` records/s, one record per poll (`batch.size=1`), into a topic of
/// [`DENSITY_PARTITIONS`] partitions; at-least-once, or exactly-once per poll. Each worker's
/// defaults otherwise (`offset.flush.interval.ms` 60 s on both).
const DENSITY_MODES: [Mode; 2] = [
    Mode {
        key: "density-alo",
        label: "density alo",
        support: "disabled",
        boundary: None,
    },
    Mode {
        key: "density-eos",
        label: "density eos poll",
        support: "enabled",
        boundary: Some("poll"),
    },
];
const DENSITY_PARTITIONS: i32 = 10;
/// How long the tasks may take to all be RUNNING before the window is measured anyway.
const DENSITY_START_TIMEOUT: Duration = Duration::from_secs(180);
/// After all tasks run: time for the JVM's JIT (and both workers' first offset flushes) to settle.
const DENSITY_WARMUP: Duration = Duration::from_secs(10);
/// The measured window.
const DENSITY_WINDOW: Duration = Duration::from_secs(30);

/// What one density run measured.
#[derive(Clone, Copy, Debug)]
struct Density {
    running: usize,
    /// Seconds from the connector's creation until every task was RUNNING (`None`: not within
    /// [`DENSITY_START_TIMEOUT`]).
    start_secs: Option<f64>,
    /// CPU seconds of the worker process during the window.
    cpu: f64,
    threads: u64,
    /// Committed records stamped (CreateTime) within the window.
    records: usize,
    rss_kib: u64,
}

fn density_config(class: &str, topic: &str, tasks: usize, rate: u64, mode: &Mode) -> Value {
    let mut config = json!({
        "connector.class": class,
        "tasks.max": tasks.to_string(), "topic": topic, "throughput": rate.to_string(),
        "batch.size": "1",
    });
    if let Some(b) = mode.boundary {
        config["transaction.boundary"] = json!(b);
    }
    config
}

/// Creates the density connector on the worker at `url` (process `pid`), waits for its tasks,
/// measures the window, then counts the committed records of the window.
#[allow(clippy::print_stdout)]
async fn density_measure(url: &str, pid: i32, topic: &str, config: Value, tasks: usize) -> Density {
    let http = reqwest::Client::new();
    create_connector(url, "density", config).await;
    let created = Instant::now();
    let (mut running, mut start_secs) = (0, None);
    while created.elapsed() < DENSITY_START_TIMEOUT {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let body: Value = match http
            .get(format!("{url}/connectors/density/status"))
            .send()
            .await
        {
            Ok(r) => r.json().await.unwrap_or_default(),
            Err(_) => continue,
        };
        let states = body["tasks"].as_array().cloned().unwrap_or_default();
        running = states.iter().filter(|t| t["state"] == "RUNNING").count();
        if let Some(failed) = states.iter().find(|t| t["state"] == "FAILED") {
            let trace = failed["trace"].as_str().unwrap_or("");
            println!("a task FAILED: {}", trace.lines().next().unwrap_or(""));
        }
        if running == tasks {
            start_secs = Some(created.elapsed().as_secs_f64());
            break;
        }
    }
    tokio::time::sleep(DENSITY_WARMUP).await;
    let (from_ms, cpu_before) = (now_ms(), cpu_seconds(pid));
    tokio::time::sleep(DENSITY_WINDOW).await;
    let (to_ms, cpu) = (now_ms(), cpu_seconds(pid) - cpu_before);
    let threads = proc_status_field(pid, "Threads:");
    // Stopped, so the topic's end stands still for the count.
    let deleted = http
        .delete(format!("{url}/connectors/density"))
        .send()
        .await
        .map(|r| r.status().as_u16());
    assert!(
        matches!(deleted, Ok(204)),
        "deleting the density connector: {deleted:?}"
    );
    let t = topic.to_owned();
    let records = tokio::task::spawn_blocking(move || committed_between(&t, from_ms, to_ms))
        .await
        .unwrap();
    Density {
        running,
        start_secs,
        cpu,
        threads,
        records,
        rss_kib: peak_rss_kib(pid),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Committed records of `topic` with a timestamp in `[from_ms, to_ms)` (reads it all, until
/// nothing has come for 3 s).
fn committed_between(topic: &str, from_ms: i64, to_ms: i64) -> usize {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("sbs-density"))
        .set("auto.offset.reset", "earliest")
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let (mut count, mut idle) = (0, Instant::now());
    while idle.elapsed() < Duration::from_secs(3) {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            idle = Instant::now();
            if let Some(ts) = m.timestamp().to_millis()
                && (from_ms..to_ms).contains(&ts)
            {
                count += 1;
            }
        }
    }
    count
}

/// Apache Kafka Connect's density run of `mode`.
async fn apache_density(mode: &Mode, tasks: usize, rate: u64) -> Density {
    let worker = apache_start(mode.support, "");
    let topic = unique("sbs-density-apache");
    kafka::create_topics(&[&topic], DENSITY_PARTITIONS).await;
    let config = density_config(
        "connectrs.bench.BenchSourceConnector",
        &topic,
        tasks,
        rate,
        mode,
    );
    let d = density_measure(&worker.url, worker.pid, &topic, config, tasks).await;
    apache_stop(worker, &[topic]).await;
    d
}

/// This worker's density run of `mode`.
async fn ours_density(mode: &Mode, tasks: usize, rate: u64) -> Density {
    let spec = ClusterSpec::new("sbs").set("exactly.once.source.support", mode.support);
    let w: WorkerProc = spec.start_worker().await;
    let pid = w.pid().expect("worker pid");
    let topic = unique("sbs-density-ours");
    kafka::create_topics(&[&topic], DENSITY_PARTITIONS).await;
    let config = density_config(
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        &topic,
        tasks,
        rate,
        mode,
    );
    let d = density_measure(&w.url(""), pid, &topic, config, tasks).await;
    drop(w);
    let g = &spec.group_id;
    delete_topics(&[
        topic,
        format!("{g}-configs"),
        format!("{g}-offsets"),
        format!("{g}-status"),
    ])
    .await;
    d
}

#[allow(clippy::print_stdout)]
fn print_density(mode: &Mode, worker: &str, tasks: usize, d: &Density) {
    let start = d.start_secs.map_or_else(
        || "not all within 180s".to_owned(),
        |s| format!("all in {s:.1}s"),
    );
    println!(
        "{:<18} {worker:<7} {}/{tasks} tasks RUNNING ({start})  CPU {:>6.2}s per {}s  threads {:>4}  {:>6} records in the window ({:.0}/s)  peak RSS {:>6.1} MiB",
        mode.label,
        d.running,
        d.cpu,
        DENSITY_WINDOW.as_secs(),
        d.threads,
        d.records,
        d.records as f64 / DENSITY_WINDOW.as_secs_f64(),
        d.rss_kib as f64 / 1024.0
    );
}

/// Waits until the task has written everything, then takes the worker's CPU, reads and checks
/// the `n` committed records of `topic`, and takes the worker's peak RSS.
#[allow(clippy::print_stdout)]
fn measure(topic: &str, n: usize, pid: i32, cpu_before: f64) -> Option<Run> {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("sbs"))
        .set("auto.offset.reset", "earliest")
        .set("isolation.level", "read_committed")
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
    consumer.subscribe(&[topic]).unwrap();
    let (mut first, mut last, mut seen) = (i64::MAX, i64::MIN, 0usize);
    // A task that failed mid-transaction leaves records nobody can read committed: give up
    // after 60 s without a record.
    let mut progress = Instant::now();
    while seen < n && Instant::now() < deadline && progress.elapsed() < Duration::from_secs(60) {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            progress = Instant::now();
            // The verifiable source's record `seen`: key 0 (the task id), value its seqno.
            let (key, value) = (m.key().unwrap_or_default(), m.payload().unwrap_or_default());
            assert!(
                key == b"0" && value == seen.to_string().as_bytes(),
                "record {seen} of {topic}: key {:?}, value {:?} (expected 0 and {seen})",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(value)
            );
            if let Some(ts) = m.timestamp().to_millis() {
                first = first.min(ts);
                last = last.max(ts);
            }
            seen += 1;
        }
    }
    if seen < n {
        println!("only {seen} of {n} committed records of {topic} could be read: the run failed");
        return None;
    }
    let secs = ((last - first).max(1) as f64) / 1e3;
    Some(Run {
        rate: n as f64 / secs,
        secs,
        cpu,
        rss_kib: peak_rss_kib(pid),
    })
}

#[allow(clippy::print_stdout)]
fn print_run(mode: &Mode, worker: &str, n: usize, r: Option<&Run>) {
    let Some(r) = r else {
        println!("{:<18} {worker:<7} FAILED", mode.label);
        return;
    };
    println!(
        "{:<18} {worker:<7} {n:>8} records in {:>6.2}s  {:>9.0} records/s  CPU {:>6.2}s ({:>5.2} µs/record)  peak RSS {:>6.1} MiB",
        mode.label,
        r.secs,
        r.rate,
        r.cpu,
        r.cpu * 1e6 / n as f64,
        r.rss_kib as f64 / 1024.0
    );
}

/// The throughput runs' tables.
#[allow(clippy::print_stdout)]
fn print_runs(rows: &[(&Mode, Option<Run>, Option<Run>)], n: usize) {
    println!();
    println!(
        "| mode | worker | records/s | CPU s | CPU µs/record | peak RSS MiB |\n|---|---|---:|---:|---:|---:|"
    );
    for (mode, apache, ours) in rows {
        for (worker, r) in [("Apache Connect 4.4", apache), ("connect-worker", ours)] {
            let Some(r) = r else {
                println!("| {} | {worker} | failed | | | |", mode.label);
                continue;
            };
            println!(
                "| {} | {worker} | {:.0} | {:.2} | {:.2} | {:.1} |",
                mode.label,
                r.rate,
                r.cpu,
                r.cpu * 1e6 / n as f64,
                r.rss_kib as f64 / 1024.0
            );
        }
    }
    println!();
    println!(
        "| mode | records/s ours/Apache | CPU ours/Apache | peak RSS ours/Apache |\n|---|---:|---:|---:|"
    );
    for (mode, apache, ours) in rows {
        let (Some(apache), Some(ours)) = (apache, ours) else {
            println!("| {} | - | - | - |", mode.label);
            continue;
        };
        println!(
            "| {} | {:.2} | {:.2} | {:.3} |",
            mode.label,
            ours.rate / apache.rate,
            ours.cpu / apache.cpu,
            ours.rss_kib as f64 / apache.rss_kib as f64
        );
    }
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let modes = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "alo,poll,interval,density-alo,density-eos".into());
    let on = |m: &str| modes.split(',').any(|x| x.trim() == m);
    println!(
        "side-by-side source benchmark: Apache Kafka Connect 4.4 vs connect-worker ({}), Kafka at {}",
        connect_tests::worker::worker_binary().display(),
        kafka::bootstrap_servers()
    );
    if MODES.iter().any(|m| on(m.key)) {
        println!("throughput: {n} records, batch.size {batch}, one task");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut rows = Vec::new();
    for mode in MODES.iter().filter(|m| on(m.key)) {
        let apache = rt.block_on(apache_run(mode, n, batch));
        print_run(mode, "Apache", n, apache.as_ref());
        let ours = rt.block_on(ours_run(mode, n, batch));
        print_run(mode, "ours", n, ours.as_ref());
        rows.push((mode, apache, ours));
    }
    if !rows.is_empty() {
        print_runs(&rows, n);
    }
    let density: Vec<&Mode> = DENSITY_MODES.iter().filter(|m| on(m.key)).collect();
    if density.is_empty() {
        return;
    }
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let tasks = env("DENSITY_TASKS", 100) as usize;
    let rate = env("DENSITY_RATE", 10);
    println!();
    println!(
        "density: {tasks} tasks of one connector at {rate} records/s each, one record per poll, \
         {DENSITY_PARTITIONS} partitions; CPU over {}s once all tasks run (+{}s warm-up)",
        DENSITY_WINDOW.as_secs(),
        DENSITY_WARMUP.as_secs()
    );
    let mut rows = Vec::new();
    for mode in density {
        let apache = rt.block_on(apache_density(mode, tasks, rate));
        print_density(mode, "Apache", tasks, &apache);
        let ours = rt.block_on(ours_density(mode, tasks, rate));
        print_density(mode, "ours", tasks, &ours);
        rows.push((mode, apache, ours));
    }
    println!();
    println!(
        "| mode | worker | tasks RUNNING | time to all RUNNING s | CPU s per {}s | threads | records/s | peak RSS MiB |\n|---|---|---:|---:|---:|---:|---:|---:|",
        DENSITY_WINDOW.as_secs()
    );
    for (mode, apache, ours) in &rows {
        for (worker, d) in [("Apache Connect 4.4", apache), ("connect-worker", ours)] {
            println!(
                "| {} | {worker} | {}/{tasks} | {} | {:.2} | {} | {:.0} | {:.1} |",
                mode.label,
                d.running,
                d.start_secs
                    .map_or_else(|| "-".to_owned(), |s| format!("{s:.1}")),
                d.cpu,
                d.threads,
                d.records as f64 / DENSITY_WINDOW.as_secs_f64(),
                d.rss_kib as f64 / 1024.0
            );
        }
    }
    println!();
    println!(
        "| mode | CPU ours/Apache | threads ours/Apache | peak RSS ours/Apache |\n|---|---:|---:|---:|"
    );
    for (mode, apache, ours) in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {:.3} |",
            mode.label,
            ours.cpu / apache.cpu,
            ours.threads as f64 / apache.threads as f64,
            ours.rss_kib as f64 / apache.rss_kib as f64
        );
    }
}
