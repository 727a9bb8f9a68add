//! Schemas: a type, optionality, a default and metadata (name, version, doc, parameters).

use std::collections::BTreeMap;
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

/// An immutable, cheaply cloneable schema (an `Arc` inside; the common primitive schemas are
/// shared statics so building a record does not allocate for them).
#[derive(Clone)]
pub struct Schema(Arc<SchemaData>);

impl PartialEq for Schema {
    /// The same `Arc` first (the common case in transforms' schema caches), then structurally.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

#[derive(Debug, Clone, PartialEq)]
struct SchemaData {
    schema_type: SchemaType,
    optional: bool,
    default_value: Option<Value>,
    name: Option<String>,
    version: Option<i32>,
    doc: Option<String>,
    parameters: BTreeMap<String, String>,
    fields: Vec<Field>,
    key_schema: Option<Schema>,
    value_schema: Option<Schema>,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

macro_rules! primitive_schemas {
    ($($req:ident, $opt:ident, $ty:ident;)*) => {
        $(
            pub fn $req() -> Schema {
                static S: LazyLock<Schema> = LazyLock::new(|| SchemaBuilder::new(SchemaType::$ty).build());
                S.clone()
            }
            pub fn $opt() -> Schema {
                static S: LazyLock<Schema> =
                    LazyLock::new(|| SchemaBuilder::new(SchemaType::$ty).optional().build());
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

    pub fn schema_type(&self) -> SchemaType {
        self.0.schema_type
    }
    pub fn is_optional(&self) -> bool {
        self.0.optional
    }
    pub fn default_value(&self) -> Option<&Value> {
        self.0.default_value.as_ref()
    }
    pub fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }
    pub fn version(&self) -> Option<i32> {
        self.0.version
    }
    pub fn doc(&self) -> Option<&str> {
        self.0.doc.as_deref()
    }
    pub fn parameters(&self) -> &BTreeMap<String, String> {
        &self.0.parameters
    }
    /// Struct fields in order (empty for other types).
    pub fn fields(&self) -> &[Field] {
        &self.0.fields
    }
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.0.fields.iter().find(|f| f.name == name)
    }
    /// Key schema of a MAP.
    pub fn key_schema(&self) -> Option<&Schema> {
        self.0.key_schema.as_ref()
    }
    /// Value schema of a MAP, element schema of an ARRAY.
    pub fn value_schema(&self) -> Option<&Schema> {
        self.0.value_schema.as_ref()
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
                parameters: BTreeMap::new(),
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

    pub fn build(self) -> Schema {
        Schema(Arc::new(self.data))
    }
}
