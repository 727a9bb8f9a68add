//! What the worker is doing now (Connect's `Stage`, KIP-1017): written by the start-up path and
//! the herder loop, read by `GET /health` and by requests that time out while the worker starts.
//!
//! One shared value, cheap to clone; the texts are Connect's, so a probe or an operator sees
//! the same words as from an Apache worker ("The worker is currently initializing and reading
//! to the end of internal topics, which began at 2024-10-25T03:33:01.123Z.").

use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// The stage from process start until the internal topics have been read to the end.
pub const STAGE_READING_INTERNAL_TOPICS: &str =
    "initializing and reading to the end of internal topics";
/// The stage while the worker joins (or rejoins) the group, until an assignment is applied.
pub const STAGE_JOINING_GROUP: &str = "ensuring membership in the cluster";
/// The stage once the herder stops.
pub const STAGE_SHUTTING_DOWN: &str = "shutting down";

#[derive(Debug)]
struct Stage {
    description: String,
    started: SystemTime,
    completed: Option<SystemTime>,
}

/// The worker's current (or last completed) stage.
#[derive(Debug, Clone)]
pub struct WorkerStage(Arc<Mutex<Stage>>);

impl WorkerStage {
    /// Starts in `description`, begun now.
    pub fn new(description: &str) -> Self {
        WorkerStage(Arc::new(Mutex::new(Stage {
            description: description.to_owned(),
            started: SystemTime::now(),
            completed: None,
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Enters `description`, begun now (a repeated `begin` of the stage in progress keeps its
    /// start time, so a rejoin loop reports how long the worker has been trying).
    pub fn begin(&self, description: &str) {
        let mut s = self.lock();
        if s.completed.is_none() && s.description == description {
            return;
        }
        *s = Stage {
            description: description.to_owned(),
            started: SystemTime::now(),
            completed: None,
        };
    }

    /// Marks the current stage completed now (no-op when it already is).
    pub fn complete(&self) {
        let mut s = self.lock();
        if s.completed.is_none() {
            s.completed = Some(SystemTime::now().max(s.started));
        }
    }

    /// Connect's `Stage.summarize()`.
    pub fn summarize(&self) -> String {
        let s = self.lock();
        match s.completed {
            Some(done) => format!(
                "The last operation the worker completed was {}, which began at {} and completed at {}.",
                s.description,
                java_instant(s.started),
                java_instant(done)
            ),
            None => format!(
                "The worker is currently {}, which began at {}.",
                s.description,
                java_instant(s.started)
            ),
        }
    }
}

/// `java.time.Instant.toString()` of a millisecond instant: ISO-8601 in UTC, the milliseconds
/// only when not zero.
fn java_instant(t: SystemTime) -> String {
    let ms = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    };
    let (secs, milli) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let fraction = if milli == 0 {
        String::new()
    } else {
        format!(".{milli:03}")
    };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{fraction}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn instants_print_as_java_does() {
        let at = |ms: u64| java_instant(UNIX_EPOCH + Duration::from_millis(ms));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(1_729_827_181_000), "2024-10-25T03:33:01Z");
        assert_eq!(at(1_729_827_181_123), "2024-10-25T03:33:01.123Z");
        assert_eq!(at(951_782_400_007), "2000-02-29T00:00:00.007Z");
        assert_eq!(at(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
    }

    #[test]
    fn summary_reports_the_current_then_the_completed_stage() {
        let stage = WorkerStage::new(STAGE_READING_INTERNAL_TOPICS);
        let now = stage.summarize();
        assert!(
            now.starts_with("The worker is currently initializing and reading to the end of internal topics, which began at "),
            "{now}"
        );
        stage.begin(STAGE_JOINING_GROUP);
        let begun = stage.lock().started;
        stage.begin(STAGE_JOINING_GROUP);
        assert_eq!(
            stage.lock().started,
            begun,
            "a repeated begin keeps the start"
        );
        stage.complete();
        let done = stage.summarize();
        assert!(
            done.starts_with("The last operation the worker completed was ensuring membership in the cluster, which began at "),
            "{done}"
        );
        assert!(done.contains(" and completed at "), "{done}");
        stage.begin(STAGE_JOINING_GROUP);
        assert!(
            stage
                .summarize()
                .starts_with("The worker is currently ensuring")
        );
    }
}
