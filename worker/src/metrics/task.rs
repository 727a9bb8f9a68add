//! [`TaskMetrics`]: the handle a task's runner counts with (no lock per record), handed out by
//! [`Metrics::task`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use super::clock::millis;
use super::errors::ErrorMetrics;
use super::labels::{Labels, task_labels};
use super::registry::Metrics;
use super::task_families::commit_histogram;
use crate::task_id::ConnectorTaskId;

impl Metrics {
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
    /// The partition series this task has, shared with
    /// [`States::lag_series`](super::registry::States::lag_series).
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
