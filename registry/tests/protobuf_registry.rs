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

/// `use.latest.version` (with `latest.compatibility.strict=false`): a record of the subject's
/// first schema is written with the latest schema's id and the indexes of its message there (the
/// latest has one more message before it and one more field), and reads back with the latest
/// schema: its extra field at its default, version 2.
#[test]
fn use_latest_version_writes_and_reads_with_the_subjects_latest_schema() {
    let Some(url) = registry_url() else { return };
    let topic = unique_topic("latest");
    let subject = format!("{topic}-value");
    let v1 = SchemaBuilder::struct_()
        .name("shop.Row")
        .field("a", Schema::int32())
        .build();
    let row = Value::Struct(Struct::new(v1.clone()).with("a", 7).unwrap());
    let plain = converter(&url, false);
    let first = plain
        .from_connect_data(&topic, Some(&v1), &row)
        .unwrap()
        .unwrap();

    let client = RegistryClient::new(ClientSettings {
        urls: vec![url.clone()],
        user_info: None,
        trust_pem: None,
        identity_pem: None,
        latest_ttl: None,
    })
    .unwrap();
    let v1_id = client.latest(&subject).unwrap().id;
    let v2_text = "syntax = \"proto3\";\npackage shop;\n\nmessage Other {\n  int32 z = 1;\n}\nmessage Row {\n  int32 a = 1;\n  string b = 2;\n}\n";
    let v2_id = client.register(&subject, "PROTOBUF", v2_text).unwrap();
    assert_ne!(v1_id, v2_id);

    let mut latest = ProtobufConverter::default();
    let props: ConfigMap = [
        ("schema.registry.url", url.as_str()),
        ("auto.register.schemas", "false"),
        ("use.latest.version", "true"),
        ("latest.compatibility.strict", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    latest.configure(&props, false).unwrap();
    let bytes = latest
        .from_connect_data(&topic, Some(&v1), &row)
        .unwrap()
        .unwrap();
    assert_eq!(
        i32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
        v2_id
    );
    // Indexes [1] (Row is the second message: count 1, index 1), then v1's message bytes.
    assert_eq!(&bytes[5..7], &[2, 2]);
    assert_eq!(&bytes[7..], &first[6..]);

    let read = latest.to_connect_data(&topic, Some(&bytes)).unwrap();
    let schema = read.schema.clone().unwrap();
    assert_eq!(schema.version(), Some(2));
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let Value::Struct(s) = &read.value else {
        panic!("{read:?}")
    };
    assert_eq!(s.get("a").unwrap(), &Value::Int32(7));
    // The plain converter reads the v1 record with v1's schema.
    let old = plain.to_connect_data(&topic, Some(&first)).unwrap();
    assert_eq!(old.schema.unwrap().fields().len(), 1);

    // Without strict=false it is refused, naming the key.
    let mut strict = props.clone();
    strict.remove("latest.compatibility.strict");
    let e = ProtobufConverter::default()
        .configure(&strict, false)
        .unwrap_err();
    assert!(e.to_string().contains("latest.compatibility.strict"), "{e}");
}
