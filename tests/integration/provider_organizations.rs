//! `LiteLLMOrganization` and `organizationRef` on teams, end to end on the
//! real Kubernetes API server, against both harnesses:
//!
//! * the real open-source LiteLLM 1.108.7 proxy, which answers every
//!   `/organization/*` route 403 (Enterprise licence): the organization is
//!   `Synced=False` saying so, is not retried in a fast loop (requests
//!   counted), a team referencing it waits without calling LiteLLM, and
//!   both can be deleted;
//! * the licensed stand-in (`tests/support/litellm_standin.rs`,
//!   `StandIn::start_licensed`), since no licensed proxy is available here:
//!   its organization routes answer with the shapes of LiteLLM's own
//!   request/response types (`NewOrganizationRequest`,
//!   `LiteLLM_OrganizationTableUpdate`,
//!   `LiteLLM_OrganizationTableWithMembers`, `DeleteOrganizationRequest`)
//!   and the rules of `organization_endpoints.py`, not measured answers.
//!   There: created under `<namespace>.<name>` with the marker, drift
//!   corrected, a team by `organizationRef` gets `organization_id`, the
//!   organization's deletion waits for that team and is confirmed, an
//!   unmarked organization is imported with `Observe` and left alone.
//!
//! Hostile tenants: a tenant's organization lists its own models, a
//! tenant's team names no organization by raw id and cannot reach another
//! namespace's by reference, and a tenant can import neither the
//! platform's organization nor an unmarked one.

use crate::support;

use std::time::Duration;

use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMOrganization, LiteLLMTeam, LiteLLMUser};
use litellm_crossplane::litellm::{self, LimitsRequest, OrganizationInfo, OrganizationRequest};
use litellm_crossplane::provider::managed::ownership::MARKER_KEY;
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::litellm_standin::StandIn;
use support::metered::Metered;
use support::provider::{
    at_provider, condition, delete_and_wait, eventually, is, manifest, ready, refused, wait_for,
    wait_gone, world, world_with, Setup, World,
};

fn organization(name: &str, annotations: Value, spec: Value) -> LiteLLMOrganization {
    manifest("LiteLLMOrganization", name, annotations, spec)
}

fn user(name: &str, spec: Value) -> LiteLLMUser {
    manifest("LiteLLMUser", name, json!({}), spec)
}

fn team(name: &str, spec: Value) -> LiteLLMTeam {
    manifest("LiteLLMTeam", name, json!({}), spec)
}

/// A world whose instance points at a licensed stand-in, and a client of
/// that stand-in.
async fn licensed(prefix: &str) -> Option<(World, StandIn, litellm::Client, CrdGuard)> {
    let (_, master_key) = support::harness::litellm()?;
    let standin = StandIn::start_licensed(&master_key).await;
    let world = world_with(
        prefix,
        Setup {
            endpoint: Some(standin.url.clone()),
            ..Setup::default()
        },
    )
    .await?;
    let client = support::harness::admin_client(&standin.url, &master_key, Duration::from_secs(10));
    let guard = CrdGuard::start(&world.kube);
    Some((world, standin, client, guard))
}

async fn live(client: &litellm::Client, id: &str) -> Option<OrganizationInfo> {
    client
        .organization_info(id)
        .await
        .expect("organization read")
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_unlicensed_proxy_gives_synced_false_without_a_retry_storm_and_teams_wait() {
    let Some(world) = world("po-unlic").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let metered = Metered::start(&world, "po-unlic-m").await;
    let ns = metered.namespace.clone();
    let organizations: Api<LiteLLMOrganization> = Api::namespaced(world.kube.clone(), &ns);
    let teams: Api<LiteLLMTeam> = Api::namespaced(world.kube.clone(), &ns);
    let users: Api<LiteLLMUser> = Api::namespaced(world.kube.clone(), &ns);
    // A member by reference: users are open source, so alice is Ready at
    // the real proxy; her organization is refused all the same.
    users
        .create(
            &PostParams::default(),
            &user(
                "alice",
                json!({"forProvider": {"userRole": "internal_user"}}),
            ),
        )
        .await
        .unwrap();
    ready(&users, "alice").await;
    let mut acme = organization(
        "acme",
        json!({}),
        json!({"forProvider": {"organizationAlias": "Acme", "models": ["gpt-4o"],
                               "maxBudget": "100",
                               "members": [{"userRef": {"name": "alice"},
                                            "role": "internal_user_viewer"}]}}),
    );
    // A long poll interval: the failure's backoff is what bounds retries.
    acme.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "30s".into());
    organizations
        .create(&PostParams::default(), &acme)
        .await
        .unwrap();
    let (_, message) = refused(&organizations, "acme").await;
    assert!(
        message.starts_with("LiteLLMOrganization: ")
            && message.contains("HTTP 403")
            && message.contains("Enterprise licence"),
        "{message}"
    );
    let object = organizations.get("acme").await.unwrap();
    assert!(!is(&object, "Ready", "True"));
    assert_eq!(object.annotations()[EXTERNAL_NAME], format!("{ns}.acme"));

    let count = |op: &str| metered.requests().get(op).copied().unwrap_or(0);
    let reads = count("GET /organization/info");
    assert!(reads >= 1, "{:?}", metered.requests());
    // No retry storm: the retries back off (1, 2, 4, 8 s ...), so the next
    // three reads take at least 2 + 4 s after the first of them, however
    // soon that comes; a storm would make them at once.
    let started = std::time::Instant::now();
    eventually("three more reads of the organization", || async {
        (count("GET /organization/info") >= reads + 3).then_some(())
    })
    .await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(5),
        "no retry storm: 3 reads in {took:?} (backoff 1, 2, 4, 8 s)"
    );
    assert_eq!(count("POST /organization/new"), 0, "observe fails first");
    assert_eq!(count("PATCH /organization/update"), 0);
    for op in [
        "POST /organization/member_add",
        "PATCH /organization/member_update",
        "DELETE /organization/member_delete",
    ] {
        assert_eq!(count(op), 0, "no member call: {op}");
    }

    // A team of the organization waits for it, without calling LiteLLM.
    let mut web = team(
        "web",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationRef": {"name": "acme"}}}),
    );
    web.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "30s".into());
    teams.create(&PostParams::default(), &web).await.unwrap();
    let (_, message) = refused(&teams, "web").await;
    assert!(
        message.contains("organizationRef")
            && message.contains(&format!("LiteLLMOrganization {ns}/acme is not ready yet")),
        "{message}"
    );
    assert_eq!(count("POST /team/new"), 0, "{:?}", metered.requests());
    assert!(world.team_info(&format!("{ns}.web")).await.is_none());

    // Alice's deletion waits for the organization that lists her (LiteLLM
    // would drop her membership, and the next poll add her back).
    users
        .delete("alice", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(&users, "alice", "waiting for its organization", |o| {
        condition(o, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("LiteLLMOrganization acme"))
    })
    .await;
    assert!(world
        .litellm
        .user_info(&format!("{ns}.alice"))
        .await
        .unwrap()
        .is_some());

    // All go: the organization was never observed, so the 403 of a proxy
    // that refuses every organization call confirms there is none.
    delete_and_wait(&teams, "web").await;
    delete_and_wait(&organizations, "acme").await;
    wait_gone(&users, "alice").await;
    assert_eq!(count("DELETE /organization/delete"), 0);
    assert_eq!(count("DELETE /organization/member_delete"), 0);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_organization_on_a_licensed_proxy_is_created_corrected_joined_and_deleted() {
    let Some((world, standin, client, _crds)) = licensed("po-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let organizations = world
        .create(&organization(
            "acme",
            json!({}),
            json!({"forProvider": {
                "organizationAlias": "Acme",
                "models": ["gpt-4o", "claude"],
                "maxBudget": "100.00",
                "budgetDuration": "30d",
                "tpmLimit": 5000,
                "metadata": {"dept": "ml"},
            }}),
        ))
        .await;
    let acme = ready(&organizations, "acme").await;
    let id = acme.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{ns}.acme"), "chosen before the create");
    let observed = at_provider(&acme);
    assert_eq!(observed["organizationId"], id.as_str());
    assert_eq!(observed["organizationAlias"], "Acme");
    assert_eq!(observed["maxBudget"], "100");
    assert_eq!(observed["teams"], 0);
    assert!(observed["budgetId"].is_string());

    let got = live(&client, &id).await.expect("in LiteLLM");
    assert_eq!(got.organization_alias.as_deref(), Some("Acme"));
    let budget = got.litellm_budget_table.clone().unwrap();
    assert_eq!(budget.max_budget, Some(100.0));
    assert_eq!(budget.tpm_limit, Some(5000));
    assert_eq!(budget.budget_duration.as_deref(), Some("30d"));
    let metadata = got.metadata.clone().unwrap();
    assert_eq!(metadata["dept"], "ml");
    assert_eq!(metadata[MARKER_KEY]["namespace"], ns.as_str());
    assert_eq!(metadata[MARKER_KEY]["name"], "acme");
    assert_eq!(
        standin.requests()["POST /organization/new"],
        1,
        "created once"
    );

    // Drift made in LiteLLM (its UI) is corrected.
    client
        .organization_update(&OrganizationRequest {
            organization_id: id.clone(),
            organization_alias: Some("Renamed".into()),
            models: Some(vec!["gpt-4o".into()]),
            limits: LimitsRequest {
                max_budget: Some(1.0),
                ..LimitsRequest::default()
            },
            metadata: Some([(MARKER_KEY.to_owned(), json!(null))].into_iter().collect()),
        })
        .await
        .unwrap();
    eventually("the organization's drift corrected", || async {
        let got = live(&client, &id).await.unwrap();
        let mut models = got.models.clone();
        models.sort();
        (got.organization_alias.as_deref() == Some("Acme")
            && models == ["claude", "gpt-4o"]
            && got.litellm_budget_table.and_then(|b| b.max_budget) == Some(100.0)
            && got.metadata.unwrap()[MARKER_KEY]["name"] == "acme")
            .then_some(())
    })
    .await;

    // A team joins it by organizationRef.
    let teams = world
        .create(&team(
            "web",
            json!({"forProvider": {"models": ["gpt-4o"], "maxBudget": "10",
                                   "organizationRef": {"name": "acme"}}}),
        ))
        .await;
    let web = ready(&teams, "web").await;
    let team_id = web.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(at_provider(&web)["organizationId"], id.as_str());
    let live_team = client.team_info(&team_id).await.unwrap().unwrap();
    assert_eq!(live_team.organization_id.as_deref(), Some(id.as_str()));
    eventually("the organization counts its team", || async {
        let acme = organizations.get("acme").await.unwrap();
        (at_provider(&acme)["teams"] == 1).then_some(())
    })
    .await;

    // LiteLLM refuses a team a model its organization does not have: the
    // team says so (LiteLLM's words, naming the model).
    world
        .create(&team(
            "wide",
            json!({"forProvider": {"models": ["mistral"], "organizationRef": {"name": "acme"}}}),
        ))
        .await;
    let (_, message) = refused(&teams, "wide").await;
    assert!(
        message.contains("mistral") && message.contains("organization's allowed models"),
        "{message}"
    );
    delete_and_wait(&teams, "wide").await;

    // The organization's deletion waits for its team: LiteLLM would delete
    // the team (and its keys) with it.
    organizations
        .delete("acme", &DeleteParams::default())
        .await
        .unwrap();
    let waiting = wait_for(&organizations, "acme", "waiting for its team", |o| {
        condition(o, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("LiteLLMTeam web"))
    })
    .await;
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(live(&client, &id).await.is_some(), "not deleted yet");
    assert!(client.team_info(&team_id).await.unwrap().is_some());
    delete_and_wait(&teams, "web").await;
    wait_gone(&organizations, "acme").await;
    assert!(live(&client, &id).await.is_none(), "deletion confirmed");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_unmarked_organization_is_imported_with_observe_and_left_alone() {
    let Some((world, standin, client, _crds)) = licensed("po-import").await else {
        return;
    };
    let id = format!("{}.made-in-the-ui", world.namespace);
    client
        .organization_new(&OrganizationRequest {
            organization_id: id.clone(),
            organization_alias: Some("From the UI".into()),
            models: Some(vec!["gpt-4o".into()]),
            limits: LimitsRequest {
                max_budget: Some(5.0),
                ..LimitsRequest::default()
            },
            metadata: None,
        })
        .await
        .unwrap();
    let writes = || {
        let requests = standin.requests();
        ["POST /organization/new", "PATCH /organization/update"]
            .iter()
            .map(|op| requests.get(*op).copied().unwrap_or(0))
            .sum::<u64>()
    };
    let before = writes();
    let organizations = world
        .create(&organization(
            "imported",
            json!({EXTERNAL_NAME: id}),
            json!({"managementPolicies": ["Observe"],
                   "forProvider": {"organizationAlias": "Renamed here"}}),
        ))
        .await;
    let imported = wait_for(&organizations, "imported", "Ready", |o| {
        is(o, "Ready", "True")
    })
    .await;
    let observed = at_provider(&imported);
    assert_eq!(observed["organizationAlias"], "From the UI");
    assert_eq!(observed["maxBudget"], "5");
    let message = condition(&imported, "Synced")
        .unwrap()
        .message
        .unwrap_or_default();
    assert!(
        message.contains("organizationAlias"),
        "drift reported: {message}"
    );
    world.reconciled_again("organization", 3).await;
    assert_eq!(writes(), before, "Observe writes nothing");
    let got = live(&client, &id).await.unwrap();
    assert_eq!(got.organization_alias.as_deref(), Some("From the UI"));
    assert!(got.metadata.unwrap_or_default().get(MARKER_KEY).is_none());
    delete_and_wait(&organizations, "imported").await;
    assert!(
        live(&client, &id).await.is_some(),
        "no Delete policy: left in LiteLLM"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn hostile_tenants_get_no_foreign_organization() {
    let Some((world, standin, client, _crds)) = licensed("po-hostile").await else {
        return;
    };
    let platform_orgs = world
        .create(&organization(
            "acme",
            json!({}),
            json!({"forProvider": {"models": ["gpt-4o"]}}),
        ))
        .await;
    let acme = ready(&platform_orgs, "acme").await;
    let platform_id = acme.annotations()[EXTERNAL_NAME].clone();
    let unmarked_id = format!("{}.unmarked", world.namespace);
    client
        .organization_new(&OrganizationRequest {
            organization_id: unmarked_id.clone(),
            organization_alias: Some("Unmarked".into()),
            ..OrganizationRequest::default()
        })
        .await
        .unwrap();

    let tenant = world.tenant("po-hostile-t").await;
    let tenant_orgs = tenant.api::<LiteLLMOrganization>(&world);
    let tenant_teams = tenant.api::<LiteLLMTeam>(&world);
    let create_org = |name: &str, annotations: Value, spec: Value| {
        let object: LiteLLMOrganization =
            world.tenant_manifest("LiteLLMOrganization", name, annotations, spec);
        let api = tenant_orgs.clone();
        async move { api.create(&PostParams::default(), &object).await.unwrap() }
    };
    let create_team = |name: &str, spec: Value| {
        let object: LiteLLMTeam = world.tenant_manifest("LiteLLMTeam", name, json!({}), spec);
        let api = tenant_teams.clone();
        async move { api.create(&PostParams::default(), &object).await.unwrap() }
    };
    let created_before = standin.requests()["POST /organization/new"];

    // A tenant's organization lists its own models.
    create_org("everything", json!({}), json!({"forProvider": {}})).await;
    let (_, message) = refused(&tenant_orgs, "everything").await;
    assert!(message.starts_with("forProvider.models: "), "{message}");
    create_org(
        "foreign-models",
        json!({}),
        json!({"forProvider": {"models": [format!("{}/gpt-4o", world.namespace)]}}),
    )
    .await;
    let (_, message) = refused(&tenant_orgs, "foreign-models").await;
    assert!(message.starts_with("forProvider.models: "), "{message}");

    // It can import neither the platform's organization nor an unmarked one,
    // under any policy.
    for (name, id, policies, why) in [
        (
            "peek",
            &platform_id,
            json!(["Observe"]),
            "managed by another resource",
        ),
        (
            "take",
            &platform_id,
            json!(["*"]),
            "managed by another resource",
        ),
        (
            "unmarked",
            &unmarked_id,
            json!(["Observe"]),
            "not created by this provider",
        ),
    ] {
        create_org(
            name,
            json!({EXTERNAL_NAME: id}),
            json!({"managementPolicies": policies, "forProvider": {"models": ["gpt-4o"]}}),
        )
        .await;
        let (_, message) = refused(&tenant_orgs, name).await;
        assert!(message.contains(why), "{name}: {message}");
        let object = tenant_orgs.get(name).await.unwrap();
        assert!(
            at_provider(&object).get("organizationAlias").is_none(),
            "{name}"
        );
    }

    // Its teams name no organization by raw id, and a reference only
    // reaches its own namespace.
    create_team(
        "raw",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationId": platform_id}}),
    )
    .await;
    let (_, message) = refused(&tenant_teams, "raw").await;
    assert!(
        message.starts_with("forProvider.organizationId: "),
        "{message}"
    );
    create_team(
        "by-ref",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationRef": {"name": "acme"}}}),
    )
    .await;
    let (_, message) = refused(&tenant_teams, "by-ref").await;
    assert!(
        message.contains(&format!(
            "organizationRef: LiteLLMOrganization {}/acme not found",
            tenant.namespace
        )),
        "{message}"
    );
    assert_eq!(standin.len_teams(), 0, "no tenant team reached LiteLLM");
    assert_eq!(
        standin.requests()["POST /organization/new"],
        created_before,
        "no tenant organization reached LiteLLM"
    );

    // The platform's organization is untouched and still the platform's.
    let got = live(&client, &platform_id).await.unwrap();
    assert_eq!(
        got.metadata.unwrap()[MARKER_KEY]["namespace"],
        world.namespace.as_str()
    );

    // A tenant's own organization, with its own models, works; its team
    // joins it by reference.
    create_org(
        "mine",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o", format!("{}/private", tenant.namespace)]}}),
    )
    .await;
    ready(&tenant_orgs, "mine").await;
    create_team(
        "joined",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationRef": {"name": "mine"}}}),
    )
    .await;
    let joined = ready(&tenant_teams, "joined").await;
    assert_eq!(
        at_provider(&joined)["organizationId"],
        format!("{}.mine", tenant.namespace)
    );

    // Clean up (the refused ones hold nothing in LiteLLM).
    for name in ["raw", "by-ref", "joined"] {
        delete_and_wait(&tenant_teams, name).await;
    }
    for name in [
        "everything",
        "foreign-models",
        "peek",
        "take",
        "unmarked",
        "mine",
    ] {
        delete_and_wait(&tenant_orgs, name).await;
    }
    assert!(
        live(&client, &platform_id).await.is_some(),
        "the tenant's imports never deleted the platform's organization"
    );
    assert!(live(&client, &unmarked_id).await.is_some());
    delete_and_wait(&platform_orgs, "acme").await;
}

/// The members LiteLLM holds: user id and role, sorted.
async fn members_of(client: &litellm::Client, id: &str) -> Vec<(String, String)> {
    let mut members: Vec<(String, String)> = live(client, id)
        .await
        .expect("the organization")
        .members
        .into_iter()
        .map(|m| (m.user_id, m.user_role.unwrap_or_default()))
        .collect();
    members.sort();
    members
}

fn pairs(members: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = members
        .iter()
        .map(|(id, role)| ((*id).to_owned(), (*role).to_owned()))
        .collect();
    pairs.sort();
    pairs
}

/// Member calls the stand-in received so far.
fn member_calls(standin: &StandIn) -> u64 {
    let requests = standin.requests();
    [
        "POST /organization/member_add",
        "PATCH /organization/member_update",
        "DELETE /organization/member_delete",
    ]
    .iter()
    .map(|op| requests.get(*op).copied().unwrap_or(0))
    .sum()
}

/// On the licensed stand-in (no licensed proxy is available here; its
/// member routes follow `organization_endpoints.py`, see
/// `tests/support/litellm_standin.rs`): members by reference and by raw
/// id, a role change, drift made in LiteLLM corrected, a removal, the
/// steady state without member calls, an unknown raw id refused without
/// LiteLLM creating that user, and a member's user whose deletion waits
/// for the organization.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn members_on_a_licensed_proxy_are_added_changed_corrected_and_removed() {
    let Some((world, standin, client, _crds)) = licensed("po-members").await else {
        return;
    };
    let ns = world.namespace.clone();
    let users = world.api::<LiteLLMUser>();
    for name in ["alice", "bob"] {
        world
            .create(&user(
                name,
                json!({"forProvider": {"userRole": "internal_user"}}),
            ))
            .await;
        ready(&users, name).await;
    }
    let (alice, bob) = (format!("{ns}.alice"), format!("{ns}.bob"));
    // A user made in the UI, named by raw id from the platform's namespace.
    let carol = format!("{ns}.ui-carol");
    client
        .user_new(&litellm::UserRequest {
            user_id: carol.clone(),
            ..litellm::UserRequest::default()
        })
        .await
        .unwrap();

    let spec = |members: Value| json!({"forProvider": {"models": ["gpt-4o"], "members": members}});
    let organizations = world
        .create(&organization(
            "acme",
            json!({}),
            spec(json!([
                {"userRef": {"name": "alice"}, "role": "org_admin"},
                {"userRef": {"name": "bob"}},
                {"userId": carol, "role": "internal_user_viewer"},
            ])),
        ))
        .await;
    let acme = ready(&organizations, "acme").await;
    let id = acme.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(
        members_of(&client, &id).await,
        pairs(&[
            (&alice, "org_admin"),
            (&bob, "internal_user"),
            (&carol, "internal_user_viewer"),
        ])
    );
    eventually("the members observed", || async {
        let acme = organizations.get("acme").await.unwrap();
        (at_provider(&acme)["members"].as_array().map(Vec::len) == Some(3)).then_some(())
    })
    .await;
    assert_eq!(standin.requests()["POST /organization/member_add"], 3);

    // The steady state: polls read, and send no member call.
    let calls = member_calls(&standin);
    world.reconciled_again("organization", 3).await;
    assert_eq!(member_calls(&standin), calls, "no member call in step");

    // A role changed in the spec: one member_update, nothing else.
    let patch = |members: Value| {
        let organizations = organizations.clone();
        async move {
            organizations
                .patch(
                    "acme",
                    &kube::api::PatchParams::default(),
                    &kube::api::Patch::Merge(
                        json!({"spec": {"forProvider": {"members": members}}}),
                    ),
                )
                .await
                .unwrap();
        }
    };
    patch(json!([
        {"userRef": {"name": "alice"}, "role": "internal_user"},
        {"userRef": {"name": "bob"}},
        {"userId": carol, "role": "internal_user_viewer"},
    ]))
    .await;
    eventually("alice no longer an org admin", || async {
        let members = members_of(&client, &id).await;
        members
            .contains(&(alice.clone(), "internal_user".to_owned()))
            .then_some(())
    })
    .await;
    let requests = standin.requests();
    assert_eq!(requests["PATCH /organization/member_update"], 1);
    assert_eq!(requests["POST /organization/member_add"], 3);
    assert_eq!(requests.get("DELETE /organization/member_delete"), None);

    // Drift made in LiteLLM (its UI): a member added, one removed, a role
    // changed; the next poll puts it back.
    client
        .organization_member_add(&id, &format!("{ns}.ui-mallory"), "org_admin")
        .await
        .unwrap();
    client.organization_member_delete(&id, &bob).await.unwrap();
    client
        .organization_member_update(&id, &carol, "org_admin")
        .await
        .unwrap();
    let wanted = pairs(&[
        (&alice, "internal_user"),
        (&bob, "internal_user"),
        (&carol, "internal_user_viewer"),
    ]);
    eventually("the members' drift corrected", || async {
        (members_of(&client, &id).await == wanted).then_some(())
    })
    .await;

    // Carol removed from the spec: removed from the organization, and she
    // stays a user of LiteLLM (the organization never made her).
    patch(json!([
        {"userRef": {"name": "alice"}, "role": "internal_user"},
        {"userRef": {"name": "bob"}},
    ]))
    .await;
    eventually("carol removed", || async {
        (members_of(&client, &id).await
            == pairs(&[(&alice, "internal_user"), (&bob, "internal_user")]))
        .then_some(())
    })
    .await;
    assert!(client.user_info(&carol).await.unwrap().is_some());

    // A raw id LiteLLM does not know: refused, naming the member; LiteLLM's
    // member_add would have created that user.
    let nobody = format!("{ns}.nobody");
    patch(json!([
        {"userRef": {"name": "alice"}, "role": "internal_user"},
        {"userRef": {"name": "bob"}},
        {"userId": nobody},
    ]))
    .await;
    let (_, message) = refused(&organizations, "acme").await;
    assert!(
        message.starts_with("forProvider.members[2].userId: LiteLLM has no user"),
        "{message}"
    );
    assert!(client.user_info(&nobody).await.unwrap().is_none());
    // A user named twice: refused before anything is sent.
    let calls = member_calls(&standin);
    patch(json!([
        {"userRef": {"name": "alice"}, "role": "internal_user"},
        {"userId": alice},
    ]))
    .await;
    wait_for(&organizations, "acme", "the duplicate refused", |o| {
        condition(o, "Synced")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("members[1]: names the user of members[0] again"))
    })
    .await;
    assert_eq!(member_calls(&standin), calls, "nothing sent");
    patch(json!([
        {"userRef": {"name": "alice"}, "role": "internal_user"},
        {"userRef": {"name": "bob"}},
    ]))
    .await;
    ready(&organizations, "acme").await;

    // Bob's deletion waits for the organization that lists him: LiteLLM
    // would drop his membership, and the next poll would add him back as
    // a user nothing manages. Once he is taken out of the spec, he goes.
    users.delete("bob", &DeleteParams::default()).await.unwrap();
    wait_for(&users, "bob", "waiting for its organization", |o| {
        condition(o, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("LiteLLMOrganization acme"))
    })
    .await;
    assert!(client.user_info(&bob).await.unwrap().is_some());
    patch(json!([{"userRef": {"name": "alice"}, "role": "internal_user"}])).await;
    wait_gone(&users, "bob").await;
    eventually("bob no longer a member", || async {
        (members_of(&client, &id).await == pairs(&[(&alice, "internal_user")])).then_some(())
    })
    .await;
    assert!(client.user_info(&bob).await.unwrap().is_none());

    delete_and_wait(&organizations, "acme").await;
    assert!(live(&client, &id).await.is_none(), "deletion confirmed");
    delete_and_wait(&users, "alice").await;
}

/// A tenant's organization names its members by reference to its own
/// users, never by raw id (another tenant's user) and never as org admins
/// (who could add any user of the proxy and delete users of it): refused
/// naming the field, with nothing sent to LiteLLM.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_members_are_its_own_users_by_reference_and_never_org_admins() {
    let Some((world, standin, client, _crds)) = licensed("po-mhostile").await else {
        return;
    };
    // A user of the platform, which the tenant tries to name.
    let platform_users = world.api::<LiteLLMUser>();
    world
        .create(&user(
            "victim",
            json!({"forProvider": {"userRole": "internal_user"}}),
        ))
        .await;
    ready(&platform_users, "victim").await;
    let victim = format!("{}.victim", world.namespace);

    let tenant = world.tenant("po-mhostile-t").await;
    let tenant_orgs = tenant.api::<LiteLLMOrganization>(&world);
    let tenant_users = tenant.api::<LiteLLMUser>(&world);
    let own: LiteLLMUser = world.tenant_manifest(
        "LiteLLMUser",
        "dev",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"]}}),
    );
    tenant_users
        .create(&PostParams::default(), &own)
        .await
        .unwrap();
    ready(&tenant_users, "dev").await;
    let create = |name: &str, members: Value| {
        let object: LiteLLMOrganization = world.tenant_manifest(
            "LiteLLMOrganization",
            name,
            json!({}),
            json!({"forProvider": {"models": ["gpt-4o"], "members": members}}),
        );
        let api = tenant_orgs.clone();
        async move { api.create(&PostParams::default(), &object).await.unwrap() }
    };
    let before = standin.requests();
    let count = |requests: &std::collections::BTreeMap<String, u64>, op: &str| {
        requests.get(op).copied().unwrap_or(0)
    };

    for (name, members, field) in [
        (
            "raw",
            json!([{"userRef": {"name": "dev"}}, {"userId": victim}]),
            "forProvider.members[1].userId: ",
        ),
        (
            "admin",
            json!([{"userRef": {"name": "dev"}, "role": "org_admin"}]),
            "forProvider.members[0].role: ",
        ),
    ] {
        create(name, members).await;
        let (_, message) = refused(&tenant_orgs, name).await;
        assert!(message.starts_with(field), "{name}: {message}");
        assert!(
            !message.contains(&world.namespace),
            "{name}: the other namespace is not revealed: {message}"
        );
    }
    // A reference reaches only the tenant's own namespace.
    create("foreign-ref", json!([{"userRef": {"name": "victim"}}])).await;
    let (_, message) = refused(&tenant_orgs, "foreign-ref").await;
    assert!(
        message.contains(&format!(
            "members: LiteLLMUser {}/victim not found",
            tenant.namespace
        )),
        "{message}"
    );
    let after = standin.requests();
    for op in [
        "POST /organization/new",
        "POST /organization/member_add",
        "PATCH /organization/member_update",
        "DELETE /organization/member_delete",
    ] {
        assert_eq!(count(&after, op), count(&before, op), "nothing sent: {op}");
    }

    // Its own user by reference, as a viewer: a member.
    create(
        "mine",
        json!([{"userRef": {"name": "dev"}, "role": "internal_user_viewer"}]),
    )
    .await;
    let mine = ready(&tenant_orgs, "mine").await;
    let id = mine.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(
        members_of(&client, &id).await,
        pairs(&[(&format!("{}.dev", tenant.namespace), "internal_user_viewer")])
    );
    assert!(
        client.user_info(&victim).await.unwrap().is_some(),
        "the platform's user untouched"
    );

    for name in ["raw", "admin", "foreign-ref", "mine"] {
        delete_and_wait(&tenant_orgs, name).await;
    }
    delete_and_wait(&tenant_users, "dev").await;
    delete_and_wait(&platform_users, "victim").await;
}
