//! A Kubernetes API server of one test's own: the harness's etcd and API
//! server (`tests/harness/k8s/up.sh`) started again in a state dir and on
//! ports of their own, and stopped on drop.
//!
//! Every other test shares one API server, each in namespaces of its own,
//! so their providers are scoped to a namespace. A provider in a cluster
//! serves every namespace with one controller per kind; where a test needs
//! exactly that (tenants of one provider in namespaces of their own), it
//! runs the provider cluster-wide here, where no other test's objects are.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::path::PathBuf;
use std::process::Command;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::k8s;

/// A running API server of the test's own; stopped, and its state dir
/// removed, on drop.
pub struct PrivateCluster {
    pub client: kube::Client,
    _stop: Stop,
}

/// Stops what `up.sh` started in `dir`, on drop.
struct Stop(PathBuf);

/// The harness scripts.
fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/harness/k8s")
        .join(name)
}

/// A port free on 127.0.0.1 right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

impl PrivateCluster {
    /// Starts one, or `None` (the test is skipped) where the shared API
    /// server does not run either: its binaries are the shared harness's
    /// build.
    pub async fn start(prefix: &str) -> Option<Self> {
        k8s::client().await?;
        let dir = std::env::temp_dir().join(format!(
            "litellm-crossplane-k8s-{prefix}-{}",
            k8s::unique_suffix()
        ));
        let (api, etcd, peer) = (free_port(), free_port(), free_port());
        let up = {
            let dir = dir.clone();
            tokio::task::spawn_blocking(move || {
                Command::new(script("up.sh"))
                    .env("LITELLM_CROSSPLANE_K8S_DIR", &dir)
                    .env("LITELLM_CROSSPLANE_K8S_PORT", api.to_string())
                    .env("LITELLM_CROSSPLANE_K8S_ETCD_PORT", etcd.to_string())
                    .env("LITELLM_CROSSPLANE_K8S_ETCD_PEER_PORT", peer.to_string())
                    .output()
                    .expect("tests/harness/k8s/up.sh runs")
            })
            .await
            .expect("up.sh")
        };
        // From here on, whatever it started is stopped again on drop.
        let stop = Stop(dir.clone());
        assert!(
            up.status.success(),
            "a private API server did not start: {}",
            String::from_utf8_lossy(&up.stderr)
        );
        let kubeconfig = Kubeconfig::read_from(dir.join("kubeconfig")).expect("its kubeconfig");
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .expect("its kubeconfig loads");
        let client = kube::Client::try_from(config).expect("a client of it");
        Some(PrivateCluster {
            client,
            _stop: stop,
        })
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        let stopped = Command::new(script("down.sh"))
            .env("LITELLM_CROSSPLANE_K8S_DIR", &self.0)
            .output();
        if let Ok(out) = stopped {
            if !out.status.success() {
                eprintln!(
                    "stopping the private API server in {}: {}",
                    self.0.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}
