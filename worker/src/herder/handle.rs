//! [`HerderHandle`]: what the REST layer and the runtime hold of the herder. Reads (config
//! snapshot, statuses, the worker's place in the group) are answered from the stores; every
//! change goes through the herder's request queue ([`super::api`]), one request at a time.

use std::sync::Arc;

use connect_api::{ConfigMap, PluginRegistry, PluginType};
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{RwLock, mpsc, oneshot};

use super::error::HerderError;
use super::{HerderView, WorkerStage, session_key};
use crate::config::{ConnectProtocol, WorkerConfig};
use crate::logging::LogLevels;
use crate::storage::{
    ClusterConfigState, ConfigBackingStore, ConnectorTaskId, OffsetBackingStore, StatusBackingStore,
};
use crate::stuck_transactions::TransactionWatch;

/// Requests the herder loop itself must carry out (it owns the running work).
#[derive(Debug)]
pub(super) enum HerderCommand {
    /// Restart one task if it runs on this worker.
    RestartTask(ConnectorTaskId),
    /// Answered by the herder loop between two of its steps: `GET /health` asks it.
    Ping(oneshot::Sender<()>),
    /// Answered once the herder loop has applied the config snapshot it sees then (tasks a
    /// written change stops are stopped).
    Apply(oneshot::Sender<()>),
}

/// One queued request: runs to completion before the next one starts.
type Job = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// Everything the handle is built from.
pub struct HandleParts {
    pub config: Arc<WorkerConfig>,
    pub registry: Arc<PluginRegistry>,
    pub config_store: Arc<ConfigBackingStore>,
    pub status_store: Arc<StatusBackingStore>,
    pub offset_store: Arc<OffsetBackingStore>,
    pub view: Arc<RwLock<HerderView>>,
    pub kafka_cluster_id: Arc<str>,
    pub log_levels: LogLevels,
    pub stage: WorkerStage,
    /// The cluster's open transactions (`None` when its clients could not be built).
    pub transactions: Option<Arc<TransactionWatch>>,
    /// A standalone worker (`connect-worker standalone`): no group, no internal topics.
    pub standalone: bool,
}

/// The herder as the REST layer and the runtime see it. Cheap to clone.
#[derive(Clone)]
pub struct HerderHandle {
    pub(super) config: Arc<WorkerConfig>,
    pub(super) registry: Arc<PluginRegistry>,
    pub(super) config_store: Arc<ConfigBackingStore>,
    pub(super) status_store: Arc<StatusBackingStore>,
    pub(super) offset_store: Arc<OffsetBackingStore>,
    pub(super) view: Arc<RwLock<HerderView>>,
    kafka_cluster_id: Arc<str>,
    pub(super) commands: mpsc::UnboundedSender<HerderCommand>,
    requests: mpsc::UnboundedSender<Job>,
    pub(super) log_levels: LogLevels,
    pub(super) stage: WorkerStage,
    pub(super) transactions: Option<Arc<TransactionWatch>>,
    pub(super) standalone: bool,
    /// False while a standalone worker creates its command line's connectors (Apache's
    /// `herder.ready()` comes after them): `GET /health` answers starting until then.
    startup_done: Arc<std::sync::atomic::AtomicBool>,
}

/// Runs queued requests one after the other until every handle is gone. A request that
/// panics answers [`HerderError::Stopped`] and the queue goes on.
async fn run_queue(mut jobs: mpsc::UnboundedReceiver<Job>) {
    while let Some(job) = jobs.recv().await {
        if std::panic::AssertUnwindSafe(job())
            .catch_unwind()
            .await
            .is_err()
        {
            tracing::error!("a herder request panicked; the request queue goes on");
        }
    }
}

impl HerderHandle {
    /// The handle and the command receiver the herder loop reads; starts the request queue.
    pub fn new(parts: HandleParts) -> (Self, HerderCommands) {
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let (requests, requests_rx) = mpsc::unbounded_channel();
        tokio::spawn(run_queue(requests_rx));
        (
            HerderHandle {
                config: parts.config,
                registry: parts.registry,
                config_store: parts.config_store,
                status_store: parts.status_store,
                offset_store: parts.offset_store,
                view: parts.view,
                kafka_cluster_id: parts.kafka_cluster_id,
                commands,
                requests,
                log_levels: parts.log_levels,
                stage: parts.stage,
                transactions: parts.transactions,
                startup_done: Arc::new(std::sync::atomic::AtomicBool::new(!parts.standalone)),
                standalone: parts.standalone,
            },
            HerderCommands(commands_rx),
        )
    }

    /// Runs `f` on the request queue: after every request queued before it, before every
    /// request queued after it. This is what makes "check, then write" atomic on a worker.
    pub(super) async fn serialised<T, F>(&self, f: F) -> Result<T, HerderError>
    where
        T: Send + 'static,
        F: FnOnce(HerderHandle) -> BoxFuture<'static, Result<T, HerderError>> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let h = self.clone();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let _ = tx.send(f(h).await);
            })
        });
        self.requests.send(job).map_err(|_| HerderError::Stopped)?;
        rx.await.map_err(|_| HerderError::Stopped)?
    }

    /// Whether the herder loop answers within `timeout` (Apache's `Herder.healthCheck`): a
    /// loop stuck in one step (a task that does not stop, a store that does not answer) does
    /// not.
    pub async fn ping(&self, timeout: std::time::Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(HerderCommand::Ping(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(timeout, rx).await, Ok(Ok(())))
    }

    /// Whether this is a standalone worker (Apache's `StandaloneHerder`).
    pub fn is_standalone(&self) -> bool {
        self.standalone
    }

    pub fn config(&self) -> &Arc<WorkerConfig> {
        &self.config
    }

    pub fn registry(&self) -> &Arc<PluginRegistry> {
        &self.registry
    }

    /// The latest config topic snapshot this worker has read.
    pub fn snapshot(&self) -> Arc<ClusterConfigState> {
        self.config_store.snapshot()
    }

    /// Connector and task statuses, read from the status topic.
    pub fn statuses(&self) -> &StatusBackingStore {
        &self.status_store
    }

    /// The worker's place in the group.
    pub async fn view(&self) -> HerderView {
        self.view.read().await.clone()
    }

    pub fn kafka_cluster_id(&self) -> &str {
        &self.kafka_cluster_id
    }

    pub fn log_levels(&self) -> &LogLevels {
        &self.log_levels
    }

    /// The cluster's open transactions (`GET /admin/transactions`).
    pub fn transactions(&self) -> Option<&Arc<TransactionWatch>> {
        self.transactions.as_ref()
    }

    /// Waits (up to `timeout`) until the herder loop has applied the current config snapshot
    /// on this worker; false if it did not answer in time.
    pub(super) async fn applied(&self, timeout: std::time::Duration) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(HerderCommand::Apply(tx)).is_err() {
            return false;
        }
        matches!(tokio::time::timeout(timeout, rx).await, Ok(Ok(())))
    }

    /// The start-up path is done (for a standalone worker: its files' connectors exist).
    pub fn complete_startup(&self) {
        self.startup_done
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// See [`HerderHandle::complete_startup`].
    pub fn startup_completed(&self) -> bool {
        self.startup_done.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn stage(&self) -> &WorkerStage {
        &self.stage
    }

    /// Whether the herder loop has ended (the worker cannot change anything any more).
    pub fn herder_stopped(&self) -> bool {
        self.commands.is_closed()
    }

    /// `source`, `sink` or `unknown`, from the config's `connector.class`.
    pub fn connector_type(&self, config: &ConfigMap) -> &'static str {
        config
            .get(connect_api::config::connector::CONNECTOR_CLASS_CONFIG)
            .and_then(|c| self.registry.describe(c).ok())
            .map(|(_, t)| match t {
                PluginType::Source => "source",
                PluginType::Sink => "sink",
                _ => "unknown",
            })
            .unwrap_or("unknown")
    }

    /// Whether internal requests are signed: only under the `sessioned` protocol.
    pub fn signs_internal_requests(&self) -> bool {
        self.config.connect_protocol == ConnectProtocol::Sessioned
    }

    /// `(algorithm header, signature header)` for an internal request body, or `None` when
    /// requests are not signed or no session key is known yet.
    pub fn sign_internal_request(&self, body: &[u8]) -> Option<(String, String)> {
        if !self.signs_internal_requests() {
            return None;
        }
        let key = self.config_store.snapshot().session_key.clone()?;
        let settings = session_key::KeySettings::from_config(&self.config);
        let alg = settings.signature_algorithm;
        let sig = session_key::sign(&alg, &key.key, body).ok()?;
        Some((alg, sig))
    }

    /// Checks an internal request's signature headers against the session key (KIP-507).
    pub fn verify_internal_request(
        &self,
        algorithm: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<(), HerderError> {
        if !self.signs_internal_requests() {
            return Ok(());
        }
        let (Some(algorithm), Some(signature)) = (algorithm, signature) else {
            return Err(HerderError::BadRequest(
                "Internal request missing required signature".to_owned(),
            ));
        };
        let settings = session_key::KeySettings::from_config(&self.config);
        if !settings
            .verification_algorithms
            .iter()
            .any(|a| a == algorithm)
        {
            return Err(HerderError::BadRequest(format!(
                "This worker does not support the '{algorithm}' key signing algorithm used by other workers. This worker is currently configured to use: {:?}. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it.",
                settings.verification_algorithms
            )));
        }
        let Some(key) = self.config_store.snapshot().session_key.clone() else {
            return Err(HerderError::Starting(
                "This worker is still starting up and has not been able to read a session key from the config topic yet".to_owned(),
            ));
        };
        match session_key::verify(algorithm, &key.key, body, signature) {
            Ok(true) => Ok(()),
            Ok(false) => Err(HerderError::Forbidden(
                "Internal request contained invalid signature.".to_owned(),
            )),
            Err(e) => Err(HerderError::BadRequest(format!(
                "Internal request signature could not be checked: {e}"
            ))),
        }
    }
}

/// The herder loop's end of the command channel.
pub struct HerderCommands(pub(super) mpsc::UnboundedReceiver<HerderCommand>);
