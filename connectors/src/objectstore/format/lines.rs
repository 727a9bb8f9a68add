//! Line formats: Confluent's `JsonFormat` (each value as one line of JSON, as the
//! `JsonConverter` with `schemas.enable=false` writes it) and `ByteArrayFormat` (each value's
//! bytes, then `format.bytearray.separator`), both optionally gzipped (`s3.compression.type`,
//! `.gz` after the extension). The gzip header has no time and no name, so a replay writes the
//! same bytes.

use std::io::Write;

use connect_api::converter::DecimalFormat;
use connect_api::converter::JsonConverter;
use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};

use super::RecordWriter;

/// `s3.compression.type` and `s3.compression.level` of the line formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    /// Gzip at this zlib level (Java's `Deflater.DEFAULT_COMPRESSION`, -1, is 6).
    Gzip(u32),
}

impl Compression {
    pub fn extension(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Gzip(_) => ".gz",
        }
    }
}

/// Where lines go: the file's bytes, through gzip or not.
enum Lines {
    Plain(Vec<u8>),
    Gzip(flate2::write::GzEncoder<Vec<u8>>),
}

impl Lines {
    fn new(compression: Compression) -> Self {
        match compression {
            Compression::None => Self::Plain(Vec::new()),
            Compression::Gzip(level) => Self::Gzip(
                flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level)),
            ),
        }
    }

    fn append(&mut self, parts: &[&[u8]]) -> Result<()> {
        for part in parts {
            match self {
                Self::Plain(out) => out.extend_from_slice(part),
                Self::Gzip(gz) => gz
                    .write_all(part)
                    .map_err(|e| ConnectError::fatal(format!("gzip failed: {e}")))?,
            }
        }
        Ok(())
    }

    /// The compressed bytes so far (the encoder only appends to them).
    fn output(&mut self) -> &mut Vec<u8> {
        match self {
            Self::Plain(out) => out,
            Self::Gzip(gz) => gz.get_mut(),
        }
    }

    fn finish(&mut self) -> Result<()> {
        match self {
            Self::Plain(_) => Ok(()),
            Self::Gzip(gz) => gz
                .try_finish()
                .map_err(|e| ConnectError::fatal(format!("gzip failed: {e}"))),
        }
    }
}

#[derive(Debug, Clone)]
pub struct JsonOptions {
    pub extension: String,
    pub decimal_format: DecimalFormat,
    pub compression: Compression,
}

pub struct JsonWriter {
    converter: JsonConverter,
    out: Lines,
}

impl JsonWriter {
    pub fn new(options: JsonOptions) -> Self {
        Self {
            converter: JsonConverter::new(false).with_decimal_format(options.decimal_format),
            out: Lines::new(options.compression),
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
        self.out.append(&[&line, b"\n"])
    }

    fn output(&mut self) -> &mut Vec<u8> {
        self.out.output()
    }

    fn finish(&mut self) -> Result<()> {
        self.out.finish()
    }
}

#[derive(Debug, Clone)]
pub struct ByteArrayOptions {
    pub extension: String,
    pub separator: Vec<u8>,
    pub compression: Compression,
}

pub struct ByteArrayWriter {
    separator: Vec<u8>,
    out: Lines,
}

impl ByteArrayWriter {
    pub fn new(options: ByteArrayOptions) -> Self {
        Self {
            out: Lines::new(options.compression),
            separator: options.separator,
        }
    }
}

impl RecordWriter for ByteArrayWriter {
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        bytes_of(schema, value).map(|_| ())
    }

    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        let bytes = bytes_of(schema, value)?;
        self.out.append(&[bytes, &self.separator])
    }

    fn output(&mut self) -> &mut Vec<u8> {
        self.out.output()
    }

    fn finish(&mut self) -> Result<()> {
        self.out.finish()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn gzip_lines_repeat_and_read_back_even_when_drained_midway() {
        let write = |drain: bool| {
            let mut w = JsonWriter::new(JsonOptions {
                extension: ".json".into(),
                decimal_format: DecimalFormat::Base64,
                compression: Compression::Gzip(6),
            });
            let mut taken = Vec::new();
            for n in 0..5000i64 {
                w.write(None, &Value::Int64(n)).unwrap();
                if drain && w.output().len() > 64 {
                    taken.extend(w.output().drain(..64));
                }
            }
            w.finish().unwrap();
            taken.extend(std::mem::take(w.output()));
            taken
        };
        let (a, b) = (write(false), write(true));
        assert_eq!(a, b);
        let mut text = String::new();
        flate2::read::GzDecoder::new(&a[..])
            .read_to_string(&mut text)
            .unwrap();
        let want: String = (0..5000).map(|n| format!("{n}\n")).collect();
        assert_eq!(text, want);
    }
}
