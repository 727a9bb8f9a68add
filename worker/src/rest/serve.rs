//! The accept loop of every REST listener (http and https, `listeners` and `admin.listeners`),
//! with the limits of [`crate::config::rest_limits`]:
//!
//! - at most `rest.max.connections` connections are served at once: the loop takes a slot
//!   before it accepts, so connections beyond the cap wait in the listener's backlog (a TLS
//!   handshake holds a slot too) and are served as soon as one closes;
//! - a connection that does not send a complete request head within
//!   `rest.header.read.timeout.ms` is closed (hyper's header-read timeout; it also closes idle
//!   keep-alive connections), so a slow client cannot keep a slot;
//! - `rest.request.timeout.ms` bounds each request ([`request_timeout`], a layer of the routers).
//!
//! HTTP/1.1 only, as before (the https listeners offer `http/1.1` by ALPN).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::ApiError;
use crate::config::rest_limits::{REST_REQUEST_TIMEOUT_MS, RestLimits};

/// How long a client may take to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `tcp` (TLS when `tls` is set) until `shutdown`, then lets the open
/// connections finish their requests and returns once they are closed.
pub(super) async fn serve(
    tcp: TcpListener,
    tls: Option<Arc<ServerConfig>>,
    app: Router,
    limits: RestLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let acceptor = tls.map(TlsAcceptor::from);
    loop {
        let slot = tokio::select! {
            _ = shutdown.cancelled() => break,
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = tcp.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // E.g. too many open files: back off instead of spinning.
                    tracing::debug!(error = %e, "accepting a REST connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let (app, acceptor, shutdown) = (app.clone(), acceptor.clone(), shutdown.clone());
        tokio::spawn(async move {
            let _slot = slot;
            match acceptor {
                None => serve_connection(stream, app, limits, shutdown).await,
                Some(acceptor) => {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => serve_connection(tls, app, limits, shutdown).await,
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
        });
    }
    drop(tcp);
    // Every slot back: every connection has closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
    Ok(())
}

/// One HTTP/1.1 connection, with the header-read timeout; on `shutdown` it finishes the
/// request in flight and closes.
async fn serve_connection<IO>(io: IO, app: Router, limits: RestLimits, shutdown: CancellationToken)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let app = app.clone();
        async move {
            Ok::<_, Infallible>(
                app.oneshot(req.map(Body::new))
                    .await
                    .unwrap_or_else(|e| match e {}),
            )
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        r = conn.as_mut() => r,
        _ = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "REST connection closed");
    }
}

/// Answers Connect's 500 error body when the request is not answered within
/// `rest.request.timeout.ms` (reading its body included).
pub(super) async fn request_timeout(
    State(limit): State<Duration>,
    req: Request,
    next: Next,
) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(res) => res,
        Err(_) => ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "Request timed out: no answer within {} ms ({REST_REQUEST_TIMEOUT_MS})",
                limit.as_millis()
            ),
        )
        .into_response(),
    }
}
