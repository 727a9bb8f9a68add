//! MirrorMaker 2 on this worker (`MirrorSourceConnector`) between two real clusters: the
//! one-node `deploy/kafka.sh up --tv1` cluster (127.0.0.1:39592) as the source, the test cluster
//! (the workers' own) as the target.
//!
//! - numbered records written to the source in transactions, some aborted, while the workers
//!   replicating them are SIGKILLed and one is frozen with SIGSTOP (a zombie): the target, read
//!   `read_committed`, has every committed number exactly once, in order per partition, with
//!   its key, headers and timestamp, and nothing of the aborted transactions; every offset sync
//!   written (Apache's format) pairs a source record with its copy;
//! - validation: equal or missing aliases, an unknown replication policy and exactly-once
//!   without a `read_committed` source consumer are errors naming their key;
//! - an unreachable source cluster fails the connector with the reason; it heals by itself;
//! - a consumer group moved to the target skips nothing (checkpoints, group offset sync);
//! - topic ACLs follow the source as Apache translates them (`deploy/kafka.sh up --acl`, a
//!   cluster with Kafka's authorizer, as source and target);
//! - a task whose source cluster refuses its login, or cannot be reached, FAILS with the
//!   reason and heals by itself once the login is valid or the cluster reachable.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use connect_tests::kafka::{self, Isolation, Record};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, create_connector, eventually, running_tasks};
use serde_json::{Value, json};

const MIRROR_SOURCE: &str = "org.apache.kafka.connect.mirror.MirrorSourceConnector";
const BYTES: &str = "org.apache.kafka.connect.converters.ByteArrayConverter";

/// Starts (or finds running) the source cluster: `deploy/kafka.sh up --tv1`, as the
/// transactions-v1 test of `exactly_once` does; its bootstrap servers.
fn source_cluster() -> String {
    kafka::kafka_sh_locked(&["up", "--tv1"])
}

fn mirror_config(source: &str, alias: &str, topic: &str, tasks: usize) -> Value {
    json!({
        "connector.class": MIRROR_SOURCE,
        "tasks.max": tasks.to_string(),
        "source.cluster.alias": alias,
        "target.cluster.alias": "target",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": kafka::bootstrap_servers(),
        "topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "exactly.once.support": "required",
        "source.consumer.isolation.level": "read_committed",
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "300",
    })
}

/// Writes the `numbers` (key = value = the number, header `n`, timestamp `base + n`)
/// to partition `n % partitions` of `topic` in transactions of `per_txn`; every seventh
/// transaction is first written with `aborted-<n>` values and aborted. Paced to about
/// `rate` records a second.
fn produce_numbered(
    bootstrap: &str,
    topic: &str,
    partitions: i32,
    numbers: std::ops::Range<i64>,
    base_ts: i64,
    rate: i64,
) {
    use rdkafka::message::{Header, OwnedHeaders};
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let per_txn = 250i64;
    let p: BaseProducer = kafka::client_config_at(bootstrap)
        .set("transactional.id", unique("mm2-numbers"))
        .set("linger.ms", "5")
        .create()
        .expect("producer");
    p.init_transactions(Duration::from_secs(30)).expect("init");
    let started = std::time::Instant::now();
    let send = |i: i64, value: &str| {
        let key = i.to_string();
        let headers = OwnedHeaders::new().insert(Header {
            key: "n",
            value: Some(key.as_bytes()),
        });
        let record = BaseRecord::to(topic)
            .partition((i % i64::from(partitions)) as i32)
            .key(&key)
            .payload(value)
            .headers(headers)
            .timestamp(base_ts + i);
        let mut record = record;
        loop {
            match p.send(record) {
                Ok(()) => break,
                Err((_, r)) => {
                    p.poll(Duration::from_millis(10));
                    record = r;
                }
            }
        }
    };
    let (from, n) = (numbers.start, numbers.end);
    let mut i = from;
    while i < n {
        let end = (i + per_txn).min(n);
        if (i / per_txn) % 7 == 3 {
            p.begin_transaction().expect("begin");
            for j in i..end {
                send(j, &format!("aborted-{j}"));
            }
            p.flush(Duration::from_secs(30)).expect("flush");
            p.abort_transaction(Duration::from_secs(30)).expect("abort");
        }
        p.begin_transaction().expect("begin");
        for j in i..end {
            send(j, &j.to_string());
        }
        p.commit_transaction(Duration::from_secs(30))
            .expect("commit");
        i = end;
        let due = Duration::from_secs_f64((i - from) as f64 / rate as f64);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// Now, in milliseconds: records are stamped near it, so no retention check expires them
/// during a test.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn read(bootstrap: &str, topic: &str, isolation: Isolation) -> Vec<Record> {
    kafka::read_all_at(bootstrap, &[topic], isolation, Duration::from_secs(120))
}

/// Offset syncs as Apache writes them: key `{topic: STRING, partition: INT32}`, value
/// `{upstreamOffset: INT64, offset: INT64}`.
fn decode_sync(key: &[u8], value: &[u8]) -> Option<(String, i32, i64, i64)> {
    let len = usize::try_from(i16::from_be_bytes(key.get(..2)?.try_into().ok()?)).ok()?;
    let topic = String::from_utf8(key.get(2..2 + len)?.to_vec()).ok()?;
    let partition = i32::from_be_bytes(key.get(2 + len..6 + len)?.try_into().ok()?);
    let upstream = i64::from_be_bytes(value.get(..8)?.try_into().ok()?);
    let downstream = i64::from_be_bytes(value.get(8..16)?.try_into().ok()?);
    Some((topic, partition, upstream, downstream))
}

#[tokio::test(flavor = "multi_thread")]
async fn mirrored_records_are_exact_across_kills_and_a_zombie_and_aborted_ones_stay_behind() {
    let source = source_cluster();
    let spec = ClusterSpec::new("mm2-eos").set("exactly.once.source.support", "enabled");
    let mut w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let topic = unique("mm2-numbers");
    let alias = unique("src").replace('-', "_");
    let remote = format!("{alias}.{topic}");
    let (partitions, n) = (3i32, 24_000i64);
    kafka::create_topics_at(&source, &[&topic], partitions, 1).await;
    let base_ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 3_600_000;
    // A first part before the connector, the rest while it runs and its workers die.
    let (s, t) = (source.clone(), topic.clone());
    tokio::task::spawn_blocking(move || {
        produce_numbered(&s, &t, partitions, 0..3000, base_ts, 100_000)
    })
    .await
    .unwrap();

    create_connector(&w1, "mm2-eos", mirror_config(&source, &alias, &topic, 3)).await;
    eventually(Duration::from_secs(90), "3 mirror tasks running", || {
        running_tasks(&w1, "mm2-eos", 3)
    })
    .await;
    let (s, t) = (source.clone(), topic.clone());
    let producer =
        std::thread::spawn(move || produce_numbered(&s, &t, partitions, 3000..n, base_ts, 1500));

    tokio::time::sleep(Duration::from_secs(3)).await;
    println!("SIGKILL worker {}", w1.worker_id());
    w1.kill9();
    tokio::time::sleep(Duration::from_secs(1)).await;
    w1.restart().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    // A zombie: frozen with transactions open, its tasks move to the other worker.
    w2.pause();
    let zombie = w2.worker_id();
    eventually(
        Duration::from_secs(60),
        "the frozen worker's tasks elsewhere",
        || async {
            running_tasks(&w1, "mm2-eos", 3)
                .await
                .filter(|o| o.values().all(|w| *w != zombie))
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    w2.resume();
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("SIGKILL worker {} again", w1.worker_id());
    w1.kill9();
    tokio::time::sleep(Duration::from_millis(500)).await;
    w1.restart().await;
    tokio::task::spawn_blocking(move || producer.join().unwrap())
        .await
        .unwrap();

    let (tb, r) = (kafka::bootstrap_servers(), remote.clone());
    let copied = eventually(
        Duration::from_secs(120),
        "every number on the target",
        || {
            let (tb, r) = (tb.clone(), r.clone());
            async move {
                let records =
                    tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted))
                        .await
                        .unwrap();
                (records.len() as i64 >= n).then_some(records)
            }
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (tb, r) = (kafka::bootstrap_servers(), remote.clone());
    let copied = {
        let again = tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted))
            .await
            .unwrap();
        if again.len() > copied.len() {
            again
        } else {
            copied
        }
    };

    // Exactly once, in order per partition, everything of the record kept.
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    let mut last: BTreeMap<i32, i64> = BTreeMap::new();
    for r in &copied {
        let v = r.value.as_deref().unwrap_or_default();
        assert!(
            !v.starts_with("aborted"),
            "an aborted source record was copied: {r:?}"
        );
        let i: i64 = v.parse().expect("numbered value");
        *counts.entry(i).or_default() += 1;
        assert_eq!(
            r.partition,
            (i % i64::from(partitions)) as i32,
            "partition kept: {r:?}"
        );
        if let Some(prev) = last.insert(r.partition, i) {
            assert!(
                prev < i,
                "partition {} out of order: {prev} then {i}",
                r.partition
            );
        }
        assert_eq!(r.key.as_deref(), Some(v), "key kept");
        assert_eq!(
            r.headers,
            vec![("n".to_owned(), v.to_owned())],
            "headers kept"
        );
        assert_eq!(r.timestamp, Some(base_ts + i), "timestamp kept");
    }
    let dups: Vec<_> = counts.iter().filter(|(_, c)| **c > 1).take(10).collect();
    assert!(dups.is_empty(), "duplicates under read_committed: {dups:?}");
    let missing: Vec<i64> = (0..n)
        .filter(|i| !counts.contains_key(i))
        .take(10)
        .collect();
    assert!(missing.is_empty(), "missing numbers, e.g. {missing:?}");
    assert_eq!(copied.len() as i64, n);
    println!("{} records mirrored, each exactly once", copied.len());

    // The source really had aborted transactions (read_uncommitted sees them)...
    let (s, t) = (source.clone(), topic.clone());
    let source_all = tokio::task::spawn_blocking(move || read(&s, &t, Isolation::ReadUncommitted))
        .await
        .unwrap();
    let aborted = source_all
        .iter()
        .filter(|r| r.value.as_deref().is_some_and(|v| v.starts_with("aborted")))
        .count();
    assert!(aborted > 0, "the source has aborted records");
    // ...and the target has none of them, even uncommitted.
    let (tb, r) = (kafka::bootstrap_servers(), remote.clone());
    let target_all = tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadUncommitted))
        .await
        .unwrap();
    assert!(
        !target_all
            .iter()
            .any(|r| r.value.as_deref().is_some_and(|v| v.starts_with("aborted"))),
        "no aborted source record reached the target"
    );
    println!(
        "source: {aborted} aborted records; target read_uncommitted {} vs read_committed {}",
        target_all.len(),
        copied.len()
    );
    // The kills and the freeze usually hit open transactions (a 300 ms interval keeps one open
    // nearly all the time): their aborted copies are on the target, invisible to
    // read_committed. On a loaded machine a kill can land between two transactions (seen once
    // in CI): that run proves less, so it says so, but exactness above is what must hold.
    if target_all.len() == copied.len() {
        println!("note: no failure interrupted an open transaction in this run");
    }

    // Offset syncs (on the source, named for the target) pair a source record with its copy.
    let (s, t) = (source.clone(), topic.clone());
    let syncs_read = tokio::task::spawn_blocking(move || {
        read(
            &s,
            "mm2-offset-syncs.target.internal",
            Isolation::ReadCommitted,
        )
    })
    .await
    .unwrap();
    let source_at: BTreeMap<(i32, i64), String> = source_all
        .iter()
        .map(|r| ((r.partition, r.offset), r.value.clone().unwrap_or_default()))
        .collect();
    let target_at: BTreeMap<(i32, i64), String> = copied
        .iter()
        .map(|r| ((r.partition, r.offset), r.value.clone().unwrap_or_default()))
        .collect();
    let mut checked = 0;
    for r in &syncs_read {
        let (Some(k), Some(v)) = (&r.key_bytes, &r.value_bytes) else {
            continue;
        };
        let (sync_topic, partition, upstream, downstream) =
            decode_sync(k, v).expect("Apache's offset-sync format");
        if sync_topic != t {
            continue;
        }
        assert_eq!(r.partition, 0, "offset syncs go to partition 0");
        assert_eq!(
            source_at.get(&(partition, upstream)),
            target_at.get(&(partition, downstream)),
            "sync {partition}: {upstream} -> {downstream} pairs a record with its copy"
        );
        checked += 1;
    }
    assert!(
        checked >= partitions as usize,
        "offset syncs written: {checked}"
    );
    println!("{checked} offset syncs pair source records with their copies");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_mirror_configs_are_validation_errors_naming_the_key() {
    let spec = ClusterSpec::new("mm2-validate");
    let w = spec.start_worker().await;
    let errors = |body: Value| {
        let w = &w;
        async move {
            let (status, out) = w
                .send(
                    "PUT",
                    "/connector-plugins/MirrorSourceConnector/config/validate",
                    Some(body),
                )
                .await;
            assert_eq!(status, 200, "{out}");
            out["configs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| !c["value"]["errors"].as_array().unwrap().is_empty())
                .map(|c| {
                    (
                        c["value"]["name"].as_str().unwrap().to_owned(),
                        c["value"]["errors"][0].as_str().unwrap().to_owned(),
                    )
                })
                .collect::<BTreeMap<String, String>>()
        }
    };
    let base = json!({"connector.class": MIRROR_SOURCE, "name": "mm2-v"});
    let with = |extra: Value| {
        let mut c = base.clone();
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    let e = errors(base.clone()).await;
    assert!(e.contains_key("source.cluster.alias"), "{e:?}");
    let e = errors(with(
        json!({"source.cluster.alias": "a", "target.cluster.alias": "a"}),
    ))
    .await;
    assert!(e["target.cluster.alias"].contains("must differ"), "{e:?}");
    let e = errors(with(
        json!({"source.cluster.alias": "a", "replication.policy.class": "com.example.Policy"}),
    ))
    .await;
    assert!(
        e["replication.policy.class"].contains("com.example.Policy"),
        "{e:?}"
    );
    let e = errors(with(
        json!({"source.cluster.alias": "a", "exactly.once.support": "required"}),
    ))
    .await;
    assert!(
        e["exactly.once.support"].contains("read_committed"),
        "{e:?}"
    );
    let e = errors(with(
        json!({"source.cluster.alias": "a", "topic.filter.class": "com.example.Filter"}),
    ))
    .await;
    assert!(e.contains_key("topic.filter.class"), "{e:?}");
    let e = errors(with(
        json!({"source.cluster.alias": "a", "source.cluster.bootstrap.servers": "127.0.0.1:1"}),
    ))
    .await;
    assert!(e.is_empty(), "{e:?}");
}

/// The source cluster is reached through a TCP proxy that is cut (clients bootstrap through
/// it, so while it is cut the cluster is unreachable): the connector FAILS with the reason,
/// and once the proxy is restored the worker's automatic restart brings it back and the
/// records are copied.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_source_cluster_fails_the_connector_and_it_heals_by_itself() {
    let source = source_cluster();
    let proxy = connect_tests::proxy::TcpProxy::start(&source).await;
    proxy.cut();
    let spec = ClusterSpec::new("mm2-unreachable")
        .set("auto.restart.backoff.initial.ms", "1000")
        .set("auto.restart.backoff.max.ms", "2000");
    let w = spec.start_worker().await;
    let topic = unique("mm2-heal");
    kafka::create_topics_at(&source, &[&topic], 1, 1).await;
    let (s, t) = (source.clone(), topic.clone());
    tokio::task::spawn_blocking(move || produce_numbered(&s, &t, 1, 0..100, now_ms(), 100_000))
        .await
        .unwrap();
    let mut config = mirror_config(&proxy.addr.to_string(), "gone", &topic, 1);
    config["admin.timeout.ms"] = json!("3000");
    for k in [
        "exactly.once.support",
        "transaction.boundary",
        "transaction.boundary.interval.ms",
    ] {
        config.as_object_mut().unwrap().remove(k);
    }
    create_connector(&w, "mm2-unreachable", config).await;
    let trace = eventually(Duration::from_secs(60), "the connector FAILED", || async {
        let s = w.get("/connectors/mm2-unreachable/status").await.ok()?;
        (s["connector"]["state"] == "FAILED").then(|| {
            s["connector"]["trace"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
    })
    .await;
    assert!(
        trace.contains("cluster \"gone\""),
        "the trace names the source cluster: {trace}"
    );
    proxy.restore();
    eventually(
        Duration::from_secs(60),
        "the connector and its task running again",
        || running_tasks(&w, "mm2-unreachable", 1),
    )
    .await;
    let (tb, r) = (kafka::bootstrap_servers(), format!("gone.{topic}"));
    eventually(Duration::from_secs(60), "the records copied", || {
        let (tb, r) = (tb.clone(), r.clone());
        async move {
            let got =
                tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted).len())
                    .await
                    .unwrap();
            (got >= 100).then_some(())
        }
    })
    .await;
}

const MIRROR_CHECKPOINT: &str = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector";
const MIRROR_HEARTBEAT: &str = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector";

/// `group`'s committed offsets on `bootstrap` for `topic`'s partitions (-1: none).
fn committed(bootstrap: &str, group: &str, topic: &str, partitions: i32) -> Vec<i64> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = kafka::client_config_at(bootstrap)
        .set("group.id", group)
        .create()
        .unwrap();
    let mut tpl = rdkafka::TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    // A cluster just started answers NotCoordinator for a while (seen in CI): ask again.
    let mut tries = 0;
    let got = loop {
        match consumer.committed_offsets(tpl.clone(), Duration::from_secs(10)) {
            Ok(got) => break got,
            Err(e) if tries < 40 => {
                tries += 1;
                eprintln!("committed offsets of {group}: {e}; asking again");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => panic!("committed offsets of {group}: {e}"),
        }
    };
    (0..partitions)
        .map(|p| {
            got.find_partition(topic, p)
                .and_then(|e| e.offset().to_raw())
                .filter(|o| *o >= 0)
                .unwrap_or(-1)
        })
        .collect()
}

/// Reads `topic` on `bootstrap` as `group`, without joining it: from the group's committed
/// offsets (or from `start` when given) to the end, `read_committed`. (offset, value) per
/// partition.
fn read_from(
    bootstrap: &str,
    group: &str,
    topic: &str,
    partitions: i32,
    stop_at_value: Option<i64>,
) -> Vec<Vec<(i64, i64)>> {
    use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
    let consumer: BaseConsumer = kafka::client_config_at(bootstrap)
        .set("group.id", group)
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    let starts = committed(bootstrap, group, topic, partitions);
    let mut out = Vec::new();
    let mut commit = rdkafka::TopicPartitionList::new();
    for p in 0..partitions {
        let (_, high) = consumer
            .fetch_watermarks(topic, p, Duration::from_secs(10))
            .unwrap();
        let mut tpl = rdkafka::TopicPartitionList::new();
        let start = if starts[p as usize] >= 0 {
            rdkafka::Offset::Offset(starts[p as usize])
        } else {
            rdkafka::Offset::Beginning
        };
        tpl.add_partition_offset(topic, p, start).unwrap();
        consumer.assign(&tpl).unwrap();
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let position = match consumer
                .position()
                .unwrap()
                .find_partition(topic, p)
                .map(|e| e.offset())
            {
                Some(rdkafka::Offset::Offset(o)) => o,
                _ => -1,
            };
            if position >= high {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "reading {topic}-{p}");
            let Some(m) = consumer.poll(Duration::from_millis(200)) else {
                continue;
            };
            let m = m.unwrap();
            use rdkafka::message::Message;
            let v: i64 = std::str::from_utf8(m.payload().unwrap())
                .unwrap()
                .parse()
                .unwrap();
            seen.push((m.offset(), v));
            if stop_at_value.is_some_and(|s| v >= s) {
                commit
                    .add_partition_offset(topic, p, rdkafka::Offset::Offset(m.offset() + 1))
                    .unwrap();
                break;
            }
        }
        out.push(seen);
    }
    if commit.count() > 0 {
        consumer.commit(&commit, CommitMode::Sync).unwrap();
    }
    out
}

/// The last checkpoint of each partition of `group` in `topic` on `bootstrap`:
/// (upstream, downstream), each record checked to be Apache's format for `group` and `remote`.
fn latest_checkpoints(
    bootstrap: &str,
    topic: &str,
    group: &str,
    remote: &str,
) -> BTreeMap<i32, (i64, i64)> {
    let mut latest = BTreeMap::new();
    for r in read(bootstrap, topic, Isolation::ReadCommitted) {
        let (k, v) = (
            r.key_bytes.as_deref().unwrap(),
            r.value_bytes.as_deref().unwrap(),
        );
        let string = |b: &[u8], at: usize| -> (String, usize) {
            let len = i16::from_be_bytes([b[at], b[at + 1]]) as usize;
            (
                String::from_utf8(b[at + 2..at + 2 + len].to_vec()).unwrap(),
                at + 2 + len,
            )
        };
        let (g, at) = string(k, 0);
        let (t, at) = string(k, at);
        if g != group {
            continue;
        }
        let partition = i32::from_be_bytes(k[at..at + 4].try_into().unwrap());
        assert_eq!(i16::from_be_bytes([v[0], v[1]]), 0, "checkpoint version 0");
        let upstream = i64::from_be_bytes(v[2..10].try_into().unwrap());
        let downstream = i64::from_be_bytes(v[10..18].try_into().unwrap());
        assert_eq!(t, remote, "checkpoints name the remote topic");
        latest.insert(partition, (upstream, downstream));
    }
    latest
}

/// A consumer group reads half of a source topic (written in transactions, some aborted) and
/// stops; checkpoints translate its offsets, `sync.group.offsets.enabled` writes them to the
/// (idle) group on the target, and the group, moved there, reads the rest: no number skipped,
/// re-reads within Apache's bound. Checkpoints and heartbeats are in Apache's format.
#[tokio::test(flavor = "multi_thread")]
async fn a_consumer_group_moved_to_the_target_skips_nothing() {
    let source = source_cluster();
    let target = kafka::bootstrap_servers();
    let spec = ClusterSpec::new("mm2-cp").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    let topic = unique("mm2-cp");
    let alias = unique("cps").replace('-', "_");
    let remote = format!("{alias}.{topic}");
    let group = unique("mm2-cp-group");
    let (partitions, n, half) = (2i32, 4000i64, 2000i64);
    kafka::create_topics_at(&source, &[&topic], partitions, 1).await;
    let (s, t) = (source.clone(), topic.clone());
    tokio::task::spawn_blocking(move || {
        produce_numbered(&s, &t, partitions, 0..n, now_ms(), 100_000)
    })
    .await
    .unwrap();
    // The group reads each partition up to the number `half` and commits there.
    let (s, t, g) = (source.clone(), topic.clone(), group.clone());
    let read_on_source =
        tokio::task::spawn_blocking(move || read_from(&s, &g, &t, partitions, Some(half)))
            .await
            .unwrap();
    let source_positions = {
        let (s, t, g) = (source.clone(), topic.clone(), group.clone());
        tokio::task::spawn_blocking(move || committed(&s, &g, &t, partitions))
            .await
            .unwrap()
    };
    println!("group at {source_positions:?} on the source");

    let mut mirror = mirror_config(&source, &alias, &topic, 2);
    mirror["offset.lag.max"] = json!("100");
    create_connector(&w, "mm2-cp-source", mirror).await;
    let common = json!({
        "source.cluster.alias": alias,
        "target.cluster.alias": "target",
        "source.cluster.bootstrap.servers": source,
        "target.cluster.bootstrap.servers": target,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
    });
    let mut checkpoint = common.clone();
    checkpoint.as_object_mut().unwrap().extend(
        json!({
            "connector.class": MIRROR_CHECKPOINT,
            "tasks.max": "1",
            "groups": group,
            "topics": topic,
            "emit.checkpoints.interval.seconds": "1",
            "sync.group.offsets.enabled": "true",
            "sync.group.offsets.interval.seconds": "1",
            "refresh.groups.interval.seconds": "2",
            "checkpoints.topic.replication.factor": "1",
        })
        .as_object()
        .unwrap()
        .clone(),
    );
    create_connector(&w, "mm2-cp-checkpoint", checkpoint).await;
    let mut heartbeat = common.clone();
    heartbeat.as_object_mut().unwrap().extend(
        json!({
            "connector.class": MIRROR_HEARTBEAT,
            "heartbeats.topic.replication.factor": "1",
        })
        .as_object()
        .unwrap()
        .clone(),
    );
    create_connector(&w, "mm2-cp-heartbeat", heartbeat).await;

    // Every record copied, then the group's offsets written on the target.
    let (tb, r) = (target.clone(), remote.clone());
    eventually(Duration::from_secs(120), "the topic copied", || {
        let (tb, r) = (tb.clone(), r.clone());
        async move {
            let got =
                tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted).len())
                    .await
                    .unwrap();
            (got as i64 >= n).then_some(())
        }
    })
    .await;
    let (tb, r, g) = (target.clone(), remote.clone(), group.clone());
    let ct = format!("{alias}.checkpoints.internal");
    // The same offsets seen for this long: offset syncs the source task promotes at its
    // commits can still improve the translation (a later checkpoint, and the idle group moved
    // on to it) after a first match.
    let settled = Duration::from_secs(4);
    let seen: std::sync::Arc<std::sync::Mutex<Option<(Vec<i64>, std::time::Instant)>>> =
        Default::default();
    let target_positions = eventually(
        Duration::from_secs(90),
        "the group's offsets on the target",
        || {
            let (tb, r, g, ct) = (tb.clone(), r.clone(), g.clone(), ct.clone());
            let seen = seen.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    let c = committed(&tb, &g, &r, partitions);
                    // The group's offsets are the last checkpoint's (a checkpoint made while the
                    // copy was under way is overtaken by a later one, and the group moved on).
                    let latest = latest_checkpoints(&tb, &ct, &g, &r);
                    let done = (0..partitions).all(|p| {
                        c[p as usize] >= 0 && latest.get(&p).map(|l| l.1) == Some(c[p as usize])
                    });
                    let mut seen = seen.lock().unwrap();
                    if !done {
                        *seen = None;
                        return None;
                    }
                    match &*seen {
                        Some((prev, since)) if *prev == c => {
                            (since.elapsed() >= settled).then_some(c)
                        }
                        _ => {
                            *seen = Some((c, std::time::Instant::now()));
                            None
                        }
                    }
                })
                .await
                .unwrap()
            }
        },
    )
    .await;
    println!("group at {target_positions:?} on the target");

    // The group moves to the target and reads on.
    let (tb, r, g) = (target.clone(), remote.clone(), group.clone());
    let read_on_target =
        tokio::task::spawn_blocking(move || read_from(&tb, &g, &r, partitions, None))
            .await
            .unwrap();
    let mut reread = 0;
    for p in 0..partitions as usize {
        let before: Vec<i64> = read_on_source[p].iter().map(|(_, v)| *v).collect();
        let after: Vec<i64> = read_on_target[p].iter().map(|(_, v)| *v).collect();
        let expected: Vec<i64> = (0..n)
            .filter(|i| i % i64::from(partitions) == p as i64)
            .collect();
        let mut all: Vec<i64> = before.iter().chain(after.iter()).copied().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(
            all, expected,
            "partition {p}: every number read, before or after the move"
        );
        let again = after.iter().filter(|v| before.contains(v)).count();
        println!(
            "partition {p}: {} read on the source, {} on the target, {again} read twice",
            before.len(),
            after.len()
        );
        reread += again;
        // Apache's bound (OffsetSyncStore, invariant B): the sync kept before the group's
        // position is no further back than the group is from the latest sync (here the end of
        // the partition), give or take offset.lag.max.
        let bound = expected.len() - before.len() + 100;
        assert!(
            again <= bound,
            "partition {p}: {again} re-read, bound {bound}"
        );
    }
    println!("{reread} records re-read after the move");

    // Checkpoints (Apache's format) name the group, the remote topic and both offsets.
    let (tb, ct, g, r) = (
        target.clone(),
        format!("{alias}.checkpoints.internal"),
        group.clone(),
        remote.clone(),
    );
    let latest = tokio::task::spawn_blocking(move || latest_checkpoints(&tb, &ct, &g, &r))
        .await
        .unwrap();
    for p in 0..partitions {
        assert_eq!(
            latest.get(&p),
            Some(&(source_positions[p as usize], target_positions[p as usize])),
            "the last checkpoint of partition {p} is what the target group got"
        );
    }

    // Heartbeats: Apache's key {source alias, target alias} and value {version 0, timestamp}.
    let tb = target.clone();
    let beats =
        tokio::task::spawn_blocking(move || read(&tb, "heartbeats", Isolation::ReadCommitted))
            .await
            .unwrap();
    let mut key = Vec::new();
    for s in [alias.as_str(), "target"] {
        key.extend_from_slice(&(s.len() as i16).to_be_bytes());
        key.extend_from_slice(s.as_bytes());
    }
    let ours: Vec<_> = beats
        .iter()
        .filter(|r| r.key_bytes.as_deref() == Some(&key[..]))
        .collect();
    assert!(!ours.is_empty(), "heartbeats for {alias}->target");
    let v = ours[0].value_bytes.as_deref().unwrap();
    assert_eq!(v.len(), 10);
    assert_eq!(&v[..2], &[0, 0]);
    assert_eq!(
        Some(i64::from_be_bytes(v[2..10].try_into().unwrap())),
        ours[0].timestamp
    );
}

/// Remote topics follow the source: created with its partition count and the configs set on
/// it (minus Apache's excluded ones), grown when it gains partitions (the producers learn of
/// the new partition: Java's waits for it), and topics created later that match `topics` are
/// picked up, at `refresh.topics.interval.seconds`. At-least-once (librdkafka's producer).
#[tokio::test(flavor = "multi_thread")]
async fn remote_topics_follow_the_source_topics_configs_and_partitions() {
    follow_run(false).await;
}

/// The same under exactly-once (the worker's transactional producer).
#[tokio::test(flavor = "multi_thread")]
async fn remote_topics_follow_the_source_under_exactly_once() {
    follow_run(true).await;
}

async fn follow_run(eos: bool) {
    use rdkafka::admin::{
        AdminClient, AdminOptions, NewPartitions, NewTopic, ResourceSpecifier, TopicReplication,
    };
    use rdkafka::client::DefaultClientContext;
    let source = source_cluster();
    let spec = ClusterSpec::new("mm2-topics").set(
        "exactly.once.source.support",
        if eos { "enabled" } else { "disabled" },
    );
    let w = spec.start_worker().await;
    let prefix = unique("mm2-follow");
    let (first, later) = (format!("{prefix}-a"), format!("{prefix}-b"));
    let src_admin: AdminClient<DefaultClientContext> =
        kafka::client_config_at(&source).create().unwrap();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    src_admin
        .create_topics(
            [&NewTopic::new(&first, 2, TopicReplication::Fixed(1))
                .set("retention.ms", "123456789")
                .set("min.insync.replicas", "1")],
            &opts,
        )
        .await
        .unwrap();
    let mut config = mirror_config(&source, "fol", &format!("{prefix}-.*"), 4);
    if !eos {
        for k in [
            "exactly.once.support",
            "transaction.boundary",
            "transaction.boundary.interval.ms",
        ] {
            config.as_object_mut().unwrap().remove(k);
        }
    }
    config["refresh.topics.interval.seconds"] = json!("2");
    config["sync.topic.configs.interval.seconds"] = json!("2");
    create_connector(&w, "mm2-topics", config).await;
    let target_admin: AdminClient<DefaultClientContext> = kafka::client_config().create().unwrap();
    let remote = format!("fol.{first}");
    let partitions = |topic: String| async move {
        tokio::task::spawn_blocking(move || {
            use rdkafka::consumer::{BaseConsumer, Consumer};
            let c: BaseConsumer = kafka::client_config().create().unwrap();
            c.fetch_metadata(Some(&topic), Duration::from_secs(10))
                .ok()
                .and_then(|md| {
                    md.topics()
                        .first()
                        .filter(|t| t.error().is_none())
                        .map(|t| t.partitions().len())
                })
                .unwrap_or(0)
        })
        .await
        .unwrap()
    };
    eventually(
        Duration::from_secs(60),
        "the remote topic with 2 partitions",
        || {
            let r = remote.clone();
            async move { (partitions(r).await == 2).then_some(()) }
        },
    )
    .await;
    let described = target_admin
        .describe_configs([&ResourceSpecifier::Topic(&remote)], &opts)
        .await
        .unwrap();
    let resource = described.into_iter().next().unwrap().unwrap();
    let entries = resource.entry_map();
    assert_eq!(
        entries["retention.ms"].value.as_deref(),
        Some("123456789"),
        "a config set on the source topic is copied"
    );
    assert_eq!(
        entries["retention.ms"].source,
        rdkafka::admin::ConfigSource::DynamicTopic
    );
    assert!(
        entries["min.insync.replicas"].source != rdkafka::admin::ConfigSource::DynamicTopic,
        "min.insync.replicas is excluded (config.properties.exclude's default)"
    );

    // A config changed on the source follows; the target's own setting of an excluded
    // property stays.
    use rdkafka::admin::AlterConfig;
    target_admin
        .alter_configs(
            [
                &AlterConfig::new(ResourceSpecifier::Topic(&remote))
                    .set("min.insync.replicas", "1"),
            ],
            &opts,
        )
        .await
        .unwrap();
    src_admin
        .alter_configs(
            [&AlterConfig::new(ResourceSpecifier::Topic(&first))
                .set("retention.ms", "987654321")
                .set("min.insync.replicas", "1")],
            &opts,
        )
        .await
        .unwrap();
    eventually(
        Duration::from_secs(60),
        "the changed config on the remote topic",
        || {
            let (a, r, o) = (&target_admin, remote.clone(), &opts);
            async move {
                let d = a
                    .describe_configs([&ResourceSpecifier::Topic(&r)], o)
                    .await
                    .ok()?;
                let res = d.into_iter().next()?.ok()?;
                let m = res.entry_map();
                (m.get("retention.ms")?.value.as_deref() == Some("987654321")
                    && m.get("min.insync.replicas")?.source
                        == rdkafka::admin::ConfigSource::DynamicTopic)
                    .then_some(())
            }
        },
    )
    .await;

    // The source gains a partition and a matching topic appears. (Records stamped now: the
    // retention set above must not expire them.)
    let now = now_ms();
    src_admin
        .create_partitions([&NewPartitions::new(&first, 3)], &opts)
        .await
        .unwrap();
    kafka::create_topics_at(&source, &[&later], 1, 1).await;
    let (s, t) = (source.clone(), first.clone());
    tokio::task::spawn_blocking(move || produce_numbered(&s, &t, 3, 0..30, now, 100_000))
        .await
        .unwrap();
    let (s, t) = (source.clone(), later.clone());
    tokio::task::spawn_blocking(move || produce_numbered(&s, &t, 1, 0..10, now, 100_000))
        .await
        .unwrap();
    let tb = kafka::bootstrap_servers();
    let (r1, r2) = (remote.clone(), format!("fol.{later}"));
    eventually(
        Duration::from_secs(60),
        "every record, new partition and new topic included",
        || {
            let (tb, r1, r2) = (tb.clone(), r1.clone(), r2.clone());
            async move {
                tokio::task::spawn_blocking(move || {
                    let a = read(&tb, &r1, Isolation::ReadCommitted);
                    if a.len() < 30 || !a.iter().any(|r| r.partition == 2) {
                        return None;
                    }
                    (read(&tb, &r2, Isolation::ReadCommitted).len() >= 10).then_some(())
                })
                .await
                .unwrap()
            }
        },
    )
    .await;
}

/// The secured cluster (`deploy/kafka.sh up --secure`) as the source, configured with Java's
/// keys under `source.cluster.*` (SASL_SSL, SCRAM-SHA-512 through `sasl.jaas.config`, a
/// PKCS#12 truststore): its records are copied. The same with a wrong password fails the
/// connector with the authentication error.
#[tokio::test(flavor = "multi_thread")]
async fn a_secured_source_is_read_with_javas_keys_and_a_wrong_password_fails_with_the_reason() {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let s = connect_tests::secure::secure();
    let topic = unique("mm2-secure");
    kafka::create_topics_with(s.sasl_client_config("SCRAM-SHA-512"), &[&topic], 1, 1).await;
    let (t, base) = (topic.clone(), s.sasl_client_config("SCRAM-SHA-512"));
    tokio::task::spawn_blocking(move || {
        let p: BaseProducer = base.create().unwrap();
        for i in 0..20 {
            let v = i.to_string();
            p.send(BaseRecord::<(), String>::to(&t).payload(&v))
                .unwrap();
        }
        p.flush(Duration::from_secs(30)).unwrap();
    })
    .await
    .unwrap();
    let w = ClusterSpec::new("mm2-secure").start_worker().await;
    let secured = |password: &str| {
        let mut c = mirror_config(&s.sasl_ssl, "sec", &topic, 1);
        for k in [
            "exactly.once.support",
            "transaction.boundary",
            "transaction.boundary.interval.ms",
        ] {
            c.as_object_mut().unwrap().remove(k);
        }
        let extra = json!({
            "admin.timeout.ms": "5000",
            "source.cluster.security.protocol": "SASL_SSL",
            "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
            "source.cluster.sasl.jaas.config": format!(
                r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="{}" password="{password}";"#,
                s.scram_user
            ),
            "source.cluster.ssl.truststore.type": "PKCS12",
            "source.cluster.ssl.truststore.location": s.truststore_p12.to_string_lossy(),
            "source.cluster.ssl.truststore.password": s.truststore_p12_password,
        });
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    create_connector(&w, "mm2-secure-ok", secured(&s.scram_password)).await;
    create_connector(&w, "mm2-secure-bad", secured("not-the-password")).await;
    let (tb, r) = (kafka::bootstrap_servers(), format!("sec.{topic}"));
    eventually(
        Duration::from_secs(60),
        "the secured source's records copied",
        || {
            let (tb, r) = (tb.clone(), r.clone());
            async move {
                let got = tokio::task::spawn_blocking(move || {
                    read(&tb, &r, Isolation::ReadCommitted).len()
                })
                .await
                .unwrap();
                (got >= 20).then_some(())
            }
        },
    )
    .await;
    let trace = eventually(
        Duration::from_secs(60),
        "the wrong password's connector FAILED",
        || async {
            let st = w.get("/connectors/mm2-secure-bad/status").await.ok()?;
            (st["connector"]["state"] == "FAILED").then(|| {
                st["connector"]["trace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
        },
    )
    .await;
    assert!(
        trace.contains("cluster \"sec\"") && trace.to_lowercase().contains("authentication"),
        "the trace names the cluster and the authentication failure: {trace}"
    );
}

/// `(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)` lines of Apache's
/// `AclCommand --list --topic <topic>` on `bootstrap`: the topic's LITERAL and PREFIXED ACLs
/// whose pattern name is `topic`.
fn listed_acls(bootstrap: &str, topic: &str) -> std::collections::BTreeSet<String> {
    kafka::kafka_tool(
        &[
            "org.apache.kafka.tools.AclCommand",
            "--bootstrap-server",
            bootstrap,
            "--list",
            "--topic",
            topic,
        ],
        "",
    )
    .lines()
    .map(str::trim)
    .filter(|l| l.starts_with("(principal="))
    .map(str::to_owned)
    .collect()
}

fn add_acls(bootstrap: &str, args: &[&str]) {
    let mut all = vec![
        "org.apache.kafka.tools.AclCommand",
        "--bootstrap-server",
        bootstrap,
        "--add",
        "--force",
    ];
    all.extend_from_slice(args);
    kafka::kafka_tool(&all, "");
}

fn acl_line(principal: &str, operation: &str, permission: &str) -> String {
    format!(
        "(principal=User:{principal}, host=*, operation={operation}, permissionType={permission})"
    )
}

/// Topic ACL sync (`sync.topic.acls.enabled`, on by default as in Apache) against a real
/// authorizer: `deploy/kafka.sh up --acl` (Kafka's StandardAuthorizer) is both the source and
/// the target (and the worker's cluster), the remote topic `src.<topic>` beside its source.
/// ACLs written with Apache's own `AclCommand` on the source topic appear on the remote topic
/// as Apache's `MirrorSourceConnector` translates them: LITERAL ones only, ALLOW WRITE dropped,
/// ALLOW ALL as ALLOW READ, DENY kept; a topic the connector does not replicate gets nothing;
/// one added while the connector runs follows at `sync.topic.acls.interval.seconds`.
#[tokio::test(flavor = "multi_thread")]
async fn topic_acls_follow_the_source_as_apache_translates_them() {
    let acl = kafka::kafka_sh_locked(&["up", "--acl"]);
    let topic = unique("mm2-acl");
    let other = unique("mm2-acl-other");
    kafka::create_topics_at(&acl, &[&topic, &other], 1, 1).await;
    let (b, t, o) = (acl.clone(), topic.clone(), other.clone());
    tokio::task::spawn_blocking(move || {
        add_acls(
            &b,
            &[
                "--allow-principal",
                "User:alice",
                "--allow-principal",
                "User:bob",
                "--operation",
                "Read",
                "--operation",
                "Write",
                "--topic",
                &t,
            ],
        );
        add_acls(
            &b,
            &[
                "--allow-principal",
                "User:carol",
                "--operation",
                "All",
                "--topic",
                &t,
                "--topic",
                &o,
            ],
        );
        add_acls(
            &b,
            &[
                "--deny-principal",
                "User:dave",
                "--operation",
                "Write",
                "--topic",
                &t,
            ],
        );
        add_acls(
            &b,
            &[
                "--allow-principal",
                "User:erin",
                "--operation",
                "Read",
                "--topic",
                &t,
                "--resource-pattern-type",
                "prefixed",
            ],
        );
    })
    .await
    .unwrap();
    let w = ClusterSpec::new("mm2-acl")
        .set("bootstrap.servers", &acl)
        .start_worker()
        .await;
    let mut config = mirror_config(&acl, "src", &topic, 1);
    for k in [
        "exactly.once.support",
        "transaction.boundary",
        "transaction.boundary.interval.ms",
    ] {
        config.as_object_mut().unwrap().remove(k);
    }
    config["target.cluster.bootstrap.servers"] = json!(acl);
    config["sync.topic.acls.interval.seconds"] = json!("2");
    create_connector(&w, "mm2-acl", config).await;

    let remote = format!("src.{topic}");
    let mut expected: std::collections::BTreeSet<String> = [
        acl_line("alice", "READ", "ALLOW"),
        acl_line("bob", "READ", "ALLOW"),
        acl_line("carol", "READ", "ALLOW"),
        acl_line("dave", "WRITE", "DENY"),
    ]
    .into();
    let wait_for = |expected: std::collections::BTreeSet<String>, what: &'static str| {
        let (b, r) = (acl.clone(), remote.clone());
        async move {
            let mut last = Default::default();
            let found = tokio::time::timeout(Duration::from_secs(60), async {
                loop {
                    let (b, r) = (b.clone(), r.clone());
                    last = tokio::task::spawn_blocking(move || listed_acls(&b, &r))
                        .await
                        .unwrap();
                    if last == expected {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            })
            .await;
            assert!(
                found.is_ok(),
                "{what}: the remote topic's ACLs are {last:#?}, expected {expected:#?}"
            );
        }
    };
    wait_for(expected.clone(), "the source's ACLs translated").await;
    let (b, t) = (acl.clone(), topic.clone());
    tokio::task::spawn_blocking(move || {
        add_acls(
            &b,
            &[
                "--allow-principal",
                "User:frank",
                "--operation",
                "Describe",
                "--topic",
                &t,
            ],
        );
    })
    .await
    .unwrap();
    expected.insert(acl_line("frank", "DESCRIBE", "ALLOW"));
    wait_for(expected, "an ACL added later synced too").await;
    let (b, o) = (acl.clone(), format!("src.{other}"));
    let not_replicated = tokio::task::spawn_blocking(move || listed_acls(&b, &o))
        .await
        .unwrap();
    assert!(
        not_replicated.is_empty(),
        "a topic the connector does not replicate gets no ACLs: {not_replicated:?}"
    );
}

/// The task-level failure path: the connector reaches the secured source cluster (its admin
/// client logs in as the cluster's SCRAM user) but the task's consumer logs in as a user the
/// cluster does not know yet. The task FAILS with the authentication error in its trace while
/// the connector stays RUNNING; once the user is created on the broker (Apache's
/// `ConfigCommand`), the worker's automatic restart brings the task back and the records are
/// copied.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_refused_by_its_source_cluster_fails_with_the_reason_and_heals_by_itself() {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
    let s = connect_tests::secure::secure();
    let topic = unique("mm2-task-auth");
    // A fresh user per run: the heal below creates it.
    let user = unique("mm2-user");
    kafka::create_topics_with(s.sasl_client_config("SCRAM-SHA-512"), &[&topic], 2, 1).await;
    let (t, base) = (topic.clone(), s.sasl_client_config("SCRAM-SHA-512"));
    tokio::task::spawn_blocking(move || {
        let p: BaseProducer = base.create().unwrap();
        for i in 0..40 {
            let v = i.to_string();
            p.send(BaseRecord::<(), String>::to(&t).payload(&v))
                .unwrap();
        }
        p.flush(Duration::from_secs(30)).unwrap();
    })
    .await
    .unwrap();
    let w = ClusterSpec::new("mm2-task-auth")
        .set("auto.restart.backoff.initial.ms", "1000")
        .set("auto.restart.backoff.max.ms", "2000")
        .start_worker()
        .await;
    let jaas = |user: &str, password: &str| {
        format!(
            r#"org.apache.kafka.common.security.scram.ScramLoginModule required username="{user}" password="{password}";"#
        )
    };
    let mut config = mirror_config(&s.sasl_ssl, "sec", &topic, 1);
    for k in [
        "exactly.once.support",
        "transaction.boundary",
        "transaction.boundary.interval.ms",
    ] {
        config.as_object_mut().unwrap().remove(k);
    }
    let extra = json!({
        "admin.timeout.ms": "5000",
        "source.cluster.security.protocol": "SASL_SSL",
        "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
        "source.cluster.sasl.jaas.config": jaas(&user, "mm2-secret"),
        "source.cluster.ssl.truststore.type": "PKCS12",
        "source.cluster.ssl.truststore.location": s.truststore_p12.to_string_lossy(),
        "source.cluster.ssl.truststore.password": s.truststore_p12_password,
        // The connector's admin and the offset-sync producer log in as the known user.
        "source.admin.sasl.jaas.config": jaas(&s.scram_user, &s.scram_password),
        "source.producer.sasl.jaas.config": jaas(&s.scram_user, &s.scram_password),
    });
    config
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    create_connector(&w, "mm2-task-auth", config).await;
    let status = eventually(Duration::from_secs(90), "the task FAILED", || async {
        let st = w.get("/connectors/mm2-task-auth/status").await.ok()?;
        (st["tasks"][0]["state"] == "FAILED").then_some(st)
    })
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("cluster \"sec\"") && trace.to_lowercase().contains("authentication"),
        "the task's trace names the source cluster and the refused login: {trace}"
    );
    assert_eq!(
        status["connector"]["state"], "RUNNING",
        "only the task failed: {status}"
    );
    // The user appears on the broker (SCRAM credentials through Apache's ConfigCommand).
    let (env, u) = (std::env::var("KAFKA_SECURE_ENV").unwrap(), user.clone());
    tokio::task::spawn_blocking(move || {
        let dir = std::path::Path::new(&env).parent().unwrap().to_owned();
        let props = dir.join("client-scram-sha-512.properties");
        kafka::kafka_tool(
            &[
                "org.apache.kafka.tools.ConfigCommand",
                "--bootstrap-server",
                &connect_tests::secure::secure().sasl_ssl,
                "--command-config",
                &props.to_string_lossy(),
                "--alter",
                "--add-config",
                "SCRAM-SHA-512=[password=mm2-secret]",
                "--entity-type",
                "users",
                "--entity-name",
                &u,
            ],
            "",
        );
    })
    .await
    .unwrap();
    eventually(Duration::from_secs(90), "the task running again", || {
        running_tasks(&w, "mm2-task-auth", 1)
    })
    .await;
    let (tb, r) = (kafka::bootstrap_servers(), format!("sec.{topic}"));
    eventually(Duration::from_secs(60), "the records copied", || {
        let (tb, r) = (tb.clone(), r.clone());
        async move {
            let got =
                tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted).len())
                    .await
                    .unwrap();
            (got >= 40).then_some(())
        }
    })
    .await;
}

/// The task-level failure path for an unreachable source: the connector's clients reach the
/// source cluster directly, the task's consumer bootstraps through a TCP proxy that is cut
/// (`source.consumer.bootstrap.servers`). The task FAILS naming the cluster while the connector
/// runs; once the proxy is restored, the automatic restart brings the task back and the records
/// are copied.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_source_cluster_is_unreachable_fails_and_heals_by_itself() {
    let source = source_cluster();
    let proxy = connect_tests::proxy::TcpProxy::start(&source).await;
    proxy.cut();
    let w = ClusterSpec::new("mm2-task-gone")
        .set("auto.restart.backoff.initial.ms", "1000")
        .set("auto.restart.backoff.max.ms", "2000")
        .start_worker()
        .await;
    let topic = unique("mm2-task-gone");
    kafka::create_topics_at(&source, &[&topic], 1, 1).await;
    let (s, t) = (source.clone(), topic.clone());
    tokio::task::spawn_blocking(move || produce_numbered(&s, &t, 1, 0..100, now_ms(), 100_000))
        .await
        .unwrap();
    let mut config = mirror_config(&source, "gone", &topic, 1);
    config["admin.timeout.ms"] = json!("3000");
    config["source.consumer.bootstrap.servers"] = json!(proxy.addr.to_string());
    for k in [
        "exactly.once.support",
        "transaction.boundary",
        "transaction.boundary.interval.ms",
    ] {
        config.as_object_mut().unwrap().remove(k);
    }
    create_connector(&w, "mm2-task-gone", config).await;
    let status = eventually(Duration::from_secs(90), "the task FAILED", || async {
        let st = w.get("/connectors/mm2-task-gone/status").await.ok()?;
        (st["tasks"][0]["state"] == "FAILED").then_some(st)
    })
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains("source cluster \"gone\" failing"),
        "the task's trace names the source cluster: {trace}"
    );
    assert_eq!(
        status["connector"]["state"], "RUNNING",
        "only the task failed: {status}"
    );
    proxy.restore();
    eventually(Duration::from_secs(90), "the task running again", || {
        running_tasks(&w, "mm2-task-gone", 1)
    })
    .await;
    let (tb, r) = (kafka::bootstrap_servers(), format!("gone.{topic}"));
    eventually(Duration::from_secs(60), "the records copied", || {
        let (tb, r) = (tb.clone(), r.clone());
        async move {
            let got =
                tokio::task::spawn_blocking(move || read(&tb, &r, Isolation::ReadCommitted).len())
                    .await
                    .unwrap();
            (got >= 100).then_some(())
        }
    })
    .await;
}
