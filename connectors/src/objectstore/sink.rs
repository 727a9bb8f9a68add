//! The object-store sink's connector and task, for both sets of keys: this sink's own
//! ([`Own`]: `store.url`, `format=jsonl`) and Confluent's S3 sink's ([`Confluent`]). The work
//! per topic-partition is in [`super::writer`].

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use async_trait::async_trait;
use connect_api::config::{ConfigDef, ConfigMap, ConfigValue};
use connect_api::connector::{
    ConnectorContext, SinkConnector, SinkOffsets, SinkTask, SinkTaskContext,
};
use connect_api::error::Result;
use connect_api::record::{SinkRecord, TopicPartition};
use object_store::ObjectStore;

use super::config::{ObjectStoreSinkConfig, sink_config_def};
use super::s3config::{S3SinkConfig, s3_config_def};
use super::writer::{Outcome, PartitionWriter, Settings};

/// Which keys a connector takes.
pub trait Flavor: Send + Sync + 'static {
    fn config_def() -> ConfigDef;
    fn validate(props: &ConfigMap) -> Vec<ConfigValue> {
        Self::config_def().validate(props)
    }
    /// Parses the keys (no I/O).
    fn check(props: &ConfigMap) -> Result<()>;
    /// The settings and the store they write to.
    fn load(props: &ConfigMap) -> Result<(Settings, Arc<dyn ObjectStore>)>;
}

/// This sink's own keys (`connect_connectors::objectstore::ObjectStoreSinkConnector`).
#[derive(Debug, Default)]
pub struct Own;

/// Confluent's S3 sink keys (`io.confluent.connect.s3.S3SinkConnector`).
#[derive(Debug, Default)]
pub struct Confluent;

impl Flavor for Own {
    fn config_def() -> ConfigDef {
        sink_config_def()
    }
    fn check(props: &ConfigMap) -> Result<()> {
        ObjectStoreSinkConfig::parse(props).map(|_| ())
    }
    fn load(props: &ConfigMap) -> Result<(Settings, Arc<dyn ObjectStore>)> {
        let config = ObjectStoreSinkConfig::parse(props)?;
        let (store, prefix) = config.open()?;
        Ok((config.settings(&prefix), store))
    }
}

impl Flavor for Confluent {
    fn config_def() -> ConfigDef {
        s3_config_def()
    }
    fn validate(props: &ConfigMap) -> Vec<ConfigValue> {
        super::s3config::validate(props)
    }
    fn check(props: &ConfigMap) -> Result<()> {
        S3SinkConfig::parse(props).map(|_| ())
    }
    fn load(props: &ConfigMap) -> Result<(Settings, Arc<dyn ObjectStore>)> {
        S3SinkConfig::parse(props)?.open()
    }
}

pub struct StorageSinkConnector<F> {
    config: ConfigMap,
    flavor: PhantomData<fn() -> F>,
}

impl<F> Default for StorageSinkConnector<F> {
    fn default() -> Self {
        Self {
            config: ConfigMap::new(),
            flavor: PhantomData,
        }
    }
}

impl<F> std::fmt::Debug for StorageSinkConnector<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageSinkConnector")
            .finish_non_exhaustive()
    }
}

pub type ObjectStoreSinkConnector = StorageSinkConnector<Own>;
pub type ObjectStoreSinkTask = StorageSinkTask<Own>;
pub type S3SinkConnector = StorageSinkConnector<Confluent>;
pub type S3SinkTask = StorageSinkTask<Confluent>;

#[async_trait]
impl<F: Flavor> SinkConnector for StorageSinkConnector<F> {
    type Task = StorageSinkTask<F>;

    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    fn config_def(&self) -> ConfigDef {
        F::config_def()
    }

    fn validate(&self, config: &ConfigMap) -> Vec<ConfigValue> {
        F::validate(config)
    }

    async fn start(&mut self, _ctx: ConnectorContext, config: ConfigMap) -> Result<()> {
        F::check(&config)?;
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

pub struct StorageSinkTask<F> {
    ctx: Option<SinkTaskContext>,
    settings: Option<Settings>,
    store: Option<Arc<dyn ObjectStore>>,
    writers: BTreeMap<TopicPartition, PartitionWriter>,
    /// Next offset after the last fully uploaded files, per partition.
    committed: BTreeMap<TopicPartition, i64>,
    flavor: PhantomData<fn() -> F>,
}

impl<F> Default for StorageSinkTask<F> {
    fn default() -> Self {
        Self {
            ctx: None,
            settings: None,
            store: None,
            writers: BTreeMap::new(),
            committed: BTreeMap::new(),
            flavor: PhantomData,
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl<F> StorageSinkTask<F> {
    /// Asks the runtime for the rewinds lost multipart uploads need.
    fn request_rewinds(&mut self) {
        let mut rewinds = Vec::new();
        for (tp, w) in &mut self.writers {
            if let Some(o) = w.take_rewind() {
                rewinds.push((tp.clone(), o));
            }
        }
        if !rewinds.is_empty()
            && let Some(ctx) = &self.ctx
        {
            ctx.reset_offsets(&rewinds);
        }
    }

    async fn put_records(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        let settings = self.settings.as_ref().expect("started");
        let store = self.store.as_ref().expect("started");
        // Files ended by an earlier call whose upload failed go first: their records come
        // before any record of this batch.
        for (tp, w) in &mut self.writers {
            let mut c = self.committed.get(tp).copied();
            w.flush_pending(settings, store, &mut c).await?;
            if let Some(c) = c {
                self.committed.insert(tp.clone(), c);
            }
        }
        let now = now_ms();
        for record in records {
            let tp = record.topic_partition();
            if self
                .committed
                .get(&tp)
                .is_some_and(|c| record.kafka_offset < *c)
            {
                continue;
            }
            let w = self.writers.entry(tp.clone()).or_default();
            if w.already_handled(record.kafka_offset) {
                continue;
            }
            let mut c = self.committed.get(&tp).copied();
            let outcome = w.write(settings, store, &tp, &record, now, &mut c).await;
            if let Some(c) = c {
                self.committed.insert(tp.clone(), c);
            }
            match outcome? {
                Outcome::Written | Outcome::Skipped => {}
                Outcome::Errant(e) => {
                    match self.ctx.as_ref().and_then(|c| c.errant_record_reporter()) {
                        Some(r) => r.report(&record, &e).await?,
                        None => return Err(e),
                    }
                }
            }
            self.writers
                .get_mut(&tp)
                .expect("inserted above")
                .mark_handled(record.kafka_offset);
        }
        Ok(())
    }
}

#[async_trait]
impl<F: Flavor> SinkTask for StorageSinkTask<F> {
    fn version(&self) -> String {
        crate::VERSION.to_owned()
    }

    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()> {
        let (settings, store) = F::load(&config)?;
        self.settings = Some(settings);
        self.store = Some(store);
        self.ctx = Some(ctx);
        Ok(())
    }

    /// A retriable error redelivers this batch; each partition's writer skips what it handled.
    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        let result = self.put_records(records).await;
        self.request_rewinds();
        if let Err(e) = &result
            && e.is_retriable()
            && let (Some(ctx), Some(wait)) = (
                &self.ctx,
                self.settings.as_ref().and_then(|s| s.retry_backoff),
            )
        {
            ctx.set_timeout(wait);
        }
        result
    }

    /// Only offsets of fully uploaded files; partitions with nothing uploaded are left out.
    /// Files due by `rotate.schedule.interval.ms` end here when no record came to end them.
    async fn pre_commit(&mut self, offsets: SinkOffsets) -> Result<SinkOffsets> {
        let now = now_ms();
        if let (Some(store), Some(settings)) = (self.store.clone(), self.settings.as_ref()) {
            for (tp, w) in &mut self.writers {
                if w.schedule_due(now) {
                    let mut c = self.committed.get(tp).copied();
                    if let Err(e) = w.end_files(settings, &store, tp, &mut c).await {
                        tracing::warn!(partition = ?tp, error = %e, "scheduled rotation failed; the next put retries");
                    }
                    if let Some(c) = c {
                        self.committed.insert(tp.clone(), c);
                    }
                }
            }
            self.request_rewinds();
        }
        Ok(offsets
            .into_keys()
            .filter_map(|tp| self.committed.get(&tp).map(|o| (tp, *o)))
            .collect())
    }

    async fn open(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        for tp in partitions {
            if let Some(w) = self.writers.remove(tp) {
                w.abort().await;
            }
        }
        Ok(())
    }

    async fn close(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        for tp in partitions {
            if let Some(w) = self.writers.remove(tp) {
                w.abort().await;
            }
            self.committed.remove(tp);
        }
        Ok(())
    }

    async fn stop(&mut self) -> Result<()> {
        for (_, w) in std::mem::take(&mut self.writers) {
            w.abort().await;
        }
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
    use object_store::path::Path;
    use object_store::{
        CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta,
        ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
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
            settings: Some(
                ObjectStoreSinkConfig::parse(&config)
                    .unwrap()
                    .settings(&Path::default()),
            ),
            store: Some(store),
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

    /// Under Confluent's keys with a FieldPartitioner, each end of files uploads several files;
    /// PUTs failing among them (the runner redelivering the batch) still leave each record in
    /// exactly one file, files holding consecutive records of one country, none lost.
    #[tokio::test]
    async fn failed_puts_among_several_files_lose_and_repeat_nothing() {
        use connect_api::data::{Schema, SchemaBuilder, Struct};
        let store = Arc::new(FailingPuts {
            inner: InMemory::new(),
            fail: vec![2, 5, 6, 11],
            puts: AtomicUsize::new(0),
        });
        let props = ConfigMap::from([
            ("s3.bucket.name".to_owned(), "b".to_owned()),
            (
                "format.class".to_owned(),
                super::super::format::JSON_FORMAT.to_owned(),
            ),
            ("flush.size".to_owned(), "30".to_owned()),
            ("topics.dir".to_owned(), "".to_owned()),
            (
                "partitioner.class".to_owned(),
                super::super::partitioner::FIELD_PARTITIONER.to_owned(),
            ),
            ("partition.field.name".to_owned(), "c".to_owned()),
        ]);
        let mut t = S3SinkTask {
            settings: Some(S3SinkConfig::parse(&props).unwrap().settings),
            store: Some(store.clone()),
            ..Default::default()
        };
        let schema = SchemaBuilder::struct_()
            .field("c", Schema::string())
            .field("n", Schema::int64())
            .build();
        let records: Vec<SinkRecord> = (0..300i64)
            .map(|o| {
                let v = Struct::new(schema.clone())
                    .with("c", ["a", "b", "c"][(o % 3) as usize])
                    .unwrap()
                    .with("n", o)
                    .unwrap();
                SinkRecord::new(
                    "t",
                    0,
                    o,
                    None,
                    Value::Null,
                    Some(schema.clone()),
                    Value::Struct(v),
                )
            })
            .collect();
        let mut failures = 0;
        for batch in records.chunks(7) {
            while let Err(e) = t.put(batch.to_vec()).await {
                assert!(e.is_retriable(), "{e}");
                failures += 1;
            }
        }
        assert_eq!(failures, 4);
        let metas: Vec<ObjectMeta> = store.inner.list(None).map(|m| m.unwrap()).collect().await;
        let mut seen = Vec::new();
        for m in &metas {
            let body = store
                .inner
                .get(&m.location)
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            let ns: Vec<i64> = std::str::from_utf8(&body)
                .unwrap()
                .lines()
                .map(|l| {
                    serde_json::from_str::<serde_json::Value>(l).unwrap()["n"]
                        .as_i64()
                        .unwrap()
                })
                .collect();
            let country = ["a", "b", "c"][(ns[0] % 3) as usize];
            assert!(
                m.location.as_ref().contains(&format!("c={country}/")),
                "{}",
                m.location
            );
            assert!(
                ns.iter().all(|n| n % 3 == ns[0] % 3),
                "{}: {ns:?}",
                m.location
            );
            let first: i64 = m
                .location
                .as_ref()
                .rsplit('+')
                .next()
                .unwrap()
                .trim_end_matches(".json")
                .parse()
                .unwrap();
            assert_eq!(first, ns[0], "{}", m.location);
            seen.extend(ns);
        }
        seen.sort();
        assert_eq!(seen, (0..300).collect::<Vec<_>>());
        assert_eq!(metas.len(), 30, "10 ends of 3 files each");
        let committed = t
            .pre_commit(SinkOffsets::from([(TopicPartition::new("t", 0), 300)]))
            .await
            .unwrap();
        assert_eq!(committed.get(&TopicPartition::new("t", 0)), Some(&300));
    }

    /// An object's name and the tags it was given.
    type Tagged = (String, Vec<(String, String)>);

    /// Records each tagging instead of sending it.
    #[derive(Debug, Default)]
    struct Recorder(std::sync::Mutex<Vec<Tagged>>);

    #[async_trait]
    impl super::super::tagging::Tagger for Recorder {
        async fn put_tags(
            &self,
            object: &Path,
            tags: &[(String, String)],
        ) -> std::result::Result<(), String> {
            self.0
                .lock()
                .unwrap()
                .push((object.to_string(), tags.to_vec()));
            Ok(())
        }
    }

    /// `s3.object.tagging`: every stored file, PUT whole or uploaded in parts, is tagged once,
    /// after it is stored, with its first and last offsets, its record count and the extra
    /// pairs; open files are not.
    #[tokio::test]
    async fn stored_files_are_tagged_with_their_offsets_and_count() {
        let store = Arc::new(FailingPuts {
            inner: InMemory::new(),
            fail: vec![],
            puts: AtomicUsize::new(0),
        });
        let recorder = Arc::new(Recorder::default());
        let mut t = task(store.clone(), 5);
        let s = t.settings.as_mut().unwrap();
        s.part_size = 16;
        s.tagging = Some(super::super::tagging::Tagging {
            extra: vec![("team".to_owned(), "data".to_owned())],
            fail: false,
            tagger: recorder.clone(),
        });
        // Partition 0: 2-byte lines, files under a part (whole PUTs); partition 1: 11-byte
        // lines, files in parts (multipart uploads).
        let records: Vec<SinkRecord> = (0..24i64)
            .map(|o| {
                let (p, offset) = ((o % 2) as i32, o / 2);
                let v = if p == 0 {
                    offset % 10
                } else {
                    1_000_000_000 + offset
                };
                SinkRecord::new("t", p, offset, None, Value::Null, None, Value::Int64(v))
            })
            .collect();
        for batch in records.chunks(7) {
            t.put(batch.to_vec()).await.unwrap();
        }
        // 12 records per partition in files of 5: two stored each, 10..11 still open.
        let mut tagged = recorder.0.lock().unwrap().clone();
        tagged.sort();
        let want: Vec<Tagged> = [(0, 0), (0, 5), (1, 0), (1, 5)]
            .iter()
            .map(|(p, first)| {
                let tags = [
                    ("startOffset", first.to_string()),
                    ("endOffset", (first + 4).to_string()),
                    ("recordCount", "5".to_owned()),
                    ("team", "data".to_owned()),
                ];
                (
                    format!("t/partition={p}/t+{p}+{first:020}.jsonl"),
                    tags.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                )
            })
            .collect();
        assert_eq!(tagged, want);
        for (name, _) in &tagged {
            store.inner.head(&Path::from(name.as_str())).await.unwrap();
        }
        // Partition 0's two files were PUT whole; partition 1's went in parts.
        assert_eq!(store.puts.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn names_sort_by_offset() {
        let config = ObjectStoreSinkConfig::parse(&ConfigMap::from([(
            "store.url".to_owned(),
            "memory:///".to_owned(),
        )]))
        .unwrap();
        let object_name = |prefix: &Path, topic: &str, p: i32, offset: i64| {
            config.settings(prefix).object_name(
                &TopicPartition::new(topic, p),
                &format!("partition={p}"),
                offset,
            )
        };
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
