//! Keys of the MirrorMaker 2 connectors (Apache 4.4's `MirrorConnectorConfig`,
//! `MirrorSourceConfig`, `MirrorCheckpointConfig`, `MirrorHeartbeatConfig`), their validation,
//! and the Kafka client configs built from a connector config as Apache builds them (`source.cluster.*` narrowed to the cluster keys,
//! then `consumer.*`/`producer.*`/`admin.*`, then `source.consumer.*`...).
//!
//! Apache keys this worker does not implement are accepted only with the value that means
//! "off" (or Apache's default class); any other value is a validation error naming the key.

use std::collections::BTreeMap;

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
            key(SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS, Long, Low, "Frequency of topic config sync.", 29)
                .default_value(600i64),
        )
        .define(
            key(SYNC_TOPIC_ACLS_ENABLED, Boolean, Low, "Whether to periodically configure remote topic ACLs to match their corresponding upstream topics.", 30)
                .default_value(true),
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

pub(super) fn first_error(props: &ConfigMap, connector: MirrorConnector) -> Result<()> {
    match semantic_errors(props, connector).into_iter().next() {
        Some((key, message)) => Err(ConnectError::config(format!(
            "Invalid value for configuration {key}: {message}"
        ))),
        None => Ok(()),
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
        assert!(
            errors(&[
                (SOURCE_CLUSTER_ALIAS, "a"),
                (SYNC_TOPIC_ACLS_ENABLED, "true")
            ])
            .is_empty()
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
}
