//! What the transaction coordinators know (KIP-664): of one transactional id
//! (DescribeTransactions) whether a transaction is open, since when, and on which partitions;
//! of the whole cluster, which transactions are open (ListTransactions on every broker, each
//! answering for the ids it coordinates). Read over the same connections (TLS, SASL) as the
//! group client.

use std::collections::HashMap;
use std::time::Duration;

use kafka_protocol::messages::{
    ApiKey, DescribeTransactionsRequest, ListTransactionsRequest, MetadataRequest, TransactionalId,
};
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
    /// One kept connection per broker for [`TransactionsClient::list_open`].
    brokers: tokio::sync::Mutex<HashMap<String, Connection>>,
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
            brokers: tokio::sync::Mutex::new(HashMap::new()),
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

    /// Every transaction open (`Ongoing`) for at least `min_age` on the cluster, described
    /// (partitions, start, producer). Empty when the brokers do not list transactions (before
    /// Kafka 3.0). A broker that does not answer is skipped (logged), the others still count.
    pub async fn list_open(
        &self,
        min_age: Duration,
    ) -> Result<Vec<TransactionDescription>, ClientError> {
        let mut connections = self.brokers.lock().await;
        let brokers = self.broker_addresses(&mut connections).await?;
        let mut open = Vec::new();
        for broker in brokers {
            let conn = match connections.remove(&broker) {
                Some(c) => c,
                None => match self.connect(&broker).await {
                    Ok(c) => c,
                    Err(e) => {
                        tracing::debug!(broker = %broker, error = %e, "cannot list its transactions");
                        continue;
                    }
                },
            };
            let mut conn = conn;
            match list_open_on(&mut conn, min_age, self.timeout).await {
                Ok(found) => {
                    open.extend(found);
                    connections.insert(broker, conn);
                }
                Err(e) => {
                    tracing::debug!(broker = %broker, error = %e, "cannot list its transactions")
                }
            }
        }
        Ok(open)
    }

    /// `host:port` of every broker (Metadata without topics), through a kept connection or the
    /// bootstrap servers.
    async fn broker_addresses(
        &self,
        connections: &mut HashMap<String, Connection>,
    ) -> Result<Vec<String>, ClientError> {
        let mut last = None;
        let known: Vec<String> = connections.keys().cloned().collect();
        for broker in known.iter().chain(&self.bootstrap) {
            let mut conn = match connections.remove(broker) {
                Some(c) => c,
                None => match self.connect(broker).await {
                    Ok(c) => c,
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                },
            };
            let Some(version) = conn.optional_version(ApiKey::Metadata) else {
                // Too old to say: the bootstrap servers stand in for the cluster.
                return Ok(self.bootstrap.clone());
            };
            let req = MetadataRequest::default().with_topics(Some(Vec::new()));
            match conn.send(&req, version, self.timeout).await {
                Ok(resp) => {
                    connections.insert(broker.clone(), conn);
                    let mut brokers: Vec<String> = resp
                        .brokers
                        .iter()
                        .map(|b| format!("{}:{}", b.host, b.port))
                        .collect();
                    brokers.sort();
                    // Connections to brokers that left are closed.
                    connections.retain(|k, _| brokers.contains(k));
                    return Ok(brokers);
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

/// The open transactions `conn`'s broker coordinates (ListTransactions, state `Ongoing`, open
/// for at least `min_age` where the broker filters by duration, KIP-994), described there.
async fn list_open_on(
    conn: &mut Connection,
    min_age: Duration,
    timeout: Duration,
) -> Result<Vec<TransactionDescription>, ClientError> {
    let Some(version) = conn.optional_version(ApiKey::ListTransactions) else {
        return Ok(Vec::new());
    };
    let mut req = ListTransactionsRequest::default()
        .with_state_filters(vec![StrBytes::from_static_str("Ongoing")]);
    if version >= 1 {
        req = req.with_duration_filter(i64::try_from(min_age.as_millis()).unwrap_or(i64::MAX));
    }
    let resp = conn.send(&req, version, timeout).await?;
    if resp.error_code != codes::NONE {
        return Err(ClientError::Broker {
            api: ApiKey::ListTransactions,
            code: resp.error_code,
        });
    }
    let ids: Vec<String> = resp
        .transaction_states
        .into_iter()
        .map(|t| t.transactional_id.0.to_string())
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let described = describe_many_on(conn, &ids, timeout).await?;
    let min_age_ms = i64::try_from(min_age.as_millis()).unwrap_or(i64::MAX);
    let now = now_ms();
    Ok(described
        .into_iter()
        .filter_map(Result::ok)
        .filter(|d| d.state == "Ongoing")
        // Brokers without the duration filter (ListTransactions v0) list every open one.
        .filter(|d| d.started_ms.is_some_and(|s| now - s >= min_age_ms))
        .collect())
}

/// Milliseconds since the epoch (the clock transaction start times are in).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// DescribeTransactions of one id on its coordinator's connection.
/// (Also used by the transactional producer to wait for a commit's markers.)
pub async fn describe_on(
    conn: &mut Connection,
    transactional_id: &str,
    timeout: Duration,
) -> Result<Option<TransactionDescription>, ClientError> {
    if conn
        .optional_version(ApiKey::DescribeTransactions)
        .is_none()
    {
        return Ok(None);
    }
    let mut described = describe_many_on(conn, &[transactional_id.to_owned()], timeout).await?;
    match described.pop() {
        Some(Ok(d)) => Ok(Some(d)),
        Some(Err(code)) => Err(ClientError::Broker {
            api: ApiKey::DescribeTransactions,
            code,
        }),
        None => Err(ClientError::Protocol {
            broker: conn.broker().to_owned(),
            reason: "DescribeTransactions returned no state".into(),
        }),
    }
}

/// DescribeTransactions of several ids on one connection (their coordinator's): one result per
/// id the broker answered for, the id's error code when it could not describe it.
async fn describe_many_on(
    conn: &mut Connection,
    transactional_ids: &[String],
    timeout: Duration,
) -> Result<Vec<Result<TransactionDescription, i16>>, ClientError> {
    let Some(version) = conn.optional_version(ApiKey::DescribeTransactions) else {
        return Ok(Vec::new());
    };
    let req = DescribeTransactionsRequest::default().with_transactional_ids(
        transactional_ids
            .iter()
            .map(|id| TransactionalId(StrBytes::from_string(id.clone())))
            .collect(),
    );
    let resp = conn.send(&req, version, timeout).await?;
    Ok(resp
        .transaction_states
        .into_iter()
        .map(|state| {
            let transactional_id = state.transactional_id.0.to_string();
            match state.error_code {
                codes::NONE => Ok(TransactionDescription {
                    transactional_id,
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
                }),
                // Never used, or expired: nothing is open.
                codes::TRANSACTIONAL_ID_NOT_FOUND => Ok(TransactionDescription {
                    transactional_id,
                    state: "Empty".into(),
                    started_ms: None,
                    producer_id: -1,
                    producer_epoch: -1,
                    topics: Vec::new(),
                }),
                code => Err(code),
            }
        })
        .collect())
}
