//! Java connector plugins from `plugin.path`, run unchanged in a JVM this worker supervises.
//!
//! ```text
//!  start-up: plugin.path set? ──no──> nothing (no JVM, no cost)
//!               │ yes
//!               v
//!  find java (JAVA_HOME, PATH) and the host (deploy/plugin-host.sh build)
//!  start the host ── "scan" plugin.path ──> connector classes, versions, task classes
//!  register each in the PluginRegistry: JavaConnector, JavaSourceTask / JavaSinkTask adapters
//! ```
//!
//! The adapters implement the same traits as the compiled-in connectors, so the herder, REST
//! and the runtime (at-least-once and exactly-once source runners, converters, transforms,
//! offsets, transactions, fencing) do not know which kind they run. In the JVM run only the
//! plugin's own code: `Connector`, `SourceTask` and `SinkTask` calls, and the `Converter`,
//! `HeaderConverter`, `Transformation` and `Predicate` calls of the Java classes a config names;
//! records cross as Apache's JsonConverter writes them (a source task's schemas once) and are
//! converted, transformed, produced or consumed here.
//!
//! - [`host`]: the JVM process and the framed protocol.
//! - `connector`, `task`, `sink`: the adapters (connectors of both kinds, source and sink tasks).
//! - `convert`: Java `ConfigDef`s, `ConfigValue`s and records into this workspace's types.
//! - `provider` (on `transform`, `converter`, `instance`): the converters, header converters,
//!   transformations and predicates of `plugin.path`, installed at start-up as providers of
//!   the transform registry ([`connect_transforms::install_provider`]) and of the converter
//!   lookup ([`connect_api::converter::install_converter_provider`]), so the runtime's chains
//!   and converters, validation and REST find them by class name after the built-in ones.

mod connector;
mod convert;
mod converter;
pub mod host;
mod instance;
mod provider;
mod sink;
mod task;
mod transform;
mod wire;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use connect_api::{ConfigDef, PluginDesc, PluginRegistry, PluginType};
use serde_json::{Value, json};

use self::host::{Connection, HostError, HostSettings};

/// Apache's `plugin.discovery`: `only_scan`, `hybrid_warn` (default), `hybrid_fail`,
/// `service_load`, as in Apache Connect 4.4.
pub use crate::config::PLUGIN_DISCOVERY as PLUGIN_DISCOVERY_CONFIG;
/// Apache's `plugin.path`: comma-separated directories and jars holding plugins.
pub use crate::config::PLUGIN_PATH as PLUGIN_PATH_CONFIG;
/// Environment: the directory `deploy/plugin-host.sh build` made (plugin-host.jar, lib/).
pub const PLUGIN_HOST_DIR_ENV: &str = "CONNECT_PLUGIN_HOST_DIR";
/// Environment: the host JVM's heap options, as Apache's scripts read them.
pub const HEAP_OPTS_ENV: &str = "KAFKA_HEAP_OPTS";
/// Environment: more JVM options for the host.
pub const JVM_OPTS_ENV: &str = "CONNECT_PLUGIN_HOST_OPTS";
/// Environment: how long (ms) the host may leave a liveness ping unanswered before the worker
/// kills it (its tasks then fail and restart in a new JVM).
pub const PING_TIMEOUT_ENV: &str = "CONNECT_PLUGIN_HOST_PING_TIMEOUT_MS";
/// [`PING_TIMEOUT_ENV`] when unset: longer than any GC pause of a sanely sized heap.
pub const DEFAULT_PING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
/// The host's heap when [`HEAP_OPTS_ENV`] is unset.
pub const DEFAULT_HEAP_OPTS: &str = "-Xms64M -Xmx1G";

/// Why Java plugins could not be made available.
#[derive(Debug, thiserror::Error)]
pub enum JavaPluginError {
    #[error(
        "plugin.path is set ({plugin_path}) but no Java was found: {reason}; install Java 17 or later and set JAVA_HOME or put `java` on the PATH"
    )]
    NoJava { plugin_path: String, reason: String },
    #[error(
        "plugin.path is set but the Java plugin host is not built: none of {tried} holds plugin-host.jar; run deploy/plugin-host.sh build or set {PLUGIN_HOST_DIR_ENV}"
    )]
    NoHost { tried: String },
    #[error(
        "failed to start the Java plugin host or scan plugin.path with it: {0} (the host needs Java 17 or later; its own output is in the log, target java_plugin_host)"
    )]
    Scan(HostError),
    #[error(
        "Invalid value {0} for configuration plugin.discovery: String must be one of: only_scan, hybrid_warn, hybrid_fail, service_load"
    )]
    Discovery(String),
    #[error(
        "plugin.discovery=hybrid_fail and these plugins have connectors without META-INF/services manifests: {0}"
    )]
    NoManifests(String),
}

/// The JVM running this worker's Java plugins, started again when it died.
pub struct JavaHost {
    settings: HostSettings,
    plugin_path: Vec<String>,
    /// `plugin.discovery`, for the scan of a restarted JVM.
    discovery: String,
    current: Mutex<Option<Arc<Connection>>>,
    /// Held while a new JVM starts, so tasks restarting together share one.
    respawn: tokio::sync::Mutex<()>,
    config_defs: Mutex<std::collections::HashMap<String, ConfigDef>>,
}

impl JavaHost {
    /// The running JVM, started (and `plugin.path` scanned in it) if the last one died.
    pub async fn connection(&self) -> Result<Arc<Connection>, HostError> {
        if let Some(c) = self.live() {
            return Ok(c);
        }
        let _one_at_a_time = self.respawn.lock().await;
        if let Some(c) = self.live() {
            return Ok(c);
        }
        tracing::warn!("the Java plugin host is not running; starting a new one");
        let conn = Connection::spawn(&self.settings)?;
        conn.call(
            "scan",
            json!({"paths": self.plugin_path, "discovery": self.discovery}),
        )
        .await?;
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&conn));
        Ok(conn)
    }

    fn live(&self) -> Option<Arc<Connection>> {
        self.current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|c| c.dead().is_none())
            .cloned()
    }

    /// The JVM for a synchronous call (validation, task configs).
    pub fn connection_blocking(&self) -> Result<Arc<Connection>, HostError> {
        if let Some(c) = self.live() {
            return Ok(c);
        }
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|_| HostError::Died("no async runtime to restart it on".into()))?;
        match handle.runtime_flavor() {
            tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(self.connection()))
            }
            _ => Err(HostError::Died("not running".into())),
        }
    }

    /// A converter's, header converter's, transformation's or predicate's `config()`
    /// (cached: definitions are per class).
    pub fn plugin_config_def(
        &self,
        class: &str,
        kind: connect_api::PluginType,
    ) -> Result<ConfigDef, HostError> {
        let key = format!("{kind} {class}");
        if let Some(def) = self
            .config_defs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(def.clone());
        }
        let keys = self.connection_blocking()?.call_blocking(
            "plugin.configDef",
            json!({"class": class, "kind": kind.as_str()}),
        )?;
        let def = convert::config_def(&keys);
        self.config_defs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, def.clone());
        Ok(def)
    }

    /// The connector class's `config()` (cached: definitions are per class).
    pub fn config_def(&self, class: &str) -> Result<ConfigDef, HostError> {
        if let Some(def) = self
            .config_defs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(class)
        {
            return Ok(def.clone());
        }
        let keys = self
            .connection_blocking()?
            .call_blocking("configDef", json!({"class": class}))?;
        let def = convert::config_def(&keys);
        self.config_defs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(class.to_owned(), def.clone());
        Ok(def)
    }
}

/// The `plugin.path` entries of a worker config (empty when unset or blank).
pub fn plugin_path(raw: &std::collections::BTreeMap<String, String>) -> Vec<String> {
    raw.get(PLUGIN_PATH_CONFIG)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `JAVA_HOME/bin/java`, else `java` on the PATH.
pub fn find_java() -> Result<PathBuf, String> {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        let java = Path::new(&home).join("bin").join("java");
        return if java.is_file() {
            Ok(java)
        } else {
            Err(format!("JAVA_HOME={} has no bin/java", java.display()))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("java"))
        .find(|j| j.is_file())
        .ok_or_else(|| "JAVA_HOME is unset and `java` is not on the PATH".to_owned())
}

/// Where the host was built: [`PLUGIN_HOST_DIR_ENV`], else beside the binary
/// (`plugin-host/`, `../share/connect-worker/plugin-host`), else `.local/plugin-host` of the
/// source tree the binary was built in.
fn find_host_dir() -> Result<PathBuf, JavaPluginError> {
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os(PLUGIN_HOST_DIR_ENV).filter(|d| !d.is_empty()) {
        tried.push(PathBuf::from(dir));
    } else if let Some(bin) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        tried.push(bin.join("plugin-host"));
        tried.push(bin.join("../share/connect-worker/plugin-host"));
        for up in bin.ancestors().skip(1).take(4) {
            tried.push(up.join(".local/plugin-host"));
        }
    }
    tried
        .iter()
        .find(|d| d.join("plugin-host.jar").is_file())
        .cloned()
        .ok_or_else(|| JavaPluginError::NoHost {
            tried: tried
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn settings(java: PathBuf, host_dir: &Path) -> HostSettings {
    let sep = ":";
    let class_path = format!(
        "{}{sep}{}",
        host_dir.join("plugin-host.jar").display(),
        host_dir.join("lib").join("*").display()
    );
    let heap = std::env::var(HEAP_OPTS_ENV).unwrap_or_else(|_| DEFAULT_HEAP_OPTS.to_owned());
    let extra = std::env::var(JVM_OPTS_ENV).unwrap_or_default();
    let jvm_options = heap
        .split_whitespace()
        .chain(extra.split_whitespace())
        .map(str::to_owned)
        .collect();
    let ping_timeout = std::env::var(PING_TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms >= 100)
        .map_or(DEFAULT_PING_TIMEOUT, std::time::Duration::from_millis);
    HostSettings {
        java,
        class_path,
        jvm_options,
        ping_timeout,
    }
}

/// When `plugin.path` is set: starts the host, scans the path and registers each Java
/// connector found. `None` (and no JVM) when it is unset.
pub async fn install(
    raw: &std::collections::BTreeMap<String, String>,
    registry: &mut PluginRegistry,
) -> Result<Option<Arc<JavaHost>>, JavaPluginError> {
    let plugin_path = plugin_path(raw);
    if plugin_path.is_empty() {
        return Ok(None);
    }
    let discovery = raw
        .get(crate::config::PLUGIN_DISCOVERY)
        .map_or("hybrid_warn".to_owned(), |d| d.trim().to_ascii_lowercase());
    if !["only_scan", "hybrid_warn", "hybrid_fail", "service_load"].contains(&discovery.as_str()) {
        return Err(JavaPluginError::Discovery(discovery));
    }
    let java = find_java().map_err(|reason| JavaPluginError::NoJava {
        plugin_path: plugin_path.join(","),
        reason,
    })?;
    let host_dir = find_host_dir()?;
    let settings = settings(java, &host_dir);
    let conn = Connection::spawn(&settings).map_err(JavaPluginError::Scan)?;
    let hello = conn
        .call("hello", json!({}))
        .await
        .map_err(JavaPluginError::Scan)?;
    let scan = conn
        .call(
            "scan",
            json!({"paths": plugin_path, "discovery": discovery}),
        )
        .await
        .map_err(JavaPluginError::Scan)?;
    let without: Vec<&str> = scan["withoutManifests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if discovery == "hybrid_fail" && !without.is_empty() {
        return Err(JavaPluginError::NoManifests(without.join(", ")));
    }
    for error in scan["errors"].as_array().into_iter().flatten() {
        tracing::warn!(error = %error.as_str().unwrap_or_default(), "plugin.path: a plugin could not be loaded");
    }
    let host = Arc::new(JavaHost {
        settings,
        plugin_path: plugin_path.clone(),
        discovery,
        current: Mutex::new(Some(conn)),
        respawn: tokio::sync::Mutex::new(()),
        config_defs: Mutex::new(Default::default()),
    });
    let builtin: Vec<String> = registry
        .connector_plugins()
        .into_iter()
        .map(|p| p.class)
        .collect();
    let mut count = 0;
    for plugin in scan["plugins"].as_array().into_iter().flatten() {
        let text = |k: &str| plugin[k].as_str().unwrap_or_default().to_owned();
        let class = text("class");
        if builtin.contains(&class) {
            tracing::warn!(class = %class, "plugin.path: a Java connector has the name of a built-in one; the built-in one is used");
            continue;
        }
        let desc = PluginDesc {
            class: leak(&class),
            aliases: &[],
            version: leak(&text("version")),
            task_class: leak(&text("taskClass")),
            task_aliases: &[],
        };
        match text("type").as_str() {
            "source" => {
                let host = Arc::clone(&host);
                let d = desc.clone();
                registry.register_source_factory(
                    desc,
                    Arc::new(move || Box::new(connector::JavaConnector::new(&host, &d))),
                );
                count += 1;
            }
            "sink" => {
                let host = Arc::clone(&host);
                let d = desc.clone();
                registry.register_sink_factory(
                    desc,
                    Arc::new(move || Box::new(connector::JavaConnector::new(&host, &d))),
                );
                count += 1;
            }
            other => {
                tracing::warn!(class = %class, kind = other, location = %text("location"),
                    "plugin.path: Java {other} connectors do not run on this worker yet; not registered");
                registry.refuse(
                    &class,
                    not_yet(&class, &format!("{other} connector"), &text("location")),
                );
                continue;
            }
        }
        tracing::info!(class = %class, version = %text("version"), location = %text("location"), "plugin.path: found Java connector");
    }
    let builtin_converters = connect_api::converter::builtin_converter_classes();
    let mut record_plugins = Vec::new();
    for other in scan["others"].as_array().into_iter().flatten() {
        let text = |k: &str| other[k].as_str().unwrap_or_default().to_owned();
        let class = text("class");
        let kind = match text("type").as_str() {
            "converter" => PluginType::Converter,
            "header_converter" => PluginType::HeaderConverter,
            "transformation" => PluginType::Transformation,
            "predicate" => PluginType::Predicate,
            other => {
                tracing::warn!(class = %class, kind = other, "plugin.path: a plugin of an unknown kind; not registered");
                continue;
            }
        };
        // The built-in Rust ones keep serving Apache's class names (a plugin may ship its own
        // copy of connect-transforms or connect-json).
        let builtin = match kind {
            PluginType::Converter | PluginType::HeaderConverter => {
                builtin_converters.iter().any(|(c, _)| *c == class)
            }
            _ => connect_transforms::registry::find(&class).is_some_and(|d| d.class == class),
        };
        if builtin {
            tracing::info!(class = %class, kind = %kind, location = %text("location"),
                "plugin.path: a Java {kind} has the name of a built-in one; the built-in one is used");
            continue;
        }
        tracing::info!(class = %class, kind = %kind, version = %text("version"), location = %text("location"),
            "plugin.path: found Java {kind}");
        record_plugins.push(provider::JavaClass {
            class,
            kind,
            version: text("version"),
        });
    }
    let provider = Arc::new(provider::JavaRecordPlugins {
        host: Arc::clone(&host),
        classes: record_plugins,
    });
    connect_transforms::install_provider(provider.clone());
    connect_api::converter::install_converter_provider(provider);
    tracing::info!(
        connectors = count,
        java = %hello["java.version"].as_str().unwrap_or_default(),
        kafka_clients = %hello["kafka.version"].as_str().unwrap_or_default(),
        "Java plugins from plugin.path are available"
    );
    Ok(Some(host))
}

/// What naming a class of `plugin.path` that does not run here yet answers.
fn not_yet(class: &str, kind: &str, location: &str) -> String {
    format!(
        "{class} (a Java {kind} found in plugin.path at {location}) cannot be used: this worker runs Java source and sink connectors, converters, transformations and predicates from plugin.path, not other connector kinds"
    )
}

/// Plugin names live as long as the worker (discovered once, at start-up).
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// The Java value of a `Value` map, for request bodies.
fn config_json(config: &connect_api::ConfigMap) -> Value {
    Value::Object(
        config
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}
