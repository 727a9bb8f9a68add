//! The group-membership client's errors and the Kafka error codes it reacts to; which of them
//! are fatal (end start-up or the member) is decided here, see [`ClientError::is_fatal`].

use std::time::Duration;

use kafka_protocol::messages::ApiKey;

/// Kafka error codes this module reacts to.
pub mod codes {
    pub const NONE: i16 = 0;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    pub const INVALID_GROUP_ID: i16 = 24;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const INVALID_SESSION_TIMEOUT: i16 = 26;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
    pub const ILLEGAL_SASL_STATE: i16 = 34;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
    pub const MEMBER_ID_REQUIRED: i16 = 79;
    pub const GROUP_MAX_SIZE_REACHED: i16 = 81;
    pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;

    /// Errors no retry can fix: the worker must stop.
    pub fn is_fatal(code: i16) -> bool {
        matches!(
            code,
            INCONSISTENT_GROUP_PROTOCOL
                | INVALID_GROUP_ID
                | INVALID_SESSION_TIMEOUT
                | GROUP_AUTHORIZATION_FAILED
                | UNSUPPORTED_VERSION
                | GROUP_MAX_SIZE_REACHED
        )
    }

    /// Errors that mean the coordinator moved or is starting: find it again.
    pub fn needs_rediscovery(code: i16) -> bool {
        matches!(
            code,
            COORDINATOR_LOAD_IN_PROGRESS | COORDINATOR_NOT_AVAILABLE | NOT_COORDINATOR
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("i/o error talking to {broker}: {source}")]
    Io {
        broker: String,
        #[source]
        source: std::io::Error,
    },
    #[error("request to {broker} timed out after {timeout:?}")]
    Timeout { broker: String, timeout: Duration },
    #[error("malformed kafka protocol message from {broker}: {reason}")]
    Protocol { broker: String, reason: String },
    #[error("broker {broker} does not support {api:?} versions {min}..={max}")]
    Unsupported {
        broker: String,
        api: ApiKey,
        min: i16,
        max: i16,
    },
    #[error("broker error code {code} in {api:?}")]
    Broker { api: ApiKey, code: i16 },
    #[error("invalid Kafka security settings for the group membership client: {reason}")]
    Config { reason: String },
    #[error("TLS with broker {broker} failed: {reason}")]
    Tls { broker: String, reason: String },
    #[error(
        "broker {broker} closed the connection during the TLS handshake: it is probably not a \
         TLS listener (security.protocol is {protocol}; is {broker} a PLAINTEXT or \
         SASL_PLAINTEXT listener?)"
    )]
    NotTls {
        broker: String,
        protocol: &'static str,
    },
    #[error(
        "broker {broker} does not use SASL on this listener (SaslHandshake answered \
         ILLEGAL_SASL_STATE) although security.protocol is {protocol}: is {broker} an SSL or \
         PLAINTEXT listener?"
    )]
    NotSasl {
        broker: String,
        protocol: &'static str,
    },
    #[error("SASL authentication with {mechanism} failed at broker {broker}: {message}")]
    Authentication {
        broker: String,
        mechanism: &'static str,
        message: String,
    },
}

impl ClientError {
    /// Whether retrying cannot help (auth, TLS, version, config errors).
    pub fn is_fatal(&self) -> bool {
        match self {
            ClientError::Unsupported { .. }
            | ClientError::Config { .. }
            | ClientError::Tls { .. }
            | ClientError::NotTls { .. }
            | ClientError::NotSasl { .. }
            | ClientError::Authentication { .. } => true,
            ClientError::Broker { code, .. } => codes::is_fatal(*code),
            _ => false,
        }
    }
}
