//! `StatusBackingStore`: connector, task and topic statuses on the status topic (Java
//! `KafkaStatusBackingStore`), with an in-memory cache fed by reading the topic.
//!
//! # Guarantees
//!
//! - Safe writes (`*_safe`, used for UNASSIGNED on shutdown and FAILED) are skipped when the
//!   cached status was written by a different worker with a higher generation, so a zombie worker
//!   cannot overwrite the status reported by the current owner.
//! - The reader ignores an UNASSIGNED task status that arrives after a RUNNING one of the same or
//!   a newer generation.
//! - DESTROYED is never written: it becomes a tombstone, as in Java.
//! - The cache reflects what was read, not what was written: call [`StatusBackingStore::refresh`]
//!   to observe one's own writes.
//!
//! # Errors
//!
//! Writes fail with [`StorageError::Kafka`] or [`StorageError::Timeout`] (30 s); malformed
//! records on the topic are logged and skipped.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::ClientConfig;
use serde_json::{Map, Value, json};

use super::json::to_java_json;
use super::local_log::LocalLog;
use super::log::{ConsumedRecord, InternalLog, KafkaBasedLog, LogConfig, RecordCallback};
use super::topics::{InternalTopic, TopicSettings, ensure_topic};
use super::types::{ConnectorState, ConnectorStatus, ConnectorTaskId, TaskStatus, TopicStatus};
use super::{StorageError, with_timeout};

pub const CONNECTOR_STATUS_PREFIX: &str = "status-connector-";
pub const TASK_STATUS_PREFIX: &str = "status-task-";
pub const TOPIC_STATUS_PREFIX: &str = "status-topic-";
pub const TOPIC_STATUS_SEPARATOR: &str = ":connector-";

pub const STATE_KEY_NAME: &str = "state";
pub const TRACE_KEY_NAME: &str = "trace";
pub const WORKER_ID_KEY_NAME: &str = "worker_id";
pub const GENERATION_KEY_NAME: &str = "generation";
pub const VERSION_KEY_NAME: &str = "version";
pub const TOPIC_STATE_KEY: &str = "topic";
pub const TOPIC_NAME_KEY: &str = "name";
pub const TOPIC_CONNECTOR_KEY: &str = "connector";
pub const TOPIC_TASK_KEY: &str = "task";
pub const TOPIC_DISCOVER_TIMESTAMP_KEY: &str = "discoverTimestamp";

const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

pub fn connector_status_key(connector: &str) -> String {
    format!("{CONNECTOR_STATUS_PREFIX}{connector}")
}
pub fn task_status_key(id: &ConnectorTaskId) -> String {
    format!("{TASK_STATUS_PREFIX}{}-{}", id.connector, id.task)
}
pub fn topic_status_key(topic: &str, connector: &str) -> String {
    format!("{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}")
}

/// `{"state":..,"trace":..|null,"worker_id":..,"generation":..,"version":..|null}`, as Connect
/// 4.4 writes it (older workers write no `version`); `None` (tombstone) for DESTROYED.
pub fn status_value(
    state: ConnectorState,
    trace: Option<&str>,
    worker_id: &str,
    generation: i32,
    version: Option<&str>,
) -> Option<Vec<u8>> {
    if state == ConnectorState::Destroyed {
        return None;
    }
    Some(to_java_json(&json!({
        STATE_KEY_NAME: state.as_str(),
        TRACE_KEY_NAME: trace,
        WORKER_ID_KEY_NAME: worker_id,
        GENERATION_KEY_NAME: generation,
        VERSION_KEY_NAME: version,
    })))
}

/// `{"topic":{"name":..,"connector":..,"task":..,"discoverTimestamp":..}}`.
pub fn topic_status_value(t: &TopicStatus) -> Vec<u8> {
    to_java_json(&json!({
        TOPIC_STATE_KEY: {
            TOPIC_NAME_KEY: t.topic,
            TOPIC_CONNECTOR_KEY: t.connector,
            TOPIC_TASK_KEY: t.task,
            TOPIC_DISCOVER_TIMESTAMP_KEY: t.discover_timestamp,
        }
    }))
}

/// A status topic key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusKey {
    Connector(String),
    Task(ConnectorTaskId),
    Topic { topic: String, connector: String },
}

impl StatusKey {
    pub fn parse(key: &str) -> Option<Self> {
        if let Some(c) = key.strip_prefix(CONNECTOR_STATUS_PREFIX) {
            Some(StatusKey::Connector(c.to_owned()))
        } else if let Some(rest) = key.strip_prefix(TASK_STATUS_PREFIX) {
            let (c, n) = rest.rsplit_once('-')?;
            Some(StatusKey::Task(ConnectorTaskId::new(c, n.parse().ok()?)))
        } else if let Some(rest) = key.strip_prefix(TOPIC_STATUS_PREFIX) {
            let (topic, after) = rest.split_once(':')?;
            let connector = after.strip_prefix("connector-")?;
            Some(StatusKey::Topic {
                topic: topic.to_owned(),
                connector: connector.to_owned(),
            })
        } else {
            None
        }
    }
}

/// The common fields of a connector/task status value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusFields {
    pub state: ConnectorState,
    pub trace: Option<String>,
    pub worker_id: String,
    pub generation: i32,
    pub version: Option<String>,
}

pub fn parse_status_value(bytes: &[u8]) -> Option<StatusFields> {
    let v: Map<String, Value> = serde_json::from_slice(bytes).ok()?;
    Some(StatusFields {
        state: ConnectorState::parse(v.get(STATE_KEY_NAME)?.as_str()?)?,
        trace: v
            .get(TRACE_KEY_NAME)
            .and_then(Value::as_str)
            .map(str::to_owned),
        worker_id: v.get(WORKER_ID_KEY_NAME)?.as_str()?.to_owned(),
        generation: i32::try_from(v.get(GENERATION_KEY_NAME)?.as_i64()?).ok()?,
        version: v
            .get(VERSION_KEY_NAME)
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

pub fn parse_topic_status_value(bytes: &[u8]) -> Option<TopicStatus> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let t = v.get(TOPIC_STATE_KEY)?;
    Some(TopicStatus {
        topic: t.get(TOPIC_NAME_KEY)?.as_str()?.to_owned(),
        connector: t.get(TOPIC_CONNECTOR_KEY)?.as_str()?.to_owned(),
        task: i32::try_from(t.get(TOPIC_TASK_KEY)?.as_i64()?).ok()?,
        discover_timestamp: t.get(TOPIC_DISCOVER_TIMESTAMP_KEY)?.as_i64()?,
    })
}

/// The safe-write rule: may `writer`/`generation` overwrite `cached`?
pub fn can_write_safely(cached: Option<(&str, i32)>, worker_id: &str, generation: i32) -> bool {
    match cached {
        None => true,
        Some((w, g)) => w == worker_id || g <= generation,
    }
}

/// The in-memory view of the status topic. Pure, so the read rules are unit-tested.
#[derive(Debug, Default, Clone)]
pub struct StatusCache {
    connectors: HashMap<String, ConnectorStatus>,
    tasks: HashMap<String, BTreeMap<i32, TaskStatus>>,
    topics: HashMap<String, BTreeMap<String, TopicStatus>>,
}

impl StatusCache {
    /// Applies one record read from the topic.
    pub fn apply(&mut self, key: &[u8], value: Option<&[u8]>) {
        let Some(key) = std::str::from_utf8(key).ok().and_then(StatusKey::parse) else {
            tracing::warn!("discarding status record with an unrecognized key");
            return;
        };
        match key {
            StatusKey::Connector(c) => match value.map(parse_status_value) {
                None => {
                    self.connectors.remove(&c);
                }
                Some(None) => tracing::error!(connector = %c, "failed to parse connector status"),
                Some(Some(f)) if f.state == ConnectorState::Destroyed => {
                    self.connectors.remove(&c);
                }
                Some(Some(f)) => {
                    self.connectors.insert(
                        c.clone(),
                        ConnectorStatus {
                            connector: c,
                            state: f.state,
                            trace: f.trace,
                            worker_id: f.worker_id,
                            generation: f.generation,
                            version: f.version,
                        },
                    );
                }
            },
            StatusKey::Task(id) => match value.map(parse_status_value) {
                None => self.remove_task(&id),
                Some(None) => tracing::error!(task = %id, "failed to parse task status"),
                Some(Some(f)) if f.state == ConnectorState::Destroyed => self.remove_task(&id),
                Some(Some(f)) => {
                    let tasks = self.tasks.entry(id.connector.clone()).or_default();
                    if let Some(cur) = tasks.get(&id.task)
                        && f.state == ConnectorState::Unassigned
                        && cur.state == ConnectorState::Running
                        && cur.generation >= f.generation
                    {
                        // A late UNASSIGNED from the previous owner must not hide the new owner.
                        tracing::trace!(task = %id, "ignoring stale UNASSIGNED task status");
                        return;
                    }
                    tasks.insert(
                        id.task,
                        TaskStatus {
                            id: id.clone(),
                            state: f.state,
                            trace: f.trace,
                            worker_id: f.worker_id,
                            generation: f.generation,
                            version: f.version,
                        },
                    );
                }
            },
            StatusKey::Topic { topic, connector } => match value {
                None => {
                    if let Some(m) = self.topics.get_mut(&connector) {
                        m.remove(&topic);
                        if m.is_empty() {
                            self.topics.remove(&connector);
                        }
                    }
                }
                Some(v) => match parse_topic_status_value(v) {
                    Some(t) => {
                        self.topics.entry(connector).or_default().insert(topic, t);
                    }
                    None => {
                        tracing::error!(topic = %topic, connector = %connector, "failed to parse topic status")
                    }
                },
            },
        }
    }

    fn remove_task(&mut self, id: &ConnectorTaskId) {
        if let Some(m) = self.tasks.get_mut(&id.connector) {
            m.remove(&id.task);
            if m.is_empty() {
                self.tasks.remove(&id.connector);
            }
        }
    }

    pub fn connector_status(&self, connector: &str) -> Option<ConnectorStatus> {
        self.connectors.get(connector).cloned()
    }
    pub fn task_status(&self, id: &ConnectorTaskId) -> Option<TaskStatus> {
        self.tasks.get(&id.connector)?.get(&id.task).cloned()
    }
    pub fn tasks_for(&self, connector: &str) -> Vec<TaskStatus> {
        self.tasks
            .get(connector)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
    pub fn topics_for(&self, connector: &str) -> Vec<TopicStatus> {
        self.topics
            .get(connector)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }
    pub fn connectors(&self) -> Vec<String> {
        let mut v: Vec<String> = self.connectors.keys().cloned().collect();
        v.sort();
        v
    }
}

/// What the status store needs.
#[derive(Clone)]
pub struct StatusStoreSettings {
    pub topic: TopicSettings,
    pub client: ClientConfig,
    /// Connect uses `<group.id>-statuses`.
    pub client_id: String,
}

/// The store's cache and the log callback that feeds it.
fn status_cache() -> (Arc<Mutex<StatusCache>>, RecordCallback) {
    let cache: Arc<Mutex<StatusCache>> = Arc::default();
    let cb = cache.clone();
    let on_record: RecordCallback = Box::new(move |r: &ConsumedRecord| {
        if let Some(k) = &r.key {
            cb.lock()
                .expect("status cache lock")
                .apply(k, r.value.as_deref());
        }
    });
    (cache, on_record)
}

/// The status store; see the module docs.
pub struct StatusBackingStore {
    log: InternalLog,
    cache: Arc<Mutex<StatusCache>>,
}

impl std::fmt::Debug for StatusBackingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusBackingStore")
            .field("topic", &self.log.topic())
            .finish_non_exhaustive()
    }
}

impl StatusBackingStore {
    /// Creates/validates the topic and reads it to the end.
    pub async fn start(settings: StatusStoreSettings) -> Result<Self, StorageError> {
        ensure_topic(&settings.client, InternalTopic::Status, &settings.topic).await?;
        let (cache, on_record) = status_cache();
        let log = KafkaBasedLog::start(
            LogConfig {
                topic: settings.topic.name.clone(),
                client: settings.client.clone(),
                client_id: settings.client_id.clone(),
                read_committed: false,
            },
            on_record,
        )
        .await?;
        Ok(Self {
            log: InternalLog::Kafka(log),
            cache,
        })
    }

    /// The standalone worker's store, in memory (Apache's `MemoryStatusBackingStore`).
    pub fn in_memory() -> Self {
        let (cache, on_record) = status_cache();
        Self {
            log: InternalLog::Local(LocalLog::in_memory("status", on_record)),
            cache,
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, StatusCache> {
        self.cache.lock().expect("status cache lock")
    }

    /// Reads the topic to the end within `timeout`.
    pub async fn refresh(&self, timeout: Duration) -> Result<(), StorageError> {
        with_timeout(
            timeout,
            "reading to the end of the status topic",
            self.log.read_to_end(),
        )
        .await
    }

    async fn send(&self, key: String, value: Option<Vec<u8>>) -> Result<(), StorageError> {
        with_timeout(
            WRITE_TIMEOUT,
            &format!("writing status record {key}"),
            self.log.send(key.as_bytes(), value.as_deref()),
        )
        .await
        .map(|_| ())
    }

    /// Writes a connector status (DESTROYED = tombstone).
    pub async fn put_connector_status(&self, s: &ConnectorStatus) -> Result<(), StorageError> {
        let value = status_value(
            s.state,
            s.trace.as_deref(),
            &s.worker_id,
            s.generation,
            s.version.as_deref(),
        );
        self.send(connector_status_key(&s.connector), value).await
    }

    /// Writes unless a different worker wrote a newer generation; returns whether it wrote.
    pub async fn put_connector_status_safe(
        &self,
        s: &ConnectorStatus,
    ) -> Result<bool, StorageError> {
        let ok = {
            let c = self.cache();
            let cur = c.connectors.get(&s.connector);
            can_write_safely(
                cur.map(|x| (x.worker_id.as_str(), x.generation)),
                &s.worker_id,
                s.generation,
            )
        };
        if !ok {
            tracing::debug!(connector = %s.connector, "not overwriting a newer connector status from another worker");
            return Ok(false);
        }
        self.put_connector_status(s).await.map(|()| true)
    }

    /// Writes a task status (DESTROYED = tombstone).
    pub async fn put_task_status(&self, s: &TaskStatus) -> Result<(), StorageError> {
        let value = status_value(
            s.state,
            s.trace.as_deref(),
            &s.worker_id,
            s.generation,
            s.version.as_deref(),
        );
        self.send(task_status_key(&s.id), value).await
    }

    /// Writes unless a different worker wrote a newer generation; returns whether it wrote.
    pub async fn put_task_status_safe(&self, s: &TaskStatus) -> Result<bool, StorageError> {
        let ok = {
            let c = self.cache();
            let cur = c.tasks.get(&s.id.connector).and_then(|m| m.get(&s.id.task));
            can_write_safely(
                cur.map(|x| (x.worker_id.as_str(), x.generation)),
                &s.worker_id,
                s.generation,
            )
        };
        if !ok {
            tracing::debug!(task = %s.id, "not overwriting a newer task status from another worker");
            return Ok(false);
        }
        self.put_task_status(s).await.map(|()| true)
    }

    /// Records that a connector's task used a topic; a no-op if already recorded.
    pub async fn put_topic(&self, t: &TopicStatus) -> Result<(), StorageError> {
        let known = self
            .cache()
            .topics
            .get(&t.connector)
            .is_some_and(|m| m.contains_key(&t.topic));
        if known {
            return Ok(());
        }
        self.send(
            topic_status_key(&t.topic, &t.connector),
            Some(topic_status_value(t)),
        )
        .await
    }

    /// Tombstones one topic record of a connector.
    pub async fn delete_topic(&self, connector: &str, topic: &str) -> Result<(), StorageError> {
        self.send(topic_status_key(topic, connector), None).await
    }

    /// Tombstones every topic record of a connector (`PUT .../topics/reset`).
    pub async fn reset_topics(&self, connector: &str) -> Result<(), StorageError> {
        for t in self.topics_for(connector) {
            self.delete_topic(connector, &t.topic).await?;
        }
        Ok(())
    }

    /// Tombstones the connector's task statuses, its connector status and its topic records
    /// (connector deletion). `task_count` covers tasks the cache may not know yet.
    pub async fn delete_connector(
        &self,
        connector: &str,
        task_count: i32,
    ) -> Result<(), StorageError> {
        let mut tasks: Vec<i32> = self
            .tasks_for(connector)
            .iter()
            .map(|t| t.id.task)
            .collect();
        tasks.extend(0..task_count);
        tasks.sort_unstable();
        tasks.dedup();
        for t in tasks {
            self.send(task_status_key(&ConnectorTaskId::new(connector, t)), None)
                .await?;
        }
        self.send(connector_status_key(connector), None).await?;
        self.reset_topics(connector).await
    }

    pub fn connector_status(&self, connector: &str) -> Option<ConnectorStatus> {
        self.cache().connector_status(connector)
    }
    pub fn task_status(&self, id: &ConnectorTaskId) -> Option<TaskStatus> {
        self.cache().task_status(id)
    }
    pub fn tasks_for(&self, connector: &str) -> Vec<TaskStatus> {
        self.cache().tasks_for(connector)
    }
    pub fn topics_for(&self, connector: &str) -> Vec<TopicStatus> {
        self.cache().topics_for(connector)
    }
    pub fn connectors(&self) -> Vec<String> {
        self.cache().connectors()
    }

    pub async fn stop(&self) {
        self.log.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_match_connect() {
        assert_eq!(connector_status_key("fs"), "status-connector-fs");
        assert_eq!(
            task_status_key(&ConnectorTaskId::new("my-fs", 0)),
            "status-task-my-fs-0"
        );
        assert_eq!(topic_status_key("t", "fs"), "status-topic-t:connector-fs");
        assert_eq!(
            StatusKey::parse("status-task-my-fs-10"),
            Some(StatusKey::Task(ConnectorTaskId::new("my-fs", 10)))
        );
        assert_eq!(
            StatusKey::parse("status-topic-a.b:connector-x-y"),
            Some(StatusKey::Topic {
                topic: "a.b".into(),
                connector: "x-y".into()
            })
        );
        assert_eq!(StatusKey::parse("status-other"), None);
    }

    #[test]
    fn values_match_the_worked_example() {
        assert_eq!(
            status_value(ConnectorState::Paused, None, "10.0.0.5:8083", 3, Some("4.4.0")).unwrap(),
            br#"{"state":"PAUSED","trace":null,"worker_id":"10.0.0.5:8083","generation":3,"version":"4.4.0"}"#
        );
        assert_eq!(
            status_value(ConnectorState::Failed, Some("boom\n\tat x"), "w:1", 4, None).unwrap(),
            br#"{"state":"FAILED","trace":"boom\n\tat x","worker_id":"w:1","generation":4,"version":null}"#
        );
        assert_eq!(
            status_value(ConnectorState::Destroyed, None, "w", 1, None),
            None
        );
        assert_eq!(
            topic_status_value(&TopicStatus {
                topic: "t".into(),
                connector: "fs".into(),
                task: 0,
                discover_timestamp: 1700000000000
            }),
            br#"{"topic":{"name":"t","connector":"fs","task":0,"discoverTimestamp":1700000000000}}"#
        );
    }

    /// The records Apache Connect 4.4 wrote to its status topic (tests/golden/apache-4.4,
    /// captured by tests/apache/capture-golden.sh): we read them, versions included, and write
    /// the same fields as the same JSON.
    #[test]
    fn apache_status_records_round_trip() {
        let records: Vec<Value> = serde_json::from_str(include_str!(
            "../../../tests/golden/apache-4.4/status-topic-records.json"
        ))
        .unwrap();
        let mut cache = StatusCache::default();
        let mut with_version = 0;
        for r in &records {
            let key = r["key"].as_str().unwrap();
            let value = serde_json::to_vec(&r["value"]).unwrap();
            cache.apply(key.as_bytes(), Some(&value));
            if key.starts_with(TOPIC_STATUS_PREFIX) {
                continue;
            }
            let f = parse_status_value(&value).expect(key);
            with_version += usize::from(f.version.is_some());
            let ours = status_value(
                f.state,
                f.trace.as_deref(),
                &f.worker_id,
                f.generation,
                f.version.as_deref(),
            )
            .unwrap();
            assert_eq!(
                serde_json::from_slice::<Value>(&ours).unwrap(),
                r["value"],
                "{key}"
            );
        }
        assert!(with_version > 0, "the golden records carry versions");
        let c = cache.connector_status("golden-src").unwrap();
        assert_eq!(
            (c.state, c.version.as_deref()),
            (ConnectorState::Running, Some("4.4.0"))
        );
        let t = cache
            .task_status(&ConnectorTaskId::new("golden-src", 0))
            .unwrap();
        assert_eq!(t.version.as_deref(), Some("4.4.0"));
    }

    #[test]
    fn safe_write_rule() {
        assert!(can_write_safely(None, "a", 1));
        assert!(
            can_write_safely(Some(("a", 9)), "a", 1),
            "same worker always writes"
        );
        assert!(can_write_safely(Some(("b", 1)), "a", 1));
        assert!(
            !can_write_safely(Some(("b", 2)), "a", 1),
            "newer generation elsewhere wins"
        );
    }

    #[test]
    fn reader_ignores_stale_unassigned() {
        let mut c = StatusCache::default();
        let key = task_status_key(&ConnectorTaskId::new("c", 0));
        c.apply(
            key.as_bytes(),
            status_value(ConnectorState::Running, None, "b", 5, None).as_deref(),
        );
        c.apply(
            key.as_bytes(),
            status_value(ConnectorState::Unassigned, None, "a", 4, None).as_deref(),
        );
        assert_eq!(
            c.task_status(&ConnectorTaskId::new("c", 0)).unwrap().state,
            ConnectorState::Running
        );
        c.apply(
            key.as_bytes(),
            status_value(ConnectorState::Unassigned, None, "b", 6, None).as_deref(),
        );
        assert_eq!(
            c.task_status(&ConnectorTaskId::new("c", 0)).unwrap().state,
            ConnectorState::Unassigned
        );
        c.apply(key.as_bytes(), None);
        assert!(c.tasks_for("c").is_empty());
    }

    #[test]
    fn topics_cache_and_tombstones() {
        let mut c = StatusCache::default();
        let t = TopicStatus {
            topic: "t".into(),
            connector: "c".into(),
            task: 1,
            discover_timestamp: 7,
        };
        c.apply(
            topic_status_key("t", "c").as_bytes(),
            Some(&topic_status_value(&t)),
        );
        assert_eq!(c.topics_for("c"), vec![t]);
        c.apply(topic_status_key("t", "c").as_bytes(), None);
        assert!(c.topics_for("c").is_empty());
    }

    proptest! {
        #[test]
        fn status_round_trip(state in 0usize..6, trace in proptest::option::of("\\PC{0,30}"), w in "\\PC{1,20}", g in any::<i32>(), version in proptest::option::of("\\PC{1,10}")) {
            let st = [ConnectorState::Unassigned, ConnectorState::Running, ConnectorState::Paused,
                ConnectorState::Stopped, ConnectorState::Failed, ConnectorState::Restarting][state];
            let v = status_value(st, trace.as_deref(), &w, g, version.as_deref()).unwrap();
            let f = parse_status_value(&v).unwrap();
            prop_assert_eq!(f, StatusFields { state: st, trace, worker_id: w, generation: g, version });
        }

        #[test]
        fn task_keys_round_trip(c in "[a-z][a-z0-9\\-]{0,10}", t in 0i32..1000) {
            let id = ConnectorTaskId::new(c, t);
            prop_assert_eq!(StatusKey::parse(&task_status_key(&id)), Some(StatusKey::Task(id)));
        }
    }
}
