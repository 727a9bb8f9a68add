//! The whole worker on a secured Apache Kafka (`deploy/kafka.sh up --secure`, which has no
//! listener a plaintext client can use), configured only with Java's keys:
//! - three workers on SASL_SSL (SCRAM-SHA-512, a PKCS#12 truststore) form one group and run an
//!   exactly-once verifiable source and a Postgres sink over TLS (`sslmode=verify-full`) while
//!   one of them is SIGKILLed and restarted: every (task, seqno) exactly once under
//!   `read_committed`, every sink record exactly once in the table;
//! - a worker with a PKCS#12 client certificate on the mTLS listener runs a connector.
//!
//! Start-ups that cannot authenticate are in `client_security.rs` (the worker) and
//! `group_security.rs` (the group-membership client).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{ca as pg_ca, database_url, pool, unique_table};
use connect_tests::secure::secure;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector as create, eventually, running_tasks};
use serde_json::json;
use sqlx::Row;

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const OFFSETS_SINK: &str = "connect_connectors::jdbc::PostgresOffsetsSinkConnector";

/// Workers on the SASL_SSL listener with SCRAM-SHA-512, trusting the PKCS#12 truststore.
fn sasl_ssl_cluster(prefix: &str) -> ClusterSpec {
    let s = secure();
    ClusterSpec::new(prefix)
        .set("bootstrap.servers", &s.sasl_ssl)
        .set("security.protocol", "SASL_SSL")
        .set("sasl.mechanism", "SCRAM-SHA-512")
        .set(
            "sasl.jaas.config",
            &format!(
                r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{}";"#,
                s.scram_user, s.scram_password
            ),
        )
        .set("ssl.truststore.type", "PKCS12")
        .set("ssl.truststore.location", &s.truststore_p12.to_string_lossy())
        .set("ssl.truststore.password", &s.truststore_p12_password)
}

/// Every (key, value) pair of `topic` read `read_committed` through `base`, once the topic holds
/// `expected` committed records (or after 240 s); panics unless each of `tasks` tasks has each
/// seqno below `max` exactly once.
fn assert_exactly_once_with(base: rdkafka::ClientConfig, topic: &str, tasks: i64, max: i64) {
    let deadline = Instant::now() + Duration::from_secs(240);
    let records = loop {
        let records = kafka::read_all_with(
            base.clone(),
            &[topic],
            Isolation::ReadCommitted,
            Duration::from_secs(60),
        );
        if records.len() as i64 >= tasks * max || Instant::now() > deadline {
            break records;
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    let mut counts: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for r in &records {
        let task: i64 = r.key.as_deref().unwrap_or("").parse().expect("task key");
        let seqno: i64 = r.value.as_deref().unwrap_or("").parse().expect("seqno");
        *counts.entry((task, seqno)).or_default() += 1;
    }
    let duplicates: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).take(5).collect();
    assert!(duplicates.is_empty(), "duplicates: {duplicates:?}");
    for t in 0..tasks {
        let missing: Vec<i64> = (0..max)
            .filter(|s| !counts.contains_key(&(t, *s)))
            .take(5)
            .collect();
        assert!(missing.is_empty(), "task {t} misses seqnos {missing:?}");
    }
    assert_eq!(records.len() as i64, tasks * max);
}

#[tokio::test(flavor = "multi_thread")]
async fn three_workers_on_sasl_ssl_stay_exact_through_a_kill_and_sink_to_postgres_over_tls() {
    let s = secure();
    let spec = sasl_ssl_cluster("sec-eos").set("exactly.once.source.support", "enabled");
    let mut workers = vec![
        spec.start_worker().await,
        spec.start_worker().await,
        spec.start_worker().await,
    ];
    let client = s.sasl_client_config("SCRAM-SHA-512");
    let source_topic = unique("sec-eos-data");
    let sink_topic = unique("sec-sink-data");
    kafka::create_topics_with(client.clone(), &[&source_topic, &sink_topic], 2, 1).await;

    // The sink's input, written by the test over SASL_SSL.
    const N: i64 = 1500;
    {
        use rdkafka::producer::{FutureProducer, FutureRecord};
        let producer: FutureProducer = client.clone().set("acks", "all").create().unwrap();
        for n in 0..N {
            let value = json!({"n": n}).to_string();
            producer
                .send(
                    FutureRecord::<str, str>::to(&sink_topic).payload(&value),
                    Duration::from_secs(30),
                )
                .await
                .expect("produce over SASL_SSL");
        }
    }

    let (tasks, max) = (2i64, 4000i64);
    create(
        &workers[0],
        "vs",
        json!({
            "connector.class": VERIFIABLE, "tasks.max": tasks.to_string(), "topic": source_topic,
            "throughput": "800", "batch.size": "50", "max.records": max.to_string(),
            "exactly.once.support": "required", "transaction.boundary": "poll",
        }),
    )
    .await;
    let table = unique_table("sec_sink");
    let ca = pg_ca();
    create(
        &workers[1],
        "pg",
        json!({
            "connector.class": OFFSETS_SINK, "tasks.max": "2", "topics": sink_topic,
            "connection.url": format!(
                "{}?sslmode=verify-full&sslrootcert={}", database_url(), ca.display()
            ),
            "table.name.format": table, "auto.create": "true",
            "offsets.table.name": format!("{table}_offsets"),
        }),
    )
    .await;
    eventually(
        Duration::from_secs(90),
        "both connectors' tasks running",
        || {
            let w = &workers[0];
            async move {
                running_tasks(w, "vs", tasks as usize).await?;
                running_tasks(w, "pg", 2).await
            }
        },
    )
    .await;

    // A crash in the middle of the run.
    tokio::time::sleep(Duration::from_secs(2)).await;
    workers[1].kill9();
    tokio::time::sleep(Duration::from_secs(1)).await;
    workers[1].restart().await;

    let reader = client.clone();
    let topic = source_topic.clone();
    tokio::task::spawn_blocking(move || assert_exactly_once_with(reader, &topic, tasks, max))
        .await
        .unwrap();

    let p = pool().await;
    let (rows, distinct) = eventually(
        Duration::from_secs(120),
        "every sink record in the table",
        || {
            let (p, table) = (p.clone(), table.clone());
            async move {
                let row = sqlx::query(&format!("SELECT count(*), count(DISTINCT n) FROM {table}"))
                    .fetch_one(&p)
                    .await
                    .ok()?;
                let (rows, d): (i64, i64) = (row.get(0), row.get(1));
                (rows >= N).then_some((rows, d))
            }
        },
    )
    .await;
    assert_eq!((rows, distinct), (N, N), "each sink record exactly once");
    drop(workers);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_with_a_client_certificate_runs_a_connector_over_mtls() {
    let s = secure();
    let spec = ClusterSpec::new("sec-mtls")
        .set("bootstrap.servers", &s.ssl)
        .set("security.protocol", "SSL")
        .set("ssl.keystore.type", "PKCS12")
        .set("ssl.keystore.location", &s.client_p12.to_string_lossy())
        .set("ssl.keystore.password", &s.client_p12_password)
        .set("ssl.truststore.type", "PEM")
        .set("ssl.truststore.location", &s.ca.to_string_lossy());
    let w = spec.start_worker().await;
    let topic = unique("sec-mtls-data");
    kafka::create_topics_with(s.mtls_client_config(), &[&topic], 1, 1).await;
    let max = 500;
    create(
        &w,
        "vs",
        json!({
            "connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
            "throughput": "1000", "max.records": max.to_string(),
        }),
    )
    .await;
    let reader = s.mtls_client_config();
    tokio::task::spawn_blocking(move || assert_exactly_once_with(reader, &topic, 1, max))
        .await
        .unwrap();
}
