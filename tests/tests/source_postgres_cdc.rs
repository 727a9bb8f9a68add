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

/// A test's table (created with `columns`), connector name, topic prefix and its one-partition
/// topic, and a pool.
struct Setup {
    table: String,
    name: String,
    prefix: String,
    topic: String,
    db: sqlx::PgPool,
}

async fn setup(kind: &str, columns: &str) -> Setup {
    let table = unique_table(&format!("cdc_{kind}"));
    let name = unique(&format!("pgcdc-{kind}"));
    let prefix = unique("cdc");
    let topic = format!("{prefix}.public.{table}");
    kafka::create_topics(&[&topic], 1).await;
    let db = pool().await;
    sqlx::query(&format!("CREATE TABLE {table} ({columns})"))
        .execute(&db)
        .await
        .expect("create table");
    Setup {
        table,
        name,
        prefix,
        topic,
        db,
    }
}

/// The topic's end offset (one partition), records of open and aborted transactions included.
fn end_offset(topic: &str) -> i64 {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = kafka::client_config()
        .set("group.id", unique("end-offset"))
        .create()
        .expect("consumer");
    consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(5))
        .map(|(_, high)| high)
        .unwrap_or(0)
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
    let Setup {
        table,
        name,
        prefix,
        topic,
        db,
    } = setup("rows", "id bigint PRIMARY KEY, payload text NOT NULL").await;
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
    // A zombie: the worker running the task is frozen (SIGSTOP) until the other one runs the
    // task (its predecessor's replication session is ended, its producer fenced), then thawed.
    let owner = eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&workers[0], &name, 1)
    })
    .await
    .get(&0)
    .cloned()
    .unwrap_or_default();
    let frozen = workers
        .iter()
        .position(|w| w.worker_id() == owner)
        .unwrap_or(0);
    let other = 1 - frozen;
    println!("SIGSTOP worker {owner}");
    workers[frozen].pause();
    eventually(
        Duration::from_secs(90),
        "the task moved to the other worker",
        || async {
            let tasks = running_tasks(&workers[other], &name, 1).await?;
            (tasks.get(&0) == Some(&workers[other].worker_id())).then_some(())
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    workers[frozen].resume();
    println!("SIGCONT worker {owner}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    kills.fetch_add(KILL_ROUNDS, Ordering::SeqCst);
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

/// Kills during the snapshot itself: the worker running the task is SIGKILLed once and frozen
/// (SIGSTOP, then thawed once the other worker took the task over) once while the snapshot of
/// 30 000 rows runs, and SIGKILLed twice more while it streams, with a writer inserting,
/// updating (each update bumps the row's version) and deleting rows all along. Read under
/// `read_committed`, each row's events are its history from its snapshot read or insert on,
/// each version exactly once and in order, ending at the table's final state.
#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_killed_midway_resumes_without_duplicates_or_gaps() {
    const ROWS: i64 = 30_000;
    let spec = ClusterSpec::new("pgcdc-snap").set("exactly.once.source.support", "enabled");
    let mut workers = [spec.start_worker().await, spec.start_worker().await];
    let Setup {
        table,
        name,
        prefix,
        topic,
        db,
    } = setup(
        "snap",
        "id bigint PRIMARY KEY, v int NOT NULL, pad text NOT NULL",
    )
    .await;
    sqlx::query(&format!(
        "INSERT INTO {table} SELECT g, 0, repeat('x', 100) FROM generate_series(1, {ROWS}) g"
    ))
    .execute(&db)
    .await
    .unwrap();
    let mut config = cdc_config(&table, &name, &prefix);
    config["snapshot.fetch.size"] = json!("100");
    config["max.batch.size"] = json!("100");
    create_connector(&workers[0], &name, config).await;

    // The writer: inserts new rows, bumps the version of random rows (of the whole key range,
    // so of rows the snapshot has and has not read yet) and deletes some, 20 transactions a
    // second, until stopped.
    let stop = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (db, table, stop) = (db.clone(), table.clone(), stop.clone());
        tokio::spawn(async move {
            let mut next = ROWS + 1;
            let mut n: i64 = 0;
            while stop.load(Ordering::SeqCst) == 0 {
                n += 1;
                let mut tx = db.begin().await.unwrap();
                sqlx::query(&format!(
                    "INSERT INTO {table} SELECT g, 0, 'new' FROM generate_series($1::bigint, $1::bigint + 4) g"
                ))
                .bind(next)
                .execute(&mut *tx)
                .await
                .unwrap();
                next += 5;
                // Spread over the key range with a stride, deterministic.
                for k in 0..10i64 {
                    let id = (n * 7919 + k * 3001) % (next - 1) + 1;
                    sqlx::query(&format!("UPDATE {table} SET v = v + 1 WHERE id = $1"))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                }
                if n % 3 == 0 {
                    let id = (n * 104_729) % (next - 1) + 1;
                    sqlx::query(&format!("DELETE FROM {table} WHERE id = $1"))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                }
                tx.commit().await.unwrap();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };

    // A kill and a freeze while the snapshot runs (each once another 4 000 of its rows are in
    // the topic, uncommitted included, and before all are), two kills while streaming.
    let mut last_end = 0;
    for round in 0..4 {
        let tasks = eventually(Duration::from_secs(90), "the task running", || {
            running_tasks(&workers[0], &name, 1)
        })
        .await;
        if round < 2 {
            let target = last_end + if round == 0 { 4000 } else { 2000 };
            let t = topic.clone();
            last_end = eventually(Duration::from_secs(90), "snapshot rows arriving", || {
                let t = t.clone();
                async move {
                    let end = tokio::task::spawn_blocking(move || end_offset(&t))
                        .await
                        .ok()?;
                    if end < target {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    (end >= target).then_some(end)
                }
            })
            .await;
            // The first kill must land mid-snapshot; the freeze usually does too (on a loaded
            // machine the resumed snapshot can finish first: then it freezes the stream).
            assert!(
                round > 0 || last_end < ROWS,
                "round {round}: the snapshot ended before the kill ({last_end} records); the test needs more rows"
            );
        } else {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        let owner = tasks.get(&0).cloned().unwrap_or_default();
        let i = workers
            .iter()
            .position(|w| w.worker_id() == owner)
            .unwrap_or(round % 2);
        if round == 1 {
            // A zombie mid-snapshot: frozen until the other worker runs the task (and resumes
            // the snapshot), then thawed; its producer is fenced.
            println!("round {round}: {last_end} records in the topic; SIGSTOP worker {owner}");
            workers[i].pause();
            let other = workers[1 - i].worker_id();
            eventually(
                Duration::from_secs(90),
                "the task on the other worker",
                || async {
                    let tasks = running_tasks(&workers[1 - i], &name, 1).await?;
                    (tasks.get(&0) == Some(&other)).then_some(())
                },
            )
            .await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            workers[i].resume();
            println!("round {round}: SIGCONT worker {owner}");
            continue;
        }
        println!("round {round}: {last_end} records in the topic; SIGKILL worker {owner}");
        workers[i].kill9();
        tokio::time::sleep(Duration::from_millis(300)).await;
        workers[i].restart().await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(1, Ordering::SeqCst);
    writer.await.unwrap();

    // The table's final state: id -> version.
    let rows: Vec<(i64, i32)> = sqlx::query_as(&format!("SELECT id, v FROM {table}"))
        .fetch_all(&db)
        .await
        .unwrap();
    let expected: BTreeMap<i64, i64> = rows.into_iter().map(|(id, v)| (id, i64::from(v))).collect();
    let t = topic.clone();
    let want = expected.clone();
    let records = tokio::task::spawn_blocking(move || {
        // Until every row's final version has arrived (and a little more, for duplicates).
        let replay = |records: &[kafka::Record]| {
            let mut state: BTreeMap<i64, i64> = BTreeMap::new();
            for r in records {
                let Some(v) = r.value.as_deref() else {
                    continue;
                };
                let value: Value = serde_json::from_str(v).unwrap_or(Value::Null);
                let key: Value =
                    serde_json::from_str(r.key.as_deref().unwrap_or("null")).unwrap_or(Value::Null);
                let Some(id) = key["id"].as_i64() else {
                    continue;
                };
                match value["op"].as_str() {
                    Some("d") => {
                        state.remove(&id);
                    }
                    Some(_) => {
                        state.insert(id, value["after"]["v"].as_i64().unwrap_or(-1));
                    }
                    None => {}
                }
            }
            state
        };
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(240),
            |r| replay(r) == want,
        );
        std::thread::sleep(Duration::from_secs(3));
        let mut r = kafka::read_all(&[&t], Isolation::ReadCommitted, Duration::from_secs(60));
        r.sort_by_key(|r| r.offset);
        r
    })
    .await
    .unwrap();

    // Each row's history: one first event (r, or c for a row inserted after its part of the
    // snapshot was read), then versions one by one, a delete last.
    let mut history: BTreeMap<i64, Vec<(String, i64)>> = BTreeMap::new();
    for r in &records {
        let Some(v) = r.value.as_deref() else {
            continue;
        }; // tombstones
        let value: Value = serde_json::from_str(v).unwrap();
        let key: Value = serde_json::from_str(r.key.as_deref().unwrap()).unwrap();
        let id = key["id"].as_i64().unwrap();
        let op = value["op"].as_str().unwrap().to_owned();
        let version = if op == "d" {
            -1
        } else {
            value["after"]["v"].as_i64().unwrap()
        };
        history.entry(id).or_default().push((op, version));
    }
    let mut problems = Vec::new();
    for (id, events) in &history {
        let mut iter = events.iter();
        let (first, mut version) = iter.next().cloned().unwrap();
        if first != "r" && !(first == "c" && version == 0) {
            problems.push(format!("{id}: starts with {first} v{version}: {events:?}"));
            continue;
        }
        let mut deleted = first == "d";
        for (op, v) in iter {
            match op.as_str() {
                "u" if !deleted && *v == version + 1 => version = *v,
                "d" if !deleted => deleted = true,
                _ => {
                    problems.push(format!("{id}: {op} v{v} after v{version}: {events:?}"));
                    break;
                }
            }
        }
        match (deleted, expected.get(id)) {
            (false, Some(v)) if *v == version => {}
            (true, None) => {}
            (_, want) => problems.push(format!(
                "{id}: ends at v{version} (deleted {deleted}), the table has {want:?}: {events:?}"
            )),
        }
    }
    for id in expected.keys() {
        if !history.contains_key(id) {
            problems.push(format!("{id}: no event"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} rows wrong, e.g.:\n{}",
        problems.len(),
        problems[..problems.len().min(10)].join("\n")
    );
    println!(
        "{} events for {} rows: each row's history exactly once under read_committed",
        records.len(),
        history.len()
    );
    let _ = workers[0]
        .send("DELETE", &format!("/connectors/{name}"), None)
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop_slot_and_publication(&db, &name).await;
    db.close().await;
}

/// `transaction.boundary=connector`: one Kafka transaction per PostgreSQL transaction. In a
/// one-partition topic a Kafka transaction's records have consecutive offsets and its commit
/// marker takes the next one, so the runs of consecutive offsets are the transactions: each
/// must hold exactly one PostgreSQL transaction's changes (one txId, all of its rows).
/// And a column added while the connector runs is in the next events, without a restart.
#[tokio::test(flavor = "multi_thread")]
async fn one_kafka_transaction_per_postgres_transaction_and_schema_changes_followed() {
    let spec = ClusterSpec::new("pgcdc-tx").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let Setup {
        table,
        name,
        prefix,
        topic,
        db,
    } = setup("tx", "id bigint PRIMARY KEY, n int NOT NULL").await;
    let mut config = cdc_config(&table, &name, &prefix);
    // Over TLS, the server's certificate checked (the snapshot's, catalog's and replication
    // connections alike).
    config["connection.url"] = json!(format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        database_url(),
        connect_tests::postgres::ca().display()
    ));
    config["transaction.boundary"] = json!("connector");
    config["snapshot.mode"] = json!("no_data");
    config["heartbeat.interval.ms"] = json!("500");
    create_connector(&w, &name, config).await;
    eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    // Streaming from now on: wait for the slot.
    let slot = name.replace('-', "_");
    eventually(Duration::from_secs(60), "the slot in use", || {
        let (db, slot) = (db.clone(), slot.clone());
        async move {
            let active: bool =
                sqlx::query_scalar("SELECT active FROM pg_replication_slots WHERE slot_name = $1")
                    .bind(&slot)
                    .fetch_optional(&db)
                    .await
                    .ok()??;
            active.then_some(())
        }
    })
    .await;
    // Transactions of 1 to 7 rows.
    let mut next = 1i64;
    let mut sizes = Vec::new();
    for i in 0..30i64 {
        let size = i % 7 + 1;
        sqlx::query(&format!(
            "INSERT INTO {table} SELECT g, {i} FROM generate_series($1::bigint, $2::bigint) g"
        ))
        .bind(next)
        .bind(next + size - 1)
        .execute(&db)
        .await
        .unwrap();
        next += size;
        sizes.push(size as usize);
    }
    sqlx::query(&format!("ALTER TABLE {table} ADD COLUMN note text"))
        .execute(&db)
        .await
        .unwrap();
    sqlx::query(&format!("INSERT INTO {table} VALUES ($1, -1, 'added')"))
        .bind(next)
        .execute(&db)
        .await
        .unwrap();
    sizes.push(1);
    let total: usize = sizes.iter().sum();
    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        let mut r = kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(90),
            |r| r.len() >= total,
        );
        r.sort_by_key(|r| r.offset);
        r
    })
    .await
    .unwrap();
    assert_eq!(records.len(), total);
    let mut runs: Vec<Vec<(i64, i64)>> = Vec::new();
    let mut last_offset = -2;
    for r in &records {
        let value: Value = serde_json::from_str(r.value.as_deref().unwrap()).unwrap();
        let tx = value["source"]["txId"].as_i64().unwrap();
        let n = value["after"]["n"].as_i64().unwrap();
        if r.offset != last_offset + 1 {
            runs.push(Vec::new());
        }
        runs.last_mut().unwrap().push((tx, n));
        last_offset = r.offset;
    }
    let run_sizes: Vec<usize> = runs.iter().map(Vec::len).collect();
    assert_eq!(
        run_sizes, sizes,
        "Kafka transactions (runs of offsets) vs PostgreSQL's"
    );
    for run in &runs {
        assert!(
            run.iter().all(|(tx, n)| (*tx, *n) == run[0]),
            "one transaction per run: {run:?}"
        );
    }
    // The task's own metrics, next to the worker's.
    let metrics = eventually(
        Duration::from_secs(30),
        "the CDC task's metrics",
        || async {
            let text = reqwest::get(w.url("/metrics"))
                .await
                .ok()?
                .text()
                .await
                .ok()?;
            (text.contains("kafka_connect_task_plugin_cdc_lag_bytes{")
                && text.contains(&format!(
                    "kafka_connect_task_plugin_cdc_change_events{{connector=\"{name}\",task=\"0\"}}"
                )))
            .then_some(text)
        },
    )
    .await;
    assert!(
        metrics.trim_end().ends_with("# EOF"),
        "OpenMetrics text ends with # EOF"
    );
    let last: Value =
        serde_json::from_str(records.last().unwrap().value.as_deref().unwrap()).unwrap();
    assert_eq!(
        last["after"]["note"],
        json!("added"),
        "the added column: {last}"
    );

    // Heartbeats: with nothing to capture, the slot still moves past other writes.
    let other = unique_table("cdc_other");
    sqlx::query(&format!("CREATE TABLE {other} (id int)"))
        .execute(&db)
        .await
        .unwrap();
    let before: String = sqlx::query_scalar(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1",
    )
    .bind(&slot)
    .fetch_one(&db)
    .await
    .unwrap();
    sqlx::query(&format!(
        "INSERT INTO {other} SELECT generate_series(1, 1000)"
    ))
    .execute(&db)
    .await
    .unwrap();
    let after_write: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
        .fetch_one(&db)
        .await
        .unwrap();
    eventually(Duration::from_secs(60), "the slot past the other table's writes", || {
        let (db, slot, after_write) = (db.clone(), slot.clone(), after_write.clone());
        async move {
            let ahead: bool = sqlx::query_scalar(
                "SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1",
            )
            .bind(&slot)
            .bind(&after_write)
            .fetch_one(&db)
            .await
            .ok()?;
            ahead.then_some(())
        }
    })
    .await;
    println!("slot moved from {before} past {after_write} on heartbeats");

    // A dropped slot is a FAILED task that says so.
    let (status, _) = w
        .send("PUT", &format!("/connectors/{name}/stop"), None)
        .await;
    assert!(status < 300);
    eventually(Duration::from_secs(60), "the slot released", || {
        let (db, slot) = (db.clone(), slot.clone());
        async move {
            let active: Option<bool> =
                sqlx::query_scalar("SELECT active FROM pg_replication_slots WHERE slot_name = $1")
                    .bind(&slot)
                    .fetch_optional(&db)
                    .await
                    .ok()?;
            (active == Some(false)).then_some(())
        }
    })
    .await;
    sqlx::query("SELECT pg_drop_replication_slot($1)")
        .bind(&slot)
        .execute(&db)
        .await
        .unwrap();
    let (status, _) = w
        .send("PUT", &format!("/connectors/{name}/resume"), None)
        .await;
    assert!(status < 300);
    let trace = eventually(Duration::from_secs(60), "the task failed", || async {
        let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        let t = &s["tasks"][0];
        (t["state"] == "FAILED").then(|| t["trace"].as_str().unwrap_or_default().to_owned())
    })
    .await;
    assert!(
        trace.contains(&format!("Replication slot {slot} does not exist")),
        "{trace}"
    );
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    drop_slot_and_publication(&db, &name).await;
    db.close().await;
}
