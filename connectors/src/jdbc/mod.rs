//! Postgres connectors (`jdbc`-style, Postgres only for now), over `sqlx`.
//!
//! - [`PostgresSourceConnector`]: new rows of tables by a strictly increasing column
//!   (`incrementing` or `timestamp+incrementing` mode); replayable, so it supports exactly-once,
//!   and with `transaction.boundary=connector` it commits at the rows' source transactions.
//! - [`PostgresSinkConnector`] (strategy A, idempotent writes): upserts by primary key,
//!   tombstones delete; replays leave the table unchanged.
//! - [`PostgresOffsetsSinkConnector`] (strategy B, offsets with the data): rows and consumed
//!   offsets in one database transaction; the task rewinds the consumer to the stored offsets.
//!
//! Values are sent as `text[]` arrays and cast by Postgres to the column types, so a batch of
//! any size is one statement. `pg` holds what the three share.

mod config;
pub(crate) mod pg;
mod sink;
mod source;
pub mod url;

pub use config::*;
pub use sink::{
    PostgresOffsetsSinkConnector, PostgresOffsetsSinkTask, PostgresSinkConnector, PostgresSinkTask,
};
pub use source::{PostgresSourceConnector, PostgresSourceTask};

pub const SOURCE_CONNECTOR_CLASS: &str = "connect_connectors::jdbc::PostgresSourceConnector";
pub const SOURCE_TASK_CLASS: &str = "connect_connectors::jdbc::PostgresSourceTask";
pub const SINK_CONNECTOR_CLASS: &str = "connect_connectors::jdbc::PostgresSinkConnector";
pub const SINK_TASK_CLASS: &str = "connect_connectors::jdbc::PostgresSinkTask";
pub const OFFSETS_SINK_CONNECTOR_CLASS: &str =
    "connect_connectors::jdbc::PostgresOffsetsSinkConnector";
pub const OFFSETS_SINK_TASK_CLASS: &str = "connect_connectors::jdbc::PostgresOffsetsSinkTask";
