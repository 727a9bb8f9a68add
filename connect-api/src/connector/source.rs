//! Source connectors and tasks.
//!
//! # Call order
//!
//! Connector (one instance per connector, on the worker that owns it):
//!
//! ```text
//! [version | config_def | validate | exactly_once_support
//!  | can_define_transaction_boundaries | alter_offsets]   (fresh instance, never started)
//! start(ctx, config) -> task_configs(max_tasks)* -> stop()
//! ```
//!
//! Task (one instance per task):
//!
//! ```text
//! start(ctx, config)
//!   loop { poll() -> records; commit_record(record, metadata) per sent record;
//!          commit() after the runtime committed offsets }
//! stop()
//! ```
//!
//! The runtime never drops an in-flight `poll`. To stop, it cancels `ctx.cancellation`; a
//! `poll` that waits must watch it and return (possibly an empty batch). `stop` runs after the
//! last `poll` returned. Java's `initialize(context)` + `start(props)` are one `start`.

use async_trait::async_trait;

use super::context::{ConnectorContext, SourceTaskContext};
use crate::config::{ConfigDef, ConfigMap, ConfigValue};
use crate::error::Result;
use crate::file_access::FileAccess;
use crate::record::{SourceOffset, SourcePartition, SourceRecord};

/// A connector's answer to "can you give exactly-once semantics with this config?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExactlyOnceSupport {
    Supported,
    Unsupported,
    /// The connector does not say (Java's `null` return).
    Unknown,
}

/// A connector's answer to "can you define transaction boundaries with this config?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectorTransactionBoundaries {
    Supported,
    Unsupported,
}

/// Where a source record was written (Java's `RecordMetadata`); `None` when the record was
/// dropped by a transformation or tolerated error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMetadata {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub timestamp: Option<i64>,
}

/// Offsets to alter: `None` removes the partition's offset (KIP-875).
pub type SourceOffsets = Vec<(SourcePartition, Option<SourceOffset>)>;

/// A source connector: splits the work into task configs.
#[async_trait]
pub trait SourceConnector: Send + Sync + 'static {
    /// The task type this connector's task configs are for.
    type Task: SourceTask + Default;

    fn version(&self) -> String;

    /// The connector's own keys (the framework adds its common keys).
    fn config_def(&self) -> ConfigDef;

    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()>;

    /// At most `max_tasks` task configs; the runtime adds `task.class`.
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>>;

    async fn stop(&mut self) -> Result<()>;

    /// Pure validation of the connector's own keys; default: `config_def().validate(config)`.
    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        self.config_def().validate(config)
    }

    /// Validation as the worker runs it, with the directories it lets connectors use;
    /// default: [`Self::validate`]. Connectors that open local files check their paths here.
    fn validate_with_files(&self, config: &ConfigMap, _files: &FileAccess) -> Vec<ConfigValue> {
        self.validate(config)
    }

    /// Called during validation when `exactly.once.support=required`.
    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Unknown
    }

    /// Called during validation when `transaction.boundary=connector`.
    fn can_define_transaction_boundaries(
        &self,
        _config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        ConnectorTransactionBoundaries::Unsupported
    }

    /// Called before the runtime alters or resets offsets of a stopped connector. `Ok(true)`:
    /// the connector acknowledges (and handled any external offsets); `Ok(false)` (default):
    /// only framework-managed offsets change. An error rejects the request.
    async fn alter_offsets(&self, _config: &ConfigMap, _offsets: &SourceOffsets) -> Result<bool> {
        Ok(false)
    }
}

/// A source task: produces records with their source partition and offset.
#[async_trait]
pub trait SourceTask: Send + 'static {
    fn version(&self) -> String;

    /// Reads `ctx`'s offsets to resume and prepares to poll.
    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()>;

    /// The next batch; an empty batch means "nothing now". Must return soon after
    /// cancellation.
    async fn poll(&mut self) -> Result<Vec<SourceRecord>>;

    /// The runtime committed offsets up to the last polled batches (Java's `commit`).
    async fn commit(&mut self) -> Result<()> {
        Ok(())
    }

    /// Whether [`SourceTask::commit_record`] reads the record's topic, key, value, schemas or
    /// headers. `false` (a task that does not override `commit_record`, or reads only the source
    /// partition and offset) lets the runtime move that data into the transformation chain
    /// instead of copying it; the record `commit_record` then gets keeps its source partition,
    /// source offset, Kafka partition and timestamp. `true`, the default, keeps Apache's contract:
    /// `commit_record` sees the record as `poll` returned it.
    fn commit_record_reads_data(&self) -> bool {
        true
    }

    /// One record was acknowledged by Kafka (or dropped, `metadata = None`). Kept synchronous
    /// and cheap: it runs once per record.
    fn commit_record(
        &mut self,
        _record: &SourceRecord,
        _metadata: Option<&RecordMetadata>,
    ) -> Result<()> {
        Ok(())
    }

    async fn stop(&mut self) -> Result<()>;
}
