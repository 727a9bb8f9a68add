//! What this worker did: connector and task start-ups (`connect-worker-metrics`), rebalances
//! (`connect-worker-rebalance-metrics`), automatic restarts, stuck transactions and fencing
//! rounds (ours).

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::clock::millis;
use super::labels::connector_labels;
use super::registry::Metrics;

impl Metrics {
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

    /// The leader fenced `tasks` transactional ids of `connector`'s previous generation.
    pub fn fencing_round(&self, connector: &str, tasks: usize) {
        let l = connector_labels(connector);
        self.fencing_rounds.get_or_create(&l).inc();
        self.fenced_tasks.get_or_create(&l).inc_by(tasks as u64);
    }
}
