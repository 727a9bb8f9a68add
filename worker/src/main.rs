//! `connect-worker <worker.properties>`: starts one distributed worker.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use rdkafka::ClientConfig;
use rdkafka::admin::AdminClient;
use rdkafka::client::DefaultClientContext;
use tokio::net::TcpListener;

use connect_worker::config::WorkerConfig;
use connect_worker::rest::{self, RestState};

/// A Kafka Connect-compatible distributed worker.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Worker config in Java .properties format (the keys of connect-distributed.properties).
    worker_properties: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,rdkafka=warn".into()),
        )
        .init();
    let cli = Cli::parse();
    let config = WorkerConfig::from_file(&cli.worker_properties)?;

    let kafka_cluster_id = fetch_cluster_id(&config)
        .await
        .with_context(|| format!("failed to reach Kafka at {}", config.bootstrap_servers))?;
    tracing::info!(kafka_cluster_id = %kafka_cluster_id, "connected to Kafka");

    let app = rest::router(RestState {
        kafka_cluster_id: kafka_cluster_id.into(),
    });
    let mut servers = Vec::new();
    for listener in &config.listeners {
        if listener.scheme != "http" {
            anyhow::bail!(
                "listener {}://{}:{}: https is not supported yet",
                listener.scheme,
                listener.host,
                listener.port
            );
        }
        let host = if listener.host.is_empty() {
            "0.0.0.0"
        } else {
            listener.host.as_str()
        };
        let socket = TcpListener::bind((host, listener.port))
            .await
            .with_context(|| format!("failed to bind REST listener {host}:{}", listener.port))?;
        tracing::info!(address = %socket.local_addr()?, "REST server listening");
        let app = app.clone();
        servers.push(tokio::spawn(async move {
            axum::serve(socket, app)
                .with_graceful_shutdown(shutdown_signal())
                .await
        }));
    }
    for server in servers {
        server.await??;
    }
    tracing::info!("worker stopped");
    Ok(())
}

/// Reads the cluster id with a metadata request; retries for a while so the worker can start
/// together with its brokers.
async fn fetch_cluster_id(config: &WorkerConfig) -> anyhow::Result<String> {
    let mut client_config = ClientConfig::new();
    client_config.set("bootstrap.servers", &config.bootstrap_servers);
    for (k, v) in config.with_prefix("admin.") {
        client_config.set(k, v);
    }
    let admin: AdminClient<DefaultClientContext> = client_config.create()?;
    let admin = Arc::new(admin);
    for attempt in 1..=30 {
        let admin = admin.clone();
        // librdkafka blocks the calling thread; keep it off the executor.
        let id = tokio::task::spawn_blocking(move || {
            admin.inner().fetch_cluster_id(Duration::from_secs(2))
        })
        .await?;
        if let Some(id) = id {
            return Ok(id);
        }
        tracing::warn!(
            attempt,
            "Kafka did not answer the metadata request yet; retrying"
        );
    }
    anyhow::bail!("no cluster id after 30 attempts")
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
