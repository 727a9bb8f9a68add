//! `ConfigBackingStore`: the config topic as the cluster's shared view (Java
//! `KafkaConfigBackingStore`).
//!
//! ```text
//!  herder ──put_*──▶ ConfigWriter (plain | transactional) ──▶ config topic (1 partition)
//!                                                               │
//!  herder ◀─ updates (broadcast) ◀─ ConfigStateMachine ◀────────┘ consumer thread
//!         ◀─ snapshot() = Arc<ClusterConfigState>
//! ```
//!
//! # Guarantees
//!
//! - Privileged writes (connector configs, task configs + commit, task-count records, session
//!   key, restart requests) return only after the store has read its own write back, so the
//!   snapshot taken afterwards reflects it. Target states and log levels only wait for the ack.
//! - Task configs are written before their commit record, in a separate send; readers never see
//!   a commit before the task records it covers (one partition, acks=all, idempotent producer).
//! - With a transactional writer (`transactional.id = connect-cluster-<group.id>`), a leader
//!   that lost leadership is fenced by the new leader's `init_transactions`; its later writes
//!   fail with [`StorageError::Fenced`] instead of landing.
//!
//! # Errors
//!
//! Every write has Connect's 30 s budget (read before, send, read after) and fails with
//! [`StorageError::Timeout`] when it runs out. A failed transactional write drops the writer;
//! call [`ConfigBackingStore::claim_write_privileges`] again before the next privileged write.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use connect_api::config::ConfigMap;
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, Producer};
use tokio::sync::{broadcast, watch};

use super::config_codec::{self as codec, ClusterConfigState, ConfigStateMachine, ConfigUpdate};
use super::local_log::LocalLog;
use super::log::{
    self, ConsumedRecord, InternalLog, KafkaBasedLog, LogConfig, RawRecord, RecordCallback,
};
use super::topics::{InternalTopic, TopicSettings, ensure_topic};
use super::types::{ConnectorTaskId, RestartRequest, SessionKey, TargetState};
use super::{StorageError, with_timeout};
use crate::cluster::producer::{OutRecord, TransactionalProducer};
use crate::cluster::producer_settings;
use crate::security::KafkaSecurity;

/// Java's `READ_WRITE_TOTAL_TIMEOUT_MS`: budget of one write including the reads around it.
pub const READ_WRITE_TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
/// Prefix of the leader's transactional id: `connect-cluster-<group.id>`.
pub const LEADER_TRANSACTIONAL_ID_PREFIX: &str = "connect-cluster-";
/// `transaction.timeout.ms` of the leader's transactional writer, unless the store's client
/// config sets one. A leader that dies mid-write leaves its transaction open, and every
/// `read_committed` reader of the config topic (each worker starting, or catching up before
/// it joins) waits until the broker aborts it: after this timeout plus up to the broker's
/// `transaction.abort.timed.out.transaction.cleanup.interval.ms` (10 s by default). Connect
/// keeps the producer default, 60 s. The writer's transactions are a few records sent and
/// committed at once; one that outlives this (a broker unreachable mid-write) is aborted by
/// the broker, and the write fails and is retried after the writer is claimed again.
pub const LEADER_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);
const UPDATE_CHANNEL_CAPACITY: usize = 1024;

/// What the config store needs.
#[derive(Clone)]
pub struct ConfigStoreSettings {
    /// Topic name and creation settings (partitions are forced to 1).
    pub topic: TopicSettings,
    /// Base client settings (bootstrap servers, security).
    pub client: ClientConfig,
    /// The worker's `group.id`; names clients and the leader's transactional id.
    pub group_id: String,
    /// Consume with `read_committed` (`exactly.once.source.support=enabled`).
    pub read_committed: bool,
    /// Privileged writes go through a transactional producer (`preparing` or `enabled`).
    pub transactional_writes: bool,
    /// What `client`'s security keys resolve to (for the worker's own transactional producer).
    pub security: KafkaSecurity,
}

/// Writes privileged records: plain (idempotent producer) or transactional (the leader's
/// fencable writer in exactly-once mode: the worker's own transactional producer, or
/// librdkafka's when a client key needs it).
pub enum ConfigWriter {
    Plain(FutureProducer),
    /// The standalone worker's in-memory log.
    Local(LocalLog),
    Transactional(FutureProducer),
    Native(Box<TransactionalProducer>),
}

impl ConfigWriter {
    /// A transactional writer with `transactional.id = connect-cluster-<group.id>`, after
    /// `InitProducerId` (which fences any previous leader's writer). On the worker's own
    /// producer (transactions v2 where the cluster has them) when every key of the writer's
    /// client config is one it applies; else librdkafka's, with a line saying why.
    pub async fn transactional(
        client: &ClientConfig,
        security: &KafkaSecurity,
        group_id: &str,
    ) -> Result<Self, StorageError> {
        let config = leader_writer_config(client, group_id);
        match producer_settings::from_librdkafka(&config, security) {
            Ok(mut settings) => {
                // Connect's budget for the whole write bounds the producer's retries.
                settings.delivery_timeout = READ_WRITE_TOTAL_TIMEOUT;
                let p = TransactionalProducer::init(settings)
                    .await
                    .map_err(|e| StorageError::Fenced(e.into()))?;
                tracing::info!(
                    transactions_v2 = p.transactions_v2(),
                    "the config topic's writer uses the worker's transactional producer"
                );
                return Ok(ConfigWriter::Native(Box::new(p)));
            }
            Err(why) => tracing::info!(
                reason = %why,
                "the config topic's writer uses librdkafka's transactional producer"
            ),
        }
        let producer: FutureProducer = config
            .create()
            .map_err(|e| StorageError::kafka("create config topic transactional producer", e))?;
        let p = producer.clone();
        tokio::task::spawn_blocking(move || p.init_transactions(READ_WRITE_TOTAL_TIMEOUT))
            .await
            .map_err(|e| StorageError::Io(format!("init transactions task failed: {e}")))?
            .map_err(|e| StorageError::Fenced(e.into()))?;
        Ok(ConfigWriter::Transactional(producer))
    }

    /// Whether a failed write drops this writer (a transactional one: the next claim recreates
    /// it, as Java closes its fencable producer on any failure).
    fn is_transactional(&self) -> bool {
        !matches!(self, ConfigWriter::Plain(_) | ConfigWriter::Local(_))
    }

    /// Sends `records` in order: in one transaction for a transactional writer.
    pub async fn write(&mut self, topic: &str, records: &[RawRecord]) -> Result<(), StorageError> {
        match self {
            ConfigWriter::Plain(p) => log::send_all(p, topic, records).await.map(|_| ()),
            ConfigWriter::Local(l) => l.send_batch(records).map(|_| ()),
            ConfigWriter::Native(p) => {
                let written = with_timeout(
                    READ_WRITE_TOTAL_TIMEOUT,
                    "writing to the config topic",
                    async {
                        p.begin().map_err(|e| StorageError::Fenced(e.into()))?;
                        for (key, value) in records {
                            p.send(OutRecord {
                                topic: topic.to_owned(),
                                partition: Some(0),
                                key: Some(key.clone()),
                                value: value.clone(),
                                headers: Vec::new(),
                                timestamp: None,
                            })
                            .await
                            .map_err(|e| StorageError::Fenced(e.into()))?;
                        }
                        p.commit().await.map_err(|e| StorageError::Fenced(e.into()))
                    },
                )
                .await;
                if written.is_err() && p.is_open() {
                    // Best effort: the writer is dropped after a failure, and the next claim's
                    // InitProducerId aborts what is left open anyway.
                    let _ = tokio::time::timeout(Duration::from_secs(5), p.abort()).await;
                }
                written
            }
            ConfigWriter::Transactional(p) => {
                p.begin_transaction()
                    .map_err(|e| StorageError::Fenced(e.into()))?;
                if let Err(e) = log::send_all(p, topic, records).await {
                    let p2 = p.clone();
                    let _ = tokio::task::spawn_blocking(move || {
                        p2.abort_transaction(READ_WRITE_TOTAL_TIMEOUT)
                    })
                    .await;
                    return Err(match e {
                        StorageError::Kafka { source, .. } => StorageError::Fenced(source.into()),
                        other => other,
                    });
                }
                let p2 = p.clone();
                tokio::task::spawn_blocking(move || p2.commit_transaction(READ_WRITE_TOTAL_TIMEOUT))
                    .await
                    .map_err(|e| StorageError::Io(format!("commit transaction task failed: {e}")))?
                    .map_err(|e| StorageError::Fenced(e.into()))
            }
        }
    }
}

/// The client config of the leader's transactional writer: `transactional.id =
/// connect-cluster-<group.id>`, [`LEADER_TRANSACTION_TIMEOUT`] unless `client` sets
/// `transaction.timeout.ms`.
pub fn leader_writer_config(client: &ClientConfig, group_id: &str) -> ClientConfig {
    let mut cfg = log::producer_config(client, &format!("{group_id}-configs-leader"));
    cfg.set(
        "transactional.id",
        format!("{LEADER_TRANSACTIONAL_ID_PREFIX}{group_id}"),
    )
    .set("max.in.flight.requests.per.connection", "5");
    if cfg.get("transaction.timeout.ms").is_none() {
        cfg.set(
            "transaction.timeout.ms",
            LEADER_TRANSACTION_TIMEOUT.as_millis().to_string(),
        );
    }
    cfg
}

/// The config topic's log, for the store and for [`read_config_topic`].
fn log_config(settings: &ConfigStoreSettings) -> LogConfig {
    LogConfig {
        topic: settings.topic.name.clone(),
        client: settings.client.clone(),
        client_id: format!("{}-configs", settings.group_id),
        read_committed: settings.read_committed,
    }
}

/// The cluster's config state as a worker starting now would read it: the topic replayed to its
/// end once, through the same state machine as [`ConfigBackingStore`], without creating,
/// checking or writing the topic (`connect-worker check`). A missing topic is
/// [`StorageError::TopicMissing`].
pub async fn read_config_topic(
    settings: &ConfigStoreSettings,
) -> Result<ClusterConfigState, StorageError> {
    let machine = Arc::new(Mutex::new(ConfigStateMachine::new()));
    let fed = machine.clone();
    let on_record = Box::new(move |r: &ConsumedRecord| {
        fed.lock().expect("config state lock").apply(
            r.offset,
            r.key.as_deref(),
            r.value.as_deref(),
        );
    });
    // `start` returns once the log has been read to its end.
    let log = KafkaBasedLog::start(log_config(settings), on_record).await?;
    log.stop().await;
    let mut machine = machine.lock().expect("config state lock");
    machine.set_started();
    Ok(machine.state().clone())
}

struct Shared {
    machine: ConfigStateMachine,
    snapshot: Option<Arc<ClusterConfigState>>,
}

/// What a config store is made of before its log exists.
struct StoreParts {
    shared: Arc<Mutex<Shared>>,
    updates: broadcast::Sender<ConfigUpdate>,
    offset_tx: watch::Sender<i64>,
    offset: watch::Receiver<i64>,
}

impl StoreParts {
    fn new() -> Self {
        let (updates, _) = broadcast::channel(UPDATE_CHANNEL_CAPACITY);
        let (offset_tx, offset) = watch::channel(-1i64);
        StoreParts {
            shared: Arc::new(Mutex::new(Shared {
                machine: ConfigStateMachine::new(),
                snapshot: None,
            })),
            updates,
            offset_tx,
            offset,
        }
    }

    /// The log callback: applies each record to the state machine and notifies.
    fn on_record(&self) -> RecordCallback {
        let cb_shared = self.shared.clone();
        let cb_updates = self.updates.clone();
        let offset_tx = self.offset_tx.clone();
        Box::new(move |r: &ConsumedRecord| {
            let ups = {
                let mut s = cb_shared.lock().expect("config state lock");
                s.snapshot = None;
                s.machine
                    .apply(r.offset, r.key.as_deref(), r.value.as_deref())
            };
            offset_tx.send_replace(r.offset + 1);
            for u in ups {
                // No receiver is fine: the herder reads the snapshot when it subscribes.
                let _ = cb_updates.send(u);
            }
        })
    }

    /// The store, once its log has been read to the end.
    fn into_store(
        self,
        log: InternalLog,
        settings: ConfigStoreSettings,
        writer: Option<ConfigWriter>,
    ) -> ConfigBackingStore {
        self.shared
            .lock()
            .expect("config state lock")
            .machine
            .set_started();
        ConfigBackingStore {
            log,
            shared: self.shared,
            updates: self.updates,
            offset: self.offset,
            settings,
            writer: tokio::sync::Mutex::new(writer),
        }
    }
}

/// The config store; see the module docs.
pub struct ConfigBackingStore {
    log: InternalLog,
    shared: Arc<Mutex<Shared>>,
    updates: broadcast::Sender<ConfigUpdate>,
    offset: watch::Receiver<i64>,
    settings: ConfigStoreSettings,
    writer: tokio::sync::Mutex<Option<ConfigWriter>>,
}

impl std::fmt::Debug for ConfigBackingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigBackingStore")
            .field("topic", &self.settings.topic.name)
            .finish_non_exhaustive()
    }
}

impl ConfigBackingStore {
    /// Creates/validates the topic, replays it to the end, then starts notifying.
    pub async fn start(settings: ConfigStoreSettings) -> Result<Self, StorageError> {
        ensure_topic(&settings.client, InternalTopic::Config, &settings.topic).await?;
        let parts = StoreParts::new();
        let log = KafkaBasedLog::start(log_config(&settings), parts.on_record()).await?;
        // The partition check of `ensure_topic` ran before; Java re-checks what the consumer
        // sees, which `KafkaBasedLog::start` already asserted is non-empty.
        let writer = if settings.transactional_writes {
            None
        } else {
            Some(ConfigWriter::Plain(log.producer().clone()))
        };
        Ok(parts.into_store(InternalLog::Kafka(log), settings, writer))
    }

    /// The standalone worker's store, in memory (Apache's `MemoryConfigBackingStore`): what is
    /// written lives as long as the process. `settings` only names things (no topic is used)
    /// and must not ask for transactional writes.
    pub fn in_memory(settings: ConfigStoreSettings) -> Self {
        let parts = StoreParts::new();
        let log = LocalLog::in_memory("config", parts.on_record());
        let writer = Some(ConfigWriter::Local(log.clone()));
        parts.into_store(InternalLog::Local(log), settings, writer)
    }

    /// The current view. Cheap when nothing changed since the last call.
    pub fn snapshot(&self) -> Arc<ClusterConfigState> {
        let mut s = self.shared.lock().expect("config state lock");
        if let Some(snap) = &s.snapshot {
            return snap.clone();
        }
        let snap = Arc::new(s.machine.state().clone());
        s.snapshot = Some(snap.clone());
        snap
    }

    /// Change notifications from now on. On `RecvError::Lagged` take a fresh [`Self::snapshot`]
    /// and treat every connector as possibly changed.
    pub fn subscribe(&self) -> broadcast::Receiver<ConfigUpdate> {
        self.updates.subscribe()
    }

    /// The config offset (offset after the last applied record), updated as records arrive.
    pub fn watch_offset(&self) -> watch::Receiver<i64> {
        self.offset.clone()
    }

    /// Restart requests read since startup (one per connector, highest impact wins), drained.
    pub fn take_restart_requests(&self) -> Vec<RestartRequest> {
        self.shared
            .lock()
            .expect("config state lock")
            .machine
            .take_restart_requests()
    }

    /// Reads the topic to the end within `timeout`.
    pub async fn refresh(&self, timeout: Duration) -> Result<(), StorageError> {
        with_timeout(
            timeout,
            "reading to the end of the config topic",
            self.log.read_to_end(),
        )
        .await
    }

    /// Whether privileged writes can be made now (a failed transactional write drops the writer;
    /// the leader must claim it again, which also aborts the failed write's open transaction).
    pub async fn has_write_privileges(&self) -> bool {
        self.writer.lock().await.is_some()
    }

    /// Makes this worker the privileged writer. With transactional writes this creates the
    /// transactional producer and fences the previous leader's; otherwise it is a no-op.
    pub async fn claim_write_privileges(&self) -> Result<(), StorageError> {
        let mut w = self.writer.lock().await;
        if self.settings.transactional_writes {
            *w = None;
            *w = Some(
                ConfigWriter::transactional(
                    &self.settings.client,
                    &self.settings.security,
                    &self.settings.group_id,
                )
                .await?,
            );
        } else if w.is_none() {
            *w = Some(match &self.log {
                InternalLog::Kafka(l) => ConfigWriter::Plain(l.producer().clone()),
                InternalLog::Local(l) => ConfigWriter::Local(l.clone()),
            });
        }
        Ok(())
    }

    /// Sends `records` with the privileged writer, then reads them back.
    async fn write_privileged(
        &self,
        records: Vec<RawRecord>,
        read_after: bool,
    ) -> Result<(), StorageError> {
        let topic = self.settings.topic.name.clone();
        let mut guard = self.writer.lock().await;
        let Some(writer) = guard.as_mut() else {
            return Err(StorageError::Io(
                "this worker has not claimed write privileges on the config topic".into(),
            ));
        };
        let res = writer.write(&topic, &records).await;
        if let Err(e) = res {
            if writer.is_transactional() {
                // Java closes the fencable producer on any failure; the next claim recreates it.
                *guard = None;
            }
            return Err(e);
        }
        drop(guard);
        if read_after {
            self.log.read_to_end().await?;
        }
        Ok(())
    }

    /// Writes `connector-<c>` (preceded by `target-state-<c>` when an initial state is given,
    /// in the same send/transaction) and waits until it is read back.
    pub async fn put_connector_config(
        &self,
        connector: &str,
        config: &ConfigMap,
        initial_state: Option<TargetState>,
    ) -> Result<(), StorageError> {
        let mut records = Vec::new();
        if let Some(st) = initial_state {
            records.push((
                codec::target_state_key(connector).into_bytes(),
                Some(codec::target_state_value(st)),
            ));
        }
        records.push((
            codec::connector_key(connector).into_bytes(),
            Some(codec::connector_config_value(config)),
        ));
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing connector configuration",
            self.write_privileged(records, true),
        )
        .await
    }

    /// Tombstones `connector-<c>` and `target-state-<c>` (task, commit and task-count records are
    /// left for compaction, as in Java).
    pub async fn remove_connector_config(&self, connector: &str) -> Result<(), StorageError> {
        let records = vec![
            (codec::connector_key(connector).into_bytes(), None),
            (codec::target_state_key(connector).into_bytes(), None),
        ];
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "removing connector configuration",
            self.write_privileged(records, true),
        )
        .await
    }

    /// Writes `task-<c>-0..N-1` then `commit-<c>` `{"tasks":N}` as separate sends, reading to the
    /// end before, between (when N > 0) and after. N = 0 (stop) writes only the commit.
    pub async fn put_task_configs(
        &self,
        connector: &str,
        configs: &[ConfigMap],
    ) -> Result<(), StorageError> {
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing task configurations",
            async {
                self.log.read_to_end().await?;
                let n = i32::try_from(configs.len())
                    .map_err(|_| StorageError::Data("too many task configurations".into()))?;
                if n > 0 {
                    let tasks = configs
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let id = ConnectorTaskId::new(connector, i as i32);
                            (
                                codec::task_key(&id).into_bytes(),
                                Some(codec::task_config_value(c)),
                            )
                        })
                        .collect();
                    self.write_privileged(tasks, true).await?;
                }
                let commit = vec![(
                    codec::commit_tasks_key(connector).into_bytes(),
                    Some(codec::commit_tasks_value(n)),
                )];
                self.write_privileged(commit, true).await
            },
        )
        .await
    }

    /// Writes `target-state-<c>` with the plain producer (any worker may pause/resume); waits
    /// for the ack only.
    pub async fn put_target_state(
        &self,
        connector: &str,
        state: TargetState,
    ) -> Result<(), StorageError> {
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing target state",
            self.log.send(
                codec::target_state_key(connector).as_bytes(),
                Some(&codec::target_state_value(state)),
            ),
        )
        .await
        .map(|_| ())
    }

    /// Writes `restart-connector-<c>` (privileged).
    pub async fn put_restart_request(&self, req: &RestartRequest) -> Result<(), StorageError> {
        let records = vec![(
            codec::restart_key(&req.connector).into_bytes(),
            Some(codec::restart_value(req)),
        )];
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing restart request",
            self.write_privileged(records, true),
        )
        .await
    }

    /// Writes `session-key` (privileged).
    pub async fn put_session_key(&self, key: &SessionKey) -> Result<(), StorageError> {
        let records = vec![(
            codec::SESSION_KEY_KEY.as_bytes().to_vec(),
            Some(codec::session_key_value(key)),
        )];
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing session key",
            self.write_privileged(records, true),
        )
        .await
    }

    /// Writes `tasks-fencing-<c>` `{"task-count":N}` (privileged, after a zombie fencing).
    pub async fn put_task_count_record(
        &self,
        connector: &str,
        task_count: i32,
    ) -> Result<(), StorageError> {
        let records = vec![(
            codec::task_count_record_key(connector).into_bytes(),
            Some(codec::task_count_record_value(task_count)),
        )];
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing task count record",
            self.write_privileged(records, true),
        )
        .await
    }

    /// Writes `logger-cluster-<ns>` `{"level":..}` with the plain producer; waits for the ack.
    pub async fn put_logger_level(&self, namespace: &str, level: &str) -> Result<(), StorageError> {
        with_timeout(
            READ_WRITE_TOTAL_TIMEOUT,
            "writing cluster log level",
            self.log.send(
                codec::logger_cluster_key(namespace).as_bytes(),
                Some(&codec::logger_level_value(level)),
            ),
        )
        .await
        .map(|_| ())
    }

    pub async fn stop(&self) {
        self.log.stop().await;
    }
}
