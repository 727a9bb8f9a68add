//! Test harness for black-box tests against real services.
//!
//! - [`kafka`]: the local Apache Kafka started by `deploy/kafka.sh` (address from
//!   `KAFKA_BOOTSTRAP_SERVERS`), topic creation and reading with either isolation level.
//! - [`postgres`]: the local PostgreSQL started by `deploy/postgres.sh` (`DATABASE_URL`).
//! - [`worker`]: real `connect-worker` processes (start, SIGKILL, SIGSTOP) and their REST API.
//!
//! Every test uses random topic, group and transactional ids ([`unique`]) so tests can share one
//! cluster, run in parallel and be re-run without cleanup.

pub mod kafka;
pub mod postgres;
pub mod worker;

/// A name no other test run uses: `<prefix>-<uuid>`.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}
