//! A hostile tenant against the provider, end to end: the real Kubernetes
//! API server and the real LiteLLM proxy (docs/tenancy.md). The tenant may
//! create any LiteLLM resource in its own namespace, which the platform's
//! instance admits; it must never import, change, join or delete another
//! tenant's (or the platform's unmarked) LiteLLM objects, and no object it
//! writes may stop the provider.

use crate::support;

use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMBudget, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::LimitsRequest;
use litellm_crossplane::litellm::{token_of, BudgetRequest, Secret, TeamRequest};
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::ownership::MARKER_KEY;
use serde_json::json;
use support::k8s;
use support::provider::{condition, is, manifest, wait_for, wait_gone, world, World, CLUSTER};

/// A team in LiteLLM marked for a resource of another namespace, with
/// limits and metadata worth stealing a look at.
async fn foreign_team(world: &World) -> String {
    let id = format!("victim-{}", k8s::unique_suffix());
    let marker =
        json!({"cluster": CLUSTER, "namespace": "someone-else", "name": "victim", "uid": "u"});
    let team = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("Victim".into()),
        limits: LimitsRequest {
            max_budget: Some(77.0),
            ..LimitsRequest::default()
        },
        metadata: Some(
            json!({MARKER_KEY: marker, "cost-center": "secret-project"})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..TeamRequest::default()
    };
    world.litellm.team_new(&team).await.expect("foreign team");
    id
}

/// A team made outside the provider (the UI, another tool): no marker.
async fn unmarked_team(world: &World) -> String {
    let id = format!("ui-made-{}", k8s::unique_suffix());
    let team = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("Made in the UI".into()),
        limits: LimitsRequest {
            max_budget: Some(12.0),
            ..LimitsRequest::default()
        },
        ..TeamRequest::default()
    };
    world.litellm.team_new(&team).await.expect("unmarked team");
    id
}

/// The `Synced` message once the resource is refused.
async fn refusal<K: ManagedKind>(api: &Api<K>, name: &str) -> (K, String) {
    let refused = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    let message = condition(&refused, "Synced").unwrap().message.unwrap();
    (refused, message)
}

async fn delete<K: ManagedKind>(api: &Api<K>, name: &str) {
    api.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(api, name).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_observe_import_of_another_tenants_team_is_refused() {
    let Some(world) = world("pt-import").await else {
        return;
    };
    let tenant = world.tenant("pt-import-tenant").await;
    let id = foreign_team(&world).await;
    let teams = tenant.api::<LiteLLMTeam>(&world);
    for (name, policies) in [
        ("peek", json!(["Observe"])),
        ("peek-late", json!(["Observe", "LateInitialize"])),
    ] {
        let spy: LiteLLMTeam = world.tenant_manifest(
            "LiteLLMTeam",
            name,
            json!({EXTERNAL_NAME: id}),
            json!({"managementPolicies": policies, "forProvider": {}}),
        );
        teams.create(&PostParams::default(), &spy).await.unwrap();
        let (refused, message) = refusal(&teams, name).await;
        assert!(message.contains("managed by another resource"), "{message}");
        assert!(
            !message.contains("someone-else") && !message.contains("victim\""),
            "the refusal names nobody: {message}"
        );
        // Nothing of the foreign team reaches the tenant: no spend, no
        // limits, no metadata copied into forProvider.
        let at_provider = refused.status.as_ref().and_then(|s| s.at_provider.clone());
        assert_eq!(at_provider, None, "{name}");
        assert_eq!(refused.spec.for_provider.limits.max_budget, None, "{name}");
        assert_eq!(refused.spec.for_provider.metadata, None, "{name}");
        delete(&teams, name).await;
    }
    let after = world.team_info(&id).await.expect("foreign team survives");
    assert_eq!(after.team_alias.as_deref(), Some("Victim"));
    world.litellm.team_delete(&id).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn unmarked_objects_are_adopted_only_from_the_instance_namespace() {
    let Some(world) = world("pt-unmarked").await else {
        return;
    };
    let tenant = world.tenant("pt-unmarked-tenant").await;
    let id = unmarked_team(&world).await;

    let grab: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "grab",
        json!({EXTERNAL_NAME: id}),
        json!({"forProvider": {"teamAlias": "Mine"}}),
    );
    let teams = tenant.api::<LiteLLMTeam>(&world);
    teams.create(&PostParams::default(), &grab).await.unwrap();
    let (_, message) = refusal(&teams, "grab").await;
    assert!(
        message.contains("not created by this provider"),
        "{message}"
    );
    // Deleting the refused resource deletes nothing.
    delete(&teams, "grab").await;
    let live = world.team_info(&id).await.expect("unmarked team survives");
    assert_eq!(live.team_alias.as_deref(), Some("Made in the UI"));

    // The platform, in the instance's own namespace, may import it.
    let import = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "import",
        json!({EXTERNAL_NAME: id}),
        json!({"managementPolicies": ["Observe"], "forProvider": {}}),
    );
    let platform = world.create(&import).await;
    let imported = wait_for(&platform, "import", "imported", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    let at_provider = imported.status.unwrap().at_provider.unwrap();
    assert_eq!(at_provider.team_id.as_deref(), Some(id.as_str()));
    delete(&platform, "import").await;
    world.litellm.team_delete(&id).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_key_cannot_join_another_tenants_team_or_budget_by_raw_id() {
    let Some(world) = world("pt-rawid").await else {
        return;
    };
    let tenant = world.tenant("pt-rawid-tenant").await;
    let team_id = foreign_team(&world).await;
    let budget_id = format!("{CLUSTER}/someone-else/victim-{}", k8s::unique_suffix());
    world
        .litellm
        .budget_new(&BudgetRequest {
            budget_id: budget_id.clone(),
            limits: LimitsRequest {
                max_budget: Some(1000.0),
                ..LimitsRequest::default()
            },
            ..BudgetRequest::default()
        })
        .await
        .expect("foreign budget");

    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    for (name, for_provider, what) in [
        ("in-team", json!({"teamId": team_id}), "team"),
        (
            "on-budget",
            json!({"budgetId": budget_id, "models": ["gpt-4o"]}),
            "budget",
        ),
    ] {
        let key: LiteLLMVirtualKey = world.tenant_manifest(
            "LiteLLMVirtualKey",
            name,
            json!({}),
            json!({"forProvider": for_provider}),
        );
        keys.create(&PostParams::default(), &key).await.unwrap();
        let (_, message) = refusal(&keys, name).await;
        assert!(
            message.contains(&format!("refusing to put the key into LiteLLM {what}")),
            "{message}"
        );
        assert!(message.contains("managed by another resource"), "{message}");
        // No key was created in LiteLLM with the secret the provider
        // generated and stored.
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(world.kube.clone(), &tenant.namespace);
        let secret = secrets
            .get(&format!("{name}-key"))
            .await
            .expect("key Secret");
        let stored = String::from_utf8(secret.data.unwrap()["key"].0.clone()).unwrap();
        let token = token_of(&Secret::new(stored));
        assert!(
            world.litellm.key_info(&token).await.unwrap().is_none(),
            "{what}"
        );
        delete(&keys, name).await;
    }
    world.litellm.team_delete(&team_id).await.unwrap();
    world.litellm.budget_delete(&budget_id).await.unwrap();
}

/// One provider serves every tenant, and what it learns of one tenant's
/// team (it made it, and keeps that ownership in memory for a minute so a
/// key joining it reads no marker) never lets another tenant's key in:
/// the key naming that team by raw id is refused as before, while the
/// owner's own key joins it.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_team_the_provider_just_made_stays_its_owners() {
    let Some(world) = world("pt-shared").await else {
        return;
    };
    let owner = world.tenant_of_the_same_provider("pt-shared-owner").await;
    let intruder = world
        .tenant_of_the_same_provider("pt-shared-intruder")
        .await;
    let teams = owner.api::<LiteLLMTeam>(&world);
    let team: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "web",
        json!({}),
        json!({"forProvider": {"teamAlias": "Web", "models": ["gpt-4o"]}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let team = wait_for(&teams, "web", "Ready", |t| is(t, "Ready", "True")).await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();

    // At once, while the provider still holds the team as the owner's.
    let keys = intruder.api::<LiteLLMVirtualKey>(&world);
    let key: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "in-their-team",
        json!({}),
        json!({"forProvider": {"teamId": team_id}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    let (_, message) = refusal(&keys, "in-their-team").await;
    assert!(
        message.contains("refusing to put the key into LiteLLM team"),
        "{message}"
    );
    assert!(message.contains("managed by another resource"), "{message}");
    // Nothing of the owner beyond the id the intruder wrote itself.
    assert!(
        !message.replace(&team_id, "").contains(&owner.namespace),
        "names no other tenant: {message}"
    );
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(world.kube.clone(), &intruder.namespace);
    let secret = secrets.get("in-their-team-key").await.expect("key Secret");
    let stored = String::from_utf8(secret.data.unwrap()["key"].0.clone()).unwrap();
    assert!(
        world
            .litellm
            .key_info(&token_of(&Secret::new(stored)))
            .await
            .unwrap()
            .is_none(),
        "no key was made in the owner's team"
    );

    // The owner's key joins it.
    let own_keys = owner.api::<LiteLLMVirtualKey>(&world);
    let own: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "own",
        json!({}),
        json!({"forProvider": {"teamRef": {"name": "web"}}}),
    );
    own_keys.create(&PostParams::default(), &own).await.unwrap();
    let own = wait_for(&own_keys, "own", "Ready", |k| is(k, "Ready", "True")).await;
    let live = world
        .litellm
        .key_info(&own.annotations()[EXTERNAL_NAME])
        .await
        .unwrap()
        .expect("the owner's key");
    assert_eq!(live.team_id.as_deref(), Some(team_id.as_str()));

    delete(&keys, "in-their-team").await;
    delete(&own_keys, "own").await;
    delete(&teams, "web").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn budgets_carry_their_owner_in_their_id() {
    let Some(world) = world("pt-budget").await else {
        return;
    };
    let owner = world.tenant("pt-budget-owner").await;
    let thief = world.tenant("pt-budget-thief").await;
    let mine: LiteLLMBudget = world.tenant_manifest(
        "LiteLLMBudget",
        "monthly",
        json!({}),
        json!({"forProvider": {"maxBudget": "50"}}),
    );
    let budgets = owner.api::<LiteLLMBudget>(&world);
    budgets.create(&PostParams::default(), &mine).await.unwrap();
    let created = wait_for(&budgets, "monthly", "budget Ready", |b| {
        is(b, "Ready", "True")
    })
    .await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{CLUSTER}/{}/monthly", owner.namespace));

    // Another tenant names that id, under every policy.
    let stolen = thief.api::<LiteLLMBudget>(&world);
    for (name, policies) in [("steal", json!(["*"])), ("peek", json!(["Observe"]))] {
        let attacker: LiteLLMBudget = world.tenant_manifest(
            "LiteLLMBudget",
            name,
            json!({EXTERNAL_NAME: id}),
            json!({"managementPolicies": policies, "forProvider": {"maxBudget": "100000"}}),
        );
        stolen
            .create(&PostParams::default(), &attacker)
            .await
            .unwrap();
        let (refused, message) = refusal(&stolen, name).await;
        assert!(message.contains("managed by another resource"), "{message}");
        assert!(!message.contains(&owner.namespace), "{message}");
        assert!(refused.status.unwrap().at_provider.is_none());
        delete(&stolen, name).await;
    }
    let live = world
        .litellm
        .budget_info(&id)
        .await
        .unwrap()
        .expect("budget survives");
    assert_eq!(live.max_budget, Some(50.0));
    delete(&budgets, "monthly").await;
    assert!(world.litellm.budget_info(&id).await.unwrap().is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn no_poll_interval_crashes_the_provider() {
    let Some(world) = world("pt-poll").await else {
        return;
    };
    let tenant = world.tenant("pt-poll-tenant").await;
    let teams = tenant.api::<LiteLLMTeam>(&world);
    for (name, interval) in [
        ("huge", "99999999999999999999h"),
        ("tiny", "1ns"),
        ("garbage", "-1h30x"),
    ] {
        let team: LiteLLMTeam = world.tenant_manifest(
            "LiteLLMTeam",
            name,
            json!({"crossplane.io/poll-interval": interval}),
            json!({"forProvider": {"teamAlias": name, "models": ["gpt-4o"]}}),
        );
        let mut team = team;
        team.annotations_mut()
            .insert("crossplane.io/poll-interval".into(), interval.into());
        teams.create(&PostParams::default(), &team).await.unwrap();
        wait_for(&teams, name, "Ready", |t| is(t, "Ready", "True")).await;
    }
    // The controllers still serve everyone afterwards: the teams are
    // reconciled again (the tiny and garbled intervals poll at the minimum
    // or the default, the huge one at the maximum), and nothing ended.
    tenant.reconciled_again("team", 2).await;
    assert!(
        tenant.controllers_running(),
        "a poll interval ended the provider"
    );
    let after: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "after",
        json!({}),
        json!({"forProvider": {"teamAlias": "after", "models": ["gpt-4o"]}}),
    );
    teams.create(&PostParams::default(), &after).await.unwrap();
    wait_for(&teams, "after", "Ready", |t| is(t, "Ready", "True")).await;
    for name in ["huge", "tiny", "garbage", "after"] {
        delete(&teams, name).await;
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn management_policies_follow_crossplane() {
    let Some(world) = world("pt-policies").await else {
        return;
    };
    let teams = world.api::<LiteLLMTeam>();
    let unsupported = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "odd",
        json!({}),
        json!({"managementPolicies": ["Create"], "forProvider": {"teamAlias": "odd"}}),
    );
    world.create(&unsupported).await;
    let (odd, message) = refusal(&teams, "odd").await;
    assert!(message.contains("non-supported combination"), "{message}");
    assert!(message.contains("[\"Create\"]"), "{message}");
    assert!(
        !odd.annotations().contains_key(EXTERNAL_NAME),
        "nothing was created"
    );

    let paused = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "paused",
        json!({}),
        json!({"managementPolicies": [], "forProvider": {"teamAlias": "paused"}}),
    );
    world.create(&paused).await;
    let paused = wait_for(&teams, "paused", "paused", |t| {
        condition(t, "Synced").is_some_and(|c| c.reason == "ReconcilePaused")
    })
    .await;
    assert!(
        !paused.annotations().contains_key(EXTERNAL_NAME),
        "nothing was created"
    );
    let id = format!("{}.paused", world.namespace);
    assert!(world.team_info(&id).await.is_none());

    // Fixing the policies resumes: the resource converges.
    let fix = json!({"spec": {"managementPolicies": ["*"]}});
    for name in ["odd", "paused"] {
        teams
            .patch(
                name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&fix),
            )
            .await
            .unwrap();
        wait_for(&teams, name, "Ready", |t| is(t, "Ready", "True")).await;
        delete(&teams, name).await;
    }
}
