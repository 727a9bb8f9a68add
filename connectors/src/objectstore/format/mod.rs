//! File formats of the object-store sink, Confluent's `format.class` values:
//!
//! | class                  | module       | extension                          |
//! |------------------------|--------------|------------------------------------|
//! | `...json.JsonFormat`   | [`lines`]    | `.json` (`.jsonl` for `format=jsonl`), `.gz` after it with `s3.compression.type=gzip` |
//! | `...bytearray.ByteArrayFormat` | [`lines`] | `format.bytearray.extension` (`.bin`), idem |
//! | `...avro.AvroFormat`   | [`avro`]     | `.avro`                            |
//! | `...parquet.ParquetFormat` | [`parquet`] | `<codec>.parquet` (`.snappy.parquet`) |
//!
//! A [`RecordWriter`] is one open file. It encodes records into bytes it holds in
//! [`RecordWriter::output`]; the task drains that buffer into multipart-upload parts when it
//! passes `s3.part.size`, so a file's memory stays bounded whatever its length. Every writer is
//! deterministic: the same records in the same order give the same bytes (no random sync
//! markers, no clock).

pub mod avro;
pub mod lines;
pub mod parquet;

use connect_api::data::{Schema, Value};
use connect_api::error::Result;
use connect_api::record::SinkRecord;

pub const JSON_FORMAT: &str = "io.confluent.connect.s3.format.json.JsonFormat";
pub const BYTEARRAY_FORMAT: &str = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat";
pub const AVRO_FORMAT: &str = "io.confluent.connect.s3.format.avro.AvroFormat";
pub const PARQUET_FORMAT: &str = "io.confluent.connect.s3.format.parquet.ParquetFormat";

/// One open file of some format.
pub trait RecordWriter: Send {
    /// Appends one record. On an error (a data error: the record cannot be written in this
    /// format) the file is as it was before the call.
    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()>;
    /// Whether [`Self::write`] would accept the record, changing nothing (the task checks
    /// the key and header files before writing any file of a record).
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()>;
    /// Bytes of the file encoded so far and not yet taken.
    fn output(&mut self) -> &mut Vec<u8>;
    /// Ends the file: what is still held (last block, footer) goes to [`Self::output`].
    fn finish(&mut self) -> Result<()>;
}

/// The configured format.
#[derive(Debug, Clone)]
pub enum Format {
    /// One JSON value per line (Confluent's `JsonFormat`; this sink's `jsonl`).
    Json(lines::JsonOptions),
    /// The value's bytes followed by a separator (Confluent's `ByteArrayFormat`).
    ByteArray(lines::ByteArrayOptions),
    Avro(avro::AvroOptions),
    Parquet(parquet::ParquetOptions),
}

impl Format {
    /// The object name's extension, dot included.
    pub fn extension(&self) -> String {
        match self {
            Self::Json(o) => format!("{}{}", o.extension, o.compression.extension()),
            Self::ByteArray(o) => format!("{}{}", o.extension, o.compression.extension()),
            Self::Avro(_) => ".avro".to_owned(),
            Self::Parquet(o) => format!("{}.parquet", o.codec.extension()),
        }
    }

    pub fn new_writer(&self) -> Box<dyn RecordWriter> {
        match self {
            Self::Json(o) => Box::new(lines::JsonWriter::new(o.clone())),
            Self::ByteArray(o) => Box::new(lines::ByteArrayWriter::new(o.clone())),
            Self::Avro(o) => Box::new(avro::AvroFileWriter::new(o.clone())),
            Self::Parquet(o) => Box::new(parquet::ParquetFileWriter::new(o.clone())),
        }
    }
}

/// The record's value and schema (the view a format writes).
pub fn value_view(record: &SinkRecord) -> (Option<&Schema>, &Value) {
    (record.value_schema.as_ref(), &record.value)
}
