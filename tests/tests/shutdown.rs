//! Bounded stops and a health check that asks the herder, against the real broker and
//! Postgres. A Postgres sink is held inside `put` by a table lock the test takes, so its task
//! cannot stop. Deleting the connector then keeps the herder loop busy stopping the task:
//! `GET /health` answers 500 `unhealthy` within its 10 s bound (it used to say `healthy`), and
//! after `task.shutdown.graceful.timeout.ms` the task is abandoned with a line naming it and the
//! worker is healthy again (it used to wait forever). SIGTERM ends a worker in that state within
//! the graceful timeout. On the way, the sink's consumer lag metrics are checked: 0 once the
//! first rows are committed, 10 while the connector is paused and ten more arrive, 0 again after
//! it resumes.

use std::time::{Duration, Instant};

use connect_tests::kafka;
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually};
use serde_json::json;
use sqlx::{Postgres, Transaction};

const UPSERT: &str = "connect_connectors::jdbc::PostgresSinkConnector";
const WAIT: Duration = Duration::from_secs(60);

/// A worker running one Postgres sink task that is stuck in `put` behind the returned lock.
async fn stuck_sink(graceful_ms: &str) -> (WorkerProc, Transaction<'static, Postgres>) {
    let spec = ClusterSpec::new("stuck").set("task.shutdown.graceful.timeout.ms", graceful_ms);
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    let topic = unique("stuck-in");
    let table = unique_table("stuck");
    kafka::create_topics(&[&topic], 1).await;
    let p = pool().await;
    sqlx::query(&format!(
        "CREATE TABLE {table} (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)"
    ))
    .execute(&p)
    .await
    .unwrap();
    let records = |from: i64| {
        (from..from + 10).map(|i| (Some(i.to_string()), Some(json!({"v": i}).to_string())))
    };
    kafka::produce(&topic, records(0)).await;
    create_connector(
        &w,
        "stuck",
        json!({
            "connector.class": UPSERT, "tasks.max": "1", "topics": topic,
            "connection.url": database_url(), "table.name.format": table,
            "pk.mode": "record_key", "pk.fields": "id",
        }),
    )
    .await;
    // The first ten rows are written and their offsets committed: no lag.
    let lag = format!(
        r#"kafka_connect_sink_task_record_lag{{connector="stuck",task="0",topic="{topic}",partition="0"}}"#
    );
    let scrape = || async {
        reqwest::get(w.url("/metrics"))
            .await
            .ok()?
            .text()
            .await
            .ok()
    };
    eventually(WAIT, "ten rows, committed", || async {
        let text = scrape().await?;
        text.contains(&format!("{lag} 0")).then_some(())
    })
    .await;
    let rows: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(&p)
        .await
        .unwrap();
    assert_eq!(rows, 10);
    // Paused, the task falls behind by the ten records that arrive meanwhile.
    let (code, _) = w.send("PUT", "/connectors/stuck/pause", None).await;
    assert_eq!(code, 202);
    eventually(WAIT, "the task paused", || async {
        let status = w.get("/connectors/stuck/status").await.ok()?;
        (status["tasks"][0]["state"] == "PAUSED").then_some(())
    })
    .await;
    kafka::produce(&topic, records(10)).await;
    eventually(WAIT, "the paused sink ten records behind", || async {
        let text = scrape().await?;
        (text.contains(&format!("{lag} 10"))
            && text.contains(
                r#"kafka_connect_sink_task_sink_record_lag_max{connector="stuck",task="0"} 10"#,
            ))
        .then_some(())
    })
    .await;
    let (code, _) = w.send("PUT", "/connectors/stuck/resume", None).await;
    assert_eq!(code, 202);
    eventually(WAIT, "caught up again", || async {
        let text = scrape().await?;
        text.contains(&format!("{lag} 0")).then_some(())
    })
    .await;
    // Ten more are read but never put: the task is inside `put`, waiting for the lock.
    let mut lock = p.begin().await.unwrap();
    sqlx::query(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        .execute(&mut *lock)
        .await
        .unwrap();
    kafka::produce(&topic, records(20)).await;
    let read = r#"kafka_connect_sink_task_sink_record_read_total{connector="stuck",task="0"} 30"#;
    eventually(WAIT, "the sink task inside put", || async {
        let text = scrape().await?;
        text.contains(read).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    (w, lock)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_that_does_not_stop_makes_the_worker_unhealthy_then_is_abandoned() {
    let (w, lock) = stuck_sink("15000").await;
    let (code, _) = w.send("DELETE", "/connectors/stuck", None).await;
    assert_eq!(code, 204);
    tokio::time::sleep(Duration::from_secs(1)).await;

    // The herder loop is busy stopping the task: health says so, within its bound.
    let asked = Instant::now();
    let (code, body) = w.send("GET", "/health", None).await;
    let took = asked.elapsed();
    assert_eq!(code, 500, "{body}");
    assert_eq!(body["status"], "unhealthy", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("Worker was unable to handle this request"),
        "{body}"
    );
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(14),
        "health answered after {took:?}"
    );

    // After the graceful timeout the task is abandoned and the herder goes on.
    eventually(WAIT, "the abandoned task named in the log", || async {
        w.log_text()
            .contains("Graceful stop of task stuck-0 failed")
            .then_some(())
    })
    .await;
    eventually(WAIT, "healthy again", || async {
        let (code, _) = w.send("GET", "/health", None).await;
        (code == 200).then_some(())
    })
    .await;
    let (code, connectors) = w.send("GET", "/connectors", None).await;
    assert_eq!((code, connectors), (200, json!([])));
    lock.rollback().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_a_worker_with_a_stuck_task_within_the_graceful_timeout() {
    let (mut w, lock) = stuck_sink("3000").await;
    let pid = w.pid().expect("running");
    let log = w.log.clone();
    let asked = Instant::now();
    let exited = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || w.terminate()),
    )
    .await;
    let took = asked.elapsed();
    if exited.is_err() {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
        panic!("the worker did not exit within 30 s of SIGTERM");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("Graceful stop of task stuck-0 failed"),
        "{text}"
    );
    assert!(took < Duration::from_secs(20), "exited after {took:?}");
    lock.rollback().await.unwrap();
}
