//! `/connectors/{c}/offsets` (KIP-875): read, alter and reset a connector's offsets.
//!
//! - `GET` is served by any worker: sources read the offsets topic, sinks their consumer group.
//! - `PATCH` and `DELETE` are leader-only (forwarded) and need the connector `STOPPED` with no
//!   tasks, so nothing writes offsets concurrently. Sources write (or tombstone) records in the
//!   offsets topic; sinks commit or delete offsets of the consumer group their tasks commit to
//!   (`connect-<c>`, or `consumer.override.group.id`, or the worker's `consumer.group.id`).
//! - The herder checks and serialises the requests; [`crate::runtime::offsets_admin`] does the
//!   work.
//! - The connector's own `alter_offsets` hook is asked first; it decides the success message and
//!   may refuse the request.
//! - A source connector with its own `offsets.storage.topic` (other than the worker's) reads
//!   and writes there, over the worker's global topic, as its tasks do
//!   ([`crate::storage::offsets::ConnectorOffsetBackingStore`]): `GET` lists the union (connector topic first), writes go
//!   to the connector topic (tombstones to both).
//! - With `exactly.once.source.support=enabled`, the leader runs a zombie-fencing round for a
//!   source connector before altering or resetting its offsets (as Connect does), so no task of
//!   an earlier generation can commit offsets afterwards; the stopped check is then repeated.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::forward::{self, Incoming, Outcome};
use super::{ApiError, RestState, body};
use crate::runtime::offsets_admin::OffsetEntry;

pub const OFFSETS_REQUIRED: &str =
    "Partitions / offsets need to be provided for an alter offsets request";

pub(super) fn routes() -> Router<RestState> {
    Router::new().route(
        "/connectors/{connector}/offsets",
        get(get_offsets).patch(alter_offsets).delete(reset_offsets),
    )
}

async fn get_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let offsets = s.herder()?.connector_offsets(&name).await?;
    Ok(Json(json!({ "offsets": offsets })))
}

/// `ConnectorOffsets` as a request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OffsetsRequest {
    offsets: Option<Vec<OffsetEntry>>,
}

/// The herder's success message, or the leader's answer.
async fn message(
    req: &Incoming,
    result: Result<&'static str, crate::herder::HerderError>,
) -> Result<Response, ApiError> {
    Ok(match forward::complete_or_forward(req, result).await? {
        Outcome::Done(message) => Json(json!({ "message": message })).into_response(),
        Outcome::Forwarded(f) => f.into_response(),
    })
}

async fn alter_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::PATCH, uri, &headers, None)?;
    let raw: Value = body::parse(&bytes)?;
    let parsed: OffsetsRequest = body::from_value(raw.clone())?;
    let entries = parsed
        .offsets
        .filter(|o| !o.is_empty())
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, OFFSETS_REQUIRED))?;
    let req = Incoming {
        body: Some(raw),
        ..req
    };
    message(&req, h.alter_offsets(&name, entries).await).await
}

async fn reset_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let req = Incoming::new(Method::DELETE, uri, &headers, None)?;
    message(&req, h.reset_offsets(&name).await).await
}
