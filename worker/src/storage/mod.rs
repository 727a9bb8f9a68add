//! Kafka-backed internal topics in Apache Kafka Connect's formats.
//!
//! - [`log`]: [`KafkaBasedLog`], a topic tailed from the beginning with read-to-end and a producer;
//!   [`log::InternalLog`], what a store reads and writes: such a topic or a [`local_log`]
//! - [`local_log`]: the standalone worker's logs: in memory (config, status) and in Apache's
//!   offsets file ([`java_serial`]: the Java serialization of a `HashMap<byte[], byte[]>`)
//! - [`topics`]: creating and validating the config, offsets and status topics
//! - [`config`]: [`ConfigBackingStore`] on the config topic (connector and task configs, commits,
//!   target states, restart requests, session key, task-count records) and its
//!   [`ClusterConfigState`] snapshot; [`config_codec`] holds the pure key/value codec and
//!   state machine
//! - [`offsets`]: [`OffsetBackingStore`] (one offsets topic) and [`ConnectorOffsetBackingStore`]
//!   (per-connector topic over the worker's global one); byte-exact Java `JsonConverter` keys
//! - [`status`]: [`StatusBackingStore`] on the status topic, with the safe-write generation rule
//! - [`types`]: Connect-named value types shared by the stores
//!
//! Every store follows the same shape: a pure codec (unit-tested byte for byte against the spec),
//! an in-memory state fed by the log's consumer thread, and async write methods that resolve when
//! Kafka acknowledged the write. Readers call `refresh`/`read_to_end` before acting on state.

pub mod config;
pub mod config_codec;
pub mod java_serial;
pub mod json;
pub mod local_log;
pub mod log;
pub mod log_record;
pub mod offsets;
pub mod status;
pub mod topics;
pub mod types;

pub use config::{ConfigBackingStore, ConfigStoreSettings, ConfigWriter};
pub use config_codec::{ClusterConfigState, ConfigUpdate};
pub use log::{ConsumedRecord, KafkaBasedLog, LogConfig, RawRecord};
pub use offsets::{
    ConnectorOffsetBackingStore, OffsetBackingStore, OffsetMap, OffsetStoreSettings, PartitionMap,
};
pub use status::{StatusBackingStore, StatusStoreSettings};
pub use topics::{InternalTopic, TopicSettings, ensure_topic};
pub use types::{
    ConnectorState, ConnectorStatus, ConnectorTaskId, RestartRequest, SessionKey, TargetState,
    TaskStatus, TopicStatus,
};

use rdkafka::error::KafkaError;

/// Errors of the storage layer. Messages name what was attempted and the topic or connector.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("failed to {what}: {source}")]
    Kafka {
        what: String,
        #[source]
        source: KafkaError,
    },
    #[error("topic '{0}' does not exist")]
    TopicMissing(String),
    /// An internal topic exists with settings Connect refuses (Connect's own message).
    #[error("{0}")]
    InvalidTopic(String),
    #[error("timed out while {0}")]
    Timeout(String),
    /// The log's consumer thread stopped.
    #[error("the internal topic log is closed")]
    Closed,
    #[error("{0}")]
    Io(String),
    /// A value that cannot be written in Connect's format (e.g. a nested offset value).
    #[error("{0}")]
    Data(String),
    /// A privileged (transactional) config write failed; the writer must reclaim privileges.
    #[error(
        "Failed to write to config topic; this may be due to a transient error and the request can be safely retried"
    )]
    Fenced(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl StorageError {
    pub(crate) fn kafka(what: impl Into<String>, source: KafkaError) -> Self {
        StorageError::Kafka {
            what: what.into(),
            source,
        }
    }
}

/// Runs `fut` with a deadline, mapping expiry to [`StorageError::Timeout`].
pub(crate) async fn with_timeout<T>(
    timeout: std::time::Duration,
    what: &str,
    fut: impl std::future::Future<Output = Result<T, StorageError>>,
) -> Result<T, StorageError> {
    tokio::time::timeout(timeout, fut)
        .await
        .map_err(|_| StorageError::Timeout(what.to_owned()))?
}
