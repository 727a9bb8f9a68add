//! The storage layer against a real Kafka: stores written by one instance are read identically by
//! a fresh one, records written raw in Java Connect's format are understood, offsets keys are
//! byte-exact, read_committed hides aborted offsets, and the status safe-write rule holds.

use std::sync::Arc;
use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_worker::storage::config::ConfigStoreSettings;
use connect_worker::storage::offsets::{OffsetMap, OffsetStoreSettings, PartitionMap};
use connect_worker::storage::status::StatusStoreSettings;
use connect_worker::storage::topics::{InternalTopic, TopicSettings, ensure_topic};
use connect_worker::storage::{
    ConfigBackingStore, ConfigUpdate, ConnectorOffsetBackingStore, ConnectorState, ConnectorStatus,
    ConnectorTaskId, OffsetBackingStore, RestartRequest, SessionKey, StatusBackingStore,
    StorageError, TargetState, TaskStatus, TopicStatus,
};
use rdkafka::ClientConfig;
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

fn client() -> ClientConfig {
    kafka::client_config()
}

fn config_settings(topic: &str) -> ConfigStoreSettings {
    ConfigStoreSettings {
        topic: TopicSettings::new(topic, 1, 1),
        client: client(),
        group_id: unique("group"),
        read_committed: false,
        transactional_writes: false,
        security: Default::default(),
    }
}

fn offset_settings(topic: &str, read_committed: bool) -> OffsetStoreSettings {
    OffsetStoreSettings {
        topic: TopicSettings::new(topic, 5, 1),
        client: client(),
        client_id: unique("offsets"),
        read_committed,
    }
}

fn props(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn map(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn raw_producer() -> ThreadedProducer<DefaultProducerContext> {
    kafka::client_config()
        .set("acks", "all")
        .create()
        .expect("producer config is valid")
}

fn send_raw(
    p: &ThreadedProducer<DefaultProducerContext>,
    topic: &str,
    key: &str,
    value: Option<&str>,
) {
    let mut rec: BaseRecord<'_, str, str> = BaseRecord::to(topic).key(key);
    if let Some(v) = value {
        rec = rec.payload(v);
    }
    p.send(rec).map_err(|(e, _)| e).expect("enqueue");
}

#[tokio::test]
async fn config_store_writes_are_read_by_a_fresh_store() {
    let topic = unique("connect-configs");
    let a = ConfigBackingStore::start(config_settings(&topic))
        .await
        .expect("start a");
    let mut updates = a.subscribe();

    let cfg = props(&[
        ("connector.class", "FileStreamSource"),
        ("name", "fs"),
        ("tasks.max", "2"),
    ]);
    a.put_connector_config("fs", &cfg, Some(TargetState::Paused))
        .await
        .expect("put config");
    let snap = a.snapshot();
    assert_eq!(snap.connector_config("fs"), Some(&cfg));
    assert_eq!(snap.target_state("fs"), Some(TargetState::Paused));
    assert_eq!(
        updates.recv().await.unwrap(),
        ConfigUpdate::ConnectorConfigUpdated("fs".into())
    );

    let tasks = vec![
        props(&[("task.class", "T"), ("n", "0")]),
        props(&[("task.class", "T"), ("n", "1")]),
    ];
    a.put_task_configs("fs", &tasks).await.expect("put tasks");
    a.put_target_state("fs", TargetState::Stopped)
        .await
        .expect("target state");
    a.put_task_count_record("fs", 2)
        .await
        .expect("task count record");
    a.put_session_key(&SessionKey {
        key: vec![7; 32],
        algorithm: "HmacSHA256".into(),
        creation_timestamp: 1_700_000_000_000,
    })
    .await
    .expect("session key");
    a.put_connector_config("gone", &props(&[("name", "gone")]), None)
        .await
        .unwrap();
    a.remove_connector_config("gone").await.unwrap();
    a.refresh(TIMEOUT).await.expect("refresh");

    let snap = a.snapshot();
    assert_eq!(
        snap.tasks("fs"),
        vec![ConnectorTaskId::new("fs", 0), ConnectorTaskId::new("fs", 1)]
    );
    assert_eq!(
        snap.task_config(&ConnectorTaskId::new("fs", 1)),
        Some(&tasks[1])
    );
    assert_eq!(snap.target_state("fs"), Some(TargetState::Stopped));
    assert_eq!(snap.task_count_record("fs"), Some(2));
    assert!(!snap.pending_fencing("fs"));
    assert_eq!(snap.task_config_generation("fs"), Some(0));
    assert!(!snap.contains("gone"));

    let b = ConfigBackingStore::start(config_settings(&topic))
        .await
        .expect("start b");
    assert_eq!(*b.snapshot(), *snap, "a fresh store reads the same view");

    // The raw bytes are Connect's.
    let records = kafka::read_until(&[&topic], Isolation::ReadUncommitted, TIMEOUT, |r| {
        r.len() >= 11
    });
    let kv: Vec<(String, Option<String>)> = records
        .iter()
        .map(|r| (r.key.clone().unwrap(), r.value.clone()))
        .collect();
    assert_eq!(
        kv[0],
        (
            "target-state-fs".into(),
            Some(r#"{"state":"PAUSED","state.v2":"PAUSED"}"#.into())
        )
    );
    assert_eq!(
        kv[1],
        (
            "connector-fs".into(),
            Some(r#"{"properties":{"connector.class":"FileStreamSource","name":"fs","tasks.max":"2"}}"#.into())
        )
    );
    assert_eq!(kv[2].0, "task-fs-0");
    assert_eq!(kv[4], ("commit-fs".into(), Some(r#"{"tasks":2}"#.into())));
    assert_eq!(
        kv[5],
        (
            "target-state-fs".into(),
            Some(r#"{"state":"PAUSED","state.v2":"STOPPED"}"#.into())
        )
    );
    assert_eq!(
        kv[6],
        (
            "tasks-fencing-fs".into(),
            Some(r#"{"task-count":2}"#.into())
        )
    );
    assert_eq!(kv[9], ("connector-gone".into(), None));
    assert_eq!(kv[10], ("target-state-gone".into(), None));
}

#[tokio::test]
async fn records_written_by_java_connect_are_understood() {
    let topic = unique("connect-configs");
    ensure_topic(
        &client(),
        InternalTopic::Config,
        &TopicSettings::new(&topic, 1, 1),
    )
    .await
    .expect("create topic");
    let p = raw_producer();
    send_raw(
        &p,
        &topic,
        "target-state-fs",
        Some(r#"{"state":"PAUSED","state.v2":"PAUSED"}"#),
    );
    send_raw(
        &p,
        &topic,
        "connector-fs",
        Some(
            r#"{"properties":{"connector.class":"FileStreamSource","file":"a.txt","topic":"t","tasks.max":"1","name":"fs"}}"#,
        ),
    );
    send_raw(
        &p,
        &topic,
        "target-state-fs",
        Some(r#"{"state":"STARTED","state.v2":"STARTED"}"#),
    );
    send_raw(
        &p,
        &topic,
        "task-fs-0",
        Some(
            r#"{"properties":{"task.class":"org.apache.kafka.connect.file.FileStreamSourceTask","file":"a.txt"}}"#,
        ),
    );
    send_raw(&p, &topic, "commit-fs", Some(r#"{"tasks":1}"#));
    send_raw(&p, &topic, "tasks-fencing-fs", Some(r#"{"task-count":1}"#));
    // A new task batch whose commit never arrived (leader died): must not appear.
    send_raw(
        &p,
        &topic,
        "task-fs-0",
        Some(r#"{"properties":{"task.class":"NEW"}}"#),
    );
    send_raw(
        &p,
        &topic,
        "task-fs-1",
        Some(r#"{"properties":{"task.class":"NEW"}}"#),
    );
    // A connector whose only task batch is uncommitted.
    send_raw(
        &p,
        &topic,
        "connector-other",
        Some(r#"{"properties":{"name":"other"}}"#),
    );
    send_raw(
        &p,
        &topic,
        "task-other-0",
        Some(r#"{"properties":{"task.class":"X"}}"#),
    );
    send_raw(
        &p,
        &topic,
        "session-key",
        Some(r#"{"key":"AQID","algorithm":"HmacSHA256","creation-timestamp":1700000000000}"#),
    );
    send_raw(&p, &topic, "something-unknown", Some("{}"));
    p.flush(TIMEOUT).expect("flush");

    let store = ConfigBackingStore::start(config_settings(&topic))
        .await
        .expect("start");
    let snap = store.snapshot();
    assert_eq!(snap.offset, 12);
    assert_eq!(snap.target_state("fs"), Some(TargetState::Started));
    assert_eq!(snap.connector_config("fs").unwrap()["file"], "a.txt");
    assert_eq!(snap.tasks("fs"), vec![ConnectorTaskId::new("fs", 0)]);
    assert_eq!(
        snap.task_config(&ConnectorTaskId::new("fs", 0)).unwrap()["task.class"],
        "org.apache.kafka.connect.file.FileStreamSourceTask",
        "the uncommitted batch is invisible"
    );
    assert!(snap.task_config(&ConnectorTaskId::new("fs", 1)).is_none());
    assert_eq!(snap.task_count_record("fs"), Some(1));
    assert!(!snap.pending_fencing("fs"));
    assert!(snap.contains("other"));
    assert!(snap.tasks("other").is_empty());
    assert_eq!(snap.session_key.as_ref().unwrap().key, vec![1, 2, 3]);
    assert_eq!(snap.target_state("other"), Some(TargetState::Started));

    // Records arriving after startup notify; restart requests are queued.
    let mut updates = store.subscribe();
    send_raw(&p, &topic, "commit-fs", Some(r#"{"tasks":2}"#));
    send_raw(
        &p,
        &topic,
        "restart-connector-fs",
        Some(r#"{"include-tasks":true,"only-failed":true}"#),
    );
    p.flush(TIMEOUT).expect("flush");
    store.refresh(TIMEOUT).await.expect("refresh");
    let snap = store.snapshot();
    assert_eq!(
        snap.tasks("fs").len(),
        2,
        "the buffered batch completes with the late commit"
    );
    assert_eq!(snap.task_config_generation("fs"), Some(1));
    assert!(snap.pending_fencing("fs"));
    assert!(matches!(
        updates.recv().await.unwrap(),
        ConfigUpdate::TaskConfigsCommitted { .. }
    ));
    assert_eq!(
        store.take_restart_requests(),
        vec![RestartRequest {
            connector: "fs".into(),
            include_tasks: true,
            only_failed: true
        }]
    );
}

#[tokio::test]
async fn transactional_config_writer_fences_the_old_leader() {
    let topic = unique("connect-configs");
    let group = unique("group");
    let mut settings = config_settings(&topic);
    settings.group_id = group.clone();
    settings.transactional_writes = true;
    settings.read_committed = true;
    let old = ConfigBackingStore::start(settings.clone())
        .await
        .expect("start old");
    old.claim_write_privileges().await.expect("claim old");
    old.put_connector_config("a", &props(&[("name", "a")]), None)
        .await
        .expect("write old");
    let new = ConfigBackingStore::start(settings)
        .await
        .expect("start new");
    new.claim_write_privileges().await.expect("claim new");
    let err = old
        .put_connector_config("b", &props(&[("name", "b")]), None)
        .await
        .expect_err("the old leader is fenced");
    assert!(matches!(err, StorageError::Fenced(_)), "{err:?}");
    new.put_connector_config("c", &props(&[("name", "c")]), None)
        .await
        .expect("write new");
    new.refresh(TIMEOUT).await.unwrap();
    assert_eq!(
        new.snapshot().connectors(),
        vec!["a".to_owned(), "c".to_owned()]
    );
}

#[tokio::test]
async fn invalid_existing_topics_are_rejected_with_connects_message() {
    let multi = unique("connect-configs");
    kafka::create_topics(&[&multi], 3).await;
    let err = ConfigBackingStore::start(config_settings(&multi))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Topic '{multi}' supplied via the 'config.storage.topic' property is required to have a single partition in order to guarantee consistency of connector configurations, but found 3 partitions."
        )
    );
    let deleting = unique("connect-status");
    kafka::create_topics(&[&deleting], 1).await;
    let err = StatusBackingStore::start(StatusStoreSettings {
        topic: TopicSettings::new(&deleting, 5, 1),
        client: client(),
        client_id: unique("status"),
    })
    .await
    .unwrap_err();
    assert!(
        err.to_string().starts_with(&format!("Topic '{deleting}' supplied via the 'status.storage.topic' property is required to have 'cleanup.policy=compact'")),
        "{err}"
    );
}

#[tokio::test]
async fn offsets_round_trip_with_byte_exact_keys() {
    let topic = unique("connect-offsets");
    let store = OffsetBackingStore::start(offset_settings(&topic, false))
        .await
        .expect("start");
    let p0: PartitionMap = map(json!({"id": 0}));
    let p1: PartitionMap = map(json!({"id": 1}));
    let o: OffsetMap = map(json!({"position": 30}));
    store
        .set(
            "conn",
            &[
                (p0.clone(), Some(o.clone())),
                (p1.clone(), Some(map(json!({"position": 5})))),
            ],
        )
        .await
        .expect("set");
    store
        .set("conn", &[(p1.clone(), None)])
        .await
        .expect("tombstone");

    let records = kafka::read_until(&[&topic], Isolation::ReadUncommitted, TIMEOUT, |r| {
        r.len() >= 3
    });
    let first = records
        .iter()
        .find(|r| r.value.as_deref() == Some(r#"{"position":30}"#))
        .unwrap();
    assert_eq!(first.key.as_deref(), Some(r#"["conn",{"id":0}]"#));

    let fresh = OffsetBackingStore::start(offset_settings(&topic, false))
        .await
        .expect("start fresh");
    let got = fresh
        .get("conn", &[p0.clone(), p1.clone()])
        .await
        .expect("get");
    assert_eq!(got, vec![(p0.clone(), Some(o.clone())), (p1, None)]);
    assert_eq!(
        fresh.all_for_connector("conn").await.unwrap(),
        vec![(p0, o)]
    );
    assert!(fresh.all_for_connector("other").await.unwrap().is_empty());
}

#[tokio::test]
async fn connector_topic_takes_precedence_over_the_global_topic() {
    let global = Arc::new(
        OffsetBackingStore::start(offset_settings(&unique("connect-offsets"), false))
            .await
            .unwrap(),
    );
    let own = Arc::new(
        OffsetBackingStore::start(offset_settings(&unique("conn-offsets"), false))
            .await
            .unwrap(),
    );
    let a: PartitionMap = map(json!({"f": "a"}));
    let b: PartitionMap = map(json!({"f": "b"}));
    global
        .set(
            "c",
            &[
                (a.clone(), Some(map(json!({"pos": 1})))),
                (b.clone(), Some(map(json!({"pos": 1})))),
            ],
        )
        .await
        .unwrap();
    own.set("c", &[(a.clone(), Some(map(json!({"pos": 9}))))])
        .await
        .unwrap();
    let combined =
        ConnectorOffsetBackingStore::with_connector_store(own.clone(), Some(global.clone()));
    let got = combined.get("c", &[a.clone(), b.clone()]).await.unwrap();
    assert_eq!(got[0].1, Some(map(json!({"pos": 9}))));
    assert_eq!(
        got[1].1,
        Some(map(json!({"pos": 1}))),
        "falls back to the global topic"
    );
    assert_eq!(combined.all_for_connector("c").await.unwrap().len(), 2);

    // A reset (tombstone) reaches both topics, so the global value cannot resurface.
    combined.set("c", &[(b.clone(), None)]).await.unwrap();
    let got = combined.get("c", &[b.clone()]).await.unwrap();
    assert_eq!(got[0].1, None);
}

#[tokio::test]
async fn read_committed_offsets_skip_aborted_transactions() {
    let topic = unique("conn-offsets");
    let store = OffsetBackingStore::start(offset_settings(&topic, true))
        .await
        .expect("start");
    let producer: ThreadedProducer<DefaultProducerContext> = kafka::client_config()
        .set("transactional.id", unique("txn"))
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    producer.init_transactions(TIMEOUT).unwrap();
    let key = r#"["conn",{"id":0}]"#;
    producer.begin_transaction().unwrap();
    send_raw_txn(&producer, &topic, key, r#"{"n":1}"#);
    producer.commit_transaction(TIMEOUT).unwrap();
    producer.begin_transaction().unwrap();
    send_raw_txn(&producer, &topic, key, r#"{"n":2}"#);
    producer.abort_transaction(TIMEOUT).unwrap();

    // Ends in a transaction marker: read-to-end must still finish.
    let got = tokio::time::timeout(TIMEOUT, store.get("conn", &[map(json!({"id": 0}))]))
        .await
        .expect("read to end finishes past transaction markers")
        .unwrap();
    assert_eq!(got[0].1, Some(map(json!({"n": 1}))));
}

fn send_raw_txn(p: &ThreadedProducer<DefaultProducerContext>, topic: &str, key: &str, value: &str) {
    p.send(BaseRecord::<str, str>::to(topic).key(key).payload(value))
        .map_err(|(e, _)| e)
        .unwrap();
}

#[tokio::test]
async fn status_safe_writes_respect_newer_generations() {
    let topic = unique("connect-status");
    let settings = StatusStoreSettings {
        topic: TopicSettings::new(&topic, 5, 1),
        client: client(),
        client_id: unique("status"),
    };
    let a = StatusBackingStore::start(settings.clone())
        .await
        .expect("start a");
    let b = StatusBackingStore::start(settings.clone())
        .await
        .expect("start b");
    let id = ConnectorTaskId::new("c", 0);
    let task = |state, worker: &str, generation| TaskStatus {
        id: id.clone(),
        state,
        trace: None,
        worker_id: worker.into(),
        generation,
        version: Some("0.9.1".into()),
    };
    b.put_task_status(&task(ConnectorState::Running, "b:8083", 5))
        .await
        .unwrap();
    b.put_connector_status(&ConnectorStatus {
        connector: "c".into(),
        state: ConnectorState::Running,
        trace: None,
        worker_id: "b:8083".into(),
        generation: 5,
        version: Some("4.4.0".into()),
    })
    .await
    .unwrap();
    a.refresh(TIMEOUT).await.unwrap();
    // Zombie worker a (older generation) must not overwrite b's status.
    assert!(
        !a.put_task_status_safe(&task(ConnectorState::Unassigned, "a:8083", 4))
            .await
            .unwrap()
    );
    assert!(
        !a.put_connector_status_safe(&ConnectorStatus {
            connector: "c".into(),
            state: ConnectorState::Failed,
            trace: Some("x".into()),
            worker_id: "a:8083".into(),
            generation: 4,
            version: None,
        })
        .await
        .unwrap()
    );
    // A newer generation may.
    assert!(
        a.put_task_status_safe(&task(ConnectorState::Failed, "a:8083", 6))
            .await
            .unwrap()
    );
    a.put_topic(&TopicStatus {
        topic: "t".into(),
        connector: "c".into(),
        task: 0,
        discover_timestamp: 1,
    })
    .await
    .unwrap();

    let fresh = StatusBackingStore::start(settings.clone())
        .await
        .expect("start fresh");
    let st = fresh.task_status(&id).unwrap();
    assert_eq!(
        (
            st.state,
            st.worker_id.as_str(),
            st.generation,
            st.version.as_deref()
        ),
        (ConnectorState::Failed, "a:8083", 6, Some("0.9.1"))
    );
    let cs = fresh.connector_status("c").unwrap();
    assert_eq!(
        (cs.state, cs.version.as_deref()),
        (ConnectorState::Running, Some("4.4.0"))
    );
    assert_eq!(fresh.topics_for("c").len(), 1);

    let records = kafka::read_until(&[&topic], Isolation::ReadUncommitted, TIMEOUT, |r| {
        r.len() >= 4
    });
    assert!(
        records
            .iter()
            .any(|r| r.key.as_deref() == Some("status-connector-c")
                && r.value.as_deref()
                    == Some(
                        r#"{"state":"RUNNING","trace":null,"worker_id":"b:8083","generation":5,"version":"4.4.0"}"#
                    ))
    );
    assert!(
        records
            .iter()
            .any(|r| r.key.as_deref() == Some("status-topic-t:connector-c")
                && r.value.as_deref()
                    == Some(
                        r#"{"topic":{"name":"t","connector":"c","task":0,"discoverTimestamp":1}}"#
                    ))
    );

    fresh.delete_connector("c", 1).await.unwrap();
    fresh.refresh(TIMEOUT).await.unwrap();
    assert!(fresh.connector_status("c").is_none());
    assert!(fresh.tasks_for("c").is_empty());
    assert!(fresh.topics_for("c").is_empty());
}
