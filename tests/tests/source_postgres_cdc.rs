//! The Postgres CDC source (logical replication, Debezium's records) under exactly-once with
//! killed workers: rows there before the connector arrive as snapshot reads (`op` "r"), rows
//! inserted and updated while workers are SIGKILLed and restarted arrive as "c" and "u" events,
//! each exactly once under `read_committed`, in commit order. And what it refuses: a captured
//! table PostgreSQL cannot publish updates of fails the task, naming the table.

// Progress goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually, running_tasks};
use serde_json::{Value, json};

const CDC: &str = "connect_connectors::cdc::PostgresCdcSourceConnector";
const SNAPSHOT_ROWS: i64 = 300;

fn cdc_config(table: &str, name: &str, prefix: &str) -> Value {
    json!({
        "connector.class": CDC,
        "tasks.max": "1",
        "connection.url": database_url(),
        "topic.prefix": prefix,
        "table.include.list": format!("public\\.{table}"),
        "slot.name": name.replace('-', "_"),
        "publication.name": format!("{}_pub", name.replace('-', "_")),
        "publication.autocreate.mode": "filtered",
        "exactly.once.support": "required",
    })
}

async fn drop_slot_and_publication(db: &sqlx::PgPool, name: &str) {
    let slot = name.replace('-', "_");
    for _ in 0..50 {
        let dropped = sqlx::query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active",
        )
        .bind(&slot)
        .execute(db)
        .await;
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1")
                .bind(&slot)
                .fetch_one(db)
                .await
                .unwrap_or(0);
        if dropped.is_ok() && left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = sqlx::query(&format!("DROP PUBLICATION IF EXISTS {slot}_pub"))
        .execute(db)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn snapshot_then_changes_exactly_once_with_killed_workers() {
    let spec = ClusterSpec::new("pgcdc").set("exactly.once.source.support", "enabled");
    let mut workers = [spec.start_worker().await, spec.start_worker().await];
    let table = unique_table("cdc_rows");
    let name = unique("pgcdc");
    let prefix = unique("cdc");
    let topic = format!("{prefix}.public.{table}");
    kafka::create_topics(&[&topic], 1).await;
    let db = pool().await;
    sqlx::query(&format!(
        "CREATE TABLE {table} (id bigint PRIMARY KEY, payload text NOT NULL)"
    ))
    .execute(&db)
    .await
    .expect("create table");
    sqlx::query(&format!(
        "INSERT INTO {table} SELECT g, 'row-' || g FROM generate_series(1, {SNAPSHOT_ROWS}) g"
    ))
    .execute(&db)
    .await
    .unwrap();

    create_connector(&workers[0], &name, cdc_config(&table, &name, &prefix)).await;
    eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&workers[0], &name, 1)
    })
    .await;
    // The snapshot is done once its rows are committed.
    let t = topic.clone();
    tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(90),
            |r| r.len() >= SNAPSHOT_ROWS as usize,
        )
    })
    .await
    .unwrap();

    // The writer: one transaction per batch inserting 20 rows and updating every tenth row
    // of the previous batch, while the workers are killed in turn.
    const KILL_ROUNDS: usize = 4;
    let kills = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (db, table, kills) = (db.clone(), table.clone(), kills.clone());
        tokio::spawn(async move {
            let mut next = SNAPSHOT_ROWS + 1;
            let mut updated = Vec::new();
            while next <= SNAPSHOT_ROWS + 600 || kills.load(Ordering::SeqCst) < KILL_ROUNDS {
                let last = next + 19;
                let mut tx = db.begin().await.unwrap();
                sqlx::query(&format!(
                    "INSERT INTO {table} SELECT g, 'row-' || g FROM generate_series($1::bigint, $2::bigint) g"
                ))
                .bind(next)
                .bind(last)
                .execute(&mut *tx)
                .await
                .unwrap();
                let upd = next - 20;
                if upd > SNAPSHOT_ROWS {
                    sqlx::query(&format!(
                        "UPDATE {table} SET payload = payload || '-u' WHERE id = $1"
                    ))
                    .bind(upd)
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                    updated.push(upd);
                }
                tx.commit().await.unwrap();
                next = last + 1;
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            (next - 1, updated)
        })
    };
    for (round, pause_ms) in [1200u64, 2000, 900, 1600].into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(pause_ms)).await;
        let i = round % 2;
        println!("round {round}: SIGKILL worker {}", workers[i].worker_id());
        workers[i].kill9();
        kills.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        workers[i].restart().await;
    }
    let (rows, updated) = writer.await.expect("writer");
    println!("{rows} rows, {} updates", updated.len());
    let expected = rows as usize + updated.len();

    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(180),
            |r| r.len() >= expected,
        );
        std::thread::sleep(Duration::from_secs(3));
        let mut r = kafka::read_all(&[&t], Isolation::ReadCommitted, Duration::from_secs(60));
        r.sort_by_key(|r| r.offset);
        r
    })
    .await
    .unwrap();

    let mut events: BTreeMap<(String, i64), usize> = BTreeMap::new();
    let mut order = Vec::new();
    for r in &records {
        let key: Value = serde_json::from_str(r.key.as_deref().unwrap_or("null")).unwrap();
        let value: Value = serde_json::from_str(r.value.as_deref().unwrap_or("null")).unwrap();
        let id = key["id"].as_i64().unwrap_or_else(|| panic!("key {key}"));
        let op = value["op"]
            .as_str()
            .unwrap_or_else(|| panic!("value {value}"))
            .to_owned();
        let payload = value["after"]["payload"].as_str().unwrap_or_default();
        let want = if op == "u" {
            format!("row-{id}-u")
        } else {
            format!("row-{id}")
        };
        assert_eq!(payload, want, "{op} of {id}: {value}");
        assert_eq!(value["source"]["table"], json!(table));
        if op != "r" {
            order.push((value["source"]["lsn"].as_i64().unwrap_or(0), id));
        }
        *events.entry((op, id)).or_default() += 1;
    }
    let dups: Vec<_> = events.iter().filter(|(_, n)| **n > 1).take(10).collect();
    assert!(dups.is_empty(), "duplicates under read_committed: {dups:?}");
    let mut missing = Vec::new();
    for id in 1..=rows {
        let op = if id <= SNAPSHOT_ROWS { "r" } else { "c" };
        if !events.contains_key(&(op.to_owned(), id)) {
            missing.push((op, id));
        }
    }
    for id in &updated {
        if !events.contains_key(&("u".to_owned(), *id)) {
            missing.push(("u", *id));
        }
    }
    assert!(
        missing.is_empty(),
        "events missing, e.g. {:?}",
        &missing[..missing.len().min(10)]
    );
    assert_eq!(records.len(), expected, "each event exactly once");
    assert!(
        order.windows(2).all(|w| w[0].0 <= w[1].0),
        "streamed events in LSN order"
    );
    println!("{} events exactly once under read_committed", records.len());

    let (status, _) = workers[0]
        .send("DELETE", &format!("/connectors/{name}"), None)
        .await;
    assert!(status < 300);
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop_slot_and_publication(&db, &name).await;
    db.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_table_postgres_cannot_publish_updates_of_fails_the_task_naming_it() {
    let spec = ClusterSpec::new("pgcdc-nopk");
    let w = spec.start_worker().await;
    let table = unique_table("cdc_nopk");
    let name = unique("pgcdc-nopk");
    let db = pool().await;
    sqlx::query(&format!("CREATE TABLE {table} (id bigint, payload text)"))
        .execute(&db)
        .await
        .unwrap();
    let mut config = cdc_config(&table, &name, &unique("cdc"));
    config["exactly.once.support"] = json!("requested");
    create_connector(&w, &name, config).await;
    let trace = eventually(Duration::from_secs(60), "the task failed", || async {
        let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        let t = &s["tasks"][0];
        (t["state"] == "FAILED").then(|| t["trace"].as_str().unwrap_or_default().to_owned())
    })
    .await;
    assert!(
        trace.contains(&format!("public.{table} has no primary key")),
        "{trace}"
    );
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    drop_slot_and_publication(&db, &name).await;
    db.close().await;
}
