//! Proves the test harness is honest: the Kafka the suite runs against really implements
//! transactions, isolation levels and producer fencing. Every exactly-once claim of the worker
//! is tested on top of these three facts.

use std::time::Duration;

use connect_tests::kafka::{self, Isolation, Record};
use connect_tests::unique;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};

const TIMEOUT: Duration = Duration::from_secs(30);

fn transactional_producer(transactional_id: &str) -> ThreadedProducer<DefaultProducerContext> {
    kafka::client_config()
        .set("transactional.id", transactional_id)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .create()
        .expect("producer config is valid")
}

fn send(
    p: &ThreadedProducer<DefaultProducerContext>,
    topic: &str,
    key: &str,
    value: &str,
) -> Result<(), KafkaError> {
    p.send(BaseRecord::to(topic).key(key).payload(value))
        .map_err(|(e, _)| e)
}

fn values(records: &[Record], topic: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.topic == topic)
        .map(|r| r.value.clone().unwrap_or_default())
        .collect()
}

fn has_sentinels(records: &[Record], a: &str, b: &str) -> bool {
    [a, b]
        .iter()
        .all(|t| values(records, t).iter().any(|v| v == "sentinel"))
}

#[tokio::test(flavor = "multi_thread")]
async fn committed_and_aborted_transactions_across_two_topics() {
    let (a, b) = (unique("txn-a"), unique("txn-b"));
    kafka::create_topics(&[&a, &b], 1).await;
    let txn_id = unique("txn");

    let outcome = tokio::task::spawn_blocking({
        let (a, b) = (a.clone(), b.clone());
        move || {
            let p = transactional_producer(&txn_id);
            p.init_transactions(TIMEOUT).expect("init_transactions");

            p.begin_transaction().expect("begin 1");
            for i in 0..3 {
                send(&p, &a, "k", &format!("committed-{i}")).expect("send");
                send(&p, &b, "k", &format!("committed-{i}")).expect("send");
            }
            p.commit_transaction(TIMEOUT).expect("commit 1");

            p.begin_transaction().expect("begin 2");
            for i in 0..2 {
                send(&p, &a, "k", &format!("aborted-{i}")).expect("send");
                send(&p, &b, "k", &format!("aborted-{i}")).expect("send");
            }
            p.flush(TIMEOUT)
                .expect("flush before abort, so the aborted records reach the log");
            p.abort_transaction(TIMEOUT).expect("abort 2");

            // A last committed transaction marks the end: whatever a reader sees before the
            // sentinel is everything it will ever see of the first two transactions.
            p.begin_transaction().expect("begin 3");
            send(&p, &a, "k", "sentinel").expect("send");
            send(&p, &b, "k", "sentinel").expect("send");
            p.commit_transaction(TIMEOUT).expect("commit 3");
        }
    })
    .await;
    outcome.expect("producer thread");

    let committed = kafka::read_until(&[&a, &b], Isolation::ReadCommitted, TIMEOUT, |r| {
        has_sentinels(r, &a, &b)
    });
    let uncommitted = kafka::read_until(&[&a, &b], Isolation::ReadUncommitted, TIMEOUT, |r| {
        has_sentinels(r, &a, &b)
    });
    for topic in [&a, &b] {
        assert_eq!(
            values(&committed, topic),
            ["committed-0", "committed-1", "committed-2", "sentinel"],
            "read_committed on {topic}"
        );
        assert_eq!(
            values(&uncommitted, topic),
            [
                "committed-0",
                "committed-1",
                "committed-2",
                "aborted-0",
                "aborted-1",
                "sentinel"
            ],
            "read_uncommitted on {topic}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_producer_with_the_same_transactional_id_fences_the_first() {
    let topic = unique("fence");
    kafka::create_topics(&[&topic], 1).await;
    let txn_id = unique("txn");

    let first_error = tokio::task::spawn_blocking({
        let topic = topic.clone();
        move || {
            let zombie = transactional_producer(&txn_id);
            zombie.init_transactions(TIMEOUT).expect("init zombie");
            zombie.begin_transaction().expect("begin zombie");
            send(&zombie, &topic, "k", "from-zombie").expect("send zombie");
            zombie.flush(TIMEOUT).expect("flush zombie");

            // The new instance bumps the epoch; the broker aborts the zombie's open transaction.
            let successor = transactional_producer(&txn_id);
            successor
                .init_transactions(TIMEOUT)
                .expect("init successor");
            successor.begin_transaction().expect("begin successor");
            send(&successor, &topic, "k", "from-successor").expect("send successor");
            successor
                .commit_transaction(TIMEOUT)
                .expect("commit successor");

            let err = match send(&zombie, &topic, "k", "late") {
                Err(e) => e,
                Ok(()) => zombie
                    .commit_transaction(TIMEOUT)
                    .expect_err("the fenced producer must not commit"),
            };
            err
        }
    })
    .await
    .expect("producer thread");

    let code = first_error.rdkafka_error_code();
    assert!(
        matches!(
            code,
            Some(RDKafkaErrorCode::Fenced)
                | Some(RDKafkaErrorCode::ProducerFenced)
                | Some(RDKafkaErrorCode::InvalidProducerEpoch)
        ),
        "expected a fencing error, got {first_error:?}"
    );

    let committed = kafka::read_until(&[&topic], Isolation::ReadCommitted, TIMEOUT, |r| {
        r.iter()
            .any(|r| r.value.as_deref() == Some("from-successor"))
    });
    assert_eq!(
        values(&committed, &topic),
        ["from-successor"],
        "the zombie's records are aborted"
    );
}
