//! The object-store sink: the same records written twice (a second connector replays the topic
//! from the start, with a worker killed during the first run) give the same object names with
//! byte-identical contents, and no two files overlap in offsets. Local filesystem always; the
//! S3-compatible server when `S3_ENDPOINT` is set (tests/run.sh starts one).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use serde_json::{Value, json};

const SINK: &str = "connect_connectors::objectstore::ObjectStoreSinkConnector";
const N: usize = 1000;
const FLUSH: usize = 50;

async fn create(w: &WorkerProc, name: &str, config: Value) {
    // Retried: right after a worker died, the survivor may still forward to the dead leader.
    let body = json!({"name": name, "config": config});
    eventually(Duration::from_secs(60), "connector created", || async {
        let (status, _) = w.send("POST", "/connectors", Some(body.clone())).await;
        (status == 201 || status == 409 && w.get(&format!("/connectors/{name}")).await.is_ok())
            .then_some(())
    })
    .await;
}

/// Relative path -> bytes of every file under `dir`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Checks that files of each partition start where the previous one ended.
fn assert_no_overlap(files: &BTreeMap<String, Vec<u8>>) {
    let mut by_partition: BTreeMap<String, Vec<(i64, usize)>> = BTreeMap::new();
    for (name, bytes) in files {
        let file = name.rsplit('/').next().unwrap();
        let mut parts = file.trim_end_matches(".jsonl").rsplitn(3, '+');
        let start: i64 = parts.next().unwrap().parse().unwrap();
        let partition = parts.next().unwrap().to_owned();
        let lines = bytes.iter().filter(|b| **b == b'\n').count();
        by_partition
            .entry(partition)
            .or_default()
            .push((start, lines));
    }
    for (p, mut list) in by_partition {
        list.sort();
        for w in list.windows(2) {
            assert_eq!(
                w[0].0 + w[0].1 as i64,
                w[1].0,
                "partition {p}: files overlap or leave a gap"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_rewrites_identical_files_on_the_local_filesystem() {
    let spec = ClusterSpec::new("objstore");
    let mut w1 = spec.start_worker().await;
    let w2 = spec.start_worker().await;
    let topic = unique("files");
    kafka::create_topics(&[&topic], 2).await;
    let records: Vec<_> = (0..N)
        .map(|n| {
            (
                Some(n.to_string()),
                Some(json!({"n": n, "s": "y".repeat(30)}).to_string()),
            )
        })
        .collect();
    kafka::produce(&topic, records.into_iter()).await;
    let dir_a = spec.dir.join("a");
    let dir_b = spec.dir.join("b");
    let config = |dir: &Path| {
        json!({
            "connector.class": SINK, "tasks.max": "2", "topics": topic,
            "store.url": format!("file://{}", dir.display()), "flush.size": FLUSH.to_string(),
        })
    };
    create(&w1, "files-a", config(&dir_a)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    w1.kill9();
    // Every record is in a file once all full files exist (the tails are below flush.size).
    let full = |f: &BTreeMap<String, Vec<u8>>| {
        f.values()
            .map(|b| b.iter().filter(|x| **x == b'\n').count())
            .sum::<usize>()
    };
    let expected_min = N - 2 * FLUSH;
    eventually(Duration::from_secs(120), "files of run a", || async {
        (full(&files(&dir_a)) >= expected_min).then_some(())
    })
    .await;
    create(&w2, "files-b", config(&dir_b)).await;
    eventually(Duration::from_secs(120), "files of run b", || async {
        (files(&dir_b).len() == files(&dir_a).len()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let a = files(&dir_a);
    let b = files(&dir_b);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a == b, "a replay wrote different bytes");
    assert_no_overlap(&a);
    assert!(
        a.keys().all(|k| k.contains("/partition=")),
        "{:?}",
        a.keys()
    );
}
