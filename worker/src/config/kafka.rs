//! The one builder of this worker's librdkafka clients, and the worker-level settings it reads.
//!
//! Every librdkafka client starts from [`WorkerConfig::kafka_client`] (or `kafka_client_with`):
//!
//! ```text
//!  caller's defaults (acks=all...) < bootstrap.servers < top-level security.protocol, sasl.*, ssl.*
//!      < producer.* / consumer.* / admin.* (by the client's kind) < a connector's *.override.*
//! ```
//!
//! The internal-topic stores take the top-level keys only, as Connect's `KafkaBasedLog` does
//! (a worker's `producer.acks` must not change how the config topic is written).

use std::collections::BTreeMap;

use rdkafka::ClientConfig;

use super::clients::{ClientKeyError, ClientKind, ClientSettings};
use super::security::{self, Written};
use super::{ConfigError, Listener, WorkerConfig};
use crate::security::KafkaSecurity;

/// Which worker-level settings a client takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientScope {
    /// The internal-topic stores: the top-level security keys only.
    Internal,
    /// The top-level security keys under the kind's `producer.*`, `consumer.*` or `admin.*`.
    Worker(ClientKind),
}

/// The worker-level settings of every scope, checked at start-up.
#[derive(Debug, Clone)]
pub(super) struct WorkerClients {
    pub internal: ClientSettings,
    pub producer: ClientSettings,
    pub consumer: ClientSettings,
    pub admin: ClientSettings,
    pub security: KafkaSecurity,
}

/// Whether `key` (top level) is a Kafka client security key.
fn is_top_level_security_key(key: &str) -> bool {
    (key.starts_with("security.") || key.starts_with("sasl.") || key.starts_with("ssl."))
        && !security::SERVER_ONLY_KEYS.contains(&key)
}

/// Reads the top-level security keys and the `producer.`, `consumer.`, `admin.` ones, resolves
/// each scope (a bad store or password fails start-up naming the key) and refuses a top-level
/// key that no client applies: a `sasl.*` key when no client uses SASL, an `ssl.*` key when no
/// client uses TLS and no `https` REST listener reads the top-level `ssl.*` keys.
pub(super) fn worker_clients(
    raw: &BTreeMap<String, String>,
    listeners: &[Listener],
    admin_listeners: Option<&[Listener]>,
) -> Result<WorkerClients, ConfigError> {
    let top = raw
        .iter()
        .filter(|(k, _)| is_top_level_security_key(k))
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let internal =
        ClientSettings::translate(ClientKind::Admin, "", top).map_err(ConfigError::Client)?;
    let kind = |kind: ClientKind, prefix: &str| -> Result<ClientSettings, ConfigError> {
        let pairs = raw
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k, v.as_str())))
            .filter(|(k, _)| {
                kind != ClientKind::Admin || (*k != "listeners" && !k.starts_with("listeners."))
            });
        let own = ClientSettings::translate(kind, prefix, pairs).map_err(ConfigError::Client)?;
        Ok(internal.merged(&own))
    };
    let producer = kind(ClientKind::Producer, "producer.")?;
    let consumer = kind(ClientKind::Consumer, "consumer.")?;
    let admin = kind(ClientKind::Admin, "admin.")?;

    let mut errors: Vec<ClientKeyError> = Vec::new();
    let mut unused_everywhere: Option<Vec<Written>> = None;
    let mut security = KafkaSecurity::default();
    for (i, scope) in [&internal, &producer, &consumer, &admin]
        .into_iter()
        .enumerate()
    {
        match scope.resolve() {
            Ok(r) => {
                if i == 0 {
                    security = r.security.clone();
                }
                unused_everywhere = Some(match unused_everywhere {
                    None => r.unused,
                    Some(prev) => prev.into_iter().filter(|w| r.unused.contains(w)).collect(),
                });
            }
            Err(e) => {
                for e in e {
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(ConfigError::Client(errors));
    }
    let rest_reads = |listeners: &[Listener], prefix: &str| {
        listeners.iter().any(Listener::is_https) && !raw.keys().any(|k| k.starts_with(prefix))
    };
    let rest_reads_top_level_tls = rest_reads(listeners, "listeners.https.")
        || admin_listeners.is_some_and(|l| rest_reads(l, "admin.listeners.https."));
    let protocol_key = security::SECURITY_PROTOCOL;
    let unused: Vec<ClientKeyError> = unused_everywhere
        .unwrap_or_default()
        .iter()
        // Top-level keys only (prefixed ones are refused by their scope).
        .filter(|w| security::is_resolved(&w.key))
        .filter(|w| !(rest_reads_top_level_tls && security::is_tls_key(&w.key)))
        .map(|w| security::unused_error(w, protocol_key, security.protocol))
        .collect();
    if !unused.is_empty() {
        return Err(ConfigError::Client(unused));
    }
    Ok(WorkerClients {
        internal,
        producer,
        consumer,
        admin,
        security,
    })
}

impl WorkerConfig {
    /// The worker-level settings of `scope` (top-level security keys under the kind's keys).
    pub fn client_settings(&self, scope: ClientScope) -> &ClientSettings {
        match scope {
            ClientScope::Internal => &self.internal_client,
            ClientScope::Worker(ClientKind::Producer) => &self.producer_client,
            ClientScope::Worker(ClientKind::Consumer) => &self.consumer_client,
            ClientScope::Worker(ClientKind::Admin) => &self.admin_client,
        }
    }

    /// The security the settings of `scope` resolve to (for the worker's own Kafka clients,
    /// which take it as a [`KafkaSecurity`] rather than librdkafka keys).
    pub fn client_security(&self, scope: ClientScope) -> Result<KafkaSecurity, ConfigError> {
        self.client_settings(scope)
            .resolve()
            .map(|r| r.security)
            .map_err(ConfigError::Client)
    }

    /// A librdkafka client config of `scope`: `bootstrap.servers`, the security keys, the
    /// kind's worker-level keys. The caller sets its forced keys (`group.id`, `client.id`...)
    /// after.
    pub fn kafka_client(&self, scope: ClientScope) -> Result<ClientConfig, ConfigError> {
        self.kafka_client_with(scope, ClientConfig::new(), None)
    }

    /// [`Self::kafka_client`] over the caller's `defaults` (which every setting overrides) and
    /// under a connector's `overrides`.
    pub fn kafka_client_with(
        &self,
        scope: ClientScope,
        defaults: ClientConfig,
        overrides: Option<&ClientSettings>,
    ) -> Result<ClientConfig, ConfigError> {
        let mut c = defaults;
        c.set("bootstrap.servers", &self.bootstrap_servers);
        let settings = self.client_settings(scope);
        match overrides {
            Some(o) => settings.merged(o).apply(&mut c),
            None => settings.apply(&mut c),
        }
        .map_err(ConfigError::Client)?;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::{SaslCredentials, SecurityProtocol};

    const JAAS: &str = r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="pw";"#;

    fn worker(extra: &[(&str, &str)]) -> Result<WorkerConfig, ConfigError> {
        let mut p: BTreeMap<String, String> = [
            ("bootstrap.servers", "broker:9093"),
            ("group.id", "g"),
            ("config.storage.topic", "c"),
            ("offset.storage.topic", "o"),
            ("status.storage.topic", "s"),
            (
                "key.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
            (
                "value.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        for (k, v) in extra {
            p.insert((*k).to_owned(), (*v).to_owned());
        }
        WorkerConfig::from_props(p)
    }

    const SASL_SSL: &[(&str, &str)] = &[
        ("security.protocol", "SASL_SSL"),
        ("sasl.mechanism", "SCRAM-SHA-512"),
        ("sasl.jaas.config", JAAS),
    ];

    #[test]
    fn top_level_security_keys_reach_every_client_and_the_group_member() {
        let c = worker(SASL_SSL).unwrap();
        assert_eq!(c.kafka_security.protocol, SecurityProtocol::SaslSsl);
        assert_eq!(
            c.kafka_security.sasl.as_ref().unwrap().credentials,
            SaslCredentials::UsernamePassword {
                username: "connect".into(),
                password: "pw".into()
            }
        );
        assert!(c.kafka_security.tls.as_ref().unwrap().verify_hostname);
        for scope in [
            ClientScope::Internal,
            ClientScope::Worker(ClientKind::Producer),
            ClientScope::Worker(ClientKind::Consumer),
            ClientScope::Worker(ClientKind::Admin),
        ] {
            let client = c.kafka_client(scope).unwrap();
            assert_eq!(client.get("bootstrap.servers"), Some("broker:9093"));
            assert_eq!(
                client.get("security.protocol"),
                Some("SASL_SSL"),
                "{scope:?}"
            );
            assert_eq!(client.get("sasl.mechanism"), Some("SCRAM-SHA-512"));
            assert_eq!(client.get("sasl.username"), Some("connect"));
            assert_eq!(client.get("sasl.jaas.config"), None);
            client.create_native_config().unwrap();
        }
    }

    #[test]
    fn kind_keys_refine_the_top_level_ones_and_connector_overrides_refine_both() {
        let mut keys = SASL_SSL.to_vec();
        keys.push(("producer.sasl.mechanism", "PLAIN"));
        keys.push(("producer.acks", "1"));
        keys.push(("consumer.security.protocol", "SSL"));
        let c = worker(&keys).unwrap();
        let p = c
            .kafka_client(ClientScope::Worker(ClientKind::Producer))
            .unwrap();
        assert_eq!(p.get("sasl.mechanism"), Some("PLAIN"));
        assert_eq!(p.get("sasl.username"), Some("connect"));
        assert_eq!(p.get("acks"), Some("1"));
        let consumer = c
            .kafka_client(ClientScope::Worker(ClientKind::Consumer))
            .unwrap();
        assert_eq!(consumer.get("security.protocol"), Some("SSL"));
        assert_eq!(consumer.get("sasl.username"), None);
        // The internal-topic clients take the top-level keys only.
        let internal = c.kafka_client(ClientScope::Internal).unwrap();
        assert_eq!(internal.get("sasl.mechanism"), Some("SCRAM-SHA-512"));
        assert_eq!(internal.get("acks"), None);
        // Defaults under everything, a connector's overrides over everything.
        let overrides = crate::config::clients::connector_overrides(
            ClientKind::Producer,
            &[(
                "producer.override.sasl.jaas.config".to_owned(),
                JAAS.replace("connect", "other"),
            )]
            .into_iter()
            .collect(),
        )
        .unwrap();
        let mut defaults = ClientConfig::new();
        defaults.set("acks", "all").set("linger.ms", "7");
        let t = c
            .kafka_client_with(
                ClientScope::Worker(ClientKind::Producer),
                defaults,
                Some(&overrides),
            )
            .unwrap();
        assert_eq!(t.get("acks"), Some("1"));
        assert_eq!(t.get("linger.ms"), Some("7"));
        assert_eq!(t.get("sasl.username"), Some("other"));
    }

    #[test]
    fn a_top_level_security_key_no_client_applies_fails_start_up() {
        // The classic mistake: credentials without security.protocol would run plaintext.
        let err = worker(&[("sasl.jaas.config", JAAS), ("sasl.mechanism", "PLAIN")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("configuration sasl.jaas.config")
                && err.contains("configuration sasl.mechanism")
                && err.contains("security.protocol is PLAINTEXT"),
            "{err}"
        );
        assert!(!err.contains("pw"), "{err}");
        let err = worker(&[
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.jaas.config", JAAS),
            ("ssl.truststore.certificates", "x"),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("ssl.truststore.certificates"), "{err}");
        // Used by one client only: fine.
        worker(&[
            ("producer.security.protocol", "SASL_SSL"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.jaas.config", JAAS),
        ])
        .unwrap();
        // A prefixed key its client's protocol does not use.
        let err = worker(&[("consumer.sasl.jaas.config", JAAS)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("consumer.sasl.jaas.config"), "{err}");
        // A bad store fails start-up naming the key.
        let err = worker(&[
            ("security.protocol", "SSL"),
            ("ssl.truststore.location", "/no/such/truststore.p12"),
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("ssl.truststore.location"), "{err}");
    }

    #[test]
    fn https_listeners_read_the_top_level_ssl_keys_and_server_keys_stay_out_of_kafka_clients() {
        let keys = [
            ("listeners", "https://:8443"),
            ("ssl.truststore.certificates", "pem"),
            ("ssl.client.auth", "required"),
        ];
        let c = worker(&keys).unwrap();
        assert_eq!(c.kafka_security, KafkaSecurity::default());
        let client = c.kafka_client(ClientScope::Internal).unwrap();
        assert_eq!(client.get("ssl.client.auth"), None);
        assert_eq!(client.get("ssl.ca.pem"), None);
        assert_eq!(client.get("security.protocol"), Some("PLAINTEXT"));
        // With listeners.https.* the REST listeners do not read the top-level keys.
        let mut keys = keys.to_vec();
        keys.push(("listeners.https.ssl.client.auth", "none"));
        let err = worker(&keys).unwrap_err().to_string();
        assert!(err.contains("ssl.truststore.certificates"), "{err}");
    }
}
