//! The distributed runtime against real Apache Kafka, with real worker processes:
//! assignment spread and movement, at-least-once delivery under SIGKILL, the file sink,
//! task failures, and start-up errors.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector as create, eventually, running_tasks};
use serde_json::json;

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

fn counts(owners: &BTreeMap<i64, String>) -> BTreeMap<String, usize> {
    let mut c = BTreeMap::new();
    for w in owners.values() {
        *c.entry(w.clone()).or_insert(0) += 1;
    }
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn tasks_spread_evenly_and_move_when_a_worker_dies_or_joins() {
    let spec = ClusterSpec::new("spread");
    let w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let mut w3 = spec.start_worker().await;
    let topic = unique("spread-data");
    create(&w1, "vs", json!({"connector.class": VERIFIABLE, "tasks.max": "6", "topic": topic, "throughput": "10"})).await;

    let owners = eventually(
        Duration::from_secs(60),
        "6 tasks RUNNING on 3 workers, 2 each",
        || async {
            running_tasks(&w1, "vs", 6).await.filter(|o| {
                let c = counts(o);
                c.len() == 3 && c.values().all(|n| *n == 2)
            })
        },
    )
    .await;
    println!("initial owners: {owners:?}");

    // A crash: no LeaveGroup. After the session timeout plus the scheduled delay its tasks move.
    let dead = w3.worker_id();
    w3.kill9();
    let after_kill = eventually(
        Duration::from_secs(60),
        "the dead worker's tasks moved to the others",
        || async {
            running_tasks(&w1, "vs", 6).await.filter(|o| {
                let c = counts(o);
                !c.contains_key(&dead) && c.values().all(|n| *n == 3)
            })
        },
    )
    .await;
    for (task, owner) in &owners {
        if owner != &dead {
            assert_eq!(
                &after_kill[task], owner,
                "task {task} moved although its worker survived"
            );
        }
    }

    // A new worker takes a fair share; the survivors only give work away.
    let w4 = spec.start_worker().await;
    let new_id = w4.worker_id();
    let after_join = eventually(
        Duration::from_secs(60),
        "the new worker took a fair share",
        || async {
            running_tasks(&w1, "vs", 6).await.filter(|o| {
                let c = counts(o);
                c.len() == 3 && c.values().all(|n| *n == 2) && c.contains_key(&new_id)
            })
        },
    )
    .await;
    for (task, owner) in &after_join {
        assert!(
            owner == &after_kill[task] || owner == &new_id,
            "task {task} moved from {} to {owner}, not to the new worker",
            after_kill[task]
        );
    }
    drop((w1, w2, w4));
}

/// Every (task, seqno) below `max` appears at least once in the topic.
fn assert_all_seqnos(topic: &str, tasks: i64, max: i64) {
    // The records seen so far, folded in as they come (`read_until` passes all of them).
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut folded = 0;
    let records = kafka::read_until(
        &[topic],
        Isolation::ReadUncommitted,
        Duration::from_secs(60),
        |r| {
            seen.extend(r[folded..].iter().map(|r| {
                (
                    r.key.clone().unwrap_or_default(),
                    r.value.clone().unwrap_or_default(),
                )
            }));
            folded = r.len();
            (0..tasks).all(|t| (0..max).all(|s| seen.contains(&(t.to_string(), s.to_string()))))
        },
    );
    println!(
        "read {} records for {} distinct ones",
        records.len(),
        tasks * max
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn verifiable_source_is_at_least_once_when_workers_are_killed() {
    let spec = ClusterSpec::new("alo");
    let w1 = spec.start_worker().await;
    let mut w2 = spec.start_worker().await;
    let topic = unique("alo-data");
    kafka::create_topics(&[&topic], 3).await;
    let max = 3000;
    create(
        &w1,
        "vs",
        json!({
            "connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic,
            "throughput": "1000", "max.records": max.to_string(), "batch.size": "50",
        }),
    )
    .await;
    eventually(Duration::from_secs(60), "both tasks running", || {
        running_tasks(&w1, "vs", 2)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    w2.kill9();
    tokio::time::sleep(Duration::from_millis(500)).await;
    w2.restart().await;
    assert_all_seqnos(&topic, 2, max);
}

#[tokio::test(flavor = "multi_thread")]
async fn file_sink_writes_every_record_of_a_topic() {
    let spec = ClusterSpec::new("filesink");
    let w = spec.start_worker().await;
    let topic = unique("filesink-data");
    kafka::create_topics(&[&topic], 2).await;
    let n = 500;
    kafka::produce(&topic, (0..n).map(|i| (None, Some(format!("line-{i}"))))).await;
    let file = spec.dir.join("sink.txt");
    // The group is `connect-fs` unless overridden, as here.
    let group = unique("fs-group");
    create(
        &w,
        "fs",
        json!({
            "connector.class": "FileStreamSink", "tasks.max": "2", "topics": topic,
            "file": file.to_str().unwrap(), "consumer.override.group.id": group,
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }),
    )
    .await;
    let lines = eventually(
        Duration::from_secs(60),
        "every record in the sink file",
        || async {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let lines: BTreeSet<String> = text.lines().map(str::to_owned).collect();
            (lines.len() == n).then_some(lines)
        },
    )
    .await;
    assert_eq!(lines, (0..n).map(|i| format!("line-{i}")).collect());
    // The sink's offsets are committed in the overriding group.
    eventually(
        Duration::from_secs(30),
        "offsets committed in the group",
        || async {
            let (g, t) = (group.clone(), topic.clone());
            let committed = tokio::task::spawn_blocking(move || kafka::committed_total(&g, &t, 2))
                .await
                .unwrap();
            (committed == n as i64).then_some(())
        },
    )
    .await;
    // KIP-558: a sink records the topics it consumed.
    eventually(Duration::from_secs(30), "active topic recorded", || async {
        let t = w.get("/connectors/fs/topics").await.ok()?;
        (t["fs"]["topics"] == json!([topic])).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_task_is_failed_with_its_trace_and_others_keep_running() {
    let spec = ClusterSpec::new("fail");
    let w = spec.start_worker().await;
    let topic = unique("fail-data");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(&topic, (0..5).map(|i| (None, Some(format!("x{i}"))))).await;
    // The sink's file is in a directory that does not exist: its task cannot write.
    create(
        &w,
        "broken",
        json!({
            "connector.class": "FileStreamSink", "topics": topic,
            "file": spec.dir.join("no/such/dir/out.txt").to_str().unwrap(),
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }),
    )
    .await;
    create(
        &w,
        "healthy",
        json!({"connector.class": VERIFIABLE, "topic": unique("ok-data"), "throughput": "10"}),
    )
    .await;
    let failed = eventually(
        Duration::from_secs(60),
        "the broken task FAILED",
        || async {
            let s = w.get("/connectors/broken/status").await.ok()?;
            (s["tasks"][0]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    let trace = failed["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("out.txt") || trace.to_lowercase().contains("no such file"),
        "trace names the problem: {trace}"
    );
    eventually(
        Duration::from_secs(30),
        "the healthy connector keeps running",
        || running_tasks(&w, "healthy", 1),
    )
    .await;
    assert_eq!(w.get("/").await.unwrap()["version"], "4.0.0");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_worker_configs_exit_non_zero_with_a_clear_message() {
    let bin = connect_tests::worker::worker_binary();
    let dir = std::env::temp_dir().join(unique("badcfg"));
    std::fs::create_dir_all(&dir).unwrap();

    let missing = dir.join("missing-group.properties");
    std::fs::write(
        &missing,
        "bootstrap.servers=127.0.0.1:1\nkey.converter=x\nvalue.converter=y\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("group.id"), "names the missing key: {err}");

    let invalid = dir.join("invalid.properties");
    std::fs::write(&invalid, format!(
        "{}offset.flush.interval.ms=soon\n",
        std::fs::read_to_string(&missing).unwrap()
            + "group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
    )).unwrap();
    let out = std::process::Command::new(bin)
        .arg(&invalid)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("offset.flush.interval.ms") && err.contains("soon"),
        "names key and value: {err}"
    );

    let nofile = std::process::Command::new(bin)
        .arg(dir.join("nope.properties"))
        .output()
        .unwrap();
    assert!(!nofile.status.success());
    assert!(String::from_utf8_lossy(&nofile.stderr).contains("nope.properties"));
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_kafka_exits_non_zero() {
    let spec = ClusterSpec::new("nokafka").set("bootstrap.servers", "127.0.0.1:1");
    let props = spec.dir.join("w.properties");
    let text: String = spec
        .props
        .iter()
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    std::fs::write(&props, text + "listeners=http://127.0.0.1:0\n").unwrap();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(connect_tests::worker::worker_binary())
            .arg(&props)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed to reach Kafka at 127.0.0.1:1"),
        "{err}"
    );
}
