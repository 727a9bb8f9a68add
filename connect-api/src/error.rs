//! The one error type of the connector API.
//!
//! A connector never decides *how* the runtime recovers; it says *what kind* of failure happened
//! and the runtime maps the kind to an action:
//!
//! | kind        | runtime action                                                        |
//! |-------------|-----------------------------------------------------------------------|
//! | `Retriable` | call the same method again later (after a backoff)                    |
//! | `Data`      | this record is bad: apply `errors.tolerance` / dead-letter queue       |
//! | `Config`    | the configuration is invalid: reject it or fail the connector          |
//! | `Fatal`     | stop the task or connector and mark it FAILED with the error as trace |

use std::error::Error as StdError;

/// A boxed cause carried for the `trace` of a FAILED task.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Short for `Result<T, ConnectError>`.
pub type Result<T, E = ConnectError> = std::result::Result<T, E>;

/// What the runtime should do about a failure; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Retriable,
    Data,
    Config,
    Fatal,
}

/// A failure reported by a connector, task, converter or config parser.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// Transient; the same call may succeed if repeated (Java's `RetriableException`).
    #[error("{message}")]
    Retriable {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
    /// A record could not be converted or processed (Java's `DataException`).
    #[error("{message}")]
    Data {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
    /// A configuration value is missing or invalid (Java's `ConfigException`).
    #[error("{message}")]
    Config { message: String },
    /// Anything else: the task or connector cannot continue (Java's `ConnectException`).
    #[error("{message}")]
    Fatal {
        message: String,
        #[source]
        source: Option<BoxError>,
    },
}

impl ConnectError {
    pub fn retriable(message: impl Into<String>) -> Self {
        Self::Retriable {
            message: message.into(),
            source: None,
        }
    }

    pub fn data(message: impl Into<String>) -> Self {
        Self::Data {
            message: message.into(),
            source: None,
        }
    }

    pub fn config(message: impl Into<String>) -> Self {
        Self::Config {
            message: message.into(),
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        Self::Fatal {
            message: message.into(),
            source: None,
        }
    }

    /// Connect's `ConfigException(name, value, message)` text:
    /// `Invalid value <v> for configuration <name>: <reason>`.
    pub fn invalid_value(name: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        Self::config(invalid_value_message(name, value, reason))
    }

    /// Connect's text for a required key without a value.
    pub fn missing_required(name: &str) -> Self {
        Self::config(missing_required_message(name))
    }

    /// Attaches the underlying cause (kept for the task's `trace`). `Config` errors carry no cause.
    pub fn with_source(self, cause: impl Into<BoxError>) -> Self {
        let cause = Some(cause.into());
        match self {
            Self::Retriable { message, .. } => Self::Retriable {
                message,
                source: cause,
            },
            Self::Data { message, .. } => Self::Data {
                message,
                source: cause,
            },
            Self::Fatal { message, .. } => Self::Fatal {
                message,
                source: cause,
            },
            config @ Self::Config { .. } => config,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Retriable { .. } => ErrorKind::Retriable,
            Self::Data { .. } => ErrorKind::Data,
            Self::Config { .. } => ErrorKind::Config,
            Self::Fatal { .. } => ErrorKind::Fatal,
        }
    }

    pub fn is_retriable(&self) -> bool {
        self.kind() == ErrorKind::Retriable
    }

    /// The message without the cause chain.
    pub fn message(&self) -> &str {
        match self {
            Self::Retriable { message, .. }
            | Self::Data { message, .. }
            | Self::Config { message }
            | Self::Fatal { message, .. } => message,
        }
    }
}

pub(crate) fn invalid_value_message(
    name: &str,
    value: impl std::fmt::Display,
    reason: &str,
) -> String {
    if reason.is_empty() {
        format!("Invalid value {value} for configuration {name}")
    } else {
        format!("Invalid value {value} for configuration {name}: {reason}")
    }
}

pub(crate) fn missing_required_message(name: &str) -> String {
    format!("Missing required configuration \"{name}\" which has no default value.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_connect() {
        let e = ConnectError::invalid_value("tasks.max", "abc", "Not a number of type INT");
        assert_eq!(
            e.to_string(),
            "Invalid value abc for configuration tasks.max: Not a number of type INT"
        );
        assert_eq!(
            ConnectError::missing_required("topic").to_string(),
            "Missing required configuration \"topic\" which has no default value."
        );
        assert_eq!(e.kind(), ErrorKind::Config);
    }

    #[test]
    fn source_is_kept() {
        let io = std::io::Error::other("disk gone");
        let e = ConnectError::fatal("failed to read file").with_source(io);
        assert_eq!(
            std::error::Error::source(&e).map(|s| s.to_string()),
            Some("disk gone".to_owned())
        );
    }
}
