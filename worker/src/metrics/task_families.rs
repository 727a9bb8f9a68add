//! The per-task families: `connector-task-metrics`, `source-task-metrics` (with KIP-618's
//! transaction sizes and ours), `sink-task-metrics` and `task-error-metrics`, registered under
//! their groups; a task's series removed when it leaves.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::labels::Labels;

#[derive(Default)]
pub(super) struct TaskFamilies {
    // connector-task-metrics
    pub(super) batch_size_max: Family<Labels, Gauge>,
    pub(super) batch_size_avg: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) commit_success_pct: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) commit_failure_pct: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) commit_avg_time: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) commit_max_time: Family<Labels, Gauge>,
    // source-task-metrics
    pub(super) poll_total: Family<Labels, Counter>,
    pub(super) write_total: Family<Labels, Counter>,
    pub(super) source_active: Family<Labels, Gauge>,
    pub(super) poll_batch_max: Family<Labels, Gauge>,
    // exactly-once (KIP-618's transaction sizes, and ours)
    pub(super) txn_size_min: Family<Labels, Gauge>,
    pub(super) txn_size_max: Family<Labels, Gauge>,
    pub(super) txn_size_avg: Family<Labels, Gauge<f64, AtomicU64>>,
    pub(super) txn_committed: Family<Labels, Counter>,
    pub(super) txn_aborted: Family<Labels, Counter>,
    pub(super) txn_commit_seconds: HistogramFamily,
    // sink-task-metrics
    pub(super) read_total: Family<Labels, Counter>,
    pub(super) send_total: Family<Labels, Counter>,
    pub(super) sink_active: Family<Labels, Gauge>,
    pub(super) partition_count: Family<Labels, Gauge>,
    pub(super) put_batch_max: Family<Labels, Gauge>,
    pub(super) commit_completion: Family<Labels, Counter>,
    pub(super) commit_skip: Family<Labels, Counter>,
    pub(super) lag_max: Family<Labels, Gauge>,
    /// Per partition: `connector`, `task`, `topic`, `partition` labels.
    pub(super) record_lag: Family<Labels, Gauge>,
    // task-error-metrics
    pub(super) record_errors: Family<Labels, Gauge>,
    pub(super) record_failures: Family<Labels, Gauge>,
    pub(super) records_skipped: Family<Labels, Gauge>,
    pub(super) retries: Family<Labels, Gauge>,
    pub(super) errors_logged: Family<Labels, Gauge>,
    pub(super) dlq_requests: Family<Labels, Gauge>,
    pub(super) dlq_failures: Family<Labels, Gauge>,
    pub(super) last_error_timestamp: Family<Labels, Gauge>,
}

/// A histogram family with [`commit_histogram`]'s buckets.
#[derive(Clone)]
pub(super) struct HistogramFamily(Family<Labels, Histogram, fn() -> Histogram>);

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

pub(super) fn commit_histogram() -> Histogram {
    // 1 ms .. ~16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl TaskFamilies {
    /// Registers the families under their groups (`connector_task`, `source_task`,
    /// `sink_task`, `task_error`).
    pub(super) fn register(&self, registry: &mut Registry) {
        let t = self;
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
    }

    /// Removes the series of the task labelled `l`.
    pub(super) fn remove(&self, l: &Labels) {
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
