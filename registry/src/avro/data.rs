//! Connect schemas to Avro schemas and back, as Confluent's `io.confluent.connect.avro.AvroData`
//! maps them, so a schema registered from here is the text Java's converter registers for the
//! same Connect schema, and a schema Java registered reads back into the Connect schema Java's
//! converter would give.
//!
//! Mapping (default settings, `connect.meta.data=true`):
//!
//! | Connect | Avro |
//! |---|---|
//! | INT8 / INT16 | `int` with `"connect.type": "int8"` / `"int16"` |
//! | INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES | `int`, `long`, `float`, `double`, `boolean`, `string`, `bytes` |
//! | Decimal / Date / Time / Timestamp | `bytes` + `decimal` (precision 64 unless `connect.decimal.precision`) / `int` + `date` / `int` + `time-millis` / `long` + `timestamp-millis` |
//! | STRUCT | `record` named after the schema, else `io.confluent.connect.avro.ConnectDefault`, `ConnectDefault2`, ... |
//! | ARRAY | `array` |
//! | MAP, string keys | `map`; other keys: `array` of `io.confluent.connect.avro.MapEntry` records (`key`, `value`) |
//! | optional | `["null", T]` (`[T, "null"]` when it has a non-null default) |
//!
//! and `connect.doc`, `connect.version`, `connect.parameters`, `connect.default`, `connect.name`
//! properties on every non-union schema (and `connect.parameters` on a record field that names a
//! type met in an earlier field, as current Confluent writes it). Avro enums read as strings with
//! `io.confluent.connect.avro.Enum` parameters; other unions as `io.confluent.connect.avro.Union`
//! structs (one optional field per branch).

use std::collections::HashSet;

use connect_api::data::logical::{DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME};
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{ConnectError, Result, Schema, Struct, Value};
use serde_json::{Map, Value as Json};

use super::schema::{AvroField, AvroSchema, Kind, Name, Props};

pub const NAMESPACE: &str = "io.confluent.connect.avro";
pub const DEFAULT_SCHEMA_NAME: &str = "ConnectDefault";
pub const DEFAULT_SCHEMA_FULL_NAME: &str = "io.confluent.connect.avro.ConnectDefault";
pub const MAP_ENTRY_TYPE_NAME: &str = "MapEntry";
pub const KEY_FIELD: &str = "key";
pub const VALUE_FIELD: &str = "value";
pub const CONNECT_NAME_PROP: &str = "connect.name";
pub const CONNECT_DOC_PROP: &str = "connect.doc";
pub const CONNECT_RECORD_DOC_PROP: &str = "connect.record.doc";
pub const CONNECT_ENUM_DOC_PROP: &str = "connect.enum.doc";
pub const CONNECT_VERSION_PROP: &str = "connect.version";
pub const CONNECT_DEFAULT_VALUE_PROP: &str = "connect.default";
pub const CONNECT_PARAMETERS_PROP: &str = "connect.parameters";
pub const CONNECT_INTERNAL_TYPE_NAME: &str = "connect.internal.type";
pub const AVRO_RECORD_DOC_PROP: &str = "io.confluent.connect.avro.record.doc";
pub const AVRO_ENUM_DOC_PREFIX_PROP: &str = "io.confluent.connect.avro.enum.doc.";
pub const AVRO_FIELD_DOC_PREFIX_PROP: &str = "io.confluent.connect.avro.field.doc.";
pub const AVRO_FIELD_DEFAULT_FLAG_PROP: &str = "io.confluent.connect.avro.field.default";
pub const AVRO_ENUM_DEFAULT_PREFIX_PROP: &str = "io.confluent.connect.avro.enum.default.";
pub const CONNECT_TYPE_PROP: &str = "connect.type";
pub const AVRO_TYPE_UNION: &str = "io.confluent.connect.avro.Union";
pub const AVRO_TYPE_ENUM: &str = "io.confluent.connect.avro.Enum";
const AVRO_PROP: &str = "avro";
const AVRO_LOGICAL_TYPE_PROP: &str = "logicalType";
const AVRO_LOGICAL_TIMESTAMP_MILLIS: &str = "timestamp-millis";
const AVRO_LOGICAL_TIME_MILLIS: &str = "time-millis";
const AVRO_LOGICAL_DATE: &str = "date";
const AVRO_LOGICAL_DECIMAL: &str = "decimal";
const AVRO_LOGICAL_DECIMAL_SCALE_PROP: &str = "scale";
const AVRO_LOGICAL_DECIMAL_PRECISION_PROP: &str = "precision";
pub const CONNECT_AVRO_FIXED_SIZE_PROP: &str = "connect.fixed.size";
pub const CONNECT_AVRO_DECIMAL_PRECISION_PROP: &str = "connect.decimal.precision";
const CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT: i64 = 64;

/// `AvroDataConfig`'s settings this mapping follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvroDataConfig {
    pub connect_meta_data: bool,
    pub enhanced_schema_support: bool,
    pub scrub_invalid_names: bool,
    pub discard_type_doc_default: bool,
    pub allow_optional_map_keys: bool,
    pub flatten_singleton_unions: bool,
    pub ignore_default_for_nullables: bool,
}

impl Default for AvroDataConfig {
    fn default() -> Self {
        AvroDataConfig {
            connect_meta_data: true,
            enhanced_schema_support: false,
            scrub_invalid_names: false,
            discard_type_doc_default: false,
            allow_optional_map_keys: false,
            flatten_singleton_unions: true,
            ignore_default_for_nullables: false,
        }
    }
}

/// Java's `AvroData` (without its caches: the converter caches whole conversions).
#[derive(Debug, Clone, Default)]
pub struct AvroData {
    pub config: AvroDataConfig,
}

/// State of one `fromConnectSchema` call: the unnamed-type counter, the schemas already
/// converted (a schema met again converts to the same Avro schema, which is then written by
/// name) and the Connect names of record fields' schemas met so far (Java's `seenNamedTypes`).
#[derive(Default)]
struct FromConnect {
    name_index: u32,
    converted: Vec<(Schema, AvroSchema)>,
    seen_names: HashSet<String>,
}

fn data_err(message: impl Into<String>) -> ConnectError {
    ConnectError::data(message)
}

fn split_name(full: &str) -> (Option<String>, String) {
    match full.rfind('.') {
        Some(i) => (Some(full[..i].to_owned()), full[i + 1..].to_owned()),
        None => (None, full.to_owned()),
    }
}

/// Java's `doScrubName`: a name valid in Avro, unchanged when it already is.
pub fn scrub_name(name: &str) -> String {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.is_empty()
        || (name.chars().all(ok_char) && !name.starts_with(|c: char| c.is_ascii_digit()))
    {
        return name.to_owned();
    }
    // URLEncoder.encode, then every character still not allowed becomes `_`.
    let mut encoded = String::with_capacity(name.len() * 3);
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                encoded.push(b as char)
            }
            b' ' => encoded.push('+'),
            _ => encoded.push_str(&format!("%{b:02X}")),
        }
    }
    if encoded.starts_with(|c: char| c.is_ascii_digit()) {
        encoded.insert(0, 'x');
    }
    encoded
        .chars()
        .map(|c| if ok_char(c) { c } else { '_' })
        .collect()
}

fn is_union_schema(schema: &Schema) -> bool {
    schema.name() == Some(AVRO_TYPE_UNION)
}

fn is_fixed_schema(schema: &Schema) -> bool {
    schema.schema_type() == SchemaType::Bytes
        && schema
            .parameters()
            .contains_key(CONNECT_AVRO_FIXED_SIZE_PROP)
}

/// `schema` as required (Java's `nonOptional`).
fn non_optional(schema: &Schema) -> Schema {
    if !schema.is_optional() {
        return schema.clone();
    }
    rebuild(schema, false, &[])
}

/// Java's `applyFieldLevelParams`: the schema of a record field whose `connect.parameters`
/// (written where the field refers to a named type by name, see [`AvroData::record_field`])
/// differ from its type's, with them added over the type's.
fn with_field_params(schema: Schema, field_params: &Map<String, Json>) -> Schema {
    let params: Vec<(String, String)> = field_params
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect();
    if params
        .iter()
        .all(|(k, v)| schema.parameters().get(k) == Some(v))
    {
        return schema;
    }
    rebuild(&schema, schema.is_optional(), &params)
}

/// A copy of `schema` with `optional` set as given and `extra` parameters added over its own.
fn rebuild(schema: &Schema, optional: bool, extra: &[(String, String)]) -> Schema {
    let mut b = match schema.schema_type() {
        SchemaType::Array => SchemaBuilder::array(schema.value_schema().expect("array").clone()),
        SchemaType::Map => SchemaBuilder::map(
            schema.key_schema().expect("map").clone(),
            schema.value_schema().expect("map").clone(),
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
    for (k, v) in schema
        .parameters()
        .iter()
        .chain(extra.iter().map(|(k, v)| (k, v)))
    {
        b = b.parameter(k.clone(), v.clone());
    }
    if let Some(d) = schema.default_value() {
        b = b.default_value(d.clone());
    }
    if optional { b.optional() } else { b }.build()
}

impl AvroData {
    pub fn new(config: AvroDataConfig) -> Self {
        AvroData { config }
    }

    fn scrub(&self, name: &str) -> String {
        if self.config.scrub_invalid_names {
            scrub_name(name)
        } else {
            name.to_owned()
        }
    }

    fn scrub_full(&self, name: &str) -> String {
        if !self.config.scrub_invalid_names {
            return name.to_owned();
        }
        match split_name(name) {
            (Some(ns), n) => format!(
                "{}.{}",
                ns.split('.').map(scrub_name).collect::<Vec<_>>().join("."),
                scrub_name(&n)
            ),
            (None, n) => scrub_name(&n),
        }
    }

    fn name_or_default(&self, ctx: &mut FromConnect, name: Option<&str>) -> Name {
        match name {
            Some(n) => {
                let (ns, n) = split_name(&self.scrub_full(n));
                Name {
                    name: n,
                    namespace: ns,
                }
            }
            None => {
                ctx.name_index += 1;
                let i = ctx.name_index;
                Name {
                    name: if i > 1 {
                        format!("{DEFAULT_SCHEMA_NAME}{i}")
                    } else {
                        DEFAULT_SCHEMA_NAME.to_owned()
                    },
                    namespace: Some(NAMESPACE.to_owned()),
                }
            }
        }
    }

    /// Java's `fromConnectSchema(schema)`.
    pub fn from_connect_schema(&self, schema: &Schema) -> Result<AvroSchema> {
        self.from_connect(schema, &mut FromConnect::default(), false)
    }

    fn from_connect(
        &self,
        schema: &Schema,
        ctx: &mut FromConnect,
        ignore_optional: bool,
    ) -> Result<AvroSchema> {
        if !is_union_schema(schema) && !schema.is_optional() {
            if let Some((_, a)) = ctx.converted.iter().find(|(s, _)| s == schema) {
                return Ok(a.clone());
            }
        }
        let params = schema.parameters();
        let mut connect_type = None;
        let mut base = match schema.schema_type() {
            SchemaType::Int8 => {
                connect_type = Some("int8");
                AvroSchema::new(Kind::Int)
            }
            SchemaType::Int16 => {
                connect_type = Some("int16");
                AvroSchema::new(Kind::Int)
            }
            SchemaType::Int32 => AvroSchema::new(Kind::Int),
            SchemaType::Int64 => AvroSchema::new(Kind::Long),
            SchemaType::Float32 => AvroSchema::new(Kind::Float),
            SchemaType::Float64 => AvroSchema::new(Kind::Double),
            SchemaType::Boolean => AvroSchema::new(Kind::Boolean),
            SchemaType::String => {
                if self.config.enhanced_schema_support && params.contains_key(AVRO_TYPE_ENUM) {
                    let prefix = format!("{AVRO_TYPE_ENUM}.");
                    let symbols: Vec<String> = params
                        .keys()
                        .filter_map(|k| k.strip_prefix(&prefix).map(str::to_owned))
                        .collect();
                    let names = self.name_or_default(ctx, schema.name());
                    let enum_name = &params[AVRO_TYPE_ENUM];
                    let (doc, default) = if self.config.discard_type_doc_default {
                        (params.get(CONNECT_ENUM_DOC_PROP).cloned(), None)
                    } else {
                        (
                            params
                                .get(&format!("{AVRO_ENUM_DOC_PREFIX_PROP}{}", names.name))
                                .cloned(),
                            params
                                .get(&format!("{AVRO_ENUM_DEFAULT_PREFIX_PROP}{}", names.name))
                                .cloned(),
                        )
                    };
                    AvroSchema::new(Kind::Enum {
                        name: Name::new(enum_name, None),
                        doc,
                        symbols,
                        default,
                    })
                } else {
                    AvroSchema::new(Kind::String)
                }
            }
            SchemaType::Bytes => {
                let mut base = if is_fixed_schema(schema) {
                    let size = params[CONNECT_AVRO_FIXED_SIZE_PROP]
                        .parse::<usize>()
                        .map_err(|e| data_err(format!("Invalid fixed size: {e}")))?;
                    AvroSchema::new(Kind::Fixed {
                        name: self.name_or_default(ctx, schema.name()),
                        doc: None,
                        size,
                    })
                } else {
                    AvroSchema::new(Kind::Bytes)
                };
                if schema
                    .name()
                    .is_some_and(|n| n.eq_ignore_ascii_case(DECIMAL_NAME))
                {
                    let scale = decimal_scale(schema)?;
                    base.add_prop(AVRO_LOGICAL_DECIMAL_SCALE_PROP, scale);
                    base.add_prop(
                        AVRO_LOGICAL_DECIMAL_PRECISION_PROP,
                        decimal_precision(schema)?,
                    );
                }
                base
            }
            SchemaType::Array => AvroSchema::new(Kind::Array(Box::new(self.from_connect(
                schema.value_schema().expect("array schema"),
                ctx,
                false,
            )?))),
            SchemaType::Map => {
                let key = schema.key_schema().expect("map schema");
                let value = schema.value_schema().expect("map schema");
                if key.schema_type() == SchemaType::String
                    && (!key.is_optional() || self.config.allow_optional_map_keys)
                {
                    AvroSchema::new(Kind::Map(Box::new(self.from_connect(value, ctx, false)?)))
                } else {
                    let (name, internal) = match schema.name() {
                        None => (
                            Name {
                                name: MAP_ENTRY_TYPE_NAME.to_owned(),
                                namespace: Some(NAMESPACE.to_owned()),
                            },
                            false,
                        ),
                        Some(n) => (self.name_or_default(ctx, Some(n)), true),
                    };
                    let fields = vec![
                        self.record_field(KEY_FIELD, key, None, ctx)?,
                        self.record_field(VALUE_FIELD, value, None, ctx)?,
                    ];
                    let mut entry = AvroSchema::new(Kind::Record {
                        name,
                        doc: None,
                        fields,
                    });
                    if internal {
                        entry.add_prop(CONNECT_INTERNAL_TYPE_NAME, MAP_ENTRY_TYPE_NAME);
                    }
                    AvroSchema::new(Kind::Array(Box::new(entry)))
                }
            }
            SchemaType::Struct => {
                if is_union_schema(schema) {
                    let mut branches = Vec::new();
                    if schema.is_optional() {
                        branches.push(AvroSchema::new(Kind::Null));
                    }
                    for f in schema.fields() {
                        branches.push(self.from_connect(&non_optional(&f.schema), ctx, true)?);
                    }
                    AvroSchema::new(Kind::Union(branches))
                } else if schema.is_optional() {
                    AvroSchema::new(Kind::Union(vec![
                        AvroSchema::new(Kind::Null),
                        self.from_connect(&non_optional(schema), ctx, false)?,
                    ]))
                } else {
                    let name = self.name_or_default(ctx, schema.name());
                    let doc = params
                        .get(if self.config.discard_type_doc_default {
                            CONNECT_RECORD_DOC_PROP
                        } else {
                            AVRO_RECORD_DOC_PROP
                        })
                        .cloned();
                    let mut fields = Vec::with_capacity(schema.fields().len());
                    for f in schema.fields() {
                        let field_doc = (!self.config.discard_type_doc_default)
                            .then(|| params.get(&format!("{AVRO_FIELD_DOC_PREFIX_PROP}{}", f.name)))
                            .flatten()
                            .map(String::as_str);
                        fields.push(self.record_field(
                            &self.scrub(&f.name),
                            &f.schema,
                            field_doc,
                            ctx,
                        )?);
                    }
                    AvroSchema::new(Kind::Record { name, doc, fields })
                }
            }
        };

        let mut finished = base.clone();
        if !matches!(base.kind, Kind::Union(_)) {
            if self.config.connect_meta_data {
                if let Some(doc) = schema.doc() {
                    base.add_prop(CONNECT_DOC_PROP, doc);
                }
                if let Some(v) = schema.version() {
                    base.add_prop(CONNECT_VERSION_PROP, v);
                }
                let p = self.parameters_json(params);
                if !p.is_empty() {
                    base.add_prop(CONNECT_PARAMETERS_PROP, Json::Object(p));
                }
                if let Some(d) = schema.default_value() {
                    if self.config.discard_type_doc_default
                        || !params.contains_key(AVRO_FIELD_DEFAULT_FLAG_PROP)
                    {
                        base.add_prop(CONNECT_DEFAULT_VALUE_PROP, self.default_to_json(schema, d)?);
                    }
                }
                if let Some(n) = schema.name() {
                    base.add_prop(CONNECT_NAME_PROP, n);
                }
                if let Some(t) = connect_type {
                    base.add_prop(CONNECT_TYPE_PROP, t);
                }
            }
            let mut force_legacy_decimal = false;
            match schema.name() {
                Some(n) if n.eq_ignore_ascii_case(DECIMAL_NAME) => {
                    let precision = decimal_precision(schema)?;
                    let scale = decimal_scale(schema)?;
                    if scale < 0 || i64::from(scale) > precision {
                        force_legacy_decimal = true;
                    } else {
                        base.add_prop(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DECIMAL);
                        base.add_prop(AVRO_LOGICAL_DECIMAL_PRECISION_PROP, precision);
                        base.add_prop(AVRO_LOGICAL_DECIMAL_SCALE_PROP, scale);
                    }
                }
                Some(n) if n.eq_ignore_ascii_case(TIME_NAME) => {
                    base.add_prop(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_TIME_MILLIS)
                }
                Some(n) if n.eq_ignore_ascii_case(TIMESTAMP_NAME) => {
                    base.add_prop(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_TIMESTAMP_MILLIS)
                }
                Some(n) if n.eq_ignore_ascii_case(DATE_NAME) => {
                    base.add_prop(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DATE)
                }
                _ => {}
            }
            if force_legacy_decimal {
                base.add_prop(AVRO_LOGICAL_TYPE_PROP, AVRO_LOGICAL_DECIMAL);
            }
            for (k, v) in params {
                if k.starts_with(AVRO_PROP) {
                    base.add_prop(k, v.as_str());
                }
            }
            finished = if ignore_optional {
                base
            } else {
                self.maybe_optional(schema, base)
            };
        }
        if !schema.is_optional() {
            ctx.converted.push((schema.clone(), finished.clone()));
        }
        Ok(finished)
    }

    fn maybe_optional(&self, schema: &Schema, base: AvroSchema) -> AvroSchema {
        if !schema.is_optional() {
            return base;
        }
        let null = AvroSchema::new(Kind::Null);
        AvroSchema::new(Kind::Union(if schema.default_value().is_some() {
            vec![base, null]
        } else {
            vec![null, base]
        }))
    }

    /// Java's `addAvroRecordField`. A field whose schema's name was met in an earlier field
    /// refers to that named type by name, which carries none of this schema's own
    /// `connect.parameters`: Confluent (since 2026-08, not Apicurio's copy) then writes them on
    /// the field, and [`with_field_params`] puts them back when reading.
    fn record_field(
        &self,
        name: &str,
        schema: &Schema,
        doc: Option<&str>,
        ctx: &mut FromConnect,
    ) -> Result<AvroField> {
        let seen_before = schema
            .name()
            .is_some_and(|n| !ctx.seen_names.insert(self.scrub_full(n)));
        let avro = self.from_connect(schema, ctx, false)?;
        let mut default = match schema.default_value() {
            Some(d) => Some(self.default_to_json(schema, d)?),
            None => schema.is_optional().then_some(Json::Null),
        };
        // Avro refuses a default that does not match the field's (first union) type; Java
        // then keeps the field without one.
        if let Some(d) = &default {
            if !default_matches(&avro, d) {
                tracing::warn!(field = name, "Ignoring invalid default for field {name}");
                default = None;
            }
        }
        let mut props = Props::new();
        if self.config.connect_meta_data && seen_before && is_named_avro_type(&avro) {
            let p = self.parameters_json(schema.parameters());
            if !p.is_empty() {
                props.insert(CONNECT_PARAMETERS_PROP.to_owned(), Json::Object(p));
            }
        }
        Ok(AvroField {
            name: name.to_owned(),
            schema: avro,
            doc: if self.config.discard_type_doc_default {
                schema.doc().map(str::to_owned)
            } else {
                doc.map(str::to_owned)
            },
            default,
            props,
        })
    }

    fn parameters_json(&self, params: &indexmap::IndexMap<String, String>) -> Map<String, Json> {
        params
            .iter()
            .filter(|(k, _)| {
                self.config.discard_type_doc_default || k.as_str() != AVRO_FIELD_DEFAULT_FLAG_PROP
            })
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect()
    }

    /// Java's `defaultValueFromConnect`: a Connect default as Avro's JSON default.
    fn default_to_json(&self, schema: &Schema, value: &Value) -> Result<Json> {
        Ok(match (schema.schema_type(), value) {
            (_, Value::Null) => Json::Null,
            (SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 | SchemaType::Int64, v) => {
                Json::from(v.as_i64().ok_or_else(|| invalid_default(schema))?)
            }
            (SchemaType::Float32, Value::Float32(f)) => float_json(float_as_double(*f)),
            (SchemaType::Float64, Value::Float64(f)) => float_json(*f),
            (SchemaType::Boolean, Value::Boolean(b)) => Json::Bool(*b),
            (SchemaType::String, Value::String(s)) => Json::String(s.clone()),
            (SchemaType::Bytes, Value::Bytes(b)) => {
                Json::String(b.iter().map(|&c| char::from(c)).collect())
            }
            (SchemaType::Array, Value::Array(items)) => {
                let elem = schema.value_schema().expect("array schema");
                Json::Array(
                    items
                        .iter()
                        .map(|v| self.default_to_json(elem, v))
                        .collect::<Result<_>>()?,
                )
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let (ks, vs) = (
                    schema.key_schema().expect("map schema"),
                    schema.value_schema().expect("map schema"),
                );
                if ks.schema_type() == SchemaType::String
                    && (!ks.is_optional() || self.config.allow_optional_map_keys)
                {
                    let mut m = Map::new();
                    for (k, v) in entries {
                        let k = k.as_str().ok_or_else(|| invalid_default(schema))?;
                        m.insert(k.to_owned(), self.default_to_json(vs, v)?);
                    }
                    Json::Object(m)
                } else {
                    Json::Array(
                        entries
                            .iter()
                            .map(|(k, v)| {
                                Ok(Json::Array(vec![
                                    self.default_to_json(ks, k)?,
                                    self.default_to_json(vs, v)?,
                                ]))
                            })
                            .collect::<Result<_>>()?,
                    )
                }
            }
            (SchemaType::Struct, Value::Struct(s)) => {
                let union = is_union_schema(schema);
                let mut m = Map::new();
                for (f, v) in schema.fields().iter().zip(s.values()) {
                    let v = field_value(&f.schema, v);
                    let j = self.default_to_json(&f.schema, v)?;
                    if union {
                        return Ok(j);
                    }
                    m.insert(self.scrub(&f.name), j);
                }
                Json::Object(m)
            }
            _ => return Err(invalid_default(schema)),
        })
    }

    /// Java's `toConnectSchema(avroSchema, version)`: the Connect schema of records written
    /// with `avro`; `version` (the registry's) when the schema has no `connect.version`.
    pub fn to_connect_schema(&self, avro: &AvroSchema, version: Option<i32>) -> Result<Schema> {
        self.to_connect(avro, false, None, None, version)
    }

    fn to_connect(
        &self,
        avro: &AvroSchema,
        force_optional: bool,
        field_default: Option<&Json>,
        doc_default: Option<&str>,
        version: Option<i32>,
    ) -> Result<Schema> {
        let connect_type = avro.prop_str(CONNECT_TYPE_PROP);
        let logical = avro.prop_str(AVRO_LOGICAL_TYPE_PROP);
        let meta = self.config.connect_meta_data;
        let discard = self.config.discard_type_doc_default;
        let mut b = match &avro.kind {
            Kind::Boolean => SchemaBuilder::new(SchemaType::Boolean),
            Kind::Bytes | Kind::Fixed { .. } => {
                let mut b = if logical.is_some_and(|l| l.eq_ignore_ascii_case(AVRO_LOGICAL_DECIMAL))
                {
                    let scale = avro
                        .props
                        .get(AVRO_LOGICAL_DECIMAL_SCALE_PROP)
                        .and_then(Json::as_i64)
                        .unwrap_or(0) as i32;
                    let mut b = connect_api::data::logical::decimal_builder(scale);
                    if let Some(p) = avro.props.get(AVRO_LOGICAL_DECIMAL_PRECISION_PROP) {
                        let p = p.as_i64().ok_or_else(|| {
                            data_err(
                                "precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal",
                            )
                        })?;
                        if p != CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT {
                            b = b.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, p.to_string());
                        }
                    }
                    b
                } else {
                    SchemaBuilder::new(SchemaType::Bytes)
                };
                if let Kind::Fixed { size, .. } = &avro.kind {
                    b = b.parameter(CONNECT_AVRO_FIXED_SIZE_PROP, size.to_string());
                }
                b
            }
            Kind::Double => SchemaBuilder::new(SchemaType::Float64),
            Kind::Float => SchemaBuilder::new(SchemaType::Float32),
            Kind::Int => match (connect_type, logical) {
                (None, None) => SchemaBuilder::new(SchemaType::Int32),
                (_, Some(l)) if l.eq_ignore_ascii_case(AVRO_LOGICAL_DATE) => {
                    connect_api::data::logical::date_builder()
                }
                (_, Some(l)) if l.eq_ignore_ascii_case(AVRO_LOGICAL_TIME_MILLIS) => {
                    connect_api::data::logical::time_builder()
                }
                (_, Some(_)) => SchemaBuilder::new(SchemaType::Int32),
                (Some("int8"), None) => SchemaBuilder::new(SchemaType::Int8),
                (Some("int16"), None) => SchemaBuilder::new(SchemaType::Int16),
                (Some(other), None) => {
                    // Java maps the codes of every Connect type; only int8/int16 are ints.
                    return Err(data_err(format!(
                        "Connect type annotation {other} is not valid for an Avro int field"
                    )));
                }
            },
            Kind::Long => {
                if logical.is_some_and(|l| l.eq_ignore_ascii_case(AVRO_LOGICAL_TIMESTAMP_MILLIS)) {
                    connect_api::data::logical::timestamp_builder()
                } else {
                    SchemaBuilder::new(SchemaType::Int64)
                }
            }
            Kind::String => SchemaBuilder::new(SchemaType::String),
            Kind::Array(items) => {
                if let Some(entry) = map_entry(items) {
                    let (k, v) = entry?;
                    SchemaBuilder::map(
                        self.to_connect(&k.schema, false, None, None, None)?,
                        self.to_connect(&v.schema, false, None, None, None)?,
                    )
                } else {
                    SchemaBuilder::array(self.to_connect(items, false, None, None, None)?)
                }
            }
            Kind::Map(values) => SchemaBuilder::map(
                Schema::string(),
                self.to_connect(values, false, None, None, None)?,
            ),
            Kind::Record { doc, fields, .. } => {
                let mut b = SchemaBuilder::struct_();
                if !discard && meta {
                    if let Some(d) = doc {
                        b = b.parameter(AVRO_RECORD_DOC_PROP, d.clone());
                    }
                }
                for f in fields {
                    if !discard && meta {
                        if let Some(d) = &f.doc {
                            b = b.parameter(format!("{AVRO_FIELD_DOC_PREFIX_PROP}{}", f.name), d);
                        }
                    }
                    let mut fs = self.to_connect(
                        &f.schema,
                        false,
                        f.default.as_ref(),
                        f.doc.as_deref(),
                        None,
                    )?;
                    if let (true, Some(Json::Object(p))) =
                        (meta, f.props.get(CONNECT_PARAMETERS_PROP))
                    {
                        fs = with_field_params(fs, p);
                    }
                    b = b.try_field(f.name.clone(), fs)?;
                }
                b
            }
            Kind::Enum {
                name,
                doc,
                symbols,
                default,
            } => {
                let mut b = SchemaBuilder::new(SchemaType::String);
                if meta {
                    if let Some(d) = doc {
                        b = b.parameter(
                            if discard {
                                CONNECT_ENUM_DOC_PROP.to_owned()
                            } else {
                                format!("{AVRO_ENUM_DOC_PREFIX_PROP}{}", name.name)
                            },
                            d.clone(),
                        );
                    }
                    if !discard {
                        if let Some(d) = default {
                            b = b.parameter(
                                format!("{AVRO_ENUM_DEFAULT_PREFIX_PROP}{}", name.name),
                                d.clone(),
                            );
                        }
                    }
                }
                b = b.parameter(AVRO_TYPE_ENUM, name.full());
                for s in symbols {
                    b = b.parameter(format!("{AVRO_TYPE_ENUM}.{s}"), s.clone());
                }
                b
            }
            Kind::Union(branches) => {
                if branches.len() == 1 && self.config.flatten_singleton_unions {
                    return self.to_connect(&branches[0], false, None, doc_default, None);
                }
                if branches.len() == 2 && branches.iter().any(AvroSchema::is_null) {
                    let member = branches
                        .iter()
                        .find(|b| !b.is_null())
                        .expect("two branches");
                    return self.to_connect(member, true, None, doc_default, None);
                }
                let mut b = SchemaBuilder::struct_().name(AVRO_TYPE_UNION);
                let mut names = std::collections::HashSet::new();
                for (i, member) in branches.iter().enumerate() {
                    if member.is_null() {
                        b = b.optional();
                        continue;
                    }
                    let field = self.union_member_field_name(member, i);
                    if !names.insert(field.clone()) {
                        return Err(data_err(
                            "Multiple union schemas map to the Connect union field name",
                        ));
                    }
                    b = b.field(field, self.to_connect(member, true, None, None, None)?);
                }
                b
            }
            Kind::Null => {
                return Err(data_err(
                    "Standalone null schemas are not supported by this converter",
                ));
            }
        };

        if discard {
            let doc = doc_default
                .map(str::to_owned)
                .or_else(|| avro_doc(avro))
                .or_else(|| avro.prop_str(CONNECT_DOC_PROP).map(str::to_owned));
            if let Some(d) = doc {
                b = b.doc(d);
            }
            if meta {
                if let Some(d) = avro_doc(avro) {
                    b = b.parameter(CONNECT_RECORD_DOC_PROP, d);
                }
            }
        } else if let (true, Some(d)) = (meta, avro.prop_str(CONNECT_DOC_PROP)) {
            b = b.doc(d);
        }

        let own_version = match avro.props.get(CONNECT_VERSION_PROP) {
            Some(v) => Some(
                v.as_i64()
                    .ok_or_else(|| data_err(format!("Invalid Connect version found: {v}")))?
                    as i32,
            ),
            None => version,
        };
        if let Some(v) = own_version.filter(|v| *v >= 0) {
            match b.current_version() {
                Some(existing) if existing != v => {
                    return Err(data_err(format!(
                        "Mismatched versions: version already added to SchemaBuilder ({existing}) differs from version in source schema ({v})"
                    )));
                }
                Some(_) => {}
                None => b = b.version(v),
            }
        }

        if meta {
            if let Some(p) = avro.props.get(CONNECT_PARAMETERS_PROP) {
                let Json::Object(p) = p else {
                    return Err(data_err(format!(
                        "Expected JSON object for schema parameters but found: {p}"
                    )));
                };
                for (k, v) in p {
                    let Json::String(v) = v else {
                        return Err(data_err(format!(
                            "Expected schema parameter values to be strings but found: {v}"
                        )));
                    };
                    b = b.parameter(k.clone(), v.clone());
                }
            }
        }
        for (k, v) in &avro.props {
            if k.starts_with(AVRO_PROP) {
                b = b.parameter(
                    k.clone(),
                    match v {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    },
                );
            }
        }

        let connect_default = avro.props.get(CONNECT_DEFAULT_VALUE_PROP);
        let mut default = field_default;
        if default.is_none() {
            default = connect_default;
        } else if !discard && meta && connect_default.is_none() {
            b = b.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true");
        }

        let name = match avro.props.get(CONNECT_NAME_PROP) {
            Some(Json::String(n)) => Some(n.clone()),
            Some(other) => return Err(data_err(format!("Invalid schema name: {other}"))),
            None => match &avro.kind {
                Kind::Record { name, .. } | Kind::Enum { name, .. } => Some(name.full()),
                Kind::Fixed { name, .. } if b.current_name() != Some(DECIMAL_NAME) => {
                    Some(name.full())
                }
                _ => None,
            },
        };
        if let Some(n) = name.filter(|n| !n.starts_with(DEFAULT_SCHEMA_FULL_NAME)) {
            match b.current_name() {
                Some(existing) if existing != n => {
                    return Err(data_err(format!(
                        "Mismatched names: name already added to SchemaBuilder ({existing}) differs from name in source schema ({n})"
                    )));
                }
                Some(_) => {}
                None => b = b.name(n),
            }
        }
        if force_optional {
            b = b.optional();
        }
        if let Some(d) = default {
            // Built without the default first: the default converts against the schema.
            let without = b.clone().build();
            match self.default_from_json(&without, avro, d) {
                Ok(v) => b = b.default_value(v),
                Err(e) => {
                    tracing::warn!(error = %e, "Ignoring invalid default for schema {}", avro.name().map(Name::full).unwrap_or_default())
                }
            }
        }
        Ok(b.build())
    }

    fn union_member_field_name(&self, member: &AvroSchema, _index: usize) -> String {
        match member.name() {
            Some(n) if self.config.enhanced_schema_support => n.full(),
            Some(n) => n.name.clone(),
            None => member.type_name().to_owned(),
        }
    }

    /// Java's `defaultValueFromAvro`: an Avro JSON default as a Connect value of `schema`.
    fn default_from_json(&self, schema: &Schema, avro: &AvroSchema, json: &Json) -> Result<Value> {
        let bad = || data_err(format!("Invalid default {json} for {}", avro.type_name()));
        if json.is_null() {
            return Ok(Value::Null);
        }
        Ok(match &avro.kind {
            Kind::Int => {
                let i = json.as_i64().ok_or_else(bad)?;
                match schema.schema_type() {
                    SchemaType::Int8 => Value::Int8(i as i8),
                    SchemaType::Int16 => Value::Int16(i as i16),
                    SchemaType::Int32 => Value::Int32(i as i32),
                    _ => return Err(bad()),
                }
            }
            Kind::Long => Value::Int64(json.as_i64().ok_or_else(bad)?),
            Kind::Float => Value::Float32(json.as_f64().ok_or_else(bad)? as f32),
            Kind::Double => Value::Float64(json.as_f64().ok_or_else(bad)?),
            Kind::Boolean => Value::Boolean(json.as_bool().ok_or_else(bad)?),
            Kind::Null => Value::Null,
            Kind::String | Kind::Enum { .. } => Value::String(match json {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            }),
            Kind::Bytes | Kind::Fixed { .. } => {
                let s = json.as_str().ok_or_else(bad)?;
                Value::Bytes(
                    s.chars()
                        .map(|c| u8::try_from(u32::from(c)).map_err(|_| bad()))
                        .collect::<Result<_>>()?,
                )
            }
            Kind::Array(items) => {
                let elem = schema.value_schema().ok_or_else(bad)?;
                if let (Some(Ok((k, v))), Some(ks)) = (map_entry(items), schema.key_schema()) {
                    // A map default written as an array of [key, value] pairs.
                    let mut out = Vec::new();
                    for e in json.as_array().ok_or_else(bad)? {
                        let pair = e.as_array().filter(|p| p.len() == 2).ok_or_else(bad)?;
                        out.push((
                            self.default_from_json(ks, &k.schema, &pair[0])?,
                            self.default_from_json(elem, &v.schema, &pair[1])?,
                        ));
                    }
                    return Ok(Value::Map(out));
                }
                Value::Array(
                    json.as_array()
                        .ok_or_else(|| data_err("Invalid JSON for array default value"))?
                        .iter()
                        .map(|e| self.default_from_json(elem, items, e))
                        .collect::<Result<_>>()?,
                )
            }
            Kind::Map(values) => {
                let vs = schema.value_schema().ok_or_else(bad)?;
                Value::Map(
                    json.as_object()
                        .ok_or_else(|| data_err("Invalid JSON for map default value"))?
                        .iter()
                        .map(|(k, v)| {
                            Ok((
                                Value::String(k.clone()),
                                self.default_from_json(vs, values, v)?,
                            ))
                        })
                        .collect::<Result<_>>()?,
                )
            }
            Kind::Record { fields, .. } => {
                let o = json
                    .as_object()
                    .ok_or_else(|| data_err("Invalid JSON for record default value"))?;
                let mut values = Vec::with_capacity(fields.len());
                for (af, cf) in fields.iter().zip(schema.fields()) {
                    values.push(match o.get(&af.name) {
                        Some(j) => self.default_from_json(&cf.schema, &af.schema, j)?,
                        None => Value::Null,
                    });
                }
                Value::Struct(Struct::from_checked_values(schema.clone(), values))
            }
            Kind::Union(branches) => {
                let first = branches.first().ok_or_else(bad)?;
                if first.is_null() {
                    Value::Null
                } else if is_union_schema(schema) {
                    let field = self.union_member_field_name(first, 0);
                    let mut s = Struct::new(schema.clone());
                    let fs = schema.field(&field).ok_or_else(bad)?.schema.clone();
                    s.put(&field, self.default_from_json(&fs, first, json)?)?;
                    Value::Struct(s)
                } else {
                    self.default_from_json(schema, first, json)?
                }
            }
        })
    }
}

/// A record field's value as Java's `Struct.get(field)` gives it: its schema's default when unset.
pub fn field_value<'a>(schema: &'a Schema, value: &'a Value) -> &'a Value {
    match (value, schema.default_value()) {
        (Value::Null, Some(d)) => d,
        _ => value,
    }
}

/// The `key` and `value` fields of a map-entry record (Java's `isMapEntry`), if `items` is one.
fn map_entry(items: &AvroSchema) -> Option<Result<(&AvroField, &AvroField)>> {
    let Kind::Record { name, fields, .. } = &items.kind else {
        return None;
    };
    let is_entry = (name.namespace.as_deref() == Some(NAMESPACE)
        && name.name == MAP_ENTRY_TYPE_NAME)
        || items.prop_str(CONNECT_INTERNAL_TYPE_NAME) == Some(MAP_ENTRY_TYPE_NAME);
    if !is_entry {
        return None;
    }
    let k = fields.iter().find(|f| f.name == KEY_FIELD);
    let v = fields.iter().find(|f| f.name == VALUE_FIELD);
    Some(match (fields.len(), k, v) {
        (2, Some(k), Some(v)) => Ok((k, v)),
        _ => Err(data_err(
            "Found map encoded as array of key-value pairs, but array elements do not match the expected format.",
        )),
    })
}

/// Java's `isNamedAvroType`: a record, enum or fixed, or a union with one among its branches
/// (a type written by name where it is met again).
fn is_named_avro_type(avro: &AvroSchema) -> bool {
    match &avro.kind {
        Kind::Union(branches) => branches.iter().any(|b| b.name().is_some()),
        _ => avro.name().is_some(),
    }
}

fn avro_doc(avro: &AvroSchema) -> Option<String> {
    match &avro.kind {
        Kind::Record { doc, .. } | Kind::Enum { doc, .. } | Kind::Fixed { doc, .. } => doc.clone(),
        _ => None,
    }
}

fn decimal_scale(schema: &Schema) -> Result<i32> {
    schema
        .parameters()
        .get("scale")
        .map(|s| s.parse::<i32>())
        .transpose()
        .map_err(|e| data_err(format!("Invalid Decimal scale: {e}")))
        .map(Option::unwrap_or_default)
}

fn decimal_precision(schema: &Schema) -> Result<i64> {
    schema
        .parameters()
        .get(CONNECT_AVRO_DECIMAL_PRECISION_PROP)
        .map(|s| s.parse::<i64>())
        .transpose()
        .map_err(|e| data_err(format!("Invalid Decimal precision: {e}")))
        .map(|p| p.unwrap_or(CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT))
}

fn invalid_default(schema: &Schema) -> ConnectError {
    data_err(format!(
        "Invalid type used for default value of {} field",
        schema.schema_type().json_name().to_ascii_uppercase()
    ))
}

/// A float default as a JSON number (written by `Double.toString`, as Jackson writes it).
fn float_json(f: f64) -> Json {
    serde_json::Number::from_f64(f)
        .map(Json::Number)
        .unwrap_or(Json::Null)
}

/// The double whose `Double.toString` is `Float.toString(f)`: Java writes a FLOAT32 default
/// from a `FloatNode`, `0.1` for `0.1f`, not the widened double's `0.10000000149011612`.
fn float_as_double(f: f32) -> f64 {
    f.to_string()
        .parse()
        .expect("a float's text reads back as a double")
}

/// Whether Avro accepts `default` for a field of `schema` (a union's default matches its
/// first branch).
fn default_matches(schema: &AvroSchema, default: &Json) -> bool {
    let schema = match &schema.kind {
        Kind::Union(b) => match b.first() {
            Some(first) => first,
            None => return false,
        },
        _ => schema,
    };
    match (&schema.kind, default) {
        (Kind::Null, Json::Null) => true,
        (_, Json::Null) => false,
        (Kind::Boolean, Json::Bool(_)) => true,
        (Kind::Int | Kind::Long, Json::Number(n)) => n.is_i64() || n.is_u64(),
        (Kind::Float | Kind::Double, Json::Number(_)) => true,
        (Kind::String | Kind::Bytes | Kind::Fixed { .. } | Kind::Enum { .. }, Json::String(_)) => {
            true
        }
        (Kind::Array(_), Json::Array(_)) => true,
        (Kind::Map(_) | Kind::Record { .. }, Json::Object(_)) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::logical;

    fn text(schema: &Schema) -> String {
        AvroData::default()
            .from_connect_schema(schema)
            .unwrap()
            .to_json()
    }

    #[test]
    fn primitives_and_logical_types_as_confluent_writes_them() {
        assert_eq!(text(&Schema::int32()), r#""int""#);
        assert_eq!(
            text(&Schema::int8()),
            r#"{"type":"int","connect.type":"int8"}"#
        );
        assert_eq!(text(&Schema::optional_string()), r#"["null","string"]"#);
        assert_eq!(
            text(&logical::decimal_builder(2).build()),
            r#"{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}"#
        );
        assert_eq!(
            text(&logical::timestamp_builder().build()),
            r#"{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}"#
        );
    }

    #[test]
    fn structs_get_default_names_and_optional_fields_null_defaults() {
        let inner = SchemaBuilder::struct_()
            .field("x", Schema::int64())
            .optional()
            .build();
        let s = SchemaBuilder::struct_()
            .field("a", Schema::string())
            .field("b", Schema::optional_int32())
            .field("c", inner)
            .field(
                "m",
                SchemaBuilder::map(Schema::int32(), Schema::string()).build(),
            )
            .build();
        assert_eq!(
            text(&s),
            r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":"string"},{"name":"b","type":["null","int"],"default":null},{"name":"c","type":["null",{"type":"record","name":"ConnectDefault2","fields":[{"name":"x","type":"long"}]}],"default":null},{"name":"m","type":{"type":"array","items":{"type":"record","name":"MapEntry","fields":[{"name":"key","type":"int"},{"name":"value","type":"string"}]}}}]}"#
        );
    }

    #[test]
    fn round_trips_connect_schemas() {
        let data = AvroData::default();
        let s = SchemaBuilder::struct_()
            .name("com.example.Row")
            .version(3)
            .doc("a row")
            .field("id", Schema::int64())
            .field("small", Schema::int16())
            .field(
                "price",
                logical::decimal_builder(3)
                    .parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, "10")
                    .optional()
                    .build(),
            )
            .field("day", logical::date_builder().build())
            .field(
                "tags",
                SchemaBuilder::array(Schema::string()).optional().build(),
            )
            .field(
                "attrs",
                SchemaBuilder::map(Schema::string(), Schema::optional_float64()).build(),
            )
            .field(
                "n",
                SchemaBuilder::new(SchemaType::Int32)
                    .default_value(Value::Int32(7))
                    .build(),
            )
            .build();
        let avro = data.from_connect_schema(&s).unwrap();
        let back = data
            .to_connect_schema(&AvroSchema::parse(&avro.to_json()).unwrap(), None)
            .unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn a_named_type_met_again_keeps_its_parameters_on_the_field() {
        // Confluent's testFieldLevelParamsRepeatedSharedType.
        let item = |tag: &str| {
            SchemaBuilder::struct_()
                .name("Item")
                .parameter("tag", tag)
                .field("name", Schema::optional_string())
                .build()
        };
        let s = SchemaBuilder::struct_()
            .name("Container")
            .field("primary", item("2"))
            .field("secondary", item("3"))
            .field("third", item("2"))
            .build();
        let data = AvroData::default();
        let avro = data.from_connect_schema(&s).unwrap();
        assert_eq!(
            avro.to_json(),
            r#"{"type":"record","name":"Container","fields":[{"name":"primary","type":{"type":"record","name":"Item","fields":[{"name":"name","type":["null","string"],"default":null}],"connect.parameters":{"tag":"2"},"connect.name":"Item"}},{"name":"secondary","type":"Item","connect.parameters":{"tag":"3"}},{"name":"third","type":"Item","connect.parameters":{"tag":"2"}}],"connect.name":"Container"}"#
        );
        let back = data
            .to_connect_schema(&AvroSchema::parse(&avro.to_json()).unwrap(), None)
            .unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn enums_and_unions_read_as_confluent_reads_them() {
        let avro = AvroSchema::parse(
            r#"{"type":"record","name":"R","fields":[{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},{"name":"u","type":["null","int","string"]}]}"#,
        )
        .unwrap();
        let s = AvroData::default()
            .to_connect_schema(&avro, Some(4))
            .unwrap();
        assert_eq!(s.name(), Some("R"));
        assert_eq!(s.version(), Some(4));
        let e = &s.field("e").unwrap().schema;
        assert_eq!(e.parameters()[AVRO_TYPE_ENUM], "Color");
        assert_eq!(
            e.parameters().keys().collect::<Vec<_>>(),
            [
                AVRO_TYPE_ENUM,
                "io.confluent.connect.avro.Enum.RED",
                "io.confluent.connect.avro.Enum.GREEN"
            ]
        );
        let u = &s.field("u").unwrap().schema;
        assert_eq!(u.name(), Some(AVRO_TYPE_UNION));
        assert!(u.is_optional());
        assert_eq!(
            u.fields()
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            ["int", "string"]
        );
    }

    #[test]
    fn scrubs_invalid_names_only_when_asked() {
        assert_eq!(scrub_name("ok_name"), "ok_name");
        assert_eq!(scrub_name("1abc"), "x1abc");
        assert_eq!(scrub_name("a-b c"), "a_b_c");
        assert_eq!(scrub_name("a$b"), "a_24b");
    }
}
