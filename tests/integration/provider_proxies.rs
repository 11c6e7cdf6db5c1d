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

use crate::support;

use std::time::{Duration, Instant};

use kube::api::PostParams;
use litellm_crossplane::api::LiteLLMTeam;
use serde_json::json;
use support::fault_proxy::FaultProxy;
use support::k8s;
use support::provider::{
    condition, create_named_instance, delete_and_wait, is, manifest, ready, wait_for, world_with,
    Setup,
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
