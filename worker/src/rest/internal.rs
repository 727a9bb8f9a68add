//! Internal endpoints (hidden from OpenAPI, as in Connect): a follower submits the task configs
//! its connector generated to the leader (`POST /connectors/{c}/tasks`), and the leader is asked
//! for a zombie-fencing round (`PUT /connectors/{c}/fence`). Both are signed with the cluster's
//! session key (KIP-507) and forwarded to the leader when they reach a follower; a forwarded
//! request is re-signed by the forwarding worker.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use connect_api::ConfigMap;
use serde_json::Value;

use super::client::{ALGORITHM_HEADER, SIGNATURE_HEADER};
use super::connectors::{REFRESH_TIMEOUT, internal, not_found, type_name};
use super::{ApiError, RestState, body, forward};
use crate::herder::HerderHandle;
use crate::storage::TargetState;

/// (method, path) of the internal routes, for tests; not part of `ROUTES`/OpenAPI.
pub const INTERNAL_ROUTES: &[(&str, &str)] = &[
    ("POST", "/connectors/{connector}/tasks"),
    ("PUT", "/connectors/{connector}/fence"),
];

/// Checks the KIP-507 signature of `body`; Connect's statuses and messages on failure.
fn verify(h: &HerderHandle, headers: &HeaderMap, body: &[u8]) -> Result<(), ApiError> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    h.verify_internal_request(header(ALGORITHM_HEADER), header(SIGNATURE_HEADER), body)
        .map_err(|(status, message)| {
            ApiError::new(
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
                message,
            )
        })
}

/// Forwards an internal request to the leader, signed with this worker's session key.
async fn forward_signed(
    h: &HerderHandle,
    target: &str,
    method: Method,
    uri: &Uri,
    fwd: Option<bool>,
    headers: &HeaderMap,
    body: Option<&Value>,
) -> Result<Response, ApiError> {
    let bytes = body
        .map(|b| serde_json::to_vec(b).expect("JSON values serialise"))
        .unwrap_or_default();
    let signature = h.sign_internal_request(&bytes);
    let f = forward::forward(target, method, uri, fwd, headers, body, signature).await?;
    Ok(f.into_response())
}

/// `POST /connectors/{c}/tasks`: the leader writes the submitted task configs.
pub(super) async fn put_task_configs(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    verify(h, &headers, &bytes)?;
    let fwd = forward::forward_param(&uri)?;
    let raw: Value = body::parse(&bytes)?;
    let Value::Array(items) = &raw else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Malformed JSON request body: task configs must be a JSON array of objects",
        ));
    };
    let configs: Vec<ConfigMap> = items
        .iter()
        .map(|v| body::strict_config_map(v.clone()).map(|m| m.into_iter().collect()))
        .collect::<Result<_, _>>()?;
    if let Some(target) = forward::leader_target(h, fwd).await? {
        return forward_signed(h, &target, Method::POST, &uri, fwd, &headers, Some(&raw)).await;
    }
    h.config_store
        .refresh(REFRESH_TIMEOUT)
        .await
        .map_err(internal)?;
    let snapshot = h.config_store.snapshot();
    if !snapshot.contains(&name) {
        return Err(not_found(format!("Connector {name} not found")));
    }
    if snapshot.target_state(&name) == Some(TargetState::Stopped) && !configs.is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Cannot submit non-empty set of task configs for stopped connector {name}"),
        ));
    }
    h.config_store
        .put_task_configs(&name, &configs)
        .await
        .map_err(internal)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PUT /connectors/{c}/fence`: the leader runs a zombie-fencing round for a source connector.
pub(super) async fn fence_zombies(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    verify(h, &headers, &bytes)?;
    let fwd = forward::forward_param(&uri)?;
    if let Some(target) = forward::leader_target(h, fwd).await? {
        return forward_signed(h, &target, Method::PUT, &uri, fwd, &headers, None).await;
    }
    h.config_store
        .refresh(REFRESH_TIMEOUT)
        .await
        .map_err(internal)?;
    let config = h
        .config_store
        .snapshot()
        .connector_config(&name)
        .cloned()
        .ok_or_else(|| not_found(format!("Connector {name} not found")))?;
    if type_name(h, &config) != "source" {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Connector {name} is not a source connector"),
        ));
    }
    h.fence_zombies(&name).await.map_err(internal)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
