//! KIP-158 against the real broker: source connectors' `topic.creation.*` groups create their
//! topics (partitions, replication factor, topic configs read back with the admin client), an
//! existing topic is left alone, invalid settings fail the connector with Apache's message, and
//! with `topic.creation.enable=false` on the worker a record to a missing topic that nothing
//! creates fails the task with a clear error.
//!
//! The shared test broker has `auto.create.topics.enable=true` (deploy/kafka.sh), and that
//! broker setting cannot be changed at runtime. The "auto-creation off" case therefore turns it
//! off on the client side, with the worker's `producer.allow.auto.create.topics=false`: the
//! task's producer then never asks the broker to create a topic, which is what a broker with
//! auto-creation off gives.

use std::time::Duration;

use connect_tests::kafka::{client_config, create_topics, read_all};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually};
use rdkafka::admin::{AdminClient, AdminOptions, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const WAIT: Duration = Duration::from_secs(60);

/// Partition count of `topic`, `None` while the broker does not know it.
fn partitions(topic: &str) -> Option<usize> {
    let consumer: BaseConsumer = client_config()
        .set("allow.auto.create.topics", "false")
        .create()
        .unwrap();
    let md = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(10))
        .ok()?;
    let t = md.topics().iter().find(|t| t.name() == topic)?;
    (t.error().is_none() && !t.partitions().is_empty()).then(|| t.partitions().len())
}

/// `(value, is_default)` of a topic config, read back with the admin client.
async fn topic_config(topic: &str, key: &str) -> (Option<String>, bool) {
    let admin: AdminClient<DefaultClientContext> = client_config().create().unwrap();
    let mut described = admin
        .describe_configs(
            [&ResourceSpecifier::Topic(topic)],
            &AdminOptions::new().request_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .unwrap();
    let resource = described.pop().unwrap().unwrap();
    let entry = resource.get(key).unwrap();
    (entry.value.clone(), entry.is_default)
}

/// The connector's status; `Null` until the worker has written one.
async fn status(w: &WorkerProc, name: &str) -> Value {
    w.get(&format!("/connectors/{name}/status"))
        .await
        .unwrap_or(Value::Null)
}

async fn wait_records(topic: &str) {
    eventually(WAIT, &format!("records in {topic}"), || async {
        let n = read_all(
            &[topic],
            connect_tests::kafka::Isolation::ReadUncommitted,
            Duration::from_secs(2),
        )
        .len();
        (n > 0).then_some(())
    })
    .await;
}

/// The default group: 5 partitions, replication factor 1, and the group's other keys as topic
/// configs (`cleanup.policy=compact`, `retention.ms`).
#[tokio::test(flavor = "multi_thread")]
async fn default_group_creates_the_topic_with_its_settings() {
    let w = ClusterSpec::new("tc-default").start_worker().await;
    w.wait_healthy().await;
    let topic = unique("tc-default-data");
    assert_eq!(partitions(&topic), None);
    create_connector(
        &w,
        "tc-default",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "5",
            "topic.creation.default.cleanup.policy": "compact",
            "topic.creation.default.retention.ms": "123456789",
        }),
    )
    .await;
    wait_records(&topic).await;
    assert_eq!(partitions(&topic), Some(5));
    assert_eq!(
        topic_config(&topic, "cleanup.policy").await,
        (Some("compact".into()), false)
    );
    assert_eq!(
        topic_config(&topic, "retention.ms").await,
        (Some("123456789".into()), false)
    );
    let s = status(&w, "tc-default").await;
    assert_eq!(s["tasks"][0]["state"], "RUNNING", "{s}");
}

/// A listed group whose `include` matches wins over the default group; it inherits the
/// default's replication factor but not its topic configs, and has its own partitions. A
/// topic that does not match it gets the default group's settings.
#[tokio::test(flavor = "multi_thread")]
async fn first_matching_group_wins_over_default() {
    let w = ClusterSpec::new("tc-groups").start_worker().await;
    w.wait_healthy().await;
    let prefix = unique("tc-groups");
    let (wide, plain) = (format!("{prefix}-wide"), format!("{prefix}-plain"));
    for (name, topic) in [("tc-wide", &wide), ("tc-plain", &plain)] {
        create_connector(
            &w,
            name,
            json!({
                "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
                "topic.creation.groups": "wide",
                "topic.creation.wide.include": format!("{prefix}.*-wide, other"),
                "topic.creation.wide.partitions": "3",
                "topic.creation.default.replication.factor": "1",
                "topic.creation.default.partitions": "2",
                "topic.creation.default.cleanup.policy": "compact",
            }),
        )
        .await;
    }
    wait_records(&wide).await;
    wait_records(&plain).await;
    assert_eq!(partitions(&wide), Some(3));
    assert_eq!(partitions(&plain), Some(2));
    let (policy, is_default) = topic_config(&wide, "cleanup.policy").await;
    assert!(
        is_default && policy.as_deref() == Some("delete"),
        "{policy:?}"
    );
    assert_eq!(
        topic_config(&plain, "cleanup.policy").await,
        (Some("compact".into()), false)
    );
}

/// The exactly-once runner creates its topic the same way, before its first transaction
/// writes to it.
#[tokio::test(flavor = "multi_thread")]
async fn exactly_once_source_creates_its_topic() {
    let w = ClusterSpec::new("tc-eos")
        .set("exactly.once.source.support", "enabled")
        .start_worker()
        .await;
    w.wait_healthy().await;
    let topic = unique("tc-eos-data");
    create_connector(
        &w,
        "tc-eos",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "3",
            "topic.creation.default.cleanup.policy": "compact",
        }),
    )
    .await;
    eventually(WAIT, &format!("committed records in {topic}"), || async {
        let n = read_all(
            &[&topic],
            connect_tests::kafka::Isolation::ReadCommitted,
            Duration::from_secs(2),
        )
        .len();
        (n > 0).then_some(())
    })
    .await;
    assert_eq!(partitions(&topic), Some(3));
    assert_eq!(
        topic_config(&topic, "cleanup.policy").await,
        (Some("compact".into()), false)
    );
}

/// An existing topic is used as it is, not altered.
#[tokio::test(flavor = "multi_thread")]
async fn existing_topic_is_left_alone() {
    let w = ClusterSpec::new("tc-existing").start_worker().await;
    w.wait_healthy().await;
    let topic = unique("tc-existing-data");
    create_topics(&[&topic], 1).await;
    create_connector(
        &w,
        "tc-existing",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "4",
            "topic.creation.default.cleanup.policy": "compact",
        }),
    )
    .await;
    wait_records(&topic).await;
    assert_eq!(partitions(&topic), Some(1));
    let (policy, is_default) = topic_config(&topic, "cleanup.policy").await;
    assert!(
        is_default && policy.as_deref() == Some("delete"),
        "{policy:?}"
    );
}

/// As Apache's `SourceConnectorConfig`: with topic creation on, `topic.creation.*` keys without
/// the default group's replication factor fail the connector with the missing key named; the
/// topic is not created.
#[tokio::test(flavor = "multi_thread")]
async fn missing_default_replication_factor_fails_the_connector() {
    let w = ClusterSpec::new("tc-invalid").start_worker().await;
    w.wait_healthy().await;
    let topic = unique("tc-invalid-data");
    create_connector(
        &w,
        "tc-invalid",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
            "topic.creation.default.partitions": "5",
        }),
    )
    .await;
    let s = eventually(WAIT, "connector FAILED", || async {
        let s = status(&w, "tc-invalid").await;
        (s["connector"]["state"] == "FAILED").then_some(s)
    })
    .await;
    let trace = s["connector"]["trace"].as_str().unwrap();
    assert!(
        trace.contains("Missing required configuration \"topic.creation.default.replication.factor\" which has no default value."),
        "{trace}"
    );
    assert_eq!(partitions(&topic), None);
}

/// `topic.creation.enable=false` on the worker: the connector's topic.creation.* keys are not
/// used, and with auto-creation off the first record to the missing topic fails the task with
/// an explanation; the topic does not exist afterwards.
#[tokio::test(flavor = "multi_thread")]
async fn disabled_topic_creation_without_auto_create_fails_the_task() {
    let w = ClusterSpec::new("tc-off")
        .set("topic.creation.enable", "false")
        .set("producer.allow.auto.create.topics", "false")
        // librdkafka waits this long for a topic it cannot see before failing its records.
        .set("producer.topic.metadata.propagation.max.ms", "2000")
        .start_worker()
        .await;
    w.wait_healthy().await;
    let topic = unique("tc-off-data");
    create_connector(
        &w,
        "tc-off",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "5",
        }),
    )
    .await;
    let s = eventually(WAIT, "task FAILED", || async {
        let s = status(&w, "tc-off").await;
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    })
    .await;
    let trace = s["tasks"][0]["trace"].as_str().unwrap();
    assert!(
        trace.contains(&format!(
            "topic {topic} does not exist and nothing created it"
        )) && trace.contains("topic.creation.enable=false"),
        "{trace}"
    );
    assert_eq!(partitions(&topic), None);
    assert_eq!(s["connector"]["state"], "RUNNING", "{s}");
}
