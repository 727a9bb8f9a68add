//! Records and batches: a record handed to the producer ([`OutRecord`]), where it landed
//! ([`Landed`], [`RecordSlot`]), and each partition's queue of batches.

use bytes::Bytes;
use kafka_protocol::records::Record;

/// One record handed to [`TransactionalProducer::send`](super::TransactionalProducer::send).
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

/// A record's place in the open transaction, to ask
/// [`TransactionalProducer::landed`](super::TransactionalProducer::landed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSlot(pub(super) usize);

impl RecordSlot {
    /// The slot of the transaction's `n`-th record (from 0): the records sent since `begin`,
    /// by [`TransactionalProducer::send`](super::TransactionalProducer::send) or
    /// [`TransactionalProducer::send_all`](super::TransactionalProducer::send_all), are
    /// numbered in the order they were given.
    pub fn nth(n: usize) -> Self {
        RecordSlot(n)
    }
}

pub(super) type Tp = (String, i32);

/// Records of one partition not yet acknowledged, in order.
#[derive(Default)]
pub(super) struct PartitionQueue {
    /// Batches cut but not yet acknowledged; the first may be in a request already.
    pub(super) batches: std::collections::VecDeque<Batch>,
    /// The batch being filled.
    pub(super) open: Vec<(RecordSlot, Record)>,
    pub(super) open_bytes: usize,
}

impl PartitionQueue {
    /// Closes the batch being filled (if it holds records): it joins the batches to send.
    pub(super) fn seal_open(&mut self) {
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

pub(super) struct Batch {
    pub(super) records: Vec<(RecordSlot, Record)>,
    /// Assigned when the batch is first sent, kept for its retries.
    pub(super) base_sequence: Option<i32>,
    /// The encoded batch (with its sequence, producer id and epoch), kept for retries.
    pub(super) encoded: Option<Bytes>,
}
