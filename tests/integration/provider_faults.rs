//! Faults the real LiteLLM proxy cannot produce on demand (a create whose
//! response is lost, a 5xx, a timeout, the proxy going away during delete),
//! injected by a small HTTP proxy in front of the real one
//! (`support::fault_proxy`), with the entity controllers running in-process
//! against the real Kubernetes API server. After each, the real proxy holds
//! exactly one object, and a key's Secret holds a key that works.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{token_of, Secret};
use litellm_crossplane::provider::kinds::key::SECRET_KEY;
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::reconciler::FINALIZER;
use serde_json::json;
use support::fault_proxy::{Fault, FaultProxy};
use support::k8s;
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, world_with, Setup, World,
};

/// A world whose instance points at a fault proxy in front of the real
/// LiteLLM; `litellm_timeout` shortens the provider's request timeout.
async fn faulty_world(
    prefix: &str,
    litellm_timeout: Option<Duration>,
) -> Option<(World, FaultProxy)> {
    let (url, _) = support::harness::litellm()?;
    let proxy = FaultProxy::start(&url).await;
    let setup = Setup {
        endpoint: Some(proxy.url().to_owned()),
        litellm_timeout,
        ..Setup::default()
    };
    let world = world_with(prefix, setup).await?;
    Some((world, proxy))
}

fn team(name: &str, alias: &str) -> LiteLLMTeam {
    manifest(
        "LiteLLMTeam",
        name,
        json!({}),
        json!({"forProvider": {"teamAlias": alias, "maxBudget": "10"}}),
    )
}

fn key(name: &str, alias: &str, team: Option<&str>) -> LiteLLMVirtualKey {
    let mut for_provider = json!({"keyAlias": alias, "maxBudget": "1"});
    if let Some(team) = team {
        for_provider["teamRef"] = json!({"name": team});
    }
    manifest(
        "LiteLLMVirtualKey",
        name,
        json!({}),
        json!({ "forProvider": for_provider }),
    )
}

/// A unique alias, so lookups by alias see only this test's objects.
fn alias(prefix: &str) -> String {
    format!("{prefix}-{}", k8s::unique_suffix())
}

fn ready_and_synced<K: ManagedKind>(object: &K) -> bool {
    is(object, "Ready", "True") && is(object, "Synced", "True")
}

/// Checks that the real proxy holds exactly one key under `alias`, that it
/// is the one the resource's external name and Secret stand for, and that
/// the stored secret authenticates. Returns the token.
async fn assert_one_working_key(world: &World, name: &str, alias: &str) -> String {
    let keys = world.api::<LiteLLMVirtualKey>();
    let resource = keys.get(name).await.expect("key resource");
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let secret = secrets
        .get(&format!("{name}-key"))
        .await
        .expect("connection Secret");
    let stored = &secret.data.as_ref().expect("Secret data")[SECRET_KEY];
    let stored = Secret::new(String::from_utf8(stored.0.clone()).expect("a UTF-8 key"));
    let token = token_of(&stored);
    assert_eq!(resource.annotations()[EXTERNAL_NAME], token);
    assert_eq!(
        world.litellm.key_list_by_alias(alias).await.unwrap(),
        [token.as_str()],
        "exactly one key holds the alias"
    );
    let info = world.litellm.key_info(&token).await.unwrap();
    assert_eq!(
        info.expect("the key exists").key_alias.as_deref(),
        Some(alias)
    );
    let reply = reqwest::Client::new()
        .get(format!("{}/key/info", world.url))
        .bearer_auth(stored.expose())
        .send()
        .await
        .unwrap();
    assert_eq!(
        reply.status(),
        200,
        "the stored key authenticates at the real proxy"
    );
    token
}

async fn delete_and_wait<K: ManagedKind>(api: &Api<K>, name: &str) {
    api.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(api, name).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_key_create_whose_response_is_lost_is_found_not_repeated() {
    let Some((world, proxy)) = faulty_world("pf-key-lost", None).await else {
        return;
    };
    proxy.arm("POST", "/key/generate", Fault::DropResponse, 1);
    let alias = alias("lost");
    let keys = world.create(&key("ci", &alias, None)).await;
    wait_for(&keys, "ci", "key Ready", ready_and_synced).await;

    assert_eq!(proxy.injected("POST", "/key/generate"), 1);
    assert_eq!(
        proxy.forwarded("POST", "/key/generate"),
        1,
        "the retry found the key instead of generating again"
    );
    let token = assert_one_working_key(&world, "ci", &alias).await;
    // The key's secret was drawn in the same reconciliation, so it was
    // created first; the retry found the id recorded and read it.
    let create = proxy.arrivals("POST", "/key/generate")[0];
    let reads = proxy.arrivals("GET", "/key/info");
    assert!(
        !reads.is_empty() && reads.iter().all(|read| *read > create),
        "no read before the create, the retry's after it"
    );

    delete_and_wait(&keys, "ci").await;
    assert!(world.litellm.key_info(&token).await.unwrap().is_none());
}

/// A team is created first (its id chosen in the same reconciliation, see
/// `provider_create_first`): the lost answer's retry finds the id recorded,
/// observes first and finds the team, so there is still exactly one.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_team_create_whose_response_is_lost_is_found_not_repeated() {
    let Some((world, proxy)) = faulty_world("pf-team-lost", None).await else {
        return;
    };
    proxy.arm("POST", "/team/new", Fault::DropResponse, 1);
    let alias = alias("Lost");
    let teams = world.create(&team("web", &alias)).await;
    let created = wait_for(&teams, "web", "team Ready", ready_and_synced).await;

    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(proxy.injected("POST", "/team/new"), 1);
    assert_eq!(proxy.forwarded("POST", "/team/new"), 1);
    assert_eq!(world.team_ids_with_alias(&alias).await, [id.as_str()]);
    // The team was created first, under the id chosen in the same
    // reconciliation; the retry found the id recorded and read it.
    let create = proxy.arrivals("POST", "/team/new")[0];
    let reads = proxy.arrivals("GET", "/team/info");
    assert!(
        !reads.is_empty() && reads.iter().all(|read| *read > create),
        "no read before the create, the retry's after it"
    );

    delete_and_wait(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn server_errors_on_create_and_update_are_retried() {
    let Some((world, proxy)) = faulty_world("pf-5xx", None).await else {
        return;
    };
    proxy.arm("POST", "/team/new", Fault::Status(503), 2);
    proxy.arm("POST", "/key/generate", Fault::Status(500), 2);
    let team_alias = alias("Busy");
    let key_alias = alias("busy");
    let teams = world.create(&team("web", &team_alias)).await;
    let keys = world.create(&key("ci", &key_alias, Some("web"))).await;
    let created = wait_for(&teams, "web", "team Ready", ready_and_synced).await;
    wait_for(&keys, "ci", "key Ready", ready_and_synced).await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    for path in ["/team/new", "/key/generate"] {
        assert_eq!(proxy.injected("POST", path), 2, "{path}");
        assert_eq!(proxy.forwarded("POST", path), 1, "{path}");
    }
    assert_eq!(world.team_ids_with_alias(&team_alias).await, [id.as_str()]);
    let token = assert_one_working_key(&world, "ci", &key_alias).await;

    // Updates meet a 5xx too, and are retried until LiteLLM has them.
    proxy.arm("POST", "/team/update", Fault::Status(503), 1);
    proxy.arm("POST", "/key/update", Fault::Status(500), 1);
    let renamed = alias("Renamed");
    let patch = json!({"spec": {"forProvider": {"teamAlias": renamed}}});
    teams
        .patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let patch = json!({"spec": {"forProvider": {"maxBudget": "2"}}});
    keys.patch("ci", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the team update", || async {
        world
            .team_info(&id)
            .await
            .filter(|t| t.team_alias.as_deref() == Some(renamed.as_str()))
    })
    .await;
    eventually("the key update", || async {
        world
            .litellm
            .key_info(&token)
            .await
            .unwrap()
            .filter(|k| k.max_budget == Some(2.0))
    })
    .await;
    assert_eq!(proxy.injected("POST", "/team/update"), 1);
    assert_eq!(proxy.injected("POST", "/key/update"), 1);
    assert_eq!(world.team_ids_with_alias(&renamed).await, [id.as_str()]);
    assert!(world.team_ids_with_alias(&team_alias).await.is_empty());
    assert_eq!(
        assert_one_working_key(&world, "ci", &key_alias).await,
        token
    );

    delete_and_wait(&keys, "ci").await;
    delete_and_wait(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_create_that_outlives_the_client_timeout_is_not_duplicated() {
    // The stalled creates reach LiteLLM only after the provider gave up on
    // them and, most likely, after its retry created the object: the late
    // write must neither duplicate nor disturb it.
    let timeout = Duration::from_secs(2);
    let stall = Fault::Stall(Duration::from_secs(4));
    let Some((world, proxy)) = faulty_world("pf-timeout", Some(timeout)).await else {
        return;
    };
    proxy.arm("POST", "/team/new", stall, 1);
    proxy.arm("POST", "/key/generate", stall, 1);
    let team_alias = alias("Slow");
    let key_alias = alias("slow");
    let teams = world.create(&team("web", &team_alias)).await;
    let keys = world.create(&key("ci", &key_alias, Some("web"))).await;
    let created = wait_for(&teams, "web", "team Ready", ready_and_synced).await;
    wait_for(&keys, "ci", "key Ready", ready_and_synced).await;
    proxy.settled().await;
    assert_eq!(proxy.injected("POST", "/team/new"), 1);
    assert_eq!(proxy.injected("POST", "/key/generate"), 1);

    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(world.team_ids_with_alias(&team_alias).await, [id.as_str()]);
    assert_one_working_key(&world, "ci", &key_alias).await;
    // The late writes changed nothing the next polls would have to fix:
    // two more polls of each write nothing to LiteLLM.
    let writes = || {
        world
            .litellm_requests()
            .into_iter()
            .filter(|(operation, _)| !operation.starts_with("GET "))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let before = writes();
    world.reconciled_again("team", 2).await;
    world.reconciled_again("key", 2).await;
    assert_eq!(writes(), before, "a poll after the late writes wrote");
    assert!(ready_and_synced(&teams.get("web").await.unwrap()));
    assert!(ready_and_synced(&keys.get("ci").await.unwrap()));

    delete_and_wait(&keys, "ci").await;
    delete_and_wait(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn deletion_waits_while_the_proxy_is_gone_and_completes_when_it_returns() {
    let Some((world, proxy)) = faulty_world("pf-delete", None).await else {
        return;
    };
    let alias = alias("Doomed");
    let teams = world.create(&team("web", &alias)).await;
    let created = wait_for(&teams, "web", "team Ready", ready_and_synced).await;
    let id = created.annotations()[EXTERNAL_NAME].clone();

    proxy.refuse(true);
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    let failing = wait_for(&teams, "web", "the failure to be reported", |t| {
        is(t, "Synced", "False")
    })
    .await;
    let message = condition(&failing, "Synced").unwrap().message.unwrap();
    assert!(message.contains("temporary failure"), "{message}");
    assert!(
        !message.contains(&world.master_key) && !message.contains("sk-"),
        "no secret in {message}"
    );
    assert_eq!(condition(&failing, "Ready").unwrap().reason, "Deleting");
    // Retries (capped at the 1 s poll interval) keep failing meanwhile;
    // nothing lets the finalizer go and the team stays.
    world.reconciled_again("team", 3).await;
    let waiting = teams.get("web").await.expect("still there");
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(waiting.finalizers().iter().any(|f| f == FINALIZER));
    assert!(world.team_info(&id).await.is_some(), "not orphaned");

    // The proxy comes back, and even the answer to the delete itself is
    // lost: the next observation sees the team gone and lets go.
    proxy.arm("POST", "/team/delete", Fault::DropResponse, 1);
    proxy.refuse(false);
    wait_gone(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
    assert_eq!(proxy.injected("POST", "/team/delete"), 1);
    assert_eq!(proxy.forwarded("POST", "/team/delete"), 1);
    assert!(world.team_ids_with_alias(&alias).await.is_empty());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_proxy_that_echoes_a_secret_never_gets_it_into_status_or_events() {
    let Some((world, proxy)) = faulty_world("pf-echo", None).await else {
        return;
    };
    // A provider credential of no recognizable shape (not `sk-...`): only
    // scrubbing by value can keep it out.
    let credential = format!("plain-upstream-credential-{}", k8s::unique_suffix());
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let secret = serde_json::from_value(json!({
        "metadata": {"name": "upstream"},
        "stringData": {"apiKey": credential},
    }))
    .unwrap();
    secrets
        .create(&kube::api::PostParams::default(), &secret)
        .await
        .unwrap();
    proxy.arm("POST", "/model/new", Fault::EchoBody(400), 1000);
    let model = manifest::<litellm_crossplane::api::LiteLLMModel>(
        "LiteLLMModel",
        "echo",
        json!({}),
        json!({"forProvider": {
            "modelName": format!("echo-{}", k8s::unique_suffix()),
            "litellmParams": {"model": "openai/gpt-4o", "apiBase": "http://127.0.0.1:9",
                              "apiKeySecretRef": {"name": "upstream", "key": "apiKey"}}
        }}),
    );
    let models = world.create(&model).await;
    let failed = wait_for(&models, "echo", "Synced=False", |m| {
        condition(m, "Synced").is_some_and(|c| {
            c.status == "False"
                && c.message
                    .as_deref()
                    .is_some_and(|t| t.contains("cannot handle"))
        })
    })
    .await;
    let status = serde_json::to_string(&failed.status).unwrap();
    assert!(
        status.contains("<redacted>"),
        "the echo reached status, scrubbed: {status}"
    );
    assert!(
        !status.contains(&credential),
        "the credential reached status: {status}"
    );
    let events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(world.kube.clone(), &world.namespace);
    let listed = events.list(&Default::default()).await.unwrap();
    let notes: Vec<String> = listed
        .items
        .iter()
        .filter_map(|e| e.message.clone())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("cannot handle")),
        "{notes:?}"
    );
    assert!(
        notes.iter().all(|n| !n.contains(&credential)),
        "the credential reached an event"
    );
    models
        .delete("echo", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&models, "echo").await;
}

/// A burst of new objects queues in the provider instead of piling onto the
/// proxy: never more admin requests in flight to it than the limit, and
/// every object converges.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_burst_of_objects_never_has_more_requests_in_flight_than_the_limit() {
    let Some((url, _)) = support::harness::litellm() else {
        return;
    };
    let proxy = FaultProxy::start(&url).await;
    let setup = Setup {
        endpoint: Some(proxy.url().to_owned()),
        max_in_flight: Some(3),
        ..Setup::default()
    };
    let Some(world) = world_with("pf-burst", setup).await else {
        return;
    };
    let suffix = k8s::unique_suffix();
    let teams = world.api::<LiteLLMTeam>();
    let names: Vec<String> = (0..24).map(|i| format!("burst-{i}")).collect();
    for name in &names {
        teams
            .create(
                &Default::default(),
                &team(name, &format!("{name}-{suffix}")),
            )
            .await
            .unwrap();
    }
    for name in &names {
        wait_for(&teams, name, "Ready", |t| is(t, "Ready", "True")).await;
    }
    let peak = proxy.peak_in_flight();
    assert!(peak <= 3, "{peak} requests were in flight at once");
    assert!(proxy.forwarded("POST", "/team/new") >= 24);
    for name in &names {
        teams.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for name in &names {
        wait_gone(&teams, name).await;
    }
    assert!(proxy.peak_in_flight() <= 3);
}

/// A proxy that answers 429 with `Retry-After` is not asked again before
/// then; the resource says why it waits, and converges afterwards.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_proxy_asking_to_retry_later_is_not_asked_again_before_then() {
    let Some((world, proxy)) = faulty_world("pf-retry-after", None).await else {
        return;
    };
    proxy.arm("POST", "/team/new", Fault::Throttle(429, 4), 1);
    let alias = format!("Throttled-{}", k8s::unique_suffix());
    let teams = world.create(&team("web", &alias)).await;
    let waiting = wait_for(&teams, "web", "the 429 reported", |t| {
        is(t, "Synced", "False")
    })
    .await;
    let message = condition(&waiting, "Synced").unwrap().message.unwrap();
    assert!(message.contains("retry after 4s"), "{message}");
    wait_for(&teams, "web", "Ready", |t| is(t, "Ready", "True")).await;
    let arrivals = proxy.arrivals("POST", "/team/new");
    assert_eq!(arrivals.len(), 2, "one refused create and one that worked");
    let gap = arrivals[1] - arrivals[0];
    assert!(
        gap >= Duration::from_millis(3900),
        "asked again after {gap:?}"
    );
    delete_and_wait(&teams, "web").await;
}
