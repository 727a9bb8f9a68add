//! Confluent's `ProtobufData`: a message descriptor → Connect schema (`toConnectSchema`), and
//! values both ways (`fromConnectData` onto the descriptor of the schema
//! [`super::schema::from_connect_schema`] wrote, `toConnectData` from a decoded message).

use std::borrow::Cow;

use connect_api::data::logical::{
    self, DATE_NAME, DECIMAL_NAME, Decimal, TIME_NAME, TIMESTAMP_NAME,
};
use connect_api::data::{SchemaBuilder, SchemaType};
use connect_api::{ConnectError, Result, Schema, Struct, Value};
use protox::prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor, OneofDescriptor,
    ReflectMessage, Syntax, Value as PValue,
};

use super::schema::{
    CONNECT_PRECISION_PROP, CONNECT_TYPE_PROP, DATE_TYPE, DECIMAL_TYPE, MAP_ENTRY_SUFFIX,
    TIME_TYPE, TIMESTAMP_TYPE, TYPE_ENUM, TYPE_PROP, TYPE_TAG, TYPE_UNION, TYPE_WRAPPER, WRAPPERS,
    scrub_name, to_map_field,
};

pub use super::data_config::ProtobufDataConfig;

const MILLIS_PER_DAY: i64 = 86_400_000;

fn wrapper_schema(full_name: &str) -> Option<SchemaBuilder> {
    let t = match full_name {
        "google.protobuf.DoubleValue" => SchemaType::Float64,
        "google.protobuf.FloatValue" => SchemaType::Float32,
        "google.protobuf.Int64Value"
        | "google.protobuf.UInt64Value"
        | "google.protobuf.UInt32Value" => SchemaType::Int64,
        "google.protobuf.Int32Value" => SchemaType::Int32,
        "google.protobuf.BoolValue" => SchemaType::Boolean,
        "google.protobuf.StringValue" => SchemaType::String,
        "google.protobuf.BytesValue" => SchemaType::Bytes,
        _ => return None,
    };
    Some(SchemaBuilder::new(t))
}

/// The `(confluent.field_meta)` params of a field.
fn meta_params(fd: &FieldDescriptor) -> Vec<(String, String)> {
    let pool = fd.parent_pool();
    let Some(ext) = pool.get_extension_by_name("confluent.field_meta") else {
        return Vec::new();
    };
    let options = fd.options();
    if !options.has_extension(&ext) {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let PValue::Message(meta) = options.get_extension(&ext).as_ref() {
        if let Some(PValue::Map(params)) = meta.get_field_by_name("params").as_deref() {
            for (k, v) in params {
                if let (MapKey::String(k), PValue::String(v)) = (k, v) {
                    out.push((k.clone(), v.clone()));
                }
            }
        }
    }
    out
}

fn meta_param(fd: &FieldDescriptor, key: &str) -> Option<String> {
    meta_params(fd)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::Double => "double",
        Kind::Float => "float",
        Kind::Int32 => "int32",
        Kind::Int64 => "int64",
        Kind::Uint32 => "uint32",
        Kind::Uint64 => "uint64",
        Kind::Sint32 => "sint32",
        Kind::Sint64 => "sint64",
        Kind::Fixed32 => "fixed32",
        Kind::Fixed64 => "fixed64",
        Kind::Sfixed32 => "sfixed32",
        Kind::Sfixed64 => "sfixed64",
        Kind::Bool => "bool",
        Kind::String => "string",
        Kind::Bytes => "bytes",
        Kind::Message(_) => "message",
        Kind::Enum(_) => "enum",
    }
}

/// Java's `isMapDescriptor`: a repeated `…Entry` message of exactly `key` and `value`.
fn is_map_field(fd: &FieldDescriptor) -> bool {
    if fd.is_map() {
        return true;
    }
    if !fd.is_list() {
        return false;
    }
    let Kind::Message(m) = fd.kind() else {
        return false;
    };
    let fields: Vec<FieldDescriptor> = m.fields().collect();
    m.name().ends_with(MAP_ENTRY_SUFFIX)
        && fields.len() == 2
        && fields[0].name() == "key"
        && fields[1].name() == "value"
        && !fields[0].is_list()
        && !fields[1].is_list()
}

fn is_proto2(fd: &FieldDescriptor) -> bool {
    fd.parent_file().syntax() == Syntax::Proto2
}

/// `hasOptionalKeyword`: proto3 `optional`, or a proto2 optional field outside a oneof.
fn has_optional_keyword(fd: &FieldDescriptor) -> bool {
    fd.field_descriptor_proto().proto3_optional()
        || (is_proto2(fd)
            && !fd.is_list()
            && !fd.is_map()
            && fd.field_descriptor_proto().label
                != Some(prost_types::field_descriptor_proto::Label::Required as i32)
            && fd.containing_oneof().is_none())
}

fn real_oneofs(m: &MessageDescriptor) -> impl Iterator<Item = (usize, OneofDescriptor)> {
    m.oneofs().enumerate().filter(|(_, o)| !o.is_synthetic())
}

fn in_real_oneof(fd: &FieldDescriptor) -> bool {
    fd.containing_oneof().is_some_and(|o| !o.is_synthetic())
}

/// Confluent's `ProtobufData` for one configuration.
#[derive(Debug, Clone, Default)]
pub struct ProtobufData {
    pub config: ProtobufDataConfig,
}

impl ProtobufData {
    pub fn new(config: ProtobufDataConfig) -> Self {
        ProtobufData { config }
    }

    fn union_field_name(&self, index: usize, oneof: &OneofDescriptor) -> String {
        if self.config.generate_index_for_unions {
            format!("{}_{index}", oneof.name())
        } else {
            oneof.name().to_owned()
        }
    }

    /// `toConnectSchema` of a message (the root: `version` from the registry).
    pub fn to_connect_schema(&self, m: &MessageDescriptor, version: Option<i32>) -> Result<Schema> {
        let mut stack = Vec::new();
        let mut b = self.message_schema(&mut stack, m, true)?;
        if let Some(v) = version {
            b = b.version(v);
        }
        Ok(b.build())
    }

    fn message_schema(
        &self,
        stack: &mut Vec<String>,
        m: &MessageDescriptor,
        root: bool,
    ) -> Result<SchemaBuilder> {
        if root && self.config.wrapper_for_raw_primitives {
            if let Some(b) = wrapper_schema(m.full_name()) {
                return Ok(b);
            }
        }
        if stack.iter().any(|s| s == m.full_name()) {
            return Err(ConnectError::data(format!(
                "The Protobuf message {} is recursive: recursive schemas are not supported by this worker's ProtobufConverter",
                m.full_name()
            )));
        }
        stack.push(m.full_name().to_owned());
        let name = if self.config.enhanced_schema_support {
            m.full_name()
        } else {
            m.name()
        };
        let mut b = SchemaBuilder::struct_().name(name);
        for (index, oneof) in real_oneofs(m) {
            if self.config.flatten_unions {
                for fd in oneof.fields() {
                    b = b.field(fd.name(), self.field_schema(stack, &fd, true)?);
                }
            } else {
                let union_name = if self.config.enhanced_schema_support {
                    oneof.full_name()
                } else {
                    oneof.name()
                };
                let mut u = SchemaBuilder::struct_().name(format!("{TYPE_UNION}.{union_name}"));
                for fd in oneof.fields() {
                    u = u.field(fd.name(), self.field_schema(stack, &fd, true)?);
                }
                b = b.field(self.union_field_name(index, &oneof), u.optional().build());
            }
        }
        for fd in m.fields() {
            if in_real_oneof(&fd) {
                continue;
            }
            b = b.field(fd.name(), self.field_schema(stack, &fd, false)?);
        }
        stack.pop();
        Ok(b)
    }

    fn field_schema(
        &self,
        stack: &mut Vec<String>,
        fd: &FieldDescriptor,
        oneof_member: bool,
    ) -> Result<Schema> {
        let kind = fd.kind();
        let mut b = match &kind {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
                match meta_param(fd, CONNECT_TYPE_PROP).as_deref() {
                    Some("int8") => SchemaBuilder::new(SchemaType::Int8),
                    Some("int16") => SchemaBuilder::new(SchemaType::Int16),
                    _ => {
                        let b = SchemaBuilder::new(SchemaType::Int32);
                        if matches!(kind, Kind::Int32) {
                            b
                        } else {
                            b.parameter(TYPE_PROP, kind_name(&kind))
                        }
                    }
                }
            }
            Kind::Uint32
            | Kind::Fixed32
            | Kind::Int64
            | Kind::Uint64
            | Kind::Sint64
            | Kind::Fixed64
            | Kind::Sfixed64 => {
                let b = SchemaBuilder::new(SchemaType::Int64);
                if matches!(kind, Kind::Int64) {
                    b
                } else {
                    b.parameter(TYPE_PROP, kind_name(&kind))
                }
            }
            Kind::Float => SchemaBuilder::new(SchemaType::Float32),
            Kind::Double => SchemaBuilder::new(SchemaType::Float64),
            Kind::Bool => SchemaBuilder::new(SchemaType::Boolean),
            Kind::String => SchemaBuilder::new(SchemaType::String),
            Kind::Bytes => SchemaBuilder::new(SchemaType::Bytes),
            Kind::Enum(e) => {
                let mut b = SchemaBuilder::new(if self.config.int_for_enums {
                    SchemaType::Int32
                } else {
                    SchemaType::String
                })
                .name(if self.config.enhanced_schema_support {
                    e.full_name()
                } else {
                    e.name()
                })
                .parameter(TYPE_ENUM, e.name());
                for v in e.values() {
                    b = b.parameter(format!("{TYPE_ENUM}.{}", v.name()), v.number().to_string());
                }
                b.optional()
            }
            Kind::Message(m) => {
                let b = match m.full_name() {
                    DECIMAL_TYPE => {
                        let precision =
                            meta_param(fd, "precision").and_then(|p| p.parse::<i32>().ok());
                        let scale = meta_param(fd, "scale")
                            .and_then(|s| s.parse::<i32>().ok())
                            .unwrap_or(0);
                        let b = logical::decimal_builder(scale);
                        match precision {
                            Some(p) => b.parameter(CONNECT_PRECISION_PROP, p.to_string()),
                            None => b,
                        }
                    }
                    DATE_TYPE => logical::date_builder(),
                    TIME_TYPE => logical::time_builder(),
                    TIMESTAMP_TYPE => logical::timestamp_builder(),
                    "confluent.type.Variant" => {
                        return Err(ConnectError::data(
                            "confluent.type.Variant fields are not supported by this worker's ProtobufConverter",
                        ));
                    }
                    name => match (self.config.wrapper_for_nullables, wrapper_schema(name)) {
                        (true, Some(w)) => w,
                        _ if is_map_field(fd) => {
                            let entry_name = if self.config.enhanced_schema_support {
                                m.full_name()
                            } else {
                                m.name()
                            };
                            let key = m.fields().next();
                            let value = m.fields().nth(1);
                            let (Some(k), Some(v)) = (key, value) else {
                                return Err(ConnectError::data("map entry without key and value"));
                            };
                            SchemaBuilder::map(
                                self.field_schema(stack, &k, false)?,
                                self.field_schema(stack, &v, false)?,
                            )
                            .name(to_map_field(entry_name))
                        }
                        _ => self.message_schema(stack, m, false)?,
                    },
                };
                b.optional()
            }
        };
        if fd.is_list() && !is_map_field(fd) {
            b = SchemaBuilder::array(b.optional().build()).optional();
        }
        if oneof_member {
            b = b.optional();
            if self.config.wrapper_for_nullables {
                if let Kind::Message(m) = &kind {
                    if wrapper_schema(m.full_name()).is_some() {
                        b = b.parameter(TYPE_WRAPPER, "true");
                    }
                }
            }
        } else if self.config.optional_for_nullables {
            if has_optional_keyword(fd) {
                b = b.optional();
            }
        } else if !self.config.wrapper_for_nullables {
            b = b.optional();
        }
        Ok(b.parameter(TYPE_TAG, fd.number().to_string()).build())
    }

    // ---- Connect → protobuf values (fromConnectData) ----

    /// The message of a Connect value: a STRUCT root onto `desc`, a primitive into its wrapper.
    pub fn from_connect_value(
        &self,
        schema: &Schema,
        value: &Value,
        desc: &MessageDescriptor,
    ) -> Result<DynamicMessage> {
        match (schema.schema_type(), value) {
            (SchemaType::Struct, Value::Struct(s)) => self.struct_message(schema, s, desc),
            (SchemaType::Struct, other) => Err(ConnectError::data(format!(
                "Invalid type for STRUCT: {}",
                other.type_name()
            ))),
            _ => {
                let mut msg = DynamicMessage::new(desc.clone());
                let fd = desc
                    .get_field_by_name("value")
                    .ok_or_else(|| ConnectError::data("wrapper message without a value field"))?;
                if let Some(v) = self.field_value(schema, value, &fd, &fd.kind())? {
                    set(&mut msg, &fd, v)?;
                }
                Ok(msg)
            }
        }
    }

    fn struct_message(
        &self,
        schema: &Schema,
        s: &Struct,
        desc: &MessageDescriptor,
    ) -> Result<DynamicMessage> {
        if s.schema() != schema {
            return Err(ConnectError::data("Mismatching struct schema"));
        }
        let mut msg = DynamicMessage::new(desc.clone());
        for (field, v) in schema.fields().iter().zip(s.values()) {
            let v = match (v, field.schema.default_value()) {
                (Value::Null, Some(d)) => d,
                (v, _) => v,
            };
            if v.is_null() {
                continue;
            }
            let name = self.scrub(&field.name);
            if field.schema.schema_type() == SchemaType::Struct
                && field
                    .schema
                    .name()
                    .is_some_and(|n| n.starts_with(TYPE_UNION))
            {
                let Value::Struct(u) = v else {
                    return Err(ConnectError::data(format!(
                        "Invalid type for union {}: {}",
                        field.name,
                        v.type_name()
                    )));
                };
                let member = field
                    .schema
                    .fields()
                    .iter()
                    .zip(u.values())
                    .find_map(|(f, v)| {
                        let v = match (v, f.schema.default_value()) {
                            (Value::Null, Some(d)) => d,
                            (v, _) => v,
                        };
                        (!v.is_null()).then_some((f, v))
                    })
                    .ok_or_else(|| ConnectError::data("Cannot find non-null field"))?;
                let member_name = self.scrub(&member.0.name);
                let fd = desc.get_field_by_name(&member_name).ok_or_else(|| {
                    ConnectError::data(format!("Cannot find field with name {member_name}"))
                })?;
                if let Some(pv) = self.field_value(&member.0.schema, member.1, &fd, &fd.kind())? {
                    set(&mut msg, &fd, pv)?;
                }
                continue;
            }
            let fd = desc
                .get_field_by_name(&name)
                .ok_or_else(|| ConnectError::data(format!("Cannot find field with name {name}")))?;
            if let Some(pv) = self.field_value(&field.schema, v, &fd, &fd.kind())? {
                set(&mut msg, &fd, pv)?;
            }
        }
        Ok(msg)
    }

    fn scrub(&self, name: &str) -> String {
        if self.config.scrub_invalid_names {
            scrub_name(name)
        } else {
            name.to_owned()
        }
    }

    /// One Connect value as the protobuf value of a field of `kind` (`None`: leave unset).
    fn field_value(
        &self,
        schema: &Schema,
        value: &Value,
        fd: &FieldDescriptor,
        kind: &Kind,
    ) -> Result<Option<PValue>> {
        if value.is_null() {
            return Ok(None);
        }
        let wrong = || {
            ConnectError::data(format!(
                "Invalid type for {}: {}",
                schema.schema_type(),
                value.type_name()
            ))
        };
        if let Some(name) = schema.name() {
            if let Some(m) = logical_message(name, schema, value, kind)? {
                return Ok(Some(PValue::Message(m)));
            }
        }
        let plain = match (schema.schema_type(), value) {
            (SchemaType::Array, Value::Array(items)) => {
                if items.is_empty() {
                    return Ok(None);
                }
                let items_schema = schema
                    .value_schema()
                    .ok_or_else(|| ConnectError::data("ARRAY schema without element schema"))?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match self.field_value(items_schema, item, fd, kind)? {
                        Some(v) => out.push(v),
                        None => {
                            return Err(ConnectError::data(format!(
                                "The array {} has a null element: protobuf repeated fields cannot hold null",
                                fd.name()
                            )));
                        }
                    }
                }
                return Ok(Some(PValue::List(out)));
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let Kind::Message(entry) = kind else {
                    return Err(wrong());
                };
                let (ks, vs) = match (schema.key_schema(), schema.value_schema()) {
                    (Some(k), Some(v)) => (k, v),
                    _ => return Err(ConnectError::data("MAP schema without key or value schema")),
                };
                let kfd = entry
                    .get_field_by_name("key")
                    .ok_or_else(|| ConnectError::data("map entry without key"))?;
                let vfd = entry
                    .get_field_by_name("value")
                    .ok_or_else(|| ConnectError::data("map entry without value"))?;
                if fd.is_map() {
                    let mut map = std::collections::HashMap::new();
                    for (k, v) in entries {
                        let key = self
                            .field_value(ks, k, &kfd, &kfd.kind())?
                            .ok_or_else(|| ConnectError::data("null map key"))?;
                        let key = map_key(key)?;
                        let value = match self.field_value(vs, v, &vfd, &vfd.kind())? {
                            Some(v) => v,
                            None => PValue::default_value_for_field(&vfd),
                        };
                        map.insert(key, value);
                    }
                    return Ok(Some(PValue::Map(map)));
                }
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let mut m = DynamicMessage::new(entry.clone());
                    if let Some(k) = self.field_value(ks, k, &kfd, &kfd.kind())? {
                        set(&mut m, &kfd, k)?;
                    }
                    if let Some(v) = self.field_value(vs, v, &vfd, &vfd.kind())? {
                        set(&mut m, &vfd, v)?;
                    }
                    out.push(PValue::Message(m));
                }
                return Ok(Some(PValue::List(out)));
            }
            (SchemaType::Struct, Value::Struct(s)) => {
                let Kind::Message(m) = kind else {
                    return Err(wrong());
                };
                return Ok(Some(PValue::Message(self.struct_message(schema, s, m)?)));
            }
            (SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32, v) => {
                let i = match v {
                    Value::Int8(i) => i32::from(*i),
                    Value::Int16(i) => i32::from(*i),
                    Value::Int32(i) => *i,
                    _ => return Err(wrong()),
                };
                match kind {
                    Kind::Enum(_) => PValue::EnumNumber(i),
                    Kind::Uint32 | Kind::Fixed32 => PValue::U32(i as u32),
                    Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => PValue::I64(i.into()),
                    _ => PValue::I32(i),
                }
            }
            (SchemaType::Int64, Value::Int64(i)) => match kind {
                Kind::Uint32 | Kind::Fixed32 => PValue::U32(*i as u32),
                Kind::Uint64 | Kind::Fixed64 => PValue::U64(*i as u64),
                Kind::Message(m) if m.full_name() == WRAPPERS[5] => PValue::U32(*i as u32),
                Kind::Message(m) if m.full_name() == WRAPPERS[3] => PValue::U64(*i as u64),
                Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => PValue::I32(*i as i32),
                _ => PValue::I64(*i),
            },
            (SchemaType::Float32, Value::Float32(f)) => PValue::F32(*f),
            (SchemaType::Float64, Value::Float64(f)) => PValue::F64(*f),
            (SchemaType::Boolean, Value::Boolean(b)) => PValue::Bool(*b),
            (SchemaType::String, Value::String(s)) => match kind {
                Kind::Enum(e) => {
                    let tag = schema
                        .parameters()
                        .get(&format!("{TYPE_ENUM}.{s}"))
                        .and_then(|t| t.parse::<i32>().ok())
                        .or_else(|| e.get_value_by_name(s).map(|v| v.number()))
                        .ok_or_else(|| {
                            ConnectError::data(format!(
                                "{s:?} is not a symbol of the enum {}",
                                e.full_name()
                            ))
                        })?;
                    PValue::EnumNumber(tag)
                }
                _ => PValue::String(s.clone()),
            },
            (SchemaType::Bytes, Value::Bytes(b)) => PValue::Bytes(b.clone().into()),
            _ => return Err(wrong()),
        };
        // An optional primitive written as its wrapper message.
        if let Kind::Message(m) = kind {
            if wrapper_schema(m.full_name()).is_some() {
                let mut w = DynamicMessage::new(m.clone());
                let vfd = m
                    .get_field_by_name("value")
                    .ok_or_else(|| ConnectError::data("wrapper message without a value field"))?;
                set(&mut w, &vfd, plain)?;
                return Ok(Some(PValue::Message(w)));
            }
            return Err(wrong());
        }
        Ok(Some(plain))
    }

    // ---- protobuf → Connect values (toConnectData) ----

    /// The Connect value of a decoded message under the schema [`Self::to_connect_schema`] gave.
    pub fn to_connect_value(&self, schema: &Schema, msg: &DynamicMessage) -> Result<Value> {
        self.value_of(schema, &PValue::Message(msg.clone()))
    }

    fn value_of(&self, schema: &Schema, value: &PValue) -> Result<Value> {
        if let Some(name) = schema.name() {
            if matches!(name, DECIMAL_NAME | DATE_NAME | TIME_NAME | TIMESTAMP_NAME) {
                if let PValue::Message(m) = value {
                    return logical_value(name, schema, m);
                }
            }
        }
        // A wrapper message read as its primitive.
        let unwrapped;
        let value = match (schema.schema_type(), value) {
            (SchemaType::Struct | SchemaType::Map | SchemaType::Array, _) => value,
            (_, PValue::Message(m)) => {
                unwrapped = m
                    .get_field_by_name("value")
                    .map(Cow::into_owned)
                    .ok_or_else(|| {
                        ConnectError::data(format!(
                            "{} is not a wrapper message",
                            m.descriptor().full_name()
                        ))
                    })?;
                &unwrapped
            }
            _ => value,
        };
        let bad = || {
            ConnectError::data(format!(
                "Invalid protobuf value {value:?} for a {} field",
                schema.schema_type()
            ))
        };
        let int = |v: &PValue| -> Option<i64> {
            Some(match v {
                PValue::I32(i) | PValue::EnumNumber(i) => (*i).into(),
                PValue::I64(i) => *i,
                PValue::U32(u) => (*u).into(),
                PValue::U64(u) => *u as i64,
                PValue::Bool(b) => (*b).into(),
                _ => return None,
            })
        };
        Ok(match schema.schema_type() {
            SchemaType::Int8 => Value::Int8(int(value).ok_or_else(bad)? as i8),
            SchemaType::Int16 => Value::Int16(int(value).ok_or_else(bad)? as i16),
            SchemaType::Int32 => Value::Int32(int(value).ok_or_else(bad)? as i32),
            SchemaType::Int64 => Value::Int64(match value {
                // Java: Integer.toUnsignedLong of an int, the long itself otherwise.
                PValue::I32(i) => i64::from(*i as u32),
                v => int(v).ok_or_else(bad)?,
            }),
            SchemaType::Float32 => match value {
                PValue::F32(f) => Value::Float32(*f),
                PValue::F64(f) => Value::Float32(*f as f32),
                _ => return Err(bad()),
            },
            SchemaType::Float64 => match value {
                PValue::F64(f) => Value::Float64(*f),
                PValue::F32(f) => Value::Float64(f64::from(*f)),
                _ => return Err(bad()),
            },
            SchemaType::Boolean => match value {
                PValue::Bool(b) => Value::Boolean(*b),
                _ => return Err(bad()),
            },
            SchemaType::String => match value {
                PValue::String(s) => Value::String(s.clone()),
                PValue::EnumNumber(n) => Value::String(enum_symbol(schema, *n)),
                _ => return Err(bad()),
            },
            SchemaType::Bytes => match value {
                PValue::Bytes(b) => Value::Bytes(b.to_vec()),
                _ => return Err(bad()),
            },
            SchemaType::Array => {
                let PValue::List(items) = value else {
                    return Err(bad());
                };
                let item_schema = schema.value_schema().ok_or_else(bad)?;
                Value::Array(
                    items
                        .iter()
                        .map(|i| self.value_of(item_schema, i))
                        .collect::<Result<_>>()?,
                )
            }
            SchemaType::Map => {
                let (ks, vs) = match (schema.key_schema(), schema.value_schema()) {
                    (Some(k), Some(v)) => (k, v),
                    _ => return Err(bad()),
                };
                let mut out = Vec::new();
                match value {
                    PValue::List(entries) => {
                        for e in entries {
                            let PValue::Message(m) = e else {
                                return Err(bad());
                            };
                            let k = m.get_field_by_name("key").ok_or_else(bad)?;
                            let v = m.get_field_by_name("value").ok_or_else(bad)?;
                            out.push((self.value_of(ks, &k)?, self.value_of(vs, &v)?));
                        }
                    }
                    PValue::Map(map) => {
                        // Java reads them into a HashMap; key order here, so reads repeat.
                        let mut entries: Vec<(PValue, &PValue)> =
                            map.iter().map(|(k, v)| (key_value(k), v)).collect();
                        entries.sort_by(|a, b| {
                            key_order(&a.0)
                                .partial_cmp(&key_order(&b.0))
                                .unwrap_or(std::cmp::Ordering::Equal)
                        });
                        for (k, v) in entries {
                            out.push((self.value_of(ks, &k)?, self.value_of(vs, v)?));
                        }
                    }
                    _ => return Err(bad()),
                }
                Value::Map(out)
            }
            SchemaType::Struct => {
                let PValue::Message(m) = value else {
                    return Err(bad());
                };
                Value::Struct(self.struct_value(schema, m)?)
            }
        })
    }

    fn struct_value(&self, schema: &Schema, m: &DynamicMessage) -> Result<Struct> {
        let desc = m.descriptor();
        let mut values = vec![Value::Null; schema.fields().len()];
        let index_of = |name: &str| schema.fields().iter().position(|f| f.name == name);
        for (index, oneof) in real_oneofs(&desc) {
            let Some(fd) = oneof.fields().find(|f| m.has_field(f)) else {
                continue;
            };
            let v = m.get_field(&fd);
            if self.config.flatten_unions {
                if let Some(i) = index_of(fd.name()) {
                    values[i] = self.value_of(&schema.fields()[i].schema, &v)?;
                }
            } else {
                let Some(i) = index_of(&self.union_field_name(index, &oneof)) else {
                    continue;
                };
                let union_schema = &schema.fields()[i].schema;
                let mut member_values = vec![Value::Null; union_schema.fields().len()];
                if let Some(j) = union_schema
                    .fields()
                    .iter()
                    .position(|f| f.name == fd.name())
                {
                    member_values[j] = self.value_of(&union_schema.fields()[j].schema, &v)?;
                }
                values[i] = Value::Struct(Struct::from_checked_values(
                    union_schema.clone(),
                    member_values,
                ));
            }
        }
        for fd in desc.fields() {
            if in_real_oneof(&fd) {
                continue;
            }
            let Some(i) = index_of(fd.name()) else {
                continue;
            };
            let primitive_or_repeated =
                !matches!(fd.kind(), Kind::Message(_)) || fd.is_list() || fd.is_map();
            let optional = fd.field_descriptor_proto().proto3_optional()
                || (self.config.optional_for_proto2 && has_optional_keyword(&fd));
            if (primitive_or_repeated && !optional)
                || self.config.generate_struct_for_nulls
                || m.has_field(&fd)
            {
                values[i] = self.value_of(&schema.fields()[i].schema, &m.get_field(&fd))?;
            }
        }
        Ok(Struct::from_checked_values(schema.clone(), values))
    }
}

fn set(msg: &mut DynamicMessage, fd: &FieldDescriptor, v: PValue) -> Result<()> {
    msg.try_set_field(fd, v).map_err(|e| {
        ConnectError::data(format!(
            "Cannot set the protobuf field {}: {e}",
            fd.full_name()
        ))
    })
}

fn key_value(k: &MapKey) -> PValue {
    match k {
        MapKey::Bool(b) => PValue::Bool(*b),
        MapKey::I32(i) => PValue::I32(*i),
        MapKey::I64(i) => PValue::I64(*i),
        MapKey::U32(u) => PValue::U32(*u),
        MapKey::U64(u) => PValue::U64(*u),
        MapKey::String(s) => PValue::String(s.clone()),
    }
}

/// A sortable form of a map key (all keys of one map have one kind).
fn key_order(v: &PValue) -> (i128, String) {
    match v {
        PValue::Bool(b) => (i128::from(*b), String::new()),
        PValue::I32(i) => (i128::from(*i), String::new()),
        PValue::I64(i) => (i128::from(*i), String::new()),
        PValue::U32(u) => (i128::from(*u), String::new()),
        PValue::U64(u) => (i128::from(*u), String::new()),
        PValue::String(s) => (0, s.clone()),
        _ => (0, String::new()),
    }
}

fn map_key(v: PValue) -> Result<MapKey> {
    Ok(match v {
        PValue::Bool(b) => MapKey::Bool(b),
        PValue::I32(i) => MapKey::I32(i),
        PValue::I64(i) => MapKey::I64(i),
        PValue::U32(u) => MapKey::U32(u),
        PValue::U64(u) => MapKey::U64(u),
        PValue::String(s) => MapKey::String(s),
        other => {
            return Err(ConnectError::data(format!(
                "{other:?} cannot be a protobuf map key"
            )));
        }
    })
}

/// The symbol of enum number `n` from the schema's parameters (Java's name for an unknown
/// number of an open enum otherwise).
fn enum_symbol(schema: &Schema, n: i32) -> String {
    let prefix = format!("{TYPE_ENUM}.");
    schema
        .parameters()
        .iter()
        .find(|(k, v)| k.starts_with(&prefix) && v.parse::<i32>().ok() == Some(n))
        .map(|(k, _)| k[prefix.len()..].to_owned())
        .unwrap_or_else(|| {
            format!(
                "UNKNOWN_ENUM_VALUE_{}_{n}",
                schema
                    .parameters()
                    .get(TYPE_ENUM)
                    .map(String::as_str)
                    .unwrap_or_default()
            )
        })
}

// ---- logical types ----

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) → days since 1970-01-01, proleptic Gregorian.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn message_of(kind: &Kind, expected: &str) -> Result<MessageDescriptor> {
    match kind {
        Kind::Message(m) if m.full_name() == expected => Ok(m.clone()),
        _ => Err(ConnectError::data(format!(
            "Expected a {expected} field for a Connect logical type"
        ))),
    }
}

fn set_named(m: &mut DynamicMessage, name: &str, v: PValue) -> Result<()> {
    let fd = m
        .descriptor()
        .get_field_by_name(name)
        .ok_or_else(|| ConnectError::data(format!("no field {name}")))?;
    set(m, &fd, v)
}

/// `TO_PROTOBUF_LOGICAL_CONVERTERS`: Decimal, Date, Time and Timestamp as their messages.
fn logical_message(
    name: &str,
    schema: &Schema,
    value: &Value,
    kind: &Kind,
) -> Result<Option<DynamicMessage>> {
    let wrong =
        |what: &str| ConnectError::data(format!("Invalid type for {what}: {}", value.type_name()));
    Ok(Some(match name {
        DECIMAL_NAME => {
            let Value::Bytes(b) = value else {
                return Err(wrong("Decimal"));
            };
            let scale = logical::decimal_scale(schema).unwrap_or(0);
            let d = Decimal::from_bytes(b, scale)?;
            let mut m = DynamicMessage::new(message_of(kind, DECIMAL_TYPE)?);
            let precision = d.unscaled.unsigned_abs().to_string().len() as u32;
            set_named(&mut m, "value", PValue::Bytes(d.to_bytes().into()))?;
            set_named(&mut m, "precision", PValue::U32(precision))?;
            set_named(&mut m, "scale", PValue::I32(scale))?;
            m
        }
        DATE_NAME => {
            let Value::Int32(days) = value else {
                return Err(wrong("Date"));
            };
            let (y, mo, d) = civil_from_days((*days).into());
            let mut m = DynamicMessage::new(message_of(kind, DATE_TYPE)?);
            set_named(&mut m, "year", PValue::I32(y as i32))?;
            set_named(&mut m, "month", PValue::I32(mo as i32))?;
            set_named(&mut m, "day", PValue::I32(d as i32))?;
            m
        }
        TIME_NAME => {
            let Value::Int32(ms) = value else {
                return Err(wrong("Time"));
            };
            let ms = i64::from(*ms);
            if !(0..=MILLIS_PER_DAY).contains(&ms) {
                return Err(ConnectError::data(
                    "Time values must use number of millis greater than 0 and less than 86400000",
                ));
            }
            let ms = ms % MILLIS_PER_DAY;
            let mut m = DynamicMessage::new(message_of(kind, TIME_TYPE)?);
            set_named(&mut m, "hours", PValue::I32((ms / 3_600_000) as i32))?;
            set_named(&mut m, "minutes", PValue::I32((ms / 60_000 % 60) as i32))?;
            set_named(&mut m, "seconds", PValue::I32((ms / 1000 % 60) as i32))?;
            set_named(&mut m, "nanos", PValue::I32((ms % 1000 * 1_000_000) as i32))?;
            m
        }
        TIMESTAMP_NAME => {
            let Value::Int64(ms) = value else {
                return Err(wrong("Timestamp"));
            };
            let mut m = DynamicMessage::new(message_of(kind, TIMESTAMP_TYPE)?);
            set_named(&mut m, "seconds", PValue::I64(ms.div_euclid(1000)))?;
            set_named(
                &mut m,
                "nanos",
                PValue::I32((ms.rem_euclid(1000) * 1_000_000) as i32),
            )?;
            m
        }
        _ => return Ok(None),
    }))
}

fn int_field(m: &DynamicMessage, name: &str) -> i64 {
    match m.get_field_by_name(name).as_deref() {
        Some(PValue::I32(i)) => (*i).into(),
        Some(PValue::I64(i)) => *i,
        Some(PValue::U32(u)) => (*u).into(),
        Some(PValue::U64(u)) => *u as i64,
        _ => 0,
    }
}

/// `TO_CONNECT_LOGICAL_CONVERTERS`.
fn logical_value(name: &str, schema: &Schema, m: &DynamicMessage) -> Result<Value> {
    Ok(match name {
        DECIMAL_NAME => {
            let bytes = match m.get_field_by_name("value").as_deref() {
                Some(PValue::Bytes(b)) => b.to_vec(),
                _ => Vec::new(),
            };
            if bytes.is_empty() {
                return Err(ConnectError::data("Zero length BigInteger"));
            }
            let written_scale = int_field(m, "scale") as i32;
            let d = Decimal::from_bytes(&bytes, written_scale)?;
            let scale = logical::decimal_scale(schema).unwrap_or(0);
            // The Connect schema's scale: exact rescaling, or an error.
            let text = d.to_plain_string();
            Value::Bytes(Decimal::parse(&text, scale)?.to_bytes())
        }
        DATE_NAME => {
            let (y, mo, d) = (
                int_field(m, "year"),
                int_field(m, "month"),
                int_field(m, "day"),
            );
            let valid = (1..=12).contains(&mo) && d >= 1 && {
                let next = if mo == 12 {
                    days_from_civil(y + 1, 1, 1)
                } else {
                    days_from_civil(y, mo as u32 + 1, 1)
                };
                d <= next - days_from_civil(y, mo as u32, 1)
            };
            if !valid {
                return Err(ConnectError::data(format!(
                    "Invalid google.type.Date {y}-{mo}-{d}"
                )));
            }
            let days = days_from_civil(y, mo as u32, d as u32);
            Value::Int32(i32::try_from(days).map_err(|_| ConnectError::data("Date out of range"))?)
        }
        TIME_NAME => {
            let (h, mi, s, n) = (
                int_field(m, "hours"),
                int_field(m, "minutes"),
                int_field(m, "seconds"),
                int_field(m, "nanos"),
            );
            if !(0..24).contains(&h)
                || !(0..60).contains(&mi)
                || !(0..60).contains(&s)
                || !(0..1_000_000_000).contains(&n)
            {
                return Err(ConnectError::data(format!(
                    "Invalid google.type.TimeOfDay {h}:{mi}:{s}.{n}"
                )));
            }
            Value::Int32(((h * 3600 + mi * 60 + s) * 1000 + n / 1_000_000) as i32)
        }
        TIMESTAMP_NAME => {
            let (s, n) = (int_field(m, "seconds"), int_field(m, "nanos"));
            let ms = s
                .checked_mul(1000)
                .and_then(|ms| ms.checked_add(n / 1_000_000))
                .ok_or_else(|| ConnectError::data("Timestamp out of range"))?;
            Value::Int64(ms)
        }
        _ => return Err(ConnectError::data(format!("unknown logical type {name}"))),
    })
}
