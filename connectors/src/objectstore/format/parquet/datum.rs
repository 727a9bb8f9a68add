//! Avro binary decoded into generic datums, the values parquet-avro's `GenericRecord`s hold.

use connect_api::error::{ConnectError, Result};
use connect_registry::avro::codec::Reader;
use connect_registry::avro::schema::{AvroSchema, Kind};

/// A generic Avro datum, as parquet-avro's `GenericRecord` holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Datum {
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

pub(super) fn decode(avro: &AvroSchema, r: &mut Reader<'_>) -> Result<Datum> {
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
