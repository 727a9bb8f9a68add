//! Single Message Transforms in the running worker against real Apache Kafka: a source chain
//! (`ValueToKey` + `ExtractField$Key` + `RegexRouter` + `Filter` with a negated
//! `TopicNameMatches`) lands the expected records in the expected topics; a sink transform that
//! fails on a poison record sends it to the dead-letter queue with `errors.tolerance=all` and
//! fails the task with `none`.

use std::collections::BTreeSet;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector as create, eventually};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const T: &str = "org.apache.kafka.connect.transforms.";

/// The chain under test, for a verifiable source writing to `topic`.
fn chain_config(topic: &str, routed_suffix: &str) -> Value {
    json!({
        "connector.class": VERIFIABLE, "topic": topic, "tasks.max": "1",
        "complete.record.data": "true", "max.records": "20", "throughput": "1000",
        "transforms": "vtk,extract,route,onlyRouted",
        "transforms.vtk.type": format!("{T}ValueToKey"),
        "transforms.vtk.fields": "seqno",
        "transforms.extract.type": format!("{T}ExtractField$Key"),
        "transforms.extract.field": "seqno",
        "transforms.route.type": format!("{T}RegexRouter"),
        "transforms.route.regex": "(.*)-a",
        "transforms.route.replacement": format!("$1-{routed_suffix}"),
        "transforms.onlyRouted.type": format!("{T}Filter"),
        "transforms.onlyRouted.predicate": "isRouted",
        "transforms.onlyRouted.negate": "true",
        "predicates": "isRouted",
        "predicates.isRouted.type": format!("{T}predicates.TopicNameMatches"),
        "predicates.isRouted.pattern": format!(".*-{routed_suffix}"),
    })
}

async fn committed_seqno(w: &connect_tests::worker::WorkerProc, connector: &str) -> Option<i64> {
    let o = w
        .get(&format!("/connectors/{connector}/offsets"))
        .await
        .ok()?;
    o["offsets"].as_array()?.first()?["offset"]["seqno"].as_i64()
}

#[tokio::test(flavor = "multi_thread")]
async fn source_chain_rekeys_routes_and_filters() {
    let spec = ClusterSpec::new("smt-src");
    let w = spec.start_worker().await;
    let base = unique("smt");
    let (a, b, routed) = (
        format!("{base}-a"),
        format!("{base}-b"),
        format!("{base}-routed"),
    );
    kafka::create_topics(&[&a, &b, &routed], 1).await;
    // `routed` writes to <base>-a, renamed to <base>-routed: kept by the negated filter.
    create(&w, "routed", chain_config(&a, "routed")).await;
    // `dropped` writes to <base>-b, which the router does not rename: the filter drops all.
    create(&w, "dropped", chain_config(&b, "routed")).await;

    let records = tokio::task::spawn_blocking({
        let routed = routed.clone();
        move || {
            kafka::read_until(
                &[&routed],
                Isolation::ReadUncommitted,
                Duration::from_secs(90),
                |seen| seen.len() >= 20,
            )
        }
    })
    .await
    .unwrap();
    let keys: BTreeSet<String> = records.iter().filter_map(|r| r.key.clone()).collect();
    assert_eq!(
        keys,
        (0..20).map(|i: i64| i.to_string()).collect(),
        "keys are the extracted seqno"
    );
    for r in &records {
        let v: Value = serde_json::from_str(r.value.as_deref().unwrap()).unwrap();
        assert_eq!(v["seqno"].to_string(), *r.key.as_ref().unwrap(), "{v}");
        assert_eq!(v["topic"], json!(a), "the value is untouched: {v}");
    }

    // Both connectors finished their 20 records (offsets committed for every one)...
    for c in ["routed", "dropped"] {
        eventually(
            Duration::from_secs(60),
            "all source offsets committed",
            || async { (committed_seqno(&w, c).await == Some(19)).then_some(()) },
        )
        .await;
    }
    // KIP-558 records the topic a record was produced to, after the chain (as Apache does):
    // the renamed topic, never the one the task wrote; nothing for the connector whose records
    // were all filtered out.
    assert_active_topics(&w, "routed", json!([routed])).await;
    let t = w.get("/connectors/dropped/topics").await.unwrap();
    assert_eq!(t["dropped"]["topics"], json!([]), "{t}");
    // ...yet nothing reached the original topics: renamed, or filtered out.
    let leftovers = tokio::task::spawn_blocking(move || {
        kafka::read_all(
            &[&a, &b],
            Isolation::ReadUncommitted,
            Duration::from_secs(30),
        )
    })
    .await
    .unwrap();
    assert!(leftovers.is_empty(), "unexpected records: {leftovers:?}");
}

/// A file sink whose `ExtractField$Value` needs a map: `"poison"` (a JSON string) fails it.
fn sink_config(topic: &str, file: &str, tolerance: &str, dlq: Option<&str>) -> Value {
    let mut c = json!({
        "connector.class": "FileStreamSink", "topics": topic, "file": file,
        "transforms": "extract",
        "transforms.extract.type": format!("{T}ExtractField$Value"),
        "transforms.extract.field": "x",
        "errors.tolerance": tolerance,
        "consumer.override.group.id": unique("smt-sink"),
    });
    if let Some(d) = dlq {
        c["errors.deadletterqueue.topic.name"] = json!(d);
        c["errors.deadletterqueue.topic.replication.factor"] = json!("1");
        c["errors.deadletterqueue.context.headers.enable"] = json!("true");
    }
    c
}

async fn produce_with_poison(topic: &str) {
    kafka::create_topics(&[topic], 1).await;
    let values = [
        r#"{"x":"a"}"#,
        r#""poison""#,
        r#"{"x":"b"}"#,
        r#"{"x":"c"}"#,
    ];
    kafka::produce(topic, values.iter().map(|v| (None, Some((*v).to_owned())))).await;
}

/// Headers of every record in `topic` (read from the start until `n` records are seen).
fn dlq_headers(topic: &str, n: usize) -> Vec<Vec<(String, String)>> {
    let consumer: BaseConsumer = kafka::client_config()
        .set("group.id", unique("dlq-reader"))
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut out = Vec::new();
    while out.len() < n {
        assert!(std::time::Instant::now() < deadline, "DLQ has {out:?}");
        if let Some(Ok(m)) = consumer.poll(Duration::from_millis(200)) {
            let hs = m
                .headers()
                .map(|hs| {
                    hs.iter()
                        .map(|h| {
                            let v = h.value.map(String::from_utf8_lossy).unwrap_or_default();
                            (h.key.to_owned(), v.into_owned())
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.push(hs);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn sink_transform_failures_go_to_the_dlq_or_fail_the_task() {
    let spec = ClusterSpec::new("smt-sink");
    let w = spec.start_worker().await;

    // errors.tolerance=all: the good records are extracted and written, the poison one goes to
    // the dead-letter queue with the TRANSFORMATION stage and the transform's class.
    let topic = unique("smt-sink-all");
    let dlq = unique("smt-dlq");
    produce_with_poison(&topic).await;
    let file = spec.dir.join("all.txt");
    create(
        &w,
        "tolerant",
        sink_config(&topic, file.to_str().unwrap(), "all", Some(&dlq)),
    )
    .await;
    let lines = eventually(Duration::from_secs(60), "three extracted lines", || async {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        (lines.len() == 3).then_some(lines)
    })
    .await;
    assert_eq!(lines, ["a", "b", "c"]);
    let dlq_topic = dlq.clone();
    let headers = tokio::task::spawn_blocking(move || dlq_headers(&dlq_topic, 1))
        .await
        .unwrap();
    let get = |k: &str| {
        headers[0]
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        get("__connect.errors.stage").as_deref(),
        Some("TRANSFORMATION")
    );
    assert_eq!(
        get("__connect.errors.class.name").as_deref(),
        Some("org.apache.kafka.connect.transforms.ExtractField$Value")
    );
    assert_eq!(get("__connect.errors.offset").as_deref(), Some("1"));
    assert!(
        get("__connect.errors.exception.message")
            .unwrap_or_default()
            .contains("Only Map objects supported in absence of schema for [field extraction]"),
        "{headers:?}"
    );

    // errors.tolerance=none: the same poison record fails the task, naming the cause.
    let topic = unique("smt-sink-none");
    produce_with_poison(&topic).await;
    let file = spec.dir.join("none.txt");
    create(
        &w,
        "strict",
        sink_config(&topic, file.to_str().unwrap(), "none", None),
    )
    .await;
    let status = eventually(
        Duration::from_secs(60),
        "the strict task FAILED",
        || async {
            let s = w.get("/connectors/strict/status").await.ok()?;
            (s["tasks"][0]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("Tolerance exceeded in error handler")
            && trace.contains("Only Map objects supported"),
        "{trace}"
    );
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        !text.contains("b"),
        "nothing after the poison record: {text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_that_cannot_be_built_fails_the_task_with_the_reason() {
    let spec = ClusterSpec::new("smt-bad");
    let w = spec.start_worker().await;
    let topic = unique("smt-bad");
    // Valid as far as validation goes (Apache validates keys, not configure()), but InsertField
    // refuses to start without any field to insert.
    create(
        &w,
        "nofields",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "10",
            "transforms": "ins", "transforms.ins.type": format!("{T}InsertField$Value"),
        }),
    )
    .await;
    let status = eventually(Duration::from_secs(60), "the task FAILED", || async {
        let s = w.get("/connectors/nofields/status").await.ok()?;
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    })
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(trace.contains("No field insertion configured"), "{trace}");
}

/// The current UTC year (Howard Hinnant's civil-from-days), for `TimestampRouter`'s `yyyy`.
fn current_utc_year() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(month <= 2)
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_sink_writes_routed_and_masked_rows() {
    use connect_tests::postgres::{database_url, pool, unique_table};
    use sqlx::Row;

    let spec = ClusterSpec::new("smt-pg");
    let w = spec.start_worker().await;
    // A topic name that is also a table name; TimestampRouter appends the record's year.
    let topic = unique_table("smt_pg");
    kafka::create_topics(&[&topic], 1).await;
    let year = current_utc_year();
    let p = pool().await;
    for y in [year, year + 1] {
        sqlx::query(&format!(
            "CREATE TABLE {topic}_{y} (id BIGINT PRIMARY KEY, v BIGINT NOT NULL, secret TEXT)"
        ))
        .execute(&p)
        .await
        .unwrap();
    }
    kafka::produce(
        &topic,
        (0..10i64).map(|i| {
            (
                Some(i.to_string()),
                Some(json!({"v": i * 10, "secret": format!("s{i}")}).to_string()),
            )
        }),
    )
    .await;
    create(
        &w,
        "pg",
        json!({
            "connector.class": "connect_connectors::jdbc::PostgresSinkConnector",
            "tasks.max": "1", "topics": topic, "connection.url": database_url(),
            "table.name.format": "${topic}", "pk.mode": "record_key", "pk.fields": "id",
            "transforms": "route,mask",
            "transforms.route.type": format!("{T}TimestampRouter"),
            "transforms.route.topic.format": "${topic}_${timestamp}",
            "transforms.route.timestamp.format": "yyyy",
            "transforms.mask.type": format!("{T}MaskField$Value"),
            "transforms.mask.fields": "secret",
            "transforms.mask.replacement": "****",
        }),
    )
    .await;
    // The records were produced this year (or, at a year boundary, the next).
    let rows = eventually(Duration::from_secs(60), "ten routed rows", || async {
        let mut all = Vec::new();
        for y in [year, year + 1] {
            let rows = sqlx::query(&format!(
                "SELECT id, v, secret FROM {topic}_{y} ORDER BY id"
            ))
            .fetch_all(&p)
            .await
            .ok()?;
            all.extend(rows.iter().map(|r| {
                (
                    r.get::<i64, _>(0),
                    r.get::<i64, _>(1),
                    r.get::<Option<String>, _>(2),
                )
            }));
        }
        (all.len() == 10).then_some(all)
    })
    .await;
    let expected: Vec<(i64, i64, Option<String>)> = (0..10)
        .map(|i| (i, i * 10, Some("****".to_owned())))
        .collect();
    assert_eq!(rows, expected);
    p.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn offsets_sink_tracks_consumed_partitions_when_a_transform_renames_the_topic() {
    use connect_tests::postgres::{database_url, pool, unique_table};
    use sqlx::Row;

    let spec = ClusterSpec::new("smt-pg-off");
    let w = spec.start_worker().await;
    let topic = unique("smt-off");
    let table = unique_table("smt_off");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(
        &topic,
        (0..20i64).map(|n| (None, Some(json!({"n": n}).to_string()))),
    )
    .await;
    create(
        &w,
        "off",
        json!({
            "connector.class": "connect_connectors::jdbc::PostgresOffsetsSinkConnector",
            "tasks.max": "1", "topics": topic, "connection.url": database_url(),
            "table.name.format": table, "auto.create": "true",
            "offsets.table.name": format!("{table}_offsets"),
            "transforms": "rename",
            "transforms.rename.type": format!("{T}RegexRouter"),
            "transforms.rename.regex": ".*",
            "transforms.rename.replacement": "renamed",
        }),
    )
    .await;
    let p = pool().await;
    eventually(Duration::from_secs(60), "twenty rows", || async {
        let n: i64 = sqlx::query(&format!("SELECT count(*) FROM {table}"))
            .fetch_one(&p)
            .await
            .ok()?
            .get(0);
        (n == 20).then_some(())
    })
    .await;
    p.close().await;
    // The offsets reported for commit are the consumed topic's, not `renamed`'s.
    eventually(
        Duration::from_secs(60),
        "offsets committed for the consumed topic",
        || async {
            let t = topic.clone();
            let committed =
                tokio::task::spawn_blocking(move || kafka::committed_total("connect-off", &t, 1))
                    .await
                    .unwrap();
            (committed == 20).then_some(())
        },
    )
    .await;
}

/// Item 4 and 5 of the SMT issue, through a follower: each bad transform config is refused at
/// `POST /connectors` with its error on its key in `PUT .../config/validate`; the plugin list
/// and the plugin config endpoint know the transforms and predicates.
#[tokio::test(flavor = "multi_thread")]
async fn bad_transform_configs_are_refused_through_a_follower() {
    let spec = ClusterSpec::new("smt-validate");
    let a = spec.start_worker().await;
    a.wait_healthy().await;
    let b = spec.start_worker().await;
    b.wait_healthy().await;
    let follower = eventually(Duration::from_secs(60), "one leader", || async {
        match (a.is_leader()?, b.is_leader()?) {
            (true, false) => Some(&b),
            (false, true) => Some(&a),
            _ => None,
        }
    })
    .await;
    let topic = unique("smt-validate");
    let base = json!({"connector.class": VERIFIABLE, "topic": topic, "throughput": "10"});
    let with = |extra: Value| {
        let mut c = base.clone();
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let cases = [
        (
            with(json!({"transforms": "t", "transforms.t.type": format!("{T}NoSuchTransform")})),
            "transforms.t.type",
            format!(
                "Invalid value {T}NoSuchTransform for configuration transforms.t.type: Class {T}NoSuchTransform could not be found."
            ),
        ),
        (
            with(json!({"transforms": "r", "transforms.r.type": format!("{T}RegexRouter")})),
            "transforms.r.regex",
            "Missing required configuration \"transforms.r.regex\" which has no default value."
                .to_owned(),
        ),
        (
            with(json!({"transforms": "d", "transforms.d.type": format!("{T}Filter"),
                "transforms.d.predicate": "undefined"})),
            "transforms.d.predicate",
            "Invalid value undefined for configuration predicate: Predicate alias undefined is not defined in 'predicates'".to_owned(),
        ),
        (
            with(json!({"transforms": "p", "transforms.p.type": format!("{T}Filter"),
                "predicates": "x", "predicates.x.type": format!("{T}InsertField$Value")})),
            "predicates.x.type",
            format!(
                "Invalid value {T}InsertField$Value for configuration predicates.x.type: Not a Predicate"
            ),
        ),
    ];
    for (i, (config, key, message)) in cases.iter().enumerate() {
        let name = format!("bad{i}");
        let (s, body) = follower
            .send(
                "POST",
                "/connectors",
                Some(json!({"name": name, "config": config})),
            )
            .await;
        assert_eq!(s, 400, "{key}: {body}");
        let m = body["message"].as_str().unwrap_or_default();
        assert!(m.contains(message.as_str()), "{key}: {m}");
        let (s, infos) = follower
            .send(
                "PUT",
                "/connector-plugins/VerifiableSourceConnector/config/validate",
                Some(config.clone()),
            )
            .await;
        assert_eq!(s, 200, "{infos}");
        let errors: Vec<String> = infos["configs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["value"]["name"] == *key)
            .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
            .filter_map(|e| e.as_str().map(str::to_owned))
            .collect();
        assert_eq!(errors, vec![message.clone()], "{key}: {infos}");
    }
    assert_eq!(follower.get("/connectors").await.unwrap(), json!([]));

    let plugins = follower
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let has = |class: &str, kind: &str| {
        plugins
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["class"] == class && p["type"] == kind)
    };
    assert!(
        has(&format!("{T}InsertField$Value"), "transformation"),
        "{plugins}"
    );
    assert!(
        has(&format!("{T}predicates.HasHeaderKey"), "predicate"),
        "{plugins}"
    );
    let keys = follower
        .get(&format!("/connector-plugins/{T}RegexRouter/config"))
        .await
        .unwrap();
    let names: BTreeSet<&str> = keys
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert_eq!(names, BTreeSet::from(["regex", "replacement"]), "{keys}");
}

/// Waits until `GET /connectors/{connector}/topics` lists exactly `topics`.
async fn assert_active_topics(
    w: &connect_tests::worker::WorkerProc,
    connector: &str,
    topics: Value,
) {
    eventually(Duration::from_secs(30), "the active topics", || async {
        let t = w
            .get(&format!("/connectors/{connector}/topics"))
            .await
            .ok()?;
        (t[connector]["topics"] == topics).then_some(())
    })
    .await;
}

/// The exactly-once runner under a router: every record lands, committed, in the renamed topic,
/// and the active topic is the renamed one (the runtime takes it from the produced record, not
/// from the task's record, whose data the built-in sources let the chain take).
#[tokio::test(flavor = "multi_thread")]
async fn exactly_once_source_with_a_router() {
    let spec = ClusterSpec::new("smt-eos").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let base = unique("smt-eos");
    let (a, routed) = (format!("{base}-a"), format!("{base}-routed"));
    kafka::create_topics(&[&a, &routed], 1).await;
    create(
        &w,
        "eos-routed",
        json!({
            "connector.class": VERIFIABLE, "topic": a, "tasks.max": "1",
            "max.records": "50", "throughput": "1000",
            "transforms": "route",
            "transforms.route.type": format!("{T}RegexRouter"),
            "transforms.route.regex": "(.*)-a",
            "transforms.route.replacement": "$1-routed",
        }),
    )
    .await;
    let records = tokio::task::spawn_blocking({
        let routed = routed.clone();
        move || {
            kafka::read_until(
                &[&routed],
                Isolation::ReadCommitted,
                Duration::from_secs(90),
                |seen| seen.len() >= 50,
            )
        }
    })
    .await
    .unwrap();
    let values: BTreeSet<String> = records.iter().filter_map(|r| r.value.clone()).collect();
    assert_eq!(
        values.len(),
        50,
        "50 distinct committed records: {records:?}"
    );
    assert_active_topics(&w, "eos-routed", json!([routed])).await;
    eventually(
        Duration::from_secs(60),
        "all source offsets committed",
        || async { (committed_seqno(&w, "eos-routed").await == Some(49)).then_some(()) },
    )
    .await;
}
