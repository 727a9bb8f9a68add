//! [`ConnectorTaskId`]: a task's identity, shared by the group protocol (assignments), the
//! stores (config and status records) and the runtime.

use std::fmt;

/// A task's identity: connector name plus 0-based task number (Java `ConnectorTaskId`). In
/// group assignments, `task == -1` stands for the connector itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectorTaskId {
    pub connector: String,
    pub task: i32,
}

impl ConnectorTaskId {
    pub fn new(connector: impl Into<String>, task: i32) -> Self {
        Self {
            connector: connector.into(),
            task,
        }
    }
}

impl fmt::Display for ConnectorTaskId {
    /// Connect prints task ids as `<connector>-<task>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.connector, self.task)
    }
}
