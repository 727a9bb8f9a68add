//! `io.apicurio.registry.utils.converter.ProtobufConverter`: Apicurio's Protobuf converter
//! (`ProtobufKafkaSerializer` / `ProtobufKafkaDeserializer` around Apicurio's own `ProtobufData`,
//! [`super::protobuf_data`]), with Apicurio's keys ([`super`]).
//!
//! # Wire format (Apicurio 3.x defaults)
//!
//! ```text
//!   0x00 | content id (4 bytes, big-endian) | varint length, Ref { string name = 1 } | message
//! ```
//!
//! The `Ref` (`apicurio.registry.serde.send-type-ref`, on by default) names the root message by
//! its simple name; the reader looks that name up among the registered file's top-level messages.
//! With `apicurio.registry.serde.send-indexes` (off by default) Apicurio's message indexes
//! (a zigzag varint count, then each index: `[0]` is `02 00`, not Confluent's single `00`)
//! follow the Ref. The reader reads indexes first, then the Ref (as Java's deserializer does,
//! the other order than the writer's).
//!
//! The schema is registered as a `PROTOBUF` artifact `<topic>-value` (`-key`) in the default
//! group: through the Confluent-compatible API, the subject of that name, whose ids are content
//! ids. Not Confluent's format: Confluent's `ProtobufConverter` writes message indexes where
//! this writes the Ref, and registers another text; each reads its own.
//!
//! ```text
//!   from_connect_data: Connect schema ─(cache)─▶ ProtoFile (Apicurio's ProtobufData) ─▶ Wire text
//!       ─(cache)─▶ content id (register or look up, PROTOBUF) ─▶ 0x00 id Ref message
//!   to_connect_data:   0x00 id [indexes] [Ref] message ─▶ id ─(cache)─▶ registered text
//!       ─▶ compiled (map entries as plain repeated messages) ─▶ the Ref's message
//!       ─▶ Connect schema (as Java parses the text) and value
//! ```

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use connect_api::{
    ConfigDef, ConfigMap, ConnectError, Converter, Result, Schema, SchemaAndValue, Value,
};
use protox::prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

use super::protobuf_data::{self, ProtoFile, Reader as DataReader};
use super::{ApicurioFormat, ProtobufSerde};
use crate::client::RegistryClient;
use crate::config::{self, RegistryConverterConfig};
use crate::protobuf::compile;
use crate::wire;

pub const APICURIO_PROTOBUF_CONVERTER: &str =
    "io.apicurio.registry.utils.converter.ProtobufConverter";

/// A Connect schema the converter writes with.
struct Writer {
    file: ProtoFile,
    text: String,
    full_name: String,
    indexes: Vec<i32>,
}

/// A registered schema the converter reads (its descriptors hold the compiled pool).
struct Reader {
    /// Full names of the messages that were map entries (cleared in `pool`).
    map_entries: HashSet<String>,
    /// The main file's top-level messages, in order.
    messages: Vec<MessageDescriptor>,
    /// Per root message name: its Connect schema.
    schemas: Mutex<HashMap<String, Schema>>,
}

struct State {
    client: Arc<RegistryClient>,
    config: RegistryConverterConfig,
    serde: ProtobufSerde,
    is_key: bool,
    writers: Mutex<Vec<(Schema, Arc<Writer>)>>,
    ids: Mutex<HashMap<(String, String), i32>>,
    readers: Mutex<HashMap<i32, Arc<Reader>>>,
}

#[derive(Default)]
pub struct ApicurioProtobufConverter {
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

/// The text and file a Connect schema is written with.
pub fn writer_parts(schema: &Schema) -> Result<(ProtoFile, String)> {
    let file = ProtoFile::from_connect_schema(schema)?;
    let text = file.to_text();
    Ok((file, text))
}

/// Compiles a registered text for reading: the main file's messages, with map entries made
/// plain repeated messages (prost-reflect keeps a map's entries in a hash map; Java keeps their
/// order).
pub fn compile_for_reading(
    text: &str,
) -> Result<(DescriptorPool, HashSet<String>, Vec<MessageDescriptor>)> {
    let compiled = compile::compile(text)?;
    let mut map_entries = HashSet::new();
    let mut files = Vec::new();
    for file in compiled.pool.file_descriptor_protos() {
        let mut file = file.clone();
        if file.name() == compile::MAIN_FILE {
            let prefix = match file.package() {
                "" => String::new(),
                p => format!("{p}."),
            };
            fn clear(
                prefix: &str,
                m: &mut protox::prost_reflect::prost_types::DescriptorProto,
                out: &mut HashSet<String>,
            ) {
                let full = format!("{prefix}{}", m.name());
                if let Some(o) = m.options.as_mut()
                    && o.map_entry == Some(true)
                {
                    o.map_entry = None;
                    out.insert(full.clone());
                }
                let nested_prefix = format!("{full}.");
                for n in &mut m.nested_type {
                    clear(&nested_prefix, n, out);
                }
            }
            for m in &mut file.message_type {
                clear(&prefix, m, &mut map_entries);
            }
        }
        files.push(file);
    }
    let pool = DescriptorPool::from_file_descriptor_set(
        protox::prost_reflect::prost_types::FileDescriptorSet { file: files },
    )
    .map_err(|e| ConnectError::data(format!("Invalid Protobuf schema: {e}")))?;
    let messages = pool
        .get_file_by_name(compile::MAIN_FILE)
        .map(|f| f.messages().collect())
        .unwrap_or_default();
    Ok((pool, map_entries, messages))
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
        let (file, text) = writer_parts(schema)?;
        let w = Arc::new(Writer {
            full_name: file.full_name(),
            indexes: file.indexes(),
            file,
            text,
        });
        let mut cache = lock(&self.writers);
        cache.insert(0, (schema.clone(), w.clone()));
        cache.truncate(self.config.schemas_cache_size.max(1));
        Ok(w)
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
        let (_pool, map_entries, messages) = compile_for_reading(&registered.text)?;
        let r = Arc::new(Reader {
            map_entries,
            messages,
            schemas: Mutex::default(),
        });
        let mut cache = lock(&self.readers);
        if cache.len() >= self.config.schemas_cache_size.max(1) {
            cache.clear();
        }
        cache.insert(id, r.clone());
        Ok(r)
    }
}

impl Reader {
    fn root(
        &self,
        id: i32,
        name: Option<&str>,
        indexes: Option<&[i32]>,
    ) -> Result<MessageDescriptor> {
        if let Some(name) = name {
            return self
                .messages
                .iter()
                .find(|m| m.name() == name)
                .cloned()
                .ok_or_else(|| {
                    ConnectError::data(format!(
                        "The schema of id {id} has no message {name} (the record's type reference)"
                    ))
                });
        }
        if let Some(indexes) = indexes {
            let mut current: Option<MessageDescriptor> = None;
            for &i in if indexes.is_empty() {
                &[0][..]
            } else {
                indexes
            } {
                let next = usize::try_from(i).ok().and_then(|i| match &current {
                    None => self.messages.get(i).cloned(),
                    Some(m) => m.child_messages().nth(i),
                });
                current = Some(next.ok_or_else(|| {
                    ConnectError::data(format!("Invalid message indexes {indexes:?} for id {id}"))
                })?);
            }
            if let Some(m) = current {
                return Ok(m);
            }
        }
        self.messages
            .first()
            .cloned()
            .ok_or_else(|| ConnectError::data(format!("The schema of id {id} has no message")))
    }

    fn schema_for(&self, desc: &MessageDescriptor) -> Result<Schema> {
        if let Some(s) = lock(&self.schemas).get(desc.full_name()) {
            return Ok(s.clone());
        }
        let schema = self.data().to_connect_schema(desc)?;
        lock(&self.schemas).insert(desc.full_name().to_owned(), schema.clone());
        Ok(schema)
    }

    fn data(&self) -> DataReader<'_> {
        DataReader {
            map_entries: &self.map_entries,
        }
    }
}

impl ApicurioProtobufConverter {
    fn state(&self) -> Result<&State> {
        self.state.as_ref().ok_or_else(|| {
            ConnectError::fatal("Apicurio's ProtobufConverter used before configure()")
        })
    }
}

impl Converter for ApicurioProtobufConverter {
    fn configure(&mut self, props: &ConfigMap, is_key: bool) -> Result<()> {
        let (translated, serde) = super::translate_protobuf(props)?;
        let config =
            RegistryConverterConfig::parse_for(&translated, is_key, config::Format::Protobuf)?;
        let client = RegistryClient::shared(config.client.clone())?;
        self.state = Some(State {
            client,
            config,
            serde,
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
                &format!("Failed to serialize Protobuf data for topic {topic}"),
            )
        };
        let Some(schema) = schema else {
            return Err(fail(ConnectError::data(
                "schemaless data (no Connect schema) is not supported by Apicurio's ProtobufConverter",
            )));
        };
        let w = state.writer_for(schema).map_err(fail)?;
        let mut message = Vec::with_capacity(64);
        w.file.encode(schema, value, &mut message).map_err(fail)?;
        let subject = state
            .config
            .subject_strategy
            .subject(topic, state.is_key, &w.full_name);
        let id = state.id_for(&subject, &w).map_err(fail)?;
        let mut out = Vec::with_capacity(message.len() + w.file.root.len() + 12);
        wire::write_header(&mut out, id);
        if state.serde.send_type_ref {
            protobuf_data::write_ref(&mut out, &w.file.root);
        }
        if state.serde.send_indexes {
            write_apicurio_indexes(&mut out, &w.indexes);
        }
        out.extend_from_slice(&message);
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
        let (id, mut rest) = wire::read_header(bytes).map_err(fail)?;
        let mut indexes = None;
        if state.serde.read_indexes {
            let (read, after) = compile::read_indexes(rest).map_err(fail)?;
            indexes = Some(read);
            rest = after;
        }
        let reader = state.reader_for(id).map_err(fail)?;
        let mut name = None;
        if state.serde.read_type_ref {
            // As Java: bytes that are no Ref are read from the start as the first message.
            if let Some((n, after)) = protobuf_data::read_ref(rest) {
                name = Some(n);
                rest = after;
            }
        }
        let desc = reader
            .root(id, name.as_deref(), indexes.as_deref())
            .map_err(fail)?;
        let schema = reader.schema_for(&desc).map_err(fail)?;
        let message = DynamicMessage::decode(desc, rest).map_err(|e| {
            fail(ConnectError::data(format!(
                "Error deserializing Protobuf message for id {id}: {e}"
            )))
        })?;
        let value = reader
            .data()
            .to_connect_value(&schema, &message)
            .map_err(fail)?;
        Ok(SchemaAndValue::new(Some(schema), value))
    }

    fn config_def(&self) -> ConfigDef {
        super::config_def_for(ApicurioFormat::Protobuf)
    }
}

/// Apicurio's `MessageIndexesUtil.writeTo`: the count, then each index (zigzag varints; no
/// single-byte `[0]` as Confluent's).
fn write_apicurio_indexes(out: &mut Vec<u8>, indexes: &[i32]) {
    let mut put = |v: i32| {
        let mut z = ((v << 1) ^ (v >> 31)) as u32;
        while z >= 0x80 {
            out.push((z as u8 & 0x7f) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    };
    put(indexes.len() as i32);
    for &i in indexes {
        put(i);
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

    const URL: (&str, &str) = (
        "apicurio.registry.url",
        "http://127.0.0.1:1/apis/registry/v3",
    );

    #[test]
    fn keys_implemented_and_refused() {
        let mut c = ApicurioProtobufConverter::default();
        c.configure(
            &props(&[
                URL,
                ("apicurio.registry.serde.send-type-ref", "false"),
                ("apicurio.registry.serde.send-indexes", "true"),
                ("apicurio.registry.serde.validation-enabled", "false"),
                ("apicurio.registry.headers.enabled", "false"),
                ("apicurio.protobuf.derive.class", "false"),
            ]),
            false,
        )
        .unwrap();
        let s = c.state().unwrap();
        assert_eq!(
            s.serde,
            ProtobufSerde {
                send_type_ref: false,
                send_indexes: true,
                read_type_ref: true,
                read_indexes: false
            }
        );
        assert_eq!(
            s.config.client.urls,
            ["http://127.0.0.1:1/apis/ccompat/v7".to_owned()]
        );
        for (k, v) in [
            ("apicurio.registry.find-latest", "true"),
            ("apicurio.registry.headers.enabled", "true"),
            ("apicurio.registry.use-id", "globalId"),
            ("apicurio.protobuf.derive.class", "true"),
            (
                "apicurio.registry.deserializer.value.return-class",
                "com.example.Order",
            ),
            ("apicurio.registry.avro.encoding", "JSON"),
            (
                "apicurio.registry.artifact-resolver-strategy",
                "io.apicurio.registry.serde.avro.strategy.RecordIdStrategy",
            ),
        ] {
            let e = ApicurioProtobufConverter::default()
                .configure(&props(&[URL, (k, v)]), false)
                .unwrap_err();
            assert!(e.to_string().contains(k), "{k}: {e}");
        }
        assert!(
            ApicurioProtobufConverter::default()
                .configure(&props(&[]), false)
                .is_err()
        );
        let def = c.config_def();
        for k in [
            "apicurio.registry.url",
            "apicurio.registry.serde.send-type-ref",
            "apicurio.registry.serde.read-indexes",
            "schemas.cache.config",
        ] {
            assert!(def.key(k).is_some(), "{k}");
        }
        assert!(def.key("apicurio.registry.avro.encoding").is_none());
    }

    #[test]
    fn null_schemaless_and_non_struct() {
        let mut c = ApicurioProtobufConverter::default();
        c.configure(&props(&[URL]), true).unwrap();
        assert!(
            c.from_connect_data("t", None, &Value::Null)
                .unwrap()
                .is_none()
        );
        assert!(
            c.from_connect_data("t", Some(&Schema::string()), &Value::Null)
                .unwrap()
                .is_none()
        );
        assert_eq!(c.to_connect_data("t", None).unwrap(), SchemaAndValue::NULL);
        let e = c
            .from_connect_data("t", None, &Value::String("x".into()))
            .unwrap_err();
        assert!(e.to_string().contains("schemaless"), "{e}");
        // Refused before any registry call (the URL above answers nothing).
        let e = c
            .from_connect_data("t", Some(&Schema::string()), &"x".into())
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("Top-level Protobuf converter schema must be a struct"),
            "{e}"
        );
    }

    #[test]
    fn apicurio_message_indexes_are_count_then_indexes() {
        let mut out = Vec::new();
        write_apicurio_indexes(&mut out, &[0]);
        assert_eq!(out, [2, 0]);
        let (read, rest) = compile::read_indexes(&[2, 6, 9]).unwrap();
        assert_eq!((read, rest), (vec![3], &[9u8][..]));
    }
}
