//! The worker's own HTTP client: forwarded requests and signed internal requests
//! (Java's `RestClient`).

use std::sync::OnceLock;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE, USER_AGENT};

use crate::herder::HerderHandle;

/// Connect's `DEFAULT_REST_REQUEST_TIMEOUT_MS`.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(90);

pub use crate::herder::session_key::{ALGORITHM_HEADER, SIGNATURE_HEADER};

pub(crate) fn http_client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client with default TLS-free settings")
    })
}

/// A JSON request with Connect's headers; `auth` is the caller's `Authorization`, `signature`
/// the KIP-507 `(algorithm, signature)` pair.
pub(crate) fn request(
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

/// Sends a signed internal request; returns the status and the error message (or body text).
pub(crate) async fn send_internal(
    h: &HerderHandle,
    method: Method,
    url: &str,
    body: Vec<u8>,
) -> Result<(reqwest::StatusCode, String), String> {
    let signature = h.sign_internal_request(&body);
    if h.signs_internal_requests() && signature.is_none() {
        return Err("no session key has been read from the config topic yet".to_owned());
    }
    let res = request(method, url, Some(body), None, signature)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = res.status();
    let text = res.text().await.unwrap_or_default();
    let message = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_owned))
        .unwrap_or(text);
    Ok((status, message))
}
