//! A Java sink task as a [`SinkTask`]: the runtime's consumer, converters, transformations and
//! error handling run here; `put` hands the batch to the Java task, each record's Connect data in
//! the binary form of [`super::wire`] (schemas once per task), and
//! `open`/`close`/`flush`/`preCommit`/`stop` are passed on in order.
//!
//! What the Java task asks of its `SinkTaskContext` (offsets, timeout, pause/resume, commit
//! requests) reaches this task's context as it happens; its `assignment()` is what `open` and
//! `close` told it; its errant record reporter reports through the runtime's (tolerance, log,
//! dead-letter queue), identifying the record by its place in the batch being put.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use connect_api::connector::{SinkOffsets, SinkTask};
use connect_api::converter::JsonConverter;
use connect_api::record::{SinkRecord, TopicPartition};
use connect_api::{ConfigMap, ConnectError, Result, SinkTaskContext};
use serde_json::{Value, json};

use super::host::{Connection, Hooks, instance_id};
use super::{JavaHost, config_json, wire};

struct Running {
    conn: Arc<Connection>,
    instance: String,
    batch: Arc<Mutex<Vec<SinkRecord>>>,
}

pub(super) struct JavaSinkTask {
    host: Arc<JavaHost>,
    class: &'static str,
    version: String,
    /// Headers' envelopes.
    json: JsonConverter,
    /// Schemaless keys and values.
    payloads: JsonConverter,
    /// The binary form of `put` batches, and the schemas the host has been sent.
    encoder: wire::Encoder,
    running: Option<Running>,
}

fn partitions_json(partitions: &[TopicPartition]) -> Value {
    Value::Array(
        partitions
            .iter()
            .map(|tp| json!({"topic": tp.topic, "partition": tp.partition}))
            .collect(),
    )
}

fn offsets_json(offsets: &SinkOffsets) -> Value {
    Value::Array(
        offsets
            .iter()
            .map(|(tp, o)| json!({"topic": tp.topic, "partition": tp.partition, "offset": o}))
            .collect(),
    )
}

impl JavaSinkTask {
    pub(super) fn new(host: Arc<JavaHost>, class: &'static str, version: &str) -> Self {
        Self {
            host,
            class,
            version: version.to_owned(),
            json: JsonConverter::new(true),
            payloads: JsonConverter::new(false),
            encoder: wire::Encoder::default(),
            running: None,
        }
    }

    fn what(&self, call: &str) -> String {
        format!("{call} of Java task {}", self.class)
    }

    async fn call(&self, op: &str, call: &str, mut body: Value) -> Result<Value> {
        let what = self.what(call);
        let running = self
            .running
            .as_ref()
            .ok_or_else(|| ConnectError::fatal(format!("{what}: not started")))?;
        body["instance"] = json!(running.instance);
        running
            .conn
            .call(op, body)
            .await
            .map_err(|e| e.into_connect(&what))
    }
}

#[async_trait]
impl SinkTask for JavaSinkTask {
    fn version(&self) -> String {
        self.version.clone()
    }

    async fn start(&mut self, ctx: SinkTaskContext, config: ConfigMap) -> Result<()> {
        let what = self.what("start");
        let conn = self
            .host
            .connection()
            .await
            .map_err(|e| e.into_connect(&what))?;
        let instance = instance_id("sink-task");
        // A new instance in the host knows no schema yet.
        self.encoder = wire::Encoder::default();
        let batch = Arc::new(Mutex::new(Vec::new()));
        let reporter = ctx.errant_record_reporter().is_some();
        conn.set_hooks(
            &instance,
            Hooks::Sink {
                ctx,
                batch: Arc::clone(&batch),
            },
        );
        let started = conn
            .call(
                "sink.start",
                json!({"instance": instance, "class": self.class, "config": config_json(&config),
                       "errantRecordReporter": reporter}),
            )
            .await;
        self.running = Some(Running {
            conn,
            instance,
            batch,
        });
        let answer = started.map_err(|e| e.into_connect(&what))?;
        if let Some(v) = answer["version"].as_str() {
            self.version = v.to_owned();
        }
        Ok(())
    }

    async fn open(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        self.call(
            "sink.open",
            "open",
            json!({"partitions": partitions_json(partitions)}),
        )
        .await
        .map(|_| ())
    }

    async fn put(&mut self, records: Vec<SinkRecord>) -> Result<()> {
        let what = self.what("put");
        let (schemas, encoded) = self
            .encoder
            .sink_records(&self.json, &self.payloads, &records)
            .map_err(|e| ConnectError::fatal(format!("{what}: {e}")))?;
        let count = records.len();
        let Some(running) = &self.running else {
            return Err(ConnectError::fatal(format!("{what}: not started")));
        };
        *running.batch.lock().unwrap_or_else(|e| e.into_inner()) = records;
        let result = running
            .conn
            .call_with_attachment(
                "sink.put",
                json!({"instance": running.instance, "count": count, "schemas": schemas}),
                encoded,
            )
            .await
            .map_err(|e| e.into_connect(&what));
        if let Some(running) = &self.running {
            running
                .batch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
        result.map(|_| ())
    }

    async fn flush(&mut self, offsets: &SinkOffsets) -> Result<()> {
        self.call(
            "sink.flush",
            "flush",
            json!({"offsets": offsets_json(offsets)}),
        )
        .await
        .map(|_| ())
    }

    async fn pre_commit(&mut self, offsets: SinkOffsets) -> Result<SinkOffsets> {
        let answer = self
            .call(
                "sink.preCommit",
                "preCommit",
                json!({"offsets": offsets_json(&offsets)}),
            )
            .await?;
        Ok(answer
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| {
                let partition = i32::try_from(o["partition"].as_i64()?).ok()?;
                Some((
                    TopicPartition::new(o["topic"].as_str()?, partition),
                    o["offset"].as_i64()?,
                ))
            })
            .collect())
    }

    async fn close(&mut self, partitions: &[TopicPartition]) -> Result<()> {
        self.call(
            "sink.close",
            "close",
            json!({"partitions": partitions_json(partitions)}),
        )
        .await
        .map(|_| ())
    }

    async fn stop(&mut self) -> Result<()> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let what = self.what("stop");
        let stopped = running
            .conn
            .call("sink.stop", json!({"instance": running.instance}))
            .await;
        running.conn.remove_hooks(&running.instance);
        stopped.map(|_| ()).map_err(|e| e.into_connect(&what))
    }
}
