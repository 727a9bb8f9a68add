//! The Java plugin API beyond what Debezium's source uses, with the project's own test plugins
//! (tests/java-plugins, built by their build.sh into .local/test-plugins, in `plugin.path` beside
//! Debezium): a sink's `put`/`open`/`close`/`preCommit` and context, errant records, a task that
//! throws, `alterOffsets`, connector-defined transaction boundaries, a frozen JVM.

// Progress goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::process::Command;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{create_connector, eventually, running_tasks};
use serde_json::json;

use super::{alive, plugin_hosts_of, spec};

/// A Java sink (the project's RecordingSink, tests/java-plugins): records reach its `put` with
/// their keys, values, headers and offsets; it is opened with its partitions (and sees them as
/// its assignment), its errant records go to the dead letter queue through the worker's
/// reporter, the offsets its `preCommit` returns are committed, and deleting the connector
/// closes and stops it.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_sink_gets_records_commits_offsets_and_reports_errant_ones() {
    let spec = spec("java-sink");
    let w = spec.start_worker().await;
    let plugins = w.get("/connector-plugins").await.expect("list plugins");
    assert!(
        plugins.as_array().unwrap().iter().any(|p| p["class"]
            == "connectrs.testplugins.RecordingSinkConnector"
            && p["type"] == "sink"
            && p["version"] == "1.0-test"),
        "{plugins}"
    );
    let name = unique("java-sink");
    let topic = unique("java-sink-in");
    let dlq = format!("{topic}-dlq");
    kafka::create_topics(&[&topic, &dlq], 2).await;
    let file = spec.dir.join("sink.txt");
    let records: Vec<(Option<String>, Option<String>)> = (0..20)
        .map(|i| {
            let value = if i == 5 || i == 13 {
                "poison".to_owned()
            } else {
                format!("v{i}")
            };
            (Some(format!("k{i}")), Some(value))
        })
        .collect();
    kafka::produce(&topic, records.into_iter()).await;
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "RecordingSink",
            "tasks.max": "1",
            "topics": topic,
            "file": file.display().to_string(),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
        }),
    )
    .await;
    let lines = eventually(
        Duration::from_secs(60),
        "18 records in the file",
        || async {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            (lines.iter().filter(|l| l.starts_with("RECORD")).count() >= 18).then_some(lines)
        },
    )
    .await;
    assert_eq!(lines[0], "START", "{lines:?}");
    let open = format!("OPEN {topic}-0,{topic}-1 assignment={topic}-0,{topic}-1");
    assert!(lines.contains(&open), "{open} in {lines:?}");
    let mut values: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("RECORD"))
        .map(|l| l.split(" value=").nth(1).unwrap_or_default().to_owned())
        .collect();
    values.sort();
    let mut want: Vec<String> = (0..20)
        .filter(|i| *i != 5 && *i != 13)
        .map(|i| format!("v{i}"))
        .collect();
    want.sort();
    assert_eq!(values, want, "each record once, the errant ones not");
    assert!(
        lines.iter().any(|l| l.contains(" key=k0 value=v0")),
        "{lines:?}"
    );

    // The errant records went to the dead letter queue, through the worker's reporter.
    let d = dlq.clone();
    let dead = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&d],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| r.len() >= 2,
        )
    })
    .await
    .expect("read the dead letter queue");
    assert_eq!(dead.len(), 2);
    assert!(dead.iter().all(|r| r.value.as_deref() == Some("poison")));

    // The offsets preCommit returned are committed: all 20 records.
    let committed = eventually(Duration::from_secs(60), "20 offsets committed", || async {
        let o = w.get(&format!("/connectors/{name}/offsets")).await.ok()?;
        let total: i64 = o["offsets"]
            .as_array()?
            .iter()
            .filter_map(|p| p["offset"]["kafka_offset"].as_i64())
            .sum();
        (total == 20).then_some(o)
    })
    .await;
    println!("committed: {committed}");

    let (status, _) = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    assert!(status < 300);
    let tail = eventually(Duration::from_secs(30), "CLOSE and STOP", || async {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        text.ends_with("STOP\n").then_some(text)
    })
    .await;
    assert!(
        tail.contains(&format!("CLOSE {topic}-0,{topic}-1\nSTOP\n")),
        "{tail}"
    );
}

/// A Java task that throws in `start` or in `put` is FAILED, its trace naming the task class
/// and carrying the Java exception and stack trace; the worker goes on.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_task_that_throws_is_failed_with_the_java_trace() {
    let spec = spec("java-throw");
    let w = spec.start_worker().await;
    let topic = unique("java-throw-in");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(
        &topic,
        [(Some("k".to_owned()), Some("v".to_owned()))].into_iter(),
    )
    .await;
    for place in ["start", "put"] {
        let name = unique(&format!("java-throw-{place}"));
        create_connector(
            &w,
            &name,
            json!({
                "connector.class": "connectrs.testplugins.RecordingSinkConnector",
                "topics": topic,
                "file": spec.dir.join(format!("{place}.txt")).display().to_string(),
                "throw.in": place,
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            }),
        )
        .await;
        let task = eventually(Duration::from_secs(60), "the task FAILED", || async {
            let status = w.get(&format!("/connectors/{name}/status")).await.ok()?;
            (status["tasks"][0]["state"] == "FAILED").then(|| status["tasks"][0].clone())
        })
        .await;
        let trace = task["trace"].as_str().unwrap_or_default();
        for want in [
            format!("{place} of Java task connectrs.testplugins.RecordingSinkTask failed"),
            "java.lang.IllegalStateException".to_owned(),
            format!("(throw.in={place})"),
            "at connectrs.testplugins.RecordingSinkTask.".to_owned(),
        ] {
            assert!(trace.contains(&want), "{want:?} in the trace: {trace}");
        }
        let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    }
    assert!(w.get("/").await.is_ok(), "the worker still serves");
}

/// `PATCH /connectors/{c}/offsets` of a stopped Java sink asks the connector's `alterOffsets`
/// (which acknowledges: Apache's success message) and `DELETE` resets through it too.
#[tokio::test(flavor = "multi_thread")]
async fn altering_a_java_connectors_offsets_asks_its_alter_offsets() {
    let spec = spec("java-alter");
    let w = spec.start_worker().await;
    let topic = unique("java-alter-in");
    kafka::create_topics(&[&topic], 1).await;
    let name = unique("java-alter");
    let file = spec.dir.join("alter.txt");
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "RecordingSink",
            "topics": topic,
            "file": file.display().to_string(),
        }),
    )
    .await;
    eventually(Duration::from_secs(60), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    let (status, body) = w
        .send("PUT", &format!("/connectors/{name}/stop"), None)
        .await;
    assert!(status < 300, "{status} {body}");
    eventually(Duration::from_secs(60), "the connector STOPPED", || async {
        let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (s["connector"]["state"] == "STOPPED").then_some(())
    })
    .await;
    let (status, body) = w
        .send(
            "PATCH",
            &format!("/connectors/{name}/offsets"),
            Some(json!({"offsets": [{
                "partition": {"kafka_topic": topic, "kafka_partition": 0},
                "offset": {"kafka_offset": 5}
            }]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["message"],
        "The offsets for this connector have been altered successfully"
    );
    let (status, body) = w
        .send("DELETE", &format!("/connectors/{name}/offsets"), None)
        .await;
    assert_eq!(status, 200, "{body}");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(text.contains(&format!("ALTER {topic}-0=5\n")), "{text}");
    assert!(text.contains(&format!("ALTER {topic}-0=reset\n")), "{text}");
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// Connector-defined transaction boundaries of a Java source: the project's CountingSource asks
/// its `TransactionContext` to commit after every 10th record (inside 7-record batches); under
/// `read_committed` the topic shows a transaction marker after every 10th record and nowhere
/// else: record i at offset i + i/10.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_sources_transaction_boundaries_are_kept() {
    let spec = spec("java-txn").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let topic = unique("java-txn");
    kafka::create_topics(&[&topic], 1).await;
    let name = unique("java-txn");
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "connectrs.testplugins.CountingSourceConnector",
            "topic": topic,
            "max.records": "40",
            "boundary.every": "10",
            "exactly.once.support": "required",
            "transaction.boundary": "connector",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }),
    )
    .await;
    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(60),
            |r| r.len() >= 40,
        )
    })
    .await
    .expect("40 committed records");
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    let got: Vec<(i64, String)> = records
        .iter()
        .map(|r| (r.offset, r.value.clone().unwrap_or_default()))
        .collect();
    let want: Vec<(i64, String)> = (0..40).map(|i| (i + i / 10, i.to_string())).collect();
    assert_eq!(got, want, "a transaction ends after every 10th record");
}

/// A frozen JVM (SIGSTOP: what a hung one looks like from outside) is killed once it leaves the
/// worker's liveness ping unanswered (here 2 s): its connector and task become FAILED saying so,
/// instead of waiting forever.
#[tokio::test(flavor = "multi_thread")]
async fn a_frozen_jvm_is_killed_and_fails_what_it_ran() {
    let w = spec("java-frozen")
        .set("auto.restart.enable", "false")
        .env("CONNECT_PLUGIN_HOST_PING_TIMEOUT_MS", "2000")
        .start_worker()
        .await;
    let hosts = plugin_hosts_of(w.pid().expect("worker pid"));
    assert_eq!(hosts.len(), 1, "{hosts:?}");
    let topic = unique("java-frozen");
    kafka::create_topics(&[&topic], 1).await;
    let name = unique("java-frozen");
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "connectrs.testplugins.CountingSourceConnector",
            "topic": topic,
            "max.records": "100000000",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }),
    )
    .await;
    eventually(Duration::from_secs(60), "the task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    let _ = Command::new("kill")
        .arg("-STOP")
        .arg(hosts[0].to_string())
        .status();
    let status = eventually(
        Duration::from_secs(30),
        "task and connector FAILED",
        || async {
            let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
            (s["tasks"][0]["state"] == "FAILED" && s["connector"]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("did not answer for 2 s"), "{status}");
    assert!(!alive(hosts[0]), "the frozen JVM was killed");
    assert!(w.get("/").await.is_ok(), "the worker still serves");
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// A Java sink gets Connect data of every type as Apache's JsonConverter would have given it:
/// records written with schemas (nested and optional structs, Decimal, Date, Timestamp, bytes,
/// arrays with nulls, maps with string and with int keys, every primitive) are read by this
/// worker's JsonConverter, cross to the JVM in the binary form, and the RecordingSink
/// (`format=json`) writes each back through Apache's JsonConverter: schema and payload equal
/// what was produced.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_sink_gets_connect_data_of_every_type_as_apaches_converter_reads_it() {
    let spec = spec("java-sink-types");
    let w = spec.start_worker().await;
    let name = unique("java-sink-types");
    let topic = unique("java-sink-types-in");
    kafka::create_topics(&[&topic], 1).await;
    let file = spec.dir.join("sink.txt");
    let inner = json!({"type": "struct", "optional": true, "name": "Inner", "fields": [
        {"type": "string", "optional": false, "field": "s"},
        {"type": "int16", "optional": false, "field": "i16"}]});
    let schema = json!({"type": "struct", "optional": false, "name": "Row", "version": 2,
        "doc": "a row", "fields": [
        {"type": "int8", "optional": false, "field": "i8"},
        {"type": "int32", "optional": true, "field": "i32"},
        {"type": "int64", "optional": false, "field": "i64"},
        {"type": "float", "optional": false, "field": "f32"},
        {"type": "double", "optional": false, "field": "f64"},
        {"type": "boolean", "optional": false, "field": "b"},
        {"type": "bytes", "optional": false, "field": "raw"},
        {"type": "bytes", "optional": false, "name": "org.apache.kafka.connect.data.Decimal",
         "version": 1, "parameters": {"scale": "2"}, "field": "price"},
        {"type": "int32", "optional": false, "name": "org.apache.kafka.connect.data.Date",
         "version": 1, "field": "day"},
        {"type": "int64", "optional": true, "name": "org.apache.kafka.connect.data.Timestamp",
         "version": 1, "field": "at"},
        {"type": "array", "items": {"type": "string", "optional": true}, "optional": false,
         "field": "tags"},
        {"type": "map", "keys": {"type": "string", "optional": false},
         "values": {"type": "int32", "optional": false}, "optional": false, "field": "counts"},
        {"type": "map", "keys": {"type": "int32", "optional": false},
         "values": {"type": "string", "optional": false}, "optional": false, "field": "names"},
        inner.clone().as_object().unwrap().clone().into_iter()
            .chain([("field".to_owned(), json!("inner"))]).collect::<serde_json::Map<_, _>>(),
        inner.as_object().unwrap().clone().into_iter()
            .chain([("field".to_owned(), json!("none"))]).collect::<serde_json::Map<_, _>>(),
    ]});
    let payload = |i: i64| {
        json!({"i8": -3, "i32": if i % 2 == 0 { json!(null) } else { json!(i) }, "i64": i * 1_000_000_007,
            "f32": 1.5, "f64": -2.25e-3, "b": i % 3 == 0, "raw": "AAEC/w==", "price": "BNI=",
            "day": 19000 + i, "at": 1_700_000_000_123_i64 + i,
            "tags": ["a", null, format!("t{i}")], "counts": {"x": 1, "y": i},
            "names": [[1, "one"], [2, format!("two{i}")]],
            "inner": {"s": format!("in{i}"), "i16": -12}, "none": null})
    };
    let records: Vec<serde_json::Value> = (0..10)
        .map(|i| json!({"schema": schema, "payload": payload(i)}))
        .collect();
    kafka::produce(
        &topic,
        records
            .iter()
            .enumerate()
            .map(|(i, r)| (Some(format!("k{i}")), Some(r.to_string()))),
    )
    .await;
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "RecordingSink",
            "tasks.max": "1",
            "topics": topic,
            "file": file.display().to_string(),
            "format": "json",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true",
        }),
    )
    .await;
    let lines = eventually(
        Duration::from_secs(60),
        "10 records in the file",
        || async {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let lines: Vec<String> = text
                .lines()
                .filter(|l| l.starts_with("RECORD"))
                .map(str::to_owned)
                .collect();
            (lines.len() >= 10).then_some(lines)
        },
    )
    .await;
    for (i, line) in lines.iter().enumerate() {
        let written = line.split(" value=").nth(1).unwrap_or_default();
        let got: serde_json::Value = serde_json::from_str(written)
            .unwrap_or_else(|e| panic!("record {i} is not JSON ({e}): {line}"));
        assert_eq!(
            got["payload"], records[i]["payload"],
            "record {i}'s payload: {line}"
        );
        assert_eq!(
            got["schema"], records[i]["schema"],
            "record {i}'s schema: {line}"
        );
    }
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}
