//! Config topic records: keys, values, and the state machine that folds them into a
//! [`ClusterConfigState`] (Java `KafkaConfigBackingStore`'s consume callback). Pure: no I/O.
//!
//! # Guarantees
//!
//! - Task configs become visible only when a `commit-<c>` record covering every task id
//!   `0..N-1` arrives; an incomplete commit marks the connector *inconsistent* (its task list is
//!   empty) until a complete one arrives.
//! - Notifications ([`ConfigUpdate`]) are produced only after the initial replay
//!   ([`ConfigStateMachine::set_started`]); restart requests and cluster log levels read during
//!   the replay are ignored, as in Java.
//!
//! # Errors
//!
//! Malformed records are logged and skipped (never fatal): a Java worker does the same, and one
//! bad record must not stop the cluster.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use base64::Engine as _;
use connect_api::config::ConfigMap;
use serde_json::{Map, Value, json};

use super::json::to_java_json;
use super::types::{ConnectorTaskId, RestartRequest, SessionKey, TargetState};

pub const CONNECTOR_PREFIX: &str = "connector-";
pub const TARGET_STATE_PREFIX: &str = "target-state-";
pub const TASK_PREFIX: &str = "task-";
pub const COMMIT_TASKS_PREFIX: &str = "commit-";
pub const RESTART_PREFIX: &str = "restart-connector-";
pub const TASK_COUNT_RECORD_PREFIX: &str = "tasks-fencing-";
pub const SESSION_KEY_KEY: &str = "session-key";
pub const LOGGER_CLUSTER_PREFIX: &str = "logger-cluster-";

pub const PROPERTIES_FIELD: &str = "properties";
pub const TASKS_FIELD: &str = "tasks";
pub const STATE_FIELD: &str = "state";
pub const STATE_V2_FIELD: &str = "state.v2";
pub const INCLUDE_TASKS_FIELD: &str = "include-tasks";
pub const ONLY_FAILED_FIELD: &str = "only-failed";
pub const TASK_COUNT_FIELD: &str = "task-count";
pub const SESSION_KEY_FIELD: &str = "key";
pub const SESSION_KEY_ALGORITHM_FIELD: &str = "algorithm";
pub const SESSION_KEY_CREATION_TIMESTAMP_FIELD: &str = "creation-timestamp";
pub const LOGGER_LEVEL_FIELD: &str = "level";

pub fn connector_key(connector: &str) -> String {
    format!("{CONNECTOR_PREFIX}{connector}")
}
pub fn target_state_key(connector: &str) -> String {
    format!("{TARGET_STATE_PREFIX}{connector}")
}
pub fn task_key(id: &ConnectorTaskId) -> String {
    format!("{TASK_PREFIX}{}-{}", id.connector, id.task)
}
pub fn commit_tasks_key(connector: &str) -> String {
    format!("{COMMIT_TASKS_PREFIX}{connector}")
}
pub fn restart_key(connector: &str) -> String {
    format!("{RESTART_PREFIX}{connector}")
}
pub fn task_count_record_key(connector: &str) -> String {
    format!("{TASK_COUNT_RECORD_PREFIX}{connector}")
}
pub fn logger_cluster_key(namespace: &str) -> String {
    format!("{LOGGER_CLUSTER_PREFIX}{namespace}")
}

fn properties_value(props: &ConfigMap) -> Vec<u8> {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert(k.clone(), Value::String(v.clone()));
    }
    let mut m = Map::new();
    m.insert(PROPERTIES_FIELD.into(), Value::Object(p));
    to_java_json(&Value::Object(m))
}

/// `{"properties":{...}}` for `connector-<c>`.
pub fn connector_config_value(props: &ConfigMap) -> Vec<u8> {
    properties_value(props)
}
/// `{"properties":{...}}` for `task-<c>-<n>`.
pub fn task_config_value(props: &ConfigMap) -> Vec<u8> {
    properties_value(props)
}
/// `{"tasks":N}` for `commit-<c>`.
pub fn commit_tasks_value(tasks: i32) -> Vec<u8> {
    to_java_json(&json!({ TASKS_FIELD: tasks }))
}
/// `{"state":..,"state.v2":..}`: pre-3.5 readers only know STARTED/PAUSED, so STOPPED is
/// written as PAUSED in `state` (they then at least stop processing).
pub fn target_state_value(state: TargetState) -> Vec<u8> {
    let legacy = match state {
        TargetState::Stopped => TargetState::Paused,
        s => s,
    };
    to_java_json(&json!({ STATE_FIELD: legacy.as_str(), STATE_V2_FIELD: state.as_str() }))
}
/// `{"include-tasks":b,"only-failed":b}` for `restart-connector-<c>`.
pub fn restart_value(req: &RestartRequest) -> Vec<u8> {
    to_java_json(
        &json!({ INCLUDE_TASKS_FIELD: req.include_tasks, ONLY_FAILED_FIELD: req.only_failed }),
    )
}
/// `{"task-count":N}` for `tasks-fencing-<c>`.
pub fn task_count_record_value(count: i32) -> Vec<u8> {
    to_java_json(&json!({ TASK_COUNT_FIELD: count }))
}
/// `{"key":"<base64>","algorithm":..,"creation-timestamp":..}` for `session-key`.
pub fn session_key_value(key: &SessionKey) -> Vec<u8> {
    to_java_json(&json!({
        SESSION_KEY_FIELD: base64::engine::general_purpose::STANDARD.encode(&key.key),
        SESSION_KEY_ALGORITHM_FIELD: key.algorithm,
        SESSION_KEY_CREATION_TIMESTAMP_FIELD: key.creation_timestamp,
    }))
}
/// `{"level":"<LEVEL>"}` for `logger-cluster-<ns>`.
pub fn logger_level_value(level: &str) -> Vec<u8> {
    to_java_json(&json!({ LOGGER_LEVEL_FIELD: level }))
}

/// A config topic key, parsed with Java's prefix order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigKey {
    TargetState(String),
    Connector(String),
    Task(ConnectorTaskId),
    Commit(String),
    Restart(String),
    TaskCountRecord(String),
    SessionKey,
    LoggerCluster(String),
}

impl ConfigKey {
    /// `None` for keys Connect does not know (logged and ignored by the caller).
    pub fn parse(key: &str) -> Option<Self> {
        if let Some(c) = key.strip_prefix(TARGET_STATE_PREFIX) {
            Some(ConfigKey::TargetState(c.to_owned()))
        } else if let Some(c) = key.strip_prefix(CONNECTOR_PREFIX) {
            Some(ConfigKey::Connector(c.to_owned()))
        } else if let Some(rest) = key.strip_prefix(TASK_PREFIX) {
            // Names may contain '-': the task number is after the last one.
            let (connector, n) = rest.rsplit_once('-')?;
            let task = n.parse().ok()?;
            Some(ConfigKey::Task(ConnectorTaskId::new(connector, task)))
        } else if let Some(c) = key.strip_prefix(COMMIT_TASKS_PREFIX) {
            Some(ConfigKey::Commit(c.to_owned()))
        } else if let Some(c) = key.strip_prefix(RESTART_PREFIX) {
            Some(ConfigKey::Restart(c.to_owned()))
        } else if let Some(c) = key.strip_prefix(TASK_COUNT_RECORD_PREFIX) {
            Some(ConfigKey::TaskCountRecord(c.to_owned()))
        } else if key == SESSION_KEY_KEY {
            Some(ConfigKey::SessionKey)
        } else {
            key.strip_prefix(LOGGER_CLUSTER_PREFIX)
                .map(|ns| ConfigKey::LoggerCluster(ns.to_owned()))
        }
    }
}

/// Parses `{"properties":{...}}`; null property values are dropped (our maps hold strings).
pub fn parse_properties(value: &Value) -> Option<ConfigMap> {
    let props = value.get(PROPERTIES_FIELD)?.as_object()?;
    Some(
        props
            .iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k.clone(), s.clone())),
                Value::Null => None,
                other => Some((k.clone(), other.to_string())),
            })
            .collect(),
    )
}

/// Reads `state.v2` when it is a string, else `state`.
pub fn parse_target_state(value: &Value) -> Option<TargetState> {
    let s = match value.get(STATE_V2_FIELD) {
        Some(Value::String(s)) => s.as_str(),
        _ => value.get(STATE_FIELD)?.as_str()?,
    };
    TargetState::parse(s)
}

pub fn parse_restart(connector: &str, value: &Value) -> RestartRequest {
    // Java defaults a missing or non-boolean field to false (with a warning).
    RestartRequest {
        connector: connector.to_owned(),
        include_tasks: value
            .get(INCLUDE_TASKS_FIELD)
            .and_then(Value::as_bool)
            .unwrap_or(false),
        only_failed: value
            .get(ONLY_FAILED_FIELD)
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

pub fn parse_session_key(value: &Value) -> Option<SessionKey> {
    let key = base64::engine::general_purpose::STANDARD
        .decode(value.get(SESSION_KEY_FIELD)?.as_str()?)
        .ok()?;
    Some(SessionKey {
        key,
        algorithm: value.get(SESSION_KEY_ALGORITHM_FIELD)?.as_str()?.to_owned(),
        creation_timestamp: value.get(SESSION_KEY_CREATION_TIMESTAMP_FIELD)?.as_i64()?,
    })
}

fn int_field(value: &Value, field: &str) -> Option<i32> {
    value
        .get(field)?
        .as_i64()
        .and_then(|n| i32::try_from(n).ok())
}

/// The shared cluster view read from the config topic (Java `ClusterConfigState`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterConfigState {
    /// Offset after the last record applied; -1 before any record.
    pub offset: i64,
    pub session_key: Option<SessionKey>,
    pub connector_configs: BTreeMap<String, ConfigMap>,
    pub connector_target_states: BTreeMap<String, TargetState>,
    /// Task count from the latest commit record.
    pub connector_task_counts: BTreeMap<String, i32>,
    /// Committed task configs.
    pub task_configs: BTreeMap<ConnectorTaskId, ConfigMap>,
    /// Latest `tasks-fencing-<c>` value.
    pub connector_task_count_records: BTreeMap<String, i32>,
    /// Bumped on every applied commit; the first applied commit is generation 0.
    pub connector_task_config_generations: BTreeMap<String, i32>,
    /// A commit was read after the latest task-count record.
    pub connectors_pending_fencing: BTreeSet<String>,
    /// The latest commit did not cover every task id; tasks are reported as empty.
    pub inconsistent_connectors: BTreeSet<String>,
    /// The connector config current when its task configs were last committed.
    pub applied_connector_configs: BTreeMap<String, ConfigMap>,
}

impl ClusterConfigState {
    pub fn empty() -> Self {
        Self {
            offset: -1,
            ..Self::default()
        }
    }
    pub fn connectors(&self) -> Vec<String> {
        self.connector_configs.keys().cloned().collect()
    }
    pub fn contains(&self, connector: &str) -> bool {
        self.connector_configs.contains_key(connector)
    }
    pub fn connector_config(&self, connector: &str) -> Option<&ConfigMap> {
        self.connector_configs.get(connector)
    }
    pub fn target_state(&self, connector: &str) -> Option<TargetState> {
        self.connector_target_states.get(connector).copied()
    }
    pub fn task_count(&self, connector: &str) -> i32 {
        self.connector_task_counts
            .get(connector)
            .copied()
            .unwrap_or(0)
    }
    /// Task ids of the connector; empty while it is inconsistent.
    pub fn tasks(&self, connector: &str) -> Vec<ConnectorTaskId> {
        if self.inconsistent_connectors.contains(connector) {
            return Vec::new();
        }
        (0..self.task_count(connector))
            .map(|t| ConnectorTaskId::new(connector, t))
            .collect()
    }
    pub fn task_config(&self, id: &ConnectorTaskId) -> Option<&ConfigMap> {
        self.task_configs.get(id)
    }
    pub fn is_inconsistent(&self, connector: &str) -> bool {
        self.inconsistent_connectors.contains(connector)
    }
    pub fn pending_fencing(&self, connector: &str) -> bool {
        self.connectors_pending_fencing.contains(connector)
    }
    pub fn task_count_record(&self, connector: &str) -> Option<i32> {
        self.connector_task_count_records.get(connector).copied()
    }
    pub fn task_config_generation(&self, connector: &str) -> Option<i32> {
        self.connector_task_config_generations
            .get(connector)
            .copied()
    }
    pub fn applied_connector_config(&self, connector: &str) -> Option<&ConfigMap> {
        self.applied_connector_configs.get(connector)
    }
}

/// What a record changed, for the herder (Java `ConfigBackingStore.UpdateListener`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigUpdate {
    /// New or changed connector config (the herder tells "new" from its last snapshot).
    ConnectorConfigUpdated(String),
    ConnectorConfigRemoved(String),
    /// A commit record applied (or attempted) task configs; `tasks` are the applied ids.
    TaskConfigsCommitted {
        connector: String,
        tasks: Vec<ConnectorTaskId>,
    },
    TargetStateChanged(String),
    RestartRequested(RestartRequest),
    SessionKeyUpdated,
    LoggerLevelChanged {
        namespace: String,
        level: String,
    },
}

/// Folds config records into a [`ClusterConfigState`]; see the module docs.
#[derive(Debug, Clone)]
pub struct ConfigStateMachine {
    state: ClusterConfigState,
    /// Task configs waiting for their commit record. An entry is cleared, not removed, by a
    /// commit, which matters for the generation rule (Java keeps the empty map too).
    deferred: HashMap<String, BTreeMap<i32, ConfigMap>>,
    started: bool,
    pending_restarts: BTreeMap<String, RestartRequest>,
}

impl Default for ConfigStateMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl ConfigStateMachine {
    pub fn new() -> Self {
        Self {
            state: ClusterConfigState::empty(),
            deferred: HashMap::new(),
            started: false,
            pending_restarts: BTreeMap::new(),
        }
    }

    pub fn state(&self) -> &ClusterConfigState {
        &self.state
    }

    /// Ends the startup replay: from now on records produce notifications.
    pub fn set_started(&mut self) {
        self.started = true;
    }

    /// Restart requests read since startup, one per connector (highest impact wins).
    pub fn take_restart_requests(&mut self) -> Vec<RestartRequest> {
        std::mem::take(&mut self.pending_restarts)
            .into_values()
            .collect()
    }

    /// Applies one record at `offset`; returns the notifications it causes.
    pub fn apply(
        &mut self,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Vec<ConfigUpdate> {
        self.state.offset = offset + 1;
        let Some(key) = key.and_then(|k| std::str::from_utf8(k).ok()) else {
            tracing::warn!(offset, "ignoring config topic record without a UTF-8 key");
            return Vec::new();
        };
        let Some(parsed) = ConfigKey::parse(key) else {
            tracing::error!(key, "discarding config update record with invalid key");
            return Vec::new();
        };
        let value: Option<Value> = match value {
            None => None,
            Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
                Ok(Value::Null) => None,
                Ok(v) if v.is_object() => Some(v),
                Ok(_) | Err(_) => {
                    tracing::error!(
                        key,
                        "config topic record value is not a JSON object; ignoring it"
                    );
                    return Vec::new();
                }
            },
        };
        let mut updates = Vec::new();
        match parsed {
            ConfigKey::Connector(c) => self.on_connector(c, value, &mut updates),
            ConfigKey::TargetState(c) => self.on_target_state(c, value, &mut updates),
            ConfigKey::Task(id) => {
                let Some(props) = value.as_ref().and_then(parse_properties) else {
                    tracing::error!(task = %id, "ignoring task configuration because it is missing or malformed");
                    return updates;
                };
                self.deferred
                    .entry(id.connector.clone())
                    .or_default()
                    .insert(id.task, props);
            }
            ConfigKey::Commit(c) => self.on_commit(c, value, &mut updates),
            ConfigKey::TaskCountRecord(c) => {
                match value.as_ref().and_then(|v| int_field(v, TASK_COUNT_FIELD)) {
                    Some(n) => {
                        self.state.connector_task_count_records.insert(c.clone(), n);
                        self.state.connectors_pending_fencing.remove(&c);
                    }
                    None => tracing::error!(connector = %c, "ignoring malformed task-count record"),
                }
            }
            ConfigKey::SessionKey => match value.as_ref().and_then(parse_session_key) {
                Some(k) => {
                    self.state.session_key = Some(k);
                    if self.started {
                        updates.push(ConfigUpdate::SessionKeyUpdated);
                    }
                }
                None => tracing::error!("ignoring malformed session key record"),
            },
            ConfigKey::Restart(c) => {
                let Some(v) = value else { return updates };
                if !self.started {
                    // Requests replayed at startup were handled by whoever was running then.
                    return updates;
                }
                let req = parse_restart(&c, &v);
                let keep = match self.pending_restarts.get(&c) {
                    Some(old) => req.impact() >= old.impact(),
                    None => true,
                };
                if keep {
                    self.pending_restarts.insert(c, req.clone());
                }
                updates.push(ConfigUpdate::RestartRequested(req));
            }
            ConfigKey::LoggerCluster(ns) => {
                let level = value
                    .as_ref()
                    .and_then(|v| v.get(LOGGER_LEVEL_FIELD))
                    .and_then(Value::as_str);
                if let (true, Some(level)) = (self.started, level) {
                    updates.push(ConfigUpdate::LoggerLevelChanged {
                        namespace: ns,
                        level: level.to_owned(),
                    });
                }
            }
        }
        updates
    }

    fn on_connector(&mut self, c: String, value: Option<Value>, updates: &mut Vec<ConfigUpdate>) {
        match value {
            None => {
                let s = &mut self.state;
                s.connector_configs.remove(&c);
                s.connector_task_counts.remove(&c);
                s.task_configs.retain(|id, _| id.connector != c);
                s.applied_connector_configs.remove(&c);
                self.deferred.remove(&c);
                if self.started {
                    updates.push(ConfigUpdate::ConnectorConfigRemoved(c));
                }
            }
            Some(v) => {
                let Some(props) = parse_properties(&v) else {
                    tracing::error!(connector = %c, "found connector configuration in wrong format; ignoring it");
                    return;
                };
                self.state.connector_configs.insert(c.clone(), props);
                self.state
                    .connector_target_states
                    .entry(c.clone())
                    .or_insert(TargetState::Started);
                if self.started {
                    updates.push(ConfigUpdate::ConnectorConfigUpdated(c));
                }
            }
        }
    }

    fn on_target_state(
        &mut self,
        c: String,
        value: Option<Value>,
        updates: &mut Vec<ConfigUpdate>,
    ) {
        let s = &mut self.state;
        match value {
            None => {
                s.connector_target_states.remove(&c);
                if s.connector_configs.contains_key(&c) {
                    s.connector_target_states.insert(c, TargetState::Started);
                }
            }
            Some(v) => {
                let Some(state) = parse_target_state(&v) else {
                    tracing::error!(connector = %c, "invalid target state; ignoring it");
                    return;
                };
                let old = s.connector_target_states.insert(c.clone(), state);
                if self.started && old != Some(state) && s.connector_configs.contains_key(&c) {
                    updates.push(ConfigUpdate::TargetStateChanged(c));
                }
            }
        }
    }

    fn on_commit(&mut self, c: String, value: Option<Value>, updates: &mut Vec<ConfigUpdate>) {
        let Some(n) = value.as_ref().and_then(|v| int_field(v, TASKS_FIELD)) else {
            tracing::error!(connector = %c, "ignoring malformed task commit record");
            return;
        };
        let s = &mut self.state;
        let Some(connector_config) = s.connector_configs.get(&c).cloned() else {
            // Compaction can leave commits of deleted connectors behind.
            tracing::debug!(connector = %c, "ignoring task configuration commit for a connector that does not exist");
            self.deferred.remove(&c);
            return;
        };
        let deferred = self.deferred.get_mut(&c);
        let complete = (0..n).all(|t| deferred.as_ref().is_some_and(|d| d.contains_key(&t)));
        let mut applied = Vec::new();
        if complete {
            if let Some(d) = deferred.as_deref() {
                for (t, props) in d {
                    let id = ConnectorTaskId::new(c.clone(), *t);
                    s.task_configs.insert(id.clone(), props.clone());
                    applied.push(id);
                }
                let g = s
                    .connector_task_config_generations
                    .get(&c)
                    .map_or(0, |g| g + 1);
                s.connector_task_config_generations.insert(c.clone(), g);
            }
            s.inconsistent_connectors.remove(&c);
            s.applied_connector_configs
                .insert(c.clone(), connector_config);
        } else {
            tracing::error!(connector = %c, tasks = n, "task config commit does not cover every task; marking the connector inconsistent");
            s.inconsistent_connectors.insert(c.clone());
        }
        if let Some(d) = deferred {
            d.clear();
        }
        s.connector_task_counts.insert(c.clone(), n);
        s.connectors_pending_fencing.insert(c.clone());
        if self.started {
            updates.push(ConfigUpdate::TaskConfigsCommitted {
                connector: c,
                tasks: applied,
            });
        }
    }
}

#[cfg(test)]
#[path = "config_codec_tests.rs"]
mod tests;
