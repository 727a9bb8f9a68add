//! The connector API: what a connector author compiles against.
//!
//! This crate depends on no runtime (no tokio runtime, rdkafka, axum or sqlx).
//!
//! Map of modules:
//!
//! - [`error`]: [`ConnectError`], which tells the runtime what to do (retry, tolerate, reject, fail).
//! - [`cancel`]: a runtime-agnostic [`CancellationToken`] and the [`Timer`] the runtime supplies.
//! - [`data`]: Connect's data model ([`Schema`], [`Value`], [`Struct`], logical types).
//! - [`record`]: [`SourceRecord`], [`SinkRecord`], headers, topic partitions.
//! - [`config`]: [`ConfigDef`], validation, `ConfigInfos`, the shared connector keys and typed views.
//! - [`connector`]: the source/sink connector and task traits, their contexts, the erased twins.
//! - [`converter`]: [`Converter`]s (JSON, string, bytes) and header converters, looked up by class name.
//! - [`file_access`]: the local directories the worker lets connectors read and write.
//! - [`kafka_clients`]: Java client keys to librdkafka's, for connectors with their own clients.
//! - [`plugin`]: the [`PluginRegistry`] that lists and instantiates connectors by class or alias.

pub mod cancel;
pub mod config;
pub mod connector;
pub mod converter;
pub mod data;
pub mod error;
pub mod file_access;
pub mod java_order;
pub mod kafka_clients;
pub mod plugin;
pub mod record;

pub use cancel::{CancellationToken, Timer};
pub use config::{ConfigDef, ConfigInfos, ConfigKey, ConfigMap, ConfigValue};
pub use connector::{
    ConnectorContext, ConnectorTransactionBoundaries, ExactlyOnceSupport, SinkConnector, SinkTask,
    SinkTaskContext, SourceConnector, SourceTask, SourceTaskContext, TransactionContext,
};
pub use converter::{Converter, HeaderConverter, converter_for_class, header_converter_for_class};
pub use data::{Schema, SchemaAndValue, Struct, Value};
pub use error::{ConnectError, ErrorKind, Result};
pub use file_access::FileAccess;
pub use plugin::{
    ConnectorInstance, PluginDesc, PluginInfo, PluginRegistry, PluginType, TaskInstance,
};
pub use record::{SinkRecord, SourceOffset, SourcePartition, SourceRecord, TopicPartition};
