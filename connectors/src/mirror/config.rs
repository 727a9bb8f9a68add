//! Keys of the MirrorMaker 2 connectors (Apache 4.4's `MirrorConnectorConfig` and
//! `MirrorSourceConfig`), their typed form, and the Kafka client configs built from a
//! connector config as Apache builds them (`source.cluster.*` narrowed to the cluster keys,
//! then `consumer.*`/`producer.*`/`admin.*`, then `source.consumer.*`...).
//!
//! Apache keys this worker does not implement are accepted only with the value that means
//! "off" (or Apache's default class); any other value is a validation error naming the key.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_api::config::ParsedConfig;
use connect_api::config::validators::{at_least, one_of};
use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType, ConfigValue, Importance};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients::{self, ClientKind};
use regex::Regex;

use super::policy::{self, ReplicationPolicy};

pub const ENABLED: &str = "enabled";
pub const SOURCE_CLUSTER_ALIAS: &str = "source.cluster.alias";
pub const TARGET_CLUSTER_ALIAS: &str = "target.cluster.alias";
pub const ADMIN_TIMEOUT_MS: &str = "admin.timeout.ms";
pub const REPLICATION_POLICY_CLASS: &str = "replication.policy.class";
pub const REPLICATION_POLICY_SEPARATOR: &str = "replication.policy.separator";
pub const INTERNAL_TOPIC_SEPARATOR_ENABLED: &str =
    "replication.policy.internal.topic.separator.enabled";
pub const FORWARDING_ADMIN_CLASS: &str = "forwarding.admin.class";
pub const METRIC_REPORTERS: &str = "metric.reporters";

pub const TOPICS: &str = "topics";
pub const TOPICS_EXCLUDE: &str = "topics.exclude";
pub const CONFIG_PROPERTIES_EXCLUDE: &str = "config.properties.exclude";
pub const TOPIC_FILTER_CLASS: &str = "topic.filter.class";
pub const CONFIG_PROPERTY_FILTER_CLASS: &str = "config.property.filter.class";
pub const CONSUMER_POLL_TIMEOUT_MS: &str = "consumer.poll.timeout.ms";
pub const REFRESH_TOPICS_ENABLED: &str = "refresh.topics.enabled";
pub const REFRESH_TOPICS_INTERVAL_SECONDS: &str = "refresh.topics.interval.seconds";
pub const SYNC_TOPIC_CONFIGS_ENABLED: &str = "sync.topic.configs.enabled";
pub const SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS: &str = "sync.topic.configs.interval.seconds";
pub const SYNC_TOPIC_ACLS_ENABLED: &str = "sync.topic.acls.enabled";
pub const SYNC_TOPIC_ACLS_INTERVAL_SECONDS: &str = "sync.topic.acls.interval.seconds";
pub const REPLICATION_FACTOR: &str = "replication.factor";
pub const OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR: &str = "offset-syncs.topic.replication.factor";
pub const OFFSET_SYNCS_TOPIC_LOCATION: &str = "offset-syncs.topic.location";
pub const OFFSET_LAG_MAX: &str = "offset.lag.max";
pub const EMIT_OFFSET_SYNCS_ENABLED: &str = "emit.offset-syncs.enabled";
pub const HEARTBEATS_REPLICATION_ENABLED: &str = "heartbeats.replication.enabled";
/// Set per task by `task_configs`: `topic-partition` names, comma-separated.
pub const TASK_TOPIC_PARTITIONS: &str = "task.assigned.partitions";
pub const TASK_INDEX: &str = "task.index";

pub const TOPICS_EXCLUDE_DEFAULT: &str = ".*[\\-\\.]internal, .*\\.replica, __.*";
pub const CONFIG_PROPERTIES_EXCLUDE_DEFAULT: &str = "follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas";

const DEFAULT_TOPIC_FILTER: &str = "org.apache.kafka.connect.mirror.DefaultTopicFilter";
const DEFAULT_CONFIG_PROPERTY_FILTER: &str =
    "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter";
const DEFAULT_FORWARDING_ADMIN: &str = "org.apache.kafka.clients.admin.ForwardingAdmin";
const JMX_REPORTER: &str = "org.apache.kafka.common.metrics.JmxReporter";

pub const SOURCE_CLUSTER_PREFIX: &str = "source.cluster.";
pub const TARGET_CLUSTER_PREFIX: &str = "target.cluster.";

const GROUP: &str = "MirrorMaker";

fn key(name: &str, t: ConfigType, importance: Importance, doc: &str, order: i32) -> ConfigKey {
    ConfigKey::new(name, t, importance, doc).group(GROUP, order)
}

/// Keys of every MirrorMaker connector (Apache's `BASE_CONNECTOR_CONFIG_DEF`).
pub fn base_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    ConfigDef::new()
        .define(key(ENABLED, Boolean, Low, "Whether to replicate source->target.", 1).default_value(true))
        .define(key(SOURCE_CLUSTER_ALIAS, String, High, "Alias of source cluster", 2))
        .define(
            key(TARGET_CLUSTER_ALIAS, String, High, "Alias of target cluster. Used in metrics reporting.", 3)
                .default_value("target"),
        )
        .define(
            key(ADMIN_TIMEOUT_MS, Long, Low, "Timeout for administrative tasks, e.g. detecting new topics.", 4)
                .default_value(60_000i64)
                .validator(at_least(1)),
        )
        .define(
            key(REPLICATION_POLICY_CLASS, Class, Low, "Class which defines the remote topic naming convention.", 5)
                .default_value(policy::DEFAULT_POLICY_CLASS),
        )
        .define(
            key(REPLICATION_POLICY_SEPARATOR, String, Low, "Separator used in remote topic naming convention.", 6)
                .default_value("."),
        )
        .define(
            key(
                INTERNAL_TOPIC_SEPARATOR_ENABLED,
                Boolean,
                Low,
                "Whether to use replication.policy.separator to control the names of topics used for checkpoints and offset syncs.",
                7,
            )
            .default_value(true),
        )
        .define(
            key(FORWARDING_ADMIN_CLASS, Class, Low, "Class which extends ForwardingAdmin; only Apache's default here.", 8)
                .default_value(DEFAULT_FORWARDING_ADMIN),
        )
        .define(
            key(METRIC_REPORTERS, List, Low, "Metrics reporters; only Apache's default (JmxReporter, which reports nothing here) or none.", 9)
                .default_value(JMX_REPORTER),
        )
}

/// `MirrorSourceConnector`'s keys (Apache's `MirrorSourceConfig.CONNECTOR_CONFIG_DEF`).
pub fn source_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    base_config_def()
        .define(key(TOPICS, List, High, "Topics to replicate. Supports comma-separated topic names and regexes.", 20).default_value(".*"))
        .define(
            key(TOPICS_EXCLUDE, List, High, "Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes.", 21)
                .default_value(TOPICS_EXCLUDE_DEFAULT),
        )
        .define(
            key(CONFIG_PROPERTIES_EXCLUDE, List, High, "Topic config properties that should not be replicated. Supports comma-separated property names and regexes.", 22)
                .default_value(CONFIG_PROPERTIES_EXCLUDE_DEFAULT),
        )
        .define(key(TOPIC_FILTER_CLASS, Class, Low, "TopicFilter to use; only Apache's default here.", 23).default_value(DEFAULT_TOPIC_FILTER))
        .define(
            key(CONFIG_PROPERTY_FILTER_CLASS, Class, Low, "ConfigPropertyFilter to use; only Apache's default here.", 24)
                .default_value(DEFAULT_CONFIG_PROPERTY_FILTER),
        )
        .define(key(CONSUMER_POLL_TIMEOUT_MS, Long, Low, "Timeout when polling source cluster.", 25).default_value(1000i64).validator(at_least(0)))
        .define(key(REFRESH_TOPICS_ENABLED, Boolean, Low, "Whether to periodically check for new topics and partitions.", 26).default_value(true))
        .define(key(REFRESH_TOPICS_INTERVAL_SECONDS, Long, Low, "Frequency of topic refresh.", 27).default_value(600i64).validator(at_least(1)))
        .define(key(SYNC_TOPIC_CONFIGS_ENABLED, Boolean, Low, "Whether to create remote topics with the source topics' configs.", 28).default_value(true))
        .define(
            key(SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS, Long, Low, "Frequency of topic config sync (this worker: configs are copied when a remote topic is created).", 29)
                .default_value(600i64),
        )
        .define(
            key(SYNC_TOPIC_ACLS_ENABLED, Boolean, Low, "Whether to periodically configure remote topic ACLs to match their corresponding upstream topics (not supported by this worker: false only).", 30)
                .default_value(false),
        )
        .define(key(SYNC_TOPIC_ACLS_INTERVAL_SECONDS, Long, Low, "Frequency of topic ACL sync.", 31).default_value(600i64))
        .define(key(REPLICATION_FACTOR, Int, Low, "Replication factor for newly created remote topics.", 32).default_value(2).validator(at_least(-1)))
        .define(
            key(OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR, Short, Low, "Replication factor for offset-syncs topic.", 33)
                .default_value(3i16),
        )
        .define(key(OFFSET_LAG_MAX, Long, Low, "How out-of-sync a remote partition can be before it is resynced.", 34).default_value(100i64))
        .define(
            key(OFFSET_SYNCS_TOPIC_LOCATION, String, Low, "The location (source/target) of the offset-syncs topic.", 35)
                .default_value("source")
                .validator(one_of(&["source", "target"])),
        )
        .define(
            key(EMIT_OFFSET_SYNCS_ENABLED, Boolean, Low, "Whether to store the new offset of the replicated records in offset-syncs topic or not.", 36)
                .default_value(true),
        )
        .define(
            key(HEARTBEATS_REPLICATION_ENABLED, Boolean, Low, "Whether to replicate the heartbeats topics even when the topic filter does not include them.", 37)
                .default_value(true),
        )
}

pub const GROUPS: &str = "groups";
pub const GROUPS_EXCLUDE: &str = "groups.exclude";
pub const GROUP_FILTER_CLASS: &str = "group.filter.class";
pub const REFRESH_GROUPS_ENABLED: &str = "refresh.groups.enabled";
pub const REFRESH_GROUPS_INTERVAL_SECONDS: &str = "refresh.groups.interval.seconds";
pub const EMIT_CHECKPOINTS_ENABLED: &str = "emit.checkpoints.enabled";
pub const EMIT_CHECKPOINTS_INTERVAL_SECONDS: &str = "emit.checkpoints.interval.seconds";
pub const SYNC_GROUP_OFFSETS_ENABLED: &str = "sync.group.offsets.enabled";
pub const SYNC_GROUP_OFFSETS_INTERVAL_SECONDS: &str = "sync.group.offsets.interval.seconds";
pub const CHECKPOINTS_TOPIC_REPLICATION_FACTOR: &str = "checkpoints.topic.replication.factor";
/// Set per task by the checkpoint connector: consumer groups, comma-separated.
pub const TASK_CONSUMER_GROUPS: &str = "task.assigned.groups";
pub const GROUPS_EXCLUDE_DEFAULT: &str = "console-consumer-.*, connect-.*, __.*";
const DEFAULT_GROUP_FILTER: &str = "org.apache.kafka.connect.mirror.DefaultGroupFilter";

pub const EMIT_HEARTBEATS_ENABLED: &str = "emit.heartbeats.enabled";
pub const EMIT_HEARTBEATS_INTERVAL_SECONDS: &str = "emit.heartbeats.interval.seconds";
pub const HEARTBEATS_TOPIC_REPLICATION_FACTOR: &str = "heartbeats.topic.replication.factor";

/// `MirrorCheckpointConnector`'s keys (Apache's `MirrorCheckpointConfig`; `topics` and
/// `topics.exclude` are read by its default topic filter, defined here so they validate).
pub fn checkpoint_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    base_config_def()
        .define(key(CONSUMER_POLL_TIMEOUT_MS, Long, Low, "Timeout when polling source cluster.", 20).default_value(1000i64).validator(at_least(0)))
        .define(key(GROUPS, List, High, "Consumer groups to replicate. Supports comma-separated group IDs and regexes.", 21).default_value(".*"))
        .define(
            key(GROUPS_EXCLUDE, List, High, "Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over includes.", 22)
                .default_value(GROUPS_EXCLUDE_DEFAULT),
        )
        .define(key(GROUP_FILTER_CLASS, Class, Low, "GroupFilter to use; only Apache's default here.", 23).default_value(DEFAULT_GROUP_FILTER))
        .define(key(REFRESH_GROUPS_ENABLED, Boolean, Low, "Whether to periodically check for new consumer groups.", 24).default_value(true))
        .define(key(REFRESH_GROUPS_INTERVAL_SECONDS, Long, Low, "Frequency of group refresh.", 25).default_value(600i64).validator(at_least(1)))
        .define(key(EMIT_CHECKPOINTS_ENABLED, Boolean, Low, "Whether to replicate consumer offsets to target cluster.", 26).default_value(true))
        .define(key(EMIT_CHECKPOINTS_INTERVAL_SECONDS, Long, Low, "Frequency of checkpoints.", 27).default_value(60i64).validator(at_least(0)))
        .define(key(SYNC_GROUP_OFFSETS_ENABLED, Boolean, Low, "Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, as long as no active consumers in that group are connected to the target cluster", 28).default_value(false))
        .define(key(SYNC_GROUP_OFFSETS_INTERVAL_SECONDS, Long, Low, "Frequency of consumer group offset sync.", 29).default_value(60i64).validator(at_least(1)))
        .define(key(CHECKPOINTS_TOPIC_REPLICATION_FACTOR, Short, Low, "Replication factor for checkpoints topic.", 30).default_value(3i16))
        .define(
            key(OFFSET_SYNCS_TOPIC_LOCATION, String, Low, "The location (source/target) of the offset-syncs topic.", 31)
                .default_value("source")
                .validator(one_of(&["source", "target"])),
        )
        .define(key(TOPIC_FILTER_CLASS, Class, Low, "TopicFilter to use; only Apache's default here.", 32).default_value(DEFAULT_TOPIC_FILTER))
        .define(key(TOPICS, List, High, "Topics to replicate. Supports comma-separated topic names and regexes.", 33).default_value(".*"))
        .define(
            key(TOPICS_EXCLUDE, List, High, "Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes.", 34)
                .default_value(TOPICS_EXCLUDE_DEFAULT),
        )
}

/// `MirrorHeartbeatConnector`'s keys (Apache's `MirrorHeartbeatConfig`).
pub fn heartbeat_config_def() -> ConfigDef {
    use ConfigType::*;
    use Importance::*;
    base_config_def()
        .define(
            key(
                EMIT_HEARTBEATS_ENABLED,
                Boolean,
                Low,
                "Whether to emit heartbeats to target cluster.",
                20,
            )
            .default_value(true),
        )
        .define(
            key(
                EMIT_HEARTBEATS_INTERVAL_SECONDS,
                Long,
                Low,
                "Frequency of heartbeats.",
                21,
            )
            .default_value(1i64)
            .validator(at_least(0)),
        )
        .define(
            key(
                HEARTBEATS_TOPIC_REPLICATION_FACTOR,
                Short,
                Low,
                "Replication factor for heartbeats topic.",
                22,
            )
            .default_value(3i16),
        )
}

/// Which of the three connectors a config is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorConnector {
    Source,
    Checkpoint,
    Heartbeat,
}

impl MirrorConnector {
    pub fn config_def(self) -> ConfigDef {
        match self {
            MirrorConnector::Source => source_config_def(),
            MirrorConnector::Checkpoint => checkpoint_config_def(),
            MirrorConnector::Heartbeat => heartbeat_config_def(),
        }
    }

    /// The clients this connector and its tasks open.
    fn clients(self) -> &'static [(Cluster, ClientKind)] {
        match self {
            MirrorConnector::Source => &[
                (Cluster::Source, ClientKind::Consumer),
                (Cluster::Source, ClientKind::Admin),
                (Cluster::Target, ClientKind::Admin),
                (Cluster::Source, ClientKind::Producer),
            ],
            MirrorConnector::Checkpoint => &[
                (Cluster::Source, ClientKind::Consumer),
                (Cluster::Source, ClientKind::Admin),
                (Cluster::Target, ClientKind::Admin),
                (Cluster::Target, ClientKind::Consumer),
            ],
            MirrorConnector::Heartbeat => &[(Cluster::Target, ClientKind::Admin)],
        }
    }
}

/// Apache's `compilePatternList`: the list joined with `|`, matched against the whole name.
pub fn pattern_list(items: &[String]) -> std::result::Result<Regex, regex::Error> {
    let joined = items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&format!("^(?:{joined})$"))
}

/// Keys of Apache's `MirrorClientConfig.CLIENT_CONFIG_DEF`: what `source.cluster.*` and
/// `target.cluster.*` may set (Apache drops the rest; here the rest are errors).
fn is_cluster_key(key: &str) -> bool {
    key == "bootstrap.servers"
        || key == "security.protocol"
        || key == "client.dns.lookup"
        || key.starts_with("ssl.")
        || key.starts_with("sasl.")
}

fn is_own_key(key: &str) -> bool {
    matches!(key, ADMIN_TIMEOUT_MS | CONSUMER_POLL_TIMEOUT_MS)
}

/// Which cluster a client talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cluster {
    Source,
    Target,
}

impl Cluster {
    fn cluster_prefix(self) -> &'static str {
        match self {
            Cluster::Source => SOURCE_CLUSTER_PREFIX,
            Cluster::Target => TARGET_CLUSTER_PREFIX,
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            Cluster::Source => "source.",
            Cluster::Target => "target.",
        }
    }
}

fn kind_prefix(kind: ClientKind) -> &'static str {
    match kind {
        ClientKind::Producer => "producer.",
        ClientKind::Consumer => "consumer.",
        ClientKind::Admin => "admin.",
    }
}

/// The Java client keys of one client, as Apache's `sourceConsumerConfig`/`targetAdminConfig`...
/// merge them, each with the key the user wrote (for errors). The framework's own
/// `<client>.override.*` keys are not MirrorMaker's and are left out.
pub fn client_keys(
    props: &ConfigMap,
    cluster: Cluster,
    kind: ClientKind,
) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let layers = [
        cluster.cluster_prefix().to_owned(),
        kind_prefix(kind).to_owned(),
        format!("{}{}", cluster.prefix(), kind_prefix(kind)),
    ];
    for (i, prefix) in layers.iter().enumerate() {
        for (k, v) in props.range(prefix.clone()..) {
            let Some(rest) = k.strip_prefix(prefix.as_str()) else {
                break;
            };
            // MirrorMaker's own keys under a client prefix (`admin.timeout.ms`,
            // `consumer.poll.timeout.ms`) are not client keys (Apache hands them to the Java
            // client, which ignores them).
            if rest.is_empty()
                || (i == 0 && rest == "alias")
                || (i == 1 && (rest.starts_with("override.") || is_own_key(k)))
            {
                continue;
            }
            out.insert(rest.to_owned(), (k.clone(), v.clone()));
        }
    }
    out
}

/// Errors of `source.cluster.*`/`target.cluster.*` keys Apache would drop silently.
fn cluster_key_errors(props: &ConfigMap) -> Vec<(String, String)> {
    props
        .keys()
        .filter_map(|k| {
            let rest = k
                .strip_prefix(SOURCE_CLUSTER_PREFIX)
                .or_else(|| k.strip_prefix(TARGET_CLUSTER_PREFIX))?;
            (rest != "alias" && !is_cluster_key(rest)).then(|| {
                (
                    k.clone(),
                    format!(
                        "{k} is not a cluster connection key (bootstrap.servers, security.protocol, ssl.*, sasl.*); Apache MirrorMaker ignores it, this worker refuses it: set it with the client's prefix (e.g. source.consumer.{rest})"
                    ),
                )
            })
        })
        .collect()
}

/// librdkafka settings for one client, with `client.id` as Apache's `addClientId`.
pub fn librdkafka_config(
    props: &ConfigMap,
    cluster: Cluster,
    kind: ClientKind,
    client_id: &str,
) -> std::result::Result<BTreeMap<String, String>, Vec<(String, String)>> {
    let keys = client_keys(props, cluster, kind);
    let pairs: BTreeMap<String, String> = keys
        .iter()
        .map(|(k, (_, v))| (k.clone(), v.clone()))
        .collect();
    let mut out = kafka_clients::librdkafka(kind, "", &pairs).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| {
                let key = keys.get(&e.key).map_or(e.key.clone(), |(w, _)| w.clone());
                (key, e.reason)
            })
            .collect::<Vec<_>>()
    })?;
    let id = match pairs.get("client.id") {
        Some(user) => format!("{user}|{client_id}"),
        None => client_id.to_owned(),
    };
    out.insert("client.id".to_owned(), id);
    Ok(out)
}

/// Whether the source consumer reads with `isolation.level=read_committed` (Apache's
/// `consumerUsesReadCommitted`; Java consumers default to `read_uncommitted`).
pub fn consumer_uses_read_committed(props: &ConfigMap) -> bool {
    client_keys(props, Cluster::Source, ClientKind::Consumer)
        .get("isolation.level")
        .is_some_and(|(_, v)| v.trim() == "read_committed")
}

/// The connector config, typed (`MirrorSourceConfig`).
#[derive(Debug, Clone)]
pub struct MirrorSourceConfig {
    pub enabled: bool,
    pub source_alias: String,
    pub target_alias: String,
    pub admin_timeout: Duration,
    pub policy: ReplicationPolicy,
    pub topics: Regex,
    pub topics_exclude: Regex,
    pub config_properties_exclude: Regex,
    pub poll_timeout: Duration,
    pub refresh_topics: Option<Duration>,
    pub sync_topic_configs: bool,
    pub replication_factor: i32,
    pub offset_syncs_replication_factor: i16,
    pub offset_lag_max: i64,
    pub offset_syncs_on_source: bool,
    pub emit_offset_syncs: bool,
    pub heartbeats_replication: bool,
    pub props: ConfigMap,
}

/// Checks beyond the `ConfigDef`: aliases, classes this worker has, regexes, client keys.
pub fn semantic_errors(props: &ConfigMap, connector: MirrorConnector) -> Vec<(String, String)> {
    let def = &connector.config_def();
    let mut errors = Vec::new();
    let get = |k: &str| props.get(k).map(|v| v.trim().to_owned());
    let source = get(SOURCE_CLUSTER_ALIAS);
    let target = get(TARGET_CLUSTER_ALIAS).unwrap_or_else(|| "target".to_owned());
    if let Some(source) = &source {
        if source.is_empty() {
            errors.push((
                SOURCE_CLUSTER_ALIAS.to_owned(),
                "The source cluster alias must not be empty".to_owned(),
            ));
        } else if *source == target {
            errors.push((
                TARGET_CLUSTER_ALIAS.to_owned(),
                format!(
                    "The source and target cluster aliases must differ (both are \"{source}\")"
                ),
            ));
        }
    }
    if let Some(class) = get(REPLICATION_POLICY_CLASS)
        && ReplicationPolicy::for_class(&class, ".", true, "").is_none()
    {
        errors.push((
            REPLICATION_POLICY_CLASS.to_owned(),
            format!(
                "Class {class} could not be found: this worker has {} and {}",
                policy::DEFAULT_POLICY_CLASS,
                policy::IDENTITY_POLICY_CLASS
            ),
        ));
    }
    let only = |key: &str, allowed: &[&str], errors: &mut Vec<(String, String)>| {
        if let Some(v) = get(key)
            && def.key(key).is_some()
            && !allowed.contains(&v.as_str())
        {
            errors.push((
                key.to_owned(),
                format!(
                    "this worker supports only {} here, not \"{v}\"",
                    allowed.join(" or ")
                ),
            ));
        }
    };
    only(
        FORWARDING_ADMIN_CLASS,
        &[DEFAULT_FORWARDING_ADMIN],
        &mut errors,
    );
    only(METRIC_REPORTERS, &[JMX_REPORTER, ""], &mut errors);
    only(TOPIC_FILTER_CLASS, &[DEFAULT_TOPIC_FILTER], &mut errors);
    only(
        CONFIG_PROPERTY_FILTER_CLASS,
        &[DEFAULT_CONFIG_PROPERTY_FILTER],
        &mut errors,
    );
    only(SYNC_TOPIC_ACLS_ENABLED, &["false"], &mut errors);
    for list in [TOPICS, TOPICS_EXCLUDE, CONFIG_PROPERTIES_EXCLUDE] {
        if let Some(v) = props.get(list) {
            let items: Vec<String> = v.split(',').map(str::to_owned).collect();
            if let Err(e) = pattern_list(&items) {
                errors.push((list.to_owned(), format!("Invalid regular expression: {e}")));
            }
        }
    }
    errors.extend(cluster_key_errors(props));
    for (cluster, kind) in connector.clients() {
        if let Err(e) = librdkafka_config(props, *cluster, *kind, "validate") {
            errors.extend(e);
        }
    }
    if connector == MirrorConnector::Checkpoint
        && props.get(ENABLED).map(|v| v.trim()) != Some("false")
    {
        if props.get(EMIT_CHECKPOINTS_ENABLED).map(|v| v.trim()) == Some("false") {
            errors.push((
                EMIT_CHECKPOINTS_ENABLED.to_owned(),
                format!("MirrorCheckpointConnector can't run with {EMIT_CHECKPOINTS_ENABLED} set to false"),
            ));
        }
        if props.get(EMIT_OFFSET_SYNCS_ENABLED).map(|v| v.trim()) == Some("false") {
            errors.push((
                EMIT_OFFSET_SYNCS_ENABLED.to_owned(),
                "MirrorCheckpointConnector can't run without offset syncs".to_owned(),
            ));
        }
    }
    if connector == MirrorConnector::Source {
        if props.get(EMIT_OFFSET_SYNCS_ENABLED).map(|v| v.trim()) == Some("false")
            && props
                .keys()
                .any(|k| k.starts_with("offset-syncs-") || k.starts_with("offset-syncs.topic."))
        {
            errors.push((
                EMIT_OFFSET_SYNCS_ENABLED.to_owned(),
                format!("MirrorSourceConnector can't setup offset-syncs feature while {EMIT_OFFSET_SYNCS_ENABLED} set to false"),
            ));
        }
        if props.get("exactly.once.support").map(|v| v.trim()) == Some("required")
            && !consumer_uses_read_committed(props)
        {
            errors.push((
                "exactly.once.support".to_owned(),
                "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed'; otherwise, records from aborted and uncommitted transactions will be replicated from the source cluster to the target cluster.".to_owned(),
            ));
        }
    }
    errors
}

/// Adds [`semantic_errors`] to a `ConfigDef` validation.
pub fn validate(props: &ConfigMap, connector: MirrorConnector) -> Vec<ConfigValue> {
    let mut values = connector.config_def().validate(props);
    for (key, message) in semantic_errors(props, connector) {
        match values.iter_mut().find(|v| v.name == key) {
            Some(v) => v.add_error(message),
            None => {
                let mut v = ConfigValue::new(key);
                v.add_error(message);
                values.push(v);
            }
        }
    }
    values
}

fn first_error(props: &ConfigMap, connector: MirrorConnector) -> Result<()> {
    match semantic_errors(props, connector).into_iter().next() {
        Some((key, message)) => Err(ConnectError::config(format!(
            "Invalid value for configuration {key}: {message}"
        ))),
        None => Ok(()),
    }
}

/// Apache's `entityLabel()`, the start of every client id.
fn entity_label(props: &ConfigMap, source: &str, target: &str) -> String {
    format!(
        "{source}->{target}|{}",
        props.get("name").map_or("", String::as_str)
    )
}

fn client(
    props: &ConfigMap,
    label: &str,
    cluster: Cluster,
    kind: ClientKind,
    role: &str,
) -> Result<BTreeMap<String, String>> {
    librdkafka_config(props, cluster, kind, &format!("{label}|{role}")).map_err(|errors| {
        let (key, reason) = errors.into_iter().next().unwrap_or_default();
        ConnectError::config(format!("Invalid value for configuration {key}: {reason}"))
    })
}

/// The keys every MirrorMaker connector has, typed.
#[derive(Debug, Clone)]
pub struct Common {
    pub enabled: bool,
    pub source_alias: String,
    pub target_alias: String,
    pub admin_timeout: Duration,
    pub policy: ReplicationPolicy,
    pub props: ConfigMap,
}

impl Common {
    fn parse(p: &ParsedConfig, props: &ConfigMap) -> Result<Self> {
        let source_alias = p
            .string(SOURCE_CLUSTER_ALIAS)
            .unwrap_or_default()
            .trim()
            .to_owned();
        let policy = ReplicationPolicy::for_class(
            p.class(REPLICATION_POLICY_CLASS)
                .unwrap_or(policy::DEFAULT_POLICY_CLASS),
            p.string(REPLICATION_POLICY_SEPARATOR).unwrap_or("."),
            p.boolean(INTERNAL_TOPIC_SEPARATOR_ENABLED).unwrap_or(true),
            &source_alias,
        )
        .ok_or_else(|| ConnectError::config("unknown replication policy"))?;
        Ok(Self {
            enabled: p.boolean(ENABLED).unwrap_or(true),
            target_alias: p
                .string(TARGET_CLUSTER_ALIAS)
                .unwrap_or("target")
                .trim()
                .to_owned(),
            source_alias,
            admin_timeout: Duration::from_millis(
                p.long(ADMIN_TIMEOUT_MS)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(60_000),
            ),
            policy,
            props: props.clone(),
        })
    }

    pub fn entity_label(&self) -> String {
        entity_label(&self.props, &self.source_alias, &self.target_alias)
    }

    pub fn client(
        &self,
        cluster: Cluster,
        kind: ClientKind,
        role: &str,
    ) -> Result<BTreeMap<String, String>> {
        client(&self.props, &self.entity_label(), cluster, kind, role)
    }
}

/// `MirrorHeartbeatConnector`'s config, typed.
#[derive(Debug, Clone)]
pub struct MirrorHeartbeatConfig {
    pub common: Common,
    /// `None`: heartbeats disabled (no task).
    pub interval: Option<Duration>,
    pub replication_factor: i16,
}

impl MirrorHeartbeatConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = heartbeat_config_def().parse(props)?;
        first_error(props, MirrorConnector::Heartbeat)?;
        Ok(Self {
            common: Common::parse(&p, props)?,
            interval: p
                .boolean(EMIT_HEARTBEATS_ENABLED)
                .unwrap_or(true)
                .then(|| secs(p.long(EMIT_HEARTBEATS_INTERVAL_SECONDS), 1)),
            replication_factor: p.short(HEARTBEATS_TOPIC_REPLICATION_FACTOR).unwrap_or(3),
        })
    }
}

/// `MirrorCheckpointConnector`'s config, typed.
#[derive(Debug, Clone)]
pub struct MirrorCheckpointConfig {
    pub common: Common,
    pub poll_timeout: Duration,
    pub groups: Regex,
    pub groups_exclude: Regex,
    pub topics: Regex,
    pub topics_exclude: Regex,
    pub refresh_groups: Option<Duration>,
    pub emit_checkpoints: Option<Duration>,
    pub sync_group_offsets: Option<Duration>,
    pub checkpoints_replication_factor: i16,
    pub offset_syncs_on_source: bool,
}

impl MirrorCheckpointConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = checkpoint_config_def().parse(props)?;
        first_error(props, MirrorConnector::Checkpoint)?;
        let regex = |k: &str| {
            pattern_list(p.list(k))
                .map_err(|e| ConnectError::invalid_value(k, e, "Invalid regular expression"))
        };
        Ok(Self {
            common: Common::parse(&p, props)?,
            poll_timeout: Duration::from_millis(
                p.long(CONSUMER_POLL_TIMEOUT_MS)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(1000),
            ),
            groups: regex(GROUPS)?,
            groups_exclude: regex(GROUPS_EXCLUDE)?,
            topics: regex(TOPICS)?,
            topics_exclude: regex(TOPICS_EXCLUDE)?,
            refresh_groups: p
                .boolean(REFRESH_GROUPS_ENABLED)
                .unwrap_or(true)
                .then(|| secs(p.long(REFRESH_GROUPS_INTERVAL_SECONDS), 600)),
            emit_checkpoints: p
                .boolean(EMIT_CHECKPOINTS_ENABLED)
                .unwrap_or(true)
                .then(|| secs(p.long(EMIT_CHECKPOINTS_INTERVAL_SECONDS), 60)),
            sync_group_offsets: p
                .boolean(SYNC_GROUP_OFFSETS_ENABLED)
                .unwrap_or(false)
                .then(|| secs(p.long(SYNC_GROUP_OFFSETS_INTERVAL_SECONDS), 60)),
            checkpoints_replication_factor: p
                .short(CHECKPOINTS_TOPIC_REPLICATION_FACTOR)
                .unwrap_or(3),
            offset_syncs_on_source: p.string(OFFSET_SYNCS_TOPIC_LOCATION).unwrap_or("source")
                == "source",
        })
    }

    /// Apache's `DefaultGroupFilter`.
    pub fn should_replicate_group(&self, group: &str) -> bool {
        self.groups.is_match(group) && !self.groups_exclude.is_match(group)
    }

    /// Apache's `DefaultTopicFilter` (no internal-topic or cycle checks: the checkpoint task
    /// uses the filter alone).
    pub fn should_replicate_topic(&self, topic: &str) -> bool {
        self.topics.is_match(topic) && !self.topics_exclude.is_match(topic)
    }

    /// The checkpoints topic on the target: `<source alias>.checkpoints.internal`.
    pub fn checkpoints_topic(&self) -> String {
        self.common
            .policy
            .checkpoints_topic(&self.common.source_alias)
    }

    /// As the source connector names it (the same keys decide).
    pub fn offset_syncs_topic(&self) -> String {
        let c = &self.common;
        let other = if self.offset_syncs_on_source {
            &c.target_alias
        } else {
            &c.source_alias
        };
        c.policy.offset_syncs_topic(other)
    }

    pub fn offset_syncs_cluster(&self) -> Cluster {
        if self.offset_syncs_on_source {
            Cluster::Source
        } else {
            Cluster::Target
        }
    }
}

fn secs(v: Option<i64>, default: u64) -> Duration {
    Duration::from_secs(v.and_then(|v| u64::try_from(v).ok()).unwrap_or(default))
}

impl MirrorSourceConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = source_config_def().parse(props)?;
        first_error(props, MirrorConnector::Source)?;
        let source_alias = p
            .string(SOURCE_CLUSTER_ALIAS)
            .unwrap_or_default()
            .trim()
            .to_owned();
        let policy = ReplicationPolicy::for_class(
            p.class(REPLICATION_POLICY_CLASS)
                .unwrap_or(policy::DEFAULT_POLICY_CLASS),
            p.string(REPLICATION_POLICY_SEPARATOR).unwrap_or("."),
            p.boolean(INTERNAL_TOPIC_SEPARATOR_ENABLED).unwrap_or(true),
            &source_alias,
        )
        .ok_or_else(|| ConnectError::config("unknown replication policy"))?;
        let regex = |k: &str| {
            pattern_list(p.list(k))
                .map_err(|e| ConnectError::invalid_value(k, e, "Invalid regular expression"))
        };
        Ok(Self {
            enabled: p.boolean(ENABLED).unwrap_or(true),
            target_alias: p
                .string(TARGET_CLUSTER_ALIAS)
                .unwrap_or("target")
                .trim()
                .to_owned(),
            source_alias,
            admin_timeout: Duration::from_millis(
                p.long(ADMIN_TIMEOUT_MS)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(60_000),
            ),
            policy,
            topics: regex(TOPICS)?,
            topics_exclude: regex(TOPICS_EXCLUDE)?,
            config_properties_exclude: regex(CONFIG_PROPERTIES_EXCLUDE)?,
            poll_timeout: Duration::from_millis(
                p.long(CONSUMER_POLL_TIMEOUT_MS)
                    .and_then(|v| u64::try_from(v).ok())
                    .unwrap_or(1000),
            ),
            refresh_topics: p
                .boolean(REFRESH_TOPICS_ENABLED)
                .unwrap_or(true)
                .then(|| secs(p.long(REFRESH_TOPICS_INTERVAL_SECONDS), 600)),
            sync_topic_configs: p.boolean(SYNC_TOPIC_CONFIGS_ENABLED).unwrap_or(true),
            replication_factor: p.int(REPLICATION_FACTOR).unwrap_or(2),
            offset_syncs_replication_factor: p
                .short(OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)
                .unwrap_or(3),
            offset_lag_max: p.long(OFFSET_LAG_MAX).unwrap_or(100),
            offset_syncs_on_source: p.string(OFFSET_SYNCS_TOPIC_LOCATION).unwrap_or("source")
                == "source",
            emit_offset_syncs: p.boolean(EMIT_OFFSET_SYNCS_ENABLED).unwrap_or(true),
            heartbeats_replication: p.boolean(HEARTBEATS_REPLICATION_ENABLED).unwrap_or(true),
            props: props.clone(),
        })
    }

    /// The offset-syncs topic: on the source cluster (default) it is named for the target.
    pub fn offset_syncs_topic(&self) -> String {
        let other = if self.offset_syncs_on_source {
            &self.target_alias
        } else {
            &self.source_alias
        };
        self.policy.offset_syncs_topic(other)
    }

    pub fn offset_syncs_cluster(&self) -> Cluster {
        if self.offset_syncs_on_source {
            Cluster::Source
        } else {
            Cluster::Target
        }
    }

    /// Apache's `entityLabel()`, the start of every client id.
    pub fn entity_label(&self) -> String {
        format!(
            "{}->{}|{}",
            self.source_alias,
            self.target_alias,
            self.props.get("name").map_or("", String::as_str)
        )
    }

    pub fn client(
        &self,
        cluster: Cluster,
        kind: ClientKind,
        role: &str,
    ) -> Result<BTreeMap<String, String>> {
        librdkafka_config(
            &self.props,
            cluster,
            kind,
            &format!("{}|{role}", self.entity_label()),
        )
        .map_err(|errors| {
            let (key, reason) = errors.into_iter().next().unwrap_or_default();
            ConnectError::config(format!("Invalid value for configuration {key}: {reason}"))
        })
    }

    /// Apache's `shouldReplicateTopic` with the default topic filter and `isCycle`.
    pub fn should_replicate_topic(&self, topic: &str) -> bool {
        let filtered = self.topics.is_match(topic) && !self.topics_exclude.is_match(topic);
        (filtered || (self.heartbeats_replication && self.policy.is_heartbeats_topic(topic)))
            && !self.policy.is_internal_topic(topic)
            && !self.is_cycle(topic)
    }

    /// A topic that came from the target cluster (at any depth) must not go back to it.
    pub fn is_cycle(&self, topic: &str) -> bool {
        match self.policy.topic_source(topic) {
            None => false,
            Some(source) if source == self.target_alias => true,
            Some(_) => match self.policy.upstream_topic(topic) {
                Some(up) if up != topic => self.is_cycle(&up),
                _ => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn errors(pairs: &[(&str, &str)]) -> Vec<String> {
        validate(&props(pairs), MirrorConnector::Source)
            .into_iter()
            .filter(|v| !v.errors.is_empty())
            .map(|v| v.name)
            .collect()
    }

    #[test]
    fn aliases_and_policy_are_validated() {
        assert_eq!(errors(&[]), vec![SOURCE_CLUSTER_ALIAS]);
        assert_eq!(
            errors(&[(SOURCE_CLUSTER_ALIAS, "a"), (TARGET_CLUSTER_ALIAS, "a")]),
            vec![TARGET_CLUSTER_ALIAS]
        );
        assert_eq!(
            errors(&[(SOURCE_CLUSTER_ALIAS, "target")]),
            vec![TARGET_CLUSTER_ALIAS]
        );
        assert_eq!(
            errors(&[
                (SOURCE_CLUSTER_ALIAS, "a"),
                (REPLICATION_POLICY_CLASS, "com.example.MyPolicy")
            ]),
            vec![REPLICATION_POLICY_CLASS]
        );
        assert!(
            errors(&[
                (SOURCE_CLUSTER_ALIAS, "a"),
                (REPLICATION_POLICY_CLASS, policy::IDENTITY_POLICY_CLASS)
            ])
            .is_empty()
        );
        assert_eq!(
            errors(&[
                (SOURCE_CLUSTER_ALIAS, "a"),
                (SYNC_TOPIC_ACLS_ENABLED, "true")
            ]),
            vec![SYNC_TOPIC_ACLS_ENABLED]
        );
        assert_eq!(
            errors(&[
                (SOURCE_CLUSTER_ALIAS, "a"),
                ("source.cluster.linger.ms", "5")
            ]),
            vec!["source.cluster.linger.ms"]
        );
        assert_eq!(
            errors(&[(SOURCE_CLUSTER_ALIAS, "a"), (TOPICS, "a(")]),
            vec![TOPICS]
        );
    }

    #[test]
    fn exactly_once_requires_read_committed_as_apache() {
        let base = [
            (SOURCE_CLUSTER_ALIAS, "a"),
            ("exactly.once.support", "required"),
        ];
        assert_eq!(errors(&base), vec!["exactly.once.support"]);
        let mut ok = base.to_vec();
        ok.push(("source.consumer.isolation.level", "read_committed"));
        assert!(errors(&ok).is_empty());
        let mut ok = base.to_vec();
        ok.push(("consumer.isolation.level", "read_committed"));
        assert!(errors(&ok).is_empty());
    }

    #[test]
    fn client_keys_layer_as_apache() {
        let p = props(&[
            ("source.cluster.bootstrap.servers", "s:9092"),
            ("source.cluster.alias", "a"),
            ("consumer.fetch.min.bytes", "1"),
            ("consumer.override.fetch.min.bytes", "9"),
            ("consumer.poll.timeout.ms", "9"),
            ("source.consumer.fetch.min.bytes", "2"),
            ("target.cluster.bootstrap.servers", "t:9092"),
        ]);
        let keys = client_keys(&p, Cluster::Source, ClientKind::Consumer);
        assert_eq!(keys["bootstrap.servers"].1, "s:9092");
        assert_eq!(
            keys["fetch.min.bytes"],
            ("source.consumer.fetch.min.bytes".to_owned(), "2".to_owned())
        );
        assert_eq!(keys.len(), 2);
        let admin = client_keys(&p, Cluster::Target, ClientKind::Admin);
        assert_eq!(admin["bootstrap.servers"].1, "t:9092");
    }

    #[test]
    fn topic_filter_and_cycles_as_apache() {
        let c = MirrorSourceConfig::parse(&props(&[
            (SOURCE_CLUSTER_ALIAS, "a"),
            (TARGET_CLUSTER_ALIAS, "b"),
            (TOPICS_EXCLUDE, "secret.*, .*[\\-\\.]internal, __.*"),
        ]))
        .unwrap();
        assert!(c.should_replicate_topic("orders"));
        assert!(!c.should_replicate_topic("secret1"));
        assert!(!c.should_replicate_topic("__consumer_offsets"));
        assert!(
            !c.should_replicate_topic("b.orders"),
            "came from the target"
        );
        assert!(
            !c.should_replicate_topic("c.b.orders"),
            "came from the target via c"
        );
        assert!(c.should_replicate_topic("c.orders"));
        assert!(!c.should_replicate_topic("mm2-offset-syncs.b.internal"));
        assert!(c.should_replicate_topic("heartbeats"));
        assert_eq!(c.offset_syncs_topic(), "mm2-offset-syncs.b.internal");
        assert_eq!(
            c.policy.format_remote_topic(&c.source_alias, "orders"),
            "a.orders"
        );
    }
}
