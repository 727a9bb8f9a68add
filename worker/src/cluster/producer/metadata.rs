//! Topic metadata: each topic's partition count and the partitions' leaders, and the brokers'
//! addresses, from `Metadata` (with Java's auto-creation flag).

use std::time::{Duration, Instant};

use kafka_protocol::messages::{
    ApiKey, BrokerId, MetadataRequest, TopicName, metadata_request::MetadataRequestTopic,
};

use super::connection::connect;
use super::errors::{ProducerError, Retry, fatal_client, unsupported};
use super::produce_codes as pc;
use super::state::{TopicMeta, TransactionalProducer, str_bytes};

impl TransactionalProducer {
    /// The partition count of `topic`, from metadata (asked for when unknown, with Java's
    /// auto-creation flag, until the delivery timeout).
    pub(super) async fn partition_count(&mut self, topic: &str) -> Result<i32, ProducerError> {
        if let Some(m) = self.topics.get(topic) {
            return Ok(m.leaders.len() as i32);
        }
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(20);
        loop {
            match self.refresh_metadata(&[topic.to_owned()]).await {
                Ok(()) => {}
                Err(Retry::Never(e)) => return Err(e),
                Err(Retry::Now(why)) => {
                    tracing::debug!(topic, why, "metadata not available yet");
                }
            }
            if let Some(m) = self.topics.get(topic) {
                return Ok(m.leaders.len() as i32);
            }
            if Instant::now() >= deadline {
                return Err(ProducerError::UnknownTopic(topic.to_owned()));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// The partition count of `topic` once it has `partition` (a partition added since the
    /// metadata was read: Java's producer waits for it in `send`, up to `max.block.ms`; here
    /// metadata is asked again until the delivery timeout). The count, whatever it is then.
    pub(super) async fn partition_count_with(
        &mut self,
        topic: &str,
        partition: Option<i32>,
    ) -> Result<i32, ProducerError> {
        let n = self.partition_count(topic).await?;
        let Some(p) = partition.filter(|p| *p >= n) else {
            return Ok(n);
        };
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(20);
        loop {
            match self.refresh_metadata(&[topic.to_owned()]).await {
                Ok(()) | Err(Retry::Now(_)) => {}
                Err(Retry::Never(e)) => return Err(e),
            }
            let n = self.topics.get(topic).map_or(0, |m| m.leaders.len() as i32);
            if p < n || Instant::now() >= deadline {
                return Ok(n);
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// Metadata of `topics` (and the brokers) through any known broker.
    pub(super) async fn refresh_metadata(&mut self, topics: &[String]) -> Result<(), Retry> {
        let timeout = self.settings.request_timeout;
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default().with_name(Some(TopicName(str_bytes(t))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(true);
        // A kept produce connection first, else the coordinator's, else a new one.
        let mut conn = match self.connections.keys().next().copied() {
            Some(id) => self.connections.remove(&id).map(|c| (Some(id), c)),
            None => None,
        };
        if conn.is_none() {
            let mut last = None;
            let candidates: Vec<String> = self
                .brokers
                .values()
                .cloned()
                .chain(self.settings.bootstrap.iter().cloned())
                .collect();
            for b in candidates {
                match connect(&self.settings, &b).await {
                    Ok(c) => {
                        conn = Some((None, c));
                        break;
                    }
                    Err(e) if e.is_fatal() => return Err(Retry::Never(fatal_client(e))),
                    Err(e) => last = Some(e),
                }
            }
            if conn.is_none() {
                return Err(Retry::Now(
                    last.map_or("no bootstrap servers".to_owned(), |e| e.to_string()),
                ));
            }
        }
        let (id, mut conn) = conn.expect("set above");
        let Some(version) = conn.optional_version(ApiKey::Metadata) else {
            return Err(Retry::Never(unsupported("Metadata")));
        };
        let resp = conn
            .send(&req, version, timeout)
            .await
            .map_err(Retry::from_client)?;
        if let Some(id) = id {
            self.connections.insert(id, conn);
        }
        for b in &resp.brokers {
            self.brokers
                .insert(b.node_id, format!("{}:{}", b.host, b.port));
        }
        // Connections to brokers that left are closed.
        let brokers = &self.brokers;
        self.connections.retain(|id, _| brokers.contains_key(id));
        for t in &resp.topics {
            let Some(name) = &t.name else { continue };
            let name = name.0.to_string();
            if t.error_code != pc::NONE || t.partitions.is_empty() {
                if t.error_code == pc::TOPIC_AUTHORIZATION_FAILED {
                    return Err(Retry::Never(ProducerError::Abortable(format!(
                        "not authorized to write to topic {name}"
                    ))));
                }
                self.topics.remove(&name);
                continue;
            }
            let mut leaders = vec![BrokerId(-1); t.partitions.len()];
            for p in &t.partitions {
                if let Some(slot) = leaders.get_mut(p.partition_index as usize) {
                    *slot = if p.error_code == pc::NONE || p.error_code == pc::LEADER_NOT_AVAILABLE
                    {
                        p.leader_id
                    } else {
                        BrokerId(-1)
                    };
                }
            }
            self.topics.insert(name, TopicMeta { leaders });
        }
        Ok(())
    }
}
