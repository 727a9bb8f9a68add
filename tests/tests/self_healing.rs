//! Self-healing (`auto.restart.*`), against the local Kafka with real worker processes:
//!
//! - a sink task that failed because its dead-letter queue topic could not be created (its
//!   replication factor exceeds the brokers) shows its next attempt in status and logs, and
//!   runs again by itself once an operator creates the topic; the poison record it was holding
//!   lands in the dead-letter queue and the good records in the file;
//! - a connector that fails with a configuration error is not retried, and its status says why;
//! - a config write left open by a leader that died mid-transaction is aborted within seconds,
//!   so a restarted worker reads the config topic and runs its task again (not after the
//!   writer's transaction timeout);
//! - a leader SIGKILLed at random moments while connector configs are rewritten in a loop
//!   comes back answering REST and running its tasks within 15 s each time.

use std::time::{Duration, Instant};

use connect_tests::kafka::{Isolation, client_config, create_topics, produce, read_all};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, create_connector, eventually, running_tasks};
use serde_json::{Value, json};

const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const WAIT: Duration = Duration::from_secs(60);

async fn task_status(w: &WorkerProc, connector: &str) -> Option<Value> {
    let status = w
        .get(&format!("/connectors/{connector}/status"))
        .await
        .ok()?;
    status["tasks"].get(0).cloned()
}

#[tokio::test]
async fn a_failed_sink_task_runs_again_once_its_dead_letter_queue_exists() {
    let spec = ClusterSpec::new("heal-dlq");
    let w = spec.start_worker().await;
    let topic = unique("heal-in");
    let dlq = unique("heal-dlq");
    create_topics(&[&topic], 1).await;
    produce(
        &topic,
        ["{\"n\":1}", "not json", "{\"n\":3}"]
            .into_iter()
            .map(|v| (None, Some(v.to_owned()))),
    )
    .await;
    let out = spec.dir.join("heal-sink.txt");
    create_connector(
        &w,
        "heal-sink",
        json!({
            "connector.class": FILE_SINK, "topics": topic, "file": out.display().to_string(),
            "tasks.max": "1",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "false",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            // One broker: the topic cannot be created with three replicas.
            "errors.deadletterqueue.topic.replication.factor": "3",
            "auto.restart.backoff.initial.ms": "3000",
            "auto.restart.backoff.max.ms": "6000",
        }),
    )
    .await;

    // FAILED, with the next attempt in the trace (the fields Apache's clients read).
    let failed = eventually(WAIT, "the task FAILED with its next attempt", || async {
        let t = task_status(&w, "heal-sink").await?;
        let trace = t["trace"].as_str()?.to_owned();
        (t["state"] == "FAILED" && trace.contains("Automatic restart attempt")).then_some(trace)
    })
    .await;
    assert!(failed.contains(" GMT (in "), "{failed}");
    eventually(WAIT, "the attempt in the log", || async {
        w.log_text()
            .contains("failed; Automatic restart attempt 1 at ")
            .then_some(())
    })
    .await;
    // Without the topic, later attempts fail too, and are counted.
    eventually(WAIT, "a second attempt planned", || async {
        let t = task_status(&w, "heal-sink").await?;
        t["trace"]
            .as_str()?
            .contains("Automatic restart attempt 2")
            .then_some(())
    })
    .await;
    assert!(read_all(&[&dlq], Isolation::ReadUncommitted, Duration::from_secs(1)).is_empty());

    // The operator creates the topic; the task runs again by itself.
    create_topics(&[&dlq], 1).await;
    eventually(WAIT, "the task RUNNING again by itself", || async {
        let t = task_status(&w, "heal-sink").await?;
        (t["state"] == "RUNNING").then_some(())
    })
    .await;
    eventually(
        WAIT,
        "the poison record in the dead-letter queue",
        || async {
            let n = read_all(&[&dlq], Isolation::ReadUncommitted, Duration::from_secs(2)).len();
            (n == 1).then_some(())
        },
    )
    .await;
    eventually(WAIT, "the good records in the file", || async {
        let written = std::fs::read_to_string(&out).unwrap_or_default();
        (written.lines().count() == 2).then_some(())
    })
    .await;
    assert!(
        w.log_text()
            .contains("restarting task heal-sink-0 automatically"),
        "the restart is logged"
    );
}

#[tokio::test]
async fn a_configuration_error_is_not_retried_and_says_why() {
    let secrets = std::env::temp_dir().join(unique("heal-secrets"));
    std::fs::create_dir_all(&secrets).unwrap();
    let file = secrets.join("sink.properties");
    let spec = ClusterSpec::new("heal-config")
        .set("config.providers", "file")
        .set(
            "config.providers.file.class",
            "org.apache.kafka.common.config.provider.FileConfigProvider",
        )
        .set(
            "config.providers.file.param.allowed.paths",
            secrets.to_str().unwrap(),
        )
        .set("auto.restart.backoff.initial.ms", "1000")
        .set("auto.restart.backoff.max.ms", "2000");
    let out = spec.dir.join("config-sink.txt");
    std::fs::write(&file, format!("out={}\n", out.display())).unwrap();
    let w = spec.start_worker().await;
    let topic = unique("heal-config-in");
    create_topics(&[&topic], 1).await;
    create_connector(
        &w,
        "config-sink",
        json!({
            "connector.class": FILE_SINK, "topics": topic, "tasks.max": "1",
            "file": format!("${{file:{}:out}}", file.display()),
        }),
    )
    .await;
    eventually(WAIT, "the connector RUNNING", || async {
        let s = w.get("/connectors/config-sink/status").await.ok()?;
        (s["connector"]["state"] == "RUNNING").then_some(())
    })
    .await;

    // The secret goes away; a restart cannot resolve the placeholder: a config error.
    std::fs::remove_file(&file).unwrap();
    let (status, body) = w
        .send("POST", "/connectors/config-sink/restart", None)
        .await;
    assert!(status == 204 || status == 202, "{status} {body}");
    let trace = eventually(
        WAIT,
        "the connector FAILED, saying it is not retried",
        || async {
            let s = w.get("/connectors/config-sink/status").await.ok()?;
            let trace = s["connector"]["trace"].as_str()?.to_owned();
            (s["connector"]["state"] == "FAILED" && trace.contains("Not restarted automatically"))
                .then_some(trace)
        },
    )
    .await;
    assert!(trace.contains("configuration error"), "{trace}");
    // Several backoffs later it is still FAILED and no attempt was planned.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let s = w.get("/connectors/config-sink/status").await.unwrap();
    assert_eq!(s["connector"]["state"], "FAILED", "{s}");
    assert!(!w.log_text().contains("Automatic restart attempt"));

    // A bad override is a validation error on its key.
    let (status, body) = w
        .send(
            "PUT",
            "/connector-plugins/FileStreamSinkConnector/config/validate",
            Some(json!({
                "connector.class": FILE_SINK, "topics": topic, "file": out.display().to_string(),
                "auto.restart.max.attempts": "many",
            })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let errors: Vec<&Value> = body["configs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["value"]["name"] == "auto.restart.max.attempts")
        .flat_map(|c| c["value"]["errors"].as_array().unwrap())
        .collect();
    assert_eq!(
        errors,
        [&json!(
            "Invalid value many for configuration auto.restart.max.attempts: Not a number of type INT"
        )],
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_config_write_left_open_by_a_dead_leader_is_aborted_within_seconds() {
    left_open_by_a_dead_worker(
        |group| {
            (
                format!("connect-cluster-{group}"),
                format!("{group}-configs"),
            )
        },
        "the config writer's transaction has been open for",
    )
    .await;
}

/// A task killed in the middle of its commit (its offsets records written, `EndTxn` not sent)
/// leaves its transaction open on the offsets topic, which a restarting worker reads
/// `read_committed` before it joins the group: it aborts that transaction itself within seconds
/// instead of waiting out the task's transaction timeout.
#[tokio::test(flavor = "multi_thread")]
async fn a_task_commit_left_open_on_the_offsets_topic_is_aborted_within_seconds() {
    left_open_by_a_dead_worker(
        |group| (format!("{group}-vs-0"), format!("{group}-offsets")),
        "a task's transaction has been open for",
    )
    .await;
}

/// One worker runs an exactly-once task and stops; a transaction of the id `stuck(group)` gives
/// (for its topic) is left open as a dead writer leaves it; the restarted worker runs its task
/// within 15 s, having logged `reported`.
async fn left_open_by_a_dead_worker(stuck: fn(&str) -> (String, String), reported: &str) {
    let spec = ClusterSpec::new("heal-stuck").set("exactly.once.source.support", "enabled");
    let mut w = spec.start_worker().await;
    let topic = unique("heal-stuck-data");
    create_topics(&[&topic], 1).await;
    create_connector(
        &w,
        "vs",
        json!({
            "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "tasks.max": "1", "topic": topic, "throughput": "20", "max.records": "100000",
            "exactly.once.support": "required",
        }),
    )
    .await;
    eventually(WAIT, "the task running", || async {
        running_tasks(&w, "vs", 1).await
    })
    .await;
    w.terminate();

    // The writer died in the middle of a transaction: it stays open (for five minutes, this
    // writer's timeout), and read_committed readers of the topic wait.
    let (transactional_id, stuck_topic) = stuck(&spec.group_id);
    let stuck = tokio::task::spawn_blocking(move || {
        use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
        let p: BaseProducer = client_config()
            .set("transactional.id", transactional_id)
            .set("transaction.timeout.ms", "300000")
            .create()
            .unwrap();
        p.init_transactions(Duration::from_secs(30)).unwrap();
        p.begin_transaction().unwrap();
        p.send(
            BaseRecord::<str, str>::to(&stuck_topic)
                .key("half-written")
                .payload("{}"),
        )
        .unwrap();
        p.flush(Duration::from_secs(10)).unwrap();
        p
    })
    .await
    .unwrap();

    let restarted = Instant::now();
    w.restart().await;
    eventually(
        Duration::from_secs(15),
        "the restarted worker runs its task within 15 s",
        || async { running_tasks(&w, "vs", 1).await },
    )
    .await;
    println!("task running {:?} after the restart", restarted.elapsed());
    let log = w.log_text();
    assert!(
        log.contains(reported) && log.contains("aborted the stuck transaction"),
        "the stuck transaction is reported and cleared:\n{log}"
    );
    assert_eq!(w.get("/connectors").await.unwrap(), json!(["vs"]));
    drop(stuck);
}

/// The leader is SIGKILLed at a random moment while a client rewrites connector configs as fast
/// as it can (each write a transaction of the config writer), three times; each time the
/// restarted worker answers REST and runs its tasks within 15 s.
#[tokio::test(flavor = "multi_thread")]
async fn a_leader_killed_while_configs_are_written_comes_back_within_seconds() {
    let spec = ClusterSpec::new("heal-kill").set("exactly.once.source.support", "enabled");
    let mut w = spec.start_worker().await;
    let topic = unique("heal-kill-data");
    create_topics(&[&topic], 1).await;
    let config = |n: u64| {
        json!({
            "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "tasks.max": "1", "topic": topic, "throughput": (20 + n % 7).to_string(),
            "max.records": "100000", "exactly.once.support": "required",
        })
    };
    create_connector(&w, "vs", config(0)).await;
    eventually(WAIT, "the task running", || async {
        running_tasks(&w, "vs", 1).await
    })
    .await;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    println!("random seed: {seed}");
    for round in 0..3u64 {
        let writes = tokio::spawn({
            let (url, client) = (w.url("/connectors/vs/config"), reqwest::Client::new());
            let configs: Vec<Value> = (1..10_000).map(config).collect();
            async move {
                for c in configs {
                    if client.put(&url).json(&c).send().await.is_err() {
                        return;
                    }
                }
            }
        });
        // 0.5 to 2.5 s of writes, then SIGKILL in the middle of whatever is going on.
        let wait = 500 + (seed.wrapping_mul(round + 7) >> 3) % 2000;
        tokio::time::sleep(Duration::from_millis(wait)).await;
        w.kill9();
        writes.abort();
        let restarted = Instant::now();
        w.restart().await;
        eventually(
            Duration::from_secs(15),
            "the restarted leader answers REST and runs its task within 15 s",
            || async {
                (w.get("/connectors").await.ok()? == json!(["vs"])
                    && running_tasks(&w, "vs", 1).await.is_some())
                .then_some(())
            },
        )
        .await;
        println!(
            "round {round}: killed after {wait} ms of writes; task running {:?} after the restart",
            restarted.elapsed()
        );
    }
}
