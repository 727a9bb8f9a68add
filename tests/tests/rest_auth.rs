//! REST basic authentication compatible with Apache's `BasicAuthSecurityRestExtension`, on real
//! workers and a real Kafka: the JAAS file comes from `KAFKA_OPTS` as in Apache's deployments;
//! requests without or with wrong credentials get 401 with Connect's error body; with the right
//! ones the whole connector lifecycle works through a follower (forwarding carries the
//! credentials), and the signed worker-to-worker requests (task configs, zombie fencing of
//! exactly-once tasks) still pass. An extension this worker does not have stops start-up.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, run_to_exit, running_tasks};
use serde_json::{Value, json};

const EXTENSION: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

/// A JAAS file as Apache's documentation writes it, and its credentials file.
fn write_jaas(dir: &Path, users: &str) -> std::path::PathBuf {
    let credentials = dir.join("credentials.properties");
    std::fs::write(&credentials, users).unwrap();
    let jaas = dir.join("rest-jaas.conf");
    std::fs::write(
        &jaas,
        format!(
            "KafkaConnect {{\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\"{}\";\n}};\n",
            credentials.display()
        ),
    )
    .unwrap();
    jaas
}

fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// A client that sends `authorization` with every request.
fn client_with(authorization: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        authorization.parse().unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// `(status, body)` of a request to `w` with `authorization` (or none).
async fn raw(
    w: &WorkerProc,
    method: &str,
    path: &str,
    authorization: Option<&str>,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut req = client.request(method.parse().unwrap(), w.url(path));
    if let Some(a) = authorization {
        req = req.header(reqwest::header::AUTHORIZATION, a);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let body = res.json().await.unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn basic_auth_guards_every_endpoint_and_workers_still_cooperate() {
    let spec = ClusterSpec::new("rest-auth")
        .set("exactly.once.source.support", "enabled")
        .set("rest.extension.classes", EXTENSION);
    let jaas = write_jaas(&spec.dir, "alice=wonder-land-42\nbob=builder\n");
    let spec = spec
        .env(
            "KAFKA_OPTS",
            &format!(
                "-Xmx256m -Djava.security.auth.login.config={}",
                jaas.display()
            ),
        )
        .with_client(client_with(&basic("alice", "wonder-land-42")));
    let workers = [
        spec.start_worker().await,
        spec.start_worker().await,
        spec.start_worker().await,
    ];

    // Without credentials, with a wrong password, an unknown user, another scheme: 401 with
    // Connect's error body, on every kind of endpoint.
    for w in &workers {
        for path in ["/", "/connectors", "/connector-plugins", "/admin/loggers"] {
            for auth in [
                None,
                Some(basic("alice", "wonder-land-43")),
                Some(basic("mallory", "wonder-land-42")),
                Some("Bearer wonder-land-42".to_owned()),
            ] {
                let (status, body) = raw(w, "GET", path, auth.as_deref()).await;
                assert_eq!(status, 401, "GET {path} with {auth:?}: {body}");
                assert_eq!(body["error_code"], 401, "{body}");
                assert_eq!(
                    body["message"], "User cannot access the resource.",
                    "{body}"
                );
            }
        }
        let (status, _) = raw(w, "GET", "/connectors", Some(&basic("bob", "builder"))).await;
        assert_eq!(status, 200, "bob's credentials are valid too");
    }
    // The internal endpoints skip authentication as in Apache, but are not open: an unsigned
    // task-config write is refused by the signature check.
    let client = reqwest::Client::new();
    let res = client
        .post(workers[0].url("/connectors/nobody/tasks"))
        .json(&json!([]))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    assert!(
        status != 401 && (400..500).contains(&status),
        "an unsigned internal request is refused by its signature check, not by authentication: {status}"
    );

    // The whole lifecycle through a follower: every leader-only change is forwarded with the
    // caller's credentials.
    let leader = eventually(Duration::from_secs(60), "a leader", || async {
        workers.iter().position(|w| w.is_leader() == Some(true))
    })
    .await;
    let follower = &workers[(leader + 1) % 3];
    let topic = unique("rest-auth");
    let config = json!({
        "connector.class": VERIFIABLE,
        "tasks.max": "3",
        "topic": topic,
        "throughput": "50",
        "exactly.once.support": "required",
    });
    let (status, body) = follower
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "guarded", "config": config})),
        )
        .await;
    assert_eq!(status, 201, "create through a follower: {body}");
    // Exactly-once tasks start only after the leader fenced the previous generation and took
    // the task configs: both are worker-to-worker requests, signed, not authenticated.
    eventually(
        Duration::from_secs(90),
        "3 exactly-once tasks running",
        || running_tasks(follower, "guarded", 3),
    )
    .await;
    for (method, path, want) in [
        ("PUT", "/connectors/guarded/pause", 202),
        ("PUT", "/connectors/guarded/resume", 202),
        ("POST", "/connectors/guarded/restart?includeTasks=true", 202),
        ("POST", "/connectors/guarded/tasks/0/restart", 204),
    ] {
        let (status, body) = follower.send(method, path, None).await;
        assert_eq!(status, want, "{method} {path} through a follower: {body}");
    }
    let (status, body) = follower
        .send(
            "PUT",
            "/connectors/guarded/config",
            Some(json!({
                "connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic,
                "throughput": "50", "exactly.once.support": "required",
            })),
        )
        .await;
    assert_eq!(status, 200, "update through a follower: {body}");
    eventually(
        Duration::from_secs(90),
        "2 tasks running after the update",
        || running_tasks(follower, "guarded", 2),
    )
    .await;
    let (status, body) = follower.send("DELETE", "/connectors/guarded", None).await;
    assert_eq!(status, 204, "delete through a follower: {body}");
    eventually(Duration::from_secs(30), "the connector is gone", || async {
        let list = workers[leader].get("/connectors").await.ok()?;
        (list == json!([])).then_some(())
    })
    .await;
    for w in &workers {
        assert!(
            !w.log_text().contains("wonder-land-42"),
            "a password reached the log of {}",
            w.worker_id()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_extension_this_worker_lacks_stops_start_up_naming_the_key() {
    let spec = ClusterSpec::new("rest-auth-unknown").set(
        "rest.extension.classes",
        "com.example.connect.OidcRestExtension",
    );
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok, "the worker must not start: {log}");
    assert!(
        log.contains("rest.extension.classes")
            && log.contains("com.example.connect.OidcRestExtension"),
        "the error names the key and the class: {log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_basic_auth_extension_without_a_jaas_file_stops_start_up() {
    let spec = ClusterSpec::new("rest-auth-nojaas")
        .set("rest.extension.classes", EXTENSION)
        .env("KAFKA_OPTS", "-Xmx256m");
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok, "the worker must not run open: {log}");
    assert!(
        log.contains("rest.extension.classes") && log.contains("KAFKA_OPTS"),
        "the error says where the JAAS file is expected: {log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn our_jaas_key_alone_turns_authentication_on() {
    let spec = ClusterSpec::new("rest-auth-key");
    let jaas = write_jaas(&spec.dir, "carol=c4r0l-pw\n");
    let spec = spec
        .set("rest.basic.auth.jaas.file", jaas.to_str().unwrap())
        .with_client(client_with(&basic("carol", "c4r0l-pw")));
    let w = spec.start_worker().await;
    assert_eq!(raw(&w, "GET", "/connectors", None).await.0, 401);
    assert_eq!(w.send("GET", "/connectors", None).await.0, 200);
}
