//! Tags, guardrails, per-model rate limits and budgets, key types, allowed
//! routes, model aliases and soft budgets of teams and keys, and a team's
//! member defaults (issue 13 items 2 and 5), end to end against
//! the real Kubernetes API server and the real LiteLLM proxy (1.108.7,
//! without an Enterprise licence): what LiteLLM keeps, drift corrected, the
//! 403 of Enterprise-only settings as a clear `Synced=False`, and what a
//! tenant may not ask for (nothing is written then).

use std::time::{Duration, Instant};

use crate::support;

use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMBudget, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{
    KeyAccessRequest, KeyRequest, MemberDefaultsRequest, TeamRequest,
};
use serde_json::{json, Value};
use support::provider::{condition, eventually, is, manifest, wait_for, wait_gone, world};

async fn ready<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> K {
    wait_for(api, name, "Ready and Synced", |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

async fn refused<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> String {
    let object = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    condition(&object, "Synced").unwrap().message.unwrap()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn usage_routes_and_aliases_reach_litellm_and_drift_is_corrected() {
    let Some(world) = world("pa-use").await else {
        return;
    };
    let keys = world.api::<LiteLLMVirtualKey>();
    let teams = world.api::<LiteLLMTeam>();
    world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "limited",
            json!({}),
            json!({"forProvider": {
                "models": ["gpt-4o"],
                "modelRpmLimit": {"gpt-4o": 50},
                "modelTpmLimit": {"gpt-4o": 5000},
                "metadata": {"cost-center": "ml"},
            }}),
        ))
        .await;
    let team = ready(&teams, "limited").await;
    let live = world
        .team_info(&team.annotations()[EXTERNAL_NAME])
        .await
        .unwrap();
    let metadata = live.metadata.unwrap();
    assert_eq!(metadata["model_rpm_limit"], json!({"gpt-4o": 50}));
    assert_eq!(metadata["model_tpm_limit"], json!({"gpt-4o": 5000}));
    assert_eq!(metadata["cost-center"], "ml");
    // LiteLLM's settings in metadata are not late-initialized into the
    // user's metadata (which may not carry them).
    let team = teams.get("limited").await.unwrap();
    let spec_metadata = team.spec.for_provider.metadata.clone().unwrap();
    assert!(
        !spec_metadata.contains_key("model_rpm_limit"),
        "{spec_metadata:?}"
    );

    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "reader",
            json!({}),
            json!({"forProvider": {
                "models": ["gpt-4o"],
                "keyType": "read_only",
                "modelRpmLimit": {"gpt-4o": 5},
                "modelAliases": {"fast": "gpt-4o"},
            }}),
        ))
        .await;
    let key = ready(&keys, "reader").await;
    let token = key.annotations()[EXTERNAL_NAME].clone();
    let live = world.litellm.key_info(&token).await.unwrap().unwrap();
    assert_eq!(live.key_type.as_deref(), Some("read_only"));
    assert_eq!(live.allowed_routes, ["info_routes"]);
    assert_eq!(live.aliases["fast"], "gpt-4o");
    assert_eq!(
        live.metadata.as_ref().unwrap()["model_rpm_limit"],
        json!({"gpt-4o": 5})
    );

    // Changed in LiteLLM (the UI): put back at the next poll.
    let drift = KeyRequest {
        access: KeyAccessRequest {
            aliases: Some([("fast".to_owned(), "gpt-5".to_owned())].into()),
            ..KeyAccessRequest::default()
        },
        ..KeyRequest::default()
    };
    world.litellm.key_update(&token, &drift).await.unwrap();
    eventually("the aliases corrected", || async {
        let live = world.litellm.key_info(&token).await.unwrap().unwrap();
        (live.aliases.get("fast").map(String::as_str) == Some("gpt-4o")).then_some(())
    })
    .await;
    let live = world.litellm.key_info(&token).await.unwrap().unwrap();
    assert_eq!(
        live.metadata.as_ref().unwrap()["model_rpm_limit"],
        json!({"gpt-4o": 5}),
        "an update keeps the per-model limits"
    );

    // Routes by list.
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "routes",
            json!({}),
            json!({"forProvider": {"allowedRoutes": ["/chat/completions", "/key/info"]}}),
        ))
        .await;
    let key = ready(&keys, "routes").await;
    let live = world
        .litellm
        .key_info(&key.annotations()[EXTERNAL_NAME])
        .await
        .unwrap()
        .unwrap();
    let mut routes = live.allowed_routes.clone();
    routes.sort();
    assert_eq!(routes, ["/chat/completions", "/key/info"]);

    for name in ["reader", "routes"] {
        keys.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&keys, name).await;
    }
    teams
        .delete("limited", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "limited").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn enterprise_settings_give_a_clear_condition_and_write_nothing() {
    let Some(world) = world("pa-ent").await else {
        return;
    };
    let keys = world.api::<LiteLLMVirtualKey>();
    let teams = world.api::<LiteLLMTeam>();
    let alias = format!("pa-ent-{}", support::k8s::unique_suffix());
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "tagged",
            json!({}),
            json!({"forProvider": {"keyAlias": alias, "tags": ["ml"]}}),
        ))
        .await;
    let message = refused(&keys, "tagged").await;
    assert!(message.starts_with("forProvider.tags: "), "{message}");
    assert!(message.contains("Enterprise licence"), "{message}");
    assert!(world
        .litellm
        .key_list_by_alias(&alias)
        .await
        .unwrap()
        .is_empty());
    let team_alias = format!("pa-ent-team-{}", support::k8s::unique_suffix());
    world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "guarded",
            json!({}),
            json!({"forProvider": {"teamAlias": team_alias, "guardrails": ["pii"]}}),
        ))
        .await;
    let message = refused(&teams, "guarded").await;
    assert!(message.starts_with("forProvider.guardrails: "), "{message}");
    assert!(world.team_ids_with_alias(&team_alias).await.is_empty());

    // A team's member key duration and model budgets (403), a key's model
    // budgets (LiteLLM answers 500, naming the licence): the same.
    let budgets = json!({"gpt-4o": {"budgetLimit": "1", "timePeriod": "1d"}});
    let teams_refused = [
        (
            "key-lifetime",
            json!({"teamMemberKeyDuration": "1d"}),
            "forProvider.teamMemberKeyDuration: ",
        ),
        (
            "model-budgets",
            json!({"modelMaxBudget": budgets}),
            "forProvider.modelMaxBudget: ",
        ),
    ];
    for (name, for_provider, _) in &teams_refused {
        world
            .create(&manifest::<LiteLLMTeam>(
                "LiteLLMTeam",
                name,
                json!({}),
                json!({ "forProvider": for_provider }),
            ))
            .await;
    }
    for (name, _, says) in &teams_refused {
        let message = refused(&teams, name).await;
        assert!(message.starts_with(says), "{name}: {message}");
        assert!(message.contains("HTTP 403"), "{message}");
    }
    let key_alias = format!("pa-ent-mb-{}", support::k8s::unique_suffix());
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "model-budgets",
            json!({}),
            json!({"forProvider": {"keyAlias": key_alias, "modelMaxBudget": budgets}}),
        ))
        .await;
    let message = refused(&keys, "model-budgets").await;
    assert!(
        message.starts_with("forProvider.modelMaxBudget: "),
        "{message}"
    );
    assert!(message.contains("HTTP 500"), "{message}");
    assert!(world
        .litellm
        .key_list_by_alias(&key_alias)
        .await
        .unwrap()
        .is_empty());
    // Not retried in a loop: a refused write waits for a change or a retry
    // whose backoff is capped at the poll interval (1 s here), so the create
    // is tried at most once a poll for each refused key (a hot loop would try
    // it many times a second), and the condition stays.
    let poll = Duration::from_secs(1);
    let attempts = || {
        world
            .litellm_requests()
            .get("POST /key/generate")
            .copied()
            .unwrap_or_default()
    };
    // The retry backoff starts short and doubles up to the poll interval:
    // past its first steps, at most one try a poll.
    world.reconciled_again("key", 6).await;
    let (started, before) = (Instant::now(), attempts());
    world.reconciled_again("key", 6).await;
    let (elapsed, tried) = (started.elapsed(), attempts() - before);
    let polls = elapsed.as_secs_f64() / poll.as_secs_f64();
    // Both keys refused here, `tagged` and `model-budgets`, are retried.
    assert!(
        (tried as f64) <= 2.0 * (polls + 1.0),
        "{tried} creates in {elapsed:?} ({polls:.1} polls)"
    );
    let after = keys.get("model-budgets").await.unwrap();
    assert!(condition(&after, "Synced").unwrap().status == "False");

    for name in ["tagged", "model-budgets"] {
        keys.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in ["guarded", "key-lifetime", "model-budgets"] {
        teams.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in ["tagged", "model-budgets"] {
        wait_gone(&keys, name).await;
    }
    for name in ["guarded", "key-lifetime", "model-budgets"] {
        wait_gone(&teams, name).await;
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn member_defaults_soft_budgets_and_team_aliases_reach_litellm_and_drift_is_corrected() {
    let Some(world) = world("pa-def").await else {
        return;
    };
    let teams = world.api::<LiteLLMTeam>();
    let keys = world.api::<LiteLLMVirtualKey>();
    world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "defaults",
            json!({}),
            json!({"forProvider": {
                "softBudget": "1.50",
                "modelAliases": {"fast": "gpt-4o"},
                "teamMemberBudget": "5",
                "teamMemberBudgetDuration": "30d",
                "teamMemberRpmLimit": 7,
                "teamMemberTpmLimit": 70,
                "metadata": {"cost-center": "ml"},
            }}),
        ))
        .await;
    let team = ready(&teams, "defaults").await;
    let id = team.annotations()[EXTERNAL_NAME].clone();
    let live = world.team_info(&id).await.unwrap();
    assert_eq!(live.soft_budget, Some(1.5));
    assert_eq!(live.model_aliases().unwrap()["fast"], "gpt-4o");
    let row = live.team_member_budget_table.clone().unwrap();
    assert_eq!(
        (
            row.max_budget,
            row.rpm_limit,
            row.tpm_limit,
            row.budget_duration.as_deref()
        ),
        (Some(5.0), Some(7), Some(70), Some("30d"))
    );
    // LiteLLM's own metadata entry is not late-initialized into the spec,
    // and status names the members' budget row.
    let team = eventually("status reports the members' budget", || async {
        let team = teams.get("defaults").await.unwrap();
        let observed = team.status.as_ref()?.at_provider.as_ref()?;
        observed.team_member_budget_id.is_some().then_some(team)
    })
    .await;
    assert_eq!(
        team.status
            .as_ref()
            .unwrap()
            .at_provider
            .as_ref()
            .unwrap()
            .team_member_budget_id,
        row.budget_id
    );
    let metadata = team.spec.for_provider.metadata.clone().unwrap();
    assert!(
        !metadata.contains_key("team_member_budget_id"),
        "{metadata:?}"
    );

    // Changed in LiteLLM (the UI): put back at the next poll, the row kept.
    let drift = TeamRequest {
        team_id: id.clone(),
        soft_budget: Some(9.0),
        model_aliases: Some([("fast".to_owned(), "gpt-5".to_owned())].into()),
        member_defaults: MemberDefaultsRequest {
            team_member_budget: Some(50.0),
            team_member_rpm_limit: Some(700),
            ..MemberDefaultsRequest::default()
        },
        ..TeamRequest::default()
    };
    world.litellm.team_update(&drift).await.unwrap();
    eventually("the team's defaults corrected", || async {
        let live = world.team_info(&id).await?;
        let row = live.team_member_budget_table.clone()?;
        let aliases = live.model_aliases()?;
        (live.soft_budget == Some(1.5)
            && aliases.get("fast").map(String::as_str) == Some("gpt-4o")
            && row.max_budget == Some(5.0)
            && row.rpm_limit == Some(7))
        .then_some(())
    })
    .await;
    let live = world.team_info(&id).await.unwrap();
    assert_eq!(
        live.team_member_budget_table.unwrap().budget_id,
        row.budget_id,
        "the same row"
    );
    assert_eq!(live.metadata.unwrap()["cost-center"], "ml");

    // A key's soft budget: a budget of its own in LiteLLM.
    world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "soft",
            json!({}),
            json!({"forProvider": {"softBudget": "3"}}),
        ))
        .await;
    let key = ready(&keys, "soft").await;
    let token = key.annotations()[EXTERNAL_NAME].clone();
    let live = world.litellm.key_info(&token).await.unwrap().unwrap();
    assert_eq!(live.soft_budget(), Some(3.0));
    let own_row = live.budget_id.clone().unwrap();

    // Linked in LiteLLM to a LiteLLMBudget's row: the provider does not
    // write the key's soft budget into that shared budget.
    world
        .create(&manifest::<LiteLLMBudget>(
            "LiteLLMBudget",
            "shared",
            json!({}),
            json!({"forProvider": {"softBudget": "50"}}),
        ))
        .await;
    let budgets = world.api::<LiteLLMBudget>();
    let budget = ready(&budgets, "shared").await;
    let budget_id = budget.annotations()[EXTERNAL_NAME].clone();
    let link = KeyRequest {
        budget_id: Some(budget_id.clone()),
        ..KeyRequest::default()
    };
    world.litellm.key_update(&token, &link).await.unwrap();
    let message = refused(&keys, "soft").await;
    assert!(message.starts_with("forProvider.softBudget: "), "{message}");
    let shared = world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        shared.soft_budget,
        Some(50.0),
        "the shared budget untouched"
    );
    assert_ne!(own_row, budget_id);

    // Beside budgetRef, the API server refuses it.
    let both: LiteLLMVirtualKey = manifest(
        "LiteLLMVirtualKey",
        "both",
        json!({}),
        json!({"forProvider": {"softBudget": "3", "budgetRef": {"name": "shared"}}}),
    );
    let err = keys
        .create(&PostParams::default(), &both)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("forProvider.softBudget: LiteLLM keeps"),
        "{err}"
    );

    keys.delete("soft", &DeleteParams::default()).await.unwrap();
    teams
        .delete("defaults", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "soft").await;
    wait_gone(&teams, "defaults").await;
    budgets
        .delete("shared", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&budgets, "shared").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_gets_no_admin_routes_no_foreign_aliases_and_no_metadata_settings() {
    let Some(world) = world("pa-ten").await else {
        return;
    };
    let tenant = world.tenant("pa-ten-tenant").await;
    let ns = tenant.namespace.clone();
    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    let teams = tenant.api::<LiteLLMTeam>(&world);
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "management",
            json!({"models": ["gpt-4o"], "keyType": "management"}),
            "forProvider.keyType:",
        ),
        (
            "admin-route",
            json!({"models": ["gpt-4o"], "allowedRoutes": ["/key/generate"]}),
            "forProvider.allowedRoutes:",
        ),
        (
            "foreign-alias",
            json!({"models": ["gpt-4o"], "modelAliases": {"gpt": "someone-else/gpt-4o"}}),
            "forProvider.modelAliases.gpt:",
        ),
        (
            "budget-raise",
            json!({"models": ["gpt-4o"], "metadata": {"temp_budget_increase": 1000}}),
            "forProvider.metadata.temp_budget_increase:",
        ),
    ];
    for (name, for_provider, _) in &cases {
        let key: LiteLLMVirtualKey = world.tenant_manifest(
            "LiteLLMVirtualKey",
            name,
            json!({}),
            json!({"forProvider": for_provider}),
        );
        keys.create(&PostParams::default(), &key).await.unwrap();
    }
    for (name, _, says) in &cases {
        let message = refused(&keys, name).await;
        assert!(message.starts_with(says), "{name}: {message}");
        assert!(!message.contains("1000"), "{message}");
        let key = keys.get(name).await.unwrap();
        if let Some(token) = key.annotations().get(EXTERNAL_NAME) {
            assert!(
                world.litellm.key_info(token).await.unwrap().is_none(),
                "{name}: nothing written"
            );
        }
    }
    let team: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "logs-elsewhere",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"],
                               "metadata": {"logging": [{"callback_name": "langfuse"}]}}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let message = refused(&teams, "logs-elsewhere").await;
    assert!(
        message.starts_with("forProvider.metadata.logging:"),
        "{message}"
    );
    // A team's aliases follow the rule of its models; LiteLLM's own
    // metadata entry is nobody's to set.
    let team_cases = [
        (
            "foreign-alias",
            json!({"models": ["gpt-4o"], "modelAliases": {"gpt": "someone-else/gpt-4o"}}),
            "forProvider.modelAliases.gpt:",
        ),
        (
            "system-entry",
            json!({"models": ["gpt-4o"], "metadata": {"team_member_budget_id": "b-1000"}}),
            "forProvider.metadata.team_member_budget_id:",
        ),
    ];
    for (name, for_provider, _) in &team_cases {
        let team: LiteLLMTeam = world.tenant_manifest(
            "LiteLLMTeam",
            name,
            json!({}),
            json!({ "forProvider": for_provider }),
        );
        teams.create(&PostParams::default(), &team).await.unwrap();
    }
    for (name, _, says) in &team_cases {
        let message = refused(&teams, name).await;
        assert!(message.starts_with(says), "{name}: {message}");
        let team = teams.get(name).await.unwrap();
        if let Some(id) = team.annotations().get(EXTERNAL_NAME) {
            assert!(
                world.team_info(id).await.is_none(),
                "{name}: nothing written"
            );
        }
    }
    // What a tenant may have: an LLM key with aliases into its own models
    // and public ones, read-only routes.
    let fine: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "fine",
        json!({}),
        json!({"forProvider": {
            "models": ["gpt-4o", format!("{ns}/m")],
            "allowedRoutes": ["llm_api_routes", "info_routes"],
            "modelAliases": {"fast": "gpt-4o", "mine": format!("{ns}/m")},
        }}),
    );
    keys.create(&PostParams::default(), &fine).await.unwrap();
    let fine = ready(&keys, "fine").await;
    let live = world
        .litellm
        .key_info(&fine.annotations()[EXTERNAL_NAME])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.aliases["mine"], format!("{ns}/m"));
    for (name, _, _) in &cases {
        keys.delete(*name, &DeleteParams::default()).await.unwrap();
    }
    keys.delete("fine", &DeleteParams::default()).await.unwrap();
    for name in ["logs-elsewhere", "foreign-alias", "system-entry"] {
        teams.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for (name, _, _) in &cases {
        wait_gone(&keys, name).await;
    }
    wait_gone(&keys, "fine").await;
}
