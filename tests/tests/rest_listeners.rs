//! REST listeners against real workers and real Kafka: HTTPS with PEM certificates generated
//! here (rustls), a follower forwarding to an https-only leader that requires client
//! certificates, `admin.listeners` (admin endpoints only there, 404 elsewhere, and disabled when
//! empty), `response.http.headers.config` and CORS.

use std::path::{Path, PathBuf};
use std::time::Duration;

use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, eventually, free_port};
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";

/// A self-signed certificate for `localhost` and `127.0.0.1`, written as PEM files.
struct TestCert {
    cert: PathBuf,
    key: PathBuf,
    cert_pem: String,
    key_pem: String,
}

fn self_signed(dir: &Path, name: &str) -> TestCert {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    let (cert_pem, key_pem) = (cert.pem(), signing_key.serialize_pem());
    let (cert, key) = (
        dir.join(format!("{name}-cert.pem")),
        dir.join(format!("{name}-key.pem")),
    );
    std::fs::write(&cert, &cert_pem).unwrap();
    std::fs::write(&key, &key_pem).unwrap();
    TestCert {
        cert,
        key,
        cert_pem,
        key_pem,
    }
}

/// A client that trusts only `ca`, optionally presenting `identity` (the same certificate).
fn client_trusting(ca: &TestCert, identity: bool) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .tls_certs_only([reqwest::Certificate::from_pem(ca.cert_pem.as_bytes()).unwrap()]);
    if identity {
        let pem = format!("{}\n{}", ca.key_pem, ca.cert_pem);
        b = b.identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap());
    }
    b.build().unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

async fn get(
    client: &reqwest::Client,
    url: &str,
) -> Result<(u16, reqwest::header::HeaderMap, Value), String> {
    let res = client.get(url).send().await.map_err(|e| format!("{e:?}"))?;
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let text = res.text().await.map_err(|e| e.to_string())?;
    Ok((
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn https_and_http_listeners_at_once() {
    let spec = ClusterSpec::new("rest-https");
    let cert = self_signed(&spec.dir, "worker");
    let http_port = free_port();
    let spec = spec
        .set(
            "listeners",
            &format!("https://127.0.0.1:{{port}}, http://127.0.0.1:{http_port}"),
        )
        .set("listeners.https.ssl.certificate.location", path(&cert.cert))
        .set("listeners.https.ssl.key.location", path(&cert.key))
        .with_client(client_trusting(&cert, false));
    let w = spec.start_worker().await;
    assert!(w.base.starts_with("https://"), "{}", w.base);

    let root = w.get("/").await.unwrap();
    assert_eq!(root["version"], "4.0.0");
    assert!(
        root["kafka_cluster_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    w.wait_healthy().await;

    // The same API on the plain listener.
    let (s, _, body) = get(
        &reqwest::Client::new(),
        &format!("http://127.0.0.1:{http_port}/"),
    )
    .await
    .unwrap();
    assert_eq!((s, &body["version"]), (200, &json!("4.0.0")));

    // The certificate is really the one served: a client that does not trust it is refused,
    // and plain HTTP to the https port gets no answer.
    let other = self_signed(&spec.dir, "other");
    let err = get(&client_trusting(&other, false), &w.url("/"))
        .await
        .unwrap_err();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    assert!(
        get(
            &reqwest::Client::new(),
            &format!("http://127.0.0.1:{}/", w.port)
        )
        .await
        .is_err()
    );

    // The advertised URL (and so the worker id) follows the http listener, as in Connect.
    let name = unique("https-conn");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": name, "config": {
                "connector.class": VERIFIABLE, "tasks.max": "1",
                "topic": unique("https-data"), "throughput": "10"}})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let status = eventually(Duration::from_secs(60), "connector running", || async {
        let st = w.get(&format!("/connectors/{name}/status")).await.ok()?;
        (st["connector"]["state"] == "RUNNING").then_some(st)
    })
    .await;
    assert_eq!(
        status["connector"]["worker_id"],
        format!("127.0.0.1:{http_port}")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn follower_forwards_to_an_https_only_leader_with_client_certificates() {
    let spec = ClusterSpec::new("rest-https-leader");
    let cert = self_signed(&spec.dir, "cluster");
    // The leader: https only, client certificates required (signed by the test CA, which is
    // the self-signed certificate itself).
    let leader_spec = spec
        .clone()
        .set("listeners", "https://127.0.0.1:{port}")
        .set("ssl.certificate.location", path(&cert.cert))
        .set("ssl.key.location", path(&cert.key))
        .set("ssl.ca.location", path(&cert.cert))
        .set("ssl.client.auth", "required")
        .with_client(client_trusting(&cert, true));
    let leader = leader_spec.start_worker().await;
    leader.wait_healthy().await;

    // Without a client certificate the leader refuses the connection.
    let refused = get(&client_trusting(&cert, false), &leader.url("/")).await;
    assert!(refused.is_err(), "{refused:?}");

    // The follower: plain http for users; it trusts the CA and presents the certificate when
    // it forwards (Connect's listeners.https.* settings, which its client uses).
    let follower_spec = spec
        .clone()
        .set("listeners.https.ssl.ca.location", path(&cert.cert))
        .set("listeners.https.ssl.certificate.location", path(&cert.cert))
        .set("listeners.https.ssl.key.location", path(&cert.key));
    let follower = follower_spec.start_worker().await;
    follower.wait_healthy().await;
    eventually(
        Duration::from_secs(60),
        "one leader, one follower",
        || async {
            (leader.is_leader() == Some(true) && follower.is_leader() == Some(false)).then_some(())
        },
    )
    .await;

    // Leader-only writes sent to the follower are forwarded over https.
    let mut names = Vec::new();
    for _ in 0..2 {
        let name = unique("fwd");
        let (s, b) = follower
            .send(
                "POST",
                "/connectors",
                Some(json!({"name": name, "config": {
                    "connector.class": VERIFIABLE, "tasks.max": "2",
                    "topic": unique("fwd-data"), "throughput": "10"}})),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        assert_eq!(b["name"], name.as_str());
        names.push(name);
    }
    let (s, b) = follower
        .send("PUT", &format!("/connectors/{}/stop", names[0]), None)
        .await;
    assert_eq!(s, 204, "{b}");
    // The running connector's tasks run, wherever it landed (a follower's task configs
    // reach the leader as signed internal requests over https).
    eventually(Duration::from_secs(90), "tasks running", || async {
        connect_tests::worker::running_tasks(&follower, &names[1], 2).await
    })
    .await;
    let (s, b) = follower
        .send("DELETE", &format!("/connectors/{}", names[1]), None)
        .await;
    assert_eq!(s, 204, "{b}");
    let listed = leader.get("/connectors").await.unwrap();
    assert_eq!(listed, json!([names[0].as_str()]));
}

#[tokio::test(flavor = "multi_thread")]
async fn admin_listeners_headers_and_cors() {
    let spec = ClusterSpec::new("rest-admin");
    let cert = self_signed(&spec.dir, "admin");
    let admin_port = free_port();
    let admin_spec = spec
        .clone()
        .set("admin.listeners", &format!("https://127.0.0.1:{admin_port}"))
        // Only the admin listener's TLS settings (their own prefix).
        .set(
            "admin.listeners.https.ssl.certificate.location",
            path(&cert.cert),
        )
        .set("admin.listeners.https.ssl.key.location", path(&cert.key))
        .set(
            "response.http.headers.config",
            r#"set X-Frame-Options: DENY, add Cache-Control: no-store,"add X-Note: a, b", setDate Expires: 3600000"#,
        )
        .set("access.control.allow.origin", "http://ui.example")
        .set("access.control.allow.methods", "GET,POST,PUT,DELETE");
    let w = admin_spec.start_worker().await;
    let admin = client_trusting(&cert, false);
    let admin_url = |p: &str| format!("https://127.0.0.1:{admin_port}{p}");

    // Admin endpoints: on the admin listener only.
    let (s, _, body) = get(&admin, &admin_url("/admin/loggers")).await.unwrap();
    assert_eq!(s, 200, "{body}");
    assert!(body["root"]["level"].is_string(), "{body}");
    let (s, _, body) = get(&admin, &admin_url("/admin/loggers/connect_worker"))
        .await
        .unwrap();
    assert_eq!(s, 200, "{body}");
    let res = admin
        .put(admin_url("/admin/loggers/connect_worker::rest"))
        .json(&json!({"level": "DEBUG"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    for p in ["/admin/loggers", "/admin/loggers/root"] {
        let (s, b) = w.send("GET", p, None).await;
        assert_eq!(
            (s, b),
            (
                404,
                json!({"error_code": 404, "message": "HTTP 404 Not Found"})
            ),
            "{p} on the main listener"
        );
    }
    // The admin listener serves nothing else (Connect's admin context).
    let (s, _, body) = get(&admin, &admin_url("/connectors")).await.unwrap();
    assert_eq!(s, 404, "{body}");
    assert_eq!(w.get("/connectors").await.unwrap(), json!([]));

    // Response headers on every response, errors included, on both listeners.
    let (s, headers, _) = get(&reqwest::Client::new(), &w.url("/")).await.unwrap();
    assert_eq!(s, 200);
    let (s404, headers404, _) = get(&reqwest::Client::new(), &w.url("/no/such/path"))
        .await
        .unwrap();
    assert_eq!(s404, 404);
    let (_, admin_headers, _) = get(&admin, &admin_url("/admin/loggers")).await.unwrap();
    for h in [&headers, &headers404, &admin_headers] {
        assert_eq!(h["x-frame-options"], "DENY", "{h:?}");
        assert_eq!(h["cache-control"], "no-store", "{h:?}");
        assert_eq!(h["x-note"], "a, b", "{h:?}");
        let expires = h["expires"].to_str().unwrap();
        assert!(expires.ends_with(" GMT"), "{expires}");
    }

    // CORS: a preflight from the allowed origin, and the origin echoed on a simple request.
    let http = reqwest::Client::new();
    let res = http
        .request(reqwest::Method::OPTIONS, w.url("/connectors"))
        .header("Origin", "http://ui.example")
        .header("Access-Control-Request-Method", "PUT")
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "http://ui.example"
    );
    let methods = res.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        methods.contains("PUT") && methods.contains("DELETE"),
        "{methods}"
    );
    let res = http
        .get(w.url("/connectors"))
        .header("Origin", "http://ui.example")
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.headers()["access-control-allow-origin"],
        "http://ui.example"
    );
    let res = http
        .get(w.url("/connectors"))
        .header("Origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert!(res.headers().get("access-control-allow-origin").is_none());

    // admin.listeners set to empty: admin endpoints disabled everywhere.
    let disabled = spec.clone().set("admin.listeners", "").start_worker().await;
    let (s, b) = disabled.send("GET", "/admin/loggers", None).await;
    assert_eq!((s, &b["error_code"]), (404, &json!(404)), "{b}");
    assert_eq!(disabled.get("/").await.unwrap()["version"], "4.0.0");
    // And unset: served on the main listener.
    let default = spec.start_worker().await;
    let (s, b) = default.send("GET", "/admin/loggers", None).await;
    assert_eq!(s, 200, "{b}");
}
