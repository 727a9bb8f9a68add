//! The black-box tests: real `connect-worker` processes against the real Kafka, PostgreSQL and
//! S3 server, one module per area. One test binary for all of them: each of these modules
//! used to be a binary of its own, and linking 36 copies of the worker, librdkafka and the
//! TLS stacks took minutes of every build. `tests/runner.py` runs each test in a process of
//! its own; `cargo test -p connect-tests --test blackbox exactly_once::` runs one module.

mod client_compat;
mod client_security;
mod cluster_membership;
mod compression;
mod config_providers;
mod converters;
mod deploy_files;
mod distributed_runtime;
mod exactly_once;
mod file_confinement;
mod golden_apache;
mod group_security;
mod herder_api;
mod internal_topics;
mod java_plugins;
mod kafka_transactions;
mod logging;
mod metrics;
mod migration;
mod mirror;
mod postgres_tls;
mod producer_faults;
mod registry;
mod rest_api;
mod rest_auth;
mod rest_hygiene;
mod rest_listeners;
mod secure_cluster;
mod secured_worker;
mod self_healing;
mod shutdown;
mod sink_object_store;
mod sink_postgres;
mod sink_s3;
mod source_postgres;
mod source_postgres_cdc;
mod source_postgres_cdc_golden;
mod standalone;
mod storage_topics;
mod task_failures;
mod topic_creation;
mod transforms;
mod worker_startup;
