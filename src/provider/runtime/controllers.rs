//! The entity controllers, each a `kube::runtime::Controller` driving
//! the generic [`reconcile`] for its kind.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use tokio_stream::{Stream, StreamExt};

use crate::api::{LiteLLMInstance, LiteLLMVirtualKey};

use crate::provider::managed::contract::ManagedKind;
use crate::provider::managed::reconciler::{error_policy_tolerant, reconcile_tolerant, Context};
use crate::provider::telemetry::metrics::{self, object_key, Metrics, Seen};
use crate::provider::watch::cache::Caches;
use crate::provider::watch::cache::{self, Cache, Reflected, Scope, Secrets, Stores};
use crate::provider::watch::joins::Joins;
use crate::provider::watch::places;
use crate::provider::watch::tolerant::Tolerant;

/// What the state gauges and the queue need of a cached object: an object
/// kube-rs cannot read exists, and is neither ready nor synced.
fn seen<K: ManagedKind>(object: &Tolerant<K>) -> Seen {
    let facts = object.facts();
    Seen {
        key: object_key(object.meta()),
        ready: facts.is_some_and(|facts| facts.ready),
        synced: facts.is_some_and(|facts| facts.synced),
    }
}

/// Feeds `metrics` from the controller's cache: crossplane-runtime's state
/// gauges list the managed resources from the manager's cache the same way.
fn watch<K: ManagedKind>(metrics: &Metrics, controller: &Controller<Tolerant<K>>) {
    let store = controller.store();
    metrics.watch(
        metrics::managed_controller::<K>(),
        Some(metrics::gvk::<K>()),
        move || store.state().iter().map(|o| seen(o)).collect(),
    );
}

/// SIGTERM and SIGINT, listened to once for every controller of the
/// process: the first asks each controller to take no more work and finish
/// what it runs, a second stops them at once, as kube-runtime's
/// `shutdown_on_signal` does. That one is a pair of signal streams per
/// controller, polled every time the controller's stream is (at every
/// reconciliation that starts or ends, every event); here a controller
/// waits on a watch channel, which costs a poll next to nothing.
#[derive(Clone)]
struct Signals(tokio::sync::watch::Receiver<u32>);

impl Signals {
    /// The signals and the listener, which runs until dropped.
    fn listen() -> (Self, impl Future<Output = ()>) {
        let (received, signals) = tokio::sync::watch::channel(0u32);
        let listener = async move {
            #[cfg(unix)]
            let mut terminate = {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(terminate) => terminate,
                    Err(err) => {
                        tracing::error!(error = %err, "cannot listen for SIGTERM; shutting down");
                        received.send_modify(|count| *count = u32::MAX);
                        // The controllers stop on their own; this branch
                        // must not end the ones it serves first.
                        return std::future::pending().await;
                    }
                }
            };
            loop {
                // A SIGINT that cannot be listened for never comes.
                #[cfg(unix)]
                tokio::select! {
                    _ = terminate.recv() => {}
                    Ok(()) = tokio::signal::ctrl_c() => {}
                }
                #[cfg(not(unix))]
                if tokio::signal::ctrl_c().await.is_err() {
                    return std::future::pending().await;
                }
                received.send_modify(|count| *count = count.saturating_add(1));
                match *received.borrow() {
                    1 => tracing::info!("shutting down: running reconciliations finish first"),
                    _ => tracing::info!("shutting down at once"),
                }
            }
        };
        (Signals(signals), listener)
    }

    /// Ready once `count` signals arrived; never when the listener is gone
    /// without one.
    fn received(&self, count: u32) -> impl Future<Output = ()> + Send + 'static {
        let mut signals = self.0.clone();
        async move {
            if signals.wait_for(|got| *got >= count).await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Runs one controller until shutdown, logging each outcome.
async fn drive<K: ManagedKind + Debug>(
    controller: Controller<Tolerant<K>>,
    ctx: Arc<Context>,
    signals: Signals,
) {
    watch(&ctx.metrics, &controller);
    let results = controller.graceful_shutdown_on(signals.received(1)).run(
        reconcile_tolerant::<K>,
        error_policy_tolerant::<K>,
        ctx,
    );
    let forced = signals.received(2);
    tokio::pin!(results, forced);
    loop {
        let result = tokio::select! {
            biased;
            () = &mut forced => break,
            result = results.next() => match result {
                Some(result) => result,
                None => break,
            },
        };
        match result {
            Ok((object, _)) => tracing::debug!(kind = K::NOUN, object = %object, "reconciled"),
            // error_policy has logged reconciler errors already; what
            // arrives here besides them are watch and queue failures.
            Err(err) => tracing::debug!(kind = K::NOUN, error = %err, "controller error"),
        }
    }
}

/// A resource that became Ready, as the resources that join it name it:
/// by its name in their namespace, or by its LiteLLM id.
struct Referenced<'a> {
    namespace: Option<&'a str>,
    name: &'a str,
    id: &'a str,
}

/// The resources of kind `U` that join `referenced` (a team, budget or
/// user that keys join, a credential that models use; by reference or by
/// id, in its namespace) and are not Ready and Synced: they have waited for
/// it (and their retry waits a poll interval, counting on this).
fn waiting_for<U: ManagedKind>(
    users: &[Arc<Tolerant<U>>],
    joins: Joins,
    referenced: &Referenced<'_>,
) -> Vec<ObjectRef<Tolerant<U>>> {
    users
        .iter()
        .filter(|user| match user.facts() {
            Some(facts) => {
                // Compared in place: this runs for every user of the kind
                // on every event of a Ready referenced resource.
                user.meta().namespace.as_deref() == referenced.namespace
                    && !(facts.ready && facts.synced)
                    && facts
                        .joins
                        .iter()
                        .any(|join| join.names(joins, referenced.name, referenced.id))
            }
            None => false,
        })
        .map(|user| ObjectRef::from_obj(&**user))
        .collect()
}

type Woken<U> = tokio::sync::mpsc::UnboundedSender<ObjectRef<Tolerant<U>>>;

/// Wakes the resources of one kind that wait for a resource that became
/// Ready (see [`waiting_for`]).
type Waker = Box<dyn Fn(&Referenced<'_>) + Send>;

/// The [`Waker`] of the resources of kind `U` (their cache `users`, their
/// controller's queue `wake`) that join a `joins`.
fn waker<U: ManagedKind>(users: Store<Tolerant<U>>, wake: Woken<U>, joins: Joins) -> Waker {
    Box::new(move |referenced| {
        for user in waiting_for(&users.state(), joins, referenced) {
            let _ = wake.send(user);
        }
    })
}

/// Passes a referenced resource's events on (those of `store`'s kind),
/// running `wakers` when it becomes Ready: at the first event that shows it
/// Ready, and again after one showed it not Ready. Later events of a
/// resource still Ready (a status write, every object of a relist) wake
/// nobody: whoever waited was woken when it became Ready, and each scan
/// reads every resource of the waking kind (a relist of N teams scanned N
/// keys N times).
fn waking<R: ManagedKind>(
    store: &Store<Tolerant<R>>,
    wakers: Vec<Waker>,
) -> impl FnMut(Result<Tolerant<R>, watcher::Error>) -> Result<Tolerant<R>, watcher::Error> {
    let store = store.clone();
    let mut ready = ReadySeen::default();
    move |event| {
        if let Ok(referenced) = &event {
            if ready.became_ready(referenced, store.len()) {
                let name = referenced.name_any();
                let facts = referenced.facts();
                let id = facts
                    .and_then(|facts| facts.external_name.as_deref())
                    .unwrap_or_default();
                let referenced = Referenced {
                    namespace: referenced.meta().namespace.as_deref(),
                    name: &name,
                    id,
                };
                for wake in &wakers {
                    wake(&referenced);
                }
            }
        }
        event
    }
}

/// The referenced resources last seen Ready, by a hash of their uid (eight
/// bytes each, not the uid).
#[derive(Default)]
struct ReadySeen(std::collections::HashSet<u64>);

impl ReadySeen {
    /// Whether `object` is Ready and was not when last seen. `cached` is
    /// how many objects of the kind the cache holds: deleted ones are not
    /// seen going, so past twice that (and a floor) the set starts over,
    /// which only costs one scan more per Ready object.
    fn became_ready<R: ManagedKind>(&mut self, object: &Tolerant<R>, cached: usize) -> bool {
        use std::hash::{Hash, Hasher};
        let Some(facts) = object.facts() else {
            return false;
        };
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        object.meta().uid.hash(&mut hasher);
        let uid = hasher.finish();
        if !facts.ready {
            self.0.remove(&uid);
            return false;
        }
        if self.0.len() > 1024.max(2 * cached) {
            self.0.clear();
        }
        self.0.insert(uid)
    }
}

/// What a change must touch to reconcile the object: its spec
/// (`generation`), annotations, finalizers or deletion. A write of the
/// status alone (the provider's own, every reconciliation) wakes nobody, as
/// crossplane-runtime's managed controllers filter with
/// `DesiredStateChanged`; whatever the provider must look at again after a
/// write of its own, it requeues. Labels, which that filter also watches,
/// are not kept in the caches ([`cache::strip_managed`]): nothing the
/// provider does depends on them.
///
/// kube-runtime's `predicate_filter` keeps the same comparison keyed by
/// each object's name, namespace and uid (three strings, about 200 bytes
/// an object); this keeps a keyed hash of the three beside the state's hash
/// (about 40 bytes), and like it forgets what it has not seen for an hour.
struct DesiredStateSeen {
    /// By a hash of the object's uid: its desired-state hash and when it
    /// was last seen (seconds since `started`).
    last: crate::provider::watch::prehashed::Map<u64, (u64, u32)>,
    /// Keys the uid hash, so that no object can be named to collide.
    uids: std::collections::hash_map::RandomState,
    started: std::time::Instant,
    swept: u32,
}

impl DesiredStateSeen {
    /// How long an entry stands unseen (kube-runtime's default TTL): an
    /// object unchanged for longer passes once more, and a deleted one
    /// (whose deletion this stream does not carry) is forgotten.
    const TTL_SECONDS: u32 = 3600;

    fn new() -> Self {
        Self {
            last: Default::default(),
            uids: std::collections::hash_map::RandomState::new(),
            started: std::time::Instant::now(),
            swept: 0,
        }
    }

    /// Whether `object` touches what a reconciliation acts on since it was
    /// last let through (or is new, or was not seen for the TTL).
    fn changed<K: ManagedKind>(&mut self, object: &Tolerant<K>) -> bool {
        let now = u32::try_from(self.started.elapsed().as_secs()).unwrap_or(u32::MAX);
        self.changed_at(object, now)
    }

    /// [`Self::changed`], `now` seconds after the stream started.
    fn changed_at<K: ManagedKind>(&mut self, object: &Tolerant<K>, now: u32) -> bool {
        use std::hash::BuildHasher;
        if now.saturating_sub(self.swept) >= Self::TTL_SECONDS {
            self.last
                .retain(|_, (_, seen)| now.saturating_sub(*seen) < Self::TTL_SECONDS);
            self.swept = now;
        }
        let meta = object.meta();
        let key = self.uids.hash_one((&meta.uid, &meta.namespace, &meta.name));
        let state = object.desired_state();
        match self.last.insert(key, (state, now)) {
            Some((before, seen)) => {
                before != state || now.saturating_sub(seen) >= Self::TTL_SECONDS
            }
            None => true,
        }
    }
}

/// A controller over [`Tolerant`] objects (one object kube-rs cannot read
/// does not stop the kind's list and watch for every other), fed by the
/// kind's one watch: `store` is the shared cache it fills, `stream` its
/// events.
///
/// Events of the provider's own writes that the reconciliation which made
/// them acts on ([`Context::echoes`]) wake nothing: they pass the predicate
/// first, so the next event is compared with the state they brought.
fn controller<K: ManagedKind + Debug>(
    store: Store<Tolerant<K>>,
    stream: impl Stream<Item = Result<Tolerant<K>, watcher::Error>> + Send + 'static,
    ctx: &Arc<Context>,
) -> Controller<Tolerant<K>> {
    // One namespace runs `--max-reconcile-rate` of the kind's
    // reconciliations at once; the controller runs a reserve beyond that
    // for the others (see `places`).
    let concurrency = places::controller_concurrency(ctx.concurrency);
    // Requeues the poll queue holds, and objects that waited for a place,
    // come back through this trigger.
    let (due, requeued) = tokio::sync::mpsc::unbounded_channel();
    let fire = places::trigger::<Tolerant<K>>(due);
    ctx.places.register(
        K::NOUN,
        ctx.concurrency,
        places::if_cached(store.clone(), fire.clone()),
    );
    ctx.polls.register(K::NOUN, fire, {
        let series = ctx
            .metrics
            .poll_series(metrics::managed_controller::<K>(), K::NOUN);
        move |key, memo, after, took, by_page| {
            series.polled(key, memo.metrics_id, after, took, by_page);
        }
    });
    let ctx = ctx.clone();
    let mut seen = DesiredStateSeen::new();
    let trigger = stream.filter(move |event| match event {
        Ok(object) => seen.changed(object) && !ctx.echoes(object.meta()),
        Err(_) => true,
    });
    Controller::for_stream(trigger, store)
        .with_config(controller::Config::default().concurrency(concurrency))
        .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(
            requeued,
        ))
}

/// Runs the controller of every kind of the registry
/// ([`managed_kinds!`](crate::managed_kinds)) until SIGTERM/Ctrl-C, over
/// all namespaces or only `namespace`. The key controller also watches the
/// connection Secrets it owns, so a deleted Secret is noticed.
pub async fn run(ctx: Arc<Context>, namespace: Option<String>) {
    build(ctx, namespace).0.await
}

/// A kind's watch events.
type Events<K> = std::pin::Pin<Box<dyn Stream<Item = Result<Tolerant<K>, watcher::Error>> + Send>>;

/// One kind's watch while the controllers are wired: its cache, its events
/// and its controller's queue of woken resources.
struct Pending<K: cache::Cached + Clone> {
    reflected: Reflected<Tolerant<K>>,
    stream: Events<K>,
    wake: Woken<K>,
    woken: tokio::sync::mpsc::UnboundedReceiver<ObjectRef<Tolerant<K>>>,
}

/// The controllers being wired, kind by kind: first every kind's watch
/// ([`Wiring::watch`]), so that each kind's wakers are known, then every
/// kind's controller ([`Wiring::controller`]), whose events run the wakers
/// of the kinds that join it.
struct Wiring {
    client: kube::Client,
    scope: Scope,
    /// A [`Pending`] of each kind watched and not yet controlled.
    pending: HashMap<TypeId, Box<dyn Any + Send>>,
    /// Who waits for a resource that becomes Ready, by what joins it.
    wakers: HashMap<Joins, Vec<Waker>>,
}

impl Wiring {
    /// Starts `K`'s watch, and registers its resources to be woken by the
    /// kinds they join (`ManagedKind::JOINS`).
    fn watch<K: ManagedKind>(&mut self) {
        let (reflected, stream) =
            cache::reflect::<Tolerant<K>>(self.scope.api(&self.client), cache::strip_managed);
        let (wake, woken) = tokio::sync::mpsc::unbounded_channel();
        for joins in K::JOINS {
            self.wakers.entry(*joins).or_default().push(waker::<K>(
                reflected.store.clone(),
                wake.clone(),
                *joins,
            ));
        }
        let pending = Pending {
            reflected,
            stream: Box::pin(stream),
            wake,
            woken,
        };
        self.pending.insert(TypeId::of::<K>(), Box::new(pending));
    }

    fn pending<K: cache::Cached + Clone>(&self) -> &Pending<K> {
        self.pending
            .get(&TypeId::of::<K>())
            .and_then(|pending| pending.downcast_ref())
            .expect("every kind of the registry is watched before it is read")
    }

    /// `K`'s controller, fed by its watch (whose events wake the resources
    /// that join a `K::JOINED_AS`) and by the resources woken for it.
    fn controller<K: ManagedKind + Debug>(
        &mut self,
        ctx: &Arc<Context>,
    ) -> Controller<Tolerant<K>> {
        let pending = self
            .pending
            .remove(&TypeId::of::<K>())
            .and_then(|pending| pending.downcast::<Pending<K>>().ok())
            .expect("every kind of the registry is watched before it is controlled");
        let Pending {
            reflected,
            stream,
            wake,
            woken,
        } = *pending;
        drop(wake);
        let wakers = K::JOINED_AS
            .and_then(|joins| self.wakers.remove(&joins))
            .unwrap_or_default();
        let stream = if wakers.is_empty() {
            stream
        } else {
            Box::pin(stream.map(waking(&reflected.store, wakers)))
        };
        controller(reflected.store, stream, ctx)
            .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(woken))
    }
}

impl cache::Reflector for &Wiring {
    fn reflected<K: cache::Cached + Clone>(&mut self) -> Reflected<Tolerant<K>> {
        self.pending::<K>().reflected.clone()
    }
}

/// [`run`] as a future, with the controllers' caches (for `/readyz`).
///
/// One watch per kind (every kind of the registry, the instances, Secrets
/// and, over all namespaces, Namespaces), each filling one shared cache
/// ([`crate::provider::watch::cache`]) that reconciliations read instead of
/// the API server.
pub fn build(ctx: Arc<Context>, namespace: Option<String>) -> (impl Future<Output = ()>, Caches) {
    let client = ctx.client.clone();
    let scope = Scope::of(namespace.as_deref());
    let mut wiring = Wiring {
        client: client.clone(),
        scope: scope.clone(),
        pending: HashMap::new(),
        wakers: HashMap::new(),
    };
    macro_rules! watch_every_kind {
        ($($kind:ident => $field:ident),* $(,)?) => {
            $(wiring.watch::<crate::api::$kind>();)*
        };
    }
    crate::managed_kinds!(watch_every_kind);
    let (instances_store, instances_stream) =
        cache::reflect::<Tolerant<LiteLLMInstance>>(scope.api(&client), cache::strip);
    let (namespaces_store, namespaces_stream) = match scope {
        Scope::All => {
            let (store, stream) = cache::namespaces(&client);
            (Some(store), Some(stream))
        }
        Scope::Namespace(_) => (None, None),
    };
    // Keys also wake when their connection Secret changes or goes.
    let secrets = Secrets::default();
    secrets.wake_keys(wiring.pending::<LiteLLMVirtualKey>().wake.clone());
    let stores = Stores::build(instances_store, &wiring);
    let mut caches = Caches::default();
    for synced in stores.synced() {
        caches.add(synced.clone());
    }
    let cache = Cache::new(scope.clone(), stores, namespaces_store, secrets.clone());
    let namespaces_wanted = cache.namespaces_wanted().clone();
    ctx.use_cache(Arc::new(cache));
    // Each kind reconciles at most `concurrency` objects at once, as a
    // crossplane-runtime provider's controllers do (`--max-reconcile-rate`).
    let mut controllers: Vec<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> = Vec::new();
    let (signals, listener) = Signals::listen();
    macro_rules! control_every_kind {
        ($($kind:ident => $field:ident),* $(,)?) => {
            $(controllers.push(Box::pin(drive(
                wiring.controller::<crate::api::$kind>(&ctx),
                ctx.clone(),
                signals.clone(),
            )));)*
        };
    }
    crate::managed_kinds!(control_every_kind);
    drop(signals);
    let work = async move {
        let namespaces = async {
            // Listed only once a label selector needs a namespace's labels.
            if let Some(stream) = namespaces_stream {
                cache::drain(namespaces_wanted.stream(move || stream), "Namespaces").await;
            }
        };
        // Each controller is a task of its own, not a branch of this
        // future: on a multi-threaded runtime (`--worker-threads` above 1)
        // it is polled where it was awoken (the timer, the HTTP connection
        // of its reconciles), a poll crosses no thread, and the kinds
        // reconcile on every worker. The set aborts them when this future
        // is dropped (leadership lost).
        let controllers = async {
            let mut set = tokio::task::JoinSet::new();
            for controller in controllers {
                set.spawn(controller);
            }
            while let Some(done) = set.join_next().await {
                if let Err(err) = done {
                    if err.is_panic() {
                        std::panic::resume_unwind(err.into_panic());
                    }
                }
            }
        };
        let watches = async {
            tokio::join!(
                cache::drain(instances_stream, "LiteLLMInstances"),
                namespaces,
                secrets.watch(client, scope),
            )
        };
        // The watches and the poll queue only feed the controllers: they
        // stop with them (on SIGTERM).
        tokio::select! {
            _ = controllers => {}
            _ = watches => {}
            _ = ctx.polls.run(ctx.poll_tick) => {}
            _ = listener => {}
        }
    };
    (work, caches)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::api::LiteLLMTeam;
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    #[test]
    fn every_join_a_kind_waits_for_is_made_by_one_kind_of_the_registry() {
        let mut joined: Vec<Joins> = Vec::new();
        let mut awaited: Vec<Joins> = Vec::new();
        macro_rules! collect {
            ($($kind:ident => $field:ident),* $(,)?) => {$(
                joined.extend(<crate::api::$kind as ManagedKind>::JOINED_AS);
                awaited.extend(<crate::api::$kind as ManagedKind>::JOINS);
            )*};
        }
        crate::managed_kinds!(collect);
        for joins in &awaited {
            assert_eq!(
                joined.iter().filter(|j| *j == joins).count(),
                1,
                "{joins:?}: no kind, or more than one, is what its resources wait for"
            );
        }
        for joins in &joined {
            assert!(awaited.contains(joins), "{joins:?}: nothing joins it");
        }
    }

    /// A key of namespace `n` that joins the team `web` by reference.
    fn key(name: &str, ready: bool) -> Tolerant<LiteLLMVirtualKey> {
        let status = if ready { "True" } else { "False" };
        let key: LiteLLMVirtualKey = serde_json::from_value(serde_json::json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
            "metadata": {"name": name, "namespace": "n", "uid": name},
            "spec": {"instanceRef": {"name": "p"}, "forProvider": {"teamRef": {"name": "web"}}},
            "status": {"conditions": [
                {"type": "Ready", "status": status, "reason": "Available"},
                {"type": "Synced", "status": status, "reason": "ReconcileSuccess"}
            ]}
        }))
        .unwrap();
        Tolerant::new(key)
    }

    #[test]
    fn a_team_that_becomes_ready_wakes_the_keys_that_wait_for_it() {
        let (keys, mut writer) = reflector::store::<Tolerant<LiteLLMVirtualKey>>();
        writer.apply_watcher_event(&Event::Apply(key("waiting", false)));
        writer.apply_watcher_event(&Event::Apply(key("ready", true)));
        let (wake, mut woken) = tokio::sync::mpsc::unbounded_channel();
        let (teams, _) = reflector::store::<Tolerant<LiteLLMTeam>>();
        let mut events = waking(
            &teams,
            vec![waker::<LiteLLMVirtualKey>(keys, wake, Joins::Team)],
        );
        let _ = events(Ok(team_named("web", "w1", 1, false, None)));
        assert!(woken.try_recv().is_err(), "not Ready: nobody is woken");
        let _ = events(Ok(team_named("web", "w1", 1, true, None)));
        let first = woken.try_recv().expect("the waiting key is woken");
        assert_eq!(first.name, "waiting");
        assert!(woken.try_recv().is_err(), "a Ready key does not wait");
        let _ = events(Ok(team_named("api", "a1", 1, true, None)));
        assert!(woken.try_recv().is_err(), "another team wakes nobody");
    }

    fn team(uid: &str, ready: bool) -> Tolerant<LiteLLMTeam> {
        team_named(uid, uid, 1, ready, None)
    }

    /// A team as the watch brings it: its name and `uid`, and what a
    /// change of its desired state touches (generation, annotations) or
    /// not (its status).
    fn team_named(
        name: &str,
        uid: &str,
        generation: i64,
        ready: bool,
        annotation: Option<&str>,
    ) -> Tolerant<LiteLLMTeam> {
        let status = if ready { "True" } else { "False" };
        let annotations = annotation.map(|a| serde_json::json!({"crossplane.io/external-name": a}));
        let team: LiteLLMTeam = serde_json::from_value(serde_json::json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam",
            "metadata": {"name": name, "namespace": "n", "uid": uid, "generation": generation,
                         "annotations": annotations},
            "spec": {"instanceRef": {"name": "p"}, "forProvider": {}},
            "status": {"conditions": [
                {"type": "Ready", "status": status, "reason": "Available"}
            ]}
        }))
        .unwrap();
        Tolerant::new(team)
    }

    #[test]
    fn users_wake_when_a_resource_becomes_ready_not_at_each_event_of_a_ready_one() {
        let mut seen = ReadySeen::default();
        assert!(!seen.became_ready(&team("a", false), 1), "not ready");
        assert!(seen.became_ready(&team("a", true), 1), "became ready");
        assert!(
            !seen.became_ready(&team("a", true), 1),
            "still ready: a relist"
        );
        assert!(seen.became_ready(&team("b", true), 2), "first seen ready");
        assert!(!seen.became_ready(&team("a", false), 2));
        assert!(seen.became_ready(&team("a", true), 2), "ready again");
        // Past its bound the set starts over: one scan more, never none.
        for i in 0..1100 {
            seen.became_ready(&team(&format!("gone-{i}"), true), 2);
        }
        assert!(seen.0.len() <= 1025);
    }

    fn event(
        uid: &str,
        generation: i64,
        ready: bool,
        annotation: Option<&str>,
    ) -> Tolerant<LiteLLMTeam> {
        team_named("t", uid, generation, ready, annotation)
    }

    #[test]
    fn only_changes_of_the_desired_state_pass_once_per_object() {
        let mut seen = DesiredStateSeen::new();
        assert!(seen.changed(&event("u1", 1, false, None)), "new");
        assert!(
            !seen.changed(&event("u1", 1, true, None)),
            "a status write wakes nobody"
        );
        assert!(seen.changed(&event("u1", 2, true, None)), "a new spec");
        assert!(!seen.changed(&event("u1", 2, true, None)), "a relist");
        assert!(
            seen.changed(&event("u1", 2, true, Some("x"))),
            "an annotation"
        );
        assert!(
            seen.changed(&event("u2", 2, true, Some("x"))),
            "the same name made again: another object"
        );
        assert!(!seen.changed(&event("u1", 2, true, Some("x"))));
        assert_eq!(seen.last.len(), 2);
        // Unseen for the TTL: passes once more, and the sweep forgets the
        // objects the stream stopped bringing (deleted ones).
        let later = DesiredStateSeen::TTL_SECONDS + 1;
        assert!(
            seen.changed_at(&event("u1", 2, true, Some("x")), later),
            "stale"
        );
        assert_eq!(seen.last.len(), 1, "u2 swept");
        assert!(!seen.changed_at(&event("u1", 2, true, Some("x")), later));
    }
}
