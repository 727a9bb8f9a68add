//! Connect's JSON representation of schemas, as JsonConverter writes them in the envelope:
//! `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,
//! "name":...,"version":...,"doc":...,"parameters":{...},"default":...}`.

use serde_json::{Map, Value as Json};

use super::json_value::JsonOptions;
use crate::data::{Schema, SchemaBuilder, SchemaType};
use crate::error::{ConnectError, Result};

/// A schema as JSON (Java's `JsonConverter.asJsonSchema`).
pub fn as_json_schema(schema: &Schema) -> Result<Json> {
    as_json_schema_with(schema, &JsonOptions::default())
}

pub(crate) fn as_json_schema_with(schema: &Schema, opts: &JsonOptions) -> Result<Json> {
    let mut obj = Map::new();
    obj.insert("type".into(), schema.schema_type().json_name().into());
    match schema.schema_type() {
        SchemaType::Array => {
            let items = schema
                .value_schema()
                .ok_or_else(|| ConnectError::data("Array schema has no item schema"))?;
            obj.insert("items".into(), as_json_schema_with(items, opts)?);
        }
        SchemaType::Map => {
            let (k, v) = schema
                .key_schema()
                .zip(schema.value_schema())
                .ok_or_else(|| ConnectError::data("Map schema has no key or value schema"))?;
            obj.insert("keys".into(), as_json_schema_with(k, opts)?);
            obj.insert("values".into(), as_json_schema_with(v, opts)?);
        }
        SchemaType::Struct => {
            let mut fields = Vec::with_capacity(schema.fields().len());
            for f in schema.fields() {
                let mut fj = as_json_schema_with(&f.schema, opts)?;
                if let Json::Object(m) = &mut fj {
                    m.insert("field".into(), f.name.clone().into());
                }
                fields.push(fj);
            }
            obj.insert("fields".into(), Json::Array(fields));
        }
        _ => {}
    }
    obj.insert("optional".into(), schema.is_optional().into());
    if let Some(name) = schema.name() {
        obj.insert("name".into(), name.into());
    }
    if let Some(version) = schema.version() {
        obj.insert("version".into(), version.into());
    }
    if let Some(doc) = schema.doc() {
        obj.insert("doc".into(), doc.into());
    }
    if !schema.parameters().is_empty() {
        let params: Map<String, Json> = schema
            .parameters()
            .iter()
            .map(|(k, v)| (k.clone(), Json::String(v.clone())))
            .collect();
        obj.insert("parameters".into(), Json::Object(params));
    }
    if let Some(default) = schema.default_value() {
        obj.insert(
            "default".into(),
            super::json_value::to_json(Some(schema), default, opts)?,
        );
    }
    Ok(Json::Object(obj))
}

/// A schema from its JSON form (Java's `JsonConverter.asConnectSchema`); JSON null is no schema.
pub fn as_connect_schema(json: &Json) -> Result<Option<Schema>> {
    as_connect_schema_with(json, &JsonOptions::default())
}

pub(crate) fn as_connect_schema_with(json: &Json, opts: &JsonOptions) -> Result<Option<Schema>> {
    let obj = match json {
        Json::Null => return Ok(None),
        Json::Object(obj) => obj,
        _ => return Err(ConnectError::data("Schema must be a JSON object")),
    };
    let type_name = obj
        .get("type")
        .and_then(Json::as_str)
        .ok_or_else(|| ConnectError::data("Schema must contain 'type' field"))?;
    let schema_type = SchemaType::from_json_name(type_name)
        .ok_or_else(|| ConnectError::data(format!("Unknown schema type: {type_name}")))?;
    // Apache's messages for a missing (or null) nested schema.
    let nested = |key: &str| -> Result<Schema> {
        let missing = || {
            ConnectError::data(match key {
                "items" => "Array schema did not specify the element type",
                "keys" => "Map schema did not specify the key type",
                _ => "Map schema did not specify the value type",
            })
        };
        let j = obj.get(key).ok_or_else(missing)?;
        as_connect_schema_with(j, opts)?.ok_or_else(missing)
    };
    let mut builder = match schema_type {
        SchemaType::Array => SchemaBuilder::array(nested("items")?),
        SchemaType::Map => SchemaBuilder::map(nested("keys")?, nested("values")?),
        SchemaType::Struct => {
            let fields = obj.get("fields").and_then(Json::as_array).ok_or_else(|| {
                ConnectError::data("Struct schema's \"fields\" argument is not an array.")
            })?;
            let mut b = SchemaBuilder::struct_();
            for f in fields {
                let name = f.get("field").and_then(Json::as_str).ok_or_else(|| {
                    ConnectError::data("Struct schema's field name not specified properly")
                })?;
                let fs = as_connect_schema_with(f, opts)?
                    .ok_or_else(|| ConnectError::data("Struct field schema is null"))?;
                b = b.try_field(name, fs)?;
            }
            b
        }
        t => SchemaBuilder::new(t),
    };
    if obj.get("optional").and_then(Json::as_bool) == Some(true) {
        builder = builder.optional();
    }
    if let Some(name) = obj.get("name").and_then(Json::as_str) {
        builder = builder.name(name);
    }
    if let Some(v) = obj.get("version") {
        let v = v
            .as_i64()
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| ConnectError::data("Schema version must be an integer"))?;
        builder = builder.version(v);
    }
    if let Some(doc) = obj.get("doc").and_then(Json::as_str) {
        builder = builder.doc(doc);
    }
    if let Some(params) = obj.get("parameters") {
        let params = params
            .as_object()
            .ok_or_else(|| ConnectError::data("Schema parameters must be a JSON object"))?;
        for (k, v) in params {
            let v = v
                .as_str()
                .ok_or_else(|| ConnectError::data("Schema parameters must have string values"))?;
            builder = builder.parameter(k.clone(), v);
        }
    }
    if let Some(default) = obj.get("default").filter(|d| !d.is_null()) {
        // The default is read with the schema built so far (defaults cannot nest defaults).
        let without_default = builder.clone().build();
        let value = super::json_value::to_connect(Some(&without_default), default, opts)?;
        builder = builder.default_value(value);
    }
    Ok(Some(builder.build()))
}
