//! The group member: a background task that joins, syncs, heartbeats and rejoins, and tells the
//! herder what it was assigned. See the module map in `cluster/mod.rs` for the flow.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::assignor::{
    self, AssignContext, ClusterConfigSnapshot, IncrementalState, MemberInfo, Work,
};
use super::client::{ClientError, GroupClient, JoinResult, codes};
use super::protocol::{
    ConnectProtocolVersion, ConnectorTaskId, ExtendedAssignment, WorkerMetadata,
};
use crate::security::KafkaSecurity;

/// How this worker takes part in the group (the `DistributedConfig` keys that matter here).
#[derive(Debug, Clone)]
pub struct MembershipConfig {
    pub bootstrap_servers: String,
    pub group_id: String,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    pub heartbeat_interval: Duration,
    pub protocol: ConnectProtocolVersion,
    /// The advertised REST URL, sent to the leader and handed out as `leader_url`.
    pub worker_url: String,
    pub scheduled_rebalance_max_delay: Duration,
    pub client_id: String,
    /// `security.protocol`, `ssl.*`, `sasl.*`: TLS and SASL of every connection to the brokers.
    pub security: KafkaSecurity,
    /// Where the member publishes, while it leads, the tasks the group runs.
    pub live_work: LiveWork,
}

/// The tasks the group runs, as this worker last computed them as leader: what the members
/// reported running plus what the new assignment hands out (`None` while it does not lead).
/// A task lost with its worker is in neither until it is reassigned. The stuck-transaction
/// watchdog reads it to tell an orphaned transactional id from a running task's.
#[derive(Debug, Clone, Default)]
pub struct LiveWork(Arc<std::sync::Mutex<Option<BTreeSet<ConnectorTaskId>>>>);

impl LiveWork {
    pub fn tasks(&self) -> Option<BTreeSet<ConnectorTaskId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, tasks: Option<BTreeSet<ConnectorTaskId>>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = tasks;
    }
}

/// What the member reports to the herder, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupEvent {
    /// A rebalance began (JoinGroup about to be sent); in eager mode the herder must stop
    /// everything it runs before the assignment arrives.
    RebalanceStarted,
    /// SyncGroup completed. With `assignment.error != 0` (CONFIG_MISMATCH) nothing changed: the
    /// herder reads the config topic to the end and calls [`GroupHandle::request_rejoin`].
    /// Cooperative: stop `revoked_*`, start `connectors`/`tasks`, then rejoin if anything was
    /// revoked; rejoin after `delay` ms if it is positive. Eager: the assignment is complete.
    Assigned {
        generation: i32,
        member_id: String,
        is_leader: bool,
        assignment: ExtendedAssignment,
        leader_url: String,
        /// The protocol the group settled on (one eager member downgrades everyone).
        protocol: ConnectProtocolVersion,
    },
    /// The coordinator no longer knows this member (session expired, fenced generation): others
    /// may already own its work, so the herder must stop all connectors and tasks now.
    MembershipLost,
    /// The member cannot continue (authorization, unsupported broker, invalid config); the
    /// worker should exit.
    Fatal(String),
}

pub(super) enum Command {
    Rejoin,
    Leave(oneshot::Sender<()>),
}

/// The herder's handle on the member task. Dropping it makes the member leave the group.
#[derive(Debug)]
pub struct GroupHandle {
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) task: JoinHandle<()>,
}

impl GroupHandle {
    /// Rejoin the group at the next opportunity (after revocations, delays, config changes).
    pub fn request_rejoin(&self) {
        let _ = self.commands.send(Command::Rejoin);
    }

    /// Sends LeaveGroup (so the group rebalances now rather than after the session timeout)
    /// and stops the member task.
    pub async fn leave(&self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Leave(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    /// Stops the member without leaving the group, as a crash would: the coordinator expires
    /// it after the session timeout. For tests and abrupt shutdown.
    pub fn abort(&self) {
        self.task.abort();
    }

    /// Whether the member task has ended (left, aborted or fatal).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

/// Starts the member task. Events arrive on the returned receiver; the herder must keep
/// draining it (the member waits for room, which would delay heartbeats).
pub fn spawn_member(
    config: MembershipConfig,
    snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
) -> (GroupHandle, mpsc::Receiver<GroupEvent>) {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::channel(256);
    let request_timeout = config.session_timeout.max(Duration::from_secs(5));
    let client = match GroupClient::new(
        &config.bootstrap_servers,
        &config.client_id,
        &config.group_id,
        request_timeout,
        &config.security,
    ) {
        Ok(client) => client,
        Err(e) => {
            // Unusable TLS material or SASL settings: report it as the first event.
            let msg = e.to_string();
            tracing::error!(group = %config.group_id, error = %msg, "group membership failed");
            let task = tokio::spawn(async move {
                let _ = ev_tx.send(GroupEvent::Fatal(msg)).await;
                drop(cmd_rx);
            });
            return (
                GroupHandle {
                    commands: cmd_tx,
                    task,
                },
                ev_rx,
            );
        }
    };
    let member = Member {
        config,
        snapshot,
        events: ev_tx,
        client,
        member_id: String::new(),
        generation: -1,
        last_completed_generation: None,
        owned: Work::default(),
        last_assignment: None,
        leader_state: IncrementalState::default(),
        started: Instant::now(),
        last_heartbeat_ok: Instant::now(),
    };
    let task = tokio::spawn(member.run(cmd_rx));
    (
        GroupHandle {
            commands: cmd_tx,
            task,
        },
        ev_rx,
    )
}

struct Member {
    config: MembershipConfig,
    snapshot: watch::Receiver<Arc<ClusterConfigSnapshot>>,
    events: mpsc::Sender<GroupEvent>,
    client: GroupClient,
    member_id: String,
    generation: i32,
    last_completed_generation: Option<i32>,
    /// What this member runs: previous owned - revoked + newly assigned.
    owned: Work,
    last_assignment: Option<ExtendedAssignment>,
    leader_state: IncrementalState,
    started: Instant,
    /// When the coordinator last acknowledged us (heartbeat or completed sync).
    last_heartbeat_ok: Instant,
}

/// Why a join attempt ended without an assignment.
enum JoinError {
    /// Retry joining (after a short backoff).
    Retry(String),
    Fatal(String),
}

impl From<ClientError> for JoinError {
    fn from(e: ClientError) -> Self {
        if e.is_fatal() {
            JoinError::Fatal(e.to_string())
        } else {
            JoinError::Retry(e.to_string())
        }
    }
}

impl Member {
    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        let mut need_join = true;
        let mut backoff = Duration::from_millis(100);
        loop {
            if need_join {
                // A rejoin request during a join is remembered, not acted on: dropping an
                // in-flight JoinGroup would leave its connection mid-response.
                let mut rejoin_again = false;
                let joined = {
                    let join = self.join_and_sync();
                    tokio::pin!(join);
                    loop {
                        tokio::select! {
                            r = &mut join => break Ok(r),
                            cmd = commands.recv() => match cmd {
                                Some(Command::Rejoin) => rejoin_again = true,
                                Some(Command::Leave(done)) => break Err(Some(done)),
                                None => break Err(None),
                            },
                        }
                    }
                };
                let joined = match joined {
                    Ok(r) => r,
                    Err(done) => {
                        // The join's connection may hold a half-read response.
                        self.client.mark_coordinator_unknown();
                        self.leave().await;
                        if let Some(done) = done {
                            let _ = done.send(());
                        }
                        return;
                    }
                };
                match joined {
                    Ok(()) if rejoin_again => continue,
                    // The heartbeat loop below decides when to join next.
                    Ok(()) => {
                        backoff = Duration::from_millis(100);
                    }
                    Err(JoinError::Fatal(msg)) => {
                        tracing::error!(group = %self.config.group_id, error = %msg, "group membership failed");
                        let _ = self.events.send(GroupEvent::Fatal(msg)).await;
                        return;
                    }
                    Err(JoinError::Retry(msg)) => {
                        tracing::warn!(group = %self.config.group_id, error = %msg, "joining the group failed; retrying");
                        let leave = tokio::select! {
                            _ = tokio::time::sleep(backoff) => None,
                            cmd = commands.recv() => match cmd {
                                Some(Command::Rejoin) => None,
                                Some(Command::Leave(done)) => Some(Some(done)),
                                None => Some(None),
                            },
                        };
                        if let Some(done) = leave {
                            self.leave().await;
                            if let Some(done) = done {
                                let _ = done.send(());
                            }
                            return;
                        }
                        backoff = (backoff * 2).min(
                            self.config
                                .heartbeat_interval
                                .max(Duration::from_millis(200)),
                        );
                        continue;
                    }
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(self.config.heartbeat_interval) => {
                    need_join = self.heartbeat().await;
                }
                cmd = commands.recv() => match cmd {
                    Some(Command::Rejoin) => need_join = true,
                    Some(Command::Leave(done)) => {
                        self.leave().await;
                        let _ = done.send(());
                        return;
                    }
                    None => {
                        self.leave().await;
                        return;
                    }
                }
            }
        }
    }

    /// One heartbeat; returns whether the member must rejoin.
    async fn heartbeat(&mut self) -> bool {
        let failure = match self
            .client
            .heartbeat(self.generation, &self.member_id)
            .await
        {
            Ok(codes::NONE) => {
                self.last_heartbeat_ok = Instant::now();
                return false;
            }
            Ok(codes::REBALANCE_IN_PROGRESS) => return true,
            Ok(code @ (codes::UNKNOWN_MEMBER_ID | codes::ILLEGAL_GENERATION)) => {
                tracing::warn!(group = %self.config.group_id, member = %self.member_id, code, "lost group membership");
                self.lose_membership(code == codes::UNKNOWN_MEMBER_ID).await;
                return true;
            }
            Ok(code) if codes::needs_rediscovery(code) => {
                self.client.mark_coordinator_unknown();
                format!("coordinator moved (error code {code})")
            }
            Ok(code) => format!("error code {code}"),
            // Authentication or TLS failed (re-authentication, reconnect): rejoining reports
            // the error as fatal if it persists.
            Err(e) if e.is_fatal() => {
                tracing::warn!(group = %self.config.group_id, error = %e, "heartbeat failed");
                return true;
            }
            // Transport trouble: the next heartbeat looks the coordinator up again.
            Err(e) => e.to_string(),
        };
        tracing::warn!(group = %self.config.group_id, error = %failure, "heartbeat failed");
        if self.last_heartbeat_ok.elapsed() > self.config.session_timeout {
            // The coordinator has expelled us by now and others may own our work: stop it
            // rather than risk two members running the same task.
            self.lose_membership(false).await;
            return true;
        }
        false
    }

    async fn lose_membership(&mut self, forget_member_id: bool) {
        if forget_member_id {
            self.member_id.clear();
        }
        self.generation = -1;
        self.last_completed_generation = None;
        self.owned = Work::default();
        self.config.live_work.set(None);
        self.last_assignment = None;
        let _ = self.events.send(GroupEvent::MembershipLost).await;
    }

    async fn leave(&mut self) {
        if self.member_id.is_empty() {
            return;
        }
        match self.client.leave_group(&self.member_id).await {
            Ok(codes::NONE) => {
                tracing::info!(group = %self.config.group_id, member = %self.member_id, "left the group")
            }
            Ok(code) => tracing::warn!(group = %self.config.group_id, code, "leave group failed"),
            Err(e) => {
                tracing::warn!(group = %self.config.group_id, error = %e, "leave group failed")
            }
        }
    }

    fn metadata(&self, offset: i64) -> Vec<(&'static str, Bytes)> {
        self.config
            .protocol
            .offered()
            .iter()
            .map(|p| {
                let allocation = self
                    .last_assignment
                    .as_ref()
                    .map(|last| ExtendedAssignment {
                        version: p.version(),
                        error: 0,
                        leader: last.leader.clone(),
                        leader_url: last.leader_url.clone(),
                        config_offset: last.config_offset,
                        connectors: self.owned.connectors.clone(),
                        tasks: self.owned.tasks.clone(),
                        ..Default::default()
                    });
                let m = WorkerMetadata {
                    version: p.version(),
                    url: self.config.worker_url.clone(),
                    config_offset: offset,
                    allocation,
                };
                (p.name(), m.encode())
            })
            .collect()
    }

    async fn join_and_sync(&mut self) -> Result<(), JoinError> {
        let _ = self.events.send(GroupEvent::RebalanceStarted).await;
        for _ in 0..50 {
            let offset = self.snapshot.borrow().offset;
            let join = self
                .client
                .join_group(
                    &self.member_id,
                    self.config.session_timeout,
                    self.config.rebalance_timeout,
                    self.metadata(offset),
                )
                .await?;
            match join.error_code {
                codes::NONE => {}
                codes::MEMBER_ID_REQUIRED => {
                    // KIP-394: the coordinator hands out the id first so a lost response
                    // cannot leave a ghost member behind.
                    self.member_id = join.member_id;
                    continue;
                }
                codes::UNKNOWN_MEMBER_ID | codes::ILLEGAL_GENERATION => {
                    if self.last_completed_generation.is_some() {
                        self.lose_membership(true).await;
                    }
                    self.member_id.clear();
                    continue;
                }
                codes::REBALANCE_IN_PROGRESS => continue,
                code if codes::needs_rediscovery(code) => {
                    self.client.mark_coordinator_unknown();
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
                code if codes::is_fatal(code) => {
                    return Err(JoinError::Fatal(format!(
                        "joining group \"{}\" failed with error code {code}",
                        self.config.group_id
                    )));
                }
                code => return Err(JoinError::Retry(format!("JoinGroup error code {code}"))),
            }
            self.member_id = join.member_id.clone();
            self.generation = join.generation_id;
            let protocol_name = join.protocol_name.clone().unwrap_or_default();
            let Some(protocol) = ConnectProtocolVersion::from_name(&protocol_name) else {
                return Err(JoinError::Fatal(format!(
                    "the group chose unknown connect protocol \"{protocol_name}\""
                )));
            };
            let is_leader = join.leader == self.member_id;
            let assignments = if is_leader {
                self.lead(&join, protocol)
            } else {
                Vec::new()
            };
            let (code, blob) = self
                .client
                .sync_group(
                    self.generation,
                    &self.member_id,
                    &protocol_name,
                    assignments,
                    self.config.rebalance_timeout,
                )
                .await?;
            match code {
                codes::NONE => {}
                codes::REBALANCE_IN_PROGRESS => continue,
                codes::UNKNOWN_MEMBER_ID | codes::ILLEGAL_GENERATION => {
                    if self.last_completed_generation.is_some() {
                        self.lose_membership(code == codes::UNKNOWN_MEMBER_ID).await;
                    }
                    if code == codes::UNKNOWN_MEMBER_ID {
                        self.member_id.clear();
                    }
                    continue;
                }
                code if codes::needs_rediscovery(code) => {
                    self.client.mark_coordinator_unknown();
                    continue;
                }
                code if codes::is_fatal(code) => {
                    return Err(JoinError::Fatal(format!(
                        "SyncGroup failed with error code {code}"
                    )));
                }
                code => return Err(JoinError::Retry(format!("SyncGroup error code {code}"))),
            }
            let assignment = ExtendedAssignment::decode(&blob).map_err(|e| {
                JoinError::Retry(format!("undecodable assignment from the leader: {e}"))
            })?;
            if !is_leader {
                self.config.live_work.set(None);
            }
            if !assignment.failed() {
                if protocol.is_cooperative() {
                    self.owned.apply(&assignment);
                } else {
                    self.owned = Work::from_assignment(&assignment);
                }
                self.last_completed_generation = Some(self.generation);
                self.last_assignment = Some(assignment.clone());
            }
            self.last_heartbeat_ok = Instant::now();
            tracing::info!(
                group = %self.config.group_id, member = %self.member_id, generation = self.generation,
                is_leader, error = assignment.error, connectors = ?assignment.connectors,
                tasks = assignment.tasks.len(), revoked_tasks = assignment.revoked_tasks.len(),
                delay = assignment.delay, "joined group"
            );
            let leader_url = assignment.leader_url.clone();
            let _ = self
                .events
                .send(GroupEvent::Assigned {
                    generation: self.generation,
                    member_id: self.member_id.clone(),
                    is_leader,
                    assignment,
                    leader_url,
                    protocol,
                })
                .await;
            return Ok(());
        }
        Err(JoinError::Retry("too many join attempts in a row".into()))
    }

    /// The leader's part: decode every member's metadata and run the assignor.
    fn lead(
        &mut self,
        join: &JoinResult,
        protocol: ConnectProtocolVersion,
    ) -> Vec<(String, Bytes)> {
        let members: Vec<MemberInfo> = join
            .members
            .iter()
            .map(|(id, blob)| match WorkerMetadata::decode(blob) {
                Ok(m) => MemberInfo {
                    member_id: id.clone(),
                    url: m.url,
                    config_offset: m.config_offset,
                    owned: m
                        .allocation
                        .as_ref()
                        .map(Work::from_assignment)
                        .unwrap_or_default(),
                },
                Err(e) => {
                    tracing::warn!(member = %id, error = %e, "undecodable member metadata");
                    MemberInfo {
                        member_id: id.clone(),
                        url: String::new(),
                        config_offset: -1,
                        owned: Work::default(),
                    }
                }
            })
            .collect();
        // The latest snapshot: the herder keeps it current, so this is the "fresh read" Java
        // does before giving up with CONFIG_MISMATCH.
        let snapshot = self.snapshot.borrow().clone();
        let ctx = AssignContext {
            protocol,
            leader_id: &self.member_id,
            generation: self.generation,
            last_completed_generation: self.last_completed_generation,
            snapshot: &snapshot,
            now_ms: self.started.elapsed().as_millis() as u64,
            max_delay_ms: self.config.scheduled_rebalance_max_delay.as_millis() as u64,
        };
        let out: BTreeMap<String, ExtendedAssignment> =
            assignor::assign(&ctx, &members, &mut self.leader_state);
        let mut live: BTreeSet<ConnectorTaskId> = members
            .iter()
            .flat_map(|m| m.owned.tasks.iter().cloned())
            .collect();
        live.extend(out.values().flat_map(|a| a.tasks.iter().cloned()));
        self.config.live_work.set(Some(live));
        out.into_iter().map(|(id, a)| (id, a.encode())).collect()
    }
}
