//! [`TransactionalProducer::flush`]: the open transaction's batches to their partitions'
//! leaders, per leader up to [`MAX_IN_FLIGHT`] produce requests pipelined on one connection;
//! a batch's sequence numbers and encoding, kept across retries; acknowledgements; which
//! produce errors are retried, abortable or fatal.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    BrokerId, ProduceRequest, TopicName, TransactionalId,
    produce_request::{PartitionProduceData, TopicProduceData},
};
use kafka_protocol::records::{RecordBatchEncoder, RecordEncodeOptions};

use super::batch::{Landed, Tp};
use super::connection::connect;
use super::errors::{ProducerError, Retry};
use super::produce_codes as pc;
use super::state::{TransactionalProducer, str_bytes};

/// At most this many produce requests in flight per connection (the broker keeps the last five
/// batches of a producer per partition to drop duplicates of retried ones).
pub const MAX_IN_FLIGHT: usize = 5;

/// A transaction that ended this long before the next produce had its markers written (the
/// coordinator writes them within a few ms): the next produce does not ask (a trickling task
/// saves a round trip per transaction).
const MARKERS_WRITTEN_AFTER: Duration = Duration::from_millis(10);

impl TransactionalProducer {
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
}
