//! One test's world for the entity controllers end to end: a namespace of
//! the real Kubernetes API server with the master-key Secret and an attached
//! (`managed: false`) LiteLLMInstance, and the controllers running
//! in-process for that namespace. The instance's status is written here, as
//! the LiteLLMInstance controller would; that controller runs as well only
//! when [`Setup::instance_controller`] asks for it (or from
//! [`World::start_instance_controller`] on).

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use litellm_crossplane::api::common::{find_condition, Condition};
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam};
use litellm_crossplane::litellm::{self};
use litellm_crossplane::provider::instance::{self, InstanceOptions};
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::reconciler::Context;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use serde_json::json;

use super::authz::{assert_no_denials, AuthzProxy};
use super::{harness, k8s};

pub const CLUSTER: &str = "e2e-cluster";
pub const INSTANCE: &str = "proxy";
/// Every resource polls this often, so drift is corrected (and failures
/// retried: the backoff is capped at the poll interval) within seconds.
pub const POLL: &str = "1s";
/// Generous: CI runs the suites in parallel on 2 cores beside the proxy.
pub const WAIT: Duration = Duration::from_secs(60);

/// How a world differs from the default one.
#[derive(Default)]
pub struct Setup {
    /// Where the instance points instead of the real proxy (a fault proxy
    /// in front of it).
    pub endpoint: Option<String>,
    /// The provider's LiteLLM request timeout, shortened to provoke
    /// timeouts quickly.
    pub litellm_timeout: Option<Duration>,
    /// Run the LiteLLMInstance controller too (probing every second), so
    /// the instance's status follows its spec.
    pub instance_controller: bool,
    /// The provider's bound on requests in flight to one proxy.
    pub max_in_flight: Option<usize>,
    /// The provider's `--sync`: how often each resource reconciles in
    /// full at least.
    pub sync_period: Option<Duration>,
    /// The instance is a provisioned one (`workload.managed` unset). Its
    /// status still says ready at `endpoint`, which stands in for the
    /// Service the provider would provision (unreachable from the test: the
    /// API server runs no pods).
    pub provisioned: bool,
    /// The provider's permissions instead of Crossplane 1.x's package
    /// permissions ([`AuthzProxy::for_provider`]), kept to the world's proxy
    /// (its denials, [`AuthzProxy::denied`], fail no other test).
    pub rules: Option<Vec<super::authz::Rule>>,
}

/// A namespace with a ready instance, an admin client of the real proxy for
/// assertions, and the controllers running for that namespace until drop.
pub struct World {
    pub kube: kube::Client,
    pub namespace: String,
    /// The instance's endpoint: what the provider talks to.
    pub endpoint: String,
    /// The real proxy.
    pub url: String,
    pub master_key: String,
    /// Talks to the real proxy directly, never through a fault proxy.
    pub litellm: litellm::Client,
    /// What the provider's controllers talk to Kubernetes through: the
    /// permissions Crossplane gives this package, nothing more.
    pub authz: AuthzProxy,
    /// The world's provider (its entity controllers'), which
    /// [`World::tenant_of_the_same_provider`] shares.
    ctx: Arc<Context>,
    controllers: Vec<tokio::task::JoinHandle<()>>,
    /// The metrics of the world's controllers (entities and instance), so
    /// that a test can wait until they have reconciled again.
    registry: prometheus_client::registry::Registry,
    /// How its provider was started, for [`World::restart_provider`].
    tuned: Tuned,
}

impl Drop for World {
    fn drop(&mut self) {
        for controller in &self.controllers {
            controller.abort();
        }
    }
}

/// The provider's context as the tests run it: they poll every second,
/// below the provider's default minimum poll interval.
pub fn context(kube: &kube::Client, metrics: Metrics) -> Context {
    Context::new(kube.clone(), CLUSTER, metrics).with_poll_bounds(
        litellm_crossplane::provider::watch::timing::PollBounds {
            min: Duration::from_millis(500),
            max: Duration::from_secs(3600),
        },
    )
}

/// What of a [`Setup`] the world's provider is started with.
struct Tuned {
    litellm_timeout: Option<Duration>,
    max_in_flight: Option<usize>,
    sync_period: Option<Duration>,
}

impl Tuned {
    /// A provider's context as tuned, on `client`, and its metrics.
    fn provider(
        &self,
        client: &kube::Client,
    ) -> (Arc<Context>, prometheus_client::registry::Registry) {
        let metrics = Metrics::default();
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        let mut ctx = context(client, metrics);
        if let Some(timeout) = self.litellm_timeout {
            ctx = ctx.with_litellm_timeout(timeout);
        }
        if let Some(max) = self.max_in_flight {
            ctx = ctx.with_max_in_flight(max);
        }
        if let Some(period) = self.sync_period {
            ctx = ctx.with_sync_period(period);
        }
        (Arc::new(ctx), registry)
    }
}

/// The default world: the instance points at the real proxy.
pub async fn world(prefix: &str) -> Option<World> {
    world_with(prefix, Setup::default()).await
}

/// A world, or `None` (test skipped) when a harness is not running.
pub async fn world_with(prefix: &str, setup: Setup) -> Option<World> {
    // `TEST_LOG=debug` shows the provider's logs for a failing test.
    if let Ok(filter) = std::env::var("TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
    let kube = k8s::client().await?;
    let Some((url, master_key)) = harness::litellm() else {
        assert!(!k8s::harness_required(), "LITELLM_URL is not set");
        return None;
    };
    k8s::install_crds(&kube).await;
    let namespace = k8s::namespace(&kube, prefix).await;
    let endpoint = setup.endpoint.unwrap_or_else(|| url.clone());
    if setup.provisioned {
        create_instance_with(&kube, &namespace, json!({}), &endpoint, &master_key, true).await;
    } else {
        create_instance(&kube, &namespace, &endpoint, &master_key, true).await;
    }
    let litellm = harness::admin_client(&url, &master_key, Duration::from_secs(10));
    let authz = match setup.rules {
        Some(rules) => AuthzProxy::start(kube.clone(), rules, true).await,
        None => AuthzProxy::for_provider(kube.clone()).await,
    };
    let tuned = Tuned {
        litellm_timeout: setup.litellm_timeout,
        max_in_flight: setup.max_in_flight,
        sync_period: setup.sync_period,
    };
    let (ctx, registry) = tuned.provider(&authz.client());
    let controllers = vec![tokio::spawn(controllers::run(
        ctx.clone(),
        Some(namespace.clone()),
    ))];
    let mut world = World {
        tuned,
        kube,
        namespace,
        endpoint,
        url,
        master_key,
        litellm,
        authz,
        ctx,
        controllers,
        registry,
    };
    if setup.instance_controller {
        world.start_instance_controller();
    }
    Some(world)
}

/// A tenant: a namespace of its own that the world's instance admits, with
/// the entity controllers running for it until drop.
pub struct Tenant {
    pub namespace: String,
    controllers: tokio::task::JoinHandle<()>,
    /// The metrics of its controllers, where they have their own.
    registry: Option<Arc<prometheus_client::registry::Registry>>,
}

impl Drop for Tenant {
    fn drop(&mut self) {
        self.controllers.abort();
    }
}

impl Tenant {
    pub fn api<K: ManagedKind>(&self, world: &World) -> Api<K> {
        Api::namespaced(world.kube.clone(), &self.namespace)
    }

    /// Whether the provider still runs for this tenant (no panic ended it).
    pub fn controllers_running(&self) -> bool {
        !self.controllers.is_finished()
    }

    /// [`World::reconciled_again`] for the tenant's own controllers.
    pub async fn reconciled_again(&self, kind: &str, times: u64) {
        let registry = self
            .registry
            .as_ref()
            .expect("a tenant with controllers of its own");
        more_reconciliations(kind, times, WAIT, || reconciles(registry, kind)).await;
    }
}

impl World {
    /// A new tenant namespace admitted by the instance (added to
    /// `spec.allowedNamespaces.names`), with its own controllers.
    pub async fn tenant(&self, prefix: &str) -> Tenant {
        let metrics = Metrics::default();
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        let ctx = Arc::new(context(&self.provider_client(), metrics));
        let mut tenant = self.tenant_served_by(prefix, ctx).await;
        tenant.registry = Some(Arc::new(registry));
        tenant
    }

    /// A tenant like [`World::tenant`] whose controllers count in a
    /// registry the test can read (see [`reconciles`]).
    pub async fn tenant_counted(
        &self,
        prefix: &str,
    ) -> (Tenant, prometheus_client::registry::Registry) {
        let metrics = Metrics::default();
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        let ctx = Arc::new(context(&self.provider_client(), metrics));
        (self.tenant_served_by(prefix, ctx).await, registry)
    }

    /// A tenant whose controllers share the world's provider context (its
    /// client caches, expectations and established ownership), as one
    /// provider serves every namespace in a cluster.
    pub async fn tenant_of_the_same_provider(&self, prefix: &str) -> Tenant {
        self.tenant_served_by(prefix, self.ctx.clone()).await
    }

    async fn tenant_served_by(&self, prefix: &str, ctx: Arc<Context>) -> Tenant {
        let namespace = k8s::namespace(&self.kube, prefix).await;
        let instances: Api<LiteLLMInstance> = Api::namespaced(self.kube.clone(), &self.namespace);
        let current = instances.get(INSTANCE).await.expect("instance");
        let mut names = current
            .spec
            .allowed_namespaces
            .and_then(|a| a.names)
            .unwrap_or_default();
        names.push(namespace.clone());
        let admit = json!({"spec": {"allowedNamespaces": {"names": names}}});
        instances
            .patch(INSTANCE, &PatchParams::default(), &Patch::Merge(&admit))
            .await
            .expect("instance admits the tenant");
        let controllers = tokio::spawn(controllers::run(ctx, Some(namespace.clone())));
        Tenant {
            namespace,
            controllers,
            registry: None,
        }
    }

    /// Creates, in the tenant's namespace, the object `tenant_manifest`
    /// makes of `kind`, `name` and `spec` (no annotations).
    pub async fn create_for_tenant<K: ManagedKind>(
        &self,
        tenant: &Tenant,
        kind: &str,
        name: &str,
        spec: serde_json::Value,
    ) {
        let object: K = self.tenant_manifest(kind, name, json!({}), spec);
        tenant
            .api::<K>(self)
            .create(&PostParams::default(), &object)
            .await
            .expect("the tenant's object is created");
    }

    /// A manifest for a tenant: like [`manifest`], pointing at the world's
    /// instance in the world's namespace.
    pub fn tenant_manifest<K: ManagedKind>(
        &self,
        kind: &str,
        name: &str,
        annotations: serde_json::Value,
        spec: serde_json::Value,
    ) -> K {
        let mut object: K = manifest(kind, name, annotations, spec);
        let mut value = serde_json::to_value(&object).expect("manifest serializes");
        value["spec"]["instanceRef"]["namespace"] = json!(self.namespace);
        object = serde_json::from_value(value).expect("valid manifest");
        object
    }

    /// Runs the LiteLLMInstance controller for the namespace from now on,
    /// probing every second.
    /// Whether the next poll of the resource `name` of kind `K` in the
    /// world's namespace is to begin with a memo of its last one (see
    /// `provider::polls`).
    pub fn has_memo<K: ManagedKind>(&self, name: &str) -> bool {
        self.ctx
            .polls
            .has_memo(K::NOUN, &format!("{}/{name}", self.namespace))
    }

    /// Stops the world's entity controllers and starts a new provider in
    /// their place, as a restarted process (or a new leader) is: nothing of
    /// the old one's memory (clients, poll queue, metrics) carries over.
    /// The world's counters start again from zero.
    pub fn restart_provider(&mut self) {
        for controller in self.controllers.drain(..) {
            controller.abort();
        }
        let (ctx, registry) = self.tuned.provider(&self.authz.client());
        self.controllers.push(tokio::spawn(controllers::run(
            ctx.clone(),
            Some(self.namespace.clone()),
        )));
        self.ctx = ctx;
        self.registry = registry;
    }

    /// The polls of `kind` (a kind's noun) that a new process left to a
    /// sweep of pages, reading nothing of their own, so far.
    pub fn polls_left_to_pages(&self, kind: &str) -> u64 {
        kind_counter(
            &self.registry,
            "provider_litellm_polls_left_to_pages_total",
            kind,
        )
    }

    pub fn start_instance_controller(&mut self) {
        let options = InstanceOptions {
            namespace: Some(self.namespace.clone()),
            ready_interval: Duration::from_secs(1),
            not_ready_interval: Duration::from_secs(1),
            probe_timeout: Duration::from_secs(2),
            ..InstanceOptions::default()
        };
        let controller = instance::controller_with_metrics(
            self.provider_client(),
            options,
            self.ctx.metrics.clone(),
        );
        self.controllers.push(tokio::spawn(controller));
    }

    /// The LiteLLM requests the world's controllers made so far, by
    /// operation (`POST /key/generate`, ...).
    pub fn litellm_requests(&self) -> std::collections::BTreeMap<String, u64> {
        requests_by_operation(&self.registry)
    }

    /// The reconciliations of `kind` (a kind's noun) so far, the polls that
    /// found nothing changed included.
    pub fn reconciles(&self, kind: &str) -> u64 {
        reconciles(&self.registry, kind)
    }

    /// The polls of `kind` (a kind's noun) that a page of its list route
    /// answered so far.
    pub fn page_polls(&self, kind: &str) -> u64 {
        kind_counter(&self.registry, "provider_litellm_page_polls_total", kind)
    }

    /// Waits until the world's controllers of `kind` (a kind's noun, such
    /// as `"team"`, or `"instance"` for the LiteLLMInstance controller)
    /// have finished `times` more reconciliations from now: what a test
    /// waits for before it shows that something did not happen.
    pub async fn reconciled_again(&self, kind: &str, times: u64) {
        let count = || match kind {
            "instance" => instance_reconciles(&self.registry),
            kind => reconciles(&self.registry, kind),
        };
        more_reconciliations(kind, times, WAIT, count).await;
    }

    pub fn api<K: ManagedKind>(&self) -> Api<K> {
        Api::namespaced(self.kube.clone(), &self.namespace)
    }

    /// A client with the provider's permissions (through [`World::authz`]),
    /// for controllers a test starts itself.
    pub fn provider_client(&self) -> kube::Client {
        self.authz.client()
    }

    /// [`World::provider_client`] with its requests counted in `metrics`
    /// (`provider_litellm_kube_requests_total`).
    pub fn counted_provider_client(&self, metrics: &Metrics) -> kube::Client {
        metrics
            .kube_client(self.authz.config())
            .expect("a counted client of the proxy")
    }

    pub async fn create<K: ManagedKind>(&self, object: &K) -> Api<K> {
        let api = self.api::<K>();
        api.create(&PostParams::default(), object)
            .await
            .expect("created");
        api
    }

    /// The team as the real proxy has it.
    pub async fn team_info(&self, id: &str) -> Option<litellm::TeamInfo> {
        self.litellm.team_info(id).await.expect("team info")
    }

    /// Waits until the resource `name` is gone, checks that its team `id`
    /// was left in LiteLLM (`why` says why it must have been), then removes
    /// the team so no test leaves data behind.
    pub async fn assert_team_left_behind(
        &self,
        teams: &Api<LiteLLMTeam>,
        name: &str,
        id: &str,
        why: &str,
    ) {
        wait_gone(teams, name).await;
        assert!(self.team_info(id).await.is_some(), "{why}");
        self.litellm.team_delete(id).await.unwrap();
    }

    /// Ids of the teams whose alias is `alias`, read from the real proxy.
    /// Aliases are not unique in LiteLLM, so this is where a duplicate
    /// created under another id would show.
    pub async fn team_ids_with_alias(&self, alias: &str) -> Vec<String> {
        let reply: serde_json::Value = reqwest::Client::new()
            .get(
                url::Url::parse_with_params(
                    &format!("{}/v2/team/list", self.url),
                    [("team_alias", alias), ("page_size", "100")],
                )
                .expect("team list URL"),
            )
            .bearer_auth(&self.master_key)
            .send()
            .await
            .expect("team list")
            .error_for_status()
            .expect("team list answered")
            .json()
            .await
            .expect("team list body");
        reply["teams"]
            .as_array()
            .expect("a list of teams")
            .iter()
            .filter(|team| team["team_alias"] == alias)
            .map(|team| team["team_id"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// The master-key Secret and an attached (`managed: false`) instance whose
/// status says `ready`.
pub async fn create_instance(
    kube: &kube::Client,
    namespace: &str,
    endpoint: &str,
    master_key: &str,
    ready: bool,
) {
    let workload = json!({"managed": false, "endpoint": endpoint});
    create_instance_with(kube, namespace, workload, endpoint, master_key, ready).await;
}

/// The master-key Secret and an instance with `workload` whose status says
/// `ready` at `endpoint`.
pub async fn create_instance_with(
    kube: &kube::Client,
    namespace: &str,
    workload: serde_json::Value,
    endpoint: &str,
    master_key: &str,
    ready: bool,
) {
    let secrets: Api<KubeSecret> = Api::namespaced(kube.clone(), namespace);
    let secret = serde_json::from_value(json!({
        "metadata": {"name": "litellm-master-key"},
        "stringData": {"masterKey": master_key},
    }))
    .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("master key Secret");
    create_named_instance(kube, namespace, INSTANCE, workload, endpoint, ready).await;
}

/// An instance `name` with `workload` whose status says `ready` at
/// `endpoint`, its master key in the namespace's `litellm-master-key`
/// Secret (which [`create_instance_with`] writes).
pub async fn create_named_instance(
    kube: &kube::Client,
    namespace: &str,
    name: &str,
    workload: serde_json::Value,
    endpoint: &str,
    ready: bool,
) {
    let instances: Api<LiteLLMInstance> = Api::namespaced(kube.clone(), namespace);
    let instance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": name},
        "spec": {
            "workload": workload,
            "masterKey": {"secretRef": {"name": "litellm-master-key", "key": "masterKey"}},
        },
    }))
    .unwrap();
    instances
        .create(&PostParams::default(), &instance)
        .await
        .expect("instance");
    set_instance_ready_named(kube, namespace, name, endpoint, ready).await;
}

/// Writes the Secret `name` of `namespace` with `data` as its string data:
/// creates it, or changes those keys of an existing one.
pub async fn write_secret(
    kube: &kube::Client,
    namespace: &str,
    name: &str,
    data: serde_json::Value,
) {
    let secrets: Api<KubeSecret> = Api::namespaced(kube.clone(), namespace);
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                        "stringData": data});
    let apply = PatchParams::apply("litellm-crossplane-tests").force();
    secrets
        .patch(name, &apply, &Patch::Apply(&secret))
        .await
        .expect("Secret written");
}

/// Reconciles of `kind` (a kind's noun: `team`, `model`, ...) so far, from
/// the provider's metrics in `registry`.
/// Waits, up to `within`, until `count` (of `what`'s reconciliations) has
/// grown by `times` from now.
pub async fn more_reconciliations(
    what: &str,
    times: u64,
    within: Duration,
    count: impl Fn() -> u64,
) {
    let from = count();
    let started = Instant::now();
    while count() < from + times {
        assert_no_denials();
        assert!(
            started.elapsed() < within,
            "timed out waiting for {times} more {what} reconciliations"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The reconciliations the LiteLLMInstance controller counted in `registry`
/// (controller-runtime's `controller_runtime_reconcile_total`, any result).
pub fn instance_reconciles(registry: &prometheus_client::registry::Registry) -> u64 {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
    let series = format!(
        "controller_runtime_reconcile_total{{controller=\"{}\"",
        instance::controller_name()
    );
    text.lines()
        .filter(|l| l.starts_with(&series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

pub fn reconciles(registry: &prometheus_client::registry::Registry, kind: &str) -> u64 {
    kind_counter(registry, "provider_litellm_reconciles_total", kind)
}

/// The counter `name` of `kind` (a kind's noun) in `registry`; 0 before
/// its first count.
fn kind_counter(registry: &prometheus_client::registry::Registry, name: &str, kind: &str) -> u64 {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
    let series = format!("{name}{{kind=\"{kind}\"}}");
    text.lines()
        .find(|l| l.starts_with(&series))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

/// The status of `GET /key/info` at `base` (a proxy's URL) authenticated
/// with the virtual key `key` itself: success when the proxy accepts it.
pub async fn key_accepted_at(base: &str, key: &str) -> reqwest::StatusCode {
    reqwest::Client::new()
        .get(format!("{base}/key/info"))
        .bearer_auth(key)
        .send()
        .await
        .expect("the proxy answers")
        .status()
}

/// The `kind` of every kind the provider serves: the managed kinds and
/// `LiteLLMInstance`.
pub fn every_kind() -> std::collections::BTreeSet<String> {
    litellm_crossplane::api::MANAGED_KINDS
        .iter()
        .map(|k| k.to_string())
        .chain(["LiteLLMInstance".to_string()])
        .collect()
}

/// Merges `spec` into the spec of the test instance of `namespace`.
pub async fn patch_instance_spec(kube: &kube::Client, namespace: &str, spec: serde_json::Value) {
    let instances: Api<LiteLLMInstance> = Api::namespaced(kube.clone(), namespace);
    instances
        .patch(
            INSTANCE,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "spec": spec })),
        )
        .await
        .expect("instance spec");
}

pub async fn set_instance_ready(kube: &kube::Client, namespace: &str, endpoint: &str, ready: bool) {
    set_instance_ready_named(kube, namespace, INSTANCE, endpoint, ready).await;
}

/// [`set_instance_ready`] for the instance `name`.
pub async fn set_instance_ready_named(
    kube: &kube::Client,
    namespace: &str,
    name: &str,
    endpoint: &str,
    ready: bool,
) {
    let instances: Api<LiteLLMInstance> = Api::namespaced(kube.clone(), namespace);
    let status = json!({"status": {"ready": ready, "endpoint": endpoint}});
    instances
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("instance status");
}

/// A managed resource of `kind` on the test instance, polling every
/// [`POLL`].
pub fn manifest<K: ManagedKind>(
    kind: &str,
    name: &str,
    annotations: serde_json::Value,
    spec: serde_json::Value,
) -> K {
    let mut annotations = annotations;
    annotations["crossplane.io/poll-interval"] = json!(POLL);
    let mut spec = spec;
    spec["instanceRef"] = json!({"name": INSTANCE});
    serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "annotations": annotations},
        "spec": spec,
    }))
    .expect("valid manifest")
}

pub fn condition<K: ManagedKind>(object: &K, type_: &str) -> Option<Condition> {
    find_condition(&object.managed_status()?.conditions, type_).cloned()
}

pub fn is<K: ManagedKind>(object: &K, type_: &str, status: &str) -> bool {
    condition(object, type_).is_some_and(|c| c.status == status)
}

/// Polls until `check` holds, or fails with `what` after [`WAIT`].
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        assert_no_denials();
        if let Some(value) = check().await {
            return value;
        }
        assert!(started.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Polls `probe` every 500 ms until it gives a value, up to `limit`
/// (for waits longer than [`eventually`]'s, such as a proxy's boot).
pub async fn within<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        assert_no_denials();
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Waits until the resource satisfies `check`; on timeout the failure
/// shows its conditions.
pub async fn wait_for<K: ManagedKind>(
    api: &Api<K>,
    name: &str,
    what: &str,
    check: impl Fn(&K) -> bool,
) -> K {
    let started = Instant::now();
    loop {
        assert_no_denials();
        let object = api.get(name).await.expect("readable");
        if check(&object) {
            return object;
        }
        assert!(
            started.elapsed() < WAIT,
            "timed out waiting for {what}; conditions: {:?}",
            object.managed_status().map(|s| &s.conditions)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the resource is Ready and Synced.
pub async fn ready<K: ManagedKind>(api: &Api<K>, name: &str) -> K {
    wait_for(api, name, "Ready and Synced", |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

/// Waits until the resource is `Synced=False`: the resource and the
/// condition's message.
pub async fn refused<K: ManagedKind>(api: &Api<K>, name: &str) -> (K, String) {
    let object = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    let message = condition(&object, "Synced")
        .and_then(|c| c.message)
        .unwrap_or_default();
    (object, message)
}

/// Deletes the resource and waits until it is gone.
pub async fn delete_and_wait<K: ManagedKind>(api: &Api<K>, name: &str) {
    api.delete(name, &kube::api::DeleteParams::default())
        .await
        .expect("deleted");
    wait_gone(api, name).await;
}

/// `status.atProvider` as JSON (`Null` when there is none).
pub fn at_provider<K: ManagedKind>(object: &K) -> serde_json::Value {
    object
        .managed_status()
        .and_then(|s| serde_json::to_value(&s.at_provider).ok())
        .unwrap_or_default()
}

/// Asserts that none of `secrets` is in the status of any `K` of
/// `namespace`, nor in any Event there.
pub async fn assert_secrets_nowhere<K: ManagedKind>(
    world: &World,
    namespace: &str,
    secrets: &[&str],
) {
    let api: Api<K> = Api::namespaced(world.kube.clone(), namespace);
    let statuses: Vec<serde_json::Value> = api
        .list(&Default::default())
        .await
        .expect("listed")
        .iter()
        .map(|o| serde_json::to_value(o.managed_status()).expect("status serializes"))
        .collect();
    let statuses = serde_json::to_string(&statuses).expect("statuses serialize");
    let events =
        serde_json::to_string(&events(&world.kube, namespace).await).expect("events serialize");
    for secret in secrets {
        assert!(!statuses.contains(secret), "a secret in status: {statuses}");
        assert!(!events.contains(secret), "a secret in an event: {events}");
    }
}

/// A platform `LiteLLMModel` `name` (in the world's namespace) publishing
/// `model_name`, served by `upstream` with a key from a Secret of its own;
/// Ready when this returns.
pub async fn platform_model(
    world: &World,
    upstream: &super::upstream::Upstream,
    name: &str,
    model_name: &str,
) {
    let secrets: Api<KubeSecret> = Api::namespaced(world.kube.clone(), &world.namespace);
    let secret_name = format!("{name}-upstream");
    let secret = serde_json::from_value(json!({
        "metadata": {"name": secret_name},
        "stringData": {"apiKey": format!("sk-upstream-for-{name}")},
    }))
    .expect("a Secret");
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .expect("key Secret");
    let models = world
        .create(&manifest::<litellm_crossplane::api::LiteLLMModel>(
            "LiteLLMModel",
            name,
            json!({}),
            json!({"forProvider": {
                "modelName": model_name,
                "litellmParams": {"model": "openai/gpt-4o", "apiBase": upstream.url(),
                                  "apiKeySecretRef": {"name": secret_name, "key": "apiKey"}},
            }}),
        ))
        .await;
    ready(&models, name).await;
}

/// A world for one test module, with its new CRD fields kept installed
/// ([`super::crd_guard::CrdGuard`]) against other working copies' tests.
pub async fn world_guarded(prefix: &str) -> Option<(World, super::crd_guard::CrdGuard)> {
    let world = world(prefix).await?;
    let guard = super::crd_guard::CrdGuard::start(&world.kube);
    Some((world, guard))
}

/// Waits until the resource is gone (its finalizer released).
pub async fn wait_gone<K: ManagedKind>(api: &Api<K>, name: &str) {
    eventually(&format!("{name} to be gone"), || async {
        api.get_opt(name).await.unwrap().is_none().then_some(())
    })
    .await;
}

/// Every `events.k8s.io` Event of `namespace`, as the API server has them.
pub async fn events(
    kube: &kube::Client,
    namespace: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(kube.clone(), namespace);
    api.list(&Default::default()).await.expect("events").items
}

/// LiteLLM request counts by `operation`, from the provider's metrics.
pub fn requests_by_operation(
    registry: &prometheus_client::registry::Registry,
) -> std::collections::BTreeMap<String, u64> {
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("provider_litellm_request_duration_seconds_count{"))
    {
        let operation = line
            .split("operation=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap();
        let count: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        *counts.entry(operation.to_owned()).or_default() += count;
    }
    counts
}
