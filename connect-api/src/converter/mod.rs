//! Converters between Connect data and bytes, looked up by Java class name or short alias.
//!
//! - `json`: [`JsonConverter`] (envelope on/off, logical types), with `json_schema` for
//!   Connect's JSON schema representation.
//! - `simple`: [`StringConverter`], [`ByteArrayConverter`], [`SimpleHeaderConverter`].
//! - `number`: Apache's primitive converters ([`NumberConverter`] for short, integer, long,
//!   float and double; [`BooleanConverter`]).

mod json;
mod json_schema;
mod json_value;
mod number;
mod simple;

pub use json::JsonConverter;
pub use json_schema::{as_connect_schema, as_json_schema};
pub use json_value::{DecimalFormat, to_vec_as_jackson};
pub use number::{
    BOOLEAN_CONVERTER_CLASS, BooleanConverter, DOUBLE_CONVERTER_CLASS, FLOAT_CONVERTER_CLASS,
    INTEGER_CONVERTER_CLASS, LONG_CONVERTER_CLASS, NumberConverter, NumberType,
    SHORT_CONVERTER_CLASS,
};
pub use simple::{ByteArrayConverter, SimpleHeaderConverter, StringConverter};

use std::sync::Arc;

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

/// A converter by simple name or alias (lower case), whichever trait it is wanted as.
fn builtin(simple: &str) -> Option<Builtin> {
    Some(match simple {
        "jsonconverter" | "json" => Builtin::Json(JsonConverter::default()),
        "stringconverter" | "string" => Builtin::String(StringConverter),
        "bytearrayconverter" | "bytearray" | "bytes" => Builtin::Bytes(ByteArrayConverter),
        "simpleheaderconverter" | "simple" => Builtin::Simple(SimpleHeaderConverter),
        "shortconverter" => Builtin::Number(NumberConverter::new(NumberType::Short)),
        "integerconverter" => Builtin::Number(NumberConverter::new(NumberType::Integer)),
        "longconverter" => Builtin::Number(NumberConverter::new(NumberType::Long)),
        "floatconverter" => Builtin::Number(NumberConverter::new(NumberType::Float)),
        "doubleconverter" => Builtin::Number(NumberConverter::new(NumberType::Double)),
        "booleanconverter" => Builtin::Boolean(BooleanConverter),
        _ => return None,
    })
}

enum Builtin {
    Json(JsonConverter),
    String(StringConverter),
    Bytes(ByteArrayConverter),
    Simple(SimpleHeaderConverter),
    Number(NumberConverter),
    Boolean(BooleanConverter),
}

impl Builtin {
    fn converter(self) -> Box<dyn Converter> {
        match self {
            Self::Json(c) => Box::new(c),
            Self::String(c) => Box::new(c),
            Self::Bytes(c) => Box::new(c),
            Self::Simple(c) => Box::new(c),
            Self::Number(c) => Box::new(c),
            Self::Boolean(c) => Box::new(c),
        }
    }

    fn header_converter(self) -> Box<dyn HeaderConverter> {
        match self {
            Self::Json(c) => Box::new(c),
            Self::String(c) => Box::new(c),
            Self::Bytes(c) => Box::new(c),
            Self::Simple(c) => Box::new(c),
            Self::Number(c) => Box::new(c),
            Self::Boolean(c) => Box::new(c),
        }
    }
}

/// A converter class from outside this crate (the schema registry converters), added to the
/// lookup once at start-up with [`install_converter_plugins`]. It is a key/value converter only
/// (as Confluent's are).
pub struct ConverterPlugin {
    /// The Java class name users configure.
    pub class: &'static str,
    pub new: fn() -> Box<dyn Converter>,
}

static PLUGINS: std::sync::OnceLock<Vec<ConverterPlugin>> = std::sync::OnceLock::new();

/// Adds converter classes to the lookup for the life of the process; the first call wins.
pub fn install_converter_plugins(plugins: Vec<ConverterPlugin>) {
    let _ = PLUGINS.set(plugins);
}

fn plugins() -> &'static [ConverterPlugin] {
    PLUGINS.get().map(Vec::as_slice).unwrap_or_default()
}

/// An installed plugin by full class name, or by simple name when only one has it.
fn plugin(name: &str) -> Option<&'static ConverterPlugin> {
    let name = name.trim();
    if let Some(p) = plugins().iter().find(|p| p.class == name) {
        return Some(p);
    }
    let mut by_simple = plugins()
        .iter()
        .filter(|p| simple_name(p.class).eq_ignore_ascii_case(name));
    match (by_simple.next(), by_simple.next()) {
        (Some(p), None) => Some(p),
        _ => None,
    }
}

/// Converter classes known only at run time (the Java converters of `plugin.path`), asked
/// after the built-in ones: see [`converter_for_class`].
pub trait ConverterProvider: Send + Sync {
    /// The full class name `name` resolves to as a converter (`header` false) or header
    /// converter: the class itself, or a simple name only one class has.
    fn resolve(&self, name: &str, header: bool) -> Option<String>;
    /// A fresh, unconfigured converter of a class [`Self::resolve`] answered.
    fn converter(&self, class: &str) -> Option<Box<dyn Converter>>;
    /// A fresh, unconfigured header converter of a class [`Self::resolve`] answered.
    fn header_converter(&self, class: &str) -> Option<Box<dyn HeaderConverter>>;
    /// Every class, for `GET /connector-plugins?connectorsOnly=false`.
    fn plugin_infos(&self) -> Vec<crate::plugin::PluginInfo>;
}

static PROVIDER: std::sync::RwLock<Option<Arc<dyn ConverterProvider>>> =
    std::sync::RwLock::new(None);

/// Makes `provider`'s classes available to [`converter_for_class`] and
/// [`header_converter_for_class`] for the life of the process (replacing an earlier one).
pub fn install_converter_provider(provider: Arc<dyn ConverterProvider>) {
    *PROVIDER.write().unwrap_or_else(|e| e.into_inner()) = Some(provider);
}

fn provider() -> Option<Arc<dyn ConverterProvider>> {
    PROVIDER.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether `name` is exactly the class name of a converter built in (Apache's, or an
/// installed [`ConverterPlugin`]'s): those keep resolving to the built-in ones.
fn is_builtin_class(name: &str) -> bool {
    let name = name.trim();
    BUILTIN_CONVERTER_CLASSES.contains(&name) || plugins().iter().any(|p| p.class == name)
}

/// The provider's class for `name`, when it has that exact class (and it is not a built-in
/// class name), or when `fallback` and it has the class by simple name.
fn provided(
    name: &str,
    header: bool,
    fallback: bool,
) -> Option<(Arc<dyn ConverterProvider>, String)> {
    if is_builtin_class(name) {
        return None;
    }
    let p = provider()?;
    let class = p.resolve(name, header)?;
    (fallback || class == name.trim()).then_some((p, class))
}

/// Whether `name` is a built-in header converter that is no `Converter` (Apache's
/// `SimpleHeaderConverter` implements `HeaderConverter` only).
fn header_only(name: &str) -> bool {
    matches!(
        builtin(&simple_name(name).to_ascii_lowercase()),
        Some(Builtin::Simple(_))
    )
}

/// Apache's error for a header-only converter named as a key or value converter.
fn not_a_converter(name: &str) -> ConnectError {
    let class = if name.contains('.') {
        name.trim()
    } else {
        SIMPLE_HEADER_CONVERTER_CLASS
    };
    ConnectError::config(format!(
        "Class class {class} does not implement the Converter interface"
    ))
}

/// A fresh, unconfigured converter for a class name (`org.apache.kafka.connect.json.JsonConverter`),
/// its simple name (`JsonConverter`) or a short alias (`json`, `string`, `bytes`).
/// `SimpleHeaderConverter` is a header converter only, as in Java: named here it is Apache's
/// error (`Class class ... does not implement the Converter interface`). Apache's
/// class names (and the installed [`ConverterPlugin`]s') are the built-in converters; another
/// full class name an installed [`ConverterProvider`] has is its converter; then the built-in
/// simple names and aliases; then the provider's simple names.
pub fn converter_for_class(name: &str) -> Result<Box<dyn Converter>> {
    if let Some(c) = provided(name, false, false).and_then(|(p, class)| p.converter(&class)) {
        return Ok(c);
    }
    if header_only(name) {
        return Err(not_a_converter(name));
    }
    builtin(&simple_name(name).to_ascii_lowercase())
        .map(Builtin::converter)
        .or_else(|| plugin(name).map(|p| (p.new)()))
        .or_else(|| provided(name, false, true).and_then(|(p, class)| p.converter(&class)))
        .ok_or_else(|| not_found(name))
}

/// A fresh header converter; every key/value converter above is also accepted, as in Java
/// (each of Apache's built-in converters implements `HeaderConverter` too). A provider's class
/// resolves as in [`converter_for_class`].
pub fn header_converter_for_class(name: &str) -> Result<Box<dyn HeaderConverter>> {
    if let Some(c) = provided(name, true, false).and_then(|(p, class)| p.header_converter(&class)) {
        return Ok(c);
    }
    builtin(&simple_name(name).to_ascii_lowercase())
        .map(Builtin::header_converter)
        .or_else(|| provided(name, true, true).and_then(|(p, class)| p.header_converter(&class)))
        .ok_or_else(|| not_found(name))
}

/// The converters and header converters of the installed [`ConverterProvider`], for
/// `GET /connector-plugins?connectorsOnly=false`.
pub fn provided_plugin_infos() -> Vec<crate::plugin::PluginInfo> {
    provider().map(|p| p.plugin_infos()).unwrap_or_default()
}

/// Every built-in converter class: each implements both `Converter` and `HeaderConverter`, as
/// Apache's do, but `SimpleHeaderConverter`, a `HeaderConverter` only.
pub const BUILTIN_CONVERTER_CLASSES: &[&str] = &[
    JSON_CONVERTER_CLASS,
    STRING_CONVERTER_CLASS,
    BYTE_ARRAY_CONVERTER_CLASS,
    SIMPLE_HEADER_CONVERTER_CLASS,
    SHORT_CONVERTER_CLASS,
    INTEGER_CONVERTER_CLASS,
    LONG_CONVERTER_CLASS,
    FLOAT_CONVERTER_CLASS,
    DOUBLE_CONVERTER_CLASS,
    BOOLEAN_CONVERTER_CLASS,
];

/// The class names and plugin types (`converter`, `header_converter`) listed by
/// `GET /connector-plugins?connectorsOnly=false`: every built-in class under both types, as
/// Apache lists a class implementing both interfaces (`SimpleHeaderConverter` a header
/// converter only), sorted by class then type.
pub fn builtin_converter_classes() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<_> = BUILTIN_CONVERTER_CLASSES
        .iter()
        .flat_map(|c| [(*c, "converter"), (*c, "header_converter")])
        .filter(|(c, kind)| *kind == "header_converter" || !header_only(c))
        .chain(plugins().iter().map(|p| (p.class, "converter")))
        .collect();
    all.sort_unstable();
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provided converter, told from a built-in one by its definition's one key.
    struct Fake;

    impl Converter for Fake {
        fn configure(&mut self, _config: &ConfigMap, _is_key: bool) -> Result<()> {
            Ok(())
        }
        fn from_connect_data(
            &self,
            _topic: &str,
            _schema: Option<&Schema>,
            _value: &Value,
        ) -> Result<Option<Vec<u8>>> {
            Ok(None)
        }
        fn to_connect_data(&self, _topic: &str, _bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
            Ok(SchemaAndValue::new(None, Value::Null))
        }
        fn config_def(&self) -> ConfigDef {
            ConfigDef::new().define(crate::ConfigKey::new(
                "fake",
                crate::config::ConfigType::String,
                crate::config::Importance::Low,
                "",
            ))
        }
    }

    struct Provided;

    const FAKES: [&str; 2] = ["com.example.JsonConverter", "com.example.TextConverter"];

    impl ConverterProvider for Provided {
        fn resolve(&self, name: &str, header: bool) -> Option<String> {
            (!header)
                .then(|| {
                    FAKES
                        .iter()
                        .find(|c| **c == name || c.rsplit('.').next() == Some(name))
                })
                .flatten()
                .map(|c| (*c).to_owned())
        }
        fn converter(&self, _class: &str) -> Option<Box<dyn Converter>> {
            Some(Box::new(Fake))
        }
        fn header_converter(&self, _class: &str) -> Option<Box<dyn HeaderConverter>> {
            None
        }
        fn plugin_infos(&self) -> Vec<crate::plugin::PluginInfo> {
            Vec::new()
        }
    }

    /// Apache's class names and the built-in simple names stay built-in; another full class
    /// name, or a simple name no built-in has, is the provider's.
    #[test]
    fn provided_converters_resolve_after_apaches_names() {
        install_converter_provider(Arc::new(Provided));
        let fake = |name: &str| {
            converter_for_class(name)
                .map(|c| c.config_def().key("fake").is_some())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        };
        assert!(!fake(JSON_CONVERTER_CLASS));
        assert!(!fake("JsonConverter"));
        assert!(fake("com.example.JsonConverter"));
        assert!(fake("TextConverter"));
        assert!(header_converter_for_class("com.example.TextConverter").is_err());
        assert!(converter_for_class("com.example.Other").is_err());
    }

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

    /// Apache lists each built-in converter under both plugin types (they all implement
    /// `Converter` and `HeaderConverter`); the primitive ones are among them.
    #[test]
    fn listing_has_every_class_as_converter_and_header_converter() {
        let listed = builtin_converter_classes();
        for class in [
            SHORT_CONVERTER_CLASS,
            INTEGER_CONVERTER_CLASS,
            LONG_CONVERTER_CLASS,
            FLOAT_CONVERTER_CLASS,
            DOUBLE_CONVERTER_CLASS,
            BOOLEAN_CONVERTER_CLASS,
            JSON_CONVERTER_CLASS,
        ] {
            for kind in ["converter", "header_converter"] {
                assert!(listed.contains(&(class, kind)), "{class} {kind}");
            }
            assert!(converter_for_class(class).is_ok(), "{class}");
            assert!(header_converter_for_class(class).is_ok(), "{class}");
        }
        // SimpleHeaderConverter is a header converter only (Apache: "does not implement the
        // Converter interface" when named as a key or value converter).
        assert_eq!(listed.len(), 2 * BUILTIN_CONVERTER_CLASSES.len() - 1);
        assert!(listed.contains(&(SIMPLE_HEADER_CONVERTER_CLASS, "header_converter")));
        assert!(!listed.contains(&(SIMPLE_HEADER_CONVERTER_CLASS, "converter")));
        assert_eq!(
            converter_for_class(SIMPLE_HEADER_CONVERTER_CLASS)
                .err()
                .map(|e| e.message().to_owned()),
            Some(format!(
                "Class class {SIMPLE_HEADER_CONVERTER_CLASS} does not implement the Converter interface"
            ))
        );
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(listed, sorted);
    }
}
