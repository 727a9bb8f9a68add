// What one client can hold on a REST listener (real worker, real Kafka): a client that sends
// its headers one byte per second is disconnected by `rest.header.read.timeout.ms` while other
// requests are served; a request whose body never completes answers Connect's error body after
// `rest.request.timeout.ms`; connections beyond `rest.max.connections` wait until one closes
// while the open ones are served.

use std::time::{Duration, Instant};

use connect_tests::worker::{ClusterSpec, WorkerProc};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads one HTTP/1.1 response with a `Content-Length` body: `(status, body)`.
async fn read_response(s: &mut TcpStream) -> std::io::Result<(u16, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().unwrap())
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).to_string();
    Ok((status, body))
}

async fn connect(w: &WorkerProc) -> TcpStream {
    TcpStream::connect(("127.0.0.1", w.port)).await.unwrap()
}

const GET_ROOT: &[u8] = b"GET / HTTP/1.1\r\nHost: worker\r\n\r\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_client_is_disconnected_while_others_are_served() {
    let spec = ClusterSpec::new("rest-slow")
        .set("rest.header.read.timeout.ms", "2000")
        .set("rest.request.timeout.ms", "3000");
    let w = spec.start_worker().await;

    // Headers one byte per second: 70 bytes would take over a minute.
    let head =
        b"GET /connectors HTTP/1.1\r\nHost: worker\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut slow = connect(&w).await;
    let started = Instant::now();
    let mut sent = 0;
    let mut served_meanwhile = 0;
    let mut closed = false;
    while sent < head.len() {
        if slow.write_all(&head[sent..=sent]).await.is_err() {
            closed = true;
            break;
        }
        sent += 1;
        // Another client is served while the slow one dribbles.
        let (status, body) = w.send("GET", "/", None).await;
        assert_eq!(status, 200, "{body}");
        served_meanwhile += 1;
        let mut byte = [0u8; 512];
        match tokio::time::timeout(Duration::from_secs(1), slow.read(&mut byte)).await {
            Err(_) => {} // still open, nothing to read
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            // hyper may answer 408 before closing: read to the end.
            Ok(Ok(_)) => {
                let mut rest = Vec::new();
                let end =
                    tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut rest))
                        .await;
                closed = end.is_ok();
                break;
            }
        }
    }
    assert!(closed, "the slow client was never disconnected");
    assert!(
        sent < head.len(),
        "the whole head ({sent} bytes) was accepted before the disconnection"
    );
    // Bound by the timeout: far below the 70 s the head would take.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "disconnected after {:?}",
        started.elapsed()
    );
    assert!(served_meanwhile >= 1);

    // A request whose body never completes: Connect's error body after the request timeout.
    let mut stuck = connect(&w).await;
    stuck
        .write_all(
            b"PUT /connector-plugins/VerifiableSource/config/validate HTTP/1.1\r\nHost: worker\r\n\
              Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"connector.class\":",
        )
        .await
        .unwrap();
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), read_response(&mut stuck))
        .await
        .expect("answered within the request timeout")
        .unwrap();
    assert_eq!(status, 500, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error_code"], 500);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("rest.request.timeout.ms"),
        "{body}"
    );
    // The worker still serves.
    assert_eq!(w.send("GET", "/connectors", None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_beyond_the_cap_wait_until_one_closes() {
    // The harness's own client keeps no idle connection, so the test owns every slot.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let spec = ClusterSpec::new("rest-cap")
        .set("rest.max.connections", "2")
        .set("rest.header.read.timeout.ms", "120000")
        .with_client(client);
    let w = spec.start_worker().await;
    // Give the server a moment to see the harness's last connection close.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut a = connect(&w).await;
    let mut b = connect(&w).await;
    for s in [&mut a, &mut b] {
        s.write_all(GET_ROOT).await.unwrap();
        let (status, _) = tokio::time::timeout(Duration::from_secs(30), read_response(s))
            .await
            .expect("served")
            .unwrap();
        assert_eq!(status, 200);
    }

    // A third connection: the kernel completes its handshake, the worker does not serve it.
    let mut c = connect(&w).await;
    c.write_all(GET_ROOT).await.unwrap();
    let waiting = tokio::time::timeout(Duration::from_secs(3), read_response(&mut c)).await;
    assert!(waiting.is_err(), "served beyond the cap: {waiting:?}");

    // The open connections are still served meanwhile.
    a.write_all(GET_ROOT).await.unwrap();
    let (status, _) = tokio::time::timeout(Duration::from_secs(30), read_response(&mut a))
        .await
        .expect("an open connection is served")
        .unwrap();
    assert_eq!(status, 200);

    // One closes: the waiting connection is served.
    drop(a);
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), read_response(&mut c))
        .await
        .expect("served once a slot is free")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("kafka_cluster_id"), "{body}");
}
