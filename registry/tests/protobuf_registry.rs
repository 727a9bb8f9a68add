//! `io.confluent.connect.protobuf.ProtobufConverter` against a real registry (the Confluent API
//! at `SCHEMA_REGISTRY_URL`, e.g. `deploy/registry.sh up`; skipped with a note when unset):
//! the converter registers its text under the subject as a PROTOBUF schema, the registry keeps
//! that text, and the bytes read back to the same Connect data.

use connect_api::data::SchemaBuilder;
use connect_api::data::logical;
use connect_api::{ConfigMap, Converter, Schema, Struct, Value};
use connect_registry::client::{ClientSettings, RegistryClient};
use connect_registry::protobuf::converter::{ProtobufConverter, writer_parts};
use connect_registry::protobuf::data::ProtobufDataConfig;

fn registry_url() -> Option<String> {
    match std::env::var("SCHEMA_REGISTRY_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "SCHEMA_REGISTRY_URL is not set: skipping the Protobuf registry test (deploy/registry.sh up prints it)"
            );
            None
        }
    }
}

fn converter(url: &str, is_key: bool) -> ProtobufConverter {
    let mut c = ProtobufConverter::default();
    let props: ConfigMap = [("schema.registry.url".to_owned(), url.to_owned())]
        .into_iter()
        .collect();
    c.configure(&props, is_key).expect("configure");
    c
}

fn unique_topic(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("proto-{what}-{}-{nanos}", std::process::id())
}

#[test]
fn registers_protobuf_text_and_reads_the_bytes_back() {
    let Some(url) = registry_url() else { return };
    let topic = unique_topic("value");
    let line = SchemaBuilder::struct_()
        .name("Line")
        .field("sku", Schema::string())
        .field("qty", Schema::int32())
        .build();
    let schema = SchemaBuilder::struct_()
        .name("shop.Order")
        .field("id", Schema::int64())
        .field("small", Schema::int8())
        .field("note", Schema::optional_string())
        .field("amount", logical::decimal_builder(2).build())
        .field("at", logical::timestamp_builder().build())
        .field("day", logical::date_builder().build())
        .field("lines", SchemaBuilder::array(line.clone()).build())
        .field(
            "attrs",
            SchemaBuilder::map(Schema::string(), Schema::int64()).build(),
        )
        .build();
    let value = Struct::new(schema.clone())
        .with("id", 42i64)
        .unwrap()
        .with("small", Value::Int8(-7))
        .unwrap()
        .with("note", "gift")
        .unwrap()
        .with(
            "amount",
            logical::Decimal::parse("12.34", 2).unwrap().to_bytes(),
        )
        .unwrap()
        .with("at", Value::Int64(1_700_000_000_123))
        .unwrap()
        .with("day", Value::Int32(19_700))
        .unwrap()
        .with(
            "lines",
            Value::Array(vec![Value::Struct(
                Struct::new(line.clone())
                    .with("sku", "A-1")
                    .unwrap()
                    .with("qty", 3)
                    .unwrap(),
            )]),
        )
        .unwrap()
        .with("attrs", Value::Map(vec![("w".into(), 5i64.into())]))
        .unwrap();

    let c = converter(&url, false);
    let bytes = c
        .from_connect_data(&topic, Some(&schema), &Value::Struct(value.clone()))
        .expect("serialize")
        .expect("bytes");
    assert_eq!(bytes[0], 0, "magic byte");
    assert_eq!(bytes[5], 0, "message indexes [0] as one 0 byte");

    // The subject holds our text as a PROTOBUF schema.
    let client = RegistryClient::new(ClientSettings {
        urls: vec![url.clone()],
        user_info: None,
        trust_pem: None,
        identity_pem: None,
        latest_ttl: None,
    })
    .unwrap();
    let latest = client.latest(&format!("{topic}-value")).expect("latest");
    let id = i32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
    assert_eq!(latest.id, id);
    assert_eq!(latest.schema_type, "PROTOBUF");
    let ours = writer_parts(&schema, &ProtobufDataConfig::default())
        .unwrap()
        .0;
    assert_eq!(
        latest.text, ours,
        "the registry keeps the text we registered"
    );

    // Read back by a fresh converter (nothing cached): the Connect data, the version set.
    let read = converter(&url, false)
        .to_connect_data(&topic, Some(&bytes[..]))
        .expect("deserialize");
    let read_schema = read.schema.expect("a schema");
    assert_eq!(read_schema.name(), Some("Order"));
    assert_eq!(read_schema.version(), Some(1));
    let Value::Struct(s) = read.value else {
        panic!("{:?}", read.value)
    };
    assert_eq!(s.get("id"), Some(&42i64.into()));
    assert_eq!(s.get("small"), Some(&Value::Int8(-7)));
    assert_eq!(s.get("note"), Some(&"gift".into()));
    assert_eq!(s.get("amount"), value.get("amount"));
    assert_eq!(s.get("at"), Some(&Value::Int64(1_700_000_000_123)));
    assert_eq!(s.get("day"), Some(&Value::Int32(19_700)));
    assert_eq!(
        s.get("attrs"),
        Some(&Value::Map(vec![("w".into(), 5i64.into())]))
    );
    let Some(Value::Array(lines)) = s.get("lines") else {
        panic!("{:?}", s.get("lines"))
    };
    let Value::Struct(l) = &lines[0] else {
        panic!()
    };
    assert_eq!(l.get("sku"), Some(&"A-1".into()));
    assert_eq!(l.get("qty"), Some(&3.into()));

    // Writing the same schema again finds the same id.
    let again = c
        .from_connect_data(&topic, Some(&schema), &Value::Struct(value))
        .unwrap()
        .unwrap();
    assert_eq!(again[1..5], bytes[1..5]);
}

#[test]
fn a_string_key_is_a_wrapper_message() {
    let Some(url) = registry_url() else { return };
    let topic = unique_topic("key");
    let c = converter(&url, true);
    let bytes = c
        .from_connect_data(&topic, Some(&Schema::string()), &"k-1".into())
        .unwrap()
        .unwrap();
    // StringValue is message 7 of wrappers.proto: count 1, index 7 (zigzag varints 2, 14).
    assert_eq!(bytes[5..7], [2, 14]);
    let client = RegistryClient::new(ClientSettings {
        urls: vec![url.clone()],
        user_info: None,
        trust_pem: None,
        identity_pem: None,
        latest_ttl: None,
    })
    .unwrap();
    let latest = client.latest(&format!("{topic}-key")).expect("latest");
    assert_eq!(latest.schema_type, "PROTOBUF");
    assert!(
        latest.text.contains("message StringValue"),
        "{}",
        latest.text
    );
    let read = converter(&url, true)
        .to_connect_data(&topic, Some(&bytes[..]))
        .unwrap();
    assert_eq!(read.value, "k-1".into());
    assert_eq!(
        read.schema.unwrap().schema_type(),
        connect_api::data::SchemaType::String
    );
}
