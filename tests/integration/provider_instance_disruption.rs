//! A provisioned proxy's PodDisruptionBudgets (`spec.workload.
//! podDisruptionBudget`, per role for `topology: split`) against the real
//! API server (which serves `policy/v1` since the harness has it; no
//! disruption controller or eviction runs there, so what is shown is the
//! objects): a budget appears for a Deployment with more than one replica
//! and selects exactly its pods, follows its settings, goes when the
//! replicas drop to one and with the instance; a same-named budget the
//! instance does not own is never touched; and where `policy/v1` is not
//! served, nothing is made and the instance says so, without failing.

use crate::support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Patch, PatchParams};
use litellm_crossplane::api::conditions::SYNCED;
use litellm_crossplane::provider::instance::{condition_type, reason};
use serde_json::{json, Value};
use support::instance::{condition, prepare, reason_of, start, Running};

async fn patch_spec(run: &Running, spec: Value) {
    run.instances()
        .patch(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": spec})),
        )
        .await
        .unwrap();
}

/// Waits (up to 30 s) until the budget `name` satisfies `done` (`None`:
/// absent).
async fn budget_until(
    run: &Running,
    name: &str,
    done: impl Fn(Option<&PodDisruptionBudget>) -> bool,
) -> Option<PodDisruptionBudget> {
    let mut last = None;
    for _ in 0..300 {
        support::authz::assert_no_denials();
        let current = run
            .api::<PodDisruptionBudget>()
            .get_opt(name)
            .await
            .unwrap();
        if done(current.as_ref()) {
            return current;
        }
        last = current;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("budget {name} not as expected; last seen: {last:#?}");
}

fn spec_of(budget: Option<&PodDisruptionBudget>) -> Value {
    serde_json::to_value(budget.and_then(|b| b.spec.as_ref())).unwrap()
}

/// Whether the API server of the tests serves `policy/v1`
/// poddisruptionbudgets.
async fn budgets_served(client: &kube::Client) -> bool {
    match client.list_api_group_resources("policy/v1").await {
        Ok(list) => list
            .resources
            .iter()
            .any(|r| r.name == "poddisruptionbudgets"),
        Err(kube::Error::Api(status)) if status.code == 404 => false,
        Err(other) => panic!("discovery of policy/v1: {other}"),
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_budget_follows_the_replicas_and_its_settings_and_goes_with_the_instance() {
    let Some(run) = start("li-pdb").await else {
        return;
    };
    if !budgets_served(&run.client).await {
        assert!(
            !support::k8s::harness_required(),
            "the API server harness does not serve policy/v1: rebuild it (tests/harness/k8s/up.sh)"
        );
        eprintln!("skipped: the API server does not serve policy/v1");
        return;
    }
    let created = run
        .create(
            "gw",
            json!({"masterKey": {"autoGenerate": true}, "workload": {"replicas": 3}}),
        )
        .await;
    let uid = created.metadata.uid.clone().unwrap();

    // Three replicas: maxUnavailable 1, selecting exactly the Deployment's
    // pods; owned and labelled as every workload object.
    let deployment = run.wait_for_object::<Deployment>("gw").await;
    let budget = budget_until(&run, "gw", |b| b.is_some()).await.unwrap();
    assert_eq!(
        spec_of(Some(&budget)),
        json!({
            "maxUnavailable": 1,
            "selector": serde_json::to_value(&deployment.spec.selector).unwrap(),
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        })
    );
    let owner = &budget.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.uid.as_str(), owner.controller),
        (uid.as_str(), Some(true))
    );
    let labels = budget.metadata.labels.clone().unwrap();
    for (key, value) in [
        ("app.kubernetes.io/name", "litellm"),
        ("app.kubernetes.io/instance", "gw"),
        ("app.kubernetes.io/managed-by", "provider-litellm"),
    ] {
        assert_eq!(labels[key], value);
    }
    let instance = run.observed("gw").await;
    assert!(condition(&instance, condition_type::API_NOT_SERVED).is_none());
    assert!(condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none());

    // A change of the settings is followed; the other count is dropped
    // (the build is the whole truth).
    patch_spec(
        &run,
        json!({"workload": {"podDisruptionBudget": {"maxUnavailable": "50%"}}}),
    )
    .await;
    budget_until(&run, "gw", |b| spec_of(b)["maxUnavailable"] == "50%").await;
    patch_spec(
        &run,
        json!({"workload": {"podDisruptionBudget": {"maxUnavailable": null, "minAvailable": 2}}}),
    )
    .await;
    let budget = budget_until(&run, "gw", |b| spec_of(b)["minAvailable"] == 2).await;
    assert!(spec_of(budget.as_ref()).get("maxUnavailable").is_none());

    // An integer minAvailable not below the replicas is refused, naming
    // the field, and nothing changes.
    patch_spec(
        &run,
        json!({"workload": {"podDisruptionBudget": {"minAvailable": 3}}}),
    )
    .await;
    let refused = run
        .wait_for("gw", |i| {
            condition(i, condition_type::READY).is_some_and(|c| c.reason == reason::INVALID_SPEC)
        })
        .await;
    let message = condition(&refused, condition_type::READY)
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert!(
        message.contains(
            "spec.workload.podDisruptionBudget.minAvailable 3 is not below the 3 replicas"
        ),
        "{message}"
    );
    assert_eq!(
        spec_of(
            run.api::<PodDisruptionBudget>()
                .get_opt("gw")
                .await
                .unwrap()
                .as_ref()
        )["minAvailable"],
        2
    );
    patch_spec(
        &run,
        json!({"workload": {"podDisruptionBudget": {"minAvailable": 2}}}),
    )
    .await;

    // One replica: the budget goes; back to three, it comes back.
    patch_spec(&run, json!({"workload": {"replicas": 1}})).await;
    budget_until(&run, "gw", |b| b.is_none()).await;
    patch_spec(&run, json!({"workload": {"replicas": 3}})).await;
    budget_until(&run, "gw", |b| b.is_some()).await;
    // Disabled: it goes.
    patch_spec(
        &run,
        json!({"workload": {"podDisruptionBudget": {"enabled": false}}}),
    )
    .await;
    budget_until(&run, "gw", |b| b.is_none()).await;

    // The split topology: one per role with more than one replica; the
    // single proxy's is pruned with the topology.
    patch_spec(
        &run,
        json!({"workload": {
            "topology": "split",
            "podDisruptionBudget": {"enabled": true, "minAvailable": null},
            "ui": {"replicas": 1},
            "backend": {"podDisruptionBudget": {"maxUnavailable": "25%"}},
        }}),
    )
    .await;
    let gateway = budget_until(&run, "gw-gateway", |b| b.is_some()).await;
    let backend = budget_until(&run, "gw-backend", |b| b.is_some()).await;
    assert_eq!(spec_of(gateway.as_ref())["maxUnavailable"], 1);
    assert_eq!(spec_of(backend.as_ref())["maxUnavailable"], "25%");
    assert_eq!(
        spec_of(backend.as_ref())["selector"]["matchLabels"]["app.kubernetes.io/component"],
        "backend"
    );
    assert!(run
        .api::<PodDisruptionBudget>()
        .get_opt("gw-ui")
        .await
        .unwrap()
        .is_none());
    assert!(run
        .api::<PodDisruptionBudget>()
        .get_opt("gw")
        .await
        .unwrap()
        .is_none());

    // Deleting the instance takes them with it (its teardown; the harness
    // has no garbage collector).
    run.instances()
        .delete("gw", &Default::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt("gw").await.unwrap().is_none());
    assert!(run.names::<PodDisruptionBudget>().await.is_empty());
    support::authz::assert_no_denials();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_same_named_budget_the_instance_does_not_own_is_never_touched() {
    let Some(run) = start("li-pdb-own").await else {
        return;
    };
    if !budgets_served(&run.client).await {
        assert!(
            !support::k8s::harness_required(),
            "the API server harness does not serve policy/v1: rebuild it (tests/harness/k8s/up.sh)"
        );
        return;
    }
    run.create_object::<PodDisruptionBudget>(json!({
        "metadata": {"name": "gw", "labels": {"app.kubernetes.io/instance": "gw",
            "app.kubernetes.io/name": "litellm", "app.kubernetes.io/managed-by": "provider-litellm"}},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "theirs"}}},
    }))
    .await;
    let before = run.snapshot::<PodDisruptionBudget>().await;
    run.create(
        "gw",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"replicas": 3}}),
    )
    .await;
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::WORKLOAD_CONFLICT).is_some()
        })
        .await;
    assert_eq!(
        reason_of(&instance, condition_type::WORKLOAD_CONFLICT),
        ("True".into(), reason::OBJECT_NOT_OWNED.into())
    );
    let message = condition(&instance, condition_type::WORKLOAD_CONFLICT)
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert!(message.contains("PodDisruptionBudget gw"), "{message}");
    run.reconciled_again(3).await;
    assert_eq!(run.snapshot::<PodDisruptionBudget>().await, before);

    // No longer wanted (one replica): still not the instance's to delete.
    patch_spec(&run, json!({"workload": {"replicas": 1}})).await;
    run.wait_for("gw", |i| {
        condition(i, condition_type::WORKLOAD_CONFLICT).is_none()
            && i.status.as_ref().and_then(|s| s.observed_generation) == i.metadata.generation
    })
    .await;
    run.reconciled_again(3).await;
    assert_eq!(run.snapshot::<PodDisruptionBudget>().await, before);

    // Nor does the teardown delete it.
    run.instances()
        .delete("gw", &Default::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt("gw").await.unwrap().is_none());
    assert_eq!(run.snapshot::<PodDisruptionBudget>().await, before);
    support::authz::assert_no_denials();
}

/// Where `policy/v1` is not served (an API server without it; on one that
/// serves it, the provider's proxy answers 404 for it, as such a server
/// does, discovery included), nothing is made, the instance names the
/// field, and the rest of the workload, the pruning and the teardown go on.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn budgets_asked_for_where_policy_v1_is_not_served_are_reported_and_nothing_fails() {
    let Some(mut run) = prepare("li-pdb-none").await else {
        return;
    };
    if budgets_served(&run.client).await {
        run.authz.hide("policy/v1");
    }
    run.resume();
    run.create(
        "gw",
        json!({"masterKey": {"autoGenerate": true},
               "workload": {"replicas": 3, "podDisruptionBudget": {"maxUnavailable": 1}}}),
    )
    .await;
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::API_NOT_SERVED).is_some()
        })
        .await;
    assert_eq!(
        reason_of(&instance, condition_type::API_NOT_SERVED),
        ("True".into(), reason::API_NOT_SERVED.into())
    );
    assert_eq!(
        condition(&instance, condition_type::API_NOT_SERVED)
            .unwrap()
            .message
            .as_deref(),
        Some(
            "spec.workload.podDisruptionBudget: the API server does not serve \
             policy/v1/poddisruptionbudgets, so Deployment gw has no PodDisruptionBudget"
        )
    );
    assert_eq!(reason_of(&instance, SYNCED).0, "True");
    assert_ne!(
        reason_of(&instance, condition_type::READY).1,
        reason::INVALID_SPEC
    );
    let deployment = run.wait_for_object::<Deployment>("gw").await;
    assert_eq!(deployment.spec.replicas, Some(3));

    // One replica: nothing asked for, nothing reported.
    patch_spec(&run, json!({"workload": {"replicas": 1}})).await;
    run.wait_for("gw", |i| {
        condition(i, condition_type::API_NOT_SERVED).is_none()
    })
    .await;

    // The teardown lists budgets too (a 404 holds nothing to delete).
    run.instances()
        .delete("gw", &Default::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt("gw").await.unwrap().is_none());
    assert!(run.names::<Deployment>().await.is_empty());
    support::authz::assert_no_denials();
}
