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

use std::sync::Arc;

use connect_api::data::{Schema, SchemaType, Value};
use connect_api::error::{ConnectError, Result};
use connect_registry::avro::codec::{self, Reader};
use connect_registry::avro::data::AvroData;
use connect_registry::avro::schema::{AvroSchema, Kind};
use parquet::basic::{
    Compression, ConvertedType, GzipLevel, LogicalType, Repetition, TimeUnit, Type as Physical,
    ZstdLevel,
};
use parquet::data_type::{
    BoolType, ByteArray, ByteArrayType, DoubleType, FixedLenByteArray, FixedLenByteArrayType,
    FloatType, Int32Type, Int64Type,
};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};

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

/// A generic Avro datum, as parquet-avro's `GenericRecord` holds it.
#[derive(Debug, Clone, PartialEq)]
enum Datum {
    Null,
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    Record(Vec<Datum>),
    Array(Vec<Datum>),
    Map(Vec<(Vec<u8>, Datum)>),
    Union(usize, Box<Datum>),
}

fn decode(avro: &AvroSchema, r: &mut Reader<'_>) -> Result<Datum> {
    Ok(match &avro.kind {
        Kind::Null => Datum::Null,
        Kind::Boolean => Datum::Boolean(r.byte()? != 0),
        Kind::Int => Datum::Int(r.int()?),
        Kind::Long => Datum::Long(r.long()?),
        Kind::Float => Datum::Float(f32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"))),
        Kind::Double => Datum::Double(f64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"))),
        Kind::Bytes | Kind::String => Datum::Bytes(r.bytes()?.to_vec()),
        Kind::Fixed { size, .. } => Datum::Bytes(r.take(*size)?.to_vec()),
        Kind::Enum { symbols, .. } => {
            let i = r.int()?;
            let symbol = usize::try_from(i)
                .ok()
                .and_then(|i| symbols.get(i))
                .ok_or_else(|| ConnectError::data(format!("Avro enum index {i} out of range")))?;
            Datum::Bytes(symbol.as_bytes().to_vec())
        }
        Kind::Record { fields, .. } => Datum::Record(
            fields
                .iter()
                .map(|f| decode(&f.schema, r))
                .collect::<Result<_>>()?,
        ),
        Kind::Array(items) => {
            let mut out = Vec::new();
            loop {
                let n = r.block()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    out.push(decode(items, r)?);
                }
            }
            Datum::Array(out)
        }
        Kind::Map(values) => {
            let mut out = Vec::new();
            loop {
                let n = r.block()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    let k = r.bytes()?.to_vec();
                    out.push((k, decode(values, r)?));
                }
            }
            Datum::Map(out)
        }
        Kind::Union(branches) => {
            let i = r.long()?;
            let branch = usize::try_from(i)
                .ok()
                .and_then(|i| branches.get(i).map(|b| (i, b)))
                .ok_or_else(|| ConnectError::data(format!("Avro union index {i} out of range")))?;
            Datum::Union(branch.0, Box::new(decode(branch.1, r)?))
        }
    })
}

/// One field of the Parquet schema and how an Avro datum fills it.
#[derive(Debug)]
struct Node {
    repetition: Repetition,
    /// Set for a field from a `[null, X]` union: the datum is a `Union` to unwrap.
    null_branch: Option<usize>,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    Leaf {
        col: usize,
    },
    Record(Vec<Node>),
    /// A `LIST` group; `item` is the repeated field (`array`, or the `list` group).
    List {
        item: Box<Node>,
        rep: i16,
    },
    /// The three-level form's repeated `list` group: the datum is the element itself.
    Wrap(Box<Node>),
    /// A `MAP` group: repeated `key_value` of `key` (column `key_col`) and `value`.
    Map {
        key_col: usize,
        value: Box<Node>,
        rep: i16,
    },
    /// A union of several types: `member<i>` per non-null branch (`None` for `null`).
    Union(Vec<Option<Node>>),
}

/// A leaf column's buffered values and levels.
struct Column {
    physical: Physical,
    max_def: i16,
    max_rep: i16,
    values: ColumnValues,
    defs: Vec<i16>,
    reps: Vec<i16>,
}

enum ColumnValues {
    Boolean(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Bytes(Vec<ByteArray>),
    Fixed(Vec<FixedLenByteArray>),
}

/// Builds parquet-avro's schema for `avro`, the nodes that fill it and the columns.
struct Builder {
    old_lists: bool,
    columns: Vec<Column>,
}

impl Builder {
    fn field(
        &mut self,
        name: &str,
        avro: &AvroSchema,
        repetition: Repetition,
        def: i16,
        rep: i16,
    ) -> Result<(TypePtr, Node)> {
        let def_here = if repetition == Repetition::REQUIRED {
            def
        } else {
            def + 1
        };
        let rep_here = if repetition == Repetition::REPEATED {
            rep + 1
        } else {
            rep
        };
        let unsupported = |what: &str| {
            ConnectError::data(format!(
                "field '{name}': {what} cannot be written as Parquet"
            ))
        };
        let logical = avro.prop_str("logicalType");
        let leaf = |b: &mut Self,
                    physical: Physical,
                    ty: parquet::schema::types::PrimitiveTypeBuilder<'_>|
         -> Result<(TypePtr, Node)> {
            let ty = ty
                .with_repetition(repetition)
                .build()
                .map_err(|e| unsupported(&e.to_string()))?;
            let col = b.columns.len();
            b.columns.push(Column::new(physical, def_here, rep_here));
            Ok((
                Arc::new(ty),
                Node {
                    repetition,
                    null_branch: None,
                    shape: Shape::Leaf { col },
                },
            ))
        };
        let prim = |p: Physical| Type::primitive_type_builder(name, p);
        match &avro.kind {
            Kind::Null => Err(unsupported("the Avro type null")),
            Kind::Boolean => leaf(self, Physical::BOOLEAN, prim(Physical::BOOLEAN)),
            Kind::Int => {
                let lt = match logical {
                    Some("date") => Some(LogicalType::Date),
                    Some("time-millis") => Some(LogicalType::time(true, TimeUnit::MILLIS)),
                    _ => None,
                };
                leaf(
                    self,
                    Physical::INT32,
                    prim(Physical::INT32).with_logical_type(lt),
                )
            }
            Kind::Long => {
                let lt = match logical {
                    Some("timestamp-millis") => {
                        Some(LogicalType::timestamp(true, TimeUnit::MILLIS))
                    }
                    Some("timestamp-micros") => {
                        Some(LogicalType::timestamp(true, TimeUnit::MICROS))
                    }
                    Some("time-micros") => Some(LogicalType::time(true, TimeUnit::MICROS)),
                    _ => None,
                };
                leaf(
                    self,
                    Physical::INT64,
                    prim(Physical::INT64).with_logical_type(lt),
                )
            }
            Kind::Float => leaf(self, Physical::FLOAT, prim(Physical::FLOAT)),
            Kind::Double => leaf(self, Physical::DOUBLE, prim(Physical::DOUBLE)),
            Kind::String => leaf(
                self,
                Physical::BYTE_ARRAY,
                prim(Physical::BYTE_ARRAY).with_logical_type(Some(LogicalType::String)),
            ),
            Kind::Enum { .. } => leaf(
                self,
                Physical::BYTE_ARRAY,
                prim(Physical::BYTE_ARRAY).with_logical_type(Some(LogicalType::Enum)),
            ),
            Kind::Bytes => {
                let b = prim(Physical::BYTE_ARRAY);
                let b = match decimal(avro) {
                    Some((p, s)) => b
                        .with_logical_type(Some(LogicalType::decimal(s, p)))
                        .with_precision(p)
                        .with_scale(s),
                    None => b,
                };
                leaf(self, Physical::BYTE_ARRAY, b)
            }
            Kind::Fixed { size, .. } => {
                let len = i32::try_from(*size).map_err(|_| unsupported("a fixed this long"))?;
                let b = prim(Physical::FIXED_LEN_BYTE_ARRAY).with_length(len);
                let b = match decimal(avro) {
                    Some((p, s)) => b
                        .with_logical_type(Some(LogicalType::decimal(s, p)))
                        .with_precision(p)
                        .with_scale(s),
                    None => b,
                };
                leaf(self, Physical::FIXED_LEN_BYTE_ARRAY, b)
            }
            Kind::Record { fields, .. } => {
                let mut types = Vec::new();
                let mut nodes = Vec::new();
                for f in fields {
                    let (t, n) =
                        self.field(&f.name, &f.schema, Repetition::REQUIRED, def_here, rep_here)?;
                    types.push(t);
                    nodes.push(n);
                }
                let ty = Type::group_type_builder(name)
                    .with_repetition(repetition)
                    .with_fields(types)
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                Ok((
                    Arc::new(ty),
                    Node {
                        repetition,
                        null_branch: None,
                        shape: Shape::Record(nodes),
                    },
                ))
            }
            Kind::Array(items) => {
                let (item_ty, item) = if self.old_lists {
                    self.field("array", items, Repetition::REPEATED, def_here, rep_here)?
                } else {
                    let (el_ty, el) = self.field(
                        "element",
                        items,
                        Repetition::REQUIRED,
                        def_here + 1,
                        rep_here + 1,
                    )?;
                    let ty = Type::group_type_builder("list")
                        .with_repetition(Repetition::REPEATED)
                        .with_fields(vec![el_ty])
                        .build()
                        .map_err(|e| unsupported(&e.to_string()))?;
                    (
                        Arc::new(ty),
                        Node {
                            repetition: Repetition::REPEATED,
                            null_branch: None,
                            shape: Shape::Wrap(Box::new(el)),
                        },
                    )
                };
                let ty = Type::group_type_builder(name)
                    .with_repetition(repetition)
                    .with_logical_type(Some(LogicalType::List))
                    .with_fields(vec![item_ty])
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                Ok((
                    Arc::new(ty),
                    Node {
                        repetition,
                        null_branch: None,
                        shape: Shape::List {
                            item: Box::new(item),
                            rep: rep_here + 1,
                        },
                    },
                ))
            }
            Kind::Map(values) => {
                let key_col = self.columns.len();
                self.columns.push(Column::new(
                    Physical::BYTE_ARRAY,
                    def_here + 1,
                    rep_here + 1,
                ));
                let key_ty = Type::primitive_type_builder("key", Physical::BYTE_ARRAY)
                    .with_repetition(Repetition::REQUIRED)
                    .with_logical_type(Some(LogicalType::String))
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                let (value_ty, value) = self.field(
                    "value",
                    values,
                    Repetition::REQUIRED,
                    def_here + 1,
                    rep_here + 1,
                )?;
                let kv = Type::group_type_builder("key_value")
                    .with_repetition(Repetition::REPEATED)
                    .with_converted_type(ConvertedType::MAP_KEY_VALUE)
                    .with_fields(vec![Arc::new(key_ty), value_ty])
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                let ty = Type::group_type_builder(name)
                    .with_repetition(repetition)
                    .with_logical_type(Some(LogicalType::Map))
                    .with_fields(vec![Arc::new(kv)])
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                Ok((
                    Arc::new(ty),
                    Node {
                        repetition,
                        null_branch: None,
                        shape: Shape::Map {
                            key_col,
                            value: Box::new(value),
                            rep: rep_here + 1,
                        },
                    },
                ))
            }
            Kind::Union(branches) => {
                let null_at = branches.iter().position(AvroSchema::is_null);
                let non_null: Vec<usize> = (0..branches.len())
                    .filter(|i| Some(*i) != null_at)
                    .collect();
                let repetition = if null_at.is_some() && repetition == Repetition::REQUIRED {
                    Repetition::OPTIONAL
                } else {
                    repetition
                };
                if non_null.is_empty() {
                    return Err(unsupported("a union of only nulls"));
                }
                if non_null.len() == 1 && null_at.is_some() {
                    let (ty, mut node) =
                        self.field(name, &branches[non_null[0]], repetition, def, rep)?;
                    node.null_branch = null_at;
                    return Ok((ty, node));
                }
                let def_here = if repetition == Repetition::REQUIRED {
                    def
                } else {
                    def + 1
                };
                let mut types = Vec::new();
                let mut members: Vec<Option<Node>> = (0..branches.len()).map(|_| None).collect();
                for (m, i) in non_null.iter().enumerate() {
                    let (t, n) = self.field(
                        &format!("member{m}"),
                        &branches[*i],
                        Repetition::OPTIONAL,
                        def_here,
                        rep_here,
                    )?;
                    types.push(t);
                    members[*i] = Some(n);
                }
                let ty = Type::group_type_builder(name)
                    .with_repetition(repetition)
                    .with_fields(types)
                    .build()
                    .map_err(|e| unsupported(&e.to_string()))?;
                Ok((
                    Arc::new(ty),
                    Node {
                        repetition,
                        null_branch: null_at,
                        shape: Shape::Union(members),
                    },
                ))
            }
        }
    }
}

/// `(precision, scale)` of a decimal logical type.
fn decimal(avro: &AvroSchema) -> Option<(i32, i32)> {
    if avro.prop_str("logicalType") != Some("decimal") {
        return None;
    }
    let num = |k: &str| avro.props.get(k).and_then(serde_json::Value::as_i64);
    let precision = i32::try_from(num("precision")?).ok()?;
    let scale = i32::try_from(num("scale").unwrap_or(0)).ok()?;
    Some((precision, scale))
}

impl Column {
    fn new(physical: Physical, max_def: i16, max_rep: i16) -> Self {
        let values = match physical {
            Physical::BOOLEAN => ColumnValues::Boolean(Vec::new()),
            Physical::INT32 => ColumnValues::Int32(Vec::new()),
            Physical::INT64 => ColumnValues::Int64(Vec::new()),
            Physical::FLOAT => ColumnValues::Float(Vec::new()),
            Physical::DOUBLE => ColumnValues::Double(Vec::new()),
            Physical::FIXED_LEN_BYTE_ARRAY => ColumnValues::Fixed(Vec::new()),
            _ => ColumnValues::Bytes(Vec::new()),
        };
        Self {
            physical,
            max_def,
            max_rep,
            values,
            defs: Vec::new(),
            reps: Vec::new(),
        }
    }

    fn push_null(&mut self, def: i16, rep: i16) {
        self.defs.push(def);
        self.reps.push(rep);
    }

    /// Appends a value; returns the bytes it adds to the buffer.
    fn push(&mut self, datum: &Datum, rep: i16) -> Result<usize> {
        let size = match (&mut self.values, datum) {
            (ColumnValues::Boolean(v), Datum::Boolean(b)) => {
                v.push(*b);
                1
            }
            (ColumnValues::Int32(v), Datum::Int(i)) => {
                v.push(*i);
                4
            }
            (ColumnValues::Int64(v), Datum::Long(i)) => {
                v.push(*i);
                8
            }
            (ColumnValues::Float(v), Datum::Float(f)) => {
                v.push(*f);
                4
            }
            (ColumnValues::Double(v), Datum::Double(f)) => {
                v.push(*f);
                8
            }
            (ColumnValues::Bytes(v), Datum::Bytes(b)) => {
                v.push(ByteArray::from(b.clone()));
                b.len() + 4
            }
            (ColumnValues::Fixed(v), Datum::Bytes(b)) => {
                v.push(FixedLenByteArray::from(b.clone()));
                b.len()
            }
            (_, d) => {
                return Err(ConnectError::data(format!(
                    "parquet: a {:?} datum does not fit a {} column",
                    d, self.physical
                )));
            }
        };
        self.defs.push(self.max_def);
        self.reps.push(rep);
        Ok(size + 4)
    }

    fn len(&self) -> (usize, usize) {
        let values = match &self.values {
            ColumnValues::Boolean(v) => v.len(),
            ColumnValues::Int32(v) => v.len(),
            ColumnValues::Int64(v) => v.len(),
            ColumnValues::Float(v) => v.len(),
            ColumnValues::Double(v) => v.len(),
            ColumnValues::Bytes(v) => v.len(),
            ColumnValues::Fixed(v) => v.len(),
        };
        (values, self.defs.len())
    }

    fn truncate(&mut self, (values, levels): (usize, usize)) {
        match &mut self.values {
            ColumnValues::Boolean(v) => v.truncate(values),
            ColumnValues::Int32(v) => v.truncate(values),
            ColumnValues::Int64(v) => v.truncate(values),
            ColumnValues::Float(v) => v.truncate(values),
            ColumnValues::Double(v) => v.truncate(values),
            ColumnValues::Bytes(v) => v.truncate(values),
            ColumnValues::Fixed(v) => v.truncate(values),
        }
        self.defs.truncate(levels);
        self.reps.truncate(levels);
    }
}

/// Dremel's shredding of one datum into the columns under `node`.
struct Shredder<'a> {
    columns: &'a mut [Column],
    bytes: usize,
}

impl Shredder<'_> {
    /// `def`: the definition level of `node`'s parent; `rep`: the repetition level this value
    /// starts with.
    fn node(&mut self, node: &Node, datum: &Datum, def: i16, rep: i16) -> Result<()> {
        let datum = match (node.null_branch, datum) {
            (Some(null), Datum::Union(i, _)) if *i == null => &Datum::Null,
            (Some(_), Datum::Union(_, d)) if !matches!(node.shape, Shape::Union(_)) => &**d,
            _ => datum,
        };
        if matches!(datum, Datum::Null) {
            if node.repetition == Repetition::REQUIRED {
                return Err(ConnectError::data("parquet: null for a required field"));
            }
            self.nulls(node, def, rep);
            return Ok(());
        }
        let def = if node.repetition == Repetition::OPTIONAL {
            def + 1
        } else {
            def
        };
        self.shape(&node.shape, datum, def, rep)
    }

    fn shape(&mut self, shape: &Shape, datum: &Datum, def: i16, rep: i16) -> Result<()> {
        match (shape, datum) {
            (Shape::Leaf { col }, d) => {
                self.bytes += self.columns[*col].push(d, rep)?;
                Ok(())
            }
            (Shape::Record(fields), Datum::Record(values)) => {
                for (f, v) in fields.iter().zip(values) {
                    self.node(f, v, def, rep)?;
                }
                Ok(())
            }
            (Shape::Wrap(inner), d) => self.node(inner, d, def, rep),
            (
                Shape::List {
                    item,
                    rep: item_rep,
                },
                Datum::Array(items),
            ) => {
                if items.is_empty() {
                    self.nulls_below(item, def, rep);
                    return Ok(());
                }
                for (i, d) in items.iter().enumerate() {
                    let r = if i == 0 { rep } else { *item_rep };
                    // The repeated field adds a definition level.
                    self.shape(&item.shape, d, def + 1, r)?;
                }
                Ok(())
            }
            (
                Shape::Map {
                    key_col,
                    value,
                    rep: entry_rep,
                },
                Datum::Map(entries),
            ) => {
                if entries.is_empty() {
                    self.columns[*key_col].push_null(def, rep);
                    self.nulls(value, def, rep);
                    return Ok(());
                }
                for (i, (k, v)) in entries.iter().enumerate() {
                    let r = if i == 0 { rep } else { *entry_rep };
                    self.bytes += self.columns[*key_col].push(&Datum::Bytes(k.clone()), r)?;
                    self.node(value, v, def + 1, r)?;
                }
                Ok(())
            }
            (Shape::Union(members), Datum::Union(branch, d)) => {
                for (i, m) in members.iter().enumerate() {
                    if let Some(m) = m {
                        if i == *branch {
                            self.node(m, d, def, rep)?;
                        } else {
                            self.nulls(m, def, rep);
                        }
                    }
                }
                Ok(())
            }
            (_, d) => Err(ConnectError::data(format!(
                "parquet: a {d:?} datum does not fit the schema"
            ))),
        }
    }

    /// Every leaf under `node` gets a null at definition level `def` (where the null is).
    fn nulls(&mut self, node: &Node, def: i16, rep: i16) {
        self.nulls_below(node, def, rep);
    }

    fn nulls_below(&mut self, node: &Node, def: i16, rep: i16) {
        match &node.shape {
            Shape::Leaf { col } => self.columns[*col].push_null(def, rep),
            Shape::Record(fields) => fields.iter().for_each(|f| self.nulls_below(f, def, rep)),
            Shape::Wrap(inner) => self.nulls_below(inner, def, rep),
            Shape::List { item, .. } => self.nulls_below(item, def, rep),
            Shape::Map { key_col, value, .. } => {
                self.columns[*key_col].push_null(def, rep);
                self.nulls_below(value, def, rep);
            }
            Shape::Union(members) => members
                .iter()
                .flatten()
                .for_each(|m| self.nulls_below(m, def, rep)),
        }
    }
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
