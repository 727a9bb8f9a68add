//! Java transformations and predicates of `plugin.path` as this workspace's
//! [`Transformation`] and [`Predicate`] (made by the provider, `provider`).
//!
//! ```text
//!  TransformChain (runtime) ── stage.apply_batch(records) ──> JavaTransformation
//!     records in the binary form (wire.rs, schemas once) ── "transform.apply" ──> host:
//!     Transformation.apply on each <── the records it returned (dropped, or its exception)
//! ```
//!
//! # Guarantees
//!
//! - A Java transformation gets a `SinkRecord` for a sink connector's records (with topic,
//!   partition, offset, timestamp) and a `SourceRecord` for a source's (without its source
//!   partition and offset); its result replaces the record, `null` drops it.
//! - An exception in `apply` or `test` is the stage's failure (a data error naming the class,
//!   with the Java trace): the task fails with it, or `errors.tolerance=all` skips the record,
//!   as in Apache. An exception in `configure` fails the task.
//!
//! # Performance
//!
//! A chain with a Java stage is applied batch by batch where the runtime has batches (a source
//! task's polls): one round trip to the JVM per batch and Java stage (and predicate). Where it
//! applies records one by one (a sink task's records), one round trip per record.

use std::sync::{Arc, Mutex};

use connect_api::converter::JsonConverter;
use connect_api::{ConfigDef, ConfigMap, ConnectError, PluginType, Result};
use connect_transforms::{Predicate, Record, Transformation};
use serde_json::json;

use super::JavaHost;
use super::host::HostError;
use super::instance::{PluginInstance, config_def_or_log};
use super::{convert, wire};

/// A Java exception of one record's result (`class`, `message`, `trace`).
fn java_error(e: &serde_json::Value) -> HostError {
    let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
    HostError::Java {
        class: text("class"),
        message: text("message"),
        trace: text("trace"),
    }
}

/// The error of a failed call, for each record of its batch (the message and the Java trace).
fn copy(e: &ConnectError) -> ConnectError {
    let message = e.to_string();
    let copied = match e.kind() {
        connect_api::ErrorKind::Data => ConnectError::data(message),
        connect_api::ErrorKind::Retriable => ConnectError::retriable(message),
        connect_api::ErrorKind::Config => return ConnectError::config(message),
        connect_api::ErrorKind::Fatal => ConnectError::fatal(message),
    };
    match std::error::Error::source(e) {
        Some(source) => copied.with_source(source.to_string()),
        None => copied,
    }
}

/// The schemas of one instance's batches, both ways (the host keeps its side per instance: a
/// new instance, after a new JVM, starts both again).
#[derive(Default)]
struct WireState {
    /// The host instance the state is for.
    instance: String,
    sent: wire::Encoder,
    received: convert::Schemas,
}

impl WireState {
    /// A batch's request for `instance`: `count`, the schemas named for the first time, and
    /// the records' bytes.
    fn request(
        &mut self,
        instance: &str,
        envelopes: &JsonConverter,
        payloads: &JsonConverter,
        records: &[&Record],
    ) -> Result<(serde_json::Value, Vec<u8>)> {
        if self.instance != instance {
            *self = Self {
                instance: instance.to_owned(),
                ..Self::default()
            };
        }
        let (schemas, bytes) = self.sent.stage_records(envelopes, payloads, records)?;
        Ok((json!({"count": records.len(), "schemas": schemas}), bytes))
    }
}

/// The JsonConverter of schemaless keys and values crossing to the host (payloads alone).
fn payload_converter() -> JsonConverter {
    JsonConverter::new(false)
}

fn not_configured(kind: &str, class: &str) -> ConnectError {
    ConnectError::fatal(format!("Java {kind} {class} used before configure"))
}

pub(super) struct JavaTransformation {
    host: Arc<JavaHost>,
    class: String,
    json: JsonConverter,
    payloads: JsonConverter,
    wire: Mutex<WireState>,
    instance: Option<PluginInstance>,
}

impl JavaTransformation {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            json: convert::data_converter(),
            payloads: payload_converter(),
            wire: Mutex::new(WireState::default()),
            instance: None,
        }
    }
}

impl Transformation for JavaTransformation {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let instance = PluginInstance::create(
            &self.host,
            &self.class,
            PluginType::Transformation,
            props,
            false,
        )
        .map_err(|e| e.into_connect(&format!("configure of Java transformation {}", self.class)))?;
        self.instance = Some(instance);
        Ok(())
    }

    fn apply(&self, record: &mut Record) -> Result<bool> {
        self.apply_batch(&mut [record])
            .pop()
            .unwrap_or_else(|| Err(ConnectError::fatal("no result for the record")))
    }

    fn apply_batch(&self, records: &mut [&mut Record]) -> Vec<Result<bool>> {
        let what = format!("apply of Java transformation {}", self.class);
        let mut wire = self.wire.lock().unwrap_or_else(|e| e.into_inner());
        let answer = (|| {
            let instance = self
                .instance
                .as_ref()
                .ok_or_else(|| not_configured("transformation", &self.class))?;
            let view: Vec<&Record> = records.iter().map(|r| &**r).collect();
            instance
                .call_batch("transform.apply", &mut |id| {
                    wire.request(id, &self.json, &self.payloads, &view)
                })?
                .map_err(|e| e.into_record_error(&what))
        })();
        let answer = match answer {
            Ok(a) => a,
            // The call itself failed: every record with it.
            Err(e) => return records.iter().map(|_| Err(copy(&e))).collect(),
        };
        if let Err(e) = convert::add_schemas(&mut wire.received, &answer.json) {
            let e = ConnectError::fatal(format!("{what}: a result schema did not convert: {e}"));
            return records.iter().map(|_| Err(copy(&e))).collect();
        }
        let results = answer.json["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut returned = wire::StageResults::new(&answer.attachment);
        let out: Vec<Result<bool>> = records
            .iter_mut()
            .enumerate()
            .map(
                |(i, record)| match results.get(i).and_then(serde_json::Value::as_u64) {
                    Some(0) => Ok(false),
                    Some(1) => returned
                        .next_into(&self.json, &wire.received, record)
                        .map(|()| true)
                        .map_err(|e| {
                            ConnectError::fatal(format!(
                                "the record Java transformation {} returned did not convert: {e}",
                                self.class
                            ))
                        }),
                    Some(2) => {
                        Err(java_error(&answer.json["errors"][i.to_string()])
                            .into_record_error(&what))
                    }
                    _ => Err(ConnectError::fatal(format!(
                        "{what}: the host answered no result for record {i} of {}",
                        results.len()
                    ))),
                },
            )
            .collect();
        if out.iter().all(Result::is_ok) && !returned.at_end() {
            let e = ConnectError::fatal(format!("{what}: bytes left after its results"));
            return records.iter().map(|_| Err(copy(&e))).collect();
        }
        out
    }

    fn prefers_batches(&self) -> bool {
        true
    }

    fn config_def(&self) -> ConfigDef {
        config_def_or_log(&self.host, &self.class, PluginType::Transformation)
    }
}

pub(super) struct JavaPredicate {
    host: Arc<JavaHost>,
    class: String,
    json: JsonConverter,
    payloads: JsonConverter,
    wire: Mutex<WireState>,
    instance: Option<PluginInstance>,
}

impl JavaPredicate {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            json: convert::data_converter(),
            payloads: payload_converter(),
            wire: Mutex::new(WireState::default()),
            instance: None,
        }
    }
}

impl Predicate for JavaPredicate {
    fn configure(&mut self, props: &ConfigMap) -> Result<()> {
        let instance =
            PluginInstance::create(&self.host, &self.class, PluginType::Predicate, props, false)
                .map_err(|e| {
                    e.into_connect(&format!("configure of Java predicate {}", self.class))
                })?;
        self.instance = Some(instance);
        Ok(())
    }

    fn test(&self, record: &Record) -> bool {
        self.try_test(record).unwrap_or_else(|e| {
            tracing::error!(class = %self.class, error = %e, "a Java predicate failed; taken as false");
            false
        })
    }

    fn try_test(&self, record: &Record) -> Result<bool> {
        self.try_test_batch(&[record])
            .pop()
            .unwrap_or_else(|| Err(ConnectError::fatal("no result for the record")))
    }

    fn try_test_batch(&self, records: &[&Record]) -> Vec<Result<bool>> {
        let what = format!("test of Java predicate {}", self.class);
        let mut wire = self.wire.lock().unwrap_or_else(|e| e.into_inner());
        let answer = (|| {
            let instance = self
                .instance
                .as_ref()
                .ok_or_else(|| not_configured("predicate", &self.class))?;
            instance
                .call_batch("predicate.test", &mut |id| {
                    wire.request(id, &self.json, &self.payloads, records)
                })?
                .map_err(|e| e.into_record_error(&what))
        })();
        let answer = match answer {
            Ok(a) => a.json,
            Err(e) => return records.iter().map(|_| Err(copy(&e))).collect(),
        };
        (0..records.len())
            .map(|i| match answer["results"].get(i) {
                Some(serde_json::Value::Bool(b)) => Ok(*b),
                Some(serde_json::Value::Null) => {
                    Err(java_error(&answer["errors"][i.to_string()]).into_record_error(&what))
                }
                other => Err(ConnectError::fatal(format!(
                    "{what}: the host answered {other:?} for record {i}"
                ))),
            })
            .collect()
    }

    fn config_def(&self) -> ConfigDef {
        config_def_or_log(&self.host, &self.class, PluginType::Predicate)
    }
}
