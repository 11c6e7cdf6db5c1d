//! What Crossplane users chart, alert on and read in `kubectl describe`,
//! against the real parts: the events crossplane-runtime's managed
//! reconciler records (its reasons, on the resource they are about), the
//! managed-resource series of crossplane-runtime, controller-runtime's
//! controller series, and the `grpc_server_*` series of function-sdk-go
//! served by the function after real gRPC calls over a socket.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use function_sdk_rust::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use k8s_openapi::api::core::v1::{Event as CoreEvent, Secret as KubeSecret};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::function::render::{request, RenderFiles};
use litellm_crossplane::function::server::{serve_on, V1BETA1_SERVICE_NAME};
use litellm_crossplane::litellm::TeamRequest;
use litellm_crossplane::provider::instance::{self, InstanceOptions};
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::reconciler::PAUSED_NOTE;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::telemetry::metrics::{gvk, managed_controller, Metrics};
use prometheus_client::registry::Registry;
use serde_json::json;
use support::k8s;
use support::provider::{
    condition, context, create_instance, eventually, is, manifest, wait_for, wait_gone, world,
    World,
};
use tonic::transport::Channel;

/// A namespace with its own instance on the real proxy, whose entity and
/// instance controllers count into a registry the test reads (the world's
/// controllers keep theirs to themselves).
struct Metered {
    namespace: String,
    registry: Registry,
    controllers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Metered {
    fn drop(&mut self) {
        for controller in &self.controllers {
            controller.abort();
        }
    }
}

impl Metered {
    async fn start(world: &World, prefix: &str) -> Self {
        let namespace = k8s::namespace(&world.kube, prefix).await;
        create_instance(&world.kube, &namespace, &world.url, &world.master_key, true).await;
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let ctx = Arc::new(context(&world.provider_client(), metrics.clone()));
        let options = InstanceOptions {
            namespace: Some(namespace.clone()),
            ready_interval: Duration::from_secs(1),
            not_ready_interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(2),
            ..InstanceOptions::default()
        };
        let controllers = vec![
            tokio::spawn(controllers::run(ctx, Some(namespace.clone()))),
            tokio::spawn(instance::controller_with_metrics(
                world.provider_client(),
                options,
                metrics,
            )),
        ];
        Self {
            namespace,
            registry,
            controllers,
        }
    }

    fn api<K: ManagedKind>(&self, world: &World) -> Api<K> {
        Api::namespaced(world.kube.clone(), &self.namespace)
    }

    fn text(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).unwrap();
        text
    }

    /// The value of the sample `series` (name and labels, exactly as
    /// encoded), if present.
    fn value(&self, series: &str) -> Option<f64> {
        sample(&self.text(), series)
    }

    /// Waits until the sample `series` satisfies `check`.
    async fn wait_value(&self, series: &str, check: impl Fn(f64) -> bool) -> f64 {
        eventually(&format!("{series} as expected"), || async {
            self.value(series).filter(|v| check(*v))
        })
        .await
    }
}

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|value| value.parse().expect("a number"))
}

/// `name{gvk="<K's gvk>"}`.
fn by_gvk<K: ManagedKind>(name: &str) -> String {
    format!("{name}{{gvk=\"{}\"}}", gvk::<K>())
}

/// `name{controller="managed/<kind>.<group>"}`.
fn by_controller<K: ManagedKind>(name: &str) -> String {
    format!("{name}{{controller=\"{}\"}}", managed_controller::<K>())
}

fn result_total<K: ManagedKind>(result: &str) -> String {
    format!(
        "controller_runtime_reconcile_total{{controller=\"{}\",result=\"{result}\"}}",
        managed_controller::<K>()
    )
}

/// The events about the object with `uid`: `(type, reason, note)`.
async fn events_about(world: &World, namespace: &str, uid: &str) -> Vec<(String, String, String)> {
    support::provider::events(&world.kube, namespace)
        .await
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(uid))
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default(),
            )
        })
        .collect()
}

/// Waits for an event of `type_` and `reason` about `object`; returns its
/// note.
async fn wait_event<K: ManagedKind>(
    world: &World,
    object: &K,
    type_: &str,
    reason: &str,
) -> String {
    let namespace = object.namespace().unwrap();
    let uid = object.uid().unwrap();
    eventually(
        &format!("a {type_} {reason} event on {}", object.name_any()),
        || async {
            events_about(world, &namespace, &uid)
                .await
                .into_iter()
                .find(|(t, r, _)| t == type_ && r == reason)
                .map(|(_, _, note)| note)
        },
    )
    .await
}

/// The reasons `kubectl describe` lists for `object`: it searches the
/// core/v1 Events by the involved object, as here.
async fn described_reasons<K: ManagedKind>(world: &World, object: &K) -> Vec<String> {
    let events: Api<CoreEvent> = Api::namespaced(world.kube.clone(), &object.namespace().unwrap());
    let selector = format!(
        "involvedObject.name={},involvedObject.namespace={},involvedObject.kind={},involvedObject.uid={}",
        object.name_any(),
        object.namespace().unwrap(),
        K::kind(&()),
        object.uid().unwrap()
    );
    events
        .list(&ListParams::default().fields(&selector))
        .await
        .expect("events by involved object")
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect()
}

async fn patch<K: ManagedKind>(api: &Api<K>, name: &str, patch: serde_json::Value) {
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patched");
}

/// One team and one key through a refused create, a missing reference,
/// creation, drift, pause and deletion; a connection Secret that cannot be
/// written; and a team that is only observed and does not exist. Each step
/// records crossplane-runtime's event on the object it is about, and the
/// series follow.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn events_and_series_follow_the_managed_resource_lifecycle() {
    let Some(world) = world("obs-life").await else {
        return;
    };
    let metered = Metered::start(&world, "obs-life-m").await;
    let teams: Api<LiteLLMTeam> = metered.api(&world);
    let keys: Api<LiteLLMVirtualKey> = metered.api(&world);
    let suffix = k8s::unique_suffix();

    // Every controller's series start at zero, as controller-runtime's do.
    for result in ["success", "error", "requeue", "requeue_after"] {
        metered
            .wait_value(&result_total::<LiteLLMModel>(result), |v| v == 0.0)
            .await;
    }
    let model_queue = format!(
        "workqueue_depth{{controller=\"{0}\",name=\"{0}\",priority=\"\"}}",
        managed_controller::<LiteLLMModel>()
    );
    metered.wait_value(&model_queue, |v| v == 0.0).await;
    metered
        .wait_value(
            &by_gvk::<LiteLLMModel>("crossplane_managed_resource_exists"),
            |v| v == 0.0,
        )
        .await;

    // A create LiteLLM refuses: 1.108.7 answers 400 for a budget period
    // of more than one month, which the CRD admits.
    let team = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "web",
        json!({}),
        json!({"forProvider": {"teamAlias": format!("Obs {suffix}"), "budgetDuration": "12mo"}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let web = teams.get("web").await.unwrap();
    let refused = wait_event(&world, &web, "Warning", "CannotCreateExternalResource").await;
    assert!(
        refused.contains("POST /team/new") && refused.contains("12mo"),
        "{refused}"
    );
    let failed = wait_for(&teams, "web", "Synced=False", |t| is(t, "Synced", "False")).await;
    // The condition keeps crossplane-runtime's reason; only events name
    // the step.
    assert_eq!(
        condition(&failed, "Synced").unwrap().reason,
        "ReconcileError"
    );
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_exists"),
            |v| v == 1.0,
        )
        .await;
    assert_eq!(
        metered.value(&by_gvk::<LiteLLMTeam>("crossplane_managed_resource_ready")),
        Some(0.0)
    );
    assert_eq!(
        metered.value(&by_gvk::<LiteLLMTeam>("crossplane_managed_resource_synced")),
        Some(0.0)
    );
    metered
        .wait_value(&result_total::<LiteLLMTeam>("error"), |v| v >= 1.0)
        .await;
    metered
        .wait_value(
            &by_controller::<LiteLLMTeam>("controller_runtime_reconcile_errors_total"),
            |v| v >= 1.0,
        )
        .await;
    assert_eq!(
        metered.value(&by_gvk::<LiteLLMTeam>(
            "crossplane_managed_resource_first_time_to_reconcile_seconds_count"
        )),
        Some(1.0),
        "one team, observed once"
    );
    // Like crossplane-runtime's histograms, a series appears with its
    // first observation.
    assert_eq!(
        metered.value(&by_gvk::<LiteLLMTeam>(
            "crossplane_managed_resource_first_time_to_readiness_seconds_count"
        )),
        None,
        "not ready yet"
    );

    // A reference to a team that does not exist.
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "ci",
        json!({}),
        json!({"forProvider": {"keyAlias": format!("obs-ci-{suffix}"), "teamRef": {"name": "later"}}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    let ci = keys.get("ci").await.unwrap();
    let unresolved = wait_event(&world, &ci, "Warning", "CannotResolveResourceReferences").await;
    assert!(
        unresolved.contains("teamRef") && unresolved.contains("later"),
        "{unresolved}"
    );

    // The spec fixed: the team is created, and becomes Ready.
    patch(
        &teams,
        "web",
        json!({"spec": {"forProvider": {"budgetDuration": "30d"}}}),
    )
    .await;
    let created = wait_event(&world, &web, "Normal", "CreatedExternalResource").await;
    let ready = wait_for(&teams, "web", "Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    let id = ready.annotations()[EXTERNAL_NAME].clone();
    assert!(created.contains(&id), "{created}");
    let readiness =
        by_gvk::<LiteLLMTeam>("crossplane_managed_resource_first_time_to_readiness_seconds_count");
    metered.wait_value(&readiness, |v| v == 1.0).await;
    // Measured from creation: the refused creates took a poll or more.
    let readiness_sum = metered
        .value(&by_gvk::<LiteLLMTeam>(
            "crossplane_managed_resource_first_time_to_readiness_seconds_sum",
        ))
        .unwrap();
    assert!(
        readiness_sum > 0.0 && readiness_sum < 120.0,
        "{readiness_sum}"
    );
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_ready"),
            |v| v == 1.0,
        )
        .await;
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_synced"),
            |v| v == 1.0,
        )
        .await;
    metered
        .wait_value(&result_total::<LiteLLMTeam>("requeue_after"), |v| v >= 1.0)
        .await;
    metered
        .wait_value(
            &by_controller::<LiteLLMTeam>("controller_runtime_reconcile_time_seconds_count"),
            |v| v >= 2.0,
        )
        .await;

    // The key's reference pointed at the team: it resolves, and the key is
    // created.
    patch(
        &keys,
        "ci",
        json!({"spec": {"forProvider": {"teamRef": {"name": "web"}}}}),
    )
    .await;
    wait_event(&world, &ci, "Normal", "CreatedExternalResource").await;
    wait_for(&keys, "ci", "the key Ready", |k| is(k, "Ready", "True")).await;
    metered
        .wait_value(
            &by_gvk::<LiteLLMVirtualKey>("crossplane_managed_resource_ready"),
            |v| v == 1.0,
        )
        .await;

    // Drift made in LiteLLM is corrected: an update, and the time since
    // the team was last found up to date.
    let drift = by_gvk::<LiteLLMTeam>("crossplane_managed_resource_drift_seconds_count");
    let drifts = metered.value(&drift).unwrap_or(0.0);
    world
        .litellm
        .team_update(&TeamRequest {
            team_id: id.clone(),
            team_alias: Some("changed in the UI".into()),
            ..TeamRequest::default()
        })
        .await
        .unwrap();
    let updated = wait_event(&world, &web, "Normal", "UpdatedExternalResource").await;
    assert!(updated.contains("teamAlias"), "{updated}");
    metered.wait_value(&drift, |v| v > drifts).await;

    // Paused: a Normal event with crossplane-runtime's note, and the team
    // no longer counts as synced.
    patch(
        &teams,
        "web",
        json!({"metadata": {"annotations": {"crossplane.io/paused": "true"}}}),
    )
    .await;
    let paused = wait_event(&world, &web, "Normal", "ReconciliationPaused").await;
    assert_eq!(paused, PAUSED_NOTE);
    wait_for(&teams, "web", "ReconcilePaused", |t| {
        condition(t, "Synced").is_some_and(|c| c.reason == "ReconcilePaused")
    })
    .await;
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_synced"),
            |v| v == 0.0,
        )
        .await;
    patch(
        &teams,
        "web",
        json!({"metadata": {"annotations": {"crossplane.io/paused": null}}}),
    )
    .await;
    wait_for(&teams, "web", "Synced again", |t| is(t, "Synced", "True")).await;

    // A connection Secret another object already holds cannot be written.
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &metered.namespace);
    let taken = serde_json::from_value(json!({
        "metadata": {"name": "taken"},
        "stringData": {"note": "not the provider's"},
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &taken)
        .await
        .unwrap();
    let published = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "pub",
        json!({}),
        json!({
            "writeConnectionSecretToRef": {"name": "taken"},
            "forProvider": {"teamAlias": format!("Obs pub {suffix}")},
        }),
    );
    teams
        .create(&PostParams::default(), &published)
        .await
        .unwrap();
    let pub_team = teams.get("pub").await.unwrap();
    let unpublished = wait_event(
        &world,
        &pub_team,
        "Warning",
        "CannotPublishConnectionDetails",
    )
    .await;
    assert!(unpublished.contains("taken"), "{unpublished}");
    secrets
        .delete("taken", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(&teams, "pub", "published and Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;

    // Observed only, and missing: crossplane-runtime's observation error.
    let ghost = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "ghost",
        json!({"crossplane.io/external-name": format!("obs-ghost-{suffix}")}),
        json!({"managementPolicies": ["Observe"], "forProvider": {}}),
    );
    teams.create(&PostParams::default(), &ghost).await.unwrap();
    let ghost = teams.get("ghost").await.unwrap();
    let missing = wait_event(&world, &ghost, "Warning", "CannotObserveExternalResource").await;
    assert!(missing.contains("does not exist"), "{missing}");
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_exists"),
            |v| v == 3.0,
        )
        .await;
    metered
        .wait_value(
            &by_gvk::<LiteLLMTeam>("crossplane_managed_resource_ready"),
            |v| v == 2.0,
        )
        .await;

    // Deleted: the key, then the teams.
    let deletions = by_gvk::<LiteLLMTeam>("crossplane_managed_resource_deletion_seconds_count");
    assert_eq!(metered.value(&deletions), None, "nothing deleted yet");
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_event(&world, &ci, "Normal", "DeletedExternalResource").await;
    wait_gone(&keys, "ci").await;
    for name in ["web", "pub", "ghost"] {
        teams.delete(name, &DeleteParams::default()).await.unwrap();
    }
    let deleted = wait_event(&world, &web, "Normal", "DeletedExternalResource").await;
    assert!(deleted.contains(&id), "{deleted}");
    wait_event(&world, &pub_team, "Normal", "DeletedExternalResource").await;
    for name in ["web", "pub", "ghost"] {
        wait_gone(&teams, name).await;
    }
    assert!(world.team_info(&id).await.is_none());
    metered.wait_value(&deletions, |v| v == 3.0).await;
    let buckets = metered.text();
    let long = format!(
        "crossplane_managed_resource_deletion_seconds_bucket{{le=\"3600.0\",gvk=\"{}\"}}",
        gvk::<LiteLLMTeam>()
    );
    assert_eq!(sample(&buckets, &long), Some(3.0), "{buckets}");
    assert_eq!(
        metered.value(&by_gvk::<LiteLLMVirtualKey>(
            "crossplane_managed_resource_deletion_seconds_count"
        )),
        Some(1.0)
    );
    for kind_gvk in [gvk::<LiteLLMTeam>(), gvk::<LiteLLMVirtualKey>()] {
        let exists = format!("crossplane_managed_resource_exists{{gvk=\"{kind_gvk}\"}}");
        metered.wait_value(&exists, |v| v == 0.0).await;
    }

    // Every reason arrived on the object it is about, visible to
    // `kubectl describe`, and no event holds the master key.
    let web_reasons = described_reasons(&world, &web).await;
    for reason in [
        "CannotCreateExternalResource",
        "CreatedExternalResource",
        "UpdatedExternalResource",
        "ReconciliationPaused",
        "DeletedExternalResource",
    ] {
        assert!(
            web_reasons.iter().any(|r| r == reason),
            "{reason} in {web_reasons:?}"
        );
    }
    assert!(
        !web_reasons
            .iter()
            .any(|r| r == "CannotResolveResourceReferences" || r == "ReconcileError"),
        "{web_reasons:?}"
    );
    let ci_reasons = described_reasons(&world, &ci).await;
    assert!(
        ci_reasons
            .iter()
            .any(|r| r == "CannotResolveResourceReferences"),
        "{ci_reasons:?}"
    );
    let events: Api<Event> = Api::namespaced(world.kube.clone(), &metered.namespace);
    for event in events.list(&ListParams::default()).await.unwrap().items {
        let note = event.note.unwrap_or_default();
        assert!(
            !note.contains(&world.master_key),
            "the master key in an event"
        );
    }

    // The instance controller counts its reconciliations too.
    let instance_controller = instance::controller_name();
    let instance_total = format!(
        "controller_runtime_reconcile_total{{controller=\"{instance_controller}\",result=\"requeue_after\"}}"
    );
    metered.wait_value(&instance_total, |v| v >= 1.0).await;
    let instance_queue = format!(
        "workqueue_depth{{controller=\"{instance_controller}\",name=\"{instance_controller}\",priority=\"\"}}"
    );
    let depth = metered.value(&instance_queue).unwrap();
    assert!((0.0..=1.0).contains(&depth), "one instance: {depth}");
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &metered.namespace);
    assert!(instances.get_opt("proxy").await.unwrap().is_some());
    assert!(
        !metered.text().contains(&format!(
            "crossplane_managed_resource_exists{{gvk=\"{}\"}}",
            gvk::<LiteLLMInstance>()
        )),
        "an instance is no managed resource"
    );
}

fn example_request() -> function_sdk_rust::proto::v1::RunFunctionRequest {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/attach-existing-v2");
    request(&RenderFiles {
        xr: dir.join("xr.yaml"),
        composition: dir.join("composition.yaml"),
        observed: Some(dir.join("observed.yaml")),
        required: None,
    })
    .expect("the example loads")
}

/// The function's metrics endpoint serves function-sdk-go's
/// `grpc_server_*` series, counting real calls over a socket: RunFunction
/// on v1 and v1beta1, and a health check that fails.
#[tokio::test]
async fn the_function_serves_the_grpc_server_series_of_the_go_sdk() {
    let metrics_port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let args = function_sdk_rust::Args {
        debug: false,
        address: "127.0.0.1:0".into(),
        tls_certs_dir: None,
        insecure: true,
        max_recv_message_size: None,
        metrics_address: format!("127.0.0.1:{metrics_port}"),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serve_on(&args, listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let scrape = || async {
        reqwest::get(format!("http://127.0.0.1:{metrics_port}/metrics"))
            .await
            .ok()?
            .text()
            .await
            .ok()
    };
    let before = eventually("the metrics endpoint", scrape).await;
    let v1 = "grpc_method=\"RunFunction\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_type=\"unary\"";
    let beta = format!(
        "grpc_method=\"RunFunction\",grpc_service=\"{V1BETA1_SERVICE_NAME}\",grpc_type=\"unary\""
    );
    let check = "grpc_method=\"Check\",grpc_service=\"grpc.health.v1.Health\",grpc_type=\"unary\"";
    // Every method at zero before the first call, as InitializeMetrics.
    for series in [
        format!("grpc_server_started_total{{{v1}}}"),
        format!("grpc_server_handled_total{{grpc_code=\"OK\",{beta}}}"),
        "grpc_server_started_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\",grpc_type=\"server_stream\"}".to_string(),
        "grpc_server_started_total{grpc_method=\"ServerReflectionInfo\",grpc_service=\"grpc.reflection.v1.ServerReflection\",grpc_type=\"bidi_stream\"}".to_string(),
    ] {
        assert_eq!(sample(&before, &series), Some(0.0), "{series} in {before}");
    }

    let mut client = FunctionRunnerServiceClient::new(channel.clone());
    for _ in 0..2 {
        client.run_function(example_request()).await.unwrap();
    }
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    grpc.unary::<_, function_sdk_rust::proto::v1::RunFunctionResponse, _>(
        tonic::Request::new(example_request()),
        format!("/{V1BETA1_SERVICE_NAME}/RunFunction")
            .parse()
            .unwrap(),
        tonic_prost::ProstCodec::default(),
    )
    .await
    .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    health
        .check(tonic_health::pb::HealthCheckRequest { service: "".into() })
        .await
        .unwrap();
    let unknown = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "no.such.Service".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);

    let after = eventually("the calls counted", || async {
        let text = scrape().await?;
        let not_found = format!("grpc_server_handled_total{{grpc_code=\"NotFound\",{check}}}");
        let ok = format!("grpc_server_handled_total{{grpc_code=\"OK\",{v1}}}");
        (sample(&text, &not_found) == Some(1.0) && sample(&text, &ok) == Some(2.0)).then_some(text)
    })
    .await;
    for (series, value) in [
        (format!("grpc_server_started_total{{{v1}}}"), 2.0),
        (format!("grpc_server_msg_received_total{{{v1}}}"), 2.0),
        (format!("grpc_server_msg_sent_total{{{v1}}}"), 2.0),
        (
            format!("grpc_server_handled_total{{grpc_code=\"OK\",{v1}}}"),
            2.0,
        ),
        (
            format!("grpc_server_handled_total{{grpc_code=\"Internal\",{v1}}}"),
            0.0,
        ),
        (format!("grpc_server_handling_seconds_count{{{v1}}}"), 2.0),
        (format!("grpc_server_started_total{{{beta}}}"), 1.0),
        (
            format!("grpc_server_handled_total{{grpc_code=\"OK\",{beta}}}"),
            1.0,
        ),
        (format!("grpc_server_started_total{{{check}}}"), 2.0),
        (
            format!("grpc_server_handled_total{{grpc_code=\"OK\",{check}}}"),
            1.0,
        ),
        // The Go interceptor reports the sent message whatever the result.
        (format!("grpc_server_msg_sent_total{{{check}}}"), 2.0),
        // The function's own series, beside them.
        (
            "function_litellm_runs_total{outcome=\"composed\"}".to_string(),
            3.0,
        ),
    ] {
        assert_eq!(sample(&after, &series), Some(value), "{series} in {after}");
    }
    drop(stop);
    let _ = server.await;
}
