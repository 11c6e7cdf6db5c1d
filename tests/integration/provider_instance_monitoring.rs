//! A provisioned proxy's Prometheus Operator `ServiceMonitor`
//! (`spec.workload.serviceMonitor`) against the real API server, through
//! the authorizing proxy with the package's permissions: asked for where
//! the cluster does not serve ServiceMonitors, the instance says so and
//! nothing fails; once the Prometheus Operator's CRD is installed the
//! ServiceMonitor appears, follows the spec, leaves an unowned same-named
//! one alone, and goes when no longer asked for or with the instance.
//!
//! The CRD is cluster-wide and this is the only test that installs it: it
//! removes a leftover of an earlier run first, so the not-served step
//! really runs without it.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use litellm_crossplane::provider::instance::monitor::ServiceMonitor;
use serde_json::json;
use support::instance::{condition, start};
use support::k8s;

const CRD: &str = "servicemonitors.monitoring.coreos.com";

/// The Prometheus Operator's ServiceMonitor CRD, as far as a test needs it
/// (the real one's schema is large; the provider writes only `selector`
/// and `endpoints`, so the spec is kept as sent).
fn crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {
            "group": "monitoring.coreos.com",
            "scope": "Namespaced",
            "names": {"plural": "servicemonitors", "singular": "servicemonitor", "kind": "ServiceMonitor", "listKind": "ServiceMonitorList", "shortNames": ["smon"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}},
            }],
        },
    }))
    .unwrap()
}

async fn remove_crd(crds: &Api<CustomResourceDefinition>) {
    let _ = crds.delete(CRD, &DeleteParams::default()).await;
    for _ in 0..600 {
        if crds.get_opt(CRD).await.unwrap().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the ServiceMonitor CRD was not removed");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_service_monitor_appears_only_where_served_and_follows_the_spec() {
    let Some(run) = start("li-smon").await else {
        return;
    };
    let crds: Api<CustomResourceDefinition> = Api::all(run.client.clone());
    remove_crd(&crds).await;

    // Not served: reported, the rest provisioned.
    run.create(
        "gw",
        json!({
            "masterKey": {"autoGenerate": true},
            "workload": {"serviceMonitor": {"interval": "30s", "labels": {"release": "prom"}}},
        }),
    )
    .await;
    run.wait_for_object::<Deployment>("gw").await;
    let refused = run
        .wait_for("gw", |i| condition(i, "APINotServed").is_some())
        .await;
    let not_served = condition(&refused, "APINotServed").unwrap();
    assert_eq!(
        (not_served.status.as_str(), not_served.reason.as_str()),
        ("True", "APINotServed")
    );
    assert!(
        not_served
            .message
            .as_deref()
            .unwrap()
            .starts_with("spec.workload.serviceMonitor needs monitoring.coreos.com/v1"),
        "{not_served:?}"
    );
    assert_eq!(condition(&refused, "Synced").unwrap().status, "True");

    // Served: created, selecting the proxy's Services.
    crds.create(&PostParams::default(), &crd()).await.unwrap();
    k8s::wait_established(&crds, CRD).await;
    let monitors: Api<ServiceMonitor> = run.api();
    let created = run.wait_for_object::<ServiceMonitor>("gw").await;
    let value = serde_json::to_value(&created).unwrap();
    assert_eq!(value["spec"]["endpoints"][0]["path"], "/metrics");
    assert_eq!(value["spec"]["endpoints"][0]["port"], "http");
    assert_eq!(value["spec"]["endpoints"][0]["interval"], "30s");
    assert_eq!(value["metadata"]["labels"]["release"], "prom");
    assert_eq!(
        value["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"],
        "gw"
    );
    run.wait_for("gw", |i| condition(i, "APINotServed").is_none())
        .await;

    // A spec change follows; a change made by hand is put back.
    let patch = json!({"spec": {"workload": {"serviceMonitor": {"interval": "1m"}}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    support::provider::eventually("the new interval", || async {
        let m = monitors.get("gw").await.unwrap();
        (m.spec.endpoints[0].interval.as_deref() == Some("1m")).then_some(())
    })
    .await;
    let by_hand = json!({"spec": {"endpoints": [{"port": "http", "path": "/other"}]}});
    monitors
        .patch("gw", &PatchParams::default(), &Patch::Merge(&by_hand))
        .await
        .unwrap();
    support::provider::eventually("the hand edit undone", || async {
        let m = monitors.get("gw").await.unwrap();
        (m.spec.endpoints[0].path == "/metrics").then_some(())
    })
    .await;

    // An unowned same-named ServiceMonitor of another instance is left as
    // it is, and reported.
    let foreign: ServiceMonitor = serde_json::from_value(json!({
        "apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
        "metadata": {"name": "other", "labels": {"team": "platform"}},
        "spec": {"selector": {}, "endpoints": [{"port": "web", "path": "/m"}]},
    }))
    .unwrap();
    let foreign = monitors
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    run.create(
        "other",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"serviceMonitor": {}}}),
    )
    .await;
    let conflicted = run
        .wait_for("other", |i| condition(i, "WorkloadConflict").is_some())
        .await;
    assert!(condition(&conflicted, "WorkloadConflict")
        .unwrap()
        .message
        .as_deref()
        .unwrap()
        .contains("ServiceMonitor other"));
    run.reconciled_again(2).await;
    assert_eq!(
        monitors
            .get("other")
            .await
            .unwrap()
            .metadata
            .resource_version,
        foreign.metadata.resource_version,
        "never written"
    );

    // No longer asked for: deleted (the unowned one stays).
    let off = json!({"spec": {"workload": {"serviceMonitor": {"enabled": false}}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&off))
        .await
        .unwrap();
    support::provider::eventually("the ServiceMonitor deleted", || async {
        monitors
            .get_opt("gw")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;

    // With the instance: asked again, then the instance deleted.
    let on = json!({"spec": {"workload": {"serviceMonitor": {"enabled": true}}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&on))
        .await
        .unwrap();
    run.wait_for_object::<ServiceMonitor>("gw").await;
    run.instances()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    support::provider::eventually("the instance and its ServiceMonitor gone", || async {
        (run.instances().get_opt("gw").await.unwrap().is_none()
            && monitors.get_opt("gw").await.unwrap().is_none())
        .then_some(())
    })
    .await;
    assert!(monitors.get_opt("other").await.unwrap().is_some());

    // Every permission the package requests for ServiceMonitors was used,
    // and none denied.
    let used = run.authz.used();
    for verb in ["get", "list", "create", "update", "delete"] {
        let triple = (
            verb.to_string(),
            "monitoring.coreos.com".to_string(),
            "servicemonitors".to_string(),
        );
        assert!(used.contains(&triple), "{verb} not used: {used:?}");
    }
    assert!(run.authz.denied().is_empty(), "{:?}", run.authz.denied());
    remove_crd(&crds).await;
}

/// A provider whose ClusterRole was not updated with the release that
/// added ServiceMonitors, PodDisruptionBudgets, Ingresses and HTTPRoutes
/// (the permissions of an older `rbac.yaml`): an instance that asks for
/// none of them is provisioned, Synced, and deleted as before; the
/// clean-up's list of those kinds is denied and passed over, never a
/// reason to fail a round or hold the finalizer.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_older_role_without_the_newer_kinds_still_provisions_and_deletes() {
    let newer = [
        "monitoring.coreos.com",
        "policy",
        "networking.k8s.io",
        "gateway.networking.k8s.io",
    ];
    let rules: Vec<_> = support::authz::provider_rules()
        .into_iter()
        .filter(|rule| !rule.api_groups.iter().any(|g| newer.contains(&g.as_str())))
        .collect();
    let Some(run) = support::instance::start_with_rules("li-oldrole", rules).await else {
        return;
    };
    run.create("gw", json!({"masterKey": {"autoGenerate": true}}))
        .await;
    run.wait_for_object::<Deployment>("gw").await;
    let synced = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ReconcileSuccess")
        })
        .await;
    assert_eq!(condition(&synced, "Synced").unwrap().status, "True");
    run.reconciled_again(2).await;
    let synced = run.instances().get("gw").await.unwrap();
    assert_eq!(condition(&synced, "Synced").unwrap().status, "True");

    run.instances()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    support::provider::eventually("the instance deleted", || async {
        run.instances()
            .get_opt("gw")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    assert!(run.names::<Deployment>().await.is_empty());
    let denied = run.authz.denied();
    assert!(
        !denied.is_empty(),
        "the clean-up tried to list the newer kinds"
    );
    assert!(
        denied.iter().all(|d| d.starts_with("denied: list ")
            && newer.iter().any(|g| d.contains(&format!(" {g}/")))),
        "only the newer kinds' lists: {denied:?}"
    );
}
