//! Avro schemas as Java's `org.apache.avro.Schema` holds them, parsed from and written to the
//! JSON text a Schema Registry stores.
//!
//! The text matters: a registry keys schemas by their text (Confluent's by the parsed form's
//! `toString()`), so a schema written here must read exactly as Java's `Schema.toString()` writes
//! the same schema, or one Connect schema would register twice. [`AvroSchema::to_json`] follows
//! Java's writer: properties in insertion order after the type's own keys, a named type written
//! in full once and by name afterwards, `namespace` only where it differs from the enclosing one.
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

fn push_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("a string serializes"));
}

fn push_json(out: &mut String, v: &Json) {
    out.push_str(&serde_json::to_string(v).expect("JSON serializes"));
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
    fn recursive_schemas_are_refused_with_a_clear_error() {
        let e = AvroSchema::parse(
            r#"{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("recursive type L"), "{e}");
    }
}
