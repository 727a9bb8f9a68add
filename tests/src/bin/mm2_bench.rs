//! MirrorMaker 2 throughput benchmark (prints figures; not a test).
//!
//! One topic of 12 partitions on the source cluster (`deploy/kafka.sh up --tv1`, started if
//! down) is filled with `records` records of `size` bytes by an rdkafka producer (its rate is
//! printed: the "producer" to keep up with), then copied to the test cluster by
//! `MirrorSourceConnector` with `tasks` tasks on one worker, in each mode:
//!
//! - `alo`: at-least-once (`exactly.once.source.support=disabled`);
//! - `eos`: `exactly.once.support=required`, `read_committed` source consumer,
//!   `transaction.boundary=interval` (200 ms).
//!
//! Figures per mode: records/s and MB/s from the moment every task runs to the last record on
//! the target (high watermarks polled every 100 ms; under exactly-once the committed count is
//! checked at the end), the worker's CPU seconds and records per CPU second, its peak RSS; the
//! CPU seconds of the two brokers (`deploy/kafka.sh`'s pid files) and of the whole machine
//! (`/proc/stat`, every process) over the same span, which show what else took the cores; under
//! exactly-once, the worker's transaction stats (per task: transactions, records per
//! transaction, commit time) from its log.
//!
//! Live modes, `alo-live` and `eos-live`, answer whether replication keeps up with a producer
//! that writes while it runs: the connector first runs on an empty topic, then the same
//! producer fills it at full speed while the tasks copy it. Printed: the producer's rate
//! (lower than alone: the producer, both brokers and the worker share the machine), the
//! greatest lag seen (source high watermarks minus the target's, sampled every 100 ms), and how
//! long after the producer's last acknowledged record the target had them all.
//! `MM2_BENCH_RATE` (records per second) paces the live runs' producer: the rate replication
//! sustains is the one at which the lag stays small.
//!
//! `MM2_BENCH_KEEP` (any value) keeps the topics, to inspect their batches (`kafka-dump-log`).
//!
//! `MM2_BENCH_EXTRA` (a JSON object) adds keys to the connector config, e.g.
//! `{"source.consumer.fetch.max.bytes": "10485760"}`.
//!
//! Run: `CONNECT_WORKER_BIN=target/release/connect-worker cargo run --release -p connect-tests
//! --bin mm2_bench -- [records] [size] [tasks] [modes]` (defaults 1000000 100 4 alo,eos; modes
//! from `alo`, `eos`, `alo-live`, `eos-live`).

use std::time::{Duration, Instant};

use connect_tests::bench::{cpu_seconds, delete_topics, peak_rss_kib};
use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually, running_tasks};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use serde_json::json;

const PARTITIONS: i32 = 12;

/// Starts (or finds running) the source cluster, under the lock the tests take, so a bench
/// started beside a test run does not race it inside `deploy/kafka.sh`.
fn source_cluster() -> String {
    kafka::kafka_sh_locked(&["up", "--tv1"])
}

/// Fills `topic` round-robin over its partitions, at `pace` records per second if given; the
/// producer's records per second and when its last record was acknowledged.
fn fill(
    bootstrap: &str,
    topic: &str,
    records: u64,
    size: usize,
    pace: Option<f64>,
) -> (f64, Instant) {
    let p: ThreadedProducer<_> = kafka::client_config_at(bootstrap)
        .set("linger.ms", "20")
        .set("batch.size", "1000000")
        .set("queue.buffering.max.messages", "1000000")
        .set("compression.type", "none")
        .create()
        .expect("producer");
    let value = vec![b'x'; size];
    let started = Instant::now();
    for i in 0..records {
        if let Some(rate) = pace.filter(|_| i % 1000 == 0) {
            let due = started + Duration::from_secs_f64(i as f64 / rate);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        let key = i.to_string();
        let mut record = BaseRecord::to(topic)
            .partition((i % PARTITIONS as u64) as i32)
            .key(&key)
            .payload(&value);
        loop {
            match p.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    std::thread::sleep(Duration::from_millis(1));
                    record = r;
                }
            }
        }
    }
    p.flush(Duration::from_secs(120)).expect("flush");
    (
        records as f64 / started.elapsed().as_secs_f64(),
        Instant::now(),
    )
}

/// `MM2_BENCH_RATE`: the records per second a live run's producer keeps to (all it can if
/// unset).
fn pace() -> Option<f64> {
    std::env::var("MM2_BENCH_RATE")
        .ok()
        .map(|r| r.parse().expect("MM2_BENCH_RATE is records per second"))
}

/// The pid of node 1 of a `deploy/kafka.sh` cluster (`cluster-n1`, `cluster-tv1`), if it runs.
fn broker_pid(cluster: &str) -> Option<i32> {
    let home = std::env::var("KAFKA_HOME_DIR").map_or_else(
        |_| connect_tests::bench::root().join(".local/kafka"),
        std::path::PathBuf::from,
    );
    std::fs::read_to_string(home.join(cluster).join("node-1/pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// CPU seconds every process of the machine used so far (`/proc/stat`: all but idle and
/// iowait, in USER_HZ = 100 ticks per second).
fn machine_busy_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    let total: f64 = ticks.iter().take(8).sum();
    let idle = ticks.get(3).copied().unwrap_or(0.0) + ticks.get(4).copied().unwrap_or(0.0);
    (total - idle) / 100.0
}

/// The worker's `exactly-once transaction stats` lines (logged per task at its stop and every
/// 30 s), shortened to their figures.
fn transaction_stats(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("exactly-once transaction stats"))
        .map(|l| {
            // From the task's name on (the span's fields come first).
            let from = l.find("task=mm2").unwrap_or(0);
            l[from..]
                .split_whitespace()
                .filter(|w| {
                    !w.starts_with("records_committed=") && !w.starts_with("transactions_aborted=")
                })
                .map(|w| w.replace('"', ""))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Sum of the high watermarks of `topic` on the target.
fn high_watermarks(consumer: &BaseConsumer, topic: &str) -> i64 {
    (0..PARTITIONS)
        .map(|p| {
            consumer
                .fetch_watermarks(topic, p, Duration::from_secs(10))
                .map_or(0, |(_, h)| h)
        })
        .sum()
}

async fn run(mode: &str, source: &str, topic: &str, records: u64, size: usize, tasks: usize) {
    let eos = mode.starts_with("eos");
    let live = mode.ends_with("-live");
    // A live run copies a topic of its own, empty when its tasks start.
    let topic = if live {
        let t = unique("mm2-bench-live");
        kafka::create_topics_at(source, &[&t], PARTITIONS, 1).await;
        t
    } else {
        topic.to_owned()
    };
    let topic = topic.as_str();
    let spec = ClusterSpec::new("mm2-bench").set(
        "exactly.once.source.support",
        if eos { "enabled" } else { "disabled" },
    );
    let w = spec.start_worker().await;
    let alias = unique("b").replace('-', "_");
    let remote = format!("{alias}.{topic}");
    let bytes = "org.apache.kafka.connect.converters.ByteArrayConverter";
    let mut config = json!({
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "tasks.max": tasks.to_string(),
        "source.cluster.alias": alias,
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": kafka::bootstrap_servers(),
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "key.converter": bytes,
        "value.converter": bytes,
        "header.converter": bytes,
        "source.consumer.max.poll.records": "2000",
    });
    if eos {
        let extra = json!({
            "exactly.once.support": "required",
            "source.consumer.isolation.level": "read_committed",
            "transaction.boundary": "interval",
            "transaction.boundary.interval.ms": "200",
        });
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
    }
    if let Ok(extra) = std::env::var("MM2_BENCH_EXTRA") {
        let extra: serde_json::Value =
            serde_json::from_str(&extra).expect("MM2_BENCH_EXTRA is a JSON object");
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().expect("a JSON object").clone());
    }
    create_connector(&w, "mm2-bench", config).await;
    eventually(Duration::from_secs(120), "tasks running", || {
        running_tasks(&w, "mm2-bench", tasks)
    })
    .await;
    let pid = w.pid().expect("worker pid");
    let brokers = [broker_pid("cluster-tv1"), broker_pid("cluster-n1")];
    let broker_cpu = || brokers.map(|p| p.map_or(0.0, cpu_seconds));
    let (brokers_before, machine_before) = (broker_cpu(), machine_busy_seconds());
    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    let producer = live.then(|| {
        let (s, t) = (source.to_owned(), topic.to_owned());
        std::thread::spawn(move || fill(&s, &t, records, size, pace()))
    });
    let (remote_t, target, source_t, topic_t) = (
        remote.clone(),
        kafka::bootstrap_servers(),
        source.to_owned(),
        topic.to_owned(),
    );
    let (elapsed, max_lag) = tokio::task::spawn_blocking(move || {
        let watch = |bootstrap: &str| -> BaseConsumer {
            kafka::client_config_at(bootstrap)
                .set("group.id", unique("mm2-bench-watch"))
                .create()
                .unwrap()
        };
        let (on_target, on_source) = (watch(&target), watch(&source_t));
        let mut max_lag = 0;
        loop {
            let copied = high_watermarks(&on_target, &remote_t);
            if copied >= records as i64 {
                return (started.elapsed(), max_lag);
            }
            if live {
                max_lag = max_lag.max(high_watermarks(&on_source, &topic_t) - copied);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .unwrap();
    if let Some(producer) = producer {
        let (rate, done) = producer.join().expect("producer");
        let behind = (started + elapsed).saturating_duration_since(done);
        println!(
            "{mode:>8}: producer {rate:.0} records/s while the tasks copied; greatest lag seen {max_lag} records; the target had every record {:.2} s after the producer's last",
            behind.as_secs_f64()
        );
    }
    let cpu = cpu_seconds(pid) - cpu_before;
    let machine = machine_busy_seconds() - machine_before;
    let brokers_after = broker_cpu();
    let rss = peak_rss_kib(pid);
    let secs = elapsed.as_secs_f64();
    println!(
        "{mode:>8}: {records} records ({:.0} MB) in {secs:.2} s: {:.0} records/s, {:.1} MB/s; worker {cpu:.2} CPU s ({:.0} records per CPU second), peak RSS {} MiB",
        (records as f64 * size as f64) / 1e6,
        records as f64 / secs,
        records as f64 * size as f64 / 1e6 / secs,
        records as f64 / cpu.max(0.001),
        rss / 1024
    );
    println!(
        "      same span: source broker {:.2} CPU s, target broker {:.2} CPU s, the whole machine {machine:.2} CPU s of {:.2} ({} cores)",
        brokers_after[0] - brokers_before[0],
        brokers_after[1] - brokers_before[1],
        secs * cores() as f64,
        cores()
    );
    if eos {
        // The high watermarks count transaction markers: check the committed records too.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let r = remote.clone();
        let n = tokio::task::spawn_blocking(move || {
            kafka::read_all(&[&r], Isolation::ReadCommitted, Duration::from_secs(600)).len()
        })
        .await
        .unwrap();
        println!("      read_committed on the target: {n} records");
    }
    // A graceful stop: each task logs its transaction stats as it stops.
    let mut w = w;
    w.terminate();
    for line in transaction_stats(&w.log_text()) {
        println!("      {line}");
    }
    drop(w);
    if std::env::var_os("MM2_BENCH_KEEP").is_some() {
        println!("      kept: {remote} on the target, {topic} on the source");
        return;
    }
    delete_topics(&[remote, format!("{}-offsets", spec.group_id)]).await;
    if live {
        delete_source_topic(source, topic).await;
    }
}

async fn delete_source_topic(source: &str, topic: &str) {
    let admin: rdkafka::admin::AdminClient<_> =
        kafka::client_config_at(source).create().expect("admin");
    let _ = admin
        .delete_topics(&[topic], &rdkafka::admin::AdminOptions::new())
        .await;
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let records: u64 = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let size: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let tasks: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(4);
    let modes = args.get(3).cloned().unwrap_or_else(|| "alo,eos".to_owned());
    let bin = connect_tests::worker::worker_binary();
    println!(
        "MirrorMaker 2 benchmark: worker {}{}, one topic of {PARTITIONS} partitions, {records} records of {size} bytes, {tasks} task(s)",
        bin.display(),
        if bin.to_string_lossy().contains("release") {
            ""
        } else {
            " (NOT a release build: set CONNECT_WORKER_BIN=target/release/connect-worker)"
        }
    );
    let source = source_cluster();
    let topic = unique("mm2-bench");
    kafka::create_topics_at(&source, &[&topic], PARTITIONS, 1).await;
    let (s, t) = (source.clone(), topic.clone());
    let source_broker = broker_pid("cluster-tv1");
    let broker_before = source_broker.map_or(0.0, cpu_seconds);
    // This process is the producer (its client's threads and the loop that feeds it).
    let me = i32::try_from(std::process::id()).expect("pid");
    let producer_before = cpu_seconds(me);
    let (rate, _) = tokio::task::spawn_blocking(move || fill(&s, &t, records, size, None))
        .await
        .unwrap();
    println!(
        "producer alone: {rate:.0} records/s, {:.1} MB/s into the source cluster; producer {:.2} CPU s, source broker {:.2} CPU s",
        rate * size as f64 / 1e6,
        cpu_seconds(me) - producer_before,
        source_broker.map_or(0.0, cpu_seconds) - broker_before
    );
    for mode in modes.split(',') {
        run(mode.trim(), &source, &topic, records, size, tasks).await;
    }
    // The source topic goes too (it lives on the --tv1 cluster).
    if std::env::var_os("MM2_BENCH_KEEP").is_none() {
        delete_source_topic(&source, &topic).await;
    }
}
