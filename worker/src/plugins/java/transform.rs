//! Java transformations and predicates of `plugin.path` as this workspace's
//! [`Transformation`] and [`Predicate`] (made by the provider, `provider`).
//!
//! ```text
//!  TransformChain (runtime) ── stage.apply(record) ──> JavaTransformation
//!     record as envelopes (convert::record_json) ── "transform.apply" ──> host: Transformation.apply
//!     <── the record it returned (null: dropped) ──────────────────────
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

use std::sync::Arc;

use connect_api::converter::JsonConverter;
use connect_api::{ConfigDef, ConfigMap, ConnectError, PluginType, Result};
use connect_transforms::{Predicate, Record, Transformation};
use serde_json::json;

use super::JavaHost;
use super::convert;
use super::host::HostError;
use super::instance::{PluginInstance, config_def_or_log};

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

fn not_configured(kind: &str, class: &str) -> ConnectError {
    ConnectError::fatal(format!("Java {kind} {class} used before configure"))
}

pub(super) struct JavaTransformation {
    host: Arc<JavaHost>,
    class: String,
    json: JsonConverter,
    instance: Option<PluginInstance>,
}

impl JavaTransformation {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            json: convert::data_converter(),
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
        let answer = (|| {
            let instance = self
                .instance
                .as_ref()
                .ok_or_else(|| not_configured("transformation", &self.class))?;
            let wire = records
                .iter()
                .map(|r| convert::record_json(&self.json, r))
                .collect::<Result<Vec<_>>>()?;
            instance
                .call("transform.apply", json!({"records": wire}))
                .map_err(|e| e.into_record_error(&what))
        })();
        let answer = match answer {
            Ok(a) => a,
            // The call itself failed: every record with it.
            Err(e) => return records.iter().map(|_| Err(copy(&e))).collect(),
        };
        records
            .iter_mut()
            .enumerate()
            .map(|(i, record)| {
                let out = &answer[i];
                if let Some(e) = out.get("error") {
                    return Err(java_error(e).into_record_error(&what));
                }
                match out.get("record") {
                    None => Err(ConnectError::fatal(format!(
                        "{what}: the host answered no result for record {i} of {}",
                        answer.as_array().map_or(0, Vec::len)
                    ))),
                    Some(r) if r.is_null() => Ok(false),
                    Some(r) => convert::read_record(&self.json, r, record)
                        .map(|()| true)
                        .map_err(|e| {
                            ConnectError::data(format!(
                                "the record Java transformation {} returned did not convert: {e}",
                                self.class
                            ))
                        }),
                }
            })
            .collect()
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
    instance: Option<PluginInstance>,
}

impl JavaPredicate {
    pub(super) fn new(host: &Arc<JavaHost>, class: &str) -> Self {
        Self {
            host: Arc::clone(host),
            class: class.to_owned(),
            json: convert::data_converter(),
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
        let answer = (|| {
            let instance = self
                .instance
                .as_ref()
                .ok_or_else(|| not_configured("predicate", &self.class))?;
            let wire = records
                .iter()
                .map(|r| convert::record_json(&self.json, r))
                .collect::<Result<Vec<_>>>()?;
            instance
                .call("predicate.test", json!({"records": wire}))
                .map_err(|e| e.into_record_error(&what))
        })();
        let answer = match answer {
            Ok(a) => a,
            Err(e) => return records.iter().map(|_| Err(copy(&e))).collect(),
        };
        (0..records.len())
            .map(|i| {
                let out = &answer[i];
                if let Some(e) = out.get("error") {
                    return Err(java_error(e).into_record_error(&what));
                }
                out.get("ok")
                    .and_then(serde_json::Value::as_bool)
                    .ok_or_else(|| {
                        ConnectError::fatal(format!(
                            "{what}: the host answered {out} for record {i}"
                        ))
                    })
            })
            .collect()
    }

    fn config_def(&self) -> ConfigDef {
        config_def_or_log(&self.host, &self.class, PluginType::Predicate)
    }
}
