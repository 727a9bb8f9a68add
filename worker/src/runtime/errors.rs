//! Error handling for records (Java's `RetryWithToleranceOperator` with its `LogReporter` and
//! `DeadLetterQueueReporter`, and the sink's `WorkerErrantRecordReporter`).
//!
//! ```text
//!   a record fails in a stage (key/value/header converter, task put, ...)
//!     └─> ErrorHandler::handle(raw record, stage, class, error)
//!           errors.log.enable            ──> one log line (with the record if include.messages)
//!           errors.tolerance=none        ──> Err("Tolerance exceeded in error handler"): task FAILED
//!           errors.tolerance=all
//!             + deadletterqueue.topic    ──> original key/value/headers (+ __connect.errors.*)
//!                                            to the DLQ topic, acknowledged before returning
//!             no dead-letter queue       ──> skipped (the log line is the only trace)
//! ```
//!
//! # Guarantees
//!
//! - A record reported to the dead-letter queue is acknowledged by Kafka before `handle`
//!   returns, so the sink runner never commits an offset past a bad record that is not yet in
//!   the dead-letter topic. A failed dead-letter write fails the task (Connect only logs it; we
//!   prefer a FAILED task to a record lost without trace).
//! - With `errors.tolerance=none` nothing goes to the dead-letter queue (as in Connect): the
//!   task fails and the record is redelivered when it is restarted.
//!
//! # Errors
//!
//! The error returned for an untolerated record keeps the original error as its cause, so the
//! task's `trace` shows both "Tolerance exceeded in error handler" and the reason.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use connect_api::config::{ConnectorConfig, SinkConnectorConfig, ToleranceType};
use connect_api::connector::ErrantRecordReporter;
use connect_api::{ConnectError, ErrorKind, SinkRecord};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::types::RDKafkaErrorCode;

use super::ConnectorTaskId;
use super::convert::RecordConverters;
use crate::metrics::ErrorMetrics;

/// Connect's error context header names (`DeadLetterQueueReporter`).
pub const HEADER_PREFIX: &str = "__connect.errors.";
pub const ERROR_HEADER_ORIG_TOPIC: &str = "__connect.errors.topic";
pub const ERROR_HEADER_ORIG_PARTITION: &str = "__connect.errors.partition";
pub const ERROR_HEADER_ORIG_OFFSET: &str = "__connect.errors.offset";
pub const ERROR_HEADER_CONNECTOR_NAME: &str = "__connect.errors.connector.name";
pub const ERROR_HEADER_TASK_ID: &str = "__connect.errors.task.id";
pub const ERROR_HEADER_STAGE: &str = "__connect.errors.stage";
pub const ERROR_HEADER_EXECUTING_CLASS: &str = "__connect.errors.class.name";
pub const ERROR_HEADER_EXCEPTION: &str = "__connect.errors.exception.class.name";
pub const ERROR_HEADER_EXCEPTION_MESSAGE: &str = "__connect.errors.exception.message";
pub const ERROR_HEADER_EXCEPTION_STACK_TRACE: &str = "__connect.errors.exception.stacktrace";

/// Where in the pipeline a record failed (Java's `Stage`, same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    KeyConverter,
    ValueConverter,
    HeaderConverter,
    Transformation,
    TaskPut,
    TaskPoll,
    KafkaProduce,
    KafkaConsume,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::KeyConverter => "KEY_CONVERTER",
            Self::ValueConverter => "VALUE_CONVERTER",
            Self::HeaderConverter => "HEADER_CONVERTER",
            Self::Transformation => "TRANSFORMATION",
            Self::TaskPut => "TASK_PUT",
            Self::TaskPoll => "TASK_POLL",
            Self::KafkaProduce => "KAFKA_PRODUCE",
            Self::KafkaConsume => "KAFKA_CONSUME",
        }
    }
}

/// The Java exception class Connect would have thrown for an error of this kind.
pub fn exception_class_name(err: &ConnectError) -> &'static str {
    match err.kind() {
        ErrorKind::Data => "org.apache.kafka.connect.errors.DataException",
        ErrorKind::Retriable => "org.apache.kafka.connect.errors.RetriableException",
        ErrorKind::Config => "org.apache.kafka.common.config.ConfigException",
        ErrorKind::Fatal => "org.apache.kafka.connect.errors.ConnectException",
    }
}

/// A record as consumed: the bytes the dead-letter queue receives unchanged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawRecord {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub timestamp: Option<i64>,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// Produces failed records to `errors.deadletterqueue.topic.name`.
pub struct DeadLetterQueue {
    topic: String,
    context_headers: bool,
    producer: FutureProducer,
}

impl DeadLetterQueue {
    /// For a sink connector that names a dead-letter topic: creates the topic if missing
    /// (with `errors.deadletterqueue.topic.replication.factor`, one partition, as Connect does)
    /// and a producer from `producer_config` (the task's producer settings).
    pub async fn for_sink(
        id: &ConnectorTaskId,
        config: &SinkConnectorConfig,
        mut producer_config: ClientConfig,
    ) -> Result<Option<Self>, ConnectError> {
        let Some(topic) = config.dlq_topic.clone() else {
            return Ok(None);
        };
        create_topic_if_missing(
            &producer_config,
            &topic,
            config.dlq_topic_replication_factor,
        )
        .await?;
        producer_config
            .set("client.id", format!("connector-dlq-producer-{id}"))
            .set("acks", "all");
        let producer = producer_config.create::<FutureProducer>().map_err(|e| {
            ConnectError::fatal(format!(
                "failed to create the dead-letter queue producer for task {id}: {e}"
            ))
        })?;
        Ok(Some(Self {
            topic,
            context_headers: config.dlq_context_headers_enable,
            producer,
        }))
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    async fn send(
        &self,
        record: &RawRecord,
        context: &[(&str, String)],
    ) -> Result<(), ConnectError> {
        let mut headers = OwnedHeaders::new_with_capacity(record.headers.len() + context.len());
        for (k, v) in &record.headers {
            headers = headers.insert(Header {
                key: k,
                value: v.as_deref(),
            });
        }
        if self.context_headers {
            for (k, v) in context {
                headers = headers.insert(Header {
                    key: k,
                    value: Some(v.as_bytes()),
                });
            }
        }
        let mut fr: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(&self.topic).headers(headers);
        if let Some(k) = &record.key {
            fr = fr.key(k.as_slice());
        }
        if let Some(v) = &record.value {
            fr = fr.payload(v.as_slice());
        }
        if let Some(ts) = record.timestamp {
            fr = fr.timestamp(ts);
        }
        self.producer
            .send(fr, Duration::from_secs(30))
            .await
            .map(|_| ())
            .map_err(|(e, _)| {
                ConnectError::fatal(format!(
                    "failed to write a failed record of {}-{}@{} to the dead-letter queue topic {}: {e}",
                    record.topic, record.partition, record.offset, self.topic
                ))
            })
    }
}

async fn create_topic_if_missing(
    client: &ClientConfig,
    topic: &str,
    replication_factor: i16,
) -> Result<(), ConnectError> {
    let admin: AdminClient<DefaultClientContext> = client.create().map_err(|e| {
        ConnectError::fatal(format!(
            "failed to create an admin client for topic {topic}: {e}"
        ))
    })?;
    let new = NewTopic::new(topic, 1, TopicReplication::Fixed(replication_factor.into()));
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin.create_topics([&new], &opts).await.map_err(|e| {
        ConnectError::retriable(format!(
            "failed to create dead-letter queue topic {topic}: {e}"
        ))
    })?;
    for r in results {
        match r {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((_, code)) => {
                return Err(ConnectError::fatal(format!(
                    "failed to create dead-letter queue topic {topic}: {code}"
                )));
            }
        }
    }
    Ok(())
}

/// Class names shown as `__connect.errors.class.name` per stage.
#[derive(Debug, Clone, Default)]
pub struct StageClasses {
    pub key_converter: String,
    pub value_converter: String,
    pub header_converter: String,
    pub task: String,
}

impl StageClasses {
    pub fn for_stage(&self, stage: Stage) -> &str {
        match stage {
            Stage::KeyConverter => &self.key_converter,
            Stage::ValueConverter => &self.value_converter,
            Stage::HeaderConverter => &self.header_converter,
            _ => &self.task,
        }
    }
}

/// Applies `errors.tolerance`, `errors.log.*` and the dead-letter queue to failed records.
pub struct ErrorHandler {
    id: ConnectorTaskId,
    tolerance: ToleranceType,
    log_enable: bool,
    log_include_messages: bool,
    classes: StageClasses,
    dlq: Option<DeadLetterQueue>,
    metrics: ErrorMetrics,
}

impl ErrorHandler {
    pub fn new(
        id: ConnectorTaskId,
        config: &ConnectorConfig,
        classes: StageClasses,
        dlq: Option<DeadLetterQueue>,
    ) -> Self {
        Self {
            tolerance: config.errors_tolerance,
            log_enable: config.errors_log_enable,
            log_include_messages: config.errors_log_include_messages,
            classes,
            dlq,
            metrics: crate::metrics::global().task(&id).errors,
            id,
        }
    }

    pub fn tolerates_all(&self) -> bool {
        self.tolerance == ToleranceType::All
    }

    /// The `__connect.errors.*` context of one failure, in Connect's header order.
    fn context(
        &self,
        record: &RawRecord,
        stage: Stage,
        class: &str,
        error: &ConnectError,
    ) -> Vec<(&'static str, String)> {
        vec![
            (ERROR_HEADER_ORIG_TOPIC, record.topic.clone()),
            (ERROR_HEADER_ORIG_PARTITION, record.partition.to_string()),
            (ERROR_HEADER_ORIG_OFFSET, record.offset.to_string()),
            (ERROR_HEADER_CONNECTOR_NAME, self.id.connector.clone()),
            (ERROR_HEADER_TASK_ID, self.id.task.to_string()),
            (ERROR_HEADER_STAGE, stage.as_str().to_owned()),
            (ERROR_HEADER_EXECUTING_CLASS, class.to_owned()),
            (
                ERROR_HEADER_EXCEPTION,
                exception_class_name(error).to_owned(),
            ),
            (ERROR_HEADER_EXCEPTION_MESSAGE, error.message().to_owned()),
            (
                ERROR_HEADER_EXCEPTION_STACK_TRACE,
                format!(
                    "{}: {}",
                    exception_class_name(error),
                    super::error_trace(error)
                ),
            ),
        ]
    }

    /// Handles one failed record. `Ok(())`: tolerated (and in the dead-letter queue if one
    /// is configured); the caller skips the record. `Err`: the task must fail.
    pub async fn handle(
        &self,
        record: &RawRecord,
        stage: Stage,
        error: ConnectError,
    ) -> Result<(), ConnectError> {
        let class = self.classes.for_stage(stage).to_owned();
        self.handle_in(record, stage, &class, error).await
    }

    /// [`ErrorHandler::handle`] naming the executing class (a transformation's class).
    pub async fn handle_in(
        &self,
        record: &RawRecord,
        stage: Stage,
        class: &str,
        error: ConnectError,
    ) -> Result<(), ConnectError> {
        if self.log_enable {
            if self.log_include_messages {
                tracing::error!(
                    task = %self.id, stage = stage.as_str(), class, error = %error,
                    topic = %record.topic, partition = record.partition, offset = record.offset,
                    key = ?record.key.as_deref().map(String::from_utf8_lossy),
                    value = ?record.value.as_deref().map(String::from_utf8_lossy),
                    "Error encountered in task {}. Executing stage '{}' with class '{class}'",
                    self.id, stage.as_str()
                );
            } else {
                tracing::error!(
                    task = %self.id, stage = stage.as_str(), class, error = %error,
                    topic = %record.topic, partition = record.partition, offset = record.offset,
                    "Error encountered in task {}. Executing stage '{}' with class '{class}'",
                    self.id, stage.as_str()
                );
            }
        }
        let tolerated = self.tolerance == ToleranceType::All;
        self.metrics.failed(self.log_enable, tolerated);
        if !tolerated {
            return Err(
                ConnectError::fatal("Tolerance exceeded in error handler").with_source(error)
            );
        }
        if let Some(dlq) = &self.dlq {
            let context = self.context(record, stage, class, &error);
            let sent = dlq.send(record, &context).await;
            self.metrics.dead_letter(sent.is_ok());
            sent?;
        } else if !self.log_enable {
            // Not silent even when the operator asked for no error log: one line names it.
            tracing::warn!(
                task = %self.id, stage = stage.as_str(), error = %error,
                topic = %record.topic, partition = record.partition, offset = record.offset,
                "tolerated a failed record (errors.tolerance=all, no dead-letter queue)"
            );
        }
        Ok(())
    }
}

/// The sink task's errant record reporter (Java's `WorkerErrantRecordReporter`): reports the
/// record's consumed bytes, kept by the runner for the batch being `put`, or the record
/// re-serialized with the task's converters when it is not part of that batch.
pub struct SinkErrantRecordReporter {
    handler: Arc<ErrorHandler>,
    converters: Arc<RecordConverters>,
    batch: Mutex<HashMap<(String, i32, i64), RawRecord>>,
}

impl SinkErrantRecordReporter {
    pub fn new(handler: Arc<ErrorHandler>, converters: Arc<RecordConverters>) -> Self {
        Self {
            handler,
            converters,
            batch: Mutex::new(HashMap::new()),
        }
    }

    /// Remembers the consumed bytes of the batch about to be `put` (replacing the last one).
    pub fn set_batch(&self, records: Vec<RawRecord>) {
        let mut b = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        b.clear();
        for r in records {
            b.insert((r.topic.clone(), r.partition, r.offset), r);
        }
    }

    fn raw_of(&self, record: &SinkRecord) -> RawRecord {
        let key = (
            record.original_topic.clone(),
            record.original_kafka_partition,
            record.original_kafka_offset,
        );
        if let Some(raw) = self
            .batch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return raw.clone();
        }
        let topic = &record.topic;
        let c = &self.converters;
        RawRecord {
            topic: record.original_topic.clone(),
            partition: record.original_kafka_partition,
            offset: record.original_kafka_offset,
            timestamp: record.timestamp,
            key: c
                .key_to_bytes(topic, record.key_schema.as_ref(), &record.key)
                .ok()
                .flatten(),
            value: c
                .value_to_bytes(topic, record.value_schema.as_ref(), &record.value)
                .ok()
                .flatten(),
            headers: c
                .headers_to_bytes(topic, &record.headers)
                .unwrap_or_default(),
        }
    }
}

#[async_trait]
impl ErrantRecordReporter for SinkErrantRecordReporter {
    async fn report(&self, record: &SinkRecord, error: &ConnectError) -> connect_api::Result<()> {
        let raw = self.raw_of(record);
        // ConnectError is not Clone; keep kind and message (the cause chain goes in the text).
        let copy = match error.kind() {
            ErrorKind::Data => ConnectError::data(super::error_trace(error)),
            ErrorKind::Retriable => ConnectError::retriable(super::error_trace(error)),
            ErrorKind::Config => ConnectError::config(super::error_trace(error)),
            ErrorKind::Fatal => ConnectError::fatal(super::error_trace(error)),
        };
        self.handler.handle(&raw, Stage::TaskPut, copy).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(tolerance: &str) -> ErrorHandler {
        let mut props = connect_api::ConfigMap::new();
        props.insert("name".into(), "c".into());
        props.insert("connector.class".into(), "X".into());
        props.insert("errors.tolerance".into(), tolerance.into());
        let cc = ConnectorConfig::parse(&props).unwrap();
        ErrorHandler::new(
            ConnectorTaskId::new("c", 0),
            &cc,
            StageClasses::default(),
            None,
        )
    }

    #[tokio::test]
    async fn none_fails_with_the_cause_and_all_tolerates() {
        let raw = RawRecord::default();
        let err = handler("none")
            .handle(&raw, Stage::ValueConverter, ConnectError::data("bad json"))
            .await
            .unwrap_err();
        let trace = super::super::error_trace(&err);
        assert!(
            trace.contains("Tolerance exceeded in error handler"),
            "{trace}"
        );
        assert!(trace.contains("bad json"), "{trace}");
        handler("all")
            .handle(&raw, Stage::ValueConverter, ConnectError::data("bad json"))
            .await
            .unwrap();
    }

    #[test]
    fn context_headers_use_connect_names() {
        let h = handler("all");
        let raw = RawRecord {
            topic: "t".into(),
            partition: 3,
            offset: 42,
            ..Default::default()
        };
        let ctx = h.context(
            &raw,
            Stage::ValueConverter,
            "org.apache.kafka.connect.json.JsonConverter",
            &ConnectError::data("boom"),
        );
        let get = |k: &str| ctx.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("__connect.errors.topic"), Some("t"));
        assert_eq!(get("__connect.errors.partition"), Some("3"));
        assert_eq!(get("__connect.errors.offset"), Some("42"));
        assert_eq!(get("__connect.errors.stage"), Some("VALUE_CONVERTER"));
        assert_eq!(
            get("__connect.errors.exception.class.name"),
            Some("org.apache.kafka.connect.errors.DataException")
        );
        assert_eq!(get("__connect.errors.exception.message"), Some("boom"));
        assert_eq!(ctx.len(), 10);
    }
}
