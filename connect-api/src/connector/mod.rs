//! The connector and task traits, their contexts, and the erased twins the registry stores.
//!
//! - `context`: what the runtime hands to connectors and tasks ([`SourceTaskContext`],
//!   [`SinkTaskContext`], [`ConnectorContext`]) and the runtime-implemented traits inside them
//!   ([`OffsetStorageReader`], [`TransactionContext`], [`ErrantRecordReporter`]...).
//! - `source`: [`SourceConnector`], [`SourceTask`] and the exactly-once hooks.
//! - `sink`: [`SinkConnector`], [`SinkTask`].
//! - `erased`: object-safe [`DynSourceConnector`] / [`DynSinkConnector`], implemented for every
//!   typed connector, so the plugin registry can hold any of them behind one pointer type.

mod context;
mod erased;
mod sink;
mod source;

pub use context::{
    ConnectorContext, ConnectorControl, ErrantRecordReporter, OffsetStorageReader, PluginMetrics,
    SinkTaskContext, SinkTaskControl, SourceTaskContext, TransactionContext,
};
pub use erased::{DynSinkConnector, DynSourceConnector};
pub use sink::{SinkConnector, SinkOffsets, SinkTask};
pub use source::{
    ConnectorTransactionBoundaries, ExactlyOnceSupport, RecordMetadata, SourceConnector,
    SourceOffsets, SourceTask,
};
