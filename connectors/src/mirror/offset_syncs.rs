//! Apache's `OffsetSyncWriter`: which (upstream, downstream) offset pairs a source task
//! publishes to the offset-syncs topic, and the producer that publishes them.
//!
//! A sync is queued for a partition when it is the first since the task started, when the
//! downstream offset moved `offset.lag.max` or more past the last sync, when the upstream
//! offsets skipped (compaction, aborted transactions, transaction markers) or when the
//! downstream topic was truncated. Other pairs are kept as "delayed" and promoted at every
//! offset commit, so a quiet partition still gets its last position synced. At most
//! [`MAX_OUTSTANDING`] syncs are in flight; the rest wait for the next commit or record.
//!
//! Syncs are written outside the task's transaction (as Apache does): they are written after
//! the records they describe are committed, so a sync never names a record a
//! `read_committed` reader of the target cannot see.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use connect_api::error::{ConnectError, Result};
use indexmap::IndexMap;
use rdkafka::ClientConfig;
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::formats::OffsetSync;

pub const MAX_OUTSTANDING: usize = 10;

/// Per-partition state (Apache's `OffsetSyncWriter.PartitionState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    previous_upstream: i64,
    previous_downstream: i64,
    last_sync_downstream: i64,
    max_offset_lag: i64,
    should_sync: bool,
}

impl PartitionState {
    pub fn new(max_offset_lag: i64) -> Self {
        Self {
            previous_upstream: -1,
            previous_downstream: -1,
            last_sync_downstream: -1,
            max_offset_lag,
            should_sync: false,
        }
    }

    /// Whether a sync is due after this record.
    pub fn update(&mut self, upstream: i64, downstream: i64) -> bool {
        let first = self.last_sync_downstream == -1;
        let stale = downstream - (self.last_sync_downstream + 1) >= self.max_offset_lag;
        let skipped = upstream - self.previous_upstream != 1;
        let truncated = downstream < self.previous_downstream;
        if first || stale || skipped || truncated {
            self.last_sync_downstream = downstream;
            self.should_sync = true;
        }
        self.previous_upstream = upstream;
        self.previous_downstream = downstream;
        self.should_sync
    }

    fn reset(&mut self) {
        self.should_sync = false;
    }
}

type Tp = (String, i32);

/// A borrowed [`Tp`] to look entries up without allocating: it hashes as the tuple does (its
/// fields in order, the topic as a `str`).
#[derive(Hash)]
struct TpRef<'a>(&'a str, i32);

impl indexmap::Equivalent<Tp> for TpRef<'_> {
    fn equivalent(&self, key: &Tp) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

/// What is queued: the pure part of the writer, testable without Kafka.
///
/// Called for every replicated record: a record of a known partition allocates nothing (its
/// state and its delayed sync are updated in place); only a due sync is copied.
#[derive(Debug, Default)]
pub struct SyncQueue {
    max_offset_lag: i64,
    /// Per topic, per partition.
    states: HashMap<String, HashMap<i32, PartitionState>>,
    delayed: IndexMap<Tp, OffsetSync>,
    pending: IndexMap<Tp, OffsetSync>,
}

impl SyncQueue {
    pub fn new(max_offset_lag: i64) -> Self {
        Self {
            max_offset_lag,
            ..Self::default()
        }
    }

    pub fn maybe_queue(&mut self, topic: &str, partition: i32, upstream: i64, downstream: i64) {
        let partitions = match self.states.get_mut(topic) {
            Some(p) => p,
            None => self.states.entry(topic.to_owned()).or_default(),
        };
        let state = partitions
            .entry(partition)
            .or_insert_with(|| PartitionState::new(self.max_offset_lag));
        let key = TpRef(topic, partition);
        if state.update(upstream, downstream) {
            state.reset();
            self.delayed.shift_remove(&key);
            self.pending.insert(
                (topic.to_owned(), partition),
                sync(topic, partition, upstream, downstream),
            );
        } else if let Some(delayed) = self.delayed.get_mut(&key) {
            delayed.upstream_offset = upstream;
            delayed.downstream_offset = downstream;
        } else {
            self.delayed.insert(
                (topic.to_owned(), partition),
                sync(topic, partition, upstream, downstream),
            );
        }
    }

    pub fn promote_delayed(&mut self) {
        for (tp, sync) in self.delayed.drain(..) {
            self.pending.insert(tp, sync);
        }
    }

    /// The next pending sync, oldest first.
    pub fn next_pending(&mut self) -> Option<OffsetSync> {
        self.pending.shift_remove_index(0).map(|(_, s)| s)
    }
}

fn sync(topic: &str, partition: i32, upstream: i64, downstream: i64) -> OffsetSync {
    OffsetSync {
        topic: topic.to_owned(),
        partition,
        upstream_offset: upstream,
        downstream_offset: downstream,
    }
}

/// Publishes queued syncs to partition 0 of the offset-syncs topic.
pub struct OffsetSyncWriter {
    queue: SyncQueue,
    producer: Arc<FutureProducer>,
    topic: String,
    outstanding: Arc<AtomicUsize>,
}

/// The offset-syncs producers of the process, one per client config, while a writer uses it.
type Producers = Mutex<HashMap<BTreeMap<String, String>, Weak<FutureProducer>>>;

/// The producer of `config`, shared by every writer of that config (the tasks of a connector):
/// each librdkafka producer has a polling thread that, in rdkafka's `poll` loop, spins for the
/// last millisecond of each 100 ms wait (a profile of `mm2_bench` had each such thread at
/// ~2.7 % of a core, replicating or idle), and its own connections. Apache's tasks have one
/// producer each; the syncs, all to partition 0, are the same.
fn shared_producer(config: &BTreeMap<String, String>) -> Result<Arc<FutureProducer>> {
    static PRODUCERS: OnceLock<Producers> = OnceLock::new();
    let mut producers = PRODUCERS
        .get_or_init(Producers::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    producers.retain(|_, p| p.strong_count() > 0);
    if let Some(p) = producers.get(config).and_then(Weak::upgrade) {
        return Ok(p);
    }
    let mut c = ClientConfig::new();
    for (k, v) in config {
        c.set(k, v);
    }
    let producer = Arc::new(c.create().map_err(|e| {
        ConnectError::config(format!("failed to create the offset-syncs producer: {e}"))
    })?);
    producers.insert(config.clone(), Arc::downgrade(&producer));
    Ok(producer)
}

impl OffsetSyncWriter {
    pub fn new(
        config: &BTreeMap<String, String>,
        topic: String,
        max_offset_lag: i64,
    ) -> Result<Self> {
        let producer = shared_producer(config)?;
        Ok(Self {
            queue: SyncQueue::new(max_offset_lag),
            producer,
            topic,
            outstanding: Arc::new(AtomicUsize::new(0)),
        })
    }

    pub fn maybe_queue(&mut self, topic: &str, partition: i32, upstream: i64, downstream: i64) {
        self.queue
            .maybe_queue(topic, partition, upstream, downstream);
    }

    pub fn promote_delayed(&mut self) {
        self.queue.promote_delayed();
    }

    /// Sends pending syncs while fewer than [`MAX_OUTSTANDING`] are in flight.
    pub fn fire_pending(&mut self) {
        while self.outstanding.load(Ordering::Acquire) < MAX_OUTSTANDING {
            let Some(sync) = self.queue.next_pending() else {
                return;
            };
            let (key, value) = (sync.key(), sync.value());
            let record = FutureRecord::to(&self.topic)
                .partition(0)
                .key(&key)
                .payload(&value);
            match self.producer.send_result(record) {
                Ok(delivery) => {
                    self.outstanding.fetch_add(1, Ordering::AcqRel);
                    let outstanding = self.outstanding.clone();
                    tokio::spawn(async move {
                        if let Ok(Err((e, _))) = delivery.await {
                            tracing::error!(error = %e, "failure sending offset sync");
                        }
                        outstanding.fetch_sub(1, Ordering::AcqRel);
                    });
                }
                Err((e, _)) => {
                    tracing::warn!(error = %e, "offset sync not sent; a later one will be");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apache's `OffsetSyncWriterTest.testFirePendingOffsetSyncs`-like sequence.
    #[test]
    fn syncs_are_queued_as_apache() {
        let mut q = SyncQueue::new(100);
        q.maybe_queue("t", 0, 0, 100);
        let first = q.next_pending().expect("first record syncs");
        assert_eq!((first.upstream_offset, first.downstream_offset), (0, 100));
        q.maybe_queue("t", 0, 1, 101);
        assert_eq!(q.next_pending(), None, "contiguous: delayed");
        q.promote_delayed();
        assert_eq!(q.next_pending().map(|s| s.upstream_offset), Some(1));
        q.maybe_queue("t", 0, 5, 102);
        assert_eq!(
            q.next_pending().map(|s| s.upstream_offset),
            Some(5),
            "upstream skipped"
        );
        for i in 6..=106 {
            q.maybe_queue("t", 0, i, 97 + i);
        }
        // 203 - (102 + 1) >= 100 at upstream 106.
        assert_eq!(q.next_pending().map(|s| s.upstream_offset), Some(106));
    }

    #[test]
    fn writers_of_one_config_share_a_producer_while_one_uses_it() {
        let config: BTreeMap<String, String> = [
            ("bootstrap.servers".to_owned(), "127.0.0.1:1".to_owned()),
            ("client.id".to_owned(), "offset-syncs-share-test".to_owned()),
        ]
        .into();
        let a = shared_producer(&config).unwrap();
        let b = shared_producer(&config).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let mut other = config.clone();
        other.insert(
            "client.id".to_owned(),
            "offset-syncs-share-test-2".to_owned(),
        );
        assert!(!Arc::ptr_eq(&a, &shared_producer(&other).unwrap()));
        let gone = Arc::downgrade(&a);
        drop((a, b));
        assert!(gone.upgrade().is_none(), "the last writer's drop ends it");
        assert!(!Arc::ptr_eq(
            &shared_producer(&config).unwrap(),
            &shared_producer(&other).unwrap()
        ));
    }

    /// A delayed sync updated in place keeps its place among the delayed ones (as a map insert
    /// of an existing key does in Apache's `LinkedHashMap`) and carries the latest offsets.
    #[test]
    fn delayed_syncs_keep_their_order_and_latest_offsets() {
        let mut q = SyncQueue::new(100);
        q.maybe_queue("a", 0, 0, 0);
        q.maybe_queue("b", 1, 0, 0);
        assert!(q.next_pending().is_some() && q.next_pending().is_some());
        q.maybe_queue("a", 0, 1, 1);
        q.maybe_queue("b", 1, 1, 1);
        q.maybe_queue("a", 0, 2, 2);
        assert_eq!(q.next_pending(), None);
        q.promote_delayed();
        let order: Vec<(String, i32, i64, i64)> = std::iter::from_fn(|| q.next_pending())
            .map(|s| (s.topic, s.partition, s.upstream_offset, s.downstream_offset))
            .collect();
        assert_eq!(
            order,
            vec![("a".to_owned(), 0, 2, 2), ("b".to_owned(), 1, 1, 1)]
        );
    }
}
