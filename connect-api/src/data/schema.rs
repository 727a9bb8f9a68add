//! Schemas: a type, optionality, a default and metadata (name, version, doc, parameters).

use indexmap::IndexMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use super::Value;
use crate::error::{ConnectError, Result};

/// Connect's schema types, named as in Java's `Schema.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    Bytes,
    Array,
    Map,
    Struct,
}

impl SchemaType {
    /// The lower-case name JsonConverter writes in a JSON schema (`int32`, `float`, `struct`...).
    pub fn json_name(self) -> &'static str {
        match self {
            Self::Int8 => "int8",
            Self::Int16 => "int16",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::Float32 => "float",
            Self::Float64 => "double",
            Self::Boolean => "boolean",
            Self::String => "string",
            Self::Bytes => "bytes",
            Self::Array => "array",
            Self::Map => "map",
            Self::Struct => "struct",
        }
    }

    pub fn from_json_name(name: &str) -> Option<Self> {
        Some(match name {
            "int8" => Self::Int8,
            "int16" => Self::Int16,
            "int32" => Self::Int32,
            "int64" => Self::Int64,
            "float" => Self::Float32,
            "double" => Self::Float64,
            "boolean" => Self::Boolean,
            "string" => Self::String,
            "bytes" => Self::Bytes,
            "array" => Self::Array,
            "map" => Self::Map,
            "struct" => Self::Struct,
            _ => return None,
        })
    }

    pub fn is_primitive(self) -> bool {
        !matches!(self, Self::Array | Self::Map | Self::Struct)
    }
}

/// Java's `Schema.Type` names (`FLOAT32`, not the JSON schema's `float`), as Connect's messages
/// print them.
impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Float32 => f.write_str("FLOAT32"),
            Self::Float64 => f.write_str("FLOAT64"),
            other => f.write_str(&other.json_name().to_ascii_uppercase()),
        }
    }
}

/// A named field of a STRUCT schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub index: usize,
    pub schema: Schema,
}

/// An immutable, cheaply cloneable schema: an `Arc`, or a schema interned for the life of the
/// process (the primitive schemas, and what [`Schema::interned`] keeps), whose clones and drops
/// touch no reference count. Records carry their schemas by value, so a record passing through
/// a transformation chain would otherwise pay an atomic increment and decrement per schema and
/// stage (measured: about a third of a simple transform's cost).
#[derive(Clone)]
pub struct Schema(Repr);

#[derive(Clone)]
enum Repr {
    Shared(Arc<SchemaData>),
    Interned(&'static SchemaData),
}

impl PartialEq for Schema {
    /// The same schema data first (the common case in transforms' schema caches), then
    /// structurally.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.data(), other.data()) || self.data() == other.data()
    }
}

/// The most schemas [`Schema::interned`] keeps for the process; past it, schemas stay shared.
const INTERNED_MAX: usize = 512;

#[derive(Debug, Clone, PartialEq)]
struct SchemaData {
    schema_type: SchemaType,
    optional: bool,
    default_value: Option<Value>,
    name: Option<String>,
    version: Option<i32>,
    doc: Option<String>,
    /// In insertion order, as Java's `LinkedHashMap` keeps them (schema texts written from
    /// them, e.g. Avro's `connect.parameters`, list them in that order); equality ignores order.
    parameters: IndexMap<String, String>,
    fields: Vec<Field>,
    key_schema: Option<Schema>,
    value_schema: Option<Schema>,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.data().fmt(f)
    }
}

macro_rules! primitive_schemas {
    ($($req:ident, $opt:ident, $ty:ident;)*) => {
        $(
            pub fn $req() -> Schema {
                static S: LazyLock<Schema> =
                    LazyLock::new(|| SchemaBuilder::new(SchemaType::$ty).build().leaked());
                S.clone()
            }
            pub fn $opt() -> Schema {
                static S: LazyLock<Schema> = LazyLock::new(|| {
                    SchemaBuilder::new(SchemaType::$ty).optional().build().leaked()
                });
                S.clone()
            }
        )*
    };
}

impl Schema {
    primitive_schemas! {
        int8, optional_int8, Int8;
        int16, optional_int16, Int16;
        int32, optional_int32, Int32;
        int64, optional_int64, Int64;
        float32, optional_float32, Float32;
        float64, optional_float64, Float64;
        boolean, optional_boolean, Boolean;
        string, optional_string, String;
        bytes, optional_bytes, Bytes;
    }

    /// Whether both are the same schema value (a clone of one another), not only equal.
    pub fn ptr_eq(&self, other: &Schema) -> bool {
        std::ptr::eq(self.data(), other.data())
    }

    fn data(&self) -> &SchemaData {
        match &self.0 {
            Repr::Shared(d) => d,
            Repr::Interned(d) => d,
        }
    }

    /// This schema with its data kept for the life of the process (for statics).
    fn leaked(self) -> Schema {
        let data = match self.0 {
            Repr::Interned(_) => return self,
            Repr::Shared(d) => Arc::unwrap_or_clone(d),
        };
        Schema(Repr::Interned(Box::leak(Box::new(data))))
    }

    /// An equal schema whose clones and drops cost nothing: the process keeps one copy of each
    /// distinct interned schema, up to `INTERNED_MAX` of them (once the table is full, `self`
    /// unchanged).
    /// For schemas made once and carried by many records, such as the ones transforms derive
    /// and cache; a connector whose schemas keep changing would only fill the table.
    pub fn interned(self) -> Schema {
        static TABLE: std::sync::Mutex<Vec<&'static SchemaData>> =
            std::sync::Mutex::new(Vec::new());
        if matches!(self.0, Repr::Interned(_)) {
            return self;
        }
        let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        // Full: no more scans either (a connector whose schemas keep changing would otherwise
        // pay a scan of the whole table for every new schema).
        if table.len() >= INTERNED_MAX {
            return self;
        }
        if let Some(d) = table.iter().find(|d| **d == self.data()) {
            return Schema(Repr::Interned(d));
        }
        let leaked = self.leaked();
        if let Repr::Interned(d) = leaked.0 {
            table.push(d);
        }
        leaked
    }

    pub fn schema_type(&self) -> SchemaType {
        self.data().schema_type
    }
    pub fn is_optional(&self) -> bool {
        self.data().optional
    }
    pub fn default_value(&self) -> Option<&Value> {
        self.data().default_value.as_ref()
    }
    pub fn name(&self) -> Option<&str> {
        self.data().name.as_deref()
    }
    pub fn version(&self) -> Option<i32> {
        self.data().version
    }
    pub fn doc(&self) -> Option<&str> {
        self.data().doc.as_deref()
    }
    pub fn parameters(&self) -> &IndexMap<String, String> {
        &self.data().parameters
    }
    /// Struct fields in order (empty for other types).
    pub fn fields(&self) -> &[Field] {
        &self.data().fields
    }
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.data().fields.iter().find(|f| f.name == name)
    }
    /// Key schema of a MAP.
    pub fn key_schema(&self) -> Option<&Schema> {
        self.data().key_schema.as_ref()
    }
    /// Value schema of a MAP, element schema of an ARRAY.
    pub fn value_schema(&self) -> Option<&Schema> {
        self.data().value_schema.as_ref()
    }

    /// Checks that `value` has the shape `self` describes (Java's `ConnectSchema.validateValue`).
    pub fn validate_value(&self, value: &Value) -> Result<()> {
        validate(self, value, "value")
    }
}

fn validate(schema: &Schema, value: &Value, path: &str) -> Result<()> {
    use SchemaType as T;
    let ok = match (schema.schema_type(), value) {
        (_, Value::Null) => {
            return if schema.is_optional() || schema.default_value().is_some() {
                Ok(())
            } else {
                Err(ConnectError::data(format!(
                    "Invalid value: null used for required field: \"{path}\", schema type: {}",
                    schema.schema_type()
                )))
            };
        }
        (T::Int8, Value::Int8(_))
        | (T::Int16, Value::Int16(_))
        | (T::Int32, Value::Int32(_))
        | (T::Int64, Value::Int64(_))
        | (T::Float32, Value::Float32(_))
        | (T::Float64, Value::Float64(_))
        | (T::Boolean, Value::Boolean(_))
        | (T::String, Value::String(_))
        | (T::Bytes, Value::Bytes(_)) => true,
        (T::Array, Value::Array(items)) => {
            if let Some(item_schema) = schema.value_schema() {
                for item in items {
                    validate(item_schema, item, path)?;
                }
            }
            true
        }
        (T::Map, Value::Map(entries)) => {
            if let (Some(ks), Some(vs)) = (schema.key_schema(), schema.value_schema()) {
                for (k, v) in entries {
                    validate(ks, k, path)?;
                    validate(vs, v, path)?;
                }
            }
            true
        }
        (T::Struct, Value::Struct(s)) => {
            if s.schema() != schema {
                return Err(ConnectError::data(format!(
                    "Struct schemas do not match for field \"{path}\""
                )));
            }
            true
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(ConnectError::data(format!(
            "Invalid Java object for schema with type {}: {} for field: \"{path}\"",
            schema.schema_type(),
            value.type_name()
        )))
    }
}

/// Builds a [`Schema`] (Java's `SchemaBuilder`).
#[derive(Debug, Clone)]
pub struct SchemaBuilder {
    data: SchemaData,
}

impl SchemaBuilder {
    pub fn new(schema_type: SchemaType) -> Self {
        Self {
            data: SchemaData {
                schema_type,
                optional: false,
                default_value: None,
                name: None,
                version: None,
                doc: None,
                parameters: IndexMap::new(),
                fields: Vec::new(),
                key_schema: None,
                value_schema: None,
            },
        }
    }

    pub fn struct_() -> Self {
        Self::new(SchemaType::Struct)
    }

    pub fn array(items: Schema) -> Self {
        let mut b = Self::new(SchemaType::Array);
        b.data.value_schema = Some(items);
        b
    }

    pub fn map(keys: Schema, values: Schema) -> Self {
        let mut b = Self::new(SchemaType::Map);
        b.data.key_schema = Some(keys);
        b.data.value_schema = Some(values);
        b
    }

    pub fn optional(mut self) -> Self {
        self.data.optional = true;
        self
    }

    pub fn required(mut self) -> Self {
        self.data.optional = false;
        self
    }

    /// Sets the default. Not checked here; [`Schema::validate_value`] can check it.
    pub fn default_value(mut self, value: Value) -> Self {
        self.data.default_value = Some(value);
        self
    }

    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.data.name = Some(name.into());
        self
    }

    pub fn version(mut self, version: i32) -> Self {
        self.data.version = Some(version);
        self
    }

    pub fn doc(mut self, doc: impl Into<String>) -> Self {
        self.data.doc = Some(doc.into());
        self
    }

    pub fn parameter(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.data.parameters.insert(key.into(), value.into());
        self
    }

    /// Adds a struct field. A repeated name replaces nothing: Connect rejects duplicates, and so
    /// does [`SchemaBuilder::try_field`]; this panicking-free variant ignores the duplicate.
    pub fn field(mut self, name: impl Into<String>, schema: Schema) -> Self {
        let name = name.into();
        if self.data.fields.iter().all(|f| f.name != name) {
            let index = self.data.fields.len();
            self.data.fields.push(Field {
                name,
                index,
                schema,
            });
        }
        self
    }

    pub fn try_field(self, name: impl Into<String>, schema: Schema) -> Result<Self> {
        let name = name.into();
        if self.data.fields.iter().any(|f| f.name == name) {
            return Err(ConnectError::data(format!(
                "Cannot create field because of field name duplication {name}"
            )));
        }
        Ok(self.field(name, schema))
    }

    /// The name set so far (Java's `SchemaBuilder.name()` getter).
    pub fn current_name(&self) -> Option<&str> {
        self.data.name.as_deref()
    }

    /// The version set so far (Java's `SchemaBuilder.version()` getter).
    pub fn current_version(&self) -> Option<i32> {
        self.data.version
    }

    pub fn build(self) -> Schema {
        Schema(Repr::Shared(Arc::new(self.data)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(name: &str) -> Schema {
        SchemaBuilder::struct_()
            .name(name)
            .field("x", Schema::int32())
            .field("y", Schema::optional_string())
            .build()
    }

    #[test]
    fn interned_schemas_are_shared_per_value_equal_to_the_original_and_bounded() {
        let a = point("interned.Point").interned();
        let b = point("interned.Point").interned();
        assert!(
            std::ptr::eq(a.data(), b.data()),
            "one copy per distinct schema"
        );
        assert_eq!(a, point("interned.Point"));
        assert_ne!(a, point("interned.Other").interned());
        assert_eq!(a.fields()[1].schema, Schema::optional_string());
        // Cloning and dropping an interned schema leaves it intact.
        drop(a.clone());
        assert_eq!(a.name(), Some("interned.Point"));

        // The table is per process (one test, so no other test fills it first).
        for i in 0..INTERNED_MAX + 10 {
            let s = point(&format!("bound.P{i}")).interned();
            assert_eq!(s, point(&format!("bound.P{i}")));
        }
        let past = point("bound.past").interned();
        assert!(
            matches!(past.0, Repr::Shared(_)),
            "kept shared past the bound"
        );
        assert_eq!(past, point("bound.past"));
    }
}
