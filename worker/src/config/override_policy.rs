//! `connector.client.config.override.policy` (KIP-458): which `producer.override.*`,
//! `consumer.override.*` and `admin.override.*` keys a connector may set. Apache's four
//! policies, under their class names and aliases; Apache 4.4's default is `All`.
//!
//! - `All`: every key; `None`: no key;
//! - `Principal` (deprecated in Apache 4.2, a warning at start-up as there): `sasl.jaas.config`,
//!   `sasl.mechanism`, `security.protocol`;
//! - `Allowlist` (Apache 4.2+): the client keys listed in
//!   `connector.client.config.override.allowlist` (default empty: nothing), a list Apache's
//!   `ValidList.anyNonDuplicateValues(true, false)` checks (after removing duplicates).
//!
//! A forbidden override is an error on the connector's key at validation (Apache's message,
//! [`OverridePolicy::violations`]) and fails a task whose stored config has one
//! ([`OverridePolicy::enforce`], Apache's `Worker.connectorClientConfigOverrides`).

use std::collections::BTreeMap;

/// Worker key.
pub const CONNECTOR_CLIENT_POLICY_CLASS_CONFIG: &str = "connector.client.config.override.policy";
/// Apache's default.
pub const CONNECTOR_CLIENT_POLICY_CLASS_DEFAULT: &str = "All";
/// Worker key of the `Allowlist` policy: the client keys connectors may override.
pub const ALLOWLIST_CONFIG: &str = "connector.client.config.override.allowlist";
/// The connector key prefixes the policy rules.
pub const OVERRIDE_PREFIXES: [&str; 3] = [
    "producer.override.",
    "consumer.override.",
    "admin.override.",
];

const POLICY_PACKAGE: &str = "org.apache.kafka.connect.connector.policy.";
const POLICY_INTERFACE: &str =
    "org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy";

/// The keys `Principal` allows: the client's identity.
const PRINCIPAL_KEYS: [&str; 3] = ["sasl.jaas.config", "sasl.mechanism", "security.protocol"];

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OverridePolicy {
    /// Every key may be overridden.
    #[default]
    All,
    /// No key may be overridden.
    None,
    /// Only `sasl.jaas.config`, `sasl.mechanism` and `security.protocol`.
    Principal,
    /// Only the listed client keys ([`ALLOWLIST_CONFIG`]).
    Allowlist(Vec<String>),
}

/// Why the worker's policy keys cannot be used: the key and the reason (Apache's message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    pub key: &'static str,
    pub reason: String,
}

impl OverridePolicy {
    /// The worker's policy from [`CONNECTOR_CLIENT_POLICY_CLASS_CONFIG`] (alias `All`, simple
    /// class name `AllConnectorClientConfigOverridePolicy` or class name, as Apache's plugin
    /// loader accepts them) and, for `Allowlist`, [`ALLOWLIST_CONFIG`]. Logs what Apache logs
    /// when it configures the policy, and an allowlist the chosen policy does not read.
    pub fn from_worker_config(raw: &BTreeMap<String, String>) -> Result<Self, PolicyError> {
        let class = raw
            .get(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG)
            .map_or(CONNECTOR_CLIENT_POLICY_CLASS_DEFAULT, |v| v.trim());
        let policy = match Self::alias(class) {
            Some("All") => OverridePolicy::All,
            Some("None") => OverridePolicy::None,
            Some("Principal") => {
                tracing::warn!(
                    "The Principal ConnectorClientConfigOverridePolicy is deprecated, use the Allowlist policy instead. To replicate the Principal policy behavior, set the {ALLOWLIST_CONFIG} configuration to \"{}\"",
                    PRINCIPAL_KEYS.join(",")
                );
                OverridePolicy::Principal
            }
            Some("Allowlist") => {
                let list = parse_allowlist(raw.get(ALLOWLIST_CONFIG).map(String::as_str))?;
                tracing::info!(
                    "Setting up Allowlist policy for ConnectorClientConfigOverride. This will allow the following client configurations to be overridden. [{}]",
                    list.join(", ")
                );
                OverridePolicy::Allowlist(list)
            }
            _ => {
                return Err(PolicyError {
                    key: CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
                    reason: format!(
                        "Failed to find any class that implements interface {POLICY_INTERFACE} and which name matches {class}"
                    ),
                });
            }
        };
        if raw.contains_key(ALLOWLIST_CONFIG) && !matches!(policy, OverridePolicy::Allowlist(_)) {
            tracing::warn!(
                key = ALLOWLIST_CONFIG,
                policy = policy.name(),
                "worker config key has no effect: only the Allowlist policy reads it"
            );
        }
        Ok(policy)
    }

    /// `All` from `All`, `AllConnectorClientConfigOverridePolicy` or the class name.
    fn alias(value: &str) -> Option<&'static str> {
        let simple = value.strip_prefix(POLICY_PACKAGE).unwrap_or(value);
        let alias = match simple.strip_suffix("ConnectorClientConfigOverridePolicy") {
            Some(a) => a,
            // A class name is one with the package; an alias is the bare word.
            None if simple.len() == value.len() => simple,
            None => return None,
        };
        ["All", "None", "Principal", "Allowlist"]
            .into_iter()
            .find(|a| *a == alias)
    }

    /// Apache's `policyName()`.
    pub fn name(&self) -> &'static str {
        match self {
            OverridePolicy::All => "All",
            OverridePolicy::None => "None",
            OverridePolicy::Principal => "Principal",
            OverridePolicy::Allowlist(_) => "Allowlist",
        }
    }

    fn allows(&self, client_key: &str) -> bool {
        match self {
            OverridePolicy::All => true,
            OverridePolicy::None => false,
            OverridePolicy::Principal => PRINCIPAL_KEYS.contains(&client_key),
            OverridePolicy::Allowlist(keys) => keys.iter().any(|k| k == client_key),
        }
    }

    fn message(&self, client_key: &str) -> String {
        format!(
            "The '{}' policy does not allow '{client_key}' to be overridden in the connector configuration.",
            self.name()
        )
    }

    /// `(connector key, Apache's message)` for each override the policy forbids.
    pub fn violations(&self, connector_config: &BTreeMap<String, String>) -> Vec<(String, String)> {
        connector_config
            .keys()
            .filter_map(|key| {
                let client_key = OVERRIDE_PREFIXES.iter().find_map(|p| key.strip_prefix(p))?;
                (!self.allows(client_key)).then(|| (key.clone(), self.message(client_key)))
            })
            .collect()
    }

    /// At task start, one client's overrides (`prefix` is e.g. `producer.override.`): Apache's
    /// `Client Config Overrides not allowed [...]` (Java's `ConfigValue` list) when the policy
    /// forbids any.
    pub fn enforce(
        &self,
        prefix: &str,
        connector_config: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        let refused: Vec<String> = connector_config
            .iter()
            .filter_map(|(key, value)| {
                let client_key = key.strip_prefix(prefix)?;
                (!self.allows(client_key)).then(|| {
                    format!(
                        "[{client_key},{value},[],[{}],true]",
                        self.message(client_key)
                    )
                })
            })
            .collect();
        if refused.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "Client Config Overrides not allowed [{}]",
                refused.join(", ")
            ))
        }
    }
}

/// [`ALLOWLIST_CONFIG`] as Apache's `ConfigDef` reads a `LIST` (split at commas, blanks around
/// them dropped; an empty value is the empty list) checked by
/// `ValidList.anyNonDuplicateValues(true, false)`: as Apache 4.4's `ConfigDef.parseValue`,
/// duplicates are removed with a warning before the check, and an empty entry is an error.
fn parse_allowlist(value: Option<&str>) -> Result<Vec<String>, PolicyError> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Vec::new());
    };
    let original: Vec<String> = value.split(',').map(|s| s.trim().to_owned()).collect();
    let mut list: Vec<String> = Vec::with_capacity(original.len());
    for entry in &original {
        if !list.contains(entry) {
            list.push(entry.clone());
        }
    }
    if list.len() != original.len() {
        tracing::warn!(
            "Configuration key \"{ALLOWLIST_CONFIG}\" contains duplicate values. Duplicates will be removed. The original value is: [{}], the updated value is: [{}]",
            original.join(", "),
            list.join(", ")
        );
    }
    if list.iter().any(String::is_empty) {
        return Err(PolicyError {
            key: ALLOWLIST_CONFIG,
            reason: format!("Configuration '{ALLOWLIST_CONFIG}' values must not be empty."),
        });
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .map(|k| (k.to_string(), "x".to_string()))
            .collect()
    }

    fn policy(class: &str, allowlist: Option<&str>) -> Result<OverridePolicy, PolicyError> {
        let mut raw = BTreeMap::from([(
            CONNECTOR_CLIENT_POLICY_CLASS_CONFIG.to_owned(),
            class.to_owned(),
        )]);
        if let Some(a) = allowlist {
            raw.insert(ALLOWLIST_CONFIG.to_owned(), a.to_owned());
        }
        OverridePolicy::from_worker_config(&raw)
    }

    #[test]
    fn aliases_and_class_names() {
        for (alias, expected) in [
            ("All", OverridePolicy::All),
            ("None", OverridePolicy::None),
            ("Principal", OverridePolicy::Principal),
            ("Allowlist", OverridePolicy::Allowlist(Vec::new())),
        ] {
            for v in [
                alias.to_owned(),
                format!("{alias}ConnectorClientConfigOverridePolicy"),
                format!("{POLICY_PACKAGE}{alias}ConnectorClientConfigOverridePolicy"),
                format!(" {alias} "),
            ] {
                assert_eq!(policy(&v, None).unwrap(), expected, "{v}");
            }
        }
        assert_eq!(
            OverridePolicy::from_worker_config(&BTreeMap::new()).unwrap(),
            OverridePolicy::default()
        );
        // Apache's plugin loader: no alias with a package, no other class.
        for v in [
            "com.example.Custom",
            "org.apache.kafka.connect.connector.policy.All",
            "allowlist",
        ] {
            let e = policy(v, None).unwrap_err();
            assert_eq!(e.key, CONNECTOR_CLIENT_POLICY_CLASS_CONFIG);
            assert_eq!(
                e.reason,
                format!(
                    "Failed to find any class that implements interface org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy and which name matches {v}"
                )
            );
        }
    }

    #[test]
    fn the_allowlist_is_a_java_list_without_duplicates() {
        assert_eq!(
            policy("Allowlist", Some(" linger.ms , sasl.jaas.config ")).unwrap(),
            OverridePolicy::Allowlist(vec!["linger.ms".into(), "sasl.jaas.config".into()])
        );
        assert_eq!(
            policy("Allowlist", Some("  ")).unwrap(),
            OverridePolicy::Allowlist(Vec::new())
        );
        // Apache 4.4 removes duplicates (with a warning) before its validator runs.
        assert_eq!(
            policy("Allowlist", Some("a,b, a")).unwrap(),
            OverridePolicy::Allowlist(vec!["a".into(), "b".into()])
        );
        for v in ["a,,b", "a,,,b", "a,"] {
            let empty = policy("Allowlist", Some(v)).unwrap_err();
            assert_eq!(
                (empty.key, empty.reason.as_str()),
                (
                    ALLOWLIST_CONFIG,
                    "Configuration 'connector.client.config.override.allowlist' values must not be empty."
                ),
                "{v}"
            );
        }
        // Another policy does not read the list (a logged line, as documented).
        assert_eq!(policy("None", Some("a,,a")).unwrap(), OverridePolicy::None);
    }

    #[test]
    fn violations_carry_apaches_message_on_the_connector_key() {
        let c = config(&[
            "producer.override.linger.ms",
            "consumer.override.sasl.jaas.config",
            "admin.override.security.protocol",
            "topics",
        ]);
        assert!(OverridePolicy::All.violations(&c).is_empty());
        let none = OverridePolicy::None.violations(&c);
        assert_eq!(none.len(), 3);
        assert_eq!(
            none.iter()
                .find(|(k, _)| k == "producer.override.linger.ms")
                .unwrap()
                .1,
            "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration."
        );
        let principal = OverridePolicy::Principal.violations(&c);
        assert_eq!(
            principal,
            vec![(
                "producer.override.linger.ms".to_owned(),
                "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration.".to_owned()
            )]
        );
        let allow = OverridePolicy::Allowlist(vec!["linger.ms".into(), "security.protocol".into()])
            .violations(&c);
        assert_eq!(
            allow,
            vec![(
                "consumer.override.sasl.jaas.config".to_owned(),
                "The 'Allowlist' policy does not allow 'sasl.jaas.config' to be overridden in the connector configuration.".to_owned()
            )]
        );
        assert_eq!(
            OverridePolicy::Allowlist(Vec::new()).violations(&c).len(),
            3
        );
    }

    #[test]
    fn enforcement_at_task_start_lists_java_config_values() {
        let c = config(&["producer.override.linger.ms", "producer.override.acks"]);
        let allow = OverridePolicy::Allowlist(vec!["acks".into()]);
        assert_eq!(
            allow.enforce("producer.override.", &c).unwrap_err(),
            "Client Config Overrides not allowed [[linger.ms,x,[],[The 'Allowlist' policy does not allow 'linger.ms' to be overridden in the connector configuration.],true]]"
        );
        assert!(allow.enforce("consumer.override.", &c).is_ok());
        assert!(
            OverridePolicy::All
                .enforce("producer.override.", &c)
                .is_ok()
        );
    }
}
