//! Compressed topics against real Kafka: records that Apache Kafka's own producer wrote with
//! each codec (gzip, snappy, lz4, zstd) are all read by a sink, and a source task's
//! `producer.override.compression.type` is what the broker stores.

use std::collections::BTreeSet;
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector as create, eventually, running_tasks};
use serde_json::json;

const CODECS: [&str; 4] = ["gzip", "snappy", "lz4", "zstd"];
const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

#[tokio::test(flavor = "multi_thread")]
async fn a_sink_reads_every_record_of_topics_compressed_with_each_codec() {
    const N: usize = 500;
    let mut topics = Vec::new();
    let mut expected = BTreeSet::new();
    for codec in CODECS {
        let topic = unique(&format!("codec-{codec}"));
        kafka::create_topics(&[&topic], 1).await;
        let lines: Vec<String> = (0..N).map(|i| format!("{codec}-{i}")).collect();
        expected.extend(lines.iter().cloned());
        let (t, input) = (topic.clone(), lines.join("\n") + "\n");
        let bootstrap = kafka::bootstrap_servers();
        tokio::task::spawn_blocking(move || {
            kafka::kafka_tool(
                &[
                    "org.apache.kafka.tools.ConsoleProducer",
                    "--bootstrap-server",
                    &bootstrap,
                    "--topic",
                    &t,
                    "--compression-codec",
                    codec,
                ],
                &input,
            )
        })
        .await
        .unwrap();
        let t = topic.clone();
        let codecs = tokio::task::spawn_blocking(move || kafka::batch_codecs(&t))
            .await
            .unwrap();
        assert!(
            !codecs.is_empty() && codecs.iter().all(|c| c == codec),
            "the Java producer wrote {codec} batches: {codecs:?}"
        );
        topics.push(topic);
    }

    let spec = ClusterSpec::new("codecs");
    let w = spec.start_worker().await;
    let file = spec.dir.join("sink.txt");
    create(
        &w,
        "codec-sink",
        json!({
            "connector.class": FILE_SINK, "tasks.max": "1", "topics": topics.join(","),
            "file": file.to_str().unwrap(),
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }),
    )
    .await;
    let lines = eventually(
        Duration::from_secs(60),
        "every record of every codec in the sink file",
        || async {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let lines: BTreeSet<String> = text.lines().map(str::to_owned).collect();
            (lines.len() >= expected.len()).then_some(lines)
        },
    )
    .await;
    assert_eq!(lines, expected);
    running_tasks(&w, "codec-sink", 1)
        .await
        .expect("the sink task is still RUNNING");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_source_writes_batches_with_its_producer_override_codec() {
    let spec = ClusterSpec::new("codec-source");
    let w = spec.start_worker().await;
    for codec in ["zstd", "lz4"] {
        let topic = unique(&format!("source-{codec}"));
        kafka::create_topics(&[&topic], 1).await;
        let name = format!("vs-{codec}");
        create(
            &w,
            &name,
            json!({
                "connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
                "throughput": "1000", "max.records": "300", "batch.size": "50",
                "producer.override.compression.type": codec,
            }),
        )
        .await;
        kafka::read_until(
            &[&topic],
            kafka::Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| r.len() >= 300,
        );
        let t = topic.clone();
        let codecs = tokio::task::spawn_blocking(move || kafka::batch_codecs(&t))
            .await
            .unwrap();
        assert!(
            !codecs.is_empty() && codecs.iter().all(|c| c == codec),
            "batches written by the source with compression.type={codec}: {codecs:?}"
        );
    }
}
