//! `MirrorCheckpointConnector` and its task: consumer groups' committed offsets on the source
//! translated to the target with the offset syncs ([`OffsetSyncStore`]) and written as
//! Apache's checkpoints to `<source alias>.checkpoints.internal` on the target; with
//! `sync.group.offsets.enabled`, written as the group's offsets on the target too, for groups
//! with no active member there.
//!
//! ```text
//!  connector: list source groups ─ groups/groups.exclude ─ those with offsets on replicated
//!             topics ─ task configs (contiguous slices) ─ every refresh.groups.interval: again
//!  task:      read the checkpoints topic (last checkpoint per group/partition)
//!             ─ offset-syncs reader (background: whole topic, then follows it)
//!             ─ every emit.checkpoints.interval: group offsets on the source ─ translate
//!               ─ newer than the last checkpoint ─ checkpoint records
//!             ─ every sync.group.offsets.interval: translated offsets ─ target group
//!               (Empty: only forward; unknown/Dead: all; active: left alone)
//! ```
//!
//! # Guarantees
//!
//! A translated offset is at or before the copy of the group's next record (see
//! [`super::offset_sync_store`]), so a group moved to the target skips nothing. Nothing is
//! translated before the syncs topic was read to its end once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, ExactlyOnceSupport, SourceConnector, SourceOffsets, SourceTask,
    SourceTaskContext,
};
use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients::ClientKind;
use connect_api::record::{SourcePartition, SourceRecord, json_map};
use rdkafka::consumer::{BaseConsumer, Consumer, StreamConsumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};

use super::admin::Admin;
use super::config::*;
use super::formats::{Checkpoint, OffsetSync};
use super::group_offsets::{Committed, GroupOffsets, client_config};
use super::offset_sync_store::OffsetSyncStore;
use super::typed::*;

pub const GROUP_KEY: &str = "group";
pub const TOPIC_KEY: &str = "topic";
pub const PARTITION_KEY: &str = "partition";

/// Apache's `Checkpoint.connectPartition()`, keys in the Java `HashMap`'s order.
pub fn checkpoint_partition(group: &str, topic: &str, partition: i32) -> SourcePartition {
    let mut m = SourcePartition::with_capacity(3);
    m.insert(PARTITION_KEY.to_owned(), partition.into());
    m.insert(TOPIC_KEY.to_owned(), topic.into());
    m.insert(GROUP_KEY.to_owned(), group.into());
    m
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Apache's `ConnectorUtils.groupPartitions`: `n` contiguous slices, the first ones one longer.
pub fn group_partitions<T: Clone>(items: &[T], n: usize) -> Vec<Vec<T>> {
    let n = n.max(1);
    let per = items.len() / n;
    let leftover = items.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = per + usize::from(i < leftover);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out
}

/// Source groups to checkpoint: the group filter, then groups with offsets on topics the
/// topic filter passes (Apache's `findConsumerGroups`).
async fn find_groups(
    c: &MirrorCheckpointConfig,
    admin: &Admin,
    offsets: &GroupOffsets,
) -> Result<Vec<String>> {
    let topics = offsets.topics().await?;
    let partitions: Vec<(String, i32)> = topics
        .iter()
        .filter(|(t, _)| c.should_replicate_topic(t))
        .flat_map(|(t, n)| (0..*n).map(move |p| (t.clone(), p)))
        .collect();
    let mut groups = Vec::new();
    for g in admin.groups(None).await? {
        let consumer_group = g.protocol_type.is_empty() || g.protocol_type == "consumer";
        if !consumer_group || !c.should_replicate_group(&g.name) {
            continue;
        }
        if !offsets.committed(&g.name, &partitions).await?.is_empty() {
            groups.push(g.name);
        }
    }
    groups.sort();
    Ok(groups)
}

#[derive(Default)]
pub struct MirrorCheckpointConnector {
    config: Option<MirrorCheckpointConfig>,
    groups: Arc<Mutex<Vec<String>>>,
    refresher: Option<tokio::task::JoinHandle<()>>,
}

#[async_trait]
impl SourceConnector for MirrorCheckpointConnector {
    type Task = MirrorCheckpointTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        checkpoint_config_def()
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        validate(config, MirrorConnector::Checkpoint)
    }

    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        let c = MirrorCheckpointConfig::parse(&config)?;
        self.config = Some(c.clone());
        if !c.common.enabled {
            return Ok(());
        }
        let common = &c.common;
        let source = Admin::new(
            &common.client(
                Cluster::Source,
                ClientKind::Admin,
                "checkpoint-source-admin",
            )?,
            &common.source_alias,
            common.admin_timeout,
        )?;
        let target = Admin::new(
            &common.client(
                Cluster::Target,
                ClientKind::Admin,
                "checkpoint-target-admin",
            )?,
            &common.target_alias,
            common.admin_timeout,
        )?;
        target
            .create_compacted_topic(&c.checkpoints_topic(), 1, c.checkpoints_replication_factor)
            .await?;
        let offsets = GroupOffsets::new(
            common.client(
                Cluster::Source,
                ClientKind::Consumer,
                "checkpoint-source-consumer",
            )?,
            &common.source_alias,
            common.admin_timeout,
        );
        let first = find_groups(&c, &source, &offsets).await?;
        tracing::info!(connector = %ctx.connector_name, groups = first.len(), "started checkpointing");
        *self.groups.lock().unwrap_or_else(|p| p.into_inner()) = first;
        if let Some(interval) = c.refresh_groups {
            let groups = self.groups.clone();
            self.refresher = Some(tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = ctx.cancellation.cancelled() => return,
                        () = tokio::time::sleep(interval) => {}
                    }
                    match find_groups(&c, &source, &offsets).await {
                        Ok(now) => {
                            let changed = {
                                let mut g = groups.lock().unwrap_or_else(|p| p.into_inner());
                                let changed = *g != now;
                                *g = now;
                                changed
                            };
                            if changed {
                                tracing::info!(connector = %ctx.connector_name, "consumer groups changed");
                                ctx.request_task_reconfiguration();
                            }
                        }
                        Err(e) => {
                            tracing::warn!(connector = %ctx.connector_name, error = %e, "refreshing consumer groups failed")
                        }
                    }
                }
            }));
        }
        Ok(())
    }

    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        let Some(c) = &self.config else {
            return Ok(Vec::new());
        };
        let groups = self
            .groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if !c.common.enabled || groups.is_empty() || c.emit_checkpoints.is_none() || max_tasks == 0
        {
            return Ok(Vec::new());
        }
        let n = max_tasks.min(groups.len());
        Ok(group_partitions(&groups, n)
            .into_iter()
            .enumerate()
            .map(|(i, gs)| {
                let mut props = c.common.props.clone();
                props.insert(TASK_CONSUMER_GROUPS.to_owned(), gs.join(","));
                props.insert(TASK_INDEX.to_owned(), i.to_string());
                props
            })
            .collect())
    }

    async fn stop(&mut self) -> Result<()> {
        if let Some(h) = self.refresher.take() {
            h.abort();
        }
        Ok(())
    }

    /// Apache's answer (the connector does not say): `exactly.once.support=required` is a
    /// validation error, `requested` runs it in transactions on an exactly-once worker.
    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Unknown
    }

    async fn alter_offsets(&self, _config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        for (partition, offset) in offsets {
            if offset.is_none() {
                continue;
            }
            let ok = partition
                .get(GROUP_KEY)
                .is_some_and(serde_json::Value::is_string)
                && partition
                    .get(TOPIC_KEY)
                    .is_some_and(serde_json::Value::is_string)
                && partition
                    .get(PARTITION_KEY)
                    .and_then(serde_json::Value::as_i64)
                    .is_some();
            if !ok {
                return Err(ConnectError::config(format!(
                    "Source partition {} must contain string values for '{GROUP_KEY}' and '{TOPIC_KEY}' and an integer for '{PARTITION_KEY}'",
                    serde_json::Value::Object(partition.clone())
                )));
            }
        }
        Ok(true)
    }
}

/// Follows the offset-syncs topic into `store`: the whole topic first (then translation may
/// start), then every new sync. Retries while the topic does not exist yet.
async fn follow_offset_syncs(
    config: BTreeMap<String, String>,
    topic: String,
    store: Arc<Mutex<OffsetSyncStore>>,
) {
    loop {
        match follow_once(&config, &topic, &store).await {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(topic = %topic, error = %e, "reading offset syncs failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    }
}

async fn follow_once(
    config: &BTreeMap<String, String>,
    topic: &str,
    store: &Arc<Mutex<OffsetSyncStore>>,
) -> std::result::Result<(), String> {
    let mut c = client_config(config);
    c.set("group.id", "mm2-offset-syncs-reader")
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false");
    let consumer: Arc<StreamConsumer> = Arc::new(c.create().map_err(|e| e.to_string())?);
    let (probe, t) = (consumer.clone(), topic.to_owned());
    let (low, high) =
        tokio::task::spawn_blocking(move || probe.fetch_watermarks(&t, 0, Duration::from_secs(10)))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning)
        .map_err(|e| e.to_string())?;
    consumer.assign(&tpl).map_err(|e| e.to_string())?;
    let lock = |s: &Arc<Mutex<OffsetSyncStore>>| {
        let mut g = s.lock().unwrap_or_else(|p| p.into_inner());
        if high <= low {
            g.set_read_to_end();
        }
        drop(g);
    };
    lock(store);
    loop {
        let m = consumer.recv().await.map_err(|e| e.to_string())?;
        let mut g = store.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(k), Some(v)) = (m.key(), m.payload())
            && let Some(sync) = OffsetSync::decode(k, v)
        {
            g.handle(sync);
        }
        if !g.is_read_to_end() && m.offset() + 1 >= high {
            g.set_read_to_end();
            tracing::info!(topic = %topic, "offset syncs read to the end");
        }
    }
}

/// Reads the checkpoints topic on the target to its end: the last checkpoint of each of
/// `groups`' partitions (Apache's `CheckpointStore`). `None` when it could not be read.
async fn read_checkpoints(
    config: BTreeMap<String, String>,
    topic: String,
    groups: Vec<String>,
    timeout: Duration,
) -> Option<HashMap<String, BTreeMap<(String, i32), Checkpoint>>> {
    tokio::task::spawn_blocking(move || {
        let mut c = client_config(&config);
        c.set("group.id", "mm2-checkpoints-reader")
            .set("enable.auto.commit", "false");
        let consumer: BaseConsumer = c.create().ok()?;
        let (low, high) = consumer.fetch_watermarks(&topic, 0, timeout).ok()?;
        let mut out: HashMap<String, BTreeMap<(String, i32), Checkpoint>> = HashMap::new();
        if high <= low {
            return Some(out);
        }
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&topic, 0, Offset::Beginning)
            .ok()?;
        consumer.assign(&tpl).ok()?;
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            let Some(m) = consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            let m = m.ok()?;
            if let (Some(k), Some(v)) = (m.key(), m.payload())
                && let Some(cp) = Checkpoint::decode(k, v)
                && groups.contains(&cp.group)
            {
                out.entry(cp.group.clone())
                    .or_default()
                    .insert((cp.topic.clone(), cp.partition), cp);
            }
            if m.offset() + 1 >= high {
                return Some(out);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
}

#[derive(Default)]
pub struct MirrorCheckpointTask {
    state: Option<TaskState>,
}

struct TaskState {
    ctx: SourceTaskContext,
    config: MirrorCheckpointConfig,
    groups: Vec<String>,
    store: Arc<Mutex<OffsetSyncStore>>,
    reader: tokio::task::JoinHandle<()>,
    /// The last checkpoint per group and (remote) partition.
    checkpoints: HashMap<String, BTreeMap<(String, i32), Checkpoint>>,
    source: GroupOffsets,
    target: GroupOffsets,
    target_admin: Admin,
    last_group_sync: Instant,
}

impl TaskState {
    /// Apache's `renameTopicPartition`: a topic that came from the target goes back to its
    /// original name; others get the remote name.
    fn rename(&self, topic: &str) -> String {
        let c = &self.config.common;
        if c.policy.topic_source(topic).as_deref() == Some(c.target_alias.as_str()) {
            c.policy.original_topic(topic)
        } else {
            c.policy.format_remote_topic(&c.source_alias, topic)
        }
    }

    fn is_more_recent(&self, cp: &Checkpoint) -> bool {
        match self
            .checkpoints
            .get(&cp.group)
            .and_then(|m| m.get(&(cp.topic.clone(), cp.partition)))
        {
            None => true,
            Some(last) => {
                cp.upstream_offset < last.upstream_offset
                    || cp.downstream_offset > last.downstream_offset
            }
        }
    }

    async fn checkpoints_for_group(
        &mut self,
        group: &str,
        partitions: &[(String, i32)],
    ) -> Result<Vec<Checkpoint>> {
        let upstream = self.source.committed(group, partitions).await?;
        let mut out = Vec::new();
        for ((topic, partition), (offset, metadata)) in upstream {
            let translated = self
                .store
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .translate_downstream(&topic, partition, offset);
            let Some(downstream) = translated.filter(|d| *d >= 0) else {
                continue;
            };
            let cp = Checkpoint {
                group: group.to_owned(),
                topic: self.rename(&topic),
                partition,
                upstream_offset: offset,
                downstream_offset: downstream,
                metadata,
            };
            if self.is_more_recent(&cp) {
                out.push(cp);
            }
        }
        for cp in &out {
            self.checkpoints
                .entry(group.to_owned())
                .or_default()
                .insert((cp.topic.clone(), cp.partition), cp.clone());
        }
        Ok(out)
    }

    /// Apache's `syncGroupOffset`: translated offsets written to target groups without active
    /// members, never moving an idle group backwards.
    async fn sync_group_offsets(&mut self) {
        for group in self.groups.clone() {
            let Some(checkpoints) = self.checkpoints.get(&group) else {
                continue;
            };
            let converted: Committed = checkpoints
                .iter()
                .map(|(tp, cp)| (tp.clone(), (cp.downstream_offset, cp.metadata.clone())))
                .collect();
            let state = match self.target_admin.groups(Some(&group)).await {
                Ok(list) => list.into_iter().next().map(|g| g.state).unwrap_or_default(),
                Err(e) => {
                    tracing::warn!(group = %group, error = %e, "describing a target group failed");
                    continue;
                }
            };
            let to_sync: Committed = match state.as_str() {
                "Empty" => {
                    let partitions: Vec<(String, i32)> = converted.keys().cloned().collect();
                    let current = match self.target.committed(&group, &partitions).await {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::warn!(group = %group, error = %e, "reading a target group's offsets failed");
                            continue;
                        }
                    };
                    converted
                        .into_iter()
                        .filter(|(tp, (o, _))| current.get(tp).is_none_or(|(have, _)| have < o))
                        .collect()
                }
                "Dead" | "" => converted,
                _ => continue,
            };
            if to_sync.is_empty() {
                continue;
            }
            match self.target.commit(&group, &to_sync).await {
                Ok(()) => {
                    tracing::info!(group = %group, partitions = to_sync.len(), "synced group offsets to the target")
                }
                Err(e) => {
                    tracing::warn!(group = %group, error = %e, "unable to sync offsets of the group (likely active on the target)")
                }
            }
        }
    }
}

#[async_trait]
impl SourceTask for MirrorCheckpointTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let c = MirrorCheckpointConfig::parse(&config)?;
        let groups: Vec<String> = config
            .get(TASK_CONSUMER_GROUPS)
            .map(|s| {
                s.split(',')
                    .map(|g| g.trim().to_owned())
                    .filter(|g| !g.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let common = &c.common;
        let target_consumer = common.client(
            Cluster::Target,
            ClientKind::Consumer,
            "checkpoints-target-consumer",
        )?;
        let checkpoints = read_checkpoints(
            target_consumer.clone(),
            c.checkpoints_topic(),
            groups.clone(),
            common.admin_timeout,
        )
        .await;
        let loaded = checkpoints.is_some();
        let store = Arc::new(Mutex::new(OffsetSyncStore::new(!loaded)));
        let sync_cluster = c.offset_syncs_cluster();
        let role = if sync_cluster == Cluster::Source {
            "offset-syncs-source-consumer"
        } else {
            "offset-syncs-target-consumer"
        };
        let reader = tokio::spawn(follow_offset_syncs(
            common.client(sync_cluster, ClientKind::Consumer, role)?,
            c.offset_syncs_topic(),
            store.clone(),
        ));
        let source = GroupOffsets::new(
            common.client(
                Cluster::Source,
                ClientKind::Consumer,
                "checkpoint-source-consumer",
            )?,
            &common.source_alias,
            common.admin_timeout,
        );
        let target = GroupOffsets::new(target_consumer, &common.target_alias, common.admin_timeout);
        let target_admin = Admin::new(
            &common.client(
                Cluster::Target,
                ClientKind::Admin,
                "checkpoint-target-admin",
            )?,
            &common.target_alias,
            common.admin_timeout,
        )?;
        tracing::info!(connector = %ctx.connector_name, task = ctx.task_id, groups = ?groups, checkpoints_loaded = loaded, "checkpointing");
        self.state = Some(TaskState {
            ctx,
            config: c,
            groups,
            store,
            reader,
            checkpoints: checkpoints.unwrap_or_default(),
            source,
            target,
            target_admin,
            last_group_sync: Instant::now(),
        });
        Ok(())
    }

    fn commit_record_reads_data(&self) -> bool {
        false
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| ConnectError::fatal("MirrorCheckpointTask polled before start"))?;
        let interval = state
            .config
            .emit_checkpoints
            .unwrap_or(Duration::from_secs(60));
        if state.ctx.sleep(interval).await {
            return Ok(Vec::new());
        }
        if !state
            .store
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_read_to_end()
        {
            return Ok(Vec::new());
        }
        let topics = match state.source.topics().await {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "failure polling consumer state for checkpoints");
                return Ok(Vec::new());
            }
        };
        let partitions: Vec<(String, i32)> = topics
            .iter()
            .filter(|(t, _)| state.config.should_replicate_topic(t))
            .flat_map(|(t, n)| (0..*n).map(move |p| (t.clone(), p)))
            .collect();
        let timestamp = now_ms();
        let topic = state.config.checkpoints_topic();
        let mut records = Vec::new();
        for group in state.groups.clone() {
            match state.checkpoints_for_group(&group, &partitions).await {
                Ok(cps) => records.extend(cps.into_iter().map(|cp| {
                    SourceRecord::new(
                        checkpoint_partition(&cp.group, &cp.topic, cp.partition),
                        json_map("offset", 0),
                        topic.clone(),
                        Some(Schema::bytes()),
                        Value::Bytes(cp.value()),
                    )
                    .with_key(Some(Schema::bytes()), Value::Bytes(cp.key()))
                    .with_kafka_partition(0)
                    .with_timestamp(timestamp)
                })),
                Err(e) => {
                    tracing::error!(group = %group, error = %e, "error querying offsets for consumer group")
                }
            }
        }
        if let Some(every) = state.config.sync_group_offsets
            && state.last_group_sync.elapsed() >= every
        {
            state.last_group_sync = Instant::now();
            state.sync_group_offsets().await;
        }
        Ok(records)
    }

    async fn stop(&mut self) -> Result<()> {
        if let Some(s) = self.state.take() {
            s.reader.abort();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_sliced_as_apache() {
        let g: Vec<i32> = (0..5).collect();
        assert_eq!(group_partitions(&g, 2), vec![vec![0, 1, 2], vec![3, 4]]);
        assert_eq!(group_partitions(&g, 5).len(), 5);
    }

    #[test]
    fn checkpoint_partitions_are_apaches() {
        assert_eq!(
            serde_json::to_string(&checkpoint_partition("g", "a.t", 1)).unwrap(),
            r#"{"partition":1,"topic":"a.t","group":"g"}"#
        );
    }
}
