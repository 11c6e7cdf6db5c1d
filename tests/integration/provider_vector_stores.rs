//! `LiteLLMVectorStore` end to end, against the real Kubernetes API server
//! and the real LiteLLM proxy (docs/vector-stores.md): the client's
//! contract with `/vector_store/*` as 1.108.7 keeps it (chosen ids, 400 for
//! a taken one, 404s, an update that replaces the metadata whole and
//! ignores `litellm_params`, secrets redacted when read); a vector store
//! whose API key comes from a Secret is created under its chosen id with
//! the ownership marker in `vector_store_metadata`, drift made in LiteLLM
//! is corrected, a spec change is written, a rotated key re-creates it
//! under the same id, deletion is confirmed, a chosen external name is
//! used; an unmarked vector store is imported with `Observe` and left as
//! it is; a hostile tenant's vector stores without a credential of their
//! own, with `os.environ/`, and its imports of foreign or unmarked vector
//! stores are refused with nothing sent; no secret in status or events.

use crate::support;

use kube::api::{Api, Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMVectorStore;
use litellm_crossplane::litellm::vector_stores::{VectorStore, VectorStoreRequest, REDACTED};
use litellm_crossplane::litellm::Error;
use litellm_crossplane::provider::managed::ownership::Owner;
use serde_json::{json, Map, Value};
use support::k8s;
use support::provider::{
    at_provider, condition, delete_and_wait, is, manifest, ready, refused, wait_for, world_guarded,
    write_secret, World,
};

const KIND: &str = "LiteLLMVectorStore";

fn map(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// A vector store as a UI would make it (no marker).
fn made_in_ui(id: &str, key: &str) -> VectorStoreRequest {
    VectorStoreRequest {
        vector_store_id: id.to_owned(),
        custom_llm_provider: "openai".into(),
        vector_store_name: Some("made in the UI".into()),
        vector_store_description: Some("ui".into()),
        vector_store_metadata: map(json!({"from": "ui"})),
        litellm_params: Some(map(
            json!({"api_key": key, "api_base": "http://127.0.0.1:9"}),
        )),
        litellm_credential_name: None,
        recreate: false,
    }
}

async fn live(world: &World, id: &str) -> Option<VectorStore> {
    world
        .litellm
        .vector_store_info(id)
        .await
        .expect("vector store read")
}

fn fingerprint(store: &LiteLLMVectorStore) -> Value {
    at_provider(store)["secretFingerprints"]["litellmParams.apiKeySecretRef"].clone()
}

/// Every route of the client against the real proxy, with what 1.108.7
/// does that the kind relies on.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn contract_of_every_vector_store_route() {
    let Some((world, _crds)) = world_guarded("pvs-contract").await else {
        return;
    };
    let client = &world.litellm;
    let id = format!("pvs-contract.{}", k8s::unique_suffix());
    let key = format!("sk-vs-{}-secret", k8s::unique_suffix());
    let mut request = made_in_ui(&id, &key);
    request.vector_store_metadata = map(json!({"a": 1, "b": {"c": [1, 2]}}));
    request.litellm_params.as_mut().unwrap().insert(
        "litellm_embedding_model".into(),
        json!("text-embedding-3-small"),
    );
    client.vector_store_new(&request).await.unwrap();

    // Info: the chosen id, the metadata as given, the key redacted, plain
    // parameters kept (with LiteLLM's defaults added).
    let got = client.vector_store_info(&id).await.unwrap().expect("found");
    assert_eq!(got.vector_store_id, id);
    assert_eq!(got.custom_llm_provider, "openai");
    assert_eq!(
        got.vector_store_metadata,
        Some(request.vector_store_metadata.clone())
    );
    let params = got.litellm_params.clone().unwrap();
    assert_eq!(params["api_key"], REDACTED);
    assert!(!serde_json::to_string(&params).unwrap().contains(&key));
    assert_eq!(params["api_base"], "http://127.0.0.1:9");
    assert_eq!(params["litellm_embedding_model"], "text-embedding-3-small");
    assert_eq!(params["use_in_pass_through"], false);
    // Listed.
    let listed = client.vector_store_list().await.unwrap();
    assert!(listed.iter().any(|v| v.vector_store_id == id));

    // A taken id: 400, told apart as a conflict by reading it back.
    let err = client
        .vector_store_new(&made_in_ui(&id, "x"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");

    // Update: the metadata replaced whole, the description cleared by
    // null, the provider written; litellm_params and the credential name
    // ignored.
    let mut update = request.clone();
    update.vector_store_metadata = map(json!({"only": true}));
    update.vector_store_description = None;
    update.custom_llm_provider = "bedrock".into();
    update.litellm_credential_name = Some("nowhere".into());
    let raw: Value = reqwest::Client::new()
        .post(format!("{}/vector_store/update", world.url))
        .bearer_auth(&world.master_key)
        .json(
            &json!({"vector_store_id": id, "vector_store_metadata": {"only": true},
                      "vector_store_description": null, "custom_llm_provider": "bedrock",
                      "litellm_params": {"api_base": "http://127.0.0.1:10"},
                      "litellm_credential_name": "nowhere"}),
        )
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(!raw.to_string().contains(&key), "{raw}");
    client.vector_store_update(&update).await.unwrap();
    let got = client.vector_store_info(&id).await.unwrap().unwrap();
    assert_eq!(got.vector_store_metadata, Some(map(json!({"only": true}))));
    assert_eq!(got.vector_store_description, None);
    assert_eq!(got.custom_llm_provider, "bedrock");
    assert_eq!(got.litellm_credential_name, None, "update ignores it");
    assert_eq!(
        got.litellm_params.unwrap()["api_base"],
        "http://127.0.0.1:9",
        "update ignores litellm_params"
    );

    // Missing: 404 for info, update and delete.
    let missing = format!("{id}-missing");
    assert!(client.vector_store_info(&missing).await.unwrap().is_none());
    let err = client
        .vector_store_update(&made_in_ui(&missing, "x"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(client.vector_store_delete(&id).await.unwrap());
    assert!(!client.vector_store_delete(&id).await.unwrap());
    assert!(client.vector_store_info(&id).await.unwrap().is_none());
}

/// Created from a Secret under its chosen id with the marker, corrected,
/// changed, re-created for a rotated key, re-pointed and deleted.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_vector_store_is_created_corrected_updated_recreated_and_deleted() {
    let Some((world, _crds)) = world_guarded("pvs-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let first = format!("sk-vs-{}-first", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "vs-key", json!({"key": first})).await;
    let spec = json!({"forProvider": {
        "customLlmProvider": "openai",
        "vectorStoreName": "docs",
        "vectorStoreDescription": "the docs",
        "vectorStoreMetadata": {"team": "search"},
        "litellmParams": {
            "apiBase": "http://127.0.0.1:9/v1",
            "apiKeySecretRef": {"name": "vs-key", "key": "key"},
            "additionalParams": {"litellm_embedding_model": "text-embedding-3-small"},
        },
    }});
    let stores = world
        .create(&manifest::<LiteLLMVectorStore>(
            KIND,
            "docs",
            json!({}),
            spec.clone(),
        ))
        .await;
    let created = ready(&stores, "docs").await;
    let id = format!("{ns}.docs");
    assert_eq!(created.annotations()[EXTERNAL_NAME], id);
    assert_eq!(at_provider(&created)["vectorStoreId"], json!(id));
    let stored = live(&world, &id).await.expect("created in LiteLLM");
    let metadata = stored.vector_store_metadata.clone().unwrap();
    assert_eq!(metadata["team"], "search");
    let owner = Owner::from_metadata(Some(&metadata)).expect("marked");
    assert_eq!(
        (owner.namespace.as_str(), owner.name.as_str()),
        (ns.as_str(), "docs")
    );
    let params = stored.litellm_params.clone().unwrap();
    assert_eq!(params["api_key"], REDACTED);
    assert_eq!(params["litellm_embedding_model"], "text-embedding-3-small");
    let first_print = fingerprint(&created);
    assert!(first_print
        .as_str()
        .is_some_and(|f| f.starts_with("sha256:")));

    // Drift in LiteLLM (renamed, marker gone) corrected.
    let mut ui = VectorStoreRequest {
        vector_store_id: id.clone(),
        custom_llm_provider: "openai".into(),
        vector_store_name: Some("renamed in the UI".into()),
        vector_store_description: Some("the docs".into()),
        vector_store_metadata: map(json!({"team": "search"})),
        ..VectorStoreRequest::default()
    };
    world.litellm.vector_store_update(&ui).await.unwrap();
    support::provider::eventually("the drift corrected", || async {
        let now = live(&world, &id).await?;
        let marked = Owner::from_metadata(now.vector_store_metadata.as_ref()).is_some();
        (now.vector_store_name.as_deref() == Some("docs") && marked).then_some(())
    })
    .await;

    // A spec change written by an update (same creation time).
    let created_at = live(&world, &id).await.unwrap().created_at;
    let patch = json!({"spec": {"forProvider": {"vectorStoreDescription": "new docs",
                                                "vectorStoreMetadata": {"team": "other"}}}});
    stores
        .patch("docs", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let updated = support::provider::eventually("the update written", || async {
        let now = live(&world, &id).await?;
        (now.vector_store_description.as_deref() == Some("new docs")).then_some(now)
    })
    .await;
    assert_eq!(updated.vector_store_metadata.unwrap()["team"], "other");
    assert_eq!(updated.created_at, created_at, "an update, not a recreate");

    // A rotated key: LiteLLM's update does not write litellm_params, so the
    // vector store is created again under the same id, with the new
    // fingerprint recorded.
    let second = format!("sk-vs-{}-second", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "vs-key", json!({"key": second})).await;
    let rotated = wait_for(&stores, "docs", "the new key recorded", |s| {
        fingerprint(s) != first_print && is(s, "Synced", "True")
    })
    .await;
    let again = live(&world, &id).await.expect("re-created under its id");
    assert_ne!(again.created_at, created_at, "re-created");
    assert_eq!(again.vector_store_description.as_deref(), Some("new docs"));
    assert!(Owner::from_metadata(again.vector_store_metadata.as_ref()).is_some());
    assert!(fingerprint(&rotated).as_str().is_some());

    // The Secret deleted by a careless operator: the resource names the
    // Secret it waits for, and the vector store is neither deleted nor
    // created again; the Secret back with the same key, nothing is
    // re-created either.
    let recreated_at = again.created_at.clone();
    let secrets =
        kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(world.kube.clone(), &ns);
    secrets
        .delete("vs-key", &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_for(&stores, "docs", "the missing Secret named", |s| {
        support::provider::condition(s, "Synced").is_some_and(|c| {
            c.status == "False"
                && c.message
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&format!("Secret {ns}/vs-key not found"))
        })
    })
    .await;
    world.reconciled_again("vector store", 2).await;
    let kept = live(&world, &id).await.expect("the vector store kept");
    assert_eq!(
        kept.created_at, recreated_at,
        "neither deleted nor re-created"
    );
    write_secret(&world.kube, &ns, "vs-key", json!({"key": second})).await;
    wait_for(&stores, "docs", "synced again", |s| {
        is(s, "Synced", "True") && is(s, "Ready", "True")
    })
    .await;
    world.reconciled_again("vector store", 2).await;
    let kept = live(&world, &id).await.expect("the vector store kept");
    assert_eq!(
        kept.created_at, recreated_at,
        "the same key: not re-created"
    );

    // Deleted, confirmed in LiteLLM.
    delete_and_wait(&stores, "docs").await;
    assert!(live(&world, &id).await.is_none(), "deleted in LiteLLM");

    // A chosen external name is the id.
    let chosen = format!("pvs-chosen-{}", k8s::unique_suffix());
    let named = world
        .create(&manifest::<LiteLLMVectorStore>(
            KIND,
            "named",
            json!({EXTERNAL_NAME: chosen}),
            spec.clone(),
        ))
        .await;
    ready(&named, "named").await;
    assert!(live(&world, &chosen).await.is_some());
    assert!(live(&world, &format!("{ns}.named")).await.is_none());
    delete_and_wait(&named, "named").await;
    assert!(live(&world, &chosen).await.is_none());
    ui.vector_store_id = chosen;
    support::provider::assert_secrets_nowhere::<LiteLLMVectorStore>(
        &world,
        &ns,
        &[&first, &second],
    )
    .await;
}

/// An unmarked vector store (made in the UI) imported with `Observe` from
/// the platform's namespace and left as it is; a hostile tenant refused:
/// no credential of its own, `os.environ/`, imports of unmarked or foreign
/// vector stores; its own key accepted.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_and_a_hostile_tenant() {
    let Some((world, _crds)) = world_guarded("pvs-tenancy").await else {
        return;
    };
    let ns = world.namespace.clone();
    let ui_id = format!("pvs-ui.{}", k8s::unique_suffix());
    let ui_key = format!("sk-ui-{}-key", k8s::unique_suffix());
    world
        .litellm
        .vector_store_new(&made_in_ui(&ui_id, &ui_key))
        .await
        .unwrap();
    let observe = |id: &str| json!({EXTERNAL_NAME: id});
    let observed = json!({"managementPolicies": ["Observe"], "forProvider": {
        "customLlmProvider": "openai", "vectorStoreName": "mine now",
    }});
    let platform = world
        .create(&manifest::<LiteLLMVectorStore>(
            KIND,
            "imported",
            observe(&ui_id),
            observed.clone(),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "observed", |s| {
        is(s, "Ready", "True")
    })
    .await;
    assert_eq!(at_provider(&imported)["vectorStoreId"], json!(ui_id));
    let message = condition(&imported, "Synced")
        .unwrap()
        .message
        .unwrap_or_default();
    assert!(
        message.contains("vectorStoreName"),
        "drift reported: {message}"
    );
    let before = live(&world, &ui_id).await.unwrap();
    assert_eq!(
        before.vector_store_name.as_deref(),
        Some("made in the UI"),
        "Observe changes nothing"
    );
    assert!(Owner::from_metadata(before.vector_store_metadata.as_ref()).is_none());
    delete_and_wait(&platform, "imported").await;
    assert!(
        live(&world, &ui_id).await.is_some(),
        "an Observe import is never deleted"
    );

    // The platform's own (marked) vector store, for the tenant to reach for.
    let key = format!("sk-vs-{}-platform", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "vs-key", json!({"key": key})).await;
    let keyed = json!({"forProvider": {"customLlmProvider": "openai",
        "litellmParams": {"apiKeySecretRef": {"name": "vs-key", "key": "key"}}}});
    let platform = world
        .create(&manifest::<LiteLLMVectorStore>(
            KIND,
            "platform",
            json!({}),
            keyed.clone(),
        ))
        .await;
    ready(&platform, "platform").await;
    let platform_id = format!("{ns}.platform");

    let tenant = world.tenant("pvs-hostile").await;
    let tns = tenant.namespace.clone();
    let tenant_key = format!("sk-vs-{}-tenant", k8s::unique_suffix());
    write_secret(&world.kube, &tns, "vs-key", json!({"key": tenant_key})).await;
    write_secret(
        &world.kube,
        &tns,
        "env",
        json!({"key": "os.environ/OPENAI_API_KEY"}),
    )
    .await;
    let api: Api<LiteLLMVectorStore> = tenant.api(&world);
    let cases = [
        (
            "keyless",
            json!({"forProvider": {"customLlmProvider": "openai",
                   "litellmParams": {"apiBase": "http://127.0.0.1:9"}}}),
            vec!["litellmParams.apiKeySecretRef", "openai family"],
        ),
        (
            "environment",
            json!({"forProvider": {"customLlmProvider": "openai",
                   "litellmParams": {"apiKeySecretRef": {"name": "env", "key": "key"}}}}),
            vec!["litellmParams.apiKeySecretRef", "os.environ/"],
        ),
        (
            "unknown",
            json!({"forProvider": {"customLlmProvider": "pg_vector",
                   "litellmParams": {"apiKeySecretRef": {"name": "vs-key", "key": "key"}}}}),
            vec!["customLlmProvider", "pg_vector"],
        ),
    ];
    for (name, spec, _) in &cases {
        world
            .create_for_tenant::<LiteLLMVectorStore>(&tenant, KIND, name, spec.clone())
            .await;
    }
    for (name, _, words) in &cases {
        let (_, message) = refused(&api, name).await;
        for word in words {
            assert!(message.contains(word), "{name}: {word} in {message}");
        }
        assert!(
            !message.contains(&key) && !message.contains(&tenant_key),
            "{message}"
        );
        assert!(
            live(&world, &format!("{tns}.{name}")).await.is_none(),
            "{name}: nothing created"
        );
    }
    // Imports of the UI's (unmarked) and the platform's (foreign) vector
    // stores, under every policy: refused, untouched.
    for (name, id, policies) in [
        ("steal-ui", &ui_id, json!(["Observe"])),
        ("steal-platform", &platform_id, json!(["*"])),
    ] {
        let mut spec = keyed.clone();
        spec["managementPolicies"] = policies;
        let object: LiteLLMVectorStore = world.tenant_manifest(KIND, name, observe(id), spec);
        api.create(&Default::default(), &object).await.unwrap();
        let (refused_object, message) = refused(&api, name).await;
        assert!(
            !message.contains(&ns),
            "never names the other namespace: {message}"
        );
        assert_eq!(
            at_provider(&refused_object)["vectorStoreId"],
            Value::Null,
            "{name}"
        );
    }
    let after = live(&world, &platform_id).await.unwrap();
    assert_eq!(
        Owner::from_metadata(after.vector_store_metadata.as_ref())
            .unwrap()
            .namespace,
        ns
    );
    assert!(live(&world, &ui_id)
        .await
        .unwrap()
        .vector_store_metadata
        .unwrap()
        .get("from")
        .is_some());

    // With a key of its own, the tenant's vector store is made.
    world
        .create_for_tenant::<LiteLLMVectorStore>(&tenant, KIND, "own", keyed.clone())
        .await;
    ready(&api, "own").await;
    assert!(live(&world, &format!("{tns}.own")).await.is_some());
    for name in [
        "own",
        "keyless",
        "environment",
        "unknown",
        "steal-ui",
        "steal-platform",
    ] {
        delete_and_wait(&api, name).await;
    }
    assert!(live(&world, &format!("{tns}.own")).await.is_none());
    assert!(
        live(&world, &platform_id).await.is_some(),
        "a tenant's deletion leaves the platform's"
    );
    assert!(live(&world, &ui_id).await.is_some());
    delete_and_wait(&platform, "platform").await;
    world.litellm.vector_store_delete(&ui_id).await.unwrap();
    support::provider::assert_secrets_nowhere::<LiteLLMVectorStore>(
        &world,
        &tns,
        &[&key, &tenant_key],
    )
    .await;
}

/// A tenant's team names its own vector store by `vectorStoreRefs` and
/// gets its id in LiteLLM; the vector store's deletion waits for the team
/// (a careless operator deleting it first), and goes once the team is
/// gone.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_team_names_a_vector_store_by_reference_and_its_deletion_waits() {
    let Some((world, _crds)) = world_guarded("pvs-refs").await else {
        return;
    };
    let tenant = world.tenant("pvs-refs-tenant").await;
    let tns = tenant.namespace.clone();
    let key = format!("sk-vs-{}-refs", k8s::unique_suffix());
    write_secret(&world.kube, &tns, "vs-key", json!({"key": key})).await;
    world
        .create_for_tenant::<LiteLLMVectorStore>(
            &tenant,
            KIND,
            "handbook",
            json!({"forProvider": {"customLlmProvider": "openai",
                "litellmParams": {"apiKeySecretRef": {"name": "vs-key", "key": "key"}}}}),
        )
        .await;
    let stores: Api<LiteLLMVectorStore> = tenant.api(&world);
    ready(&stores, "handbook").await;
    let id = format!("{tns}.handbook");
    world
        .create_for_tenant::<litellm_crossplane::api::LiteLLMTeam>(
            &tenant,
            "LiteLLMTeam",
            "web",
            json!({"forProvider": {"models": ["gpt-4o"], "objectPermission": {
                "vectorStoreRefs": [{"name": "handbook"}],
            }}}),
        )
        .await;
    let teams: Api<litellm_crossplane::api::LiteLLMTeam> = tenant.api(&world);
    let team = ready(&teams, "web").await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let permission = world
        .team_info(&team_id)
        .await
        .unwrap()
        .object_permission
        .expect("an object permission");
    assert_eq!(permission.vector_stores, vec![id.clone()]);

    // Deleted first: waits for the team that names it.
    stores
        .delete("handbook", &Default::default())
        .await
        .unwrap();
    let waiting = wait_for(&stores, "handbook", "waiting for the team", |s| {
        condition(s, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("waiting for") && m.contains("LiteLLMTeam web"))
    })
    .await;
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(live(&world, &id).await.is_some(), "still in LiteLLM");
    delete_and_wait(&teams, "web").await;
    support::provider::wait_gone(&stores, "handbook").await;
    assert!(live(&world, &id).await.is_none(), "deleted from LiteLLM");
}
