//! Sink connectors and tasks.
//!
//! # Call order
//!
//! Connector: as for sources (`start -> task_configs* -> stop`; `validate`, `config_def`,
//! `alter_offsets` on fresh instances).
//!
//! Task:
//!
//! ```text
//! start(ctx, config)
//!   open(partitions)            on every assignment
//!   put(records)*               batches from the consumer
//!   pre_commit(offsets)         before each offset commit (default: flush, then commit them)
//!   close(partitions)           on revocation, before the partitions move
//! stop()
//! ```
//!
//! Offsets are *next offsets to consume* (Kafka's convention: last processed + 1). The runtime
//! never drops an in-flight call; it cancels `ctx.cancellation` and waits.

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::context::{ConnectorContext, SinkTaskContext};
use crate::config::{ConfigDef, ConfigMap, ConfigValue};
use crate::error::Result;
use crate::file_access::FileAccess;
use crate::record::{SinkRecord, TopicPartition};

/// Next offset to consume per partition.
pub type SinkOffsets = BTreeMap<TopicPartition, i64>;

#[async_trait]
pub trait SinkConnector: Send + Sync + 'static {
    type Task: SinkTask + Default;

    fn version(&self) -> String;
    fn config_def(&self) -> ConfigDef;
    async fn start(&mut self, ctx: ConnectorContext, config: ConfigMap) -> Result<()>;
    /// At most `max_tasks` configs; the runtime adds `task.class` and copies `topics`/`topics.regex`.
    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>>;
    async fn stop(&mut self) -> Result<()>;

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        self.config_def().validate(config)
    }

    /// Validation as the worker runs it, with the directories it lets connectors use;
    /// default: [`Self::validate`]. Connectors that open local files check their paths here.
    fn validate_with_files(&self, config: &ConfigMap, _files: &FileAccess) -> Vec<ConfigValue> {
        self.validate(config)
    }

    /// `None` deletes the partition's committed offset. See [`super::SourceConnector::alter_offsets`].
    async fn alter_offsets(
        &self,
        _config: &ConfigMap,
        _offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool> {
        Ok(false)
    }
}

#[async_trait]
pub trait SinkTask: Send + 'static {
    fn version(&self) -> String;

    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()>;

    async fn open(&mut self, _partitions: &[TopicPartition]) -> Result<()> {
        Ok(())
    }

    /// Writes (or buffers) records. A retriable error redelivers the same batch.
    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()>;

    /// Makes everything `put` so far durable.
    async fn flush(&mut self, _offsets: &SinkOffsets) -> Result<()> {
        Ok(())
    }

    /// Returns the offsets safe to commit; default flushes and returns `offsets` unchanged.
    async fn pre_commit(&mut self, offsets: SinkOffsets) -> Result<SinkOffsets> {
        self.flush(&offsets).await?;
        Ok(offsets)
    }

    async fn close(&mut self, _partitions: &[TopicPartition]) -> Result<()> {
        Ok(())
    }

    async fn stop(&mut self) -> Result<()>;
}
