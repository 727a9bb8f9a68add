//! Confluent's `JsonSchemaData`: Connect schemas and values to JSON Schema documents and JSON,
//! and back.
//!
//! # Connect to JSON Schema
//!
//! | Connect | JSON Schema |
//! |---|---|
//! | INT8/16/32/64 | `{"type":"integer","connect.type":"int8"}` (`int16`, `int32`, `int64`) |
//! | FLOAT32/64 | `{"type":"number","connect.type":"float32"}` (`float64`) |
//! | BOOLEAN, STRING | `{"type":"boolean"}`, `{"type":"string"}` |
//! | BYTES | `{"type":"string","connect.type":"bytes"}`: base64 text |
//! | Decimal | BYTES named `org.apache.kafka.connect.data.Decimal`: base64 of the unscaled bytes, or with `decimal.format=NUMERIC` `{"type":"number",..}` and a JSON number |
//! | Date, Time, Timestamp | their INT32/INT64 with the logical name as `title` |
//! | ARRAY | `{"type":"array","items":..}` |
//! | MAP, STRING keys | `{"type":"object","connect.type":"map","additionalProperties":..}` |
//! | MAP, other keys | `{"type":"array","connect.type":"map","items":{"type":"object","properties":{"key":..,"value":..}}}`: an array of `{"key":..,"value":..}` |
//! | STRUCT | `{"type":"object","properties":..}`, each property with its `connect.index` |
//! | optional | `{"oneOf":[{"type":"null"},..]}` (the field's `connect.index` on the `oneOf`) |
//! | STRING with `io.confluent.connect.json.Enum` parameters | `{"enum":[..]}` |
//! | STRUCT named `io.confluent.connect.json.OneOf` | `{"oneOf":[..]}` of its fields |
//!
//! The name is the `title`, the doc the `description`, the version `connect.version`, the
//! parameters (but those under `io.confluent.connect.json`) `connect.parameters`, the default
//! `default`; `object.additional.properties=false` adds `"additionalProperties":false` to
//! structs. Values are written as Jackson writes the nodes Java builds: INT8 and INT16 as
//! integers, FLOAT32 by `Float.toString`, FLOAT64 by `Double.toString`, NUMERIC decimals by
//! `BigDecimal.toString` (`1.20E+4`); a null field of a required schema without default is left
//! out of its object (as Java does).
//!
//! # JSON Schema to Connect
//!
//! The other way round, as Java: `connect.type` picks the Connect type (without it `integer` is
//! INT64 and `number` FLOAT64), `title` gives the name, `connect.version` (else the registry's
//! version) the version; a `oneOf`/`anyOf` of `null` and one schema is that schema, optional;
//! other `oneOf`/`anyOf` a union STRUCT; `allOf` the struct of all the properties of its parts;
//! `enum` and `const` a STRING with enum parameters; properties are ordered by `connect.index`
//! (properties without one take the next free place in Java's `HashMap` order of their names).
//! `{}` and `true` (Confluent's Variant type) and recursive schemas are refused.

use std::collections::{BTreeMap, HashMap, HashSet};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use connect_api::data::logical::{self, DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME};
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{ConnectError, Result, Schema, Struct, Value};

use super::json::{self, BigDec, Node, java_hash_map_order, node_type};
use super::schema::{Criterion, JsonSchema, Kind};

pub const NAMESPACE: &str = "io.confluent.connect.json";
pub const CONNECT_TYPE_PROP: &str = "connect.type";
pub const CONNECT_VERSION_PROP: &str = "connect.version";
pub const CONNECT_PARAMETERS_PROP: &str = "connect.parameters";
pub const CONNECT_INDEX_PROP: &str = "connect.index";
pub const KEY_FIELD: &str = "key";
pub const VALUE_FIELD: &str = "value";
pub const JSON_ID_PROP: &str = "io.confluent.connect.json.Id";
pub const JSON_TYPE_ENUM: &str = "io.confluent.connect.json.Enum";
pub const JSON_TYPE_ONE_OF: &str = "io.confluent.connect.json.OneOf";
pub const GENERALIZED_TYPE_UNION: &str = "org.apache.kafka.connect.data.Union";
pub const GENERALIZED_TYPE_ENUM: &str = "org.apache.kafka.connect.data.Enum";
pub const GENERALIZED_TYPE_UNION_PREFIX: &str = "connect_union_";
pub const GENERALIZED_TYPE_UNION_FIELD_PREFIX: &str = "connect_union_field_";
pub const NULL_MARKER: &str = "<NULL>";
pub const DEFAULT_ID_PREFIX: &str = "#id";
/// Confluent's `ConnectVariant`: any JSON value, which this worker does not convert.
pub const VARIANT_NAME: &str = "org.apache.kafka.connect.data.Variant";

/// `decimal.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecimalFormat {
    #[default]
    Base64,
    Numeric,
}

/// `JsonSchemaDataConfig`'s keys that this port implements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonSchemaDataConfig {
    /// `object.additional.properties` (true): false writes `"additionalProperties":false`.
    pub allow_additional_properties: bool,
    /// `use.optional.for.nonrequired` (false): properties not `required` read as optional.
    pub use_optional_for_non_required: bool,
    /// `decimal.format` (BASE64).
    pub decimal_format: DecimalFormat,
    /// `flatten.singleton.unions` (true): a `oneOf`/`anyOf`/`allOf` of one schema is it.
    pub flatten_singleton_unions: bool,
    /// `generalized.sum.type.support` (false): unions and enums under the names Connect's
    /// other formats share (`connect_union_N`, `org.apache.kafka.connect.data.Enum`).
    pub generalized_sum_type_support: bool,
    /// `ignore.default.for.nullables` (false): a null value is written as null, not as the
    /// schema's default.
    pub ignore_default_for_nullables: bool,
}

impl Default for JsonSchemaDataConfig {
    fn default() -> Self {
        JsonSchemaDataConfig {
            allow_additional_properties: true,
            use_optional_for_non_required: false,
            decimal_format: DecimalFormat::Base64,
            flatten_singleton_unions: true,
            generalized_sum_type_support: false,
            ignore_default_for_nullables: false,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct JsonSchemaData {
    config: JsonSchemaDataConfig,
}

fn data_err(message: impl Into<String>) -> ConnectError {
    ConnectError::data(message)
}

/// The Java class of a Connect value, as Java's `ClassCastException`-born messages name it.
fn java_class(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Int8(_) => "class java.lang.Byte",
        Value::Int16(_) => "class java.lang.Short",
        Value::Int32(_) => "class java.lang.Integer",
        Value::Int64(_) => "class java.lang.Long",
        Value::Float32(_) => "class java.lang.Float",
        Value::Float64(_) => "class java.lang.Double",
        Value::Boolean(_) => "class java.lang.Boolean",
        Value::String(_) => "class java.lang.String",
        Value::Bytes(_) => "class [B",
        Value::Array(_) => "class java.util.ArrayList",
        Value::Map(_) => "class java.util.HashMap",
        Value::Struct(_) => "class org.apache.kafka.connect.data.Struct",
    }
}

fn is_union(schema: &Schema) -> bool {
    schema.name() == Some(JSON_TYPE_ONE_OF)
        || schema.parameters().contains_key(GENERALIZED_TYPE_UNION)
}

/// `schema`, required (Java's `nonOptional`).
fn non_optional(schema: &Schema) -> Schema {
    if !schema.is_optional() {
        return schema.clone();
    }
    rebuilt(schema, false, None)
}

/// `schema` with its optionality set and a parameter added.
fn rebuilt(schema: &Schema, optional: bool, parameter: Option<(&str, &str)>) -> Schema {
    let mut b = match schema.schema_type() {
        SchemaType::Array => SchemaBuilder::array(
            schema
                .value_schema()
                .cloned()
                .unwrap_or_else(Schema::string),
        ),
        SchemaType::Map => SchemaBuilder::map(
            schema.key_schema().cloned().unwrap_or_else(Schema::string),
            schema
                .value_schema()
                .cloned()
                .unwrap_or_else(Schema::string),
        ),
        t => SchemaBuilder::new(t),
    };
    for f in schema.fields() {
        b = b.field(f.name.clone(), f.schema.clone());
    }
    if let Some(n) = schema.name() {
        b = b.name(n);
    }
    if let Some(v) = schema.version() {
        b = b.version(v);
    }
    if let Some(d) = schema.doc() {
        b = b.doc(d);
    }
    for (k, v) in schema.parameters() {
        b = b.parameter(k.clone(), v.clone());
    }
    if let Some((k, v)) = parameter {
        b = b.parameter(k, v);
    }
    if let Some(d) = schema.default_value() {
        b = b.default_value(d.clone());
    }
    if optional {
        b = b.optional();
    }
    b.build()
}

/// Whether Java keeps the builder of the struct `schema` makes, for `$ref`s met later: an
/// object that is not a map, an `allOf` with properties.
fn builds_struct(schema: &JsonSchema) -> bool {
    match &schema.kind {
        Kind::Object { .. } => schema.prop(CONNECT_TYPE_PROP).and_then(Node::as_str) != Some("map"),
        Kind::Combined {
            criterion: Criterion::AllOf,
            subschemas,
        } => {
            let (mut properties, mut required) = (Vec::new(), Vec::new());
            for s in subschemas {
                collect_properties(s, &mut properties, &mut required);
            }
            !properties.is_empty()
        }
        _ => false,
    }
}

/// What [`JsonSchemaData::to_connect_schema`] keeps while it goes (Java's `ToConnectContext`).
#[derive(Default)]
struct ToCtx {
    /// Generalized unions named so far.
    unions: usize,
    /// Ids handed out so far.
    ids: usize,
    /// `$ref` target → the struct first built for it.
    built: HashMap<String, Schema>,
    /// `$ref` target → the last id handed out for it.
    last_id: HashMap<String, usize>,
    /// The last ids of a first pass.
    final_ids: Option<HashMap<String, usize>>,
}

/// A number as everit prints it (`org.json`'s `numberToString`: `Float`/`Double`/`BigDecimal`
/// text without trailing fraction zeros) and Jackson reads it back: integers as integers, other
/// numbers as exact decimals.
fn number_text(text: String) -> Node {
    let text = if text.contains('.') && !text.contains(['e', 'E']) {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    };
    if !text.contains(['.', 'e', 'E']) {
        return match text.parse::<i64>() {
            Ok(v) => Node::Int(v),
            Err(_) => Node::BigInt(text),
        };
    }
    Node::Decimal(BigDec::parse(&text).expect("a Java number's text"))
}

/// A value as it stands in the schema text (a `default`): Java's `toJsonSchemaValue` makes
/// `org.json` values of the node (bytes as their base64 text, objects as `JSONObject`s, which
/// keep their keys in a `HashMap`), everit prints them, Jackson reads the print back.
fn schema_text_value(node: Node) -> Result<Node> {
    Ok(match node {
        Node::Binary(b) => Node::Text(BASE64.encode(b)),
        Node::Float(f) if !f.is_finite() => {
            return Err(data_err("JSON does not allow non-finite numbers."));
        }
        Node::Double(d) if !d.is_finite() => {
            return Err(data_err("JSON does not allow non-finite numbers."));
        }
        Node::Float(f) => number_text(json::java_float(f)),
        Node::Double(d) => number_text(crate::avro::schema::java_double(d)),
        Node::Decimal(d) => number_text(d.to_java_string()),
        Node::Array(items) => Node::Array(
            items
                .into_iter()
                .map(schema_text_value)
                .collect::<Result<_>>()?,
        ),
        Node::Object(entries) => {
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            let order = java_hash_map_order(&keys, None);
            let mut slots: Vec<Option<(String, Node)>> = entries.into_iter().map(Some).collect();
            let mut out = Vec::with_capacity(slots.len());
            for i in order {
                let (k, v) = slots[i].take().expect("each entry once");
                out.push((k, schema_text_value(v)?));
            }
            Node::Object(out)
        }
        other => other,
    })
}

/// The order `connect.parameters` are printed in: Java collects them into a `HashMap`, everit
/// wraps that in a `JSONObject` (another `HashMap`, sized for them).
fn parameters_node(params: &[(&str, &str)]) -> Node {
    let keys: Vec<&str> = params.iter().map(|(k, _)| *k).collect();
    let first: Vec<&str> = java_hash_map_order(&keys, None)
        .into_iter()
        .map(|i| keys[i])
        .collect();
    let second = java_hash_map_order(&first, Some(first.len()));
    Node::Object(
        second
            .into_iter()
            .map(|i| {
                let k = first[i];
                let v = params.iter().find(|(pk, _)| *pk == k).map(|(_, v)| *v);
                (k.to_owned(), Node::Text(v.unwrap_or_default().to_owned()))
            })
            .collect(),
    )
}

/// The order unprocessed keywords are printed in: Java puts them in a `HashMap`, everit copies
/// that into one sized for them (at most four here, so this order whatever the JDK).
fn ordered_props(
    index: Option<usize>,
    version: Option<i32>,
    connect_type: Option<&str>,
    parameters: Option<Node>,
) -> Vec<(String, Node)> {
    let mut props = Vec::with_capacity(4);
    if let Some(i) = index {
        props.push((CONNECT_INDEX_PROP.to_owned(), Node::Int(i as i64)));
    }
    if let Some(v) = version {
        props.push((CONNECT_VERSION_PROP.to_owned(), Node::Int(i64::from(v))));
    }
    if let Some(t) = connect_type {
        props.push((CONNECT_TYPE_PROP.to_owned(), Node::Text(t.to_owned())));
    }
    if let Some(p) = parameters {
        props.push((CONNECT_PARAMETERS_PROP.to_owned(), p));
    }
    props
}

/// A union's field name for the `i`th alternative.
fn union_field_name(generalized: bool, name: &str, i: usize) -> String {
    if generalized {
        format!("{GENERALIZED_TYPE_UNION_FIELD_PREFIX}{i}")
    } else {
        format!("{name}.field.{i}")
    }
}

impl JsonSchemaData {
    pub fn new(config: JsonSchemaDataConfig) -> Self {
        JsonSchemaData { config }
    }

    pub fn config(&self) -> &JsonSchemaDataConfig {
        &self.config
    }

    // ----- Connect -> JSON Schema -----

    /// Java's `fromConnectSchema`.
    pub fn from_connect_schema(&self, schema: &Schema) -> Result<JsonSchema> {
        let mut ids = HashSet::new();
        self.raw(&mut ids, schema, None, false)
    }

    fn raw(
        &self,
        ids: &mut HashSet<String>,
        schema: &Schema,
        index: Option<usize>,
        ignore_optional: bool,
    ) -> Result<JsonSchema> {
        use SchemaType as T;
        let id = schema.parameters().get(JSON_ID_PROP).cloned();
        if let Some(id) = &id {
            ids.insert(id.clone());
        }
        let number = |integer: bool| Kind::Number {
            integer,
            requires_number: true,
        };
        let string = || Kind::String {
            requires_string: true,
            format: None,
        };
        let mut connect_type = None;
        let kind = match schema.schema_type() {
            T::Int8 | T::Int16 | T::Int32 | T::Int64 => {
                connect_type = Some(match schema.schema_type() {
                    T::Int8 => "int8",
                    T::Int16 => "int16",
                    T::Int32 => "int32",
                    _ => "int64",
                });
                number(true)
            }
            T::Float32 | T::Float64 => {
                connect_type = Some(if schema.schema_type() == T::Float32 {
                    "float32"
                } else {
                    "float64"
                });
                number(false)
            }
            T::Boolean => Kind::Boolean,
            T::String => {
                let params = schema.parameters();
                if params.contains_key(GENERALIZED_TYPE_ENUM) || params.contains_key(JSON_TYPE_ENUM)
                {
                    let param = if self.config.generalized_sum_type_support {
                        GENERALIZED_TYPE_ENUM
                    } else {
                        JSON_TYPE_ENUM
                    };
                    let prefix = format!("{param}.");
                    Kind::Enum(
                        params
                            .keys()
                            .filter_map(|k| k.strip_prefix(&prefix))
                            .map(|symbol| {
                                if symbol == NULL_MARKER {
                                    Node::Null
                                } else {
                                    Node::Text(symbol.to_owned())
                                }
                            })
                            .collect(),
                    )
                } else {
                    string()
                }
            }
            T::Bytes => {
                connect_type = Some("bytes");
                if schema.name() == Some(DECIMAL_NAME)
                    && self.config.decimal_format == DecimalFormat::Numeric
                {
                    number(false)
                } else {
                    string()
                }
            }
            T::Array => {
                let items = schema
                    .value_schema()
                    .ok_or_else(|| data_err("Array schema has no item schema"))?;
                let items = match items.parameters().get(JSON_ID_PROP) {
                    Some(r) if ids.contains(r) => JsonSchema::new(Kind::Ref(r.clone())),
                    _ => self.raw(ids, items, None, false)?,
                };
                Kind::Array {
                    requires_array: true,
                    items: Some(Box::new(items)),
                    tuple: false,
                }
            }
            T::Map => {
                let (ks, vs) = schema
                    .key_schema()
                    .zip(schema.value_schema())
                    .ok_or_else(|| data_err("Map schema has no key or value schema"))?;
                connect_type = Some("map");
                if ks.schema_type() == T::String && !ks.is_optional() {
                    Kind::Object {
                        requires_object: true,
                        properties: Vec::new(),
                        required: Vec::new(),
                        additional_properties: true,
                        additional_schema: Some(Box::new(self.raw(ids, vs, None, false)?)),
                    }
                } else {
                    let entry = Kind::Object {
                        requires_object: true,
                        properties: vec![
                            (KEY_FIELD.to_owned(), self.raw(ids, ks, Some(0), false)?),
                            (VALUE_FIELD.to_owned(), self.raw(ids, vs, Some(1), false)?),
                        ],
                        required: Vec::new(),
                        additional_properties: true,
                        additional_schema: None,
                    };
                    Kind::Array {
                        requires_array: true,
                        items: Some(Box::new(JsonSchema::new(entry))),
                        tuple: false,
                    }
                }
            }
            T::Struct => {
                if schema.name() == Some(VARIANT_NAME) {
                    return Err(data_err(format!(
                        "{VARIANT_NAME} (any JSON value) is not supported by this worker's JsonSchemaConverter"
                    )));
                }
                if is_union(schema) {
                    let mut subschemas = Vec::with_capacity(schema.fields().len() + 1);
                    if schema.is_optional() {
                        subschemas.push(JsonSchema::null());
                    }
                    for f in schema.fields() {
                        subschemas.push(self.raw(
                            ids,
                            &non_optional(&f.schema),
                            Some(f.index),
                            true,
                        )?);
                    }
                    Kind::Combined {
                        criterion: Criterion::OneOf,
                        subschemas,
                    }
                } else if schema.is_optional() {
                    Kind::Combined {
                        criterion: Criterion::OneOf,
                        subschemas: vec![
                            JsonSchema::null(),
                            self.raw(ids, &non_optional(schema), None, false)?,
                        ],
                    }
                } else {
                    let mut properties = Vec::with_capacity(schema.fields().len());
                    for f in schema.fields() {
                        let s = match f.schema.parameters().get(JSON_ID_PROP) {
                            Some(r) if ids.contains(r) => JsonSchema::new(Kind::Ref(r.clone())),
                            _ => self.raw(ids, &f.schema, Some(f.index), false)?,
                        };
                        properties.push((f.name.clone(), s));
                    }
                    Kind::Object {
                        requires_object: true,
                        properties,
                        required: Vec::new(),
                        additional_properties: self.config.allow_additional_properties,
                        additional_schema: None,
                    }
                }
            }
        };
        let mut js = JsonSchema::new(kind);
        if matches!(js.kind, Kind::Combined { .. }) {
            js.id = id;
            js.unprocessed = ordered_props(index, None, None, None);
            return Ok(js);
        }
        js.title = schema.name().map(str::to_owned);
        js.description = schema.doc().map(str::to_owned);
        let params: Vec<(&str, &str)> = schema
            .parameters()
            .iter()
            .filter(|(k, _)| !k.starts_with(NAMESPACE))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let params = (!params.is_empty()).then(|| parameters_node(&params));
        if let Some(default) = schema.default_value() {
            let node = self
                .from_connect_data(schema, default)?
                .unwrap_or(Node::Null);
            js.default = Some(schema_text_value(node)?);
        }
        if !ignore_optional && schema.is_optional() {
            js.unprocessed = ordered_props(None, schema.version(), connect_type, params);
            let mut wrapper = JsonSchema::new(Kind::Combined {
                criterion: Criterion::OneOf,
                subschemas: vec![JsonSchema::null(), js],
            });
            wrapper.id = id;
            wrapper.unprocessed = ordered_props(index, None, None, None);
            return Ok(wrapper);
        }
        js.id = id;
        js.unprocessed = ordered_props(index, schema.version(), connect_type, params);
        Ok(js)
    }

    /// Java's `fromConnectData`: the JSON of a Connect value (`None`: Java's null, which a
    /// struct leaves out and the converter writes as no record at all).
    pub fn from_connect_data(&self, schema: &Schema, value: &Value) -> Result<Option<Node>> {
        use SchemaType as T;
        if value.is_null() {
            if let Some(default) = schema.default_value()
                && !self.config.ignore_default_for_nullables
            {
                return self.from_connect_data(schema, default);
            }
            return Ok(schema.is_optional().then_some(Node::Null));
        }
        let mismatch = || {
            data_err(format!(
                "Invalid type for {}: {}",
                schema.schema_type(),
                java_class(value)
            ))
        };
        match schema.name() {
            Some(DECIMAL_NAME) => {
                let Value::Bytes(bytes) = value else {
                    return Err(data_err(format!(
                        "Invalid type for Decimal, expected BigDecimal but was {}",
                        java_class(value)
                    )));
                };
                return Ok(Some(match self.config.decimal_format {
                    DecimalFormat::Base64 => Node::Binary(bytes.clone()),
                    DecimalFormat::Numeric => {
                        let scale = logical::decimal_scale(schema)
                            .ok_or_else(|| data_err("Invalid Decimal schema: no scale"))?;
                        let d = logical::Decimal::from_bytes(bytes, scale)?;
                        Node::Decimal(BigDec::new(d.unscaled, d.scale))
                    }
                }));
            }
            Some(n @ (DATE_NAME | TIME_NAME | TIMESTAMP_NAME)) => {
                let expected = if n == TIMESTAMP_NAME {
                    T::Int64
                } else {
                    T::Int32
                };
                return match value.as_i64() {
                    Some(v) if schema.schema_type() == expected => Ok(Some(Node::Int(v))),
                    _ => Err(data_err(format!(
                        "Invalid type for {}, expected Date but was {}",
                        n.rsplit('.').next().unwrap_or(n),
                        java_class(value)
                    ))),
                };
            }
            _ => {}
        }
        Ok(Some(match (schema.schema_type(), value) {
            (T::Int8, Value::Int8(v)) => Node::Int(i64::from(*v)),
            (T::Int16, Value::Int16(v)) => Node::Int(i64::from(*v)),
            (T::Int32, Value::Int32(v)) => Node::Int(i64::from(*v)),
            (T::Int64, Value::Int64(v)) => Node::Int(*v),
            (T::Float32, Value::Float32(v)) => Node::Float(*v),
            (T::Float64, Value::Float64(v)) => Node::Double(*v),
            (T::Boolean, Value::Boolean(v)) => Node::Bool(*v),
            (T::String, Value::String(v)) => Node::Text(v.clone()),
            (T::Bytes, Value::Bytes(v)) => Node::Binary(v.clone()),
            (T::Array, Value::Array(items)) => {
                let item_schema = schema
                    .value_schema()
                    .ok_or_else(|| data_err("Array schema has no item schema"))?;
                Node::Array(
                    items
                        .iter()
                        .map(|i| {
                            Ok(self
                                .from_connect_data(item_schema, i)?
                                .unwrap_or(Node::Null))
                        })
                        .collect::<Result<_>>()?,
                )
            }
            (T::Map, Value::Map(entries)) => {
                let (ks, vs) = schema
                    .key_schema()
                    .zip(schema.value_schema())
                    .ok_or_else(|| data_err("Map schema has no key or value schema"))?;
                let object_mode = ks.schema_type() == T::String && !ks.is_optional();
                let mut obj = Vec::new();
                let mut list = Vec::new();
                for (k, v) in entries {
                    let key = self.from_connect_data(ks, k)?;
                    let value = self.from_connect_data(vs, v)?.unwrap_or(Node::Null);
                    if object_mode {
                        let Some(Node::Text(key)) = key else {
                            return Err(data_err("Map key is null or not a string"));
                        };
                        Node::set(&mut obj, key, value);
                    } else {
                        list.push(Node::Object(vec![
                            (KEY_FIELD.to_owned(), key.unwrap_or(Node::Null)),
                            (VALUE_FIELD.to_owned(), value),
                        ]));
                    }
                }
                if object_mode {
                    Node::Object(obj)
                } else {
                    Node::Array(list)
                }
            }
            (T::Struct, Value::Struct(st)) => {
                if st.schema() != schema {
                    return Err(data_err("Mismatching schema."));
                }
                if is_union(schema) {
                    for (f, v) in schema.fields().iter().zip(st.values()) {
                        let v = if v.is_null() && !self.config.ignore_default_for_nullables {
                            f.schema.default_value().unwrap_or(v)
                        } else {
                            v
                        };
                        if !v.is_null() {
                            return self.from_connect_data(&f.schema, v);
                        }
                    }
                    return self.from_connect_data(schema, &Value::Null);
                }
                let mut obj = Vec::with_capacity(st.values().len());
                for (f, v) in schema.fields().iter().zip(st.values()) {
                    if let Some(node) = self.from_connect_data(&f.schema, v)? {
                        Node::set(&mut obj, f.name.clone(), node);
                    }
                }
                Node::Object(obj)
            }
            _ => return Err(mismatch()),
        }))
    }

    // ----- JSON Schema -> Connect -----

    /// Java's `toConnectSchema`, with the registry's `version` of the schema (a
    /// `connect.version` in the schema wins).
    pub fn to_connect_schema(&self, schema: &JsonSchema, version: Option<i32>) -> Result<Schema> {
        let mut ctx = ToCtx::default();
        let connect = self.to_connect(&mut ctx, schema, version, false)?;
        if ctx.last_id.is_empty() {
            return Ok(connect);
        }
        // A struct met again through a `$ref` carries the id its last meeting gave it: now
        // that those are known, again with them.
        let mut ctx = ToCtx {
            final_ids: Some(ctx.last_id),
            ..ToCtx::default()
        };
        self.to_connect(&mut ctx, schema, version, false)
    }

    fn enums(&self, values: &[Node]) -> SchemaBuilder {
        let param = if self.config.generalized_sum_type_support {
            GENERALIZED_TYPE_ENUM
        } else {
            JSON_TYPE_ENUM
        };
        let mut b = SchemaBuilder::new(SchemaType::String).parameter(param, "");
        for (i, v) in values.iter().enumerate() {
            let symbol = match v {
                Node::Null => NULL_MARKER.to_owned(),
                Node::Text(s) => s.clone(),
                other => other.to_json(),
            };
            let value = if self.config.generalized_sum_type_support {
                i.to_string()
            } else {
                symbol.clone()
            };
            b = b.parameter(format!("{param}.{symbol}"), value);
        }
        b
    }

    fn to_connect(
        &self,
        ctx: &mut ToCtx,
        js: &JsonSchema,
        version: Option<i32>,
        force_optional: bool,
    ) -> Result<Schema> {
        let connect_type = js.prop(CONNECT_TYPE_PROP).and_then(Node::as_str);
        let mut b = match &js.kind {
            Kind::Boolean => SchemaBuilder::new(SchemaType::Boolean),
            Kind::Number { integer, .. } => SchemaBuilder::new(match connect_type {
                None if *integer => SchemaType::Int64,
                None => SchemaType::Float64,
                Some("int8") => SchemaType::Int8,
                Some("int16") => SchemaType::Int16,
                Some("int32") => SchemaType::Int32,
                Some("int64") => SchemaType::Int64,
                Some("float32") => SchemaType::Float32,
                Some("float64") => SchemaType::Float64,
                Some("bytes") => SchemaType::Bytes,
                Some(other) => return Err(data_err(format!("Unsupported type {other}"))),
            }),
            Kind::String { .. } => SchemaBuilder::new(if connect_type == Some("bytes") {
                SchemaType::Bytes
            } else {
                SchemaType::String
            }),
            Kind::Const(v) => self.enums(std::slice::from_ref(v)),
            Kind::Enum(values) => self.enums(values),
            Kind::Combined {
                criterion,
                subschemas,
            } => {
                if subschemas.len() == 1 && self.config.flatten_singleton_unions {
                    return self.to_connect(ctx, &subschemas[0], None, false);
                }
                if *criterion == Criterion::AllOf {
                    return self.all_of(ctx, subschemas, version, force_optional);
                }
                let name = if self.config.generalized_sum_type_support {
                    let n = format!("{GENERALIZED_TYPE_UNION_PREFIX}{}", ctx.unions);
                    ctx.unions += 1;
                    n
                } else {
                    JSON_TYPE_ONE_OF.to_owned()
                };
                if subschemas.len() == 2 {
                    let nulls = subschemas
                        .iter()
                        .filter(|s| matches!(s.kind, Kind::Null))
                        .count();
                    if nulls > 0 {
                        let non_null = subschemas.iter().rfind(|s| !matches!(s.kind, Kind::Null));
                        return match non_null {
                            Some(s) => self.to_connect(ctx, s, version, true),
                            None => Err(unsupported("NullSchema")),
                        };
                    }
                }
                let mut b = SchemaBuilder::struct_().name(name.clone());
                if self.config.generalized_sum_type_support {
                    b = b.parameter(GENERALIZED_TYPE_UNION, name.clone());
                }
                let mut index = 0;
                for sub in subschemas {
                    if matches!(sub.kind, Kind::Null) {
                        b = b.optional();
                    } else {
                        let field = union_field_name(
                            self.config.generalized_sum_type_support,
                            &name,
                            index,
                        );
                        b = b.field(field, self.to_connect(ctx, sub, None, true)?);
                        index += 1;
                    }
                }
                b
            }
            Kind::Array { items, tuple, .. } => {
                let Some(items) = items else {
                    return Err(data_err(if *tuple {
                        "Array schema did not specify the items type (tuples of item schemas have no Connect type)"
                    } else {
                        "Array schema did not specify the items type"
                    }));
                };
                match (&items.kind, connect_type) {
                    (Kind::Object { properties, .. }, Some("map")) => {
                        let get = |name: &str| {
                            properties
                                .iter()
                                .find(|(n, _)| n == name)
                                .map(|(_, s)| s)
                                .ok_or_else(|| {
                                    data_err(format!("Map entry schema has no {name} property"))
                                })
                        };
                        SchemaBuilder::map(
                            self.to_connect(ctx, get(KEY_FIELD)?, None, false)?,
                            self.to_connect(ctx, get(VALUE_FIELD)?, None, false)?,
                        )
                    }
                    _ => SchemaBuilder::array(self.to_connect(ctx, items, None, false)?),
                }
            }
            Kind::Empty | Kind::True => {
                return Err(data_err(format!(
                    "A JSON schema that admits any value ({}) maps to Confluent's {VARIANT_NAME}, which this worker's JsonSchemaConverter does not support",
                    js.to_text()
                )));
            }
            Kind::Object {
                properties,
                required,
                additional_schema,
                ..
            } => {
                if connect_type == Some("map") {
                    let values = additional_schema.as_deref().ok_or_else(|| {
                        data_err("Map schema did not specify the additionalProperties type")
                    })?;
                    SchemaBuilder::map(Schema::string(), self.to_connect(ctx, values, None, false)?)
                } else {
                    let names: Vec<&str> = properties.iter().map(|(n, _)| n.as_str()).collect();
                    let mut sorted: BTreeMap<i64, usize> = BTreeMap::new();
                    for i in java_hash_map_order(&names, None) {
                        let index = match properties[i].1.prop(CONNECT_INDEX_PROP) {
                            Some(n) => n.as_i64().ok_or_else(|| {
                                data_err(format!("Invalid {CONNECT_INDEX_PROP}: {}", n.to_json()))
                            })?,
                            None => sorted.len() as i64,
                        };
                        sorted.insert(index, i);
                    }
                    let mut b = SchemaBuilder::struct_();
                    for i in sorted.into_values() {
                        let (name, sub) = &properties[i];
                        let optional =
                            self.config.use_optional_for_non_required && !required.contains(name);
                        b =
                            b.try_field(name.clone(), self.to_connect(ctx, sub, None, optional)?)?;
                    }
                    b
                }
            }
            Kind::Resolved {
                pointer,
                schema: inner,
            } => {
                if !builds_struct(inner) {
                    return self.to_connect(ctx, inner, version, force_optional);
                }
                if let Some(first) = ctx.built.get(pointer).cloned() {
                    // Java hands out the struct builder of the first meeting again, with an id
                    // parameter (a reference, made for recursive schemas).
                    ctx.ids += 1;
                    ctx.last_id.insert(pointer.clone(), ctx.ids);
                    let id = ctx
                        .final_ids
                        .as_ref()
                        .and_then(|f| f.get(pointer))
                        .copied()
                        .unwrap_or(ctx.ids);
                    return Ok(rebuilt(
                        &first,
                        force_optional,
                        Some((JSON_ID_PROP, &format!("{DEFAULT_ID_PREFIX}{id}"))),
                    ));
                }
                let built = self.to_connect(ctx, inner, version, force_optional)?;
                ctx.built.insert(pointer.clone(), built.clone());
                return Ok(built);
            }
            Kind::Ref(r) => return Err(data_err(format!("Unresolved $ref {r}"))),
            Kind::Null => return Err(unsupported("NullSchema")),
            Kind::False => return Err(unsupported("FalseSchema")),
            Kind::Not => return Err(unsupported("NotSchema")),
            Kind::Conditional => return Err(unsupported("ConditionalSchema")),
        };
        if let Some(title) = &js.title
            && b.current_name().is_none()
        {
            b = b.name(title.clone());
        }
        match js.prop(CONNECT_VERSION_PROP) {
            Some(v) => {
                let v = v
                    .as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| {
                        data_err(format!("Invalid {CONNECT_VERSION_PROP}: {}", v.to_json()))
                    })?;
                b = b.version(v);
            }
            None => {
                if let Some(v) = version {
                    b = b.version(v);
                }
            }
        }
        if let Some(d) = &js.description {
            b = b.doc(d.clone());
        }
        if let Some(params) = js.prop(CONNECT_PARAMETERS_PROP) {
            let Node::Object(entries) = params else {
                return Err(data_err(format!(
                    "Invalid {CONNECT_PARAMETERS_PROP}: {}",
                    params.to_json()
                )));
            };
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            for i in java_hash_map_order(&keys, None) {
                let (k, v) = &entries[i];
                let v = v.as_str().ok_or_else(|| {
                    data_err(format!(
                        "Invalid {CONNECT_PARAMETERS_PROP}: {}",
                        params.to_json()
                    ))
                })?;
                b = b.parameter(k.clone(), v);
            }
        }
        if let Some(default) = &js.default {
            let so_far = b.clone().build();
            let value = self.to_connect_data(&so_far, Some(default))?;
            b = b.default_value(value);
        }
        if force_optional {
            b = b.optional();
        }
        Ok(b.build())
    }

    /// Java's `allOfToConnectSchema`.
    fn all_of(
        &self,
        ctx: &mut ToCtx,
        subschemas: &[JsonSchema],
        version: Option<i32>,
        force_optional: bool,
    ) -> Result<Schema> {
        let (mut konst, mut enm, mut number, mut string, mut combined, mut reference) =
            (None, None, None, None, None, None);
        let mut properties: Vec<(String, &JsonSchema)> = Vec::new();
        let mut required: Vec<(String, bool)> = Vec::new();
        for sub in subschemas {
            match &sub.kind {
                Kind::Const(_) => konst = Some(sub),
                Kind::Enum(_) => enm = Some(sub),
                Kind::Number { .. } => number = Some(sub),
                Kind::String { .. } => string = Some(sub),
                Kind::Combined { .. } => combined = Some(sub),
                Kind::Resolved { .. } => reference = Some(sub),
                _ => {}
            }
            collect_properties(sub, &mut properties, &mut required);
        }
        if !properties.is_empty() {
            let mut b = SchemaBuilder::struct_();
            for (name, sub) in &properties {
                let is_required = required.iter().any(|(n, r)| n == name && *r);
                let optional = self.config.use_optional_for_non_required && !is_required;
                b = b.try_field(name.clone(), self.to_connect(ctx, sub, None, optional)?)?;
            }
            if force_optional {
                b = b.optional();
            }
            return Ok(b.build());
        }
        let pick = if combined.is_some() {
            combined
        } else if konst.is_some() {
            string.or(number)
        } else if enm.is_some() {
            if string.is_some() { enm } else { number }
        } else if string.is_some() {
            number.or(string)
        } else {
            reference
        };
        match pick {
            Some(s) => self.to_connect(ctx, s, version, force_optional),
            None => Err(data_err(
                "Unsupported criterion allOf: its schemas have no properties, and no combination, const, enum, string or reference to read",
            )),
        }
    }

    /// Java's `toConnectData`: the Connect value of `node` (`None`: the property is absent).
    pub fn to_connect_data(&self, schema: &Schema, node: Option<&Node>) -> Result<Value> {
        use SchemaType as T;
        let node = match node {
            None | Some(Node::Null) => {
                if let Some(d) = schema.default_value() {
                    return Ok(d.clone());
                }
                if node.is_none() || schema.is_optional() {
                    return Ok(Value::Null);
                }
                return Err(data_err(format!(
                    "Invalid null value for required {} field",
                    schema.schema_type()
                )));
            }
            Some(n) => n,
        };
        let wrong = |expected: &str| {
            data_err(format!(
                "Invalid JSON for a {} value: expected {expected}, found {} {}",
                schema.schema_type(),
                node_type(node),
                shorten(&node.to_json())
            ))
        };
        match schema.name() {
            Some(DECIMAL_NAME) => {
                let scale = logical::decimal_scale(schema)
                    .ok_or_else(|| data_err("Invalid Decimal schema: no scale"))?;
                return match node {
                    n if n.is_number() => {
                        let text = match n {
                            Node::Decimal(d) => d.to_java_string(),
                            other => other.to_json(),
                        };
                        Ok(Value::Bytes(
                            logical::Decimal::parse(&text, scale)?.to_bytes(),
                        ))
                    }
                    Node::Text(s) => BASE64
                        .decode(s)
                        .map(Value::Bytes)
                        .map_err(|e| data_err("Invalid bytes for Decimal field").with_source(e)),
                    Node::Binary(b) => Ok(Value::Bytes(b.clone())),
                    other => Err(data_err(format!(
                        "Invalid type for Decimal, underlying representation should be numeric or bytes but was {}",
                        node_type(other)
                    ))),
                };
            }
            Some(n @ (DATE_NAME | TIME_NAME)) => {
                return match node {
                    Node::Int(v) if i32::try_from(*v).is_ok() => Ok(Value::Int32(*v as i32)),
                    other => Err(data_err(format!(
                        "Invalid type for {}, underlying representation should be integer but was {}",
                        if n == DATE_NAME { "Date" } else { "Time" },
                        node_type(other)
                    ))),
                };
            }
            Some(TIMESTAMP_NAME) => {
                return match node {
                    Node::Int(v) => Ok(Value::Int64(*v)),
                    other => Err(data_err(format!(
                        "Invalid type for Timestamp, underlying representation should be integral but was {}",
                        node_type(other)
                    ))),
                };
            }
            _ => {}
        }
        let int = |min: i64, max: i64| {
            node.as_i64()
                .filter(|v| (min..=max).contains(v))
                .ok_or_else(|| wrong(&format!("an integer from {min} to {max}")))
        };
        let float = || match node {
            Node::Text(s) if s == "NaN" => Ok(f64::NAN),
            Node::Text(s) if s == "Infinity" => Ok(f64::INFINITY),
            Node::Text(s) if s == "-Infinity" => Ok(f64::NEG_INFINITY),
            n => n.as_f64().ok_or_else(|| wrong("a number")),
        };
        Ok(match schema.schema_type() {
            T::Boolean => match node {
                Node::Bool(b) => Value::Boolean(*b),
                _ => return Err(wrong("a boolean")),
            },
            T::Int8 => Value::Int8(int(i8::MIN.into(), i8::MAX.into())? as i8),
            T::Int16 => Value::Int16(int(i16::MIN.into(), i16::MAX.into())? as i16),
            T::Int32 => Value::Int32(int(i32::MIN.into(), i32::MAX.into())? as i32),
            T::Int64 => Value::Int64(int(i64::MIN, i64::MAX)?),
            T::Float32 => Value::Float32(float()? as f32),
            T::Float64 => Value::Float64(float()?),
            T::String => match node {
                Node::Text(s) => Value::String(s.clone()),
                _ => return Err(wrong("a string")),
            },
            T::Bytes => match node {
                Node::Text(s) => Value::Bytes(
                    BASE64
                        .decode(s)
                        .map_err(|e| data_err("Invalid bytes field").with_source(e))?,
                ),
                Node::Binary(b) => Value::Bytes(b.clone()),
                _ => return Err(wrong("base64 text")),
            },
            T::Array => {
                let Node::Array(items) = node else {
                    return Err(wrong("an array"));
                };
                let item_schema = schema
                    .value_schema()
                    .ok_or_else(|| data_err("Array schema has no item schema"))?;
                Value::Array(
                    items
                        .iter()
                        .map(|i| self.to_connect_data(item_schema, Some(i)))
                        .collect::<Result<_>>()?,
                )
            }
            T::Map => {
                let (ks, vs) = schema
                    .key_schema()
                    .zip(schema.value_schema())
                    .ok_or_else(|| data_err("Map schema has no key or value schema"))?;
                if ks.schema_type() == T::String && !ks.is_optional() {
                    let Node::Object(entries) = node else {
                        return Err(data_err(format!(
                            "Maps with string fields should be encoded as JSON objects, but found {}",
                            node_type(node)
                        )));
                    };
                    Value::Map(
                        entries
                            .iter()
                            .map(|(k, v)| {
                                Ok((Value::String(k.clone()), self.to_connect_data(vs, Some(v))?))
                            })
                            .collect::<Result<_>>()?,
                    )
                } else {
                    let Node::Array(entries) = node else {
                        return Err(data_err(format!(
                            "Maps with non-string fields should be encoded as JSON array of objects, but found {}",
                            node_type(node)
                        )));
                    };
                    let mut out = Vec::with_capacity(entries.len());
                    for entry in entries {
                        let Node::Object(fields) = entry else {
                            return Err(data_err(format!(
                                "Found invalid map entry instead of object: {}",
                                node_type(entry)
                            )));
                        };
                        if fields.len() != 2 {
                            return Err(data_err(format!(
                                "Found invalid map entry, expected length 2 but found :{}",
                                fields.len()
                            )));
                        }
                        out.push((
                            self.to_connect_data(ks, entry.get(KEY_FIELD))?,
                            self.to_connect_data(vs, entry.get(VALUE_FIELD))?,
                        ));
                    }
                    Value::Map(out)
                }
            }
            T::Struct => {
                if is_union(schema) {
                    return self.union_to_connect(schema, node);
                }
                if !matches!(node, Node::Object(_)) {
                    return Err(data_err(format!(
                        "Structs should be encoded as JSON objects, but found {}",
                        node_type(node)
                    )));
                }
                let mut values = Vec::with_capacity(schema.fields().len());
                for f in schema.fields() {
                    values.push(self.to_connect_data(&f.schema, node.get(&f.name))?);
                }
                Value::Struct(Struct::from_checked_values(schema.clone(), values))
            }
        })
    }

    /// A union struct with the one field the JSON matches set: the first alternative of the
    /// JSON's kind, else the struct alternative sharing the most property names with it.
    fn union_to_connect(&self, schema: &Schema, node: &Node) -> Result<Value> {
        let mut best: Option<(usize, usize)> = None;
        for (i, f) in schema.fields().iter().enumerate() {
            if simple_match(&f.schema, node) {
                return self.union_value(schema, i, node);
            }
            let m = match_struct(&f.schema, node);
            if m > best.map_or(0, |(_, b)| b) {
                best = Some((i, m));
            }
        }
        match best {
            Some((i, _)) => self.union_value(schema, i, node),
            None => Err(data_err("Did not find matching oneof field for data")),
        }
    }

    fn union_value(&self, schema: &Schema, i: usize, node: &Node) -> Result<Value> {
        let mut values = vec![Value::Null; schema.fields().len()];
        values[i] = self.to_connect_data(&schema.fields()[i].schema, Some(node))?;
        Ok(Value::Struct(Struct::from_checked_values(
            schema.clone(),
            values,
        )))
    }
}

fn unsupported(class: &str) -> ConnectError {
    data_err(format!(
        "Unsupported schema type org.everit.json.schema.{class}"
    ))
}

fn shorten(text: &str) -> String {
    if text.len() <= 64 {
        return text.to_owned();
    }
    let mut end = 64;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Java's `collectPropertySchemas`: the properties of an `allOf` part (its own, its `allOf`
/// parts', a reference's), the first place of a name kept, its last definition used.
fn collect_properties<'a>(
    schema: &'a JsonSchema,
    properties: &mut Vec<(String, &'a JsonSchema)>,
    required: &mut Vec<(String, bool)>,
) {
    match &schema.kind {
        Kind::Combined {
            criterion: Criterion::AllOf,
            subschemas,
        } => {
            for s in subschemas {
                collect_properties(s, properties, required);
            }
        }
        Kind::Object {
            properties: props,
            required: req,
            ..
        } => {
            let names: Vec<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
            for i in java_hash_map_order(&names, None) {
                let (name, s) = &props[i];
                match properties.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = s,
                    None => properties.push((name.clone(), s)),
                }
                let r = req.contains(name);
                match required.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = r,
                    None => required.push((name.clone(), r)),
                }
            }
        }
        Kind::Resolved { schema, .. } => collect_properties(schema, properties, required),
        _ => {}
    }
}

/// Java's `isInstanceOfSchemaTypeForSimpleSchema`.
fn simple_match(schema: &Schema, node: &Node) -> bool {
    use SchemaType as T;
    match schema.schema_type() {
        T::Int8 | T::Int16 | T::Int32 | T::Int64 => matches!(node, Node::Int(_) | Node::BigInt(_)),
        T::Float32 | T::Float64 => node.is_number(),
        T::Boolean => matches!(node, Node::Bool(_)),
        T::String => matches!(node, Node::Text(_)),
        T::Bytes => matches!(node, Node::Binary(_) | Node::Decimal(_)),
        T::Array => matches!(node, Node::Array(_)),
        T::Map => matches!(node, Node::Object(_) | Node::Array(_)),
        T::Struct => false,
    }
}

/// Java's `matchStructSchema`: how many property names (nested ones too) a struct alternative
/// shares with the JSON object.
fn match_struct(schema: &Schema, node: &Node) -> usize {
    let Node::Object(entries) = node else {
        return 0;
    };
    if schema.schema_type() != SchemaType::Struct {
        return 0;
    }
    let mut count = 0;
    for f in schema.fields() {
        if let Some((_, child)) = entries.iter().find(|(k, _)| *k == f.name) {
            count += 1 + match_struct(&f.schema, child);
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_schema::schema::load;
    use connect_api::data::logical::{
        date_builder, decimal_builder, time_builder, timestamp_builder,
    };

    fn data() -> JsonSchemaData {
        JsonSchemaData::default()
    }

    fn text(d: &JsonSchemaData, schema: &Schema) -> String {
        d.from_connect_schema(schema).unwrap().to_text()
    }

    fn payload(d: &JsonSchemaData, schema: &Schema, value: &Value) -> Option<String> {
        d.from_connect_data(schema, value)
            .unwrap()
            .map(|n| n.to_json())
    }

    /// Text → Connect schema (registry version 1) → value of `json`.
    fn read(d: &JsonSchemaData, text: &str, json: &str) -> (Schema, Value) {
        let schema = d.to_connect_schema(&load(text).unwrap(), Some(1)).unwrap();
        let value = d
            .to_connect_data(&schema, Some(&json::parse(json.as_bytes()).unwrap()))
            .unwrap();
        (schema, value)
    }

    fn with_version(schema: SchemaBuilder) -> Schema {
        schema.version(1).build()
    }

    /// The texts of JsonSchemaDataTest's `testFromConnect<Primitive>` schemas (Java compares
    /// everit objects; these are their registered texts) and the JSON of their values.
    #[test]
    fn primitives_as_in_json_schema_data_test() {
        let d = data();
        for (schema, value, schema_text, json) in [
            // testFromConnectBoolean
            (
                Schema::boolean(),
                Value::Boolean(true),
                r#"{"type":"boolean"}"#,
                "true",
            ),
            // testFromConnectByte
            (
                Schema::int8(),
                Value::Int8(12),
                r#"{"type":"integer","connect.type":"int8"}"#,
                "12",
            ),
            // testFromConnectShort
            (
                Schema::int16(),
                Value::Int16(12),
                r#"{"type":"integer","connect.type":"int16"}"#,
                "12",
            ),
            // testFromConnectInteger
            (
                Schema::int32(),
                Value::Int32(12),
                r#"{"type":"integer","connect.type":"int32"}"#,
                "12",
            ),
            // testFromConnectLong
            (
                Schema::int64(),
                Value::Int64(12),
                r#"{"type":"integer","connect.type":"int64"}"#,
                "12",
            ),
            // testFromConnectFloat
            (
                Schema::float32(),
                Value::Float32(12.2),
                r#"{"type":"number","connect.type":"float32"}"#,
                "12.2",
            ),
            // testFromConnectDouble
            (
                Schema::float64(),
                Value::Float64(12.2),
                r#"{"type":"number","connect.type":"float64"}"#,
                "12.2",
            ),
            // testFromConnectBytes
            (
                Schema::bytes(),
                Value::Bytes(b"foo".to_vec()),
                r#"{"type":"string","connect.type":"bytes"}"#,
                r#""Zm9v""#,
            ),
            // testFromConnectString
            (
                Schema::string(),
                Value::String("string".into()),
                r#"{"type":"string"}"#,
                r#""string""#,
            ),
            // testFromConnectNull
            (
                Schema::optional_boolean(),
                Value::Null,
                r#"{"oneOf":[{"type":"null"},{"type":"boolean"}]}"#,
                "null",
            ),
        ] {
            assert_eq!(text(&d, &schema), schema_text);
            assert_eq!(payload(&d, &schema, &value).as_deref(), Some(json));
            let (read_schema, read_value) = read(&d, schema_text, json);
            let mut expected = SchemaBuilder::new(schema.schema_type()).version(1);
            if schema.is_optional() {
                expected = expected.optional();
            }
            assert_eq!(read_schema, expected.build(), "{schema_text}");
            assert_eq!(read_value, value, "{schema_text}");
        }
    }

    /// testFromConnectBase64Decimal, testFromConnectNumericDecimal(WithTrailingZeros),
    /// testFromConnectTimestampWithDefault, and Date and Time.
    #[test]
    fn logical_types_as_in_json_schema_data_test() {
        let d = data();
        let dec = decimal_builder(2).build();
        let bytes = logical::Decimal::parse("1.56", 2).unwrap().to_bytes();
        assert_eq!(
            text(&d, &dec),
            r#"{"type":"string","title":"org.apache.kafka.connect.data.Decimal","connect.version":1,"connect.type":"bytes","connect.parameters":{"scale":"2"}}"#
        );
        assert_eq!(
            payload(&d, &dec, &Value::Bytes(bytes.clone())).as_deref(),
            Some(r#""AJw=""#)
        );
        let numeric = JsonSchemaData::new(JsonSchemaDataConfig {
            decimal_format: DecimalFormat::Numeric,
            ..JsonSchemaDataConfig::default()
        });
        assert_eq!(
            text(&numeric, &dec),
            r#"{"type":"number","title":"org.apache.kafka.connect.data.Decimal","connect.version":1,"connect.type":"bytes","connect.parameters":{"scale":"2"}}"#
        );
        assert_eq!(
            payload(&numeric, &dec, &Value::Bytes(bytes.clone())).as_deref(),
            Some("1.56")
        );
        let dec4 = decimal_builder(4).build();
        let trailing = logical::Decimal::parse("1.5600", 4).unwrap().to_bytes();
        assert_eq!(
            payload(&numeric, &dec4, &Value::Bytes(trailing.clone())).as_deref(),
            Some("1.5600")
        );
        // Read back either way, whatever the writer's decimal.format.
        let dec_text = text(&numeric, &dec4);
        assert_eq!(
            read(&d, &dec_text, "1.5600").1,
            Value::Bytes(trailing.clone())
        );
        assert_eq!(
            read(&d, &dec_text, "1.56").1,
            Value::Bytes(trailing.clone())
        );
        assert_eq!(read(&d, &dec_text, r#""PPA=""#).1, Value::Bytes(trailing));
        assert_eq!(read(&d, &text(&d, &dec), r#""AJw=""#).0, dec);

        let ts = timestamp_builder().default_value(Value::Int64(0)).build();
        assert_eq!(
            text(&d, &ts),
            r#"{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","default":0,"connect.version":1,"connect.type":"int64"}"#
        );
        assert_eq!(
            payload(&d, &ts, &Value::Int64(1234567890)).as_deref(),
            Some("1234567890")
        );
        assert_eq!(
            read(&d, &text(&d, &ts), "1234567890"),
            (ts, Value::Int64(1234567890))
        );
        for (schema, name) in [
            (date_builder().build(), "Date"),
            (time_builder().build(), "Time"),
        ] {
            let t = text(&d, &schema);
            assert_eq!(
                t,
                format!(
                    r#"{{"type":"integer","title":"org.apache.kafka.connect.data.{name}","connect.version":1,"connect.type":"int32"}}"#
                )
            );
            assert_eq!(read(&d, &t, "19000"), (schema.clone(), Value::Int32(19000)));
            let e = d
                .to_connect_data(&schema, Some(&Node::Int(i64::from(i32::MAX) + 1)))
                .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "Invalid type for {name}, underlying representation should be integer but was NUMBER"
                )
            );
        }
    }

    /// testFromConnectMapWithStringKey, testFromConnectMapWithOptionalKey,
    /// testFromConnectMapWithNonStringKey, testFromNamedConnectMap.
    #[test]
    fn maps_as_in_json_schema_data_test() {
        let d = data();
        let string_keys = SchemaBuilder::map(Schema::string(), Schema::int32()).build();
        let t = text(&d, &string_keys);
        assert_eq!(
            t,
            r#"{"type":"object","connect.type":"map","additionalProperties":{"type":"integer","connect.type":"int32"}}"#
        );
        let hi = Value::Map(vec![(Value::String("hi".into()), Value::Int32(32))]);
        assert_eq!(
            payload(&d, &string_keys, &hi).as_deref(),
            Some(r#"{"hi":32}"#)
        );
        assert_eq!(
            read(&d, &t, r#"{"hi":32}"#),
            (
                with_version(SchemaBuilder::map(Schema::string(), Schema::int32())),
                hi.clone()
            )
        );

        let optional_keys = SchemaBuilder::map(Schema::optional_string(), Schema::int32()).build();
        let t = text(&d, &optional_keys);
        assert_eq!(
            t,
            r#"{"type":"array","connect.type":"map","items":{"type":"object","properties":{"value":{"type":"integer","connect.index":1,"connect.type":"int32"},"key":{"connect.index":0,"oneOf":[{"type":"null"},{"type":"string"}]}}}}"#
        );
        assert_eq!(
            payload(&d, &optional_keys, &hi).as_deref(),
            Some(r#"[{"key":"hi","value":32}]"#)
        );
        assert_eq!(read(&d, &t, r#"[{"key":"hi","value":32}]"#).1, hi);

        let int_keys = SchemaBuilder::map(Schema::int32(), Schema::int32()).build();
        let t = text(&d, &int_keys);
        assert_eq!(
            t,
            r#"{"type":"array","connect.type":"map","items":{"type":"object","properties":{"value":{"type":"integer","connect.index":1,"connect.type":"int32"},"key":{"type":"integer","connect.index":0,"connect.type":"int32"}}}}"#
        );
        let v = Value::Map(vec![(Value::Int32(54), Value::Int32(32))]);
        assert_eq!(
            payload(&d, &int_keys, &v).as_deref(),
            Some(r#"[{"key":54,"value":32}]"#)
        );
        assert_eq!(
            read(&d, &t, r#"[{"key":54,"value":32}]"#),
            (
                with_version(SchemaBuilder::map(Schema::int32(), Schema::int32())),
                v
            )
        );

        let named = SchemaBuilder::map(Schema::string(), Schema::int32())
            .name("foo.bar")
            .build();
        assert_eq!(
            text(&d, &named),
            r#"{"type":"object","title":"foo.bar","connect.type":"map","additionalProperties":{"type":"integer","connect.type":"int32"}}"#
        );
        let e = d
            .to_connect_data(&int_keys, Some(&json::parse(br#"{"54":32}"#).unwrap()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Maps with non-string fields should be encoded as JSON array of objects, but found OBJECT"
        );
    }

    fn record() -> Schema {
        SchemaBuilder::struct_()
            .name("Record")
            .field("int8", Schema::int8())
            .field("string", Schema::string())
            .build()
    }

    /// testToConnectRecord and testFromConnectRecordWithMissingNonoptional: the properties in
    /// Java's HashMap order with their `connect.index`; a null required field is left out.
    #[test]
    fn structs_as_in_json_schema_data_test() {
        let d = data();
        let schema = record();
        let t = text(&d, &schema);
        assert_eq!(
            t,
            r#"{"type":"object","title":"Record","properties":{"string":{"type":"string","connect.index":1},"int8":{"type":"integer","connect.index":0,"connect.type":"int8"}}}"#
        );
        let full = Struct::new(schema.clone())
            .with("int8", Value::Int8(12))
            .unwrap()
            .with("string", "sample string")
            .unwrap();
        assert_eq!(
            payload(&d, &schema, &Value::Struct(full.clone())).as_deref(),
            Some(r#"{"int8":12,"string":"sample string"}"#)
        );
        let (read_schema, read_value) = read(&d, &t, r#"{"int8":12,"string":"sample string"}"#);
        let versioned = with_version(
            SchemaBuilder::struct_()
                .name("Record")
                .field("int8", Schema::int8())
                .field("string", Schema::string()),
        );
        assert_eq!(read_schema, versioned);
        let Value::Struct(s) = read_value else {
            panic!()
        };
        assert_eq!(s.values(), full.values());

        let missing = Struct::new(schema.clone())
            .with("int8", Value::Int8(12))
            .unwrap();
        assert_eq!(
            payload(&d, &schema, &Value::Struct(missing)).as_deref(),
            Some(r#"{"int8":12}"#)
        );
        // Read back, the missing required field is null (Java does not validate either).
        let Value::Struct(s) = read(&d, &t, r#"{"int8":12}"#).1 else {
            panic!()
        };
        assert_eq!(s.get("string"), Some(&Value::Null));

        // object.additional.properties=false (testToConnectRecordWithNoAdditionalProperties).
        let closed = JsonSchemaData::new(JsonSchemaDataConfig {
            allow_additional_properties: false,
            ..JsonSchemaDataConfig::default()
        });
        assert!(
            text(&closed, &schema)
                .starts_with(r#"{"type":"object","additionalProperties":false,"title":"Record","#)
        );
        // A JSON value of the wrong kind is a data error (Java would read 0, false or null).
        let e = d
            .to_connect_data(&schema, Some(&json::parse(br#"{"int8":"x"}"#).unwrap()))
            .unwrap_err();
        assert!(e.to_string().contains("INT8"), "{e}");
        let e = d.to_connect_data(&schema, Some(&Node::Int(1))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Structs should be encoded as JSON objects, but found NUMBER"
        );
        let e = d
            .to_connect_data(&Schema::int32(), Some(&Node::Null))
            .unwrap_err();
        assert_eq!(e.to_string(), "Invalid null value for required INT32 field");
    }

    /// testFromConnectRecordIgnoreDefaultForNullables.
    #[test]
    fn ignore_default_for_nullables() {
        let string = SchemaBuilder::new(SchemaType::String)
            .optional()
            .default_value(Value::String("default-string".into()))
            .build();
        let schema = SchemaBuilder::struct_()
            .name("Record")
            .field("int8", Schema::int8())
            .field("string", string)
            .build();
        let value = Value::Struct(
            Struct::new(schema.clone())
                .with("int8", Value::Int8(12))
                .unwrap(),
        );
        assert_eq!(
            payload(&data(), &schema, &value).as_deref(),
            Some(r#"{"int8":12,"string":"default-string"}"#)
        );
        let ignoring = JsonSchemaData::new(JsonSchemaDataConfig {
            ignore_default_for_nullables: true,
            ..JsonSchemaDataConfig::default()
        });
        assert_eq!(
            text(&ignoring, &schema),
            r#"{"type":"object","title":"Record","properties":{"string":{"connect.index":1,"oneOf":[{"type":"null"},{"type":"string","default":"default-string"}]},"int8":{"type":"integer","connect.index":0,"connect.type":"int8"}}}"#
        );
        assert_eq!(
            payload(&ignoring, &schema, &value).as_deref(),
            Some(r#"{"int8":12,"string":null}"#)
        );
    }

    /// Arrays (testToConnectArray), optional fields and nested structs, there and back.
    #[test]
    fn round_trips() {
        let d = data();
        let inner = SchemaBuilder::struct_()
            .name("com.example.Inner")
            .field("x", Schema::int32())
            .optional()
            .build();
        let schema = SchemaBuilder::struct_()
            .name("com.example.Outer")
            .version(3)
            .doc("outer")
            .parameter("owner", "team")
            .field("bytes", Schema::int8())
            .field(
                "list",
                SchemaBuilder::array(Schema::optional_int64()).build(),
            )
            .field("inner", inner.clone())
            .field("amount", decimal_builder(2).optional().build())
            .field(
                "by_id",
                SchemaBuilder::map(Schema::int64(), Schema::optional_string()).build(),
            )
            .field("day", date_builder().optional().build())
            .field("f", Schema::optional_float32())
            .build();
        let t = text(&d, &schema);
        assert!(t.starts_with(r#"{"type":"object","title":"com.example.Outer","description":"outer","connect.version":3,"connect.parameters":{"owner":"team"},"properties":{"#), "{t}");
        let value = Value::Struct(
            Struct::new(schema.clone())
                .with("bytes", Value::Int8(-3))
                .unwrap()
                .with("list", Value::Array(vec![Value::Int64(1), Value::Null]))
                .unwrap()
                .with(
                    "inner",
                    Value::Struct(Struct::new(inner).with("x", 5).unwrap()),
                )
                .unwrap()
                .with("amount", Value::Bytes(vec![0x04, 0xd2]))
                .unwrap()
                .with(
                    "by_id",
                    Value::Map(vec![(Value::Int64(7), Value::String("seven".into()))]),
                )
                .unwrap()
                .with("f", Value::Float32(0.1))
                .unwrap(),
        );
        let json = payload(&d, &schema, &value).unwrap();
        assert_eq!(
            json,
            r#"{"bytes":-3,"list":[1,null],"inner":{"x":5},"amount":"BNI=","by_id":[{"key":7,"value":"seven"}],"day":null,"f":0.1}"#
        );
        let (read_schema, read_value) = read(&d, &t, &json);
        // connect.version wins over the registry's version.
        assert_eq!(read_schema, schema);
        assert_eq!(read_value, value);
    }

    /// testToConnectRecordWithOptionalReference: a draft 4 schema of another producer, with
    /// definitions used twice, `required`, a number with a format.
    #[test]
    fn optional_reference_as_in_json_schema_data_test() {
        let text = r##"{
          "$schema": "http://json-schema.org/draft-04/schema#",
          "title": "Event",
          "type": "object",
          "properties": {"vehicle": {"$ref": "#/definitions/VehicleDto"}},
          "definitions": {
            "PriceDto": {
              "type": "object", "required": ["amount"],
              "properties": {"amount": {"type": "number", "format": "decimal"}}
            },
            "VehicleDto": {
              "type": "object", "required": ["offerPrice", "firstRegistrationDate"],
              "properties": {
                "offerPrice": {"connect.index": 1, "$ref": "#/definitions/PriceDto"},
                "catalogPrice": {"connect.index": 2, "oneOf": [{"type": "null"}, {"$ref": "#/definitions/PriceDto"}]},
                "firstRegistrationDate": {"connect.index": 3, "type": "string", "format": "date-time"}
              }
            }
          }
        }"##;
        let d = JsonSchemaData::new(JsonSchemaDataConfig {
            use_optional_for_non_required: true,
            ..JsonSchemaDataConfig::default()
        });
        let json = r#"{"vehicle":{"offerPrice":{"amount":20000},"firstRegistrationDate":"2020-08-19T12:05:15.953Z"}}"#;
        let (schema, value) = read(&d, text, json);
        let vehicle = &schema.field("vehicle").unwrap().schema;
        assert!(!vehicle.field("offerPrice").unwrap().schema.is_optional());
        let catalog = &vehicle.field("catalogPrice").unwrap().schema;
        assert!(catalog.is_optional());
        // The second use of PriceDto carries Java's reference id.
        assert_eq!(
            catalog.parameters().get(JSON_ID_PROP).map(String::as_str),
            Some("#id1")
        );
        assert_eq!(
            vehicle
                .field("offerPrice")
                .unwrap()
                .schema
                .field("amount")
                .unwrap()
                .schema
                .schema_type(),
            SchemaType::Float64
        );
        let Value::Struct(s) = value else { panic!() };
        let Some(Value::Struct(v)) = s.get("vehicle") else {
            panic!()
        };
        assert!(matches!(v.get("offerPrice"), Some(Value::Struct(_))));
        assert_eq!(v.get("catalogPrice"), Some(&Value::Null));
    }

    /// Enums (testFromConnectEnum): the values in everit's HashSet order; unions
    /// (testFromConnectUnion) as oneOf of the alternatives, each with its index.
    #[test]
    fn enums_and_unions() {
        let d = data();
        let e = SchemaBuilder::new(SchemaType::String)
            .parameter(JSON_TYPE_ENUM, "")
            .parameter(format!("{JSON_TYPE_ENUM}.one"), "one")
            .parameter(format!("{JSON_TYPE_ENUM}.two"), "two")
            .parameter(format!("{JSON_TYPE_ENUM}.three"), "three")
            .build();
        let t = text(&d, &e);
        assert_eq!(t, r#"{"enum":["one","two","three"]}"#);
        assert_eq!(
            read(&d, &t, r#""two""#),
            (
                with_version(
                    SchemaBuilder::new(SchemaType::String)
                        .parameter(JSON_TYPE_ENUM, "")
                        .parameter(format!("{JSON_TYPE_ENUM}.one"), "one")
                        .parameter(format!("{JSON_TYPE_ENUM}.two"), "two")
                        .parameter(format!("{JSON_TYPE_ENUM}.three"), "three")
                ),
                Value::String("two".into())
            )
        );
        let union = SchemaBuilder::struct_()
            .name(JSON_TYPE_ONE_OF)
            .field(
                format!("{JSON_TYPE_ONE_OF}.field.0"),
                Schema::optional_int32(),
            )
            .field(
                format!("{JSON_TYPE_ONE_OF}.field.1"),
                Schema::optional_string(),
            )
            .build();
        let t = text(&d, &union);
        assert_eq!(
            t,
            r#"{"oneOf":[{"type":"integer","connect.index":0,"connect.type":"int32"},{"type":"string","connect.index":1}]}"#
        );
        let v = Value::Struct(
            Struct::new(union.clone())
                .with(&format!("{JSON_TYPE_ONE_OF}.field.0"), 12)
                .unwrap(),
        );
        assert_eq!(payload(&d, &union, &v).as_deref(), Some("12"));
        let (s, read_v) = read(&d, &t, "12");
        assert_eq!(s.fields().len(), 2);
        assert_eq!(
            read_v,
            Value::Struct(Struct::from_checked_values(
                s,
                vec![Value::Int32(12), Value::Null]
            ))
        );
    }

    #[test]
    fn refused_schemas() {
        let d = data();
        for (text, needle) in [
            ("{}", "Variant"),
            (r#"{"type":"object","properties":{"a":true}}"#, "Variant"),
            (
                r#"{"type":"null"}"#,
                "Unsupported schema type org.everit.json.schema.NullSchema",
            ),
            (r#"{"not":{"type":"string"}}"#, "NotSchema"),
            (
                r#"{"type":"array","items":[{"type":"string"}]}"#,
                "items type",
            ),
        ] {
            let e = d.to_connect_schema(&load(text).unwrap(), None).unwrap_err();
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
        let variant = SchemaBuilder::struct_().name(VARIANT_NAME).build();
        assert!(d.from_connect_schema(&variant).is_err());
        // Defaults that JSON cannot hold.
        let nan = SchemaBuilder::new(SchemaType::Float64)
            .default_value(Value::Float64(f64::NAN))
            .build();
        assert!(d.from_connect_schema(&nan).is_err());
        // A value that does not match its schema.
        let e = d
            .from_connect_data(&Schema::int32(), &Value::String("x".into()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid type for INT32: class java.lang.String"
        );
    }

    /// A null value: Java's null with a required schema (no record), JSON null with an optional
    /// one, the default where there is one.
    #[test]
    fn nulls() {
        let d = data();
        assert_eq!(
            d.from_connect_data(&Schema::int32(), &Value::Null).unwrap(),
            None
        );
        assert_eq!(
            d.from_connect_data(&Schema::optional_int32(), &Value::Null)
                .unwrap(),
            Some(Node::Null)
        );
        let with_default = SchemaBuilder::new(SchemaType::Int32)
            .default_value(Value::Int32(7))
            .build();
        assert_eq!(
            d.from_connect_data(&with_default, &Value::Null).unwrap(),
            Some(Node::Int(7))
        );
    }
}
