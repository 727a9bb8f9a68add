//! The local PostgreSQL started by `deploy/postgres.sh` (address from `DATABASE_URL`).

use sqlx::PgPool;

/// `DATABASE_URL`, or the address `deploy/postgres.sh up` prints.
pub fn database_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:55432/postgres".to_owned())
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
