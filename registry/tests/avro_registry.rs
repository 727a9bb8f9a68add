//! `AvroConverter` with `use.latest.version` against a real schema registry
//! (`SCHEMA_REGISTRY_URL`, e.g. `deploy/registry.sh up`); skipped, with a note, when unset. A
//! record of schema v1 is written with the subject's latest schema v2 (one more optional field)
//! and its id, and reads back with v2's field at its default; with auto-registration off a
//! schema the subject does not have is a data error naming the registry's answer.

use std::time::{SystemTime, UNIX_EPOCH};

use connect_api::data::SchemaBuilder;
use connect_api::{ConfigMap, Converter, Schema, Struct, Value};
use connect_registry::avro::converter::AvroConverter;

fn converter(url: &str, extra: &[(&str, &str)]) -> AvroConverter {
    let mut config: ConfigMap = [("schema.registry.url".to_owned(), url.to_owned())]
        .into_iter()
        .collect();
    for (k, v) in extra {
        config.insert((*k).to_owned(), (*v).to_owned());
    }
    let mut c = AvroConverter::default();
    c.configure(&config, false).expect("configure");
    c
}

fn register(url: &str, subject: &str, schema: &str) -> i64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let body = serde_json::json!({ "schema": schema }).to_string();
        let r: serde_json::Value = reqwest::Client::new()
            .post(format!("{url}/subjects/{subject}/versions"))
            .header("content-type", "application/vnd.schemaregistry.v1+json")
            .body(body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["id"].as_i64().unwrap_or_else(|| panic!("{r}"))
    })
}

#[test]
fn use_latest_version_writes_with_the_subjects_latest_schema() {
    let Some(url) = std::env::var("SCHEMA_REGISTRY_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        println!("SCHEMA_REGISTRY_URL is not set: skipped (deploy/registry.sh up)");
        return;
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let topic = format!("avro-latest-{nanos}");
    let subject = format!("{topic}-value");
    let v1 = SchemaBuilder::struct_()
        .name("com.example.Row")
        .field("a", Schema::int32())
        .build();
    let row = Value::Struct(Struct::new(v1.clone()).with("a", 7).unwrap());

    // v1 through the converter, then v2 (one more optional field) straight to the registry.
    let plain = converter(&url, &[]);
    let first = plain
        .from_connect_data(&topic, Some(&v1), &row)
        .unwrap()
        .unwrap();
    let v2_id = register(
        &url,
        &subject,
        r#"{"type":"record","name":"Row","namespace":"com.example","fields":[{"name":"a","type":"int"},{"name":"b","type":["null","string"],"default":null}],"connect.name":"com.example.Row"}"#,
    );

    let latest = converter(
        &url,
        &[
            ("use.latest.version", "true"),
            ("auto.register.schemas", "false"),
        ],
    );
    let bytes = latest
        .from_connect_data(&topic, Some(&v1), &row)
        .unwrap()
        .unwrap();
    assert_eq!(
        i64::from(i32::from_be_bytes(bytes[1..5].try_into().unwrap())),
        v2_id
    );
    assert_ne!(bytes[1..5], first[1..5], "v2's id, not v1's");
    let back = plain.to_connect_data(&topic, Some(&bytes)).unwrap();
    let Value::Struct(s) = back.value else {
        panic!("{back:?}")
    };
    assert_eq!(s.get("a"), Some(&Value::Int32(7)));
    assert_eq!(s.get("b"), Some(&Value::Null));
    assert_eq!(back.schema.unwrap().version(), Some(2));

    // Lookup only: a schema the subject does not have is a data error.
    let lookup = converter(&url, &[("auto.register.schemas", "false")]);
    let other = SchemaBuilder::struct_()
        .name("com.example.Row")
        .field("z", Schema::string())
        .build();
    let e = lookup
        .from_connect_data(
            &topic,
            Some(&other),
            &Value::Struct(Struct::new(other.clone()).with("z", "x").unwrap()),
        )
        .unwrap_err();
    assert_eq!(e.kind(), connect_api::ErrorKind::Data, "{e}");
    assert!(e.to_string().contains("40403"), "{e}");
}
