//! [`HerderError`]: why the herder did not do what it was asked.

use crate::runtime::offsets_admin::OffsetsError;
use crate::storage::StorageError;

/// Why the herder did not do what it was asked. The messages are Connect's.
#[derive(Debug, thiserror::Error)]
pub enum HerderError {
    /// No such connector or task (the message says which, in Connect's words).
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    /// Only the leader may do this; `leader_url` is where to send it, when known.
    #[error("this worker is not the leader")]
    NotLeader { leader_url: Option<String> },
    /// The task runs on another worker; `owner_url` is that worker, when known.
    #[error("the task runs on another worker")]
    NotOwner { owner_url: Option<String> },
    /// A rebalance is under way and did not end in time.
    #[error(
        "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"
    )]
    Rebalancing,
    /// The request is invalid (a bad config, offsets, a connector of the wrong type).
    #[error("{0}")]
    BadRequest(String),
    /// A signed internal request whose signature does not match.
    #[error("{0}")]
    Forbidden(String),
    /// The worker cannot answer yet (e.g. no session key read yet).
    #[error("{0}")]
    Starting(String),
    /// The config, offsets or status topic could not be read or written.
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// Anything else that failed on the way (Kafka, fencing, a connector).
    #[error("{0}")]
    Failed(String),
    /// The herder has stopped.
    #[error("the herder has stopped")]
    Stopped,
}

impl From<OffsetsError> for HerderError {
    fn from(e: OffsetsError) -> Self {
        match e {
            OffsetsError::BadRequest(m) => HerderError::BadRequest(m),
            OffsetsError::Failed(m) => HerderError::Failed(m),
        }
    }
}
