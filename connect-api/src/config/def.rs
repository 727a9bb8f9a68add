//! [`ConfigDef`]: declarative config keys, pure validation into [`ConfigValue`]s, and parsing
//! into a [`ParsedConfig`] ("parse, don't validate").

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::types::{ConfigType, Importance, Password, TypedValue, Width, parse_type};
use super::validators::{ParsedValues, Recommender, Validator};
use crate::error::{ConnectError, Result, invalid_value_message, missing_required_message};

/// Raw connector/task configuration as submitted (`Map<String, String>` in Java).
pub type ConfigMap = BTreeMap<String, String>;

/// What a key holds when the configuration does not set it.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// No default: the key is required (Java's `NO_DEFAULT_VALUE`).
    Required,
    /// Defaults to null.
    Null,
    Value(TypedValue),
}

/// One key of a [`ConfigDef`] (Java's `ConfigDef.ConfigKey`).
#[derive(Debug, Clone)]
pub struct ConfigKey {
    pub name: String,
    pub config_type: ConfigType,
    pub default: DefaultValue,
    pub validator: Option<Arc<dyn Validator>>,
    pub importance: Importance,
    pub documentation: Option<String>,
    pub group: Option<String>,
    /// Position within the group; `-1` when unset, as in Java.
    pub order_in_group: i32,
    pub width: Width,
    pub display_name: String,
    pub dependents: Vec<String>,
    pub recommender: Option<Arc<dyn Recommender>>,
}

impl ConfigKey {
    /// A required key (no default) with the given type, importance and documentation.
    pub fn new(
        name: impl Into<String>,
        config_type: ConfigType,
        importance: Importance,
        documentation: impl Into<String>,
    ) -> Self {
        let name = name.into();
        Self {
            display_name: name.clone(),
            name,
            config_type,
            default: DefaultValue::Required,
            validator: None,
            importance,
            documentation: Some(documentation.into()),
            group: None,
            order_in_group: -1,
            width: Width::None,
            dependents: Vec::new(),
            recommender: None,
        }
    }

    /// Sets the default. A string default for a non-string type is parsed as a user value would
    /// be (`"1"` for an INT); a default that does not parse makes the key default to null.
    pub fn default_value(mut self, value: impl Into<TypedValue>) -> Self {
        let value = value.into();
        let coerced = match (&value, self.config_type) {
            (TypedValue::String(s), ty) if ty != ConfigType::String => parse_type(s, ty).ok(),
            (TypedValue::Int(v), ConfigType::Long) => Some(TypedValue::Long((*v).into())),
            (TypedValue::Int(v), ConfigType::Short) => {
                i16::try_from(*v).ok().map(TypedValue::Short)
            }
            (TypedValue::Int(v), ConfigType::Double) => Some(TypedValue::Double((*v).into())),
            _ => Some(value),
        };
        debug_assert!(coerced.is_some(), "invalid default for {}", self.name);
        self.default = coerced.map_or(DefaultValue::Null, DefaultValue::Value);
        self
    }

    pub fn default_null(mut self) -> Self {
        self.default = DefaultValue::Null;
        self
    }

    pub fn validator(mut self, validator: Arc<dyn Validator>) -> Self {
        self.validator = Some(validator);
        self
    }

    pub fn group(mut self, group: impl Into<String>, order_in_group: i32) -> Self {
        self.group = Some(group.into());
        self.order_in_group = order_in_group;
        self
    }

    pub fn width(mut self, width: Width) -> Self {
        self.width = width;
        self
    }

    pub fn display_name(mut self, display_name: impl Into<String>) -> Self {
        self.display_name = display_name.into();
        self
    }

    pub fn dependents(mut self, dependents: &[&str]) -> Self {
        self.dependents = dependents.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    pub fn recommender(mut self, recommender: Arc<dyn Recommender>) -> Self {
        self.recommender = Some(recommender);
        self
    }

    pub fn is_required(&self) -> bool {
        self.default == DefaultValue::Required
    }

    /// Parses `raw` for this key, returning Connect's full error message on failure.
    pub(crate) fn parse_raw(&self, raw: &str) -> Result<TypedValue> {
        parse_type(raw, self.config_type).map_err(|reason| {
            // A password never fails to parse, but be safe: never echo it.
            let shown = if self.config_type == ConfigType::Password {
                Password::HIDDEN
            } else {
                raw
            };
            ConnectError::config(invalid_value_message(&self.name, shown, &reason))
        })
    }
}

/// The validation result of one key (Java's `ConfigValue`). A password value prints `[hidden]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigValue {
    pub name: String,
    pub value: Option<TypedValue>,
    pub recommended_values: Vec<TypedValue>,
    pub errors: Vec<String>,
    pub visible: bool,
}

impl ConfigValue {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: None,
            recommended_values: Vec::new(),
            errors: Vec::new(),
            visible: true,
        }
    }

    pub fn add_error(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }
}

/// An ordered set of [`ConfigKey`]s (Java's `ConfigDef`).
#[derive(Debug, Clone, Default)]
pub struct ConfigDef {
    keys: Vec<ConfigKey>,
}

impl ConfigDef {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a key; a key with the same name is replaced in place (so a connector can redefine
    /// a framework key without changing its position).
    pub fn define(mut self, key: ConfigKey) -> Self {
        match self.keys.iter_mut().find(|k| k.name == key.name) {
            Some(existing) => *existing = key,
            None => self.keys.push(key),
        }
        self
    }

    /// Appends `other`'s keys that this definition does not already have.
    pub fn extend(mut self, other: &ConfigDef) -> Self {
        for key in &other.keys {
            if self.key(&key.name).is_none() {
                self.keys.push(key.clone());
            }
        }
        self
    }

    pub fn keys(&self) -> &[ConfigKey] {
        &self.keys
    }

    pub fn key(&self, name: &str) -> Option<&ConfigKey> {
        self.keys.iter().find(|k| k.name == name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|k| k.name.as_str())
    }

    /// Groups in order of first definition (Java's `groups()`).
    pub fn groups(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.keys
            .iter()
            .filter_map(|k| k.group.clone())
            .filter(|g| seen.insert(g.clone()))
            .collect()
    }

    /// Validates every key without side effects (Java's `validateAll`), one [`ConfigValue`] per
    /// key in definition order, then one per dependent that is not defined. Never fails: every
    /// problem is an error string on the key it concerns.
    pub fn validate(&self, props: &ConfigMap) -> Vec<ConfigValue> {
        let mut parsed = ParsedValues::with_capacity(self.keys.len());
        let mut values = Vec::with_capacity(self.keys.len());
        for key in &self.keys {
            let mut cv = ConfigValue::new(&key.name);
            let value = match props.get(&key.name) {
                Some(raw) => key
                    .parse_raw(raw)
                    .map_err(|e| cv.add_error(e.message()))
                    .ok(),
                None => match &key.default {
                    DefaultValue::Required => {
                        cv.add_error(missing_required_message(&key.name));
                        None
                    }
                    DefaultValue::Null => None,
                    DefaultValue::Value(v) => Some(v.clone()),
                },
            };
            if let Some(validator) = &key.validator
                && let Err(e) = validator.ensure_valid(&key.name, value.as_ref())
            {
                cv.add_error(e.message());
            }
            cv.value.clone_from(&value);
            parsed.insert(key.name.clone(), value);
            values.push(cv);
        }
        for (key, cv) in self.keys.iter().zip(values.iter_mut()) {
            if let Some(recommender) = &key.recommender {
                cv.recommended_values = recommender.valid_values(&key.name, &parsed);
                cv.visible = recommender.visible(&key.name, &parsed);
            }
        }
        let mut undefined: Vec<&str> = Vec::new();
        for dependent in self.keys.iter().flat_map(|k| &k.dependents) {
            if self.key(dependent).is_none() && !undefined.contains(&dependent.as_str()) {
                undefined.push(dependent);
            }
        }
        for name in undefined {
            let mut cv = ConfigValue::new(name);
            cv.add_error(format!(
                "{name} is referred in the dependents, but not defined."
            ));
            cv.visible = false;
            values.push(cv);
        }
        values
    }

    /// Parses and validates, failing on the first problem with Connect's message (Java's
    /// `ConfigDef.parse`). Keys not defined here are kept only in [`ParsedConfig::originals`].
    pub fn parse(&self, props: &ConfigMap) -> Result<ParsedConfig> {
        let mut values = BTreeMap::new();
        for key in &self.keys {
            let value = match props.get(&key.name) {
                Some(raw) => Some(key.parse_raw(raw)?),
                None => match &key.default {
                    DefaultValue::Required => {
                        return Err(ConnectError::missing_required(&key.name));
                    }
                    DefaultValue::Null => None,
                    DefaultValue::Value(v) => Some(v.clone()),
                },
            };
            if let Some(validator) = &key.validator {
                validator.ensure_valid(&key.name, value.as_ref())?;
            }
            values.insert(key.name.clone(), value);
        }
        Ok(ParsedConfig {
            values,
            originals: props.clone(),
        })
    }
}

/// Typed values after [`ConfigDef::parse`]. Getters return `None` for null values and for keys
/// of another type, so callers never re-parse strings.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedConfig {
    values: BTreeMap<String, Option<TypedValue>>,
    originals: ConfigMap,
}

impl ParsedConfig {
    pub fn get(&self, name: &str) -> Option<&TypedValue> {
        self.values.get(name).and_then(Option::as_ref)
    }

    pub fn string(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            TypedValue::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn class(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            TypedValue::Class(s) => Some(s),
            _ => None,
        }
    }

    pub fn boolean(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            TypedValue::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    pub fn int(&self, name: &str) -> Option<i32> {
        match self.get(name)? {
            TypedValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn short(&self, name: &str) -> Option<i16> {
        match self.get(name)? {
            TypedValue::Short(v) => Some(*v),
            _ => None,
        }
    }

    pub fn long(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            TypedValue::Long(v) => Some(*v),
            _ => None,
        }
    }

    pub fn double(&self, name: &str) -> Option<f64> {
        match self.get(name)? {
            TypedValue::Double(v) => Some(*v),
            _ => None,
        }
    }

    /// A LIST value; empty when null.
    pub fn list(&self, name: &str) -> &[String] {
        match self.get(name) {
            Some(TypedValue::List(items)) => items,
            _ => &[],
        }
    }

    pub fn password(&self, name: &str) -> Option<&Password> {
        match self.get(name)? {
            TypedValue::Password(p) => Some(p),
            _ => None,
        }
    }

    /// The raw map that was parsed, including keys the definition does not know.
    pub fn originals(&self) -> &ConfigMap {
        &self.originals
    }

    /// Raw entries whose key starts with `prefix`, with the prefix removed (e.g. the
    /// `value.converter.` sub-config).
    pub fn originals_with_prefix(&self, prefix: &str) -> ConfigMap {
        originals_with_prefix(&self.originals, prefix)
    }
}

/// Entries of `props` whose key starts with `prefix`, with the prefix removed.
pub fn originals_with_prefix(props: &ConfigMap, prefix: &str) -> ConfigMap {
    props
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix(prefix)
                .map(|rest| (rest.to_owned(), v.clone()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}
