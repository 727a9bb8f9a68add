//! Postgres CDC benchmark: Debezium 3.6.1's Postgres connector on Apache Kafka Connect 4.3.2
//! (tests/cdc/debezium.sh, standalone), the same Debezium jars on this worker through
//! `plugin.path` (its Java plugin host: tests/cdc/debezium-plugin.sh, deploy/plugin-host.sh), and
//! this worker's `PostgresCdcSourceConnector`, the same table and load one after the other
//! against the same PostgreSQL and broker (prints figures; not a test). Figures of a run:
//! tests/cdc/BENCH.md. For Debezium on this worker, CPU seconds and peak RSS are the worker's
//! plus its JVM's (the sum of both peaks: an upper bound of their peak together); the JVM runs
//! with the host's default heap (`-Xms64M -Xmx1G`, `KAFKA_HEAP_OPTS` to change it).
//!
//! The table: `id bigint PRIMARY KEY, a integer, b text, c timestamptz, d numeric(12,2)`,
//! `rows` rows. Per connector, with a fresh slot, publication and topic prefix:
//!
//! - snapshot: the connector starts (`snapshot.mode=initial`) and the topic fills with the
//!   `rows` read events; records/s from the first to the last record's CreateTime, the
//!   process's CPU seconds from its start (Debezium: the JVM's start, its worker starts with the
//!   connector; ours: the connector's creation on a running worker) until the topic holds them;
//! - streaming: `changes` updates (`UPDATE ... SET a = a + 1` over the first `changes` ids, in
//!   transactions of 10 000 rows) once the snapshot is in; records/s from the first change's
//!   CreateTime to the last's, the CPU seconds from the first UPDATE until the topic holds them;
//! - the process's peak RSS (`VmHWM`) at the end.
//!
//! Both at-least-once (Debezium's standalone worker has no exactly-once; ours with
//! `exactly.once.source.support=disabled`), both JsonConverter with schemas for keys and
//! values, each connector at its defaults otherwise. Debezium's JVM gets Apache's scripts'
//! heap and options (`-Xms256M -Xmx2G`, G1, ...; `DEBEZIUM_HEAP_OPTS`, `DEBEZIUM_JVM_OPTS`).
//!
//! Run (serialized with the machine's other benchmarks):
//! `flock /tmp/bench.lock cargo run --release -p connect-tests --bin cdc_bench -- [rows]
//! [changes]` with `CONNECT_WORKER_BIN=target/release/connect-worker`; defaults 1000000 and
//! 1000000; `CDC_BENCH_ONLY=ours` runs this worker alone. Needs Java 17+ and Maven (Debezium's jars), the project's PostgreSQL and Kafka.

// A benchmark prints its figures.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use connect_tests::bench::{
    APACHE_HEAP_OPTS, APACHE_JVM_OPTS, cpu_seconds, delete_topics, peak_rss_kib, root,
};
use connect_tests::kafka::{self, client_config};
use connect_tests::postgres::{database_url, pool};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::json;

#[derive(Clone, Copy, Debug, Default)]
struct Phase {
    rate: f64,
    cpu: f64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Run {
    snapshot: Phase,
    stream: Phase,
    rss_kib: u64,
}

fn end_offset(topic: &str) -> i64 {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("cdc-bench-end"))
        .create()
        .expect("consumer");
    consumer
        .fetch_watermarks(topic, 0, Duration::from_secs(10))
        .map_or(0, |(_, high)| high)
}

/// The CreateTime (ms) of the record at `offset` of partition 0.
fn timestamp_at(topic: &str, offset: i64) -> i64 {
    let consumer: BaseConsumer = client_config()
        .set("group.id", unique("cdc-bench-ts"))
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Offset(offset))
        .unwrap();
    consumer.assign(&tpl).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(500)) {
            return m.timestamp().to_millis().unwrap_or(0);
        }
    }
    panic!("no record at {topic}@{offset}");
}

/// Waits until `topic` holds `n` records (tombstones none here: updates only); panics after
/// `timeout`.
fn wait_for(topic: &str, n: i64, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let end = end_offset(topic);
        if end >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{topic}: {end} of {n} records after {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn rate(topic: &str, from: i64, to: i64) -> f64 {
    let (a, b) = (timestamp_at(topic, from), timestamp_at(topic, to - 1));
    (to - from) as f64 / ((b - a).max(1) as f64 / 1000.0)
}

async fn changes(db: &sqlx::PgPool, table: &str, n: i64) {
    let mut id = 1;
    while id <= n {
        let last = (id + 9_999).min(n);
        sqlx::query(&format!(
            "UPDATE {table} SET a = a + 1 WHERE id BETWEEN $1 AND $2"
        ))
        .bind(id)
        .bind(last)
        .execute(db)
        .await
        .expect("update");
        id = last + 1;
    }
}

async fn drop_slot(db: &sqlx::PgPool, slot: &str) {
    for _ in 0..100 {
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

/// Both phases against started processes `pids` (their CPU and peak RSS added up) whose
/// connector writes `topic`.
async fn measure(
    db: &sqlx::PgPool,
    table: &str,
    topic: &str,
    pids: &[i32],
    cpu_start: f64,
    rows: i64,
    n_changes: i64,
) -> Run {
    let cpu_seconds = |_: i32| pids.iter().map(|p| cpu_seconds(*p)).sum::<f64>();
    let peak_rss_kib = |_: i32| pids.iter().map(|p| peak_rss_kib(*p)).sum::<u64>();
    let pid = pids[0];
    let timeout = Duration::from_secs(1800);
    let t = topic.to_owned();
    tokio::task::spawn_blocking(move || wait_for(&t, rows, timeout))
        .await
        .unwrap();
    let cpu_snap = cpu_seconds(pid) - cpu_start;
    let t = topic.to_owned();
    let snap_rate = tokio::task::spawn_blocking(move || rate(&t, 0, rows))
        .await
        .unwrap();
    let cpu_before = cpu_seconds(pid);
    let writing = Instant::now();
    changes(db, table, n_changes).await;
    // The writer's pace bounds the streaming rate: print it.
    println!(
        "  {topic}: the {n_changes} changes written in {:.1} s ({:.0} rows/s)",
        writing.elapsed().as_secs_f64(),
        n_changes as f64 / writing.elapsed().as_secs_f64()
    );
    let t = topic.to_owned();
    tokio::task::spawn_blocking(move || wait_for(&t, rows + n_changes, timeout))
        .await
        .unwrap();
    let cpu_stream = cpu_seconds(pid) - cpu_before;
    let t = topic.to_owned();
    let stream_rate = tokio::task::spawn_blocking(move || rate(&t, rows, rows + n_changes))
        .await
        .unwrap();
    Run {
        snapshot: Phase {
            rate: snap_rate,
            cpu: cpu_snap,
        },
        stream: Phase {
            rate: stream_rate,
            cpu: cpu_stream,
        },
        rss_kib: peak_rss_kib(pid),
    }
}

async fn debezium(db: &sqlx::PgPool, table: &str, rows: i64, n_changes: i64) -> Run {
    let script = root().join("tests/cdc/debezium.sh");
    let run_dir: PathBuf = root().join(".local/debezium/bench");
    let prefix = unique("cdcbench-dbz").replace('-', "_");
    let slot = prefix.clone();
    let topic = format!("{prefix}.public.{table}");
    kafka::create_topics(&[&topic], 1).await;
    std::fs::create_dir_all(&run_dir).unwrap();
    let db_props = Command::new(&script).arg("db-props").output().unwrap();
    let props = format!(
        "name=dbz-bench\nconnector.class=io.debezium.connector.postgresql.PostgresConnector\n\
         tasks.max=1\n{}topic.prefix={prefix}\nplugin.name=pgoutput\nslot.name={slot}\n\
         publication.name={slot}_pub\npublication.autocreate.mode=filtered\n\
         table.include.list=public\\\\.{table}\nsnapshot.mode=initial\n{}",
        String::from_utf8_lossy(&db_props.stdout),
        smt().map_or_else(String::new, |(list, class)| format!(
            "transforms={list}\ntransforms.{list}.type={class}\n"
        ))
    );
    let file = root().join(".local/debezium/bench-connector.properties");
    std::fs::write(&file, props).unwrap();
    let heap = std::env::var("DEBEZIUM_HEAP_OPTS").unwrap_or_else(|_| APACHE_HEAP_OPTS.into());
    let jvm = std::env::var("DEBEZIUM_JVM_OPTS").unwrap_or_else(|_| APACHE_JVM_OPTS.into());
    let out = Command::new(&script)
        .arg("start")
        .arg(&file)
        .env("DEBEZIUM_RUN", &run_dir)
        .env("DEBEZIUM_HEAP_OPTS", heap)
        .env("DEBEZIUM_JVM_OPTS", jvm)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "debezium.sh start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid: i32 = std::fs::read_to_string(run_dir.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let run = measure(db, table, &topic, &[pid], 0.0, rows, n_changes).await;
    let _ = Command::new(&script)
        .arg("stop")
        .env("DEBEZIUM_RUN", &run_dir)
        .status();
    drop_slot(db, &slot).await;
    delete_topics(&[topic]).await;
    run
}

async fn ours(db: &sqlx::PgPool, table: &str, rows: i64, n_changes: i64) -> Run {
    let spec = ClusterSpec::new("cdcbench").set("exactly.once.source.support", "disabled");
    let w: WorkerProc = spec.start_worker().await;
    let pid = w.pid().expect("worker pid");
    let prefix = unique("cdcbench-ours").replace('-', "_");
    let slot = prefix.clone();
    let topic = format!("{prefix}.public.{table}");
    kafka::create_topics(&[&topic], 1).await;
    let config = json!({
        "connector.class": "connect_connectors::cdc::PostgresCdcSourceConnector",
        "tasks.max": "1",
        "connection.url": database_url(),
        "topic.prefix": prefix,
        "table.include.list": format!("public\\.{table}"),
        "slot.name": slot,
        "publication.name": format!("{slot}_pub"),
        "publication.autocreate.mode": "filtered",
        "snapshot.mode": "initial",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
    });
    let cpu_start = cpu_seconds(pid);
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "cdc-bench", "config": config})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let run = measure(db, table, &topic, &[pid], cpu_start, rows, n_changes).await;
    let _ = w.send("DELETE", "/connectors/cdc-bench", None).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    drop(w);
    drop_slot(db, &slot).await;
    let g = &spec.group_id;
    delete_topics(&[
        topic,
        format!("{g}-configs"),
        format!("{g}-offsets"),
        format!("{g}-status"),
    ])
    .await;
    run
}

/// The plugin host JVM the worker `parent` started.
fn plugin_host_of(parent: i32) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<i32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<i32>().ok())?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            (ppid == parent
                && String::from_utf8_lossy(&cmdline).contains("io.connectrs.pluginhost.PluginHost"))
            .then_some(pid)
        })
}

/// Debezium's jars in this worker's `plugin.path`: its Java plugin host runs them.
async fn debezium_here(db: &sqlx::PgPool, table: &str, rows: i64, n_changes: i64) -> Run {
    for script in ["deploy/plugin-host.sh", "tests/cdc/debezium-plugin.sh"] {
        let out = Command::new(root().join(script))
            .arg("build")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let plugin_path = root().join(".local/plugins");
    let spec = ClusterSpec::new("cdcbench-java")
        .set("exactly.once.source.support", "disabled")
        .set("plugin.path", &plugin_path.display().to_string());
    let w: WorkerProc = spec.start_worker().await;
    let pid = w.pid().expect("worker pid");
    let jvm = plugin_host_of(pid).expect("the worker's plugin host");
    let prefix = unique("cdcbench-java").replace('-', "_");
    let slot = prefix.clone();
    let topic = format!("{prefix}.public.{table}");
    kafka::create_topics(&[&topic], 1).await;
    let url = database_url();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
    let (auth, rest) = rest.rsplit_once('@').unwrap_or(("postgres", rest));
    let (user, password) = auth.split_once(':').unwrap_or((auth, ""));
    let (host_port, dbname) = rest.split_once('/').unwrap_or((rest, "postgres"));
    let (host, port) = host_port.rsplit_once(':').unwrap_or((host_port, "5432"));
    let config = json!({
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": host,
        "database.port": port,
        "database.user": user,
        "database.password": password,
        "database.dbname": dbname.split('?').next().unwrap_or("postgres"),
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": slot,
        "publication.name": format!("{slot}_pub"),
        "publication.autocreate.mode": "filtered",
        "table.include.list": format!("public\\.{table}"),
        "snapshot.mode": "initial",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
    });
    let mut config = config;
    if let Some((list, class)) = smt() {
        config["transforms"] = json!(list);
        config[format!("transforms.{list}.type")] = json!(class);
    }
    let cpu_start = cpu_seconds(pid) + cpu_seconds(jvm);
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "cdc-bench-java", "config": config})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let run = measure(db, table, &topic, &[pid, jvm], cpu_start, rows, n_changes).await;
    println!(
        "  of which the worker: {:.1} CPU s, peak RSS {:.1} MiB; the JVM: {:.1} CPU s, peak RSS {:.1} MiB (both from the worker's start)",
        cpu_seconds(pid),
        peak_rss_kib(pid) as f64 / 1024.0,
        cpu_seconds(jvm),
        peak_rss_kib(jvm) as f64 / 1024.0
    );
    let _ = w.send("DELETE", "/connectors/cdc-bench-java", None).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    drop(w);
    drop_slot(db, &slot).await;
    let g = &spec.group_id;
    delete_topics(&[
        topic,
        format!("{g}-configs"),
        format!("{g}-offsets"),
        format!("{g}-status"),
    ])
    .await;
    run
}

fn print(name: &str, r: &Run, rows: i64, changes: i64) {
    println!(
        "{name:<28} snapshot {rows} rows: {:>9.0} rec/s {:>7.1} CPU s | streaming {changes} changes: {:>9.0} rec/s {:>7.1} CPU s | peak RSS {:>7.1} MiB",
        r.snapshot.rate,
        r.snapshot.cpu,
        r.stream.rate,
        r.stream.cpu,
        r.rss_kib as f64 / 1024.0
    );
}

/// `CDC_BENCH_SMT=unwrap`: Debezium's `ExtractNewRecordState` on both Debezium runs (a Java
/// transformation from plugin.path on this worker), as most Debezium deployments run it; the
/// native connector's run is skipped then.
fn smt() -> Option<(&'static str, &'static str)> {
    (std::env::var("CDC_BENCH_SMT").as_deref() == Ok("unwrap"))
        .then_some(("unwrap", "io.debezium.transforms.ExtractNewRecordState"))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: i64 = args.first().map_or(1_000_000, |a| a.parse().unwrap());
    let n_changes: i64 = args.get(1).map_or(rows, |a| a.parse().unwrap());
    assert!(
        n_changes <= rows,
        "changes update existing rows: at most {rows}"
    );
    let db = pool().await;
    let table = unique("cdcbench").replace('-', "_");
    sqlx::query(&format!(
        "CREATE TABLE {table} (id bigint PRIMARY KEY, a integer NOT NULL, b text, c timestamptz, d numeric(12,2))"
    ))
    .execute(&db)
    .await
    .unwrap();
    sqlx::query(&format!(
        "INSERT INTO {table} SELECT g, g % 1000, 'row-' || g, now(), g / 100.0 FROM generate_series(1, {rows}) g"
    ))
    .execute(&db)
    .await
    .unwrap();
    println!("table {table}: {rows} rows; {n_changes} changes");
    // CDC_BENCH_ONLY=java: Debezium on this worker alone (profiling the Java plugin path).
    if std::env::var("CDC_BENCH_ONLY").as_deref() == Ok("java") {
        let here = debezium_here(&db, &table, rows, n_changes).await;
        print("Debezium 3.6.1 / this worker", &here, rows, n_changes);
        let _ = sqlx::query(&format!("DROP TABLE {table}"))
            .execute(&db)
            .await;
        return;
    }
    // `CDC_BENCH_ONLY=ours`: the native connector alone (to iterate on its figures; ratios come
    // from runs of all).
    let only_ours = std::env::var("CDC_BENCH_ONLY").is_ok_and(|v| v == "ours");
    let dbz = if only_ours {
        Run::default()
    } else {
        let dbz = debezium(&db, &table, rows, n_changes).await;
        print("Debezium 3.6.1 / Connect 4.3.2", &dbz, rows, n_changes);
        let here = debezium_here(&db, &table, rows, n_changes).await;
        print("Debezium 3.6.1 / this worker", &here, rows, n_changes);
        println!(
            "Debezium here / on Apache: snapshot {:.2}x rec/s, {:.2}x CPU s; streaming {:.2}x rec/s, {:.2}x CPU s; peak RSS {:.3}x",
            here.snapshot.rate / dbz.snapshot.rate,
            here.snapshot.cpu / dbz.snapshot.cpu,
            here.stream.rate / dbz.stream.rate,
            here.stream.cpu / dbz.stream.cpu,
            here.rss_kib as f64 / dbz.rss_kib as f64
        );
        dbz
    };
    if smt().is_some() {
        let _ = sqlx::query(&format!("DROP TABLE {table}"))
            .execute(&db)
            .await;
        return;
    }
    let our = ours(&db, &table, rows, n_changes).await;
    print("ours", &our, rows, n_changes);
    if !only_ours {
        println!(
            "ours / Debezium: snapshot {:.2}x rec/s, {:.2}x CPU s; streaming {:.2}x rec/s, {:.2}x CPU s; peak RSS {:.3}x",
            our.snapshot.rate / dbz.snapshot.rate,
            our.snapshot.cpu / dbz.snapshot.cpu,
            our.stream.rate / dbz.stream.rate,
            our.stream.cpu / dbz.stream.cpu,
            our.rss_kib as f64 / dbz.rss_kib as f64
        );
    }
    let _ = sqlx::query(&format!("DROP TABLE {table}"))
        .execute(&db)
        .await;
    db.close().await;
}
