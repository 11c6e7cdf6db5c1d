//! The entity controllers, each a `kube::runtime::Controller` driving
//! the generic [`reconcile`] for its kind.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use tokio_stream::{Stream, StreamExt};

use crate::api::{
    LiteLLMBudget, LiteLLMCredential, LiteLLMInstance, LiteLLMMCPServer, LiteLLMModel,
    LiteLLMOrganization, LiteLLMTeam, LiteLLMUser, LiteLLMVirtualKey,
};

use crate::provider::managed::contract::ManagedKind;
use crate::provider::managed::reconciler::{error_policy_tolerant, reconcile_tolerant, Context};
use crate::provider::telemetry::metrics::{self, object_key, Metrics, Seen};
use crate::provider::watch::cache::Caches;
use crate::provider::watch::cache::{self, Cache, Scope, Secrets, Stores};
use crate::provider::watch::joins::Joins;
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

/// The resources of kind `U` that join `referenced` (a team, budget or
/// user that keys join, a credential that models use; by reference or by id, in
/// its namespace) and are not Ready and Synced, when `referenced` is Ready:
/// they have waited for it (and their retry waits a poll interval,
/// counting on this).
fn waiting_for<U: ManagedKind, R: ManagedKind>(
    users: &[Arc<Tolerant<U>>],
    joins: Joins,
    referenced: &Tolerant<R>,
) -> Vec<ObjectRef<Tolerant<U>>> {
    let Some(facts) = referenced.facts().filter(|facts| facts.ready) else {
        return Vec::new();
    };
    let name = referenced.name_any();
    let id = facts.external_name.as_deref().unwrap_or_default();
    users
        .iter()
        .filter(|user| match user.facts() {
            Some(facts) => {
                // Compared in place: this runs for every user of the kind
                // on every event of a Ready referenced resource.
                user.meta().namespace == referenced.meta().namespace
                    && !(facts.ready && facts.synced)
                    && facts.joins.iter().any(|join| join.names(joins, &name, id))
            }
            None => false,
        })
        .map(|user| ObjectRef::from_obj(&**user))
        .collect()
}

type Woken<U> = tokio::sync::mpsc::UnboundedSender<ObjectRef<Tolerant<U>>>;

/// Passes a referenced resource's events on (those of `referenced`, the
/// store they fill), waking the resources of kind `U` that wait for it (see
/// [`waiting_for`]) when it becomes Ready: at the first event that shows it
/// Ready, and again after one showed it not Ready. Later events of a
/// resource still Ready (a status write, every object of a relist) wake
/// nobody: whoever waited was woken when it became Ready, and each scan
/// reads every resource of kind `U` (a relist of N teams scanned N keys N
/// times).
fn waking<U: ManagedKind, R: ManagedKind>(
    users: &Store<Tolerant<U>>,
    referenced: &Store<Tolerant<R>>,
    wake: &Woken<U>,
    joins: Joins,
) -> impl FnMut(Result<Tolerant<R>, watcher::Error>) -> Result<Tolerant<R>, watcher::Error> {
    let users = users.clone();
    let store = referenced.clone();
    let wake = wake.clone();
    let mut ready = ReadySeen::default();
    move |event| {
        if let Ok(referenced) = &event {
            if ready.became_ready(referenced, store.len()) {
                for user in waiting_for(&users.state(), joins, referenced) {
                    let _ = wake.send(user);
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
    last: std::collections::HashMap<u64, (u64, u32)>,
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
            last: std::collections::HashMap::new(),
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
    let concurrency = ctx.concurrency;
    // Requeues the poll queue holds come back through this trigger.
    let (due, requeued) = tokio::sync::mpsc::unbounded_channel();
    ctx.polls.register(
        K::NOUN,
        move |namespace, name| {
            let object = ObjectRef::new(name);
            let object = if namespace.is_empty() {
                object
            } else {
                object.within(namespace)
            };
            due.send(object).is_ok()
        },
        {
            let metrics = ctx.metrics.clone();
            move |key, memo, after, took| {
                metrics.polled(
                    metrics::managed_controller::<K>(),
                    K::NOUN,
                    key,
                    memo.metrics_id,
                    after,
                    took,
                )
            }
        },
    );
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

/// Runs the team, key, budget, model, credential, user and MCP server controllers until
/// SIGTERM/Ctrl-C, over all namespaces or only `namespace`. The key
/// controller also watches the connection Secrets it owns, so a deleted
/// Secret is noticed.
pub async fn run(ctx: Arc<Context>, namespace: Option<String>) {
    build(ctx, namespace).0.await
}

/// [`run`] as a future, with the controllers' caches (for `/readyz`).
///
/// One watch per kind: teams, keys, budgets, models, credentials, users, MCP
/// servers, instances, Secrets and (over all namespaces) Namespaces, each filling
/// one shared cache ([`crate::provider::watch::cache`]) that reconciliations read instead of
/// the API server.
pub fn build(ctx: Arc<Context>, namespace: Option<String>) -> (impl Future<Output = ()>, Caches) {
    let client = ctx.client.clone();
    let scope = Scope::of(namespace.as_deref());
    let managed = cache::strip_managed;
    let (teams_store, teams_stream) =
        cache::reflect::<Tolerant<LiteLLMTeam>>(scope.api(&client), managed);
    let (keys_store, keys_stream) =
        cache::reflect::<Tolerant<LiteLLMVirtualKey>>(scope.api(&client), managed);
    let (budgets_store, budgets_stream) =
        cache::reflect::<Tolerant<LiteLLMBudget>>(scope.api(&client), managed);
    let (models_store, models_stream) =
        cache::reflect::<Tolerant<LiteLLMModel>>(scope.api(&client), managed);
    let (credentials_store, credentials_stream) =
        cache::reflect::<Tolerant<LiteLLMCredential>>(scope.api(&client), managed);
    let (users_store, users_stream) =
        cache::reflect::<Tolerant<LiteLLMUser>>(scope.api(&client), managed);
    let (mcp_servers_store, mcp_servers_stream) =
        cache::reflect::<Tolerant<LiteLLMMCPServer>>(scope.api(&client), managed);
    let (organizations_store, organizations_stream) =
        cache::reflect::<Tolerant<LiteLLMOrganization>>(scope.api(&client), managed);
    let (instances_store, instances_stream) =
        cache::reflect::<Tolerant<LiteLLMInstance>>(scope.api(&client), cache::strip);
    let (namespaces_store, namespaces_stream) = match scope {
        Scope::All => {
            let (store, stream) = cache::namespaces(&client);
            (Some(store), Some(stream))
        }
        Scope::Namespace(_) => (None, None),
    };
    // Keys wake when their connection Secret changes or goes, and when a
    // team, budget or user they wait for becomes Ready; models when a credential
    // they wait for does; teams and keys when an MCP server they name
    // does; teams when their organization does.
    let (wake, woken) = tokio::sync::mpsc::unbounded_channel();
    let (wake_teams, woken_teams) = tokio::sync::mpsc::unbounded_channel();
    let (wake_models, woken_models) = tokio::sync::mpsc::unbounded_channel();
    let secrets = Secrets::default();
    secrets.wake_keys(wake.clone());
    let stores = Stores {
        instances: instances_store.clone(),
        teams: teams_store.clone(),
        keys: keys_store.clone(),
        budgets: budgets_store.clone(),
        models: models_store.clone(),
        credentials: credentials_store.clone(),
        users: users_store.clone(),
        mcp_servers: mcp_servers_store.clone(),
        organizations: organizations_store.clone(),
    };
    let mut caches = Caches::default();
    for synced in stores.synced() {
        caches.add(synced.clone());
    }
    ctx.use_cache(Arc::new(Cache::new(
        scope.clone(),
        stores,
        namespaces_store,
        secrets.clone(),
    )));
    let teams_stream = teams_stream.map(waking(
        &keys_store.store,
        &teams_store.store,
        &wake,
        Joins::Team,
    ));
    let budgets_stream = budgets_stream.map(waking(
        &keys_store.store,
        &budgets_store.store,
        &wake,
        Joins::Budget,
    ));
    let users_stream = users_stream
        .map(waking(
            &keys_store.store,
            &users_store.store,
            &wake,
            Joins::User,
        ))
        .map(waking(
            &teams_store.store,
            &users_store.store,
            &wake_teams,
            Joins::User,
        ));
    let credentials_stream = credentials_stream.map(waking(
        &models_store.store,
        &credentials_store.store,
        &wake_models,
        Joins::Credential,
    ));
    let mcp_servers_stream = mcp_servers_stream
        .map(waking(
            &teams_store.store,
            &mcp_servers_store.store,
            &wake_teams,
            Joins::McpServer,
        ))
        .map(waking(
            &keys_store.store,
            &mcp_servers_store.store,
            &wake,
            Joins::McpServer,
        ));
    let organizations_stream = organizations_stream.map(waking(
        &teams_store.store,
        &organizations_store.store,
        &wake_teams,
        Joins::Organization,
    ));
    // Each kind reconciles at most `concurrency` objects at once, as a
    // crossplane-runtime provider's controllers do (`--max-reconcile-rate`).
    let teams = controller(teams_store.store.clone(), teams_stream, &ctx).reconcile_on(
        tokio_stream::wrappers::UnboundedReceiverStream::new(woken_teams),
    );
    let keys = controller(keys_store.store.clone(), keys_stream, &ctx)
        .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(woken));
    let budgets = controller(budgets_store.store.clone(), budgets_stream, &ctx);
    let models = controller(models_store.store.clone(), models_stream, &ctx).reconcile_on(
        tokio_stream::wrappers::UnboundedReceiverStream::new(woken_models),
    );
    let credentials = controller(credentials_store.store.clone(), credentials_stream, &ctx);
    let users = controller(users_store.store.clone(), users_stream, &ctx);
    let mcp_servers = controller(mcp_servers_store.store.clone(), mcp_servers_stream, &ctx);
    let organizations = controller(
        organizations_store.store.clone(),
        organizations_stream,
        &ctx,
    );
    let work = async move {
        let namespaces = async {
            if let Some(stream) = namespaces_stream {
                cache::drain(stream, "Namespaces").await;
            }
        };
        // Each controller is a task of its own, not a branch of this
        // future: on a multi-threaded runtime (`--worker-threads` above 1)
        // it is polled where it was awoken (the timer, the HTTP connection
        // of its reconciles), a poll crosses no thread, and the kinds
        // reconcile on every worker. The set aborts them when this future
        // is dropped (leadership lost).
        let (signals, listener) = Signals::listen();
        let controllers = async {
            let mut set = tokio::task::JoinSet::new();
            set.spawn(drive(teams, ctx.clone(), signals.clone()));
            set.spawn(drive(keys, ctx.clone(), signals.clone()));
            set.spawn(drive(budgets, ctx.clone(), signals.clone()));
            set.spawn(drive(models, ctx.clone(), signals.clone()));
            set.spawn(drive(credentials, ctx.clone(), signals.clone()));
            set.spawn(drive(users, ctx.clone(), signals.clone()));
            set.spawn(drive(mcp_servers, ctx.clone(), signals.clone()));
            set.spawn(drive(organizations, ctx.clone(), signals));
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
