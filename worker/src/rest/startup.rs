//! The listeners before the worker has started: Connect binds its REST server before its
//! herder starts, so a port never refuses connections while the internal topics are read
//! (which can take a transaction timeout under `read_committed`, see the README).
//!
//! Until the worker's router is handed over ([`super::RestServers::ready`]):
//!
//! - `GET /` answers at once (the Kafka cluster id is known before the listeners bind);
//! - `GET /health` answers 503 `starting` with the worker's stage, as Connect does;
//! - every other request waits for the worker, as Connect queues it for its herder, and is
//!   then served; after [`STARTUP_REQUEST_TIMEOUT`] it answers Connect's 500
//!   `Request timed out. <stage>`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio::sync::watch;
use tower::ServiceExt;

use super::{ApiError, Surface, root, with_layers};
use crate::config::WorkerConfig;
use crate::herder::WorkerStage;

/// How long a request that arrives while the worker starts waits for it: Connect's
/// `DEFAULT_REST_REQUEST_TIMEOUT_MS` (90 s).
pub const STARTUP_REQUEST_TIMEOUT: Duration = Duration::from_secs(90);

/// What one listener needs while the worker starts.
pub(super) struct Starting<'a> {
    /// For the body limit, CORS and header rules of the early answers.
    pub config: Option<&'a WorkerConfig>,
    pub kafka_cluster_id: Arc<str>,
    pub stage: WorkerStage,
    pub surface: Surface,
    /// The worker's router for this listener, once it has started.
    pub ready: watch::Receiver<Option<Router>>,
    /// How long requests wait for `ready`.
    pub timeout: Duration,
}

#[derive(Clone)]
struct Dispatch {
    ready: watch::Receiver<Option<Router>>,
    /// Answers `GET /`, `GET /health` and timed-out requests, with the listener's layers.
    early: Router,
    serves_root: bool,
    timeout: Duration,
}

#[derive(Clone)]
struct EarlyState {
    kafka_cluster_id: Arc<str>,
    stage: WorkerStage,
}

/// The service a listener serves from the moment it is bound.
pub(super) fn app(s: Starting<'_>) -> Router {
    let early_state = EarlyState {
        kafka_cluster_id: s.kafka_cluster_id,
        stage: s.stage,
    };
    let mut early = super::metrics::routes();
    if s.surface != Surface::AdminOnly {
        early = early
            .route("/", get(early_root))
            .route("/health", get(early_health));
    }
    let early = with_layers(early.fallback(timed_out).with_state(early_state), s.config);
    // No layers here: the worker's router and the early one each carry their own.
    Router::new().fallback(dispatch).with_state(Dispatch {
        ready: s.ready,
        early,
        serves_root: s.surface != Surface::AdminOnly,
        timeout: s.timeout,
    })
}

async fn dispatch(State(d): State<Dispatch>, req: Request) -> Response {
    let mut ready = d.ready.clone();
    let mut app = ready.borrow_and_update().clone();
    if app.is_none() {
        let path = req.uri().path();
        let probe = (req.method() == Method::GET || req.method() == Method::HEAD)
            && ((d.serves_root && matches!(path, "/" | "/health")) || path == "/metrics");
        if !probe {
            app = match tokio::time::timeout(d.timeout, ready.wait_for(Option::is_some)).await {
                Ok(Ok(r)) => r.clone(),
                // Timed out, or the worker stopped before it started.
                _ => None,
            };
        }
    }
    let app = app.unwrap_or(d.early);
    match app.oneshot(req).await {
        Ok(res) => res,
        Err(never) => match never {},
    }
}

async fn early_root(State(s): State<EarlyState>) -> Response {
    root::server_info_body(&s.kafka_cluster_id).into_response()
}

async fn early_health(State(s): State<EarlyState>) -> Response {
    root::starting(Some(&s.stage))
}

/// Connect's answer to a request its herder did not take within the request timeout.
async fn timed_out(State(s): State<EarlyState>) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("Request timed out. {}", s.stage.summarize()),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::routing::get;
    use http::Request;

    use super::*;
    use crate::herder::stage::STAGE_READING_INTERNAL_TOPICS;

    fn starting_app(
        surface: Surface,
        timeout: Duration,
    ) -> (Router, watch::Sender<Option<Router>>) {
        let (tx, ready) = watch::channel(None);
        let app = app(Starting {
            config: None,
            kafka_cluster_id: "cluster-1".into(),
            stage: WorkerStage::new(STAGE_READING_INTERNAL_TOPICS),
            surface,
            ready,
            timeout,
        });
        (app, tx)
    }

    async fn call(app: &Router, method: &str, path: &str) -> (StatusCode, serde_json::Value) {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .unwrap();
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
        )
    }

    #[tokio::test]
    async fn root_and_health_answer_while_starting() {
        let (app, _tx) = starting_app(Surface::All, Duration::from_secs(3600));
        let (status, body) = call(&app, "GET", "/").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["kafka_cluster_id"], "cluster-1");
        let (status, body) = call(&app, "GET", "/health").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body["status"], "starting");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with("Worker is still starting up. The worker is currently initializing and reading to the end of internal topics, which began at "),
            "{message}"
        );
    }

    #[tokio::test]
    async fn other_requests_time_out_with_the_stage() {
        let (app, _tx) = starting_app(Surface::All, Duration::from_millis(50));
        let (status, body) = call(&app, "GET", "/connectors").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error_code"], 500);
        let message = body["message"].as_str().unwrap();
        assert!(
            message.starts_with("Request timed out. The worker is currently initializing and reading to the end of internal topics"),
            "{message}"
        );
        // The admin listeners do not serve `/` at all: it waits like everything else.
        let (admin, _tx) = starting_app(Surface::AdminOnly, Duration::from_millis(50));
        assert_eq!(
            call(&admin, "GET", "/").await.0,
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }

    #[tokio::test]
    async fn waiting_requests_are_served_once_the_worker_is_ready() {
        let (app, tx) = starting_app(Surface::All, Duration::from_secs(3600));
        let pending = tokio::spawn({
            let app = app.clone();
            async move { call(&app, "GET", "/connectors").await }
        });
        tokio::task::yield_now().await;
        assert!(!pending.is_finished());
        tx.send_replace(Some(
            Router::new()
                .route("/connectors", get(|| async { "[\"c\"]" }))
                .route("/health", get(|| async { "{\"status\":\"healthy\"}" })),
        ));
        let (status, body) = pending.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, serde_json::json!(["c"]));
        // From now on the worker's router answers everything, `/health` included.
        assert_eq!(call(&app, "GET", "/health").await.1["status"], "healthy");
    }
}
