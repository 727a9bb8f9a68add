//! The internal topics are Apache Kafka Connect's: what this worker writes decodes per the spec,
//! and a config topic written the way a Java cluster writes it is picked up by a fresh worker.
//! Also: across graceful rebalances, no task runs on two workers at once.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation, Record};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

async fn running(w: &WorkerProc, connector: &str, tasks: usize) -> Option<Value> {
    let s = w
        .get(&format!("/connectors/{connector}/status"))
        .await
        .ok()?;
    let list = s["tasks"].as_array()?;
    (s["connector"]["state"] == "RUNNING"
        && list.len() == tasks
        && list.iter().all(|t| t["state"] == "RUNNING"))
    .then_some(s)
}

/// Latest value per key.
fn latest(records: &[Record]) -> BTreeMap<String, Value> {
    records
        .iter()
        .filter_map(|r| {
            let v = r
                .value
                .as_deref()
                .map(|v| serde_json::from_str(v).expect("values are JSON"))
                .unwrap_or(Value::Null);
            r.key.clone().map(|k| (k, v))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn config_offsets_and_status_records_decode_per_the_spec() {
    let spec = ClusterSpec::new("topics");
    let w = spec.start_worker().await;
    let topic = unique("topics-data");
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "vs", "config": {
            "connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic, "throughput": "50"}})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    eventually(
        Duration::from_secs(60),
        "connector and tasks running",
        || running(&w, "vs", 2),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await; // an offset flush or two

    let group = &spec.group_id;
    let read =
        |t: String| kafka::read_all(&[&t], Isolation::ReadUncommitted, Duration::from_secs(30));

    let config = latest(&read(format!("{group}-configs")));
    assert_eq!(
        config["connector-vs"]["properties"]["connector.class"],
        VERIFIABLE
    );
    assert_eq!(config["connector-vs"]["properties"]["name"], "vs");
    for t in 0..2 {
        let task = &config[&format!("task-vs-{t}")]["properties"];
        assert!(
            task["task.class"].is_string(),
            "task-vs-{t} has task.class: {task}"
        );
    }
    assert_eq!(config["commit-vs"], json!({"tasks": 2}));

    let statuses = latest(&read(format!("{group}-status")));
    let conn = &statuses["status-connector-vs"];
    assert_eq!(conn["state"], "RUNNING");
    assert_eq!(conn["worker_id"], w.worker_id());
    assert!(
        conn.as_object().unwrap().contains_key("trace") && conn["trace"].is_null(),
        "trace present as null: {conn}"
    );
    assert!(conn["generation"].is_i64());
    // Connect 4.4 records the running plugin's version (after `generation`).
    let version = w.get("/connector-plugins").await.unwrap()[0]["version"].clone();
    assert!(version.is_string());
    assert_eq!(
        conn.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["state", "trace", "worker_id", "generation", "version"]
    );
    assert_eq!(conn["version"], version, "{conn}");
    for t in 0..2 {
        let task = &statuses[&format!("status-task-vs-{t}")];
        assert_eq!(task["state"], "RUNNING");
        assert_eq!(task["version"], version, "{task}");
    }

    let offsets = latest(&read(format!("{group}-offsets")));
    for t in 0..2 {
        let key = format!(r#"["vs",{{"id":{t}}}]"#);
        assert!(
            offsets.get(&key).is_some_and(|v| v["seqno"].is_i64()),
            "offset key {key} in {offsets:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_config_topic_written_by_a_java_cluster_is_picked_up() {
    let spec = ClusterSpec::new("javacfg");
    let config_topic = format!("{}-configs", spec.group_id);
    kafka::create_compacted_topic(&config_topic, 1).await;
    let data = unique("javacfg-data");
    let connector = json!({"properties": {
        "connector.class": VERIFIABLE, "name": "jv", "tasks.max": "1", "topic": data, "throughput": "20"}});
    let task = json!({"properties": {
        "connector.class": VERIFIABLE, "name": "jv", "tasks.max": "1", "topic": data, "throughput": "20",
        "task.class": "org.apache.kafka.connect.tools.VerifiableSourceTask", "id": "0"}});
    // The records a Java worker writes for a new connector, compact JSON as Jackson writes it.
    kafka::produce(
        &config_topic,
        [
            (
                "target-state-jv",
                json!({"state": "STARTED", "state.v2": "STARTED"}),
            ),
            ("connector-jv", connector),
            ("task-jv-0", task),
            ("commit-jv", json!({"tasks": 1})),
        ]
        .into_iter()
        .map(|(k, v)| (Some(k.to_owned()), Some(v.to_string()))),
    )
    .await;

    let w = spec.start_worker().await;
    let names = w.get("/connectors").await.unwrap();
    assert_eq!(names, json!(["jv"]));
    eventually(
        Duration::from_secs(60),
        "the Java-written connector runs here",
        || running(&w, "jv", 1),
    )
    .await;
    let records = kafka::read_until(
        &[&data],
        Isolation::ReadUncommitted,
        Duration::from_secs(30),
        |r| r.len() >= 5,
    );
    assert!(records.len() >= 5);
}

/// `(worker, task) -> [(start, stop)]` from a worker's log lines.
fn task_intervals(log: &str) -> BTreeMap<String, Vec<(String, Option<String>)>> {
    let mut out: BTreeMap<String, Vec<(String, Option<String>)>> = BTreeMap::new();
    for line in log.lines() {
        let ts = line.split_whitespace().next().unwrap_or("").to_owned();
        let task = line
            .split("task=")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .map(str::to_owned);
        let Some(task) = task else { continue };
        if line.contains("source task started") {
            out.entry(task).or_default().push((ts, None));
        } else if line.contains("source task stopped") || line.contains("source task failed") {
            if let Some(last) = out.entry(task).or_default().last_mut() {
                last.1 = Some(ts);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn no_task_runs_on_two_workers_at_once_across_rebalances() {
    let spec = ClusterSpec::new("nodouble");
    let mut w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let (status, body) = w2
        .send("POST", "/connectors", Some(json!({"name": "vs", "config": {
            "connector.class": VERIFIABLE, "tasks.max": "4", "topic": unique("nodouble-data"), "throughput": "20"}})))
        .await;
    assert_eq!(status, 201, "{body}");
    eventually(Duration::from_secs(60), "4 tasks running", || {
        running(&w2, "vs", 4)
    })
    .await;
    let w3 = spec.start_worker().await;
    eventually(
        Duration::from_secs(60),
        "the third worker took tasks",
        || async {
            let s = running(&w2, "vs", 4).await?;
            s["tasks"]
                .as_array()?
                .iter()
                .any(|t| t["worker_id"] == w3.worker_id())
                .then_some(())
        },
    )
    .await;
    assert!(
        w1.terminate().is_some_and(|s| s.success()),
        "SIGTERM exits cleanly"
    );
    let gone = w1.worker_id();
    eventually(
        Duration::from_secs(60),
        "the stopped worker's tasks moved",
        || async {
            let s = running(&w2, "vs", 4).await?;
            s["tasks"]
                .as_array()?
                .iter()
                .all(|t| t["worker_id"] != gone)
                .then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    let mut all: Vec<(String, String, String, Option<String>)> = Vec::new();
    for w in [&w1, &w2, &w3] {
        for (task, intervals) in task_intervals(&w.log_text()) {
            for (start, stop) in intervals {
                all.push((task.clone(), w.worker_id(), start, stop));
            }
        }
    }
    assert!(all.len() >= 4, "task start lines found: {all:?}");
    for a in &all {
        for b in &all {
            if a.0 == b.0 && a.1 != b.1 {
                // Intervals [start, stop) on different workers must not overlap.
                let a_before_b = a.3.as_ref().is_some_and(|stop| stop <= &b.2);
                let b_before_a = b.3.as_ref().is_some_and(|stop| stop <= &a.2);
                assert!(
                    a_before_b || b_before_a,
                    "task {} ran on {} ({}..{:?}) and {} ({}..{:?}) at once",
                    a.0,
                    a.1,
                    a.2,
                    a.3,
                    b.1,
                    b.2,
                    b.3
                );
            }
        }
    }
}
