//! `connector.client.config.override.policy` (KIP-458): which `producer.override.*`,
//! `consumer.override.*` and `admin.override.*` keys a connector may set. Apache's three
//! policies, under their class names and aliases; Apache 4.4's default is `All`.

use std::collections::BTreeMap;

/// Worker key.
pub const CONNECTOR_CLIENT_POLICY_CLASS_CONFIG: &str = "connector.client.config.override.policy";
/// Apache's default.
pub const CONNECTOR_CLIENT_POLICY_CLASS_DEFAULT: &str = "All";
/// The connector key prefixes the policy rules.
pub const OVERRIDE_PREFIXES: [&str; 3] = [
    "producer.override.",
    "consumer.override.",
    "admin.override.",
];

const POLICY_PACKAGE: &str = "org.apache.kafka.connect.connector.policy.";

/// The keys `Principal` allows: the client's identity.
const PRINCIPAL_KEYS: [&str; 3] = ["sasl.jaas.config", "sasl.mechanism", "security.protocol"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverridePolicy {
    /// Every key may be overridden.
    #[default]
    All,
    /// No key may be overridden.
    None,
    /// Only `sasl.jaas.config`, `sasl.mechanism` and `security.protocol`.
    Principal,
}

impl OverridePolicy {
    /// A policy from its alias (`All`), simple class name (`AllConnectorClientConfigOverridePolicy`)
    /// or class name (`org.apache.kafka.connect.connector.policy.All...`), as Apache's plugin
    /// loader accepts them; the error names the key.
    pub fn parse(value: &str) -> Result<Self, String> {
        let v = value.trim();
        let simple = v.strip_prefix(POLICY_PACKAGE).unwrap_or(v);
        let alias = simple
            .strip_suffix("ConnectorClientConfigOverridePolicy")
            .unwrap_or(simple);
        match alias {
            "All" => Ok(OverridePolicy::All),
            "None" => Ok(OverridePolicy::None),
            "Principal" => Ok(OverridePolicy::Principal),
            _ => Err(format!(
                "Invalid value {v} for configuration {CONNECTOR_CLIENT_POLICY_CLASS_CONFIG}: the policies are All, None and Principal ({POLICY_PACKAGE}<policy>ConnectorClientConfigOverridePolicy)"
            )),
        }
    }

    /// Apache's `policyName()`.
    pub fn name(self) -> &'static str {
        match self {
            OverridePolicy::All => "All",
            OverridePolicy::None => "None",
            OverridePolicy::Principal => "Principal",
        }
    }

    fn allows(self, client_key: &str) -> bool {
        match self {
            OverridePolicy::All => true,
            OverridePolicy::None => false,
            OverridePolicy::Principal => PRINCIPAL_KEYS.contains(&client_key),
        }
    }

    /// `(connector key, Apache's message)` for each override the policy forbids.
    pub fn violations(self, connector_config: &BTreeMap<String, String>) -> Vec<(String, String)> {
        connector_config
            .keys()
            .filter_map(|key| {
                let client_key = OVERRIDE_PREFIXES
                    .iter()
                    .find_map(|p| key.strip_prefix(p))?;
                (!self.allows(client_key)).then(|| {
                    (
                        key.clone(),
                        format!(
                            "The '{}' policy does not allow '{client_key}' to be overridden in the connector configuration.",
                            self.name()
                        ),
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .map(|k| (k.to_string(), "x".to_string()))
            .collect()
    }

    #[test]
    fn aliases_and_class_names() {
        for v in [
            "All",
            "AllConnectorClientConfigOverridePolicy",
            "org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy",
        ] {
            assert_eq!(
                OverridePolicy::parse(v).unwrap(),
                OverridePolicy::All,
                "{v}"
            );
        }
        assert_eq!(
            OverridePolicy::parse(" None ").unwrap(),
            OverridePolicy::None
        );
        assert_eq!(
            OverridePolicy::parse("PrincipalConnectorClientConfigOverridePolicy").unwrap(),
            OverridePolicy::Principal
        );
        let e = OverridePolicy::parse("com.example.Custom").unwrap_err();
        assert!(e.contains(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG), "{e}");
        assert_eq!(
            OverridePolicy::parse(CONNECTOR_CLIENT_POLICY_CLASS_DEFAULT).unwrap(),
            OverridePolicy::default()
        );
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
    }
}
