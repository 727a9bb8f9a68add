//! Where each connector and task of this worker stands: `status` and `info` series, the task
//! counts by state, the time in each state; a task that leaves the worker takes its series along.

use std::time::Instant;

use super::labels::{connector_labels, task_labels, with_status};
use super::registry::{Metrics, StateTimes};
use crate::task_id::ConnectorTaskId;

impl Metrics {
    /// The class, type (`source`/`sink`) and version of a connector this worker started.
    pub fn connector_info(&self, connector: &str, class: &str, kind: &str, version: &str) {
        let mut states = self.states.lock().expect("metrics lock");
        let mut labels = connector_labels(connector);
        labels.extend([
            ("connector_class".to_owned(), class.to_owned()),
            ("connector_type".to_owned(), kind.to_owned()),
            ("connector_version".to_owned(), version.to_owned()),
        ]);
        if let Some(old) = states
            .connector_info
            .insert(connector.to_owned(), labels.clone())
        {
            self.connector_info.remove(&old);
        }
        self.connector_info.get_or_create(&labels).set(1);
    }

    /// A connector's new state on this worker; `None` when it left the worker.
    pub fn connector_state(&self, connector: &str, state: Option<&'static str>) {
        let mut states = self.states.lock().expect("metrics lock");
        let labels = connector_labels(connector);
        if let Some(old) = states.connectors.remove(connector) {
            self.connector_status
                .remove(&with_status(labels.clone(), old));
        }
        if state.is_none()
            && let Some(info) = states.connector_info.remove(connector)
        {
            self.connector_info.remove(&info);
        }
        if let Some(new) = state {
            states.connectors.insert(connector.to_owned(), new);
            self.connector_status
                .get_or_create(&with_status(labels, new))
                .set(1);
        }
        self.connector_count.set(states.connectors.len() as i64);
    }

    /// A task's new state on this worker; `None` when it left the worker (its series go).
    pub fn task_state(&self, id: &ConnectorTaskId, state: Option<&'static str>) {
        let mut states = self.states.lock().expect("metrics lock");
        let labels = task_labels(id);
        if let Some(old) = states.tasks.remove(id) {
            self.task_status.remove(&with_status(labels.clone(), old));
        }
        let now = Instant::now();
        match state {
            Some(new) => {
                states.tasks.insert(id.clone(), new);
                states
                    .task_times
                    .entry(id.clone())
                    .and_modify(|t| t.enter(new, now))
                    .or_insert_with(|| StateTimes::new(new, now));
                self.task_status
                    .get_or_create(&with_status(labels, new))
                    .set(1);
            }
            None => {
                states.task_times.remove(id);
                if let Some(series) = states.lag_series.remove(id) {
                    for l in series.lock().expect("metrics lock").drain(..) {
                        self.task.record_lag.remove(&l);
                    }
                }
                self.running_ratio.remove(&labels);
                self.pause_ratio.remove(&labels);
                self.task.remove(&labels);
                self.remove_plugin_series(id);
            }
        }
        self.task_count.set(states.tasks.len() as i64);
        // Recount the connector's tasks by state.
        let connector = connector_labels(&id.connector);
        let mine: Vec<&str> = states
            .tasks
            .iter()
            .filter(|(t, _)| t.connector == id.connector)
            .map(|(_, s)| *s)
            .collect();
        for (state, family) in &self.connector_task_counts {
            if mine.is_empty() {
                family.remove(&connector);
                continue;
            }
            let n = if *state == "total" {
                mine.len()
            } else {
                mine.iter().filter(|s| *s == state).count()
            };
            family.get_or_create(&connector).set(n as i64);
        }
    }
}
