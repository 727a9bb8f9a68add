//! `GET /metrics` against the real broker: what the worker reports agrees with what the topics
//! hold. An exactly-once verifiable source writes a known number of records (read back with a
//! `read_committed` reader), a FileStream sink reads a topic with poison records tolerated into
//! a dead-letter queue (read back too), a new task generation is counted as a fencing round, a
//! deleted connector's series leave the scrape, and the Grafana dashboard of `deploy/` queries only
//! series the worker exports.

use std::time::Duration;

use connect_tests::kafka::{Isolation, create_topics, produce, read_all};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually};
use serde_json::json;

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const WAIT: Duration = Duration::from_secs(90);

async fn scrape(w: &WorkerProc) -> String {
    let res = reqwest::get(w.url("/metrics")).await.expect("GET /metrics");
    assert_eq!(res.status(), 200);
    let ct = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(ct.starts_with("application/openmetrics-text"), "{ct}");
    let text = res.text().await.unwrap();
    assert!(
        text.trim_end().ends_with("# EOF"),
        "not OpenMetrics: {text}"
    );
    text
}

/// The value of the sample `series` (name with its labels, as printed), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(series)?.strip_prefix(' ')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn value(text: &str, series: &str) -> f64 {
    sample(text, series).unwrap_or_else(|| panic!("{series} missing from:\n{text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_agree_with_the_topics() {
    let spec = ClusterSpec::new("metrics").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    // Served while the worker starts too; the start-up counters are there from the beginning.
    let early = scrape(&w).await;
    assert!(
        early.contains("kafka_connect_worker_task_startup_attempts_total"),
        "{early}"
    );
    w.wait_healthy().await;

    // An exactly-once source with a known number of records.
    let src_topic = unique("metrics-src");
    create_topics(&[&src_topic], 1).await;
    let records = 400;
    create_connector(
        &w,
        "m-src",
        json!({
            "connector.class": VERIFIABLE, "topic": src_topic, "throughput": "2000",
            "batch.size": "50", "max.records": records.to_string(), "tasks.max": "1",
        }),
    )
    .await;
    eventually(WAIT, "every source record committed", || async {
        let n = read_all(
            &[&src_topic],
            Isolation::ReadCommitted,
            Duration::from_secs(2),
        )
        .len();
        (n == records).then_some(())
    })
    .await;
    let t = r#"{connector="m-src",task="0"}"#;
    let text = eventually(
        WAIT,
        "the source's counters at the committed count",
        || async {
            let text = scrape(&w).await;
            (sample(
                &text,
                &format!("kafka_connect_source_task_source_record_write_total{t}"),
            ) == Some(records as f64))
            .then_some(text)
        },
    )
    .await;
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_source_task_source_record_poll_total{t}")
        ),
        records as f64
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_source_task_source_record_active_count{t}")
        ),
        0.0
    );
    let committed = value(
        &text,
        &format!("kafka_connect_source_task_transactions_committed_total{t}"),
    );
    assert!(
        committed >= (records / 50) as f64,
        "{committed} transactions"
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_source_task_transaction_commit_seconds_count{t}")
        ),
        committed
    );
    let max = value(
        &text,
        &format!("kafka_connect_source_task_transaction_size_max{t}"),
    );
    let min = value(
        &text,
        &format!("kafka_connect_source_task_transaction_size_min{t}"),
    );
    let avg = value(
        &text,
        &format!("kafka_connect_source_task_transaction_size_avg{t}"),
    );
    assert!(
        (1.0..=50.0).contains(&min) && min <= avg && avg <= max && max <= 50.0,
        "transaction sizes min {min} avg {avg} max {max}"
    );
    assert!(
        (avg * committed - records as f64).abs() < 1.0,
        "avg {avg} x {committed}"
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_connector_task_batch_size_max{t}")
        ),
        50.0
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_connector_task_offset_commit_success_percentage{t}")
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            r#"kafka_connect_connector_task_status{connector="m-src",task="0",status="running"}"#
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            r#"kafka_connect_connector_status{connector="m-src",status="running"}"#
        ),
        1.0
    );
    assert!(text.contains(
        r#"kafka_connect_connector_info{connector="m-src",connector_class="org.apache.kafka.connect.tools.VerifiableSourceConnector",connector_type="source""#
    ), "{text}");
    assert!(
        value(
            &text,
            &format!("kafka_connect_connector_task_running_ratio{t}")
        ) > 0.5
    );
    assert!(value(&text, "kafka_connect_worker_task_startup_success_total") >= 1.0);
    assert!(
        value(
            &text,
            "kafka_connect_worker_rebalance_completed_rebalances_total"
        ) >= 1.0
    );
    assert!(value(&text, "kafka_connect_worker_rebalance_epoch") >= 1.0);
    assert_eq!(
        value(&text, "kafka_connect_worker_rebalance_rebalancing"),
        0.0
    );

    // A sink that tolerates poison records into a dead-letter queue.
    let sink_topic = unique("metrics-sink");
    let dlq = unique("metrics-dlq");
    create_topics(&[&sink_topic], 1).await;
    let good = 7;
    let bad = 3;
    produce(
        &sink_topic,
        (0..good + bad).map(|i| {
            let v = if i % 3 == 2 {
                format!("not json {i}")
            } else {
                format!("{{\"n\":{i}}}")
            };
            (None, Some(v))
        }),
    )
    .await;
    let out = spec.dir.join("metrics-sink.txt");
    create_connector(
        &w,
        "m-sink",
        json!({
            "connector.class": FILE_SINK, "topics": sink_topic, "file": out.display().to_string(),
            "tasks.max": "1",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        }),
    )
    .await;
    eventually(
        WAIT,
        "the poison records in the dead-letter queue",
        || async {
            let n = read_all(&[&dlq], Isolation::ReadUncommitted, Duration::from_secs(2)).len();
            (n == bad).then_some(())
        },
    )
    .await;
    let s = r#"{connector="m-sink",task="0"}"#;
    let text = eventually(WAIT, "the sink's counters", || async {
        let text = scrape(&w).await;
        (sample(
            &text,
            &format!("kafka_connect_sink_task_sink_record_send_total{s}"),
        ) == Some(good as f64))
        .then_some(text)
    })
    .await;
    // The file sink flushes at offset commits.
    eventually(WAIT, "the good records in the sink's file", || async {
        let written = std::fs::read_to_string(&out).unwrap_or_default();
        (written.lines().count() == good).then_some(())
    })
    .await;
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_sink_task_sink_record_read_total{s}")
        ),
        (good + bad) as f64
    );
    for name in [
        "kafka_connect_task_error_total_record_errors",
        "kafka_connect_task_error_total_records_skipped",
        "kafka_connect_task_error_deadletterqueue_produce_requests",
    ] {
        assert_eq!(value(&text, &format!("{name}{s}")), bad as f64, "{name}");
    }
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_task_error_deadletterqueue_produce_failures{s}")
        ),
        0.0
    );
    assert!(
        value(
            &text,
            &format!("kafka_connect_task_error_last_error_timestamp{s}")
        ) > 0.0
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_sink_task_partition_count{s}")
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            r#"kafka_connect_worker_connector_total_task_count{connector="m-sink"}"#
        ),
        1.0
    );
    assert_eq!(value(&text, "kafka_connect_worker_task_count"), 2.0);

    // A sink that does not tolerate errors fails on a poison record: the state gauges and the
    // error counters show it.
    let poison_topic = unique("metrics-poison");
    create_topics(&[&poison_topic], 1).await;
    produce(
        &poison_topic,
        std::iter::once((None, Some("not json".to_owned()))),
    )
    .await;
    create_connector(
        &w,
        "m-fail",
        json!({
            "connector.class": FILE_SINK, "topics": poison_topic,
            "file": spec.dir.join("metrics-fail.txt").display().to_string(), "tasks.max": "1",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
        }),
    )
    .await;
    let f = r#"{connector="m-fail",task="0"}"#;
    let text = eventually(WAIT, "the failed task in the gauges", || async {
        let text = scrape(&w).await;
        (sample(
            &text,
            r#"kafka_connect_connector_task_status{connector="m-fail",task="0",status="failed"}"#,
        ) == Some(1.0))
        .then_some(text)
    })
    .await;
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_task_error_total_record_errors{f}")
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            &format!("kafka_connect_task_error_total_records_skipped{f}")
        ),
        0.0
    );
    assert_eq!(
        value(
            &text,
            r#"kafka_connect_worker_connector_failed_task_count{connector="m-fail"}"#
        ),
        1.0
    );
    let (code, _) = w.send("DELETE", "/connectors/m-fail", None).await;
    assert_eq!(code, 204);

    // A new generation of the source's tasks: the leader (this worker) fences the previous one.
    let (code, body) = w
        .send(
            "PUT",
            "/connectors/m-src/config",
            Some(json!({
                "connector.class": VERIFIABLE, "topic": src_topic, "throughput": "2000",
                "batch.size": "50", "max.records": records.to_string(), "tasks.max": "2",
            })),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    eventually(WAIT, "a fencing round counted", || async {
        let text = scrape(&w).await;
        (sample(
            &text,
            r#"kafka_connect_connector_fencing_rounds_total{connector="m-src"}"#,
        ) == Some(1.0)
            && sample(
                &text,
                r#"kafka_connect_connector_fenced_tasks_total{connector="m-src"}"#,
            ) == Some(1.0))
        .then_some(())
    })
    .await;

    // A deleted connector's series go with it.
    let (code, _) = w.send("DELETE", "/connectors/m-src", None).await;
    assert_eq!(code, 204);
    eventually(WAIT, "the deleted source's series gone", || async {
        let text = scrape(&w).await;
        // The leader's fencing counters are history and stay; nothing else names it.
        let left = text
            .lines()
            .filter(|l| l.contains(r#"connector="m-src""#) && !l.contains("_fenc"))
            .count();
        (left == 0).then_some(())
    })
    .await;
    let text = scrape(&w).await;
    assert_eq!(value(&text, "kafka_connect_worker_task_count"), 1.0);
    assert_eq!(value(&text, "kafka_connect_worker_connector_count"), 1.0);

    // Every metric the Grafana dashboard of deploy/ queries is one the worker exports.
    let dashboard = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../deploy/grafana/dashboards/connect.json"),
    )
    .unwrap();
    let queried = metric_names(&dashboard);
    assert!(queried.len() >= 15, "{queried:?}");
    // A family appears once it has a series (the sink's lag after its first 5 s round).
    let missing = |text: &str| -> Vec<String> {
        queried
            .iter()
            .filter(|name| {
                // A sample name is its family's, or the family's plus a histogram or counter
                // suffix.
                let families = ["", "_bucket", "_count", "_sum", "_total"]
                    .iter()
                    .filter_map(|s| name.strip_suffix(s));
                !families
                    .into_iter()
                    .any(|f| text.contains(&format!("# TYPE {f} ")))
            })
            .cloned()
            .collect()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut text = text;
    while !missing(&text).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        text = scrape(&w).await;
    }
    assert_eq!(
        missing(&text),
        Vec::<String>::new(),
        "the dashboard queries these, which the worker does not export:\n{text}"
    );
}

/// The `kafka_connect_*` names in `text`.
fn metric_names(text: &str) -> std::collections::BTreeSet<String> {
    text.match_indices("kafka_connect_")
        .map(|(i, _)| {
            text[i..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect()
        })
        .collect()
}
