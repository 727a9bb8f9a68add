//! Real `connect-worker` processes for black-box tests: start them on free ports with a
//! generated worker config, talk to their REST API, and break them (SIGKILL, SIGSTOP).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::kafka::bootstrap_servers;
use crate::unique;

/// Path of the `connect-worker` binary: `CONNECT_WORKER_BIN`, else the debug build, built once
/// per test run if needed.
pub fn worker_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // Benchmarks point this at a release build.
        if let Some(bin) = std::env::var_os("CONNECT_WORKER_BIN") {
            return PathBuf::from(bin);
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_owned();
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "-q",
                "-p",
                "connect-worker",
                "--bin",
                "connect-worker",
            ])
            .current_dir(&root)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building connect-worker failed");
        target.join("debug").join("connect-worker")
    })
}

/// The ports [`free_port`] hands out. `tests/run.sh` reserves them from Linux's ephemeral use
/// for its run, so no client socket can hold one.
pub const TEST_PORTS: std::ops::RangeInclusive<u16> = 43000..=46999;

/// A loopback port for a worker (or another listener a test starts) that no other test process
/// is handed while this one runs.
///
/// A port bound then released (port 0) could be handed to two test processes started at the
/// same moment, or taken by a client socket before the worker bound it: seen in CI, a test's
/// worker failed to bind and its first requests went to another test's worker. So each port
/// here is claimed with an exclusive lock on a file named after it, held until this process
/// exits, and checked free by a bind.
pub fn free_port() -> u16 {
    static HELD: std::sync::Mutex<Vec<std::fs::File>> = std::sync::Mutex::new(Vec::new());
    let dir = std::env::temp_dir().join("connect-test-ports");
    std::fs::create_dir_all(&dir).unwrap();
    let (lo, hi) = (*TEST_PORTS.start() as u32, *TEST_PORTS.end() as u32);
    let span = hi - lo + 1;
    let start = std::process::id()
        .wrapping_mul(7919)
        .wrapping_add(unique_seed())
        % span;
    for i in 0..span {
        let port = (lo + (start + i) % span) as u16;
        let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(port.to_string()))
        else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
            continue;
        }
        HELD.lock().unwrap().push(file);
        return port;
    }
    panic!("no free port in {TEST_PORTS:?}");
}

/// A different starting point for each call in this process.
fn unique_seed() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .wrapping_mul(131)
}

/// The worker key (ours) confining the FileStream connectors; the harness sets it to the
/// cluster's [`ClusterSpec::dir`].
pub use connect_worker::config::FILE_CONNECTOR_ALLOWED_DIRS;

/// One Connect cluster: a group id and internal topics no other test uses.
#[derive(Debug, Clone)]
pub struct ClusterSpec {
    pub group_id: String,
    pub dir: PathBuf,
    /// Extra or overriding worker properties. A `listeners` value replaces the default
    /// `http://127.0.0.1:{port}`; `{port}` in it is the worker's port.
    pub props: BTreeMap<String, String>,
    /// The client the harness talks to workers with (one trusting a test CA for `https`).
    pub client: Option<reqwest::Client>,
    /// Extra environment variables of the worker processes (after the harness's own, so
    /// `RUST_LOG` can be overridden).
    pub env: BTreeMap<String, String>,
    /// Environment variables the worker processes do not inherit.
    pub env_removed: Vec<String>,
    /// `Some(connector files)`: the workers are standalone ones (`connect-worker standalone
    /// <worker.properties> <connector files...>`); see [`ClusterSpec::standalone`].
    pub standalone: Option<Vec<PathBuf>>,
}

impl ClusterSpec {
    pub fn new(prefix: &str) -> Self {
        let group_id = unique(prefix);
        let dir = std::env::temp_dir().join(&group_id);
        std::fs::create_dir_all(&dir).unwrap();
        let mut props = BTreeMap::new();
        for (k, v) in [
            ("bootstrap.servers", bootstrap_servers()),
            ("group.id", group_id.clone()),
            ("config.storage.topic", format!("{group_id}-configs")),
            ("offset.storage.topic", format!("{group_id}-offsets")),
            ("status.storage.topic", format!("{group_id}-status")),
            ("config.storage.replication.factor", "1".into()),
            ("offset.storage.replication.factor", "1".into()),
            ("status.storage.replication.factor", "1".into()),
            ("offset.storage.partitions", "5".into()),
            ("status.storage.partitions", "2".into()),
            (
                "key.converter",
                "org.apache.kafka.connect.json.JsonConverter".into(),
            ),
            (
                "value.converter",
                "org.apache.kafka.connect.json.JsonConverter".into(),
            ),
            ("key.converter.schemas.enable", "false".into()),
            ("value.converter.schemas.enable", "false".into()),
            ("offset.flush.interval.ms", "1000".into()),
            ("session.timeout.ms", "6000".into()),
            ("heartbeat.interval.ms", "1000".into()),
            ("rebalance.timeout.ms", "20000".into()),
            ("scheduled.rebalance.max.delay.ms", "4000".into()),
            // The FileStream connectors may use this cluster's directory (and only it).
            (FILE_CONNECTOR_ALLOWED_DIRS, dir.display().to_string()),
        ] {
            props.insert(k.to_owned(), v);
        }
        ClusterSpec {
            group_id,
            dir,
            props,
            client: None,
            env: BTreeMap::new(),
            env_removed: Vec::new(),
            standalone: None,
        }
    }

    /// A standalone worker (`connect-worker standalone`) with `connector_files` on its
    /// command line: the harness's converters, flush interval and file confinement, its
    /// offsets in `<dir>/connect.offsets`, no group or internal-topic keys. `group_id` is
    /// still unique: use it to name topics and connectors.
    pub fn standalone(prefix: &str, connector_files: Vec<PathBuf>) -> Self {
        let mut spec = ClusterSpec::new(prefix);
        spec.props.retain(|k, _| {
            [
                "bootstrap.servers",
                "key.converter",
                "value.converter",
                "key.converter.schemas.enable",
                "value.converter.schemas.enable",
                "offset.flush.interval.ms",
                FILE_CONNECTOR_ALLOWED_DIRS,
            ]
            .contains(&k.as_str())
        });
        let offsets = spec.offsets_file();
        spec.props.insert(
            "offset.storage.file.filename".to_owned(),
            offsets.display().to_string(),
        );
        spec.standalone = Some(connector_files);
        spec
    }

    /// The offsets file of a [`standalone`](Self::standalone) spec.
    pub fn offsets_file(&self) -> PathBuf {
        self.dir.join("connect.offsets")
    }

    /// Talk to this cluster's workers with `client`.
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    pub fn set(mut self, key: &str, value: &str) -> Self {
        self.props.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Sets an environment variable of the worker processes.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Keeps an environment variable of the test process from the worker processes.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.env_removed.push(key.to_owned());
        self
    }

    /// Removes a property, the harness's defaults included.
    pub fn unset(mut self, key: &str) -> Self {
        self.props.remove(key);
        self
    }

    /// Starts one worker of this cluster and waits until its REST API answers.
    pub async fn start_worker(&self) -> WorkerProc {
        WorkerProc::start(self, free_port()).await
    }
}

/// A running worker process. Dropping it kills the process.
pub struct WorkerProc {
    child: Option<Child>,
    pub port: u16,
    /// `scheme://host:port` of the worker's first listener.
    pub base: String,
    client: reqwest::Client,
    pub log: PathBuf,
    spec: ClusterSpec,
}

impl WorkerProc {
    /// Starts a worker and waits until its REST API answers and it has read its internal
    /// topics (`GET /connectors` answers: requests wait for that while the worker starts).
    pub async fn start(spec: &ClusterSpec, port: u16) -> Self {
        let w = Self::spawn(spec, port);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if w.get("/connectors").await.is_ok() {
                return w;
            }
            assert!(
                Instant::now() < deadline,
                "worker on port {port} did not answer; log:\n{}",
                w.log_text()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits until the worker's port accepts TCP connections; false after `timeout`.
    pub async fn wait_listening(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }

    /// Starts a worker process on `port` and returns at once.
    pub fn spawn(spec: &ClusterSpec, port: u16) -> Self {
        let props_path = spec.dir.join(format!("worker-{port}.properties"));
        let mut text = String::new();
        for (k, v) in &spec.props {
            text.push_str(&format!("{k}={v}\n"));
        }
        let listeners = match spec.props.get("listeners") {
            Some(l) => l.replace("{port}", &port.to_string()),
            None => {
                let l = format!("http://127.0.0.1:{port}");
                text.push_str(&format!("listeners={l}\n"));
                l
            }
        };
        let text = text.replace("{port}", &port.to_string());
        let base = listeners
            .split(',')
            .next()
            .unwrap()
            .trim()
            .trim_end_matches('/')
            .to_owned();
        std::fs::write(&props_path, text).unwrap();
        let log = spec.dir.join(format!("worker-{port}.log"));
        // Appended, so a restarted worker keeps its earlier log for the test to read.
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let mut command = Command::new(worker_binary());
        match &spec.standalone {
            Some(files) => command.arg("standalone").arg(&props_path).args(files),
            None => command.arg(&props_path),
        };
        command
            .env("RUST_LOG", "info,rdkafka=warn")
            .env("NO_COLOR", "1")
            .envs(&spec.env);
        for k in &spec.env_removed {
            command.env_remove(k);
        }
        let child = command
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn connect-worker");
        WorkerProc {
            child: Some(child),
            port,
            base,
            client: spec.client.clone().unwrap_or_else(|| http().clone()),
            log,
            spec: spec.clone(),
        }
    }

    /// Restarts a stopped or killed worker on the same port.
    pub async fn restart(&mut self) {
        let spec = self.spec.clone();
        self.restart_with(&spec).await;
    }

    /// Restarts the worker on the same port with another config (rolling upgrades).
    pub async fn restart_with(&mut self, spec: &ClusterSpec) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let fresh = WorkerProc::start(spec, self.port).await;
        *self = fresh;
    }

    pub fn worker_id(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `GET /health` answers `healthy`.
    pub async fn wait_healthy(&self) {
        eventually(Duration::from_secs(60), "worker healthy", || async {
            let (s, b) = self.send("GET", "/health", None).await;
            (s == 200 && b["status"] == "healthy").then_some(())
        })
        .await;
    }

    /// Whether the worker's latest assignment made it the leader (from its log).
    pub fn is_leader(&self) -> Option<bool> {
        let log = self.log_text();
        let line = log
            .lines()
            .rev()
            .find(|l| l.contains("assignment received"))?;
        Some(line.contains("is_leader=true"))
    }

    pub fn pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }

    /// Sends a signal with kill(1) (the workspace forbids `unsafe`, so no libc call).
    fn signal(&self, sig: &str) {
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill")
                .arg(format!("-{sig}"))
                .arg(pid.to_string())
                .status();
        }
    }

    /// SIGKILL: a crash, no clean shutdown, no LeaveGroup.
    pub fn kill9(&mut self) {
        self.signal("KILL");
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait for a clean exit; returns the exit status.
    pub fn terminate(&mut self) -> Option<std::process::ExitStatus> {
        self.signal("TERM");
        self.child.take().and_then(|mut c| c.wait().ok())
    }

    /// SIGSTOP: the process freezes (a zombie once the group moves on).
    pub fn pause(&self) {
        self.signal("STOP");
    }

    pub fn resume(&self) {
        self.signal("CONT");
    }

    pub async fn get(&self, path: &str) -> Result<Value, String> {
        let res = self
            .client
            .get(self.url(path))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = res.status();
        let body: Value = res.json().await.map_err(|e| e.to_string())?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(format!("{status}: {body}"))
        }
    }

    /// The value of one sample of `GET /metrics` (`series`: the name with its labels, as
    /// printed), if the worker reports it.
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let text = self
            .client
            .get(self.url("/metrics"))
            .send()
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(series)?.strip_prefix(' ')?;
            rest.split_whitespace().next()?.parse().ok()
        })
    }

    /// Sends a request with a JSON body; returns (status, body or Null).
    pub async fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.client.request(m, self.url(path));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("REST request");
        let status = res.status().as_u16();
        let text = res.text().await.unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

impl Drop for WorkerProc {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A failing test shows what each of its workers last logged (CI keeps no files).
            let log = self.log_text();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(60)..];
            eprintln!(
                "---- last {} log lines of the worker on port {} ----\n{}",
                tail.len(),
                self.port,
                tail.join("\n")
            );
        }
        if let Some(mut c) = self.child.take() {
            self.signal("CONT");
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn http() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap()
    })
}

/// Runs a worker of `spec` that is expected to refuse to start: waits (at most 60 s) for it
/// to exit and returns whether it exited successfully and what it printed.
pub async fn run_to_exit(spec: &ClusterSpec) -> (bool, String) {
    let mut w = WorkerProc::spawn(spec, free_port());
    let mut child = w.child.take().expect("spawned");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the worker") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the worker did not exit; log:\n{}", w.log_text());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    (status.success(), w.log_text())
}

/// Polls `check` every 250 ms until it returns `Some`, or panics with `what` after `timeout`.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Creates a connector through `w`'s REST API and asserts Connect's 201.
pub async fn create_connector(w: &WorkerProc, name: &str, config: Value) {
    let (status, body) = w
        .send(
            "POST",
            "/connectors",
            Some(serde_json::json!({"name": name, "config": config})),
        )
        .await;
    assert_eq!(status, 201, "create {name}: {body}");
}

/// task id -> worker id, once every task of `connector` is RUNNING and there are `tasks`.
pub async fn running_tasks(
    w: &WorkerProc,
    connector: &str,
    tasks: usize,
) -> Option<BTreeMap<i64, String>> {
    let status = w
        .get(&format!("/connectors/{connector}/status"))
        .await
        .ok()?;
    let list = status["tasks"].as_array()?;
    if list.len() != tasks || list.iter().any(|t| t["state"] != "RUNNING") {
        return None;
    }
    list.iter()
        .map(|t| Some((t["id"].as_i64()?, t["worker_id"].as_str()?.to_owned())))
        .collect()
}
