//! Worker configuration: the keys of Apache Kafka Connect's `connect-distributed.properties`.
//!
//! An existing Connect worker file must start this worker unchanged. Keys we know but do not
//! act on (JVM plugin paths, REST extensions, metrics reporters) are logged once and ignored;
//! keys nobody knows are logged once too; a value we cannot use fails start-up naming the key.

#[cfg(test)]
mod apache_config_defs_tests;
pub mod auto_restart;
pub mod clients;
pub mod converters;
pub mod kafka;
pub mod override_policy;
pub mod properties;
pub mod providers;
pub mod rest_auth;
pub mod rest_limits;
pub mod rest_tls;
pub mod security;
pub mod standalone;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use clients::{ClientKeyError, ClientSettings};
pub use kafka::ClientScope;

pub const BOOTSTRAP_SERVERS: &str = "bootstrap.servers";
pub const GROUP_ID: &str = "group.id";
pub const CONFIG_STORAGE_TOPIC: &str = "config.storage.topic";
pub const OFFSET_STORAGE_TOPIC: &str = "offset.storage.topic";
pub const STATUS_STORAGE_TOPIC: &str = "status.storage.topic";
pub const CONFIG_STORAGE_REPLICATION_FACTOR: &str = "config.storage.replication.factor";
pub const OFFSET_STORAGE_REPLICATION_FACTOR: &str = "offset.storage.replication.factor";
pub const OFFSET_STORAGE_PARTITIONS: &str = "offset.storage.partitions";
pub const STATUS_STORAGE_REPLICATION_FACTOR: &str = "status.storage.replication.factor";
pub const STATUS_STORAGE_PARTITIONS: &str = "status.storage.partitions";
pub const KEY_CONVERTER: &str = "key.converter";
pub const VALUE_CONVERTER: &str = "value.converter";
pub const HEADER_CONVERTER: &str = "header.converter";
pub const LISTENERS: &str = "listeners";
pub const REST_ADVERTISED_HOST_NAME: &str = "rest.advertised.host.name";
pub const REST_ADVERTISED_PORT: &str = "rest.advertised.port";
pub const REST_ADVERTISED_LISTENER: &str = "rest.advertised.listener";
pub const ADMIN_LISTENERS: &str = "admin.listeners";
pub const ACCESS_CONTROL_ALLOW_ORIGIN: &str = "access.control.allow.origin";
pub const ACCESS_CONTROL_ALLOW_METHODS: &str = "access.control.allow.methods";
pub const RESPONSE_HTTP_HEADERS_CONFIG: &str = "response.http.headers.config";
/// Our key (Connect has none): the largest REST request body, in bytes.
pub const REST_REQUEST_MAX_BYTES: &str = "rest.request.max.bytes";
/// KIP-158: whether source connectors' `topic.creation.*` settings create their topics.
pub const TOPIC_CREATION_ENABLE: &str = "topic.creation.enable";
pub const TOPIC_TRACKING_ENABLE: &str = "topic.tracking.enable";
pub const TOPIC_TRACKING_ALLOW_RESET: &str = "topic.tracking.allow.reset";
pub const OFFSET_FLUSH_INTERVAL_MS: &str = "offset.flush.interval.ms";
pub const OFFSET_FLUSH_TIMEOUT_MS: &str = "offset.flush.timeout.ms";
pub const TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS: &str = "task.shutdown.graceful.timeout.ms";
/// Our key: how long the config writer's transaction may stay open before a worker aborts it
/// (`-1`: never; see [`crate::stuck_transactions`]).
pub const STUCK_TRANSACTION_TIMEOUT_MS: &str = "stuck.transaction.timeout.ms";
pub const CONNECT_PROTOCOL: &str = "connect.protocol";
pub const SESSION_TIMEOUT_MS: &str = "session.timeout.ms";
pub const HEARTBEAT_INTERVAL_MS: &str = "heartbeat.interval.ms";
pub const REBALANCE_TIMEOUT_MS: &str = "rebalance.timeout.ms";
pub const SCHEDULED_REBALANCE_MAX_DELAY_MS: &str = "scheduled.rebalance.max.delay.ms";
pub const WORKER_SYNC_TIMEOUT_MS: &str = "worker.sync.timeout.ms";
pub const WORKER_UNSYNC_BACKOFF_MS: &str = "worker.unsync.backoff.ms";
pub const EXACTLY_ONCE_SOURCE_SUPPORT: &str = "exactly.once.source.support";
pub const INTER_WORKER_KEY_GENERATION_ALGORITHM: &str = "inter.worker.key.generation.algorithm";
pub const INTER_WORKER_KEY_SIZE: &str = "inter.worker.key.size";
pub const INTER_WORKER_KEY_TTL_MS: &str = "inter.worker.key.ttl.ms";
pub const INTER_WORKER_SIGNATURE_ALGORITHM: &str = "inter.worker.signature.algorithm";
pub const INTER_WORKER_VERIFICATION_ALGORITHMS: &str = "inter.worker.verification.algorithms";
pub const REQUEST_TIMEOUT_MS: &str = "request.timeout.ms";
pub const CLIENT_ID: &str = "client.id";
/// Apache 4.x: whether the worker creates its internal topics. This worker always creates the
/// missing ones, so only `true` (the default) is accepted.
pub const INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE: &str =
    "internal.topics.automatic.creation.enable";
/// Apache's REST extensions; only [`rest_auth::BASIC_AUTH_EXTENSION_CLASS`] is implemented.
pub const REST_EXTENSION_CLASSES: &str = "rest.extension.classes";
/// Ours: the JAAS file of REST basic authentication (the `KafkaConnect` entry with
/// `PropertyFileLoginModule`), for deployments that do not set it in `KAFKA_OPTS`. Setting it
/// turns basic authentication on.
pub const REST_BASIC_AUTH_JAAS_FILE: &str = "rest.basic.auth.jaas.file";
/// Ours: the directories the FileStream connectors may read and write, comma-separated;
/// unset, they are refused (see [`connect_api::FileAccess`]).
pub const FILE_CONNECTOR_ALLOWED_DIRS: &str = connect_api::file_access::ALLOWED_DIRS_CONFIG;

/// Apache's `plugin.path`: directories and jars of Java plugins, run by `crate::plugins::java`.
pub const PLUGIN_PATH: &str = "plugin.path";
/// Apache's `plugin.discovery` (accepted; see docs/java-plugins.md for what discovery does).
pub const PLUGIN_DISCOVERY: &str = "plugin.discovery";
/// Why a Java metrics key means nothing here.
const NO_JAVA_METRICS: &str =
    "Java metrics reporters do not exist in this worker; its metrics are served at GET /metrics";
/// Why a top-level Java client key means nothing here (Apache applies them to its
/// internal-topic clients).
const TOP_LEVEL_CLIENT_KEY: &str = "a Java client setting of Apache's internal-topic clients; this worker's Kafka clients keep their own defaults";

/// Keys of Connect's worker config that this worker accepts but does not act on, and why.
const IGNORED_KEYS: &[(&str, &str)] = &[
    ("client.dns.lookup", TOP_LEVEL_CLIENT_KEY),
    ("metric.reporters", NO_JAVA_METRICS),
    ("metrics.num.samples", NO_JAVA_METRICS),
    ("metrics.recording.level", NO_JAVA_METRICS),
    ("metrics.sample.window.ms", NO_JAVA_METRICS),
    ("auto.include.jmx.reporter", NO_JAVA_METRICS),
    ("metadata.max.age.ms", TOP_LEVEL_CLIENT_KEY),
    ("metadata.recovery.strategy", TOP_LEVEL_CLIENT_KEY),
    ("connections.max.idle.ms", TOP_LEVEL_CLIENT_KEY),
    ("retry.backoff.ms", TOP_LEVEL_CLIENT_KEY),
    ("retry.backoff.max.ms", TOP_LEVEL_CLIENT_KEY),
    ("reconnect.backoff.ms", TOP_LEVEL_CLIENT_KEY),
    ("reconnect.backoff.max.ms", TOP_LEVEL_CLIENT_KEY),
    ("send.buffer.bytes", TOP_LEVEL_CLIENT_KEY),
    ("receive.buffer.bytes", TOP_LEVEL_CLIENT_KEY),
    ("socket.connection.setup.timeout.ms", TOP_LEVEL_CLIENT_KEY),
    (
        "socket.connection.setup.timeout.max.ms",
        TOP_LEVEL_CLIENT_KEY,
    ),
    (
        "metadata.recovery.rebootstrap.trigger.ms",
        TOP_LEVEL_CLIENT_KEY,
    ),
    ("metadata.cluster.check.enable", TOP_LEVEL_CLIENT_KEY),
    (
        "bootstrap.resolve.timeout.ms",
        "Apache's Connect ignores it too (always synchronous bootstrap resolution)",
    ),
    (
        "status.storage.partitions.enable",
        "not used by this worker",
    ),
    (
        OFFSET_FLUSH_TIMEOUT_MS,
        "offset commits here wait for the outstanding records' acknowledgements without this bound",
    ),
];

/// What the worker does with one key of its config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUse {
    /// A key the worker reads (or passes to a sub-configuration: `producer.*`, `ssl.*`...).
    Applied,
    /// One of Connect's keys, accepted without effect, and why.
    Ignored(&'static str),
    /// Not a Connect worker key: accepted and ignored.
    Unknown,
}

/// The one place that decides [`KeyUse`]: start-up logs the ignored and unknown keys with it,
/// `connect-worker check` lists them.
pub fn key_use(key: &str) -> KeyUse {
    if let Some((_, reason)) = IGNORED_KEYS.iter().find(|(k, _)| *k == key) {
        KeyUse::Ignored(reason)
    } else if KNOWN_KEYS.contains(&key) || PASS_THROUGH_PREFIXES.iter().any(|p| key.starts_with(p))
    {
        KeyUse::Applied
    } else {
        KeyUse::Unknown
    }
}

/// Key prefixes passed to (or reserved for) sub-configurations.
const PASS_THROUGH_PREFIXES: &[&str] = &[
    "producer.",
    "consumer.",
    "admin.",
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "listeners.https.",
    "admin.listeners.https.",
    "ssl.",
    "sasl.",
    "security.",
    "config.providers.",
    "metrics.",
];

/// Why a worker config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read worker config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("Missing required configuration \"{0}\" which has no default value.")]
    Missing(&'static str),
    #[error("Invalid value {value} for configuration {key}: {reason}")]
    Invalid {
        key: &'static str,
        value: String,
        reason: String,
    },
    /// Apache's own message, which names the key (e.g. a `ValidList` error).
    #[error("{message}")]
    Rejected { key: &'static str, message: String },
    /// A worker converter setting its converter refuses (see [`converters`]); the message
    /// names the key.
    #[error("{message}")]
    Converter { key: String, message: String },
    /// `producer.*`, `consumer.*` or `admin.*` keys no client here can use.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Client(Vec<ClientKeyError>),
    /// `config.providers` is misconfigured, or a placeholder in the worker config has no value.
    #[error(transparent)]
    Provider(#[from] providers::ProviderError),
}

/// `exactly.once.source.support` (KIP-618).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactlyOnceSourceSupport {
    Disabled,
    Preparing,
    Enabled,
}

/// `connect.protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectProtocol {
    Eager,
    Compatible,
    Sessioned,
}

/// One entry of `listeners`, e.g. `http://:8083`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub scheme: String,
    /// Empty means the default interface.
    pub host: String,
    pub port: u16,
}

impl Listener {
    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }
}

impl std::fmt::Display for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "{}://[{}]:{}", self.scheme, self.host, self.port)
        } else {
            write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
        }
    }
}

/// What a `response.http.headers.config` rule does (Jetty's `HeaderFilter` actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderAction {
    /// Replace any value of the header.
    Set,
    /// Add a value, keeping the ones already there.
    Add,
    /// `Set` with an HTTP date: now plus the value in milliseconds.
    SetDate,
    /// `Add` with an HTTP date: now plus the value in milliseconds.
    AddDate,
}

/// One rule of `response.http.headers.config`: `[action] [header name]:[header value]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderRule {
    pub action: HeaderAction,
    pub name: String,
    /// For the date actions, a number of milliseconds (checked at parse time).
    pub value: String,
}

/// The worker config after parsing: typed values, with the raw map kept for pass-through keys.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub bootstrap_servers: String,
    pub group_id: String,
    pub config_storage_topic: String,
    pub offset_storage_topic: String,
    pub status_storage_topic: String,
    pub config_storage_replication_factor: i16,
    pub offset_storage_replication_factor: i16,
    pub offset_storage_partitions: i32,
    pub status_storage_replication_factor: i16,
    pub status_storage_partitions: i32,
    pub key_converter: String,
    pub value_converter: String,
    pub header_converter: String,
    pub listeners: Vec<Listener>,
    /// `admin.listeners`: `None` when unset (admin endpoints on `listeners`), empty when set
    /// to an empty value (admin endpoints disabled), else the only listeners serving them.
    pub admin_listeners: Option<Vec<Listener>>,
    pub rest_advertised_host_name: Option<String>,
    pub rest_advertised_port: Option<u16>,
    pub rest_advertised_listener: Option<String>,
    pub access_control_allow_origin: String,
    pub access_control_allow_methods: String,
    /// `response.http.headers.config`, applied to every REST response.
    pub response_http_headers: Vec<HeaderRule>,
    pub offset_flush_interval: Duration,
    /// `topic.creation.enable` (default true): source tasks create the topics their
    /// connector's `topic.creation.*` groups describe before the first record to each.
    pub topic_creation_enable: bool,
    /// `connector.client.config.override.policy` (default `All`, as Apache 4.4): which
    /// `<client>.override.*` keys connectors may set.
    pub client_override_policy: override_policy::OverridePolicy,
    /// The users REST requests must authenticate as (`rest.extension.classes` with Apache's
    /// basic-auth extension, or [`REST_BASIC_AUTH_JAAS_FILE`]); `None`: no authentication.
    pub rest_basic_auth: Option<rest_auth::Credentials>,
    /// `config.providers`: resolves `${provider:[path:]key}` in connector configs where they
    /// run (the worker config's own placeholders are resolved in [`WorkerConfig::raw`]).
    pub config_providers: providers::ConfigProviders,
    pub connect_protocol: ConnectProtocol,
    pub session_timeout: Duration,
    pub heartbeat_interval: Duration,
    pub rebalance_timeout: Duration,
    pub scheduled_rebalance_max_delay: Duration,
    pub worker_sync_timeout: Duration,
    pub worker_unsync_backoff: Duration,
    /// `task.shutdown.graceful.timeout.ms`: how long stopping tasks may take, together, before
    /// the ones still running are abandoned.
    pub task_shutdown_graceful_timeout: Duration,
    /// `auto.restart.*`: restarts of failed connectors and tasks (connector configs may
    /// override them).
    pub auto_restart: auto_restart::AutoRestartPolicy,
    /// `stuck.transaction.timeout.ms`; `None` (-1) leaves stuck transactions to the broker.
    pub stuck_transaction_timeout: Option<Duration>,
    pub exactly_once_source_support: ExactlyOnceSourceSupport,
    pub inter_worker_key_ttl: Duration,
    pub request_timeout: Duration,
    pub client_id: String,
    /// The top-level `security.protocol`, `sasl.*` and `ssl.*` keys (the internal-topic
    /// stores' client settings; under every other scope's).
    pub internal_client: ClientSettings,
    /// `producer.*` over the top-level security keys, translated from Java client keys (see
    /// [`clients`]).
    pub producer_client: ClientSettings,
    /// `consumer.*` over the top-level security keys, translated.
    pub consumer_client: ClientSettings,
    /// `admin.*` (without the REST keys `admin.listeners*`) over the top-level security keys.
    pub admin_client: ClientSettings,
    /// The top-level security keys resolved: the group-membership client's security.
    pub kafka_security: crate::security::KafkaSecurity,
    /// Every key as written in the file, with config-provider placeholders resolved.
    pub raw: BTreeMap<String, String>,
    /// [`FILE_CONNECTOR_ALLOWED_DIRS`], canonicalised.
    pub file_access: connect_api::FileAccess,
    /// Header-read and request timeouts, connection cap of the REST listeners.
    pub rest_limits: rest_limits::RestLimits,
    /// A standalone worker ([`standalone::StandaloneConfig`]): source offsets live in its
    /// offsets file only, never in a connector's `offsets.storage.topic` (as in Apache, whose
    /// standalone worker does not permit per-connector offsets topics).
    pub standalone: bool,
}

impl WorkerConfig {
    /// Reads a `.properties` file.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_props(properties::parse(&text))
    }

    /// Parses and checks every key we use; logs the ones we ignore, once each.
    pub fn from_props(raw: BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let config = Self::parse(raw)?;
        config.log_unused_keys(key_use);
        Ok(config)
    }

    /// [`from_props`](Self::from_props) without the log lines about unused keys.
    pub(crate) fn parse(raw: BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let config_providers = providers::ConfigProviders::from_worker_config(&raw)?;
        // As Apache: the worker config's placeholders are resolved at start-up; the providers'
        // own keys are not. Resolved values are secrets: errors show them as `[hidden]`.
        let hidden: std::collections::BTreeSet<String> = raw
            .iter()
            .filter(|(_, v)| config_providers.has_placeholder(v))
            .map(|(k, _)| k.clone())
            .collect();
        let raw = raw
            .into_iter()
            .map(|(k, v)| {
                if k.starts_with(providers::CONFIG_PROVIDERS) {
                    Ok((k, v))
                } else {
                    let v = config_providers.resolve(&k, &v)?;
                    Ok((k, v))
                }
            })
            .collect::<Result<BTreeMap<_, _>, ConfigError>>()?;
        let p = Props {
            raw: &raw,
            hidden: &hidden,
        };
        let listeners = p
            .string(LISTENERS, "http://:8083")
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| parse_listener(s).map_err(|reason| p.invalid(LISTENERS, reason)))
            .collect::<Result<Vec<_>, _>>()?;
        if listeners.is_empty() {
            return Err(p.invalid(LISTENERS, "at least one listener is required".into()));
        }
        let admin_listeners = match raw.get(ADMIN_LISTENERS) {
            None => None,
            Some(v) => Some(
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| parse_listener(s).map_err(|reason| p.invalid(ADMIN_LISTENERS, reason)))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let rest_advertised_listener = match p.optional(REST_ADVERTISED_LISTENER) {
            None => None,
            Some(v) => match v.to_ascii_lowercase().as_str() {
                s @ ("http" | "https") => Some(s.to_owned()),
                _ => {
                    return Err(p.invalid(
                        REST_ADVERTISED_LISTENER,
                        "String must be one of (case insensitive): http, https".into(),
                    ));
                }
            },
        };
        let response_http_headers = parse_header_rules(&p.string(RESPONSE_HTTP_HEADERS_CONFIG, ""))
            .map_err(|reason| p.invalid(RESPONSE_HTTP_HEADERS_CONFIG, reason))?;
        let clients = kafka::worker_clients(&raw, &listeners, admin_listeners.as_deref())?;
        let rest_basic_auth = rest_auth::from_worker_config(
            p.optional(REST_EXTENSION_CLASSES).as_deref(),
            p.optional(REST_BASIC_AUTH_JAAS_FILE).as_deref(),
            std::env::var("KAFKA_OPTS").ok().as_deref(),
        )
        .map_err(|(key, value, reason)| ConfigError::Invalid { key, value, reason })?;
        if !p.boolean(INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE, true)? {
            return Err(p.invalid(
                INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE,
                "this worker always creates its missing internal topics; only true is supported"
                    .into(),
            ));
        }
        let config =
            WorkerConfig {
                bootstrap_servers: p.string(BOOTSTRAP_SERVERS, "localhost:9092"),
                group_id: p.required(GROUP_ID)?,
                config_storage_topic: p.required(CONFIG_STORAGE_TOPIC)?,
                offset_storage_topic: p.required(OFFSET_STORAGE_TOPIC)?,
                status_storage_topic: p.required(STATUS_STORAGE_TOPIC)?,
                config_storage_replication_factor: p
                    .replication_factor(CONFIG_STORAGE_REPLICATION_FACTOR)?,
                offset_storage_replication_factor: p
                    .replication_factor(OFFSET_STORAGE_REPLICATION_FACTOR)?,
                offset_storage_partitions: p.partitions(OFFSET_STORAGE_PARTITIONS, 25)?,
                status_storage_replication_factor: p
                    .replication_factor(STATUS_STORAGE_REPLICATION_FACTOR)?,
                status_storage_partitions: p.partitions(STATUS_STORAGE_PARTITIONS, 5)?,
                key_converter: p.required(KEY_CONVERTER)?,
                value_converter: p.required(VALUE_CONVERTER)?,
                header_converter: p.string(
                    HEADER_CONVERTER,
                    "org.apache.kafka.connect.storage.SimpleHeaderConverter",
                ),
                listeners,
                admin_listeners,
                rest_advertised_host_name: p.optional(REST_ADVERTISED_HOST_NAME),
                rest_advertised_port: match p.optional(REST_ADVERTISED_PORT) {
                    None => None,
                    Some(v) => Some(v.trim().parse().map_err(|_| {
                        p.invalid(REST_ADVERTISED_PORT, "Not a valid port number".into())
                    })?),
                },
                rest_advertised_listener,
                access_control_allow_origin: p.string(ACCESS_CONTROL_ALLOW_ORIGIN, ""),
                access_control_allow_methods: p.string(ACCESS_CONTROL_ALLOW_METHODS, ""),
                response_http_headers,
                offset_flush_interval: p.millis(OFFSET_FLUSH_INTERVAL_MS, 60_000)?,
                topic_creation_enable: p.boolean(TOPIC_CREATION_ENABLE, true)?,
                client_override_policy: override_policy::OverridePolicy::from_worker_config(&raw)
                    .map_err(|e| {
                    if e.reason.contains(e.key) {
                        ConfigError::Rejected {
                            key: e.key,
                            message: e.reason,
                        }
                    } else {
                        p.invalid(e.key, e.reason)
                    }
                })?,
                rest_basic_auth,
                config_providers,
                connect_protocol: match p
                    .string(CONNECT_PROTOCOL, "sessioned")
                    .to_ascii_lowercase()
                    .as_str()
                {
                    "eager" => ConnectProtocol::Eager,
                    "compatible" => ConnectProtocol::Compatible,
                    "sessioned" => ConnectProtocol::Sessioned,
                    _ => return Err(p.invalid(
                        CONNECT_PROTOCOL,
                        "String must be one of (case insensitive): eager, compatible, sessioned"
                            .into(),
                    )),
                },
                session_timeout: p.millis(SESSION_TIMEOUT_MS, 10_000)?,
                heartbeat_interval: p.millis(HEARTBEAT_INTERVAL_MS, 3_000)?,
                rebalance_timeout: p.millis(REBALANCE_TIMEOUT_MS, 60_000)?,
                scheduled_rebalance_max_delay: p
                    .millis(SCHEDULED_REBALANCE_MAX_DELAY_MS, 300_000)?,
                worker_sync_timeout: p.millis(WORKER_SYNC_TIMEOUT_MS, 3_000)?,
                worker_unsync_backoff: p.millis(WORKER_UNSYNC_BACKOFF_MS, 300_000)?,
                task_shutdown_graceful_timeout: p
                    .millis(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS, 5_000)?,
                stuck_transaction_timeout: match p.long(STUCK_TRANSACTION_TIMEOUT_MS, 5_000)? {
                    -1 => None,
                    ms if ms > 0 => Some(Duration::from_millis(ms as u64)),
                    _ => {
                        return Err(p.invalid(
                            STUCK_TRANSACTION_TIMEOUT_MS,
                            "Value must be positive, or -1 to disable".into(),
                        ));
                    }
                },
                auto_restart: auto_restart::AutoRestartPolicy::default()
                    .with_overrides(p.raw)
                    .map_err(|(key, reason)| p.invalid(key, reason))?,
                exactly_once_source_support: match p
                    .string(EXACTLY_ONCE_SOURCE_SUPPORT, "disabled")
                    .to_ascii_lowercase()
                    .as_str()
                {
                    "disabled" => ExactlyOnceSourceSupport::Disabled,
                    "preparing" => ExactlyOnceSourceSupport::Preparing,
                    "enabled" => ExactlyOnceSourceSupport::Enabled,
                    _ => return Err(p.invalid(
                        EXACTLY_ONCE_SOURCE_SUPPORT,
                        "String must be one of (case insensitive): disabled, preparing, enabled"
                            .into(),
                    )),
                },
                inter_worker_key_ttl: p.millis(INTER_WORKER_KEY_TTL_MS, 3_600_000)?,
                request_timeout: p.millis(REQUEST_TIMEOUT_MS, 40_000)?,
                client_id: p.string(CLIENT_ID, ""),
                internal_client: clients.internal,
                producer_client: clients.producer,
                consumer_client: clients.consumer,
                admin_client: clients.admin,
                kafka_security: clients.security,
                raw: raw.clone(),
                file_access: connect_api::FileAccess::from_setting(
                    &p.string(FILE_CONNECTOR_ALLOWED_DIRS, ""),
                )
                .map_err(|reason| p.invalid(FILE_CONNECTOR_ALLOWED_DIRS, reason))?,
                rest_limits: rest_limits::parse(&raw)?,
                standalone: false,
            };
        if config.heartbeat_interval >= config.session_timeout {
            return Err(p.invalid(
                HEARTBEAT_INTERVAL_MS,
                format!("must be lower than {SESSION_TIMEOUT_MS}"),
            ));
        }
        let converter_classes = [
            (KEY_CONVERTER, config.key_converter.as_str()),
            (VALUE_CONVERTER, config.value_converter.as_str()),
            (HEADER_CONVERTER, config.header_converter.as_str()),
        ];
        if let Some((key, message)) =
            converters::plugin_version_errors(converter_classes, &config.raw)
                .into_iter()
                .chain(converters::worker_converter_errors(
                    converter_classes,
                    &config.raw,
                ))
                .next()
        {
            return Err(ConfigError::Converter { key, message });
        }
        Ok(config)
    }

    /// Logs, once each, the keys `key_use` says are ignored or unknown.
    pub(crate) fn log_unused_keys(&self, key_use: fn(&str) -> KeyUse) {
        for key in self.raw.keys() {
            match key_use(key) {
                KeyUse::Applied => {}
                KeyUse::Ignored(reason) => {
                    tracing::info!(key = %key, reason, "worker config key is accepted but has no effect in this worker");
                }
                KeyUse::Unknown => {
                    tracing::warn!(key = %key, "unknown worker config key is ignored");
                }
            }
        }
    }

    /// The worker-wide `admin.` client overrides for librdkafka, translated from Java keys,
    /// without `admin.listeners` and its `admin.listeners.https.*` settings (REST keys that
    /// share the prefix).
    pub fn admin_client_overrides(&self) -> BTreeMap<String, String> {
        self.admin_client.librdkafka.clone()
    }

    /// The keys under `prefix`, with the prefix removed (e.g. `producer.` overrides).
    pub fn with_prefix(&self, prefix: &str) -> BTreeMap<String, String> {
        self.raw
            .iter()
            .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_owned(), v.clone())))
            .collect()
    }
}

const KNOWN_KEYS: &[&str] = &[
    PLUGIN_PATH,
    PLUGIN_DISCOVERY,
    STUCK_TRANSACTION_TIMEOUT_MS,
    auto_restart::AUTO_RESTART_ENABLE,
    auto_restart::AUTO_RESTART_BACKOFF_INITIAL_MS,
    auto_restart::AUTO_RESTART_BACKOFF_MAX_MS,
    auto_restart::AUTO_RESTART_MAX_ATTEMPTS,
    auto_restart::AUTO_RESTART_RESET_AFTER_MS,
    REST_EXTENSION_CLASSES,
    REST_BASIC_AUTH_JAAS_FILE,
    override_policy::CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
    override_policy::ALLOWLIST_CONFIG,
    providers::CONFIG_PROVIDERS,
    BOOTSTRAP_SERVERS,
    GROUP_ID,
    CONFIG_STORAGE_TOPIC,
    OFFSET_STORAGE_TOPIC,
    STATUS_STORAGE_TOPIC,
    CONFIG_STORAGE_REPLICATION_FACTOR,
    OFFSET_STORAGE_REPLICATION_FACTOR,
    OFFSET_STORAGE_PARTITIONS,
    STATUS_STORAGE_REPLICATION_FACTOR,
    STATUS_STORAGE_PARTITIONS,
    KEY_CONVERTER,
    VALUE_CONVERTER,
    HEADER_CONVERTER,
    LISTENERS,
    REST_ADVERTISED_HOST_NAME,
    REST_ADVERTISED_PORT,
    REST_ADVERTISED_LISTENER,
    ADMIN_LISTENERS,
    ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_ALLOW_METHODS,
    RESPONSE_HTTP_HEADERS_CONFIG,
    REST_REQUEST_MAX_BYTES,
    TOPIC_CREATION_ENABLE,
    TOPIC_TRACKING_ENABLE,
    TOPIC_TRACKING_ALLOW_RESET,
    OFFSET_FLUSH_INTERVAL_MS,
    CONNECT_PROTOCOL,
    SESSION_TIMEOUT_MS,
    HEARTBEAT_INTERVAL_MS,
    REBALANCE_TIMEOUT_MS,
    SCHEDULED_REBALANCE_MAX_DELAY_MS,
    WORKER_SYNC_TIMEOUT_MS,
    WORKER_UNSYNC_BACKOFF_MS,
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS,
    EXACTLY_ONCE_SOURCE_SUPPORT,
    INTER_WORKER_KEY_GENERATION_ALGORITHM,
    INTER_WORKER_KEY_SIZE,
    INTER_WORKER_KEY_TTL_MS,
    INTER_WORKER_SIGNATURE_ALGORITHM,
    INTER_WORKER_VERIFICATION_ALGORITHMS,
    REQUEST_TIMEOUT_MS,
    CLIENT_ID,
    FILE_CONNECTOR_ALLOWED_DIRS,
    INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE,
    rest_limits::REST_HEADER_READ_TIMEOUT_MS,
    rest_limits::REST_REQUEST_TIMEOUT_MS,
    rest_limits::REST_MAX_CONNECTIONS,
];

fn parse_listener(s: &str) -> Result<Listener, String> {
    let (scheme, rest) = s
        .split_once("://")
        .ok_or_else(|| format!("listener {s} must look like PROTOCOL://host:port"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "listener {s} has unsupported protocol {scheme}; use http or https"
        ));
    }
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| format!("listener {s} has no port"))?;
    let port = port
        .trim_end_matches('/')
        .parse()
        .map_err(|_| format!("listener {s} has an invalid port"))?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    Ok(Listener { scheme, host, port })
}

/// Splits on commas outside double quotes and drops the quotes (Jetty's `StringUtil.csvSplit`,
/// which Connect uses for `response.http.headers.config`).
fn csv_split(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `response.http.headers.config`: comma-separated `[action] [header name]:[header value]`
/// rules, a rule in double quotes when it holds a comma. Actions `set`, `add`, `setDate`,
/// `addDate` (case-insensitive); the date actions take a number of milliseconds from now.
pub fn parse_header_rules(s: &str) -> Result<Vec<HeaderRule>, String> {
    csv_split(s)
        .into_iter()
        .map(|rule| {
            let (action, header) = rule.split_once(char::is_whitespace).ok_or_else(|| {
                format!(
                    "Invalid format of header config '{rule}'. Expected: '[action] [header name]:[header value]'"
                )
            })?;
            let action = match action.to_ascii_lowercase().as_str() {
                "set" => HeaderAction::Set,
                "add" => HeaderAction::Add,
                "setdate" => HeaderAction::SetDate,
                "adddate" => HeaderAction::AddDate,
                _ => {
                    return Err(format!(
                        "Invalid header config action: '{action}'. Expected one of [set, add, setDate, addDate]"
                    ));
                }
            };
            let (name, value) = header.trim().split_once(':').ok_or_else(|| {
                format!(
                    "Invalid format of header name and header value pair '{}'. Expected: '[header name]:[header value]'",
                    header.trim()
                )
            })?;
            let name = name.trim();
            if name.is_empty()
                || name.contains(char::is_whitespace)
                || axum::http::HeaderName::from_bytes(name.as_bytes()).is_err()
            {
                return Err(format!(
                    "Invalid header name '{name}'. The '[header name]' cannot contain whitespace"
                ));
            }
            let value = value.trim().to_owned();
            match action {
                HeaderAction::SetDate | HeaderAction::AddDate => {
                    value.parse::<i64>().map_err(|_| {
                        format!("Invalid header value '{value}' for {name}: the date actions take a number of milliseconds")
                    })?;
                }
                HeaderAction::Set | HeaderAction::Add => {
                    axum::http::HeaderValue::from_str(&value)
                        .map_err(|_| format!("Invalid header value '{value}' for {name}"))?;
                }
            }
            Ok(HeaderRule {
                action,
                name: name.to_owned(),
                value,
            })
        })
        .collect()
}

/// Typed reads from the raw map; every error names the key.
struct Props<'a> {
    raw: &'a BTreeMap<String, String>,
    /// Keys whose values came from a config provider.
    hidden: &'a std::collections::BTreeSet<String>,
}

impl Props<'_> {
    fn optional(&self, key: &str) -> Option<String> {
        self.raw
            .get(key)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    fn string(&self, key: &str, default: &str) -> String {
        self.raw
            .get(key)
            .map(|v| v.trim().to_owned())
            .unwrap_or_else(|| default.to_owned())
    }

    fn required(&self, key: &'static str) -> Result<String, ConfigError> {
        self.optional(key).ok_or(ConfigError::Missing(key))
    }

    fn invalid(&self, key: &'static str, reason: String) -> ConfigError {
        ConfigError::Invalid {
            key,
            value: if self.hidden.contains(key) {
                "[hidden]".to_owned()
            } else {
                self.raw.get(key).cloned().unwrap_or_default()
            },
            reason,
        }
    }

    fn long(&self, key: &'static str, default: i64) -> Result<i64, ConfigError> {
        match self.raw.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| self.invalid(key, "Not a number of type LONG".into())),
        }
    }

    /// Java's boolean parsing: `true` or `false`, any case, surrounding blanks ignored.
    fn boolean(&self, key: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.raw.get(key).map(|v| v.trim().to_ascii_lowercase()) {
            None => Ok(default),
            Some(v) if v == "true" => Ok(true),
            Some(v) if v == "false" => Ok(false),
            Some(_) => Err(self.invalid(key, "Expected value to be either true or false".into())),
        }
    }

    fn millis(&self, key: &'static str, default: i64) -> Result<Duration, ConfigError> {
        let v = self.long(key, default)?;
        u64::try_from(v)
            .map(Duration::from_millis)
            .map_err(|_| self.invalid(key, "Value must be at least 0".into()))
    }

    /// Replication factors: positive, or -1 for the broker default (Connect's rule).
    fn replication_factor(&self, key: &'static str) -> Result<i16, ConfigError> {
        let v = self.long(key, 3)?;
        match i16::try_from(v) {
            Ok(rf) if rf == -1 || rf >= 1 => Ok(rf),
            _ => Err(self.invalid(
                key,
                "Must be a positive number, or -1 to use the broker's default".into(),
            )),
        }
    }

    fn partitions(&self, key: &'static str, default: i64) -> Result<i32, ConfigError> {
        let v = self.long(key, default)?;
        match i32::try_from(v) {
            Ok(n) if n == -1 || n >= 1 => Ok(n),
            _ => Err(self.invalid(
                key,
                "Must be a positive number, or -1 to use the broker's default".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> BTreeMap<String, String> {
        properties::parse(
            "bootstrap.servers=localhost:9092\ngroup.id=connect-cluster\n\
             key.converter=org.apache.kafka.connect.json.JsonConverter\n\
             value.converter=org.apache.kafka.connect.json.JsonConverter\n\
             key.converter.schemas.enable=true\nvalue.converter.schemas.enable=true\n\
             offset.storage.topic=connect-offsets\noffset.storage.replication.factor=1\n\
             config.storage.topic=connect-configs\nconfig.storage.replication.factor=1\n\
             status.storage.topic=connect-status\nstatus.storage.replication.factor=1\n\
             offset.flush.interval.ms=10000\nplugin.path=/usr/share/java\n",
        )
    }

    #[test]
    fn shipped_example_starts_unchanged() {
        let c = WorkerConfig::from_props(base()).unwrap();
        assert_eq!(c.group_id, "connect-cluster");
        assert_eq!(c.offset_storage_partitions, 25);
        assert_eq!(c.status_storage_partitions, 5);
        assert_eq!(c.config_storage_replication_factor, 1);
        assert_eq!(c.offset_flush_interval, Duration::from_secs(10));
        assert_eq!(
            c.listeners,
            vec![Listener {
                scheme: "http".into(),
                host: String::new(),
                port: 8083
            }]
        );
        assert_eq!(c.connect_protocol, ConnectProtocol::Sessioned);
        assert_eq!(
            c.exactly_once_source_support,
            ExactlyOnceSourceSupport::Disabled
        );
        assert_eq!(c.with_prefix("value.converter.")["schemas.enable"], "true");
    }

    /// KIP-158's worker switch: on unless set to false; anything but a boolean is refused.
    #[test]
    fn topic_creation_enable_defaults_to_true() {
        assert!(
            WorkerConfig::from_props(base())
                .unwrap()
                .topic_creation_enable
        );
        let mut p = base();
        p.insert(TOPIC_CREATION_ENABLE.into(), " FALSE ".into());
        assert!(!WorkerConfig::from_props(p).unwrap().topic_creation_enable);
        let mut p = base();
        p.insert(TOPIC_CREATION_ENABLE.into(), "no".into());
        assert_eq!(
            WorkerConfig::from_props(p).unwrap_err().to_string(),
            "Invalid value no for configuration topic.creation.enable: Expected value to be either true or false"
        );
    }

    #[test]
    fn errors_name_the_key() {
        let mut p = base();
        p.remove(GROUP_ID);
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert_eq!(
            err,
            "Missing required configuration \"group.id\" which has no default value."
        );

        let mut p = base();
        p.insert(OFFSET_FLUSH_INTERVAL_MS.into(), "soon".into());
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert!(
            err.contains("offset.flush.interval.ms") && err.contains("soon"),
            "{err}"
        );

        let mut p = base();
        p.insert(EXACTLY_ONCE_SOURCE_SUPPORT.into(), "maybe".into());
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert!(err.contains("exactly.once.source.support"), "{err}");

        let mut p = base();
        p.insert(LISTENERS.into(), "ftp://:21".into());
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert!(err.contains("listeners") && err.contains("ftp"), "{err}");
    }

    /// One decision per key: read, accepted without effect (with why), or unknown.
    /// Start-up errors say what is wrong once: no message repeats Connect's
    /// `Invalid value ... for configuration ...` prefix (the override policy's once did).
    #[test]
    fn start_up_errors_do_not_repeat_themselves() {
        for (key, value) in [
            ("connector.client.config.override.policy", "Custom"),
            (
                "connector.client.config.override.policy",
                "org.apache.kafka.connect.connector.policy.All",
            ),
            ("connect.protocol", "v9"),
            ("exactly.once.source.support", "maybe"),
            ("offset.flush.interval.ms", "-5"),
            ("topic.creation.enable", "yes"),
            ("rest.advertised.listener", "ftp"),
            ("internal.topics.automatic.creation.enable", "false"),
            ("value.converter.schema.content", "{\"type\":\"nope\"}"),
            ("value.converter.decimal.format", "HEX"),
            ("key.converter.plugin.version", "[1.0,2.0)"),
            ("listeners.https.ssl.client.auth", "maybe"),
            ("stuck.transaction.timeout.ms", "0"),
        ] {
            let mut raw = base();
            raw.insert(key.to_owned(), value.to_owned());
            if key.starts_with("listeners.https.") {
                raw.insert(LISTENERS.to_owned(), "https://127.0.0.1:8443".to_owned());
            }
            let Err(e) = WorkerConfig::from_props(raw) else {
                // Checked later (TLS files at start-up): not this test's concern.
                continue;
            };
            let m = e.to_string();
            assert!(m.contains(key), "{key}={value}: names the key: {m}");
            assert!(
                m.matches("Invalid value").count() <= 1
                    && m.matches(&format!("for configuration {key}")).count() <= 1,
                "{key}={value}: repeats itself: {m}"
            );
        }
        let mut raw = base();
        raw.insert(
            override_policy::CONNECTOR_CLIENT_POLICY_CLASS_CONFIG.to_owned(),
            "Allowlist".to_owned(),
        );
        raw.insert(
            override_policy::ALLOWLIST_CONFIG.to_owned(),
            "a,,b".to_owned(),
        );
        assert_eq!(
            WorkerConfig::from_props(raw).unwrap_err().to_string(),
            "Configuration 'connector.client.config.override.allowlist' values must not be empty."
        );
    }

    #[test]
    fn key_use_classifies_every_kind_of_key() {
        assert_eq!(key_use(GROUP_ID), KeyUse::Applied);
        assert_eq!(key_use("producer.linger.ms"), KeyUse::Applied);
        assert_eq!(key_use("value.converter.schemas.enable"), KeyUse::Applied);
        assert_eq!(
            key_use(override_policy::CONNECTOR_CLIENT_POLICY_CLASS_CONFIG),
            KeyUse::Applied
        );
        assert_eq!(key_use("plugin.path"), KeyUse::Applied);
        assert_eq!(
            key_use("metric.reporters"),
            KeyUse::Ignored(NO_JAVA_METRICS)
        );
        assert_eq!(key_use("foo.bar"), KeyUse::Unknown);
        // A typo of a known key is unknown, not applied.
        assert_eq!(key_use("group.ids"), KeyUse::Unknown);
        // No key is both ignored and read.
        for (key, _) in IGNORED_KEYS {
            assert!(!KNOWN_KEYS.contains(key), "{key}");
        }
    }

    #[test]
    fn listeners_parse() {
        assert_eq!(
            parse_listener("HTTPS://0.0.0.0:8443").unwrap(),
            Listener {
                scheme: "https".into(),
                host: "0.0.0.0".into(),
                port: 8443
            }
        );
        assert_eq!(parse_listener("http://[::1]:8083").unwrap().host, "::1");
        assert!(parse_listener("localhost:8083").is_err());
    }

    #[test]
    fn admin_listeners_unset_empty_or_set() {
        let c = WorkerConfig::from_props(base()).unwrap();
        assert_eq!(c.admin_listeners, None);
        let mut p = base();
        p.insert(ADMIN_LISTENERS.into(), "".into());
        assert_eq!(
            WorkerConfig::from_props(p).unwrap().admin_listeners,
            Some(vec![])
        );
        let mut p = base();
        p.insert(
            ADMIN_LISTENERS.into(),
            "http://a.b:9999, https://a.b:7812".into(),
        );
        let admin = WorkerConfig::from_props(p)
            .unwrap()
            .admin_listeners
            .unwrap();
        assert_eq!(admin.len(), 2);
        assert!(admin[1].is_https());
        assert_eq!(admin[0].to_string(), "http://a.b:9999");
        let mut p = base();
        p.insert(ADMIN_LISTENERS.into(), "https://:9999".into());
        p.insert("admin.listeners.https.ssl.key.location".into(), "k".into());
        p.insert("admin.request.timeout.ms".into(), "5000".into());
        let overrides = WorkerConfig::from_props(p)
            .unwrap()
            .admin_client_overrides();
        assert_eq!(overrides.keys().collect::<Vec<_>>(), ["request.timeout.ms"]);
        let mut p = base();
        p.insert(REST_ADVERTISED_LISTENER.into(), "ftp".into());
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert!(err.contains(REST_ADVERTISED_LISTENER), "{err}");
    }

    #[test]
    fn header_rules_parse_like_connect() {
        let rules = parse_header_rules(
            r#"set X-Frame-Options: DENY, add Cache-Control: no-store,"add X-List: a, b",setDate Expires: 3600000, addDate Last-Modified:0"#,
        )
        .unwrap();
        assert_eq!(rules.len(), 5);
        assert_eq!(rules[0].action, HeaderAction::Set);
        assert_eq!(rules[0].name, "X-Frame-Options");
        assert_eq!(rules[0].value, "DENY");
        assert_eq!(rules[2].value, "a, b");
        assert_eq!(rules[3].action, HeaderAction::SetDate);
        assert_eq!(rules[4].action, HeaderAction::AddDate);
        assert!(parse_header_rules("").unwrap().is_empty());
        // A value may hold a colon (Connect's validator refuses it; Jetty would accept it).
        assert_eq!(
            parse_header_rules("set Link: <https://x>").unwrap()[0].value,
            "<https://x>"
        );
        for bad in [
            "X-Frame-Options: DENY",
            "put X-A: b",
            "set X-A b",
            "set X A: b",
            "setDate Expires: tomorrow",
        ] {
            assert!(parse_header_rules(bad).is_err(), "{bad}");
        }
        let mut p = base();
        p.insert(RESPONSE_HTTP_HEADERS_CONFIG.into(), "put X-A: b".into());
        let err = WorkerConfig::from_props(p).unwrap_err().to_string();
        assert!(err.contains(RESPONSE_HTTP_HEADERS_CONFIG), "{err}");
    }
}
