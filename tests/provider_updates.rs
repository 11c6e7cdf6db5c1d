//! Updates that do what they say, end to end against the real API server
//! and the real LiteLLM proxy: correcting drift writes what drifted and has
//! no side effects on what did not.

mod support;

use std::time::Duration;

use kube::api::DeleteParams;
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::LimitsRequest;
use litellm_crossplane::litellm::{KeyRequest, TeamRequest};
use serde_json::json;
use support::provider::{eventually, is, manifest, wait_for, wait_gone, world};

#[tokio::test]
async fn correcting_a_keys_drift_moves_neither_its_expiry_nor_its_budget_period() {
    let Some(world) = world("pu-key").await else {
        return;
    };
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        "ci",
        json!({}),
        json!({"forProvider": {"duration": "30d", "budgetDuration": "30d", "maxBudget": "5"}}),
    );
    let keys = world.create(&key).await;
    let key = wait_for(&keys, "ci", "key Ready", |k| is(k, "Ready", "True")).await;
    let token = key.annotations()[EXTERNAL_NAME].clone();
    let before = world.litellm.key_info(&token).await.unwrap().unwrap();
    assert!(before.expires.is_some() && before.budget_reset_at.is_some());

    // LiteLLM counts `expires` from now when `duration` is sent again (on
    // 1.108.7 it moves by the seconds elapsed): let now move on.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let drift = KeyRequest {
        limits: LimitsRequest {
            max_budget: Some(9.0),
            ..LimitsRequest::default()
        },
        ..KeyRequest::default()
    };
    world.litellm.key_update(&token, &drift).await.unwrap();
    let after = eventually("the drift to be corrected", || async {
        let live = world.litellm.key_info(&token).await.unwrap().unwrap();
        (live.max_budget == Some(5.0)).then_some(live)
    })
    .await;
    assert_eq!(after.expires, before.expires, "expires moved");
    assert_eq!(
        after.budget_reset_at, before.budget_reset_at,
        "budget period restarted"
    );
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
}

/// LiteLLM 1.108.7 aligns budget resets to calendar boundaries, so sending
/// `budget_duration` again does not move `budget_reset_at` there (checked by
/// hand); the provider still sends it only when it drifted, and this test
/// holds any version that restarts the period to that.
#[tokio::test]
async fn correcting_a_teams_drift_keeps_its_budget_period() {
    let Some(world) = world("pu-team").await else {
        return;
    };
    let team = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "web",
        json!({}),
        json!({"forProvider": {"teamAlias": "Web", "maxBudget": "5", "budgetDuration": "30d"}}),
    );
    let teams = world.create(&team).await;
    let team = wait_for(&teams, "web", "team Ready", |t| is(t, "Ready", "True")).await;
    let id = team.annotations()[EXTERNAL_NAME].clone();
    let before = world.team_info(&id).await.unwrap();
    assert!(before.budget_reset_at.is_some());

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let drift = TeamRequest {
        team_id: id.clone(),
        team_alias: Some("Changed in the UI".into()),
        ..TeamRequest::default()
    };
    world.litellm.team_update(&drift).await.unwrap();
    let after = eventually("the drift to be corrected", || async {
        let live = world.team_info(&id).await.unwrap();
        (live.team_alias.as_deref() == Some("Web")).then_some(live)
    })
    .await;
    assert_eq!(
        after.budget_reset_at, before.budget_reset_at,
        "budget period restarted"
    );
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "web").await;
}
