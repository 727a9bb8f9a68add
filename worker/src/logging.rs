//! The worker's log levels, changed at run time through `/admin/loggers` (Connect's
//! `LoggingResource`, KIP-495) and, for `scope=cluster`, through the config topic (KIP-976).
//!
//! Logger names are `tracing` targets (module paths such as `connect_worker::herder`); `root` is
//! the default level. Levels use log4j's names (`TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR`,
//! `FATAL`, `OFF`, `ALL`, case-insensitive) and map onto `tracing` levels (`FATAL` → error,
//! `ALL` → trace). Changes rebuild the process's `EnvFilter` through a
//! `tracing_subscriber::reload` handle.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::reload;

pub const ROOT_LOGGER: &str = "root";

/// Why a level could not be set. The messages are Connect's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogLevelError {
    #[error("invalid log level '{0}'.")]
    InvalidLevel(String),
    #[error("invalid logger name '{0}'.")]
    InvalidName(String),
    /// The subscriber refused the resulting filter.
    #[error("{0}")]
    Filter(String),
}

type Apply = dyn Fn(&str) -> Result<(), String> + Send + Sync;

/// One explicitly set level.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Setting {
    /// log4j name, upper case.
    level: String,
    /// Epoch ms of the last change through this API on this worker.
    last_modified: Option<i64>,
}

/// The worker's log levels: the explicitly set ones, and how to apply them to the subscriber.
/// Cheap to clone; all clones share the state.
#[derive(Clone)]
pub struct LogLevels {
    levels: Arc<Mutex<BTreeMap<String, Setting>>>,
    apply: Arc<Apply>,
}

impl std::fmt::Debug for LogLevels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogLevels")
            .field("levels", &self.levels)
            .finish_non_exhaustive()
    }
}

/// `tracing` level for a log4j level name, `None` if it is not one.
pub fn tracing_level(log4j: &str) -> Option<&'static str> {
    Some(match log4j.to_ascii_uppercase().as_str() {
        "ALL" | "TRACE" => "trace",
        "DEBUG" => "debug",
        "INFO" => "info",
        "WARN" => "warn",
        "ERROR" | "FATAL" => "error",
        "OFF" => "off",
        _ => return None,
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

impl LogLevels {
    /// Levels applied through `handle`, starting from the `EnvFilter` directives `base`
    /// (e.g. `info,rdkafka=warn`, what the subscriber was built with).
    pub fn new<S: 'static>(handle: reload::Handle<EnvFilter, S>, base: &str) -> Self {
        Self::with_apply(
            base,
            Arc::new(move |directives: &str| {
                let filter = EnvFilter::try_new(directives).map_err(|e| e.to_string())?;
                handle.reload(filter).map_err(|e| e.to_string())
            }),
        )
    }

    /// Levels that are tracked and reported but applied to no subscriber (tests, or a worker
    /// whose subscriber has no reload layer).
    pub fn detached(base: &str) -> Self {
        Self::with_apply(
            base,
            Arc::new(|directives: &str| {
                EnvFilter::try_new(directives)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }),
        )
    }

    fn with_apply(base: &str, apply: Arc<Apply>) -> Self {
        let mut levels = BTreeMap::new();
        levels.insert(
            ROOT_LOGGER.to_owned(),
            Setting {
                level: "INFO".into(),
                last_modified: None,
            },
        );
        for d in base.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let (name, level) = match d.split_once('=') {
                Some((n, l)) => (n.trim(), l.trim()),
                None => (ROOT_LOGGER, d),
            };
            if tracing_level(level).is_some() && !name.contains('[') {
                levels.insert(
                    name.to_owned(),
                    Setting {
                        level: level.to_ascii_uppercase(),
                        last_modified: None,
                    },
                );
            }
        }
        LogLevels {
            levels: Arc::new(Mutex::new(levels)),
            apply,
        }
    }

    /// The explicitly set loggers, `{"name": {"level", "last_modified"}}`, sorted by name.
    pub fn all(&self) -> Value {
        let levels = self.levels.lock().expect("log levels lock");
        Value::Object(
            levels
                .iter()
                .map(|(n, s)| {
                    (
                        n.clone(),
                        json!({"level": s.level, "last_modified": s.last_modified}),
                    )
                })
                .collect(),
        )
    }

    /// The effective level of `name`: its own, else its closest configured ancestor's, else
    /// the root level.
    pub fn level(&self, name: &str) -> Value {
        let levels = self.levels.lock().expect("log levels lock");
        if let Some(s) = levels.get(name) {
            return json!({"level": s.level, "last_modified": s.last_modified});
        }
        let ancestor = levels
            .iter()
            .filter(|(n, _)| {
                n.as_str() != ROOT_LOGGER
                    && name.starts_with(n.as_str())
                    && (name[n.len()..].starts_with("::") || name[n.len()..].starts_with('.'))
            })
            .max_by_key(|(n, _)| n.len())
            .map(|(_, s)| s.level.clone());
        let level = ancestor.unwrap_or_else(|| levels[ROOT_LOGGER].level.clone());
        json!({"level": level, "last_modified": null})
    }

    /// Sets `namespace` and every configured logger below it (every logger for `root`) to
    /// `level`; returns the affected logger names, sorted. The error is a message for a 400/404.
    pub fn set(&self, namespace: &str, level: &str) -> Result<Vec<String>, LogLevelError> {
        if tracing_level(level).is_none() {
            return Err(LogLevelError::InvalidLevel(level.to_owned()));
        }
        if namespace.is_empty()
            || namespace
                .chars()
                .any(|c| c.is_whitespace() || matches!(c, '=' | ',' | '[' | ']' | '{' | '}'))
        {
            return Err(LogLevelError::InvalidName(namespace.to_owned()));
        }
        let mut levels = self.levels.lock().expect("log levels lock");
        let mut next = levels.clone();
        let now = now_ms();
        let setting = Setting {
            level: level.to_ascii_uppercase(),
            last_modified: Some(now),
        };
        let mut affected: Vec<String> = next
            .keys()
            .filter(|n| {
                namespace == ROOT_LOGGER
                    || n.as_str() == namespace
                    || (n.starts_with(namespace)
                        && (n[namespace.len()..].starts_with("::")
                            || n[namespace.len()..].starts_with('.')))
            })
            .cloned()
            .collect();
        if !affected.iter().any(|n| n == namespace) {
            affected.push(namespace.to_owned());
        }
        for n in &affected {
            next.insert(n.clone(), setting.clone());
        }
        (self.apply)(&directives(&next)).map_err(LogLevelError::Filter)?;
        *levels = next;
        affected.sort();
        Ok(affected)
    }

    /// Applies a `logger-cluster-<namespace>` record read from the config topic (KIP-976).
    /// The herder calls this for records read after start-up.
    pub fn apply_cluster_logger_level(
        &self,
        namespace: &str,
        level: &str,
    ) -> Result<(), LogLevelError> {
        self.set(namespace, level).map(|affected| {
            tracing::info!(
                namespace,
                level,
                ?affected,
                "applied cluster-wide log level"
            );
        })
    }
}

/// `EnvFilter` directives for the configured levels: the root level, then `target=level`.
fn directives(levels: &BTreeMap<String, Setting>) -> String {
    let mut out = vec![
        tracing_level(&levels[ROOT_LOGGER].level)
            .unwrap_or("info")
            .to_owned(),
    ];
    for (n, s) in levels {
        if n != ROOT_LOGGER {
            out.push(format!("{n}={}", tracing_level(&s.level).unwrap_or("info")));
        }
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_start_from_the_base_directives() {
        let l = LogLevels::detached("info,rdkafka=warn");
        assert_eq!(
            l.all(),
            json!({"rdkafka": {"level": "WARN", "last_modified": null}, "root": {"level": "INFO", "last_modified": null}})
        );
        assert_eq!(l.level("rdkafka::client")["level"], "WARN");
        assert_eq!(l.level("connect_worker")["level"], "INFO");
    }

    #[test]
    fn set_changes_the_namespace_and_its_children() {
        let l = LogLevels::detached("info,connect_worker::herder=warn");
        let affected = l.set("connect_worker", "debug").unwrap();
        assert_eq!(affected, vec!["connect_worker", "connect_worker::herder"]);
        assert_eq!(l.level("connect_worker::herder")["level"], "DEBUG");
        assert!(l.level("connect_worker")["last_modified"].is_i64());
        assert_eq!(
            directives(&l.levels.lock().unwrap()),
            "info,connect_worker=debug,connect_worker::herder=debug"
        );
        assert!(l.set("x", "LOUD").is_err());
        let all = l.set("root", "ERROR").unwrap();
        assert_eq!(all.len(), 3);
    }
}
