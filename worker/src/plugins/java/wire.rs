//! The binary form a poll answer's records travel in (the host's `RecordCodec.encode` and
//! `RecordWriter`): Connect data as the Java task built it, walked by its schema, so the worker
//! reads values without a JSON text to parse or a JSON tree to build.
//!
//! ```text
//! record  = seq:i64 topic:str flags:u8 [partition:i32] [timestamp:i64]
//!           key:data value:data [headers] source_partition source_offset
//! flags   = 1: partition follows, 2: timestamp follows, 4: headers follow
//! data    = schema_id:i64 (0: no schema) then value(schema), or without a schema
//!           0:u8 (null) | 1:u8 bytes (the schemaless JsonConverter payload)
//! headers = count:i32 (key:str envelope:bytes (JsonConverter, schemas.enable=true))*
//! source_partition = 0:u8 (null) | 1:u8 (the previous record's) | 2:u8 json:str
//! source_offset    = 0:u8 (null) | 2:u8 json:str
//! value   = 0:u8 (null) | 1:u8 then by the schema's type: INT8 1 byte, INT16 2, INT32 4,
//!           INT64 8, FLOAT32/FLOAT64 IEEE bits, BOOLEAN 1, STRING/BYTES len:i32 bytes,
//!           ARRAY count:i32 value*, MAP count:i32 (key value)*, STRUCT each field's value
//! ```
//!
//! Big-endian throughout. Logical types arrive as Connect stores them (Decimal: unscaled
//! two's complement bytes; Date, Time: INT32; Timestamp: INT64), which is how this
//! workspace's data holds them.
//!
//! # Errors
//!
//! - A truncated or inconsistent attachment (a length past its end, a schema id the host
//!   never sent, invalid UTF-8) is a data error naming what did not read; nothing panics and
//!   no length read from the input sizes an allocation beyond the bytes that are there.

use connect_api::converter::JsonConverter;
use connect_api::data::{Schema, SchemaType, Struct, Value as Data};
use connect_api::record::Headers;
use connect_api::{ConnectError, SourcePartition, SourceRecord};

use super::convert::Schemas;

struct Reader<'a> {
    buf: &'a [u8],
}

fn short() -> ConnectError {
    ConnectError::data("a poll answer's records end too early")
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ConnectError> {
        if n > self.buf.len() {
            return Err(short());
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], ConnectError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, ConnectError> {
        Ok(self.array::<1>()?[0])
    }

    fn i32(&mut self) -> Result<i32, ConnectError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    fn i64(&mut self) -> Result<i64, ConnectError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A count or length: never more than the bytes left (each element takes at least one).
    fn count(&mut self) -> Result<usize, ConnectError> {
        let n = usize::try_from(self.i32()?)
            .map_err(|_| ConnectError::data("a negative length in a poll answer's records"))?;
        if n > self.buf.len() {
            return Err(short());
        }
        Ok(n)
    }

    fn bytes(&mut self) -> Result<&'a [u8], ConnectError> {
        let n = self.count()?;
        self.take(n)
    }

    fn str(&mut self) -> Result<&'a str, ConnectError> {
        std::str::from_utf8(self.bytes()?)
            .map_err(|e| ConnectError::data(format!("a string that is not UTF-8: {e}")))
    }

    fn value(&mut self, schema: &Schema) -> Result<Data, ConnectError> {
        if self.u8()? == 0 {
            return Ok(Data::Null);
        }
        Ok(match schema.schema_type() {
            SchemaType::Int8 => Data::Int8(i8::from_be_bytes(self.array()?)),
            SchemaType::Int16 => Data::Int16(i16::from_be_bytes(self.array()?)),
            SchemaType::Int32 => Data::Int32(self.i32()?),
            SchemaType::Int64 => Data::Int64(self.i64()?),
            SchemaType::Float32 => Data::Float32(f32::from_be_bytes(self.array()?)),
            SchemaType::Float64 => Data::Float64(f64::from_be_bytes(self.array()?)),
            SchemaType::Boolean => Data::Boolean(self.u8()? != 0),
            SchemaType::String => Data::String(self.str()?.to_owned()),
            SchemaType::Bytes => Data::Bytes(self.bytes()?.to_vec()),
            SchemaType::Array => {
                let items = element_schema(schema.value_schema(), "array")?;
                let n = self.count()?;
                let mut out = Vec::with_capacity(n);
                for _ in 0..n {
                    out.push(self.value(items)?);
                }
                Data::Array(out)
            }
            SchemaType::Map => {
                let keys = element_schema(schema.key_schema(), "map key")?;
                let values = element_schema(schema.value_schema(), "map value")?;
                let n = self.count()?;
                let mut out = Vec::with_capacity(n);
                for _ in 0..n {
                    let k = self.value(keys)?;
                    out.push((k, self.value(values)?));
                }
                Data::Map(out)
            }
            SchemaType::Struct => {
                let mut out = Vec::with_capacity(schema.fields().len());
                for field in schema.fields() {
                    out.push(self.value(&field.schema)?);
                }
                Data::Struct(Struct::from_checked_values(schema.clone(), out))
            }
        })
    }

    /// A key or value: its schema (by id) and the value.
    fn data(
        &mut self,
        json: &JsonConverter,
        schemas: &Schemas,
    ) -> Result<(Option<Schema>, Data), ConnectError> {
        let id = self.i64()?;
        if id == 0 {
            if self.u8()? == 0 {
                return Ok((None, Data::Null));
            }
            let payload: serde_json::Value = serde_json::from_slice(self.bytes()?)
                .map_err(|e| ConnectError::data(format!("a schemaless payload: {e}")))?;
            return Ok((None, json.payload_to_connect(None, &payload)?));
        }
        let schema = u64::try_from(id)
            .ok()
            .and_then(|id| schemas.get(&id))
            .ok_or_else(|| ConnectError::data(format!("a record names unknown schema {id}")))?;
        let Some(schema) = schema.clone() else {
            return Ok((None, Data::Null));
        };
        let value = self.value(&schema)?;
        Ok((Some(schema), value))
    }

    fn json_map(
        &mut self,
        what: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, ConnectError> {
        serde_json::from_str(self.str()?)
            .map_err(|e| ConnectError::data(format!("a record's {what} is not a JSON object: {e}")))
    }
}

fn element_schema<'s>(schema: Option<&'s Schema>, what: &str) -> Result<&'s Schema, ConnectError> {
    schema.ok_or_else(|| ConnectError::data(format!("an {what} schema is missing")))
}

/// What a task's records carry from one poll answer to the next: the source partition a
/// record may name as "the previous record's".
#[derive(Default)]
pub(super) struct Decoder {
    last_partition: SourcePartition,
}

impl Decoder {
    /// The `count` records of a poll answer's attachment, each with its host sequence number.
    pub(super) fn records(
        &mut self,
        json: &JsonConverter,
        schemas: &Schemas,
        attachment: &[u8],
        count: usize,
    ) -> Result<Vec<(u64, SourceRecord)>, ConnectError> {
        let mut r = Reader { buf: attachment };
        let mut out = Vec::with_capacity(count.min(attachment.len()));
        for _ in 0..count {
            let seq = u64::try_from(r.i64()?)
                .map_err(|_| ConnectError::data("a negative record sequence number"))?;
            let topic = r.str()?.to_owned();
            let flags = r.u8()?;
            let kafka_partition = if flags & 1 != 0 { Some(r.i32()?) } else { None };
            let timestamp = if flags & 2 != 0 { Some(r.i64()?) } else { None };
            let (key_schema, key) = r.data(json, schemas)?;
            let (value_schema, value) = r.data(json, schemas)?;
            let mut headers = Headers::new();
            if flags & 4 != 0 {
                for _ in 0..r.count()? {
                    let name = r.str()?.to_owned();
                    let envelope: serde_json::Value = serde_json::from_slice(r.bytes()?)
                        .map_err(|e| ConnectError::data(format!("header {name}: {e}")))?;
                    let sv = if envelope.is_null() {
                        None
                    } else {
                        Some(json.from_json_value(&envelope)?)
                    };
                    match sv {
                        Some(sv) => headers.add(&name, sv.schema, sv.value),
                        None => headers.add(&name, None, Data::Null),
                    };
                }
            }
            let source_partition = match r.u8()? {
                0 => SourcePartition::new(),
                1 => self.last_partition.clone(),
                _ => {
                    self.last_partition = r.json_map("source partition")?;
                    self.last_partition.clone()
                }
            };
            let source_offset = match r.u8()? {
                0 => None,
                _ => Some(r.json_map("source offset")?),
            };
            out.push((
                seq,
                SourceRecord {
                    source_partition,
                    source_offset,
                    topic,
                    kafka_partition,
                    key_schema,
                    key,
                    value_schema,
                    value,
                    timestamp,
                    headers,
                },
            ));
        }
        if !r.buf.is_empty() {
            return Err(ConnectError::data(format!(
                "{} bytes after the {count} records of a poll answer",
                r.buf.len()
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::data::SchemaBuilder;
    use serde_json::json;

    /// The bytes the host writes (RecordWriter), spelled out.
    #[derive(Default)]
    struct Bytes(Vec<u8>);

    impl Bytes {
        fn u8(mut self, v: u8) -> Self {
            self.0.push(v);
            self
        }
        fn i32(mut self, v: i32) -> Self {
            self.0.extend_from_slice(&v.to_be_bytes());
            self
        }
        fn i64(mut self, v: i64) -> Self {
            self.0.extend_from_slice(&v.to_be_bytes());
            self
        }
        fn str(self, s: &str) -> Self {
            let n = i32::try_from(s.len()).unwrap();
            let mut b = self.i32(n);
            b.0.extend_from_slice(s.as_bytes());
            b
        }
    }

    fn schemas() -> Schemas {
        let value = SchemaBuilder::struct_()
            .name("v")
            .field("id", Schema::int64())
            .field("name", Schema::optional_string())
            .field(
                "tags",
                SchemaBuilder::map(Schema::string(), Schema::int32()).build(),
            )
            .field(
                "price",
                connect_api::data::logical::decimal_builder(2).build(),
            )
            .build();
        Schemas::from([(1, Some(Schema::int32())), (2, Some(value))])
    }

    #[test]
    fn records_read_values_by_schema_id_and_reuse_the_previous_partition() {
        let json = JsonConverter::new(true);
        let record = |b: Bytes, seq: i64, partition: Bytes| {
            let b = b.i64(seq).str("t").u8(1 | 2).i32(3).i64(42);
            let b = b.i64(1).u8(1).i32(7); // key: INT32 7
            // value: {id: 9, name: null, tags: {"a": 1}, price: 12.34 (1234, scale 2)}
            let b = b.i64(2).u8(1).u8(1).i64(9).u8(0).u8(1).i32(1);
            let b = b.u8(1).str("a").u8(1).i32(1).u8(1).i32(2).u8(0x04).u8(0xD2);
            let mut b = b;
            b.0.extend_from_slice(&partition.0);
            b.u8(2).str(r#"{"lsn":10}"#)
        };
        let first = record(
            Bytes::default(),
            5,
            Bytes::default().u8(2).str(r#"{"server":"s"}"#),
        );
        let both = record(first, 6, Bytes::default().u8(1));
        let mut decoder = Decoder::default();
        let records = decoder.records(&json, &schemas(), &both.0, 2).unwrap();
        assert_eq!(records.len(), 2);
        let (seq, r) = &records[1];
        assert_eq!(*seq, 6);
        assert_eq!(
            (r.topic.as_str(), r.kafka_partition, r.timestamp),
            ("t", Some(3), Some(42))
        );
        assert_eq!(r.key, Data::Int32(7));
        assert_eq!(
            r.source_partition["server"],
            json!("s"),
            "the previous record's partition"
        );
        assert_eq!(r.source_offset.as_ref().unwrap()["lsn"], json!(10));
        let Data::Struct(s) = &r.value else {
            panic!("a struct: {:?}", r.value)
        };
        assert_eq!(s.get("id"), Some(&Data::Int64(9)));
        assert_eq!(s.get("name"), Some(&Data::Null));
        assert_eq!(
            s.get("tags"),
            Some(&Data::Map(vec![(Data::String("a".into()), Data::Int32(1))]))
        );
        assert_eq!(s.get("price"), Some(&Data::Bytes(vec![0x04, 0xD2])));
        // The same bytes cut anywhere are an error, never a panic.
        for cut in 0..both.0.len() {
            assert!(
                Decoder::default()
                    .records(&json, &schemas(), &both.0[..cut], 2)
                    .is_err()
            );
        }
        let unknown = Bytes::default().i64(1).str("t").u8(0).i64(99);
        assert!(
            Decoder::default()
                .records(&json, &schemas(), &unknown.0, 1)
                .unwrap_err()
                .to_string()
                .contains("unknown schema 99")
        );
    }
}
