//! Java connector plugins from `plugin.path`, with the real thing: Debezium 3.6.1's Postgres
//! connector from Maven Central, laid out by tests/cdc/debezium-plugin.sh as a user unpacks
//! it (.local/plugins/debezium-connector-postgres/), run by the worker's Java plugin host
//! (deploy/plugin-host.sh build).
//!
//! - it is listed with its real version, its config definition and validation are Debezium's;
//! - its records, at-least-once and exactly-once, equal those Debezium wrote on Apache Connect
//!   4.3.2 (tests/golden/cdc/debezium-3.6.1.jsonl, the same comparison as the native CDC
//!   connector's, source_postgres_cdc_golden.rs);
//! - a JVM killed under a running task fails the task (FAILED, with a message), not the worker;
//! - `plugin.path` without a Java refuses to start, naming the missing Java;
//! - the project's own test plugins (tests/java-plugins) exercise the rest of the API:
//!   [`own_plugins`].

// Progress goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{
    ClusterSpec, WorkerProc, create_connector, eventually, run_to_exit, running_tasks,
};
use serde_json::{Value, json};

use crate::source_postgres_cdc_golden::{differences, drop_slot_and_publication, strip};

mod apache_answers;
mod own_plugins;
mod record_plugins;

const DEBEZIUM: &str = "io.debezium.connector.postgresql.PostgresConnector";
const SCHEMA_SQL: &str = include_str!("../../cdc/golden-schema.sql");
const CHANGES_SQL: &str = include_str!("../../cdc/golden-changes.sql");
const GOLDEN: &str = include_str!("../../golden/cdc/debezium-3.6.1.jsonl");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
}

fn run_script(script: &str, args: &[&str]) -> String {
    let out = Command::new(root().join(script))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The plugin.path: the directory holding Debezium (fetched once) and the one of the project's
/// own test plugins (tests/java-plugins), with the plugin host built.
fn plugin_path() -> &'static String {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        run_script("deploy/plugin-host.sh", &["build"]);
        let debezium = PathBuf::from(run_script("tests/cdc/debezium-plugin.sh", &[]));
        let own = PathBuf::from(run_script("tests/java-plugins/build.sh", &[]));
        format!("{}, {}", debezium.display(), own.display())
    })
}

pub(crate) fn spec(prefix: &str) -> ClusterSpec {
    let path = tokio::task::block_in_place(plugin_path);
    ClusterSpec::new(prefix).set("plugin.path", path)
}

/// Debezium's `database.*` keys for the project's PostgreSQL
/// (`postgres://user[:password]@host[:port]/db`).
fn database_props() -> serde_json::Map<String, Value> {
    let url = database_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    let rest = rest.split('?').next().unwrap_or_default();
    let (auth, rest) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
    let (host_port, db) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let (host, port) = host_port.rsplit_once(':').unwrap_or((host_port, "5432"));
    let mut m = serde_json::Map::new();
    for (k, v) in [
        ("database.hostname", host),
        ("database.port", port),
        ("database.user", user),
        ("database.password", password),
        (
            "database.dbname",
            if db.is_empty() { "postgres" } else { db },
        ),
    ] {
        m.insert(k.to_owned(), json!(v));
    }
    m
}

fn debezium_config(prefix: &str, slot: &str, table: &str) -> Value {
    let mut c = database_props();
    for (k, v) in [
        ("connector.class", DEBEZIUM.to_owned()),
        ("tasks.max", "1".to_owned()),
        ("topic.prefix", prefix.to_owned()),
        ("plugin.name", "pgoutput".to_owned()),
        ("slot.name", slot.to_owned()),
        ("publication.name", format!("{slot}_pub")),
        ("publication.autocreate.mode", "filtered".to_owned()),
        (
            "table.include.list",
            format!("public\\.{table},public\\.{table}_full"),
        ),
        ("snapshot.mode", "initial".to_owned()),
        (
            "key.converter",
            "org.apache.kafka.connect.json.JsonConverter".to_owned(),
        ),
        (
            "value.converter",
            "org.apache.kafka.connect.json.JsonConverter".to_owned(),
        ),
        ("key.converter.schemas.enable", "true".to_owned()),
        ("value.converter.schemas.enable", "true".to_owned()),
    ] {
        c.insert(k.to_owned(), json!(v));
    }
    Value::Object(c)
}

#[tokio::test(flavor = "multi_thread")]
async fn debezium_is_listed_with_its_version_config_and_validation() {
    let w = spec("java-list").start_worker().await;
    let plugins = w.get("/connector-plugins").await.expect("list plugins");
    let debezium = plugins
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["class"] == DEBEZIUM)
        .unwrap_or_else(|| panic!("{DEBEZIUM} not listed: {plugins}"));
    assert_eq!(debezium["type"], "source");
    assert_eq!(debezium["version"], "3.6.1.Final");
    // Built-in ones are still there.
    assert!(
        plugins
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["class"] == "org.apache.kafka.connect.file.FileStreamSourceConnector"),
        "{plugins}"
    );

    let keys = w
        .get("/connector-plugins/PostgresConnector/config")
        .await
        .expect("plugin config");
    let names: Vec<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    for key in [
        "database.hostname",
        "slot.name",
        "plugin.name",
        "topic.prefix",
    ] {
        assert!(names.contains(&key), "{key} missing from {names:?}");
    }

    // A good config validates clean (Debezium connects to the database to check it).
    let table = unique_table("java_validate");
    let mut good = debezium_config("p", "java_validate_slot", &table);
    good["name"] = json!("java-validate");
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{DEBEZIUM}/config/validate"),
            Some(good.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["name"], DEBEZIUM);
    let all_errors: Vec<&Value> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["value"]["errors"]
                .as_array()
                .is_some_and(|e| !e.is_empty())
        })
        .collect();
    assert_eq!(body["error_count"], 0, "{all_errors:?}");
    let groups = body["groups"].as_array().unwrap();
    assert!(groups.iter().any(|g| g == "Common"), "{groups:?}");
    assert!(groups.len() > 2, "Debezium's groups too: {groups:?}");

    // Debezium's own checks answer: no topic.prefix, a wrong password port.
    let mut bad = good.clone();
    bad.as_object_mut().unwrap().remove("topic.prefix");
    bad["database.port"] = json!("not-a-port");
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{DEBEZIUM}/config/validate"),
            Some(bad),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let errors = |key: &str| -> Vec<String> {
        body["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["value"]["name"] == key)
            .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
            .filter_map(|e| e.as_str().map(str::to_owned))
            .collect()
    };
    assert!(!errors("topic.prefix").is_empty(), "{body}");
    assert!(!errors("database.port").is_empty(), "{body}");

    // A transformation of plugin.path (Debezium's) validates with its own definition.
    let mut with_smt = good.clone();
    with_smt["transforms"] = json!("unwrap");
    with_smt["transforms.unwrap.type"] = json!("io.debezium.transforms.ExtractNewRecordState");
    with_smt["transforms.unwrap.add.fields"] = json!("op,table");
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{DEBEZIUM}/config/validate"),
            Some(with_smt),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let smt_errors: Vec<String> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["value"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("transforms.unwrap."))
        })
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect();
    assert!(smt_errors.is_empty(), "{smt_errors:?}");
    assert!(
        body["configs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["definition"]["name"] == "transforms.unwrap.add.fields"),
        "ExtractNewRecordState's own keys are listed: {body}"
    );
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

/// Runs Debezium on this worker over the golden SQL and compares its records with those it
/// wrote on Apache Connect 4.3.2.
async fn records_equal_debezium_on_apache(exactly_once: bool) {
    let golden: Vec<Value> = GOLDEN
        .lines()
        .map(|l| serde_json::from_str(l).expect("golden line"))
        .collect();
    let mut spec = spec("java-dbz");
    if exactly_once {
        spec = spec.set("exactly.once.source.support", "enabled");
    }
    let w = spec.start_worker().await;
    let table = unique_table("cdc_golden");
    let name = unique("java-dbz");
    let slot = name.replace('-', "_");
    let prefix = unique_table("dbzgolden");
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

    let mut config = debezium_config(&prefix, &slot, &table);
    if exactly_once {
        config["exactly.once.support"] = json!("required");
    }
    create_connector(&w, &name, config).await;
    let running = eventually(Duration::from_secs(90), "the task running", || async {
        let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        if status["tasks"][0]["state"] == "FAILED" || status["connector"]["state"] == "FAILED" {
            return Some(Err(status));
        }
        running_tasks(&w, &name, 1).await.map(Ok)
    })
    .await;
    if let Err(status) = running {
        cleanup(&w, &name, &db, &slot, &table).await;
        panic!("Debezium failed: {status}");
    }
    let t = topics.clone();
    let snapshot = tokio::task::spawn_blocking(move || read(&t, 6)).await;
    if let Err(e) = snapshot {
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
            println!("worker log:\n{}", w.log_text());
            cleanup(&w, &name, &db, &slot, &table).await;
            std::panic::resume_unwind(e.into_panic());
        }
    };

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
    for (topic, expected) in &theirs {
        let got = ours.get(topic).cloned().unwrap_or_default();
        if got.len() != expected.len() {
            diffs.push(format!(
                "{topic}: {} records, Debezium on Apache {}",
                got.len(),
                expected.len()
            ));
        }
        for (i, (o, t)) in got.iter().zip(expected).enumerate() {
            let mut d = Vec::new();
            differences("", o, t, &mut d);
            diffs.extend(d.into_iter().map(|line| format!("{topic}#{i}{line}")));
        }
    }

    // The source offsets Debezium committed are this worker's: stop and look.
    let offsets = w
        .get(&format!("/connectors/{name}/offsets"))
        .await
        .expect("offsets");
    cleanup(&w, &name, &db, &slot, &table).await;
    db.close().await;
    assert!(
        diffs.is_empty(),
        "{} differences from Debezium 3.6.1 on Apache Connect 4.3.2:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    let committed = &offsets["offsets"][0];
    assert_eq!(committed["partition"]["server"], json!(prefix), "{offsets}");
    assert!(committed["offset"]["lsn"].is_number(), "{offsets}");
}

#[tokio::test(flavor = "multi_thread")]
async fn debezium_records_equal_apache_connects_at_least_once() {
    records_equal_debezium_on_apache(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn debezium_records_equal_apache_connects_exactly_once() {
    records_equal_debezium_on_apache(true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn plugin_path_without_java_refuses_to_start_naming_it() {
    let spec = spec("java-nojava").env("JAVA_HOME", "/nonexistent-java-home");
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok, "{log}");
    assert!(
        log.contains("plugin.path is set") && log.contains("/nonexistent-java-home"),
        "{log}"
    );
}

/// The pids of `parent`'s children running the plugin host.
pub(crate) fn plugin_hosts_of(parent: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid ...: the fields after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == Some(parent)
            && String::from_utf8_lossy(&cmdline).contains("io.connectrs.pluginhost.PluginHost")
        {
            out.push(pid);
        }
    }
    out
}

pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// A killed JVM fails the task it ran (FAILED, saying so), the worker keeps serving, a restart
/// gets a new JVM; and the JVM does not outlive a SIGKILLed worker.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_jvm_fails_its_tasks_not_the_worker_and_dies_with_the_worker() {
    let mut w = spec("java-kill")
        .set("auto.restart.enable", "false")
        .start_worker()
        .await;
    let worker_pid = w.pid().expect("worker pid");
    let hosts = plugin_hosts_of(worker_pid);
    assert_eq!(hosts.len(), 1, "one plugin host: {hosts:?}");
    let table = unique_table("java_kill");
    let name = unique("java-kill");
    let slot = name.replace('-', "_");
    let prefix = unique_table("javakill");
    let db = pool().await;
    sqlx::raw_sql(&SCHEMA_SQL.replace("TBL", &table))
        .execute(&db)
        .await
        .expect("create the tables");
    create_connector(&w, &name, debezium_config(&prefix, &slot, &table)).await;
    eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;

    let _ = Command::new("kill")
        .arg("-KILL")
        .arg(hosts[0].to_string())
        .status();
    let task = eventually(Duration::from_secs(30), "the task FAILED", || async {
        let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (status["tasks"][0]["state"] == "FAILED").then(|| status["tasks"][0].clone())
    })
    .await;
    let trace = task["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("the Java plugin host exited"),
        "the trace says why: {task}"
    );
    assert!(w.get("/").await.is_ok(), "the worker still serves");
    // The connector, which lived in that JVM too, is failed at once.
    let connector = eventually(Duration::from_secs(30), "the connector FAILED", || async {
        let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (status["connector"]["state"] == "FAILED").then(|| status["connector"].clone())
    })
    .await;
    assert!(
        connector["trace"]
            .as_str()
            .is_some_and(|t| t.contains("the Java plugin host exited")),
        "{connector}"
    );

    // A restart starts a new JVM and the connector and its task run again.
    let (status, body) = w
        .send(
            "POST",
            &format!("/connectors/{name}/restart?includeTasks=true"),
            None,
        )
        .await;
    assert!(status < 300, "{status} {body}");
    eventually(
        Duration::from_secs(90),
        "the task running again",
        || async {
            let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
            (status["connector"]["state"] == "RUNNING").then_some(())?;
            running_tasks(&w, &name, 1).await
        },
    )
    .await;
    let hosts = plugin_hosts_of(worker_pid);
    assert_eq!(hosts.len(), 1, "a new plugin host: {hosts:?}");

    // SIGKILL the worker: its JVM exits too.
    w.kill9();
    eventually(
        Duration::from_secs(15),
        "the JVM gone with its worker",
        || async { (!alive(hosts[0])).then_some(()) },
    )
    .await;
    drop_slot_and_publication(&db, &slot).await;
    let _ = sqlx::raw_sql(&format!(
        "DROP TABLE IF EXISTS {table}, {table}_full; DROP TYPE IF EXISTS {table}_mood"
    ))
    .execute(&db)
    .await;
}

/// Exactly-once for a Java source under failure: Debezium streams rows written continuously
/// while the two workers are SIGKILLed in turn (their JVMs die with them) and the one running
/// the task is frozen (SIGSTOP: a zombie, its JVM still holding the replication slot) until the
/// other runs it; under `read_committed` every insert and update arrives exactly once. (The
/// snapshot is done before the first kill: Debezium documents snapshots as not exactly-once.)
#[tokio::test(flavor = "multi_thread")]
async fn debezium_streams_exactly_once_with_killed_and_frozen_workers() {
    const SNAPSHOT_ROWS: i64 = 100;
    const KILL_ROUNDS: usize = 4;
    let spec = spec("java-eos").set("exactly.once.source.support", "enabled");
    let mut workers = [spec.start_worker().await, spec.start_worker().await];
    let table = unique_table("java_eos");
    let name = unique("java-eos");
    let slot = name.replace('-', "_");
    let prefix = unique_table("javaeos");
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
    let mut config = database_props();
    for (k, v) in [
        ("connector.class", DEBEZIUM.to_owned()),
        ("tasks.max", "1".to_owned()),
        ("topic.prefix", prefix.clone()),
        ("plugin.name", "pgoutput".to_owned()),
        ("slot.name", slot.clone()),
        ("publication.name", format!("{slot}_pub")),
        ("publication.autocreate.mode", "filtered".to_owned()),
        ("table.include.list", format!("public\\.{table}")),
        ("exactly.once.support", "required".to_owned()),
        // A zombie's JVM holds the slot until its worker thaws: retry meanwhile.
        ("slot.max.retries", "30".to_owned()),
        ("slot.retry.delay.ms", "2000".to_owned()),
    ] {
        config.insert(k.to_owned(), json!(v));
    }
    create_connector(&workers[0], &name, Value::Object(config)).await;
    eventually(Duration::from_secs(90), "the task running", || {
        running_tasks(&workers[0], &name, 1)
    })
    .await;
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

    // The writer: one transaction per batch inserting 20 rows and updating one row of the
    // previous batch, until the kills are done.
    let kills = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (db, table, kills) = (db.clone(), table.clone(), kills.clone());
        tokio::spawn(async move {
            let mut next = SNAPSHOT_ROWS + 1;
            let mut updated = Vec::new();
            while next <= SNAPSHOT_ROWS + 400 || kills.load(Ordering::SeqCst) < KILL_ROUNDS {
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
    for (round, pause_ms) in [1500u64, 2500, 1200, 2000].into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(pause_ms)).await;
        let i = round % 2;
        println!("round {round}: SIGKILL worker {}", workers[i].worker_id());
        workers[i].kill9();
        kills.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        workers[i].restart().await;
    }
    let owner = eventually(Duration::from_secs(120), "the task running", || {
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
    let expected = rows as usize + updated.len();
    println!("{rows} rows, {} updates", updated.len());

    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(240),
            |r| r.len() >= expected,
        );
        std::thread::sleep(Duration::from_secs(3));
        kafka::read_all(&[&t], Isolation::ReadCommitted, Duration::from_secs(60))
    })
    .await;
    let _ = workers[0]
        .send("DELETE", &format!("/connectors/{name}"), None)
        .await;
    let records = match records {
        Ok(r) => r,
        Err(e) => {
            drop_slot_and_publication(&db, &slot).await;
            std::panic::resume_unwind(e.into_panic());
        }
    };
    let mut events: BTreeMap<(String, i64), usize> = BTreeMap::new();
    for r in &records {
        let key: Value = serde_json::from_str(r.key.as_deref().unwrap_or("null")).unwrap();
        let value: Value = serde_json::from_str(r.value.as_deref().unwrap_or("null")).unwrap();
        let id = key["id"].as_i64().unwrap_or_else(|| panic!("key {key}"));
        let op = value["op"].as_str().unwrap_or_default().to_owned();
        *events.entry((op, id)).or_default() += 1;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop_slot_and_publication(&db, &slot).await;
    let _ = sqlx::raw_sql(&format!("DROP TABLE IF EXISTS {table}"))
        .execute(&db)
        .await;
    db.close().await;
    let dups: Vec<_> = events
        .iter()
        .filter(|((op, _), n)| op != "r" && **n > 1)
        .take(10)
        .collect();
    assert!(
        dups.is_empty(),
        "streamed duplicates under read_committed: {dups:?}"
    );
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
    println!(
        "{} records; every streamed event exactly once under read_committed",
        records.len()
    );
}

/// `plugin.discovery` as in Apache 4.4: an unknown value refuses to start; `only_scan` finds the
/// connectors by scanning classes (no manifests read), `service_load` by manifests alone.
#[tokio::test(flavor = "multi_thread")]
async fn plugin_discovery_values_are_apaches() {
    let (ok, log) = run_to_exit(&spec("java-disc-bad").set("plugin.discovery", "sometimes")).await;
    assert!(!ok, "{log}");
    assert!(
        log.contains("Invalid value sometimes for configuration plugin.discovery"),
        "{log}"
    );
    for mode in ["only_scan", "service_load"] {
        let w = spec(&format!("java-disc-{mode}"))
            .set("plugin.discovery", mode)
            .start_worker()
            .await;
        let plugins = w.get("/connector-plugins").await.expect("list plugins");
        for class in [DEBEZIUM, "connectrs.testplugins.RecordingSinkConnector"] {
            assert!(
                plugins
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["class"] == class),
                "{mode}: {class} in {plugins}"
            );
        }
    }
}
