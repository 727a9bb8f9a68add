//! Log lines of a task carry the task's `connector`, `task` and `worker_id` (tracing spans), in
//! the text format and in the JSON format (`CONNECT_LOG_FORMAT=json`); an unknown format stops
//! the worker naming the variable.

use std::time::Duration;

use connect_tests::kafka::create_topics;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually, run_to_exit};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const WAIT: Duration = Duration::from_secs(60);

/// Runs the connector `log-src`, a slow verifiable source, on `w`.
async fn start_source(w: &WorkerProc, prefix: &str) {
    let topic = unique(prefix);
    create_topics(&[&topic], 1).await;
    create_connector(
        w,
        "log-src",
        json!({"connector.class": VERIFIABLE, "topic": topic, "throughput": "10", "tasks.max": "1"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn json_lines_carry_the_task_fields() {
    let w = ClusterSpec::new("log-json")
        .env("CONNECT_LOG_FORMAT", "json")
        .start_worker()
        .await;
    start_source(&w, "log-json").await;
    let worker_id = w.worker_id();
    let line: Value = eventually(WAIT, "the task's 'started' line", || async {
        w.log_text()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["fields"]["message"] == "source task started")
    })
    .await;
    assert_eq!(line["span"]["name"], "task", "{line}");
    assert_eq!(line["span"]["connector"], "log-src", "{line}");
    assert_eq!(line["span"]["task"], 0, "{line}");
    assert_eq!(line["span"]["worker_id"], worker_id.as_str(), "{line}");
    // Every line of the log is one JSON object.
    let text = w.log_text();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            serde_json::from_str::<Value>(l).is_ok(),
            "not a JSON line: {l}"
        );
    }
    // The connector's own lines carry its name.
    assert!(
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v["span"]["name"] == "connector" && v["span"]["connector"] == "log-src"),
        "no connector line:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn text_lines_carry_the_task_fields() {
    let w = ClusterSpec::new("log-text").start_worker().await;
    start_source(&w, "log-text").await;
    let prefix = format!(
        "task{{connector=log-src task=0 worker_id={}}}",
        w.worker_id()
    );
    eventually(WAIT, "the task's 'started' line with its span", || async {
        w.log_text()
            .lines()
            .any(|l| l.contains(&prefix) && l.contains("source task started"))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_log_format_stops_start_up() {
    let spec = ClusterSpec::new("log-bad").env("CONNECT_LOG_FORMAT", "xml");
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok, "{log}");
    assert!(
        log.contains("CONNECT_LOG_FORMAT=xml is not a log format"),
        "{log}"
    );
}
