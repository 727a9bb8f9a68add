//! Connect schema → `.proto` text, as Confluent's `ProtobufData.fromConnectSchema` builds it and
//! `ProtobufSchema.canonicalString()` prints it (the rules are listed in [`super`]).

use connect_api::data::SchemaType;
use connect_api::data::logical::{DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME};
use connect_api::{ConnectError, Result, Schema};

use super::data_config::ProtobufDataConfig;

pub const NAMESPACE: &str = "io.confluent.connect.protobuf";
pub const DEFAULT_SCHEMA_NAME: &str = "ConnectDefault";
pub const MAP_ENTRY_SUFFIX: &str = "Entry";
pub const TYPE_ENUM: &str = "io.confluent.connect.protobuf.Enum";
pub const TYPE_UNION: &str = "io.confluent.connect.protobuf.Union";
pub const TYPE_TAG: &str = "io.confluent.connect.protobuf.Tag";
pub const TYPE_PROP: &str = "io.confluent.connect.protobuf.Type";
pub const TYPE_WRAPPER: &str = "io.confluent.connect.protobuf.Wrapper";
pub const CONNECT_PRECISION_PROP: &str = "connect.decimal.precision";
pub const CONNECT_TYPE_PROP: &str = "connect.type";

pub const DECIMAL_TYPE: &str = "confluent.type.Decimal";
pub const DECIMAL_LOCATION: &str = "confluent/type/decimal.proto";
pub const DATE_TYPE: &str = "google.type.Date";
pub const DATE_LOCATION: &str = "google/type/date.proto";
pub const TIME_TYPE: &str = "google.type.TimeOfDay";
pub const TIME_LOCATION: &str = "google/type/timeofday.proto";
pub const TIMESTAMP_TYPE: &str = "google.protobuf.Timestamp";
pub const TIMESTAMP_LOCATION: &str = "google/protobuf/timestamp.proto";
pub const WRAPPER_LOCATION: &str = "google/protobuf/wrappers.proto";

/// The wrapper messages of `google/protobuf/wrappers.proto`, in the file's order (their message
/// index is their position).
pub const WRAPPERS: [&str; 9] = [
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
];

/// A `.proto` file as the converter writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtoFile {
    pub package: Option<String>,
    pub imports: Vec<String>,
    pub messages: Vec<MessageDef>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct MessageDef {
    pub name: String,
    pub fields: Vec<FieldDef>,
    pub oneofs: Vec<OneofDef>,
    pub nested: Vec<MessageDef>,
    pub enums: Vec<EnumDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FieldDef {
    /// `repeated`, `optional` (proto3 presence) or none.
    pub label: Option<&'static str>,
    pub type_name: String,
    pub name: String,
    pub tag: i32,
    /// `(confluent.field_meta)` params, in Java's order.
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OneofDef {
    pub name: String,
    pub fields: Vec<FieldDef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumDef {
    pub name: String,
    pub values: Vec<(String, i32)>,
}

/// What the converter registers for a Connect schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Generated {
    /// A message of our own file.
    Message {
        file: ProtoFile,
        /// The root message's full name (`package.Name`).
        full_name: String,
    },
    /// A primitive root: the wrapper message of `google/protobuf/wrappers.proto`.
    Wrapper { full_name: &'static str },
}

impl Generated {
    pub fn full_name(&self) -> &str {
        match self {
            Generated::Message { full_name, .. } => full_name,
            Generated::Wrapper { full_name } => full_name,
        }
    }
}

/// Confluent's `doScrubName`: characters outside `[A-Za-z0-9_]` become `_` (after URL-encoding,
/// so one non-ASCII character becomes several), and a leading digit or `_` gets an `x` prefix.
pub fn scrub_name(name: &str) -> String {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.is_empty() {
        return String::new();
    }
    let first = name.chars().next().unwrap_or('a');
    if name.chars().all(ok) && !first.is_ascii_digit() && first != '_' {
        return name.to_owned();
    }
    // URLEncoder.encode(name, "UTF-8"): alphanumerics and `.-*_` kept, space → `+`, others %XX.
    let mut encoded = String::new();
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                encoded.push(b as char)
            }
            b' ' => encoded.push('+'),
            _ => encoded.push_str(&format!("%{b:02X}")),
        }
    }
    let first = encoded.chars().next().unwrap_or('a');
    if first.is_ascii_digit() || first == '_' {
        encoded.insert(0, 'x');
    }
    encoded
        .chars()
        .map(|c| if ok(c) { c } else { '_' })
        .collect()
}

/// Guava `LOWER_UNDERSCORE.to(UPPER_CAMEL, s)` where `s` has an underscore, then `Entry`
/// (Confluent's `ProtobufSchema.toMapEntry`).
pub fn to_map_entry(s: &str) -> String {
    let mut out = if s.contains('_') {
        s.split('_')
            .map(|w| {
                let mut cs = w.chars();
                match cs.next() {
                    Some(f) => {
                        f.to_ascii_uppercase().to_string() + &cs.as_str().to_ascii_lowercase()
                    }
                    None => String::new(),
                }
            })
            .collect()
    } else {
        s.to_owned()
    };
    out.push_str(MAP_ENTRY_SUFFIX);
    out
}

/// Confluent's `ProtobufSchema.toMapField`: the last dotted part without `Entry`, from
/// UpperCamel to lower_underscore.
pub fn to_map_field(s: &str) -> String {
    let mut parts: Vec<String> = s.split('.').map(str::to_owned).collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = last.strip_suffix(MAP_ENTRY_SUFFIX) {
            let mut o = String::new();
            for (i, c) in stem.chars().enumerate() {
                if c.is_ascii_uppercase() {
                    if i > 0 {
                        o.push('_');
                    }
                    o.push(c.to_ascii_lowercase());
                } else {
                    o.push(c);
                }
            }
            *last = o;
        }
    }
    parts.join(".")
}

struct Ctx<'a> {
    config: &'a ProtobufDataConfig,
    name_index: u32,
    imports: Vec<String>,
}

impl Ctx<'_> {
    fn name_or_default(&mut self, name: Option<&str>) -> String {
        match name {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => {
                self.name_index += 1;
                format!("{DEFAULT_SCHEMA_NAME}{}", self.name_index)
            }
        }
    }

    fn scrub(&self, name: &str) -> String {
        if self.config.scrub_invalid_names {
            scrub_name(name)
        } else {
            name.to_owned()
        }
    }

    fn unqualified(&mut self, name: Option<&str>) -> String {
        let full = self.name_or_default(name);
        let last = full.rsplit('.').next().unwrap_or(&full).to_owned();
        self.scrub(&last)
    }

    fn import(&mut self, location: &str) {
        if !self.imports.iter().any(|i| i == location) {
            self.imports.push(location.to_owned());
        }
    }
}

fn param<'a>(schema: &'a Schema, key: &str) -> Option<&'a str> {
    schema.parameters().get(key).map(String::as_str)
}

fn is_union(schema: &Schema) -> bool {
    schema.name().is_some_and(|n| n.starts_with(TYPE_UNION))
}

fn is_enum(schema: &Schema) -> bool {
    schema.parameters().contains_key(TYPE_ENUM)
}

/// Confluent's `ProtobufData.fromConnectSchema`.
pub fn from_connect_schema(schema: &Schema, config: &ProtobufDataConfig) -> Result<Generated> {
    let mut ctx = Ctx {
        config,
        name_index: 0,
        imports: Vec::new(),
    };
    let full = ctx.name_or_default(schema.name());
    let parts: Vec<String> = full.split('.').map(|p| ctx.scrub(p)).collect();
    let (namespace, name) = match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => (Some(rest.join(".")), last.clone()),
        Some((last, _)) => (None, last.clone()),
        None => (None, full.clone()),
    };
    let wrapper = |i: usize| {
        Ok(Generated::Wrapper {
            full_name: WRAPPERS[i],
        })
    };
    match schema.schema_type() {
        SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 => wrapper(4),
        SchemaType::Int64 => wrapper(2),
        SchemaType::Float32 => wrapper(1),
        SchemaType::Float64 => wrapper(0),
        SchemaType::Boolean => wrapper(6),
        SchemaType::String => wrapper(7),
        SchemaType::Bytes => wrapper(8),
        SchemaType::Array | SchemaType::Map => Err(ConnectError::data(format!(
            "Unsupported root schema of type {}",
            schema.schema_type()
        ))),
        SchemaType::Struct => {
            let mut root = MessageDef {
                name: name.clone(),
                ..MessageDef::default()
            };
            message_fields(&mut ctx, &mut root, schema)?;
            let full_name = match &namespace {
                Some(ns) => format!("{ns}.{name}"),
                None => name,
            };
            Ok(Generated::Message {
                file: ProtoFile {
                    package: namespace,
                    imports: ctx.imports,
                    messages: vec![root],
                },
                full_name,
            })
        }
    }
}

/// `messageDefinitionFromConnectSchema`: the fields of `message` from a STRUCT schema.
fn message_fields(ctx: &mut Ctx<'_>, message: &mut MessageDef, schema: &Schema) -> Result<()> {
    let mut index = 1;
    for field in schema.fields() {
        let tag = match param(&field.schema, TYPE_TAG) {
            Some(t) => parse_tag(t)?,
            None => {
                let t = index;
                index += 1;
                t
            }
        };
        let name = ctx.scrub(&field.name);
        if let Some(def) = field_definition(ctx, message, &field.schema, name, tag, false)? {
            message.fields.push(def);
        }
    }
    Ok(())
}

fn parse_tag(t: &str) -> Result<i32> {
    t.parse().map_err(|_| {
        ConnectError::data(format!("Invalid protobuf field number {t:?} in {TYPE_TAG}"))
    })
}

fn label(ctx: &Ctx<'_>, schema: &Schema) -> Option<&'static str> {
    match schema.schema_type() {
        SchemaType::Array | SchemaType::Map => Some("repeated"),
        _ if ctx.config.optional_for_nullables && schema.is_optional() => Some("optional"),
        _ => None,
    }
}

/// `fieldDefinitionFromConnectSchema`: `None` for a union (its `oneof` is added to `message`).
fn field_definition(
    ctx: &mut Ctx<'_>,
    message: &mut MessageDef,
    field_schema: &Schema,
    name: String,
    tag: i32,
    oneof_member: bool,
) -> Result<Option<FieldDef>> {
    let label = label(ctx, field_schema);
    let schema = if field_schema.schema_type() == SchemaType::Array {
        let items = field_schema
            .value_schema()
            .ok_or_else(|| ConnectError::data("ARRAY schema without an element schema"))?;
        if items.schema_type() == SchemaType::Array {
            return Err(ConnectError::data("Array cannot be nested"));
        }
        items
    } else {
        field_schema
    };
    let mut params = Vec::new();
    let type_name = data_type(ctx, schema, &name, &mut params, oneof_member)?;
    match schema.schema_type() {
        SchemaType::Struct if is_union(schema) => {
            let full = &schema.name().unwrap_or_default()[TYPE_UNION.len()..];
            let union_name = ctx.unqualified(Some(full.trim_start_matches('.')));
            let mut oneof = OneofDef {
                name: union_name,
                fields: Vec::new(),
            };
            for f in schema.fields() {
                let tag = match param(&f.schema, TYPE_TAG) {
                    Some(t) => parse_tag(t)?,
                    None => {
                        return Err(ConnectError::data(format!(
                            "Invalid protobuf schema definition: the union member {} has no {TYPE_TAG} parameter (field numbers must be positive)",
                            f.name
                        )));
                    }
                };
                let member_name = ctx.scrub(&f.name);
                if let Some(def) =
                    field_definition(ctx, message, &f.schema, member_name, tag, true)?
                {
                    oneof.fields.push(def);
                }
            }
            message.oneofs.push(oneof);
            return Ok(None);
        }
        SchemaType::Struct => {
            let defined =
                message.name == type_name || message.nested.iter().any(|m| m.name == type_name);
            if !defined {
                let mut nested = MessageDef {
                    name: type_name.clone(),
                    ..MessageDef::default()
                };
                message_fields(ctx, &mut nested, schema)?;
                message.nested.push(nested);
            }
        }
        SchemaType::Map => {
            let mut entry = MessageDef {
                name: type_name.clone(),
                ..MessageDef::default()
            };
            let (ks, vs) = match (schema.key_schema(), schema.value_schema()) {
                (Some(k), Some(v)) => (k, v),
                _ => return Err(ConnectError::data("MAP schema without key or value schema")),
            };
            if let Some(k) = field_definition(ctx, &mut entry, ks, "key".into(), 1, false)? {
                entry.fields.push(k);
            }
            if let Some(v) = field_definition(ctx, &mut entry, vs, "value".into(), 2, false)? {
                entry.fields.push(v);
            }
            message.nested.push(entry);
        }
        _ if is_enum(schema) => {
            let enum_name = ctx.unqualified(schema.name());
            if !message.enums.iter().any(|e| e.name == enum_name) {
                let enum_name = ctx.unqualified(schema.name());
                let prefix = format!("{TYPE_ENUM}.");
                let mut values = Vec::new();
                for (k, v) in schema.parameters() {
                    if let Some(symbol) = k.strip_prefix(&prefix) {
                        let n = v.parse().map_err(|_| {
                            ConnectError::data(format!("Invalid enum number {v:?} for {symbol}"))
                        })?;
                        values.push((symbol.to_owned(), n));
                    }
                }
                message.enums.push(EnumDef {
                    name: enum_name,
                    values,
                });
            }
        }
        _ => {
            if let Some(location) = type_location(&type_name) {
                ctx.import(location);
            }
        }
    }
    Ok(Some(FieldDef {
        label,
        type_name,
        name,
        tag,
        params,
    }))
}

/// The file a well-known type is imported from.
fn type_location(type_name: &str) -> Option<&'static str> {
    Some(match type_name {
        DECIMAL_TYPE => DECIMAL_LOCATION,
        DATE_TYPE => DATE_LOCATION,
        TIME_TYPE => TIME_LOCATION,
        TIMESTAMP_TYPE => TIMESTAMP_LOCATION,
        t if WRAPPERS.contains(&t) => WRAPPER_LOCATION,
        _ => return None,
    })
}

/// `dataTypeFromConnectSchema`.
fn data_type(
    ctx: &mut Ctx<'_>,
    schema: &Schema,
    field_name: &str,
    params: &mut Vec<(String, String)>,
    oneof_member: bool,
) -> Result<String> {
    match schema.name() {
        Some(DECIMAL_NAME) => {
            if let Some(p) = param(schema, CONNECT_PRECISION_PROP) {
                params.push(("precision".into(), p.to_owned()));
            }
            if let Some(s) = param(schema, "scale") {
                params.push(("scale".into(), s.to_owned()));
            }
            return Ok(DECIMAL_TYPE.into());
        }
        Some(DATE_NAME) => return Ok(DATE_TYPE.into()),
        Some(TIME_NAME) => return Ok(TIME_TYPE.into()),
        Some(TIMESTAMP_NAME) => return Ok(TIMESTAMP_TYPE.into()),
        _ => {}
    }
    let wrap = ctx.config.wrapper_for_nullables
        && schema.is_optional()
        && (!oneof_member || param(schema, TYPE_WRAPPER) == Some("true"));
    let pick = |wrapper: &str, plain: &str| {
        if wrap {
            wrapper.to_owned()
        } else {
            plain.to_owned()
        }
    };
    Ok(match schema.schema_type() {
        SchemaType::Int8 | SchemaType::Int16 => {
            let t = if schema.schema_type() == SchemaType::Int8 {
                "int8"
            } else {
                "int16"
            };
            params.push((CONNECT_TYPE_PROP.into(), t.into()));
            pick(WRAPPERS[4], "int32")
        }
        SchemaType::Int32 => {
            if let Some(e) = param(schema, TYPE_ENUM) {
                return Ok(e.to_owned());
            }
            pick(WRAPPERS[4], param(schema, TYPE_PROP).unwrap_or("int32"))
        }
        SchemaType::Int64 => {
            let t = param(schema, TYPE_PROP).unwrap_or("int64");
            let w = match t {
                "uint32" | "fixed32" => WRAPPERS[5],
                "uint64" | "fixed64" => WRAPPERS[3],
                _ => WRAPPERS[2],
            };
            pick(w, t)
        }
        SchemaType::Float32 => pick(WRAPPERS[1], "float"),
        SchemaType::Float64 => pick(WRAPPERS[0], "double"),
        SchemaType::Boolean => pick(WRAPPERS[6], "bool"),
        SchemaType::String => {
            if let Some(e) = param(schema, TYPE_ENUM) {
                return Ok(e.to_owned());
            }
            pick(WRAPPERS[7], "string")
        }
        SchemaType::Bytes => pick(WRAPPERS[8], "bytes"),
        SchemaType::Array => return Err(ConnectError::data("Array cannot be nested")),
        SchemaType::Map => to_map_entry(&ctx.unqualified(schema.name())),
        SchemaType::Struct => {
            let mut name = ctx.unqualified(schema.name());
            if name == field_name {
                name.push_str("Message");
            }
            name
        }
    })
}

// ---- printing (ProtobufSchemaUtils.toString) ----

fn indent(out: &mut String, text: &str) {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // Java's String.split drops trailing empty strings.
    while lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    for line in lines {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
}

/// `ProtobufSchemaUtils.escapeChars`.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{7}' => o.push_str("\\a"),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            '\u{b}' => o.push_str("\\v"),
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            '"' => o.push_str("\\\""),
            c => o.push(c),
        }
    }
    o
}

fn field_text(f: &FieldDef, in_oneof: bool) -> String {
    let mut s = String::new();
    if let (Some(l), false) = (f.label, in_oneof) {
        s.push_str(l);
        s.push(' ');
    }
    s.push_str(&format!("{} {} = {}", f.type_name, f.name, f.tag));
    if !f.params.is_empty() {
        let mut list = String::from("[\n");
        let last = f.params.len() - 1;
        for (i, (k, v)) in f.params.iter().enumerate() {
            let (k, v) = (escape(k), escape(v));
            let entry = if k == "precision" || k == "scale" {
                format!("{{\n  value: \"{v}\",\n  key: \"{k}\"\n}}")
            } else {
                format!("{{\n  key: \"{k}\",\n  value: \"{v}\"\n}}")
            };
            indent(&mut list, &(entry + if i != last { "," } else { "" }));
        }
        list.push(']');
        let mut map = String::new();
        indent(&mut map, &format!("params: {list}"));
        s.push_str(&format!(" [(confluent.field_meta) = {{\n{map}}}]"));
    }
    s.push_str(";\n");
    s
}

fn message_text(m: &MessageDef) -> String {
    let mut s = format!("message {} {{", m.name);
    if !m.fields.is_empty() {
        s.push('\n');
        for f in &m.fields {
            indent(&mut s, &field_text(f, false));
        }
    }
    if !m.oneofs.is_empty() {
        s.push('\n');
        for o in &m.oneofs {
            let mut t = format!("oneof {} {{", o.name);
            if !o.fields.is_empty() {
                t.push('\n');
                for f in &o.fields {
                    indent(&mut t, &field_text(f, true));
                }
            }
            t.push_str("}\n");
            indent(&mut s, &t);
        }
    }
    if !m.nested.is_empty() || !m.enums.is_empty() {
        s.push('\n');
        for n in &m.nested {
            indent(&mut s, &message_text(n));
        }
        for e in &m.enums {
            indent(&mut s, &enum_text(e));
        }
    }
    s.push_str("}\n");
    s
}

fn enum_text(e: &EnumDef) -> String {
    let mut s = format!("enum {} {{", e.name);
    if !e.values.is_empty() {
        s.push('\n');
        for (name, n) in &e.values {
            indent(&mut s, &format!("{name} = {n};\n"));
        }
    }
    s.push_str("}\n");
    s
}

impl ProtoFile {
    /// The canonical text Confluent's serializer registers.
    pub fn to_text(&self) -> String {
        let mut s = String::from("syntax = \"proto3\";\n");
        if let Some(p) = &self.package {
            s.push_str(&format!("package {p};\n"));
        }
        if !self.imports.is_empty() {
            s.push('\n');
            for i in &self.imports {
                s.push_str(&format!("import \"{i}\";\n"));
            }
        }
        if !self.messages.is_empty() {
            s.push('\n');
            for m in &self.messages {
                s.push_str(&message_text(m));
            }
        }
        s
    }
}

/// `google/protobuf/wrappers.proto` as Confluent's `ProtobufSchema` prints it from protobuf-java's
/// descriptor (the text a primitive root registers): protoc sets `json_name` on every field of
/// that descriptor, and Java prints it as an option (`ProtobufSchemaUtils.toString`).
pub const WRAPPERS_TEXT: &str = "syntax = \"proto3\";
package google.protobuf;

option java_package = \"com.google.protobuf\";
option java_outer_classname = \"WrappersProto\";
option java_multiple_files = true;
option go_package = \"google.golang.org/protobuf/types/known/wrapperspb\";
option cc_enable_arenas = true;
option objc_class_prefix = \"GPB\";
option csharp_namespace = \"Google.Protobuf.WellKnownTypes\";

message DoubleValue {
  double value = 1 [json_name = \"value\"];
}
message FloatValue {
  float value = 1 [json_name = \"value\"];
}
message Int64Value {
  int64 value = 1 [json_name = \"value\"];
}
message UInt64Value {
  uint64 value = 1 [json_name = \"value\"];
}
message Int32Value {
  int32 value = 1 [json_name = \"value\"];
}
message UInt32Value {
  uint32 value = 1 [json_name = \"value\"];
}
message BoolValue {
  bool value = 1 [json_name = \"value\"];
}
message StringValue {
  string value = 1 [json_name = \"value\"];
}
message BytesValue {
  bytes value = 1 [json_name = \"value\"];
}
";
