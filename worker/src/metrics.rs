//! The worker's metrics, served by `GET /metrics` in the OpenMetrics text format that
//! Prometheus scrapes.
//!
//! Names follow Apache Connect's metric groups as the Prometheus JMX exporter rules of common
//! Connect deployments (Strimzi's `kafka-connect-metrics` config) name them:
//! `kafka_connect_<group without "-metrics">_<metric>`, dashes as underscores, with `connector`
//! and `task` labels. For example `connector-task-metrics` `status` becomes
//! `kafka_connect_connector_task_status{connector,task,status="running"} 1`, and
//! `source-task-metrics` `source-record-poll-total` becomes
//! `kafka_connect_source_task_source_record_poll_total{connector,task}`.
//!
//! Apache's `-rate` metrics are not exported: Prometheus derives them from the `_total`
//! counters (`rate(...[1m])`), which is what the dashboards do with the exporter's values too.
//!
//! One registry per process ([`global`]): a worker process is one worker. Task runners take a
//! [`TaskMetrics`] handle (atomic counters, no lock per record); a task's series are removed
//! when the task leaves the worker, so a scrape shows what runs here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::task_id::ConnectorTaskId;

type Labels = Vec<(String, String)>;

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The states Apache reports (`AbstractStatus.State`), lower-case as its `status` metric.
const STATES: [&str; 6] = [
    "unassigned",
    "running",
    "paused",
    "failed",
    "restarting",
    "stopped",
];

fn connector_labels(connector: &str) -> Labels {
    vec![("connector".into(), connector.into())]
}

fn task_labels(id: &ConnectorTaskId) -> Labels {
    vec![
        ("connector".into(), id.connector.clone()),
        ("task".into(), id.task.to_string()),
    ]
}

fn with_status(mut labels: Labels, status: &str) -> Labels {
    labels.push(("status".into(), status.into()));
    labels
}

/// Every metric family of the worker.
pub struct Metrics {
    registry: Registry,
    // connect-worker-metrics
    connector_count: Gauge,
    task_count: Gauge,
    connector_startup_attempts: Counter,
    connector_startup_success: Counter,
    connector_startup_failure: Counter,
    task_startup_attempts: Counter,
    task_startup_success: Counter,
    task_startup_failure: Counter,
    /// `connector-<state>-task-count` and `connector-total-task-count`, by connector.
    connector_task_counts: BTreeMap<&'static str, Family<Labels, Gauge>>,
    // connect-worker-rebalance-metrics
    rebalancing: Gauge,
    completed_rebalances: Counter,
    epoch: Gauge,
    time_since_last_rebalance: Gauge,
    rebalance_avg_time: Gauge<f64, AtomicU64>,
    rebalance_max_time: Gauge,
    leader: Family<Labels, Gauge>,
    // connector-metrics, connector-task-metrics
    connector_status: Family<Labels, Gauge>,
    connector_info: Family<Labels, Gauge>,
    fencing_rounds: Family<Labels, Counter>,
    fenced_tasks: Family<Labels, Counter>,
    // Self-healing (ours).
    automatic_restarts: Counter,
    stuck_transactions_aborted: Counter,
    foreign_transactions_reported: Counter,
    task_status: Family<Labels, Gauge>,
    running_ratio: Family<Labels, Gauge<f64, AtomicU64>>,
    pause_ratio: Family<Labels, Gauge<f64, AtomicU64>>,
    task: TaskFamilies,
    /// The last state reported of each connector and task on this worker.
    states: Mutex<States>,
}

#[derive(Default)]
struct States {
    connectors: BTreeMap<String, &'static str>,
    connector_info: BTreeMap<String, Labels>,
    tasks: BTreeMap<ConnectorTaskId, &'static str>,
    /// Time in each state of the tasks on this worker, for the running and pause ratios.
    task_times: BTreeMap<ConnectorTaskId, StateTimes>,
    /// The per-partition lag series of each task, removed with the task.
    lag_series: BTreeMap<ConnectorTaskId, Arc<Mutex<Vec<Labels>>>>,
    rebalance: Rebalances,
}

#[derive(Default)]
struct Rebalances {
    started: Option<Instant>,
    completed_at: Option<Instant>,
    count: u64,
    total: Duration,
    leader: Option<Labels>,
}

/// Since when a task has been on this worker and how long it was running and paused.
struct StateTimes {
    since: Instant,
    state: &'static str,
    entered: Instant,
    running: Duration,
    paused: Duration,
}

impl StateTimes {
    fn new(state: &'static str, now: Instant) -> Self {
        StateTimes {
            since: now,
            state,
            entered: now,
            running: Duration::ZERO,
            paused: Duration::ZERO,
        }
    }

    fn enter(&mut self, state: &'static str, now: Instant) {
        let spent = now - self.entered;
        match self.state {
            "running" => self.running += spent,
            "paused" => self.paused += spent,
            _ => {}
        }
        self.state = state;
        self.entered = now;
    }

    /// (running, paused) fractions of the task's time here, up to `now`.
    fn ratios(&self, now: Instant) -> (f64, f64) {
        let mut t = StateTimes { ..*self };
        t.enter(self.state, now);
        let total = (now - self.since).as_secs_f64();
        if total <= 0.0 {
            return (0.0, 0.0);
        }
        (
            t.running.as_secs_f64() / total,
            t.paused.as_secs_f64() / total,
        )
    }
}

#[derive(Default)]
struct TaskFamilies {
    // connector-task-metrics
    batch_size_max: Family<Labels, Gauge>,
    batch_size_avg: Family<Labels, Gauge<f64, AtomicU64>>,
    commit_success_pct: Family<Labels, Gauge<f64, AtomicU64>>,
    commit_failure_pct: Family<Labels, Gauge<f64, AtomicU64>>,
    commit_avg_time: Family<Labels, Gauge<f64, AtomicU64>>,
    commit_max_time: Family<Labels, Gauge>,
    // source-task-metrics
    poll_total: Family<Labels, Counter>,
    write_total: Family<Labels, Counter>,
    source_active: Family<Labels, Gauge>,
    poll_batch_max: Family<Labels, Gauge>,
    // exactly-once (KIP-618's transaction sizes, and ours)
    txn_size_min: Family<Labels, Gauge>,
    txn_size_max: Family<Labels, Gauge>,
    txn_size_avg: Family<Labels, Gauge<f64, AtomicU64>>,
    txn_committed: Family<Labels, Counter>,
    txn_aborted: Family<Labels, Counter>,
    txn_commit_seconds: HistogramFamily,
    // sink-task-metrics
    read_total: Family<Labels, Counter>,
    send_total: Family<Labels, Counter>,
    sink_active: Family<Labels, Gauge>,
    partition_count: Family<Labels, Gauge>,
    put_batch_max: Family<Labels, Gauge>,
    commit_completion: Family<Labels, Counter>,
    commit_skip: Family<Labels, Counter>,
    lag_max: Family<Labels, Gauge>,
    /// Per partition: `connector`, `task`, `topic`, `partition` labels.
    record_lag: Family<Labels, Gauge>,
    // task-error-metrics
    record_errors: Family<Labels, Gauge>,
    record_failures: Family<Labels, Gauge>,
    records_skipped: Family<Labels, Gauge>,
    retries: Family<Labels, Gauge>,
    errors_logged: Family<Labels, Gauge>,
    dlq_requests: Family<Labels, Gauge>,
    dlq_failures: Family<Labels, Gauge>,
    last_error_timestamp: Family<Labels, Gauge>,
}

/// A histogram family with [`commit_histogram`]'s buckets.
#[derive(Clone)]
struct HistogramFamily(Family<Labels, Histogram, fn() -> Histogram>);

impl Default for HistogramFamily {
    fn default() -> Self {
        HistogramFamily(Family::new_with_constructor(commit_histogram))
    }
}

impl std::ops::Deref for HistogramFamily {
    type Target = Family<Labels, Histogram, fn() -> Histogram>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

fn commit_histogram() -> Histogram {
    // 1 ms .. ~16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kafka_connect");
        let task = TaskFamilies::default();
        let m = Metrics {
            connector_count: Gauge::default(),
            task_count: Gauge::default(),
            connector_startup_attempts: Counter::default(),
            connector_startup_success: Counter::default(),
            connector_startup_failure: Counter::default(),
            task_startup_attempts: Counter::default(),
            task_startup_success: Counter::default(),
            task_startup_failure: Counter::default(),
            connector_task_counts: STATES
                .iter()
                .copied()
                .chain(["total"])
                .map(|s| (s, Family::default()))
                .collect(),
            rebalancing: Gauge::default(),
            completed_rebalances: Counter::default(),
            epoch: Gauge::default(),
            time_since_last_rebalance: Gauge::default(),
            rebalance_avg_time: Gauge::default(),
            rebalance_max_time: Gauge::default(),
            leader: Family::default(),
            connector_status: Family::default(),
            connector_info: Family::default(),
            fencing_rounds: Family::default(),
            fenced_tasks: Family::default(),
            automatic_restarts: Counter::default(),
            stuck_transactions_aborted: Counter::default(),
            foreign_transactions_reported: Counter::default(),
            task_status: Family::default(),
            running_ratio: Family::default(),
            pause_ratio: Family::default(),
            task,
            states: Mutex::default(),
            registry: Registry::default(),
        };
        {
            let w = registry.sub_registry_with_prefix("worker");
            w.register(
                "connector_count",
                "connectors run by this worker",
                m.connector_count.clone(),
            );
            w.register(
                "task_count",
                "tasks run by this worker",
                m.task_count.clone(),
            );
            w.register(
                "automatic_restarts",
                "failed connectors and tasks this worker restarted by itself (ours, auto.restart.*)",
                m.automatic_restarts.clone(),
            );
            w.register(
                "stuck_transactions_aborted",
                "stuck transactions of this cluster's ids (config writer, tasks the group no longer runs) this worker aborted by fencing (ours, stuck.transaction.timeout.ms)",
                m.stuck_transactions_aborted.clone(),
            );
            w.register(
                "foreign_transactions_reported",
                "transactions of other ids found open longer than stuck.transaction.timeout.ms on topics this cluster uses, reported and left alone (ours)",
                m.foreign_transactions_reported.clone(),
            );
            for (name, c) in [
                ("connector_startup_attempts", &m.connector_startup_attempts),
                ("connector_startup_success", &m.connector_startup_success),
                ("connector_startup_failure", &m.connector_startup_failure),
                ("task_startup_attempts", &m.task_startup_attempts),
                ("task_startup_success", &m.task_startup_success),
                ("task_startup_failure", &m.task_startup_failure),
            ] {
                w.register(name, name.replace('_', " "), c.clone());
            }
            for (state, family) in &m.connector_task_counts {
                w.register(
                    format!("connector_{state}_task_count"),
                    format!("tasks of the connector in state {state} on this worker"),
                    family.clone(),
                );
            }
        }
        {
            let r = registry.sub_registry_with_prefix("worker_rebalance");
            r.register(
                "rebalancing",
                "1 while this worker is rebalancing",
                m.rebalancing.clone(),
            );
            r.register(
                "completed_rebalances",
                "rebalances completed by this worker",
                m.completed_rebalances.clone(),
            );
            r.register(
                "epoch",
                "the group generation of the last assignment",
                m.epoch.clone(),
            );
            r.register(
                "time_since_last_rebalance_ms",
                "ms since the last rebalance completed (-1 before the first)",
                m.time_since_last_rebalance.clone(),
            );
            r.register(
                "rebalance_avg_time_ms",
                "mean time of the rebalances, in ms",
                m.rebalance_avg_time.clone(),
            );
            r.register(
                "rebalance_max_time_ms",
                "longest rebalance, in ms",
                m.rebalance_max_time.clone(),
            );
            r.register(
                "leader_info",
                "1, labelled with the leader's URL (leader_name)",
                m.leader.clone(),
            );
        }
        let c = registry.sub_registry_with_prefix("connector");
        c.register(
            "status",
            "1 for the connector's current state",
            m.connector_status.clone(),
        );
        c.register(
            "info",
            "1, labelled with the connector's class, type and version",
            m.connector_info.clone(),
        );
        c.register(
            "fencing_rounds",
            "zombie-fencing rounds this worker ran as leader for the connector (ours)",
            m.fencing_rounds.clone(),
        );
        c.register(
            "fenced_tasks",
            "transactional ids of earlier task generations fenced by this worker (ours)",
            m.fenced_tasks.clone(),
        );
        c.register(
            "task_status",
            "1 for the task's current state",
            m.task_status.clone(),
        );
        c.register(
            "task_running_ratio",
            "fraction of its time on this worker the task was running",
            m.running_ratio.clone(),
        );
        c.register(
            "task_pause_ratio",
            "fraction of its time on this worker the task was paused",
            m.pause_ratio.clone(),
        );
        let t = &m.task;
        {
            let s = registry.sub_registry_with_prefix("connector_task");
            s.register(
                "batch_size_max",
                "most records in a batch (a poll's or a put's)",
                t.batch_size_max.clone(),
            );
            s.register(
                "batch_size_avg",
                "mean records per batch",
                t.batch_size_avg.clone(),
            );
            for (name, help, f) in [
                (
                    "offset_commit_success_percentage",
                    "fraction of offset commits that succeeded",
                    &t.commit_success_pct,
                ),
                (
                    "offset_commit_failure_percentage",
                    "fraction of offset commits that failed",
                    &t.commit_failure_pct,
                ),
                (
                    "offset_commit_avg_time_ms",
                    "mean time of an offset commit (or transaction commit), in ms",
                    &t.commit_avg_time,
                ),
            ] {
                s.register(name, help, f.clone());
            }
            s.register(
                "offset_commit_max_time_ms",
                "longest offset commit (or transaction commit), in ms",
                t.commit_max_time.clone(),
            );
        }
        {
            let s = registry.sub_registry_with_prefix("source_task");
            s.register(
                "source_record_poll",
                "records returned by poll, before transforms",
                t.poll_total.clone(),
            );
            s.register(
                "source_record_write",
                "records written to Kafka (acknowledged), after transforms",
                t.write_total.clone(),
            );
            s.register(
                "source_record_active_count",
                "records polled but not yet acknowledged",
                t.source_active.clone(),
            );
            s.register(
                "poll_batch_max_time_ms",
                "longest poll batch so far, in ms",
                t.poll_batch_max.clone(),
            );
            s.register(
                "transaction_size_min",
                "fewest records in a committed transaction",
                t.txn_size_min.clone(),
            );
            s.register(
                "transaction_size_max",
                "most records in a committed transaction",
                t.txn_size_max.clone(),
            );
            s.register(
                "transaction_size_avg",
                "mean records per committed transaction",
                t.txn_size_avg.clone(),
            );
            s.register(
                "transactions_committed",
                "transactions committed (ours)",
                t.txn_committed.clone(),
            );
            s.register(
                "transactions_aborted",
                "transactions aborted (ours)",
                t.txn_aborted.clone(),
            );
            s.register(
                "transaction_commit_seconds",
                "time of commitTransaction (ours)",
                t.txn_commit_seconds.0.clone(),
            );
        }
        {
            let s = registry.sub_registry_with_prefix("sink_task");
            s.register(
                "sink_record_read",
                "records read from Kafka, before transforms",
                t.read_total.clone(),
            );
            s.register(
                "sink_record_send",
                "records handed to put, after transforms",
                t.send_total.clone(),
            );
            s.register(
                "sink_record_active_count",
                "records read but not yet committed",
                t.sink_active.clone(),
            );
            s.register(
                "partition_count",
                "topic partitions assigned to the task",
                t.partition_count.clone(),
            );
            s.register(
                "put_batch_max_time_ms",
                "longest put so far, in ms",
                t.put_batch_max.clone(),
            );
            s.register(
                "offset_commit_completion",
                "offset commits that completed",
                t.commit_completion.clone(),
            );
            s.register(
                "offset_commit_skip",
                "offset commits skipped (nothing new, or one still in progress)",
                t.commit_skip.clone(),
            );
            s.register(
                "sink_record_lag_max",
                "records the task is behind the end of its most lagging partition",
                t.lag_max.clone(),
            );
            s.register(
                "record_lag",
                "records between the task's position and the end of the partition (ours)",
                t.record_lag.clone(),
            );
        }
        {
            let s = registry.sub_registry_with_prefix("task_error");
            for (name, help, f) in [
                (
                    "total_record_errors",
                    "records that met an error",
                    &t.record_errors,
                ),
                (
                    "total_record_failures",
                    "failed attempts at a record operation",
                    &t.record_failures,
                ),
                (
                    "total_records_skipped",
                    "records skipped after an error (errors.tolerance=all)",
                    &t.records_skipped,
                ),
                ("total_retries", "retried operations", &t.retries),
                ("total_errors_logged", "errors logged", &t.errors_logged),
                (
                    "deadletterqueue_produce_requests",
                    "records sent to the dead-letter queue",
                    &t.dlq_requests,
                ),
                (
                    "deadletterqueue_produce_failures",
                    "dead-letter queue writes that failed",
                    &t.dlq_failures,
                ),
                (
                    "last_error_timestamp",
                    "epoch ms of the last error",
                    &t.last_error_timestamp,
                ),
            ] {
                s.register(name, help, f.clone());
            }
        }
        Metrics { registry, ..m }
    }

    /// The whole registry in the OpenMetrics text format. Values that depend on the time of
    /// the scrape (time since the last rebalance, running and pause ratios) are set first.
    pub fn encode(&self) -> String {
        {
            let states = self.states.lock().expect("metrics lock");
            let now = Instant::now();
            self.time_since_last_rebalance.set(
                states
                    .rebalance
                    .completed_at
                    .map_or(-1, |at| millis(now - at)),
            );
            for (id, times) in &states.task_times {
                let (running, paused) = times.ratios(now);
                let l = task_labels(id);
                self.running_ratio.get_or_create(&l).set(running);
                self.pause_ratio.get_or_create(&l).set(paused);
            }
        }
        let mut out = String::new();
        encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }

    pub fn connector_starting(&self) {
        self.connector_startup_attempts.inc();
    }

    pub fn connector_started(&self, ok: bool) {
        if ok {
            self.connector_startup_success.inc();
        } else {
            self.connector_startup_failure.inc();
        }
    }

    pub fn task_starting(&self) {
        self.task_startup_attempts.inc();
    }

    pub fn task_started(&self, ok: bool) {
        if ok {
            self.task_startup_success.inc();
        } else {
            self.task_startup_failure.inc();
        }
    }

    /// A rebalance began.
    pub fn rebalance_started(&self) {
        let mut states = self.states.lock().expect("metrics lock");
        states.rebalance.started.get_or_insert_with(Instant::now);
        self.rebalancing.set(1);
    }

    /// An assignment of `generation` was applied; `leader` is the leader's URL.
    pub fn rebalance_completed(&self, generation: i32, leader: &str) {
        let mut states = self.states.lock().expect("metrics lock");
        let now = Instant::now();
        let r = &mut states.rebalance;
        if let Some(started) = r.started.take() {
            let took = now - started;
            r.count += 1;
            r.total += took;
            self.rebalance_avg_time
                .set(r.total.as_secs_f64() * 1000.0 / r.count as f64);
            self.rebalance_max_time
                .inner()
                .fetch_max(millis(took), Ordering::Relaxed);
            self.completed_rebalances.inc();
        }
        r.completed_at = Some(now);
        self.rebalancing.set(0);
        self.epoch.set(i64::from(generation));
        let labels = vec![("leader_name".to_owned(), leader.to_owned())];
        if r.leader.as_ref() != Some(&labels) {
            if let Some(old) = r.leader.take() {
                self.leader.remove(&old);
            }
            self.leader.get_or_create(&labels).set(1);
            r.leader = Some(labels);
        }
    }

    /// The leader fenced `tasks` transactional ids of `connector`'s previous generation.
    /// A failed connector or task was restarted by `auto.restart.*`.
    pub fn automatic_restart(&self) {
        self.automatic_restarts.inc();
    }

    /// A stuck transaction of one of the cluster's ids was aborted by fencing it.
    pub fn stuck_transaction_aborted(&self) {
        self.stuck_transactions_aborted.inc();
    }

    /// A foreign transaction open on a topic the cluster uses was reported (and left alone).
    pub fn stuck_transaction_reported(&self) {
        self.foreign_transactions_reported.inc();
    }

    pub fn fencing_round(&self, connector: &str, tasks: usize) {
        let l = connector_labels(connector);
        self.fencing_rounds.get_or_create(&l).inc();
        self.fenced_tasks.get_or_create(&l).inc_by(tasks as u64);
    }

    /// The class, type (`source`/`sink`) and version of a connector this worker started.
    pub fn connector_info(&self, connector: &str, class: &str, kind: &str, version: &str) {
        let mut states = self.states.lock().expect("metrics lock");
        let mut labels = connector_labels(connector);
        labels.extend([
            ("connector_class".to_owned(), class.to_owned()),
            ("connector_type".to_owned(), kind.to_owned()),
            ("connector_version".to_owned(), version.to_owned()),
        ]);
        if let Some(old) = states
            .connector_info
            .insert(connector.to_owned(), labels.clone())
        {
            self.connector_info.remove(&old);
        }
        self.connector_info.get_or_create(&labels).set(1);
    }

    /// A connector's new state on this worker; `None` when it left the worker.
    pub fn connector_state(&self, connector: &str, state: Option<&'static str>) {
        let mut states = self.states.lock().expect("metrics lock");
        let labels = connector_labels(connector);
        if let Some(old) = states.connectors.remove(connector) {
            self.connector_status
                .remove(&with_status(labels.clone(), old));
        }
        if state.is_none()
            && let Some(info) = states.connector_info.remove(connector)
        {
            self.connector_info.remove(&info);
        }
        if let Some(new) = state {
            states.connectors.insert(connector.to_owned(), new);
            self.connector_status
                .get_or_create(&with_status(labels, new))
                .set(1);
        }
        self.connector_count.set(states.connectors.len() as i64);
    }

    /// A task's new state on this worker; `None` when it left the worker (its series go).
    pub fn task_state(&self, id: &ConnectorTaskId, state: Option<&'static str>) {
        let mut states = self.states.lock().expect("metrics lock");
        let labels = task_labels(id);
        if let Some(old) = states.tasks.remove(id) {
            self.task_status.remove(&with_status(labels.clone(), old));
        }
        let now = Instant::now();
        match state {
            Some(new) => {
                states.tasks.insert(id.clone(), new);
                states
                    .task_times
                    .entry(id.clone())
                    .and_modify(|t| t.enter(new, now))
                    .or_insert_with(|| StateTimes::new(new, now));
                self.task_status
                    .get_or_create(&with_status(labels, new))
                    .set(1);
            }
            None => {
                states.task_times.remove(id);
                if let Some(series) = states.lag_series.remove(id) {
                    for l in series.lock().expect("metrics lock").drain(..) {
                        self.task.record_lag.remove(&l);
                    }
                }
                self.running_ratio.remove(&labels);
                self.pause_ratio.remove(&labels);
                self.task.remove(&labels);
            }
        }
        self.task_count.set(states.tasks.len() as i64);
        // Recount the connector's tasks by state.
        let connector = connector_labels(&id.connector);
        let mine: Vec<&str> = states
            .tasks
            .iter()
            .filter(|(t, _)| t.connector == id.connector)
            .map(|(_, s)| *s)
            .collect();
        for (state, family) in &self.connector_task_counts {
            if mine.is_empty() {
                family.remove(&connector);
                continue;
            }
            let n = if *state == "total" {
                mine.len()
            } else {
                mine.iter().filter(|s| *s == state).count()
            };
            family.get_or_create(&connector).set(n as i64);
        }
    }

    /// The handle a task's runner counts with.
    pub fn task(&self, id: &ConnectorTaskId) -> TaskMetrics {
        let l = task_labels(id);
        let t = &self.task;
        let lag_series = self
            .states
            .lock()
            .expect("metrics lock")
            .lag_series
            .entry(id.clone())
            .or_default()
            .clone();
        TaskMetrics {
            lag: Arc::new(LagMetrics {
                max: t.lag_max.get_or_create_owned(&l),
                family: t.record_lag.clone(),
                task: l.clone(),
                series: lag_series,
            }),
            task: Arc::new(TaskCommon {
                batch_size_max: t.batch_size_max.get_or_create_owned(&l),
                batch_size_avg: t.batch_size_avg.get_or_create_owned(&l),
                commit_success_pct: t.commit_success_pct.get_or_create_owned(&l),
                commit_failure_pct: t.commit_failure_pct.get_or_create_owned(&l),
                commit_avg_time: t.commit_avg_time.get_or_create_owned(&l),
                commit_max_time: t.commit_max_time.get_or_create_owned(&l),
                counts: Mutex::default(),
            }),
            poll_total: t.poll_total.get_or_create_owned(&l),
            write_total: t.write_total.get_or_create_owned(&l),
            source_active: t.source_active.get_or_create_owned(&l),
            poll_batch_max: t.poll_batch_max.get_or_create_owned(&l),
            txn: Arc::new(TxnMetrics {
                size_min: t.txn_size_min.get_or_create_owned(&l),
                size_max: t.txn_size_max.get_or_create_owned(&l),
                size_avg: t.txn_size_avg.get_or_create_owned(&l),
                committed: t.txn_committed.get_or_create_owned(&l),
                aborted: t.txn_aborted.get_or_create_owned(&l),
                commit_seconds: t.txn_commit_seconds.get_or_create_owned(&l),
                records: AtomicU64::new(0),
            }),
            read_total: t.read_total.get_or_create_owned(&l),
            send_total: t.send_total.get_or_create_owned(&l),
            sink_active: t.sink_active.get_or_create_owned(&l),
            partition_count: t.partition_count.get_or_create_owned(&l),
            put_batch_max: t.put_batch_max.get_or_create_owned(&l),
            commit_completion: t.commit_completion.get_or_create_owned(&l),
            commit_skip: t.commit_skip.get_or_create_owned(&l),
            errors: ErrorMetrics {
                record_errors: t.record_errors.get_or_create_owned(&l),
                record_failures: t.record_failures.get_or_create_owned(&l),
                records_skipped: t.records_skipped.get_or_create_owned(&l),
                retries: t.retries.get_or_create_owned(&l),
                errors_logged: t.errors_logged.get_or_create_owned(&l),
                dlq_requests: t.dlq_requests.get_or_create_owned(&l),
                dlq_failures: t.dlq_failures.get_or_create_owned(&l),
                last_error_timestamp: t.last_error_timestamp.get_or_create_owned(&l),
            },
        }
    }
}

impl TaskFamilies {
    fn remove(&self, l: &Labels) {
        self.batch_size_max.remove(l);
        self.batch_size_avg.remove(l);
        self.commit_success_pct.remove(l);
        self.commit_failure_pct.remove(l);
        self.commit_avg_time.remove(l);
        self.commit_max_time.remove(l);
        self.poll_total.remove(l);
        self.write_total.remove(l);
        self.source_active.remove(l);
        self.poll_batch_max.remove(l);
        self.txn_size_min.remove(l);
        self.txn_size_max.remove(l);
        self.txn_size_avg.remove(l);
        self.txn_committed.remove(l);
        self.txn_aborted.remove(l);
        self.txn_commit_seconds.remove(l);
        self.read_total.remove(l);
        self.send_total.remove(l);
        self.sink_active.remove(l);
        self.partition_count.remove(l);
        self.put_batch_max.remove(l);
        self.commit_completion.remove(l);
        self.commit_skip.remove(l);
        self.lag_max.remove(l);
        self.record_errors.remove(l);
        self.record_failures.remove(l);
        self.records_skipped.remove(l);
        self.retries.remove(l);
        self.errors_logged.remove(l);
        self.dlq_requests.remove(l);
        self.dlq_failures.remove(l);
        self.last_error_timestamp.remove(l);
    }
}

/// One task's counters; cloning shares them.
#[derive(Clone, Default)]
pub struct TaskMetrics {
    task: Arc<TaskCommon>,
    lag: Arc<LagMetrics>,
    poll_total: Counter,
    write_total: Counter,
    source_active: Gauge,
    poll_batch_max: Gauge,
    txn: Arc<TxnMetrics>,
    read_total: Counter,
    send_total: Counter,
    sink_active: Gauge,
    partition_count: Gauge,
    put_batch_max: Gauge,
    commit_completion: Counter,
    commit_skip: Counter,
    pub errors: ErrorMetrics,
}

/// A sink task's consumer lag: the most lagging partition, and each partition (ours).
#[derive(Default)]
struct LagMetrics {
    max: Gauge,
    family: Family<Labels, Gauge>,
    task: Labels,
    /// The partition series this task has, shared with [`States::lag_series`].
    series: Arc<Mutex<Vec<Labels>>>,
}

/// `connector-task-metrics` of one task.
#[derive(Default)]
struct TaskCommon {
    batch_size_max: Gauge,
    batch_size_avg: Gauge<f64, AtomicU64>,
    commit_success_pct: Gauge<f64, AtomicU64>,
    commit_failure_pct: Gauge<f64, AtomicU64>,
    commit_avg_time: Gauge<f64, AtomicU64>,
    commit_max_time: Gauge,
    counts: Mutex<TaskCounts>,
}

#[derive(Default)]
struct TaskCounts {
    batches: u64,
    batch_records: u64,
    commits_ok: u64,
    commits_failed: u64,
    commit_time: Duration,
}

struct TxnMetrics {
    size_min: Gauge,
    size_max: Gauge,
    size_avg: Gauge<f64, AtomicU64>,
    committed: Counter,
    aborted: Counter,
    commit_seconds: Histogram,
    /// Records in committed transactions, for the average.
    records: AtomicU64,
}

impl Default for TxnMetrics {
    fn default() -> Self {
        TxnMetrics {
            size_min: Gauge::default(),
            size_max: Gauge::default(),
            size_avg: Gauge::default(),
            committed: Counter::default(),
            aborted: Counter::default(),
            commit_seconds: commit_histogram(),
            records: AtomicU64::new(0),
        }
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, millis)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl TaskMetrics {
    /// A batch of `records` (a source poll's, a sink put's).
    pub fn batch(&self, records: usize) {
        let t = &self.task;
        let mut c = t.counts.lock().expect("metrics lock");
        c.batches += 1;
        c.batch_records += records as u64;
        t.batch_size_avg
            .set(c.batch_records as f64 / c.batches as f64);
        t.batch_size_max
            .inner()
            .fetch_max(records as i64, Ordering::Relaxed);
    }

    /// An offset commit (for an exactly-once source, a transaction commit) that took `took`.
    pub fn offset_commit(&self, ok: bool, took: Duration) {
        let t = &self.task;
        let mut c = t.counts.lock().expect("metrics lock");
        if ok {
            c.commits_ok += 1;
        } else {
            c.commits_failed += 1;
        }
        c.commit_time += took;
        let n = (c.commits_ok + c.commits_failed) as f64;
        t.commit_success_pct.set(c.commits_ok as f64 / n);
        t.commit_failure_pct.set(c.commits_failed as f64 / n);
        t.commit_avg_time
            .set(c.commit_time.as_secs_f64() * 1000.0 / n);
        t.commit_max_time
            .inner()
            .fetch_max(millis(took), Ordering::Relaxed);
    }

    /// A source poll returned `records` after `took`.
    pub fn polled(&self, records: usize, took: Duration) {
        self.poll_total.inc_by(records as u64);
        self.source_active.inc_by(records as i64);
        self.poll_batch_max
            .inner()
            .fetch_max(millis(took), Ordering::Relaxed);
    }

    /// `records` source records were acknowledged (or dropped by a transform, or skipped).
    pub fn source_done(&self, records: usize, written: usize) {
        self.write_total.inc_by(written as u64);
        self.source_active.dec_by(records as i64);
    }

    /// A transaction of `records` records committed after `took` in `commitTransaction`.
    pub fn transaction_committed(&self, records: usize, took: Duration) {
        let t = &self.txn;
        let n = records as i64;
        let count = t.committed.inc() + 1;
        if count == 1 || n < t.size_min.get() {
            t.size_min.set(n);
        }
        t.size_max.inner().fetch_max(n, Ordering::Relaxed);
        let total = t.records.fetch_add(records as u64, Ordering::Relaxed) + records as u64;
        t.size_avg.set(total as f64 / count as f64);
        t.commit_seconds.observe(took.as_secs_f64());
    }

    pub fn transaction_aborted(&self) {
        self.txn.aborted.inc();
    }

    /// A sink consumer poll returned `records`.
    pub fn read(&self, records: usize) {
        self.read_total.inc_by(records as u64);
        self.sink_active.inc_by(records as i64);
    }

    /// `records` went to `put` (after transforms) and it took `took`.
    pub fn put(&self, records: usize, took: Duration) {
        self.send_total.inc_by(records as u64);
        self.put_batch_max
            .inner()
            .fetch_max(millis(took), Ordering::Relaxed);
    }

    /// Offsets were committed for everything read so far.
    pub fn committed(&self) {
        self.commit_completion.inc();
        self.sink_active.set(0);
    }

    pub fn commit_skipped(&self) {
        self.commit_skip.inc();
    }

    pub fn partitions(&self, n: usize) {
        self.partition_count.set(n as i64);
    }

    /// The lag of each partition the sink task owns now, as `(topic, partition, records)`;
    /// partitions not listed leave the scrape.
    pub fn lag(&self, lags: &[(String, i32, i64)]) {
        let m = &self.lag;
        let mut series = m.series.lock().expect("metrics lock");
        let now: Vec<Labels> = lags
            .iter()
            .map(|(topic, partition, _)| {
                let mut l = m.task.clone();
                l.push(("topic".into(), topic.clone()));
                l.push(("partition".into(), partition.to_string()));
                l
            })
            .collect();
        for old in series.iter().filter(|l| !now.contains(l)) {
            m.family.remove(old);
        }
        for (l, (_, _, lag)) in now.iter().zip(lags) {
            m.family.get_or_create(l).set(*lag);
        }
        m.max
            .set(lags.iter().map(|(_, _, lag)| *lag).max().unwrap_or(0));
        *series = now;
    }
}

/// `task-error-metrics` of one task.
#[derive(Clone, Default)]
pub struct ErrorMetrics {
    record_errors: Gauge,
    record_failures: Gauge,
    records_skipped: Gauge,
    retries: Gauge,
    errors_logged: Gauge,
    dlq_requests: Gauge,
    dlq_failures: Gauge,
    last_error_timestamp: Gauge,
}

impl ErrorMetrics {
    /// A record failed (conversion or transformation): counted, logged if `logged`, skipped
    /// if `tolerated`.
    pub fn failed(&self, logged: bool, tolerated: bool) {
        self.error(now_ms());
        if logged {
            self.logged();
        }
        if tolerated {
            self.skipped();
        }
    }

    /// A record met an error (a failed attempt), at `now_ms`.
    fn error(&self, now_ms: i64) {
        self.record_errors.inc();
        self.record_failures.inc();
        self.last_error_timestamp.set(now_ms);
    }

    pub fn retry(&self) {
        self.retries.inc();
    }

    pub fn skipped(&self) {
        self.records_skipped.inc();
    }

    pub fn logged(&self) {
        self.errors_logged.inc();
    }

    pub fn dead_letter(&self, ok: bool) {
        self.dlq_requests.inc();
        if !ok {
            self.dlq_failures.inc();
        }
    }
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(c: &str, t: i32) -> ConnectorTaskId {
        ConnectorTaskId::new(c, t)
    }

    #[test]
    fn names_follow_the_exporter_mapping_and_tasks_leave_no_series() {
        let m = Metrics::new();
        m.connector_state("c", Some("running"));
        m.task_state(&id("c", 0), Some("running"));
        m.task_state(&id("c", 1), Some("failed"));
        let t = m.task(&id("c", 0));
        t.polled(10, Duration::from_millis(3));
        t.source_done(10, 9);
        t.transaction_committed(4, Duration::from_millis(2));
        t.transaction_committed(6, Duration::from_millis(2));
        t.errors.error(1234);
        t.errors.failed(true, true);
        let text = m.encode();
        for line in [
            r#"kafka_connect_worker_connector_count 1"#,
            r#"kafka_connect_worker_task_count 2"#,
            r#"kafka_connect_worker_connector_running_task_count{connector="c"} 1"#,
            r#"kafka_connect_worker_connector_failed_task_count{connector="c"} 1"#,
            r#"kafka_connect_worker_connector_total_task_count{connector="c"} 2"#,
            r#"kafka_connect_connector_status{connector="c",status="running"} 1"#,
            r#"kafka_connect_connector_task_status{connector="c",task="1",status="failed"} 1"#,
            r#"kafka_connect_source_task_source_record_poll_total{connector="c",task="0"} 10"#,
            r#"kafka_connect_source_task_source_record_write_total{connector="c",task="0"} 9"#,
            r#"kafka_connect_source_task_source_record_active_count{connector="c",task="0"} 0"#,
            r#"kafka_connect_source_task_transaction_size_min{connector="c",task="0"} 4"#,
            r#"kafka_connect_source_task_transaction_size_max{connector="c",task="0"} 6"#,
            r#"kafka_connect_source_task_transaction_size_avg{connector="c",task="0"} 5.0"#,
            r#"kafka_connect_source_task_transactions_committed_total{connector="c",task="0"} 2"#,
            r#"kafka_connect_task_error_total_record_errors{connector="c",task="0"} 2"#,
            r#"kafka_connect_task_error_total_records_skipped{connector="c",task="0"} 1"#,
            r#"kafka_connect_task_error_total_errors_logged{connector="c",task="0"} 1"#,
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
        // A task that leaves the worker takes its series with it.
        m.task_state(&id("c", 0), None);
        m.task_state(&id("c", 1), None);
        let text = m.encode();
        assert!(!text.contains(r#"task="0""#), "{text}");
        assert!(!text.contains(r#"connector="c",task"#), "{text}");
        assert!(text.contains("kafka_connect_worker_task_count 0"), "{text}");
        assert!(
            !text.contains("kafka_connect_worker_connector_total_task_count{"),
            "{text}"
        );
    }
}
