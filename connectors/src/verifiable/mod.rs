//! `verifiable` source: every task emits consecutive sequence numbers, the workhorse of the
//! exactly-once tests and benchmarks. Compatible with Kafka's
//! `org.apache.kafka.connect.tools.VerifiableSourceConnector`: same keys, partition
//! `{"id": <task>}`, offset `{"seqno": <n>}`, key INT32 task id, value INT64 seqno (or a struct
//! with `complete.record.data=true`), resuming at stored seqno + 1.
//!
//! Our additions: `batch.size` records per poll (Kafka emits 1), `max.records` per task, and
//! `transaction.records`: with `transaction.boundary=connector` the task asks to commit after
//! every record whose `seqno + 1` is a multiple of it, so boundaries fall at the same seqnos
//! across restarts.

mod config;
mod source;

pub use config::*;
pub use source::{VerifiableSourceConnector, VerifiableSourceTask};

pub const CONNECTOR_CLASS: &str = "connect_connectors::verifiable::VerifiableSourceConnector";
pub const JAVA_CONNECTOR_CLASS: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
pub const TASK_CLASS: &str = "connect_connectors::verifiable::VerifiableSourceTask";
pub const JAVA_TASK_CLASS: &str = "org.apache.kafka.connect.tools.VerifiableSourceTask";
