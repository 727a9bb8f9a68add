//! The Postgres sink over TLS against the real Postgres of `deploy/postgres.sh` (TLS on, its CA in
//! `PG_CA`): `sslmode` in `connection.url` decides, and the server says which sessions are
//! encrypted (`pg_stat_ssl` joined with `pg_stat_activity` on the `application_name` each
//! connector sets in its URL).

use std::time::Duration;

use connect_tests::kafka;
use connect_tests::postgres::{ca, database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually};
use serde_json::{Value, json};
use sqlx::Row;

const UPSERT: &str = "connect_connectors::jdbc::PostgresSinkConnector";
const ROWS: i64 = 30;

/// `DATABASE_URL` with extra URL parameters.
fn url_with(params: &str) -> String {
    let base = database_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}{params}")
}

/// `jdbc:postgresql://host:port/db?user=..&<params>` for `DATABASE_URL`.
fn jdbc_url_with(params: &str) -> String {
    let o: sqlx::postgres::PgConnectOptions = database_url().parse().expect("DATABASE_URL");
    format!(
        "jdbc:postgresql://{}:{}/{}?user={}&{params}",
        o.get_host(),
        o.get_port(),
        o.get_database().unwrap_or("postgres"),
        o.get_username()
    )
}

fn sink_config(topic: &str, table: &str, url: &str) -> Value {
    json!({
        "connector.class": UPSERT, "tasks.max": "1", "topics": topic,
        "connection.url": url, "table.name.format": table,
        "pk.mode": "record_key", "pk.fields": "id", "auto.create": "true",
    })
}

async fn produce_rows(topic: &str) {
    kafka::create_topics(&[topic], 1).await;
    kafka::produce(
        topic,
        (0..ROWS).map(|i| (Some(i.to_string()), Some(json!({"v": i}).to_string()))),
    )
    .await;
}

async fn count(table: &str) -> i64 {
    let p = pool().await;
    let n = sqlx::query(&format!("SELECT count(*) FROM {table}"))
        .fetch_one(&p)
        .await
        .map(|r| r.get::<i64, _>(0))
        .unwrap_or(-1);
    p.close().await;
    n
}

/// For each server session whose `application_name` is `app`: is it TLS, and its protocol.
async fn sessions(app: &str) -> Vec<(bool, Option<String>)> {
    let p = pool().await;
    let rows = sqlx::query(
        "SELECT s.ssl, s.version FROM pg_stat_ssl s JOIN pg_stat_activity a ON a.pid = s.pid \
         WHERE a.application_name = $1",
    )
    .bind(app)
    .fetch_all(&p)
    .await
    .expect("query pg_stat_ssl");
    p.close().await;
    rows.iter()
        .map(|r| (r.get::<bool, _>(0), r.get::<Option<String>, _>(1)))
        .collect()
}

async fn task_failure(w: &WorkerProc, name: &str) -> String {
    eventually(
        Duration::from_secs(60),
        &format!("{name} FAILED"),
        || async {
            let s = w.get(&format!("/connectors/{name}/status")).await.ok()?;
            if s["connector"]["state"] == "FAILED" {
                return Some(s["connector"]["trace"].as_str()?.to_owned());
            }
            (s["tasks"][0]["state"] == "FAILED").then(|| s["tasks"][0]["trace"].to_string())
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn sslmode_verify_full_and_require_write_over_tls_and_disable_in_plaintext() {
    let ca = ca();
    assert!(
        ca.is_file(),
        "no CA at {} (run deploy/postgres.sh up; PG_CA)",
        ca.display()
    );
    let w = ClusterSpec::new("pg-tls").start_worker().await;
    let cases = [
        // (mode, URL, TLS expected)
        (
            "verify-full",
            format!("sslmode=verify-full&sslrootcert={}", ca.display()),
            true,
        ),
        // pgJDBC's form: `require` encrypts without checking the certificate.
        ("require", "sslmode=require".to_owned(), true),
        ("disable", "sslmode=disable".to_owned(), false),
    ];
    let mut runs = Vec::new();
    for (mode, params, tls) in &cases {
        let topic = unique(&format!("pg-tls-{mode}"));
        let table = unique_table("pg_tls");
        let app = unique(&format!("sink-{mode}"));
        produce_rows(&topic).await;
        let url = if *mode == "require" {
            jdbc_url_with(&format!("{params}&ApplicationName={app}"))
        } else {
            url_with(&format!("{params}&application_name={app}"))
        };
        create_connector(&w, &unique(mode), sink_config(&topic, &table, &url)).await;
        runs.push((mode, table, app, *tls));
    }
    for (mode, table, app, tls) in runs {
        eventually(
            Duration::from_secs(90),
            &format!("sslmode={mode}: {ROWS} rows"),
            || async { (count(&table).await == ROWS).then_some(()) },
        )
        .await;
        let s = sessions(&app).await;
        assert!(
            !s.is_empty(),
            "sslmode={mode}: no server session named {app}"
        );
        for (ssl, version) in &s {
            assert_eq!(*ssl, tls, "sslmode={mode}: sessions {s:?}");
            if tls {
                assert!(
                    version.as_deref().is_some_and(|v| v.starts_with("TLS")),
                    "{s:?}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_full_with_the_wrong_ca_fails_naming_the_certificate_problem() {
    // Any CA other than the server's: one made here.
    let dir = std::env::temp_dir().join(unique("pg-wrong-ca"));
    std::fs::create_dir_all(&dir).unwrap();
    let wrong = dir.join("ca.pem");
    let cert = rcgen::generate_simple_self_signed(vec!["not-the-postgres-ca".to_owned()]).unwrap();
    std::fs::write(&wrong, cert.cert.pem()).unwrap();

    let w = ClusterSpec::new("pg-wrong-ca").start_worker().await;
    let topic = unique("pg-wrong-ca");
    let table = unique_table("pg_wrong_ca");
    produce_rows(&topic).await;
    let url = url_with(&format!(
        "sslmode=verify-full&sslrootcert={}",
        wrong.display()
    ));
    create_connector(&w, "wrong-ca", sink_config(&topic, &table, &url)).await;
    let trace = task_failure(&w, "wrong-ca").await;
    assert!(
        trace.contains("over TLS (sslmode=verify-full")
            && trace.contains("invalid peer certificate"),
        "{trace}"
    );

    // verify-full naming no CA at all is refused before any connection.
    let url = url_with("sslmode=verify-full");
    create_connector(&w, "no-ca", sink_config(&topic, &table, &url)).await;
    let trace = task_failure(&w, "no-ca").await;
    assert!(trace.contains("needs a root certificate"), "{trace}");
    assert_eq!(count(&table).await, -1, "no table was created");
    let _ = std::fs::remove_dir_all(&dir);
}
