//! Records into the open transaction: each to its partition (explicit, Java's murmur2 of the
//! key, or a sticky partition per topic) and that partition's open batch; where a record landed.

use bytes::Bytes;
use indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{Record, TimestampType};

use super::batch::{Landed, OutRecord, RecordSlot};
use super::errors::ProducerError;
use super::partitioner::partition_for_key;
use super::state::TransactionalProducer;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl TransactionalProducer {
    /// Adds a record to the open transaction; it is sent by the next flush (or earlier, when
    /// its partition's batch is full and [`Self::send_ready`] runs). Its slot is the record's
    /// place among the transaction's records ([`RecordSlot::nth`]).
    pub async fn send(&mut self, record: OutRecord) -> Result<RecordSlot, ProducerError> {
        self.check_usable()?;
        let partitions = self
            .partition_count_with(&record.topic, record.partition)
            .await?;
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
                Some((topic, n))
                    if *topic == record.topic && record.partition.is_none_or(|p| p < *n) =>
                {
                    *n
                }
                _ => {
                    let n = match self
                        .partition_count_with(&record.topic, record.partition)
                        .await
                    {
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
}
