//! Tasks' own gauges (connect-api's [`PluginMetrics`], Kafka 4.1's plugin metrics reduced to
//! gauges): `kafka_connect_task_plugin_<name>{connector,task}`, appended to the registry's
//! text at each scrape, and dropped with the task's other series when it leaves the worker.

use std::fmt::Write as _;

use connect_api::connector::PluginMetrics;

use super::registry::{Metrics, global};
use crate::task_id::ConnectorTaskId;

/// The [`PluginMetrics`] of one task.
pub struct TaskPluginMetrics {
    id: ConnectorTaskId,
}

impl TaskPluginMetrics {
    pub fn new(id: ConnectorTaskId) -> Self {
        Self { id }
    }
}

fn valid(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl PluginMetrics for TaskPluginMetrics {
    fn set_gauge(&self, name: &str, help: &str, value: f64) {
        if !valid(name) {
            tracing::warn!(task = %self.id, name, "a task's metric name must be lower case letters, digits and _; not exported");
            return;
        }
        let mut plugin = global().plugin.lock().expect("metrics lock");
        let entry = plugin
            .entry(name.to_owned())
            .or_insert_with(|| (help.to_owned(), Default::default()));
        entry.1.insert(self.id.clone(), value);
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    /// Drops a task's gauges (it left the worker).
    pub(super) fn remove_plugin_series(&self, id: &ConnectorTaskId) {
        let mut plugin = self.plugin.lock().expect("metrics lock");
        for (_, values) in plugin.values_mut() {
            values.remove(id);
        }
        plugin.retain(|_, (_, values)| !values.is_empty());
    }

    /// The gauges in OpenMetrics text, to go before `# EOF`.
    pub(super) fn encode_plugin(&self) -> String {
        let plugin = self.plugin.lock().expect("metrics lock");
        let mut out = String::new();
        for (name, (help, values)) in plugin.iter() {
            let full = format!("kafka_connect_task_plugin_{name}");
            let _ = writeln!(out, "# HELP {full} {}", help.replace('\n', " "));
            let _ = writeln!(out, "# TYPE {full} gauge");
            for (id, v) in values {
                let _ = writeln!(
                    out,
                    "{full}{{connector=\"{}\",task=\"{}\"}} {v}",
                    escape(&id.connector),
                    id.task
                );
            }
        }
        out
    }
}
