//! The small converters: strings, raw bytes, and the default header converter.

use super::{Converter, HeaderConverter};
use crate::config::{
    ConfigDef, ConfigKey, ConfigMap, ConfigType, Importance, TypedValue, Width, validators,
};
use crate::data::{Schema, SchemaAndValue, SchemaType, Value};
use crate::error::{ConnectError, Result};

/// Text form of a primitive value, as Java's `toString` would print it.
fn primitive_text(value: &Value) -> Option<String> {
    Some(match value {
        Value::String(s) => s.clone(),
        Value::Int8(v) => v.to_string(),
        Value::Int16(v) => v.to_string(),
        Value::Int32(v) => v.to_string(),
        Value::Int64(v) => v.to_string(),
        Value::Float32(v) => crate::config::java_double_string(f64::from(*v)),
        Value::Float64(v) => crate::config::java_double_string(*v),
        Value::Boolean(v) => v.to_string(),
        _ => return None,
    })
}

/// Java's `StringConverterConfig.ENCODING_CONFIG`.
pub const ENCODING_CONFIG: &str = "converter.encoding";

/// Java's `org.apache.kafka.connect.storage.StringConverter` (UTF-8 only: another
/// `converter.encoding` is refused naming the key).
#[derive(Debug, Clone, Copy, Default)]
pub struct StringConverter;

impl StringConverter {
    /// Apache's definition of `converter.encoding`; only UTF-8 (any case, `UTF8` too) is
    /// accepted here.
    pub fn string_config_def() -> ConfigDef {
        ConfigDef::new().define(
            ConfigKey::new(
                ENCODING_CONFIG,
                ConfigType::String,
                Importance::High,
                "The name of the Java character set to use for encoding strings as byte arrays.",
            )
            .default_value("UTF-8")
            .validator(validators::lambda("UTF-8", |name, value| {
                let v = value.and_then(TypedValue::as_str).unwrap_or_default();
                if v.eq_ignore_ascii_case("UTF-8") || v.eq_ignore_ascii_case("UTF8") {
                    Ok(())
                } else {
                    Err(ConnectError::invalid_value(
                        name,
                        v,
                        "this worker's StringConverter reads and writes UTF-8 only",
                    ))
                }
            }))
            .width(Width::Medium)
            .display_name("Encoding"),
        )
    }
}

impl Converter for StringConverter {
    fn configure(&mut self, config: &ConfigMap, _is_key: bool) -> Result<()> {
        Self::string_config_def().parse(config).map(|_| ())
    }

    fn config_def(&self) -> ConfigDef {
        Self::string_config_def()
    }

    fn from_connect_data(
        &self,
        _topic: &str,
        _schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        if value.is_null() {
            return Ok(None);
        }
        let text = primitive_text(value).ok_or_else(|| {
            ConnectError::data(format!(
                "StringConverter cannot convert a {} value",
                value.type_name()
            ))
        })?;
        Ok(Some(text.into_bytes()))
    }

    fn to_connect_data(&self, _topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let value = match bytes {
            None => Value::Null,
            Some(b) => Value::String(String::from_utf8(b.to_vec()).map_err(|e| {
                ConnectError::data("Failed to deserialize string: invalid UTF-8").with_source(e)
            })?),
        };
        Ok(SchemaAndValue::new(Some(Schema::optional_string()), value))
    }
}

/// Java's `org.apache.kafka.connect.converters.ByteArrayConverter`: bytes pass through.
#[derive(Debug, Clone, Copy, Default)]
pub struct ByteArrayConverter;

impl Converter for ByteArrayConverter {
    fn configure(&mut self, _config: &ConfigMap, _is_key: bool) -> Result<()> {
        Ok(())
    }

    fn from_connect_data(
        &self,
        _topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        if let Some(s) = schema.filter(|s| s.schema_type() != SchemaType::Bytes) {
            return Err(ConnectError::data(format!(
                "Invalid schema type for ByteArrayConverter: {}",
                s.schema_type()
            )));
        }
        match value {
            Value::Null => Ok(None),
            Value::Bytes(b) => Ok(Some(b.clone())),
            other => Err(ConnectError::data(format!(
                "ByteArrayConverter is not compatible with objects of type {}",
                other.type_name()
            ))),
        }
    }

    fn to_connect_data(&self, _topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let value = bytes.map_or(Value::Null, |b| Value::Bytes(b.to_vec()));
        Ok(SchemaAndValue::new(Some(Schema::optional_bytes()), value))
    }
}

/// Like Java's `SimpleHeaderConverter`: values are written as text; reading infers booleans
/// and integers (smallest fitting type) and floating-point numbers, else a string. Arrays,
/// maps and structs are written as JSON text and read back as strings.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimpleHeaderConverter;

impl SimpleHeaderConverter {
    fn parse(text: &str) -> SchemaAndValue {
        let t = text.trim();
        if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
            return SchemaAndValue::new(
                Some(Schema::boolean()),
                Value::Boolean(t.eq_ignore_ascii_case("true")),
            );
        }
        if !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
            && let Ok(v) = t.parse::<i64>()
        {
            return if let Ok(v) = i8::try_from(v) {
                SchemaAndValue::new(Some(Schema::int8()), Value::Int8(v))
            } else if let Ok(v) = i16::try_from(v) {
                SchemaAndValue::new(Some(Schema::int16()), Value::Int16(v))
            } else if let Ok(v) = i32::try_from(v) {
                SchemaAndValue::new(Some(Schema::int32()), Value::Int32(v))
            } else {
                SchemaAndValue::new(Some(Schema::int64()), Value::Int64(v))
            };
        }
        let numeric = !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
        if let (true, Ok(v)) = (numeric, t.parse::<f64>())
            && v.is_finite()
        {
            return SchemaAndValue::new(Some(Schema::float64()), Value::Float64(v));
        }
        SchemaAndValue::new(Some(Schema::string()), Value::String(text.to_owned()))
    }
}

impl HeaderConverter for SimpleHeaderConverter {
    fn configure(&mut self, _config: &ConfigMap) -> Result<()> {
        Ok(())
    }

    fn from_connect_header(
        &self,
        _topic: &str,
        _key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        if value.is_null() {
            return Ok(None);
        }
        let text = match primitive_text(value) {
            Some(t) => t,
            None => {
                let json = super::json_value::to_json(
                    schema,
                    value,
                    &super::json_value::JsonOptions::default(),
                )?;
                json.to_string()
            }
        };
        Ok(Some(text.into_bytes()))
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue> {
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::NULL);
        };
        let text = String::from_utf8_lossy(bytes);
        Ok(Self::parse(&text))
    }
}

/// `SimpleHeaderConverter` is also usable as a key/value converter in Java.
impl Converter for SimpleHeaderConverter {
    fn configure(&mut self, _config: &ConfigMap, _is_key: bool) -> Result<()> {
        Ok(())
    }
    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        self.from_connect_header(topic, "", schema, value)
    }
    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        self.to_connect_header(topic, "", bytes)
    }
}

/// Any key/value converter serves as a header converter, as in Java.
macro_rules! header_via_converter {
    ($($t:ty),*) => {$(
        impl HeaderConverter for $t {
            fn configure(&mut self, config: &ConfigMap) -> Result<()> {
                Converter::configure(self, config, false)
            }
            fn from_connect_header(&self, topic: &str, _key: &str, schema: Option<&Schema>, value: &Value) -> Result<Option<Vec<u8>>> {
                self.from_connect_data(topic, schema, value)
            }
            fn to_connect_header(&self, topic: &str, _key: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
                self.to_connect_data(topic, bytes)
            }
        }
    )*};
}
header_via_converter!(StringConverter, ByteArrayConverter, super::JsonConverter);
pub(super) use header_via_converter;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_round_trip() {
        let c = SimpleHeaderConverter;
        for (v, s) in [
            (Value::String("hello world".into()), Schema::string()),
            (Value::Int32(100_000), Schema::int32()),
            (Value::Boolean(true), Schema::boolean()),
            (Value::Int8(-3), Schema::int8()),
        ] {
            let bytes = c.from_connect_header("t", "h", Some(&s), &v).unwrap();
            let back = c.to_connect_header("t", "h", bytes.as_deref()).unwrap();
            assert_eq!(back.value, v);
        }
        assert_eq!(
            c.to_connect_header("t", "h", None).unwrap(),
            SchemaAndValue::NULL
        );
    }

    #[test]
    fn string_and_bytes() {
        let s = StringConverter;
        let b = s
            .from_connect_data("t", None, &Value::String("héllo".into()))
            .unwrap();
        assert_eq!(
            s.to_connect_data("t", b.as_deref()).unwrap().value,
            Value::String("héllo".into())
        );
        let bc = ByteArrayConverter;
        assert!(
            bc.from_connect_data("t", Some(&Schema::string()), &Value::Null)
                .is_err()
        );
        assert_eq!(
            bc.from_connect_data("t", None, &Value::Bytes(vec![1, 2]))
                .unwrap(),
            Some(vec![1, 2])
        );
    }
}
