//! [`JsonConverter`]: Connect data <-> JSON, with or without the `{"schema","payload"}` envelope.
//!
//! Encodings follow Java's JsonConverter: BYTES as base64 strings, Decimal as base64 of the
//! unscaled bytes (`decimal.format=BASE64`, default) or as a JSON number (`NUMERIC`), Date/Time
//! as int32 and Timestamp as int64 (their physical forms), maps with string keys as objects
//! and other maps as arrays of `[key, value]` pairs. Schemaless reads give INT64 for every
//! integral number and FLOAT64 for others.
//!
//! NUMERIC decimals are written through `f64` (serde_json without arbitrary precision), so
//! values beyond ~15 significant digits lose precision there; BASE64 is exact.

use std::cell::RefCell;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value as Json};

use super::Converter;
use super::json_schema::{as_connect_schema_with, as_json_schema_with};
use super::json_value::{
    DecimalFormat, JacksonFormatter, JsonOptions, to_connect, to_json, to_vec_as_jackson,
};
use crate::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance, TypedValue, Width, validators,
};
use crate::data::logical::decimal_scale;
use crate::data::{Schema, SchemaAndValue, SchemaType, Struct, Value};
use crate::error::{ConnectError, Result};

pub const SCHEMAS_ENABLE_CONFIG: &str = "schemas.enable";
pub const SCHEMAS_CACHE_SIZE_CONFIG: &str = "schemas.cache.size";
/// KIP-1054 (Apache 4.2+): the schema of every payload read, which then carries no envelope.
pub const SCHEMA_CONTENT_CONFIG: &str = "schema.content";
pub const DECIMAL_FORMAT_CONFIG: &str = "decimal.format";
pub const REPLACE_NULL_WITH_DEFAULT_CONFIG: &str = "replace.null.with.default";

/// Java's `org.apache.kafka.connect.json.JsonConverter`.
#[derive(Debug, Clone)]
pub struct JsonConverter {
    schemas_enable: bool,
    /// `schema.content`: with `schemas.enable`, every value read is a bare payload of this
    /// schema (Apache's `JsonConverter.toConnectData`); writing is unchanged.
    schema_content: Option<Schema>,
    opts: JsonOptions,
    /// The schemas written last, with their JSON bytes (Apache's `fromConnectSchemaCache`):
    /// a source's records share a few schemas, and writing the schema part of the envelope
    /// again for every record was most of the converter's work.
    written_schemas: WrittenSchemas,
}

impl Default for JsonConverter {
    fn default() -> Self {
        Self {
            schemas_enable: true,
            schema_content: None,
            opts: JsonOptions::default(),
            written_schemas: WrittenSchemas::default(),
        }
    }
}

/// Schemas most recently written, newest first, with their JSON bytes; a schema is found by
/// identity first (records of one source share one schema value), then by equality.
#[derive(Debug, Default)]
struct WrittenSchemas(std::sync::Mutex<Vec<(Schema, std::sync::Arc<[u8]>)>>);

/// Enough for the schemas a task writes at once (a key and a value schema per table of a CDC
/// source, say); past it, the least recently written is forgotten.
const WRITTEN_SCHEMAS_MAX: usize = 16;

impl Clone for WrittenSchemas {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl WrittenSchemas {
    fn get_or_write(
        &self,
        schema: &Schema,
        write: impl FnOnce() -> Result<Vec<u8>>,
    ) -> Result<std::sync::Arc<[u8]>> {
        let mut cached = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let hit = cached
            .iter()
            .position(|(s, _)| s.ptr_eq(schema))
            .or_else(|| cached.iter().position(|(s, _)| s == schema));
        if let Some(i) = hit {
            if i > 0 {
                let entry = cached.remove(i);
                cached.insert(0, entry);
            }
            return Ok(cached[0].1.clone());
        }
        let bytes: std::sync::Arc<[u8]> = write()?.into();
        cached.insert(0, (schema.clone(), bytes.clone()));
        cached.truncate(WRITTEN_SCHEMAS_MAX);
        Ok(bytes)
    }
}

/// `schema.content` as Apache's `JsonConverter.configure` reads it: JSON text, then a Connect
/// schema in JsonConverter's schema form; an empty value is no schema. The errors are
/// Apache's `DataException` messages.
pub fn parse_schema_content(text: &str) -> Result<Option<Schema>> {
    parse_schema_content_with(text, &JsonOptions::default())
}

fn parse_schema_content_with(text: &str, opts: &JsonOptions) -> Result<Option<Schema>> {
    if text.is_empty() {
        return Ok(None);
    }
    let json: Json = serde_json::from_str(text).map_err(|e| {
        ConnectError::data(format!(
            "Failed to parse schema in converter config due to serialization error: {e}"
        ))
    })?;
    as_connect_schema_with(&json, opts)
}

impl JsonConverter {
    /// A converter with `schemas.enable` set (other options default).
    pub fn new(schemas_enable: bool) -> Self {
        Self {
            schemas_enable,
            ..Self::default()
        }
    }

    pub fn with_decimal_format(mut self, format: DecimalFormat) -> Self {
        self.opts.decimal_format = format;
        self
    }

    pub fn json_config_def() -> ConfigDef {
        ConfigDef::new()
            .define(
                ConfigKey::new(SCHEMAS_ENABLE_CONFIG, ConfigType::Boolean, Importance::High, "Include schemas within each of the serialized values and keys.")
                    .default_value(true)
                    .group("Schemas", 0)
                    .width(Width::Medium)
                    .display_name("Enable Schemas"),
            )
            .define(
                ConfigKey::new(SCHEMAS_CACHE_SIZE_CONFIG, ConfigType::Int, Importance::High, "The maximum number of schemas that can be cached in this converter instance.")
                    .default_value(1000)
                    .group("Schemas", 1)
                    .width(Width::Medium)
                    .display_name("Schema Cache Size"),
            )
            .define(
                ConfigKey::new(SCHEMA_CONTENT_CONFIG, ConfigType::String, Importance::High, "When set, this is used as the schema for all messages, and the schemas within each of the message will be ignored.Otherwise, the schema will be included in the content of each message. This configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.")
                    .default_null()
                    // Apache's definition has no validator (a bad schema fails the task when
                    // its converter is configured); here it is an error on the key at
                    // validation and create, with the message the task would fail with.
                    .validator(validators::null_or(validators::lambda(
                        "a Connect schema in JsonConverter's JSON form",
                        |name, value| {
                            let text = value.and_then(TypedValue::as_str).unwrap_or_default();
                            parse_schema_content(text).map(|_| ()).map_err(|e| {
                                ConnectError::invalid_value(name, text, &e.to_string())
                            })
                        },
                    )))
                    .group("Schemas", 2)
                    .width(Width::Medium)
                    .display_name("Schema Content"),
            )
            .define(
                ConfigKey::new(DECIMAL_FORMAT_CONFIG, ConfigType::String, Importance::Low, "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'")
                    .default_value("BASE64")
                    .validator(validators::one_of_case_insensitive(&["BASE64", "NUMERIC"]))
                    .group("Serialization", 0)
                    .width(Width::Medium)
                    .display_name("Decimal Format"),
            )
            .define(
                ConfigKey::new(REPLACE_NULL_WITH_DEFAULT_CONFIG, ConfigType::Boolean, Importance::Low, "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.")
                    .default_value(true)
                    .group("Serialization", 1)
                    .width(Width::Medium)
                    .display_name("Replace null with default"),
            )
    }

    /// Connect data -> JSON value (envelope per `schemas.enable`).
    pub fn to_json_value(&self, schema: Option<&Schema>, value: &Value) -> Result<Json> {
        let payload = to_json(schema, value, &self.opts)?;
        if !self.schemas_enable {
            return Ok(payload);
        }
        let schema_json = match schema {
            Some(s) => as_json_schema_with(s, &self.opts)?,
            None => Json::Null,
        };
        let mut env = Map::with_capacity(2);
        env.insert("schema".into(), schema_json);
        env.insert("payload".into(), payload);
        Ok(Json::Object(env))
    }

    /// JSON value -> Connect data (expects the envelope iff `schemas.enable` and no
    /// `schema.content`).
    pub fn from_json_value(&self, json: &Json) -> Result<SchemaAndValue> {
        if self.schemas_enable
            && let Some(schema) = &self.schema_content
        {
            let value = to_connect(Some(schema), json, &self.opts)?;
            return Ok(SchemaAndValue::new(Some(schema.clone()), value));
        }
        let (schema_json, payload) = if self.schemas_enable {
            match json {
                Json::Object(m)
                    if m.len() == 2 && m.contains_key("schema") && m.contains_key("payload") =>
                {
                    (&m["schema"], &m["payload"])
                }
                _ => {
                    return Err(ConnectError::data(
                        "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.",
                    ));
                }
            }
        } else {
            (&Json::Null, json)
        };
        let schema = as_connect_schema_with(schema_json, &self.opts)?;
        let value = to_connect(schema.as_ref(), payload, &self.opts)?;
        Ok(SchemaAndValue::new(schema, value))
    }

    /// The envelope's `payload` alone -> Connect data, for a schema already read (what
    /// [`Self::from_json_value`] does after reading the envelope's `schema`): lets a reader of
    /// many records of one schema read the schema once.
    pub fn payload_to_connect(&self, schema: Option<&Schema>, payload: &Json) -> Result<Value> {
        to_connect(schema, payload, &self.opts)
    }
}

impl Converter for JsonConverter {
    fn configure(&mut self, config: &ConfigMap, _is_key: bool) -> Result<()> {
        let parsed = Self::json_config_def().parse(config)?;
        self.schemas_enable = parsed.boolean(SCHEMAS_ENABLE_CONFIG).unwrap_or(true);
        self.opts.replace_null_with_default = parsed
            .boolean(REPLACE_NULL_WITH_DEFAULT_CONFIG)
            .unwrap_or(true);
        self.opts.decimal_format = match parsed.get(DECIMAL_FORMAT_CONFIG) {
            Some(TypedValue::String(s)) if s.eq_ignore_ascii_case("numeric") => {
                DecimalFormat::Numeric
            }
            _ => DecimalFormat::Base64,
        };
        self.schema_content = match parsed.get(SCHEMA_CONTENT_CONFIG) {
            Some(TypedValue::String(text)) => parse_schema_content_with(text, &self.opts)?,
            _ => None,
        };
        Ok(())
    }

    fn from_connect_data(
        &self,
        _topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        if schema.is_none() && value.is_null() {
            return Ok(None);
        }
        let failed = RefCell::new(None);
        let payload = Payload {
            schema,
            value,
            opts: &self.opts,
            failed: &failed,
        };
        let written = if self.schemas_enable {
            let schema_bytes = match schema {
                Some(s) => self.written_schemas.get_or_write(s, || {
                    to_vec_as_jackson(&as_json_schema_with(s, &self.opts)?).map_err(|e| {
                        ConnectError::data(
                            "Converting Kafka Connect data to byte[] failed due to serialization error: ",
                        )
                        .with_source(e)
                    })
                })?,
                None => std::sync::Arc::from(&b"null"[..]),
            };
            let mut out = Vec::with_capacity(schema_bytes.len() + 128);
            out.extend_from_slice(b"{\"schema\":");
            out.extend_from_slice(&schema_bytes);
            out.extend_from_slice(b",\"payload\":");
            payload
                .serialize(&mut serde_json::Serializer::with_formatter(
                    &mut out,
                    JacksonFormatter,
                ))
                .map(|()| {
                    out.push(b'}');
                    out
                })
        } else {
            to_vec_as_jackson(&payload)
        };
        if let Some(e) = failed.into_inner() {
            return Err(e);
        }
        written.map(Some).map_err(|e| {
            ConnectError::data(
                "Converting Kafka Connect data to byte[] failed due to serialization error: ",
            )
            .with_source(e)
        })
    }

    fn to_connect_data(&self, _topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let Some(bytes) = bytes.filter(|b| !b.is_empty()) else {
            return Ok(SchemaAndValue::NULL);
        };
        let json: Json = serde_json::from_slice(bytes).map_err(|e| {
            ConnectError::data(format!(
                "Converting byte[] to Kafka Connect data failed due to serialization error: {e}"
            ))
        })?;
        self.from_json_value(&json)
    }

    fn config_def(&self) -> ConfigDef {
        Self::json_config_def()
    }
}

/// Connect data written as [`to_json`] would build it, without building the JSON tree for the
/// common shapes (primitives and structs, the hot path of every source record); every other
/// shape (nulls, decimals, bytes, arrays, maps) is built by [`to_json`] and written. A
/// conversion error is kept in `failed` (serde's errors are strings).
struct Payload<'a> {
    schema: Option<&'a Schema>,
    value: &'a Value,
    opts: &'a JsonOptions,
    failed: &'a RefCell<Option<ConnectError>>,
}

impl Payload<'_> {
    fn fail<E: serde::ser::Error>(&self, e: ConnectError) -> E {
        let message = e.to_string();
        *self.failed.borrow_mut() = Some(e);
        E::custom(message)
    }

    fn write_struct<S: Serializer>(
        &self,
        st: &Struct,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let fields = st.schema().fields();
        let mut m = s.serialize_map(Some(fields.len()))?;
        for (f, v) in fields.iter().zip(st.values()) {
            m.serialize_entry(
                &f.name,
                &Payload {
                    schema: Some(&f.schema),
                    value: v,
                    opts: self.opts,
                    failed: self.failed,
                },
            )?;
        }
        m.end()
    }
}

impl Serialize for Payload<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use SchemaType as T;
        let primitive_or_struct = match self.schema {
            None => true,
            Some(schema) => decimal_scale(schema).is_none(),
        };
        if primitive_or_struct {
            let typed = |t: T| self.schema.is_none_or(|schema| schema.schema_type() == t);
            match self.value {
                Value::Int8(v) if typed(T::Int8) => return s.serialize_i8(*v),
                Value::Int16(v) if typed(T::Int16) => return s.serialize_i16(*v),
                Value::Int32(v) if typed(T::Int32) => return s.serialize_i32(*v),
                Value::Int64(v) if typed(T::Int64) => return s.serialize_i64(*v),
                Value::Float64(v) if typed(T::Float64) && v.is_finite() => {
                    return s.serialize_f64(*v);
                }
                Value::Boolean(v) if typed(T::Boolean) => return s.serialize_bool(*v),
                Value::String(v) if typed(T::String) => return s.serialize_str(v),
                Value::Struct(st) if typed(T::Struct) => {
                    if let Some(schema) = self.schema
                        && st.schema() != schema
                    {
                        return Err(self.fail(ConnectError::data("Mismatching schema.")));
                    }
                    return self.write_struct(st, s);
                }
                _ => {}
            }
        }
        match to_json(self.schema, self.value, self.opts) {
            Ok(json) => json.serialize(s),
            Err(e) => Err(self.fail(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::SchemaBuilder;
    use crate::data::logical;

    /// The bytes written directly are the bytes of the JSON tree `to_json_value` builds, for
    /// every shape, with and without the envelope; and the errors are the same.
    #[test]
    fn doubles_and_escapes_are_laid_out_as_jackson_writes_them() {
        for (v, java) in [
            (1e20, "1.0E20"),
            (-1e-300, "-1.0E-300"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.000_123_4, "1.234E-4"),
            (1e7, "1.0E7"),
            (9_999_999.5, "9999999.5"),
            (123.456, "123.456"),
            (-0.0, "-0.0"),
            (2.5, "2.5"),
            (1.7976931348623157e308, "1.7976931348623157E308"),
            (4.9e-324, "4.9E-324"),
        ] {
            assert_eq!(super::super::json_value::java_double(v), java, "{v}");
        }
        let text = to_vec_as_jackson(&serde_json::json!({"s": "a\u{1b}b\n", "f": 1e20})).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"{"s":"a\u001Bb\n","f":1.0E20}"#
        );
    }

    #[test]
    fn nan_and_infinities_are_written_as_jacksons_strings() {
        let c = JsonConverter::new(false);
        for (schema, value, java) in [
            (Schema::float64(), Value::Float64(f64::NAN), "\"NaN\""),
            (
                Schema::float64(),
                Value::Float64(f64::INFINITY),
                "\"Infinity\"",
            ),
            (
                Schema::float32(),
                Value::Float32(f32::NEG_INFINITY),
                "\"-Infinity\"",
            ),
            (Schema::float32(), Value::Float32(f32::NAN), "\"NaN\""),
        ] {
            let out = c
                .from_connect_data("t", Some(&schema), &value)
                .unwrap()
                .unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), java);
        }
    }

    #[test]
    fn nan_and_infinities_read_back_from_jacksons_strings() {
        let opts = JsonOptions::default();
        let read = |schema: &Schema, text: &str| {
            to_connect(Some(schema), &serde_json::from_str(text).unwrap(), &opts)
        };
        assert!(matches!(read(&Schema::float32(), "\"NaN\""), Ok(Value::Float32(f)) if f.is_nan()));
        assert_eq!(
            read(&Schema::float64(), "\"-Infinity\"").unwrap(),
            Value::Float64(f64::NEG_INFINITY)
        );
        assert_eq!(
            read(&Schema::float64(), "\"Infinity\"").unwrap(),
            Value::Float64(f64::INFINITY)
        );
        assert!(read(&Schema::float64(), "\"nan\"").is_err());
    }

    #[test]
    fn a_float_is_written_as_javas_float_node_writes_it() {
        let c = JsonConverter::new(false);
        for (v, java) in [
            (3.14f32, "3.14"),
            (0.1, "0.1"),
            (-2.5e-5, "-2.5e-5"),
            (1.0, "1.0"),
        ] {
            let out = c
                .from_connect_data("t", Some(&Schema::float32()), &Value::Float32(v))
                .unwrap()
                .unwrap();
            let out = String::from_utf8(out).unwrap();
            // Java prints -2.5E-5; the number is the same.
            assert_eq!(
                out.parse::<f64>().unwrap(),
                java.parse::<f64>().unwrap(),
                "{v}: {out}"
            );
        }
    }

    #[test]
    fn direct_writing_matches_the_json_tree() {
        let inner = SchemaBuilder::struct_()
            .field("s", Schema::optional_string())
            .field("f", Schema::float64())
            .build();
        let dec = logical::decimal_builder(2).build();
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int8())
            .field("b", Schema::int16())
            .field("c", Schema::int32())
            .field("d", Schema::int64())
            .field("e", Schema::boolean())
            .field("n", inner.clone())
            .field(
                "m",
                SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
            )
            .field("x", Schema::bytes())
            .field("dec", dec.clone())
            .field("o", Schema::optional_int64())
            .build();
        let mut n = Struct::new(inner.clone());
        n.put("s", Value::String("q\"uote\u{1}é".into())).unwrap();
        n.put("f", Value::Float64(1.5e-7)).unwrap();
        let mut st = Struct::new(schema.clone());
        st.put("a", Value::Int8(-8)).unwrap();
        st.put("b", Value::Int16(16)).unwrap();
        st.put("c", Value::Int32(i32::MIN)).unwrap();
        st.put("d", Value::Int64(i64::MAX)).unwrap();
        st.put("e", Value::Boolean(true)).unwrap();
        st.put("n", Value::Struct(n)).unwrap();
        st.put(
            "m",
            Value::Map(vec![
                (Value::String("k".into()), Value::Int32(1)),
                (Value::String("k".into()), Value::Int32(2)),
            ]),
        )
        .unwrap();
        st.put("x", Value::Bytes(vec![0, 1, 2])).unwrap();
        st.put("dec", Value::Bytes(vec![1, 0])).unwrap();
        let cases: Vec<(Option<Schema>, Value)> = vec![
            (Some(schema.clone()), Value::Struct(st)),
            (None, Value::Int64(42)),
            (Some(Schema::int64()), Value::Int64(42)),
            (Some(Schema::string()), Value::String("s".into())),
            (Some(Schema::optional_string()), Value::Null),
            (Some(Schema::float64()), Value::Float64(f64::NAN)),
            (Some(Schema::float32()), Value::Float32(0.1)),
            (Some(Schema::int32()), Value::String("wrong".into())),
            (Some(Schema::int32()), Value::Null),
            (Some(dec), Value::Bytes(vec![7])),
            (Some(inner), Value::Struct(Struct::new(schema.clone()))),
            (
                None,
                Value::Map(vec![(Value::String("a".into()), Value::Boolean(false))]),
            ),
            (None, Value::Array(vec![Value::Int32(1), Value::Null])),
        ];
        for schemas_enable in [false, true] {
            for format in [DecimalFormat::Base64, DecimalFormat::Numeric] {
                let c = JsonConverter {
                    schemas_enable,
                    schema_content: None,
                    opts: JsonOptions {
                        decimal_format: format,
                        replace_null_with_default: true,
                    },
                    written_schemas: WrittenSchemas::default(),
                };
                for (schema, value) in &cases {
                    let direct = c.from_connect_data("t", schema.as_ref(), value);
                    let tree = if schema.is_none() && value.is_null() {
                        Ok(None)
                    } else {
                        c.to_json_value(schema.as_ref(), value)
                            .map(|j| Some(to_vec_as_jackson(&j).unwrap()))
                    };
                    match (direct, tree) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{schema:?} {value:?}"),
                        (Err(a), Err(b)) => {
                            assert_eq!(a.to_string(), b.to_string(), "{schema:?} {value:?}")
                        }
                        (a, b) => panic!("{schema:?} {value:?}: {a:?} vs {b:?}"),
                    }
                }
            }
        }
    }

    fn configured(pairs: &[(&str, &str)]) -> Result<JsonConverter> {
        let mut c = JsonConverter::default();
        let config: ConfigMap = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        c.configure(&config, false)?;
        Ok(c)
    }

    /// The schema part of the envelope is written once per schema: an equal schema built
    /// anew finds it, a different one (more than the cache holds, too) is written itself.
    #[test]
    fn written_schemas_are_reused_and_never_confused() {
        let c = JsonConverter::new(true);
        let numbered = |i: usize| {
            SchemaBuilder::struct_()
                .name(format!("r{i}"))
                .field("id", Schema::int32())
                .build()
        };
        let record = |i: usize| {
            let schema = numbered(i);
            let mut st = Struct::new(schema.clone());
            st.put("id", Value::Int32(i as i32)).unwrap();
            let value = Value::Struct(st);
            (schema, value)
        };
        for round in 0..2 {
            for i in 0..WRITTEN_SCHEMAS_MAX + 3 {
                let (schema, value) = record(i);
                let bytes = c
                    .from_connect_data("t", Some(&schema), &value)
                    .unwrap()
                    .unwrap();
                let expected = format!(
                    r#"{{"schema":{{"type":"struct","fields":[{{"type":"int32","optional":false,"field":"id"}}],"optional":false,"name":"r{i}"}},"payload":{{"id":{i}}}}}"#
                );
                assert_eq!(String::from_utf8(bytes).unwrap(), expected, "round {round}");
            }
        }
        let cached = c.written_schemas.0.lock().unwrap();
        assert_eq!(cached.len(), WRITTEN_SCHEMAS_MAX);
        assert!(
            cached[0].0 == numbered(WRITTEN_SCHEMAS_MAX + 2),
            "newest first"
        );
    }

    /// KIP-1054, as Apache 4.4's `JsonConverter.toConnectData`: with `schemas.enable`, the
    /// whole value is a payload of `schema.content`'s schema; without, it is ignored.
    #[test]
    fn schema_content_reads_bare_payloads() {
        let schema = r#"{"type":"struct","fields":[{"field":"id","type":"int32"},{"field":"region","type":"string","optional":true,"default":"eu"}]}"#;
        let c = configured(&[(SCHEMA_CONTENT_CONFIG, schema)]).unwrap();
        let got = c.to_connect_data("t", Some(br#"{"id": 7}"#)).unwrap();
        let s = got.schema.clone().unwrap();
        assert_eq!(s.schema_type(), SchemaType::Struct);
        let Value::Struct(st) = &got.value else {
            panic!("{got:?}")
        };
        assert_eq!(st.get("id"), Some(&Value::Int32(7)));
        assert_eq!(st.get("region"), Some(&Value::String("eu".into())));
        // An envelope is a payload like any other: here not a struct of this schema.
        let e = c
            .to_connect_data("t", Some(br#"{"schema": null, "payload": 1}"#))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("Invalid null value for required INT32 field"),
            "{e}"
        );
        // Writing keeps the envelope.
        let bytes = c
            .from_connect_data("t", Some(&s), &got.value)
            .unwrap()
            .unwrap();
        assert!(bytes.starts_with(br#"{"schema":{"type":"struct""#));
        // Null stays null.
        assert_eq!(c.to_connect_data("t", None).unwrap(), SchemaAndValue::NULL);
        // schemas.enable=false: schemaless, the schema is not used.
        let c = configured(&[
            (SCHEMA_CONTENT_CONFIG, schema),
            (SCHEMAS_ENABLE_CONFIG, "false"),
        ])
        .unwrap();
        assert_eq!(
            c.to_connect_data("t", Some(b"7")).unwrap().value,
            Value::Int64(7)
        );
        // Empty: no schema, the envelope is expected.
        let c = configured(&[(SCHEMA_CONTENT_CONFIG, "")]).unwrap();
        assert!(c.to_connect_data("t", Some(b"7")).is_err());
    }

    #[test]
    fn an_invalid_schema_content_is_refused_with_apaches_messages() {
        let e = configured(&[(SCHEMA_CONTENT_CONFIG, "{not json")]).unwrap_err();
        assert!(
            e.to_string().starts_with("Invalid value {not json for configuration schema.content: Failed to parse schema in converter config due to serialization error: "),
            "{e}"
        );
        let e = configured(&[(SCHEMA_CONTENT_CONFIG, r#"{"type":"nope"}"#)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"Invalid value {"type":"nope"} for configuration schema.content: Unknown schema type: nope"#
        );
        let values = JsonConverter::json_config_def().validate(&ConfigMap::from([(
            SCHEMA_CONTENT_CONFIG.to_owned(),
            r#"{"type":"array"}"#.to_owned(),
        )]));
        let v = values
            .iter()
            .find(|v| v.name == SCHEMA_CONTENT_CONFIG)
            .unwrap();
        assert_eq!(
            v.errors,
            vec![r#"Invalid value {"type":"array"} for configuration schema.content: Array schema did not specify the element type"#.to_owned()]
        );
    }
}
