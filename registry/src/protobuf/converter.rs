//! `io.confluent.connect.protobuf.ProtobufConverter`: Connect data as Protobuf in the registry
//! wire format.
//!
//! ```text
//!   from_connect_data: Connect schema ─(cache)─▶ .proto text + compiled descriptor ─▶ subject
//!       ─(cache)─▶ schema id (register or look up, type PROTOBUF)
//!       ─▶ 0x00 id(4) message-indexes message-bytes
//!   to_connect_data:   0x00 id(4) indexes bytes ─▶ id ─(cache)─▶ registry text ─▶ compiled
//!       ─▶ the indexed message ─▶ Connect schema (+ the schema's version in its subject)
//!       ─▶ decoded message ─▶ Connect value
//! ```
//!
//! With `use.latest.version` (and `latest.compatibility.strict=false`: Confluent's Protobuf
//! compatibility check is not implemented), records are written with the subject's latest
//! schema's id and the indexes of the record's message in it, and read with the latest schema's
//! message of the writer's name (else its first), as Confluent's serializer and deserializer do.
//!
//! Refused: schemaless data; registry schemas importing anything but the known types (schema
//! references); recursive messages when reading (a Connect schema cannot be recursive).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use connect_api::config::{ConfigType, Importance};
use connect_api::{
    ConfigDef, ConfigKey, ConfigMap, ConnectError, Converter, Result, Schema, SchemaAndValue, Value,
};
use protox::prost::Message as _;
use protox::prost_reflect::{DynamicMessage, MessageDescriptor};

use super::compile::{self, Compiled};
use super::data::{ProtobufData, ProtobufDataConfig};
use super::schema::{self, Generated, WRAPPERS_TEXT};
use crate::client::RegistryClient;
use crate::config::{self, RegistryConverterConfig};
use crate::wire;

pub const CONFLUENT_PROTOBUF_CONVERTER: &str = "io.confluent.connect.protobuf.ProtobufConverter";

pub const ENHANCED_PROTOBUF_SCHEMA_SUPPORT: &str = "enhanced.protobuf.schema.support";
pub const INT_FOR_ENUMS: &str = "int.for.enums";
pub const OPTIONAL_FOR_NULLABLES: &str = "optional.for.nullables";
pub const OPTIONAL_FOR_PROTO2: &str = "optional.for.proto2";
pub const WRAPPER_FOR_NULLABLES: &str = "wrapper.for.nullables";
pub const WRAPPER_FOR_RAW_PRIMITIVES: &str = "wrapper.for.raw.primitives";
pub const GENERATE_STRUCT_FOR_NULLS: &str = "generate.struct.for.nulls";
pub const GENERATE_INDEX_FOR_UNIONS: &str = "generate.index.for.unions";
pub const FLATTEN_UNIONS: &str = "flatten.unions";

/// The shared keys plus `ProtobufDataConfig`'s.
pub fn protobuf_config_def() -> ConfigDef {
    let flag = |name: &str, default: bool, doc: &str| {
        ConfigKey::new(name, ConfigType::Boolean, Importance::Medium, doc).default_value(default)
    };
    config::format_config_def(config::Format::Protobuf)
        .define(
            ConfigKey::new(
                config::SCHEMAS_CACHE_SIZE,
                ConfigType::Int,
                Importance::Medium,
                "Size of the converted schemas cache",
            )
            .default_value(1000),
        )
        .define(flag(ENHANCED_PROTOBUF_SCHEMA_SUPPORT, false, "Toggle for enabling/disabling enhanced protobuf schema support: package name preservation"))
        .define(flag(config::SCRUB_INVALID_NAMES, false, "Whether to scrub invalid names by replacing invalid characters with valid ones"))
        .define(flag(INT_FOR_ENUMS, false, "Whether to represent enums as integers"))
        .define(flag(OPTIONAL_FOR_NULLABLES, false, "Whether nullable fields should be specified with an optional label"))
        .define(flag(OPTIONAL_FOR_PROTO2, true, "Whether proto2 optionals are supported"))
        .define(flag(WRAPPER_FOR_NULLABLES, false, "Whether nullable fields should use primitive wrapper messages"))
        .define(flag(WRAPPER_FOR_RAW_PRIMITIVES, true, "Whether a wrapper message should be interpreted as a raw primitive at the root level"))
        .define(flag(GENERATE_STRUCT_FOR_NULLS, false, "Whether to generate a default struct for null messages"))
        .define(flag(GENERATE_INDEX_FOR_UNIONS, true, "Whether to suffix union names with an underscore followed by an index"))
        .define(flag(FLATTEN_UNIONS, false, "Whether to flatten unions (oneofs)"))
}

/// A schema the converter writes with.
struct Writer {
    text: String,
    full_name: String,
    /// The root message (its pool holds the compiled file).
    descriptor: MessageDescriptor,
    indexes: Vec<i32>,
}

/// A schema id the converter reads.
struct Reader {
    compiled: Compiled,
    /// Per message name: its descriptor and Connect schema.
    messages: Mutex<HashMap<Vec<i32>, Arc<(MessageDescriptor, Schema)>>>,
}

struct State {
    client: Arc<RegistryClient>,
    data: ProtobufData,
    config: RegistryConverterConfig,
    is_key: bool,
    writers: Mutex<Vec<(Schema, Arc<Writer>)>>,
    ids: Mutex<HashMap<(String, String), i32>>,
    readers: Mutex<HashMap<i32, Arc<Reader>>>,
}

#[derive(Default)]
pub struct ProtobufConverter {
    state: Option<State>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn with_context(e: ConnectError, what: &str) -> ConnectError {
    let message = format!("{what}: {}", e.message());
    match e.kind() {
        connect_api::ErrorKind::Retriable => ConnectError::retriable(message),
        connect_api::ErrorKind::Config => ConnectError::config(message),
        connect_api::ErrorKind::Fatal => ConnectError::fatal(message),
        connect_api::ErrorKind::Data => ConnectError::data(message),
    }
}

/// The data settings from a converter's properties.
pub fn data_config(props: &ConfigMap) -> Result<ProtobufDataConfig> {
    let parsed = protobuf_config_def().parse(props)?;
    let d = ProtobufDataConfig::default();
    let flag = |k: &str, default: bool| parsed.boolean(k).unwrap_or(default);
    Ok(ProtobufDataConfig {
        enhanced_schema_support: flag(ENHANCED_PROTOBUF_SCHEMA_SUPPORT, d.enhanced_schema_support),
        scrub_invalid_names: flag(config::SCRUB_INVALID_NAMES, d.scrub_invalid_names),
        int_for_enums: flag(INT_FOR_ENUMS, d.int_for_enums),
        optional_for_nullables: flag(OPTIONAL_FOR_NULLABLES, d.optional_for_nullables),
        optional_for_proto2: flag(OPTIONAL_FOR_PROTO2, d.optional_for_proto2),
        wrapper_for_nullables: flag(WRAPPER_FOR_NULLABLES, d.wrapper_for_nullables),
        wrapper_for_raw_primitives: flag(WRAPPER_FOR_RAW_PRIMITIVES, d.wrapper_for_raw_primitives),
        generate_struct_for_nulls: flag(GENERATE_STRUCT_FOR_NULLS, d.generate_struct_for_nulls),
        generate_index_for_unions: flag(GENERATE_INDEX_FOR_UNIONS, d.generate_index_for_unions),
        flatten_unions: flag(FLATTEN_UNIONS, d.flatten_unions),
    })
}

/// The text, compiled schema and root message a Connect schema is written with.
pub fn writer_parts(
    schema: &Schema,
    config: &ProtobufDataConfig,
) -> Result<(String, String, Compiled, MessageDescriptor, Vec<i32>)> {
    let generated = schema::from_connect_schema(schema, config)?;
    let text = match &generated {
        Generated::Message { file, .. } => file.to_text(),
        Generated::Wrapper { .. } => WRAPPERS_TEXT.to_owned(),
    };
    let compiled = compile::compile(&text).map_err(|e| {
        ConnectError::data(format!(
            "Invalid protobuf schema definition for the Connect schema: {}",
            e.message()
        ))
    })?;
    let full_name = generated.full_name().to_owned();
    let descriptor = compiled.message(&full_name)?;
    let indexes = compile::indexes_of(&descriptor);
    Ok((text, full_name, compiled, descriptor, indexes))
}

impl State {
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
        let (text, full_name, _, descriptor, indexes) = writer_parts(schema, &self.data.config)?;
        let w = Arc::new(Writer {
            text,
            full_name,
            descriptor,
            indexes,
        });
        let mut cache = lock(&self.writers);
        cache.insert(0, (schema.clone(), w.clone()));
        cache.truncate(self.config.schemas_cache_size);
        Ok(w)
    }

    /// The subject's latest schema: its id and compiled text (`use.latest.version`).
    fn latest(&self, subject: &str) -> Result<(i32, Arc<Reader>)> {
        let latest = self
            .client
            .latest(subject)
            .map_err(|e| with_context(e, "Error retrieving latest version"))?;
        if latest.schema_type != "PROTOBUF" {
            return Err(ConnectError::data(format!(
                "Error retrieving latest version: the latest schema of subject {subject} (id {}) is a {} schema, not Protobuf",
                latest.id, latest.schema_type
            )));
        }
        Ok((latest.id, self.reader_for(latest.id)?))
    }

    /// The id and message indexes a record of `w` is written with.
    fn written_as(&self, subject: &str, w: &Writer) -> Result<(i32, Vec<i32>)> {
        if !self.config.use_latest_version {
            return Ok((self.id_for(subject, w)?, w.indexes.clone()));
        }
        let (id, latest) = self.latest(subject)?;
        let message = latest.compiled.message(&w.full_name).map_err(|_| {
            ConnectError::data(format!(
                "Error retrieving latest version: the latest schema of subject {subject} (id {id}) has no message {}",
                w.full_name
            ))
        })?;
        Ok((id, compile::indexes_of(&message)))
    }

    fn id_for(&self, subject: &str, w: &Writer) -> Result<i32> {
        let key = (subject.to_owned(), w.text.clone());
        if let Some(id) = lock(&self.ids).get(&key) {
            return Ok(*id);
        }
        let id = if self.config.auto_register {
            self.client.register(subject, "PROTOBUF", &w.text)?
        } else {
            self.client.lookup(subject, "PROTOBUF", &w.text)?
        };
        lock(&self.ids).insert(key, id);
        Ok(id)
    }

    fn reader_for(&self, id: i32) -> Result<Arc<Reader>> {
        if let Some(hit) = lock(&self.readers).get(&id) {
            return Ok(hit.clone());
        }
        let kind = if self.is_key { "key" } else { "value" };
        let registered = self.client.by_id(id).map_err(|e| {
            with_context(
                e,
                &format!("Error retrieving Protobuf {kind} schema for id {id}"),
            )
        })?;
        if registered.schema_type != "PROTOBUF" {
            return Err(ConnectError::data(format!(
                "Schema id {id} is a {} schema, not Protobuf",
                registered.schema_type
            )));
        }
        let compiled = compile::compile(&registered.text)?;
        let r = Arc::new(Reader {
            compiled,
            messages: Mutex::default(),
        });
        let mut cache = lock(&self.readers);
        if cache.len() >= self.config.schemas_cache_size {
            cache.clear();
        }
        cache.insert(id, r.clone());
        Ok(r)
    }

    fn message_for(
        &self,
        topic: &str,
        id: i32,
        reader: &Reader,
        indexes: &[i32],
    ) -> Result<Arc<(MessageDescriptor, Schema)>> {
        if let Some(hit) = lock(&reader.messages).get(indexes) {
            return Ok(hit.clone());
        }
        let descriptor = reader.compiled.message_at(indexes)?;
        let subject =
            self.config
                .subject_strategy
                .subject(topic, self.is_key, descriptor.full_name());
        let version = self.client.version(&subject, id).map_err(|e| {
            with_context(
                e,
                &format!("Error retrieving Protobuf schema version for id {id}"),
            )
        })?;
        let connect = self.data.to_connect_schema(&descriptor, version)?;
        let entry = Arc::new((descriptor, connect));
        lock(&reader.messages).insert(indexes.to_vec(), entry.clone());
        Ok(entry)
    }
}

impl ProtobufConverter {
    fn state(&self) -> Result<&State> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::fatal("ProtobufConverter used before configure()"))
    }
}

impl Converter for ProtobufConverter {
    fn configure(&mut self, props: &ConfigMap, is_key: bool) -> Result<()> {
        let config = RegistryConverterConfig::parse_with(protobuf_config_def(), props, is_key)?;
        if config.use_latest_version && config.latest_compatibility_strict {
            return Err(ConnectError::invalid_value(
                config::LATEST_COMPATIBILITY_STRICT,
                "true",
                &format!(
                    "{}=true needs {}=false with this worker's ProtobufConverter: the Protobuf compatibility check Confluent's serializer runs first is not implemented",
                    config::USE_LATEST_VERSION,
                    config::LATEST_COMPATIBILITY_STRICT
                ),
            ));
        }
        let data = ProtobufData::new(data_config(props)?);
        let client = RegistryClient::shared(config.client.clone())?;
        self.state = Some(State {
            client,
            data,
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
        if value.is_null() {
            return Ok(None);
        }
        let fail = |e: ConnectError| {
            with_context(
                e,
                &format!("Failed to serialize Protobuf data from topic {topic}"),
            )
        };
        let Some(schema) = schema else {
            return Err(fail(ConnectError::data(
                "schemaless data (no Connect schema) is not supported by the ProtobufConverter",
            )));
        };
        let w = state.writer_for(schema).map_err(fail)?;
        let message = state
            .data
            .from_connect_value(schema, value, &w.descriptor)
            .map_err(fail)?;
        let subject = state
            .config
            .subject_strategy
            .subject(topic, state.is_key, &w.full_name);
        let (id, indexes) = state.written_as(&subject, &w).map_err(fail)?;
        let mut out = Vec::with_capacity(64);
        wire::write_header(&mut out, id);
        compile::write_indexes(&mut out, &indexes);
        message
            .encode(&mut out)
            .map_err(|e| fail(ConnectError::data(e.to_string())))?;
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
                &format!("Failed to deserialize data for topic {topic} to Protobuf"),
            )
        };
        let (id, rest) = wire::read_header(bytes).map_err(fail)?;
        let (indexes, payload) = compile::read_indexes(rest).map_err(fail)?;
        let mut reader = state.reader_for(id).map_err(fail)?;
        let (mut read_id, mut indexes) = (id, indexes);
        if state.config.use_latest_version {
            // Read with the subject's latest schema: its message of the writer's name, else its
            // first.
            let name = reader
                .compiled
                .message_at(&indexes)
                .map_err(fail)?
                .full_name()
                .to_owned();
            let subject = state
                .config
                .subject_strategy
                .subject(topic, state.is_key, &name);
            let (latest_id, latest) = state.latest(&subject).map_err(fail)?;
            indexes = match latest.compiled.message(&name) {
                Ok(m) => compile::indexes_of(&m),
                Err(_) => vec![0],
            };
            (read_id, reader) = (latest_id, latest);
        }
        let entry = state
            .message_for(topic, read_id, &reader, &indexes)
            .map_err(fail)?;
        let (descriptor, connect) = (&entry.0, &entry.1);
        let message = DynamicMessage::decode(descriptor.clone(), payload).map_err(|e| {
            fail(ConnectError::data(format!(
                "Error deserializing Protobuf message for id {id}: {e}"
            )))
        })?;
        let value = state
            .data
            .to_connect_value(connect, &message)
            .map_err(fail)?;
        Ok(SchemaAndValue::new(Some(connect.clone()), value))
    }

    fn config_def(&self) -> ConfigDef {
        protobuf_config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn keys_implemented_and_refused() {
        let url = ("schema.registry.url", "http://127.0.0.1:1");
        let mut c = ProtobufConverter::default();
        c.configure(
            &props(&[
                url,
                (WRAPPER_FOR_NULLABLES, "true"),
                (INT_FOR_ENUMS, "true"),
            ]),
            false,
        )
        .unwrap();
        let d = &c.state().unwrap().data.config;
        assert!(d.wrapper_for_nullables && d.int_for_enums && !d.optional_for_nullables);
        for (k, v) in [
            ("latest.compatibility.strict", "true"),
            ("skip.known.types", "false"),
            ("reference.lookup.only", "true"),
            ("normalize.schemas", "true"),
        ] {
            let e = ProtobufConverter::default()
                .configure(
                    &props(&[url, ("use.latest.version", "true"), (k, v)]),
                    false,
                )
                .unwrap_err();
            assert!(e.to_string().contains(k), "{k}: {e}");
        }
        // Defaults spelled out are accepted.
        ProtobufConverter::default()
            .configure(&props(&[url, ("skip.known.types", "true")]), true)
            .unwrap();
        // Schemaless data is refused, naming the topic.
        let e = c
            .from_connect_data("t", None, &Value::String("x".into()))
            .unwrap_err();
        assert!(e.to_string().contains("schemaless"), "{e}");
        assert!(
            c.from_connect_data("t", None, &Value::Null)
                .unwrap()
                .is_none()
        );
        assert_eq!(c.to_connect_data("t", None).unwrap(), SchemaAndValue::NULL);
    }
}
