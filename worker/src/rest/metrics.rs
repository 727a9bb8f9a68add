//! `GET /metrics`: the worker's metrics in the OpenMetrics text format ([`crate::metrics`]).
//!
//! Served on every listener, from the moment it is bound (the start-up counters matter most
//! while a worker starts), behind the same authentication as every other public endpoint.

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::metrics;

pub(super) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/metrics", get(scrape))
}

pub(super) async fn scrape() -> Response {
    (
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        metrics::global().encode(),
    )
        .into_response()
}
