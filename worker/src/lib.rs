//! The Kafka Connect-compatible worker runtime.
//!
//! - [`app`]: the composition root, [`app::start`]: everything `main` runs;
//!   [`app::start_standalone`]: the same herder and runtime as a standalone worker
//! - [`config`]: worker properties (Java `.properties`, the keys of `connect-distributed.properties`)
//! - [`cluster`]: group membership over Kafka's classic group APIs, protocol codecs, assignors
//! - [`storage`]: the Kafka-backed log and the config, offset and status stores in Connect's
//!   formats; the standalone worker's in-process logs and Apache's offsets file
//! - [`herder`]: the distributed herder: assignments + config changes -> running work; its
//!   typed API ([`herder::api`]) is the only writer of cluster changes
//! - [`runtime`]: connector and task instances: the source and sink task runners
//! - [`rest`]: the REST API (axum), one module per resource: parse, ask the herder, answer
//! - [`peer`]: the HTTP client between workers (forwarding, signed internal requests)
//! - [`plugins`]: the Java connectors of `plugin.path`, run in a JVM this worker supervises and
//!   adapted to the connector traits (registered in the `PluginRegistry` at start-up)
//! - [`logging`]: log levels changed at run time
//! - [`metrics`]: the Prometheus metrics (`GET /metrics`), Connect's metric groups and names
//! - [`security`]: TLS and SASL settings of the Kafka connections, as plain values
//! - [`verify`]: `connect-worker verify`, the exactly-once checker for the verifiable source
//! - [`check`]: `connect-worker check`, what an operator runs before moving an Apache Connect
//!   cluster onto this worker: the properties file and the config topic's connectors
//! - [`version`]: what `GET /` reports
//! - [`task_id`]: `ConnectorTaskId`, shared by the group protocol, the stores and the runtime
//!
//! Data flows one way: REST -> herder API (request queue; `NotLeader` -> REST forwards) ->
//! config topic -> every herder reads it -> assignment -> runtime starts tasks -> tasks write
//! data and offsets -> status topic -> REST reads status.
//!
//! Module order, each importing only those after it: `main` -> [`check`] -> [`app`] -> [`rest`] ->
//! [`herder`] -> [`runtime`], [`peer`] -> [`plugins`] -> [`storage`], [`cluster`], [`config`] ->
//! [`task_id`], [`logging`], [`metrics`], [`security`] -> `connect-api`.

pub mod app;
pub mod check;
pub mod cluster;
pub mod config;
pub mod herder;
pub mod logging;
pub mod metrics;
pub mod peer;
pub mod plugins;
pub mod rest;
pub mod runtime;
pub mod security;
pub mod startup;
pub mod storage;
pub mod stuck_transactions;
pub mod task_id;
pub mod verify;
pub mod version;
