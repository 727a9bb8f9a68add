//! The exactly-once source task's transactional producer: the worker's own
//! ([`crate::cluster::producer`], transactions v2 on clusters that have them) whenever the
//! task's effective producer settings are all ones it applies, librdkafka's otherwise.
//!
//! Which one a task gets is decided once, in [`choose`], from the task's librdkafka client
//! config (the worker's `producer.*` under the connector's `producer.override.*`) and the
//! security those settings resolve to. A setting the native producer does not apply sends the
//! task to librdkafka (which applies every setting it accepted), with one log line naming the
//! keys: nothing configured is ignored either way.

use std::time::Duration;

use connect_api::ConnectError;
use connect_api::connector::RecordMetadata;
use rdkafka::ClientConfig;
use rdkafka::error::KafkaError;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::types::RDKafkaErrorCode;

use super::ConnectorTaskId;
use super::source::{Delivery, ProducerRecord, try_send};
use super::topic_creation::unknown_topic_message;
use crate::cluster::producer::{
    OutRecord, ProducerError, ProducerSettings, RecordSlot, TransactionalProducer,
};
use crate::cluster::producer_settings;
use crate::security::KafkaSecurity;

/// Which producer a task uses.
pub enum ProducerChoice {
    Native(Box<ProducerSettings>),
    /// With the keys (or the reason) that kept the native producer out.
    Librdkafka(ClientConfig, String),
}

/// The native producer's settings from `config` (the task's librdkafka producer config) when
/// every key there is one it applies.
pub fn choose(config: ClientConfig, security: &KafkaSecurity) -> ProducerChoice {
    match producer_settings::from_librdkafka(&config, security) {
        Ok(s) => ProducerChoice::Native(Box::new(s)),
        Err(why) => {
            ProducerChoice::Librdkafka(crate::config::clients::java_buffer_memory(config), why)
        }
    }
}

/// A task's transactional producer, either kind.
pub(crate) enum TxnProducer {
    Native(Box<TransactionalProducer>),
    Librdkafka(FutureProducer),
    /// The native producer is flushing on another tokio task ([`TxnProducer::spawn_flush`]).
    Flushing,
}

/// What [`TxnProducer::spawn_flush`] hands back: the producer and how its flush ended.
pub(crate) type SpawnedFlush = tokio::task::JoinHandle<(TxnProducer, Result<(), String>)>;

const FLUSHING: &str = "the transactional producer is flushing";

/// How many polls' records a [`SendPipe`] holds before its sender waits.
const PIPE_DEPTH: usize = 8;

/// Records into the open transaction of a producer sending on its own tokio task
/// ([`TxnProducer::spawn_pipe`]).
pub(crate) struct SendPipe {
    tx: tokio::sync::mpsc::Sender<Vec<OutRecord>>,
    task: SpawnedFlush,
}

impl SendPipe {
    /// Hands `records` (in order, after those handed before) to the producer; the `n`-th
    /// record of the transaction lands at [`RecordSlot::nth`]`(n)`. Waits while the producer
    /// holds [`PIPE_DEPTH`] polls' records. `false`: the producer stopped on an error, which
    /// [`Self::close`] gives.
    pub async fn send(&self, records: Vec<OutRecord>) -> bool {
        self.tx.send(records).await.is_ok()
    }

    /// Whether the producer stopped (an error) before being closed.
    pub fn has_failed(&self) -> bool {
        self.task.is_finished()
    }

    /// Waits until every record handed over is acknowledged; the producer, to put back, and
    /// the first error.
    pub async fn close(self) -> (TxnProducer, Result<(), String>) {
        drop(self.tx);
        match self.task.await {
            Ok(done) => done,
            Err(e) => (
                TxnProducer::Flushing,
                Err(format!("the producer's send task failed: {e}")),
            ),
        }
    }
}

/// [`TransactionalProducer::send_all`], its error worded as a task's.
async fn append_all(p: &mut TransactionalProducer, records: Vec<OutRecord>) -> Result<(), String> {
    p.send_all(records)
        .await
        .map_err(|(topic, e)| producer_error(&topic, e).to_string())
}

/// A record handed to the producer, until its transaction is committed.
pub(crate) enum Pending {
    Native { topic: String, slot: RecordSlot },
    Librdkafka(Delivery),
}

/// How long librdkafka's transactional calls may block.
const RDKAFKA_CALL_TIMEOUT: Duration = Duration::from_secs(60);

impl TxnProducer {
    /// Creates the producer and initializes transactions (`InitProducerId`: fences every older
    /// producer of the transactional id).
    pub async fn start(
        choice: ProducerChoice,
        task: &ConnectorTaskId,
    ) -> Result<Self, ConnectError> {
        match choice {
            ProducerChoice::Native(settings) => {
                let p = TransactionalProducer::init(*settings).await.map_err(|e| {
                    ConnectError::fatal(format!(
                        "failed to initialize transactions for task {task}: {e}"
                    ))
                })?;
                tracing::info!(task = %task, transactions_v2 = p.transactions_v2(), "exactly-once task uses the worker's transactional producer");
                Ok(TxnProducer::Native(Box::new(p)))
            }
            ProducerChoice::Librdkafka(config, why) => {
                tracing::info!(task = %task, reason = %why, "exactly-once task uses librdkafka's transactional producer (transactions v1)");
                let producer: FutureProducer = config.create().map_err(|e| {
                    ConnectError::fatal(format!(
                        "failed to create the transactional producer of task {task}: {e}"
                    ))
                })?;
                let p = producer.clone();
                tokio::task::spawn_blocking(move || p.init_transactions(RDKAFKA_CALL_TIMEOUT))
                    .await
                    .map_err(|e| ConnectError::fatal(e.to_string()))?
                    .map_err(|e| {
                        ConnectError::fatal(format!(
                            "failed to initialize transactions for task {task}: {e}"
                        ))
                    })?;
                Ok(TxnProducer::Librdkafka(producer))
            }
        }
    }

    pub fn begin(&mut self) -> Result<(), String> {
        match self {
            TxnProducer::Native(p) => p.begin().map_err(|e| e.to_string()),
            TxnProducer::Librdkafka(p) => p.begin_transaction().map_err(|e| e.to_string()),
            TxnProducer::Flushing => Err(FLUSHING.into()),
        }
    }

    /// [`flush`](Self::flush) on a tokio task of its own, so that encoding and sending the open
    /// transaction's records run in parallel with the caller's work (the task's next polls and
    /// their conversion): `self` is [`TxnProducer::Flushing`] until the caller puts back the
    /// producer the handle gives. `None` when there is nothing to flush (librdkafka sends by
    /// itself; a native producer with no open transaction).
    pub fn spawn_flush(&mut self) -> Option<SpawnedFlush> {
        if !matches!(self, TxnProducer::Native(p) if p.is_open()) {
            return None;
        }
        let mut producer = std::mem::replace(self, TxnProducer::Flushing);
        Some(tokio::spawn(async move {
            let flushed = producer.flush().await;
            (producer, flushed)
        }))
    }

    /// The native producer with an open transaction on a tokio task of its own, taking
    /// records through a [`SendPipe`] and sending them while the caller polls and converts the
    /// next ones: `self` is [`TxnProducer::Flushing`] until [`SendPipe::close`] gives the
    /// producer back. `None` for librdkafka's producer (it sends from its own threads) or with
    /// no open transaction.
    pub fn spawn_pipe(&mut self) -> Option<SendPipe> {
        if !matches!(self, TxnProducer::Native(p) if p.is_open()) {
            return None;
        }
        let TxnProducer::Native(mut p) = std::mem::replace(self, TxnProducer::Flushing) else {
            unreachable!("checked above")
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<OutRecord>>(PIPE_DEPTH);
        let task = tokio::spawn(async move {
            let result = async {
                let mut closed = false;
                loop {
                    // Every poll's records given meanwhile go into the next produce requests.
                    loop {
                        match rx.try_recv() {
                            Ok(records) => append_all(&mut p, records).await?,
                            Err(tokio::sync::mpsc::error::TryRecvError::Empty) => break,
                            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => {
                                closed = true;
                                break;
                            }
                        }
                    }
                    p.flush().await.map_err(|e| e.to_string())?;
                    if closed {
                        return Ok(());
                    }
                    match rx.recv().await {
                        Some(records) => append_all(&mut p, records).await?,
                        None => closed = true,
                    }
                }
            }
            .await;
            (TxnProducer::Native(p), result)
        });
        Some(SendPipe { tx, task })
    }

    /// Adds a record to the open transaction.
    pub async fn send(&mut self, record: ProducerRecord) -> Result<Pending, ConnectError> {
        match self {
            TxnProducer::Native(p) => {
                let topic = record.topic.clone();
                let slot = p
                    .send(record)
                    .await
                    .map_err(|e| producer_error(&topic, e))?;
                Ok(Pending::Native { topic, slot })
            }
            TxnProducer::Librdkafka(p) => loop {
                if let Some(f) = try_send(p, &record)? {
                    break Ok(Pending::Librdkafka(Delivery::new(record.topic, f)));
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            },
            TxnProducer::Flushing => Err(ConnectError::fatal(FLUSHING)),
        }
    }

    /// Adds an offsets record (key, value or a tombstone) to the open transaction.
    pub async fn send_offset(
        &mut self,
        topic: &str,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), String> {
        match self {
            TxnProducer::Native(p) => p
                .send(OutRecord {
                    topic: topic.to_owned(),
                    partition: None,
                    key: Some(key.to_vec()),
                    value: value.map(<[u8]>::to_vec),
                    headers: Vec::new(),
                    timestamp: None,
                })
                .await
                .map(|_| ())
                .map_err(|e| e.to_string()),
            TxnProducer::Librdkafka(p) => {
                let mut r: FutureRecord<'_, [u8], [u8]> = FutureRecord::to(topic).key(key);
                if let Some(v) = value {
                    r = r.payload(v);
                }
                loop {
                    match p.send_result(r) {
                        Ok(_) => return Ok(()),
                        Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                            r = back;
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        Err((e, _)) => return Err(e.to_string()),
                    }
                }
            }
            TxnProducer::Flushing => Err(FLUSHING.into()),
        }
    }

    /// Sends what the open transaction holds and waits for the acknowledgements (native);
    /// librdkafka sends by itself, so there nothing is waited for.
    pub async fn flush(&mut self) -> Result<(), String> {
        match self {
            TxnProducer::Native(p) if p.is_open() => p.flush().await.map_err(|e| e.to_string()),
            TxnProducer::Flushing => Err(FLUSHING.into()),
            _ => Ok(()),
        }
    }

    /// Flushes and commits the open transaction.
    pub async fn commit(&mut self) -> Result<(), String> {
        match self {
            TxnProducer::Native(p) => p.commit().await.map_err(|e| e.to_string()),
            TxnProducer::Librdkafka(p) => {
                let started = std::time::Instant::now();
                // rdkafka's `commit_transaction` flushes first, and its flush waits in 100 ms
                // polls while the FutureProducer's own thread takes the delivery reports:
                // about 100 ms per transaction, whatever its size. Draining the queue here
                // first lets that flush return at once.
                while p.in_flight_count() > 0 && started.elapsed() < RDKAFKA_CALL_TIMEOUT {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                let p = p.clone();
                tokio::task::spawn_blocking(move || p.commit_transaction(RDKAFKA_CALL_TIMEOUT))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())
            }
            TxnProducer::Flushing => Err(FLUSHING.into()),
        }
    }

    /// Aborts the open transaction, within `timeout`.
    pub async fn abort(&mut self, timeout: Duration) -> Result<(), String> {
        match self {
            TxnProducer::Native(p) => tokio::time::timeout(timeout, p.abort())
                .await
                .map_err(|_| format!("the abort did not complete within {timeout:?}"))?
                .map_err(|e| e.to_string()),
            TxnProducer::Librdkafka(p) => {
                let p = p.clone();
                tokio::task::spawn_blocking(move || p.abort_transaction(timeout))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())
            }
            TxnProducer::Flushing => Err(FLUSHING.into()),
        }
    }

    /// Where a record of the transaction just committed landed (Connect's `RecordMetadata`).
    /// The native producer's waits for the last transactions' markers (`None`: librdkafka's
    /// producer, or the producer is sending on its own task).
    pub fn completion_waits(&self) -> Option<crate::cluster::producer::CompletionWaits> {
        match self {
            TxnProducer::Native(p) => Some(p.completion_waits()),
            _ => None,
        }
    }

    pub async fn landed(&mut self, pending: Pending) -> Result<RecordMetadata, ConnectError> {
        match (self, pending) {
            (TxnProducer::Native(p), Pending::Native { topic, slot }) => match p.landed(slot) {
                Some(l) => Ok(RecordMetadata {
                    topic,
                    partition: l.partition,
                    offset: l.offset,
                    timestamp: Some(l.timestamp),
                }),
                None => Err(ConnectError::fatal(format!(
                    "the record to topic {topic} was not acknowledged"
                ))),
            },
            (_, Pending::Librdkafka(d)) => d.wait().await,
            (TxnProducer::Librdkafka(_), Pending::Native { topic, .. }) => {
                Err(ConnectError::fatal(format!(
                    "the record to topic {topic} was sent by another producer"
                )))
            }
            (TxnProducer::Flushing, Pending::Native { .. }) => Err(ConnectError::fatal(FLUSHING)),
        }
    }
}

/// How many ids the worker's own producer fences at once (each over its own connections).
const NATIVE_FENCE_CONCURRENCY: usize = 64;
/// How many ids librdkafka fences at once (each with a short-lived producer and its threads).
const RDKAFKA_FENCE_CONCURRENCY: usize = 16;

/// What `Admin.fenceProducers` does, for each of `ids`: `InitProducerId` with it, which bumps its
/// epoch, so its producers are fenced and the coordinator aborts the transaction it left open.
/// `client` is a librdkafka client config (the worker's `admin.*` settings) and `security` what
/// they resolve to. The ids are fenced concurrently, so a connector of many tasks is fenced in
/// about one round trip: on the worker's own producer when every key of `client` is one it
/// applies, else (one log line says why) on librdkafka's. Every id is tried, each within
/// `timeout`; the errors are reported together.
pub async fn fence(
    client: &ClientConfig,
    security: &KafkaSecurity,
    ids: &[String],
    timeout: Duration,
) -> Result<(), String> {
    use futures::StreamExt;
    let Some(first) = ids.first() else {
        return Ok(());
    };
    let with_id = |id: &str| {
        let mut c = client.clone();
        c.set("transactional.id", id)
            .set("client.id", format!("connector-worker-fencer-{id}"));
        c
    };
    let errors: Vec<String> = match producer_settings::from_librdkafka(&with_id(first), security) {
        Ok(base) => {
            let fencers: Vec<_> = ids
                .iter()
                .map(|id| {
                    let mut s = base.clone();
                    s.transactional_id = id.clone();
                    s.client_id = format!("connector-worker-fencer-{id}");
                    s.delivery_timeout = timeout;
                    let id = id.clone();
                    async move {
                        TransactionalProducer::init(s)
                            .await
                            .map(drop)
                            .map_err(|e| format!("{id}: {e}"))
                    }
                })
                .collect();
            let results: Vec<Result<(), String>> = futures::stream::iter(fencers)
                .buffer_unordered(NATIVE_FENCE_CONCURRENCY)
                .collect()
                .await;
            results.into_iter().filter_map(Result::err).collect()
        }
        Err(why) => {
            tracing::info!(reason = %why, "fencing on librdkafka's producer");
            let configs: Vec<(String, ClientConfig)> =
                ids.iter().map(|id| (id.clone(), with_id(id))).collect();
            tokio::task::spawn_blocking(move || rdkafka_fence(&configs, timeout))
                .await
                .map_err(|e| e.to_string())?
        }
    };
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// librdkafka's fencing: `init_transactions` of a short-lived producer per id,
/// [`RDKAFKA_FENCE_CONCURRENCY`] at a time. Blocking. The errors, one per id that failed.
fn rdkafka_fence(configs: &[(String, ClientConfig)], timeout: Duration) -> Vec<String> {
    use rdkafka::producer::BaseProducer;
    let fence_one = |id: &str, c: &ClientConfig| -> Result<(), String> {
        let p: BaseProducer = c.create().map_err(|e| format!("{id}: {e}"))?;
        p.init_transactions(timeout)
            .map_err(|e| format!("{id}: {e}"))
    };
    let mut errors = Vec::new();
    for chunk in configs.chunks(RDKAFKA_FENCE_CONCURRENCY) {
        std::thread::scope(|scope| {
            let fencers: Vec<_> = chunk
                .iter()
                .map(|(id, c)| scope.spawn(move || fence_one(id, c)))
                .collect();
            for ((id, _), fencer) in chunk.iter().zip(fencers) {
                match fencer.join() {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => errors.push(e),
                    Err(_) => errors.push(format!("{id}: the fencing thread panicked")),
                }
            }
        });
    }
    errors
}

fn producer_error(topic: &str, e: ProducerError) -> ConnectError {
    match e {
        ProducerError::UnknownTopic(t) => ConnectError::fatal(unknown_topic_message(&t)),
        e => ConnectError::fatal(format!("failed to send record to topic {topic}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task_config(extra: &[(&str, &str)]) -> ClientConfig {
        let mut c = ClientConfig::new();
        c.set("bootstrap.servers", "b1:9092,b2:9092")
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("partitioner", "murmur2_random")
            .set("client.id", "connector-producer-c-0")
            .set("transactional.id", "g-c-0")
            .set("linger.ms", "0")
            .set("security.protocol", "PLAINTEXT");
        for (k, v) in extra {
            c.set(*k, *v);
        }
        c
    }

    #[test]
    fn a_task_with_the_usual_settings_gets_the_native_producer() {
        let ProducerChoice::Native(s) = choose(
            task_config(&[("compression.type", "zstd"), ("batch.size", "65536")]),
            &KafkaSecurity::default(),
        ) else {
            panic!("expected the native producer");
        };
        assert_eq!(s.bootstrap, ["b1:9092", "b2:9092"]);
        assert_eq!(s.transactional_id, "g-c-0");
        assert_eq!(s.batch_bytes, 65536);
        assert_eq!(s.compression, kafka_protocol::records::Compression::Zstd);
    }

    #[test]
    fn a_setting_only_librdkafka_applies_keeps_librdkafka() {
        for (k, v) in [
            ("socket.keepalive.enable", "true"),
            ("acks", "1"),
            ("compression.type", "inherit"),
            ("partitioner", "consistent_random"),
        ] {
            match choose(task_config(&[(k, v)]), &KafkaSecurity::default()) {
                ProducerChoice::Librdkafka(c, why) => {
                    assert!(why.contains(k), "{why}");
                    assert_eq!(c.get(k), Some(v));
                }
                ProducerChoice::Native(_) => panic!("{k}={v} must keep librdkafka"),
            }
        }
    }

    /// Java's `buffer.memory` bound goes to librdkafka's producer only (the key would keep a
    /// task off the native producer); a configured one is kept.
    #[test]
    fn the_java_buffer_bound_applies_to_librdkafka_only() {
        let ProducerChoice::Librdkafka(c, _) = choose(
            task_config(&[("socket.keepalive.enable", "true")]),
            &KafkaSecurity::default(),
        ) else {
            panic!("expected librdkafka");
        };
        assert_eq!(c.get("queue.buffering.max.kbytes"), Some("32768"));
        let ProducerChoice::Librdkafka(c, _) = choose(
            task_config(&[("queue.buffering.max.kbytes", "1024")]),
            &KafkaSecurity::default(),
        ) else {
            panic!("expected librdkafka");
        };
        assert_eq!(c.get("queue.buffering.max.kbytes"), Some("1024"));
        let ProducerChoice::Librdkafka(c, _) = choose(
            crate::config::clients::java_buffer_memory(task_config(&[])),
            &KafkaSecurity::default(),
        ) else {
            panic!("the bound keeps librdkafka: the worker must not set it for the native one");
        };
        assert_eq!(c.get("queue.buffering.max.kbytes"), Some("32768"));
    }
}
