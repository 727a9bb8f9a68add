//! The REST API: Apache Kafka Connect's paths, bodies and status codes.
//!
//! One module per resource; every error leaves as Connect's `{"error_code", "message"}` body
//! through [`ApiError`], including unknown paths, wrong methods and malformed JSON.

mod body;
mod connectors;
mod error;
mod plugins;
mod root;

pub use error::ApiError;

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;

use crate::herder::HerderHandle;

/// What every handler can reach. `herder` is `None` until the worker finished starting
/// (internal topics read, group joined); handlers that need it answer 503 until then.
#[derive(Clone)]
pub struct RestState {
    /// The Kafka cluster id, read from the brokers at start-up.
    pub kafka_cluster_id: Arc<str>,
    pub herder: Option<HerderHandle>,
}

impl RestState {
    pub(crate) fn herder(&self) -> Result<&HerderHandle, ApiError> {
        self.herder.as_ref().ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Worker is still starting up.",
            )
        })
    }
}

/// Every route the router serves, as `(method, path)` with OpenAPI-style `{param}`s.
/// `worker/tests/openapi.rs` checks that each is served and that `openapi.yaml` lists the same.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/"),
    ("GET", "/connectors"),
    ("POST", "/connectors"),
    ("GET", "/connectors/{connector}"),
    ("DELETE", "/connectors/{connector}"),
    ("GET", "/connectors/{connector}/config"),
    ("PUT", "/connectors/{connector}/config"),
    ("PATCH", "/connectors/{connector}/config"),
    ("GET", "/connectors/{connector}/status"),
    ("GET", "/connectors/{connector}/tasks"),
    ("GET", "/connectors/{connector}/tasks/{task}/status"),
    ("POST", "/connectors/{connector}/tasks/{task}/restart"),
    ("POST", "/connectors/{connector}/restart"),
    ("PUT", "/connectors/{connector}/pause"),
    ("PUT", "/connectors/{connector}/resume"),
    ("PUT", "/connectors/{connector}/stop"),
    ("GET", "/connectors/{connector}/topics"),
    ("PUT", "/connectors/{connector}/topics/reset"),
    ("GET", "/connectors/{connector}/offsets"),
    ("GET", "/connector-plugins"),
    ("GET", "/connector-plugins/{plugin}/config"),
    ("PUT", "/connector-plugins/{plugin}/config/validate"),
];

/// Builds the router with every resource.
pub fn router(state: RestState) -> Router {
    Router::new()
        .merge(root::routes())
        .merge(connectors::routes())
        .merge(plugins::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .with_state(state)
}
