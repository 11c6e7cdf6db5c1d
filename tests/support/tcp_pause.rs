//! A TCP forwarder in front of the real API server that can be paused: a
//! replica whose kube client goes through it loses its API access on
//! demand, as behind a partition or a frozen node, while its process keeps
//! running.
//!
//! It forwards raw bytes, so TLS passes through untouched; the API server's
//! certificate is for 127.0.0.1, so a client pointed at the forwarder's
//! 127.0.0.1 port still verifies it. Paused, it forwards nothing in either
//! direction and holds every connection open (new ones are accepted and
//! held too): requests hang instead of failing, the hard case for a
//! leader's renewal.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The forwarder; it stops (dropping every connection) when dropped.
pub struct TcpPause {
    address: SocketAddr,
    paused: watch::Sender<bool>,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Drop for TcpPause {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Waits until `paused` says false.
async fn unpaused(paused: &mut watch::Receiver<bool>) -> bool {
    paused.wait_for(|p| !*p).await.is_ok()
}

/// Copies one direction, never while paused: bytes read just before a
/// pause are held until it ends.
async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut paused: watch::Receiver<bool>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        if !unpaused(&mut paused).await {
            return;
        }
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(n) => n,
        };
        if !unpaused(&mut paused).await || to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}

impl TcpPause {
    /// Listens on a fresh 127.0.0.1 port and forwards to `upstream`
    /// (`host:port`).
    pub async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let address = listener.local_addr().unwrap();
        let (paused, _) = watch::channel(false);
        let accepted = Arc::new(AtomicUsize::new(0));
        let task = {
            let paused = paused.clone();
            let accepted = accepted.clone();
            tokio::spawn(async move {
                let mut connections = tokio::task::JoinSet::new();
                loop {
                    let Ok((client, _)) = listener.accept().await else {
                        return;
                    };
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let mut pause = paused.subscribe();
                    let upstream = upstream.clone();
                    connections.spawn(async move {
                        if !unpaused(&mut pause).await {
                            return;
                        }
                        let Ok(server) = TcpStream::connect(&upstream).await else {
                            return;
                        };
                        let (client_read, client_write) = client.into_split();
                        let (server_read, server_write) = server.into_split();
                        tokio::join!(
                            pump(client_read, server_write, pause.clone()),
                            pump(server_read, client_write, pause),
                        );
                    });
                    // Reap finished connections; the set aborts the rest
                    // when this task is aborted.
                    while connections.try_join_next().is_some() {}
                }
            })
        };
        Self {
            address,
            paused,
            accepted,
            task,
        }
    }

    /// Where clients connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Stops forwarding; connections stay open and stall.
    pub fn pause(&self) {
        self.paused.send_replace(true);
    }

    /// Forwards again, held bytes first.
    pub fn resume(&self) {
        self.paused.send_replace(false);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// The API server's `host:port`, from the kubeconfig.
pub async fn api_server() -> String {
    let config = kube::Config::infer().await.expect("a kubeconfig");
    let url = &config.cluster_url;
    let host = url.host().expect("the API server URL has a host");
    let port = url.port_u16().unwrap_or(443);
    format!("{host}:{port}")
}

/// A kube client of its own that reaches the API server through
/// `forwarder` (same credentials and CA as the kubeconfig).
pub async fn client_through(forwarder: &TcpPause) -> kube::Client {
    let mut config = kube::Config::infer().await.expect("a kubeconfig");
    config.cluster_url = format!("https://{}", forwarder.address())
        .parse()
        .expect("a URL");
    kube::Client::try_from(config).expect("a kube client")
}
