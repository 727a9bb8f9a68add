//! JSON Schema documents as Confluent's JSON Schema support holds them (the schema classes of the
//! everit library it is built on): the model ([`JsonSchema`]), its text as Confluent registers it
//! ([`JsonSchema::to_text`]) and a loader for the texts the registry hands back ([`load`]).
//!
//! # The registered text
//!
//! Confluent builds an everit schema, prints it (everit's `Schema.toString`), reads the print
//! with Jackson and registers Jackson's compact writing of it (`JsonSchema.canonicalString`). So
//! the keys of a schema come in everit's order, which is per schema class, and not in the order
//! a document would list them:
//!
//! - boolean: the common keys, then `"type":"boolean"`;
//! - null, number, string, enum, const, `$ref`: the type's own keys (`type`, `format`, `enum`,
//!   `const`, `$ref`), then the common keys;
//! - array: `type`, the common keys, `items`;
//! - object: `type`, `"additionalProperties":false` (when so), the common keys, `required`,
//!   the `additionalProperties` schema, `properties`;
//! - `oneOf`/`anyOf`/`allOf`: the common keys, then the keyword.
//!
//! The common keys are `title`, `description`, `default`, `id` (the draft 4 keyword: Confluent's
//! documents have no `$schema`), then the keywords everit does not know (`connect.index`,
//! `connect.type`, ...). Object `properties` are kept by everit in a `java.util.HashMap`: they
//! are written in its iteration order ([`java_hash_map_order`]), not in field order; the
//! `connect.index` of each property is what gives the Connect field order back.
//!
//! # Loading
//!
//! [`load`] follows everit's loader on the keywords that map to Connect: `type` (one or a list),
//! `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `oneOf`/`anyOf`/
//! `allOf` (several kinds of keywords in one schema make a synthetic `allOf`, as everit does),
//! `$ref` within the document (`#`, `#/definitions/..`, `#/$defs/..`; `$defs` and `definitions`
//! are interchangeable, as Confluent merges them), `title`, `description`, `default`. Keywords
//! that only constrain values (`minimum`, `pattern`, `format`, ...) select the schema kind as
//! they do in everit and are otherwise ignored: nothing here validates. Refused: `$ref`s outside
//! the document and recursive ones (Connect schemas cannot be recursive here).

use std::collections::HashSet;

use connect_api::{ConnectError, Result};

use super::json::{self, Node, java_hash_map_order, java_hash_order, push_str};

/// `allOf`, `anyOf`, `oneOf`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    AllOf,
    AnyOf,
    OneOf,
}

impl Criterion {
    pub fn keyword(self) -> &'static str {
        match self {
            Criterion::AllOf => "allOf",
            Criterion::AnyOf => "anyOf",
            Criterion::OneOf => "oneOf",
        }
    }
}

/// The kinds of schema (everit's schema classes).
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `{}` and schemas with no kind-deciding keyword: any value (`EmptySchema`).
    Empty,
    /// The boolean schema `true` (`TrueSchema`, an `EmptySchema`).
    True,
    /// The boolean schema `false`.
    False,
    Boolean,
    Null,
    Number {
        /// `"type":"integer"`.
        integer: bool,
        /// `"type":"number"` (false when only number keywords made it a number schema).
        requires_number: bool,
    },
    String {
        requires_string: bool,
        format: Option<String>,
    },
    Array {
        requires_array: bool,
        /// `items` as one schema for every item.
        items: Option<Box<JsonSchema>>,
        /// `items` as a list (tuple validation), which Connect has no type for.
        tuple: bool,
    },
    Object {
        requires_object: bool,
        /// In document (or field) order; written in `HashMap` order.
        properties: Vec<(String, JsonSchema)>,
        required: Vec<String>,
        /// `additionalProperties` unless `false`.
        additional_properties: bool,
        additional_schema: Option<Box<JsonSchema>>,
    },
    Combined {
        criterion: Criterion,
        subschemas: Vec<JsonSchema>,
    },
    Enum(Vec<Node>),
    Const(Node),
    /// `{"$ref": ..}` as written.
    Ref(String),
    /// A `$ref` the loader followed: the JSON pointer it names in the document, and the schema
    /// there.
    Resolved {
        pointer: String,
        schema: Box<JsonSchema>,
    },
    /// `not`: read only, no Connect type.
    Not,
    /// `if`/`then`/`else`: read only, no Connect type.
    Conditional,
}

/// A schema: its kind and the keys every schema has.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchema {
    pub kind: Kind,
    pub title: Option<String>,
    pub description: Option<String>,
    /// As written in the schema text.
    pub default: Option<Node>,
    pub id: Option<String>,
    /// Keywords everit does not know (`connect.type`, ...), in the order written.
    pub unprocessed: Vec<(String, Node)>,
}

impl JsonSchema {
    pub fn new(kind: Kind) -> Self {
        JsonSchema {
            kind,
            title: None,
            description: None,
            default: None,
            id: None,
            unprocessed: Vec::new(),
        }
    }

    pub fn null() -> Self {
        Self::new(Kind::Null)
    }

    /// An unprocessed keyword.
    pub fn prop(&self, key: &str) -> Option<&Node> {
        self.unprocessed
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The text Confluent's serializer registers for this schema.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(256);
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match &self.kind {
            Kind::True => return out.push_str("true"),
            Kind::False => return out.push_str("false"),
            Kind::Resolved { schema, .. } => return schema.write(out),
            _ => {}
        }
        let mut o = Obj::open(out);
        match &self.kind {
            Kind::True | Kind::False | Kind::Resolved { .. } => {}
            Kind::Boolean => {
                self.common(&mut o);
                o.key("type").push_str("\"boolean\"");
            }
            Kind::Null => {
                o.key("type").push_str("\"null\"");
                self.common(&mut o);
            }
            Kind::Number {
                integer,
                requires_number,
            } => {
                if *integer {
                    o.key("type").push_str("\"integer\"");
                } else if *requires_number {
                    o.key("type").push_str("\"number\"");
                }
                self.common(&mut o);
            }
            Kind::String {
                requires_string,
                format,
            } => {
                if *requires_string {
                    o.key("type").push_str("\"string\"");
                }
                if let Some(f) = format {
                    push_str(o.key("format"), f);
                }
                self.common(&mut o);
            }
            Kind::Array {
                requires_array,
                items,
                ..
            } => {
                if *requires_array {
                    o.key("type").push_str("\"array\"");
                }
                self.common(&mut o);
                if let Some(items) = items {
                    items.write(o.key("items"));
                }
            }
            Kind::Object {
                requires_object,
                properties,
                required,
                additional_properties,
                additional_schema,
            } => {
                if *requires_object {
                    o.key("type").push_str("\"object\"");
                }
                if !additional_properties {
                    o.key("additionalProperties").push_str("false");
                }
                self.common(&mut o);
                if !required.is_empty() {
                    let list = Node::Array(required.iter().cloned().map(Node::Text).collect());
                    json::write(o.key("required"), &list);
                }
                if let Some(s) = additional_schema {
                    s.write(o.key("additionalProperties"));
                }
                if !properties.is_empty() {
                    let names: Vec<&str> = properties.iter().map(|(n, _)| n.as_str()).collect();
                    let out = o.key("properties");
                    let mut p = Obj::open(out);
                    for i in java_hash_map_order(&names, None) {
                        properties[i].1.write(p.key(&properties[i].0));
                    }
                    p.close();
                }
            }
            Kind::Combined {
                criterion,
                subschemas,
            } => {
                self.common(&mut o);
                let out = o.key(criterion.keyword());
                out.push('[');
                for (i, s) in subschemas.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    s.write(out);
                }
                out.push(']');
            }
            Kind::Enum(values) => {
                // everit hands them over as a `HashSet`.
                let hashes: Vec<i32> = values
                    .iter()
                    .map(|v| match v {
                        Node::Text(s) => json::java_string_hash(s),
                        _ => 0,
                    })
                    .collect();
                let ordered = java_hash_order(&hashes, None)
                    .into_iter()
                    .map(|i| values[i].clone())
                    .collect();
                json::write(o.key("enum"), &Node::Array(ordered));
                self.common(&mut o);
            }
            Kind::Const(v) => {
                json::write(o.key("const"), v);
                self.common(&mut o);
            }
            Kind::Ref(r) => {
                push_str(o.key("$ref"), r);
                self.common(&mut o);
            }
            Kind::Empty | Kind::Not | Kind::Conditional => self.common(&mut o),
        }
        o.close();
    }

    fn common(&self, o: &mut Obj<'_>) {
        if let Some(t) = &self.title {
            push_str(o.key("title"), t);
        }
        if let Some(d) = &self.description {
            push_str(o.key("description"), d);
        }
        if let Some(d) = &self.default {
            json::write(o.key("default"), d);
        }
        if let Some(id) = &self.id {
            push_str(o.key("id"), id);
        }
        for (k, v) in &self.unprocessed {
            json::write(o.key(k), v);
        }
    }
}

/// Writes an object's entries with their commas.
struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    fn open(out: &'a mut String) -> Self {
        out.push('{');
        Obj { out, first: true }
    }

    fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        push_str(self.out, k);
        self.out.push(':');
        self.out
    }

    fn close(self) {
        self.out.push('}');
    }
}

/// The draft a document is read as (its `$schema`; draft 7 without one, as Confluent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draft {
    Draft4,
    Draft6,
    Draft7,
}

impl Draft {
    fn of(root: &Node) -> Draft {
        let Some(url) = root.get("$schema").and_then(Node::as_str) else {
            return Draft::Draft7;
        };
        if url.contains("draft-04") {
            Draft::Draft4
        } else if url.contains("draft-06") {
            Draft::Draft6
        } else {
            // draft-07, and 2019-09 / 2020-12 read with draft 7's keywords.
            Draft::Draft7
        }
    }

    fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 { "id" } else { "$id" }
    }
}

const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "dependencies",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];

/// How many schemas one document may expand to (`$ref`s are followed by copying).
const MAX_LOADED: usize = 100_000;

/// Parses and loads a registered schema text.
pub fn load(text: &str) -> Result<JsonSchema> {
    let root = json::parse(text.as_bytes())
        .map_err(|e| ConnectError::data(format!("Invalid JSON schema: {}", e.message())))?;
    let mut loader = Loader {
        root: &root,
        draft: Draft::of(&root),
        resolving: Vec::new(),
        loaded: 0,
        depth: 0,
    };
    loader.load(&root)
}

struct Loader<'a> {
    root: &'a Node,
    draft: Draft,
    /// The `$ref` targets being loaded (a repeat is a recursive schema).
    resolving: Vec<String>,
    loaded: usize,
    depth: usize,
}

fn bad(message: impl std::fmt::Display) -> ConnectError {
    ConnectError::data(format!("Invalid JSON schema: {message}"))
}

impl Loader<'_> {
    fn load(&mut self, node: &Node) -> Result<JsonSchema> {
        self.loaded += 1;
        self.depth += 1;
        if self.loaded > MAX_LOADED || self.depth > 2 * json::MAX_DEPTH {
            return Err(bad("the schema is too large or too deep"));
        }
        let result = match node {
            Node::Bool(true) => Ok(JsonSchema::new(Kind::True)),
            Node::Bool(false) => Ok(JsonSchema::new(Kind::False)),
            Node::Object(entries) => self.load_object(entries),
            other => Err(bad(format!(
                "a schema is an object or a boolean, found {}",
                json::node_type(other)
            ))),
        };
        self.depth -= 1;
        result
    }

    fn load_object(&mut self, entries: &[(String, Node)]) -> Result<JsonSchema> {
        let get = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let has = |k: &str| get(k).is_some();
        let mut consumed: HashSet<&str> = HashSet::new();
        let mut extracted: Vec<JsonSchema> = Vec::new();
        if let Some(r) = get("$ref") {
            consumed.insert("$ref");
            let r = r.as_str().ok_or_else(|| bad("$ref is not a string"))?;
            extracted.push(self.resolve(r)?);
        } else {
            if let Some(values) = get("enum") {
                consumed.insert("enum");
                let Node::Array(values) = values else {
                    return Err(bad("enum is not an array"));
                };
                extracted.push(JsonSchema::new(Kind::Enum(values.clone())));
            }
            let combined: Vec<&str> = ["allOf", "anyOf", "oneOf"]
                .into_iter()
                .filter(|k| has(k))
                .collect();
            for i in java_hash_map_order(&combined, None) {
                let keyword = combined[i];
                consumed.insert(keyword);
                let Some(Node::Array(subs)) = get(keyword) else {
                    return Err(bad(format!("{keyword} is not an array")));
                };
                let subschemas = subs
                    .iter()
                    .map(|s| self.load(s))
                    .collect::<Result<Vec<_>>>()?;
                let criterion = match keyword {
                    "allOf" => Criterion::AllOf,
                    "anyOf" => Criterion::AnyOf,
                    _ => Criterion::OneOf,
                };
                extracted.push(JsonSchema::new(Kind::Combined {
                    criterion,
                    subschemas,
                }));
            }
            if has("not") {
                consumed.insert("not");
                extracted.push(JsonSchema::new(Kind::Not));
            }
            if self.draft != Draft::Draft4
                && let Some(c) = get("const")
            {
                consumed.insert("const");
                extracted.push(JsonSchema::new(Kind::Const(c.clone())));
            }
            if let Some(t) = get("type") {
                consumed.insert("type");
                match t {
                    Node::Text(t) => extracted.push(self.typed(t, entries, &mut consumed)?),
                    Node::Array(types) => {
                        let mut subschemas = Vec::with_capacity(types.len());
                        for t in types {
                            let t = t.as_str().ok_or_else(|| bad("a type is not a string"))?;
                            subschemas.push(self.typed(t, entries, &mut consumed)?);
                        }
                        extracted.push(JsonSchema::new(Kind::Combined {
                            criterion: Criterion::AnyOf,
                            subschemas,
                        }));
                    }
                    _ => return Err(bad("type is neither a string nor an array")),
                }
            }
            // Keywords of a kind without its `type` make a schema of that kind too.
            let left = |keys: &[&str], consumed: &HashSet<&str>| {
                keys.iter().any(|k| has(k) && !consumed.contains(k))
            };
            if left(ARRAY_KEYWORDS, &consumed) {
                extracted.push(self.array(entries, false, &mut consumed)?);
            }
            if left(OBJECT_KEYWORDS, &consumed) {
                extracted.push(self.object(entries, false, &mut consumed)?);
            }
            if left(NUMBER_KEYWORDS, &consumed) {
                consumed.extend(NUMBER_KEYWORDS);
                extracted.push(JsonSchema::new(Kind::Number {
                    integer: false,
                    requires_number: false,
                }));
            }
            if left(STRING_KEYWORDS, &consumed) {
                extracted.push(self.string(entries, false, &mut consumed));
            }
            if self.draft == Draft::Draft7 && left(&["if", "then", "else"], &consumed) {
                consumed.extend(["if", "then", "else"]);
                extracted.push(JsonSchema::new(Kind::Conditional));
            }
        }
        let mut schema = match extracted.len() {
            0 => JsonSchema::new(Kind::Empty),
            1 => extracted.pop().expect("one schema"),
            _ => JsonSchema::new(Kind::Combined {
                criterion: Criterion::AllOf,
                subschemas: extracted,
            }),
        };
        let text = |k: &str| -> Result<Option<String>> {
            match get(k) {
                None => Ok(None),
                Some(Node::Text(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(format!("{k} is not a string"))),
            }
        };
        let id_keyword = self.draft.id_keyword();
        schema.id = text(id_keyword)?;
        schema.title = text("title")?;
        schema.description = text("description")?;
        schema.default = get("default").cloned();
        consumed.extend([id_keyword, "title", "description", "default"]);
        if self.draft == Draft::Draft7 {
            consumed.extend(["readOnly", "writeOnly"]);
        }
        schema.unprocessed = entries
            .iter()
            .filter(|(k, _)| !consumed.contains(k.as_str()))
            .cloned()
            .collect();
        Ok(schema)
    }

    fn typed<'e>(
        &mut self,
        t: &str,
        entries: &'e [(String, Node)],
        consumed: &mut HashSet<&'e str>,
    ) -> Result<JsonSchema> {
        Ok(match t {
            "string" => self.string(entries, true, consumed),
            "integer" | "number" => {
                consumed.extend(NUMBER_KEYWORDS);
                JsonSchema::new(Kind::Number {
                    integer: t == "integer",
                    requires_number: true,
                })
            }
            "boolean" => JsonSchema::new(Kind::Boolean),
            "null" => JsonSchema::new(Kind::Null),
            "array" => self.array(entries, true, consumed)?,
            "object" => self.object(entries, true, consumed)?,
            other => return Err(bad(format!("unknown type: [{other}]"))),
        })
    }

    fn string<'e>(
        &mut self,
        entries: &'e [(String, Node)],
        requires_string: bool,
        consumed: &mut HashSet<&'e str>,
    ) -> JsonSchema {
        consumed.extend(STRING_KEYWORDS);
        let format = entries
            .iter()
            .find(|(k, _)| k == "format")
            .and_then(|(_, v)| v.as_str())
            .map(str::to_owned);
        JsonSchema::new(Kind::String {
            requires_string,
            format,
        })
    }

    fn array<'e>(
        &mut self,
        entries: &'e [(String, Node)],
        requires_array: bool,
        consumed: &mut HashSet<&'e str>,
    ) -> Result<JsonSchema> {
        consumed.extend(ARRAY_KEYWORDS);
        let (items, tuple) = match entries.iter().find(|(k, _)| k == "items").map(|(_, v)| v) {
            None => (None, false),
            Some(Node::Array(_)) => (None, true),
            Some(items) => (Some(Box::new(self.load(items)?)), false),
        };
        Ok(JsonSchema::new(Kind::Array {
            requires_array,
            items,
            tuple,
        }))
    }

    fn object<'e>(
        &mut self,
        entries: &'e [(String, Node)],
        requires_object: bool,
        consumed: &mut HashSet<&'e str>,
    ) -> Result<JsonSchema> {
        consumed.extend(OBJECT_KEYWORDS);
        let get = |k: &str| entries.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let mut properties = Vec::new();
        if let Some(props) = get("properties") {
            let Node::Object(props) = props else {
                return Err(bad("properties is not an object"));
            };
            for (name, def) in props {
                if name == self.draft.id_keyword() && !matches!(def, Node::Object(_)) {
                    continue;
                }
                properties.push((name.clone(), self.load(def)?));
            }
        }
        let (additional_properties, additional_schema) = match get("additionalProperties") {
            None => (true, None),
            Some(Node::Bool(b)) => (*b, None),
            Some(def @ Node::Object(_)) => (true, Some(Box::new(self.load(def)?))),
            Some(_) => {
                return Err(bad(
                    "additionalProperties is neither a boolean nor a schema",
                ));
            }
        };
        let required = match get("required") {
            None => Vec::new(),
            Some(Node::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad("required lists a non-string"))?,
            Some(_) => return Err(bad("required is not an array")),
        };
        Ok(JsonSchema::new(Kind::Object {
            requires_object,
            properties,
            required,
            additional_properties,
            additional_schema,
        }))
    }

    /// A `$ref` within the document, loaded in place.
    fn resolve(&mut self, reference: &str) -> Result<JsonSchema> {
        let root_id = self
            .root
            .get(self.draft.id_keyword())
            .and_then(Node::as_str)
            .unwrap_or_default();
        let pointer = match reference.split_once('#') {
            Some((base, pointer)) if base.is_empty() || base == root_id.trim_end_matches('#') => {
                pointer
            }
            _ => {
                return Err(ConnectError::data(format!(
                    "Unsupported $ref {reference}: only references within the schema (\"#...\") are supported by this worker's JsonSchemaConverter"
                )));
            }
        };
        if self.resolving.iter().any(|r| r == pointer) {
            return Err(ConnectError::data(format!(
                "Recursive JSON schemas ($ref {reference}) are not supported by this worker's JsonSchemaConverter"
            )));
        }
        let root = self.root;
        let target = resolve_pointer(root, pointer)
            .or_else(|| {
                // Confluent merges `definitions` into `$defs` (and the other way round).
                let other = if let Some(rest) = pointer.strip_prefix("/$defs/") {
                    format!("/definitions/{rest}")
                } else if let Some(rest) = pointer.strip_prefix("/definitions/") {
                    format!("/$defs/{rest}")
                } else {
                    return None;
                };
                resolve_pointer(root, &other)
            })
            .ok_or_else(|| bad(format!("$ref {reference} names nothing in the schema")))?;
        self.resolving.push(pointer.to_owned());
        let loaded = self.load(target);
        self.resolving.pop();
        Ok(JsonSchema::new(Kind::Resolved {
            pointer: pointer.to_owned(),
            schema: Box::new(loaded?),
        }))
    }
}

/// The node a JSON pointer (`""`, `/a/b`) names in `root`.
fn resolve_pointer<'r>(root: &'r Node, pointer: &str) -> Option<&'r Node> {
    let mut node = root;
    if pointer.is_empty() {
        return Some(node);
    }
    for raw in pointer.strip_prefix('/')?.split('/') {
        let decoded = percent_decode(raw);
        let token = decoded.replace("~1", "/").replace("~0", "~");
        node = match node {
            Node::Object(_) => node.get(&token)?,
            Node::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(connect_type: &str) -> JsonSchema {
        let mut s = JsonSchema::new(Kind::Number {
            integer: true,
            requires_number: true,
        });
        s.unprocessed
            .push(("connect.type".into(), Node::Text(connect_type.into())));
        s
    }

    #[test]
    fn writes_keys_in_everits_order() {
        let mut b = JsonSchema::new(Kind::Boolean);
        b.default = Some(Node::Bool(true));
        b.unprocessed.push(("connect.index".into(), Node::Int(8)));
        assert_eq!(
            b.to_text(),
            r#"{"default":true,"connect.index":8,"type":"boolean"}"#
        );
        let mut obj = JsonSchema::new(Kind::Object {
            requires_object: true,
            properties: vec![
                ("int8".into(), number("int8")),
                ("string".into(), {
                    let mut s = JsonSchema::new(Kind::String {
                        requires_string: true,
                        format: None,
                    });
                    s.unprocessed.push(("connect.index".into(), Node::Int(1)));
                    s
                }),
            ],
            required: vec![],
            additional_properties: false,
            additional_schema: None,
        });
        obj.title = Some("Record".into());
        assert_eq!(
            obj.to_text(),
            r#"{"type":"object","additionalProperties":false,"title":"Record","properties":{"string":{"type":"string","connect.index":1},"int8":{"type":"integer","connect.type":"int8"}}}"#
        );
        let opt = JsonSchema::new(Kind::Combined {
            criterion: Criterion::OneOf,
            subschemas: vec![JsonSchema::null(), JsonSchema::new(Kind::Boolean)],
        });
        assert_eq!(
            opt.to_text(),
            r#"{"oneOf":[{"type":"null"},{"type":"boolean"}]}"#
        );
    }

    #[test]
    fn loads_like_everit() {
        let s =
            load(r#"{"type":["string","null"],"minLength":1,"title":"T","x-extra":1}"#).unwrap();
        let Kind::Combined {
            criterion: Criterion::AnyOf,
            subschemas,
        } = &s.kind
        else {
            panic!("{s:?}")
        };
        assert_eq!(subschemas.len(), 2);
        assert_eq!(s.title.as_deref(), Some("T"));
        assert_eq!(s.unprocessed, vec![("x-extra".to_owned(), Node::Int(1))]);
        // Object keywords without a type, with a oneOf: a synthetic allOf.
        let s = load(r#"{"properties":{"a":{"type":"integer"}},"oneOf":[{"required":["a"]}]}"#)
            .unwrap();
        assert!(matches!(
            &s.kind,
            Kind::Combined { criterion: Criterion::AllOf, subschemas } if subschemas.len() == 2
        ));
        assert_eq!(load("{}").unwrap().kind, Kind::Empty);
        assert_eq!(load("true").unwrap().kind, Kind::True);
        // References within the document; definitions and $defs are one bucket.
        let s = load(r##"{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"definitions":{"P":{"type":"string"}}}"##)
            .unwrap();
        let Kind::Object { properties, .. } = &s.kind else {
            panic!()
        };
        assert!(matches!(
            &properties[0].1.kind,
            Kind::Resolved { pointer, schema }
                if pointer == "/$defs/P" && matches!(schema.kind, Kind::String { .. })
        ));
        let e = load(r##"{"type":"object","properties":{"next":{"$ref":"#"}}}"##).unwrap_err();
        assert!(e.to_string().contains("Recursive"), "{e}");
        let e = load(r#"{"$ref":"http://example.com/s.json"}"#).unwrap_err();
        assert!(e.to_string().contains("Unsupported $ref"), "{e}");
        assert!(load(r#"{"type":"decimal"}"#).is_err());
    }
}
