//! Re-pointing an attached LiteLLMInstance between two endpoints of the same
//! proxy, as when a manifests deployment (`litellm-service:4000`) moves to
//! LiteLLM's component chart (admin API on `litellm-backend:4001`, LLM
//! traffic on `litellm-gateway:4000`) with the same database and master key.
//! Both chart Services are played by forwarding proxies
//! (`support::fault_proxy`, no fault armed) in front of the real LiteLLM,
//! which count what reaches them. The entity controllers and the
//! LiteLLMInstance controller run in-process against the real Kubernetes API
//! server.

use crate::support;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{
    LiteLLMBudget, LiteLLMInstance, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey,
};
use litellm_crossplane::litellm::{token_of, BudgetInfo, KeyInfo, ModelInfo, Secret, TeamInfo};
use litellm_crossplane::provider::kinds::key::SECRET_KEY;
use litellm_crossplane::provider::managed::contract::ManagedKind;
use serde_json::json;
use support::fault_proxy::FaultProxy;
use support::k8s;
use support::provider::INSTANCE;
use support::provider::{eventually, is, manifest, wait_for, wait_gone, world_with, Setup, World};

/// What the provider reads to observe each entity of this test: its read,
/// and for the team and the key the pages of `/v2/team/list` and
/// `/key/list` that answer their polls where the proxy's teams and keys
/// fit few pages. `/budget/info` is LiteLLM's read of a
/// budget, a POST by design.
const OBSERVES: [&[&str]; 4] = [
    &["GET /team/info", "GET /v2/team/list"],
    &["POST /budget/info"],
    &["GET /key/info", "GET /key/list"],
    &["GET /v2/model/info"],
];
/// The LiteLLMInstance controller's probes of an attached proxy.
const PROBES: [&str; 2] = ["GET /health/liveliness", "GET /health/readiness"];

fn ready_and_synced<K: ManagedKind>(object: &K) -> bool {
    is(object, "Ready", "True") && is(object, "Synced", "True")
}

/// Every LiteLLM object of the test as the real proxy has it, plus every
/// object holding one of their names: a recreated or duplicated object shows
/// up as a changed `created_at`/`updated_at` or an extra id.
#[derive(Debug, PartialEq)]
struct Snapshot {
    team: TeamInfo,
    budget: BudgetInfo,
    key: KeyInfo,
    model: ModelInfo,
    teams_with_alias: Vec<String>,
    keys_with_alias: Vec<String>,
    models_with_name: Vec<String>,
}

/// The external names of the test's resources.
struct Ids {
    team: String,
    budget: String,
    key: String,
    model: String,
}

impl Ids {
    async fn read(world: &World) -> Self {
        async fn id<K: ManagedKind>(world: &World, name: &str) -> String {
            let object = world.api::<K>().get(name).await.expect("resource");
            object.annotations()[EXTERNAL_NAME].clone()
        }
        Self {
            team: id::<LiteLLMTeam>(world, "web").await,
            budget: id::<LiteLLMBudget>(world, "monthly").await,
            key: id::<LiteLLMVirtualKey>(world, "ci").await,
            model: id::<LiteLLMModel>(world, "gpt").await,
        }
    }
}

/// Ids of the models named `name`; `/model/info` lists every model of the
/// proxy in one page.
async fn models_with_name(world: &World, name: &str) -> Vec<String> {
    let reply: serde_json::Value = reqwest::Client::new()
        .get(format!("{}/model/info", world.url))
        .bearer_auth(&world.master_key)
        .send()
        .await
        .expect("model list")
        .error_for_status()
        .expect("model list answered")
        .json()
        .await
        .expect("model list body");
    reply["data"]
        .as_array()
        .expect("a list of models")
        .iter()
        .filter(|model| model["model_name"] == name)
        .map(|model| {
            model["model_info"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Read from the real proxy directly, so the counting proxies see only the
/// provider's and the consumer's requests.
async fn snapshot(world: &World, ids: &Ids, aliases: &Aliases) -> Snapshot {
    let litellm = &world.litellm;
    Snapshot {
        team: world.team_info(&ids.team).await.expect("team"),
        budget: litellm
            .budget_info(&ids.budget)
            .await
            .unwrap()
            .expect("budget"),
        key: litellm.key_info(&ids.key).await.unwrap().expect("key"),
        model: litellm
            .model_info(&ids.model)
            .await
            .unwrap()
            .expect("model"),
        teams_with_alias: world.team_ids_with_alias(&aliases.team).await,
        keys_with_alias: litellm.key_list_by_alias(&aliases.key).await.unwrap(),
        models_with_name: models_with_name(world, &aliases.model).await,
    }
}

/// Unique names of this test's LiteLLM objects.
struct Aliases {
    team: String,
    key: String,
    model: String,
}

/// `(key, endpoint)` of a key's connection Secret.
async fn connection(world: &World, name: &str) -> (Secret, String) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let data = secrets
        .get(name)
        .await
        .expect("connection Secret")
        .data
        .expect("Secret data");
    let text = |key: &str| String::from_utf8(data[key].0.clone()).expect("UTF-8");
    (Secret::new(text(SECRET_KEY)), text("endpoint"))
}

async fn create_entities(world: &World, aliases: &Aliases) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let upstream = serde_json::from_value(
        json!({"metadata": {"name": "upstream"}, "stringData": {"apiKey": "sk-upstream-e2e"}}),
    )
    .unwrap();
    secrets
        .create(&PostParams::default(), &upstream)
        .await
        .unwrap();
    world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"teamAlias": aliases.team, "maxBudget": "10"}}),
        ))
        .await;
    world
        .create(&manifest::<LiteLLMBudget>(
            "LiteLLMBudget",
            "monthly",
            json!({}),
            json!({"forProvider": {"maxBudget": "100"}}),
        ))
        .await;
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "ci",
            json!({}),
            json!({"forProvider": {
                "keyAlias": aliases.key,
                "teamRef": {"name": "web"},
                "budgetRef": {"name": "monthly"},
            }}),
        ))
        .await;
    world
        .create(&manifest::<LiteLLMModel>(
            "LiteLLMModel",
            "gpt",
            json!({}),
            json!({"forProvider": {
                "modelName": aliases.model,
                "litellmParams": {
                    "model": "openai/gpt-4o",
                    // A closed loopback port: nothing is ever called.
                    "apiBase": "http://127.0.0.1:9",
                    "apiKeySecretRef": {"name": "upstream", "key": "apiKey"},
                },
            }}),
        ))
        .await;
}

async fn wait_all_ready(world: &World, what: &str) {
    wait_for(&world.api::<LiteLLMTeam>(), "web", what, ready_and_synced).await;
    wait_for(
        &world.api::<LiteLLMBudget>(),
        "monthly",
        what,
        ready_and_synced,
    )
    .await;
    wait_for(
        &world.api::<LiteLLMVirtualKey>(),
        "ci",
        what,
        ready_and_synced,
    )
    .await;
    wait_for(&world.api::<LiteLLMModel>(), "gpt", what, ready_and_synced).await;
}

async fn delete_all(world: &World) {
    async fn delete<K: ManagedKind>(world: &World, name: &str) {
        let api = world.api::<K>();
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&api, name).await;
    }
    delete::<LiteLLMVirtualKey>(world, "ci").await;
    delete::<LiteLLMModel>(world, "gpt").await;
    delete::<LiteLLMTeam>(world, "web").await;
    delete::<LiteLLMBudget>(world, "monthly").await;
}

/// The test's entities, Ready at the instance's first endpoint, and what
/// LiteLLM holds for them.
struct Before {
    aliases: Aliases,
    ids: Ids,
    snapshot: Snapshot,
}

/// Creates the entities at the instance's first endpoint and records them.
async fn entities_before_the_move(world: &World) -> Before {
    let suffix = k8s::unique_suffix();
    let aliases = Aliases {
        team: format!("Repoint {suffix}"),
        key: format!("repoint-{suffix}"),
        model: format!("repoint-{suffix}"),
    };
    create_entities(world, &aliases).await;
    wait_all_ready(world, "Ready at the first endpoint").await;
    let ids = Ids::read(world).await;
    let snapshot = snapshot(world, &ids, &aliases).await;
    for (kind, created, updated) in [
        ("team", &snapshot.team.created_at, &snapshot.team.updated_at),
        (
            "budget",
            &snapshot.budget.created_at,
            &snapshot.budget.updated_at,
        ),
        ("key", &snapshot.key.created_at, &snapshot.key.updated_at),
    ] {
        assert!(created.is_some() && updated.is_some(), "{kind} timestamps");
    }
    assert_eq!(snapshot.teams_with_alias, [ids.team.as_str()]);
    assert_eq!(snapshot.keys_with_alias, [ids.key.as_str()]);
    assert_eq!(snapshot.models_with_name, [ids.model.as_str()]);
    let (key, endpoint) = connection(world, "ci-key").await;
    assert_eq!(endpoint, world.endpoint);
    assert_eq!(token_of(&key), ids.key);
    Before {
        aliases,
        ids,
        snapshot,
    }
}

/// The chart's Services in front of the same proxy: the backend (admin API)
/// and the gateway (LLM traffic).
struct Chart {
    backend: FaultProxy,
    gateway: FaultProxy,
}

impl Chart {
    async fn start(world: &World) -> Self {
        Self {
            backend: FaultProxy::start(&world.url).await,
            gateway: FaultProxy::start(&world.url).await,
        }
    }

    /// `spec.workload` of an instance attached to the chart (the gateway
    /// with a trailing `/`, which the status trims).
    fn workload(&self) -> serde_json::Value {
        json!({
            "managed": false,
            "endpoint": self.backend.url(),
            "gatewayEndpoint": format!("{}/", self.gateway.url()),
        })
    }
}

/// After `spec.workload` was re-pointed at `chart`: the status follows,
/// every entity is polled through the backend, nothing in LiteLLM changed,
/// only reads reached the backend, and the key made before the move works
/// at the gateway its Secret now names. Deletes the entities at the end.
async fn assert_moved_without_changes(world: &World, chart: &Chart, before: &Before) {
    let Chart { backend, gateway } = chart;
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    eventually("the instance status to follow", || async {
        let status = instances.get(INSTANCE).await.unwrap().status?;
        let moved = status.ready
            && status.endpoint.as_deref() == Some(backend.url())
            && status.gateway_endpoint.as_deref() == Some(gateway.url());
        moved.then_some(())
    })
    .await;
    let polled = eventually("two polls of every entity through the backend", || async {
        let routes = backend.routes();
        let polled = OBSERVES.iter().all(|reads| {
            let count: u32 = reads
                .iter()
                .map(|r| routes.get(*r).copied().unwrap_or(0))
                .sum();
            count >= 2
        });
        polled.then_some(routes)
    })
    .await;
    eventually("the key's Secret to name the gateway", || async {
        let (_, endpoint) = connection(world, "ci-key").await;
        (endpoint == gateway.url()).then_some(())
    })
    .await;
    wait_all_ready(world, "still Ready through the backend").await;

    let ids = &before.ids;
    let after = snapshot(world, ids, &before.aliases).await;
    assert_eq!(after, before.snapshot, "LiteLLM objects changed");
    let routes = backend.routes();
    let unexpected: BTreeMap<_, _> = routes
        .iter()
        .filter(|(route, _)| {
            !OBSERVES.iter().any(|reads| reads.contains(&route.as_str()))
                && !PROBES.contains(&route.as_str())
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "writes through the backend: {unexpected:?}"
    );
    let moved = Ids::read(world).await;
    assert_eq!(
        [moved.team, moved.budget, moved.key, moved.model],
        [&ids.team, &ids.budget, &ids.key, &ids.model].map(String::clone),
        "external names are unchanged"
    );

    // The key made before the move works where a consumer calls now.
    let (key, endpoint) = connection(world, "ci-key").await;
    let reply = reqwest::Client::new()
        .get(format!("{endpoint}/key/info"))
        .bearer_auth(key.expose())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "the key authenticates at the gateway");
    let info: serde_json::Value = reply.json().await.unwrap();
    assert_eq!(info["info"]["key_alias"], before.aliases.key.as_str());
    assert_eq!(
        gateway.routes(),
        BTreeMap::from([("GET /key/info".to_owned(), 1)]),
        "the provider never calls the gateway"
    );
    eprintln!("backend, after two polls: {polled:?}; at the end: {routes:?}");

    delete_all(world).await;
}

/// Merges `workload` into the instance's `spec.workload`.
async fn repoint(world: &World, workload: serde_json::Value) {
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let patch = json!({"spec": {"workload": workload}});
    instances
        .patch(INSTANCE, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// The migration from a manifests deployment to the component chart: the
/// instance moves from `litellm-service:4000` to the backend, and gets the
/// gateway for consumers.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn repointing_to_other_endpoints_of_the_same_proxy_recreates_nothing() {
    let setup = Setup {
        instance_controller: true,
        ..Setup::default()
    };
    let Some(world) = world_with("prp-attached", setup).await else {
        return;
    };
    let before = entities_before_the_move(&world).await;
    let chart = Chart::start(&world).await;
    repoint(&world, chart.workload()).await;
    assert_moved_without_changes(&world, &chart, &before).await;
}

/// A provisioned instance (`managed` unset) handed over to a proxy installed
/// otherwise: `managed: false` plus the chart's endpoints. The
/// LiteLLMInstance controller starts with the switch; before it, the status
/// stands in for the provisioned Service.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn switching_a_provisioned_instance_to_attached_recreates_nothing() {
    let setup = Setup {
        provisioned: true,
        ..Setup::default()
    };
    let Some(mut world) = world_with("prp-provisioned", setup).await else {
        return;
    };
    let before = entities_before_the_move(&world).await;
    let chart = Chart::start(&world).await;
    repoint(&world, chart.workload()).await;
    world.start_instance_controller();
    assert_moved_without_changes(&world, &chart, &before).await;
}
