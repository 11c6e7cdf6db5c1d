//! Keys are never lost and can be replaced, end to end against the real API
//! server and the real LiteLLM proxy: a connection Secret that is deleted,
//! stripped or renamed gets a new working key (the unreachable one is
//! revoked), a rotation on request keeps the old key through its grace
//! period, and an interrupted rotation resumes from its journal.

use crate::support;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMVirtualKey;
use litellm_crossplane::litellm::{generate_key, token_of, Secret};
use litellm_crossplane::provider::kinds::key::rotation::{
    self, KEY_REPLACED, LAST_ROTATION, PENDING_KEY, RETIRING_TOKEN, ROTATE_REQUESTED_AT,
};
use serde_json::json;
use support::k8s;
use support::provider::{condition, eventually, is, manifest, wait_for, wait_gone, world, World};

/// The key in Secret `name`, if any.
async fn stored(world: &World, name: &str) -> Option<Secret> {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let secret = secrets.get_opt(name).await.unwrap()?;
    let bytes = secret.data?.get("key")?.0.clone();
    Some(Secret::new(String::from_utf8(bytes).unwrap()))
}

/// Waits until LiteLLM no longer has `key` (`why`: what is awaited). Asked of the admin API, not by authenticating with the
/// key: the proxy caches keys that authenticated and may accept a deleted
/// one until that cache expires.
async fn assert_revoked(world: &World, key: &Secret, why: &str) {
    let token = token_of(key);
    eventually(why, || async {
        world
            .litellm
            .key_info(&token)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

/// Whether `key` authenticates at the real proxy.
async fn authenticates(world: &World, key: &Secret) -> bool {
    reqwest::Client::new()
        .get(format!("{}/key/info", world.url))
        .bearer_auth(key.expose())
        .send()
        .await
        .unwrap()
        .status()
        == 200
}

async fn ready_key(
    world: &World,
    name: &str,
    for_provider: serde_json::Value,
) -> (Api<LiteLLMVirtualKey>, Secret) {
    let key = manifest::<LiteLLMVirtualKey>(
        "LiteLLMVirtualKey",
        name,
        json!({}),
        json!({"forProvider": for_provider}),
    );
    let keys = world.create(&key).await;
    wait_for(&keys, name, "key Ready", |k| is(k, "Ready", "True")).await;
    let secret = stored(world, &format!("{name}-key"))
        .await
        .expect("stored key");
    (keys, secret)
}

/// Waits for a replacement of `old` (reason `reason`) and returns the new
/// key as stored in Secret `secret`, after checking it is the recorded one
/// and works.
async fn replaced(
    world: &World,
    keys: &Api<LiteLLMVirtualKey>,
    name: &str,
    secret: &str,
    old: &Secret,
    reason: &str,
) -> Secret {
    let key = wait_for(keys, name, "the key replaced", |k| {
        is(k, "Ready", "True")
            && condition(k, KEY_REPLACED).is_some_and(|c| c.reason == reason)
            && k.annotations().get(EXTERNAL_NAME) != Some(&token_of(old))
    })
    .await;
    let new = eventually("the new key in the Secret", || async {
        stored(world, secret)
            .await
            .filter(|k| k.expose() != old.expose())
    })
    .await;
    assert_eq!(key.annotations()[EXTERNAL_NAME], token_of(&new));
    assert!(authenticates(world, &new).await, "the new key works");
    let text = serde_json::to_string(&key.status).unwrap();
    assert!(
        !text.contains(new.expose()) && !text.contains(old.expose()),
        "no secret in status"
    );
    new
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_lost_key_is_replaced_and_the_unreachable_one_revoked() {
    let Some(world) = world("pr-lost").await else {
        return;
    };
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let (keys, first) = ready_key(&world, "ci", json!({"maxBudget": "1"})).await;

    // Deleted.
    secrets
        .delete("ci-key", &DeleteParams::default())
        .await
        .unwrap();
    let second = replaced(&world, &keys, "ci", "ci-key", &first, "SecretLost").await;
    let message = condition(&keys.get("ci").await.unwrap(), KEY_REPLACED)
        .unwrap()
        .message
        .unwrap();
    assert!(message.contains("does not exist"), "{message}");
    assert_revoked(&world, &first, "the unreachable key is revoked").await;

    // Stripped of `key`.
    let strip = json!({"data": {"key": null}});
    secrets
        .patch("ci-key", &PatchParams::default(), &Patch::Merge(&strip))
        .await
        .unwrap();
    let third = replaced(&world, &keys, "ci", "ci-key", &second, "SecretLost").await;
    assert_revoked(&world, &second, "the replaced key to be revoked").await;

    // Renamed: the key moves to the new Secret.
    let rename = json!({"spec": {"writeConnectionSecretToRef": {"name": "ci-moved"}}});
    keys.patch("ci", &PatchParams::default(), &Patch::Merge(&rename))
        .await
        .unwrap();
    let fourth = replaced(&world, &keys, "ci", "ci-moved", &third, "SecretLost").await;
    assert_revoked(&world, &third, "the replaced key to be revoked").await;

    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert_revoked(&world, &fourth, "deleted with the resource").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_requested_rotation_keeps_the_old_key_for_its_grace_period() {
    let Some(world) = world("pr-request").await else {
        return;
    };
    let alias = format!("rot-{}", k8s::unique_suffix());
    let (keys, first) = ready_key(
        &world,
        "ci",
        json!({"keyAlias": alias, "maxBudget": "3", "rotation": {"gracePeriod": "1h"}}),
    )
    .await;
    let before = keys.get("ci").await.unwrap();
    // The key must be older than the request, written in whole seconds
    // (and LiteLLM's clock is read by another process).
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let requested = json!({"metadata": {"annotations": {
        ROTATE_REQUESTED_AT: format!("{:.0}", k8s_openapi::jiff::Timestamp::now())
    }}});
    keys.patch("ci", &PatchParams::default(), &Patch::Merge(&requested))
        .await
        .unwrap();
    let second = replaced(&world, &keys, "ci", "ci-key", &first, "RotationRequested").await;

    // Both keys work during the grace period; the new one has the alias.
    assert!(
        authenticates(&world, &first).await,
        "the old key works until the grace period ends"
    );
    let new = world
        .litellm
        .key_info(&token_of(&second))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(new.key_alias.as_deref(), Some(alias.as_str()));
    assert_eq!(new.max_budget, Some(3.0));
    let old = world
        .litellm
        .key_info(&token_of(&first))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(old.key_alias.as_deref(), Some(alias.as_str()));
    let after = keys.get("ci").await.unwrap();
    assert_eq!(after.annotations()[RETIRING_TOKEN], token_of(&first));
    let observed = after.status.unwrap().at_provider.unwrap();
    assert!(observed.last_rotation_time.is_some());
    assert_eq!(observed.token.as_deref(), Some(token_of(&second).as_str()));
    assert!(before.annotations().get(LAST_ROTATION).is_none());

    // The request is done: nothing rotates again.
    world.reconciled_again("key", 3).await;
    assert_eq!(
        stored(&world, "ci-key").await.unwrap().expose(),
        second.expose()
    );

    // Deleting the resource deletes both keys: none is left untracked.
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert_revoked(&world, &first, "the replaced key to be revoked").await;
    assert_revoked(&world, &second, "the replaced key to be revoked").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_scheduled_rotation_replaces_the_key_and_says_when_next() {
    let Some(world) = world("pr-every").await else {
        return;
    };
    let (keys, first) = ready_key(&world, "ci", json!({"rotation": {"every": "4s"}})).await;
    replaced(&world, &keys, "ci", "ci-key", &first, "Rotated").await;
    assert_revoked(&world, &first, "no grace period: revoked at once").await;
    // Status tells when the current key was made and when it goes; with
    // `every: 4s` it may already be a later key than the second one.
    let observed = wait_for(&keys, "ci", "rotation times in status", |k| {
        k.status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref())
            .is_some_and(|a| a.last_rotation_time.is_some() && a.next_rotation_time.is_some())
    })
    .await
    .status
    .unwrap()
    .at_provider
    .unwrap();
    let last = rotation::parse_time(&observed.last_rotation_time.unwrap()).unwrap();
    let next = rotation::parse_time(&observed.next_rotation_time.unwrap()).unwrap();
    // `every` counts from the later of the rotation and the key's creation
    // in LiteLLM, which follows it by the time the create took.
    let span = next.duration_since(last).as_secs();
    assert!((4..=30).contains(&span), "{last} .. {next}");
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_interrupted_rotation_resumes_from_its_journal() {
    let Some(world) = world("pr-resume").await else {
        return;
    };
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let (keys, first) = ready_key(&world, "ci", json!({"maxBudget": "2"})).await;

    // As if the provider stopped right after step 1: a pending secret in
    // the Secret, nothing in LiteLLM.
    let pending = generate_key();
    let journal = json!({"stringData": {PENDING_KEY: pending.expose()}});
    secrets
        .patch("ci-key", &PatchParams::default(), &Patch::Merge(&journal))
        .await
        .unwrap();
    let second = replaced(&world, &keys, "ci", "ci-key", &first, "RotationResumed").await;
    assert_eq!(
        second.expose(),
        pending.expose(),
        "the journaled secret became the key"
    );
    let secret = secrets.get("ci-key").await.unwrap();
    assert!(!secret.data.unwrap().contains_key(PENDING_KEY));
    assert_revoked(&world, &first, "exactly one current key").await;

    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert_revoked(&world, &second, "the replaced key to be revoked").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_retiring_token_written_by_hand_never_deletes_another_owners_key() {
    let Some(world) = world("pr-forge").await else {
        return;
    };
    // Another owner's key, marked for a resource of another namespace.
    let victim = generate_key();
    let marker = json!({"cluster": support::provider::CLUSTER, "namespace": "someone-else",
                        "name": "victim", "uid": "u"});
    let settings = litellm_crossplane::litellm::KeyRequest {
        metadata: Some(
            json!({"crossplane_owner": marker})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..Default::default()
    };
    world
        .litellm
        .key_generate(Some(&victim), &settings)
        .await
        .unwrap();
    let (keys, _) = ready_key(&world, "ci", json!({"maxBudget": "1"})).await;
    let forged = json!({"metadata": {"annotations": {
        RETIRING_TOKEN: token_of(&victim),
        "litellm.crossplane.io/retire-after": "2000-01-01T00:00:00Z",
    }}});
    keys.patch("ci", &PatchParams::default(), &Patch::Merge(&forged))
        .await
        .unwrap();
    // The provider forgets the forged entry without deleting the key.
    wait_for(&keys, "ci", "the forged entry dropped", |k| {
        !k.annotations().contains_key(RETIRING_TOKEN)
    })
    .await;
    keys.delete("ci", &DeleteParams::default()).await.unwrap();
    wait_gone(&keys, "ci").await;
    assert!(
        world
            .litellm
            .key_info(&token_of(&victim))
            .await
            .unwrap()
            .is_some(),
        "another owner's key was deleted"
    );
    world.litellm.key_delete(&token_of(&victim)).await.unwrap();
}
