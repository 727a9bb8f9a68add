//! The Kafka Connect-compatible worker runtime.
//!
//! - [`config`]: worker properties (Java `.properties`, the keys of `connect-distributed.properties`)
//! - [`rest`]: the REST API (axum), one module per resource
//! - [`version`]: what `GET /` reports
//!
//! Data flows one way: REST -> herder -> config topic -> every herder reads it -> assignment ->
//! runtime starts tasks -> tasks write data and offsets -> status topic -> REST reads status.

pub mod config;
pub mod rest;
pub mod version;
