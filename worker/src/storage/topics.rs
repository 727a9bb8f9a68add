//! Creating and validating Connect's internal topics (Java `TopicAdmin`).
//!
//! # Guarantees
//!
//! - A topic this module creates is compacted, with Connect's partition counts: config 1,
//!   offsets `offset.storage.partitions` (25), status `status.storage.partitions` (5);
//!   replication `-1` means the broker default.
//! - An existing topic is accepted only if its `cleanup.policy` is exactly `compact` and, for the
//!   config topic, it has exactly one partition.
//!
//! # Errors
//!
//! [`StorageError::InvalidTopic`] carries Connect's message word for word, so operators see the
//! same text as with a Java worker. If describing topic configs is not permitted the policy check
//! is skipped with an info log, as Java does.

use std::collections::BTreeMap;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;

use super::StorageError;

pub const CLEANUP_POLICY: &str = "cleanup.policy";
pub const CLEANUP_POLICY_COMPACT: &str = "compact";
pub const DEFAULT_OFFSET_STORAGE_PARTITIONS: i32 = 25;
pub const DEFAULT_STATUS_STORAGE_PARTITIONS: i32 = 5;
pub const DEFAULT_REPLICATION_FACTOR: i32 = 3;
pub const CONFIG_STORAGE_TOPIC_PROP: &str = "config.storage.topic";
pub const OFFSET_STORAGE_TOPIC_PROP: &str = "offset.storage.topic";
pub const STATUS_STORAGE_TOPIC_PROP: &str = "status.storage.topic";

const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a just-created topic may take to appear in metadata and configs.
const PROPAGATION_TIMEOUT: Duration = Duration::from_secs(10);
const PROPAGATION_BACKOFF: Duration = Duration::from_millis(200);

/// Which internal topic: decides the worker property named in errors and the purpose text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternalTopic {
    Config,
    Offsets,
    Status,
}

impl InternalTopic {
    /// The worker property that names the topic.
    pub fn property(self) -> &'static str {
        match self {
            InternalTopic::Config => CONFIG_STORAGE_TOPIC_PROP,
            InternalTopic::Offsets => OFFSET_STORAGE_TOPIC_PROP,
            InternalTopic::Status => STATUS_STORAGE_TOPIC_PROP,
        }
    }

    /// What the topic holds, as Connect words it in the cleanup-policy error.
    pub fn purpose(self) -> &'static str {
        match self {
            InternalTopic::Config => "connector configurations",
            InternalTopic::Offsets => "source connector offsets",
            InternalTopic::Status => "connector and task statuses",
        }
    }
}

/// How to create a topic if missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSettings {
    pub name: String,
    /// Ignored for the config topic (always 1).
    pub partitions: i32,
    /// `-1` = broker default.
    pub replication_factor: i32,
    /// Extra topic configs (`offset.storage.<cfg>` etc.); `cleanup.policy` is always `compact`.
    pub configs: BTreeMap<String, String>,
}

impl TopicSettings {
    pub fn new(name: impl Into<String>, partitions: i32, replication_factor: i32) -> Self {
        Self {
            name: name.into(),
            partitions,
            replication_factor,
            configs: BTreeMap::new(),
        }
    }
}

/// Connect's message for a config topic with more than one partition.
pub fn config_topic_partitions_message(topic: &str, partitions: usize) -> String {
    format!(
        "Topic '{topic}' supplied via the '{CONFIG_STORAGE_TOPIC_PROP}' property is required to have a single partition in order to guarantee consistency of connector configurations, but found {partitions} partitions."
    )
}

/// Connect's message for a topic whose `cleanup.policy` is not exactly `compact`.
pub fn cleanup_policy_message(topic: &str, kind: InternalTopic, found: &str) -> String {
    let prop = kind.property();
    let purpose = kind.purpose();
    format!(
        "Topic '{topic}' supplied via the '{prop}' property is required to have '{CLEANUP_POLICY}={CLEANUP_POLICY_COMPACT}' to guarantee consistency and durability of {purpose}, but found the topic currently has '{CLEANUP_POLICY}={found}'. Continuing would likely result in eventually losing {purpose} and problems restarting this Connect cluster in the future. Change the '{prop}' property in the Connect worker configurations to use a topic with '{CLEANUP_POLICY}={CLEANUP_POLICY_COMPACT}'."
    )
}

/// Creates the topic if missing, then validates it. Returns whether this call created it.
pub async fn ensure_topic(
    client: &ClientConfig,
    kind: InternalTopic,
    settings: &TopicSettings,
) -> Result<bool, StorageError> {
    let admin: AdminClient<DefaultClientContext> = client
        .create()
        .map_err(|e| StorageError::kafka("create admin client", e))?;
    let partitions = if kind == InternalTopic::Config {
        1
    } else {
        settings.partitions
    };
    let mut topic = NewTopic::new(
        &settings.name,
        partitions,
        TopicReplication::Fixed(settings.replication_factor),
    );
    for (k, v) in &settings.configs {
        if k == CLEANUP_POLICY {
            tracing::warn!(topic = %settings.name, "ignoring cleanup.policy override for an internal topic");
            continue;
        }
        topic = topic.set(k, v);
    }
    topic = topic.set(CLEANUP_POLICY, CLEANUP_POLICY_COMPACT);
    let opts = AdminOptions::new().operation_timeout(Some(ADMIN_TIMEOUT));
    let results = admin
        .create_topics([&topic], &opts)
        .await
        .map_err(|e| StorageError::kafka(format!("create topic {}", settings.name), e))?;
    let mut created = false;
    for r in results {
        match r {
            Ok(_) => created = true,
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((t, code)) => {
                return Err(StorageError::kafka(
                    format!("create topic {t}"),
                    KafkaError::AdminOp(code),
                ));
            }
        }
    }
    if created {
        tracing::info!(topic = %settings.name, partitions, "created internal topic");
    }
    validate_topic(client, &admin, kind, &settings.name).await?;
    Ok(created)
}

/// Checks partition count (config topic) and cleanup policy of an existing topic.
async fn validate_topic(
    client: &ClientConfig,
    admin: &AdminClient<DefaultClientContext>,
    kind: InternalTopic,
    name: &str,
) -> Result<(), StorageError> {
    if kind == InternalTopic::Config {
        let n = partition_count(client, name).await?;
        if n != 1 {
            return Err(StorageError::InvalidTopic(config_topic_partitions_message(
                name, n,
            )));
        }
    }
    // A just-created topic may not be visible to every broker yet: retry a missing answer
    // for a short while before giving up on the check, as Java does when it cannot tell.
    let deadline = tokio::time::Instant::now() + PROPAGATION_TIMEOUT;
    let policy = loop {
        match cleanup_policy(admin, name).await? {
            Some(p) => break p,
            None if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(PROPAGATION_BACKOFF).await;
            }
            None => {
                tracing::info!(topic = %name, "unable to read cleanup.policy of the topic; cannot verify it is compacted");
                return Ok(());
            }
        }
    };
    if !is_only_compact(&policy) {
        return Err(StorageError::InvalidTopic(cleanup_policy_message(
            name, kind, &policy,
        )));
    }
    Ok(())
}

/// The topic's `cleanup.policy`, `None` if the broker did not report it (yet), `Some("")` never.
async fn cleanup_policy(
    admin: &AdminClient<DefaultClientContext>,
    name: &str,
) -> Result<Option<String>, StorageError> {
    let opts = AdminOptions::new().request_timeout(Some(ADMIN_TIMEOUT));
    let described = admin
        .describe_configs([&ResourceSpecifier::Topic(name)], &opts)
        .await;
    let resource = match described.map(|mut v| v.pop()) {
        Ok(Some(Ok(r))) => r,
        Ok(Some(Err(
            RDKafkaErrorCode::TopicAuthorizationFailed
            | RDKafkaErrorCode::ClusterAuthorizationFailed,
        ))) => {
            tracing::info!(topic = %name, "not permitted to describe topic configs; cannot verify cleanup.policy=compact");
            return Ok(Some(CLEANUP_POLICY_COMPACT.to_owned()));
        }
        Ok(Some(Err(RDKafkaErrorCode::UnknownTopicOrPartition))) | Ok(None) => return Ok(None),
        Ok(Some(Err(code))) => {
            return Err(StorageError::kafka(
                format!("describe configs of topic {name}"),
                KafkaError::AdminOp(code),
            ));
        }
        Err(e) => {
            return Err(StorageError::kafka(
                format!("describe configs of topic {name}"),
                e,
            ));
        }
    };
    Ok(resource
        .get(CLEANUP_POLICY)
        .and_then(|e| e.value.clone())
        .filter(|v| !v.is_empty()))
}

/// Java compares the *set* of policies with `{compact}`: `compact` (any case, any spacing) passes,
/// `compact,delete` fails.
fn is_only_compact(policy: &str) -> bool {
    let set: std::collections::BTreeSet<String> = policy
        .split(',')
        .map(|p| p.trim().to_ascii_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    set.len() == 1 && set.contains(CLEANUP_POLICY_COMPACT)
}

/// Number of partitions of `topic`, from metadata (a blocking call, run off the executor).
pub async fn partition_count(client: &ClientConfig, topic: &str) -> Result<usize, StorageError> {
    let client = client.clone();
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let consumer: BaseConsumer = client
            .create()
            .map_err(|e| StorageError::kafka("create metadata client", e))?;
        wait_for_partitions(&consumer, &topic).map(|p| p.len())
    })
    .await
    .map_err(|e| StorageError::Io(format!("metadata task failed: {e}")))?
}

/// Partition ids of `topic`, retrying while a just-created topic propagates. Blocking.
pub(crate) fn wait_for_partitions(
    consumer: &BaseConsumer,
    topic: &str,
) -> Result<Vec<i32>, StorageError> {
    let deadline = std::time::Instant::now() + PROPAGATION_TIMEOUT;
    loop {
        let md = consumer
            .fetch_metadata(Some(topic), ADMIN_TIMEOUT)
            .map_err(|e| StorageError::kafka(format!("describe topic {topic}"), e))?;
        let partitions: Vec<i32> = md
            .topics()
            .iter()
            .find(|t| t.name() == topic)
            .filter(|t| t.error().is_none())
            .map(|t| t.partitions().iter().map(|p| p.id()).collect())
            .unwrap_or_default();
        if !partitions.is_empty() {
            return Ok(partitions);
        }
        if std::time::Instant::now() >= deadline {
            return Err(StorageError::TopicMissing(topic.to_owned()));
        }
        std::thread::sleep(PROPAGATION_BACKOFF);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_policy_check_is_a_set_comparison() {
        assert!(is_only_compact("compact"));
        assert!(is_only_compact("Compact"));
        assert!(!is_only_compact("compact,delete"));
        assert!(!is_only_compact("delete"));
        assert!(!is_only_compact(""));
    }

    #[test]
    fn messages_match_connect() {
        assert_eq!(
            cleanup_policy_message("connect-status", InternalTopic::Status, "delete"),
            "Topic 'connect-status' supplied via the 'status.storage.topic' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of connector and task statuses, but found the topic currently has 'cleanup.policy=delete'. Continuing would likely result in eventually losing connector and task statuses and problems restarting this Connect cluster in the future. Change the 'status.storage.topic' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'."
        );
        assert_eq!(
            config_topic_partitions_message("c", 3),
            "Topic 'c' supplied via the 'config.storage.topic' property is required to have a single partition in order to guarantee consistency of connector configurations, but found 3 partitions."
        );
    }
}
