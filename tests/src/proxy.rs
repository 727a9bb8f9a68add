//! A TCP proxy in front of a real service that a test can cut and restore, to make the service
//! unreachable for a while without touching the shared server itself.
//!
//! While cut, every open connection is dropped and every new one is answered with a line that
//! is not the protocol the client speaks, then closed. A refused connection would be closer to
//! a dead server, but HTTP clients retry refusals and resets on their own (the object store's
//! S3 client does so ten times over about a minute), so a cut of a few seconds would never
//! reach the code under test; a garbled answer is not retried and surfaces at once.

use std::net::SocketAddr;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct TcpProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    cut: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl TcpProxy {
    /// Listens on a free loopback port and forwards to `upstream` (`host:port`).
    pub async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().unwrap();
        let (cut, cut_rx) = watch::channel(false);
        let upstream = upstream.to_owned();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    continue;
                };
                let mut cut_rx = cut_rx.clone();
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if *cut_rx.borrow() {
                        let _ = client.write_all(b"proxy: the link is cut\r\n\r\n").await;
                        let _ = client.shutdown().await;
                        return;
                    }
                    let Ok(mut server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut_rx.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        TcpProxy { addr, cut, accept }
    }

    /// Drops every connection and garbles new ones until [`TcpProxy::restore`].
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    pub fn restore(&self) {
        self.cut.send_replace(false);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}
