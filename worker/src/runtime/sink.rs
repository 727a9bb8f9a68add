//! The sink task runner (Java's `WorkerSinkTask`).
//!
//! ```text
//!   consumer group connect-<connector>
//!     poll ──> convert ──> put(batch) ──> current offsets (last put offset + 1)
//!     every offset.flush.interval.ms (or on request):
//!        pre_commit(current) ──> commit what the task reported, for assigned partitions only
//!     rebalance: revoked ──> pre_commit + commit + close(partitions)
//!                assigned ──> open(partitions)
//! ```
//!
//! Each sink task runs on its own blocking thread: librdkafka calls the rebalance callbacks
//! from inside `poll`, and the task's `close`/`open` must finish before the partitions change
//! hands. On a dedicated thread the callback can simply block on the async task methods.
//!
//! # Guarantees
//!
//! - Offsets are committed only as far as `pre_commit` reports, and only for partitions this
//!   task still owns, so a record is never marked consumed before the task says it is durable.
//! - Partitions leaving this task are committed and `close`d before the consumer gives them up.
//! - Requests the task makes through its context (rewind, pause, resume, commit) are applied
//!   between `put` calls, in the order made; a rewind asked for in `open` becomes the starting
//!   offset of the assignment itself, so no record from the group's offset comes first.
//! - A record polled before its partition was revoked or reassigned is never handed to `put`,
//!   nor is one of a partition with a rewind still pending.
//!
//! # Errors
//!
//! A retriable `put` error redelivers the same batch after the context's timeout (or a backoff)
//! until `errors.retry.timeout` runs out; any other `put` error fails the task (FAILED with the
//! error chain as `trace`). A record that fails conversion, or that the task reports through
//! its errant record reporter, goes to [`ErrorHandler`]: with `errors.tolerance=all` it is
//! logged and written (original bytes, `__connect.errors.*` headers) to the dead-letter queue
//! before the runner moves on; with `none` it fails the task.

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connect_api::config::SinkConnectorConfig;
use connect_api::connector::{SinkOffsets, SinkTaskControl};
use connect_api::record::TimestampType;
use connect_api::{
    CancellationToken, ConfigMap, ConnectError, SinkRecord, SinkTask, SinkTaskContext,
    TopicPartition,
};
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, RebalanceProtocol};
use rdkafka::message::{BorrowedMessage, Headers as _, Message};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{ClientConfig, ClientContext, Offset, TopicPartitionList};
use tokio::runtime::Handle;
use tokio::sync::watch;

use super::consumer_errors::{ConsumerErrorAction, classify};
use super::convert::{RecordConverters, conversion_error};
use super::errors::{ErrorHandler, RawRecord, SinkErrantRecordReporter, Stage};
use super::topics::ActiveTopics;
use super::{ConnectorTaskId, TaskStatusListener, TokioTimer};
use crate::config::clients::ClientKind;
use crate::config::{ClientScope, WorkerConfig};
use crate::metrics::{self, TaskMetrics};

/// Records handed to one `put` at most.
/// The largest batch per `put` unless `max.poll.records` says otherwise (Java's default).
pub const DEFAULT_MAX_POLL_RECORDS: usize = 500;
const POLL_TIMEOUT: Duration = Duration::from_millis(100);
/// The consumer key for where a partition without a committed offset starts.
pub const AUTO_OFFSET_RESET: &str = "auto.offset.reset";
/// Connect's sink default for it (a configured value wins).
pub const DEFAULT_AUTO_OFFSET_RESET: &str = "earliest";

/// Everything the runner needs besides the task itself.
pub struct SinkTaskRun {
    pub id: ConnectorTaskId,
    pub task_config: ConfigMap,
    pub connector_config: SinkConnectorConfig,
    pub offset_commit_interval: Duration,
    pub converters: Arc<RecordConverters>,
    /// The connector's transformation chain, applied after conversion and before `put`.
    pub transforms: Arc<connect_transforms::TransformChain>,
    /// `errors.*` and the dead-letter queue, for conversion errors and the errant record reporter.
    pub errors: Arc<ErrorHandler>,
    /// Bootstrap servers and `consumer.*` overrides; the runner sets group and commit keys.
    pub consumer_config: ClientConfig,
    /// `max.poll.records`: the most records polled for one `put`.
    pub max_poll_records: usize,
    pub status: Arc<dyn TaskStatusListener>,
    pub cancel: CancellationToken,
    pub paused: watch::Receiver<bool>,
    /// The directories the worker lets the task read and write (`file.connector.allowed.dirs`).
    pub file_access: connect_api::FileAccess,
}

/// The consumer group a sink connector's tasks commit to, as in Connect: the connector's
/// `consumer.override.group.id`, else the worker's `consumer.group.id`, else
/// `connect-<connector>`. The task, `GET .../offsets` and the offsets changes all use this.
pub fn sink_group_id(
    worker: &WorkerConfig,
    connector: &str,
    connector_config: &ConfigMap,
) -> Result<String, ConnectError> {
    let (config, _) = sink_consumer_config(worker, connector, connector_config)?;
    Ok(config
        .get("group.id")
        .map(str::to_owned)
        .unwrap_or_else(|| default_sink_group_id(connector)))
}

/// `connect-<connector>`.
fn default_sink_group_id(connector: &str) -> String {
    format!("connect-{connector}")
}

/// A sink task's consumer settings (the worker's `consumer.*` under the connector's
/// `consumer.override.*`, with [`sink_group_id`]'s group) and the largest batch per `put`
/// (`max.poll.records`).
pub fn sink_consumer_config(
    worker: &WorkerConfig,
    connector: &str,
    connector_config: &ConfigMap,
) -> Result<(ClientConfig, usize), ConnectError> {
    let scope = ClientScope::Worker(ClientKind::Consumer);
    let overrides = super::client_overrides(
        ClientKind::Consumer,
        connector_config,
        &worker.client_override_policy,
    )?;
    let mut c = worker
        .kafka_client_with(scope, ClientConfig::new(), Some(&overrides))
        .map_err(|e| ConnectError::config(e.to_string()))?;
    if c.get("group.id").is_none() {
        c.set("group.id", default_sink_group_id(connector));
    }
    let max_poll_records = overrides
        .max_poll_records
        .or(worker.client_settings(scope).max_poll_records)
        .map_or(DEFAULT_MAX_POLL_RECORDS, NonZeroUsize::get);
    Ok((c, max_poll_records))
}

/// What the task asked of its consumer, applied by the runner between `put`s.
#[derive(Default)]
struct Requests {
    assignment: BTreeSet<TopicPartition>,
    /// Counts rebalance callbacks; a record polled before its partition was (re)assigned is
    /// stale (the new assignment may start elsewhere) and is never handed to `put`.
    epoch: u64,
    /// The epoch at which each owned partition was last assigned.
    assigned_at: BTreeMap<TopicPartition, u64>,
    rewinds: Vec<(TopicPartition, i64)>,
    pauses: Vec<TopicPartition>,
    resumes: Vec<TopicPartition>,
    commit: bool,
    timeout: Option<Duration>,
}

#[derive(Default)]
struct Control(Mutex<Requests>);

impl Control {
    fn lock(&self) -> std::sync::MutexGuard<'_, Requests> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SinkTaskControl for Control {
    fn assignment(&self) -> Vec<TopicPartition> {
        self.lock().assignment.iter().cloned().collect()
    }
    fn reset_offsets(&self, offsets: &[(TopicPartition, i64)]) {
        self.lock().rewinds.extend_from_slice(offsets);
    }
    fn set_timeout(&self, timeout: Duration) {
        self.lock().timeout = Some(timeout);
    }
    fn pause(&self, partitions: &[TopicPartition]) {
        self.lock().pauses.extend_from_slice(partitions);
    }
    fn resume(&self, partitions: &[TopicPartition]) {
        self.lock().resumes.extend_from_slice(partitions);
    }
    fn request_commit(&self) {
        self.lock().commit = true;
    }
}

/// State shared between the poll loop and the rebalance callbacks (same thread, so the
/// mutexes never contend; they exist because the callbacks only get `&self`).
struct Shared {
    id: ConnectorTaskId,
    rt: Handle,
    task: Mutex<Box<dyn SinkTask>>,
    current: Mutex<SinkOffsets>,
    control: Arc<Control>,
    /// The first error raised inside a rebalance callback; the loop fails the task with it.
    failure: Mutex<Option<ConnectError>>,
    reporter: Arc<SinkErrantRecordReporter>,
    metrics: TaskMetrics,
}

impl Shared {
    fn fail(&self, e: ConnectError) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(e);
        }
    }

    fn with_task<T>(&self, f: impl AsyncFnOnce(&mut Box<dyn SinkTask>) -> T) -> T {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        self.rt.block_on(f(&mut task))
    }

    /// `pre_commit` with the current offsets of `partitions` (all if `None`), then a
    /// synchronous commit of what the task reported, restricted to those partitions.
    fn commit(
        &self,
        consumer: &BaseConsumer<SinkContext>,
        partitions: Option<&BTreeSet<TopicPartition>>,
    ) -> Result<(), ConnectError> {
        let current: SinkOffsets = {
            let cur = self.current.lock().unwrap_or_else(|p| p.into_inner());
            cur.iter()
                .filter(|(tp, _)| partitions.is_none_or(|ps| ps.contains(*tp)))
                .map(|(tp, o)| (tp.clone(), *o))
                .collect()
        };
        if current.is_empty() {
            self.metrics.commit_skipped();
            return Ok(());
        }
        let started = std::time::Instant::now();
        let reported = self.with_task(async |t| t.pre_commit(current.clone()).await)?;
        let mut tpl = TopicPartitionList::new();
        for (tp, offset) in &reported {
            if current.contains_key(tp) {
                tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*offset))
                    .map_err(|e| ConnectError::fatal(format!("bad offset for {tp:?}: {e}")))?;
            }
        }
        if tpl.count() == 0 {
            self.metrics.commit_skipped();
            return Ok(());
        }
        let committed = consumer.commit(&tpl, CommitMode::Sync);
        self.metrics
            .offset_commit(committed.is_ok(), started.elapsed());
        committed.map_err(|e| {
            ConnectError::retriable(format!(
                "failed to commit offsets for task {}: {e}",
                self.id
            ))
        })?;
        self.metrics.committed();
        tracing::debug!(task = %self.id, partitions = tpl.count(), "committed sink offsets");
        Ok(())
    }
}

struct SinkContext {
    shared: Arc<Shared>,
}

impl ClientContext for SinkContext {}

fn partitions_of(tpl: &TopicPartitionList) -> Vec<TopicPartition> {
    tpl.elements()
        .iter()
        .map(|e| TopicPartition::new(e.topic(), e.partition()))
        .collect()
}

impl ConsumerContext for SinkContext {
    /// Replaces rdkafka's default so that the offsets a task asks for in `open` (a sink that
    /// stores its offsets with the data rewinds there) become the starting offsets of the
    /// assignment itself. A `seek` after the fact races the fetcher (records from the group's
    /// offset can arrive first) and fails on partitions that have not started fetching.
    fn rebalance(
        &self,
        consumer: &BaseConsumer<Self>,
        err: RDKafkaRespErr,
        tpl: &mut TopicPartitionList,
    ) {
        let cooperative = matches!(
            consumer.rebalance_protocol(),
            RebalanceProtocol::Cooperative
        );
        let result = match err {
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS => {
                self.on_assigned(tpl);
                if cooperative {
                    consumer.incremental_assign(tpl)
                } else {
                    consumer.assign(tpl)
                }
            }
            RDKafkaRespErr::RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS => {
                self.on_revoked(consumer, tpl);
                if cooperative {
                    consumer.incremental_unassign(tpl)
                } else {
                    consumer.unassign()
                }
            }
            other => {
                tracing::warn!(task = %self.shared.id, error = ?other, "rebalance error");
                self.on_revoked(consumer, tpl);
                consumer.unassign()
            }
        };
        if let Err(e) = result {
            self.shared.fail(ConnectError::retriable(format!(
                "failed to apply the consumer group's assignment: {e}"
            )));
        }
    }
}

impl SinkContext {
    fn on_revoked(&self, consumer: &BaseConsumer<Self>, tpl: &TopicPartitionList) {
        let revoked: BTreeSet<TopicPartition> = partitions_of(tpl).into_iter().collect();
        if revoked.is_empty() {
            return;
        }
        let s = &self.shared;
        tracing::info!(task = %s.id, partitions = ?revoked, "partitions revoked");
        if let Err(e) = s.commit(consumer, Some(&revoked)) {
            tracing::warn!(task = %s.id, error = %e, "failed to commit offsets of revoked partitions");
        }
        let list: Vec<_> = revoked.iter().cloned().collect();
        if let Err(e) = s.with_task(async |t| t.close(&list).await) {
            s.fail(e);
        }
        s.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|tp, _| !revoked.contains(tp));
        let mut c = s.control.lock();
        c.epoch += 1;
        c.assignment.retain(|tp| !revoked.contains(tp));
        s.metrics.partitions(c.assignment.len());
        c.assigned_at.retain(|tp, _| !revoked.contains(tp));
        c.rewinds.retain(|(tp, _)| !revoked.contains(tp));
    }

    /// Opens the task on the new partitions, then turns the rewinds it requested for them into
    /// the assignment's starting offsets (the others keep the group's committed offsets).
    fn on_assigned(&self, tpl: &mut TopicPartitionList) {
        let assigned = partitions_of(tpl);
        if assigned.is_empty() {
            return;
        }
        let s = &self.shared;
        tracing::info!(task = %s.id, partitions = ?assigned, "partitions assigned");
        {
            let mut c = s.control.lock();
            c.epoch += 1;
            let epoch = c.epoch;
            for tp in &assigned {
                c.assignment.insert(tp.clone());
                s.metrics.partitions(c.assignment.len());
                c.assigned_at.insert(tp.clone(), epoch);
            }
        }
        if let Err(e) = s.with_task(async |t| t.open(&assigned).await) {
            s.fail(e);
            return;
        }
        let starts: Vec<(TopicPartition, i64)> = {
            let mut c = s.control.lock();
            let (mine, rest) = std::mem::take(&mut c.rewinds)
                .into_iter()
                .partition(|(tp, _)| assigned.contains(tp));
            c.rewinds = rest;
            mine
        };
        let mut cur = s.current.lock().unwrap_or_else(|p| p.into_inner());
        for (tp, offset) in starts {
            if let Err(e) =
                tpl.set_partition_offset(&tp.topic, tp.partition, Offset::Offset(offset))
            {
                s.fail(ConnectError::fatal(format!(
                    "bad offset {offset} for {tp:?}: {e}"
                )));
                return;
            }
            cur.insert(tp, offset);
        }
    }
}

/// Runs a sink task on the current (blocking) thread until `run.cancel` fires or it fails.
/// Always ends with the task closed and stopped and its status reported.
pub fn run_sink_task(run: SinkTaskRun, task: Box<dyn SinkTask>, rt: Handle) {
    let id = run.id.clone();
    let status = run.status.clone();
    let shared = Arc::new(Shared {
        id: id.clone(),
        rt,
        task: Mutex::new(task),
        current: Mutex::new(SinkOffsets::new()),
        control: Arc::new(Control::default()),
        failure: Mutex::new(None),
        reporter: Arc::new(SinkErrantRecordReporter::new(
            run.errors.clone(),
            run.converters.clone(),
        )),
        metrics: metrics::global().task(&id),
    });
    let outcome = execute(&run, &shared);
    if let Err(e) = shared.with_task(async |t| t.stop().await) {
        tracing::warn!(task = %id, error = %e, "sink task stop failed");
    }
    let stopping = run.cancel.is_cancelled();
    super::report_end(&id, "sink task", status.as_ref(), stopping, outcome);
}

fn execute(run: &SinkTaskRun, shared: &Arc<Shared>) -> Result<(), ConnectError> {
    let mut cfg = run.consumer_config.clone();
    // [`sink_consumer_config`] sets the group; a run built by hand gets the same default.
    if cfg.get("group.id").is_none() {
        cfg.set("group.id", default_sink_group_id(&run.id.connector));
    }
    // Connect's sink consumers start from the beginning of a partition the group has no
    // offset for, unless the worker's `consumer.auto.offset.reset` or the connector's
    // `consumer.override.auto.offset.reset` says otherwise (`none` arrives as `error`).
    if cfg.get(AUTO_OFFSET_RESET).is_none() {
        cfg.set(AUTO_OFFSET_RESET, DEFAULT_AUTO_OFFSET_RESET);
    }
    cfg.set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("client.id", format!("connector-consumer-{}", run.id));
    let consumer: BaseConsumer<SinkContext> = cfg
        .create_with_context(SinkContext {
            shared: shared.clone(),
        })
        .map_err(|e| {
            ConnectError::fatal(format!(
                "failed to create consumer for task {}: {e}",
                run.id
            ))
        })?;

    let ctx = SinkTaskContext::new(
        run.id.connector.clone(),
        run.id.task as u32,
        shared.control.clone(),
        Arc::new(TokioTimer),
        run.cancel.clone(),
    )
    .with_errant_record_reporter(shared.reporter.clone())
    .with_file_access(run.file_access.clone());
    let config = run.task_config.clone();
    shared.with_task(async |t| t.start(ctx, config).await)?;

    let subscription: Vec<String> = match &run.connector_config.topics_regex {
        // librdkafka treats a subscription starting with ^ as a regular expression.
        Some(re) => vec![if re.starts_with('^') {
            re.clone()
        } else {
            format!("^{re}")
        }],
        None => run.connector_config.topics.clone(),
    };
    let refs: Vec<&str> = subscription.iter().map(String::as_str).collect();
    consumer.subscribe(&refs).map_err(|e| {
        ConnectError::fatal(format!("failed to subscribe to {subscription:?}: {e}"))
    })?;
    run.status.on_running(&run.id);
    tracing::info!(task = %run.id, topics = ?subscription, "sink task started");

    let result = poll_loop(run, shared, &consumer);
    // Commit what the task made durable and close its partitions before leaving the group.
    let assigned: BTreeSet<TopicPartition> = shared.control.lock().assignment.clone();
    if result.is_ok()
        && let Err(e) = shared.commit(&consumer, None)
    {
        tracing::warn!(task = %run.id, error = %e, "final offset commit failed");
    }
    let list: Vec<_> = assigned.into_iter().collect();
    if let Err(e) = shared.with_task(async |t| t.close(&list).await) {
        tracing::warn!(task = %run.id, error = %e, "sink task close failed");
    }
    consumer.unsubscribe();
    result
}

fn poll_loop(
    run: &SinkTaskRun,
    shared: &Arc<Shared>,
    consumer: &BaseConsumer<SinkContext>,
) -> Result<(), ConnectError> {
    let mut next_commit = Instant::now() + run.offset_commit_interval;
    let mut paused = false;
    let mut topics = ActiveTopics::new(run.id.clone(), run.status.clone());
    let mut next_lag = Instant::now();
    while !run.cancel.is_cancelled() {
        if Instant::now() >= next_lag {
            report_lag(shared, consumer);
            next_lag = Instant::now() + LAG_INTERVAL;
        }
        if let Some(e) = shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            return Err(e);
        }
        apply_requests(run, shared, consumer, paused)?;

        let want_pause = *run.paused.borrow();
        if want_pause != paused {
            set_all_paused(consumer, want_pause)?;
            paused = want_pause;
            if paused {
                shared.commit(consumer, None)?;
                run.status.on_paused(&run.id);
            } else {
                run.status.on_running(&run.id);
            }
        }

        let commit_requested = std::mem::take(&mut shared.control.lock().commit);
        if commit_requested || Instant::now() >= next_commit {
            if let Err(e) = shared.commit(consumer, None) {
                // Connect logs failed periodic commits and tries again at the next interval.
                tracing::warn!(task = %run.id, error = %e, "offset commit failed; will retry");
            }
            next_commit = Instant::now() + run.offset_commit_interval;
        }

        let (batch, raws) = poll_batch(run, shared, consumer)?;
        // Tolerated records are consumed too: their offsets advance with the batch.
        let next: Vec<(TopicPartition, i64)> = raws
            .iter()
            .map(|r| {
                (
                    TopicPartition::new(r.topic.clone(), r.partition),
                    r.offset + 1,
                )
            })
            .collect();
        if next.is_empty() {
            continue;
        }
        shared.metrics.read(raws.len());
        if !batch.is_empty() {
            shared.reporter.set_batch(raws);
            let (records, started) = (batch.len(), std::time::Instant::now());
            put_with_retries(run, shared, batch)?;
            shared.metrics.put(records, started.elapsed());
            shared.metrics.batch(records);
        }
        for (tp, _) in &next {
            topics.record(&tp.topic);
        }
        let mut cur = shared.current.lock().unwrap_or_else(|p| p.into_inner());
        let owned = shared.control.lock().assignment.clone();
        for (tp, offset) in next {
            // A partition revoked during this poll is no longer ours to track.
            if owned.contains(&tp) {
                cur.insert(tp, offset);
            }
        }
    }
    Ok(())
}

/// How often a sink task asks for the end offsets of its partitions, for the lag metrics.
const LAG_INTERVAL: Duration = Duration::from_secs(5);

/// Sets the lag metrics: for each partition the task owns and has put records of, the end of
/// the partition (one `ListOffsets` round for all of them; the last stable offset under
/// `read_committed`) minus the task's position (the offset after the last record handed to
/// `put`). A failed lookup leaves the previous values.
fn report_lag(shared: &Shared, consumer: &BaseConsumer<SinkContext>) {
    let current = shared
        .current
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if current.is_empty() {
        return;
    }
    let mut tpl = TopicPartitionList::new();
    for tp in current.keys() {
        if tpl
            .add_partition_offset(&tp.topic, tp.partition, Offset::End)
            .is_err()
        {
            return;
        }
    }
    let Ok(ends) = consumer.offsets_for_times(tpl, Duration::from_secs(2)) else {
        return;
    };
    let lags: Vec<_> = current
        .iter()
        .filter_map(
            |(tp, position)| match ends.find_partition(&tp.topic, tp.partition)?.offset() {
                Offset::Offset(end) => {
                    Some((tp.topic.clone(), tp.partition, (end - position).max(0)))
                }
                _ => None,
            },
        )
        .collect();
    shared.metrics.lag(&lags);
}

/// Polls up to `max.poll.records` records: blocks for the first, then takes what is already there.
/// Returns the converted records and the consumed bytes of every polled record (converted or
/// tolerated), in order.
fn poll_batch(
    run: &SinkTaskRun,
    shared: &Arc<Shared>,
    consumer: &BaseConsumer<SinkContext>,
) -> Result<(Vec<SinkRecord>, Vec<RawRecord>), ConnectError> {
    let mut batch = Vec::new();
    let mut raws = Vec::new();
    let mut timeout = POLL_TIMEOUT;
    let mut epoch = shared.control.lock().epoch;
    while raws.len() < run.max_poll_records {
        match consumer.poll(timeout) {
            None => break,
            Some(Err(e)) if classify(&e) == ConsumerErrorAction::UndefinedOffset => {
                // `auto.offset.reset=none`: Java's consumer throws NoOffsetForPartitionException
                // (or OffsetOutOfRangeException) from poll, which fails the task.
                let assigned = shared.control.lock().assignment.clone();
                return Err(ConnectError::fatal(format!(
                    "Undefined offset with no reset policy (auto.offset.reset=none) for a partition \
                     of task {} (assigned: {}): the consumer group has no committed offset for it, \
                     or that offset is out of range: {e}",
                    run.id,
                    assigned
                        .iter()
                        .map(|tp| format!("{}-{}", tp.topic, tp.partition))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Some(Err(e)) if classify(&e) == ConsumerErrorAction::Fail => {
                return Err(ConnectError::fatal(format!(
                    "The consumer of task {} cannot get past an error: {e}",
                    run.id
                )));
            }
            Some(Err(e)) => {
                tracing::warn!(task = %run.id, error = %e, "consumer error");
                break;
            }
            Some(Ok(msg)) => {
                let tp = TopicPartition::new(msg.topic(), msg.partition());
                let now = shared.control.lock().epoch;
                if now != epoch {
                    // A rebalance ran inside this poll: what was collected before it may
                    // belong to partitions that moved, or restart from another offset. This
                    // message was fetched after it and is current.
                    (batch, raws) = retain_current(shared, batch, raws, epoch);
                    epoch = now;
                }
                {
                    let c = shared.control.lock();
                    // Not ours (anymore), or about to be rewound: the record comes again.
                    if !c.assignment.contains(&tp) || c.rewinds.iter().any(|(r, _)| *r == tp) {
                        timeout = Duration::ZERO;
                        continue;
                    }
                }
                let raw = raw_record(&msg);
                let outcome = match convert(run, &msg) {
                    Err((stage, e)) => Err((stage, None, e)),
                    Ok(record) => run
                        .transforms
                        .apply_sink(record)
                        .map_err(|t| (Stage::Transformation, Some(t.class), t.error)),
                };
                match outcome {
                    Ok(Some(record)) => batch.push(record),
                    // Dropped by a transform: consumed (its offset commits) but never put.
                    Ok(None) => {}
                    Err((stage, class, e)) => {
                        let errors = run.errors.clone();
                        let r = raw.clone();
                        shared.rt.block_on(async move {
                            match class {
                                Some(c) => errors.handle_in(&r, stage, &c, e).await,
                                None => errors.handle(&r, stage, e).await,
                            }
                        })?;
                    }
                }
                raws.push(raw);
            }
        }
        timeout = Duration::ZERO;
    }
    if shared.control.lock().epoch != epoch {
        (batch, raws) = retain_current(shared, batch, raws, epoch);
    }
    Ok((batch, raws))
}

/// Of a batch polled since `epoch`, the records whose partition is still assigned and was not
/// reassigned after `epoch` (a reassigned partition starts again from its new offset).
fn retain_current(
    shared: &Shared,
    batch: Vec<SinkRecord>,
    raws: Vec<RawRecord>,
    epoch: u64,
) -> (Vec<SinkRecord>, Vec<RawRecord>) {
    let c = shared.control.lock();
    let current = |tp: &TopicPartition| c.assigned_at.get(tp).is_some_and(|at| *at <= epoch);
    let batch: Vec<_> = batch
        .into_iter()
        .filter(|r| current(&r.original_topic_partition()))
        .collect();
    let raws = raws
        .into_iter()
        .filter(|r| current(&TopicPartition::new(r.topic.clone(), r.partition)))
        .collect();
    (batch, raws)
}

fn raw_record(msg: &BorrowedMessage<'_>) -> RawRecord {
    RawRecord {
        topic: msg.topic().to_owned(),
        partition: msg.partition(),
        offset: msg.offset(),
        timestamp: msg.timestamp().to_millis(),
        key: msg.key().map(<[u8]>::to_vec),
        value: msg.payload().map(<[u8]>::to_vec),
        headers: msg
            .headers()
            .map(|hs| {
                hs.iter()
                    .map(|h| (h.key.to_owned(), h.value.map(<[u8]>::to_vec)))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Converts one consumed record; a failure names the stage it happened in.
fn convert(
    run: &SinkTaskRun,
    msg: &BorrowedMessage<'_>,
) -> Result<SinkRecord, (Stage, ConnectError)> {
    let topic = msg.topic();
    {
        let key = run
            .converters
            .key_from_bytes(topic, msg.key())
            .map_err(|e| (Stage::KeyConverter, conversion_error("key", topic, e)))?;
        let value = run
            .converters
            .value_from_bytes(topic, msg.payload())
            .map_err(|e| (Stage::ValueConverter, conversion_error("value", topic, e)))?;
        let headers = match msg.headers() {
            None => Default::default(),
            Some(hs) => run
                .converters
                .headers_from_bytes(topic, hs.iter().map(|h| (h.key, h.value)))
                .map_err(|e| {
                    (
                        Stage::HeaderConverter,
                        conversion_error("headers", topic, e),
                    )
                })?,
        };
        let mut record = SinkRecord::new(
            topic,
            msg.partition(),
            msg.offset(),
            key.schema,
            key.value,
            value.schema,
            value.value,
        );
        record.headers = headers;
        match msg.timestamp() {
            rdkafka::Timestamp::CreateTime(t) => {
                record = record.with_timestamp(t, TimestampType::CreateTime)
            }
            rdkafka::Timestamp::LogAppendTime(t) => {
                record = record.with_timestamp(t, TimestampType::LogAppendTime)
            }
            rdkafka::Timestamp::NotAvailable => {}
        }
        Ok(record)
    }
}

fn put_with_retries(
    run: &SinkTaskRun,
    shared: &Arc<Shared>,
    batch: Vec<SinkRecord>,
) -> Result<(), ConnectError> {
    let retry_timeout = run.connector_config.common.errors_retry_timeout_ms;
    let started = Instant::now();
    let mut backoff = Duration::from_millis(100);
    loop {
        let records = batch.clone();
        match shared.with_task(async |t| t.put(records).await) {
            Ok(()) => return Ok(()),
            Err(e) if e.is_retriable() && !run.cancel.is_cancelled() => {
                let elapsed = started.elapsed().as_millis() as i64;
                // Connect's RetriableException from put is retried until the task stops; we
                // bound it by errors.retry.timeout when that is set (-1 = forever).
                if retry_timeout > 0 && elapsed > retry_timeout {
                    return Err(e);
                }
                shared.metrics.errors.retry();
                let wait = shared.control.lock().timeout.take().unwrap_or(backoff);
                tracing::warn!(task = %run.id, error = %e, wait = ?wait, "retriable put error; redelivering the batch");
                std::thread::sleep(wait);
                backoff = (backoff * 2).min(
                    run.connector_config
                        .common
                        .errors_retry_max_delay
                        .max(Duration::from_millis(100)),
                );
            }
            Err(e) => return Err(e),
        }
    }
}

fn tpl_of(partitions: &[TopicPartition]) -> TopicPartitionList {
    let mut tpl = TopicPartitionList::new();
    for tp in partitions {
        tpl.add_partition(&tp.topic, tp.partition);
    }
    tpl
}

fn set_all_paused(consumer: &BaseConsumer<SinkContext>, pause: bool) -> Result<(), ConnectError> {
    let assignment = consumer
        .assignment()
        .map_err(|e| ConnectError::retriable(format!("failed to read assignment: {e}")))?;
    let r = if pause {
        consumer.pause(&assignment)
    } else {
        consumer.resume(&assignment)
    };
    r.map_err(|e| ConnectError::retriable(format!("failed to pause/resume partitions: {e}")))
}

fn apply_requests(
    run: &SinkTaskRun,
    shared: &Arc<Shared>,
    consumer: &BaseConsumer<SinkContext>,
    all_paused: bool,
) -> Result<(), ConnectError> {
    let (rewinds, pauses, resumes) = {
        let mut r = shared.control.lock();
        (
            std::mem::take(&mut r.rewinds),
            std::mem::take(&mut r.pauses),
            std::mem::take(&mut r.resumes),
        )
    };
    let mut failed = Vec::new();
    for (tp, offset) in rewinds {
        if !shared.control.lock().assignment.contains(&tp) {
            continue;
        }
        if let Err(e) = consumer.seek(
            &tp.topic,
            tp.partition,
            Offset::Offset(offset),
            Duration::from_secs(10),
        ) {
            // Kept pending: records of a partition with a pending rewind are not delivered
            // (see `poll_batch`), and the seek is tried again before the next poll.
            tracing::warn!(task = %run.id, partition = ?tp, offset, error = %e, "rewind failed; will retry");
            failed.push((tp, offset));
            continue;
        }
        shared
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tp, offset);
    }
    if !failed.is_empty() {
        let mut c = shared.control.lock();
        failed.append(&mut c.rewinds);
        c.rewinds = failed;
    }
    if !pauses.is_empty() {
        consumer
            .pause(&tpl_of(&pauses))
            .map_err(|e| ConnectError::retriable(e.to_string()))?;
    }
    // While the connector is PAUSED, the task's own resumes wait for the connector to resume.
    if !resumes.is_empty() && !all_paused {
        consumer
            .resume(&tpl_of(&resumes))
            .map_err(|e| ConnectError::retriable(e.to_string()))?;
    }
    Ok(())
}
