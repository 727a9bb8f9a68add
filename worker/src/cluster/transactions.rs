//! What the transaction coordinator knows of a transactional id (DescribeTransactions,
//! KIP-664): whether a transaction is open, since when, and on which partitions. Read over the
//! same connections (TLS, SASL) as the group client.

use std::time::Duration;

use kafka_protocol::messages::{ApiKey, DescribeTransactionsRequest, TransactionalId};
use kafka_protocol::protocol::StrBytes;

use super::client::{
    ClientError, Connection, CoordinatorKind, Security, bootstrap_list, codes, find_coordinator,
};
use crate::security::KafkaSecurity;

/// One transactional id as its coordinator describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionDescription {
    pub transactional_id: String,
    /// `Empty`, `Ongoing`, `PrepareCommit`, `PrepareAbort`, `CompleteCommit`, ...
    pub state: String,
    /// When the open transaction started (ms since the epoch); `None` when none is open.
    pub started_ms: Option<i64>,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// (topic, partitions) of the open transaction.
    pub topics: Vec<(String, Vec<i32>)>,
}

impl TransactionDescription {
    /// Whether a transaction is open (not finished by a commit or an abort).
    pub fn is_open(&self) -> bool {
        matches!(
            self.state.as_str(),
            "Ongoing" | "PrepareCommit" | "PrepareAbort"
        )
    }
}

/// Describes transactional ids through their coordinators.
pub struct TransactionsClient {
    bootstrap: Vec<String>,
    client_id: String,
    timeout: Duration,
    security: Security,
    /// The last coordinator used, kept open for the next description of the same id (the
    /// watchdog asks every few seconds: no new connection, TLS handshake or SASL login each
    /// time). Dropped on any error, so the next call looks the coordinator up again.
    cached: tokio::sync::Mutex<Option<(String, Connection)>>,
}

impl TransactionsClient {
    pub fn new(
        bootstrap_servers: &str,
        client_id: &str,
        timeout: Duration,
        security: &KafkaSecurity,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            bootstrap: bootstrap_list(bootstrap_servers),
            client_id: client_id.to_owned(),
            timeout,
            security: Security::new(security)?,
            cached: tokio::sync::Mutex::new(None),
        })
    }

    async fn connect(&self, broker: &str) -> Result<Connection, ClientError> {
        Connection::connect(broker, &self.client_id, self.timeout, &self.security, false).await
    }

    /// `None` when no broker answers DescribeTransactions (a broker older than 3.0).
    pub async fn describe(
        &self,
        transactional_id: &str,
    ) -> Result<Option<TransactionDescription>, ClientError> {
        let mut cached = self.cached.lock().await;
        if let Some((id, mut conn)) = cached.take()
            && id == transactional_id
            && let Ok(d) = describe_on(&mut conn, transactional_id, self.timeout).await
        {
            *cached = Some((id, conn));
            return Ok(d);
        }
        let mut last = None;
        for broker in &self.bootstrap {
            let described = match self.coordinator_via(broker, transactional_id).await {
                Ok(mut conn) => describe_on(&mut conn, transactional_id, self.timeout)
                    .await
                    .map(|d| (d, conn)),
                Err(e) => Err(e),
            };
            match described {
                Ok((d, conn)) => {
                    *cached = Some((transactional_id.to_owned(), conn));
                    return Ok(d);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or(ClientError::Protocol {
            broker: String::new(),
            reason: "no bootstrap servers".into(),
        }))
    }

    /// A connection to `transactional_id`'s coordinator, found through `broker`.
    async fn coordinator_via(
        &self,
        broker: &str,
        transactional_id: &str,
    ) -> Result<Connection, ClientError> {
        let mut conn = self.connect(broker).await?;
        let coordinator = find_coordinator(
            &mut conn,
            CoordinatorKind::Transaction,
            transactional_id,
            self.timeout,
        )
        .await?;
        if coordinator == broker {
            Ok(conn)
        } else {
            self.connect(&coordinator).await
        }
    }
}

/// DescribeTransactions of one id on its coordinator's connection.
async fn describe_on(
    conn: &mut Connection,
    transactional_id: &str,
    timeout: Duration,
) -> Result<Option<TransactionDescription>, ClientError> {
    let Some(version) = conn.optional_version(ApiKey::DescribeTransactions) else {
        return Ok(None);
    };
    let req = DescribeTransactionsRequest::default().with_transactional_ids(vec![TransactionalId(
        StrBytes::from_string(transactional_id.to_owned()),
    )]);
    let resp = conn.send(&req, version, timeout).await?;
    let state =
        resp.transaction_states
            .into_iter()
            .next()
            .ok_or_else(|| ClientError::Protocol {
                broker: conn.broker().to_owned(),
                reason: "DescribeTransactions returned no state".into(),
            })?;
    match state.error_code {
        codes::NONE => {}
        // Never used, or expired: nothing is open.
        codes::TRANSACTIONAL_ID_NOT_FOUND => {
            return Ok(Some(TransactionDescription {
                transactional_id: transactional_id.to_owned(),
                state: "Empty".into(),
                started_ms: None,
                producer_id: -1,
                producer_epoch: -1,
                topics: Vec::new(),
            }));
        }
        code => {
            return Err(ClientError::Broker {
                api: ApiKey::DescribeTransactions,
                code,
            });
        }
    }
    Ok(Some(TransactionDescription {
        transactional_id: transactional_id.to_owned(),
        state: state.transaction_state.to_string(),
        started_ms: (state.transaction_start_time_ms >= 0)
            .then_some(state.transaction_start_time_ms),
        producer_id: state.producer_id.0,
        producer_epoch: state.producer_epoch,
        topics: state
            .topics
            .into_iter()
            .map(|t| (t.topic.0.to_string(), t.partitions))
            .collect(),
    }))
}
