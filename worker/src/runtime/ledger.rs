//! What this worker last reported for each connector and task it runs, and since when: the
//! herder's automatic restarts read it (a FAILED entry, whether restarting can help, how long
//! a restarted task has been running).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use connect_api::ConnectError;

use super::ConnectorTaskId;
use crate::storage::ConnectorState;

/// A connector or a task.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Work {
    Connector(String),
    Task(ConnectorTaskId),
}

impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Work::Connector(c) => write!(f, "connector {c}"),
            Work::Task(id) => write!(f, "task {id}"),
        }
    }
}

/// The last state reported for one connector or task.
#[derive(Debug, Clone)]
pub struct LocalState {
    pub state: ConnectorState,
    pub since: Instant,
    /// The status `trace` of a failure.
    pub trace: Option<String>,
    /// For a failure: whether a restart can help ([`is_retriable`]).
    pub retriable: bool,
}

#[derive(Debug, Default)]
pub struct Ledger(Mutex<HashMap<Work, LocalState>>);

impl Ledger {
    pub fn record(
        &self,
        work: Work,
        state: ConnectorState,
        trace: Option<String>,
        retriable: bool,
    ) {
        let entry = LocalState {
            state,
            since: Instant::now(),
            trace,
            retriable,
        };
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(work, entry);
    }

    pub fn get(&self, work: &Work) -> Option<LocalState> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(work)
            .cloned()
    }
}

/// Whether restarting can cure a failure: a configuration error (an invalid or unresolvable
/// setting, a connector whose config does not validate) fails again the same way.
pub fn is_retriable(error: &ConnectError) -> bool {
    !matches!(error, ConnectError::Config { .. })
}
