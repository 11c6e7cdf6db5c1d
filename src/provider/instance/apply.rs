//! The effectful part of provisioning: write the objects [`super::build`]
//! describes, but only the ones this instance owns, and observe what the
//! status reports (Deployment counts, pods, the migration Job).
//!
//! Ownership is the controller owner reference carrying the instance's uid.
//! An absent object is created with POST, which fails instead of adopting
//! one that appeared since the GET; an owned one is replaced with the
//! resourceVersion of the GET that proved ownership, so a change of hands in
//! between fails with a conflict instead of overwriting. An unowned one is
//! never written. Replace (not server-side apply) makes the build the whole
//! truth: a field the build stops setting disappears, and an unchanged
//! object is a no-op on the API server (no new resourceVersion).
//!
//! The generated master-key and salt-key Secrets are the exception: they
//! carry no owner reference, so they outlive the instance, and are marked
//! by the `litellm.crossplane.io/generated-for` annotation instead, which is
//! how an instance deleted and re-created under the same name (a GitOps
//! prune) finds and reuses them. A same-named Secret without the marker is
//! never adopted. Once the instance has run with a key (recorded in
//! `status.generatedKeys`, or an owned Deployment reads the Secret), a
//! missing or altered key is reported and never regenerated, and the
//! Deployment is left as it is, so no pod rolls onto a missing key.
//!
//! Upgrade from releases that gave the generated Secrets a controller owner
//! reference instead of the annotation: that reference (with this
//! instance's uid) counts as the marker too, and the first reconciliation
//! after the upgrade rewrites the Secret's metadata only (annotation in,
//! this instance's owner reference out; data untouched), with the
//! resourceVersion of the GET as precondition. From then on the garbage
//! collector leaves the Secret in place when the instance is deleted. The
//! rewrite gives the Secret a new resourceVersion, which changes the
//! pod-template secrets hash: the proxy pods roll once, with the same keys.
//! An instance deleted before its provider was upgraded took its Secrets
//! with it; nothing can bring those back.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::NamespaceResourceScope;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::instance::{GeneratedKeyRecord, LiteLLMInstance};
use crate::litellm::{generate_key, Secret as SecretValue};

use super::build::{self, DatabaseSource, GeneratedKey, KeyLoss, KeyPlan, Marker};
use super::controller::FIELD_MANAGER;
use super::database::database_url_with;
use super::exposure;
use super::monitor::{self, ServiceMonitor};
use super::status::{
    holds_deployment, key_record, DatabaseState, JobState, KeyObservation, KeyState, PodHealth,
    WorkloadObservation,
};
use super::Error;

/// What may happen to an object the instance owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    /// Created once, never rewritten: Jobs (whose pod template is
    /// immutable; a new image gets a new Job). The generated keys have
    /// their own, stricter path ([`Applier::generated_key`]).
    CreateOnly,
    /// Kept equal to the build.
    Reconcile,
}

/// Writes the objects of one instance, collecting the same-named objects
/// it does not own.
pub(super) struct Applier<'a> {
    client: &'a kube::Client,
    namespace: &'a str,
    owner_uid: String,
    conflicts: Vec<String>,
}

impl Applier<'_> {
    /// The object as it stands after applying `build()` under `policy`, or
    /// `None` when a same-named object the instance does not own exists (it
    /// is left alone and recorded as a conflict). `build` runs only when an
    /// object is written, so a generated key is only drawn when needed.
    pub(super) async fn ensure<K>(
        &mut self,
        name: &str,
        policy: Policy,
        build: impl FnOnce(Option<&K>) -> K,
    ) -> Result<Option<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + Serialize
            + DeserializeOwned
            + Debug,
    {
        let kind = K::kind(&()).into_owned();
        let failed = |source| Error::Workload {
            kind: kind.clone(),
            name: name.to_string(),
            source,
        };
        let api: Api<K> = Api::namespaced(self.client.clone(), self.namespace);
        let post = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        let result = match api.get_opt(name).await.map_err(failed)? {
            None => match api.create(&post, &build(None)).await {
                Ok(created) => Some(created),
                // Someone created it since the GET: not ours, so leave it.
                Err(kube::Error::Api(status)) if status.code == 409 => None,
                Err(source) => return Err(failed(source)),
            },
            Some(existing)
                if !existing
                    .owner_references()
                    .iter()
                    .any(|owner| owner.uid == self.owner_uid) =>
            {
                None
            }
            Some(existing) if policy == Policy::CreateOnly => Some(existing),
            Some(existing) => {
                let mut desired = build(Some(&existing));
                desired.meta_mut().resource_version = existing.resource_version();
                Some(api.replace(name, &post, &desired).await.map_err(failed)?)
            }
        };
        if result.is_none() {
            self.conflicts.push(format!("{kind} {name}"));
        }
        Ok(result)
    }

    /// The object as it stands, without writing it: `None` when absent, or
    /// when it is not owned (then recorded as a conflict).
    async fn observe<K>(&mut self, name: &str) -> Result<Option<K>, Error>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), self.namespace);
        let existing = api.get_opt(name).await.map_err(|source| Error::Workload {
            kind: K::kind(&()).into_owned(),
            name: name.to_string(),
            source,
        })?;
        match existing {
            Some(object) if !self.owns(&object) => {
                self.conflicts.push(format!("{} {name}", K::kind(&())));
                Ok(None)
            }
            other => Ok(other),
        }
    }

    /// The client the objects are written with.
    pub(super) fn client(&self) -> &kube::Client {
        self.client
    }

    fn owns(&self, object: &impl Resource) -> bool {
        object
            .owner_references()
            .iter()
            .any(|owner| owner.uid == self.owner_uid)
    }

    /// Makes sure `instance`'s generated `key` exists, without ever drawing
    /// a new value for a key the instance has run with, and reports it.
    async fn generated_key(
        &mut self,
        instance: &LiteLLMInstance,
        key: GeneratedKey,
        evidence: &mut Evidence<'_>,
    ) -> Result<KeyState, Error> {
        let name = key.secret_name(instance);
        let failed = |source| Error::Workload {
            kind: "Secret".to_string(),
            name: name.clone(),
            source,
        };
        let secrets: Api<Secret> = Api::namespaced(self.client.clone(), self.namespace);
        let existing = secrets.get_opt(&name).await.map_err(failed)?;
        let cached = key_record(instance.status.as_ref(), key).cloned();
        // Absent or unmarked, with nothing recorded in the cached object:
        // before a key is drawn (or a foreign Secret is called a conflict
        // rather than a loss), make sure the instance really has not run
        // with it.
        let unproven = cached.is_none()
            && existing
                .as_ref()
                .is_none_or(|s| build::marker(instance, &s.metadata) == Marker::Foreign);
        let (record, has_run) = if unproven {
            let record = evidence.record(key).await?;
            let has_run = record.is_some() || evidence.deployment_reads(&name).await?;
            (record, has_run)
        } else {
            let has_run = cached.is_some();
            (cached, has_run)
        };
        let recorded_fingerprint = record.and_then(|r| r.fingerprint);
        let plan = build::plan_generated_key(
            instance,
            key,
            existing.as_ref(),
            has_run,
            recorded_fingerprint.as_deref(),
        );
        Ok(match plan {
            KeyPlan::Generate => {
                let value = generate_key();
                let fingerprint = build::key_fingerprint(value.expose().as_bytes());
                let secret = build::generated_key_secret(instance, &key.selector(instance), &value);
                let post = PostParams {
                    field_manager: Some(FIELD_MANAGER.to_string()),
                    ..PostParams::default()
                };
                match secrets.create(&post, &secret).await {
                    Ok(_) => KeyState::Intact { fingerprint },
                    // Someone created it since the GET: not ours (this
                    // round), so leave it; the next round looks again.
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        self.conflicts.push(format!("Secret {name}"));
                        KeyState::NotOwned
                    }
                    Err(source) => return Err(failed(source)),
                }
            }
            KeyPlan::Keep { fingerprint } => KeyState::Intact { fingerprint },
            KeyPlan::Migrate { fingerprint, patch } => {
                let params = PatchParams {
                    field_manager: Some(FIELD_MANAGER.to_string()),
                    ..PatchParams::default()
                };
                secrets
                    .patch(&name, &params, &Patch::Merge(&patch))
                    .await
                    .map_err(failed)?;
                KeyState::Intact { fingerprint }
            }
            KeyPlan::NotOwned => {
                self.conflicts.push(format!("Secret {name}"));
                KeyState::NotOwned
            }
            KeyPlan::Lost(loss) => {
                if loss == KeyLoss::NotMarked {
                    self.conflicts.push(format!("Secret {name}"));
                }
                KeyState::Lost(loss)
            }
        })
    }
}

/// What proves that an instance has run with a generated key, read from
/// the API server only when the cached object records nothing (so at most
/// once per reconciliation, and not at all in the steady state).
struct Evidence<'a> {
    client: &'a kube::Client,
    namespace: &'a str,
    instance: &'a LiteLLMInstance,
    /// The instance as the API server has it; the watch cache may not hold
    /// the status patch of the previous round yet.
    fresh: Option<Option<LiteLLMInstance>>,
    /// The Deployments of the instance's names that this instance owns.
    deployment: Option<Vec<Deployment>>,
}

impl Evidence<'_> {
    /// The record of `key` in the instance's status on the API server.
    async fn record(&mut self, key: GeneratedKey) -> Result<Option<GeneratedKeyRecord>, Error> {
        if self.fresh.is_none() {
            let name = self.instance.name_any();
            let api: Api<LiteLLMInstance> = Api::namespaced(self.client.clone(), self.namespace);
            let fresh = api
                .get_opt(&name)
                .await
                .map_err(|source| Error::Workload {
                    kind: "LiteLLMInstance".to_string(),
                    name,
                    source,
                })?
                // Re-created since the cache saw it: not this instance.
                .filter(|fresh| fresh.uid() == self.instance.uid());
            self.fresh = Some(fresh);
        }
        let fresh = self.fresh.as_ref().and_then(Option::as_ref);
        Ok(fresh.and_then(|f| key_record(f.status.as_ref(), key).cloned()))
    }

    /// Whether one of this instance's Deployments (of either topology)
    /// reads the Secret `secret`: the proxy has run with what was in it.
    async fn deployment_reads(&mut self, secret: &str) -> Result<bool, Error> {
        if self.deployment.is_none() {
            let api: Api<Deployment> = Api::namespaced(self.client.clone(), self.namespace);
            let uid = self.instance.uid();
            let mut owned = Vec::new();
            let names = std::iter::once(build::Component::Proxy)
                .chain(build::Component::SPLIT)
                .map(|c| build::names::component(self.instance, c));
            for name in names {
                let found = api
                    .get_opt(&name)
                    .await
                    .map_err(|source| Error::Workload {
                        kind: "Deployment".to_string(),
                        name,
                        source,
                    })?
                    .filter(|d| {
                        d.owner_references()
                            .iter()
                            .any(|o| Some(&o.uid) == uid.as_ref())
                    });
                owned.extend(found);
            }
            self.deployment = Some(owned);
        }
        Ok(self
            .deployment
            .iter()
            .flatten()
            .any(|d| build::deployment_reads_secret(d, secret)))
    }
}

/// Provisions `instance` (in `namespace`) and observes the result: the
/// generated keys, the database and its migration, the configuration and
/// Services, the Deployments (and autoscalers) unless something holds them,
/// what another topology left behind, and the proxy's pods.
pub async fn provision(
    client: &kube::Client,
    namespace: &str,
    instance: &LiteLLMInstance,
) -> Result<WorkloadObservation, Error> {
    let problems = build::validate(instance);
    if !problems.is_empty() {
        return Ok(WorkloadObservation {
            problems,
            ..WorkloadObservation::default()
        });
    }
    let owner_uid = instance.uid().ok_or_else(|| Error::MissingUid {
        name: instance.name_any(),
    })?;
    let mut applier = Applier {
        client,
        namespace,
        owner_uid,
        conflicts: Vec::new(),
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);

    let mut evidence = Evidence {
        client,
        namespace,
        instance,
        fresh: None,
        deployment: None,
    };
    let mut keys = Vec::new();
    for key in GeneratedKey::ALL {
        if key.is_generated(instance) {
            let state = applier.generated_key(instance, key, &mut evidence).await?;
            keys.push(KeyObservation { key, state });
        }
    }
    let database = database(&mut applier, &secrets, instance).await?;
    let components = build::components(instance);
    configuration(&mut applier, instance, &components).await?;
    let (database, held_for_migration) = migration(&mut applier, instance, database).await?;

    // A key is missing, altered or someone else's: any change to the pod
    // template (a new secrets hash above all) would start pods without it,
    // so the Deployments stay as they are, or absent. The same while the
    // image's migration has not completed: the running pods keep serving
    // the schema they know.
    let hold = holds_deployment(&keys) || held_for_migration.is_some();
    let secrets_hash = match hold {
        true => String::new(),
        false => secrets_hash(&secrets, namespace, instance).await?,
    };
    let (totals, not_ready) =
        deployments(&mut applier, instance, &components, hold, &secrets_hash).await?;
    let mut unserved = disruption_budgets(&mut applier, instance, &components).await?;
    monitor(&mut applier, instance, &mut unserved).await?;
    prune(client, namespace, instance, &components).await?;
    let exposure = exposure::apply(&mut applier, instance).await?;
    let mut exposure_pruned = Vec::new();
    exposure::prune(client, namespace, instance, false, &mut exposure_pruned).await?;
    if !exposure_pruned.is_empty() {
        tracing::info!(%namespace, instance = %instance.name_any(), pruned = ?exposure_pruned, "exposure no longer asked for, deleted");
    }
    let pods = pods(client, namespace, instance).await?;
    Ok(WorkloadObservation {
        problems: Vec::new(),
        conflicts: applier.conflicts,
        deployment: totals,
        not_ready,
        held_for_migration,
        pods,
        database,
        keys,
        unserved,
        exposure,
    })
}

/// The ServiceMonitor asked for, where the cluster serves its API (else
/// noted in `unserved`). One no longer asked for goes in [`prune`].
async fn monitor(
    applier: &mut Applier<'_>,
    instance: &LiteLLMInstance,
    unserved: &mut Vec<String>,
) -> Result<(), Error> {
    let Some(desired) = monitor::service_monitor(instance) else {
        return Ok(());
    };
    let (group_version, resource) = monitor::API;
    if !served(applier.client, group_version, resource).await? {
        unserved.push(monitor::NOT_SERVED.to_string());
        return Ok(());
    }
    let name = build::names::workload(instance);
    applier
        .ensure(&name, Policy::Reconcile, |_| desired)
        .await?;
    Ok(())
}

/// The database as configured: its URL Secret written from discrete
/// values where they are given, and its migration pending.
async fn database(
    applier: &mut Applier<'_>,
    secrets: &Api<Secret>,
    instance: &LiteLLMInstance,
) -> Result<DatabaseState, Error> {
    Ok(match build::database_source(instance) {
        Ok(None) | Err(_) => DatabaseState::NotConfigured,
        Ok(Some(DatabaseSource::UrlSecret(_))) => migration_pending(instance),
        Ok(Some(DatabaseSource::Discrete {
            host,
            port,
            name,
            credentials,
            username_key,
            password_key,
        })) => match read_credentials(secrets, &credentials, &username_key, &password_key).await? {
            Err(cause) => DatabaseState::CredentialsUnavailable(cause),
            Ok((user, password)) => {
                let url = SecretValue::new(database_url_with(
                    &host,
                    port,
                    &name,
                    user.expose(),
                    password.expose(),
                    &build::database_params(instance),
                ));
                applier
                    .ensure(
                        &build::names::database_url(instance),
                        Policy::Reconcile,
                        |_| build::database_url_secret(instance, &url),
                    )
                    .await?;
                migration_pending(instance)
            }
        },
    })
}

/// The proxy's configuration, ServiceAccount and a Service per component.
async fn configuration(
    applier: &mut Applier<'_>,
    instance: &LiteLLMInstance,
    components: &[build::Component],
) -> Result<(), Error> {
    let workload = build::names::workload(instance);
    applier
        .ensure(&workload, Policy::Reconcile, |_| {
            build::config_map(instance)
        })
        .await?;
    applier
        .ensure(&workload, Policy::Reconcile, |_| {
            build::service_account(instance)
        })
        .await?;
    for &component in components {
        applier
            .ensure(
                &build::names::component(instance, component),
                Policy::Reconcile,
                |_| build::component_service(instance, component),
            )
            .await?;
    }
    Ok(())
}

/// The migration of the image, which comes first: the Deployments take a
/// new image only once its migration Job has completed (see
/// [`WorkloadObservation::held_for_migration`]). The database's state, and
/// the Job the Deployments wait for, if any.
async fn migration(
    applier: &mut Applier<'_>,
    instance: &LiteLLMInstance,
    mut database: DatabaseState,
) -> Result<(DatabaseState, Option<String>), Error> {
    if let DatabaseState::Migration(_) = database {
        let job = applier
            .ensure(
                &build::names::migration_job(instance),
                Policy::CreateOnly,
                |_| build::migration_job(instance),
            )
            .await?;
        database = DatabaseState::Migration(job.map_or(JobState::NotOwned, |job| job_state(&job)));
    }
    let held_for_migration = match database {
        DatabaseState::Migration(state) if state != JobState::Complete => {
            Some(build::names::migration_job(instance))
        }
        _ => None,
    };
    Ok((database, held_for_migration))
}

/// The hash of the versions of every Secret and ConfigMap the pods'
/// environment reads, which rolls them when one changes.
async fn secrets_hash(
    secrets: &Api<Secret>,
    namespace: &str,
    instance: &LiteLLMInstance,
) -> Result<String, Error> {
    let mut versions = Vec::new();
    for name in build::referenced_secrets(instance) {
        let version = secrets
            .get_metadata_opt(&name)
            .await
            .map_err(|source| Error::Workload {
                kind: "Secret".to_string(),
                name: name.clone(),
                source,
            })?
            .and_then(|meta| meta.metadata.resource_version);
        versions.push((name, version));
    }
    // The ConfigMaps of `env` and `envFrom`, under a name no Secret has
    // (so an instance that reads none keeps the hash it had).
    let config_maps: Api<ConfigMap> = Api::namespaced(secrets.clone().into_client(), namespace);
    for name in build::referenced_config_maps(instance) {
        let version = config_maps
            .get_metadata_opt(&name)
            .await
            .map_err(|source| Error::Workload {
                kind: "ConfigMap".to_string(),
                name: name.clone(),
                source,
            })?
            .and_then(|meta| meta.metadata.resource_version);
        versions.push((format!("configmap/{name}"), version));
    }
    Ok(build::secrets_hash(&versions))
}

/// The Deployment (and autoscaler) of each component, applied unless
/// `hold`, else only observed: the replicas and ready replicas of them all
/// (`None` while a required one is missing), and the required ones with no
/// ready replica.
async fn deployments(
    applier: &mut Applier<'_>,
    instance: &LiteLLMInstance,
    components: &[build::Component],
    hold: bool,
    secrets_hash: &str,
) -> Result<(Option<(i32, i32)>, Vec<String>), Error> {
    let mut totals = Some((0, 0));
    let mut not_ready = Vec::new();
    for &component in components {
        let name = build::names::component(instance, component);
        let autoscaled = build::autoscaler(instance, component);
        let deployment = if hold {
            applier.observe::<Deployment>(&name).await?
        } else {
            applier
                .ensure(&name, Policy::Reconcile, |existing: Option<&Deployment>| {
                    let mut desired =
                        build::component_deployment(instance, component, secrets_hash);
                    // An autoscaler owns the replica count once it exists.
                    if autoscaled.is_some() {
                        if let Some(replicas) = existing.and_then(|d| d.spec.replicas) {
                            desired.spec.replicas = Some(replicas);
                        }
                    }
                    desired
                })
                .await?
        };
        match deployment {
            Some(deployment) => {
                let status = deployment.status.unwrap_or_default();
                let ready = status.ready_replicas.unwrap_or(0);
                if let Some((replicas, ready_replicas)) = totals.as_mut() {
                    *replicas += status.replicas.unwrap_or(0);
                    *ready_replicas += ready;
                }
                if component.required() && ready == 0 {
                    not_ready.push(name.clone());
                }
                if let Some(autoscaler) = autoscaled {
                    applier
                        .ensure(&name, Policy::Reconcile, |_| autoscaler)
                        .await?;
                }
            }
            None if component.required() => totals = None,
            None => {}
        }
    }
    Ok((totals, not_ready))
}

/// The PodDisruptionBudget of each component that gets one, when the API
/// server serves them (asked once per round, and only when one is
/// wanted). Returns what could not be made for lack of the API, naming
/// the field that asked for it.
async fn disruption_budgets(
    applier: &mut Applier<'_>,
    instance: &LiteLLMInstance,
    components: &[build::Component],
) -> Result<Vec<String>, Error> {
    let wanted: Vec<_> = components
        .iter()
        .filter_map(|&c| Some((c, build::disruption_budget(instance, c)?)))
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    if !served(
        applier.client,
        build::PDB_GROUP_VERSION,
        build::PDB_RESOURCE,
    )
    .await?
    {
        let mut fields: Vec<String> = Vec::new();
        let mut deployments = Vec::new();
        for (component, _) in &wanted {
            let (_, field) = build::disruption_budget_settings(instance, *component);
            if !fields.contains(&field) {
                fields.push(field);
            }
            deployments.push(build::names::component(instance, *component));
        }
        return Ok(vec![format!(
            "{}: the API server does not serve {}/{}, so Deployment {} {} no \
             PodDisruptionBudget",
            fields.join(", "),
            build::PDB_GROUP_VERSION,
            build::PDB_RESOURCE,
            deployments.join(", "),
            if deployments.len() == 1 {
                "has"
            } else {
                "have"
            },
        )]);
    }
    for (component, budget) in wanted {
        applier
            .ensure(
                &build::names::component(instance, component),
                Policy::Reconcile,
                |_| budget,
            )
            .await?;
    }
    Ok(Vec::new())
}

/// Whether the API server serves `resource` in `group_version`
/// (discovery, which every authenticated client may read; a group version
/// not served at all answers 404).
pub(super) async fn served(
    client: &kube::Client,
    group_version: &str,
    resource: &str,
) -> Result<bool, Error> {
    match client.list_api_group_resources(group_version).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == resource)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(source) => Err(Error::Workload {
            kind: "APIResourceList".to_string(),
            name: group_version.to_string(),
            source,
        }),
    }
}

/// Deletes what the other topology (or dropped autoscaling, a
/// PodDisruptionBudget or ServiceMonitor no longer wanted) left behind.
async fn prune(
    client: &kube::Client,
    namespace: &str,
    instance: &LiteLLMInstance,
    components: &[build::Component],
) -> Result<(), Error> {
    let keep: Vec<String> = components
        .iter()
        .map(|&c| build::names::component(instance, c))
        .collect();
    let autoscaled: Vec<String> = components
        .iter()
        .filter(|&&c| build::autoscaling(instance, c).is_some())
        .map(|&c| build::names::component(instance, c))
        .collect();
    let Some(uid) = instance.uid() else {
        return Ok(());
    };
    let scope = DeleteScope::new(client, namespace, instance, &uid, &keep);
    let mut pruned = Vec::new();
    scope.delete_owned::<Deployment>(&mut pruned).await?;
    scope.delete_owned::<Service>(&mut pruned).await?;
    let scope = DeleteScope::new(client, namespace, instance, &uid, &autoscaled);
    scope
        .delete_owned::<HorizontalPodAutoscaler>(&mut pruned)
        .await?;
    let budgeted: Vec<String> = components
        .iter()
        .filter(|&&c| build::wants_disruption_budget(instance, c))
        .map(|&c| build::names::component(instance, c))
        .collect();
    let scope = DeleteScope::new(client, namespace, instance, &uid, &budgeted);
    scope
        .delete_owned::<PodDisruptionBudget>(&mut pruned)
        .await?;
    let monitored: Vec<String> = monitor::asked(instance)
        .map(|_| build::names::workload(instance))
        .into_iter()
        .collect();
    DeleteScope::new(client, namespace, instance, &uid, &monitored)
        .delete_owned::<ServiceMonitor>(&mut pruned)
        .await?;
    if !pruned.is_empty() {
        tracing::info!(%namespace, instance = %instance.name_any(), ?pruned, "no longer wanted (another topology, dropped autoscaling, disruption budget or ServiceMonitor), deleted");
    }
    Ok(())
}

/// The health of the proxy's pods.
async fn pods(
    client: &kube::Client,
    namespace: &str,
    instance: &LiteLLMInstance,
) -> Result<Vec<PodHealth>, Error> {
    let selector = build::proxy_selector_string(instance);
    let pods = Api::<Pod>::namespaced(client.clone(), namespace)
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| Error::Workload {
            kind: "Pod".to_string(),
            name: selector.clone(),
            source,
        })?;
    Ok(pods.items.iter().map(pod_health).collect())
}

/// The database state before the migration Job is looked at.
fn migration_pending(instance: &LiteLLMInstance) -> DatabaseState {
    if build::migration_enabled(instance) {
        DatabaseState::Migration(JobState::Running)
    } else {
        DatabaseState::MigrationDisabled
    }
}

/// Username and password from the credentials Secret, or why they are not
/// usable (naming the Secret and key, never a value).
async fn read_credentials(
    secrets: &Api<Secret>,
    name: &str,
    username_key: &str,
    password_key: &str,
) -> Result<Result<(SecretValue, SecretValue), String>, Error> {
    let Some(secret) = secrets
        .get_opt(name)
        .await
        .map_err(|source| Error::Workload {
            kind: "Secret".to_string(),
            name: name.to_string(),
            source,
        })?
    else {
        return Ok(Err(format!(
            "Secret {name} of spec.database.credentialsSecretRef does not exist"
        )));
    };
    let data = secret.data.unwrap_or_default();
    let value = |key: &str| match data.get(key) {
        None => Err(format!(
            "Secret {name} of spec.database.credentialsSecretRef has no key {key:?}"
        )),
        Some(bytes) => String::from_utf8(bytes.0.clone())
            .map(SecretValue::new)
            .map_err(|_| format!("key {key:?} of Secret {name} is not UTF-8")),
    };
    Ok(value(username_key).and_then(|user| Ok((user, value(password_key)?))))
}

/// A Job's state from its conditions, as the Job controller sets them.
fn job_state(job: &Job) -> JobState {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default();
    let has = |type_: &str| {
        conditions
            .iter()
            .any(|c| c.type_ == type_ && c.status == "True")
    };
    if has("Complete") {
        JobState::Complete
    } else if has("Failed") {
        JobState::Failed
    } else {
        JobState::Running
    }
}

/// Healthy: phase `Running` and condition `Ready=True`.
fn pod_health(pod: &Pod) -> PodHealth {
    let status = pod.status.as_ref();
    let running = status.and_then(|s| s.phase.as_deref()) == Some("Running");
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    PodHealth {
        name: pod.name_any(),
        healthy: running && ready,
    }
}

/// Deletes the workload objects `instance` owns (its controller owner
/// reference carries the instance's uid), after its dependents are gone:
/// autoscalers, PodDisruptionBudgets, ServiceMonitor, Deployment, Service,
/// ConfigMap, ServiceAccount, migration Jobs, the database URL Secret,
/// Ingresses and HTTPRoutes, found by the instance's labels. The generated
/// master and salt keys are never deleted: they outlive the instance (see
/// the module documentation). Returns what was deleted, as `Kind name`.
pub async fn teardown(
    client: &kube::Client,
    namespace: &str,
    instance: &LiteLLMInstance,
) -> Result<Vec<String>, Error> {
    let Some(uid) = instance.uid() else {
        return Ok(Vec::new());
    };
    let keep = [
        build::names::master_key(instance),
        build::names::salt_key(instance),
    ];
    let mut deleted = Vec::new();
    let scope = DeleteScope::new(client, namespace, instance, &uid, &keep);
    scope
        .delete_owned::<HorizontalPodAutoscaler>(&mut deleted)
        .await?;
    scope
        .delete_owned::<PodDisruptionBudget>(&mut deleted)
        .await?;
    scope.delete_owned::<ServiceMonitor>(&mut deleted).await?;
    scope.delete_owned::<Deployment>(&mut deleted).await?;
    scope.delete_owned::<Job>(&mut deleted).await?;
    scope.delete_owned::<Service>(&mut deleted).await?;
    scope.delete_owned::<ConfigMap>(&mut deleted).await?;
    scope.delete_owned::<ServiceAccount>(&mut deleted).await?;
    scope.delete_owned::<Secret>(&mut deleted).await?;
    exposure::prune(client, namespace, instance, true, &mut deleted).await?;
    Ok(deleted)
}

pub(super) struct DeleteScope<'a> {
    client: &'a kube::Client,
    namespace: &'a str,
    selector: String,
    uid: &'a str,
    keep: &'a [String],
}

impl<'a> DeleteScope<'a> {
    /// The objects labelled for `instance` and owned by `uid`, but those
    /// named in `keep`.
    pub(super) fn new(
        client: &'a kube::Client,
        namespace: &'a str,
        instance: &LiteLLMInstance,
        uid: &'a str,
        keep: &'a [String],
    ) -> Self {
        DeleteScope {
            client,
            namespace,
            selector: build::labels(instance)
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(","),
            uid,
            keep,
        }
    }

    pub(super) async fn delete_owned<K>(&self, deleted: &mut Vec<String>) -> Result<(), Error>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug,
    {
        let kind = K::kind(&()).into_owned();
        let failed = |name: &str, source| Error::Workload {
            kind: kind.clone(),
            name: name.to_string(),
            source,
        };
        let api: Api<K> = Api::namespaced(self.client.clone(), self.namespace);
        let listed = match api
            .list(&ListParams::default().labels(&self.selector))
            .await
        {
            Ok(listed) => listed,
            // A kind the API server does not serve (autoscaling/v2 or
            // policy/v1 on a server without it) holds nothing to delete.
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            // A kind the provider may not list (its ClusterRole not updated
            // with the release that added the kind): it cannot have created
            // any either, unless the permission was taken away since; then
            // the owner reference lets the garbage collector remove them
            // with the instance. Never a reason to fail every round, or to
            // hold an instance's deletion, over a feature it does not use.
            Err(kube::Error::Api(status)) if status.code == 403 => {
                tracing::warn!(
                    namespace = %self.namespace, %kind,
                    "the provider may not list {kind}s, so none are cleaned up; grant the \
                     permissions of examples/provider/runtime-config/rbac.yaml"
                );
                return Ok(());
            }
            Err(source) => return Err(failed(&self.selector, source)),
        };
        for object in listed {
            let name = object.name_any();
            let owned = object
                .owner_references()
                .iter()
                .any(|owner| owner.uid == self.uid);
            if !owned || self.keep.contains(&name) {
                continue;
            }
            // Only this object, with this uid: never a same-named successor.
            let params = DeleteParams {
                preconditions: object.uid().map(|uid| Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::background()
            };
            match api.delete(&name, &params).await {
                Ok(_) => deleted.push(format!("{kind} {name}")),
                Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
                Err(source) => return Err(failed(&name, source)),
            }
        }
        Ok(())
    }
}
