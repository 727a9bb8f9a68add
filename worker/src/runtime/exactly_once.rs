//! The exactly-once source task runner (KIP-618, Java's `ExactlyOnceWorkerSourceTask`).
//!
//! ```text
//!  start: fence zombies (leader writes tasks-fencing-<c>) ─> init_transactions ─> still current?
//!         ─> read offsets (read_committed) ─> task.start
//!
//!  poll ─> convert ─> begin (if none open) ─> send ─> stage offset ─┐
//!      record-level boundary (connector): commit / abort here ◀────┘
//!  after the batch: boundary? poll: always │ interval: elapsed │ connector: requested
//!      commit: offsets records ──(same producer, same transaction)──> offsets topic
//!              commit_transaction ─> commit_record(record, metadata)* ─> commit()
//!      abort:  abort_transaction ─> offsets of the aborted records still committed (new txn)
//!
//!  overlaps: the next poll runs while the producer sends the open transaction's records
//!  (interval, connector) or commits the transaction that just ended (poll, interval; the
//!  next batches are converted as they are polled, sent only after that commit ended, and
//!  commit_record of the committed records is called then)
//!  interval on the worker's own producer: each poll's converted records go to the producer in
//!  one hand-over through a SendPipe; the producer adds them to its batches and sends them on
//!  a tokio task of its own while the task polls and converts the next ones. The commit first
//!  waits until every record handed over is acknowledged, then takes the producer back.
//! ```
//!
//! # Guarantees
//!
//! - A record and the source offset that covers it become visible together or not at all:
//!   both are written by the task's transactional producer (`<group.id>-<connector>-<task>`)
//!   inside one transaction. A `read_committed` reader never sees a record whose offset was not
//!   committed with it, so a restart resumes exactly after the last committed record.
//! - A zombie (an older instance of the same task that still runs) is fenced: the new instance's
//!   `init_transactions` bumps the producer epoch, so every later send or commit of the zombie
//!   fails. Before that, the leader fences every transactional id of the previous generation.
//! - Idle tasks open no transactions: a transaction begins with the first record or offset.
//!
//! # Errors
//!
//! Any conversion error (unless tolerated), send, offset or commit error, a panic in the task,
//! and fencing, fails the task (FAILED with the error chain). It never falls back to
//! at-least-once: the open transaction is aborted (best effort, bounded by
//! `ABORT_ON_EXIT_TIMEOUT`; a fenced producer cannot, and its successor does), as is one left
//! open by a connector-boundary task stopped between two of its boundaries, so `read_committed`
//! readers never wait for the broker's transaction timeout.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use connect_api::config::{SourceConnectorConfig, TransactionBoundary};
use connect_api::connector::TransactionContext;
use connect_api::{
    CancellationToken, ConfigMap, ConnectError, SourceOffset, SourcePartition, SourceRecord,
    SourceTask, SourceTaskContext,
};
use rdkafka::ClientConfig;
use tokio::sync::watch;
use tokio::time::Instant;

use super::convert::RecordConverters;
use super::ledger::NotRetriable;
use super::offsets::LatestOffsets;
use super::source::{ProducerRecord, convert_batch};
use super::topics::ActiveTopics;
use super::txn_producer::{Pending, ProducerChoice, SendPipe, TxnProducer};
use super::{
    BackendOffsetReader, ConnectorTaskId, SourceOffsetBackend, TaskStatusListener, TokioTimer,
};
use crate::cluster::producer::RecordSlot;
use crate::metrics::{self, TaskMetrics};
use crate::storage::ConnectorOffsetBackingStore;
use crate::storage::offsets::offset_records;

/// How long transactional calls (init, commit, abort) may block.
const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the best-effort abort of a failed or stopped task's open transaction may block
/// the task's end (the herder waits for it).
const ABORT_ON_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The transactional id of a task, as Connect names it.
pub fn task_transactional_id(group_id: &str, id: &ConnectorTaskId) -> String {
    format!("{group_id}-{}-{}", id.connector, id.task)
}

/// The task whose [`task_transactional_id`] `transactional_id` is, if it is one of this group's
/// (`<group.id>-<connector>-<task>`; the task is the number after the last `-`).
pub fn task_of_transactional_id(group_id: &str, transactional_id: &str) -> Option<ConnectorTaskId> {
    let rest = transactional_id.strip_prefix(group_id)?.strip_prefix('-')?;
    let (connector, task) = rest.rsplit_once('-')?;
    if connector.is_empty() || task.is_empty() || !task.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(ConnectorTaskId::new(connector, task.parse().ok()?))
}

/// Why an exactly-once task may not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// The zombie-fencing round failed.
    #[error("{0}")]
    Fencing(String),
    /// The task was revoked, or its connector generated new task configs, meanwhile.
    #[error("{0}")]
    NotCurrent(String),
    /// Whether the task is current could not be checked (the config topic could not be read).
    #[error("{0}")]
    Unknown(String),
    /// The task was stopped while waiting.
    #[error("the task was stopped")]
    Stopped,
}

/// The herder's checks around an exactly-once task start.
#[async_trait]
pub trait ExactlyOnceGate: Send + Sync {
    /// A zombie-fencing round for the connector (on the leader) must succeed first.
    async fn fence(&self, connector: &str) -> Result<(), GateError>;
    /// After `init_transactions`: the task is still assigned here and its connector has not
    /// generated new task configs since the task was scheduled (`generation`).
    async fn still_current(
        &self,
        id: &ConnectorTaskId,
        generation: Option<i32>,
    ) -> Result<(), GateError>;
}

/// Everything the runner needs besides the task itself.
pub struct ExactlyOnceSourceTaskRun {
    pub id: ConnectorTaskId,
    pub task_config: ConfigMap,
    pub connector_config: SourceConnectorConfig,
    /// Fallback for `transaction.boundary.interval.ms`.
    pub offset_flush_interval: Duration,
    pub converters: RecordConverters,
    /// The connector's transformation chain, applied before conversion.
    pub transforms: Arc<connect_transforms::TransformChain>,
    /// The task's transactional producer, to be created (`transactional.id` included): see
    /// [`super::txn_producer::choose`].
    pub producer: ProducerChoice,
    /// KIP-158: creates each topic before the first record to it, when the connector uses it.
    pub topic_creation: super::topic_creation::TopicCreator,
    /// The connector's offsets: primary (written in the task's transactions) over the global.
    pub offsets: Arc<ConnectorOffsetBackingStore>,
    pub gate: Arc<dyn ExactlyOnceGate>,
    /// Task-config generation when the task was scheduled.
    pub generation: Option<i32>,
    pub status: Arc<dyn TaskStatusListener>,
    pub cancel: CancellationToken,
    pub paused: watch::Receiver<bool>,
    /// The directories the worker lets the task read and write (`file.connector.allowed.dirs`).
    pub file_access: connect_api::FileAccess,
}

/// Requests made through the task's [`TransactionContext`] for the current batch.
#[derive(Default)]
struct Requests {
    commit_batch: bool,
    abort_batch: bool,
    commit_at: Vec<(SourcePartition, Option<SourceOffset>)>,
    abort_at: Vec<(SourcePartition, Option<SourceOffset>)>,
}

#[derive(Default)]
struct ConnectorBoundaries(Mutex<Requests>);

impl ConnectorBoundaries {
    fn lock(&self) -> std::sync::MutexGuard<'_, Requests> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl TransactionContext for ConnectorBoundaries {
    fn commit_transaction(&self) {
        self.lock().commit_batch = true;
    }
    fn commit_transaction_at(&self, record: &SourceRecord) {
        self.lock().commit_at.push((
            record.source_partition.clone(),
            record.source_offset.clone(),
        ));
    }
    fn abort_transaction(&self) {
        self.lock().abort_batch = true;
    }
    fn abort_transaction_at(&self, record: &SourceRecord) {
        self.lock().abort_at.push((
            record.source_partition.clone(),
            record.source_offset.clone(),
        ));
    }
}

/// Per-task transaction figures, logged every [`STATS_LOG_INTERVAL`] and at stop.
#[derive(Debug, Default)]
struct TransactionStats {
    committed: u64,
    aborted: u64,
    records: u64,
    commit_time: Duration,
    max_commit_time: Duration,
    /// Summed [`CommitTimes`].
    settle_time: Duration,
    end_time: Duration,
    /// The producer's waits for the last transaction's markers, when it reports them.
    completion: Option<crate::cluster::producer::CompletionWaits>,
    /// The runner's own time, summed: in the task's `poll` (including the polls made while a
    /// commit ran), waiting to hand records to a full [`SendPipe`], and after each commit
    /// (`commit_record` of its records, the task's `commit`).
    poll_time: Duration,
    handover_time: Duration,
    finish_time: Duration,
    /// When the task started, and when its last transaction with records was committed.
    started: Option<Instant>,
    last_commit: Option<Instant>,
}

const STATS_LOG_INTERVAL: Duration = Duration::from_secs(30);

impl TransactionStats {
    fn add(&mut self, times: CommitTimes) {
        self.settle_time += times.settle;
        self.end_time += times.end;
    }

    fn log(&self, id: &ConnectorTaskId) {
        let avg_records = if self.committed == 0 {
            0.0
        } else {
            self.records as f64 / self.committed as f64
        };
        let avg_ms = if self.committed == 0 {
            0.0
        } else {
            self.commit_time.as_secs_f64() * 1000.0 / self.committed as f64
        };
        let per_commit = |d: Duration| {
            if self.committed == 0 {
                0.0
            } else {
                d.as_secs_f64() * 1000.0 / self.committed as f64
            }
        };
        let completion = self.completion.unwrap_or_default();
        tracing::info!(
            task = %id,
            transactions_committed = self.committed,
            transactions_aborted = self.aborted,
            records_committed = self.records,
            avg_records_per_transaction = format!("{avg_records:.1}"),
            avg_commit_ms = format!("{avg_ms:.2}"),
            max_commit_ms = self.max_commit_time.as_millis() as u64,
            avg_settle_ms = format!("{:.2}", per_commit(self.settle_time)),
            avg_end_ms = format!("{:.2}", per_commit(self.end_time)),
            marker_waits = completion.waits,
            marker_wait_ms = completion.waited.as_millis() as u64,
            marker_describes = completion.describes,
            avg_poll_ms = format!("{:.2}", per_commit(self.poll_time)),
            avg_handover_ms = format!("{:.2}", per_commit(self.handover_time)),
            avg_after_commit_ms = format!("{:.2}", per_commit(self.finish_time)),
            avg_transaction_ms = format!(
                "{:.2}",
                per_commit(match (self.started, self.last_commit) {
                    (Some(s), Some(l)) => l.duration_since(s),
                    _ => Duration::ZERO,
                })
            ),
            "exactly-once transaction stats"
        );
    }
}

/// The offsets a commit writes, per source partition.
type StagedOffsets = Vec<(SourcePartition, Option<SourceOffset>)>;

/// A commit's first half ([`Runner::stage_commit`]): the offsets it writes, and their records
/// for the offsets topic.
struct StagedCommit {
    entries: StagedOffsets,
    records: Vec<crate::storage::log::RawRecord>,
}

/// A commit's second half, which runs while the task polls (it borrows neither the task nor
/// the runner): settles the records handed to `pipe` (taking the producer back into
/// `producer`), adds the offsets records to the transaction and commits it.
async fn send_offsets_and_commit(
    pipe: Option<SendPipe>,
    producer: &mut TxnProducer,
    offsets_topic: &str,
    offsets: &[crate::storage::log::RawRecord],
) -> (Result<(), String>, CommitTimes) {
    let mut times = CommitTimes::default();
    let started = std::time::Instant::now();
    if let Some(pipe) = pipe {
        let (back, sent) = pipe.close().await;
        *producer = back;
        times.settle = started.elapsed();
        if let Err(e) = sent {
            return (Err(e), times);
        }
    }
    let ending = std::time::Instant::now();
    let result = async {
        for (key, value) in offsets {
            producer
                .send_offset(offsets_topic, key, value.as_deref())
                .await?;
        }
        producer.commit().await
    }
    .await;
    times.end = ending.elapsed();
    (result, times)
}

/// Where a commit's time went: waiting until the records handed to the [`SendPipe`] were
/// acknowledged (`settle`), then the offsets records and the end of the transaction (`end`:
/// the last records still unsent, the offsets, `EndTxn`).
#[derive(Debug, Default, Clone, Copy)]
struct CommitTimes {
    settle: Duration,
    end: Duration,
}

impl CommitTimes {
    /// The whole commit (not the polls made meanwhile).
    fn total(&self) -> Duration {
        self.settle + self.end
    }
}

/// What one `poll` of the task gave.
type PollResult = Result<Vec<SourceRecord>, ConnectError>;

/// Polled records and, at the same index, each one's converted form (`None`: a transform
/// dropped it, or it failed under `errors.tolerance=all`). Two vectors, so that a record (a
/// large value) is not moved again on its way to the transaction.
#[derive(Default)]
struct Converted {
    records: Vec<SourceRecord>,
    converted: Vec<Option<ProducerRecord>>,
}

/// The records of the open transaction, in order, as the polls gave them: a poll's records stay
/// in the poll's vector (no record is moved again on its way to `commit_record`), each with its
/// delivery (`None`: the chain dropped it) at the same index.
#[derive(Default)]
struct InTransaction {
    chunks: VecDeque<(Vec<SourceRecord>, Vec<Option<Pending>>)>,
    len: usize,
}

impl InTransaction {
    fn push(&mut self, records: Vec<SourceRecord>, deliveries: Vec<Option<Pending>>) {
        debug_assert_eq!(records.len(), deliveries.len());
        if !records.is_empty() {
            self.len += records.len();
            self.chunks.push_back((records, deliveries));
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        *self = Self::default();
    }

    /// Drops the records: on a blocking thread when they are many, so that the task's thread
    /// polls again instead of freeing them (about a tenth of its time in a profile).
    fn free(self) {
        if self.len >= FREE_ELSEWHERE {
            tokio::task::spawn_blocking(move || drop(self));
        }
    }
}

/// From how many records a committed transaction's records are freed off the task's thread.
const FREE_ELSEWHERE: usize = 1000;

/// One poll: its records converted (or the poll's or a conversion's error), how many records
/// the task gave, and how long the poll took.
struct Polled {
    result: Result<Converted, ConnectError>,
    records: usize,
    took: Duration,
}

/// At most this many polls while the producer sends the records of the polls before (their
/// records wait, unconverted, in memory): at `batch.size` records a poll, a few round trips'
/// worth of records.
const MAX_POLLS_WHILE_SENDING: usize = 8;

struct Runner {
    stats: TransactionStats,
    stats_logged_at: Instant,
    run: ExactlyOnceSourceTaskRun,
    task: Box<dyn SourceTask>,
    producer: TxnProducer,
    offsets_topic: String,
    boundaries: Arc<ConnectorBoundaries>,
    transaction_open: bool,
    /// Records sent in the open transaction.
    in_transaction: InTransaction,
    /// Latest offset per source partition staged for the next commit.
    staged: LatestOffsets,
    topics: ActiveTopics,
    metrics: TaskMetrics,
    /// Interval boundary on the native producer: the open transaction's records go to the
    /// producer through a [`SendPipe`], sent on a tokio task of its own while the task polls.
    pipelined: bool,
    pipe: Option<SendPipe>,
    /// Records handed to the producer in the open transaction (the next one's [`RecordSlot`]).
    sent_in_transaction: usize,
}

/// Runs an exactly-once source task until cancelled or failed; always ends with the task
/// stopped and its status reported.
pub async fn run_exactly_once_source_task(
    run: ExactlyOnceSourceTaskRun,
    task: Box<dyn SourceTask>,
) {
    let id = run.id.clone();
    let status = run.status.clone();
    let cancel = run.cancel.clone();
    let mut task = task;
    let mut run = run;
    let outcome = match prepare(&mut run).await {
        // Stopped (rebalance, shutdown) while waiting for fencing: a clean stop, not a failure.
        Err(_) if run.cancel.is_cancelled() => Ok(()),
        Err(e) => Err(e),
        Ok((producer, offsets_topic)) => {
            let pipelined = run.connector_config.transaction_boundary
                == TransactionBoundary::Interval
                && matches!(producer, TxnProducer::Native(_));
            let mut runner = Runner {
                stats: TransactionStats::default(),
                stats_logged_at: Instant::now(),
                run,
                task,
                producer,
                offsets_topic,
                boundaries: Arc::new(ConnectorBoundaries::default()),
                transaction_open: false,
                in_transaction: InTransaction::default(),
                staged: LatestOffsets::default(),
                topics: ActiveTopics::new(id.clone(), status.clone()),
                metrics: metrics::global().task(&id),
                pipelined,
                pipe: None,
                sent_in_transaction: 0,
            };
            let outcome = runner.execute().await;
            // Failed, or stopped between two of the connector's boundaries: abort what is
            // open now rather than leave `read_committed` readers of the topic and of the
            // offsets topic stalled until the broker's transaction timeout.
            runner.abort_open_transaction(&outcome).await;
            runner.stats.completion = runner.producer.completion_waits();
            runner.stats.log(&id);
            task = runner.task;
            outcome
        }
    };
    if let Err(e) = task.stop().await {
        tracing::warn!(task = %id, error = %e, "source task stop failed");
    }
    // A fenced producer means a newer instance of this task exists: this one is a zombie whose
    // worker usually learns it lost its assignment a moment later (a worker thawed after a
    // SIGSTOP fails its first commit before its herder sees the lost membership). Its stop is
    // awaited briefly, so the zombie's failure is logged rather than written over the new
    // owner's status; a task fenced while it still owns its assignment is FAILED after that.
    if let Err(e) = &outcome
        && !cancel.is_cancelled()
        && is_fenced(e)
    {
        tracing::warn!(task = %id, error = %e,
            "the task's producer was fenced; waiting up to {} s for the revocation of a zombie",
            FENCED_REVOCATION_WAIT.as_secs());
        tokio::select! {
            () = cancel.cancelled() => {}
            () = tokio::time::sleep(FENCED_REVOCATION_WAIT) => {}
        }
    }
    super::report_end(
        &id,
        "exactly-once source task",
        status.as_ref(),
        cancel.is_cancelled(),
        outcome,
    );
}

/// How long a task whose producer was fenced waits for its own revocation before it reports
/// the failure (see `run`).
const FENCED_REVOCATION_WAIT: Duration = Duration::from_secs(10);

/// Whether `e` (or its cause) says the transactional producer was fenced by a newer one.
fn is_fenced(e: &ConnectError) -> bool {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&s.to_string());
        source = s.source();
    }
    let text = text.to_ascii_lowercase();
    text.contains("fenced") || text.contains("invalid_producer_epoch") || text.contains("old epoch")
}

/// Fencing, the transactional producer and the post-producer check.
async fn prepare(
    run: &mut ExactlyOnceSourceTaskRun,
) -> Result<(TxnProducer, String), ConnectError> {
    // A stop must not wait for the fencing retries (the herder awaits the task's end).
    let fenced = tokio::select! {
        r = run.gate.fence(&run.id.connector) => r,
        _ = run.cancel.cancelled() => Err(GateError::Stopped),
    };
    fenced.map_err(|e| {
        ConnectError::fatal(format!(
            "failed to perform zombie fencing for task {}: {e}",
            run.id
        ))
    })?;
    if run.cancel.is_cancelled() {
        return Err(ConnectError::fatal(format!(
            "task {} was stopped before it started",
            run.id
        )));
    }
    let choice = std::mem::replace(
        &mut run.producer,
        ProducerChoice::Librdkafka(ClientConfig::new(), "taken".into()),
    );
    let producer = TxnProducer::start(choice, &run.id).await?;
    run.gate
        .still_current(&run.id, run.generation)
        .await
        .map_err(|e| match e {
            // Its successor runs (or will) under the new generation or on another worker.
            GateError::NotCurrent(why) => ConnectError::fatal(why).with_source(NotRetriable(
                "this instance of the task is no longer current (revoked, or its connector generated new task configs)".into(),
            )),
            e => ConnectError::fatal(e.to_string()),
        })?;
    let offsets_topic = run.offsets.primary().topic().to_owned();
    run.offsets
        .primary()
        .read_to_end(TRANSACTION_TIMEOUT)
        .await
        .map_err(|e| {
            ConnectError::fatal(format!("failed to read offsets for task {}: {e}", run.id))
        })?;
    Ok((producer, offsets_topic))
}

fn fail(id: &ConnectorTaskId, what: &str, e: impl std::fmt::Display) -> ConnectError {
    ConnectError::fatal(format!("{what} for task {id}: {e}"))
}

impl Runner {
    async fn execute(&mut self) -> Result<(), ConnectError> {
        let mut ctx = SourceTaskContext::new(
            self.run.id.connector.clone(),
            self.run.id.task as u32,
            Arc::new(BackendOffsetReader {
                connector: self.run.id.connector.clone(),
                backend: self.run.offsets.clone() as Arc<dyn SourceOffsetBackend>,
            }),
            Arc::new(TokioTimer),
            self.run.cancel.clone(),
        )
        .with_file_access(self.run.file_access.clone())
        .with_plugin_metrics(Arc::new(crate::metrics::TaskPluginMetrics::new(
            self.run.id.clone(),
        )));
        let boundary = self.run.connector_config.transaction_boundary;
        if boundary == TransactionBoundary::Connector {
            ctx = ctx.with_transaction_context(self.boundaries.clone());
        }
        self.task.start(ctx, self.run.task_config.clone()).await?;
        self.run.status.on_running(&self.run.id);
        self.stats.started = Some(Instant::now());
        tracing::info!(task = %self.run.id, boundary = ?boundary, "exactly-once source task started");

        let interval = self
            .run
            .connector_config
            .transaction_boundary_interval
            .unwrap_or(self.run.offset_flush_interval);
        let mut next_commit = Instant::now() + interval;
        let mut backoff = Duration::from_millis(100);
        // Poll and interval boundaries: the transaction just ended, staged and committing while
        // the task polls its next batch (that batch is sent only once the commit ended).
        let mut committing: Option<StagedCommit> = None;
        while !self.run.cancel.is_cancelled() {
            if *self.run.paused.borrow()
                && let Some(staged) = committing.take()
            {
                self.complete_commit(staged).await?;
            }
            if *self.run.paused.borrow() {
                // No transaction may hang open while paused.
                if boundary != TransactionBoundary::Connector {
                    self.commit().await?;
                }
                self.run.status.on_paused(&self.run.id);
                let mut paused = self.run.paused.clone();
                tokio::select! {
                    _ = paused.wait_for(|p| !*p) => {}
                    _ = self.run.cancel.cancelled() => break,
                }
                self.run.status.on_running(&self.run.id);
                continue;
            }
            // While the task polls, the records it gave before go to the brokers (the native
            // producer sends nothing by itself): an open transaction's records are written
            // while it is open, as Java's producer does, and never pile up until the commit.
            let polled = match committing.take() {
                Some(staged) => {
                    let keep_data = self.task.commit_record_reads_data();
                    // The poll boundary's next transaction is one poll; under the interval
                    // boundary the task keeps polling (at most 8 polls) until the commit ended.
                    let max_polls = match boundary {
                        TransactionBoundary::Poll => 1,
                        _ => MAX_POLLS_WHILE_SENDING,
                    };
                    let (polls, committed) = {
                        let mut commit = std::pin::pin!(send_offsets_and_commit(
                            self.pipe.take(),
                            &mut self.producer,
                            &self.offsets_topic,
                            &staged.records,
                        ));
                        let mut polls = Vec::new();
                        let mut ended = None;
                        let committed = 'commit: loop {
                            let poll_started = std::time::Instant::now();
                            let mut poll = std::pin::pin!(self.task.poll());
                            let polled = loop {
                                tokio::select! {
                                    c = &mut commit, if ended.is_none() => {
                                        // A failed commit fails the task at once, not when
                                        // the poll returns.
                                        if c.0.is_err() {
                                            break 'commit c;
                                        }
                                        ended = Some(c);
                                    }
                                    p = &mut poll => break p,
                                }
                            };
                            let more = matches!(&polled, Ok(b) if !b.is_empty());
                            // Converted now, while the commit waits for the brokers.
                            polls.push(convert_polled(
                                &self.run,
                                &self.metrics.errors,
                                keep_data,
                                polled,
                                poll_started.elapsed(),
                            ));
                            if let Some(c) = ended.take() {
                                break c;
                            }
                            if !more || polls.len() >= max_polls {
                                break (&mut commit).await;
                            }
                        };
                        (polls, committed)
                    };
                    let (committed, times) = committed;
                    self.stats.add(times);
                    self.finish_commit(staged.entries, times.total(), committed)
                        .await?;
                    polls
                }
                None => {
                    // A poll boundary makes each poll its own transaction: one poll.
                    let polls = match boundary {
                        TransactionBoundary::Poll => 1,
                        _ => MAX_POLLS_WHILE_SENDING,
                    };
                    let (polls, flushed) = self.poll_while_sending(polls).await;
                    flushed.map_err(|e| fail(&self.run.id, "Failed to send records", e))?;
                    polls
                }
            };
            // The polls' records in order; a failed poll can only be the last one.
            let mut batches = Vec::with_capacity(polled.len());
            let mut retry = None;
            for p in polled {
                // Polls that waited in vain (an idle source) are not the runner's time.
                if p.records > 0 {
                    self.stats.poll_time += p.took;
                }
                match p.result {
                    Ok(b) => {
                        backoff = Duration::from_millis(100);
                        if p.records > 0 {
                            self.metrics.polled(p.records, p.took);
                            self.metrics.batch(p.records);
                        }
                        batches.push(b);
                    }
                    Err(e) if e.is_retriable() => retry = Some(e),
                    Err(e) => return Err(e),
                }
            }
            if let Some(e) = retry {
                tracing::warn!(task = %self.run.id, error = %e, "retriable poll error; retrying");
                for batch in batches {
                    self.send_batch(batch).await?;
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = self.run.cancel.cancelled() => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
                continue;
            }
            let empty = batches.iter().all(|b| b.records.is_empty());
            for batch in batches {
                self.send_batch(batch).await?;
            }
            match boundary {
                TransactionBoundary::Poll => match self.stage_commit()? {
                    Some(staged) => committing = Some(staged),
                    None => self.task.commit().await?,
                },
                TransactionBoundary::Interval => {
                    if Instant::now() >= next_commit {
                        match self.stage_commit()? {
                            Some(staged) => committing = Some(staged),
                            None => self.task.commit().await?,
                        }
                        next_commit = Instant::now() + interval;
                    }
                }
                TransactionBoundary::Connector => self.apply_batch_requests().await?,
            }
            if empty {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    _ = self.run.cancel.cancelled() => {}
                }
            }
        }
        if let Some(staged) = committing.take() {
            self.complete_commit(staged).await?;
        }
        // A graceful stop ends with a final commit, except for connector-defined boundaries
        // where only a pending batch-level request is honoured.
        match boundary {
            TransactionBoundary::Connector => self.apply_batch_requests().await,
            _ => self.commit().await,
        }
    }

    /// Interval and connector boundaries: while the producer sends the records the task gave
    /// before, the task keeps polling: up to `max_polls` polls, until the sends
    /// ended or a poll came back empty or failed. The next sends then carry several polls'
    /// records (fewer, larger produce requests), and the task does not wait for the brokers
    /// while it has records to give. A poll is never cancelled; the polls' records are
    /// converted and sent, in order, once the sends ended. Each poll with how long it took.
    async fn poll_while_sending(&mut self, max_polls: usize) -> (Vec<Polled>, Result<(), String>) {
        let mut polls = Vec::new();
        // The native producer flushes on a tokio task of its own: encoding and sending run in
        // parallel with the polls (librdkafka sends from its own threads: nothing to flush).
        let Some(mut flush) = self.producer.spawn_flush() else {
            polls.push(self.timed_poll().await);
            return (polls, Ok(()));
        };
        let mut flushed = None;
        loop {
            let started = std::time::Instant::now();
            let polled = {
                let mut poll = std::pin::pin!(self.task.poll());
                loop {
                    tokio::select! {
                        f = &mut flush, if flushed.is_none() => flushed = Some(f),
                        p = &mut poll => break p,
                    }
                }
            };
            let more = matches!(&polled, Ok(b) if !b.is_empty());
            // Converted now, while the producer sends the records before.
            polls.push(self.converted(polled, started.elapsed()));
            if flushed.is_some() || !more || polls.len() >= max_polls {
                break;
            }
        }
        let flushed = match flushed {
            Some(f) => f,
            None => flush.await,
        };
        match flushed {
            Ok((producer, result)) => {
                self.producer = producer;
                (polls, result)
            }
            Err(e) => (polls, Err(format!("the producer's flush task failed: {e}"))),
        }
    }

    async fn timed_poll(&mut self) -> Polled {
        let started = std::time::Instant::now();
        let polled = self.task.poll().await;
        self.converted(polled, started.elapsed())
    }

    /// A poll's records, transformed and converted (dropped ones paired with `None`).
    fn converted(&self, polled: PollResult, took: Duration) -> Polled {
        convert_polled(
            &self.run,
            &self.metrics.errors,
            self.task.commit_record_reads_data(),
            polled,
            took,
        )
    }

    async fn apply_batch_requests(&mut self) -> Result<(), ConnectError> {
        let (commit, abort) = {
            let mut r = self.boundaries.lock();
            (
                std::mem::take(&mut r.commit_batch),
                std::mem::take(&mut r.abort_batch),
            )
        };
        match (commit, abort) {
            (true, true) => Err(ConnectError::fatal(
                "Connector requested both commit and abort of same transaction",
            )),
            (true, false) => self.commit().await,
            (false, true) => self.abort().await,
            (false, false) => Ok(()),
        }
    }

    fn begin(&mut self) -> Result<(), ConnectError> {
        if !self.transaction_open {
            self.producer
                .begin()
                .map_err(|e| fail(&self.run.id, "failed to begin a transaction", e))?;
            self.transaction_open = true;
            self.sent_in_transaction = 0;
        }
        Ok(())
    }

    /// Sends converted records (in order) into the open transaction, honouring a
    /// connector-defined boundary at any of them.
    async fn send_batch(&mut self, batch: Converted) -> Result<(), ConnectError> {
        if self.pipelined {
            return self.pipe_batch(batch).await;
        }
        let connector_boundaries =
            self.run.connector_config.transaction_boundary == TransactionBoundary::Connector;
        let Converted {
            mut records,
            converted,
        } = batch;
        // The deliveries of `records[..deliveries.len()]`, the records sent so far.
        let mut deliveries = Vec::with_capacity(records.len());
        for converted in converted {
            let delivery = match self.send_one(converted).await {
                Ok(d) => d,
                Err(e) => {
                    // The records sent before stay part of the open transaction.
                    records.truncate(deliveries.len());
                    self.in_transaction.push(records, deliveries);
                    return Err(e);
                }
            };
            let record = &records[deliveries.len()];
            self.staged
                .stage(&record.source_partition, &record.source_offset);
            let requested = connector_boundaries.then(|| {
                let key = (
                    record.source_partition.clone(),
                    record.source_offset.clone(),
                );
                let mut r = self.boundaries.lock();
                let c = take_match(&mut r.commit_at, &key);
                let a = take_match(&mut r.abort_at, &key);
                (c, a)
            });
            deliveries.push(delivery);
            if let Some((commit, abort)) = requested
                && (commit || abort)
            {
                // The transaction ends at this record: the ones after it belong to the next.
                let rest = records.split_off(deliveries.len());
                let ended = std::mem::replace(&mut records, rest);
                self.in_transaction
                    .push(ended, std::mem::take(&mut deliveries));
                match (commit, abort) {
                    (true, true) => {
                        return Err(ConnectError::fatal(
                            "Connector requested both commit and abort of same record",
                        ));
                    }
                    (true, false) => self.commit().await?,
                    _ => self.abort().await?,
                }
            }
        }
        self.in_transaction.push(records, deliveries);
        Ok(())
    }

    /// [`Self::send_batch`] through the [`SendPipe`] (interval boundary, native producer): the
    /// records go to the producer in one hand-over, and are sent while the task polls again.
    async fn pipe_batch(&mut self, batch: Converted) -> Result<(), ConnectError> {
        let Converted { records, converted } = batch;
        let mut deliveries = Vec::with_capacity(records.len());
        let mut out = Vec::with_capacity(records.len());
        let mut failed = None;
        for converted in converted {
            let delivery = match converted {
                None => None,
                Some(pr) => match self.admit(&pr.topic).await {
                    Ok(()) => {
                        let slot = RecordSlot::nth(self.sent_in_transaction);
                        self.sent_in_transaction += 1;
                        let topic = pr.topic.clone();
                        out.push(pr);
                        Some(Pending::Native { topic, slot })
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                },
            };
            deliveries.push(delivery);
        }
        let mut records = records;
        // After a failure the records before it stay part of the open transaction.
        records.truncate(deliveries.len());
        self.staged.stage_all(&records);
        self.in_transaction.push(records, deliveries);
        if !out.is_empty() {
            if self.pipe.is_none() {
                self.pipe = self.producer.spawn_pipe();
            }
            let handed = match &self.pipe {
                Some(pipe) => {
                    let waiting = std::time::Instant::now();
                    let sent = pipe.send(out).await;
                    self.stats.handover_time += waiting.elapsed();
                    sent && !pipe.has_failed()
                }
                None => {
                    return Err(fail(
                        &self.run.id,
                        "Failed to send records",
                        "the transactional producer is not available",
                    ));
                }
            };
            if !handed {
                self.settle().await?;
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Waits until every record handed to the [`SendPipe`] is acknowledged, and takes the
    /// producer back (for the commit, an abort, or a pause).
    async fn settle(&mut self) -> Result<(), ConnectError> {
        let Some(pipe) = self.pipe.take() else {
            return Ok(());
        };
        let (producer, result) = pipe.close().await;
        self.producer = producer;
        result.map_err(|e| fail(&self.run.id, "Failed to send records", e))
    }

    /// Checks a converted record's topic and opens the transaction for it.
    async fn admit(&mut self, topic: &str) -> Result<(), ConnectError> {
        if topic == self.offsets_topic {
            return Err(ConnectError::fatal(
                "Source tasks may not produce to their own offsets topics when exactly-once support is enabled",
            ));
        }
        self.run.topic_creation.ensure(topic).await?;
        self.begin()
    }

    /// One converted record into the open transaction (`None`: the chain dropped it).
    async fn send_one(
        &mut self,
        converted: Option<ProducerRecord>,
    ) -> Result<Option<Pending>, ConnectError> {
        let Some(pr) = converted else {
            return Ok(None);
        };
        self.admit(&pr.topic).await?;
        Ok(Some(self.producer.send(pr).await?))
    }

    /// Writes the staged offsets into the open transaction and commits it.
    async fn commit(&mut self) -> Result<(), ConnectError> {
        match self.stage_commit()? {
            Some(staged) => self.complete_commit(staged).await,
            None => self.task.commit().await,
        }
    }

    /// The first half of a commit: the staged offsets, taken, and their records (the
    /// transaction begun if only offsets are to be committed). `None`: nothing to commit.
    fn stage_commit(&mut self) -> Result<Option<StagedCommit>, ConnectError> {
        if self.staged.is_empty() && !self.transaction_open {
            return Ok(None);
        }
        // With records being sent (a pipe), the transaction is open already.
        self.begin()?;
        let entries = self.staged.take();
        let records = offset_records(&self.run.id.connector, &entries)
            .map_err(|e| fail(&self.run.id, "failed to serialize offsets", e))?;
        Ok(Some(StagedCommit { entries, records }))
    }

    /// The rest of a commit, here and now: [`send_offsets_and_commit`], then
    /// [`Self::finish_commit`].
    async fn complete_commit(&mut self, staged: StagedCommit) -> Result<(), ConnectError> {
        let (committed, times) = send_offsets_and_commit(
            self.pipe.take(),
            &mut self.producer,
            &self.offsets_topic,
            &staged.records,
        )
        .await;
        self.stats.add(times);
        self.finish_commit(staged.entries, times.total(), committed)
            .await
    }

    /// The second half, once the producer's commit (which took `took`) ended: the task
    /// learns of its committed records.
    async fn finish_commit(
        &mut self,
        entries: StagedOffsets,
        took: Duration,
        committed: Result<(), String>,
    ) -> Result<(), ConnectError> {
        let finishing = std::time::Instant::now();
        let finished = self.finish_commit_inner(entries, took, committed).await;
        self.stats.finish_time += finishing.elapsed();
        finished
    }

    async fn finish_commit_inner(
        &mut self,
        entries: StagedOffsets,
        took: Duration,
        committed: Result<(), String>,
    ) -> Result<(), ConnectError> {
        self.metrics.offset_commit(committed.is_ok(), took);
        committed.map_err(|e| fail(&self.run.id, "Failed to flush offsets and/or records", e))?;
        self.transaction_open = false;
        self.metrics
            .transaction_committed(self.in_transaction.len(), took);
        self.stats.committed += 1;
        self.stats.records += self.in_transaction.len() as u64;
        self.stats.commit_time += took;
        self.stats.max_commit_time = self.stats.max_commit_time.max(took);
        if self.in_transaction.len() > 0 {
            self.stats.last_commit = Some(Instant::now());
        }
        tracing::debug!(task = %self.run.id, records = self.in_transaction.len(), offsets = entries.len(), commit_ms = took.as_millis() as u64, "committed transaction");
        if self.stats_logged_at.elapsed() >= STATS_LOG_INTERVAL {
            self.stats.completion = self.producer.completion_waits();
            self.stats.log(&self.run.id);
            self.stats_logged_at = Instant::now();
        }
        // Every record of the transaction is acknowledged once the commit returned.
        let mut committed = std::mem::take(&mut self.in_transaction);
        for (records, deliveries) in &mut committed.chunks {
            for (record, pending) in records.iter().zip(deliveries.drain(..)) {
                let metadata = match pending {
                    Some(p) => Some(self.producer.landed(p).await?),
                    None => None,
                };
                if let Some(m) = &metadata {
                    self.topics.record(&m.topic);
                }
                self.metrics.source_done(1, usize::from(metadata.is_some()));
                self.task.commit_record(record, metadata.as_ref())?;
            }
        }
        committed.free();
        self.task.commit().await?;
        // The global offsets topic gets a copy, outside the transaction, as in Connect.
        if let Some(secondary) = self.run.offsets.secondary()
            && let Err(e) = secondary.set(&self.run.id.connector, &entries).await
        {
            tracing::warn!(task = %self.run.id, error = %e, "failed to copy offsets to the worker's global offsets topic");
        }
        Ok(())
    }

    /// Best effort, within [`ABORT_ON_EXIT_TIMEOUT`]: aborts the transaction left open when the
    /// task ends (a failure, a panic in the task, or a stop before the connector's next
    /// boundary). A fenced producer cannot abort; its successor's `init_transactions` does.
    async fn abort_open_transaction(&mut self, outcome: &Result<(), ConnectError>) {
        if !self.transaction_open {
            return;
        }
        // Records still being sent are settled first (an error there is the task's already).
        if let Err(e) = self.settle().await {
            tracing::debug!(task = %self.run.id, error = %e, "sending the open transaction's records failed");
        }
        let records = self.in_transaction.len();
        let aborted = self.producer.abort(ABORT_ON_EXIT_TIMEOUT).await;
        match aborted {
            Ok(()) => {
                self.transaction_open = false;
                self.stats.aborted += 1;
                self.metrics.transaction_aborted();
                self.metrics.source_done(records, 0);
                self.in_transaction.clear();
                self.staged.clear();
                let why = if outcome.is_err() {
                    "failed"
                } else {
                    "stopped"
                };
                tracing::info!(task = %self.run.id, records, "aborted the open transaction of a {why} task");
            }
            Err(e) => {
                tracing::warn!(task = %self.run.id, error = %e, "failed to abort the open transaction; the broker aborts it when it times out");
            }
        }
    }

    /// Aborts the open transaction; the aborted records' offsets are still committed so the
    /// task does not read them again.
    async fn abort(&mut self) -> Result<(), ConnectError> {
        if !self.transaction_open {
            tracing::warn!(task = %self.run.id, "abort requested with no open transaction; ignored");
            return Ok(());
        }
        self.producer
            .abort(TRANSACTION_TIMEOUT)
            .await
            .map_err(|e| fail(&self.run.id, "failed to abort the transaction", e))?;
        self.transaction_open = false;
        self.stats.aborted += 1;
        self.metrics.transaction_aborted();
        self.metrics.source_done(self.in_transaction.len(), 0);
        tracing::info!(task = %self.run.id, records = self.in_transaction.len(), "aborted transaction at the connector's request");
        self.in_transaction.clear();
        self.commit().await
    }
}

/// [`Runner::converted`] without borrowing the runner: the polls made while a commit runs are
/// converted as they come (the commit holds the producer).
fn convert_polled(
    run: &ExactlyOnceSourceTaskRun,
    errors: &metrics::ErrorMetrics,
    keep_data: bool,
    polled: PollResult,
    took: Duration,
) -> Polled {
    let records = polled.as_ref().map_or(0, Vec::len);
    let result = polled.and_then(|mut records| {
        let converted = convert_batch(
            &run.converters,
            &run.transforms,
            &run.connector_config.common,
            &run.id,
            &mut records,
            keep_data,
            errors,
        )?;
        Ok(Converted { records, converted })
    });
    Polled {
        result,
        records,
        took,
    }
}

fn take_match(
    list: &mut Vec<(SourcePartition, Option<SourceOffset>)>,
    key: &(SourcePartition, Option<SourceOffset>),
) -> bool {
    match list.iter().position(|k| k == key) {
        Some(i) => {
            list.remove(i);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod fenced_tests {
    use super::*;

    #[test]
    fn fencing_errors_are_recognised_by_message_and_cause() {
        assert!(is_fenced(&ConnectError::fatal(
            "Failed to flush offsets and/or records for task vs-1: producing to t-1 failed: \
             INVALID_PRODUCER_EPOCH: the producer was fenced (there is a newer producer)"
        )));
        assert!(is_fenced(
            &ConnectError::fatal("commit failed")
                .with_source("Broker: Producer attempted an operation with an old epoch")
        ));
        assert!(!is_fenced(&ConnectError::fatal(
            "the broker is unreachable"
        )));
    }
}
