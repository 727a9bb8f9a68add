//! Records exchanged between tasks and the runtime: [`SourceRecord`] and [`SinkRecord`].
//!
//! Source partitions and offsets are JSON maps because the runtime stores them as JSON in the
//! offsets topic (key `[connector, partition]`, value = offset); keeping them as
//! `serde_json::Map` (insertion-ordered) lets the runtime serialise them byte-for-byte as Java
//! does for single-key maps.

use crate::data::{Schema, SchemaAndValue, Value};

/// A source partition, e.g. `{"filename": "a.txt"}`.
pub type SourcePartition = serde_json::Map<String, serde_json::Value>;
/// A source offset, e.g. `{"position": 1234}`.
pub type SourceOffset = serde_json::Map<String, serde_json::Value>;

/// A Kafka topic and partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: String,
    pub partition: i32,
}

impl TopicPartition {
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        Self {
            topic: topic.into(),
            partition,
        }
    }
}

/// How a record's timestamp was assigned (Java's `TimestampType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    #[default]
    NoTimestampType,
    CreateTime,
    LogAppendTime,
}

/// One record header.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub key: String,
    pub schema: Option<Schema>,
    pub value: Value,
}

/// Ordered headers; keys may repeat, as in Kafka.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Headers(Vec<Header>);

impl Headers {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(
        &mut self,
        key: impl Into<String>,
        schema: Option<Schema>,
        value: Value,
    ) -> &mut Self {
        self.0.push(Header {
            key: key.into(),
            schema,
            value,
        });
        self
    }

    pub fn add_string(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.add(key, Some(Schema::string()), Value::String(value.into()))
    }

    /// The last header with this key (Java's `lastWithName`).
    pub fn last_with_name(&self, key: &str) -> Option<&Header> {
        self.0.iter().rev().find(|h| h.key == key)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Header> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = &'a Header;
    type IntoIter = std::slice::Iter<'a, Header>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// A record produced by a source task.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRecord {
    pub source_partition: SourcePartition,
    /// `None` asks the runtime to write a tombstone for this partition's offset.
    pub source_offset: Option<SourceOffset>,
    pub topic: String,
    /// `None` lets the producer's partitioner choose.
    pub kafka_partition: Option<i32>,
    pub key_schema: Option<Schema>,
    pub key: Value,
    pub value_schema: Option<Schema>,
    pub value: Value,
    /// Milliseconds since the epoch; `None` lets the producer assign it.
    pub timestamp: Option<i64>,
    pub headers: Headers,
}

impl SourceRecord {
    /// A record with no key, timestamp, headers or explicit partition.
    pub fn new(
        source_partition: SourcePartition,
        source_offset: SourceOffset,
        topic: impl Into<String>,
        value_schema: Option<Schema>,
        value: Value,
    ) -> Self {
        Self {
            source_partition,
            source_offset: Some(source_offset),
            topic: topic.into(),
            kafka_partition: None,
            key_schema: None,
            key: Value::Null,
            value_schema,
            value,
            timestamp: None,
            headers: Headers::new(),
        }
    }

    pub fn with_key(mut self, key_schema: Option<Schema>, key: Value) -> Self {
        self.key_schema = key_schema;
        self.key = key;
        self
    }

    pub fn with_kafka_partition(mut self, partition: i32) -> Self {
        self.kafka_partition = Some(partition);
        self
    }

    pub fn with_timestamp(mut self, timestamp_ms: i64) -> Self {
        self.timestamp = Some(timestamp_ms);
        self
    }

    pub fn key_and_schema(&self) -> SchemaAndValue {
        SchemaAndValue::new(self.key_schema.clone(), self.key.clone())
    }

    pub fn value_and_schema(&self) -> SchemaAndValue {
        SchemaAndValue::new(self.value_schema.clone(), self.value.clone())
    }
}

/// A record delivered to a sink task.
#[derive(Debug, Clone, PartialEq)]
pub struct SinkRecord {
    pub topic: String,
    pub kafka_partition: i32,
    pub kafka_offset: i64,
    pub key_schema: Option<Schema>,
    pub key: Value,
    pub value_schema: Option<Schema>,
    pub value: Value,
    pub timestamp: Option<i64>,
    pub timestamp_type: TimestampType,
    pub headers: Headers,
    /// Topic/partition/offset as consumed, before any transformation renamed them (KIP-793).
    pub original_topic: String,
    pub original_kafka_partition: i32,
    pub original_kafka_offset: i64,
}

impl SinkRecord {
    pub fn new(
        topic: impl Into<String>,
        kafka_partition: i32,
        kafka_offset: i64,
        key_schema: Option<Schema>,
        key: Value,
        value_schema: Option<Schema>,
        value: Value,
    ) -> Self {
        let topic = topic.into();
        Self {
            original_topic: topic.clone(),
            original_kafka_partition: kafka_partition,
            original_kafka_offset: kafka_offset,
            topic,
            kafka_partition,
            kafka_offset,
            key_schema,
            key,
            value_schema,
            value,
            timestamp: None,
            timestamp_type: TimestampType::NoTimestampType,
            headers: Headers::new(),
        }
    }

    pub fn with_timestamp(mut self, timestamp_ms: i64, timestamp_type: TimestampType) -> Self {
        self.timestamp = Some(timestamp_ms);
        self.timestamp_type = timestamp_type;
        self
    }

    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition::new(self.topic.clone(), self.kafka_partition)
    }

    pub fn original_topic_partition(&self) -> TopicPartition {
        TopicPartition::new(self.original_topic.clone(), self.original_kafka_partition)
    }
}

/// Builds a one-key JSON map, the usual shape of source partitions and offsets.
pub fn json_map(
    key: &str,
    value: impl Into<serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::with_capacity(1);
    map.insert(key.to_owned(), value.into());
    map
}
