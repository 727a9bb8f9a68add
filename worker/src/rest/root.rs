//! `GET /`: the worker's version and the Kafka cluster it serves; `GET /health` (KIP-1017).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::json;

use super::RestState;
use crate::version;

/// Connect's `ServerInfo` entity.
#[derive(Debug, Serialize)]
struct ServerInfo {
    version: &'static str,
    commit: &'static str,
    kafka_cluster_id: String,
}

pub(super) fn routes() -> Router<RestState> {
    Router::new()
        .route("/", get(server_info))
        .route("/health", get(health))
}

/// `WorkerStatus`: healthy once the worker joined the group and applied an assignment;
/// starting before; unhealthy when the herder has stopped.
async fn health(State(state): State<RestState>) -> Response {
    let answer = |status: StatusCode, s: &str, message: &str| {
        (status, Json(json!({"status": s, "message": message}))).into_response()
    };
    let starting = "Worker is still starting up. The worker has not yet joined the Connect group and received its first assignment.";
    let Some(h) = &state.herder else {
        return answer(StatusCode::SERVICE_UNAVAILABLE, "starting", starting);
    };
    if h.commands.is_closed() {
        return answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            "unhealthy",
            "Worker was unable to handle this request and may be unable to handle other requests. The herder has stopped.",
        );
    }
    let started = {
        let v = h.view.read().await;
        v.generation > 0 && v.leader_url.is_some()
    };
    if !started {
        return answer(StatusCode::SERVICE_UNAVAILABLE, "starting", starting);
    }
    answer(
        StatusCode::OK,
        "healthy",
        "Worker has completed startup and is ready to handle requests.",
    )
}

async fn server_info(State(state): State<RestState>) -> Json<ServerInfo> {
    Json(ServerInfo {
        version: version::CONNECT_API_VERSION,
        commit: version::COMMIT,
        kafka_cluster_id: state.kafka_cluster_id.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::rest::{RestState, router};

    fn app() -> axum::Router {
        router(RestState {
            kafka_cluster_id: "abc".into(),
            herder: None,
        })
    }

    async fn get_json(path: &str) -> (StatusCode, serde_json::Value) {
        let res = app()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn root_reports_version_commit_and_cluster() {
        let (status, body) = get_json("/").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["version"], "4.0.0");
        assert_eq!(body["kafka_cluster_id"], "abc");
        assert!(body["commit"].as_str().unwrap().starts_with("connect-rs-"));
    }

    #[tokio::test]
    async fn health_is_starting_without_a_herder() {
        let (status, body) = get_json("/health").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["status"], "starting");
    }

    #[tokio::test]
    async fn unknown_path_is_a_connect_error_body() {
        let (status, body) = get_json("/no/such/path").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body,
            serde_json::json!({"error_code": 404, "message": "HTTP 404 Not Found"})
        );
    }
}
