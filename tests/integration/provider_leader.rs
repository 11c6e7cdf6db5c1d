//! Leader election, `/readyz` and `/healthz` against the real Kubernetes API
//! server harness: two replicas in this process, each with its own kube
//! client, electing over one Lease; a leader killed, a leader cut off from
//! the API server (a pausable TCP forwarder in front of it); the Lease's
//! namespace missing; and the built `provider-litellm` binary run as the
//! README and as Crossplane's package manager run it.
//!
//! Timings are read from one monotonic clock (`Instant`) shared by both
//! replicas, so "stopped before the other started" compares like with like.

use crate::support;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use litellm_crossplane::api::instance::LiteLLMInstance;
use litellm_crossplane::provider::instance;
use litellm_crossplane::provider::managed::reconciler::Context;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::runtime::health::{Health, Phase};
use litellm_crossplane::provider::runtime::http;
use litellm_crossplane::provider::runtime::leader::{self, Leadership, LeaseSettings};
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use prometheus_client::registry::Registry;
use serde_json::json;
use support::binary::{attached_instance, binary, master_key_secret, Binary};
use support::tcp_pause::{self, TcpPause};
use support::{harness, k8s};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Short settings so the tests take seconds: a 3 s lease, renewed every
/// 0.5 s, given up 2 s after the last renewal started.
const LEASE: Duration = Duration::from_secs(3);
const RENEW_DEADLINE: Duration = Duration::from_secs(2);
const RETRY: Duration = Duration::from_millis(500);
/// Latency and scheduling on a loaded 2-core machine.
const SLACK: Duration = Duration::from_millis(1500);

fn settings(namespace: &str, lease: &str, identity: &str) -> LeaseSettings {
    LeaseSettings {
        lease_duration: LEASE,
        renew_deadline: RENEW_DEADLINE,
        retry_period: RETRY,
        ..LeaseSettings::new(namespace, lease, identity)
    }
}

/// When each replica's work ran: first and last tick, and when it was
/// stopped (its future dropped or ended).
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    started: Option<Instant>,
    last_tick: Option<Instant>,
    stopped: Option<Instant>,
}

#[derive(Clone, Default)]
struct Timeline(Arc<Mutex<std::collections::BTreeMap<&'static str, Run>>>);

impl Timeline {
    fn get(&self, replica: &'static str) -> Run {
        self.0
            .lock()
            .unwrap()
            .get(replica)
            .copied()
            .unwrap_or_default()
    }

    fn update(&self, replica: &'static str, change: impl FnOnce(&mut Run)) {
        change(self.0.lock().unwrap().entry(replica).or_default());
    }

    /// Stand-in for the controllers: ticks every 20 ms while it runs and
    /// records when it is stopped.
    fn work(&self, replica: &'static str) -> impl Future<Output = ()> + Send + 'static {
        struct Stopped(Timeline, &'static str);
        impl Drop for Stopped {
            fn drop(&mut self) {
                let now = Instant::now();
                self.0.update(self.1, |run| run.stopped = Some(now));
            }
        }
        let timeline = self.clone();
        async move {
            let _stopped = Stopped(timeline.clone(), replica);
            let now = Instant::now();
            timeline.update(replica, |run| run.started = Some(now));
            loop {
                let now = Instant::now();
                timeline.update(replica, |run| run.last_tick = Some(now));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    /// Waits (up to `within`) until `done` holds for `replica`'s run.
    async fn wait(
        &self,
        replica: &'static str,
        within: Duration,
        done: impl Fn(&Run) -> bool,
    ) -> Run {
        let until = Instant::now() + within;
        loop {
            let run = self.get(replica);
            if done(&run) {
                return run;
            }
            assert!(
                Instant::now() < until,
                "{replica}: not reached within {within:?}: {run:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A replica: `run_as_leader` with its own client and the instrumented work.
fn replica(
    client: kube::Client,
    settings: LeaseSettings,
    leadership: &Leadership,
    timeline: &Timeline,
    name: &'static str,
) -> JoinHandle<Result<(), leader::Error>> {
    let leadership = leadership.clone();
    let work = timeline.work(name);
    tokio::spawn(async move { leader::run_as_leader(client, settings, &leadership, work).await })
}

/// Waits (up to 10 s) until `leadership` has found another replica leading.
async fn standing_by(leadership: &Leadership) {
    let until = Instant::now() + Duration::from_secs(10);
    while !leadership.is_standing_by() {
        assert!(Instant::now() < until, "the replica never stood by");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn lease(client: &kube::Client, namespace: &str, name: &str) -> Lease {
    Api::<Lease>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .expect("the Lease exists")
}

fn holder(lease: &Lease) -> Option<String> {
    lease.spec.as_ref().and_then(|s| s.holder_identity.clone())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_leader_killed_the_other_takes_over_within_the_lease_duration() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let namespace = k8s::namespace(&client, "leader-kill").await;
    let timeline = Timeline::default();
    let (a, b) = (Leadership::default(), Leadership::default());
    let first = replica(
        k8s::client().await.unwrap(),
        settings(&namespace, "lease", "replica-a"),
        &a,
        &timeline,
        "a",
    );
    let a_run = timeline
        .wait("a", Duration::from_secs(10), |r| r.started.is_some())
        .await;
    assert!(a.is_leader());
    let second = replica(
        k8s::client().await.unwrap(),
        settings(&namespace, "lease", "replica-b"),
        &b,
        &timeline,
        "b",
    );
    standing_by(&b).await;

    // While A renews, B waits, however long: here two lease durations.
    let renewed_before = lease(&client, &namespace, "lease").await;
    tokio::time::sleep_until(a_run.started.unwrap() + 2 * LEASE).await;
    assert!(
        timeline.get("b").started.is_none(),
        "B took a Lease A kept renewing"
    );
    assert!(!b.is_leader() && a.is_leader());
    let renewed = lease(&client, &namespace, "lease").await;
    assert_eq!(holder(&renewed).as_deref(), Some("replica-a"));
    assert_ne!(
        renewed.spec.as_ref().unwrap().renew_time,
        renewed_before.spec.as_ref().unwrap().renew_time,
        "A renews"
    );

    // Killed: no release, no goodbye. A's work stops when its task is
    // dropped, which is the moment of the kill.
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    let a_run = timeline.get("a");
    let killed = a_run.stopped.expect("A's work dropped with it");
    let b_run = timeline
        .wait("b", LEASE + RETRY + SLACK + SLACK, |r| r.started.is_some())
        .await;
    let takeover = b_run.started.unwrap() - killed;
    eprintln!("B took over {takeover:?} after A was killed");
    // B saw A's last renewal at most one retry period after the kill, and
    // takes over a lease duration after that.
    assert!(
        takeover <= LEASE + RETRY + SLACK,
        "B took over {takeover:?} after the kill"
    );
    // ... and not before: it waited out the lease A had renewed.
    assert!(
        takeover >= LEASE - 2 * RETRY,
        "B took over only {takeover:?} after the kill: it did not wait for the lease to expire"
    );
    assert!(a_run.last_tick.unwrap() <= killed && killed < b_run.started.unwrap());
    assert!(b.is_leader());
    let taken = lease(&client, &namespace, "lease").await;
    assert_eq!(holder(&taken).as_deref(), Some("replica-b"));
    let spec = taken.spec.unwrap();
    assert_eq!(spec.lease_duration_seconds, Some(3));
    assert_eq!(spec.lease_transitions, Some(1), "one change of holder");
    second.abort();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_leader_cut_off_from_the_api_server_stops_before_the_other_starts() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let namespace = k8s::namespace(&client, "leader-pause").await;
    let forwarder = TcpPause::start(tcp_pause::api_server().await).await;
    let timeline = Timeline::default();
    let (a, b) = (Leadership::default(), Leadership::default());
    let first = replica(
        tcp_pause::client_through(&forwarder).await,
        settings(&namespace, "lease", "replica-a"),
        &a,
        &timeline,
        "a",
    );
    timeline
        .wait("a", Duration::from_secs(10), |r| r.started.is_some())
        .await;
    let second = replica(
        k8s::client().await.unwrap(),
        settings(&namespace, "lease", "replica-b"),
        &b,
        &timeline,
        "b",
    );
    standing_by(&b).await;
    // A renews through the forwarder for a while.
    tokio::time::sleep(LEASE).await;
    assert!(a.is_leader() && timeline.get("b").started.is_none());

    // A's requests now hang: neither answered nor refused.
    forwarder.pause();
    let paused = Instant::now();
    let outcome = tokio::time::timeout(RENEW_DEADLINE + SLACK, first)
        .await
        .expect("A gave up within its renew deadline")
        .unwrap();
    let lost = Instant::now();
    let error = outcome.expect_err("A lost the Lease").to_string();
    assert!(
        error.contains("lost the Lease") && error.contains("renew deadline"),
        "{error}"
    );
    assert!(!a.is_leader());
    let b_run = timeline
        .wait("b", LEASE + RETRY + SLACK + SLACK, |r| r.started.is_some())
        .await;
    let a_run = timeline.get("a");
    let (a_stopped, a_last) = (a_run.stopped.unwrap(), a_run.last_tick.unwrap());
    let b_started = b_run.started.unwrap();
    eprintln!(
        "paused at 0; A stopped at {:?} (returned at {:?}); B started at {:?}",
        a_stopped - paused,
        lost - paused,
        b_started - paused
    );
    // The point: A stopped working before B started, with room to spare.
    assert!(a_last <= a_stopped && a_stopped < b_started);
    assert!(
        a_stopped - paused <= RENEW_DEADLINE + Duration::from_millis(200),
        "A worked on {:?} after losing the API server",
        a_stopped - paused
    );
    assert!(
        b_started - a_stopped >= LEASE - RENEW_DEADLINE - RETRY,
        "only {:?} between A stopping and B starting",
        b_started - a_stopped
    );
    assert!(b_started - paused <= LEASE + RETRY + SLACK);
    // A's API access back: it is not leading, B's Lease stands.
    forwarder.resume();
    assert!(b.is_leader() && !a.is_leader());
    let taken = lease(&client, &namespace, "lease").await;
    assert_eq!(holder(&taken).as_deref(), Some("replica-b"));
    second.abort();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn work_that_ends_releases_the_lease_for_the_other_at_once() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let namespace = k8s::namespace(&client, "leader-release").await;
    // A long lease: taking over by expiry would take 10 s.
    let long = |identity| LeaseSettings {
        lease_duration: Duration::from_secs(10),
        ..settings(&namespace, "lease", identity)
    };
    let timeline = Timeline::default();
    let (a, b) = (Leadership::default(), Leadership::default());
    let (end, ended) = tokio::sync::oneshot::channel::<()>();
    let first = {
        let a = a.clone();
        let work = timeline.work("a");
        let settings = long("replica-a");
        let client = k8s::client().await.unwrap();
        tokio::spawn(async move {
            let work = async {
                tokio::select! {
                    () = work => {}
                    _ = ended => {}
                }
            };
            leader::run_as_leader(client, settings, &a, work).await
        })
    };
    timeline
        .wait("a", Duration::from_secs(10), |r| r.started.is_some())
        .await;
    let second = replica(
        k8s::client().await.unwrap(),
        long("replica-b"),
        &b,
        &timeline,
        "b",
    );
    standing_by(&b).await;
    end.send(()).unwrap();
    let ended = Instant::now();
    first
        .await
        .unwrap()
        .expect("A ends without error when its work ends");
    let b_run = timeline
        .wait("b", RETRY + SLACK, |r| r.started.is_some())
        .await;
    eprintln!(
        "B took over {:?} after A's work ended",
        b_run.started.unwrap() - ended
    );
    assert!(timeline.get("a").stopped.unwrap() < b_run.started.unwrap());
    assert!(!a.is_leader() && b.is_leader());
    second.abort();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_missing_lease_namespace_fails_at_once() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let absent = format!("absent-{}", k8s::unique_suffix());
    let timeline = Timeline::default();
    let leadership = Leadership::default();
    let started = Instant::now();
    // Default (client-go) timings: a retry loop would show as seconds.
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        leader::run_as_leader(
            client,
            LeaseSettings::new(&absent, "provider-litellm", "replica-a"),
            &leadership,
            timeline.work("a"),
        ),
    )
    .await
    .expect("no retry loop");
    let elapsed = started.elapsed();
    let error = result.expect_err("no namespace, no leader election");
    assert!(
        matches!(error, leader::Error::NamespaceMissing { .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains(&format!("{absent:?}")) && text.contains("does not exist"),
        "{text}"
    );
    assert!(
        elapsed < Duration::from_secs(2),
        "took {elapsed:?}: the first attempt must fail"
    );
    assert!(timeline.get("a").started.is_none());
    assert!(!leadership.is_leader() && !leadership.is_standing_by());
}

/// Serves `router` for `health` on a fresh local port.
async fn serve(health: &Health) -> (SocketAddr, JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let registry = Arc::new(Registry::default());
    (
        address,
        tokio::spawn(http::serve(listener, registry, health.clone())),
    )
}

async fn status(address: SocketAddr, path: &str) -> u16 {
    reqwest::get(format!("http://{address}{path}"))
        .await
        .expect("health endpoint answers")
        .status()
        .as_u16()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn readyz_waits_for_the_caches_and_healthz_fails_once_the_controllers_stop() {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "leader-ready").await;
    // The controllers reach the API server through a paused forwarder, so
    // their caches cannot sync until it resumes.
    let forwarder = TcpPause::start(tcp_pause::api_server().await).await;
    forwarder.pause();
    let kube = tcp_pause::client_through(&forwarder).await;
    let ctx = Arc::new(Context::new(kube.clone(), "test", Metrics::default()));
    let (entities, mut caches) = controllers::build(ctx, Some(namespace.clone()));
    let (instances, instance_caches) = instance::build(
        kube,
        instance::InstanceOptions {
            namespace: Some(namespace.clone()),
            ..instance::InstanceOptions::default()
        },
        Metrics::default(),
    );
    caches.extend(instance_caches);
    assert_eq!(
        caches.len(),
        litellm_crossplane::api::MANAGED_KINDS.len() + 2,
        "a controller for each kind of the registry, the instances they read, and the instance \
         controller"
    );
    let health = Health::new();
    let (address, server) = serve(&health).await;
    assert_eq!(status(address, "/readyz").await, 503, "not started");
    assert_eq!(status(address, "/healthz").await, 200);

    let work = tokio::spawn(health.run(
        async {
            tokio::join!(entities, instances);
        },
        caches,
    ));
    // The controllers have asked for their lists; none can be answered.
    let until = Instant::now() + Duration::from_secs(10);
    while forwarder.accepted() == 0 {
        assert!(Instant::now() < until, "the controllers never connected");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(health.phase(), Phase::Syncing);
    assert_eq!(status(address, "/readyz").await, 503, "caches not synced");
    assert_eq!(status(address, "/healthz").await, 200);

    forwarder.resume();
    let until = Instant::now() + Duration::from_secs(30);
    while status(address, "/readyz").await != 200 {
        assert!(
            Instant::now() < until,
            "caches never synced: {:?}",
            health.phase()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(health.phase(), Phase::Synced);
    assert_eq!(status(address, "/healthz").await, 200);

    // The controllers' future dropped, as when leadership is lost.
    work.abort();
    let _ = work.await;
    assert_eq!(status(address, "/healthz").await, 503);
    assert_eq!(status(address, "/readyz").await, 503);
    server.abort();
}

/// Waits (up to 60 s) until the instance's status reports on its spec.
async fn status_written(client: &kube::Client, namespace: &str, binary: &Binary) -> bool {
    let api = Api::<LiteLLMInstance>::namespaced(client.clone(), namespace);
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let instance = api.get("proxy").await.expect("instance readable");
        if let Some(status) = instance.status.as_ref() {
            if status.observed_generation.is_some()
                && status.observed_generation == instance.metadata.generation
            {
                return status.ready;
            }
        }
        assert!(
            Instant::now() < until,
            "no status written: {:#?}",
            binary.output()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// As the README's walkthrough runs it: a kubeconfig and no leader-election
/// flag, no cluster id (kept in the ConfigMap of the kubeconfig context's
/// namespace). `--namespace` keeps it off the other tests' namespaces on the
/// shared API server.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_binary_with_only_a_kubeconfig_reconciles() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let Some((url, _)) = harness::litellm() else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "leader-kubeconfig").await;
    let mut provider = binary(
        &[
            "--metrics-address",
            "127.0.0.1:0",
            "--namespace",
            &namespace,
        ],
        &[],
    );
    let address = provider.address().await;
    attached_instance(&client, &namespace, &url).await;
    assert!(
        status_written(&client, &namespace, &provider).await,
        "the instance at the real proxy is ready"
    );
    provider.ready(address).await;
    let metrics = provider.metrics(address).await;
    assert!(metrics.contains("provider_litellm_leader 1"), "{metrics}");
    let output = provider.output();
    assert!(
        !output
            .iter()
            .any(|l| l.contains("WARN") || l.contains("ERROR")),
        "{output:#?}"
    );
    assert!(!output.iter().any(|l| l.contains("leader election on")));
    let exit = provider.terminate().await;
    assert!(exit.success(), "{exit:?}: {:#?}", provider.output());
}

/// As Crossplane's package manager runs it: `POD_NAMESPACE` set, no
/// flag. It elects, leads, reconciles, and on SIGTERM releases the Lease.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_binary_as_crossplane_runs_it_elects() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let Some((url, _)) = harness::litellm() else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "leader-crossplane").await;
    let mut provider = binary(
        &[
            "--metrics-address",
            "127.0.0.1:0",
            "--cluster-id",
            "test",
            "--namespace",
            &namespace,
        ],
        &[("POD_NAMESPACE", namespace.as_str())],
    );
    let address = provider.address().await;
    let leases = Api::<Lease>::namespaced(client.clone(), &namespace);
    let until = Instant::now() + Duration::from_secs(30);
    let held = loop {
        if let Some(lease) = leases.get_opt("provider-litellm").await.unwrap() {
            if let Some(holder) = holder(&lease) {
                break holder;
            }
        }
        assert!(Instant::now() < until, "no Lease: {:#?}", provider.output());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        held.starts_with(&format!("{}_", hostname.trim())),
        "identity {held:?}: the pod's name and a per-process suffix"
    );
    attached_instance(&client, &namespace, &url).await;
    assert!(status_written(&client, &namespace, &provider).await);
    provider.ready(address).await;
    let metrics = provider.metrics(address).await;
    assert!(metrics.contains("provider_litellm_leader 1"), "{metrics}");

    let exit = provider.terminate().await;
    assert!(exit.success(), "{exit:?}: {:#?}", provider.output());
    let released = leases.get("provider-litellm").await.unwrap();
    assert_eq!(
        holder(&released),
        None,
        "released on shutdown: {:#?}",
        provider.output()
    );
}

/// `--leader-election` with a Lease namespace that does not exist: one
/// error line naming it, exit 1, at once (no WARN every few seconds).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_binary_exits_at_once_when_the_lease_namespace_is_missing() {
    if k8s::client().await.is_none() {
        return;
    }
    let absent = format!("absent-{}", k8s::unique_suffix());
    let mut provider = binary(
        &[
            "--leader-election",
            "--metrics-address",
            "127.0.0.1:0",
            "--cluster-id",
            "test",
        ],
        &[("POD_NAMESPACE", absent.as_str())],
    );
    let exit = tokio::time::timeout(Duration::from_secs(20), provider.child.wait())
        .await
        .expect("exits at once")
        .unwrap();
    let elapsed = provider.started.elapsed();
    // Let the readers drain what the process wrote before it exited.
    let until = Instant::now() + Duration::from_secs(5);
    while !provider.output().iter().any(|l| l.contains("ERROR")) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let output = provider.output();
    assert_eq!(exit.code(), Some(1), "{output:#?}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let errors: Vec<_> = output.iter().filter(|l| l.contains("ERROR")).collect();
    assert_eq!(errors.len(), 1, "{output:#?}");
    assert!(
        errors[0].contains(&format!("{absent:?}")) && errors[0].contains("does not exist"),
        "{}",
        errors[0]
    );
    assert!(!output.iter().any(|l| l.contains("WARN")), "{output:#?}");
}

/// With the flags a Crossplane user copies from other providers' runtime
/// configurations: `--debug`, `--poll`, `--poll-jitter-percentage`,
/// `--sync`, `--max-reconcile-rate`, `--leader-election=false`,
/// `--enable-management-policies` and Go's `:PORT` address form. It starts,
/// reconciles, logs its debug lines, and stops cleanly; the one value it
/// cannot honour (`--enable-management-policies=false`) ends it at once
/// with a line that says why.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_binary_takes_the_flags_of_crossplane_providers() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let Some((url, _)) = harness::litellm() else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "leader-flags").await;
    let mut provider = binary(
        &[
            "-d",
            "--poll",
            "30s",
            "--poll-jitter-percentage",
            "5",
            "-s",
            "10m",
            "--max-reconcile-rate",
            "3",
            "--leader-election=false",
            "--enable-management-policies",
            "--metrics-address",
            ":0",
            "--namespace",
            &namespace,
        ],
        &[("RUST_LOG", "")],
    );
    let address = provider.address().await;
    attached_instance(&client, &namespace, &url).await;
    assert!(status_written(&client, &namespace, &provider).await);
    provider.ready(address).await;
    let output = provider.output();
    assert!(
        output.iter().any(|l| l.contains("DEBUG")),
        "--debug logs the provider's debug lines: {output:#?}"
    );
    let exit = provider.terminate().await;
    assert!(exit.success(), "{exit:?}: {:#?}", provider.output());

    let mut refused = binary(&["--enable-management-policies=false"], &[]);
    let exit = tokio::time::timeout(Duration::from_secs(30), refused.child.wait())
        .await
        .expect("exits at once")
        .unwrap();
    assert_eq!(exit.code(), Some(1));
    // Its output is read by tasks of their own, which may lag its exit.
    let until = Instant::now() + Duration::from_secs(10);
    let said = |output: &[String]| {
        output
            .iter()
            .any(|l| l.contains("management policies cannot be turned off"))
    };
    while !said(&refused.output()) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let output = refused.output();
    assert!(said(&output), "{output:#?}");
}

/// The built binary polls what it made: a Ready team is looked at again
/// every poll interval (its reconciliations keep counting), as in the
/// in-process tests.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_binary_polls_a_ready_team() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let Some((url, master_key)) = harness::litellm() else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "leader-polls").await;
    master_key_secret(&client, &namespace, &master_key).await;
    let mut provider = binary(
        &[
            "--poll-interval",
            "1s",
            "--min-poll-interval",
            "1s",
            "--poll-jitter-percentage",
            "0",
            "--metrics-address",
            "127.0.0.1:0",
            "--namespace",
            &namespace,
        ],
        &[],
    );
    let address = provider.address().await;
    attached_instance(&client, &namespace, &url).await;
    assert!(status_written(&client, &namespace, &provider).await);
    let team: litellm_crossplane::api::LiteLLMTeam = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMTeam",
        "metadata": {"name": "web"},
        "spec": {
            "instanceRef": {"name": "proxy"},
            "forProvider": {"teamAlias": format!("polls-{}", k8s::unique_suffix())},
        },
    }))
    .unwrap();
    let teams: Api<litellm_crossplane::api::LiteLLMTeam> =
        Api::namespaced(client.clone(), &namespace);
    teams.create(&PostParams::default(), &team).await.unwrap();
    let reconciles = || async {
        let text = provider.metrics(address).await;
        text.lines()
            .find_map(|l| l.strip_prefix("provider_litellm_reconciles_total{kind=\"team\"} "))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let until = Instant::now() + Duration::from_secs(30);
    let mut seen = 0.0;
    while Instant::now() < until {
        seen = reconciles().await;
        if seen >= 6.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        seen >= 6.0,
        "only {seen} team reconciliations: {:#?}",
        provider.output()
    );
    let ready = teams.get("web").await.unwrap();
    assert!(support::provider::is(&ready, "Ready", "True"));
    let exit = provider.terminate().await;
    assert!(exit.success(), "{exit:?}");
}
