//! The Postgres CDC source's records against Debezium 3.6.1's for the same tables and changes:
//! tests/golden/cdc/debezium-3.6.1.jsonl holds what Debezium's Postgres connector (on Apache
//! Connect 4.3.2, JsonConverter with schemas) sent for the tables of tests/cdc/golden-schema.sql
//! (a snapshot of three rows of every mapped type, nulls and edge values) and the changes of
//! tests/cdc/golden-changes.sql (inserts, updates, deletes with tombstones, a primary key
//! change, with the default replica identity and with REPLICA IDENTITY FULL), recorded by
//! tests/cdc/capture-golden.sh. Ours runs on the same SQL (the table and topic prefix unique
//! here, renamed back before comparing) and every record must equal Debezium's, key and value,
//! schema and payload, in order per topic, except the fields of [`IGNORED`].

// Progress goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually, running_tasks};
use serde_json::{Value, json};

const CDC: &str = "connect_connectors::cdc::PostgresCdcSourceConnector";
const SCHEMA_SQL: &str = include_str!("../cdc/golden-schema.sql");
const CHANGES_SQL: &str = include_str!("../cdc/golden-changes.sql");
const GOLDEN: &str = include_str!("../golden/cdc/debezium-3.6.1.jsonl");

/// Payload fields that legitimately differ between two runs (of Debezium too), set to null on
/// both sides before comparing (their schemas are still compared):
const IGNORED: &[(&str, &str)] = &[
    // processing time: when the connector built the event
    ("ts_ms", "the envelope's processing time (ms)"),
    ("ts_us", "the envelope's processing time (µs)"),
    ("ts_ns", "the envelope's processing time (ns)"),
    // commit time (the snapshot's start for reads)
    ("source.ts_ms", "the commit time"),
    ("source.ts_us", "the commit time"),
    ("source.ts_ns", "the commit time"),
    // positions in the server's WAL and transaction ids: another run, another server position
    ("source.lsn", "the change's LSN"),
    ("source.sequence", "[last commit LSN, this LSN]"),
    ("source.txId", "the server's transaction id"),
    // the connector's version: 3.6.1.Final there, this project's here
    ("source.version", "the connector's version"),
];

pub(crate) fn strip(record: &mut Value) {
    let Some(payload) = record.pointer_mut("/value/payload") else {
        return;
    };
    if payload.is_null() {
        return;
    }
    for (path, _) in IGNORED {
        let mut node = &mut *payload;
        let parts: Vec<&str> = path.split('.').collect();
        for p in &parts[..parts.len() - 1] {
            node = &mut node[*p];
        }
        if let Some(obj) = node.as_object_mut() {
            if obj.contains_key(parts[parts.len() - 1]) {
                obj.insert(parts[parts.len() - 1].to_owned(), Value::Null);
            }
        }
    }
}

/// Where two JSON values differ: one line per differing leaf, with its path.
pub(crate) fn differences(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                differences(
                    &format!("{path}.{k}"),
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                // A schema's field list: name the field.
                let label = x
                    .get("field")
                    .and_then(Value::as_str)
                    .map_or(i.to_string(), str::to_owned);
                differences(&format!("{path}[{label}]"), x, y, out);
            }
        }
        _ if ours == theirs => {}
        _ => out.push(format!("{path}: ours {ours} / Debezium {theirs}")),
    }
}

pub(crate) async fn drop_slot_and_publication(db: &sqlx::PgPool, slot: &str) {
    for _ in 0..50 {
        let _ = sqlx::query(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active",
        )
        .bind(slot)
        .execute(db)
        .await;
        let left: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1")
                .bind(slot)
                .fetch_one(db)
                .await
                .unwrap_or(0);
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let _ = sqlx::query(&format!("DROP PUBLICATION IF EXISTS {slot}_pub"))
        .execute(db)
        .await;
}

/// Deletes the connector, then drops its slot and publication and the tables.
async fn cleanup(w: &WorkerProc, name: &str, db: &sqlx::PgPool, slot: &str, table: &str) {
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    drop_slot_and_publication(db, slot).await;
    let _ = sqlx::raw_sql(&format!(
        "DROP TABLE IF EXISTS {table}, {table}_full; DROP TYPE IF EXISTS {table}_mood"
    ))
    .execute(db)
    .await;
}

fn read(topics: &[String], n: usize) -> Vec<kafka::Record> {
    let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
    kafka::read_until(
        &topics,
        Isolation::ReadCommitted,
        Duration::from_secs(120),
        |r| r.len() >= n,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn records_equal_debezium_3_6_1s() {
    let golden: Vec<Value> = GOLDEN
        .lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect();
    let spec = ClusterSpec::new("pgcdc-golden");
    let w = spec.start_worker().await;
    let table = unique_table("cdc_golden");
    let name = unique("pgcdc-golden");
    let slot = name.replace('-', "_");
    let prefix = unique_table("cdcgolden");
    let topics = vec![
        format!("{prefix}.public.{table}"),
        format!("{prefix}.public.{table}_full"),
    ];
    kafka::create_topics(&[&topics[0], &topics[1]], 1).await;
    let db = pool().await;
    sqlx::raw_sql(&SCHEMA_SQL.replace("TBL", &table))
        .execute(&db)
        .await
        .expect("create the golden tables");

    create_connector(
        &w,
        &name,
        json!({
            "connector.class": CDC,
            "tasks.max": "1",
            "connection.url": database_url(),
            "topic.prefix": prefix,
            "table.include.list": format!("public\\.{table},public\\.{table}_full"),
            "slot.name": slot,
            "publication.name": format!("{slot}_pub"),
            "publication.autocreate.mode": "filtered",
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
        }),
    )
    .await;
    eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    let t = topics.clone();
    let snapshot = tokio::task::spawn_blocking(move || read(&t, 6)).await;
    if let Err(e) = snapshot {
        // A slot left behind retains WAL: clean up before failing.
        cleanup(&w, &name, &db, &slot, &table).await;
        std::panic::resume_unwind(e.into_panic());
    }
    for statement in CHANGES_SQL
        .split(";\n")
        .map(|s| {
            s.lines()
                .filter(|l| !l.starts_with("--"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|s| !s.trim().is_empty())
    {
        sqlx::raw_sql(&statement.replace("TBL", &table))
            .execute(&db)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    let t = topics.clone();
    let n = golden.len();
    let records = match tokio::task::spawn_blocking(move || read(&t, n)).await {
        Ok(records) => records,
        Err(e) => {
            cleanup(&w, &name, &db, &slot, &table).await;
            std::panic::resume_unwind(e.into_panic());
        }
    };

    // Ours as the golden file has them: the table "cdc_golden", the prefix "golden".
    let rename = |s: &str| s.replace(&table, "cdc_golden").replace(&prefix, "golden");
    let parse = |s: &Option<String>| {
        s.as_ref().map_or(Value::Null, |s| {
            serde_json::from_str(&rename(s)).expect("JSON record")
        })
    };
    let mut ours: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &records {
        let mut rec =
            json!({"topic": rename(&r.topic), "key": parse(&r.key), "value": parse(&r.value)});
        strip(&mut rec);
        ours.entry(rename(&r.topic)).or_default().push(rec);
    }
    let mut theirs: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for mut rec in golden {
        strip(&mut rec);
        let topic = rec["topic"].as_str().unwrap().to_owned();
        theirs.entry(topic).or_default().push(rec);
    }

    let mut diffs = Vec::new();
    let mut schema_diffs = std::collections::BTreeSet::new();
    for (topic, expected) in &theirs {
        let got = ours.get(topic).cloned().unwrap_or_default();
        if got.len() != expected.len() {
            diffs.push(format!(
                "{topic}: {} records, Debezium {}",
                got.len(),
                expected.len()
            ));
        }
        for (i, (o, t)) in got.iter().zip(expected).enumerate() {
            let mut d = Vec::new();
            differences("", o, t, &mut d);
            // One schema difference shows in every record: report it once per topic.
            for line in d {
                if line.contains(".schema.") && !schema_diffs.insert(format!("{topic}{line}")) {
                    continue;
                }
                diffs.push(format!("{topic}#{i}{line}"));
            }
        }
    }
    cleanup(&w, &name, &db, &slot, &table).await;
    db.close().await;
    assert!(
        diffs.is_empty(),
        "{} differences from Debezium 3.6.1:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}
