//! parquet-avro's Parquet schema for an Avro schema (`AvroSchemaConverter`), the nodes that say
//! how a datum fills it, and the leaf columns' buffers.

use std::sync::Arc;

use connect_api::error::{ConnectError, Result};
use connect_registry::avro::schema::{AvroSchema, Kind};
use parquet::basic::{ConvertedType, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::data_type::{ByteArray, FixedLenByteArray};
use parquet::schema::types::{Type, TypePtr};

use super::datum::Datum;

/// One field of the Parquet schema and how an Avro datum fills it.
#[derive(Debug)]
pub(super) struct Node {
    pub(super) repetition: Repetition,
    /// Set for a field from a `[null, X]` union: the datum is a `Union` to unwrap.
    pub(super) null_branch: Option<usize>,
    pub(super) shape: Shape,
}

#[derive(Debug)]
pub(super) enum Shape {
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
pub(super) struct Column {
    pub(super) physical: Physical,
    pub(super) max_def: i16,
    pub(super) max_rep: i16,
    pub(super) values: ColumnValues,
    pub(super) defs: Vec<i16>,
    pub(super) reps: Vec<i16>,
}

pub(super) enum ColumnValues {
    Boolean(Vec<bool>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    Bytes(Vec<ByteArray>),
    Fixed(Vec<FixedLenByteArray>),
}

/// Builds parquet-avro's schema for `avro`, the nodes that fill it and the columns.
pub(super) struct Builder {
    pub(super) old_lists: bool,
    pub(super) columns: Vec<Column>,
}

impl Builder {
    pub(super) fn field(
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
pub(super) fn decimal(avro: &AvroSchema) -> Option<(i32, i32)> {
    if avro.prop_str("logicalType") != Some("decimal") {
        return None;
    }
    let num = |k: &str| avro.props.get(k).and_then(serde_json::Value::as_i64);
    let precision = i32::try_from(num("precision")?).ok()?;
    let scale = i32::try_from(num("scale").unwrap_or(0)).ok()?;
    Some((precision, scale))
}

impl Column {
    pub(super) fn new(physical: Physical, max_def: i16, max_rep: i16) -> Self {
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

    pub(super) fn push_null(&mut self, def: i16, rep: i16) {
        self.defs.push(def);
        self.reps.push(rep);
    }

    /// Appends a value; returns the bytes it adds to the buffer.
    pub(super) fn push(&mut self, datum: &Datum, rep: i16) -> Result<usize> {
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

    pub(super) fn len(&self) -> (usize, usize) {
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

    pub(super) fn truncate(&mut self, (values, levels): (usize, usize)) {
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
