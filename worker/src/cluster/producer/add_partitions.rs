//! Transactions v1: `AddPartitionsToTxn` of the open transaction's new partitions at the
//! coordinator, before their first produce (v2's Produce adds them implicitly).

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    AddPartitionsToTxnRequest, ApiKey, ProducerId, TopicName, TransactionalId,
    add_partitions_to_txn_request::AddPartitionsToTxnTopic,
};

use super::errors::{ProducerError, Retry, unsupported};
use super::produce_codes as pc;
use super::state::{TransactionalProducer, str_bytes};

impl TransactionalProducer {
    /// v1: adds the transaction's new partitions at the coordinator.
    pub(super) async fn add_partitions(&mut self) -> Result<(), Retry> {
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
}
