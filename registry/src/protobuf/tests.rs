//! The Connect ↔ Protobuf mapping against Confluent's: golden texts for Connect schemas taken
//! from Confluent's own tests (the Java test is named on each; where the Java test asserts the
//! structure of the generated file, the text is that structure printed by
//! `ProtobufSchemaUtils.toString`'s rules), and round trips through protobuf bytes.

use connect_api::data::logical;
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{Schema, Struct, Value};
use protox::prost::Message as _;
use protox::prost_reflect::DynamicMessage;

use super::converter::writer_parts;
use super::data::{ProtobufData, ProtobufDataConfig};
use super::schema::{TYPE_ENUM, TYPE_PROP, TYPE_TAG, scrub_name, to_map_entry, to_map_field};

fn text_of(schema: &Schema, config: &ProtobufDataConfig) -> String {
    writer_parts(schema, config).unwrap().0
}

fn tagged(b: SchemaBuilder, tag: u32) -> Schema {
    b.parameter(TYPE_TAG, tag.to_string()).build()
}

/// ProtobufDataTest.testFromConnectComplex: int8/int16 as int32 with `connect.type`, maps as
/// `ConnectDefault<n>Entry` messages numbered after the root, the enum nested.
#[test]
fn golden_complex() {
    let schema = SchemaBuilder::struct_()
        .field(
            "int8",
            SchemaBuilder::new(SchemaType::Int8)
                .default_value(Value::Int8(2))
                .doc("int8 field")
                .build(),
        )
        .field("int16", Schema::int16())
        .field("int32", Schema::int32())
        .field("int64", Schema::int64())
        .field("float32", Schema::float32())
        .field("float64", Schema::float64())
        .field("boolean", Schema::boolean())
        .field("string", Schema::string())
        .field("bytes", Schema::bytes())
        .field("array", SchemaBuilder::array(Schema::string()).build())
        .field(
            "map",
            SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
        )
        .field(
            "mapNonStringKeys",
            SchemaBuilder::map(Schema::int32(), Schema::int32()).build(),
        )
        .field(
            "mapNullValues",
            SchemaBuilder::map(Schema::string(), Schema::optional_string()).build(),
        )
        .field(
            "enum",
            SchemaBuilder::new(SchemaType::String)
                .name("Status")
                .optional()
                .parameter(TYPE_ENUM, "Status")
                .parameter(format!("{TYPE_ENUM}.ACTIVE"), "0")
                .parameter(format!("{TYPE_ENUM}.INACTIVE"), "1")
                .build(),
        )
        .build();
    let meta = |t: &str| {
        format!(
            " [(confluent.field_meta) = {{\n    params: [\n      {{\n        key: \"connect.type\",\n        value: \"{t}\"\n      }}\n    ]\n  }}]"
        )
    };
    let expected = format!(
        "syntax = \"proto3\";

message ConnectDefault1 {{
  int32 int8 = 1{};
  int32 int16 = 2{};
  int32 int32 = 3;
  int64 int64 = 4;
  float float32 = 5;
  double float64 = 6;
  bool boolean = 7;
  string string = 8;
  bytes bytes = 9;
  repeated string array = 10;
  repeated ConnectDefault2Entry map = 11;
  repeated ConnectDefault3Entry mapNonStringKeys = 12;
  repeated ConnectDefault4Entry mapNullValues = 13;
  Status enum = 14;

  message ConnectDefault2Entry {{
    string key = 1;
    int32 value = 2;
  }}
  message ConnectDefault3Entry {{
    int32 key = 1;
    int32 value = 2;
  }}
  message ConnectDefault4Entry {{
    string key = 1;
    string value = 2;
  }}
  enum Status {{
    ACTIVE = 0;
    INACTIVE = 1;
  }}
}}
",
        meta("int8"),
        meta("int16")
    );
    let config = ProtobufDataConfig::default();
    assert_eq!(text_of(&schema, &config), expected);

    // The values (ProtobufDataTest.testFromConnectComplex's struct) read back.
    let value = Struct::new(schema.clone())
        .with("int8", Value::Int8(12))
        .unwrap()
        .with("int16", Value::Int16(12))
        .unwrap()
        .with("int32", 12)
        .unwrap()
        .with("int64", 12i64)
        .unwrap()
        .with("float32", Value::Float32(12.2))
        .unwrap()
        .with("float64", 12.2)
        .unwrap()
        .with("boolean", true)
        .unwrap()
        .with("string", "foo")
        .unwrap()
        .with("bytes", b"foo".to_vec())
        .unwrap()
        .with(
            "array",
            Value::Array(vec!["a".into(), "b".into(), "c".into()]),
        )
        .unwrap()
        .with("map", Value::Map(vec![("field".into(), 1.into())]))
        .unwrap()
        .with("mapNonStringKeys", Value::Map(vec![(1.into(), 1.into())]))
        .unwrap()
        .with(
            "mapNullValues",
            Value::Map(vec![("field".into(), Value::Null)]),
        )
        .unwrap()
        .with("enum", "INACTIVE")
        .unwrap();
    let (read_schema, read) = round_trip(&schema, &Value::Struct(value), &config);
    let Value::Struct(read) = read else {
        panic!("{read:?}")
    };
    assert_eq!(read_schema.name(), Some("ConnectDefault1"));
    assert_eq!(read.get("int8"), Some(&Value::Int8(12)));
    assert_eq!(read.get("int16"), Some(&Value::Int16(12)));
    assert_eq!(read.get("bytes"), Some(&Value::Bytes(b"foo".to_vec())));
    assert_eq!(
        read.get("mapNullValues"),
        Some(&Value::Map(vec![("field".into(), "".into())])),
        "a null map value reads back as the proto3 default"
    );
    assert_eq!(read.get("enum"), Some(&"INACTIVE".into()));
    let enum_schema = &read_schema.field("enum").unwrap().schema;
    assert_eq!(enum_schema.name(), Some("Status"));
    assert_eq!(enum_schema.parameters().get(TYPE_ENUM).unwrap(), "Status");
    assert_eq!(
        read_schema.field("map").unwrap().schema.name(),
        Some("connect_default2")
    );
}

/// ProtobufDataTest.testFromConnectNameCollision: a message named like its field gets `Message`.
#[test]
fn golden_name_collision() {
    let nested = SchemaBuilder::struct_()
        .name("nested")
        .field("string", Schema::string())
        .build();
    let schema = SchemaBuilder::struct_().field("nested", nested).build();
    assert_eq!(
        text_of(&schema, &ProtobufDataConfig::default()),
        "syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  nestedMessage nested = 1;\n\n  message nestedMessage {\n    string string = 1;\n  }\n}\n"
    );
}

/// ProtobufDataTest.testFromConnectComplexDuplicateImports: one import for two timestamps.
#[test]
fn golden_duplicate_imports() {
    let schema = SchemaBuilder::struct_()
        .field("createdAt", logical::timestamp_builder().build())
        .field("updatedAt", logical::timestamp_builder().build())
        .build();
    assert_eq!(
        text_of(&schema, &ProtobufDataConfig::default()),
        "syntax = \"proto3\";\n\nimport \"google/protobuf/timestamp.proto\";\n\nmessage ConnectDefault1 {\n  google.protobuf.Timestamp createdAt = 1;\n  google.protobuf.Timestamp updatedAt = 2;\n}\n"
    );
}

fn test_message_schema(name: &str) -> Schema {
    let f = |b: SchemaBuilder, tag: u32| tagged(b.optional(), tag);
    let t =
        |b: SchemaBuilder, tag: u32, ty: &str| tagged(b.optional().parameter(TYPE_PROP, ty), tag);
    SchemaBuilder::struct_()
        .name(name)
        .version(1)
        .field("test_string", f(SchemaBuilder::new(SchemaType::String), 1))
        .field("test_bool", f(SchemaBuilder::new(SchemaType::Boolean), 2))
        .field("test_bytes", f(SchemaBuilder::new(SchemaType::Bytes), 3))
        .field("test_double", f(SchemaBuilder::new(SchemaType::Float64), 4))
        .field("test_float", f(SchemaBuilder::new(SchemaType::Float32), 5))
        .field(
            "test_fixed32",
            t(SchemaBuilder::new(SchemaType::Int64), 6, "fixed32"),
        )
        .field(
            "test_fixed64",
            t(SchemaBuilder::new(SchemaType::Int64), 7, "fixed64"),
        )
        .field("test_int32", f(SchemaBuilder::new(SchemaType::Int32), 8))
        .field("test_int64", f(SchemaBuilder::new(SchemaType::Int64), 9))
        .field(
            "test_sfixed32",
            t(SchemaBuilder::new(SchemaType::Int32), 10, "sfixed32"),
        )
        .field(
            "test_sfixed64",
            t(SchemaBuilder::new(SchemaType::Int64), 11, "sfixed64"),
        )
        .field(
            "test_sint32",
            t(SchemaBuilder::new(SchemaType::Int32), 12, "sint32"),
        )
        .field(
            "test_sint64",
            t(SchemaBuilder::new(SchemaType::Int64), 13, "sint64"),
        )
        .field(
            "test_uint32",
            t(SchemaBuilder::new(SchemaType::Int64), 14, "uint32"),
        )
        .field(
            "test_uint64",
            t(SchemaBuilder::new(SchemaType::Int64), 15, "uint64"),
        )
        .build()
}

/// ProtobufConverterTest.testFromConnectDataForValueWithNamespace: the package from the schema
/// name, the scalar kinds from the `Type` parameter, and the bytes of TestMessage
/// (`test_string: "Hello World"`, `test_int32: 123`, the rest at their defaults: not written).
#[test]
fn golden_test_message_with_namespace_and_bytes() {
    let schema = test_message_schema("io.confluent.kafka.serializers.protobuf.test.TestMessage");
    let config = ProtobufDataConfig::default();
    assert_eq!(
        text_of(&schema, &config),
        "syntax = \"proto3\";
package io.confluent.kafka.serializers.protobuf.test;

message TestMessage {
  string test_string = 1;
  bool test_bool = 2;
  bytes test_bytes = 3;
  double test_double = 4;
  float test_float = 5;
  fixed32 test_fixed32 = 6;
  fixed64 test_fixed64 = 7;
  int32 test_int32 = 8;
  int64 test_int64 = 9;
  sfixed32 test_sfixed32 = 10;
  sfixed64 test_sfixed64 = 11;
  sint32 test_sint32 = 12;
  sint64 test_sint64 = 13;
  uint32 test_uint32 = 14;
  uint64 test_uint64 = 15;
}
"
    );
    let mut s = Struct::new(schema.clone());
    for (k, v) in [
        ("test_string", Value::from("Hello World")),
        ("test_bool", false.into()),
        ("test_bytes", Vec::<u8>::new().into()),
        ("test_double", 0.0.into()),
        ("test_float", Value::Float32(0.0)),
        ("test_fixed32", 0i64.into()),
        ("test_fixed64", 0i64.into()),
        ("test_int32", 123.into()),
        ("test_int64", 0i64.into()),
        ("test_sfixed32", 0.into()),
        ("test_sfixed64", 0i64.into()),
        ("test_sint32", 0.into()),
        ("test_sint64", 0i64.into()),
        ("test_uint32", 0i64.into()),
        ("test_uint64", 0i64.into()),
    ] {
        s.put(k, v).unwrap();
    }
    let (_, _, _, desc, indexes) = writer_parts(&schema, &config).unwrap();
    assert_eq!(indexes, [0]);
    let data = ProtobufData::new(config.clone());
    let bytes = data
        .from_connect_value(&schema, &Value::Struct(s.clone()), &desc)
        .unwrap()
        .encode_to_vec();
    let mut expected = vec![0x0a, 11];
    expected.extend_from_slice(b"Hello World");
    expected.extend_from_slice(&[0x40, 123]);
    assert_eq!(bytes, expected);

    // Read back (ProtobufConverterTest.testToConnectDataForValue): the same schema with the
    // registry's version.
    let read_schema = data.to_connect_schema(&desc, Some(1)).unwrap();
    let mut expected_schema = test_message_schema("TestMessage");
    // The Java test's schema is named by the message's simple name.
    assert_eq!(read_schema, expected_schema);
    let read = data
        .to_connect_value(
            &read_schema,
            &DynamicMessage::decode(desc, &bytes[..]).unwrap(),
        )
        .unwrap();
    expected_schema = read_schema.clone();
    let Value::Struct(read) = read else { panic!() };
    assert_eq!(read.schema(), &expected_schema);
    assert_eq!(read.get("test_string"), Some(&"Hello World".into()));
    assert_eq!(read.get("test_int32"), Some(&123.into()));
    assert_eq!(read.get("test_uint64"), Some(&0i64.into()));
}

/// Decimal (`precision`/`scale` params, value before key), Date, Time, Timestamp and wrappers
/// with `wrapper.for.nullables` (the rules of `dataTypeFromConnectSchema`).
#[test]
fn golden_logical_types_and_wrappers() {
    let schema = SchemaBuilder::struct_()
        .name("Money")
        .field(
            "amount",
            logical::decimal_builder(2)
                .parameter("connect.decimal.precision", "10")
                .build(),
        )
        .field("when", logical::date_builder().optional().build())
        .field("at", logical::time_builder().build())
        .field("ts", logical::timestamp_builder().optional().build())
        .field("note", Schema::optional_string())
        .field("small", Schema::optional_int16())
        .field("count", Schema::int32())
        .build();
    let config = ProtobufDataConfig {
        wrapper_for_nullables: true,
        ..ProtobufDataConfig::default()
    };
    assert_eq!(
        text_of(&schema, &config),
        "syntax = \"proto3\";

import \"confluent/type/decimal.proto\";
import \"google/type/date.proto\";
import \"google/type/timeofday.proto\";
import \"google/protobuf/timestamp.proto\";
import \"google/protobuf/wrappers.proto\";

message Money {
  confluent.type.Decimal amount = 1 [(confluent.field_meta) = {
    params: [
      {
        value: \"10\",
        key: \"precision\"
      },
      {
        value: \"2\",
        key: \"scale\"
      }
    ]
  }];
  google.type.Date when = 2;
  google.type.TimeOfDay at = 3;
  google.protobuf.Timestamp ts = 4;
  google.protobuf.StringValue note = 5;
  google.protobuf.Int32Value small = 6 [(confluent.field_meta) = {
    params: [
      {
        key: \"connect.type\",
        value: \"int16\"
      }
    ]
  }];
  int32 count = 7;
}
"
    );
    let value = Struct::new(schema.clone())
        .with(
            "amount",
            logical::Decimal::parse("-1234.56", 2).unwrap().to_bytes(),
        )
        .unwrap()
        .with("when", Value::Int32(19_000))
        .unwrap()
        .with("at", Value::Int32(45_296_789))
        .unwrap()
        .with("ts", Value::Int64(-1_500))
        .unwrap()
        .with("note", "hi")
        .unwrap()
        .with("small", Value::Int16(-3))
        .unwrap()
        .with("count", 0)
        .unwrap();
    let (read_schema, read) = round_trip(&schema, &Value::Struct(value), &config);
    let amount = &read_schema.field("amount").unwrap().schema;
    assert_eq!(amount.name(), Some(logical::DECIMAL_NAME));
    assert_eq!(logical::decimal_scale(amount), Some(2));
    assert_eq!(
        amount
            .parameters()
            .get("connect.decimal.precision")
            .unwrap(),
        "10"
    );
    // As Java's toConnectSchema: a wrapper field reads as the wrapper's type, connect.type aside.
    assert_eq!(
        read_schema.field("small").unwrap().schema.schema_type(),
        SchemaType::Int32
    );
    assert!(
        !read_schema.field("count").unwrap().schema.is_optional(),
        "wrapper.for.nullables: scalars are required"
    );
    assert!(read_schema.field("note").unwrap().schema.is_optional());
    let Value::Struct(read) = read else { panic!() };
    assert_eq!(
        read.get("amount"),
        Some(&Value::Bytes(
            logical::Decimal::parse("-1234.56", 2).unwrap().to_bytes()
        ))
    );
    assert_eq!(read.get("when"), Some(&Value::Int32(19_000)));
    assert_eq!(read.get("at"), Some(&Value::Int32(45_296_789)));
    assert_eq!(read.get("ts"), Some(&Value::Int64(-1_500)));
    assert_eq!(read.get("note"), Some(&"hi".into()));
    assert_eq!(read.get("small"), Some(&Value::Int32(-3)));
    assert_eq!(read.get("count"), Some(&0.into()));
}

/// `optional.for.nullables` (proto3 `optional`) and a union as a `oneof`: the union's own field
/// takes a field number of the count, its members their `Tag`s.
#[test]
fn golden_optional_and_oneof() {
    let union = SchemaBuilder::struct_()
        .name("io.confluent.connect.protobuf.Union.payload")
        .field(
            "payload_id",
            tagged(SchemaBuilder::new(SchemaType::String).optional(), 5),
        )
        .field(
            "code",
            tagged(SchemaBuilder::new(SchemaType::Int32).optional(), 6),
        )
        .optional()
        .build();
    let schema = SchemaBuilder::struct_()
        .name("com.example.Event")
        .field("id", Schema::int64())
        .field("name", Schema::optional_string())
        .field("payload", union.clone())
        .field(
            "tags",
            SchemaBuilder::array(Schema::string()).optional().build(),
        )
        .build();
    let config = ProtobufDataConfig {
        optional_for_nullables: true,
        ..ProtobufDataConfig::default()
    };
    assert_eq!(
        text_of(&schema, &config),
        "syntax = \"proto3\";
package com.example;

message Event {
  int64 id = 1;
  optional string name = 2;
  repeated string tags = 4;

  oneof payload {
    string payload_id = 5;
    int32 code = 6;
  }
}
"
    );
}

/// Unions, read and written: `<oneof>_<index>` STRUCT fields first.
#[test]
fn oneof_round_trip() {
    let union = SchemaBuilder::struct_()
        .name("io.confluent.connect.protobuf.Union.payload")
        .field(
            "payload_id",
            tagged(SchemaBuilder::new(SchemaType::String).optional(), 3),
        )
        .field(
            "code",
            tagged(SchemaBuilder::new(SchemaType::Int32).optional(), 4),
        )
        .optional()
        .build();
    let schema = SchemaBuilder::struct_()
        .name("Event")
        .field("payload_0", union.clone())
        .field(
            "id",
            tagged(SchemaBuilder::new(SchemaType::Int64).optional(), 1),
        )
        .field(
            "name",
            tagged(SchemaBuilder::new(SchemaType::String).optional(), 2),
        )
        .build();
    let config = ProtobufDataConfig::default();
    let value = Struct::new(schema.clone())
        .with("id", 7i64)
        .unwrap()
        .with(
            "payload_0",
            Struct::new(union.clone()).with("code", 9).unwrap(),
        )
        .unwrap();
    let (read_schema, read) = round_trip(&schema, &Value::Struct(value.clone()), &config);
    assert_eq!(read_schema, schema);
    let Value::Struct(read) = read else { panic!() };
    assert_eq!(read.get("payload_0"), value.get("payload_0"));
    assert_eq!(read.get("id"), Some(&7i64.into()));
    assert_eq!(
        read.get("name"),
        Some(&"".into()),
        "proto3 scalars read as their default"
    );
}

/// ProtobufConverterTest.testComplex: the Connect schema read back from what was written.
#[test]
fn complex_round_trip_schema() {
    let opt = |t: SchemaType, tag: u32| tagged(SchemaBuilder::new(t).optional(), tag);
    let build = |name: Option<&str>| {
        let mut b = SchemaBuilder::struct_();
        if let Some(n) = name {
            b = b.name(n).version(1);
        }
        b.field("int32", opt(SchemaType::Int32, 1))
            .field("int64", opt(SchemaType::Int64, 2))
            .field("float32", opt(SchemaType::Float32, 3))
            .field("float64", opt(SchemaType::Float64, 4))
            .field("boolean", opt(SchemaType::Boolean, 5))
            .field("string", opt(SchemaType::String, 6))
            .field("bytes", opt(SchemaType::Bytes, 7))
            .field(
                "array",
                tagged(
                    SchemaBuilder::array(Schema::optional_string()).optional(),
                    8,
                ),
            )
            .field(
                "map",
                tagged(
                    SchemaBuilder::map(opt(SchemaType::String, 1), opt(SchemaType::Int32, 2))
                        .name("connect_default2")
                        .optional(),
                    9,
                ),
            )
            .build()
    };
    let schema = build(None);
    let config = ProtobufDataConfig::default();
    let (_, _, _, desc, _) = writer_parts(&schema, &config).unwrap();
    let read = ProtobufData::new(config)
        .to_connect_schema(&desc, Some(1))
        .unwrap();
    assert_eq!(read, build(Some("ConnectDefault1")));
}

/// A primitive root is its wrapper in wrappers.proto (message index 4 for Int32Value), read
/// back as the primitive (`wrapper.for.raw.primitives`).
#[test]
fn primitive_roots_are_wrappers() {
    let config = ProtobufDataConfig::default();
    let (text, name, _, desc, indexes) = writer_parts(&Schema::int32(), &config).unwrap();
    assert!(
        text.starts_with("syntax = \"proto3\";\npackage google.protobuf;\n"),
        "{text}"
    );
    assert_eq!(name, "google.protobuf.Int32Value");
    assert_eq!(indexes, [4]);
    let (_, _, _, _, ix) = writer_parts(&Schema::string(), &config).unwrap();
    assert_eq!(ix, [7]);
    let data = ProtobufData::new(config);
    let bytes = data
        .from_connect_value(&Schema::int32(), &Value::Int32(5), &desc)
        .unwrap()
        .encode_to_vec();
    assert_eq!(bytes, [0x08, 5]);
    let s = data.to_connect_schema(&desc, None).unwrap();
    assert_eq!(s, Schema::int32());
    let v = data
        .to_connect_value(&s, &DynamicMessage::decode(desc, &bytes[..]).unwrap())
        .unwrap();
    assert_eq!(v, Value::Int32(5));
    assert!(
        writer_parts(
            &SchemaBuilder::array(Schema::int32()).build(),
            &ProtobufDataConfig::default()
        )
        .is_err()
    );
}

/// A text another producer registered: real `map<,>` fields, nested messages, enums, proto3
/// `optional`, a `(confluent.field_meta)` option without its import.
#[test]
fn reads_foreign_texts() {
    let text = "syntax = \"proto3\";
package shop;

message Order {
  map<string, int64> counts = 1;
  Line line = 2;
  Kind kind = 3;
  optional string note = 4;
  int32 tiny = 5 [(confluent.field_meta) = { params: [{ key: \"connect.type\", value: \"int8\" }] }];
  repeated Line lines = 6;

  message Line {
    string sku = 1;
  }
  enum Kind {
    NONE = 0;
    BIG = 1;
  }
}
";
    let compiled = super::compile::compile(text).unwrap();
    let desc = compiled.message_at(&[0]).unwrap();
    let data = ProtobufData::new(ProtobufDataConfig::default());
    let schema = data.to_connect_schema(&desc, Some(3)).unwrap();
    assert_eq!(schema.name(), Some("Order"));
    assert_eq!(schema.version(), Some(3));
    assert_eq!(
        schema.field("tiny").unwrap().schema.schema_type(),
        SchemaType::Int8
    );
    let counts = &schema.field("counts").unwrap().schema;
    assert_eq!(counts.schema_type(), SchemaType::Map);
    assert_eq!(counts.name(), Some("counts"));
    let mut msg = DynamicMessage::new(desc.clone());
    msg.set_field_by_name(
        "counts",
        protox::prost_reflect::Value::Map(
            [
                (
                    protox::prost_reflect::MapKey::String("b".into()),
                    protox::prost_reflect::Value::I64(2),
                ),
                (
                    protox::prost_reflect::MapKey::String("a".into()),
                    protox::prost_reflect::Value::I64(1),
                ),
            ]
            .into_iter()
            .collect(),
        ),
    );
    msg.set_field_by_name("kind", protox::prost_reflect::Value::EnumNumber(1));
    msg.set_field_by_name("tiny", protox::prost_reflect::Value::I32(-4));
    let Value::Struct(v) = data.to_connect_value(&schema, &msg).unwrap() else {
        panic!()
    };
    assert_eq!(
        v.get("counts"),
        Some(&Value::Map(vec![
            ("a".into(), 1i64.into()),
            ("b".into(), 2i64.into())
        ]))
    );
    assert_eq!(v.get("kind"), Some(&"BIG".into()));
    assert_eq!(v.get("tiny"), Some(&Value::Int8(-4)));
    assert_eq!(
        v.get("line"),
        Some(&Value::Null),
        "an unset message is null"
    );
    assert_eq!(
        v.get("note"),
        Some(&Value::Null),
        "an unset proto3 optional is null"
    );
    assert_eq!(v.get("lines"), Some(&Value::Array(vec![])));
    // generate.struct.for.nulls: an unset message reads as its default struct.
    let data = ProtobufData::new(ProtobufDataConfig {
        generate_struct_for_nulls: true,
        ..ProtobufDataConfig::default()
    });
    let Value::Struct(v) = data.to_connect_value(&schema, &msg).unwrap() else {
        panic!()
    };
    assert!(matches!(v.get("line"), Some(Value::Struct(_))));
    // Recursive messages cannot be Connect schemas.
    let c = super::compile::compile("syntax = \"proto3\";\nmessage Node {\n  Node next = 1;\n}\n")
        .unwrap();
    let e = data
        .to_connect_schema(&c.message_at(&[0]).unwrap(), None)
        .unwrap_err();
    assert!(e.to_string().contains("recursive"), "{e}");
}

#[test]
fn names() {
    assert_eq!(scrub_name("ok_name"), "ok_name");
    assert_eq!(scrub_name("1abc"), "x1abc");
    assert_eq!(scrub_name("a-b c"), "a_b_c");
    assert_eq!(scrub_name("é"), "_C3_A9");
    assert_eq!(to_map_entry("my_map"), "MyMapEntry");
    assert_eq!(to_map_entry("ConnectDefault2"), "ConnectDefault2Entry");
    assert_eq!(to_map_field("ConnectDefault2Entry"), "connect_default2");
    assert_eq!(to_map_field("a.b.MyMapEntry"), "a.b.my_map");
}

/// Written with our text and read back through bytes: the schema and value read.
fn round_trip(schema: &Schema, value: &Value, config: &ProtobufDataConfig) -> (Schema, Value) {
    let (text, _, _, desc, _) = writer_parts(schema, config).unwrap();
    let data = ProtobufData::new(config.clone());
    let bytes = data
        .from_connect_value(schema, value, &desc)
        .unwrap()
        .encode_to_vec();
    // Read as a reader would: compile the registered text again.
    let compiled = super::compile::compile(&text).unwrap();
    let desc = compiled.message_at(&[0]).unwrap();
    let read_schema = data.to_connect_schema(&desc, None).unwrap();
    let msg = DynamicMessage::decode(desc, &bytes[..]).unwrap();
    let read = data.to_connect_value(&read_schema, &msg).unwrap();
    (read_schema, read)
}
