//! The object-store sink: the same records written twice (a second connector replays the topic
//! from the start, with a worker killed during the first run) give the same object names with
//! byte-identical contents, and no two files overlap in offsets. On the local filesystem, and on
//! the S3-compatible server at `S3_ENDPOINT` (`deploy/s3.sh up`; tests/run.sh starts it): the S3
//! test fails when `S3_ENDPOINT` is not set, it never skips.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use connect_tests::kafka;
use connect_tests::unique;
use connect_tests::worker::{ClusterSpec, WorkerProc, eventually};
use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, ObjectStoreExt};
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

/// Where one run writes, and how the test reads it back.
enum Store {
    Local(PathBuf),
    /// A bucket on the S3-compatible server, read through `object_store`'s S3 client.
    S3 {
        store: Arc<dyn ObjectStore>,
        prefix: object_store::path::Path,
    },
}

impl Store {
    /// Relative name -> bytes of every `.jsonl` file the run wrote.
    async fn files(&self) -> BTreeMap<String, Vec<u8>> {
        match self {
            Store::Local(dir) => files(dir),
            Store::S3 { store, prefix } => {
                let list: Vec<_> = store
                    .list(Some(prefix))
                    .try_collect()
                    .await
                    .unwrap_or_else(|e| panic!("listing s3 objects under {prefix}: {e}"));
                let mut out = BTreeMap::new();
                for meta in list {
                    let name = meta.location.to_string();
                    if !name.ends_with(".jsonl") {
                        continue;
                    }
                    let read = async { store.get(&meta.location).await?.bytes().await };
                    let bytes = read
                        .await
                        .unwrap_or_else(|e| panic!("reading s3 object {name}: {e}"));
                    let rel = name
                        .strip_prefix(&format!("{prefix}/"))
                        .unwrap_or(&name)
                        .to_owned();
                    out.insert(rel, bytes.to_vec());
                }
                out
            }
        }
    }
}

/// Relative path -> bytes of every file under `dir`.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    connect_tests::jsonl_files(dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).unwrap();
            (rel, bytes)
        })
        .collect()
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

/// Two connectors write the same 1000 records (2 partitions) to `a` and `b`; a worker is killed
/// while the first one runs. Both must end with the same names and bytes, without overlaps.
async fn replay_writes_identical_files(
    spec: ClusterSpec,
    config_a: Value,
    store_a: Store,
    config_b: Value,
    store_b: Store,
) {
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
    let config = |mut c: Value| {
        c["connector.class"] = json!(SINK);
        c["tasks.max"] = json!("2");
        c["topics"] = json!(topic);
        c["flush.size"] = json!(FLUSH.to_string());
        c
    };
    create(&w1, "files-a", config(config_a)).await;
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
        (full(&store_a.files().await) >= expected_min).then_some(())
    })
    .await;
    create(&w2, "files-b", config(config_b)).await;
    eventually(Duration::from_secs(120), "files of run b", || async {
        (store_b.files().await.len() == store_a.files().await.len()).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let a = store_a.files().await;
    let b = store_b.files().await;
    assert!(full(&a) >= expected_min, "run a lost files: {:?}", a.keys());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    assert!(a == b, "a replay wrote different bytes");
    assert_no_overlap(&a);
    assert!(
        a.keys().all(|k| k.contains("/partition=")),
        "{:?}",
        a.keys()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_rewrites_identical_files_on_the_local_filesystem() {
    let spec = ClusterSpec::new("objstore");
    let dir_a = spec.dir.join("a");
    let dir_b = spec.dir.join("b");
    let config = |dir: &Path| json!({"store.url": format!("file://{}", dir.display())});
    let (config_a, config_b) = (config(&dir_a), config(&dir_b));
    replay_writes_identical_files(
        spec,
        config_a,
        Store::Local(dir_a),
        config_b,
        Store::Local(dir_b),
    )
    .await;
}

/// The same on the S3-compatible server at `S3_ENDPOINT` (moto, `deploy/s3.sh up`): one fresh
/// bucket, the two runs under the prefixes `a` and `b`, read back with `object_store`'s S3 client.
#[tokio::test(flavor = "multi_thread")]
async fn replay_rewrites_identical_files_on_s3() {
    let endpoint = std::env::var("S3_ENDPOINT").expect(
        "S3_ENDPOINT is not set: start the S3-compatible server with `deploy/s3.sh up` and export \
         the S3_ENDPOINT=... line it prints (tests/run.sh does both)",
    );
    let endpoint = endpoint.trim_end_matches('/').to_owned();
    let key = std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".to_owned());
    let secret = std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".to_owned());
    let bucket = unique("objstore");
    // object_store cannot create buckets; moto accepts an unsigned CreateBucket.
    let res = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .unwrap_or_else(|e| panic!("S3 server at {endpoint} does not answer: {e}"));
    assert!(
        res.status().is_success(),
        "creating bucket {bucket}: {}",
        res.status()
    );
    let store: Arc<dyn ObjectStore> = Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(&endpoint)
            .with_bucket_name(&bucket)
            .with_access_key_id(&key)
            .with_secret_access_key(&secret)
            .with_region("us-east-1")
            .with_allow_http(true)
            .build()
            .expect("S3 client"),
    );
    let config = |prefix: &str| {
        json!({
            "store.url": format!("s3://{bucket}/{prefix}"),
            "s3.endpoint": endpoint, "s3.access.key.id": key, "s3.secret.access.key": secret,
            "s3.allow.http": "true",
        })
    };
    let store_of = |prefix: &str| Store::S3 {
        store: store.clone(),
        prefix: object_store::path::Path::from(prefix),
    };
    replay_writes_identical_files(
        ClusterSpec::new("objstore-s3"),
        config("a"),
        store_of("a"),
        config("b"),
        store_of("b"),
    )
    .await;
}
