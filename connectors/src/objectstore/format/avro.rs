//! Confluent's `AvroFormat`: an Avro object container file per object. The schema is the
//! first record's Connect schema mapped by Confluent's `AvroData` (the registry crate's port,
//! with the sink's `enhanced.avro.schema.support`, `connect.meta.data` and
//! `allow.optional.map.keys`); values are encoded by the registry crate's codec.
//!
//! The container format (Avro spec, "Object Container Files"): `Obj\x01`, a metadata map
//! (`avro.schema`, `avro.codec`), a 16-byte sync marker, then blocks of `count`, `size`,
//! compressed records and the marker. Java picks the marker at random; here it is the first 16
//! bytes of SHA-256 of the schema text, so a rewritten file is byte-identical. Blocks end, as
//! Java's `DataFileWriter` ends them, once they hold 64 000 bytes.

use connect_api::data::{Schema, Value};
use connect_api::error::{ConnectError, Result};
use connect_registry::avro::codec;
use connect_registry::avro::data::{AvroData, AvroDataConfig};
use connect_registry::avro::schema::AvroSchema;
use sha2::{Digest, Sha256};

use super::RecordWriter;

/// Java's `DataFileConstants.DEFAULT_SYNC_INTERVAL`.
const SYNC_INTERVAL: usize = 64_000;

/// `avro.codec` values this worker writes (Confluent's list less `bzip2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AvroCodec {
    Null,
    Deflate,
    Snappy,
}

impl AvroCodec {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "null" => Some(Self::Null),
            "deflate" => Some(Self::Deflate),
            "snappy" => Some(Self::Snappy),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Deflate => "deflate",
            Self::Snappy => "snappy",
        }
    }

    fn compress(self, data: &[u8]) -> Result<Vec<u8>> {
        match self {
            Self::Null => Ok(data.to_vec()),
            Self::Deflate => {
                use std::io::Write;
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data)
                    .and_then(|()| e.finish())
                    .map_err(|e| ConnectError::fatal(format!("deflate failed: {e}")))
            }
            Self::Snappy => {
                let mut out = snap::raw::Encoder::new()
                    .compress_vec(data)
                    .map_err(|e| ConnectError::fatal(format!("snappy failed: {e}")))?;
                out.extend_from_slice(&crc32fast::hash(data).to_be_bytes());
                Ok(out)
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct AvroOptions {
    pub codec: AvroCodec,
    pub data: AvroDataConfig,
}

/// The mapping the sink's Avro and Parquet formats share: `AvroData` as Confluent's storage
/// connectors configure it.
pub fn avro_data(config: &AvroDataConfig) -> AvroData {
    AvroData::new(config.clone())
}

/// The Avro schema of a record's Connect schema, or a data error (schemaless records have none).
pub fn avro_schema(data: &AvroData, schema: Option<&Schema>) -> Result<AvroSchema> {
    let schema = schema.ok_or_else(|| {
        ConnectError::data("a record without a schema cannot be written as Avro or Parquet")
    })?;
    data.from_connect_schema(schema)
}

pub struct AvroFileWriter {
    options: AvroOptions,
    data: AvroData,
    /// The file's schemas, set by the first record.
    schema: Option<(Schema, AvroSchema)>,
    sync: [u8; 16],
    block: Vec<u8>,
    block_count: i64,
    out: Vec<u8>,
}

impl AvroFileWriter {
    pub fn new(options: AvroOptions) -> Self {
        Self {
            data: avro_data(&options.data),
            options,
            schema: None,
            sync: [0; 16],
            block: Vec::new(),
            block_count: 0,
            out: Vec::new(),
        }
    }

    fn header(&mut self, avro: &AvroSchema) {
        let text = avro.to_json();
        self.sync
            .copy_from_slice(&Sha256::digest(text.as_bytes())[..16]);
        self.out.extend_from_slice(b"Obj\x01");
        write_long(&mut self.out, 2);
        write_bytes(&mut self.out, b"avro.schema");
        write_bytes(&mut self.out, text.as_bytes());
        write_bytes(&mut self.out, b"avro.codec");
        write_bytes(&mut self.out, self.options.codec.name().as_bytes());
        write_long(&mut self.out, 0);
        self.out.extend_from_slice(&self.sync);
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.block_count == 0 {
            return Ok(());
        }
        let data = self.options.codec.compress(&self.block)?;
        write_long(&mut self.out, self.block_count);
        write_long(&mut self.out, data.len() as i64);
        self.out.extend_from_slice(&data);
        self.out.extend_from_slice(&self.sync);
        self.block.clear();
        self.block_count = 0;
        Ok(())
    }
}

impl RecordWriter for AvroFileWriter {
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        let mut scratch = Vec::new();
        match &self.schema {
            Some((connect, avro)) => codec::encode(avro, connect, value, &mut scratch),
            None => {
                let avro = avro_schema(&self.data, schema)?;
                let connect = schema.expect("checked by avro_schema");
                codec::encode(&avro, connect, value, &mut scratch)
            }
        }
    }

    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        let mut encoded = Vec::new();
        match &self.schema {
            Some((connect, avro)) => {
                // The task rotates on a schema change, so a file sees one schema.
                debug_assert!(schema == Some(connect));
                codec::encode(avro, connect, value, &mut encoded)?;
            }
            None => {
                let avro = avro_schema(&self.data, schema)?;
                let connect = schema.expect("checked by avro_schema").clone();
                codec::encode(&avro, &connect, value, &mut encoded)?;
                self.header(&avro);
                self.schema = Some((connect, avro));
            }
        }
        self.block.extend_from_slice(&encoded);
        self.block_count += 1;
        if self.block.len() >= SYNC_INTERVAL {
            self.flush_block()?;
        }
        Ok(())
    }

    fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    fn finish(&mut self) -> Result<()> {
        self.flush_block()
    }
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut n = ((v << 1) ^ (v >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::{SchemaBuilder, Struct};

    #[test]
    fn same_records_same_bytes_and_a_header_readers_expect() {
        let schema = SchemaBuilder::struct_()
            .name("com.example.Row")
            .field("n", Schema::int64())
            .field("s", Schema::optional_string())
            .build();
        let mut files = Vec::new();
        for codec in [AvroCodec::Null, AvroCodec::Deflate, AvroCodec::Snappy] {
            let once = || {
                let mut w = AvroFileWriter::new(AvroOptions {
                    codec,
                    data: AvroDataConfig::default(),
                });
                for n in 0..5000i64 {
                    let v = Struct::new(schema.clone()).with("n", n).unwrap();
                    w.write(Some(&schema), &Value::Struct(v)).unwrap();
                }
                w.finish().unwrap();
                std::mem::take(w.output())
            };
            let (a, b) = (once(), once());
            assert_eq!(a, b);
            assert!(a.starts_with(b"Obj\x01"));
            files.push(a);
        }
        assert!(files[1].len() < files[0].len());
        let mut w = AvroFileWriter::new(AvroOptions {
            codec: AvroCodec::Null,
            data: AvroDataConfig::default(),
        });
        assert!(w.write(None, &Value::Int64(1)).is_err());
        assert!(
            w.output().is_empty(),
            "a rejected record leaves the file as it was"
        );
    }
}
