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

/// A worker running one Postgres sink task, connector `name`, that is stuck in `put` behind the
/// returned lock. Each test names its connector differently: a sink's consumer group is
/// `connect-<name>` on the shared broker, and two tests' sinks in one group would take each
/// other's partitions away (a rebalance) when they run at the same time.
async fn stuck_sink(name: &str, graceful_ms: &str) -> (WorkerProc, Transaction<'static, Postgres>) {
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
        name,
        json!({
            "connector.class": UPSERT, "tasks.max": "1", "topics": topic,
            "connection.url": database_url(), "table.name.format": table,
            "pk.mode": "record_key", "pk.fields": "id",
        }),
    )
    .await;
    // The first ten rows are written and their offsets committed: no lag.
    let lag = format!(
        r#"kafka_connect_sink_task_record_lag{{connector="{name}",task="0",topic="{topic}",partition="0"}}"#
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
    let (code, _) = w
        .send("PUT", &format!("/connectors/{name}/pause"), None)
        .await;
    assert_eq!(code, 202);
    eventually(WAIT, "the task paused", || async {
        let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (status["tasks"][0]["state"] == "PAUSED").then_some(())
    })
    .await;
    kafka::produce(&topic, records(10)).await;
    eventually(WAIT, "the paused sink ten records behind", || async {
        let text = scrape().await?;
        (text.contains(&format!("{lag} 10"))
            && text.contains(&format!(
                r#"kafka_connect_sink_task_sink_record_lag_max{{connector="{name}",task="0"}} 10"#
            )))
        .then_some(())
    })
    .await;
    let (code, _) = w
        .send("PUT", &format!("/connectors/{name}/resume"), None)
        .await;
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
    let read = format!(
        r#"kafka_connect_sink_task_sink_record_read_total{{connector="{name}",task="0"}} 30"#
    );
    eventually(WAIT, "the sink task inside put", || async {
        let text = scrape().await?;
        text.contains(&read).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    (w, lock)
}

/// SIGTERM, then wait (at most 30 s) for the exit: how long it took and the worker's log.
async fn terminate(mut w: WorkerProc) -> (Duration, String) {
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
    (took, std::fs::read_to_string(&log).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_that_does_not_stop_makes_the_worker_unhealthy_then_is_abandoned() {
    let (w, lock) = stuck_sink("stuck-health", "15000").await;
    let (code, _) = w.send("DELETE", "/connectors/stuck-health", None).await;
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
            .contains("Graceful stop of task stuck-health-0 failed")
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
    let (w, lock) = stuck_sink("stuck-sigterm", "3000").await;
    let (took, text) = terminate(w).await;
    assert!(
        text.contains("Graceful stop of task stuck-sigterm-0 failed"),
        "{text}"
    );
    assert!(took < Duration::from_secs(20), "exited after {took:?}");
    lock.rollback().await.unwrap();
}

const SOURCE: &str = "connect_connectors::jdbc::PostgresSourceConnector";

/// The ids of the rows in `topic`, read under `read_committed`.
async fn committed_ids(topic: &str) -> Vec<i64> {
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        kafka::read_all(
            &[&topic],
            kafka::Isolation::ReadCommitted,
            Duration::from_secs(5),
        )
        .iter()
        .filter_map(|r| {
            let v: serde_json::Value = serde_json::from_str(r.value.as_deref()?).ok()?;
            v["id"].as_i64()
        })
        .collect()
    })
    .await
    .unwrap()
}

/// An exactly-once Postgres source whose poll is held by a table lock: SIGTERM ends its worker
/// within the graceful timeout plus a margin, the worker leaves the group so the other one takes
/// the task over at once (well inside the 45 s session timeout), and once the lock goes every row
/// is in the topic exactly once.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_an_exactly_once_run_with_a_stuck_task_stays_exact() {
    let spec = ClusterSpec::new("stuck-eos")
        .set("exactly.once.source.support", "enabled")
        .set("task.shutdown.graceful.timeout.ms", "4000")
        .set("session.timeout.ms", "45000")
        .set("heartbeat.interval.ms", "3000");
    let mut workers = vec![spec.start_worker().await, spec.start_worker().await];
    let table = unique_table("stuck_src");
    let prefix = format!("{}-", unique("stuck-eos"));
    let topic = format!("{prefix}{table}");
    kafka::create_topics(&[&topic], 1).await;
    let p = pool().await;
    sqlx::query(&format!(
        "CREATE TABLE {table} (id serial PRIMARY KEY, payload text NOT NULL)"
    ))
    .execute(&p)
    .await
    .unwrap();
    let insert = format!(
        "INSERT INTO {table} (payload) SELECT 'row-' || g FROM generate_series(1, 100) g ORDER BY g"
    );
    sqlx::query(&insert).execute(&p).await.unwrap();
    create_connector(
        &workers[0],
        "pg-stuck",
        json!({
            "connector.class": SOURCE, "tasks.max": "1", "connection.url": database_url(),
            "tables": table, "mode": "incrementing", "incrementing.column.name": "id",
            "topic.prefix": prefix, "poll.interval.ms": "100",
            "exactly.once.support": "required", "transaction.boundary": "poll",
        }),
    )
    .await;
    eventually(WAIT, "the first 100 rows committed", || async {
        (committed_ids(&topic).await.len() == 100).then_some(())
    })
    .await;
    let owner = eventually(WAIT, "the task's owner", || async {
        let tasks = connect_tests::worker::running_tasks(&workers[0], "pg-stuck", 1).await?;
        tasks.get(&0).cloned()
    })
    .await;
    let (stuck, other) = if workers[0].worker_id() == owner {
        (0, 1)
    } else {
        (1, 0)
    };

    // The lock holder inserts 100 more rows in its own transaction; the task's next poll waits
    // for the lock.
    let mut lock = p.begin().await.unwrap();
    sqlx::query(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
        .execute(&mut *lock)
        .await
        .unwrap();
    sqlx::query(&insert).execute(&mut *lock).await.unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;

    let w = workers.remove(stuck);
    let other = workers.remove(if other > stuck { other - 1 } else { other });
    let asked = Instant::now();
    let (took, text) = terminate(w).await;
    assert!(
        text.contains("Graceful stop of task pg-stuck-0 failed"),
        "{text}"
    );
    assert!(
        took < Duration::from_secs(4 + 8),
        "exited {took:?} after SIGTERM"
    );
    // The other worker runs the task at once: the stopped worker left the group.
    let other_id = other.worker_id();
    eventually(
        Duration::from_secs(20),
        "the task on the other worker",
        || async {
            let tasks = connect_tests::worker::running_tasks(&other, "pg-stuck", 1).await?;
            (tasks.get(&0) == Some(&other_id)).then_some(())
        },
    )
    .await;
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "the task moved {:?} after SIGTERM (session timeout 45 s)",
        asked.elapsed()
    );

    lock.commit().await.unwrap();
    let ids = eventually(
        Duration::from_secs(90),
        "all 200 rows committed",
        || async {
            let ids = committed_ids(&topic).await;
            (ids.len() >= 200).then_some(ids)
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ids_later = committed_ids(&topic).await;
    assert_eq!(
        ids_later.len(),
        ids.len(),
        "records after the count settled"
    );
    let expected: Vec<i64> = (1..=200).collect();
    assert_eq!(ids_later, expected, "every row exactly once, in order");
}
