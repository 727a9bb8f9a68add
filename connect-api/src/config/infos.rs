//! The validation response, serialised exactly as Connect's `ConfigInfos` (spec §1.5):
//!
//! ```json
//! {"name": "<connector.class>", "error_count": 1, "groups": ["Common"],
//!  "configs": [{"definition": {"name": ..., "type": "INT", "required": false,
//!                              "default_value": "1", "importance": "HIGH",
//!                              "documentation": ..., "group": "Common", "order_in_group": 3,
//!                              "width": "SHORT", "display_name": "Tasks max",
//!                              "dependents": []},
//!               "value": {"name": ..., "value": "abc", "recommended_values": [],
//!                         "errors": ["Invalid value abc ..."], "visible": true}}]}
//! ```
//!
//! Password values are rendered `[hidden]` when the response is built, so the serialised form
//! cannot contain them.

use serde::{Deserialize, Serialize};

use super::def::{ConfigDef, ConfigKey, ConfigValue, DefaultValue};
use super::types::{ConfigType, TypedValue};

/// The whole validation result (Java's `ConfigInfos`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfos {
    pub name: String,
    pub error_count: usize,
    pub groups: Vec<String>,
    pub configs: Vec<ConfigInfo>,
}

/// One key: its definition (null for values without a definition) and its validated value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigInfo {
    pub definition: Option<ConfigKeyInfo>,
    pub value: Option<ConfigValueInfo>,
}

/// A key's definition as Connect 4.4 serialises it (a Java record: the order is
/// `order_in_group`, as in Java's `ConfigKeyInfo` constructor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigKeyInfo {
    pub name: String,
    #[serde(rename = "type")]
    pub config_type: String,
    pub required: bool,
    pub default_value: Option<String>,
    pub importance: String,
    pub documentation: Option<String>,
    pub group: Option<String>,
    pub order_in_group: i32,
    pub width: String,
    pub display_name: String,
    pub dependents: Vec<String>,
}

/// A key's validated value as Connect serialises it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigValueInfo {
    pub name: String,
    pub value: Option<String>,
    pub recommended_values: Vec<String>,
    pub errors: Vec<String>,
    pub visible: bool,
}

impl ConfigKeyInfo {
    pub fn from_key(key: &ConfigKey) -> Self {
        let (required, default_value) = match &key.default {
            DefaultValue::Required => (true, None),
            DefaultValue::Null => (false, None),
            DefaultValue::Value(v) => (false, Some(v.to_string())),
        };
        Self {
            name: key.name.clone(),
            config_type: key.config_type.name().to_owned(),
            required,
            default_value,
            importance: key.importance.name().to_owned(),
            documentation: key.documentation.clone(),
            group: key.group.clone(),
            order_in_group: key.order_in_group,
            width: key.width.name().to_owned(),
            display_name: key.display_name.clone(),
            dependents: key.dependents.clone(),
        }
    }
}

impl ConfigValueInfo {
    /// `config_type` is the key's type when it has a definition. Values render through
    /// `TypedValue`'s `Display`, which hides passwords.
    pub fn from_value(value: &ConfigValue, config_type: Option<ConfigType>) -> Self {
        let hide = config_type == Some(ConfigType::Password);
        let render = |v: &TypedValue| {
            if hide {
                super::types::Password::HIDDEN.to_owned()
            } else {
                v.to_string()
            }
        };
        Self {
            name: value.name.clone(),
            value: value.value.as_ref().map(render),
            recommended_values: value.recommended_values.iter().map(render).collect(),
            errors: value.errors.clone(),
            visible: value.visible,
        }
    }
}

impl ConfigInfos {
    /// Builds the response for `values` validated against `def` (Java's
    /// `AbstractHerder.generateResult`): values without a definition first, then one entry per
    /// defined key in definition order. `error_count` counts every error string.
    pub fn generate(
        connector_class: &str,
        def: &ConfigDef,
        values: &[ConfigValue],
        groups: Vec<String>,
    ) -> Self {
        let mut configs = Vec::with_capacity(values.len());
        let mut error_count = 0;
        for value in values {
            if def.key(&value.name).is_none() {
                error_count += value.errors.len();
                configs.push(ConfigInfo {
                    definition: None,
                    value: Some(ConfigValueInfo::from_value(value, None)),
                });
            }
        }
        for key in def.keys() {
            let value = values.iter().find(|v| v.name == key.name);
            if let Some(v) = value {
                error_count += v.errors.len();
            }
            configs.push(ConfigInfo {
                definition: Some(ConfigKeyInfo::from_key(key)),
                value: value.map(|v| ConfigValueInfo::from_value(v, Some(key.config_type))),
            });
        }
        Self {
            name: connector_class.to_owned(),
            error_count,
            groups,
            configs,
        }
    }

    /// Shortcut: validate `props` against `def` and build the response with `def`'s groups.
    pub fn validate(connector_class: &str, def: &ConfigDef, props: &super::ConfigMap) -> Self {
        let values = def.validate(props);
        Self::generate(connector_class, def, &values, def.groups())
    }

    /// Concatenates partial results (framework keys, connector keys, converter keys...):
    /// configs in order, error counts summed, groups de-duplicated in order.
    pub fn merge(name: &str, parts: impl IntoIterator<Item = ConfigInfos>) -> Self {
        let mut merged = Self {
            name: name.to_owned(),
            error_count: 0,
            groups: Vec::new(),
            configs: Vec::new(),
        };
        for part in parts {
            merged.error_count += part.error_count;
            for g in part.groups {
                if !merged.groups.contains(&g) {
                    merged.groups.push(g);
                }
            }
            merged.configs.extend(part.configs);
        }
        merged
    }

    /// Adds an error to the value of `key` (e.g. the herder's exactly-once preflight checks).
    /// Returns `false` if no such value exists.
    pub fn add_error(&mut self, key: &str, message: impl Into<String>) -> bool {
        let Some(value) = self
            .configs
            .iter_mut()
            .filter_map(|c| c.value.as_mut())
            .find(|v| v.name == key)
        else {
            return false;
        };
        value.errors.push(message.into());
        self.error_count += 1;
        true
    }

    /// Every error string, in response order.
    pub fn errors(&self) -> impl Iterator<Item = &str> {
        self.configs
            .iter()
            .filter_map(|c| c.value.as_ref())
            .flat_map(|v| v.errors.iter().map(String::as_str))
    }

    /// The 400 message create/update answers with when `error_count > 0` (spec §1.4).
    pub fn invalid_config_message(&self, connector_type: &str) -> String {
        let mut lines = vec![format!(
            "Connector configuration is invalid and contains the following {} error(s):",
            self.error_count
        )];
        lines.extend(self.errors().map(str::to_owned));
        lines.push(format!(
            "You can also find the above list of errors at the endpoint `/connector-plugins/{connector_type}/config/validate`"
        ));
        lines.join("\n")
    }
}
