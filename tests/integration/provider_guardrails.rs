//! `LiteLLMGuardrail` end to end, against the real Kubernetes API server and
//! the real LiteLLM proxy (docs/guardrails.md): the client's contract with
//! `/guardrails` as 1.108.7 keeps it; a guardrail whose API key comes from a
//! Secret reaches LiteLLM under the id LiteLLM chose, with the ownership
//! marker in `guardrail_info`; a rotated key is written exactly once; spec
//! changes and drift made in LiteLLM are corrected; a lost external name
//! finds the same guardrail by name (no duplicate); a second resource may
//! not take the name; `Observe` imports; deletion is confirmed; an
//! `os.environ/` value is refused; a tenant namespace gets no guardrail at
//! all (nothing sent, not even an import of an unmarked one); no secret in
//! status or events. The provider's logs are not read here (that takes the
//! `tests/logged/` binary): the key never reaches a log line of this kind's
//! code, and the client logs no bodies.

use crate::support;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMGuardrail;
use litellm_crossplane::litellm::{Error, Guardrail, GuardrailRequest, Secret};
use serde_json::{json, Map, Value};
use support::crd_guard::CrdGuard;
use support::k8s;
use support::provider::{
    at_provider, condition, eventually, is, manifest, ready, refused, wait_for, wait_gone, world,
    write_secret, World, CLUSTER,
};

/// The integration of the tests: LiteLLM's generic guardrail API, which
/// needs an `api_base` and reaches it only when a request is guarded (the
/// harness has no network; 127.0.0.1:9 is closed). Measured on 1.108.7:
/// `presidio`, `lakera_v2`, `bedrock`, `openai_moderation`,
/// `hide-secrets` and `litellm_content_filter` are created without a
/// request too; `aporia` refuses `pre_call`.
const INTEGRATION: &str = "generic_guardrail_api";
const API_BASE: &str = "http://127.0.0.1:9";

fn params(pairs: Value) -> Map<String, Value> {
    pairs.as_object().cloned().unwrap_or_default()
}

/// A guardrail request as a UI would make it (no marker).
fn made_in_ui(name: &str, key: Option<&str>) -> GuardrailRequest {
    GuardrailRequest {
        guardrail_id: None,
        guardrail_name: name.to_owned(),
        litellm_params: params(
            json!({"guardrail": INTEGRATION, "mode": "pre_call", "api_base": API_BASE}),
        ),
        secret_params: key
            .map(|k| [("api_key".to_owned(), Secret::new(k))].into())
            .unwrap_or_default(),
        guardrail_info: params(json!({"description": "made in the UI"})),
    }
}

async fn live(world: &World, id: &str) -> Option<Guardrail> {
    world
        .litellm
        .guardrail_get(id)
        .await
        .expect("guardrail read")
}

async fn by_name(world: &World, name: &str) -> Vec<Guardrail> {
    world
        .litellm
        .guardrail_list()
        .await
        .expect("guardrail list")
        .into_iter()
        .filter(|g| g.guardrail_name == name)
        .collect()
}

fn fingerprint(guardrail: &LiteLLMGuardrail) -> Option<String> {
    serde_json::to_value(&guardrail.status).unwrap()["atProvider"]["secretFingerprints"]["api_key"]
        .as_str()
        .map(str::to_owned)
}

/// The guardrail writes the world's controllers made so far.
fn puts(world: &World) -> u64 {
    world
        .litellm_requests()
        .get("PUT /guardrails/{guardrail_id}")
        .copied()
        .unwrap_or(0)
}

fn creates(world: &World) -> u64 {
    world
        .litellm_requests()
        .get("POST /guardrails")
        .copied()
        .unwrap_or(0)
}

/// Every route of the client against the real proxy, with what 1.108.7
/// does that the kind relies on.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn contract_of_every_guardrail_route() {
    let Some(world) = world("pgr-contract").await else {
        return;
    };
    let client = &world.litellm;
    let name = format!("pgr-contract-{}", k8s::unique_suffix());
    let key = format!("sk-guard-{}-1234", k8s::unique_suffix());
    let mut request = made_in_ui(&name, Some(&key));
    request
        .guardrail_info
        .insert("crossplane_owner".into(), json!({"free": ["form", 1]}));
    request
        .litellm_params
        .insert("unreachable_fallback".into(), json!("fail_open"));
    // POST: LiteLLM chooses the id, whatever the body says.
    let mut chosen = serde_json::to_value(&request).unwrap();
    chosen["guardrail"]["guardrail_id"] = json!("chosen-by-the-caller");
    let reply: Value = reqwest::Client::new()
        .post(format!("{}/guardrails", world.url))
        .bearer_auth(&world.master_key)
        .json(&chosen)
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = reply["guardrail_id"].as_str().unwrap().to_owned();
    assert_ne!(id, "chosen-by-the-caller");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    // (The create's answer echoes the key in clear: the client reads only
    // the id.)
    assert_eq!(reply["litellm_params"]["api_key"], json!(key));

    // GET: masked key, every parameter with its default, info as given.
    let got = client.guardrail_get(&id).await.unwrap().expect("found");
    assert_eq!(got.guardrail_name, name);
    let masked = got.litellm_params["api_key"].as_str().unwrap();
    assert!(
        masked.contains("****") && !masked.contains(&key[4..key.len() - 2]),
        "{masked}"
    );
    assert_eq!(got.litellm_params["unreachable_fallback"], "fail_open");
    assert!(
        got.litellm_params.len() > 100,
        "every parameter, with its default"
    );
    assert_eq!(
        got.guardrail_info.as_ref().unwrap()["crossplane_owner"],
        json!({"free": ["form", 1]})
    );
    assert!(got.in_database());
    // By name, through /v2/guardrails/list; /guardrails/list (the config
    // file's) does not list it.
    assert_eq!(
        client
            .guardrail_by_name(&name)
            .await
            .unwrap()
            .map(|g| g.guardrail_id),
        Some(id.clone())
    );
    let v1: Value = reqwest::Client::new()
        .get(format!("{}/guardrails/list", world.url))
        .bearer_auth(&world.master_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(!v1.to_string().contains(&name), "{v1}");

    // A duplicate name: 500, told apart by reading the name back.
    let err = client
        .guardrail_new(&made_in_ui(&name, None))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    // A mode the integration does not support: 400.
    let aporia = GuardrailRequest {
        litellm_params: params(json!({"guardrail": "aporia", "mode": "pre_call",
                                      "api_key": "x", "api_base": API_BASE})),
        ..made_in_ui(&format!("{name}-aporia"), None)
    };
    let outcome = client.guardrail_new(&aporia).await;
    if let Ok(made) = &outcome {
        client.guardrail_delete(made).await.unwrap();
    }
    let err = outcome.unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 400, .. }), "{err}");

    // PUT replaces whole: the key (left out) cleared, a parameter left
    // out back to its default, the info replaced, the name changed.
    let renamed = format!("{name}-renamed");
    let put = GuardrailRequest {
        guardrail_id: Some(id.clone()),
        guardrail_name: renamed.clone(),
        litellm_params: params(
            json!({"guardrail": INTEGRATION, "mode": "post_call", "api_base": API_BASE,
                   "timeout": 7}),
        ),
        secret_params: Default::default(),
        guardrail_info: params(json!({"only": true})),
    };
    client.guardrail_update(&put).await.unwrap();
    let got = client.guardrail_get(&id).await.unwrap().unwrap();
    assert_eq!(got.guardrail_name, renamed);
    assert_eq!(got.mode(), Some("post_call"));
    assert_eq!(got.litellm_params["api_key"], Value::Null);
    assert_eq!(got.litellm_params["unreachable_fallback"], "fail_closed");
    assert_eq!(got.litellm_params["timeout"], json!(7.0));
    assert_eq!(got.guardrail_info, Some(params(json!({"only": true}))));
    // PUT of a name another guardrail has: 500, told apart as a conflict.
    let other = client
        .guardrail_new(&made_in_ui(&format!("{name}-other"), None))
        .await
        .unwrap();
    let taken = GuardrailRequest {
        guardrail_name: format!("{name}-other"),
        ..put.clone()
    };
    let err = client.guardrail_update(&taken).await.unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    // PATCH ignores a top-level default_on (so the kind never uses it).
    let patch = reqwest::Client::new()
        .patch(format!("{}/guardrails/{id}", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"default_on": true}))
        .send()
        .await
        .unwrap();
    assert!(patch.status().is_success(), "{}", patch.status());
    assert!(!client
        .guardrail_get(&id)
        .await
        .unwrap()
        .unwrap()
        .default_on());

    // Missing: 404 everywhere.
    let missing = "00000000-0000-4000-8000-000000000000";
    assert!(client.guardrail_get(missing).await.unwrap().is_none());
    let err = client
        .guardrail_update(&GuardrailRequest {
            guardrail_id: Some(missing.into()),
            guardrail_name: format!("{name}-missing"),
            ..put.clone()
        })
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    // DELETE, and again: gone.
    assert!(client.guardrail_delete(&id).await.unwrap());
    assert!(!client.guardrail_delete(&id).await.unwrap());
    assert!(client.guardrail_get(&id).await.unwrap().is_none());
    assert!(client.guardrail_delete(&other).await.unwrap());
}

/// Created from a Secret, rotated (one write), changed, corrected, found
/// again by name, defended against a second owner of its name, and deleted.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_guardrail_from_a_secret_is_created_rotated_corrected_and_deleted() {
    let Some(world) = world("pgr-life").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let ns = world.namespace.clone();
    let name = format!("pgr-{}", k8s::unique_suffix());
    let first = format!("sk-guard-{}-first", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "guard-key", json!({"key": first})).await;
    let spec = json!({"forProvider": {
        "guardrailName": name,
        "guardrail": INTEGRATION,
        "mode": "pre_call",
        "apiBase": API_BASE,
        "apiKeySecretRef": {"name": "guard-key", "key": "key"},
        "params": {"unreachable_fallback": "fail_open", "timeout": 5},
        "guardrailInfo": {"description": "PII e2e"},
    }});
    let guardrails = world
        .create(&manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            "pii",
            json!({}),
            spec.clone(),
        ))
        .await;
    let created = ready(&guardrails, "pii").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id.len(), 36, "LiteLLM's id as external name: {id}");
    assert_eq!(at_provider(&created)["guardrailId"], json!(id));
    assert_eq!(
        at_provider(&created)["paramsWritten"],
        json!(["timeout", "unreachable_fallback"])
    );
    let stored = live(&world, &id).await.expect("created in LiteLLM");
    assert_eq!(stored.guardrail_name, name);
    assert_eq!(stored.integration(), Some(INTEGRATION));
    assert_eq!(stored.litellm_params["unreachable_fallback"], "fail_open");
    assert_ne!(stored.litellm_params["api_key"], Value::Null);
    let info = stored.guardrail_info.clone().unwrap();
    assert_eq!(
        info["crossplane_owner"],
        json!({"cluster": CLUSTER, "namespace": ns, "name": "pii",
               "uid": created.metadata.uid.clone().unwrap()})
    );
    assert_eq!(info["description"], "PII e2e");
    assert_eq!(creates(&world), 1);
    let first_fingerprint = fingerprint(&created).expect("a fingerprint");

    // A new key in the Secret is written once, at the next poll.
    let before = puts(&world);
    let second = format!("sk-guard-{}-second", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "guard-key", json!({"key": second})).await;
    wait_for(&guardrails, "pii", "the new fingerprint", |g| {
        fingerprint(g).is_some_and(|f| f != first_fingerprint) && is(g, "Synced", "True")
    })
    .await;
    world.reconciled_again("guardrail", 3).await;
    assert_eq!(
        puts(&world),
        before + 1,
        "the rotated key written exactly once"
    );
    let masked = live(&world, &id).await.unwrap().litellm_params["api_key"].clone();
    let masked = masked.as_str().unwrap();
    assert!(masked.ends_with(&second[second.len() - 2..]), "{masked}");

    // The Secret deleted by a careless operator: the resource says which
    // Secret it waits for, and nothing is written or deleted in LiteLLM;
    // the Secret back with the same key, nothing is written either.
    let secrets =
        kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(world.kube.clone(), &ns);
    secrets
        .delete("guard-key", &DeleteParams::default())
        .await
        .unwrap();
    wait_for(&guardrails, "pii", "the missing Secret named", |g| {
        condition(g, "Synced").is_some_and(|c| {
            c.status == "False"
                && c.message
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&format!("Secret {ns}/guard-key not found"))
        })
    })
    .await;
    let before = (puts(&world), creates(&world));
    world.reconciled_again("guardrail", 2).await;
    assert_eq!((puts(&world), creates(&world)), before, "nothing written");
    let kept = live(&world, &id).await.expect("the guardrail kept");
    assert_ne!(kept.litellm_params["api_key"], Value::Null, "its key kept");
    write_secret(&world.kube, &ns, "guard-key", json!({"key": second})).await;
    wait_for(&guardrails, "pii", "synced again", |g| {
        is(g, "Synced", "True") && is(g, "Ready", "True")
    })
    .await;
    world.reconciled_again("guardrail", 2).await;
    assert_eq!(puts(&world), before.0, "the same key is not written again");

    // A spec change: another mode, a parameter removed (back to LiteLLM's
    // default), switched on for every request.
    let change = json!({"spec": {"forProvider": {
        "mode": "post_call", "defaultOn": true, "params": {"timeout": null},
    }}});
    guardrails
        .patch("pii", &PatchParams::default(), &Patch::Merge(&change))
        .await
        .unwrap();
    let changed = eventually("the change written", || async {
        let g = live(&world, &id).await?;
        let done = g.mode() == Some("post_call")
            && g.default_on()
            && g.litellm_params["timeout"] == Value::Null;
        done.then_some(g)
    })
    .await;
    assert_eq!(changed.litellm_params["unreachable_fallback"], "fail_open");
    assert_ne!(
        changed.litellm_params["api_key"],
        Value::Null,
        "the key sent again"
    );
    wait_for(&guardrails, "pii", "the names written", |g| {
        at_provider(g)["paramsWritten"] == json!(["unreachable_fallback"])
    })
    .await;

    // Drift made in LiteLLM (renamed, another mode, no key, no marker) is
    // corrected.
    world
        .litellm
        .guardrail_update(&GuardrailRequest {
            guardrail_id: Some(id.clone()),
            ..made_in_ui(&format!("{name}-ui"), None)
        })
        .await
        .unwrap();
    eventually("the drift corrected", || async {
        let g = live(&world, &id).await?;
        let fixed = g.guardrail_name == name
            && g.mode() == Some("post_call")
            && g.default_on()
            && g.litellm_params["api_key"] != Value::Null
            && g.litellm_params["unreachable_fallback"] == "fail_open"
            && g.guardrail_info?.contains_key("crossplane_owner");
        fixed.then_some(())
    })
    .await;

    // The external name lost (set to a name no guardrail has as id): the
    // guardrail is found again by its name and taken, never made twice.
    let lost = json!({"metadata": {"annotations": {EXTERNAL_NAME: format!("{ns}.pii")}}});
    guardrails
        .patch("pii", &PatchParams::default(), &Patch::Merge(&lost))
        .await
        .unwrap();
    wait_for(&guardrails, "pii", "the same id again", |g| {
        g.annotations().get(EXTERNAL_NAME) == Some(&id) && is(g, "Ready", "True")
    })
    .await;
    assert_eq!(by_name(&world, &name).await.len(), 1, "no second guardrail");
    assert_eq!(creates(&world), 1, "no create sent");

    // Renamed in the spec: renamed in LiteLLM, same id.
    let renamed = format!("{name}-v2");
    let rename = json!({"spec": {"forProvider": {"guardrailName": renamed}}});
    guardrails
        .patch("pii", &PatchParams::default(), &Patch::Merge(&rename))
        .await
        .unwrap();
    eventually("renamed", || async {
        (live(&world, &id).await?.guardrail_name == renamed).then_some(())
    })
    .await;

    // A second resource asking for the same name is refused; nothing is
    // created and the first is untouched.
    let mut twin_spec = spec.clone();
    twin_spec["forProvider"]["guardrailName"] = json!(renamed);
    world
        .create(&manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            "twin",
            json!({}),
            twin_spec,
        ))
        .await;
    let message = refused(&guardrails, "twin").await.1;
    assert!(
        message.contains("forProvider.guardrailName") && message.contains("managed by another"),
        "{message}"
    );
    assert_eq!(by_name(&world, &renamed).await.len(), 1);

    // An API key from the proxy's environment is refused, naming the
    // field and not the value; nothing is created.
    write_secret(
        &world.kube,
        &ns,
        "env-key",
        json!({"key": "os.environ/LITELLM_MASTER_KEY"}),
    )
    .await;
    let env_name = format!("{name}-env");
    let mut env_spec = spec.clone();
    env_spec["forProvider"]["guardrailName"] = json!(env_name);
    env_spec["forProvider"]["apiKeySecretRef"] = json!({"name": "env-key", "key": "key"});
    world
        .create(&manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            "env",
            json!({}),
            env_spec,
        ))
        .await;
    let message = refused(&guardrails, "env").await.1;
    assert!(
        message.starts_with("forProvider.apiKeySecretRef: ") && !message.contains("MASTER"),
        "{message}"
    );
    assert!(by_name(&world, &env_name).await.is_empty());

    // Deleted: confirmed gone from LiteLLM.
    for gone in ["twin", "env", "pii"] {
        guardrails
            .delete(gone, &DeleteParams::default())
            .await
            .unwrap();
        wait_gone(&guardrails, gone).await;
    }
    assert!(live(&world, &id).await.is_none(), "deleted from LiteLLM");
    support::provider::assert_secrets_nowhere::<LiteLLMGuardrail>(&world, &ns, &[&first, &second])
        .await;
}

/// An unmarked guardrail (made in the UI) is imported with `Observe` from
/// the platform's namespace and left as it is; a tenant gets no guardrail:
/// not a new one, not an import of that unmarked one, not the platform's.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_and_tenants() {
    let Some(world) = world("pgr-tenancy").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let ns = world.namespace.clone();
    let outside = format!("pgr-ui-{}", k8s::unique_suffix());
    let ui_key = format!("sk-ui-{}-key", k8s::unique_suffix());
    let ui_id = world
        .litellm
        .guardrail_new(&made_in_ui(&outside, Some(&ui_key)))
        .await
        .unwrap();
    let observe = |id: &str| json!({"crossplane.io/external-name": id});
    let spec = json!({"managementPolicies": ["Observe"], "forProvider": {
        "guardrailName": outside, "guardrail": INTEGRATION, "mode": "post_call",
    }});
    let platform = world
        .create(&manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            "imported",
            observe(&ui_id),
            spec.clone(),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "observed", |g| {
        is(g, "Ready", "True")
    })
    .await;
    assert_eq!(at_provider(&imported)["guardrailName"], json!(outside));
    assert_eq!(at_provider(&imported)["mode"], "pre_call");
    let message = condition(&imported, "Synced")
        .unwrap()
        .message
        .unwrap_or_default();
    assert!(
        message.contains("mode") && message.contains("guardrailInfo"),
        "drift reported: {message}"
    );
    let before = live(&world, &ui_id).await.unwrap();
    assert_eq!(before.mode(), Some("pre_call"), "Observe changes nothing");
    assert!(!before
        .guardrail_info
        .unwrap()
        .contains_key("crossplane_owner"));
    assert_eq!(puts(&world), 0);

    let tenant = world.tenant("pgr-tenant").await;
    let tns = tenant.namespace.clone();
    let guardrails = tenant.api::<LiteLLMGuardrail>(&world);
    write_secret(
        &world.kube,
        &tns,
        "guard-key",
        json!({"key": "sk-tenant-key-1"}),
    )
    .await;
    let own_name = format!("{tns}-own");
    let cases = [
        (
            "own",
            json!({}),
            json!({"forProvider": {"guardrailName": own_name, "guardrail": INTEGRATION,
                                   "mode": "pre_call", "defaultOn": true, "apiBase": API_BASE,
                                   "apiKeySecretRef": {"name": "guard-key", "key": "key"}}}),
        ),
        ("unmarked", observe(&ui_id), spec.clone()),
        ("unmarked-managed", observe(&ui_id), {
            let mut s = spec.clone();
            s["managementPolicies"] = json!(["*"]);
            s
        }),
    ];
    for (name, annotations, spec) in &cases {
        let object = world.tenant_manifest::<LiteLLMGuardrail>(
            "LiteLLMGuardrail",
            name,
            annotations.clone(),
            spec.clone(),
        );
        guardrails
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }
    for (name, ..) in &cases {
        let message = refused(&guardrails, name).await.1;
        assert!(
            message.contains("refused outside the LiteLLMInstance's namespace"),
            "{name}: {message}"
        );
        assert!(
            !message.contains(&ns),
            "{name} names no other namespace: {message}"
        );
        let refused = guardrails.get(name).await.unwrap();
        assert!(
            at_provider(&refused).is_null(),
            "{name}: nothing observed: {:?}",
            refused.status
        );
    }
    // Nothing was created, and the unmarked guardrail is as it was.
    assert!(by_name(&world, &own_name).await.is_empty());
    let after = live(&world, &ui_id).await.unwrap();
    assert_eq!(after.mode(), Some("pre_call"));
    assert_eq!(after.guardrail_name, outside);
    assert!(!after
        .guardrail_info
        .unwrap()
        .contains_key("crossplane_owner"));

    // The tenant's refused resources go without a request.
    for (name, ..) in &cases {
        guardrails
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        wait_gone(&guardrails, name).await;
    }
    assert!(
        live(&world, &ui_id).await.is_some(),
        "never deleted for a tenant"
    );
    // Observe never deletes: the imported guardrail stays in LiteLLM.
    platform
        .delete("imported", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&platform, "imported").await;
    assert!(live(&world, &ui_id).await.is_some());
    assert!(world.litellm.guardrail_delete(&ui_id).await.unwrap());
    support::provider::assert_secrets_nowhere::<LiteLLMGuardrail>(
        &world,
        &tns,
        &["sk-tenant-key-1"],
    )
    .await;
    support::provider::assert_secrets_nowhere::<LiteLLMGuardrail>(&world, &ns, &[&ui_key]).await;
}
