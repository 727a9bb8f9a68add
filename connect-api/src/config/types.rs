//! Config value types, their parsing from strings and their rendering back to strings,
//! following Java's `ConfigDef.parseType` / `ConfigDef.convertToString`.

use std::fmt;

/// The type of a config key (Java's `ConfigDef.Type`); serialised upper-case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigType {
    Boolean,
    String,
    Int,
    Short,
    Long,
    Double,
    List,
    Class,
    Password,
}

impl ConfigType {
    pub fn name(self) -> &'static str {
        match self {
            Self::Boolean => "BOOLEAN",
            Self::String => "STRING",
            Self::Int => "INT",
            Self::Short => "SHORT",
            Self::Long => "LONG",
            Self::Double => "DOUBLE",
            Self::List => "LIST",
            Self::Class => "CLASS",
            Self::Password => "PASSWORD",
        }
    }
}

impl fmt::Display for ConfigType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How important a key is (Java's `ConfigDef.Importance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Importance {
    High,
    Medium,
    Low,
}

impl Importance {
    pub fn name(self) -> &'static str {
        match self {
            Self::High => "HIGH",
            Self::Medium => "MEDIUM",
            Self::Low => "LOW",
        }
    }
}

/// UI width hint (Java's `ConfigDef.Width`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Width {
    #[default]
    None,
    Short,
    Medium,
    Long,
}

impl Width {
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "NONE",
            Self::Short => "SHORT",
            Self::Medium => "MEDIUM",
            Self::Long => "LONG",
        }
    }
}

/// A secret. Its `Debug`, `Display` and `Serialize` all print `[hidden]`, so it cannot leak
/// through logs or REST responses by accident; [`Password::value`] is the one way to read it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Password(String);

impl Password {
    pub const HIDDEN: &'static str = "[hidden]";

    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn value(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::HIDDEN)
    }
}

impl fmt::Display for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Self::HIDDEN)
    }
}

impl serde::Serialize for Password {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(Self::HIDDEN)
    }
}

/// A parsed config value (Java's parsed `Object`).
#[derive(Debug, Clone, PartialEq)]
pub enum TypedValue {
    Boolean(bool),
    String(String),
    Int(i32),
    Short(i16),
    Long(i64),
    Double(f64),
    List(Vec<String>),
    Class(String),
    Password(Password),
}

impl TypedValue {
    pub fn config_type(&self) -> ConfigType {
        match self {
            Self::Boolean(_) => ConfigType::Boolean,
            Self::String(_) => ConfigType::String,
            Self::Int(_) => ConfigType::Int,
            Self::Short(_) => ConfigType::Short,
            Self::Long(_) => ConfigType::Long,
            Self::Double(_) => ConfigType::Double,
            Self::List(_) => ConfigType::List,
            Self::Class(_) => ConfigType::Class,
            Self::Password(_) => ConfigType::Password,
        }
    }

    /// Integral values widened to `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Self::Int(v) => Some(v.into()),
            Self::Short(v) => Some(v.into()),
            Self::Long(v) => Some(v),
            _ => None,
        }
    }

    /// Numbers as `f64` (for range checks).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Self::Double(v) => Some(v),
            _ => self.as_i64().map(|v| v as f64),
        }
    }

    /// STRING and CLASS values (never a password).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) | Self::Class(s) => Some(s),
            _ => None,
        }
    }
}

/// Renders as Java's `ConfigDef.convertToString` does; passwords render as `[hidden]`.
impl fmt::Display for TypedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean(v) => write!(f, "{v}"),
            Self::String(v) | Self::Class(v) => f.write_str(v),
            Self::Int(v) => write!(f, "{v}"),
            Self::Short(v) => write!(f, "{v}"),
            Self::Long(v) => write!(f, "{v}"),
            Self::Double(v) => f.write_str(&java_double_string(*v)),
            Self::List(items) => f.write_str(&items.join(",")),
            Self::Password(p) => write!(f, "{p}"),
        }
    }
}

impl From<bool> for TypedValue {
    fn from(v: bool) -> Self {
        Self::Boolean(v)
    }
}
impl From<i32> for TypedValue {
    fn from(v: i32) -> Self {
        Self::Int(v)
    }
}
impl From<i16> for TypedValue {
    fn from(v: i16) -> Self {
        Self::Short(v)
    }
}
impl From<i64> for TypedValue {
    fn from(v: i64) -> Self {
        Self::Long(v)
    }
}
impl From<f64> for TypedValue {
    fn from(v: f64) -> Self {
        Self::Double(v)
    }
}
impl From<&str> for TypedValue {
    fn from(v: &str) -> Self {
        Self::String(v.to_owned())
    }
}
impl From<String> for TypedValue {
    fn from(v: String) -> Self {
        Self::String(v)
    }
}
impl From<Vec<String>> for TypedValue {
    fn from(v: Vec<String>) -> Self {
        Self::List(v)
    }
}

/// Parses one raw string as `ty` (Java's `ConfigDef.parseType` for string input). The error is
/// the reason only; callers wrap it as `Invalid value <v> for configuration <name>: <reason>`.
pub fn parse_type(raw: &str, ty: ConfigType) -> Result<TypedValue, String> {
    // Java trims every string value before parsing.
    let trimmed = raw.trim();
    let not_a_number = || format!("Not a number of type {ty}");
    Ok(match ty {
        ConfigType::Boolean => {
            if trimmed.eq_ignore_ascii_case("true") {
                TypedValue::Boolean(true)
            } else if trimmed.eq_ignore_ascii_case("false") {
                TypedValue::Boolean(false)
            } else {
                return Err("Expected value to be either true or false".to_owned());
            }
        }
        ConfigType::String => TypedValue::String(trimmed.to_owned()),
        ConfigType::Password => TypedValue::Password(Password::new(trimmed)),
        ConfigType::Int => TypedValue::Int(trimmed.parse().map_err(|_| not_a_number())?),
        ConfigType::Short => TypedValue::Short(trimmed.parse().map_err(|_| not_a_number())?),
        ConfigType::Long => TypedValue::Long(trimmed.parse().map_err(|_| not_a_number())?),
        ConfigType::Double => {
            TypedValue::Double(parse_java_double(trimmed).ok_or_else(not_a_number)?)
        }
        ConfigType::List => TypedValue::List(parse_list(trimmed)),
        ConfigType::Class => {
            if trimmed.is_empty() || trimmed.chars().any(char::is_whitespace) {
                return Err(format!("Class {trimmed} could not be found."));
            }
            TypedValue::Class(trimmed.to_owned())
        }
    })
}

/// Java splits on `\s*,\s*` and `String.split` drops trailing empty items.
fn parse_list(trimmed: &str) -> Vec<String> {
    if trimmed.is_empty() {
        return Vec::new();
    }
    let mut items: Vec<String> = trimmed.split(',').map(|s| s.trim().to_owned()).collect();
    while items.last().is_some_and(String::is_empty) {
        items.pop();
    }
    items
}

fn parse_java_double(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" | "+Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        // Rust also accepts "inf"/"nan" which Java rejects.
        _ if s
            .chars()
            .any(|c| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E')) =>
        {
            None
        }
        _ => s.parse().ok(),
    }
}

/// Java's `Double.toString`: plain between 10^-3 and 10^7, else `d.dddE<n>`; always a fraction.
pub fn java_double_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let abs = v.abs();
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        let s = format!("{v}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{v:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_owned()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_java() {
        assert_eq!(parse_type(" 5 ", ConfigType::Int), Ok(TypedValue::Int(5)));
        assert_eq!(
            parse_type("abc", ConfigType::Int),
            Err("Not a number of type INT".to_owned())
        );
        assert_eq!(
            parse_type("TRUE", ConfigType::Boolean),
            Ok(TypedValue::Boolean(true))
        );
        assert_eq!(
            parse_type("a, b ,c,", ConfigType::List),
            Ok(TypedValue::List(vec!["a".into(), "b".into(), "c".into()]))
        );
        assert_eq!(
            parse_type("", ConfigType::List),
            Ok(TypedValue::List(vec![]))
        );
        assert!(parse_type("inf", ConfigType::Double).is_err());
        assert!(parse_type("70000", ConfigType::Short).is_err());
    }

    #[test]
    fn renders_like_java() {
        assert_eq!(java_double_string(1.0), "1.0");
        assert_eq!(java_double_string(0.5), "0.5");
        assert_eq!(java_double_string(1e10), "1.0E10");
        assert_eq!(java_double_string(1.5e-5), "1.5E-5");
        assert_eq!(
            TypedValue::Password(Password::new("s3cret")).to_string(),
            "[hidden]"
        );
        assert_eq!(format!("{:?}", Password::new("s3cret")), "[hidden]");
    }
}
