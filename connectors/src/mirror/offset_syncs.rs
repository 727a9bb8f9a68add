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
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// What is queued: the pure part of the writer, testable without Kafka.
#[derive(Debug, Default)]
pub struct SyncQueue {
    max_offset_lag: i64,
    states: HashMap<Tp, PartitionState>,
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
        let tp = (topic.to_owned(), partition);
        let sync = OffsetSync {
            topic: topic.to_owned(),
            partition,
            upstream_offset: upstream,
            downstream_offset: downstream,
        };
        let state = self
            .states
            .entry(tp.clone())
            .or_insert_with(|| PartitionState::new(self.max_offset_lag));
        if state.update(upstream, downstream) {
            state.reset();
            self.delayed.shift_remove(&tp);
            self.pending.insert(tp, sync);
        } else {
            self.delayed.insert(tp, sync);
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

/// Publishes queued syncs to partition 0 of the offset-syncs topic.
pub struct OffsetSyncWriter {
    queue: SyncQueue,
    producer: FutureProducer,
    topic: String,
    outstanding: Arc<AtomicUsize>,
}

impl OffsetSyncWriter {
    pub fn new(
        config: &BTreeMap<String, String>,
        topic: String,
        max_offset_lag: i64,
    ) -> Result<Self> {
        let mut c = ClientConfig::new();
        for (k, v) in config {
            c.set(k, v);
        }
        let producer = c.create().map_err(|e| {
            ConnectError::config(format!("failed to create the offset-syncs producer: {e}"))
        })?;
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
}
