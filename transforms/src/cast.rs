//! `org.apache.kafka.connect.transforms.Cast$Key` / `$Value`.

use base64::Engine;
use chrono::DateTime;
use connect_api::config::validators::lambda;
use connect_api::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance, TypedValue, java_double_string,
};
use connect_api::data::{Schema, SchemaBuilder, SchemaType, Value, logical};
use connect_api::{ConnectError, Result};

use crate::insert_field::{REPLACE_NULL_WITH_DEFAULT, replace_null_key};
use crate::util::{
    SchemaCache, build_struct, copy_schema_basics, field_value, map_get, map_put, require_map,
    require_struct,
};
use crate::{Record, Side, Transformation};

pub const SPEC: &str = "spec";
const PURPOSE: &str = "cast types";
const INPUT_TYPES: &str = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]";
const OUTPUT_TYPES: &str = "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]";

pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            ConfigKey::new(
                SPEC,
                T::List,
                Importance::High,
                "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
            )
            .validator(lambda(
                "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>",
                |_, v| match v {
                    Some(TypedValue::List(items)) if !items.is_empty() => parse_spec(items).map(|_| ()),
                    _ => Err(ConnectError::config("Must specify at least one field to cast.")),
                },
            )),
        )
        .define(replace_null_key())
}

fn type_named(name: &str) -> Result<SchemaType> {
    // Java's `Schema.Type.valueOf(name.toUpperCase())`.
    let t = match name.trim().to_ascii_uppercase().as_str() {
        "INT8" => SchemaType::Int8,
        "INT16" => SchemaType::Int16,
        "INT32" => SchemaType::Int32,
        "INT64" => SchemaType::Int64,
        "FLOAT32" => SchemaType::Float32,
        "FLOAT64" => SchemaType::Float64,
        "BOOLEAN" => SchemaType::Boolean,
        "STRING" => SchemaType::String,
        "BYTES" => SchemaType::Bytes,
        "ARRAY" => SchemaType::Array,
        "MAP" => SchemaType::Map,
        "STRUCT" => SchemaType::Struct,
        other => {
            // Java passes (message, cause) to ConfigException's (name, value) constructor.
            return Err(ConnectError::invalid_value(
                &format!("Invalid type found in casting spec: {}", name.trim()),
                format!(
                    "java.lang.IllegalArgumentException: No enum constant org.apache.kafka.connect.data.Schema.Type.{other}"
                ),
                "",
            ));
        }
    };
    if matches!(
        t,
        SchemaType::Bytes | SchemaType::Array | SchemaType::Map | SchemaType::Struct
    ) {
        return Err(ConnectError::config(format!(
            "Cast transformation does not support casting to {t}; supported types are {OUTPUT_TYPES}"
        )));
    }
    Ok(t)
}

/// `(None, type)` casts the whole value.
fn parse_spec(items: &[String]) -> Result<Vec<(Option<String>, SchemaType)>> {
    let mut out: Vec<(Option<String>, SchemaType)> = Vec::new();
    let mut whole = false;
    for m in items {
        let mut parts: Vec<&str> = m.split(':').collect();
        while parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        let (field, ty) = match parts.as_slice() {
            [t] => {
                whole = true;
                (None, type_named(t)?)
            }
            [f, t] => (Some(f.trim().to_owned()), type_named(t)?),
            _ => {
                return Err(ConnectError::invalid_value(
                    "renames",
                    format!("[{}]", items.join(", ")),
                    &format!("Invalid rename mapping: {m}"),
                ));
            }
        };
        out.retain(|(f, _)| *f != field);
        out.push((field, ty));
    }
    if whole && items.len() > 1 {
        return Err(ConnectError::config(
            "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
        ));
    }
    Ok(out)
}

fn inferred(v: &Value) -> Option<SchemaType> {
    Some(match v {
        Value::Int8(_) => SchemaType::Int8,
        Value::Int16(_) => SchemaType::Int16,
        Value::Int32(_) => SchemaType::Int32,
        Value::Int64(_) => SchemaType::Int64,
        Value::Float32(_) => SchemaType::Float32,
        Value::Float64(_) => SchemaType::Float64,
        Value::Boolean(_) => SchemaType::Boolean,
        Value::String(_) => SchemaType::String,
        Value::Bytes(_) => SchemaType::Bytes,
        Value::Array(_) => SchemaType::Array,
        Value::Map(_) => SchemaType::Map,
        Value::Struct(_) => SchemaType::Struct,
        Value::Null => return None,
    })
}

/// Java's `Float.toString`: the shortest digits of the `f32`, in `Double.toString`'s layout.
fn java_float_string(v: f32) -> String {
    let shortest: f64 = format!("{v}").parse().unwrap_or(f64::from(v));
    java_double_string(shortest)
}

fn out_of_range(v: &Value) -> ConnectError {
    let shown = match v {
        Value::String(s) => s.clone(),
        other => format!("{other:?}"),
    };
    ConnectError::data(format!(
        "Value ({shown}) was out of range for requested data type"
    ))
}

fn logical_string(schema: &Schema, v: &Value) -> Option<String> {
    let name = schema.name()?;
    let ms = match (name, v) {
        (logical::DATE_NAME, Value::Int32(days)) => i64::from(*days) * 86_400_000,
        (logical::TIME_NAME, Value::Int32(ms)) => i64::from(*ms),
        (logical::TIMESTAMP_NAME, Value::Int64(ms)) => *ms,
        _ => return None,
    };
    let dt = DateTime::from_timestamp_millis(ms)?;
    Some(match name {
        logical::DATE_NAME => dt.format("%Y-%m-%d").to_string(),
        logical::TIME_NAME => dt.format("%H:%M:%S%.3f").to_string(),
        _ => dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    })
}

/// Java's `Cast.castValueToType` on a physical value.
pub fn cast_value(schema: Option<&Schema>, v: &Value, target: SchemaType) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let input = schema
        .map(Schema::schema_type)
        .or_else(|| inferred(v))
        .unwrap_or(SchemaType::String);
    if matches!(
        input,
        SchemaType::Array | SchemaType::Map | SchemaType::Struct
    ) {
        return Err(ConnectError::data(format!(
            "Cast transformation does not support casting from {input}; supported types are {INPUT_TYPES}"
        )));
    }
    let num: Option<f64> = match v {
        Value::Int8(x) => Some(f64::from(*x)),
        Value::Int16(x) => Some(f64::from(*x)),
        Value::Int32(x) => Some(f64::from(*x)),
        Value::Float32(x) => Some(f64::from(*x)),
        Value::Float64(x) => Some(*x),
        _ => None,
    };
    let as_long: Option<i64> = match v {
        Value::Int64(x) => Some(*x),
        Value::Boolean(b) => Some(i64::from(*b)),
        _ => num.map(|f| match v {
            Value::Float32(_) | Value::Float64(_) => f as i64,
            _ => f as i64,
        }),
    };
    let unexpected = || {
        ConnectError::data(format!(
            "Unexpected type in Cast transformation: class {}",
            crate::util::java_class_name(v)
        ))
    };
    let parse_err = |_| out_of_range(v);
    Ok(match target {
        SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32 | SchemaType::Int64 => {
            let l: i64 = match v {
                Value::String(s) => match target {
                    SchemaType::Int8 => i64::from(s.parse::<i8>().map_err(parse_err)?),
                    SchemaType::Int16 => i64::from(s.parse::<i16>().map_err(parse_err)?),
                    SchemaType::Int32 => i64::from(s.parse::<i32>().map_err(parse_err)?),
                    _ => s.parse::<i64>().map_err(parse_err)?,
                },
                // Java narrows a double through int (byteValue = (byte) intValue()).
                Value::Float32(_) | Value::Float64(_) if target != SchemaType::Int64 => {
                    i64::from(num.unwrap_or_default() as i32)
                }
                _ => as_long.ok_or_else(unexpected)?,
            };
            match target {
                SchemaType::Int8 => Value::Int8(l as i8),
                SchemaType::Int16 => Value::Int16(l as i16),
                SchemaType::Int32 => Value::Int32(l as i32),
                _ => Value::Int64(l),
            }
        }
        SchemaType::Float32 => Value::Float32(match v {
            Value::String(s) => s.trim().parse::<f32>().map_err(|_| out_of_range(v))?,
            Value::Int64(x) => *x as f32,
            Value::Boolean(b) => f32::from(u8::from(*b)),
            _ => num.ok_or_else(unexpected)? as f32,
        }),
        SchemaType::Float64 => Value::Float64(match v {
            Value::String(s) => s.trim().parse::<f64>().map_err(|_| out_of_range(v))?,
            Value::Int64(x) => *x as f64,
            Value::Boolean(b) => f64::from(u8::from(*b)),
            _ => num.ok_or_else(unexpected)?,
        }),
        SchemaType::Boolean => Value::Boolean(match v {
            Value::String(s) => s.eq_ignore_ascii_case("true"),
            Value::Boolean(b) => *b,
            Value::Float32(_) | Value::Float64(_) => num.unwrap_or_default() as i64 != 0,
            _ => as_long.ok_or_else(unexpected)? != 0,
        }),
        SchemaType::String => Value::String(match v {
            _ if schema.and_then(|s| logical_string(s, v)).is_some() => schema
                .and_then(|s| logical_string(s, v))
                .unwrap_or_default(),
            Value::String(s) => s.clone(),
            Value::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b),
            Value::Boolean(b) => b.to_string(),
            Value::Float32(x) => java_float_string(*x),
            Value::Float64(x) => java_double_string(*x),
            other => other
                .as_i64()
                .map(|i| i.to_string())
                .ok_or_else(unexpected)?,
        }),
        other => {
            return Err(ConnectError::data(format!(
                "{other} is not supported in the Cast transformation."
            )));
        }
    })
}

fn builder_for(t: SchemaType) -> SchemaBuilder {
    SchemaBuilder::new(t)
}

pub struct Cast {
    side: Side,
    casts: Vec<(Option<String>, SchemaType)>,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl Cast {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            casts: Vec::new(),
            replace_null_with_default: true,
            cache: SchemaCache::default(),
        }
    }

    fn whole(&self) -> Option<SchemaType> {
        self.casts
            .iter()
            .find(|(f, _)| f.is_none())
            .map(|(_, t)| *t)
    }

    fn cast_for(&self, field: &str) -> Option<SchemaType> {
        self.casts
            .iter()
            .find(|(f, _)| f.as_deref() == Some(field))
            .map(|(_, t)| *t)
    }

    fn updated_schema(&self, schema: &Schema) -> Result<Schema> {
        let mut b = match self.whole() {
            Some(t) => copy_schema_basics(schema, builder_for(t)),
            None => {
                let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
                for f in schema.fields() {
                    match self.cast_for(&f.name) {
                        Some(t) => {
                            let mut fb = builder_for(t);
                            if f.schema.is_optional() {
                                fb = fb.optional();
                            }
                            if let Some(d) = f.schema.default_value() {
                                fb = fb.default_value(cast_value(Some(&f.schema), d, t)?);
                            }
                            b = b.field(f.name.clone(), fb.build());
                        }
                        None => b = b.field(f.name.clone(), f.schema.clone()),
                    }
                }
                b
            }
        };
        if schema.is_optional() {
            b = b.optional();
        }
        if let Some(d) = schema.default_value() {
            let t = self.whole().unwrap_or(SchemaType::Struct);
            b = b.default_value(if t == SchemaType::Struct {
                d.clone()
            } else {
                cast_value(Some(schema), d, t)?
            });
        }
        Ok(b.build())
    }
}

impl Transformation for Cast {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.casts = parse_spec(c.list(SPEC))?;
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if self.side.value(record).is_null() {
            return Ok(true);
        }
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                if let Some(t) = self.whole() {
                    let v = cast_value(None, &value, t)?;
                    self.side.set(record, None, v);
                    return Ok(true);
                }
                let entries = require_map(&value, PURPOSE)?;
                let mut out = entries.to_vec();
                for (f, t) in &self.casts {
                    let f = f.as_deref().unwrap_or_default();
                    let v = map_get(entries, f).cloned().unwrap_or(Value::Null);
                    map_put(&mut out, f, cast_value(None, &v, *t)?);
                }
                self.side.set(record, None, Value::Map(out));
                Ok(true)
            }
            Some(schema) => {
                let updated = self
                    .cache
                    .get_or_try_insert(&schema, || self.updated_schema(&schema))?;
                if let Some(t) = self.whole() {
                    let v = cast_value(Some(&schema), &value, t)?;
                    self.side.set(record, Some(updated), v);
                    return Ok(true);
                }
                let s = require_struct(&value, PURPOSE)?;
                let mut fields = Vec::with_capacity(schema.fields().len());
                for f in s.schema().fields() {
                    let v = field_value(s, &f.name, self.replace_null_with_default);
                    let v = match self.cast_for(&f.name) {
                        Some(t) => cast_value(Some(&f.schema), &v, t)?,
                        None => v,
                    };
                    fields.push((f.name.clone(), v));
                }
                let out = build_struct(&updated, fields)?;
                self.side.set(record, Some(updated), Value::Struct(out));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
