//! Stuck transactions of the cluster's config writer (README, "Self-healing").
//!
//! The leader writes the config topic in transactions of `connect-cluster-<group.id>`. A leader
//! killed in the middle of one leaves it open, and every `read_committed` reader of the config
//! topic (each worker's config store, a restarting worker's start-up) waits until the broker
//! aborts it: the writer's transaction timeout plus up to the broker's abort check interval
//! (10 s each here; 60 s + 10 s for Apache's writer). From start-up on, every worker asks the
//! transaction coordinator about that id (DescribeTransactions) every
//! [`CHECK_INTERVAL`]; a transaction open longer than `stuck.transaction.timeout.ms` is
//! reported and aborted at once by fencing the id (`InitProducerId` through a producer with
//! it). A live leader whose write was that slow finds its writer fenced and claims it again.

use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};
use tokio_util::sync::CancellationToken;

use crate::cluster::transactions::{TransactionDescription, TransactionsClient};
use crate::config::{ClientScope, ExactlyOnceSourceSupport, WorkerConfig};
use crate::storage::config::{LEADER_TRANSACTIONAL_ID_PREFIX, leader_writer_config};

/// How often the config writer's transaction is looked at.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(2);

/// Starts watching the config writer's transactions when the leader writes transactionally
/// (`exactly.once.source.support` preparing or enabled) and `stuck.transaction.timeout.ms` is
/// not -1; runs until `shutdown`.
pub fn spawn(config: &WorkerConfig, shutdown: CancellationToken) {
    let Some(threshold) = config.stuck_transaction_timeout else {
        return;
    };
    if config.exactly_once_source_support == ExactlyOnceSourceSupport::Disabled {
        return;
    }
    let client = match TransactionsClient::new(
        &config.bootstrap_servers,
        &format!("connect-{}-transactions", config.group_id),
        config.request_timeout,
        &config.kafka_security,
    ) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the config writer's transactions");
            return;
        }
    };
    let producer_config = match config.kafka_client(ClientScope::Internal) {
        Ok(c) => leader_writer_config(&c, &config.group_id),
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the config writer's transactions");
            return;
        }
    };
    let id = format!("{LEADER_TRANSACTIONAL_ID_PREFIX}{}", config.group_id);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(CHECK_INTERVAL);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            match client.describe(&id).await {
                Ok(Some(d)) => {
                    if let Some(age) = stuck_for(&d, threshold, now_ms()) {
                        abort_by_fencing(&d, age, &producer_config).await;
                    }
                }
                Ok(None) => {
                    tracing::info!(
                        "the brokers do not describe transactions (DescribeTransactions); stuck config writes are left to the transaction timeout"
                    );
                    return;
                }
                Err(e) => {
                    tracing::debug!(error = %e, transactional_id = %id, "could not describe the config writer's transaction")
                }
            }
        }
    });
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// How long `d`'s transaction has been open, when that is past `threshold`.
pub fn stuck_for(d: &TransactionDescription, threshold: Duration, now_ms: i64) -> Option<Duration> {
    if d.state != "Ongoing" {
        // Prepare* states are being completed by the coordinator already.
        return None;
    }
    let age = Duration::from_millis(u64::try_from(now_ms - d.started_ms?).unwrap_or(0));
    (age > threshold).then_some(age)
}

/// Aborts `d`'s open transaction: `InitProducerId` with its transactional id bumps the epoch,
/// which makes the coordinator abort what the old epoch left open.
async fn abort_by_fencing(d: &TransactionDescription, age: Duration, producer: &ClientConfig) {
    let partitions: Vec<String> = d
        .topics
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| format!("{t}-{p}")))
        .collect();
    tracing::warn!(
        transactional_id = %d.transactional_id,
        producer_id = d.producer_id,
        producer_epoch = d.producer_epoch,
        open_ms = age.as_millis() as u64,
        partitions = %partitions.join(","),
        "the config writer's transaction has been open for {} s; aborting it by fencing {} (stuck.transaction.timeout.ms)",
        age.as_secs(),
        d.transactional_id
    );
    let producer = producer.clone();
    let fenced = tokio::task::spawn_blocking(move || {
        let p: BaseProducer = producer.create()?;
        p.init_transactions(Duration::from_secs(30))
    })
    .await;
    match fenced {
        Ok(Ok(())) => {
            crate::metrics::global().stuck_transaction_aborted();
            tracing::info!(transactional_id = %d.transactional_id, "aborted the stuck transaction");
        }
        Ok(Err(e)) => {
            tracing::warn!(transactional_id = %d.transactional_id, error = %e, "could not fence the stuck transaction's id; will retry")
        }
        Err(e) => tracing::warn!(error = %e, "the fencing task failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(state: &str, started_ms: Option<i64>) -> TransactionDescription {
        TransactionDescription {
            transactional_id: "connect-cluster-g".into(),
            state: state.into(),
            started_ms,
            producer_id: 7,
            producer_epoch: 1,
            topics: vec![("g-configs".into(), vec![0])],
        }
    }

    #[test]
    fn only_ongoing_transactions_past_the_threshold_are_stuck() {
        let t = Duration::from_secs(10);
        assert_eq!(
            stuck_for(&open("Ongoing", Some(1_000)), t, 12_000),
            Some(Duration::from_secs(11))
        );
        assert_eq!(stuck_for(&open("Ongoing", Some(1_000)), t, 5_000), None);
        assert_eq!(stuck_for(&open("PrepareCommit", Some(0)), t, 60_000), None);
        assert_eq!(stuck_for(&open("Empty", None), t, 60_000), None);
    }
}
