//! Converters between Connect data and bytes, looked up by Java class name or short alias.
//!
//! - `json`: [`JsonConverter`] (envelope on/off, logical types), with `json_schema` for
//!   Connect's JSON schema representation.
//! - `simple`: [`StringConverter`], [`ByteArrayConverter`], [`SimpleHeaderConverter`].

mod json;
mod json_schema;
mod simple;

pub use json::{DecimalFormat, JsonConverter};
pub use json_schema::{as_connect_schema, as_json_schema};
pub use simple::{ByteArrayConverter, SimpleHeaderConverter, StringConverter};

use crate::config::{ConfigDef, ConfigMap};
use crate::data::{Schema, SchemaAndValue, Value};
use crate::error::{ConnectError, Result};

pub const JSON_CONVERTER_CLASS: &str = "org.apache.kafka.connect.json.JsonConverter";
pub const STRING_CONVERTER_CLASS: &str = "org.apache.kafka.connect.storage.StringConverter";
pub const BYTE_ARRAY_CONVERTER_CLASS: &str =
    "org.apache.kafka.connect.converters.ByteArrayConverter";
pub const SIMPLE_HEADER_CONVERTER_CLASS: &str =
    "org.apache.kafka.connect.storage.SimpleHeaderConverter";

/// Converts record keys or values (Java's `Converter`).
// The method names are Connect's (`fromConnectData`), so `from_*` takes `&self` here.
#[allow(clippy::wrong_self_convention)]
pub trait Converter: Send + Sync {
    /// `config` is the converter's sub-config (`value.converter.` prefix removed).
    fn configure(&mut self, config: &ConfigMap, is_key: bool) -> Result<()>;
    /// `None` is Kafka's null (a tombstone for values).
    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>>;
    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue>;
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// Converts header values (Java's `HeaderConverter`).
#[allow(clippy::wrong_self_convention)]
pub trait HeaderConverter: Send + Sync {
    fn configure(&mut self, config: &ConfigMap) -> Result<()>;
    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>>;
    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        bytes: Option<&[u8]>,
    ) -> Result<SchemaAndValue>;
    fn config_def(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

/// The simple name after the last `.` (Connect also accepts simple class names).
fn simple_name(name: &str) -> &str {
    let name = name.trim();
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

fn not_found(name: &str) -> ConnectError {
    ConnectError::config(format!("Class {name} could not be found."))
}

/// A fresh, unconfigured converter for a class name (`org.apache.kafka.connect.json.JsonConverter`),
/// its simple name (`JsonConverter`) or a short alias (`json`, `string`, `bytes`).
/// `SimpleHeaderConverter` is also a `Converter` in Java and is accepted here too.
pub fn converter_for_class(name: &str) -> Result<Box<dyn Converter>> {
    let simple = simple_name(name);
    Ok(match simple.to_ascii_lowercase().as_str() {
        "jsonconverter" | "json" => Box::new(JsonConverter::default()),
        "stringconverter" | "string" => Box::new(StringConverter),
        "bytearrayconverter" | "bytearray" | "bytes" => Box::new(ByteArrayConverter),
        "simpleheaderconverter" => Box::new(SimpleHeaderConverter),
        _ => return Err(not_found(name)),
    })
}

/// A fresh header converter; every key/value converter above is also accepted, as in Java.
pub fn header_converter_for_class(name: &str) -> Result<Box<dyn HeaderConverter>> {
    let simple = simple_name(name);
    Ok(match simple.to_ascii_lowercase().as_str() {
        "simpleheaderconverter" | "simple" => Box::new(SimpleHeaderConverter),
        "jsonconverter" | "json" => Box::new(JsonConverter::default()),
        "stringconverter" | "string" => Box::new(StringConverter),
        "bytearrayconverter" | "bytearray" | "bytes" => Box::new(ByteArrayConverter),
        _ => return Err(not_found(name)),
    })
}

/// The class names listed by `GET /connector-plugins?connectorsOnly=false`.
pub fn builtin_converter_classes() -> [(&'static str, &'static str); 5] {
    [
        (JSON_CONVERTER_CLASS, "converter"),
        (STRING_CONVERTER_CLASS, "converter"),
        (BYTE_ARRAY_CONVERTER_CLASS, "converter"),
        (SIMPLE_HEADER_CONVERTER_CLASS, "converter"),
        (SIMPLE_HEADER_CONVERTER_CLASS, "header_converter"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_by_java_name_and_alias() {
        for name in [
            JSON_CONVERTER_CLASS,
            "JsonConverter",
            "json",
            STRING_CONVERTER_CLASS,
            BYTE_ARRAY_CONVERTER_CLASS,
        ] {
            assert!(converter_for_class(name).is_ok(), "{name}");
        }
        assert!(header_converter_for_class(SIMPLE_HEADER_CONVERTER_CLASS).is_ok());
        let err = converter_for_class("com.example.Nope").err().unwrap();
        assert_eq!(
            err.to_string(),
            "Class com.example.Nope could not be found."
        );
    }
}
