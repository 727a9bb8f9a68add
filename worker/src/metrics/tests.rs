use std::time::Duration;

use super::*;
use crate::task_id::ConnectorTaskId;

fn id(c: &str, t: i32) -> ConnectorTaskId {
    ConnectorTaskId::new(c, t)
}

#[test]
fn names_follow_the_exporter_mapping_and_tasks_leave_no_series() {
    let m = Metrics::new();
    m.connector_state("c", Some("running"));
    m.task_state(&id("c", 0), Some("running"));
    m.task_state(&id("c", 1), Some("failed"));
    let t = m.task(&id("c", 0));
    t.polled(10, Duration::from_millis(3));
    t.source_done(10, 9);
    t.transaction_committed(4, Duration::from_millis(2));
    t.transaction_committed(6, Duration::from_millis(2));
    t.errors.error(1234);
    t.errors.failed(true, true);
    let text = m.encode();
    for line in [
        r#"kafka_connect_worker_connector_count 1"#,
        r#"kafka_connect_worker_task_count 2"#,
        r#"kafka_connect_worker_connector_running_task_count{connector="c"} 1"#,
        r#"kafka_connect_worker_connector_failed_task_count{connector="c"} 1"#,
        r#"kafka_connect_worker_connector_total_task_count{connector="c"} 2"#,
        r#"kafka_connect_connector_status{connector="c",status="running"} 1"#,
        r#"kafka_connect_connector_task_status{connector="c",task="1",status="failed"} 1"#,
        r#"kafka_connect_source_task_source_record_poll_total{connector="c",task="0"} 10"#,
        r#"kafka_connect_source_task_source_record_write_total{connector="c",task="0"} 9"#,
        r#"kafka_connect_source_task_source_record_active_count{connector="c",task="0"} 0"#,
        r#"kafka_connect_source_task_transaction_size_min{connector="c",task="0"} 4"#,
        r#"kafka_connect_source_task_transaction_size_max{connector="c",task="0"} 6"#,
        r#"kafka_connect_source_task_transaction_size_avg{connector="c",task="0"} 5.0"#,
        r#"kafka_connect_source_task_transactions_committed_total{connector="c",task="0"} 2"#,
        r#"kafka_connect_task_error_total_record_errors{connector="c",task="0"} 2"#,
        r#"kafka_connect_task_error_total_records_skipped{connector="c",task="0"} 1"#,
        r#"kafka_connect_task_error_total_errors_logged{connector="c",task="0"} 1"#,
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    // A task that leaves the worker takes its series with it.
    m.task_state(&id("c", 0), None);
    m.task_state(&id("c", 1), None);
    let text = m.encode();
    assert!(!text.contains(r#"task="0""#), "{text}");
    assert!(!text.contains(r#"connector="c",task"#), "{text}");
    assert!(text.contains("kafka_connect_worker_task_count 0"), "{text}");
    assert!(
        !text.contains("kafka_connect_worker_connector_total_task_count{"),
        "{text}"
    );
}
