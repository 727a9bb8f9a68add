//! The worker's transactional producer (`cluster::producer`) when its broker connections drop:
//! a TCP proxy the test controls stands between the producer and the broker (rewriting the
//! broker addresses in Metadata and FindCoordinator answers, so that every connection goes
//! through it) and cuts every connection at random moments while numbered records are written
//! in transactions; cuts land in produce requests and in commits alike. A `read_committed`
//! reader then must see every record exactly once, in order. Once driving the producer
//! directly, once as an exactly-once source task inside a worker (its producer, alone, pointed
//! at the proxy with `producer.override.bootstrap.servers`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use connect_tests::kafka::{self, Isolation};
use connect_tests::unique;
use connect_worker::cluster::client::Security;
use connect_worker::cluster::producer::{OutRecord, ProducerSettings, TransactionalProducer};
use kafka_protocol::messages::{ApiKey, FindCoordinatorResponse, MetadataResponse, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A Kafka-aware TCP proxy in front of one broker.
struct Proxy {
    port: u16,
    /// Bumped to cut every open connection.
    cut: watch::Sender<u64>,
    /// API key -> how many requests of it were awaiting their response when a cut came.
    cut_in_flight: InFlightCuts,
    /// API key -> (every, seen): every `every`-th request of it is forwarded to the broker and
    /// its connection closed at once, so the broker acts on it but its answer is lost.
    lose_answers: LoseAnswers,
}

type InFlightCuts = Arc<Mutex<HashMap<i16, u64>>>;
type LoseAnswers = Arc<Mutex<HashMap<i16, (u64, u64)>>>;

impl Proxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, _) = watch::channel(0u64);
        let cuts = cut.subscribe();
        let cut_in_flight = InFlightCuts::default();
        let counts = cut_in_flight.clone();
        let lose_answers = LoseAnswers::default();
        let lose = lose_answers.clone();
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                client.set_nodelay(true).ok();
                server.set_nodelay(true).ok();
                tokio::spawn(relay(
                    client,
                    server,
                    port,
                    cuts.clone(),
                    counts.clone(),
                    lose.clone(),
                ));
            }
        });
        Proxy {
            port,
            cut,
            cut_in_flight,
            lose_answers,
        }
    }

    /// From now on, every `every`-th request of `api` reaches the broker but its connection is
    /// closed before the answer comes back.
    fn lose_answer_every(&self, api: ApiKey, every: u64) {
        self.lose_answers
            .lock()
            .unwrap()
            .insert(api as i16, (every, 0));
    }

    /// A proxy in front of the first bootstrap server of the test cluster.
    async fn to_first_broker() -> Self {
        let first = kafka::bootstrap_servers();
        Self::start(first.split(',').next().unwrap().to_owned()).await
    }

    /// Cuts every connection `cuts` times, 50-250 ms apart (pseudo-random from `seed`); the
    /// task answers how many cuts it made.
    fn cut_repeatedly(&self, mut seed: u64, cuts: u64) -> tokio::task::JoinHandle<u64> {
        let cut = self.cut.clone();
        tokio::spawn(async move {
            for _ in 0..cuts {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                tokio::time::sleep(Duration::from_millis(50 + seed % 200)).await;
                cut.send_modify(|n| *n += 1);
            }
            cuts
        })
    }

    fn cut_all(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

async fn read_frame(s: &mut (impl AsyncReadExt + Unpin)) -> Option<Vec<u8>> {
    let len = s.read_i32().await.ok()?;
    let mut buf = vec![0u8; usize::try_from(len).ok()?];
    s.read_exact(&mut buf).await.ok()?;
    Some(buf)
}

/// Forwards frames both ways until either side closes or a cut comes; responses to
/// Metadata and FindCoordinator name the proxy instead of the broker.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    port: u16,
    mut cut: watch::Receiver<u64>,
    cut_in_flight: InFlightCuts,
    lose_answers: LoseAnswers,
) {
    cut.borrow_and_update();
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let asked: Arc<Mutex<HashMap<i32, (i16, i16)>>> = Arc::default();
    let count_in_flight = |asked: &Mutex<HashMap<i32, (i16, i16)>>| {
        let mut counts = cut_in_flight.lock().unwrap();
        for (key, _) in asked.lock().unwrap().values() {
            *counts.entry(*key).or_default() += 1;
        }
    };
    let requests = {
        let asked = asked.clone();
        async move {
            while let Some(frame) = read_frame(&mut cr).await {
                let mut lose = false;
                if frame.len() >= 8 {
                    let key = i16::from_be_bytes([frame[0], frame[1]]);
                    let version = i16::from_be_bytes([frame[2], frame[3]]);
                    let corr = i32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
                    asked.lock().unwrap().insert(corr, (key, version));
                    if let Some((every, seen)) = lose_answers.lock().unwrap().get_mut(&key) {
                        *seen += 1;
                        lose = *seen % *every == 0;
                    }
                }
                let mut out = (frame.len() as i32).to_be_bytes().to_vec();
                out.extend_from_slice(&frame);
                if sw.write_all(&out).await.is_err() {
                    return;
                }
                if lose {
                    count_in_flight(&asked);
                    return;
                }
            }
        }
    };
    let answered = asked.clone();
    let responses = async move {
        while let Some(frame) = read_frame(&mut sr).await {
            let corr = i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
            let api = answered.lock().unwrap().remove(&corr);
            let frame = match api {
                Some((key, version)) => rewrite(key, version, frame, port),
                None => frame,
            };
            let mut out = (frame.len() as i32).to_be_bytes().to_vec();
            out.extend_from_slice(&frame);
            if cw.write_all(&out).await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        _ = requests => {}
        _ = responses => {}
        _ = cut.changed() => count_in_flight(&asked),
    }
}

fn rewrite(key: i16, version: i16, frame: Vec<u8>, port: u16) -> Vec<u8> {
    let host = StrBytes::from_static_str("127.0.0.1");
    let mut buf = Bytes::from(frame.clone());
    let mut out = BytesMut::new();
    if key == ApiKey::Metadata as i16 {
        let hv = MetadataResponse::header_version(version);
        let header = ResponseHeader::decode(&mut buf, hv).unwrap();
        let mut resp = MetadataResponse::decode(&mut buf, version).unwrap();
        for b in &mut resp.brokers {
            b.host = host.clone();
            b.port = i32::from(port);
        }
        header.encode(&mut out, hv).unwrap();
        resp.encode(&mut out, version).unwrap();
    } else if key == ApiKey::FindCoordinator as i16 {
        let hv = FindCoordinatorResponse::header_version(version);
        let header = ResponseHeader::decode(&mut buf, hv).unwrap();
        let mut resp = FindCoordinatorResponse::decode(&mut buf, version).unwrap();
        if version < 4 {
            resp.host = host.clone();
            resp.port = i32::from(port);
        }
        for c in &mut resp.coordinators {
            c.host = host.clone();
            c.port = i32::from(port);
        }
        header.encode(&mut out, hv).unwrap();
        resp.encode(&mut out, version).unwrap();
    } else {
        return frame;
    }
    out.to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn cut_connections_mid_transaction_lose_and_duplicate_nothing() {
    let proxy = Proxy::to_first_broker().await;
    let (topic, offsets) = (unique("faults-data"), unique("faults-offsets"));
    kafka::create_topics(&[&topic, &offsets], 2).await;
    let settings = ProducerSettings {
        bootstrap: vec![format!("127.0.0.1:{}", proxy.port)],
        client_id: "faults".into(),
        transactional_id: unique("faults-txn"),
        security: Security::new(&Default::default()).unwrap(),
        request_timeout: Duration::from_secs(5),
        delivery_timeout: Duration::from_secs(60),
        transaction_timeout: Duration::from_secs(60),
        batch_bytes: 4096,
        compression: kafka_protocol::records::Compression::None,
        retry_backoff: Duration::from_millis(50),
    };
    let mut p = TransactionalProducer::init(settings).await.unwrap();
    let v2 = p.transactions_v2();
    // Cuts every 50-250 ms for the whole run: with ~100 ms transactions, every phase is hit.
    let cutter = proxy.cut_repeatedly(0x9e37_79b9_7f4a_7c15, 60);
    let (transactions, per) = (120u64, 250u64);
    let mut seqno = 0u64;
    for t in 0..transactions {
        p.begin().unwrap();
        for _ in 0..per {
            p.send(OutRecord {
                topic: topic.clone(),
                partition: None,
                key: Some(format!("k{}", seqno % 7).into_bytes()),
                value: Some(seqno.to_string().into_bytes()),
                headers: Vec::new(),
                timestamp: None,
            })
            .await
            .unwrap();
            seqno += 1;
        }
        if t % 3 == 0 {
            p.flush()
                .await
                .unwrap_or_else(|e| panic!("flush of transaction {t}: {e}"));
        }
        p.send(OutRecord {
            topic: offsets.clone(),
            partition: None,
            key: Some(b"offset".to_vec()),
            value: Some(seqno.to_string().into_bytes()),
            headers: Vec::new(),
            timestamp: None,
        })
        .await
        .unwrap();
        p.commit()
            .await
            .unwrap_or_else(|e| panic!("commit of transaction {t}: {e}"));
    }
    // One transaction aborted at the end, through cuts too: none of it may be read.
    p.begin().unwrap();
    for i in 0..100 {
        p.send(OutRecord {
            topic: topic.clone(),
            partition: None,
            key: Some(b"aborted".to_vec()),
            value: Some(format!("aborted-{i}").into_bytes()),
            headers: Vec::new(),
            timestamp: None,
        })
        .await
        .unwrap();
    }
    p.flush().await.unwrap();
    proxy.cut_all();
    p.abort().await.unwrap();
    let cuts = cutter.await.unwrap();
    let retries = p.retries();
    println!(
        "transactions v2: {v2}; {cuts} cuts during {transactions} transactions; retries: {retries:?}"
    );
    // The cuts hit produce requests and commits (a retried EndTxn is a commit whose answer,
    // or request, the cut lost).
    assert!(
        retries.produce > 0,
        "no produce request was cut: {retries:?}"
    );
    assert!(retries.end_txn > 0, "no commit was cut: {retries:?}");

    let t = topic.clone();
    let got = tokio::task::spawn_blocking(move || {
        kafka::read_all(&[&t], Isolation::ReadCommitted, Duration::from_secs(60))
    })
    .await
    .unwrap();
    let mut seen: Vec<u64> = got
        .iter()
        .map(|r| r.value.as_deref().unwrap().parse::<u64>().unwrap())
        .collect();
    // Per key (one partition each), in the order they were sent.
    let mut by_key: HashMap<String, Vec<u64>> = HashMap::new();
    for r in &got {
        by_key
            .entry(r.key.clone().unwrap())
            .or_default()
            .push(r.value.as_deref().unwrap().parse().unwrap());
    }
    for (k, values) in &by_key {
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "records of key {k} out of order or repeated"
        );
    }
    seen.sort_unstable();
    let expected: Vec<u64> = (0..transactions * per).collect();
    assert_eq!(seen.len(), expected.len(), "read_committed count");
    assert_eq!(seen, expected, "every record exactly once");
}

/// An exactly-once source task (per-poll transactions) whose producer alone goes through the
/// proxy, which cuts every connection every 50-250 ms and loses the answer of every 6th commit
/// and every 9th produce request: the worker retries, or fails and restarts the task, and
/// `read_committed` sees every seqno exactly once, in order.
#[tokio::test(flavor = "multi_thread")]
async fn a_tasks_connections_cut_mid_commit_lose_and_duplicate_nothing() {
    task_connections_cut("poll").await;
}

/// The same with 200 ms interval boundaries: the task's records go to the producer through its
/// send pipe (sent on a tokio task of its own while the task polls), so the cuts land while
/// several polls' records are being sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_tasks_connections_cut_with_interval_boundaries_lose_and_duplicate_nothing() {
    task_connections_cut("interval").await;
}

async fn task_connections_cut(boundary: &str) {
    use connect_tests::worker::{ClusterSpec, create_connector};
    let proxy = Proxy::to_first_broker().await;
    let spec = ClusterSpec::new("faults-task")
        .set("exactly.once.source.support", "enabled")
        .set("connector.client.config.override.policy", "All");
    let w = spec.start_worker().await;
    let topic = unique("faults-task");
    kafka::create_topics(&[&topic], 2).await;
    let n = 12_000usize;
    create_connector(
        &w,
        "faults",
        serde_json::json!({
            "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
            "tasks.max": "1",
            "topic": topic,
            "throughput": "1500",
            "batch.size": "50",
            "max.records": n.to_string(),
            "transaction.boundary": boundary,
            "transaction.boundary.interval.ms": "200",
            "producer.override.bootstrap.servers": format!("127.0.0.1:{}", proxy.port),
            "producer.override.request.timeout.ms": "5000",
        }),
    )
    .await;
    // Random cuts, and answers lost on purpose: a cut rarely lands in a sub-millisecond
    // request, so some commits and produce requests reach the broker and lose their answer.
    proxy.lose_answer_every(ApiKey::EndTxn, 6);
    proxy.lose_answer_every(ApiKey::Produce, 9);
    let cutter = proxy.cut_repeatedly(0x2545_f491_4f6c_dd1d, 60);
    let t = topic.clone();
    let got = tokio::task::spawn_blocking(move || {
        kafka::read_until(
            &[&t],
            Isolation::ReadCommitted,
            Duration::from_secs(180),
            |seen| seen.len() >= n,
        )
    })
    .await
    .unwrap();
    cutter.abort();
    let log = w.log_text();
    assert!(
        log.contains("exactly-once task uses the worker's transactional producer"),
        "the task did not run on the worker's own producer"
    );
    let cuts = proxy.cut_in_flight.lock().unwrap().clone();
    println!(
        "requests in flight when cut, by API key: {cuts:?}; the task failed (and was restarted) {} times",
        log.matches("exactly-once source task failed").count()
    );
    let produce = cuts.get(&(ApiKey::Produce as i16)).copied().unwrap_or(0);
    let end_txn = cuts.get(&(ApiKey::EndTxn as i16)).copied().unwrap_or(0);
    assert!(produce > 0, "no produce request was cut: {cuts:?}");
    assert!(end_txn > 0, "no commit was cut: {cuts:?}");
    // A little more time for a duplicate to show up, had one been committed late.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let t = topic.clone();
    let all = tokio::task::spawn_blocking(move || {
        kafka::read_all(&[&t], Isolation::ReadCommitted, Duration::from_secs(60))
    })
    .await
    .unwrap();
    assert!(got.len() <= all.len());
    let seqnos: Vec<usize> = all
        .iter()
        .map(|r| r.value.as_deref().unwrap().parse().unwrap())
        .collect();
    let expected: Vec<usize> = (0..n).collect();
    assert_eq!(seqnos.len(), n, "read_committed count");
    assert_eq!(seqnos, expected, "every seqno exactly once, in order");
}
