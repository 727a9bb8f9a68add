//! The plugin registry: which connector classes exist, how they are listed by
//! `GET /connector-plugins`, and how to instantiate them and their tasks by name.
//!
//! Names resolve as Connect resolves them: the class name, any declared alias (e.g. the Java
//! class name of a compatible connector), the simple name after the last `.`/`::`, or the simple
//! name without its `Connector` suffix. A name matching more than one plugin is an error.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::connector::{
    DynSinkConnector, DynSourceConnector, SinkConnector, SinkTask, SourceConnector, SourceTask,
};
use crate::error::{ConnectError, Result};

/// `source` or `sink` (and, for `connectorsOnly=false` listings, the other plugin kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginType {
    Source,
    Sink,
    Transformation,
    Predicate,
    Converter,
    HeaderConverter,
}

impl PluginType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Source => "source",
            Self::Sink => "sink",
            Self::Transformation => "transformation",
            Self::Predicate => "predicate",
            Self::Converter => "converter",
            Self::HeaderConverter => "header_converter",
        }
    }
}

impl fmt::Display for PluginType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of `GET /connector-plugins` (`version` omitted when unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginInfo {
    pub class: String,
    #[serde(rename = "type")]
    pub plugin_type: PluginType,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<String>,
}

/// Names of a plugin and of its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginDesc {
    pub class: &'static str,
    /// Other accepted names, e.g. `org.apache.kafka.connect.file.FileStreamSourceConnector`.
    pub aliases: &'static [&'static str],
    pub version: &'static str,
    /// The `task.class` the runtime writes into task configs.
    pub task_class: &'static str,
    /// Other accepted task class names (Java's, so task configs written by Java workers resolve).
    pub task_aliases: &'static [&'static str],
}

/// Makes a fresh source connector instance (a compiled-in type, or an adapter of an
/// out-of-process plugin holding its host).
pub type SourceFactory = std::sync::Arc<dyn Fn() -> Box<dyn DynSourceConnector> + Send + Sync>;
/// Makes a fresh sink connector instance.
pub type SinkFactory = std::sync::Arc<dyn Fn() -> Box<dyn DynSinkConnector> + Send + Sync>;

#[derive(Clone)]
enum Factory {
    Source(SourceFactory),
    Sink(SinkFactory),
}

#[derive(Clone)]
struct Entry {
    desc: PluginDesc,
    factory: Factory,
}

impl Entry {
    fn plugin_type(&self) -> PluginType {
        match self.factory {
            Factory::Source(_) => PluginType::Source,
            Factory::Sink(_) => PluginType::Sink,
        }
    }
}

/// A new, unstarted connector instance.
pub enum ConnectorInstance {
    Source(Box<dyn DynSourceConnector>),
    Sink(Box<dyn DynSinkConnector>),
}

impl ConnectorInstance {
    pub fn plugin_type(&self) -> PluginType {
        match self {
            Self::Source(_) => PluginType::Source,
            Self::Sink(_) => PluginType::Sink,
        }
    }

    /// The connector's `version()` (what status answers report).
    pub fn version(&self) -> String {
        match self {
            Self::Source(c) => c.version(),
            Self::Sink(c) => c.version(),
        }
    }
}

/// A new, unstarted task instance.
pub enum TaskInstance {
    Source(Box<dyn SourceTask>),
    Sink(Box<dyn SinkTask>),
}

impl TaskInstance {
    /// The task's `version()` (what status answers report).
    pub fn version(&self) -> String {
        match self {
            Self::Source(t) => t.version(),
            Self::Sink(t) => t.version(),
        }
    }
}

/// The connector plugins this worker can run: the ones compiled into the binary and those of
/// `plugin.path` the worker registered at start-up.
#[derive(Clone, Default)]
pub struct PluginRegistry {
    entries: Vec<Entry>,
    /// Classes known to exist (e.g. found in `plugin.path`) that this worker cannot run, and why.
    refused: Vec<(String, String)>,
}

impl fmt::Debug for PluginRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.desc.class))
            .finish()
    }
}

fn simple_name(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name)
}

fn names_match(candidate: &str, requested: &str) -> bool {
    if candidate == requested {
        return true;
    }
    let simple = simple_name(candidate);
    simple == requested || simple.strip_suffix("Connector") == Some(requested)
}

fn box_source<C: SourceConnector + Default>() -> Box<dyn DynSourceConnector> {
    Box::new(C::default())
}

fn box_sink<C: SinkConnector + Default>() -> Box<dyn DynSinkConnector> {
    Box::new(C::default())
}

impl PluginRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register_source<C: SourceConnector + Default>(&mut self, desc: PluginDesc) -> &mut Self {
        self.entries.push(Entry {
            desc,
            factory: Factory::Source(std::sync::Arc::new(box_source::<C>)),
        });
        self
    }

    /// Registers a sink connector made by `factory` (e.g. a Java plugin's adapter).
    pub fn register_sink_factory(&mut self, desc: PluginDesc, factory: SinkFactory) -> &mut Self {
        self.entries.push(Entry {
            desc,
            factory: Factory::Sink(factory),
        });
        self
    }

    /// Registers a source connector made by `factory` (e.g. a Java plugin's adapter).
    pub fn register_source_factory(
        &mut self,
        desc: PluginDesc,
        factory: SourceFactory,
    ) -> &mut Self {
        self.entries.push(Entry {
            desc,
            factory: Factory::Source(factory),
        });
        self
    }

    pub fn register_sink<C: SinkConnector + Default>(&mut self, desc: PluginDesc) -> &mut Self {
        self.entries.push(Entry {
            desc,
            factory: Factory::Sink(std::sync::Arc::new(box_sink::<C>)),
        });
        self
    }

    /// Records a class that exists but cannot run here (a Java connector of a kind this worker
    /// does not run): naming it is an error saying `reason`.
    pub fn refuse(&mut self, class: impl Into<String>, reason: impl Into<String>) -> &mut Self {
        self.refused.push((class.into(), reason.into()));
        self
    }

    /// Why `name` (a class name or simple name) cannot run here, if it is a refused class.
    pub fn refusal(&self, name: &str) -> Option<&str> {
        let name = name.trim();
        self.refused
            .iter()
            .find(|(class, _)| class == name || names_match(class, name))
            .map(|(_, reason)| reason.as_str())
    }

    /// What `GET /connector-plugins` lists (connectors only), sorted by class as Connect does.
    pub fn connector_plugins(&self) -> Vec<PluginInfo> {
        let mut out: Vec<PluginInfo> = self
            .entries
            .iter()
            .map(|e| PluginInfo {
                class: e.desc.class.to_owned(),
                plugin_type: e.plugin_type(),
                version: Some(e.desc.version.to_owned())
                    .filter(|v| !v.is_empty() && v != "undefined"),
            })
            .collect();
        out.sort_by(|a, b| a.class.cmp(&b.class));
        out
    }

    fn find(&self, name: &str, names: impl Fn(&Entry) -> Vec<&'static str>) -> Result<&Entry> {
        let name = name.trim();
        let exact: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| names(e).contains(&name))
            .collect();
        if let [one] = exact.as_slice() {
            return Ok(one);
        }
        let matches: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| names(e).iter().any(|n| names_match(n, name)))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(ConnectError::config(format!(
                "Failed to find any class that implements Connector and which name matches {name}, available connectors are: {}",
                self.entries
                    .iter()
                    .map(|e| e.desc.class)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            many => Err(ConnectError::config(format!(
                "More than one connector matches alias {name}. Please use full package and class name instead. Classes found: {}",
                many.iter()
                    .map(|e| e.desc.class)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    fn find_connector(&self, name: &str) -> Result<&Entry> {
        self.find(name, |e| {
            let mut n = vec![e.desc.class];
            n.extend_from_slice(e.desc.aliases);
            n
        })
        .map_err(|e| match self.refusal(name) {
            Some(reason) => ConnectError::config(reason.to_owned()),
            None => e,
        })
    }

    /// The description of the connector `name` resolves to.
    pub fn describe(&self, name: &str) -> Result<(&PluginDesc, PluginType)> {
        let e = self.find_connector(name)?;
        Ok((&e.desc, e.plugin_type()))
    }

    /// A fresh connector instance by class name or alias.
    pub fn create_connector(&self, name: &str) -> Result<ConnectorInstance> {
        Ok(match &self.find_connector(name)?.factory {
            Factory::Source(f) => ConnectorInstance::Source(f()),
            Factory::Sink(f) => ConnectorInstance::Sink(f()),
        })
    }

    /// A fresh task instance for a task config's `task.class`.
    pub fn create_task(&self, task_class: &str) -> Result<TaskInstance> {
        let entry = self
            .find(task_class, |e| {
                let mut n = vec![e.desc.task_class];
                n.extend_from_slice(e.desc.task_aliases);
                n
            })
            .map_err(|_| ConnectError::config(format!("Unknown task class {task_class}")))?;
        Ok(match &entry.factory {
            Factory::Source(f) => TaskInstance::Source(f().create_task()),
            Factory::Sink(f) => TaskInstance::Sink(f().create_task()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_class_is_an_error_naming_why() {
        let mut r = PluginRegistry::new();
        r.refuse("com.example.JdbcSinkConnector", "not here yet");
        assert_eq!(r.refusal("JdbcSink"), Some("not here yet"));
        assert_eq!(
            r.refusal("com.example.JdbcSinkConnector"),
            Some("not here yet")
        );
        assert_eq!(r.refusal("Other"), None);
        let Err(e) = r.create_connector("com.example.JdbcSinkConnector") else {
            panic!("a refused class does not instantiate");
        };
        assert_eq!(e.message(), "not here yet");
        assert!(r.create_connector("Other").is_err());
    }
}
