//! `org.apache.kafka.connect.transforms.InsertField$Key` / `$Value`.

use connect_api::config::{ConfigDef, ConfigKey, ConfigMap, ConfigType as T, Importance};
use connect_api::data::{Schema, SchemaBuilder, Value, logical};
use connect_api::{ConnectError, Result};

use crate::util::{
    SchemaCache, carry_values, copy_schema_basics, extend_struct, map_put, require_map,
    require_struct,
};
use crate::{Record, Side, Transformation};

pub const TOPIC_FIELD: &str = "topic.field";
pub const PARTITION_FIELD: &str = "partition.field";
pub const OFFSET_FIELD: &str = "offset.field";
pub const TIMESTAMP_FIELD: &str = "timestamp.field";
pub const STATIC_FIELD: &str = "static.field";
pub const STATIC_VALUE: &str = "static.value";
pub const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";
pub const REPLACE_NULL_WITH_DEFAULT_DOC: &str = "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.";
const OPTIONALITY_DOC: &str = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default).";
const PURPOSE: &str = "field insertion";

pub fn config_def() -> ConfigDef {
    let s = |name: &str, doc: String| {
        ConfigKey::new(name, T::String, Importance::Medium, doc).default_null()
    };
    ConfigDef::new()
        .define(s(TOPIC_FIELD, format!("Field name for Kafka topic. {OPTIONALITY_DOC}")))
        .define(s(PARTITION_FIELD, format!("Field name for Kafka partition. {OPTIONALITY_DOC}")))
        .define(s(
            OFFSET_FIELD,
            format!("Field name for Kafka offset - only applicable to sink connectors.<br/>{OPTIONALITY_DOC}"),
        ))
        .define(s(TIMESTAMP_FIELD, format!("Field name for record timestamp. {OPTIONALITY_DOC}")))
        .define(s(STATIC_FIELD, format!("Field name for static data field. {OPTIONALITY_DOC}")))
        .define(s(STATIC_VALUE, "Static field value, if field name configured.".to_owned()))
        .define(replace_null_key())
}

pub(crate) fn replace_null_key() -> ConfigKey {
    ConfigKey::new(
        REPLACE_NULL_WITH_DEFAULT,
        T::Boolean,
        Importance::Medium,
        REPLACE_NULL_WITH_DEFAULT_DOC,
    )
    .default_value(true)
}

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    optional: bool,
}

impl Spec {
    fn parse(spec: Option<&str>) -> Option<Self> {
        let spec = spec?;
        Some(if let Some(n) = spec.strip_suffix('?') {
            Spec {
                name: n.to_owned(),
                optional: true,
            }
        } else if let Some(n) = spec.strip_suffix('!') {
            Spec {
                name: n.to_owned(),
                optional: false,
            }
        } else {
            Spec {
                name: spec.to_owned(),
                optional: true,
            }
        })
    }

    fn schema(&self, required: Schema, optional: Schema) -> Schema {
        if self.optional { optional } else { required }
    }
}

pub struct InsertField {
    side: Side,
    topic: Option<Spec>,
    partition: Option<Spec>,
    offset: Option<Spec>,
    timestamp: Option<Spec>,
    static_field: Option<Spec>,
    static_value: Option<String>,
    replace_null_with_default: bool,
    cache: SchemaCache,
}

impl InsertField {
    pub fn new(side: Side) -> Self {
        Self {
            side,
            topic: None,
            partition: None,
            offset: None,
            timestamp: None,
            static_field: None,
            static_value: None,
            replace_null_with_default: true,
            cache: SchemaCache::default(),
        }
    }

    fn offset_of(&self, record: &Record) -> Result<i64> {
        record.kafka_offset.ok_or_else(|| {
            ConnectError::data(format!(
                "Only SinkRecord supported for [{PURPOSE}], found: org.apache.kafka.connect.source.SourceRecord"
            ))
        })
    }

    fn updated_schema(&self, schema: &Schema) -> Schema {
        let mut b = copy_schema_basics(schema, SchemaBuilder::struct_());
        for f in schema.fields() {
            b = b.field(f.name.clone(), f.schema.clone());
        }
        if let Some(s) = &self.topic {
            b = b.field(
                s.name.clone(),
                s.schema(Schema::string(), Schema::optional_string()),
            );
        }
        if let Some(s) = &self.partition {
            b = b.field(
                s.name.clone(),
                s.schema(Schema::int32(), Schema::optional_int32()),
            );
        }
        if let Some(s) = &self.offset {
            b = b.field(
                s.name.clone(),
                s.schema(Schema::int64(), Schema::optional_int64()),
            );
        }
        if let Some(s) = &self.timestamp {
            b = b.field(
                s.name.clone(),
                s.schema(
                    logical::timestamp_builder().build(),
                    logical::timestamp_builder().optional().build(),
                ),
            );
        }
        if let Some(s) = &self.static_field {
            b = b.field(
                s.name.clone(),
                s.schema(Schema::string(), Schema::optional_string()),
            );
        }
        b.build()
    }

    /// The (name, value) pairs to insert, in Apache's order. Each value is made as the pair
    /// is taken (an array of five values was a tenth of the transform's cost, in copies).
    fn insertions<'a>(
        &'a self,
        record: &'a Record,
    ) -> Result<impl Iterator<Item = (&'a str, Value)> + 'a> {
        let offset = match &self.offset {
            Some(s) => Some((s.name.as_str(), Value::Int64(self.offset_of(record)?))),
            None => None,
        };
        let topic = self
            .topic
            .iter()
            .map(|s| (s.name.as_str(), Value::String(record.topic.clone())));
        let partition = self
            .partition
            .iter()
            .zip(record.kafka_partition)
            .map(|(s, p)| (s.name.as_str(), Value::Int32(p)));
        let timestamp = self
            .timestamp
            .iter()
            .zip(record.timestamp)
            .map(|(s, ts)| (s.name.as_str(), Value::Int64(ts)));
        let static_field = self
            .static_field
            .iter()
            .zip(&self.static_value)
            .map(|(s, v)| (s.name.as_str(), Value::String(v.clone())));
        Ok(topic
            .chain(partition)
            .chain(offset)
            .chain(timestamp)
            .chain(static_field))
    }
}

impl Transformation for InsertField {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let c = config_def().parse(props)?;
        self.topic = Spec::parse(c.string(TOPIC_FIELD));
        self.partition = Spec::parse(c.string(PARTITION_FIELD));
        self.offset = Spec::parse(c.string(OFFSET_FIELD));
        self.timestamp = Spec::parse(c.string(TIMESTAMP_FIELD));
        self.static_field = Spec::parse(c.string(STATIC_FIELD));
        self.static_value = c.string(STATIC_VALUE).map(str::to_owned);
        self.replace_null_with_default = c.boolean(REPLACE_NULL_WITH_DEFAULT).unwrap_or(true);
        if self.topic.is_none()
            && self.partition.is_none()
            && self.offset.is_none()
            && self.timestamp.is_none()
            && self.static_field.is_none()
        {
            return Err(ConnectError::config("No field insertion configured"));
        }
        if let Some(s) = &self.static_field
            && self.static_value.is_none()
        {
            // Java prints the InsertionSpec object here; its default toString is not stable,
            // so the field name stands in for it.
            return Err(ConnectError::invalid_value(
                STATIC_VALUE,
                "null",
                &format!("No value specified for static field: {}", s.name),
            ));
        }
        self.cache = SchemaCache::default();
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        if self.side.value(record).is_null() {
            return Ok(true);
        }
        let (schema, value) = self.side.take(record);
        match schema {
            None => {
                let mut entries = require_map(&value, PURPOSE)?.to_vec();
                for (name, v) in self.insertions(record)? {
                    map_put(&mut entries, name, v);
                }
                self.side.set(record, None, Value::Map(entries));
                Ok(true)
            }
            Some(_) => {
                require_struct(&value, PURPOSE)?;
                let Value::Struct(value) = value else {
                    unreachable!("require_struct checked the type")
                };
                let updated = self.cache.get_or_try_insert(value.schema(), || {
                    Ok(self.updated_schema(value.schema()))
                })?;
                // The struct is ours: its values move into the new one (a null takes the
                // field's default, as Apache's copy does), followed by the insertions.
                let (original, mut values) = value.into_parts();
                carry_values(
                    original.fields(),
                    &mut values,
                    self.replace_null_with_default,
                )?;
                let s = extend_struct(&updated, values, self.insertions(record)?)?;
                self.side.set(record, Some(updated), Value::Struct(s));
                Ok(true)
            }
        }
    }

    fn config_def(&self) -> ConfigDef {
        config_def()
    }
}
