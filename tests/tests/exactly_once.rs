//! Exactly-once source support (KIP-618) proven by trying to break it: numbered records from
//! the verifiable source, workers killed with SIGKILL and frozen with SIGSTOP (zombies) while
//! transactions are open, then a `read_committed` reader checks that every (task, seqno)
//! appears exactly once with no gap.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

fn eos_cluster(prefix: &str) -> ClusterSpec {
    ClusterSpec::new(prefix).set("exactly.once.source.support", "enabled")
}

async fn create(w: &WorkerProc, name: &str, config: Value) {
    let (status, body) = w.send("POST", "/connectors", Some(json!({"name": name, "config": config}))).await;
    assert_eq!(status, 201, "create {name}: {body}");
}

async fn all_running(w: &WorkerProc, connector: &str, tasks: usize) -> Option<BTreeMap<i64, String>> {
    let status = w.get(&format!("/connectors/{connector}/status")).await.ok()?;
    let list = status["tasks"].as_array()?;
    if list.len() != tasks || list.iter().any(|t| t["state"] != "RUNNING") {
        return None;
    }
    Some(list.iter().map(|t| (t["id"].as_i64().unwrap(), t["worker_id"].as_str().unwrap().to_owned())).collect())
}

/// Waits until a read_committed reader has every seqno of every task, then reads the topic to
/// its end and asserts each (task, seqno) appears exactly once.
async fn assert_exactly_once(topic: &str, tasks: i64, max: i64) {
    let topic_owned = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let topic = topic_owned.as_str();
        kafka::read_until(&[topic], Isolation::ReadCommitted, Duration::from_secs(120), |r| {
            r.len() as i64 >= tasks * max
        });
        // Let any zombie's open transaction be aborted and any late duplicate land.
        std::thread::sleep(Duration::from_secs(3));
        let records = kafka::read_all(&[topic], Isolation::ReadCommitted, Duration::from_secs(120));
        let mut counts: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        for r in &records {
            let task: i64 = r.key.as_deref().unwrap_or("").parse().expect("key is the task id");
            let seqno: i64 = r.value.as_deref().unwrap_or("").parse().expect("value is the seqno");
            *counts.entry((task, seqno)).or_insert(0) += 1;
        }
        let dups: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).take(10).collect();
        assert!(dups.is_empty(), "duplicates under read_committed: {dups:?} ({} records)", records.len());
        for t in 0..tasks {
            let missing: Vec<i64> = (0..max).filter(|s| !counts.contains_key(&(t, *s))).take(10).collect();
            assert!(missing.is_empty(), "task {t} has gaps, e.g. seqnos {missing:?}");
        }
        assert_eq!(records.len() as i64, tasks * max, "exactly one record per (task, seqno)");
        println!("{} records, each (task, seqno) exactly once", records.len());
    })
    .await
    .expect("reader thread");
}

fn verifiable(topic: &str, tasks: usize, max: i64, boundary: &str) -> Value {
    json!({
        "connector.class": VERIFIABLE,
        "tasks.max": tasks.to_string(),
        "topic": topic,
        "throughput": "400",
        "batch.size": "20",
        "max.records": max.to_string(),
        "exactly.once.support": "required",
        "transaction.boundary": boundary,
        "transaction.boundary.interval.ms": "300",
        "transaction.records": "7",
    })
}

async fn sigkill_run(boundary: &str) {
    let spec = eos_cluster("eos-kill");
    let w1 = spec.start_worker().await;
    let mut w2 = spec.start_worker().await;
    let mut w3 = spec.start_worker().await;
    let topic = unique("eos-kill-data");
    kafka::create_topics(&[&topic], 3).await;
    let (tasks, max) = (3usize, 3000i64);
    create(&w1, "vs", verifiable(&topic, tasks, max, boundary)).await;
    eventually(Duration::from_secs(90), "all tasks running", || all_running(&w1, "vs", tasks)).await;

    // Crash workers while their tasks have transactions open, then bring them back.
    tokio::time::sleep(Duration::from_secs(2)).await;
    w2.kill9();
    tokio::time::sleep(Duration::from_secs(2)).await;
    w3.kill9();
    tokio::time::sleep(Duration::from_secs(1)).await;
    w2.restart().await;
    w3.restart().await;
    assert_exactly_once(&topic, tasks as i64, max).await;
    drop(w1);
}

#[tokio::test(flavor = "multi_thread")]
async fn poll_boundaries_are_exactly_once_when_workers_are_killed() {
    sigkill_run("poll").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn interval_boundaries_are_exactly_once_when_workers_are_killed() {
    sigkill_run("interval").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn connector_boundaries_are_exactly_once_when_workers_are_killed() {
    sigkill_run("connector").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_paused_zombie_worker_is_fenced_and_adds_no_duplicates() {
    let spec = eos_cluster("eos-zombie");
    let w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let topic = unique("eos-zombie-data");
    kafka::create_topics(&[&topic], 2).await;
    let (tasks, max) = (2usize, 3000i64);
    create(&w1, "vs", verifiable(&topic, tasks, max, "poll")).await;
    let owners = eventually(Duration::from_secs(90), "both tasks running, one per worker", || async {
        all_running(&w1, "vs", tasks).await.filter(|o| o.values().collect::<std::collections::BTreeSet<_>>().len() == 2)
    })
    .await;
    println!("owners before the freeze: {owners:?}");

    // Freeze w2 mid-run: its task becomes a zombie once the group moves its work to w1.
    tokio::time::sleep(Duration::from_secs(2)).await;
    w2.pause();
    let zombie = w2.worker_id();
    eventually(Duration::from_secs(60), "the frozen worker's task runs on the other worker", || async {
        all_running(&w1, "vs", tasks).await.filter(|o| o.values().all(|w| *w != zombie))
    })
    .await;
    // Wake the zombie: whatever it still tries to commit must be fenced.
    tokio::time::sleep(Duration::from_secs(2)).await;
    w2.resume();
    assert_exactly_once(&topic, tasks as i64, max).await;
    let log = w2.log_text();
    println!("zombie log mentions fencing: {}", log.to_lowercase().contains("fenc"));
    drop(w1);
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_tasks_open_no_transactions_and_offsets_resume() {
    let spec = eos_cluster("eos-resume");
    let mut w1 = spec.start_worker().await;
    let topic = unique("eos-resume-data");
    kafka::create_topics(&[&topic], 1).await;
    let offsets_topic = unique("eos-own-offsets");
    let mut config = verifiable(&topic, 1, 500, "poll");
    config["offsets.storage.topic"] = json!(offsets_topic);
    create(&w1, "vs", config).await;
    assert_exactly_once(&topic, 1, 500).await;
    // A clean restart resumes after the last committed seqno: still exactly once.
    assert!(w1.terminate().is_some_and(|s| s.success()), "SIGTERM exits cleanly");
    w1.restart().await;
    eventually(Duration::from_secs(60), "task running again", || all_running(&w1, "vs", 1)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_exactly_once(&topic, 1, 500).await;
    // The per-connector offsets topic holds the offsets, written transactionally.
    let offsets = kafka::read_all(&[&offsets_topic], Isolation::ReadCommitted, Duration::from_secs(30));
    assert!(offsets.iter().any(|r| r.key.as_deref() == Some(r#"["vs",{"id":0}]"#)), "offsets in {offsets_topic}: {offsets:?}");
}
