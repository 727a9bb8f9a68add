//! Active topics (KIP-558): the first time a task produces to or consumes from a topic, the
//! status topic gets `topic-<topic>-connector-<connector>`, which `GET /connectors/{name}/topics`
//! lists. As in Connect, a source task records a topic once a record sent to it is
//! acknowledged, a sink task once a record from it is consumed.

use std::collections::HashSet;
use std::sync::Arc;

use super::{ConnectorTaskId, TaskStatusListener};

/// The topics one task has already reported in this run (the status store also skips
/// topics it already knows, so a restarted task costs one record per topic at most).
pub struct ActiveTopics {
    id: ConnectorTaskId,
    status: Arc<dyn TaskStatusListener>,
    seen: HashSet<String>,
    /// The topic recorded last: a task's records mostly go to one topic in a row.
    last: Option<String>,
}

impl ActiveTopics {
    pub fn new(id: ConnectorTaskId, status: Arc<dyn TaskStatusListener>) -> Self {
        Self {
            id,
            status,
            seen: HashSet::new(),
            last: None,
        }
    }

    pub fn record(&mut self, topic: &str) {
        if self.last.as_deref() == Some(topic) {
            return;
        }
        if !self.seen.contains(topic) {
            self.seen.insert(topic.to_owned());
            self.status.on_topic_used(&self.id, topic);
        }
        match &mut self.last {
            Some(last) => topic.clone_into(last),
            None => self.last = Some(topic.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Calls(Mutex<Vec<String>>);

    impl TaskStatusListener for Calls {
        fn on_running(&self, _: &ConnectorTaskId) {}
        fn on_paused(&self, _: &ConnectorTaskId) {}
        fn on_failure(&self, _: &ConnectorTaskId, _: &connect_api::ConnectError) {}
        fn on_shutdown(&self, _: &ConnectorTaskId) {}
        fn on_topic_used(&self, id: &ConnectorTaskId, topic: &str) {
            self.0.lock().unwrap().push(format!("{id}:{topic}"));
        }
    }

    #[test]
    fn each_topic_is_reported_once_per_task_run() {
        let calls = Arc::new(Calls::default());
        let mut t = ActiveTopics::new(ConnectorTaskId::new("c", 1), calls.clone());
        for topic in ["a", "b", "a", "a", "b", "c"] {
            t.record(topic);
        }
        assert_eq!(*calls.0.lock().unwrap(), ["c-1:a", "c-1:b", "c-1:c"]);
    }
}
