//! Forwarding requests that only the leader (or a task's owner) may serve, as Connect's
//! `HerderRequestHandler.completeOrForwardRequest` does.
//!
//! - The hidden query parameter `forward` bounds the hops: a user request (no `forward`) is
//!   sent on with `forward=true`; a request that arrived with `forward=true` is sent on with
//!   `forward=false`; a worker that gets `forward=false` and still cannot serve it answers 409.
//! - Only `Authorization` is copied; the body goes out re-serialised as compact JSON.
//! - The target's status and error body come back unchanged; 204 stays empty.
//! - A request that arrives during a rebalance waits up to [`REBALANCE_WAIT`] for it to end,
//!   then answers 409.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::time::Instant;

use super::{ApiError, client};
use crate::herder::HerderHandle;

/// How long a request waits for a rebalance in progress before answering 409.
pub const REBALANCE_WAIT: Duration = Duration::from_secs(10);

pub const STALE_CONFIG: &str = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)";
pub const NO_LEADER: &str = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.";
pub const CONFLICTING_OPERATION: &str =
    "Cannot complete request because of a conflicting operation (e.g. worker rebalance)";

/// The `forward` query parameter: `None` when absent (a user's request).
pub fn forward_param(uri: &Uri) -> Result<Option<bool>, ApiError> {
    let Some(q) = uri.query() else {
        return Ok(None);
    };
    for kv in q.split('&') {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        if k == "forward" {
            return match v.to_ascii_lowercase().as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                other => Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "Invalid value {other} for query parameter forward: expected true or false"
                    ),
                )),
            };
        }
    }
    Ok(None)
}

/// Waits (bounded) until no rebalance is in progress; 409 with Connect's message otherwise.
pub async fn await_rebalance(h: &HerderHandle) -> Result<(), ApiError> {
    let deadline = Instant::now() + REBALANCE_WAIT;
    loop {
        if !h.view.read().await.rebalancing {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(ApiError::new(StatusCode::CONFLICT, STALE_CONFIG));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Where a request for `url` (the leader's or owner's) goes, given the incoming `forward`.
pub fn target(url: Option<String>, forward: Option<bool>) -> Result<String, ApiError> {
    if forward == Some(false) {
        return Err(ApiError::new(StatusCode::CONFLICT, CONFLICTING_OPERATION));
    }
    url.ok_or_else(|| ApiError::new(StatusCode::CONFLICT, NO_LEADER))
}

/// `None` when this worker is the leader and serves the request itself, else the leader URL
/// to forward to. Waits for a rebalance in progress first.
pub async fn leader_target(
    h: &HerderHandle,
    forward: Option<bool>,
) -> Result<Option<String>, ApiError> {
    await_rebalance(h).await?;
    let v = h.view.read().await;
    if v.is_leader {
        return Ok(None);
    }
    target(v.leader_url.clone(), forward).map(Some)
}

/// `<target>` + the request's path + its query without `forward` + `forward=<next>`.
pub fn forwarded_url(target: &str, uri: &Uri, forward: Option<bool>) -> String {
    let mut query: Vec<&str> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("forward=") && *kv != "forward")
        .collect();
    let next = if forward.is_none() {
        "forward=true"
    } else {
        "forward=false"
    };
    query.push(next);
    format!(
        "{}{}?{}",
        target.trim_end_matches('/'),
        uri.path(),
        query.join("&")
    )
}

/// The target's answer.
#[derive(Debug)]
pub struct Forwarded {
    pub status: StatusCode,
    pub body: Option<Value>,
}

impl IntoResponse for Forwarded {
    fn into_response(self) -> Response {
        match self.body {
            Some(b) => (self.status, Json(b)).into_response(),
            None => self.status.into_response(),
        }
    }
}

/// Sends the request on. Errors from the target come back as the same status and message.
/// `signature` re-signs internal requests with this worker's session key.
pub async fn forward(
    target: &str,
    method: Method,
    uri: &Uri,
    forward: Option<bool>,
    headers: &HeaderMap,
    body: Option<&Value>,
    signature: Option<(String, String)>,
) -> Result<Forwarded, ApiError> {
    let url = forwarded_url(target, uri, forward);
    let bytes = body.map(|b| serde_json::to_vec(b).expect("JSON values serialise"));
    tracing::debug!(%url, %method, "forwarding REST request");
    let method = reqwest::Method::from_bytes(method.as_str().as_bytes())
        .expect("an HTTP method is a valid method");
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let res = client::request(method, &url, bytes, auth, signature)
        .send()
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("IO Error trying to forward REST request: {e}"),
            )
        })?;
    let status =
        StatusCode::from_u16(res.status().as_u16()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let text = res.text().await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("IO Error trying to forward REST request: {e}"),
        )
    })?;
    if status == StatusCode::NO_CONTENT {
        return Ok(Forwarded { status, body: None });
    }
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    if status.is_success() {
        return Ok(Forwarded {
            status,
            body: parsed,
        });
    }
    if status.is_client_error() || status.is_server_error() {
        let message = parsed
            .as_ref()
            .and_then(|v| v["message"].as_str())
            .map(str::to_owned)
            .unwrap_or(text);
        return Err(ApiError::new(status, message));
    }
    Err(ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!(
            "Unexpected status code when handling forwarded request: {}",
            status.as_u16()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forward_param_bounds_the_hops() {
        let u: Uri = "/connectors/a/restart?includeTasks=true&onlyFailed=false"
            .parse()
            .unwrap();
        assert_eq!(forward_param(&u).unwrap(), None);
        assert_eq!(
            forwarded_url("http://l:8083/", &u, None),
            "http://l:8083/connectors/a/restart?includeTasks=true&onlyFailed=false&forward=true"
        );
        let u: Uri = "/connectors?forward=true".parse().unwrap();
        assert_eq!(forward_param(&u).unwrap(), Some(true));
        assert_eq!(
            forwarded_url("http://l:8083/", &u, Some(true)),
            "http://l:8083/connectors?forward=false"
        );
        let u: Uri = "/connectors?forward=nope".parse().unwrap();
        assert!(forward_param(&u).is_err());
    }

    #[test]
    fn no_target_is_a_409() {
        let e = target(None, None).unwrap_err();
        assert_eq!(e.status, StatusCode::CONFLICT);
        assert_eq!(e.message, NO_LEADER);
        let e = target(Some("http://x/".into()), Some(false)).unwrap_err();
        assert_eq!(e.message, CONFLICTING_OPERATION);
        assert_eq!(
            target(Some("http://x/".into()), Some(true)).unwrap(),
            "http://x/"
        );
    }
}
