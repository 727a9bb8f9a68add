//! Apache's primitive converters in a running worker: listed as plugins of both converter
//! types, and `IntegerConverter` as a source connector's key converter writes Kafka's
//! `IntegerSerializer` bytes (4 bytes, big-endian) to the topic.

use std::collections::BTreeSet;
use std::time::Duration;

use connect_tests::kafka::{Isolation, read_all};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually};
use serde_json::json;

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const PRIMITIVES: &[&str] = &[
    "org.apache.kafka.connect.converters.BooleanConverter",
    "org.apache.kafka.connect.converters.DoubleConverter",
    "org.apache.kafka.connect.converters.FloatConverter",
    "org.apache.kafka.connect.converters.IntegerConverter",
    "org.apache.kafka.connect.converters.LongConverter",
    "org.apache.kafka.connect.converters.ShortConverter",
];

#[tokio::test(flavor = "multi_thread")]
async fn integer_converter_writes_big_endian_keys_and_all_are_listed() {
    let w = ClusterSpec::new("conv-int").start_worker().await;
    w.wait_healthy().await;
    let all = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let listed: BTreeSet<(String, String)> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["class"].as_str().unwrap().to_owned(),
                p["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for class in PRIMITIVES {
        for kind in ["converter", "header_converter"] {
            assert!(
                listed.contains(&((*class).to_owned(), kind.to_owned())),
                "{class} {kind}: {all}"
            );
        }
    }

    let topic = unique("conv-int-data");
    create_connector(
        &w,
        "conv-int",
        json!({
            "connector.class": VERIFIABLE, "topic": topic, "throughput": "20", "tasks.max": "2",
            "key.converter": "org.apache.kafka.connect.converters.IntegerConverter",
        }),
    )
    .await;
    // VerifiableSource keys its records with the task id (INT32).
    let keys = eventually(Duration::from_secs(60), "records of both tasks", || async {
        let keys: BTreeSet<Option<String>> = read_all(
            &[&topic],
            Isolation::ReadUncommitted,
            Duration::from_secs(5),
        )
        .into_iter()
        .map(|r| r.key)
        .collect();
        (keys.len() >= 2).then_some(keys)
    })
    .await;
    assert_eq!(
        keys,
        BTreeSet::from([Some("\0\0\0\0".to_owned()), Some("\0\0\0\u{1}".to_owned())])
    );
}
