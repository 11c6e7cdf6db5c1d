//! The generic managed reconciler: the Kubernetes side of Crossplane's
//! managed-resource semantics, for every kind alike. The finalizer is the only
//! top-level action; inside it, apply resolves references and the instance,
//! records the id, and hands over to [`contract::sync`]; cleanup hands over
//! to [`contract::cleanup`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::ResourceExt;
use serde_json::json;

use crate::api::common::{
    find_condition, paused_by_annotation, paused_by_policies, supported_management_policies,
    Condition, ManagedStatus, EXTERNAL_NAME, PAUSED, POLL_INTERVAL, RECONCILE_REQUESTED_AT,
};
use crate::litellm::Secret;

use crate::api::conditions::{self, condition, reason, READY, SYNCED};
use crate::provider::managed::connection;
use crate::provider::managed::contract::{
    self, Cleanup, Connecter, Connection, Creation, External, ExternalError, Failed, KindConnecter,
    Maintained, ManagedKind, Outcome, Step,
};
use crate::provider::managed::dependents;
use crate::provider::managed::ownership::{Owner, Verified};
use crate::provider::managed::resolve::{
    self, ClientCache, Resolved, Unresolved, DEFAULT_LITELLM_TIMEOUT,
};
use crate::provider::managed::scrub::Scrubber;
use crate::provider::telemetry::events::{EventType, Recorder};
use crate::provider::telemetry::metrics::{
    self as series, object_key, result_of, Metrics, ReconcileResult,
};
use crate::provider::watch::cache::{Cache, Kube};
use crate::provider::watch::places::Places;
use crate::provider::watch::polls::BUSY_WINDOW;
use crate::provider::watch::polls::{memo_polls, Brought, Memo, Polls, PutOff, MAX_PUT_OFF};
use crate::provider::watch::timing;
use crate::provider::watch::tolerant::{self, Tolerant};
use crate::provider::watch::written::Written;

/// Finalizer of every managed resource: it stays until LiteLLM confirms the
/// object is gone (or the resource is released on purpose).
pub const FINALIZER: &str = "litellm.crossplane.io/managed-resource";

/// Annotation that lets a resource whose `LiteLLMInstance` is gone be
/// deleted without deleting (or being able to delete) the LiteLLM object.
/// Without it such a resource waits for the instance to come back, so
/// nothing is orphaned by accident.
pub const RELEASE_ON_MISSING_INSTANCE: &str = "litellm.crossplane.io/release-on-missing-instance";

/// crossplane-runtime providers' default `--max-reconcile-rate`, which they
/// use as each controller's concurrency.
pub const DEFAULT_MAX_RECONCILE_RATE: u16 = 10;

/// The longest a resource goes without a full reconciliation by default,
/// as crossplane-runtime providers' `--sync`.
pub const DEFAULT_SYNC_PERIOD: Duration = Duration::from_secs(3600);

/// Default interval between observations of a healthy resource.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(60);

/// How soon a reconciliation that found the cache behind looks again.
const CACHE_BEHIND_RECHECK: Duration = Duration::from_millis(100);

/// How long a put-off poll waits before it looks again (up to twice this).
const DEFERRED_POLL: Duration = Duration::from_secs(2);

/// How long a new resource whose reference is still being made waits
/// before it looks again, unless that reference wakes it by becoming
/// Ready first (see [`Error::waits_unreported`]).
const FIRST_RECONCILIATION_WAIT: Duration = Duration::from_secs(5);

/// How long after its creation a resource may wait unreported at most
/// (see [`Error::waits_unreported`]): whatever holds the reference up
/// (references that wait for each other), it reports after this.
const UNREPORTED_FOR: Duration = Duration::from_secs(60);

/// Whether this reconciliation is a poll: the resource is Ready and Synced
/// for its current spec, so nothing but drift can be found.
fn is_poll<K: ManagedKind>(mr: &K) -> bool {
    let Some(status) = mr.managed_status() else {
        return false;
    };
    let generation = mr.meta().generation;
    mr.meta().deletion_timestamp.is_none()
        && reconcile_request(mr).is_none()
        && [READY, SYNCED].iter().all(|type_| {
            find_condition(&status.conditions, type_)
                .is_some_and(|c| c.status == "True" && c.observed_generation == generation)
        })
}

/// Shared by every reconciliation of every kind.
pub struct Context {
    pub client: kube::Client,
    pub metrics: Metrics,
    pub recorder: Recorder,
    /// Written into every ownership marker; see [`Owner::cluster`].
    pub cluster_id: String,
    pub default_poll_interval: Duration,
    /// Every poll interval, default or annotated, is clamped into these.
    pub poll_bounds: timing::PollBounds,
    /// Polls fall due on multiples of this ([`timing::on_tick`]).
    pub poll_tick: Duration,
    /// The spread of polls in percent of their interval
    /// (`--poll-jitter-percentage`).
    pub poll_jitter: u8,
    /// The longest a resource goes without a full reconciliation: polls
    /// answered by a memo stop there (`--sync`).
    pub sync_period: Duration,
    /// Reconciliations of one kind at once (`--max-reconcile-rate`).
    pub concurrency: u16,
    litellm_timeout: Duration,
    max_in_flight: usize,
    clients: ClientCache,
    /// Consecutive failures by resource uid, for the retry backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// Unreadable resources reported, by uid.
    unreadable: tolerant::Reports,
    /// The controllers' shared watch caches, once [`crate::provider::runtime::controllers`]
    /// has started them; until then every read goes to the API server.
    cache: std::sync::OnceLock<Arc<Cache>>,
    /// What the provider last wrote to each resource.
    written: Written,
    /// Polls put off while their proxy is busy.
    deferred: PutOff,
    /// Ownership of LiteLLM objects the provider established lately.
    verified: Arc<Verified>,
    /// Requeues of managed resources, outside kube-runtime's scheduler
    /// ([`polls`](crate::provider::watch::polls)); the controllers register their kinds.
    pub polls: Polls,
    /// Each kind's reconciliations at once, shared out by namespace
    /// ([`places`](crate::provider::watch::places)); the controllers register their
    /// kinds.
    pub places: Places,
}

impl Context {
    /// What a kind's [`External`](contract::External) needs to reach
    /// `instance` through `litellm` for a resource of `owner`.
    fn connection(
        &self,
        instance: &resolve::Instance,
        litellm: crate::litellm::Client,
        owner: &Owner,
        scrubber: &Scrubber,
        refs: Resolved,
        kube: Kube,
    ) -> Connection {
        Connection {
            verified: self.verified.clone(),
            litellm,
            owner: owner.clone(),
            instance_namespace: instance.namespace.clone(),
            scrubber: scrubber.clone(),
            public_models: instance.public_models,
            tenant_mcp_server_hosts: instance.tenant_mcp_server_hosts.clone(),
            refs,
            kube,
            endpoint: instance.consumer_endpoint.clone(),
            drawn: None,
        }
    }

    pub fn new(client: kube::Client, cluster_id: impl Into<String>, metrics: Metrics) -> Self {
        Self {
            recorder: Recorder::for_provider(client.clone()),
            clients: ClientCache::new(metrics.observer(), DEFAULT_LITELLM_TIMEOUT),
            client,
            metrics,
            cluster_id: cluster_id.into(),
            default_poll_interval: DEFAULT_POLL_INTERVAL,
            poll_bounds: timing::PollBounds::default(),
            poll_tick: timing::POLL_TICK,
            poll_jitter: timing::DEFAULT_POLL_JITTER_PERCENTAGE,
            sync_period: DEFAULT_SYNC_PERIOD,
            concurrency: DEFAULT_MAX_RECONCILE_RATE,
            litellm_timeout: DEFAULT_LITELLM_TIMEOUT,
            max_in_flight: resolve::DEFAULT_MAX_IN_FLIGHT,
            failures: Mutex::new(HashMap::new()),
            unreadable: tolerant::Reports::default(),
            cache: std::sync::OnceLock::new(),
            written: Written::default(),
            deferred: PutOff::default(),
            verified: Arc::default(),
            polls: Polls::default(),
            places: Places::default(),
        }
    }

    /// The spread of polls, in percent of their interval (0 to 99).
    pub fn with_poll_jitter(mut self, percentage: u8) -> Self {
        self.poll_jitter = percentage.min(99);
        self
    }

    /// The longest a resource goes without a full reconciliation.
    pub fn with_sync_period(mut self, period: Duration) -> Self {
        self.sync_period = period;
        self
    }

    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.default_poll_interval = interval;
        self
    }

    /// Polls fall due on multiples of `tick` (default
    /// [`timing::POLL_TICK`]; zero: exactly when due).
    pub fn with_poll_tick(mut self, tick: Duration) -> Self {
        self.poll_tick = tick;
        self
    }

    /// Bounds on every poll interval (default: 10 s to 24 h).
    pub fn with_poll_bounds(mut self, bounds: timing::PollBounds) -> Self {
        self.poll_bounds = bounds;
        self
    }

    /// The poll interval of `mr`: its `crossplane.io/poll-interval`, else
    /// the default, clamped into the bounds.
    pub fn poll_interval<K: ManagedKind>(&self, mr: &K) -> Duration {
        self.poll_bounds
            .clamp(poll_interval(mr, self.default_poll_interval))
    }

    /// Bounds connecting to LiteLLM and each admin request (default
    /// [`DEFAULT_LITELLM_TIMEOUT`]). A request that runs out is a retryable
    /// failure whose write may still have happened; the fault-injection
    /// tests shorten it to provoke that case in seconds.
    pub fn with_litellm_timeout(mut self, timeout: Duration) -> Self {
        self.litellm_timeout = timeout;
        self.rebuild_clients();
        self
    }

    /// Reconciliations of one kind at once: crossplane-runtime's providers
    /// take this from `--max-reconcile-rate` (default
    /// [`DEFAULT_MAX_RECONCILE_RATE`]); at least 1.
    pub fn with_max_reconcile_rate(mut self, rate: u16) -> Self {
        self.concurrency = rate.max(1);
        self
    }

    /// Admin requests in flight to one proxy at once, over every kind
    /// (default [`resolve::DEFAULT_MAX_IN_FLIGHT`]); more wait their turn
    /// before their timeout starts.
    pub fn with_max_in_flight(mut self, max: usize) -> Self {
        self.max_in_flight = max.max(1);
        self.rebuild_clients();
        self
    }

    fn rebuild_clients(&mut self) {
        self.clients = ClientCache::with_in_flight(
            self.metrics.observer(),
            self.litellm_timeout,
            self.max_in_flight,
        );
    }

    /// Whether a watch event of `meta` is the echo of a write its
    /// reconciliation already acted on, which wakes nothing (see
    /// [`Written`]).
    pub fn echoes(&self, meta: &kube::api::ObjectMeta) -> bool {
        self.written.is_echo(meta)
    }

    /// The adaptive in-flight limit of every proxy reached so far, by admin
    /// endpoint (see [`crate::litellm::Pacing`]).
    pub fn in_flight_limits(&self) -> Vec<(String, crate::litellm::Limits)> {
        self.clients.limits()
    }

    /// Reads go through `cache` from now on (set once).
    pub fn use_cache(&self, cache: Arc<Cache>) {
        let _ = self.cache.set(cache);
    }

    /// How reconciliations read Kubernetes: through the shared caches once
    /// they run.
    pub fn kube(&self) -> Kube {
        match self.cache.get() {
            Some(cache) => Kube::cached(self.client.clone(), cache.clone()),
            None => Kube::live(self.client.clone()),
        }
    }

    /// Whether to put off the poll of `mr`: `litellm`, its proxy, is busy
    /// making or changing other objects (a burst of new resources goes
    /// first), and the poll has not been put off for a whole `poll`
    /// interval (at most five minutes) already: drift is found at most one
    /// interval late.
    fn defer_poll<K: ManagedKind>(
        &self,
        mr: &K,
        poll: Duration,
        litellm: &crate::litellm::Client,
    ) -> bool {
        let uid = mr.meta().uid.as_deref().unwrap_or_default();
        let busy = is_poll(mr) && litellm.busy(BUSY_WINDOW);
        self.deferred.put_off(uid, busy, poll.min(MAX_PUT_OFF))
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, HashMap<String, u32>> {
        self.failures
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn owner<K: ManagedKind>(&self, mr: &K) -> Owner {
        Owner {
            cluster: self.cluster_id.clone(),
            namespace: mr.namespace().unwrap_or_default(),
            name: mr.name_any(),
            uid: mr.meta().uid.clone().unwrap_or_default(),
        }
    }
}

/// Why a reconciliation failed. Messages name the cause and never hold a
/// secret (see [`ExternalError`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Unresolved(#[from] Unresolved),
    #[error(transparent)]
    External(#[from] ExternalError),
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// A combination of management policies Crossplane does not support.
    #[error(
        "spec.managementPolicies is set to a non-supported combination: {0}; supported are \
         those of Crossplane's managed reconciler, such as [\"*\"], [\"Observe\"], \
         [\"Observe\",\"Create\",\"Update\",\"Delete\"] and []"
    )]
    UnsupportedPolicies(String),
    /// Deletion cannot proceed without the user's decision.
    #[error("{0}")]
    Blocked(String),
    /// An error as reported: its text scrubbed of every secret value read
    /// during the reconciliation (see [`Scrubber`]).
    #[error("{message}")]
    Reported {
        reason: &'static str,
        message: String,
        /// The proxy's `Retry-After`, honoured instead of the backoff.
        retry_after: Option<Duration>,
    },
    /// The error of one step of Crossplane's managed reconciler, which
    /// names the event (see [`Step::reason`]). Its text is the error's.
    #[error("{}", .0.error)]
    Failed(Box<Failed<Error>>),
}

impl From<Failed<Error>> for Error {
    fn from(failed: Failed<Error>) -> Self {
        Error::Failed(Box::new(failed))
    }
}

impl From<Failed<ExternalError>> for Error {
    fn from(failed: Failed<ExternalError>) -> Self {
        Error::Failed(Box::new(Failed {
            step: failed.step,
            error: Error::External(failed.error),
        }))
    }
}

/// Tags errors of `step`: `.map_err(at(Step::ResolveReferences))`.
fn at<E: Into<Error>>(step: Step) -> impl FnOnce(E) -> Error {
    move |error| Error::Failed(Box::new(Failed::at(step)(error)))
}

impl Error {
    /// The step that failed, for an error of one.
    pub fn step(&self) -> Option<Step> {
        match self {
            Error::Failed(failed) => Some(failed.step),
            _ => None,
        }
    }

    /// A team or budget it references is missing or not Ready yet: the
    /// controllers wake the resource when it becomes Ready
    /// (`controllers::keys_waiting_for`), so retrying sooner only costs.
    fn waits_for_reference(&self) -> bool {
        matches!(
            self.cause(),
            Error::Unresolved(Unresolved::RefMissing { .. } | Unresolved::RefNotReady { .. })
        )
    }

    /// A reference being made, by a resource that has not reported either
    /// and was created less than [`UNREPORTED_FOR`] ago: a new key in a new
    /// team, applied together. crossplane-runtime would report it
    /// (`Synced=False`, an event) and requeue; here the resource waits
    /// without a word (no status, no event) until the reference's first
    /// reconciliation ends: Ready wakes it at once, anything else is seen
    /// when it looks again and reported as usual. Two Kubernetes writes
    /// fewer for every key applied with its team.
    fn waits_unreported<K: ManagedKind>(&self, mr: &K, now: Timestamp) -> bool {
        let first = matches!(
            self.cause(),
            Error::Unresolved(Unresolved::RefNotReady { first: true, .. })
        );
        let young = mr
            .meta()
            .creation_timestamp
            .as_ref()
            .is_some_and(|created| {
                Duration::try_from(now.duration_since(created.0))
                    .is_ok_and(|age| age < UNREPORTED_FOR)
            });
        first && young && !crate::provider::managed::contract::facts(mr).reported
    }

    /// The error without the step it stopped.
    fn cause(&self) -> &Error {
        match self {
            Error::Failed(failed) => failed.error.cause(),
            other => other,
        }
    }

    /// Metric label.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Failed(failed) => failed.error.reason(),
            Error::Unresolved(Unresolved::Kube(_)) | Error::Kube(_) => "kubernetes",
            Error::Unresolved(_) => "unresolved",
            Error::External(ExternalError::LiteLLM(_)) => "litellm",
            Error::External(ExternalError::Kube(_) | ExternalError::Stale(_)) => "kubernetes",
            Error::External(ExternalError::Invalid(_)) => "invalid",
            Error::External(ExternalError::Unavailable { .. }) => "unavailable",
            Error::Reported { reason, .. } => reason,
            Error::UnsupportedPolicies(_) => "invalid",
            Error::Blocked(_) => "blocked",
        }
    }
}

impl Error {
    /// How long the proxy asked to wait before the next try (HTTP 429/503
    /// with `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Failed(failed) => failed.error.retry_after(),
            Error::External(ExternalError::LiteLLM(err)) => err.retry_after(),
            Error::Reported { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A write lost a race with another writer (HTTP 409): the next
    /// reconciliation reads the new version and tries again. Like
    /// crossplane-runtime's `SilentlyRequeueOnConflict`, such an error is
    /// neither an event nor a `ReconcileError` condition.
    pub fn is_conflict(&self) -> bool {
        let conflict =
            |err: &kube::Error| matches!(err, kube::Error::Api(status) if status.code == 409);
        match self {
            Error::Failed(failed) => failed.error.is_conflict(),
            Error::Kube(err) | Error::Unresolved(Unresolved::Kube(err)) => conflict(err),
            Error::External(ExternalError::Kube(err)) => conflict(err),
            // A stale read is answered as a lost write race is.
            Error::External(ExternalError::Stale(_)) => true,
            _ => false,
        }
    }
}

/// crossplane-runtime's note of a paused resource, with the reason
/// `ReconciliationPaused`.
pub const PAUSED_NOTE: &str =
    "Reconciliation is paused either through the `spec.managementPolicies` or the pause annotation";

/// Delay before the retry of a reconciliation that lost a write race.
const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// The `crossplane.io/poll-interval` of `mr`, or the default; unbounded
/// (see [`Context::poll_interval`]). Text that is no positive Go duration
/// counts as absent.
pub fn poll_interval<K: ManagedKind>(mr: &K, default: Duration) -> Duration {
    mr.annotations()
        .get(POLL_INTERVAL)
        .and_then(|text| timing::parse_go_duration(text))
        .unwrap_or(default)
}

/// Why a resource is paused: not a failure but an outcome, which keeps a
/// deletion waiting too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Pause {
    #[error("reconciliation is paused by the {PAUSED} annotation")]
    Annotation,
    #[error("reconciliation is paused: spec.managementPolicies is empty")]
    Policies,
}

/// The `crossplane.io/reconcile-requested-at` token of `mr` not handled yet.
fn reconcile_request<K: ManagedKind>(mr: &K) -> Option<&str> {
    let token = mr.annotations().get(RECONCILE_REQUESTED_AT)?;
    let handled = mr
        .managed_status()
        .and_then(|s| s.last_handled_reconcile_at.as_deref());
    (!token.is_empty() && handled != Some(token.as_str())).then_some(token.as_str())
}

/// Why `mr` is paused, if it is: the annotation, or empty policies.
fn paused<K: ManagedKind>(mr: &K) -> Option<Pause> {
    if paused_by_annotation(mr.annotations()) {
        return Some(Pause::Annotation);
    }
    paused_by_policies(&mr.managed().management_policies).then_some(Pause::Policies)
}

/// Refuses management policies Crossplane does not support.
fn check_policies<K: ManagedKind>(mr: &K) -> Result<(), Error> {
    let policies = &mr.managed().management_policies;
    if supported_management_policies(policies) {
        return Ok(());
    }
    let listed = serde_json::to_string(policies).unwrap_or_default();
    Err(Error::UnsupportedPolicies(listed))
}

/// A reconciliation of `meta` after `after`, noted for `workqueue_depth`:
/// in the kind's poll queue ([`Polls`], which hands it to the controller
/// when due) where it takes it, else `Action::requeue(after)`.
fn requeue<K: ManagedKind>(ctx: &Context, meta: &kube::api::ObjectMeta, after: Duration) -> Action {
    requeue_with::<K>(ctx, meta, after, None)
}

/// [`requeue`], the poll to begin with `memo` (see [`polls`](crate::provider::watch::polls)).
fn requeue_with<K: ManagedKind>(
    ctx: &Context,
    meta: &kube::api::ObjectMeta,
    after: Duration,
    memo: Option<Memo>,
) -> Action {
    if queue_poll::<K>(ctx, meta, after, memo) {
        Action::await_change()
    } else {
        ctx.metrics
            .requeue(series::managed_controller::<K>(), &object_key(meta), after)
    }
}

/// A poll of `meta` after `after`, beginning with `memo`, in the kind's poll
/// queue and noted for `workqueue_depth`; `false`, and nothing queued or
/// noted, where the queue does not take it.
fn queue_poll<K: ManagedKind>(
    ctx: &Context,
    meta: &kube::api::ObjectMeta,
    after: Duration,
    memo: Option<Memo>,
) -> bool {
    let key = object_key(meta);
    let queued = ctx
        .polls
        .schedule_with(K::NOUN, &key, after, ctx.poll_tick, memo);
    if queued {
        ctx.metrics
            .requeued(series::managed_controller::<K>(), &key, after);
    }
    queued
}

/// Reconciles one managed resource of any kind, measured as
/// controller-runtime measures a reconciliation.
pub async fn reconcile<K: ManagedKind>(mr: Arc<K>, ctx: Arc<Context>) -> Result<Action, Error> {
    reconcile_with(mr, ctx, &KindConnecter).await
}

/// [`reconcile`] with the [`External`](contract::External) that
/// `connecter` makes: the kind's own, or a fake in the engine's tests.
pub async fn reconcile_with<K: ManagedKind, C: Connecter<K>>(
    mr: Arc<K>,
    ctx: Arc<Context>,
    connecter: &C,
) -> Result<Action, Error> {
    // Before anything is read: what the poll queue's memo is valid from.
    let since = ctx.polls.changes().now();
    // Its namespace's share of the kind's places taken
    // ([`places`](crate::provider::watch::places)): it ends at once, doing
    // nothing and keeping its queued poll, and starts again when one of
    // its namespace's places frees.
    let Some(_place) = ctx.places.enter_object(K::NOUN, mr.meta()) else {
        ctx.metrics.waited_for_place(K::NOUN);
        return Ok(Action::await_change());
    };
    let key = object_key(mr.meta());
    // Whatever brought this reconciliation, it asks for its own requeue.
    let brought = ctx.polls.cancel(K::NOUN, &key);
    let began = Began { since, brought };
    if ctx.written.behind(mr.meta()) {
        // The watch has not delivered the provider's own last write yet.
        return Ok(requeue::<K>(&ctx, mr.meta(), CACHE_BEHIND_RECHECK));
    }
    let running = ctx
        .metrics
        .reconciling(series::managed_controller::<K>(), &key);
    let (result, measured) = reconcile_managed(mr, &key, began, &ctx, connecter).await;
    // A requeue the poll queue took reads as `await_change`; it is
    // measured as the requeue it is.
    let measured = match &result {
        Ok(action)
            if measured == ReconcileResult::Success
                && *action == Action::await_change()
                && ctx.polls.is_scheduled(K::NOUN, &key) =>
        {
            ReconcileResult::RequeueAfter
        }
        _ => measured,
    };
    running.finish(measured);
    result
}

/// When a reconciliation began ([`Changes::now`](crate::provider::watch::changes::Changes::now)),
/// and what brought it.
#[derive(Clone, Copy)]
struct Began {
    since: u64,
    brought: Brought,
}

/// The reconciliation of `mr` (`key`: its `namespace/name`) and its
/// `result` label.
async fn reconcile_managed<K: ManagedKind, C: Connecter<K>>(
    mr: Arc<K>,
    key: &str,
    began: Began,
    ctx: &Arc<Context>,
    connecter: &C,
) -> (Result<Action, Error>, ReconcileResult) {
    ctx.metrics.reconciled(K::NOUN);
    let gvk = series::gvk::<K>();
    let meta = mr.meta();
    let uid = meta.uid.clone().unwrap_or_default();
    let created = meta.creation_timestamp.as_ref().map(|t| t.0);
    let deletion_requested = meta.deletion_timestamp.as_ref().map(|t| t.0);
    let finalizing = deletion_requested.is_some() && has_finalizer(&*mr);
    let synced = mr
        .managed_status()
        .and_then(|s| find_condition(&s.conditions, SYNCED))
        .map(|c| c.status.clone());
    ctx.metrics
        .first_reconcile(gvk, &uid, created, synced.as_deref());
    let api: Api<K> = Api::namespaced(ctx.client.clone(), &mr.namespace().unwrap_or_default());
    let scrubber = Scrubber::default();
    let result = if deletion_requested.is_none() {
        // A resource without the finalizer yet gets it with its first
        // write, before anything is looked up or created in LiteLLM
        // (`ensure_id`), not in a write and a reconciliation of its own;
        // until then nothing has been done for it in LiteLLM, so its
        // deletion has nothing to undo.
        apply(&api, mr, ctx, &scrubber, began, connecter)
            .await
            .map(Ended::Requeue)
    } else if finalizing {
        // Boxed: a poll's future need not hold room for a deletion.
        Box::pin(finalize(&api, mr, ctx, &scrubber, connecter)).await
    } else {
        // Being deleted, and the provider's finalizer gone: nothing of its
        // own is left to do.
        Ok(Ended::Released)
    };
    match result {
        Ok(ended) => {
            ctx.failures().remove(&uid);
            let action = match ended {
                Ended::Requeue(action) => action,
                Ended::Released => {
                    if finalizing {
                        // crossplane-runtime's recordDeleted.
                        ctx.metrics.deleted(gvk, &uid, deletion_requested);
                    }
                    Action::await_change()
                }
            };
            let measured = result_of::<Error>(&Ok(action.clone()));
            (Ok(action), measured)
        }
        Err(err) if err.is_conflict() => {
            tracing::debug!(kind = K::NOUN, error = %err, "write conflict; requeueing");
            ctx.metrics.failed(K::NOUN, "conflict");
            (
                Ok(ctx
                    .metrics
                    .requeue(series::managed_controller::<K>(), key, CONFLICT_REQUEUE)),
                ReconcileResult::Requeue,
            )
        }
        // What the error policy logs is scrubbed too.
        Err(err) => (
            Err(Error::Reported {
                reason: err.reason(),
                message: scrubber.scrub(&err.to_string()),
                retry_after: err.retry_after(),
            }),
            ReconcileResult::Error,
        ),
    }
}

/// [`reconcile`] for an object of a list or watch that kube-rs could not
/// have read (see [`tolerant`]): a readable one is reconciled, an
/// unreadable one is reported on itself (`Synced=False` and `Ready=False`
/// with the reason, and a `CannotReadResource` event the first time) and
/// otherwise left alone until it changes.
pub async fn reconcile_tolerant<K: ManagedKind>(
    object: Arc<Tolerant<K>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let unreadable = match object.read() {
        Ok(mr) => {
            if let Some(uid) = mr.meta().uid.as_deref() {
                ctx.unreadable.forget(uid);
            }
            return reconcile(mr, ctx).await;
        }
        Err(unreadable) => unreadable,
    };
    let running = ctx.metrics.reconciling(
        series::managed_controller::<K>(),
        &object_key(&unreadable.metadata),
    );
    let result = report_unreadable(&object, &unreadable, &ctx).await;
    running.finish(result_of(&result));
    result
}

async fn report_unreadable<K: ManagedKind>(
    object: &Tolerant<K>,
    unreadable: &tolerant::Unreadable,
    ctx: &Context,
) -> Result<Action, Error> {
    ctx.metrics.reconciled(K::NOUN);
    ctx.metrics.failed(K::NOUN, "unreadable");
    let namespace = unreadable.metadata.namespace.clone().unwrap_or_default();
    let name = unreadable.metadata.name.clone().unwrap_or_default();
    let (since, first) = ctx.unreadable.since(unreadable);
    tracing::warn!(kind = K::NOUN, %namespace, %name, error = %unreadable.error, "cannot read the resource");
    let conditions = unreadable.conditions(
        &[
            (READY, reason::UNAVAILABLE),
            (SYNCED, reason::RECONCILE_ERROR),
        ],
        &since,
    );
    let api: Api<Tolerant<K>> = Api::namespaced(ctx.client.clone(), &namespace);
    tolerant::write_status(&api, unreadable, json!({ "conditions": conditions })).await?;
    if first {
        publish_event(
            ctx,
            object,
            EventType::Warning,
            "CannotReadResource",
            unreadable.message(),
        )
        .await;
    }
    Ok(Action::await_change())
}

/// [`error_policy`] for [`reconcile_tolerant`].
pub fn error_policy_tolerant<K: ManagedKind>(
    object: Arc<Tolerant<K>>,
    err: &Error,
    ctx: Arc<Context>,
) -> Action {
    match object.read() {
        Ok(mr) => error_policy(mr, err, ctx),
        Err(unreadable) => {
            tracing::warn!(kind = K::NOUN, error = %err, "reporting an unreadable resource failed");
            requeue::<K>(&ctx, &unreadable.metadata, ctx.default_poll_interval)
        }
    }
}

/// Retry after a failure: exponential backoff per resource, capped at its
/// poll interval.
pub fn error_policy<K: ManagedKind>(mr: Arc<K>, err: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.failed(K::NOUN, err.reason());
    tracing::warn!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), name = %mr.name_any(), error = %err, "reconciliation failed");
    let uid = mr.meta().uid.clone().unwrap_or_default();
    let attempt = {
        let mut failures = ctx.failures();
        let attempt = failures.entry(uid).or_insert(0);
        *attempt = attempt.saturating_add(1);
        *attempt
    };
    if let Some(wait) = err.retry_after() {
        // As asked by the proxy; the backoff goes on counting meanwhile.
        return requeue::<K>(&ctx, mr.meta(), wait.max(Duration::from_millis(100)));
    }
    requeue::<K>(
        &ctx,
        mr.meta(),
        timing::backoff(attempt, ctx.poll_interval(&*mr)),
    )
}

/// Whether the status being built says `Ready=True`.
fn ready_now<K: ManagedKind>(status: &StatusWriter<K>) -> bool {
    conditions::is_true(&status.new.conditions, READY)
}

/// The status being built for one reconciliation; written once, at the end,
/// and only if it changed.
struct StatusWriter<K: ManagedKind> {
    /// The resource as given: its status is what was there (read, not
    /// copied, so a poll copies the status once).
    given: Arc<K>,
    new: ManagedStatus<K::AtProvider>,
    generation: Option<i64>,
    now: String,
}

/// What a resource without a status has: no conditions, no observation.
fn empty_status<O>() -> ManagedStatus<O> {
    ManagedStatus {
        conditions: Vec::new(),
        at_provider: None,
        observed_generation: None,
        last_handled_reconcile_at: None,
    }
}

impl<K: ManagedKind> StatusWriter<K> {
    fn new(mr: &Arc<K>) -> Self {
        Self {
            new: mr.managed_status().cloned().unwrap_or_else(empty_status),
            given: mr.clone(),
            generation: mr.meta().generation,
            now: format!("{:.0}", Timestamp::now()),
        }
    }

    /// Whether the status built differs from the one given.
    fn changed(&self) -> bool {
        match self.given.managed_status() {
            Some(old) => *old != self.new,
            None => self.new != empty_status(),
        }
    }

    fn set(&mut self, mut condition: Condition) {
        condition.observed_generation = self.generation;
        conditions::set(&mut self.new.conditions, condition, &self.now);
    }

    async fn write(self, api: &Api<K>, name: &str, written: &Written) -> Result<(), kube::Error> {
        self.write_if_current(api, name, None, written).await
    }

    /// `Synced=False` with crossplane-runtime's `ReconcileError` reason.
    fn reconcile_error(&mut self, message: &str) {
        self.set(condition(
            SYNCED,
            false,
            reason::RECONCILE_ERROR,
            Some(message.to_owned()),
        ));
    }

    /// Writes with `resource_version` as precondition when given: a status
    /// built from a cached copy older than the last status write would
    /// replace its conditions wholesale (dropping a kind condition such as
    /// `KeyReplaced`); the precondition turns that into a conflict, which
    /// requeues silently and reads again.
    async fn write_if_current(
        mut self,
        api: &Api<K>,
        name: &str,
        resource_version: Option<String>,
        written: &Written,
    ) -> Result<(), kube::Error> {
        // As crossplane-runtime's ObservedGenerationPropagationManager.
        if self.generation.is_some() {
            self.new.observed_generation = self.generation;
        }
        if !self.changed() {
            return Ok(());
        }
        // Boxed: a poll writes nothing, and its future need not hold room
        // for the request.
        Box::pin(self.patch(api, name, resource_version, written)).await
    }

    async fn patch(
        self,
        api: &Api<K>,
        name: &str,
        resource_version: Option<String>,
        written: &Written,
    ) -> Result<(), kube::Error> {
        let old = match self.given.managed_status() {
            Some(old) => serde_json::to_value(old),
            None => serde_json::to_value(empty_status::<K::AtProvider>()),
        };
        let status = removing(
            &old.unwrap_or_default(),
            serde_json::to_value(&self.new).unwrap_or_default(),
        );
        let patch = match resource_version {
            Some(rv) => json!({ "metadata": {"resourceVersion": rv}, "status": status }),
            None => json!({ "status": status }),
        };
        let patched = api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        written.wrote(patched.meta());
        Ok(())
    }
}

/// `new` as a JSON merge patch over `old`: every field of `new`, and a
/// `null` for each field of an object in `old` that `new` no longer has (a
/// merge patch keeps what it does not name, so an observation that lost a
/// field, such as a model's detached credential, would otherwise stay in
/// status for good). Lists are replaced whole.
fn removing(old: &serde_json::Value, new: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match (old, new) {
        (Value::Object(old), Value::Object(mut new)) => {
            for (key, before) in old {
                match new.remove(key) {
                    Some(after) => {
                        let after = removing(before, after);
                        new.insert(key.clone(), after);
                    }
                    None => {
                        new.insert(key.clone(), Value::Null);
                    }
                }
            }
            Value::Object(new)
        }
        (_, new) => new,
    }
}

async fn publish_event<K: kube::Resource<DynamicType = ()>>(
    ctx: &Context,
    mr: &K,
    type_: EventType,
    reason: &str,
    note: String,
) {
    // Boxed: a poll publishes none, and its future need not hold room for
    // the request.
    Box::pin(ctx.recorder.publish_best_effort(mr, type_, reason, note)).await;
}

/// `Synced=False` with reason `ReconcilePaused`, and crossplane-runtime's
/// `ReconciliationPaused` event.
async fn report_paused<K: ManagedKind>(
    api: &Api<K>,
    mr: &K,
    ctx: &Context,
    mut status: StatusWriter<K>,
    why: Pause,
) -> Result<(), Error> {
    status.set(condition(
        SYNCED,
        false,
        reason::RECONCILE_PAUSED,
        Some(why.to_string()),
    ));
    status.write(api, &mr.name_any(), &ctx.written).await?;
    publish_event(
        ctx,
        mr,
        EventType::Normal,
        "ReconciliationPaused",
        PAUSED_NOTE.into(),
    )
    .await;
    Ok(())
}

/// Crossplane's reconciliation of a resource that is not being deleted:
/// paused, invalid policies, or observe and act, then the status, events,
/// metrics and when to look again.
async fn apply<K: ManagedKind, C: Connecter<K>>(
    api: &Api<K>,
    mr: Arc<K>,
    ctx: &Context,
    scrubber: &Scrubber,
    began: Began,
    connecter: &C,
) -> Result<Action, Error> {
    let name = mr.name_any();
    let mut status = StatusWriter::<K>::new(&mr);
    if let Some(why) = paused(&*mr) {
        report_paused(api, &mr, ctx, status, why).await?;
        // Removing the annotation is a change to the resource, which wakes
        // the controller again.
        return Ok(Action::await_change());
    }
    if let Err(err) = check_policies(&*mr) {
        status.reconcile_error(&err.to_string());
        publish_event(
            ctx,
            &*mr,
            EventType::Warning,
            "CannotUseInvalidManagementPolicy",
            err.to_string(),
        )
        .await;
        status.write(api, &name, &ctx.written).await?;
        // Only a change of the policies can help.
        return Ok(Action::await_change());
    }
    if let Some(token) = reconcile_request(&*mr) {
        // Reported with whatever status this reconciliation writes.
        let note = format!("Handling reconcile request {token}");
        publish_event(
            ctx,
            &*mr,
            EventType::Normal,
            "ReconcileRequestHandled",
            note,
        )
        .await;
        status.new.last_handled_reconcile_at = Some(token.to_owned());
    }
    let poll = ctx.poll_interval(&*mr);
    let observed = observe_and_act(api, mr.clone(), ctx, scrubber, poll, began, connecter).await;
    match observed {
        Ok(Observed::PutOff) => {
            // A poll put off: spread over 2 to 4 s, so put-off polls do not
            // return together.
            let wait = DEFERRED_POLL.mul_f64(1.0 + timing::random_fraction());
            Ok(requeue::<K>(ctx, mr.meta(), wait))
        }
        Ok(Observed::LeftToPages) => {
            ctx.metrics.left_to_pages(K::NOUN);
            Ok(Action::await_change())
        }
        Ok(Observed::Acted(acted)) => {
            let given = Given {
                mr,
                since: began.since,
                poll,
            };
            record_acted(api, ctx, status, given, *acted).await
        }
        Err(failed) if failed.error.is_conflict() => Err(failed.into()),
        Err(failed) => report_failure(api, &*mr, ctx, scrubber, status, failed, poll).await,
    }
}

/// The resource a reconciliation was given, when it began (`since`, in
/// change counts) and its poll interval.
struct Given<K> {
    mr: Arc<K>,
    since: u64,
    poll: Duration,
}

/// Records what [`observe_and_act`] did: conditions, metrics, events, the
/// status (if the resource is still the version acted on), and when to
/// look again, with the memo a poll leaves for the next.
async fn record_acted<K: ManagedKind>(
    api: &Api<K>,
    ctx: &Context,
    mut status: StatusWriter<K>,
    given: Given<K>,
    acted: Acted<K>,
) -> Result<Action, Error> {
    let Acted {
        mr,
        id,
        mut synced,
        maintained,
        generation,
        litellm,
        instance_namespace,
    } = acted;
    status.generation = generation;
    let [ready, synced_condition] = contract::conditions(K::NOUN, &id, &synced.outcome);
    status.set(ready);
    status.set(synced_condition);
    for kind_condition in &maintained.conditions {
        status.set(kind_condition.clone());
    }
    if let Some((reason, note)) = &maintained.event {
        publish_event(ctx, &*mr, EventType::Normal, reason, note.clone()).await;
    }
    if synced.at_provider.is_some() {
        status.new.at_provider = synced.at_provider.take();
    }
    record_metrics(ctx, &*mr, &status, &synced.outcome);
    publish_outcome(ctx, &*mr, &id, &mut status, &synced.outcome).await;
    // What the provider wrote before (id, late init, a rotation): only a
    // resource other than the one given was written (a poll writes
    // nothing, and would only note the version the cache already has).
    let rewritten = !Arc::ptr_eq(&mr, &given.mr);
    if rewritten {
        ctx.written.wrote(mr.meta());
    }
    // A poll that found the object as it was and changed nothing anywhere
    // leaves its read for the next poll to repeat (`polls`); its own
    // writes, had it made any, would have counted as changes in its
    // namespace anyway. Only kinds whose observation was one read have one
    // to leave.
    let memo = match synced.probe.take() {
        Some(probe)
            if matches!(synced.outcome, Outcome::UpToDate)
                && is_poll(&*given.mr)
                && !rewritten
                && !status.changed()
                && maintained.mr.is_none()
                && maintained.event.is_none()
                && maintained.requeue_after.is_none()
                && !mr.polls_in_full() =>
        {
            memo(ctx, &given, probe, litellm, &instance_namespace)
        }
        _ => None,
    };
    status
        .write_if_current(api, &mr.name_any(), mr.resource_version(), &ctx.written)
        .await?;
    let next = timing::on_tick(
        timing::jittered(given.poll, ctx.poll_jitter, timing::random_fraction()),
        ctx.poll_tick,
    );
    // A created object the create's answer did not show as Available is
    // observed again at once (crossplane-runtime requeues after every
    // create): the status just written wakes nobody (see
    // `controllers::desired_state`).
    let soon = match &synced.outcome {
        Outcome::Created(creation) if !creation.available => Some(Duration::ZERO),
        _ => maintained.requeue_after,
    };
    Ok(requeue_with::<K>(
        ctx,
        mr.meta(),
        soon.map_or(next, |soon| soon.min(next)),
        memo,
    ))
}

/// The series of an outcome: found up to date (and so the time to
/// readiness), or drift corrected.
fn record_metrics<K: ManagedKind>(
    ctx: &Context,
    mr: &K,
    status: &StatusWriter<K>,
    outcome: &Outcome,
) {
    let gvk = series::gvk::<K>();
    let uid = mr.meta().uid.clone().unwrap_or_default();
    match outcome {
        Outcome::UpToDate
        | Outcome::Created(Creation {
            available: true, ..
        }) => {
            let created = mr.meta().creation_timestamp.as_ref().map(|t| t.0);
            let ready = ready_now(status);
            ctx.metrics.up_to_date(gvk, &uid, created, ready);
        }
        Outcome::Updated(_) => ctx.metrics.drift_corrected(gvk, &uid),
        _ => {}
    }
}

/// The log line and event of an outcome, as crossplane-runtime's managed
/// reconciler records them, and a created object's kind condition.
async fn publish_outcome<K: ManagedKind>(
    ctx: &Context,
    mr: &K,
    id: &str,
    status: &mut StatusWriter<K>,
    outcome: &Outcome,
) {
    let name = mr.name_any();
    match outcome {
        Outcome::Created(creation) => {
            if let Some(kind_condition) = &creation.condition {
                status.set(kind_condition.clone());
            }
            tracing::info!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), %name, %id, "created");
            publish_event(
                ctx,
                mr,
                EventType::Normal,
                "CreatedExternalResource",
                format!("created LiteLLM {} {id}", K::NOUN),
            )
            .await;
        }
        Outcome::Updated(diff) => {
            tracing::info!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), %name, %id, fields = ?diff.fields(), "updated");
            publish_event(
                ctx,
                mr,
                EventType::Normal,
                "UpdatedExternalResource",
                format!("updated {}", diff.fields().join(", ")),
            )
            .await;
        }
        Outcome::Refused(_) | Outcome::Missing => {
            let [_, synced_condition] = contract::conditions(K::NOUN, id, outcome);
            // Missing under policies without Create is what
            // crossplane-runtime reports as an observation that failed;
            // refusing another owner's object has no counterpart there.
            let reason = match outcome {
                Outcome::Missing => Step::Observe.reason(),
                _ => "CannotManageExternalResource",
            };
            publish_event(
                ctx,
                mr,
                EventType::Warning,
                reason,
                synced_condition.message.unwrap_or_default(),
            )
            .await;
        }
        Outcome::UpToDate | Outcome::DriftReported(_) => {}
    }
}

/// The memo a poll that found nothing new leaves for the next (see
/// [`polls`](crate::provider::watch::polls)), if every read it made came
/// from caches that count changes.
fn memo<K: ManagedKind>(
    ctx: &Context,
    given: &Given<K>,
    probe: crate::litellm::Probe,
    litellm: crate::litellm::Client,
    instance_namespace: &str,
) -> Option<Memo> {
    let mr = &given.mr;
    ctx.kube()
        .reads_counted::<K>(
            &mr.namespace().unwrap_or_default(),
            &mr.name_any(),
            mr.meta().resource_version.as_deref(),
            instance_namespace,
        )
        .then(|| {
            let left = memo_polls(given.poll, ctx.sync_period);
            memo_of(ctx, given, probe, litellm, instance_namespace, left)
        })
}

/// The memo of `probe` for the resource `given`, on `litellm`, that may
/// answer `left` polls.
fn memo_of<K: ManagedKind>(
    ctx: &Context,
    given: &Given<K>,
    probe: crate::litellm::Probe,
    litellm: crate::litellm::Client,
    instance_namespace: &str,
    left: u8,
) -> Memo {
    let meta = given.mr.meta();
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    Memo {
        probe,
        client: litellm,
        scope: ctx.polls.changes().scope(namespace, instance_namespace),
        since: given.since,
        interval: given.poll,
        metrics_id: ctx
            .metrics
            .object_id(meta.uid.as_deref().unwrap_or_default()),
        left,
        jitter: ctx.poll_jitter,
    }
}

/// A failed step: its event, `Synced=False` (and `Ready=False` where the
/// object is unusable), and the error for the controller's backoff; or,
/// for a reference not there or not Ready yet, a wait of one poll; or, for
/// a reference being made by a resource that has not reported yet, a short
/// wait and nothing else ([`Error::waits_unreported`]).
async fn report_failure<K: ManagedKind>(
    api: &Api<K>,
    mr: &K,
    ctx: &Context,
    scrubber: &Scrubber,
    mut status: StatusWriter<K>,
    failed: Failed<Error>,
    poll: Duration,
) -> Result<Action, Error> {
    let reason = failed.step.reason();
    let err = Error::from(failed);
    if err.waits_unreported(mr, Timestamp::now()) {
        tracing::debug!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), name = %mr.name_any(), reason = %err, "waiting, unreported, for a reference being made");
        return Ok(requeue::<K>(
            ctx,
            mr.meta(),
            FIRST_RECONCILIATION_WAIT.min(poll),
        ));
    }
    if let Error::External(ExternalError::Unavailable { ready_message, .. }) = err.cause() {
        status.set(condition(
            READY,
            false,
            reason::UNAVAILABLE,
            Some(scrubber.scrub(ready_message)),
        ));
    }
    let message = scrubber.scrub(&err.to_string());
    status.reconcile_error(&message);
    publish_event(ctx, mr, EventType::Warning, reason, message).await;
    status.write(api, &mr.name_any(), &ctx.written).await?;
    if err.waits_for_reference() {
        // Reported as crossplane-runtime reports it, but not a failure:
        // the resource waits (the controllers wake it when what it
        // references becomes Ready, else the poll looks again).
        return Ok(requeue::<K>(ctx, mr.meta(), poll));
    }
    Err(err)
}

/// How [`observe_and_act`] ended.
enum Observed<K: ManagedKind> {
    /// A poll put off while its proxy is busy ([`Context::defer_poll`]).
    PutOff,
    /// A first poll left to the next sweep of pages, queued there.
    LeftToPages,
    Acted(Box<Acted<K>>),
}

/// What [`observe_and_act`] did.
struct Acted<K: ManagedKind> {
    /// The resource as last written (the id or late-init patches change it).
    mr: Arc<K>,
    id: String,
    synced: contract::Synced<K>,
    maintained: Maintained<K>,
    /// The generation whose spec LiteLLM now matches, for the conditions.
    generation: Option<i64>,
    /// The proxy's client for background requests (a poll's).
    litellm: crate::litellm::Client,
    /// The namespace of the resource's LiteLLMInstance.
    instance_namespace: String,
}

/// References, instance, id, then Crossplane's observe/create/update.
/// `None`: a poll (interval `poll`) put off while its proxy is busy (see
/// [`Context::defer_poll`]).
async fn observe_and_act<K: ManagedKind, C: Connecter<K>>(
    api: &Api<K>,
    mr: Arc<K>,
    ctx: &Context,
    scrubber: &Scrubber,
    poll: Duration,
    began: Began,
    connecter: &C,
) -> Result<Observed<K>, Failed<Error>> {
    let mut generation = mr.meta().generation;
    let namespace = mr.namespace().unwrap_or_default();
    // Before anything is created, so a missing reference can never leave a
    // half-configured object behind.
    let kube = ctx.kube();
    let refs = resolve::references(&kube, &namespace, &mr.references())
        .await
        .map_err(Failed::at(Step::ResolveReferences))?;
    refs.secret_values().for_each(|s| scrubber.remember(s));
    let instance = resolve::instance(
        &kube,
        &ctx.clients,
        &namespace,
        &mr.managed().instance_ref,
        resolve::Purpose::Manage,
    )
    .await
    .map_err(Failed::at(Step::Connect))?;
    scrubber.remember(&instance.master_key);
    if ctx.defer_poll(&*mr, poll, &instance.client) {
        return Ok(Observed::PutOff);
    }
    let owner = ctx.owner(&*mr);
    // A poll gives way to the requests of resources still being made or
    // changed.
    let polled = is_poll(&*mr);
    let endpoint = instance.client.endpoint().to_owned();
    let background = instance.client.background();
    let litellm = match polled {
        true => background.clone(),
        false => instance.client.clone(),
    };
    let mut connection = ctx.connection(&instance, litellm, &owner, scrubber, refs, kube.clone());
    let (mr, id, fresh, drawn) = ensure_id(api, mr, &connection, &ctx.written)
        .await
        .map_err(Failed::at(Step::Initialize))?;
    connection.drawn = drawn;
    let external = connecter.connect(connection);
    // A new process's first poll of an object that a page of a list route
    // can answer reads nothing here: it is left to the next sweep of pages
    // with the others (a restart reads each kind's pages, not each object),
    // and the page's entry stands for the read when the sweep hands the
    // object back.
    if polled && began.brought == Brought::Elsewhere {
        if let Some(probe) = external.listed(&*mr, &id) {
            let given = Given {
                mr: mr.clone(),
                since: began.since,
                poll,
            };
            // Spent: the object reconciles in full once its page is read.
            let memo = memo_of(
                ctx,
                &given,
                probe,
                background.clone(),
                &instance.namespace,
                0,
            );
            if queue_poll::<K>(ctx, mr.meta(), ctx.poll_tick, Some(memo)) {
                return Ok(Observed::LeftToPages);
            }
        }
    }
    let synced = contract::sync(&*mr, &id, fresh, &owner, &instance.namespace, &external)
        .await
        .map_err(|failed| Failed {
            step: failed.step,
            error: Error::External(failed.error),
        })?;
    note_ownership::<K>(ctx, &endpoint, &id, &owner, &synced.outcome);
    // An object whose id LiteLLM chose (a key the proxy generated) is
    // recorded under it at once. Should this write fail, the kind finds the
    // object again on the next create (keys: by alias).
    let (mr, id) = match &synced.outcome {
        Outcome::Created(Creation {
            id: Some(chosen), ..
        }) => (
            record(api, &mr, Some(chosen), &ctx.written)
                .await
                .map_err(Failed::at(Step::UpdateManaged))?,
            chosen.clone(),
        ),
        _ => (mr, id),
    };
    // Upkeep of an object that exists and is this resource's: a key whose
    // Secret lost it, or whose rotation is due.
    let maintained = match &synced.outcome {
        Outcome::Updated(_) | Outcome::UpToDate | Outcome::DriftReported(_) => external
            .maintain(&*mr, &id, synced.at_provider.as_ref())
            .await
            .map_err(Failed::at(Step::Update))?,
        _ => Maintained::default(),
    };
    let (mr, id) = match &maintained.mr {
        Some(rewritten) => (
            Arc::new(rewritten.clone()),
            rewritten
                .annotations()
                .get(EXTERNAL_NAME)
                .cloned()
                .unwrap_or(id),
        ),
        None => (mr, id),
    };
    let mr = match &synced.late_init {
        Some(late) if *late != *mr.for_provider() => {
            late_initialize(api, mr, late, &mut generation, ctx, scrubber).await?
        }
        _ => mr,
    };
    publish_connection(&kube, &*mr, &synced, instance.consumer_endpoint).await?;
    Ok(Observed::Acted(Box::new(Acted {
        mr,
        id,
        synced,
        maintained,
        generation,
        litellm: background,
        instance_namespace: instance.namespace,
    })))
}

/// What this resource's observation or create established of its object's
/// ownership, for the keys that join it.
fn note_ownership<K: ManagedKind>(
    ctx: &Context,
    endpoint: &str,
    id: &str,
    owner: &Owner,
    outcome: &Outcome,
) {
    match outcome {
        Outcome::Created(creation) => ctx.verified.establish(
            endpoint,
            K::NOUN,
            creation.id.as_deref().unwrap_or(id),
            owner,
        ),
        Outcome::Updated(_) | Outcome::UpToDate | Outcome::DriftReported(_) => {
            ctx.verified.establish(endpoint, K::NOUN, id, owner)
        }
        Outcome::Refused(_) | Outcome::Missing => ctx.verified.forget(endpoint, K::NOUN, id),
    }
}

/// Writes `late`, the spec acted on with what LiteLLM has filled in, as
/// the resource's `forProvider` (Crossplane's late initialization), and
/// returns the resource as written. `generation` becomes the written one's
/// when the resource was not read anew since.
async fn late_initialize<K: ManagedKind>(
    api: &Api<K>,
    mr: Arc<K>,
    late: &K::Parameters,
    generation: &mut Option<i64>,
    ctx: &Context,
    scrubber: &Scrubber,
) -> Result<Arc<K>, Failed<Error>> {
    let patch = json!({
        "metadata": { "resourceVersion": mr.resource_version() },
        "spec": { "forProvider": late },
    });
    match patch_echoed(api, &*mr, &patch, &ctx.written).await {
        Ok(patched) => {
            // The spec acted on plus what LiteLLM has: up to date by
            // construction, so its generation is observed (unless the
            // resource was read anew since, with another spec).
            if mr.meta().generation == *generation {
                *generation = patched.meta().generation;
            }
            Ok(Arc::new(patched))
        }
        // A live value outside the CRD's bounds (a budget set in the UI
        // beyond what the schema admits): the API server refuses the spec,
        // so nothing is late-initialized rather than failing every poll.
        // The object is managed as is.
        Err(kube::Error::Api(status)) if status.code == 422 => {
            tracing::info!(
                kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(),
                name = %mr.name_any(), reason = %scrubber.scrub(&status.message),
                "late initialization refused by the API server; left out"
            );
            Ok(mr)
        }
        Err(err) => Err(Failed::at(Step::UpdateManaged)(err)),
    }
}

/// Writes the connection details and the proxy's `endpoint` to the
/// resource's connection Secret, if it names one and its object is its own.
async fn publish_connection<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    synced: &contract::Synced<K>,
    endpoint: String,
) -> Result<(), Failed<Error>> {
    let publishes = !matches!(synced.outcome, Outcome::Refused(_) | Outcome::Missing);
    let Some(secret_name) = mr.connection_secret_name().filter(|_| publishes) else {
        return Ok(());
    };
    let mut data: BTreeMap<String, Secret> = synced
        .connection_details
        .iter()
        .map(|(k, v)| (k.clone(), Secret::new(v.clone())))
        .collect();
    data.insert("endpoint".into(), Secret::new(endpoint));
    connection::publish(kube, mr, &secret_name, &data)
        .await
        .map_err(Failed::at(Step::PublishConnection))
}

/// The external name, chosen and recorded (with optimistic concurrency, so a
/// name set by hand meanwhile wins) before any create can happen.
///
/// Also the finalizer's first write: a resource without it gets it in the
/// same patch as its chosen external name, or, where it has one already
/// (an import, an observe-only resource), in a patch of its own, before
/// anything is created or looked up in LiteLLM.
///
/// Returns the resource as written, the id, how new the id is
/// ([`contract::Fresh`], see [`contract::sync`]: never persisted, so a
/// retry or a restart sees the id recorded and observes first), and the
/// secret it was drawn from in this call, if it was
/// ([`contract::Chosen::drawn`]).
async fn ensure_id<K: ManagedKind>(
    api: &Api<K>,
    mr: Arc<K>,
    connection: &Connection,
    written: &Written,
) -> Result<(Arc<K>, String, contract::Fresh, Option<Secret>), Error> {
    if let Some(id) = mr
        .annotations()
        .get(EXTERNAL_NAME)
        .filter(|id| !id.is_empty())
    {
        let id = id.clone();
        if has_finalizer(&*mr) {
            return Ok((mr, id, contract::Fresh::No, None));
        }
        let mr = record(api, &mr, None, written).await?;
        return Ok((mr, id, contract::Fresh::No, None));
    }
    let chosen = mr.choose_id(connection).await?;
    let fresh = contract::Fresh::of(&chosen);
    // Written with the version read as precondition, which had no external
    // name: the id is fresh, nothing can have been created under it yet.
    let mr = record(api, &mr, Some(&chosen.id), written).await?;
    Ok((mr, chosen.id, fresh, chosen.drawn))
}

/// Whether `mr` carries the provider's finalizer.
fn has_finalizer<K: ManagedKind>(mr: &K) -> bool {
    mr.finalizers().iter().any(|f| f == FINALIZER)
}

/// Writes `id` as external name and the finalizer where it is missing, in
/// one patch with optimistic concurrency, so a name set by hand meanwhile
/// wins and no finalizer another controller added since is lost (a merge
/// patch replaces the list whole). The reconciliation goes on with the
/// resource as written, so the write's event is an echo that wakes nothing.
async fn record<K: ManagedKind>(
    api: &Api<K>,
    mr: &K,
    id: Option<&str>,
    written: &Written,
) -> Result<Arc<K>, Error> {
    let mut metadata = serde_json::Map::new();
    metadata.insert("resourceVersion".into(), json!(mr.resource_version()));
    if let Some(id) = id {
        metadata.insert("annotations".into(), json!({ EXTERNAL_NAME: id }));
    }
    if !has_finalizer(mr) {
        let mut finalizers = mr.finalizers().to_vec();
        finalizers.push(FINALIZER.to_owned());
        metadata.insert("finalizers".into(), json!(finalizers));
    }
    let patch = json!({ "metadata": metadata });
    Ok(Arc::new(patch_echoed(api, mr, &patch, written).await?))
}

/// A merge patch of `mr` with its resourceVersion as precondition, whose
/// watch event is announced as an echo (see [`Written::expect_echo`]): the
/// reconciliation goes on with what the patch answers.
async fn patch_echoed<K: ManagedKind>(
    api: &Api<K>,
    mr: &K,
    patch: &serde_json::Value,
    written: &Written,
) -> Result<K, kube::Error> {
    written.expect_echo(mr.meta());
    let patched = api
        .patch(
            &mr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await;
    written.settle_echo(
        mr.meta().uid.as_ref(),
        patched.as_ref().ok().map(|p| p.meta()),
    );
    patched
}

/// How a reconciliation that did not fail ended.
enum Ended {
    /// Look again as the action says: after acting, or holding (paused,
    /// waiting for a reference or for dependents to go first).
    Requeue(Action),
    /// The resource's finalizer is released: it is gone for the provider.
    Released,
}

/// Crossplane's deletion of a resource that carries the provider's
/// finalizer: [`cleanup`], then, when it lets go, the finalizer removed
/// (with the resourceVersion as precondition, as [`record`] adds it, so no
/// finalizer another controller changed meanwhile is lost: a merge patch
/// replaces the list whole).
async fn finalize<K: ManagedKind, C: Connecter<K>>(
    api: &Api<K>,
    mr: Arc<K>,
    ctx: &Context,
    scrubber: &Scrubber,
    connecter: &C,
) -> Result<Ended, Error> {
    if let Some(held) = cleanup(api, &mr, ctx, scrubber, connecter).await? {
        return Ok(Ended::Requeue(held));
    }
    let others: Vec<&String> = mr.finalizers().iter().filter(|f| *f != FINALIZER).collect();
    let patch = json!({
        "metadata": { "resourceVersion": mr.resource_version(), "finalizers": others },
    });
    api.patch(
        &mr.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await?;
    Ok(Ended::Released)
}

/// Deletes the LiteLLM object (or releases it) and reports it; `Some`
/// when the deletion holds (paused, waiting for dependents) and the
/// finalizer stays.
async fn cleanup<K: ManagedKind, C: Connecter<K>>(
    api: &Api<K>,
    mr: &Arc<K>,
    ctx: &Context,
    scrubber: &Scrubber,
    connecter: &C,
) -> Result<Option<Action>, Error> {
    let name = mr.name_any();
    let mut status = StatusWriter::<K>::new(mr);
    if let Some(why) = paused(&**mr) {
        report_paused(api, mr, ctx, status, why).await?;
        // A paused resource is not deleted; lifting the pause is a change
        // that wakes it.
        return Ok(Some(Action::await_change()));
    }
    let others: Vec<&str> = mr
        .finalizers()
        .iter()
        .map(String::as_str)
        .filter(|f| *f != FINALIZER)
        .collect();
    if !others.is_empty() {
        // As crossplane-runtime: whoever else watches the resource may
        // still need the LiteLLM object; it goes when they have let go.
        let why = format!(
            "waiting for the other finalizers to be removed first: {}",
            others.join(", ")
        );
        status.set(condition(READY, false, reason::DELETING, Some(why)));
        status.write(api, &name, &ctx.written).await?;
        return Ok(Some(requeue::<K>(ctx, mr.meta(), dependents::RECHECK)));
    }
    status.set(condition(READY, false, reason::DELETING, None));
    let cleanup = match delete_external(mr, ctx, scrubber, connecter).await {
        Ok(Deletion::Done(cleanup)) => cleanup,
        Ok(Deletion::Waiting(why)) => {
            // Not a failure: the order of deletion at work.
            tracing::debug!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), %name, "{why}");
            status.set(condition(READY, false, reason::DELETING, Some(why)));
            status.write(api, &name, &ctx.written).await?;
            return Ok(Some(requeue::<K>(ctx, mr.meta(), dependents::RECHECK)));
        }
        Err(err) => {
            let message = scrubber.scrub(&err.to_string());
            status.reconcile_error(&message);
            if let (Some(step), false) = (err.step(), err.is_conflict()) {
                publish_event(ctx, &**mr, EventType::Warning, step.reason(), message).await;
            }
            status.write(api, &name, &ctx.written).await?;
            return Err(err);
        }
    };
    // The resource may be gone once the finalizer is released; no status
    // is written for it.
    report_cleanup(&**mr, ctx, &cleanup).await;
    Ok(None)
}

/// The event (or log line) of a deletion that let go.
async fn report_cleanup<K: ManagedKind>(mr: &K, ctx: &Context, cleanup: &Cleanup) {
    let name = mr.name_any();
    match cleanup {
        Cleanup::Refused(refusal) => {
            let note = format!(
                "released without deleting the LiteLLM {}: {}",
                K::NOUN,
                refusal.explain()
            );
            publish_event(
                ctx,
                mr,
                EventType::Warning,
                "ReleasedExternalResource",
                note,
            )
            .await;
        }
        Cleanup::Released(why) => {
            publish_event(
                ctx,
                mr,
                EventType::Normal,
                "ReleasedExternalResource",
                format!("released without deleting: {why}"),
            )
            .await;
        }
        Cleanup::Deleted => {
            tracing::info!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), %name, "deleted");
            let id = mr
                .annotations()
                .get(EXTERNAL_NAME)
                .cloned()
                .unwrap_or_default();
            publish_event(
                ctx,
                mr,
                EventType::Normal,
                "DeletedExternalResource",
                format!("deleted LiteLLM {} {id}", K::NOUN),
            )
            .await;
        }
        Cleanup::Gone => {
            // Nothing to delete: crossplane-runtime records no event either.
            tracing::info!(kind = K::NOUN, namespace = %mr.namespace().unwrap_or_default(), %name, "deleted");
        }
    }
}

/// What [`delete_external`] came to.
enum Deletion {
    Done(Cleanup),
    /// The resources whose objects join this one's go first (see
    /// [`dependents`]); looked at again every [`dependents::RECHECK`].
    Waiting(String),
}

async fn delete_external<K: ManagedKind, C: Connecter<K>>(
    mr: &Arc<K>,
    ctx: &Context,
    scrubber: &Scrubber,
    connecter: &C,
) -> Result<Deletion, Error> {
    let id = mr
        .annotations()
        .get(EXTERNAL_NAME)
        .map(String::as_str)
        .filter(|id| !id.is_empty());
    // Decided before the instance is needed: releasing must work even when
    // the instance is gone.
    let id = match contract::deletion_target(&**mr, id) {
        Ok(id) => id,
        Err(released) => return Ok(Deletion::Done(released)),
    };
    // Resources whose objects join this one go first; LiteLLM would take
    // them along (a team's keys) or refuse.
    let waiting_for = mr
        .dependents(&ctx.kube(), id)
        .await
        .map_err(at(Step::Delete))?;
    if !waiting_for.is_empty() {
        return Ok(Deletion::Waiting(
            waiting_for.describe(&mr.namespace().unwrap_or_default()),
        ));
    }
    let namespace = mr.namespace().unwrap_or_default();
    let namespace = namespace.as_str();
    let resolve = |kube: Kube| async move {
        resolve::instance(
            &kube,
            &ctx.clients,
            namespace,
            &mr.managed().instance_ref,
            resolve::Purpose::Delete,
        )
        .await
    };
    // From the caches when they have it ready (an instance is not deleted
    // while resources reference it, and a master key rotated a moment ago
    // fails the call, which is retried); anything else is read again from
    // the API server: whether the instance is gone decides between waiting
    // and releasing, which a lagging cache must not.
    let resolved = match resolve(ctx.kube()).await {
        Ok(instance) => Ok(instance),
        Err(_) => resolve(Kube::live(ctx.client.clone())).await,
    };
    let instance = match resolved {
        Ok(instance) => instance,
        Err(err @ Unresolved::InstanceMissing { .. }) => {
            if mr
                .annotations()
                .get(RELEASE_ON_MISSING_INSTANCE)
                .is_some_and(|v| v == "true")
            {
                return Ok(Deletion::Done(Cleanup::Released(
                    "its LiteLLMInstance is gone and release-on-missing-instance is set",
                )));
            }
            return Err(at(Step::Connect)(Error::Blocked(format!(
                "{err}: cannot delete LiteLLM {} {id}; annotate the resource with \
                 {RELEASE_ON_MISSING_INSTANCE}: \"true\" to release it without deleting",
                K::NOUN
            ))));
        }
        Err(err) => return Err(at(Step::Connect)(err)),
    };
    scrubber.remember(&instance.master_key);
    let owner = ctx.owner(&**mr);
    // Whatever happens next, what was established of it no longer stands.
    ctx.verified.forget(instance.client.endpoint(), K::NOUN, id);
    let external = connecter.connect(ctx.connection(
        &instance,
        instance.client.clone(),
        &owner,
        scrubber,
        // Deleting needs no references; they may be gone already.
        Resolved::default(),
        Kube::live(ctx.client.clone()),
    ));
    let cleanup =
        contract::cleanup(&**mr, Some(id), &owner, &instance.namespace, &external).await?;
    Ok(Deletion::Done(cleanup))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The futures of a reconciliation, by kind: each poll builds one and
    /// the controller moves it into its queue of running reconciliations,
    /// so every byte is copied at least twice per poll.
    #[tokio::test]
    async fn future_sizes() {
        use crate::api::{LiteLLMTeam, LiteLLMVirtualKey};
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let ctx = Arc::new(Context::new(client, "c", Metrics::default()));
        let team: LiteLLMTeam = serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam",
            "metadata": {"name": "t", "namespace": "n"},
            "spec": {"instanceRef": {"name": "p"}, "forProvider": {}}
        }))
        .unwrap();
        let key: LiteLLMVirtualKey = serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
            "metadata": {"name": "k", "namespace": "n"},
            "spec": {"instanceRef": {"name": "p"}, "forProvider": {}}
        }))
        .unwrap();
        let team = reconcile_tolerant(Arc::new(Tolerant::new(team)), ctx.clone());
        let key = reconcile_tolerant(Arc::new(Tolerant::new(key)), ctx.clone());
        eprintln!(
            "reconcile future: team {} bytes, key {} bytes",
            std::mem::size_of_val(&team),
            std::mem::size_of_val(&key)
        );
    }

    #[test]
    fn a_status_patch_removes_what_the_observation_lost() {
        let old = json!({
            "conditions": [{"type": "Ready"}, {"type": "KeyReplaced"}],
            "atProvider": {"modelId": "m", "credentialName": "ns.c",
                           "secretFingerprints": {"a": "sha256:1", "b": "sha256:2"}},
        });
        let new = json!({
            "conditions": [{"type": "Ready"}],
            "atProvider": {"modelId": "m", "secretFingerprints": {"a": "sha256:3"}},
        });
        assert_eq!(
            removing(&old, new),
            json!({
                "conditions": [{"type": "Ready"}],
                "atProvider": {"modelId": "m", "credentialName": null,
                               "secretFingerprints": {"a": "sha256:3", "b": null}},
            })
        );
        assert_eq!(removing(&json!(null), json!({"a": 1})), json!({"a": 1}));
    }

    fn api_error(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            reason: "Conflict".into(),
            ..Default::default()
        }))
    }

    #[test]
    fn only_write_conflicts_requeue_silently() {
        assert!(Error::Kube(api_error(409)).is_conflict());
        assert!(Error::External(ExternalError::Kube(api_error(409))).is_conflict());
        assert!(Error::Unresolved(Unresolved::Kube(api_error(409))).is_conflict());
        assert!(!Error::Kube(api_error(404)).is_conflict());
        assert!(!Error::Kube(api_error(500)).is_conflict());
        assert!(!Error::Blocked("annotate it".into()).is_conflict());
        assert!(!Error::UnsupportedPolicies("[]".into()).is_conflict());
        // A stale read is no HTTP status, and is answered the same way.
        let stale = Error::from(Failed {
            step: Step::Update,
            error: ExternalError::stale("the key's external name"),
        });
        assert!(stale.is_conflict());
        assert_eq!(stale.reason(), "kubernetes");
        assert_eq!(
            stale.to_string(),
            "the key's external name changed since it was read"
        );
        assert!(ExternalError::stale("x").is_retryable());
    }

    /// Only a resource that has not reported, created less than
    /// [`UNREPORTED_FOR`] ago, waits unreported, and only for a reference
    /// whose first reconciliation has not ended; anything else is reported.
    #[test]
    fn only_a_new_resource_waits_unreported_for_a_reference_being_made() {
        use crate::api::LiteLLMVirtualKey;
        let now: Timestamp = "2026-12-07T00:10:00Z".parse().unwrap();
        let key = |created: &str, synced: Option<&str>| -> LiteLLMVirtualKey {
            let conditions: Vec<serde_json::Value> = synced
                .map(|status| {
                    json!({"type": "Synced", "status": status, "reason": "R",
                           "lastTransitionTime": "2026-12-07T00:00:00Z"})
                })
                .into_iter()
                .collect();
            serde_json::from_value(json!({
                "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
                "metadata": {"name": "k", "namespace": "n", "creationTimestamp": created},
                "spec": {"instanceRef": {"name": "p"}, "forProvider": {}},
                "status": {"conditions": conditions}
            }))
            .unwrap()
        };
        let not_ready = |first: bool| {
            Error::from(Failed {
                step: Step::ResolveReferences,
                error: Error::Unresolved(Unresolved::RefNotReady {
                    field: "spec.forProvider.teamRef",
                    kind: "LiteLLMTeam".into(),
                    namespace: "n".into(),
                    name: "t".into(),
                    first,
                }),
            })
        };
        let missing = Error::from(Failed {
            step: Step::ResolveReferences,
            error: Error::Unresolved(Unresolved::RefMissing {
                field: "spec.forProvider.teamRef",
                kind: "LiteLLMTeam".into(),
                namespace: "n".into(),
                name: "t".into(),
            }),
        });
        let young = "2026-12-07T00:09:30Z";
        let old = "2026-12-07T00:08:59Z";
        let cases = [
            (
                "new, the team being made",
                not_ready(true),
                key(young, None),
                true,
            ),
            (
                "the team reported",
                not_ready(false),
                key(young, None),
                false,
            ),
            ("the team missing", missing, key(young, None), false),
            (
                "the key reported before",
                not_ready(true),
                key(young, Some("False")),
                false,
            ),
            (
                "the key older than a minute",
                not_ready(true),
                key(old, None),
                false,
            ),
        ];
        for (name, err, mr, want) in cases {
            assert_eq!(err.waits_unreported(&mr, now), want, "{name}");
        }
    }

    #[test]
    fn a_failed_step_names_the_event_and_keeps_the_cause() {
        let failed = Error::from(Failed {
            step: Step::Observe,
            error: ExternalError::Kube(api_error(409)),
        });
        assert_eq!(failed.step(), Some(Step::Observe));
        assert!(failed.is_conflict(), "a conflict stays one");
        assert_eq!(failed.reason(), "kubernetes");
        let refs = at(Step::ResolveReferences)(Error::Blocked("teamRef web not found".into()));
        assert_eq!(refs.step(), Some(Step::ResolveReferences));
        assert_eq!(
            refs.step().map(Step::reason),
            Some("CannotResolveResourceReferences")
        );
        assert_eq!(refs.to_string(), "teamRef web not found");
        assert_eq!(refs.reason(), "blocked");
        assert!(matches!(refs.cause(), Error::Blocked(_)));
        assert_eq!(Error::Blocked("annotate it".into()).step(), None);
        // The proxy's Retry-After survives the step that failed.
        let throttled = Error::from(Failed {
            step: Step::Create,
            error: ExternalError::LiteLLM(crate::litellm::Error::Throttled {
                op: "POST /team/new",
                detail: "HTTP 429".into(),
                asked: Duration::from_secs(4),
                retry_after: Duration::from_secs(3),
            }),
        });
        assert_eq!(throttled.retry_after(), Some(Duration::from_secs(3)));
    }
}
