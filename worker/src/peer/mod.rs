//! Talking to other workers of the cluster over their REST listeners: the HTTP client (with
//! the listeners' TLS settings), KIP-507 signature headers, URL encoding of path segments and
//! forwarding one request to another worker.
//!
//! Both the REST layer (forwarding a user's request to the leader or a task's owner) and the
//! herder (submitting task configs and asking for zombie fencing) use it; it knows nothing of
//! either, so neither imports the other to reach a peer. Signing itself needs the session key,
//! which the herder owns: callers pass the `(algorithm, signature)` pair in.

pub mod client;

use serde_json::Value;

pub use client::{REQUEST_TIMEOUT, configure, send_internal};

/// Header with the Base64 KIP-507 signature of an internal request's body.
pub const SIGNATURE_HEADER: &str = "X-Connect-Authorization";
/// Header naming the signature algorithm.
pub const ALGORITHM_HEADER: &str = "X-Connect-Request-Signature-Algorithm";

/// Why a peer could not be reached or the client not set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// The client's TLS settings are unusable.
    #[error("{0}")]
    Config(String),
    /// Connecting, sending or reading the answer failed.
    #[error("{0}")]
    Io(String),
}

impl From<String> for PeerError {
    fn from(s: String) -> Self {
        PeerError::Config(s)
    }
}

/// Percent-encodes one path segment (a connector name in a URL).
pub fn encode_path(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What another worker answered.
#[derive(Debug)]
pub struct PeerResponse {
    pub status: u16,
    /// The body parsed as JSON, when it is JSON.
    pub body: Option<Value>,
    /// The body as text.
    pub text: String,
}

/// Sends a JSON request to another worker: `auth` is the caller's `Authorization` header (the
/// only one copied), `signature` the KIP-507 pair for internal requests.
pub async fn send(
    method: &str,
    url: &str,
    body: Option<&Value>,
    auth: Option<&str>,
    signature: Option<(String, String)>,
) -> Result<PeerResponse, PeerError> {
    let bytes = body.map(|b| serde_json::to_vec(b).expect("JSON values serialise"));
    let method = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|e| PeerError::Io(format!("invalid method {method}: {e}")))?;
    tracing::debug!(%url, %method, "sending a request to another worker");
    let res = client::request(method, url, bytes, auth, signature)
        .send()
        .await
        .map_err(|e| PeerError::Io(e.to_string()))?;
    let status = res.status().as_u16();
    let text = res.text().await.map_err(|e| PeerError::Io(e.to_string()))?;
    let body = serde_json::from_str(&text).ok();
    Ok(PeerResponse { status, body, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(encode_path("a b/c%"), "a%20b%2Fc%25");
        assert_eq!(encode_path("ok-1_2.3~"), "ok-1_2.3~");
    }
}
