//! Java transformations and predicates of `plugin.path` as this workspace's
//! [`Transformation`] and [`Predicate`], and the [`PluginProvider`] (and
//! [`ConverterProvider`]) that makes them, and the Java converters, resolvable by class name.
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
//! - Apache's class names (and the built-in simple names) keep resolving to the built-in Rust
//!   transformations, predicates and converters ([`connect_transforms::registry::lookup`],
//!   [`connect_api::converter::converter_for_class`]).
//!
//! # Performance
//!
//! One round trip to the JVM per record and Java stage (the chain applies stages record by
//! record): a Java stage costs far more than a built-in one.

use std::sync::Arc;

use connect_api::converter::{ConverterProvider, JsonConverter};
use connect_api::{
    ConfigDef, ConfigMap, ConnectError, Converter, HeaderConverter, PluginInfo, PluginType, Result,
};
use connect_transforms::{Plugin, PluginProvider, Predicate, Record, Transformation};
use serde_json::json;

use super::JavaHost;
use super::convert;
use super::converter::{JavaConverter, JavaHeaderConverter};
use super::instance::PluginInstance;

/// A converter, header converter, transformation or predicate class found in `plugin.path`.
#[derive(Debug, Clone)]
pub(super) struct JavaClass {
    pub(super) class: String,
    pub(super) kind: PluginType,
    pub(super) version: String,
}

/// The Java converters, transformations and predicates, installed as providers of both kinds.
pub(super) struct JavaRecordPlugins {
    pub(super) host: Arc<JavaHost>,
    pub(super) classes: Vec<JavaClass>,
}

fn simple(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

impl JavaRecordPlugins {
    /// The classes of one of `kinds` that `name` names: the class itself, else those of that
    /// simple name when only one class of a kind has it.
    fn resolve_kinds(&self, name: &str, kinds: &[PluginType]) -> Vec<(String, PluginType)> {
        let name = name.trim();
        let of_kinds = || self.classes.iter().filter(|c| kinds.contains(&c.kind));
        let exact: Vec<_> = of_kinds()
            .filter(|c| c.class == name)
            .map(|c| (c.class.clone(), c.kind))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        kinds
            .iter()
            .filter_map(|kind| {
                let mut by_simple =
                    of_kinds().filter(|c| c.kind == *kind && simple(&c.class) == name);
                match (by_simple.next(), by_simple.next()) {
                    (Some(c), None) => Some((c.class.clone(), c.kind)),
                    _ => None,
                }
            })
            .collect()
    }

    fn infos(&self, kinds: &[PluginType]) -> Vec<PluginInfo> {
        self.classes
            .iter()
            .filter(|c| kinds.contains(&c.kind))
            .map(|c| PluginInfo {
                class: c.class.clone(),
                plugin_type: c.kind,
                version: Some(c.version.clone()).filter(|v| !v.is_empty() && v != "undefined"),
            })
            .collect()
    }
}

const STAGES: [PluginType; 2] = [PluginType::Transformation, PluginType::Predicate];
const CONVERTERS: [PluginType; 2] = [PluginType::Converter, PluginType::HeaderConverter];

impl PluginProvider for JavaRecordPlugins {
    fn resolve(&self, name: &str) -> Vec<(String, PluginType)> {
        self.resolve_kinds(name, &STAGES)
    }

    fn create(&self, class: &str, kind: PluginType) -> Result<Plugin> {
        let host = Arc::clone(&self.host);
        Ok(match kind {
            PluginType::Predicate => Plugin::Predicate(Box::new(JavaPredicate {
                host,
                class: class.to_owned(),
                json: convert::data_converter(),
                instance: None,
            })),
            _ => Plugin::Transformation(Box::new(JavaTransformation {
                host,
                class: class.to_owned(),
                json: convert::data_converter(),
                instance: None,
            })),
        })
    }

    fn config_def(&self, class: &str, kind: PluginType) -> Result<ConfigDef> {
        self.host
            .plugin_config_def(class, kind)
            .map_err(|e| e.into_connect(&format!("config() of Java {kind} {class}")))
    }

    fn plugin_infos(&self) -> Vec<PluginInfo> {
        self.infos(&STAGES)
    }
}

impl ConverterProvider for JavaRecordPlugins {
    fn resolve(&self, name: &str, header: bool) -> Option<String> {
        let kind = if header {
            PluginType::HeaderConverter
        } else {
            PluginType::Converter
        };
        self.resolve_kinds(name, &[kind])
            .into_iter()
            .next()
            .map(|(class, _)| class)
    }

    fn converter(&self, class: &str) -> Option<Box<dyn Converter>> {
        Some(Box::new(JavaConverter::new(&self.host, class)))
    }

    fn header_converter(&self, class: &str) -> Option<Box<dyn HeaderConverter>> {
        Some(Box::new(JavaHeaderConverter::new(&self.host, class)))
    }

    fn plugin_infos(&self) -> Vec<PluginInfo> {
        self.infos(&CONVERTERS)
    }
}

/// The class's `config()` for a trait method that cannot fail: an error is logged and the
/// definition is empty (validation of the type key reports the error itself).
pub(super) fn config_def_or_log(host: &JavaHost, class: &str, kind: PluginType) -> ConfigDef {
    host.plugin_config_def(class, kind).unwrap_or_else(|e| {
        tracing::error!(class, kind = %kind, error = %e, "could not get the config() of a Java plugin");
        ConfigDef::new()
    })
}

fn not_configured(kind: &str, class: &str) -> ConnectError {
    ConnectError::fatal(format!("Java {kind} {class} used before configure"))
}

struct JavaTransformation {
    host: Arc<JavaHost>,
    class: String,
    json: JsonConverter,
    instance: Option<PluginInstance>,
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

struct JavaPredicate {
    host: Arc<JavaHost>,
    class: String,
    json: JsonConverter,
    instance: Option<PluginInstance>,
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
