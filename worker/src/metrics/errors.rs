//! [`ErrorMetrics`]: a task's `task-error-metrics`.

use prometheus_client::metrics::gauge::Gauge;

use super::clock::now_ms;

/// `task-error-metrics` of one task.
#[derive(Clone, Default)]
pub struct ErrorMetrics {
    pub(super) record_errors: Gauge,
    pub(super) record_failures: Gauge,
    pub(super) records_skipped: Gauge,
    pub(super) retries: Gauge,
    pub(super) errors_logged: Gauge,
    pub(super) dlq_requests: Gauge,
    pub(super) dlq_failures: Gauge,
    pub(super) last_error_timestamp: Gauge,
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
    pub(super) fn error(&self, now_ms: i64) {
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
