//! The REST API against real worker processes and real Kafka: a walk through every public
//! endpoint sent to a follower (so leader-only writes are forwarded), and bad input (malformed
//! JSON, wrong types, unknown classes, oversized bodies, unsigned or badly signed internal
//! requests) answered with Connect's error body while the worker keeps serving.

use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use connect_worker::herder::session_key;
use serde_json::{Value, json};

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

fn assert_keys(v: &Value, expected: &[&str]) {
    let mut e: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    e.sort();
    assert_eq!(keys(v), e, "keys of {v}");
}

fn assert_error(status: u16, body: &Value, code: u16, contains: &str) {
    assert_eq!(status, code, "status of {body}");
    assert_keys(body, &["error_code", "message"]);
    assert_eq!(body["error_code"], code, "{body}");
    let m = body["message"].as_str().unwrap();
    assert!(
        m.contains(contains),
        "message {m:?} should contain {contains:?}"
    );
}

/// Two workers; returns (leader, follower) once both are healthy and agree.
async fn two_workers(spec: &ClusterSpec) -> (WorkerProc, WorkerProc) {
    let a = spec.start_worker().await;
    a.wait_healthy().await;
    let b = spec.start_worker().await;
    b.wait_healthy().await;
    eventually(
        Duration::from_secs(60),
        "one leader, one follower",
        || async {
            (a.is_leader().is_some() && b.is_leader().is_some() && a.is_leader() != b.is_leader())
                .then_some(())
        },
    )
    .await;
    if a.is_leader() == Some(true) {
        (a, b)
    } else {
        (b, a)
    }
}

async fn status_of(w: &WorkerProc, name: &str) -> Value {
    w.get(&format!("/connectors/{name}/status"))
        .await
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_endpoint_through_a_follower() {
    let spec = ClusterSpec::new("rest-walk");
    let (_leader, f) = two_workers(&spec).await;
    let topic = unique("rest-walk-data");
    let http = reqwest::Client::new();

    // Root, health, plugins.
    let root = f.get("/").await.unwrap();
    assert_keys(&root, &["version", "commit", "kafka_cluster_id"]);
    let (s, h) = f.send("GET", "/health", None).await;
    assert_eq!((s, h["status"].as_str()), (200, Some("healthy")));
    let plugins = f.get("/connector-plugins").await.unwrap();
    assert!(
        plugins
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["type"] == "source" || p["type"] == "sink")
    );
    assert!(
        plugins.as_array().unwrap().iter().any(|p| p["class"]
            .as_str()
            .unwrap()
            .ends_with("VerifiableSourceConnector")),
        "{plugins}"
    );
    let all = f
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .unwrap();
    assert!(all.as_array().unwrap().len() > plugins.as_array().unwrap().len());
    let defs = f
        .get("/connector-plugins/VerifiableSource/config")
        .await
        .unwrap();
    assert!(
        defs.as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "tasks.max")
    );
    assert_keys(
        &defs[0],
        &[
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "order_in_group",
            "width",
            "display_name",
            "dependents",
        ],
    );

    // Validate: valid, invalid, exactly-once errors.
    let good = json!({"name": "src", "connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic, "throughput": "20"});
    let (s, v) = f
        .send(
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            Some(good.clone()),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_keys(&v, &["name", "error_count", "groups", "configs"]);
    assert_eq!(v["error_count"], 0, "{v}");
    let (s, v) = f
        .send(
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            Some(json!({"connector.class": VERIFIABLE, "tasks.max": "many", "topic": topic})),
        )
        .await;
    assert_eq!(s, 200);
    assert!(v["error_count"].as_i64().unwrap() > 0, "{v}");
    let (s, v) = f
        .send(
            "PUT",
            "/connector-plugins/VerifiableSourceConnector/config/validate",
            Some(json!({"connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic, "exactly.once.support": "required"})),
        )
        .await;
    assert_eq!(s, 200);
    let eos_errors: Vec<String> = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "exactly.once.support")
        .flat_map(|c| {
            c["value"]["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_owned())
        })
        .collect();
    assert!(
        eos_errors
            .iter()
            .any(|e| e == "This worker does not have exactly-once source support enabled."),
        "{eos_errors:?}"
    );

    // Create (forwarded to the leader): 201, Location, ConnectorInfo.
    let res = http
        .post(f.url("/connectors"))
        .json(&json!({"name": "src", "config": good}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 201);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.ends_with("/connectors/src"), "{location}");
    let info: Value = res.json().await.unwrap();
    assert_keys(&info, &["name", "config", "tasks", "type"]);
    assert_eq!(info["type"], "source");
    let (s, b) = f
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "src", "config": good})),
        )
        .await;
    assert_error(s, &b, 409, "Connector src already exists");
    let (s, b) = f
        .send(
            "POST",
            "/connectors",
            Some(
                json!({"name": "bad", "config": {"connector.class": VERIFIABLE, "tasks.max": "x"}}),
            ),
        )
        .await;
    assert_error(
        s,
        &b,
        400,
        "Connector configuration is invalid and contains the following",
    );

    // List, expands, info, config.
    let list = f.get("/connectors").await.unwrap();
    assert_eq!(list, json!(["src"]));
    let st = eventually(
        Duration::from_secs(60),
        "src and 2 tasks RUNNING",
        || async {
            let st = status_of(&f, "src").await;
            (st["connector"]["state"] == "RUNNING"
                && st["tasks"]
                    .as_array()
                    .is_some_and(|t| t.len() == 2 && t.iter().all(|t| t["state"] == "RUNNING")))
            .then_some(st)
        },
    )
    .await;
    assert_keys(&st, &["name", "connector", "tasks", "type"]);
    assert_keys(&st["connector"], &["state", "worker_id", "version"]);
    assert_keys(&st["tasks"][0], &["id", "state", "worker_id", "version"]);
    let ex = f.get("/connectors?expand=status").await.unwrap();
    assert_keys(&ex["src"], &["status"]);
    let ex = f.get("/connectors?expand=info").await.unwrap();
    assert_keys(&ex["src"], &["info"]);
    let ex = f
        .get("/connectors?expand=status&expand=info")
        .await
        .unwrap();
    assert_keys(&ex["src"], &["info", "status"]);
    let info = f.get("/connectors/src").await.unwrap();
    assert_eq!(info["tasks"].as_array().unwrap().len(), 2);
    assert_keys(&info["tasks"][0], &["connector", "task"]);
    let config = f.get("/connectors/src/config").await.unwrap();
    assert_eq!(config["name"], "src");

    // Config update (PUT 200) and PATCH.
    let mut updated = good.clone();
    updated["throughput"] = json!("30");
    let (s, b) = f.send("PUT", "/connectors/src/config", Some(updated)).await;
    assert_eq!(s, 200, "{b}");
    assert_keys(&b, &["name", "config", "tasks", "type"]);
    let (s, b) = f
        .send(
            "PATCH",
            "/connectors/src/config",
            Some(json!({"throughput": "40"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["config"]["throughput"], "40");
    let (s, b) = f
        .send("PATCH", "/connectors/nope/config", Some(json!({"a": "b"})))
        .await;
    assert_error(s, &b, 404, "Connector nope not found");

    // Tasks, task status, topics.
    let tasks = eventually(Duration::from_secs(30), "2 task configs", || async {
        let t = f.get("/connectors/src/tasks").await.ok()?;
        (t.as_array()?.len() == 2).then_some(t)
    })
    .await;
    assert_keys(&tasks[0], &["id", "config"]);
    assert!(tasks[0]["config"]["task.class"].is_string());
    let ts = eventually(Duration::from_secs(30), "task 0 status", || async {
        f.get("/connectors/src/tasks/0/status").await.ok()
    })
    .await;
    assert_keys(&ts, &["id", "state", "worker_id", "version"]);
    let (s, b) = f.send("GET", "/connectors/src/tasks/9/status", None).await;
    assert_error(s, &b, 404, "No status found for task src-9");
    // KIP-558: the task records the topic once its first record is acknowledged.
    let topics = eventually(Duration::from_secs(30), "active topic recorded", || async {
        let t = f.get("/connectors/src/topics").await.ok()?;
        (t["src"]["topics"] == json!([topic])).then_some(t)
    })
    .await;
    assert_keys(&topics, &["src"]);
    let (s, _) = f.send("PUT", "/connectors/src/topics/reset", None).await;
    assert_eq!(s, 202);

    // Restarts: 204 plain, 202 with planned states, task restart (to the task's owner).
    let (s, _) = f.send("POST", "/connectors/src/restart", None).await;
    assert_eq!(s, 204);
    eventually(
        Duration::from_secs(30),
        "src RUNNING after restart",
        || async { (status_of(&f, "src").await["connector"]["state"] == "RUNNING").then_some(()) },
    )
    .await;
    let (s, b) = f
        .send(
            "POST",
            "/connectors/src/restart?includeTasks=true&onlyFailed=false",
            None,
        )
        .await;
    assert_eq!(s, 202, "{b}");
    assert_eq!(b["connector"]["state"], "RESTARTING");
    assert!(
        b["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["state"] == "RESTARTING")
    );
    for t in 0..2 {
        let (s, b) = eventually(Duration::from_secs(30), "task restart accepted", || async {
            let (s, b) = f
                .send("POST", &format!("/connectors/src/tasks/{t}/restart"), None)
                .await;
            (s != 409).then_some((s, b))
        })
        .await;
        assert_eq!(s, 204, "restart task {t}: {b}");
    }
    let (s, b) = f.send("POST", "/connectors/nope/restart", None).await;
    assert_error(s, &b, 404, "nope");

    // Pause, resume.
    let (s, _) = f.send("PUT", "/connectors/src/pause", None).await;
    assert_eq!(s, 202);
    eventually(Duration::from_secs(30), "src PAUSED", || async {
        (status_of(&f, "src").await["connector"]["state"] == "PAUSED").then_some(())
    })
    .await;
    let (s, _) = f.send("PUT", "/connectors/src/resume", None).await;
    assert_eq!(s, 202);
    eventually(Duration::from_secs(30), "src RUNNING again", || async {
        (status_of(&f, "src").await["connector"]["state"] == "RUNNING").then_some(())
    })
    .await;

    // Offsets: readable while running, only modifiable once stopped.
    let offsets = eventually(
        Duration::from_secs(30),
        "source offsets committed",
        || async {
            let o = f.get("/connectors/src/offsets").await.ok()?;
            (!o["offsets"].as_array()?.is_empty()).then_some(o)
        },
    )
    .await;
    assert_keys(&offsets["offsets"][0], &["partition", "offset"]);
    let alter = json!({"offsets": [{"partition": {"id": 5}, "offset": {"seqno": 7}}]});
    let (s, b) = f
        .send("PATCH", "/connectors/src/offsets", Some(alter.clone()))
        .await;
    assert_error(s, &b, 400, "Connectors must be in the STOPPED state");
    let (s, _) = f.send("PUT", "/connectors/src/stop", None).await;
    assert_eq!(s, 204);
    eventually(
        Duration::from_secs(30),
        "src STOPPED with no tasks",
        || async {
            let st = status_of(&f, "src").await;
            let tasks = f.get("/connectors/src/tasks").await.ok()?;
            (st["connector"]["state"] == "STOPPED"
                && tasks.as_array().is_some_and(|t| t.is_empty()))
            .then_some(())
        },
    )
    .await;
    let (s, b) = f
        .send(
            "PATCH",
            "/connectors/src/offsets",
            Some(json!({"offsets": []})),
        )
        .await;
    assert_error(s, &b, 400, "Partitions / offsets need to be provided");
    let (s, b) = f
        .send(
            "PATCH",
            "/connectors/src/offsets",
            Some(json!({"offsets": [{"partition": {"file": "x"}, "offset": null}]})),
        )
        .await;
    assert_error(s, &b, 400, "Failed to modify offsets for connector src");
    let (s, b) = f
        .send("PATCH", "/connectors/src/offsets", Some(alter))
        .await;
    assert_eq!(s, 200, "{b}");
    assert_keys(&b, &["message"]);
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("altered successfully"),
        "{b}"
    );
    let o = f.get("/connectors/src/offsets").await.unwrap();
    assert!(
        o["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["partition"] == json!({"id": 5}) && e["offset"] == json!({"seqno": 7})),
        "{o}"
    );
    let (s, b) = f.send("DELETE", "/connectors/src/offsets", None).await;
    assert_eq!(s, 200, "{b}");
    assert!(
        b["message"]
            .as_str()
            .unwrap()
            .contains("reset successfully"),
        "{b}"
    );
    let o = f.get("/connectors/src/offsets").await.unwrap();
    assert_eq!(o, json!({"offsets": []}));

    // A sink's offsets are its consumer group's.
    let sink_topic = unique("rest-walk-sink");
    kafka::create_topics(&[&sink_topic], 2).await;
    let file = spec.dir.join("sink.txt");
    let (s, b) = f
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "snk", "initial_state": "STOPPED", "config": {"connector.class": FILE_SINK, "topics": sink_topic, "file": file.to_string_lossy()}})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = f
        .send(
            "PATCH",
            "/connectors/snk/offsets",
            Some(json!({"offsets": [{"partition": {"kafka_topic": sink_topic, "kafka_partition": 1}, "offset": {"kafka_offset": 3}}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let o = f.get("/connectors/snk/offsets").await.unwrap();
    assert_eq!(
        o,
        json!({"offsets": [{"partition": {"kafka_topic": sink_topic, "kafka_partition": 1}, "offset": {"kafka_offset": 3}}]})
    );
    let (s, b) = f
        .send(
            "PATCH",
            "/connectors/snk/offsets",
            Some(json!({"offsets": [{"partition": {"kafka_topic": sink_topic, "kafka_partition": "x"}, "offset": null}]})),
        )
        .await;
    assert_error(
        s,
        &b,
        400,
        "Failed to parse the following Kafka partition value in the provided offsets: 'x'",
    );
    let (s, b) = f.send("DELETE", "/connectors/snk/offsets", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        f.get("/connectors/snk/offsets").await.unwrap(),
        json!({"offsets": []})
    );

    // Loggers.
    let loggers = f.get("/admin/loggers").await.unwrap();
    assert_keys(&loggers["root"], &["level", "last_modified"]);
    let (s, b) = f
        .send(
            "PUT",
            "/admin/loggers/connect_worker::rest",
            Some(json!({"level": "debug"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b, json!(["connect_worker::rest"]));
    let l = f.get("/admin/loggers/connect_worker::rest").await.unwrap();
    assert_eq!(l["level"], "DEBUG");
    assert!(l["last_modified"].is_i64());
    let (s, b) = f
        .send("PUT", "/admin/loggers/x", Some(json!({"level": "LOUD"})))
        .await;
    assert_error(s, &b, 404, "invalid log level 'LOUD'.");
    let (s, b) = f.send("PUT", "/admin/loggers/x", Some(json!({}))).await;
    assert_error(
        s,
        &b,
        400,
        "Desired 'level' parameter was not specified in request.",
    );
    let (s, _) = f
        .send(
            "PUT",
            "/admin/loggers/connect_worker?scope=cluster",
            Some(json!({"level": "INFO"})),
        )
        .await;
    assert_eq!(s, 204);

    // Delete (forwarded), then 404s.
    for name in ["src", "snk"] {
        let (s, b) = f.send("DELETE", &format!("/connectors/{name}"), None).await;
        assert_eq!(s, 204, "{b}");
    }
    let (s, b) = f.send("GET", "/connectors/src", None).await;
    assert_error(s, &b, 404, "Connector src not found");
    let (s, b) = f.send("DELETE", "/connectors/src", None).await;
    assert_error(s, &b, 404, "Connector src not found");
    assert_eq!(f.get("/connectors").await.unwrap(), json!([]));
}

/// The session key the leader wrote to the config topic.
fn session_key_from_topic(spec: &ClusterSpec) -> Option<(Vec<u8>, String)> {
    let topic = format!("{}-configs", spec.group_id);
    let records = kafka::read_all(
        &[&topic],
        Isolation::ReadUncommitted,
        Duration::from_secs(20),
    );
    let r = records
        .iter()
        .rev()
        .find(|r| r.key.as_deref() == Some("session-key"))?;
    let v: Value = serde_json::from_str(r.value.as_deref()?).ok()?;
    Some((
        session_key::decode_key(v["key"].as_str()?)?,
        v["algorithm"].as_str()?.to_owned(),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_connects_error_body_and_the_worker_keeps_serving() {
    let spec = ClusterSpec::new("rest-bad").set("rest.request.max.bytes", "4096");
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    let http = reqwest::Client::new();
    let raw = |method: reqwest::Method, path: &str, body: &'static str| {
        let req = http
            .request(method, w.url(path))
            .header("content-type", "application/json")
            .body(body);
        async move {
            let res = req.send().await.unwrap();
            let s = res.status().as_u16();
            let b: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap_or(Value::Null);
            (s, b)
        }
    };

    // Malformed JSON and wrong types: 400 naming the problem (Connect: 500).
    let (s, b) = raw(reqwest::Method::POST, "/connectors", "{not json").await;
    assert_error(s, &b, 400, "Malformed JSON request body");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "x", "config": ["a"]})),
        )
        .await;
    assert_error(s, &b, 400, "Malformed JSON request body");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "x", "config": {"a": {"b": 1}}})),
        )
        .await;
    assert_error(s, &b, 400, "the value of config a must be a string");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "x", "config": {}, "extra": 1})),
        )
        .await;
    assert_error(s, &b, 400, "unknown field `extra`");
    let (s, b) = w
        .send(
            "PUT",
            "/connectors/x/config",
            Some(json!({"name": "y", "connector.class": VERIFIABLE})),
        )
        .await;
    assert_error(s, &b, 400, "doesn't match connector name in the URL");
    // A name too long for the group protocol's i16-length strings: 400 naming the bound.
    let long = "n".repeat(2000);
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": long, "config": {"connector.class": VERIFIABLE, "topic": "t"}})),
        )
        .await;
    assert_error(s, &b, 400, "Connector names may be at most 1024 bytes long");
    let (s, b) = w
        .send(
            "PUT",
            &format!("/connectors/{long}/config"),
            Some(json!({"connector.class": VERIFIABLE, "topic": "t"})),
        )
        .await;
    assert_error(s, &b, 400, "Connector names may be at most 1024 bytes long");
    let (s, b) = raw(
        reqwest::Method::GET,
        "/connectors/x/tasks/notanumber/status",
        "",
    )
    .await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(b["error_code"], 400);

    // Unknown connector class.
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(
                json!({"name": "x", "config": {"connector.class": "com.example.NoSuchConnector"}}),
            ),
        )
        .await;
    assert_error(s, &b, 400, "com.example.NoSuchConnector");
    let (s, b) = w
        .send(
            "PUT",
            "/connector-plugins/NoSuch/config/validate",
            Some(json!({"connector.class": "NoSuch"})),
        )
        .await;
    assert_error(s, &b, 400, "NoSuch");

    // Oversized body: 413 with Connect's body.
    let big = format!(
        r#"{{"name":"big","config":{{"pad":"{}"}}}}"#,
        "x".repeat(10_000)
    );
    let res = http
        .post(w.url("/connectors"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    let s = res.status().as_u16();
    let b: Value = res.json().await.unwrap();
    assert_error(s, &b, 413, "too large");

    // Unknown path and method.
    let (s, b) = w.send("GET", "/no/such/path", None).await;
    assert_error(s, &b, 404, "HTTP 404 Not Found");
    let (s, b) = w.send("DELETE", "/connector-plugins", None).await;
    assert_error(s, &b, 405, "Method Not Allowed");

    // Internal endpoints: missing, unknown-algorithm and wrong signatures.
    let (s, b) = w.send("POST", "/connectors/x/tasks", Some(json!([]))).await;
    assert_error(s, &b, 400, "Internal request missing required signature");
    let (s, b) = w.send("PUT", "/connectors/x/fence", None).await;
    assert_error(s, &b, 400, "Internal request missing required signature");
    let signed = |alg: &str, sig: &str, body: &'static str| {
        http.post(w.url("/connectors/x/tasks"))
            .header("content-type", "application/json")
            .header("X-Connect-Request-Signature-Algorithm", alg)
            .header("X-Connect-Authorization", sig)
            .body(body)
    };
    let (s, b) = {
        let res = signed("HmacMD5", "AAAA", "[]").send().await.unwrap();
        (res.status().as_u16(), res.json::<Value>().await.unwrap())
    };
    assert_error(
        s,
        &b,
        400,
        "does not support the 'HmacMD5' key signing algorithm",
    );
    let (s, b) = eventually(
        Duration::from_secs(30),
        "a session key is known",
        || async {
            let res = signed(
                "HmacSHA256",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                "[]",
            )
            .send()
            .await
            .unwrap();
            let s = res.status().as_u16();
            let b = res.json::<Value>().await.unwrap();
            (s != 503).then_some((s, b))
        },
    )
    .await;
    assert_error(s, &b, 403, "Internal request contained invalid signature.");
    let (s, b) = {
        let res = signed("HmacSHA256", "not base64!", "[]")
            .send()
            .await
            .unwrap();
        (res.status().as_u16(), res.json::<Value>().await.unwrap())
    };
    assert_error(s, &b, 400, "Base64");

    // A correctly signed request passes the check (the connector does not exist: 404).
    let (key, alg) = eventually(Duration::from_secs(30), "session-key record", || async {
        session_key_from_topic(&spec)
    })
    .await;
    let sig = session_key::sign(&alg, &key, b"[]").unwrap();
    let res = signed(&alg, &sig, "[]").send().await.unwrap();
    let s = res.status().as_u16();
    let b: Value = res.json().await.unwrap();
    assert_error(s, &b, 404, "Connector x not found");
    let sig = session_key::sign(&alg, &key, b"").unwrap();
    let res = http
        .put(w.url("/connectors/x/fence"))
        .header("X-Connect-Request-Signature-Algorithm", &alg)
        .header("X-Connect-Authorization", sig)
        .send()
        .await
        .unwrap();
    let s = res.status().as_u16();
    let b: Value = res.json().await.unwrap();
    assert_error(s, &b, 404, "Connector x not found");

    // Still serving.
    let root = w.get("/").await.unwrap();
    assert_keys(&root, &["version", "commit", "kafka_cluster_id"]);
    let (s, h) = w.send("GET", "/health", None).await;
    assert_eq!((s, h["status"].as_str()), (200, Some("healthy")));
}

/// A source connector with its own `offsets.storage.topic` under exactly-once: `GET` reads that
/// topic, `PATCH`/`DELETE` write there, and altering first fences the transactional ids of the
/// connector's last task generation (a zombie holding one cannot commit afterwards).
#[tokio::test(flavor = "multi_thread")]
async fn source_offsets_use_the_connectors_topic_and_fence_zombies_first() {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer};

    let spec = ClusterSpec::new("rest-eos-offsets").set("exactly.once.source.support", "enabled");
    let w = spec.start_worker().await;
    w.wait_healthy().await;
    let own_topic = unique("rest-eos-own-offsets");
    let data = unique("rest-eos-data");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(json!({"name": "src", "config": {
                "connector.class": VERIFIABLE, "tasks.max": "2", "topic": data,
                "throughput": "50", "offsets.storage.topic": own_topic}})),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    eventually(Duration::from_secs(90), "2 tasks running", || async {
        connect_tests::worker::running_tasks(&w, "src", 2).await
    })
    .await;
    eventually(Duration::from_secs(60), "offsets committed", || async {
        let o = w.get("/connectors/src/offsets").await.ok()?;
        (o["offsets"].as_array()?.len() == 2).then_some(())
    })
    .await;

    // An offset only the connector's own topic holds is listed.
    kafka::produce(
        &own_topic,
        [(
            Some(r#"["src",{"id":7}]"#.to_owned()),
            Some(r#"{"seqno":3}"#.to_owned()),
        )]
        .into_iter(),
    )
    .await;
    let o = w.get("/connectors/src/offsets").await.unwrap();
    assert!(
        o["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["partition"] == json!({"id": 7}) && e["offset"] == json!({"seqno": 3})),
        "{o}"
    );

    let (s, _) = w.send("PUT", "/connectors/src/stop", None).await;
    assert_eq!(s, 204);
    eventually(Duration::from_secs(30), "src stopped", || async {
        let tasks = w.get("/connectors/src/tasks").await.ok()?;
        tasks.as_array().is_some_and(|t| t.is_empty()).then_some(())
    })
    .await;

    // A zombie of task 1 with an open transaction.
    let zombie_id = format!("{}-src-1", spec.group_id);
    let zombie: BaseProducer = kafka::client_config()
        .set("transactional.id", &zombie_id)
        .create()
        .unwrap();
    zombie.init_transactions(Duration::from_secs(30)).unwrap();
    zombie.begin_transaction().unwrap();
    zombie
        .send(BaseRecord::to(&data).key("zombie").payload("late"))
        .map_err(|(e, _)| e)
        .unwrap();
    zombie.flush(Duration::from_secs(10)).unwrap();

    let (s, b) = w
        .send(
            "PATCH",
            "/connectors/src/offsets",
            Some(json!({"offsets": [{"partition": {"id": 9}, "offset": {"seqno": 42}}]})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let fenced = zombie.commit_transaction(Duration::from_secs(30));
    assert!(
        fenced.is_err(),
        "the zombie committed after the offsets were altered"
    );
    assert!(
        w.log_text()
            .contains("fencing zombie tasks of the previous generation"),
        "no fencing round in the worker log"
    );

    // The altered offset is in the connector's own topic.
    let own = |key: &str| {
        kafka::read_all(
            &[own_topic.as_str()],
            Isolation::ReadCommitted,
            Duration::from_secs(30),
        )
        .into_iter()
        .filter(|r| r.key.as_deref() == Some(key))
        .map(|r| r.value)
        .collect::<Vec<_>>()
    };
    let written = own(r#"["src",{"id":9}]"#);
    assert_eq!(written.last(), Some(&Some(r#"{"seqno":42}"#.to_owned())));

    // Reset tombstones every partition there, including the one only that topic held.
    let (s, b) = w.send("DELETE", "/connectors/src/offsets", None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(own(r#"["src",{"id":7}]"#).last(), Some(&None));
    assert_eq!(
        w.get("/connectors/src/offsets").await.unwrap(),
        json!({"offsets": []})
    );

    // A stopped connector resumes with its tasks.
    let (s, _) = w.send("PUT", "/connectors/src/resume", None).await;
    assert_eq!(s, 202);
    eventually(Duration::from_secs(90), "2 tasks running again", || async {
        connect_tests::worker::running_tasks(&w, "src", 2).await
    })
    .await;
    // Also when the resume follows the stop before the worker applied it (the CDC test saw a
    // connector left RUNNING with no tasks).
    let (s, _) = w.send("PUT", "/connectors/src/stop", None).await;
    assert_eq!(s, 204);
    let (s, _) = w.send("PUT", "/connectors/src/resume", None).await;
    assert_eq!(s, 202);
    eventually(
        Duration::from_secs(90),
        "2 tasks running after stop+resume",
        || async { connect_tests::worker::running_tasks(&w, "src", 2).await },
    )
    .await;
}
