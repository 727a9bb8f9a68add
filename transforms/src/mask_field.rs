//! `org.apache.kafka.connect.transforms.MaskField$Key` / `$Value`.

use std::sync::Arc;

use connect_api::config::validators::{lambda, non_empty_string};
use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance, TypedValue,
};
use connect_api::data::Value;
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::util::{
    build_struct, field_value, java_class_name, map_get, map_put, require_map, require_struct,
};
use crate::{Record, Side, Transformation};

pub const FIELDS: &str = "fields";
pub const REPLACEMENT: &str = "replacement";
const PURPOSE: &str = "mask fields";

/// Apache 4.4's check of a required non-empty LIST (its message, without the usual
/// `Invalid value` prefix). A missing key is reported as missing, not here.
pub fn non_empty_list() -> Arc<dyn connect_api::config::Validator> {
    lambda("non-empty list", |name, v| match v {
        Some(TypedValue::List(items)) if items.is_empty() => Err(ConnectError::config(format!(
            "Configuration '{name}' must not be empty. Valid values include: any non-empty value"
        ))),
        _ => Ok(()),
    })
}

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(FIELDS, T::List, Importance::High, "Names of fields to mask.")
                .validator(non_empty_list()),
        )
        .define(
            ConfigKey::new(
                REPLACEMENT,
                T::String,
                Importance::Low,
                "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only).",
            )
            .default_null()
            .validator(non_empty_string()),
        )
        .define(replace_null_key())
}

pub struct MaskField {
    side: Side,
    fields: Vec<String>,
    replacement: Option<String>,
    replace_null_with_default: bool,
}

impl MaskField {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            fields: Vec::new(),
            replacement: None,
            replace_null_with_default: true,
        }
    }

    fn masked(&self, value: Value) -> Result<Value> {
        if value.is_null() {
            return Ok(value);
        }
        match &self.replacement {
            None => mask_with_null_value(&value),
            Some(r) => mask_with_replacement(&value, r),
        }
    }
}

fn mask_with_null_value(value: &Value) -> Result<Value> {
    Ok(match value {
        Value::Boolean(_) => Value::Boolean(false),
        Value::Int8(_) => Value::Int8(0),
        Value::Int16(_) => Value::Int16(0),
        Value::Int32(_) => Value::Int32(0),
        Value::Int64(_) => Value::Int64(0),
        Value::Float32(_) => Value::Float32(0.0),
        Value::Float64(_) => Value::Float64(0.0),
        Value::String(_) => Value::String(String::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Map(_) => Value::Map(Vec::new()),
        other => {
            return Err(ConnectError::data(format!(
                "Cannot mask value of type: class {}",
                java_class_name(other)
            )));
        }
    })
}

fn number_error(r: &str) -> ConnectError {
    ConnectError::data(format!(
        "Unable to convert {r} (class java.lang.String) to a number"
    ))
}

fn mask_with_replacement(value: &Value, r: &str) -> Result<Value> {
    let int = || {
        r.trim()
            .parse::<i64>()
            .ok()
            .or_else(|| r.trim().parse::<f64>().ok().map(|f| f as i64))
    };
    Ok(match value {
        Value::Int8(_) => Value::Int8(int().ok_or_else(|| number_error(r))? as i8),
        Value::Int16(_) => Value::Int16(int().ok_or_else(|| number_error(r))? as i16),
        Value::Int32(_) => Value::Int32(int().ok_or_else(|| number_error(r))? as i32),
        Value::Int64(_) => Value::Int64(int().ok_or_else(|| number_error(r))?),
        Value::Float32(_) => Value::Float32(r.trim().parse().map_err(|_| number_error(r))?),
        Value::Float64(_) => Value::Float64(r.trim().parse().map_err(|_| number_error(r))?),
        Value::String(_) => Value::String(r.to_owned()),
        other => {
            return Err(ConnectError::data(format!(
                "Cannot mask value of type class {} with custom replacement.",
                java_class_name(other)
            )));
        }
    })
}

impl Transformation for MaskField {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.fields = c.list(FIELDS).to_vec();
        self.replacement = c.string(REPLACEMENT).map(str::to_owned);
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let entries = require_map(&value, PURPOSE)?;
                let mut out = entries.to_vec();
                for f in &self.fields {
                    let v = map_get(entries, f).cloned().unwrap_or(Value::Null);
                    map_put(&mut out, f, self.masked(v)?);
                }
                self.side.set(record, None, Value::Map(out));
                Ok(true)
            }
            Some(schema) => {
                let value = require_struct(&value, PURPOSE)?;
                let mut fields = Vec::with_capacity(value.schema().fields().len());
                for f in value.schema().fields() {
                    let v = field_value(value, &f.name, self.replace_null_with_default);
                    let v = if self.fields.contains(&f.name) {
                        self.masked(v)?
                    } else {
                        v
                    };
                    fields.push((f.name.clone(), v));
                }
                let s = build_struct(value.schema(), fields)?;
                self.side.set(record, Some(schema), Value::Struct(s));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
