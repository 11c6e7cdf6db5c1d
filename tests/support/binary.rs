//! The built `provider-litellm` run as a process, as the README and
//! Crossplane run it, for the tests that need the binary itself (its
//! flags, its logs, its metrics endpoint).

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, PostParams};
use litellm_crossplane::api::instance::LiteLLMInstance;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::time::Instant;

/// The HTTP status of `path` at `address` (0 when nothing answers).
pub async fn status(address: SocketAddr, path: &str) -> u16 {
    reqwest::get(format!("http://{address}{path}"))
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// The built `provider-litellm`, its output collected line by line.
pub struct Binary {
    pub child: tokio::process::Child,
    lines: Arc<Mutex<Vec<String>>>,
    pub started: Instant,
}

/// Runs the binary with only `KUBECONFIG` (and `vars`) in its environment.
pub fn binary(args: &[&str], vars: &[(&str, &str)]) -> Binary {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_provider-litellm"));
    command
        .args(args)
        .env_clear()
        .env(
            "KUBECONFIG",
            std::env::var("KUBECONFIG").expect("KUBECONFIG"),
        )
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("provider-litellm starts");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    for reader in [
        Box::new(stdout) as Box<dyn tokio::io::AsyncRead + Send + Unpin>,
        Box::new(stderr),
    ] {
        let lines = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                lines.lock().unwrap().push(strip_ansi(&line));
            }
        });
    }
    Binary {
        child,
        lines,
        started: Instant::now(),
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Binary {
    pub fn output(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The health and metrics address it logs.
    pub async fn address(&self) -> SocketAddr {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let found = self.output().iter().find_map(|line| {
                let rest = line.split("serving health and metrics").nth(1)?;
                let address = rest.split("address=").nth(1)?;
                address
                    .split_whitespace()
                    .next()?
                    .trim_matches('"')
                    .parse()
                    .ok()
            });
            if let Some(address) = found {
                return address;
            }
            assert!(
                Instant::now() < until,
                "no address logged: {:#?}",
                self.output()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub async fn metrics(&self, address: SocketAddr) -> String {
        reqwest::get(format!("http://{address}/metrics"))
            .await
            .expect("metrics answer")
            .text()
            .await
            .unwrap()
    }

    /// Waits (up to 30 s) until `/readyz` says 200.
    pub async fn ready(&self, address: SocketAddr) {
        let until = Instant::now() + Duration::from_secs(30);
        while status(address, "/readyz").await != 200 {
            assert!(Instant::now() < until, "never ready: {:#?}", self.output());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM to this child (by its pid) and waits for it to exit.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("still running").to_string();
        let sent = tokio::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .await
            .expect("kill runs");
        assert!(sent.success());
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("exits after SIGTERM")
            .unwrap()
    }
}

/// An attached instance at the real proxy, in `namespace`.
pub async fn attached_instance(client: &kube::Client, namespace: &str, url: &str) {
    let instance: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "proxy"},
        "spec": {
            "workload": {"managed": false, "endpoint": url},
            "masterKey": {"secretRef": {"name": "master-key", "key": "LITELLM_MASTER_KEY"}},
        },
    }))
    .unwrap();
    Api::<LiteLLMInstance>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &instance)
        .await
        .expect("instance created");
}

/// The master key Secret [`attached_instance`] names, holding `master_key`.
pub async fn master_key_secret(client: &kube::Client, namespace: &str, master_key: &str) {
    let secret: k8s_openapi::api::core::v1::Secret = serde_json::from_value(json!({
        "metadata": {"name": "master-key"},
        "stringData": {"LITELLM_MASTER_KEY": master_key},
    }))
    .unwrap();
    Api::<k8s_openapi::api::core::v1::Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await
        .expect("master key Secret");
}
