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
//! A sink task's records travel the other way in the same `data` and `value` forms (the
//! host's `SinkTasks.decode` reads them), their schemas once per task (a `sink.put` request's
//! `schemas`, as Apache's JsonConverter writes schemas):
//!
//! ```text
//! sink_record = topic:str partition:i32 offset:i64 flags:u8 [timestamp:i64]
//!               timestamp_type:u8 key:data value:data [headers] [original]
//! flags       = 1: timestamp follows, 2: headers follow, 4: original follows
//! timestamp_type = 0 NoTimestampType | 1 CreateTime | 2 LogAppendTime
//! original    = topic:str partition:i32 offset:i64 (KIP-793, when they differ)
//! ```
//!
//! A batch for a Java transformation or predicate (`transform.apply`, `predicate.test`) and a
//! transformation's results use one more record form, schemas once per instance and direction:
//!
//! ```text
//! stage_record = topic:str flags:u8 [partition:i32] [timestamp:i64] [offset:i64]
//!                key:data value:data [headers]
//! flags        = 1: partition, 2: timestamp, 4: headers, 8: offset (a sink record's) follow
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
use connect_api::converter::as_json_schema;
use connect_api::data::{Schema, SchemaType, Struct, Value as Data};
use connect_api::record::{Headers, SinkRecord, TimestampType};
use connect_api::{ConnectError, SourcePartition, SourceRecord};
use connect_transforms::Record;

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

    /// `count` headers as JsonConverter envelopes (`null`: no schema, no value).
    fn headers(&mut self, json: &JsonConverter) -> Result<Headers, ConnectError> {
        let mut headers = Headers::new();
        for _ in 0..self.count()? {
            let name = self.str()?.to_owned();
            let envelope: serde_json::Value = serde_json::from_slice(self.bytes()?)
                .map_err(|e| ConnectError::data(format!("header {name}: {e}")))?;
            if envelope.is_null() {
                headers.add(&name, None, Data::Null);
            } else {
                let sv = json.from_json_value(&envelope)?;
                headers.add(&name, sv.schema, sv.value);
            }
        }
        Ok(headers)
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
            let headers = if flags & 4 != 0 {
                r.headers(json)?
            } else {
                Headers::new()
            };
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

/// Writes the binary form (the module's layout) into a buffer.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }

    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }

    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }

    fn len(&mut self, n: usize) -> Result<(), ConnectError> {
        let n = i32::try_from(n)
            .map_err(|_| ConnectError::data(format!("{n} bytes or items are too many to send")))?;
        self.i32(n);
        Ok(())
    }

    fn bytes(&mut self, b: &[u8]) -> Result<(), ConnectError> {
        self.len(b.len())?;
        self.0.extend_from_slice(b);
        Ok(())
    }

    fn value(&mut self, schema: &Schema, value: &Data) -> Result<(), ConnectError> {
        if value.is_null() {
            self.u8(0);
            return Ok(());
        }
        self.u8(1);
        let mismatch = || {
            ConnectError::data(format!(
                "a {} value for a {:?} schema",
                value.type_name(),
                schema.schema_type()
            ))
        };
        match (schema.schema_type(), value) {
            (SchemaType::Int8, Data::Int8(v)) => self.0.extend_from_slice(&v.to_be_bytes()),
            (SchemaType::Int16, Data::Int16(v)) => self.0.extend_from_slice(&v.to_be_bytes()),
            (SchemaType::Int32, Data::Int32(v)) => self.i32(*v),
            (SchemaType::Int64, Data::Int64(v)) => self.i64(*v),
            (SchemaType::Float32, Data::Float32(v)) => self.0.extend_from_slice(&v.to_be_bytes()),
            (SchemaType::Float64, Data::Float64(v)) => self.0.extend_from_slice(&v.to_be_bytes()),
            (SchemaType::Boolean, Data::Boolean(v)) => self.u8(u8::from(*v)),
            (SchemaType::String, Data::String(v)) => self.bytes(v.as_bytes())?,
            (SchemaType::Bytes, Data::Bytes(v)) => self.bytes(v)?,
            (SchemaType::Array, Data::Array(items)) => {
                let inner = element_schema(schema.value_schema(), "array")?;
                self.len(items.len())?;
                for item in items {
                    self.value(inner, item)?;
                }
            }
            (SchemaType::Map, Data::Map(entries)) => {
                let keys = element_schema(schema.key_schema(), "map key")?;
                let values = element_schema(schema.value_schema(), "map value")?;
                self.len(entries.len())?;
                for (k, v) in entries {
                    self.value(keys, k)?;
                    self.value(values, v)?;
                }
            }
            (SchemaType::Struct, Data::Struct(st)) => {
                if st.schema() != schema {
                    return Err(ConnectError::data("Mismatching schema."));
                }
                for (field, v) in schema.fields().iter().zip(st.values()) {
                    self.value(&field.schema, v)?;
                }
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }
}

impl Writer {
    /// Headers as JsonConverter envelopes (`null` for no schema and no value).
    fn headers(
        &mut self,
        envelopes: &JsonConverter,
        headers: &Headers,
    ) -> Result<(), ConnectError> {
        self.len(headers.len())?;
        for h in headers {
            self.bytes(h.key.as_bytes())?;
            let envelope = if h.schema.is_none() && h.value.is_null() {
                serde_json::Value::Null
            } else {
                envelopes.to_json_value(h.schema.as_ref(), &h.value)?
            };
            self.bytes(
                &serde_json::to_vec(&envelope).map_err(|e| ConnectError::data(e.to_string()))?,
            )?;
        }
        Ok(())
    }
}

/// What a sink task's records carry from one `put` to the next: the schemas the host knows.
#[derive(Default)]
pub(super) struct Encoder {
    /// Schemas sent, with their ids (found by identity first, then by content).
    sent: Vec<(Schema, u64)>,
}

impl Encoder {
    fn schema_id(
        &mut self,
        schema: &Schema,
        new: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<u64, ConnectError> {
        if let Some((_, id)) = self.sent.iter().rev().find(|(s, _)| s.ptr_eq(schema)) {
            return Ok(*id);
        }
        if let Some((_, id)) = self.sent.iter().rev().find(|(s, _)| s == schema) {
            return Ok(*id);
        }
        let id = self.sent.len() as u64 + 1;
        new.insert(id.to_string(), as_json_schema(schema)?);
        self.sent.push((schema.clone(), id));
        Ok(id)
    }

    fn data(
        &mut self,
        w: &mut Writer,
        payloads: &JsonConverter,
        schema: Option<&Schema>,
        value: &Data,
        new: &mut serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), ConnectError> {
        let Some(schema) = schema else {
            w.i64(0);
            if value.is_null() {
                w.u8(0);
            } else {
                w.u8(1);
                let json = payloads.to_json_value(None, value)?;
                w.bytes(
                    &serde_json::to_vec(&json).map_err(|e| ConnectError::data(e.to_string()))?,
                )?;
            }
            return Ok(());
        };
        let id = self.schema_id(schema, new)?;
        w.i64(i64::try_from(id).unwrap_or(i64::MAX));
        w.value(schema, value)
    }

    /// A batch for a Java transformation or predicate (`stage_record`s): the schemas named for
    /// the first time and the records' bytes.
    pub(super) fn stage_records(
        &mut self,
        envelopes: &JsonConverter,
        payloads: &JsonConverter,
        records: &[&Record],
    ) -> Result<(serde_json::Map<String, serde_json::Value>, Vec<u8>), ConnectError> {
        let mut new = serde_json::Map::new();
        let mut w = Writer::default();
        for r in records {
            w.bytes(r.topic.as_bytes())?;
            let flags = u8::from(r.kafka_partition.is_some())
                | (u8::from(r.timestamp.is_some()) << 1)
                | (u8::from(!r.headers.is_empty()) << 2)
                | (u8::from(r.kafka_offset.is_some()) << 3);
            w.u8(flags);
            if let Some(p) = r.kafka_partition {
                w.i32(p);
            }
            if let Some(ts) = r.timestamp {
                w.i64(ts);
            }
            if let Some(o) = r.kafka_offset {
                w.i64(o);
            }
            self.data(&mut w, payloads, r.key_schema.as_ref(), &r.key, &mut new)?;
            self.data(
                &mut w,
                payloads,
                r.value_schema.as_ref(),
                &r.value,
                &mut new,
            )?;
            if !r.headers.is_empty() {
                w.headers(envelopes, &r.headers)?;
            }
        }
        Ok((new, w.0))
    }

    /// A `put` batch: the schemas named for the first time (`id -> JsonConverter schema`) and
    /// the records' bytes. `envelopes` writes headers (JsonConverter with schemas), `payloads`
    /// schemaless keys and values (JsonConverter without).
    pub(super) fn sink_records(
        &mut self,
        envelopes: &JsonConverter,
        payloads: &JsonConverter,
        records: &[SinkRecord],
    ) -> Result<(serde_json::Map<String, serde_json::Value>, Vec<u8>), ConnectError> {
        let mut new = serde_json::Map::new();
        let mut w = Writer::default();
        for r in records {
            w.bytes(r.topic.as_bytes())?;
            w.i32(r.kafka_partition);
            w.i64(r.kafka_offset);
            let original = r.original_topic != r.topic
                || r.original_kafka_partition != r.kafka_partition
                || r.original_kafka_offset != r.kafka_offset;
            let flags = u8::from(r.timestamp.is_some())
                | (u8::from(!r.headers.is_empty()) << 1)
                | (u8::from(original) << 2);
            w.u8(flags);
            if let Some(ts) = r.timestamp {
                w.i64(ts);
            }
            w.u8(match r.timestamp_type {
                TimestampType::NoTimestampType => 0,
                TimestampType::CreateTime => 1,
                TimestampType::LogAppendTime => 2,
            });
            self.data(&mut w, payloads, r.key_schema.as_ref(), &r.key, &mut new)?;
            self.data(
                &mut w,
                payloads,
                r.value_schema.as_ref(),
                &r.value,
                &mut new,
            )?;
            if !r.headers.is_empty() {
                w.headers(envelopes, &r.headers)?;
            }
            if original {
                w.bytes(r.original_topic.as_bytes())?;
                w.i32(r.original_kafka_partition);
                w.i64(r.original_kafka_offset);
            }
        }
        Ok((new, w.0))
    }
}

/// Reads a transformation's results: the records it returned, in `stage_record` form without
/// offsets, written over the records they came from; `schemas` are the result schemas the host
/// has named so far.
pub(super) struct StageResults<'a> {
    r: Reader<'a>,
}

impl<'a> StageResults<'a> {
    pub(super) fn new(attachment: &'a [u8]) -> Self {
        Self {
            r: Reader { buf: attachment },
        }
    }

    /// The next returned record, over `record` (which keeps its Kafka offset).
    pub(super) fn next_into(
        &mut self,
        json: &JsonConverter,
        schemas: &Schemas,
        record: &mut Record,
    ) -> Result<(), ConnectError> {
        let r = &mut self.r;
        let topic = r.str()?.to_owned();
        let flags = r.u8()?;
        let partition = if flags & 1 != 0 { Some(r.i32()?) } else { None };
        let timestamp = if flags & 2 != 0 { Some(r.i64()?) } else { None };
        let (key_schema, key) = r.data(json, schemas)?;
        let (value_schema, value) = r.data(json, schemas)?;
        let headers = if flags & 4 != 0 {
            r.headers(json)?
        } else {
            Headers::new()
        };
        record.topic = topic;
        record.kafka_partition = partition;
        record.timestamp = timestamp;
        record.key_schema = key_schema;
        record.key = key;
        record.value_schema = value_schema;
        record.value = value;
        record.headers = headers;
        Ok(())
    }

    /// Whether every returned record was read.
    pub(super) fn at_end(&self) -> bool {
        self.r.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use connect_api::converter::as_connect_schema;
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

    #[test]
    fn sink_records_are_written_in_the_form_records_are_read_and_schemas_go_once() {
        let json = JsonConverter::new(true);
        let payloads = JsonConverter::new(false);
        let schemas = schemas();
        let value_schema = schemas[&2].clone().unwrap();
        let value = Data::Struct(Struct::from_checked_values(
            value_schema.clone(),
            vec![
                Data::Int64(9),
                Data::Null,
                Data::Map(vec![(Data::String("a".into()), Data::Int32(1))]),
                Data::Bytes(vec![0x04, 0xD2]),
            ],
        ));
        let mut record = SinkRecord::new(
            "t",
            3,
            77,
            None,
            Data::Null,
            Some(value_schema),
            value.clone(),
        );
        record.timestamp = Some(42);
        record.timestamp_type = TimestampType::CreateTime;
        let mut encoder = Encoder::default();
        let (new, bytes) = encoder
            .sink_records(&json, &payloads, std::slice::from_ref(&record))
            .unwrap();
        assert_eq!(
            new.len(),
            1,
            "the value's schema is sent with the first batch"
        );
        let mut r = Reader { buf: &bytes };
        assert_eq!(r.str().unwrap(), "t");
        assert_eq!((r.i32().unwrap(), r.i64().unwrap()), (3, 77));
        assert_eq!(
            r.u8().unwrap(),
            1,
            "flags: a timestamp, no headers, no original"
        );
        assert_eq!((r.i64().unwrap(), r.u8().unwrap()), (42, 1));
        assert_eq!((r.i64().unwrap(), r.u8().unwrap()), (0, 0), "no key");
        let id = u64::try_from(r.i64().unwrap()).unwrap();
        let sent = Schemas::from([(id, as_connect_schema(&new[&id.to_string()]).unwrap())]);
        assert_eq!(r.value(sent[&id].as_ref().unwrap()).unwrap(), value);
        assert!(r.buf.is_empty());
        let (again, _) = encoder
            .sink_records(&json, &payloads, std::slice::from_ref(&record))
            .unwrap();
        assert!(again.is_empty(), "a schema already sent is named by its id");
        // A value that does not fit its schema is an error, not bytes the host misreads.
        record.value = Data::Int32(1);
        assert!(encoder.sink_records(&json, &payloads, &[record]).is_err());
    }

    /// A stage batch's record, read back as a transformation's result: equal, nulls kept
    /// (an optional field's null stays null), headers included; its schema sent once.
    #[test]
    fn stage_records_cross_and_come_back_equal() {
        let envelopes = super::super::convert::data_converter();
        let payloads = JsonConverter::new(false);
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::optional_string())
            .field("b", Schema::int32())
            .build();
        let value = Data::Struct(Struct::from_checked_values(
            schema.clone(),
            vec![Data::Null, Data::Int32(4)],
        ));
        let mut record = Record::new("t", Some(schema), value);
        record.kafka_partition = Some(2);
        record.timestamp = Some(7);
        record.headers.add_string("h", "v");
        let mut encoder = Encoder::default();
        let (new, bytes) = encoder
            .stage_records(&envelopes, &payloads, &[&record])
            .unwrap();
        assert_eq!(new.len(), 1);
        let mut schemas = Schemas::new();
        for (id, s) in &new {
            schemas.insert(id.parse().unwrap(), as_connect_schema(s).unwrap());
        }
        let mut back = Record::new("x", None, Data::Null);
        let mut results = StageResults::new(&bytes);
        results.next_into(&envelopes, &schemas, &mut back).unwrap();
        assert!(results.at_end());
        assert_eq!(back, record);
        let (again, _) = encoder
            .stage_records(&envelopes, &payloads, &[&record])
            .unwrap();
        assert!(
            again.is_empty(),
            "the schema is named by id the second time"
        );
    }
}
