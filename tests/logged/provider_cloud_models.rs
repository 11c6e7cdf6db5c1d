//! Models of the cloud providers a platform uses (issue 12): Bedrock,
//! Vertex and Azure credentials from Secrets and the rest of
//! `litellm_params`, end to end against the real Kubernetes API server and
//! the real LiteLLM proxy.
//!
//! LiteLLM stores such models without calling the clouds, so what is
//! checked is what LiteLLM keeps: the plain parameters as `/v2/model/info`
//! shows them, the credentials never shown again (not by LiteLLM, and not
//! in the resource's status, its events or the provider's logs), a rotated
//! credential Secret sent again once, and no write in the steady state.

use crate::support;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMModel;
use serde_json::{json, Value};
use support::crd_guard::CrdGuard;
use support::metered::Metered;
use support::provider::{condition, eventually, is, manifest, wait_for, wait_gone, world, World};

/// A Secret `name` with `data` (string values) in `namespace`.
async fn secret(world: &World, namespace: &str, name: &str, data: Value) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), namespace);
    let secret = serde_json::from_value(json!({
        "metadata": {"name": name},
        "stringData": data,
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("credential Secret");
}

fn reference(name: &str, key: &str) -> Value {
    json!({"name": name, "key": key})
}

/// The three cloud models, by resource name: `(forProvider, the plain
/// parameters LiteLLM must show, the secret fields referenced)`.
fn cloud_models(suffix: &str) -> Vec<(&'static str, Value, Value, Vec<&'static str>)> {
    vec![
        (
            "bedrock",
            json!({
                "modelName": format!("claude-{suffix}"),
                "litellmParams": {
                    "model": "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
                    "aws": {
                        "regionName": "eu-central-1",
                        "accessKeyIdSecretRef": reference("aws", "accessKeyId"),
                        "secretAccessKeySecretRef": reference("aws", "secretAccessKey"),
                        "sessionTokenSecretRef": reference("aws", "sessionToken"),
                    },
                    "timeout": 30,
                    "streamTimeout": 120,
                    "maxRetries": 2,
                    "dropParams": true,
                    "tags": ["gold", "eu"],
                    "inputCostPerToken": "0.000003",
                    "outputCostPerToken": "0.000015",
                    "additionalParams": {"num_retries": 3, "use_in_pass_through": false},
                },
                "modelInfo": {"mode": "chat", "enable_tag_filtering": true},
            }),
            json!({
                "aws_region_name": "eu-central-1", "timeout": 30.0, "stream_timeout": 120.0,
                "max_retries": 2, "drop_params": true, "tags": ["gold", "eu"],
                "input_cost_per_token": 0.000003, "output_cost_per_token": 0.000015,
                "num_retries": 3, "use_in_pass_through": false,
            }),
            vec![
                "litellmParams.aws.accessKeyIdSecretRef",
                "litellmParams.aws.secretAccessKeySecretRef",
                "litellmParams.aws.sessionTokenSecretRef",
            ],
        ),
        (
            "vertex",
            json!({
                "modelName": format!("gemini-{suffix}"),
                "litellmParams": {
                    "model": "vertex_ai/gemini-1.5-pro",
                    "vertex": {
                        "project": "acme-ml",
                        "location": "europe-west4",
                        "credentialsSecretRef": reference("gcp", "serviceAccount.json"),
                    },
                },
            }),
            json!({"vertex_project": "acme-ml", "vertex_location": "europe-west4"}),
            vec!["litellmParams.vertex.credentialsSecretRef"],
        ),
        (
            "azure",
            json!({
                "modelName": format!("gpt-4o-{suffix}"),
                "litellmParams": {
                    "model": "azure/gpt-4o-prod",
                    "apiBase": "https://acme.openai.azure.com",
                    "apiVersion": "2024-10-21",
                    "azure": {
                        "tenantId": "2f6d7a3c-0000-4000-8000-acme00000001",
                        "clientId": "9b1e4c2a-0000-4000-8000-acme00000002",
                        "clientSecretSecretRef": reference("azure", "clientSecret"),
                    },
                    "customLlmProvider": "azure",
                },
            }),
            json!({
                "tenant_id": "2f6d7a3c-0000-4000-8000-acme00000001",
                "client_id": "9b1e4c2a-0000-4000-8000-acme00000002",
                "custom_llm_provider": "azure",
            }),
            vec!["litellmParams.azure.clientSecretSecretRef"],
        ),
    ]
}

fn fingerprints(model: &LiteLLMModel) -> Value {
    serde_json::to_value(&model.status).unwrap()["atProvider"]["secretFingerprints"].clone()
}

async fn ready(models: &Api<LiteLLMModel>, name: &str) -> LiteLLMModel {
    wait_for(models, name, "Ready and Synced", |m| {
        is(m, "Ready", "True") && is(m, "Synced", "True")
    })
    .await
}

/// Every secret value the test writes, for the assertions that none of
/// them goes anywhere but LiteLLM.
const SECRET_VALUES: &[&str] = &[
    "AKIAE2ECLOUDMODELS01",
    "e2e-aws-secret-access-key-first",
    "e2e-aws-secret-access-key-second",
    "e2e-aws-session-token-value",
    "e2e-gcp-private-key-material",
    "e2e-azure-client-secret-value",
];

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn cloud_models_reach_litellm_and_their_secrets_go_nowhere_else() {
    let logs = support::logs::capture();
    let Some(world) = world("pcm").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let metered = Metered::start(&world, "pcm-own").await;
    let ns = metered.namespace.clone();
    secret(
        &world,
        &ns,
        "aws",
        json!({"accessKeyId": SECRET_VALUES[0], "secretAccessKey": SECRET_VALUES[1],
               "sessionToken": SECRET_VALUES[3]}),
    )
    .await;
    let service_account = json!({"type": "service_account", "project_id": "acme-ml",
                                 "private_key": SECRET_VALUES[4]});
    secret(
        &world,
        &ns,
        "gcp",
        json!({"serviceAccount.json": service_account.to_string()}),
    )
    .await;
    secret(
        &world,
        &ns,
        "azure",
        json!({"clientSecret": SECRET_VALUES[5]}),
    )
    .await;

    let models = metered.models(&world);
    let suffix = support::k8s::unique_suffix();
    let cases = cloud_models(&suffix);
    for (name, for_provider, _, _) in &cases {
        let model: LiteLLMModel = manifest(
            "LiteLLMModel",
            name,
            json!({}),
            json!({"forProvider": for_provider}),
        );
        models.create(&PostParams::default(), &model).await.unwrap();
    }
    for (name, _, plain, secret_fields) in &cases {
        let model = ready(&models, name).await;
        let id = &model.annotations()[EXTERNAL_NAME];
        let live = world
            .litellm
            .model_info(id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{name} in LiteLLM"));
        for (param, want) in plain.as_object().unwrap() {
            let have = &live.litellm_params.extra[param];
            let same = match (want.as_f64(), have.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => want == have,
            };
            assert!(same, "{name}: {param} sent {want}, LiteLLM has {have}");
        }
        let prints = fingerprints(&model);
        let fields: Vec<&str> = prints
            .as_object()
            .unwrap_or_else(|| panic!("{name}: fingerprints in status"))
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(&fields, secret_fields, "{name}");
    }
    // Plain parameters come back as floats and masked credentials are
    // never compared: nothing drifts for ever.
    metered
        .assert_quiet(3, "after creating the cloud models")
        .await;

    // A rotated AWS secret access key: that field's fingerprint changes,
    // and one update sends it.
    let before = fingerprints(&models.get("bedrock").await.unwrap());
    let writes = metered.writes();
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &ns);
    secrets
        .patch(
            "aws",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"secretAccessKey": SECRET_VALUES[2]}})),
        )
        .await
        .unwrap();
    let after = eventually("the rotated key's fingerprint in status", || async {
        let prints = fingerprints(&models.get("bedrock").await.ok()?);
        (prints != before).then_some(prints)
    })
    .await;
    let rotated = "litellmParams.aws.secretAccessKeySecretRef";
    for (field, print) in after.as_object().unwrap() {
        assert_eq!(
            print != &before[field],
            field == rotated,
            "{field}: {print} against {}",
            before[field]
        );
    }
    metered.assert_quiet(3, "after the rotation").await;
    assert_eq!(metered.writes() - writes, 1, "{:?}", metered.requests());

    // No secret value in what LiteLLM shows, in status, in events, in logs.
    let mut shown = String::new();
    for (name, _, _, _) in &cases {
        let model = models.get(name).await.unwrap();
        shown += &serde_json::to_string(&model.status).unwrap();
        let raw = reqwest::Client::new()
            .get(format!(
                "{}/v2/model/info?modelId={}",
                world.url,
                model.annotations()[EXTERNAL_NAME]
            ))
            .bearer_auth(&world.master_key)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(raw.contains(name) || raw.contains(&suffix), "{raw}");
        shown += &raw;
    }
    let events: Vec<String> = support::provider::events(&world.kube, &ns)
        .await
        .into_iter()
        .filter_map(|e| e.note)
        .collect();
    assert!(!events.is_empty(), "the models' events were read");
    shown += &events.join("\n");
    if let Some(logs) = &logs {
        let text = logs.text();
        assert!(
            text.contains("bedrock"),
            "the provider's logs were captured"
        );
        shown += &text;
    }
    for value in SECRET_VALUES {
        // LiteLLM masks a few credentials as their first and last four
        // characters: not even those.
        let middle = &value[4..value.len() - 4];
        assert!(!shown.contains(middle), "{value} shows");
    }
    for (name, _, _, _) in &cases {
        models
            .delete(name, &kube::api::DeleteParams::default())
            .await
            .unwrap();
        wait_gone(&models, name).await;
    }
}

/// What LiteLLM would show in clear, or use the proxy's own identity for,
/// is refused before anything is sent, naming the field.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn secret_looking_params_and_borrowed_identities_are_refused() {
    let Some(world) = world("pcm-refuse").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pcm-refuse-tenant").await;
    secret(
        &world,
        &tenant.namespace,
        "own",
        json!({"apiKey": "sk-e2e-own-key-value"}),
    )
    .await;
    let models = tenant.api::<LiteLLMModel>(&world);
    let cases = [
        (
            "clear-secret",
            json!({"model": "openai/gpt-4o", "apiKeySecretRef": reference("own", "apiKey"),
                   "additionalParams": {"organization_api_key": "in-clear"}}),
            "litellmParams.additionalParams.organization_api_key: LiteLLM treats a parameter of \
             this name as a secret",
        ),
        (
            "borrowed-role",
            json!({"model": "bedrock/anthropic.claude-3", "apiKeySecretRef": reference("own", "apiKey"),
                   "aws": {"regionName": "us-east-1", "roleName": "arn:aws:iam::1:role/platform"}}),
            "litellmParams.aws.roleName: LiteLLM assumes a role with the proxy's own AWS identity",
        ),
        (
            "proxy-identity",
            json!({"model": "vertex_ai/gemini-1.5-pro", "vertex": {"project": "acme"}}),
            "litellmParams.vertex.credentialsSecretRef: a model of LiteLLM's vertex_ai family",
        ),
    ];
    for (name, params, _) in &cases {
        let spec = json!({"forProvider": {"modelName": name, "litellmParams": params}});
        world
            .create_for_tenant::<LiteLLMModel>(&tenant, "LiteLLMModel", name, spec)
            .await;
    }
    for (name, _, says) in &cases {
        let model = wait_for(&models, name, "Synced=False", |m| is(m, "Synced", "False")).await;
        let message = condition(&model, "Synced").unwrap().message.unwrap();
        assert!(message.contains(says), "{name}: {message}");
        assert!(
            !message.contains("in-clear") && !message.contains("arn:aws:iam::1"),
            "{message}"
        );
        // The id was chosen, but nothing was created under it.
        let id = &model.annotations()[EXTERNAL_NAME];
        assert!(
            world.litellm.model_info(id).await.unwrap().is_none(),
            "{name}"
        );
    }
    for (name, _, _) in &cases {
        models
            .delete(name, &kube::api::DeleteParams::default())
            .await
            .unwrap();
        wait_gone(&models, name).await;
    }
}

/// `examples/cloud-models-v2` as a tenant gets it: the function renders the
/// XR, the API server takes every rendered object, and the provider
/// reconciles the team, its key and the three cloud models against the
/// real proxy, each model served as the team's (`<namespace>/<name>`, in
/// the team's models list), with its credentials from the tenant's Secrets.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_cloud_models_example_renders_and_reconciles() {
    use litellm_crossplane::api::{LiteLLMTeam, LiteLLMVirtualKey};
    use litellm_crossplane::function::render::{render, RenderFiles};

    let Some(world) = world("pcm-example").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pcm-example-tenant").await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cloud-models-v2");
    // The example's XR, made in the tenant's namespace.
    let xr = std::fs::read_to_string(dir.join("xr.yaml"))
        .unwrap()
        .replace(
            "namespace: team-ml",
            &format!("namespace: {}", tenant.namespace),
        );
    let xr_file = std::env::temp_dir().join(format!("{}-xr.yaml", tenant.namespace));
    std::fs::write(&xr_file, xr).unwrap();
    let docs = render(&RenderFiles {
        xr: xr_file.clone(),
        composition: dir.join("composition.yaml"),
        observed: None,
        required: Some(dir.join("required.yaml")),
    })
    .expect("the example renders")
    .documents;
    let _ = std::fs::remove_file(&xr_file);
    // The Secrets the example's models name, in the tenant's namespace.
    secret(
        &world,
        &tenant.namespace,
        "cloud-aws",
        json!({"accessKeyId": "AKIAE2EEXAMPLE000001", "secretAccessKey": "e2e-example-aws-secret"}),
    )
    .await;
    secret(
        &world,
        &tenant.namespace,
        "cloud-gcp",
        json!({"serviceAccount.json": "{\"type\": \"service_account\"}"}),
    )
    .await;
    secret(
        &world,
        &tenant.namespace,
        "cloud-azure",
        json!({"apiKey": "e2e-example-azure-key"}),
    )
    .await;
    // Each rendered LiteLLM object in the tenant's namespace, pointing at
    // the world's instance (the example references `litellm/shared`).
    let mut names: Vec<(String, String)> = Vec::new();
    for mut doc in docs {
        let Some(kind) = doc["kind"].as_str().map(str::to_owned) else {
            continue;
        };
        if !kind.starts_with("LiteLLM") {
            continue;
        }
        assert_eq!(doc["metadata"]["namespace"], json!(tenant.namespace));
        doc["metadata"]["annotations"]["crossplane.io/poll-interval"] = json!("2s");
        doc["spec"]["instanceRef"] =
            json!({"name": support::provider::INSTANCE, "namespace": world.namespace});
        let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
        let resource = |plural: &str| kube::core::ApiResource {
            group: "litellm.m.crossplane.io".into(),
            version: "v1alpha1".into(),
            api_version: "litellm.m.crossplane.io/v1alpha1".into(),
            kind: kind.clone(),
            plural: plural.into(),
        };
        let plural = format!("{}s", kind.to_lowercase());
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &tenant.namespace, &resource(&plural));
        let object: kube::api::DynamicObject = serde_json::from_value(doc).unwrap();
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("{kind} {name}: {e}"));
        names.push((kind, name));
    }
    assert_eq!(names.iter().filter(|(k, _)| k == "LiteLLMModel").count(), 3);

    let teams = tenant.api::<LiteLLMTeam>(&world);
    let team = wait_for(&teams, "research.team", "the team Ready", |t| {
        is(t, "Ready", "True")
    })
    .await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let models = tenant.api::<LiteLLMModel>(&world);
    for (kind, name) in &names {
        if kind != "LiteLLMModel" {
            continue;
        }
        let model = ready(&models, name).await;
        let at_provider = serde_json::to_value(&model.status).unwrap()["atProvider"].clone();
        let served = at_provider["publicModelName"].as_str().unwrap().to_owned();
        assert!(
            served.starts_with(&format!("{}/", tenant.namespace)),
            "{served}"
        );
        assert_eq!(at_provider["teamId"], json!(team_id));
        let live = world
            .litellm
            .model_info(&model.annotations()[EXTERNAL_NAME])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(live.model_name, served);
        // The team's list names it, as LiteLLM keeps it.
        let live_team = world.team_info(&team_id).await.unwrap();
        assert!(live_team.models.contains(&served), "{:?}", live_team.models);
    }
    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    wait_for(&keys, "research.key-app", "the key Ready", |k| {
        is(k, "Ready", "True")
    })
    .await;

    for (kind, name) in names.iter().rev() {
        match kind.as_str() {
            "LiteLLMModel" => {
                models.delete(name, &Default::default()).await.unwrap();
                wait_gone(&models, name).await;
            }
            "LiteLLMVirtualKey" => {
                keys.delete(name, &Default::default()).await.unwrap();
                wait_gone(&keys, name).await;
            }
            _ => {}
        }
    }
    teams
        .delete("research.team", &Default::default())
        .await
        .unwrap();
    wait_gone(&teams, "research.team").await;
}
