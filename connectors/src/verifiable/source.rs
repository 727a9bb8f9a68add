//! The verifiable connector and task.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, connector::NAME_CONFIG};
use connect_api::connector::{
    ConnectorContext, ConnectorTransactionBoundaries, ExactlyOnceSupport, SourceConnector,
    SourceTask, SourceTaskContext,
};
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SourcePartition, SourceRecord, json_map};

use super::config::*;

/// How long an exhausted task (`max.records` reached) waits per poll, so the runtime loop idles.
const IDLE_POLL: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
pub struct VerifiableSourceConnector {
    config: ConfigMap,
}

#[async_trait]
impl SourceConnector for VerifiableSourceConnector {
    type Task = VerifiableSourceTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        VerifiableConfig::parse(&config)?;
        self.config = config;
        Ok(())
    }

    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok((0..max_tasks)
            .map(|i| {
                let mut c = self.config.clone();
                c.insert(ID_CONFIG.to_owned(), i.to_string());
                c
            })
            .collect())
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    fn exactly_once_support(&self, _config: &ConfigMap) -> ExactlyOnceSupport {
        ExactlyOnceSupport::Supported
    }

    fn can_define_transaction_boundaries(
        &self,
        _config: &ConfigMap,
    ) -> ConnectorTransactionBoundaries {
        ConnectorTransactionBoundaries::Supported
    }

    /// Offsets are plain seqnos; accept any well-formed ones.
    async fn alter_offsets(
        &self,
        _config: &ConfigMap,
        offsets: &connect_api::connector::SourceOffsets,
    ) -> Result<bool> {
        for (partition, offset) in offsets {
            if partition
                .get(ID_FIELD)
                .and_then(serde_json::Value::as_i64)
                .is_none()
            {
                return Err(ConnectError::config(format!(
                    "Source partitions must contain the integer key '{ID_FIELD}'"
                )));
            }
            if let Some(o) = offset
                && o.get(SEQNO_FIELD)
                    .and_then(serde_json::Value::as_i64)
                    .is_none_or(|s| s < 0)
            {
                return Err(ConnectError::config(format!(
                    "Source offsets must contain a non-negative integer '{SEQNO_FIELD}'"
                )));
            }
        }
        Ok(true)
    }
}

/// Emits `seqno` 0, 1, 2... for its partition `{"id": <task id>}`.
#[derive(Default)]
pub struct VerifiableSourceTask {
    state: Option<TaskState>,
}

struct TaskState {
    ctx: SourceTaskContext,
    config: VerifiableConfig,
    name: String,
    id: i32,
    partition: SourcePartition,
    starting_seqno: i64,
    seqno: i64,
    started_at: Instant,
    value_schema: Schema,
}

fn complete_value_schema() -> Schema {
    // Field types as Java's VerifiableSourceTask.COMPLETE_VALUE_SCHEMA.
    SchemaBuilder::struct_()
        .field("name", Schema::string())
        .field("task", Schema::int32())
        .field("topic", Schema::string())
        .field("time_ms", Schema::int64())
        .field("seqno", Schema::int64())
        .build()
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl VerifiableSourceTask {
    /// The next seqno this task will emit (for tests and diagnostics).
    pub fn next_seqno(&self) -> Option<i64> {
        self.state.as_ref().map(|s| s.seqno)
    }
}

impl TaskState {
    fn remaining(&self) -> Option<u64> {
        self.config
            .max_records
            .map(|max| max.saturating_sub(u64::try_from(self.seqno).unwrap_or(0)))
    }

    /// How long to wait before emitting the next record to stay under `throughput`.
    fn throttle_delay(&self) -> Option<Duration> {
        let rate = self.config.throughput?.get();
        let sent = u64::try_from(self.seqno - self.starting_seqno).unwrap_or(0);
        let due = Duration::from_secs_f64(sent as f64 / rate as f64);
        due.checked_sub(self.started_at.elapsed())
            .filter(|d| !d.is_zero())
    }

    fn record(&self, seqno: i64) -> Result<SourceRecord> {
        let value = if self.config.complete_record_data {
            Value::Struct(
                Struct::new(self.value_schema.clone())
                    .with("name", self.name.as_str())?
                    .with("task", self.id)?
                    .with("topic", self.config.topic.as_str())?
                    .with("time_ms", now_ms())?
                    .with("seqno", seqno)?,
            )
        } else {
            Value::Int64(seqno)
        };
        Ok(SourceRecord::new(
            self.partition.clone(),
            json_map(SEQNO_FIELD, seqno),
            self.config.topic.clone(),
            Some(self.value_schema.clone()),
            value,
        )
        .with_key(Some(Schema::int32()), Value::Int32(self.id)))
    }
}

#[async_trait]
impl SourceTask for VerifiableSourceTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let parsed = VerifiableConfig::parse(&config)?;
        let id = task_id(&config)?;
        let partition = json_map(ID_FIELD, id);
        let seqno = match ctx.offset_storage_reader().offset(&partition).await? {
            None => 0,
            Some(offset) => {
                let last = offset.get(SEQNO_FIELD).and_then(serde_json::Value::as_i64).ok_or_else(|| {
                    ConnectError::fatal(format!(
                        "stored offset {} for partition {{\"id\":{id}}} has no integer \"{SEQNO_FIELD}\"",
                        serde_json::Value::Object(offset.clone())
                    ))
                })?;
                last + 1
            }
        };
        let value_schema = if parsed.complete_record_data {
            complete_value_schema()
        } else {
            Schema::int64()
        };
        self.state = Some(TaskState {
            name: config.get(NAME_CONFIG).cloned().unwrap_or_default(),
            ctx,
            config: parsed,
            id,
            partition,
            starting_seqno: seqno,
            seqno,
            started_at: Instant::now(),
            value_schema,
        });
        Ok(())
    }

    /// `commit_record` is not overridden: the runtime may move the data into the chain.
    fn commit_record_reads_data(&self) -> bool {
        false
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let state = self
            .state
            .as_mut()
            .ok_or_else(|| ConnectError::fatal("VerifiableSourceTask polled before start"))?;
        let remaining = state.remaining();
        if remaining == Some(0) {
            state.ctx.sleep(IDLE_POLL).await;
            return Ok(Vec::new());
        }
        if let Some(delay) = state.throttle_delay()
            && state.ctx.sleep(delay).await
        {
            return Ok(Vec::new());
        }
        let mut n = state.config.batch_size.get();
        if let Some(r) = remaining {
            n = n.min(usize::try_from(r).unwrap_or(usize::MAX));
        }
        let every = i64::try_from(state.config.transaction_records.get()).unwrap_or(i64::MAX);
        // The last record before `max.records` closes its transaction too, or the records
        // since the previous boundary would wait in an open transaction forever.
        let last = state.config.max_records.and_then(|m| i64::try_from(m).ok());
        let mut batch = Vec::with_capacity(n);
        for _ in 0..n {
            let record = state.record(state.seqno)?;
            if let Some(tc) = state.ctx.transaction_context()
                && ((state.seqno + 1) % every == 0 || Some(state.seqno + 1) == last)
            {
                tc.commit_transaction_at(&record);
            }
            batch.push(record);
            state.seqno += 1;
        }
        Ok(batch)
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }
}
