//! The worker's first Kafka request: the cluster id, through a client whose error callbacks
//! are watched, so a start-up that cannot authenticate (wrong password, untrusted broker
//! certificate, TLS aimed at a plaintext port) fails within seconds with librdkafka's own
//! explanation instead of retrying for 30 s.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::admin::AdminClient;
use rdkafka::client::ClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};

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

impl ClientContext for SecurityFailureContext {
    fn error(&self, error: KafkaError, reason: &str) {
        tracing::error!(error = %error, reason, "librdkafka error");
        if let Some(message) = security_failure(error.rdkafka_error_code(), reason) {
            let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            f.get_or_insert(message);
        }
    }
}

/// The start-up error for a librdkafka error that retrying cannot fix, with a hint naming the
/// keys to check; `None` for the others (a broker still starting, a refused connection).
pub fn security_failure(code: Option<RDKafkaErrorCode>, reason: &str) -> Option<String> {
    let hint = match code {
        Some(RDKafkaErrorCode::Authentication) => {
            "check sasl.mechanism and the credentials of sasl.jaas.config"
        }
        Some(RDKafkaErrorCode::SSL) => {
            "check ssl.truststore.* (the CA that signed the brokers' certificates), ssl.keystore.*, ssl.endpoint.identification.algorithm and that the listener speaks TLS (security.protocol)"
        }
        _ if reason.contains("incorrect security.protocol") => {
            "check that security.protocol matches the listener at bootstrap.servers"
        }
        _ => return None,
    };
    Some(format!("{reason} ({hint})"))
}

/// Reads the cluster id with a metadata request; retries for a while so the worker can start
/// together with its brokers, but fails at once on an authentication or TLS failure.
pub async fn fetch_cluster_id(config: &WorkerConfig) -> anyhow::Result<String> {
    let context = SecurityFailureContext::default();
    let admin: AdminClient<SecurityFailureContext> = config
        .kafka_client(ClientScope::Worker(ClientKind::Admin))?
        .create_with_context(context)?;
    let admin = Arc::new(admin);
    for attempt in 1..=ATTEMPTS {
        let a = admin.clone();
        // librdkafka blocks the calling thread; keep it off the executor.
        let id = tokio::task::spawn_blocking(move || a.inner().fetch_cluster_id(ATTEMPT_TIMEOUT))
            .await?;
        if let Some(failure) = admin.inner().context().failure() {
            anyhow::bail!("Kafka refused this worker's connection: {failure}");
        }
        if let Some(id) = id {
            return Ok(id);
        }
        tracing::warn!(
            attempt,
            "Kafka did not answer the metadata request yet; retrying"
        );
    }
    anyhow::bail!(
        "no answer to metadata requests within {} seconds",
        ATTEMPTS as u64 * ATTEMPT_TIMEOUT.as_secs()
    )
}

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
