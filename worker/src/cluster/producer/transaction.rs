//! A transaction's life: begin (local), commit (flush, then `EndTxn`), abort (settle what was
//! sent, then `EndTxn`); v2's epoch bump at each end; and the wait for the last transaction's
//! markers before the next produce.

use std::time::{Duration, Instant};

use kafka_protocol::messages::{EndTxnRequest, ProducerId, TransactionalId};

use super::errors::{ProducerError, Retry};
use super::produce_codes as pc;
use super::state::{TransactionalProducer, str_bytes};

/// The longest wait for a finished transaction's markers before the next one produces.
const COMPLETION_WAIT: Duration = Duration::from_millis(50);

impl TransactionalProducer {
    /// Starts a transaction (local: the broker learns of it with the first record).
    pub fn begin(&mut self) -> Result<(), ProducerError> {
        self.check_usable()?;
        if self.open {
            return Err(ProducerError::Fatal(
                "a transaction is already open".to_owned(),
            ));
        }
        self.open = true;
        // Where the last transaction's records landed was read after its commit.
        self.landed.clear();
        Ok(())
    }

    pub fn is_open(&self) -> bool {
        self.open
    }

    /// Waits (at most [`COMPLETION_WAIT`]) until the coordinator has written the markers of
    /// the last commit or abort (DescribeTransactions no longer `PrepareCommit` or
    /// `PrepareAbort`). A produce request sent before that makes the partition leader's
    /// verification (v2) or our `AddPartitionsToTxn` (v1) answer `CONCURRENT_TRANSACTIONS`,
    /// which the broker retries only after `add.partitions.to.txn.retry.backoff.ms` (20 ms by
    /// default): per transaction, a few describe round trips are far cheaper. Best effort: any
    /// error ends the wait, and the produce request finds out.
    pub(super) async fn await_completion(&mut self) {
        let timeout = self.settings.request_timeout;
        let id = self.settings.transactional_id.clone();
        let started = Instant::now();
        let until = started + COMPLETION_WAIT;
        let mut describes = 0;
        if let Ok(conn) = self.coordinator_connection().await {
            while Instant::now() < until {
                describes += 1;
                match crate::cluster::transactions::describe_on(conn, &id, timeout).await {
                    Ok(Some(d)) if d.state == "PrepareCommit" || d.state == "PrepareAbort" => {
                        tokio::time::sleep(Duration::from_micros(200)).await;
                    }
                    _ => break,
                }
            }
        }
        self.completion.waits += 1;
        self.completion.waited += started.elapsed();
        self.completion.describes += describes;
    }

    /// Flushes, then commits the open transaction.
    pub async fn commit(&mut self) -> Result<(), ProducerError> {
        self.flush().await?;
        self.end(true).await
    }

    /// Aborts the open transaction: records not yet sent are dropped, the rest (already at
    /// the partitions) are aborted by the coordinator's markers.
    pub async fn abort(&mut self) -> Result<(), ProducerError> {
        self.check_usable()?;
        // Nothing is in flight between two calls (each flush waits for its answers), so the
        // unsent batches can go: the broker never saw their sequence numbers.
        for q in self.queues.values_mut() {
            q.open.clear();
            q.open_bytes = 0;
            q.batches.retain(|b| b.base_sequence.is_some());
        }
        // Batches sent but not acknowledged (a failed flush) must be settled first, or their
        // sequence numbers are unknown to the broker.
        if self.queues.values().any(|q| !q.batches.is_empty()) {
            if let Err(e) = self.flush().await {
                // The sequence state is unknown: only a new InitProducerId could clean it.
                return Err(self.set_fatal(format!(
                    "cannot abort: records sent earlier could not be settled: {e}"
                )));
            }
        }
        self.end(false).await
    }

    async fn end(&mut self, commit: bool) -> Result<(), ProducerError> {
        self.check_usable()?;
        if !self.open {
            return Err(ProducerError::Fatal("no transaction is open".to_owned()));
        }
        if !self.sent_any && self.to_add.is_empty() {
            self.finish_locally();
            return Ok(());
        }
        let deadline = Instant::now() + self.settings.delivery_timeout;
        let mut backoff = Duration::from_millis(5);
        let what = if commit { "commit" } else { "abort" };
        loop {
            match self.try_end(commit).await {
                Ok(()) => {
                    self.finish_locally();
                    return Ok(());
                }
                Err(Retry::Now(why)) if Instant::now() < deadline => {
                    self.retries.end_txn += 1;
                    tracing::debug!(transactional_id = %self.settings.transactional_id, why, "retrying EndTxn");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                Err(Retry::Now(why)) => {
                    return Err(self.set_fatal(format!(
                        "the {what} of transactional id {} did not complete within {:?}: {why}",
                        self.settings.transactional_id, self.settings.delivery_timeout
                    )));
                }
                Err(Retry::Never(e)) => return Err(e),
            }
        }
    }

    fn finish_locally(&mut self) {
        self.open = false;
        self.sent_any = false;
        self.in_transaction.clear();
        self.to_add.clear();
        self.queues.clear();
    }

    async fn try_end(&mut self, commit: bool) -> Result<(), Retry> {
        let timeout = self.settings.request_timeout;
        let version = self.end_txn_version;
        let req = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(str_bytes(&self.settings.transactional_id)))
            .with_producer_id(ProducerId(self.producer_id))
            .with_producer_epoch(self.epoch)
            .with_committed(commit);
        let conn = self.coordinator_connection().await?;
        let resp = match conn.send(&req, version, timeout).await {
            Ok(r) => r,
            Err(e) => return Err(self.coordinator_failed(e)),
        };
        match resp.error_code {
            pc::NONE => {
                if self.v2 {
                    // KIP-890: every EndTxn bumps the epoch (and may hand out a new id when
                    // the epoch runs out); sequences start again at 0.
                    if resp.producer_id.0 >= 0 {
                        self.producer_id = resp.producer_id.0;
                    }
                    if resp.producer_epoch >= 0 {
                        self.epoch = resp.producer_epoch;
                    }
                    self.sequences.clear();
                }
                self.completing = Some(Instant::now());
                Ok(())
            }
            code if pc::is_retriable(code) => Err(self.coordinator_retriable(code, "EndTxn")),
            code => Err(Retry::Never(self.set_fatal(format!(
                "EndTxn({}) of transactional id {} failed: {}",
                if commit { "commit" } else { "abort" },
                self.settings.transactional_id,
                pc::explain(code)
            )))),
        }
    }
}
