// Real-broker tests of the herder's request API: changes are serialised on the leader, and the
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
