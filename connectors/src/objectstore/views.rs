//! What a file holds of a record (Confluent's `RecordView`s): the value, or with
//! `store.kafka.keys` / `store.kafka.headers` the key and the headers in files of their own,
//! named after the value file with `.keys` / `.headers` before their format's extension.
//!
//! - key: the record key with its schema; for Parquet wrapped in a `RecordKey` struct
//!   (`key` field), as Confluent's `KeyRecordView` does for formats that need a record. A null
//!   key is a data error.
//! - headers: an array of `{key, value}` structs, values as strings (`Values.convertToString`:
//!   primitives as Java prints them, other values as JSON); for Parquet and JSON wrapped in a
//!   `RecordHeaders` struct (`headers` field). A record without headers is a data error.

use connect_api::converter::{HeaderConverter, SimpleHeaderConverter};
use connect_api::data::{Schema, SchemaBuilder, Struct, Value};
use connect_api::error::{ConnectError, Result};
use connect_api::record::SinkRecord;

use super::format::Format;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Value,
    Key,
    Headers,
}

impl View {
    /// What goes between the file's base name and its format's extension.
    pub fn infix(self) -> &'static str {
        match self {
            Self::Value => "",
            Self::Key => ".keys",
            Self::Headers => ".headers",
        }
    }

    /// The schema and value this view writes of `record` in `format` (the value view is the
    /// record's value itself; the task writes it without this copy).
    pub fn of(self, record: &SinkRecord, format: &Format) -> Result<(Option<Schema>, Value)> {
        let loggable = || {
            format!(
                "{}-{}@{}",
                record.topic, record.kafka_partition, record.kafka_offset
            )
        };
        match self {
            Self::Value => Ok((record.value_schema.clone(), record.value.clone())),
            Self::Key => {
                if record.key.is_null() {
                    return Err(ConnectError::data(format!(
                        "Key cannot be null for SinkRecord: {}",
                        loggable()
                    )));
                }
                if !matches!(format, Format::Parquet(_)) {
                    return Ok((record.key_schema.clone(), record.key.clone()));
                }
                let key_schema = record.key_schema.clone().ok_or_else(|| {
                    ConnectError::data("a key without a schema cannot be written as Parquet")
                })?;
                let schema = SchemaBuilder::struct_()
                    .name("RecordKey")
                    .field("key", key_schema)
                    .build();
                let value = Struct::new(schema.clone()).with("key", record.key.clone())?;
                Ok((Some(schema), Value::Struct(value)))
            }
            Self::Headers => {
                if record.headers.is_empty() {
                    return Err(ConnectError::data(format!(
                        "Headers cannot be null for SinkRecord: {}",
                        loggable()
                    )));
                }
                let single = SchemaBuilder::struct_()
                    .field("key", Schema::string())
                    .field("value", Schema::string())
                    .build();
                let text = SimpleHeaderConverter;
                let mut items = Vec::new();
                for h in record.headers.iter() {
                    let bytes = text
                        .from_connect_header(&record.topic, &h.key, h.schema.as_ref(), &h.value)?
                        .ok_or_else(|| {
                            ConnectError::data(format!("header {} has a null value", h.key))
                        })?;
                    let value = String::from_utf8_lossy(&bytes).into_owned();
                    items.push(Value::Struct(
                        Struct::new(single.clone())
                            .with("key", h.key.clone())?
                            .with("value", value)?,
                    ));
                }
                let array = SchemaBuilder::array(single).build();
                if !matches!(format, Format::Parquet(_) | Format::Json(_)) {
                    return Ok((Some(array), Value::Array(items)));
                }
                let schema = SchemaBuilder::struct_()
                    .name("RecordHeaders")
                    .field("headers", array)
                    .build();
                let value = Struct::new(schema.clone()).with("headers", Value::Array(items))?;
                Ok((Some(schema), Value::Struct(value)))
            }
        }
    }
}
