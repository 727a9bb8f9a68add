//! `KafkaBasedLog`: one internal topic, tailed from the beginning, plus a producer for writes.
//!
//! ```text
//!   send()/send_batch() ──▶ producer ──▶ topic (all partitions)
//!                                          │
//!   consumer thread: assign all partitions at Beginning, poll forever
//!        │ every record, in partition order ──▶ on_record callback (store state)
//!        └ then publishes the partition's next offset ──▶ progress (watch)
//!   read_to_end(): end offsets (blocking pool) ─▶ wait on progress until ≥ end everywhere
//! ```
//!
//! The consumer lives on a dedicated OS thread because `poll` and `fetch_metadata` block. A
//! reader to the end asks the broker for the end offsets itself and then watches the thread's
//! published progress, so it is answered the moment the last record has been handed to
//! `on_record`, not at the thread's next look at a request queue, and any number of readers
//! wait side by side (config writes on the leader read back right after each write).
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::future::try_join_all;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::topic_partition_list::{Offset, TopicPartitionList};
use rdkafka::util::Timeout;
use tokio::sync::{oneshot, watch};

use super::StorageError;

/// How long fetching a topic's end offsets may keep retrying before it fails (Java's
/// `default.api.timeout.ms`): a broker restart can leave partitions without a known leader
/// for longer than one request's timeout.
const END_OFFSETS_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one metadata or watermark request may take; a failed one is retried (after a
/// metadata refresh) until [`END_OFFSETS_TIMEOUT`].
const METADATA_TIMEOUT: Duration = Duration::from_secs(5);
/// Poll interval of the consumer thread while no reader waits: bounds how long it takes to
/// stop, and to see its position move past a transaction marker with no record behind it.
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// Poll interval while a reader waits for the end (a read back after a transactional write
/// ends at a commit marker, which only the consumer's position shows).
const WAITED_POLL_INTERVAL: Duration = Duration::from_millis(1);
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

pub use super::log_record::{ConsumedRecord, RawRecord, RecordCallback};

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

/// The next offset per partition the consumer thread has handed to `on_record` (or moved
/// past: transaction markers, aborted records), published after every record.
type Progress = HashMap<i32, i64>;

/// A Kafka topic used as a replicated log; see the module docs.
pub struct KafkaBasedLog {
    topic: String,
    producer: FutureProducer,
    /// Asks the consumer thread to stop (dropped or sent to).
    stop: std_mpsc::Sender<()>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// A second, idle, read_uncommitted client for end offsets: see [`KafkaBasedLog::start`].
    watermark_client: Arc<BaseConsumer>,
    partitions: Arc<Vec<i32>>,
    progress: watch::Receiver<Progress>,
    /// Readers waiting for the end now (the consumer thread polls faster meanwhile).
    waiting: Arc<AtomicUsize>,
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
        .set("message.timeout.ms", "0")
        // Every internal write is awaited by someone (a REST answer, a commit, a status):
        // send at once rather than after librdkafka's 5 ms linger. Records enqueued together
        // (task configs and their commit) still go in one request.
        .set("linger.ms", "0");
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
        let (progress_tx, progress) = watch::channel(Progress::new());
        let waiting = Arc::new(AtomicUsize::new(0));
        let topic = config.topic.clone();
        let thread_waiting = waiting.clone();
        let thread = std::thread::Builder::new()
            .name(format!("log-{}", config.topic))
            .spawn(move || {
                let tailer =
                    Tailer::assign(topic, consumer, on_record, progress_tx, thread_waiting);
                match tailer {
                    Ok(t) => {
                        let _ = ready_tx.send(Ok(t.partitions.clone()));
                        t.run(rx);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| StorageError::Io(format!("spawn consumer thread: {e}")))?;
        let partitions = ready_rx.await.map_err(|_| StorageError::Closed)??;
        let log = KafkaBasedLog {
            topic: config.topic,
            producer,
            stop: tx,
            thread: Mutex::new(Some(thread)),
            watermark_client: Arc::new(watermark_client),
            partitions: Arc::new(partitions),
            progress,
            waiting,
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
        let (client, topic, partitions) = (
            self.watermark_client.clone(),
            self.topic.clone(),
            self.partitions.clone(),
        );
        let ends = tokio::task::spawn_blocking(move || end_offsets(&client, &topic, &partitions))
            .await
            .map_err(|_| StorageError::Closed)??;
        let mut progress = self.progress.clone();
        let reached = |p: &Progress| {
            ends.iter()
                .all(|(partition, end)| p.get(partition).copied().unwrap_or(0) >= *end)
        };
        if reached(&progress.borrow_and_update()) {
            return Ok(());
        }
        let _waiting = WaitingGuard::enter(&self.waiting);
        loop {
            // Err: the consumer thread ended (stopped, or its topic could not be read).
            progress.changed().await.map_err(|_| StorageError::Closed)?;
            if reached(&progress.borrow_and_update()) {
                return Ok(());
            }
        }
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
        let _ = self.stop.send(());
        let handle = self.thread.lock().expect("log thread lock").take();
        if let Some(h) = handle {
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
    }
}

impl Drop for KafkaBasedLog {
    fn drop(&mut self) {
        let _ = self.stop.send(());
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

/// Counts a reader waiting for the end, from [`enter`](Self::enter) until it is done
/// (answered, failed or dropped).
struct WaitingGuard<'a>(&'a AtomicUsize);

impl<'a> WaitingGuard<'a> {
    fn enter(waiting: &'a AtomicUsize) -> Self {
        waiting.fetch_add(1, Ordering::Relaxed);
        WaitingGuard(waiting)
    }
}

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The end offsets (high watermarks) of `partitions` of `topic`, asked with `client`.
fn end_offsets(
    client: &BaseConsumer,
    topic: &str,
    partitions: &[i32],
) -> Result<HashMap<i32, i64>, StorageError> {
    let mut ends = HashMap::new();
    for p in partitions {
        // Leadership moves (e.g. right after topic creation or a broker restart) answer
        // retriable errors; retry them until the deadline like Java's admin client does.
        let deadline = std::time::Instant::now() + END_OFFSETS_TIMEOUT;
        let high = loop {
            match client.fetch_watermarks(topic, *p, METADATA_TIMEOUT) {
                Ok((_low, high)) => break high,
                Err(e) if std::time::Instant::now() < deadline => {
                    tracing::debug!(topic = %topic, partition = p, error = %e, "retrying end offset fetch");
                    // A cached "unknown partition" is only left behind by a fresh metadata
                    // answer (a broker restart moves leaders away and back).
                    let _ = client.fetch_metadata(Some(topic), METADATA_TIMEOUT);
                    std::thread::sleep(RETRY_BACKOFF);
                }
                Err(e) => {
                    return Err(StorageError::kafka(
                        format!("fetch end offsets of {topic}"),
                        e,
                    ));
                }
            }
        };
        ends.insert(*p, high);
    }
    Ok(ends)
}

/// The consumer side, owned by the log's thread.
struct Tailer {
    topic: String,
    consumer: BaseConsumer,
    on_record: RecordCallback,
    partitions: Vec<i32>,
    progress: watch::Sender<Progress>,
    waiting: Arc<AtomicUsize>,
}

impl Tailer {
    fn assign(
        topic: String,
        consumer: BaseConsumer,
        on_record: RecordCallback,
        progress: watch::Sender<Progress>,
        waiting: Arc<AtomicUsize>,
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
            on_record,
            partitions,
            progress,
            waiting,
        })
    }

    fn run(mut self, stop: std_mpsc::Receiver<()>) {
        loop {
            match stop.try_recv() {
                Ok(()) | Err(std_mpsc::TryRecvError::Disconnected) => return,
                Err(std_mpsc::TryRecvError::Empty) => {}
            }
            let interval = if self.waiting.load(Ordering::Relaxed) > 0 {
                WAITED_POLL_INTERVAL
            } else {
                POLL_INTERVAL
            };
            match self.consumer.poll(interval) {
                // Nothing more to read now: the position may have moved past transaction
                // markers and aborted records that no record follows.
                None => self.publish_position(),
                Some(Ok(m)) => {
                    let rec = ConsumedRecord {
                        partition: m.partition(),
                        offset: m.offset(),
                        key: m.key().map(<[u8]>::to_vec),
                        value: m.payload().map(<[u8]>::to_vec),
                    };
                    drop(m);
                    (self.on_record)(&rec);
                    self.progress.send_modify(|p| {
                        p.insert(rec.partition, rec.offset + 1);
                    });
                }
                Some(Err(e)) => {
                    tracing::warn!(topic = %self.topic, error = %e, "error consuming internal topic");
                }
            }
        }
    }

    /// Publishes the consumer's own position where it is past the last delivered record.
    fn publish_position(&self) {
        let Ok(tpl) = self.consumer.position() else {
            return;
        };
        self.progress.send_if_modified(|p| {
            let mut changed = false;
            for e in tpl.elements() {
                if let Offset::Offset(o) = e.offset() {
                    let v = p.entry(e.partition()).or_insert(0);
                    if o > *v {
                        *v = o;
                        changed = true;
                    }
                }
            }
            changed
        });
    }
}

/// Where a store's records live: a Kafka topic (distributed worker) or this process
/// ([`LocalLog`](super::local_log::LocalLog): the standalone worker's memory and offsets file).
/// The stores read and write through this and never ask which.
#[derive(Debug)]
pub enum InternalLog {
    Kafka(KafkaBasedLog),
    Local(super::local_log::LocalLog),
}

impl InternalLog {
    /// The topic, or what the local log is ("config", "status", the offsets file).
    pub fn topic(&self) -> &str {
        match self {
            InternalLog::Kafka(l) => l.topic(),
            InternalLog::Local(l) => l.name(),
        }
    }

    /// See [`KafkaBasedLog::read_to_end`]; a local log's writes are read when they return.
    pub async fn read_to_end(&self) -> Result<(), StorageError> {
        match self {
            InternalLog::Kafka(l) => l.read_to_end().await,
            InternalLog::Local(_) => Ok(()),
        }
    }

    pub async fn send(&self, key: &[u8], value: Option<&[u8]>) -> Result<(i32, i64), StorageError> {
        let written = self
            .send_batch(&[(key.to_vec(), value.map(<[u8]>::to_vec))])
            .await?;
        Ok(written[0])
    }

    /// A file-backed local log writes (and fsyncs) on the blocking pool, off the executor.
    pub async fn send_batch(&self, records: &[RawRecord]) -> Result<Vec<(i32, i64)>, StorageError> {
        match self {
            InternalLog::Kafka(l) => l.send_batch(records).await,
            InternalLog::Local(l) if l.is_file_backed() => {
                let (log, records) = (l.clone(), records.to_vec());
                tokio::task::spawn_blocking(move || log.send_batch(&records))
                    .await
                    .map_err(|e| StorageError::Io(format!("offsets file writer failed: {e}")))?
            }
            InternalLog::Local(l) => l.send_batch(records),
        }
    }

    pub async fn stop(&self) {
        if let InternalLog::Kafka(l) = self {
            l.stop().await;
        }
    }
}
