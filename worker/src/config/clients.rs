//! Kafka client settings written as Apache Kafka's Java client properties.
//!
//! Connect users configure clients with Java keys everywhere a client config is given: the
//! worker's `producer.*`, `consumer.*` and `admin.*`, and a connector's `producer.override.*`,
//! `consumer.override.*` and `admin.override.*`. Every one of those places builds its client
//! through [`ClientSettings::translate`], which decides per key, from the one table below:
//!
//! ```text
//!  Java key ──> security key? ──> read with the others into KafkaSecurity (config::security)
//!      │                          when the client is built, then written as librdkafka keys
//!      └──────> in TABLE? ── Rename ───────> librdkafka key (value converted if needed)
//!                   │        Runtime ──────> a runtime setting (max.poll.records -> sink batch)
//!                   │        Ignored ──────> accepted, one warning (JVM-only: serializers...)
//!                   │        Unsupported ──> validation error on that key
//!                   └ no ─────────────────> librdkafka key as is
//!  every librdkafka key/value is then checked by librdkafka itself (conf_set): unknown to both
//!  or a value librdkafka refuses is a validation error naming the key, never a task that fails
//!  after it was accepted.
//! ```

use std::collections::{BTreeMap, HashSet};
use std::num::NonZeroUsize;
use std::sync::{Mutex, OnceLock};

use rdkafka::ClientConfig;
use rdkafka::error::KafkaError;

use super::security::{self, Resolved, Written};

/// The Java client a set of keys configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    Producer,
    Consumer,
    Admin,
}

/// A librdkafka producer's queue bounded as Java's producer bounds its buffer: `buffer.memory`
/// (32 MiB) unless configured (`producer.buffer.memory` becomes `queue.buffering.max.kbytes`).
/// librdkafka's own default is 1 GiB and 100,000 records: a source that outran the broker held
/// hundreds of MiB of records in the queue (the CDC benchmark's worker, ~360 MiB). Not for the
/// native transactional producer, which the key would turn away (it bounds a transaction itself).
pub fn java_buffer_memory(mut config: ClientConfig) -> ClientConfig {
    if config.get("queue.buffering.max.kbytes").is_none() {
        config.set("queue.buffering.max.kbytes", "32768");
    }
    config
}

/// How a value is converted on its way to librdkafka.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convert {
    Same,
    /// Bytes (Java) to kilobytes, rounded up (librdkafka's `queue.buffering.max.kbytes`).
    BytesToKbytes,
    /// Java's `-1` ("the OS default") is librdkafka's `0`.
    MinusOneToZero,
    /// `auto.offset.reset=none` is librdkafka's `error`; Java's other values only are accepted.
    OffsetReset,
    /// Java assignor class names to librdkafka's strategy names.
    AssignmentStrategy,
}

/// What the runtime reads itself instead of passing to librdkafka.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuntimeKey {
    /// The sink runner's largest batch per `put` (Java consumers' poll size).
    MaxPollRecords,
}

/// What one Java key becomes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// A librdkafka key (possibly of the same name) with a value conversion.
    Rename(&'static str, Convert),
    Runtime(RuntimeKey),
    /// Means nothing outside a JVM: accepted with one warning.
    Ignored,
    /// Known to Java, no equivalent here, and ignoring it would change what the client does.
    Unsupported(&'static str),
}

const NO_JAVA_CLASSES: &str = "Java classes cannot be loaded by this worker";

/// Java client keys that are not passed to librdkafka unchanged (keys absent here are). Shown
/// in the README's "Client properties" table; keep the two in step.
const TABLE: &[(&str, Rule)] = &[
    (
        "max.poll.records",
        Rule::Runtime(RuntimeKey::MaxPollRecords),
    ),
    (
        "max.request.size",
        Rule::Rename("message.max.bytes", Convert::Same),
    ),
    (
        "buffer.memory",
        Rule::Rename("queue.buffering.max.kbytes", Convert::BytesToKbytes),
    ),
    (
        "fetch.max.wait.ms",
        Rule::Rename("fetch.wait.max.ms", Convert::Same),
    ),
    (
        "receive.buffer.bytes",
        Rule::Rename("socket.receive.buffer.bytes", Convert::MinusOneToZero),
    ),
    (
        "send.buffer.bytes",
        Rule::Rename("socket.send.buffer.bytes", Convert::MinusOneToZero),
    ),
    (
        "auto.offset.reset",
        Rule::Rename("auto.offset.reset", Convert::OffsetReset),
    ),
    (
        "partition.assignment.strategy",
        Rule::Rename("partition.assignment.strategy", Convert::AssignmentStrategy),
    ),
    // Connect hands converters' bytes to its clients: (de)serializers are never used.
    ("key.serializer", Rule::Ignored),
    ("value.serializer", Rule::Ignored),
    ("key.deserializer", Rule::Ignored),
    ("value.deserializer", Rule::Ignored),
    ("interceptor.classes", Rule::Ignored),
    ("metric.reporters", Rule::Ignored),
    ("metrics.num.samples", Rule::Ignored),
    ("metrics.recording.level", Rule::Ignored),
    ("metrics.sample.window.ms", Rule::Ignored),
    ("auto.include.jmx.reporter", Rule::Ignored),
    ("enable.metrics.push", Rule::Ignored),
    ("partitioner.class", Rule::Ignored),
    ("partitioner.ignore.keys", Rule::Ignored),
    ("partitioner.adaptive.partitioning.enable", Rule::Ignored),
    ("partitioner.availability.timeout.ms", Rule::Ignored),
    ("max.block.ms", Rule::Ignored),
    ("default.api.timeout.ms", Rule::Ignored),
    ("exclude.internal.topics", Rule::Ignored),
    ("metadata.max.idle.ms", Rule::Ignored),
    ("metadata.recovery.strategy", Rule::Ignored),
    ("metadata.recovery.rebootstrap.trigger.ms", Rule::Ignored),
    ("socket.connection.setup.timeout.max.ms", Rule::Ignored),
    ("internal.leave.group.on.close", Rule::Ignored),
    ("security.providers", Rule::Ignored),
    ("ssl.protocol", Rule::Ignored),
    ("ssl.enabled.protocols", Rule::Ignored),
    ("ssl.keymanager.algorithm", Rule::Ignored),
    ("ssl.trustmanager.algorithm", Rule::Ignored),
    ("ssl.secure.random.implementation", Rule::Ignored),
    (
        "ssl.engine.factory.class",
        Rule::Unsupported(NO_JAVA_CLASSES),
    ),
    ("sasl.login.class", Rule::Unsupported(NO_JAVA_CLASSES)),
    (
        "sasl.login.callback.handler.class",
        Rule::Unsupported(NO_JAVA_CLASSES),
    ),
    (
        "sasl.client.callback.handler.class",
        Rule::Unsupported(NO_JAVA_CLASSES),
    ),
];

fn rule(key: &str) -> Option<Rule> {
    TABLE.iter().find(|(k, _)| *k == key).map(|(_, r)| *r)
}

/// Largest `max.poll.records` accepted (the sink runner holds one batch in memory).
pub const MAX_POLL_RECORDS_LIMIT: usize = 100_000;

/// One key a client config cannot use (defined beside the security keys' checks, which make
/// most of them).
pub use super::security::ClientKeyError;

/// A client config after translation: what goes to librdkafka and what the runtime reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSettings {
    pub librdkafka: BTreeMap<String, String>,
    /// `max.poll.records` (consumers only).
    pub max_poll_records: Option<NonZeroUsize>,
    /// `security.protocol`, `sasl.*` and `ssl.*` keys (see [`security::is_resolved`]), as
    /// written: resolved together when a client is built, since they depend on each other.
    pub security: BTreeMap<String, Written>,
}

impl ClientSettings {
    /// Translates `pairs` (keys without `prefix`, which only names keys in errors and
    /// warnings). Every key that cannot be used is reported; ignored keys are logged once per
    /// process.
    pub fn translate<'a>(
        kind: ClientKind,
        prefix: &str,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, Vec<ClientKeyError>> {
        let mut out = Self::default();
        let mut errors = Vec::new();
        for (key, value) in pairs {
            let error = |reason: String| ClientKeyError {
                key: format!("{prefix}{key}"),
                value: if is_secret(key) {
                    "[hidden]".to_owned()
                } else {
                    value.to_owned()
                },
                reason,
            };
            if security::is_resolved(key) {
                out.security.insert(
                    key.to_owned(),
                    Written {
                        key: format!("{prefix}{key}"),
                        value: value.to_owned(),
                    },
                );
                continue;
            }
            match rule(key) {
                None => match check_librdkafka(key, value) {
                    Ok(()) => {
                        out.librdkafka.insert(key.to_owned(), value.to_owned());
                    }
                    Err(reason) => errors.push(error(reason)),
                },
                Some(Rule::Rename(target, convert)) => match converted(target, convert, value) {
                    Ok(pairs) => {
                        for (k, v) in pairs {
                            match check_librdkafka(&k, &v) {
                                Ok(()) => {
                                    out.librdkafka.insert(k, v);
                                }
                                Err(reason) => errors.push(error(format!("{reason} (as {k})"))),
                            }
                        }
                    }
                    Err(reason) => errors.push(error(reason)),
                },
                Some(Rule::Runtime(RuntimeKey::MaxPollRecords)) if kind == ClientKind::Consumer => {
                    match value
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|n| *n <= MAX_POLL_RECORDS_LIMIT)
                        .and_then(NonZeroUsize::new)
                    {
                        Some(n) => out.max_poll_records = Some(n),
                        None => errors.push(error(format!(
                            "Value must be an integer between 1 and {MAX_POLL_RECORDS_LIMIT}"
                        ))),
                    }
                }
                Some(Rule::Runtime(_) | Rule::Ignored) => warn_once(prefix, key),
                Some(Rule::Unsupported(reason)) => errors.push(error(reason.to_owned())),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// Sets the librdkafka keys on `c` (after the caller's defaults, before its forced keys),
    /// the security keys resolved (files read) now.
    pub fn apply(&self, c: &mut ClientConfig) -> Result<(), Vec<ClientKeyError>> {
        let resolved = self.resolve()?;
        for (k, v) in &self.librdkafka {
            c.set(k, v);
        }
        for (k, v) in security::librdkafka_keys(&resolved.security) {
            c.set(k, v);
        }
        Ok(())
    }

    /// The security these settings give a client. A prefixed key its protocol does not use
    /// (`producer.sasl.jaas.config` with `producer.security.protocol=SSL`) is an error; unused
    /// top-level keys are returned, since another client may use them (checked once for the
    /// worker).
    pub fn resolve(&self) -> Result<Resolved, Vec<ClientKeyError>> {
        let resolved = security::resolve(&self.security)?;
        let protocol_key = self
            .security
            .get(security::SECURITY_PROTOCOL)
            .map_or(security::SECURITY_PROTOCOL, |w| w.key.as_str());
        let errors: Vec<ClientKeyError> = resolved
            .unused
            .iter()
            .filter(|w| !security::is_resolved(&w.key))
            .map(|w| security::unused_error(w, protocol_key, resolved.security.protocol))
            .collect();
        if errors.is_empty() {
            Ok(resolved)
        } else {
            Err(errors)
        }
    }

    /// `other`'s keys over these (a connector's overrides over the worker's settings).
    pub fn merged(&self, other: &ClientSettings) -> ClientSettings {
        let mut librdkafka = self.librdkafka.clone();
        librdkafka.extend(other.librdkafka.clone());
        let mut security = self.security.clone();
        security.extend(other.security.clone());
        ClientSettings {
            librdkafka,
            max_poll_records: other.max_poll_records.or(self.max_poll_records),
            security,
        }
    }
}

/// The translation above, for connectors that open their own clients
/// ([`connect_api::kafka_clients`]; installed by `main`).
pub struct ConnectorClientTranslator;

impl connect_api::kafka_clients::ClientTranslator for ConnectorClientTranslator {
    fn librdkafka(
        &self,
        kind: connect_api::kafka_clients::ClientKind,
        prefix: &str,
        pairs: &BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, Vec<connect_api::kafka_clients::ClientKeyError>> {
        use connect_api::kafka_clients::{ClientKeyError as ApiError, ClientKind as ApiKind};
        let api_errors = |errors: Vec<ClientKeyError>| {
            errors
                .into_iter()
                .map(|e| ApiError {
                    key: e.key,
                    reason: e.reason,
                })
                .collect::<Vec<_>>()
        };
        let kind = match kind {
            ApiKind::Producer => ClientKind::Producer,
            ApiKind::Consumer => ClientKind::Consumer,
            ApiKind::Admin => ClientKind::Admin,
        };
        let settings = ClientSettings::translate(
            kind,
            prefix,
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .map_err(api_errors)?;
        let mut c = ClientConfig::new();
        settings.apply(&mut c).map_err(api_errors)?;
        // `config_map` hides secrets ("[sanitized for safety]"): read each value with `get`.
        Ok(c.config_map()
            .into_keys()
            .filter_map(|k| Some((k.to_owned(), c.get(k)?.to_owned())))
            .collect())
    }
}

/// Key prefixes of a connector's client overrides.
pub const PRODUCER_OVERRIDE_PREFIX: &str = "producer.override.";
pub const CONSUMER_OVERRIDE_PREFIX: &str = "consumer.override.";
pub const ADMIN_OVERRIDE_PREFIX: &str = "admin.override.";

impl ClientKind {
    /// The prefix of this client's overrides in a connector config.
    pub fn override_prefix(self) -> &'static str {
        match self {
            ClientKind::Producer => PRODUCER_OVERRIDE_PREFIX,
            ClientKind::Consumer => CONSUMER_OVERRIDE_PREFIX,
            ClientKind::Admin => ADMIN_OVERRIDE_PREFIX,
        }
    }
}

/// A connector's `<client>.override.*` keys, translated (Connect's default override policy
/// `All` lets a connector override any client key).
pub fn connector_overrides(
    kind: ClientKind,
    connector_config: &BTreeMap<String, String>,
) -> Result<ClientSettings, Vec<ClientKeyError>> {
    let prefix = kind.override_prefix();
    let refused: Vec<ClientKeyError> = connector_config
        .iter()
        .filter_map(|(k, v)| {
            let key = k.strip_prefix(prefix)?;
            let reason = REFUSED_OVERRIDES
                .iter()
                .find(|(refused, _)| *refused == key)?
                .1;
            Some(ClientKeyError {
                key: k.clone(),
                value: v.clone(),
                reason: format!(
                    "connectors may not set {key}, whatever the override policy: {reason}"
                ),
            })
        })
        .collect();
    if !refused.is_empty() {
        return Err(refused);
    }
    ClientSettings::translate(
        kind,
        prefix,
        connector_config
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k, v.as_str()))),
    )
}

/// Client keys a connector may never override (under every
/// `connector.client.config.override.policy`): they would run code or commands on the worker's
/// machine, as the worker's user.
const REFUSED_OVERRIDES: &[(&str, &str)] = &[
    (
        "plugin.library.paths",
        "librdkafka would load a shared library into the worker",
    ),
    (
        "ssl.engine.location",
        "librdkafka would load an OpenSSL engine library into the worker",
    ),
    (
        "sasl.kerberos.kinit.cmd",
        "librdkafka would run it as a shell command on the worker",
    ),
    (
        "interceptor.classes",
        "interceptors run code inside the worker's clients",
    ),
];

/// Asks librdkafka whether it knows `key` and accepts `value` (no client is created).
fn check_librdkafka(key: &str, value: &str) -> Result<(), String> {
    match ClientConfig::new().set(key, value).create_native_config() {
        Ok(_) => Ok(()),
        Err(KafkaError::ClientConfig(_, description, _, _)) => Err(description),
        Err(e) => Err(e.to_string()),
    }
}

fn converted(target: &str, convert: Convert, value: &str) -> Result<Vec<(String, String)>, String> {
    let one = |v: String| Ok(vec![(target.to_owned(), v)]);
    let v = value.trim();
    match convert {
        Convert::Same => one(value.to_owned()),
        Convert::BytesToKbytes => {
            let bytes: u64 = v
                .parse()
                .map_err(|_| "Expected a number of bytes".to_owned())?;
            one(bytes.div_ceil(1024).max(1).to_string())
        }
        Convert::MinusOneToZero => one(if v == "-1" { "0".into() } else { v.into() }),
        Convert::OffsetReset => match v.to_ascii_lowercase().as_str() {
            "none" => one("error".into()),
            r @ ("earliest" | "latest") => one(r.into()),
            r if r.starts_with("by_duration:") => {
                Err("by_duration has no librdkafka equivalent; use earliest, latest or none".into())
            }
            _ => Err("String must be one of: latest, earliest, none".into()),
        },
        Convert::AssignmentStrategy => {
            let names = v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|class| match class.rsplit('.').next().unwrap_or(class) {
                    "RangeAssignor" => Ok("range"),
                    "RoundRobinAssignor" => Ok("roundrobin"),
                    "CooperativeStickyAssignor" => Ok("cooperative-sticky"),
                    // Already librdkafka's names.
                    n @ ("range" | "roundrobin" | "cooperative-sticky") => Ok(n),
                    _ => Err(format!(
                        "{class} has no librdkafka equivalent; use RangeAssignor, RoundRobinAssignor or CooperativeStickyAssignor"
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            one(names.join(","))
        }
    }
}

fn is_secret(key: &str) -> bool {
    security::is_secret(key)
}

fn warn_once(prefix: &str, key: &str) {
    static WARNED: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let full = format!("{prefix}{key}");
    let first = WARNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(full.clone());
    if first {
        tracing::warn!(key = %full, "Java client property has no meaning in this worker and is ignored");
    }
}

#[cfg(test)]
#[path = "clients_tests.rs"]
mod tests;
