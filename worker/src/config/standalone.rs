//! The standalone worker's configuration (Apache's `StandaloneConfig` and `ConnectStandalone`):
//! the worker file with `offset.storage.file.filename` and without the distributed worker's
//! group and internal-topic keys, and the connector files given on the command line.
//!
//! # Errors
//!
//! - `offset.storage.file.filename` unset: Connect's `Missing required configuration ...`.
//! - `exactly.once.source.support` other than `disabled`: refused with Apache's standalone
//!   message (Apache's `StandaloneConfig` does not define the key and ignores it; a standalone
//!   worker has no exactly-once source support there either, and nothing configured is
//!   silently ignored here).
//! - A connector file that cannot be read, is not one of the three shapes Apache reads, has no
//!   `name`, or names a different connector in `name` and `config.name`: an error naming the
//!   file (and the key).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use connect_api::ConfigMap;
use serde_json::Value;

use super::{
    CONFIG_STORAGE_REPLICATION_FACTOR, CONFIG_STORAGE_TOPIC, CONNECT_PROTOCOL, ConfigError,
    EXACTLY_ONCE_SOURCE_SUPPORT, GROUP_ID, HEARTBEAT_INTERVAL_MS,
    INTER_WORKER_KEY_GENERATION_ALGORITHM, INTER_WORKER_KEY_SIZE, INTER_WORKER_KEY_TTL_MS,
    INTER_WORKER_SIGNATURE_ALGORITHM, INTER_WORKER_VERIFICATION_ALGORITHMS, KeyUse,
    OFFSET_STORAGE_PARTITIONS, OFFSET_STORAGE_REPLICATION_FACTOR, OFFSET_STORAGE_TOPIC,
    REBALANCE_TIMEOUT_MS, SCHEDULED_REBALANCE_MAX_DELAY_MS, SESSION_TIMEOUT_MS,
    STATUS_STORAGE_PARTITIONS, STATUS_STORAGE_REPLICATION_FACTOR, STATUS_STORAGE_TOPIC,
    STUCK_TRANSACTION_TIMEOUT_MS, WORKER_SYNC_TIMEOUT_MS, WORKER_UNSYNC_BACKOFF_MS, WorkerConfig,
    key_use, properties,
};
use crate::storage::TargetState;

/// Apache's `StandaloneConfig.OFFSET_STORAGE_FILE_FILENAME_CONFIG`: where source offsets live.
pub const OFFSET_STORAGE_FILE_FILENAME: &str = "offset.storage.file.filename";
/// What Apache's standalone herder answers to anything exactly-once.
pub const NO_EXACTLY_ONCE: &str =
    "Kafka Connect in standalone mode does not support exactly-once source connectors.";
/// The `group.id` the standalone worker names its clients with (`<group.id>-offsets`, ...);
/// no Kafka group of that name is ever joined.
pub const STANDALONE_GROUP_ID: &str = "connect-standalone";

/// Why a distributed worker's key means nothing to a standalone worker.
const NOT_IN_STANDALONE: &str = "a distributed worker's key, not one of Apache's StandaloneConfig: a standalone worker has no group and no internal topics";

/// The distributed worker's keys that a standalone worker has no use for.
const DISTRIBUTED_ONLY_KEYS: &[&str] = &[
    GROUP_ID,
    CONFIG_STORAGE_TOPIC,
    OFFSET_STORAGE_TOPIC,
    STATUS_STORAGE_TOPIC,
    CONFIG_STORAGE_REPLICATION_FACTOR,
    OFFSET_STORAGE_REPLICATION_FACTOR,
    OFFSET_STORAGE_PARTITIONS,
    STATUS_STORAGE_REPLICATION_FACTOR,
    STATUS_STORAGE_PARTITIONS,
    "status.storage.partitions.enable",
    CONNECT_PROTOCOL,
    SESSION_TIMEOUT_MS,
    HEARTBEAT_INTERVAL_MS,
    REBALANCE_TIMEOUT_MS,
    SCHEDULED_REBALANCE_MAX_DELAY_MS,
    WORKER_SYNC_TIMEOUT_MS,
    WORKER_UNSYNC_BACKOFF_MS,
    INTER_WORKER_KEY_GENERATION_ALGORITHM,
    INTER_WORKER_KEY_SIZE,
    INTER_WORKER_KEY_TTL_MS,
    INTER_WORKER_SIGNATURE_ALGORITHM,
    INTER_WORKER_VERIFICATION_ALGORITHMS,
    STUCK_TRANSACTION_TIMEOUT_MS,
    EXACTLY_ONCE_SOURCE_SUPPORT,
];

/// [`key_use`] for a standalone worker's file.
pub fn standalone_key_use(key: &str) -> KeyUse {
    if key == OFFSET_STORAGE_FILE_FILENAME {
        KeyUse::Applied
    } else if DISTRIBUTED_ONLY_KEYS.contains(&key) {
        KeyUse::Ignored(NOT_IN_STANDALONE)
    } else {
        key_use(key)
    }
}

/// A standalone worker's configuration.
#[derive(Debug, Clone)]
pub struct StandaloneConfig {
    /// Everything the runtime reads, as for a distributed worker (the distributed-only keys
    /// at their defaults, [`STANDALONE_GROUP_ID`] as `group.id`).
    pub worker: WorkerConfig,
    /// `offset.storage.file.filename`.
    pub offset_file: PathBuf,
}

impl StandaloneConfig {
    /// Reads a `.properties` file (Apache's `connect-standalone.properties` keys).
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_props(properties::parse(&text))
    }

    /// Parses and checks every key; logs the ones ignored, once each.
    pub fn from_props(raw: BTreeMap<String, String>) -> Result<Self, ConfigError> {
        if let Some(v) = raw.get(EXACTLY_ONCE_SOURCE_SUPPORT)
            && !v.trim().eq_ignore_ascii_case("disabled")
        {
            return Err(ConfigError::Invalid {
                key: EXACTLY_ONCE_SOURCE_SUPPORT,
                value: v.clone(),
                reason: NO_EXACTLY_ONCE.to_owned(),
            });
        }
        let offset_file = raw
            .get(OFFSET_STORAGE_FILE_FILENAME)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .ok_or(ConfigError::Missing(OFFSET_STORAGE_FILE_FILENAME))?;
        let offset_file = PathBuf::from(offset_file);
        // The distributed-only keys take their defaults: a standalone worker never reads them.
        let mut parsed: BTreeMap<String, String> = raw
            .iter()
            .filter(|(k, _)| !DISTRIBUTED_ONLY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (key, value) in [
            (GROUP_ID, STANDALONE_GROUP_ID),
            (CONFIG_STORAGE_TOPIC, "none (standalone)"),
            (OFFSET_STORAGE_TOPIC, "none (standalone)"),
            (STATUS_STORAGE_TOPIC, "none (standalone)"),
        ] {
            parsed.insert(key.to_owned(), value.to_owned());
        }
        let mut worker = WorkerConfig::parse(parsed)?;
        worker.standalone = true;
        // `raw` is what the file says (placeholders resolved): the keys put in above are not.
        worker
            .raw
            .retain(|k, _| raw.contains_key(k) && !DISTRIBUTED_ONLY_KEYS.contains(&k.as_str()));
        for (k, v) in &raw {
            worker.raw.entry(k.clone()).or_insert_with(|| v.clone());
        }
        worker.log_unused_keys(standalone_key_use);
        Ok(StandaloneConfig {
            worker,
            offset_file,
        })
    }
}

/// A connector given on the command line (Apache's `CreateConnectorRequest`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorFile {
    pub path: PathBuf,
    pub name: String,
    pub config: ConfigMap,
    pub initial_state: Option<TargetState>,
}

/// Why a connector file cannot be used; the message names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConnectorFileError(pub String);

/// Reads a connector file as Apache's `ConnectStandalone.parseConnectorConfigurationFile`, in
/// its order: a JSON object of string values (the config, with `name`), a JSON object
/// `{"name": ..., "config": {...}, "initial_state": ...}` (other fields ignored), else a Java
/// `.properties` file. Scalars in JSON are read as strings, as Jackson reads them. Unlike
/// Apache, a file that starts with `{` and is neither JSON shape is an error with the JSON
/// parser's reason (Apache would go on to read it as properties and miss `name`).
pub fn read_connector_file(path: &Path) -> Result<ConnectorFile, ConnectorFileError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        ConnectorFileError(format!(
            "failed to read connector configuration file '{shown}': {e}"
        ))
    })?;
    let missing_name = || {
        ConnectorFileError(format!(
            "Connector configuration at '{shown}' is missing the mandatory 'name' configuration"
        ))
    };
    let done = |name: String, config: ConfigMap, initial_state| ConnectorFile {
        path: path.to_owned(),
        name,
        config,
        initial_state,
    };
    if !text.trim_start().starts_with('{') {
        let config: ConfigMap = properties::parse(&text).into_iter().collect();
        let name = config.get("name").cloned().ok_or_else(missing_name)?;
        return Ok(done(name, config, None));
    }
    let json: Value = serde_json::from_str(&text).map_err(|e| {
        ConnectorFileError(format!(
            "connector configuration file '{shown}' is not valid JSON: {e}"
        ))
    })?;
    let Value::Object(object) = json else {
        unreachable!("text starting with '{{' parses to an object")
    };
    // Shape 1: a flat map of strings (Jackson reads numbers and booleans as their text).
    if let Some(config) = string_map(&object) {
        let name = config.get("name").cloned().ok_or_else(missing_name)?;
        return Ok(done(name, config, None));
    }
    // Shape 2: a create-connector request.
    let name = match object.get("name") {
        Some(Value::String(n)) => n.clone(),
        _ => return Err(missing_name()),
    };
    let Some(Value::Object(config)) = object.get("config") else {
        return Err(ConnectorFileError(format!(
            "connector configuration file '{shown}' is neither a JSON object of strings nor an object with 'name' and a 'config' object of strings"
        )));
    };
    let Some(mut config) = string_map(config) else {
        let key = config
            .iter()
            .find(|(_, v)| scalar_text(v).is_none())
            .map(|(k, _)| k.as_str())
            .unwrap_or_default();
        return Err(ConnectorFileError(format!(
            "connector configuration file '{shown}': the value of '{key}' in 'config' is not a string"
        )));
    };
    match config.get("name") {
        Some(n) if *n != name => {
            return Err(ConnectorFileError(format!(
                "Connector name configuration in 'config' doesn't match the one specified in 'name' at '{shown}'"
            )));
        }
        Some(_) => {}
        None => {
            config.insert("name".to_owned(), name.clone());
        }
    }
    let initial_state = match object.get("initial_state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.to_ascii_uppercase().as_str() {
            "RUNNING" => TargetState::Started,
            "PAUSED" => TargetState::Paused,
            "STOPPED" => TargetState::Stopped,
            _ => {
                return Err(ConnectorFileError(format!(
                    "connector configuration file '{shown}': invalid 'initial_state' {s}; use RUNNING, PAUSED or STOPPED"
                )));
            }
        }),
        Some(other) => {
            return Err(ConnectorFileError(format!(
                "connector configuration file '{shown}': invalid 'initial_state' {other}; use RUNNING, PAUSED or STOPPED"
            )));
        }
    };
    Ok(done(name, config, initial_state))
}

/// A JSON object's values as strings, if every one is a string, number or boolean.
fn string_map(object: &serde_json::Map<String, Value>) -> Option<ConfigMap> {
    object
        .iter()
        .map(|(k, v)| Some((k.clone(), scalar_text(v)?)))
        .collect()
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(text: &str) -> BTreeMap<String, String> {
        properties::parse(text)
    }

    const BASE: &str = "bootstrap.servers=127.0.0.1:9092\nkey.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\n";

    #[test]
    fn apaches_standalone_file_starts_a_worker_without_group_or_topics() {
        let c = StandaloneConfig::from_props(props(&format!(
            "{BASE}offset.storage.file.filename=/tmp/connect.offsets\noffset.flush.interval.ms=10000\n"
        )))
        .unwrap();
        assert_eq!(c.offset_file, PathBuf::from("/tmp/connect.offsets"));
        assert_eq!(c.worker.offset_flush_interval.as_millis(), 10_000);
        assert_eq!(c.worker.group_id, STANDALONE_GROUP_ID);
        assert!(!c.worker.raw.contains_key(GROUP_ID));
    }

    #[test]
    fn the_offsets_file_is_required() {
        let err = StandaloneConfig::from_props(props(BASE)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Missing required configuration \"offset.storage.file.filename\" which has no default value."
        );
    }

    #[test]
    fn exactly_once_is_refused_with_apaches_message_and_distributed_keys_are_ignored() {
        let err = StandaloneConfig::from_props(props(&format!(
            "{BASE}offset.storage.file.filename=x\nexactly.once.source.support=enabled\n"
        )))
        .unwrap_err();
        assert!(err.to_string().contains(NO_EXACTLY_ONCE), "{err}");
        // Invalid values of keys standalone does not read do not stop it (Apache ignores them).
        let c = StandaloneConfig::from_props(props(&format!(
            "{BASE}offset.storage.file.filename=x\nexactly.once.source.support=disabled\ngroup.id=g\nsession.timeout.ms=nope\n"
        )))
        .unwrap();
        assert_eq!(c.worker.raw.get(GROUP_ID).map(String::as_str), Some("g"));
        assert_eq!(
            standalone_key_use(GROUP_ID),
            KeyUse::Ignored(NOT_IN_STANDALONE)
        );
        assert_eq!(
            standalone_key_use(OFFSET_STORAGE_FILE_FILENAME),
            KeyUse::Applied
        );
        assert_eq!(standalone_key_use("producer.acks"), KeyUse::Applied);
        assert_eq!(key_use(OFFSET_STORAGE_FILE_FILENAME), KeyUse::Unknown);
    }

    fn file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("standalone-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn reads_apaches_three_connector_file_shapes() {
        let flat = read_connector_file(&file(
            "flat.json",
            r#"{"name":"a","connector.class":"X","tasks.max":2,"b":true}"#,
        ))
        .unwrap();
        assert_eq!(flat.name, "a");
        assert_eq!(flat.config.get("tasks.max").unwrap(), "2");
        assert_eq!(flat.config.get("b").unwrap(), "true");
        let request = read_connector_file(&file(
            "request.json",
            r#"{"name":"b","config":{"connector.class":"X"},"initial_state":"PAUSED","other":1}"#,
        ))
        .unwrap();
        assert_eq!(request.config.get("name").unwrap(), "b");
        assert_eq!(request.initial_state, Some(TargetState::Paused));
        let p = read_connector_file(&file("c.properties", "name=c\nconnector.class=X\n")).unwrap();
        assert_eq!(p.name, "c");
        assert_eq!(p.initial_state, None);
    }

    #[test]
    fn bad_connector_files_are_errors_naming_the_file() {
        let path = file("noname.properties", "connector.class=X\n");
        let err = read_connector_file(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "Connector configuration at '{}' is missing the mandatory 'name' configuration",
                path.display()
            )
        );
        let path = file("mismatch.json", r#"{"name":"a","config":{"name":"b"}}"#);
        assert!(
            read_connector_file(&path)
                .unwrap_err()
                .to_string()
                .starts_with("Connector name configuration in 'config' doesn't match")
        );
        let path = file("broken.json", r#"{"name":"a","#);
        let err = read_connector_file(&path).unwrap_err().to_string();
        assert!(
            err.contains("broken.json") && err.contains("not valid JSON"),
            "{err}"
        );
        let path = file(
            "nested.json",
            r#"{"name":"a","config":{"tasks.max":{"x":1}}}"#,
        );
        let err = read_connector_file(&path).unwrap_err().to_string();
        assert!(err.contains("'tasks.max'"), "{err}");
        let missing = std::env::temp_dir().join("no-such-connector-file.properties");
        let err = read_connector_file(&missing).unwrap_err().to_string();
        assert!(err.contains("no-such-connector-file.properties"), "{err}");
    }
}
