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

use std::fmt::Debug;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::NamespaceResourceScope;
use kube::api::{Api, ListParams, PostParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::instance::LiteLLMInstance;
use crate::litellm::{generate_key, Secret as SecretValue};

use super::build::{self, DatabaseSource};
use super::controller::FIELD_MANAGER;
use super::database::database_url;
use super::status::{DatabaseState, JobState, PodHealth, WorkloadObservation};
use super::Error;

/// What may happen to an object the instance owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    /// Created once, never rewritten: generated keys (a new value would
    /// lock clients out or make stored credentials unreadable) and Jobs
    /// (whose pod template is immutable; a new image gets a new Job).
    CreateOnly,
    /// Kept equal to the build.
    Reconcile,
}

/// Writes the objects of one instance, collecting the same-named objects
/// it does not own.
struct Applier<'a> {
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
    async fn ensure<K>(
        &mut self,
        name: &str,
        policy: Policy,
        build: impl FnOnce() -> K,
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
            None => match api.create(&post, &build()).await {
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
                let mut desired = build();
                desired.meta_mut().resource_version = existing.resource_version();
                Some(api.replace(name, &post, &desired).await.map_err(failed)?)
            }
        };
        if result.is_none() {
            self.conflicts.push(format!("{kind} {name}"));
        }
        Ok(result)
    }
}

/// Provisions `instance` (in `namespace`) and observes the result.
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

    for (generates, selector) in [
        (
            build::generates_master_key(instance),
            build::master_key_ref(instance),
        ),
        (
            build::generates_salt_key(instance),
            build::salt_key_ref(instance),
        ),
    ] {
        if generates {
            applier
                .ensure(&selector.name, Policy::CreateOnly, || {
                    build::generated_key_secret(instance, &selector, &generate_key())
                })
                .await?;
        }
    }

    let mut database = match build::database_source(instance) {
        Ok(None) | Err(_) => DatabaseState::NotConfigured,
        Ok(Some(DatabaseSource::UrlSecret(_))) => migration_pending(instance),
        Ok(Some(DatabaseSource::Discrete {
            host,
            port,
            name,
            credentials,
            username_key,
            password_key,
        })) => {
            match read_credentials(&secrets, &credentials, &username_key, &password_key).await? {
                Err(cause) => DatabaseState::CredentialsUnavailable(cause),
                Ok((user, password)) => {
                    let url = SecretValue::new(database_url(
                        &host,
                        port,
                        &name,
                        user.expose(),
                        password.expose(),
                    ));
                    applier
                        .ensure(
                            &build::names::database_url(instance),
                            Policy::Reconcile,
                            || build::database_url_secret(instance, &url),
                        )
                        .await?;
                    migration_pending(instance)
                }
            }
        }
    };

    let workload = build::names::workload(instance);
    applier
        .ensure(&workload, Policy::Reconcile, || build::config_map(instance))
        .await?;
    applier
        .ensure(&workload, Policy::Reconcile, || {
            build::service_account(instance)
        })
        .await?;
    applier
        .ensure(&workload, Policy::Reconcile, || build::service(instance))
        .await?;

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
    let secrets_hash = build::secrets_hash(&versions);
    let deployment = applier
        .ensure(&workload, Policy::Reconcile, || {
            build::deployment(instance, &secrets_hash)
        })
        .await?
        .map(|deployment| {
            let status = deployment.status.unwrap_or_default();
            (
                status.replicas.unwrap_or(0),
                status.ready_replicas.unwrap_or(0),
            )
        });

    if let DatabaseState::Migration(_) = database {
        let job = applier
            .ensure(
                &build::names::migration_job(instance),
                Policy::CreateOnly,
                || build::migration_job(instance),
            )
            .await?;
        database = DatabaseState::Migration(job.map_or(JobState::NotOwned, |job| job_state(&job)));
    }

    let selector = build::proxy_selector_string(instance);
    let pods = Api::<Pod>::namespaced(client.clone(), namespace)
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| Error::Workload {
            kind: "Pod".to_string(),
            name: selector.clone(),
            source,
        })?;
    Ok(WorkloadObservation {
        problems: Vec::new(),
        conflicts: applier.conflicts,
        deployment,
        pods: pods.items.iter().map(pod_health).collect(),
        database,
    })
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
