//! Test harness for black-box tests against real services.
//!
//! - [`kafka`]: the local Apache Kafka started by `deploy/kafka.sh` (address from
//!   `KAFKA_BOOTSTRAP_SERVERS`), topic creation and reading with either isolation level.
//! - [`postgres`]: the local PostgreSQL started by `deploy/postgres.sh` (`DATABASE_URL`).
//! - [`secure`]: the secured Kafka of `deploy/kafka.sh up --secure` (TLS, SASL, mTLS; from
//!   `KAFKA_SECURE_ENV`): addresses, certificates, credentials and librdkafka configs for each.
//! - [`proxy`]: a TCP proxy in front of a real service, cut and restored to make it unreachable.
//! - [`worker`]: real `connect-worker` processes (start, SIGKILL, SIGSTOP) and their REST API.
//!
//! Every test uses random topic, group and transactional ids ([`unique`]) so tests can share one
//! cluster, run in parallel and be re-run without cleanup.

pub mod bench;
pub mod kafka;
pub mod postgres;
pub mod proxy;
pub mod secure;
pub mod worker;

/// Every `.jsonl` file below `dir` (the object-store sink's output on the local filesystem).
pub fn jsonl_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out
}

/// A name no other test run uses: `<prefix>-<uuid>`.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}
