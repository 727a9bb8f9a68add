//! Forwarding requests that only the leader (or a task's owner) may serve, as Connect's
//! `HerderRequestHandler.completeOrForwardRequest` does.
//!
//! - The hidden query parameter `forward` bounds the hops: a user request (no `forward`) is
//!   sent on with `forward=true`; a request that arrived with `forward=true` is sent on with
//!   `forward=false`; a worker that gets `forward=false` and still cannot serve it answers 409.
//! - Only `Authorization` is copied; the body goes out re-serialised as compact JSON.
//! - The target's status and error body come back unchanged; 204 stays empty.
//! - A request that arrives during a rebalance waits up to the herder's `REBALANCE_WAIT` for it
//!   to end, then answers 409.

use axum::Json;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::ApiError;
pub use super::error::NO_LEADER;
use crate::herder::HerderError;
use crate::peer;

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

/// Where a request for `url` (the leader's or owner's) goes, given the incoming `forward`.
pub fn target(url: Option<String>, forward: Option<bool>) -> Result<String, ApiError> {
    if forward == Some(false) {
        return Err(ApiError::new(StatusCode::CONFLICT, CONFLICTING_OPERATION));
    }
    url.ok_or_else(|| ApiError::new(StatusCode::CONFLICT, NO_LEADER))
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

/// The request as received, kept to send it on unchanged.
pub struct Incoming {
    pub method: Method,
    pub uri: Uri,
    /// The `forward` query parameter of the request.
    pub forward: Option<bool>,
    /// The caller's `Authorization` header, the only one sent on.
    pub authorization: Option<String>,
    pub body: Option<Value>,
    /// Internal requests are re-signed by the forwarding worker.
    pub signature: Option<(String, String)>,
}

impl Incoming {
    /// Fails with 400 on an invalid `forward` parameter.
    pub fn new(
        method: Method,
        uri: Uri,
        headers: &HeaderMap,
        body: Option<Value>,
    ) -> Result<Self, ApiError> {
        Ok(Incoming {
            forward: forward_param(&uri)?,
            method,
            uri,
            authorization: headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            body,
            signature: None,
        })
    }

    pub fn signed(mut self, signature: Option<(String, String)>) -> Self {
        self.signature = signature;
        self
    }
}

/// What became of a request the herder was asked to serve.
pub enum Outcome<T> {
    /// Served here.
    Done(T),
    /// Another worker (the leader, or a task's owner) served it; its answer.
    Forwarded(Forwarded),
}

/// The one place a request is completed here or forwarded, as Connect's
/// `HerderRequestHandler.completeOrForwardRequest`: a [`HerderError::NotLeader`] or
/// [`HerderError::NotOwner`] answer sends the request on; other errors become Connect's
/// error bodies.
pub async fn complete_or_forward<T>(
    req: &Incoming,
    result: Result<T, HerderError>,
) -> Result<Outcome<T>, ApiError> {
    let target = match result {
        Ok(v) => return Ok(Outcome::Done(v)),
        Err(HerderError::NotLeader { leader_url: url })
        | Err(HerderError::NotOwner { owner_url: url }) => target(url, req.forward)?,
        Err(e) => return Err(e.into()),
    };
    forward(&target, req).await.map(Outcome::Forwarded)
}

/// The answer of a request that has no body of its own: `status` when served here, the
/// other worker's answer when forwarded.
pub async fn answer(
    req: &Incoming,
    result: Result<(), HerderError>,
    status: StatusCode,
) -> Result<Response, ApiError> {
    Ok(match complete_or_forward(req, result).await? {
        Outcome::Done(()) => status.into_response(),
        Outcome::Forwarded(f) => f.into_response(),
    })
}

/// Sends the request on. Errors from the target come back as the same status and message.
async fn forward(target: &str, req: &Incoming) -> Result<Forwarded, ApiError> {
    let url = forwarded_url(target, &req.uri, req.forward);
    tracing::debug!(%url, method = %req.method, "forwarding REST request");
    let res = peer::send(
        req.method.as_str(),
        &url,
        req.body.as_ref(),
        req.authorization.as_deref(),
        req.signature.clone(),
    )
    .await
    .map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("IO Error trying to forward REST request: {e}"),
        )
    })?;
    let status = StatusCode::from_u16(res.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::NO_CONTENT {
        return Ok(Forwarded { status, body: None });
    }
    if status.is_success() {
        return Ok(Forwarded {
            status,
            body: res.body,
        });
    }
    if status.is_client_error() || status.is_server_error() {
        let message = res
            .body
            .as_ref()
            .and_then(|v| v["message"].as_str())
            .map(str::to_owned)
            .unwrap_or(res.text);
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
