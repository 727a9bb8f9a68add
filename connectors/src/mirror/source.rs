//! `MirrorSourceConnector` and `MirrorSourceTask`: topics of the source cluster copied to
//! remote topics of the target cluster, record by record (key, value, headers, timestamp and
//! partition kept as bytes), with Apache's source partitions `{"cluster","partition","topic"}`
//! and offsets `{"offset"}`, so an Apache deployment's offsets carry over both ways.
//!
//! ```text
//!  connector: list source topics ─ filter (topics, topics.exclude, internal, cycles)
//!             ─ create remote topics / partitions on the target ─ task configs
//!             (partitions round-robin) ─ every refresh.topics.interval.seconds: again,
//!             and a task reconfiguration when the set changed
//!  task:      assign + seek (stored offset + 1) ─ poll ─ records ─ runtime (transaction)
//!             ─ commit_record: offset syncs ─ commit: delayed syncs promoted
//! ```
//!
//! # Guarantees
//!
//! - With `exactly.once.support=required` the records and their source offsets are written
//!   in one transaction by the runtime; the source consumer must read `read_committed`
//!   (validated), so aborted source transactions are not copied.
//! - A task resumes at its stored offset + 1 per partition; partitions without one start at
//!   `auto.offset.reset` (`earliest` unless configured), as Apache's task.
//!
//! # Errors
//!
//! - Keys this worker does not implement, equal aliases and unknown policies are validation
//!   errors. A source cluster the connector cannot list within `admin.timeout.ms` fails the
//!   connector; a task whose source cluster keeps failing (unreachable, refused credentials)
//!   for `admin.timeout.ms` fails with the client's last error event, not retriable, so it
//!   is FAILED (Apache's task logs and keeps polling); the worker's `auto.restart.*`
//!   restarts it.
//! - Topic ACLs are synced by [`super::acls`]; its failures are logged, never fatal.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, ExactlyOnceSupport, RecordMetadata, SourceConnector, SourceOffsets,
    SourceTask, SourceTaskContext,
};
use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::kafka_clients::ClientKind;
use connect_api::record::{Headers, SourcePartition, SourceRecord, json_map};
use futures::FutureExt;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{BorrowedMessage, Headers as _, Message};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::acls::AclSync;
use super::admin::{Admin, LastError, TopicConfigs};
use super::config::*;
use super::offset_syncs::OffsetSyncWriter;
use super::typed::*;

/// Partition map keys (Apache's `MirrorUtils`).
pub const CLUSTER_KEY: &str = "cluster";
pub const TOPIC_KEY: &str = "topic";
pub const PARTITION_KEY: &str = "partition";
pub const OFFSET_KEY: &str = "offset";

/// Apache's `wrapPartition`, in the key order of the `HashMap` Java fills (the offsets
/// topic's key bytes must be the same for Apache's offsets to be found here and back).
pub fn wrap_partition(alias: &str, topic: &str, partition: i32) -> SourcePartition {
    let mut m = SourcePartition::with_capacity(3);
    m.insert(CLUSTER_KEY.to_owned(), alias.into());
    m.insert(PARTITION_KEY.to_owned(), partition.into());
    m.insert(TOPIC_KEY.to_owned(), topic.into());
    m
}

fn unwrap_partition(p: &SourcePartition) -> Option<(&str, i32)> {
    let topic = p.get(TOPIC_KEY)?.as_str()?;
    let partition = i32::try_from(p.get(PARTITION_KEY)?.as_i64()?).ok()?;
    Some((topic, partition))
}

/// `topic-partition` as Java's `TopicPartition.toString`, and back (split at the last `-`).
pub fn encode_tp(topic: &str, partition: i32) -> String {
    format!("{topic}-{partition}")
}

pub fn decode_tp(s: &str) -> Option<(String, i32)> {
    let (topic, partition) = s.trim().rsplit_once('-')?;
    Some((topic.to_owned(), partition.parse().ok()?))
}

/// What the connector knows of the two clusters, shared with its refresh loop.
#[derive(Default)]
struct Known {
    /// Source topic-partitions to replicate, sorted.
    source: Vec<(String, i32)>,
}

#[derive(Default)]
pub struct MirrorSourceConnector {
    config: Option<MirrorSourceConfig>,
    known: Arc<Mutex<Known>>,
    refresher: Option<tokio::task::JoinHandle<()>>,
    config_sync: Option<tokio::task::JoinHandle<()>>,
    acl_sync: Option<tokio::task::JoinHandle<()>>,
}

fn lock(known: &Mutex<Known>) -> std::sync::MutexGuard<'_, Known> {
    known.lock().unwrap_or_else(|p| p.into_inner())
}

/// The admin side of the connector: one refresh of topics and remote topics.
struct Refresher {
    config: MirrorSourceConfig,
    source: Admin,
    target: Admin,
}

impl Refresher {
    /// Source topic-partitions to replicate, after creating what the target lacks.
    async fn refresh(&self) -> Result<Vec<(String, i32)>> {
        let c = &self.config;
        let source_topics: BTreeMap<String, i32> = self
            .source
            .topic_partitions()
            .await?
            .into_iter()
            .filter(|(t, _)| c.should_replicate_topic(t))
            .collect();
        let target_topics = self.target.topic_partitions().await?;
        for (topic, &count) in &source_topics {
            let remote = c.policy.format_remote_topic(&c.source_alias, topic);
            match target_topics.get(&remote) {
                None => {
                    let configs = if c.sync_topic_configs {
                        self.source
                            .replicable_configs(topic, &c.config_properties_exclude)
                            .await?
                    } else {
                        TopicConfigs::new()
                    };
                    if self
                        .target
                        .create_topic(&remote, count, c.replication_factor, &configs)
                        .await?
                    {
                        tracing::info!(topic = %remote, partitions = count, "created remote topic");
                    }
                }
                Some(&have) if have < count => {
                    self.target.create_partitions(&remote, count).await?;
                    tracing::info!(topic = %remote, partitions = count, "increased remote topic partitions");
                }
                Some(_) => {}
            }
        }
        Ok(source_topics
            .into_iter()
            .flat_map(|(t, n)| (0..n).map(move |p| (t.clone(), p)))
            .collect())
    }
}

impl Refresher {
    /// Apache's `syncTopicConfigs`: every remote topic of a replicated topic gets the source
    /// topic's replicable configs. Apache alters them incrementally (set the source's, delete
    /// those at their default there); with librdkafka's AlterConfigs, which replaces the set,
    /// the target's own settings of excluded properties (`config.properties.exclude`) are
    /// written back with them, which leaves the same configs.
    async fn sync_configs(&self) -> Result<()> {
        let c = &self.config;
        let source_topics = self.source.topic_partitions().await?;
        let target_topics = self.target.topic_partitions().await?;
        for topic in source_topics.keys().filter(|t| c.should_replicate_topic(t)) {
            let remote = c.policy.format_remote_topic(&c.source_alias, topic);
            if !target_topics.contains_key(&remote) {
                continue;
            }
            let mut wanted = self
                .source
                .replicable_configs(topic, &c.config_properties_exclude)
                .await?;
            let current = self.target.topic_overrides(&remote).await?;
            for (k, v) in &current {
                if c.config_properties_exclude.is_match(k) {
                    wanted.insert(k.clone(), v.clone());
                }
            }
            if wanted != current {
                self.target.set_topic_configs(&remote, &wanted).await?;
                tracing::info!(topic = %remote, "synced topic configs from the source");
            }
        }
        Ok(())
    }
}

#[async_trait]
impl SourceConnector for MirrorSourceConnector {
    type Task = MirrorSourceTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        source_config_def()
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        validate(config, MirrorConnector::Source)
    }

    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        let c = MirrorSourceConfig::parse(&config)?;
        self.config = Some(c.clone());
        if !c.enabled {
            return Ok(());
        }

        let source = Admin::new(
            &c.client(
                Cluster::Source,
                ClientKind::Admin,
                "replication-source-admin",
            )?,
            &c.source_alias,
            c.admin_timeout,
        )?;
        let target = Admin::new(
            &c.client(
                Cluster::Target,
                ClientKind::Admin,
                "replication-target-admin",
            )?,
            &c.target_alias,
            c.admin_timeout,
        )?;
        if c.emit_offset_syncs {
            let cluster = c.offset_syncs_cluster();
            let role = if cluster == Cluster::Source {
                "offset-syncs-source-admin"
            } else {
                "offset-syncs-target-admin"
            };
            let admin = Admin::new(
                &c.client(cluster, ClientKind::Admin, role)?,
                &c.source_alias,
                c.admin_timeout,
            )?;
            admin
                .explained(
                    admin
                        .create_compacted_topic(
                            &c.offset_syncs_topic(),
                            1,
                            c.offset_syncs_replication_factor,
                        )
                        .await,
                )
                .await?;
        }
        let refresher = Refresher {
            config: c.clone(),
            source,
            target,
        };
        let first = match refresher.refresh().await {
            Ok(first) => first,
            // Which cluster failed is in the message; both are asked why.
            Err(e) => {
                let e = refresher
                    .source
                    .explained(Err::<(), _>(e))
                    .await
                    .unwrap_err();
                return Err(refresher
                    .target
                    .explained(Err::<(), _>(e))
                    .await
                    .unwrap_err());
            }
        };
        tracing::info!(connector = %ctx.connector_name, partitions = first.len(), "started replicating");
        lock(&self.known).source = first;
        let refresher = Arc::new(refresher);
        if c.sync_topic_configs {
            let (r, cancel, name) = (
                refresher.clone(),
                ctx.cancellation.clone(),
                ctx.connector_name.clone(),
            );
            let every = c.sync_topic_configs_interval.max(Duration::from_secs(1));
            self.config_sync = Some(tokio::spawn(async move {
                loop {
                    if let Err(e) = r.sync_configs().await {
                        tracing::warn!(connector = %name, error = %e, "syncing topic configs failed");
                    }
                    tokio::select! {
                        () = cancel.cancelled() => return,
                        () = tokio::time::sleep(every) => {}
                    }
                }
            }));
        }
        if let Some(every) = c.sync_topic_acls {
            let (sync, cancel, name) = (
                AclSync::new(&c),
                ctx.cancellation.clone(),
                ctx.connector_name.clone(),
            );
            let every = every.max(Duration::from_secs(1));
            self.acl_sync = Some(tokio::spawn(async move {
                loop {
                    match sync.sync().await {
                        Ok(Some(n)) => {
                            tracing::debug!(connector = %name, bindings = n, "synced topic ACLs")
                        }
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!(connector = %name, error = %e, "syncing topic ACLs failed")
                        }
                    }
                    tokio::select! {
                        () = cancel.cancelled() => return,
                        () = tokio::time::sleep(every) => {}
                    }
                }
            }));
        }
        if let Some(interval) = c.refresh_topics {
            let known = self.known.clone();
            self.refresher = Some(tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = ctx.cancellation.cancelled() => return,
                        () = tokio::time::sleep(interval) => {}
                    }
                    match refresher.refresh().await {
                        Ok(now) => {
                            let changed = {
                                let mut k = lock(&known);
                                let changed = k.source != now;
                                k.source = now;
                                changed
                            };
                            if changed {
                                tracing::info!(connector = %ctx.connector_name, "source topic-partitions changed");
                                ctx.request_task_reconfiguration();
                            }
                        }
                        Err(e) => {
                            tracing::warn!(connector = %ctx.connector_name, error = %e, "refreshing topics failed")
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
        let known = lock(&self.known);
        if !c.enabled || known.source.is_empty() || max_tasks == 0 {
            return Ok(Vec::new());
        }
        let n = max_tasks.min(known.source.len());
        let mut by_task: Vec<Vec<String>> = vec![Vec::new(); n];
        for (i, (t, p)) in known.source.iter().enumerate() {
            by_task[i % n].push(encode_tp(t, *p));
        }
        Ok(by_task
            .into_iter()
            .enumerate()
            .map(|(i, tps)| {
                let mut props = c.props.clone();
                props.insert(TASK_TOPIC_PARTITIONS.to_owned(), tps.join(","));
                props.insert(TASK_INDEX.to_owned(), i.to_string());
                props
            })
            .collect())
    }

    async fn stop(&mut self) -> Result<()> {
        for h in [
            self.refresher.take(),
            self.config_sync.take(),
            self.acl_sync.take(),
        ]
        .into_iter()
        .flatten()
        {
            h.abort();
        }
        Ok(())
    }

    fn exactly_once_support(&self, config: &ConfigMap) -> ExactlyOnceSupport {
        if consumer_uses_read_committed(config) {
            ExactlyOnceSupport::Supported
        } else {
            ExactlyOnceSupport::Unsupported
        }
    }

    /// Apache's checks: partitions `{"cluster": string, "topic": string, "partition": int}`,
    /// offsets `{"offset": long >= 0}` (or null).
    async fn alter_offsets(&self, _config: &ConfigMap, offsets: &SourceOffsets) -> Result<bool> {
        for (partition, offset) in offsets {
            let Some(offset) = offset else { continue };
            for k in [CLUSTER_KEY, TOPIC_KEY] {
                if !partition.get(k).is_some_and(serde_json::Value::is_string) {
                    return Err(ConnectError::config(format!(
                        "Source partition {} must contain a string value for key '{k}'",
                        serde_json::Value::Object(partition.clone())
                    )));
                }
            }
            if partition
                .get(PARTITION_KEY)
                .and_then(serde_json::Value::as_i64)
                .and_then(|p| i32::try_from(p).ok())
                .is_none()
            {
                return Err(ConnectError::config(format!(
                    "Source partition {} must contain an integer value for key '{PARTITION_KEY}'",
                    serde_json::Value::Object(partition.clone())
                )));
            }
            if offset
                .get(OFFSET_KEY)
                .and_then(serde_json::Value::as_i64)
                .is_none_or(|o| o < 0)
            {
                return Err(ConnectError::config(format!(
                    "Offset for source partition {} must contain a non-negative integer value for key '{OFFSET_KEY}'",
                    serde_json::Value::Object(partition.clone())
                )));
            }
        }
        Ok(true)
    }
}

/// Copies the records of its assigned source partitions.
#[derive(Default)]
pub struct MirrorSourceTask {
    state: Option<TaskState>,
}

struct TaskState {
    ctx: SourceTaskContext,
    config: MirrorSourceConfig,
    /// Its context keeps the client's last error event: a refused login or an unreachable
    /// broker is reported there, while polls and metadata requests only time out.
    consumer: Arc<StreamConsumer<LastError>>,
    max_records: usize,
    syncs: Option<OffsetSyncWriter>,
    /// Remote topic per source topic (formatting on every record would allocate twice).
    remote: BTreeMap<String, String>,
    /// Source partition map per topic and partition, built once and cloned for each record
    /// (a clone copies the map's entries without hashing its keys again).
    partitions: HashMap<String, HashMap<i32, SourcePartition>>,
    /// Since when the source cluster has been failing, and the last error.
    failing: Option<(Instant, String)>,
}

const DEFAULT_MAX_POLL_RECORDS: usize = 500;

/// The source consumer's `queued.min.messages` unless configured (librdkafka's default is
/// 100,000 per partition).
const DEFAULT_QUEUED_MIN_MESSAGES: usize = 10_000;

/// The source consumer's `fetch.queue.backoff.ms` unless configured (librdkafka's default is
/// 1000).
const DEFAULT_FETCH_QUEUE_BACKOFF_MS: u64 = 10;

impl TaskState {
    fn convert(&mut self, m: &BorrowedMessage<'_>) -> SourceRecord {
        let topic = m.topic();
        let remote = match self.remote.get(topic) {
            Some(r) => r.clone(),
            None => {
                let r = self
                    .config
                    .policy
                    .format_remote_topic(&self.config.source_alias, topic);
                self.remote.insert(topic.to_owned(), r.clone());
                r
            }
        };
        let mut headers = Headers::new();
        if let Some(hs) = m.headers() {
            for h in hs.iter() {
                let value = h.value.map_or(Value::Null, |v| Value::Bytes(v.to_vec()));
                headers.add(h.key, Some(Schema::optional_bytes()), value);
            }
        }
        let value = m
            .payload()
            .map_or(Value::Null, |v| Value::Bytes(v.to_vec()));
        let value_schema = if matches!(value, Value::Null) {
            Schema::optional_bytes()
        } else {
            Schema::bytes()
        };
        let alias = &self.config.source_alias;
        let by_partition = match self.partitions.get_mut(topic) {
            Some(p) => p,
            None => self.partitions.entry(topic.to_owned()).or_default(),
        };
        let partition = by_partition
            .entry(m.partition())
            .or_insert_with(|| wrap_partition(alias, topic, m.partition()))
            .clone();
        let mut record = SourceRecord::new(
            partition,
            json_map(OFFSET_KEY, m.offset()),
            remote,
            Some(value_schema),
            value,
        )
        .with_key(
            Some(Schema::optional_bytes()),
            m.key().map_or(Value::Null, |k| Value::Bytes(k.to_vec())),
        )
        .with_kafka_partition(m.partition());
        if let Some(ts) = m.timestamp().to_millis() {
            record = record.with_timestamp(ts);
        }
        record.headers = headers;
        record
    }

    /// `message`, with the client's last error event when it adds something (why a request
    /// timed out: "SASL authentication error: ...", "Connection refused"...).
    fn explained(&self, message: String) -> String {
        match self.consumer.context().get() {
            Some(why) if !message.contains(&why) => format!("{message} ({why})"),
            _ => message,
        }
    }

    /// Records an error of the source cluster; fails once it lasted `admin.timeout.ms`.
    fn on_error(&mut self, e: &KafkaError) -> Result<()> {
        let now = Instant::now();
        let since = self.failing.as_ref().map_or(now, |(t, _)| *t);
        let message = self.explained(e.to_string());
        tracing::warn!(connector = %self.ctx.connector_name, task = self.ctx.task_id, error = %message, "failure polling the source cluster");
        self.failing = Some((since, message.clone()));
        if now.duration_since(since) >= self.config.admin_timeout {
            return Err(self.failed(since, &message));
        }
        Ok(())
    }

    /// The error that fails the task once the source cluster failed for `admin.timeout.ms`:
    /// not retriable (the runtime would retry a retriable one for ever and the task would
    /// stay RUNNING), so the task is FAILED with the reason and the worker's automatic
    /// restart (`auto.restart.*`) brings it back.
    fn failed(&self, since: Instant, message: &str) -> ConnectError {
        ConnectError::fatal(format!(
            "source cluster \"{}\" failing for {} s: {message}",
            self.config.source_alias,
            since.elapsed().as_secs()
        ))
    }

    /// The source cluster answered: no failure, no error event pending.
    fn recovered(&mut self) {
        self.failing = None;
        self.consumer.context().clear();
    }

    /// After a poll that got nothing: a client error event (a refused login, no broker
    /// reachable: librdkafka reports these only as events, polls just stay empty) starts a
    /// failure; while failing, asks the source cluster for metadata: an answer clears it.
    async fn probe(&mut self) -> Result<()> {
        if self.failing.is_none()
            && let Some(why) = self.consumer.context().get()
        {
            tracing::warn!(connector = %self.ctx.connector_name, task = self.ctx.task_id, error = %why, "source cluster client error");
            self.failing = Some((Instant::now(), why));
        }
        let Some((since, last)) = self.failing.clone() else {
            return Ok(());
        };
        let consumer = self.consumer.clone();
        let probe = tokio::task::spawn_blocking(move || {
            consumer
                .fetch_metadata(None, Duration::from_secs(2))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match probe {
            Ok(()) => {
                self.recovered();
                Ok(())
            }
            Err(e) => {
                let message = if e.is_empty() {
                    last
                } else {
                    self.explained(e)
                };
                self.failing = Some((since, message.clone()));
                if since.elapsed() >= self.config.admin_timeout {
                    Err(self.failed(since, &message))
                } else {
                    Ok(())
                }
            }
        }
    }
}

#[async_trait]
impl SourceTask for MirrorSourceTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let c = MirrorSourceConfig::parse(&config)?;
        let tps: Vec<(String, i32)> = config
            .get(TASK_TOPIC_PARTITIONS)
            .map(|s| {
                s.split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(decode_tp)
                    .collect::<Option<Vec<_>>>()
            })
            .unwrap_or(Some(Vec::new()))
            .ok_or_else(|| {
                ConnectError::config(format!(
                    "{TASK_TOPIC_PARTITIONS} is not a list of topic-partitions"
                ))
            })?;
        let mut client = ClientConfig::new();
        // Java consumers read uncommitted records unless told otherwise (librdkafka's default
        // is read_committed): Apache's behaviour, and the exactly-once check, rely on it.
        client.set("isolation.level", "read_uncommitted");
        client.set("auto.offset.reset", "earliest");
        // librdkafka prefetches until each partition has `queued.min.messages` records queued
        // (100,000 by default: a whole 12-partition topic of 100-byte records, ~300 MiB, in
        // `mm2_bench`); Java's consumer buffers about one fetch. Lower, unless configured
        // (`source.consumer.queued.min.messages`): a few polls' worth per partition.
        client.set(
            "queued.min.messages",
            DEFAULT_QUEUED_MIN_MESSAGES.to_string(),
        );
        // A partition whose queue is full is fetched again only after `fetch.queue.backoff.ms`
        // (1000 ms by default): with the lower threshold that second capped each partition at
        // ~10,000 records/s (mm2_bench: ~90k records/s in all). 10 ms, unless configured.
        client.set(
            "fetch.queue.backoff.ms",
            DEFAULT_FETCH_QUEUE_BACKOFF_MS.to_string(),
        );
        // No group: partitions are assigned, offsets live in Connect's offsets topic.
        client.set("group.id", format!("{}-{}", c.entity_label(), ctx.task_id));
        for (k, v) in c.client(
            Cluster::Source,
            ClientKind::Consumer,
            "replication-consumer",
        )? {
            client.set(k, v);
        }
        client.set("enable.auto.commit", "false");
        client.set("enable.auto.offset.store", "false");
        client.set("enable.partition.eof", "false");
        let consumer: StreamConsumer<LastError> = client
            .create_with_context(LastError::default())
            .map_err(|e| {
                ConnectError::config(format!("failed to create the source consumer: {e}"))
            })?;
        let max_records = client_keys(&config, Cluster::Source, ClientKind::Consumer)
            .get("max.poll.records")
            .and_then(|(_, v)| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_POLL_RECORDS);
        let partitions: Vec<SourcePartition> = tps
            .iter()
            .map(|(t, p)| wrap_partition(&c.source_alias, t, *p))
            .collect();
        let stored = ctx.offset_storage_reader().offsets(&partitions).await?;
        // Partitions without a stored offset start where `auto.offset.reset` says, directly:
        // Apache's consumer has no group, so it never reads committed offsets; librdkafka's
        // (which needs a `group.id`) would ask the group coordinator for them, and a
        // NotCoordinator answer (a just-started cluster) left such partitions unfetched.
        let unstored = match client.get("auto.offset.reset").map(str::trim) {
            Some("earliest" | "smallest" | "beginning") => Offset::Beginning,
            Some("latest" | "largest" | "end") => Offset::End,
            _ => Offset::Invalid,
        };
        let mut assignment = TopicPartitionList::new();
        for ((t, p), (_, offset)) in tps.iter().zip(stored) {
            let next = offset
                .and_then(|o| o.get(OFFSET_KEY).and_then(serde_json::Value::as_i64))
                .filter(|o| *o >= 0)
                .map_or(unstored, |o| Offset::Offset(o + 1));
            assignment
                .add_partition_offset(t, *p, next)
                .map_err(|e| ConnectError::fatal(format!("failed to assign {t}-{p}: {e}")))?;
        }
        consumer.assign(&assignment).map_err(|e| {
            ConnectError::fatal(format!("failed to assign the source partitions: {e}"))
        })?;
        tracing::info!(connector = %ctx.connector_name, task = ctx.task_id, partitions = tps.len(), "replicating {}->{}", c.source_alias, c.target_alias);
        let syncs = if c.emit_offset_syncs {
            let role = if c.offset_syncs_cluster() == Cluster::Source {
                "offset-syncs-source-producer"
            } else {
                "offset-syncs-target-producer"
            };
            Some(OffsetSyncWriter::new(
                &c.client(c.offset_syncs_cluster(), ClientKind::Producer, role)?,
                c.offset_syncs_topic(),
                c.offset_lag_max,
            )?)
        } else {
            None
        };
        self.state = Some(TaskState {
            ctx,
            config: c,
            consumer: Arc::new(consumer),
            max_records,
            syncs,
            remote: BTreeMap::new(),
            partitions: HashMap::new(),
            failing: None,
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
            .ok_or_else(|| ConnectError::fatal("MirrorSourceTask polled before start"))?;
        let consumer = state.consumer.clone();
        let first = tokio::select! {
            () = state.ctx.cancellation.cancelled() => return Ok(Vec::new()),
            () = tokio::time::sleep(state.config.poll_timeout) => None,
            m = consumer.recv() => Some(m),
        };
        let mut batch = Vec::new();
        match first {
            None => {
                state.probe().await?;
                return Ok(batch);
            }
            Some(Err(e)) => {
                state.on_error(&e)?;
                return Ok(batch);
            }
            Some(Ok(m)) => {
                state.recovered();
                batch.reserve(state.max_records.min(1024));
                batch.push(state.convert(&m));
            }
        }
        while batch.len() < state.max_records {
            match consumer.recv().now_or_never() {
                Some(Ok(m)) => batch.push(state.convert(&m)),
                Some(Err(e)) => {
                    state.on_error(&e)?;
                    break;
                }
                None => break,
            }
        }
        Ok(batch)
    }

    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<&RecordMetadata>,
    ) -> Result<()> {
        let (Some(state), Some(metadata)) = (self.state.as_mut(), metadata) else {
            return Ok(());
        };
        let Some(syncs) = state.syncs.as_mut() else {
            return Ok(());
        };
        let upstream = record
            .source_offset
            .as_ref()
            .and_then(|o| o.get(OFFSET_KEY))
            .and_then(serde_json::Value::as_i64);
        if let (Some((topic, partition)), Some(upstream)) =
            (unwrap_partition(&record.source_partition), upstream)
        {
            syncs.maybe_queue(topic, partition, upstream, metadata.offset);
            syncs.fire_pending();
        }
        Ok(())
    }

    async fn commit(&mut self) -> Result<()> {
        if let Some(syncs) = self.state.as_mut().and_then(|s| s.syncs.as_mut()) {
            syncs.promote_delayed();
            syncs.fire_pending();
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<()> {
        self.state = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_partitions_round_trip_as_java_names_them() {
        assert_eq!(encode_tp("a-b", 3), "a-b-3");
        assert_eq!(decode_tp("a-b-3"), Some(("a-b".to_owned(), 3)));
        assert_eq!(decode_tp("nope"), None);
    }

    #[test]
    fn partition_maps_are_apaches() {
        let p = wrap_partition("us", "orders", 2);
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"cluster":"us","partition":2,"topic":"orders"}"#
        );
        assert_eq!(unwrap_partition(&p), Some(("orders", 2)));
    }
}
