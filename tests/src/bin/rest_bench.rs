//! REST under concurrent config updates (issue 42): Apache Kafka Connect 4.4 and this worker,
//! one after the other against the same broker, the same client load (prints figures; not a
//! test).
//!
//! Each worker runs alone with 10 verifiable source connectors of 2 tasks each (10 records/s
//! per task into one topic). Then `CLIENTS` (default 32) concurrent clients send requests for
//! `SECS` seconds (default 20) in two mixes:
//!
//! - `gets`: `GET /connectors?expand=status` and `GET /connectors/{c}/status`, alternately;
//! - `puts`: the same, but every tenth request of a client is a `PUT /connectors/{c}/config`
//!   of that connector's **unchanged** config (as a GitOps controller re-applies it);
//! - `changes`: the same with PUTs that **change** the config (`throughput` alternates
//!   between 10 and 11 records/s), so every PUT is written and restarts the connector and its
//!   tasks, on both workers.
//!
//! Before the measured mixes, each worker gets 10 s of the `puts` mix unmeasured (the JVM's
//! JIT compiles its hot paths; connections are opened). Per worker and mix it prints
//! requests/s, p50 and p99 of all requests and of the PUTs alone, requests that did not answer
//! 2xx, and the worker process's CPU seconds during the mix (user + system,
//! `/proc/<pid>/stat`); then the ratios ours / Apache. Apache's worker is
//! tests/apache/apache-connect.sh's (its JVM is measured) running the project's stand-in
//! `connectrs.bench.VerifiableSourceConnector`; ours the binary of `CONNECT_WORKER_BIN` (point it
//! at a release build).
//!
//! Run (serialized with the machine's other benchmarks):
//! `flock /tmp/bench.lock cargo run --release -p connect-tests --bin rest_bench -- [secs]
//! [workers]` with `CONNECT_WORKER_BIN=target/release/connect-worker`; defaults 20 and
//! `apache,ours`. `CLIENTS` sets the number of clients.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use connect_tests::bench::{apache_start, apache_stop, cpu_seconds, delete_topics};
use connect_tests::kafka;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc};
use serde_json::{Value, json};

const CONNECTORS: usize = 10;
const TASKS: usize = 2;
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// Seconds of unmeasured load (the `puts` mix) before the measured mixes.
const WARMUP_SECS: u64 = 10;

/// What one mix measured.
#[derive(Default)]
struct Mix {
    requests: usize,
    failed: usize,
    secs: f64,
    cpu: f64,
    all: Vec<Duration>,
    puts: Vec<Duration>,
}

impl Mix {
    fn rate(&self) -> f64 {
        self.requests as f64 / self.secs
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// The connectors' names and their stored configs, as the worker answers `GET .../config`.
async fn setup(
    client: &reqwest::Client,
    url: &str,
    class: &str,
    topic: &str,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for i in 0..CONNECTORS {
        let name = format!("rest-bench-{i}");
        let config = json!({
            "connector.class": class, "tasks.max": TASKS.to_string(), "topic": topic,
            "throughput": "10", "batch.size": "1",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false",
        });
        let resp = client
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
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let body: Value = client
            .get(format!("{url}/connectors?expand=status"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap_or_default();
        let running = body
            .as_object()
            .map(|m| {
                m.values()
                    .flat_map(|c| c["status"]["tasks"].as_array().cloned().unwrap_or_default())
                    .filter(|t| t["state"] == "RUNNING")
                    .count()
            })
            .unwrap_or(0);
        if running == CONNECTORS * TASKS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {running} tasks RUNNING after {START_TIMEOUT:?}: {body}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for i in 0..CONNECTORS {
        let name = format!("rest-bench-{i}");
        let config: Value = client
            .get(format!("{url}/connectors/{name}/config"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        out.push((name, config));
    }
    out
}

/// The requests of a mix besides the GETs.
#[derive(Clone, Copy, PartialEq)]
enum Puts {
    None,
    Unchanged,
    Changing,
}

/// `clients` clients for `secs`; every tenth request a PUT unless `Puts::None`.
async fn mix(
    url: &str,
    pid: i32,
    connectors: &Arc<Vec<(String, Value)>>,
    clients: usize,
    secs: u64,
    puts: Puts,
) -> Mix {
    let stop = Arc::new(AtomicBool::new(false));
    let cpu_before = cpu_seconds(pid);
    let started = Instant::now();
    let mut handles = Vec::new();
    for c in 0..clients {
        let (url, connectors, stop) = (url.to_owned(), connectors.clone(), stop.clone());
        handles.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut m = Mix::default();
            let mut n = c; // clients start at different points of the cycle
            while !stop.load(Ordering::Relaxed) {
                let (name, config) = &connectors[n % connectors.len()];
                let t = Instant::now();
                let is_put = puts != Puts::None && n % 10 == 0;
                let req = if is_put {
                    let mut config = config.clone();
                    if puts == Puts::Changing {
                        config["throughput"] = json!(if (n / 10) % 2 == 0 { "11" } else { "10" });
                    }
                    client
                        .put(format!("{url}/connectors/{name}/config"))
                        .json(&config)
                } else if n % 2 == 0 {
                    client.get(format!("{url}/connectors?expand=status"))
                } else {
                    client.get(format!("{url}/connectors/{name}/status"))
                };
                let ok = match req.send().await {
                    Ok(r) => {
                        let ok = r.status().is_success();
                        let _ = r.bytes().await;
                        ok
                    }
                    Err(_) => false,
                };
                let d = t.elapsed();
                m.requests += 1;
                m.failed += usize::from(!ok);
                m.all.push(d);
                if is_put {
                    m.puts.push(d);
                }
                n += 1;
            }
            m
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut total = Mix::default();
    for h in handles {
        let m = h.await.unwrap();
        total.requests += m.requests;
        total.failed += m.failed;
        total.all.extend(m.all);
        total.puts.extend(m.puts);
    }
    total.secs = started.elapsed().as_secs_f64();
    total.cpu = cpu_seconds(pid) - cpu_before;
    total.all.sort();
    total.puts.sort();
    total
}

/// The three mixes, in the order of [`LABELS`].
async fn run_mixes(
    url: &str,
    pid: i32,
    connectors: Vec<(String, Value)>,
    clients: usize,
    secs: u64,
) -> Vec<Mix> {
    let connectors = Arc::new(connectors);
    // Unmeasured: the JVM compiles its hot paths, both workers' connections are opened.
    let _ = mix(url, pid, &connectors, clients, WARMUP_SECS, Puts::Unchanged).await;
    let mut out = Vec::new();
    for puts in [Puts::None, Puts::Unchanged, Puts::Changing] {
        out.push(mix(url, pid, &connectors, clients, secs, puts).await);
    }
    out
}

const LABELS: [&str; 3] = ["GETs only", "10 % PUTs", "10 % changes"];

async fn apache(clients: usize, secs: u64) -> Vec<Mix> {
    let worker = apache_start("disabled", "");
    let topic = unique("rest-bench-apache");
    kafka::create_topics(&[&topic], 1).await;
    let client = reqwest::Client::new();
    let connectors = setup(
        &client,
        &worker.url,
        "connectrs.bench.VerifiableSourceConnector",
        &topic,
    )
    .await;
    let (url, pid) = (worker.url.clone(), worker.pid);
    let out = run_mixes(&url, pid, connectors, clients, secs).await;
    apache_stop(worker, &[topic]).await;
    out
}

async fn ours(clients: usize, secs: u64) -> Vec<Mix> {
    let spec = ClusterSpec::new("rest-bench");
    let w: WorkerProc = spec.start_worker().await;
    let pid = w.pid().expect("worker pid");
    let topic = unique("rest-bench-ours");
    kafka::create_topics(&[&topic], 1).await;
    let client = reqwest::Client::new();
    let url = w.url("");
    let url = url.trim_end_matches('/').to_owned();
    let connectors = setup(
        &client,
        &url,
        "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        &topic,
    )
    .await;
    let out = run_mixes(&url, pid, connectors, clients, secs).await;
    drop(w);
    let g = &spec.group_id;
    delete_topics(&[
        topic,
        format!("{g}-configs"),
        format!("{g}-offsets"),
        format!("{g}-status"),
    ])
    .await;
    out
}

#[allow(clippy::print_stdout)]
fn print_mix(worker: &str, label: &str, m: &Mix) {
    println!(
        "{worker:<7} {label:<14} {:>9.0} req/s  p50 {:>7.1} ms  p99 {:>7.1} ms  PUT p50 {:>7.1} ms  PUT p99 {:>7.1} ms  failed {:>5}  cpu {:>5.1} s  ({} requests in {:.1} s)",
        m.rate(),
        percentile(&m.all, 0.5),
        percentile(&m.all, 0.99),
        percentile(&m.puts, 0.5),
        percentile(&m.puts, 0.99),
        m.failed,
        m.cpu,
        m.requests,
        m.secs,
    );
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(20);
    let workers = args.get(1).cloned().unwrap_or_else(|| "apache,ours".into());
    let clients: usize = std::env::var("CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(32);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        println!(
            "rest_bench: {CONNECTORS} connectors x {TASKS} tasks, {clients} clients, {secs} s per mix"
        );
        let a = if workers.contains("apache") { Some(apache(clients, secs).await) } else { None };
        for (label, m) in LABELS.iter().zip(a.iter().flatten()) {
            print_mix("apache", label, m);
        }
        let o = if workers.contains("ours") { Some(ours(clients, secs).await) } else { None };
        for (label, m) in LABELS.iter().zip(o.iter().flatten()) {
            print_mix("ours", label, m);
        }
        if let (Some(a), Some(o)) = (&a, &o) {
            for ((label, a), o) in LABELS.iter().zip(a).zip(o) {
                println!(
                    "ratio   {label:<14} req/s {:.2}x  p99 {:.2}x  cpu {:.2}x (ours / Apache)",
                    o.rate() / a.rate(),
                    percentile(&o.all, 0.99) / percentile(&a.all, 0.99),
                    o.cpu / a.cpu,
                );
            }
        }
    });
}
