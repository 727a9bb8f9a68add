//! [`Metrics`]: every family of the worker, registered under Apache's groups, and what it
//! remembers between calls; [`global`], the process's registry.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::labels::{Labels, STATES};
use super::task_families::TaskFamilies;
use crate::task_id::ConnectorTaskId;

/// Every metric family of the worker.
pub struct Metrics {
    pub(super) registry: Registry,
    // connect-worker-metrics
    pub(super) connector_count: Gauge,
    pub(super) task_count: Gauge,
    pub(super) connector_startup_attempts: Counter,
    pub(super) connector_startup_success: Counter,
    pub(super) connector_startup_failure: Counter,
    pub(super) task_startup_attempts: Counter,
    pub(super) task_startup_success: Counter,
    pub(super) task_startup_failure: Counter,
    /// `connector-<state>-task-count` and `connector-total-task-count`, by connector.
    pub(super) connector_task_counts: BTreeMap<&'static str, Family<Labels, Gauge>>,
    // connect-worker-rebalance-metrics
    pub(super) rebalancing: Gauge,
    pub(super) completed_rebalances: Counter,
    pub(super) epoch: Gauge,
    pub(super) time_since_last_rebalance: Gauge,
    pub(super) rebalance_avg_time: Gauge<f64, AtomicU64>,
    pub(super) rebalance_max_time: Gauge,
    pub(super) leader: Family<Labels, Gauge>,
    // connector-metrics, connector-task-metrics
    pub(super) connector_status: Family<Labels, Gauge>,
    pub(super) connector_info: Family<Labels, Gauge>,
    pub(super) fencing_rounds: Family<Labels, Counter>,
    pub(super) fenced_tasks: Family<Labels, Counter>,
    // Self-healing (ours).
    pub(super) automatic_restarts: Counter,
    pub(super) stuck_transactions_aborted: Counter,
    pub(super) foreign_transactions_reported: Counter,
    pub(super) task_status: Family<Labels, Gauge>,
    pub(super) running_ratio: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) pause_ratio: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) task: TaskFamilies,
    /// The last state reported of each connector and task on this worker.
    pub(super) states: Mutex<States>,
    /// Tasks' own gauges ([`super::plugin`]): name -> (help, value by task).
    pub(super) plugin: Mutex<BTreeMap<String, (String, BTreeMap<ConnectorTaskId, f64>)>>,
}

#[derive(Default)]
pub(super) struct States {
    pub(super) connectors: BTreeMap<String, &'static str>,
    pub(super) connector_info: BTreeMap<String, Labels>,
    pub(super) tasks: BTreeMap<ConnectorTaskId, &'static str>,
    /// Time in each state of the tasks on this worker, for the running and pause ratios.
    pub(super) task_times: BTreeMap<ConnectorTaskId, StateTimes>,
    /// The per-partition lag series of each task, removed with the task.
    pub(super) lag_series: BTreeMap<ConnectorTaskId, Arc<Mutex<Vec<Labels>>>>,
    pub(super) rebalance: Rebalances,
}

#[derive(Default)]
pub(super) struct Rebalances {
    pub(super) started: Option<Instant>,
    pub(super) completed_at: Option<Instant>,
    pub(super) count: u64,
    pub(super) total: Duration,
    pub(super) leader: Option<Labels>,
}

/// Since when a task has been on this worker and how long it was running and paused.
pub(super) struct StateTimes {
    since: Instant,
    state: &'static str,
    entered: Instant,
    running: Duration,
    paused: Duration,
}

impl StateTimes {
    pub(super) fn new(state: &'static str, now: Instant) -> Self {
        StateTimes {
            since: now,
            state,
            entered: now,
            running: Duration::ZERO,
            paused: Duration::ZERO,
        }
    }

    pub(super) fn enter(&mut self, state: &'static str, now: Instant) {
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
    pub(super) fn ratios(&self, now: Instant) -> (f64, f64) {
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
            plugin: Mutex::default(),
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
        m.task.register(&mut registry);
        Metrics { registry, ..m }
    }
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}
