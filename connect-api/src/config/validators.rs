//! Validators and recommenders for config keys (Java's `ConfigDef.Validator`/`Recommender`).
//!
//! A validator sees the parsed value, or `None` when the key is absent without default, could
//! not be parsed, or defaults to null. Like Java, validators run even then, so a validator that
//! rejects null adds a second error next to the parse error; wrap it in [`null_or`] to accept null.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::types::{TypedValue, java_double_string};
use crate::error::{ConnectError, Result};

/// Checks one parsed value. Errors use `Invalid value <v> for configuration <name>: <reason>`.
pub trait Validator: Send + Sync + fmt::Debug {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()>;
    /// Short description for generated docs (Java's `toString`), e.g. `[1,...]`.
    fn describe(&self) -> String;
}

/// Parsed values of every key, passed to recommenders (`None` = null).
pub type ParsedValues = HashMap<String, Option<TypedValue>>;

/// Suggests values and visibility from the other keys' values (Java's `Recommender`).
pub trait Recommender: Send + Sync + fmt::Debug {
    fn valid_values(&self, name: &str, parsed: &ParsedValues) -> Vec<TypedValue>;
    fn visible(&self, name: &str, parsed: &ParsedValues) -> bool;
}

fn shown(value: Option<&TypedValue>) -> String {
    value.map_or_else(|| "null".to_owned(), ToString::to_string)
}

/// A numeric bound, printed as Java prints the `Number` it was given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    Int(i64),
    Double(f64),
}

impl Bound {
    fn as_f64(self) -> f64 {
        match self {
            Self::Int(v) => v as f64,
            Self::Double(v) => v,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(v) => write!(f, "{v}"),
            Self::Double(v) => f.write_str(&java_double_string(*v)),
        }
    }
}

/// Java's `Range`.
#[derive(Debug, Clone)]
pub struct Range {
    pub min: Option<Bound>,
    pub max: Option<Bound>,
}

impl Validator for Range {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        let Some(v) = value else {
            return Err(ConnectError::invalid_value(
                name,
                "null",
                "Value must be non-null",
            ));
        };
        let Some(n) = v.as_f64() else {
            return Ok(());
        };
        if let Some(min) = self.min
            && n < min.as_f64()
        {
            return Err(ConnectError::invalid_value(
                name,
                v,
                &format!("Value must be at least {min}"),
            ));
        }
        if let Some(max) = self.max
            && n > max.as_f64()
        {
            return Err(ConnectError::invalid_value(
                name,
                v,
                &format!("Value must be no more than {max}"),
            ));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), None) => format!("[{a},...]"),
            (None, Some(b)) => format!("[...,{b}]"),
            (Some(a), Some(b)) => format!("[{a},...,{b}]"),
            (None, None) => "[...]".to_owned(),
        }
    }
}

/// Java's `ValidString` (case-sensitive) and `CaseInsensitiveValidString`.
#[derive(Debug, Clone)]
pub struct ValidString {
    values: Vec<String>,
    case_insensitive: bool,
}

impl Validator for ValidString {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        let s = value.and_then(TypedValue::as_str);
        let ok = match s {
            None => false,
            Some(s) if self.case_insensitive => {
                self.values.iter().any(|v| v.eq_ignore_ascii_case(s))
            }
            Some(s) => self.values.iter().any(|v| v == s),
        };
        if ok {
            return Ok(());
        }
        let reason = if self.case_insensitive {
            format!(
                "String must be one of (case insensitive): {}",
                self.values.join(", ")
            )
        } else {
            format!("String must be one of: {}", self.values.join(", "))
        };
        Err(ConnectError::invalid_value(name, shown(value), &reason))
    }

    fn describe(&self) -> String {
        if self.case_insensitive {
            format!("(case insensitive) [{}]", self.values.join(", "))
        } else {
            format!("[{}]", self.values.join(", "))
        }
    }
}

/// Java's `NonEmptyString`: null passes, `""` fails.
#[derive(Debug, Clone)]
pub struct NonEmptyString;

impl Validator for NonEmptyString {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        match value.and_then(TypedValue::as_str) {
            Some("") => Err(ConnectError::invalid_value(
                name,
                "",
                "String must be non-empty",
            )),
            _ => Ok(()),
        }
    }
    fn describe(&self) -> String {
        "non-empty string".to_owned()
    }
}

/// Java's `NonEmptyStringWithoutControlChars` (connector names): null passes (the missing
/// value is reported by the required-key check).
#[derive(Debug, Clone)]
pub struct NonEmptyStringWithoutControlChars;

impl Validator for NonEmptyStringWithoutControlChars {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        let Some(s) = value.and_then(TypedValue::as_str) else {
            return Ok(());
        };
        if s.is_empty() {
            return Err(ConnectError::invalid_value(
                name,
                s,
                "String may not be empty",
            ));
        }
        let found: Vec<String> = s
            .chars()
            .filter(|c| c.is_control())
            .map(|c| u32::from(c).to_string())
            .collect();
        if !found.is_empty() {
            return Err(ConnectError::invalid_value(
                name,
                s,
                &format!(
                    "String may not contain control sequences but had the following ASCII chars: {}",
                    found.join(", ")
                ),
            ));
        }
        Ok(())
    }
    fn describe(&self) -> String {
        "non-empty string without ISO control characters".to_owned()
    }
}

/// Java's `NonNullValidator`.
#[derive(Debug, Clone)]
pub struct NonNull;

impl Validator for NonNull {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        match value {
            None => Err(ConnectError::invalid_value(
                name,
                "null",
                "Value must be non-null",
            )),
            Some(_) => Ok(()),
        }
    }
    fn describe(&self) -> String {
        "non-null value".to_owned()
    }
}

/// Accepts null, else delegates (Java writes this as a lambda each time).
#[derive(Debug, Clone)]
pub struct NullOr(pub Arc<dyn Validator>);

impl Validator for NullOr {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        match value {
            None => Ok(()),
            Some(_) => self.0.ensure_valid(name, value),
        }
    }
    fn describe(&self) -> String {
        format!("null or {}", self.0.describe())
    }
}

/// All validators in order; the first failure wins (Java's `CompositeValidator`).
#[derive(Debug, Clone)]
pub struct Composite(pub Vec<Arc<dyn Validator>>);

impl Validator for Composite {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        self.0.iter().try_for_each(|v| v.ensure_valid(name, value))
    }
    fn describe(&self) -> String {
        self.0
            .iter()
            .map(|v| v.describe())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

type CheckFn = dyn Fn(&str, Option<&TypedValue>) -> Result<()> + Send + Sync;

/// A validator from a closure (Java's `LambdaValidator`).
#[derive(Clone)]
pub struct Lambda {
    check: Arc<CheckFn>,
    description: String,
}

impl fmt::Debug for Lambda {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lambda")
            .field("description", &self.description)
            .finish()
    }
}

impl Validator for Lambda {
    fn ensure_valid(&self, name: &str, value: Option<&TypedValue>) -> Result<()> {
        (self.check)(name, value)
    }
    fn describe(&self) -> String {
        self.description.clone()
    }
}

pub fn at_least(min: i64) -> Arc<dyn Validator> {
    Arc::new(Range {
        min: Some(Bound::Int(min)),
        max: None,
    })
}

pub fn between(min: i64, max: i64) -> Arc<dyn Validator> {
    Arc::new(Range {
        min: Some(Bound::Int(min)),
        max: Some(Bound::Int(max)),
    })
}

/// Case-sensitive choice (Java's `ValidString.in`).
pub fn one_of(values: &[&str]) -> Arc<dyn Validator> {
    Arc::new(ValidString {
        values: values.iter().map(|s| (*s).to_owned()).collect(),
        case_insensitive: false,
    })
}

/// Case-insensitive choice (Java's `CaseInsensitiveValidString.in`); messages list the values
/// upper-cased, as Java does.
pub fn one_of_case_insensitive(values: &[&str]) -> Arc<dyn Validator> {
    Arc::new(ValidString {
        values: values.iter().map(|s| s.to_ascii_uppercase()).collect(),
        case_insensitive: true,
    })
}

pub fn non_empty_string() -> Arc<dyn Validator> {
    Arc::new(NonEmptyString)
}

pub fn non_empty_string_without_control_chars() -> Arc<dyn Validator> {
    Arc::new(NonEmptyStringWithoutControlChars)
}

pub fn non_null() -> Arc<dyn Validator> {
    Arc::new(NonNull)
}

pub fn null_or(inner: Arc<dyn Validator>) -> Arc<dyn Validator> {
    Arc::new(NullOr(inner))
}

pub fn composite(validators: Vec<Arc<dyn Validator>>) -> Arc<dyn Validator> {
    Arc::new(Composite(validators))
}

pub fn lambda(
    description: impl Into<String>,
    check: impl Fn(&str, Option<&TypedValue>) -> Result<()> + Send + Sync + 'static,
) -> Arc<dyn Validator> {
    Arc::new(Lambda {
        check: Arc::new(check),
        description: description.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let e = at_least(1)
            .ensure_valid("tasks.max", Some(&TypedValue::Int(0)))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value 0 for configuration tasks.max: Value must be at least 1"
        );
        let e = one_of_case_insensitive(&["poll", "interval"])
            .ensure_valid("transaction.boundary", Some(&"x".into()))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value x for configuration transaction.boundary: String must be one of (case insensitive): POLL, INTERVAL"
        );
        assert!(
            one_of_case_insensitive(&["poll"])
                .ensure_valid("k", Some(&"POLL".into()))
                .is_ok()
        );
        let e = non_empty_string_without_control_chars()
            .ensure_valid("name", Some(&"a\u{7}".into()))
            .unwrap_err();
        assert!(e.to_string().ends_with("following ASCII chars: 7"), "{e}");
        assert!(null_or(at_least(0)).ensure_valid("k", None).is_ok());
    }
}
