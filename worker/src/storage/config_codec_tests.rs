//! Unit tests of the config topic codec and state machine.
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
