//! Tags, guardrails, per-model rate limits, key types, allowed routes and
//! model aliases of teams and keys (issue 13 item 5), end to end against
//! the real Kubernetes API server and the real LiteLLM proxy (1.108.7,
//! without an Enterprise licence): what LiteLLM keeps, drift corrected, the
//! 403 of Enterprise-only settings as a clear `Synced=False`, and what a
//! tenant may not ask for (nothing is written then).

mod support;

use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{KeyAccessRequest, KeyRequest};
use serde_json::{json, Value};
use support::provider::{condition, eventually, is, manifest, wait_for, wait_gone, world};

async fn ready<K: litellm_crossplane::provider::managed::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> K {
    wait_for(api, name, "Ready and Synced", |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

async fn refused<K: litellm_crossplane::provider::managed::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> String {
    let object = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    condition(&object, "Synced").unwrap().message.unwrap()
}

#[tokio::test]
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
    keys.delete("tagged", &DeleteParams::default())
        .await
        .unwrap();
    teams
        .delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "tagged").await;
    wait_gone(&teams, "guarded").await;
}

#[tokio::test]
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
    teams
        .delete("logs-elsewhere", &DeleteParams::default())
        .await
        .unwrap();
    for (name, _, _) in &cases {
        wait_gone(&keys, name).await;
    }
    wait_gone(&keys, "fine").await;
}
