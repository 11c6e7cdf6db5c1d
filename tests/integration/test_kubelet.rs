//! The test kubelet (`tests/support/kubelet.rs`) is held to what a cluster
//! does, so that a provider bug cannot pass on a kinder stand-in: rollouts
//! follow the Deployment's strategy, and readiness probes their timing.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use crate::support;
use support::k8s;
use support::kubelet::Kubelet;

fn web(name: &str, replicas: i32, strategy: Value, readiness: Value) -> Deployment {
    let labels = json!({"app": name});
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "strategy": strategy,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{
                    "name": "web",
                    "image": "python:3.11-slim",
                    "command": ["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1"],
                    "env": [{"name": "GENERATION", "value": "1"}],
                    "ports": [{"containerPort": 8080}],
                    "readinessProbe": readiness,
                }]},
            },
        },
    }))
    .unwrap()
}

fn probe() -> Value {
    json!({"httpGet": {"path": "/", "port": 8080}, "periodSeconds": 1})
}

/// The pod-template hashes of the kubelet's pods (not terminating), and how
/// many of each are ready.
fn templates(kubelet: &Kubelet) -> Vec<(String, bool)> {
    kubelet
        .pods()
        .into_iter()
        .map(|(_, labels, ready)| (labels["pod-template-hash"].clone(), ready))
        .collect()
}

/// Samples the kubelet's pods every 50 ms until `done`, handing each sample
/// to `check`; fails after 120 s.
async fn watch_pods(
    kubelet: &Kubelet,
    mut check: impl FnMut(&[(String, bool)]),
    mut done: impl FnMut(&[(String, bool)]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let pods = templates(kubelet);
        check(&pods);
        if done(&pods) {
            return;
        }
        assert!(Instant::now() < deadline, "not done: {pods:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn setup(prefix: &str) -> Option<(kube::Client, String, Kubelet, Api<Deployment>)> {
    let client = k8s::client().await?;
    let namespace = k8s::namespace(&client, prefix).await;
    let kubelet = Kubelet::start(client.clone(), &namespace)?;
    let deployments = Api::namespaced(client.clone(), &namespace);
    Some((client, namespace, kubelet, deployments))
}

async fn roll(deployments: &Api<Deployment>, name: &str) {
    deployments
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "env": [{"name": "GENERATION", "value": "2"}]}
            ]}}}})),
        )
        .await
        .unwrap();
}

/// Waits until `replicas` pods of one template run, all ready: its hash.
async fn rolled_out(kubelet: &Kubelet, replicas: usize) -> String {
    let mut hash = None;
    watch_pods(
        kubelet,
        |_| {},
        |pods| {
            hash = all_ready_of_one_template(pods, replicas);
            hash.is_some()
        },
    )
    .await;
    hash.unwrap()
}

fn all_ready_of_one_template(pods: &[(String, bool)], replicas: usize) -> Option<String> {
    let hashes: BTreeSet<&String> = pods.iter().map(|(h, _)| h).collect();
    (hashes.len() == 1 && pods.len() == replicas && pods.iter().all(|(_, r)| *r))
        .then(|| pods[0].0.clone())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn recreate_stops_every_old_pod_before_a_new_one_starts() {
    let Some((_client, _ns, kubelet, deployments)) = setup("kubelet-recreate").await else {
        return;
    };
    deployments
        .create(
            &PostParams::default(),
            &web("web", 2, json!({"type": "Recreate"}), probe()),
        )
        .await
        .unwrap();
    let first = rolled_out(&kubelet, 2).await;
    roll(&deployments, "web").await;
    let mut seen_new = false;
    watch_pods(
        &kubelet,
        |pods| {
            let old = pods.iter().filter(|(h, _)| *h == first).count();
            let new = pods.len() - old;
            seen_new |= new > 0;
            assert!(
                old == 0 || new == 0,
                "Recreate ran old and new pods at once: {pods:?}"
            );
        },
        |pods| all_ready_of_one_template(pods, 2).is_some_and(|h| h != first),
    )
    .await;
    assert!(seen_new);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_rolling_update_keeps_to_max_surge_and_max_unavailable() {
    let Some((_client, _ns, kubelet, deployments)) = setup("kubelet-rolling").await else {
        return;
    };
    let strategy =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}});
    deployments
        .create(&PostParams::default(), &web("web", 3, strategy, probe()))
        .await
        .unwrap();
    let first = rolled_out(&kubelet, 3).await;
    roll(&deployments, "web").await;
    let mut most_at_once = 0;
    watch_pods(
        &kubelet,
        |pods| {
            most_at_once = most_at_once.max(pods.len());
            assert!(pods.len() <= 3, "maxSurge 0: {pods:?}");
            let ready = pods.iter().filter(|(_, r)| *r).count();
            assert!(ready >= 2, "maxUnavailable 1: {pods:?}");
        },
        |pods| all_ready_of_one_template(pods, 3).is_some_and(|h| h != first),
    )
    .await;
    assert_eq!(most_at_once, 3);
}

/// A readiness probe is first run after its initialDelaySeconds: the pod
/// cannot be ready sooner, however fast its server starts.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn readiness_waits_for_the_initial_delay() {
    let Some((_client, _ns, kubelet, deployments)) = setup("kubelet-delay").await else {
        return;
    };
    let readiness = json!({"httpGet": {"path": "/", "port": 8080}, "initialDelaySeconds": 4, "periodSeconds": 1});
    deployments
        .create(
            &PostParams::default(),
            &web("web", 1, json!({"type": "RollingUpdate"}), readiness),
        )
        .await
        .unwrap();
    let mut appeared = None;
    let mut ready_at = None;
    watch_pods(
        &kubelet,
        |pods| {
            if !pods.is_empty() && appeared.is_none() {
                appeared = Some(Instant::now());
            }
            if pods.iter().any(|(_, r)| *r) && ready_at.is_none() {
                ready_at = Some(Instant::now());
            }
        },
        |pods| pods.iter().any(|(_, r)| *r),
    )
    .await;
    let waited = ready_at.unwrap() - appeared.unwrap();
    // Sampled every 50 ms after the pod appeared, which was at most a
    // kubelet tick after its process started.
    assert!(
        waited >= Duration::from_millis(3500),
        "ready after {waited:?}"
    );
}
