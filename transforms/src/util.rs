//! Helpers shared by the transforms: Apache's `Requirements`, `SchemaUtil.copySchemaBasics`,
//! the per-schema cache, and the Java class names Apache's error messages print.

use std::sync::{Mutex, OnceLock};

use connect_api::data::{Field, Schema, SchemaBuilder, SchemaType, Struct, Value};
use connect_api::{ConnectError, Result};

/// The Java class of a value as Apache's messages print it (`getClass().getName()`).
pub fn java_class_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Int8(_) => "java.lang.Byte",
        Value::Int16(_) => "java.lang.Short",
        Value::Int32(_) => "java.lang.Integer",
        Value::Int64(_) => "java.lang.Long",
        Value::Float32(_) => "java.lang.Float",
        Value::Float64(_) => "java.lang.Double",
        Value::Boolean(_) => "java.lang.Boolean",
        Value::String(_) => "java.lang.String",
        Value::Bytes(_) => "[B",
        Value::Array(_) => "java.util.ArrayList",
        Value::Map(_) => "java.util.HashMap",
        Value::Struct(_) => "org.apache.kafka.connect.data.Struct",
    }
}

/// Java's `Schema.Type` name (`FLOAT32`, not the JSON converter's `float`).
pub fn java_type_name(t: SchemaType) -> &'static str {
    match t {
        SchemaType::Int8 => "INT8",
        SchemaType::Int16 => "INT16",
        SchemaType::Int32 => "INT32",
        SchemaType::Int64 => "INT64",
        SchemaType::Float32 => "FLOAT32",
        SchemaType::Float64 => "FLOAT64",
        SchemaType::Boolean => "BOOLEAN",
        SchemaType::String => "STRING",
        SchemaType::Bytes => "BYTES",
        SchemaType::Array => "ARRAY",
        SchemaType::Map => "MAP",
        SchemaType::Struct => "STRUCT",
    }
}

/// Java's `ConnectSchema.toString`: `Schema{name:TYPE}` or `Schema{TYPE}`.
pub fn java_schema_string(s: &Schema) -> String {
    match s.name() {
        Some(n) => format!("Schema{{{n}:{}}}", java_type_name(s.schema_type())),
        None => format!("Schema{{{}}}", java_type_name(s.schema_type())),
    }
}

/// Java's `Requirements.requireSchema`.
pub fn require_schema<'a>(schema: Option<&'a Schema>, purpose: &str) -> Result<&'a Schema> {
    schema.ok_or_else(|| ConnectError::data(format!("Schema required for [{purpose}]")))
}

/// Java's `Requirements.requireMap`.
pub fn require_map<'a>(value: &'a Value, purpose: &str) -> Result<&'a [(Value, Value)]> {
    match value {
        Value::Map(entries) => Ok(entries),
        other => Err(ConnectError::data(format!(
            "Only Map objects supported in absence of schema for [{purpose}], found: {}",
            java_class_name(other)
        ))),
    }
}

/// Java's `Requirements.requireStruct`.
pub fn require_struct<'a>(value: &'a Value, purpose: &str) -> Result<&'a Struct> {
    match value {
        Value::Struct(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "Only Struct objects supported for [{purpose}], found: {}",
            java_class_name(other)
        ))),
    }
}

/// A struct field's value; with `with_default`, a null replaced by the field's default (Java's
/// `Struct.get` vs `getWithoutDefault`). `Null` for a field that does not exist.
pub fn field_value(s: &Struct, name: &str, with_default: bool) -> Value {
    let Some(field) = s.schema().field(name) else {
        return Value::Null;
    };
    let v = s.get_by_index(field.index).cloned().unwrap_or(Value::Null);
    if v.is_null() && with_default {
        return field.schema.default_value().cloned().unwrap_or(Value::Null);
    }
    v
}

/// Java's `SchemaUtil.copySchemaBasics`: name, version, doc and parameters.
pub fn copy_schema_basics(source: &Schema, mut builder: SchemaBuilder) -> SchemaBuilder {
    if let Some(n) = source.name() {
        builder = builder.name(n);
    }
    if let Some(v) = source.version() {
        builder = builder.version(v);
    }
    if let Some(d) = source.doc() {
        builder = builder.doc(d);
    }
    for (k, v) in source.parameters() {
        builder = builder.parameter(k.clone(), v.clone());
    }
    builder
}

/// The value of string key `key` in a schemaless map.
pub fn map_get<'a>(entries: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    entries
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

/// Java's `Map.put` on a schemaless map: replaces the value of an existing key in place.
pub fn map_put(entries: &mut Vec<(Value, Value)>, key: &str, value: Value) {
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(entry) => entry.1 = value,
        None => entries.push((Value::String(key.to_owned()), value)),
    }
}

/// Builds a struct from values in field order, checking each as Java's `Struct.put` does.
pub fn build_struct<N: AsRef<str>>(
    schema: &Schema,
    values: impl IntoIterator<Item = (N, Value)>,
) -> Result<Struct> {
    extend_struct(schema, Vec::with_capacity(schema.fields().len()), values)
}

/// Readies the values of a struct's fields for fields of the same schemas, in order (a transform
/// that keeps, renames or extends a struct's fields moves them): a null takes its field's default
/// when `replace_null_with_default` (Java's `Struct.get`), and is then checked as Java's
/// `Struct.put` does (a struct may hold a null in a required field until it is validated). Any
/// other value was checked against the same schema when it was put: it is not checked again.
pub fn carry_values(
    fields: &[Field],
    values: &mut [Value],
    replace_null_with_default: bool,
) -> Result<()> {
    for (f, v) in fields.iter().zip(values.iter_mut()) {
        if v.is_null() {
            if replace_null_with_default && let Some(d) = f.schema.default_value() {
                *v = d.clone();
            }
            f.schema.validate_value(v)?;
        }
    }
    Ok(())
}

/// Builds a struct from the values of its first fields (`first`, in field order: the values of
/// the struct a transform extends, readied by [`carry_values`], so not checked again) and named
/// values for the rest, each checked as Java's `Struct.put` does, in that order.
pub fn extend_struct<N: AsRef<str>>(
    schema: &Schema,
    mut first: Vec<Value>,
    rest: impl IntoIterator<Item = (N, Value)>,
) -> Result<Struct> {
    let fields = schema.fields();
    // One allocation for the whole struct, not a regrowth at the first appended value.
    first.reserve_exact(fields.len().saturating_sub(first.len()));
    if first.len() > fields.len() {
        return Err(ConnectError::data(format!(
            "{} values for a struct of {} fields",
            first.len(),
            fields.len()
        )));
    }
    let mut rest = rest.into_iter();
    // Most transforms produce the values in field order under the fields' names: those are
    // checked and placed by position, with no name lookup and no second copy.
    while let Some((name, value)) = rest.next() {
        match fields.get(first.len()) {
            Some(f) if f.name == name.as_ref() => {
                f.schema.validate_value(&value)?;
                first.push(value);
            }
            _ => {
                first.resize(fields.len(), Value::Null);
                let mut s = Struct::from_checked_values(schema.clone(), first);
                s.put(name.as_ref(), value)?;
                for (name, value) in rest {
                    s.put(name.as_ref(), value)?;
                }
                return Ok(s);
            }
        }
    }
    first.resize(fields.len(), Value::Null);
    Ok(Struct::from_checked_values(schema.clone(), first))
}

/// Apache's `SynchronizedCache(LRUCache(16))` from input schema to derived schema.
///
/// The first schema pair ever derived is also kept outside the lock, where it is read with no
/// atomic read-modify-write: most transforms see one input schema for their whole life, and the
/// lock was a sixth of a simple transform's cost per record. A derived schema is a pure function
/// of its input, so which entries are kept changes no result.
#[derive(Debug, Default)]
pub struct SchemaCache {
    first: OnceLock<(Schema, Schema)>,
    entries: Mutex<Vec<(Schema, Schema)>>,
}

const CACHE_SIZE: usize = 16;

impl SchemaCache {
    pub fn get_or_try_insert(
        &self,
        key: &Schema,
        make: impl FnOnce() -> Result<Schema>,
    ) -> Result<Schema> {
        if let Some((k, v)) = self.first.get()
            && k == key
        {
            return Ok(v.clone());
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        // The most recently used entry is the last: a hit there needs no reordering.
        if let Some((k, v)) = entries.last()
            && k == key
        {
            return Ok(v.clone());
        }
        if let Some(pos) = entries.iter().position(|(k, _)| k == key) {
            let entry = entries.remove(pos);
            let schema = entry.1.clone();
            entries.push(entry);
            return Ok(schema);
        }
        // Interned: a cache hit hands out a schema whose clones and drops cost no atomics.
        let schema = make()?.interned();
        if self.first.get().is_none() {
            let _ = self.first.set((key.clone(), schema.clone()));
            return Ok(schema);
        }
        if entries.len() >= CACHE_SIZE {
            entries.remove(0);
        }
        entries.push((key.clone(), schema.clone()));
        Ok(schema)
    }

    /// Number of cached schemas (tests).
    pub fn len(&self) -> usize {
        usize::from(self.first.get().is_some())
            + self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::SchemaBuilder;

    #[test]
    fn cache_reuses_and_bounds() {
        let cache = SchemaCache::default();
        let a = SchemaBuilder::struct_().field("a", Schema::int32()).build();
        let mut made = 0;
        for _ in 0..3 {
            cache
                .get_or_try_insert(&a, || {
                    made += 1;
                    Ok(Schema::string())
                })
                .unwrap();
        }
        assert_eq!(made, 1);
        for i in 0..20 {
            let s = SchemaBuilder::struct_()
                .field(format!("f{i}"), Schema::int32())
                .build();
            cache
                .get_or_try_insert(&s, || Ok(Schema::string()))
                .unwrap();
        }
        assert_eq!(
            cache.len(),
            CACHE_SIZE + 1,
            "the first entry and the 16 most recent"
        );
    }

    #[test]
    fn requirement_messages() {
        assert_eq!(
            require_map(&Value::from("x"), "p").unwrap_err().to_string(),
            "Only Map objects supported in absence of schema for [p], found: java.lang.String"
        );
        assert_eq!(
            require_struct(&Value::Null, "p").unwrap_err().to_string(),
            "Only Struct objects supported for [p], found: null"
        );
    }
}
