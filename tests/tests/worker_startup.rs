//! Start-up while the internal topics cannot be read to the end: under exactly-once they are
//! read `read_committed`, so a transaction left open on the config topic (a leader killed
//! mid-write) holds the read until the broker aborts it. The REST port answers meanwhile, as
//! Connect's does, and the stall a dead leader causes is bounded by the leader writer's short
//! transaction timeout.

use std::time::{Duration, Instant};

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, free_port};
use connect_worker::storage::config::leader_writer_config;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};

/// A transactional producer that has sent one record to `topic` in a transaction it neither
/// commits nor aborts.
async fn open_transaction(producer: &FutureProducer, topic: &str, key: &str) {
    producer
        .init_transactions(Duration::from_secs(30))
        .expect("init transactions");
    producer.begin_transaction().expect("begin transaction");
    producer
        .send(
            FutureRecord::<str, str>::to(topic).key(key).payload("{}"),
            Duration::from_secs(30),
        )
        .await
        .map_err(|(e, _)| e)
        .expect("send inside the transaction");
}

#[tokio::test]
async fn rest_answers_while_an_open_config_transaction_holds_start_up() {
    let spec = ClusterSpec::new("startup-held").set("exactly.once.source.support", "enabled");
    let config_topic = spec.props["config.storage.topic"].clone();
    kafka::create_compacted_topic(&config_topic, 1).await;
    // Held open far longer than the test: only the abort below releases the worker.
    let holder: FutureProducer = kafka::client_config()
        .set("transactional.id", unique("startup-holder"))
        .set("transaction.timeout.ms", "600000")
        .create()
        .expect("transactional producer");
    open_transaction(&holder, &config_topic, "held-open").await;

    let w = WorkerProc::spawn(&spec, free_port());
    assert!(
        w.wait_listening(Duration::from_secs(30)).await,
        "the REST port refused connections while the worker read its internal topics; log:\n{}",
        w.log_text()
    );
    let info = w.get("/").await.expect("GET / answers while starting");
    assert!(
        info["kafka_cluster_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );

    let (status, health) = w.send("GET", "/health", None).await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "starting", "{health}");
    let message = health["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Worker is still starting up. The worker is currently initializing and reading to the end of internal topics, which began at "),
        "{message}"
    );

    // A resource request waits for the worker, as Connect queues it for its herder.
    let mut pending = std::pin::pin!(w.send("GET", "/connectors", None));
    assert!(
        tokio::time::timeout(Duration::from_secs(2), &mut pending)
            .await
            .is_err(),
        "GET /connectors answered while the config topic read was held"
    );
    assert!(
        !w.log_text().contains("internal topics read"),
        "the open transaction did not hold start-up"
    );

    holder
        .abort_transaction(Duration::from_secs(30))
        .expect("abort the held transaction");
    let (status, connectors) = pending.await;
    assert_eq!((status, connectors), (200, serde_json::json!([])));
    w.wait_healthy().await;
}

#[tokio::test]
async fn a_leader_that_dies_mid_write_holds_config_readers_only_briefly() {
    let group = unique("dead-leader");
    let topic = format!("{group}-configs");
    kafka::create_compacted_topic(&topic, 1).await;
    // The leader's config writer, exactly as the worker configures it, dies mid-transaction:
    // dropping the client neither commits nor aborts.
    let leader: FutureProducer = leader_writer_config(&kafka::client_config(), &group)
        .create()
        .expect("leader writer");
    open_transaction(&leader, &topic, "left-open").await;
    drop(leader);
    kafka::produce(
        &topic,
        std::iter::once((Some("after".into()), Some("{}".into()))),
    )
    .await;

    // Until the broker aborts the transaction, `read_committed` stops before it. With the
    // producer default (60 s) this bound fails; with the leader's timeout the broker aborts
    // after it plus its abort-check interval (10 s by default).
    let started = Instant::now();
    let seen = kafka::read_until(
        &[&topic],
        Isolation::ReadCommitted,
        Duration::from_secs(45),
        |r| r.iter().any(|r| r.key.as_deref() == Some("after")),
    );
    assert!(
        seen.iter().all(|r| r.key.as_deref() != Some("left-open")),
        "the dead leader's record became visible: {seen:?}"
    );
    eprintln!(
        "read_committed passed the dead leader's transaction after {:?}",
        started.elapsed()
    );
}
