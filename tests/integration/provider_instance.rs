//! The `LiteLLMInstance` controller (provisioning and attach-to-existing)
//! against the real Kubernetes API server harness and the real LiteLLM proxy
//! harness. The harness runs no controllers; where pods must run, the test
//! kubelet (`tests/support/kubelet.rs`) runs them as local processes (the
//! real LiteLLM proxy and migration for a provisioned instance) and writes
//! their status; no test writes workload status by hand. Each test runs its
//! own controller, scoped to its own namespace.
//!
//! Version disclosure and a draining proxy cannot be produced by the harness
//! proxy (its config is fixed), so those are covered by the unit tests of
//! `provider::instance::probe` against a canned local responder.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use litellm_crossplane::api::instance::LiteLLMInstance;
use litellm_crossplane::provider::instance::{condition_type, reason};
use serde_json::{json, Value};
use support::harness;
use support::instance::{condition, namespace, reason_of, secret_string, start, TestDatabase};
use support::kubelet::Kubelet;
use support::provider::within;

/// The real proxy's URL, or `None` (skipped).
fn proxy_url() -> Option<String> {
    harness::litellm().map(|(url, _)| url)
}

/// An attached instance's spec; the master key Secret deliberately does not
/// exist, which shows the controller never reads it.
fn attached(endpoint: Option<&str>, extra: Value) -> Value {
    let mut workload = json!({"managed": false});
    if let Some(endpoint) = endpoint {
        workload["endpoint"] = json!(endpoint);
    }
    let mut spec = json!({
        "workload": workload,
        "masterKey": {"secretRef": {"name": "absent-master-key", "key": "LITELLM_MASTER_KEY"}},
    });
    for (field, value) in extra.as_object().unwrap() {
        if let (Some(Value::Object(into)), Value::Object(from)) = (spec.get_mut(field), value) {
            into.extend(from.clone());
        } else {
            spec[field] = value.clone();
        }
    }
    spec
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn attaches_to_the_real_proxy_and_settles_without_rewriting_status() {
    let Some(url) = proxy_url() else { return };
    let Some(run) = start("li-real").await else {
        return;
    };

    // What the harness proxy really answers: no version disclosed.
    let readiness: Value = reqwest::get(format!("{url}/health/readiness"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(readiness["status"], "healthy", "{readiness}");
    assert!(readiness.get("litellm_version").is_none(), "{readiness}");

    let spec = attached(
        Some(&format!("{url}/")),
        json!({
            "workload": {"gatewayEndpoint": format!("{url}/")},
            "image": {"tag": "main-stable"},
        }),
    );
    run.create("gw", spec).await;
    let instance = run
        .wait_for("gw", |i| i.status.as_ref().is_some_and(|s| s.ready))
        .await;
    let status = instance.status.clone().unwrap();
    assert_eq!(status.endpoint.as_deref(), Some(url.as_str()));
    assert_eq!(status.gateway_endpoint.as_deref(), Some(url.as_str()));
    assert_eq!(status.version, None, "never the image tag, never a guess");
    assert_eq!((status.replicas, status.ready_replicas), (0, 0));
    assert_eq!(status.observed_generation, instance.metadata.generation);
    let ready = condition(&instance, condition_type::READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", reason::PROXY_REACHABLE)
    );
    assert!(
        ready.message.as_deref().unwrap().contains(&url),
        "{ready:?}"
    );
    let database = condition(&instance, condition_type::DATABASE_READY).unwrap();
    assert_eq!(database.reason, reason::WORKLOAD_UNMANAGED);
    assert!(condition(&instance, condition_type::WORKLOAD_UNMANAGED).is_none());
    assert!(condition(&instance, condition_type::PODS_HEALTHY).is_none());

    // Several rounds (1 s interval) plus the watch events of its own status
    // write: an unchanged status is not written again.
    let settled = run.instances().get("gw").await.unwrap();
    run.reconciled_again(3).await;
    let later = run.instances().get("gw").await.unwrap();
    assert_eq!(
        later.metadata.resource_version,
        settled.metadata.resource_version
    );
    run.assert_only_workload_objects(&[]).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_closed_port_is_not_reachable_until_the_endpoint_is_fixed() {
    let Some(url) = proxy_url() else { return };
    let Some(run) = start("li-closed").await else {
        return;
    };
    run.create("gw", attached(Some("http://127.0.0.1:9"), json!({})))
        .await;
    let instance = run.observed("gw").await;
    let status = instance.status.as_ref().unwrap();
    assert!(!status.ready);
    assert_eq!(status.endpoint.as_deref(), Some("http://127.0.0.1:9"));
    let ready = condition(&instance, condition_type::READY).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", reason::PROXY_NOT_REACHABLE)
    );
    let message = ready.message.as_deref().unwrap();
    assert!(
        message.starts_with("the proxy at http://127.0.0.1:9 is not reachable: "),
        "{message}"
    );

    // A spec change is picked up at once and recorded as a new generation.
    let patch = json!({"spec": {"workload": {"endpoint": url}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| {
            i.status
                .as_ref()
                .is_some_and(|s| s.ready && s.observed_generation == Some(2))
        })
        .await;
    let ready = condition(&instance, condition_type::READY).unwrap();
    assert_eq!(ready.reason, reason::PROXY_REACHABLE);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn same_named_workload_objects_stay_byte_identical() {
    let Some(run) = start("li-same").await else {
        return;
    };
    let params = PostParams::default();
    let labels = json!({"app": "gw"});
    let deployment: Deployment = serde_json::from_value(foreign_deployment()).unwrap();
    let Some(_kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "gw"},
        "spec": {"selector": labels, "ports": [{"port": 4000}]},
    }))
    .unwrap();
    let config_map: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "gw"},
        "data": {"config.yaml": "general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n"},
    }))
    .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(run.client.clone(), &run.namespace);
    let services: Api<Service> = Api::namespaced(run.client.clone(), &run.namespace);
    let config_maps: Api<ConfigMap> = Api::namespaced(run.client.clone(), &run.namespace);
    deployments.create(&params, &deployment).await.unwrap();
    // A ready replica of a same-named Deployment (run by the test kubelet)
    // must not make the instance ready: readiness comes from the proxy
    // answering.
    foreign_ready(&run).await;
    services.create(&params, &service).await.unwrap();
    config_maps.create(&params, &config_map).await.unwrap();
    let before = (
        serde_json::to_value(deployments.get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(services.get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(config_maps.get("gw").await.unwrap()).unwrap(),
    );

    // No endpoint: the Service-name formula, which does not resolve here.
    let spec = attached(
        None,
        json!({"caching": {"type": "redis"}, "database": {"migration": {"enabled": true}}}),
    );
    run.create("gw", spec).await;
    let instance = run.observed("gw").await;
    let status = instance.status.as_ref().unwrap();
    assert_eq!(
        status.endpoint.as_deref(),
        Some(format!("http://gw.{}.svc:4000", run.namespace).as_str())
    );
    assert!(!status.ready);
    assert_eq!((status.replicas, status.ready_replicas), (0, 0));
    // More rounds, so a late write would show.
    run.reconciled_again(3).await;

    let after = (
        serde_json::to_value(deployments.get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(services.get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(config_maps.get("gw").await.unwrap()).unwrap(),
    );
    assert_eq!(
        after, before,
        "resourceVersion, generation, managedFields and content unchanged"
    );
    for object in [&after.0, &after.1, &after.2] {
        assert!(
            object["metadata"].get("ownerReferences").is_none(),
            "not adopted: {object}"
        );
    }
    run.assert_only_workload_objects(&["gw"]).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn config_sections_set_on_an_attached_instance_are_named_as_ignored() {
    let Some(url) = proxy_url() else { return };
    let Some(run) = start("li-sections").await else {
        return;
    };
    let extra = json!({
        "routerSettings": {"routing_strategy": "simple-shuffle"},
        "caching": {"type": "redis"},
        "sso": {"provider": "okta"},
    });
    run.create("gw", attached(Some(&url), extra)).await;
    let instance = run
        .wait_for("gw", |i| condition(i, condition_type::READY).is_some())
        .await;
    let ignored = condition(&instance, condition_type::WORKLOAD_UNMANAGED).unwrap();
    assert_eq!(ignored.status, "True");
    assert_eq!(ignored.reason, reason::CONFIG_SETTINGS_IGNORED);
    assert_eq!(
        ignored.message.as_deref(),
        Some(
            "spec.sso, spec.caching and spec.routerSettings are ignored while workload.managed \
             is false; the proxy owns its own configuration"
        )
    );

    // Dropping the sections drops the condition.
    let patch = json!({"spec": {"sso": null, "caching": null, "routerSettings": null}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    run.wait_for("gw", |i| {
        i.status
            .as_ref()
            .is_some_and(|s| s.observed_generation == Some(2))
            && condition(i, condition_type::WORKLOAD_UNMANAGED).is_none()
    })
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_configured_migration_is_reported_ignored_and_no_job_is_created() {
    let Some(url) = proxy_url() else { return };
    let Some(run) = start("li-migrate").await else {
        return;
    };
    let extra = json!({"database": {"host": "postgres", "migration": {"enabled": true}}});
    run.create("gw", attached(Some(&url), extra)).await;
    let instance = run
        .wait_for("gw", |i| i.status.as_ref().is_some_and(|s| s.ready))
        .await;
    let database = condition(&instance, condition_type::DATABASE_READY).unwrap();
    assert_eq!(database.status, "True");
    assert_eq!(database.reason, reason::WORKLOAD_UNMANAGED);
    let message = database.message.as_deref().unwrap();
    assert!(
        message.starts_with("spec.database.migration is ignored while workload.managed is false")
            && message.contains("owns its schema"),
        "{message}"
    );
    run.assert_only_workload_objects(&[]).await;
}

/// Decodes a percent-encoded URL component (the builder never emits `+`).
fn decode(component: &str) -> String {
    url::form_urlencoded::parse(format!("v={component}").as_bytes())
        .next()
        .unwrap()
        .1
        .into_owned()
}

const HOSTILE_PASSWORD: &str = "p@ss/w%rd:#?";

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_managed_instance_provisions_its_workload_and_reports_it() {
    let Some(run) = start("li-prov").await else {
        return;
    };
    run.create_object::<Secret>(json!({
        "metadata": {"name": "litellm-db"},
        "stringData": {"username": "llm", "password": HOSTILE_PASSWORD},
    }))
    .await;
    let spec = json!({
        "masterKey": {"autoGenerate": true},
        "image": {"tag": "main-v1.108.7"},
        "workload": {"replicas": 1},
        "database": {
            "host": "postgres.internal", "port": 5432, "name": "litellm",
            "credentialsSecretRef": {"name": "litellm-db"},
            "migration": {"enabled": true},
        },
        "redis": {"host": "redis.internal"},
        "caching": {"type": "redis"},
    });
    let created = run.create("gw", spec).await;
    let uid = created.metadata.uid.clone().unwrap();

    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::DATABASE_READY)
                .is_some_and(|c| c.reason == reason::MIGRATION_RUNNING)
        })
        .await;
    let status = instance.status.clone().unwrap();
    assert!(!status.ready);
    assert_eq!(
        status.endpoint.as_deref(),
        Some(format!("http://gw.{}.svc:4000", run.namespace).as_str())
    );
    assert_eq!(status.version.as_deref(), Some("main-v1.108.7"));
    assert_eq!((status.replicas, status.ready_replicas), (0, 0));
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
    );
    assert_eq!(
        reason_of(&instance, condition_type::PODS_HEALTHY),
        ("False".into(), reason::NO_PODS.into())
    );
    assert!(condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none());

    // Every object exists and is labelled; all but the generated keys are
    // owned by the instance, the keys name it instead (they outlive it).
    let job_name = "gw-migrate-";
    let jobs = run.api::<Job>().list(&ListParams::default()).await.unwrap();
    assert_eq!(jobs.items.len(), 1);
    let job = &jobs.items[0];
    assert!(job.metadata.name.as_deref().unwrap().starts_with(job_name));
    let master_key = run.wait_for_object::<Secret>("gw-master-key").await;
    let objects = [
        serde_json::to_value(&master_key).unwrap(),
        serde_json::to_value(run.wait_for_object::<Secret>("gw-salt-key").await).unwrap(),
        serde_json::to_value(run.wait_for_object::<Secret>("gw-database-url").await).unwrap(),
        serde_json::to_value(run.wait_for_object::<ConfigMap>("gw").await).unwrap(),
        serde_json::to_value(run.wait_for_object::<ServiceAccount>("gw").await).unwrap(),
        serde_json::to_value(run.wait_for_object::<Service>("gw").await).unwrap(),
        serde_json::to_value(job).unwrap(),
    ];
    // No kubelet runs here: the migration Job never completes, so the
    // Deployment is never created (it waits for its image's migration; the
    // runs on the test kubelet below show the whole sequence).
    assert!(run
        .api::<Deployment>()
        .get_opt("gw")
        .await
        .unwrap()
        .is_none());
    let message = condition(&instance, condition_type::READY)
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert!(
        message.contains("waits for migration Job gw-migrate-"),
        "{message}"
    );
    for object in &objects {
        let metadata = &object["metadata"];
        if ["gw-master-key", "gw-salt-key"].contains(&metadata["name"].as_str().unwrap()) {
            assert!(metadata.get("ownerReferences").is_none(), "{object}");
            assert_eq!(
                metadata["annotations"]["litellm.crossplane.io/generated-for"],
                format!("{}/gw", run.namespace),
                "{object}"
            );
        } else {
            assert_eq!(
                metadata["ownerReferences"][0]["uid"],
                uid.as_str(),
                "{object}"
            );
            assert_eq!(metadata["ownerReferences"][0]["controller"], true);
        }
        assert_eq!(metadata["labels"]["app.kubernetes.io/name"], "litellm");
        assert_eq!(metadata["labels"]["app.kubernetes.io/instance"], "gw");
        assert_eq!(
            metadata["labels"]["app.kubernetes.io/managed-by"],
            "provider-litellm"
        );
        // The password reaches only the URL Secret.
        if metadata["name"] != "gw-database-url" {
            assert!(!object.to_string().contains("w%rd"), "{object}");
        }
    }
    let key = secret_string(&master_key, "LITELLM_MASTER_KEY");
    assert!(key.starts_with("sk-") && key.len() > 40);
    let url_secret = run.api::<Secret>().get("gw-database-url").await.unwrap();
    let url = url::Url::parse(&secret_string(&url_secret, "DATABASE_URL")).unwrap();
    assert_eq!(decode(url.username()), "llm");
    assert_eq!(decode(url.password().unwrap()), HOSTILE_PASSWORD);
    assert_eq!(url.host_str(), Some("postgres.internal"));
    let config = run.api::<ConfigMap>().get("gw").await.unwrap();
    let config_yaml = &config.data.unwrap()["config.yaml"];
    assert!(config_yaml.contains("cache_params"), "{config_yaml}");
    assert!(
        config_yaml.contains("os.environ/REDIS_HOST"),
        "{config_yaml}"
    );
    let status_json = serde_json::to_string(&instance.status).unwrap();
    assert!(!status_json.contains(&key) && !status_json.contains("w%rd"));

    // A rotated password rebuilds the URL; the master key is never
    // regenerated.
    let url_version = run
        .api::<Secret>()
        .get("gw-database-url")
        .await
        .unwrap()
        .metadata
        .resource_version;
    run.api::<Secret>()
        .patch(
            "litellm-db",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"password": "new/pass@"}})),
        )
        .await
        .unwrap();
    for _ in 0..300 {
        let current = run.api::<Secret>().get("gw-database-url").await.unwrap();
        if current.metadata.resource_version != url_version {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let url_secret = run.api::<Secret>().get("gw-database-url").await.unwrap();
    let url = url::Url::parse(&secret_string(&url_secret, "DATABASE_URL")).unwrap();
    assert_eq!(decode(url.password().unwrap()), "new/pass@");
    let master_key_after = run.api::<Secret>().get("gw-master-key").await.unwrap();
    assert_eq!(
        master_key_after.metadata.resource_version,
        master_key.metadata.resource_version
    );
    assert_eq!(secret_string(&master_key_after, "LITELLM_MASTER_KEY"), key);

    // Settled: further rounds rewrite nothing.
    run.reconciled_again(1).await;
    let settled = run.snapshot_all().await;
    run.reconciled_again(3).await;
    assert_eq!(run.snapshot_all().await, settled);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn same_named_unowned_objects_stay_byte_identical_under_a_managed_instance() {
    let Some(run) = start("li-own").await else {
        return;
    };
    let labels = json!({"app": "gw"});
    let Some(_kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    run.create_object::<Deployment>(foreign_deployment()).await;
    // A ready replica of someone else's Deployment (run by the test
    // kubelet) is not this instance's.
    foreign_ready(&run).await;
    run.create_object::<Service>(json!({
        "metadata": {"name": "gw"},
        "spec": {"selector": labels, "ports": [{"port": 4000}]},
    }))
    .await;
    run.create_object::<ConfigMap>(json!({
        "metadata": {"name": "gw"},
        "data": {"config.yaml": "general_settings:\n  master_key: os.environ/LITELLM_MASTER_KEY\n"},
    }))
    .await;
    run.create_object::<Secret>(json!({
        "metadata": {"name": "gw-master-key"},
        "stringData": {"LITELLM_MASTER_KEY": "sk-theirs"},
    }))
    .await;
    let before = (
        serde_json::to_value(run.api::<Deployment>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Service>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<ConfigMap>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Secret>().get("gw-master-key").await.unwrap()).unwrap(),
    );

    run.create("gw", json!({"masterKey": {"autoGenerate": true}}))
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
    for named in [
        "Secret gw-master-key",
        "ConfigMap gw",
        "Service gw",
        "Deployment gw",
    ] {
        assert!(message.contains(named), "{message}");
    }
    assert!(message.contains("left untouched"), "{message}");
    let status = instance.status.as_ref().unwrap();
    assert!(!status.ready);
    assert_eq!((status.replicas, status.ready_replicas), (0, 0));
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
    );
    // More rounds, so a late write would show.
    run.reconciled_again(3).await;

    let after = (
        serde_json::to_value(run.api::<Deployment>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Service>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<ConfigMap>().get("gw").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Secret>().get("gw-master-key").await.unwrap()).unwrap(),
    );
    assert_eq!(
        after, before,
        "resourceVersion, generation, managedFields and content unchanged"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn switching_to_unmanaged_leaves_the_provisioned_objects_byte_identical() {
    let Some(run) = start("li-switch").await else {
        return;
    };
    run.create("gw", json!({"masterKey": {"autoGenerate": true}}))
        .await;
    run.wait_for_object::<Deployment>("gw").await;
    let instance = run.observed("gw").await;
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
    );
    run.reconciled_again(1).await;
    let before = run.snapshot_all().await;

    let patch = json!({"spec": {"workload": {"managed": false}, "masterKey": {
        "secretRef": {"name": "gw-master-key", "key": "LITELLM_MASTER_KEY"},
    }}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| {
            i.status
                .as_ref()
                .is_some_and(|s| s.observed_generation == Some(2))
        })
        .await;
    assert_eq!(
        reason_of(&instance, condition_type::READY).1,
        reason::PROXY_NOT_REACHABLE
    );
    assert!(condition(&instance, condition_type::PODS_HEALTHY).is_none());
    // A change to an owned Deployment wakes the controller (it owns it), and
    // still nothing is written.
    run.api::<Deployment>()
        .patch(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": {"example.com/touched": "yes"}}})),
        )
        .await
        .unwrap();
    let mut expected = before.clone();
    expected[0] = run.snapshot::<Deployment>().await;
    run.reconciled_again(3).await;
    assert_eq!(run.snapshot_all().await, expected);
    let instance = run.instances().get("gw").await.unwrap();
    assert_eq!(instance.status.unwrap().replicas, 0);
}

/// Someone else's Deployment named `gw` (a Helm release, say), whose pod
/// the test kubelet runs: a small web server with a readiness probe.
fn foreign_deployment() -> Value {
    let labels = json!({"app": "gw"});
    json!({
        "metadata": {"name": "gw", "labels": {"app.kubernetes.io/managed-by": "Helm"}},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{
                    "name": "web",
                    "image": "python:3.11-slim",
                    "command": ["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1"],
                    "ports": [{"containerPort": 8080}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": 8080}},
                }]},
            },
        },
    })
}

/// Waits until the test kubelet reports the foreign Deployment's replica
/// ready, and its status has settled.
async fn foreign_ready(run: &support::instance::Running) {
    let ready = within(
        "the foreign Deployment ready",
        Duration::from_secs(60),
        || async {
            let d = run.api::<Deployment>().get("gw").await.ok()?;
            (d.status.as_ref()?.ready_replicas == Some(1)).then_some(d)
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = run.api::<Deployment>().get("gw").await.unwrap();
    assert_eq!(
        later.metadata.resource_version, ready.metadata.resource_version,
        "the kubelet settles"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_api_server_enforces_the_attach_rules() {
    let Some((client, namespace)) = namespace("li-cel").await else {
        return;
    };
    let api: Api<DynamicObject> = Api::namespaced_with(
        client,
        &namespace,
        &kube::core::ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk(
                "litellm.m.crossplane.io",
                "v1alpha1",
                "LiteLLMInstance",
            ),
            "litellminstances",
        ),
    );
    let secret_ref = json!({"secretRef": {"name": "k", "key": "LITELLM_MASTER_KEY"}});
    let cases = [
        (
            json!({"workload": {"endpoint": "http://proxy:4000"}, "masterKey": secret_ref}),
            "workload.endpoint is only allowed when workload.managed is false",
        ),
        (
            json!({"workload": {"managed": false}, "masterKey": {"autoGenerate": true}}),
            "masterKey.secretRef is required when workload.managed is false",
        ),
        (
            json!({"workload": {"managed": false, "endpoint": "ftp://x"}, "masterKey": secret_ref}),
            "spec.workload.endpoint in body should match '^https?://",
        ),
    ];
    for (index, (spec, want)) in cases.into_iter().enumerate() {
        let object = json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": format!("bad-{index}")},
            "spec": spec,
        });
        let object: DynamicObject = serde_json::from_value(object).unwrap();
        match api.create(&PostParams::default(), &object).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{spec}: {status:?}");
                assert!(status.message.contains(want), "{spec}: {}", status.message);
            }
            Err(other) => panic!("{spec}: unexpected error {other}"),
            Ok(_) => panic!("{spec} was not rejected"),
        }
    }
    // The valid shape is accepted, so the rejections above are the rules'.
    let valid = json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "good"},
        "spec": {"workload": {"managed": false, "endpoint": "https://proxy:4000"}, "masterKey": secret_ref},
    });
    let valid: DynamicObject = serde_json::from_value(valid).unwrap();
    api.create(&PostParams::default(), &valid)
        .await
        .expect("valid instance accepted");
}

/// A one-certificate HTTPS server answering the health probes on a
/// background thread, with the PEM of the CA that signed its certificate.
fn tls_proxy() -> (String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca_params.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let config = Arc::new(config);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut stream = rustls::StreamOwned::new(connection, tcp);
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let body = if request.starts_with(b"GET /health/liveliness ") {
                    r#""I'm alive!""#
                } else {
                    r#"{"status":"healthy","db":"connected","litellm_version":"1.108.7"}"#
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes());
                stream.conn.send_close_notify();
                let _ = stream.flush();
            });
        }
    });
    (url, ca_pem)
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_private_ca_from_the_ca_secret_is_trusted() {
    let Some(run) = start("li-tls").await else {
        return;
    };
    let (url, ca_pem) = tls_proxy();
    let tls = json!({"tls": {"caSecretRef": {"name": "proxy-ca", "key": "ca.crt"}}});
    run.create("gw", attached(Some(&url), tls)).await;

    // Before the Secret exists the cause is named, not a TLS failure.
    let instance = run.observed("gw").await;
    let ready = condition(&instance, condition_type::READY).unwrap();
    assert_eq!(ready.reason, reason::PROXY_NOT_REACHABLE);
    let message = ready.message.as_deref().unwrap();
    assert!(
        message.contains(&format!("CA Secret {}/proxy-ca", run.namespace)),
        "{message}"
    );

    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "proxy-ca"},
        "stringData": {"ca.crt": ca_pem},
    }))
    .unwrap();
    let secrets: Api<Secret> = Api::namespaced(run.client.clone(), &run.namespace);
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let before = secrets.get("proxy-ca").await.unwrap();
    let instance = run
        .wait_for("gw", |i| i.status.as_ref().is_some_and(|s| s.ready))
        .await;
    assert_eq!(instance.status.unwrap().version.as_deref(), Some("1.108.7"));
    // Read, never written.
    let after = secrets.get("proxy-ca").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        before.metadata.resource_version
    );
}

// ---------------------------------------------------------------------------
// Provisioned proxies running on the test kubelet (tests/support/kubelet.rs):
// the real LiteLLM proxy and migration, started from what the provider
// renders, against a database of their own on the harness's PostgreSQL.

/// Characters a URL builder must percent-encode (the harness's PostgreSQL
/// trusts loopback, so it checks the user and database the URL names, not
/// the password).
pub(crate) const DB_PASSWORD: &str = "p@ss/w%rd:x";

/// Generous: a LiteLLM proxy start is CPU bound (~30 s alone), and CI runs
/// the suites in parallel on 2 cores.
pub(crate) const BOOT: Duration = Duration::from_secs(420);

pub(crate) async fn ready_instance(
    run: &support::instance::Running,
    name: &str,
) -> LiteLLMInstance {
    within("the instance Ready", BOOT, || async {
        let instance = run.instances().get(name).await.ok()?;
        let status = instance.status.as_ref()?;
        (status.ready && status.observed_generation == instance.metadata.generation)
            .then_some(instance)
    })
    .await
}

fn job_complete(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Complete" && c.status == "True")
        })
}

fn deployment_image(deployment: &Deployment) -> String {
    deployment.spec.template.spec.as_ref().unwrap().containers[0]
        .image
        .clone()
        .unwrap()
}

/// The migration Job `name` runs to completion while no Deployment of
/// `deployments` has `image`: the pods wait for their image's migration.
pub(crate) async fn migration_before_pods(
    run: &support::instance::Running,
    job: &str,
    deployments: &[&str],
    image: &str,
) -> Job {
    within("the migration Job complete", BOOT, || async {
        for name in deployments {
            if let Some(deployment) = run.api::<Deployment>().get_opt(name).await.unwrap() {
                let rendered = deployment_image(&deployment);
                let job_done = run
                    .api::<Job>()
                    .get_opt(job)
                    .await
                    .unwrap()
                    .is_some_and(|j| job_complete(&j));
                assert!(
                    job_done || rendered != image,
                    "Deployment {name} runs {image} before migration Job {job} completed"
                );
            }
        }
        let found = run.api::<Job>().get_opt(job).await.unwrap()?;
        job_complete(&found).then_some(found)
    })
    .await
}

/// `(status, body)` of a request to the proxy with `bearer`.
pub(crate) async fn call(
    method: reqwest::Method,
    url: &str,
    bearer: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .request(method, url)
        .bearer_auth(bearer)
        .timeout(Duration::from_secs(60));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the proxy answers");
    let status = response.status().as_u16();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

/// Creates a team and a key for it through `admin` (the admin API), and
/// returns the key.
async fn team_and_key(admin: &str, master_key: &str, team: &str) -> String {
    let (status, body) = call(
        reqwest::Method::POST,
        &format!("{admin}/team/new"),
        master_key,
        Some(json!({"team_id": team, "team_alias": team})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(
        reqwest::Method::POST,
        &format!("{admin}/key/generate"),
        master_key,
        Some(json!({"team_id": team, "key_alias": format!("{team}-key")})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let key = body["key"].as_str().expect("a key").to_string();
    assert!(key.starts_with("sk-"), "{body}");
    key
}

/// The key authenticates at `url` (as itself), and a made-up one does not.
async fn key_authenticates(url: &str, key: &str, team: &str) {
    let (status, body) = call(
        reqwest::Method::GET,
        &format!("{url}/key/info?key={key}"),
        key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["info"]["team_id"], team, "{body}");
    let (status, _) = call(
        reqwest::Method::GET,
        &format!("{url}/v1/models"),
        "sk-not-a-key-of-this-proxy",
        None,
    )
    .await;
    assert_eq!(status, 401);
}

pub(crate) async fn generated_master_key(
    run: &support::instance::Running,
    instance: &str,
) -> String {
    let secret = run
        .api::<Secret>()
        .get(&format!("{instance}-master-key"))
        .await
        .unwrap();
    secret_string(&secret, "LITELLM_MASTER_KEY")
}

/// The pods the kubelet runs for `component`, and whether all are ready
/// and of one pod template.
pub(crate) fn settled_pods(kubelet: &Kubelet, component: &str) -> Option<Vec<String>> {
    let pods: Vec<_> = kubelet
        .pods()
        .into_iter()
        .filter(|(_, labels, _)| {
            labels
                .get("app.kubernetes.io/component")
                .map(String::as_str)
                == Some(component)
        })
        .collect();
    let hashes: std::collections::BTreeSet<_> = pods
        .iter()
        .map(|(_, labels, _)| labels.get("pod-template-hash").cloned())
        .collect();
    (!pods.is_empty() && hashes.len() == 1 && pods.iter().all(|(_, _, ready)| *ready))
        .then(|| pods.into_iter().map(|(name, _, _)| name).collect())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_provisioned_proxy_migrates_boots_serves_and_rolls_on_the_test_kubelet() {
    let Some(run) = start("li-run").await else {
        return;
    };
    let Some(kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    let Some(db) = TestDatabase::create("li_run", DB_PASSWORD) else {
        return;
    };
    run.create_object::<Secret>(json!({
        "metadata": {"name": "litellm-db"},
        "stringData": {"username": db.user, "password": DB_PASSWORD},
    }))
    .await;
    let spec = json!({
        "masterKey": {"autoGenerate": true},
        "image": {"tag": "main-v1.108.7"},
        "database": {
            "host": db.host, "port": db.port, "name": db.name,
            "credentialsSecretRef": {"name": "litellm-db"},
            "migration": {"enabled": true},
            "schema": "llm", "sslMode": "disable",
        },
        "routerSettings": {"routing_strategy": "simple-shuffle"},
    });
    run.create("gw", spec).await;

    // The migration Job runs first, on the empty database, and the
    // Deployment waits for it.
    let job_name = within("the migration Job", Duration::from_secs(30), || async {
        let jobs = run.api::<Job>().list(&ListParams::default()).await.ok()?;
        jobs.items.first().and_then(|j| j.metadata.name.clone())
    })
    .await;
    assert!(run
        .api::<Deployment>()
        .get_opt("gw")
        .await
        .unwrap()
        .is_none());
    let waiting = run.observed("gw").await;
    let ready = condition(&waiting, condition_type::READY).unwrap();
    assert_eq!(ready.reason, reason::DEPLOYMENT_NOT_READY);
    let job = migration_before_pods(
        &run,
        &job_name,
        &["gw"],
        "ghcr.io/berriai/litellm:main-v1.108.7",
    )
    .await;
    let applied: i64 = db
        .query("SELECT count(*) FROM llm.\"_prisma_migrations\"")
        .parse()
        .unwrap();
    assert!(applied > 200, "{applied} migrations recorded");
    assert_eq!(
        db.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'llm' AND table_name = 'LiteLLM_TeamTable'"),
        "1",
        "the schema is the instance's"
    );

    // The proxy boots with the rendered config and becomes Ready through
    // its own health endpoints (the kubelet's readiness probe).
    let instance = ready_instance(&run, "gw").await;
    let status = instance.status.clone().unwrap();
    let endpoint = status.endpoint.clone().unwrap();
    assert_eq!(endpoint, format!("http://gw.{}.svc:4000", run.namespace));
    assert_eq!((status.replicas, status.ready_replicas), (1, 1));
    assert_eq!(
        reason_of(&instance, condition_type::PODS_HEALTHY),
        ("True".into(), reason::ALL_PODS_HEALTHY.into())
    );
    assert_eq!(
        reason_of(&instance, condition_type::DATABASE_READY),
        ("True".into(), reason::MIGRATION_COMPLETE.into())
    );
    let deployment = run.api::<Deployment>().get("gw").await.unwrap();
    assert!(
        deployment.metadata.creation_timestamp.as_ref().unwrap().0
            >= job
                .status
                .as_ref()
                .unwrap()
                .completion_time
                .as_ref()
                .unwrap()
                .0,
        "the Deployment was created after its migration completed"
    );
    let url = kubelet.url(&endpoint).await;
    let (code, readiness) = call(
        reqwest::Method::GET,
        &format!("{url}/health/readiness"),
        "",
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(readiness["db"], "connected", "{readiness}");

    // A team and a key through it; the key authenticates; the rows are in
    // the instance's database.
    let master_key = generated_master_key(&run, "gw").await;
    let team = format!("run-{}", support::k8s::unique_suffix());
    let key = team_and_key(&url, &master_key, &team).await;
    key_authenticates(&url, &key, &team).await;
    assert_eq!(
        db.query(&format!(
            "SELECT count(*) FROM llm.\"LiteLLM_TeamTable\" WHERE team_id = '{team}'"
        )),
        "1"
    );
    let status_json = serde_json::to_string(&instance.status).unwrap();
    assert!(!status_json.contains(&master_key) && !status_json.contains(DB_PASSWORD));

    // A router setting rolls the pods; the new pod runs with it.
    let before = settled_pods(&kubelet, "proxy").expect("one ready pod");
    run.instances()
        .patch(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"routerSettings": {"routing_strategy": "least-busy"}}})),
        )
        .await
        .unwrap();
    let after = within("the pods rolled", BOOT, || async {
        settled_pods(&kubelet, "proxy").filter(|pods| *pods != before)
    })
    .await;
    assert_eq!(after.len(), 1);
    let (code, settings) = call(
        reqwest::Method::GET,
        &format!("{url}/router/settings"),
        &master_key,
        None,
    )
    .await;
    assert_eq!(code, 200, "{settings}");
    let strategy = settings["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field_name"] == "routing_strategy")
        .map(|f| f["field_value"].clone());
    assert_eq!(strategy, Some(json!("least-busy")), "{settings}");
    key_authenticates(&url, &key, &team).await;

    // A new image tag: a new migration Job runs (on a current database it
    // applies nothing) before the Deployment takes the image.
    run.instances()
        .patch(
            "gw",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"image": {"tag": "main-v1.108.7-stable"}}})),
        )
        .await
        .unwrap();
    let second = within(
        "a second migration Job",
        Duration::from_secs(60),
        || async {
            let jobs = run.api::<Job>().list(&ListParams::default()).await.ok()?;
            jobs.items
                .into_iter()
                .filter_map(|j| j.metadata.name)
                .find(|n| *n != job_name)
        },
    )
    .await;
    let second_job = migration_before_pods(
        &run,
        &second,
        &["gw"],
        "ghcr.io/berriai/litellm:main-v1.108.7-stable",
    )
    .await;
    // No migration is in force twice. (Under load one run saw a 221st row
    // after the proxy had booted: LiteLLM's start-up may mark a migration
    // rolled back, which `migrate deploy`, and so the Job, applies again;
    // what matters is that none is recorded as applied twice.)
    let twice = db.query(
        "SELECT coalesce(string_agg(migration_name, ','), '') FROM (SELECT migration_name \
         FROM llm.\"_prisma_migrations\" WHERE finished_at IS NOT NULL AND rolled_back_at IS \
         NULL GROUP BY migration_name HAVING count(*) > 1) AS t",
    );
    let rows = db.query(
        "SELECT count(*) || ' rows, ' || count(rolled_back_at) || ' rolled back' FROM \
         llm.\"_prisma_migrations\"",
    );
    assert_eq!(
        twice.trim(),
        "",
        "a current database gets no migration twice ({rows})"
    );
    let rolled = within("the new image's pods", BOOT, || async {
        let instance = run.instances().get("gw").await.ok()?;
        let status = instance.status.as_ref()?;
        let pods = settled_pods(&kubelet, "proxy").filter(|pods| *pods != after)?;
        (status.ready && status.version.as_deref() == Some("main-v1.108.7-stable")).then_some(pods)
    })
    .await;
    let pod = run.api::<Pod>().get(&rolled[0]).await.unwrap();
    assert!(
        pod.metadata.creation_timestamp.as_ref().unwrap().0
            >= second_job
                .status
                .as_ref()
                .unwrap()
                .completion_time
                .as_ref()
                .unwrap()
                .0,
        "the new image's pod started after its migration completed"
    );
    assert_eq!(
        pod.spec.unwrap().containers[0].image.as_deref(),
        Some("ghcr.io/berriai/litellm:main-v1.108.7-stable")
    );
    key_authenticates(&url, &key, &team).await;
    drop(kubelet);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_split_topology_runs_gateway_and_backend_on_the_test_kubelet() {
    let Some(run) = start("li-split").await else {
        return;
    };
    let Some(kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    let Some(db) = TestDatabase::create("li_split", DB_PASSWORD) else {
        return;
    };
    run.create_object::<Secret>(json!({
        "metadata": {"name": "litellm-db"},
        "stringData": {"username": db.user, "password": DB_PASSWORD},
    }))
    .await;
    let spec = json!({
        "masterKey": {"autoGenerate": true},
        "image": {"tag": "main-v1.108.7"},
        "database": {
            "host": db.host, "port": db.port, "name": db.name,
            "credentialsSecretRef": {"name": "litellm-db"},
            "migration": {"enabled": true},
        },
        "workload": {
            "topology": "split",
            "resources": {"requests": {"memory": "1Gi"}},
            "gateway": {"replicas": 1, "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}},
            "backend": {"replicas": 1},
            // The dashboard is the same image on :3000; not started here to
            // spare the CPU of a third proxy (its objects are checked).
            "ui": {"replicas": 0},
        },
    });
    run.create("ai", spec).await;
    let job = within("the migration Job", Duration::from_secs(30), || async {
        let jobs = run.api::<Job>().list(&ListParams::default()).await.ok()?;
        jobs.items.first().and_then(|j| j.metadata.name.clone())
    })
    .await;
    migration_before_pods(
        &run,
        &job,
        &["ai-gateway", "ai-backend", "ai-ui"],
        "ghcr.io/berriai/litellm:main-v1.108.7",
    )
    .await;
    let instance = ready_instance(&run, "ai").await;
    let status = instance.status.clone().unwrap();
    let ns = &run.namespace;
    assert_eq!(
        status.endpoint.as_deref(),
        Some(format!("http://ai-backend.{ns}.svc:4001").as_str())
    );
    assert_eq!(
        status.gateway_endpoint.as_deref(),
        Some(format!("http://ai-gateway.{ns}.svc:4000").as_str())
    );
    assert_eq!((status.replicas, status.ready_replicas), (2, 2));

    // The chart's names, roles and ports; replicas and resources per role.
    let mut deployments = run.names::<Deployment>().await;
    deployments.sort();
    assert_eq!(deployments, ["ai-backend", "ai-gateway", "ai-ui"]);
    let mut services = run.names::<Service>().await;
    services.sort();
    assert_eq!(services, ["ai-backend", "ai-gateway", "ai-ui"]);
    for (name, role, port, replicas, memory) in [
        ("ai-gateway", "gateway", 4000, 1, "2Gi"),
        ("ai-backend", "backend", 4001, 1, "1Gi"),
        ("ai-ui", "ui", 3000, 0, "1Gi"),
    ] {
        let deployment = run.api::<Deployment>().get(name).await.unwrap();
        let spec = &deployment.spec;
        assert_eq!(spec.replicas, Some(replicas), "{name}");
        assert_eq!(
            spec.selector.match_labels.as_ref().unwrap()["app.kubernetes.io/component"],
            role
        );
        let container = &spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(
            container.ports.as_ref().unwrap()[0].container_port,
            port,
            "{name}"
        );
        assert_eq!(
            container
                .resources
                .as_ref()
                .unwrap()
                .requests
                .as_ref()
                .unwrap()["memory"]
                .0,
            memory,
            "{name}"
        );
        let service = run.api::<Service>().get(name).await.unwrap();
        let service_spec = service.spec.unwrap();
        assert_eq!(service_spec.ports.unwrap()[0].port, port, "{name}");
        assert_eq!(
            service_spec.selector.unwrap()["app.kubernetes.io/component"],
            role
        );
    }

    // The backend creates a team and a key; the gateway authenticates it.
    let master_key = generated_master_key(&run, "ai").await;
    let backend = kubelet.url(status.endpoint.as_deref().unwrap()).await;
    let gateway = kubelet
        .url(status.gateway_endpoint.as_deref().unwrap())
        .await;
    let team = format!("split-{}", support::k8s::unique_suffix());
    let key = team_and_key(&backend, &master_key, &team).await;
    key_authenticates(&gateway, &key, &team).await;
    let (code, models) = call(
        reqwest::Method::GET,
        &format!("{gateway}/v1/models"),
        &key,
        None,
    )
    .await;
    assert_eq!(code, 200, "{models}");
    drop(kubelet);
}

/// `crossplane.io/paused` on an instance, as on every managed resource:
/// the reconciliation that reports it paused (`Synced=False`,
/// `ReconcilePaused`) has written nothing to its workload, and a deletion
/// waits through the reconciliations that follow; lifted, the instance
/// provisions and reports `ReconcileSuccess`, or is deleted.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_paused_instance_writes_nothing_until_the_pause_is_lifted() {
    let Some(run) = start("li-paused").await else {
        return;
    };
    let instance: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "gw", "annotations": {"crossplane.io/paused": "true"}},
        "spec": {"masterKey": {"autoGenerate": true}},
    }))
    .unwrap();
    run.instances()
        .create(&PostParams::default(), &instance)
        .await
        .unwrap();
    let paused = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ReconcilePaused")
        })
        .await;
    assert_eq!(condition(&paused, "Synced").unwrap().status, "False");
    assert!(
        paused.metadata.finalizers.is_none(),
        "not even its finalizer"
    );
    run.assert_only_workload_objects(&[]).await;
    assert!(run.names::<ServiceAccount>().await.is_empty());

    let lift = json!({"metadata": {"annotations": {"crossplane.io/paused": null}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&lift))
        .await
        .unwrap();
    run.wait_for_object::<Deployment>("gw").await;
    let synced = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ReconcileSuccess")
        })
        .await;
    assert_eq!(condition(&synced, "Synced").unwrap().status, "True");

    // Paused again, then deleted: the reconciliations that follow hold the
    // deletion, the workload in place.
    let pause = json!({"metadata": {"annotations": {"crossplane.io/paused": "true"}}});
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&pause))
        .await
        .unwrap();
    run.wait_for("gw", |i| {
        condition(i, "Synced").is_some_and(|c| c.reason == "ReconcilePaused")
    })
    .await;
    run.instances()
        .delete("gw", &Default::default())
        .await
        .unwrap();
    run.reconciled_again(2).await;
    let held = run.instances().get("gw").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(held.metadata.finalizers.is_some_and(|f| !f.is_empty()));
    assert!(run
        .api::<Deployment>()
        .get_opt("gw")
        .await
        .unwrap()
        .is_some());
    run.instances()
        .patch("gw", &PatchParams::default(), &Patch::Merge(&lift))
        .await
        .unwrap();
    for _ in 0..300 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the unpaused instance was not deleted");
}

/// Labels (or, with `None`, unlabels) the test's namespace for provisioning.
async fn label_for_provisioning(run: &support::instance::Running, value: Option<&str>) {
    use k8s_openapi::api::core::v1::Namespace;
    use litellm_crossplane::provider::instance::admission::PROVISION_LABEL;
    let patch = json!({"metadata": {"labels": {PROVISION_LABEL: value}}});
    Api::<Namespace>::all(run.client.clone())
        .patch(
            &run.namespace,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
}

/// A tenant may create a `LiteLLMInstance` in its namespace, but not run
/// pods: a provisioned instance in a namespace its admins did not label
/// writes nothing (not even its generated keys) and says why; once
/// labelled it provisions; when the label goes, nothing is deleted or
/// rewritten (the running proxy and its keys stay), and its deletion still
/// removes what it owns. All through the authorizing proxy with the
/// package's permissions.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_provisioned_instance_needs_a_namespace_labelled_for_it() {
    let Some(run) = start("li-admit").await else {
        return;
    };
    label_for_provisioning(&run, None).await;
    run.create("gw", json!({"masterKey": {"autoGenerate": true}}))
        .await;
    let refused = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ProvisioningNotAllowed")
        })
        .await;
    assert_eq!(
        reason_of(&refused, "Ready"),
        ("False".into(), "ProvisioningNotAllowed".into())
    );
    let message = condition(&refused, "Ready")
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert!(!refused.status.as_ref().unwrap().ready);
    assert!(
        message.contains(&format!(
            "namespace {} is not labelled litellm.crossplane.io/provision=true",
            run.namespace
        )),
        "{message}"
    );
    assert_eq!(condition(&refused, "Synced").unwrap().status, "False");
    run.reconciled_again(2).await;
    run.assert_only_workload_objects(&[]).await;
    assert!(run.names::<ServiceAccount>().await.is_empty());

    label_for_provisioning(&run, Some("true")).await;
    run.wait_for_object::<Deployment>("gw").await;
    let provisioned = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ReconcileSuccess")
        })
        .await;
    let keys = provisioned
        .status
        .as_ref()
        .and_then(|s| s.generated_keys.clone())
        .expect("the generated keys are recorded");

    // The label goes (a careless admin): nothing is written or deleted.
    let before = run.snapshot_all().await;
    label_for_provisioning(&run, None).await;
    let refused = run
        .wait_for("gw", |i| {
            condition(i, "Synced").is_some_and(|c| c.reason == "ProvisioningNotAllowed")
        })
        .await;
    assert_eq!(
        refused.status.as_ref().unwrap().generated_keys,
        Some(keys),
        "the key records stay"
    );
    run.reconciled_again(2).await;
    assert_eq!(run.snapshot_all().await, before, "the workload as it was");

    // Deleted while refused: what it owns goes, its generated keys stay.
    run.instances()
        .delete("gw", &Default::default())
        .await
        .unwrap();
    for _ in 0..300 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt("gw").await.unwrap().is_none());
    assert!(run.names::<Deployment>().await.is_empty());
    assert_eq!(run.names::<Secret>().await.len(), 2, "master and salt keys");
    assert!(run.authz.denied().is_empty(), "{:?}", run.authz.denied());
}
