//! The worker's metrics, served by `GET /metrics` in the OpenMetrics text format that
//! Prometheus scrapes.
//!
//! Names follow Apache Connect's metric groups as the Prometheus JMX exporter rules of common
//! Connect deployments (Strimzi's `kafka-connect-metrics` config) name them:
//! `kafka_connect_<group without "-metrics">_<metric>`, dashes as underscores, with `connector`
//! and `task` labels. For example `connector-task-metrics` `status` becomes
//! `kafka_connect_connector_task_status{connector,task,status="running"} 1`, and
//! `source-task-metrics` `source-record-poll-total` becomes
//! `kafka_connect_source_task_source_record_poll_total{connector,task}`.
//!
//! Apache's `-rate` metrics are not exported: Prometheus derives them from the `_total`
//! counters (`rate(...[1m])`), which is what the dashboards do with the exporter's values too.
//!
//! One registry per process ([`global`]): a worker process is one worker. Task runners take a
//! [`TaskMetrics`] handle (atomic counters, no lock per record); a task's series are removed
//! when the task leaves the worker, so a scrape shows what runs here.
//!
//! # Files
//!
//! - `registry.rs`: [`Metrics`] (every family, registered under Apache's groups), what it
//!   remembers between calls (the states reported, each task's time per state, the rebalances,
//!   the lag series of each task), and the process's registry ([`global`])
//! - `task_families.rs`: the per-task families (`connector-task`, `source-task`, `sink-task`,
//!   `task-error` groups), registered, and a task's series removed
//! - `worker.rs`: what this worker did (`connect-worker-metrics` start-ups,
//!   `connect-worker-rebalance-metrics`, automatic restarts, stuck transactions, fencing rounds)
//! - `status.rs`: where each connector and task of this worker stands (status, info, task
//!   counts by state; a task that leaves takes its series along)
//! - `task.rs`: [`TaskMetrics`], the handle a task's runner counts with (batches, offset
//!   commits, source polls and transactions, sink reads, puts and lag)
//! - `errors.rs`: [`ErrorMetrics`], a task's `task-error-metrics`
//! - `encode.rs`: [`Metrics::encode`] for `GET /metrics` and its [`CONTENT_TYPE`]
//! - `plugin.rs`: tasks' own gauges ([`TaskPluginMetrics`], connect-api's `PluginMetrics`)
//! - `labels.rs`: the `connector`, `task` and `status` labels, and Apache's states
//! - `clock.rs`: durations and the wall clock in milliseconds, as the `_ms` metrics count
//! - `tests.rs`: the exported names against the exporter's mapping

mod clock;
mod encode;
mod errors;
mod labels;
mod plugin;
mod registry;
mod status;
mod task;
mod task_families;
#[cfg(test)]
mod tests;
mod worker;

pub use encode::CONTENT_TYPE;
pub use errors::ErrorMetrics;
pub use plugin::TaskPluginMetrics;
pub use registry::{Metrics, global};
pub use task::TaskMetrics;
