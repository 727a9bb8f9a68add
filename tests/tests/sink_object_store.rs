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
use connect_tests::proxy::TcpProxy;
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

/// A fresh bucket on the S3-compatible server at `S3_ENDPOINT` (moto, `deploy/s3.sh up`), and
/// `object_store`'s S3 client on it (talking to the server directly).
struct S3Bucket {
    endpoint: String,
    key: String,
    secret: String,
    bucket: String,
    store: Arc<dyn ObjectStore>,
}

async fn s3_bucket() -> S3Bucket {
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
    S3Bucket {
        endpoint,
        key,
        secret,
        bucket,
        store,
    }
}

impl S3Bucket {
    /// The sink's config for `prefix` in this bucket, through `endpoint`.
    fn sink_config(&self, prefix: &str, endpoint: &str) -> Value {
        json!({
            "store.url": format!("s3://{}/{prefix}", self.bucket),
            "s3.endpoint": endpoint, "s3.access.key.id": self.key,
            "s3.secret.access.key": self.secret, "s3.allow.http": "true",
        })
    }

    fn store(&self, prefix: &str) -> Store {
        Store::S3 {
            store: self.store.clone(),
            prefix: object_store::path::Path::from(prefix),
        }
    }
}

/// The same on the S3-compatible server at `S3_ENDPOINT`: one fresh bucket, the two runs under
/// the prefixes `a` and `b`, read back with `object_store`'s S3 client.
#[tokio::test(flavor = "multi_thread")]
async fn replay_rewrites_identical_files_on_s3() {
    let s3 = s3_bucket().await;
    replay_writes_identical_files(
        ClusterSpec::new("objstore-s3"),
        s3.sink_config("a", &s3.endpoint),
        s3.store("a"),
        s3.sink_config("b", &s3.endpoint),
        s3.store("b"),
    )
    .await;
}

/// The S3 endpoint becomes unreachable twice for a few seconds while the sink runs (a proxy
/// in front of the server is cut): uploads fail and the runner redelivers the batch. No record
/// buffered before a failed upload may be lost: afterwards each partition's files tile its
/// offsets exactly from 0 to the end, each record once, in offset order.
#[tokio::test(flavor = "multi_thread")]
async fn uploads_failing_while_s3_is_unreachable_lose_no_record() {
    const PARTITIONS: i32 = 3;
    const PER_PARTITION: i64 = 6000;
    const FLUSH_SIZE: i64 = 100;
    let s3 = s3_bucket().await;
    let upstream = s3
        .endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let proxy = TcpProxy::start(&upstream).await;
    let spec = ClusterSpec::new("objstore-cut");
    let w = spec.start_worker().await;
    let topic = unique("cut");
    kafka::create_topics(&[&topic], PARTITIONS).await;
    let mut config = s3.sink_config("run", &format!("http://{}", proxy.addr));
    config["connector.class"] = json!(SINK);
    config["tasks.max"] = json!("1");
    config["topics"] = json!(topic);
    config["flush.size"] = json!(FLUSH_SIZE.to_string());
    create(&w, "cut", config).await;

    // Records arrive in chunks of 77 per partition every ~200 ms (~16 s) while the endpoint
    // is cut at ~4 s and ~11 s, for 3 s each. 77 and the flush size have no common multiple
    // below the end, so a file always spans several `put`s (the sink is caught up between
    // chunks): the upload that fails holds records of earlier batches, which only the buffer
    // kept them.
    let producer = {
        let topic = topic.clone();
        tokio::spawn(async move {
            let per_chunk = 77;
            let mut start = 0;
            while start < PER_PARTITION {
                let end = (start + per_chunk).min(PER_PARTITION);
                let records = (0..PARTITIONS).flat_map(|p| {
                    (start..end).map(move |n| (p, json!({"p": p, "n": n}).to_string()))
                });
                kafka::produce_to_partitions(&topic, records).await;
                tokio::time::sleep(Duration::from_millis(200)).await;
                start = end;
            }
        })
    };
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_secs(4)).await;
        proxy.cut();
        tokio::time::sleep(Duration::from_secs(3)).await;
        proxy.restore();
    }
    producer.await.unwrap();

    let store = s3.store("run");
    let total = |f: &BTreeMap<String, Vec<u8>>| {
        f.values()
            .map(|b| b.iter().filter(|x| **x == b'\n').count() as i64)
            .sum::<i64>()
    };
    eventually(
        Duration::from_secs(180),
        "every record in a file",
        || async {
            (total(&store.files().await) >= PER_PARTITION * i64::from(PARTITIONS)).then_some(())
        },
    )
    .await;
    let files = store.files().await;
    let failures = w.log_text().matches("retriable put error").count();
    assert!(
        failures >= 2,
        "the cuts never failed an upload ({failures} redeliveries); the test tested nothing"
    );
    for p in 0..PARTITIONS {
        let mut list: Vec<(i64, Vec<i64>)> = files
            .iter()
            .filter(|(name, _)| name.contains(&format!("/partition={p}/")))
            .map(|(name, bytes)| {
                let first: i64 = name
                    .trim_end_matches(".jsonl")
                    .rsplit('+')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let ns = std::str::from_utf8(bytes)
                    .unwrap()
                    .lines()
                    .map(|l| {
                        let v: Value = serde_json::from_str(l).unwrap();
                        assert_eq!(v["p"], json!(p), "{name}: {l}");
                        v["n"].as_i64().unwrap()
                    })
                    .collect();
                (first, ns)
            })
            .collect();
        list.sort();
        let firsts: Vec<i64> = list.iter().map(|(f, _)| *f).collect();
        let tiles: Vec<i64> = (0..PER_PARTITION / FLUSH_SIZE)
            .map(|i| i * FLUSH_SIZE)
            .collect();
        assert_eq!(
            firsts, tiles,
            "partition {p}: files start every {FLUSH_SIZE} offsets from 0"
        );
        for (first, ns) in &list {
            let expected: Vec<i64> = (*first..first + FLUSH_SIZE).collect();
            // One producer, in order: record n of a partition is at offset n.
            assert_eq!(
                ns, &expected,
                "partition {p}: file {first} holds its offsets once"
            );
        }
    }
    let status = w.get("/connectors/cut/status").await.unwrap();
    assert_eq!(status["tasks"][0]["state"], "RUNNING", "{status}");
}
