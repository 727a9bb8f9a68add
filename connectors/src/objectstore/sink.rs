//! The object-store sink task: buffers per partition, uploads at deterministic boundaries.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap};
use connect_api::connector::{
    ConnectorContext, SinkConnector, SinkOffsets, SinkTask, SinkTaskContext,
};
use connect_api::converter::JsonConverter;
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SinkRecord, TopicPartition};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::config::{ObjectStoreSinkConfig, sink_config_def};

#[derive(Debug, Default)]
pub struct ObjectStoreSinkConnector {
    config: ConfigMap,
}

#[async_trait]
impl SinkConnector for ObjectStoreSinkConnector {
    type Task = ObjectStoreSinkTask;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        sink_config_def()
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        ObjectStoreSinkConfig::parse(&config)?;
        self.config = config;
        Ok(())
    }

    fn task_configs(&self, max_tasks: usize) -> Result<Vec<ConfigMap>> {
        Ok(vec![self.config.clone(); max_tasks])
    }

    async fn stop(&mut self) -> Result<()> {
        Ok(())
    }

    async fn alter_offsets(
        &self,
        _config: &ConfigMap,
        _offsets: &[(TopicPartition, Option<i64>)],
    ) -> Result<bool> {
        Ok(true)
    }
}

/// `<prefix>/<topic>/partition=<p>/<topic>+<p>+<first offset, zero-padded to 20>.jsonl`.
pub fn object_name(prefix: &Path, topic: &str, partition: i32, first_offset: i64) -> Path {
    let mut parts: Vec<String> = prefix.parts().map(|p| p.as_ref().to_owned()).collect();
    parts.push(topic.to_owned());
    parts.push(format!("partition={partition}"));
    parts.push(format!("{topic}+{partition}+{first_offset:020}.jsonl"));
    Path::from_iter(parts)
}

#[derive(Default)]
struct Buffer {
    first_offset: i64,
    last_offset: i64,
    /// Window of the first record (timestamp / rotate.interval.ms).
    window: Option<i64>,
    count: usize,
    bytes: Vec<u8>,
}

#[derive(Default)]
pub struct ObjectStoreSinkTask {
    ctx: Option<SinkTaskContext>,
    config: Option<ObjectStoreSinkConfig>,
    store: Option<Arc<dyn ObjectStore>>,
    prefix: Path,
    buffers: BTreeMap<TopicPartition, Buffer>,
    /// Next offset after the last fully uploaded file, per partition.
    committed: BTreeMap<TopicPartition, i64>,
    json: Option<JsonConverter>,
}

impl ObjectStoreSinkTask {
    async fn upload(&mut self, tp: &TopicPartition) -> Result<()> {
        let Some(buf) = self.buffers.remove(tp) else {
            return Ok(());
        };
        if buf.count == 0 {
            return Ok(());
        }
        let store = self.store.as_ref().expect("started");
        let name = object_name(&self.prefix, &tp.topic, tp.partition, buf.first_offset);
        let size = buf.bytes.len();
        store
            .put(&name, PutPayload::from(buf.bytes))
            .await
            .map_err(|e| {
                ConnectError::retriable(format!("failed to upload {name}")).with_source(e)
            })?;
        tracing::debug!(object = %name, records = buf.count, size, "uploaded");
        self.committed.insert(tp.clone(), buf.last_offset + 1);
        Ok(())
    }

    fn line(&self, record: &SinkRecord) -> Result<Vec<u8>> {
        let json = self
            .json
            .as_ref()
            .expect("started")
            .to_json_value(record.value_schema.as_ref(), &record.value)?;
        let mut line = serde_json::to_vec(&json)
            .map_err(|e| ConnectError::data(format!("failed to encode a record as JSON: {e}")))?;
        line.push(b'\n');
        Ok(line)
    }
}

#[async_trait]
impl SinkTask for ObjectStoreSinkTask {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()> {
        let config = ObjectStoreSinkConfig::parse(&config)?;
        let (store, prefix) = config.open()?;
        self.store = Some(store);
        self.prefix = prefix;
        self.config = Some(config);
        self.ctx = Some(ctx);
        self.json = Some(JsonConverter::new(false));
        Ok(())
    }

    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        // A retriable error redelivers this batch: start from what was uploaded so the
        // buffers never hold a record twice.
        let flush_size = self.config.as_ref().expect("started").flush_size.get();
        let rotate = self.config.as_ref().expect("started").rotate_interval_ms;
        for record in records {
            let tp = record.topic_partition();
            if let Some(buf) = self.buffers.get(&tp)
                && buf.count > 0
                && record.kafka_offset <= buf.last_offset
            {
                // Redelivered after a retriable failure: already buffered.
                continue;
            }
            if self
                .committed
                .get(&tp)
                .is_some_and(|c| record.kafka_offset < *c)
            {
                continue;
            }
            let line = match self.line(&record) {
                Ok(l) => l,
                Err(e) => {
                    match self.ctx.as_ref().and_then(|c| c.errant_record_reporter()) {
                        Some(r) => r.report(&record, &e).await?,
                        None => return Err(e),
                    }
                    continue;
                }
            };
            let window = rotate.map(|ms| record.timestamp.unwrap_or(0).div_euclid(ms));
            if let Some(buf) = self.buffers.get(&tp)
                && buf.count > 0
                && window.is_some()
                && buf.window != window
            {
                self.upload(&tp).await?;
            }
            let buf = self.buffers.entry(tp.clone()).or_default();
            if buf.count == 0 {
                buf.first_offset = record.kafka_offset;
                buf.window = window;
            }
            buf.last_offset = record.kafka_offset;
            buf.count += 1;
            buf.bytes.extend_from_slice(&line);
            if buf.count >= flush_size {
                self.upload(&tp).await?;
            }
        }
        Ok(())
    }

    /// Only offsets of fully uploaded files; partitions with nothing uploaded are left out.
    async fn pre_commit(&mut self, offsets: SinkOffsets) -> Result<SinkOffsets> {
        Ok(offsets
            .into_keys()
            .filter_map(|tp| self.committed.get(&tp).map(|o| (tp, *o)))
            .collect())
    }

    async fn open(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        for tp in partitions {
            self.buffers.remove(tp);
        }
        Ok(())
    }

    async fn close(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        for tp in partitions {
            self.buffers.remove(tp);
            self.committed.remove(tp);
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<()> {
        self.buffers.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_offset() {
        let n = object_name(&Path::from("pre/fix"), "orders", 3, 1000);
        assert_eq!(
            n.as_ref(),
            "pre/fix/orders/partition=3/orders+3+00000000000000001000.jsonl"
        );
        let root = object_name(&Path::default(), "t", 0, 0);
        assert_eq!(
            root.as_ref(),
            "t/partition=0/t+0+00000000000000000000.jsonl"
        );
    }
}
