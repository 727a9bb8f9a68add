//! Change data capture from PostgreSQL, natively: logical replication with `pgoutput`
//! (a replication slot and a publication), records in Debezium's format under Debezium's
//! configuration keys, exactly-once on this worker's transactional runtime.
//!
//! - [`config`]: the keys (Debezium's names and defaults; those not implemented are refused
//!   unless left at their defaults).
//! - [`types`]: PostgreSQL types to Connect schemas and values, as Debezium maps them.
//! - [`envelope`]: the change event (key, envelope, `source` block) and its schemas.
//! - [`source`]: the connector and its task (snapshot through an exported snapshot, then the
//!   stream from the slot; the slot confirmed only past what Kafka committed).

pub mod config;
pub mod envelope;
mod segments;
mod source;
pub mod types;

pub use source::{PostgresCdcSourceConnector, PostgresCdcSourceTask};

pub const CONNECTOR_CLASS: &str = "connect_connectors::cdc::PostgresCdcSourceConnector";
pub const TASK_CLASS: &str = "connect_connectors::cdc::PostgresCdcSourceTask";
