//! The standalone worker (`connect-worker standalone <worker.properties> <connector files>`,
//! Apache's `connect-standalone`): a connector from a file moves data, the worker is SIGKILLed
//! and restarted and resumes from its offsets file; an offsets file moves between Apache's
//! standalone worker 4.4 and ours, both ways; bad connector files and a corrupt offsets file
//! stop start-up naming them; the REST API answers as Apache's standalone herder does.
//!
//! Apache's worker is tests/apache/apache-connect.sh with `APACHE_CONNECT_MODE=standalone`
//! (jars from Maven Central; Java 17+ and Maven), running the project's stand-in for Apache's
//! verifiable source (`"connector.class": "VerifiableSource"` resolves to it on Apache and to
//! our built-in one here: records and offsets alike, partition `{"id": task}`, offset
//! `{"seqno": n}`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use connect_tests::kafka::bootstrap_servers;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, free_port, run_to_exit};
use serde_json::{Value, json};

/// The lowest committed seqno over `tasks` tasks, from `GET /connectors/{c}/offsets`
/// (`None` until every task has one).
fn min_seqno(offsets: &Value, tasks: usize) -> Option<i64> {
    let list = offsets["offsets"].as_array()?;
    let seqnos: Vec<i64> = list
        .iter()
        .filter_map(|o| o["offset"]["seqno"].as_i64())
        .collect();
    (seqnos.len() == tasks).then(|| seqnos.into_iter().min())?
}

/// Reads the verifiable source's topic: per task (records, distinct seqnos, gaps, max seqno),
/// and how often seqno 0 was written.
fn tally(topic: &str) -> connect_worker::verify::Report {
    let client = connect_worker::verify::verify_client(&bootstrap_servers(), None).unwrap();
    connect_worker::verify::verify_topic(client, topic, Duration::from_secs(60)).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A verifiable source from a JSON file (`{"name", "config"}`, Apache's second shape) moves
/// data; SIGKILLed mid-run and started again with the same files, the worker resumes every
/// task from its offsets file: every seqno is there, and no task started over (at-least-once:
/// what was written after the last flush is written again, nothing more).
#[tokio::test]
#[allow(clippy::print_stdout)]
async fn a_killed_standalone_worker_resumes_from_its_offsets_file() {
    const TASKS: usize = 2;
    const MAX_RECORDS: i64 = 3000;
    let probe = ClusterSpec::standalone("standalone-kill", Vec::new());
    let name = format!("{}-vs", probe.group_id);
    let topic = format!("{}-data", probe.group_id);
    let file = write(
        &probe.dir,
        "vs.json",
        &json!({
            "name": name,
            "config": {
                "connector.class": "VerifiableSource",
                "tasks.max": TASKS,
                "topic": topic,
                "throughput": 400,
                "max.records": MAX_RECORDS,
            }
        })
        .to_string(),
    );
    let mut spec = probe;
    spec.standalone = Some(vec![file]);
    let mut w = spec.start_worker().await;
    let offsets_path = format!("/connectors/{name}/offsets");
    eventually(
        Duration::from_secs(60),
        "offsets past seqno 800",
        || async {
            let o = w.get(&offsets_path).await.ok()?;
            (min_seqno(&o, TASKS)? >= 800).then_some(())
        },
    )
    .await;
    w.kill9();
    let saved = std::fs::read(spec.offsets_file()).expect("the offsets file exists");
    assert_eq!(
        &saved[..4],
        &[0xAC, 0xED, 0, 5],
        "a Java serialization stream"
    );

    w.restart().await;
    // Created again from its file, the connector reads its offsets from the file (asked at
    // once: before its tasks could commit 800 records again).
    let first = eventually(
        Duration::from_secs(30),
        "the connector's offsets",
        || async { min_seqno(&w.get(&offsets_path).await.ok()?, TASKS) },
    )
    .await;
    assert!(first >= 800, "offsets read from the file: {first}");
    eventually(Duration::from_secs(60), "every record written", || async {
        let o = w.get(&offsets_path).await.ok()?;
        (min_seqno(&o, TASKS)? >= MAX_RECORDS - 1).then_some(())
    })
    .await;
    let report = tally(&topic);
    println!("restarted at the file's offsets (lowest seqno {first}): {report:?}");
    assert_eq!(report.tasks.len(), TASKS, "{report:?}");
    for (task, c) in &report.tasks {
        assert_eq!(c.max_seqno, MAX_RECORDS - 1, "task {task}: {c:?}");
        assert_eq!(c.gaps, 0, "task {task}: no gap: {c:?}");
        assert_eq!(c.distinct, MAX_RECORDS as u64, "task {task}: {c:?}");
        // A task that started over would write its first 800+ seqnos twice; what was written
        // after the last flush (1 s at 400 records/s) is what SIGKILL may cost.
        assert!(
            c.duplicates < 800,
            "task {task} resumed from its offsets, not from 0: {c:?}"
        );
    }
    let (status, _) = w.send("DELETE", &format!("/connectors/{name}"), None).await;
    assert_eq!(status, 204);
}

/// tests/apache/apache-connect.sh's standalone worker with this test's run directory, port,
/// offsets file and connector files.
struct ApacheStandalone {
    run: PathBuf,
    port: u16,
    offsets: PathBuf,
    connectors: Vec<PathBuf>,
}

impl ApacheStandalone {
    fn command(&self, action: &str) -> std::process::Output {
        let connectors: Vec<String> = self
            .connectors
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("apache/apache-connect.sh"))
            .arg(action)
            .env("APACHE_CONNECT_MODE", "standalone")
            .env("APACHE_CONNECT_RUN", &self.run)
            .env("APACHE_CONNECT_PORT", self.port.to_string())
            .env("APACHE_CONNECT_BENCH_PLUGIN", "1")
            .env("APACHE_CONNECT_OFFSETS_FILE", &self.offsets)
            .env("APACHE_CONNECT_CONNECTORS", connectors.join(" "))
            .env(
                "APACHE_CONNECT_WORKER_PROPS",
                "key.converter.schemas.enable=false\nvalue.converter.schemas.enable=false\nplugin.discovery=service_load\n",
            )
            .env("KAFKA_BOOTSTRAP_SERVERS", bootstrap_servers())
            .output()
            .expect("run apache-connect.sh")
    }

    fn start(&self) {
        let out = self.command("start");
        assert!(
            out.status.success(),
            "apache-connect.sh start: {}{}\nlog:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log_tail()
        );
    }

    /// SIGTERM (Apache flushes its offsets as it stops), and waits until the JVM exited.
    fn stop(&self) {
        assert!(
            self.command("stop").status.success(),
            "apache-connect.sh stop"
        );
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.run.join("connect.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    async fn get(&self, path: &str) -> Option<Value> {
        let res = reqwest::get(format!("http://127.0.0.1:{}{path}", self.port))
            .await
            .ok()?;
        if !res.status().is_success() {
            return None;
        }
        res.json().await.ok()
    }
}

impl Drop for ApacheStandalone {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "---- last lines of Apache's log ({}) ----\n{}",
                self.run.display(),
                self.log_tail()
            );
        }
        let _ = self.command("stop");
    }
}

/// Apache's standalone worker 4.4 writes the offsets file, ours resumes from it and writes it,
/// Apache resumes from ours: one verifiable source (a flat JSON file for Apache, a
/// .properties file for ours) ends with every seqno, none started over.
#[tokio::test]
#[allow(clippy::print_stdout)]
async fn an_offsets_file_moves_between_apaches_standalone_worker_and_ours() {
    const MAX_RECORDS: i64 = 3000;
    let mut spec = ClusterSpec::standalone("standalone-apache", Vec::new());
    let name = format!("{}-vs", spec.group_id);
    let topic = format!("{}-data", spec.group_id);
    let config = json!({
        "name": name,
        "connector.class": "VerifiableSource",
        "tasks.max": "1",
        "topic": topic,
        "throughput": "300",
        "max.records": MAX_RECORDS.to_string(),
    });
    let json_file = write(&spec.dir, "vs.json", &config.to_string());
    let properties: String = config
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| format!("{k}={}\n", v.as_str().unwrap()))
        .collect();
    let properties_file = write(&spec.dir, "vs.properties", &properties);
    let offsets_path = format!("/connectors/{name}/offsets");
    let apache = ApacheStandalone {
        run: spec.dir.join("apache"),
        port: free_port(),
        offsets: spec.offsets_file(),
        connectors: vec![json_file],
    };

    // 1. Apache writes seqnos from 0 and its offsets file.
    apache.start();
    eventually(
        Duration::from_secs(90),
        "Apache's offsets past 600",
        || async {
            let o = apache.get(&offsets_path).await?;
            (min_seqno(&o, 1)? >= 600).then_some(())
        },
    )
    .await;
    apache.stop();
    let after_apache = tally(&topic).tasks[&0].max_seqno;

    // 2. Ours, on Apache's file.
    spec.standalone = Some(vec![properties_file]);
    let mut ours = WorkerProc::start(&spec, free_port()).await;
    let first = eventually(
        Duration::from_secs(30),
        "ours reads Apache's offsets",
        || async { min_seqno(&ours.get(&offsets_path).await.ok()?, 1) },
    )
    .await;
    assert!(first >= 600, "ours starts from Apache's offsets: {first}");
    eventually(
        Duration::from_secs(60),
        "ours' offsets past 1800",
        || async {
            let o = ours.get(&offsets_path).await.ok()?;
            (min_seqno(&o, 1)? >= 1800).then_some(())
        },
    )
    .await;
    assert!(
        ours.terminate().is_some_and(|s| s.success()),
        "ours stops cleanly"
    );
    let after_ours = tally(&topic).tasks[&0].max_seqno;
    assert!(after_ours > after_apache, "{after_ours} > {after_apache}");

    // 3. Apache again, on the file ours wrote.
    apache.start();
    eventually(
        Duration::from_secs(90),
        "Apache writes the rest",
        || async {
            let o = apache.get(&offsets_path).await?;
            (min_seqno(&o, 1)? >= MAX_RECORDS - 1).then_some(())
        },
    )
    .await;
    apache.stop();

    let report = tally(&topic);
    let c = &report.tasks[&0];
    println!(
        "Apache wrote up to seqno {after_apache}; ours started at its offset {first} and wrote up to {after_ours}; Apache finished: {c:?}"
    );
    assert_eq!(report.tasks.len(), 1, "{report:?}");
    assert_eq!(c.gaps, 0, "no gap: {c:?}");
    assert_eq!(c.distinct, MAX_RECORDS as u64, "{c:?}");
    // Starting over from 0 would write 600 (ours) or 1800 (Apache) seqnos again; clean stops
    // flush every acknowledged offset.
    assert!(
        c.duplicates < 100,
        "each side resumed from the other's offsets: {c:?}"
    );
}

/// Start-up errors naming what is wrong: a connector file without `name`, a connector whose
/// config does not validate (the key named), a corrupt offsets file; `exactly.once.source.support`
/// refused with Apache's standalone message.
#[tokio::test]
async fn bad_connector_files_and_a_corrupt_offsets_file_stop_start_up() {
    let base = ClusterSpec::standalone("standalone-bad", Vec::new());
    let no_name = write(
        &base.dir,
        "no-name.properties",
        "connector.class=VerifiableSource\n",
    );
    let mut spec = base.clone();
    spec.standalone = Some(vec![no_name.clone()]);
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok);
    assert!(
        log.contains(&format!(
            "Connector configuration at '{}' is missing the mandatory 'name' configuration",
            no_name.display()
        )),
        "{log}"
    );

    let invalid = write(
        &base.dir,
        "invalid.json",
        r#"{"name":"bad","connector.class":"VerifiableSource","tasks.max":"zero","topic":"t"}"#,
    );
    spec.standalone = Some(vec![invalid.clone()]);
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok);
    assert!(
        log.contains(&format!(
            "Failed to create connector for {}",
            invalid.display()
        )) && log.contains("tasks.max"),
        "{log}"
    );

    std::fs::write(base.offsets_file(), b"\xac\xed\x00\x05\x73\x72\x00").unwrap();
    spec.standalone = Some(Vec::new());
    let (ok, log) = run_to_exit(&spec).await;
    assert!(!ok);
    assert!(
        log.contains(&base.offsets_file().display().to_string()) && log.contains("end of file"),
        "{log}"
    );
    std::fs::remove_file(base.offsets_file()).unwrap();

    let eos = base.clone().set("exactly.once.source.support", "enabled");
    let (ok, log) = run_to_exit(&eos).await;
    assert!(!ok);
    assert!(
        log.contains(
            "Kafka Connect in standalone mode does not support exactly-once source connectors."
        ),
        "{log}"
    );
}

/// Connectors created over REST live as long as the process (Apache's in-memory config
/// store); the file's connector comes back; the internal endpoints answer Apache's 500s; an
/// exactly-once requirement is refused; altered offsets land in the offsets file.
#[tokio::test]
async fn rest_has_standalones_semantics() {
    let probe = ClusterSpec::standalone("standalone-rest", Vec::new());
    let topic = format!("{}-data", probe.group_id);
    let from_file = format!("{}-file", probe.group_id);
    let file = write(
        &probe.dir,
        "c.properties",
        &format!(
            "name={from_file}\nconnector.class=VerifiableSource\ntopic={topic}\nthroughput=10\n"
        ),
    );
    let mut spec = probe;
    spec.standalone = Some(vec![file]);
    let mut w = spec.start_worker().await;
    let over_rest = format!("{}-rest", spec.group_id);
    connect_tests::worker::create_connector(
        &w,
        &over_rest,
        json!({"connector.class": "VerifiableSource", "topic": topic, "throughput": "10"}),
    )
    .await;
    eventually(Duration::from_secs(30), "both connectors run", || async {
        let list = w.get("/connectors?expand=status").await.ok()?;
        let running = |c: &str| list[c]["status"]["tasks"][0]["state"] == "RUNNING";
        (running(&from_file) && running(&over_rest)).then_some(())
    })
    .await;
    let root = w.get("/").await.unwrap();
    assert!(
        root["kafka_cluster_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{root}"
    );

    let (status, body) = w
        .send(
            "POST",
            &format!("/connectors/{from_file}/tasks"),
            Some(json!([])),
        )
        .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            500,
            Some(
                "Kafka Connect in standalone mode does not support externally setting task configurations."
            )
        )
    );
    let (status, body) = w
        .send("PUT", &format!("/connectors/{from_file}/fence"), None)
        .await;
    assert_eq!(
        (status, body["message"].as_str()),
        (
            500,
            Some(
                "Kafka Connect in standalone mode does not support exactly-once source connectors."
            )
        )
    );
    let (status, body) = w
        .send(
            "PUT",
            "/connector-plugins/VerifiableSource/config/validate",
            Some(json!({"name": "v", "connector.class": "VerifiableSource", "topic": topic, "exactly.once.support": "required"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error_count"], 1, "{body}");

    // The offsets endpoints work on the offsets file (the connector stopped first).
    let (status, body) = w
        .send("PUT", &format!("/connectors/{from_file}/stop"), None)
        .await;
    assert_eq!(status, 204, "{body}");
    let (status, body) = w
        .send(
            "PATCH",
            &format!("/connectors/{from_file}/offsets"),
            Some(json!({"offsets": [{"partition": {"id": 0}, "offset": {"seqno": 12345}}]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let file = connect_worker::storage::local_log::read_offsets_file(&spec.offsets_file()).unwrap();
    assert_eq!(
        file.get(format!(r#"["{from_file}",{{"id":0}}]"#).as_bytes())
            .map(|v| String::from_utf8_lossy(v).into_owned()),
        Some(r#"{"seqno":12345}"#.to_owned()),
        "the offsets file holds the altered offset"
    );

    assert!(w.terminate().is_some_and(|s| s.success()));
    w.restart().await;
    // Healthy only once the files' connectors exist (Apache's `herder.ready()` follows them).
    w.wait_healthy().await;
    let list = w.get("/connectors").await.unwrap();
    assert_eq!(
        list,
        json!([from_file]),
        "REST-created connectors are not kept"
    );
}

/// Run through a link named `connect-standalone` (Apache's script name; the Docker image has
/// one), the binary takes `connect-worker standalone`'s arguments.
#[test]
fn a_link_named_connect_standalone_runs_the_standalone_worker() {
    let dir = std::env::temp_dir().join(connect_tests::unique("standalone-link"));
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("connect-standalone");
    std::os::unix::fs::symlink(connect_tests::worker::worker_binary(), &link).unwrap();
    let out = Command::new(&link)
        .output()
        .expect("run connect-standalone");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Usage: connect-worker standalone <worker.properties>"),
        "{stderr}"
    );
}

/// A sink runs in standalone mode as in distributed mode: the verifiable source's records
/// reach a FileStream sink's file (its consumer group `connect-<name>` on the broker).
#[tokio::test]
async fn a_sink_runs_in_standalone_mode() {
    let probe = ClusterSpec::standalone("standalone-sink", Vec::new());
    let topic = format!("{}-data", probe.group_id);
    let out = probe.dir.join("sink.txt");
    let source = write(
        &probe.dir,
        "source.properties",
        &format!(
            "name={}-src\nconnector.class=VerifiableSource\ntopic={topic}\nthroughput=200\nmax.records=100\n",
            probe.group_id
        ),
    );
    let sink = write(
        &probe.dir,
        "sink.json",
        &json!({
            "name": format!("{}-sink", probe.group_id),
            "connector.class": "FileStreamSink",
            "topics": topic,
            "file": out.display().to_string(),
        })
        .to_string(),
    );
    let mut spec = probe;
    spec.standalone = Some(vec![source, sink]);
    let _w = spec.start_worker().await;
    eventually(
        Duration::from_secs(60),
        "100 records in the sink's file",
        || async {
            let text = std::fs::read_to_string(&out).ok()?;
            (text.lines().count() >= 100).then_some(())
        },
    )
    .await;
}
