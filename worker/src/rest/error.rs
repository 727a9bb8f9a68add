//! One error type for the REST API, rendered as Connect's error body.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::herder::HerderError;

/// Connect's `ErrorMessage` entity.
#[derive(Debug, Serialize)]
struct ErrorBody {
    error_code: u16,
    message: String,
}

/// An error answered to a REST client. 5xx details are logged in full but sent as given.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = %self.status, message = %self.message, "REST request failed");
        }
        let body = ErrorBody {
            error_code: self.status.as_u16(),
            message: self.message,
        };
        (self.status, Json(body)).into_response()
    }
}

/// Connect's message when no leader is known to forward to.
pub const NO_LEADER: &str = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.";

impl From<HerderError> for ApiError {
    fn from(e: HerderError) -> Self {
        let status = match &e {
            HerderError::NotFound(_) => StatusCode::NOT_FOUND,
            HerderError::AlreadyExists(_) | HerderError::Rebalancing => StatusCode::CONFLICT,
            // Reached only where forwarding is not possible.
            HerderError::NotLeader { .. } | HerderError::NotOwner { .. } => {
                return ApiError::new(StatusCode::CONFLICT, NO_LEADER);
            }
            HerderError::BadRequest(_) => StatusCode::BAD_REQUEST,
            HerderError::Forbidden(_) => StatusCode::FORBIDDEN,
            HerderError::Starting(_) => StatusCode::SERVICE_UNAVAILABLE,
            HerderError::Storage(_) | HerderError::Failed(_) | HerderError::Stopped => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        ApiError::new(status, e.to_string())
    }
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "HTTP 404 Not Found")
}

pub(crate) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "HTTP 405 Method Not Allowed",
    )
}
