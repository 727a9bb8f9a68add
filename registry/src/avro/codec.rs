//! Avro's binary encoding, straight between Connect values and bytes (no intermediate Avro
//! object per record): what Java's `GenericDatumWriter`/`GenericDatumReader` write and read for
//! the `GenericRecord` that `AvroData` builds from a Connect value.
//!
//! Encoding walks the Avro schema the bytes are written with and the Connect schema and value
//! beside it: records take their fields by name from the Connect struct (so a registry's latest
//! version with the same fields in another order still writes), unions pick the null branch for
//! a null and otherwise the branch the Connect schema maps to. Decoding walks the writer's Avro
//! schema and builds the values of the Connect schema `AvroData` derives from it.

use connect_api::data::SchemaType;
use connect_api::{ConnectError, Result, Schema, Struct, Value};

use super::data::{AVRO_TYPE_UNION, field_value};
use super::schema::{AvroSchema, Kind};

fn data_err(message: impl Into<String>) -> ConnectError {
    ConnectError::data(message)
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Encodes `value` (of Connect `schema`, `None` for schemaless) as Avro `avro` into `out`.
pub fn encode(avro: &AvroSchema, schema: &Schema, value: &Value, out: &mut Vec<u8>) -> Result<()> {
    let value = field_value(schema, value);
    match &avro.kind {
        Kind::Union(branches) => return encode_union(branches, schema, value, out),
        _ if value.is_null() => {
            return Err(data_err("Found null value for non-optional schema"));
        }
        _ => {}
    }
    let mismatch = || {
        data_err(format!(
            "Invalid type for {}: {} (Avro {})",
            schema.schema_type().json_name().to_ascii_uppercase(),
            value.type_name(),
            avro.type_name()
        ))
    };
    match (&avro.kind, value) {
        (Kind::Null, _) => {}
        (Kind::Boolean, Value::Boolean(b)) => out.push(u8::from(*b)),
        (Kind::Int, Value::Int8(_) | Value::Int16(_) | Value::Int32(_)) => {
            write_long(out, value.as_i64().expect("an integer"))
        }
        (Kind::Long, v) if v.as_i64().is_some() => write_long(out, v.as_i64().expect("integer")),
        (Kind::Float, Value::Float32(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (Kind::Double, Value::Float64(f)) => out.extend_from_slice(&f.to_le_bytes()),
        (Kind::Double, Value::Float32(f)) => out.extend_from_slice(&f64::from(*f).to_le_bytes()),
        (Kind::String, Value::String(s)) => write_bytes(out, s.as_bytes()),
        (Kind::Bytes, Value::Bytes(b)) => write_bytes(out, b),
        (Kind::Fixed { size, .. }, Value::Bytes(b)) => {
            if b.len() == *size {
                out.extend_from_slice(b);
            } else if b.len() < *size
                && schema.name() == Some(connect_api::data::logical::DECIMAL_NAME)
            {
                // Sign-extended to the fixed size (Java's padToFixedSize).
                let fill = if b.first().is_some_and(|x| x & 0x80 != 0) {
                    0xff
                } else {
                    0
                };
                out.extend(std::iter::repeat_n(fill, size - b.len()));
                out.extend_from_slice(b);
            } else {
                return Err(data_err(format!(
                    "Fixed size {size} does not match the value's {} bytes",
                    b.len()
                )));
            }
        }
        (Kind::Enum { symbols, name, .. }, Value::String(s)) => {
            let i = symbols.iter().position(|x| x == s).ok_or_else(|| {
                data_err(format!("\"{s}\" is not a symbol of enum {}", name.full()))
            })?;
            write_long(out, i as i64);
        }
        (Kind::Array(items), Value::Map(entries)) => {
            // A map with non-string keys: an array of key/value records.
            let Kind::Record { fields, .. } = &items.kind else {
                return Err(mismatch());
            };
            let (ks, vs) = (
                schema.key_schema().ok_or_else(mismatch)?,
                schema.value_schema().ok_or_else(mismatch)?,
            );
            if !entries.is_empty() {
                write_long(out, entries.len() as i64);
                for (k, v) in entries {
                    for f in fields {
                        match f.name.as_str() {
                            "key" => encode(&f.schema, ks, k, out)?,
                            _ => encode(&f.schema, vs, v, out)?,
                        }
                    }
                }
            }
            write_long(out, 0);
        }
        (Kind::Array(items), Value::Array(values)) => {
            let elem = schema.value_schema().ok_or_else(mismatch)?;
            if !values.is_empty() {
                write_long(out, values.len() as i64);
                for v in values {
                    encode(items, elem, v, out)?;
                }
            }
            write_long(out, 0);
        }
        (Kind::Map(values_schema), Value::Map(entries)) => {
            let vs = schema.value_schema().ok_or_else(mismatch)?;
            if !entries.is_empty() {
                write_long(out, entries.len() as i64);
                for (k, v) in entries {
                    let Value::String(k) = k else {
                        return Err(data_err("Avro map keys must be strings"));
                    };
                    write_bytes(out, k.as_bytes());
                    encode(values_schema, vs, v, out)?;
                }
            }
            write_long(out, 0);
        }
        (Kind::Record { fields, name, .. }, Value::Struct(s)) => {
            let connect_fields = schema.fields();
            for (i, f) in fields.iter().enumerate() {
                // The same position first (the schema was made from this one), then by name.
                let cf = match connect_fields.get(i) {
                    Some(cf) if cf.name == f.name => cf,
                    _ => match connect_fields
                        .iter()
                        .find(|cf| cf.name == f.name || super::data::scrub_name(&cf.name) == f.name)
                    {
                        Some(cf) => cf,
                        None => {
                            // A field of the writer's schema (the subject's latest) the record
                            // does not have: its default, as a reader of the older schema sees it.
                            let Some(default) = &f.default else {
                                return Err(data_err(format!(
                                    "Field {} of Avro record {} is not in the Connect struct and has no default",
                                    f.name,
                                    name.full()
                                )));
                            };
                            encode_default(&f.schema, default, out)?;
                            continue;
                        }
                    },
                };
                let v = s.values().get(cf.index).unwrap_or(&Value::Null);
                encode(&f.schema, &cf.schema, v, out)?;
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

/// Encodes a JSON default (Avro's JSON form: a union's default is of its first branch, bytes
/// and fixed are ISO-8859-1 strings).
fn encode_default(avro: &AvroSchema, json: &serde_json::Value, out: &mut Vec<u8>) -> Result<()> {
    use serde_json::Value as J;
    let bad = || {
        data_err(format!(
            "Invalid default {json} for Avro {}",
            avro.type_name()
        ))
    };
    let latin1 = |s: &str| -> Result<Vec<u8>> {
        s.chars()
            .map(|c| u8::try_from(u32::from(c)).map_err(|_| bad()))
            .collect()
    };
    match (&avro.kind, json) {
        (Kind::Null, J::Null) => {}
        (Kind::Boolean, J::Bool(b)) => out.push(u8::from(*b)),
        (Kind::Int | Kind::Long, J::Number(n)) => write_long(out, n.as_i64().ok_or_else(bad)?),
        (Kind::Float, J::Number(n)) => {
            out.extend_from_slice(&(n.as_f64().ok_or_else(bad)? as f32).to_le_bytes())
        }
        (Kind::Double, J::Number(n)) => {
            out.extend_from_slice(&n.as_f64().ok_or_else(bad)?.to_le_bytes())
        }
        (Kind::String, J::String(s)) => write_bytes(out, s.as_bytes()),
        (Kind::Bytes, J::String(s)) => write_bytes(out, &latin1(s)?),
        (Kind::Fixed { size, .. }, J::String(s)) => {
            let b = latin1(s)?;
            if b.len() != *size {
                return Err(bad());
            }
            out.extend_from_slice(&b);
        }
        (Kind::Enum { symbols, .. }, J::String(s)) => write_long(
            out,
            symbols.iter().position(|x| x == s).ok_or_else(bad)? as i64,
        ),
        (Kind::Array(items), J::Array(values)) => {
            if !values.is_empty() {
                write_long(out, values.len() as i64);
                for v in values {
                    encode_default(items, v, out)?;
                }
            }
            write_long(out, 0);
        }
        (Kind::Map(values), J::Object(entries)) => {
            if !entries.is_empty() {
                write_long(out, entries.len() as i64);
                for (k, v) in entries {
                    write_bytes(out, k.as_bytes());
                    encode_default(values, v, out)?;
                }
            }
            write_long(out, 0);
        }
        (Kind::Record { fields, .. }, J::Object(o)) => {
            for f in fields {
                let v = o.get(&f.name).or(f.default.as_ref()).ok_or_else(bad)?;
                encode_default(&f.schema, v, out)?;
            }
        }
        (Kind::Union(branches), _) => {
            write_long(out, 0);
            encode_default(branches.first().ok_or_else(bad)?, json, out)?;
        }
        _ => return Err(bad()),
    }
    Ok(())
}

fn encode_union(
    branches: &[AvroSchema],
    schema: &Schema,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<()> {
    if value.is_null() {
        let i = branches
            .iter()
            .position(AvroSchema::is_null)
            .ok_or_else(|| data_err("Found null value for non-optional schema"))?;
        write_long(out, i as i64);
        return Ok(());
    }
    if schema.name() == Some(AVRO_TYPE_UNION) {
        // A Connect union struct: the first set field is the value; its branch is the n-th
        // non-null one.
        let Value::Struct(s) = value else {
            return Err(data_err("Invalid type for a union: not a struct"));
        };
        let non_null: Vec<usize> = (0..branches.len())
            .filter(|i| !branches[*i].is_null())
            .collect();
        for (f, v) in schema.fields().iter().zip(s.values()) {
            if !v.is_null() {
                let i = *non_null
                    .get(f.index)
                    .ok_or_else(|| data_err("Union field without an Avro branch"))?;
                write_long(out, i as i64);
                return encode(&branches[i], &f.schema, v, out);
            }
        }
        return encode_union(branches, schema, &Value::Null, out);
    }
    let i = branches
        .iter()
        .position(|b| !b.is_null() && branch_fits(b, schema))
        .ok_or_else(|| {
            data_err(format!(
                "No branch of the Avro union fits a {} value",
                schema.schema_type().json_name()
            ))
        })?;
    write_long(out, i as i64);
    encode(&branches[i], schema, value, out)
}

/// Whether the Connect schema maps to this Avro union branch.
fn branch_fits(branch: &AvroSchema, schema: &Schema) -> bool {
    matches!(
        (&branch.kind, schema.schema_type()),
        (
            Kind::Int,
            SchemaType::Int8 | SchemaType::Int16 | SchemaType::Int32
        ) | (Kind::Long, SchemaType::Int64)
            | (Kind::Float, SchemaType::Float32)
            | (Kind::Double, SchemaType::Float64)
            | (Kind::Boolean, SchemaType::Boolean)
            | (Kind::String | Kind::Enum { .. }, SchemaType::String)
            | (Kind::Bytes | Kind::Fixed { .. }, SchemaType::Bytes)
            | (Kind::Array(_), SchemaType::Array | SchemaType::Map)
            | (Kind::Map(_), SchemaType::Map)
            | (Kind::Record { .. }, SchemaType::Struct)
    )
}

/// A reader over one datum's bytes.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
}

fn eof() -> ConnectError {
    data_err("Avro data ends early (truncated or not written with this schema)")
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }

    pub fn byte(&mut self) -> Result<u8> {
        let (b, rest) = self.bytes.split_first().ok_or_else(eof)?;
        self.bytes = rest;
        Ok(*b)
    }

    pub fn long(&mut self) -> Result<i64> {
        let mut z: u64 = 0;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift >= 64 {
                return Err(data_err("Invalid Avro varint (longer than 10 bytes)"));
            }
            z |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    pub fn int(&mut self) -> Result<i32> {
        let v = self.long()?;
        i32::try_from(v).map_err(|_| data_err(format!("Avro int out of range: {v}")))
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(eof());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn len(&mut self) -> Result<usize> {
        let n = self.long()?;
        usize::try_from(n)
            .ok()
            .filter(|n| *n <= self.bytes.len())
            .ok_or_else(|| data_err(format!("Invalid Avro length {n}")))
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    pub fn string(&mut self) -> Result<String> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| data_err("Avro string is not valid UTF-8"))
    }

    /// Block counts of an array or map: a negative count is followed by the block's size.
    pub fn block(&mut self) -> Result<usize> {
        let n = self.long()?;
        if n < 0 {
            let _size = self.long()?;
            return Ok(n.unsigned_abs() as usize);
        }
        // Every item takes at least... nothing (null); bound by what is left times a margin.
        if n as u64 > (self.bytes.len() as u64 + 1) * 8 {
            return Err(data_err(format!("Invalid Avro block count {n}")));
        }
        Ok(n as usize)
    }
}

/// Decodes one datum written with `avro` into a value of Connect `schema` (from
/// [`super::data::AvroData::to_connect_schema`] of the same `avro`).
pub fn decode(avro: &AvroSchema, schema: &Schema, r: &mut Reader<'_>) -> Result<Value> {
    Ok(match &avro.kind {
        Kind::Null => Value::Null,
        Kind::Boolean => Value::Boolean(match r.byte()? {
            0 => false,
            1 => true,
            b => return Err(data_err(format!("Invalid Avro boolean byte {b}"))),
        }),
        Kind::Int => {
            let v = r.int()?;
            match schema.schema_type() {
                SchemaType::Int8 => Value::Int8(v as i8),
                SchemaType::Int16 => Value::Int16(v as i16),
                _ => Value::Int32(v),
            }
        }
        Kind::Long => Value::Int64(r.long()?),
        Kind::Float => Value::Float32(f32::from_le_bytes(r.take(4)?.try_into().expect("4 bytes"))),
        Kind::Double => Value::Float64(f64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"))),
        Kind::Bytes => Value::Bytes(r.bytes()?.to_vec()),
        Kind::Fixed { size, .. } => Value::Bytes(r.take(*size)?.to_vec()),
        Kind::String => Value::String(r.string()?),
        Kind::Enum { symbols, name, .. } => {
            let i = r.long()?;
            Value::String(
                usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| data_err(format!("Invalid index {i} of enum {}", name.full())))?
                    .clone(),
            )
        }
        Kind::Array(items) => {
            if schema.schema_type() == SchemaType::Map {
                let Kind::Record { fields, .. } = &items.kind else {
                    return Err(data_err("A map must be an array of records"));
                };
                let (ks, vs) = (
                    schema.key_schema().expect("map schema"),
                    schema.value_schema().expect("map schema"),
                );
                let mut entries = Vec::new();
                loop {
                    let n = r.block()?;
                    if n == 0 {
                        break;
                    }
                    for _ in 0..n {
                        let (mut k, mut v) = (Value::Null, Value::Null);
                        for f in fields {
                            match f.name.as_str() {
                                "key" => k = decode(&f.schema, ks, r)?,
                                _ => v = decode(&f.schema, vs, r)?,
                            }
                        }
                        entries.push((k, v));
                    }
                }
                Value::Map(entries)
            } else {
                let elem = schema
                    .value_schema()
                    .ok_or_else(|| data_err("An array needs an element schema"))?;
                let mut values = Vec::new();
                loop {
                    let n = r.block()?;
                    if n == 0 {
                        break;
                    }
                    values.reserve(n.min(4096));
                    for _ in 0..n {
                        values.push(decode(items, elem, r)?);
                    }
                }
                Value::Array(values)
            }
        }
        Kind::Map(values_schema) => {
            let vs = schema
                .value_schema()
                .ok_or_else(|| data_err("A map needs a value schema"))?;
            let mut entries = Vec::new();
            loop {
                let n = r.block()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    let k = Value::String(r.string()?);
                    entries.push((k, decode(values_schema, vs, r)?));
                }
            }
            Value::Map(entries)
        }
        Kind::Record { fields, .. } => {
            let connect_fields = schema.fields();
            let mut values = Vec::with_capacity(fields.len());
            for (f, cf) in fields.iter().zip(connect_fields) {
                values.push(decode(&f.schema, &cf.schema, r)?);
            }
            Value::Struct(Struct::from_checked_values(schema.clone(), values))
        }
        Kind::Union(branches) => {
            let i = r.long()?;
            let branch = usize::try_from(i)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| data_err(format!("Invalid Avro union index {i}")))?;
            if branch.is_null() {
                return Ok(Value::Null);
            }
            if schema.name() == Some(AVRO_TYPE_UNION) {
                let position = branches[..i as usize]
                    .iter()
                    .filter(|b| !b.is_null())
                    .count();
                let f = schema
                    .fields()
                    .get(position)
                    .ok_or_else(|| data_err("Union branch without a Connect field"))?;
                let v = decode(branch, &f.schema, r)?;
                let mut values = vec![Value::Null; schema.fields().len()];
                values[position] = v;
                Value::Struct(Struct::from_checked_values(schema.clone(), values))
            } else {
                decode(branch, schema, r)?
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::super::data::AvroData;
    use super::*;
    use connect_api::data::{SchemaBuilder, logical};

    #[test]
    fn longs_are_zigzag_varints() {
        for (v, bytes) in [
            (0i64, vec![0u8]),
            (-1, vec![1]),
            (1, vec![2]),
            (-64, vec![0x7f]),
            (64, vec![0x80, 0x01]),
            (
                i64::MAX,
                vec![0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut out = Vec::new();
            write_long(&mut out, v);
            assert_eq!(out, bytes, "{v}");
            assert_eq!(Reader::new(&bytes).long().unwrap(), v);
        }
    }

    #[test]
    fn a_struct_round_trips_through_bytes() {
        let schema = SchemaBuilder::struct_()
            .field("id", Schema::int64())
            .field("name", Schema::optional_string())
            .field("price", logical::decimal_builder(2).build())
            .field("tags", SchemaBuilder::array(Schema::string()).build())
            .field(
                "m",
                SchemaBuilder::map(Schema::int32(), Schema::boolean()).build(),
            )
            .field("small", Schema::int8())
            .build();
        let value = Value::Struct(Struct::from_checked_values(
            schema.clone(),
            vec![
                Value::Int64(-5),
                Value::Null,
                Value::Bytes(vec![0x30, 0x39]),
                Value::Array(vec!["a".into(), "b".into()]),
                Value::Map(vec![(Value::Int32(1), Value::Boolean(true))]),
                Value::Int8(-3),
            ],
        ));
        let data = AvroData::default();
        let avro = data.from_connect_schema(&schema).unwrap();
        let mut out = Vec::new();
        encode(&avro, &schema, &value, &mut out).unwrap();
        assert_eq!(
            out,
            [
                9, // -5
                0, // null branch
                4, 0x30, 0x39, // decimal bytes
                4, 2, b'a', 2, b'b', 0, // array
                2, 2, 1, 0, // map entries: key 1, true
                5  // -3
            ]
        );
        let read_schema = data.to_connect_schema(&avro, None).unwrap();
        let back = decode(&avro, &read_schema, &mut Reader::new(&out)).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn truncated_and_hostile_input_is_a_data_error() {
        let avro = AvroSchema::parse(r#"{"type":"array","items":"string"}"#).unwrap();
        let schema = SchemaBuilder::array(Schema::string()).build();
        for bytes in [
            &[][..],
            &[2][..],
            &[2, 200, 1][..],
            &[0xff, 0xff, 0xff, 0xff, 0x0f][..],
        ] {
            let e = decode(&avro, &schema, &mut Reader::new(bytes)).unwrap_err();
            assert_eq!(e.kind(), connect_api::ErrorKind::Data, "{bytes:?}: {e}");
        }
    }
}
