//! A provisioned proxy's pod settings (`spec.workload.env`, `envFrom`,
//! `serviceAccount`, `imagePullSecrets`, pod metadata, scheduling and
//! security) against the real API server, the real LiteLLM proxy on the
//! test kubelet (`tests/support/kubelet.rs`) and a recording upstream LLM
//! (`tests/support/upstream.rs`): the proxy reads a key from a Secret
//! through `os.environ/`, a changed Secret rolls it, and every setting lands
//! on the objects. The test kubelet checks `runAsNonRoot` as a kubelet does
//! (the process still runs as the test's own user; capabilities, seccomp
//! and a read-only root file system are not enforced by it).

use crate::provider_instance::{
    call, generated_master_key, migration_before_pods, ready_instance, settled_pods, BOOT,
    DB_PASSWORD,
};
use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, ServiceAccount};
use kube::api::{ListParams, Patch, PatchParams};
use litellm_crossplane::provider::instance::build::SECRETS_HASH_ANNOTATION;
use serde_json::json;
use support::instance::{start, TestDatabase};
use support::kubelet::Kubelet;
use support::provider::within;
use support::upstream::Upstream;

const FIRST_KEY: &str = "sk-upstream-from-secret-1111";
const SECOND_KEY: &str = "sk-upstream-from-secret-2222";

fn secrets_hash(deployment: &Deployment) -> String {
    deployment
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(SECRETS_HASH_ANNOTATION))
        .cloned()
        .unwrap_or_default()
}

/// A chat completion through the proxy to `model`, and the bearer the
/// upstream received with it.
async fn upstream_bearer(url: &str, master_key: &str, upstream: &Upstream, model: &str) -> String {
    let before = upstream.received().len();
    let (code, body) = call(
        reqwest::Method::POST,
        &format!("{url}/chat/completions"),
        master_key,
        Some(json!({"model": model, "messages": [{"role": "user", "content": "ping"}]})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let received = upstream.received();
    received[before..]
        .iter()
        .filter(|r| r.target.contains("/chat/completions"))
        .find_map(|r| r.header("authorization").map(str::to_string))
        .expect("the upstream received the completion")
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn env_from_a_secret_reaches_the_proxy_rolls_it_and_every_pod_setting_lands() {
    let Some(run) = start("li-pods").await else {
        return;
    };
    let Some(kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    let Some(db) = TestDatabase::create("li_pods", DB_PASSWORD) else {
        return;
    };
    let upstream = Upstream::start().await;
    run.create_object::<Secret>(json!({
        "metadata": {"name": "litellm-db"},
        "stringData": {"username": db.user, "password": DB_PASSWORD},
    }))
    .await;
    run.create_object::<Secret>(json!({
        "metadata": {"name": "upstream-key"},
        "stringData": {"KEY": FIRST_KEY},
    }))
    .await;
    run.create_object::<ConfigMap>(json!({
        "metadata": {"name": "proxy-env"},
        "data": {"LITELLM_LOG": "INFO"},
    }))
    .await;
    let spec = json!({
        "masterKey": {"autoGenerate": true},
        "image": {"tag": "main-v1.108.7"},
        "database": {
            "host": db.host, "port": db.port, "name": db.name,
            "credentialsSecretRef": {"name": "litellm-db"},
            "migration": {"enabled": true},
        },
        "workload": {
            "env": [
                {"name": "UPSTREAM_KEY", "valueFrom": {"secretKeyRef": {"name": "upstream-key", "key": "KEY"}}},
                {"name": "PLAIN_SETTING", "value": "plain"},
            ],
            "envFrom": [{"configMapRef": {"name": "proxy-env"}}],
            "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/litellm"}},
            "imagePullSecrets": [{"name": "mirror-pull"}],
            "podAnnotations": {"example.com/owner": "platform"},
            "podLabels": {"example.com/tier": "llm"},
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100,
                "podAffinityTerm": {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "gw"}},
                },
            }]}},
            "topologySpreadConstraints": [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "gw"}},
            }],
            "priorityClassName": "llm-high",
            // Non-root, as LiteLLM's non-root image runs: the kubelet's
            // runAsNonRoot check passes with a runAsUser.
            "securityContext": {
                "runAsNonRoot": true, "runAsUser": 1000,
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
            },
        },
    });
    run.create("gw", spec).await;
    let job = within("the migration Job", Duration::from_secs(30), || async {
        let jobs = run.api::<Job>().list(&ListParams::default()).await.ok()?;
        jobs.items.first().and_then(|j| j.metadata.name.clone())
    })
    .await;
    migration_before_pods(&run, &job, &["gw"], "ghcr.io/berriai/litellm:main-v1.108.7").await;
    let instance = ready_instance(&run, "gw").await;

    // What landed on the objects.
    let sa = run.api::<ServiceAccount>().get("gw").await.unwrap();
    assert_eq!(
        sa.metadata.annotations.as_ref().unwrap()["eks.amazonaws.com/role-arn"],
        "arn:aws:iam::123456789012:role/litellm"
    );
    let deployment = run.api::<Deployment>().get("gw").await.unwrap();
    let template = serde_json::to_value(&deployment.spec.template).unwrap();
    let pod = &template["spec"];
    assert_eq!(pod["serviceAccountName"], "gw");
    assert_eq!(pod["imagePullSecrets"], json!([{"name": "mirror-pull"}]));
    assert_eq!(pod["nodeSelector"], json!({"kubernetes.io/os": "linux"}));
    assert_eq!(pod["tolerations"][0]["key"], "dedicated");
    assert_eq!(
        pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
            ["weight"],
        100
    );
    assert_eq!(pod["topologySpreadConstraints"][0]["maxSkew"], 1);
    assert_eq!(pod["priorityClassName"], "llm-high");
    assert_eq!(
        pod["securityContext"],
        json!({"seccompProfile": {"type": "RuntimeDefault"}})
    );
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["runAsNonRoot"], true);
    assert_eq!(container["securityContext"]["runAsUser"], 1000);
    assert_eq!(
        container["envFrom"],
        json!([{"configMapRef": {"name": "proxy-env"}}])
    );
    let env = container["env"].as_array().unwrap();
    let upstream_env = env.iter().find(|e| e["name"] == "UPSTREAM_KEY").unwrap();
    assert_eq!(
        upstream_env["valueFrom"]["secretKeyRef"],
        json!({"name": "upstream-key", "key": "KEY"})
    );
    assert!(env
        .iter()
        .any(|e| e == &json!({"name": "PLAIN_SETTING", "value": "plain"})));
    let labels = &template["metadata"]["labels"];
    assert_eq!(labels["example.com/tier"], "llm");
    assert_eq!(labels["app.kubernetes.io/component"], "proxy");
    assert_eq!(
        template["metadata"]["annotations"]["example.com/owner"],
        "platform"
    );
    // The migration Job runs where and as the proxy does.
    let job = run.api::<Job>().get(&job).await.unwrap();
    let job_pod = serde_json::to_value(job.spec.unwrap().template.spec.unwrap()).unwrap();
    assert_eq!(
        job_pod["imagePullSecrets"],
        json!([{"name": "mirror-pull"}])
    );
    assert_eq!(
        job_pod["nodeSelector"],
        json!({"kubernetes.io/os": "linux"})
    );
    assert!(job_pod["containers"][0]
        .get("env")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["name"] != "UPSTREAM_KEY"));
    // The value is read by the pods, never copied.
    for text in [
        serde_json::to_string(&deployment).unwrap(),
        serde_json::to_string(&instance.status).unwrap(),
    ] {
        assert!(!text.contains(FIRST_KEY));
    }

    // The proxy reads the key: a model whose key is `os.environ/UPSTREAM_KEY`
    // reaches the upstream with the Secret's value.
    let url = kubelet
        .url(instance.status.as_ref().unwrap().endpoint.as_ref().unwrap())
        .await;
    let master_key = generated_master_key(&run, "gw").await;
    let (code, body) = call(
        reqwest::Method::POST,
        &format!("{url}/model/new"),
        &master_key,
        Some(json!({
            "model_name": "env-model",
            "litellm_params": {
                "model": "openai/gpt-4o",
                "api_base": upstream.url(),
                "api_key": "os.environ/UPSTREAM_KEY",
            },
        })),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let bearer = upstream_bearer(&url, &master_key, &upstream, "env-model").await;
    assert_eq!(bearer, format!("Bearer {FIRST_KEY}"));

    // A changed Secret rolls the pods (a new fingerprint in the pod
    // template), and the new pod reads the new value.
    let before = settled_pods(&kubelet, "proxy").expect("one ready pod");
    let hash_before = secrets_hash(&deployment);
    run.api::<Secret>()
        .patch(
            "upstream-key",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"KEY": SECOND_KEY}})),
        )
        .await
        .unwrap();
    let rolled = within("the pods rolled on the Secret", BOOT, || async {
        let deployment = run.api::<Deployment>().get("gw").await.ok()?;
        let pods = settled_pods(&kubelet, "proxy").filter(|pods| *pods != before)?;
        (secrets_hash(&deployment) != hash_before).then_some((pods, deployment))
    })
    .await;
    assert_eq!(rolled.0.len(), 1);
    let bearer = within("the new key upstream", Duration::from_secs(60), || async {
        let bearer = upstream_bearer(&url, &master_key, &upstream, "env-model").await;
        (bearer == format!("Bearer {SECOND_KEY}")).then_some(bearer)
    })
    .await;
    assert_eq!(bearer, format!("Bearer {SECOND_KEY}"));

    // A changed ConfigMap of envFrom changes the fingerprint too.
    let hash_before = secrets_hash(&rolled.1);
    run.api::<ConfigMap>()
        .patch(
            "proxy-env",
            &PatchParams::default(),
            &Patch::Merge(&json!({"data": {"LITELLM_LOG": "DEBUG"}})),
        )
        .await
        .unwrap();
    within(
        "a new fingerprint for the ConfigMap",
        Duration::from_secs(60),
        || async {
            let deployment = run.api::<Deployment>().get("gw").await.ok()?;
            (secrets_hash(&deployment) != hash_before).then_some(())
        },
    )
    .await;
    drop(kubelet);
}

/// The instance's conditions, as one text.
fn conditions_text(instance: &litellm_crossplane::api::instance::LiteLLMInstance) -> String {
    serde_json::to_string(&instance.status.as_ref().map(|s| &s.conditions)).unwrap()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn refused_env_names_and_labels_are_named_and_run_as_non_root_is_checked() {
    let Some(run) = start("li-podbad").await else {
        return;
    };
    let Some(kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    // What the provider sets cannot be overridden: nothing is provisioned
    // and the condition names the field.
    run.create(
        "bad",
        json!({
            "masterKey": {"autoGenerate": true},
            "workload": {
                "topology": "split",
                "gateway": {"env": [{"name": "DATABASE_URL", "value": "postgresql://elsewhere"}]},
                "podLabels": {"app.kubernetes.io/instance": "other"},
            },
        }),
    )
    .await;
    let bad = run
        .wait_for("bad", |i| {
            conditions_text(i).contains("spec.workload.gateway.env[0].name")
        })
        .await;
    let text = conditions_text(&bad);
    assert!(
        text.contains("\\\"DATABASE_URL\\\" is set by the provider"),
        "{text}"
    );
    assert!(text.contains("spec.workload.podLabels"), "{text}");
    assert!(run
        .api::<Deployment>()
        .get_opt("bad-gateway")
        .await
        .unwrap()
        .is_none());

    // runAsNonRoot with LiteLLM's image (which runs as root) and no
    // runAsUser: the kubelet refuses the container, as a real one does.
    run.create(
        "root",
        json!({
            "masterKey": {"autoGenerate": true},
            "workload": {"podSecurityContext": {"runAsNonRoot": true}},
        }),
    )
    .await;
    let message = within("the container refused", Duration::from_secs(60), || async {
        let pods = run.api::<Pod>().list(&ListParams::default()).await.ok()?;
        pods.items.iter().find_map(|pod| {
            let status = pod.status.as_ref()?.container_statuses.as_ref()?.first()?;
            let waiting = status.state.as_ref()?.waiting.as_ref()?;
            (waiting.reason.as_deref() == Some("CreateContainerConfigError"))
                .then(|| waiting.message.clone().unwrap_or_default())
        })
    })
    .await;
    assert!(
        message.contains("runAsNonRoot and image will run as root"),
        "{message}"
    );
    let instance = run.observed("root").await;
    assert!(!instance.status.unwrap().ready);
    drop(kubelet);
}
