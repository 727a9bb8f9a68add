//! Connections: a new one to a broker with the producer's settings, and the connection to the
//! transactional id's coordinator (found with `FindCoordinator`, dropped when a request on it
//! fails or the coordinator moved).

use super::errors::{Retry, fatal_client};
use super::produce_codes as pc;
use super::settings::ProducerSettings;
use super::state::TransactionalProducer;
use crate::cluster::client::{ClientError, Connection, CoordinatorKind, find_coordinator};

impl TransactionalProducer {
    /// A request to the coordinator failed on the connection: it is dropped (the next call
    /// looks the coordinator up again).
    pub(super) fn coordinator_failed(&mut self, e: ClientError) -> Retry {
        self.coordinator = None;
        Retry::from_client(e)
    }

    /// The coordinator answered a retriable `code` to `api`; forgotten if it moved.
    pub(super) fn coordinator_retriable(&mut self, code: i16, api: &str) -> Retry {
        if matches!(code, pc::NOT_COORDINATOR | pc::COORDINATOR_NOT_AVAILABLE) {
            self.coordinator = None;
        }
        Retry::Now(format!("{api}: {}", pc::name(code)))
    }

    /// The connection to this transactional id's coordinator, found if not known.
    pub(super) async fn coordinator_connection(&mut self) -> Result<&mut Connection, Retry> {
        if self.coordinator.is_none() {
            let timeout = self.settings.request_timeout;
            let mut last = None;
            let candidates: Vec<String> = self
                .brokers
                .values()
                .cloned()
                .chain(self.settings.bootstrap.iter().cloned())
                .collect();
            for broker in candidates {
                let mut conn = match connect(&self.settings, &broker).await {
                    Ok(c) => c,
                    Err(e) if e.is_fatal() => return Err(Retry::Never(fatal_client(e))),
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                let found = match find_coordinator(
                    &mut conn,
                    CoordinatorKind::Transaction,
                    &self.settings.transactional_id,
                    timeout,
                )
                .await
                {
                    Ok(f) => f,
                    Err(e) => {
                        last = Some(e);
                        continue;
                    }
                };
                self.coordinator = Some(if found == broker {
                    conn
                } else {
                    connect(&self.settings, &found)
                        .await
                        .map_err(Retry::from_client)?
                });
                break;
            }
            if self.coordinator.is_none() {
                return Err(Retry::Now(
                    last.map_or("no bootstrap servers".to_owned(), |e| e.to_string()),
                ));
            }
        }
        Ok(self.coordinator.as_mut().expect("set above"))
    }
}

/// A new connection to `broker` with the producer's client id, timeout and security.
pub(super) async fn connect(
    settings: &ProducerSettings,
    broker: &str,
) -> Result<Connection, ClientError> {
    Connection::connect(
        broker,
        &settings.client_id,
        settings.request_timeout,
        &settings.security,
        false,
    )
    .await
}
