//! One provider, more than one proxy (issue 40, goal 4; `docs/performance.md`,
//! "More than one proxy, more than one process"): the instances a provider
//! serves share its per-kind reconciliation limit (10 at once, as
//! crossplane-runtime's `MaxConcurrentReconciles`), and nothing else a
//! proxy can exhaust. A proxy that stops answering must hold its own
//! requests, not the other instances' reconciliations.
//!
//! The silent proxy is `support::fault_proxy` in front of the real one,
//! holding every request without an answer while silenced; the other
//! instance is the real proxy. One controller per kind serves both, as in a
//! cluster: both instances live in the test's namespace.
//!
//! A tenant with many such proxies could still hold every place of a kind;
//! the namespaces' shares of the places (`provider::watch::places`) keep
//! the other tenants' reconciliations going. That test runs the provider
//! cluster-wide, as a cluster runs it, on an API server of its own
//! (`support::cluster`).

use crate::support;

use std::time::{Duration, Instant};

use std::sync::Arc;

use kube::api::{Api, PostParams};
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam};
use litellm_crossplane::provider::instance::{self, InstanceOptions};
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use serde_json::json;
use support::cluster::PrivateCluster;
use support::fault_proxy::FaultProxy;
use support::k8s;
use support::provider::{
    condition, create_instance, create_named_instance, delete_and_wait, is, manifest, ready,
    wait_for, wait_gone, world_with, Setup,
};

/// The provider's LiteLLM request timeout here: how long a request to the
/// silent proxy holds its reconciliation.
const TIMEOUT: Duration = Duration::from_secs(10);

/// More teams on the silent proxy than a kind reconciles at once.
const SILENT_TEAMS: usize = 12;

/// A team on instance `instance` of the world's namespace.
fn team_on(instance: &str, name: &str, alias: &str) -> LiteLLMTeam {
    let mut team: LiteLLMTeam = manifest(
        "LiteLLMTeam",
        name,
        json!({}),
        json!({"forProvider": {"teamAlias": alias}}),
    );
    team.spec.managed.instance_ref.name = instance.to_owned();
    team
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_proxy_that_stops_answering_holds_up_no_other_instance() {
    let Some((url, _)) = support::harness::litellm() else {
        return;
    };
    let silent = FaultProxy::start(&url).await;
    let setup = Setup {
        litellm_timeout: Some(TIMEOUT),
        ..Setup::default()
    };
    let Some(world) = world_with("pp-silent", setup).await else {
        return;
    };
    // A second instance in the same namespace, with the same master key,
    // behind the fault proxy.
    let workload = json!({"managed": false, "endpoint": silent.url()});
    create_named_instance(
        &world.kube,
        &world.namespace,
        "silent",
        workload,
        silent.url(),
        true,
    )
    .await;

    let suffix = k8s::unique_suffix();
    let teams = world.api::<LiteLLMTeam>();
    silent.silence(true);
    for i in 0..SILENT_TEAMS {
        let name = format!("quiet-{i}");
        teams
            .create(
                &PostParams::default(),
                &team_on("silent", &name, &format!("{name}-{suffix}")),
            )
            .await
            .unwrap();
    }
    // The first round of requests runs into the timeout: each of those
    // teams says so, naming no secret. (Before, a team may say its
    // instance is not ready yet: the provider's cache saw the instance
    // before its status.)
    let unanswered = |team: &LiteLLMTeam| {
        is(team, "Synced", "False")
            && condition(team, "Synced")
                .and_then(|c| c.message)
                .is_some_and(|m| m.contains("timed out") || m.contains("did not answer"))
    };
    for i in 0..SILENT_TEAMS {
        let name = format!("quiet-{i}");
        let failed = wait_for(&teams, &name, "the unanswered create reported", unanswered).await;
        let message = condition(&failed, "Synced").unwrap().message.unwrap();
        assert!(
            !message.contains(&world.master_key) && !message.contains("sk-"),
            "no secret in {message}"
        );
    }

    // From now on the silent proxy is known not to answer: it holds at
    // most one request at a time, and the other instance's teams converge
    // as if it were not there, well within one timeout.
    silent.mark();
    let started = Instant::now();
    let answered: Vec<String> = (0..3).map(|i| format!("loud-{i}")).collect();
    for name in &answered {
        world
            .create(&team_on(
                support::provider::INSTANCE,
                name,
                &format!("{name}-{suffix}"),
            ))
            .await;
    }
    for name in &answered {
        ready(&teams, name).await;
    }
    let took = started.elapsed();
    assert!(
        took < TIMEOUT / 2,
        "the answering proxy's teams took {took:?} while the other proxy was silent"
    );
    // The silent teams come back at least every second (their poll
    // interval caps the backoff): wait until two more requests reached the
    // silent proxy, which takes a timeout if they go one at a time, and
    // every silent team was tried again more than once meanwhile.
    let arrived = silent.arrived();
    let reconciled = world.reconciles("team");
    support::provider::eventually("two more requests at the silent proxy", || async {
        (silent.arrived() >= arrived + 2
            && world.reconciles("team") >= reconciled + 3 * SILENT_TEAMS as u64)
            .then_some(())
    })
    .await;
    let peak = silent.peak_held();
    assert!(
        peak <= 1,
        "{peak} requests held by the silent proxy at once after it was known silent"
    );

    // The proxy answers again: its teams converge too.
    silent.silence(false);
    for i in 0..SILENT_TEAMS {
        ready(&teams, &format!("quiet-{i}")).await;
    }
    for i in 0..SILENT_TEAMS {
        delete_and_wait(&teams, &format!("quiet-{i}")).await;
    }
    for name in &answered {
        delete_and_wait(&teams, name).await;
    }
}

/// Silent proxies of the tenant that holds up the others: as many as a
/// kind's reconciliations at once (`--max-reconcile-rate`, 10), each its
/// own instance, so that no proxy's own limit spares a place.
const SILENT_PROXIES: usize = 10;

/// Aborts the provider's controllers on drop.
struct Running(tokio::task::JoinHandle<()>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An API server of the test's own, with the CRDs and two tenants'
/// namespaces, and the real proxy's URL and master key.
struct TwoTenants {
    cluster: PrivateCluster,
    url: String,
    master_key: String,
    /// The tenant whose proxies never answer.
    holding: String,
    other: String,
}

/// [`TwoTenants`], or `None` (the test is skipped) without the harnesses.
async fn two_tenants(prefix: &str) -> Option<TwoTenants> {
    let (url, master_key) = support::harness::litellm()?;
    let cluster = PrivateCluster::start(prefix).await?;
    k8s::install_crds(&cluster.client).await;
    let holding = k8s::namespace(&cluster.client, "holding").await;
    let other = k8s::namespace(&cluster.client, "other").await;
    Some(TwoTenants {
        cluster,
        url,
        master_key,
        holding,
        other,
    })
}

impl TwoTenants {
    /// The holding tenant's instances: its master key Secret and an
    /// instance on the real proxy (so the Secret is made as for any
    /// instance), then `count` instances `silent-<i>`, each on a fault
    /// proxy of its own that never answers; `ready`: their status says
    /// ready (no instance controller runs to say it).
    async fn silent_instances(&self, count: usize, ready: bool) -> Vec<FaultProxy> {
        let kube = &self.cluster.client;
        create_instance(kube, &self.holding, &self.url, &self.master_key, ready).await;
        let mut silent = Vec::new();
        for i in 0..count {
            let proxy = FaultProxy::start(&self.url).await;
            proxy.silence(true);
            let workload = json!({"managed": false, "endpoint": proxy.url()});
            let name = format!("silent-{i}");
            create_named_instance(kube, &self.holding, &name, workload, proxy.url(), ready).await;
            silent.push(proxy);
        }
        silent
    }
}

/// Waits until the `silent` proxies hold `count` requests between them.
async fn until_held(silent: &[FaultProxy], count: u32, what: &str) {
    support::provider::eventually(what, || async {
        (silent.iter().map(FaultProxy::held).sum::<u32>() >= count).then_some(())
    })
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_whose_proxies_never_answer_leaves_the_other_tenants_places() {
    let Some(tenants) = two_tenants("places").await else {
        return;
    };
    let kube = tenants.cluster.client.clone();
    let (holding, other) = (&tenants.holding, &tenants.other);
    let silent = tenants.silent_instances(SILENT_PROXIES, true).await;
    create_instance(&kube, other, &tenants.url, &tenants.master_key, true).await;

    // One provider for the whole cluster, as Crossplane runs it: one
    // controller per kind over every namespace.
    let ctx = Arc::new(
        support::provider::context(&kube, Metrics::default()).with_litellm_timeout(TIMEOUT),
    );
    let _provider = Running(tokio::spawn(controllers::run(ctx.clone(), None)));

    // The holding tenant: two teams on each silent proxy, twice as many as
    // the kind reconciles at once.
    let suffix = k8s::unique_suffix();
    let held_teams: Api<LiteLLMTeam> = Api::namespaced(kube.clone(), holding);
    let mut held_names = Vec::new();
    for i in 0..SILENT_PROXIES {
        for j in 0..2 {
            let name = format!("held-{i}-{j}");
            held_teams
                .create(
                    &PostParams::default(),
                    &team_on(&format!("silent-{i}"), &name, &format!("{name}-{suffix}")),
                )
                .await
                .unwrap();
            held_names.push(name);
        }
    }
    // Its reconciliations hold its whole share, each a request its proxy
    // will not answer for a timeout.
    until_held(&silent, 10, "the holding tenant's share held").await;
    assert_eq!(ctx.places.held("team", holding), 10);

    // Teams deleted while they wait for a place (before the held requests'
    // first timeout frees one): never reconciled, they have no finalizer,
    // so they are gone at once, with their names still in their
    // namespace's queue.
    let mut gone = Vec::new();
    for name in &held_names {
        let team = held_teams.get(name).await.unwrap();
        if team.metadata.finalizers.as_ref().is_none_or(Vec::is_empty) && gone.len() < 4 {
            held_teams.delete(name, &Default::default()).await.unwrap();
            gone.push(name.clone());
        }
    }
    assert!(
        !gone.is_empty(),
        "ten of the twenty teams wait for a place and were never reconciled"
    );
    for name in &gone {
        wait_gone(&held_teams, name).await;
    }
    assert!(ctx.places.waiting("team", holding) > 0);

    // The other tenant's teams converge meanwhile, well within the
    // timeout the held places wait for.
    let started = Instant::now();
    let teams: Api<LiteLLMTeam> = Api::namespaced(kube.clone(), other);
    let answered: Vec<String> = (0..3).map(|i| format!("other-{i}")).collect();
    for name in &answered {
        teams
            .create(
                &PostParams::default(),
                &team_on(
                    support::provider::INSTANCE,
                    name,
                    &format!("{name}-{suffix}"),
                ),
            )
            .await
            .unwrap();
    }
    for name in &answered {
        ready(&teams, name).await;
    }
    let took = started.elapsed();
    assert!(
        took < TIMEOUT / 2,
        "the other tenant's teams took {took:?} while the holding tenant's proxies were silent"
    );
    assert!(
        ctx.places.held("team", holding) <= 10,
        "the holding tenant never holds more than its share"
    );

    // Its proxies answer again: its other teams converge too, every one of
    // them started again from where it waited; the deleted ones' turns
    // strand none of them, and make nothing in LiteLLM.
    for proxy in &silent {
        proxy.silence(false);
    }
    let held_names: Vec<String> = held_names
        .into_iter()
        .filter(|name| !gone.contains(name))
        .collect();
    for name in &held_names {
        ready(&held_teams, name).await;
    }
    let litellm = support::harness::admin_client(&tenants.url, &tenants.master_key, TIMEOUT);
    for name in &gone {
        assert_eq!(
            litellm
                .team_info(&format!("{holding}.{name}"))
                .await
                .unwrap(),
            None,
            "{name} was deleted before its reconciliation"
        );
    }
    assert_eq!(ctx.places.waiting("team", holding), 0);
    for name in &held_names {
        delete_and_wait(&held_teams, name).await;
    }
    for name in &answered {
        delete_and_wait(&teams, name).await;
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_whose_proxies_never_answer_leaves_the_other_tenants_probes() {
    let Some(tenants) = two_tenants("probes").await else {
        return;
    };
    let kube = tenants.cluster.client.clone();
    let other = &tenants.other;
    // The instance controller for the whole cluster, probing every second,
    // each probe bounded by the timeout.
    let options = InstanceOptions {
        namespace: None,
        ready_interval: Duration::from_secs(1),
        not_ready_interval: Duration::from_secs(1),
        probe_timeout: TIMEOUT,
        ..InstanceOptions::default()
    };
    let _provider = Running(tokio::spawn(instance::controller_with_metrics(
        kube.clone(),
        options,
        Metrics::default(),
    )));

    // The holding tenant: twice as many instances as the controller
    // probes at once, each on a proxy that never answers.
    let silent = tenants.silent_instances(2 * SILENT_PROXIES, false).await;
    until_held(&silent, 10, "the holding tenant's probes held").await;

    // The other tenant's instance is probed and ready meanwhile, well
    // within the timeout the held probes wait for.
    let started = Instant::now();
    create_instance(&kube, other, &tenants.url, &tenants.master_key, false).await;
    let instances: Api<LiteLLMInstance> = Api::namespaced(kube.clone(), other);
    support::provider::eventually("the other tenant's instance ready", || async {
        let instance = instances.get(support::provider::INSTANCE).await.ok()?;
        instance.status.is_some_and(|s| s.ready).then_some(())
    })
    .await;
    let took = started.elapsed();
    assert!(
        took < TIMEOUT / 2,
        "the other tenant's instance took {took:?} to be ready while the holding tenant's \
         proxies were silent"
    );
}
