//! A provisioned proxy's exposure (`spec.workload.exposure`, per role
//! `spec.workload.<role>.exposure`) and Service annotations
//! (`spec.service.annotations`) against the real API server, with the
//! controller under the package's permissions (the authorizing proxy).
//!
//! The Gateway API is not part of Kubernetes: the HTTPRoute test first
//! makes sure its CRD is absent (the instance reports it, nothing fails),
//! then installs a minimal `httproutes.gateway.networking.k8s.io` and sees
//! the route appear, follow the spec and go. CRDs are cluster-wide and the
//! tests run in parallel, so every step with that CRD is in that one test.
//! Ingress is a built-in the API server may or may not serve (the
//! harness's `networking.k8s.io/v1` is optional): the Ingress test checks
//! whichever the server it runs against does.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use litellm_crossplane::provider::instance::exposure::HTTPRoute;
use litellm_crossplane::provider::instance::{condition_type, reason};
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::instance::{condition, start, Running};
use support::provider::within;

const ROUTE_CRD: &str = "httproutes.gateway.networking.k8s.io";

/// Whether the API server lists `resource` in `group_version`.
async fn served(client: &kube::Client, group_version: &str, resource: &str) -> bool {
    match client.list_api_group_resources(group_version).await {
        Ok(list) => list.resources.iter().any(|r| r.name == resource),
        // 404, or 503 while a CRD's group goes away.
        Err(kube::Error::Api(_)) => false,
        Err(other) => panic!("discovery of {group_version}: {other}"),
    }
}

/// A minimal HTTPRoute CRD: v1, namespaced, any spec (a `*.k8s.io` group
/// needs the API-approval annotation).
fn route_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": ROUTE_CRD,
            "annotations": {"api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/2466"},
        },
        "spec": {
            "group": "gateway.networking.k8s.io",
            "scope": "Namespaced",
            "names": {"plural": "httproutes", "singular": "httproute", "kind": "HTTPRoute", "listKind": "HTTPRouteList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    }))
    .unwrap()
}

/// Deletes the HTTPRoute CRD (an earlier run's) and waits until the API
/// server no longer serves the group.
async fn remove_route_crd(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let _ = crds.delete(ROUTE_CRD, &DeleteParams::default()).await;
    within(
        "the HTTPRoute CRD gone",
        Duration::from_secs(60),
        || async {
            let gone = crds.get_opt(ROUTE_CRD).await.unwrap().is_none()
                && !served(client, "gateway.networking.k8s.io/v1", "httproutes").await;
            gone.then_some(())
        },
    )
    .await;
}

fn exposed(run_instance: &litellm_crossplane::api::instance::LiteLLMInstance) -> (String, String) {
    let c = condition(run_instance, condition_type::EXPOSED).expect("an Exposed condition");
    (c.status.clone(), c.reason.clone())
}

/// RFC 7386: `patch` merged into `target`.
fn merge(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(into), Some(from)) => {
            for (key, value) in from {
                if value.is_null() {
                    into.remove(key);
                } else {
                    merge(into.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        _ => *target = patch.clone(),
    }
}

/// Merges `spec` into the instance's and waits until the stored spec holds
/// it, writing it again meanwhile: several working copies share the API
/// server and install their own CRDs, so a write may meet a schema without
/// this build's fields (pruned) until the CRD guard has put them back.
async fn patch_spec(run: &Running, name: &str, spec: Value) {
    within("the spec stored", Duration::from_secs(30), || async {
        run.instances()
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": spec})),
            )
            .await
            .unwrap();
        let stored = run.instances().get(name).await.unwrap();
        let stored = serde_json::to_value(&stored.spec).unwrap();
        let mut merged = stored.clone();
        merge(&mut merged, &spec);
        (merged == stored).then_some(())
    })
    .await;
}

/// Creates the instance and makes sure its spec is stored whole (see
/// [`patch_spec`]).
async fn create(run: &Running, name: &str, spec: Value) {
    run.create(name, spec.clone()).await;
    patch_spec(run, name, spec).await;
}

async fn route_spec(run: &Running, name: &str) -> Option<Value> {
    let route = run.api::<HTTPRoute>().get_opt(name).await.unwrap()?;
    Some(serde_json::to_value(&route.spec).unwrap())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_http_route_appears_once_the_gateway_api_is_served_follows_the_spec_and_goes() {
    let Some(run) = start("li-route").await else {
        return;
    };
    let _guard = CrdGuard::start(&run.client);
    remove_route_crd(&run.client).await;

    // Not served: reported, nothing fails, the rest is provisioned.
    let exposure = json!({"httpRoute": {
        "parentRefs": [{"name": "public", "namespace": "gateways", "sectionName": "https"}],
        "hostnames": ["llm.example.com"],
        "annotations": {"example.com/team": "platform"},
    }});
    create(
        &run,
        "gw",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"exposure": exposure}}),
    )
    .await;
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::EXPOSED).is_some()
                && condition(i, "Synced").is_some_and(|c| c.status == "True")
        })
        .await;
    assert_eq!(
        exposed(&instance),
        ("False".into(), reason::API_NOT_SERVED.into())
    );
    let message = condition(&instance, condition_type::EXPOSED)
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert_eq!(
        message,
        "spec.workload.exposure.httpRoute: the cluster does not serve \
         gateway.networking.k8s.io/v1 httproutes, so HTTPRoute gw is not created (it is once the \
         API is installed)"
    );
    run.wait_for_object::<Deployment>("gw").await;
    run.reconciled_again(2).await;
    let instance = run.instances().get("gw").await.unwrap();
    assert_eq!(
        condition(&instance, "Synced").map(|c| c.status.as_str()),
        Some("True")
    );

    // An HTTPRoute of someone else's, named as the instance "web" would
    // name its own.
    let crds: Api<CustomResourceDefinition> = Api::all(run.client.clone());
    crds.create(&PostParams::default(), &route_crd())
        .await
        .expect("the HTTPRoute CRD created");
    support::k8s::wait_established(&crds, ROUTE_CRD).await;
    within(
        "the Gateway API served",
        Duration::from_secs(30),
        || async {
            served(&run.client, "gateway.networking.k8s.io/v1", "httproutes")
                .await
                .then_some(())
        },
    )
    .await;

    // Served: the route appears, as asked.
    let expected = json!({
            "parentRefs": [{"name": "public", "namespace": "gateways", "sectionName": "https"}],
            "hostnames": ["llm.example.com"],
            "rules": [{
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"name": "gw", "port": 4000}],
            }],
    });
    let spec = within("the HTTPRoute gw", Duration::from_secs(30), || async {
        route_spec(&run, "gw").await.filter(|s| *s == expected)
    })
    .await;
    assert_eq!(
        spec,
        json!({
            "parentRefs": [{"name": "public", "namespace": "gateways", "sectionName": "https"}],
            "hostnames": ["llm.example.com"],
            "rules": [{
                "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                "backendRefs": [{"name": "gw", "port": 4000}],
            }],
        })
    );
    let route = run.api::<HTTPRoute>().get("gw").await.unwrap();
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::EXPOSED).is_some_and(|c| c.status == "True")
        })
        .await;
    assert_eq!(
        exposed(&instance),
        ("True".into(), reason::EXPOSURE_WRITTEN.into())
    );
    let owner = &route.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(Some(&owner.uid), instance.metadata.uid.as_ref());
    assert_eq!(owner.controller, Some(true));
    let labels = route.metadata.labels.clone().unwrap();
    assert_eq!(labels["app.kubernetes.io/instance"], "gw");
    assert_eq!(labels["app.kubernetes.io/name"], "litellm");
    assert_eq!(
        route.metadata.annotations.clone().unwrap()["example.com/team"],
        "platform"
    );

    // A spec change follows.
    patch_spec(
        &run,
        "gw",
        json!({"service": {"port": 8080}, "workload": {"exposure": {"httpRoute": {
            "parentRefs": [{"name": "internal", "port": 8443}],
            "hostnames": ["api.example.com", "*.llm.example.com"],
            "annotations": null,
        }}}}),
    )
    .await;
    let spec = within("the HTTPRoute changed", Duration::from_secs(30), || async {
        let spec = route_spec(&run, "gw").await?;
        (spec["hostnames"][0] == "api.example.com").then_some(spec)
    })
    .await;
    assert_eq!(
        spec["parentRefs"],
        json!([{"name": "internal", "port": 8443}])
    );
    assert_eq!(
        spec["hostnames"],
        json!(["api.example.com", "*.llm.example.com"])
    );
    assert_eq!(
        spec["rules"][0]["backendRefs"],
        json!([{"name": "gw", "port": 8080}])
    );
    let route = run.api::<HTTPRoute>().get("gw").await.unwrap();
    assert!(
        route.metadata.annotations.is_none(),
        "dropped annotations go"
    );

    // A same-named HTTPRoute the instance does not own is never written.
    let foreign: HTTPRoute = serde_json::from_value(json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "labels": {
            "app.kubernetes.io/name": "litellm",
            "app.kubernetes.io/instance": "web",
            "app.kubernetes.io/managed-by": litellm_crossplane::provider::watch::cache::MANAGED_BY,
        }},
        "spec": {"parentRefs": [{"name": "theirs"}], "hostnames": ["theirs.example.com"]},
    }))
    .unwrap();
    let foreign = run
        .api::<HTTPRoute>()
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    create(
        &run,
        "web",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"exposure": {"httpRoute": {
            "parentRefs": [{"name": "public"}],
        }}}}),
    )
    .await;
    let web = run
        .wait_for("web", |i| condition(i, condition_type::EXPOSED).is_some())
        .await;
    assert_eq!(
        exposed(&web),
        ("False".into(), reason::OBJECT_NOT_OWNED.into())
    );
    let conflict = condition(&web, condition_type::WORKLOAD_CONFLICT).unwrap();
    assert!(
        conflict
            .message
            .as_deref()
            .unwrap()
            .starts_with("HTTPRoute web exists but is not owned"),
        "{conflict:?}"
    );
    run.reconciled_again(3).await;
    let after = run.api::<HTTPRoute>().get("web").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        foreign.metadata.resource_version
    );
    assert_eq!(
        serde_json::to_value(&after).unwrap(),
        serde_json::to_value(&foreign).unwrap(),
        "byte-identical"
    );

    // Exposure dropped: the instance's route goes, the foreign one stays.
    patch_spec(&run, "gw", json!({"workload": {"exposure": null}})).await;
    within(
        "the HTTPRoute gw deleted",
        Duration::from_secs(30),
        || async { route_spec(&run, "gw").await.is_none().then_some(()) },
    )
    .await;
    let instance = run
        .wait_for("gw", |i| condition(i, condition_type::EXPOSED).is_none())
        .await;
    assert!(instance.status.is_some());
    patch_spec(&run, "web", json!({"workload": {"exposure": null}})).await;
    run.reconciled_again(3).await;
    assert_eq!(
        run.api::<HTTPRoute>()
            .get("web")
            .await
            .unwrap()
            .metadata
            .resource_version,
        foreign.metadata.resource_version,
        "a route not the instance's is not pruned"
    );

    // Exposed again, then the instance deleted: its route goes with it.
    patch_spec(
        &run,
        "gw",
        json!({"workload": {"exposure": {"httpRoute": {"parentRefs": [{"name": "public"}]}}}}),
    )
    .await;
    within(
        "the HTTPRoute gw again",
        Duration::from_secs(30),
        || async { route_spec(&run, "gw").await },
    )
    .await;
    for name in ["gw", "web"] {
        run.instances()
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    within("the instances gone", Duration::from_secs(30), || async {
        let left = run.names::<litellm_crossplane::api::instance::LiteLLMInstance>();
        left.await.is_empty().then_some(())
    })
    .await;
    assert!(route_spec(&run, "gw").await.is_none(), "torn down");
    assert!(
        route_spec(&run, "web").await.is_some(),
        "never the foreign one"
    );
    support::authz::assert_no_denials();
    remove_route_crd(&run.client).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_ingress_is_written_where_the_api_is_served_and_reported_where_not() {
    let Some(run) = start("li-ingress").await else {
        return;
    };
    let _guard = CrdGuard::start(&run.client);
    let exposure = json!({"ingress": {
        "className": "nginx", "host": "llm.example.com",
        "tls": {"secretName": "llm-tls"},
        "annotations": {"cert-manager.io/cluster-issuer": "letsencrypt"},
    }});
    create(
        &run,
        "gw",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"exposure": exposure}}),
    )
    .await;
    if !served(&run.client, "networking.k8s.io/v1", "ingresses").await {
        let instance = run
            .wait_for("gw", |i| condition(i, condition_type::EXPOSED).is_some())
            .await;
        assert_eq!(
            exposed(&instance),
            ("False".into(), reason::API_NOT_SERVED.into())
        );
        assert_eq!(
            condition(&instance, condition_type::EXPOSED)
                .unwrap()
                .message
                .as_deref(),
            Some(
                "spec.workload.exposure.ingress: the cluster does not serve networking.k8s.io/v1 \
                 ingresses, so Ingress gw is not created (it is once the API is installed)"
            )
        );
        run.wait_for_object::<Deployment>("gw").await;
        run.reconciled_again(2).await;
        let instance = run.instances().get("gw").await.unwrap();
        assert_eq!(
            condition(&instance, "Synced").map(|c| c.status.as_str()),
            Some("True")
        );
        support::authz::assert_no_denials();
        eprintln!("networking.k8s.io/v1 ingresses not served: only the report is checked");
        return;
    }

    let ingress = within("the Ingress gw", Duration::from_secs(30), || async {
        let ingress = run.api::<Ingress>().get_opt("gw").await.unwrap()?;
        ingress.metadata.annotations.is_some().then_some(ingress)
    })
    .await;
    let spec = serde_json::to_value(ingress.spec.as_ref().unwrap()).unwrap();
    assert_eq!(spec["ingressClassName"], "nginx");
    assert_eq!(
        spec["rules"],
        json!([{"host": "llm.example.com", "http": {"paths": [{
            "path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "gw", "port": {"number": 4000}}},
        }]}}])
    );
    assert_eq!(
        spec["tls"],
        json!([{"hosts": ["llm.example.com"], "secretName": "llm-tls"}])
    );
    assert_eq!(
        ingress.metadata.annotations.clone().unwrap()["cert-manager.io/cluster-issuer"],
        "letsencrypt"
    );
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::EXPOSED).is_some_and(|c| c.status == "True")
        })
        .await;
    assert_eq!(
        ingress.metadata.owner_references.as_ref().unwrap()[0].uid,
        instance.metadata.uid.clone().unwrap()
    );

    // Split: the gateway by the workload's exposure, the backend by its
    // own; the single proxy's Ingress goes with its Service.
    patch_spec(
        &run,
        "gw",
        json!({"workload": {
            "topology": "split",
            "backend": {"exposure": {"ingress": {"host": "admin.example.com", "path": "/admin"}}},
        }}),
    )
    .await;
    let backend = run.wait_for_object::<Ingress>("gw-backend").await;
    let gateway = run.wait_for_object::<Ingress>("gw-gateway").await;
    let backend = serde_json::to_value(backend.spec.unwrap()).unwrap();
    assert_eq!(
        backend["rules"][0]["http"]["paths"][0],
        json!({"path": "/admin", "pathType": "Prefix",
               "backend": {"service": {"name": "gw-backend", "port": {"number": 4001}}}})
    );
    let gateway = serde_json::to_value(gateway.spec.unwrap()).unwrap();
    assert_eq!(
        gateway["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "gw-gateway"
    );
    within(
        "the single Ingress pruned",
        Duration::from_secs(30),
        || async {
            run.api::<Ingress>()
                .get_opt("gw")
                .await
                .unwrap()
                .is_none()
                .then_some(())
        },
    )
    .await;

    // Someone else's same-named Ingress is never written.
    let foreign: Ingress = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"defaultBackend": {"service": {"name": "theirs", "port": {"number": 80}}}},
    }))
    .unwrap();
    let foreign = run
        .api::<Ingress>()
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    create(
        &run,
        "web",
        json!({"masterKey": {"autoGenerate": true}, "workload": {"exposure": {"ingress": {"host": "web.example.com"}}}}),
    )
    .await;
    let web = run
        .wait_for("web", |i| condition(i, condition_type::EXPOSED).is_some())
        .await;
    assert_eq!(
        exposed(&web),
        ("False".into(), reason::OBJECT_NOT_OWNED.into())
    );
    run.reconciled_again(3).await;
    assert_eq!(
        run.api::<Ingress>()
            .get("web")
            .await
            .unwrap()
            .metadata
            .resource_version,
        foreign.metadata.resource_version
    );

    // Dropped and torn down.
    patch_spec(&run, "gw", json!({"workload": {"exposure": null}})).await;
    within(
        "the gateway's Ingress pruned",
        Duration::from_secs(30),
        || async {
            run.api::<Ingress>()
                .get_opt("gw-gateway")
                .await
                .unwrap()
                .is_none()
                .then_some(())
        },
    )
    .await;
    assert!(run
        .api::<Ingress>()
        .get_opt("gw-backend")
        .await
        .unwrap()
        .is_some());
    for name in ["gw", "web"] {
        run.instances()
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
    within("the instances gone", Duration::from_secs(30), || async {
        let left = run.names::<litellm_crossplane::api::instance::LiteLLMInstance>();
        left.await.is_empty().then_some(())
    })
    .await;
    assert_eq!(
        run.names::<Ingress>().await,
        ["web"],
        "only the foreign one"
    );
    support::authz::assert_no_denials();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn service_annotations_land_on_every_service_of_both_topologies() {
    let Some(run) = start("li-svc-annotations").await else {
        return;
    };
    let _guard = CrdGuard::start(&run.client);
    let annotations = json!({
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "example.com/owner": "platform",
    });
    create(
        &run,
        "gw",
        json!({"masterKey": {"autoGenerate": true}, "service": {"annotations": annotations}}),
    )
    .await;
    within("the Service annotated", Duration::from_secs(30), || async {
        let service = run.api::<Service>().get_opt("gw").await.unwrap()?;
        (serde_json::to_value(service.metadata.annotations).unwrap() == annotations).then_some(())
    })
    .await;

    patch_spec(&run, "gw", json!({"workload": {"topology": "split"}})).await;
    for name in ["gw-gateway", "gw-backend", "gw-ui"] {
        within(name, Duration::from_secs(30), || async {
            let service = run.api::<Service>().get_opt(name).await.unwrap()?;
            (serde_json::to_value(service.metadata.annotations).unwrap() == annotations)
                .then_some(())
        })
        .await;
    }

    // Changed and removed.
    patch_spec(
        &run,
        "gw",
        json!({"service": {"annotations": {"example.com/owner": null}}}),
    )
    .await;
    for name in ["gw-gateway", "gw-backend", "gw-ui"] {
        within(
            "the annotation removed",
            Duration::from_secs(30),
            || async {
                let service = run.api::<Service>().get(name).await.unwrap();
                let annotations = service.metadata.annotations.unwrap_or_default();
                (!annotations.contains_key("example.com/owner")).then_some(())
            },
        )
        .await;
    }

    // The provider's own are refused, naming the field; nothing changes.
    let before = run.snapshot::<Service>().await;
    patch_spec(
        &run,
        "gw",
        json!({"service": {"annotations": {"litellm.crossplane.io/config-hash": "x"}}}),
    )
    .await;
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::READY).is_some_and(|c| c.reason == reason::INVALID_SPEC)
        })
        .await;
    assert!(
        condition(&instance, condition_type::READY)
            .unwrap()
            .message
            .as_deref()
            .unwrap()
            .contains("spec.service.annotations \"litellm.crossplane.io/config-hash\""),
        "{instance:?}"
    );
    run.reconciled_again(2).await;
    assert_eq!(run.snapshot::<Service>().await, before);
    support::authz::assert_no_denials();
}
