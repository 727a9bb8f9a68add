//! The object-store sink (strategy C, deterministic names) over `object_store`: local
//! filesystem (`file:///dir`) and S3-compatible stores, under two sets of keys:
//!
//! - this sink's own (`connect_connectors::objectstore::ObjectStoreSinkConnector`, [`config`]):
//!   `store.url`, JSON lines named `<prefix>/<topic>/partition=<p>/<topic>+<p>+<offset, 20
//!   digits>.jsonl`;
//! - Confluent's S3 sink's (`io.confluent.connect.s3.S3SinkConnector`, [`s3config`]): its
//!   formats, partitioners and names `<topics.dir>/<topic>/<encoded partition>/<topic>+<p>+<offset,
//!   10 digits>.<ext>`.
//!
//! ```text
//!  sink (connector, task: skip what was handled, errant records, rewinds)
//!    └▶ writer (per topic-partition: rotation, uploads, multipart)
//!         ├▶ partitioner ─▶ joda (path.format, timezone)
//!         └▶ format::{lines (JSON, ByteArray), avro, parquet} ─▶ connect-registry's AvroData
//!  config / s3config ─▶ writer::Settings + the store
//! ```
//!
//! # Guarantees
//!
//! - Files are cut only at repeatable boundaries (a record count, record times, schemas,
//!   encoded partitions) unless a wall clock is configured (Confluent's `Wallclock` extractor,
//!   `rotate.schedule.interval.ms`), and the consumer always resumes at the first offset after
//!   uploaded files. So a replay, after a crash or an offset reset to the start, rewrites
//!   byte-identical files under identical names: the store holds each record once and no two
//!   files overlap. See [`writer`] for uploads, multipart parts and their failures.
//! - An upload is a single PUT (atomic on S3; a rename on the local filesystem) or a multipart
//!   upload (visible only once completed), so a file is never seen half-written.
//! - A tail shorter than `flush.size` stays unwritten until more records arrive (or a time
//!   rule ends it); this is the price of determinism.

pub mod config;
pub mod format;
pub mod joda;
pub mod partitioner;
pub mod profile;
pub mod s3config;
mod sink;
pub mod tagging;
pub mod views;
pub mod writer;

pub use config::*;
pub use sink::{
    Confluent, Flavor, ObjectStoreSinkConnector, ObjectStoreSinkTask, Own, S3SinkConnector,
    S3SinkTask, StorageSinkConnector, StorageSinkTask,
};

pub const SINK_CONNECTOR_CLASS: &str = "connect_connectors::objectstore::ObjectStoreSinkConnector";
pub const SINK_TASK_CLASS: &str = "connect_connectors::objectstore::ObjectStoreSinkTask";
/// Confluent's S3 sink, whose keys, formats, partitioners and object names this sink takes.
pub const S3_SINK_CONNECTOR_CLASS: &str = "io.confluent.connect.s3.S3SinkConnector";
pub const S3_SINK_TASK_CLASS: &str = "io.confluent.connect.s3.S3SinkTask";
