//! Keeps `openapi.yaml` and the router in step: the same (method, path) pairs, each served.

use std::collections::BTreeSet;

use axum::body::Body;
use connect_worker::rest::{self, ROUTES, RestState};
use http::{Method, Request, StatusCode};
use tower::ServiceExt;

/// (METHOD, path) pairs under `paths:` in openapi.yaml. The file is written with two-space
/// indents, so a line scan is enough and keeps a YAML parser out of the build.
fn openapi_routes() -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi.yaml"))
        .expect("openapi.yaml at the repository root");
    let mut routes = BTreeSet::new();
    let mut in_paths = false;
    let mut path = None;
    for line in text.lines() {
        if !line.starts_with(' ') {
            in_paths = line == "paths:";
            continue;
        }
        if !in_paths {
            continue;
        }
        if let Some(p) = line.strip_prefix("  /") {
            path = Some(format!("/{}", p.trim_end_matches(':')));
        } else if let Some(m) = line.strip_prefix("    ").and_then(|l| l.strip_suffix(':'))
            && ["get", "put", "post", "patch", "delete"].contains(&m)
        {
            routes.insert((m.to_uppercase(), path.clone().expect("method under a path")));
        }
    }
    routes
}

#[test]
fn openapi_lists_exactly_the_router_routes() {
    let declared: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(openapi_routes(), declared);
}

#[tokio::test]
async fn every_declared_route_is_served() {
    let app = rest::router(RestState {
        kafka_cluster_id: "test".into(),
        herder: None,
    });
    for (method, path) in ROUTES {
        let concrete = path
            .replace("{connector}", "c")
            .replace("{task}", "0")
            .replace("{plugin}", "p")
            .replace("{logger}", "root");
        let req = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(&concrete)
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .unwrap();
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let body = axum::body::to_bytes(res.into_body(), 1 << 20)
            .await
            .unwrap();
        let unrouted = (status == StatusCode::NOT_FOUND
            && body.as_ref() == br#"{"error_code":404,"message":"HTTP 404 Not Found"}"#)
            || status == StatusCode::METHOD_NOT_ALLOWED;
        assert!(
            !unrouted,
            "{method} {path} is in ROUTES but the router does not serve it"
        );
    }
}

#[tokio::test]
async fn internal_routes_are_served_but_hidden_from_openapi() {
    let declared = openapi_routes();
    let app = rest::router(RestState {
        kafka_cluster_id: "test".into(),
        herder: None,
    });
    for (method, path) in rest::INTERNAL_ROUTES {
        assert!(
            !declared.contains(&(method.to_string(), path.to_string())),
            "{method} {path} is internal and must stay out of openapi.yaml"
        );
        let req = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(path.replace("{connector}", "c"))
            .body(Body::from("[]"))
            .unwrap();
        let status = app.clone().oneshot(req).await.unwrap().status();
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{method} {path}");
    }
}
