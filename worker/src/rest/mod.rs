//! The REST API: Apache Kafka Connect's paths, bodies and status codes.
//!
//! One module per resource; every error leaves as Connect's `{"error_code", "message"}` body
//! through [`ApiError`], including unknown paths, wrong methods, malformed JSON, oversized
//! bodies and extractor rejections (see [`connect_error_body`]).
//!
//! Requests only the leader may serve are forwarded to it ([`forward`]); the internal endpoints
//! ([`internal`]) are signed with the cluster's session key.

mod body;
pub(crate) mod client;
mod connectors;
mod error;
mod forward;
mod internal;
mod loggers;
mod offsets;
mod plugins;
mod root;

pub use connectors::{TOPIC_TRACKING_ALLOW_RESET, TOPIC_TRACKING_ENABLE};
pub use error::ApiError;
pub use internal::INTERNAL_ROUTES;
pub use loggers::LogLevels;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::config::WorkerConfig;
use crate::herder::HerderHandle;

/// Worker key (ours; Connect has none): the largest request body accepted, in bytes.
/// Larger bodies get 413 with Connect's error body.
pub const REST_REQUEST_MAX_BYTES: &str = "rest.request.max.bytes";
/// Default of [`REST_REQUEST_MAX_BYTES`]: 10 MiB.
pub const DEFAULT_REQUEST_MAX_BYTES: usize = 10 * 1024 * 1024;

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

/// Every public route the router serves, as `(method, path)` with OpenAPI-style `{param}`s.
/// `worker/tests/openapi.rs` checks that each is served and that `openapi.yaml` lists the same.
/// The internal endpoints ([`INTERNAL_ROUTES`]) are hidden from OpenAPI, as in Connect.
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/"),
    ("GET", "/health"),
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
    ("PATCH", "/connectors/{connector}/offsets"),
    ("DELETE", "/connectors/{connector}/offsets"),
    ("GET", "/connector-plugins"),
    ("GET", "/connector-plugins/{plugin}/config"),
    ("PUT", "/connector-plugins/{plugin}/config/validate"),
    ("GET", "/admin/loggers"),
    ("GET", "/admin/loggers/{logger}"),
    ("PUT", "/admin/loggers/{logger}"),
];

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

/// [`REST_REQUEST_MAX_BYTES`] from the worker config.
pub fn request_max_bytes(config: &WorkerConfig) -> usize {
    config
        .raw
        .get(REST_REQUEST_MAX_BYTES)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_REQUEST_MAX_BYTES)
}

/// CORS from `access.control.allow.origin` / `access.control.allow.methods`; `None` when the
/// origin is empty (Connect's default: off).
fn cors(config: &WorkerConfig) -> Option<CorsLayer> {
    let origin = config.access_control_allow_origin.trim();
    if origin.is_empty() {
        return None;
    }
    let origins = if origin == "*" {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origin
                .split(',')
                .filter_map(|o| HeaderValue::from_str(o.trim()).ok()),
        )
    };
    let methods = config.access_control_allow_methods.trim();
    // Jetty's CrossOriginFilter default when no methods are configured.
    let methods = if methods.is_empty() {
        "GET,POST,HEAD"
    } else {
        methods
    };
    let methods: Vec<Method> = methods
        .split(',')
        .filter_map(|m| Method::from_bytes(m.trim().as_bytes()).ok())
        .collect();
    Some(
        CorsLayer::new()
            .allow_origin(origins)
            .allow_methods(methods)
            .allow_headers([
                header::HeaderName::from_static("x-requested-with"),
                header::CONTENT_TYPE,
                header::ACCEPT,
                header::ORIGIN,
            ]),
    )
}

/// Turns any error response that is not already Connect's JSON body (an extractor rejection,
/// an oversized body) into one, keeping the status.
async fn connect_error_body(res: Response) -> Response {
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let text = axum::body::to_bytes(res.into_body(), 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!("Request body is too large: {text}")
    } else if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    ApiError::new(status, message).into_response()
}

/// Builds the router with every resource.
pub fn router(state: RestState) -> Router {
    let config = state.herder.as_ref().map(|h| h.config.clone());
    let limit = config
        .as_deref()
        .map(request_max_bytes)
        .unwrap_or(DEFAULT_REQUEST_MAX_BYTES);
    let mut app = Router::new()
        .merge(root::routes())
        .merge(connectors::routes())
        .merge(offsets::routes())
        .merge(plugins::routes())
        .merge(loggers::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .with_state(state)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::map_response(connect_error_body));
    if let Some(cors) = config.as_deref().and_then(cors) {
        app = app.layer(cors);
    }
    app
}
