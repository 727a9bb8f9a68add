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
//! One round trip to the JVM per record and Java stage (the chain applies stages record by
//! record): a Java stage costs far more than a built-in one.

use std::sync::Arc;

use connect_api::converter::JsonConverter;
use connect_api::{ConfigDef, ConfigMap, ConnectError, PluginType, Result};
use connect_transforms::{Predicate, Record, Transformation};
use serde_json::json;

use super::JavaHost;
use super::convert;
use super::instance::{PluginInstance, config_def_or_log};

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
        let instance = self
            .instance
            .as_ref()
            .ok_or_else(|| not_configured("transformation", &self.class))?;
        let wire = convert::record_json(&self.json, record)?;
        let answer = instance
            .call("transform.apply", json!({"records": [wire]}))
            .map_err(|e| {
                e.into_record_error(&format!("apply of Java transformation {}", self.class))
            })?;
        let out = &answer[0];
        if out.is_null() {
            return Ok(false);
        }
        convert::read_record(&self.json, out, record).map_err(|e| {
            ConnectError::data(format!(
                "the record Java transformation {} returned did not convert: {e}",
                self.class
            ))
        })?;
        Ok(true)
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
        let instance = self
            .instance
            .as_ref()
            .ok_or_else(|| not_configured("predicate", &self.class))?;
        let wire = convert::record_json(&self.json, record)?;
        let answer = instance
            .call("predicate.test", json!({"record": wire}))
            .map_err(|e| e.into_record_error(&format!("test of Java predicate {}", self.class)))?;
        answer.as_bool().ok_or_else(|| {
            ConnectError::fatal(format!(
                "test of Java predicate {} answered {answer}, not a boolean",
                self.class
            ))
        })
    }

    fn config_def(&self) -> ConfigDef {
        config_def_or_log(&self.host, &self.class, PluginType::Predicate)
    }
}
