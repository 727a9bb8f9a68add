//! Internal endpoints (hidden from OpenAPI, as in Connect): a follower submits the task configs
//! its connector generated to the leader (`POST /connectors/{c}/tasks`), and the leader is asked
//! for a zombie-fencing round (`PUT /connectors/{c}/fence`). Both are signed with the cluster's
//! session key (KIP-507) and forwarded to the leader when they reach a follower; a forwarded
//! request is re-signed by the forwarding worker.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use connect_api::ConfigMap;
use serde_json::Value;

use super::forward::Incoming;
use super::{ApiError, RestState, body};
use crate::herder::HerderHandle;
use crate::peer::{ALGORITHM_HEADER, SIGNATURE_HEADER};

/// (method, path) of the internal routes, for tests; not part of `ROUTES`/OpenAPI.
pub const INTERNAL_ROUTES: &[(&str, &str)] = &[
    ("POST", "/connectors/{connector}/tasks"),
    ("PUT", "/connectors/{connector}/fence"),
];

/// Apache's `StandaloneHerder.putTaskConfigs`: an `UnsupportedOperationException`, 500.
pub const STANDALONE_NO_TASK_CONFIGS: &str =
    "Kafka Connect in standalone mode does not support externally setting task configurations.";
/// Apache's `StandaloneHerder.fenceZombieSourceTasks`: an `UnsupportedOperationException`, 500.
pub const STANDALONE_NO_EXACTLY_ONCE: &str =
    "Kafka Connect in standalone mode does not support exactly-once source connectors.";

/// A standalone worker has no other workers to take these requests from (Apache answers 500).
fn refuse_in_standalone(h: &HerderHandle, message: &str) -> Result<(), ApiError> {
    if h.is_standalone() {
        return Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message));
    }
    Ok(())
}

/// Checks the KIP-507 signature of `body`; Connect's statuses and messages on failure.
fn verify(h: &HerderHandle, headers: &HeaderMap, body: &[u8]) -> Result<(), ApiError> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    Ok(h.verify_internal_request(header(ALGORITHM_HEADER), header(SIGNATURE_HEADER), body)?)
}

/// The request, to be re-signed with this worker's session key if it is forwarded.
fn signed_incoming(
    h: &HerderHandle,
    method: Method,
    uri: Uri,
    headers: &HeaderMap,
    body: Option<Value>,
) -> Result<Incoming, ApiError> {
    let bytes = body
        .as_ref()
        .map(|b| serde_json::to_vec(b).expect("JSON values serialise"))
        .unwrap_or_default();
    let signature = h.sign_internal_request(&bytes);
    Ok(Incoming::new(method, uri, headers, body)?.signed(signature))
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
    refuse_in_standalone(h, STANDALONE_NO_TASK_CONFIGS)?;
    verify(h, &headers, &bytes)?;
    super::forward::forward_param(&uri)?;
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
    let req = signed_incoming(h, Method::POST, uri, &headers, Some(raw))?;
    let result = h.put_task_configs(&name, configs).await;
    super::forward::answer(&req, result, StatusCode::NO_CONTENT).await
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
    refuse_in_standalone(h, STANDALONE_NO_EXACTLY_ONCE)?;
    verify(h, &headers, &bytes)?;
    let req = signed_incoming(h, Method::PUT, uri, &headers, None)?;
    let result = h.fence_zombies(&name).await;
    super::forward::answer(&req, result, StatusCode::NO_CONTENT).await
}
