//! The REST API: Apache Kafka Connect's paths, bodies and status codes.
//!
//! One module per resource; every error leaves as Connect's `{"error_code", "message"}` body
//! through [`ApiError`], including unknown paths and wrong methods.

mod error;
mod root;

pub use error::ApiError;

use std::sync::Arc;

use axum::Router;

/// What every handler can reach.
#[derive(Debug, Clone)]
pub struct RestState {
    /// The Kafka cluster id, read from the brokers at start-up.
    pub kafka_cluster_id: Arc<str>,
}

/// Every route the router serves, as `(method, path)` with OpenAPI-style `{param}`s.
/// `worker/tests/openapi.rs` checks that each is served and that `openapi.yaml` lists the same.
pub const ROUTES: &[(&str, &str)] = &[("GET", "/")];

/// Builds the router with every resource.
pub fn router(state: RestState) -> Router {
    Router::new()
        .merge(root::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .with_state(state)
}
