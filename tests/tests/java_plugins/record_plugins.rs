//! Java converters, header converters, transformations and predicates of `plugin.path` (the
//! project's own, tests/java-plugins/record-plugins: `TagValue`, `ValueMatches`,
//! `PrefixConverter`) named in connector configs beside the built-in Rust ones: listed with
//! their versions, their config definitions served and used in validation, run on a built-in
//! source's records and on a Java sink's, and their exceptions handled as Apache handles them
//! (the task FAILED with the Java trace, or the record skipped into the dead letter queue with
//! `errors.tolerance=all`); a JVM killed under them is replaced without failing the task.

// Progress goes to the test's captured output.
#![allow(clippy::print_stdout)]

use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{WorkerProc, create_connector, eventually};
use serde_json::{Value, json};

use super::{plugin_hosts_of, spec};

const TAG: &str = "connectrs.testplugins.TagValue";
const MATCHES: &str = "connectrs.testplugins.ValueMatches";
const PREFIX: &str = "connectrs.testplugins.PrefixConverter";

fn listed(plugins: &Value, class: &str, kind: &str) -> Option<Value> {
    plugins
        .as_array()?
        .iter()
        .find(|p| p["class"] == class && p["type"] == kind)
        .cloned()
}

async fn key_names(w: &WorkerProc, plugin: &str) -> Vec<String> {
    let keys = w
        .get(&format!("/connector-plugins/{plugin}/config"))
        .await
        .unwrap_or_else(|e| panic!("config of {plugin}: {e}"));
    keys.as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str().map(str::to_owned))
        .collect()
}

/// The errors a validate answer has on `key`.
fn errors_on(body: &Value, key: &str) -> Vec<String> {
    body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == key)
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect()
}

/// A built-in Rust source (VerifiableSource, batches of 4) with a Java transformation under a
/// Java predicate (each applied to a batch in one call),
/// a built-in transformation after it, and Java key, value and header converters: the even
/// records are tagged and renamed, the odd ones pass, every key, value and header is written by
/// the Java converter. Listing, config definitions and validation know the Java classes; an
/// unknown class is still "could not be found".
#[tokio::test(flavor = "multi_thread")]
async fn java_transforms_predicates_and_converters_run_on_a_builtin_source() {
    let spec = spec("java-smt");
    let w = spec.start_worker().await;

    let plugins = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .expect("list plugins");
    for (class, kind, version) in [
        (TAG, "transformation", "2.5-test"),
        (MATCHES, "predicate", "2.5-test"),
        (PREFIX, "converter", "3.1-test"),
        (PREFIX, "header_converter", "3.1-test"),
    ] {
        let p =
            listed(&plugins, class, kind).unwrap_or_else(|| panic!("{class} {kind} in {plugins}"));
        assert_eq!(p["version"], version, "{p}");
    }
    // The built-in ones are listed as before.
    for (class, kind) in [
        (
            "org.apache.kafka.connect.transforms.InsertHeader",
            "transformation",
        ),
        ("org.apache.kafka.connect.json.JsonConverter", "converter"),
    ] {
        assert!(
            listed(&plugins, class, kind).is_some(),
            "{class} in {plugins}"
        );
    }
    let only_connectors = w.get("/connector-plugins").await.expect("list connectors");
    assert!(listed(&only_connectors, TAG, "transformation").is_none());

    let tag_keys = key_names(&w, TAG).await;
    for key in ["tag", "topic.suffix", "fail.on"] {
        assert!(tag_keys.iter().any(|k| k == key), "{key} in {tag_keys:?}");
    }
    assert_eq!(
        key_names(&w, "PrefixConverter").await,
        vec!["prefix".to_owned(), "fail.configure".to_owned()]
    );
    assert_eq!(
        key_names(&w, "ValueMatches").await,
        vec!["pattern".to_owned()]
    );

    let name = unique("java-smt");
    let topic = unique("java-smt-out");
    let even = format!("{topic}-even");
    kafka::create_topics(&[&topic, &even], 1).await;
    let config = json!({
        "name": name,
        "connector.class": "VerifiableSource",
        "tasks.max": "1",
        "topic": topic,
        "max.records": "10",
        "batch.size": "4",
        "key.converter": PREFIX,
        "key.converter.prefix": "J|",
        "value.converter": PREFIX,
        "value.converter.prefix": "J|",
        "header.converter": "PrefixConverter",
        "transforms": "tag,via",
        "transforms.tag.type": TAG,
        "transforms.tag.tag": "t1",
        "transforms.tag.topic.suffix": "-even",
        "transforms.tag.predicate": "even",
        "transforms.via.type": "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.via.header": "via",
        "transforms.via.value.literal": "rust",
        "predicates": "even",
        "predicates.even.type": "ValueMatches",
        "predicates.even.pattern": "\\d*[02468]",
    });

    // Validation: the Java classes' own keys are validated and listed (a missing required
    // one is an error on its key); an unknown class is the error it always was.
    let validate = |config: Value| {
        let w = &w;
        async move {
            let (status, body) = w
                .send(
                    "PUT",
                    "/connector-plugins/VerifiableSource/config/validate",
                    Some(config),
                )
                .await;
            assert_eq!(status, 200, "{body}");
            body
        }
    };
    let body = validate(config.clone()).await;
    assert_eq!(body["error_count"], 0, "{body}");
    let listed_keys: Vec<&str> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["definition"]["name"].as_str())
        .collect();
    for key in [
        "transforms.tag.tag",
        "predicates.even.pattern",
        "value.converter.prefix",
    ] {
        assert!(listed_keys.contains(&key), "{key} in {listed_keys:?}");
    }
    let recommended = |key: &str| -> Vec<Value> {
        body["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == key)
            .and_then(|c| c["value"]["recommended_values"].as_array().cloned())
            .unwrap_or_default()
    };
    for key in ["value.converter", "header.converter"] {
        assert!(
            recommended(key).contains(&json!(PREFIX)),
            "{PREFIX} recommended for {key}"
        );
    }
    let mut bad = config.clone();
    bad.as_object_mut().unwrap().remove("transforms.tag.tag");
    bad["transforms.via.type"] = json!("com.example.Nope");
    bad["value.converter"] = json!("com.example.NoConverter");
    let body = validate(bad).await;
    assert!(!errors_on(&body, "transforms.tag.tag").is_empty(), "{body}");
    assert!(
        errors_on(&body, "transforms.via.type")
            .iter()
            .any(|e| e.contains("Class com.example.Nope could not be found.")),
        "{body}"
    );
    assert!(
        !errors_on(&body, "value.converter").is_empty(),
        "an unknown converter: {body}"
    );

    create_connector(&w, &name, config).await;
    let (t, e) = (topic.clone(), even.clone());
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t, &e],
            Isolation::ReadUncommitted,
            Duration::from_secs(90),
            |r| r.len() >= 10,
        )
    })
    .await
    .expect("read the output");
    assert_eq!(records.len(), 10, "{records:?}");
    for r in &records {
        assert_eq!(r.key.as_deref(), Some("J|key:0"), "{r:?}");
        let header = |k: &str| {
            r.headers
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header("via").as_deref(), Some("header:rust"), "{r:?}");
        let value = r.value.as_deref().unwrap_or_default();
        let seqno: i64 = if r.topic == even {
            assert_eq!(header("tagged-by").as_deref(), Some("header:t1"), "{r:?}");
            let inner = value
                .strip_prefix("J|value:Struct{original=")
                .and_then(|v| v.strip_suffix(",tag=t1,sink=false}"))
                .unwrap_or_else(|| panic!("a tagged value: {r:?}"));
            inner.parse().expect("the original seqno")
        } else {
            assert_eq!(r.topic, topic);
            assert_eq!(header("tagged-by"), None, "{r:?}");
            value
                .strip_prefix("J|value:")
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("an untagged value: {r:?}"))
        };
        assert_eq!(
            r.topic == even,
            seqno % 2 == 0,
            "the even records, and only they, are tagged: {r:?}"
        );
    }
    let mut seqnos: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    seqnos.sort();
    seqnos.dedup();
    assert_eq!(seqnos.len(), 10, "each record once: {seqnos:?}");
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// A Java sink's records through a Java converter and a Java transformation (which gets
/// `SinkRecord`s): the transformation throwing on one record fails the task with the Java
/// exception and stack trace in its trace, or, with `errors.tolerance=all`, sends that record
/// to the dead letter queue naming the class while the others reach `put` transformed; a
/// converter throwing in `configure` fails the task naming it.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_transform_that_throws_fails_the_task_or_is_tolerated() {
    let spec = spec("java-smt-sink");
    let w = spec.start_worker().await;
    let topic = unique("java-smt-in");
    let dlq = format!("{topic}-dlq");
    kafka::create_topics(&[&topic, &dlq], 1).await;
    kafka::produce(
        &topic,
        (0..6).map(|i| (Some(format!("k{i}")), Some(format!("v{i}")))),
    )
    .await;
    let config = |file: &str| {
        json!({
            "connector.class": "RecordingSink",
            "tasks.max": "1",
            "topics": topic,
            "file": spec.dir.join(file).display().to_string(),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": PREFIX,
            "transforms": "tag",
            "transforms.tag.type": "TagValue",
            "transforms.tag.tag": "s",
            "transforms.tag.fail.on": "v3",
        })
    };

    // Not tolerated: the task is FAILED with the Java exception.
    let failing = unique("java-smt-fail");
    create_connector(&w, &failing, config("fail.txt")).await;
    let task = eventually(Duration::from_secs(60), "the task FAILED", || async {
        let status = w.get(&format!("/connectors/{failing}/status")).await.ok()?;
        (status["tasks"][0]["state"] == "FAILED").then(|| status["tasks"][0].clone())
    })
    .await;
    let trace = task["trace"].as_str().unwrap_or_default();
    for want in [
        format!("apply of Java transformation {TAG} failed"),
        "org.apache.kafka.connect.errors.DataException: TagValue refuses the value v3".to_owned(),
        format!("at {TAG}.apply"),
    ] {
        assert!(trace.contains(&want), "{want:?} in the trace: {trace}");
    }
    let _ = w
        .send("DELETE", &format!("/connectors/{failing}"), None)
        .await;

    // Tolerated: the record goes to the dead letter queue, the others reach put.
    let name = unique("java-smt-tolerate");
    let mut tolerant = config("sink.txt");
    for (k, v) in [
        ("errors.tolerance", "all"),
        ("errors.deadletterqueue.topic.name", dlq.as_str()),
        ("errors.deadletterqueue.topic.replication.factor", "1"),
        ("errors.deadletterqueue.context.headers.enable", "true"),
    ] {
        tolerant[k] = json!(v);
    }
    create_connector(&w, &name, tolerant).await;
    let file = spec.dir.join("sink.txt");
    let lines = eventually(Duration::from_secs(60), "5 records in the file", || async {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let lines: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("RECORD"))
            .map(str::to_owned)
            .collect();
        (lines.len() >= 5).then_some(lines)
    })
    .await;
    assert_eq!(lines.len(), 5, "{lines:?}");
    for i in [0, 1, 2, 4, 5] {
        let want =
            format!("@{i} key=k{i} value=Struct{{original=v{i},tag=s,sink=true}} tagged-by=s");
        assert!(
            lines.iter().any(|l| l.ends_with(&want)),
            "{want} in {lines:?}"
        );
    }
    let d = dlq.clone();
    let dead = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&d],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| !r.is_empty(),
        )
    })
    .await
    .expect("read the dead letter queue");
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].value.as_deref(), Some("v3"));
    let header = |k: &str| {
        dead[0]
            .headers
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        header("__connect.errors.class.name").as_deref(),
        Some(TAG),
        "{dead:?}"
    );
    assert!(
        header("__connect.errors.exception.message")
            .is_some_and(|m| m.contains("TagValue refuses the value v3")),
        "{dead:?}"
    );
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// A Java converter named in the worker's own properties (`value.converter`, with its
/// `value.converter.*` settings) converts the values of a connector that sets none.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_converter_in_the_worker_config_serves_connectors() {
    let spec = spec("java-worker-conv")
        .set("value.converter", PREFIX)
        .set("value.converter.prefix", "W|");
    let w = spec.start_worker().await;
    let name = unique("java-worker-conv");
    let topic = unique("java-worker-conv-out");
    kafka::create_topics(&[&topic], 1).await;
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "VerifiableSource",
            "tasks.max": "1",
            "topic": topic,
            "max.records": "3",
        }),
    )
    .await;
    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| r.len() >= 3,
        )
    })
    .await
    .expect("read the output");
    let mut values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    values.sort();
    assert_eq!(
        values,
        ["W|value:0", "W|value:1", "W|value:2"],
        "{records:?}"
    );
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// A JVM killed under a built-in source's running Java transformation and converter is replaced
/// at their next call, where they are configured again: the task stays RUNNING (with
/// `errors.tolerance=none`, a failed record would fail it) and every record arrives, transformed
/// and converted by the Java plugins.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_jvm_under_java_stages_is_replaced_without_failing_the_task() {
    let w = spec("java-smt-kill")
        .set("auto.restart.enable", "false")
        .start_worker()
        .await;
    let worker_pid = w.pid().expect("worker pid");
    let hosts = plugin_hosts_of(worker_pid);
    assert_eq!(hosts.len(), 1, "one plugin host: {hosts:?}");
    let name = unique("java-smt-kill");
    let topic = unique("java-smt-kill-out");
    kafka::create_topics(&[&topic], 1).await;
    let total = 400;
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "VerifiableSource",
            "tasks.max": "1",
            "topic": topic,
            "max.records": total.to_string(),
            "throughput": "100",
            "batch.size": "5",
            "value.converter": PREFIX,
            "transforms": "tag",
            "transforms.tag.type": TAG,
            "transforms.tag.tag": "k",
        }),
    )
    .await;
    let read = |at_least: usize| {
        let t = topic.clone();
        tokio::task::spawn_blocking(move || {
            kafka::read_until(
                &[&t],
                Isolation::ReadUncommitted,
                Duration::from_secs(90),
                |r| r.len() >= at_least,
            )
        })
    };
    let before = read(50).await.expect("read the first records");
    assert!(before.len() < total, "killed mid-run: {}", before.len());
    let _ = std::process::Command::new("kill")
        .arg("-KILL")
        .arg(hosts[0].to_string())
        .status();
    let records = read(total).await.expect("read every record");
    let mut seqnos: Vec<usize> = records
        .iter()
        .map(|r| {
            r.value
                .as_deref()
                .and_then(|v| v.strip_prefix("value:Struct{original="))
                .and_then(|v| v.strip_suffix(",tag=k,sink=false}"))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("a tagged value: {r:?}"))
        })
        .collect();
    seqnos.sort_unstable();
    seqnos.dedup();
    assert_eq!(
        seqnos,
        (0..total).collect::<Vec<_>>(),
        "every record, none skipped"
    );
    let status = w
        .get(&format!("/connectors/{name}/status"))
        .await
        .expect("status");
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
    let now = plugin_hosts_of(worker_pid);
    assert!(
        now.len() == 1 && now[0] != hosts[0],
        "a new plugin host: {now:?} (was {hosts:?})"
    );
    let _ = w.send("DELETE", &format!("/connectors/{name}"), None).await;
}

/// A Java transformation applied to an exactly-once source's batches in one call, throwing on
/// one record: with `errors.tolerance=all` only that record is skipped (the others of its
/// batch are transformed and committed); without, the task is FAILED with the Java trace.
#[tokio::test(flavor = "multi_thread")]
async fn a_java_transform_failing_in_a_batch_fails_only_that_record() {
    // The exactly-once runner: its batches are converted whole too.
    let spec = spec("java-smt-batch").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let config = |topic: &str, tolerance: &str| {
        json!({
            "connector.class": "VerifiableSource",
            "tasks.max": "1",
            "topic": topic,
            "max.records": "12",
            "batch.size": "4",
            "value.converter": PREFIX,
            "transforms": "tag",
            "transforms.tag.type": TAG,
            "transforms.tag.tag": "b",
            "transforms.tag.fail.on": "5",
            "errors.tolerance": tolerance,
        })
    };
    let tolerant = unique("java-smt-batch");
    let topic = unique("java-smt-batch-out");
    kafka::create_topics(&[&topic], 1).await;
    create_connector(&w, &tolerant, config(&topic, "all")).await;
    let t = topic.clone();
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(60),
            |r| r.len() >= 11,
        )
    })
    .await
    .expect("read the output");
    let values: Vec<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    let want: Vec<String> = (0..12)
        .filter(|i| *i != 5)
        .map(|i| format!("value:Struct{{original={i},tag=b,sink=false}}"))
        .collect();
    assert_eq!(values, want);
    let _ = w
        .send("DELETE", &format!("/connectors/{tolerant}"), None)
        .await;

    let failing = unique("java-smt-batch-fail");
    let topic = unique("java-smt-batch-fail-out");
    kafka::create_topics(&[&topic], 1).await;
    create_connector(&w, &failing, config(&topic, "none")).await;
    let task = eventually(Duration::from_secs(60), "the task FAILED", || async {
        let status = w.get(&format!("/connectors/{failing}/status")).await.ok()?;
        (status["tasks"][0]["state"] == "FAILED").then(|| status["tasks"][0].clone())
    })
    .await;
    let trace = task["trace"].as_str().unwrap_or_default();
    for want in [
        "Tolerance exceeded in error handler".to_owned(),
        format!("apply of Java transformation {TAG} failed"),
        "TagValue refuses the value 5".to_owned(),
        format!("at {TAG}.apply"),
    ] {
        assert!(trace.contains(&want), "{want:?} in the trace: {trace}");
    }
    let _ = w
        .send("DELETE", &format!("/connectors/{failing}"), None)
        .await;
}
