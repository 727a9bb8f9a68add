//! The composition root as a library: [`start`] reaches Kafka, binds the REST listeners
//! (answering `starting` meanwhile), opens the internal topics, joins the group through the
//! herder and serves the REST API until `shutdown`, then stops every task (committing
//! offsets), leaves the group and returns. [`start_standalone`] runs the same herder and
//! runtime on in-memory config and status stores and an offsets file, as a group of one
//! (`cluster::standalone`). `main` parses arguments and calls them; tests can too.

use std::sync::Arc;

use tokio::sync::{RwLock, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::{ClientScope, ExactlyOnceSourceSupport, WorkerConfig};
use crate::herder::stage::STAGE_READING_INTERNAL_TOPICS;
use crate::herder::{HandleParts, Herder, HerderHandle, HerderParts, HerderView, WorkerStage};
use crate::logging::LogLevels;
use crate::rest::{self, RestError, RestState};
use crate::runtime::worker::{StatusReporter, Worker};
use crate::storage::config::ConfigStoreSettings;
use crate::storage::offsets::OffsetStoreSettings;
use crate::storage::status::StatusStoreSettings;
use crate::storage::topics::TopicSettings;
use crate::storage::{ConfigBackingStore, OffsetBackingStore, StatusBackingStore, StorageError};

/// Why the worker could not start, or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("failed to reach Kafka at {bootstrap_servers}: {source}")]
    Kafka {
        bootstrap_servers: String,
        source: crate::startup::KafkaUnreachable,
    },
    #[error("invalid worker configuration: {0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("REST client: {0}")]
    PeerClient(#[from] crate::peer::PeerError),
    #[error(transparent)]
    Rest(#[from] RestError),
    #[error("failed to start the {topic} topic store: {source}")]
    Store {
        topic: &'static str,
        source: StorageError,
    },
    #[error("herder task panicked: {0}")]
    HerderPanicked(#[from] tokio::task::JoinError),
    #[error("worker stopped: {0}")]
    Herder(String),
    /// A standalone worker's offsets file that cannot be read (the message names it).
    #[error("{0}")]
    OffsetsFile(StorageError),
    /// `plugin.path` is set and its plugins could not be made available (no Java, no host).
    #[error(transparent)]
    JavaPlugins(#[from] crate::plugins::java::JavaPluginError),
    /// A standalone worker's connector file whose connector could not be created.
    #[error("Failed to create connector for {path}: {message}")]
    ConnectorFile { path: String, message: String },
}

/// Runs one distributed worker until `shutdown` fires (Ok) or the herder fails (Err).
/// `log_levels` is what `/admin/loggers` changes.
pub async fn start(
    config: Arc<WorkerConfig>,
    log_levels: LogLevels,
    shutdown: CancellationToken,
) -> Result<(), StartError> {
    let kafka_cluster_id = crate::startup::fetch_cluster_id(&config)
        .await
        .map_err(|source| StartError::Kafka {
            bootstrap_servers: config.bootstrap_servers.clone(),
            source,
        })?;
    tracing::info!(kafka_cluster_id = %kafka_cluster_id, "connected to Kafka");

    let worker_url = rest::advertised_url(&config, hostname);
    // Connect's worker id: the advertised host and port.
    let worker_id = worker_url
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| worker_url.clone());
    // TLS settings are checked before anything starts, so a bad one fails fast naming the key.
    rest::tls_configs(&config)?;
    crate::peer::configure(&config)?;

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
    // Before the internal topics are read: a config write left open by a dead leader would
    // hold that read.
    let transactions = crate::stuck_transactions::TransactionWatch::new(&config);
    let stores_read = CancellationToken::new();
    if let Some(t) = &transactions {
        t.spawn(shutdown.clone(), stores_read.clone());
    }

    let (config_store, offset_store, status_store) = tokio::select! {
        stores = start_stores(&config) => {
            stores_read.cancel();
            stores?
        }
        _ = shutdown.cancelled() => {
            servers.join().await?;
            tracing::info!("worker stopped before it finished starting");
            return Ok(());
        }
    };

    run(Composition {
        config,
        config_store,
        offset_store,
        status_store,
        worker_id,
        worker_url,
        kafka_cluster_id,
        log_levels,
        stage,
        transactions,
        servers,
        shutdown,
        standalone: None,
    })
    .await
}

/// Runs one standalone worker (`connect-worker standalone`, Apache's `ConnectStandalone`) until
/// `shutdown` fires: no group and no internal topics; connector configs and statuses live in
/// memory, source offsets in `offset.storage.file.filename`. The connectors of
/// `connector_files` are created once the herder runs, in order, as Apache does; one that
/// cannot be created stops the worker ([`StartError::ConnectorFile`]).
pub async fn start_standalone(
    standalone: crate::config::standalone::StandaloneConfig,
    connector_files: Vec<crate::config::standalone::ConnectorFile>,
    log_levels: LogLevels,
    shutdown: CancellationToken,
) -> Result<(), StartError> {
    let config = Arc::new(standalone.worker);
    // The offsets file first: a corrupt one stops start-up before anything is started.
    let offset_store = Arc::new(
        OffsetBackingStore::from_file(&standalone.offset_file).map_err(StartError::OffsetsFile)?,
    );
    // As Apache's standalone worker, it asks the cluster for its id (`GET /`).
    let kafka_cluster_id = crate::startup::fetch_cluster_id(&config)
        .await
        .map_err(|source| StartError::Kafka {
            bootstrap_servers: config.bootstrap_servers.clone(),
            source,
        })?;
    tracing::info!(kafka_cluster_id = %kafka_cluster_id, "connected to Kafka (standalone worker)");
    let worker_url = rest::advertised_url(&config, hostname);
    let worker_id = worker_url
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/').to_owned())
        .unwrap_or_else(|| worker_url.clone());
    rest::tls_configs(&config)?;
    crate::peer::configure(&config)?;
    let stage = WorkerStage::new(STAGE_READING_INTERNAL_TOPICS);
    let kafka_cluster_id: Arc<str> = kafka_cluster_id.into();
    let servers = rest::bind(
        &config,
        kafka_cluster_id.clone(),
        stage.clone(),
        shutdown.clone(),
    )
    .await?;
    tracing::info!(worker_id = %worker_id, advertised_url = %worker_url, offsets_file = %standalone.offset_file.display(), "REST server started");
    let config_store = Arc::new(ConfigBackingStore::in_memory(config_store_settings(
        &config,
    )?));
    let status_store = Arc::new(StatusBackingStore::in_memory());
    run(Composition {
        config,
        config_store,
        offset_store,
        status_store,
        worker_id,
        worker_url,
        kafka_cluster_id,
        log_levels,
        stage,
        transactions: None,
        servers,
        shutdown,
        standalone: Some(connector_files),
    })
    .await
}

/// What [`run`] runs: the stores, read, and the REST listeners, bound.
struct Composition {
    config: Arc<WorkerConfig>,
    config_store: Arc<ConfigBackingStore>,
    offset_store: Arc<OffsetBackingStore>,
    status_store: Arc<StatusBackingStore>,
    worker_id: String,
    worker_url: String,
    kafka_cluster_id: Arc<str>,
    log_levels: LogLevels,
    stage: WorkerStage,
    transactions: Option<Arc<crate::stuck_transactions::TransactionWatch>>,
    servers: rest::RestServers,
    shutdown: CancellationToken,
    /// A standalone worker, with the connectors to create once it runs.
    standalone: Option<Vec<crate::config::standalone::ConnectorFile>>,
}

/// Starts the herder on the stores, serves every REST resource until `shutdown` fires or the
/// herder fails, then stops the stores.
async fn run(c: Composition) -> Result<(), StartError> {
    let Composition {
        config,
        config_store,
        offset_store,
        status_store,
        worker_id,
        worker_url,
        kafka_cluster_id,
        log_levels,
        stage,
        transactions,
        servers,
        shutdown,
        standalone,
    } = c;
    let mut registry = connect_connectors::builtin_plugins();
    // A JVM only when plugin.path names plugins.
    crate::plugins::java::install(&config.raw, &mut registry).await?;
    let registry = Arc::new(registry);
    let track_topics = config
        .raw
        .get(crate::config::TOPIC_TRACKING_ENABLE)
        .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"));
    let status = StatusReporter::spawn(status_store.clone(), worker_id.clone(), track_topics);
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
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
    let (handle, commands) = HerderHandle::new(HandleParts {
        config: config.clone(),
        registry,
        config_store: config_store.clone(),
        status_store: status_store.clone(),
        offset_store: offset_store.clone(),
        view,
        kafka_cluster_id: kafka_cluster_id.clone(),
        log_levels,
        stage,
        transactions,
        standalone: standalone.is_some(),
    });
    let herder = Herder::new(HerderParts {
        config: config.clone(),
        config_store: config_store.clone(),
        status_store: status_store.clone(),
        worker,
        connector_requests: requests_rx,
        worker_url: worker_url.clone(),
        commands,
        handle: handle.clone(),
    });
    let herder_task = tokio::spawn(herder.run(shutdown.clone()));

    servers.ready(RestState {
        kafka_cluster_id,
        herder: Some(handle.clone()),
    });
    tracing::info!("internal topics read; every REST resource is served");

    let mut failed_file = None;
    for file in standalone.into_iter().flatten() {
        match handle
            .create_connector(&file.name, file.config.clone(), file.initial_state)
            .await
        {
            Ok(_) => {
                tracing::info!(connector = %file.name, file = %file.path.display(), "Created connector {}", file.name)
            }
            // SIGTERM while the connectors are created: stop, as Apache does.
            Err(_) if shutdown.is_cancelled() => break,
            Err(e) => {
                tracing::error!(file = %file.path.display(), error = %e, "Failed to create connector for {}", file.path.display());
                failed_file = Some(StartError::ConnectorFile {
                    path: file.path.display().to_string(),
                    message: e.to_string(),
                });
                shutdown.cancel();
                break;
            }
        }
    }

    if failed_file.is_none() {
        handle.complete_startup();
    }

    let outcome = herder_task.await?;
    shutdown.cancel();
    servers.join().await?;
    config_store.stop().await;
    offset_store.stop().await;
    status_store.stop().await;
    if let Some(e) = failed_file {
        return Err(e);
    }
    match outcome {
        Ok(()) => {
            tracing::info!("worker stopped");
            Ok(())
        }
        Err(e) => Err(StartError::Herder(e.to_string())),
    }
}

/// How this worker reads and writes its config topic (also what `connect-worker check` reads).
pub fn config_store_settings(
    config: &WorkerConfig,
) -> Result<ConfigStoreSettings, crate::config::ConfigError> {
    Ok(ConfigStoreSettings {
        topic: TopicSettings::new(
            &config.config_storage_topic,
            1,
            config.config_storage_replication_factor.into(),
        ),
        // The internal-topic clients take the top-level keys only, as Connect's KafkaBasedLog.
        client: config.kafka_client(ClientScope::Internal)?,
        group_id: config.group_id.clone(),
        // Under exactly-once, what an open or aborted transaction wrote is not read.
        read_committed: config.exactly_once_source_support == ExactlyOnceSourceSupport::Enabled,
        // preparing/enabled: the leader writes through the fencable transactional producer.
        transactional_writes: config.exactly_once_source_support
            != ExactlyOnceSourceSupport::Disabled,
        security: config.kafka_security.clone(),
    })
}

/// Opens the internal topics (config, offsets, status), each read to the end before anything
/// acts on them. Under `exactly.once.source.support=enabled` they are read `read_committed`,
/// so a transaction left open on one of them (a leader killed mid-write) holds this until the
/// broker aborts it: up to the writer's transaction timeout plus the broker's abort interval.
async fn start_stores(
    config: &WorkerConfig,
) -> Result<
    (
        Arc<ConfigBackingStore>,
        Arc<OffsetBackingStore>,
        Arc<StatusBackingStore>,
    ),
    StartError,
> {
    let eos_enabled = config.exactly_once_source_support == ExactlyOnceSourceSupport::Enabled;
    // The internal-topic clients take the top-level keys only, as Connect's KafkaBasedLog.
    let client = config.kafka_client(ClientScope::Internal)?;
    let store_error = |topic| move |source| StartError::Store { topic, source };
    let config_store = Arc::new(
        ConfigBackingStore::start(config_store_settings(config)?)
            .await
            .map_err(store_error("config"))?,
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
        .map_err(store_error("offsets"))?,
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
        .map_err(store_error("status"))?,
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
