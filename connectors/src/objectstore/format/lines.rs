//! Line formats: Confluent's `JsonFormat` (each value as one line of JSON, as the
//! `JsonConverter` with `schemas.enable=false` writes it) and `ByteArrayFormat` (each value's
//! bytes, then `format.bytearray.separator`).

use connect_api::converter::DecimalFormat;
use connect_api::converter::JsonConverter;
use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};

use super::RecordWriter;

#[derive(Debug, Clone)]
pub struct JsonOptions {
    pub extension: String,
    pub decimal_format: DecimalFormat,
}

pub struct JsonWriter {
    converter: JsonConverter,
    out: Vec<u8>,
}

impl JsonWriter {
    pub fn new(options: JsonOptions) -> Self {
        Self {
            converter: JsonConverter::new(false).with_decimal_format(options.decimal_format),
            out: Vec::new(),
        }
    }
}

impl RecordWriter for JsonWriter {
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        self.converter.to_json_value(schema, value).map(|_| ())
    }

    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        let json = self.converter.to_json_value(schema, value)?;
        let line = serde_json::to_vec(&json)
            .map_err(|e| ConnectError::data(format!("failed to encode a record as JSON: {e}")))?;
        self.out.extend_from_slice(&line);
        self.out.push(b'\n');
        Ok(())
    }

    fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct ByteArrayOptions {
    pub extension: String,
    pub separator: Vec<u8>,
}

pub struct ByteArrayWriter {
    options: ByteArrayOptions,
    out: Vec<u8>,
}

impl ByteArrayWriter {
    pub fn new(options: ByteArrayOptions) -> Self {
        Self {
            options,
            out: Vec::new(),
        }
    }
}

impl RecordWriter for ByteArrayWriter {
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        bytes_of(schema, value).map(|_| ())
    }

    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        let bytes = bytes_of(schema, value)?;
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(&self.options.separator);
        Ok(())
    }

    fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// As `ByteArrayConverter.fromConnectData`: a BYTES schema (or none) and a bytes value.
fn bytes_of<'a>(schema: Option<&Schema>, value: &'a Value) -> Result<&'a [u8]> {
    if let Some(s) = schema
        && s.schema_type() != SchemaType::Bytes
    {
        return Err(ConnectError::data(format!(
            "invalid schema type for ByteArrayFormat: {}",
            s.schema_type().json_name()
        )));
    }
    let Value::Bytes(bytes) = value else {
        return Err(ConnectError::data(format!(
            "ByteArrayFormat is not compatible with objects of type {}",
            value.type_name()
        )));
    };
    Ok(bytes)
}
