//! Automatic restarts of the failed connectors and tasks this worker runs (README,
//! "Self-healing"). The herder asks at every reconcile; a failure is planned once: a restart
//! after the policy's backoff (the wait and the attempt number are appended to the status
//! `trace`, so every client that reads Apache's fields sees them), or a note saying why it is
//! not retried. Work that then runs for `auto.restart.reset.after.ms` starts again from the
//! first attempt; a manual restart does too.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use crate::config::auto_restart::{AUTO_RESTART_MAX_ATTEMPTS, AutoRestartPolicy};
use crate::runtime::ledger::{LocalState, Work};
use crate::runtime::worker::StatusReporter;
use crate::storage::ConnectorState;

#[derive(Debug, Default)]
struct Entry {
    /// Attempts since the work last ran healthy for the policy's `reset_after`.
    attempts: u32,
    /// The failure (its `since`) this entry planned for; a newer failure is planned anew.
    planned_for: Option<Instant>,
    /// When the planned restart is due.
    due: Option<Instant>,
}

#[derive(Debug)]
pub(super) struct Healer {
    entries: BTreeMap<Work, Entry>,
    /// No restart comes sooner than this after the failure: the worker's `session.timeout.ms`,
    /// by which a worker that was a zombie (paused, cut off) has learnt it lost its work, so it
    /// cannot restart a task that now runs elsewhere (an exactly-once task would fence its
    /// successor).
    min_wait: Duration,
}

impl Healer {
    pub fn new(min_wait: Duration) -> Self {
        Self {
            entries: BTreeMap::new(),
            min_wait,
        }
    }

    /// Whether `work` should be restarted now. Plans (and reports) each new failure once.
    pub fn due(
        &mut self,
        work: &Work,
        local: Option<&LocalState>,
        policy: &AutoRestartPolicy,
        now: Instant,
        status: &StatusReporter,
    ) -> bool {
        let Some(local) = local else {
            return false;
        };
        if local.state != ConnectorState::Failed {
            if local.state == ConnectorState::Running
                && now.saturating_duration_since(local.since) >= policy.reset_after
            {
                self.entries.remove(work);
            }
            return false;
        }
        let entry = self.entries.entry(work.clone()).or_default();
        if entry.planned_for != Some(local.since) {
            entry.planned_for = Some(local.since);
            entry.due = None;
            if !policy.enabled {
                return false;
            }
            if let Some(why) = &local.not_retriable {
                let note = format!("Not restarted automatically: {why}.");
                tracing::warn!(%work, "{work} failed; {note}");
                status.annotate_failure(work, &note);
                return false;
            }
            if policy.max_attempts.is_some_and(|max| entry.attempts >= max) {
                let note = format!(
                    "Not restarted automatically any more: {} attempts made ({AUTO_RESTART_MAX_ATTEMPTS}). Restart it by hand (POST /connectors/{{name}}/restart).",
                    entry.attempts
                );
                tracing::warn!(%work, attempts = entry.attempts, "{work} failed again; giving up automatic restarts");
                status.annotate_failure(work, &note);
                return false;
            }
            entry.attempts += 1;
            let jitter = rand::rng().random_range(0.8..=1.2);
            let wait = policy.delay(entry.attempts, jitter).max(self.min_wait);
            entry.due = Some(now + wait);
            let note = restart_note(entry.attempts, wait);
            tracing::warn!(%work, attempt = entry.attempts, wait_ms = wait.as_millis() as u64, "{work} failed; {note}");
            status.annotate_failure(work, &note);
            return false;
        }
        if entry.due.is_some_and(|due| now >= due) {
            entry.due = None;
            crate::metrics::global().automatic_restart();
            tracing::info!(%work, attempt = entry.attempts, "restarting {work} automatically");
            return true;
        }
        false
    }

    /// Forgets earlier attempts (a manual restart).
    pub fn reset(&mut self, work: &Work) {
        self.entries.remove(work);
    }

    /// Forgets work that no longer runs here.
    pub fn retain(&mut self, runs_here: impl Fn(&Work) -> bool) {
        self.entries.retain(|w, _| runs_here(w));
    }
}

/// `Automatic restart attempt 2 at Wed, 02 Dec 2026 05:01:02 GMT (in 61 s).`
pub fn restart_note(attempt: u32, wait: Duration) -> String {
    format!(
        "Automatic restart attempt {attempt} at {} (in {} s).",
        httpdate::fmt_http_date(SystemTime::now() + wait),
        wait.as_secs()
    )
}
