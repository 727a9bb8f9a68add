//! Compatibility of the worker's Kafka clients with Apache Kafka Connect's, against real Kafka:
//! keyed records land on the partition Java's default partitioner picks (task producers and the
//! dead-letter queue), Java client properties in connector overrides are translated or refused
//! at create time, and a `tasks.max` no worker could honour is refused (or, when it is already
//! in the config topic, fails its connector and nothing else); a sink consumer's
//! `auto.offset.reset` (default `earliest`) takes effect.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector as create, eventually, running_tasks};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

/// Apache Kafka's `Utils.murmur2`, transcribed from its Java definition (wrapping 32-bit ints,
/// `>>>` as a logical shift on the bits, the switch falling through).
fn murmur2(data: &[u8]) -> i32 {
    let length = data.len() as i32;
    let seed = 0x9747_b28c_u32 as i32;
    let m: i32 = 0x5bd1_e995;
    let r = 24;
    let ushr = |x: i32, n: u32| ((x as u32) >> n) as i32;
    let mut h = seed ^ length;
    for i in 0..(length / 4) as usize {
        let i4 = i * 4;
        let mut k = (i32::from(data[i4]) & 0xff)
            .wrapping_add((i32::from(data[i4 + 1]) & 0xff) << 8)
            .wrapping_add((i32::from(data[i4 + 2]) & 0xff) << 16)
            .wrapping_add((i32::from(data[i4 + 3]) & 0xff) << 24);
        k = k.wrapping_mul(m);
        k ^= ushr(k, r);
        k = k.wrapping_mul(m);
        h = h.wrapping_mul(m);
        h ^= k;
    }
    let tail = (length & !3) as usize;
    let rest = length % 4;
    if rest >= 3 {
        h ^= (i32::from(data[tail + 2]) & 0xff) << 16;
    }
    if rest >= 2 {
        h ^= (i32::from(data[tail + 1]) & 0xff) << 8;
    }
    if rest >= 1 {
        h ^= i32::from(data[tail]) & 0xff;
        h = h.wrapping_mul(m);
    }
    h ^= ushr(h, 13);
    h = h.wrapping_mul(m);
    h ^= ushr(h, 15);
    h
}

/// Java's `BuiltInPartitioner.partitionForKey`: `toPositive(murmur2(key)) % numPartitions`.
fn java_partition(key: &[u8], partitions: i32) -> i32 {
    (murmur2(key) & 0x7fff_ffff) % partitions
}

/// librdkafka's default (`consistent_random`) partitioner for a key: CRC32 modulo the count.
fn crc32_partition(key: &[u8], partitions: i32) -> i32 {
    let mut crc = !0u32;
    for b in key {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    ((!crc) % partitions as u32) as i32
}

#[test]
fn murmur2_matches_apaches_test_vectors() {
    // UtilsTest.testMurmur2 in Apache Kafka.
    for (data, hash) in [
        (&b"21"[..], -973_932_308),
        (b"foobar", -790_332_482),
        (b"a-little-bit-long-string", -985_981_536),
        (b"a-little-bit-longer-string", -1_486_304_829),
        (
            b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
            -58_897_971,
        ),
        (b"abc", 479_470_107),
    ] {
        assert_eq!(murmur2(data), hash, "{}", String::from_utf8_lossy(data));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn keyed_source_records_land_on_javas_partition() {
    const PARTITIONS: i32 = 6;
    let topic = unique("murmur-src");
    kafka::create_topics(&[&topic], PARTITIONS).await;
    let keys: Vec<String> = (0..6).map(|t| t.to_string()).collect();
    // The test discriminates: CRC32 (librdkafka's default) puts some of these keys elsewhere.
    assert!(
        keys.iter()
            .any(|k| crc32_partition(k.as_bytes(), PARTITIONS)
                != java_partition(k.as_bytes(), PARTITIONS))
    );

    let spec = ClusterSpec::new("murmur");
    let w = spec.start_worker().await;
    // Keys are the task ids 0..5 (JSON without schemas: the bytes "0".."5").
    create(
        &w,
        "vs",
        json!({"connector.class": VERIFIABLE, "tasks.max": "6", "topic": topic, "max.records": "20"}),
    )
    .await;
    let records = tokio::task::spawn_blocking({
        let topic = topic.clone();
        move || {
            kafka::read_until(
                &[&topic],
                Isolation::ReadUncommitted,
                Duration::from_secs(90),
                |seen| seen.len() >= 120,
            )
        }
    })
    .await
    .unwrap();
    let mut partitions_by_key: BTreeMap<String, std::collections::BTreeSet<i32>> = BTreeMap::new();
    for r in &records {
        let key = r.key.clone().expect("verifiable records are keyed");
        partitions_by_key
            .entry(key)
            .or_default()
            .insert(r.partition);
    }
    assert_eq!(partitions_by_key.keys().cloned().collect::<Vec<_>>(), keys);
    for (key, partitions) in &partitions_by_key {
        let expected = java_partition(key.as_bytes(), PARTITIONS);
        assert_eq!(
            partitions.iter().copied().collect::<Vec<_>>(),
            [expected],
            "key {key}: Java's partitioner puts it on partition {expected}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_letter_queue_records_land_on_javas_partition() {
    const PARTITIONS: i32 = 4;
    let input = unique("murmur-dlq-in");
    let dlq = unique("murmur-dlq");
    kafka::create_topics(&[&input, &dlq], PARTITIONS).await;
    let keys: Vec<String> = (0..12).map(|i| format!("key-{i}")).collect();
    // Values that are not JSON: the converter fails, each record goes to the dead-letter queue.
    kafka::produce(
        &input,
        keys.iter()
            .map(|k| (Some(k.clone()), Some(format!("not json {k}")))),
    )
    .await;

    let spec = ClusterSpec::new("murmur-dlq");
    let w = spec.start_worker().await;
    let file = spec.dir.join("sink.txt");
    create(
        &w,
        "fs-compat",
        json!({
            "connector.class": FILE_SINK, "tasks.max": "1", "topics": input,
            "file": file.display().to_string(),
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
        }),
    )
    .await;
    let records = tokio::task::spawn_blocking({
        let dlq = dlq.clone();
        let n = keys.len();
        move || {
            kafka::read_until(
                &[&dlq],
                Isolation::ReadUncommitted,
                Duration::from_secs(90),
                |seen| seen.len() >= n,
            )
        }
    })
    .await
    .unwrap();
    for r in &records {
        let key = r.key.clone().expect("the original key is kept");
        let expected = java_partition(key.as_bytes(), PARTITIONS);
        assert_eq!(r.partition, expected, "dead-letter record with key {key}");
    }
}

fn error_messages(infos: &Value) -> Vec<String> {
    infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn java_client_overrides_are_translated_or_refused_when_created() {
    let input = unique("overrides-in");
    kafka::create_topics(&[&input], 1).await;
    kafka::produce(
        &input,
        (0..10).map(|i| (Some(i.to_string()), Some(format!("{{\"n\":{i}}}")))),
    )
    .await;
    let spec = ClusterSpec::new("overrides");
    let w = spec.start_worker().await;
    let file = spec.dir.join("out.txt");
    let with_name = |mut c: Value| {
        c["name"] = json!("validated");
        c
    };
    let config = |extra: Value| {
        let mut c = json!({
            "connector.class": FILE_SINK, "tasks.max": "1", "topics": input,
            "file": file.display().to_string(),
        });
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };

    // Apache's own keys are accepted and the task runs with them.
    let java_keys = json!({
        "consumer.override.max.poll.records": "300",
        "consumer.override.fetch.max.wait.ms": "100",
        "consumer.override.key.deserializer": "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        "producer.override.max.request.size": "2097152",
        "producer.override.buffer.memory": "33554432",
        "admin.override.default.api.timeout.ms": "60000",
    });
    let (status, infos) = w
        .send(
            "PUT",
            "/connector-plugins/FileStreamSinkConnector/config/validate",
            Some(with_name(config(java_keys.clone()))),
        )
        .await;
    assert_eq!(status, 200, "{infos}");
    assert_eq!(infos["error_count"], 0, "{:?}", error_messages(&infos));
    create(&w, "java-keys", config(java_keys)).await;
    eventually(Duration::from_secs(60), "the sink task RUNNING", || async {
        running_tasks(&w, "java-keys", 1).await
    })
    .await;
    eventually(
        Duration::from_secs(60),
        "every record written by the sink",
        || async {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            (text.lines().count() == 10).then_some(())
        },
    )
    .await;
    let status = w.get("/connectors/java-keys/status").await.unwrap();
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");

    // Unknown to Java and librdkafka alike: refused at create, on that key.
    let bad = config(json!({"consumer.override.max.pol.records": "300"}));
    let (status, infos) = w
        .send(
            "PUT",
            "/connector-plugins/FileStreamSinkConnector/config/validate",
            Some(with_name(bad.clone())),
        )
        .await;
    assert_eq!(status, 200, "{infos}");
    assert_eq!(infos["error_count"], 1, "{infos}");
    let entry = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "consumer.override.max.pol.records")
        .unwrap_or_else(|| panic!("no entry for the bad key: {infos}"));
    assert!(
        entry["value"]["errors"][0]
            .as_str()
            .unwrap()
            .contains("No such configuration property"),
        "{entry}"
    );
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "bad-keys", "config": bad})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("consumer.override.max.pol.records"),
        "{body}"
    );
    let (status, _) = w.send("GET", "/connectors/bad-keys", None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unbounded_tasks_max_is_refused_and_a_stored_one_fails_only_its_connector() {
    let spec = ClusterSpec::new("tasks-max");
    let w = spec.start_worker().await;
    let topic = unique("tasks-max-data");
    let huge = json!({"connector.class": VERIFIABLE, "tasks.max": "2147483647", "topic": topic});
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "huge", "config": huge})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(
            "Invalid value 2147483647 for configuration tasks.max: Value must be no more than 1024"
        ),
        "{body}"
    );
    let (status, body) = w
        .send(
            "PUT",
            "/connectors/huge/config",
            Some(json!({"connector.class": FILE_SINK, "tasks.max": "1025", "topics": topic})),
        )
        .await;
    assert_eq!(status, 400, "{body}");

    // As another implementation (or an older version) would have written it.
    let mut props = huge.as_object().unwrap().clone();
    props.insert("name".into(), json!("stored"));
    let record = json!({"properties": props}).to_string();
    kafka::produce(
        &format!("{}-configs", spec.group_id),
        std::iter::once((Some("connector-stored".to_owned()), Some(record))),
    )
    .await;
    let status = eventually(
        Duration::from_secs(60),
        "the stored connector FAILED",
        || async {
            let s = w.get("/connectors/stored/status").await.ok()?;
            (s["connector"]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    assert!(
        status["connector"]["trace"]
            .as_str()
            .unwrap()
            .contains("Value must be no more than 1024"),
        "{status}"
    );
    // The worker is alive and still runs other connectors.
    create(
        &w,
        "small",
        json!({"connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic, "throughput": "10"}),
    )
    .await;
    eventually(
        Duration::from_secs(60),
        "the other connector's tasks RUNNING",
        || async { running_tasks(&w, "small", 2).await },
    )
    .await;
    let status = w.get("/connectors/stored/status").await.unwrap();
    assert_eq!(status["connector"]["state"], "FAILED", "{status}");
    assert_eq!(status["tasks"], json!([]), "{status}");
}

/// The records a Java worker writes for a paused connector with two task configs although its
/// `tasks.max` is 1 (as a connector ignoring `tasks.max` under `tasks.max.enforce=false` left).
fn paused_connector_with_two_tasks(name: &str, topic: &str, enforce: bool) -> Vec<(String, Value)> {
    let props = json!({
        "connector.class": VERIFIABLE, "name": name, "tasks.max": "1", "topic": topic,
        "throughput": "10", "tasks.max.enforce": enforce.to_string(),
    });
    let task = |id: usize| {
        let mut t = props.clone();
        t["task.class"] = json!("org.apache.kafka.connect.tools.VerifiableSourceTask");
        t["id"] = json!(id.to_string());
        json!({ "properties": t })
    };
    vec![
        (
            format!("target-state-{name}"),
            json!({"state": "PAUSED", "state.v2": "PAUSED"}),
        ),
        (format!("connector-{name}"), json!({ "properties": props })),
        (format!("task-{name}-0"), task(0)),
        (format!("task-{name}-1"), task(1)),
        (format!("commit-{name}"), json!({"tasks": 2})),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_task_configs_beyond_tasks_max_fail_at_task_start_unless_not_enforced() {
    let spec = ClusterSpec::new("enforce");
    let config_topic = format!("{}-configs", spec.group_id);
    kafka::create_compacted_topic(&config_topic, 1).await;
    let topic = unique("enforce-data");
    let mut records = paused_connector_with_two_tasks("strict", &topic, true);
    records.extend(paused_connector_with_two_tasks("lenient", &topic, false));
    kafka::produce(
        &config_topic,
        records
            .into_iter()
            .map(|(k, v)| (Some(k), Some(v.to_string()))),
    )
    .await;
    let w = spec.start_worker().await;

    let strict = eventually(
        Duration::from_secs(60),
        "both strict tasks FAILED",
        || async {
            let s = w.get("/connectors/strict/status").await.ok()?;
            let tasks = s["tasks"].as_array()?;
            (tasks.len() == 2 && tasks.iter().all(|t| t["state"] == "FAILED")).then_some(s)
        },
    )
    .await;
    assert!(
        strict["tasks"][0]["trace"].as_str().unwrap().contains(
            "The connector strict has generated 2 tasks, which is greater than 1, the maximum number of tasks it is configured to create."
        ),
        "{strict}"
    );
    eventually(
        Duration::from_secs(60),
        "both lenient tasks PAUSED",
        || async {
            let s = w.get("/connectors/lenient/status").await.ok()?;
            let tasks = s["tasks"].as_array()?;
            (tasks.len() == 2 && tasks.iter().all(|t| t["state"] == "PAUSED")).then_some(())
        },
    )
    .await;
}

/// The lines a file sink has flushed so far (none before the file exists).
fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `auto.offset.reset` is Connect's: a sink group without committed offsets starts from the
/// beginning by default (as in `dead_letter_queue_records_land_on_javas_partition`, which reads
/// records produced before its sink existed), `latest` skips what the topic already holds, and
/// `none` fails the task as Java's `NoOffsetForPartitionException` does.
#[tokio::test(flavor = "multi_thread")]
async fn consumer_override_auto_offset_reset_takes_effect() {
    let input = unique("offset-reset-in");
    kafka::create_topics(&[&input], 1).await;
    kafka::produce(&input, (0..5).map(|i| (None, Some(format!("old-{i}"))))).await;

    let spec = ClusterSpec::new("offset-reset");
    let w = spec.start_worker().await;
    let sink = |file: &std::path::Path, reset: Option<&str>| {
        let mut c = json!({
            "connector.class": FILE_SINK, "tasks.max": "1", "topics": input,
            "file": file.display().to_string(),
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        });
        if let Some(reset) = reset {
            c["consumer.override.auto.offset.reset"] = json!(reset);
        }
        c
    };
    let latest_file = spec.dir.join("latest.txt");
    let default_file = spec.dir.join("default.txt");
    create(&w, "latest", sink(&latest_file, Some("latest"))).await;
    create(&w, "default", sink(&default_file, None)).await;
    create(&w, "none", sink(&spec.dir.join("none.txt"), Some("none"))).await;

    // The default still starts from the beginning.
    let old: Vec<String> = (0..5).map(|i| format!("old-{i}")).collect();
    eventually(
        Duration::from_secs(60),
        "the default sink delivers the records produced before it",
        || async { (lines(&default_file) == old).then_some(()) },
    )
    .await;

    // `latest`: records produced once the task runs arrive (keep producing until one has, as
    // the consumer's start at the log end is not observable from outside), the old ones never.
    eventually(Duration::from_secs(60), "the latest sink running", || {
        running_tasks(&w, "latest", 1)
    })
    .await;
    let mut n = 0;
    eventually(
        Duration::from_secs(90),
        "the latest sink delivers a record produced after it started",
        || {
            n += 1;
            let input = input.clone();
            let file = latest_file.clone();
            async move {
                kafka::produce(&input, std::iter::once((None, Some(format!("new-{n}"))))).await;
                (!lines(&file).is_empty()).then_some(())
            }
        },
    )
    .await;
    let delivered = lines(&latest_file);
    assert!(
        delivered.iter().all(|l| l.starts_with("new-")),
        "the latest sink skips what the topic held: {delivered:?}"
    );

    // `none` (librdkafka's `error`): no committed offset fails the task.
    let status = eventually(
        Duration::from_secs(60),
        "the none sink's task FAILED",
        || async {
            let s = w.get("/connectors/none/status").await.ok()?;
            (s["tasks"][0]["state"] == "FAILED").then_some(s)
        },
    )
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("Undefined offset with no reset policy"),
        "{status}"
    );
}

/// The worker's `consumer.auto.offset.reset` replaces the sink default for every connector,
/// and a connector's `consumer.override.auto.offset.reset` wins over it.
#[tokio::test(flavor = "multi_thread")]
async fn worker_auto_offset_reset_applies_and_an_override_wins() {
    let input = unique("worker-reset-in");
    kafka::create_topics(&[&input], 1).await;
    kafka::produce(&input, (0..3).map(|i| (None, Some(format!("old-{i}"))))).await;

    let spec = ClusterSpec::new("worker-reset").set("consumer.auto.offset.reset", "latest");
    let w = spec.start_worker().await;
    let sink = |file: &std::path::Path| {
        json!({
            "connector.class": FILE_SINK, "tasks.max": "1", "topics": input,
            "file": file.display().to_string(),
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        })
    };
    let worker_file = spec.dir.join("worker.txt");
    let override_file = spec.dir.join("override.txt");
    let mut earliest = sink(&override_file);
    earliest["consumer.override.auto.offset.reset"] = json!("earliest");
    create(&w, "from-worker", sink(&worker_file)).await;
    create(&w, "overridden", earliest).await;

    let old: Vec<String> = (0..3).map(|i| format!("old-{i}")).collect();
    eventually(
        Duration::from_secs(60),
        "the overriding sink delivers the records produced before it",
        || async { (lines(&override_file) == old).then_some(()) },
    )
    .await;
    eventually(
        Duration::from_secs(60),
        "the worker-default sink running",
        || running_tasks(&w, "from-worker", 1),
    )
    .await;
    let mut n = 0;
    eventually(
        Duration::from_secs(90),
        "the worker-default sink delivers a record produced after it started",
        || {
            n += 1;
            let input = input.clone();
            let file = worker_file.clone();
            async move {
                kafka::produce(&input, std::iter::once((None, Some(format!("new-{n}"))))).await;
                (!lines(&file).is_empty()).then_some(())
            }
        },
    )
    .await;
    let delivered = lines(&worker_file);
    assert!(
        delivered.iter().all(|l| l.starts_with("new-")),
        "the worker's latest skips what the topic held: {delivered:?}"
    );
}

/// `connector.client.config.override.policy`: `None` refuses every override at create time
/// with Apache's message on the key; `Principal` allows only the client's identity keys.
#[tokio::test(flavor = "multi_thread")]
async fn the_override_policy_refuses_what_it_forbids() {
    for (policy, allowed) in [("None", false), ("Principal", false)] {
        let spec = ClusterSpec::new("override-policy")
            .set("connector.client.config.override.policy", policy);
        let w = spec.start_worker().await;
        w.wait_healthy().await;
        let topic = unique("override-policy");
        let (s, body) = w
            .send(
                "POST",
                "/connectors",
                Some(json!({"name": "src", "config": {
                    "connector.class": VERIFIABLE, "topic": topic, "throughput": "10",
                    "producer.override.linger.ms": "5"}})),
            )
            .await;
        assert_eq!(s == 201, allowed, "{policy}: {body}");
        let m = body["message"].as_str().unwrap_or_default();
        assert!(
            m.contains(&format!(
                "The '{policy}' policy does not allow 'linger.ms' to be overridden in the connector configuration."
            )),
            "{policy}: {m}"
        );
    }
    // Principal lets the identity through.
    let spec = ClusterSpec::new("override-policy")
        .set("connector.client.config.override.policy", "Principal");
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    create(
        &w,
        "src",
        json!({"connector.class": VERIFIABLE, "topic": unique("override-policy"),
            "throughput": "10", "producer.override.security.protocol": "PLAINTEXT"}),
    )
    .await;
    drop(w);

    // All (Apache 4.4's default): a sink consumes in the group its override names.
    let spec = ClusterSpec::new("override-all");
    let w = spec.start_worker().await;
    let topic = unique("override-all");
    let group = unique("their-group");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(&topic, (0..10).map(|i| (None, Some(format!("\"r{i}\""))))).await;
    create(
        &w,
        "sink",
        json!({"connector.class": FILE_SINK, "topics": topic,
            "file": spec.dir.join("sink.txt").display().to_string(),
            "consumer.override.group.id": group}),
    )
    .await;
    eventually(
        Duration::from_secs(60),
        "the override's group commits",
        || {
            let (group, topic) = (group.clone(), topic.clone());
            async move {
                let n =
                    tokio::task::spawn_blocking(move || kafka::committed_total(&group, &topic, 1))
                        .await
                        .unwrap();
                (n == 10).then_some(())
            }
        },
    )
    .await;
    drop(w);

    // Keys that would run code or commands on the worker's machine: refused under every policy.
    for policy in ["All", "None", "Principal"] {
        let spec = ClusterSpec::new("override-refused")
            .set("connector.client.config.override.policy", policy);
        let w = spec.start_worker().await;
        for (key, value) in [
            ("producer.override.plugin.library.paths", "/tmp/evil.so"),
            (
                "producer.override.sasl.kerberos.kinit.cmd",
                "touch /tmp/pwned",
            ),
        ] {
            let (s, body) = w
                .send(
                    "POST",
                    "/connectors",
                    Some(json!({"name": "src", "config": {
                        "connector.class": VERIFIABLE, "topic": unique("refused"),
                        "throughput": "10", key: value}})),
                )
                .await;
            assert_eq!(s, 400, "{policy} {key}: {body}");
            let m = body["message"].as_str().unwrap_or_default();
            assert!(
                m.contains(key) && m.contains("whatever the override policy"),
                "{policy} {key}: {m}"
            );
        }
    }
}

/// `connector.client.config.override.policy=Allowlist` (Apache 4.2+), by alias and class names,
/// with `connector.client.config.override.allowlist`: an override of a listed client key is
/// accepted and the connector runs; any other is a validation error on its key with Apache's
/// message and refuses creation; a duplicate is dropped (as Apache 4.4's ConfigDef does) and an
/// empty entry stops start-up with Apache's message.
#[tokio::test(flavor = "multi_thread")]
async fn the_allowlist_policy_allows_only_the_listed_client_keys() {
    for policy in [
        "Allowlist",
        "AllowlistConnectorClientConfigOverridePolicy",
        "org.apache.kafka.connect.connector.policy.AllowlistConnectorClientConfigOverridePolicy",
    ] {
        let spec = ClusterSpec::new("override-allowlist")
            .set("connector.client.config.override.policy", policy)
            .set(
                "connector.client.config.override.allowlist",
                "linger.ms, acks, linger.ms",
            );
        let w = spec.start_worker().await;
        w.wait_healthy().await;
        let config = json!({
            "name": "src",
            "connector.class": VERIFIABLE, "topic": unique("allowlist"), "throughput": "10",
            "producer.override.linger.ms": "5", "producer.override.batch.size": "1000",
            "producer.override.acks": "all",
        });
        let (s, infos) = w
            .send(
                "PUT",
                "/connector-plugins/VerifiableSourceConnector/config/validate",
                Some(config.clone()),
            )
            .await;
        assert_eq!(s, 200, "{policy}: {infos}");
        assert_eq!(infos["error_count"], 1, "{policy}: {infos}");
        let errors = |key: &str| -> Vec<Value> {
            infos["configs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["value"]["name"] == key)
                .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
                .collect()
        };
        assert_eq!(
            errors("producer.override.batch.size"),
            vec![json!(
                "The 'Allowlist' policy does not allow 'batch.size' to be overridden in the connector configuration."
            )],
            "{policy}: {infos}"
        );
        assert!(
            errors("producer.override.linger.ms").is_empty(),
            "{policy}: {infos}"
        );
        let (s, body) = w
            .send(
                "POST",
                "/connectors",
                Some(json!({"name": "src", "config": config})),
            )
            .await;
        assert_eq!(s, 400, "{policy}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("The 'Allowlist' policy does not allow 'batch.size' to be overridden"),
            "{policy}: {body}"
        );
        if policy == "Allowlist" {
            let mut allowed = config.clone();
            allowed
                .as_object_mut()
                .unwrap()
                .remove("producer.override.batch.size");
            create(&w, "src", allowed).await;
            eventually(
                Duration::from_secs(60),
                "the allowed source running",
                || running_tasks(&w, "src", 1),
            )
            .await;
        }
    }

    // An empty allowlist (Apache's default) allows nothing.
    let spec = ClusterSpec::new("override-allowlist-empty")
        .set("connector.client.config.override.policy", "Allowlist");
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    let (s, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "src", "config": {
                "connector.class": VERIFIABLE, "topic": unique("allowlist"), "throughput": "10",
                "consumer.override.security.protocol": "PLAINTEXT"}})),
        )
        .await;
    assert_eq!(s, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("The 'Allowlist' policy does not allow 'security.protocol' to be overridden"),
        "{body}"
    );
    drop(w);

    // An empty entry: Apache's ValidList message, once, and the worker does not start.
    let dir = std::env::temp_dir().join(unique("allowlist-dup"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("worker.properties");
    std::fs::write(
        &file,
        "bootstrap.servers=127.0.0.1:1\ngroup.id=g\nconfig.storage.topic=c\n\
         offset.storage.topic=o\nstatus.storage.topic=s\n\
         key.converter=org.apache.kafka.connect.json.JsonConverter\n\
         value.converter=org.apache.kafka.connect.json.JsonConverter\n\
         connector.client.config.override.policy=Allowlist\n\
         connector.client.config.override.allowlist=linger.ms,,acks\n",
    )
    .unwrap();
    let out = std::process::Command::new(connect_tests::worker::worker_binary())
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches(
            "Configuration 'connector.client.config.override.allowlist' values must not be empty."
        )
        .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("Invalid value"), "{err}");
}
