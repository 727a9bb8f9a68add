//! [`TransactionalProducer::init`]: `InitProducerId` (which fences every older producer of the
//! transactional id), and the choice of transactions v2 (KIP-890) or v1 from `ApiVersions`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, InitProducerIdRequest, ProducerId, TransactionalId};

use super::errors::{ProducerError, Retry, unsupported};
use super::produce_codes as pc;
use super::settings::ProducerSettings;
use super::state::{Retries, TransactionalProducer, str_bytes};

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
            completion: Default::default(),
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
}
