//! The entity controllers end to end: a real Kubernetes API server
//! (`tests/harness/k8s/`) and a real LiteLLM proxy (`tests/harness/litellm/`), with
//! the controllers running in-process. Each test has its own namespace and
//! LiteLLM ids. The LiteLLMInstance controller is not run here: the tests
//! write the instance's status themselves, as that controller would.

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{
    LiteLLMBudget, LiteLLMInstance, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey,
};
use litellm_crossplane::litellm::LimitsRequest;
use litellm_crossplane::litellm::{
    token_of, KeyRequest, ModelMetaRequest, ModelParamsRequest, ModelRequest, Secret, TeamRequest,
};
use litellm_crossplane::provider::kinds::key::KEY_GENERATED_BY_PROXY;
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::ownership::{metadata_with_marker, Owner, MARKER_KEY};
use litellm_crossplane::provider::managed::reconciler::FINALIZER;
use litellm_crossplane::provider::managed::reconciler::RELEASE_ON_MISSING_INSTANCE;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use serde_json::json;
use support::k8s;
use support::provider::{
    condition, context, create_instance, eventually, is, manifest, reconciles, set_instance_ready,
    wait_for, wait_gone, world, world_with, Setup, World, CLUSTER, INSTANCE,
};

fn team_manifest(name: &str, alias: &str) -> LiteLLMTeam {
    manifest(
        "LiteLLMTeam",
        name,
        json!({}),
        json!({"forProvider": {"teamAlias": alias, "maxBudget": "10.50", "metadata": {"env": "e2e"}}}),
    )
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn team_create_update_drift_delete_and_recreate() {
    let Some(world) = world("pe-team").await else {
        return;
    };
    let teams = world.create(&team_manifest("web", "Web")).await;
    let team = wait_for(&teams, "web", "team Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    let id = team.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{}.web", world.namespace));
    let live = world.team_info(&id).await.expect("team exists in LiteLLM");
    assert_eq!(live.team_alias.as_deref(), Some("Web"));
    assert_eq!(live.max_budget, Some(10.5));
    let marker = &live.metadata.as_ref().unwrap()[MARKER_KEY];
    assert_eq!(marker["namespace"], world.namespace.as_str());
    assert_eq!(marker["cluster"], CLUSTER);
    assert_eq!(live.metadata.as_ref().unwrap()["env"], "e2e");
    let status = team.status.as_ref().unwrap().at_provider.as_ref().unwrap();
    assert_eq!(status.team_id.as_deref(), Some(id.as_str()));

    // Update: a new alias in forProvider reaches LiteLLM.
    let patch = json!({"spec": {"forProvider": {"teamAlias": "Web 2"}}});
    teams
        .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the alias update", || async {
        world
            .team_info(&id)
            .await
            .filter(|t| t.team_alias.as_deref() == Some("Web 2"))
    })
    .await;

    // Drift made behind the provider's back is corrected, marker included.
    let drift = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("changed in the UI".into()),
        metadata: Some(serde_json::Map::new()),
        ..TeamRequest::default()
    };
    world
        .litellm
        .team_update(&drift)
        .await
        .expect("drift written");
    let restored = eventually("drift to be corrected", || async {
        world
            .team_info(&id)
            .await
            .filter(|t| t.team_alias.as_deref() == Some("Web 2"))
    })
    .await;
    assert!(restored.metadata.unwrap().contains_key(MARKER_KEY));

    // Delete removes the team from LiteLLM before the resource goes.
    let created_at = restored.created_at.clone();
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "web").await;
    assert!(
        world.team_info(&id).await.is_none(),
        "team still in LiteLLM"
    );

    // The same name again gives the same id but a fresh team.
    world.create(&team_manifest("web", "Web")).await;
    wait_for(&teams, "web", "recreated team Ready", |t| {
        is(t, "Ready", "True")
    })
    .await;
    let fresh = world.team_info(&id).await.expect("recreated team");
    assert_ne!(fresh.created_at, created_at);
    assert_eq!(fresh.team_alias.as_deref(), Some("Web"));
    teams.delete("web", &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn observe_only_imports_an_existing_team_without_writing() {
    let Some(world) = world("pe-import").await else {
        return;
    };
    let id = format!("imported-{}", k8s::unique_suffix());
    let existing = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("Made elsewhere".into()),
        limits: LimitsRequest {
            max_budget: Some(5.0),
            ..LimitsRequest::default()
        },
        ..TeamRequest::default()
    };
    world
        .litellm
        .team_new(&existing)
        .await
        .expect("team created directly");
    let before = world.team_info(&id).await.unwrap();

    let import = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "imported",
        json!({EXTERNAL_NAME: id}),
        json!({"managementPolicies": ["Observe"], "forProvider": {"teamAlias": "Wanted"}}),
    );
    let teams = world.create(&import).await;
    let team = wait_for(&teams, "imported", "import Ready", |t| {
        is(t, "Ready", "True") && condition(t, "Synced").and_then(|c| c.message).is_some()
    })
    .await;
    let synced = condition(&team, "Synced").unwrap();
    assert_eq!(synced.status, "True");
    assert!(
        synced.message.unwrap().contains("teamAlias"),
        "drift is reported"
    );
    let observed = team.status.unwrap().at_provider.unwrap();
    assert_eq!(observed.team_alias.as_deref(), Some("Made elsewhere"));
    assert_eq!(observed.max_budget.as_deref(), Some("5"));
    assert_eq!(
        team.spec.for_provider.limits.max_budget, None,
        "no late initialization without the policy"
    );

    // Nothing was written, and deleting the import leaves the team alone.
    let after = world.team_info(&id).await.unwrap();
    assert_eq!(after.team_alias, before.team_alias);
    assert_eq!(after.metadata, before.metadata);
    teams
        .delete("imported", &DeleteParams::default())
        .await
        .unwrap();
    world
        .assert_team_left_behind(
            &teams,
            "imported",
            &id,
            "an Observe-only import must not delete",
        )
        .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn key_is_stored_before_creation_and_authenticates() {
    let Some(world) = world("pe-key").await else {
        return;
    };
    let teams = world.create(&team_manifest("web", "Web")).await;
    let alias = format!("ci-{}", k8s::unique_suffix());
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "ci",
        json!({}),
        json!({"forProvider": {"keyAlias": alias, "teamRef": {"name": "web"}, "maxBudget": "1"}}),
    );
    let keys = world.create(&key).await;
    let key = wait_for(&keys, "ci", "key Ready", |k| is(k, "Ready", "True")).await;

    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let secret = secrets.get("ci-key").await.expect("connection Secret");
    let data = secret.data.clone().unwrap();
    let value = Secret::new(String::from_utf8(data["key"].0.clone()).unwrap());
    assert_eq!(
        String::from_utf8(data["endpoint"].0.clone()).unwrap(),
        world.url
    );
    assert_eq!(secret.owner_references()[0].uid, key.uid().unwrap());
    assert_eq!(key.annotations()[EXTERNAL_NAME], token_of(&value));
    let observed = key.status.as_ref().unwrap().at_provider.as_ref().unwrap();
    assert_eq!(
        observed.team_id.as_deref(),
        Some(format!("{}.web", world.namespace).as_str())
    );
    let status_text = serde_json::to_string(&key.status).unwrap();
    assert!(
        !status_text.contains(value.expose()),
        "the secret must never reach status"
    );

    // The stored secret is a working key of the proxy.
    let reply = reqwest::Client::new()
        .get(format!("{}/key/info", world.url))
        .bearer_auth(value.expose())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);

    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert!(world
        .litellm
        .key_info(&token_of(&value))
        .await
        .unwrap()
        .is_none());
    teams.delete("web", &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_missing_reference_blocks_creation_until_it_exists() {
    let Some(world) = world("pe-ref").await else {
        return;
    };
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "early",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "later"}}}),
    );
    let keys = world.create(&key).await;
    let waiting = wait_for(&keys, "early", "Synced=False", |k| is(k, "Synced", "False")).await;
    let message = condition(&waiting, "Synced").unwrap().message.unwrap();
    assert!(
        message.contains("teamRef") && message.contains("later"),
        "{message}"
    );
    assert!(
        !waiting.annotations().contains_key(EXTERNAL_NAME),
        "nothing chosen before references resolve"
    );
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    assert!(secrets.get_opt("early-key").await.unwrap().is_none());

    let teams = world.create(&team_manifest("later", "Later")).await;
    let key = wait_for(&keys, "early", "key Ready once the team is", |k| {
        is(k, "Ready", "True")
    })
    .await;
    let info = world
        .litellm
        .key_info(&key.annotations()[EXTERNAL_NAME])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(info.team_id, Some(format!("{}.later", world.namespace)));
    keys.delete("early", &DeleteParams::default())
        .await
        .unwrap();
    teams
        .delete("later", &DeleteParams::default())
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_instance_that_is_not_ready_blocks_reconciliation() {
    let Some(world) = world("pe-notready").await else {
        return;
    };
    set_instance_ready(&world.kube, &world.namespace, &world.url, false).await;
    let teams = world.create(&team_manifest("web", "Web")).await;
    let waiting = wait_for(&teams, "web", "Synced=False", |t| is(t, "Synced", "False")).await;
    let message = condition(&waiting, "Synced").unwrap().message.unwrap();
    assert!(
        message.contains(INSTANCE) && message.contains("not ready"),
        "{message}"
    );
    assert!(!waiting.annotations().contains_key(EXTERNAL_NAME));

    set_instance_ready(&world.kube, &world.namespace, &world.url, true).await;
    wait_for(&teams, "web", "Ready once the instance is", |t| {
        is(t, "Ready", "True")
    })
    .await;
    teams.delete("web", &DeleteParams::default()).await.unwrap();
}

/// Creates `attacker`, whose external name is an object marked for
/// `tenant-a`, waits for the refusal (which must not name that owner), and
/// deletes it again; the caller then checks the object is untouched.
async fn refused_and_released<K: ManagedKind>(world: &World, attacker: &K) {
    let name = attacker.name_any();
    let api = world.create(attacker).await;
    let refused = wait_for(&api, &name, "Synced=False", |o| is(o, "Synced", "False")).await;
    let message = condition(&refused, "Synced").unwrap().message.unwrap();
    assert!(message.contains("managed by another resource"), "{message}");
    assert!(
        !message.contains("tenant-a") && !message.contains("victim"),
        "a refusal does not reveal the other tenant: {message}"
    );
    // Neither reconciling (twice more) nor deleting the attacker touches
    // the object.
    world.reconciled_again(K::NOUN, 2).await;
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    wait_gone(&api, &name).await;
}

fn victim_marker() -> serde_json::Value {
    json!({"cluster": CLUSTER, "namespace": "tenant-a", "name": "victim", "uid": "u"})
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn taking_over_another_owners_team_or_model_is_refused() {
    let Some(world) = world("pe-takeover").await else {
        return;
    };
    let id = format!("victim-{}", k8s::unique_suffix());
    let victim = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("Victim".into()),
        metadata: Some(
            json!({MARKER_KEY: victim_marker()})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..TeamRequest::default()
    };
    world.litellm.team_new(&victim).await.expect("victim team");
    let before = world.team_info(&id).await.unwrap();
    let attacker = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "thief",
        json!({EXTERNAL_NAME: id}),
        json!({"forProvider": {"teamAlias": "Mine now"}}),
    );
    refused_and_released(&world, &attacker).await;
    let after = world.team_info(&id).await.expect("victim team survives");
    assert_eq!(after.team_alias, before.team_alias);
    assert_eq!(after.metadata, before.metadata);
    world.litellm.team_delete(&id).await.unwrap();

    // Models carry the marker in model_info.
    let victim = ModelRequest {
        model_name: format!("victim-{}", k8s::unique_suffix()),
        litellm_params: ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            // A closed loopback port: nothing is ever called.
            api_base: Some("http://127.0.0.1:9".into()),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: id.clone(),
            extra: json!({MARKER_KEY: victim_marker(), "mode": "chat"})
                .as_object()
                .unwrap()
                .clone(),
        },
    };
    world
        .litellm
        .model_new(&victim)
        .await
        .expect("victim model");
    let before = world.litellm.model_info(&id).await.unwrap().unwrap();
    let attacker = manifest::<LiteLLMModel>(
        "LiteLLMModel",
        "thief",
        json!({EXTERNAL_NAME: id}),
        json!({"forProvider": {
            "modelName": "mine-now",
            "litellmParams": {"model": "openai/gpt-4o", "apiBase": "http://127.0.0.1:10"},
            "modelInfo": {"mode": "embedding"}
        }}),
    );
    refused_and_released(&world, &attacker).await;
    let after = world
        .litellm
        .model_info(&id)
        .await
        .unwrap()
        .expect("victim model survives");
    assert_eq!(after, before);
    world.litellm.model_delete(&id).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_instance_in_another_namespace_must_admit_the_resource() {
    let Some(world) = world("pe-xns").await else {
        return;
    };
    let other = k8s::namespace(&world.kube, "pe-xns-tenant").await;
    let ctx = Arc::new(context(&world.provider_client(), Metrics::default()));
    let tenant = tokio::spawn(controllers::run(ctx, Some(other.clone())));
    let mut team = team_manifest("web", "Web");
    team.spec.managed.instance_ref.namespace = Some(world.namespace.clone());
    // Outside the instance's namespace a team lists its models.
    team.spec.for_provider.models = Some(vec!["gpt-4o".into()]);
    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &other);
    teams.create(&PostParams::default(), &team).await.unwrap();
    let refused = wait_for(&teams, "web", "Synced=False", |t| is(t, "Synced", "False")).await;
    let message = condition(&refused, "Synced").unwrap().message.unwrap();
    assert!(
        message.contains(&format!("{}/{INSTANCE}", world.namespace)) && message.contains(&other),
        "{message}"
    );
    assert!(!refused.annotations().contains_key(EXTERNAL_NAME));

    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let admit = json!({"spec": {"allowedNamespaces": {"names": [other]}}});
    instances
        .patch(INSTANCE, &PatchParams::default(), &Patch::Merge(&admit))
        .await
        .unwrap();
    let team = wait_for(&teams, "web", "Ready once admitted", |t| {
        is(t, "Ready", "True")
    })
    .await;
    assert_eq!(team.annotations()[EXTERNAL_NAME], format!("{other}.web"));
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "web").await;
    tenant.abort();
}

/// Requests to the Kubernetes API server other than the start of a watch.
fn kube_requests(metrics: &Metrics) -> BTreeMap<(String, String), u64> {
    metrics
        .kube_requests()
        .into_iter()
        .filter(|((verb, _), _)| verb != "watch")
        .collect()
}

/// A second set of controllers for a namespace of its own, with metrics a
/// test can read (the world's controllers see nothing of that namespace);
/// with `count`, the provider's Kubernetes requests are counted in them.
struct Own {
    namespace: String,
    metrics: Metrics,
    registry: prometheus_client::registry::Registry,
    controllers: tokio::task::JoinHandle<()>,
}

async fn own_controllers(world: &World, prefix: &str, count: bool) -> Own {
    let namespace = k8s::namespace(&world.kube, prefix).await;
    let master_key = std::env::var("LITELLM_MASTER_KEY").unwrap();
    create_instance(&world.kube, &namespace, &world.url, &master_key, true).await;
    let metrics = Metrics::default();
    let mut registry = prometheus_client::registry::Registry::default();
    metrics.register(&mut registry);
    let client = match count {
        true => world.counted_provider_client(&metrics),
        false => world.kube.clone(),
    };
    let ctx = Arc::new(context(&client, metrics.clone()));
    let controllers = tokio::spawn(controllers::run(ctx, Some(namespace.clone())));
    Own {
        namespace,
        metrics,
        registry,
        controllers,
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn steady_state_is_one_read_per_poll_and_no_write() {
    let Some(world) = world("pe-steady").await else {
        return;
    };
    let Own {
        namespace,
        metrics,
        registry,
        controllers,
    } = own_controllers(&world, "pe-steady-own", true).await;

    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &namespace);
    teams
        .create(&PostParams::default(), &team_manifest("quiet", "Quiet"))
        .await
        .unwrap();
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), &namespace);
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "quiet-key",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "quiet"}}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    wait_for(&teams, "quiet", "Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    wait_for(&keys, "quiet-key", "Ready", |k| {
        is(k, "Ready", "True") && is(k, "Synced", "True")
    })
    .await;
    // Let the late-initialization patch and its echo settle: two polls of
    // each (at 1 s) begin after them.
    let more = |kind: &'static str, times: u64| {
        let registry = &registry;
        async move {
            support::provider::more_reconciliations(kind, times, Duration::from_secs(60), || {
                reconciles(registry, kind)
            })
            .await
        }
    };
    more("team", 2).await;
    more("key", 2).await;
    let before = support::provider::requests_by_operation(&registry);
    let kube_before = kube_requests(&metrics);
    let polls_before = reconciles(&registry, "team");
    let key_polls_before = reconciles(&registry, "key");
    // The window: four more polls of each.
    more("team", 4).await;
    more("key", 4).await;
    let after = support::provider::requests_by_operation(&registry);
    let kube_after = kube_requests(&metrics);
    let polls = reconciles(&registry, "team") - polls_before;
    let key_polls = reconciles(&registry, "key") - key_polls_before;

    let grown: BTreeMap<String, u64> = after
        .iter()
        .map(|(op, n)| (op.clone(), n - before.get(op).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let reads = [
        "GET /key/info",
        "GET /key/list",
        "GET /team/info",
        "GET /v2/team/list",
    ];
    assert!(
        grown.keys().all(|op| reads.contains(&op.as_str())),
        "only reads in the steady state: {grown:?}"
    );
    // Every poll is one read: the object's own, or a page of `/v2/team/list`
    // or `/key/list` (which answers a poll of each team or key it lists;
    // here one, unless the shared proxy lists more than a page holds: then
    // the object reads on its own). The window holds at least four polls of
    // each (counted as they finish), perhaps more of the other kind. A poll
    // counted as it starts at either edge of the window may have its read
    // on the other side: one off at most. The key's every tenth poll
    // reconciles in full, from its page's entry where a page answered it.
    let count = |op: &str| grown.get(op).copied().unwrap_or(0);
    let key_reads = count(reads[0]) + count(reads[1]);
    let team_reads = count(reads[2]) + count(reads[3]);
    for (what, reads, polls, off) in [
        ("team", team_reads, polls, 1),
        ("key", key_reads, key_polls, 2),
    ] {
        assert!(
            reads <= polls + 1 && reads + off >= polls,
            "{what}: {reads} reads in {polls} polls: {grown:?}"
        );
        assert!(
            reads >= 3,
            "{what}: {reads} reads in a window of at least four polls"
        );
    }
    // Nothing read from (or written to) the API server: the instance, the
    // master key, the team a key references and its connection Secret all
    // come from the watch caches.
    let kube_grown: Vec<_> = kube_after
        .iter()
        .filter(|(request, n)| kube_before.get(*request) != Some(*n))
        .collect();
    assert!(
        kube_grown.is_empty(),
        "Kubernetes requests in the steady state: {kube_grown:?}"
    );
    assert!(
        kube_after.contains_key(&("get".to_owned(), "secrets".to_owned())),
        "the counting sees the provider's requests: {kube_after:?}"
    );
    delete_key_then_team(&keys, "quiet-key", &teams, "quiet").await;
    controllers.abort();
}

/// Deletes a key, then its team, each once it is gone from Kubernetes
/// (and so from LiteLLM).
async fn delete_key_then_team(
    keys: &Api<LiteLLMVirtualKey>,
    key: &str,
    teams: &Api<LiteLLMTeam>,
    team: &str,
) {
    keys.delete(key, &DeleteParams::default()).await.unwrap();
    wait_gone(keys, key).await;
    teams.delete(team, &DeleteParams::default()).await.unwrap();
    wait_gone(teams, team).await;
}

/// Ready and Synced for the resource's current generation.
fn settled<K: ManagedKind>(object: &K) -> bool {
    ["Ready", "Synced"].iter().all(|type_| {
        condition(object, type_).is_some_and(|c| {
            c.status == "True" && c.observed_generation == object.meta().generation
        })
    })
}

/// A new key reads its connection Secret from the API server once: when
/// its id is chosen (the secret is generated and stored there first, or an
/// earlier attempt's reused). Storing the generated secret writes over what
/// that read found, and the create sends the secret just drawn, without
/// reading either again; the finalizer goes on with the external name, in
/// one patch before the create.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_new_key_reads_its_connection_secret_once() {
    let Some(world) = world("pe-secret-reads").await else {
        return;
    };
    let Own {
        namespace,
        metrics,
        controllers,
        ..
    } = own_controllers(&world, "pe-secret-reads-own", true).await;
    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &namespace);
    teams
        .create(&PostParams::default(), &team_manifest("reads", "Reads"))
        .await
        .unwrap();
    wait_for(&teams, "reads", "Ready for its generation", settled).await;
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), &namespace);
    let key = |name: &str| {
        manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            name,
            json!({}),
            json!({"forProvider": {"teamRef": {"name": "reads"}}}),
        )
    };
    // A first key makes sure the instance's master key is in the cache (a
    // read before the cache has listed is not kept), so what the second
    // key's reconciliations read is its own Secret only.
    keys.create(&PostParams::default(), &key("warm-key"))
        .await
        .unwrap();
    wait_for(&keys, "warm-key", "Ready for its generation", settled).await;
    let before = kube_requests(&metrics);
    keys.create(&PostParams::default(), &key("reads-key"))
        .await
        .unwrap();
    wait_for(&keys, "reads-key", "Ready for its generation", settled).await;
    let after = kube_requests(&metrics);
    let count = |verb: &str, resource: &str| {
        let of = |requests: &BTreeMap<(String, String), u64>| {
            requests
                .get(&(verb.to_owned(), resource.to_owned()))
                .copied()
                .unwrap_or(0)
        };
        of(&after) - of(&before)
    };
    assert_eq!(
        count("get", "secrets"),
        1,
        "Secret reads of a new key: {before:?} then {after:?}"
    );
    assert_eq!(
        count("create", "secrets"),
        1,
        "the connection Secret is created once: {before:?} then {after:?}"
    );
    // The finalizer goes on with the external name, in one patch.
    assert_eq!(
        count("patch", "litellmvirtualkeys"),
        1,
        "patches of a new key: {before:?} then {after:?}"
    );
    let written = keys.get("reads-key").await.unwrap();
    assert!(
        written.finalizers().iter().any(|f| f == FINALIZER),
        "{:?}",
        written.finalizers()
    );
    let secret = Api::<KubeSecret>::namespaced(world.kube.clone(), &namespace)
        .get("reads-key-key")
        .await
        .unwrap();
    assert!(
        secret
            .data
            .as_ref()
            .is_some_and(|d| d.contains_key("key") && d.contains_key("endpoint")),
        "the Secret holds the key and the endpoint"
    );

    keys.delete("warm-key", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "warm-key").await;
    delete_key_then_team(&keys, "reads-key", &teams, "reads").await;
    controllers.abort();
}

/// A key whose team does not exist is not acted on: no finalizer (it goes
/// on with the external name, before anything is looked up or created in
/// LiteLLM), no external name, no Secret. Deleted so, it goes at once and
/// leaves nothing behind in LiteLLM: nothing was ever created for it.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_resource_deleted_before_it_is_acted_on_goes_at_once() {
    let Some(world) = world("pe-unacted").await else {
        return;
    };
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), &world.namespace);
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "orphan",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "ghost"}}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    let waiting = wait_for(&keys, "orphan", "Synced=False: its team is missing", |k| {
        is(k, "Synced", "False")
    })
    .await;
    assert!(
        !waiting.finalizers().iter().any(|f| f == FINALIZER),
        "{:?}",
        waiting.finalizers()
    );
    assert!(waiting.annotations().get(EXTERNAL_NAME).is_none());
    keys.delete("orphan", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "orphan").await;
    let alias = litellm_crossplane::provider::kinds::key::alias(&waiting);
    assert_eq!(
        world.litellm.key_list_by_alias(&alias).await.unwrap(),
        Vec::<String>::new(),
        "no key in LiteLLM under {alias}"
    );
    let secret = Api::<KubeSecret>::namespaced(world.kube.clone(), &world.namespace)
        .get_opt("orphan-key")
        .await
        .unwrap();
    assert!(secret.is_none(), "no connection Secret was written");
}

/// A new team and a key in it cost no read: the team is created first
/// under the id chosen in the same reconciliation (a taken id would make
/// `/team/new` fail, see `provider_create_first`), the key first under the
/// token of a secret drawn in it (no key can be under it), and the create's
/// answer (the row LiteLLM wrote) shows each Available, where
/// crossplane-runtime would observe it once more.
/// The team's late initialization, taken from that answer, wakes no second
/// read (its status speaks of the new generation), and the key joins the
/// team the provider has just made without reading the team's marker again,
/// nor looks up its alias on a proxy that takes chosen keys.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_new_team_and_its_key_take_no_read() {
    let Some(world) = world("pe-reads").await else {
        return;
    };
    let Own {
        namespace,
        registry,
        controllers,
        ..
    } = own_controllers(&world, "pe-reads-own", false).await;

    // An hour between polls keeps them out of the count.
    let unpolled = |meta: &mut kube::api::ObjectMeta| {
        meta.annotations
            .get_or_insert_default()
            .insert("crossplane.io/poll-interval".into(), "1h".into());
    };
    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &namespace);
    let mut team = team_manifest("lean", "Lean");
    unpolled(&mut team.metadata);
    teams.create(&PostParams::default(), &team).await.unwrap();
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), &namespace);
    let mut key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "lean-key",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "lean"}}}),
    );
    unpolled(&mut key.metadata);
    keys.create(&PostParams::default(), &key).await.unwrap();
    let team = wait_for(&teams, "lean", "Ready for its generation", settled).await;
    let key = wait_for(&keys, "lean-key", "Ready for its generation", settled).await;
    // What would follow an echo of the writes that made them Ready has
    // happened once the provider has reconciled each after a later change:
    // the watch delivers an object's events in order. The change is a pause,
    // which the provider reports without a call to LiteLLM.
    pause(&teams, "lean", true).await;
    pause(&keys, "lean-key", true).await;
    let calls = support::provider::requests_by_operation(&registry);
    assert_eq!(
        calls,
        BTreeMap::from(
            [("POST /key/generate", 1), ("POST /team/new", 1),].map(|(op, n)| (op.to_owned(), n))
        ),
        "LiteLLM calls from nothing to Ready"
    );
    // The count covers a late initialization: the team's spec was written
    // once after its create (generation 2), and nothing observed it again.
    // What the answer showed is in the status as an observation would put
    // it.
    let observed = team
        .status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref())
        .unwrap();
    assert_eq!(
        observed.team_id.as_deref(),
        team.annotations().get(EXTERNAL_NAME).map(String::as_str)
    );
    assert!(observed.created_at.is_some(), "{observed:?}");
    let observed = key
        .status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref())
        .unwrap();
    assert_eq!(
        observed.token.as_deref(),
        key.annotations().get(EXTERNAL_NAME).map(String::as_str)
    );
    assert_eq!(
        observed.team_id,
        team.annotations().get(EXTERNAL_NAME).cloned()
    );
    assert!(
        observed
            .created_at
            .as_deref()
            .is_some_and(|t| t.ends_with("+00:00")),
        "createdAt in /key/info's form, so the first poll rewrites nothing: {observed:?}"
    );
    assert_eq!(
        team.metadata.generation,
        Some(2),
        "the team's spec was late-initialized"
    );
    assert_eq!(
        key.metadata.generation,
        Some(1),
        "the key's spec as written"
    );

    pause(&teams, "lean", false).await;
    pause(&keys, "lean-key", false).await;
    delete_key_then_team(&keys, "lean-key", &teams, "lean").await;
    controllers.abort();
}

/// Pauses `name` (or lets it go on) with crossplane-runtime's annotation,
/// and waits until the provider has reconciled it since: `Synced` says
/// `ReconcilePaused`, or no longer does.
async fn pause<K: ManagedKind>(api: &Api<K>, name: &str, paused: bool) {
    let value = paused.then_some("true");
    let patch = json!({"metadata": {"annotations": {"crossplane.io/paused": value}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let what = if paused { "ReconcilePaused" } else { "resumed" };
    wait_for(api, name, what, |object| {
        let reported = condition(object, "Synced").is_some_and(|c| c.reason == "ReconcilePaused");
        reported == paused
    })
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_paused_resource_is_left_alone() {
    let Some(world) = world("pe-paused").await else {
        return;
    };
    let paused = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "web",
        json!({"crossplane.io/paused": "true"}),
        json!({"forProvider": {"teamAlias": "Paused"}}),
    );
    let teams = world.create(&paused).await;
    let team = wait_for(&teams, "web", "ReconcilePaused", |t| {
        condition(t, "Synced").is_some_and(|c| c.reason == "ReconcilePaused")
    })
    .await;
    assert!(!team.annotations().contains_key(EXTERNAL_NAME));
    assert!(world
        .team_info(&format!("{}.web", world.namespace))
        .await
        .is_none());

    let resume = json!({"metadata": {"annotations": {"crossplane.io/paused": null}}});
    teams
        .patch("web", &PatchParams::default(), &Patch::Merge(&resume))
        .await
        .unwrap();
    wait_for(&teams, "web", "Ready after resuming", |t| {
        is(t, "Ready", "True")
    })
    .await;
    teams.delete("web", &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn budgets_and_models_are_created_updated_and_deleted() {
    let Some(world) = world("pe-budget-model").await else {
        return;
    };
    let budgets = world
        .create(&manifest::<LiteLLMBudget>(
            "LiteLLMBudget",
            "monthly",
            json!({}),
            json!({"forProvider": {"maxBudget": "100.25", "budgetDuration": "30d"}}),
        ))
        .await;
    let budget = wait_for(&budgets, "monthly", "budget Ready", |b| {
        is(b, "Ready", "True")
    })
    .await;
    let budget_id = budget.annotations()[EXTERNAL_NAME].clone();
    let live = world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .expect("budget in LiteLLM");
    assert_eq!(live.max_budget, Some(100.25));
    let patch = json!({"spec": {"forProvider": {"maxBudget": "200"}}});
    budgets
        .patch("monthly", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the budget update", || async {
        world
            .litellm
            .budget_info(&budget_id)
            .await
            .unwrap()
            .filter(|b| b.max_budget == Some(200.0))
    })
    .await;

    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let upstream = serde_json::from_value(
        json!({"metadata": {"name": "upstream"}, "stringData": {"apiKey": "sk-upstream-e2e"}}),
    )
    .unwrap();
    secrets
        .create(&PostParams::default(), &upstream)
        .await
        .unwrap();
    let models = world
        .create(&manifest::<LiteLLMModel>(
            "LiteLLMModel",
            "gpt",
            json!({}),
            json!({"forProvider": {
                "modelName": format!("e2e-{}", k8s::unique_suffix()),
                "litellmParams": {
                    "model": "openai/gpt-4o",
                    // A closed loopback port: nothing is ever called.
                    "apiBase": "http://127.0.0.1:9",
                    "apiKeySecretRef": {"name": "upstream", "key": "apiKey"},
                    "rpm": 10
                },
                "modelInfo": {"mode": "chat"}
            }}),
        ))
        .await;
    let model = wait_for(&models, "gpt", "model Ready", |m| is(m, "Ready", "True")).await;
    let model_id = model.annotations()[EXTERNAL_NAME].clone();
    let live = world.litellm.model_info(&model_id).await.unwrap().unwrap();
    assert_eq!(live.model_info.extra["mode"], "chat");
    assert_eq!(
        live.model_info.extra[MARKER_KEY]["namespace"],
        world.namespace.as_str()
    );
    let patch = json!({"spec": {"forProvider": {"litellmParams": {"rpm": 20}, "modelInfo": {"mode": "completion"}}}});
    models
        .patch("gpt", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the model update", || async {
        world
            .litellm
            .model_info(&model_id)
            .await
            .unwrap()
            .filter(|m| {
                m.litellm_params.rpm == Some(20) && m.model_info.extra["mode"] == "completion"
            })
    })
    .await;

    models
        .delete("gpt", &DeleteParams::default())
        .await
        .unwrap();
    budgets
        .delete("monthly", &DeleteParams::default())
        .await
        .unwrap();
    eventually("both resources to be gone", || async {
        let gone = models.get_opt("gpt").await.unwrap().is_none()
            && budgets.get_opt("monthly").await.unwrap().is_none();
        gone.then_some(())
    })
    .await;
    assert!(world.litellm.model_info(&model_id).await.unwrap().is_none());
    assert!(world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_resource_whose_instance_is_gone_waits_for_an_explicit_release() {
    let Some(world) = world("pe-orphan").await else {
        return;
    };
    let teams = world.create(&team_manifest("web", "Web")).await;
    let team = wait_for(&teams, "web", "team Ready", |t| is(t, "Ready", "True")).await;
    let id = team.annotations()[EXTERNAL_NAME].clone();

    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    instances
        .delete(INSTANCE, &DeleteParams::default())
        .await
        .unwrap();
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    let blocked = wait_for(&teams, "web", "deletion to be blocked", |t| {
        condition(t, "Synced")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains(RELEASE_ON_MISSING_INSTANCE))
    })
    .await;
    assert_eq!(condition(&blocked, "Ready").unwrap().reason, "Deleting");

    let release = json!({"metadata": {"annotations": {RELEASE_ON_MISSING_INSTANCE: "true"}}});
    teams
        .patch("web", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .unwrap();
    world
        .assert_team_left_behind(&teams, "web", &id, "released, not deleted")
        .await;
}

/// Against a second proxy with `general_settings.disable_custom_api_keys:
/// true` and the same master key, at `LITELLM_NOCUSTOM_URL`; skipped without
/// one. Start it with
/// `LITELLM_HARNESS_DIR=/tmp/litellm-harness-nocustom LITELLM_PORT=4100
/// PG_PORT=55433 LITELLM_CONFIG=$PWD/tests/fixtures/litellm-nocustom.yaml
/// tests/harness/litellm/up.sh` and set `LITELLM_NOCUSTOM_URL=http://127.0.0.1:4100`.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_proxy_that_refuses_chosen_keys_generates_them_and_replaces_lost_ones() {
    let Ok(nocustom) = std::env::var("LITELLM_NOCUSTOM_URL") else {
        assert!(
            !support::k8s::harness_required(),
            "LITELLM_NOCUSTOM_URL is not set: tests/run.sh starts that proxy"
        );
        eprintln!("skipped: LITELLM_NOCUSTOM_URL not set");
        return;
    };
    let setup = Setup {
        endpoint: Some(nocustom.clone()),
        ..Setup::default()
    };
    let Some(world) = world_with("pe-nocustom", setup).await else {
        return;
    };
    let proxy =
        support::harness::admin_client(&nocustom, &world.master_key, Duration::from_secs(10));

    // Paused, so its uid is known before anything is created: a key LiteLLM
    // generated for it, whose response was lost, is planted first.
    let paused = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "ci",
        json!({"crossplane.io/paused": "true"}),
        json!({"forProvider": {"maxBudget": "1"}}),
    );
    let keys = world.create(&paused).await;
    let owner = Owner {
        cluster: CLUSTER.into(),
        namespace: world.namespace.clone(),
        name: "ci".into(),
        uid: keys.get("ci").await.unwrap().uid().unwrap(),
    };
    let alias = format!("{}.ci", world.namespace);
    let lost = proxy
        .key_generate(
            None,
            &KeyRequest {
                key_alias: Some(alias.clone()),
                metadata: Some(metadata_with_marker(None, &owner)),
                ..KeyRequest::default()
            },
        )
        .await
        .expect("the lost key");
    let resume = json!({"metadata": {"annotations": {"crossplane.io/paused": null}}});
    keys.patch("ci", &PatchParams::default(), &Patch::Merge(&resume))
        .await
        .unwrap();

    let key = wait_for(&keys, "ci", "key Ready", |k| is(k, "Ready", "True")).await;
    let generated = condition(&key, KEY_GENERATED_BY_PROXY).expect("condition");
    assert_eq!(generated.status, "True");
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let data = secrets.get("ci-key").await.unwrap().data.unwrap();
    let value = Secret::new(String::from_utf8(data["key"].0.clone()).unwrap());
    let token = key.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(token, token_of(&value));
    assert_ne!(token, lost.token);
    assert_eq!(
        proxy.key_list_by_alias(&alias).await.unwrap(),
        [token.as_str()]
    );
    assert_eq!(proxy.key_info(&lost.token).await.unwrap(), None);
    let live = proxy.key_info(&token).await.unwrap().unwrap();
    assert_eq!(live.max_budget, Some(1.0));
    assert!(!serde_json::to_string(&key.status)
        .unwrap()
        .contains(value.expose()));
    // The stored secret is a working key of the proxy.
    let reply = reqwest::Client::new()
        .get(format!("{nocustom}/key/info"))
        .bearer_auth(value.expose())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);

    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert_eq!(proxy.key_info(&token).await.unwrap(), None);
}

/// A key applied together with its team waits for the team's first
/// reconciliation without a word: no `Synced=False`, no Warning event, one
/// status write (Ready) instead of two, then starts when the team is Ready
/// (the team wakes it).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_key_applied_with_its_team_waits_unreported() {
    let Some(world) = world("pe-together").await else {
        return;
    };
    let Own {
        namespace,
        metrics,
        controllers,
        ..
    } = own_controllers(&world, "pe-together-own", true).await;
    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &namespace);
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), &namespace);
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "together-key",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "together"}}}),
    );
    let before = kube_requests(&metrics);
    teams
        .create(
            &PostParams::default(),
            &team_manifest("together", "Together"),
        )
        .await
        .unwrap();
    keys.create(&PostParams::default(), &key).await.unwrap();
    wait_for(&teams, "together", "Ready for its generation", settled).await;
    wait_for(&keys, "together-key", "Ready for its generation", settled).await;
    let after = kube_requests(&metrics);
    let key_status = ("patch".to_owned(), "litellmvirtualkeys/status".to_owned());
    let writes = after.get(&key_status).copied().unwrap_or(0)
        - before.get(&key_status).copied().unwrap_or(0);
    assert_eq!(writes, 1, "one status write: {before:?} then {after:?}");
    let warnings: Vec<_> = support::provider::events(&world.kube, &namespace)
        .await
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .map(|e| (e.regarding.and_then(|r| r.name), e.reason, e.note))
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");

    delete_key_then_team(&keys, "together-key", &teams, "together").await;
    controllers.abort();
}

/// A key that waited for its team starts as soon as the team is Ready, not
/// at its next look: the key controller watches teams.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_key_starts_as_soon_as_its_team_is_ready() {
    let Some(world) = world("pe-wake").await else {
        return;
    };
    // A long poll interval: the key's next look is far past what the test
    // waits.
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "patient",
        json!({"crossplane.io/poll-interval": "10m"}),
        json!({"forProvider": {"teamRef": {"name": "slow"}}}),
    );
    let mut key = key;
    key.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "10m".into());
    let keys = world.create(&key).await;
    wait_for(&keys, "patient", "Synced=False", |k| {
        is(k, "Synced", "False")
    })
    .await;
    // A key waiting for its team is not retried on a timer: it looks
    // again at its poll interval (10 minutes here), so only the team's
    // watch can wake it within the test.

    let teams = world.create(&team_manifest("slow", "Slow")).await;
    wait_for(&teams, "slow", "team Ready", |t| is(t, "Ready", "True")).await;
    let team_ready = std::time::Instant::now();
    wait_for(&keys, "patient", "key Ready", |k| is(k, "Ready", "True")).await;
    let waited = team_ready.elapsed();
    assert!(
        waited < Duration::from_secs(6),
        "the key became Ready {waited:?} after its team, not at once"
    );
    keys.delete("patient", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "patient").await;
    teams
        .delete("slow", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "slow").await;
}
