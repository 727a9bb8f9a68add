//! The worker's own HTTP client: forwarded requests and signed internal requests
//! (Java's `RestClient`).

use std::sync::OnceLock;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE, USER_AGENT};

use crate::config::rest_tls::{self as tls, TlsSettings};
use crate::config::{Listener, WorkerConfig};

/// Connect's `DEFAULT_REST_REQUEST_TIMEOUT_MS`.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(90);

use super::{ALGORITHM_HEADER, PeerError, SIGNATURE_HEADER};

static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
}

/// Sets up the client from the worker config, once, before any request: for `https://` peers
/// it trusts the CA certificates of the `listeners.https.` settings (falling back to `ssl.*`, as
/// Connect's client does) or, when none is configured, the platform's roots plus this worker's
/// own certificate chain (a cluster sharing one self-signed certificate needs no CA then); it
/// presents this worker's certificate when a peer asks for one (`ssl.client.auth`).
pub fn configure(config: &WorkerConfig) -> Result<(), PeerError> {
    let has_https = config.listeners.iter().any(Listener::is_https);
    let settings = match TlsSettings::from_config(config, tls::LISTENERS_HTTPS_PREFIX) {
        Ok(s) => s,
        // Without an https listener the ssl.* keys may be the Kafka clients' (a JKS keystore):
        // plain defaults then.
        Err(e) if !has_https => {
            tracing::debug!(error = %e, "REST client uses default TLS settings");
            let _ = CLIENT.set(builder().build().map_err(|e| e.to_string())?);
            return Ok(());
        }
        Err(e) => return Err(PeerError::Config(e.to_string())),
    };
    let pem_certs = |pem: &[u8]| {
        reqwest::Certificate::from_pem_bundle(pem).map_err(|e| format!("{}: {e}", settings.prefix))
    };
    let mut b = builder();
    if let Some(ca) = &settings.ca_pem {
        b = b.tls_certs_only(pem_certs(ca)?);
    } else if let Some(id) = &settings.identity {
        b = b.tls_certs_merge(pem_certs(&id.cert_pem)?);
    }
    if let Some(id) = &settings.identity {
        // A PEM keystore holds both in one file.
        let mut pem = id.key_pem.clone();
        if id.cert_pem != id.key_pem {
            pem.push(b'\n');
            pem.extend_from_slice(&id.cert_pem);
        }
        b = b.identity(reqwest::Identity::from_pem(&pem).map_err(|e| e.to_string())?);
    }
    let client = b.build().map_err(|e| format!("REST client: {e}"))?;
    CLIENT
        .set(client)
        .map_err(|_| PeerError::Config("the REST client was configured twice".to_owned()))
}

pub fn http_client() -> &'static reqwest::Client {
    CLIENT.get_or_init(|| {
        builder()
            .build()
            .expect("an HTTP client with default settings")
    })
}

/// A JSON request with Connect's headers; `auth` is the caller's `Authorization`, `signature`
/// the KIP-507 `(algorithm, signature)` pair.
pub fn request(
    method: Method,
    url: &str,
    body: Option<Vec<u8>>,
    auth: Option<&str>,
    signature: Option<(String, String)>,
) -> reqwest::RequestBuilder {
    let mut req = http_client()
        .request(method, url)
        .header(ACCEPT, "application/json")
        .header(USER_AGENT, "kafka-connect");
    if let Some(b) = body {
        req = req.header(CONTENT_TYPE, "application/json").body(b);
    }
    if let Some(a) = auth {
        req = req.header(reqwest::header::AUTHORIZATION, a);
    }
    if let Some((alg, sig)) = signature {
        req = req
            .header(ALGORITHM_HEADER, alg)
            .header(SIGNATURE_HEADER, sig);
    }
    req
}

/// Sends a signed internal request (`signature` is the KIP-507 pair, `None` when the cluster
/// does not sign); returns the status and the error message (or body text).
pub async fn send_internal(
    method: Method,
    url: &str,
    body: Vec<u8>,
    signature: Option<(String, String)>,
) -> Result<(reqwest::StatusCode, String), PeerError> {
    let res = request(method, url, Some(body), None, signature)
        .send()
        .await
        .map_err(|e| PeerError::Io(e.to_string()))?;
    let status = res.status();
    let text = res.text().await.unwrap_or_default();
    let message = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_owned))
        .unwrap_or(text);
    Ok((status, message))
}
