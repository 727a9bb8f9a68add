//! The labels of the series: `connector`, `task` and `status`, and Apache's states.

use crate::task_id::ConnectorTaskId;

pub(super) type Labels = Vec<(String, String)>;

/// The states Apache reports (`AbstractStatus.State`), lower-case as its `status` metric.
pub(super) const STATES: [&str; 6] = [
    "unassigned",
    "running",
    "paused",
    "failed",
    "restarting",
    "stopped",
];

pub(super) fn connector_labels(connector: &str) -> Labels {
    vec![("connector".into(), connector.into())]
}

pub(super) fn task_labels(id: &ConnectorTaskId) -> Labels {
    vec![
        ("connector".into(), id.connector.clone()),
        ("task".into(), id.task.to_string()),
    ]
}

pub(super) fn with_status(mut labels: Labels, status: &str) -> Labels {
    labels.push(("status".into(), status.into()));
    labels
}
