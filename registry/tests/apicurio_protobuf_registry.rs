//! `io.apicurio.registry.utils.converter.ProtobufConverter` against the running Apicurio Registry
//! (its Confluent API at `SCHEMA_REGISTRY_URL`, e.g. `deploy/registry.sh up`; the converter is
//! given Apicurio's own `apicurio.registry.url`, the native `/apis/registry/v3` beside it; skipped
//! with a note when unset): the bytes Apicurio 3.x writes by default (magic byte 0, the 4-byte
//! content id, a length-delimited `Ref` naming the message, the message), the PROTOBUF artifact
//! `<topic>-value` holding our text, the round trip as Java reads it back, and how it meets
//! Confluent's `ProtobufConverter`: each reads its own default format and refuses the other's;
//! with `send-type-ref=false` + `send-indexes=true` Apicurio's bytes are Confluent's layout,
//! which Confluent's converter reads.

use connect_api::data::SchemaBuilder;
use connect_api::{ConfigMap, Converter, Schema, Struct, Value};
use connect_registry::apicurio::protobuf::{ApicurioProtobufConverter, writer_parts};
use connect_registry::apicurio::protobuf_data::write_ref;
use connect_registry::client::{ClientSettings, RegistryClient};
use connect_registry::protobuf::converter::ProtobufConverter;

/// The Confluent-compatible URL and Apicurio's native one beside it.
fn registry_urls() -> Option<(String, String)> {
    match std::env::var("SCHEMA_REGISTRY_URL") {
        Ok(u) if !u.is_empty() => {
            let base = u
                .trim_end_matches('/')
                .trim_end_matches("/apis/ccompat/v7")
                .to_owned();
            Some((u, format!("{base}/apis/registry/v3")))
        }
        _ => {
            eprintln!(
                "SCHEMA_REGISTRY_URL is not set: skipping the Apicurio Protobuf registry test (deploy/registry.sh up prints it)"
            );
            None
        }
    }
}

fn props(pairs: &[(&str, &str)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn apicurio(native: &str, extra: &[(&str, &str)]) -> ApicurioProtobufConverter {
    let mut pairs = vec![
        ("apicurio.registry.url", native),
        ("apicurio.registry.auto-register", "true"),
    ];
    pairs.extend_from_slice(extra);
    let mut c = ApicurioProtobufConverter::default();
    c.configure(&props(&pairs), false).expect("configure");
    c
}

fn confluent(ccompat: &str) -> ProtobufConverter {
    let mut c = ProtobufConverter::default();
    c.configure(&props(&[("schema.registry.url", ccompat)]), false)
        .expect("configure");
    c
}

fn unique_topic(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("apicurio-proto-{what}-{}-{nanos}", std::process::id())
}

fn client(ccompat: &str) -> RegistryClient {
    RegistryClient::new(ClientSettings {
        urls: vec![ccompat.to_owned()],
        user_info: None,
        trust_pem: None,
        identity_pem: None,
        latest_ttl: None,
    })
    .unwrap()
}

/// GET on Apicurio's native API.
fn native_get(url: &str) -> serde_json::Value {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let resp = reqwest::get(url).await.expect("GET");
            assert!(resp.status().is_success(), "{url}: {}", resp.status());
            resp.json().await.expect("JSON")
        })
}

fn order() -> (Schema, Schema) {
    let line = SchemaBuilder::struct_()
        .name("Line")
        .field("sku", Schema::string())
        .field("qty", Schema::int32())
        .build();
    let schema = SchemaBuilder::struct_()
        .name("shop.Order")
        .field("id", Schema::int64())
        .field("note", Schema::optional_string())
        .field("small", Schema::int8())
        .field("nick", Schema::optional_string())
        .field("lines", SchemaBuilder::array(line.clone()).build())
        .field(
            "attrs",
            SchemaBuilder::map(Schema::string(), Schema::int64()).build(),
        )
        .build();
    (schema, line)
}

fn order_value(schema: &Schema, line: &Schema) -> Struct {
    Struct::new(schema.clone())
        .with("id", 42i64)
        .unwrap()
        .with("note", "gift")
        .unwrap()
        .with("small", Value::Int8(-7))
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
        .with(
            "attrs",
            Value::Map(vec![("w".into(), 5i64.into()), ("a".into(), 0i64.into())]),
        )
        .unwrap()
}

#[test]
fn writes_apicurios_default_format_and_reads_it_back() {
    let Some((ccompat, native)) = registry_urls() else {
        return;
    };
    let topic = unique_topic("value");
    let (schema, line) = order();
    let value = order_value(&schema, &line);
    let c = apicurio(&native, &[]);
    let bytes = c
        .from_connect_data(&topic, Some(&schema), &Value::Struct(value.clone()))
        .expect("serialize")
        .expect("bytes");

    // 0x00, the content id, Ref{name: "Order"} length-delimited, the message.
    assert_eq!(bytes[0], 0, "magic byte");
    let id = i32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
    assert_eq!(
        bytes[5..13],
        [7, 0x0a, 5, b'O', b'r', b'd', b'e', b'r'],
        "Ref {{ name: \"Order\" }}, length-delimited"
    );
    let (file, text) = writer_parts(&schema).unwrap();
    let mut expected = Vec::new();
    write_ref(&mut expected, "Order");
    file.encode(&schema, &Value::Struct(value.clone()), &mut expected)
        .unwrap();
    assert_eq!(bytes[5..], expected[..]);

    // The artifact: PROTOBUF, our text, its content id the one written.
    let latest = client(&ccompat)
        .latest(&format!("{topic}-value"))
        .expect("the subject");
    assert_eq!(latest.schema_type, "PROTOBUF");
    assert_eq!(latest.id, id);
    assert_eq!(
        latest.text, text,
        "the registry keeps the text we registered"
    );
    assert!(
        text.starts_with("// Proto schema formatted by Wire, do not edit.\n"),
        "{text}"
    );
    let meta = native_get(&format!(
        "{native}/groups/default/artifacts/{topic}-value/versions/branch=latest"
    ));
    assert_eq!(meta["artifactType"], "PROTOBUF", "{meta}");
    assert_eq!(meta["contentId"], i64::from(id), "{meta}");

    // A fresh converter reads it as Java's does from the registered text: the `optional`
    // fields last and (as the text is parsed) required, a null one as its default.
    let read = apicurio(&native, &[])
        .to_connect_data(&topic, Some(&bytes[..]))
        .expect("deserialize");
    let read_schema = read.schema.expect("a schema");
    assert_eq!(read_schema.name(), Some("shop.Order"));
    let names: Vec<&str> = read_schema
        .fields()
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["id", "small", "lines", "attrs", "note", "nick"]);
    assert!(!read_schema.field("note").unwrap().schema.is_optional());
    let Value::Struct(s) = read.value else {
        panic!("{:?}", read.value)
    };
    assert_eq!(s.get("id"), Some(&42i64.into()));
    assert_eq!(s.get("small"), Some(&Value::Int8(-7)));
    assert_eq!(s.get("note"), Some(&"gift".into()));
    assert_eq!(s.get("nick"), Some(&"".into()), "null reads back as \"\"");
    assert_eq!(
        s.get("attrs"),
        Some(&Value::Map(vec![
            ("w".into(), 5i64.into()),
            ("a".into(), 0i64.into())
        ]))
    );
    let Some(Value::Array(lines)) = s.get("lines") else {
        panic!("{:?}", s.get("lines"))
    };
    let Value::Struct(l) = &lines[0] else {
        panic!()
    };
    assert_eq!(l.schema().name(), Some("shop.Lines"));
    assert_eq!(l.get("sku"), Some(&"A-1".into()));
    assert_eq!(l.get("qty"), Some(&3.into()));

    // The same schema again: the same content id, no new version.
    let again = c
        .from_connect_data(&topic, Some(&schema), &Value::Struct(value))
        .unwrap()
        .unwrap();
    assert_eq!(again[1..5], bytes[1..5]);
    assert_eq!(c.to_connect_data(&topic, None).unwrap().value, Value::Null);
}

#[test]
fn confluents_converter_and_apicurios_each_read_their_own_format() {
    let Some((ccompat, native)) = registry_urls() else {
        return;
    };
    let (schema, line) = order();
    let value = Value::Struct(order_value(&schema, &line));

    let topic = unique_topic("apicurio");
    let apicurio_bytes = apicurio(&native, &[])
        .from_connect_data(&topic, Some(&schema), &value)
        .unwrap()
        .unwrap();
    let e = confluent(&ccompat)
        .to_connect_data(&topic, Some(&apicurio_bytes))
        .expect_err("Confluent's converter reads message indexes where Apicurio wrote a Ref");
    eprintln!("Confluent's converter on Apicurio's bytes: {e}");

    let topic = unique_topic("confluent");
    let confluent_bytes = confluent(&ccompat)
        .from_connect_data(&topic, Some(&schema), &value)
        .unwrap()
        .unwrap();
    assert_eq!(confluent_bytes[5], 0, "Confluent's message indexes [0]");
    let e = apicurio(&native, &[])
        .to_connect_data(&topic, Some(&confluent_bytes))
        .expect_err("Apicurio's converter reads a Ref where Confluent wrote message indexes");
    assert!(e.to_string().contains("no message"), "{e}");
    // Each reads its own.
    assert!(
        confluent(&ccompat)
            .to_connect_data(&topic, Some(&confluent_bytes))
            .is_ok()
    );
}

#[test]
fn with_indexes_and_no_ref_the_formats_meet() {
    let Some((ccompat, native)) = registry_urls() else {
        return;
    };
    let (schema, line) = order();
    let value = Value::Struct(order_value(&schema, &line));

    // Apicurio with send-type-ref=false, send-indexes=true: 0x00 id [1, index] message, which
    // Confluent's converter reads (the root is the file's last message: Line's message first).
    let topic = unique_topic("indexes");
    let bytes = apicurio(
        &native,
        &[
            ("apicurio.registry.serde.send-type-ref", "false"),
            ("apicurio.registry.serde.send-indexes", "true"),
        ],
    )
    .from_connect_data(&topic, Some(&schema), &value)
    .unwrap()
    .unwrap();
    let (file, _) = writer_parts(&schema).unwrap();
    let root_index = file.messages.len() as u8 - 1;
    assert_eq!(
        bytes[5..7],
        [2, root_index * 2],
        "count 1, the root's index"
    );
    let read = confluent(&ccompat)
        .to_connect_data(&topic, Some(&bytes))
        .expect("Confluent's converter reads indexes");
    let Value::Struct(s) = read.value else {
        panic!("{:?}", read.value)
    };
    assert_eq!(s.get("id"), Some(&42i64.into()));
    assert_eq!(s.get("note"), Some(&"gift".into()));
    // And Apicurio's with read-indexes reads them back itself.
    let back = apicurio(
        &native,
        &[
            ("apicurio.registry.serde.read-type-ref", "false"),
            ("apicurio.registry.serde.read-indexes", "true"),
        ],
    )
    .to_connect_data(&topic, Some(&bytes))
    .expect("read with indexes");
    let Value::Struct(s) = back.value else {
        panic!()
    };
    assert_eq!(s.get("small"), Some(&Value::Int8(-7)));
}
