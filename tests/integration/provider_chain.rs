//! The provider's main chain, end to end on a proxy it provisions: the
//! built `provider-litellm`, run as Crossplane runs it (its own process,
//! the package's permissions through the authorizing proxy), provisions a
//! `LiteLLMInstance` on the test kubelet (migration Job, Deployment,
//! Service), reports it Ready from the proxy's health, and its entity
//! controllers create a team and a key in that proxy through its Service
//! (`http://<name>.<namespace>.svc:4000`, reached through the test cluster's
//! network: [`Kubelet::cluster_network`]). Nobody writes the instance's
//! status but the provider, and the test reaches the proxy only to check.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam, LiteLLMVirtualKey};
use serde_json::{json, Value};

use crate::support;
use support::authz::AuthzProxy;
use support::binary::binary;
use support::instance::TestDatabase;
use support::k8s;
use support::kubelet::Kubelet;
use support::provider::within;

/// A proxy start is CPU bound (~30 s alone), after its migration; CI runs
/// the suites in parallel on 2 cores.
const BOOT: Duration = Duration::from_secs(420);

fn ready(conditions: &Value) -> bool {
    conditions.as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_provisioned_proxy_gets_its_teams_and_keys_through_its_service() {
    chain("chain", json!({})).await;
}

/// The split topology: the entity controllers reach the backend's Service
/// (the admin API), and the key works at the gateway's.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_split_proxy_gets_its_teams_and_keys_through_the_backend_and_serves_at_the_gateway() {
    chain(
        "chain-split",
        json!({"topology": "split", "gateway": {"replicas": 1}, "backend": {"replicas": 1},
               "ui": {"replicas": 0}}),
    )
    .await;
}

/// Provisions instance `gw` with `workload`, has the provider make a team
/// and a key in it, checks them in the proxy, then deletes all three at
/// once and finds nothing left.
async fn chain(prefix: &str, workload: Value) {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, prefix).await;
    let Some(kubelet) = Kubelet::start(client.clone(), &namespace) else {
        return;
    };
    let Some(db) = TestDatabase::create(&prefix.replace('-', "_"), "chain-db-password") else {
        return;
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "litellm-db"},
                "stringData": {"username": db.user, "password": "chain-db-password"},
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let instances: Api<LiteLLMInstance> = Api::namespaced(client.clone(), &namespace);
    instances
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": litellm_crossplane::api::API_VERSION,
                "kind": "LiteLLMInstance",
                "metadata": {"name": "gw"},
                "spec": {
                    "masterKey": {"autoGenerate": true},
                    "database": {
                        "host": db.host, "port": db.port, "name": db.name,
                        "credentialsSecretRef": {"name": "litellm-db"},
                        "migration": {"enabled": true},
                        "sslMode": "disable",
                    },
                    "workload": workload,
                },
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let teams: Api<LiteLLMTeam> = Api::namespaced(client.clone(), &namespace);
    let keys: Api<LiteLLMVirtualKey> = Api::namespaced(client.clone(), &namespace);
    // Applied at once, as a composition does: they wait for the instance.
    let reference = json!({"name": "gw", "namespace": namespace});
    teams
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": litellm_crossplane::api::API_VERSION,
                "kind": "LiteLLMTeam",
                "metadata": {"name": "ml"},
                "spec": {"instanceRef": reference, "forProvider": {"teamAlias": "ML", "maxBudget": "25"}},
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    keys.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "apiVersion": litellm_crossplane::api::API_VERSION,
            "kind": "LiteLLMVirtualKey",
            "metadata": {"name": "ci"},
            "spec": {"instanceRef": reference, "forProvider": {"teamRef": {"name": "ml"}}},
        }))
        .unwrap(),
    )
    .await
    .unwrap();

    // The provider as a process: the package's permissions, and the
    // cluster's network for Service names.
    let authz = AuthzProxy::for_provider(client.clone()).await;
    let kubeconfig = std::env::temp_dir().join(format!("{namespace}-kubeconfig"));
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: authz\n  cluster: {{server: \"{}\"}}\n\
             contexts:\n- name: authz\n  context: {{cluster: authz, user: provider}}\n\
             users:\n- name: provider\n  user: {{}}\ncurrent-context: authz\n",
            authz.url()
        ),
    )
    .unwrap();
    let network = kubelet.cluster_network().await;
    let mut provider = binary(
        &[
            "--metrics-address",
            "127.0.0.1:0",
            "--namespace",
            &namespace,
            "--poll",
            "5s",
        ],
        &[
            ("KUBECONFIG", kubeconfig.to_str().unwrap()),
            ("HTTP_PROXY", network.as_str()),
            ("NO_PROXY", "127.0.0.1,localhost"),
        ],
    );

    // The provider reports the instance Ready, at its Service(s).
    let instance = within("the instance Ready", BOOT, || async {
        let instance = instances.get("gw").await.ok()?;
        instance
            .status
            .as_ref()
            .is_some_and(|s| s.ready)
            .then_some(instance)
    })
    .await;
    let status = instance.status.as_ref().unwrap();
    let split = workload.get("topology").is_some();
    let endpoint = status.endpoint.clone().unwrap();
    let gateway = if split {
        assert_eq!(endpoint, format!("http://gw-backend.{namespace}.svc:4001"));
        status.gateway_endpoint.clone().unwrap()
    } else {
        endpoint.clone()
    };
    assert_eq!(
        gateway,
        format!(
            "http://gw{}.{namespace}.svc:4000",
            if split { "-gateway" } else { "" }
        )
    );

    let team = within("the team Ready", BOOT, || async {
        let team = teams.get("ml").await.ok()?;
        let status = serde_json::to_value(&team.status).ok()?;
        ready(&status["conditions"]).then_some(team)
    })
    .await;
    let key = within("the key Ready", BOOT, || async {
        let key = keys.get("ci").await.ok()?;
        let status = serde_json::to_value(&key.status).ok()?;
        ready(&status["conditions"]).then_some(key)
    })
    .await;

    // They exist in the provisioned proxy, and the key works at its
    // gateway.
    let admin = kubelet.url(&endpoint).await;
    let generated = secrets
        .get("gw-master-key")
        .await
        .expect("the generated master key");
    let master = generated
        .data
        .unwrap()
        .into_values()
        .next()
        .map(|v| String::from_utf8(v.0).unwrap())
        .expect("a master key");
    let http = reqwest::Client::new();
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let info: Value = http
        .get(format!("{admin}/team/info?team_id={team_id}"))
        .bearer_auth(&master)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["team_info"]["team_alias"], "ML", "{info}");
    let connection = secrets.get("ci-key").await.expect("the key's Secret");
    let data = connection.data.unwrap();
    assert_eq!(
        String::from_utf8(data["endpoint"].0.clone()).unwrap(),
        gateway,
        "the key's Secret names the gateway's Service"
    );
    let secret_key = String::from_utf8(data["key"].0.clone()).unwrap();
    let at_gateway = kubelet.url(&gateway).await;
    let status = support::provider::key_accepted_at(&at_gateway, &secret_key).await;
    assert!(
        status.is_success(),
        "the key authenticates at the gateway: {status}"
    );
    let token = key.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(token.len(), 64, "the key's token is its external name");

    // Everything deleted in one go, as a composition's deletion does: the
    // provider orders it (keys, then the team, then the workload).
    for result in [
        keys.delete("ci", &Default::default()).await.map(|_| ()),
        teams.delete("ml", &Default::default()).await.map(|_| ()),
        instances
            .delete("gw", &Default::default())
            .await
            .map(|_| ()),
    ] {
        result.unwrap();
    }
    within("all three gone", BOOT, || async {
        let left = keys.get_opt("ci").await.unwrap().is_some()
            || teams.get_opt("ml").await.unwrap().is_some()
            || instances.get_opt("gw").await.unwrap().is_some();
        (!left).then_some(())
    })
    .await;
    // Nothing left in LiteLLM's database (the proxy itself is gone) ...
    let schema_rows = |table: &str, column: &str, value: &str| {
        db.query(&format!(
            "SELECT count(*) FROM \"{table}\" WHERE \"{column}\" = '{value}'"
        ))
    };
    assert_eq!(schema_rows("LiteLLM_TeamTable", "team_id", &team_id), "0");
    assert_eq!(
        schema_rows("LiteLLM_VerificationToken", "token", &token),
        "0"
    );
    // ... nor of the workload in Kubernetes: only the generated keys, which
    // outlive the instance, the Secret the test made, and Secrets owned by
    // a deleted object (the key's connection Secret), which a cluster's
    // garbage collector deletes (the API server harness runs none).
    let left: Vec<String> = secrets
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter(|s| s.owner_references().is_empty())
        .map(|s| s.name_any())
        .filter(|n| n != "litellm-db" && !n.ends_with("-master-key") && !n.ends_with("-salt-key"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "Secrets left behind");
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), &namespace);
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(client.clone(), &namespace);
    let jobs: Api<k8s_openapi::api::batch::v1::Job> = Api::namespaced(client.clone(), &namespace);
    assert!(deployments
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());
    assert!(services
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());
    assert!(jobs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());
    provider.terminate().await;
    let _ = std::fs::remove_file(&kubeconfig);
}
