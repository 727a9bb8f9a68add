//! Apache's primitive converters in a running worker: listed as plugins of both converter
//! types, and `IntegerConverter` as a source connector's key converter writes Kafka's
//! `IntegerSerializer` bytes (4 bytes, big-endian) to the topic. `JsonConverter`'s
//! `schema.content` (KIP-1054): sinks reading schemaless JSON get records of the given schema,
//! set by the worker or by the connector, and a bad schema is an error on its key.

use std::collections::BTreeSet;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation, read_all};
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

const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const JSON: &str = "org.apache.kafka.connect.json.JsonConverter";

/// A struct whose optional `region` defaults to `default`: a payload without it reads as the
/// default only when the schema is applied (schemaless JSON has no defaults).
fn region_schema(default: &str) -> String {
    json!({"type": "struct", "fields": [
        {"field": "id", "type": "int32"},
        {"field": "region", "type": "string", "optional": true, "default": default},
    ]})
    .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn schema_content_gives_sinks_typed_records_from_schemaless_json() {
    // The worker's value converter reads every payload with its schema (schemas.enable=true,
    // no envelope in the records).
    let spec = ClusterSpec::new("conv-schema")
        .set("value.converter.schemas.enable", "true")
        .set("value.converter.schema.content", &region_schema("eu"));
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    let topic = unique("conv-schema-data");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(
        &topic,
        [r#"{"id": 1}"#, r#"{"id": 2, "region": "ap"}"#]
            .into_iter()
            .map(|v| (None, Some(v.to_owned()))),
    )
    .await;
    let lines = |file: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    let from_worker = spec.dir.join("from-worker.txt");
    create_connector(
        &w,
        &unique("conv-schema-w"),
        json!({"connector.class": FILE_SINK, "topics": topic,
            "file": from_worker.display().to_string()}),
    )
    .await;
    // The connector's own converter and schema (another default).
    let from_connector = spec.dir.join("from-connector.txt");
    create_connector(
        &w,
        &unique("conv-schema-c"),
        json!({"connector.class": FILE_SINK, "topics": topic,
            "file": from_connector.display().to_string(),
            "value.converter": JSON,
            "value.converter.schema.content": region_schema("us")}),
    )
    .await;
    for (file, default) in [(&from_worker, "eu"), (&from_connector, "us")] {
        let got = eventually(
            Duration::from_secs(60),
            "both records in the sink file",
            || async {
                let l = lines(file);
                (l.len() >= 2).then_some(l)
            },
        )
        .await;
        assert_eq!(
            got,
            vec![
                format!(r#"{{"id":1,"region":"{default}"}}"#),
                r#"{"id":2,"region":"ap"}"#.to_owned()
            ],
            "{}",
            file.display()
        );
    }

    // A schema.content that is no schema: an error on the prefixed key, creation refused.
    let bad_name = unique("conv-schema-bad");
    let bad = json!({"name": bad_name, "connector.class": FILE_SINK, "topics": topic,
        "file": spec.dir.join("bad.txt").display().to_string(),
        "value.converter": JSON, "value.converter.schema.content": "{\"type\": \"nope\"}"});
    let (s, infos) = w
        .send(
            "PUT",
            "/connector-plugins/FileStreamSinkConnector/config/validate",
            Some(bad.clone()),
        )
        .await;
    assert_eq!(s, 200, "{infos}");
    assert_eq!(infos["error_count"], 1, "{infos}");
    let entry = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "value.converter.schema.content")
        .unwrap_or_else(|| panic!("no value.converter.schema.content entry: {infos}"));
    assert_eq!(
        entry["value"]["errors"],
        json!([
            "Invalid value {\"type\": \"nope\"} for configuration schema.content: Unknown schema type: nope"
        ]),
        "{infos}"
    );
    assert_eq!(
        entry["definition"]["name"],
        "value.converter.schema.content"
    );
    let (s, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": bad_name, "config": bad})),
        )
        .await;
    assert_eq!(s, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Unknown schema type: nope"),
        "{body}"
    );
}

/// In the worker config, a schema.content that is no schema stops start-up naming the key.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_worker_schema_content_stops_start_up() {
    let dir = std::env::temp_dir().join(unique("conv-schema-bad"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("worker.properties");
    std::fs::write(
        &file,
        format!(
            "bootstrap.servers=127.0.0.1:1\ngroup.id=g\nconfig.storage.topic=c\n\
             offset.storage.topic=o\nstatus.storage.topic=s\nkey.converter={JSON}\n\
             value.converter={JSON}\nkey.converter.schema.content={{\"type\": \"int32\"\n"
        ),
    )
    .unwrap();
    let out = std::process::Command::new(connect_tests::worker::worker_binary())
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("for configuration key.converter.schema.content: Failed to parse schema in converter config due to serialization error: "),
        "{err}"
    );
}

/// KIP-891 with one installed version of each plugin: `*.plugin.version` ranges are checked
/// against the built-in plugin's version, with Apache's and Maven's messages.
#[tokio::test(flavor = "multi_thread")]
async fn plugin_version_requirements_are_checked_against_the_built_in_version() {
    let w = ClusterSpec::new("conv-versions").start_worker().await;
    w.wait_healthy().await;
    let plugins = w
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    let version_of = |class: &str| -> String {
        plugins
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["class"] == class)
            .and_then(|p| p["version"].as_str())
            .unwrap()
            .to_owned()
    };
    let (connector_v, json_v) = (version_of(VERIFIABLE), version_of(JSON));
    let validate = |extra: serde_json::Value| {
        let mut config = json!({"name": "v", "connector.class": VERIFIABLE,
            "topic": unique("conv-versions"), "value.converter": JSON});
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let w = &w;
        async move {
            w.send(
                "PUT",
                "/connector-plugins/VerifiableSourceConnector/config/validate",
                Some(config),
            )
            .await
        }
    };
    let errors_of = |infos: &serde_json::Value, key: &str| -> serde_json::Value {
        infos["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == key)
            .map(|c| c["value"]["errors"].clone())
            .unwrap_or_else(|| panic!("no {key} in {infos}"))
    };
    // The installed versions, as bare, exact and open ranges: no error; the answer shows them.
    let (s, infos) = validate(json!({"connector.plugin.version": connector_v,
        "value.converter.plugin.version": format!("[{json_v},)")}))
    .await;
    assert_eq!(
        (s, infos["error_count"].as_i64()),
        (200, Some(0)),
        "{infos}"
    );
    let entry = infos["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["value"]["name"] == "key.converter.plugin.version")
        .unwrap();
    assert_eq!(
        entry["definition"]["default_value"],
        json!(json_v),
        "{entry}"
    );
    assert_eq!(
        entry["value"]["recommended_values"],
        json!([json_v]),
        "{entry}"
    );

    // Ranges they do not meet: errors on the version and class keys.
    let (s, infos) = validate(json!({"connector.plugin.version": "[1.0,2.0)",
        "value.converter.plugin.version": "99.0"}))
    .await;
    assert_eq!(s, 200, "{infos}");
    let c = format!(
        "Plugin {VERIFIABLE} has version {connector_v} which does not match the required version range [1.0,2.0)"
    );
    let j = format!(
        "Plugin {JSON} has version {json_v} which does not match the required version range [99.0,99.0]"
    );
    assert_eq!(errors_of(&infos, "connector.plugin.version"), json!([c]));
    assert_eq!(errors_of(&infos, "connector.class"), json!([c]));
    assert_eq!(
        errors_of(&infos, "value.converter.plugin.version"),
        json!([j])
    );
    assert_eq!(errors_of(&infos, "value.converter"), json!([j]));
    // A converter range that is no range: Maven's message on its key.
    let (_, infos) = validate(json!({"key.converter.plugin.version": "(1.0)"})).await;
    assert_eq!(
        errors_of(&infos, "key.converter.plugin.version"),
        json!(["Single version must be surrounded by []: (1.0)"])
    );
    // A connector range that is no range: 400, as Apache's BadRequestException.
    let (s, body) = validate(json!({"connector.plugin.version": "[1.0"})).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["message"], "Unbounded range: [1.0", "{body}");
}
