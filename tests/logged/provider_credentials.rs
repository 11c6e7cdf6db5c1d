//! `LiteLLMCredential` end to end, against the real Kubernetes API server
//! and the real LiteLLM proxy (docs/tenancy.md): a credential built
//! from a Secret reaches LiteLLM with the ownership marker and masked
//! values, a rotated Secret value is written again, drift made in LiteLLM
//! is corrected, imports follow the ownership rules, deletion removes it,
//! and no secret value ever shows in status, events or the provider's logs.
//! Models use a credential of their own namespace by `credentialRef`: the
//! credential's deletion waits for them, and a tenant's credential must hold
//! a credential of its own.

use crate::support;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMCredential, LiteLLMModel};
use litellm_crossplane::litellm::{Credential, CredentialRequest, Secret};
use litellm_crossplane::provider::managed::resolve::{self, Reference, Unresolved};
use litellm_crossplane::provider::watch::cache::Kube;
use serde_json::{json, Value};
use support::k8s;
use support::logs::{logged_world, Logs};
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, write_secret, World, CLUSTER,
};

/// The Secret `name` of `namespace` holding `apiKey: value`.
async fn secret(world: &World, namespace: &str, name: &str, value: &str) {
    write_secret(&world.kube, namespace, name, json!({"apiKey": value})).await;
}

/// A world for one test, with the logs of the process and its CRD
/// fields kept.
/// `forProvider` with `api_key` from the Secret `secret` and a plain
/// `api_base`.
fn openai(secret: &str) -> Value {
    json!({"forProvider": {
        "values": [{"name": "api_key", "secretKeyRef": {"name": secret, "key": "apiKey"}}],
        "plainValues": {"api_base": "http://127.0.0.1:9/v1"},
        "displayName": "OpenAI e2e",
        "credentialInfo": {"custom_llm_provider": "openai"},
    }})
}

async fn live(world: &World, name: &str) -> Option<Credential> {
    world
        .litellm
        .credential_get(name)
        .await
        .expect("credential read")
}

fn at_provider(credential: &LiteLLMCredential) -> Value {
    serde_json::to_value(&credential.status).unwrap()["atProvider"].clone()
}

/// The fingerprint of `api_key` in status.
fn fingerprint(credential: &LiteLLMCredential) -> Option<String> {
    at_provider(credential)["secretFingerprints"]["api_key"]
        .as_str()
        .map(str::to_owned)
}

async fn ready(api: &Api<LiteLLMCredential>, name: &str) -> LiteLLMCredential {
    wait_for(api, name, "Ready and Synced", |c| {
        is(c, "Ready", "True") && is(c, "Synced", "True")
    })
    .await
}

async fn refused(api: &Api<LiteLLMCredential>, name: &str) -> (LiteLLMCredential, String) {
    let credential = wait_for(api, name, "Synced=False", |c| is(c, "Synced", "False")).await;
    let message = condition(&credential, "Synced").unwrap().message.unwrap();
    (credential, message)
}

async fn delete(api: &Api<LiteLLMCredential>, name: &str) {
    api.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(api, name).await;
}

/// The events of `namespace` with `reason` (every event for `None`), as
/// JSON (repeats of one event count up in it), and their notes.
async fn events(world: &World, namespace: &str, reason: Option<&str>) -> (String, Vec<String>) {
    let events: Vec<_> = support::provider::events(&world.kube, namespace)
        .await
        .into_iter()
        .filter(|e| reason.is_none() || e.reason.as_deref() == reason)
        .collect();
    let notes = events.iter().filter_map(|e| e.note.clone()).collect();
    (serde_json::to_string(&events).unwrap(), notes)
}

/// No value of `secrets` is in any status of `namespace`'s credentials, in
/// its events, or in what the provider logged.
async fn assert_nowhere(world: &World, logs: &Logs, namespace: &str, secrets: &[&str]) {
    let credentials: Api<LiteLLMCredential> = Api::namespaced(world.kube.clone(), namespace);
    let statuses: Vec<Value> = credentials
        .list(&Default::default())
        .await
        .unwrap()
        .iter()
        .map(|c| serde_json::to_value(&c.status).unwrap())
        .collect();
    let statuses = serde_json::to_string(&statuses).unwrap();
    let (events, _) = events(world, namespace, None).await;
    let logs = logs.text();
    assert!(
        logs.contains("litellm admin request"),
        "the logs are captured"
    );
    for secret in secrets {
        assert!(!statuses.contains(secret), "a secret in status: {statuses}");
        assert!(!events.contains(secret), "a secret in an event: {events}");
        assert!(!logs.contains(secret), "a secret in the logs");
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_credential_from_a_secret_is_created_rotated_corrected_and_deleted() {
    let Some((world, logs, _crds)) = logged_world("pc-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let first = format!("sk-cred-{}-A1", k8s::unique_suffix());
    secret(&world, &ns, "openai", &first).await;
    let credentials = world
        .create(&manifest::<LiteLLMCredential>(
            "LiteLLMCredential",
            "openai",
            json!({}),
            openai("openai"),
        ))
        .await;
    let created = ready(&credentials, "openai").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{ns}.openai"));

    // In LiteLLM: the marker beside the user's info, the key masked, the
    // plain value as written.
    let stored = live(&world, &id).await.expect("created in LiteLLM");
    let info = stored.credential_info.clone().unwrap();
    assert_eq!(
        info["crossplane_owner"],
        json!({"cluster": CLUSTER, "namespace": ns, "name": "openai",
               "uid": created.metadata.uid.clone().unwrap()})
    );
    assert_eq!(info["custom_llm_provider"], "openai");
    assert_eq!(stored.credential_values["api_key"], "sk****A1");
    assert_eq!(
        stored.credential_values["api_base"],
        "http://127.0.0.1:9/v1"
    );
    assert_eq!(stored.display_name.as_deref(), Some("OpenAI e2e"));
    let observed = at_provider(&created);
    assert_eq!(observed["credentialName"], id.as_str());
    assert_eq!(observed["valueNames"], json!(["api_base", "api_key"]));
    let first_fingerprint = fingerprint(&created).expect("a fingerprint");
    assert!(first_fingerprint.starts_with("sha256:"));

    // A new value in the Secret reaches LiteLLM at the next poll.
    let second = format!("sk-cred-{}-B2", k8s::unique_suffix());
    secret(&world, &ns, "openai", &second).await;
    let rotated = wait_for(&credentials, "openai", "the new fingerprint", |c| {
        fingerprint(c).is_some_and(|f| f != first_fingerprint) && is(c, "Synced", "True")
    })
    .await;
    assert_eq!(
        live(&world, &id).await.unwrap().credential_values["api_key"],
        "sk****B2"
    );
    let (_, updates) = events(&world, &ns, Some("UpdatedExternalResource")).await;
    assert!(updates.iter().any(|n| n == "updated values"), "{updates:?}");
    assert!(is(&rotated, "Ready", "True"));

    // Drift made in LiteLLM: a changed plain value and a value nobody
    // asked for are corrected.
    let drift = CredentialRequest {
        credential_name: id.clone(),
        credential_values: [
            ("api_base", "http://127.0.0.1:10/v1"),
            ("organization", "org-ui"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Secret::new(v)))
        .collect(),
        ..CredentialRequest::default()
    };
    world.litellm.credential_update(&drift).await.unwrap();
    support::provider::eventually("the drift corrected", || async {
        let values = live(&world, &id).await?.credential_values;
        (values.get("api_base") == Some(&json!("http://127.0.0.1:9/v1"))
            && !values.contains_key("organization"))
        .then_some(())
    })
    .await;
    let stored = live(&world, &id).await.unwrap();
    assert_eq!(stored.credential_values["api_key"], "sk****B2");
    assert!(stored
        .credential_info
        .unwrap()
        .contains_key("crossplane_owner"));

    // Then it stays: polls find nothing to write.
    ready(&credentials, "openai").await;
    world.reconciled_again("credential", 1).await;
    let (before, _) = events(&world, &ns, Some("UpdatedExternalResource")).await;
    world.reconciled_again("credential", 3).await;
    let (after, _) = events(&world, &ns, Some("UpdatedExternalResource")).await;
    assert_eq!(before, after, "no write in the steady state");

    assert_nowhere(&world, &logs, &ns, &[&first, &second]).await;
    delete(&credentials, "openai").await;
    assert!(live(&world, &id).await.is_none(), "deleted in LiteLLM");
    assert_nowhere(&world, &logs, &ns, &[&first, &second]).await;
}

/// A credential made in LiteLLM, with `owner` as its marker if any.
async fn made_in_litellm(world: &World, name: &str, owner: Option<Value>) {
    let mut info = serde_json::Map::new();
    info.insert("custom_llm_provider".into(), json!("openai"));
    if let Some(owner) = owner {
        info.insert("crossplane_owner".into(), owner);
    }
    let request = CredentialRequest {
        credential_name: name.to_owned(),
        credential_values: [
            ("api_key", "sk-made-in-the-ui-0000"),
            ("api_base", "http://ui"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Secret::new(v)))
        .collect(),
        credential_info: info,
        ..CredentialRequest::default()
    };
    world.litellm.credential_new(&request).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_follow_the_ownership_rules() {
    let Some((world, logs, _crds)) = logged_world("pc-import").await else {
        return;
    };
    let tenant = world.tenant("pc-import-tenant").await;
    let unmarked = format!("pc-unmarked-{}", k8s::unique_suffix());
    let foreign = format!("pc-foreign-{}", k8s::unique_suffix());
    made_in_litellm(&world, &unmarked, None).await;
    let stranger =
        json!({"cluster": CLUSTER, "namespace": "someone-else", "name": "x", "uid": "u"});
    made_in_litellm(&world, &foreign, Some(stranger.clone())).await;
    let spec = |policies: Value| {
        json!({"managementPolicies": policies,
               "forProvider": {"plainValues": {"api_base": "http://ui"}}})
    };

    // The platform's namespace imports the unmarked one.
    let platform = world
        .create(&manifest::<LiteLLMCredential>(
            "LiteLLMCredential",
            "imported",
            json!({EXTERNAL_NAME: unmarked}),
            spec(json!(["Observe"])),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "imported", |c| {
        is(c, "Ready", "True") && is(c, "Synced", "True")
    })
    .await;
    let observed = at_provider(&imported);
    assert_eq!(observed["credentialName"], unmarked.as_str());
    assert_eq!(observed["valueNames"], json!(["api_base", "api_key"]));

    // A tenant may not import it, under any policy; nor may anyone import
    // a credential marked for another resource.
    let tenants = tenant.api::<LiteLLMCredential>(&world);
    for (name, policies) in [("peek", json!(["Observe"])), ("take", json!(["*"]))] {
        let attacker: LiteLLMCredential = world.tenant_manifest(
            "LiteLLMCredential",
            name,
            json!({EXTERNAL_NAME: unmarked}),
            spec(policies),
        );
        tenants
            .create(&PostParams::default(), &attacker)
            .await
            .unwrap();
        let (refused, message) = refused(&tenants, name).await;
        assert!(
            message.contains("only resources in the LiteLLMInstance's own namespace"),
            "{message}"
        );
        assert!(refused.status.unwrap().at_provider.is_none());
    }
    for (name, policies) in [
        ("foreign-peek", json!(["Observe"])),
        ("foreign-take", json!(["*"])),
    ] {
        world
            .create(&manifest::<LiteLLMCredential>(
                "LiteLLMCredential",
                name,
                json!({EXTERNAL_NAME: foreign}),
                spec(policies),
            ))
            .await;
        let (refused, message) = refused(&platform, name).await;
        assert!(message.contains("managed by another resource"), "{message}");
        assert!(!message.contains("someone-else"), "{message}");
        assert!(refused.status.unwrap().at_provider.is_none());
    }
    // Deleting the refused resources deletes nothing, nor does deleting
    // an import without the Delete policy; nothing was written either.
    for name in ["peek", "take"] {
        delete(&tenants, name).await;
    }
    for name in ["foreign-peek", "foreign-take", "imported"] {
        delete(&platform, name).await;
    }
    let left = live(&world, &unmarked)
        .await
        .expect("the unmarked one stays");
    assert!(!left
        .credential_info
        .unwrap()
        .contains_key("crossplane_owner"));
    assert_eq!(left.credential_values["api_base"], "http://ui");
    let left = live(&world, &foreign).await.expect("the foreign one stays");
    assert_eq!(left.credential_info.unwrap()["crossplane_owner"], stranger);
    assert_nowhere(&world, &logs, &world.namespace, &["sk-made-in-the-ui-0000"]).await;
    assert_nowhere(
        &world,
        &logs,
        &tenant.namespace,
        &["sk-made-in-the-ui-0000"],
    )
    .await;
    for name in [unmarked, foreign] {
        world.litellm.credential_delete(&name).await.unwrap();
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn values_that_read_the_proxy_or_are_missing_write_nothing() {
    let Some((world, logs, _crds)) = logged_world("pc-refuse").await else {
        return;
    };
    let ns = world.namespace.clone();
    let credentials = world.api::<LiteLLMCredential>();

    secret(&world, &ns, "environment", "os.environ/LITELLM_MASTER_KEY").await;
    let plain_secret = json!({"forProvider": {
        "plainValues": {"aws_secret_access_key": "AKIA-plain-e2e"},
    }});
    for (name, spec, field) in [
        (
            "environment",
            openai("environment"),
            "forProvider.values[api_key]: ",
        ),
        (
            "plain-secret",
            plain_secret,
            "forProvider.plainValues.aws_secret_access_key: ",
        ),
    ] {
        world
            .create(&manifest::<LiteLLMCredential>(
                "LiteLLMCredential",
                name,
                json!({}),
                spec,
            ))
            .await;
        let (_, message) = refused(&credentials, name).await;
        assert!(message.starts_with(field), "{message}");
        assert!(
            !message.contains("LITELLM_MASTER_KEY") && !message.contains("AKIA"),
            "{message}"
        );
        assert!(live(&world, &format!("{ns}.{name}")).await.is_none());
    }

    // A Secret that is not there yet: nothing is created until it is, and
    // a reference to the credential resolves only once it is Ready.
    world
        .create(&manifest::<LiteLLMCredential>(
            "LiteLLMCredential",
            "later",
            json!({}),
            openai("later"),
        ))
        .await;
    let (_, message) = refused(&credentials, "later").await;
    assert_eq!(message, format!("values: Secret {ns}/later not found"));
    assert!(live(&world, &format!("{ns}.later")).await.is_none());
    let kube = Kube::live(world.kube.clone());
    let by_ref = |name: &str| {
        [Reference::Credential {
            field: "credentialRef",
            name: name.to_owned(),
        }]
    };
    let unready = resolve::references(&kube, &ns, &by_ref("later"))
        .await
        .unwrap_err();
    assert!(
        matches!(unready, Unresolved::RefNotReady { .. }),
        "{unready}"
    );
    assert_eq!(
        unready.to_string(),
        format!("credentialRef: LiteLLMCredential {ns}/later is not ready yet")
    );
    let missing = resolve::references(&kube, &ns, &by_ref("nope"))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, Unresolved::RefMissing { .. }),
        "{missing}"
    );

    let value = format!("sk-later-{}", k8s::unique_suffix());
    secret(&world, &ns, "later", &value).await;
    ready(&credentials, "later").await;
    let resolved = resolve::references(&kube, &ns, &by_ref("later"))
        .await
        .unwrap();
    assert_eq!(
        resolved.id("credentialRef"),
        Some(format!("{ns}.later").as_str())
    );

    assert_nowhere(&world, &logs, &ns, &[&value, "AKIA-plain-e2e"]).await;
    for name in ["environment", "plain-secret", "later"] {
        delete(&credentials, name).await;
    }
    assert!(live(&world, &format!("{ns}.later")).await.is_none());
}

/// The model `name` of `models`, Ready and Synced.
async fn model_ready(models: &Api<LiteLLMModel>, name: &str) -> LiteLLMModel {
    wait_for(models, name, "the model Ready and Synced", |m| {
        is(m, "Ready", "True") && is(m, "Synced", "True")
    })
    .await
}

/// The name of the credential LiteLLM uses for the model of `model`.
async fn used_by(world: &World, model: &LiteLLMModel) -> Option<String> {
    let id = &model.annotations()[EXTERNAL_NAME];
    let live = world.litellm.model_info(id).await.unwrap().expect("model");
    live.litellm_params.credential_name
}

/// `forProvider` of a model served as `name` with `litellmParams` `params`.
fn model_spec(name: &str, params: Value) -> Value {
    json!({"forProvider": {"modelName": name, "litellmParams": params}})
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn models_use_credentials_by_reference_and_keep_them_until_detached() {
    let Some((world, logs, _crds)) = logged_world("pc-ref").await else {
        return;
    };
    let ns = world.namespace.clone();
    let credentials = world.api::<LiteLLMCredential>();
    let models = world.api::<LiteLLMModel>();
    let served = format!("pc-ref-{}", k8s::unique_suffix());

    // The model waits for a credential that is not there yet, and starts
    // when it is Ready.
    let uses = json!({"model": "openai/gpt-4o", "credentialRef": {"name": "shared"}});
    world
        .create(&manifest::<LiteLLMModel>(
            "LiteLLMModel",
            "uses",
            json!({}),
            model_spec(&served, uses),
        ))
        .await;
    let waiting = wait_for(&models, "uses", "waiting for its credential", |m| {
        is(m, "Synced", "False")
    })
    .await;
    let message = condition(&waiting, "Synced").unwrap().message.unwrap();
    assert!(
        message.contains("litellmParams.credentialRef: LiteLLMCredential")
            && message.contains("shared"),
        "{message}"
    );
    secret(&world, &ns, "shared-key", "sk-by-reference-0000").await;
    world
        .create(&manifest::<LiteLLMCredential>(
            "LiteLLMCredential",
            "shared",
            json!({}),
            openai("shared-key"),
        ))
        .await;
    let credential = ready(&credentials, "shared").await;
    let name = credential.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(name, format!("{ns}.shared"));
    let model = model_ready(&models, "uses").await;
    assert_eq!(
        used_by(&world, &model).await.as_deref(),
        Some(name.as_str())
    );
    let observed = serde_json::to_value(&model.status).unwrap()["atProvider"].clone();
    assert_eq!(observed["credentialName"], name.as_str());

    // Detached in LiteLLM by someone else: drift, attached again.
    let id = model.annotations()[EXTERNAL_NAME].clone();
    let mut detached = world.litellm.model_info(&id).await.unwrap().unwrap();
    detached.litellm_params.credential_name = None;
    let request = litellm_crossplane::litellm::ModelRequest {
        model_name: detached.model_name.clone(),
        litellm_params: litellm_crossplane::litellm::ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            ..Default::default()
        },
        model_info: litellm_crossplane::litellm::ModelMetaRequest {
            id: id.clone(),
            extra: Default::default(),
        },
    };
    world.litellm.model_update(&request).await.unwrap();
    eventually("the credential attached again", || async {
        let live = world.litellm.model_info(&id).await.unwrap().unwrap();
        (live.litellm_params.credential_name.as_deref() == Some(name.as_str())).then_some(())
    })
    .await;

    // The credential's deletion waits for the model that uses it.
    credentials
        .delete("shared", &DeleteParams::default())
        .await
        .unwrap();
    world.reconciled_again("credential", 3).await;
    let held = credentials.get("shared").await.expect("still there");
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(live(&world, &name).await.is_some(), "kept in LiteLLM");

    // Removing the reference detaches it; then the deletion goes on.
    secret(&world, &ns, "own-key", "sk-own-key-0000").await;
    let own = json!({"model": "openai/gpt-4o", "credentialRef": null,
                     "apiKeySecretRef": {"name": "own-key", "key": "apiKey"}});
    models
        .patch(
            "uses",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": model_spec(&served, own)})),
        )
        .await
        .unwrap();
    let before = world.litellm.model_info(&id).await.unwrap().unwrap();
    assert_eq!(
        before.litellm_params.credential_name.as_deref(),
        Some(name.as_str()),
        "attached until the reference is removed"
    );
    eventually("the model detached", || async {
        let live = world.litellm.model_info(&id).await.unwrap().unwrap();
        live.litellm_params.credential_name.is_none().then_some(())
    })
    .await;
    wait_gone(&credentials, "shared").await;
    assert!(live(&world, &name).await.is_none(), "deleted in LiteLLM");
    // status.atProvider is what the last observation saw.
    wait_for(&models, "uses", "no credential observed", |m| {
        let observed = serde_json::to_value(&m.status).unwrap()["atProvider"].clone();
        is(m, "Ready", "True") && observed.get("credentialName").is_none()
    })
    .await;
    models
        .delete("uses", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&models, "uses").await;
    assert_nowhere(
        &world,
        &logs,
        &ns,
        &["sk-by-reference-0000", "sk-own-key-0000"],
    )
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_model_uses_only_a_credential_of_its_own() {
    let Some((world, logs, _crds)) = logged_world("pc-tenref").await else {
        return;
    };
    let tenant = world.tenant("pc-tenref-tenant").await;
    let tns = tenant.namespace.clone();
    let credentials = tenant.api::<LiteLLMCredential>(&world);
    let models = tenant.api::<LiteLLMModel>(&world);
    let create_credential = |name: &str, spec: Value| {
        let object: LiteLLMCredential =
            world.tenant_manifest("LiteLLMCredential", name, json!({}), spec);
        let credentials = credentials.clone();
        async move {
            credentials
                .create(&PostParams::default(), &object)
                .await
                .unwrap();
        }
    };

    // A tenant's credential lends no identity of the proxy: a role would be
    // assumed with the proxy's AWS identity.
    secret(&world, &tns, "key", "sk-tenant-cred-0000").await;
    create_credential(
        "role",
        json!({"forProvider": {
            "values": [{"name": "api_key", "secretKeyRef": {"name": "key", "key": "apiKey"}}],
            "plainValues": {"aws_role_name": "arn:aws:iam::1:role/proxy-can-assume"},
        }}),
    )
    .await;
    let (_, message) = refused(&credentials, "role").await;
    assert!(
        message.starts_with("plainValues.aws_role_name: "),
        "{message}"
    );
    assert!(!message.contains("proxy-can-assume"), "{message}");
    assert!(live(&world, &format!("{tns}.role")).await.is_none());

    // Settings alone are a credential like any other; a model that would
    // then have no key of its own (its family needs api_key) is refused,
    // and so is a change of a credential that would leave a model using it
    // without one.
    create_credential(
        "settings",
        json!({"forProvider": {"plainValues": {"api_base": "http://127.0.0.1:9/v1"}}}),
    )
    .await;
    ready(&credentials, "settings").await;
    let keyless: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "keyless",
        json!({}),
        model_spec(
            &format!("pc-tenref-keyless-{}", k8s::unique_suffix()),
            json!({"model": "openai/gpt-4o", "credentialRef": {"name": "settings"}}),
        ),
    );
    models
        .create(&PostParams::default(), &keyless)
        .await
        .unwrap();
    let refused_keyless = wait_for(&models, "keyless", "Synced=False", |m| {
        is(m, "Synced", "False")
    })
    .await;
    let message = condition(&refused_keyless, "Synced")
        .unwrap()
        .message
        .unwrap();
    assert!(
        message.starts_with("litellmParams.apiKeySecretRef: a model of LiteLLM's openai family"),
        "{message}"
    );
    if let Some(id) = refused_keyless.annotations().get(EXTERNAL_NAME) {
        assert!(world.litellm.model_info(id).await.unwrap().is_none());
    }
    models
        .delete("keyless", &kube::api::DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&models, "keyless").await;

    // With one, a model that names it needs no key of its own, and is
    // published behind the tenant's namespace.
    create_credential("mine", openai("key")).await;
    ready(&credentials, "mine").await;
    let served = format!("pc-tenref-{}", k8s::unique_suffix());
    let model: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "uses",
        json!({}),
        model_spec(
            &served,
            json!({"model": "openai/gpt-4o", "credentialRef": {"name": "mine"}}),
        ),
    );
    models.create(&PostParams::default(), &model).await.unwrap();
    let model = model_ready(&models, "uses").await;
    let id = model.annotations()[EXTERNAL_NAME].clone();
    let live_model = world.litellm.model_info(&id).await.unwrap().unwrap();
    assert_eq!(live_model.model_name, format!("{tns}/{served}"));
    assert_eq!(
        live_model.litellm_params.credential_name,
        Some(format!("{tns}.mine"))
    );

    // Its credential may not drop the key the model's family needs (issue
    // 32, case 2: only an AWS secret, the upstream as a plain value): the
    // change is refused and LiteLLM keeps the key it had.
    let swap = json!({"spec": {"forProvider": {"values": [
        {"name": "aws_secret_access_key", "secretKeyRef": {"name": "key", "key": "apiKey"}},
    ]}}});
    credentials
        .patch("mine", &PatchParams::default(), &Patch::Merge(&swap))
        .await
        .unwrap();
    let swapped = wait_for(&credentials, "mine", "Synced=False", |c| {
        is(c, "Synced", "False")
    })
    .await;
    let message = condition(&swapped, "Synced").unwrap().message.unwrap();
    assert!(
        message.starts_with("values: the LiteLLMModel uses uses this credential"),
        "{message}"
    );
    assert!(
        message.contains("a model of LiteLLM's openai family"),
        "{message}"
    );
    let kept = live(&world, &format!("{tns}.mine")).await.unwrap();
    assert!(
        kept.credential_values.contains_key("api_key")
            && !kept.credential_values.contains_key("aws_secret_access_key"),
        "{:?}",
        kept.credential_values.keys().collect::<Vec<_>>()
    );
    let back = json!({"spec": {"forProvider": {"values": [
        {"name": "api_key", "secretKeyRef": {"name": "key", "key": "apiKey"}},
    ]}}});
    credentials
        .patch("mine", &PatchParams::default(), &Patch::Merge(&back))
        .await
        .unwrap();
    ready(&credentials, "mine").await;

    // A credential is found in the model's own namespace only: the
    // platform's credential of that name is not the tenant's.
    secret(
        &world,
        &world.namespace,
        "platform-key",
        "sk-platform-cred-0000",
    )
    .await;
    world
        .create(&manifest::<LiteLLMCredential>(
            "LiteLLMCredential",
            "platforms",
            json!({}),
            openai("platform-key"),
        ))
        .await;
    ready(&world.api::<LiteLLMCredential>(), "platforms").await;
    let borrowing: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "borrows",
        json!({}),
        model_spec(
            &format!("{served}-b"),
            json!({"model": "openai/gpt-4o", "credentialRef": {"name": "platforms"}}),
        ),
    );
    models
        .create(&PostParams::default(), &borrowing)
        .await
        .unwrap();
    let refused_model = wait_for(&models, "borrows", "Synced=False", |m| {
        is(m, "Synced", "False")
    })
    .await;
    let message = condition(&refused_model, "Synced")
        .unwrap()
        .message
        .unwrap();
    assert!(
        message.contains(&format!("LiteLLMCredential {tns}/platforms not found")),
        "{message}"
    );
    if let Some(id) = refused_model.annotations().get(EXTERNAL_NAME) {
        assert!(world.litellm.model_info(id).await.unwrap().is_none());
    }

    for name in ["uses", "borrows"] {
        models.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&models, name).await;
    }
    for name in ["settings", "role", "mine"] {
        delete(&credentials, name).await;
    }
    delete(&world.api::<LiteLLMCredential>(), "platforms").await;
    assert_nowhere(
        &world,
        &logs,
        &tns,
        &["sk-tenant-cred-0000", "sk-platform-cred-0000"],
    )
    .await;
}
