//! Public value types of the internal topics, with Kafka Connect's names.

use std::fmt;

pub use crate::task_id::ConnectorTaskId;

/// The desired state of a connector, as written to `target-state-<c>` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TargetState {
    /// `STARTED` on the wire; REST calls it RUNNING.
    #[default]
    Started,
    Paused,
    Stopped,
}

impl TargetState {
    /// The wire name used in `state.v2`.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetState::Started => "STARTED",
            TargetState::Paused => "PAUSED",
            TargetState::Stopped => "STOPPED",
        }
    }

    /// Parses a wire name; unknown names are `None`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "STARTED" => Some(TargetState::Started),
            "PAUSED" => Some(TargetState::Paused),
            "STOPPED" => Some(TargetState::Stopped),
            _ => None,
        }
    }
}

/// Runtime state of a connector or task as reported in the status topic (Java
/// `AbstractStatus.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectorState {
    Unassigned,
    Running,
    Paused,
    Stopped,
    Failed,
    Restarting,
    /// Never written: a DESTROYED status is written as a tombstone.
    Destroyed,
}

impl ConnectorState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorState::Unassigned => "UNASSIGNED",
            ConnectorState::Running => "RUNNING",
            ConnectorState::Paused => "PAUSED",
            ConnectorState::Stopped => "STOPPED",
            ConnectorState::Failed => "FAILED",
            ConnectorState::Restarting => "RESTARTING",
            ConnectorState::Destroyed => "DESTROYED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "UNASSIGNED" => ConnectorState::Unassigned,
            "RUNNING" => ConnectorState::Running,
            "PAUSED" => ConnectorState::Paused,
            "STOPPED" => ConnectorState::Stopped,
            "FAILED" => ConnectorState::Failed,
            "RESTARTING" => ConnectorState::Restarting,
            "DESTROYED" => ConnectorState::Destroyed,
            _ => return None,
        })
    }
}

impl fmt::Display for ConnectorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Status of a connector (`status-connector-<c>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorStatus {
    pub connector: String,
    pub state: ConnectorState,
    /// Error trace of a FAILED connector; `null` on the wire otherwise.
    pub trace: Option<String>,
    /// `host:port` of the worker that wrote the status.
    pub worker_id: String,
    /// Group generation of the writer when it wrote this status.
    pub generation: i32,
    /// Version of the connector plugin the writer runs (Connect 4.4's `version`); `None` when
    /// the writer has no instance (e.g. the class failed to load) or wrote no version.
    pub version: Option<String>,
}

/// Status of a task (`status-task-<c>-<n>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStatus {
    pub id: ConnectorTaskId,
    pub state: ConnectorState,
    pub trace: Option<String>,
    pub worker_id: String,
    pub generation: i32,
    /// Version of the task's plugin, as for [`ConnectorStatus::version`].
    pub version: Option<String>,
}

/// A topic a connector's task has used (`status-topic-<topic>:connector-<c>`), KIP-558.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicStatus {
    pub topic: String,
    pub connector: String,
    pub task: i32,
    /// Epoch milliseconds when the task first used the topic.
    pub discover_timestamp: i64,
}

/// A KIP-745 restart request (`restart-connector-<c>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RestartRequest {
    pub connector: String,
    pub include_tasks: bool,
    pub only_failed: bool,
}

impl RestartRequest {
    /// Java's `RestartRequest.compareImpact`: a request that restarts more wins when two are
    /// queued for the same connector.
    pub fn impact(&self) -> u8 {
        u8::from(self.include_tasks) * 2 + u8::from(!self.only_failed)
    }
}

/// The KIP-507 session key used to sign inter-worker requests (`session-key` record).
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// Raw key bytes (Base64 on the wire).
    pub key: Vec<u8>,
    /// JCA algorithm name, e.g. `HmacSHA256`.
    pub algorithm: String,
    /// Epoch milliseconds.
    pub creation_timestamp: i64,
}

impl fmt::Debug for SessionKey {
    /// The key is a secret; never print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionKey")
            .field("key", &"[hidden]")
            .field("algorithm", &self.algorithm)
            .field("creation_timestamp", &self.creation_timestamp)
            .finish()
    }
}
