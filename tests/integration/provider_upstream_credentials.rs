//! Tenants' models reach their upstreams only with the tenant's own
//! secrets (docs/tenancy.md), against the real LiteLLM proxy that holds the
//! platform's provider credentials in its environment (tests/run.sh starts
//! it with `tests/fixtures/platform-credentials.sh`: an OpenAI key, Azure
//! and Anthropic keys, an AWS shared credentials file, a Google service
//! account, ...) and a recording upstream on 127.0.0.1 that each model's
//! `apiBase` names.
//!
//! - A platform model without a key of its own makes the proxy send the
//!   platform's OpenAI key and sign with its AWS profile: the fixture is
//!   real, and what the tenancy rules pre-empt would otherwise happen.
//! - For each family that can be pointed at a local upstream, a tenant's
//!   model is Ready and its calls carry the tenant's secret, never a value
//!   of the platform's.
//! - The hostile cases of issue 32 are refused, naming the field and the
//!   family, and create nothing in LiteLLM.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use kube::api::{DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMModel;
use litellm_crossplane::litellm::{self};
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::k8s;
use support::provider::{
    condition, eventually, is, manifest, reconciles, wait_for, wait_gone, world_with, write_secret,
    Setup, World,
};
use support::upstream::{Upstream, GOOGLE_TOKEN};

/// The proxy with the platform's credentials, and the values of those
/// credentials (every one a tenant's upstream must never see); `None`
/// (test skipped) without that proxy.
fn platform_proxy() -> Option<(String, Vec<String>)> {
    let (Ok(url), Ok(dir)) = (
        std::env::var("LITELLM_NOCUSTOM_URL"),
        std::env::var("LITELLM_PLATFORM_CREDENTIALS"),
    ) else {
        assert!(
            !k8s::harness_required(),
            "LITELLM_NOCUSTOM_URL and LITELLM_PLATFORM_CREDENTIALS are not set: tests/run.sh \
             starts that proxy"
        );
        eprintln!("skipped: no proxy with the platform's credentials");
        return None;
    };
    let dir = std::path::Path::new(&dir);
    let env = std::fs::read_to_string(dir.join("env")).expect("the fixture's env file");
    let mut values: Vec<String> = env
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(_, value)| value.to_owned())
        .filter(|value| !value.starts_with('/'))
        .collect();
    // The AWS shared credentials file and the service account.
    let aws = std::fs::read_to_string(dir.join("aws/credentials")).expect("AWS credentials");
    values.extend(
        aws.lines()
            .filter_map(|line| line.split_once(" = "))
            .map(|(_, value)| value.to_owned()),
    );
    let account: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("gcp/service-account.json")).expect("service account"),
    )
    .unwrap();
    for field in ["private_key_id", "client_email"] {
        values.push(account[field].as_str().unwrap().to_owned());
    }
    assert!(values.len() > 20, "{values:?}");
    Some((url, values))
}

/// A world whose instance is the proxy with the platform's credentials.
async fn start(prefix: &str) -> Option<(World, litellm::Client, Vec<String>)> {
    let (url, platform) = platform_proxy()?;
    let setup = Setup {
        endpoint: Some(url.clone()),
        ..Setup::default()
    };
    let world = world_with(prefix, setup).await?;
    let proxy = support::harness::admin_client(&url, &world.master_key, Duration::from_secs(10));
    Some((world, proxy, platform))
}

/// Calls the model the proxy serves as `name` once, whatever comes back
/// (the upstream's answers are not every provider's shape).
async fn call(world: &World, name: &str) {
    let _ = reqwest::Client::new()
        .post(format!("{}/chat/completions", world.endpoint))
        .bearer_auth(&world.master_key)
        .timeout(Duration::from_secs(30))
        .json(&json!({
            "model": name,
            "messages": [{"role": "user", "content": "hi"}],
            "max_tokens": 5,
        }))
        .send()
        .await
        .map(|r| r.status());
}

/// Calls `name` until the upstream has received a request that `matches`
/// (LiteLLM may take a moment to serve a model it has just stored), and
/// returns every request it received for it.
async fn calls_reaching(
    world: &World,
    upstream: &Upstream,
    name: &str,
    matches: impl Fn(&support::upstream::Received) -> bool,
) -> Vec<support::upstream::Received> {
    eventually(
        &format!("a call of {name} reaching the upstream"),
        || async {
            call(world, name).await;
            let received = upstream.received();
            received.iter().any(&matches).then_some(received)
        },
    )
    .await
}

/// No request the upstream received carries a value of the platform's.
fn assert_none_of(platform: &[String], received: &[support::upstream::Received], case: &str) {
    for request in received {
        let text = request.text();
        for value in platform {
            assert!(
                !text.contains(value.as_str()),
                "{case}: the upstream received a platform credential ({value}) in\n{text}"
            );
        }
    }
}

/// A service account of the tenant's own: a fresh RSA key, its token
/// endpoint the tenant's upstream.
fn tenant_service_account(upstream: &Upstream) -> String {
    let dir = std::env::temp_dir().join(format!("pupc-sa-{}", k8s::unique_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("key.pem");
    let status = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
        ])
        .arg("-out")
        .arg(&key)
        .status()
        .expect("openssl runs");
    assert!(status.success());
    let pem = std::fs::read_to_string(&key).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    json!({
        "type": "service_account",
        "project_id": "tenant-project",
        "private_key_id": "tenant-key-id",
        "private_key": pem,
        "client_email": "tenant@tenant-project.iam.gserviceaccount.com",
        "client_id": "200000000000000000000",
        "token_uri": format!("{}/token", upstream.url()),
    })
    .to_string()
}

fn secret_ref(name: &str, key: &str) -> Value {
    json!({"name": name, "key": key})
}

/// The platform's proxy, asked by a model of the platform's own namespace
/// with no credential of its own, calls the upstream with the platform's
/// OpenAI key and signs with the platform's AWS profile: the fallbacks the
/// tenancy rules pre-empt are real on this proxy.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_platforms_proxy_falls_back_on_its_own_credentials() {
    let Some((world, proxy, platform)) = start("pupc-control").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let upstream = Upstream::start().await;
    let models = world.api::<LiteLLMModel>();
    let suffix = k8s::unique_suffix();
    let cases = [
        (
            "openai",
            json!({"model": "openai/gpt-4o", "apiBase": upstream.url()}),
        ),
        (
            "bedrock",
            json!({"model": "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
                   "apiBase": upstream.url(), "aws": {"regionName": "us-east-1"}}),
        ),
    ];
    for (name, params) in &cases {
        world
            .create(&manifest::<LiteLLMModel>(
                "LiteLLMModel",
                name,
                json!({}),
                json!({"forProvider": {"modelName": format!("pupc-{name}-{suffix}"),
                                       "litellmParams": params}}),
            ))
            .await;
    }
    for (name, _) in &cases {
        wait_for(&models, name, "Ready", |m| is(m, "Ready", "True")).await;
    }
    let received = calls_reaching(&world, &upstream, &format!("pupc-openai-{suffix}"), |r| {
        r.target.contains("/chat/completions")
    })
    .await;
    assert!(
        received
            .iter()
            .any(|r| r.header("authorization") == Some("Bearer sk-platform-openai-0000")),
        "{received:?}"
    );
    let received = calls_reaching(&world, &upstream, &format!("pupc-bedrock-{suffix}"), |r| {
        r.target.contains("/model/")
    })
    .await;
    assert!(
        received.iter().any(|r| r
            .header("authorization")
            .is_some_and(|a| a.contains("Credential=AKIAPLATFORMDEFAULT01/"))),
        "the platform's profile signs: {received:?}"
    );
    assert!(platform.iter().any(|v| v == "AKIAPLATFORMDEFAULT01"));
    for (name, _) in &cases {
        models.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&models, name).await;
    }
    drop(proxy);
}

/// For every family that can be pointed at a local upstream, a tenant's
/// model brings its own secret, is Ready, and its calls carry that secret
/// and nothing of the platform's.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn tenant_models_send_their_own_secrets_and_never_the_platforms() {
    let Some((world, _proxy, platform)) = start("pupc-own").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pupc-own-tenant").await;
    let tns = tenant.namespace.clone();
    let models = tenant.api::<LiteLLMModel>(&world);
    let suffix = k8s::unique_suffix();
    let own = format!("tenant-own-key-{suffix}");
    let upstream = Upstream::start().await;
    write_secret(
        &world.kube,
        &tns,
        "own",
        json!({
            "apiKey": own,
            "accessKeyId": "AKIATENANTOWNKEY0001",
            "secretAccessKey": format!("tenant-aws-secret-{suffix}"),
            "serviceAccount": tenant_service_account(&upstream),
        }),
    )
    .await;
    // watsonx takes a token and a project: by a credential of the tenant's.
    write_secret(
        &world.kube,
        &tns,
        "watsonx",
        json!({"token": "tenant-watsonx-token"}),
    )
    .await;
    world
        .create_for_tenant::<litellm_crossplane::api::LiteLLMCredential>(
            &tenant,
            "LiteLLMCredential",
            "watsonx",
            json!({"forProvider": {
                "values": [{"name": "token", "secretKeyRef": secret_ref("watsonx", "token")}],
                "plainValues": {"project_id": "tenant-project"},
            }}),
        )
        .await;
    let key = secret_ref("own", "apiKey");
    let base = upstream.url().to_owned();
    // (resource, litellmParams, what shows the tenant's secret was sent)
    type Sent = fn(&support::upstream::Received, &str) -> bool;
    let bearer: Sent = |r, own| r.header("authorization") == Some(&format!("Bearer {own}"));
    // The families that take the tenant's key as a bearer token.
    let bearer_families = [
        ("openai", "openai/gpt-4o"),
        ("groq", "groq/llama-3.1-8b-instant"),
        ("mistral", "mistral/mistral-small-latest"),
        ("hosted-vllm", "hosted_vllm/llama"),
        ("together", "together_ai/meta-llama/Llama-3-8b-chat-hf"),
        ("openrouter", "openrouter/openai/gpt-4o"),
        ("deepseek", "deepseek/deepseek-chat"),
        ("xai", "xai/grok-2"),
        (
            "fireworks",
            "fireworks_ai/accounts/fireworks/models/llama-v3-8b-instruct",
        ),
        ("cohere", "cohere_chat/command-r"),
        ("ollama", "ollama_chat/llama3"),
        (
            "huggingface",
            "huggingface/meta-llama/Llama-3.1-8B-Instruct",
        ),
        (
            "databricks",
            "databricks/databricks-meta-llama-3-70b-instruct",
        ),
        ("litellm-proxy", "litellm_proxy/gpt-4o"),
        ("perplexity", "perplexity/sonar"),
    ];
    let mut cases: Vec<(&str, Value, Sent)> = bearer_families
        .iter()
        .map(|&(resource, model)| {
            let params = json!({"model": model, "apiBase": base, "apiKeySecretRef": key});
            (resource, params, bearer)
        })
        .collect();
    // The families whose secret goes elsewhere, or is exchanged.
    let others: Vec<(&str, Value, Sent)> = vec![
        (
            "azure-ai",
            json!({"model": "azure_ai/mistral-large", "apiBase": base, "apiKeySecretRef": key}),
            |r, own| {
                r.header("api-key") == Some(own)
                    || r.header("authorization") == Some(&format!("Bearer {own}"))
            },
        ),
        (
            "sagemaker",
            json!({"model": "sagemaker_chat/tenant-endpoint",
                   "aws": {"regionName": "us-east-1",
                           "accessKeyIdSecretRef": secret_ref("own", "accessKeyId"),
                           "secretAccessKeySecretRef": secret_ref("own", "secretAccessKey")},
                   "additionalParams": {"sagemaker_base_url": base}}),
            |r, _| {
                r.header("authorization")
                    .is_some_and(|a| a.contains("Credential=AKIATENANTOWNKEY0001/"))
            },
        ),
        (
            "watsonx",
            json!({"model": "watsonx/ibm/granite-3-8b-instruct", "apiBase": base,
                   "credentialRef": {"name": "watsonx"}}),
            |r, _| r.header("authorization") == Some("Bearer tenant-watsonx-token"),
        ),
        (
            "azure",
            json!({"model": "azure/gpt-4o-deployment", "apiBase": base,
                   "apiVersion": "2024-10-21", "apiKeySecretRef": key}),
            |r, own| {
                r.header("api-key") == Some(own)
                    || r.header("authorization") == Some(&format!("Bearer {own}"))
            },
        ),
        (
            "anthropic",
            json!({"model": "anthropic/claude-3-5-sonnet-20240620", "apiBase": base,
                   "apiKeySecretRef": key}),
            |r, own| r.header("x-api-key") == Some(own),
        ),
        (
            "gemini",
            json!({"model": "gemini/gemini-1.5-pro", "apiBase": base, "apiKeySecretRef": key}),
            |r, own| {
                r.header("x-goog-api-key") == Some(own) || r.target.contains(&format!("key={own}"))
            },
        ),
        (
            "bedrock",
            json!({"model": "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "apiBase": base,
                   "aws": {"regionName": "us-east-1",
                           "accessKeyIdSecretRef": secret_ref("own", "accessKeyId"),
                           "secretAccessKeySecretRef": secret_ref("own", "secretAccessKey")}}),
            |r, _| {
                r.header("authorization")
                    .is_some_and(|a| a.contains("Credential=AKIATENANTOWNKEY0001/"))
            },
        ),
        (
            "vertex",
            json!({"model": "vertex_ai/gemini-1.5-pro", "apiBase": base,
                   "vertex": {"project": "tenant-project", "location": "us-central1",
                              "credentialsSecretRef": secret_ref("own", "serviceAccount")}}),
            |r, _| {
                !r.target.starts_with("/token")
                    && r.header("authorization") == Some(&format!("Bearer {GOOGLE_TOKEN}"))
            },
        ),
    ];
    cases.extend(others);
    for (name, params, _) in &cases {
        let spec = json!({"forProvider": {"modelName": format!("pupc-{name}-{suffix}"),
                                          "litellmParams": params}});
        world
            .create_for_tenant::<LiteLLMModel>(&tenant, "LiteLLMModel", name, spec)
            .await;
    }
    for (name, _, sent) in &cases {
        let model = wait_for(&models, name, "Ready and Synced", |m| {
            is(m, "Ready", "True") && is(m, "Synced", "True")
        })
        .await;
        let served = model
            .status
            .as_ref()
            .and_then(|s| s.at_provider.as_ref())
            .and_then(|a| a.public_model_name.clone())
            .unwrap();
        assert_eq!(served, format!("{tns}/pupc-{name}-{suffix}"));
        let received = calls_reaching(&world, &upstream, &served, |r| sent(r, &own)).await;
        assert_none_of(&platform, &received, name);
    }
    for (name, _, _) in &cases {
        models.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&models, name).await;
    }
}

/// The five ways issue 32 found for a tenant's model to call its upstream
/// with the platform's credentials are refused before anything reaches
/// LiteLLM, each naming the field and the family, never a value.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_hostile_tenants_models_are_refused_and_create_nothing() {
    let Some((world, proxy, _platform)) = start("pupc-hostile").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let (tenant, registry) = world.tenant_counted("pupc-hostile-tenant").await;
    let tns = tenant.namespace.clone();
    let models = tenant.api::<LiteLLMModel>(&world);
    let credentials = tenant.api::<litellm_crossplane::api::LiteLLMCredential>(&world);
    let upstream = Upstream::start().await;
    let base = upstream.url().to_owned();
    write_secret(
        &world.kube,
        &tns,
        "hostile",
        json!({
            "awsSecret": "tenant-hostile-aws-secret",
            "accessKeyId": "AKIATENANTHOSTILE001",
            "path": "/tmp/litellm-harness-nocustom-credentials/gcp/service-account.json",
            "apiKey": "tenant-hostile-key",
        }),
    )
    .await;
    // Case 2's credential: its only secret an AWS one, the upstream plain.
    let credential: litellm_crossplane::api::LiteLLMCredential = world.tenant_manifest(
        "LiteLLMCredential",
        "aws-only",
        json!({}),
        json!({"forProvider": {
            "values": [{"name": "aws_secret_access_key",
                        "secretKeyRef": secret_ref("hostile", "awsSecret")}],
            "plainValues": {"api_base": base},
        }}),
    );
    credentials
        .create(&PostParams::default(), &credential)
        .await
        .unwrap();
    // Settings and an AWS secret are a credential like any other; what its
    // models need is asked of the models.
    wait_for(&credentials, "aws-only", "Ready", |c| {
        is(c, "Ready", "True")
    })
    .await;
    let cases = [
        (
            "case1-openai-with-aws-secret",
            json!({"model": "openai/gpt-4o", "apiBase": base,
                   "aws": {"secretAccessKeySecretRef": secret_ref("hostile", "awsSecret")}}),
            "litellmParams.apiKeySecretRef: a model of LiteLLM's openai family",
        ),
        (
            "case2-credential-without-key",
            json!({"model": "openai/gpt-4o", "credentialRef": {"name": "aws-only"}}),
            "litellmParams.apiKeySecretRef: a model of LiteLLM's openai family",
        ),
        (
            "case3-bedrock-with-profile",
            json!({"model": "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
                   "aws": {"regionName": "us-east-1",
                           "accessKeyIdSecretRef": secret_ref("hostile", "accessKeyId"),
                           "secretAccessKeySecretRef": secret_ref("hostile", "awsSecret")},
                   "additionalParams": {"aws_profile_name": "platform",
                                        "aws_bedrock_runtime_endpoint": base}}),
            "litellmParams.additionalParams.aws_profile_name: selects a profile of the proxy's",
        ),
        (
            "case4-vertex-file-path",
            json!({"model": "vertex_ai/gemini-1.5-pro", "apiBase": base,
                   "vertex": {"project": "p", "location": "us-central1",
                              "credentialsSecretRef": secret_ref("hostile", "path")}}),
            "litellmParams.vertex.credentialsSecretRef: must be a service account's JSON key",
        ),
        (
            "case5-vertex-api-key",
            json!({"model": "vertex_ai/gemini-1.5-pro", "apiBase": base,
                   "apiKeySecretRef": secret_ref("hostile", "apiKey")}),
            "litellmParams.vertex.credentialsSecretRef: a model of LiteLLM's vertex_ai family",
        ),
        (
            "no-provider",
            json!({"model": "gpt-4o", "apiBase": base,
                   "apiKeySecretRef": secret_ref("hostile", "apiKey")}),
            "litellmParams.model: a model outside",
        ),
    ];
    for (name, params, _) in &cases {
        let spec = json!({"forProvider": {"modelName": name, "litellmParams": params}});
        world
            .create_for_tenant::<LiteLLMModel>(&tenant, "LiteLLMModel", name, spec)
            .await;
    }
    let mut ids = BTreeSet::new();
    for (name, _, says) in &cases {
        let model = wait_for(&models, name, "Synced=False", |m| {
            is(m, "Synced", "False")
                && condition(m, "Synced")
                    .and_then(|c| c.message)
                    .is_some_and(|m| !m.contains("not Ready"))
        })
        .await;
        let message = condition(&model, "Synced").unwrap().message.unwrap();
        assert!(message.starts_with(says), "{name}: {message}");
        for value in [
            "tenant-hostile",
            "AKIATENANTHOSTILE001",
            "/tmp/litellm-harness",
            "platform\"",
        ] {
            assert!(!message.contains(value), "{name}: {message}");
        }
        if let Some(id) = model.annotations().get(EXTERNAL_NAME) {
            ids.insert(id.clone());
        }
    }
    // Nothing of theirs is in LiteLLM, and the upstream was never called,
    // also once each model has been reconciled again (every model polls
    // each second).
    let before = reconciles(&registry, "model");
    let again = before + 2 * cases.len() as u64;
    eventually("every model reconciled again", || async {
        (reconciles(&registry, "model") >= again).then_some(())
    })
    .await;
    for id in &ids {
        assert!(proxy.model_info(id).await.unwrap().is_none(), "{id}");
    }
    assert!(upstream.received().is_empty(), "{:?}", upstream.received());
    for (name, _, _) in &cases {
        models.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&models, name).await;
    }
    credentials
        .delete("aws-only", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&credentials, "aws-only").await;
}

/// Searches the vector store `id` through the proxy once, whatever comes
/// back (the upstream answers in a chat completion's shape).
async fn search(world: &World, id: &str) {
    let _ = reqwest::Client::new()
        .post(format!("{}/v1/vector_stores/{id}/search", world.endpoint))
        .bearer_auth(&world.master_key)
        .timeout(Duration::from_secs(30))
        .json(&json!({"query": "hello"}))
        .send()
        .await
        .map(|r| r.status());
}

/// Searches `id` until the upstream has received the search, and returns
/// the searches it received for it.
async fn searches_reaching(
    world: &World,
    upstream: &Upstream,
    id: &str,
) -> Vec<support::upstream::Received> {
    let path = format!("/vector_stores/{id}/search");
    eventually(
        &format!("a search of {id} reaching the upstream"),
        || async {
            search(world, id).await;
            let received: Vec<_> = upstream
                .received()
                .into_iter()
                .filter(|r| r.target.contains(&path))
                .collect();
            (!received.is_empty()).then_some(received)
        },
    )
    .await
}

/// A vector store without a key of its own is searched with the platform's
/// OpenAI key (the fallback is real for vector stores too, so a platform
/// store may rely on it); a tenant's store, which must name a key of its
/// own (docs/vector-stores.md), is searched with that key and never with a
/// value of the platform's.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_vector_store_is_searched_with_its_own_key_only() {
    use litellm_crossplane::api::LiteLLMVectorStore;
    let Some((world, _proxy, platform)) = start("pupc-vs").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let upstream = Upstream::start().await;
    let base = format!("{}/v1", upstream.url());
    let params = |key: Option<Value>| {
        let mut litellm = json!({"apiBase": base});
        if let Some(key) = key {
            litellm["apiKeySecretRef"] = key;
        }
        json!({"forProvider": {
            "customLlmProvider": "openai",
            "vectorStoreName": "docs",
            "litellmParams": litellm,
        }})
    };

    // The platform's store without a key: the proxy's own OpenAI key.
    let stores = world.api::<LiteLLMVectorStore>();
    stores
        .create(
            &PostParams::default(),
            &manifest::<LiteLLMVectorStore>(
                "LiteLLMVectorStore",
                "fallback",
                json!({}),
                params(None),
            ),
        )
        .await
        .unwrap();
    let platform_store = wait_for(&stores, "fallback", "Ready", |s| is(s, "Ready", "True")).await;
    let platform_id = platform_store.annotations()[EXTERNAL_NAME].clone();
    let received = searches_reaching(&world, &upstream, &platform_id).await;
    let sent = received[0].text();
    assert!(
        platform.iter().any(|value| sent.contains(value.as_str())),
        "the platform's key sent for a store without one:\n{sent}"
    );

    // The tenant's store, with its own key.
    let tenant = world.tenant("pupc-vs-tenant").await;
    let own = format!("tenant-vs-key-{}", k8s::unique_suffix());
    write_secret(
        &world.kube,
        &tenant.namespace,
        "own",
        json!({"apiKey": own}),
    )
    .await;
    world
        .create_for_tenant::<LiteLLMVectorStore>(
            &tenant,
            "LiteLLMVectorStore",
            "docs",
            params(Some(secret_ref("own", "apiKey"))),
        )
        .await;
    let tenant_stores = tenant.api::<LiteLLMVectorStore>(&world);
    let tenant_store = wait_for(&tenant_stores, "docs", "Ready", |s| is(s, "Ready", "True")).await;
    let tenant_id = tenant_store.annotations()[EXTERNAL_NAME].clone();
    let received = searches_reaching(&world, &upstream, &tenant_id).await;
    for request in &received {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {own}").as_str()),
            "the tenant's key"
        );
    }
    assert_none_of(&platform, &received, "a tenant's vector store");

    for (api, name) in [(&tenant_stores, "docs"), (&stores, "fallback")] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(api, name).await;
    }
}
