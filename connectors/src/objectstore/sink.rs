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
    /// Uploads the partition's buffer as one file. The buffer stays until the `PUT` succeeded:
    /// a failed upload is retried with the same records (same name, same content) when the
    /// runner redelivers the batch, so no record buffered by an earlier `put` is lost.
    async fn upload(&mut self, tp: &TopicPartition) -> Result<()> {
        let Some(buf) = self.buffers.get(tp) else {
            return Ok(());
        };
        if buf.count == 0 {
            self.buffers.remove(tp);
            return Ok(());
        }
        let store = self.store.as_ref().expect("started");
        let name = object_name(&self.prefix, &tp.topic, tp.partition, buf.first_offset);
        let (count, size, last_offset) = (buf.count, buf.bytes.len(), buf.last_offset);
        store
            .put(&name, PutPayload::from(buf.bytes.clone()))
            .await
            .map_err(|e| {
                ConnectError::retriable(format!("failed to upload {name}")).with_source(e)
            })?;
        tracing::debug!(object = %name, records = count, size, "uploaded");
        self.buffers.remove(tp);
        self.committed.insert(tp.clone(), last_offset + 1);
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
            // A full buffer is one whose upload failed: upload it before adding to it, so
            // files keep their deterministic boundaries.
            if let Some(buf) = self.buffers.get(&tp)
                && buf.count > 0
                && (buf.count >= flush_size || (window.is_some() && buf.window != window))
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use connect_api::data::Value;
    use futures::StreamExt;
    use futures::stream::BoxStream;
    use object_store::memory::InMemory;
    use object_store::{
        CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
        PutMultipartOptions, PutOptions, PutResult,
    };

    /// An in-memory store whose `put` fails (without storing) on the listed calls (1-based).
    #[derive(Debug)]
    struct FailingPuts {
        inner: InMemory,
        fail: Vec<usize>,
        puts: AtomicUsize,
    }

    impl std::fmt::Display for FailingPuts {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "FailingPuts")
        }
    }

    #[async_trait]
    impl ObjectStore for FailingPuts {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            let n = self.puts.fetch_add(1, Ordering::SeqCst) + 1;
            if self.fail.contains(&n) {
                return Err(object_store::Error::Generic {
                    store: "FailingPuts",
                    source: format!("put #{n} refused").into(),
                });
            }
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    fn task(store: Arc<dyn ObjectStore>, flush_size: usize) -> ObjectStoreSinkTask {
        let config = ConfigMap::from([
            ("store.url".to_owned(), "memory:///".to_owned()),
            ("flush.size".to_owned(), flush_size.to_string()),
        ]);
        ObjectStoreSinkTask {
            config: Some(ObjectStoreSinkConfig::parse(&config).unwrap()),
            store: Some(store),
            json: Some(JsonConverter::new(false)),
            ..Default::default()
        }
    }

    /// Every `(first offset, records)` file of `topic`/`partition`, in offset order, checked to
    /// hold the records `first..first + n` as the test wrote them (value = offset).
    async fn files(store: &FailingPuts, topic: &str, partition: i32) -> Vec<(i64, i64)> {
        let prefix = Path::from(format!("{topic}/partition={partition}"));
        let metas: Vec<ObjectMeta> = store
            .inner
            .list(Some(&prefix))
            .map(|m| m.unwrap())
            .collect()
            .await;
        let mut out = Vec::new();
        for m in metas {
            let name = m.location.filename().unwrap().to_owned();
            let first: i64 = name
                .trim_end_matches(".jsonl")
                .rsplit('+')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let body = store
                .inner
                .get(&m.location)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            let lines: Vec<i64> = std::str::from_utf8(&body)
                .unwrap()
                .lines()
                .map(|l| l.parse().unwrap())
                .collect();
            let expected: Vec<i64> = (first..first + lines.len() as i64).collect();
            assert_eq!(lines, expected, "{name} holds its offsets in order");
            out.push((first, lines.len() as i64));
        }
        out.sort();
        out
    }

    /// A failed upload keeps the buffer: the runner redelivers only the batch that failed,
    /// so records buffered by earlier `put`s must still be there for the retried upload.
    #[tokio::test]
    async fn a_failed_upload_loses_no_buffered_record() {
        let store = Arc::new(FailingPuts {
            inner: InMemory::new(),
            // The 1st upload fails, and the 3rd (two failures in a row for that file: 3, 4).
            fail: vec![1, 3, 4],
            puts: AtomicUsize::new(0),
        });
        let mut t = task(store.clone(), 100);
        let records: Vec<SinkRecord> = (0..1000i64)
            .map(|o| {
                SinkRecord::new(
                    "t",
                    (o % 2) as i32,
                    o / 2,
                    None,
                    Value::Null,
                    None,
                    Value::Int64(o / 2),
                )
            })
            .collect();
        // Batches of 30 (not a divisor of the flush size), redelivered on a retriable error
        // as the runner does.
        let mut failures = 0;
        for batch in records.chunks(30) {
            loop {
                match t.put(batch.to_vec()).await {
                    Ok(()) => break,
                    Err(e) => {
                        assert!(e.is_retriable(), "{e}");
                        failures += 1;
                    }
                }
            }
        }
        assert_eq!(failures, 3);
        for p in 0..2 {
            let files = files(&store, "t", p).await;
            let tiles: Vec<(i64, i64)> = (0..5).map(|i| (i * 100, 100)).collect();
            assert_eq!(
                files, tiles,
                "partition {p}: 500 records in files of 100, each once"
            );
            let committed = t
                .pre_commit(SinkOffsets::from([(TopicPartition::new("t", p), 500)]))
                .await
                .unwrap();
            assert_eq!(committed.get(&TopicPartition::new("t", p)), Some(&500));
        }
    }

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
