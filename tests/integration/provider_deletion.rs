//! Deletion order against the real API server and the real LiteLLM proxy:
//! an instance waits for every managed resource that uses it (they delete
//! their LiteLLM objects through its proxy first), a provisioned instance
//! deletes its workload only after that, and a team waits for the keys
//! that join it (LiteLLM would delete them with the team, under resources
//! that still hold them).

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::{find_condition, EXTERNAL_NAME};
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::provider::instance::{condition_type, reason};
use litellm_crossplane::provider::managed::dependents;
use serde_json::json;
use support::k8s;
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, world_with, Setup, World, INSTANCE,
};

fn team(name: &str) -> LiteLLMTeam {
    manifest(
        "LiteLLMTeam",
        name,
        json!({}),
        json!({"forProvider": {"teamAlias": name}}),
    )
}

fn key(name: &str, team_link: serde_json::Value) -> LiteLLMVirtualKey {
    manifest(
        "LiteLLMVirtualKey",
        name,
        json!({}),
        json!({"forProvider": team_link}),
    )
}

async fn ready<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> K {
    wait_for(api, name, &format!("{name} Ready"), |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

/// The instance's `Deleting` condition message, once it has one.
async fn deleting_message(world: &World) -> String {
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    eventually(
        "the instance to say what its deletion waits for",
        || async {
            let instance = instances.get(INSTANCE).await.unwrap();
            let status = instance.status?;
            let deleting = find_condition(&status.conditions, condition_type::DELETING)?;
            assert_eq!(deleting.reason, reason::WAITING_FOR_DEPENDENTS);
            deleting.message.clone()
        },
    )
    .await
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_instance_waits_for_its_dependents_which_delete_their_objects_in_litellm_first() {
    let setup = Setup {
        instance_controller: true,
        ..Setup::default()
    };
    let Some(world) = world_with("del-instance", setup).await else {
        return;
    };
    let teams = world.create(&team("web")).await;
    let keys = world
        .create(&key("ci", json!({"teamRef": {"name": "web"}})))
        .await;
    let team_id = ready(&teams, "web").await.annotations()[EXTERNAL_NAME].clone();
    let token = ready(&keys, "ci").await.annotations()[EXTERNAL_NAME].clone();

    // The instance goes first, as a prune or a careless delete does it.
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    instances
        .delete(INSTANCE, &DeleteParams::default())
        .await
        .unwrap();
    let message = deleting_message(&world).await;
    assert!(
        message.contains("waiting for 2 managed resources")
            && message.contains("1 LiteLLMTeam")
            && message.contains("1 LiteLLMVirtualKey")
            && message.contains("LiteLLMVirtualKey ci"),
        "{message}"
    );
    // Nothing new is done in a proxy on its way out, and nothing is lost.
    let key_now = wait_for(&keys, "ci", "the key to see its instance going", |k| {
        condition(k, "Synced")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("is being deleted"))
    })
    .await;
    assert_eq!(key_now.annotations()[EXTERNAL_NAME], token);
    // Polls of the key and rounds of the instance since: nothing changed.
    world.reconciled_again("key", 2).await;
    world.reconciled_again("instance", 2).await;
    assert!(instances.get_opt(INSTANCE).await.unwrap().is_some());
    assert!(world.litellm.key_info(&token).await.unwrap().is_some());
    assert!(world.team_info(&team_id).await.is_some());

    // The dependents go, through the proxy of the instance being deleted.
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    wait_gone(&teams, "web").await;
    assert!(world.litellm.key_info(&token).await.unwrap().is_none());
    assert!(world.team_info(&team_id).await.is_none());
    eventually("the instance to be released", || async {
        instances
            .get_opt(INSTANCE)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_team_waits_for_the_keys_that_join_it_and_no_key_is_lost_or_recreated() {
    let Some(world) = world_with("del-team", Setup::default()).await else {
        return;
    };
    let teams = world.create(&team("web")).await;
    let team_id = ready(&teams, "web").await.annotations()[EXTERNAL_NAME].clone();
    let keys = world
        .create(&key("by-ref", json!({"teamRef": {"name": "web"}})))
        .await;
    world
        .create(&key("by-id", json!({"teamId": team_id})))
        .await;
    let by_ref = ready(&keys, "by-ref").await.annotations()[EXTERNAL_NAME].clone();
    let by_id = ready(&keys, "by-id").await.annotations()[EXTERNAL_NAME].clone();

    teams.delete("web", &DeleteParams::default()).await.unwrap();
    let waiting = wait_for(&teams, "web", "the team to wait for its keys", |t| {
        condition(t, "Ready").is_some_and(|c| {
            c.reason == "Deleting" && c.message.is_some_and(|m| m.contains("2 LiteLLMVirtualKey"))
        })
    })
    .await;
    let message = condition(&waiting, "Ready").unwrap().message.unwrap();
    assert!(
        message.contains("LiteLLMVirtualKey by-id") && message.contains("LiteLLMVirtualKey by-ref"),
        "{message}"
    );
    // Meanwhile, through more reconciliations of the team and the keys,
    // the team and both keys live on, unchanged: LiteLLM has not taken the
    // keys with the team, and nothing was re-created.
    world.reconciled_again("team", 2).await;
    world.reconciled_again("key", 4).await;
    assert!(world.team_info(&team_id).await.is_some());
    for (name, token) in [("by-ref", &by_ref), ("by-id", &by_id)] {
        assert!(world.litellm.key_info(token).await.unwrap().is_some());
        let now = keys.get(name).await.unwrap();
        assert_eq!(&now.annotations()[EXTERNAL_NAME], token, "{name}");
        assert!(is(&now, "Ready", "True"), "{name}");
    }

    // One key goes: the team still waits for the other.
    keys.delete("by-ref", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "by-ref").await;
    wait_for(&teams, "web", "the team to wait for one key", |t| {
        condition(t, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("1 managed resource that uses it"))
    })
    .await;
    assert!(world.litellm.key_info(&by_ref).await.unwrap().is_none());
    assert!(world.team_info(&team_id).await.is_some());

    keys.delete("by-id", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "by-id").await;
    wait_gone(&teams, "web").await;
    assert!(world.litellm.key_info(&by_id).await.unwrap().is_none());
    assert!(world.team_info(&team_id).await.is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_provisioned_instance_deletes_its_workload_after_its_dependents_and_keeps_its_keys() {
    let Some(mut run) = support::instance::prepare("del-workload").await else {
        return;
    };
    run.resume();
    run.create("gw", json!({"masterKey": {"autoGenerate": true}}))
        .await;
    run.wait_for_object::<Deployment>("gw").await;
    run.observed("gw").await;
    // A dependent (no entity controller runs here: only its reference
    // counts).
    let teams: Api<LiteLLMTeam> = Api::namespaced(run.client.clone(), &run.namespace);
    let mut dependent = team("web");
    dependent.spec.managed.instance_ref.name = "gw".into();
    teams
        .create(&PostParams::default(), &dependent)
        .await
        .unwrap();

    run.instances()
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    let waiting = run
        .wait_for("gw", |i| {
            i.status
                .as_ref()
                .is_some_and(|s| find_condition(&s.conditions, condition_type::DELETING).is_some())
        })
        .await;
    let status = waiting.status.unwrap();
    let deleting = find_condition(&status.conditions, condition_type::DELETING).unwrap();
    assert!(
        deleting
            .message
            .as_deref()
            .is_some_and(|m| m.contains("1 LiteLLMTeam (LiteLLMTeam web)")),
        "{deleting:?}"
    );
    run.reconciled_again(2).await;
    assert!(
        run.api::<Deployment>()
            .get_opt("gw")
            .await
            .unwrap()
            .is_some(),
        "the proxy runs while resources may still need it"
    );

    teams.delete("web", &DeleteParams::default()).await.unwrap();
    for _ in 0..200 {
        if run.instances().get_opt("gw").await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt("gw").await.unwrap().is_none());
    // The provider deleted the workload itself (this API server has no
    // garbage collector) and left the generated keys.
    assert!(run.names::<Deployment>().await.is_empty());
    assert!(run.names::<Service>().await.is_empty());
    assert!(run.names::<ConfigMap>().await.is_empty());
    assert!(run.names::<ServiceAccount>().await.is_empty());
    let mut secrets = run.names::<Secret>().await;
    secrets.sort();
    assert_eq!(secrets, ["gw-master-key", "gw-salt-key"]);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn only_resources_of_admitted_namespaces_hold_up_an_instance() {
    let Some(world) = world_with("del-admit", Setup::default()).await else {
        return;
    };
    let tenant = world.tenant("del-admitted").await;
    let outsider = k8s::namespace(&world.kube, "del-outsider").await;
    let key_spec = || {
        world.tenant_manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "paused",
            json!({"crossplane.io/paused": "true"}),
            json!({"forProvider": {}}),
        )
    };
    tenant
        .api::<LiteLLMVirtualKey>(&world)
        .create(&PostParams::default(), &key_spec())
        .await
        .unwrap();
    // A namespace the instance does not admit cannot keep it alive.
    Api::<LiteLLMVirtualKey>::namespaced(world.kube.clone(), &outsider)
        .create(&PostParams::default(), &key_spec())
        .await
        .unwrap();
    // Another instance's resources do not count either.
    let mut elsewhere = team("other");
    elsewhere.spec.managed.instance_ref.name = "another".into();
    world.create(&elsewhere).await;
    world.create(&team("web")).await;

    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let instance = instances.get(INSTANCE).await.unwrap();
    let found = dependents::of_instance(&world.kube, &instance, None)
        .await
        .unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    let message = found.describe(&world.namespace);
    assert!(
        message.contains(
            "1 LiteLLMTeam, 1 LiteLLMVirtualKey (LiteLLMTeam web; 1 in other namespaces)"
        ),
        "{message}"
    );
    assert!(!message.contains(&tenant.namespace), "{message}");
    // Scoped to the instance's namespace, as a namespaced provider sees it.
    let scoped = dependents::of_instance(&world.kube, &instance, Some(&world.namespace))
        .await
        .unwrap();
    assert_eq!(scoped.len(), 1, "{scoped:?}");
}

/// Only keys of the team's own namespace hold up its deletion: a tenant
/// whose key names another namespace's team by raw id (which the provider
/// refuses to create anyway) cannot keep that team alive.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_key_of_another_namespace_does_not_hold_up_a_team() {
    let Some(world) = world_with("del-foreign", Setup::default()).await else {
        return;
    };
    let tenant = world.tenant("del-foreign-tenant").await;
    let teams = world.create(&team("shared")).await;
    let team_id = ready(&teams, "shared").await.annotations()[EXTERNAL_NAME].clone();
    let squatter: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "squatter",
        json!({}),
        json!({"forProvider": {"teamId": team_id}}),
    );
    let tenant_keys = tenant.api::<LiteLLMVirtualKey>(&world);
    tenant_keys
        .create(&PostParams::default(), &squatter)
        .await
        .unwrap();
    wait_for(&tenant_keys, "squatter", "the foreign join refused", |k| {
        is(k, "Synced", "False")
    })
    .await;

    teams
        .delete("shared", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "shared").await;
    assert!(world.team_info(&team_id).await.is_none());
    tenant_keys
        .delete("squatter", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&tenant_keys, "squatter").await;
}

/// Deletions that confirm at the same moment that nobody joins them (a
/// thousand teams deleted together, each once its keys are gone from the
/// cache) share their lists from the API server: a few lists of the
/// namespace's keys, not one each, and each still holds every key created
/// before it was asked for.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn deletions_confirming_at_once_share_their_live_lists() {
    use kube::runtime::reflector;
    use litellm_crossplane::provider::telemetry::metrics::Metrics;
    use litellm_crossplane::provider::watch::cache::{
        Cache, Kube, Reflected, Scope, Secrets, Stores,
    };
    use std::sync::Arc;

    let Some(world) = world_with("del-shared", Setup::default()).await else {
        return;
    };
    let metrics = Metrics::default();
    let stores = Stores {
        instances: Reflected::unsynced(reflector::store().0),
        teams: Reflected::unsynced(reflector::store().0),
        keys: Reflected::unsynced(reflector::store().0),
        budgets: Reflected::unsynced(reflector::store().0),
        models: Reflected::unsynced(reflector::store().0),
        credentials: Reflected::unsynced(reflector::store().0),
        users: Reflected::unsynced(reflector::store().0),
        mcp_servers: Reflected::unsynced(reflector::store().0),
        organizations: Reflected::unsynced(reflector::store().0),
        guardrails: Reflected::unsynced(reflector::store().0),
    };
    let cache = Arc::new(Cache::new(
        Scope::Namespace(world.namespace.clone()),
        stores,
        None,
        Secrets::default(),
    ));
    let kube = Kube::cached(world.counted_provider_client(&metrics), cache);
    let keys = world.create(&key("first", json!({"teamId": "t-1"}))).await;
    let lists = || async {
        let mut asking = tokio::task::JoinSet::new();
        for _ in 0..24 {
            let (kube, namespace) = (kube.clone(), world.namespace.clone());
            asking.spawn(async move { kube.list_live::<LiteLLMVirtualKey>(&namespace).await });
        }
        asking.join_all().await
    };
    let names =
        |list: &[litellm_crossplane::provider::watch::tolerant::Tolerant<LiteLLMVirtualKey>]| {
            let mut names: Vec<String> = list.iter().map(|k| k.name_any()).collect();
            names.sort();
            names
        };
    for list in lists().await {
        assert_eq!(names(&list.unwrap()), ["first"]);
    }
    let sent = |metrics: &Metrics| {
        metrics
            .kube_requests()
            .get(&("list".to_owned(), "litellmvirtualkeys".to_owned()))
            .copied()
            .unwrap_or(0)
    };
    assert!(
        sent(&metrics) <= 2,
        "24 reconciliations asking at once sent {} lists",
        sent(&metrics)
    );
    // Asked after a key was created, a list is never an earlier one.
    keys.create(
        &PostParams::default(),
        &key("second", json!({"teamId": "t-1"})),
    )
    .await
    .unwrap();
    for list in lists().await {
        assert_eq!(names(&list.unwrap()), ["first", "second"]);
    }
    assert!(sent(&metrics) <= 4, "{} lists", sent(&metrics));
    // Shared within a namespace only: another tenant's deletions asking at
    // the same moment get their namespace's keys, never these.
    let other = k8s::namespace(&world.kube, "del-shared-other").await;
    let mut foreign = key("foreign", json!({"teamId": "t-1"}));
    foreign.metadata.namespace = Some(other.clone());
    Api::<LiteLLMVirtualKey>::namespaced(world.kube.clone(), &other)
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    let mut asking = tokio::task::JoinSet::new();
    for i in 0..24 {
        let kube = kube.clone();
        let namespace = if i % 2 == 0 {
            world.namespace.clone()
        } else {
            other.clone()
        };
        asking.spawn(async move {
            let list = kube.list_live::<LiteLLMVirtualKey>(&namespace).await;
            (namespace, list)
        });
    }
    for (namespace, list) in asking.join_all().await {
        let expected: &[&str] = if namespace == other {
            &["foreign"]
        } else {
            &["first", "second"]
        };
        assert_eq!(names(&list.unwrap()), expected, "{namespace}");
    }
}

/// Whether any key still joins a team being deleted, the API server is
/// asked for the keys that name it (the key CRD's selectable fields), by
/// reference and by id: two small lists, not every key of the namespace,
/// which a thousand teams deleted together would each list once. An id
/// holding the field selector's own separators names itself only, and a
/// key of another namespace that names the same team holds nothing up.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_deletion_asks_the_api_server_only_for_the_keys_that_name_it() {
    use litellm_crossplane::provider::telemetry::metrics::Metrics;
    use litellm_crossplane::provider::watch::cache::Kube;
    use litellm_crossplane::provider::watch::joins::Joins;

    let Some(world) = world_with("del-select", Setup::default()).await else {
        return;
    };
    let id = r"t,1=a\b";
    world
        .create(&key("by-ref", json!({"teamRef": {"name": "web"}})))
        .await;
    world.create(&key("by-id", json!({"teamId": id}))).await;
    // In both answers, counted once.
    world
        .create(&key(
            "by-both",
            json!({"teamRef": {"name": "web"}, "teamId": id}),
        ))
        .await;
    world
        .create(&key("other-team", json!({"teamRef": {"name": "api"}})))
        .await;
    // The id's prefix, and the id as an unescaped selector would read it.
    world.create(&key("prefix", json!({"teamId": "t"}))).await;
    world.create(&key("no-team", json!({}))).await;
    let other = k8s::namespace(&world.kube, "del-select-other").await;
    let mut foreign = key("foreign", json!({"teamRef": {"name": "web"}, "teamId": id}));
    foreign.metadata.namespace = Some(other.clone());
    Api::<LiteLLMVirtualKey>::namespaced(world.kube.clone(), &other)
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();

    let mut web = team("web");
    web.metadata.namespace = Some(world.namespace.clone());
    let metrics = Metrics::default();
    let kube = Kube::live(world.counted_provider_client(&metrics));
    let found = dependents::joining::<LiteLLMVirtualKey, _>(&kube, &web, id, Joins::Team)
        .await
        .unwrap();
    assert_eq!(found.len(), 3, "{}", found.describe(&world.namespace));
    let text = found.describe(&world.namespace);
    assert!(
        text.contains(
            "(LiteLLMVirtualKey by-both, LiteLLMVirtualKey by-id, LiteLLMVirtualKey by-ref)"
        ),
        "{text}"
    );
    let lists = metrics
        .kube_requests()
        .get(&("list".to_owned(), "litellmvirtualkeys".to_owned()))
        .copied()
        .unwrap_or(0);
    assert_eq!(
        lists, 2,
        "one list by reference and one by id, nothing more"
    );

    // What the fallback to the namespace's list rests on: a field the CRD
    // does not declare selectable (or an API server before 1.31) is
    // refused with 400, not answered with an empty list.
    let refused = kube
        .list_live_where::<LiteLLMVirtualKey>(&world.namespace, "spec.forProvider.keyAlias", "x")
        .await;
    assert!(
        matches!(&refused, Err(kube::Error::Api(status)) if status.code == 400),
        "{refused:?}"
    );

    // A team nobody names: nothing holds it up.
    let mut api_team = team("lonely");
    api_team.metadata.namespace = Some(world.namespace.clone());
    let found = dependents::joining::<LiteLLMVirtualKey, _>(&kube, &api_team, "t-9", Joins::Team)
        .await
        .unwrap();
    assert!(found.is_empty(), "{}", found.describe(&world.namespace));
}

/// As crossplane-runtime: while another controller's finalizer is on a
/// resource being deleted, its LiteLLM object stays (the other controller
/// may still need it), and the resource says why; once the other
/// finalizer goes, the object is deleted and the resource with it.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_litellm_object_is_deleted_only_once_the_providers_finalizer_is_the_last() {
    let Some(world) = world_with("del-last", Setup::default()).await else {
        return;
    };
    let teams = world.create(&team("web")).await;
    let team_id = ready(&teams, "web").await.annotations()[EXTERNAL_NAME].clone();
    let add = json!({"metadata": {"finalizers": [
        "example.org/backup",
        litellm_crossplane::provider::managed::reconciler::FINALIZER,
    ]}});
    teams
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&add),
        )
        .await
        .unwrap();
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    let waiting = wait_for(
        &teams,
        "web",
        "the team to wait for the other finalizer",
        |t| {
            condition(t, "Ready").is_some_and(|c| {
                c.reason == "Deleting"
                    && c.message.is_some_and(|m| m.contains("example.org/backup"))
            })
        },
    )
    .await;
    assert!(waiting.metadata.deletion_timestamp.is_some());
    // The reconciliation that said so deleted nothing.
    assert!(world.team_info(&team_id).await.is_some());

    let release = json!({"metadata": {"finalizers": [
        litellm_crossplane::provider::managed::reconciler::FINALIZER,
    ]}});
    teams
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&release),
        )
        .await
        .unwrap();
    wait_gone(&teams, "web").await;
    assert!(world.team_info(&team_id).await.is_none());
}

/// `crossplane.io/reconcile-requested-at`: the token is handled once (an
/// event `ReconcileRequestHandled`) and reported in
/// `status.lastHandledReconcileAt`, beside `status.observedGeneration`.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_reconcile_request_is_handled_and_reported() {
    let Some(world) = world_with("del-request", Setup::default()).await else {
        return;
    };
    let teams = world.create(&team("web")).await;
    let web = ready(&teams, "web").await;
    let status = web.status.as_ref().unwrap();
    assert_eq!(status.observed_generation, web.metadata.generation);
    let request = json!({"metadata": {"annotations": {
        "crossplane.io/reconcile-requested-at": "2026-12-06T09:00:00Z",
    }}});
    teams
        .patch(
            "web",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&request),
        )
        .await
        .unwrap();
    wait_for(&teams, "web", "the request reported handled", |t| {
        t.status
            .as_ref()
            .and_then(|s| s.last_handled_reconcile_at.as_deref())
            == Some("2026-12-06T09:00:00Z")
    })
    .await;
    let events = support::provider::events(&world.kube, &world.namespace).await;
    let handled = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("ReconcileRequestHandled"))
        .count();
    assert_eq!(handled, 1, "{events:#?}");
}
