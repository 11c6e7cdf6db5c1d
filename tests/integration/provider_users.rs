//! `LiteLLMUser` end to end, against the real Kubernetes API server and the
//! real LiteLLM proxy (docs/tenancy.md): a user is created under the
//! id the provider chose, with the ownership marker and no key of its own,
//! drift made in LiteLLM is corrected, imports follow the ownership rules,
//! and deletion removes it. Keys belong to users by `userRef` (LiteLLM's
//! `user_id`): the user's deletion waits for them, since LiteLLM deletes a
//! user's keys with the user. Tenants get no admin role, list their
//! models, and can neither import another namespace's user nor give a key
//! to one by raw id.

use crate::support;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMUser, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{LimitsRequest, UserInfo, UserRequest};
use litellm_crossplane::provider::managed::ownership::MARKER_KEY;
use serde_json::{json, Map, Value};
use support::k8s;
use support::provider::{
    at_provider, condition, delete_and_wait as delete, eventually, is, manifest, ready, refused,
    wait_for, wait_gone, world_guarded as start, World,
};

async fn live(world: &World, id: &str) -> Option<UserInfo> {
    world.litellm.user_info(id).await.expect("user read")
}

/// The tokens of the keys LiteLLM holds for the user `id`.
async fn keys_of(world: &World, id: &str) -> Vec<String> {
    let reply: Value = reqwest::Client::new()
        .get(
            url::Url::parse_with_params(&format!("{}/user/info", world.url), [("user_id", id)])
                .expect("user info URL"),
        )
        .bearer_auth(&world.master_key)
        .send()
        .await
        .expect("user info")
        .json()
        .await
        .expect("user info body");
    reply["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k["token"].as_str().map(str::to_owned))
        .collect()
}

fn email(prefix: &str) -> String {
    format!("{prefix}-{}@example.com", k8s::unique_suffix())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_user_is_created_corrected_updated_and_deleted() {
    let Some((world, _crds)) = start("pu-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let address = email("alice");
    let users = world
        .create(&manifest::<LiteLLMUser>(
            "LiteLLMUser",
            "alice",
            json!({}),
            json!({"forProvider": {
                "userEmail": address,
                "userAlias": "Alice",
                "userRole": "proxy_admin_viewer",
                "models": ["gpt-4o", "claude"],
                "maxBudget": "12.50",
                "budgetDuration": "30d",
                "tpmLimit": 1000,
                "maxParallelRequests": 4,
                "metadata": {"dept": "ml"},
            }}),
        ))
        .await;
    let user = ready(&users, "alice").await;
    let id = user.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{ns}.alice"), "chosen before the create");
    let observed = at_provider(&user);
    assert_eq!(observed["userId"], id.as_str());
    assert_eq!(observed["userRole"], "proxy_admin_viewer");
    assert_eq!(observed["maxBudget"], "12.5");

    let got = live(&world, &id).await.expect("in LiteLLM");
    assert_eq!(got.user_email.as_deref(), Some(address.as_str()));
    assert_eq!(got.user_alias.as_deref(), Some("Alice"));
    assert_eq!(got.user_role.as_deref(), Some("proxy_admin_viewer"));
    let mut models = got.models.clone();
    models.sort();
    assert_eq!(models, ["claude", "gpt-4o"]);
    assert_eq!(got.max_budget, Some(12.5));
    assert_eq!(got.max_parallel_requests, Some(4));
    let metadata = got.metadata.clone().unwrap();
    assert_eq!(metadata["dept"], "ml");
    assert_eq!(metadata[MARKER_KEY]["namespace"], ns.as_str());
    assert_eq!(metadata[MARKER_KEY]["name"], "alice");
    assert_eq!(
        keys_of(&world, &id).await,
        Vec::<String>::new(),
        "no key made with the user"
    );

    // Drift made in LiteLLM's UI: corrected on the next poll.
    world
        .litellm
        .user_update(&UserRequest {
            user_id: id.clone(),
            user_alias: Some("Mallory".into()),
            user_role: Some("proxy_admin".into()),
            limits: LimitsRequest {
                tpm_limit: Some(1),
                ..LimitsRequest::default()
            },
            metadata: Some(Map::new()),
            ..UserRequest::default()
        })
        .await
        .unwrap();
    eventually("the drift corrected", || async {
        let got = live(&world, &id).await?;
        let marked = got
            .metadata
            .as_ref()
            .is_some_and(|m| m.contains_key(MARKER_KEY) && m.get("dept") == Some(&json!("ml")));
        (got.user_alias.as_deref() == Some("Alice")
            && got.user_role.as_deref() == Some("proxy_admin_viewer")
            && got.tpm_limit == Some(1000)
            && marked)
            .then_some(())
    })
    .await;

    // A change of the spec reaches LiteLLM.
    users
        .patch(
            "alice",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"maxBudget": "20", "rpmLimit": 5}}})),
        )
        .await
        .unwrap();
    eventually("the update", || async {
        let got = live(&world, &id).await?;
        (got.max_budget == Some(20.0) && got.rpm_limit == Some(5)).then_some(())
    })
    .await;

    delete(&users, "alice").await;
    assert!(live(&world, &id).await.is_none(), "deleted in LiteLLM");
}

/// A user made outside the provider, marked for `owner` if given.
async fn made_in_litellm(world: &World, id: &str, owner: Option<Value>) {
    let mut metadata = Map::new();
    metadata.insert("made_in".into(), json!("the UI"));
    if let Some(owner) = owner {
        metadata.insert(MARKER_KEY.into(), owner);
    }
    world
        .litellm
        .user_new(&UserRequest {
            user_id: id.to_owned(),
            user_alias: Some("from the UI".into()),
            user_role: Some("internal_user".into()),
            metadata: Some(metadata),
            ..UserRequest::default()
        })
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_follow_the_ownership_rules() {
    let Some((world, _crds)) = start("pu-import").await else {
        return;
    };
    let tenant = world.tenant("pu-import-tenant").await;
    let unmarked = format!("pu-unmarked-{}", k8s::unique_suffix());
    let foreign = format!("pu-foreign-{}", k8s::unique_suffix());
    made_in_litellm(&world, &unmarked, None).await;
    let stranger = json!({"cluster": support::provider::CLUSTER, "namespace": "someone-else",
                          "name": "x", "uid": "u"});
    made_in_litellm(&world, &foreign, Some(stranger.clone())).await;
    let spec = |policies: Value| json!({"managementPolicies": policies, "forProvider": {"models": ["gpt-4o"]}});

    // The platform's namespace imports the unmarked one, without writing.
    let platform = world
        .create(&manifest::<LiteLLMUser>(
            "LiteLLMUser",
            "imported",
            json!({EXTERNAL_NAME: unmarked}),
            spec(json!(["Observe"])),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "imported", |u| {
        is(u, "Ready", "True")
    })
    .await;
    let observed = at_provider(&imported);
    assert_eq!(observed["userId"], unmarked.as_str());
    assert_eq!(observed["userAlias"], "from the UI");

    // A tenant may not import it under any policy; nobody may import a user
    // marked for another resource.
    let tenants = tenant.api::<LiteLLMUser>(&world);
    for (name, policies) in [("peek", json!(["Observe"])), ("take", json!(["*"]))] {
        let attacker: LiteLLMUser = world.tenant_manifest(
            "LiteLLMUser",
            name,
            json!({EXTERNAL_NAME: unmarked}),
            spec(policies),
        );
        tenants
            .create(&PostParams::default(), &attacker)
            .await
            .unwrap();
        let (refused, message) = refused(&tenants, name).await;
        assert!(
            message.contains("only resources in the LiteLLMInstance's own namespace"),
            "{message}"
        );
        assert!(refused.status.unwrap().at_provider.is_none());
    }
    for (name, policies) in [
        ("foreign-peek", json!(["Observe"])),
        ("foreign-take", json!(["*"])),
    ] {
        world
            .create(&manifest::<LiteLLMUser>(
                "LiteLLMUser",
                name,
                json!({EXTERNAL_NAME: foreign}),
                spec(policies),
            ))
            .await;
        let (refused, message) = refused(&platform, name).await;
        assert!(message.contains("managed by another resource"), "{message}");
        assert!(!message.contains("someone-else"), "{message}");
        assert!(refused.status.unwrap().at_provider.is_none());
    }
    for name in ["peek", "take"] {
        delete(&tenants, name).await;
    }
    for name in ["foreign-peek", "foreign-take", "imported"] {
        delete(&platform, name).await;
    }
    // Nothing was written or deleted.
    let left = live(&world, &unmarked)
        .await
        .expect("the unmarked one stays");
    assert!(!left.metadata.unwrap().contains_key(MARKER_KEY));
    assert_eq!(
        left.models,
        Vec::<String>::new(),
        "not written by the import"
    );
    let left = live(&world, &foreign).await.expect("the foreign one stays");
    assert_eq!(left.metadata.unwrap()[MARKER_KEY], stranger);
    for id in [unmarked, foreign] {
        world.litellm.user_delete(&id).await.unwrap();
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_user_is_never_an_admin_and_lists_its_models() {
    let Some((world, _crds)) = start("pu-tenant").await else {
        return;
    };
    let tenant = world.tenant("pu-tenant-t").await;
    let tns = tenant.namespace.clone();
    let users = tenant.api::<LiteLLMUser>(&world);
    let create = |name: &str, for_provider: Value| {
        let object: LiteLLMUser = world.tenant_manifest(
            "LiteLLMUser",
            name,
            json!({}),
            json!({"forProvider": for_provider}),
        );
        let users = users.clone();
        async move {
            users.create(&PostParams::default(), &object).await.unwrap();
        }
    };

    for role in ["proxy_admin", "proxy_admin_viewer"] {
        let name = role.replace('_', "-");
        create(&name, json!({"userRole": role, "models": ["gpt-4o"]})).await;
        let (_, message) = refused(&users, &name).await;
        assert!(message.starts_with("forProvider.userRole: "), "{message}");
        assert!(message.contains(role), "{message}");
        assert!(live(&world, &format!("{tns}.{name}")).await.is_none());
    }
    create("no-models", json!({})).await;
    let (_, message) = refused(&users, "no-models").await;
    assert!(message.starts_with("forProvider.models: "), "{message}");
    create("others-models", json!({"models": ["someone/gpt-4o"]})).await;
    let (_, message) = refused(&users, "others-models").await;
    assert!(message.starts_with("forProvider.models: "), "{message}");
    for name in ["no-models", "others-models"] {
        assert!(live(&world, &format!("{tns}.{name}")).await.is_none());
    }

    // Without a role, a tenant's user is an internal user, and stays one.
    create("bob", json!({"models": ["gpt-4o", format!("{tns}/own")]})).await;
    let bob = ready(&users, "bob").await;
    let id = bob.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{tns}.bob"));
    let got = live(&world, &id).await.unwrap();
    assert_eq!(got.user_role.as_deref(), Some("internal_user"));
    let marked = got.metadata.clone().unwrap();
    world
        .litellm
        .user_update(&UserRequest {
            user_id: id.clone(),
            user_role: Some("proxy_admin".into()),
            metadata: Some(marked),
            ..UserRequest::default()
        })
        .await
        .unwrap();
    eventually("the admin role taken back", || async {
        let got = live(&world, &id).await?;
        (got.user_role.as_deref() == Some("internal_user")).then_some(())
    })
    .await;

    // A role edited into the resource later is refused as well, and the
    // user stays as it was.
    users
        .patch(
            "bob",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"userRole": "proxy_admin"}}})),
        )
        .await
        .unwrap();
    let (_, message) = refused(&users, "bob").await;
    assert!(message.starts_with("forProvider.userRole: "), "{message}");
    tenant.reconciled_again("user", 2).await;
    assert_eq!(
        live(&world, &id).await.unwrap().user_role.as_deref(),
        Some("internal_user")
    );

    for name in [
        "proxy-admin",
        "proxy-admin-viewer",
        "no-models",
        "others-models",
        "bob",
    ] {
        delete(&users, name).await;
    }
    assert!(live(&world, &id).await.is_none());
}

fn key_spec(for_provider: Value) -> Value {
    json!({"forProvider": for_provider})
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn keys_belong_to_users_by_reference_and_the_user_waits_for_them() {
    let Some((world, _crds)) = start("pu-keys").await else {
        return;
    };
    let users = world.api::<LiteLLMUser>();
    let keys = world.api::<LiteLLMVirtualKey>();

    // The key waits for a user that is not there yet, and is made once the
    // user is Ready.
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "carol-ci",
            json!({}),
            key_spec(json!({"userRef": {"name": "carol"}})),
        ))
        .await;
    let (_, message) = refused(&keys, "carol-ci").await;
    assert!(
        message.contains("userRef: LiteLLMUser") && message.contains("carol"),
        "{message}"
    );
    world
        .create(&manifest::<LiteLLMUser>(
            "LiteLLMUser",
            "carol",
            json!({}),
            json!({"forProvider": {"userEmail": email("carol")}}),
        ))
        .await;
    let user_id = ready(&users, "carol").await.annotations()[EXTERNAL_NAME].clone();
    let key = ready(&keys, "carol-ci").await;
    let token = key.annotations()[EXTERNAL_NAME].clone();
    let got = world.litellm.key_info(&token).await.unwrap().unwrap();
    assert_eq!(got.user_id.as_deref(), Some(user_id.as_str()));
    let observed = serde_json::to_value(&key.status).unwrap()["atProvider"].clone();
    assert_eq!(observed["userId"], user_id.as_str());
    assert_eq!(keys_of(&world, &user_id).await, [token.clone()]);

    // The user's deletion waits for the key: LiteLLM would take the key
    // with the user.
    users
        .delete("carol", &DeleteParams::default())
        .await
        .unwrap();
    let held = wait_for(&users, "carol", "the deletion to wait", |u| {
        condition(u, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("waiting for 1 managed resource"))
    })
    .await;
    let waiting = condition(&held, "Ready").unwrap();
    assert_eq!(waiting.reason, "Deleting");
    let message = waiting.message.unwrap();
    assert!(message.contains("LiteLLMVirtualKey carol-ci"), "{message}");
    assert!(live(&world, &user_id).await.is_some(), "kept in LiteLLM");
    assert!(world.litellm.key_info(&token).await.unwrap().is_some());

    delete(&keys, "carol-ci").await;
    wait_gone(&users, "carol").await;
    assert!(live(&world, &user_id).await.is_none(), "deleted in LiteLLM");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_gives_no_key_to_another_namespaces_user() {
    let Some((world, _crds)) = start("pu-hostile").await else {
        return;
    };
    let tenant = world.tenant("pu-hostile-t").await;
    let tns = tenant.namespace.clone();
    let users = world.api::<LiteLLMUser>();
    world
        .create(&manifest::<LiteLLMUser>(
            "LiteLLMUser",
            "dave",
            json!({}),
            json!({"forProvider": {"userRole": "proxy_admin"}}),
        ))
        .await;
    let platform_id = ready(&users, "dave").await.annotations()[EXTERNAL_NAME].clone();
    let ghost = format!("pu-ghost-{}", k8s::unique_suffix());

    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    let create = |name: &str, for_provider: Value| {
        let object: LiteLLMVirtualKey =
            world.tenant_manifest("LiteLLMVirtualKey", name, json!({}), key_spec(for_provider));
        let keys = keys.clone();
        async move {
            keys.create(&PostParams::default(), &object).await.unwrap();
        }
    };
    // By raw id: the platform's user (an admin) is not the tenant's, and a
    // user that does not exist could be made by anyone later.
    create("raw", json!({"userId": platform_id, "models": ["gpt-4o"]})).await;
    let (_, message) = refused(&keys, "raw").await;
    assert!(
        message.contains(&format!("LiteLLM user {platform_id}"))
            && message.contains("managed by another resource"),
        "{message}"
    );
    create("ghost", json!({"userId": ghost, "models": ["gpt-4o"]})).await;
    let (_, message) = refused(&keys, "ghost").await;
    assert!(
        message.contains(&format!("LiteLLM user {ghost} does not exist")),
        "{message}"
    );
    // By reference: found only in the key's own namespace.
    create(
        "by-ref",
        json!({"userRef": {"name": "dave"}, "models": ["gpt-4o"]}),
    )
    .await;
    let (_, message) = refused(&keys, "by-ref").await;
    assert!(
        message.contains(&format!("LiteLLMUser {tns}/dave not found")),
        "{message}"
    );
    assert_eq!(keys_of(&world, &platform_id).await, Vec::<String>::new());
    assert!(live(&world, &ghost).await.is_none());

    // Nor can the tenant import the platform's user to see or change it.
    let tenant_users = tenant.api::<LiteLLMUser>(&world);
    let importer: LiteLLMUser = world.tenant_manifest(
        "LiteLLMUser",
        "dave",
        json!({EXTERNAL_NAME: platform_id}),
        json!({"managementPolicies": ["Observe"], "forProvider": {"models": ["gpt-4o"]}}),
    );
    tenant_users
        .create(&PostParams::default(), &importer)
        .await
        .unwrap();
    let (refused_user, message) = refused(&tenant_users, "dave").await;
    assert!(message.contains("managed by another resource"), "{message}");
    assert!(!message.contains(&world.namespace), "{message}");
    assert!(refused_user.status.unwrap().at_provider.is_none());

    // The tenant's own user takes the tenant's keys.
    let own: LiteLLMUser = world.tenant_manifest(
        "LiteLLMUser",
        "erin",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"]}}),
    );
    tenant_users
        .create(&PostParams::default(), &own)
        .await
        .unwrap();
    let own_id = ready(&tenant_users, "erin").await.annotations()[EXTERNAL_NAME].clone();
    create("own", json!({"userId": own_id, "models": ["gpt-4o"]})).await;
    let token = ready(&keys, "own").await.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(keys_of(&world, &own_id).await, [token]);

    for name in ["raw", "ghost", "by-ref", "own"] {
        delete(&keys, name).await;
    }
    for name in ["dave", "erin"] {
        delete(&tenant_users, name).await;
    }
    delete(&users, "dave").await;
    assert!(live(&world, &platform_id).await.is_none());
    assert!(live(&world, &own_id).await.is_none());
}

/// The members LiteLLM lists for `team_id`, LiteLLM's own admin left out:
/// (user id, role, budget in the team).
async fn members_of(world: &World, team_id: &str) -> Vec<(String, String, Option<f64>)> {
    let team = world
        .litellm
        .team_info(team_id)
        .await
        .unwrap()
        .expect("team");
    let mut members: Vec<_> = team
        .members_with_roles
        .iter()
        .filter_map(|m| {
            let id = m.user_id.clone()?;
            (id != "default_user_id").then(|| {
                let budget = team
                    .memberships
                    .iter()
                    .find(|b| b.user_id == id)
                    .and_then(|b| b.litellm_budget_table.as_ref()?.max_budget);
                (id, m.role.clone(), budget)
            })
        })
        .collect();
    members.sort_by(|a, b| a.0.cmp(&b.0));
    members
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_teams_members_are_its_users_with_roles_and_budgets() {
    let Some((world, _crds)) = start("pu-members").await else {
        return;
    };
    let ns = world.namespace.clone();
    let users = world.api::<LiteLLMUser>();
    let teams = world.api::<litellm_crossplane::api::LiteLLMTeam>();
    for name in ["alice", "bob"] {
        world
            .create(&manifest::<LiteLLMUser>(
                "LiteLLMUser",
                name,
                json!({}),
                json!({"forProvider": {"userEmail": email(name), "models": ["gpt-4o"]}}),
            ))
            .await;
        ready(&users, name).await;
    }
    let (alice, bob) = (format!("{ns}.alice"), format!("{ns}.bob"));
    world
        .create(&manifest::<litellm_crossplane::api::LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"models": ["gpt-4o"], "members": [
                {"userRef": {"name": "alice"}, "maxBudgetInTeam": "5"},
                {"userRef": {"name": "bob"}},
            ]}}),
        ))
        .await;
    let team = ready(&teams, "web").await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(
        members_of(&world, &team_id).await,
        [
            (alice.clone(), "user".to_owned(), Some(5.0)),
            (bob.clone(), "user".to_owned(), None)
        ]
    );

    // A member added in the UI is drift and goes; a changed budget comes back.
    let stranger = format!("pu-stranger-{}", k8s::unique_suffix());
    world
        .litellm
        .user_new(&UserRequest {
            user_id: stranger.clone(),
            ..UserRequest::default()
        })
        .await
        .unwrap();
    world
        .litellm
        .team_member_add(&litellm_crossplane::litellm::MemberRequest {
            team_id: &team_id,
            user_id: Some(&stranger),
            user_email: None,
            role: Some("user"),
            max_budget_in_team: None,
        })
        .await
        .unwrap();
    world
        .litellm
        .team_member_update(&litellm_crossplane::litellm::MemberRequest {
            team_id: &team_id,
            user_id: Some(&alice),
            user_email: None,
            role: None,
            max_budget_in_team: Some(9.0),
        })
        .await
        .unwrap();
    eventually("the members put back", || async {
        let members = members_of(&world, &team_id).await;
        (members
            == [
                (alice.clone(), "user".to_owned(), Some(5.0)),
                (bob.clone(), "user".to_owned(), None),
            ])
        .then_some(())
    })
    .await;

    // Additive: a member added in the UI stays (an SSO-managed team).
    let alice_budget = |budget: f64| litellm_crossplane::litellm::MemberRequest {
        team_id: &team_id,
        user_id: Some(&alice),
        user_email: None,
        role: None,
        max_budget_in_team: Some(budget),
    };
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"membersPolicy": "Additive"}}})),
        )
        .await
        .unwrap();
    wait_for(&teams, "web", "the new generation synced", |t| {
        condition(t, "Synced").and_then(|c| c.observed_generation) == t.metadata.generation
    })
    .await;
    world
        .litellm
        .team_member_add(&litellm_crossplane::litellm::MemberRequest {
            team_id: &team_id,
            user_id: Some(&stranger),
            user_email: None,
            role: Some("user"),
            max_budget_in_team: None,
        })
        .await
        .unwrap();
    world
        .litellm
        .team_member_update(&alice_budget(9.0))
        .await
        .unwrap();
    eventually("alice's budget put back", || async {
        let members = members_of(&world, &team_id).await;
        members
            .iter()
            .any(|(id, _, budget)| *id == alice && *budget == Some(5.0))
            .then_some(())
    })
    .await;
    assert!(
        members_of(&world, &team_id)
            .await
            .iter()
            .any(|(id, _, _)| *id == stranger),
        "the UI's member is left alone"
    );

    // A user's deletion waits for the team that lists it.
    users.delete("bob", &DeleteParams::default()).await.unwrap();
    world.reconciled_again("user", 3).await;
    assert!(users
        .get("bob")
        .await
        .unwrap()
        .metadata
        .deletion_timestamp
        .is_some());
    assert!(
        live(&world, &bob).await.is_some(),
        "bob kept while the team lists him"
    );

    // Exclusive again, without bob: bob and the UI's member leave the
    // team, and bob's deletion goes on.
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {
                "membersPolicy": "Exclusive",
                "members": [{"userRef": {"name": "alice"}, "maxBudgetInTeam": "5"}],
            }}})),
        )
        .await
        .unwrap();
    wait_gone(&users, "bob").await;
    eventually("only alice is left", || async {
        let members = members_of(&world, &team_id).await;
        (members == [(alice.clone(), "user".to_owned(), Some(5.0))]).then_some(())
    })
    .await;

    // An admin role needs a licence: a clear refusal.
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {
                "members": [{"userRef": {"name": "alice"}, "role": "admin"}],
            }}})),
        )
        .await
        .unwrap();
    let (_, message) = refused(&teams, "web").await;
    assert!(
        message.starts_with("forProvider.members[0].role: "),
        "{message}"
    );
    assert!(message.contains("Enterprise licence"), "{message}");
    delete(&teams, "web").await;
    delete(&users, "alice").await;
    world.litellm.user_delete(&stranger).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_team_names_members_by_reference_only() {
    let Some((world, _crds)) = start("pu-tmembers").await else {
        return;
    };
    let tenant = world.tenant("pu-tmembers-tenant").await;
    let teams = tenant.api::<litellm_crossplane::api::LiteLLMTeam>(&world);
    let team: litellm_crossplane::api::LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "grab",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"],
                               "members": [{"userId": "default_user_id", "role": "user"}]}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let (refused_team, message) = refused(&teams, "grab").await;
    assert!(
        message.starts_with("forProvider.members[0].userId: "),
        "{message}"
    );
    if let Some(id) = refused_team.annotations().get(EXTERNAL_NAME) {
        assert!(world.litellm.team_info(id).await.unwrap().is_none());
    }
    // Nor by email: any user of the proxy has one.
    let team: litellm_crossplane::api::LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "grab-by-email",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"],
                               "members": [{"userEmail": email("someone-else")}]}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let (refused_team, message) = refused(&teams, "grab-by-email").await;
    assert!(
        message.starts_with("forProvider.members[0].userEmail: "),
        "{message}"
    );
    if let Some(id) = refused_team.annotations().get(EXTERNAL_NAME) {
        assert!(world.litellm.team_info(id).await.unwrap().is_none());
    }
    delete(&teams, "grab").await;
    delete(&teams, "grab-by-email").await;
}

/// A member by email, from the platform's namespace: LiteLLM finds (or
/// creates) the user with that email; the member's budget is corrected by
/// the id LiteLLM holds it under, and it goes when the spec drops it.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_member_by_email_is_found_by_its_email() {
    let Some((world, _crds)) = start("pu-email").await else {
        return;
    };
    let teams = world.api::<litellm_crossplane::api::LiteLLMTeam>();
    let carol = email(&format!("carol-{}", k8s::unique_suffix()));
    world
        .create(&manifest::<litellm_crossplane::api::LiteLLMTeam>(
            "LiteLLMTeam",
            "mail",
            json!({}),
            json!({"forProvider": {"models": ["gpt-4o"], "members": [
                {"userEmail": carol.to_uppercase(), "maxBudgetInTeam": "2"},
            ]}}),
        ))
        .await;
    let team = ready(&teams, "mail").await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let info = world.litellm.team_info(&team_id).await.unwrap().unwrap();
    let member = info
        .members_with_roles
        .iter()
        .find(|m| {
            m.user_email
                .as_deref()
                .is_some_and(|e| e.eq_ignore_ascii_case(&carol))
        })
        .expect("carol is a member");
    let carol_id = member.user_id.clone().unwrap();
    assert_eq!(
        members_of(&world, &team_id).await,
        [(carol_id.clone(), "user".to_owned(), Some(2.0))]
    );
    world
        .litellm
        .team_member_update(&litellm_crossplane::litellm::MemberRequest {
            team_id: &team_id,
            user_id: Some(&carol_id),
            user_email: None,
            role: None,
            max_budget_in_team: Some(9.0),
        })
        .await
        .unwrap();
    eventually("carol's budget put back", || async {
        (members_of(&world, &team_id).await == [(carol_id.clone(), "user".to_owned(), Some(2.0))])
            .then_some(())
    })
    .await;
    teams
        .patch(
            "mail",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"members": []}}})),
        )
        .await
        .unwrap();
    eventually("carol removed", || async {
        members_of(&world, &team_id).await.is_empty().then_some(())
    })
    .await;
    delete(&teams, "mail").await;
    // LiteLLM made the user; it stays, no resource owns it.
    world.litellm.user_delete(&carol_id).await.unwrap();
}
