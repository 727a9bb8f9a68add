//! `connect-worker <worker.properties>`: starts one distributed worker.
//!
//! This is the composition root: it reads the worker config, reaches Kafka, binds the REST
//! listeners (answering `starting` meanwhile), opens the internal topics, joins the group
//! through the herder and serves the REST API until SIGTERM or Ctrl-C, then stops every task
//! (committing offsets), leaves the group and exits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use rdkafka::ClientConfig;
use rdkafka::admin::AdminClient;
use rdkafka::client::DefaultClientContext;
use tokio::sync::{RwLock, mpsc};
use tokio_util::sync::CancellationToken;

use connect_worker::config::{ExactlyOnceSourceSupport, WorkerConfig};
use connect_worker::herder::stage::STAGE_READING_INTERNAL_TOPICS;
use connect_worker::herder::{Herder, HerderHandle, HerderParts, HerderView, WorkerStage};
use connect_worker::rest::{self, RestState};
use connect_worker::runtime::worker::{StatusReporter, Worker};
use connect_worker::storage::config::ConfigStoreSettings;
use connect_worker::storage::offsets::OffsetStoreSettings;
use connect_worker::storage::status::StatusStoreSettings;
use connect_worker::storage::topics::TopicSettings;
use connect_worker::storage::{ConfigBackingStore, OffsetBackingStore, StatusBackingStore};

/// A Kafka Connect-compatible distributed worker.
#[derive(Debug, Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    /// Worker config in Java .properties format (the keys of connect-distributed.properties).
    worker_properties: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Check a topic written by the verifiable source: read it with read_committed and require
    /// every seqno of every task exactly once, no gap. Exits 0 only when exact.
    Verify {
        #[arg(long)]
        bootstrap_servers: String,
        #[arg(long)]
        topic: String,
        /// The number of tasks expected.
        #[arg(long)]
        tasks: Option<usize>,
        /// How long reading to the end may take, in seconds.
        #[arg(long, default_value_t = 120)]
        timeout_secs: u64,
    },
}

/// Prints the verdict of `connect-worker verify`; true when exact.
#[allow(clippy::print_stdout)]
fn run_verify(
    bootstrap: &str,
    topic: &str,
    tasks: Option<usize>,
    timeout: Duration,
) -> anyhow::Result<bool> {
    let report = connect_worker::verify::verify_topic(bootstrap, topic, timeout)
        .map_err(anyhow::Error::msg)?;
    for (task, c) in &report.tasks {
        println!(
            "task {task}: records={} distinct={} duplicates={} gaps={} max_seqno={}",
            c.records, c.distinct, c.duplicates, c.gaps, c.max_seqno
        );
    }
    if report.unparsable > 0 {
        println!("unparsable records: {}", report.unparsable);
    }
    let exact = report.is_exact(tasks);
    println!(
        "{}",
        if exact {
            "EXACT: every seqno of every task exactly once"
        } else {
            "NOT EXACT"
        }
    );
    Ok(exact)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The filter is reloadable so `PUT /admin/loggers/{name}` changes levels at run time.
    let base_filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "info,rdkafka=warn".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&base_filter)
                .unwrap_or_else(|_| "info,rdkafka=warn".into()),
        )
        .with_filter_reloading();
    let log_levels = rest::LogLevels::new(builder.reload_handle(), &base_filter);
    builder.init();
    let cli = Cli::parse();
    if let Some(Command::Verify {
        bootstrap_servers,
        topic,
        tasks,
        timeout_secs,
    }) = cli.command
    {
        let exact = tokio::task::spawn_blocking(move || {
            run_verify(
                &bootstrap_servers,
                &topic,
                tasks,
                Duration::from_secs(timeout_secs),
            )
        })
        .await??;
        std::process::exit(if exact { 0 } else { 1 });
    }
    let Some(properties) = cli.worker_properties else {
        anyhow::bail!("usage: connect-worker <worker.properties> | connect-worker verify --help");
    };
    let config = Arc::new(WorkerConfig::from_file(&properties)?);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutdown requested");
            shutdown.cancel();
        }
    });

    let kafka_cluster_id = fetch_cluster_id(&config)
        .await
        .with_context(|| format!("failed to reach Kafka at {}", config.bootstrap_servers))?;
    tracing::info!(kafka_cluster_id = %kafka_cluster_id, "connected to Kafka");

    let worker_url = rest::advertised_url(&config, hostname);
    // Connect's worker id: the advertised host and port.
    let worker_id = worker_url
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| worker_url.clone());
    // TLS settings are checked before anything starts, so a bad one fails fast naming the key.
    rest::tls_configs(&config)?;
    rest::client::configure(&config).map_err(|e| anyhow::anyhow!("REST client: {e}"))?;

    // The listeners bind now, as Connect binds its REST server before its herder starts:
    // reading the internal topics can take a transaction timeout (see `start_stores`), and a
    // port refusing connections meanwhile gets the worker restarted by liveness probes.
    let stage = WorkerStage::new(STAGE_READING_INTERNAL_TOPICS);
    let kafka_cluster_id: Arc<str> = kafka_cluster_id.into();
    let servers = rest::bind(
        &config,
        kafka_cluster_id.clone(),
        stage.clone(),
        shutdown.clone(),
    )
    .await?;
    tracing::info!(worker_id = %worker_id, advertised_url = %worker_url, "REST server started; reading the internal topics");

    let (config_store, offset_store, status_store) = tokio::select! {
        stores = start_stores(&config) => stores?,
        _ = shutdown.cancelled() => {
            servers.join().await?;
            tracing::info!("worker stopped before it finished starting");
            return Ok(());
        }
    };

    let registry = Arc::new(connect_connectors::builtin_plugins());
    let track_topics = config
        .raw
        .get(connect_worker::config::TOPIC_TRACKING_ENABLE)
        .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
    let status = StatusReporter::spawn(status_store.clone(), worker_id.clone(), track_topics);
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
    let (commands_tx, commands_rx) = mpsc::unbounded_channel();
    let worker = Worker::new(
        config.clone(),
        registry.clone(),
        offset_store.clone(),
        status,
        requests_tx,
    );
    let view = Arc::new(RwLock::new(HerderView {
        worker_id: worker_id.clone(),
        worker_url: worker_url.clone(),
        rebalancing: true,
        ..Default::default()
    }));
    let handle = HerderHandle {
        config: config.clone(),
        registry,
        config_store: config_store.clone(),
        status_store: status_store.clone(),
        offset_store: offset_store.clone(),
        view: view.clone(),
        kafka_cluster_id: kafka_cluster_id.clone(),
        commands: commands_tx,
        log_levels: log_levels.clone(),
        stage,
    };
    let herder = Herder::new(HerderParts {
        config: config.clone(),
        config_store: config_store.clone(),
        status_store: status_store.clone(),
        worker,
        connector_requests: requests_rx,
        view: view.clone(),
        worker_url: worker_url.clone(),
        commands: commands_rx,
        handle: handle.clone(),
        // Until WorkerConfig.kafka_security lands (branch client-security): replaced there by config.kafka_security.clone().
        kafka_security: connect_worker::security::KafkaSecurity::default(),
    });
    let herder_task = tokio::spawn(herder.run(shutdown.clone()));

    servers.ready(RestState {
        kafka_cluster_id,
        herder: Some(handle),
    });
    tracing::info!("internal topics read; every REST resource is served");

    let outcome = herder_task.await.context("herder task panicked")?;
    shutdown.cancel();
    servers.join().await?;
    config_store.stop().await;
    offset_store.stop().await;
    status_store.stop().await;
    match outcome {
        Ok(()) => {
            tracing::info!("worker stopped");
            Ok(())
        }
        Err(e) => anyhow::bail!("worker stopped: {e}"),
    }
}

/// Opens the internal topics (config, offsets, status), each read to the end before anything
/// acts on them. Under `exactly.once.source.support=enabled` they are read `read_committed`,
/// so a transaction left open on one of them (a leader killed mid-write) holds this until the
/// broker aborts it: up to the writer's transaction timeout plus the broker's abort interval.
async fn start_stores(
    config: &WorkerConfig,
) -> anyhow::Result<(
    Arc<ConfigBackingStore>,
    Arc<OffsetBackingStore>,
    Arc<StatusBackingStore>,
)> {
    let eos_enabled = config.exactly_once_source_support == ExactlyOnceSourceSupport::Enabled;
    let mut client = ClientConfig::new();
    client.set("bootstrap.servers", &config.bootstrap_servers);
    let config_store = Arc::new(
        ConfigBackingStore::start(ConfigStoreSettings {
            topic: TopicSettings::new(
                &config.config_storage_topic,
                1,
                config.config_storage_replication_factor.into(),
            ),
            client: client.clone(),
            group_id: config.group_id.clone(),
            read_committed: eos_enabled,
            // preparing/enabled: the leader writes through the fencable transactional producer.
            transactional_writes: config.exactly_once_source_support
                != ExactlyOnceSourceSupport::Disabled,
        })
        .await
        .context("failed to start the config topic store")?,
    );
    let offset_store = Arc::new(
        OffsetBackingStore::start(OffsetStoreSettings {
            topic: TopicSettings::new(
                &config.offset_storage_topic,
                config.offset_storage_partitions,
                config.offset_storage_replication_factor.into(),
            ),
            client: client.clone(),
            client_id: format!("{}-offsets", config.group_id),
            read_committed: eos_enabled,
        })
        .await
        .context("failed to start the offsets topic store")?,
    );
    let status_store = Arc::new(
        StatusBackingStore::start(StatusStoreSettings {
            topic: TopicSettings::new(
                &config.status_storage_topic,
                config.status_storage_partitions,
                config.status_storage_replication_factor.into(),
            ),
            client,
            client_id: format!("{}-statuses", config.group_id),
        })
        .await
        .context("failed to start the status topic store")?,
    );
    Ok((config_store, offset_store, status_store))
}

/// The machine's host name, for the advertised URL when the listener names no host.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Reads the cluster id with a metadata request; retries for a while so the worker can start
/// together with its brokers.
async fn fetch_cluster_id(config: &WorkerConfig) -> anyhow::Result<String> {
    let mut client_config = ClientConfig::new();
    client_config.set("bootstrap.servers", &config.bootstrap_servers);
    for (k, v) in config.admin_client_overrides() {
        client_config.set(k, v);
    }
    let admin: AdminClient<DefaultClientContext> = client_config.create()?;
    let admin = Arc::new(admin);
    for attempt in 1..=15 {
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
    anyhow::bail!("no answer to metadata requests within 30 seconds")
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
