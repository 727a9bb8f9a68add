//! Config providers (KIP-297, KIP-887, KIP-993) on real workers, Kafka and Postgres: a Postgres
//! sink whose password comes from `${file:...}` and a source whose topic comes from `${env:...}`
//! run; the config topic (read back raw), `GET .../config` and the task configs hold the
//! placeholders; the password appears in no log line; a placeholder naming a missing file, or
//! a path outside `allowed.paths`, is a validation error and refuses creation.

use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::postgres::{database_url, pool, unique_table};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually};
use serde_json::{Value, json};
use sqlx::Row;

const SINK: &str = "connect_connectors::jdbc::PostgresSinkConnector";
const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
/// The role deploy/postgres.sh makes give its password (scram-sha-256).
const ROLE: &str = "connect_pw";

/// `connect_pw` with `password`, allowed to create tables.
async fn password_role(password: &str) {
    let db = pool().await;
    for sql in [
        format!(
            "DO $$ BEGIN CREATE ROLE {ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        ),
        format!("ALTER ROLE {ROLE} PASSWORD '{password}'"),
        format!("GRANT CREATE, USAGE ON SCHEMA public TO {ROLE}"),
    ] {
        sqlx::query(&sql).execute(&db).await.expect(&sql);
    }
    db.close().await;
}

/// The role's password is checked (so the sink's success proves the secret reached it).
async fn login_works(password: &str) -> bool {
    let url = database_url().replacen("postgres@", &format!("{ROLE}:{password}@"), 1);
    sqlx::PgPool::connect(&url).await.is_ok()
}

async fn validate(w: &WorkerProc, config: &Value) -> Value {
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{SINK}/config/validate"),
            Some(config.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The errors on `key` in a validate response.
fn errors_on(infos: &Value, key: &str) -> Vec<String> {
    infos["configs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["value"]["name"] == key)
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_resolve_where_connectors_run_and_stay_placeholders_everywhere_else() {
    let password = format!("pw-{}", unique("s").replace('-', ""));
    password_role(&password).await;
    assert!(
        login_works(&password).await,
        "the role logs in with its password"
    );
    assert!(
        !login_works("not-the-password").await,
        "the role's password is checked (deploy/postgres.sh's scram rule)"
    );

    let source_topic = unique("prov-src");
    let spec = ClusterSpec::new("providers");
    let secrets = spec.dir.join("secrets");
    std::fs::create_dir_all(&secrets).unwrap();
    let db_props = secrets.join("db.properties");
    std::fs::write(
        &db_props,
        format!("# the sink's login\npassword={password}\n"),
    )
    .unwrap();
    let spec = spec
        .set("config.providers", "file,env")
        .set(
            "config.providers.file.class",
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        )
        .set(
            "config.providers.file.param.allowed.paths",
            secrets.to_str().unwrap(),
        )
        .set(
            "config.providers.env.class",
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        )
        .set("config.providers.env.param.allowlist.pattern", "PROV_.*")
        .env("PROV_TOPIC", &source_topic)
        // Everything the worker logs, so a leak at any level would show.
        .env("RUST_LOG", "debug,rdkafka=warn");
    let w = spec.start_worker().await;

    // The sink logs in with the password from the file.
    let topic = unique("prov-sink");
    let table = unique_table("prov");
    kafka::create_topics(&[&topic], 1).await;
    let placeholder = format!("${{file:{}:password}}", db_props.display());
    let sink = json!({
        "name": "pg-sink", "connector.class": SINK, "tasks.max": "1", "topics": topic,
        "connection.url": database_url(), "connection.user": ROLE,
        "connection.password": placeholder,
        "table.name.format": table, "pk.mode": "record_key", "pk.fields": "id",
        "auto.create": "true",
    });
    let infos = validate(&w, &sink).await;
    assert_eq!(infos["error_count"], 0, "{infos}");
    assert!(
        infos.to_string().contains(&placeholder) && !infos.to_string().contains(&password),
        "validation shows the placeholder, not the secret: {infos}"
    );
    create_connector(&w, "pg-sink", sink).await;
    kafka::produce(
        &topic,
        (0..20i64).map(|id| (Some(id.to_string()), Some(json!({"v": id}).to_string()))),
    )
    .await;
    eventually(
        Duration::from_secs(90),
        "20 rows written as connect_pw",
        || async {
            let db = pool().await;
            let n = sqlx::query(&format!("SELECT count(*) FROM {table}"))
                .fetch_one(&db)
                .await
                .map(|r| r.get::<i64, _>(0))
                .unwrap_or(-1);
            db.close().await;
            (n == 20).then_some(())
        },
    )
    .await;
    let db = pool().await;
    let owner: String = sqlx::query(&format!(
        "SELECT tableowner::text FROM pg_tables WHERE tablename = '{table}'"
    ))
    .fetch_one(&db)
    .await
    .unwrap()
    .get(0);
    db.close().await;
    assert_eq!(owner, ROLE, "the sink logged in as {ROLE}");

    // The source's topic comes from the environment.
    create_connector(
        &w,
        "env-src",
        json!({
            "connector.class": VERIFIABLE, "tasks.max": "1",
            "topic": "${env:PROV_TOPIC}", "throughput": "100", "max.records": "30",
        }),
    )
    .await;
    let t = source_topic.clone();
    let read = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadUncommitted,
            Duration::from_secs(90),
            |r| r.len() >= 30,
        )
    })
    .await
    .unwrap();
    assert!(
        read.len() >= 30,
        "the source wrote to the topic named by PROV_TOPIC"
    );

    // Stored and served configs keep the placeholders.
    let config = w.get("/connectors/pg-sink/config").await.unwrap();
    assert_eq!(config["connection.password"], json!(placeholder));
    let tasks = w.get("/connectors/pg-sink/tasks").await.unwrap();
    assert!(
        tasks.to_string().contains(&placeholder) && !tasks.to_string().contains(&password),
        "task configs hold the placeholder (Apache's reverse transform): {tasks}"
    );
    let config = w.get("/connectors/env-src/config").await.unwrap();
    assert_eq!(config["topic"], "${env:PROV_TOPIC}");
    let stored = kafka::read_all(
        &[&format!("{}-configs", spec.group_id)],
        Isolation::ReadUncommitted,
        Duration::from_secs(10),
    );
    let stored: String = stored.iter().filter_map(|r| r.value.clone()).collect();
    assert!(
        stored.contains(&placeholder),
        "the config topic holds the placeholder"
    );
    assert!(stored.contains("${env:PROV_TOPIC}"));
    assert!(
        !stored.contains(&password),
        "the config topic never holds the secret"
    );

    // A missing file and a path outside allowed.paths: errors on the key, creation refused.
    let mut missing = json!({
        "name": "escape", "connector.class": SINK, "tasks.max": "1", "topics": topic,
        "connection.url": database_url(), "connection.user": ROLE,
        "table.name.format": table,
        "connection.password": format!("${{file:{}:password}}", secrets.join("nope.properties").display()),
    });
    let infos = validate(&w, &missing).await;
    let errors = errors_on(&infos, "connection.password");
    assert!(
        errors.iter().any(|e| e.contains("nope.properties")),
        "a missing file is an error on its key: {infos}"
    );
    missing["connection.password"] = json!("${file:/etc/hostname:password}");
    let infos = validate(&w, &missing).await;
    let errors = errors_on(&infos, "connection.password");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("is not allowed to be accessed")),
        "a path outside allowed.paths is an error on its key: {infos}"
    );
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "escape", "config": missing})),
        )
        .await;
    assert_eq!(status, 400, "creation is refused: {body}");

    let log = w.log_text();
    assert!(log.contains(" DEBUG "), "the debug log was written");
    assert!(
        !log.contains(&password),
        "the password appears in no log line"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_config_placeholder_is_resolved_at_start_up_or_stops_it() {
    // The worker's own config: the group's status topic from the environment.
    let spec = ClusterSpec::new("providers-worker");
    let status_topic = format!("{}-status-from-env", spec.group_id);
    let spec = spec
        .set("config.providers", "env")
        .set(
            "config.providers.env.class",
            "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
        )
        .set("status.storage.topic", "${env:PROV_STATUS_TOPIC}")
        .env("PROV_STATUS_TOPIC", &status_topic);
    let w = spec.start_worker().await;
    create_connector(
        &w,
        "src",
        json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": unique("pw"), "throughput": "10"}),
    )
    .await;
    let t = status_topic.clone();
    let statuses = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadUncommitted,
            Duration::from_secs(60),
            |r| !r.is_empty(),
        )
    })
    .await
    .unwrap();
    assert!(
        !statuses.is_empty(),
        "statuses go to the topic the placeholder named"
    );
    drop(w);

    let spec = spec.set("status.storage.topic", "${env:PROV_NOT_SET_ANYWHERE}");
    let (ok, log) = connect_tests::worker::run_to_exit(&spec).await;
    assert!(!ok, "an unresolvable placeholder stops start-up: {log}");
    assert!(
        log.contains("status.storage.topic") && log.contains("PROV_NOT_SET_ANYWHERE"),
        "the error names the key and the placeholder: {log}"
    );
}
