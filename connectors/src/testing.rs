//! Test doubles for the runtime services, to drive connectors through the traits without Kafka.
//! Public so the worker's tests can use them too.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use connect_api::cancel::{BoxFuture, CancellationToken, Timer};
use connect_api::connector::{
    ConnectorContext, ConnectorControl, OffsetStorageReader, SinkTaskContext, SinkTaskControl,
    SourceTaskContext, TransactionContext,
};
use connect_api::error::{ConnectError, Result};
use connect_api::record::{SourceOffset, SourcePartition, SourceRecord, TopicPartition};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Offsets held in memory, keyed by the partition's compact JSON (as the offsets topic is).
#[derive(Debug, Default)]
pub struct InMemoryOffsetReader {
    offsets: Mutex<BTreeMap<String, SourceOffset>>,
}

impl InMemoryOffsetReader {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&self, partition: &SourcePartition, offset: SourceOffset) {
        let key = serde_json::to_string(partition).unwrap_or_default();
        lock(&self.offsets).insert(key, offset);
    }
}

#[async_trait]
impl OffsetStorageReader for InMemoryOffsetReader {
    async fn offset(&self, partition: &SourcePartition) -> Result<Option<SourceOffset>> {
        let key = serde_json::to_string(partition)
            .map_err(|e| ConnectError::data("bad partition").with_source(e))?;
        Ok(lock(&self.offsets).get(&key).cloned())
    }
}

/// One request made through [`RecordingTransactionContext`].
#[derive(Debug, Clone, PartialEq)]
pub enum TransactionRequest {
    Commit,
    CommitAt(SourceRecord),
    Abort,
    AbortAt(SourceRecord),
}

/// Records every transaction request, in order.
#[derive(Debug, Default)]
pub struct RecordingTransactionContext {
    requests: Mutex<Vec<TransactionRequest>>,
}

impl RecordingTransactionContext {
    pub fn requests(&self) -> Vec<TransactionRequest> {
        lock(&self.requests).clone()
    }
}

impl TransactionContext for RecordingTransactionContext {
    fn commit_transaction(&self) {
        lock(&self.requests).push(TransactionRequest::Commit);
    }
    fn commit_transaction_at(&self, record: &SourceRecord) {
        lock(&self.requests).push(TransactionRequest::CommitAt(record.clone()));
    }
    fn abort_transaction(&self) {
        lock(&self.requests).push(TransactionRequest::Abort);
    }
    fn abort_transaction_at(&self, record: &SourceRecord) {
        lock(&self.requests).push(TransactionRequest::AbortAt(record.clone()));
    }
}

/// A timer whose sleeps finish at once, so throttling and idle waits do not slow tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct ImmediateTimer;

impl Timer for ImmediateTimer {
    fn sleep(&self, _duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// Connector requests, recorded.
#[derive(Debug, Default)]
pub struct RecordingConnectorControl {
    pub reconfiguration_requests: Mutex<usize>,
    pub errors: Mutex<Vec<String>>,
}

impl ConnectorControl for RecordingConnectorControl {
    fn request_task_reconfiguration(&self) {
        *lock(&self.reconfiguration_requests) += 1;
    }
    fn raise_error(&self, error: ConnectError) {
        lock(&self.errors).push(error.to_string());
    }
}

/// Sink task requests, recorded; the assignment is whatever the test sets.
#[derive(Debug, Default)]
pub struct RecordingSinkControl {
    pub assignment: Mutex<Vec<TopicPartition>>,
    pub resets: Mutex<Vec<(TopicPartition, i64)>>,
    pub paused: Mutex<Vec<TopicPartition>>,
    pub commit_requests: Mutex<usize>,
}

impl SinkTaskControl for RecordingSinkControl {
    fn assignment(&self) -> Vec<TopicPartition> {
        lock(&self.assignment).clone()
    }
    fn reset_offsets(&self, offsets: &[(TopicPartition, i64)]) {
        lock(&self.resets).extend_from_slice(offsets);
    }
    fn set_timeout(&self, _timeout: Duration) {}
    fn pause(&self, partitions: &[TopicPartition]) {
        lock(&self.paused).extend_from_slice(partitions);
    }
    fn resume(&self, partitions: &[TopicPartition]) {
        lock(&self.paused).retain(|p| !partitions.contains(p));
    }
    fn request_commit(&self) {
        *lock(&self.commit_requests) += 1;
    }
}

/// A connector context with recording control.
pub fn connector_context(name: &str) -> (ConnectorContext, Arc<RecordingConnectorControl>) {
    let control = Arc::new(RecordingConnectorControl::default());
    (
        ConnectorContext::new(name, control.clone(), CancellationToken::new()),
        control,
    )
}

/// A source task context over `offsets`, optionally with a recording transaction context.
pub fn source_task_context(
    connector: &str,
    task_id: u32,
    offsets: Arc<InMemoryOffsetReader>,
    transactions: Option<Arc<RecordingTransactionContext>>,
) -> SourceTaskContext {
    let ctx = SourceTaskContext::new(
        connector,
        task_id,
        offsets,
        Arc::new(ImmediateTimer),
        CancellationToken::new(),
    );
    match transactions {
        Some(tc) => ctx.with_transaction_context(tc),
        None => ctx,
    }
}

/// A sink task context with recording control.
pub fn sink_task_context(
    connector: &str,
    task_id: u32,
) -> (SinkTaskContext, Arc<RecordingSinkControl>) {
    let control = Arc::new(RecordingSinkControl::default());
    let ctx = SinkTaskContext::new(
        connector,
        task_id,
        control.clone(),
        Arc::new(ImmediateTimer),
        CancellationToken::new(),
    );
    (ctx, control)
}
