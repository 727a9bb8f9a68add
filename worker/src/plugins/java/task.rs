//! A Java source task as a [`SourceTask`]: `poll` asks the host for the records the Java
//! task's `poll` returned; `commit_record` and `commit` are passed on in order.
//!
//! # Guarantees
//!
//! - Records reach the runtime exactly as the Java task built them (Connect data in the host's
//!   binary form, [`super::wire`]; schemas once per task, as Apache's JsonConverter writes
//!   them), with their source partition and offset as Apache's offset writer would store them;
//!   the runtime converts, transforms and produces them, at-least-once or in transactions, as
//!   for a compiled-in task.
//! - `commitRecord` gets the Java record object `poll` returned (the host keeps it until then),
//!   found here by source partition and offset in the order records were polled. The
//!   acknowledgements travel with the next `poll`, `commit` or `stop` request, which the host
//!   applies first: `commitRecord` calls come in acknowledgement order, before the `commit` that
//!   follows them, one message per batch rather than per record.
//! - Cancellation: while a `poll` is in flight, the task's cancellation calls the Java task's
//!   `stop()` at once (from another thread, as Apache's worker does), so a blocked `poll`
//!   returns; the runtime's later `stop` does not call it again.

use std::collections::VecDeque;
use std::sync::Arc;

use async_trait::async_trait;
use connect_api::connector::{RecordMetadata, SourceTask};
use connect_api::converter::JsonConverter;
use connect_api::{
    ConfigMap, ConnectError, Result, SourceOffset, SourcePartition, SourceRecord, SourceTaskContext,
};
use serde_json::{Value, json};

use super::host::{Connection, Hooks, instance_id};
use super::{JavaHost, config_json, convert, wire};

struct Running {
    conn: Arc<Connection>,
    instance: String,
    ctx: SourceTaskContext,
    /// Polled records not yet acknowledged: host sequence number, source partition and offset.
    polled: VecDeque<(u64, SourcePartition, Option<SourceOffset>)>,
    /// Acknowledged records whose `commitRecord` the host has not been asked for yet: sent
    /// with the next poll, commit or stop (one message per batch, not per record).
    acked: Vec<Value>,
}

pub(super) struct JavaSourceTask {
    host: Arc<JavaHost>,
    class: &'static str,
    version: String,
    json: JsonConverter,
    /// The schemas the host has named so far, by id.
    schemas: convert::Schemas,
    /// Reads poll answers' records.
    decoder: wire::Decoder,
    running: Option<Running>,
}

impl JavaSourceTask {
    pub(super) fn new(host: Arc<JavaHost>, class: &'static str, version: &str) -> Self {
        Self {
            host,
            class,
            version: version.to_owned(),
            json: JsonConverter::new(true),
            schemas: convert::Schemas::new(),
            decoder: wire::Decoder::default(),
            running: None,
        }
    }

    fn what(&self, call: &str) -> String {
        format!("{call} of Java task {}", self.class)
    }

    fn running(&self, call: &str) -> Result<&Running> {
        self.running
            .as_ref()
            .ok_or_else(|| ConnectError::fatal(format!("{}: not started", self.what(call))))
    }
}

#[async_trait]
impl SourceTask for JavaSourceTask {
    fn version(&self) -> String {
        self.version.clone()
    }

    async fn start(&mut self, ctx: SourceTaskContext, config: ConfigMap) -> Result<()> {
        let what = self.what("start");
        let conn = self
            .host
            .connection()
            .await
            .map_err(|e| e.into_connect(&what))?;
        let instance = instance_id("task");
        conn.set_hooks(&instance, Hooks::Task(ctx.clone()));
        let started = conn
            .call(
                "task.start",
                json!({"instance": instance, "class": self.class, "config": config_json(&config),
                       "transactionContext": ctx.transaction_context().is_some()}),
            )
            .await;
        self.running = Some(Running {
            conn,
            instance,
            ctx,
            polled: VecDeque::new(),
            acked: Vec::new(),
        });
        let answer = started.map_err(|e| e.into_connect(&what))?;
        if let Some(v) = answer["version"].as_str() {
            self.version = v.to_owned();
        }
        Ok(())
    }

    async fn poll(&mut self) -> Result<Vec<SourceRecord>> {
        let what = self.what("poll");
        self.running("poll")?;
        let Some(running) = self.running.as_mut() else {
            return Ok(Vec::new());
        };
        let acked = std::mem::take(&mut running.acked);
        let (conn, instance) = (Arc::clone(&running.conn), running.instance.clone());
        let cancellation = running.ctx.cancellation.clone();
        let call = conn.call_for_answer(
            "task.poll",
            json!({"instance": instance, "commitRecords": acked}),
        );
        tokio::pin!(call);
        let answer = tokio::select! {
            answer = &mut call => answer,
            () = cancellation.cancelled() => {
                let _ = conn.notify("task.signalStop", json!({"instance": instance}));
                call.await
            }
        }
        .map_err(|e| e.into_connect(&what))?;
        let (answer, attachment) = (answer.json, answer.attachment);
        convert::add_schemas(&mut self.schemas, &answer)
            .map_err(|e| ConnectError::fatal(format!("{what}: a schema did not convert: {e}")))?;
        let count = answer["count"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0);
        let records = self
            .decoder
            .records(&self.json, &self.schemas, &attachment, count)
            .map_err(|e| ConnectError::fatal(format!("{what}: a record did not convert: {e}")))?;
        let Some(running) = self.running.as_mut() else {
            return Ok(Vec::new());
        };
        // The Java task's TransactionContext requests of this batch, to the runtime's.
        let requests = &answer["transaction"];
        if let (Some(tc), false) = (running.ctx.transaction_context(), requests.is_null()) {
            let seqs = |key: &str| -> Vec<u64> {
                requests[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_u64)
                    .collect()
            };
            if requests["commit"].as_bool() == Some(true) {
                tc.commit_transaction();
            }
            if requests["abort"].as_bool() == Some(true) {
                tc.abort_transaction();
            }
            let (commits, aborts) = (seqs("commitAt"), seqs("abortAt"));
            for (seq, record) in &records {
                if commits.contains(seq) {
                    tc.commit_transaction_at(record);
                }
                if aborts.contains(seq) {
                    tc.abort_transaction_at(record);
                }
            }
        }
        Ok(records
            .into_iter()
            .map(|(seq, record)| {
                running.polled.push_back((
                    seq,
                    record.source_partition.clone(),
                    record.source_offset.clone(),
                ));
                record
            })
            .collect())
    }

    fn commit_record_reads_data(&self) -> bool {
        false
    }

    fn commit_record(
        &mut self,
        record: &SourceRecord,
        metadata: Option<&RecordMetadata>,
    ) -> Result<()> {
        let Some(running) = self.running.as_mut() else {
            return Ok(());
        };
        let Some(at) = running
            .polled
            .iter()
            .position(|(_, p, o)| *p == record.source_partition && *o == record.source_offset)
        else {
            return Ok(());
        };
        let (seq, _, _) = running.polled.remove(at).expect("position is in range");
        running.acked.push(match metadata {
            Some(m) => json!([
                seq,
                m.topic,
                m.partition,
                m.offset,
                m.timestamp.unwrap_or(-1)
            ]),
            None => json!([seq]),
        });
        Ok(())
    }

    async fn commit(&mut self) -> Result<()> {
        let what = self.what("commit");
        self.running("commit")?;
        let Some(running) = self.running.as_mut() else {
            return Ok(());
        };
        let acked = std::mem::take(&mut running.acked);
        running
            .conn
            .call(
                "task.commit",
                json!({"instance": running.instance, "commitRecords": acked}),
            )
            .await
            .map(|_| ())
            .map_err(|e| e.into_connect(&what))
    }

    async fn stop(&mut self) -> Result<()> {
        let Some(running) = self.running.take() else {
            return Ok(());
        };
        let what = self.what("stop");
        let stopped = running
            .conn
            .call(
                "task.stop",
                json!({"instance": running.instance, "commitRecords": running.acked}),
            )
            .await;
        running.conn.remove_hooks(&running.instance);
        stopped.map(|_| ()).map_err(|e| e.into_connect(&what))
    }
}
