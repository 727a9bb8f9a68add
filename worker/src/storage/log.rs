//! `KafkaBasedLog`: one internal topic, tailed from the beginning, plus a producer for writes.
//!
//! ```text
//!   send()/send_batch() ──▶ producer ──▶ topic (all partitions)
//!                                          │
//!   consumer thread: assign all partitions at Beginning, poll forever
//!        │ every record, in partition order ──▶ on_record callback (store state)
//!        └ ReadToEnd: end offsets ─▶ poll until position ≥ end on every partition ─▶ reply
//! ```
//!
//! The consumer lives on a dedicated OS thread because `poll`, `fetch_watermarks` and
//! `fetch_metadata` block; async callers talk to it through a channel and a oneshot reply.
//!
//! # Guarantees
//!
//! - When `read_to_end` resolves, `on_record` has returned for every record whose offset is below
//!   the end offsets fetched *after* the call was made: anything acknowledged before the call is
//!   visible in the store's state.
//! - In `read_committed` mode the end offsets are the high watermarks fetched by a separate
//!   `read_uncommitted` client (Java's `ListOffsets(latest, READ_UNCOMMITTED)`), so a read to the
//!   end waits for open transactions to commit or abort; the consumer's position moves past
//!   transaction markers and aborted batches, so it does reach the high watermark.
//! - Writes use `acks=all`, idempotence on and Java's murmur2 partitioner, so a key lands on the
//!   partition a Java worker would have chosen (compaction and per-key ordering stay intact across
//!   mixed clusters).
//!
//! # Errors
//!
//! Client creation, metadata and watermark failures surface as [`StorageError::Kafka`];
//! a stopped log answers [`StorageError::Closed`]. Record-level consume errors are logged and
//! skipped; the consumer keeps tailing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use futures::future::try_join_all;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::util::Timeout;
use tokio::sync::oneshot;

use super::StorageError;

/// How long fetching a topic's end offsets may keep retrying before it fails (Java's
/// `default.api.timeout.ms`): a broker restart can leave partitions without a known leader
/// for longer than one request's timeout.
const END_OFFSETS_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one metadata or watermark request may take; a failed one is retried (after a
/// metadata refresh) until [`END_OFFSETS_TIMEOUT`].
const METADATA_TIMEOUT: Duration = Duration::from_secs(5);
/// Poll interval of the consumer thread; bounds the latency of a read-to-end request.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// One record consumed from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumedRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    /// `None` is a tombstone.
    pub value: Option<Vec<u8>>,
}

/// A record to write: key bytes and value bytes (`None` = tombstone).
pub type RawRecord = (Vec<u8>, Option<Vec<u8>>);

type ReadToEndReply = oneshot::Sender<Result<(), StorageError>>;

/// Called on the consumer thread for every record, in offset order per partition.
pub type RecordCallback = Box<dyn FnMut(&ConsumedRecord) + Send + 'static>;

/// What a [`KafkaBasedLog`] needs.
#[derive(Clone)]
pub struct LogConfig {
    pub topic: String,
    /// Base client settings (bootstrap servers, security); producer and consumer settings of the
    /// log are laid on top.
    pub client: ClientConfig,
    /// `client.id` for the log's clients (Connect uses `<group.id>-configs` etc.).
    pub client_id: String,
    /// Consume with `isolation.level=read_committed` (exactly-once mode).
    pub read_committed: bool,
}

enum Command {
    ReadToEnd(ReadToEndReply),
    Stop,
}

/// A Kafka topic used as a replicated log; see the module docs.
pub struct KafkaBasedLog {
    topic: String,
    producer: FutureProducer,
    commands: std_mpsc::Sender<Command>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for KafkaBasedLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaBasedLog")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

/// librdkafka's `partitioner` that matches Java's default partitioner for keyed records
/// (`toPositive(murmur2(keyBytes)) % numPartitions`).
pub const JAVA_PARTITIONER: &str = "murmur2_random";

/// Sets [`JAVA_PARTITIONER`], for every producer of this worker: internal topics, task and
/// dead-letter queue producers. Settings applied after it (overrides) still win.
pub fn java_partitioner(c: &mut ClientConfig) -> &mut ClientConfig {
    c.set("partitioner", JAVA_PARTITIONER)
}

/// Producer settings shared by every internal-topic writer.
pub fn producer_config(base: &ClientConfig, client_id: &str) -> ClientConfig {
    let mut c = base.clone();
    c.set("client.id", client_id)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        // Java's delivery.timeout.ms = Integer.MAX_VALUE: never give up on an internal write;
        // callers bound their wait instead.
        .set("message.timeout.ms", "0");
    // Same partition as Java's default partitioner for the same key bytes.
    java_partitioner(&mut c);
    c
}

fn consumer_config(base: &ClientConfig, client_id: &str, read_committed: bool) -> ClientConfig {
    let mut c = base.clone();
    c.set("client.id", client_id)
        // Never joins the group (partitions are assigned manually), but librdkafka refuses
        // `assign` without a group id.
        .set("group.id", client_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "false")
        // librdkafka defaults to read_committed; Connect's default is read_uncommitted.
        .set(
            "isolation.level",
            if read_committed {
                "read_committed"
            } else {
                "read_uncommitted"
            },
        );
    c
}

impl KafkaBasedLog {
    /// Starts the log: assigns every partition of the topic from the beginning and reads to the
    /// end before returning, so `on_record` has seen the whole topic.
    pub async fn start(config: LogConfig, on_record: RecordCallback) -> Result<Self, StorageError> {
        let producer: FutureProducer = producer_config(&config.client, &config.client_id)
            .create()
            .map_err(|e| StorageError::kafka(format!("create producer for {}", config.topic), e))?;
        let consumer: BaseConsumer =
            consumer_config(&config.client, &config.client_id, config.read_committed)
                .create()
                .map_err(|e| {
                    StorageError::kafka(format!("create consumer for {}", config.topic), e)
                })?;
        // End offsets come from a second, idle, read_uncommitted client: a broker answers one
        // request per connection at a time, so asking the tailing consumer would queue behind
        // its long-poll fetch (`fetch.wait.max.ms`) for every partition. read_uncommitted also
        // gives the high watermark in read_committed mode: see # Guarantees.
        let watermark_client: BaseConsumer = consumer_config(
            &config.client,
            &format!("{}-end-offsets", config.client_id),
            false,
        )
        .create()
        .map_err(|e| {
            StorageError::kafka(format!("create end-offset client for {}", config.topic), e)
        })?;
        let (tx, rx) = std_mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        let topic = config.topic.clone();
        let thread = std::thread::Builder::new()
            .name(format!("log-{}", config.topic))
            .spawn(move || {
                let tailer = Tailer::assign(topic, consumer, watermark_client, on_record);
                match tailer {
                    Ok(t) => {
                        let _ = ready_tx.send(Ok(()));
                        t.run(rx);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| StorageError::Io(format!("spawn consumer thread: {e}")))?;
        ready_rx.await.map_err(|_| StorageError::Closed)??;
        let log = KafkaBasedLog {
            topic: config.topic,
            producer,
            commands: tx,
            thread: Mutex::new(Some(thread)),
        };
        log.read_to_end().await?;
        Ok(log)
    }

    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The log's producer (plain, idempotent); a transactional writer builds its own.
    pub fn producer(&self) -> &FutureProducer {
        &self.producer
    }

    /// Resolves once every record written before this call has been passed to `on_record`.
    /// Has no timeout of its own: wrap it in `tokio::time::timeout`.
    pub async fn read_to_end(&self) -> Result<(), StorageError> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::ReadToEnd(tx))
            .map_err(|_| StorageError::Closed)?;
        rx.await.map_err(|_| StorageError::Closed)?
    }

    /// Writes one record and resolves when the broker acknowledged it; returns its
    /// (partition, offset).
    pub async fn send(&self, key: &[u8], value: Option<&[u8]>) -> Result<(i32, i64), StorageError> {
        send_one(&self.producer, &self.topic, key, value).await
    }

    /// Writes records in order (enqueued back to back, so idempotence keeps their order per
    /// partition) and resolves when all are acknowledged.
    pub async fn send_batch(&self, records: &[RawRecord]) -> Result<Vec<(i32, i64)>, StorageError> {
        send_all(&self.producer, &self.topic, records).await
    }

    /// Stops the consumer thread; later calls answer [`StorageError::Closed`].
    pub async fn stop(&self) {
        let _ = self.commands.send(Command::Stop);
        let handle = self.thread.lock().expect("log thread lock").take();
        if let Some(h) = handle {
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
    }
}

impl Drop for KafkaBasedLog {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Stop);
    }
}

/// Sends one record with `producer` and waits for the acknowledgement.
pub(crate) async fn send_one(
    producer: &FutureProducer,
    topic: &str,
    key: &[u8],
    value: Option<&[u8]>,
) -> Result<(i32, i64), StorageError> {
    let mut rec: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(topic).key(key);
    if let Some(v) = value {
        rec = rec.payload(v);
    }
    let delivery = producer
        .send(rec, Timeout::Never)
        .await
        .map_err(|(e, _)| StorageError::kafka(format!("write to {topic}"), e))?;
    Ok((delivery.partition, delivery.offset))
}

/// Sends records in order and waits for all acknowledgements.
pub(crate) async fn send_all(
    producer: &FutureProducer,
    topic: &str,
    records: &[RawRecord],
) -> Result<Vec<(i32, i64)>, StorageError> {
    let mut pending = Vec::with_capacity(records.len());
    for (k, v) in records {
        let mut rec: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(topic).key(k.as_slice());
        if let Some(v) = v {
            rec = rec.payload(v.as_slice());
        }
        // `send_result` enqueues synchronously, which fixes the order; the futures only wait.
        match producer.send_result(rec) {
            Ok(f) => pending.push(f),
            Err((e, _)) => return Err(StorageError::kafka(format!("write to {topic}"), e)),
        }
    }
    let results = try_join_all(pending)
        .await
        .map_err(|_| StorageError::Closed)?;
    results
        .into_iter()
        .map(|r| {
            r.map(|d| (d.partition, d.offset))
                .map_err(|(e, _)| StorageError::kafka(format!("write to {topic}"), e))
        })
        .collect()
}

/// The consumer side, owned by the log's thread.
struct Tailer {
    topic: String,
    consumer: BaseConsumer,
    watermark_client: BaseConsumer,
    on_record: RecordCallback,
    partitions: Vec<i32>,
    /// Next offset to deliver per partition, from the records seen.
    next: HashMap<i32, i64>,
    waiting: Vec<(HashMap<i32, i64>, ReadToEndReply)>,
}

impl Tailer {
    fn assign(
        topic: String,
        consumer: BaseConsumer,
        watermark_client: BaseConsumer,
        on_record: RecordCallback,
    ) -> Result<Self, StorageError> {
        let partitions = super::topics::wait_for_partitions(&consumer, &topic)?;
        let mut tpl = TopicPartitionList::new();
        for p in &partitions {
            tpl.add_partition_offset(&topic, *p, Offset::Beginning)
                .map_err(|e| StorageError::kafka(format!("assign {topic}"), e))?;
        }
        consumer
            .assign(&tpl)
            .map_err(|e| StorageError::kafka(format!("assign {topic}"), e))?;
        Ok(Tailer {
            topic,
            consumer,
            watermark_client,
            on_record,
            partitions,
            next: HashMap::new(),
            waiting: Vec::new(),
        })
    }

    fn run(mut self, commands: std_mpsc::Receiver<Command>) {
        loop {
            loop {
                match commands.try_recv() {
                    Ok(Command::ReadToEnd(reply)) => match self.end_offsets() {
                        Ok(ends) => self.waiting.push((ends, reply)),
                        Err(e) => {
                            let _ = reply.send(Err(e));
                        }
                    },
                    Ok(Command::Stop) | Err(std_mpsc::TryRecvError::Disconnected) => return,
                    Err(std_mpsc::TryRecvError::Empty) => break,
                }
            }
            self.answer_satisfied();
            match self.consumer.poll(POLL_INTERVAL) {
                None => {}
                Some(Ok(m)) => {
                    let rec = ConsumedRecord {
                        partition: m.partition(),
                        offset: m.offset(),
                        key: m.key().map(<[u8]>::to_vec),
                        value: m.payload().map(<[u8]>::to_vec),
                    };
                    drop(m);
                    (self.on_record)(&rec);
                    self.next.insert(rec.partition, rec.offset + 1);
                }
                Some(Err(e)) => {
                    tracing::warn!(topic = %self.topic, error = %e, "error consuming internal topic");
                }
            }
        }
    }

    fn end_offsets(&self) -> Result<HashMap<i32, i64>, StorageError> {
        let client = &self.watermark_client;
        let mut ends = HashMap::new();
        for p in &self.partitions {
            // Leadership moves (e.g. right after topic creation or a broker restart) answer
            // retriable errors; retry them until the deadline like Java's admin client does.
            let deadline = std::time::Instant::now() + END_OFFSETS_TIMEOUT;
            let high = loop {
                match client.fetch_watermarks(&self.topic, *p, METADATA_TIMEOUT) {
                    Ok((_low, high)) => break high,
                    Err(e) if std::time::Instant::now() < deadline => {
                        tracing::debug!(topic = %self.topic, partition = p, error = %e, "retrying end offset fetch");
                        // A cached "unknown partition" is only left behind by a fresh metadata
                        // answer (a broker restart moves leaders away and back).
                        let _ = client.fetch_metadata(Some(&self.topic), METADATA_TIMEOUT);
                        std::thread::sleep(RETRY_BACKOFF);
                    }
                    Err(e) => {
                        return Err(StorageError::kafka(
                            format!("fetch end offsets of {}", self.topic),
                            e,
                        ));
                    }
                }
            };
            ends.insert(*p, high);
        }
        Ok(ends)
    }

    fn answer_satisfied(&mut self) {
        if self.waiting.is_empty() {
            return;
        }
        let positions = self.positions();
        let mut keep = Vec::new();
        for (ends, reply) in std::mem::take(&mut self.waiting) {
            if ends
                .iter()
                .all(|(p, end)| positions.get(p).copied().unwrap_or(0) >= *end)
            {
                let _ = reply.send(Ok(()));
            } else {
                keep.push((ends, reply));
            }
        }
        self.waiting = keep;
    }
    /// Max of the offset after the last delivered record and the consumer's own position,
    /// which also moves past transaction markers and aborted records.
    fn positions(&self) -> HashMap<i32, i64> {
        let mut pos = self.next.clone();
        if let Ok(tpl) = self.consumer.position() {
            for e in tpl.elements() {
                if let Offset::Offset(o) = e.offset() {
                    let v = pos.entry(e.partition()).or_insert(0);
                    *v = (*v).max(o);
                }
            }
        }
        pos
    }
}
