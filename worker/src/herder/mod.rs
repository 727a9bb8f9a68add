//! The distributed herder: one state machine per worker that turns group assignments, config
//! topic changes and target states into running connectors and tasks.
//!
//! ```text
//!   group member ──Assigned/RebalanceStarted/MembershipLost──┐
//!   config topic ──ConfigUpdate (connector, tasks, target)───┼──> herder loop ──> reconcile()
//!   connectors  ──Reconfigure(name)──────────────────────────┘         │
//!                                                                      ├─ start/stop connectors and tasks
//!                                                                      ├─ regenerate task configs
//!                                                                      └─ leader: rejoin when the work changed
//! ```
//!
//! Changes asked of the cluster (REST, the herder's own task configs) go through
//! [`HerderHandle`]'s typed API ([`api`]): one request queue per worker, leadership checked
//! there, [`HerderError`] back.
//!
//! Every event ends in [`reconcile`](Herder::reconcile), which compares what should run here
//! (the assignment, read against the latest config snapshot) with what runs, and fixes the
//! difference. It is idempotent, so a missed or repeated event costs nothing but a pass.
//!
//! # Guarantees
//!
//! - Work starts only once the config snapshot has reached the assignment's config offset;
//!   a worker that cannot catch up within `worker.sync.timeout.ms` rejoins instead.
//! - Revoked work is stopped (offsets committed, status written) before this worker rejoins,
//!   so under the cooperative protocols no task runs on two workers at once.
//! - On `MembershipLost` everything stops at once: another worker may already own it.
//!
//! # Errors
//!
//! Connector and task failures are statuses, never herder failures. A fatal group error ends
//! the loop and the worker exits non-zero.

pub mod api;
mod error;
mod fencing;
mod gate;
mod handle;
mod heal;
pub mod session_key;
pub mod stage;
mod to_leader;
mod validate;
mod validate_converters;
mod validate_versions;
mod view;

pub use api::{ConnectorInfo, HerderError, PutOutcome};
pub use handle::{HandleParts, HerderCommands, HerderHandle};
pub use stage::WorkerStage;
pub use validate::{BOUNDARIES_UNSUPPORTED, EOS_NOT_ENABLED, EOS_NOT_IMPLEMENTED, EOS_UNSUPPORTED};
pub use view::HerderView;

use handle::HerderCommand;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use connect_api::ConfigMap;
use connect_api::config::TasksMax;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::cluster::{
    self, ClusterConfigSnapshot, ConnectProtocolVersion, GroupEvent, GroupHandle,
};
use crate::config::{ExactlyOnceSourceSupport, WorkerConfig};
use crate::metrics;
use crate::runtime::TaskStatusListener;
use crate::runtime::connector::ConnectorRequest;
use crate::runtime::ledger::Work;
use crate::runtime::worker::Worker;
use crate::storage::{
    ClusterConfigState, ConfigBackingStore, ConfigUpdate, ConnectorTaskId, RestartRequest,
    StatusBackingStore, TargetState,
};

/// How often reconcile runs without any event (retries of failed task-config writes, etc.).
const RECONCILE_INTERVAL: Duration = Duration::from_secs(2);

pub struct Herder {
    config: Arc<WorkerConfig>,
    config_store: Arc<ConfigBackingStore>,
    status_store: Arc<StatusBackingStore>,
    worker: Worker,
    member: GroupHandle,
    events: mpsc::Receiver<GroupEvent>,
    member_snapshot: watch::Sender<Arc<ClusterConfigSnapshot>>,
    config_updates: broadcast::Receiver<ConfigUpdate>,
    connector_requests: mpsc::UnboundedReceiver<ConnectorRequest>,
    commands: mpsc::UnboundedReceiver<HerderCommand>,
    handle: HerderHandle,
    /// `owned_tasks`, shared with the exactly-once gate's post-producer check.
    shared_owned_tasks: Arc<std::sync::Mutex<BTreeSet<ConnectorTaskId>>>,
    /// The leader's privileged (transactional) config writer needs claiming.
    needs_write_privileges: bool,
    /// What the group assigned to this worker.
    owned_connectors: BTreeSet<String>,
    owned_tasks: BTreeSet<ConnectorTaskId>,
    /// Whether an assignment has been applied since the last rebalance started.
    assigned: bool,
    /// The configs running work was started with, to notice changes.
    applied_connector_configs: BTreeMap<String, ConfigMap>,
    /// With the connector's task-config generation: a new generation restarts every task of
    /// the connector (as Connect does), which exactly-once fencing relies on.
    applied_task_configs: BTreeMap<ConnectorTaskId, (ConfigMap, Option<i32>)>,
    /// Connectors whose task configs must be (re)generated.
    needs_task_configs: BTreeSet<String>,
    rejoin_at: Option<Instant>,
    /// The config offset at which the connectors or their task counts last changed, until an
    /// assignment made from that offset (or a later one) covers it; the leader then rebalances.
    /// Kept until then, so a change seen mid-rebalance is not lost.
    work_changed_at: Option<i64>,
    /// The protocol the group settled on at the last assignment.
    protocol: ConnectProtocolVersion,
    /// Automatic restarts of failed work (`auto.restart.*`).
    healer: heal::Healer,
}

/// Why the herder loop ended on its own (the worker then exits non-zero).
#[derive(Debug, thiserror::Error)]
pub enum HerderFailure {
    #[error("group membership ended")]
    MembershipEnded,
    /// A fatal group error (e.g. the group's protocol does not match).
    #[error("{0}")]
    Group(String),
    #[error("config topic reader stopped")]
    ConfigReaderStopped,
}

/// Everything the herder is built from.
pub struct HerderParts {
    pub config: Arc<WorkerConfig>,
    pub config_store: Arc<ConfigBackingStore>,
    pub status_store: Arc<StatusBackingStore>,
    pub worker: Worker,
    pub connector_requests: mpsc::UnboundedReceiver<ConnectorRequest>,
    pub worker_url: String,
    pub commands: HerderCommands,
    /// The REST side's handle: task configs are published and fencing requested through it.
    pub handle: HerderHandle,
}

/// The leader's input: connector -> committed task count, at the snapshot's offset.
fn member_snapshot(state: &ClusterConfigState) -> ClusterConfigSnapshot {
    ClusterConfigSnapshot {
        offset: state.offset,
        connectors: state
            .connector_configs
            .keys()
            // An inconsistent connector's tasks must not run until new configs are committed.
            .map(|c| {
                let n = if state.is_inconsistent(c) {
                    0
                } else {
                    state.task_count(c).max(0) as u32
                };
                (c.clone(), n)
            })
            .collect(),
    }
}

impl Herder {
    /// Joins the group and returns the herder, ready to [`run`](Self::run).
    pub fn new(mut parts: HerderParts) -> Self {
        let shared_owned_tasks = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
        if parts.config.exactly_once_source_support == ExactlyOnceSourceSupport::Enabled {
            parts.worker.enable_exactly_once(Arc::new(gate::HerderGate {
                handle: parts.handle.clone(),
                owned_tasks: shared_owned_tasks.clone(),
            }));
        }
        let snapshot = Arc::new(member_snapshot(&parts.config_store.snapshot()));
        let (member_snapshot, snapshot_rx) = watch::channel(snapshot);
        let protocol = match parts.config.connect_protocol {
            crate::config::ConnectProtocol::Eager => ConnectProtocolVersion::Eager,
            crate::config::ConnectProtocol::Compatible => ConnectProtocolVersion::Compatible,
            crate::config::ConnectProtocol::Sessioned => ConnectProtocolVersion::Sessioned,
        };
        // A standalone worker is a group of one, always the leader, with no Kafka group; it
        // assigns as the cooperative protocols do.
        let (protocol, (member, events)) = if parts.handle.standalone {
            (
                ConnectProtocolVersion::Compatible,
                cluster::spawn_standalone_member(parts.worker_url, snapshot_rx),
            )
        } else {
            let membership = cluster::spawn_member(
                cluster::MembershipConfig {
                    bootstrap_servers: parts.config.bootstrap_servers.clone(),
                    group_id: parts.config.group_id.clone(),
                    session_timeout: parts.config.session_timeout,
                    rebalance_timeout: parts.config.rebalance_timeout,
                    heartbeat_interval: parts.config.heartbeat_interval,
                    protocol,
                    worker_url: parts.worker_url,
                    scheduled_rebalance_max_delay: parts.config.scheduled_rebalance_max_delay,
                    client_id: if parts.config.client_id.is_empty() {
                        format!("connect-{}", parts.worker.status().worker_id())
                    } else {
                        parts.config.client_id.clone()
                    },
                    security: parts.config.kafka_security.clone(),
                    live_work: parts
                        .handle
                        .transactions
                        .as_ref()
                        .map(|t| t.live_work())
                        .unwrap_or_default(),
                },
                snapshot_rx,
            );
            (protocol, membership)
        };
        let config_updates = parts.config_store.subscribe();
        let session_timeout = parts.config.session_timeout;
        Herder {
            config: parts.config,
            config_store: parts.config_store,
            status_store: parts.status_store,
            worker: parts.worker,
            member,
            events,
            member_snapshot,
            config_updates,
            connector_requests: parts.connector_requests,
            commands: parts.commands.0,
            handle: parts.handle,
            shared_owned_tasks,
            needs_write_privileges: false,
            owned_connectors: BTreeSet::new(),
            owned_tasks: BTreeSet::new(),
            assigned: false,
            applied_connector_configs: BTreeMap::new(),
            applied_task_configs: BTreeMap::new(),
            needs_task_configs: BTreeSet::new(),
            rejoin_at: None,
            work_changed_at: None,
            protocol,
            healer: heal::Healer::new(session_timeout),
        }
    }

    /// Runs until `shutdown` fires (then stops all work and leaves the group) or a fatal
    /// group error (returned).
    pub async fn run(mut self, shutdown: CancellationToken) -> Result<(), HerderFailure> {
        let mut tick = tokio::time::interval(RECONCILE_INTERVAL);
        self.handle.stage.begin(stage::STAGE_JOINING_GROUP);
        let outcome = loop {
            let rejoin_at = self.rejoin_at;
            let mut applied = None;
            tokio::select! {
                _ = shutdown.cancelled() => break Ok(()),
                ev = self.events.recv() => match ev {
                    None => break Err(HerderFailure::MembershipEnded),
                    Some(GroupEvent::Fatal(msg)) => break Err(HerderFailure::Group(msg)),
                    Some(ev) => self.on_group_event(ev).await,
                },
                upd = self.config_updates.recv() => match upd {
                    Ok(u) => self.on_config_update(u).await,
                    // Missed updates: reconcile against the snapshot covers them all.
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => break Err(HerderFailure::ConfigReaderStopped),
                },
                req = self.connector_requests.recv() => {
                    if let Some(ConnectorRequest::Reconfigure(name)) = req {
                        self.needs_task_configs.insert(name);
                    }
                }
                _ = async { tokio::time::sleep_until(rejoin_at.unwrap_or_else(Instant::now)).await }, if rejoin_at.is_some() => {
                    self.rejoin_at = None;
                    self.member.request_rejoin();
                }
                cmd = self.commands.recv() => {
                    match cmd {
                        Some(HerderCommand::RestartTask(id)) => self.restart_task(&id).await,
                        Some(HerderCommand::Ping(answer)) => {
                            let _ = answer.send(());
                        }
                        Some(HerderCommand::Apply(answer)) => applied = Some(answer),
                        None => {}
                    }
                }
                _ = tick.tick() => {}
            }
            self.reconcile().await;
            if let Some(answer) = applied {
                let _ = answer.send(());
            }
        };
        tracing::info!("herder stopping: stopping connectors and tasks, leaving the group");
        self.handle.stage.begin(stage::STAGE_SHUTTING_DOWN);
        self.handle.view.write().await.rebalancing = true;
        self.worker.stop_all().await;
        self.member.leave().await;
        outcome
    }

    async fn on_group_event(&mut self, ev: GroupEvent) {
        match ev {
            GroupEvent::RebalanceStarted => {
                tracing::info!("rebalance started");
                metrics::global().rebalance_started();
                self.handle.stage.begin(stage::STAGE_JOINING_GROUP);
                self.handle.view.write().await.rebalancing = true;
                self.assigned = false;
                if !self.protocol.is_cooperative() {
                    // Eager: everything is revoked at the start of every rebalance.
                    self.owned_connectors.clear();
                    self.owned_tasks.clear();
                    self.stop_unowned().await;
                }
            }
            GroupEvent::MembershipLost => {
                tracing::warn!("lost group membership; stopping all connectors and tasks");
                metrics::global().rebalance_started();
                self.handle.stage.begin(stage::STAGE_JOINING_GROUP);
                self.owned_connectors.clear();
                self.owned_tasks.clear();
                self.assigned = false;
                self.handle.view.write().await.rebalancing = true;
                self.stop_unowned().await;
            }
            GroupEvent::Assigned {
                generation,
                member_id,
                is_leader,
                assignment,
                leader_url,
                protocol,
            } => {
                tracing::info!(
                    generation, member_id = %member_id, is_leader, leader_url = %leader_url,
                    connectors = ?assignment.connectors, tasks = assignment.tasks.len(),
                    revoked_connectors = ?assignment.revoked_connectors, revoked_tasks = assignment.revoked_tasks.len(),
                    delay = assignment.delay, error = assignment.error, "assignment received"
                );
                {
                    let mut v = self.handle.view.write().await;
                    v.generation = generation;
                    v.is_leader = is_leader;
                    v.leader_url = Some(leader_url.clone()).filter(|u| !u.is_empty());
                }
                self.worker.status().set_generation(generation);
                self.protocol = protocol;
                // A (new) leader claims the config topic's transactional writer, fencing any
                // previous leader's writes; followers never write privileged records.
                self.needs_write_privileges = is_leader
                    && self.config.exactly_once_source_support
                        != ExactlyOnceSourceSupport::Disabled;
                if assignment.failed() {
                    // CONFIG_MISMATCH: catch up with the config topic, then try again.
                    let _ = self
                        .config_store
                        .refresh(self.config.worker_sync_timeout)
                        .await;
                    self.rejoin_at = Some(Instant::now() + Duration::from_millis(100));
                    return;
                }
                if !self.sync_config(assignment.config_offset).await {
                    tracing::warn!(
                        offset = assignment.config_offset,
                        "could not read the config topic up to the assignment's offset; rejoining"
                    );
                    self.rejoin_at = Some(
                        Instant::now()
                            + self
                                .config
                                .worker_unsync_backoff
                                .min(Duration::from_secs(5)),
                    );
                    return;
                }
                if protocol.is_cooperative() {
                    for c in &assignment.revoked_connectors {
                        self.owned_connectors.remove(c);
                    }
                    for t in &assignment.revoked_tasks {
                        self.owned_tasks.remove(t);
                    }
                    self.owned_connectors
                        .extend(assignment.connectors.iter().cloned());
                    self.owned_tasks.extend(assignment.tasks.iter().cloned());
                } else {
                    self.owned_connectors = assignment.connectors.clone();
                    self.owned_tasks = assignment.tasks.iter().cloned().collect();
                }
                // Revoked work must be stopped before the group hands it to someone else.
                self.stop_unowned().await;
                self.assigned = true;
                if self
                    .work_changed_at
                    .is_some_and(|at| assignment.config_offset >= at)
                {
                    self.work_changed_at = None;
                }
                self.handle.view.write().await.rebalancing = false;
                metrics::global().rebalance_completed(generation, &leader_url);
                self.handle.stage.complete();
                if assignment.has_revocations() {
                    self.member.request_rejoin();
                } else if assignment.delay > 0 {
                    self.rejoin_at =
                        Some(Instant::now() + Duration::from_millis(assignment.delay as u64));
                }
            }
            GroupEvent::Fatal(_) => {}
        }
    }

    /// Reads the config topic until the snapshot covers `offset`.
    async fn sync_config(&self, offset: i64) -> bool {
        if self.config_store.snapshot().offset >= offset {
            return true;
        }
        let _ = self
            .config_store
            .refresh(self.config.worker_sync_timeout)
            .await;
        self.config_store.snapshot().offset >= offset
    }

    async fn on_config_update(&mut self, update: ConfigUpdate) {
        match update {
            ConfigUpdate::RestartRequested(req) => self.restart(&req).await,
            // `PUT /admin/loggers/{name}?scope=cluster`: every worker applies it.
            ConfigUpdate::LoggerLevelChanged { namespace, level } => {
                if let Err(e) = self
                    .handle
                    .log_levels
                    .apply_cluster_logger_level(&namespace, &level)
                {
                    tracing::warn!(namespace = %namespace, level = %level, error = %e, "failed to apply a cluster-wide log level");
                }
            }
            ConfigUpdate::ConnectorConfigUpdated(name)
                if self.worker.is_running_connector(&name) =>
            {
                self.needs_task_configs.insert(name);
            }
            // Apache asks a connector for its task configs whenever its target state becomes
            // STARTED: a stop and a resume that land in one reconcile leave the connector running
            // without ever stopping it, and its (empty) task configs must be generated again.
            ConfigUpdate::TargetStateChanged(name)
                if self.worker.is_running_connector(&name)
                    && self.config_store.snapshot().target_state(&name)
                        == Some(TargetState::Started) =>
            {
                self.needs_task_configs.insert(name);
            }
            _ => {}
        }
    }

    /// Stops what runs here but is no longer owned (or no longer exists).
    async fn stop_unowned(&mut self) {
        *self
            .shared_owned_tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = self.owned_tasks.clone();
        let snapshot = self.config_store.snapshot();
        let tasks: Vec<ConnectorTaskId> = self
            .worker
            .running_tasks()
            .into_iter()
            .filter(|t| !self.owned_tasks.contains(t) || snapshot.task_config(t).is_none())
            .collect();
        if !tasks.is_empty() {
            tracing::info!(tasks = ?tasks, "stopping tasks");
            self.worker.stop_tasks(&tasks).await;
            for t in &tasks {
                self.applied_task_configs.remove(t);
            }
        }
        for c in self.worker.running_connectors() {
            if !self.owned_connectors.contains(&c) || !snapshot.contains(&c) {
                tracing::info!(connector = %c, "stopping connector");
                self.worker.stop_connector(&c).await;
                self.applied_connector_configs.remove(&c);
                self.needs_task_configs.remove(&c);
            }
        }
    }

    /// Brings running work in line with the assignment and the latest config snapshot.
    async fn reconcile(&mut self) {
        let snapshot = self.config_store.snapshot();
        self.publish_member_snapshot(&snapshot);
        if !self.assigned {
            return;
        }
        if self.work_changed_at.take().is_some() && self.handle.view.read().await.is_leader {
            tracing::info!("connectors or task counts changed; leader requests a rebalance");
            self.member.request_rejoin();
        }
        self.leader_duties().await;
        self.stop_unowned().await;

        // Connectors: start owned ones, restart on config change, apply target states.
        for name in self.owned_connectors.clone() {
            let Some(config) = snapshot.connector_config(&name) else {
                continue;
            };
            let target = snapshot.target_state(&name).unwrap_or_default();
            match self.applied_connector_configs.get(&name) {
                Some(applied) if applied == config => self.worker.set_target_state(&name, target),
                Some(_) => {
                    tracing::info!(connector = %name, "connector config changed; restarting it");
                    self.worker.stop_connector(&name).await;
                    self.worker.start_connector(&name, config, target);
                    self.applied_connector_configs
                        .insert(name.clone(), config.clone());
                }
                None => {
                    self.worker.start_connector(&name, config, target);
                    self.applied_connector_configs
                        .insert(name.clone(), config.clone());
                }
            }
            if target == TargetState::Stopped && snapshot.task_count(&name) > 0 {
                self.needs_task_configs.insert(name.clone());
            }
        }

        // Tasks: start owned ones with their committed configs; restart on change.
        for id in self.owned_tasks.clone() {
            if id.task as usize >= snapshot.task_count(&id.connector) as usize {
                // The connector's task configs shrank (stopped, or fewer tasks): the stale config
                // of this task must not start it again (an exactly-once start would fence and
                // count the generation); the rebalance the leader requested revokes it.
                if self.applied_task_configs.remove(&id).is_some() {
                    tracing::info!(task = %id, "the connector no longer has this task; stopping it");
                    self.worker.stop_tasks(std::slice::from_ref(&id)).await;
                }
                continue;
            }
            let (Some(task_config), Some(conn_config)) = (
                snapshot.task_config(&id),
                snapshot.connector_config(&id.connector),
            ) else {
                continue;
            };
            let generation = snapshot.task_config_generation(&id.connector);
            match self.applied_task_configs.get(&id) {
                Some((applied, g)) if applied == task_config && *g == generation => {}
                Some(_) => {
                    tracing::info!(task = %id, "new task configs for the connector; restarting the task");
                    self.worker.stop_tasks(std::slice::from_ref(&id)).await;
                    self.start_task(&id, task_config, conn_config, &snapshot)
                        .await;
                }
                None => {
                    self.start_task(&id, task_config, conn_config, &snapshot)
                        .await
                }
            }
        }
        // Target states of tasks whose connector runs elsewhere.
        for id in &self.owned_tasks {
            if let Some(t) = snapshot.target_state(&id.connector) {
                self.worker.set_target_state(&id.connector, t);
            }
        }

        for name in std::mem::take(&mut self.needs_task_configs) {
            if let Err(e) = self.regenerate_task_configs(&name, &snapshot).await {
                tracing::warn!(connector = %name, error = %e, "failed to update task configs; will retry");
                self.needs_task_configs.insert(name);
            }
        }
        self.heal(&snapshot).await;
    }

    /// Restarts the failed connectors and tasks of this worker whose backoff is over
    /// (`auto.restart.*`, see [`heal`]).
    async fn heal(&mut self, snapshot: &ClusterConfigState) {
        let (connectors, tasks) = (&self.owned_connectors, &self.owned_tasks);
        self.healer.retain(|w| match w {
            Work::Connector(c) => connectors.contains(c),
            Work::Task(id) => tasks.contains(id),
        });
        let now = std::time::Instant::now();
        let status = self.worker.status().clone();
        let base = &self.config.auto_restart;
        // A connector's own `auto.restart.*` keys apply to it and its tasks (validated at
        // create; a config written elsewhere with invalid ones gets the worker's policy).
        let policy = |connector: &str| {
            snapshot
                .connector_config(connector)
                .and_then(|c| base.with_overrides(c).ok())
                .unwrap_or_else(|| base.clone())
        };
        let mut due = Vec::new();
        // Work whose config is gone (a deleted connector) waits for the next assignment.
        for name in &self.owned_connectors {
            if snapshot.connector_config(name).is_none() {
                continue;
            }
            let work = Work::Connector(name.clone());
            let local = status.local_state(&work);
            if self
                .healer
                .due(&work, local.as_ref(), &policy(name), now, &status)
            {
                due.push(work);
            }
        }
        for id in &self.owned_tasks {
            if snapshot.task_config(id).is_none()
                || snapshot.connector_config(&id.connector).is_none()
            {
                continue;
            }
            let work = Work::Task(id.clone());
            let local = status.local_state(&work);
            if self
                .healer
                .due(&work, local.as_ref(), &policy(&id.connector), now, &status)
            {
                due.push(work);
            }
        }
        for work in due {
            match work {
                Work::Connector(name) => self.restart_connector_here(&name, snapshot).await,
                Work::Task(id) => self.restart_task_here(&id, snapshot).await,
            }
        }
    }

    /// Claiming the privileged config writer and rotating the session key.
    async fn leader_duties(&mut self) {
        if !self.handle.view.read().await.is_leader {
            return;
        }
        // A failed transactional write (e.g. a broker died mid-commit) drops the writer and
        // leaves its transaction open, which stalls read_committed readers of the config topic
        // until it is aborted: claiming again (init_transactions) aborts it at once.
        if self.config.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled
            && !self.config_store.has_write_privileges().await
        {
            self.needs_write_privileges = true;
        }
        if self.needs_write_privileges {
            match self.config_store.claim_write_privileges().await {
                Ok(()) => {
                    tracing::info!("claimed write privileges on the config topic");
                    self.needs_write_privileges = false;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "failed to claim write privileges on the config topic; will retry")
                }
            }
        }
        if self.handle.standalone {
            // No other worker signs requests to this one: no session key (Apache's
            // StandaloneHerder has none).
            return;
        }
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        if let Err(e) =
            session_key::maybe_rotate_session_key(&self.config_store, &self.config, now_ms).await
        {
            tracing::warn!(error = %e, "failed to write a session key; will retry");
            self.needs_write_privileges =
                self.config.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled;
        }
    }

    /// Publishes what the group protocol advertises (config offset, connectors and task
    /// counts) and notes a change of the work to assign, for `reconcile` to rebalance on.
    fn publish_member_snapshot(&mut self, snapshot: &ClusterConfigState) {
        let next = member_snapshot(snapshot);
        let changed_work = {
            let cur = self.member_snapshot.borrow();
            cur.connectors != next.connectors
        };
        let changed = changed_work || self.member_snapshot.borrow().offset != next.offset;
        if changed_work {
            self.work_changed_at = Some(next.offset);
        }
        if changed {
            self.member_snapshot.send_replace(Arc::new(next));
        }
    }

    /// Asks a connector running here for its task configs and writes them if they changed.
    async fn regenerate_task_configs(
        &mut self,
        name: &str,
        snapshot: &ClusterConfigState,
    ) -> Result<(), String> {
        if !self.worker.is_running_connector(name) || !self.owned_connectors.contains(name) {
            return Ok(());
        }
        let Some(config) = snapshot.connector_config(name) else {
            return Ok(());
        };
        let target = snapshot.target_state(name).unwrap_or_default();
        let configs = match target {
            // A stopped connector has no tasks (Connect writes an empty task config set).
            TargetState::Stopped => Vec::new(),
            // A paused connector keeps its tasks as they are.
            TargetState::Paused => return Ok(()),
            TargetState::Started => {
                let tasks_max = TasksMax::parse(config).map_err(|e| e.to_string())?;
                self.worker
                    .connector_task_configs(name, config, tasks_max)
                    .await
                    .map_err(|e| e.to_string())?
            }
        };
        let current: Vec<ConfigMap> = snapshot
            .tasks(name)
            .iter()
            .filter_map(|id| snapshot.task_config(id).cloned())
            .collect();
        if current == configs && !snapshot.is_inconsistent(name) {
            return Ok(());
        }
        tracing::info!(connector = %name, tasks = configs.len(), "writing task configs");
        let result = self
            .handle
            .submit_task_configs(name, configs)
            .await
            .map_err(|e| e.to_string());
        if result.is_err() && self.handle.view.read().await.is_leader {
            // A failed privileged write drops the transactional writer; claim it again.
            self.needs_write_privileges =
                self.config.exactly_once_source_support != ExactlyOnceSourceSupport::Disabled;
        }
        result
    }

    /// Restarts one task if it is owned here (`POST .../tasks/{t}/restart`); earlier automatic
    /// attempts are forgotten.
    async fn restart_task(&mut self, id: &ConnectorTaskId) {
        if !self.owned_tasks.contains(id) {
            tracing::warn!(task = %id, "restart requested for a task this worker does not run");
            return;
        }
        self.healer.reset(&Work::Task(id.clone()));
        let snapshot = self.config_store.snapshot();
        self.restart_task_here(id, &snapshot).await;
    }

    /// Stops and starts a task owned here with its committed config.
    async fn restart_task_here(&mut self, id: &ConnectorTaskId, snapshot: &ClusterConfigState) {
        let (Some(task_config), Some(config)) = (
            snapshot.task_config(id),
            snapshot.connector_config(&id.connector),
        ) else {
            return;
        };
        tracing::info!(task = %id, "restarting task");
        self.worker.stop_tasks(std::slice::from_ref(id)).await;
        self.start_task(id, task_config, config, snapshot).await;
    }

    /// Stops and starts a connector owned here with its committed config.
    async fn restart_connector_here(&mut self, name: &str, snapshot: &ClusterConfigState) {
        let Some(config) = snapshot.connector_config(name).cloned() else {
            return;
        };
        let target = snapshot.target_state(name).unwrap_or_default();
        tracing::info!(connector = %name, "restarting connector");
        self.worker.stop_connector(name).await;
        self.worker.start_connector(name, &config, target);
        self.applied_connector_configs
            .insert(name.to_owned(), config);
    }

    /// Starts a task with its committed config under the connector's current generation.
    async fn start_task(
        &mut self,
        id: &ConnectorTaskId,
        task_config: &ConfigMap,
        connector_config: &ConfigMap,
        snapshot: &ClusterConfigState,
    ) {
        let target = snapshot.target_state(&id.connector).unwrap_or_default();
        let generation = snapshot.task_config_generation(&id.connector);
        // Apache checks `tasks.max` again at task start: task configs written by another
        // implementation (or before `tasks.max` was lowered) may outnumber it.
        let num_tasks = usize::try_from(snapshot.task_count(&id.connector)).unwrap_or(0);
        match TasksMax::parse(connector_config).and_then(|t| t.check(&id.connector, num_tasks)) {
            Ok(warning) => {
                if let Some(w) = warning {
                    tracing::warn!(task = %id, "{w}");
                }
                self.worker
                    .start_task(
                        id.clone(),
                        task_config,
                        connector_config,
                        target,
                        generation,
                    )
                    .await;
            }
            Err(e) => {
                tracing::error!(task = %id, error = %e, "failed to start task");
                self.worker.status().on_failure(id, &e);
            }
        }
        self.applied_task_configs
            .insert(id.clone(), (task_config.clone(), generation));
    }

    /// Applies a restart request to the work owned here.
    async fn restart(&mut self, req: &RestartRequest) {
        let snapshot = self.config_store.snapshot();
        if snapshot.connector_config(&req.connector).is_none() {
            return;
        }
        let failed = |state: Option<crate::storage::ConnectorState>| {
            state == Some(crate::storage::ConnectorState::Failed)
        };
        if self.owned_connectors.contains(&req.connector)
            && (!req.only_failed
                || failed(
                    self.status_store
                        .connector_status(&req.connector)
                        .map(|s| s.state),
                ))
        {
            self.healer.reset(&Work::Connector(req.connector.clone()));
            self.restart_connector_here(&req.connector, &snapshot).await;
        }
        if req.include_tasks {
            let tasks: Vec<ConnectorTaskId> = self
                .owned_tasks
                .iter()
                .filter(|t| t.connector == req.connector)
                .filter(|t| {
                    !req.only_failed || failed(self.status_store.task_status(t).map(|s| s.state))
                })
                .cloned()
                .collect();
            for id in tasks {
                self.healer.reset(&Work::Task(id.clone()));
                self.restart_task_here(&id, &snapshot).await;
            }
        }
    }
}
