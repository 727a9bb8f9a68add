//! What crosses to and from the host as JSON, as this workspace's types: Java `ConfigDef` keys,
//! `ConfigValue`s, the schemas a task's records name by id (sent once per task, as Apache's
//! JsonConverter writes schemas; the records themselves are read by [`super::wire`]), and the
//! JsonConverter envelopes records cross in to Java converters, transformations and predicates.

use connect_api::config::{ConfigType, DefaultValue, Importance, TypedValue, Width, parse_type};
use connect_api::converter::{JsonConverter, as_connect_schema};
use connect_api::data::{Schema, Value as Data};
use connect_api::{ConfigDef, ConfigKey, ConfigValue, ConnectError};
use serde_json::Value;

fn config_type(name: &str) -> ConfigType {
    match name {
        "BOOLEAN" => ConfigType::Boolean,
        "INT" => ConfigType::Int,
        "SHORT" => ConfigType::Short,
        "LONG" => ConfigType::Long,
        "DOUBLE" => ConfigType::Double,
        "LIST" => ConfigType::List,
        "CLASS" => ConfigType::Class,
        "PASSWORD" => ConfigType::Password,
        _ => ConfigType::String,
    }
}

fn typed(raw: &str, ty: ConfigType) -> TypedValue {
    parse_type(raw, ty).unwrap_or_else(|_| TypedValue::String(raw.to_owned()))
}

/// The keys of the host's `configDef` answer.
pub(super) fn config_def(keys: &Value) -> ConfigDef {
    let mut def = ConfigDef::new();
    for k in keys.as_array().into_iter().flatten() {
        let text = |f: &str| k[f].as_str().map(str::to_owned);
        let ty = config_type(k["type"].as_str().unwrap_or_default());
        let importance = match k["importance"].as_str() {
            Some("HIGH") => Importance::High,
            Some("MEDIUM") => Importance::Medium,
            _ => Importance::Low,
        };
        let mut key = ConfigKey::new(
            text("name").unwrap_or_default(),
            ty,
            importance,
            text("documentation").unwrap_or_default(),
        );
        key.documentation = text("documentation");
        key.default = if k["required"].as_bool() == Some(true) {
            DefaultValue::Required
        } else {
            match k["default"].as_str() {
                Some(d) => DefaultValue::Value(typed(d, ty)),
                None => DefaultValue::Null,
            }
        };
        key.group = text("group");
        key.order_in_group = k["orderInGroup"]
            .as_i64()
            .and_then(|o| i32::try_from(o).ok())
            .unwrap_or(-1);
        key.width = match k["width"].as_str() {
            Some("SHORT") => Width::Short,
            Some("MEDIUM") => Width::Medium,
            Some("LONG") => Width::Long,
            _ => Width::None,
        };
        key.display_name = text("displayName").unwrap_or_else(|| key.name.clone());
        key.dependents = k["dependents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().map(str::to_owned))
            .collect();
        def = def.define(key);
    }
    def
}

/// The values of the host's `validate` answer (typed by `def`'s keys).
pub(super) fn config_values(values: &Value, def: &ConfigDef) -> Vec<ConfigValue> {
    values
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let name = v["name"].as_str().unwrap_or_default();
            let ty = def.key(name).map_or(ConfigType::String, |k| k.config_type);
            let mut out = ConfigValue::new(name);
            out.value = v["value"].as_str().map(|s| typed(s, ty));
            out.recommended_values = v["recommendedValues"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(|s| typed(s, ty)))
                .collect();
            out.errors = v["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect();
            out.visible = v["visible"].as_bool().unwrap_or(true);
            out
        })
        .collect()
}

/// The schemas a task's records name by id (a `task.poll` answer's `schemas` adds to them).
pub(super) type Schemas = std::collections::HashMap<u64, Option<Schema>>;

/// Reads the `schemas` of a `task.poll` answer (`id -> JsonConverter schema`) into `known`.
pub(super) fn add_schemas(known: &mut Schemas, answer: &Value) -> Result<(), ConnectError> {
    for (id, schema) in answer["schemas"].as_object().into_iter().flatten() {
        let id = id
            .parse()
            .map_err(|_| ConnectError::data(format!("schema id {id} is not a number")))?;
        known.insert(id, as_connect_schema(schema)?);
    }
    Ok(())
}

fn schema_and_value(
    json: &JsonConverter,
    node: &Value,
) -> Result<(Option<Schema>, Data), ConnectError> {
    if node.is_null() {
        return Ok((None, Data::Null));
    }
    let sv = json.from_json_value(node)?;
    Ok((sv.schema, sv.value))
}

/// The JsonConverter Connect data crosses to converters, transformations and predicates in
/// (the host's `RecordPlugins` uses the same settings): envelopes, and a null field stays
/// null (`replace.null.with.default=false`), so the data arrives unchanged.
pub(super) fn data_converter() -> JsonConverter {
    let mut json = JsonConverter::new(true);
    let config: connect_api::ConfigMap = [
        ("schemas.enable", "true"),
        ("replace.null.with.default", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    connect_api::Converter::configure(&mut json, &config, false)
        .expect("the JsonConverter accepts its own settings");
    json
}

/// Connect data as the envelope the host reads (`null` for no schema and no value, as
/// Apache's JsonConverter writes it).
pub(super) fn envelope(
    json: &JsonConverter,
    schema: Option<&Schema>,
    value: &Data,
) -> Result<Value, ConnectError> {
    if schema.is_none() && matches!(value, Data::Null) {
        return Ok(Value::Null);
    }
    json.to_json_value(schema, value)
}

/// An envelope the host wrote, as Connect data.
pub(super) fn from_envelope(
    json: &JsonConverter,
    node: &Value,
) -> Result<(Option<Schema>, Data), ConnectError> {
    schema_and_value(json, node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn java_config_keys_become_config_def_keys() {
        let def = config_def(&json!([
            {"name": "a", "type": "INT", "default": "5", "importance": "HIGH",
             "documentation": "doc", "group": "G", "orderInGroup": 2, "width": "SHORT",
             "displayName": "A", "dependents": ["b"]},
            {"name": "b", "type": "PASSWORD", "required": true, "importance": "LOW",
             "orderInGroup": -1, "width": "NONE", "displayName": "b", "dependents": []},
            {"name": "c", "type": "LIST", "default": null, "importance": "MEDIUM",
             "orderInGroup": -1, "width": "NONE", "displayName": "c", "dependents": []}
        ]));
        let a = def.key("a").unwrap();
        assert_eq!(a.default, DefaultValue::Value(TypedValue::Int(5)));
        assert_eq!((a.group.as_deref(), a.order_in_group), (Some("G"), 2));
        assert_eq!(a.dependents, vec!["b".to_owned()]);
        assert!(def.key("b").unwrap().is_required());
        assert_eq!(def.key("c").unwrap().default, DefaultValue::Null);
        let values = config_values(
            &json!([{"name": "a", "value": "7", "recommendedValues": [], "errors": ["bad"], "visible": true}]),
            &def,
        );
        assert_eq!(values[0].value, Some(TypedValue::Int(7)));
        assert_eq!(values[0].errors, vec!["bad".to_owned()]);
    }
}
