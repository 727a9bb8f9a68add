//! The local PostgreSQL started by `deploy/postgres.sh` (address from `DATABASE_URL`).

use sqlx::PgPool;

/// `DATABASE_URL`, or the address `deploy/postgres.sh up` prints.
pub fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:55432/postgres".to_owned())
}

/// The CA that signed the test Postgres's TLS certificate: `PG_CA` (what `deploy/postgres.sh up`
/// prints; `tests/run.sh` exports it), else where that script puts it in this checkout.
pub fn ca() -> std::path::PathBuf {
    match std::env::var("PG_CA") {
        Ok(p) => p.into(),
        Err(_) => {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.local/postgres/ca.pem")
        }
    }
}

pub async fn pool() -> PgPool {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect(&database_url())
        .await
        .expect("connect to Postgres (run deploy/postgres.sh up)")
}

/// A table name no other test run uses (lower case, valid unquoted).
pub fn unique_table(prefix: &str) -> String {
    crate::unique(prefix).replace('-', "_")
}
