//! The four entity controllers, each a `kube::runtime::Controller` driving
//! the generic [`reconcile`] for its kind.

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret;
use kube::api::Api;
use kube::runtime::controller::Controller;
use kube::runtime::watcher;
use tokio_stream::StreamExt;

use crate::api::{LiteLLMBudget, LiteLLMModel, LiteLLMTeam, LiteLLMVirtualKey};

use super::connection::{MANAGED_BY, MANAGED_BY_LABEL};
use super::health::Caches;
use super::managed::ManagedKind;
use super::reconciler::{error_policy_tolerant, reconcile_tolerant, Context};
use super::tolerant::Tolerant;

fn api<K: ManagedKind>(client: &kube::Client, namespace: Option<&str>) -> Api<Tolerant<K>> {
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// Runs one controller until shutdown, logging each outcome.
async fn drive<K: ManagedKind + Debug>(controller: Controller<Tolerant<K>>, ctx: Arc<Context>) {
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

/// A controller over [`Tolerant`] objects: one object kube-rs cannot read
/// does not stop the kind's list and watch for every other.
fn plain<K: ManagedKind + Debug>(
    client: &kube::Client,
    namespace: Option<&str>,
) -> Controller<Tolerant<K>> {
    Controller::new(api::<K>(client, namespace), watcher::Config::default())
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
    let teams = plain::<LiteLLMTeam>(&client, namespace);
    let keys = plain::<LiteLLMVirtualKey>(&client, namespace).owns(secrets, owned);
    let budgets = plain::<LiteLLMBudget>(&client, namespace);
    let models = plain::<LiteLLMModel>(&client, namespace);
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
