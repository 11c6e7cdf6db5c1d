//! A team whose id the provider chose in the same reconciliation is created
//! first, without a read before (issue 40, goal 2): the id is recorded
//! before any create, so nothing the provider made can be under it, and
//! LiteLLM refuses a `/team/new` under a taken id (400). Against the real
//! proxy and API server: a new team costs one `/team/new` and no
//! `/team/info`; a team already under the chosen id (made by hand, or left
//! behind) is found by the refused create and ends as it would have after
//! an observe: another resource's is refused, an unmarked one of the
//! instance's namespace adopted, and no second team appears. A create
//! whose answer is lost is in `provider_faults`.

use crate::support;

use kube::api::DeleteParams;
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMTeam;
use litellm_crossplane::litellm::TeamRequest;
use litellm_crossplane::provider::managed::ownership::{default_id, MARKER_KEY};
use serde_json::json;
use support::k8s;
use support::provider::{condition, is, manifest, wait_for, wait_gone, world, World, CLUSTER};

/// Team `name` with `alias`, polled once an hour: nothing but its first
/// reconciliations reads LiteLLM while the test counts.
fn team(name: &str, alias: &str) -> LiteLLMTeam {
    let mut team: LiteLLMTeam = manifest(
        "LiteLLMTeam",
        name,
        json!({}),
        json!({"forProvider": {"teamAlias": alias, "maxBudget": "10"}}),
    );
    team.annotations_mut()
        .insert("crossplane.io/poll-interval".into(), "1h".into());
    team
}

/// The provider's LiteLLM requests on teams' routes so far.
fn team_requests(world: &World) -> Vec<(String, u64)> {
    world
        .litellm_requests()
        .into_iter()
        .filter(|(operation, _)| operation.contains("/team/"))
        .collect()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_new_team_is_created_without_a_read_first() {
    let Some(world) = world("cf-new").await else {
        return;
    };
    let alias = format!("First-{}", k8s::unique_suffix());
    let teams = world.create(&team("web", &alias)).await;
    let ready = wait_for(&teams, "web", "team Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    let id = ready.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, default_id(&world.namespace, "web"));
    assert_eq!(
        team_requests(&world),
        [("POST /team/new".to_owned(), 1)],
        "one create, no read: the create's answer showed the team as asked"
    );
    assert_eq!(world.team_ids_with_alias(&alias).await, [id.as_str()]);
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
}

/// A team made outside the provider under the id the provider chooses,
/// `marker` its ownership marker (none: made in the UI).
async fn made_by_hand(world: &World, name: &str, marker: Option<serde_json::Value>) -> String {
    let id = default_id(&world.namespace, name);
    let metadata = marker.map(|marker| {
        json!({MARKER_KEY: marker, "cost-center": "by-hand"})
            .as_object()
            .unwrap()
            .clone()
    });
    let team = TeamRequest {
        team_id: id.clone(),
        team_alias: Some(format!("Hand-{}", k8s::unique_suffix())),
        metadata,
        ..TeamRequest::default()
    };
    world.litellm.team_new(&team).await.expect("a team by hand");
    id
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_team_already_under_the_chosen_id_is_refused_or_adopted_as_after_an_observe() {
    let Some(world) = world("cf-taken").await else {
        return;
    };
    let teams = world.api::<LiteLLMTeam>();

    // Another resource's: refused, left as it was, never made twice.
    let marker = json!({"cluster": CLUSTER, "namespace": "elsewhere", "name": "web", "uid": "u"});
    let id = made_by_hand(&world, "theirs", Some(marker)).await;
    let before = world.team_info(&id).await.expect("the team by hand");
    let alias = format!("Theirs-{}", k8s::unique_suffix());
    world.create(&team("theirs", &alias)).await;
    let refused = wait_for(&teams, "theirs", "Synced=False", |t| {
        is(t, "Synced", "False")
    })
    .await;
    let message = condition(&refused, "Synced").unwrap().message.unwrap();
    assert!(message.contains("managed by another resource"), "{message}");
    assert_eq!(refused.annotations()[EXTERNAL_NAME], id);
    let after = world.team_info(&id).await.expect("the team by hand stays");
    assert_eq!(after.team_alias, before.team_alias, "left as it was");
    assert_eq!(after.metadata, before.metadata, "left as it was");
    assert!(
        world.team_ids_with_alias(&alias).await.is_empty(),
        "no second team"
    );
    let requests = team_requests(&world);
    assert!(
        requests.contains(&("POST /team/new".to_owned(), 1)),
        "one refused create, then reads: {requests:?}"
    );
    teams
        .delete("theirs", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "theirs").await;
    assert!(
        world.team_info(&id).await.is_some(),
        "another resource's team is never deleted"
    );
    world.litellm.team_delete(&id).await.unwrap();

    // Unmarked, in the instance's namespace: adopted, as after an observe.
    let id = made_by_hand(&world, "unmarked", None).await;
    let alias = format!("Adopted-{}", k8s::unique_suffix());
    world.create(&team("unmarked", &alias)).await;
    wait_for(&teams, "unmarked", "adopted and Ready", |t| {
        is(t, "Ready", "True") && is(t, "Synced", "True")
    })
    .await;
    assert_eq!(
        world.team_ids_with_alias(&alias).await,
        [id.as_str()],
        "the team by hand took the resource's alias: one team"
    );
    teams
        .delete("unmarked", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "unmarked").await;
    assert!(world.team_info(&id).await.is_none());
}
