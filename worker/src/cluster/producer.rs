//! A transactional Kafka producer on the `kafka-protocol` codecs and this module's connections
//! (TLS, SASL), for the exactly-once source tasks (issue 15; design notes in
//! `runtime/transactional-producer.md`).
//!
//! ```text
//!  init:    FindCoordinator(txn id) ─> InitProducerId ─> producer id, epoch (fences older ones)
//!  send:    partition (explicit | murmur2(key) | sticky) ─> that partition's open batch
//!  flush:   v1 only: AddPartitionsToTxn(new partitions) ─> coordinator
//!           per leader, one connection: up to MAX_IN_FLIGHT Produce requests pipelined, each
//!           with one batch per partition (base sequence, producer id and epoch in the batch)
//!  commit:  flush ─> EndTxn(commit) ─> v2: the new epoch from the answer, sequences restart at 0
//!  abort:   flush what was handed to the broker ─> EndTxn(abort)
//! ```
//!
//! # Transactions v2 (KIP-890) or v1
//!
//! When the cluster's finalized `transaction.version` is 2 or more (ApiVersions), Produce v12
//! adds a partition to the transaction implicitly (no `AddPartitionsToTxn` round trip) and
//! `EndTxn` v5 bumps the producer epoch at every commit or abort, so a late produce request of a
//! finished transaction is refused by the partition leader instead of joining the next one.
//! Otherwise Produce v11, `AddPartitionsToTxn` v3 and `EndTxn` v4 (transactions v1), as Java's
//! `TransactionManager` chooses.
//!
//! # Errors
//!
//! - Retriable, retried with the same sequence numbers (the broker drops a duplicate) until the
//!   delivery timeout: connection loss, request timeouts, a leader or coordinator that moved,
//!   `NOT_ENOUGH_REPLICAS`, `CONCURRENT_TRANSACTIONS`, a topic not yet known.
//! - Fatal (the producer cannot be used again): `PRODUCER_FENCED`, `INVALID_PRODUCER_EPOCH`,
//!   authorization failures, an out-of-order sequence no retry explains.
//! - Any other produce error (a record too large...) is abortable: the transaction must be
//!   aborted, after which the producer can be used again.
//!
//! One producer per transactional id; a producer is used by one task at a time (`&mut self`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use indexmap::IndexMap;
use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, ApiKey, BrokerId, EndTxnRequest, InitProducerIdRequest,
    MetadataRequest, ProduceRequest, ProducerId, TopicName, TransactionalId,
    add_partitions_to_txn_request::AddPartitionsToTxnTopic,
    metadata_request::MetadataRequestTopic,
    produce_request::{PartitionProduceData, TopicProduceData},
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::client::{ClientError, Connection, CoordinatorKind, Security, find_coordinator};

/// At most this many produce requests in flight per connection (the broker keeps the last five
/// batches of a producer per partition to drop duplicates of retried ones).
pub const MAX_IN_FLIGHT: usize = 5;

/// The longest wait for a finished transaction's markers before the next one produces.
const COMPLETION_WAIT: Duration = Duration::from_millis(50);

/// A transaction that ended this long before the next produce had its markers written (the
/// coordinator writes them within a few ms): the next produce does not ask (a trickling task
/// saves a round trip per transaction).
const MARKERS_WRITTEN_AFTER: Duration = Duration::from_millis(10);

/// Kafka error codes the producer tells apart.
pub mod produce_codes {
    pub const NONE: i16 = 0;
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    pub const LEADER_NOT_AVAILABLE: i16 = 5;
    pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
    pub const REQUEST_TIMED_OUT: i16 = 7;
    pub const NETWORK_EXCEPTION: i16 = 13;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const NOT_ENOUGH_REPLICAS: i16 = 19;
    pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i16 = 20;
    pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
    pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
    pub const DUPLICATE_SEQUENCE_NUMBER: i16 = 46;
    pub const INVALID_PRODUCER_EPOCH: i16 = 47;
    pub const INVALID_TXN_STATE: i16 = 48;
    pub const CONCURRENT_TRANSACTIONS: i16 = 51;
    pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    pub const UNKNOWN_PRODUCER_ID: i16 = 59;
    pub const FENCED_LEADER_EPOCH: i16 = 74;
    pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
    pub const PRODUCER_FENCED: i16 = 90;
    pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;

    /// Worth retrying (the same request, after a metadata or coordinator refresh).
    pub fn is_retriable(code: i16) -> bool {
        matches!(
            code,
            UNKNOWN_TOPIC_OR_PARTITION
                | LEADER_NOT_AVAILABLE
                | NOT_LEADER_OR_FOLLOWER
                | REQUEST_TIMED_OUT
                | NETWORK_EXCEPTION
                | COORDINATOR_LOAD_IN_PROGRESS
                | COORDINATOR_NOT_AVAILABLE
                | NOT_COORDINATOR
                | NOT_ENOUGH_REPLICAS
                | NOT_ENOUGH_REPLICAS_AFTER_APPEND
                | CONCURRENT_TRANSACTIONS
                | KAFKA_STORAGE_ERROR
                | FENCED_LEADER_EPOCH
                | UNKNOWN_LEADER_EPOCH
                | THROTTLING_QUOTA_EXCEEDED
        )
    }

    /// The producer can never be used again.
    pub fn is_fatal(code: i16) -> bool {
        matches!(
            code,
            PRODUCER_FENCED
                | INVALID_PRODUCER_EPOCH
                | TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                | CLUSTER_AUTHORIZATION_FAILED
                | INVALID_TXN_STATE
                | UNKNOWN_PRODUCER_ID
        )
    }

    /// What an error says, with Java's explanation of a fencing ("There is a newer producer
    /// with the same transactionalId which fences the current one").
    pub fn explain(code: i16) -> String {
        match code {
            PRODUCER_FENCED | INVALID_PRODUCER_EPOCH => format!(
                "{}: the producer was fenced (there is a newer producer with the same transactional.id)",
                name(code)
            ),
            c => name(c),
        }
    }

    /// Java's name of an error code, for messages.
    pub fn name(code: i16) -> String {
        match code {
            2 => "CORRUPT_MESSAGE".into(),
            3 => "UNKNOWN_TOPIC_OR_PARTITION".into(),
            5 => "LEADER_NOT_AVAILABLE".into(),
            6 => "NOT_LEADER_OR_FOLLOWER".into(),
            7 => "REQUEST_TIMED_OUT".into(),
            10 => "MESSAGE_TOO_LARGE".into(),
            13 => "NETWORK_EXCEPTION".into(),
            14 => "COORDINATOR_LOAD_IN_PROGRESS".into(),
            15 => "COORDINATOR_NOT_AVAILABLE".into(),
            16 => "NOT_COORDINATOR".into(),
            18 => "RECORD_LIST_TOO_LARGE".into(),
            19 => "NOT_ENOUGH_REPLICAS".into(),
            20 => "NOT_ENOUGH_REPLICAS_AFTER_APPEND".into(),
            29 => "TOPIC_AUTHORIZATION_FAILED".into(),
            31 => "CLUSTER_AUTHORIZATION_FAILED".into(),
            45 => "OUT_OF_ORDER_SEQUENCE_NUMBER".into(),
            46 => "DUPLICATE_SEQUENCE_NUMBER".into(),
            47 => "INVALID_PRODUCER_EPOCH".into(),
            48 => "INVALID_TXN_STATE".into(),
            51 => "CONCURRENT_TRANSACTIONS".into(),
            53 => "TRANSACTIONAL_ID_AUTHORIZATION_FAILED".into(),
            56 => "KAFKA_STORAGE_ERROR".into(),
            59 => "UNKNOWN_PRODUCER_ID".into(),
            87 => "INVALID_RECORD".into(),
            90 => "PRODUCER_FENCED".into(),
            c => format!("error code {c}"),
        }
    }
}
use produce_codes as pc;

/// What a producer error means for the producer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProducerError {
    /// The producer is unusable (fenced, not authorized...): the task must fail.
    #[error("{0}")]
    Fatal(String),
    /// This transaction failed and must be aborted; the producer can be used again after.
    #[error("{0}")]
    Abortable(String),
    /// The topic does not exist (and was not created) within the delivery timeout.
    #[error("Topic {0} not present in metadata after the delivery timeout")]
    UnknownTopic(String),
}

/// How to reach the cluster and behave, from the task's producer settings.
#[derive(Debug, Clone)]
pub struct ProducerSettings {
    pub bootstrap: Vec<String>,
    pub client_id: String,
    pub transactional_id: String,
    pub security: Security,
    /// `request.timeout.ms`.
    pub request_timeout: Duration,
    /// `delivery.timeout.ms` (librdkafka's `message.timeout.ms`): how long a flush or a
    /// transactional call retries.
    pub delivery_timeout: Duration,
    /// `transaction.timeout.ms`, given to the coordinator.
    pub transaction_timeout: Duration,
    /// `batch.size`: the largest batch per partition per request, in bytes of record data.
    pub batch_bytes: usize,
    /// `compression.type`.
    pub compression: Compression,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
}

/// Apache's `Utils.murmur2` (wrapping 32-bit arithmetic, seed 0x9747b28c).
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    let mut h: u32 = SEED ^ (len as u32);
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Java's `BuiltInPartitioner.partitionForKey`: `toPositive(murmur2(key)) % partitions`.
pub fn partition_for_key(key: &[u8], partitions: i32) -> i32 {
    (murmur2(key) & 0x7fff_ffff) % partitions
}

/// One record handed to [`TransactionalProducer::send`].
pub struct OutRecord {
    pub topic: String,
    pub partition: Option<i32>,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
    pub timestamp: Option<i64>,
}

/// Where a sent record landed, once its transaction's records are flushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Landed {
    pub partition: i32,
    /// -1 when the broker did not say (a retried batch it already had).
    pub offset: i64,
    pub timestamp: i64,
}

/// A record's place in the open transaction, to ask [`TransactionalProducer::landed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSlot(usize);

impl RecordSlot {
    /// The slot of the transaction's `n`-th record (from 0): the records sent since `begin`,
    /// by [`TransactionalProducer::send`] or [`TransactionalProducer::send_all`], are numbered
    /// in the order they were given.
    pub fn nth(n: usize) -> Self {
        RecordSlot(n)
    }
}

type Tp = (String, i32);

/// Records of one partition not yet acknowledged, in order.
#[derive(Default)]
struct PartitionQueue {
    /// Batches cut but not yet acknowledged; the first may be in a request already.
    batches: std::collections::VecDeque<Batch>,
    /// The batch being filled.
    open: Vec<(RecordSlot, Record)>,
    open_bytes: usize,
}

impl PartitionQueue {
    /// Closes the batch being filled (if it holds records): it joins the batches to send.
    fn seal_open(&mut self) {
        if self.open.is_empty() {
            return;
        }
        // The next batch is likely as long as the longest before: no regrowing it record by
        // record (a batch is bounded by the batch size).
        let next = Vec::with_capacity(self.open.capacity());
        let records = std::mem::replace(&mut self.open, next);
        self.batches.push_back(Batch {
            records,
            base_sequence: None,
            encoded: None,
        });
        self.open_bytes = 0;
    }
}

struct Batch {
    records: Vec<(RecordSlot, Record)>,
    /// Assigned when the batch is first sent, kept for its retries.
    base_sequence: Option<i32>,
    /// The encoded batch (with its sequence, producer id and epoch), kept for retries.
    encoded: Option<Bytes>,
}

struct TopicMeta {
    /// The leader of each partition (-1: none now).
    leaders: Vec<BrokerId>,
}

/// A transactional producer for one transactional id.
pub struct TransactionalProducer {
    settings: ProducerSettings,
    /// Broker id -> `host:port`.
    brokers: HashMap<BrokerId, String>,
    connections: HashMap<BrokerId, Connection>,
    coordinator: Option<Connection>,
    topics: HashMap<String, TopicMeta>,
    producer_id: i64,
    epoch: i16,
    /// Transactions v2 (KIP-890).
    v2: bool,
    produce_version: i16,
    end_txn_version: i16,
    /// Next sequence number per partition (restarts at 0 with each epoch).
    sequences: HashMap<Tp, i32>,
    /// Partitions of the open transaction (v1: added to it at the coordinator).
    in_transaction: BTreeSet<Tp>,
    /// Partitions to add at the coordinator before their first produce (v1).
    to_add: BTreeSet<Tp>,
    queues: BTreeMap<Tp, PartitionQueue>,
    /// Where each record of the open transaction landed (`None`: not acknowledged yet).
    landed: Vec<Option<Landed>>,
    /// Sticky partition per topic for records with neither key nor partition.
    sticky: HashMap<String, i32>,
    /// Something went to the broker in the open transaction (an EndTxn is needed).
    sent_any: bool,
    /// When the last EndTxn succeeded: its markers may still be being written.
    completing: Option<Instant>,
    open: bool,
    fatal: Option<String>,
    retries: Retries,
}

/// How often each step was retried (connection loss, timeouts, retriable errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retries {
    pub produce: u64,
    pub end_txn: u64,
    pub init: u64,
}

fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl TransactionalProducer {
    /// Connects, learns whether the cluster runs transactions v2, and calls `InitProducerId`,
    /// which fences every older producer of this transactional id and aborts what it left open.
    pub async fn init(settings: ProducerSettings) -> Result<Self, ProducerError> {
        let mut p = TransactionalProducer {
            settings,
            brokers: HashMap::new(),
            connections: HashMap::new(),
            coordinator: None,
            topics: HashMap::new(),
            producer_id: -1,
            epoch: -1,
            v2: false,
            produce_version: 3,
            end_txn_version: 1,
            sequences: HashMap::new(),
            in_transaction: BTreeSet::new(),
            to_add: BTreeSet::new(),
            queues: BTreeMap::new(),
            landed: Vec::new(),
            sticky: HashMap::new(),
            sent_any: false,
            completing: None,
            open: false,
            fatal: None,
            retries: Retries::default(),
        };
        let deadline = Instant::now() + p.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(20);
        loop {
            match p.try_init().await {
                Ok(()) => return Ok(p),
                Err(Retry::Now(why)) if Instant::now() < deadline => {
                    p.retries.init += 1;
                    tracing::debug!(transactional_id = %p.settings.transactional_id, why, "retrying InitProducerId");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2)
                        .min(p.settings.retry_backoff.max(Duration::from_millis(20)) * 10);
                }
                Err(Retry::Now(why)) => {
                    return Err(ProducerError::Fatal(format!(
                        "InitProducerId for {} did not succeed within {:?}: {why}",
                        p.settings.transactional_id, p.settings.delivery_timeout
                    )));
                }
                Err(Retry::Never(e)) => return Err(e),
            }
        }
    }

    async fn try_init(&mut self) -> Result<(), Retry> {
        let req = InitProducerIdRequest::default()
            .with_transactional_id(Some(TransactionalId(str_bytes(
                &self.settings.transactional_id,
            ))))
            .with_transaction_timeout_ms(self.settings.transaction_timeout.as_millis() as i32)
            .with_producer_id(ProducerId(-1))
            .with_producer_epoch(-1);
        let timeout = self.settings.request_timeout;
        let conn = self.coordinator_connection().await?;
        let version = conn
            .optional_version(ApiKey::InitProducerId)
            .ok_or_else(|| Retry::Never(unsupported("InitProducerId")))?;
        let produce = conn
            .optional_version(ApiKey::Produce)
            .ok_or_else(|| Retry::Never(unsupported("Produce")))?;
        let end_txn = conn
            .optional_version(ApiKey::EndTxn)
            .ok_or_else(|| Retry::Never(unsupported("EndTxn")))?;
        let v2 = conn.transaction_version() >= 2 && produce >= 12 && end_txn >= 5;
        let resp = match conn.send(&req, version, timeout).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(e)),
        };
        match resp.error_code {
            pc::NONE => {}
            code if pc::is_retriable(code) => {
                return Err(self.coordinator_retriable(code, "InitProducerId"));
            }
            code => {
                return Err(Retry::Never(ProducerError::Fatal(format!(
                    "InitProducerId for {} failed: {}",
                    self.settings.transactional_id,
                    pc::explain(code)
                ))));
            }
        }
        self.producer_id = resp.producer_id.0;
        self.epoch = resp.producer_epoch;
        self.v2 = v2;
        self.produce_version = if v2 { 12 } else { produce.min(11) };
        self.end_txn_version = if v2 { 5 } else { end_txn.min(4) };
        self.sequences.clear();
        tracing::debug!(
            transactional_id = %self.settings.transactional_id,
            producer_id = self.producer_id, epoch = self.epoch,
            transactions_v2 = v2, "transactional producer initialized"
        );
        Ok(())
    }

    /// How often each step was retried so far.
    pub fn retries(&self) -> Retries {
        self.retries
    }

    /// Whether the cluster runs transactions v2 (KIP-890) for this producer.
    pub fn transactions_v2(&self) -> bool {
        self.v2
    }

    /// The producer id and epoch now.
    pub fn producer_id_and_epoch(&self) -> (i64, i16) {
        (self.producer_id, self.epoch)
    }

    fn check_usable(&self) -> Result<(), ProducerError> {
        match &self.fatal {
            Some(why) => Err(ProducerError::Fatal(why.clone())),
            None => Ok(()),
        }
    }

    fn set_fatal(&mut self, why: String) -> ProducerError {
        self.fatal = Some(why.clone());
        ProducerError::Fatal(why)
    }

    /// Starts a transaction (local: the broker learns of it with the first record).
    pub fn begin(&mut self) -> Result<(), ProducerError> {
        self.check_usable()?;
        if self.open {
            return Err(ProducerError::Fatal(
                "a transaction is already open".to_owned(),
            ));
        }
        self.open = true;
        // Where the last transaction's records landed was read after its commit.
        self.landed.clear();
        Ok(())
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Adds a record to the open transaction; it is sent by the next flush (or earlier, when
    /// its partition's batch is full and [`Self::send_ready`] runs). Its slot is the record's
    /// place among the transaction's records ([`RecordSlot::nth`]).
    pub async fn send(&mut self, record: OutRecord) -> Result<RecordSlot, ProducerError> {
        self.check_usable()?;
        let partitions = self.partition_count(&record.topic).await?;
        self.append(record, partitions, now_ms())
    }

    /// [`Self::send`] of each of `records`, in order, with one reading of the clock for the
    /// records without a timestamp (Java's producer stamps a record when it is sent: these are
    /// sent together). On an error, the records before the failed one are in the transaction,
    /// the failed one's topic is given with the error, and the rest are dropped.
    pub async fn send_all(
        &mut self,
        records: Vec<OutRecord>,
    ) -> Result<(), (String, ProducerError)> {
        if let Err(e) = self.check_usable() {
            let topic = records.first().map(|r| r.topic.clone());
            return Err((topic.unwrap_or_default(), e));
        }
        let now = now_ms();
        // Records of one poll go mostly to one topic: its partition count is looked up once.
        let mut known: Option<(String, i32)> = None;
        for record in records {
            let partitions = match &known {
                Some((topic, n)) if *topic == record.topic => *n,
                _ => {
                    let n = match self.partition_count(&record.topic).await {
                        Ok(n) => n,
                        Err(e) => return Err((record.topic, e)),
                    };
                    known = Some((record.topic.clone(), n));
                    n
                }
            };
            self.append(record, partitions, now).map_err(|e| {
                let topic = known.as_ref().map(|(t, _)| t.clone());
                (topic.unwrap_or_default(), e)
            })?;
        }
        Ok(())
    }

    /// Adds `record` to its partition's open batch (`partitions`: its topic's partition count;
    /// `now`: the timestamp of a record without one).
    fn append(
        &mut self,
        record: OutRecord,
        partitions: i32,
        now: i64,
    ) -> Result<RecordSlot, ProducerError> {
        if !self.open {
            return Err(ProducerError::Fatal("no transaction is open".to_owned()));
        }
        let partition = match record.partition {
            Some(p) if p >= 0 && p < partitions => p,
            Some(p) => {
                return Err(ProducerError::Abortable(format!(
                    "partition {p} of topic {} does not exist (it has {partitions})",
                    record.topic
                )));
            }
            None => match &record.key {
                Some(k) => partition_for_key(k, partitions),
                None => match self.sticky.get(&record.topic) {
                    Some(p) => *p,
                    None => *self
                        .sticky
                        .entry(record.topic.clone())
                        .or_insert_with(|| rand::random_range(0..partitions)),
                },
            },
        };
        let slot = RecordSlot(self.landed.len());
        self.landed.push(None);
        let timestamp = record.timestamp.unwrap_or(now);
        let size = record.key.as_ref().map_or(0, Vec::len)
            + record.value.as_ref().map_or(0, Vec::len)
            + record
                .headers
                .iter()
                .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len))
                .sum::<usize>()
            + 16;
        let mut headers = IndexMap::with_capacity(record.headers.len());
        for (k, v) in record.headers {
            headers.insert(StrBytes::from_string(k), v.map(Bytes::from));
        }
        let r = Record {
            transactional: true,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: 0,
            producer_epoch: 0,
            timestamp_type: TimestampType::Creation,
            offset: 0,
            sequence: 0,
            timestamp,
            key: record.key.map(Bytes::from),
            value: record.value.map(Bytes::from),
            headers,
        };
        let tp = (record.topic, partition);
        // One clone of the topic name per partition and transaction, not per record.
        if !self.in_transaction.contains(&tp) {
            self.in_transaction.insert(tp.clone());
            if !self.v2 {
                self.to_add.insert(tp.clone());
            }
        }
        let batch_bytes = self.settings.batch_bytes;
        let q = self.queues.entry(tp).or_default();
        if q.open_bytes + size > batch_bytes {
            q.seal_open();
        }
        q.open.push((slot, r));
        q.open_bytes += size;
        Ok(slot)
    }

    /// Where a record of the open or last transaction landed (until the next `begin`).
    pub fn landed(&self, slot: RecordSlot) -> Option<&Landed> {
        self.landed.get(slot.0).and_then(Option::as_ref)
    }

    /// Sends every record of the open transaction and waits for the acknowledgements.
    pub async fn flush(&mut self) -> Result<(), ProducerError> {
        self.check_usable()?;
        for q in self.queues.values_mut() {
            q.seal_open();
        }
        // A new sticky partition for the next records without key.
        self.sticky.clear();
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(5);
        let mut last_retry = String::new();
        loop {
            // The partitions' queues (and their batches' capacity) stay until the transaction
            // ends: the next records of the transaction likely go to the same partitions.
            if self.queues.values().all(|q| q.batches.is_empty()) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(ProducerError::Abortable(format!(
                    "records of transactional id {} not acknowledged within the delivery timeout {:?}: {last_retry}",
                    self.settings.transactional_id, self.settings.delivery_timeout
                )));
            }
            match self.produce_round().await {
                Ok(true) => backoff = Duration::from_millis(5),
                Ok(false) => {}
                Err(Retry::Now(why)) => {
                    self.retries.produce += 1;
                    tracing::debug!(transactional_id = %self.settings.transactional_id, why, "retrying produce");
                    last_retry = why;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2)
                        .min(self.settings.retry_backoff.max(Duration::from_millis(5)) * 10);
                }
                Err(Retry::Never(e)) => {
                    if let ProducerError::Fatal(why) = &e {
                        self.fatal = Some(why.clone());
                    }
                    return Err(e);
                }
            }
        }
    }

    /// One round: v1's AddPartitionsToTxn, then to each leader (concurrently) up to
    /// [`MAX_IN_FLIGHT`] pipelined produce requests. `Ok(true)`: progress.
    async fn produce_round(&mut self) -> Result<bool, Retry> {
        if let Some(ended) = self.completing.take()
            && ended.elapsed() < MARKERS_WRITTEN_AFTER
        {
            self.await_completion().await;
        }
        if !self.to_add.is_empty() {
            self.add_partitions().await?;
        }
        self.sent_any = true;
        // Leader of each partition with batches.
        let mut by_leader: BTreeMap<BrokerId, Vec<Tp>> = BTreeMap::new();
        let mut unknown = Vec::new();
        for (tp, q) in &self.queues {
            if q.batches.is_empty() {
                continue;
            }
            match self
                .topics
                .get(&tp.0)
                .and_then(|m| m.leaders.get(tp.1 as usize))
                .copied()
                .filter(|l| l.0 >= 0 && self.brokers.contains_key(l))
            {
                Some(leader) => by_leader.entry(leader).or_default().push(tp.clone()),
                None => unknown.push(tp.0.clone()),
            }
        }
        if !unknown.is_empty() {
            unknown.dedup();
            self.refresh_metadata(&unknown).await?;
            return Err(Retry::Now(format!(
                "no leader known for topics {unknown:?}"
            )));
        }
        // Encode the requests: request i of a leader carries batch i of each partition.
        let mut plans: Vec<(BrokerId, Vec<ProduceRequest>, Vec<Vec<Tp>>)> = Vec::new();
        for (leader, tps) in by_leader {
            let mut requests = Vec::new();
            let mut contents = Vec::new();
            for i in 0..MAX_IN_FLIGHT {
                let mut topics: BTreeMap<String, Vec<PartitionProduceData>> = BTreeMap::new();
                let mut carried = Vec::new();
                for tp in &tps {
                    let Some(encoded) = self.encoded_batch(tp, i).map_err(Retry::Never)? else {
                        continue;
                    };
                    topics.entry(tp.0.clone()).or_default().push(
                        PartitionProduceData::default()
                            .with_index(tp.1)
                            .with_records(Some(encoded)),
                    );
                    carried.push(tp.clone());
                }
                if carried.is_empty() {
                    break;
                }
                let topic_data = topics
                    .into_iter()
                    .map(|(name, parts)| {
                        TopicProduceData::default()
                            .with_name(TopicName(str_bytes(&name)))
                            .with_partition_data(parts)
                    })
                    .collect();
                requests.push(
                    ProduceRequest::default()
                        .with_transactional_id(Some(TransactionalId(str_bytes(
                            &self.settings.transactional_id,
                        ))))
                        .with_acks(-1)
                        .with_timeout_ms(self.settings.request_timeout.as_millis() as i32)
                        .with_topic_data(topic_data),
                );
                contents.push(carried);
            }
            plans.push((leader, requests, contents));
        }
        // Connections, then all leaders at once.
        let mut conns = Vec::new();
        for (leader, _, _) in &plans {
            let conn = match self.connections.remove(leader) {
                Some(c) => c,
                None => {
                    let addr = self.brokers[leader].clone();
                    connect(&self.settings, &addr)
                        .await
                        .map_err(Retry::from_client)?
                }
            };
            conns.push(conn);
        }
        let version = self.produce_version;
        let timeout = self.settings.request_timeout + Duration::from_secs(5);
        let results = futures::future::join_all(plans.iter().zip(conns).map(
            |((_, requests, _), mut conn)| async move {
                let r = conn.send_pipelined(requests, version, timeout).await;
                (conn, r)
            },
        ))
        .await;
        let mut progress = false;
        let mut retry: Option<String> = None;
        let mut stale_topics = Vec::new();
        for ((leader, _, contents), (conn, result)) in plans.iter().zip(results) {
            let responses = match result {
                Ok(r) => {
                    self.connections.insert(*leader, conn);
                    r
                }
                Err(e) => {
                    // The connection is dropped; its batches go again with the same sequences.
                    if e.is_fatal() {
                        return Err(Retry::Never(ProducerError::Fatal(e.to_string())));
                    }
                    retry = Some(e.to_string());
                    continue;
                }
            };
            // Per partition: acknowledged batches leave the queue in order; the first failure
            // stops the partition's later batches (they go again after it).
            let mut failed: BTreeSet<Tp> = BTreeSet::new();
            for (resp, carried) in responses.iter().zip(contents) {
                for tp in carried {
                    let part = resp
                        .responses
                        .iter()
                        .filter(|t| t.name.0.as_str() == tp.0)
                        .flat_map(|t| t.partition_responses.iter())
                        .find(|p| p.index == tp.1);
                    let Some(part) = part else {
                        return Err(Retry::Never(ProducerError::Fatal(format!(
                            "produce response of {} lacks partition {}-{}",
                            self.brokers[leader], tp.0, tp.1
                        ))));
                    };
                    if failed.contains(tp) {
                        continue;
                    }
                    let code = part.error_code;
                    let ok = code == pc::NONE || code == pc::DUPLICATE_SEQUENCE_NUMBER;
                    if ok {
                        let offset = if code == pc::NONE {
                            part.base_offset
                        } else {
                            -1
                        };
                        self.acknowledge(tp, offset);
                        progress = true;
                        continue;
                    }
                    failed.insert(tp.clone());
                    let message = part
                        .error_message
                        .as_ref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default();
                    let what = format!(
                        "producing to {}-{} failed: {}{message}",
                        tp.0,
                        tp.1,
                        pc::explain(code)
                    );
                    if pc::is_retriable(code) {
                        if matches!(
                            code,
                            pc::NOT_LEADER_OR_FOLLOWER
                                | pc::UNKNOWN_TOPIC_OR_PARTITION
                                | pc::LEADER_NOT_AVAILABLE
                                | pc::FENCED_LEADER_EPOCH
                                | pc::UNKNOWN_LEADER_EPOCH
                        ) {
                            stale_topics.push(tp.0.clone());
                        }
                        retry = Some(what);
                    } else if pc::is_fatal(code) || code == pc::OUT_OF_ORDER_SEQUENCE_NUMBER {
                        return Err(Retry::Never(self.set_fatal(what)));
                    } else if code == pc::TOPIC_AUTHORIZATION_FAILED {
                        return Err(Retry::Never(ProducerError::Abortable(what)));
                    } else {
                        return Err(Retry::Never(ProducerError::Abortable(what)));
                    }
                }
            }
        }
        if !stale_topics.is_empty() {
            stale_topics.sort();
            stale_topics.dedup();
            self.refresh_metadata(&stale_topics).await?;
        }
        match retry {
            Some(why) if !progress => Err(Retry::Now(why)),
            _ => Ok(progress),
        }
    }

    /// The `i`-th queued batch of `tp` encoded (sequence numbers assigned at its first send).
    fn encoded_batch(&mut self, tp: &Tp, i: usize) -> Result<Option<Bytes>, ProducerError> {
        let (producer_id, epoch) = (self.producer_id, self.epoch);
        let compression = self.settings.compression;
        let Some(q) = self.queues.get_mut(tp) else {
            return Ok(None);
        };
        let Some(batch) = q.batches.get_mut(i) else {
            return Ok(None);
        };
        if let Some(e) = &batch.encoded {
            return Ok(Some(e.clone()));
        }
        let seq = self.sequences.entry(tp.clone()).or_insert(0);
        let base = *seq;
        *seq = seq.wrapping_add(batch.records.len() as i32) & i32::MAX;
        batch.base_sequence = Some(base);
        for (n, (_, r)) in batch.records.iter_mut().enumerate() {
            r.producer_id = producer_id;
            r.producer_epoch = epoch;
            r.offset = n as i64;
            r.sequence = base.wrapping_add(n as i32) & i32::MAX;
        }
        let mut buf = BytesMut::new();
        RecordBatchEncoder::encode(
            &mut buf,
            batch.records.iter().map(|(_, r)| r),
            &RecordEncodeOptions {
                version: 2,
                compression,
            },
        )
        .map_err(|e| ProducerError::Abortable(format!("encoding a record batch: {e}")))?;
        let bytes = buf.freeze();
        batch.encoded = Some(bytes.clone());
        Ok(Some(bytes))
    }

    /// The first queued batch of `tp` was written at `base_offset`.
    fn acknowledge(&mut self, tp: &Tp, base_offset: i64) {
        let Some(q) = self.queues.get_mut(tp) else {
            return;
        };
        let Some(batch) = q.batches.pop_front() else {
            return;
        };
        for (n, (slot, r)) in batch.records.iter().enumerate() {
            self.landed[slot.0] = Some(Landed {
                partition: tp.1,
                offset: if base_offset >= 0 {
                    base_offset + n as i64
                } else {
                    -1
                },
                timestamp: r.timestamp,
            });
        }
    }

    /// Waits (at most [`COMPLETION_WAIT`]) until the coordinator has written the markers of
    /// the last commit or abort (DescribeTransactions no longer `PrepareCommit` or
    /// `PrepareAbort`). A produce request sent before that makes the partition leader's
    /// verification (v2) or our `AddPartitionsToTxn` (v1) answer `CONCURRENT_TRANSACTIONS`,
    /// which the broker retries only after `add.partitions.to.txn.retry.backoff.ms` (20 ms by
    /// default): per transaction, a few describe round trips are far cheaper. Best effort: any
    /// error ends the wait, and the produce request finds out.
    async fn await_completion(&mut self) {
        let timeout = self.settings.request_timeout;
        let id = self.settings.transactional_id.clone();
        let until = Instant::now() + COMPLETION_WAIT;
        let Ok(conn) = self.coordinator_connection().await else {
            return;
        };
        while Instant::now() < until {
            match super::transactions::describe_on(conn, &id, timeout).await {
                Ok(Some(d)) if d.state == "PrepareCommit" || d.state == "PrepareAbort" => {
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
                _ => return,
            }
        }
    }

    /// v1: adds the transaction's new partitions at the coordinator.
    async fn add_partitions(&mut self) -> Result<(), Retry> {
        let timeout = self.settings.request_timeout;
        let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for (t, p) in &self.to_add {
            topics.entry(t.clone()).or_default().push(*p);
        }
        let tx = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(str_bytes(
                &self.settings.transactional_id,
            )))
            .with_v3_and_below_producer_id(ProducerId(self.producer_id))
            .with_v3_and_below_producer_epoch(self.epoch)
            .with_v3_and_below_topics(
                topics
                    .into_iter()
                    .map(|(name, partitions)| {
                        AddPartitionsToTxnTopic::default()
                            .with_name(TopicName(str_bytes(&name)))
                            .with_partitions(partitions)
                    })
                    .collect(),
            );
        let conn = self.coordinator_connection().await?;
        let version = conn
            .optional_version(ApiKey::AddPartitionsToTxn)
            .ok_or_else(|| Retry::Never(unsupported("AddPartitionsToTxn")))?
            .min(3);
        let resp = match conn.send(&tx, version, timeout).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(e)),
        };
        let mut worst = pc::NONE;
        for t in &resp.results_by_topic_v3_and_below {
            for p in &t.results_by_partition {
                if p.partition_error_code != pc::NONE {
                    worst = p.partition_error_code;
                }
            }
        }
        match worst {
            pc::NONE => {
                self.to_add.clear();
                Ok(())
            }
            code if pc::is_retriable(code) => {
                Err(self.coordinator_retriable(code, "AddPartitionsToTxn"))
            }
            code if pc::is_fatal(code) => Err(Retry::Never(
                self.set_fatal(format!("AddPartitionsToTxn failed: {}", pc::explain(code))),
            )),
            code => Err(Retry::Never(ProducerError::Abortable(format!(
                "AddPartitionsToTxn failed: {}",
                pc::name(code)
            )))),
        }
    }

    /// Flushes, then commits the open transaction.
    pub async fn commit(&mut self) -> Result<(), ProducerError> {
        self.flush().await?;
        self.end(true).await
    }

    /// Aborts the open transaction: records not yet sent are dropped, the rest (already at
    /// the partitions) are aborted by the coordinator's markers.
    pub async fn abort(&mut self) -> Result<(), ProducerError> {
        self.check_usable()?;
        // Nothing is in flight between two calls (each flush waits for its answers), so the
        // unsent batches can go: the broker never saw their sequence numbers.
        for q in self.queues.values_mut() {
            q.open.clear();
            q.open_bytes = 0;
            q.batches.retain(|b| b.base_sequence.is_some());
        }
        // Batches sent but not acknowledged (a failed flush) must be settled first, or their
        // sequence numbers are unknown to the broker.
        if self.queues.values().any(|q| !q.batches.is_empty()) {
            if let Err(e) = self.flush().await {
                // The sequence state is unknown: only a new InitProducerId could clean it.
                return Err(self.set_fatal(format!(
                    "cannot abort: records sent earlier could not be settled: {e}"
                )));
            }
        }
        self.end(false).await
    }

    async fn end(&mut self, commit: bool) -> Result<(), ProducerError> {
        self.check_usable()?;
        if !self.open {
            return Err(ProducerError::Fatal("no transaction is open".to_owned()));
        }
        if !self.sent_any && self.to_add.is_empty() {
            self.finish_locally();
            return Ok(());
        }
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(5);
        let what = if commit { "commit" } else { "abort" };
        loop {
            match self.try_end(commit).await {
                Ok(()) => {
                    self.finish_locally();
                    return Ok(());
                }
                Err(Retry::Now(why)) if Instant::now() < deadline => {
                    self.retries.end_txn += 1;
                    tracing::debug!(transactional_id = %self.settings.transactional_id, why, "retrying EndTxn");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                Err(Retry::Now(why)) => {
                    return Err(self.set_fatal(format!(
                        "the {what} of transactional id {} did not complete within {:?}: {why}",
                        self.settings.transactional_id, self.settings.delivery_timeout
                    )));
                }
                Err(Retry::Never(e)) => return Err(e),
            }
        }
    }

    fn finish_locally(&mut self) {
        self.open = false;
        self.sent_any = false;
        self.in_transaction.clear();
        self.to_add.clear();
        self.queues.clear();
    }

    async fn try_end(&mut self, commit: bool) -> Result<(), Retry> {
        let timeout = self.settings.request_timeout;
        let version = self.end_txn_version;
        let req = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(str_bytes(&self.settings.transactional_id)))
            .with_producer_id(ProducerId(self.producer_id))
            .with_producer_epoch(self.epoch)
            .with_committed(commit);
        let conn = self.coordinator_connection().await?;
        let resp = match conn.send(&req, version, timeout).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(e)),
        };
        match resp.error_code {
            pc::NONE => {
                if self.v2 {
                    // KIP-890: every EndTxn bumps the epoch (and may hand out a new id when
                    // the epoch runs out); sequences start again at 0.
                    if resp.producer_id.0 >= 0 {
                        self.producer_id = resp.producer_id.0;
                    }
                    if resp.producer_epoch >= 0 {
                        self.epoch = resp.producer_epoch;
                    }
                    self.sequences.clear();
                }
                self.completing = Some(Instant::now());
                Ok(())
            }
            code if pc::is_retriable(code) => Err(self.coordinator_retriable(code, "EndTxn")),
            code => Err(Retry::Never(self.set_fatal(format!(
                "EndTxn({}) of transactional id {} failed: {}",
                if commit { "commit" } else { "abort" },
                self.settings.transactional_id,
                pc::explain(code)
            )))),
        }
    }

    /// A request to the coordinator failed on the connection: it is dropped (the next call
    /// looks the coordinator up again).
    fn coordinator_failed(&mut self, e: ClientError) -> Retry {
        self.coordinator = None;
        Retry::from_client(e)
    }

    /// The coordinator answered a retriable `code` to `api`; forgotten if it moved.
    fn coordinator_retriable(&mut self, code: i16, api: &str) -> Retry {
        if matches!(code, pc::NOT_COORDINATOR | pc::COORDINATOR_NOT_AVAILABLE) {
            self.coordinator = None;
        }
        Retry::Now(format!("{api}: {}", pc::name(code)))
    }

    /// The connection to this transactional id's coordinator, found if not known.
    async fn coordinator_connection(&mut self) -> Result<&mut Connection, Retry> {
        if self.coordinator.is_none() {
            let timeout = self.settings.request_timeout;
            let mut last = None;
            let candidates: Vec<String> = self
                .brokers
                .values()
                .cloned()
                .chain(self.settings.bootstrap.iter().cloned())
                .collect();
            for broker in candidates {
                let mut conn = match connect(&self.settings, &broker).await {
                    Ok(c) => c,
                    Err(e) if e.is_fatal() => return Err(Retry::Never(fatal_client(e))),
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                let found = match find_coordinator(
                    &mut conn,
                    CoordinatorKind::Transaction,
                    &self.settings.transactional_id,
                    timeout,
                )
                .await
                {
                    Ok(f) => f,
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                self.coordinator = Some(if found == broker {
                    conn
                } else {
                    connect(&self.settings, &found)
                        .await
                        .map_err(Retry::from_client)?
                });
                break;
            }
            if self.coordinator.is_none() {
                return Err(Retry::Now(
                    last.map_or("no bootstrap servers".to_owned(), |e| e.to_string()),
                ));
            }
        }
        Ok(self.coordinator.as_mut().expect("set above"))
    }

    /// The partition count of `topic`, from metadata (asked for when unknown, with Java's
    /// auto-creation flag, until the delivery timeout).
    async fn partition_count(&mut self, topic: &str) -> Result<i32, ProducerError> {
        if let Some(m) = self.topics.get(topic) {
            return Ok(m.leaders.len() as i32);
        }
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(20);
        loop {
            match self.refresh_metadata(&[topic.to_owned()]).await {
                Ok(()) => {}
                Err(Retry::Never(e)) => return Err(e),
                Err(Retry::Now(why)) => {
                    tracing::debug!(topic, why, "metadata not available yet");
                }
            }
            if let Some(m) = self.topics.get(topic) {
                return Ok(m.leaders.len() as i32);
            }
            if Instant::now() >= deadline {
                return Err(ProducerError::UnknownTopic(topic.to_owned()));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// Metadata of `topics` (and the brokers) through any known broker.
    async fn refresh_metadata(&mut self, topics: &[String]) -> Result<(), Retry> {
        let timeout = self.settings.request_timeout;
        let req = MetadataRequest::default()
            .with_topics(Some(
                topics
                    .iter()
                    .map(|t| {
                        MetadataRequestTopic::default().with_name(Some(TopicName(str_bytes(t))))
                    })
                    .collect(),
            ))
            .with_allow_auto_topic_creation(true);
        // A kept produce connection first, else the coordinator's, else a new one.
        let mut conn = match self.connections.keys().next().copied() {
            Some(id) => self.connections.remove(&id).map(|c| (Some(id), c)),
            None => None,
        };
        if conn.is_none() {
            let mut last = None;
            let candidates: Vec<String> = self
                .brokers
                .values()
                .cloned()
                .chain(self.settings.bootstrap.iter().cloned())
                .collect();
            for b in candidates {
                match connect(&self.settings, &b).await {
                    Ok(c) => {
                        conn = Some((None, c));
                        break;
                    }
                    Err(e) if e.is_fatal() => return Err(Retry::Never(fatal_client(e))),
                    Err(e) => last = Some(e),
                }
            }
            if conn.is_none() {
                return Err(Retry::Now(
                    last.map_or("no bootstrap servers".to_owned(), |e| e.to_string()),
                ));
            }
        }
        let (id, mut conn) = conn.expect("set above");
        let Some(version) = conn.optional_version(ApiKey::Metadata) else {
            return Err(Retry::Never(unsupported("Metadata")));
        };
        let resp = conn
            .send(&req, version, timeout)
            .await
            .map_err(Retry::from_client)?;
        if let Some(id) = id {
            self.connections.insert(id, conn);
        }
        for b in &resp.brokers {
            self.brokers
                .insert(b.node_id, format!("{}:{}", b.host, b.port));
        }
        // Connections to brokers that left are closed.
        let brokers = &self.brokers;
        self.connections.retain(|id, _| brokers.contains_key(id));
        for t in &resp.topics {
            let Some(name) = &t.name else { continue };
            let name = name.0.to_string();
            if t.error_code != pc::NONE || t.partitions.is_empty() {
                if t.error_code == pc::TOPIC_AUTHORIZATION_FAILED {
                    return Err(Retry::Never(ProducerError::Abortable(format!(
                        "not authorized to write to topic {name}"
                    ))));
                }
                self.topics.remove(&name);
                continue;
            }
            let mut leaders = vec![BrokerId(-1); t.partitions.len()];
            for p in &t.partitions {
                if let Some(slot) = leaders.get_mut(p.partition_index as usize) {
                    *slot = if p.error_code == pc::NONE || p.error_code == pc::LEADER_NOT_AVAILABLE
                    {
                        p.leader_id
                    } else {
                        BrokerId(-1)
                    };
                }
            }
            self.topics.insert(name, TopicMeta { leaders });
        }
        Ok(())
    }
}

/// A new connection to `broker` with the producer's client id, timeout and security.
async fn connect(settings: &ProducerSettings, broker: &str) -> Result<Connection, ClientError> {
    Connection::connect(
        broker,
        &settings.client_id,
        settings.request_timeout,
        &settings.security,
        false,
    )
    .await
}

/// Whether a failed step may be tried again.
enum Retry {
    Now(String),
    Never(ProducerError),
}

impl Retry {
    fn from_client(e: ClientError) -> Self {
        if e.is_fatal() {
            Retry::Never(fatal_client(e))
        } else {
            Retry::Now(e.to_string())
        }
    }
}

fn fatal_client(e: ClientError) -> ProducerError {
    ProducerError::Fatal(e.to_string())
}

fn unsupported(api: &str) -> ProducerError {
    ProducerError::Fatal(format!("the broker does not support {api}"))
}

/// `compression.type` (or librdkafka's `compression.codec`) as a batch compression.
pub fn compression_of(name: &str) -> Option<Compression> {
    match name.trim().to_ascii_lowercase().as_str() {
        "none" => Some(Compression::None),
        "gzip" => Some(Compression::Gzip),
        "snappy" => Some(Compression::Snappy),
        "lz4" => Some(Compression::Lz4),
        "zstd" => Some(Compression::Zstd),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apache's `UtilsTest.testMurmur2` vectors.
    #[test]
    fn murmur2_matches_apache() {
        let cases: &[(&[u8], i32)] = &[
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for (input, expected) in cases {
            assert_eq!(
                murmur2(input),
                *expected,
                "{:?}",
                std::str::from_utf8(input)
            );
        }
    }

    #[test]
    fn keys_land_where_java_puts_them() {
        // toPositive(-973932308) % 10 = (1173551340) % 10
        assert_eq!(partition_for_key(b"21", 10), 1173551340 % 10);
        for p in 1..50 {
            let got = partition_for_key(b"some key", p);
            assert!((0..p).contains(&got));
        }
    }

    #[test]
    fn compression_names() {
        assert_eq!(compression_of("zstd"), Some(Compression::Zstd));
        assert_eq!(compression_of("None"), Some(Compression::None));
        assert_eq!(compression_of("brotli"), None);
    }
}
