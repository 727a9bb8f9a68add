//! JsonConverter's value conversions, below both the converter ([`super::json`]) and the JSON
//! form of schemas ([`super::json_schema`], whose defaults are values): Connect data <-> JSON
//! trees, with the options that shape them (`decimal.format`, `replace.null.with.default`), and
//! numbers written as Jackson writes them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use serde::ser::Serialize;
use serde_json::{Map, Number, Value as Json};

use crate::data::logical::{Decimal, decimal_scale};
use crate::data::{Schema, SchemaType, Struct, Value};
use crate::error::{ConnectError, Result};

/// `decimal.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecimalFormat {
    #[default]
    Base64,
    Numeric,
}

#[derive(Debug, Clone)]
pub(crate) struct JsonOptions {
    pub decimal_format: DecimalFormat,
    pub replace_null_with_default: bool,
}

impl Default for JsonOptions {
    fn default() -> Self {
        Self {
            decimal_format: DecimalFormat::Base64,
            replace_null_with_default: true,
        }
    }
}

/// A double as Jackson writes it: NaN and the infinities, which JSON numbers cannot hold, as the
/// strings "NaN", "Infinity" and "-Infinity" (Jackson's default `WRITE_NAN_AS_STRINGS`; what
/// Apache's JsonConverter sends for Debezium's `real` NaN, tests/golden/cdc/).
fn number_f64(v: f64) -> Result<Json> {
    Ok(match Number::from_f64(v) {
        Some(n) => Json::Number(n),
        None if v.is_nan() => Json::String("NaN".into()),
        None if v > 0.0 => Json::String("Infinity".into()),
        None => Json::String("-Infinity".into()),
    })
}

/// JSON text as Jackson writes it for Apache's `JsonConverter`: numbers in Java's
/// `Double.toString` layout (`1.0E20`, `-1.0E-300`, `100.0`; the shortest digits, as JDK 19+
/// and Jackson's fast writer print them) and control characters escaped with upper-case hex
/// (`\u001B`). serde_json's own layout (`1e20`, `\u001b`) is the same JSON, but not the same
/// bytes, and bytes are what a registry content id or a downstream hash sees.
pub fn to_vec_as_jackson<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out,
        JacksonFormatter,
    ))?;
    Ok(out)
}

pub(crate) struct JacksonFormatter;

impl serde_json::ser::Formatter for JacksonFormatter {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f64) -> std::io::Result<()> {
        w.write_all(java_double(v).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, v: f32) -> std::io::Result<()> {
        let shortest: f64 = v.to_string().parse().unwrap_or(f64::from(v));
        w.write_all(java_double(shortest).as_bytes())
    }

    fn write_char_escape<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> std::io::Result<()> {
        use serde_json::ser::CharEscape as E;
        match escape {
            E::AsciiControl(b) => write!(w, "\\u00{b:02X}"),
            other => serde_json::ser::CompactFormatter.write_char_escape(w, other),
        }
    }
}

/// Java's `Double.toString` of a finite double: plain decimal for 10^-3 <= |v| < 10^7, else
/// `d.dddE<exp>`, with the shortest digits that read back as `v`.
pub(crate) fn java_double(v: f64) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    if !v.is_finite() {
        return v.to_string();
    }
    // `{:e}` gives the shortest digits: "-1.234e-5", "1e20".
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if digits.len() == 1 {
        // Java writes at least two digits, the closer of the two-digit decimals that read back
        // as `v` (4.9E-324, where the shortest is 5e-324).
        let two = format!("{:.1e}", v.abs());
        if two.parse::<f64>().ok() == Some(v.abs()) {
            digits = two
                .split_once('e')
                .map_or(digits.clone(), |(m, _)| m.replace('.', ""));
        }
    }
    let digits = digits.trim_end_matches('0').to_owned();
    let digits = if digits.is_empty() {
        "0".to_owned()
    } else {
        digits
    };
    let (first, rest) = digits.split_at(1);
    if (-3..7).contains(&exp) {
        if exp < 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else {
            let int_len = exp as usize + 1;
            if digits.len() > int_len {
                format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
            } else {
                format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
            }
        }
    } else {
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

/// A float as Java's `FloatNode` writes it: its shortest decimal form as a float (3.14), not
/// the double it widens to (3.140000104904175).
fn number_f32(v: f32) -> Result<Json> {
    let shortest: f64 = v.to_string().parse().unwrap_or(f64::from(v));
    number_f64(shortest)
}

fn type_error(schema: &Schema, value: &Value) -> ConnectError {
    ConnectError::data(format!(
        "Invalid type for {}: {}",
        schema.schema_type(),
        value.type_name()
    ))
}

/// Connect value -> JSON payload (Java's `convertToJson`).
pub(crate) fn to_json(schema: Option<&Schema>, value: &Value, opts: &JsonOptions) -> Result<Json> {
    if value.is_null() {
        let Some(schema) = schema else {
            return Ok(Json::Null);
        };
        if let (Some(default), true) = (schema.default_value(), opts.replace_null_with_default) {
            return to_json(Some(schema), default, opts);
        }
        if schema.is_optional() {
            return Ok(Json::Null);
        }
        return Err(ConnectError::data(
            "Conversion error: null value for field that is required and has no default value",
        ));
    }
    let Some(schema) = schema else {
        return schemaless_to_json(value, opts);
    };
    if let Some(scale) = decimal_scale(schema) {
        let Value::Bytes(bytes) = value else {
            return Err(type_error(schema, value));
        };
        return match opts.decimal_format {
            DecimalFormat::Base64 => Ok(Json::String(BASE64.encode(bytes))),
            DecimalFormat::Numeric => {
                let d = Decimal::from_bytes(bytes, scale)?;
                match i64::try_from(d.unscaled) {
                    Ok(v) if scale == 0 => Ok(Json::from(v)),
                    _ => number_f64(d.to_plain_string().parse().unwrap_or(f64::NAN)),
                }
            }
        };
    }
    use SchemaType as T;
    Ok(match (schema.schema_type(), value) {
        (T::Int8, Value::Int8(v)) => (*v).into(),
        (T::Int16, Value::Int16(v)) => (*v).into(),
        (T::Int32, Value::Int32(v)) => (*v).into(),
        (T::Int64, Value::Int64(v)) => (*v).into(),
        (T::Float32, Value::Float32(v)) => number_f32(*v)?,
        (T::Float64, Value::Float64(v)) => number_f64(*v)?,
        (T::Boolean, Value::Boolean(v)) => (*v).into(),
        (T::String, Value::String(v)) => v.clone().into(),
        (T::Bytes, Value::Bytes(v)) => BASE64.encode(v).into(),
        (T::Array, Value::Array(items)) => {
            let item_schema = schema.value_schema();
            Json::Array(
                items
                    .iter()
                    .map(|i| to_json(item_schema, i, opts))
                    .collect::<Result<_>>()?,
            )
        }
        (T::Map, Value::Map(entries)) => {
            let (ks, vs) = (schema.key_schema(), schema.value_schema());
            if ks.map(Schema::schema_type) == Some(T::String) {
                let mut obj = Map::with_capacity(entries.len());
                for (k, v) in entries {
                    let Value::String(k) = k else {
                        return Err(type_error(ks.unwrap_or(schema), k));
                    };
                    obj.insert(k.clone(), to_json(vs, v, opts)?);
                }
                Json::Object(obj)
            } else {
                let mut arr = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    arr.push(Json::Array(vec![
                        to_json(ks, k, opts)?,
                        to_json(vs, v, opts)?,
                    ]));
                }
                Json::Array(arr)
            }
        }
        (T::Struct, Value::Struct(s)) => {
            if s.schema() != schema {
                return Err(ConnectError::data("Mismatching schema."));
            }
            struct_to_json(s, opts)?
        }
        _ => return Err(type_error(schema, value)),
    })
}

fn struct_to_json(s: &Struct, opts: &JsonOptions) -> Result<Json> {
    let mut obj = Map::with_capacity(s.values().len());
    for (f, v) in s.schema().fields().iter().zip(s.values()) {
        obj.insert(f.name.clone(), to_json(Some(&f.schema), v, opts)?);
    }
    Ok(Json::Object(obj))
}

fn schemaless_to_json(value: &Value, opts: &JsonOptions) -> Result<Json> {
    Ok(match value {
        Value::Null => Json::Null,
        Value::Int8(v) => (*v).into(),
        Value::Int16(v) => (*v).into(),
        Value::Int32(v) => (*v).into(),
        Value::Int64(v) => (*v).into(),
        Value::Float32(v) => number_f32(*v)?,
        Value::Float64(v) => number_f64(*v)?,
        Value::Boolean(v) => (*v).into(),
        Value::String(v) => v.clone().into(),
        Value::Bytes(v) => BASE64.encode(v).into(),
        Value::Array(items) => Json::Array(
            items
                .iter()
                .map(|i| schemaless_to_json(i, opts))
                .collect::<Result<_>>()?,
        ),
        Value::Map(entries) => {
            if entries.iter().all(|(k, _)| matches!(k, Value::String(_))) {
                let mut obj = Map::with_capacity(entries.len());
                for (k, v) in entries {
                    if let Value::String(k) = k {
                        obj.insert(k.clone(), schemaless_to_json(v, opts)?);
                    }
                }
                Json::Object(obj)
            } else {
                let mut arr = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    arr.push(Json::Array(vec![
                        schemaless_to_json(k, opts)?,
                        schemaless_to_json(v, opts)?,
                    ]));
                }
                Json::Array(arr)
            }
        }
        // Java rejects schemaless structs; the struct carries its schema, so use it.
        Value::Struct(s) => struct_to_json(s, opts)?,
    })
}

fn json_kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "BOOLEAN",
        Json::Number(_) => "NUMBER",
        Json::String(_) => "STRING",
        Json::Array(_) => "ARRAY",
        Json::Object(_) => "OBJECT",
    }
}

fn int_of<T: TryFrom<i64>>(schema: &Schema, json: &Json) -> Result<T> {
    json.as_i64()
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| {
            ConnectError::data(format!(
                "Invalid JSON for {} schema: {}",
                schema.schema_type(),
                json_kind(json)
            ))
        })
}

/// A JSON number, or NaN and the infinities as Jackson writes them ([`number_f64`]'s
/// strings). Apache's reader turns those strings into 0.0; read back here they stay what was
/// written (a Java plugin's NaN crosses to the worker as Apache's JsonConverter wrote it).
fn float_of(json: &Json) -> Option<f64> {
    match json {
        Json::String(s) if s == "NaN" => Some(f64::NAN),
        Json::String(s) if s == "Infinity" => Some(f64::INFINITY),
        Json::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
        other => other.as_f64(),
    }
}

/// JSON payload -> Connect value (Java's `convertToConnect`).
pub(crate) fn to_connect(
    schema: Option<&Schema>,
    json: &Json,
    opts: &JsonOptions,
) -> Result<Value> {
    let Some(schema) = schema else {
        return Ok(schemaless_to_connect(json));
    };
    if json.is_null() {
        if let (Some(default), true) = (schema.default_value(), opts.replace_null_with_default) {
            return Ok(default.clone());
        }
        if schema.is_optional() {
            return Ok(Value::Null);
        }
        return Err(ConnectError::data(format!(
            "Invalid null value for required {} field",
            schema.schema_type()
        )));
    }
    let mismatch = || {
        ConnectError::data(format!(
            "Invalid JSON for {} schema: {}",
            schema.schema_type(),
            json_kind(json)
        ))
    };
    if let Some(scale) = decimal_scale(schema) {
        return match json {
            Json::Number(n) => Ok(Value::Bytes(
                Decimal::parse(&n.to_string(), scale)?.to_bytes(),
            )),
            Json::String(s) => {
                Ok(Value::Bytes(BASE64.decode(s).map_err(|e| {
                    ConnectError::data("Invalid bytes field").with_source(e)
                })?))
            }
            _ => Err(mismatch()),
        };
    }
    use SchemaType as T;
    Ok(match schema.schema_type() {
        T::Int8 => Value::Int8(int_of(schema, json)?),
        T::Int16 => Value::Int16(int_of(schema, json)?),
        T::Int32 => Value::Int32(int_of(schema, json)?),
        T::Int64 => Value::Int64(int_of(schema, json)?),
        T::Float32 => Value::Float32(float_of(json).ok_or_else(mismatch)? as f32),
        T::Float64 => Value::Float64(float_of(json).ok_or_else(mismatch)?),
        T::Boolean => Value::Boolean(json.as_bool().ok_or_else(mismatch)?),
        T::String => Value::String(json.as_str().ok_or_else(mismatch)?.to_owned()),
        T::Bytes => Value::Bytes(
            BASE64
                .decode(json.as_str().ok_or_else(mismatch)?)
                .map_err(|e| ConnectError::data("Invalid bytes field").with_source(e))?,
        ),
        T::Array => {
            let items = json.as_array().ok_or_else(mismatch)?;
            Value::Array(
                items
                    .iter()
                    .map(|i| to_connect(schema.value_schema(), i, opts))
                    .collect::<Result<_>>()?,
            )
        }
        T::Map => {
            let (ks, vs) = (schema.key_schema(), schema.value_schema());
            match json {
                Json::Object(obj) if ks.map(Schema::schema_type) == Some(T::String) => Value::Map(
                    obj.iter()
                        .map(|(k, v)| Ok((Value::String(k.clone()), to_connect(vs, v, opts)?)))
                        .collect::<Result<_>>()?,
                ),
                Json::Array(pairs) => Value::Map(
                    pairs
                        .iter()
                        .map(|pair| match pair.as_array().map(Vec::as_slice) {
                            Some([k, v]) => {
                                Ok((to_connect(ks, k, opts)?, to_connect(vs, v, opts)?))
                            }
                            _ => Err(ConnectError::data(
                                "Found invalid map entry instead of array tuple: ".to_owned()
                                    + json_kind(pair),
                            )),
                        })
                        .collect::<Result<_>>()?,
                ),
                _ => return Err(mismatch()),
            }
        }
        T::Struct => {
            let obj = json.as_object().ok_or_else(mismatch)?;
            let mut s = Struct::new(schema.clone());
            for f in schema.fields() {
                let v = to_connect(
                    Some(&f.schema),
                    obj.get(&f.name).unwrap_or(&Json::Null),
                    opts,
                )?;
                s.put(&f.name, v)?;
            }
            Value::Struct(s)
        }
    })
}

fn schemaless_to_connect(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(v) => Value::Int64(v),
            None => Value::Float64(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(schemaless_to_connect).collect()),
        Json::Object(obj) => Value::Map(
            obj.iter()
                .map(|(k, v)| (Value::String(k.clone()), schemaless_to_connect(v)))
                .collect(),
        ),
    }
}
