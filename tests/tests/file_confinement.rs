// The FileStream connectors are confined to the worker's `file.connector.allowed.dirs` (real
// workers, real Kafka): paths outside, `..` escapes and symbolic links out are refused at
// validation, on create and on config update; without the key both connectors are refused,
// naming it; a task whose path the worker no longer allows fails when it starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, FILE_CONNECTOR_ALLOWED_DIRS, WorkerProc, eventually};
use serde_json::{Value, json};

const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const FILE_SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";

fn config(class: &str, file: Option<&Path>) -> Value {
    let mut c = json!({
        "connector.class": class, "name": "fs", "tasks.max": "1",
        "topic": "confined", "topics": "confined",
    });
    if let Some(f) = file {
        c["file"] = json!(f.to_string_lossy());
    }
    c
}

/// The errors `config/validate` reports on `key`.
async fn validate_errors(w: &WorkerProc, class: &str, config: &Value, key: &str) -> Vec<String> {
    let simple = class.rsplit('.').next().unwrap();
    let (status, body) = w
        .send(
            "PUT",
            &format!("/connector-plugins/{simple}/config/validate"),
            Some(config.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == key)
        .flat_map(|c| c["value"]["errors"].as_array().cloned().unwrap_or_default())
        .map(|e| e.as_str().unwrap().to_owned())
        .collect()
}

/// A directory outside the cluster's, with a file in it.
fn outside_dir() -> PathBuf {
    let d = std::env::temp_dir().join(unique("outside"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("secret.txt"), "secret\n").unwrap();
    d
}

#[tokio::test(flavor = "multi_thread")]
async fn paths_outside_dotdot_and_symlinks_out_are_refused_at_validation() {
    let spec = ClusterSpec::new("file-confined");
    let w = spec.start_worker().await;
    let outside = outside_dir();
    let outside_name = outside.file_name().unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), spec.dir.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, spec.dir.join("dirlink")).unwrap();
    let refused: Vec<PathBuf> = vec![
        outside.join("secret.txt"),
        // `..` out of the allowed directory, to an existing and to a new file.
        spec.dir.join("..").join(outside_name).join("secret.txt"),
        spec.dir.join("..").join(outside_name).join("new.txt"),
        // Symbolic links inside the allowed directory that lead out.
        spec.dir.join("link.txt"),
        spec.dir.join("dirlink").join("new.txt"),
    ];
    for class in [FILE_SOURCE, FILE_SINK] {
        for path in &refused {
            let c = config(class, Some(path));
            let errors = validate_errors(&w, class, &c, "file").await;
            assert_eq!(errors.len(), 1, "{class} {path:?}: {errors:?}");
            assert!(
                errors[0].contains(FILE_CONNECTOR_ALLOWED_DIRS) && errors[0].contains("outside"),
                "{class} {path:?}: {}",
                errors[0]
            );
            // Create refuses it with the same error.
            let (status, body) = w
                .send(
                    "POST",
                    "/connectors",
                    Some(json!({"name": "fs", "config": c})),
                )
                .await;
            assert_eq!(status, 400, "{body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.contains(FILE_CONNECTOR_ALLOWED_DIRS), "{message}");
        }
        // Inside: an existing file, a new one, one in a directory not created yet.
        std::fs::write(spec.dir.join("in.txt"), "").unwrap();
        for inside in ["in.txt", "new.txt", "sub/dir/x.txt"] {
            let c = config(class, Some(&spec.dir.join(inside)));
            let errors = validate_errors(&w, class, &c, "file").await;
            assert!(errors.is_empty(), "{class} {inside}: {errors:?}");
        }
    }
    // An update that moves an existing connector's file out is refused too.
    let mut ok = config(FILE_SINK, Some(&spec.dir.join("out.txt")));
    ok["name"] = json!("moving");
    let (status, body) = w
        .send("PUT", "/connectors/moving/config", Some(ok.clone()))
        .await;
    assert_eq!(status, 201, "{body}");
    let mut moved = ok;
    moved["file"] = json!(spec.dir.join("dirlink/moved.txt").to_string_lossy());
    let (status, body) = w
        .send("PUT", "/connectors/moving/config", Some(moved))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(!outside.join("new.txt").exists() && !outside.join("moved.txt").exists());
    std::fs::remove_dir_all(outside).ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_worker_key_file_connectors_are_refused_naming_it() {
    let spec = ClusterSpec::new("file-unset").unset(FILE_CONNECTOR_ALLOWED_DIRS);
    let w = spec.start_worker().await;
    let inside = spec.dir.join("in.txt");
    for class in [FILE_SOURCE, FILE_SINK] {
        for file in [Some(inside.as_path()), None] {
            let c = config(class, file);
            let errors = validate_errors(&w, class, &c, "file").await;
            assert_eq!(errors.len(), 1, "{class} {file:?}: {errors:?}");
            assert!(
                errors[0].contains(FILE_CONNECTOR_ALLOWED_DIRS),
                "{}",
                errors[0]
            );
            let (status, body) = w
                .send(
                    "POST",
                    "/connectors",
                    Some(json!({"name": "fs", "config": c})),
                )
                .await;
            assert_eq!(status, 400, "{body}");
            assert!(
                body["message"]
                    .as_str()
                    .unwrap()
                    .contains(FILE_CONNECTOR_ALLOWED_DIRS),
                "{body}"
            );
        }
    }
    // Other connectors are unaffected.
    let (status, body) = w
        .send(
            "PUT",
            "/connectors/verifiable/config",
            Some(json!({"connector.class": "VerifiableSource", "topic": unique("v"), "throughput": "1"})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

/// A config already in the config topic (validated by a worker that allowed its path) does not
/// escape a worker that does not: its task fails at start with a message naming the key.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_whose_path_the_worker_does_not_allow_fails_at_start() {
    let spec = ClusterSpec::new("file-runtime");
    let mut w = spec.start_worker().await;
    let topic = unique("file-runtime");
    kafka::create_topics(&[&topic], 1).await;
    let out = spec.dir.join("out.txt");
    let (status, body) = w
        .send(
            "PUT",
            "/connectors/sink/config",
            Some(json!({
                "connector.class": FILE_SINK, "topics": topic, "file": out.to_string_lossy(),
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            })),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    kafka::produce(&topic, [(None, Some("before".to_owned()))].into_iter()).await;
    eventually(
        Duration::from_secs(60),
        "the sink wrote its file",
        || async {
            let text = std::fs::read_to_string(&out).ok()?;
            text.contains("before").then_some(())
        },
    )
    .await;

    // The same cluster, restarted with another allowed directory.
    let elsewhere = spec.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let narrowed = spec
        .clone()
        .set(FILE_CONNECTOR_ALLOWED_DIRS, &elsewhere.to_string_lossy());
    w.restart_with(&narrowed).await;
    let status = eventually(Duration::from_secs(60), "the task FAILED", || async {
        let s = w.get("/connectors/sink/status").await.ok()?;
        (s["tasks"][0]["state"] == "FAILED").then_some(s)
    })
    .await;
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains(FILE_CONNECTOR_ALLOWED_DIRS) && trace.contains("out.txt"),
        "{trace}"
    );
    kafka::produce(&topic, [(None, Some("after".to_owned()))].into_iter()).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!std::fs::read_to_string(&out).unwrap().contains("after"));
}
