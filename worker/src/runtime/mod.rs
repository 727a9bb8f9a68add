//! Connector and task instances: what runs on this worker once the herder assigned it.
//!
//! - [`convert`]: the key/value/header converters of a connector (its overrides, else the worker's)
//! - [`source`]: the at-least-once source task runner (poll -> convert -> produce -> offsets)
//! - [`connector`]: a running connector instance (start, task configs, pause, stop)
//! - [`worker`]: the connectors and tasks running on this worker (Connect's `Worker`)
//! - [`exactly_once`]: the exactly-once source task runner (KIP-618: records and offsets in one transaction)
//! - [`sink`]: the sink task runner (consume -> convert -> put -> pre_commit -> commit)
//! - [`topic_creation`]: KIP-158, source tasks create their topics before the first record
//! - [`panics`]: panics in connector code become task and connector failures
//! - [`shared_producers`]: at-least-once source tasks of the same producer config share one producer
//! - [`errors`]: `errors.*` tolerance and logging, the dead-letter queue, the errant record reporter
//!
//! Runners report through [`TaskStatusListener`] and persist source offsets through
//! [`SourceOffsetBackend`]; the herder implements both on the status and offset stores.

pub mod connector;
pub mod consumer_errors;
pub mod convert;
pub mod errors;
pub mod exactly_once;
pub mod ledger;
mod offsets;
pub mod offsets_admin;
pub mod panics;
pub mod shared_producers;
pub mod sink;
pub mod source;
pub mod topic_creation;
pub mod topics;
pub mod txn_producer;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use connect_api::connector::OffsetStorageReader;
use connect_api::{ConnectError, SourceOffset, SourcePartition, Timer};

pub use crate::storage::ConnectorTaskId;

/// What a runner reports about its task (Java's `TaskStatus.Listener`).
pub trait TaskStatusListener: Send + Sync {
    fn on_running(&self, id: &ConnectorTaskId);
    fn on_paused(&self, id: &ConnectorTaskId);
    /// The task failed with `error` (its chain is the status `trace`).
    fn on_failure(&self, id: &ConnectorTaskId, error: &ConnectError);
    /// The task stopped cleanly (rebalance, shutdown, stop).
    fn on_shutdown(&self, id: &ConnectorTaskId);
    /// The task used `topic` for the first time in this run (KIP-558 active topics).
    fn on_topic_used(&self, _id: &ConnectorTaskId, _topic: &str) {}
}

/// Reports how a task's run ended (`kind`: "source task", "sink task", ...), as Apache's
/// `WorkerTask.doRun` does: a failure after the task was asked to stop (`stopping`: revoked,
/// membership lost, shutdown) is logged, not reported FAILED: a newer instance may already run
/// elsewhere, and a zombie's FAILED would hide it (a fenced exactly-once task fails exactly then).
pub(crate) fn report_end(
    id: &ConnectorTaskId,
    kind: &str,
    status: &dyn TaskStatusListener,
    stopping: bool,
    outcome: Result<(), ConnectError>,
) {
    match outcome {
        Ok(()) => {
            tracing::info!(task = %id, "{kind} stopped");
            status.on_shutdown(id);
        }
        Err(e) if stopping => {
            tracing::warn!(task = %id, error = %e, "{kind} failed after being asked to stop; not reported as FAILED (a newer instance may already run)");
            status.on_shutdown(id);
        }
        Err(e) => {
            tracing::error!(task = %id, error = %e, "{kind} failed");
            status.on_failure(id, &e);
        }
    }
}

/// Where source offsets live (the offsets topic), keyed by connector.
#[async_trait]
pub trait SourceOffsetBackend: Send + Sync {
    async fn read(
        &self,
        connector: &str,
        partitions: &[SourcePartition],
    ) -> Result<Vec<(SourcePartition, Option<SourceOffset>)>, String>;

    /// Returns once the offsets are durable (acknowledged by Kafka).
    async fn write(
        &self,
        connector: &str,
        offsets: Vec<(SourcePartition, Option<SourceOffset>)>,
    ) -> Result<(), String>;
}

/// A task's [`OffsetStorageReader`], reading the connector's offsets from the backend.
pub struct BackendOffsetReader {
    pub connector: String,
    pub backend: Arc<dyn SourceOffsetBackend>,
}

#[async_trait]
impl OffsetStorageReader for BackendOffsetReader {
    async fn offset(
        &self,
        partition: &SourcePartition,
    ) -> connect_api::Result<Option<SourceOffset>> {
        Ok(self
            .offsets(std::slice::from_ref(partition))
            .await?
            .into_iter()
            .next()
            .and_then(|(_, o)| o))
    }

    async fn offsets(
        &self,
        partitions: &[SourcePartition],
    ) -> connect_api::Result<Vec<(SourcePartition, Option<SourceOffset>)>> {
        self.backend
            .read(&self.connector, partitions)
            .await
            .map_err(|e| {
                connect_api::ConnectError::retriable(format!(
                    "failed to read offsets for connector \"{}\": {e}",
                    self.connector
                ))
            })
    }
}

/// Connect's timers run on tokio here.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioTimer;

impl Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> connect_api::cancel::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The error chain of a failure, as Connect shows it in a status `trace`.
pub fn error_trace(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        out.push_str("\nCaused by: ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// A connector's `<client>.override.*` keys, translated, after the worker's
/// `connector.client.config.override.policy` has allowed them (Apache's
/// `Worker.connectorClientConfigOverrides`: a config stored before the policy changed, or by
/// another worker, fails the task with `Client Config Overrides not allowed [...]`). A key no
/// client can use (in a config stored before it was validated) fails the task too.
pub(crate) fn client_overrides(
    kind: crate::config::clients::ClientKind,
    connector_config: &connect_api::ConfigMap,
    policy: &crate::config::override_policy::OverridePolicy,
) -> Result<crate::config::clients::ClientSettings, connect_api::ConnectError> {
    policy
        .enforce(kind.override_prefix(), connector_config)
        .map_err(connect_api::ConnectError::config)?;
    crate::config::clients::connector_overrides(kind, connector_config).map_err(|errors| {
        connect_api::ConnectError::config(
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })
}
