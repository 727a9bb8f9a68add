//! The REST API: Apache Kafka Connect's paths, bodies and status codes.
//!
//! One module per resource; every error leaves as Connect's `{"error_code", "message"}` body
//! through [`ApiError`], including unknown paths, wrong methods, malformed JSON, oversized
//! bodies and extractor rejections (see [`connect_error_body`]).
//!
//! Handlers are thin: parse the request, call the herder's API ([`crate::herder::api`]), answer.
//! The herder decides who serves a change; when it answers `NotLeader` (or `NotOwner` for a
//! task restart), `forward::complete_or_forward` sends the request on — the one place that
//! forwards. `HerderError`s become Connect's error bodies through one `From` impl
//! (`error.rs`). The internal endpoints (`internal.rs`) are signed with the cluster's session
//! key. Nothing below this module imports it.

mod body;
mod connectors;
mod error;
mod forward;
mod internal;
mod loggers;
mod metrics;
mod offsets;
mod plugins;
mod root;
mod serve;
mod startup;

pub use connectors::{TOPIC_TRACKING_ALLOW_RESET, TOPIC_TRACKING_ENABLE};
pub use error::ApiError;
pub use internal::INTERNAL_ROUTES;
pub use startup::STARTUP_REQUEST_TIMEOUT;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::config::rest_limits::RestLimits;
use crate::config::rest_tls;
use crate::config::{HeaderAction, HeaderRule, Listener, WorkerConfig};
use crate::herder::{HerderHandle, WorkerStage};

/// Why the REST listeners could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RestError {
    /// A listener's TLS settings are unusable (the message names the key).
    #[error(transparent)]
    Tls(#[from] rest_tls::RestTlsError),
    #[error("failed to bind REST listener {listener}: {source}")]
    Bind {
        listener: String,
        source: std::io::Error,
    },
    #[error("REST listener failed: {0}")]
    Serve(#[from] std::io::Error),
    #[error("REST listener task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Worker key (ours; Connect has none): the largest request body accepted, in bytes.
/// Larger bodies get 413 with Connect's error body.
pub const REST_REQUEST_MAX_BYTES: &str = "rest.request.max.bytes";
/// Default of [`REST_REQUEST_MAX_BYTES`]: 10 MiB.
pub const DEFAULT_REQUEST_MAX_BYTES: usize = 10 * 1024 * 1024;

/// What every handler can reach. The worker's listeners serve it once the internal topics are
/// read ([`RestServers::ready`]); `herder` is `None` only in routers built without a worker
/// (handlers that need it answer 503).
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
    ("GET", "/metrics"),
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
    ("GET", "/admin/transactions"),
];

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

/// Which resources a listener serves (`admin.listeners`, KIP-495/KIP-208).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Every resource: `listeners` when `admin.listeners` is unset.
    All,
    /// Everything but `/admin/*` (404 there): `listeners` when `admin.listeners` is set,
    /// empty or not.
    NoAdmin,
    /// Only `/admin/*`: the `admin.listeners`, as Connect's admin context.
    AdminOnly,
}

/// Builds the router with every resource.
pub fn router(state: RestState) -> Router {
    router_for(state, Surface::All)
}

/// Applies the `response.http.headers.config` rules to one response.
fn apply_header_rules(rules: &[HeaderRule], mut res: Response) -> Response {
    for rule in rules {
        let Ok(name) = HeaderName::from_bytes(rule.name.as_bytes()) else {
            continue;
        };
        let value = match rule.action {
            HeaderAction::Set | HeaderAction::Add => HeaderValue::from_str(&rule.value).ok(),
            HeaderAction::SetDate | HeaderAction::AddDate => {
                let ms: i64 = rule.value.parse().unwrap_or_default();
                let offset = Duration::from_millis(ms.unsigned_abs());
                let when = if ms >= 0 {
                    SystemTime::now() + offset
                } else {
                    SystemTime::now() - offset
                };
                HeaderValue::from_str(&httpdate::fmt_http_date(when)).ok()
            }
        };
        let Some(value) = value else { continue };
        match rule.action {
            HeaderAction::Set | HeaderAction::SetDate => {
                res.headers_mut().insert(name, value);
            }
            HeaderAction::Add | HeaderAction::AddDate => {
                res.headers_mut().append(name, value);
            }
        }
    }
    res
}

/// Builds the router a listener of `surface` serves.
pub fn router_for(state: RestState, surface: Surface) -> Router {
    let config = state.herder.as_ref().map(|h| h.config().clone());
    let mut app = Router::new();
    if surface != Surface::AdminOnly {
        app = app
            .merge(root::routes())
            .merge(connectors::routes())
            .merge(offsets::routes())
            .merge(plugins::routes());
    }
    if surface != Surface::NoAdmin {
        app = app.merge(loggers::routes());
    }
    let app = app
        .merge(metrics::routes())
        .fallback(error::not_found)
        .method_not_allowed_fallback(error::method_not_allowed)
        .with_state(state);
    with_layers(app, config.as_deref())
}

/// Apache's `JaasBasicAuthFilter`: every request but the two signed internal ones needs the
/// credentials of a known user; otherwise 401 with Apache's message in Connect's error body.
async fn require_basic_auth(
    credentials: &crate::config::rest_auth::Credentials,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use crate::config::rest_auth::is_internal_request;
    let authorization = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if is_internal_request(req.method().as_str(), req.uri().path())
        || credentials.check(authorization)
    {
        next.run(req).await
    } else {
        ApiError::new(StatusCode::UNAUTHORIZED, "User cannot access the resource.").into_response()
    }
}

/// The body limit, Connect's error bodies, basic authentication, CORS and the `response.http.headers.config` rules
/// around `app`.
fn with_layers(app: Router, config: Option<&WorkerConfig>) -> Router {
    let limit = config
        .map(request_max_bytes)
        .unwrap_or(DEFAULT_REQUEST_MAX_BYTES);
    // `rest.request.timeout.ms`, innermost: its answer gets the layers below like any other.
    let timeout = config.map_or_else(
        || RestLimits::default().request_timeout,
        |c| c.rest_limits.request_timeout,
    );
    let mut app = app
        .layer(axum::middleware::from_fn_with_state(
            timeout,
            serve::request_timeout,
        ))
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::map_response(connect_error_body));
    // Inside CORS, as Apache's filter sits behind Jetty's: a preflight needs no credentials.
    if let Some(credentials) = config.and_then(|c| c.rest_basic_auth.clone()) {
        let credentials = Arc::new(credentials);
        app = app.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let credentials = credentials.clone();
                async move { require_basic_auth(&credentials, req, next).await }
            },
        ));
    }
    if let Some(cors) = config.and_then(cors) {
        app = app.layer(cors);
    }
    let rules: Arc<[HeaderRule]> = config
        .map(|c| c.response_http_headers.clone())
        .unwrap_or_default()
        .into();
    if !rules.is_empty() {
        app = app.layer(axum::middleware::map_response(move |res: Response| {
            let rules = rules.clone();
            async move { apply_header_rules(&rules, res) }
        }));
    }
    app
}

/// The advertised URL (`http://host:port/`, Connect's form): scheme from
/// `rest.advertised.listener`, else `http` when an `http` listener exists, else `https`; host
/// and port from `rest.advertised.host.name`/`port`, else from the first listener of that
/// scheme. `default_host` names the machine when the listener names no host.
pub fn advertised_url(config: &WorkerConfig, default_host: impl FnOnce() -> String) -> String {
    let scheme = config.rest_advertised_listener.clone().unwrap_or_else(|| {
        if config.listeners.iter().any(|l| l.scheme == "http") {
            "http".to_owned()
        } else {
            "https".to_owned()
        }
    });
    let listener = config
        .listeners
        .iter()
        .find(|l| l.scheme == scheme)
        .or(config.listeners.first())
        .expect("config requires one listener");
    let host = config.rest_advertised_host_name.clone().unwrap_or_else(|| {
        if listener.host.is_empty() || listener.host == "0.0.0.0" {
            default_host()
        } else {
            listener.host.clone()
        }
    });
    let port = config.rest_advertised_port.unwrap_or(listener.port);
    if host.contains(':') {
        format!("{scheme}://[{host}]:{port}/")
    } else {
        format!("{scheme}://{host}:{port}/")
    }
}

/// The rustls configurations of the `https` listeners among `listeners` and of those among
/// `admin.listeners` (`None` where there is none); errors name the key at fault.
#[allow(clippy::type_complexity)]
pub fn tls_configs(
    config: &WorkerConfig,
) -> Result<
    (
        Option<Arc<rustls::ServerConfig>>,
        Option<Arc<rustls::ServerConfig>>,
    ),
    RestError,
> {
    let tls_for = |listeners: &[Listener], prefix: &str| -> Result<_, RestError> {
        if !listeners.iter().any(Listener::is_https) {
            return Ok(None);
        }
        let settings = rest_tls::TlsSettings::from_config(config, prefix)?;
        Ok(Some(settings.server_config()?))
    };
    Ok((
        tls_for(&config.listeners, rest_tls::LISTENERS_HTTPS_PREFIX)?,
        tls_for(
            config.admin_listeners.as_deref().unwrap_or_default(),
            rest_tls::ADMIN_LISTENERS_HTTPS_PREFIX,
        )?,
    ))
}

/// Binds every listener (`listeners`, then `admin.listeners`) and serves it until `shutdown`:
/// plain HTTP or HTTPS (rustls), each with the resources of its [`Surface`]. Fails before
/// serving anything when a listener cannot be bound or its TLS settings are unusable.
///
/// Called before the internal topics are read, as Connect binds its REST server before its
/// herder starts: until [`RestServers::ready`] hands over the worker's [`RestState`], the
/// listeners answer as [`startup`] describes, with `stage` as the worker's progress.
pub async fn bind(
    config: &WorkerConfig,
    kafka_cluster_id: Arc<str>,
    stage: WorkerStage,
    shutdown: CancellationToken,
) -> Result<RestServers, RestError> {
    let (main_surface, admin) = match &config.admin_listeners {
        None => (Surface::All, Vec::new()),
        Some(admin) => (Surface::NoAdmin, admin.clone()),
    };
    let (main_tls, admin_tls) = tls_configs(config)?;
    let (main_ready, main_rx) = watch::channel(None);
    let (admin_ready, admin_rx) = watch::channel(None);
    let starting = |surface, ready| {
        startup::app(startup::Starting {
            config: Some(config),
            kafka_cluster_id: kafka_cluster_id.clone(),
            stage: stage.clone(),
            surface,
            ready,
            timeout: startup::STARTUP_REQUEST_TIMEOUT,
        })
    };
    let main_app = starting(main_surface, main_rx);
    let admin_app = starting(Surface::AdminOnly, admin_rx);
    let mut bound = Vec::new();
    for (listener, app, tls, what) in config
        .listeners
        .iter()
        .map(|l| (l, &main_app, &main_tls, "REST server listening"))
        .chain(
            admin
                .iter()
                .map(|l| (l, &admin_app, &admin_tls, "REST admin endpoints listening")),
        )
    {
        let host = if listener.host.is_empty() {
            "0.0.0.0"
        } else {
            listener.host.as_str()
        };
        let socket = TcpListener::bind((host, listener.port))
            .await
            .map_err(|source| RestError::Bind {
                listener: listener.to_string(),
                source,
            })?;
        tracing::info!(address = %socket.local_addr()?, scheme = %listener.scheme, "{what}");
        let tls = if listener.is_https() {
            tls.clone()
        } else {
            None
        };
        bound.push((socket, app.clone(), tls));
    }
    // Each listener with the header-read timeout and connection cap (`serve`).
    let servers = bound
        .into_iter()
        .map(|(socket, app, tls)| {
            tokio::spawn(serve::serve(
                socket,
                tls,
                app,
                config.rest_limits,
                shutdown.clone(),
            ))
        })
        .collect();
    Ok(RestServers {
        servers,
        main_surface,
        main_ready,
        admin_ready,
    })
}

/// The bound listeners of [`bind`].
pub struct RestServers {
    servers: Vec<JoinHandle<std::io::Result<()>>>,
    main_surface: Surface,
    main_ready: watch::Sender<Option<Router>>,
    admin_ready: watch::Sender<Option<Router>>,
}

impl RestServers {
    /// The worker has read its internal topics: every resource is served from now on, and
    /// the requests waiting for this are answered.
    pub fn ready(&self, state: RestState) {
        self.main_ready
            .send_replace(Some(router_for(state.clone(), self.main_surface)));
        self.admin_ready
            .send_replace(Some(router_for(state, Surface::AdminOnly)));
    }

    /// Waits until every listener has stopped (after `shutdown`).
    pub async fn join(self) -> Result<(), RestError> {
        for server in self.servers {
            server.await??;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_rules_set_add_and_date() {
        let rules = crate::config::parse_header_rules(
            "set X-Frame-Options: DENY, add Vary: Origin, setDate Expires: 60000",
        )
        .unwrap();
        let mut res = StatusCode::OK.into_response();
        res.headers_mut()
            .insert("x-frame-options", HeaderValue::from_static("SAMEORIGIN"));
        res.headers_mut()
            .insert("vary", HeaderValue::from_static("Accept"));
        let res = apply_header_rules(&rules, res);
        assert_eq!(res.headers()["x-frame-options"], "DENY");
        let vary: Vec<_> = res.headers().get_all("vary").iter().collect();
        assert_eq!(vary, ["Accept", "Origin"]);
        let expires = res.headers()["expires"].to_str().unwrap();
        let when = httpdate::parse_http_date(expires).unwrap();
        assert!(when > SystemTime::now());
    }
}
