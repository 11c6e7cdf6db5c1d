//! The effectful part: the watch loop, provisioning or probing, reading the
//! CA Secret and the status patch.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{self, finalizer, Event};
use kube::runtime::{watcher, WatchStreamExt};
use kube::ResourceExt;
use serde_json::json;
use tokio_stream::StreamExt;

use crate::api::common::SecretKeySelector;
use crate::api::instance::{LiteLLMInstance, Workload};
use crate::api::API_VERSION;

use crate::api::common::paused_by_annotation;
use crate::api::conditions;
use crate::provider::managed::dependents;
use crate::provider::managed::reconciler::PAUSED_NOTE;
use crate::provider::telemetry::events::{EventType, Recorder};
use crate::provider::telemetry::metrics::{object_key, result_of, Metrics, Seen};
use crate::provider::watch::cache::Caches;
use crate::provider::watch::places::{self, Places};
use crate::provider::watch::tolerant::{self, Tolerant};
use crate::provider::watch::wanted::Wanted;

use super::status::not_admitted_status;
use super::{
    admission, condition_type, desired_status, probe, probe_target, provision, provisioned_status,
    reason, requeue_after, teardown, Error, ProbeResult,
};

/// The instances' name among the kinds whose places are shared out
/// ([`places`]), and in `provider_litellm_place_waits`.
const INSTANCE: &str = "instance";

/// Field manager of the status patches and of the workload objects.
pub const FIELD_MANAGER: &str = "provider-litellm-instance";

/// Settings of the `LiteLLMInstance` controller.
#[derive(Debug, Clone)]
pub struct InstanceOptions {
    /// Watch only this namespace; `None` watches all namespaces.
    pub namespace: Option<String>,
    /// Re-probe interval of a ready proxy (and of instances nothing can be
    /// done for until their spec changes).
    pub ready_interval: Duration,
    /// Re-probe interval while a proxy is not ready.
    pub not_ready_interval: Duration,
    /// Bound on connecting to the proxy and on each probe request.
    pub probe_timeout: Duration,
    /// Instances reconciled at once (`--max-reconcile-rate`).
    pub concurrency: u16,
}

impl Default for InstanceOptions {
    fn default() -> Self {
        Self {
            namespace: None,
            ready_interval: Duration::from_secs(30),
            not_ready_interval: Duration::from_secs(10),
            probe_timeout: Duration::from_secs(5),
            concurrency: crate::provider::managed::reconciler::DEFAULT_MAX_RECONCILE_RATE,
        }
    }
}

/// The `controller` label of this controller's series (and the `name` of
/// its queue): the kind and group, lowercase.
pub fn controller_name() -> &'static str {
    use kube::Resource;
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        format!(
            "{}.{}",
            LiteLLMInstance::kind(&()),
            LiteLLMInstance::group(&())
        )
        .to_lowercase()
    })
}

/// Shared by every reconciliation.
struct Context {
    client: kube::Client,
    recorder: Recorder,
    /// Whether an instance has been provisioned yet: the Deployment and Job
    /// watches start then (see [`crate::provider::watch::wanted`]).
    workloads: Wanted,
    options: InstanceOptions,
    metrics: Metrics,
    controller: &'static str,
    /// Unreadable instances reported, by uid.
    unreadable: tolerant::Reports,
    /// The reconciliations at once, shared out by namespace.
    places: Places,
}

/// Runs the controller until SIGTERM or Ctrl-C (graceful shutdown: running
/// reconciliations finish). Needs RBAC for `litellminstances` (get, list,
/// watch, patch: the finalizer) and `litellminstances/status` (patch); list
/// on the four managed kinds (deletion order); for provisioning get,
/// create, update, list and delete on Secrets, ConfigMaps, ServiceAccounts,
/// Services, Deployments and Jobs, patch on Secrets (moving generated keys
/// of earlier releases from an owner reference to the generated-for
/// annotation), watch on Deployments and Jobs, list on Pods, and get on
/// Namespaces (labels for `allowedNamespaces`); for an exposure get,
/// create, update, list and delete on Ingresses and HTTPRoutes.
pub async fn run(client: kube::Client, options: InstanceOptions) {
    controller(client, options).await
}

/// [`run`] as a future, for a binary that joins it with other controllers.
pub fn controller(client: kube::Client, options: InstanceOptions) -> impl Future<Output = ()> {
    build(client, options, Metrics::default()).0
}

/// [`controller`], counting its reconciliations in `metrics`
/// (controller-runtime's controller series and `workqueue_depth`; an
/// instance is no managed resource, so it has no crossplane state gauges).
pub fn controller_with_metrics(
    client: kube::Client,
    options: InstanceOptions,
    metrics: Metrics,
) -> impl Future<Output = ()> {
    build(client, options, metrics).0
}

/// [`controller_with_metrics`], with its cache (for `/readyz`).
pub fn build(
    client: kube::Client,
    options: InstanceOptions,
    metrics: Metrics,
) -> (impl Future<Output = ()>, Caches) {
    fn scoped<K>(client: &kube::Client, namespace: &Option<String>) -> Api<K>
    where
        K: kube::Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client.clone(), namespace),
            None => Api::all(client.clone()),
        }
    }
    // Tolerant: one instance kube-rs cannot read does not stop the list and
    // watch of all the others.
    let api: Api<Tolerant<LiteLLMInstance>> = scoped(&client, &options.namespace);
    // Metadata only: the owner references are what trigger an instance.
    let deployments: Api<PartialObjectMeta<Deployment>> = scoped(&client, &options.namespace);
    let jobs: Api<PartialObjectMeta<Job>> = scoped(&client, &options.namespace);
    let workloads = Wanted::default();
    // Its own reflector, not `Controller::new`'s: `/readyz` waits for its
    // `Synced` flag, which `Store::wait_until_ready` cannot give a second
    // waiter beside the controller's runner (see `cache::Reflected`).
    let (instances, stream) =
        crate::provider::watch::cache::reflect(api, crate::provider::watch::cache::strip);
    // Instances that waited for a place of their namespace are started
    // again through this trigger (see `places`).
    let (due, woken) = tokio::sync::mpsc::unbounded_channel();
    let places = Places::default();
    places.register(
        INSTANCE,
        options.concurrency,
        places::if_cached(
            instances.store.clone(),
            places::trigger::<Tolerant<LiteLLMInstance>>(due),
        ),
    );
    let context = Arc::new(Context {
        places,
        workloads: workloads.clone(),
        recorder: Recorder::for_provider(client.clone()),
        client,
        options,
        metrics,
        controller: controller_name(),
        unreadable: tolerant::Reports::default(),
    });
    // Watch events caused by our own status patches trigger a
    // reconciliation too; it computes the same status and skips the
    // patch, so they settle after one round instead of looping.
    // Owned Deployments and Jobs trigger their instance, so replica
    // counts and the migration's outcome reach the status without
    // waiting for the requeue. Pods are not owned by the instance; the
    // requeue interval covers them.
    // One namespace's instances hold `--max-reconcile-rate` places; the
    // controller runs a reserve for the others.
    let config = kube::runtime::controller::Config::default()
        .concurrency(places::controller_concurrency(context.options.concurrency));
    let controller = Controller::for_stream(stream, instances.store.clone())
        .with_config(config)
        .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(woken))
        .owns_stream(workloads.stream(move || {
            watcher(deployments, watcher::Config::default())
                .default_backoff()
                .touched_objects()
        }))
        .owns_stream(workloads.stream(move || {
            watcher(jobs, watcher::Config::default())
                .default_backoff()
                .touched_objects()
        }));
    let mut caches = Caches::default();
    caches.add(instances.synced.clone());
    let store = controller.store();
    context.metrics.watch(context.controller, None, move || {
        store
            .state()
            .iter()
            .map(|o| Seen {
                key: object_key(kube::Resource::meta(&**o)),
                ready: false,
                synced: false,
            })
            .collect()
    });
    let work = async move {
        let results =
            controller
                .shutdown_on_signal()
                .run(reconcile_measured, error_policy_tolerant, context);
        tokio::pin!(results);
        while let Some(result) = results.next().await {
            match result {
                Ok((object, _)) => tracing::debug!(instance = %object, "reconciled"),
                Err(err) => tracing::warn!(error = %err, "LiteLLMInstance reconciliation failed"),
            }
        }
    };
    (work, caches)
}

/// [`reconcile_tolerant`], measured as controller-runtime measures a
/// reconciliation.
async fn reconcile_measured(
    object: Arc<Tolerant<LiteLLMInstance>>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    // A probe holds its place up to the probe timeout: one namespace's
    // instances (a tenant's servers that never answer) hold only their
    // namespace's share.
    let meta = kube::Resource::meta(&*object);
    let Some(_place) = context.places.enter_object(INSTANCE, meta) else {
        context.metrics.waited_for_place(INSTANCE);
        return Ok(Action::await_change());
    };
    let running = context
        .metrics
        .reconciling(context.controller, &object_key(meta));
    let result = reconcile_tolerant(object, context).await;
    running.finish(result_of(&result));
    result
}

/// `Action::requeue(after)`, with the requeue noted for `workqueue_depth`.
fn requeue(context: &Context, meta: &kube::api::ObjectMeta, after: Duration) -> Action {
    context
        .metrics
        .requeue(&context.controller, &object_key(meta), after)
}

/// [`reconcile`] a readable instance; report an unreadable one on itself
/// (`ready: false`, `Ready=False` with reason `Unreadable`), once per
/// change of it.
async fn reconcile_tolerant(
    object: Arc<Tolerant<LiteLLMInstance>>,
    context: Arc<Context>,
) -> Result<Action, Error> {
    let unreadable = match object.read() {
        Ok(instance) => {
            if let Some(uid) = instance.metadata.uid.as_deref() {
                context.unreadable.forget(uid);
            }
            return reconcile(instance, context).await;
        }
        Err(unreadable) => unreadable,
    };
    let unreadable: &tolerant::Unreadable = &unreadable;
    let namespace = unreadable.metadata.namespace.clone().unwrap_or_default();
    let name = unreadable.metadata.name.clone().unwrap_or_default();
    tracing::warn!(%namespace, %name, error = %unreadable.error, "cannot read the LiteLLMInstance");
    let (since, _) = context.unreadable.since(unreadable);
    let conditions = unreadable.conditions(&[(condition_type::READY, reason::UNREADABLE)], &since);
    let api: Api<Tolerant<LiteLLMInstance>> = Api::namespaced(context.client.clone(), &namespace);
    tolerant::write_status(
        &api,
        unreadable,
        json!({"ready": false, "conditions": conditions}),
    )
    .await
    .map_err(|source| Error::PatchStatus {
        namespace,
        name,
        source,
    })?;
    Ok(Action::await_change())
}

fn error_policy_tolerant(
    object: Arc<Tolerant<LiteLLMInstance>>,
    err: &Error,
    context: Arc<Context>,
) -> Action {
    match object.read() {
        Ok(instance) => error_policy(instance, err, context),
        Err(unreadable) => {
            tracing::warn!(error = %err, "reporting an unreadable LiteLLMInstance failed");
            requeue(
                &context,
                &unreadable.metadata,
                context.options.ready_interval,
            )
        }
    }
}

/// Finalizer of every `LiteLLMInstance`: the instance stays until no managed
/// resource uses it any more, and a provisioned proxy's workload is deleted
/// only after that.
pub const FINALIZER: &str = "litellm.crossplane.io/instance";

async fn reconcile(instance: Arc<LiteLLMInstance>, context: Arc<Context>) -> Result<Action, Error> {
    let name = instance.name_any();
    let namespace = instance
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    if paused_by_annotation(instance.annotations()) {
        // As every managed resource: nothing is written to the workload,
        // nor is the instance deleted, until the pause is lifted (a change
        // of the instance, which wakes it).
        let paused = synced(
            &instance,
            false,
            conditions::reason::RECONCILE_PAUSED,
            Some(PAUSED_NOTE.into()),
        );
        if write_status(&context, &instance, &namespace, paused).await? {
            let reason = "ReconciliationPaused";
            let recorder = &context.recorder;
            recorder
                .publish_best_effort(&*instance, EventType::Normal, reason, PAUSED_NOTE.into())
                .await;
        }
        return Ok(Action::await_change());
    }
    let api: Api<LiteLLMInstance> = Api::namespaced(context.client.clone(), &namespace);
    let result = finalizer(&api, FINALIZER, instance.clone(), |event| async {
        match event {
            Event::Apply(instance) => apply(&instance, &context, &namespace, None).await,
            Event::Cleanup(instance) => cleanup(&instance, &context, &namespace).await,
        }
    })
    .await
    .map_err(|err| match err {
        finalizer::Error::ApplyFailed(err) | finalizer::Error::CleanupFailed(err) => err,
        other => Error::Finalizer(Box::new(other)),
    });
    if let Err(err) = &result {
        if !matches!(err, Error::InUse(_)) && instance.metadata.deletion_timestamp.is_none() {
            // Best effort: the error goes to the controller's backoff and
            // log whatever this write does.
            let failed = synced(
                &instance,
                false,
                conditions::reason::RECONCILE_ERROR,
                Some(err.to_string()),
            );
            if let Err(write) = write_status(&context, &instance, &namespace, failed).await {
                tracing::debug!(error = %write, "cannot report the failure in status");
            }
        }
    }
    result
}

/// The instance's status with `Synced` set as given (the rest as it is).
fn synced(
    instance: &LiteLLMInstance,
    ok: bool,
    reason: &str,
    message: Option<String>,
) -> crate::api::instance::LiteLLMInstanceStatus {
    let mut status = instance.status.clone().unwrap_or_default();
    let mut condition = conditions::condition(conditions::SYNCED, ok, reason, message);
    condition.observed_generation = instance.metadata.generation;
    conditions::set(
        &mut status.conditions,
        condition,
        &format!("{:.0}", Timestamp::now()),
    );
    status
}

/// Writes `desired` as the instance's status where it differs from what
/// is there; whether it did.
async fn write_status(
    context: &Context,
    instance: &LiteLLMInstance,
    namespace: &str,
    desired: crate::api::instance::LiteLLMInstanceStatus,
) -> Result<bool, Error> {
    if instance.status.as_ref() == Some(&desired) {
        return Ok(false);
    }
    let name = instance.name_any();
    let api: Api<LiteLLMInstance> = Api::namespaced(context.client.clone(), namespace);
    let patch = json!({
        "apiVersion": API_VERSION,
        "kind": "LiteLLMInstance",
        "status": desired,
    });
    // Server-side apply: fields this controller set before and now leaves
    // out (a version no longer disclosed) are removed.
    api.patch_status(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(|source| Error::PatchStatus {
        namespace: namespace.to_string(),
        name,
        source,
    })?;
    Ok(true)
}

/// Provisions or probes, and writes the status; with `deleting`, a
/// condition saying what the deletion waits for.
async fn apply(
    instance: &LiteLLMInstance,
    context: &Context,
    namespace: &str,
    deleting: Option<String>,
) -> Result<Action, Error> {
    let name = instance.name_any();
    let mut desired = if Workload::is_managed(instance.spec.workload.as_ref()) {
        context.workloads.want();
        if let Some(why) = admission::check(&context.client, namespace).await? {
            return not_admitted(instance, context, namespace, why).await;
        }
        let observed = provision(&context.client, namespace, instance)
            .await
            .map_err(Error::forbidden_as_such)?;
        provisioned_status(instance, &observed, Timestamp::now())
    } else {
        // Only the spec decides the path: switching to `managed: false`
        // stops all workload writes at once and leaves the objects alone.
        let probed = match probe_target(instance) {
            None => None,
            Some(target) => Some(probe_attached(context, namespace, &target).await?),
        };
        desired_status(instance, probed, Timestamp::now())
    };
    // Everything asked for was written or found as asked: crossplane-runtime's
    // `ReconcileSuccess` (conditions of the workload say how it is doing).
    let mut success = conditions::condition(
        conditions::SYNCED,
        true,
        conditions::reason::RECONCILE_SUCCESS,
        None,
    );
    success.observed_generation = instance.metadata.generation;
    conditions::set(
        &mut desired.conditions,
        success,
        &format!("{:.0}", Timestamp::now()),
    );
    if let Some(why) = deleting {
        // Not `Ready`: the proxy stays usable, so that the dependents can
        // delete their objects in it.
        let mut condition = conditions::condition(
            condition_type::DELETING,
            true,
            reason::WAITING_FOR_DEPENDENTS,
            Some(why),
        );
        condition.observed_generation = instance.metadata.generation;
        conditions::set(
            &mut desired.conditions,
            condition,
            &format!("{:.0}", Timestamp::now()),
        );
    }
    if write_status(context, instance, namespace, desired.clone()).await? {
        tracing::info!(
            %namespace, %name, ready = desired.ready,
            endpoint = desired.endpoint.as_deref().unwrap_or(""),
            "LiteLLMInstance status updated"
        );
    }
    Ok(requeue(
        context,
        &instance.metadata,
        requeue_after(&desired, &context.options),
    ))
}

/// A provisioned instance in a namespace not labelled for it: nothing is
/// written or deleted, `Ready` and `Synced` say why (a Warning event when
/// that is news), and the label is looked for again at the ready interval
/// (namespaces are not watched for it).
async fn not_admitted(
    instance: &LiteLLMInstance,
    context: &Context,
    namespace: &str,
    why: String,
) -> Result<Action, Error> {
    let now = Timestamp::now();
    let mut desired = not_admitted_status(instance, &why, now);
    let mut condition = conditions::condition(
        conditions::SYNCED,
        false,
        reason::PROVISIONING_NOT_ALLOWED,
        Some(why.clone()),
    );
    condition.observed_generation = instance.metadata.generation;
    conditions::set(&mut desired.conditions, condition, &format!("{now:.0}"));
    if write_status(context, instance, namespace, desired).await? {
        tracing::warn!(%namespace, name = %instance.name_any(), "LiteLLMInstance not provisioned: its namespace is not labelled for it");
        context
            .recorder
            .publish_best_effort(
                instance,
                EventType::Warning,
                reason::PROVISIONING_NOT_ALLOWED,
                why,
            )
            .await;
    }
    Ok(requeue(
        context,
        &instance.metadata,
        context.options.ready_interval,
    ))
}

/// Deletion: first every managed resource that uses the instance (they
/// delete their LiteLLM objects through its proxy, which keeps running and
/// being reported meanwhile), then the workload of a provisioned proxy,
/// then the finalizer. The generated keys stay.
async fn cleanup(
    instance: &LiteLLMInstance,
    context: &Context,
    namespace: &str,
) -> Result<Action, Error> {
    let dependents = dependents::of_instance(
        &context.client,
        instance,
        context.options.namespace.as_deref(),
    )
    .await
    .map_err(Error::ListDependents)?;
    if !dependents.is_empty() {
        let why = dependents.describe(namespace);
        apply(instance, context, namespace, Some(why.clone())).await?;
        // An error keeps the finalizer.
        return Err(Error::InUse(why));
    }
    if Workload::is_managed(instance.spec.workload.as_ref()) {
        let deleted = teardown(&context.client, namespace, instance).await?;
        tracing::info!(%namespace, name = %instance.name_any(), ?deleted, "LiteLLMInstance workload deleted");
    }
    Ok(Action::await_change())
}

/// Probes an attached proxy, with the CA of `spec.tls.caSecretRef`; a CA
/// the object gets wrong is reported as the reason it is not reachable.
async fn probe_attached(
    context: &Context,
    namespace: &str,
    target: &super::ProbeTarget,
) -> Result<ProbeResult, Error> {
    let ca_pem = match &target.ca_secret_ref {
        None => Ok(None),
        Some(selector) => read_ca(&context.client, namespace, selector)
            .await
            .map(Some),
    };
    Ok(match ca_pem {
        Ok(ca_pem) => probe(&target.endpoint, ca_pem, context.options.probe_timeout).await,
        Err(err) if err.is_user_error() => ProbeResult::NotReachable {
            cause: err.to_string(),
        },
        Err(err) => return Err(err),
    })
}

fn error_policy(instance: Arc<LiteLLMInstance>, err: &Error, context: Arc<Context>) -> Action {
    if let Error::InUse(why) = err {
        tracing::debug!(instance = %instance.name_any(), "deletion {why}");
        return requeue(&context, &instance.metadata, dependents::RECHECK);
    }
    if err.needs_permission() {
        // Only a grant (or the spec) helps: no retry sooner than a probe.
        tracing::warn!(instance = %instance.name_any(), error = %err, "LiteLLMInstance cannot be provisioned");
        return requeue(&context, &instance.metadata, context.options.ready_interval);
    }
    tracing::warn!(instance = %instance.name_any(), error = %err, "LiteLLMInstance not reconciled");
    requeue(
        &context,
        &instance.metadata,
        context.options.not_ready_interval,
    )
}

/// The PEM bundle of `spec.tls.caSecretRef`, from the instance's namespace.
async fn read_ca(
    client: &kube::Client,
    namespace: &str,
    selector: &SecretKeySelector,
) -> Result<Vec<u8>, Error> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = secrets
        .get_opt(&selector.name)
        .await
        .map_err(|source| Error::ReadCaSecret {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
            source,
        })?
        .ok_or_else(|| Error::CaSecretNotFound {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
        })?;
    secret
        .data
        .and_then(|mut data| data.remove(&selector.key))
        .map(|bytes| bytes.0)
        .ok_or_else(|| Error::CaKeyMissing {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
            key: selector.key.clone(),
        })
}
