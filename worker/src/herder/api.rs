//! The herder's typed API: every change to the cluster (connector configs, target states,
//! restarts, task configs, zombie fencing, offsets, cluster-wide log levels) is asked of the
//! herder here, runs on its request queue one at a time, and answers a [`HerderError`].
//!
//! Leadership is checked here, once per request: a change only the leader may make answers
//! [`HerderError::NotLeader`] on a follower, and the caller forwards it (the REST layer sends
//! the user's request on; the herder itself sends task configs and fencing requests through
//! [`crate::peer`]). Because the leader runs "does it exist? then write" on its queue, two
//! concurrent creates of one name give one success and one [`HerderError::AlreadyExists`].
//! Every worker learns about a write by reading the config topic.

use std::time::Duration;

use connect_api::config::connector::NAME_CONFIG;
use connect_api::{ConfigMap, ConnectorInstance};
use futures::future::BoxFuture;
use tokio::time::Instant;

use super::HerderHandle;
pub use super::error::HerderError;
use super::fencing;
use super::handle::HerderCommand;
use crate::config::ExactlyOnceSourceSupport;
use crate::runtime::offsets_admin::{self, OffsetEntry};
use crate::storage::{ConnectorState, ConnectorTaskId, RestartRequest, TargetState};

/// How long a request waits for the config topic to be read to its end.
pub const REFRESH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request waits for a rebalance in progress before answering
/// [`HerderError::Rebalancing`].
pub const REBALANCE_WAIT: Duration = Duration::from_secs(10);

/// What `GET /connectors/{c}` shows: the config and the current task ids.
#[derive(Debug, Clone)]
pub struct ConnectorInfo {
    pub name: String,
    pub config: ConfigMap,
    pub tasks: Vec<ConnectorTaskId>,
    /// `source`, `sink` or `unknown`.
    pub connector_type: &'static str,
}

/// The outcome of a `PUT .../config`.
#[derive(Debug)]
pub struct PutOutcome {
    pub created: bool,
    pub info: ConnectorInfo,
}

fn mismatched_name(found: &str, name: &str) -> HerderError {
    HerderError::BadRequest(format!(
        "Connector name configuration ({found}) doesn't match connector name in the URL ({name})"
    ))
}

/// Sets `name` in `config`, refusing a different `name` inside it.
fn with_name(mut config: ConfigMap, name: &str) -> Result<ConfigMap, HerderError> {
    if let Some(n) = config.get(NAME_CONFIG)
        && n != name
    {
        return Err(mismatched_name(n, name));
    }
    config.insert(NAME_CONFIG.to_owned(), name.to_owned());
    Ok(config)
}

impl HerderHandle {
    /// The connector's config and tasks from the latest snapshot.
    pub fn connector_info(&self, name: &str) -> Option<ConnectorInfo> {
        let snapshot = self.config_store.snapshot();
        let config = snapshot.connector_config(name)?.clone();
        Some(ConnectorInfo {
            name: name.to_owned(),
            connector_type: self.connector_type(&config),
            tasks: snapshot.tasks(name),
            config,
        })
    }

    /// Waits (bounded by [`REBALANCE_WAIT`]) until no rebalance is in progress.
    pub async fn await_rebalance(&self) -> Result<(), HerderError> {
        let deadline = Instant::now() + REBALANCE_WAIT;
        loop {
            if !self.view.read().await.rebalancing {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(HerderError::Rebalancing);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `Ok` on the leader once no rebalance is in progress (waiting for one, bounded); who
    /// to ask otherwise.
    async fn require_leader(&self) -> Result<(), HerderError> {
        self.await_rebalance().await?;
        let v = self.view.read().await;
        if v.is_leader {
            Ok(())
        } else {
            Err(HerderError::NotLeader {
                leader_url: v.leader_url.clone(),
            })
        }
    }

    /// Runs `f` on the request queue once this worker is known to lead (after any rebalance
    /// in progress); [`HerderError::NotLeader`] otherwise.
    async fn on_leader<T, F>(&self, f: F) -> Result<T, HerderError>
    where
        T: Send + 'static,
        F: FnOnce(HerderHandle) -> BoxFuture<'static, Result<T, HerderError>> + Send + 'static,
    {
        // Waiting here first keeps a rebalance from holding the queue.
        self.await_rebalance().await?;
        self.serialised(move |h| {
            Box::pin(async move {
                h.require_leader().await?;
                f(h).await
            })
        })
        .await
    }

    /// Reads the config topic to its end.
    async fn refresh(&self) -> Result<(), HerderError> {
        Ok(self.config_store.refresh(REFRESH_TIMEOUT).await?)
    }

    /// The connector's config after reading the config topic to its end.
    async fn existing_config(
        &self,
        name: &str,
        not_found: impl FnOnce() -> String,
    ) -> Result<ConfigMap, HerderError> {
        self.refresh().await?;
        self.config_store
            .snapshot()
            .connector_config(name)
            .cloned()
            .ok_or_else(|| HerderError::NotFound(not_found()))
    }

    /// Validates and refuses an invalid config with Connect's message.
    fn validate_or_reject(&self, config: &ConfigMap) -> Result<(), HerderError> {
        let (infos, plugin_type) = self
            .validate(config)
            .map_err(|e| HerderError::BadRequest(e.message().to_owned()))?;
        if infos.error_count > 0 {
            return Err(HerderError::BadRequest(
                infos.invalid_config_message(plugin_type.as_str()),
            ));
        }
        Ok(())
    }

    /// `POST /connectors` (leader): validates, then creates the connector unless one of that
    /// name exists.
    pub async fn create_connector(
        &self,
        name: &str,
        config: ConfigMap,
        initial_state: Option<TargetState>,
    ) -> Result<ConnectorInfo, HerderError> {
        let config = with_name(config, name)?;
        self.validate_or_reject(&config)?;
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                h.refresh().await?;
                if h.config_store.snapshot().contains(&name) {
                    return Err(HerderError::AlreadyExists(format!(
                        "Connector {name} already exists"
                    )));
                }
                h.config_store
                    .put_connector_config(&name, &config, initial_state)
                    .await?;
                Ok(ConnectorInfo {
                    connector_type: h.connector_type(&config),
                    name,
                    config,
                    tasks: Vec::new(),
                })
            })
        })
        .await
    }

    /// On the leader, once the config topic is read to its end: the connector's info when its
    /// stored config is `config` already. Such a `PUT` is answered without a write (which every
    /// worker would read, and on which Apache's worker restarts the connector) and without the
    /// request queue, so automation that re-applies every connector's config in a loop
    /// disturbs nothing. A write acknowledged before this call is visible to it (the leader
    /// reads each of its writes back before answering, and the read to the end covers any
    /// other), so the answer is never older than a write the client has seen answered.
    async fn unchanged(
        &self,
        name: &str,
        config: &ConfigMap,
    ) -> Result<Option<ConnectorInfo>, HerderError> {
        self.require_leader().await?;
        self.refresh().await?;
        if self.config_store.snapshot().connector_config(name) != Some(config) {
            return Ok(None);
        }
        Ok(self.connector_info(name))
    }

    /// `PUT /connectors/{c}/config` (leader): validates, then creates or replaces the config.
    pub async fn put_connector_config(
        &self,
        name: &str,
        config: ConfigMap,
    ) -> Result<PutOutcome, HerderError> {
        let config = with_name(config, name)?;
        self.validate_or_reject(&config)?;
        if let Some(info) = self.unchanged(name, &config).await? {
            return Ok(PutOutcome {
                created: false,
                info,
            });
        }
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                h.refresh().await?;
                let created = !h.config_store.snapshot().contains(&name);
                h.config_store
                    .put_connector_config(&name, &config, None)
                    .await?;
                let info = h.connector_info(&name).unwrap_or(ConnectorInfo {
                    connector_type: h.connector_type(&config),
                    name,
                    config,
                    tasks: Vec::new(),
                });
                Ok(PutOutcome { created, info })
            })
        })
        .await
    }

    /// `PATCH /connectors/{c}/config` (leader): applies the patch (`None` removes a key) to
    /// the current config, validates the result and writes it.
    pub async fn patch_connector_config(
        &self,
        name: &str,
        patch: Vec<(String, Option<String>)>,
    ) -> Result<ConnectorInfo, HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                let mut config = h
                    .existing_config(&name, || format!("Connector {name} not found"))
                    .await?;
                for (k, v) in patch {
                    match v {
                        Some(v) => config.insert(k, v),
                        None => config.remove(&k),
                    };
                }
                if let Some(n) = config.get(NAME_CONFIG).filter(|n| *n != &name) {
                    return Err(mismatched_name(n, &name));
                }
                h.validate_or_reject(&config)?;
                // A patch that changes nothing writes nothing (see `unchanged`).
                if h.config_store.snapshot().connector_config(&name) != Some(&config) {
                    h.config_store
                        .put_connector_config(&name, &config, None)
                        .await?;
                }
                h.connector_info(&name)
                    .ok_or_else(|| HerderError::Failed(format!("connector {name} vanished")))
            })
        })
        .await
    }

    /// `DELETE /connectors/{c}` (leader): removes the config, then the statuses.
    pub async fn delete_connector(&self, name: &str) -> Result<(), HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                h.existing_config(&name, || format!("Connector {name} not found"))
                    .await?;
                let tasks = h.config_store.snapshot().task_count(&name);
                h.config_store.remove_connector_config(&name).await?;
                if let Err(e) = h.status_store.delete_connector(&name, tasks).await {
                    tracing::warn!(connector = %name, error = %e, "failed to remove statuses of deleted connector");
                }
                Ok(())
            })
        })
        .await
    }

    /// `POST /connectors/{c}/restart` (leader): records the restart request; every worker
    /// restarts what it runs of the connector.
    pub async fn restart_connector(&self, request: RestartRequest) -> Result<(), HerderError> {
        self.on_leader(move |h| {
            Box::pin(async move {
                let name = request.connector.clone();
                h.existing_config(&name, || format!("Unknown connector: {name}"))
                    .await?;
                Ok(h.config_store.put_restart_request(&request).await?)
            })
        })
        .await
    }

    /// `POST /connectors/{c}/tasks/{t}/restart`: the worker running the task restarts it;
    /// elsewhere the answer is [`HerderError::NotOwner`] with the owner's URL.
    pub async fn restart_task(&self, id: ConnectorTaskId) -> Result<(), HerderError> {
        self.await_rebalance().await?;
        self.serialised(move |h| {
            Box::pin(async move {
                let name = id.connector.clone();
                h.existing_config(&name, || format!("Unknown connector: {name}"))
                    .await?;
                if h.config_store.snapshot().task_config(&id).is_none() {
                    return Err(HerderError::NotFound(format!("Unknown task: {id}")));
                }
                // The status topic says which worker runs the task.
                let (me, scheme) = {
                    let v = h.view.read().await;
                    let scheme = v
                        .worker_url
                        .split("://")
                        .next()
                        .unwrap_or("http")
                        .to_owned();
                    (v.worker_id.clone(), scheme)
                };
                let owner = h
                    .status_store
                    .task_status(&id)
                    .filter(|t| t.state != ConnectorState::Unassigned && !t.worker_id.is_empty())
                    .map(|t| t.worker_id);
                if owner.as_deref() != Some(me.as_str()) {
                    return Err(HerderError::NotOwner {
                        owner_url: owner.map(|o| format!("{scheme}://{o}/")),
                    });
                }
                h.commands
                    .send(HerderCommand::RestartTask(id))
                    .map_err(|_| HerderError::Stopped)
            })
        })
        .await
    }

    /// `PUT /connectors/{c}/pause` and `/resume`: written by whichever worker receives them,
    /// as in Connect.
    pub async fn set_target_state(
        &self,
        name: &str,
        state: TargetState,
    ) -> Result<(), HerderError> {
        let name = name.to_owned();
        self.serialised(move |h| {
            Box::pin(async move {
                h.existing_config(&name, || format!("Unknown connector {name}"))
                    .await?;
                Ok(h.config_store.put_target_state(&name, state).await?)
            })
        })
        .await
    }

    /// `PUT /connectors/{c}/stop` (leader), in Connect's order: an empty task config set
    /// first, then the STOPPED target state.
    pub async fn stop_connector(&self, name: &str) -> Result<(), HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                h.existing_config(&name, || format!("Unknown connector {name}"))
                    .await?;
                h.config_store.put_task_configs(&name, &[]).await?;
                h.config_store
                    .put_target_state(&name, TargetState::Stopped)
                    .await?;
                h.refresh().await?;
                // Apache's standalone herder answers once the connector and its tasks have
                // stopped (their last offsets flushed), so an offsets change right after the
                // stop is not overwritten by a stopping task; the distributed one answers once
                // the stop is written, as here.
                if h.standalone {
                    let grace = h.config.task_shutdown_graceful_timeout * 2 + REFRESH_TIMEOUT;
                    if !h.applied(grace).await {
                        tracing::warn!(connector = %name, "the connector's tasks did not stop in time");
                    }
                }
                Ok(())
            })
        })
        .await
    }

    /// Writes a connector's task configs (leader): the internal `POST /connectors/{c}/tasks`
    /// and this worker's own connectors both come here.
    pub async fn put_task_configs(
        &self,
        name: &str,
        configs: Vec<ConfigMap>,
    ) -> Result<(), HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                h.existing_config(&name, || format!("Connector {name} not found"))
                    .await?;
                if h.config_store.snapshot().target_state(&name) == Some(TargetState::Stopped)
                    && !configs.is_empty()
                {
                    return Err(HerderError::BadRequest(format!(
                        "Cannot submit non-empty set of task configs for stopped connector {name}"
                    )));
                }
                Ok(h.config_store.put_task_configs(&name, &configs).await?)
            })
        })
        .await
    }

    /// One zombie-fencing round for a source connector's tasks (leader). Not queued: a round
    /// waits on brokers, and rounds of one connector are serialised by the fencing itself.
    pub async fn fence_zombies(&self, name: &str) -> Result<(), HerderError> {
        self.require_leader().await?;
        let config = self
            .existing_config(name, || format!("Connector {name} not found"))
            .await?;
        if self.connector_type(&config) != "source" {
            return Err(HerderError::BadRequest(format!(
                "Connector {name} is not a source connector"
            )));
        }
        fencing::fence_zombies(&self.config_store, &self.config, name)
            .await
            .map_err(HerderError::Failed)
    }

    /// `GET /connectors/{c}/offsets`: any worker answers.
    pub async fn connector_offsets(
        &self,
        name: &str,
    ) -> Result<Vec<serde_json::Value>, HerderError> {
        let config = self
            .existing_config(name, || format!("Connector {name} not found"))
            .await?;
        let is_sink = self.connector_type(&config) == "sink";
        Ok(offsets_admin::read(&self.config, &self.offset_store, name, &config, is_sink).await?)
    }

    /// `PATCH /connectors/{c}/offsets` (leader, connector stopped); returns the message.
    pub async fn alter_offsets(
        &self,
        name: &str,
        entries: Vec<OffsetEntry>,
    ) -> Result<&'static str, HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                let config = h.stopped_connector_config(&name).await?;
                let connector = h.connector_instance(&config)?;
                let offsets = offsets_admin::parse(&connector, &entries)?;
                let config = h.fence_before_modifying(&name, &connector, config).await?;
                Ok(offsets_admin::alter(
                    &h.config,
                    &h.offset_store,
                    &name,
                    &config,
                    &connector,
                    offsets,
                )
                .await?)
            })
        })
        .await
    }

    /// `DELETE /connectors/{c}/offsets` (leader, connector stopped); returns the message.
    pub async fn reset_offsets(&self, name: &str) -> Result<&'static str, HerderError> {
        let name = name.to_owned();
        self.on_leader(move |h| {
            Box::pin(async move {
                let config = h.stopped_connector_config(&name).await?;
                let connector = h.connector_instance(&config)?;
                let config = h.fence_before_modifying(&name, &connector, config).await?;
                Ok(
                    offsets_admin::reset(&h.config, &h.offset_store, &name, &config, &connector)
                        .await?,
                )
            })
        })
        .await
    }

    /// `PUT /admin/loggers/{l}?scope=cluster`: every worker applies it from the config topic.
    pub async fn set_cluster_logger_level(
        &self,
        namespace: &str,
        level: &str,
    ) -> Result<(), HerderError> {
        let (namespace, level) = (namespace.to_owned(), level.to_ascii_uppercase());
        self.serialised(move |h| {
            Box::pin(async move { Ok(h.config_store.put_logger_level(&namespace, &level).await?) })
        })
        .await
    }

    /// `PUT /connectors/{c}/topics/reset`: forgets the connector's active topics.
    pub async fn reset_active_topics(&self, name: &str) -> Result<(), HerderError> {
        Ok(self.status_store.reset_topics(name).await?)
    }

    fn connector_instance(&self, config: &ConfigMap) -> Result<ConnectorInstance, HerderError> {
        let class = config
            .get(connect_api::config::connector::CONNECTOR_CLASS_CONFIG)
            .map(String::as_str)
            .unwrap_or_default();
        self.registry
            .create_connector(class)
            .map_err(|e| HerderError::Failed(e.message().to_owned()))
    }

    /// The connector's config once it is known to be stopped with no tasks (after reading the
    /// config topic to the end).
    async fn stopped_connector_config(&self, name: &str) -> Result<ConfigMap, HerderError> {
        let config = self
            .existing_config(name, || format!("Connector {name} not found"))
            .await?;
        let snapshot = self.config_store.snapshot();
        if snapshot.target_state(name) != Some(TargetState::Stopped)
            || snapshot.task_count(name) > 0
        {
            return Err(HerderError::BadRequest(format!(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
            )));
        }
        Ok(config)
    }

    /// Under exactly-once, fences a source connector's earlier task generations (so none can
    /// commit offsets afterwards), then checks again that it is stopped; returns its config.
    async fn fence_before_modifying(
        &self,
        name: &str,
        connector: &ConnectorInstance,
        config: ConfigMap,
    ) -> Result<ConfigMap, HerderError> {
        if self.config.exactly_once_source_support != ExactlyOnceSourceSupport::Enabled
            || !matches!(connector, ConnectorInstance::Source(_))
        {
            return Ok(config);
        }
        tracing::debug!(
            connector = name,
            "zombie fencing before modifying the offsets of a source connector"
        );
        fencing::fence_zombies(&self.config_store, &self.config, name)
            .await
            .map_err(|e| {
                HerderError::Failed(format!(
                    "Failed to perform zombie fencing for source connector prior to modifying offsets: {e}"
                ))
            })?;
        self.stopped_connector_config(name).await
    }
}
