//! The admin listener's resources. `/admin/loggers`: read and change log levels at run time
//! (Connect's `LoggingResource`, KIP-495 and KIP-976 for `scope=cluster`); the levels
//! themselves are [`crate::logging`]. `/admin/transactions` (ours): the cluster's open
//! transactions, from [`crate::stuck_transactions`].

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value;

use super::{ApiError, RestState, body};
use crate::logging::tracing_level;

pub(super) fn routes() -> Router<RestState> {
    Router::new()
        .route("/admin/loggers", get(list_loggers))
        .route(
            "/admin/loggers/{logger}",
            get(get_logger).put(set_logger_level),
        )
        .route("/admin/transactions", get(list_transactions))
}

/// Ours: the open transactions of this cluster's ids and those on the topics it uses, with
/// their age and owner (README, "Self-healing").
async fn list_transactions(State(s): State<RestState>) -> Result<Json<Value>, ApiError> {
    let h = s.herder()?;
    let watch = h.transactions().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The worker cannot reach the transaction coordinators (see its log).",
        )
    })?;
    let open = watch.open(std::time::Duration::ZERO).await.map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Could not list the open transactions: {e}"),
        )
    })?;
    Ok(Json(serde_json::to_value(open).unwrap_or_default()))
}

async fn list_loggers(State(s): State<RestState>) -> Result<Json<Value>, ApiError> {
    Ok(Json(s.herder()?.log_levels().all()))
}

async fn get_logger(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(s.herder()?.log_levels().level(&name)))
}

#[derive(Debug, Deserialize)]
struct ScopeParam {
    scope: Option<String>,
}

async fn set_logger_level(
    State(s): State<RestState>,
    Path(name): Path<String>,
    Query(q): Query<ScopeParam>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    let h = s.herder()?;
    let raw: Value = body::parse(&bytes)?;
    let level = raw
        .get("level")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "Desired 'level' parameter was not specified in request.",
            )
        })?
        .to_owned();
    if tracing_level(&level).is_none() {
        // Connect answers an unknown level with 404.
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("invalid log level '{level}'."),
        ));
    }
    let scope = q.scope.unwrap_or_default().to_ascii_lowercase();
    if scope == "cluster" {
        h.set_cluster_logger_level(&name, &level).await?;
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    if !scope.is_empty() && scope != "worker" {
        tracing::warn!(scope = %scope, "unknown logger scope; treating it as 'worker'");
    }
    let affected = h
        .log_levels()
        .set(&name, &level)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
    Ok(Json(affected).into_response())
}
