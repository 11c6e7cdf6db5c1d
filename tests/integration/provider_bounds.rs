//! One object cannot hurt everyone (docs/tenancy.md): the bounds of the CRDs
//! hold on the real API server, and no object it accepts stops the provider.
//!
//! kube-rs decodes a list (and so a watch) of a kind whole or not at all: an
//! object the API server accepted but the Rust types cannot hold would stop
//! the provider for that kind in every namespace. So:
//! - every integer, list, free-form map and name of the CRDs is bounded
//!   (checked on the generated schemas);
//! - an object at every maximum is accepted by the real API server and read
//!   back into the Rust types, by a list and by a watch over all namespaces;
//! - one past any bound is refused by the API server, naming the field;
//! - with the controllers running, objects at the extremes reconcile (the
//!   values reach LiteLLM unchanged and nothing drifts), a normal team of
//!   another namespace becomes Ready, and an endless answer from the proxy
//!   is reported and recovered from.
//!
//! The CRDs are applied to an API server other tests share; every object
//! here lives in namespaces of its own and carries a label of this run, and
//! the lists and watches over all namespaces select by that label.

use crate::support;

use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::watcher;
use kube::ResourceExt;
use litellm_crossplane::api::common::bounds::*;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::generate::managed_crds;
use litellm_crossplane::api::{
    LiteLLMBudget, LiteLLMCredential, LiteLLMInstance, LiteLLMMCPServer, LiteLLMModel,
    LiteLLMOrganization, LiteLLMTeam, LiteLLMUser, LiteLLMVirtualKey,
};
use litellm_crossplane::litellm::LimitsRequest;
use litellm_crossplane::litellm::MAX_RESPONSE_BODY;
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::ownership::MARKER_KEY;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use support::fault_proxy::{Fault, FaultProxy};
use support::k8s;
use support::provider::{is, manifest, wait_for, wait_gone, world, world_with, Setup};
use tokio_stream::StreamExt;

/// The largest amount `MONEY_PATTERN` admits.
const MAX_MONEY: &str = "999999999.999999";
/// The longest durations `DURATION_PATTERN` admits, by unit.
const MAX_DAYS: &str = "999999d";
const MAX_MONTHS: &str = "9999mo";
/// The label every object of one run carries.
const RUN_LABEL: &str = "litellm-crossplane-tests/bounds-run";

fn text(length: u32) -> String {
    "a".repeat(length as usize)
}

/// `count` distinct strings of exactly `length` characters.
fn texts(count: u32, length: u32) -> Value {
    (0..count)
        .map(|i| {
            let head = format!("{i:05}-");
            format!("{head}{}", "m".repeat(length as usize - head.len()))
        })
        .collect()
}

/// An object with `count` fields, of assorted JSON types.
fn fields(count: u32) -> Value {
    let values = [
        json!("v"),
        json!(1),
        json!(true),
        json!(["a"]),
        json!({"x": 1}),
    ];
    Value::Object(
        (0..count)
            .map(|i| {
                (
                    format!("f{i:03}"),
                    values[i as usize % values.len()].clone(),
                )
            })
            .collect(),
    )
}

fn object(kind: &str, name: &str, run: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "labels": {RUN_LABEL: run}},
        "spec": spec,
    })
}

/// The managed-resource fields at their maxima.
fn managed_at_max() -> Value {
    json!({
        "instanceRef": {"name": text(MAX_NAME_LENGTH), "namespace": text(MAX_LABEL_LENGTH)},
        // Six entries: the six policies are a supported set with repetition.
        "managementPolicies": ["Observe", "Create", "Update", "Delete", "LateInitialize", "Observe"],
        "writeConnectionSecretToRef": {"name": text(MAX_NAME_LENGTH)},
    })
}

fn with_managed(for_provider: Value) -> Value {
    let mut spec = managed_at_max();
    spec["forProvider"] = for_provider;
    spec
}

fn team_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMTeam",
        name,
        run,
        with_managed(json!({
            "teamAlias": text(MAX_ALIAS_LENGTH),
            "organizationId": text(MAX_ID_LENGTH),
            "models": texts(MAX_MODELS, MAX_MODEL_REF_LENGTH),
            "maxBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "blocked": true,
            "metadata": fields(MAX_METADATA_PROPERTIES),
            "objectPermission": object_permission_at_max(),
        })),
    )
}

/// A team's or key's `objectPermission` at its maxima.
fn object_permission_at_max() -> Value {
    let refs: Vec<Value> = (0..MAX_OBJECT_PERMISSIONS)
        .map(|i| json!({"name": format!("{i:05}-{}", text(MAX_NAME_LENGTH - 6))}))
        .collect();
    json!({
        "mcpServerRefs": refs,
        "mcpServers": texts(MAX_OBJECT_PERMISSIONS, MAX_ID_LENGTH),
        "mcpAccessGroups": texts(MAX_OBJECT_PERMISSIONS, MAX_ACCESS_GROUP_LENGTH),
        "vectorStores": texts(MAX_OBJECT_PERMISSIONS, MAX_ID_LENGTH),
    })
}

fn key_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMVirtualKey",
        name,
        run,
        with_managed(json!({
            "keyAlias": text(MAX_ALIAS_LENGTH),
            "teamRef": {"name": text(MAX_NAME_LENGTH)},
            "teamId": text(MAX_ID_LENGTH),
            "budgetRef": {"name": text(MAX_NAME_LENGTH)},
            "budgetId": text(MAX_ID_LENGTH),
            "userRef": {"name": text(MAX_NAME_LENGTH)},
            "userId": text(MAX_ID_LENGTH),
            "models": texts(MAX_MODELS, MAX_MODEL_REF_LENGTH),
            "maxBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "duration": MAX_MONTHS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "maxParallelRequests": MAX_PARALLEL_REQUESTS,
            "blocked": true,
            "metadata": fields(MAX_METADATA_PROPERTIES),
            "objectPermission": object_permission_at_max(),
        })),
    )
}

fn user_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMUser",
        name,
        run,
        with_managed(json!({
            "userEmail": text(MAX_EMAIL_LENGTH),
            "userAlias": text(MAX_ALIAS_LENGTH),
            "userRole": "internal_user_viewer",
            "models": texts(MAX_MODELS, MAX_MODEL_REF_LENGTH),
            "maxBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "maxParallelRequests": MAX_PARALLEL_REQUESTS,
            "metadata": fields(MAX_METADATA_PROPERTIES),
        })),
    )
}

fn budget_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMBudget",
        name,
        run,
        with_managed(json!({
            "maxBudget": MAX_MONEY,
            "softBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "maxParallelRequests": MAX_PARALLEL_REQUESTS,
        })),
    )
}

fn model_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMModel",
        name,
        run,
        with_managed(json!({
            "modelName": text(MAX_MODEL_NAME_LENGTH),
            "litellmParams": {
                "model": text(MAX_UPSTREAM_MODEL_LENGTH),
                "apiBase": text(MAX_URL_LENGTH),
                "apiVersion": text(MAX_WORD_LENGTH),
                "apiKeySecretRef": {"name": text(MAX_NAME_LENGTH), "key": text(MAX_NAME_LENGTH)},
                "tpm": MAX_RATE_LIMIT,
                "rpm": MAX_RATE_LIMIT,
            },
            "modelInfo": fields(MAX_MODEL_INFO_PROPERTIES),
        })),
    )
}

/// `count` credential values from Secrets, with names and Secret
/// references at their maximum length.
fn credential_values(count: u32) -> Value {
    let names = texts(count, MAX_NAME_LENGTH);
    names
        .as_array()
        .unwrap()
        .iter()
        .map(|name| {
            json!({"name": name,
                   "secretKeyRef": {"name": text(MAX_NAME_LENGTH), "key": text(MAX_NAME_LENGTH)}})
        })
        .collect()
}

/// `count` plain credential values at their maximum length.
fn plain_values(count: u32) -> Value {
    Value::Object(
        (0..count)
            .map(|i| (format!("p{i:03}"), json!(text(MAX_PLAIN_VALUE_LENGTH))))
            .collect(),
    )
}

fn credential_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMCredential",
        name,
        run,
        with_managed(json!({
            "values": credential_values(MAX_CREDENTIAL_VALUES),
            "plainValues": plain_values(MAX_CREDENTIAL_VALUES),
            "displayName": text(MAX_DISPLAY_NAME_LENGTH),
            "credentialInfo": fields(MAX_METADATA_PROPERTIES),
        })),
    )
}

fn organization_at_max(run: &str, name: &str) -> Value {
    object(
        "LiteLLMOrganization",
        name,
        run,
        with_managed(json!({
            "organizationAlias": text(MAX_ALIAS_LENGTH),
            "models": texts(MAX_MODELS, MAX_MODEL_REF_LENGTH),
            "maxBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "maxParallelRequests": MAX_PARALLEL_REQUESTS,
            "metadata": fields(MAX_METADATA_PROPERTIES),
        })),
    )
}

fn mcp_server_at_max(run: &str, name: &str) -> Value {
    let url = format!("https://{}", text(MAX_URL_LENGTH - "https://".len() as u32));
    object(
        "LiteLLMMCPServer",
        name,
        run,
        with_managed(json!({
            "transport": "http",
            "url": url,
            "serverName": text(MAX_ALIAS_LENGTH),
            "description": text(MAX_DESCRIPTION_LENGTH),
            "authType": "bearer_token",
            "authSecretRef": {"name": text(MAX_NAME_LENGTH), "key": text(MAX_NAME_LENGTH)},
            "allowedTools": texts(MAX_TOOLS, MAX_NAME_LENGTH),
            "accessGroups": texts(MAX_TAGS, MAX_ACCESS_GROUP_LENGTH),
            "mcpInfo": fields(MAX_METADATA_PROPERTIES),
        })),
    )
}

/// The instance's free-form proxy-config sections.
const CONFIG_SECTIONS: [&str; 15] = [
    "sso",
    "scim",
    "jwtAuth",
    "oauth2Auth",
    "rbac",
    "security",
    "logging",
    "adminUI",
    "caching",
    "routerSettings",
    "callbacks",
    "passThroughEndpoints",
    "secretManager",
    "litellmSettings",
    "generalSettings",
];

fn instance_at_max(run: &str, name: &str) -> Value {
    let url = format!("http://{}", text(MAX_URL_LENGTH - "http://".len() as u32));
    let secret = || json!({"name": text(MAX_NAME_LENGTH), "key": text(MAX_NAME_LENGTH)});
    let mut spec = json!({
        "workload": {"managed": false, "endpoint": url, "gatewayEndpoint": url, "replicas": MAX_REPLICAS},
        "masterKey": {"secretRef": secret()},
        "saltKey": {"secretRef": secret()},
        "image": {
            "repository": text(MAX_IMAGE_REPOSITORY_LENGTH),
            "tag": text(MAX_IMAGE_TAG_LENGTH),
            "pullPolicy": text(MAX_WORD_LENGTH),
        },
        "service": {"port": 65535, "type": text(MAX_WORD_LENGTH), "https": true},
        "database": {
            "host": text(MAX_NAME_LENGTH),
            "port": 65535,
            "name": text(MAX_LABEL_LENGTH),
            "credentialsSecretRef": {
                "name": text(MAX_NAME_LENGTH),
                "usernameKey": text(MAX_NAME_LENGTH),
                "passwordKey": text(MAX_NAME_LENGTH),
            },
            "urlSecretRef": secret(),
            "migration": {"enabled": true},
        },
        "redis": {"host": text(MAX_NAME_LENGTH), "port": 65535, "passwordSecretRef": secret()},
        "tls": {"caSecretRef": secret()},
        "allowedNamespaces": {"names": texts(MAX_NAMESPACES, MAX_LABEL_LENGTH)},
        "licenseSecretRef": secret(),
    });
    for section in CONFIG_SECTIONS {
        spec[section] = fields(MAX_CONFIG_PROPERTIES);
    }
    object("LiteLLMInstance", name, run, spec)
}

/// Status at its maxima: what a status writer could put there.
fn managed_status_at_max() -> Value {
    json!({"status": {"conditions": [{
        "type": "Ready", "status": "True", "reason": "Available",
        "observedGeneration": MAX_GENERATION,
    }]}})
}

fn instance_status_at_max() -> Value {
    json!({"status": {
        "ready": true,
        "replicas": MAX_STATUS_REPLICAS,
        "readyReplicas": MAX_STATUS_REPLICAS,
        "observedGeneration": MAX_GENERATION,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                        "observedGeneration": MAX_GENERATION}],
        "generatedKeys": {"saltKey": {"secretName": text(MAX_NAME_LENGTH),
                                      "recordedAt": text(64), "fingerprint": text(64)}},
    }})
}

/// The kinds' API group as the provider serves it.
const GROUP: &str = "litellm.m.crossplane.io";

/// Where the objects of `kind` of API group `group` are.
struct Kinds<'a> {
    client: &'a kube::Client,
    group: &'a str,
    namespace: &'a str,
}

impl Kinds<'_> {
    fn api(&self, kind: &str) -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk(self.group, "v1alpha1", kind);
        let plural = format!("{}s", kind.to_lowercase());
        Api::namespaced_with(
            self.client.clone(),
            self.namespace,
            &ApiResource::from_gvk_with_plural(&gvk, &plural),
        )
    }

    /// Creates `object` (of [`GROUP`], moved to this group); the API
    /// server's refusal as text.
    async fn create(&self, object: &Value) -> Result<(), String> {
        let kind = object["kind"].as_str().unwrap();
        let mut object = object.clone();
        object["apiVersion"] = json!(format!("{}/v1alpha1", self.group));
        let object: DynamicObject = serde_json::from_value(object).unwrap();
        self.api(kind)
            .create(&PostParams::default(), &object)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }

    async fn patch_status(&self, kind: &str, name: &str, status: &Value) -> Result<(), String> {
        self.api(kind)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The generated CRDs under an API group of this test's own, so that no
/// other test applying its version of the CRDs to the shared API server
/// changes the rules this test checks; removed on drop.
struct PrivateCrds {
    client: kube::Client,
    group: String,
    names: Vec<String>,
}

impl PrivateCrds {
    async fn install(client: &kube::Client, run: &str) -> Self {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let group = format!("bounds-{run}.litellm-crossplane.test");
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        let mut names = Vec::new();
        for mut crd in managed_crds() {
            crd.spec.group = group.clone();
            crd.spec.names.categories = None;
            crd.spec.names.short_names = None;
            let name = format!("{}.{group}", crd.spec.names.plural);
            crd.metadata.name = Some(name.clone());
            crds.create(&PostParams::default(), &crd)
                .await
                .expect("private CRD created");
            names.push(name);
        }
        for name in &names {
            k8s::wait_established(&crds, name).await;
        }
        // Discovery of new CRDs lags their Established condition a little.
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        Self {
            client: client.clone(),
            group,
            names,
        }
    }

    async fn remove(self) {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let crds: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        for name in &self.names {
            let _ = crds.delete(name, &DeleteParams::default()).await;
        }
    }
}

/// Every object of kind `K` and of run `run`: listed in `namespace`, listed
/// over all namespaces and seen by a watcher over all namespaces, all three
/// decoded into the Rust type. A list or watch that fails to decode one
/// object fails here.
async fn read_back<K>(client: &kube::Client, namespace: &str, run: &str) -> Vec<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
    K::DynamicType: Default,
{
    let selector = format!("{RUN_LABEL}={run}");
    let here: Api<K> = Api::namespaced(client.clone(), namespace);
    let listed = here
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap_or_else(|e| panic!("list in {namespace}: {e}"))
        .items;
    let everywhere: Api<K> = Api::all(client.clone());
    let listed_everywhere = everywhere
        .list(&ListParams::default().labels(&selector))
        .await
        .unwrap_or_else(|e| panic!("list over all namespaces: {e}"))
        .items;
    assert_eq!(listed.len(), listed_everywhere.len());
    let watched = watch_everywhere(everywhere, &selector).await;
    assert_eq!(watched.len(), listed.len());
    listed
}

/// The objects a watcher over all namespaces delivers in its initial list.
async fn watch_everywhere<K>(api: Api<K>, selector: &str) -> Vec<K>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
{
    let stream = watcher(api, watcher::Config::default().labels(selector));
    let mut stream = std::pin::pin!(stream);
    let mut seen = Vec::new();
    let deadline = std::time::Duration::from_secs(30);
    tokio::time::timeout(deadline, async {
        while let Some(event) = stream.next().await {
            match event.expect("the watch decodes") {
                watcher::Event::InitApply(object) => seen.push(object),
                watcher::Event::InitDone => return,
                _ => {}
            }
        }
    })
    .await
    .expect("the watch lists");
    seen
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn objects_at_every_maximum_are_accepted_and_read_back_by_lists_and_watches() {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let ns = k8s::namespace(&client, "bounds-max").await;
    let run = k8s::unique_suffix();
    let kinds = Kinds {
        client: &client,
        group: GROUP,
        namespace: &ns,
    };

    for object in [
        team_at_max(&run, "team"),
        key_at_max(&run, "key"),
        budget_at_max(&run, "budget"),
        model_at_max(&run, "model"),
        credential_at_max(&run, "credential"),
        user_at_max(&run, "user"),
        mcp_server_at_max(&run, "mcp-server"),
        organization_at_max(&run, "organization"),
        instance_at_max(&run, "instance"),
    ] {
        let kind = object["kind"].as_str().unwrap().to_owned();
        kinds
            .create(&object)
            .await
            .unwrap_or_else(|e| panic!("{kind} at its maxima refused: {e}"));
        let status = if kind == "LiteLLMInstance" {
            instance_status_at_max()
        } else {
            managed_status_at_max()
        };
        let name = object["metadata"]["name"].as_str().unwrap();
        kinds
            .patch_status(&kind, name, &status)
            .await
            .unwrap_or_else(|e| panic!("{kind} status at its maxima refused: {e}"));
    }

    let teams = read_back::<LiteLLMTeam>(&client, &ns, &run).await;
    let team = &teams[0].spec.for_provider;
    assert_eq!(team.limits.tpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(team.limits.rpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(team.models.as_ref().unwrap().len(), MAX_MODELS as usize);
    assert_eq!(
        team.metadata.as_ref().unwrap().len(),
        MAX_METADATA_PROPERTIES as usize
    );
    assert_eq!(team.limits.max_budget.as_deref(), Some(MAX_MONEY));
    let conditions = &teams[0].status.as_ref().unwrap().conditions;
    assert_eq!(conditions[0].observed_generation, Some(MAX_GENERATION));

    let keys = read_back::<LiteLLMVirtualKey>(&client, &ns, &run).await;
    let key = &keys[0].spec.for_provider;
    assert_eq!(
        key.limits.max_parallel_requests,
        Some(MAX_PARALLEL_REQUESTS)
    );
    assert_eq!(key.limits.tpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(key.duration.as_deref(), Some(MAX_MONTHS));
    assert_eq!(key.team_id.as_ref().unwrap().len(), MAX_ID_LENGTH as usize);

    let budgets = read_back::<LiteLLMBudget>(&client, &ns, &run).await;
    let budget = &budgets[0].spec.for_provider;
    assert_eq!(
        budget.limits.max_parallel_requests,
        Some(MAX_PARALLEL_REQUESTS)
    );
    assert_eq!(budget.limits.rpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(budget.soft_budget.as_deref(), Some(MAX_MONEY));

    let models = read_back::<LiteLLMModel>(&client, &ns, &run).await;
    let model = &models[0].spec.for_provider;
    assert_eq!(model.litellm_params.tpm, Some(MAX_RATE_LIMIT));
    assert_eq!(model.litellm_params.rpm, Some(MAX_RATE_LIMIT));
    assert_eq!(
        model.model_info.as_ref().unwrap().len(),
        MAX_MODEL_INFO_PROPERTIES as usize
    );

    let permission = team.object_permission.as_ref().unwrap();
    assert_eq!(
        permission.mcp_server_refs.as_ref().unwrap().len(),
        MAX_OBJECT_PERMISSIONS as usize
    );
    let permission = key.object_permission.as_ref().unwrap();
    assert_eq!(
        permission.vector_stores.as_ref().unwrap().len(),
        MAX_OBJECT_PERMISSIONS as usize
    );

    let servers = read_back::<LiteLLMMCPServer>(&client, &ns, &run).await;
    let server = &servers[0].spec.for_provider;
    assert_eq!(server.url.as_ref().unwrap().len(), MAX_URL_LENGTH as usize);
    assert_eq!(
        server.allowed_tools.as_ref().unwrap().len(),
        MAX_TOOLS as usize
    );
    assert_eq!(
        server.mcp_info.as_ref().unwrap().len(),
        MAX_METADATA_PROPERTIES as usize
    );

    let credentials = read_back::<LiteLLMCredential>(&client, &ns, &run).await;
    let credential = &credentials[0].spec.for_provider;
    assert_eq!(credential.values.len(), MAX_CREDENTIAL_VALUES as usize);
    assert_eq!(
        credential.plain_values.len(),
        MAX_CREDENTIAL_VALUES as usize
    );
    assert_eq!(
        credential.credential_info.as_ref().unwrap().len(),
        MAX_METADATA_PROPERTIES as usize
    );

    let users = read_back::<LiteLLMUser>(&client, &ns, &run).await;
    let user = &users[0].spec.for_provider;
    assert_eq!(
        user.user_email.as_ref().unwrap().len(),
        MAX_EMAIL_LENGTH as usize
    );
    assert_eq!(user.models.as_ref().unwrap().len(), MAX_MODELS as usize);
    assert_eq!(
        user.limits.max_parallel_requests,
        Some(MAX_PARALLEL_REQUESTS)
    );
    assert_eq!(
        user.metadata.as_ref().unwrap().len(),
        MAX_METADATA_PROPERTIES as usize
    );

    let organizations = read_back::<LiteLLMOrganization>(&client, &ns, &run).await;
    let organization = &organizations[0].spec.for_provider;
    assert_eq!(
        organization.organization_alias.as_ref().unwrap().len(),
        MAX_ALIAS_LENGTH as usize
    );
    assert_eq!(
        organization.models.as_ref().unwrap().len(),
        MAX_MODELS as usize
    );
    assert_eq!(
        organization.limits.max_parallel_requests,
        Some(MAX_PARALLEL_REQUESTS)
    );
    assert_eq!(
        organization.metadata.as_ref().unwrap().len(),
        MAX_METADATA_PROPERTIES as usize
    );

    let instances = read_back::<LiteLLMInstance>(&client, &ns, &run).await;
    let instance = &instances[0];
    assert_eq!(
        instance.spec.workload.as_ref().unwrap().replicas,
        Some(MAX_REPLICAS)
    );
    let status = instance.status.as_ref().unwrap();
    assert_eq!(
        (status.replicas, status.ready_replicas),
        (MAX_STATUS_REPLICAS, MAX_STATUS_REPLICAS)
    );
    assert_eq!(status.observed_generation, Some(MAX_GENERATION));
    let config = &instance.spec.config;
    for section in [
        &config.litellm_settings,
        &config.general_settings,
        &config.sso,
    ] {
        assert_eq!(
            section.as_ref().unwrap().len(),
            MAX_CONFIG_PROPERTIES as usize
        );
    }
    assert_eq!(
        instance
            .spec
            .allowed_namespaces
            .as_ref()
            .unwrap()
            .names
            .as_ref()
            .unwrap()
            .len(),
        MAX_NAMESPACES as usize
    );
}

/// One field of an object at its maxima set one past its bound, and the
/// path the API server's refusal must name.
struct Past {
    kind: &'static str,
    pointer: String,
    value: Value,
    field: String,
}

fn past(kind: &'static str, pointer: &str, value: Value) -> Past {
    // `/spec/forProvider/models/0` is reported as `spec.forProvider.models[0]`.
    let mut field = String::new();
    for part in pointer.trim_start_matches('/').split('/') {
        if part.bytes().all(|b| b.is_ascii_digit()) {
            field.push_str(&format!("[{part}]"));
        } else {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(part);
        }
    }
    Past {
        kind,
        pointer: pointer.to_owned(),
        value,
        field,
    }
}

/// Every bounded spec field, one past its bound.
fn spec_cases() -> Vec<Past> {
    let over_rate = json!(MAX_RATE_LIMIT + 1);
    let over_money = json!("1000000000");
    let mut cases = Vec::new();
    for kind in [
        "LiteLLMTeam",
        "LiteLLMVirtualKey",
        "LiteLLMBudget",
        "LiteLLMModel",
        "LiteLLMCredential",
        "LiteLLMUser",
        "LiteLLMMCPServer",
        "LiteLLMOrganization",
    ] {
        cases.extend([
            past(
                kind,
                "/spec/instanceRef/name",
                json!(text(MAX_NAME_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/instanceRef/namespace",
                json!(text(MAX_LABEL_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/writeConnectionSecretToRef/name",
                json!(text(MAX_NAME_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/managementPolicies",
                json!(vec!["Observe"; MAX_MANAGEMENT_POLICIES as usize + 1]),
            ),
        ]);
    }
    for kind in [
        "LiteLLMTeam",
        "LiteLLMVirtualKey",
        "LiteLLMBudget",
        "LiteLLMUser",
        "LiteLLMOrganization",
    ] {
        cases.extend([
            past(kind, "/spec/forProvider/tpmLimit", over_rate.clone()),
            past(kind, "/spec/forProvider/rpmLimit", over_rate.clone()),
            past(kind, "/spec/forProvider/tpmLimit", json!(-1)),
            past(kind, "/spec/forProvider/maxBudget", over_money.clone()),
            past(kind, "/spec/forProvider/budgetDuration", json!("1000000d")),
        ]);
    }
    for kind in [
        "LiteLLMTeam",
        "LiteLLMVirtualKey",
        "LiteLLMUser",
        "LiteLLMOrganization",
    ] {
        cases.extend([
            past(
                kind,
                "/spec/forProvider/models",
                texts(MAX_MODELS + 1, MAX_MODEL_REF_LENGTH),
            ),
            past(
                kind,
                "/spec/forProvider/models/0",
                json!(text(MAX_MODEL_REF_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/forProvider/metadata",
                fields(MAX_METADATA_PROPERTIES + 1),
            ),
        ]);
    }
    for kind in [
        "LiteLLMVirtualKey",
        "LiteLLMBudget",
        "LiteLLMUser",
        "LiteLLMOrganization",
    ] {
        cases.extend([
            past(
                kind,
                "/spec/forProvider/maxParallelRequests",
                json!(MAX_PARALLEL_REQUESTS + 1),
            ),
            past(kind, "/spec/forProvider/maxParallelRequests", json!(-1)),
        ]);
    }
    let team = "LiteLLMTeam";
    cases.push(past(
        team,
        "/spec/forProvider/teamAlias",
        json!(text(MAX_ALIAS_LENGTH + 1)),
    ));
    let key = "LiteLLMVirtualKey";
    cases.extend([
        past(
            key,
            "/spec/forProvider/keyAlias",
            json!(text(MAX_ALIAS_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/teamId",
            json!(text(MAX_ID_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/budgetId",
            json!(text(MAX_ID_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/teamRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/budgetRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/userId",
            json!(text(MAX_ID_LENGTH + 1)),
        ),
        past(
            key,
            "/spec/forProvider/userRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(key, "/spec/forProvider/duration", json!("10000mo")),
    ]);
    let budget = "LiteLLMBudget";
    cases.push(past(budget, "/spec/forProvider/softBudget", over_money));
    let organization = "LiteLLMOrganization";
    cases.extend([
        past(
            organization,
            "/spec/forProvider/organizationAlias",
            json!(text(MAX_ALIAS_LENGTH + 1)),
        ),
        past(
            organization,
            "/spec/forProvider/organizationAlias",
            json!(""),
        ),
        past(
            team,
            "/spec/forProvider/organizationId",
            json!(text(MAX_ID_LENGTH + 1)),
        ),
    ]);
    let user = "LiteLLMUser";
    cases.extend([
        past(
            user,
            "/spec/forProvider/userEmail",
            json!(text(MAX_EMAIL_LENGTH + 1)),
        ),
        past(
            user,
            "/spec/forProvider/userAlias",
            json!(text(MAX_ALIAS_LENGTH + 1)),
        ),
        past(user, "/spec/forProvider/userRole", json!("org_admin")),
        // LiteLLM ignores an empty list on update: it could never be
        // reconciled.
        past(user, "/spec/forProvider/models", json!([])),
    ]);
    let model = "LiteLLMModel";
    cases.extend([
        past(
            model,
            "/spec/forProvider/modelName",
            json!(text(MAX_MODEL_NAME_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/model",
            json!(text(MAX_UPSTREAM_MODEL_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/apiBase",
            json!(text(MAX_URL_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/apiVersion",
            json!(text(MAX_WORD_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/apiKeySecretRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/apiKeySecretRef/key",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            model,
            "/spec/forProvider/litellmParams/tpm",
            over_rate.clone(),
        ),
        past(model, "/spec/forProvider/litellmParams/rpm", over_rate),
        past(
            model,
            "/spec/forProvider/modelInfo",
            fields(MAX_MODEL_INFO_PROPERTIES + 1),
        ),
    ]);
    let credential = "LiteLLMCredential";
    cases.extend([
        past(
            credential,
            "/spec/forProvider/values",
            credential_values(MAX_CREDENTIAL_VALUES + 1),
        ),
        past(
            credential,
            "/spec/forProvider/values/0/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            credential,
            "/spec/forProvider/values/0/secretKeyRef/key",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            credential,
            "/spec/forProvider/plainValues",
            plain_values(MAX_CREDENTIAL_VALUES + 1),
        ),
        past(
            credential,
            "/spec/forProvider/plainValues/p000",
            json!(text(MAX_PLAIN_VALUE_LENGTH + 1)),
        ),
        past(
            credential,
            "/spec/forProvider/displayName",
            json!(text(MAX_DISPLAY_NAME_LENGTH + 1)),
        ),
        past(
            credential,
            "/spec/forProvider/credentialInfo",
            fields(MAX_METADATA_PROPERTIES + 1),
        ),
    ]);
    let server = "LiteLLMMCPServer";
    cases.extend([
        past(
            server,
            "/spec/forProvider/url",
            json!(format!(
                "https://{}",
                text(MAX_URL_LENGTH + 1 - "https://".len() as u32)
            )),
        ),
        past(
            server,
            "/spec/forProvider/serverName",
            json!(text(MAX_ALIAS_LENGTH + 1)),
        ),
        past(
            server,
            "/spec/forProvider/description",
            json!(text(MAX_DESCRIPTION_LENGTH + 1)),
        ),
        past(
            server,
            "/spec/forProvider/authSecretRef/key",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            server,
            "/spec/forProvider/allowedTools",
            texts(MAX_TOOLS + 1, 8),
        ),
        past(
            server,
            "/spec/forProvider/allowedTools/0",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            server,
            "/spec/forProvider/accessGroups",
            texts(MAX_TAGS + 1, 8),
        ),
        past(
            server,
            "/spec/forProvider/accessGroups/0",
            json!(text(MAX_ACCESS_GROUP_LENGTH + 1)),
        ),
        past(
            server,
            "/spec/forProvider/mcpInfo",
            fields(MAX_METADATA_PROPERTIES + 1),
        ),
    ]);
    for kind in ["LiteLLMTeam", "LiteLLMVirtualKey"] {
        cases.extend([
            past(
                kind,
                "/spec/forProvider/objectPermission/mcpServerRefs/0/name",
                json!(text(MAX_NAME_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/forProvider/objectPermission/mcpServers",
                texts(MAX_OBJECT_PERMISSIONS + 1, 8),
            ),
            past(
                kind,
                "/spec/forProvider/objectPermission/mcpServers/0",
                json!(text(MAX_ID_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/forProvider/objectPermission/mcpAccessGroups/0",
                json!(text(MAX_ACCESS_GROUP_LENGTH + 1)),
            ),
            past(
                kind,
                "/spec/forProvider/objectPermission/vectorStores",
                texts(MAX_OBJECT_PERMISSIONS + 1, 8),
            ),
        ]);
    }
    let instance = "LiteLLMInstance";
    let long_url = format!(
        "http://{}",
        text(MAX_URL_LENGTH + 1 - "http://".len() as u32)
    );
    cases.extend([
        past(instance, "/spec/workload/replicas", json!(MAX_REPLICAS + 1)),
        past(instance, "/spec/workload/replicas", json!(-1)),
        past(instance, "/spec/workload/endpoint", json!(long_url)),
        past(instance, "/spec/workload/gatewayEndpoint", json!(long_url)),
        past(
            instance,
            "/spec/masterKey/secretRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/saltKey/secretRef/key",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/image/repository",
            json!(text(MAX_IMAGE_REPOSITORY_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/image/tag",
            json!(text(MAX_IMAGE_TAG_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/image/pullPolicy",
            json!(text(MAX_WORD_LENGTH + 1)),
        ),
        past(instance, "/spec/service/port", json!(65536)),
        past(
            instance,
            "/spec/service/type",
            json!(text(MAX_WORD_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/database/host",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(instance, "/spec/database/port", json!(0)),
        past(
            instance,
            "/spec/database/name",
            json!(text(MAX_LABEL_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/database/credentialsSecretRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/database/credentialsSecretRef/usernameKey",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/database/credentialsSecretRef/passwordKey",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/redis/host",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(instance, "/spec/redis/port", json!(65536)),
        past(
            instance,
            "/spec/tls/caSecretRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/licenseSecretRef/name",
            json!(text(MAX_NAME_LENGTH + 1)),
        ),
        past(
            instance,
            "/spec/allowedNamespaces/names",
            texts(MAX_NAMESPACES + 1, MAX_LABEL_LENGTH),
        ),
        past(
            instance,
            "/spec/allowedNamespaces/names/0",
            json!(text(MAX_LABEL_LENGTH + 1)),
        ),
    ]);
    for section in CONFIG_SECTIONS {
        cases.push(past(
            instance,
            &format!("/spec/{section}"),
            fields(MAX_CONFIG_PROPERTIES + 1),
        ));
    }
    cases
}

/// Every bounded status field, one past its bound.
fn status_cases() -> Vec<Past> {
    let mut cases = Vec::new();
    for kind in [
        "LiteLLMTeam",
        "LiteLLMVirtualKey",
        "LiteLLMBudget",
        "LiteLLMModel",
        "LiteLLMCredential",
        "LiteLLMUser",
        "LiteLLMMCPServer",
        "LiteLLMOrganization",
        "LiteLLMInstance",
    ] {
        cases.extend([
            past(
                kind,
                "/status/conditions/0/observedGeneration",
                json!(MAX_GENERATION + 1),
            ),
            past(kind, "/status/conditions/0/observedGeneration", json!(-1)),
        ]);
    }
    let instance = "LiteLLMInstance";
    cases.extend([
        past(
            instance,
            "/status/replicas",
            json!(MAX_STATUS_REPLICAS as i64 + 1),
        ),
        past(instance, "/status/readyReplicas", json!(-1)),
        past(
            instance,
            "/status/observedGeneration",
            json!(MAX_GENERATION + 1),
        ),
    ]);
    cases
}

fn at_max(kind: &str, run: &str, name: &str) -> Value {
    match kind {
        "LiteLLMTeam" => team_at_max(run, name),
        "LiteLLMVirtualKey" => key_at_max(run, name),
        "LiteLLMBudget" => budget_at_max(run, name),
        "LiteLLMModel" => model_at_max(run, name),
        "LiteLLMCredential" => credential_at_max(run, name),
        "LiteLLMUser" => user_at_max(run, name),
        "LiteLLMOrganization" => organization_at_max(run, name),
        "LiteLLMMCPServer" => mcp_server_at_max(run, name),
        "LiteLLMInstance" => instance_at_max(run, name),
        other => panic!("no such kind {other}"),
    }
}

fn status_at_max(kind: &str) -> Value {
    if kind == "LiteLLMInstance" {
        instance_status_at_max()
    } else {
        managed_status_at_max()
    }
}

fn set(object: &mut Value, pointer: &str, value: Value) {
    *object
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} is in the object at its maxima")) = value;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn one_past_any_bound_is_refused_by_the_api_server_naming_the_field() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let ns = k8s::namespace(&client, "bounds-past").await;
    let run = k8s::unique_suffix();
    let crds = PrivateCrds::install(&client, &run).await;
    let kinds = Kinds {
        client: &client,
        group: &crds.group,
        namespace: &ns,
    };
    let problems = refusals(&kinds, &run).await;
    crds.remove().await;
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What is wrong with the API server's answer to a case, if anything.
fn problem(case: &Past, outcome: Result<(), String>) -> Option<String> {
    match outcome {
        Err(err) if err.contains(&case.field) => None,
        Err(err) => Some(format!(
            "{} {}: refused without naming it: {err}",
            case.kind, case.field
        )),
        Ok(()) => Some(format!("{} {}: accepted", case.kind, case.field)),
    }
}

/// Tries every case; what went wrong, one line each.
async fn refusals(kinds: &Kinds<'_>, run: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, case) in spec_cases().iter().enumerate() {
        let mut object = at_max(case.kind, run, &format!("past-{i}"));
        // The long lists at one entry keep a hundred creates quick; the
        // cases on the lists themselves set them whole.
        for list in [
            "/spec/forProvider/models",
            "/spec/forProvider/values",
            "/spec/allowedNamespaces/names",
            "/spec/forProvider/allowedTools",
            "/spec/forProvider/objectPermission/mcpServerRefs",
            "/spec/forProvider/objectPermission/mcpServers",
            "/spec/forProvider/objectPermission/mcpAccessGroups",
            "/spec/forProvider/objectPermission/vectorStores",
        ] {
            if let Some(Value::Array(items)) = object.pointer_mut(list) {
                items.truncate(1);
            }
        }
        set(&mut object, &case.pointer, case.value.clone());
        problems.extend(problem(case, kinds.create(&object).await));
    }

    // Status: on an object at its maxima, each field one past its bound.
    for kind in [
        "LiteLLMTeam",
        "LiteLLMVirtualKey",
        "LiteLLMBudget",
        "LiteLLMModel",
        "LiteLLMCredential",
        "LiteLLMUser",
        "LiteLLMMCPServer",
        "LiteLLMOrganization",
        "LiteLLMInstance",
    ] {
        let name = format!("status-{}", kind.to_lowercase());
        if let Err(err) = kinds.create(&at_max(kind, run, &name)).await {
            problems.push(format!("{kind} at its maxima refused: {err}"));
        }
    }
    for case in status_cases() {
        let name = format!("status-{}", case.kind.to_lowercase());
        let mut status = status_at_max(case.kind);
        set(&mut status, &case.pointer, case.value.clone());
        problems.extend(problem(
            &case,
            kinds.patch_status(case.kind, &name, &status).await,
        ));
    }
    problems
}

/// Walks a generated schema and reports every node that is not bounded.
fn unbounded(path: &str, schema: &Value, in_spec: bool, out: &mut Vec<String>) {
    // Kubernetes' own types, as Kubernetes defines them (and typed, so they
    // always decode).
    // The container resources of the proxy and of each role of the split
    // topology.
    if (path.contains(".workload.") && path.ends_with(".resources"))
        || path.ends_with(".allowedNamespaces.selector")
        || path.ends_with(".publicModelNamespaces.selector")
    {
        return;
    }
    let has = |field: &str| schema.get(field).is_some();
    match schema["type"].as_str() {
        Some("integer") => {
            let max_of_format = match schema["format"].as_str() {
                Some("int32") => i32::MAX as f64,
                _ => i64::MAX as f64,
            };
            match (schema["minimum"].as_f64(), schema["maximum"].as_f64()) {
                (Some(min), Some(max)) => {
                    // Exactly what it says (a float64 in the API server), and
                    // what the Rust type holds.
                    if max > ((1u64 << 53) - 1) as f64 || max > max_of_format || min < 0.0 {
                        out.push(format!("{path}: bounds [{min}, {max}]"));
                    }
                }
                _ => out.push(format!("{path}: integer without minimum and maximum")),
            }
        }
        Some("string") if in_spec => {
            let pattern = schema["pattern"].as_str().unwrap_or("");
            let bounded_pattern = pattern.starts_with('^')
                && pattern.ends_with('$')
                && !pattern.contains('*')
                && !pattern.contains('+');
            if !has("maxLength") && !has("enum") && !bounded_pattern {
                out.push(format!("{path}: string without maxLength"));
            }
        }
        Some("array") => {
            if in_spec && !has("maxItems") {
                out.push(format!("{path}: list without maxItems"));
            }
            unbounded(&format!("{path}[]"), &schema["items"], in_spec, out);
        }
        Some("object") => {
            if in_spec
                && schema["x-kubernetes-preserve-unknown-fields"] == json!(true)
                && !has("maxProperties")
            {
                out.push(format!("{path}: free-form object without maxProperties"));
            }
            if let Some(properties) = schema["properties"].as_object() {
                for (name, property) in properties {
                    let in_spec = in_spec || (path.is_empty() && name == "spec");
                    let child = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    unbounded(&child, property, in_spec, out);
                }
            }
            if let Some(additional) = schema["additionalProperties"].as_object() {
                unbounded(
                    &format!("{path}.*"),
                    &Value::Object(additional.clone()),
                    in_spec,
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Every integer of the CRDs (spec and status) has a minimum and a maximum
/// its Rust type holds; every string, list and free-form object of a spec
/// is bounded. Status strings and lists are the provider's own writing (and
/// LiteLLM's), not bounded on purpose: a bound there could only make the
/// provider's status writes fail.
#[test]
fn every_integer_string_list_and_free_form_field_of_the_crds_is_bounded() {
    let mut out = Vec::new();
    for crd in managed_crds() {
        let schema = serde_json::to_value(
            &crd.spec.versions[0]
                .schema
                .as_ref()
                .unwrap()
                .open_api_v3_schema,
        )
        .unwrap();
        let mut found = Vec::new();
        unbounded("", &schema, false, &mut found);
        out.extend(
            found
                .into_iter()
                .map(|f| format!("{}: {f}", crd.spec.names.kind)),
        );
    }
    assert!(out.is_empty(), "unbounded fields:\n{}", out.join("\n"));
}

fn ready_and_synced<K: ManagedKind>(object: &K) -> bool {
    is(object, "Ready", "True") && is(object, "Synced", "True")
}

async fn delete<K: ManagedKind>(api: &Api<K>, name: &str) {
    api.delete(name, &DeleteParams::default()).await.unwrap();
    wait_gone(api, name).await;
}

/// With the controllers running: a team and a budget at their extremes
/// reconcile, their values reach LiteLLM unchanged and stay there (no
/// drift at the next polls), and a normal team of another namespace
/// becomes Ready beside them; a watch over both namespaces decodes all.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn objects_at_the_extremes_reconcile_and_leave_the_kinds_working_for_everyone() {
    let Some(world) = world("bounds-e2e").await else {
        return;
    };
    let tenant = world.tenant("bounds-e2e-tenant").await;
    let run = k8s::unique_suffix();
    let label = json!({RUN_LABEL: run});

    let alias = format!("{run}-{}", text(MAX_ALIAS_LENGTH - run.len() as u32 - 1));
    let mut extreme: LiteLLMTeam = manifest(
        "LiteLLMTeam",
        "extreme",
        json!({}),
        json!({"forProvider": {
            "teamAlias": alias,
            "models": texts(MAX_MODELS, MAX_MODEL_REF_LENGTH),
            "maxBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "metadata": fields(MAX_METADATA_PROPERTIES),
        }}),
    );
    extreme.metadata.labels = Some(serde_json::from_value(label.clone()).unwrap());
    let teams = world.create(&extreme).await;
    let mut extreme_budget: LiteLLMBudget = manifest(
        "LiteLLMBudget",
        "extreme",
        json!({}),
        json!({"forProvider": {
            "maxBudget": MAX_MONEY,
            "softBudget": MAX_MONEY,
            "budgetDuration": MAX_DAYS,
            "tpmLimit": MAX_RATE_LIMIT,
            "rpmLimit": MAX_RATE_LIMIT,
            "maxParallelRequests": MAX_PARALLEL_REQUESTS,
        }}),
    );
    extreme_budget.metadata.labels = Some(serde_json::from_value(label.clone()).unwrap());
    let budgets = world.create(&extreme_budget).await;

    let mut normal: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "normal",
        json!({}),
        json!({"forProvider": {
            "teamAlias": format!("normal-{run}"),
            "maxBudget": "10",
            "models": ["gpt-4o"],
        }}),
    );
    normal.metadata.labels = Some(serde_json::from_value(label).unwrap());
    let tenant_teams = tenant.api::<LiteLLMTeam>(&world);
    tenant_teams
        .create(&PostParams::default(), &normal)
        .await
        .unwrap();

    wait_for(
        &tenant_teams,
        "normal",
        "the normal team Ready",
        ready_and_synced,
    )
    .await;
    let team = wait_for(
        &teams,
        "extreme",
        "the extreme team Ready",
        ready_and_synced,
    )
    .await;
    let budget = wait_for(
        &budgets,
        "extreme",
        "the extreme budget Ready",
        ready_and_synced,
    )
    .await;

    // Both namespaces' teams, decoded by one watch over all namespaces.
    let selector = format!("{RUN_LABEL}={run}");
    let watched = watch_everywhere(Api::<LiteLLMTeam>::all(world.kube.clone()), &selector).await;
    let mut names: Vec<_> = watched.iter().map(|t| t.name_any()).collect();
    names.sort();
    assert_eq!(names, ["extreme", "normal"]);

    let id = team.annotations()[EXTERNAL_NAME].clone();
    let live = world
        .team_info(&id)
        .await
        .expect("the extreme team in LiteLLM");
    assert_eq!(live.tpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(live.rpm_limit, Some(MAX_RATE_LIMIT));
    assert_eq!(live.max_budget, Some(999_999_999.999_999));
    assert_eq!(live.team_alias.as_deref(), Some(alias.as_str()));
    assert_eq!(live.models.len(), MAX_MODELS as usize);
    let metadata = live.metadata.clone().unwrap_or_default();
    assert!(metadata.contains_key(MARKER_KEY));
    let user: BTreeMap<_, _> = metadata
        .into_iter()
        .filter(|(k, _)| k != MARKER_KEY)
        .collect();
    assert_eq!(
        Value::Object(user.into_iter().collect()),
        fields(MAX_METADATA_PROPERTIES)
    );
    let budget_id = budget.annotations()[EXTERNAL_NAME].clone();
    let live_budget = world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .expect("the extreme budget in LiteLLM");
    assert_eq!(
        (
            live_budget.tpm_limit,
            live_budget.rpm_limit,
            live_budget.max_parallel_requests,
            live_budget.soft_budget
        ),
        (
            Some(MAX_RATE_LIMIT),
            Some(MAX_RATE_LIMIT),
            Some(MAX_PARALLEL_REQUESTS),
            Some(999_999_999.999_999)
        )
    );

    // Several polls later nothing was written again: the extremes are no
    // drift.
    world.reconciled_again("team", 3).await;
    let again = world.team_info(&id).await.expect("still there");
    assert_eq!(
        again.updated_at, live.updated_at,
        "the extreme team was rewritten"
    );
    let again = world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        again.updated_at, live_budget.updated_at,
        "the budget was rewritten"
    );
    assert!(ready_and_synced(&teams.get("extreme").await.unwrap()));
    assert!(tenant.controllers_running());

    delete(&tenant_teams, "normal").await;
    delete(&teams, "extreme").await;
    delete(&budgets, "extreme").await;
    assert!(world.team_info(&id).await.is_none());
}

/// An endless answer from the proxy is cut at the client's limit, reported
/// on the resource naming the operation and the limit (never the body),
/// and the team becomes Ready once the proxy answers normally again.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_endless_answer_from_the_proxy_is_reported_and_the_team_recovers() {
    let Some((url, _)) = support::harness::litellm() else {
        return;
    };
    let proxy = FaultProxy::start(&url).await;
    let setup = Setup {
        endpoint: Some(proxy.url().to_owned()),
        ..Setup::default()
    };
    let Some(world) = world_with("bounds-endless", setup).await else {
        return;
    };
    proxy.arm("GET", "/team/info", Fault::EndlessBody, 2);
    let alias = format!("Endless-{}", k8s::unique_suffix());
    let teams = world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"teamAlias": alias, "maxBudget": "10"}}),
        ))
        .await;
    // The failure is reported in status until the retry succeeds, which
    // can be sooner than a poll of the test sees it; the event stays.
    let message = support::provider::eventually("the over-long answer reported", || async {
        support::provider::events(&world.kube, &world.namespace)
            .await
            .into_iter()
            // The read that failed is the observation: crossplane-runtime's reason.
            .filter(|e| e.reason.as_deref() == Some("CannotObserveExternalResource"))
            .filter_map(|e| e.note)
            .find(|note| note.contains("GET /team/info"))
    })
    .await;
    assert!(
        message.contains("GET /team/info")
            && message.contains(&format!("{MAX_RESPONSE_BODY} bytes")),
        "{message}"
    );
    assert!(
        !message.contains("xxxx") && !message.contains("padding"),
        "{message}"
    );

    let ready = wait_for(&teams, "web", "the team Ready", ready_and_synced).await;
    assert_eq!(proxy.injected("GET", "/team/info"), 2);
    let id = ready.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(world.team_ids_with_alias(&alias).await, [id.as_str()]);
    delete(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
}

/// `{"a":{"a":...{"a":"deep"}}}`, `depth` maps deep.
fn nested(depth: usize) -> Value {
    let mut value = json!("deep");
    for _ in 0..depth {
        value = json!({ "a": value });
    }
    value
}

/// Creates `object` with a plain POST: kube-rs could not read the answer.
async fn post_raw(client: &kube::Client, plural: &str, namespace: &str, object: &Value) {
    let request = kube::core::Request::new(format!(
        "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/{namespace}/{plural}"
    ))
    .create(&PostParams::default(), serde_json::to_vec(object).unwrap())
    .unwrap();
    client
        .request_text(request)
        .await
        .expect("the API server accepts it");
}

/// The status of an object whatever its depth (everything else skipped).
async fn raw_status(client: &kube::Client, plural: &str, namespace: &str, name: &str) -> Value {
    #[derive(serde::Deserialize)]
    struct StatusOnly {
        #[serde(default)]
        status: Value,
    }
    let request = kube::core::Request::new(format!(
        "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/{namespace}/{plural}"
    ))
    .get(name, &Default::default())
    .unwrap();
    let text = client
        .request_text(request)
        .await
        .expect("readable as text");
    serde_json::from_str::<StatusOnly>(&text).unwrap().status
}

/// Free-form maps cannot be bounded in depth by a schema or CEL, and the API
/// server stores objects nested far past the 128 levels serde_json (and so
/// kube-rs) reads: such an object is reported on itself, and its kind keeps
/// working for every other object, instances included.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_object_nested_past_what_serde_reads_is_reported_and_stops_no_other() {
    let setup = Setup {
        instance_controller: true,
        ..Setup::default()
    };
    let Some(world) = world_with("bounds-deep", setup).await else {
        return;
    };
    let deep_team = json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMTeam",
        "metadata": {"name": "deep"},
        "spec": {
            "instanceRef": {"name": support::provider::INSTANCE},
            "forProvider": {"teamAlias": "deep", "metadata": {"x": nested(200)}},
        },
    });
    post_raw(&world.kube, "litellmteams", &world.namespace, &deep_team).await;
    let deep_instance = json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "deep-proxy"},
        "spec": {
            "workload": {"managed": false, "endpoint": world.url},
            "masterKey": {"secretRef": {"name": "litellm-master-key", "key": "masterKey"}},
            "litellmSettings": {"x": nested(200)},
        },
    });
    post_raw(
        &world.kube,
        "litellminstances",
        &world.namespace,
        &deep_instance,
    )
    .await;
    // kube-rs alone cannot list the kind any more.
    assert!(world
        .api::<LiteLLMTeam>()
        .list(&ListParams::default())
        .await
        .is_err());

    // Both are reported on themselves...
    let status = support::provider::eventually("the deep team to be reported", || async {
        let status = raw_status(&world.kube, "litellmteams", &world.namespace, "deep").await;
        let synced = status["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Synced")?
            .clone();
        (synced["status"] == "False").then_some(synced)
    })
    .await;
    let message = status["message"].as_str().unwrap();
    assert!(message.contains("cannot read this object"), "{message}");
    assert!(message.contains("recursion limit"), "{message}");
    support::provider::eventually("the deep instance to be reported", || async {
        let status = raw_status(
            &world.kube,
            "litellminstances",
            &world.namespace,
            "deep-proxy",
        )
        .await;
        let ready = status["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Ready")?
            .clone();
        (ready["reason"] == "Unreadable" && status["ready"] == false).then_some(())
    })
    .await;

    // ...and every other object of the kinds is reconciled.
    let teams = world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"teamAlias": "web"}}),
        ))
        .await;
    let web = wait_for(&teams, "web", "web Ready", ready_and_synced).await;
    let late: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "late"},
        "spec": {
            "workload": {"managed": false, "endpoint": world.url},
            "masterKey": {"secretRef": {"name": "litellm-master-key", "key": "masterKey"}},
        },
    }))
    .unwrap();
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    instances
        .create(&PostParams::default(), &late)
        .await
        .unwrap();
    support::provider::eventually("the late instance to be probed", || async {
        let late = instances.get("late").await.unwrap();
        late.status.is_some_and(|s| s.ready).then_some(())
    })
    .await;

    // Made readable again, the deep team is managed like any other.
    let shallow = json!({"spec": {"forProvider": {"metadata": {"x": null}}}});
    let tolerant: Api<litellm_crossplane::provider::watch::tolerant::Tolerant<LiteLLMTeam>> =
        Api::namespaced(world.kube.clone(), &world.namespace);
    tolerant
        .patch("deep", &PatchParams::default(), &Patch::Merge(&shallow))
        .await
        .unwrap();
    let deep = wait_for(&teams, "deep", "deep Ready", ready_and_synced).await;
    let id = deep.annotations()[EXTERNAL_NAME].clone();
    assert!(world.team_info(&id).await.is_some());
    let web_id = web.annotations()[EXTERNAL_NAME].clone();
    delete(&teams, "deep").await;
    delete(&teams, "web").await;
    assert!(world.team_info(&id).await.is_none());
    assert!(world.team_info(&web_id).await.is_none());
}

/// A team made elsewhere (the UI, another tool) may hold values beyond what
/// the CRD admits; importing it with late initialization leaves those out
/// instead of failing every poll on the API server's refusal.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn live_values_beyond_the_crds_bounds_are_not_late_initialized() {
    let Some(world) = world("bounds-late").await else {
        return;
    };
    let id = format!("huge-{}", k8s::unique_suffix());
    world
        .litellm
        .team_new(&litellm_crossplane::litellm::TeamRequest {
            team_id: id.clone(),
            team_alias: Some("Made elsewhere".into()),
            limits: LimitsRequest {
                max_budget: Some(5e12),
                tpm_limit: Some(i64::from(MAX_RATE_LIMIT) * 10),
                ..LimitsRequest::default()
            },
            ..Default::default()
        })
        .await
        .expect("team created directly");
    let import = manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "huge",
        json!({EXTERNAL_NAME: id}),
        json!({"managementPolicies": ["Observe", "LateInitialize"], "forProvider": {}}),
    );
    let teams = world.create(&import).await;
    let team = wait_for(
        &teams,
        "huge",
        "the import Ready and Synced",
        ready_and_synced,
    )
    .await;
    assert_eq!(team.spec.for_provider.limits.max_budget, None);
    assert_eq!(team.spec.for_provider.limits.tpm_limit, None);
    world.reconciled_again("team", 2).await;
    let team = teams.get("huge").await.unwrap();
    assert!(ready_and_synced(&team), "{:?}", team.status);
    delete(&teams, "huge").await;
    world.litellm.team_delete(&id).await.unwrap();
}
