//! The MirrorMaker connectors' configs after validation, typed: the keys every connector has
//! ([`Common`]) and each connector's own, with the topic and group filters and the names of
//! the internal topics derived from them.

use std::collections::BTreeMap;
use std::time::Duration;

use connect_api::config::{ConfigMap, ParsedConfig};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients::ClientKind;
use regex::Regex;

use super::config::*;
use super::policy::{self, ReplicationPolicy};

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
    pub sync_topic_configs_interval: Duration,
    /// `sync.topic.acls.enabled` with its interval (a negative interval: never, as Apache's
    /// scheduler skips it).
    pub sync_topic_acls: Option<Duration>,
    pub replication_factor: i32,
    pub offset_syncs_replication_factor: i16,
    pub offset_lag_max: i64,
    pub offset_syncs_on_source: bool,
    pub emit_offset_syncs: bool,
    pub heartbeats_replication: bool,
    pub props: ConfigMap,
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
            sync_topic_configs_interval: secs(p.long(SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS), 600),
            sync_topic_acls: match (
                p.boolean(SYNC_TOPIC_ACLS_ENABLED).unwrap_or(true),
                p.long(SYNC_TOPIC_ACLS_INTERVAL_SECONDS).unwrap_or(600),
            ) {
                (true, secs) if secs >= 0 => Some(Duration::from_secs(secs.unsigned_abs())),
                _ => None,
            },
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
