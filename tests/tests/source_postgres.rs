//! The Postgres table source under exactly-once (KIP-618) with killed workers: rows inserted
//! into two tables while the connector runs, with `exactly.once.support=required` and workers
//! SIGKILLed and restarted mid-run, appear in the topics exactly once under `read_committed`,
//! in id order per table (one partition per table's topic).
//!
//! Two runs: `transaction.boundary=poll` in `incrementing` mode, and
//! `transaction.boundary=interval` in `timestamp+incrementing` mode.

// Progress (kill rounds, counts) goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use connect_tests::kafka::{self, Isolation, Record};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually, running_tasks};
use serde_json::{Value, json};

const SOURCE: &str = "connect_connectors::jdbc::PostgresSourceConnector";
/// Rows per table at least, inserted in batches of `BATCH` every `BATCH_PAUSE`; the writer goes on
/// past this until every kill round has happened, so a slow restart cannot end the writing early.
const ROWS: i64 = 3000;
const BATCH: i64 = 50;
const BATCH_PAUSE: Duration = Duration::from_millis(300);

/// Reads `topic` to its end under `read_committed` until it has `expected` records (then once
/// more, a little later, so late duplicates would be seen). Records in offset order.
async fn read_committed(topic: &str, expected: usize) -> Vec<Record> {
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(180);
        let read = || {
            let mut r = kafka::read_all(
                &[&topic],
                Isolation::ReadCommitted,
                Duration::from_secs(120),
            );
            r.sort_by_key(|r| (r.partition, r.offset));
            r
        };
        loop {
            let records = read();
            if records.len() >= expected || std::time::Instant::now() > deadline {
                std::thread::sleep(Duration::from_secs(3));
                return read();
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    })
    .await
    .expect("reader thread")
}

/// Each id 1..=rows exactly once, in increasing order, with its row's payload.
fn assert_rows_exactly_once_in_order(topic: &str, records: &[Record], rows: i64) {
    assert!(
        records.iter().all(|r| r.partition == 0),
        "{topic}: one partition expected"
    );
    let mut ids = Vec::with_capacity(records.len());
    for r in records {
        let id: i64 = r
            .key
            .as_deref()
            .and_then(|k| k.parse().ok())
            .unwrap_or_else(|| panic!("{topic}: key is not the id: {r:?}"));
        let value: Value = serde_json::from_str(r.value.as_deref().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{topic}: value is not JSON ({e}): {r:?}"));
        assert_eq!(value["id"], json!(id), "{topic}: key and value disagree");
        assert_eq!(
            value["payload"],
            json!(format!("row-{id}")),
            "{topic}: payload of row {id}"
        );
        ids.push(id);
    }
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for id in &ids {
        *counts.entry(*id).or_default() += 1;
    }
    let dups: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).take(10).collect();
    assert!(
        dups.is_empty(),
        "{topic}: duplicates under read_committed: {dups:?}"
    );
    let missing: Vec<i64> = (1..=rows)
        .filter(|id| !counts.contains_key(id))
        .take(10)
        .collect();
    assert!(
        missing.is_empty(),
        "{topic}: rows missing, e.g. {missing:?}"
    );
    let disorder: Vec<_> = ids.windows(2).filter(|w| w[0] >= w[1]).take(10).collect();
    assert!(disorder.is_empty(), "{topic}: out of order: {disorder:?}");
    assert_eq!(ids.len() as i64, rows, "{topic}: each row exactly once");
}

/// 2 workers, one task per table; rows inserted while workers are SIGKILLed and restarted.
async fn crash_run(boundary: &str, mode: &str) {
    let spec = ClusterSpec::new("pgsrc").set("exactly.once.source.support", "enabled");
    let mut workers = [spec.start_worker().await, spec.start_worker().await];
    let tables = [unique_table("src_a"), unique_table("src_b")];
    let prefix = format!("{}-", unique("pgsrc"));
    let topics: Vec<String> = tables.iter().map(|t| format!("{prefix}{t}")).collect();
    let topic_refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    // One partition per table: the topic's order is the table's order.
    kafka::create_topics(&topic_refs, 1).await;
    let db = pool().await;
    for t in &tables {
        sqlx::query(&format!(
            "CREATE TABLE {t} (id serial PRIMARY KEY, payload text NOT NULL, \
             ts timestamptz NOT NULL DEFAULT now())"
        ))
        .execute(&db)
        .await
        .expect("create table");
    }
    // A few rows before the connector exists.
    insert_batch(&db, &tables[0], 1, 20).await;
    insert_batch(&db, &tables[1], 1, 20).await;

    let mut config = json!({
        "connector.class": SOURCE,
        "tasks.max": "2",
        "connection.url": database_url(),
        "tables": tables.join(","),
        "mode": mode,
        "incrementing.column.name": "id",
        "topic.prefix": prefix,
        "batch.max.rows": "40",
        "poll.interval.ms": "100",
        "exactly.once.support": "required",
        "transaction.boundary": boundary,
        "transaction.boundary.interval.ms": "400",
    });
    if mode == "timestamp+incrementing" {
        config["timestamp.column.name"] = json!("ts");
    }
    create_connector(&workers[0], "pg-source", config).await;
    eventually(Duration::from_secs(90), "both tasks running", || {
        running_tasks(&workers[0], "pg-source", 2)
    })
    .await;

    // The writer: sequential batches, one statement (one transaction) each, from one session,
    // so ids become visible in order (the source's documented assumption). It writes at least
    // ROWS rows and goes on until every kill round below has started, so each kill lands while
    // rows are being inserted however long the restarts take on a loaded machine.
    const KILL_ROUNDS: usize = 5;
    let kills = Arc::new(AtomicUsize::new(0));
    let writer = {
        let db = db.clone();
        let tables = tables.clone();
        let kills = kills.clone();
        tokio::spawn(async move {
            let mut next = 21;
            while next <= ROWS || kills.load(Ordering::SeqCst) < KILL_ROUNDS {
                let last = next + BATCH - 1;
                for t in &tables {
                    insert_batch(&db, t, next, last).await;
                }
                next = last + 1;
                tokio::time::sleep(BATCH_PAUSE).await;
            }
            next - 1
        })
    };

    // Kills while the writer runs, each worker in turn, with the connector catching up after
    // the last ones.
    for (round, pause_ms) in [1500u64, 2500, 1000, 3000, 2000].into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(pause_ms)).await;
        let i = round % 2;
        assert!(
            !writer.is_finished(),
            "the writer stopped before kill round {round}"
        );
        println!("round {round}: SIGKILL worker {}", workers[i].worker_id());
        workers[i].kill9();
        kills.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300 + 200 * round as u64)).await;
        workers[i].restart().await;
    }
    let rows = writer.await.expect("writer");
    println!("the writer inserted {rows} rows per table");
    let (n,): (i64,) = sqlx::query_as(&format!("SELECT count(*) FROM {}", tables[1]))
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(n, rows, "the writer inserted every row");
    db.close().await;

    for topic in &topics {
        let records = read_committed(topic, rows as usize).await;
        assert_rows_exactly_once_in_order(topic, &records, rows);
        let t = topic.clone();
        let uncommitted = tokio::task::spawn_blocking(move || {
            kafka::read_all(&[&t], Isolation::ReadUncommitted, Duration::from_secs(120)).len()
        })
        .await
        .unwrap();
        println!(
            "{topic}: {} rows exactly once in order under read_committed; read_uncommitted sees {uncommitted}",
            records.len()
        );
    }
    let status = workers[0]
        .get("/connectors/pg-source/status")
        .await
        .expect("status");
    assert!(
        status["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().all(|t| t["state"] == "RUNNING")),
        "tasks still running: {status}"
    );
}

/// Rows `first..=last` with payload `row-<id>`; the serial assigns exactly these ids because
/// one session inserts them in order into a fresh table.
async fn insert_batch(db: &sqlx::PgPool, table: &str, first: i64, last: i64) {
    sqlx::query(&format!(
        "INSERT INTO {table} (payload) SELECT 'row-' || g FROM generate_series($1::bigint, $2::bigint) g ORDER BY g"
    ))
    .bind(first)
    .bind(last)
    .execute(db)
    .await
    .expect("insert rows");
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_exactly_once_in_order_with_killed_workers_poll_boundary() {
    crash_run("poll", "incrementing").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_exactly_once_in_order_with_killed_workers_interval_boundary() {
    crash_run("interval", "timestamp+incrementing").await;
}
