//! `LiteLLMAccessGroup` end to end, against the real Kubernetes API server
//! and the real LiteLLM proxy (docs/access-groups.md): the client's
//! contract with `/v1/access_group` as 1.108.7 keeps it; a tenant's group
//! reaches LiteLLM under the id LiteLLM chose and a name that carries its
//! owner, and gives the teams assigned to it its models at request time
//! (a team's key refused a model, then served it); a team's own drift
//! correction and the group's leave each other's assignment alone; spec
//! changes and drift made in LiteLLM are corrected; a lost external name
//! finds the same group by name (no second create); `Observe` imports an
//! unmarked group of the platform unchanged; deletion is confirmed; a
//! tenant is refused other namespaces' models, raw ids, another
//! resource's group and an unmarked one, and cannot reach another
//! namespace's team by reference; an MCP server a group names waits for
//! the group before it goes.

use crate::support;

use std::time::Duration;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMAccessGroup, LiteLLMMCPServer, LiteLLMTeam};
use litellm_crossplane::litellm::access_groups::{AccessGroup, AccessGroupRequest};
use litellm_crossplane::litellm::Error;
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::k8s;
use support::provider::{
    at_provider, condition, delete_and_wait as delete, eventually, is, manifest,
    more_reconciliations, ready, reconciles, refused, requests_by_operation, wait_for, wait_gone,
    world, World, CLUSTER,
};
use support::upstream::Upstream;

async fn live(world: &World, id: &str) -> Option<AccessGroup> {
    world
        .litellm
        .access_group_get(id)
        .await
        .expect("access group read")
}

async fn by_name(world: &World, name: &str) -> Vec<AccessGroup> {
    world
        .litellm
        .access_group_list()
        .await
        .expect("access group list")
        .into_iter()
        .filter(|g| g.access_group_name == name)
        .collect()
}

fn count(world: &World, operation: &str) -> u64 {
    world
        .litellm_requests()
        .get(operation)
        .copied()
        .unwrap_or(0)
}

/// A group as a UI would make it (no owner in its name).
fn made_in_ui(name: &str, models: &[&str]) -> AccessGroupRequest {
    AccessGroupRequest {
        access_group_id: None,
        access_group_name: name.to_owned(),
        description: Some("made in the UI".into()),
        access_model_names: models.iter().map(|m| (*m).to_owned()).collect(),
        access_mcp_server_ids: Vec::new(),
        assigned_team_ids: Vec::new(),
    }
}

async fn raw_team(world: &World, team_id: &str) -> Value {
    let reply: Value = reqwest::Client::new()
        .post(format!("{}/team/new", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"team_id": team_id, "team_alias": team_id, "models": ["none-here"]}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    reply
}

async fn team_groups(world: &World, team_id: &str) -> Vec<String> {
    let info: Value = reqwest::Client::new()
        .get(format!("{}/team/info?team_id={team_id}", world.url))
        .bearer_auth(&world.master_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    serde_json::from_value(info["team_info"]["access_group_ids"].clone()).unwrap_or_default()
}

async fn delete_raw_team(world: &World, team_id: &str) {
    reqwest::Client::new()
        .post(format!("{}/team/delete", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"team_ids": [team_id]}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
}

/// Every route of the client against the real proxy, with what 1.108.7
/// does that the kind relies on.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn contract_of_every_access_group_route() {
    let Some(world) = world("pag-contract").await else {
        return;
    };
    let client = &world.litellm;
    let suffix = k8s::unique_suffix();
    let name = format!("c/pag-contract/{suffix}");
    let team_a = format!("pag-contract-a-{suffix}");
    let team_b = format!("pag-contract-b-{suffix}");
    raw_team(&world, &team_a).await;
    raw_team(&world, &team_b).await;

    // POST: 201, LiteLLM chooses the id, whatever the body says.
    let mut body = serde_json::to_value(AccessGroupRequest {
        assigned_team_ids: vec![team_a.clone()],
        ..made_in_ui(&name, &["m-1"])
    })
    .unwrap();
    body["access_group_id"] = json!("chosen-by-the-caller");
    let reply = reqwest::Client::new()
        .post(format!("{}/v1/access_group", world.url))
        .bearer_auth(&world.master_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 201);
    let reply: Value = reply.json().await.unwrap();
    let id = reply["access_group_id"].as_str().unwrap().to_owned();
    assert_ne!(id, "chosen-by-the-caller");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    // The team carries the group.
    assert_eq!(team_groups(&world, &team_a).await, [id.as_str()]);

    // GET by id and by name.
    let got = client.access_group_get(&id).await.unwrap().expect("found");
    assert_eq!(got.access_group_name, name);
    assert_eq!(got.access_model_names, ["m-1"]);
    assert_eq!(got.assigned_team_ids, [team_a.as_str()]);
    assert_eq!(
        client
            .access_group_by_name(&name)
            .await
            .unwrap()
            .map(|g| g.access_group_id),
        Some(id.clone())
    );

    // A duplicate name: 409.
    let err = client
        .access_group_new(&made_in_ui(&name, &[]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    // An unknown team: 400.
    let err = client
        .access_group_new(&AccessGroupRequest {
            assigned_team_ids: vec![format!("pag-no-team-{suffix}")],
            ..made_in_ui(&format!("{name}-unknown"), &[])
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 400, .. }), "{err}");

    // PUT writes each field sent: teams moved (the old team lets go of
    // the group, the new one carries it), models replaced.
    let put = AccessGroupRequest {
        access_group_id: Some(id.clone()),
        access_model_names: vec!["m-2".into()],
        assigned_team_ids: vec![team_b.clone()],
        description: None,
        ..made_in_ui(&name, &[])
    };
    client.access_group_update(&put).await.unwrap();
    let got = client.access_group_get(&id).await.unwrap().unwrap();
    assert_eq!(got.access_model_names, ["m-2"]);
    assert_eq!(got.assigned_team_ids, [team_b.as_str()]);
    assert_eq!(got.description, None);
    assert!(team_groups(&world, &team_a).await.is_empty());
    assert_eq!(team_groups(&world, &team_b).await, [id.as_str()]);
    // PUT merges: a field left out is kept.
    let partial = reqwest::Client::new()
        .put(format!("{}/v1/access_group/{id}", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"description": "only this"}))
        .send()
        .await
        .unwrap();
    assert_eq!(partial.status().as_u16(), 200);
    let got = client.access_group_get(&id).await.unwrap().unwrap();
    assert_eq!(got.description.as_deref(), Some("only this"));
    assert_eq!(got.access_model_names, ["m-2"]);
    assert_eq!(got.assigned_team_ids, [team_b.as_str()]);
    // A /team/update that leaves access_group_ids out keeps the group.
    reqwest::Client::new()
        .post(format!("{}/team/update", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"team_id": team_b, "team_alias": "renamed", "models": ["none-here"]}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap();
    assert_eq!(team_groups(&world, &team_b).await, [id.as_str()]);
    // PUT of a name another group has: 409.
    let other = client
        .access_group_new(&made_in_ui(&format!("{name}-other"), &[]))
        .await
        .unwrap();
    let err = client
        .access_group_update(&AccessGroupRequest {
            access_group_name: format!("{name}-other"),
            ..put.clone()
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");

    // Missing: 404.
    let missing = "00000000-0000-4000-8000-000000000000";
    assert!(client.access_group_get(missing).await.unwrap().is_none());
    let err = client
        .access_group_update(&AccessGroupRequest {
            access_group_id: Some(missing.into()),
            ..made_in_ui(&format!("{name}-missing"), &[])
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    // DELETE (204), and again (404): gone, and the team lets go of it.
    assert!(client.access_group_delete(&id).await.unwrap());
    assert!(!client.access_group_delete(&id).await.unwrap());
    assert!(client.access_group_get(&id).await.unwrap().is_none());
    assert!(team_groups(&world, &team_b).await.is_empty());
    assert!(client.access_group_delete(&other).await.unwrap());
    delete_raw_team(&world, &team_a).await;
    delete_raw_team(&world, &team_b).await;
}

/// A key of the team `team_id`, made with the master key (an
/// application's): it may use what the team may.
async fn team_key(world: &World, team_id: &str) -> String {
    let key = format!("sk-ag-app-{}", k8s::unique_suffix());
    reqwest::Client::new()
        .post(format!("{}/key/generate", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"key": key, "team_id": team_id}))
        .send()
        .await
        .expect("key generated")
        .error_for_status()
        .expect("key accepted");
    key
}

async fn chat(world: &World, key: &str, model_name: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", world.url))
        .bearer_auth(key)
        .json(&json!({"model": model_name, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("chat completion sent")
        .status()
        .as_u16()
}

/// A tenant's group: created under LiteLLM's id with its owner in its
/// name, grants its model to its team at request time, survives the
/// team's own drift correction, is corrected, updated, found again by
/// name, and deleted (and the team loses the model).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_group_gives_its_team_its_models_and_is_corrected_and_deleted() {
    let Some(world) = world("pag-life").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let upstream = Upstream::start().await;
    let model_name = format!("ag-chat-{}", k8s::unique_suffix());
    support::provider::platform_model(&world, &upstream, "ag-chat", &model_name).await;
    let (tenant, registry) = world.tenant_counted("pag-life-t").await;
    let tenant_count = |operation: &str| {
        requests_by_operation(&registry)
            .get(operation)
            .copied()
            .unwrap_or(0)
    };
    let tns = tenant.namespace.clone();
    world
        .create_for_tenant::<LiteLLMTeam>(
            &tenant,
            "LiteLLMTeam",
            "web",
            json!({"forProvider": {"teamAlias": "web", "models": [format!("{tns}/own")]}}),
        )
        .await;
    let teams = tenant.api::<LiteLLMTeam>(&world);
    let team_id = ready(&teams, "web").await.annotations()[EXTERNAL_NAME].clone();
    let key = team_key(&world, &team_id).await;
    let status = chat(&world, &key, &model_name).await;
    assert!(
        (400..500).contains(&status),
        "a model the team lacks is refused: {status}"
    );

    world
        .create_for_tenant::<LiteLLMAccessGroup>(
            &tenant,
            "LiteLLMAccessGroup",
            "research",
            json!({"forProvider": {
                "description": "research models",
                "models": [model_name],
                "teamRefs": [{"name": "web"}],
            }}),
        )
        .await;
    let groups = tenant.api::<LiteLLMAccessGroup>(&world);
    let created = ready(&groups, "research").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id.len(), 36, "LiteLLM's id as external name: {id}");
    let name = format!("{CLUSTER}/{tns}/research");
    assert_eq!(at_provider(&created)["accessGroupName"], json!(name));
    assert_eq!(at_provider(&created)["assignedTeamIds"], json!([team_id]));
    let stored = live(&world, &id).await.expect("created in LiteLLM");
    assert_eq!(stored.access_group_name, name);
    assert_eq!(stored.access_model_names, [model_name.as_str()]);
    assert_eq!(stored.description.as_deref(), Some("research models"));
    assert_eq!(team_groups(&world, &team_id).await, [id.as_str()]);

    // At request time the team's key may use the group's model.
    eventually("the group's model served to the team's key", || async {
        (chat(&world, &key, &model_name).await == 200).then_some(())
    })
    .await;

    // The team's own drift correction (/team/update) keeps the group.
    let alias = json!({"spec": {"forProvider": {"teamAlias": "web-2"}}});
    teams
        .patch("web", &PatchParams::default(), &Patch::Merge(&alias))
        .await
        .unwrap();
    eventually("the team renamed", || async {
        let info = world.team_info(&team_id).await?;
        (info.team_alias.as_deref() == Some("web-2")).then_some(())
    })
    .await;
    assert_eq!(team_groups(&world, &team_id).await, [id.as_str()]);
    assert_eq!(chat(&world, &key, &model_name).await, 200);

    // A spec change is written.
    let change = json!({"spec": {"forProvider": {"description": "changed"}}});
    groups
        .patch("research", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .unwrap();
    eventually("the change written", || async {
        (live(&world, &id).await?.description.as_deref() == Some("changed")).then_some(())
    })
    .await;

    // Drift made in LiteLLM (no models, no team, another description) is
    // corrected.
    world
        .litellm
        .access_group_update(&AccessGroupRequest {
            access_group_id: Some(id.clone()),
            ..made_in_ui(&name, &[])
        })
        .await
        .unwrap();
    assert!(team_groups(&world, &team_id).await.is_empty());
    eventually("the drift corrected", || async {
        let g = live(&world, &id).await?;
        let fixed = g.access_model_names == [model_name.as_str()]
            && g.assigned_team_ids == [team_id.as_str()]
            && g.description.as_deref() == Some("changed");
        fixed.then_some(())
    })
    .await;
    assert_eq!(team_groups(&world, &team_id).await, [id.as_str()]);

    // Renamed in LiteLLM: the name is the owner's mark, so the group no
    // longer shows as this resource's, and nothing is written to it until
    // its name is given back.
    let puts = tenant_count("PUT /v1/access_group/{access_group_id}");
    world
        .litellm
        .access_group_update(&AccessGroupRequest {
            access_group_id: Some(id.clone()),
            description: Some("changed".into()),
            assigned_team_ids: vec![team_id.clone()],
            ..made_in_ui(&format!("{name}-ui"), &[&model_name])
        })
        .await
        .unwrap();
    let (_, message) = refused(&groups, "research").await;
    assert!(message.contains("managed by another resource"), "{message}");
    more_reconciliations("access group", 2, Duration::from_secs(60), || {
        reconciles(&registry, "access group")
    })
    .await;
    assert_eq!(
        tenant_count("PUT /v1/access_group/{access_group_id}"),
        puts,
        "nothing written to a group that is no longer this resource's"
    );
    world
        .litellm
        .access_group_update(&AccessGroupRequest {
            access_group_id: Some(id.clone()),
            description: Some("changed".into()),
            assigned_team_ids: vec![team_id.clone()],
            ..made_in_ui(&name, &[&model_name])
        })
        .await
        .unwrap();
    ready(&groups, "research").await;

    // The external name lost: the group is found again by its name and
    // taken, never made twice.
    let creates = tenant_count("POST /v1/access_group");
    assert_eq!(creates, 1);
    let lost = json!({"metadata": {"annotations": {EXTERNAL_NAME: format!("{tns}.research")}}});
    groups
        .patch("research", &PatchParams::default(), &Patch::Merge(&lost))
        .await
        .unwrap();
    wait_for(&groups, "research", "the same id again", |g| {
        g.annotations().get(EXTERNAL_NAME) == Some(&id) && is(g, "Ready", "True")
    })
    .await;
    assert_eq!(by_name(&world, &name).await.len(), 1, "no second group");
    assert_eq!(
        tenant_count("POST /v1/access_group"),
        creates,
        "no create sent"
    );

    // Deleted: confirmed gone from LiteLLM; the team lets go of it and
    // loses the model.
    delete(&groups, "research").await;
    assert!(live(&world, &id).await.is_none(), "deleted from LiteLLM");
    assert!(team_groups(&world, &team_id).await.is_empty());
    eventually("the model refused again", || async {
        (chat(&world, &key, &model_name).await != 200).then_some(())
    })
    .await;
    delete(&teams, "web").await;
}

/// An unmarked group (made in the UI) is imported with `Observe` from the
/// platform's namespace and left as it is; a tenant is refused what could
/// reach another namespace, never imports another resource's group or an
/// unmarked one, and cannot name another namespace's team.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_and_hostile_tenants() {
    let Some(world) = world("pag-tenancy").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let ns = world.namespace.clone();
    let ui_name = format!("pag-ui-{}", k8s::unique_suffix());
    let ui_id = world
        .litellm
        .access_group_new(&made_in_ui(&ui_name, &["m-ui"]))
        .await
        .unwrap();
    let observe = |id: &str| json!({EXTERNAL_NAME: id});
    let spec = json!({"managementPolicies": ["Observe"], "forProvider": {"models": ["m-other"]}});
    let platform = world
        .create(&manifest::<LiteLLMAccessGroup>(
            "LiteLLMAccessGroup",
            "imported",
            observe(&ui_id),
            spec.clone(),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "observed", |g| {
        is(g, "Ready", "True")
    })
    .await;
    assert_eq!(at_provider(&imported)["accessGroupName"], json!(ui_name));
    let message = condition(&imported, "Synced")
        .unwrap()
        .message
        .unwrap_or_default();
    assert!(
        message.contains("models") && message.contains("accessGroupName"),
        "drift reported: {message}"
    );
    assert_eq!(count(&world, "PUT /v1/access_group/{access_group_id}"), 0);
    let before = live(&world, &ui_id).await.unwrap();
    assert_eq!(
        before.access_model_names,
        ["m-ui"],
        "Observe changes nothing"
    );

    // A group the platform manages, which no tenant may import.
    world
        .create(&manifest::<LiteLLMAccessGroup>(
            "LiteLLMAccessGroup",
            "owned",
            json!({}),
            json!({"forProvider": {"models": ["m-owned"]}}),
        ))
        .await;
    let owned_id = ready(&platform, "owned").await.annotations()[EXTERNAL_NAME].clone();

    let tenant = world.tenant("pag-tenant").await;
    let tns = tenant.namespace.clone();
    // A team of another namespace (the platform's), by name.
    world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "platform-team",
            json!({}),
            json!({"forProvider": {"teamAlias": "platform"}}),
        ))
        .await;
    let platform_team = ready(&world.api::<LiteLLMTeam>(), "platform-team")
        .await
        .annotations()[EXTERNAL_NAME]
        .clone();
    let groups = tenant.api::<LiteLLMAccessGroup>(&world);
    let own = json!([format!("{tns}/own")]);
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "foreign-models",
            json!({}),
            json!({"forProvider": {"models": ["another-namespace/secret"]}}),
            "forProvider.models",
        ),
        (
            "no-models",
            json!({}),
            json!({"forProvider": {"description": "everything"}}),
            "forProvider.models",
        ),
        (
            "raw-team",
            json!({}),
            json!({"forProvider": {"models": own, "teamIds": [platform_team]}}),
            "forProvider.teamIds",
        ),
        (
            "raw-server",
            json!({}),
            json!({"forProvider": {"models": own, "mcpServerIds": ["some-server"]}}),
            "forProvider.mcpServerIds",
        ),
        (
            "unmarked",
            observe(&ui_id),
            json!({"forProvider": {"models": own}}),
            "not created by this provider",
        ),
        (
            "foreign",
            observe(&owned_id),
            json!({"forProvider": {"models": own}}),
            "managed by another resource",
        ),
        (
            "other-namespace-team",
            json!({}),
            json!({"forProvider": {"models": own, "teamRefs": [{"name": "platform-team"}]}}),
            "teamRefs",
        ),
    ];
    for (name, annotations, spec, _) in &cases {
        let object = world.tenant_manifest::<LiteLLMAccessGroup>(
            "LiteLLMAccessGroup",
            name,
            annotations.clone(),
            spec.clone(),
        );
        groups
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    for (name, _, _, expected) in &cases {
        let (_, message) = refused(&groups, name).await;
        assert!(message.contains(expected), "{name}: {message}");
        assert!(
            !message.contains(&ns),
            "{name} names no other namespace: {message}"
        );
        assert!(
            by_name(&world, &format!("{CLUSTER}/{tns}/{name}"))
                .await
                .is_empty(),
            "{name}: nothing created"
        );
    }
    // The unmarked and the platform's groups are as they were; the
    // platform's team joined no group.
    let after = live(&world, &ui_id).await.unwrap();
    assert_eq!(after.access_model_names, ["m-ui"]);
    assert_eq!(after.access_group_name, ui_name);
    assert_eq!(
        live(&world, &owned_id).await.unwrap().access_model_names,
        ["m-owned"]
    );
    assert!(team_groups(&world, &platform_team).await.is_empty());

    // The tenant's refused resources go without touching LiteLLM.
    for (name, ..) in &cases {
        delete(&groups, name).await;
    }
    assert!(live(&world, &ui_id).await.is_some());
    assert!(live(&world, &owned_id).await.is_some());
    // Observe never deletes: the imported group stays in LiteLLM.
    delete(&platform, "imported").await;
    assert!(live(&world, &ui_id).await.is_some());
    assert!(world.litellm.access_group_delete(&ui_id).await.unwrap());
    delete(&platform, "owned").await;
    assert!(live(&world, &owned_id).await.is_none());
    delete(&world.api::<LiteLLMTeam>(), "platform-team").await;
}

/// The careless operator deletes an MCP server a group names: the server
/// waits for the group, and goes once the group has.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_mcp_server_a_group_names_waits_for_it() {
    let Some(world) = world("pag-order").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let servers = world
        .create(&manifest::<LiteLLMMCPServer>(
            "LiteLLMMCPServer",
            "docs",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "https://mcp.example.com/mcp"}}),
        ))
        .await;
    let server_id = ready(&servers, "docs").await.annotations()[EXTERNAL_NAME].clone();
    let groups = world
        .create(&manifest::<LiteLLMAccessGroup>(
            "LiteLLMAccessGroup",
            "tools",
            json!({}),
            json!({"forProvider": {"models": ["m-tools"], "mcpServerRefs": [{"name": "docs"}]}}),
        ))
        .await;
    let id = ready(&groups, "tools").await.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(
        live(&world, &id).await.unwrap().access_mcp_server_ids,
        [server_id.as_str()]
    );

    servers
        .delete("docs", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(&servers, "docs", "the server to wait for the group", |s| {
        condition(s, "Ready").is_some_and(|c| {
            c.reason == "Deleting"
                && c.message
                    .is_some_and(|m| m.contains("LiteLLMAccessGroup tools"))
        })
    })
    .await;
    world.reconciled_again("MCP server", 2).await;
    assert!(servers.get_opt("docs").await.unwrap().is_some());
    assert_eq!(
        live(&world, &id).await.unwrap().access_mcp_server_ids,
        [server_id.as_str()],
        "the group still names the server"
    );

    delete(&groups, "tools").await;
    assert!(live(&world, &id).await.is_none());
    wait_gone(&servers, "docs").await;
}
