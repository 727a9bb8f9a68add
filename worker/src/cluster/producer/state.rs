//! [`TransactionalProducer`]'s state: what it knows of the cluster, its producer id and epoch,
//! the open transaction's partitions and queues, where its records landed; [`Retries`]; whether
//! the producer can still be used.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Instant;

use kafka_protocol::messages::BrokerId;
use kafka_protocol::protocol::StrBytes;

use super::batch::{Landed, PartitionQueue, Tp};
use super::errors::ProducerError;
use super::settings::ProducerSettings;
use crate::cluster::client::Connection;

pub(super) struct TopicMeta {
    /// The leader of each partition (-1: none now).
    pub(super) leaders: Vec<BrokerId>,
}

/// A transactional producer for one transactional id.
pub struct TransactionalProducer {
    pub(super) settings: ProducerSettings,
    /// Broker id -> `host:port`.
    pub(super) brokers: HashMap<BrokerId, String>,
    pub(super) connections: HashMap<BrokerId, Connection>,
    pub(super) coordinator: Option<Connection>,
    pub(super) topics: HashMap<String, TopicMeta>,
    pub(super) producer_id: i64,
    pub(super) epoch: i16,
    /// Transactions v2 (KIP-890).
    pub(super) v2: bool,
    pub(super) produce_version: i16,
    pub(super) end_txn_version: i16,
    /// Next sequence number per partition (restarts at 0 with each epoch).
    pub(super) sequences: HashMap<Tp, i32>,
    /// Partitions of the open transaction (v1: added to it at the coordinator).
    pub(super) in_transaction: BTreeSet<Tp>,
    /// Partitions to add at the coordinator before their first produce (v1).
    pub(super) to_add: BTreeSet<Tp>,
    pub(super) queues: BTreeMap<Tp, PartitionQueue>,
    /// Where each record of the open transaction landed (`None`: not acknowledged yet).
    pub(super) landed: Vec<Option<Landed>>,
    /// Sticky partition per topic for records with neither key nor partition.
    pub(super) sticky: HashMap<String, i32>,
    /// Something went to the broker in the open transaction (an EndTxn is needed).
    pub(super) sent_any: bool,
    /// When the last EndTxn succeeded: its markers may still be being written.
    pub(super) completing: Option<Instant>,
    pub(super) open: bool,
    pub(super) fatal: Option<String>,
    pub(super) retries: Retries,
    pub(super) completion: CompletionWaits,
}

/// The waits for a finished transaction's markers before the next transaction's first produce
/// (`await_completion`): how many, how long in all, how many `DescribeTransactions` they sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompletionWaits {
    pub waits: u64,
    pub waited: std::time::Duration,
    pub describes: u64,
}

/// How often each step was retried (connection loss, timeouts, retriable errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retries {
    pub produce: u64,
    pub end_txn: u64,
    pub init: u64,
}

pub(super) fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

impl TransactionalProducer {
    /// How often each step was retried so far.
    pub fn retries(&self) -> Retries {
        self.retries
    }

    /// The waits for the last transactions' markers so far.
    pub fn completion_waits(&self) -> CompletionWaits {
        self.completion
    }

    /// Whether the cluster runs transactions v2 (KIP-890) for this producer.
    pub fn transactions_v2(&self) -> bool {
        self.v2
    }

    /// The producer id and epoch now.
    pub fn producer_id_and_epoch(&self) -> (i64, i16) {
        (self.producer_id, self.epoch)
    }

    pub(super) fn check_usable(&self) -> Result<(), ProducerError> {
        match &self.fatal {
            Some(why) => Err(ProducerError::Fatal(why.clone())),
            None => Ok(()),
        }
    }

    pub(super) fn set_fatal(&mut self, why: String) -> ProducerError {
        self.fatal = Some(why.clone());
        ProducerError::Fatal(why)
    }
}
