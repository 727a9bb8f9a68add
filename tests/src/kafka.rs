//! Real-broker helpers.

use std::time::{Duration, Instant};

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;

/// The default single-node cluster of `deploy/kafka.sh up`.
const DEFAULT_BOOTSTRAP: &str = "127.0.0.1:39092";

/// Where the test Kafka is: `KAFKA_BOOTSTRAP_SERVERS`, else `deploy/kafka.sh`'s default port.
pub fn bootstrap_servers() -> String {
    std::env::var("KAFKA_BOOTSTRAP_SERVERS").unwrap_or_else(|_| DEFAULT_BOOTSTRAP.to_owned())
}

/// Client config pointing at the test cluster.
pub fn client_config() -> ClientConfig {
    client_config_at(&bootstrap_servers())
}

/// Client config pointing at another cluster (e.g. the three-node one).
pub fn client_config_at(bootstrap: &str) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", bootstrap);
    c
}

/// Creates topics with `partitions` partitions each and replication factor 1, and fails the
/// test with the broker's reason if Kafka is not there (run `deploy/kafka.sh up` or `tests/run.sh`).
pub async fn create_topics(names: &[&str], partitions: i32) {
    create_topics_at(&bootstrap_servers(), names, partitions, 1).await
}

/// Creates topics on the cluster at `bootstrap` with the given replication factor.
pub async fn create_topics_at(bootstrap: &str, names: &[&str], partitions: i32, replication: i32) {
    create_topics_with(client_config_at(bootstrap), names, partitions, replication).await
}

/// Creates topics through a client made from `base` (e.g. one for the secured cluster).
pub async fn create_topics_with(
    base: ClientConfig,
    names: &[&str],
    partitions: i32,
    replication: i32,
) {
    create_configured_topics(base, names, partitions, replication, &[]).await
}

/// Creates topics on the test cluster whose records never expire, whatever their timestamps.
///
/// The broker deletes a segment once its newest record's timestamp is older than the retention
/// (`log.retention.hours=24` in `deploy/kafka.sh`), at its next retention check (every 5
/// minutes). Records produced with fixed timestamps from the past (to get known object names or
/// partition paths) would vanish at the first check that comes during the test, and consumers
/// then start from the new log start: the end. Topics for such records are made with this.
pub async fn create_topics_keeping_old_records(names: &[&str], partitions: i32) {
    create_configured_topics(
        client_config(),
        names,
        partitions,
        1,
        &[("retention.ms", "-1"), ("retention.bytes", "-1")],
    )
    .await
}

/// Creates topics with topic-level `configs`.
async fn create_configured_topics(
    base: ClientConfig,
    names: &[&str],
    partitions: i32,
    replication: i32,
    configs: &[(&str, &str)],
) {
    let bootstrap = base.get("bootstrap.servers").unwrap_or_default().to_owned();
    let admin: AdminClient<DefaultClientContext> =
        base.create().expect("admin client config is valid");
    let topics: Vec<NewTopic<'_>> = names
        .iter()
        .map(|n| {
            configs.iter().fold(
                NewTopic::new(n, partitions, TopicReplication::Fixed(replication)),
                |t, (k, v)| t.set(k, v),
            )
        })
        .collect();
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin
        .create_topics(&topics, &opts)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "failed to create topics on Kafka at {bootstrap} (is it running? `deploy/kafka.sh up`): {e}"
            )
        });
    for r in results {
        if let Err((topic, code)) = r {
            panic!("failed to create topic {topic}: {code}");
        }
    }
}

/// `read_committed` or `read_uncommitted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    ReadUncommitted,
}

impl Isolation {
    fn as_config(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read_committed",
            Isolation::ReadUncommitted => "read_uncommitted",
        }
    }
}

/// One consumed record, as strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Option<String>,
    pub value: Option<String>,
    /// The key and value as bytes (binary formats: Avro, the registry wire format).
    pub key_bytes: Option<Vec<u8>>,
    pub value_bytes: Option<Vec<u8>>,
    /// Header names and values (as UTF-8, lossily).
    pub headers: Vec<(String, String)>,
    /// The record's timestamp (milliseconds), when it has one.
    pub timestamp: Option<i64>,
}

/// One poll of a reader: a record, or `None` when nothing came (or the topic does not exist
/// yet: a task creates its topic by producing to it). Other consumer errors fail the test.
fn poll_record(consumer: &BaseConsumer, topics: &[&str]) -> Option<Record> {
    match consumer.poll(Duration::from_millis(200))? {
        Err(KafkaError::MessageConsumption(
            RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic,
        )) => None,
        Err(e) => panic!("consumer error reading {topics:?}: {e}"),
        Ok(m) => Some(Record {
            topic: m.topic().to_owned(),
            partition: m.partition(),
            offset: m.offset(),
            key: m.key().map(|k| String::from_utf8_lossy(k).into_owned()),
            value: m.payload().map(|v| String::from_utf8_lossy(v).into_owned()),
            key_bytes: m.key().map(<[u8]>::to_vec),
            value_bytes: m.payload().map(<[u8]>::to_vec),
            timestamp: m.timestamp().to_millis(),
            headers: m
                .headers()
                .map(|hs| {
                    rdkafka::message::Headers::iter(hs)
                        .map(|h| {
                            (
                                h.key.to_owned(),
                                String::from_utf8_lossy(h.value.unwrap_or_default()).into_owned(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }),
    }
}

/// Reads `topics` from the beginning with the given isolation until `done` says the records
/// seen so far are complete, or `timeout` passes (then it panics, printing what it saw).
pub fn read_until(
    topics: &[&str],
    isolation: Isolation,
    timeout: Duration,
    mut done: impl FnMut(&[Record]) -> bool,
) -> Vec<Record> {
    let consumer: BaseConsumer = client_config()
        .set("group.id", crate::unique("reader"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("isolation.level", isolation.as_config())
        .create()
        .expect("consumer config is valid");
    consumer.subscribe(topics).expect("subscribe");
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    // `done` looks at every record seen so far, so it runs when the reader is idle or at most
    // every 100 ms, not after each record: per record it made reading n records cost n² (tens
    // of seconds for a few thousand records in a debug build).
    let mut last_check: Option<Instant> = None;
    loop {
        let due = last_check.is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        if due {
            if done(&seen) {
                break;
            }
            last_check = Some(Instant::now());
        }
        assert!(
            Instant::now() < deadline,
            "timed out reading {topics:?} ({isolation:?}); saw {} records, the last: {:?}",
            seen.len(),
            seen.last()
        );
        match poll_record(&consumer, topics) {
            Some(r) => seen.push(r),
            None => last_check = None,
        }
    }
    seen
}

/// Produces records (key, value) to `topic` and waits for every acknowledgement.
/// Keyed records land where Java's default partitioner puts them (murmur2 of the key), as the
/// worker's own producers do: a test record and a worker record of one key share a partition,
/// so their order is defined (an offsets-topic record and the worker's tombstone for it).
pub async fn produce(topic: &str, records: impl Iterator<Item = (Option<String>, Option<String>)>) {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = client_config()
        .set("acks", "all")
        .set("partitioner", "murmur2_random")
        .create()
        .expect("producer config");
    let mut pending = Vec::new();
    let records: Vec<_> = records.collect();
    for (k, v) in &records {
        let mut r: FutureRecord<'_, str, str> = FutureRecord::to(topic);
        if let Some(k) = k {
            r = r.key(k.as_str());
        }
        if let Some(v) = v {
            r = r.payload(v.as_str());
        }
        pending.push(
            producer
                .send_result(r)
                .map_err(|(e, _)| e)
                .expect("enqueue"),
        );
    }
    for p in pending {
        p.await
            .expect("delivery")
            .map_err(|(e, _)| e)
            .expect("acknowledged");
    }
}

/// Produces binary values (no key) to `topic` and waits for every acknowledgement.
pub async fn produce_bytes(topic: &str, values: Vec<Vec<u8>>) {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = client_config()
        .set("acks", "all")
        .create()
        .expect("producer config");
    for v in &values {
        producer
            .send(
                FutureRecord::<'_, (), [u8]>::to(topic).payload(v.as_slice()),
                Duration::from_secs(30),
            )
            .await
            .map_err(|(e, _)| e)
            .expect("acknowledged");
    }
}

/// Produces values to the given partitions of `topic` with one idempotent producer and waits
/// for every acknowledgement: each partition gets its records in order, each once.
pub async fn produce_to_partitions(topic: &str, records: impl Iterator<Item = (i32, String)>) {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let producer: FutureProducer = client_config()
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .create()
        .expect("producer config");
    let records: Vec<_> = records.collect();
    let mut pending = Vec::new();
    for (p, v) in &records {
        let r: FutureRecord<'_, str, str> = FutureRecord::to(topic).partition(*p).payload(v);
        pending.push(
            producer
                .send_result(r)
                .map_err(|(e, _)| e)
                .expect("enqueue"),
        );
    }
    for p in pending {
        p.await
            .expect("delivery")
            .map_err(|(e, _)| e)
            .expect("acknowledged");
    }
}

/// Reads every record of `topics` up to their current end: the high watermark, or for
/// `read_committed` the last stable offset (the consumer's position moves past transaction
/// markers and aborted records). Panics if the end is not reached within `timeout`.
pub fn read_all(topics: &[&str], isolation: Isolation, timeout: Duration) -> Vec<Record> {
    read_all_at(&bootstrap_servers(), topics, isolation, timeout)
}

/// [`read_all`] on the cluster at `bootstrap`.
pub fn read_all_at(
    bootstrap: &str,
    topics: &[&str],
    isolation: Isolation,
    timeout: Duration,
) -> Vec<Record> {
    read_all_with(client_config_at(bootstrap), topics, isolation, timeout)
}

/// The high watermark of `topic`/`partition`. A topic created moments ago may not have a
/// leader yet (`NOT_LEADER_OR_FOLLOWER`, `LEADER_NOT_AVAILABLE`, `UNKNOWN_TOPIC_OR_PARTITION`
/// from a broker whose metadata lags): those are retried for 30 s; any other error panics.
fn high_watermark(consumer: &BaseConsumer, topic: &str, partition: i32) -> i64 {
    use rdkafka::error::{KafkaError, RDKafkaErrorCode as C};
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match consumer.fetch_watermarks(topic, partition, Duration::from_secs(10)) {
            Ok((_, high)) => return high,
            Err(KafkaError::MetadataFetch(
                C::NotLeaderForPartition
                | C::LeaderNotAvailable
                | C::UnknownTopicOrPartition
                | C::UnknownPartition,
            )) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("watermarks of {topic}/{partition}: {e}"),
        }
    }
}

/// [`read_all_at`] through a client made from `base` (e.g. one for the secured cluster).
pub fn read_all_with(
    mut base: ClientConfig,
    topics: &[&str],
    isolation: Isolation,
    timeout: Duration,
) -> Vec<Record> {
    let consumer: BaseConsumer = base
        .set("group.id", crate::unique("reader"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .set("isolation.level", isolation.as_config())
        .create()
        .expect("consumer config is valid");
    let mut ends = std::collections::BTreeMap::new();
    let mut tpl = rdkafka::TopicPartitionList::new();
    for t in topics {
        let md = consumer
            .fetch_metadata(Some(t), Duration::from_secs(10))
            .expect("metadata");
        for topic in md.topics() {
            for p in topic.partitions() {
                let high = high_watermark(&consumer, t, p.id());
                ends.insert((t.to_string(), p.id()), high);
                tpl.add_partition_offset(t, p.id(), rdkafka::Offset::Beginning)
                    .unwrap();
            }
        }
    }
    consumer.assign(&tpl).expect("assign");
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    loop {
        let positions = consumer.position().expect("position");
        let done = ends.iter().all(|((t, p), end)| {
            *end == 0
                || positions
                    .find_partition(t, *p)
                    .and_then(|e| match e.offset() {
                        rdkafka::Offset::Offset(o) => Some(o >= *end),
                        _ => None,
                    })
                    .unwrap_or(false)
        });
        if done {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out reading {topics:?} to the end ({isolation:?}); saw {}",
            seen.len()
        );
        if let Some(r) = poll_record(&consumer, topics) {
            seen.push(r);
        }
    }
}

/// Creates a compacted topic (as Connect's internal topics are).
pub async fn create_compacted_topic(name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = client_config()
        .create()
        .expect("admin client config is valid");
    let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1))
        .set("cleanup.policy", "compact");
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    for r in admin
        .create_topics(&[topic], &opts)
        .await
        .expect("create topic")
    {
        r.unwrap_or_else(|(t, e)| panic!("failed to create topic {t}: {e}"));
    }
}

/// The sum of the offsets `group` committed for the partitions of `topic`.
pub fn committed_total(group: &str, topic: &str, partitions: i32) -> i64 {
    let consumer: BaseConsumer = client_config().set("group.id", group).create().unwrap();
    let mut tpl = rdkafka::TopicPartitionList::new();
    for p in 0..partitions {
        tpl.add_partition(topic, p);
    }
    let committed = consumer
        .committed_offsets(tpl, Duration::from_secs(10))
        .unwrap();
    committed
        .elements()
        .iter()
        .filter_map(|e| e.offset().to_raw())
        .filter(|o| *o >= 0)
        .sum()
}

/// The checkout's `deploy/kafka.sh`.
fn kafka_sh() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("deploy/kafka.sh")
}

/// Runs one of Apache Kafka's own tools (`deploy/kafka.sh tool CLASS ARGS...`) with `stdin`;
/// panics with its output unless it succeeds. Returns its stdout.
pub fn kafka_tool(args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(kafka_sh())
        .arg("tool")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("deploy/kafka.sh tool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kafka tool {args:?} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The compression codec of every record batch of `topic`'s partition 0, read from the broker's
/// log with Kafka's `DumpLogSegments`. Needs the single-node cluster of this checkout's
/// `deploy/kafka.sh up` (its data directory is read directly).
pub fn batch_codecs(topic: &str) -> Vec<String> {
    let home = std::env::var("KAFKA_HOME_DIR").map_or_else(
        |_| {
            kafka_sh()
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join(".local/kafka")
        },
        std::path::PathBuf::from,
    );
    let props = std::fs::read_to_string(home.join("cluster-n1/node-1/server.properties"))
        .expect("the single-node cluster of deploy/kafka.sh up (server.properties)");
    let data = props
        .lines()
        .find_map(|l| l.strip_prefix("log.dirs="))
        .expect("log.dirs in server.properties");
    let dir = std::path::Path::new(data).join(format!("{topic}-0"));
    let mut segments: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let files: Vec<String> = segments.iter().map(|p| p.display().to_string()).collect();
    let out = kafka_tool(
        &[
            "org.apache.kafka.tools.DumpLogSegments",
            "--files",
            &files.join(","),
        ],
        "",
    );
    out.lines()
        .filter_map(|l| l.split("compresscodec: ").nth(1))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Runs `deploy/kafka.sh ARGS` (e.g. `up --tv1`) under a lock shared by every test process, so
/// tests starting the same cluster at once do not race inside the script; the last line's
/// bootstrap servers.
pub fn kafka_sh_locked(args: &[&str]) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_owned();
    let lock = root.join(".local/kafka-sh.lock");
    let _ = std::fs::create_dir_all(root.join(".local"));
    // `--close`: the lock is held by flock itself, not inherited by kafka.sh's children (a
    // broker `up` starts would otherwise hold it for its whole life, and the next locked call
    // would wait forever).
    let out = std::process::Command::new("flock")
        .arg("--close")
        .arg(&lock)
        .arg(root.join("deploy/kafka.sh"))
        .args(args)
        .output()
        .expect("flock deploy/kafka.sh");
    assert!(
        out.status.success(),
        "kafka.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .trim_start_matches("KAFKA_BOOTSTRAP_SERVERS=")
        .to_owned()
}
