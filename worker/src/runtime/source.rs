//! The at-least-once source task runner (Java's `WorkerSourceTask`).
//!
//! ```text
//!   poll() ──> convert ──> producer.send ──> in flight ──ack──> commit_record(record, metadata)
//!                                   │
//!   every offset.flush.interval.ms: │ wait for every in-flight record's ack, then
//!                                   └─> write the latest source offset per partition ──> commit()
//! ```
//!
//! # Guarantees
//!
//! - An offset is written only after every record sent before it was acknowledged by Kafka
//!   (`acks=all`, idempotent producer), so a crash replays from the last written offset:
//!   records may repeat, none is lost. Exactly-once runs in `exactly_once` instead.
//! - `commit_record` is called once per record, in send order, after its ack; records dropped
//!   by a tolerated conversion error get `commit_record(record, None)` and their offset still
//!   counts as processed, as in Connect.
//!
//! # Errors
//!
//! A retriable `poll` error is logged and the poll retried after a short backoff. Any other
//! `poll` error, a conversion error with `errors.tolerance=none`, a send or delivery error, or
//! an offset write error fails the task: it is reported FAILED with the error chain as `trace`
//! and `stop` is called. A failed task never writes offsets past what was acknowledged.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use connect_api::config::{ConnectorConfig, ToleranceType};
use connect_api::connector::RecordMetadata;
use connect_api::data::{Schema, Value};
use connect_api::record::Headers;
use connect_api::{
    CancellationToken, ConfigMap, ConnectError, SourceRecord, SourceTask, SourceTaskContext,
};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord};
use tokio::sync::watch;
use tokio::time::Instant;

use connect_transforms::{TransformChain, TransformError};

use super::convert::{RecordConverters, conversion_error};
use super::offsets::LatestOffsets;
use super::topic_creation::{TopicCreator, is_unknown_topic, unknown_topic_message};
use super::topics::ActiveTopics;
use super::{
    BackendOffsetReader, ConnectorTaskId, SourceOffsetBackend, TaskStatusListener, TokioTimer,
};
use crate::metrics::{self, ErrorMetrics, TaskMetrics};

/// Everything the runner needs besides the task itself.
pub struct SourceTaskRun {
    pub id: ConnectorTaskId,
    pub task_config: ConfigMap,
    pub connector_config: ConnectorConfig,
    pub offset_flush_interval: Duration,
    pub converters: RecordConverters,
    /// The connector's transformation chain (`transforms`), applied before conversion.
    pub transforms: Arc<TransformChain>,
    /// Shared with the worker's other at-least-once tasks of the same producer config
    /// ([`super::shared_producers`]); the task's deliveries are its own futures.
    pub producer: Arc<FutureProducer>,
    /// KIP-158: creates each topic before the first record to it, when the connector uses it.
    pub topic_creation: TopicCreator,
    pub offsets: Arc<dyn SourceOffsetBackend>,
    pub status: Arc<dyn TaskStatusListener>,
    pub cancel: CancellationToken,
    /// `true` while the connector's target state is PAUSED.
    pub paused: watch::Receiver<bool>,
    /// The directories the worker lets the task read and write (`file.connector.allowed.dirs`).
    pub file_access: connect_api::FileAccess,
}

/// A converted record ready for the producer (either kind: librdkafka's, through
/// [`ProducerRecord::as_future_record`], or the worker's own transactional producer).
pub(crate) use crate::cluster::producer::OutRecord as ProducerRecord;

/// What conversion reads of a source record, before or after the transformation chain.
struct RecordData<'a> {
    topic: &'a str,
    kafka_partition: Option<i32>,
    key_schema: Option<&'a Schema>,
    key: &'a Value,
    value_schema: Option<&'a Schema>,
    value: &'a Value,
    timestamp: Option<i64>,
    headers: &'a Headers,
}

/// The [`RecordData`] of a [`SourceRecord`] or a transformed [`connect_transforms::Record`] (same field names).
macro_rules! record_data {
    ($r:expr) => {{
        let r = $r;
        RecordData {
            topic: &r.topic,
            kafka_partition: r.kafka_partition,
            key_schema: r.key_schema.as_ref(),
            key: &r.key,
            value_schema: r.value_schema.as_ref(),
            value: &r.value,
            timestamp: r.timestamp,
            headers: &r.headers,
        }
    }};
}

/// Transforms then converts a source record; `Ok(None)` means a transform dropped it or it
/// failed under `errors.tolerance=all` (stage TRANSFORMATION or a converter).
pub(crate) fn convert_record(
    converters: &RecordConverters,
    transforms: &TransformChain,
    config: &ConnectorConfig,
    id: &ConnectorTaskId,
    record: &mut SourceRecord,
    keep_data: bool,
    errors: &ErrorMetrics,
) -> Result<Option<ProducerRecord>, ConnectError> {
    // Transformed in place in this frame: the record is not moved through `Option`s and
    // `Result`s on its way here (a memcpy of the whole record each).
    let mut transformed;
    let data = if transforms.is_empty() {
        record_data!(&*record)
    } else {
        transformed = transform_input(record, keep_data, config);
        match transforms.apply_in_place(&mut transformed) {
            Ok(true) => record_data!(&transformed),
            Ok(false) => return Ok(None),
            Err(TransformError { class, error }) => {
                return transform_failed(config, id, record, &class, error, errors);
            }
        }
    };
    convert_data(converters, config, id, record, data, errors)
}

/// [`convert_record`] on a whole polled batch, one result per record in order. A chain with a
/// stage that prefers batches (a Java one: one round trip per batch, not per record) transforms
/// the batch first ([`TransformChain::apply_batch_in_place`]), then each record is converted;
/// other chains go record by record. The first failure that is not tolerated is returned.
pub(crate) fn convert_batch(
    converters: &RecordConverters,
    transforms: &TransformChain,
    config: &ConnectorConfig,
    id: &ConnectorTaskId,
    records: &mut [SourceRecord],
    keep_data: bool,
    errors: &ErrorMetrics,
) -> Result<Vec<Option<ProducerRecord>>, ConnectError> {
    if !transforms.prefers_batches() {
        return records
            .iter_mut()
            .map(|r| convert_record(converters, transforms, config, id, r, keep_data, errors))
            .collect();
    }
    let mut transformed: Vec<connect_transforms::Record> = records
        .iter_mut()
        .map(|r| transform_input(r, keep_data, config))
        .collect();
    let outcomes = transforms.apply_batch_in_place(&mut transformed);
    records
        .iter()
        .zip(&transformed)
        .zip(outcomes)
        .map(|((record, data), outcome)| match outcome {
            Ok(true) => convert_data(converters, config, id, record, record_data!(data), errors),
            Ok(false) => Ok(None),
            Err(TransformError { class, error }) => {
                transform_failed(config, id, record, &class, error, errors)
            }
        })
        .collect()
}

/// The data the chain transforms: the original is kept for `commit_record` when the task reads
/// it, and for the error log when it prints records; otherwise its data moves into the chain.
fn transform_input(
    record: &mut SourceRecord,
    keep_data: bool,
    config: &ConnectorConfig,
) -> connect_transforms::Record {
    if keep_data || config.errors_log_include_messages {
        connect_transforms::Record::copy_of_source(record)
    } else {
        connect_transforms::Record::take_from_source(record)
    }
}

/// A record a transformation failed on: logged and skipped under `errors.tolerance=all`,
/// else the task's failure.
fn transform_failed(
    config: &ConnectorConfig,
    id: &ConnectorTaskId,
    record: &SourceRecord,
    class: &str,
    error: ConnectError,
    errors: &ErrorMetrics,
) -> Result<Option<ProducerRecord>, ConnectError> {
    let tolerated = config.errors_tolerance == ToleranceType::All;
    // task-error-metrics of one failed record.
    errors.failed(config.errors_log_enable, tolerated);
    if config.errors_log_enable {
        if config.errors_log_include_messages {
            tracing::error!(task = %id, stage = "TRANSFORMATION", class, error = %error, record = ?record, "Error encountered in task {id}. Executing stage 'TRANSFORMATION' with class '{class}'");
        } else {
            tracing::error!(task = %id, stage = "TRANSFORMATION", class, error = %error, "Error encountered in task {id}. Executing stage 'TRANSFORMATION' with class '{class}'");
        }
    }
    if tolerated {
        return Ok(None);
    }
    Err(ConnectError::fatal("Tolerance exceeded in error handler").with_source(error))
}

/// Converts a (transformed) record's data; a conversion failure is logged and skipped under
/// `errors.tolerance=all`, else the task's failure.
fn convert_data(
    converters: &RecordConverters,
    config: &ConnectorConfig,
    id: &ConnectorTaskId,
    record: &SourceRecord,
    data: RecordData<'_>,
    errors: &ErrorMetrics,
) -> Result<Option<ProducerRecord>, ConnectError> {
    let tolerated = config.errors_tolerance == ToleranceType::All;
    let topic = data.topic;
    let converted = (|| {
        let key = converters
            .key_to_bytes(topic, data.key_schema, data.key)
            .map_err(|e| conversion_error("key", topic, e))?;
        let value = converters
            .value_to_bytes(topic, data.value_schema, data.value)
            .map_err(|e| conversion_error("value", topic, e))?;
        let headers = converters
            .headers_to_bytes(topic, data.headers)
            .map_err(|e| conversion_error("headers", topic, e))?;
        Ok::<_, ConnectError>(ProducerRecord {
            topic: topic.to_owned(),
            partition: data.kafka_partition,
            key,
            value,
            headers,
            timestamp: data.timestamp,
        })
    })();
    if converted.is_err() {
        errors.failed(config.errors_log_enable, tolerated);
    }
    match converted {
        Ok(r) => Ok(Some(r)),
        Err(e) if tolerated => {
            if config.errors_log_enable {
                if config.errors_log_include_messages {
                    tracing::error!(task = %id, error = %e, record = ?record, "tolerated conversion error; record skipped");
                } else {
                    tracing::error!(task = %id, error = %e, "tolerated conversion error; record skipped");
                }
            }
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

impl ProducerRecord {
    pub(crate) fn as_future_record(&self) -> FutureRecord<'_, [u8], [u8]> {
        let mut fr: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(&self.topic);
        if let Some(k) = &self.key {
            fr = fr.key(k.as_slice());
        }
        if let Some(v) = &self.value {
            fr = fr.payload(v.as_slice());
        }
        if let Some(p) = self.partition {
            fr = fr.partition(p);
        }
        if let Some(ts) = self.timestamp {
            fr = fr.timestamp(ts);
        }
        if !self.headers.is_empty() {
            let mut hs = OwnedHeaders::new_with_capacity(self.headers.len());
            for (k, v) in &self.headers {
                hs = hs.insert(Header {
                    key: k,
                    value: v.as_deref(),
                });
            }
            fr = fr.headers(hs);
        }
        fr
    }
}

/// Tries to hand a record to librdkafka; `Ok(None)` means its queue is full (back off and retry).
pub(crate) fn try_send(
    producer: &FutureProducer,
    record: &ProducerRecord,
) -> Result<Option<DeliveryFuture>, ConnectError> {
    match producer.send_result(record.as_future_record()) {
        Ok(f) => Ok(Some(f)),
        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => Ok(None),
        Err((KafkaError::MessageProduction(RDKafkaErrorCode::UnknownPartition), _))
            if record
                .partition
                .is_some_and(|p| partition_appeared(producer, &record.topic, p)) =>
        {
            Ok(None)
        }
        Err((KafkaError::MessageProduction(code), _)) if is_unknown_topic(code) => {
            Err(ConnectError::fatal(unknown_topic_message(&record.topic)))
        }
        Err((e, _)) => Err(ConnectError::fatal(format!(
            "failed to send record to topic {}: {e}",
            record.topic
        ))),
    }
}

/// librdkafka fails a record for a partition its metadata does not have yet at once (a
/// partition added since: MirrorMaker's remote topics grow with their source), where Java's
/// producer waits for it in `send`. Asks for the topic's metadata, which updates the
/// producer's, and says whether the partition is there now (then the caller sends again).
fn partition_appeared(producer: &FutureProducer, topic: &str, partition: i32) -> bool {
    use rdkafka::producer::Producer;
    let fetch = || {
        producer
            .client()
            .fetch_metadata(Some(topic), Duration::from_secs(10))
            .ok()
            .and_then(|md| md.topics().first().map(|t| t.partitions().len()))
            .is_some_and(|n| usize::try_from(partition).is_ok_and(|p| p < n))
    };
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(fetch)
        }
        _ => fetch(),
    }
}

/// A record the producer took, until its ack. `topic` is the topic it was produced to (after the
/// transformation chain): Connect reports that one as active and in `commit_record`'s metadata,
/// and the task's record may no longer hold it (see `SourceTask::commit_record_reads_data`).
pub(crate) struct Delivery {
    topic: String,
    future: DeliveryFuture,
}

impl Delivery {
    /// `future` is the producer's ack of a record sent to `topic`.
    pub(crate) fn new(topic: String, future: DeliveryFuture) -> Self {
        Self { topic, future }
    }

    /// Awaits the ack and turns it into Connect's `RecordMetadata`.
    pub(crate) async fn wait(self) -> Result<RecordMetadata, ConnectError> {
        delivery_result(self.topic, self.future.await)
    }

    /// The ack's outcome if it has arrived, without waiting.
    fn ready(&mut self) -> Option<Result<RecordMetadata, ConnectError>> {
        let outcome = futures::FutureExt::now_or_never(&mut self.future)?;
        Some(delivery_result(std::mem::take(&mut self.topic), outcome))
    }
}

fn delivery_result(
    topic: String,
    outcome: Result<
        rdkafka::producer::future_producer::OwnedDeliveryResult,
        futures::channel::oneshot::Canceled,
    >,
) -> Result<RecordMetadata, ConnectError> {
    match outcome {
        Ok(Ok(d)) => Ok(RecordMetadata {
            topic,
            partition: d.partition,
            offset: d.offset,
            timestamp: d.timestamp.to_millis(),
        }),
        Ok(Err((KafkaError::MessageProduction(code), _))) if is_unknown_topic(code) => {
            Err(ConnectError::fatal(unknown_topic_message(&topic)))
        }
        Ok(Err((e, _))) => Err(ConnectError::fatal(format!(
            "failed to produce record to topic {topic}: {e}"
        ))),
        Err(_) => Err(ConnectError::fatal(format!(
            "producer was closed before the record to topic {topic} was acknowledged"
        ))),
    }
}

/// A record of the task's batch and its delivery (`None`: the chain dropped it).
pub(crate) struct Sent {
    pub record: SourceRecord,
    pub delivery: Option<Delivery>,
}

struct Runner {
    run: SourceTaskRun,
    task: Box<dyn SourceTask>,
    in_flight: VecDeque<Sent>,
    /// Latest offset per source partition among records sent since the last offset flush.
    pending_offsets: LatestOffsets,
    topics: ActiveTopics,
    metrics: TaskMetrics,
}

impl Runner {
    /// Pops the oldest in-flight record, awaiting its ack, and calls `commit_record`.
    async fn complete_oldest(&mut self) -> Result<(), ConnectError> {
        let Some(entry) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let metadata = match entry.delivery {
            Some(d) => Some(d.wait().await?),
            None => None,
        };
        if let Some(m) = &metadata {
            self.topics.record(&m.topic);
        }
        self.metrics.source_done(1, usize::from(metadata.is_some()));
        self.task.commit_record(&entry.record, metadata.as_ref())
    }

    /// Completes acked records from the front without waiting.
    async fn complete_ready(&mut self) -> Result<(), ConnectError> {
        while let Some(front) = self.in_flight.front_mut() {
            let metadata = match &mut front.delivery {
                None => None,
                Some(d) => match d.ready() {
                    None => break,
                    Some(result) => Some(result?),
                },
            };
            let entry = self.in_flight.pop_front().expect("front exists");
            if let Some(m) = &metadata {
                self.topics.record(&m.topic);
            }
            self.metrics.source_done(1, usize::from(metadata.is_some()));
            self.task.commit_record(&entry.record, metadata.as_ref())?;
        }
        Ok(())
    }

    /// Waits for every in-flight record, then writes the pending offsets and calls `commit`.
    async fn flush_offsets(&mut self) -> Result<(), ConnectError> {
        while !self.in_flight.is_empty() {
            self.complete_oldest().await?;
        }
        if self.pending_offsets.is_empty() {
            return Ok(());
        }
        let offsets = self.pending_offsets.take();
        let n = offsets.len();
        let started = std::time::Instant::now();
        let written = self
            .run
            .offsets
            .write(&self.run.id.connector, offsets)
            .await;
        self.metrics
            .offset_commit(written.is_ok(), started.elapsed());
        written.map_err(|e| {
            ConnectError::fatal(format!(
                "failed to commit offsets for task {}: {e}",
                self.run.id
            ))
        })?;
        tracing::debug!(task = %self.run.id, partitions = n, "committed source offsets");
        self.task.commit().await
    }

    async fn send_batch(&mut self, mut batch: Vec<SourceRecord>) -> Result<(), ConnectError> {
        let keep_data = self.task.commit_record_reads_data();
        let converted_batch = convert_batch(
            &self.run.converters,
            &self.run.transforms,
            &self.run.connector_config,
            &self.run.id,
            &mut batch,
            keep_data,
            &self.metrics.errors,
        )?;
        for (record, converted) in batch.into_iter().zip(converted_batch) {
            if let Some(pr) = &converted {
                self.run.topic_creation.ensure(&pr.topic).await?;
            }
            let delivery = match converted {
                None => None,
                Some(pr) => loop {
                    if let Some(fut) = try_send(&self.run.producer, &pr)? {
                        break Some(Delivery::new(pr.topic, fut));
                    }
                    // librdkafka's queue is full: make room by waiting for the oldest ack.
                    if self.in_flight.is_empty() {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    } else {
                        self.complete_oldest().await?;
                    }
                },
            };
            self.pending_offsets
                .stage(&record.source_partition, &record.source_offset);
            self.in_flight.push_back(Sent { record, delivery });
        }
        self.complete_ready().await
    }
}

/// Runs a source task until `run.cancel` fires or the task fails. Always ends with the task
/// stopped and its status reported (UNASSIGNED on a clean stop, FAILED with a trace otherwise).
pub async fn run_source_task(run: SourceTaskRun, task: Box<dyn SourceTask>) {
    let id = run.id.clone();
    let status = run.status.clone();
    let topics = ActiveTopics::new(run.id.clone(), run.status.clone());
    let mut runner = Runner {
        run,
        task,
        in_flight: VecDeque::new(),
        pending_offsets: LatestOffsets::default(),
        topics,
        metrics: metrics::global().task(&id),
    };
    let outcome = runner.execute().await;
    // Connect calls stop even after a failure, so the task can release its resources.
    if let Err(e) = runner.task.stop().await {
        tracing::warn!(task = %id, error = %e, "source task stop failed");
    }
    let stopping = runner.run.cancel.is_cancelled();
    super::report_end(&id, "source task", status.as_ref(), stopping, outcome);
}

impl Runner {
    async fn execute(&mut self) -> Result<(), ConnectError> {
        let ctx = SourceTaskContext::new(
            self.run.id.connector.clone(),
            self.run.id.task as u32,
            Arc::new(BackendOffsetReader {
                connector: self.run.id.connector.clone(),
                backend: self.run.offsets.clone(),
            }),
            Arc::new(TokioTimer),
            self.run.cancel.clone(),
        )
        .with_file_access(self.run.file_access.clone())
        .with_plugin_metrics(Arc::new(crate::metrics::TaskPluginMetrics::new(
            self.run.id.clone(),
        )));
        self.task.start(ctx, self.run.task_config.clone()).await?;
        self.run.status.on_running(&self.run.id);
        tracing::info!(task = %self.run.id, "source task started");

        let interval = self.run.offset_flush_interval;
        let mut next_flush = Instant::now() + interval;
        let mut retry_backoff = Duration::from_millis(100);
        while !self.run.cancel.is_cancelled() {
            if *self.run.paused.borrow() {
                self.pause().await?;
                continue;
            }
            if Instant::now() >= next_flush {
                self.flush_offsets().await?;
                next_flush = Instant::now() + interval;
            }
            let polled_at = std::time::Instant::now();
            let polled = self.task.poll().await;
            if let Ok(batch) = &polled
                && !batch.is_empty()
            {
                self.metrics.polled(batch.len(), polled_at.elapsed());
                self.metrics.batch(batch.len());
            }
            match polled {
                Ok(batch) if batch.is_empty() => {
                    self.complete_ready().await?;
                    // An idle task: make sure pending offsets still get flushed on time
                    // without spinning when the task returns empty batches immediately.
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                        _ = self.run.cancel.cancelled() => {}
                    }
                }
                Ok(batch) => {
                    retry_backoff = Duration::from_millis(100);
                    self.send_batch(batch).await?;
                }
                Err(e) if e.is_retriable() => {
                    tracing::warn!(task = %self.run.id, error = %e, backoff = ?retry_backoff, "retriable poll error; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(retry_backoff) => {}
                        _ = self.run.cancel.cancelled() => {}
                    }
                    retry_backoff = (retry_backoff * 2).min(Duration::from_secs(10));
                }
                Err(e) => return Err(e),
            }
        }
        // A clean stop commits what was acknowledged so the next owner resumes there.
        self.flush_offsets().await
    }

    async fn pause(&mut self) -> Result<(), ConnectError> {
        self.flush_offsets().await?;
        self.run.status.on_paused(&self.run.id);
        tracing::info!(task = %self.run.id, "source task paused");
        let mut paused = self.run.paused.clone();
        tokio::select! {
            _ = paused.wait_for(|p| !*p) => {}
            _ = self.run.cancel.cancelled() => return Ok(()),
        }
        self.run.status.on_running(&self.run.id);
        tracing::info!(task = %self.run.id, "source task resumed");
        Ok(())
    }
}
