//! Guardrails and vector stores written with values from Secrets, against
//! the real Kubernetes API server and the real LiteLLM proxy, with the
//! provider logging at `debug`: created, rotated, corrected and deleted,
//! and no value shows in status, events or the provider's logs. A
//! guardrail's create answer echoes its parameters, secrets in clear, and a
//! vector store's rotation deletes and creates it again: both pass through
//! the client's request logging.

use crate::support;

use kube::api::{Api, Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMGuardrail, LiteLLMVectorStore};
use serde_json::{json, Value};
use support::k8s;
use support::logs::{logged_world, Logs};
use support::provider::{
    assert_secrets_nowhere, delete_and_wait, is, manifest, ready, wait_for, write_secret, World,
};

/// Status, events and the captured logs hold none of `secrets`.
async fn assert_nowhere<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    world: &World,
    logs: &Logs,
    secrets: &[&str],
) {
    assert_secrets_nowhere::<K>(world, &world.namespace, secrets).await;
    let logs = logs.text();
    assert!(
        logs.contains("litellm admin request"),
        "the logs are captured"
    );
    for secret in secrets {
        assert!(!logs.contains(secret), "a secret in the logs");
    }
}

/// The fingerprints `status.atProvider` records.
fn fingerprints<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    object: &K,
) -> Value {
    support::provider::at_provider(object)["secretFingerprints"].clone()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_guardrails_key_is_in_no_status_event_or_log() {
    let Some((world, logs, _crds)) = logged_world("lgr-log").await else {
        return;
    };
    let ns = world.namespace.clone();
    let first = format!("sk-guard-log-{}-first", k8s::unique_suffix());
    let header = format!("hdr-guard-log-{}", k8s::unique_suffix());
    write_secret(
        &world.kube,
        &ns,
        "guard",
        json!({"key": first, "header": header}),
    )
    .await;
    let name = format!("lgr-log-{}", k8s::unique_suffix());
    let guardrails = world
        .create(&manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            "pii",
            json!({}),
            json!({"forProvider": {
                "guardrailName": name,
                "guardrail": "generic_guardrail_api",
                "mode": "pre_call",
                "apiBase": "http://127.0.0.1:9",
                "apiKeySecretRef": {"name": "guard", "key": "key"},
                "secretParams": [{"name": "auth_token",
                                  "secretKeyRef": {"name": "guard", "key": "header"}}],
            }}),
        ))
        .await;
    let created = ready(&guardrails, "pii").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    let stored = world.litellm.guardrail_get(&id).await.unwrap().unwrap();
    assert_ne!(
        stored.litellm_params["api_key"],
        Value::Null,
        "the key written"
    );

    // Rotated: written again, under a new fingerprint.
    let second = format!("sk-guard-log-{}-second", k8s::unique_suffix());
    write_secret(
        &world.kube,
        &ns,
        "guard",
        json!({"key": second, "header": header}),
    )
    .await;
    let before = fingerprints(&created);
    wait_for(&guardrails, "pii", "the rotation written", |g| {
        fingerprints(g) != before && is(g, "Synced", "True")
    })
    .await;

    // A spec change and a deletion: each write sends the values again.
    let change = json!({"spec": {"forProvider": {"mode": "post_call"}}});
    guardrails
        .patch("pii", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .unwrap();
    support::provider::eventually("the change written", || async {
        let g = world.litellm.guardrail_get(&id).await.ok()??;
        (g.mode() == Some("post_call")).then_some(())
    })
    .await;
    delete_and_wait(&guardrails, "pii").await;
    assert!(world.litellm.guardrail_get(&id).await.unwrap().is_none());
    assert_nowhere::<LiteLLMGuardrail>(&world, &logs, &[&first, &second, &header]).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_vector_stores_key_is_in_no_status_event_or_log() {
    let Some((world, logs, _crds)) = logged_world("lvs-log").await else {
        return;
    };
    let ns = world.namespace.clone();
    let first = format!("sk-vs-log-{}-first", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "vs", json!({"key": first})).await;
    let stores: Api<LiteLLMVectorStore> = world
        .create(&manifest::<LiteLLMVectorStore>(
            "LiteLLMVectorStore",
            "docs",
            json!({}),
            json!({"forProvider": {
                "customLlmProvider": "openai",
                "vectorStoreName": "docs",
                "litellmParams": {
                    "apiBase": "http://127.0.0.1:9/v1",
                    "apiKeySecretRef": {"name": "vs", "key": "key"},
                },
            }}),
        ))
        .await;
    let created = ready(&stores, "docs").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    let created_at = world
        .litellm
        .vector_store_info(&id)
        .await
        .unwrap()
        .expect("created")
        .created_at;

    // Rotated: the vector store is created again with the new key.
    let second = format!("sk-vs-log-{}-second", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "vs", json!({"key": second})).await;
    let before = fingerprints(&created);
    wait_for(&stores, "docs", "the rotation written", |s| {
        fingerprints(s) != before && is(s, "Synced", "True")
    })
    .await;
    let again = world.litellm.vector_store_info(&id).await.unwrap().unwrap();
    assert_ne!(again.created_at, created_at, "created again");

    delete_and_wait(&stores, "docs").await;
    assert!(world
        .litellm
        .vector_store_info(&id)
        .await
        .unwrap()
        .is_none());
    assert_nowhere::<LiteLLMVectorStore>(&world, &logs, &[&first, &second]).await;
}
