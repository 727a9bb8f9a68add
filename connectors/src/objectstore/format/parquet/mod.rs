//! Confluent's `ParquetFormat`: what `AvroParquetWriter` writes for a record's Connect schema
//! mapped to Avro by `AvroData`.
//!
//! ```text
//!  Connect value ─(registry codec)─▶ Avro binary ─(decode)─▶ generic Avro value ─(shred)─▶ columns
//!  Connect schema ─(AvroData)─▶ Avro schema ─(parquet-avro's AvroSchemaConverter)─▶ Parquet schema
//! ```
//!
//! The Avro step is the one parquet-avro sees in Confluent's sink (a `GenericRecord` from
//! `AvroData.fromConnectData`), so the column layout is parquet-avro's: records are groups,
//! `[null, X]` unions optional fields, other unions groups of optional `member<i>` fields,
//! arrays `LIST` groups (the old two-level `repeated <x> array` form, or the three-level
//! `list`/`element` form when some array has optional items, as Confluent switches it), maps
//! `MAP` groups of `key_value` (string `key`, `value`), strings and enums annotated binaries,
//! decimals/dates/times/timestamps their logical types. The file carries `parquet.avro.schema`
//! and `writer.model.name=avro` as parquet-avro's does.
//!
//! Rows are shredded into per-column buffers (Dremel definition and repetition levels) and
//! written as a row group when those pass `s3.part.size` bytes, and at the end of the file; the
//! root must be a record (Confluent casts the value to `GenericRecord`).

mod columns;
mod datum;
mod shred;

use std::sync::Arc;

use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};
use connect_registry::avro::codec::{self, Reader};
use connect_registry::avro::data::AvroData;
use connect_registry::avro::schema::{AvroSchema, Kind};
use parquet::basic::{Compression, GzipLevel, Repetition, ZstdLevel};
use parquet::data_type::{
    BoolType, ByteArrayType, DoubleType, FixedLenByteArrayType, FloatType, Int32Type, Int64Type,
};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use self::columns::{Builder, Column, ColumnValues, Node};
use self::datum::{Datum, decode};
use self::shred::Shredder;
use super::RecordWriter;
use super::avro::{avro_data, avro_schema};

/// parquet-mr's page size as Confluent sets it (`PAGE_SIZE = 64 * 1024`).
const PAGE_SIZE: usize = 64 * 1024;

/// `parquet.codec` values this worker writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetCodec {
    None,
    Snappy,
    Gzip,
    Zstd,
}

impl ParquetCodec {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "none" | "uncompressed" => Some(Self::None),
            "snappy" => Some(Self::Snappy),
            "gzip" => Some(Self::Gzip),
            "zstd" => Some(Self::Zstd),
            _ => None,
        }
    }

    /// parquet-mr's `CompressionCodecName.getExtension()`.
    pub fn extension(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Snappy => ".snappy",
            Self::Gzip => ".gz",
            Self::Zstd => ".zstd",
        }
    }

    fn compression(self) -> Compression {
        match self {
            Self::None => Compression::UNCOMPRESSED,
            Self::Snappy => Compression::SNAPPY,
            // parquet-mr's defaults: zlib level 6, zstd level 3.
            Self::Gzip => Compression::GZIP(GzipLevel::try_new(6).expect("valid level")),
            Self::Zstd => Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ParquetOptions {
    pub codec: ParquetCodec,
    pub data: connect_registry::avro::data::AvroDataConfig,
    /// Buffered column bytes after which a row group is written.
    pub row_group_bytes: usize,
}

/// What a file knows once its first record fixed the schema.
struct Open {
    connect: Schema,
    avro: AvroSchema,
    root: Vec<Node>,
    columns: Vec<Column>,
    writer: SerializedFileWriter<Vec<u8>>,
    buffered: usize,
    rows: usize,
}

pub struct ParquetFileWriter {
    options: ParquetOptions,
    data: AvroData,
    open: Option<Open>,
    /// Output before the file is opened (never written to: the writer owns the bytes).
    empty: Vec<u8>,
}

impl ParquetFileWriter {
    pub fn new(options: ParquetOptions) -> Self {
        Self {
            data: avro_data(&options.data),
            options,
            open: None,
            empty: Vec::new(),
        }
    }

    fn open(&self, schema: Option<&Schema>) -> Result<Open> {
        let connect = schema
            .ok_or_else(|| {
                ConnectError::data("a record without a schema cannot be written as Parquet")
            })?
            .clone();
        if connect.schema_type() != SchemaType::Struct {
            return Err(ConnectError::data(format!(
                "ParquetFormat writes Struct values only, not {}",
                connect.schema_type().json_name()
            )));
        }
        let avro = avro_schema(&self.data, Some(&connect))?;
        let Kind::Record { name, fields, .. } = &avro.kind else {
            return Err(ConnectError::data(
                "ParquetFormat: the Avro schema is not a record",
            ));
        };
        let mut b = Builder {
            old_lists: !has_array_of_optional_items(&connect),
            columns: Vec::new(),
        };
        let mut types = Vec::new();
        let mut root = Vec::new();
        for f in fields {
            let (t, n) = b.field(&f.name, &f.schema, Repetition::REQUIRED, 0, 0)?;
            types.push(t);
            root.push(n);
        }
        let message = Type::group_type_builder(&name.full())
            .with_fields(types)
            .build()
            .map_err(|e| ConnectError::data(format!("parquet schema: {e}")))?;
        let props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_1_0)
            .set_compression(self.options.codec.compression())
            .set_dictionary_enabled(true)
            .set_data_page_size_limit(PAGE_SIZE)
            .set_key_value_metadata(Some(vec![
                KeyValue::new("parquet.avro.schema".to_owned(), avro.to_json()),
                KeyValue::new("writer.model.name".to_owned(), "avro".to_owned()),
            ]))
            .build();
        let writer = SerializedFileWriter::new(Vec::new(), Arc::new(message), Arc::new(props))
            .map_err(|e| ConnectError::data(format!("parquet: {e}")))?;
        Ok(Open {
            connect,
            avro: avro.clone(),
            root,
            columns: b.columns,
            writer,
            buffered: 0,
            rows: 0,
        })
    }
}

/// Confluent's `schemaHasArrayOfOptionalItems`: then lists take the three-level form.
fn has_array_of_optional_items(schema: &Schema) -> bool {
    match schema.schema_type() {
        SchemaType::Struct => schema
            .fields()
            .iter()
            .any(|f| has_array_of_optional_items(&f.schema)),
        SchemaType::Map => schema
            .value_schema()
            .is_some_and(has_array_of_optional_items),
        SchemaType::Array => schema
            .value_schema()
            .is_some_and(|v| v.is_optional() || has_array_of_optional_items(v)),
        _ => false,
    }
}

impl Open {
    fn write_row_group(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let err = |e: parquet::errors::ParquetError| ConnectError::fatal(format!("parquet: {e}"));
        let mut rg = self.writer.next_row_group().map_err(err)?;
        for c in &mut self.columns {
            let mut cw = rg
                .next_column()
                .map_err(err)?
                .ok_or_else(|| ConnectError::fatal("parquet: fewer columns than the schema"))?;
            let defs = (c.max_def > 0).then_some(&c.defs[..]);
            let reps = (c.max_rep > 0).then_some(&c.reps[..]);
            match &mut c.values {
                ColumnValues::Boolean(v) => cw.typed::<BoolType>().write_batch(v, defs, reps),
                ColumnValues::Int32(v) => cw.typed::<Int32Type>().write_batch(v, defs, reps),
                ColumnValues::Int64(v) => cw.typed::<Int64Type>().write_batch(v, defs, reps),
                ColumnValues::Float(v) => cw.typed::<FloatType>().write_batch(v, defs, reps),
                ColumnValues::Double(v) => cw.typed::<DoubleType>().write_batch(v, defs, reps),
                ColumnValues::Bytes(v) => cw.typed::<ByteArrayType>().write_batch(v, defs, reps),
                ColumnValues::Fixed(v) => cw
                    .typed::<FixedLenByteArrayType>()
                    .write_batch(v, defs, reps),
            }
            .map_err(err)?;
            cw.close().map_err(err)?;
            c.truncate((0, 0));
        }
        rg.close().map_err(err)?;
        self.buffered = 0;
        self.rows = 0;
        Ok(())
    }
}

impl RecordWriter for ParquetFileWriter {
    /// Opens the file if needed (no bytes are written before the first row group) and encodes
    /// the value; shredding an encoded record of the file's schema cannot fail.
    fn check(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        if self.open.is_none() {
            let open = self.open(schema)?;
            self.open = Some(open);
        }
        let open = self.open.as_ref().expect("opened above");
        let mut encoded = Vec::new();
        codec::encode(&open.avro, &open.connect, value, &mut encoded)?;
        decode(&open.avro, &mut Reader::new(&encoded)).map(|_| ())
    }

    fn write(&mut self, schema: Option<&Schema>, value: &Value) -> Result<()> {
        if self.open.is_none() {
            let open = self.open(schema)?;
            self.open = Some(open);
        }
        let open = self.open.as_mut().expect("opened above");
        debug_assert!(schema == Some(&open.connect));
        let mut encoded = Vec::new();
        codec::encode(&open.avro, &open.connect, value, &mut encoded)?;
        let datum = decode(&open.avro, &mut Reader::new(&encoded))?;
        let Datum::Record(values) = datum else {
            return Err(ConnectError::data("ParquetFormat writes records only"));
        };
        let marks: Vec<(usize, usize)> = open.columns.iter().map(Column::len).collect();
        let mut s = Shredder {
            columns: &mut open.columns,
            bytes: 0,
        };
        let mut result = Ok(());
        for (node, v) in open.root.iter().zip(&values) {
            result = s.node(node, v, 0, 0);
            if result.is_err() {
                break;
            }
        }
        let added = s.bytes;
        if let Err(e) = result {
            // Leave the row group as it was.
            for (c, m) in open.columns.iter_mut().zip(marks) {
                c.truncate(m);
            }
            return Err(e);
        }
        open.buffered += added;
        open.rows += 1;
        if open.buffered >= self.options.row_group_bytes {
            open.write_row_group()?;
        }
        Ok(())
    }

    fn output(&mut self) -> &mut Vec<u8> {
        match &mut self.open {
            Some(open) => open.writer.inner_mut(),
            None => &mut self.empty,
        }
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(open) = &mut self.open {
            open.write_row_group()?;
            open.writer
                .finish()
                .map_err(|e| ConnectError::fatal(format!("parquet: {e}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::{SchemaBuilder, Struct};
    use connect_registry::avro::data::AvroDataConfig;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn schema(optional_items: bool) -> Schema {
        let inner = SchemaBuilder::struct_()
            .name("com.example.Inner")
            .field("a", Schema::int32())
            .field("b", Schema::optional_string())
            .optional()
            .build();
        let items = if optional_items {
            Schema::optional_int32()
        } else {
            Schema::int32()
        };
        SchemaBuilder::struct_()
            .name("com.example.Row")
            .field("n", Schema::int64())
            .field("s", Schema::optional_string())
            .field("list", SchemaBuilder::array(items).build())
            .field(
                "map",
                SchemaBuilder::map(Schema::string(), Schema::int64())
                    .optional()
                    .build(),
            )
            .field("inner", inner)
            .build()
    }

    fn write(schema: &Schema, rows: usize, optional_items: bool) -> Vec<u8> {
        let mut w = ParquetFileWriter::new(ParquetOptions {
            codec: ParquetCodec::Snappy,
            data: AvroDataConfig::default(),
            row_group_bytes: 1000,
        });
        let inner_schema = schema.field("inner").unwrap().schema.clone();
        for n in 0..rows {
            let list: Vec<Value> = (0..n % 3)
                .map(|i| {
                    if optional_items && i == 1 {
                        Value::Null
                    } else {
                        Value::Int32(i as i32)
                    }
                })
                .collect();
            let mut v = Struct::new(schema.clone())
                .with("n", n as i64)
                .unwrap()
                .with("list", Value::Array(list))
                .unwrap();
            if n % 2 == 0 {
                v.put("s", format!("s{n}")).unwrap();
                v.put(
                    "map",
                    Value::Map(vec![(Value::String("k".into()), Value::Int64(n as i64))]),
                )
                .unwrap();
                let inner = Struct::new(inner_schema.clone())
                    .with("a", n as i32)
                    .unwrap();
                v.put("inner", Value::Struct(inner)).unwrap();
            }
            w.write(Some(schema), &Value::Struct(v)).unwrap();
        }
        w.finish().unwrap();
        std::mem::take(w.output())
    }

    #[test]
    fn rows_read_back_and_bytes_repeat() {
        for optional_items in [false, true] {
            let schema = schema(optional_items);
            let a = write(&schema, 300, optional_items);
            assert_eq!(a, write(&schema, 300, optional_items), "deterministic");
            let reader = SerializedFileReader::new(bytes::Bytes::from(a)).unwrap();
            assert!(reader.metadata().num_row_groups() > 1);
            let rows: Vec<String> = reader
                .get_row_iter(None)
                .unwrap()
                .map(|r| r.unwrap().to_string())
                .collect();
            assert_eq!(rows.len(), 300);
            eprintln!("{}\n{}", rows[4], rows[5]);
            assert!(
                rows[4].contains("n: 4") && rows[4].contains("s: \"s4\""),
                "{}",
                rows[4]
            );
            assert!(rows[5].contains("s: null"), "{}", rows[5]);
            let kv = reader
                .metadata()
                .file_metadata()
                .key_value_metadata()
                .unwrap();
            assert!(kv.iter().any(|k| k.key == "parquet.avro.schema"));
        }
    }

    /// The task takes multipart parts out of the output while the file grows: the bytes taken
    /// plus the rest are the file written in one piece.
    #[test]
    fn draining_the_output_midway_gives_the_same_file() {
        let schema = schema(false);
        let whole = write(&schema, 300, false);
        let mut w = ParquetFileWriter::new(ParquetOptions {
            codec: ParquetCodec::Snappy,
            data: AvroDataConfig::default(),
            row_group_bytes: 1000,
        });
        let mut taken = Vec::new();
        for n in 0..300usize {
            let v = Struct::new(schema.clone())
                .with("n", n as i64)
                .unwrap()
                .with(
                    "list",
                    Value::Array((0..n % 3).map(|i| Value::Int32(i as i32)).collect()),
                )
                .unwrap();
            let v = if n % 2 == 0 {
                let mut v = v;
                v.put("s", format!("s{n}")).unwrap();
                v.put(
                    "map",
                    Value::Map(vec![(Value::String("k".into()), Value::Int64(n as i64))]),
                )
                .unwrap();
                let inner_schema = schema.field("inner").unwrap().schema.clone();
                let inner = Struct::new(inner_schema).with("a", n as i32).unwrap();
                v.put("inner", Value::Struct(inner)).unwrap();
                v
            } else {
                v
            };
            w.write(Some(&schema), &Value::Struct(v)).unwrap();
            let out = w.output();
            if out.len() > 100 {
                taken.extend(out.drain(..100));
            }
        }
        w.finish().unwrap();
        taken.extend(std::mem::take(w.output()));
        assert_eq!(taken, whole);
    }

    #[test]
    fn a_schemaless_or_non_struct_record_is_a_data_error() {
        let mut w = ParquetFileWriter::new(ParquetOptions {
            codec: ParquetCodec::None,
            data: AvroDataConfig::default(),
            row_group_bytes: 1000,
        });
        assert!(w.write(None, &Value::Int32(1)).is_err());
        assert!(w.write(Some(&Schema::int32()), &Value::Int32(1)).is_err());
    }
}
