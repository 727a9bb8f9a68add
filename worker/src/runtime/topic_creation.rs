//! Topic creation for source tasks (KIP-158; Java's `AbstractWorkerSourceTask.maybeCreateTopic`
//! with `TopicCreation` and `TopicAdmin.createOrFindTopics`).
//!
//! ```text
//!  record for topic T ──> T known to this task? ──yes──> send
//!                              │ no
//!                              ├─ T exists (DescribeConfigs) ─────────────> remember T, send
//!                              └─ CreateTopics with the first matching group's settings
//!                                   created / already exists ───────────> remember T, send
//!                                   not authorized / unsupported ───────> task fails
//!                                   invalid config, timeout, other ─────> task fails
//! ```
//!
//! Used only when the worker has `topic.creation.enable=true` and the connector sets a
//! `topic.creation.*` key; otherwise records go to the producer as they are (the broker may
//! auto-create their topics). An existing topic is never altered. Topics are created one at a
//! time, before the first record to each, since transforms may route records anywhere.

use std::collections::HashSet;
use std::time::Duration;

use connect_api::ConnectError;
use connect_api::config::{TopicCreation, TopicCreationGroup};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::types::RDKafkaErrorCode;

const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A task's topic creation: its groups, an admin client and the topics already known to exist.
pub struct TopicCreator {
    inner: Option<(TopicCreation, AdminClient<DefaultClientContext>)>,
    known: HashSet<String>,
}

/// Java's `NewTopic.toString`, as Apache's messages show the topic it tried to create.
fn describe_new_topic(topic: &str, group: &TopicCreationGroup) -> String {
    let or_default = |v: i64| {
        if v < 0 {
            "default".to_owned()
        } else {
            v.to_string()
        }
    };
    let configs: Vec<String> = group
        .configs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "(name={topic}, numPartitions={}, replicationFactor={}, replicasAssignments=null, configs={{{}}})",
        or_default(group.partitions.into()),
        or_default(group.replication_factor.into()),
        configs.join(", ")
    )
}

impl TopicCreator {
    /// No topic creation: every topic is left to the broker.
    pub fn disabled() -> Self {
        Self {
            inner: None,
            known: HashSet::new(),
        }
    }

    /// Topic creation with `settings`, through an admin client built from `admin` (the worker's
    /// `admin.*` and the connector's `admin.override.*`). `None` settings: disabled.
    pub fn new(
        settings: Option<TopicCreation>,
        admin: &ClientConfig,
    ) -> Result<Self, ConnectError> {
        let Some(settings) = settings else {
            return Ok(Self::disabled());
        };
        let client = admin.create().map_err(|e| {
            ConnectError::fatal(format!(
                "failed to create the topic creation admin client: {e}"
            ))
        })?;
        Ok(Self {
            inner: Some((settings, client)),
            known: HashSet::new(),
        })
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Makes sure `topic` exists before a record is sent to it: a no-op when topic creation is
    /// off or the topic is known, else finds or creates it (Java's `maybeCreateTopic`).
    pub async fn ensure(&mut self, topic: &str) -> Result<(), ConnectError> {
        let Some((settings, admin)) = &self.inner else {
            return Ok(());
        };
        if self.known.contains(topic) {
            return Ok(());
        }
        tracing::info!(
            topic,
            "the task will send records to this topic for the first time; checking whether it exists"
        );
        if exists(admin, topic).await? {
            tracing::info!(topic, "topic already exists");
            self.known.insert(topic.to_owned());
            return Ok(());
        }
        let group = settings.find_first_group(topic);
        let described = describe_new_topic(topic, group);
        tracing::info!(topic, group = %group.name, "creating topic {described}");
        let mut new = NewTopic::new(
            topic,
            group.partitions,
            TopicReplication::Fixed(group.replication_factor.into()),
        );
        for (k, v) in &group.configs {
            new = new.set(k, v);
        }
        let opts = AdminOptions::new().operation_timeout(Some(ADMIN_TIMEOUT));
        let results = admin.create_topics([&new], &opts).await.map_err(|e| {
            ConnectError::retriable(format!(
                "Error while attempting to create/find topic(s) '{topic}': {e}"
            ))
        })?;
        for r in results {
            match r {
                Ok(_) => {
                    tracing::info!(topic, group = %group.name, "created topic {described}");
                }
                Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    tracing::info!(topic, "found existing topic");
                }
                Err((
                    _,
                    RDKafkaErrorCode::TopicAuthorizationFailed
                    | RDKafkaErrorCode::ClusterAuthorizationFailed
                    | RDKafkaErrorCode::UnsupportedVersion,
                )) => {
                    return Err(ConnectError::fatal(format!(
                        "Task failed to create new topic {described}. Ensure that the task is authorized to create topics or that the topic exists and restart the task"
                    )));
                }
                Err((_, RDKafkaErrorCode::InvalidConfig)) => {
                    return Err(ConnectError::fatal(format!(
                        "Unable to create topic(s) '{topic}': invalid topic config in {described}"
                    )));
                }
                Err((_, RDKafkaErrorCode::RequestTimedOut)) => {
                    return Err(ConnectError::fatal(format!(
                        "Timed out while checking for or creating topic(s) '{topic}'. This could indicate a connectivity issue, unavailable topic partitions, or if this is your first use of the topic it may have taken too long to create."
                    )));
                }
                Err((_, code)) => {
                    return Err(ConnectError::fatal(format!(
                        "Error while attempting to create/find topic(s) '{topic}': {code} (creating {described})"
                    )));
                }
            }
        }
        self.known.insert(topic.to_owned());
        Ok(())
    }
}

/// Whether the topic exists (it has configs), asked without the metadata request that could
/// make a broker auto-create it. A broker that will not say (authorization) counts as "missing": creating
/// then answers.
async fn exists(
    admin: &AdminClient<DefaultClientContext>,
    topic: &str,
) -> Result<bool, ConnectError> {
    let opts = AdminOptions::new().request_timeout(Some(ADMIN_TIMEOUT));
    match admin
        .describe_configs([&ResourceSpecifier::Topic(topic)], &opts)
        .await
        .map(|mut v| v.pop())
    {
        // The broker answers a missing topic with an empty config list, not an error.
        Ok(Some(Ok(resource))) => Ok(!resource.entries.is_empty()),
        Ok(Some(Err(_)) | None) => Ok(false),
        Err(e) => Err(ConnectError::retriable(format!(
            "Error while attempting to create/find topic(s) '{topic}': {e}"
        ))),
    }
}

/// Whether a produce error means the record's topic does not exist.
pub(crate) fn is_unknown_topic(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownTopicOrPartition
    )
}

/// What a task failed by a missing topic says: why nothing created it and what to do.
pub(crate) fn unknown_topic_message(topic: &str) -> String {
    format!(
        "topic {topic} does not exist and nothing created it: topic creation is not used for this connector (the worker sets topic.creation.enable=false, or the connector sets no topic.creation.* keys) and the broker did not auto-create it (auto.create.topics.enable=false on the broker, or allow.auto.create.topics=false on the producer). Create the topic or configure topic creation, then restart the task"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::ConfigMap;

    #[test]
    fn new_topics_are_described_as_java_does() {
        let props: ConfigMap = [
            ("topic.creation.default.replication.factor", "-1"),
            ("topic.creation.default.partitions", "5"),
            ("topic.creation.default.cleanup.policy", "compact"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let tc = TopicCreation::from_config(&props, true).unwrap().unwrap();
        assert_eq!(
            describe_new_topic("t", &tc.default_group),
            "(name=t, numPartitions=5, replicationFactor=default, replicasAssignments=null, configs={cleanup.policy=compact})"
        );
    }

    #[test]
    fn disabled_creator_does_nothing() {
        let mut c = TopicCreator::disabled();
        assert!(!c.is_enabled());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(c.ensure("any")).unwrap();
    }
}
