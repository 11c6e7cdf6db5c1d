//! `LiteLLMModel` end to end, against the real Kubernetes API server and the
//! real LiteLLM proxy (docs/tenancy.md): public model names belong to
//! the platform, a tenant's model brings its own upstream key and never the
//! proxy's environment, a rotated key Secret reaches LiteLLM, and pricing in
//! `modelInfo` takes effect without being drift forever.
//!
//! LiteLLM never returns a stored api key, so where a key matters the model
//! points at a stand-in upstream ([`Upstream`]) and the test sends a chat
//! completion through the real proxy: the upstream sees the key LiteLLM
//! uses, and which deployment the request was routed to.
//!
//! Observations of LiteLLM and of `status` are read as JSON, so these tests
//! also build (and fail) against a provider without these features. Each
//! test keeps its new CRD fields installed ([`CrdGuard`]) against the
//! older CRDs other working copies' tests install into a shared API server.

use crate::support;

use k8s_openapi::api::core::v1::{Namespace, Secret as KubeSecret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey};
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::k8s;
use support::metered::Metered;
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, world, World, INSTANCE,
};
use support::upstream::Upstream;

/// An upstream key Secret `name` with `apiKey: value` in `namespace`.
async fn key_secret(world: &World, namespace: &str, name: &str, value: &str) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), namespace);
    let secret = serde_json::from_value(json!({
        "metadata": {"name": name},
        "stringData": {"apiKey": value},
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("key Secret");
}

async fn set_key(world: &World, namespace: &str, name: &str, value: &str) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), namespace);
    let patch = json!({"stringData": {"apiKey": value}});
    secrets
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("key Secret updated");
}

/// `forProvider` of a chat model at `api_base`, with the key Secret `key`
/// (`None`: no `apiKeySecretRef`).
fn chat_model(model_name: &str, api_base: &str, key: Option<&str>) -> Value {
    let mut params = json!({"model": "openai/gpt-4o", "apiBase": api_base});
    if let Some(key) = key {
        params["apiKeySecretRef"] = json!({"name": key, "key": "apiKey"});
    }
    json!({"forProvider": {
        "modelName": model_name,
        "litellmParams": params,
        "modelInfo": {"mode": "chat"},
    }})
}

fn model_info_url(world: &World, query: &[(&str, &str)]) -> url::Url {
    url::Url::parse_with_params(&format!("{}/v2/model/info", world.url), query)
        .expect("model info URL")
}

/// A model as `/v2/model/info` reports it, as JSON.
async fn live_model(world: &World, id: &str) -> Option<Value> {
    let reply: Value = reqwest::Client::new()
        .get(model_info_url(world, &[("modelId", id)]))
        .bearer_auth(&world.master_key)
        .send()
        .await
        .expect("model info")
        .error_for_status()
        .expect("model info answered")
        .json()
        .await
        .expect("model info body");
    reply["data"]
        .as_array()
        .expect("a list of models")
        .iter()
        .find(|m| m["model_info"]["id"] == id)
        .cloned()
}

/// Ids of every deployment LiteLLM serves under exactly `model_name`.
async fn deployments_named(world: &World, model_name: &str) -> Vec<String> {
    let reply: Value = reqwest::Client::new()
        .get(model_info_url(
            world,
            &[("model", model_name), ("size", "1000")],
        ))
        .bearer_auth(&world.master_key)
        .send()
        .await
        .expect("model list")
        .error_for_status()
        .expect("model list answered")
        .json()
        .await
        .expect("model list body");
    reply["data"]
        .as_array()
        .expect("a list of models")
        .iter()
        .filter(|m| m["model_name"] == model_name)
        .map(|m| {
            m["model_info"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// One chat completion through the real proxy with the master key; the
/// HTTP status.
async fn chat(world: &World, model_name: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"model": model_name, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("chat completion sent")
        .status()
        .as_u16()
}

/// A chat completion for `model_name` with the key `key`: the status.
async fn chat_as(world: &World, key: &str, model_name: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", world.url))
        .bearer_auth(key)
        .json(&json!({"model": model_name, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("chat completion sent")
        .status()
        .as_u16()
}

fn status_json(model: &LiteLLMModel) -> Value {
    serde_json::to_value(&model.status).unwrap()
}

fn public_model_name(model: &LiteLLMModel) -> Option<String> {
    status_json(model)["atProvider"]["publicModelName"]
        .as_str()
        .map(str::to_owned)
}

fn fingerprint(model: &LiteLLMModel) -> Option<String> {
    status_json(model)["atProvider"]["secretFingerprints"]["litellmParams.apiKeySecretRef"]
        .as_str()
        .map(str::to_owned)
}

fn id_of(model: &LiteLLMModel) -> String {
    model.annotations()[EXTERNAL_NAME].clone()
}

async fn ready(models: &Api<LiteLLMModel>, name: &str) -> LiteLLMModel {
    wait_for(models, name, "Ready and Synced", |m| {
        is(m, "Ready", "True") && is(m, "Synced", "True")
    })
    .await
}

async fn refused(models: &Api<LiteLLMModel>, name: &str) -> (LiteLLMModel, String) {
    let model = wait_for(models, name, "Synced=False", |m| is(m, "Synced", "False")).await;
    let message = condition(&model, "Synced").unwrap().message.unwrap();
    (model, message)
}

async fn delete(models: &Api<LiteLLMModel>, name: &str) {
    models.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(models, name).await;
}

/// Every event note in `namespace`.
async fn event_notes(world: &World, namespace: &str) -> String {
    support::provider::events(&world.kube, namespace)
        .await
        .into_iter()
        .filter_map(|e| e.note)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_model_never_joins_a_platform_name() {
    let Some(world) = world("pm-names").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pm-names-tenant").await;
    let (platform_upstream, tenant_upstream) = (Upstream::start().await, Upstream::start().await);
    let public = format!("gpt-4o-{}", k8s::unique_suffix());

    key_secret(&world, &world.namespace, "platform-key", "sk-platform-e2e").await;
    let platform = world
        .create(&manifest::<LiteLLMModel>(
            "LiteLLMModel",
            "platform",
            json!({}),
            chat_model(&public, platform_upstream.url(), Some("platform-key")),
        ))
        .await;
    let platform_model = ready(&platform, "platform").await;

    // The tenant asks for the platform's name, and for plain `gpt-4o`,
    // with its own upstream and key.
    key_secret(&world, &tenant.namespace, "own-key", "sk-tenant-e2e").await;
    let models = tenant.api::<LiteLLMModel>(&world);
    for (name, model_name) in [("sneaky", public.as_str()), ("literal", "gpt-4o")] {
        let model: LiteLLMModel = world.tenant_manifest(
            "LiteLLMModel",
            name,
            json!({}),
            chat_model(model_name, tenant_upstream.url(), Some("own-key")),
        );
        models.create(&PostParams::default(), &model).await.unwrap();
    }
    for (name, model_name) in [("sneaky", public.as_str()), ("literal", "gpt-4o")] {
        let model = ready(&models, name).await;
        let served = format!("{}/{model_name}", tenant.namespace);
        let live = live_model(&world, &id_of(&model))
            .await
            .expect("in LiteLLM");
        assert_eq!(live["model_name"], served.as_str(), "{name}");
        assert_eq!(deployments_named(&world, &served).await, [id_of(&model)]);
        assert!(
            !deployments_named(&world, model_name)
                .await
                .contains(&id_of(&model)),
            "{name} joined the public {model_name}"
        );
    }
    assert_eq!(
        deployments_named(&world, &public).await,
        [id_of(&platform_model)]
    );
    // Status says which name LiteLLM serves.
    assert_eq!(
        public_model_name(&platform_model).as_deref(),
        Some(public.as_str())
    );
    for (name, model_name) in [("sneaky", public.as_str()), ("literal", "gpt-4o")] {
        let served = format!("{}/{model_name}", tenant.namespace);
        let model = models.get(name).await.unwrap();
        assert_eq!(public_model_name(&model).as_deref(), Some(served.as_str()));
    }

    // Traffic for the public name only ever reaches the platform's upstream.
    for _ in 0..4 {
        assert_eq!(chat(&world, &public).await, 200);
    }
    assert_eq!(
        platform_upstream.seen(),
        vec!["Bearer sk-platform-e2e"; 4],
        "every request for {public} went to the platform's deployment"
    );
    assert!(tenant_upstream.seen().is_empty());
    // The tenant's deployment answers under its namespaced name, with the
    // tenant's own key.
    let served = format!("{}/{public}", tenant.namespace);
    assert_eq!(chat(&world, &served).await, 200);
    assert_eq!(tenant_upstream.seen(), ["Bearer sk-tenant-e2e"]);

    for name in ["sneaky", "literal"] {
        delete(&models, name).await;
    }
    delete(&platform, "platform").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_granted_namespace_publishes_public_names() {
    let Some(world) = world("pm-grant").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pm-grant-tenant").await;
    const LABEL: &str = "litellm.example.com/public-models";
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let grant = |grant: Value| {
        let instances = instances.clone();
        async move {
            let patch = json!({"spec": {"publicModelNamespaces": grant}});
            instances
                .patch(INSTANCE, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("grant patched");
        }
    };
    let namespaces: Api<Namespace> = Api::all(world.kube.clone());
    let label = |value: Value| {
        let namespaces = namespaces.clone();
        let namespace = tenant.namespace.clone();
        async move {
            let patch = json!({"metadata": {"labels": {LABEL: value}}});
            namespaces
                .patch(&namespace, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("namespace labelled");
        }
    };
    grant(json!({"selector": {"matchLabels": {LABEL: "true"}}})).await;
    label(json!("true")).await;

    key_secret(&world, &tenant.namespace, "own-key", "sk-granted-e2e").await;
    let models = tenant.api::<LiteLLMModel>(&world);
    let model: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "gpt",
        json!({}),
        // A closed loopback port: nothing is ever called.
        chat_model("gpt-4o", "http://127.0.0.1:9", Some("own-key")),
    );
    models.create(&PostParams::default(), &model).await.unwrap();
    let model = ready(&models, "gpt").await;
    let id = id_of(&model);
    assert_eq!(
        live_model(&world, &id).await.unwrap()["model_name"],
        "gpt-4o"
    );
    assert!(deployments_named(&world, "gpt-4o").await.contains(&id));

    // Without the label the grant is gone: the model moves into the
    // namespace's own names on the next poll.
    let namespaced = format!("{}/gpt-4o", tenant.namespace);
    label(Value::Null).await;
    eventually("the model to be renamed into its namespace", || async {
        let live = live_model(&world, &id).await?;
        (live["model_name"] == namespaced.as_str()).then_some(())
    })
    .await;
    assert!(!deployments_named(&world, "gpt-4o").await.contains(&id));

    // Granted by name.
    grant(json!({"names": [tenant.namespace], "selector": null})).await;
    eventually("the model to be published as gpt-4o again", || async {
        let live = live_model(&world, &id).await?;
        (live["model_name"] == "gpt-4o").then_some(())
    })
    .await;
    let model = ready(&models, "gpt").await;
    eventually("status to report the public name", || async {
        let model = models.get("gpt").await.ok()?;
        (public_model_name(&model).as_deref() == Some("gpt-4o")).then_some(())
    })
    .await;
    delete(&models, &model.name_any()).await;
    assert!(live_model(&world, &id).await.is_none());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenant_model_without_its_own_api_key_is_refused() {
    let Some(world) = world("pm-nokey").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pm-nokey-tenant").await;
    let models = tenant.api::<LiteLLMModel>(&world);
    let spec = chat_model("keyless", "http://127.0.0.1:9", None);
    let model: LiteLLMModel =
        world.tenant_manifest("LiteLLMModel", "keyless", json!({}), spec.clone());
    models.create(&PostParams::default(), &model).await.unwrap();
    let (model, message) = refused(&models, "keyless").await;
    assert!(
        message.starts_with("litellmParams.apiKeySecretRef: a model of LiteLLM's openai family"),
        "{message}"
    );
    assert!(
        message.contains("LiteLLM calls the upstream with the proxy's own"),
        "{message}"
    );
    assert!(!is(&model, "Ready", "True"));
    // The id was chosen, but nothing was created under it.
    let id = id_of(&model);
    tenant.reconciled_again("model", 2).await;
    assert!(live_model(&world, &id).await.is_none());

    // The platform's namespace may use the proxy's credentials.
    let platform = world
        .create(&manifest::<LiteLLMModel>(
            "LiteLLMModel",
            "keyless",
            json!({}),
            spec,
        ))
        .await;
    let platform_model = ready(&platform, "keyless").await;
    assert!(live_model(&world, &id_of(&platform_model)).await.is_some());

    // With a key of its own the tenant's model is created.
    key_secret(&world, &tenant.namespace, "own-key", "sk-tenant-e2e").await;
    let patch = json!({"spec": {"forProvider": {"litellmParams": {
        "apiKeySecretRef": {"name": "own-key", "key": "apiKey"}
    }}}});
    models
        .patch("keyless", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    ready(&models, "keyless").await;
    let live = live_model(&world, &id)
        .await
        .expect("created once it has a key");
    assert_eq!(live["model_name"], format!("{}/keyless", tenant.namespace));
    delete(&models, "keyless").await;
    delete(&platform, "keyless").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_secret_naming_the_proxys_environment_is_refused_in_every_namespace() {
    let Some(world) = world("pm-environ").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pm-environ-tenant").await;
    let models = tenant.api::<LiteLLMModel>(&world);
    const ENVIRON: &str = "os.environ/OPENAI_API_KEY";
    let hidden = |text: &str| !text.contains("OPENAI_API_KEY") && !text.contains(ENVIRON);

    key_secret(&world, &tenant.namespace, "borrowed", ENVIRON).await;
    let model: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "borrower",
        json!({}),
        chat_model("borrower", "http://127.0.0.1:9", Some("borrowed")),
    );
    models.create(&PostParams::default(), &model).await.unwrap();
    let (model, message) = refused(&models, "borrower").await;
    assert!(
        message.starts_with("litellmParams.apiKeySecretRef:") && message.contains("environment"),
        "{message}"
    );
    tenant.reconciled_again("model", 2).await;
    assert!(live_model(&world, &id_of(&model)).await.is_none());
    let model = models.get("borrower").await.unwrap();
    let status = status_json(&model).to_string();
    assert!(hidden(&status), "{status}");
    let events = event_notes(&world, &tenant.namespace).await;
    assert!(events.contains("apiKeySecretRef"), "{events}");
    assert!(hidden(&events), "{events}");
    delete(&models, "borrower").await;

    // The platform's own namespace too: a Secret holds a key, never a
    // pointer into the proxy's environment.
    let platform = world.api::<LiteLLMModel>();
    key_secret(&world, &world.namespace, "borrowed", ENVIRON).await;
    let model: LiteLLMModel = manifest(
        "LiteLLMModel",
        "platform-borrower",
        json!({}),
        chat_model(
            &format!("platform-borrower-{}", k8s::unique_suffix()),
            "http://127.0.0.1:9",
            Some("borrowed"),
        ),
    );
    platform
        .create(&PostParams::default(), &model)
        .await
        .unwrap();
    let (model, message) = refused(&platform, "platform-borrower").await;
    assert!(
        message.starts_with("litellmParams.apiKeySecretRef:") && message.contains("environment"),
        "{message}"
    );
    assert!(live_model(&world, &id_of(&model)).await.is_none());
    assert!(hidden(&status_json(&model).to_string()));
    delete(&platform, "platform-borrower").await;

    // A working model whose Secret turns into an environment reference
    // keeps the key LiteLLM has, and its status keeps that key's
    // fingerprint.
    let upstream = Upstream::start().await;
    key_secret(&world, &tenant.namespace, "own-key", "sk-tenant-first").await;
    let model: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "turncoat",
        json!({}),
        chat_model("turncoat", upstream.url(), Some("own-key")),
    );
    models.create(&PostParams::default(), &model).await.unwrap();
    let before = ready(&models, "turncoat").await;
    set_key(&world, &tenant.namespace, "own-key", ENVIRON).await;
    let (after, message) = refused(&models, "turncoat").await;
    assert!(
        message.starts_with("litellmParams.apiKeySecretRef:"),
        "{message}"
    );
    assert_eq!(fingerprint(&after), fingerprint(&before));
    assert!(fingerprint(&before).is_some());
    let served = format!("{}/turncoat", tenant.namespace);
    assert_eq!(chat(&world, &served).await, 200);
    assert_eq!(upstream.seen(), ["Bearer sk-tenant-first"]);
    let status = status_json(&after).to_string();
    assert!(hidden(&status), "{status}");
    assert!(hidden(&event_notes(&world, &tenant.namespace).await));
    delete(&models, "turncoat").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_rotated_api_key_reaches_litellm() {
    let Some(world) = world("pm-rotate").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let metered = Metered::start(&world, "pm-rotate-own").await;
    let models = metered.models(&world);
    let upstream = Upstream::start().await;
    let (first, second) = ("sk-rotate-first-e2e", "sk-rotate-second-e2e");
    key_secret(&world, &metered.namespace, "upstream", first).await;
    let model_name = format!("rotate-{}", k8s::unique_suffix());
    models
        .create(
            &PostParams::default(),
            &manifest::<LiteLLMModel>(
                "LiteLLMModel",
                "rotating",
                json!({}),
                chat_model(&model_name, upstream.url(), Some("upstream")),
            ),
        )
        .await
        .unwrap();
    let created = ready(&models, "rotating").await;
    assert_eq!(chat(&world, &model_name).await, 200);
    assert_eq!(upstream.seen(), [format!("Bearer {first}")]);
    metered.assert_quiet(3, "before the rotation").await;
    assert_eq!(
        metered.writes(),
        1,
        "the create alone, no update after it; events:\n{}",
        event_notes(&world, &metered.namespace).await
    );
    // So the fingerprint was recorded by the create itself.
    let first_print = fingerprint(&models.get("rotating").await.unwrap());

    let writes = metered.writes();
    set_key(&world, &metered.namespace, "upstream", second).await;
    let second_auth = format!("Bearer {second}");
    eventually("LiteLLM to call the upstream with the new key", || async {
        assert_eq!(chat(&world, &model_name).await, 200);
        (upstream.seen().last() == Some(&second_auth)).then_some(())
    })
    .await;
    // The status is written after the update's response (and its metric)
    // came back; LiteLLM may use the key a moment before that.
    let second_print = eventually("a new fingerprint in status", || async {
        let print = fingerprint(&models.get("rotating").await.ok()?)?;
        (Some(&print) != first_print.as_ref()).then_some(print)
    })
    .await;
    metered.assert_quiet(3, "after the rotation").await;
    assert_eq!(
        metered.writes() - writes,
        1,
        "one update sent the new key; requests {:?}, events:\n{}",
        metered.requests(),
        event_notes(&world, &metered.namespace).await
    );

    let first_print = first_print.expect("the first key's fingerprint in status");
    assert!(first_print.starts_with("sha256:"), "{first_print}");
    assert_ne!(first_print, second_print);
    assert!(!status_json(&created).to_string().contains(first));
    assert!(!second_print.contains(second));
    let model = models.get("rotating").await.unwrap();
    let message = condition(&model, "Synced")
        .unwrap()
        .message
        .unwrap_or_default();
    assert!(!message.contains(second), "{message}");
    delete(&models, "rotating").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn pricing_in_model_info_reaches_litellm_without_permanent_drift() {
    let Some(world) = world("pm-pricing").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let metered = Metered::start(&world, "pm-pricing-own").await;
    let models = metered.models(&world);
    let prices = json!({
        "input_cost_per_token": 0.000123,
        "output_cost_per_token": 0.000456,
        "cache_read_input_token_cost": 0.0000789,
        "input_cost_per_token_above_128k_tokens": 0.0002,
        // An integer, which LiteLLM returns as 1.0.
        "output_cost_per_second": 1,
    });
    let mut info = prices.clone();
    info["mode"] = json!("chat");
    info["base_model"] = json!("gpt-4o");
    models
        .create(
            &PostParams::default(),
            &manifest::<LiteLLMModel>(
                "LiteLLMModel",
                "priced",
                json!({}),
                json!({"forProvider": {
                    "modelName": format!("priced-{}", k8s::unique_suffix()),
                    // A closed loopback port: nothing is ever called.
                    "litellmParams": {"model": "openai/gpt-4o", "apiBase": "http://127.0.0.1:9"},
                    "modelInfo": info,
                }}),
            ),
        )
        .await
        .unwrap();
    let model = ready(&models, "priced").await;
    let id = id_of(&model);
    let live = live_model(&world, &id).await.expect("in LiteLLM");
    for (field, price) in prices.as_object().unwrap() {
        // Stored where LiteLLM keeps a deployment's own prices, and in
        // effect: model_info reports the deployment's price, not the cost
        // map's.
        let want = price.as_f64().unwrap();
        assert_eq!(
            live["litellm_params"][field].as_f64(),
            Some(want),
            "{field}"
        );
        assert_eq!(live["model_info"][field].as_f64(), Some(want), "{field}");
    }
    assert_eq!(live["model_info"]["mode"], "chat");
    assert_eq!(live["model_info"]["base_model"], "gpt-4o");

    // Let the first polls after the create settle, then none writes.
    metered.polled(2).await;
    metered.assert_quiet(4, "with pricing fields").await;
    let model = models.get("priced").await.unwrap();
    assert!(is(&model, "Synced", "True") && is(&model, "Ready", "True"));

    // A changed price is written once and then holds.
    let patch = json!({"spec": {"forProvider": {"modelInfo": {"input_cost_per_token": 0.00025}}}});
    models
        .patch("priced", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the new price in LiteLLM", || async {
        let live = live_model(&world, &id).await?;
        (live["litellm_params"]["input_cost_per_token"].as_f64() == Some(0.00025)).then_some(())
    })
    .await;
    metered.polled(1).await;
    metered.assert_quiet(3, "after a price change").await;
    delete(&models, "priced").await;
    assert!(live_model(&world, &id).await.is_none());
}

/// LiteLLM gives a team or key without `models` every model of the proxy,
/// and a `models` entry may name any model: so outside the platform's
/// namespace a team or key lists public names and its own namespace's
/// models only, and another tenant's private model stays out of reach.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_team_or_key_reaches_no_other_namespaces_model() {
    let Some(world) = world("pm-reach").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let owner = world.tenant("pm-reach-owner").await;
    let other = world.tenant("pm-reach-other").await;
    let upstream = Upstream::start().await;
    key_secret(&world, &owner.namespace, "own-key", "sk-owner-upstream").await;
    let private: LiteLLMModel = world.tenant_manifest(
        "LiteLLMModel",
        "private",
        json!({}),
        chat_model("private", upstream.url(), Some("own-key")),
    );
    let models = owner.api::<LiteLLMModel>(&world);
    models
        .create(&PostParams::default(), &private)
        .await
        .unwrap();
    ready(&models, "private").await;
    let private_name = format!("{}/private", owner.namespace);

    let teams = other.api::<LiteLLMTeam>(&world);
    let keys = other.api::<LiteLLMVirtualKey>(&world);
    // A team without models, keys naming the other namespace's model, a
    // wildcard, all-proxy-models: each refused before anything is written.
    let team: LiteLLMTeam =
        world.tenant_manifest("LiteLLMTeam", "all", json!({}), json!({"forProvider": {}}));
    teams.create(&PostParams::default(), &team).await.unwrap();
    let refused_team = wait_for(&teams, "all", "the team refused", |t| {
        condition(t, "Synced")
            .and_then(|c| c.message)
            .is_some_and(|m| m.starts_with("forProvider.models: "))
    })
    .await;
    let team_id = refused_team.annotations()[EXTERNAL_NAME].clone();
    assert!(world.team_info(&team_id).await.is_none());
    for (name, listed) in [
        ("named", json!([private_name])),
        ("wildcard", json!(["*"])),
        ("everything", json!(["all-proxy-models"])),
        ("empty", json!([])),
    ] {
        let key: LiteLLMVirtualKey = world.tenant_manifest(
            "LiteLLMVirtualKey",
            name,
            json!({}),
            json!({"forProvider": {"models": listed}}),
        );
        keys.create(&PostParams::default(), &key).await.unwrap();
        let refused = wait_for(&keys, name, "the key refused", |k| {
            condition(k, "Synced")
                .and_then(|c| c.message)
                .is_some_and(|m| m.starts_with("forProvider.models: "))
        })
        .await;
        let token = refused.annotations()[EXTERNAL_NAME].clone();
        assert!(
            world.litellm.key_info(&token).await.unwrap().is_none(),
            "{name}"
        );
    }

    // A key with public names works, and the other tenant's model is out of
    // its reach: LiteLLM refuses, the upstream sees nothing.
    let key: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "public",
        json!({}),
        json!({"forProvider": {"models": ["some-public-model"]}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    wait_for(&keys, "public", "the key Ready", |k| is(k, "Ready", "True")).await;
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &other.namespace);
    let data = secrets.get("public-key").await.unwrap().data.unwrap();
    let secret = String::from_utf8(data["key"].0.clone()).unwrap();
    let status = chat_as(&world, &secret, &private_name).await;
    assert!(status == 401 || status == 403, "{status}");
    assert!(upstream.seen().is_empty());
    // The owner's own key reaches it.
    let mine: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "mine",
        json!({}),
        json!({"forProvider": {"models": [private_name]}}),
    );
    let owner_keys = owner.api::<LiteLLMVirtualKey>(&world);
    owner_keys
        .create(&PostParams::default(), &mine)
        .await
        .unwrap();
    wait_for(&owner_keys, "mine", "the owner's key Ready", |k| {
        is(k, "Ready", "True")
    })
    .await;
    let owner_secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &owner.namespace);
    let data = owner_secrets.get("mine-key").await.unwrap().data.unwrap();
    let secret = String::from_utf8(data["key"].0.clone()).unwrap();
    assert_eq!(chat_as(&world, &secret, &private_name).await, 200);
    assert_eq!(upstream.seen(), ["Bearer sk-owner-upstream"]);

    for name in ["named", "wildcard", "everything", "empty", "public"] {
        keys.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&keys, name).await;
    }
    teams.delete("all", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "all").await;
    owner_keys
        .delete("mine", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&owner_keys, "mine").await;
    delete(&models, "private").await;
}

/// The key Secret value of the LiteLLMVirtualKey `name` once it is Ready.
async fn key_value(world: &World, namespace: &str, name: &str) -> String {
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(world.kube.clone(), namespace);
    wait_for(&keys, name, "the key Ready", |k| is(k, "Ready", "True")).await;
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), namespace);
    let data = secrets
        .get(&format!("{name}-key"))
        .await
        .unwrap()
        .data
        .unwrap();
    String::from_utf8(data["key"].0.clone()).unwrap()
}

/// Model access groups work on the open-source proxy: a key whose `models`
/// names a group reaches its models. A tenant's groups, like its model
/// names, are behind its namespace, so a platform group of the same name
/// never routes to a tenant's deployment; a team model (`teamRef`) is never
/// published under a public name, in the platform's namespace either, and
/// waits for its team.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn access_groups_and_team_models_stay_in_their_namespace() {
    let Some(world) = world("pm-groups").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pm-groups-tenant").await;
    let upstream = Upstream::start().await;
    let suffix = k8s::unique_suffix();
    let group = format!("gold-{suffix}");
    key_secret(&world, &tenant.namespace, "own", "sk-tenant-group-upstream").await;
    let mut spec = chat_model(&format!("grouped-{suffix}"), upstream.url(), Some("own"));
    spec["forProvider"]["accessGroups"] = json!([group]);
    let models = tenant.api::<LiteLLMModel>(&world);
    let model: LiteLLMModel = world.tenant_manifest("LiteLLMModel", "grouped", json!({}), spec);
    models.create(&PostParams::default(), &model).await.unwrap();
    let model = ready(&models, "grouped").await;
    let own_group = format!("{}/{group}", tenant.namespace);
    assert_eq!(
        status_json(&model)["atProvider"]["accessGroups"],
        json!([own_group])
    );
    let published = public_model_name(&model).unwrap();
    assert_eq!(published, format!("{}/grouped-{suffix}", tenant.namespace));

    // The tenant's key listing its own group reaches the model.
    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    let key: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "by-group",
        json!({}),
        json!({"forProvider": {"models": [own_group]}}),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    let secret = key_value(&world, &tenant.namespace, "by-group").await;
    assert_eq!(chat_as(&world, &secret, &published).await, 200);
    assert_eq!(upstream.seen(), ["Bearer sk-tenant-group-upstream"]);

    // A platform key of the group's bare name does not.
    let platform_keys = world.api::<LiteLLMVirtualKey>();
    let platform_key: LiteLLMVirtualKey = manifest(
        "LiteLLMVirtualKey",
        "platform-group",
        json!({}),
        json!({"forProvider": {"models": [group]}}),
    );
    platform_keys
        .create(&PostParams::default(), &platform_key)
        .await
        .unwrap();
    let platform_secret = key_value(&world, &world.namespace, "platform-group").await;
    let status = chat_as(&world, &platform_secret, &published).await;
    assert!(status == 401 || status == 403, "{status}");
    assert_eq!(upstream.seen().len(), 1);

    // A team model of the platform's: behind the namespace, after its team.
    let team_model = {
        let mut spec = chat_model(&format!("team-only-{suffix}"), upstream.url(), None);
        spec["forProvider"]["teamRef"] = json!({"name": "owners"});
        manifest::<LiteLLMModel>("LiteLLMModel", "team-only", json!({}), spec)
    };
    let platform_models = world.create(&team_model).await;
    let waiting = wait_for(&platform_models, "team-only", "waiting for its team", |m| {
        is(m, "Synced", "False")
    })
    .await;
    let message = condition(&waiting, "Synced").unwrap().message.unwrap();
    assert!(message.contains("teamRef: LiteLLMTeam"), "{message}");
    // Nothing was created: not even an id was chosen yet.
    if let Some(id) = waiting.annotations().get(EXTERNAL_NAME) {
        assert!(live_model(&world, id).await.is_none());
    }
    let team: LiteLLMTeam = manifest(
        "LiteLLMTeam",
        "owners",
        json!({}),
        json!({"forProvider": {"models": [format!("{}/team-only-{suffix}", world.namespace)]}}),
    );
    let teams = world.create(&team).await;
    let team = wait_for(&teams, "owners", "the team Ready", |t| {
        is(t, "Ready", "True")
    })
    .await;
    let model = ready(&platform_models, "team-only").await;
    assert_eq!(
        public_model_name(&model).unwrap(),
        format!("{}/team-only-{suffix}", world.namespace)
    );
    assert_eq!(
        status_json(&model)["atProvider"]["teamId"],
        json!(team.annotations()[EXTERNAL_NAME])
    );

    keys.delete("by-group", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "by-group").await;
    platform_keys
        .delete("platform-group", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&platform_keys, "platform-group").await;
    delete(&platform_models, "team-only").await;
    teams
        .delete("owners", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&teams, "owners").await;
    delete(&models, "grouped").await;
}
