//! `io.confluent.connect.avro.AvroConverter` (and Apicurio's `AvroConverter` in its
//! Confluent-compatible mode): Connect data as Avro in the registry wire format.
//!
//! ```text
//!   from_connect_data: Connect schema ─(cache)─▶ Avro schema + text ─▶ subject
//!       ─(cache)─▶ schema id (register, look up, or the subject's latest) ─▶ 0x00 id(4) datum
//!   to_connect_data:   0x00 id(4) datum ─▶ id ─(cache)─▶ writer schema ─▶ Connect schema
//!       (+ the schema's version in its subject) ─▶ Connect value
//! ```
//!
//! A top-level `bytes` schema writes the bytes without a length, as Confluent's serializer does.
//! Schemaless Connect data (no schema) is refused: Confluent wraps it in an `Anything` record
//! this converter does not write.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use connect_api::{
    ConfigDef, ConfigMap, ConnectError, Converter, Result, Schema, SchemaAndValue, Value,
};

use super::codec::{self, Reader};
use super::data::AvroData;
use super::schema::{AvroSchema, Kind};
use crate::client::RegistryClient;
use crate::config::{RegistryConverterConfig, config_def};
use crate::wire;

pub const CONFLUENT_AVRO_CONVERTER: &str = "io.confluent.connect.avro.AvroConverter";

/// A writer schema as the converter uses it: parsed, its Connect form, its text.
struct Writer {
    avro: AvroSchema,
    text: String,
}

/// What one configured converter keeps.
struct State {
    client: Arc<RegistryClient>,
    data: AvroData,
    config: RegistryConverterConfig,
    is_key: bool,
    /// Connect schema → Avro schema and text (most recent first; a handful in practice).
    to_avro: Mutex<Vec<(Schema, Arc<Writer>)>>,
    /// (subject, schema text) → the id and the Avro schema the bytes are written with.
    ids: Mutex<HashMap<(String, String), (i32, Arc<Writer>)>>,
    /// id → the writer's Avro schema and its Connect schema.
    readers: Mutex<HashMap<i32, Arc<(AvroSchema, Schema)>>>,
    /// The last record's topic, schema and id: a task writing one topic with one schema pays
    /// no subject formatting and no hashing of the schema text per record.
    last: Mutex<Option<LastWrite>>,
}

struct LastWrite {
    topic: String,
    ours: Arc<Writer>,
    id: i32,
    written: Arc<Writer>,
}

#[derive(Default)]
pub struct AvroConverter {
    state: Option<State>,
    /// Configured with Apicurio's keys ([`crate::apicurio`]).
    apicurio: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl AvroConverter {
    /// `io.apicurio.registry.utils.converter.AvroConverter`: Apicurio's keys.
    pub fn apicurio() -> Self {
        AvroConverter {
            state: None,
            apicurio: true,
        }
    }

    fn state(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("AvroConverter used before configure()"))
    }
}

impl State {
    fn kind(&self) -> &'static str {
        if self.is_key { "key" } else { "value" }
    }

    fn writer_for(&self, schema: &Schema) -> Result<Arc<Writer>> {
        {
            let mut cache = lock(&self.to_avro);
            if let Some(i) = cache.iter().position(|(s, _)| s == schema) {
                let hit = cache[i].1.clone();
                if i > 0 {
                    let e = cache.remove(i);
                    cache.insert(0, e);
                }
                return Ok(hit);
            }
        }
        let avro = self.data.from_connect_schema(schema)?;
        let text = avro.to_json();
        let w = Arc::new(Writer { avro, text });
        let mut cache = lock(&self.to_avro);
        cache.insert(0, (schema.clone(), w.clone()));
        cache.truncate(self.config.schemas_cache_size);
        Ok(w)
    }

    /// The id to write `w` under in `subject`, and the schema the bytes are written with (the
    /// subject's latest with `use.latest.version`).
    fn id_for(&self, subject: &str, w: &Arc<Writer>) -> Result<(i32, Arc<Writer>)> {
        if self.config.use_latest_version {
            return self.latest_for(subject, w);
        }
        let key = (subject.to_owned(), w.text.clone());
        if let Some(hit) = lock(&self.ids).get(&key) {
            return Ok(hit.clone());
        }
        let id = if self.config.auto_register {
            self.client.register(subject, "AVRO", &w.text)?
        } else {
            self.client.lookup(subject, "AVRO", &w.text)?
        };
        let found = (id, w.clone());
        lock(&self.ids).insert(key, found.clone());
        Ok(found)
    }

    /// `use.latest.version`: the subject's latest schema (looked up again after
    /// `latest.cache.ttl.sec`), checked once per latest id against the record's schema.
    fn latest_for(&self, subject: &str, w: &Arc<Writer>) -> Result<(i32, Arc<Writer>)> {
        let latest = self.client.latest(subject)?;
        let key = (format!("{subject}\u{0}{}", latest.id), w.text.clone());
        if let Some(hit) = lock(&self.ids).get(&key) {
            return Ok(hit.clone());
        }
        let avro = AvroSchema::parse(&latest.text)?;
        if self.config.latest_compatibility_strict {
            if let Err(why) = super::compat::can_read(&avro, &w.avro) {
                return Err(ConnectError::data(format!(
                    "Error retrieving latest version of Avro schema: the latest schema of subject {subject} (id {}) cannot read the record's schema: {why}",
                    latest.id
                )));
            }
        }
        let found = (
            latest.id,
            Arc::new(Writer {
                avro,
                text: latest.text.clone(),
            }),
        );
        lock(&self.ids).insert(key, found.clone());
        Ok(found)
    }

    fn reader_for(&self, topic: &str, id: i32) -> Result<Arc<(AvroSchema, Schema)>> {
        if let Some(hit) = lock(&self.readers).get(&id) {
            return Ok(hit.clone());
        }
        let registered = self.client.by_id(id).map_err(|e| {
            e.with_context(format!(
                "Error retrieving Avro {} schema for id {id}",
                self.kind()
            ))
        })?;
        if registered.schema_type != "AVRO" {
            return Err(ConnectError::data(format!(
                "Schema id {id} is a {} schema, not Avro",
                registered.schema_type
            )));
        }
        let avro = AvroSchema::parse(&registered.text)?;
        let subject = self
            .config
            .subject_strategy
            .subject(topic, self.is_key, &record_name(&avro));
        let version = self.client.version(&subject, id).map_err(|e| {
            e.with_context(format!(
                "Error retrieving Avro {} schema version for id {id}",
                self.kind()
            ))
        })?;
        let connect = self.data.to_connect_schema(&avro, version)?;
        let entry = Arc::new((avro, connect));
        let mut cache = lock(&self.readers);
        if cache.len() >= self.config.schemas_cache_size {
            cache.clear();
        }
        cache.insert(id, entry.clone());
        Ok(entry)
    }
}

/// Confluent's `AvroSchema.name()`: a named type's full name, else the type's name.
pub fn record_name(avro: &AvroSchema) -> String {
    match avro.name() {
        Some(n) => n.full(),
        None => avro.type_name().to_owned(),
    }
}

trait Context {
    fn with_context(self, what: String) -> Self;
}

impl Context for ConnectError {
    /// The same kind of error, its message prefixed.
    fn with_context(self, what: String) -> Self {
        let message = format!("{what}: {}", self.message());
        match self.kind() {
            connect_api::ErrorKind::Retriable => ConnectError::retriable(message),
            connect_api::ErrorKind::Config => ConnectError::config(message),
            connect_api::ErrorKind::Fatal => ConnectError::fatal(message),
            connect_api::ErrorKind::Data => ConnectError::data(message),
        }
    }
}

impl Converter for AvroConverter {
    fn configure(&mut self, config: &ConfigMap, is_key: bool) -> Result<()> {
        let config = if self.apicurio {
            RegistryConverterConfig::parse(&crate::apicurio::translate(config)?, is_key, true)?
        } else {
            RegistryConverterConfig::parse(config, is_key, true)?
        };
        let client = RegistryClient::shared(config.client.clone())?;
        self.state = Some(State {
            client,
            data: AvroData::new(config.avro.clone()),
            config,
            is_key,
            to_avro: Mutex::default(),
            ids: Mutex::default(),
            readers: Mutex::default(),
            last: Mutex::default(),
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
        if value.is_null() {
            return Ok(None);
        }
        let Some(schema) = schema else {
            return Err(ConnectError::data(format!(
                "Failed to serialize Avro data from topic {topic}: schemaless data (no Connect schema) is not supported by this worker's AvroConverter"
            )));
        };
        let fail = |e: ConnectError| {
            e.with_context(format!("Failed to serialize Avro data from topic {topic}"))
        };
        let w = state.writer_for(schema).map_err(fail)?;
        // (Not with use.latest.version: the latest schema may change.)
        let hit = lock(&state.last)
            .as_ref()
            .filter(|l| {
                !state.config.use_latest_version && l.topic == topic && Arc::ptr_eq(&l.ours, &w)
            })
            .map(|l| (l.id, l.written.clone()));
        let (id, writer) = match hit {
            Some(hit) => hit,
            None => {
                let subject = state.config.subject_strategy.subject(
                    topic,
                    state.is_key,
                    &record_name(&w.avro),
                );
                let (id, written) = state.id_for(&subject, &w).map_err(fail)?;
                *lock(&state.last) = Some(LastWrite {
                    topic: topic.to_owned(),
                    ours: w.clone(),
                    id,
                    written: written.clone(),
                });
                (id, written)
            }
        };
        let mut out = Vec::with_capacity(64);
        wire::write_header(&mut out, id);
        if matches!(writer.avro.kind, Kind::Bytes) {
            match value {
                Value::Bytes(b) => out.extend_from_slice(b),
                other => {
                    return Err(fail(ConnectError::data(format!(
                        "Unrecognized bytes object of type: {}",
                        other.type_name()
                    ))));
                }
            }
        } else {
            codec::encode(&writer.avro, schema, value, &mut out).map_err(fail)?;
        }
        Ok(Some(out))
    }

    fn to_connect_data(&self, topic: &str, bytes: Option<&[u8]>) -> Result<SchemaAndValue> {
        let state = self.state()?;
        let Some(bytes) = bytes else {
            return Ok(SchemaAndValue::NULL);
        };
        let fail = |e: ConnectError| {
            e.with_context(format!(
                "Failed to deserialize data for topic {topic} to Avro"
            ))
        };
        let (id, payload) = wire::read_header(bytes).map_err(fail)?;
        let reader = state.reader_for(topic, id).map_err(fail)?;
        let (avro, connect) = (&reader.0, &reader.1);
        let value = if matches!(avro.kind, Kind::Bytes) {
            Value::Bytes(payload.to_vec())
        } else {
            let mut r = Reader::new(payload);
            codec::decode(avro, connect, &mut r).map_err(fail)?
        };
        Ok(SchemaAndValue::new(Some(connect.clone()), value))
    }

    fn config_def(&self) -> ConfigDef {
        if self.apicurio {
            crate::apicurio::config_def()
        } else {
            config_def(true)
        }
    }
}
