//! Typed views of the framework connector configs, built after validation so the runtime never
//! re-parses strings ("parse, don't validate").

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;
use std::time::Duration;

use super::connector::*;
use super::def::{ConfigMap, ConfigValue, ParsedConfig};
use crate::error::{ConnectError, Result};

macro_rules! lowercase_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),* }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Case-insensitive, as Connect accepts these values.
        impl FromStr for $name {
            type Err = ConnectError;
            fn from_str(s: &str) -> Result<Self> {
                $(if s.eq_ignore_ascii_case($text) { return Ok(Self::$variant); })*
                Err(ConnectError::config(format!(
                    "Invalid value {s}: must be one of {}", [$($text),*].join(", ")
                )))
            }
        }
    };
}

lowercase_enum!(
    /// `errors.tolerance`.
    ToleranceType { None => "none", All => "all" }
);
lowercase_enum!(
    /// `exactly.once.support`.
    ExactlyOnceSupportLevel { Requested => "requested", Required => "required" }
);
lowercase_enum!(
    /// `transaction.boundary`.
    TransactionBoundary { Poll => "poll", Interval => "interval", Connector => "connector" }
);

/// The common keys, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorConfig {
    pub name: String,
    pub connector_class: String,
    pub tasks_max: NonZeroUsize,
    pub tasks_max_enforce: bool,
    pub key_converter: Option<String>,
    pub value_converter: Option<String>,
    pub header_converter: String,
    pub transforms: Vec<String>,
    pub predicates: Vec<String>,
    /// `0` = no retries, `-1` = retry forever (kept as Connect defines it).
    pub errors_retry_timeout_ms: i64,
    pub errors_retry_max_delay: Duration,
    pub errors_tolerance: ToleranceType,
    pub errors_log_enable: bool,
    pub errors_log_include_messages: bool,
    /// Everything that was submitted, for connector-specific and prefixed keys.
    pub originals: ConfigMap,
}

fn required_str(parsed: &ParsedConfig, key: &str) -> Result<String> {
    parsed
        .string(key)
        .or_else(|| parsed.class(key))
        .map(str::to_owned)
        .ok_or_else(|| ConnectError::missing_required(key))
}

impl ConnectorConfig {
    pub fn from_parsed(p: &ParsedConfig) -> Result<Self> {
        let tasks_max = p.int(TASKS_MAX_CONFIG).unwrap_or(TASKS_MAX_DEFAULT);
        Ok(Self {
            name: required_str(p, NAME_CONFIG)?,
            connector_class: required_str(p, CONNECTOR_CLASS_CONFIG)?,
            tasks_max: usize::try_from(tasks_max)
                .ok()
                .and_then(NonZeroUsize::new)
                .ok_or_else(|| {
                    ConnectError::invalid_value(
                        TASKS_MAX_CONFIG,
                        tasks_max,
                        "Value must be at least 1",
                    )
                })?,
            tasks_max_enforce: p.boolean(TASKS_MAX_ENFORCE_CONFIG).unwrap_or(true),
            key_converter: p.class(KEY_CONVERTER_CLASS_CONFIG).map(str::to_owned),
            value_converter: p.class(VALUE_CONVERTER_CLASS_CONFIG).map(str::to_owned),
            header_converter: p
                .class(HEADER_CONVERTER_CLASS_CONFIG)
                .unwrap_or(HEADER_CONVERTER_CLASS_DEFAULT)
                .to_owned(),
            transforms: p.list(TRANSFORMS_CONFIG).to_vec(),
            predicates: p.list(PREDICATES_CONFIG).to_vec(),
            errors_retry_timeout_ms: p.long(ERRORS_RETRY_TIMEOUT_CONFIG).unwrap_or(0),
            errors_retry_max_delay: Duration::from_millis(
                p.long(ERRORS_RETRY_MAX_DELAY_CONFIG)
                    .unwrap_or(ERRORS_RETRY_MAX_DELAY_DEFAULT)
                    .max(0) as u64,
            ),
            errors_tolerance: p
                .string(ERRORS_TOLERANCE_CONFIG)
                .unwrap_or("none")
                .parse()?,
            errors_log_enable: p.boolean(ERRORS_LOG_ENABLE_CONFIG).unwrap_or(false),
            errors_log_include_messages: p
                .boolean(ERRORS_LOG_INCLUDE_MESSAGES_CONFIG)
                .unwrap_or(false),
            originals: p.originals().clone(),
        })
    }

    /// Parses `props` with [`connector_config_def`]; fails on the first problem.
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        Self::from_parsed(&connector_config_def().parse(props)?)
    }
}

/// `tasks.max` and `tasks.max.enforce` alone: what the runtime needs to ask a connector for its
/// task configs and to check the answer (KIP-1004), without parsing the rest of the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TasksMax {
    pub max: NonZeroUsize,
    pub enforce: bool,
}

impl TasksMax {
    /// Parses both keys with their definitions (so `tasks.max` above [`TASKS_MAX_LIMIT`] fails
    /// with the same message as validation), ignoring every other key.
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = super::def::ConfigDef::new()
            .define(tasks_max_key())
            .define(tasks_max_enforce_key())
            .parse(props)?;
        let max = p.int(TASKS_MAX_CONFIG).unwrap_or(TASKS_MAX_DEFAULT);
        Ok(Self {
            max: usize::try_from(max)
                .ok()
                .and_then(NonZeroUsize::new)
                .ok_or_else(|| {
                    ConnectError::invalid_value(TASKS_MAX_CONFIG, max, "Value must be at least 1")
                })?,
            enforce: p.boolean(TASKS_MAX_ENFORCE_CONFIG).unwrap_or(true),
        })
    }

    /// Apache's `Worker.checkTasksMax`: more than `tasks.max` task configs is an error when
    /// enforced (Apache's `TooManyTasksException` message), otherwise `Ok(Some(warning))`.
    pub fn check(&self, connector: &str, num_tasks: usize) -> Result<Option<String>> {
        let max = self.max.get();
        if num_tasks <= max {
            return Ok(None);
        }
        if self.enforce {
            return Err(ConnectError::config(format!(
                "The connector {connector} has generated {num_tasks} tasks, which is greater than {max}, \
                 the maximum number of tasks it is configured to create. \
                 This behaviour should be considered a bug and is disallowed. \
                 If necessary, it can be permitted by reconfiguring the connector \
                 with '{TASKS_MAX_ENFORCE_CONFIG}' set to false; however, this option will be removed in a \
                 future release of Kafka Connect."
            )));
        }
        Ok(Some(format!(
            "The connector {connector} has generated {num_tasks} tasks, which is greater than {max}, \
             the maximum number of tasks it is configured to create. \
             This behavior should be considered a bug and will be disallowed \
             in future releases of Kafka Connect. Please report this to the \
             maintainers of the connector and request that they adjust their \
             connector's taskConfigs() method to respect the maxTasks parameter."
        )))
    }
}

/// Source connector keys, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConnectorConfig {
    pub common: ConnectorConfig,
    pub exactly_once_support: ExactlyOnceSupportLevel,
    pub transaction_boundary: TransactionBoundary,
    /// `None`: use the worker's `offset.flush.interval.ms`.
    pub transaction_boundary_interval: Option<Duration>,
    pub offsets_storage_topic: Option<String>,
}

impl SourceConnectorConfig {
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = source_connector_config_def().parse(props)?;
        Ok(Self {
            common: ConnectorConfig::from_parsed(&p)?,
            exactly_once_support: p
                .string(EXACTLY_ONCE_SUPPORT_CONFIG)
                .unwrap_or("requested")
                .parse()?,
            transaction_boundary: p
                .string(TRANSACTION_BOUNDARY_CONFIG)
                .unwrap_or("poll")
                .parse()?,
            transaction_boundary_interval: p
                .long(TRANSACTION_BOUNDARY_INTERVAL_CONFIG)
                .map(|ms| Duration::from_millis(ms.max(0) as u64)),
            offsets_storage_topic: p.string(OFFSETS_TOPIC_CONFIG).map(str::to_owned),
        })
    }
}

/// Sink connector keys, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct SinkConnectorConfig {
    pub common: ConnectorConfig,
    pub topics: Vec<String>,
    pub topics_regex: Option<String>,
    pub dlq_topic: Option<String>,
    pub dlq_topic_replication_factor: i16,
    pub dlq_context_headers_enable: bool,
}

impl SinkConnectorConfig {
    /// Parses and applies the cross-key topic rules of [`validate_sink_topics`].
    pub fn parse(props: &ConfigMap) -> Result<Self> {
        let p = sink_connector_config_def().parse(props)?;
        if let Some((_, message)) = sink_topic_errors(props).into_iter().next() {
            return Err(ConnectError::config(message));
        }
        let non_blank = |key| {
            p.string(key)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
        };
        Ok(Self {
            common: ConnectorConfig::from_parsed(&p)?,
            topics: p
                .list(TOPICS_CONFIG)
                .iter()
                .filter(|t| !t.is_empty())
                .cloned()
                .collect(),
            topics_regex: non_blank(TOPICS_REGEX_CONFIG),
            dlq_topic: non_blank(DLQ_TOPIC_NAME_CONFIG),
            dlq_topic_replication_factor: p
                .short(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG)
                .unwrap_or(DLQ_TOPIC_REPLICATION_FACTOR_DEFAULT),
            dlq_context_headers_enable: p
                .boolean(DLQ_CONTEXT_HEADERS_ENABLE_CONFIG)
                .unwrap_or(false),
        })
    }
}

/// The sink rules across keys (Java's `SinkConnectorConfig.validate`), as `(key, message)`.
pub fn sink_topic_errors(props: &ConfigMap) -> Vec<(&'static str, String)> {
    let blank = |k: &str| props.get(k).is_none_or(|v| v.trim().is_empty());
    let has_topics = !blank(TOPICS_CONFIG);
    let has_regex = !blank(TOPICS_REGEX_CONFIG);
    let mut errors = Vec::new();
    if has_topics && has_regex {
        let m = format!(
            "{TOPICS_CONFIG} and {TOPICS_REGEX_CONFIG} are mutually exclusive options, but both are set."
        );
        errors.push((TOPICS_CONFIG, m.clone()));
        errors.push((TOPICS_REGEX_CONFIG, m));
    }
    if !has_topics && !has_regex {
        let m = format!("Must configure one of {TOPICS_CONFIG} or {TOPICS_REGEX_CONFIG}");
        errors.push((TOPICS_CONFIG, m.clone()));
        errors.push((TOPICS_REGEX_CONFIG, m));
    }
    let dlq = props
        .get(DLQ_TOPIC_NAME_CONFIG)
        .map(|s| s.trim())
        .unwrap_or("");
    if !dlq.is_empty() && has_topics {
        let topics: Vec<&str> = props[TOPICS_CONFIG].split(',').map(str::trim).collect();
        if topics.contains(&dlq) {
            errors.push((
                TOPICS_CONFIG,
                format!(
                    "The DLQ topic '{dlq}' may not be included in the list of topics ('{TOPICS_CONFIG}=[{}]') consumed by the connector",
                    topics.join(", ")
                ),
            ));
        }
    }
    errors
}

/// Validates a sink connector's framework keys, including the cross-key topic rules.
pub fn validate_sink_topics(props: &ConfigMap, values: &mut [ConfigValue]) {
    for (key, message) in sink_topic_errors(props) {
        if let Some(v) = values.iter_mut().find(|v| v.name == key) {
            v.add_error(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn tasks_max_above_the_limit_is_a_validation_error() {
        let too_many = (TASKS_MAX_LIMIT + 1).to_string();
        for value in [too_many.as_str(), "2147483647"] {
            let p = props(&[
                (NAME_CONFIG, "c"),
                (CONNECTOR_CLASS_CONFIG, "X"),
                (TASKS_MAX_CONFIG, value),
            ]);
            let values = connector_config_def().validate(&p);
            let v = values.iter().find(|v| v.name == TASKS_MAX_CONFIG).unwrap();
            assert_eq!(
                v.errors,
                [format!(
                    "Invalid value {value} for configuration tasks.max: Value must be no more than {TASKS_MAX_LIMIT}"
                )]
            );
            let err = TasksMax::parse(&p).unwrap_err();
            assert_eq!(err.message(), v.errors[0]);
            assert!(ConnectorConfig::parse(&p).is_err());
        }
        let p = props(&[(TASKS_MAX_CONFIG, &TASKS_MAX_LIMIT.to_string())]);
        assert_eq!(TasksMax::parse(&p).unwrap().max.get(), 1024);
    }

    #[test]
    fn tasks_max_defaults_and_parses_enforce() {
        let t = TasksMax::parse(&props(&[])).unwrap();
        assert_eq!((t.max.get(), t.enforce), (1, true));
        let t = TasksMax::parse(&props(&[
            (TASKS_MAX_CONFIG, " 3 "),
            (TASKS_MAX_ENFORCE_CONFIG, "false"),
        ]))
        .unwrap();
        assert_eq!((t.max.get(), t.enforce), (3, false));
        assert!(TasksMax::parse(&props(&[(TASKS_MAX_CONFIG, "0")])).is_err());
        assert!(TasksMax::parse(&props(&[(TASKS_MAX_ENFORCE_CONFIG, "maybe")])).is_err());
    }

    #[test]
    fn too_many_task_configs_fail_when_enforced_and_warn_otherwise() {
        let enforced = TasksMax {
            max: NonZeroUsize::new(2).unwrap(),
            enforce: true,
        };
        assert_eq!(enforced.check("c", 2).unwrap(), None);
        assert_eq!(
            enforced.check("c", 3).unwrap_err().message(),
            "The connector c has generated 3 tasks, which is greater than 2, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect."
        );
        let lenient = TasksMax {
            enforce: false,
            ..enforced
        };
        let warning = lenient.check("c", 3).unwrap().unwrap();
        assert!(
            warning.starts_with("The connector c has generated 3 tasks, which is greater than 2")
        );
    }
}
