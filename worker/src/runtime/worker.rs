//! The connectors and tasks running on this worker (Java's `Worker`): creates instances from
//! the plugin registry, builds their clients and converters, starts and stops them.
//!
//! The herder decides *what* runs here; this module only knows *how*.

use connect_api::config::connector::CONNECTOR_VERSION_CONFIG;
use connect_api::config::plugin_version::{mismatch, version_requirement};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use connect_api::config::connector::{CONNECTOR_CLASS_CONFIG, TASK_CLASS_CONFIG};
use connect_api::config::{SinkConnectorConfig, SourceConnectorConfig, TasksMax, TopicCreation};
use connect_api::{
    CancellationToken, ConfigMap, ConnectError, ConnectorInstance, PluginRegistry, TaskInstance,
};
use connect_transforms::TransformChain;
use rdkafka::ClientConfig;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::connector::{ConnectorHandle, ConnectorRequest, ConnectorStatusListener};
use super::convert::RecordConverters;
use super::errors::{DeadLetterQueue, ErrorHandler, StageClasses};
use super::exactly_once::{
    ExactlyOnceGate, ExactlyOnceSourceTaskRun, run_exactly_once_source_task, task_transactional_id,
};
use super::ledger::{Ledger, LocalState, Work, why_not_retriable};
use super::panics::{PanicSafeSinkTask, PanicSafeSourceTask, supervise, supervise_blocking};
use super::sink::{SinkTaskRun, run_sink_task};
use super::source::{SourceTaskRun, run_source_task};
use super::topic_creation::TopicCreator;
use super::{ConnectorTaskId, SourceOffsetBackend, TaskStatusListener};
use crate::config::ClientScope;
use crate::config::WorkerConfig;
use crate::config::clients::ClientKind;
use crate::config::providers::ConfigProviders;
use crate::metrics;
use crate::storage::log::java_partitioner;
use crate::storage::offsets::OffsetStoreSettings;
use crate::storage::topics::TopicSettings;
use crate::storage::{
    ConnectorOffsetBackingStore, ConnectorState, ConnectorStatus, OffsetBackingStore,
    StatusBackingStore, TargetState, TaskStatus, TopicStatus,
};

/// How long a connector's `stop` may take (Apache's fixed 5 s).
pub const CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT: std::time::Duration =
    std::time::Duration::from_secs(5);

/// Writes connector and task states to the status topic, in the order they happen, stamped
/// with this worker's id, the current group generation and the version of the plugin instance
/// this worker created (Connect 4.4's `version`; none when no instance could be created).
pub struct StatusReporter {
    worker_id: String,
    generation: AtomicI32,
    connector_versions: Mutex<HashMap<String, String>>,
    task_versions: Mutex<HashMap<ConnectorTaskId, String>>,
    /// `topic.tracking.enable`: whether tasks' active topics are recorded.
    track_topics: bool,
    queue: mpsc::UnboundedSender<StatusUpdate>,
    /// The last state reported for each connector and task, for automatic restarts.
    ledger: Ledger,
}

enum StatusUpdate {
    Connector(ConnectorStatus),
    Task(TaskStatus),
    Topic(TopicStatus),
}

impl StatusReporter {
    pub fn spawn(
        store: Arc<StatusBackingStore>,
        worker_id: String,
        track_topics: bool,
    ) -> Arc<Self> {
        let (queue, mut rx) = mpsc::unbounded_channel::<StatusUpdate>();
        tokio::spawn(async move {
            while let Some(update) = rx.recv().await {
                // UNASSIGNED is written when work leaves this worker; by then a new owner may
                // have written a newer generation, which must not be overwritten (Connect's
                // "safe" put).
                let result = match &update {
                    StatusUpdate::Connector(s) if s.state == ConnectorState::Unassigned => {
                        store.put_connector_status_safe(s).await.map(|_| ())
                    }
                    StatusUpdate::Task(s) if s.state == ConnectorState::Unassigned => {
                        store.put_task_status_safe(s).await.map(|_| ())
                    }
                    StatusUpdate::Connector(s) => store.put_connector_status(s).await,
                    StatusUpdate::Task(s) => store.put_task_status(s).await,
                    StatusUpdate::Topic(t) => store.put_topic(t).await,
                };
                if let Err(e) = result {
                    tracing::warn!(error = %e, "failed to write status");
                }
            }
        });
        Arc::new(StatusReporter {
            worker_id,
            generation: AtomicI32::new(-1),
            connector_versions: Mutex::default(),
            task_versions: Mutex::default(),
            track_topics,
            queue,
            ledger: Ledger::default(),
        })
    }

    pub fn set_generation(&self, generation: i32) {
        self.generation.store(generation, Ordering::SeqCst);
    }

    pub fn worker_id(&self) -> &str {
        &self.worker_id
    }

    /// The version later statuses of `connector` carry; `None` forgets it (no instance).
    pub fn set_connector_version(&self, connector: &str, version: Option<String>) {
        let mut m = self.connector_versions.lock().expect("versions lock");
        match version {
            Some(v) => m.insert(connector.to_owned(), v),
            None => m.remove(connector),
        };
    }

    /// The version later statuses of task `id` carry; `None` forgets it (no instance).
    pub fn set_task_version(&self, id: &ConnectorTaskId, version: Option<String>) {
        let mut m = self.task_versions.lock().expect("versions lock");
        match version {
            Some(v) => m.insert(id.clone(), v),
            None => m.remove(id),
        };
    }

    fn task(
        &self,
        id: &ConnectorTaskId,
        state: ConnectorState,
        trace: Option<String>,
        not_retriable: Option<String>,
    ) {
        self.ledger
            .record(Work::Task(id.clone()), state, trace.clone(), not_retriable);
        self.send_task(id, state, trace);
    }

    fn send_task(&self, id: &ConnectorTaskId, state: ConnectorState, trace: Option<String>) {
        metrics::global().task_state(id, metric_state(state));
        let version = self
            .task_versions
            .lock()
            .expect("versions lock")
            .get(id)
            .cloned();
        let _ = self.queue.send(StatusUpdate::Task(TaskStatus {
            id: id.clone(),
            state,
            trace,
            worker_id: self.worker_id.clone(),
            generation: self.generation.load(Ordering::SeqCst),
            version,
        }));
    }
}

impl TaskStatusListener for StatusReporter {
    fn on_running(&self, id: &ConnectorTaskId) {
        self.task(id, ConnectorState::Running, None, None);
    }
    fn on_paused(&self, id: &ConnectorTaskId) {
        self.task(id, ConnectorState::Paused, None, None);
    }
    fn on_failure(&self, id: &ConnectorTaskId, error: &ConnectError) {
        self.task(
            id,
            ConnectorState::Failed,
            Some(super::error_trace(error)),
            why_not_retriable(error),
        );
    }
    fn on_shutdown(&self, id: &ConnectorTaskId) {
        self.task(id, ConnectorState::Unassigned, None, None);
    }
    fn on_topic_used(&self, id: &ConnectorTaskId, topic: &str) {
        if !self.track_topics {
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let _ = self.queue.send(StatusUpdate::Topic(TopicStatus {
            topic: topic.to_owned(),
            connector: id.connector.clone(),
            task: id.task,
            discover_timestamp: now,
        }));
    }
}

impl ConnectorStatusListener for StatusReporter {
    fn on_connector_state(&self, connector: &str, state: ConnectorState, trace: Option<String>) {
        self.ledger.record(
            Work::Connector(connector.to_owned()),
            state,
            trace.clone(),
            None,
        );
        self.send_connector(connector, state, trace);
    }

    fn on_connector_failed(&self, connector: &str, error: &ConnectError) {
        let trace = Some(super::error_trace(error));
        self.ledger.record(
            Work::Connector(connector.to_owned()),
            ConnectorState::Failed,
            trace.clone(),
            why_not_retriable(error),
        );
        self.send_connector(connector, ConnectorState::Failed, trace);
    }
}

impl StatusReporter {
    /// The last state this worker reported for `work`.
    pub fn local_state(&self, work: &Work) -> Option<LocalState> {
        self.ledger.get(work)
    }

    /// Reports `work` FAILED again with its failure's trace followed by `note` (what automatic
    /// restarts will do about it); the ledger keeps the failure as it was.
    pub fn annotate_failure(&self, work: &Work, note: &str) {
        let Some(local) = self.ledger.get(work) else {
            return;
        };
        let trace = Some(match local.trace {
            Some(t) => format!("{t}\n\n{note}"),
            None => note.to_owned(),
        });
        match work {
            Work::Connector(c) => self.send_connector(c, ConnectorState::Failed, trace),
            Work::Task(id) => self.send_task(id, ConnectorState::Failed, trace),
        }
    }

    fn send_connector(&self, connector: &str, state: ConnectorState, trace: Option<String>) {
        metrics::global().connector_state(connector, metric_state(state));
        let version = self
            .connector_versions
            .lock()
            .expect("versions lock")
            .get(connector)
            .cloned();
        let _ = self.queue.send(StatusUpdate::Connector(ConnectorStatus {
            connector: connector.to_owned(),
            state,
            trace,
            worker_id: self.worker_id.clone(),
            generation: self.generation.load(Ordering::SeqCst),
            version,
        }));
    }
}

/// The `status` label of a state; `None` for work that is not (or no longer) on this worker.
fn metric_state(state: ConnectorState) -> Option<&'static str> {
    match state {
        ConnectorState::Unassigned | ConnectorState::Destroyed => None,
        ConnectorState::Running => Some("running"),
        ConnectorState::Paused => Some("paused"),
        ConnectorState::Stopped => Some("stopped"),
        ConnectorState::Failed => Some("failed"),
        ConnectorState::Restarting => Some("restarting"),
    }
}

/// A task's status listener that goes quiet once the task is abandoned: a runner that finally
/// returns after [`Worker::stop_tasks`] gave up on it reports nothing (Apache's cancelled
/// `WorkerTask`), so it cannot overwrite what the task's next owner reports.
struct AbandonableStatus {
    inner: Arc<StatusReporter>,
    abandoned: Arc<std::sync::atomic::AtomicBool>,
}

impl AbandonableStatus {
    fn live(&self) -> bool {
        !self.abandoned.load(Ordering::SeqCst)
    }
}

impl TaskStatusListener for AbandonableStatus {
    fn on_running(&self, id: &ConnectorTaskId) {
        if self.live() {
            self.inner.on_running(id);
        }
    }
    fn on_paused(&self, id: &ConnectorTaskId) {
        if self.live() {
            self.inner.on_paused(id);
        }
    }
    fn on_failure(&self, id: &ConnectorTaskId, error: &ConnectError) {
        if self.live() {
            self.inner.on_failure(id, error);
        }
    }
    fn on_shutdown(&self, id: &ConnectorTaskId) {
        if self.live() {
            self.inner.on_shutdown(id);
        }
    }
    fn on_topic_used(&self, id: &ConnectorTaskId, topic: &str) {
        if self.live() {
            self.inner.on_topic_used(id, topic);
        }
    }
}

struct RunningTask {
    cancel: CancellationToken,
    abandoned: Arc<std::sync::atomic::AtomicBool>,
    paused: watch::Sender<bool>,
    done: JoinHandle<()>,
}

/// Connectors and tasks on this worker.
pub struct Worker {
    config: Arc<WorkerConfig>,
    registry: Arc<PluginRegistry>,
    offsets: Arc<dyn SourceOffsetBackend>,
    global_offsets: Arc<OffsetBackingStore>,
    /// Set when `exactly.once.source.support=enabled`: source tasks run transactionally.
    exactly_once: Option<Arc<dyn ExactlyOnceGate>>,
    /// Per-connector offsets topics (`offsets.storage.topic`), opened on first use.
    connector_offset_stores: BTreeMap<String, Arc<OffsetBackingStore>>,
    status: Arc<StatusReporter>,
    requests: mpsc::UnboundedSender<ConnectorRequest>,
    connectors: BTreeMap<String, ConnectorHandle>,
    tasks: BTreeMap<ConnectorTaskId, RunningTask>,
    /// At-least-once source tasks' producers, one per effective producer config.
    producers: super::shared_producers::SharedProducers,
}

impl Worker {
    pub fn new(
        config: Arc<WorkerConfig>,
        registry: Arc<PluginRegistry>,
        global_offsets: Arc<OffsetBackingStore>,
        status: Arc<StatusReporter>,
        requests: mpsc::UnboundedSender<ConnectorRequest>,
    ) -> Self {
        Worker {
            offsets: Arc::new(ConnectorOffsetBackingStore::worker_only(
                global_offsets.clone(),
            )),
            global_offsets,
            exactly_once: None,
            connector_offset_stores: BTreeMap::new(),
            config,
            registry,
            status,
            requests,
            connectors: BTreeMap::new(),
            tasks: BTreeMap::new(),
            producers: Default::default(),
        }
    }

    /// Runs source tasks with exactly-once support, fenced through `gate`.
    pub fn enable_exactly_once(&mut self, gate: Arc<dyn ExactlyOnceGate>) {
        self.exactly_once = Some(gate);
    }

    /// The offsets a source connector's tasks read and write: its own topic (created if
    /// missing) over the worker's global one, or the global one alone.
    async fn connector_offsets(
        &mut self,
        connector_config: &SourceConnectorConfig,
    ) -> Result<Arc<ConnectorOffsetBackingStore>, ConnectError> {
        if self.config.standalone && connector_config.offsets_storage_topic.is_some() {
            tracing::warn!(
                "offsets.storage.topic is not used by a standalone worker: its source offsets are in offset.storage.file.filename"
            );
        }
        let Some(topic) = connector_config
            .offsets_storage_topic
            .clone()
            .filter(|t| *t != self.config.offset_storage_topic && !self.config.standalone)
        else {
            return Ok(Arc::new(ConnectorOffsetBackingStore::worker_only(
                self.global_offsets.clone(),
            )));
        };
        let store = match self.connector_offset_stores.get(&topic) {
            Some(s) => s.clone(),
            None => {
                let store = OffsetBackingStore::start(OffsetStoreSettings {
                    topic: TopicSettings::new(
                        &topic,
                        self.config.offset_storage_partitions,
                        self.config.offset_storage_replication_factor.into(),
                    ),
                    client: self
                        .config
                        .kafka_client(ClientScope::Internal)
                        .map_err(|e| ConnectError::config(e.to_string()))?,
                    client_id: format!("{}-offsets-{topic}", self.config.group_id),
                    read_committed: self.exactly_once.is_some(),
                })
                .await
                .map_err(|e| {
                    ConnectError::fatal(format!("failed to open offsets topic {topic}: {e}"))
                })?;
                let store = Arc::new(store);
                self.connector_offset_stores.insert(topic, store.clone());
                store
            }
        };
        Ok(Arc::new(ConnectorOffsetBackingStore::with_connector_store(
            store,
            Some(self.global_offsets.clone()),
        )))
    }

    pub fn status(&self) -> &Arc<StatusReporter> {
        &self.status
    }

    pub fn is_running_connector(&self, name: &str) -> bool {
        self.connectors.contains_key(name)
    }

    pub fn running_connectors(&self) -> Vec<String> {
        self.connectors.keys().cloned().collect()
    }

    pub fn running_tasks(&self) -> Vec<ConnectorTaskId> {
        self.tasks.keys().cloned().collect()
    }

    /// Starts a connector; a plugin that cannot be created, a `tasks.max` this worker refuses
    /// (a config written by another implementation or an older version), or invalid
    /// `topic.creation.*` settings of a source connector, is reported FAILED.
    pub fn start_connector(&mut self, name: &str, config: &ConfigMap, target: TargetState) {
        metrics::global().connector_starting();
        // Config providers' placeholders are resolved here, where the connector runs (Apache's
        // `Worker.startConnector`); the config topic keeps them.
        let resolved = match self.config.config_providers.transform(config) {
            Ok(resolved) => resolved,
            Err(e) => {
                metrics::global().connector_started(false);
                let e = ConnectError::config(e.to_string());
                tracing::error!(connector = %name, error = %e, "failed to resolve the connector config");
                self.status.on_connector_failed(name, &e);
                return;
            }
        };
        let config = &resolved;
        let class = config
            .get(CONNECTOR_CLASS_CONFIG)
            .cloned()
            .unwrap_or_default();
        let topic_creation_enable = self.config.topic_creation_enable;
        let instance = TasksMax::parse(config)
            .and_then(|_| self.registry.create_connector(&class))
            .and_then(|instance| {
                // KIP-891: a `connector.plugin.version` the built-in version does not meet
                // (a config stored by another worker) fails the connector, as Apache's
                // plugin loader fails it.
                let full_class = self
                    .registry
                    .describe(&class)
                    .map_or_else(|_| class.clone(), |(d, _)| d.class.to_owned());
                let requirement =
                    version_requirement(config.get(CONNECTOR_VERSION_CONFIG).map(String::as_str))
                        .map_err(ConnectError::config)?;
                if let Some(message) =
                    requirement.and_then(|r| mismatch(&full_class, &instance.version(), &r))
                {
                    return Err(ConnectError::config(message));
                }
                // Apache builds a source connector's config with its topic creation settings
                // when it starts it: invalid ones fail the connector.
                if matches!(instance, ConnectorInstance::Source(_)) {
                    TopicCreation::from_config(config, topic_creation_enable)?;
                }
                Ok(instance)
            });
        self.status
            .set_connector_version(name, instance.as_ref().ok().map(ConnectorInstance::version));
        match instance {
            Ok(instance) => {
                let kind = match &instance {
                    ConnectorInstance::Source(_) => "source",
                    ConnectorInstance::Sink(_) => "sink",
                };
                metrics::global().connector_started(true);
                metrics::global().connector_info(name, &class, kind, &instance.version());
                let handle = ConnectorHandle::spawn(
                    tracing::info_span!(
                        "connector",
                        connector = %name,
                        worker_id = %self.status.worker_id()
                    ),
                    name.to_owned(),
                    config.clone(),
                    instance,
                    target,
                    self.status.clone(),
                    self.requests.clone(),
                );
                self.connectors.insert(name.to_owned(), handle);
            }
            Err(e) => {
                metrics::global().connector_started(false);
                tracing::error!(connector = %name, error = %e, "failed to create connector");
                self.status.on_connector_failed(name, &e);
            }
        }
    }

    /// Stops a connector, waiting at most [`CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT`] for its
    /// `stop` (Apache's `Worker.CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_MS`); one that takes longer
    /// is abandoned with a line naming it.
    pub async fn stop_connector(&mut self, name: &str) {
        self.status.ledger.forget(&Work::Connector(name.to_owned()));
        if let Some(handle) = self.connectors.remove(name) {
            if tokio::time::timeout(CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT, handle.stop())
                .await
                .is_err()
            {
                tracing::error!(
                    connector = %name,
                    "Graceful stop of connector {name} failed: it did not stop within {} ms and is abandoned",
                    CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT.as_millis()
                );
            }
            self.status
                .on_connector_state(name, ConnectorState::Unassigned, None);
        }
    }

    /// `task_configs(tasks.max)` of a running connector, each with `task.class` set; more
    /// configs than `tasks.max` fail the connector unless `tasks.max.enforce=false` (KIP-1004).
    pub async fn connector_task_configs(
        &self,
        name: &str,
        config: &ConfigMap,
        tasks_max: TasksMax,
    ) -> Result<Vec<ConfigMap>, ConnectError> {
        let handle = self.connectors.get(name).ok_or_else(|| {
            ConnectError::fatal(format!("connector {name} is not running on this worker"))
        })?;
        let class = config
            .get(CONNECTOR_CLASS_CONFIG)
            .cloned()
            .unwrap_or_default();
        let (desc, _) = self.registry.describe(&class)?;
        let task_class = desc.task_class.to_owned();
        let mut configs = handle.task_configs(tasks_max).await?;
        for c in &mut configs {
            c.insert(TASK_CLASS_CONFIG.to_owned(), task_class.clone());
        }
        ConfigProviders::restore_placeholders(config, &mut configs);
        Ok(configs)
    }

    /// Applies a target state to a connector and its tasks running here.
    pub fn set_target_state(&self, connector: &str, target: TargetState) {
        if let Some(h) = self.connectors.get(connector) {
            h.set_target_state(target);
        }
        for (id, t) in &self.tasks {
            if id.connector == connector {
                t.paused.send_replace(target != TargetState::Started);
            }
        }
    }

    /// Starts one task with its committed config; `generation` is the connector's
    /// task-config generation it was scheduled under (checked by exactly-once tasks).
    pub async fn start_task(
        &mut self,
        id: ConnectorTaskId,
        task_config: &ConfigMap,
        connector_config: &ConfigMap,
        target: TargetState,
        generation: Option<i32>,
    ) {
        if self.tasks.contains_key(&id) {
            return;
        }
        metrics::global().task_starting();
        // Set again by build_task once the instance exists.
        self.status.set_task_version(&id, None);
        // Placeholders are resolved where the task runs (Apache's `Worker.startTask`).
        let providers = &self.config.config_providers;
        let resolved = providers
            .transform(task_config)
            .and_then(|task_config| Ok((task_config, providers.transform(connector_config)?)));
        let built = match &resolved {
            Ok((task_config, connector_config)) => {
                self.build_task(&id, task_config, connector_config, target, generation)
                    .await
            }
            Err(e) => Err(ConnectError::config(e.to_string())),
        };
        metrics::global().task_started(built.is_ok());
        match built {
            Ok(running) => {
                self.tasks.insert(id, running);
            }
            Err(e) => {
                tracing::error!(task = %id, error = %e, "failed to start task");
                self.status.on_failure(&id, &e);
            }
        }
    }

    async fn build_task(
        &mut self,
        id: &ConnectorTaskId,
        task_config: &ConfigMap,
        connector_config: &ConfigMap,
        target: TargetState,
        generation: Option<i32>,
    ) -> Result<RunningTask, ConnectError> {
        let task_class = task_config.get(TASK_CLASS_CONFIG).ok_or_else(|| {
            ConnectError::config(format!("task config of {id} has no {TASK_CLASS_CONFIG}"))
        })?;
        let instance = self.registry.create_task(task_class)?;
        self.status.set_task_version(id, Some(instance.version()));
        let cancel = CancellationToken::new();
        let (paused_tx, paused_rx) = watch::channel(target != TargetState::Started);
        let abandoned = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let status: Arc<dyn TaskStatusListener> = Arc::new(AbandonableStatus {
            inner: self.status.clone(),
            abandoned: abandoned.clone(),
        });
        // Everything the task and its runner log carries these fields.
        let span = tracing::info_span!(
            "task",
            connector = %id.connector,
            task = id.task,
            worker_id = %self.status.worker_id()
        );
        let supervisor_status = status.clone();
        let done = match instance {
            TaskInstance::Source(task) if self.exactly_once.is_some() => {
                let cc = SourceConnectorConfig::parse(connector_config)?;
                let converters = RecordConverters::for_connector(&self.config, &cc.common)?;
                let transforms = Arc::new(TransformChain::from_config(connector_config)?);
                let offsets = self.connector_offsets(&cc).await?;
                let mut producer_config = self.producer_config(id, connector_config)?;
                // Forced, whatever the overrides said (Connect warns and overwrites too).
                producer_config.set("enable.idempotence", "true").set(
                    "transactional.id",
                    task_transactional_id(&self.config.group_id, id),
                );
                // The runner waits for every record of a transaction to be acknowledged before
                // it commits; librdkafka's 5 ms linger would hold the last batch back every
                // time. Java's commitTransaction flushes (sending at once, whatever linger.ms
                // says), so no linger is the same behaviour. Measured on the bare rdkafka
                // transactional producer: 95-98k records/s with the default, 149-205k without
                // (README, "Benchmarks"). A configured linger.ms is kept.
                if producer_config.get("linger.ms").is_none()
                    && producer_config.get("queue.buffering.max.ms").is_none()
                {
                    producer_config.set("linger.ms", "0");
                }
                let producer_security = self.producer_security(connector_config)?;
                let topic_creation = self.topic_creator(id, connector_config)?;
                let run = ExactlyOnceSourceTaskRun {
                    id: id.clone(),
                    task_config: task_config.clone(),
                    connector_config: cc,
                    offset_flush_interval: self.config.offset_flush_interval,
                    file_access: self.config.file_access.clone(),
                    converters,
                    transforms,
                    producer: super::txn_producer::choose(producer_config, &producer_security),
                    topic_creation,
                    offsets,
                    gate: self.exactly_once.clone().expect("checked above"),
                    generation,
                    status,
                    cancel: cancel.clone(),
                    paused: paused_rx,
                };
                let task = Box::new(PanicSafeSourceTask(task));
                tokio::spawn(
                    supervise(
                        id.clone(),
                        supervisor_status,
                        run_exactly_once_source_task(run, task),
                    )
                    .instrument(span),
                )
            }
            TaskInstance::Source(task) => {
                let cc = SourceConnectorConfig::parse(connector_config)?;
                let converters = RecordConverters::for_connector(&self.config, &cc.common)?;
                let transforms = Arc::new(TransformChain::from_config(connector_config)?);
                let producer = self
                    .producers
                    .get(
                        crate::config::clients::java_buffer_memory(
                            self.producer_config(id, connector_config)?,
                        ),
                        &task_producer_client_id(id),
                    )
                    .map_err(|e| {
                        ConnectError::fatal(format!("failed to create producer for task {id}: {e}"))
                    })?;
                let topic_creation = self.topic_creator(id, connector_config)?;
                let run = SourceTaskRun {
                    id: id.clone(),
                    task_config: task_config.clone(),
                    connector_config: cc.common,
                    offset_flush_interval: self.config.offset_flush_interval,
                    file_access: self.config.file_access.clone(),
                    converters,
                    transforms,
                    producer,
                    topic_creation,
                    offsets: self.offsets.clone(),
                    status,
                    cancel: cancel.clone(),
                    paused: paused_rx,
                };
                let task = Box::new(PanicSafeSourceTask(task));
                tokio::spawn(
                    supervise(id.clone(), supervisor_status, run_source_task(run, task))
                        .instrument(span),
                )
            }
            TaskInstance::Sink(task) => {
                let cc = SinkConnectorConfig::parse(connector_config)?;
                let converters = RecordConverters::for_connector(&self.config, &cc.common)?;
                let transforms = Arc::new(TransformChain::from_config(connector_config)?);
                let (consumer_config, max_poll_records) = super::sink::sink_consumer_config(
                    &self.config,
                    &id.connector,
                    connector_config,
                )?;
                let dlq = DeadLetterQueue::for_sink(
                    id,
                    &cc,
                    crate::config::clients::java_buffer_memory(
                        self.producer_config(id, connector_config)?,
                    ),
                )
                .await?;
                let classes = StageClasses {
                    key_converter: cc
                        .common
                        .key_converter
                        .clone()
                        .unwrap_or_else(|| self.config.key_converter.clone()),
                    value_converter: cc
                        .common
                        .value_converter
                        .clone()
                        .unwrap_or_else(|| self.config.value_converter.clone()),
                    header_converter: cc.common.header_converter.clone(),
                    task: task_class.clone(),
                };
                let errors = Arc::new(ErrorHandler::new(id.clone(), &cc.common, classes, dlq));
                let run = SinkTaskRun {
                    id: id.clone(),
                    task_config: task_config.clone(),
                    connector_config: cc,
                    offset_commit_interval: self.config.offset_flush_interval,
                    file_access: self.config.file_access.clone(),
                    converters: Arc::new(converters),
                    transforms,
                    errors,
                    consumer_config,
                    max_poll_records,
                    status,
                    cancel: cancel.clone(),
                    paused: paused_rx,
                };
                let rt = tokio::runtime::Handle::current();
                let task = Box::new(PanicSafeSinkTask(task));
                let (id, status) = (id.clone(), supervisor_status);
                tokio::task::spawn_blocking(move || {
                    let _span = span.enter();
                    supervise_blocking(id, status, || run_sink_task(run, task, rt))
                })
            }
        };
        Ok(RunningTask {
            cancel,
            abandoned,
            paused: paused_tx,
            done,
        })
    }

    /// Task (and dead-letter queue) producer: idempotent, `acks=all`, Java's partitioner, then
    /// the worker's `producer.*` and the connector's `producer.override.*`.
    fn producer_config(
        &self,
        id: &ConnectorTaskId,
        connector_config: &ConfigMap,
    ) -> Result<ClientConfig, ConnectError> {
        let mut defaults = ClientConfig::new();
        defaults
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("client.id", task_producer_client_id(id));
        java_partitioner(&mut defaults);
        let overrides = super::client_overrides(
            ClientKind::Producer,
            connector_config,
            &self.config.client_override_policy,
        )?;
        self.config
            .kafka_client_with(
                ClientScope::Worker(ClientKind::Producer),
                defaults,
                Some(&overrides),
            )
            .map_err(|e| ConnectError::config(e.to_string()))
    }

    /// The security the task producer's settings resolve to (the worker's `producer.*` under
    /// the connector's `producer.override.*`), for the native transactional producer.
    fn producer_security(
        &self,
        connector_config: &ConfigMap,
    ) -> Result<crate::security::KafkaSecurity, ConnectError> {
        let overrides = super::client_overrides(
            ClientKind::Producer,
            connector_config,
            &self.config.client_override_policy,
        )?;
        self.config
            .client_settings(ClientScope::Worker(ClientKind::Producer))
            .merged(&overrides)
            .resolve()
            .map(|r| r.security)
            .map_err(|errors| {
                ConnectError::config(
                    errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                )
            })
    }

    /// A source task's topic creation (KIP-158): on when the worker has
    /// `topic.creation.enable=true` and the connector sets `topic.creation.*` keys, with an
    /// admin client from the worker's `admin.*` and the connector's `admin.override.*`. Invalid
    /// settings fail the task with Apache's message, as `SourceConnectorConfig` fails it.
    fn topic_creator(
        &self,
        id: &ConnectorTaskId,
        connector_config: &ConfigMap,
    ) -> Result<TopicCreator, ConnectError> {
        let Some(settings) =
            TopicCreation::from_config(connector_config, self.config.topic_creation_enable)?
        else {
            return Ok(TopicCreator::disabled());
        };
        let mut defaults = ClientConfig::new();
        defaults.set("client.id", format!("connector-adminclient-{id}"));
        let overrides = super::client_overrides(
            ClientKind::Admin,
            connector_config,
            &self.config.client_override_policy,
        )?;
        let admin = self
            .config
            .kafka_client_with(
                ClientScope::Worker(ClientKind::Admin),
                defaults,
                Some(&overrides),
            )
            .map_err(|e| ConnectError::config(e.to_string()))?;
        TopicCreator::new(Some(settings), &admin)
    }

    /// Stops tasks and waits until each has stopped (offsets committed, status written).
    /// Stops tasks: all are told to stop at once, then awaited together for at most
    /// `task.shutdown.graceful.timeout.ms` (Apache's `Worker.stopAndAwaitTasks`). A task still
    /// running then is abandoned: its runner is dropped where it can be (source tasks: the
    /// producer goes with it, an open transaction is aborted by the broker or fenced by the
    /// next generation), it is reported UNASSIGNED, and a line names it.
    pub async fn stop_tasks(&mut self, ids: &[ConnectorTaskId]) {
        let mut stopping = Vec::new();
        for id in ids {
            self.status.ledger.forget(&Work::Task(id.clone()));
            if let Some(t) = self.tasks.remove(id) {
                t.cancel.cancel();
                stopping.push((id.clone(), t.done, t.abandoned));
            }
        }
        let deadline = tokio::time::Instant::now() + self.config.task_shutdown_graceful_timeout;
        for (id, mut done, abandoned) in stopping {
            match tokio::time::timeout_at(deadline, &mut done).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(task = %id, error = %e, "task ended abnormally"),
                Err(_) => {
                    tracing::error!(
                        task = %id,
                        timeout_ms = self.config.task_shutdown_graceful_timeout.as_millis() as u64,
                        "Graceful stop of task {id} failed: it did not stop within task.shutdown.graceful.timeout.ms and is abandoned"
                    );
                    abandoned.store(true, Ordering::SeqCst);
                    done.abort();
                    self.status.on_shutdown(&id);
                }
            }
            // A task that had failed reported FAILED and nothing after: its series go now.
            metrics::global().task_state(&id, None);
        }
    }

    pub async fn stop_all(&mut self) {
        let tasks = self.running_tasks();
        self.stop_tasks(&tasks).await;
        for name in self.running_connectors() {
            self.stop_connector(&name).await;
        }
    }
}

/// Apache's client id of a task's producer (`connector-producer-<connector>-<task>`).
fn task_producer_client_id(id: &ConnectorTaskId) -> String {
    format!("connector-producer-{id}")
}
