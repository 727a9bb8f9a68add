//! Consumer-group offsets read and written without joining the group (what Apache's
//! `Admin.listConsumerGroupOffsets`/`alterConsumerGroupOffsets` do for the checkpoint task),
//! through one offsets-only consumer per group and cluster.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use connect_api::error::{ConnectError, Result};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

pub(super) fn client_config(c: &BTreeMap<String, String>) -> ClientConfig {
    let mut out = ClientConfig::new();
    for (k, v) in c {
        out.set(k, v);
    }
    out
}

/// Consumers that only read or write a group's committed offsets (never join it), one per
/// group, on one cluster.
pub(super) struct GroupOffsets {
    config: BTreeMap<String, String>,
    alias: String,
    timeout: Duration,
    consumers: Mutex<HashMap<String, Arc<BaseConsumer>>>,
}

/// A group's committed offsets: (topic, partition) -> (offset, metadata).
pub(super) type Committed = BTreeMap<(String, i32), (i64, String)>;

impl GroupOffsets {
    pub(super) fn new(config: BTreeMap<String, String>, alias: &str, timeout: Duration) -> Self {
        Self {
            config,
            alias: alias.to_owned(),
            timeout,
            consumers: Mutex::new(HashMap::new()),
        }
    }

    fn consumer(&self, group: &str) -> Result<Arc<BaseConsumer>> {
        let mut consumers = self.consumers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = consumers.get(group) {
            return Ok(c.clone());
        }
        let mut config = client_config(&self.config);
        config
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .set("enable.auto.offset.store", "false");
        let c: BaseConsumer = config.create().map_err(|e| {
            ConnectError::config(format!(
                "failed to create a consumer for group \"{group}\": {e}"
            ))
        })?;
        let c = Arc::new(c);
        consumers.insert(group.to_owned(), c.clone());
        Ok(c)
    }

    /// Topics with their partition counts.
    pub(super) async fn topics(&self) -> Result<BTreeMap<String, i32>> {
        // Metadata needs no group, but librdkafka's consumer needs a `group.id`.
        let c = self.consumer("mm2-metadata")?;
        let (timeout, alias) = (self.timeout, self.alias.clone());
        tokio::task::spawn_blocking(move || {
            let md = c.fetch_metadata(None, timeout).map_err(|e| {
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
                        i32::try_from(t.partitions().len()).unwrap_or(0),
                    )
                })
                .collect())
        })
        .await
        .map_err(|e| ConnectError::fatal(format!("metadata request panicked: {e}")))?
    }

    /// `group`'s committed offsets among `partitions` (those it has none for are left out).
    pub(super) async fn committed(
        &self,
        group: &str,
        partitions: &[(String, i32)],
    ) -> Result<Committed> {
        if partitions.is_empty() {
            return Ok(Committed::new());
        }
        let c = self.consumer(group)?;
        let mut tpl = TopicPartitionList::new();
        for (t, p) in partitions {
            tpl.add_partition(t, *p);
        }
        let (timeout, alias, g) = (self.timeout, self.alias.clone(), group.to_owned());
        tokio::task::spawn_blocking(move || {
            let got = c.committed_offsets(tpl, timeout).map_err(|e| {
                ConnectError::retriable(format!(
                    "failed to list offsets of consumer group \"{g}\" on cluster \"{alias}\": {e}"
                ))
            })?;
            Ok(got
                .elements()
                .iter()
                .filter_map(|e| match e.offset() {
                    Offset::Offset(o) if o >= 0 => Some((
                        (e.topic().to_owned(), e.partition()),
                        (o, e.metadata().to_owned()),
                    )),
                    _ => None,
                })
                .collect())
        })
        .await
        .map_err(|e| ConnectError::fatal(format!("offset request panicked: {e}")))?
    }

    /// Commits `offsets` for `group` (as a simple consumer: generation -1, no member).
    pub(super) async fn commit(&self, group: &str, offsets: &Committed) -> Result<()> {
        let c = self.consumer(group)?;
        let mut tpl = TopicPartitionList::new();
        for ((t, p), (o, metadata)) in offsets {
            tpl.add_partition_offset(t, *p, Offset::Offset(*o))
                .map_err(|e| ConnectError::fatal(format!("bad offset {t}-{p}: {e}")))?;
            if let Some(mut e) = tpl.find_partition(t, *p) {
                e.set_metadata(metadata);
            }
        }
        let (alias, g) = (self.alias.clone(), group.to_owned());
        tokio::task::spawn_blocking(move || {
            c.commit(&tpl, CommitMode::Sync).map_err(|e| {
                ConnectError::retriable(format!(
                    "failed to write offsets of consumer group \"{g}\" on cluster \"{alias}\": {e}"
                ))
            })
        })
        .await
        .map_err(|e| ConnectError::fatal(format!("offset commit panicked: {e}")))?
    }
}
