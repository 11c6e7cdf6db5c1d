//! The `LiteLLMInstance` controller run against the real API server harness
//! for one test: a fresh namespace, the controller scoped to it, and the
//! reads and waits the instance tests share. The harness runs no
//! controllers: pods run on the test kubelet (`kubelet.rs`), and tests play
//! the garbage collector themselves.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Resource};
use litellm_crossplane::api::common::{find_condition, Condition};
use litellm_crossplane::api::instance::LiteLLMInstance;
use litellm_crossplane::provider::instance::InstanceOptions;
use serde_json::{json, Value};

use super::authz::{assert_no_denials, AuthzProxy};
use super::k8s;

/// A namespace with the controller running for it; the controller stops
/// when this is dropped (or on [`Running::stop`]).
pub struct Running {
    /// Unrestricted: the test's own reads and writes.
    pub client: Client,
    pub namespace: String,
    /// What the controller talks to Kubernetes through: the permissions
    /// Crossplane gives this package.
    pub authz: AuthzProxy,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The controller's metrics, to wait until it has reconciled again.
    metrics: litellm_crossplane::provider::telemetry::metrics::Metrics,
    registry: Arc<prometheus_client::registry::Registry>,
}

/// Metrics for a [`Running`] controller, registered in a registry of
/// their own.
fn metrics() -> (
    litellm_crossplane::provider::telemetry::metrics::Metrics,
    Arc<prometheus_client::registry::Registry>,
) {
    let metrics = litellm_crossplane::provider::telemetry::metrics::Metrics::default();
    let mut registry = prometheus_client::registry::Registry::default();
    metrics.register(&mut registry);
    (metrics, Arc::new(registry))
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Short intervals so a test sees several reconciliation rounds in seconds.
pub fn options(namespace: &str) -> InstanceOptions {
    InstanceOptions {
        namespace: Some(namespace.to_string()),
        ready_interval: Duration::from_secs(1),
        not_ready_interval: Duration::from_secs(1),
        probe_timeout: Duration::from_secs(2),
        ..InstanceOptions::default()
    }
}

/// The API server with the CRDs and a fresh namespace, or `None` (skipped).
pub async fn namespace(prefix: &str) -> Option<(Client, String)> {
    let client = k8s::client().await?;
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, prefix).await;
    Some((client, namespace))
}

/// A fresh namespace with the controller running for it, or `None`
/// (skipped).
pub async fn start(prefix: &str) -> Option<Running> {
    let (client, namespace) = namespace(prefix).await?;
    let authz = AuthzProxy::for_provider(client.clone()).await;
    Some(started(client, namespace, authz))
}

/// As [`start`], the controller granted only `rules` (its denials kept to
/// its own proxy: see [`AuthzProxy::start`]).
pub async fn start_with_rules(prefix: &str, rules: Vec<super::authz::Rule>) -> Option<Running> {
    let (client, namespace) = namespace(prefix).await?;
    let authz = AuthzProxy::start(client.clone(), rules, true).await;
    Some(started(client, namespace, authz))
}

fn started(client: Client, namespace: String, authz: AuthzProxy) -> Running {
    let (metrics, registry) = metrics();
    let mut run = Running {
        client,
        namespace,
        authz,
        task: None,
        metrics,
        registry,
    };
    run.resume();
    run
}

/// A fresh namespace without a controller yet ([`Running::resume`] starts
/// it), or `None` (skipped).
pub async fn prepare(prefix: &str) -> Option<Running> {
    let (client, namespace) = namespace(prefix).await?;
    let authz = AuthzProxy::for_provider(client.clone()).await;
    let (metrics, registry) = metrics();
    Some(Running {
        client,
        namespace,
        authz,
        task: None,
        metrics,
        registry,
    })
}

impl Running {
    /// Starts the controller (again).
    pub fn resume(&mut self) {
        if self.task.is_none() {
            self.task = Some(tokio::spawn(
                litellm_crossplane::provider::instance::controller_with_metrics(
                    self.authz.client(),
                    options(&self.namespace),
                    self.metrics.clone(),
                ),
            ));
        }
    }

    /// Stops the controller, letting a request already on the wire land.
    pub async fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits (up to 30 s) until the controller has finished `times` more
    /// reconciliations from now: what a test waits for before it shows
    /// that something did not happen.
    pub async fn reconciled_again(&self, times: u64) {
        let within = Duration::from_secs(30);
        super::provider::more_reconciliations("instance", times, within, || {
            super::provider::instance_reconciles(&self.registry)
        })
        .await;
    }

    pub fn instances(&self) -> Api<LiteLLMInstance> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    pub async fn create(&self, name: &str, spec: Value) -> LiteLLMInstance {
        let instance: LiteLLMInstance = serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": name},
            "spec": spec,
        }))
        .unwrap();
        self.instances()
            .create(&PostParams::default(), &instance)
            .await
            .expect("instance created")
    }

    /// Waits until `done` holds for the instance, up to 30 s.
    pub async fn wait_for(
        &self,
        name: &str,
        done: impl Fn(&LiteLLMInstance) -> bool,
    ) -> LiteLLMInstance {
        let mut last = None;
        for _ in 0..300 {
            assert_no_denials();
            let instance = self.instances().get(name).await.expect("instance readable");
            if done(&instance) {
                return instance;
            }
            last = Some(instance);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "condition not reached; last seen: {:#?}",
            last.and_then(|i| i.status)
        );
    }

    /// Waits until the controller has reported on the current generation.
    pub async fn observed(&self, name: &str) -> LiteLLMInstance {
        self.wait_for(name, |i| {
            let status = i.status.as_ref();
            status.is_some_and(|s| {
                s.observed_generation.is_some() && s.observed_generation == i.metadata.generation
            })
        })
        .await
    }

    pub async fn names<K>(&self) -> Vec<String>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        Api::<K>::namespaced(self.client.clone(), &self.namespace)
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .iter()
            .map(|o| o.meta().name.clone().unwrap_or_default())
            .collect()
    }

    /// No workload object of any kind exists in the namespace but `allowed`.
    pub async fn assert_only_workload_objects(&self, allowed: &[&str]) {
        let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
        assert_eq!(self.names::<Deployment>().await, allowed, "Deployments");
        assert_eq!(self.names::<Service>().await, allowed, "Services");
        assert_eq!(self.names::<ConfigMap>().await, allowed, "ConfigMaps");
        assert!(
            self.names::<Secret>().await.is_empty(),
            "no Secret may be created"
        );
        assert!(
            self.names::<Job>().await.is_empty(),
            "no migration Job may be created"
        );
    }

    /// Every object of kind `K` in the namespace, as stored.
    pub async fn snapshot<K>(&self) -> Value
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let list = self
            .api::<K>()
            .list(&ListParams::default())
            .await
            .expect("list");
        serde_json::to_value(list.items).unwrap()
    }

    /// Every workload kind, as stored.
    pub async fn snapshot_all(&self) -> Vec<Value> {
        vec![
            self.snapshot::<Deployment>().await,
            self.snapshot::<Service>().await,
            self.snapshot::<ConfigMap>().await,
            self.snapshot::<ServiceAccount>().await,
            self.snapshot::<Secret>().await,
            self.snapshot::<Job>().await,
        ]
    }

    pub async fn create_object<K>(&self, object: Value) -> K
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + serde::Serialize
            + std::fmt::Debug,
    {
        let object: K = serde_json::from_value(object).unwrap();
        self.api::<K>()
            .create(&PostParams::default(), &object)
            .await
            .expect("object created")
    }

    /// Waits until the named object of kind `K` exists, up to 30 s.
    pub async fn wait_for_object<K>(&self, name: &str) -> K
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        for _ in 0..300 {
            if let Some(object) = self.api::<K>().get_opt(name).await.unwrap() {
                return object;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{name} was not created");
    }
}

pub fn condition<'a>(instance: &'a LiteLLMInstance, type_: &str) -> Option<&'a Condition> {
    find_condition(&instance.status.as_ref()?.conditions, type_)
}

pub fn reason_of(instance: &LiteLLMInstance, type_: &str) -> (String, String) {
    let condition = condition(instance, type_)
        .unwrap_or_else(|| panic!("no {type_} in {:#?}", instance.status));
    (condition.status.clone(), condition.reason.clone())
}

pub fn secret_string(secret: &Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

/// A database and role of their own on the LiteLLM harness's PostgreSQL
/// (which trusts loopback connections, so the admin is `postgres`), for a
/// provisioned proxy: an empty database the migration Job must fill. Both
/// are dropped on drop.
pub struct TestDatabase {
    pub host: String,
    pub port: u16,
    pub name: String,
    pub user: String,
    pub password: String,
    admin: String,
}

impl TestDatabase {
    /// A fresh role with `password` and an empty database it owns, or
    /// `None` (skipped) without the harness.
    pub fn create(prefix: &str, password: &str) -> Option<TestDatabase> {
        let Ok(url) = std::env::var("LITELLM_DATABASE_URL") else {
            assert!(
                !super::k8s::harness_required(),
                "LITELLM_DATABASE_URL is not set: start tests/harness/litellm/up.sh"
            );
            eprintln!("skipped: LITELLM_DATABASE_URL not set");
            return None;
        };
        let parsed = url::Url::parse(&url).expect("LITELLM_DATABASE_URL is a URL");
        let host = parsed.host_str().unwrap_or("127.0.0.1").to_string();
        let port = parsed.port().unwrap_or(5432);
        let suffix = super::k8s::unique_suffix();
        let database = TestDatabase {
            admin: format!("postgresql://postgres@{host}:{port}/postgres"),
            host,
            port,
            name: format!("{prefix}_{suffix}"),
            user: format!("{prefix}_user_{suffix}"),
            password: password.to_string(),
        };
        database.psql(&format!(
            "CREATE ROLE \"{}\" LOGIN PASSWORD '{}'",
            database.user,
            password.replace('\'', "''")
        ));
        database.psql(&format!(
            "CREATE DATABASE \"{}\" OWNER \"{}\"",
            database.name, database.user
        ));
        Some(database)
    }

    /// Runs `sql` as the admin; panics naming the statement's first word on
    /// failure (never the statement, which may hold the password).
    pub fn psql(&self, sql: &str) -> String {
        self.psql_on("postgres", sql)
    }

    /// Runs `sql` as the admin in database `database`.
    pub fn psql_on(&self, database: &str, sql: &str) -> String {
        let url = format!("{}/{database}", self.admin.trim_end_matches("/postgres"));
        let output = std::process::Command::new("psql")
            .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", &url])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(sql.as_bytes())?;
                child.wait_with_output()
            })
            .expect("psql runs");
        assert!(
            output.status.success(),
            "psql {} failed: {}",
            sql.split_whitespace().next().unwrap_or_default(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }

    /// Runs `sql` in the test's database.
    pub fn query(&self, sql: &str) -> String {
        self.psql_on(&self.name.clone(), sql)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = std::process::Command::new("psql")
            .args([
                "-X",
                "-q",
                &self.admin,
                "-c",
                &format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name),
                "-c",
                &format!("DROP ROLE IF EXISTS \"{}\"", self.user),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}
