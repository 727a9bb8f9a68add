//! The worker's first Kafka request: the cluster id, through a client whose error callbacks
//! are watched, so a start-up that cannot authenticate (wrong password, untrusted broker
//! certificate, TLS aimed at a plaintext port) fails within seconds with librdkafka's own
//! explanation instead of retrying for 30 s.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::client::{ClientContext, DefaultClientContext};
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};

use crate::config::clients::ClientKind;
use crate::config::{ClientScope, WorkerConfig};

/// How many metadata attempts (of [`ATTEMPT_TIMEOUT`] each) before giving up on a cluster that
/// does not answer.
const ATTEMPTS: u32 = 15;
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// Keeps the first error librdkafka reports that no retry can fix.
#[derive(Default)]
pub struct SecurityFailureContext {
    failure: Mutex<Option<String>>,
}

impl SecurityFailureContext {
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl SecurityFailureContext {
    fn keep(&self, code: Option<RDKafkaErrorCode>, reason: &str) {
        if let Some(message) = security_failure(code, reason) {
            let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert(message);
        }
    }
}

impl ClientContext for SecurityFailureContext {
    // librdkafka logs a failed connection at once; its error event may come many seconds later.
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        if matches!(
            level,
            RDKafkaLogLevel::Emerg
                | RDKafkaLogLevel::Alert
                | RDKafkaLogLevel::Critical
                | RDKafkaLogLevel::Error
        ) {
            self.keep(None, log_message);
        }
        DefaultClientContext.log(level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.keep(error.rdkafka_error_code(), reason);
        DefaultClientContext.error(error, reason);
    }
}

impl ProducerContext for SecurityFailureContext {
    type DeliveryOpaque = ();

    fn delivery(&self, _: &DeliveryResult<'_>, _: Self::DeliveryOpaque) {}
}

/// The start-up error for a librdkafka error that retrying cannot fix, with a hint naming the
/// keys to check; `None` for the others (a broker still starting, a refused connection).
pub fn security_failure(code: Option<RDKafkaErrorCode>, reason: &str) -> Option<String> {
    let hint = if reason.contains("incorrect security.protocol")
        || reason.contains("PLAINTEXT broker listener")
    {
        "check that security.protocol matches the listener at bootstrap.servers"
    } else if code == Some(RDKafkaErrorCode::Authentication)
        || reason.contains("SASL authentication error")
        || reason.contains("Authentication failed")
    {
        "check sasl.mechanism and the credentials of sasl.jaas.config"
    } else if code == Some(RDKafkaErrorCode::SSL) || reason.contains("SSL handshake failed") {
        "check ssl.truststore.* (the CA that signed the brokers' certificates), ssl.keystore.* and ssl.endpoint.identification.algorithm"
    } else {
        return None;
    };
    Some(format!("{reason} ({hint})"))
}

/// Reads the cluster id with a metadata request; retries for a while so the worker can start
/// together with its brokers, but fails at once on an authentication or TLS failure.
pub async fn fetch_cluster_id(config: &WorkerConfig) -> Result<String, KafkaUnreachable> {
    // A producer: its poll serves librdkafka's error events (an admin client's does not).
    let client: BaseProducer<SecurityFailureContext> = config
        .kafka_client(ClientScope::Worker(ClientKind::Admin))
        .map_err(|e| KafkaUnreachable(e.to_string()))?
        .create_with_context(SecurityFailureContext::default())
        .map_err(|e| KafkaUnreachable(e.to_string()))?;
    let client = Arc::new(client);
    for attempt in 1..=ATTEMPTS {
        let c = client.clone();
        // librdkafka blocks the calling thread; keep it off the executor.
        let (id, failure) = tokio::task::spawn_blocking(move || {
            let id = c.client().fetch_cluster_id(ATTEMPT_TIMEOUT);
            c.poll(Duration::ZERO);
            (id, c.context().failure())
        })
        .await
        .map_err(|e| KafkaUnreachable(e.to_string()))?;
        if let Some(failure) = failure {
            return Err(KafkaUnreachable(format!(
                "Kafka refused this worker's connection: {failure}"
            )));
        }
        if let Some(id) = id {
            return Ok(id);
        }
        tracing::warn!(
            attempt,
            "Kafka did not answer the metadata request yet; retrying"
        );
    }
    Err(KafkaUnreachable(format!(
        "no answer to metadata requests within {} seconds",
        u64::from(ATTEMPTS) * ATTEMPT_TIMEOUT.as_secs()
    )))
}

/// Why the worker could not reach Kafka at start-up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct KafkaUnreachable(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authentication_and_tls_failures_are_final_other_errors_are_retried() {
        let auth = security_failure(
            Some(RDKafkaErrorCode::Authentication),
            "SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256",
        )
        .unwrap();
        assert!(
            auth.contains("invalid credentials") && auth.contains("sasl.jaas.config"),
            "{auth}"
        );
        let tls = security_failure(
            Some(RDKafkaErrorCode::SSL),
            "SSL handshake failed: certificate verify failed",
        )
        .unwrap();
        assert!(
            tls.contains("certificate verify failed") && tls.contains("ssl.truststore"),
            "{tls}"
        );
        let protocol = security_failure(
            Some(RDKafkaErrorCode::BrokerTransportFailure),
            "Disconnected while requesting ApiVersion: might be caused by incorrect security.protocol configuration",
        )
        .unwrap();
        assert!(protocol.contains("bootstrap.servers"), "{protocol}");
        assert_eq!(
            security_failure(
                Some(RDKafkaErrorCode::BrokerTransportFailure),
                "Connect to ipv4#127.0.0.1:1 failed: Connection refused"
            ),
            None
        );
        assert_eq!(
            security_failure(
                Some(RDKafkaErrorCode::AllBrokersDown),
                "1/1 brokers are down"
            ),
            None
        );
    }
}
