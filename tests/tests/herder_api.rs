// Real-broker tests of the herder's request API: changes are serialised on the leader, config
// updates disturb no more than they must (issue 42), and the
// offsets endpoints use the consumer group a sink's tasks commit to.

use std::time::Duration;

use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use serde_json::{Value, json};

const FILE_SINK: &str = "org.apache.kafka.connect.file.FileStreamSinkConnector";
const FILE_SOURCE: &str = "org.apache.kafka.connect.file.FileStreamSourceConnector";

/// Starts `n` workers and waits until each is healthy and exactly one leads.
async fn cluster(spec: &ClusterSpec, n: usize) -> Vec<WorkerProc> {
    let mut workers = Vec::new();
    for _ in 0..n {
        let w = spec.start_worker().await;
        w.wait_healthy().await;
        workers.push(w);
    }
    eventually(Duration::from_secs(60), "one leader", || async {
        let leaders: Vec<Option<bool>> = workers.iter().map(WorkerProc::is_leader).collect();
        (leaders.iter().all(Option::is_some)
            && leaders.iter().filter(|l| **l == Some(true)).count() == 1)
            .then_some(())
    })
    .await;
    workers
}

/// 20 concurrent creates of one name, spread over three workers (so most are forwarded to the
/// leader): the leader's request queue lets exactly one through.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_creates_of_one_name_give_one_201_and_409s() {
    let spec = ClusterSpec::new("herder-api-creates");
    let workers = cluster(&spec, 3).await;
    let file = spec.dir.join("in.txt");
    std::fs::write(&file, "").unwrap();
    let body = json!({"name": "dup", "config": {
        "connector.class": FILE_SOURCE, "file": file.to_string_lossy(),
        "topic": unique("herder-api-dup"), "tasks.max": "1"}});
    let requests = (0..20).map(|i| {
        let w = &workers[i % workers.len()];
        let body = body.clone();
        async move { w.send("POST", "/connectors", Some(body)).await }
    });
    let answers: Vec<(u16, Value)> = futures::future::join_all(requests).await;
    let created = answers.iter().filter(|(s, _)| *s == 201).count();
    let conflicts: Vec<&Value> = answers
        .iter()
        .filter(|(s, _)| *s == 409)
        .map(|(_, b)| b)
        .collect();
    let statuses: Vec<u16> = answers.iter().map(|(s, _)| *s).collect();
    assert_eq!(created, 1, "exactly one create succeeds: {statuses:?}");
    assert_eq!(
        conflicts.len(),
        19,
        "every other create is a 409: {answers:?}"
    );
    for b in &conflicts {
        let m = b["message"].as_str().unwrap_or_default();
        assert!(
            m == "Connector dup already exists" || m.starts_with("Cannot complete request"),
            "unexpected 409 message: {b}"
        );
    }
    // One connector config record for the name in the config topic.
    let topic = format!("{}-configs", spec.group_id);
    let records = tokio::task::spawn_blocking(move || {
        kafka::read_all(
            &[&topic],
            Isolation::ReadUncommitted,
            Duration::from_secs(30),
        )
    })
    .await
    .unwrap();
    let configs = records
        .iter()
        .filter(|r| r.key.as_deref() == Some("connector-dup") && r.value.is_some())
        .count();
    assert_eq!(configs, 1, "one config record for connector dup");
    for w in &workers {
        assert_eq!(w.get("/connectors").await.unwrap(), json!(["dup"]));
    }
}

/// With a worker-level `consumer.group.id`, the sink's tasks commit to that group, and
/// `GET`/`DELETE .../offsets` use the same group.
#[tokio::test(flavor = "multi_thread")]
async fn sink_offsets_use_the_group_the_task_commits_to() {
    let group = unique("herder-api-worker-group");
    let spec = ClusterSpec::new("herder-api-sink-group").set("consumer.group.id", &group);
    let workers = cluster(&spec, 1).await;
    let w = &workers[0];
    let topic = unique("herder-api-sink");
    kafka::create_topics(&[&topic], 2).await;
    kafka::produce(
        &topic,
        (0..40).map(|i| (Some(format!("\"k{i}\"")), Some(format!("\"v{i}\"")))),
    )
    .await;
    let file = spec.dir.join("out.txt");
    let (s, b) = w
        .send(
            "POST",
            "/connectors",
            Some(
                json!({"name": "herder-snk", "config": {"connector.class": FILE_SINK,
                "topics": topic, "file": file.to_string_lossy()}}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let (t, g) = (topic.clone(), group.clone());
    eventually(
        Duration::from_secs(60),
        "the task committed all 40 records to the worker's group",
        || {
            let (t, g) = (t.clone(), g.clone());
            async move {
                let total = tokio::task::spawn_blocking(move || kafka::committed_total(&g, &t, 2))
                    .await
                    .ok()?;
                (total == 40).then_some(())
            }
        },
    )
    .await;
    let offsets = w.get("/connectors/herder-snk/offsets").await.unwrap();
    let total: i64 = offsets["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["offset"]["kafka_offset"].as_i64().unwrap())
        .sum();
    assert_eq!(
        total, 40,
        "GET reads the group the task commits to: {offsets}"
    );
    assert_eq!(
        kafka::committed_total(&format!("connect-{}", "herder-snk"), &topic, 2),
        0,
        "nothing was committed to the default group"
    );

    // DELETE resets that same group.
    let (s, b) = w.send("PUT", "/connectors/herder-snk/stop", None).await;
    assert_eq!(s, 204, "{b}");
    eventually(Duration::from_secs(60), "offsets reset", || async {
        let (s, _) = w
            .send("DELETE", "/connectors/herder-snk/offsets", None)
            .await;
        (s == 200).then_some(())
    })
    .await;
    assert_eq!(
        w.get("/connectors/herder-snk/offsets").await.unwrap(),
        json!({"offsets": []})
    );
    let (t, g) = (topic.clone(), group.clone());
    let left = tokio::task::spawn_blocking(move || kafka::committed_total(&g, &t, 2))
        .await
        .unwrap();
    assert_eq!(left, 0, "the worker's group lost its offsets");
}

const VERIFIABLE: &str = "org.apache.kafka.connect.tools.VerifiableSourceConnector";
const EPOCH: &str = "kafka_connect_worker_rebalance_epoch";
const REBALANCES: &str = "kafka_connect_worker_rebalance_completed_rebalances_total";

/// Every worker's (group generation, completed rebalances), from `GET /metrics`.
async fn rebalance_marks(workers: &[WorkerProc]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for w in workers {
        out.push((
            w.metric(EPOCH).await.expect("epoch metric"),
            w.metric(REBALANCES)
                .await
                .expect("completed rebalances metric"),
        ));
    }
    out
}

/// The end offset of a topic's partition 0 (a config topic has one).
fn end_offset(topic: &str) -> i64 {
    kafka::read_all(
        &[topic],
        Isolation::ReadUncommitted,
        Duration::from_secs(30),
    )
    .last()
    .map_or(0, |r| r.offset + 1)
}

/// Issue 42: a `PUT` of a connector's unchanged config, through a follower, answers 200 and
/// writes nothing to the config topic; a `PUT` that changes it (same task count) restarts the
/// tasks with their new configs on the workers that run them, and neither causes a rebalance:
/// every worker's generation and rebalance count stay as they were.
#[tokio::test(flavor = "multi_thread")]
async fn config_updates_restart_only_what_changed_and_never_rebalance() {
    let spec = ClusterSpec::new("herder-api-updates");
    let workers = cluster(&spec, 2).await;
    let topic = unique("herder-api-updates");
    kafka::create_topics(&[&topic], 1).await;
    let name = "updated";
    let config = json!({
        "connector.class": VERIFIABLE, "tasks.max": "2", "topic": topic, "throughput": "10",
    });
    connect_tests::worker::create_connector(&workers[0], name, config.clone()).await;
    eventually(Duration::from_secs(60), "2 tasks RUNNING", || {
        connect_tests::worker::running_tasks(&workers[0], name, 2)
    })
    .await;
    // Settled: the rebalance that assigned the tasks is over on both workers.
    let before = eventually(
        Duration::from_secs(30),
        "the same generation everywhere",
        || async {
            let marks = rebalance_marks(&workers).await;
            (marks.iter().all(|m| m.0 == marks[0].0)).then_some(marks)
        },
    )
    .await;
    let configs_topic = format!("{}-configs", spec.group_id);
    let end_before = end_offset(&configs_topic);

    // Unchanged, through the follower (forwarded to the leader): nothing written.
    let follower = workers
        .iter()
        .find(|w| w.is_leader() == Some(false))
        .expect("a follower");
    let mut stored = workers[0]
        .get(&format!("/connectors/{name}/config"))
        .await
        .unwrap();
    let (status, body) = follower
        .send(
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(stored.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["config"], stored, "{body}");
    assert_eq!(body["tasks"].as_array().map(Vec::len), Some(2), "{body}");
    assert_eq!(
        end_offset(&configs_topic),
        end_before,
        "an unchanged config was written to the config topic"
    );

    // Changed, same task count: new task configs, restarted tasks, no rebalance.
    stored["throughput"] = json!("20");
    let (status, body) = follower
        .send(
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(stored.clone()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    eventually(
        Duration::from_secs(30),
        "task configs with the new throughput",
        || async {
            let tasks = workers[0]
                .get(&format!("/connectors/{name}/tasks"))
                .await
                .ok()?;
            let list = tasks.as_array()?;
            (list.len() == 2 && list.iter().all(|t| t["config"]["throughput"] == "20"))
                .then_some(())
        },
    )
    .await;
    eventually(Duration::from_secs(30), "2 tasks RUNNING again", || {
        connect_tests::worker::running_tasks(&workers[0], name, 2)
    })
    .await;
    // A rebalance (were one requested) would have started within the heartbeat interval.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        rebalance_marks(&workers).await,
        before,
        "a config update with an unchanged task count rebalanced the group: (generation, rebalances) per worker"
    );
    assert!(
        workers.iter().any(|w| w
            .log_text()
            .contains("new task configs for the connector; restarting the task")),
        "no worker restarted a task with its new config"
    );
}

/// Issue 42: 30 concurrent `PUT`s that change 30 different connectors' configs (through a
/// follower and the leader alike) all answer 200 within seconds, each written to the config
/// topic before its answer. Before, every config write held the leader's request queue for
/// two reads of the config topic at the consumer thread's 20 ms poll pace.
#[tokio::test(flavor = "multi_thread")]
async fn a_burst_of_puts_to_different_connectors_is_written_within_seconds() {
    const N: usize = 30;
    let spec = ClusterSpec::new("herder-api-burst");
    let workers = cluster(&spec, 2).await;
    let topic = unique("herder-api-burst");
    kafka::create_topics(&[&topic], 1).await;
    let names: Vec<String> = (0..N).map(|i| format!("burst-{i}")).collect();
    for n in &names {
        let (status, body) = workers[0]
            .send(
                "POST",
                "/connectors",
                Some(json!({"name": n, "initial_state": "STOPPED", "config": {
                    "connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
                }})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let started = std::time::Instant::now();
    let puts = names.iter().enumerate().map(|(i, n)| {
        let (w, topic) = (&workers[i % 2], &topic);
        async move {
            let config = json!({
                "connector.class": VERIFIABLE, "tasks.max": "1", "topic": topic,
                "throughput": format!("{}", 100 + i),
            });
            w.send("PUT", &format!("/connectors/{n}/config"), Some(config))
                .await
        }
    });
    let answers = futures::future::join_all(puts).await;
    let took = started.elapsed();
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
    }
    // Each answer came after its write: the config topic holds every new config now.
    let records = kafka::read_all(
        &[&format!("{}-configs", spec.group_id)],
        Isolation::ReadUncommitted,
        Duration::from_secs(30),
    );
    for (i, n) in names.iter().enumerate() {
        let key = format!("connector-{n}");
        let last: Value = records
            .iter()
            .rev()
            .find(|r| r.key.as_deref() == Some(key.as_str()))
            .and_then(|r| serde_json::from_str(r.value.as_deref()?).ok())
            .unwrap_or_else(|| panic!("no config record for {n}"));
        assert_eq!(
            last["properties"]["throughput"],
            json!(format!("{}", 100 + i)),
            "{n}: {last}"
        );
    }
    eprintln!("{N} concurrent PUTs to different connectors answered in {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "{N} concurrent PUTs to different connectors took {took:?}"
    );
}
