//! `GET /`: the worker's version and the Kafka cluster it serves; `GET /health` (KIP-1017).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::json;

use super::RestState;
use crate::herder::WorkerStage;
use crate::version;

/// Connect's `ServerInfo` entity.
#[derive(Debug, Serialize)]
pub(super) struct ServerInfo {
    version: &'static str,
    commit: &'static str,
    kafka_cluster_id: String,
}

pub(super) fn routes() -> Router<RestState> {
    Router::new()
        .route("/", get(server_info))
        .route("/health", get(health))
}

/// How long `GET /health` waits for the herder loop (Apache's `DEFAULT_HEALTH_CHECK_TIMEOUT_MS`).
const HEALTH_CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Connect's `WorkerStatus` body with `status`.
pub(super) fn worker_status(status: StatusCode, s: &str, message: &str) -> Response {
    (status, Json(json!({"status": s, "message": message}))).into_response()
}

/// Connect's `starting` answer: 503 with the stage summary when there is one.
pub(super) fn starting(stage: Option<&WorkerStage>) -> Response {
    let message = match stage {
        Some(stage) => format!("Worker is still starting up. {}", stage.summarize()),
        None => "Worker is still starting up.".to_owned(),
    };
    worker_status(StatusCode::SERVICE_UNAVAILABLE, "starting", &message)
}

/// `WorkerStatus`: healthy once the worker joined the group and applied an assignment;
/// starting (with the stage) before; unhealthy when the herder has stopped. Before the
/// internal topics are read there is no herder yet: [`super::startup`] answers then.
async fn health(State(state): State<RestState>) -> Response {
    let Some(h) = &state.herder else {
        return starting(None);
    };
    if h.herder_stopped() {
        return worker_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "unhealthy",
            &format!(
                "Worker was unable to handle this request and may be unable to handle other requests. The herder has stopped. {}",
                h.stage().summarize()
            ),
        );
    }
    let started = {
        let v = h.view().await;
        v.generation > 0 && v.leader_url.is_some() && h.startup_completed()
    };
    if !started {
        return starting(Some(h.stage()));
    }
    // The herder loop must answer too: a worker whose loop is stuck serves reads but applies
    // no change.
    if !h.ping(HEALTH_CHECK_TIMEOUT).await {
        return worker_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "unhealthy",
            &format!(
                "Worker was unable to handle this request and may be unable to handle other requests. The herder did not answer within {} ms. {}",
                HEALTH_CHECK_TIMEOUT.as_millis(),
                h.stage().summarize()
            ),
        );
    }
    worker_status(
        StatusCode::OK,
        "healthy",
        "Worker has completed startup and is ready to handle requests.",
    )
}

/// Connect's `ServerInfo` for the cluster `kafka_cluster_id`.
pub(super) fn server_info_body(kafka_cluster_id: &str) -> Json<ServerInfo> {
    Json(ServerInfo {
        version: version::CONNECT_API_VERSION,
        commit: version::COMMIT,
        kafka_cluster_id: kafka_cluster_id.to_owned(),
    })
}

async fn server_info(State(state): State<RestState>) -> Json<ServerInfo> {
    server_info_body(&state.kafka_cluster_id)
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
