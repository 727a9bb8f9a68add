//! Property tests: JSON converter round trips, panic-free config parsing, password secrecy.

use connect_api::config::{
    ConfigDef, ConfigInfos, ConfigKey, ConfigMap, ConfigType, Importance,
    source_connector_config_def,
};
use connect_api::converter::{Converter, DecimalFormat, JsonConverter, converter_for_class};
use connect_api::data::logical::{self, Decimal};
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use proptest::prelude::*;

/// A schema and a value that conforms to it.
fn schema_and_value() -> impl Strategy<Value = (Schema, Value)> {
    let leaf = prop_oneof![
        any::<i8>().prop_map(|v| (Schema::int8(), Value::Int8(v))),
        any::<i16>().prop_map(|v| (Schema::int16(), Value::Int16(v))),
        any::<i32>().prop_map(|v| (Schema::int32(), Value::Int32(v))),
        any::<i64>().prop_map(|v| (Schema::int64(), Value::Int64(v))),
        (-1e30f32..1e30f32).prop_map(|v| (Schema::float32(), Value::Float32(v))),
        (-1e300f64..1e300f64).prop_map(|v| (Schema::float64(), Value::Float64(v))),
        any::<bool>().prop_map(|v| (Schema::boolean(), Value::Boolean(v))),
        ".*".prop_map(|v| (Schema::string(), Value::String(v))),
        proptest::collection::vec(any::<u8>(), 0..16)
            .prop_map(|v| (Schema::bytes(), Value::Bytes(v))),
        Just((Schema::optional_string(), Value::Null)),
        (any::<i64>(), 0i32..10).prop_map(|(u, s)| (
            logical::decimal_builder(s).build(),
            Value::Bytes(
                Decimal {
                    unscaled: i128::from(u),
                    scale: s
                }
                .to_bytes()
            )
        )),
        any::<i32>().prop_map(|d| (logical::date_builder().build(), Value::Int32(d))),
        (0i32..86_400_000)
            .prop_map(|t| (logical::time_builder().optional().build(), Value::Int32(t))),
        any::<i64>().prop_map(|t| (
            logical::timestamp_builder().doc("when").build(),
            Value::Int64(t)
        )),
        any::<i32>().prop_map(|d| (
            SchemaBuilder::new(connect_api::data::SchemaType::Int32)
                .default_value(Value::Int32(d))
                .name("n")
                .version(3)
                .build(),
            Value::Int32(d)
        )),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            // Arrays: one element schema, several values of it.
            (inner.clone(), 0usize..4).prop_map(|((s, v), n)| {
                (SchemaBuilder::array(s).build(), Value::Array(vec![v; n]))
            }),
            // String-keyed maps become JSON objects; keys must be unique.
            (
                inner.clone(),
                proptest::collection::btree_set("[a-z]{1,5}", 0..4)
            )
                .prop_map(|((s, v), keys)| {
                    let entries = keys
                        .into_iter()
                        .map(|k| (Value::String(k), v.clone()))
                        .collect();
                    (
                        SchemaBuilder::map(Schema::string(), s).build(),
                        Value::Map(entries),
                    )
                }),
            // Other maps become arrays of pairs.
            (inner.clone(), proptest::collection::vec(any::<i32>(), 0..3)).prop_map(
                |((s, v), keys)| {
                    let entries = keys
                        .into_iter()
                        .map(|k| (Value::Int32(k), v.clone()))
                        .collect();
                    (
                        SchemaBuilder::map(Schema::int32(), s).build(),
                        Value::Map(entries),
                    )
                }
            ),
            // Structs with one or two fields.
            (inner.clone(), inner).prop_map(|((s1, v1), (s2, v2))| {
                let schema = SchemaBuilder::struct_()
                    .field("a", s1)
                    .field("b", s2)
                    .optional()
                    .build();
                let mut st = Struct::new(schema.clone());
                st.put("a", v1).unwrap();
                st.put("b", v2).unwrap();
                (schema, Value::Struct(st))
            }),
        ]
    })
}

/// Schemaless values as JSON gives them back (INT64, FLOAT64, string-keyed maps).
fn schemaless_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::Int64),
        (-1e300f64..1e300f64).prop_map(Value::Float64),
        any::<bool>().prop_map(Value::Boolean),
        ".*".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{0,4}", inner, 0..4).prop_map(|m| Value::Map(
                m.into_iter().map(|(k, v)| (Value::String(k), v)).collect()
            )),
        ]
    })
}

proptest! {
    #[test]
    fn json_round_trip_with_envelope((schema, value) in schema_and_value()) {
        let c = JsonConverter::new(true);
        let bytes = c.from_connect_data("t", Some(&schema), &value).unwrap();
        let back = c.to_connect_data("t", bytes.as_deref()).unwrap();
        prop_assert_eq!(back.schema.as_ref(), Some(&schema));
        prop_assert_eq!(back.value, value);
    }

    #[test]
    fn json_round_trip_numeric_decimals(u in -(1i64 << 50)..(1i64 << 50), scale in 0i32..6) {
        let c = JsonConverter::new(true).with_decimal_format(DecimalFormat::Numeric);
        let schema = logical::decimal_builder(scale).build();
        let value = Value::Bytes(Decimal { unscaled: i128::from(u), scale }.to_bytes());
        let bytes = c.from_connect_data("t", Some(&schema), &value).unwrap().unwrap();
        let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert!(json["payload"].is_number());
        let back = c.to_connect_data("t", Some(&bytes)).unwrap();
        prop_assert_eq!(back.value, value);
    }

    #[test]
    fn json_round_trip_without_envelope(value in schemaless_value()) {
        let c = JsonConverter::new(false);
        let bytes = c.from_connect_data("t", None, &value).unwrap();
        let back = c.to_connect_data("t", bytes.as_deref()).unwrap();
        prop_assert_eq!(back.schema, None);
        prop_assert_eq!(back.value, value);
    }

    #[test]
    fn json_without_envelope_keeps_typed_payloads((schema, value) in schema_and_value()) {
        // Plain JSON carries no schema, but re-reading with the schema restores the value.
        let plain = JsonConverter::new(false).to_json_value(Some(&schema), &value).unwrap();
        let envelope = serde_json::json!({"schema": connect_api::converter::as_json_schema(&schema).unwrap(), "payload": plain});
        let back = JsonConverter::new(true).from_json_value(&envelope).unwrap();
        prop_assert_eq!(back.value, value);
    }

    #[test]
    fn converters_never_panic_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for class in ["json", "string", "bytes", "ShortConverter", "IntegerConverter",
                      "LongConverter", "FloatConverter", "DoubleConverter", "BooleanConverter"] {
            let c = converter_for_class(class).unwrap();
            let _ = c.to_connect_data("t", Some(&bytes));
        }
        // SimpleHeaderConverter is a header converter only (as Apache's).
        let h = connect_api::converter::header_converter_for_class("SimpleHeaderConverter").unwrap();
        let _ = h.to_connect_header("t", "h", Some(&bytes));
        let _ = JsonConverter::new(false).to_connect_data("t", Some(&bytes));
    }

    #[test]
    fn config_parsing_never_panics(values in proptest::collection::vec(".*", 13)) {
        let mut def = source_connector_config_def();
        for (i, ty) in [ConfigType::Boolean, ConfigType::String, ConfigType::Int, ConfigType::Short, ConfigType::Long,
                        ConfigType::Double, ConfigType::List, ConfigType::Class, ConfigType::Password].into_iter().enumerate() {
            def = def.define(ConfigKey::new(format!("k{i}"), ty, Importance::Low, "doc"));
        }
        let keys = ["k0","k1","k2","k3","k4","k5","k6","k7","k8","tasks.max","name","transaction.boundary","errors.retry.timeout"];
        let props: ConfigMap = keys.iter().zip(&values).map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        let values = def.validate(&props);
        let _ = def.parse(&props);
        let infos = ConfigInfos::generate("c", &def, &values, def.groups());
        for err in infos.errors() {
            // Every error names the key it concerns.
            prop_assert!(def.names().any(|k| err.contains(k)), "{}", err);
        }
        let _ = serde_json::to_string(&infos).unwrap();
    }

    #[test]
    fn passwords_never_serialised(secret in "[a-zA-Z0-9]{6,20}") {
        let def = ConfigDef::new()
            .define(ConfigKey::new("pw", ConfigType::Password, Importance::High, "a secret"))
            .define(ConfigKey::new("pw.default", ConfigType::Password, Importance::High, "a secret")
                .default_value(connect_api::config::TypedValue::Password(connect_api::config::Password::new(secret.clone()))));
        let props: ConfigMap = [("pw".to_owned(), secret.clone())].into();
        let values = def.validate(&props);
        let infos = ConfigInfos::generate("c", &def, &values, vec![]);
        let parsed = def.parse(&props).unwrap();
        for out in [
            serde_json::to_string(&infos).unwrap(),
            format!("{infos:?}"),
            format!("{values:?}"),
            format!("{parsed:?}").replace(&format!("{:?}", parsed.originals()), ""),
            format!("{}", parsed.get("pw").unwrap()),
            serde_json::to_string(parsed.password("pw").unwrap()).unwrap(),
        ] {
            prop_assert!(!out.contains(&secret), "leaked in {}", out);
        }
        prop_assert_eq!(parsed.password("pw").unwrap().value(), secret.as_str());
    }
}
