//! The object-store sink (strategy C, deterministic names) over `object_store`: local
//! filesystem (`file:///dir`) and S3-compatible stores (`s3://bucket/prefix`).
//!
//! ```text
//!  put: records appended to a buffer per topic-partition
//!     buffer reaches flush.size records, or the next record's timestamp falls in a later
//!     rotate.interval.ms window ──> upload
//!        <prefix>/<topic>/partition=<p>/<topic>+<p>+<first offset, 20 digits>.jsonl
//!        and mark <last offset + 1> as committable for the partition
//!  pre_commit: only offsets of fully uploaded files
//!  close / stop: unwritten buffers are dropped (the next owner re-reads them)
//! ```
//!
//! # Guarantees
//!
//! - Files are cut only at repeatable boundaries (a record count, record timestamps), never by
//!   wall-clock time, and the consumer always resumes at the first offset after an uploaded
//!   file. So a replay, after a crash or an offset reset to the start, rewrites byte-identical
//!   files under identical names: the store holds each record once and no two files overlap.
//! - An upload is a single PUT (atomic on S3; a rename on the local filesystem), so a file is
//!   never seen half-written.
//! - A tail shorter than `flush.size` stays unwritten until more records arrive (or the
//!   timestamp window closes); this is the price of determinism.
//!
//! Formats: JSON lines (`format=jsonl`): each line is the record value as schemaless JSON.

mod config;
pub mod format;
pub mod joda;
pub mod partitioner;
pub mod s3config;
mod sink;
pub mod writer;

pub use config::*;
pub use sink::{
    Confluent, Flavor, ObjectStoreSinkConnector, ObjectStoreSinkTask, Own, S3SinkConnector,
    S3SinkTask, StorageSinkConnector, StorageSinkTask, object_name,
};

pub const SINK_CONNECTOR_CLASS: &str = "connect_connectors::objectstore::ObjectStoreSinkConnector";
pub const SINK_TASK_CLASS: &str = "connect_connectors::objectstore::ObjectStoreSinkTask";
/// Confluent's S3 sink, whose keys, formats, partitioners and object names this sink takes.
pub const S3_SINK_CONNECTOR_CLASS: &str = "io.confluent.connect.s3.S3SinkConnector";
pub const S3_SINK_TASK_CLASS: &str = "io.confluent.connect.s3.S3SinkTask";
