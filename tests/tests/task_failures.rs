//! Tasks that panic or fail, against the real broker.
//!
//! - A panic in a task's `put` or `poll` fails the task at once: FAILED with the panic message
//!   as its trace, reported by the runner itself (nobody has to stop the task first). These run
//!   the worker's own runners in-process with test-only tasks (wrapped as the worker wraps
//!   every task), since no built-in connector panics on purpose.
//! - An exactly-once task that fails with a transaction open, and a connector-boundary task
//!   stopped between two of its boundaries, abort that transaction: a `read_committed` reader
//!   reaches the end of the topic long before the broker's transaction timeout (set to 10
//!   minutes here) would have aborted it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use connect_api::config::{SinkConnectorConfig, SourceConnectorConfig};
use connect_api::{
    CancellationToken, ConfigMap, SinkRecord, SinkTask, SinkTaskContext, SourceOffset,
    SourcePartition, SourceRecord, SourceTask, SourceTaskContext, Value,
};
use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually, running_tasks};
use connect_worker::config::WorkerConfig;
use connect_worker::runtime::convert::RecordConverters;
use connect_worker::runtime::errors::{ErrorHandler, StageClasses};
use connect_worker::runtime::exactly_once::{
    ExactlyOnceGate, ExactlyOnceSourceTaskRun, GateError, run_exactly_once_source_task,
};
use connect_worker::runtime::panics::{PanicSafeSinkTask, PanicSafeSourceTask};
use connect_worker::runtime::sink::{DEFAULT_MAX_POLL_RECORDS, SinkTaskRun, run_sink_task};
use connect_worker::runtime::{ConnectorTaskId, TaskStatusListener};
use connect_worker::storage::ConnectorOffsetBackingStore;
use connect_worker::storage::offsets::{OffsetBackingStore, OffsetStoreSettings};
use connect_worker::storage::topics::TopicSettings;
use serde_json::json;
use tokio::sync::watch;

/// Far above how long any of these tests waits: an open transaction that is not aborted holds
/// `read_committed` readers for this long.
const TRANSACTION_TIMEOUT_MS: &str = "600000";

/// What a runner reported, in order.
#[derive(Default)]
struct Statuses(Mutex<Vec<String>>);

impl Statuses {
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl TaskStatusListener for Statuses {
    fn on_running(&self, _: &ConnectorTaskId) {
        self.0.lock().unwrap().push("RUNNING".into());
    }
    fn on_paused(&self, _: &ConnectorTaskId) {
        self.0.lock().unwrap().push("PAUSED".into());
    }
    fn on_failure(&self, _: &ConnectorTaskId, error: &connect_api::ConnectError) {
        let trace = connect_worker::runtime::error_trace(error);
        self.0.lock().unwrap().push(format!("FAILED: {trace}"));
    }
    fn on_shutdown(&self, _: &ConnectorTaskId) {
        self.0.lock().unwrap().push("UNASSIGNED".into());
    }
}

fn props(pairs: &[(&str, &str)]) -> ConfigMap {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn worker_config(spec: &ClusterSpec) -> WorkerConfig {
    WorkerConfig::from_props(spec.props.clone()).expect("worker config")
}

/// Panics in `put` on the first batch that holds a record, naming its offset.
struct PanicsInPut;

#[async_trait]
impl SinkTask for PanicsInPut {
    fn version(&self) -> String {
        "test".into()
    }
    async fn start(&mut self, _: SinkTaskContext, _: ConfigMap) -> connect_api::Result<()> {
        Ok(())
    }
    async fn put(&mut self, records: Vec<SinkRecord>) -> connect_api::Result<()> {
        if let Some(r) = records.first() {
            let days: i32 = 2_000_000_000;
            panic!(
                "put: day {days} of record {} is out of range",
                r.kafka_offset
            );
        }
        Ok(())
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        Ok(())
    }
}

/// The sink runner with a task panicking in `put`: the runner ends by itself and reports the
/// task FAILED with the panic message; nothing cancels it.
#[tokio::test(flavor = "multi_thread")]
async fn a_sink_task_panicking_in_put_is_failed_with_the_panic_message() {
    let spec = ClusterSpec::new("panic-sink");
    let worker = worker_config(&spec);
    let topic = unique("panic-sink");
    kafka::create_topics(&[&topic], 1).await;
    kafka::produce(&topic, (0..5).map(|n| (None, Some(n.to_string())))).await;
    let id = ConnectorTaskId::new(unique("panic-sink"), 0);
    let cc = SinkConnectorConfig::parse(&props(&[
        ("name", &id.connector),
        ("connector.class", "test"),
        ("topics", &topic),
    ]))
    .unwrap();
    let converters = Arc::new(RecordConverters::for_connector(&worker, &cc.common).unwrap());
    let errors = Arc::new(ErrorHandler::new(
        id.clone(),
        &cc.common,
        StageClasses {
            key_converter: worker.key_converter.clone(),
            value_converter: worker.value_converter.clone(),
            header_converter: String::new(),
            task: "PanicsInPut".into(),
        },
        None,
    ));
    let statuses = Arc::new(Statuses::default());
    let (_paused_tx, paused) = watch::channel(false);
    let mut consumer_config = kafka::client_config();
    consumer_config.set("session.timeout.ms", "6000");
    let run = SinkTaskRun {
        id: id.clone(),
        task_config: ConfigMap::new(),
        connector_config: cc,
        offset_commit_interval: Duration::from_secs(1),
        converters,
        transforms: Default::default(),
        errors,
        consumer_config,
        max_poll_records: DEFAULT_MAX_POLL_RECORDS,
        status: statuses.clone(),
        cancel: CancellationToken::new(),
        paused,
        file_access: Default::default(),
    };
    let rt = tokio::runtime::Handle::current();
    let task = Box::new(PanicSafeSinkTask(Box::new(PanicsInPut)));
    let ran = tokio::task::spawn_blocking(move || run_sink_task(run, task, rt));
    tokio::time::timeout(Duration::from_secs(120), ran)
        .await
        .expect("the runner ends by itself after the panic")
        .expect("the runner itself did not panic");
    let all = statuses.all();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0], "RUNNING");
    assert_eq!(
        all[1],
        "FAILED: SinkTask::put panicked: put: day 2000000000 of record 0 is out of range"
    );
}

/// Sends `records` records in its first poll, then panics in the next one.
struct SendsThenPanics {
    topic: String,
    records: i64,
    polls: u32,
}

#[async_trait]
impl SourceTask for SendsThenPanics {
    fn version(&self) -> String {
        "test".into()
    }
    async fn start(&mut self, _: SourceTaskContext, _: ConfigMap) -> connect_api::Result<()> {
        Ok(())
    }
    async fn poll(&mut self) -> connect_api::Result<Vec<SourceRecord>> {
        self.polls += 1;
        if self.polls > 1 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            panic!("poll: the source went away");
        }
        let partition: SourcePartition =
            std::iter::once(("source".to_owned(), json!("test"))).collect();
        Ok((0..self.records)
            .map(|n| {
                let offset: SourceOffset = std::iter::once(("n".to_owned(), json!(n))).collect();
                SourceRecord::new(
                    partition.clone(),
                    offset,
                    &self.topic,
                    None,
                    Value::String(n.to_string()),
                )
            })
            .collect())
    }
    async fn stop(&mut self) -> connect_api::Result<()> {
        Ok(())
    }
}

struct NoFencing;

#[async_trait]
impl ExactlyOnceGate for NoFencing {
    async fn fence(&self, _: &str) -> Result<(), GateError> {
        Ok(())
    }
    async fn still_current(&self, _: &ConnectorTaskId, _: Option<i32>) -> Result<(), GateError> {
        Ok(())
    }
}

/// An exactly-once task panics with a transaction open (interval boundaries, 10 minutes apart):
/// it is FAILED with the panic message, and its transaction is aborted, so a `read_committed`
/// reader reaches the end of the topic (nothing of the aborted records) without waiting for
/// the transaction timeout.
#[tokio::test(flavor = "multi_thread")]
async fn an_exactly_once_task_failing_mid_transaction_aborts_it() {
    let spec = ClusterSpec::new("panic-eos");
    let worker = worker_config(&spec);
    let topic = unique("panic-eos");
    let offsets_topic = unique("panic-eos-offsets");
    kafka::create_topics(&[&topic], 1).await;
    let id = ConnectorTaskId::new(unique("panic-eos"), 0);
    let cc = SourceConnectorConfig::parse(&props(&[
        ("name", &id.connector),
        ("connector.class", "test"),
        ("transaction.boundary", "interval"),
        ("transaction.boundary.interval.ms", "600000"),
    ]))
    .unwrap();
    let converters = RecordConverters::for_connector(&worker, &cc.common).unwrap();
    let offsets = OffsetBackingStore::start(OffsetStoreSettings {
        topic: TopicSettings::new(&offsets_topic, 1, 1),
        client: kafka::client_config(),
        client_id: unique("offsets"),
        read_committed: true,
    })
    .await
    .expect("offsets store");
    let offsets = Arc::new(ConnectorOffsetBackingStore::with_connector_store(
        Arc::new(offsets),
        None,
    ));
    let mut producer_config = kafka::client_config();
    producer_config
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("transactional.id", unique("panic-eos-txn"))
        .set("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS);
    let statuses = Arc::new(Statuses::default());
    let (_paused_tx, paused) = watch::channel(false);
    let run = ExactlyOnceSourceTaskRun {
        id: id.clone(),
        task_config: ConfigMap::new(),
        connector_config: cc,
        offset_flush_interval: Duration::from_secs(600),
        converters,
        transforms: Default::default(),
        producer: connect_worker::runtime::txn_producer::choose(
            producer_config,
            &Default::default(),
        ),
        topic_creation: connect_worker::runtime::topic_creation::TopicCreator::disabled(),
        offsets,
        gate: Arc::new(NoFencing),
        generation: None,
        status: statuses.clone(),
        cancel: CancellationToken::new(),
        paused,
        file_access: Default::default(),
    };
    let task = Box::new(PanicSafeSourceTask(Box::new(SendsThenPanics {
        topic: topic.clone(),
        records: 50,
        polls: 0,
    })));
    tokio::time::timeout(
        Duration::from_secs(120),
        run_exactly_once_source_task(run, task),
    )
    .await
    .expect("the runner ends by itself after the panic");
    let all = statuses.all();
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[0], "RUNNING");
    assert_eq!(
        all[1],
        "FAILED: SourceTask::poll panicked: poll: the source went away"
    );

    // The 50 records reached the log inside the transaction ...
    let uncommitted = tokio::task::spawn_blocking({
        let topic = topic.clone();
        move || {
            kafka::read_all(
                &[&topic],
                Isolation::ReadUncommitted,
                Duration::from_secs(60),
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(uncommitted.len(), 50);
    // ... and a read_committed reader gets to the end: the transaction was aborted.
    let committed = tokio::task::spawn_blocking(move || {
        kafka::read_all(&[&topic], Isolation::ReadCommitted, Duration::from_secs(60))
    })
    .await
    .unwrap();
    assert!(
        committed.is_empty(),
        "aborted records were read: {committed:?}"
    );
}

/// A verifiable source with connector-defined boundaries far apart (a commit every million
/// records) is stopped while its transaction is open: the worker aborts it, and a
/// `read_committed` reader reaches the end of the topic at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_connector_boundary_task_stopped_mid_transaction_aborts_it() {
    let spec = ClusterSpec::new("eos-stop").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let topic = unique("eos-stop");
    kafka::create_topics(&[&topic], 1).await;
    let name = unique("eos-stop");
    create_connector(
        &w,
        &name,
        json!({
            "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "tasks.max": "1",
            "topic": topic,
            "throughput": "200",
            "batch.size": "20",
            "exactly.once.support": "required",
            "transaction.boundary": "connector",
            "transaction.records": "1000000",
            "producer.override.transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
        }),
    )
    .await;
    eventually(Duration::from_secs(60), "task running", || {
        running_tasks(&w, &name, 1)
    })
    .await;
    // Records are in the log, inside the one open transaction.
    let t = topic.clone();
    tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| r.len() >= 100,
        )
    })
    .await
    .unwrap();
    let (status, body) = w
        .send("PUT", &format!("/connectors/{name}/stop"), None)
        .await;
    assert_eq!(status, 204, "{body}");
    eventually(Duration::from_secs(60), "connector stopped", || async {
        let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (s["connector"]["state"] == "STOPPED" && s["tasks"].as_array()?.is_empty()).then_some(())
    })
    .await;
    let committed = tokio::task::spawn_blocking(move || {
        kafka::read_all(&[&topic], Isolation::ReadCommitted, Duration::from_secs(60))
    })
    .await
    .unwrap();
    assert!(
        committed.is_empty(),
        "aborted records were read: {committed:?}"
    );
    assert!(
        w.log_text()
            .contains("aborted the open transaction of a stopped task"),
        "the worker logged no abort"
    );
}
