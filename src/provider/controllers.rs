//! The four entity controllers, each a `kube::runtime::Controller` driving
//! the generic [`reconcile`] for its kind.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use tokio_stream::StreamExt;

use crate::api::{LiteLLMBudget, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey};

use super::conditions::{READY, SYNCED};
use super::connection::{MANAGED_BY, MANAGED_BY_LABEL};
use super::dependents::Joins;
use super::health::Caches;
use super::managed::ManagedKind;
use super::metrics::{self, object_key, Metrics, Seen};
use super::reconciler::{error_policy_tolerant, reconcile_tolerant, Context};
use super::tolerant::Tolerant;

fn api<K: ManagedKind>(client: &kube::Client, namespace: Option<&str>) -> Api<Tolerant<K>> {
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// What the state gauges and the queue need of a cached object: an object
/// kube-rs cannot read exists, and is neither ready nor synced.
fn seen<K: ManagedKind>(object: &Tolerant<K>) -> Seen {
    let status = |type_: &str| match object {
        Tolerant::Ok(mr) => mr.condition_is_true(type_),
        Tolerant::Unreadable(_) => false,
    };
    Seen {
        key: object_key(object.meta()),
        ready: status(READY),
        synced: status(SYNCED),
    }
}

/// Feeds `metrics` from the controller's cache: crossplane-runtime's state
/// gauges list the managed resources from the manager's cache the same way.
fn watch<K: ManagedKind>(metrics: &Metrics, controller: &Controller<Tolerant<K>>) {
    let store = controller.store();
    metrics.watch(
        &metrics::managed_controller::<K>(),
        Some(metrics::gvk::<K>()),
        move || store.state().iter().map(|o| seen(o)).collect(),
    );
}

/// Runs one controller until shutdown, logging each outcome.
async fn drive<K: ManagedKind + Debug>(controller: Controller<Tolerant<K>>, ctx: Arc<Context>) {
    watch(&ctx.metrics, &controller);
    let results = controller.shutdown_on_signal().run(
        reconcile_tolerant::<K>,
        error_policy_tolerant::<K>,
        ctx,
    );
    tokio::pin!(results);
    while let Some(result) = results.next().await {
        match result {
            Ok((object, _)) => tracing::debug!(kind = K::NOUN, object = %object, "reconciled"),
            // error_policy has logged reconciler errors already; what
            // arrives here besides them are watch and queue failures.
            Err(err) => tracing::debug!(kind = K::NOUN, error = %err, "controller error"),
        }
    }
}

/// The keys that join `team` (by `teamRef` or `teamId`, in its namespace)
/// and are not Ready, when `team` is Ready: they have waited for it.
fn keys_waiting_for(
    keys: &[Arc<Tolerant<LiteLLMVirtualKey>>],
    team: &Tolerant<LiteLLMTeam>,
) -> Vec<ObjectRef<Tolerant<LiteLLMVirtualKey>>> {
    let Tolerant::Ok(team) = team else {
        return Vec::new();
    };
    if !team.condition_is_true(READY) {
        return Vec::new();
    }
    let name = team.name_any();
    let id = team
        .annotations()
        .get(crate::api::common::EXTERNAL_NAME)
        .cloned()
        .unwrap_or_default();
    keys.iter()
        .filter(|key| match &***key {
            Tolerant::Ok(key) => {
                key.namespace() == team.namespace()
                    && !key.condition_is_true(READY)
                    && key
                        .joins()
                        .iter()
                        .any(|join| join.names(Joins::Team, &name, &id))
            }
            Tolerant::Unreadable(_) => false,
        })
        .map(|key| ObjectRef::from_obj(&**key))
        .collect()
}

/// A controller over [`Tolerant`] objects: one object kube-rs cannot read
/// does not stop the kind's list and watch for every other.
fn plain<K: ManagedKind + Debug>(
    client: &kube::Client,
    namespace: Option<&str>,
    concurrency: u16,
) -> Controller<Tolerant<K>> {
    Controller::new(api::<K>(client, namespace), watcher::Config::default())
        .with_config(controller::Config::default().concurrency(concurrency))
}

/// Runs the team, key, budget and model controllers until SIGTERM/Ctrl-C,
/// over all namespaces or only `namespace`. The key controller also watches
/// the connection Secrets it owns, so a deleted Secret is noticed.
pub async fn run(ctx: Arc<Context>, namespace: Option<String>) {
    build(ctx, namespace).0.await
}

/// [`run`] as a future, with the controllers' caches (for `/readyz`).
pub fn build(ctx: Arc<Context>, namespace: Option<String>) -> (impl Future<Output = ()>, Caches) {
    let client = ctx.client.clone();
    let namespace = namespace.as_deref();
    let secrets: Api<Secret> = match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    };
    let owned = watcher::Config::default().labels(&format!("{MANAGED_BY_LABEL}={MANAGED_BY}"));
    // Each kind reconciles at most `concurrency` objects at once, as a
    // crossplane-runtime provider's controllers do (`--max-reconcile-rate`).
    let n = ctx.concurrency;
    let teams = plain::<LiteLLMTeam>(&client, namespace, n);
    let keys = plain::<LiteLLMVirtualKey>(&client, namespace, n).owns(secrets, owned);
    // A key whose team was not ready yet (its id unknown) starts as soon as
    // the team is Ready, instead of after its backoff.
    let waiting = keys.store();
    let keys = keys.watches(
        api::<LiteLLMTeam>(&client, namespace),
        watcher::Config::default(),
        move |team| keys_waiting_for(&waiting.state(), &team),
    );
    let budgets = plain::<LiteLLMBudget>(&client, namespace, n);
    let models = plain::<LiteLLMModel>(&client, namespace, n);
    let mut caches = Caches::default();
    caches.add(teams.store());
    caches.add(keys.store());
    caches.add(budgets.store());
    caches.add(models.store());
    let work = async move {
        tokio::join!(
            drive(teams, ctx.clone()),
            drive(keys, ctx.clone()),
            drive(budgets, ctx.clone()),
            drive(models, ctx.clone()),
        );
    };
    (work, caches)
}
