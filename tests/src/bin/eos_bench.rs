//! Exactly-once source throughput benchmark (prints figures; not a test).
//!
//! One verifiable source task, unthrottled, `batch.size` records per poll, against the local
//! Kafka (`KAFKA_BOOTSTRAP_SERVERS`, default `deploy/kafka.sh`'s). For each mode it measures
//! records per second from the first to the last record's broker timestamp (so worker start-up
//! and rebalances are excluded):
//!
//! - `at-least-once`: `exactly.once.source.support=disabled` (idempotent producer, periodic offsets)
//! - `eos poll` / `eos interval` / `eos connector`: the exactly-once runner per boundary mode
//!   (`BENCH_BOUNDARIES`, a comma list, runs only those)
//! - `bare rdkafka txn`: a transactional rdkafka producer doing the same batches (one
//!   transaction per batch with one offset record), i.e. the floor for `eos poll`; with
//!   `BENCH_BREAKDOWN=1` it also prints the round trips per transaction and their mean `rtt`
//!   (librdkafka's protocol debug lines), and `BENCH_LINGER_MS` sets its `linger.ms`
//! - `alo + 3 SMTs`: at-least-once with a three-transform chain (`HoistField$Value` of the
//!   int64 value into a map, `InsertField$Value`, `RegexRouter` to the same topic), to price the
//!   transformation chain; with `BENCH_CHAIN=neutral` the chain is `HoistField$Value`,
//!   `InsertField$Value` and `ExtractField$Value` of the hoisted field: the same work on the
//!   struct, but records the size of the input's (the default chain's records are ~5x larger,
//!   which librdkafka and the broker pay for too); with `BENCH_RECORD=complete` every run sends
//!   the verifiable source's complete records (a struct of name, task, topic, time_ms and seqno,
//!   ~100 bytes of JSON) and the chain is `InsertField$Value` (a static field),
//!   `ReplaceField$Value` (a rename) and `RegexRouter`; both together (`BENCH_RECORD=complete
//!   BENCH_CHAIN=neutral`) make the complete records' chain size-neutral: `ReplaceField` also
//!   excludes `name` and renames `time_ms` to `ts_ms`, so the output is the input's size
//!
//! `BENCH_PIN=1` runs the broker on CPU 0 and each worker on CPU 1 (`taskset`; the broker gets
//! every CPU back at the end), so neither takes the other's core: on the 2-core machine the
//! per-record figures then hold steady from run to run, where sharing both cores they spread
//! by ±10 %.
//!
//! Each worker run also prints the worker's CPU seconds for its records (`/proc/<pid>/stat`),
//! and the topic is deleted after it. The reader starts once the task has written everything.
//!
//! `fence` (alone): the zombie-fencing round of a connector of 16 exactly-once tasks, from the
//! worker's log (`fence_ms`).
//!
//! Run: `cargo run --release -p connect-tests --bin eos_bench -- [records] [batch] [modes]
//! [rounds]`, `modes` a comma list of `bare,native,alo,eos,smt` (default: all but `native`;
//! `native` is the bare loop on the worker's own transactional producer, `cluster::producer`); with `rounds` > 1 the
//! at-least-once and SMT runs alternate that many times (every other round the SMT run first)
//! and the median of the rounds' chain costs is printed, and the cost between the best run of
//! each kind (one round's ratio is noisy on a shared machine)
//! (the worker binary is built in debug unless CONNECT_WORKER_BIN points at a release build).

use std::time::{Duration, Instant};

use connect_tests::kafka::{self, Isolation, client_config};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, running_tasks};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, Producer, ThreadedProducer};
use serde_json::json;

/// First and last broker timestamps of `n` committed records of `topic`.
fn span(topic: &str, n: usize) -> Duration {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("bench"))
        .set("auto.offset.reset", "earliest")
        .set("isolation.level", "read_committed")
        .create()
        .unwrap();
    // Read only once the task has written everything (the high watermark holds at or above `n`
    // for a second): a reader running alongside would take CPU from the worker and the broker on
    // a small machine, and take more of it for larger records, skewing the comparison.
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut settled = (0i64, Instant::now());
    while Instant::now() < deadline {
        let (_, high) = consumer
            .fetch_watermarks(topic, 0, Duration::from_secs(10))
            .unwrap_or((0, 0));
        if high != settled.0 {
            settled = (high, Instant::now());
        } else if high >= n as i64 && settled.1.elapsed() >= Duration::from_secs(1) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    consumer.subscribe(&[topic]).unwrap();
    let (mut first, mut last, mut seen) = (i64::MAX, i64::MIN, 0usize);
    while seen < n && Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            if let Some(ts) = m.timestamp().to_millis() {
                first = first.min(ts);
                last = last.max(ts);
            }
            seen += 1;
        }
    }
    assert_eq!(seen, n, "read all {n} records of {topic}");
    Duration::from_millis((last - first).max(1) as u64)
}

async fn worker_run(
    label: &str,
    mode: &str,
    boundary: Option<&str>,
    n: usize,
    batch: usize,
    transforms: bool,
) -> Run {
    let spec = ClusterSpec::new("bench")
        .set("exactly.once.source.support", mode)
        .set("offset.flush.interval.ms", "1000");
    let w: WorkerProc = spec.start_worker().await;
    if pinned() {
        pin(w.pid().expect("worker pid"), "1");
    }
    let topic = unique("bench-data");
    kafka::create_topics(&[&topic], 1).await;
    let mut config = json!({
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": "1", "topic": topic, "throughput": "-1",
        "batch.size": batch.to_string(), "max.records": n.to_string(),
    });
    // `BENCH_RECORD=complete`: the verifiable source's complete records (a struct of five fields).
    let complete = std::env::var("BENCH_RECORD").as_deref() == Ok("complete");
    if complete {
        config["complete.record.data"] = json!("true");
    }
    // `BENCH_CHAIN=none`: the "SMT" runs have no chain (an A/A run: the noise floor).
    if transforms && std::env::var("BENCH_CHAIN").as_deref() != Ok("none") {
        let neutral = std::env::var("BENCH_CHAIN").as_deref() == Ok("neutral");
        let extra = if complete && neutral {
            // The same three transforms, with records of the input's size: `name` ("bench",
            // the connector's name) dropped, `source` ("bench") added, `time_ms` renamed to
            // `ts_ms`: -15 + 17 - 2 bytes of JSON.
            json!({
                "transforms": "ins,rename,route",
                "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.ins.static.field": "source", "transforms.ins.static.value": "bench",
                "transforms.rename.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
                "transforms.rename.exclude": "name",
                "transforms.rename.renames": "time_ms:ts_ms",
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1",
            })
        } else if complete {
            json!({
                "transforms": "ins,rename,route",
                "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.ins.static.field": "source", "transforms.ins.static.value": "bench",
                "transforms.rename.type": "org.apache.kafka.connect.transforms.ReplaceField$Value",
                "transforms.rename.renames": "time_ms:timestamp",
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1",
            })
        } else if neutral {
            json!({
                "transforms": "hoist,ins,ext",
                "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                "transforms.hoist.field": "seqno",
                "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.ins.static.field": "source", "transforms.ins.static.value": "bench",
                "transforms.ext.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
                "transforms.ext.field": "seqno",
            })
        } else {
            json!({
                "transforms": "hoist,ins,route",
                "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                "transforms.hoist.field": "seqno",
                "transforms.ins.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                "transforms.ins.static.field": "source", "transforms.ins.static.value": "bench",
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1",
            })
        };
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
    }
    if let Some(b) = boundary {
        config["transaction.boundary"] = json!(b);
        config["transaction.boundary.interval.ms"] = json!("100");
        config["transaction.records"] = json!(batch.to_string());
    }
    let cpu_before = cpu_seconds(w.pid());
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "bench", "config": config})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let t = topic.clone();
    let took = tokio::task::spawn_blocking(move || span(&t, n))
        .await
        .unwrap();
    let cpu = cpu_seconds(w.pid()) - cpu_before;
    let rate = n as f64 / took.as_secs_f64();
    println!(
        "{label:<18} {n:>8} records in {:>7.2}s  {rate:>10.0} records/s  worker CPU {:>5.2}s ({:.2} µs/record)",
        took.as_secs_f64(),
        cpu,
        cpu * 1e6 / n as f64
    );
    drop(w);
    delete_topic(&topic).await;
    Run { rate, cpu }
}

/// What one worker run measured: records per second, and the worker's CPU seconds for them.
#[derive(Clone, Copy, Default)]
struct Run {
    rate: f64,
    cpu: f64,
}

impl Run {
    /// The higher rate and the lesser CPU of two runs of one kind (`Run::default()` is none).
    fn best(self, other: Run) -> Run {
        if self.rate == 0.0 {
            return other;
        }
        Run {
            rate: self.rate.max(other.rate),
            cpu: self.cpu.min(other.cpu),
        }
    }
}

/// User plus system CPU seconds of a process so far; 0 without one.
fn cpu_seconds(pid: Option<i32>) -> f64 {
    pid.map_or(0.0, connect_tests::bench::cpu_seconds)
}

/// `BENCH_PIN=1`: the broker runs on CPU 0 and each worker on CPU 1, so that neither takes the
/// other's core (on the 2-core machine the per-record figures then hold steady between runs).
fn pinned() -> bool {
    std::env::var("BENCH_PIN").is_ok_and(|v| v == "1")
}

/// Sets the CPU affinity of every thread of `pid` (`taskset -apc`); threads started later
/// inherit it.
fn pin(pid: i32, cpus: &str) {
    let status = std::process::Command::new("taskset")
        .args(["-apc", cpus, &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("taskset (util-linux)");
    assert!(status.success(), "taskset -apc {cpus} {pid} failed");
}

/// The local broker's processes (`deploy/kafka.sh`'s JVMs), pinned to CPU 0 while it lives and
/// given every CPU again when dropped.
struct BrokerPin(Vec<i32>);

impl BrokerPin {
    fn new() -> Self {
        let out = std::process::Command::new("pgrep")
            .args(["-f", "kafka.Kafka "])
            .output()
            .expect("pgrep");
        let pids: Vec<i32> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        assert!(
            !pids.is_empty(),
            "BENCH_PIN=1: no broker process (kafka.Kafka) found"
        );
        for &p in &pids {
            pin(p, "0");
        }
        Self(pids)
    }
}

impl Drop for BrokerPin {
    fn drop(&mut self) {
        let all = format!(
            "0-{}",
            std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
        );
        for &p in &self.0 {
            pin(p, &all);
        }
    }
}

/// Deletes a benchmark topic, so that runs do not pile data on the broker's disk.
async fn delete_topic(topic: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = client_config().create().unwrap();
    let _ = admin.delete_topics(&[topic], &AdminOptions::new()).await;
}

fn bare_transactional(n: usize, batch: usize) -> f64 {
    let topic = unique("bench-bare");
    let offsets = unique("bench-bare-offsets");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(kafka::create_topics(&[&topic, &offsets], 1));
    let mut config = client_config();
    config
        .set("transactional.id", unique("bench-txn"))
        .set("enable.idempotence", "true")
        .set("acks", "all");
    if let Ok(ms) = std::env::var("BENCH_RETRY_BACKOFF_MS") {
        config.set("retry.backoff.ms", ms);
    }
    if let Ok(ms) = std::env::var("BENCH_LINGER_MS") {
        config.set("linger.ms", ms);
    }
    let breakdown = std::env::var_os("BENCH_BREAKDOWN").is_some_and(|v| !v.is_empty());
    if breakdown {
        config
            .set("debug", "protocol")
            .set_log_level(rdkafka::config::RDKafkaLogLevel::Debug);
    }
    let context = RoundTrips::default();
    let p: ThreadedProducer<RoundTrips> = config.create_with_context(context).unwrap();
    p.init_transactions(Duration::from_secs(30)).unwrap();
    p.context().reset();
    let start = Instant::now();
    let mut seqno = 0usize;
    while seqno < n {
        p.begin_transaction().unwrap();
        for _ in 0..batch.min(n - seqno) {
            let v = seqno.to_string();
            while p
                .send(BaseRecord::<str, str>::to(&topic).key("0").payload(&v))
                .is_err()
            {
                p.poll(Duration::from_millis(1));
            }
            seqno += 1;
        }
        let off = format!("{{\"seqno\":{}}}", seqno - 1);
        p.send(
            BaseRecord::<str, str>::to(&offsets)
                .key(r#"["bench",{"id":0}]"#)
                .payload(&off),
        )
        .map_err(|(e, _)| e)
        .unwrap();
        // As the worker does: drain the queue first, or rdkafka's flush inside
        // commit_transaction waits in 100 ms polls (see runtime/exactly_once.rs).
        while p.in_flight_count() > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        p.commit_transaction(Duration::from_secs(30)).unwrap();
    }
    let took = start.elapsed();
    let rate = n as f64 / took.as_secs_f64();
    println!(
        "{:<18} {n:>8} records in {:>7.2}s  {rate:>10.0} records/s",
        "bare rdkafka txn",
        took.as_secs_f64()
    );
    if breakdown {
        let transactions = n.div_ceil(batch) as f64;
        println!(
            "  {:.2} ms per transaction; round trips per transaction (librdkafka's rtt):",
            took.as_secs_f64() * 1e3 / transactions
        );
        let mut rows: Vec<(String, (u64, f64))> = p.context().seen().into_iter().collect();
        rows.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
        for (api, (count, total_ms)) in rows {
            println!(
                "  {api:<28} {:>6.2} per transaction, mean rtt {:>6.2} ms, {:>6.2} ms per transaction",
                count as f64 / transactions,
                total_ms / count as f64,
                total_ms / transactions
            );
        }
    }
    let _ = kafka::read_all(&[&topic], Isolation::ReadCommitted, Duration::from_secs(60));
    rate
}

/// As [`bare_transactional`], with the worker's own transactional producer
/// (`cluster::producer`, transactions v2 where the cluster has it).
fn bare_native(n: usize, batch: usize) -> f64 {
    use connect_worker::cluster::client::Security;
    use connect_worker::cluster::producer::{OutRecord, ProducerSettings, TransactionalProducer};
    let topic = unique("bench-native");
    let offsets = unique("bench-native-offsets");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(kafka::create_topics(&[&topic, &offsets], 1));
    let txn_id = unique("bench-native-txn");
    let settings = ProducerSettings {
        bootstrap: vec![kafka::bootstrap_servers()],
        client_id: "bench-native".into(),
        transactional_id: txn_id.clone(),
        security: Security::new(&Default::default()).unwrap(),
        request_timeout: Duration::from_secs(30),
        delivery_timeout: Duration::from_secs(120),
        transaction_timeout: Duration::from_secs(60),
        batch_bytes: 1_000_000,
        compression: kafka_protocol::records::Compression::None,
        retry_backoff: Duration::from_millis(100),
    };
    let (took, v2) = rt.block_on(async {
        let mut p = TransactionalProducer::init(settings).await.unwrap();
        let (mut flush_time, mut commit_time) = (Duration::ZERO, Duration::ZERO);
        let mut first_time = Duration::ZERO;
        let (mut polls, mut wait_time) = (0u64, Duration::ZERO);
        let describer = std::env::var_os("PRODUCER_DESCRIBE").map(|_| {
            connect_worker::cluster::transactions::TransactionsClient::new(
                &kafka::bootstrap_servers(),
                "bench-describe",
                Duration::from_secs(10),
                &Default::default(),
            )
            .unwrap()
        });
        let start = Instant::now();
        let mut seqno = 0usize;
        while seqno < n {
            p.begin().unwrap();
            for i in 0..batch.min(n - seqno) {
                if i == 1 && std::env::var_os("PRODUCER_SPLIT").is_some() {
                    let t = Instant::now();
                    p.flush().await.unwrap();
                    first_time += t.elapsed();
                }
                p.send(OutRecord {
                    topic: topic.clone(),
                    partition: None,
                    key: Some(b"0".to_vec()),
                    value: Some(seqno.to_string().into_bytes()),
                    headers: Vec::new(),
                    timestamp: None,
                })
                .await
                .unwrap();
                seqno += 1;
            }
            p.send(OutRecord {
                topic: offsets.clone(),
                partition: None,
                key: Some(br#"["bench",{"id":0}]"#.to_vec()),
                value: Some(format!("{{\"seqno\":{}}}", seqno - 1).into_bytes()),
                headers: Vec::new(),
                timestamp: None,
            })
            .await
            .unwrap();
            let t = Instant::now();
            p.flush().await.unwrap();
            flush_time += t.elapsed();
            let t = Instant::now();
            p.commit().await.unwrap();
            commit_time += t.elapsed();
            if let Some(d) = &describer {
                let t = Instant::now();
                loop {
                    polls += 1;
                    let st = d.describe(&txn_id).await.unwrap().unwrap().state;
                    if st != "PrepareCommit" {
                        break;
                    }
                }
                wait_time += t.elapsed();
            }
            if let Some(ms) = std::env::var("PRODUCER_PAUSE_US")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                tokio::time::sleep(Duration::from_micros(ms)).await;
            }
        }
        let per = |d: Duration| d.as_secs_f64() * 1e3 / n.div_ceil(batch) as f64;
        if describer.is_some() {
            println!(
                "  describe polls {:.2}, wait {:.2} ms per transaction",
                polls as f64 / n.div_ceil(batch) as f64,
                per(wait_time)
            );
        }
        println!(
            "  native: first record {:.2} ms, produce {:.2} ms, EndTxn {:.2} ms per transaction",
            per(first_time),
            per(flush_time),
            per(commit_time)
        );
        (start.elapsed(), p.transactions_v2())
    });
    let rate = n as f64 / took.as_secs_f64();
    println!(
        "{:<18} {n:>8} records in {:>7.2}s  {rate:>10.0} records/s ({:.2} ms per transaction, transactions {})",
        "bare native txn",
        took.as_secs_f64(),
        took.as_secs_f64() * 1e3 / n.div_ceil(batch) as f64,
        if v2 { "v2" } else { "v1" }
    );
    let got = kafka::read_all(&[&topic], Isolation::ReadCommitted, Duration::from_secs(60));
    assert_eq!(
        got.len(),
        n,
        "read_committed count of the native producer's records"
    );
    rate
}

/// Counts librdkafka's `Received <Api>Response (..., rtt N.NNms)` protocol debug lines (with
/// `BENCH_BREAKDOWN` set): where a transaction's time goes.
#[derive(Default)]
struct RoundTrips(std::sync::Mutex<std::collections::HashMap<String, (u64, f64)>>);

impl RoundTrips {
    fn reset(&self) {
        self.0.lock().unwrap().clear();
    }
    fn seen(&self) -> std::collections::HashMap<String, (u64, f64)> {
        self.0.lock().unwrap().clone()
    }
}

impl rdkafka::ClientContext for RoundTrips {
    fn log(&self, _level: rdkafka::config::RDKafkaLogLevel, _fac: &str, log_message: &str) {
        let Some(rest) = log_message.split("Received ").nth(1) else {
            return;
        };
        let Some((api, tail)) = rest.split_once(' ') else {
            return;
        };
        let Some(rtt) = tail
            .split("rtt ")
            .nth(1)
            .and_then(|r| r.split("ms").next())
            .and_then(|r| r.trim().parse::<f64>().ok())
        else {
            return;
        };
        let mut seen = self.0.lock().unwrap();
        let e = seen.entry(api.to_owned()).or_default();
        e.0 += 1;
        e.1 += rtt;
    }
}

impl rdkafka::producer::ProducerContext for RoundTrips {
    type DeliveryOpaque = ();
    fn delivery(&self, _: &rdkafka::producer::DeliveryResult<'_>, _: Self::DeliveryOpaque) {}
}

#[allow(clippy::print_stdout)]
fn main() {
    // RUST_LOG=connect_worker=debug: the native producer's retries and their reasons.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let modes = args
        .get(3)
        .cloned()
        .unwrap_or_else(|| "bare,alo,eos,smt".into());
    let on = |m: &str| modes.split(',').any(|x| x.trim() == m);
    println!(
        "exactly-once source benchmark: {n} records, batch.size {batch}, one task, Kafka at {}",
        kafka::bootstrap_servers()
    );
    let _broker_pin = pinned().then(|| {
        println!("BENCH_PIN=1: the broker on CPU 0, each worker on CPU 1");
        BrokerPin::new()
    });
    let bare = on("bare").then(|| bare_transactional(n, batch));
    let native = on("native").then(|| bare_native(n, batch));
    if let (Some(bare), Some(native)) = (bare, native) {
        println!("bare native txn = {:.2}x bare rdkafka txn", native / bare);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    if on("fence") {
        rt.block_on(fence_run(16));
        return;
    }
    let rounds: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let (mut costs, mut cpu_costs) = (Vec::new(), Vec::new());
    let (mut alo, mut smt) = (Run::default(), None);
    // The best run of each kind: the highest rate, the least CPU (interference from the shared
    // machine only ever slows a run down).
    let (mut best_alo, mut best_smt) = (Run::default(), Run::default());
    let alo_run = || {
        rt.block_on(worker_run(
            "at-least-once",
            "disabled",
            None,
            n,
            batch,
            false,
        ))
    };
    let smt_run = || {
        on("smt").then(|| rt.block_on(worker_run("alo + 3 SMTs", "disabled", None, n, batch, true)))
    };
    for round in 0..rounds {
        // Every other round runs the chain first, so that a run's place in its round (after
        // which run, while the broker deletes which topic) falls on both kinds alike.
        if round % 2 == 1 && on("smt") {
            smt = smt_run();
            alo = alo_run();
        } else {
            alo = alo_run();
            smt = smt_run();
        }
        best_alo = best_alo.best(alo);
        if let Some(smt) = smt {
            best_smt = best_smt.best(smt);
            costs.push((1.0 - smt.rate / alo.rate) * 100.0);
            cpu_costs.push((1.0 - alo.cpu / smt.cpu) * 100.0);
        }
    }
    let mut rows = Vec::new();
    if on("eos") {
        // `BENCH_BOUNDARIES=interval` (a comma list): only those boundaries.
        let boundaries =
            std::env::var("BENCH_BOUNDARIES").unwrap_or_else(|_| "poll,interval,connector".into());
        for b in ["poll", "interval", "connector"]
            .into_iter()
            .filter(|b| boundaries.split(',').any(|x| x.trim() == *b))
        {
            rows.push((
                b,
                rt.block_on(worker_run(
                    &format!("eos {b}"),
                    "enabled",
                    Some(b),
                    n,
                    batch,
                    false,
                ))
                .rate,
            ));
        }
    }
    println!();
    if let Some(smt) = smt {
        println!(
            "alo + 3 SMTs = {:.2}x at-least-once (the chain costs {:.1}% of throughput, {:.1}% of the worker's CPU)",
            smt.rate / alo.rate,
            (1.0 - smt.rate / alo.rate) * 100.0,
            (1.0 - alo.cpu / smt.cpu) * 100.0
        );
    }
    if costs.len() > 1 {
        println!(
            "the chain's cost over {} rounds: throughput {}; worker CPU {}",
            costs.len(),
            median_of(&mut costs),
            median_of(&mut cpu_costs)
        );
        println!(
            "best of {} rounds: at-least-once {:.0} records/s ({:.2} µs/record of worker CPU), with the chain {:.0} records/s ({:.2} µs/record): the chain costs {:.1}% of throughput, {:.1}% of the worker's CPU",
            costs.len(),
            best_alo.rate,
            best_alo.cpu * 1e6 / n as f64,
            best_smt.rate,
            best_smt.cpu * 1e6 / n as f64,
            (1.0 - best_smt.rate / best_alo.rate) * 100.0,
            (1.0 - best_alo.cpu / best_smt.cpu) * 100.0
        );
    }
    for (b, r) in rows {
        match bare {
            Some(bare) => println!(
                "eos {b:<10} = {:.2}x at-least-once, {:.2}x bare rdkafka transactions",
                r / alo.rate,
                r / bare
            ),
            None => println!("eos {b:<10} = {:.2}x at-least-once", r / alo.rate),
        }
    }
}

/// Zombie fencing of a connector of `tasks` exactly-once tasks: the connector runs, its config
/// changes (new task configs, so the leader fences the previous generation's transactional ids
/// before the new tasks start), and the worker's log gives the fencing round's duration.
async fn fence_run(tasks: usize) {
    let spec = ClusterSpec::new("bench-fence").set("exactly.once.source.support", "enabled");
    let w: WorkerProc = spec.start_worker().await;
    let topic = unique("bench-fence");
    kafka::create_topics(&[&topic], 1).await;
    let config = |throughput: &str| {
        json!({
            "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "tasks.max": tasks.to_string(), "topic": topic, "throughput": throughput,
        })
    };
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "fence", "config": config("10")})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    eventually(Duration::from_secs(120), "all tasks running", || {
        running_tasks(&w, "fence", tasks)
    })
    .await;
    let (status, body) = w
        .send("PUT", "/connectors/fence/config", Some(config("20")))
        .await;
    assert!(status == 200 || status == 201, "{status} {body}");
    let line = eventually(Duration::from_secs(120), "the fencing round", || async {
        w.log_text()
            .lines()
            .find(|l| l.contains("fenced the previous generation's transactional ids"))
            .map(str::to_owned)
    })
    .await;
    let ms = line
        .split_whitespace()
        .find_map(|f| f.strip_prefix("fence_ms="))
        .unwrap_or("?");
    println!(
        "zombie fencing of a connector of {tasks} exactly-once tasks: {ms} ms ({tasks} transactional ids)"
    );
    delete_topic(&topic).await;
}

/// "median M% (sorted: a, b, ...)" of per-round percentages.
fn median_of(values: &mut [f64]) -> String {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    let rounded: Vec<String> = values.iter().map(|c| format!("{c:.1}")).collect();
    format!("median {median:.1}% (sorted: {})", rounded.join(", "))
}
