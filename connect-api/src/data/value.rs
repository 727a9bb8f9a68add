//! Values of the Connect data model and the [`Struct`] container.

use super::Schema;
use crate::error::{ConnectError, Result};

/// A Connect value. `Null` stands for Java's `null` (absent key/value, optional field unset).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    Float32(f32),
    Float64(f64),
    Boolean(bool),
    String(String),
    Bytes(Vec<u8>),
    Array(Vec<Value>),
    /// Entries in insertion order (Connect maps may have non-string keys).
    Map(Vec<(Value, Value)>),
    Struct(Struct),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// A short name of the variant for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Int8(_) => "INT8",
            Self::Int16(_) => "INT16",
            Self::Int32(_) => "INT32",
            Self::Int64(_) => "INT64",
            Self::Float32(_) => "FLOAT32",
            Self::Float64(_) => "FLOAT64",
            Self::Boolean(_) => "BOOLEAN",
            Self::String(_) => "STRING",
            Self::Bytes(_) => "BYTES",
            Self::Array(_) => "ARRAY",
            Self::Map(_) => "MAP",
            Self::Struct(_) => "STRUCT",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// Any integer variant widened to `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Self::Int8(v) => Some(v.into()),
            Self::Int16(v) => Some(v.into()),
            Self::Int32(v) => Some(v.into()),
            Self::Int64(v) => Some(v),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Self::Int32(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Self::Int64(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Self::Boolean(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Self::Float64(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Self::Bytes(v)
    }
}
impl From<Struct> for Value {
    fn from(v: Struct) -> Self {
        Self::Struct(v)
    }
}

/// A value with the schema it was produced with (Java's `SchemaAndValue`); `schema` is `None`
/// for schemaless data.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaAndValue {
    pub schema: Option<Schema>,
    pub value: Value,
}

impl SchemaAndValue {
    pub const NULL: SchemaAndValue = SchemaAndValue {
        schema: None,
        value: Value::Null,
    };

    pub fn new(schema: Option<Schema>, value: Value) -> Self {
        Self { schema, value }
    }
}

/// A STRUCT value: one slot per schema field, in field order.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    schema: Schema,
    values: Vec<Value>,
}

impl Struct {
    /// An empty struct (all fields `Null`) of a STRUCT schema.
    pub fn new(schema: Schema) -> Self {
        let values = vec![Value::Null; schema.fields().len()];
        Self { schema, values }
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Sets a field, checking its name and its value against the field schema.
    pub fn put(&mut self, field: &str, value: impl Into<Value>) -> Result<&mut Self> {
        let f = self
            .schema
            .field(field)
            .ok_or_else(|| ConnectError::data(format!("{field} is not a valid field name")))?;
        let value = value.into();
        f.schema.validate_value(&value)?;
        let index = f.index;
        self.values[index] = value;
        Ok(self)
    }

    /// Builder-style [`Struct::put`].
    pub fn with(mut self, field: &str, value: impl Into<Value>) -> Result<Self> {
        self.put(field, value)?;
        Ok(self)
    }

    /// The stored value, or `Null` (never the field's default, as Java's `getWithoutDefault`).
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.schema.field(field).map(|f| &self.values[f.index])
    }

    pub fn get_by_index(&self, index: usize) -> Option<&Value> {
        self.values.get(index)
    }

    /// Values in field order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The values in field order, moved out (a transform that rebuilds a struct it owns).
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }

    /// The schema and the values in field order, moved out.
    pub fn into_parts(self) -> (Schema, Vec<Value>) {
        (self.schema, self.values)
    }

    /// A struct from one value per field, in field order, each already checked against its
    /// field's schema as [`Struct::put`] does (the builder of a whole struct at once).
    ///
    /// # Panics
    /// When `values` does not have one entry per field.
    pub fn from_checked_values(schema: Schema, values: Vec<Value>) -> Self {
        assert_eq!(values.len(), schema.fields().len(), "one value per field");
        Self { schema, values }
    }

    /// Checks every required field is set (Java's `Struct.validate`).
    pub fn validate(&self) -> Result<()> {
        for (f, v) in self.schema.fields().iter().zip(&self.values) {
            f.schema.validate_value(v).map_err(|_| {
                ConnectError::data(format!(
                    "Invalid value: null used for required field: \"{}\", schema type: {}",
                    f.name,
                    f.schema.schema_type()
                ))
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::SchemaBuilder;

    #[test]
    fn struct_put_checks_types() {
        let schema = SchemaBuilder::struct_()
            .field("id", Schema::int32())
            .field("name", Schema::optional_string())
            .build();
        let mut s = Struct::new(schema);
        assert!(s.validate().is_err());
        s.put("id", 3).unwrap();
        assert!(s.put("id", "x").is_err());
        assert!(s.put("nope", 1).is_err());
        s.validate().unwrap();
        assert_eq!(s.get("name"), Some(&Value::Null));
    }
}
