//! Automatic restarts of failed connectors and tasks (our keys; Apache Connect never restarts
//! failed work by itself). The worker config sets the defaults, a connector config may override
//! any of them for that connector and its tasks.
//!
//! | key | default | |
//! |---|---|---|
//! | `auto.restart.enable` | `true` | restart FAILED connectors and tasks of this worker |
//! | `auto.restart.backoff.initial.ms` | 30000 | wait before the first attempt |
//! | `auto.restart.backoff.max.ms` | 3600000 | the doubling wait is capped here |
//! | `auto.restart.max.attempts` | -1 | attempts before giving up; -1 never gives up |
//! | `auto.restart.reset.after.ms` | 600000 | running this long forgets earlier attempts |

use std::time::Duration;

use connect_api::ConfigMap;

pub const AUTO_RESTART_ENABLE: &str = "auto.restart.enable";
pub const AUTO_RESTART_BACKOFF_INITIAL_MS: &str = "auto.restart.backoff.initial.ms";
pub const AUTO_RESTART_BACKOFF_MAX_MS: &str = "auto.restart.backoff.max.ms";
pub const AUTO_RESTART_MAX_ATTEMPTS: &str = "auto.restart.max.attempts";
pub const AUTO_RESTART_RESET_AFTER_MS: &str = "auto.restart.reset.after.ms";

/// How failed work is restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoRestartPolicy {
    pub enabled: bool,
    pub backoff_initial: Duration,
    pub backoff_max: Duration,
    /// `None`: unlimited.
    pub max_attempts: Option<u32>,
    pub reset_after: Duration,
}

impl Default for AutoRestartPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            backoff_initial: Duration::from_secs(30),
            backoff_max: Duration::from_secs(3600),
            max_attempts: None,
            reset_after: Duration::from_secs(600),
        }
    }
}

/// An invalid value: the key and the reason (Connect's wording).
pub type InvalidKey = (&'static str, String);

impl AutoRestartPolicy {
    /// `base` with the keys present in `props` applied (the worker config over the defaults,
    /// or a connector config over the worker's policy).
    pub fn with_overrides(&self, props: &ConfigMap) -> Result<Self, InvalidKey> {
        let mut p = self.clone();
        if let Some(v) = props.get(AUTO_RESTART_ENABLE) {
            p.enabled = match v.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(invalid(
                        AUTO_RESTART_ENABLE,
                        "Expected value to be either true or false",
                    ));
                }
            };
        }
        if let Some(v) = props.get(AUTO_RESTART_BACKOFF_INITIAL_MS) {
            p.backoff_initial = millis(AUTO_RESTART_BACKOFF_INITIAL_MS, v)?;
        }
        if let Some(v) = props.get(AUTO_RESTART_BACKOFF_MAX_MS) {
            p.backoff_max = millis(AUTO_RESTART_BACKOFF_MAX_MS, v)?;
        }
        if let Some(v) = props.get(AUTO_RESTART_MAX_ATTEMPTS) {
            p.max_attempts = match v.trim().parse::<i64>() {
                Ok(-1) => None,
                Ok(n) if (0..=i64::from(u32::MAX)).contains(&n) => Some(n as u32),
                Ok(_) => {
                    return Err(invalid(
                        AUTO_RESTART_MAX_ATTEMPTS,
                        "Value must be at least -1",
                    ));
                }
                Err(_) => {
                    return Err(invalid(
                        AUTO_RESTART_MAX_ATTEMPTS,
                        "Not a number of type INT",
                    ));
                }
            };
        }
        if let Some(v) = props.get(AUTO_RESTART_RESET_AFTER_MS) {
            p.reset_after = millis(AUTO_RESTART_RESET_AFTER_MS, v)?;
        }
        if p.backoff_max < p.backoff_initial {
            return Err((
                AUTO_RESTART_BACKOFF_MAX_MS,
                format!(
                    "must not be less than {AUTO_RESTART_BACKOFF_INITIAL_MS} ({})",
                    p.backoff_initial.as_millis()
                ),
            ));
        }
        Ok(p)
    }

    /// The wait before attempt `attempt` (1-based): the initial backoff doubled per earlier
    /// attempt, capped, times `jitter` (a factor in 0.8..=1.2 the caller draws).
    pub fn delay(&self, attempt: u32, jitter: f64) -> Duration {
        let doubled = self.backoff_initial.saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        );
        doubled
            .min(self.backoff_max)
            .mul_f64(jitter.clamp(0.8, 1.2))
    }
}

fn invalid(key: &'static str, reason: &str) -> InvalidKey {
    (key, reason.to_owned())
}

fn millis(key: &'static str, value: &str) -> Result<Duration, InvalidKey> {
    match value.trim().parse::<i64>() {
        Ok(ms) if ms >= 0 => Ok(Duration::from_millis(ms as u64)),
        Ok(_) => Err(invalid(key, "Value must be at least 0")),
        Err(_) => Err(invalid(key, "Not a number of type LONG")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(kv: &[(&str, &str)]) -> ConfigMap {
        kv.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn overrides_and_errors() {
        let base = AutoRestartPolicy::default();
        let p = base
            .with_overrides(&props(&[
                (AUTO_RESTART_ENABLE, "FALSE"),
                (AUTO_RESTART_BACKOFF_INITIAL_MS, "1000"),
                (AUTO_RESTART_BACKOFF_MAX_MS, "4000"),
                (AUTO_RESTART_MAX_ATTEMPTS, "3"),
            ]))
            .unwrap();
        assert!(!p.enabled);
        assert_eq!(p.max_attempts, Some(3));
        assert_eq!(p.reset_after, base.reset_after);
        let e = base
            .with_overrides(&props(&[(AUTO_RESTART_BACKOFF_INITIAL_MS, "soon")]))
            .unwrap_err();
        assert_eq!(e.0, AUTO_RESTART_BACKOFF_INITIAL_MS);
        assert_eq!(e.1, "Not a number of type LONG");
        assert!(
            base.with_overrides(&props(&[(AUTO_RESTART_MAX_ATTEMPTS, "-2")]))
                .is_err()
        );
        assert_eq!(
            base.with_overrides(&props(&[(AUTO_RESTART_BACKOFF_MAX_MS, "10")]))
                .unwrap_err()
                .0,
            AUTO_RESTART_BACKOFF_MAX_MS
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = AutoRestartPolicy {
            backoff_initial: Duration::from_secs(30),
            backoff_max: Duration::from_secs(300),
            ..AutoRestartPolicy::default()
        };
        let secs: Vec<u64> = (1..=6).map(|n| p.delay(n, 1.0).as_secs()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 300, 300]);
        assert_eq!(p.delay(1, 1.2), Duration::from_secs(36));
        assert_eq!(p.delay(100, 1.0), Duration::from_secs(300));
        assert_eq!(
            p.delay(1, 5.0),
            Duration::from_secs(36),
            "jitter is clamped"
        );
    }
}
