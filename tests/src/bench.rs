//! What the benchmarks share: Apache Kafka Connect 4.4's worker started by
//! tests/apache/apache-connect.sh (the same JVM options as Apache's scripts), a process's CPU
//! seconds and memory from `/proc`, and deleting a run's topics.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::kafka::{self, client_config};

/// Apache's bin/connect-distributed.sh: `KAFKA_HEAP_OPTS`.
pub const APACHE_HEAP_OPTS: &str = "-Xms256M -Xmx2G";
/// Apache's bin/kafka-run-class.sh: `KAFKA_JVM_PERFORMANCE_OPTS`.
pub const APACHE_JVM_OPTS: &str = "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
     -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
     -XX:MaxInlineLevel=15 -Djava.awt.headless=true";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_owned()
}

pub fn apache_home() -> PathBuf {
    std::env::var_os("APACHE_CONNECT_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".local/apache-connect"))
}

/// A started Apache Connect worker of apache-connect.sh: its REST URL, the JVM's pid, and its
/// internal topics (to delete after the run).
pub struct ApacheWorker {
    pub url: String,
    pub pid: i32,
    pub internal: Vec<String>,
}

/// Starts Apache's worker with `exactly.once.source.support=support` and `extra` worker
/// properties (one `key=value` per line).
pub fn apache_start(support: &str, extra: &str) -> ApacheWorker {
    apache_start_with(support, extra, &[])
}

/// [`apache_start`] with more environment for apache-connect.sh (e.g.
/// `APACHE_CONNECT_APICURIO_CONVERTER=1`).
pub fn apache_start_with(support: &str, extra: &str, env: &[(&str, &str)]) -> ApacheWorker {
    let script = root().join("tests/apache/apache-connect.sh");
    let status = Command::new(&script).arg("status").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&status.stdout).starts_with("running"),
        "an Apache Connect worker of apache-connect.sh is already running: stop it first"
    );
    let props = format!(
        "key.converter.schemas.enable=false\nvalue.converter.schemas.enable=false\n\
         exactly.once.source.support={support}\n{extra}"
    );
    let heap =
        std::env::var("APACHE_CONNECT_HEAP_OPTS").unwrap_or_else(|_| APACHE_HEAP_OPTS.into());
    let jvm = std::env::var("APACHE_CONNECT_JVM_OPTS").unwrap_or_else(|_| APACHE_JVM_OPTS.into());
    let out = Command::new(&script)
        .arg("start")
        .env("APACHE_CONNECT_BENCH_PLUGIN", "1")
        .env("APACHE_CONNECT_WORKER_PROPS", props)
        .env("APACHE_CONNECT_HEAP_OPTS", heap)
        .env("APACHE_CONNECT_JVM_OPTS", jvm)
        .env("KAFKA_BOOTSTRAP_SERVERS", kafka::bootstrap_servers())
        .envs(env.iter().copied())
        .stderr(Stdio::inherit())
        .output()
        .expect("run tests/apache/apache-connect.sh start");
    assert!(out.status.success(), "apache-connect.sh start failed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let url = stdout
        .lines()
        .find_map(|l| l.strip_prefix("APACHE_CONNECT_URL="))
        .expect("apache-connect.sh printed APACHE_CONNECT_URL")
        .to_owned();
    let run = apache_home().join("run");
    let pid: i32 = std::fs::read_to_string(run.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&cmdline)
            .contains("org.apache.kafka.connect.cli.ConnectDistributed"),
        "pid {pid} of apache-connect.sh's run/pid is not the ConnectDistributed JVM"
    );
    let internal: Vec<String> = std::fs::read_to_string(run.join("worker.properties"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.ends_with(".storage.topic"))
        .map(|(_, v)| v.to_owned())
        .collect();
    ApacheWorker { url, pid, internal }
}

/// Stops Apache's worker and deletes its internal topics and `topics`.
pub async fn apache_stop(worker: ApacheWorker, topics: &[String]) {
    let script = root().join("tests/apache/apache-connect.sh");
    let stopped = Command::new(&script).arg("stop").status().unwrap();
    assert!(stopped.success(), "apache-connect.sh stop failed");
    let mut all = worker.internal;
    all.extend(topics.iter().cloned());
    delete_topics(&all).await;
}

/// User plus system CPU seconds of a process so far (`/proc/<pid>/stat`, Linux).
pub fn cpu_seconds(pid: i32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line: 11 and 12 counted from the state (3).
    (ticks(11) + ticks(12)) / 100.0
}

/// Peak resident set size of a process in KiB (`VmHWM` of `/proc/<pid>/status`).
pub fn peak_rss_kib(pid: i32) -> u64 {
    proc_status_field(pid, "VmHWM:")
}

/// A numeric field of `/proc/<pid>/status` (e.g. `VmHWM:` in kB, `Threads:`); 0 if absent.
pub fn proc_status_field(pid: i32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Deletes the run's topics, so that runs do not pile data on the broker's disk.
pub async fn delete_topics(topics: &[String]) {
    use rdkafka::admin::{AdminClient, AdminOptions};
    use rdkafka::client::DefaultClientContext;
    let admin: AdminClient<DefaultClientContext> = client_config().create().unwrap();
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    let _ = admin.delete_topics(&names, &AdminOptions::new()).await;
}
