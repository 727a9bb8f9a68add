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
//!
//! # Files
//!
//! - `state.rs`: [`TransactionalProducer`]'s state (what it knows of the cluster, its producer
//!   id and epoch, the open transaction's partitions and queues) and [`Retries`]
//! - `init.rs`: [`TransactionalProducer::init`]: `InitProducerId`, transactions v2 or v1
//! - `connection.rs`: connections to the brokers, and the transaction coordinator's
//!   (`FindCoordinator`; forgotten when it fails or moves)
//! - `metadata.rs`: partition counts and leaders, from `Metadata`
//! - `send.rs`: records into the open transaction: partitioning and the partitions' open
//!   batches, where each record landed
//! - `produce.rs`: [`TransactionalProducer::flush`]: per leader, up to [`MAX_IN_FLIGHT`]
//!   pipelined produce requests; sequence numbers, encoding, acknowledgements, retries
//! - `add_partitions.rs`: transactions v1: `AddPartitionsToTxn` of the new partitions
//! - `transaction.rs`: begin, commit and abort (`EndTxn`, v2's epoch bump), and the wait for
//!   the last transaction's markers
//! - `batch.rs`: a record handed over ([`OutRecord`]), where it landed ([`Landed`],
//!   [`RecordSlot`]), the partitions' queues of batches
//! - `partitioner.rs`: Java's murmur2 partitioner
//! - `settings.rs`: [`ProducerSettings`] and `compression.type`
//!   (`cluster/producer_settings.rs` makes them from a librdkafka config)
//! - `errors.rs`: [`ProducerError`], and whether a failed step is retried
//! - `produce_codes.rs`: [`produce_codes`], the Kafka error codes the producer tells apart

mod add_partitions;
mod batch;
mod connection;
mod errors;
mod init;
mod metadata;
mod partitioner;
mod produce;
pub mod produce_codes;
mod send;
mod settings;
mod state;
mod transaction;

pub use batch::{Landed, OutRecord, RecordSlot};
pub use errors::ProducerError;
pub use partitioner::{murmur2, partition_for_key};
pub use produce::MAX_IN_FLIGHT;
pub use settings::{ProducerSettings, compression_of};
pub use state::{CompletionWaits, Retries, TransactionalProducer};
