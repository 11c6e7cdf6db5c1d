//! The provider's Prometheus series.
//!
//! * This provider's own: reconciliations by kind, errors by reason, and
//!   the latency of LiteLLM admin requests (fed by the client's observer
//!   hook).
//! * crossplane-runtime's managed-resource series, with its names, `gvk`
//!   label and buckets: the state gauges of `pkg/statemetrics`
//!   (`crossplane_managed_resource_exists`, `_ready`, `_synced`) and the
//!   lifecycle histograms of `pkg/reconciler/managed/metrics.go`
//!   (`_first_time_to_reconcile_seconds`, `_first_time_to_readiness_seconds`,
//!   `_deletion_seconds`, `_drift_seconds`).
//! * controller-runtime's controller series (`controller_runtime_reconcile_*`,
//!   `controller_runtime_active_workers`) and `workqueue_depth`, labelled by
//!   controller as a Crossplane provider names its controllers
//!   (`managed/<kind>.<group>`, lowercase).
//!
//! kube-runtime has no client-go work queue to instrument. What
//! `workqueue_depth` counts here is what the reconciler can observe: the
//! objects whose requested requeue time has come (from the `Action` of
//! their last reconciliation or the error policy's backoff) and whose next
//! reconciliation has not started yet, among the objects the controller's
//! cache still holds. A reconciliation that a watch event triggers is not
//! seen before it starts, so it never counts.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::Action;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::litellm::Observer;

use crate::provider::telemetry::kube_requests::{CountRequests, KubeRequestLabel};
use crate::provider::watch::prehashed;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabel {
    kind: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabel {
    /// `"POST /team/new"`: never an id or a secret.
    operation: &'static str,
    /// HTTP status, `0` when no response arrived.
    status: u16,
}

/// crossplane-runtime's only label: `schema.GroupVersionKind.String()`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GvkLabel {
    gvk: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: &'static str,
}

/// Labels in alphabetical order, as client_golang writes them.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    controller: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabel {
    controller: String,
    name: String,
    /// controller-runtime's priority queue label; empty, as for a queue
    /// without priorities.
    priority: &'static str,
}

fn request_histogram() -> Histogram {
    // 1 ms .. ~16 s
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// `ExponentialBuckets(10e-9, 10, 10)` of crossplane-runtime's
/// `_first_time_to_reconcile_seconds` and `_drift_seconds`.
const TINY_BUCKETS: [f64; 10] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0];

/// crossplane-runtime's `_first_time_to_readiness_seconds` and
/// `_deletion_seconds` buckets.
const LIFECYCLE_BUCKETS: [f64; 11] = [
    1.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// controller-runtime's `controller_runtime_reconcile_time_seconds` buckets.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

fn tiny_histogram() -> Histogram {
    Histogram::new(TINY_BUCKETS)
}

fn lifecycle_histogram() -> Histogram {
    Histogram::new(LIFECYCLE_BUCKETS)
}

fn reconcile_time_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// The `gvk` label of `K`, as Go's `GroupVersionKind.String()` renders it:
/// `litellm.m.crossplane.io/v1alpha1, Kind=LiteLLMTeam`.
pub fn gvk<K: kube::Resource<DynamicType = ()> + 'static>() -> &'static str {
    interned::<K>(Name::Gvk, || {
        format!(
            "{}/{}, Kind={}",
            K::group(&()),
            K::version(&()),
            K::kind(&())
        )
    })
}

/// The name Crossplane gives the controller of a managed kind
/// (`managed.ControllerName(GroupKind.String())`):
/// `managed/litellmteam.litellm.m.crossplane.io`.
pub fn managed_controller<K: kube::Resource<DynamicType = ()> + 'static>() -> &'static str {
    interned::<K>(Name::Controller, || {
        format!("managed/{}.{}", K::kind(&()), K::group(&())).to_lowercase()
    })
}

#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum Name {
    Gvk,
    Controller,
}

/// A kind's label value, made on first use and kept for the life of the
/// process (two short strings per kind), so that no reconciliation formats
/// one.
fn interned<K: 'static>(name: Name, make: impl FnOnce() -> String) -> &'static str {
    type Names = std::sync::RwLock<HashMap<(std::any::TypeId, Name), &'static str>>;
    static NAMES: std::sync::OnceLock<Names> = std::sync::OnceLock::new();
    let names = NAMES.get_or_init(Names::default);
    let key = (std::any::TypeId::of::<K>(), name);
    if let Some(known) = names
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(&key)
    {
        return known;
    }
    names
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .entry(key)
        .or_insert_with(|| Box::leak(make().into_boxed_str()))
}

/// `namespace/name`: how the queue and the cache snapshots name an object.
pub fn object_key(meta: &kube::api::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// controller-runtime's `result` label of a reconciliation that returned.
pub fn result_of<E>(result: &Result<Action, E>) -> ReconcileResult {
    match result {
        Ok(action) if *action == Action::await_change() => ReconcileResult::Success,
        Ok(_) => ReconcileResult::RequeueAfter,
        Err(_) => ReconcileResult::Error,
    }
}

/// How a reconciliation ended, as controller-runtime labels `result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Done until something changes.
    Success,
    /// The reconciler returned an error.
    Error,
    /// Retried at once (a write conflict, which crossplane-runtime returns
    /// as `Requeue: true`).
    Requeue,
    /// Requeued after a delay (a poll interval).
    RequeueAfter,
}

impl ReconcileResult {
    const ALL: [ReconcileResult; 4] = [
        ReconcileResult::Error,
        ReconcileResult::RequeueAfter,
        ReconcileResult::Requeue,
        ReconcileResult::Success,
    ];

    pub const fn label(self) -> &'static str {
        match self {
            ReconcileResult::Success => "success",
            ReconcileResult::Error => "error",
            ReconcileResult::Requeue => "requeue",
            ReconcileResult::RequeueAfter => "requeue_after",
        }
    }
}

/// What the state gauges and the queue need to know of one cached object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// `namespace/name`.
    pub key: String,
    pub ready: bool,
    pub synced: bool,
}

type Snapshot = Box<dyn Fn() -> Vec<Seen> + Send + Sync>;

/// A controller's cache, read at scrape time.
struct Source {
    controller: String,
    /// Set for managed kinds: they have state gauges.
    gvk: Option<&'static str>,
    snapshot: Snapshot,
}

/// Timestamps of one managed resource the lifecycle histograms need,
/// keyed by uid (crossplane-runtime keys them by name alone, which mixes
/// up namespaces), through [`Shared::id`].
#[derive(Default)]
struct Lifecycle {
    /// The first reconciliation was seen by this process: its first
    /// readiness is measured.
    first_reconciled: prehashed::Set<u64>,
    /// When the resource was last found up to date.
    last_unchanged: prehashed::Map<u64, Instant>,
}

#[derive(Default)]
struct Shared {
    sources: Vec<Source>,
    /// Per controller: when each object's requested requeue falls due
    /// (`None` while it is being reconciled), by [`Shared::id`] of its
    /// `namespace/name`. An object keeps its entry from one reconciliation
    /// to the next, so a poll allocates none.
    queues: BTreeMap<String, prehashed::Map<u64, Option<Instant>>>,
    lifecycle: Lifecycle,
    /// Keys [`Shared::id`].
    ids: std::collections::hash_map::RandomState,
}

impl Shared {
    /// What the maps above key an object by: a hash of its name or uid,
    /// keyed per process so that no name can be chosen to collide (the
    /// maps hold one entry per object, and eight bytes are a tenth of the
    /// name's or uid's string).
    fn id(&self, key: &str) -> u64 {
        use std::hash::BuildHasher;
        self.ids.hash_one(key)
    }

    /// `controller`'s object `key` is due again at `due`.
    fn requeued(&mut self, controller: &str, key: &str, due: Instant) {
        let id = self.id(key);
        match self.queues.get_mut(controller) {
            Some(queue) => {
                queue.insert(id, Some(due));
            }
            None => {
                let mut queue = prehashed::Map::default();
                queue.insert(id, Some(due));
                self.queues.insert(controller.to_owned(), queue);
            }
        }
    }
}

/// The series a poll of one kind records ([`Metrics::poll_series`]).
#[derive(Clone)]
pub struct PollSeries {
    metrics: Metrics,
    controller: &'static str,
    reconciles: Counter,
    unchanged: Counter,
    paged: Counter,
    requeued: Counter,
    time: Histogram,
}

impl PollSeries {
    /// A poll that found nothing changed without a reconciliation
    /// ([`crate::provider::watch::polls`]), recorded as the reconciliation
    /// it stands for: a reconciliation of the kind by the controller that
    /// took `took` and requeued the object `key` (resource `object_id`, see
    /// [`Metrics::object_id`]) after `after`, having found it up to date;
    /// `by_page`: a page of the kind's list route answered it.
    pub fn polled(
        &self,
        key: &str,
        object_id: u64,
        after: Duration,
        took: Duration,
        by_page: bool,
    ) {
        self.reconciles.inc();
        self.unchanged.inc();
        if by_page {
            self.paged.inc();
        }
        self.requeued.inc();
        self.time.observe(took.as_secs_f64());
        self.metrics
            .requeued_unchanged(self.controller, key, object_id, after);
    }
}

/// Every series of the provider. Cloning shares them.
#[derive(Clone)]
pub struct Metrics {
    reconciles: Family<KindLabel, Counter>,
    unchanged_polls: Family<KindLabel, Counter>,
    page_polls: Family<KindLabel, Counter>,
    place_waits: Family<KindLabel, Counter>,
    left_to_pages: Family<KindLabel, Counter>,
    errors: Family<ErrorLabel, Counter>,
    requests: Histograms<RequestLabel>,
    reconcile_total: Family<ResultLabel, Counter>,
    reconcile_errors: Family<ControllerLabel, Counter>,
    reconcile_time: Histograms<ControllerLabel>,
    active_workers: Family<ControllerLabel, Gauge>,
    first_reconcile: Histograms<GvkLabel>,
    first_ready: Histograms<GvkLabel>,
    deletion: Histograms<GvkLabel>,
    drift: Histograms<GvkLabel>,
    kube_requests: Family<KubeRequestLabel, Counter>,
    shared: Arc<Mutex<Shared>>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            reconciles: Family::default(),
            unchanged_polls: Family::default(),
            page_polls: Family::default(),
            place_waits: Family::default(),
            left_to_pages: Family::default(),
            errors: Family::default(),
            requests: Family::new_with_constructor(request_histogram),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_time_histogram),
            active_workers: Family::default(),
            first_reconcile: Family::new_with_constructor(tiny_histogram),
            first_ready: Family::new_with_constructor(lifecycle_histogram),
            deletion: Family::new_with_constructor(lifecycle_histogram),
            drift: Family::new_with_constructor(tiny_histogram),
            kube_requests: Family::default(),
            shared: Arc::default(),
        }
    }
}

/// Seconds from `since` to now; never negative (the API server's clock
/// may run ahead of this one).
fn seconds_since(since: Timestamp) -> f64 {
    Timestamp::now()
        .duration_since(since)
        .as_secs_f64()
        .max(0.0)
}

impl Metrics {
    /// Registers the series in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "provider_litellm_kube_requests",
            "Requests to the Kubernetes API server by verb and resource (watches count once, \
             as they start)",
            self.kube_requests.clone(),
        );
        registry.register(
            "provider_litellm_reconciles",
            "Reconciliations of managed resources by kind",
            self.reconciles.clone(),
        );
        registry.register(
            "provider_litellm_unchanged_polls",
            "Polls of managed resources by kind that found LiteLLM's answer and the \
             resource's namespaces as the last poll left them, and so reconciled nothing \
             (counted in provider_litellm_reconciles too)",
            self.unchanged_polls.clone(),
        );
        registry.register(
            "provider_litellm_page_polls",
            "Unchanged polls by kind that a page of LiteLLM's list route answered, with \
             other objects' polls, instead of a read of their own (counted in \
             provider_litellm_unchanged_polls too)",
            self.page_polls.clone(),
        );
        registry.register(
            "provider_litellm_place_waits",
            "Reconciliations by kind that found their namespace's share of the kind's \
             reconciliations at once taken, and so did nothing and waited for a place (not \
             counted in provider_litellm_reconciles)",
            self.place_waits.clone(),
        );
        registry.register(
            "provider_litellm_polls_left_to_pages",
            "Reconciliations by kind that were a new process's first poll of an up-to-date \
             object a page of LiteLLM's list route can answer, and so read nothing and left \
             the object to the next sweep of pages (counted in provider_litellm_reconciles \
             too)",
            self.left_to_pages.clone(),
        );
        registry.register(
            "provider_litellm_reconcile_errors",
            "Failed reconciliations by kind and reason",
            self.errors.clone(),
        );
        registry.register(
            "provider_litellm_request_duration_seconds",
            "Latency of LiteLLM admin API requests by operation and HTTP status",
            self.requests.clone(),
        );
        // The counters register without `_total`: the encoder appends it.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            self.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            self.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            self.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            self.active_workers.clone(),
        );
        registry.register(
            "crossplane_managed_resource_first_time_to_reconcile_seconds",
            "The time it took for a managed resource to be detected by the controller",
            self.first_reconcile.clone(),
        );
        registry.register(
            "crossplane_managed_resource_first_time_to_readiness_seconds",
            "The time it took for a managed resource to become ready first time after creation",
            self.first_ready.clone(),
        );
        registry.register(
            "crossplane_managed_resource_deletion_seconds",
            "The time it took for a managed resource to be deleted",
            self.deletion.clone(),
        );
        registry.register(
            "crossplane_managed_resource_drift_seconds",
            "ALPHA: How long since the previous successful reconcile when a resource was found \
             to be out of sync; excludes restart of the provider",
            self.drift.clone(),
        );
        registry.register_collector(Box::new(StateCollector {
            shared: self.shared.clone(),
        }));
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn reconciled(&self, kind: &'static str) {
        self.reconciles.get_or_create(&KindLabel { kind }).inc();
    }

    /// A reconciliation of `kind` waits for a place of its namespace
    /// ([`crate::provider::watch::places`]).
    pub fn waited_for_place(&self, kind: &'static str) {
        self.place_waits.get_or_create(&KindLabel { kind }).inc();
    }

    /// A reconciliation of `kind` left its object to the next sweep of
    /// pages ([`crate::provider::watch::polls`]).
    pub fn left_to_pages(&self, kind: &'static str) {
        self.left_to_pages.get_or_create(&KindLabel { kind }).inc();
    }

    pub fn failed(&self, kind: &'static str, reason: &'static str) {
        self.errors
            .get_or_create(&ErrorLabel { kind, reason })
            .inc();
    }

    /// The hook handed to every LiteLLM client.
    /// A Kubernetes client of `config` whose requests are counted in
    /// `provider_litellm_kube_requests_total`.
    pub fn kube_client(&self, config: kube::Config) -> Result<kube::Client, kube::Error> {
        let layer = CountRequests {
            family: self.kube_requests.clone(),
        };
        Ok(kube::client::ClientBuilder::try_from(config)?
            .with_layer(&layer)
            .build())
    }

    /// Requests to the Kubernetes API server so far, by (verb, resource).
    pub fn kube_requests(&self) -> BTreeMap<(String, String), u64> {
        let mut text = String::new();
        let mut registry = Registry::default();
        registry.register("r", "", self.kube_requests.clone());
        let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
        text.lines()
            .filter_map(|line| {
                let labels = line.strip_prefix("r_total{")?;
                let (labels, value) = labels.split_once("} ")?;
                let mut verb = None;
                let mut resource = None;
                for pair in labels.split(',') {
                    let (k, v) = pair.split_once('=')?;
                    let v = v.trim_matches('"').to_owned();
                    match k {
                        "verb" => verb = Some(v),
                        "resource" => resource = Some(v),
                        _ => {}
                    }
                }
                Some(((verb?, resource?), value.trim().parse().ok()?))
            })
            .collect()
    }

    pub fn observer(&self) -> Observer {
        let requests = self.requests.clone();
        Arc::new(
            move |operation: &'static str, status: u16, elapsed: Duration| {
                requests
                    .get_or_create(&RequestLabel { operation, status })
                    .observe(elapsed.as_secs_f64());
            },
        )
    }

    /// Starts the series of `controller` at zero, as controller-runtime
    /// does when a controller starts, and reads its cache at every scrape:
    /// `gvk` is set for a managed kind, whose state gauges it feeds.
    pub fn watch(
        &self,
        controller: &'static str,
        gvk: Option<&'static str>,
        snapshot: impl Fn() -> Vec<Seen> + Send + Sync + 'static,
    ) {
        for result in ReconcileResult::ALL {
            let _ = self.reconcile_total.get_or_create(&ResultLabel {
                controller,
                result: result.label(),
            });
        }
        let label = ControllerLabel { controller };
        let _ = self.reconcile_errors.get_or_create(&label);
        let _ = self.active_workers.get_or_create(&label);
        let mut shared = self.shared();
        shared.queues.entry(controller.to_owned()).or_default();
        shared.sources.push(Source {
            controller: controller.to_owned(),
            gvk,
            snapshot: Box::new(snapshot),
        });
    }

    /// A reconciliation of `key` (`namespace/name`) by `controller` begins:
    /// it leaves the queue and occupies a worker until
    /// [`Reconciling::finish`].
    pub fn reconciling(&self, controller: &'static str, key: &str) -> Reconciling {
        {
            let mut shared = self.shared();
            let id = shared.id(key);
            if let Some(due) = shared
                .queues
                .get_mut(controller)
                .and_then(|queue| queue.get_mut(&id))
            {
                *due = None;
            }
        }
        let label = ControllerLabel { controller };
        self.active_workers.get_or_create(&label).inc();
        Reconciling {
            metrics: self.clone(),
            label,
            started: Instant::now(),
        }
    }

    /// The id the lifecycle maps know the resource of `uid` by, for
    /// [`PollSeries::polled`].
    pub fn object_id(&self, uid: &str) -> u64 {
        self.shared().id(uid)
    }

    /// The series of `kind`'s polls by `controller`, looked up once: a
    /// poll that found nothing changed then records itself without a
    /// lookup of each by its labels ([`PollSeries::polled`]).
    pub fn poll_series(&self, controller: &'static str, kind: &'static str) -> PollSeries {
        let label = KindLabel { kind };
        PollSeries {
            metrics: self.clone(),
            controller,
            reconciles: self.reconciles.get_or_create(&label).clone(),
            unchanged: self.unchanged_polls.get_or_create(&label).clone(),
            paged: self.page_polls.get_or_create(&label).clone(),
            requeued: self
                .reconcile_total
                .get_or_create(&ResultLabel {
                    controller,
                    result: ReconcileResult::RequeueAfter.label(),
                })
                .clone(),
            time: self
                .reconcile_time
                .get_or_create(&ControllerLabel { controller })
                .clone(),
        }
    }

    /// A reconciliation by `controller` ended with `result` after `took`:
    /// controller-runtime's `reconcile_total`, `reconcile_errors_total` and
    /// `reconcile_time`.
    fn ended(&self, controller: &'static str, result: ReconcileResult, took: Duration) {
        let label = ControllerLabel { controller };
        self.reconcile_total
            .get_or_create(&ResultLabel {
                controller,
                result: result.label(),
            })
            .inc();
        if result == ReconcileResult::Error {
            self.reconcile_errors.get_or_create(&label).inc();
        }
        self.reconcile_time
            .get_or_create(&label)
            .observe(took.as_secs_f64());
    }

    /// [`Metrics::requeued`] and the note that `object_id` was found
    /// unchanged ([`PollSeries::polled`]), under one lock.
    fn requeued_unchanged(&self, controller: &str, key: &str, object_id: u64, after: Duration) {
        let now = Instant::now();
        let mut shared = self.shared();
        shared.requeued(controller, key, now + after);
        shared.lifecycle.last_unchanged.insert(object_id, now);
    }

    /// `Action::requeue(after)` for the object `key` (see [`object_key`]),
    /// noted by [`Metrics::requeued`].
    pub fn requeue(&self, controller: &str, key: &str, after: Duration) -> Action {
        self.requeued(controller, key, after);
        Action::requeue(after)
    }

    /// The object will be reconciled again after `after` (an `Action`'s
    /// requeue, or the error policy's backoff).
    pub fn requeued(&self, controller: &str, key: &str, after: Duration) {
        self.shared()
            .requeued(controller, key, Instant::now() + after);
    }

    /// crossplane-runtime's `recordFirstTimeReconciled`: a reconciliation
    /// of a resource without a `Synced` condition (or with `Unknown`)
    /// measures the time since its creation.
    pub fn first_reconcile(
        &self,
        gvk: &'static str,
        uid: &str,
        created: Option<Timestamp>,
        synced: Option<&str>,
    ) {
        if !matches!(synced, None | Some("Unknown")) {
            return;
        }
        // A reconciliation that ends before writing a status (a conflict,
        // a poll put off) leaves the next one without `Synced` too:
        // one observation per resource all the same.
        let first = {
            let mut shared = self.shared();
            let id = shared.id(uid);
            shared.lifecycle.first_reconciled.insert(id)
        };
        if let (true, Some(created)) = (first, created) {
            self.first_reconcile
                .get_or_create(&GvkLabel { gvk })
                .observe(seconds_since(created));
        }
    }

    /// crossplane-runtime's `recordUnchanged` and `recordFirstTimeReady`:
    /// the resource was found up to date, `ready` when its `Ready`
    /// condition is `True`. The first readiness of a resource whose first
    /// reconciliation this process saw measures the time since creation.
    pub fn up_to_date(
        &self,
        gvk: &'static str,
        uid: &str,
        created: Option<Timestamp>,
        ready: bool,
    ) {
        let first = {
            let mut shared = self.shared();
            let id = shared.id(uid);
            let lifecycle = &mut shared.lifecycle;
            lifecycle.last_unchanged.insert(id, Instant::now());
            ready && lifecycle.first_reconciled.remove(&id)
        };
        if let (true, Some(created)) = (first, created) {
            self.first_ready
                .get_or_create(&GvkLabel { gvk })
                .observe(seconds_since(created));
        }
    }

    /// crossplane-runtime's `recordDrift`: drift was corrected; measures
    /// the time since the resource was last found up to date.
    pub fn drift_corrected(&self, gvk: &'static str, uid: &str) {
        let since = {
            let mut shared = self.shared();
            let id = shared.id(uid);
            let last = &mut shared.lifecycle.last_unchanged;
            last.get_mut(&id)
                .map(|at| std::mem::replace(at, Instant::now()))
        };
        if let Some(since) = since {
            self.drift
                .get_or_create(&GvkLabel { gvk })
                .observe(since.elapsed().as_secs_f64());
        }
    }

    /// crossplane-runtime's `recordDeleted`: the finalizer is released;
    /// measures the time since the deletion was requested.
    pub fn deleted(&self, gvk: &'static str, uid: &str, deletion_requested: Option<Timestamp>) {
        {
            let mut shared = self.shared();
            let id = shared.id(uid);
            shared.lifecycle.first_reconciled.remove(&id);
            shared.lifecycle.last_unchanged.remove(&id);
        }
        if let Some(requested) = deletion_requested {
            self.deletion
                .get_or_create(&GvkLabel { gvk })
                .observe(seconds_since(requested));
        }
    }
}

/// One reconciliation in flight, from [`Metrics::reconciling`].
pub struct Reconciling {
    metrics: Metrics,
    label: ControllerLabel,
    started: Instant,
}

impl Reconciling {
    /// The reconciliation ended with `result`: controller-runtime's
    /// `reconcile_total`, `reconcile_errors_total` and `reconcile_time`.
    pub fn finish(self, result: ReconcileResult) {
        self.metrics
            .ended(self.label.controller, result, self.started.elapsed());
    }
}

impl Drop for Reconciling {
    fn drop(&mut self) {
        self.metrics.active_workers.get_or_create(&self.label).dec();
    }
}

/// The counts of the state gauges, by gvk.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct States {
    exists: i64,
    ready: i64,
    synced: i64,
}

/// What [`StateCollector`] encodes, computed from the caches.
#[derive(Debug, Default, PartialEq)]
struct Scrape {
    states: BTreeMap<&'static str, States>,
    depth: BTreeMap<String, i64>,
}

impl Shared {
    /// Reads every cache once: counts the state gauges and the due requeues
    /// of cached objects, and forgets requeues of objects the caches no
    /// longer hold.
    fn scrape(&mut self, now: Instant) -> Scrape {
        let mut scrape = Scrape::default();
        let mut cached: HashMap<String, prehashed::Set<u64>> = HashMap::new();
        for source in &self.sources {
            let seen = (source.snapshot)();
            if let Some(gvk) = source.gvk {
                let states = scrape.states.entry(gvk).or_default();
                for object in &seen {
                    states.exists += 1;
                    states.ready += i64::from(object.ready);
                    states.synced += i64::from(object.synced);
                }
            }
            let ids: Vec<u64> = seen.iter().map(|s| self.id(&s.key)).collect();
            cached
                .entry(source.controller.clone())
                .or_default()
                .extend(ids);
        }
        for (controller, queue) in &mut self.queues {
            // A controller whose cache is not watched keeps every entry.
            if let Some(keys) = cached.get(controller) {
                queue.retain(|key, _| keys.contains(key));
            }
            let waiting = queue
                .values()
                .filter(|due| due.is_some_and(|due| due <= now))
                .count();
            scrape.depth.insert(
                controller.clone(),
                i64::try_from(waiting).unwrap_or(i64::MAX),
            );
        }
        scrape
    }
}

/// Encodes the series computed at scrape time: the state gauges and the
/// queue depth.
struct StateCollector {
    shared: Arc<Mutex<Shared>>,
}

impl fmt::Debug for StateCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateCollector").finish_non_exhaustive()
    }
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let scrape = {
            let mut shared = self
                .shared
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            shared.scrape(Instant::now())
        };
        let gauges: [(&str, &str, fn(&States) -> i64); 3] = [
            (
                "crossplane_managed_resource_exists",
                "The number of managed resources that exist",
                |s| s.exists,
            ),
            (
                "crossplane_managed_resource_ready",
                "The number of managed resources in Ready=True state",
                |s| s.ready,
            ),
            (
                "crossplane_managed_resource_synced",
                "The number of managed resources in Synced=True state",
                |s| s.synced,
            ),
        ];
        for (name, help, value) in gauges {
            let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for (gvk, states) in &scrape.states {
                let label = GvkLabel { gvk };
                ConstGauge::new(value(states)).encode(metric.encode_family(&label)?)?;
            }
        }
        let mut metric = encoder.encode_descriptor(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            None,
            MetricType::Gauge,
        )?;
        for (controller, depth) in &scrape.depth {
            let label = QueueLabel {
                controller: controller.clone(),
                name: controller.clone(),
                priority: "",
            };
            ConstGauge::new(*depth).encode(metric.encode_family(&label)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LiteLLMTeam;

    fn encode(registry: &Registry) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
        text
    }

    #[test]
    fn series_are_exported_with_their_labels() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.reconciled("team");
        metrics.failed("key", "litellm");
        (metrics.observer())("GET /team/info", 200, Duration::from_millis(3));
        let text = encode(&registry);
        assert!(
            text.contains("provider_litellm_reconciles_total{kind=\"team\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "provider_litellm_reconcile_errors_total{kind=\"key\",reason=\"litellm\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("provider_litellm_request_duration_seconds_count{operation=\"GET /team/info\",status=\"200\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn names_follow_crossplane_and_go() {
        assert_eq!(
            gvk::<LiteLLMTeam>(),
            "litellm.m.crossplane.io/v1alpha1, Kind=LiteLLMTeam"
        );
        assert_eq!(
            managed_controller::<LiteLLMTeam>(),
            "managed/litellmteam.litellm.m.crossplane.io"
        );
    }

    #[test]
    fn controller_series_start_at_zero_and_count_each_result() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.watch("managed/t", None, Vec::new);
        let text = encode(&registry);
        for result in ["success", "error", "requeue", "requeue_after"] {
            let line = format!(
                "controller_runtime_reconcile_total{{controller=\"managed/t\",result=\"{result}\"}} 0"
            );
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert!(
            text.contains("controller_runtime_reconcile_errors_total{controller=\"managed/t\"} 0")
        );
        let running = metrics.reconciling("managed/t", "ns/a");
        assert!(encode(&registry)
            .contains("controller_runtime_active_workers{controller=\"managed/t\"} 1"));
        running.finish(ReconcileResult::Error);
        metrics
            .reconciling("managed/t", "ns/a")
            .finish(ReconcileResult::RequeueAfter);
        let text = encode(&registry);
        assert!(text.contains("controller_runtime_active_workers{controller=\"managed/t\"} 0"));
        assert!(text.contains(
            "controller_runtime_reconcile_total{controller=\"managed/t\",result=\"error\"} 1"
        ));
        assert!(text.contains(
            "controller_runtime_reconcile_total{controller=\"managed/t\",result=\"requeue_after\"} 1"
        ));
        assert!(
            text.contains("controller_runtime_reconcile_errors_total{controller=\"managed/t\"} 1")
        );
        assert!(text.contains(
            "controller_runtime_reconcile_time_seconds_count{controller=\"managed/t\"} 2"
        ));
        assert!(text.contains(
            "controller_runtime_reconcile_time_seconds_bucket{le=\"60.0\",controller=\"managed/t\"} 2"
        ), "{text}");
    }

    fn seen(key: &str, ready: bool, synced: bool) -> Seen {
        Seen {
            key: key.into(),
            ready,
            synced,
        }
    }

    #[test]
    fn state_gauges_count_the_cache_by_gvk() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let objects = Arc::new(Mutex::new(vec![
            seen("ns/a", true, true),
            seen("ns/b", false, true),
            seen("ns/c", false, false),
        ]));
        let cache = objects.clone();
        metrics.watch("managed/t", Some("g/v, Kind=T"), move || {
            cache.lock().unwrap().clone()
        });
        // A second cache of the same kind (another namespace) adds up.
        metrics.watch("managed/t", Some("g/v, Kind=T"), || {
            vec![seen("other/a", true, true)]
        });
        metrics.watch("managed/e", Some("g/v, Kind=E"), Vec::new);
        let text = encode(&registry);
        for line in [
            "crossplane_managed_resource_exists{gvk=\"g/v, Kind=T\"} 4",
            "crossplane_managed_resource_ready{gvk=\"g/v, Kind=T\"} 2",
            "crossplane_managed_resource_synced{gvk=\"g/v, Kind=T\"} 3",
            "crossplane_managed_resource_exists{gvk=\"g/v, Kind=E\"} 0",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        objects.lock().unwrap().clear();
        let text = encode(&registry);
        assert!(text.contains("crossplane_managed_resource_exists{gvk=\"g/v, Kind=T\"} 1"));
    }

    #[test]
    fn queue_depth_counts_due_requeues_not_yet_started_of_cached_objects() {
        let mut shared = Shared::default();
        let now = Instant::now();
        shared.sources.push(Source {
            controller: "c".into(),
            gvk: None,
            snapshot: Box::new(|| vec![seen("ns/a", true, true), seen("ns/b", true, true)]),
        });
        let (a, b, gone) = (shared.id("ns/a"), shared.id("ns/b"), shared.id("ns/gone"));
        let queue = shared.queues.entry("c".into()).or_default();
        queue.insert(a, Some(now - Duration::from_secs(1)));
        queue.insert(b, Some(now + Duration::from_secs(60)));
        queue.insert(gone, Some(now - Duration::from_secs(1)));
        assert_eq!(shared.scrape(now).depth["c"], 1);
        assert!(!shared.queues["c"].contains_key(&gone), "forgotten");
        assert_eq!(
            shared.scrape(now + Duration::from_secs(61)).depth["c"],
            2,
            "both due"
        );

        // Starting a reconciliation takes the object off the queue.
        let metrics = Metrics::default();
        metrics.watch("c", None, Vec::new);
        metrics.requeued("c", "ns/a", Duration::ZERO);
        assert_eq!(
            metrics.shared().scrape(Instant::now()).depth["c"],
            0,
            "not cached"
        );
        let metrics = Metrics::default();
        metrics.requeued("c", "ns/a", Duration::ZERO);
        assert_eq!(metrics.shared().scrape(Instant::now()).depth["c"], 1);
        drop(metrics.reconciling("c", "ns/a"));
        assert_eq!(metrics.shared().scrape(Instant::now()).depth["c"], 0);
    }

    #[test]
    fn lifecycle_histograms_follow_crossplane_runtime() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let created = Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(2);
        // Found up to date before any first reconciliation was seen (a
        // restarted provider): no readiness measured.
        metrics.up_to_date("g", "old", Some(created), true);
        // Synced already set: not a first reconciliation.
        metrics.first_reconcile("g", "u", Some(created), Some("False"));
        metrics.first_reconcile("g", "u", Some(created), None);
        // The finalizer's reconciliation and the first apply: counted once.
        metrics.first_reconcile("g", "u", Some(created), None);
        metrics.up_to_date("g", "u", Some(created), false);
        metrics.up_to_date("g", "u", Some(created), true);
        // Measured once.
        metrics.up_to_date("g", "u", Some(created), true);
        metrics.drift_corrected("g", "never-up-to-date");
        metrics.drift_corrected("g", "u");
        metrics.deleted("g", "u", Some(Timestamp::now()));
        // Forgotten with the resource.
        metrics.drift_corrected("g", "u");
        let text = encode(&registry);
        for line in [
            "crossplane_managed_resource_first_time_to_reconcile_seconds_count{gvk=\"g\"} 1",
            "crossplane_managed_resource_first_time_to_readiness_seconds_count{gvk=\"g\"} 1",
            "crossplane_managed_resource_first_time_to_readiness_seconds_bucket{le=\"1.0\",gvk=\"g\"} 0",
            "crossplane_managed_resource_first_time_to_readiness_seconds_bucket{le=\"5.0\",gvk=\"g\"} 1",
            "crossplane_managed_resource_drift_seconds_count{gvk=\"g\"} 1",
            "crossplane_managed_resource_deletion_seconds_count{gvk=\"g\"} 1",
            "crossplane_managed_resource_deletion_seconds_bucket{le=\"1.0\",gvk=\"g\"} 1",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
