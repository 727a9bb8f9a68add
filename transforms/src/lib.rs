//! Single Message Transforms and predicates, under Apache Kafka Connect's class names, with
//! Apache's config keys, defaults, error messages and semantics.
//!
//! ```text
//!   connector config ──> TransformChain::from_config ──> [(transform, predicate?, negate)]
//!   record ──> Record (topic, partition, key, value, schemas, timestamp, headers)
//!          ──> each stage: predicate test (xor negate) ─> apply ─> Some(record) | None (dropped)
//! ```
//!
//! Every transform works on a [`Record`], the fields Java's `ConnectRecord` has; the runtime
//! converts `SourceRecord`/`SinkRecord` into it and back (see [`chain`]). Schema changes are
//! cached per input schema ([`util::SchemaCache`]), as Apache's `LRUCache(16)` does.

use connect_api::config::{ConfigDef, ConfigMap};
use connect_api::data::{Schema, Value};
use connect_api::record::Headers;
use connect_api::{PluginType, Result};

pub mod cast;
pub mod chain;
mod extract_field;
pub mod field;
mod filter;
mod flatten;
mod headers;
mod hoist_field;
mod insert_field;
mod mask_field;
mod predicates;
pub mod registry;
mod replace_field;
mod routers;
mod set_schema_metadata;
mod timestamp_converter;
pub mod util;
mod value_to_key;

pub use chain::{TransformChain, TransformError};
pub use registry::{Found, PluginDef, PluginProvider, install_provider, plugin_infos, plugins};

/// The version every built-in plugin reports (Apache reports the Kafka version).
pub const VERSION: &str = "4.4.0";

/// What a transform sees of a record: the fields of Java's `ConnectRecord`.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub topic: String,
    pub kafka_partition: Option<i32>,
    pub key_schema: Option<Schema>,
    pub key: Value,
    pub value_schema: Option<Schema>,
    pub value: Value,
    pub timestamp: Option<i64>,
    pub headers: Headers,
    /// The Kafka offset of a sink record (`None` for source records), for `InsertField`'s
    /// `offset.field`, which Apache only allows on sink records.
    pub kafka_offset: Option<i64>,
}

impl Record {
    /// The data of a source record, which the caller keeps (the runtime needs the original for
    /// its offsets and `commitRecord`); the source partition and offset are not copied.
    pub fn copy_of_source(record: &connect_api::record::SourceRecord) -> Self {
        Self {
            topic: record.topic.clone(),
            kafka_partition: record.kafka_partition,
            key_schema: record.key_schema.clone(),
            key: record.key.clone(),
            value_schema: record.value_schema.clone(),
            value: record.value.clone(),
            timestamp: record.timestamp,
            headers: record.headers.clone(),
            kafka_offset: None,
        }
    }

    /// The data of a source record, moved out of it: its topic, key, value, schemas and headers
    /// are left empty (the task's `commitRecord` does not read them).
    pub fn take_from_source(record: &mut connect_api::record::SourceRecord) -> Self {
        Self {
            topic: std::mem::take(&mut record.topic),
            kafka_partition: record.kafka_partition,
            key_schema: record.key_schema.take(),
            key: std::mem::replace(&mut record.key, Value::Null),
            value_schema: record.value_schema.take(),
            value: std::mem::replace(&mut record.value, Value::Null),
            timestamp: record.timestamp,
            headers: std::mem::take(&mut record.headers),
            kafka_offset: None,
        }
    }

    /// A record with only a topic and a schemaless value (tests, examples).
    pub fn new(topic: impl Into<String>, value_schema: Option<Schema>, value: Value) -> Self {
        Self {
            topic: topic.into(),
            kafka_partition: None,
            key_schema: None,
            key: Value::Null,
            value_schema,
            value,
            timestamp: None,
            headers: Headers::new(),
            kafka_offset: None,
        }
    }
}

/// Java's `Transformation`: configured once, then applied to every record.
pub trait Transformation: Send + Sync {
    /// Configures from the transform's own keys (the `transforms.<alias>.` prefix removed).
    fn configure(&mut self, props: &ConfigMap) -> Result<()>;
    /// Transforms the record in place (records are moved through the chain by reference:
    /// a `Record` is ~180 bytes, and moving it in and out of every stage showed in profiles);
    /// `false` drops it. After an error the record is not used again.
    fn apply(&self, record: &mut Record) -> Result<bool>;
    fn config_def(&self) -> ConfigDef;
    /// [`Transformation::apply`] on several records, one result per record in order (a
    /// record's error does not stop the others). The default applies them one by one; a
    /// transformation in another process answers them in one call.
    fn apply_batch(&self, records: &mut [&mut Record]) -> Vec<Result<bool>> {
        records.iter_mut().map(|r| self.apply(r)).collect()
    }
    /// Whether [`Transformation::apply_batch`] costs less than one `apply` per record (the
    /// runtime then hands a chain with such a stage whole batches).
    fn prefers_batches(&self) -> bool {
        false
    }
}

/// Java's `Predicate`.
pub trait Predicate: Send + Sync {
    fn configure(&mut self, props: &ConfigMap) -> Result<()>;
    fn test(&self, record: &Record) -> bool;
    fn config_def(&self) -> ConfigDef;
    /// [`Predicate::test`] for a predicate that can fail (a Java one throwing): the chain
    /// calls this, and a failure is the stage's failure, as Apache's `TransformationStage`
    /// propagates a predicate's exception.
    fn try_test(&self, record: &Record) -> Result<bool> {
        Ok(self.test(record))
    }
    /// [`Predicate::try_test`] on several records, one result per record in order.
    fn try_test_batch(&self, records: &[&Record]) -> Vec<Result<bool>> {
        records.iter().map(|r| self.try_test(r)).collect()
    }
}

/// A new instance of a transform or predicate.
pub enum Plugin {
    Transformation(Box<dyn Transformation>),
    Predicate(Box<dyn Predicate>),
}

impl Plugin {
    pub fn plugin_type(&self) -> PluginType {
        match self {
            Self::Transformation(_) => PluginType::Transformation,
            Self::Predicate(_) => PluginType::Predicate,
        }
    }
}

/// Whether a `$Key` or `$Value` variant operates on the key or the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Key,
    Value,
}

impl Side {
    pub fn schema(self, r: &Record) -> Option<&Schema> {
        match self {
            Self::Key => r.key_schema.as_ref(),
            Self::Value => r.value_schema.as_ref(),
        }
    }

    pub fn value(self, r: &Record) -> &Value {
        match self {
            Self::Key => &r.key,
            Self::Value => &r.value,
        }
    }

    /// Takes the operated value out of the record (leaving `Null`).
    pub fn take(self, r: &mut Record) -> (Option<Schema>, Value) {
        match self {
            Self::Key => (
                r.key_schema.take(),
                std::mem::replace(&mut r.key, Value::Null),
            ),
            Self::Value => (
                r.value_schema.take(),
                std::mem::replace(&mut r.value, Value::Null),
            ),
        }
    }

    /// Java's `newRecord` of the variant: replaces the operated schema and value.
    pub fn set(self, r: &mut Record, schema: Option<Schema>, value: Value) {
        match self {
            Self::Key => {
                r.key_schema = schema;
                r.key = value;
            }
            Self::Value => {
                r.value_schema = schema;
                r.value = value;
            }
        }
    }
}
