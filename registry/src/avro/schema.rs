//! Avro schemas as Java's `org.apache.avro.Schema` holds them, parsed from and written to the
//! JSON text a Schema Registry stores.
//!
//! The text matters: a registry keys schemas by their text (Confluent's by the parsed form's
//! `toString()`), so a schema written here must read exactly as Java's `Schema.toString()` writes
//! the same schema, or one Connect schema would register twice. [`AvroSchema::to_json`] follows
//! Java's writer: properties in insertion order after the type's own keys, a named type written
//! in full once and by name afterwards, `namespace` only where it differs from the enclosing one,
//! strings and numbers as Jackson writes them (`\u001B`, `1.0E20`).
//!
//! Properties (`connect.name`, `logicalType`, `precision`, ...) are kept as Java keeps them: every
//! key the type does not reserve, in the order met.

use std::collections::HashMap;

use serde_json::{Map, Value as Json};

use connect_api::{ConnectError, Result};

/// Non-reserved keys of a schema or field, in insertion order.
pub type Props = Map<String, Json>;

/// A full name split as Java's `Schema.Name` splits it (at the last `.`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name {
    pub name: String,
    pub namespace: Option<String>,
}

impl Name {
    /// `full` split at its last `.`; a name without one has no namespace unless `enclosing`.
    pub fn new(full: &str, enclosing: Option<&str>) -> Name {
        match full.rsplit_once('.') {
            Some((ns, name)) => Name {
                name: name.to_owned(),
                namespace: (!ns.is_empty()).then(|| ns.to_owned()),
            },
            None => Name {
                name: full.to_owned(),
                namespace: enclosing.filter(|s| !s.is_empty()).map(str::to_owned),
            },
        }
    }

    pub fn full(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}.{}", self.name),
            None => self.name.clone(),
        }
    }

    /// Java's `getQualified(defaultSpace)`.
    fn qualified(&self, space: Option<&str>) -> String {
        match &self.namespace {
            None => self.name.clone(),
            Some(ns) if Some(ns.as_str()) == space => self.name.clone(),
            Some(_) => self.full(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AvroField {
    pub name: String,
    pub schema: AvroSchema,
    pub doc: Option<String>,
    /// The field's default as JSON (`Some(Json::Null)` is a default of null).
    pub default: Option<Json>,
    pub props: Props,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record {
        name: Name,
        doc: Option<String>,
        fields: Vec<AvroField>,
    },
    Enum {
        name: Name,
        doc: Option<String>,
        symbols: Vec<String>,
        default: Option<String>,
    },
    Fixed {
        name: Name,
        doc: Option<String>,
        size: usize,
    },
    Array(Box<AvroSchema>),
    Map(Box<AvroSchema>),
    Union(Vec<AvroSchema>),
}

/// One Avro schema: its kind and its properties (a union has none).
#[derive(Debug, Clone, PartialEq)]
pub struct AvroSchema {
    pub kind: Kind,
    pub props: Props,
}

impl AvroSchema {
    pub fn new(kind: Kind) -> Self {
        AvroSchema {
            kind,
            props: Props::new(),
        }
    }

    /// Java's `addProp`: kept where first added (a second add of the same key keeps the first).
    pub fn add_prop(&mut self, key: &str, value: impl Into<Json>) {
        if !self.props.contains_key(key) {
            self.props.insert(key.to_owned(), value.into());
        }
    }

    pub fn prop_str(&self, key: &str) -> Option<&str> {
        self.props.get(key).and_then(Json::as_str)
    }

    pub fn is_null(&self) -> bool {
        matches!(self.kind, Kind::Null)
    }

    /// The name of a record, enum or fixed.
    pub fn name(&self) -> Option<&Name> {
        match &self.kind {
            Kind::Record { name, .. } | Kind::Enum { name, .. } | Kind::Fixed { name, .. } => {
                Some(name)
            }
            _ => None,
        }
    }

    /// Java's `Schema.Type.getName()`.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Boolean => "boolean",
            Kind::Int => "int",
            Kind::Long => "long",
            Kind::Float => "float",
            Kind::Double => "double",
            Kind::Bytes => "bytes",
            Kind::String => "string",
            Kind::Record { .. } => "record",
            Kind::Enum { .. } => "enum",
            Kind::Fixed { .. } => "fixed",
            Kind::Array(_) => "array",
            Kind::Map(_) => "map",
            Kind::Union(_) => "union",
        }
    }

    /// The text Java's `Schema.toString()` gives for this schema.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(256);
        let mut names = Names::default();
        self.write(&mut out, &mut names);
        out
    }

    fn write(&self, out: &mut String, names: &mut Names) {
        let primitive = |out: &mut String, t: &str, props: &Props| {
            if props.is_empty() {
                push_str(out, t);
            } else {
                out.push_str("{\"type\":");
                push_str(out, t);
                push_props(out, props);
                out.push('}');
            }
        };
        match &self.kind {
            Kind::Null
            | Kind::Boolean
            | Kind::Int
            | Kind::Long
            | Kind::Float
            | Kind::Double
            | Kind::Bytes
            | Kind::String => primitive(out, self.type_name(), &self.props),
            Kind::Array(items) => {
                out.push_str("{\"type\":\"array\",\"items\":");
                items.write(out, names);
                push_props(out, &self.props);
                out.push('}');
            }
            Kind::Map(values) => {
                out.push_str("{\"type\":\"map\",\"values\":");
                values.write(out, names);
                push_props(out, &self.props);
                out.push('}');
            }
            Kind::Union(branches) => {
                out.push('[');
                for (i, b) in branches.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    b.write(out, names);
                }
                out.push(']');
            }
            Kind::Record { name, doc, fields } => {
                if names.write_ref(name, out) {
                    return;
                }
                let saved = names.space.clone();
                out.push_str("{\"type\":\"record\"");
                names.write_name(name, out);
                names.space = name.namespace.clone();
                if let Some(doc) = doc {
                    out.push_str(",\"doc\":");
                    push_str(out, doc);
                }
                out.push_str(",\"fields\":[");
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str("{\"name\":");
                    push_str(out, &f.name);
                    out.push_str(",\"type\":");
                    f.schema.write(out, names);
                    if let Some(doc) = &f.doc {
                        out.push_str(",\"doc\":");
                        push_str(out, doc);
                    }
                    if let Some(default) = &f.default {
                        out.push_str(",\"default\":");
                        push_json(out, default);
                    }
                    push_props(out, &f.props);
                    out.push('}');
                }
                out.push(']');
                push_props(out, &self.props);
                out.push('}');
                names.space = saved;
            }
            Kind::Enum {
                name,
                doc,
                symbols,
                default,
            } => {
                if names.write_ref(name, out) {
                    return;
                }
                out.push_str("{\"type\":\"enum\"");
                names.write_name(name, out);
                if let Some(doc) = doc {
                    out.push_str(",\"doc\":");
                    push_str(out, doc);
                }
                out.push_str(",\"symbols\":[");
                for (i, s) in symbols.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_str(out, s);
                }
                out.push(']');
                if let Some(d) = default {
                    out.push_str(",\"default\":");
                    push_str(out, d);
                }
                push_props(out, &self.props);
                out.push('}');
            }
            Kind::Fixed { name, doc, size } => {
                if names.write_ref(name, out) {
                    return;
                }
                out.push_str("{\"type\":\"fixed\"");
                names.write_name(name, out);
                if let Some(doc) = doc {
                    out.push_str(",\"doc\":");
                    push_str(out, doc);
                }
                out.push_str(",\"size\":");
                out.push_str(&size.to_string());
                push_props(out, &self.props);
                out.push('}');
            }
        }
    }

    /// Parses a schema text as Java's `Schema.Parser` does (named types referenced by name
    /// after their definition; recursive types are refused).
    pub fn parse(text: &str) -> Result<AvroSchema> {
        let json: Json = serde_json::from_str(text)
            .map_err(|e| ConnectError::data(format!("Invalid Avro schema: {e}")))?;
        let mut parser = Parser::default();
        parser.parse(&json, None)
    }
}

/// Java's `Schema.Names` while writing: the enclosing namespace and the named types written.
#[derive(Default)]
struct Names {
    space: Option<String>,
    seen: std::collections::HashSet<Name>,
}

impl Names {
    fn write_ref(&mut self, name: &Name, out: &mut String) -> bool {
        if self.seen.contains(name) {
            push_str(out, &name.qualified(self.space.as_deref()));
            return true;
        }
        self.seen.insert(name.clone());
        false
    }

    fn write_name(&self, name: &Name, out: &mut String) {
        out.push_str(",\"name\":");
        push_str(out, &name.name);
        match (&name.namespace, &self.space) {
            (Some(ns), space) if Some(ns) != space.as_ref() => {
                out.push_str(",\"namespace\":");
                push_str(out, ns);
            }
            (None, Some(_)) => out.push_str(",\"namespace\":\"\""),
            _ => {}
        }
    }
}

/// `s` as a JSON string the way Jackson writes it: `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`,
/// other control characters as `\u00XX` with upper-case hex (serde_json writes lower case), and
/// everything else as is.
pub(crate) fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `v` as Jackson writes the `JsonNode` Java holds for it: numbers with a fraction or exponent
/// are doubles, written by `Double.toString` ([`java_double`]); strings by [`push_str`].
fn push_json(out: &mut String, v: &Json) {
    match v {
        Json::String(s) => push_str(out, s),
        Json::Number(n) if !(n.is_i64() || n.is_u64()) => {
            out.push_str(&java_double(n.as_f64().expect("a JSON number is finite")));
        }
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json(out, item);
            }
            out.push(']');
        }
        Json::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_str(out, k);
                out.push(':');
                push_json(out, item);
            }
            out.push('}');
        }
        Json::Null | Json::Bool(_) | Json::Number(_) => out.push_str(&v.to_string()),
    }
}

/// Java's `Double.toString(d)`: the shortest digits that read back as `d` (Java 19 and later;
/// a subnormal whose shortest form has one digit may get a second one in Java), as `123.45`
/// when 10^-3 <= |d| < 10^7, else as `1.2345E-7` / `1.0E20`; `.0` where no fraction is left.
pub fn java_double(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Rust's `{:e}` gives the same shortest digits: `-1.2345e-7`, `1e20`.
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} has an integer exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(if d < 0.0 { "-" } else { "" });
    if (1e-3..1e7).contains(&d.abs()) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let padded = format!("{digits:0<int_len$}");
            let (int, frac) = padded.split_at(int_len);
            out.push_str(int);
            out.push('.');
            out.push_str(if frac.is_empty() { "0" } else { frac });
        } else {
            out.push_str("0.");
            out.push_str(&"0".repeat((-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        out.push('.');
        out.push_str(if rest.is_empty() { "0" } else { rest });
        out.push('E');
        out.push_str(&exp.to_string());
    }
    out
}

fn push_props(out: &mut String, props: &Props) {
    for (k, v) in props {
        out.push(',');
        push_str(out, k);
        out.push(':');
        push_json(out, v);
    }
}

const SCHEMA_RESERVED: &[&str] = &[
    "doc",
    "fields",
    "items",
    "name",
    "namespace",
    "size",
    "symbols",
    "values",
    "type",
    "aliases",
];
const FIELD_RESERVED: &[&str] = &["default", "doc", "name", "order", "type", "aliases"];

#[derive(Default)]
struct Parser {
    /// Named types by full name, once their definition is complete.
    defined: HashMap<String, AvroSchema>,
    /// Named types being defined (a reference to one of them is a recursive schema).
    open: Vec<String>,
}

fn bad(message: impl Into<String>) -> ConnectError {
    ConnectError::data(format!("Invalid Avro schema: {}", message.into()))
}

impl Parser {
    fn parse(&mut self, json: &Json, space: Option<&str>) -> Result<AvroSchema> {
        match json {
            Json::String(s) => self.named_or_primitive(s, space),
            Json::Array(branches) => Ok(AvroSchema::new(Kind::Union(
                branches
                    .iter()
                    .map(|b| self.parse(b, space))
                    .collect::<Result<_>>()?,
            ))),
            Json::Object(o) => self.object(o, space),
            other => Err(bad(format!("not a schema: {other}"))),
        }
    }

    fn named_or_primitive(&mut self, s: &str, space: Option<&str>) -> Result<AvroSchema> {
        if let Some(kind) = primitive(s) {
            return Ok(AvroSchema::new(kind));
        }
        let full = if s.contains('.') {
            s.to_owned()
        } else {
            Name::new(s, space).full()
        };
        for candidate in [full.as_str(), s] {
            if self.open.iter().any(|o| o == candidate) {
                return Err(bad(format!(
                    "recursive type {candidate} (not supported by this converter)"
                )));
            }
            if let Some(d) = self.defined.get(candidate) {
                return Ok(d.clone());
            }
        }
        Err(bad(format!("undefined name: {s}")))
    }

    fn object(&mut self, o: &Map<String, Json>, space: Option<&str>) -> Result<AvroSchema> {
        let t = o.get("type").ok_or_else(|| bad("no type"))?;
        let props: Props = o
            .iter()
            .filter(|(k, _)| !SCHEMA_RESERVED.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let Json::String(t) = t else {
            // {"type": {...}} or {"type": [...]}: the inner schema (Java keeps no props then).
            return self.parse(t, space);
        };
        let doc = o.get("doc").and_then(Json::as_str).map(str::to_owned);
        let named = |o: &Map<String, Json>| -> Result<Name> {
            let name = o
                .get("name")
                .and_then(Json::as_str)
                .ok_or_else(|| bad(format!("no name in {t}")))?;
            let ns = o.get("namespace").and_then(Json::as_str);
            Ok(if name.contains('.') {
                Name::new(name, None)
            } else {
                Name::new(name, ns.or(space))
            })
        };
        let kind = match t.as_str() {
            "record" | "error" => {
                let name = named(o)?;
                let full = name.full();
                self.open.push(full.clone());
                let inner_space = name.namespace.clone();
                let fields = o
                    .get("fields")
                    .and_then(Json::as_array)
                    .ok_or_else(|| bad(format!("record {full} has no fields")))?
                    .iter()
                    .map(|f| self.field(f, inner_space.as_deref()))
                    .collect::<Result<Vec<_>>>();
                self.open.pop();
                let schema = AvroSchema {
                    kind: Kind::Record {
                        name,
                        doc,
                        fields: fields?,
                    },
                    props,
                };
                self.defined.insert(full, schema.clone());
                return Ok(schema);
            }
            "enum" => {
                let name = named(o)?;
                let symbols = o
                    .get("symbols")
                    .and_then(Json::as_array)
                    .ok_or_else(|| bad("enum without symbols"))?
                    .iter()
                    .map(|s| {
                        s.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| bad("enum symbol not a string"))
                    })
                    .collect::<Result<_>>()?;
                let default = o.get("default").and_then(Json::as_str).map(str::to_owned);
                let full = name.full();
                let schema = AvroSchema {
                    kind: Kind::Enum {
                        name,
                        doc,
                        symbols,
                        default,
                    },
                    props,
                };
                self.defined.insert(full, schema.clone());
                return Ok(schema);
            }
            "fixed" => {
                let name = named(o)?;
                let size = o
                    .get("size")
                    .and_then(Json::as_u64)
                    .ok_or_else(|| bad("fixed without size"))? as usize;
                let full = name.full();
                let schema = AvroSchema {
                    kind: Kind::Fixed { name, doc, size },
                    props,
                };
                self.defined.insert(full, schema.clone());
                return Ok(schema);
            }
            "array" => Kind::Array(Box::new(self.parse(
                o.get("items").ok_or_else(|| bad("array without items"))?,
                space,
            )?)),
            "map" => Kind::Map(Box::new(self.parse(
                o.get("values").ok_or_else(|| bad("map without values"))?,
                space,
            )?)),
            other => match primitive(other) {
                Some(k) => k,
                None => {
                    // {"type": "SomeNamedType"}
                    let mut s = self.named_or_primitive(other, space)?;
                    for (k, v) in props {
                        s.add_prop(&k, v);
                    }
                    return Ok(s);
                }
            },
        };
        Ok(AvroSchema { kind, props })
    }

    fn field(&mut self, f: &Json, space: Option<&str>) -> Result<AvroField> {
        let o = f.as_object().ok_or_else(|| bad("field not an object"))?;
        let name = o
            .get("name")
            .and_then(Json::as_str)
            .ok_or_else(|| bad("field without name"))?
            .to_owned();
        let schema = self.parse(
            o.get("type")
                .ok_or_else(|| bad(format!("field {name} without type")))?,
            space,
        )?;
        Ok(AvroField {
            name,
            schema,
            doc: o.get("doc").and_then(Json::as_str).map(str::to_owned),
            default: o.get("default").cloned(),
            props: o
                .iter()
                .filter(|(k, _)| !FIELD_RESERVED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }
}

fn primitive(t: &str) -> Option<Kind> {
    Some(match t {
        "null" => Kind::Null,
        "boolean" => Kind::Boolean,
        "int" => Kind::Int,
        "long" => Kind::Long,
        "float" => Kind::Float,
        "double" => Kind::Double,
        "bytes" => Kind::Bytes,
        "string" => Kind::String,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_as_java_does_and_parses_back() {
        let text = r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":{"type":"int","connect.type":"int8"}},{"name":"b","type":["null","string"],"default":null},{"name":"c","type":{"type":"record","name":"Inner","namespace":"x","fields":[{"name":"d","type":"long"}]}},{"name":"e","type":"x.Inner"}],"connect.name":"io.confluent.connect.avro.ConnectDefault"}"#;
        let s = AvroSchema::parse(text).unwrap();
        assert_eq!(s.to_json(), text);
    }

    #[test]
    fn a_nested_type_without_namespace_inside_one_gets_an_empty_namespace() {
        let s = AvroSchema::new(Kind::Record {
            name: Name::new("a.R", None),
            doc: None,
            fields: vec![AvroField {
                name: "f".into(),
                schema: AvroSchema::new(Kind::Fixed {
                    name: Name::new("F", None),
                    doc: None,
                    size: 2,
                }),
                doc: None,
                default: None,
                props: Props::new(),
            }],
        });
        assert_eq!(
            s.to_json(),
            r#"{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":{"type":"fixed","name":"F","namespace":"","size":2}}]}"#
        );
    }

    #[test]
    fn doubles_are_written_as_java_writes_them() {
        for (d, java) in [
            (0.1, "0.1"),
            (0.5, "0.5"),
            (100.0, "100.0"),
            (1234567.0, "1234567.0"),
            (1e7, "1.0E7"),
            (0.001, "0.001"),
            (9.999e-4, "9.999E-4"),
            (1e20, "1.0E20"),
            (-1e-300, "-1.0E-300"),
            (123.456, "123.456"),
            (-2.5, "-2.5"),
            (f64::MAX, "1.7976931348623157E308"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(java_double(d), java, "{d}");
        }
    }

    #[test]
    fn strings_are_escaped_as_jackson_escapes_them() {
        let mut out = String::new();
        push_json(
            &mut out,
            &serde_json::json!({"d": "a\t\u{1b}\u{1f}\"\\é", "n": [1.5, 2, null]}),
        );
        assert_eq!(out, r#"{"d":"a\t\u001B\u001F\"\\é","n":[1.5,2,null]}"#);
    }

    #[test]
    fn recursive_schemas_are_refused_with_a_clear_error() {
        let e = AvroSchema::parse(
            r#"{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("recursive type L"), "{e}");
    }
}
