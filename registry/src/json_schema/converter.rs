//! `io.confluent.connect.json.JsonSchemaConverter`: Connect data as JSON described by a JSON
//! Schema kept in the registry, in the registry wire format.
//!
//! ```text
//!   from_connect_data: Connect schema ─(cache)─▶ JSON Schema + text ─▶ subject
//!       ─(cache)─▶ schema id (register, look up, or the subject's latest) ─▶ 0x00 id(4) JSON
//!   to_connect_data:   0x00 id(4) JSON ─▶ id ─(cache)─▶ schema text (the subject's latest
//!       with use.latest.version) ─▶ Connect schema (+ its version in the subject) ─▶ value
//! ```
//!
//! As Confluent's converter:
//!
//! - the registered text is the one Confluent's serializer registers for the schema
//!   ([`super::schema`]); the JSON after the header is Jackson's compact writing of the value;
//! - a null value with a required schema and no default is no record at all (Kafka's null, and
//!   nothing registered); with an optional schema it is the JSON `null` after the header;
//! - nothing validates the JSON against the schema (`json.fail.invalid.schema` is false by
//!   default, and refused here otherwise): a value of the wrong JSON kind is a data error where
//!   the Connect mapping cannot read it;
//! - errors from the registry and the JSON reader come as `Converting Kafka Connect data to
//!   byte[] failed due to serialization error of topic <t>: ...` (and `Converting byte[] to
//!   Kafka Connect data ...`), retriable when the registry cannot be reached or answers 5xx;
//!   errors of the Connect mapping come as they are.
//!
//! Schemaless Connect data (no schema) is refused. `use.latest.version` needs
//! `latest.compatibility.strict=false`: the JSON Schema compatibility check Java runs first is
//! not implemented here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use connect_api::{
    ConfigDef, ConfigMap, ConnectError, Converter, Result, Schema, SchemaAndValue, Value,
};

use super::data::JsonSchemaData;
use super::json;
use super::schema::{self, JsonSchema};
use crate::client::RegistryClient;
use crate::config::{
    Format, LATEST_COMPATIBILITY_STRICT, RegistryConverterConfig, USE_LATEST_VERSION,
    format_config_def,
};
use crate::subject::SubjectNameStrategy;
use crate::wire;

pub const CONFLUENT_JSON_SCHEMA_CONVERTER: &str = "io.confluent.connect.json.JsonSchemaConverter";

/// The schema type the registry keeps JSON Schemas under.
pub const SCHEMA_TYPE: &str = "JSON";

/// A Connect schema's JSON Schema and the text registered for it.
struct Writer {
    text: String,
    /// The schema's name for the record name strategies (its top-level `title`).
    title: Option<String>,
}

/// What one configured converter keeps.
struct State {
    client: Arc<RegistryClient>,
    data: JsonSchemaData,
    config: RegistryConverterConfig,
    is_key: bool,
    /// Connect schema → JSON Schema text (most recent first; a handful in practice).
    writers: Mutex<Vec<(Schema, Arc<Writer>)>>,
    /// (subject, schema text) → the id the bytes are written with.
    ids: Mutex<HashMap<(String, String), i32>>,
    /// (id read, id of the schema read with) → the Connect schema.
    readers: Mutex<HashMap<(i32, i32), Schema>>,
}

#[derive(Default)]
pub struct JsonSchemaConverter {
    state: Option<State>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The same kind of error, its message prefixed.
fn with_context(e: ConnectError, what: &str) -> ConnectError {
    let message = format!("{what}: {}", e.message());
    match e.kind() {
        connect_api::ErrorKind::Retriable => ConnectError::retriable(message),
        connect_api::ErrorKind::Config => ConnectError::config(message),
        connect_api::ErrorKind::Fatal => ConnectError::fatal(message),
        connect_api::ErrorKind::Data => ConnectError::data(message),
    }
}

impl JsonSchemaConverter {
    fn state(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("JsonSchemaConverter used before configure()"))
    }
}

impl State {
    fn subject_name(&self, topic: &str, title: Option<&str>) -> Result<String> {
        let strategy = self.config.subject_strategy;
        if strategy != SubjectNameStrategy::TopicName && title.is_none() {
            let (key, kind) = if self.is_key {
                (crate::config::KEY_SUBJECT_NAME_STRATEGY, "key")
            } else {
                (crate::config::VALUE_SUBJECT_NAME_STRATEGY, "value")
            };
            return Err(ConnectError::data(format!(
                "In configuration {key} = {}, the message {kind} must only be a record schema (a JSON schema with a title)",
                strategy.class()
            )));
        }
        Ok(strategy.subject(topic, self.is_key, title.unwrap_or_default()))
    }

    fn writer_for(&self, schema: &Schema) -> Result<Arc<Writer>> {
        {
            let mut cache = lock(&self.writers);
            if let Some(i) = cache.iter().position(|(s, _)| s == schema) {
                let hit = cache[i].1.clone();
                if i > 0 {
                    let e = cache.remove(i);
                    cache.insert(0, e);
                }
                return Ok(hit);
            }
        }
        let js: JsonSchema = self.data.from_connect_schema(schema)?;
        let w = Arc::new(Writer {
            text: js.to_text(),
            title: js.title.clone(),
        });
        let mut cache = lock(&self.writers);
        cache.insert(0, (schema.clone(), w.clone()));
        cache.truncate(self.config.schemas_cache_size);
        Ok(w)
    }

    /// The id to write `w` under in `subject` (the subject's latest with
    /// `use.latest.version`).
    fn id_for(&self, subject: &str, w: &Writer) -> Result<i32> {
        let key = (subject.to_owned(), w.text.clone());
        if let Some(id) = lock(&self.ids).get(&key) {
            return Ok(*id);
        }
        let id = if self.config.use_latest_version {
            let latest = self
                .client
                .latest(subject)
                .map_err(|e| with_context(e, "Error retrieving latest version"))?;
            if latest.schema_type != SCHEMA_TYPE {
                return Err(ConnectError::data(format!(
                    "Error retrieving latest version: the latest schema of subject {subject} (id {}) is a {} schema, not JSON Schema",
                    latest.id, latest.schema_type
                )));
            }
            latest.id
        } else if self.config.auto_register {
            self.client.register(subject, SCHEMA_TYPE, &w.text)?
        } else {
            self.client.lookup(subject, SCHEMA_TYPE, &w.text)?
        };
        lock(&self.ids).insert(key, id);
        Ok(id)
    }

    /// The Connect schema to read the JSON of schema `id` with.
    fn reader_for(&self, topic: &str, id: i32) -> Result<Schema> {
        let registered = self
            .client
            .by_id(id)
            .map_err(|e| with_context(e, &format!("Error retrieving JSON schema for id {id}")))?;
        if registered.schema_type != SCHEMA_TYPE {
            return Err(ConnectError::data(format!(
                "Error deserializing JSON message for id {id}: schema id {id} is a {} schema, not JSON Schema",
                registered.schema_type
            )));
        }
        let (read_id, text) = if self.config.use_latest_version {
            // Java reads the JSON with the subject's latest schema.
            let title = schema::load(&registered.text)?.title;
            let subject = self.subject_name(topic, title.as_deref())?;
            let latest = self
                .client
                .latest(&subject)
                .map_err(|e| with_context(e, "Error retrieving latest version"))?;
            if latest.schema_type != SCHEMA_TYPE {
                return Err(ConnectError::data(format!(
                    "Error retrieving latest version: the latest schema of subject {subject} (id {}) is a {} schema, not JSON Schema",
                    latest.id, latest.schema_type
                )));
            }
            (latest.id, latest.text.clone())
        } else {
            (id, registered.text.clone())
        };
        if let Some(hit) = lock(&self.readers).get(&(id, read_id)) {
            return Ok(hit.clone());
        }
        let js = schema::load(&text)?;
        let subject = self.subject_name(topic, js.title.as_deref())?;
        let version = self.client.version(&subject, read_id).map_err(|e| {
            with_context(
                e,
                &format!("Error retrieving JSON schema version for id {read_id}"),
            )
        })?;
        let connect = self.data.to_connect_schema(&js, version)?;
        let mut cache = lock(&self.readers);
        if cache.len() >= self.config.schemas_cache_size {
            cache.clear();
        }
        cache.insert((id, read_id), connect.clone());
        Ok(connect)
    }
}

impl Converter for JsonSchemaConverter {
    fn configure(&mut self, config: &ConfigMap, is_key: bool) -> Result<()> {
        let config = RegistryConverterConfig::parse_for(config, is_key, Format::JsonSchema)?;
        if config.use_latest_version && config.latest_compatibility_strict {
            return Err(ConnectError::config(format!(
                "{USE_LATEST_VERSION}=true needs {LATEST_COMPATIBILITY_STRICT}=false with this worker's JsonSchemaConverter: the JSON Schema compatibility check Confluent's serializer runs first is not implemented"
            )));
        }
        let client = RegistryClient::shared(config.client.clone())?;
        self.state = Some(State {
            client,
            data: JsonSchemaData::new(config.json.clone()),
            config,
            is_key,
            writers: Mutex::default(),
            ids: Mutex::default(),
            readers: Mutex::default(),
        });
        Ok(())
    }

    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&Schema>,
        value: &Value,
    ) -> Result<Option<Vec<u8>>> {
        let state = self.state()?;
        let Some(schema) = schema else {
            if value.is_null() {
                return Ok(None);
            }
            return Err(ConnectError::data(format!(
                "Converting Kafka Connect data to byte[] failed due to serialization error of topic {topic}: schemaless data (no Connect schema) is not supported by this worker's JsonSchemaConverter"
            )));
        };
        let w = state.writer_for(schema)?;
        let Some(node) = state.data.from_connect_data(schema, value)? else {
            return Ok(None);
        };
        let fail = |e: ConnectError| {
            with_context(
                e,
                &format!(
                    "Converting Kafka Connect data to byte[] failed due to serialization error of topic {topic}"
                ),
            )
        };
        let subject = state
            .subject_name(topic, w.title.as_deref())
            .map_err(fail)?;
        let id = state.id_for(&subject, &w).map_err(fail)?;
        let mut out = Vec::with_capacity(64);
        wire::write_header(&mut out, id);
        out.extend_from_slice(node.to_json().as_bytes());
        Ok(Some(out))
    }

    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let state = self.state()?;
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::NULL);
        };
        let fail = |e: ConnectError| {
            with_context(
                e,
                &format!(
                    "Converting byte[] to Kafka Connect data failed due to serialization error of topic {topic}"
                ),
            )
        };
        let (id, payload) = wire::read_header(bytes).map_err(fail)?;
        let schema = state.reader_for(topic, id).map_err(fail)?;
        let node = json::parse(payload).map_err(|e| {
            fail(with_context(
                e,
                &format!("Error deserializing JSON message for id {id}"),
            ))
        })?;
        let value = state.data.to_connect_data(&schema, Some(&node))?;
        Ok(SchemaAndValue::new(Some(schema), value))
    }

    fn config_def(&self) -> ConfigDef {
        format_config_def(Format::JsonSchema)
    }
}
