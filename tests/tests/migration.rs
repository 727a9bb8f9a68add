//! Moving a cluster from Apache Kafka Connect 4.4 onto this worker and back, on the same internal
//! topics, as docs/migrating-from-apache-connect.md describes: `connect-worker check` on the
//! Apache cluster's worker.properties, stop Apache, start ours with the same file, stop ours,
//! start Apache again. An exactly-once verifiable source runs through the three phases; a
//! `read_committed` count then finds every (task, seqno) exactly once, no gap.
//!
//! Apache's worker is tests/apache/apache-connect.sh (jars from Maven Central, cached in
//! .local/apache-connect; Java 17+ and Maven), with the project's stand-in for Apache's
//! verifiable source (tests/apache/bench/src/connectrs/bench/VerifiableSourceConnector.java):
//! `"connector.class": "VerifiableSource"` resolves to it on Apache and to our built-in
//! verifiable source here. Its own run directory, port, group and topics let it run beside
//! other tests.
//!
//! Also here: the command line's help and usage errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use connect_tests::kafka::bootstrap_servers;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually, free_port, worker_binary};
use connect_worker::config::properties;
use serde_json::{Value, json};

const CONNECTOR: &str = "vs";
const TASKS: usize = 2;
/// Records per task: seqnos 0..MAX_RECORDS.
const MAX_RECORDS: i64 = 4000;
/// Records per second per task.
const THROUGHPUT: i64 = 200;
/// Apache runs the connector until every task passed this seqno, ours until this one.
const APACHE_UNTIL: i64 = 1200;
const OURS_UNTIL: i64 = 2600;

/// Every subcommand and argument is in the help; a wrong argument prints the usage to stderr
/// and exits 2.
#[test]
fn help_names_every_subcommand_and_usage_errors_exit_2() {
    let run = |args: &[&str]| {
        let out = Command::new(worker_binary())
            .args(args)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("run connect-worker");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, help, _) = run(&["--help"]);
    assert_eq!(code, Some(0), "{help}");
    for word in [
        "<worker.properties>",
        "standalone",
        "connector.properties|connector.json",
        "check",
        "--no-kafka",
        "verify",
        "--bootstrap-servers",
        "--topic",
        "--tasks",
        "--command-config",
        "--timeout-secs",
    ] {
        assert!(help.contains(word), "--help names {word}:\n{help}");
    }
    let (code, help, _) = run(&["check", "--help"]);
    assert_eq!(code, Some(0), "{help}");
    assert!(
        help.contains("<worker.properties>") && help.contains("--no-kafka"),
        "{help}"
    );
    let (code, help, _) = run(&["verify", "--help"]);
    assert_eq!(code, Some(0), "{help}");
    for word in [
        "--bootstrap-servers",
        "--topic",
        "--tasks",
        "--command-config",
        "--timeout-secs",
    ] {
        assert!(help.contains(word), "verify --help names {word}:\n{help}");
    }
    for args in [
        &[][..],
        &["--bogus"],
        &["frobnicate"],
        &["check"],
        &["check", "/no/such/worker.properties"],
        &["standalone"],
        &["standalone", "/no/such/worker.properties"],
        &["verify", "--topic", "t"],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stdout}{stderr}");
        assert!(
            stdout.is_empty() && stderr.contains("Usage:"),
            "{args:?}: the usage goes to stderr: {stdout}{stderr}"
        );
    }
}

/// tests/apache/apache-connect.sh with this test's run directory, port and worker properties.
struct Apache {
    run: PathBuf,
    port: u16,
    /// Appended to the script's worker.properties (`APACHE_CONNECT_WORKER_PROPS`).
    props: String,
    http: reqwest::Client,
}

impl Apache {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("apache/apache-connect.sh")
    }

    fn command(&self, action: &str) -> std::process::Output {
        Command::new(Self::script())
            .arg(action)
            .env("APACHE_CONNECT_RUN", &self.run)
            .env("APACHE_CONNECT_PORT", self.port.to_string())
            .env("APACHE_CONNECT_BENCH_PLUGIN", "1")
            .env("APACHE_CONNECT_WORKER_PROPS", &self.props)
            .env("KAFKA_BOOTSTRAP_SERVERS", bootstrap_servers())
            .output()
            .expect("run apache-connect.sh")
    }

    /// Starts the worker and waits until its REST API answers.
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

    /// SIGTERM, and waits until the JVM exited.
    fn stop(&self) {
        let out = self.command("stop");
        assert!(out.status.success(), "apache-connect.sh stop");
    }

    /// The worker.properties Apache runs with.
    fn worker_properties(&self) -> PathBuf {
        self.run.join("worker.properties")
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.run.join("connect.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    async fn get(&self, path: &str) -> Option<Value> {
        let res = self
            .http
            .get(format!("http://127.0.0.1:{}{path}", self.port))
            .send()
            .await
            .ok()?;
        if !res.status().is_success() {
            return None;
        }
        res.json().await.ok()
    }

    /// POST /connectors until it answers 201 (409 while the worker joins the group).
    async fn create_connector(&self, config: Value) {
        let body = json!({"name": CONNECTOR, "config": config});
        eventually(
            Duration::from_secs(60),
            "Apache creates the connector",
            || {
                let body = body.clone();
                async move {
                    let res = self
                        .http
                        .post(format!("http://127.0.0.1:{}/connectors", self.port))
                        .json(&body)
                        .send()
                        .await
                        .ok()?;
                    let status = res.status().as_u16();
                    let text = res.text().await.unwrap_or_default();
                    assert!(
                        status == 201 || status == 409,
                        "create on Apache: {status} {text}"
                    );
                    (status == 201).then_some(())
                }
            },
        )
        .await;
    }
}

impl Drop for Apache {
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

/// `GET /connectors/{c}/offsets` as task id -> seqno (the partition `{"id": n}`, the offset
/// `{"seqno": n}`, written alike by both workers).
fn seqnos(offsets: &Value) -> BTreeMap<i64, i64> {
    offsets["offsets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| {
            Some((
                o["partition"]["id"].as_i64()?,
                o["offset"]["seqno"].as_i64()?,
            ))
        })
        .collect()
}

/// Whether every task's committed seqno is at least `n`.
fn all_past(seqnos: &BTreeMap<i64, i64>, n: i64) -> bool {
    seqnos.len() == TASKS && seqnos.values().all(|s| *s >= n)
}

/// Both tasks RUNNING on the worker `worker_id` says, as `status` reports them.
fn running_on(status: &Value, worker_id: &str) -> bool {
    let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
    status["connector"]["state"] == "RUNNING"
        && tasks.len() == TASKS
        && tasks
            .iter()
            .all(|t| t["state"] == "RUNNING" && t["worker_id"] == worker_id)
}

/// Prints the phases' times, the check's report and the verdict (the report is what
/// docs/migrating-from-apache-connect.md shows).
#[tokio::test]
#[allow(clippy::print_stdout)]
async fn apache_cluster_moves_to_this_worker_and_back_exactly_once() {
    let started = Instant::now();
    let phase = |what: &str| println!("[{:>5.1}s] {what}", started.elapsed().as_secs_f64());
    // The cluster: a unique group and topics, exactly-once on, the harness's converters
    // (JsonConverter without schemas) and timings; plugin.path as an Apache file has it, and
    // plugin.discovery=service_load, which spares Apache a 5 s classpath scan at every start.
    let spec = ClusterSpec::new("migration")
        .set("exactly.once.source.support", "enabled")
        .unset(connect_worker::config::FILE_CONNECTOR_ALLOWED_DIRS);
    let plugins = spec.dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let spec = spec
        .set("plugin.path", &plugins.display().to_string())
        .set("plugin.discovery", "service_load");
    let port = free_port();
    let apache = Apache {
        run: spec.dir.join("apache"),
        port,
        props: spec
            .props
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
    };
    let topic = format!("{}-data", spec.group_id);

    // 1. Apache Connect runs the exactly-once verifiable source.
    apache.start();
    phase("Apache started");
    apache
        .create_connector(json!({
            "connector.class": "VerifiableSource",
            "tasks.max": TASKS.to_string(),
            "topic": topic,
            "throughput": THROUGHPUT.to_string(),
            "batch.size": "20",
            "max.records": MAX_RECORDS.to_string(),
            "exactly.once.support": "required",
        }))
        .await;
    let apache_id = format!("127.0.0.1:{port}");
    eventually(
        Duration::from_secs(60),
        "Apache runs both tasks",
        || async {
            let status = apache
                .get(&format!("/connectors/{CONNECTOR}/status"))
                .await?;
            running_on(&status, &apache_id).then_some(())
        },
    )
    .await;
    phase("Apache runs the connector");

    // 2. The check, on the file Apache runs with, while it runs.
    let out = Command::new(worker_binary())
        .arg("check")
        .arg(apache.worker_properties())
        .output()
        .expect("run connect-worker check");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("connect-worker check:\n{report}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "check: {report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The stand-in's task class is not the one our verifiable source writes (Apache's own
    // plugin's is): a warning, since the connector rewrites its task configs here.
    assert!(
        report.contains(&format!("OK {CONNECTOR} (VerifiableSource)"))
            && report.contains(&format!(
                "WARNING {CONNECTOR}: its task configs name task class connectrs.bench.VerifiableSourceTask"
            ))
            && !report.contains("IGNORED plugin.path")
            && report.lines().last().is_some_and(|l| l.starts_with("PASS")),
        "{report}"
    );

    let before_stop = eventually(
        Duration::from_secs(60),
        "Apache's tasks pass the first third",
        || async {
            let o = seqnos(
                &apache
                    .get(&format!("/connectors/{CONNECTOR}/offsets"))
                    .await?,
            );
            all_past(&o, APACHE_UNTIL).then_some(o)
        },
    )
    .await;
    phase(&format!("Apache committed {before_stop:?}; stopping it"));

    // 3. Stop Apache, start ours with the same worker.properties (and so the same port).
    apache.stop();
    phase("Apache stopped");
    let mut ours_spec = spec.clone();
    ours_spec.props =
        properties::parse(&std::fs::read_to_string(apache.worker_properties()).unwrap());
    let mut ours = WorkerProc::start(&ours_spec, port).await;
    phase("our worker started");
    let first = eventually(
        Duration::from_secs(30),
        "our worker answers the connector's offsets",
        || async {
            let o = seqnos(
                &ours
                    .get(&format!("/connectors/{CONNECTOR}/offsets"))
                    .await
                    .ok()?,
            );
            (o.len() == TASKS).then_some(o)
        },
    )
    .await;
    for (task, seqno) in &before_stop {
        assert!(
            first.get(task).is_some_and(|s| s >= seqno),
            "our worker reads Apache's offsets: {first:?}, Apache had {before_stop:?}"
        );
    }
    let ours_id = ours.worker_id();
    eventually(
        Duration::from_secs(60),
        "our worker runs both tasks",
        || async {
            let status = ours
                .get(&format!("/connectors/{CONNECTOR}/status"))
                .await
                .ok()?;
            running_on(&status, &ours_id).then_some(())
        },
    )
    .await;
    phase("our worker runs the connector");
    let handed_back = eventually(
        Duration::from_secs(60),
        "our tasks pass the second third",
        || async {
            let o = seqnos(
                &ours
                    .get(&format!("/connectors/{CONNECTOR}/offsets"))
                    .await
                    .ok()?,
            );
            all_past(&o, OURS_UNTIL).then_some(o)
        },
    )
    .await;
    phase(&format!(
        "our worker committed {handed_back:?}; stopping it"
    ));

    // 4. Back: stop ours, start Apache on the same topics; it finishes the run.
    let exit = ours.terminate();
    assert!(
        exit.is_some_and(|s| s.success()),
        "our worker stopped cleanly"
    );
    phase("our worker stopped");
    apache.start();
    phase("Apache started again");
    eventually(
        Duration::from_secs(90),
        "Apache finishes the run",
        || async {
            let status = apache
                .get(&format!("/connectors/{CONNECTOR}/status"))
                .await?;
            let o = seqnos(
                &apache
                    .get(&format!("/connectors/{CONNECTOR}/offsets"))
                    .await?,
            );
            (running_on(&status, &apache_id) && all_past(&o, MAX_RECORDS - 1)).then_some(())
        },
    )
    .await;
    phase("Apache finished the run");

    // 5. Every (task, seqno) exactly once across the three phases.
    let out = Command::new(worker_binary())
        .args(["verify", "--bootstrap-servers", &bootstrap_servers()])
        .args(["--topic", &topic, "--tasks", &TASKS.to_string()])
        .output()
        .expect("run connect-worker verify");
    let verdict = String::from_utf8_lossy(&out.stdout);
    println!("{verdict}");
    assert!(
        out.status.success() && verdict.contains("EXACT"),
        "verify: {verdict}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for task in 0..TASKS {
        assert!(
            verdict.contains(&format!(
                "task {task}: records={MAX_RECORDS} distinct={MAX_RECORDS} duplicates=0 gaps=0 max_seqno={}",
                MAX_RECORDS - 1
            )),
            "{verdict}"
        );
    }
    phase("verified");
}
