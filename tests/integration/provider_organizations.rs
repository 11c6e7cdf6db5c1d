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
use litellm_crossplane::api::{LiteLLMOrganization, LiteLLMTeam};
use litellm_crossplane::litellm::{
    self, ClientConfig, LimitsRequest, OrganizationInfo, OrganizationRequest, Secret,
};
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::ownership::MARKER_KEY;
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::litellm_standin::StandIn;
use support::metered::Metered;
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, world, world_with, Setup, World,
};

async fn ready<K: ManagedKind>(api: &Api<K>, name: &str) -> K {
    wait_for(api, name, "Ready and Synced", |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

async fn refused<K: ManagedKind>(api: &Api<K>, name: &str) -> String {
    let object = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    condition(&object, "Synced").unwrap().message.unwrap()
}

async fn delete<K: ManagedKind>(api: &Api<K>, name: &str) {
    api.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(api, name).await;
}

fn organization(name: &str, annotations: Value, spec: Value) -> LiteLLMOrganization {
    manifest("LiteLLMOrganization", name, annotations, spec)
}

fn team(name: &str, spec: Value) -> LiteLLMTeam {
    manifest("LiteLLMTeam", name, json!({}), spec)
}

fn at_provider<K: serde::Serialize>(object: &K) -> Value {
    serde_json::to_value(object).unwrap()["status"]["atProvider"].clone()
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
    let client = litellm::Client::new(ClientConfig {
        endpoint: standin.url.clone(),
        master_key: Secret::new(master_key),
        ca_pem: None,
        timeout: Duration::from_secs(10),
    })
    .unwrap();
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
    let mut acme = organization(
        "acme",
        json!({}),
        json!({"forProvider": {"organizationAlias": "Acme", "models": ["gpt-4o"],
                               "maxBudget": "100"}}),
    );
    // A long poll interval: the failure's backoff is what bounds retries.
    acme.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "30s".into());
    organizations
        .create(&PostParams::default(), &acme)
        .await
        .unwrap();
    let message = refused(&organizations, "acme").await;
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

    // A team of the organization waits for it, without calling LiteLLM.
    let mut web = team(
        "web",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationRef": {"name": "acme"}}}),
    );
    web.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "30s".into());
    teams.create(&PostParams::default(), &web).await.unwrap();
    let message = refused(&teams, "web").await;
    assert!(
        message.contains("organizationRef")
            && message.contains(&format!("LiteLLMOrganization {ns}/acme is not ready yet")),
        "{message}"
    );
    assert_eq!(count("POST /team/new"), 0, "{:?}", metered.requests());
    assert!(world.team_info(&format!("{ns}.web")).await.is_none());

    // Both go: the organization was never observed, so the 403 of a proxy
    // that refuses every organization call confirms there is none.
    delete(&teams, "web").await;
    delete(&organizations, "acme").await;
    assert_eq!(count("DELETE /organization/delete"), 0);
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
    let message = refused(&teams, "wide").await;
    assert!(
        message.contains("mistral") && message.contains("organization's allowed models"),
        "{message}"
    );
    delete(&teams, "wide").await;

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
    delete(&teams, "web").await;
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
    delete(&organizations, "imported").await;
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
    let message = refused(&tenant_orgs, "everything").await;
    assert!(message.starts_with("forProvider.models: "), "{message}");
    create_org(
        "foreign-models",
        json!({}),
        json!({"forProvider": {"models": [format!("{}/gpt-4o", world.namespace)]}}),
    )
    .await;
    let message = refused(&tenant_orgs, "foreign-models").await;
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
        let message = refused(&tenant_orgs, name).await;
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
    let message = refused(&tenant_teams, "raw").await;
    assert!(
        message.starts_with("forProvider.organizationId: "),
        "{message}"
    );
    create_team(
        "by-ref",
        json!({"forProvider": {"models": ["gpt-4o"], "organizationRef": {"name": "acme"}}}),
    )
    .await;
    let message = refused(&tenant_teams, "by-ref").await;
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
        delete(&tenant_teams, name).await;
    }
    for name in [
        "everything",
        "foreign-models",
        "peek",
        "take",
        "unmarked",
        "mine",
    ] {
        delete(&tenant_orgs, name).await;
    }
    assert!(
        live(&client, &platform_id).await.is_some(),
        "the tenant's imports never deleted the platform's organization"
    );
    assert!(live(&client, &unmarked_id).await.is_some());
    delete(&platform_orgs, "acme").await;
}
