//! Contexts: plain structs holding the runtime-supplied services a connector or task may use.
//!
//! Each service is a trait defined here and implemented by the runtime (or by a test harness),
//! so connectors depend on this crate alone.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::cancel::{CancellationToken, Timer, sleep_or_cancel};
use crate::error::{ConnectError, Result};
use crate::file_access::FileAccess;
use crate::record::{SinkRecord, SourceOffset, SourcePartition, SourceRecord, TopicPartition};

/// Reads committed source offsets (Java's `OffsetStorageReader`). Keys are exactly the maps the
/// task uses as `source_partition`.
#[async_trait]
pub trait OffsetStorageReader: Send + Sync {
    async fn offset(&self, partition: &SourcePartition) -> Result<Option<SourceOffset>>;

    async fn offsets(
        &self,
        partitions: &[SourcePartition],
    ) -> Result<Vec<(SourcePartition, Option<SourceOffset>)>> {
        let mut out = Vec::with_capacity(partitions.len());
        for p in partitions {
            out.push((p.clone(), self.offset(p).await?));
        }
        Ok(out)
    }
}

/// Metrics a task reports next to the worker's (Kafka 4.1's `PluginMetrics`, KIP-877, reduced
/// to gauges): the worker exports gauge `name` as `kafka_connect_task_plugin_<name>` with the
/// task's `connector` and `task` labels, and drops the task's series when the task leaves.
pub trait PluginMetrics: Send + Sync {
    /// Sets gauge `name` (lower case, digits and `_`; created on first use) to `value`.
    fn set_gauge(&self, name: &str, help: &str, value: f64);
}

/// Connector-defined transaction boundaries (Java's `TransactionContext`), given to tasks only
/// when exactly-once is enabled and `transaction.boundary=connector`.
///
/// Requests apply to the batch returned by the *current* `poll`. A record-level request names
/// a record of that batch; the runtime identifies it by its source partition and source offset,
/// so call it with (a reference to) the record you are about to return. Record-level requests
/// win over batch-level ones; asking to both commit and abort the same batch or record fails
/// the task.
pub trait TransactionContext: Send + Sync {
    /// Commit after the current batch has been processed.
    fn commit_transaction(&self);
    /// Commit right after `record` has been sent.
    fn commit_transaction_at(&self, record: &SourceRecord);
    /// Abort the current batch's transaction (offsets are still committed).
    fn abort_transaction(&self);
    /// Abort right after `record` has been sent.
    fn abort_transaction_at(&self, record: &SourceRecord);
}

/// Reports a sink record the task could not process to the error-handling pipeline
/// (Java's `ErrantRecordReporter`): logged and/or sent to the dead-letter queue per `errors.*`.
/// Returns once the report is durable; an error means the record was not tolerated.
#[async_trait]
pub trait ErrantRecordReporter: Send + Sync {
    async fn report(&self, record: &SinkRecord, error: &ConnectError) -> Result<()>;
}

/// Requests a connector may make of the runtime (Java's `ConnectorContext`).
pub trait ConnectorControl: Send + Sync {
    /// Ask for `task_configs` to be called again (e.g. the set of inputs changed).
    fn request_task_reconfiguration(&self);
    /// Fail the connector from a background activity.
    fn raise_error(&self, error: ConnectError);
}

/// Requests a sink task may make of its consumer (Java's `SinkTaskContext`).
pub trait SinkTaskControl: Send + Sync {
    /// Partitions currently assigned to this task.
    fn assignment(&self) -> Vec<TopicPartition>;
    /// Rewind (or advance) consumption: the next record read from each partition is at that offset.
    fn reset_offsets(&self, offsets: &[(TopicPartition, i64)]);
    /// After a retriable `put` failure, wait this long before redelivering.
    fn set_timeout(&self, timeout: Duration);
    fn pause(&self, partitions: &[TopicPartition]);
    fn resume(&self, partitions: &[TopicPartition]);
    /// Commit offsets as soon as possible (calls `pre_commit`).
    fn request_commit(&self);
}

/// Given to a connector's `start`.
#[derive(Clone)]
pub struct ConnectorContext {
    pub connector_name: String,
    pub cancellation: CancellationToken,
    control: Arc<dyn ConnectorControl>,
}

impl ConnectorContext {
    pub fn new(
        connector_name: impl Into<String>,
        control: Arc<dyn ConnectorControl>,
        cancellation: CancellationToken,
    ) -> Self {
        Self {
            connector_name: connector_name.into(),
            cancellation,
            control,
        }
    }

    pub fn request_task_reconfiguration(&self) {
        self.control.request_task_reconfiguration();
    }

    pub fn raise_error(&self, error: ConnectError) {
        self.control.raise_error(error);
    }
}

/// Given to a source task's `start`.
#[derive(Clone)]
pub struct SourceTaskContext {
    pub connector_name: String,
    pub task_id: u32,
    /// Cancelled when the runtime wants the task to stop; long waits in `poll` must watch it.
    pub cancellation: CancellationToken,
    timer: Arc<dyn Timer>,
    offset_reader: Arc<dyn OffsetStorageReader>,
    transaction_context: Option<Arc<dyn TransactionContext>>,
    file_access: FileAccess,
    plugin_metrics: Option<Arc<dyn PluginMetrics>>,
}

impl SourceTaskContext {
    pub fn new(
        connector_name: impl Into<String>,
        task_id: u32,
        offset_reader: Arc<dyn OffsetStorageReader>,
        timer: Arc<dyn Timer>,
        cancellation: CancellationToken,
    ) -> Self {
        Self {
            connector_name: connector_name.into(),
            task_id,
            cancellation,
            timer,
            offset_reader,
            transaction_context: None,
            file_access: FileAccess::disabled(),
            plugin_metrics: None,
        }
    }

    /// The directories the worker lets this task read and write (none unless set).
    pub fn with_file_access(mut self, access: FileAccess) -> Self {
        self.file_access = access;
        self
    }

    pub fn file_access(&self) -> &FileAccess {
        &self.file_access
    }

    /// Where the task's own metrics go (set by the worker).
    pub fn with_plugin_metrics(mut self, metrics: Arc<dyn PluginMetrics>) -> Self {
        self.plugin_metrics = Some(metrics);
        self
    }

    /// The task's own metrics (`None` when nothing collects them, e.g. in unit tests).
    pub fn plugin_metrics(&self) -> Option<&dyn PluginMetrics> {
        self.plugin_metrics.as_deref()
    }

    /// Set by the runtime only for exactly-once tasks with `transaction.boundary=connector`.
    pub fn with_transaction_context(mut self, tc: Arc<dyn TransactionContext>) -> Self {
        self.transaction_context = Some(tc);
        self
    }

    pub fn offset_storage_reader(&self) -> &dyn OffsetStorageReader {
        &*self.offset_reader
    }

    pub fn transaction_context(&self) -> Option<&dyn TransactionContext> {
        self.transaction_context.as_deref()
    }

    /// Sleeps unless cancelled first; returns `true` if the task was cancelled.
    pub async fn sleep(&self, duration: Duration) -> bool {
        sleep_or_cancel(&*self.timer, &self.cancellation, duration).await
    }
}

/// Given to a sink task's `start`.
#[derive(Clone)]
pub struct SinkTaskContext {
    pub connector_name: String,
    pub task_id: u32,
    pub cancellation: CancellationToken,
    timer: Arc<dyn Timer>,
    control: Arc<dyn SinkTaskControl>,
    errant_record_reporter: Option<Arc<dyn ErrantRecordReporter>>,
    file_access: FileAccess,
}

impl SinkTaskContext {
    pub fn new(
        connector_name: impl Into<String>,
        task_id: u32,
        control: Arc<dyn SinkTaskControl>,
        timer: Arc<dyn Timer>,
        cancellation: CancellationToken,
    ) -> Self {
        Self {
            connector_name: connector_name.into(),
            task_id,
            cancellation,
            timer,
            control,
            errant_record_reporter: None,
            file_access: FileAccess::disabled(),
        }
    }

    /// The directories the worker lets this task read and write (none unless set).
    pub fn with_file_access(mut self, access: FileAccess) -> Self {
        self.file_access = access;
        self
    }

    pub fn file_access(&self) -> &FileAccess {
        &self.file_access
    }

    /// Set by the runtime when error tolerance or a dead-letter queue is configured.
    pub fn with_errant_record_reporter(mut self, reporter: Arc<dyn ErrantRecordReporter>) -> Self {
        self.errant_record_reporter = Some(reporter);
        self
    }

    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.control.assignment()
    }

    pub fn reset_offsets(&self, offsets: &[(TopicPartition, i64)]) {
        self.control.reset_offsets(offsets);
    }

    pub fn set_timeout(&self, timeout: Duration) {
        self.control.set_timeout(timeout);
    }

    pub fn pause(&self, partitions: &[TopicPartition]) {
        self.control.pause(partitions);
    }

    pub fn resume(&self, partitions: &[TopicPartition]) {
        self.control.resume(partitions);
    }

    pub fn request_commit(&self) {
        self.control.request_commit();
    }

    pub fn errant_record_reporter(&self) -> Option<&dyn ErrantRecordReporter> {
        self.errant_record_reporter.as_deref()
    }

    /// Sleeps unless cancelled first; returns `true` if the task was cancelled.
    pub async fn sleep(&self, duration: Duration) -> bool {
        sleep_or_cancel(&*self.timer, &self.cancellation, duration).await
    }
}
