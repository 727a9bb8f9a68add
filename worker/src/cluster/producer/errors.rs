//! [`ProducerError`], what a failed step means for the producer, and [`Retry`], whether a
//! failed step may be tried again.

use crate::cluster::client::ClientError;

/// What a producer error means for the producer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProducerError {
    /// The producer is unusable (fenced, not authorized...): the task must fail.
    #[error("{0}")]
    Fatal(String),
    /// This transaction failed and must be aborted; the producer can be used again after.
    #[error("{0}")]
    Abortable(String),
    /// The topic does not exist (and was not created) within the delivery timeout.
    #[error("Topic {0} not present in metadata after the delivery timeout")]
    UnknownTopic(String),
}

/// Whether a failed step may be tried again.
pub(super) enum Retry {
    Now(String),
    Never(ProducerError),
}

impl Retry {
    pub(super) fn from_client(e: ClientError) -> Self {
        if e.is_fatal() {
            Retry::Never(fatal_client(e))
        } else {
            Retry::Now(e.to_string())
        }
    }
}

pub(super) fn fatal_client(e: ClientError) -> ProducerError {
    ProducerError::Fatal(e.to_string())
}

pub(super) fn unsupported(api: &str) -> ProducerError {
    ProducerError::Fatal(format!("the broker does not support {api}"))
}
