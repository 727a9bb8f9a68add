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
    /// For a failure: why a restart cannot help ([`why_not_retriable`]), if it cannot.
    pub not_retriable: Option<String>,
}

#[derive(Debug, Default)]
pub struct Ledger(Mutex<HashMap<Work, LocalState>>);

impl Ledger {
    pub fn record(
        &self,
        work: Work,
        state: ConnectorState,
        trace: Option<String>,
        not_retriable: Option<String>,
    ) {
        let entry = LocalState {
            state,
            since: Instant::now(),
            trace,
            not_retriable,
        };
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(work, entry);
    }

    /// Forgets `work` (stopped by the herder: whatever it last reported no longer runs here).
    pub fn forget(&self, work: &Work) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(work);
    }

    pub fn get(&self, work: &Work) -> Option<LocalState> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(work)
            .cloned()
    }
}

/// In an error's source chain: a failure a restart cannot fix, and why.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotRetriable(pub String);

/// Why restarting cannot cure a failure, if it cannot: a configuration error (an invalid or
/// unresolvable setting, a connector whose config does not validate) fails again the same way,
/// and an error marked [`NotRetriable`] says why itself.
pub fn why_not_retriable(error: &ConnectError) -> Option<String> {
    if matches!(error, ConnectError::Config { .. }) {
        return Some("it is a configuration error, which a restart does not fix".to_owned());
    }
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        if let Some(NotRetriable(why)) = e.downcast_ref::<NotRetriable>() {
            return Some(why.clone());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors_and_marked_errors_are_not_retried() {
        assert!(why_not_retriable(&ConnectError::config("bad")).is_some());
        assert!(why_not_retriable(&ConnectError::fatal("broker gone")).is_none());
        assert!(why_not_retriable(&ConnectError::retriable("later")).is_none());
        let marked =
            ConnectError::fatal("commit failed").with_source(NotRetriable("fenced".into()));
        assert_eq!(why_not_retriable(&marked).as_deref(), Some("fenced"));
    }
}
