//! The Postgres sinks against real Kafka, real Postgres and real workers: the upsert sink
//! after replays and crashes, the offsets-with-data sink with the group's offsets rewound
//! behind the database's (and winning over `auto.offset.reset=latest` with its rewinds), and the
//! dead-letter queue for poison records.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use serde_json::{Value, json};
use sqlx::Row;

const UPSERT: &str = "connect_connectors::jdbc::PostgresSinkConnector";
const OFFSETS: &str = "connect_connectors::jdbc::PostgresOffsetsSinkConnector";

async fn create(w: &WorkerProc, name: &str, config: Value) {
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": name, "config": config})),
        )
        .await;
    assert_eq!(status, 201, "create {name}: {body}");
}

async fn count(table: &str) -> i64 {
    let p = pool().await;
    let n = sqlx::query(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(&p)
        .await
        .map(|r| r.get::<i64, _>(0))
        .unwrap_or(-1);
    p.close().await;
    n
}

async fn table_map(table: &str) -> BTreeMap<i64, i64> {
    let p = pool().await;
    let rows = sqlx::query(&format!("SELECT id, v FROM {table}"))
        .fetch_all(&p)
        .await
        .unwrap_or_default();
    p.close().await;
    rows.iter()
        .map(|r| (r.get::<i64, _>(0), r.get::<i64, _>(1)))
        .collect()
}

/// Keys 0..50, each written 20 times (v = round), every 7th key deleted at the end.
fn upsert_input() -> (Vec<(Option<String>, Option<String>)>, BTreeMap<i64, i64>) {
    let mut records = Vec::new();
    let mut expected = BTreeMap::new();
    for round in 0..20i64 {
        for id in 0..50i64 {
            records.push((
                Some(id.to_string()),
                Some(json!({"v": round * 1000 + id, "note": format!("r{round}")}).to_string()),
            ));
            expected.insert(id, round * 1000 + id);
        }
    }
    for id in (0..50i64).step_by(7) {
        records.push((Some(id.to_string()), None));
        expected.remove(&id);
    }
    (records, expected)
}

#[tokio::test(flavor = "multi_thread")]
async fn upsert_sink_table_is_last_value_per_key_after_crashes_and_replay() {
    let spec = ClusterSpec::new("pg-upsert");
    let mut w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let topic = unique("upsert");
    let table = unique_table("upsert");
    kafka::create_topics(&[&topic], 3).await;
    let (records, expected) = upsert_input();
    let config = |t: &str| {
        json!({
            "connector.class": UPSERT, "tasks.max": "3", "topics": topic,
            "connection.url": database_url(), "table.name.format": t,
            "pk.mode": "record_key", "pk.fields": "id", "delete.enabled": "true",
            "auto.create": "true", "auto.evolve": "true", "batch.size": "100",
        })
    };
    create(&w1, "upsert-a", config(&table)).await;
    let half = records.len() / 2;
    kafka::produce(&topic, records[..half].iter().cloned()).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    // A crash mid-run: the other worker takes the tasks over and replays uncommitted records.
    w1.kill9();
    kafka::produce(&topic, records[half..].iter().cloned()).await;
    // The survivor notices the death (session timeout), leads, and owns every task. Without
    // this wait the table can already be complete (the survivor's consumers may hold every
    // partition) while the survivor still forwards leader-only requests to the dead worker.
    eventually(
        Duration::from_secs(60),
        "the surviving worker leads",
        || async { (w2.is_leader() == Some(true)).then_some(()) },
    )
    .await;
    eventually(
        Duration::from_secs(120),
        "table = last value per key",
        || async { (table_map(&table).await == expected).then_some(()) },
    )
    .await;

    // Replay everything from the start into the same table: stop the connector, reset its
    // offsets (KIP-875), resume. The group's offsets must come back to the end of the topic
    // (every record consumed again) and the table must not change.
    let group = "connect-upsert-a";
    let total = records.len() as i64;
    let committed = || async {
        let t = topic.clone();
        tokio::task::spawn_blocking(move || kafka::committed_total(group, &t, 3))
            .await
            .unwrap()
    };
    eventually(Duration::from_secs(60), "all offsets committed", || async {
        (committed().await == total).then_some(())
    })
    .await;
    let (s, b) = w2.send("PUT", "/connectors/upsert-a/stop", None).await;
    assert_eq!(s, 204, "{b}");
    eventually(Duration::from_secs(60), "upsert-a STOPPED", || async {
        let s = w2.get("/connectors/upsert-a/status").await.ok()?;
        (s["connector"]["state"] == "STOPPED").then_some(())
    })
    .await;
    // Connect refuses (500, "can be safely retried") while the group still has members: the
    // killed worker's consumers stay in it until their session times out.
    eventually(Duration::from_secs(90), "offsets reset", || async {
        let (s, b) = w2
            .send("DELETE", "/connectors/upsert-a/offsets", None)
            .await;
        assert!(
            s == 200 || (s == 500 && b.to_string().contains("safely retried")),
            "{s} {b}"
        );
        (s == 200).then_some(())
    })
    .await;
    assert_eq!(committed().await, 0, "offsets reset");
    let (s, b) = w2.send("PUT", "/connectors/upsert-a/resume", None).await;
    assert_eq!(s, 202, "{b}");
    eventually(
        Duration::from_secs(120),
        "the replay consumed every record",
        || async { (committed().await == total).then_some(()) },
    )
    .await;
    assert_eq!(
        table_map(&table).await,
        expected,
        "a replay changed the table"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn offsets_with_data_sink_writes_each_record_once_despite_crashes_and_rewinds() {
    const N: i64 = 3000;
    let spec = ClusterSpec::new("pg-offsets");
    let mut w1 = spec.start_worker().await;
    let mut w2 = spec.start_worker().await;
    let topic = unique("append");
    let table = unique_table("append");
    kafka::create_topics(&[&topic], 3).await;
    let config = json!({
        "connector.class": OFFSETS, "tasks.max": "3", "topics": topic,
        "connection.url": database_url(), "table.name.format": table,
        "auto.create": "true", "offsets.table.name": format!("{table}_offsets"),
    });
    create(&w1, "append", config.clone()).await;
    let records: Vec<_> = (0..N)
        .map(|n| {
            (
                None,
                Some(json!({"n": n, "pad": "x".repeat(20)}).to_string()),
            )
        })
        .collect();
    for (i, chunk) in records.chunks(500).enumerate() {
        kafka::produce(&topic, chunk.iter().cloned()).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        // Crash workers at different points of the load; restart them.
        if i == 1 {
            w1.kill9();
        }
        if i == 3 {
            w1.restart().await;
            w2.kill9();
        }
    }
    w2.restart().await;
    let seen = std::sync::atomic::AtomicI64::new(0);
    let waited = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let c = count(&table).await;
            seen.store(c, std::sync::atomic::Ordering::Relaxed);
            if c >= N {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    let rows = seen.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        waited.is_ok(),
        "after 120 s the table has {rows} of {N} rows; logs:\n{}\n{}",
        w1.log_text(),
        w2.log_text()
    );

    // Rewind the group behind the database: delete the connector and its group offsets, then
    // recreate it; the task must seek to the stored offsets and write nothing twice.
    let (s, b) = w1.send("DELETE", "/connectors/append", None).await;
    assert!(s == 204, "{s} {b}");
    tokio::time::sleep(Duration::from_secs(5)).await;
    delete_group("connect-append").await;
    create(&w1, "append", config).await;
    tokio::time::sleep(Duration::from_secs(15)).await;
    let p = pool().await;
    let row = sqlx::query(&format!(
        "SELECT count(*), count(DISTINCT (value_n)) FROM (SELECT n AS value_n FROM {table}) t"
    ))
    .fetch_one(&p)
    .await
    .unwrap();
    assert_eq!((row.get::<i64, _>(0), row.get::<i64, _>(1)), (N, N));
}

async fn delete_group(group: &str) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = kafka::client_config().create().unwrap();
    // A consumer of a SIGKILLed worker stays a member until its session times out (45 s by
    // default), and the group cannot be deleted before: CI saw 30 s of tries run out.
    for _ in 0..90 {
        let r = admin
            .delete_groups(&[group], &AdminOptions::new())
            .await
            .unwrap();
        match &r[0] {
            Ok(_) => return,
            Err((_, code)) => {
                // Not empty yet (the consumer is leaving) or already gone.
                if code.to_string().contains("does not exist")
                    || format!("{code:?}").contains("GroupIdNotFound")
                {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
    panic!("could not delete group {group}");
}

/// (value, headers) of every record in `topic` up to `n`.
fn read_with_headers(topic: &str, n: usize) -> Vec<(Option<String>, BTreeMap<String, String>)> {
    let consumer: BaseConsumer = kafka::client_config()
        .set("group.id", unique("dlq-reader"))
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut out = Vec::new();
    while out.len() < n && std::time::Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let headers = m
                .headers()
                .map(|hs| {
                    hs.iter()
                        .map(|h| {
                            (
                                h.key.to_owned(),
                                String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push((
                m.payload().map(|v| String::from_utf8_lossy(v).into_owned()),
                headers,
            ));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn poison_records_go_to_the_dead_letter_queue_or_fail_the_task() {
    let spec = ClusterSpec::new("pg-dlq");
    let w = spec.start_worker().await;
    let topic = unique("dlq-in");
    let dlq = unique("dlq");
    let table = unique_table("dlq");
    kafka::create_topics(&[&topic], 1).await;
    let p = pool().await;
    sqlx::query(&format!(
        "CREATE TABLE {table} (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)"
    ))
    .execute(&p)
    .await
    .unwrap();
    let mut records = Vec::new();
    for id in 0..30i64 {
        records.push((Some(id.to_string()), Some(json!({"v": id}).to_string())));
    }
    records.insert(5, (Some("100".into()), Some("{not json".into())));
    records.insert(
        12,
        (Some("101".into()), Some(json!({"v": "abc"}).to_string())),
    );
    records.insert(20, (Some("102".into()), Some(json!({"w": 1}).to_string())));
    kafka::produce(&topic, records.into_iter()).await;
    let base = json!({
        "connector.class": UPSERT, "tasks.max": "1", "topics": topic,
        "connection.url": database_url(), "table.name.format": table,
        "pk.mode": "record_key", "pk.fields": "id",
    });
    let mut tolerant = base.clone();
    for (k, v) in [
        ("errors.tolerance", "all"),
        ("errors.log.enable", "true"),
        ("errors.log.include.messages", "true"),
        ("errors.deadletterqueue.topic.name", dlq.as_str()),
        ("errors.deadletterqueue.topic.replication.factor", "1"),
        ("errors.deadletterqueue.context.headers.enable", "true"),
    ] {
        tolerant[k] = json!(v);
    }
    create(&w, "dlq-all", tolerant).await;
    eventually(Duration::from_secs(60), "30 good rows", || async {
        (count(&table).await == 30).then_some(())
    })
    .await;
    let dead = read_with_headers(&dlq, 3);
    assert_eq!(dead.len(), 3, "{dead:?}");
    assert_eq!(dead[0].0.as_deref(), Some("{not json"), "original bytes");
    assert_eq!(dead[0].1["__connect.errors.stage"], "VALUE_CONVERTER");
    assert_eq!(dead[0].1["__connect.errors.offset"], "5");
    assert_eq!(dead[0].1["__connect.errors.topic"], topic);
    assert_eq!(dead[0].1["__connect.errors.partition"], "0");
    assert_eq!(dead[0].1["__connect.errors.connector.name"], "dlq-all");
    assert_eq!(dead[0].1["__connect.errors.task.id"], "0");
    assert_eq!(dead[1].1["__connect.errors.stage"], "TASK_PUT");
    assert_eq!(dead[1].1["__connect.errors.offset"], "12");
    assert_eq!(
        dead[1].1["__connect.errors.class.name"],
        "connect_connectors::jdbc::PostgresSinkTask"
    );
    assert!(
        dead[1].1["__connect.errors.exception.message"].contains("abc"),
        "{:?}",
        dead[1].1
    );
    for key in [
        "__connect.errors.exception.class.name",
        "__connect.errors.exception.stacktrace",
    ] {
        assert!(dead[1].1.contains_key(key), "{key}");
    }
    assert_eq!(dead[2].1["__connect.errors.offset"], "20");

    // errors.tolerance=none: the task fails with the reason.
    create(&w, "dlq-none", base).await;
    let trace = eventually(Duration::from_secs(60), "task FAILED", || async {
        let s = w.get("/connectors/dlq-none/status").await.ok()?;
        let t = &s["tasks"][0];
        (t["state"] == "FAILED").then(|| t["trace"].as_str().unwrap_or_default().to_owned())
    })
    .await;
    assert!(trace.contains("Tolerance exceeded"), "{trace}");
    assert!(trace.contains("failed to convert value"), "{trace}");
}

/// A rewind asked for in `open` decides where a partition starts, whatever `auto.offset.reset`
/// says: the offsets-with-data sink, with nothing stored yet, rewinds to 0 and so writes the
/// records the topic held before it existed even with `consumer.override.auto.offset.reset=latest`.
#[tokio::test(flavor = "multi_thread")]
async fn a_rewind_in_open_wins_over_auto_offset_reset_latest() {
    const N: i64 = 20;
    let topic = unique("rewind-latest");
    let table = unique_table("rewind_latest");
    kafka::create_topics(&[&topic], 2).await;
    kafka::produce(
        &topic,
        (0..N).map(|n| (None, Some(json!({"n": n}).to_string()))),
    )
    .await;
    let spec = ClusterSpec::new("pg-rewind-latest");
    let w = spec.start_worker().await;
    create(
        &w,
        "rewind",
        json!({
            "connector.class": OFFSETS, "tasks.max": "1", "topics": topic,
            "connection.url": database_url(), "table.name.format": table,
            "auto.create": "true", "offsets.table.name": format!("{table}_offsets"),
            "consumer.override.auto.offset.reset": "latest",
        }),
    )
    .await;
    eventually(
        Duration::from_secs(90),
        "every record produced before the sink existed written",
        || async { (count(&table).await == N).then_some(()) },
    )
    .await;
}
