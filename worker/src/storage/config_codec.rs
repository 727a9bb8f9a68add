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
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> ConfigMap {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn s(b: Vec<u8>) -> String {
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn keys_match_connect() {
        assert_eq!(connector_key("fs"), "connector-fs");
        assert_eq!(target_state_key("fs"), "target-state-fs");
        assert_eq!(
            task_key(&ConnectorTaskId::new("my-conn", 3)),
            "task-my-conn-3"
        );
        assert_eq!(commit_tasks_key("fs"), "commit-fs");
        assert_eq!(restart_key("fs"), "restart-connector-fs");
        assert_eq!(task_count_record_key("fs"), "tasks-fencing-fs");
        assert_eq!(logger_cluster_key("org.a"), "logger-cluster-org.a");
    }

    #[test]
    fn key_parsing_follows_java_prefix_order() {
        assert_eq!(
            ConfigKey::parse("target-state-a"),
            Some(ConfigKey::TargetState("a".into()))
        );
        assert_eq!(
            ConfigKey::parse("connector-a-b"),
            Some(ConfigKey::Connector("a-b".into()))
        );
        assert_eq!(
            ConfigKey::parse("task-a-b-12"),
            Some(ConfigKey::Task(ConnectorTaskId::new("a-b", 12)))
        );
        assert_eq!(ConfigKey::parse("task-a-x"), None);
        assert_eq!(
            ConfigKey::parse("commit-a"),
            Some(ConfigKey::Commit("a".into()))
        );
        assert_eq!(
            ConfigKey::parse("restart-connector-a"),
            Some(ConfigKey::Restart("a".into()))
        );
        assert_eq!(
            ConfigKey::parse("tasks-fencing-a"),
            Some(ConfigKey::TaskCountRecord("a".into()))
        );
        assert_eq!(ConfigKey::parse("session-key"), Some(ConfigKey::SessionKey));
        assert_eq!(
            ConfigKey::parse("logger-cluster-org"),
            Some(ConfigKey::LoggerCluster("org".into()))
        );
        assert_eq!(ConfigKey::parse("bogus"), None);
    }

    #[test]
    fn values_match_the_worked_example() {
        assert_eq!(
            s(target_state_value(TargetState::Paused)),
            r#"{"state":"PAUSED","state.v2":"PAUSED"}"#
        );
        assert_eq!(
            s(target_state_value(TargetState::Started)),
            r#"{"state":"STARTED","state.v2":"STARTED"}"#
        );
        assert_eq!(
            s(target_state_value(TargetState::Stopped)),
            r#"{"state":"PAUSED","state.v2":"STOPPED"}"#
        );
        assert_eq!(s(commit_tasks_value(1)), r#"{"tasks":1}"#);
        assert_eq!(s(task_count_record_value(1)), r#"{"task-count":1}"#);
        assert_eq!(
            s(connector_config_value(&props(&[
                ("file", "a.txt"),
                ("name", "fs")
            ]))),
            r#"{"properties":{"file":"a.txt","name":"fs"}}"#
        );
        assert_eq!(
            s(restart_value(&RestartRequest {
                connector: "fs".into(),
                include_tasks: true,
                only_failed: false
            })),
            r#"{"include-tasks":true,"only-failed":false}"#
        );
        assert_eq!(
            s(session_key_value(&SessionKey {
                key: vec![1, 2, 3],
                algorithm: "HmacSHA256".into(),
                creation_timestamp: 1700000000000
            })),
            r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":1700000000000}"#
        );
        assert_eq!(s(logger_level_value("DEBUG")), r#"{"level":"DEBUG"}"#);
    }

    #[test]
    fn target_state_reader_prefers_v2_string() {
        let v: Value = serde_json::from_str(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#).unwrap();
        assert_eq!(parse_target_state(&v), Some(TargetState::Stopped));
        let v: Value = serde_json::from_str(r#"{"state":"PAUSED","state.v2":null}"#).unwrap();
        assert_eq!(parse_target_state(&v), Some(TargetState::Paused));
        let v: Value = serde_json::from_str(r#"{"state":"STARTED"}"#).unwrap();
        assert_eq!(parse_target_state(&v), Some(TargetState::Started));
    }

    struct Feed {
        m: ConfigStateMachine,
        offset: i64,
    }

    impl Feed {
        fn new() -> Self {
            Self {
                m: ConfigStateMachine::new(),
                offset: 0,
            }
        }
        fn put(&mut self, key: &str, value: Option<&str>) -> Vec<ConfigUpdate> {
            let u = self
                .m
                .apply(self.offset, Some(key.as_bytes()), value.map(str::as_bytes));
            self.offset += 1;
            u
        }
    }

    #[test]
    fn worked_example_folds_into_the_expected_state() {
        let mut f = Feed::new();
        f.put(
            "target-state-fs",
            Some(r#"{"state":"PAUSED","state.v2":"PAUSED"}"#),
        );
        f.put("connector-fs", Some(r#"{"properties":{"connector.class":"FileStreamSource","file":"a.txt","topic":"t","tasks.max":"1","name":"fs"}}"#));
        assert_eq!(f.m.state().target_state("fs"), Some(TargetState::Paused));
        f.m.set_started();
        assert_eq!(
            f.put(
                "target-state-fs",
                Some(r#"{"state":"STARTED","state.v2":"STARTED"}"#)
            ),
            vec![ConfigUpdate::TargetStateChanged("fs".into())]
        );
        f.put("task-fs-0", Some(r#"{"properties":{"task.class":"X"}}"#));
        assert!(
            f.m.state().tasks("fs").is_empty(),
            "uncommitted task is invisible"
        );
        let u = f.put("commit-fs", Some(r#"{"tasks":1}"#));
        assert_eq!(
            u,
            vec![ConfigUpdate::TaskConfigsCommitted {
                connector: "fs".into(),
                tasks: vec![ConnectorTaskId::new("fs", 0)]
            }]
        );
        let st = f.m.state();
        assert_eq!(st.tasks("fs"), vec![ConnectorTaskId::new("fs", 0)]);
        assert_eq!(st.task_config_generation("fs"), Some(0));
        assert!(st.pending_fencing("fs"));
        f.put("tasks-fencing-fs", Some(r#"{"task-count":1}"#));
        assert!(!f.m.state().pending_fencing("fs"));
        assert_eq!(f.m.state().task_count_record("fs"), Some(1));
        assert_eq!(
            f.put("connector-fs", None),
            vec![ConfigUpdate::ConnectorConfigRemoved("fs".into())]
        );
        f.put("target-state-fs", None);
        let st = f.m.state();
        assert!(!st.contains("fs"));
        assert!(st.target_state("fs").is_none());
        assert!(st.task_configs.is_empty());
        assert_eq!(st.offset, 8);
    }

    #[test]
    fn incomplete_commit_marks_inconsistent_until_complete() {
        let mut f = Feed::new();
        f.put("connector-c", Some(r#"{"properties":{}}"#));
        f.put("task-c-0", Some(r#"{"properties":{"a":"1"}}"#));
        f.put("commit-c", Some(r#"{"tasks":2}"#));
        assert!(f.m.state().is_inconsistent("c"));
        assert!(f.m.state().tasks("c").is_empty());
        assert_eq!(f.m.state().task_count("c"), 2);
        f.put("task-c-0", Some(r#"{"properties":{"a":"1"}}"#));
        f.put("task-c-1", Some(r#"{"properties":{"a":"2"}}"#));
        f.put("commit-c", Some(r#"{"tasks":2}"#));
        let st = f.m.state();
        assert!(!st.is_inconsistent("c"));
        assert_eq!(st.tasks("c").len(), 2);
        assert_eq!(st.task_config_generation("c"), Some(0));
    }

    #[test]
    fn commit_for_unknown_connector_is_ignored() {
        let mut f = Feed::new();
        f.put("task-gone-0", Some(r#"{"properties":{}}"#));
        f.put("commit-gone", Some(r#"{"tasks":1}"#));
        assert!(f.m.state().tasks("gone").is_empty());
        assert_eq!(f.m.state().task_count("gone"), 0);
    }

    #[test]
    fn restarts_are_ignored_during_replay_and_highest_impact_wins() {
        let mut f = Feed::new();
        f.put(
            "restart-connector-a",
            Some(r#"{"include-tasks":true,"only-failed":false}"#),
        );
        assert!(f.m.take_restart_requests().is_empty());
        f.m.set_started();
        f.put(
            "restart-connector-a",
            Some(r#"{"include-tasks":true,"only-failed":false}"#),
        );
        f.put(
            "restart-connector-a",
            Some(r#"{"include-tasks":false,"only-failed":true}"#),
        );
        assert_eq!(
            f.m.take_restart_requests(),
            vec![RestartRequest {
                connector: "a".into(),
                include_tasks: true,
                only_failed: false
            }]
        );
    }

    #[test]
    fn target_state_before_config_does_not_notify() {
        let mut f = Feed::new();
        f.m.set_started();
        assert!(
            f.put(
                "target-state-x",
                Some(r#"{"state":"PAUSED","state.v2":"PAUSED"}"#)
            )
            .is_empty()
        );
        assert_eq!(
            f.put("connector-x", Some(r#"{"properties":{}}"#)),
            vec![ConfigUpdate::ConnectorConfigUpdated("x".into())]
        );
        assert_eq!(f.m.state().target_state("x"), Some(TargetState::Paused));
    }

    #[test]
    fn session_key_round_trips() {
        let k = SessionKey {
            key: vec![9; 32],
            algorithm: "HmacSHA256".into(),
            creation_timestamp: 5,
        };
        let v: Value = serde_json::from_slice(&session_key_value(&k)).unwrap();
        assert_eq!(parse_session_key(&v), Some(k));
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn properties_round_trip(m in proptest::collection::btree_map("[a-z.\\-\"\\\\\u{0}-\u{1f}é]{0,8}", "\\PC{0,12}", 0..6)) {
                let v: Value = serde_json::from_slice(&connector_config_value(&m)).unwrap();
                prop_assert_eq!(parse_properties(&v), Some(m));
            }

            #[test]
            fn task_keys_round_trip(c in "[a-z][a-z0-9\\-]{0,10}", t in 0i32..10_000) {
                let id = ConnectorTaskId::new(c, t);
                prop_assert_eq!(ConfigKey::parse(&task_key(&id)), Some(ConfigKey::Task(id)));
            }

            #[test]
            fn target_states_round_trip(i in 0usize..3) {
                let st = [TargetState::Started, TargetState::Paused, TargetState::Stopped][i];
                let v: Value = serde_json::from_slice(&target_state_value(st)).unwrap();
                prop_assert_eq!(parse_target_state(&v), Some(st));
            }
        }
    }
}
