//! What the REST layer sees of the herder: the worker's place in the group and the stores,
//! plus connector config validation (pure, answered by any worker).

use std::sync::Arc;

use connect_api::config::connector::with_worker_converters;
use connect_api::config::connector::{
    CONNECTOR_CLASS_CONFIG, EXACTLY_ONCE_SUPPORT_CONFIG, TRANSACTION_BOUNDARY_CONFIG,
};
use connect_api::config::{
    ConfigDef, ConfigValue, TypedValue, sink_connector_config_def, source_connector_config_def,
};
use connect_api::connector::{ConnectorTransactionBoundaries, ExactlyOnceSupport};
use connect_api::{
    ConfigInfos, ConfigMap, ConnectError, ConnectorInstance, PluginRegistry, PluginType,
};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use serde_json::{Value, json};
use tokio::sync::{RwLock, mpsc, oneshot};

use super::session_key;
use crate::config::ClientScope;
use crate::config::ConnectProtocol;
use crate::config::clients::{ClientKind, connector_overrides};
use crate::config::{ExactlyOnceSourceSupport, WorkerConfig};
use crate::rest::LogLevels;
use crate::storage::{ConfigBackingStore, ConnectorTaskId, OffsetBackingStore, StatusBackingStore};

/// Requests the REST layer hands to the herder loop.
#[derive(Debug)]
pub enum HerderCommand {
    /// Restart one task if it runs on this worker.
    RestartTask(ConnectorTaskId),
    /// `PUT /connectors/{c}/fence` on the leader: run one zombie-fencing round for a source
    /// connector and answer when it is done (or failed).
    FenceZombies(String, oneshot::Sender<Result<(), String>>),
}

/// The worker's place in the group, updated by the herder loop.
#[derive(Debug, Clone, Default)]
pub struct HerderView {
    pub worker_id: String,
    pub worker_url: String,
    pub generation: i32,
    pub is_leader: bool,
    pub leader_url: Option<String>,
    /// Between RebalanceStarted and the next applied assignment.
    pub rebalancing: bool,
}

/// Everything a REST handler needs. Cheap to clone.
#[derive(Clone)]
pub struct HerderHandle {
    pub config: Arc<WorkerConfig>,
    pub registry: Arc<PluginRegistry>,
    pub config_store: Arc<ConfigBackingStore>,
    pub status_store: Arc<StatusBackingStore>,
    pub offset_store: Arc<OffsetBackingStore>,
    pub view: Arc<RwLock<HerderView>>,
    pub kafka_cluster_id: Arc<str>,
    pub commands: mpsc::UnboundedSender<HerderCommand>,
    /// Log levels of this worker (`/admin/loggers`).
    pub log_levels: LogLevels,
    /// What the worker is doing (`GET /health`), shared with the start-up path.
    pub stage: super::WorkerStage,
}

pub const EOS_NOT_ENABLED: &str = "This worker does not have exactly-once source support enabled.";
pub const EOS_NOT_IMPLEMENTED: &str = "The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which will disable this preflight check and allow the connector to be created).";
pub const EOS_UNSUPPORTED: &str =
    "The connector does not support exactly-once semantics with the provided configuration.";
pub const BOUNDARIES_UNSUPPORTED: &str = "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.";

impl HerderHandle {
    /// Asks the herder to restart a task it runs.
    pub fn restart_task(&self, id: ConnectorTaskId) -> Result<(), String> {
        self.commands
            .send(HerderCommand::RestartTask(id))
            .map_err(|_| "the herder has stopped".to_owned())
    }

    /// Asks the herder (leader) for one zombie-fencing round of `connector`'s tasks.
    pub async fn fence_zombies(&self, connector: &str) -> Result<(), String> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(HerderCommand::FenceZombies(connector.to_owned(), tx))
            .map_err(|_| "the herder has stopped".to_owned())?;
        rx.await.map_err(|_| {
            format!("the herder dropped the zombie fencing request for connector {connector}")
        })?
    }

    /// Publishes a connector's task configs: written directly on the leader, otherwise sent
    /// to the leader's internal `POST /connectors/{c}/tasks` endpoint, signed with the session
    /// key. One attempt; the caller retries.
    pub async fn submit_task_configs(
        &self,
        connector: &str,
        configs: Vec<ConfigMap>,
    ) -> Result<(), String> {
        let (is_leader, leader_url) = {
            let v = self.view.read().await;
            (v.is_leader, v.leader_url.clone())
        };
        if is_leader {
            return self
                .config_store
                .put_task_configs(connector, &configs)
                .await
                .map_err(|e| {
                    format!("failed to write task configs of connector {connector}: {e}")
                });
        }
        let leader = leader_url.ok_or_else(|| {
            format!("cannot submit task configs of connector {connector}: no known leader URL")
        })?;
        let url = format!(
            "{}/connectors/{}/tasks",
            leader.trim_end_matches('/'),
            crate::rest::encode_path(connector)
        );
        let body = serde_json::to_vec(&configs).map_err(|e| e.to_string())?;
        let res = crate::rest::client::send_internal(self, reqwest::Method::POST, &url, body)
            .await
            .map_err(|e| format!("failed to submit task configs of connector {connector} to the leader at {leader}: {e}"))?;
        if res.0.is_success() {
            Ok(())
        } else {
            Err(format!(
                "the leader at {leader} refused the task configs of connector {connector}: {} {}",
                res.0.as_u16(),
                res.1
            ))
        }
    }

    /// Header with the Base64 KIP-507 signature of an internal request's body.
    pub const SIGNATURE_HEADER: &'static str = session_key::SIGNATURE_HEADER;
    /// Header naming the signature algorithm.
    pub const ALGORITHM_HEADER: &'static str = session_key::ALGORITHM_HEADER;

    /// Leader only: [`session_key::maybe_rotate_session_key`] with this worker's stores.
    pub async fn maybe_rotate_session_key(
        &self,
        now_ms: i64,
    ) -> Result<bool, crate::storage::StorageError> {
        session_key::maybe_rotate_session_key(&self.config_store, &self.config, now_ms).await
    }

    /// Whether internal requests are signed: only under the `sessioned` protocol.
    pub fn signs_internal_requests(&self) -> bool {
        self.config.connect_protocol == ConnectProtocol::Sessioned
    }

    /// `(algorithm header, signature header)` for an internal request body, or `None` when
    /// requests are not signed or no session key is known yet.
    pub fn sign_internal_request(&self, body: &[u8]) -> Option<(String, String)> {
        if !self.signs_internal_requests() {
            return None;
        }
        let key = self.config_store.snapshot().session_key.clone()?;
        let settings = session_key::KeySettings::from_config(&self.config);
        let alg = settings.signature_algorithm;
        let sig = session_key::sign(&alg, &key.key, body).ok()?;
        Some((alg, sig))
    }

    /// Checks an internal request's signature headers against the session key (KIP-507).
    /// The error is the HTTP status and Connect's message.
    pub fn verify_internal_request(
        &self,
        algorithm: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<(), (u16, String)> {
        if !self.signs_internal_requests() {
            return Ok(());
        }
        let (Some(algorithm), Some(signature)) = (algorithm, signature) else {
            return Err((
                400,
                "Internal request missing required signature".to_owned(),
            ));
        };
        let settings = session_key::KeySettings::from_config(&self.config);
        if !settings
            .verification_algorithms
            .iter()
            .any(|a| a == algorithm)
        {
            return Err((
                400,
                format!(
                    "This worker does not support the '{algorithm}' key signing algorithm used by other workers. This worker is currently configured to use: {:?}. Check that all workers' configuration files permit the same set of signature algorithms, and correct any misconfigured worker and restart it.",
                    settings.verification_algorithms
                ),
            ));
        }
        let Some(key) = self.config_store.snapshot().session_key.clone() else {
            return Err((
                503,
                "This worker is still starting up and has not been able to read a session key from the config topic yet".to_owned(),
            ));
        };
        match session_key::verify(algorithm, &key.key, body, signature) {
            Ok(true) => Ok(()),
            Ok(false) => Err((
                403,
                "Internal request contained invalid signature.".to_owned(),
            )),
            Err(e) => Err((
                400,
                format!("Internal request signature could not be checked: {e}"),
            )),
        }
    }

    /// A sink connector's committed consumer group offsets, as `GET .../offsets` shows them.
    pub async fn sink_offsets(
        &self,
        connector: &str,
        config: &ConfigMap,
    ) -> Result<Vec<Value>, String> {
        let group = config
            .get("consumer.override.group.id")
            .cloned()
            .unwrap_or_else(|| crate::runtime::sink::sink_group_id(connector));
        let topics: Vec<String> = config
            .get(connect_api::config::connector::TOPICS_CONFIG)
            .map(|t| {
                t.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        // Connect reads a sink's committed offsets with the worker's admin client settings.
        let mut client = self
            .config
            .kafka_client(ClientScope::Worker(ClientKind::Admin))
            .map_err(|e| e.to_string())?;
        tokio::task::spawn_blocking(move || {
            let consumer: BaseConsumer = client
                .set("group.id", &group)
                .create()
                .map_err(|e| e.to_string())?;
            let timeout = std::time::Duration::from_secs(30);
            let mut tpl = TopicPartitionList::new();
            for t in &topics {
                let md = consumer
                    .fetch_metadata(Some(t), timeout)
                    .map_err(|e| e.to_string())?;
                for topic in md.topics() {
                    for p in topic.partitions() {
                        tpl.add_partition(topic.name(), p.id());
                    }
                }
            }
            let committed = consumer
                .committed_offsets(tpl, timeout)
                .map_err(|e| e.to_string())?;
            Ok(committed
                .elements()
                .iter()
                .filter_map(|e| match e.offset() {
                    Offset::Offset(o) => Some(json!({
                        "partition": {"kafka_topic": e.topic(), "kafka_partition": e.partition()},
                        "offset": {"kafka_offset": o},
                    })),
                    _ => None,
                })
                .collect())
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// Validates a connector config as `PUT /connector-plugins/{p}/config/validate` and
    /// create/update do: the framework's keys, the connector's own, the sink topic rules and
    /// the exactly-once preflight checks. An unknown plugin is an error (400).
    pub fn validate(&self, props: &ConfigMap) -> Result<(ConfigInfos, PluginType), ConnectError> {
        let class = props
            .get(CONNECTOR_CLASS_CONFIG)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                ConnectError::config(format!(
                    "Connector config {} contains no connector type",
                    display_config(props)
                ))
            })?;
        let instance = self.registry.create_connector(class)?;
        let plugin_type = instance.plugin_type();
        let framework_def = with_worker_converters(
            match &instance {
                ConnectorInstance::Source(_) => source_connector_config_def(),
                ConnectorInstance::Sink(_) => sink_connector_config_def(),
            },
            &self.config.key_converter,
            &self.config.value_converter,
            &self.config.header_converter,
        );
        let framework = ConfigInfos::validate(class, &framework_def, props);
        let (own_def, own_values) = match &instance {
            ConnectorInstance::Source(c) => (c.config_def(), c.validate(props)),
            ConnectorInstance::Sink(c) => (c.config_def(), c.validate(props)),
        };
        let own_groups = own_def.groups();
        let own = ConfigInfos::generate(class, &own_def, &own_values, own_groups);
        let mut infos = ConfigInfos::merge(
            class,
            [
                framework,
                own,
                client_override_infos(&self.config, class, props),
            ],
        );
        match &instance {
            ConnectorInstance::Sink(_) => {
                for (key, message) in connect_api::config::sink_topic_errors(props) {
                    infos.add_error(key, message);
                }
            }
            ConnectorInstance::Source(c) => {
                let has_error = |infos: &ConfigInfos, key: &str| {
                    infos
                        .configs
                        .iter()
                        .filter_map(|ci| ci.value.as_ref())
                        .any(|v| v.name == key && !v.errors.is_empty())
                };
                // Both checks run only when the property itself passed basic validation.
                let eos = props
                    .get(EXACTLY_ONCE_SUPPORT_CONFIG)
                    .map(|s| s.trim().to_ascii_lowercase());
                if eos.as_deref() == Some("required")
                    && !has_error(&infos, EXACTLY_ONCE_SUPPORT_CONFIG)
                {
                    if self.config.exactly_once_source_support != ExactlyOnceSourceSupport::Enabled
                    {
                        infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_NOT_ENABLED);
                    }
                    match c.exactly_once_support(props) {
                        ExactlyOnceSupport::Supported => {}
                        ExactlyOnceSupport::Unsupported => {
                            infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_UNSUPPORTED);
                        }
                        ExactlyOnceSupport::Unknown => {
                            infos.add_error(EXACTLY_ONCE_SUPPORT_CONFIG, EOS_NOT_IMPLEMENTED);
                        }
                    }
                }
                let boundary = props
                    .get(TRANSACTION_BOUNDARY_CONFIG)
                    .map(|s| s.trim().to_ascii_lowercase());
                if boundary.as_deref() == Some("connector")
                    && !has_error(&infos, TRANSACTION_BOUNDARY_CONFIG)
                    && c.can_define_transaction_boundaries(props)
                        != ConnectorTransactionBoundaries::Supported
                {
                    infos.add_error(TRANSACTION_BOUNDARY_CONFIG, BOUNDARIES_UNSUPPORTED);
                }
            }
        }
        Ok((infos, plugin_type))
    }
}

/// The `producer.override.*`, `consumer.override.*` and `admin.override.*` keys no client here
/// can use (see [`crate::config::clients`]), one entry with its error each; valid overrides
/// add nothing.
/// Security overrides are resolved over the worker's settings (the task's client would be).
fn client_override_infos(config: &WorkerConfig, class: &str, props: &ConfigMap) -> ConfigInfos {
    let values: Vec<ConfigValue> = [
        ClientKind::Producer,
        ClientKind::Consumer,
        ClientKind::Admin,
    ]
    .into_iter()
    .filter_map(|kind| {
        connector_overrides(kind, props)
            .and_then(|o| {
                config
                    .client_settings(ClientScope::Worker(kind))
                    .merged(&o)
                    .resolve()
                    .map(|_| ())
            })
            .err()
    })
    .flatten()
    .map(|e| {
        let mut v = ConfigValue::new(e.key.clone());
        v.value = Some(TypedValue::String(e.value.clone()));
        v.add_error(e.to_string());
        v
    })
    .collect();
    ConfigInfos::generate(class, &ConfigDef::new(), &values, Vec::new())
}

/// `{k=v, ...}` as Java prints a map, with values of password-looking keys hidden.
fn display_config(props: &ConfigMap) -> String {
    let body: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let hidden = k.contains("password") || k.contains("secret");
            format!("{k}={}", if hidden { "[hidden]" } else { v.as_str() })
        })
        .collect();
    format!("{{{}}}", body.join(", "))
}
