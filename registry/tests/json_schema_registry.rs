//! `JsonSchemaConverter` against a real schema registry (`SCHEMA_REGISTRY_URL`, e.g. the one
//! `deploy/registry.sh up` starts: Apicurio Registry's Confluent API); skipped, with a note, when
//! it is not set. A struct is written for a topic of its own: the registry must then hold subject
//! `<topic>-value` with a JSON schema whose text is the one Confluent's serializer registers, the
//! bytes must name its id, and a second converter must read them back (with the version the
//! registry gives the schema).

use std::time::{SystemTime, UNIX_EPOCH};

use connect_api::data::logical;
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{ConfigMap, Converter, Schema, Struct, Value};
use connect_registry::json_schema::converter::JsonSchemaConverter;
use connect_registry::json_schema::data::JsonSchemaData;
use serde_json::Value as Json;

fn get(url: &str) -> Json {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let resp = reqwest::get(url)
            .await
            .unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = resp.status();
        let text = resp.text().await.expect("a body");
        assert!(status.is_success(), "GET {url}: {status} {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url}: {e}: {text}"))
    })
}

/// `schema`, optional.
fn schema_optional(schema: &Schema) -> Schema {
    let mut b = SchemaBuilder::struct_().name(schema.name().unwrap_or("x"));
    for f in schema.fields() {
        b = b.field(f.name.clone(), f.schema.clone());
    }
    b.optional().build()
}

fn converter(url: &str, extra: &[(&str, &str)]) -> JsonSchemaConverter {
    let mut config: ConfigMap = [("schema.registry.url".to_owned(), url.to_owned())]
        .into_iter()
        .collect();
    for (k, v) in extra {
        config.insert((*k).to_owned(), (*v).to_owned());
    }
    let mut c = JsonSchemaConverter::default();
    c.configure(&config, false).expect("configure");
    c
}

#[test]
fn writes_registers_and_reads_back_through_the_registry() {
    let Some(url) = std::env::var("SCHEMA_REGISTRY_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!(
            "SCHEMA_REGISTRY_URL is not set: skipping the JSON Schema converter test against a real registry (deploy/registry.sh up prints it)"
        );
        return;
    };
    let url = url.trim_end_matches('/').to_owned();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    let topic = format!("json-schema-{}-{nanos}", std::process::id());

    let address = SchemaBuilder::struct_()
        .name("com.example.Address")
        .field("street", Schema::string())
        .field("zip", Schema::optional_int32())
        .optional()
        .build();
    let schema = SchemaBuilder::struct_()
        .name("com.example.Customer")
        .field("id", Schema::int64())
        .field("name", Schema::string())
        .field("score", Schema::optional_float64())
        .field("tags", SchemaBuilder::array(Schema::string()).build())
        .field(
            "attributes",
            SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
        )
        .field("balance", logical::decimal_builder(2).build())
        .field("since", logical::timestamp_builder().optional().build())
        .field("address", address.clone())
        .build();
    let value = Value::Struct(
        Struct::new(schema.clone())
            .with("id", Value::Int64(42))
            .unwrap()
            .with("name", "Ada \"the first\" Lovelace")
            .unwrap()
            .with("score", Value::Float64(12.5))
            .unwrap()
            .with("tags", Value::Array(vec!["a".into(), "b".into()]))
            .unwrap()
            .with(
                "attributes",
                Value::Map(vec![(Value::String("visits".into()), Value::Int32(3))]),
            )
            .unwrap()
            .with(
                "balance",
                Value::Bytes(logical::Decimal::parse("-12.34", 2).unwrap().to_bytes()),
            )
            .unwrap()
            .with("since", Value::Int64(1_700_000_000_123))
            .unwrap()
            .with(
                "address",
                Value::Struct(Struct::new(address).with("street", "Main St").unwrap()),
            )
            .unwrap(),
    );

    let writer = converter(&url, &[]);
    let bytes = writer
        .from_connect_data(&topic, Some(&schema), &value)
        .expect("from_connect_data")
        .expect("bytes");
    assert_eq!(bytes[0], 0, "magic byte");
    let id = i32::from_be_bytes(bytes[1..5].try_into().unwrap());
    assert_eq!(
        std::str::from_utf8(&bytes[5..]).unwrap(),
        r#"{"id":42,"name":"Ada \"the first\" Lovelace","score":12.5,"tags":["a","b"],"attributes":{"visits":3},"balance":"+y4=","since":1700000000123,"address":{"street":"Main St","zip":null}}"#
    );

    // The registry keeps our text under <topic>-value, as a JSON schema.
    let text = JsonSchemaData::default()
        .from_connect_schema(&schema)
        .unwrap()
        .to_text();
    let subject = format!("{topic}-value");
    let subjects = get(&format!("{url}/subjects"));
    assert!(
        subjects
            .as_array()
            .is_some_and(|s| s.iter().any(|x| x == &Json::String(subject.clone()))),
        "{subject} not in {subjects}"
    );
    let latest = get(&format!("{url}/subjects/{subject}/versions/latest"));
    assert_eq!(latest["schemaType"], "JSON", "{latest}");
    assert_eq!(latest["id"], id, "{latest}");
    assert_eq!(latest["version"], 1, "{latest}");
    assert_eq!(latest["schema"].as_str(), Some(text.as_str()), "{latest}");
    let by_id = get(&format!("{url}/schemas/ids/{id}"));
    assert_eq!(by_id["schemaType"], "JSON", "{by_id}");
    assert_eq!(by_id["schema"].as_str(), Some(text.as_str()), "{by_id}");

    // Writing again: the cached id, the same bytes.
    assert_eq!(
        writer
            .from_connect_data(&topic, Some(&schema), &value)
            .unwrap(),
        Some(bytes.clone())
    );

    // Read back by another converter: the schema from the registry, with its version.
    let reader = converter(&url, &[]);
    let read = reader.to_connect_data(&topic, Some(&bytes)).unwrap();
    let read_schema = read.schema.expect("a schema");
    assert_eq!(read_schema.version(), Some(1));
    assert_eq!(read_schema.name(), Some("com.example.Customer"));
    let names: Vec<&str> = read_schema
        .fields()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "id",
            "name",
            "score",
            "tags",
            "attributes",
            "balance",
            "since",
            "address"
        ]
    );
    assert_eq!(
        read_schema.field("balance").unwrap().schema,
        logical::decimal_builder(2).build()
    );
    assert_eq!(
        read_schema.field("address").unwrap().schema.schema_type(),
        SchemaType::Struct
    );
    let Value::Struct(s) = &read.value else {
        panic!("{:?}", read.value)
    };
    let Value::Struct(original) = &value else {
        unreachable!()
    };
    assert_eq!(s.values(), original.values());

    // A null value: no record with a required schema; JSON null after the header with an
    // optional one, its schema registered as Java does (under a subject of its own here:
    // another schema under <topic>-value would not be BACKWARD compatible).
    assert_eq!(
        writer
            .from_connect_data(&topic, Some(&schema), &Value::Null)
            .unwrap(),
        None
    );
    let optional_topic = format!("{topic}-optional");
    match writer.from_connect_data(
        &optional_topic,
        Some(&schema_optional(&schema)),
        &Value::Null,
    ) {
        Ok(bytes) => {
            let bytes = bytes.expect("bytes");
            assert!(bytes.len() == 9 && bytes.ends_with(b"null"), "{bytes:?}");
            let read = reader
                .to_connect_data(&optional_topic, Some(&bytes))
                .unwrap();
            assert_eq!(read.value, Value::Null);
            assert_eq!(read.schema.as_ref().map(Schema::is_optional), Some(true));
        }
        // Apicurio Registry 3.3 takes only object schemas as JSON schemas: a top-level `oneOf`
        // (or a primitive, an array) is "Failed to discover artifact type from content".
        Err(e) => assert!(e.to_string().contains("error code: 42201"), "{e}"),
    }

    // auto.register.schemas=false finds the same id; an unknown schema is a data error naming
    // the registry's answer.
    let lookup = converter(&url, &[("auto.register.schemas", "false")]);
    assert_eq!(
        lookup
            .from_connect_data(&topic, Some(&schema), &value)
            .unwrap(),
        Some(bytes)
    );
    let e = lookup
        .from_connect_data(&topic, Some(&Schema::int32()), &Value::Int32(1))
        .unwrap_err();
    assert!(!e.is_retriable(), "{e}");
    assert!(
        e.to_string().starts_with(&format!(
            "Converting Kafka Connect data to byte[] failed due to serialization error of topic {topic}: Error retrieving JSON schema"
        )),
        "{e}"
    );
}
