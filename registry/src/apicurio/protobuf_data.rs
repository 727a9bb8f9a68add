//! A port of Apicurio's `io.apicurio.registry.utils.converter.protobuf.ProtobufData` (the
//! Connect <-> Protobuf mapping of Apicurio's `ProtobufConverter`), which is not Confluent's:
//!
//! # Connect schema -> `.proto` (`fromConnectData`'s descriptor)
//!
//! * Only a STRUCT root ("Top-level Protobuf converter schema must be a struct"). The file is
//!   `proto3`, package the root name's part before its last dot (each part scrubbed), else
//!   `io.apicurio.registry.connect`; the root message is the last part (scrubbed, first letter
//!   upper-cased), else `ConnectMessage`.
//! * Every message is top-level, in the order finished (a message after the messages its fields
//!   need, so the root is last); a struct field's message is named after the *field* (scrubbed,
//!   upper-cased first letter), `2`, `3`... appended when the name is taken; the same Connect
//!   schema twice is one message.
//! * Fields numbered 1, 2, 3... in Connect order, named after the Connect field scrubbed
//!   (`[A-Za-z0-9_]`, `field_` before a leading non-letter); INT8/INT16/INT32 -> `int32`, INT64 ->
//!   `int64`, FLOAT32 -> `float`, FLOAT64 -> `double`, BOOLEAN -> `bool`, STRING -> `string`,
//!   BYTES -> `bytes`; an optional non-repeated field is proto3 `optional`.
//! * `json_name` carries what protobuf loses: `__int8:` / `__int16:` before the name for INT8 /
//!   INT16 (of the field, or of an array's elements, or of a map's values), and `__raw:<Connect
//!   name>` when scrubbing changed the name.
//! * ARRAY -> `repeated` of the element type; an array element that is an ARRAY is a message
//!   `<Field>Wrapper { repeated <T> items = 1; }`.
//! * MAP (string keys only) -> `repeated <Field>Entry`, a top-level message with `option
//!   map_entry = true;` and `key = 1`, `value = 2`; a map inside an array or a map fails on its
//!   value ("Nested map-in-collection is not supported...").
//! * No logical types: Decimal, Date, Time and Timestamp values fail, as Java's casts do.
//!
//! # The registered text
//!
//! Apicurio's serializer registers `FileDescriptorUtils.fileDescriptorToProtoFile(file).toSchema()`:
//! Wire's printing, with its `// Proto schema formatted by Wire, do not edit.` header, a blank
//! line between fields, fully-qualified type names (`.pkg.Msg`), and the `optional` fields moved
//! after the others.
//!
//! # Reading (`toConnectData`)
//!
//! Java parses the registered text with `FileDescriptorUtils.toDescriptor`, which drops proto3
//! `optional` (and the oneofs it implies): every non-repeated field reads back as a *required*
//! Connect field, an absent one as its default (0, "", false, empty bytes, a struct of defaults);
//! the fields of real oneofs first, then the others in the text's order (so the `optional` ones
//! of our texts last). Arrays and maps are optional with
//! required elements; a message of one repeated field named `items` reads as that array; enums
//! as their symbol's name; structs are named after the message's full name.

use std::collections::{HashMap, HashSet};

use connect_api::data::logical::{DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME};
use connect_api::data::{Field, SchemaBuilder, SchemaType};
use connect_api::{ConnectError, Result, Schema, Struct, Value};
use protox::prost_reflect::{
    DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value as PValue,
};

pub const DEFAULT_PACKAGE: &str = "io.apicurio.registry.connect";
pub const DEFAULT_MESSAGE: &str = "ConnectMessage";
const INT8_PREFIX: &str = "__int8:";
const INT16_PREFIX: &str = "__int16:";
const RAW_PREFIX: &str = "__raw:";
const WRAPPER_ITEMS: &str = "items";
const NESTED_MAP_UNSUPPORTED: &str =
    "Nested map-in-collection is not supported. Wrap the inner map in a struct field.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// proto3 without a label (implicit presence).
    Implicit,
    /// proto3 `optional` (explicit presence).
    Optional,
    Repeated,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    Int32,
    Int64,
    Float,
    Double,
    Bool,
    String,
    Bytes,
    /// A top-level message of the file, by its simple name.
    Message(String),
}

#[derive(Debug, Clone)]
pub struct ProtoField {
    pub name: String,
    pub number: u32,
    pub label: Label,
    pub ty: FieldType,
    pub json_name: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ProtoMessage {
    pub name: String,
    pub map_entry: bool,
    pub fields: Vec<ProtoField>,
}

/// The file Apicurio's `ProtobufData` builds for a Connect schema.
#[derive(Debug, Clone)]
pub struct ProtoFile {
    pub package: String,
    /// In Java's order: each message after those its fields need; the root last.
    pub messages: Vec<ProtoMessage>,
    /// The root message's simple name.
    pub root: String,
}

fn is_java_letter_or_digit(c: char) -> bool {
    c.len_utf16() == 1 && (c.is_alphabetic() || c.is_numeric())
}

/// `sanitizeIdentifier`: each UTF-16 unit not a letter, digit or `_` becomes `_`.
fn sanitize_identifier(name: &str, type_name: bool) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if is_java_letter_or_digit(c) || c == '_' {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('_');
            }
        }
    }
    if out.is_empty() {
        out.push_str(if type_name { "Message" } else { "field" });
    }
    let first = out.chars().next().unwrap_or('_');
    if !(first.is_alphabetic() && first.len_utf16() == 1) && first != '_' {
        out.insert_str(0, if type_name { "Message_" } else { "field_" });
    }
    out
}

/// `sanitizeTypeName`: sanitized, the first letter upper-cased.
fn sanitize_type_name(name: &str) -> String {
    let s = sanitize_identifier(name, true);
    let mut chars = s.chars();
    let first = chars.next().unwrap_or('M');
    let upper: Vec<char> = first.to_uppercase().collect();
    let first = if upper.len() == 1 { upper[0] } else { first };
    std::iter::once(first).chain(chars).collect()
}

/// Java's `String.split` on a literal: the whole string when it has no separator, else the
/// parts with the trailing empty ones dropped (none left when all are empty).
fn java_split(s: &str, sep: char) -> Vec<&str> {
    if !s.contains(sep) {
        return vec![s];
    }
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// protobuf-java's `validateSymbolName`: ASCII letters, `_`, and digits after the first.
fn check_identifier(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name
            .bytes()
            .enumerate()
            .all(|(i, c)| c.is_ascii_alphabetic() || c == b'_' || (c.is_ascii_digit() && i > 0));
    if ok {
        Ok(())
    } else {
        Err(ConnectError::data(format!(
            "Invalid Protobuf schema generated from Connect schema: \"{name}\" is not a valid identifier"
        )))
    }
}

/// `FileDescriptorUtils.getDefaultJsonName`, which Apicurio's serializer calls on a field with a
/// `json_name` when printing the text: it fails (`StringIndexOutOfBoundsException`) on a name
/// with `__` inside or of underscores only.
fn check_default_json_name(name: &str) -> Result<()> {
    let parts = java_split(name, '_');
    if parts.is_empty() || parts.iter().skip(1).any(|p| p.is_empty()) {
        return Err(ConnectError::data(format!(
            "Apicurio's serializer cannot print the field {name} (a scrubbed name with \"__\" and a json_name: Java's FileDescriptorUtils fails on it)"
        )));
    }
    Ok(())
}

/// Wire's escaping of a string option's value.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

fn sanitize_qualified(name: &str) -> String {
    java_split(name, '.')
        .into_iter()
        .map(|p| sanitize_identifier(p, false))
        .collect::<Vec<_>>()
        .join(".")
}

fn package_name(schema: &Schema) -> String {
    match schema.name() {
        Some(n) if n.contains('.') => sanitize_qualified(&n[..n.rfind('.').unwrap_or(0)]),
        _ => DEFAULT_PACKAGE.to_owned(),
    }
}

fn message_name(schema: &Schema) -> String {
    match schema.name() {
        Some(n) if !n.trim().is_empty() => {
            sanitize_type_name(n.rfind('.').map_or(n, |i| &n[i + 1..]))
        }
        _ => DEFAULT_MESSAGE.to_owned(),
    }
}

fn json_name(effective: &Schema, raw: &str, sanitised: &str, changed: bool) -> Option<String> {
    let prefix = match effective.schema_type() {
        SchemaType::Int8 => INT8_PREFIX,
        SchemaType::Int16 => INT16_PREFIX,
        _ => "",
    };
    (!prefix.is_empty() || changed).then(|| {
        if changed {
            format!("{prefix}{RAW_PREFIX}{raw}")
        } else {
            format!("{prefix}{sanitised}")
        }
    })
}

/// Java's `MessageBuilderContext`.
struct Ctx {
    messages: Vec<ProtoMessage>,
    /// Struct schema -> its message (dedup).
    message_names: Vec<(Schema, String)>,
    all_names: HashSet<String>,
}

impl Ctx {
    fn unique(&mut self, preferred: &str) -> String {
        let sanitized = sanitize_type_name(preferred);
        let mut candidate = sanitized.clone();
        let mut i = 2;
        while self.all_names.contains(&candidate)
            || self.message_names.iter().any(|(_, n)| *n == candidate)
        {
            candidate = format!("{sanitized}{i}");
            i += 1;
        }
        self.all_names.insert(candidate.clone());
        candidate
    }

    fn add_message(&mut self, preferred: &str, schema: &Schema) -> Result<String> {
        if let Some((_, n)) = self.message_names.iter().find(|(s, _)| s == schema) {
            return Ok(n.clone());
        }
        let name = self.unique(preferred);
        self.message_names.push((schema.clone(), name.clone()));
        let mut fields = Vec::with_capacity(schema.fields().len());
        let mut seen = HashSet::new();
        for (i, f) in schema.fields().iter().enumerate() {
            let field = self.field_for(&f.name, &f.schema, i as u32 + 1)?;
            if !seen.insert(field.name.clone()) {
                return Err(ConnectError::data(format!(
                    "Invalid Protobuf schema generated from Connect schema: field name \"{}\" is already defined in {name}",
                    field.name
                )));
            }
            fields.push(field);
        }
        self.messages.push(ProtoMessage {
            name: name.clone(),
            map_entry: false,
            fields,
        });
        Ok(name)
    }

    fn field_for(&mut self, name: &str, schema: &Schema, number: u32) -> Result<ProtoField> {
        let sanitised = sanitize_identifier(name, false);
        let changed = name != sanitised;
        let (label, ty, json) = match schema.schema_type() {
            SchemaType::Array => {
                let elem = value_schema(schema)?;
                let ty = self.field_type(elem, &sanitize_type_name(name))?;
                (
                    Label::Repeated,
                    ty,
                    json_name(elem, name, &sanitised, changed),
                )
            }
            SchemaType::Map => {
                let entry = self.add_map_entry(name, schema)?;
                (
                    Label::Repeated,
                    FieldType::Message(entry),
                    changed.then(|| format!("{RAW_PREFIX}{name}")),
                )
            }
            _ => {
                let label = if schema.is_optional() {
                    Label::Optional
                } else {
                    Label::Implicit
                };
                let ty = self.field_type(schema, &sanitize_type_name(name))?;
                (label, ty, json_name(schema, name, &sanitised, changed))
            }
        };
        Ok(ProtoField {
            name: sanitised,
            number,
            label,
            ty,
            json_name: json,
        })
    }

    fn field_type(&mut self, schema: &Schema, preferred: &str) -> Result<FieldType> {
        Ok(match schema.schema_type() {
            SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 => FieldType::Int32,
            SchemaType::Int64 => FieldType::Int64,
            SchemaType::Float32 => FieldType::Float,
            SchemaType::Float64 => FieldType::Double,
            SchemaType::Boolean => FieldType::Bool,
            SchemaType::String => FieldType::String,
            SchemaType::Bytes => FieldType::Bytes,
            SchemaType::Struct => FieldType::Message(self.add_message(preferred, schema)?),
            SchemaType::Array => FieldType::Message(
                self.add_wrapper(&format!("{preferred}Wrapper"), value_schema(schema)?)?,
            ),
            SchemaType::Map => FieldType::Message(self.add_map_entry(preferred, schema)?),
        })
    }

    fn add_wrapper(&mut self, preferred: &str, elem: &Schema) -> Result<String> {
        let name = self.unique(preferred);
        let ty = self.field_type(elem, &format!("{name}Element"))?;
        let items = ProtoField {
            name: WRAPPER_ITEMS.to_owned(),
            number: 1,
            label: Label::Repeated,
            ty,
            json_name: json_name(elem, WRAPPER_ITEMS, WRAPPER_ITEMS, false),
        };
        self.messages.push(ProtoMessage {
            name: name.clone(),
            map_entry: false,
            fields: vec![items],
        });
        Ok(name)
    }

    fn add_map_entry(&mut self, field_name: &str, schema: &Schema) -> Result<String> {
        let key = key_schema(schema)?;
        if key.schema_type() != SchemaType::String {
            return Err(ConnectError::data(
                "Only string map keys are supported by the Protobuf converter",
            ));
        }
        let name = self.unique(&format!("{}Entry", sanitize_type_name(field_name)));
        let key = self.map_field("key", key, 1)?;
        let value = self.map_field("value", value_schema(schema)?, 2)?;
        self.messages.push(ProtoMessage {
            name: name.clone(),
            map_entry: true,
            fields: vec![key, value],
        });
        Ok(name)
    }

    fn map_field(&mut self, name: &str, schema: &Schema, number: u32) -> Result<ProtoField> {
        Ok(ProtoField {
            name: name.to_owned(),
            number,
            label: Label::Implicit,
            ty: self.field_type(schema, &sanitize_type_name(name))?,
            json_name: json_name(schema, name, name, false),
        })
    }
}

fn value_schema(schema: &Schema) -> Result<&Schema> {
    schema
        .value_schema()
        .ok_or_else(|| ConnectError::data("an array or map schema without a value schema"))
}

fn key_schema(schema: &Schema) -> Result<&Schema> {
    schema
        .key_schema()
        .ok_or_else(|| ConnectError::data("a map schema without a key schema"))
}

impl ProtoFile {
    /// The file for a Connect schema (Java's `cachedSchema`).
    pub fn from_connect_schema(schema: &Schema) -> Result<Self> {
        if schema.schema_type() != SchemaType::Struct {
            return Err(ConnectError::data(
                "Top-level Protobuf converter schema must be a struct",
            ));
        }
        let mut ctx = Ctx {
            messages: Vec::new(),
            message_names: Vec::new(),
            all_names: HashSet::new(),
        };
        let root = ctx.add_message(&message_name(schema), schema)?;
        let package = package_name(schema);
        // What protobuf-java's `FileDescriptor.buildFrom` and the printing refuse.
        for part in package.split('.') {
            check_identifier(part)?;
        }
        for m in &ctx.messages {
            check_identifier(&m.name)?;
            for f in &m.fields {
                check_identifier(&f.name)?;
                if f.json_name.is_some() {
                    check_default_json_name(&f.name)?;
                }
            }
        }
        Ok(Self {
            package,
            messages: ctx.messages,
            root,
        })
    }

    /// The root message's full name.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.package, self.root)
    }

    fn message(&self, name: &str) -> Result<&ProtoMessage> {
        self.messages
            .iter()
            .find(|m| m.name == name)
            .ok_or_else(|| ConnectError::data(format!("no message {name} in the schema")))
    }

    /// The registered text (`fileDescriptorToProtoFile(...).toSchema()`, Wire's printing).
    pub fn to_text(&self) -> String {
        let mut out = String::from(
            "// Proto schema formatted by Wire, do not edit.\n// Source: \n\nsyntax = \"proto3\";\n",
        );
        out.push_str(&format!("\npackage {};\n", self.package));
        for m in &self.messages {
            out.push('\n');
            out.push_str(&format!("message {} {{", m.name));
            if m.map_entry {
                out.push_str("\n  option map_entry = true;\n");
            }
            let (plain, optional): (Vec<&ProtoField>, Vec<&ProtoField>) =
                m.fields.iter().partition(|f| f.label != Label::Optional);
            for f in plain.into_iter().chain(optional) {
                out.push_str("\n  ");
                match f.label {
                    Label::Implicit => {}
                    Label::Optional => out.push_str("optional "),
                    Label::Repeated => out.push_str("repeated "),
                }
                let ty = match &f.ty {
                    FieldType::Int32 => "int32".to_owned(),
                    FieldType::Int64 => "int64".to_owned(),
                    FieldType::Float => "float".to_owned(),
                    FieldType::Double => "double".to_owned(),
                    FieldType::Bool => "bool".to_owned(),
                    FieldType::String => "string".to_owned(),
                    FieldType::Bytes => "bytes".to_owned(),
                    FieldType::Message(n) => format!(".{}.{n}", self.package),
                };
                out.push_str(&format!("{ty} {} = {}", f.name, f.number));
                if let Some(j) = &f.json_name {
                    out.push_str(&format!(" [json_name = \"{}\"]", escape(j)));
                }
                out.push_str(";\n");
            }
            out.push_str("}\n");
        }
        out
    }

    /// The message indexes Apicurio writes with `send-indexes` (`MessageIndexesUtil.getMessageIndexes`:
    /// each part of the full name looked up among the file's messages, descending on a match).
    pub fn indexes(&self) -> Vec<i32> {
        let mut indexes = Vec::new();
        let full = self.full_name();
        let mut level: Vec<&str> = self.messages.iter().map(|m| m.name.as_str()).collect();
        for part in java_split(&full, '.') {
            if let Some(i) = level.iter().position(|n| *n == part) {
                indexes.push(i as i32);
                level = Vec::new(); // no nested messages
            }
        }
        indexes
    }

    /// The root message's bytes for a Connect value (`fromConnectData(...).writeTo`).
    pub fn encode(&self, schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<()> {
        self.encode_message(&self.root, schema, value, out)
    }

    fn encode_message(
        &self,
        message: &str,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let Value::Struct(s) = value else {
            return Err(ConnectError::data(format!(
                "Expected Struct for schema {}",
                schema.name().unwrap_or("null")
            )));
        };
        let m = self.message(message)?;
        for (f, pf) in schema.fields().iter().zip(&m.fields) {
            let v = s.get_by_index(f.index).unwrap_or(&Value::Null);
            if v.is_null() {
                continue;
            }
            self.encode_field(pf, f, &f.schema, v, out)?;
        }
        Ok(())
    }

    fn is_map_entry(&self, ty: &FieldType) -> bool {
        matches!(ty, FieldType::Message(n) if self.messages.iter().any(|m| m.name == *n && m.map_entry))
    }

    fn encode_field(
        &self,
        pf: &ProtoField,
        field: &Field,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if pf.label == Label::Repeated && self.is_map_entry(&pf.ty) {
            let FieldType::Message(entry) = &pf.ty else {
                unreachable!()
            };
            if schema.schema_type() != SchemaType::Map {
                return Err(ConnectError::data(NESTED_MAP_UNSUPPORTED));
            }
            let Value::Map(entries) = value else {
                return Err(mismatch(field, schema, value));
            };
            let entry = self.message(entry)?;
            let mut buf = Vec::new();
            for (k, v) in entries {
                buf.clear();
                self.encode_single(
                    &entry.fields[0],
                    field,
                    key_schema(schema)?,
                    k,
                    true,
                    &mut buf,
                )?;
                self.encode_single(
                    &entry.fields[1],
                    field,
                    value_schema(schema)?,
                    v,
                    true,
                    &mut buf,
                )?;
                write_tag(out, pf.number, 2);
                write_len_delimited(out, &buf);
            }
            return Ok(());
        }
        if pf.label == Label::Repeated {
            let Value::Array(items) = value else {
                return Err(mismatch(field, schema, value));
            };
            let elem = value_schema(schema)?;
            if items.iter().any(Value::is_null) {
                return Err(ConnectError::data(format!(
                    "Field {}: protobuf repeated fields cannot hold null elements",
                    field.name
                )));
            }
            let packed = !matches!(
                pf.ty,
                FieldType::String | FieldType::Bytes | FieldType::Message(_)
            );
            if packed {
                if items.is_empty() {
                    return Ok(());
                }
                let mut buf = Vec::new();
                for item in items {
                    scalar_payload(&pf.ty, field, elem, item, &mut buf)?;
                }
                write_tag(out, pf.number, 2);
                write_len_delimited(out, &buf);
            } else {
                for item in items {
                    self.encode_single(pf, field, elem, item, true, out)?;
                }
            }
            return Ok(());
        }
        self.encode_single(pf, field, schema, value, pf.label == Label::Optional, out)
    }

    /// One value of `pf` (a singular field, a repeated field's element or a map entry's key or
    /// value), with its tag; a proto3 default is left out unless `always`.
    fn encode_single(
        &self,
        pf: &ProtoField,
        field: &Field,
        schema: &Schema,
        value: &Value,
        always: bool,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        if value.is_null() {
            return Err(ConnectError::data(format!(
                "Field {}: a null {} cannot be written to protobuf",
                field.name,
                if pf.name == "value" {
                    "map value"
                } else {
                    "value"
                }
            )));
        }
        if let Some(name) = schema.name()
            && matches!(name, DECIMAL_NAME | DATE_NAME | TIME_NAME | TIMESTAMP_NAME)
        {
            return Err(ConnectError::data(format!(
                "Field {}: the Connect logical type {name} is not supported by Apicurio's ProtobufConverter (its ProtobufData fails on such values too)",
                field.name
            )));
        }
        match &pf.ty {
            FieldType::Message(name) => {
                let mut buf = Vec::new();
                match schema.schema_type() {
                    SchemaType::Struct => self.encode_message(name, schema, value, &mut buf)?,
                    SchemaType::Array => {
                        let wrapper = self.message(name)?;
                        self.encode_field(&wrapper.fields[0], field, schema, value, &mut buf)?;
                    }
                    SchemaType::Map => return Err(ConnectError::data(NESTED_MAP_UNSUPPORTED)),
                    _ => return Err(mismatch(field, schema, value)),
                }
                write_tag(out, pf.number, 2);
                write_len_delimited(out, &buf);
            }
            ty => {
                let mut buf = Vec::new();
                scalar_payload(ty, field, schema, value, &mut buf)?;
                let default = match ty {
                    FieldType::String | FieldType::Bytes => buf == [0],
                    FieldType::Float => buf == [0; 4],
                    FieldType::Double => buf == [0; 8],
                    _ => buf == [0],
                };
                if default && !always {
                    return Ok(());
                }
                let wire_type = match ty {
                    FieldType::Float => 5,
                    FieldType::Double => 1,
                    FieldType::String | FieldType::Bytes => 2,
                    _ => 0,
                };
                write_tag(out, pf.number, wire_type);
                out.extend_from_slice(&buf);
            }
        }
        Ok(())
    }
}

fn mismatch(field: &Field, schema: &Schema, value: &Value) -> ConnectError {
    ConnectError::data(format!(
        "Field {}: a {} value for a {:?} schema",
        field.name,
        value.type_name(),
        schema.schema_type()
    ))
}

/// A scalar's encoding without its tag (strings and bytes with their length).
fn scalar_payload(
    ty: &FieldType,
    field: &Field,
    schema: &Schema,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<()> {
    if let Some(name) = schema.name()
        && matches!(name, DECIMAL_NAME | DATE_NAME | TIME_NAME | TIMESTAMP_NAME)
    {
        return Err(ConnectError::data(format!(
            "Field {}: the Connect logical type {name} is not supported by Apicurio's ProtobufConverter (its ProtobufData fails on such values too)",
            field.name
        )));
    }
    match (ty, value) {
        (FieldType::Int32, Value::Int8(v)) => write_varint(out, i64::from(*v) as u64),
        (FieldType::Int32, Value::Int16(v)) => write_varint(out, i64::from(*v) as u64),
        (FieldType::Int32, Value::Int32(v)) => write_varint(out, i64::from(*v) as u64),
        (FieldType::Int64, Value::Int64(v)) => write_varint(out, *v as u64),
        (FieldType::Float, Value::Float32(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (FieldType::Double, Value::Float64(v)) => out.extend_from_slice(&v.to_le_bytes()),
        (FieldType::Bool, Value::Boolean(v)) => out.push(u8::from(*v)),
        (FieldType::String, Value::String(s)) => write_len_delimited(out, s.as_bytes()),
        (FieldType::Bytes, Value::Bytes(b)) => write_len_delimited(out, b),
        _ => return Err(mismatch(field, schema, value)),
    }
    Ok(())
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn write_tag(out: &mut Vec<u8>, number: u32, wire_type: u8) {
    write_varint(out, (u64::from(number) << 3) | u64::from(wire_type));
}

fn write_len_delimited(out: &mut Vec<u8>, bytes: &[u8]) {
    write_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// `Ref { string name = 1; }` length-delimited (`Ref.writeDelimitedTo`).
pub fn write_ref(out: &mut Vec<u8>, name: &str) {
    let mut buf = Vec::with_capacity(name.len() + 2);
    if !name.is_empty() {
        write_tag(&mut buf, 1, 2);
        write_len_delimited(&mut buf, name.as_bytes());
    }
    write_len_delimited(out, &buf);
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Reads a length-delimited `Ref` (`Ref.parseDelimitedFrom`): its name and the bytes after it;
/// `None` when the bytes are not one.
pub fn read_ref(bytes: &[u8]) -> Option<(String, &[u8])> {
    let mut pos = 0;
    let len = usize::try_from(read_varint(bytes, &mut pos)?).ok()?;
    let end = pos.checked_add(len).filter(|e| *e <= bytes.len())?;
    let body = &bytes[pos..end];
    let mut name = String::new();
    let mut p = 0;
    while p < body.len() {
        let tag = read_varint(body, &mut p)?;
        match tag & 7 {
            0 => {
                read_varint(body, &mut p)?;
            }
            1 => p += 8,
            5 => p += 4,
            2 => {
                let l = usize::try_from(read_varint(body, &mut p)?).ok()?;
                let e = p.checked_add(l).filter(|e| *e <= body.len())?;
                if tag >> 3 == 1 {
                    name = String::from_utf8(body[p..e].to_vec()).ok()?;
                }
                p = e;
            }
            _ => return None,
        }
        if p > body.len() {
            return None;
        }
    }
    Some((name, &bytes[end..]))
}

/// Reading: a descriptor of the registered text (map entries as plain repeated messages, so
/// entries keep their order) to a Connect schema and value, as Java's `toConnectData` on the
/// descriptor `FileDescriptorUtils.toDescriptor` parses.
pub struct Reader<'a> {
    /// Full names of the messages that were map entries.
    pub map_entries: &'a HashSet<String>,
}

/// The fields in the order Java's parsed descriptor has them (`FileDescriptorUtils.toDynamicMessage`):
/// the fields of the real oneofs first (oneof by oneof), then the others in the text's order
/// (proto3 `optional` ones included, as plain fields).
fn java_field_order(desc: &MessageDescriptor) -> Vec<FieldDescriptor> {
    let declared = declared_fields(desc);
    let mut out: Vec<FieldDescriptor> = Vec::with_capacity(declared.len());
    for o in desc.oneofs().filter(|o| !o.is_synthetic()) {
        out.extend(
            declared
                .iter()
                .filter(|f| f.containing_oneof().as_ref() == Some(&o))
                .cloned(),
        );
    }
    out.extend(
        declared
            .into_iter()
            .filter(|f| f.containing_oneof().is_none_or(|o| o.is_synthetic())),
    );
    out
}

/// The fields in the order the text declares them (prost-reflect's `fields()` is by number).
fn declared_fields(desc: &MessageDescriptor) -> Vec<FieldDescriptor> {
    desc.descriptor_proto()
        .field
        .iter()
        .filter_map(|f| desc.get_field(u32::try_from(f.number()).ok()?))
        .collect()
}

fn connect_field_name(f: &FieldDescriptor) -> String {
    let json = f.json_name();
    let json = json
        .strip_prefix(INT8_PREFIX)
        .or_else(|| json.strip_prefix(INT16_PREFIX))
        .unwrap_or(json);
    match json.strip_prefix(RAW_PREFIX) {
        Some(raw) => raw.to_owned(),
        None => f.name().to_owned(),
    }
}

fn is_wrapper(desc: &MessageDescriptor) -> Option<FieldDescriptor> {
    let mut fields = desc.fields();
    let sole = fields.next()?;
    (fields.next().is_none() && sole.name() == WRAPPER_ITEMS && sole.is_list()).then_some(sole)
}

const MAX_DEPTH: usize = 64;

impl Reader<'_> {
    fn is_map(&self, f: &FieldDescriptor) -> Option<MessageDescriptor> {
        match f.kind() {
            Kind::Message(m) if f.is_list() && self.map_entries.contains(m.full_name()) => Some(m),
            _ => None,
        }
    }

    /// `toConnectSchema(descriptor)`.
    pub fn to_connect_schema(&self, desc: &MessageDescriptor) -> Result<Schema> {
        self.schema_at(desc, 0)
    }

    fn schema_at(&self, desc: &MessageDescriptor, depth: usize) -> Result<Schema> {
        if depth > MAX_DEPTH {
            return Err(ConnectError::data(format!(
                "The Protobuf message {} is recursive: a Connect schema cannot be",
                desc.full_name()
            )));
        }
        let mut b = SchemaBuilder::struct_().name(desc.full_name().replace('$', "."));
        for f in java_field_order(desc) {
            b = b.try_field(connect_field_name(&f), self.field_schema(&f, depth)?)?;
        }
        Ok(b.build())
    }

    fn field_schema(&self, f: &FieldDescriptor, depth: usize) -> Result<Schema> {
        if let Some(entry) = self.is_map(f) {
            let key = entry
                .get_field_by_name("key")
                .ok_or_else(|| ConnectError::data("a map entry without a key"))?;
            let value = entry
                .get_field_by_name("value")
                .ok_or_else(|| ConnectError::data("a map entry without a value"))?;
            return Ok(SchemaBuilder::map(
                self.field_schema(&key, depth)?,
                self.field_schema(&value, depth)?,
            )
            .optional()
            .build());
        }
        if f.is_list() {
            return Ok(SchemaBuilder::array(self.scalar_schema(f, depth)?)
                .optional()
                .build());
        }
        // Java's parsed descriptor has no proto3 `optional`: every field is required.
        self.scalar_schema(f, depth)
    }

    fn scalar_schema(&self, f: &FieldDescriptor, depth: usize) -> Result<Schema> {
        Ok(match f.kind() {
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Uint32 | Kind::Fixed32 => {
                let json = f.json_name();
                if json.starts_with(INT8_PREFIX) {
                    Schema::int8()
                } else if json.starts_with(INT16_PREFIX) {
                    Schema::int16()
                } else {
                    Schema::int32()
                }
            }
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 | Kind::Uint64 | Kind::Fixed64 => {
                Schema::int64()
            }
            Kind::Float => Schema::float32(),
            Kind::Double => Schema::float64(),
            Kind::Bool => Schema::boolean(),
            Kind::String | Kind::Enum(_) => Schema::string(),
            Kind::Bytes => Schema::bytes(),
            Kind::Message(m) => {
                if let Some(items) = is_wrapper(&m) {
                    return self.field_schema(&items, depth + 1);
                }
                self.schema_at(&m, depth + 1)?
            }
        })
    }

    /// `toConnectValue(schema, message)`.
    pub fn to_connect_value(&self, schema: &Schema, message: &DynamicMessage) -> Result<Value> {
        let desc = message.descriptor();
        let mut by_name: HashMap<String, FieldDescriptor> = HashMap::new();
        for f in declared_fields(&desc) {
            by_name.insert(connect_field_name(&f), f);
        }
        let mut values = Vec::with_capacity(schema.fields().len());
        for field in schema.fields() {
            let v = match by_name.get(&field.name) {
                Some(f) => {
                    let pv = message.get_field(f);
                    self.field_value(&field.schema, f, &pv)?
                }
                None => Value::Null,
            };
            values.push(v);
        }
        let s = Struct::from_checked_values(schema.clone(), values);
        s.validate()?;
        Ok(Value::Struct(s))
    }

    fn field_value(&self, schema: &Schema, f: &FieldDescriptor, v: &PValue) -> Result<Value> {
        if let Some(entry) = self.is_map(f) {
            let (Some(kf), Some(vf)) = (
                entry.get_field_by_name("key"),
                entry.get_field_by_name("value"),
            ) else {
                return Err(ConnectError::data("a map entry without a key or value"));
            };
            let PValue::List(items) = v else {
                return Err(ConnectError::data("a map field that is not a list"));
            };
            let mut out: Vec<(Value, Value)> = Vec::with_capacity(items.len());
            for item in items {
                let PValue::Message(e) = item else {
                    return Err(ConnectError::data("a map entry that is not a message"));
                };
                let k = self.field_value(key_schema(schema)?, &kf, &e.get_field(&kf))?;
                let val = self.field_value(value_schema(schema)?, &vf, &e.get_field(&vf))?;
                match out.iter_mut().find(|(ek, _)| *ek == k) {
                    Some(slot) => slot.1 = val,
                    None => out.push((k, val)),
                }
            }
            return Ok(Value::Map(out));
        }
        if f.is_list() {
            let PValue::List(items) = v else {
                return Err(ConnectError::data("a repeated field that is not a list"));
            };
            let elem = value_schema(schema)?;
            return items
                .iter()
                .map(|i| self.scalar_value(elem, f, i))
                .collect::<Result<Vec<_>>>()
                .map(Value::Array);
        }
        self.scalar_value(schema, f, v)
    }

    fn scalar_value(&self, schema: &Schema, f: &FieldDescriptor, v: &PValue) -> Result<Value> {
        Ok(match v {
            PValue::I32(i) => int_value(schema, *i),
            PValue::U32(u) => int_value(schema, *u as i32),
            PValue::I64(i) => Value::Int64(*i),
            PValue::U64(u) => Value::Int64(*u as i64),
            PValue::F32(x) => Value::Float32(*x),
            PValue::F64(x) => Value::Float64(*x),
            PValue::Bool(b) => Value::Boolean(*b),
            PValue::String(s) => Value::String(s.clone()),
            PValue::Bytes(b) => Value::Bytes(b.to_vec()),
            PValue::EnumNumber(n) => {
                let Kind::Enum(e) = f.kind() else {
                    return Err(ConnectError::data("an enum value of a non-enum field"));
                };
                Value::String(match e.get_value(*n) {
                    Some(ev) => ev.name().to_owned(),
                    None => format!("UNKNOWN_ENUM_VALUE_{}_{n}", e.name()),
                })
            }
            PValue::Message(m) => {
                let desc = m.descriptor();
                if let Some(items) = is_wrapper(&desc) {
                    let PValue::List(list) = &*m.get_field(&items) else {
                        return Err(ConnectError::data("a wrapper without its items"));
                    };
                    let elem = value_schema(schema)?;
                    return list
                        .iter()
                        .map(|i| self.scalar_value(elem, &items, i))
                        .collect::<Result<Vec<_>>>()
                        .map(Value::Array);
                }
                return self.to_connect_value(schema, m);
            }
            PValue::List(_) | PValue::Map(_) => {
                return Err(ConnectError::data(format!(
                    "Field {}: a repeated value where one was expected",
                    f.name()
                )));
            }
        })
    }
}

fn int_value(schema: &Schema, i: i32) -> Value {
    match schema.schema_type() {
        SchemaType::Int8 => Value::Int8(i as i8),
        SchemaType::Int16 => Value::Int16(i as i16),
        _ => Value::Int32(i),
    }
}
