//! The Kafka admin operations MirrorMaker needs, over librdkafka: list topics with their
//! partition counts, create remote topics (with the source's configs) and partitions, create
//! the compacted single-partition internal topics. Each call is bounded by `admin.timeout.ms`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use connect_api::error::{ConnectError, Result};
use rdkafka::ClientConfig;
use rdkafka::admin::{
    AdminClient, AdminOptions, AlterConfig, ConfigSource, NewPartitions, NewTopic,
    ResourceSpecifier, TopicReplication,
};
use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use regex::Regex;

/// Keeps the client's last error: librdkafka reports a refused login or an unreachable
/// broker as an error event while the request itself only times out; the event says why.
#[derive(Default)]
pub struct LastError(std::sync::Mutex<Option<String>>);

impl LastError {
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forgets the last error (the client has since been answered).
    pub fn clear(&self) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

impl ClientContext for LastError {
    fn error(&self, error: KafkaError, reason: &str) {
        tracing::warn!(error = %error, reason, "kafka client error");
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // "1/1 brokers are down" follows every failed connection: the failure before it
        // (a refused login, a TLS error, a refused connection) says why.
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::AllBrokersDown) && last.is_some() {
            return;
        }
        *last = Some(reason.to_owned());
    }
}

/// Why a cluster does not answer, when librdkafka knows: a consumer with the same settings
/// asks for metadata and reports the error events it gets (a refused login, a TLS failure, no
/// broker reachable), which admin requests never see (they only time out). Blocking.
pub fn diagnose(config: &BTreeMap<String, String>, timeout: Duration) -> Option<String> {
    let mut c = ClientConfig::new();
    for (k, v) in config {
        c.set(k, v);
    }
    c.set("group.id", "mm2-diagnose");
    let consumer: BaseConsumer<LastError> = c.create_with_context(LastError::default()).ok()?;
    let _ = consumer.fetch_metadata(None, timeout.min(Duration::from_secs(5)));
    for _ in 0..10 {
        if let Some(why) = consumer.context().get() {
            return Some(why);
        }
        let _ = consumer.poll(Duration::from_millis(100));
    }
    consumer.context().get()
}

impl ConsumerContext for LastError {}

/// An admin client of one cluster, named by its alias in errors.
#[derive(Clone)]
pub struct Admin {
    client: Arc<AdminClient<DefaultClientContext>>,
    /// The client's settings, to diagnose a failure with ([`diagnose`]).
    config: BTreeMap<String, String>,
    alias: String,
    timeout: Duration,
}

/// Topic configs copied to a new remote topic (Apache's `targetConfig(config, false)`).
pub type TopicConfigs = BTreeMap<String, String>;

impl Admin {
    pub fn new(config: &BTreeMap<String, String>, alias: &str, timeout: Duration) -> Result<Self> {
        let mut c = ClientConfig::new();
        for (k, v) in config {
            c.set(k, v);
        }
        let client = c.create().map_err(|e| {
            ConnectError::config(format!(
                "failed to create an admin client for cluster \"{alias}\": {e}"
            ))
        })?;
        Ok(Self {
            client: Arc::new(client),
            config: config.clone(),
            alias: alias.to_owned(),
            timeout,
        })
    }

    /// `r`, its error completed with why the cluster did not answer (see [`diagnose`]).
    pub async fn explained<T>(&self, r: Result<T>) -> Result<T> {
        let Err(e) = r else {
            return r;
        };
        let (config, timeout) = (self.config.clone(), self.timeout);
        let why = tokio::task::spawn_blocking(move || diagnose(&config, timeout))
            .await
            .ok()
            .flatten();
        Err(match why {
            Some(why) => ConnectError::retriable(format!("{} ({why})", e.message())),
            None => e,
        })
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .request_timeout(Some(self.timeout))
            .operation_timeout(Some(self.timeout))
    }

    /// Every topic with its partition count.
    pub async fn topic_partitions(&self) -> Result<BTreeMap<String, i32>> {
        let client = self.client.clone();
        let timeout = self.timeout;
        let alias = self.alias.clone();
        tokio::task::spawn_blocking(move || {
            let md = client.inner().fetch_metadata(None, timeout).map_err(|e| {
                ConnectError::retriable(format!(
                    "failed to list topics on cluster \"{alias}\": {e}"
                ))
            })?;
            Ok(md
                .topics()
                .iter()
                .filter(|t| t.error().is_none())
                .map(|t| {
                    (
                        t.name().to_owned(),
                        i32::try_from(t.partitions().len()).unwrap_or(i32::MAX),
                    )
                })
                .collect())
        })
        .await
        .map_err(|e| ConnectError::fatal(format!("topic listing panicked: {e}")))?
    }

    /// Configs of `topic` to give its remote copy: set on the topic (not defaults), writable,
    /// not sensitive, not from the broker's static config, not excluded.
    pub async fn replicable_configs(&self, topic: &str, exclude: &Regex) -> Result<TopicConfigs> {
        let results = self
            .client
            .describe_configs([&ResourceSpecifier::Topic(topic)], &self.options())
            .await
            .map_err(|e| self.error("describe configs of topic", topic, e))?;
        let mut out = TopicConfigs::new();
        for r in results {
            let resource =
                r.map_err(|code| self.error("describe configs of topic", topic, code))?;
            for e in resource.entries {
                if e.is_default
                    || e.is_read_only
                    || e.is_sensitive
                    || e.source == ConfigSource::StaticBroker
                    || exclude.is_match(&e.name)
                {
                    continue;
                }
                if let Some(v) = e.value {
                    out.insert(e.name, v);
                }
            }
        }
        Ok(out)
    }

    /// The configs set on `topic` itself (dynamic topic configs), with their values.
    pub async fn topic_overrides(&self, topic: &str) -> Result<TopicConfigs> {
        let results = self
            .client
            .describe_configs([&ResourceSpecifier::Topic(topic)], &self.options())
            .await
            .map_err(|e| self.error("describe configs of topic", topic, e))?;
        let mut out = TopicConfigs::new();
        for r in results {
            let resource =
                r.map_err(|code| self.error("describe configs of topic", topic, code))?;
            for e in resource.entries {
                if e.source == ConfigSource::DynamicTopic
                    && let Some(v) = e.value
                {
                    out.insert(e.name, v);
                }
            }
        }
        Ok(out)
    }

    /// Replaces the configs set on `topic` with `configs` (AlterConfigs: the others return to
    /// their defaults).
    pub async fn set_topic_configs(&self, topic: &str, configs: &TopicConfigs) -> Result<()> {
        let mut alter = AlterConfig::new(ResourceSpecifier::Topic(topic));
        for (k, v) in configs {
            alter = alter.set(k, v);
        }
        let results = self
            .client
            .alter_configs([&alter], &self.options())
            .await
            .map_err(|e| self.error("alter configs of topic", topic, e))?;
        for r in results {
            r.map_err(|(_, code)| self.error("alter configs of topic", topic, code))?;
        }
        Ok(())
    }

    /// Creates `topic`; one that exists already is fine.
    pub async fn create_topic(
        &self,
        topic: &str,
        partitions: i32,
        replication_factor: i32,
        configs: &TopicConfigs,
    ) -> Result<bool> {
        let mut new = NewTopic::new(
            topic,
            partitions,
            TopicReplication::Fixed(replication_factor),
        );
        for (k, v) in configs {
            new = new.set(k, v);
        }
        let results = self
            .client
            .create_topics([&new], &self.options())
            .await
            .map_err(|e| self.error("create topic", topic, e))?;
        match results.into_iter().next() {
            Some(Ok(_)) => Ok(true),
            None | Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => Ok(false),
            Some(Err((_, code))) => Err(self.error("create topic", topic, code)),
        }
    }

    /// Grows `topic` to `total` partitions; a topic that has them already is fine.
    pub async fn create_partitions(&self, topic: &str, total: i32) -> Result<()> {
        let new = NewPartitions::new(topic, usize::try_from(total).unwrap_or(0));
        let results = self
            .client
            .create_partitions([&new], &self.options())
            .await
            .map_err(|e| self.error("add partitions to topic", topic, e))?;
        for r in results {
            match r {
                Ok(_) | Err((_, RDKafkaErrorCode::InvalidPartitions)) => {}
                Err((_, code)) => return Err(self.error("add partitions to topic", topic, code)),
            }
        }
        Ok(())
    }

    /// Apache's `createSinglePartitionCompactedTopic`.
    pub async fn create_compacted_topic(
        &self,
        topic: &str,
        partitions: i32,
        replication_factor: i16,
    ) -> Result<()> {
        let mut configs = TopicConfigs::new();
        configs.insert("cleanup.policy".to_owned(), "compact".to_owned());
        match self
            .create_topic(topic, partitions, i32::from(replication_factor), &configs)
            .await
        {
            Ok(_) => Ok(()),
            // Apache assumes the topic exists or will be auto-created when it may not create it.
            Err(e) if e.message().contains("Authorization") => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn error(&self, what: &str, topic: &str, e: impl std::fmt::Display) -> ConnectError {
        ConnectError::retriable(format!(
            "failed to {what} \"{topic}\" on cluster \"{}\": {e}",
            self.alias
        ))
    }
}

/// A consumer group as `ListGroups` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub name: String,
    /// `Empty`, `Stable`, `PreparingRebalance`, `Dead`...
    pub state: String,
    pub protocol_type: String,
}

impl Admin {
    /// Groups on the cluster (`group = Some(g)`: that group only; a group the coordinator does
    /// not know comes back `Dead`).
    pub async fn groups(&self, group: Option<&str>) -> Result<Vec<GroupListing>> {
        let client = self.client.clone();
        let timeout = self.timeout;
        let alias = self.alias.clone();
        let group = group.map(str::to_owned);
        tokio::task::spawn_blocking(move || {
            let list = client
                .inner()
                .fetch_group_list(group.as_deref(), timeout)
                .map_err(|e| {
                    ConnectError::retriable(format!(
                        "failed to list consumer groups on cluster \"{alias}\": {e}"
                    ))
                })?;
            Ok(list
                .groups()
                .iter()
                .map(|g| GroupListing {
                    name: g.name().to_owned(),
                    state: g.state().to_owned(),
                    protocol_type: g.protocol_type().to_owned(),
                })
                .collect())
        })
        .await
        .map_err(|e| ConnectError::fatal(format!("group listing panicked: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_brokers_down_does_not_hide_why() {
        let e = LastError::default();
        e.error(
            KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert_eq!(e.get().as_deref(), Some("1/1 brokers are down"));
        e.error(
            KafkaError::Global(RDKafkaErrorCode::Authentication),
            "SASL authentication error: Authentication failed",
        );
        e.error(
            KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert_eq!(
            e.get().as_deref(),
            Some("SASL authentication error: Authentication failed")
        );
        e.clear();
        assert_eq!(e.get(), None);
    }
}
