//! `file` source and sink, compatible with Kafka's `FileStreamSourceConnector` /
//! `FileStreamSinkConnector`: same keys, source partition `{"filename": <file>}` and offset
//! `{"position": <byte offset after the line>}`, so offsets written by either implementation
//! resume in the other.
//!
//! Unlike Java, a missing `file` (stdin/stdout) is supported by the sink only: reading standard
//! input has no resumable offset and would block the runtime.
//! Paths are confined to the directories the worker allows (its `file.connector.allowed.dirs`,
//! handed down as a [`connect_api::FileAccess`]): checked at validation
//! (`validate_with_files`, an error on `file`), when a task starts, and each time the source
//! opens its file. When the worker allows none, both connectors are refused.
//! File I/O is plain blocking `std::fs` on small reads, like Java's; these connectors are for
//! demos and tests, not throughput.

mod config;
mod sink;
mod source;

pub use config::*;
pub use sink::{FileStreamSinkConnector, FileStreamSinkTask};
pub use source::{FileStreamSourceConnector, FileStreamSourceTask};

pub const SOURCE_CONNECTOR_CLASS: &str = "connect_connectors::file::FileStreamSourceConnector";
pub const JAVA_SOURCE_CONNECTOR_CLASS: &str =
    "org.apache.kafka.connect.file.FileStreamSourceConnector";
pub const SOURCE_TASK_CLASS: &str = "connect_connectors::file::FileStreamSourceTask";
pub const JAVA_SOURCE_TASK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSourceTask";
pub const SINK_CONNECTOR_CLASS: &str = "connect_connectors::file::FileStreamSinkConnector";
pub const JAVA_SINK_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
pub const SINK_TASK_CLASS: &str = "connect_connectors::file::FileStreamSinkTask";
pub const JAVA_SINK_TASK_CLASS: &str = "org.apache.kafka.connect.file.FileStreamSinkTask";
