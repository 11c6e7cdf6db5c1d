//! The pure part: what to probe, and the status an instance should have
//! given what the probe found.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::api::common::{Condition, SecretKeySelector};
use crate::api::conditions;
use crate::api::instance::{
    GeneratedKeyRecord, GeneratedKeys, LiteLLMInstance, LiteLLMInstanceStatus, Workload,
    DEFAULT_PORT,
};

use super::build::{self, migration_enabled, GeneratedKey, KeyLoss, GENERATED_FOR_ANNOTATION};
use super::exposure::ExposureObservation;
use super::InstanceOptions;

/// Condition types of a `LiteLLMInstance`.
pub mod condition_type {
    pub use crate::api::conditions::READY;
    /// The database schema; for an attached proxy always owned by the proxy.
    pub const DATABASE_READY: &str = "DatabaseReady";
    /// Spec sections that do nothing because the workload is unmanaged.
    pub const WORKLOAD_UNMANAGED: &str = "WorkloadUnmanaged";
    /// Pods of a provisioned proxy. Never set for an attached proxy: its pods
    /// are not ours, and a clean report about pods we cannot see would lie.
    pub const PODS_HEALTHY: &str = "PodsHealthy";
    /// Same-named objects the provider did not take over.
    pub const WORKLOAD_CONFLICT: &str = "WorkloadConflict";
    /// The generated salt key the proxy has run with is not usable (status
    /// `True`, present only then). Nothing is regenerated.
    pub const SALT_KEY_MISSING: &str = "SaltKeyMissing";
    /// The generated master key the proxy has run with is not usable
    /// (status `True`, present only then). Nothing is regenerated.
    pub const MASTER_KEY_MISSING: &str = "MasterKeyMissing";
    /// Something the spec asks for needs an API the cluster does not serve
    /// (discovered each round), so it was not made (status `True`, present
    /// only then); the message names the field. The proxy runs without it.
    pub const API_NOT_SERVED: &str = "APINotServed";
    /// The instance is being deleted and waits for the managed resources
    /// that use it (status `True`, present only then).
    pub const DELETING: &str = "Deleting";
    /// The Ingresses and HTTPRoutes `spec.workload.exposure` (and the roles'
    /// `exposure`) ask for: `True` when each is written, `False` when an
    /// API is not served or an object is not the instance's. Present only
    /// while an exposure is asked for; it does not affect `Ready`.
    pub const EXPOSED: &str = "Exposed";
}

/// Condition reasons of a `LiteLLMInstance`.
pub mod reason {
    /// `Deleting=True`: managed resources still use the instance; the
    /// message counts them by kind.
    pub const WAITING_FOR_DEPENDENTS: &str = "WaitingForDependents";
    /// `Ready=False`: the provider cannot read the object (see
    /// [`crate::provider::watch::tolerant`]).
    pub const UNREADABLE: &str = "Unreadable";
    /// `Ready=True`: `GET /health/liveliness` answered 200.
    pub const PROXY_REACHABLE: &str = "ProxyReachable";
    /// `Ready=False`: no 200 from `GET /health/liveliness`.
    pub const PROXY_NOT_REACHABLE: &str = "ProxyNotReachable";
    /// `Ready=True`: a replica of the provisioned Deployment is ready.
    pub const ALL_RESOURCES_READY: &str = "AllResourcesReady";
    /// `Ready=False`: no replica of the provisioned Deployment is ready (or
    /// the Deployment could not be provisioned).
    pub const DEPLOYMENT_NOT_READY: &str = "DeploymentNotReady";
    /// `Ready=False`: the spec cannot be provisioned as written.
    pub const INVALID_SPEC: &str = "InvalidSpec";
    /// `Ready=False` and `Synced=False`: the instance's namespace is not
    /// labelled for provisioning (see [`super::super::admission`]).
    pub const PROVISIONING_NOT_ALLOWED: &str = "ProvisioningNotAllowed";
    /// `WorkloadConflict`: a same-named object exists that the instance does
    /// not own; it is left alone.
    pub const OBJECT_NOT_OWNED: &str = "ObjectNotOwned";
    /// `PodsHealthy=True`: every proxy pod runs and is ready.
    pub const ALL_PODS_HEALTHY: &str = "AllPodsHealthy";
    /// `PodsHealthy=False`: some proxy pod is not running or not ready.
    pub const PODS_NOT_HEALTHY: &str = "PodsNotHealthy";
    /// `PodsHealthy=False`: no proxy pod exists.
    pub const NO_PODS: &str = "NoPods";
    /// `DatabaseReady=True`: the migration Job completed.
    pub const MIGRATION_COMPLETE: &str = "MigrationComplete";
    /// `DatabaseReady=False`: the migration Job is running.
    pub const MIGRATION_RUNNING: &str = "MigrationRunning";
    /// `DatabaseReady=False`: the migration Job failed.
    pub const MIGRATION_FAILED: &str = "MigrationFailed";
    /// `DatabaseReady=True`: no migration Job; the proxy migrates on start.
    pub const MIGRATION_DISABLED: &str = "MigrationDisabled";
    /// `DatabaseReady=False`: no database is configured.
    pub const DATABASE_NOT_CONFIGURED: &str = "DatabaseNotConfigured";
    /// `DatabaseReady=False`: the username/password Secret is not usable.
    pub const CREDENTIALS_UNAVAILABLE: &str = "CredentialsUnavailable";
    /// `DatabaseReady`: the attached proxy owns its schema.
    pub const WORKLOAD_UNMANAGED: &str = "WorkloadUnmanaged";
    /// `WorkloadUnmanaged`: config sections are set but inert.
    pub const CONFIG_SETTINGS_IGNORED: &str = "ConfigSettingsIgnored";
    /// `Ready=False`: the salt key the proxy has run with is not usable
    /// (see the `SaltKeyMissing` condition).
    pub const SALT_KEY_MISSING: &str = "SaltKeyMissing";
    /// `Ready=False`: the master key the proxy has run with is not usable
    /// (see the `MasterKeyMissing` condition).
    pub const MASTER_KEY_MISSING: &str = "MasterKeyMissing";
    /// `SaltKeyMissing`/`MasterKeyMissing`: the Secret does not exist.
    pub const SECRET_NOT_FOUND: &str = "SecretNotFound";
    /// `SaltKeyMissing`/`MasterKeyMissing`: the Secret lacks the key.
    pub const KEY_NOT_FOUND: &str = "KeyNotFound";
    /// `SaltKeyMissing`: the value differs from the recorded fingerprint.
    pub const VALUE_CHANGED: &str = "ValueChanged";
    /// `SaltKeyMissing`/`MasterKeyMissing`: a Secret of that name exists
    /// without the generated-for annotation.
    pub const SECRET_NOT_MARKED: &str = "SecretNotMarked";
    /// `Exposed=False`: the API server (or an admission webhook or policy
    /// of the cluster's) refused an Ingress or HTTPRoute; the message names
    /// the field and quotes the refusal.
    pub const WRITE_REFUSED: &str = "WriteRefused";
    /// `Exposed=True`: every Ingress and HTTPRoute asked for is written.
    pub const EXPOSURE_WRITTEN: &str = "ExposureWritten";
    /// `Exposed=False`: the cluster does not serve the API of an exposure
    /// (`networking.k8s.io/v1` ingresses, `gateway.networking.k8s.io/v1`
    /// httproutes); nothing is created for it.
    /// (and `APINotServed`: the API the spec's field needs is not served).
    pub const API_NOT_SERVED: &str = "APINotServed";
}

/// What the probe found at the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResult {
    /// `GET /health/liveliness` answered 200. `version` is `litellm_version`
    /// from `GET /health/readiness`, when the proxy discloses it.
    Reachable { version: Option<String> },
    /// No 200 from `GET /health/liveliness`; `cause` says why, free of
    /// secrets (the LiteLLM client scrubs what it quotes).
    NotReachable { cause: String },
}

/// Where and how to probe an attached proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    /// `status.endpoint`: the admin API base URL.
    pub endpoint: String,
    /// Extra CA to trust, from a Secret in the instance's namespace.
    pub ca_secret_ref: Option<SecretKeySelector>,
}

/// The admin API URL of `instance`: `spec.workload.endpoint` without trailing
/// `/`, else `http(s)://<name>.<namespace>.svc:<service.port or 4000>`.
///
/// A provisioned proxy of `topology: split` answers admin calls at its
/// backend, `http(s)://<name>-backend.<namespace>.svc:4001`.
pub fn endpoint(instance: &LiteLLMInstance) -> String {
    let spec = &instance.spec;
    if let Some(explicit) = spec.workload.as_ref().and_then(|w| w.endpoint.as_deref()) {
        return explicit.trim_end_matches('/').to_string();
    }
    if split(instance) {
        return service_url(instance, build::Component::Backend);
    }
    let port = spec
        .service
        .as_ref()
        .and_then(|s| s.port)
        .unwrap_or(DEFAULT_PORT);
    let namespace = instance.namespace().unwrap_or_default();
    format!(
        "{}://{}.{namespace}.svc:{port}",
        scheme(instance),
        instance.name_any()
    )
}

fn scheme(instance: &LiteLLMInstance) -> &'static str {
    if instance
        .spec
        .service
        .as_ref()
        .and_then(|s| s.https)
        .unwrap_or(false)
    {
        "https"
    } else {
        "http"
    }
}

/// Whether the instance is a provisioned proxy of `topology: split`.
fn split(instance: &LiteLLMInstance) -> bool {
    Workload::is_managed(instance.spec.workload.as_ref())
        && build::topology(instance) == crate::api::instance::Topology::Split
}

/// The URL of a provisioned component's Service.
fn service_url(instance: &LiteLLMInstance, component: build::Component) -> String {
    format!(
        "{}://{}.{}.svc:{}",
        scheme(instance),
        build::names::component(instance, component),
        instance.namespace().unwrap_or_default(),
        build::service_port(instance, component)
    )
}

/// What to probe, or `None` for an instance this controller must not touch
/// the network for (`managed` unset or true: nothing was provisioned, so
/// nothing answers on its behalf).
pub fn probe_target(instance: &LiteLLMInstance) -> Option<ProbeTarget> {
    if Workload::is_managed(instance.spec.workload.as_ref()) {
        return None;
    }
    Some(ProbeTarget {
        endpoint: endpoint(instance),
        ca_secret_ref: instance
            .spec
            .tls
            .as_ref()
            .and_then(|tls| tls.ca_secret_ref.clone()),
    })
}

/// The conditions of a status being computed: the instance's current ones,
/// so conditions this controller does not own are kept, and the ones it sets
/// keep their transition time while their status is unchanged.
struct Conditions {
    list: Vec<Condition>,
    generation: Option<i64>,
    now: String,
}

impl Conditions {
    fn of(instance: &LiteLLMInstance, now: Timestamp) -> Self {
        Self {
            list: instance
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default(),
            generation: instance.metadata.generation,
            // Whole-second RFC 3339, as metav1.Time serializes condition
            // times, so Kubernetes tooling parses them like any other's.
            now: format!("{now:.0}"),
        }
    }

    fn set(&mut self, type_: &str, status: bool, reason: &str, message: String) {
        let mut condition = conditions::condition(type_, status, reason, Some(message));
        condition.observed_generation = self.generation;
        conditions::set(&mut self.list, condition, &self.now);
    }

    fn remove(&mut self, type_: &str) {
        conditions::remove(&mut self.list, type_);
    }
}

/// The status an attached instance (`managed: false`) should have, given
/// the probe of its [`probe_target`] (`None` when nothing was probed) at
/// time `now`. Equal inputs give an equal status, so the caller can skip
/// the patch.
pub fn desired_status(
    instance: &LiteLLMInstance,
    probe: Option<ProbeResult>,
    now: Timestamp,
) -> LiteLLMInstanceStatus {
    let generation = instance.metadata.generation;
    let mut conditions = Conditions::of(instance, now);
    // Left from a time the instance was provisioned: nothing of the kind is
    // watched any more, so a stale report would mislead.
    conditions.remove(condition_type::PODS_HEALTHY);
    conditions.remove(condition_type::WORKLOAD_CONFLICT);
    conditions.remove(condition_type::API_NOT_SERVED);
    conditions.remove(condition_type::SALT_KEY_MISSING);
    conditions.remove(condition_type::MASTER_KEY_MISSING);
    conditions.remove(condition_type::EXPOSED);

    let spec = &instance.spec;
    let mut status = LiteLLMInstanceStatus {
        observed_generation: generation,
        // Kept while attached: switching back to provisioning must not
        // forget that the generated keys were used.
        generated_keys: instance
            .status
            .as_ref()
            .and_then(|s| s.generated_keys.clone()),
        ..LiteLLMInstanceStatus::default()
    };

    let endpoint = endpoint(instance);
    status.gateway_endpoint = gateway_endpoint(instance);

    match probe {
        Some(ProbeResult::Reachable { version }) => {
            status.ready = true;
            status.version = version.filter(|v| !v.is_empty());
            conditions.set(
                condition_type::READY,
                true,
                reason::PROXY_REACHABLE,
                format!("the proxy answers GET /health/liveliness at {endpoint}"),
            );
        }
        Some(ProbeResult::NotReachable { cause }) => conditions.set(
            condition_type::READY,
            false,
            reason::PROXY_NOT_REACHABLE,
            format!("the proxy at {endpoint} is not reachable: {cause}"),
        ),
        None => conditions.set(
            condition_type::READY,
            false,
            reason::PROXY_NOT_REACHABLE,
            format!("the proxy at {endpoint} has not been probed yet"),
        ),
    }

    conditions.set(
        condition_type::DATABASE_READY,
        true,
        reason::WORKLOAD_UNMANAGED,
        if migration_enabled(instance) {
            "spec.database.migration is ignored while workload.managed is false: the \
             externally managed proxy owns its schema, so no migration Job is created"
        } else {
            "the database schema is owned by the externally managed proxy"
        }
        .to_string(),
    );

    let ignored = spec.config.set_sections();
    if ignored.is_empty() {
        conditions.remove(condition_type::WORKLOAD_UNMANAGED);
    } else {
        let verb = if ignored.len() == 1 { "is" } else { "are" };
        conditions.set(
            condition_type::WORKLOAD_UNMANAGED,
            true,
            reason::CONFIG_SETTINGS_IGNORED,
            format!(
                "{} {verb} ignored while workload.managed is false; the proxy owns its own \
                 configuration",
                english_list(&ignored)
            ),
        );
    }

    status.endpoint = Some(endpoint);
    status.conditions = conditions.list;
    status
}

/// `spec.workload.gatewayEndpoint` without trailing `/`; for a
/// provisioned proxy of `topology: split` its gateway's Service.
fn gateway_endpoint(instance: &LiteLLMInstance) -> Option<String> {
    if split(instance) {
        return Some(service_url(instance, build::Component::Gateway));
    }
    instance
        .spec
        .workload
        .as_ref()
        .and_then(|w| w.gateway_endpoint.as_deref())
        .map(|url| url.trim_end_matches('/').to_string())
}

/// What the apply step found and did for a provisioned instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkloadObservation {
    /// Why the spec cannot be provisioned; nothing was applied when set.
    pub problems: Vec<String>,
    /// Same-named objects the instance does not own, as `Kind name`; they
    /// were left untouched.
    pub conflicts: Vec<String>,
    /// `(replicas, readyReplicas)` of the owned Deployments, summed over
    /// the topology's; `None` when one the instance needs (the single
    /// proxy; the gateway or backend) is absent or not owned.
    pub deployment: Option<(i32, i32)>,
    /// The needed Deployments without a ready replica.
    pub not_ready: Vec<String>,
    /// The migration Job the Deployments wait for: they are not created or
    /// changed until the Job of their image has completed.
    pub held_for_migration: Option<String>,
    /// The proxy pods, selected by the provider's labels.
    pub pods: Vec<PodHealth>,
    pub database: DatabaseState,
    /// The generated keys (none for a key given by `secretRef`).
    pub keys: Vec<KeyObservation>,
    /// What the spec asks for that the API server does not serve (its API
    /// is discovered), each naming the field; nothing was made for it.
    pub unserved: Vec<String>,
    /// The Ingresses and HTTPRoutes asked for.
    pub exposure: ExposureObservation,
}

/// Whether the Deployment is left as it is (not created, not changed):
/// some generated key is not this instance's or not usable, and a pod
/// started now would run with a missing or foreign key.
pub fn holds_deployment(keys: &[KeyObservation]) -> bool {
    keys.iter()
        .any(|k| !matches!(k.state, KeyState::Intact { .. }))
}

/// One generated key as the apply step left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyObservation {
    pub key: GeneratedKey,
    pub state: KeyState,
}

/// The state of a generated key's Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// The instance's Secret holds a value with this fingerprint (just
    /// generated, found or migrated).
    Intact { fingerprint: String },
    /// A same-named Secret that is not the instance's, and the instance
    /// has not run with this key: left alone (and listed as a conflict).
    NotOwned,
    /// The instance has run with this key and it is not usable.
    Lost(KeyLoss),
}

/// The record of `key` in `status`, if the instance has run with it.
pub fn key_record(
    status: Option<&LiteLLMInstanceStatus>,
    key: GeneratedKey,
) -> Option<&GeneratedKeyRecord> {
    let keys = status?.generated_keys.as_ref()?;
    match key {
        GeneratedKey::MasterKey => keys.master_key.as_ref(),
        GeneratedKey::SaltKey => keys.salt_key.as_ref(),
    }
}

/// `status.generatedKeys` after this round: the records of `instance`'s
/// status, plus one for each intact key not recorded yet (at `now`). A
/// record is never dropped here; it goes only when someone removes it.
pub fn recorded_keys(
    instance: &LiteLLMInstance,
    keys: &[KeyObservation],
    now: &str,
) -> Option<GeneratedKeys> {
    let mut record = instance
        .status
        .as_ref()
        .and_then(|s| s.generated_keys.clone())
        .unwrap_or_default();
    for observed in keys {
        let KeyState::Intact { fingerprint } = &observed.state else {
            continue;
        };
        let fingerprint = observed.key.value_is_pinned().then(|| fingerprint.clone());
        let slot = match observed.key {
            GeneratedKey::MasterKey => &mut record.master_key,
            GeneratedKey::SaltKey => &mut record.salt_key,
        };
        match slot {
            None => {
                *slot = Some(GeneratedKeyRecord {
                    secret_name: observed.key.secret_name(instance),
                    recorded_at: Some(now.to_string()),
                    fingerprint,
                })
            }
            // A record without its fingerprint (edited by hand) gets it
            // back; an intact key never differs from a recorded one.
            Some(existing) if existing.fingerprint.is_none() => existing.fingerprint = fingerprint,
            Some(_) => {}
        }
    }
    (record != GeneratedKeys::default()).then_some(record)
}

/// The condition type reporting a lost `key`.
fn key_condition_type(key: GeneratedKey) -> &'static str {
    match key {
        GeneratedKey::MasterKey => condition_type::MASTER_KEY_MISSING,
        GeneratedKey::SaltKey => condition_type::SALT_KEY_MISSING,
    }
}

fn key_loss_reason(loss: KeyLoss) -> &'static str {
    match loss {
        KeyLoss::SecretNotFound => reason::SECRET_NOT_FOUND,
        KeyLoss::KeyNotFound => reason::KEY_NOT_FOUND,
        KeyLoss::ValueChanged => reason::VALUE_CHANGED,
        KeyLoss::NotMarked => reason::SECRET_NOT_MARKED,
    }
}

/// What is wrong with a lost key, why nothing is regenerated and what to
/// do. Names Secrets, keys and the annotation; never a value.
pub fn key_loss_message(instance: &LiteLLMInstance, key: GeneratedKey, loss: KeyLoss) -> String {
    let secret = key.secret_name(instance);
    let data_key = key.data_key();
    let label = key.label();
    let marker = format!(
        "{GENERATED_FOR_ANNOTATION}={}",
        build::generated_for(instance)
    );
    let workload = build::names::workload(instance);
    let what = match loss {
        KeyLoss::SecretNotFound => format!(
            "Secret {secret}, which held the {label} this proxy has run with, does not exist"
        ),
        KeyLoss::KeyNotFound => {
            format!("Secret {secret} has no {data_key}, or an empty one")
        }
        KeyLoss::ValueChanged => format!(
            "the {data_key} in Secret {secret} is not the one this proxy has run with \
             (fingerprint in status.generatedKeys.saltKey)"
        ),
        KeyLoss::NotMarked => format!(
            "Secret {secret} exists without the annotation {marker}, so it is not taken for the \
             {label} this proxy has run with"
        ),
    };
    let why = match key {
        GeneratedKey::SaltKey => {
            "no new salt key is generated (every credential stored in the proxy's database \
             would become unreadable)"
        }
        GeneratedKey::MasterKey => {
            "no new master key is generated (it would lock out every client)"
        }
    };
    let todo = match (key, loss) {
        (_, KeyLoss::NotMarked) => format!(
            "if it is the {label} restored from a backup, add the annotation; otherwise move it \
             aside and restore Secret {secret} from a backup"
        ),
        (GeneratedKey::SaltKey, KeyLoss::ValueChanged) => format!(
            "restore the previous {data_key} from a backup, or, if the new value is deliberate, \
             remove status.generatedKeys.saltKey to accept it"
        ),
        (GeneratedKey::SaltKey, _) => {
            format!("restore Secret {secret} (key {data_key}, annotation {marker}) from a backup")
        }
        (GeneratedKey::MasterKey, _) => format!(
            "restore Secret {secret} (key {data_key}, annotation {marker}) from a backup, or \
             create it with a new key and that annotation to rotate the master key"
        ),
    };
    format!("{what}: {why} and Deployment {workload} is left unchanged; {todo}")
}

/// One proxy pod: healthy when running and ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodHealth {
    pub name: String,
    pub healthy: bool,
}

/// The database as the apply step found it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DatabaseState {
    /// Neither discrete values nor a URL Secret.
    #[default]
    NotConfigured,
    /// The username/password Secret is missing or incomplete; the message
    /// names the Secret and key, never a value.
    CredentialsUnavailable(String),
    /// No migration Job was asked for.
    MigrationDisabled,
    /// The migration Job of the current image.
    Migration(JobState),
}

/// State of the migration Job, from its conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Running,
    Complete,
    Failed,
    /// A same-named Job exists that the instance does not own.
    NotOwned,
}

/// The status a provisioned instance (`managed` unset or true) should have,
/// given what the apply step observed, at time `now`.
pub fn provisioned_status(
    instance: &LiteLLMInstance,
    observed: &WorkloadObservation,
    now: Timestamp,
) -> LiteLLMInstanceStatus {
    let mut conditions = Conditions::of(instance, now);
    // Left from a time the instance was attached.
    conditions.remove(condition_type::WORKLOAD_UNMANAGED);
    let lost = key_losses(&mut conditions, instance, observed);
    let (replicas, ready_replicas) = observed.deployment.unwrap_or((0, 0));
    let ready = observed.problems.is_empty()
        && lost.is_empty()
        && observed.deployment.is_some()
        && observed.not_ready.is_empty()
        && ready_replicas > 0;
    let status = LiteLLMInstanceStatus {
        ready,
        endpoint: Some(endpoint(instance)),
        gateway_endpoint: gateway_endpoint(instance),
        version: Some(build::version(instance)),
        replicas,
        ready_replicas,
        observed_generation: instance.metadata.generation,
        generated_keys: recorded_keys(instance, &observed.keys, &conditions.now),
        ..LiteLLMInstanceStatus::default()
    };
    let (ready_reason, ready_message) = readiness(instance, observed, &lost, ready);
    conditions.set(condition_type::READY, ready, ready_reason, ready_message);
    conflict_condition(&mut conditions, observed);
    if observed.unserved.is_empty() {
        conditions.remove(condition_type::API_NOT_SERVED);
    } else {
        conditions.set(
            condition_type::API_NOT_SERVED,
            true,
            reason::API_NOT_SERVED,
            observed.unserved.join("; "),
        );
    }
    pods_condition(&mut conditions, instance, observed);
    database_condition(&mut conditions, instance, observed);
    exposure_condition(&mut conditions, &observed.exposure);
    LiteLLMInstanceStatus {
        conditions: conditions.list,
        ..status
    }
}

/// The status of a provisioned instance whose namespace may not hold one
/// (`why`, from [`super::admission::refusal`]): `ready` false and
/// `Ready=False`, the rest as it was (the generated keys' records above
/// all: they are what proves the proxy ran with its keys).
pub fn not_admitted_status(
    instance: &LiteLLMInstance,
    why: &str,
    now: Timestamp,
) -> LiteLLMInstanceStatus {
    let mut conditions = Conditions::of(instance, now);
    conditions.set(
        condition_type::READY,
        false,
        reason::PROVISIONING_NOT_ALLOWED,
        why.to_string(),
    );
    LiteLLMInstanceStatus {
        ready: false,
        conditions: conditions.list,
        ..instance.status.clone().unwrap_or_default()
    }
}

/// Sets or clears the condition of each generated key's loss, the salt key
/// first (its loss is the one that loses data), and returns the losses
/// with their messages.
fn key_losses(
    conditions: &mut Conditions,
    instance: &LiteLLMInstance,
    observed: &WorkloadObservation,
) -> Vec<(GeneratedKey, String)> {
    let mut lost = Vec::new();
    for key in [GeneratedKey::SaltKey, GeneratedKey::MasterKey] {
        let loss = observed.keys.iter().find_map(|o| match o.state {
            KeyState::Lost(loss) if o.key == key => Some(loss),
            _ => None,
        });
        match loss {
            Some(loss) => {
                let message = key_loss_message(instance, key, loss);
                conditions.set(
                    key_condition_type(key),
                    true,
                    key_loss_reason(loss),
                    message.clone(),
                );
                lost.push((key, message));
            }
            None => conditions.remove(key_condition_type(key)),
        }
    }
    lost
}

/// The reason and message of `Ready`: the first that holds of an invalid
/// spec, a lost key, all ready, a Deployment waiting for its migration or
/// for its keys, a Deployment not the instance's, no replica ready.
fn readiness(
    instance: &LiteLLMInstance,
    observed: &WorkloadObservation,
    lost: &[(GeneratedKey, String)],
    ready: bool,
) -> (&'static str, String) {
    let (replicas, ready_replicas) = observed.deployment.unwrap_or((0, 0));
    let name = instance.name_any();
    let deployments = english_list(
        &build::components(instance)
            .into_iter()
            .filter(|c| c.required())
            .map(|c| build::names::component(instance, c))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let not_owned_keys: Vec<String> = observed
        .keys
        .iter()
        .filter(|k| k.state == KeyState::NotOwned)
        .map(|k| format!("Secret {}", k.key.secret_name(instance)))
        .collect();
    if !observed.problems.is_empty() {
        (
            reason::INVALID_SPEC,
            format!("nothing is provisioned: {}", observed.problems.join("; ")),
        )
    } else if let Some((key, _)) = lost.first() {
        (
            match key {
                GeneratedKey::SaltKey => reason::SALT_KEY_MISSING,
                GeneratedKey::MasterKey => reason::MASTER_KEY_MISSING,
            },
            lost.iter()
                .map(|(_, message)| message.as_str())
                .collect::<Vec<_>>()
                .join(". "),
        )
    } else if ready {
        (
            reason::ALL_RESOURCES_READY,
            format!(
                "{ready_replicas} of {replicas} replicas of Deployment {deployments} are ready"
            ),
        )
    } else if let (None, Some(job)) = (observed.deployment, &observed.held_for_migration) {
        (
            reason::DEPLOYMENT_NOT_READY,
            format!(
                "Deployment {deployments} waits for migration Job {job} to complete before it is \
                 created"
            ),
        )
    } else if observed.deployment.is_none() && !not_owned_keys.is_empty() {
        let names: Vec<&str> = not_owned_keys.iter().map(String::as_str).collect();
        (
            reason::DEPLOYMENT_NOT_READY,
            format!(
                "Deployment {name} is not provisioned while {} {} not this instance's \
                 (see WorkloadConflict)",
                english_list(&names),
                if names.len() == 1 { "is" } else { "are" },
            ),
        )
    } else if observed.deployment.is_none() {
        (
            reason::DEPLOYMENT_NOT_READY,
            format!(
                "Deployment {deployments} is not owned by this instance (see WorkloadConflict)"
            ),
        )
    } else {
        let waiting: Vec<&str> = observed.not_ready.iter().map(String::as_str).collect();
        let waiting = if waiting.is_empty() {
            deployments.clone()
        } else {
            english_list(&waiting)
        };
        let mut message =
            format!("no replica of Deployment {waiting} is ready ({replicas} replicas)");
        if let Some(job) = &observed.held_for_migration {
            message.push_str(&format!(
                "; the pod template is updated once migration Job {job} has completed"
            ));
        }
        (reason::DEPLOYMENT_NOT_READY, message)
    }
}

/// `WorkloadConflict`: the objects the instance would make that exist and
/// are not its own.
fn conflict_condition(conditions: &mut Conditions, observed: &WorkloadObservation) {
    if observed.conflicts.is_empty() {
        conditions.remove(condition_type::WORKLOAD_CONFLICT);
    } else {
        conditions.set(
            condition_type::WORKLOAD_CONFLICT,
            true,
            reason::OBJECT_NOT_OWNED,
            format!(
                "{} {} but {} not owned by this instance, so {} left untouched; delete or \
                 rename {} to let the provider create its own",
                english_list(
                    &observed
                        .conflicts
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>()
                ),
                if observed.conflicts.len() == 1 {
                    "exists"
                } else {
                    "exist"
                },
                if observed.conflicts.len() == 1 {
                    "is"
                } else {
                    "are"
                },
                if observed.conflicts.len() == 1 {
                    "it was"
                } else {
                    "they were"
                },
                if observed.conflicts.len() == 1 {
                    "it"
                } else {
                    "them"
                },
            ),
        );
    }
}

/// `PodsHealthy`: whether the proxy's pods run and are ready.
fn pods_condition(
    conditions: &mut Conditions,
    instance: &LiteLLMInstance,
    observed: &WorkloadObservation,
) {
    let name = instance.name_any();
    let unhealthy: Vec<&str> = observed
        .pods
        .iter()
        .filter(|p| !p.healthy)
        .map(|p| p.name.as_str())
        .collect();
    if observed.pods.is_empty() {
        conditions.set(
            condition_type::PODS_HEALTHY,
            false,
            reason::NO_PODS,
            format!("no pod of Deployment {name} exists"),
        );
    } else if unhealthy.is_empty() {
        conditions.set(
            condition_type::PODS_HEALTHY,
            true,
            reason::ALL_PODS_HEALTHY,
            format!("{} pods running and ready", observed.pods.len()),
        );
    } else {
        conditions.set(
            condition_type::PODS_HEALTHY,
            false,
            reason::PODS_NOT_HEALTHY,
            format!("not running or not ready: {}", english_list(&unhealthy)),
        );
    }
}

/// `DatabaseReady`: the database's configuration and migration.
fn database_condition(
    conditions: &mut Conditions,
    instance: &LiteLLMInstance,
    observed: &WorkloadObservation,
) {
    let job = build::names::migration_job(instance);
    let (database_ready, database_reason, database_message) = match &observed.database {
        DatabaseState::NotConfigured => (
            false,
            reason::DATABASE_NOT_CONFIGURED,
            "spec.database sets neither host and credentialsSecretRef nor urlSecretRef; \
             teams, keys and budgets need a database"
                .to_string(),
        ),
        DatabaseState::CredentialsUnavailable(cause) => {
            (false, reason::CREDENTIALS_UNAVAILABLE, cause.clone())
        }
        DatabaseState::MigrationDisabled => (
            true,
            reason::MIGRATION_DISABLED,
            "spec.database.migration is not enabled; the proxy migrates the schema on start"
                .to_string(),
        ),
        DatabaseState::Migration(JobState::Complete) => (
            true,
            reason::MIGRATION_COMPLETE,
            format!("migration Job {job} completed"),
        ),
        DatabaseState::Migration(JobState::Running) => (
            false,
            reason::MIGRATION_RUNNING,
            format!("migration Job {job} has not completed yet"),
        ),
        DatabaseState::Migration(JobState::Failed) => (
            false,
            reason::MIGRATION_FAILED,
            format!("migration Job {job} failed; see its pods' logs"),
        ),
        DatabaseState::Migration(JobState::NotOwned) => (
            false,
            reason::OBJECT_NOT_OWNED,
            format!("Job {job} is not owned by this instance (see WorkloadConflict)"),
        ),
    };
    conditions.set(
        condition_type::DATABASE_READY,
        database_ready,
        database_reason,
        database_message,
    );
}

/// `Exposed`: the Ingresses and HTTPRoutes asked for, each written, or why
/// not (its API not served, its name taken by an object not the
/// instance's); absent when none is asked for.
fn exposure_condition(conditions: &mut Conditions, observed: &ExposureObservation) {
    if !observed.is_asked() {
        conditions.remove(condition_type::EXPOSED);
        return;
    }
    let mut parts = Vec::new();
    for (path, object, api) in &observed.not_served {
        parts.push(format!(
            "{path}: the cluster does not serve {api}, so {object} is not created (it is \
             once the API is installed)"
        ));
    }
    for object in &observed.not_owned {
        parts.push(format!(
            "{object} exists and is not owned by this instance (see WorkloadConflict)"
        ));
    }
    for (path, object, message) in &observed.refused {
        parts.push(format!(
            "{path}: the API server refused {object}: {message}"
        ));
    }
    if !observed.written.is_empty() {
        let written: Vec<&str> = observed.written.iter().map(String::as_str).collect();
        parts.push(format!("{} written", english_list(&written)));
    }
    let (status, reason) = if !observed.refused.is_empty() {
        (false, reason::WRITE_REFUSED)
    } else if !observed.not_served.is_empty() {
        (false, reason::API_NOT_SERVED)
    } else if !observed.not_owned.is_empty() {
        (false, reason::OBJECT_NOT_OWNED)
    } else {
        (true, reason::EXPOSURE_WRITTEN)
    };
    conditions.set(condition_type::EXPOSED, status, reason, parts.join("; "));
}

/// When to look again: soon while the proxy is not ready (it may be
/// starting; pods are not watched), at the normal interval otherwise.
pub fn requeue_after(status: &LiteLLMInstanceStatus, options: &InstanceOptions) -> Duration {
    if status.ready {
        options.ready_interval
    } else {
        options.not_ready_interval
    }
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::api::common::find_condition;

    const NOW: &str = "2026-01-02T03:04:05Z";
    const LATER: &str = "2026-01-02T03:09:05Z";

    fn at(time: &str) -> Timestamp {
        time.parse().unwrap()
    }

    fn instance(spec: Value) -> LiteLLMInstance {
        serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": "gw", "namespace": "team-a", "generation": 3},
            "spec": spec,
        }))
        .unwrap()
    }

    /// An attached instance with `extra` merged into its spec.
    fn attached(extra: Value) -> LiteLLMInstance {
        let mut spec = json!({
            "workload": {"managed": false},
            "masterKey": {"secretRef": {"name": "litellm-master-key", "key": "LITELLM_MASTER_KEY"}},
        });
        for (field, value) in extra.as_object().unwrap() {
            match (spec.get_mut(field), value) {
                (Some(Value::Object(into)), Value::Object(from)) => into.extend(from.clone()),
                _ => {
                    spec[field] = value.clone();
                }
            }
        }
        instance(spec)
    }

    fn reachable(version: Option<&str>) -> Option<ProbeResult> {
        Some(ProbeResult::Reachable {
            version: version.map(str::to_string),
        })
    }

    fn message<'a>(status: &'a LiteLLMInstanceStatus, type_: &str) -> &'a str {
        find_condition(&status.conditions, type_)
            .and_then(|c| c.message.as_deref())
            .unwrap_or_else(|| panic!("no {type_} condition in {status:?}"))
    }

    #[test]
    fn endpoint_is_the_explicit_one_trimmed_or_the_service_formula() {
        let cases = [
            (json!({}), "http://gw.team-a.svc:4000"),
            (json!({"service": {"port": 80}}), "http://gw.team-a.svc:80"),
            (
                json!({"service": {"port": 8443, "https": true}}),
                "https://gw.team-a.svc:8443",
            ),
            (
                json!({"service": {"https": false}}),
                "http://gw.team-a.svc:4000",
            ),
            (
                json!({"workload": {"endpoint": "http://litellm.platform.svc:4000/"}}),
                "http://litellm.platform.svc:4000",
            ),
            (
                json!({"workload": {"endpoint": "https://proxy.example.com//"}}),
                "https://proxy.example.com",
            ),
            (
                json!({"workload": {"endpoint": "http://litellm-backend:4001/admin/"}, "service": {"port": 1}}),
                "http://litellm-backend:4001/admin",
            ),
        ];
        for (extra, want) in cases {
            let instance = attached(extra.clone());
            assert_eq!(endpoint(&instance), want, "{extra}");
            let status = desired_status(&instance, reachable(None), at(NOW));
            assert_eq!(status.endpoint.as_deref(), Some(want), "{extra}");
            assert_eq!(
                probe_target(&instance).map(|t| t.endpoint).as_deref(),
                Some(want)
            );
        }
    }

    #[test]
    fn gateway_endpoint_is_reported_trimmed_when_set() {
        let cases = [
            (json!({}), None),
            (
                json!({"workload": {"gatewayEndpoint": "http://litellm-gateway:4000/"}}),
                Some("http://litellm-gateway:4000"),
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra), reachable(None), at(NOW));
            assert_eq!(status.gateway_endpoint.as_deref(), want);
        }
    }

    #[test]
    fn version_is_reported_only_when_the_proxy_discloses_it() {
        let tagged = json!({"image": {"tag": "main-v1.50.0"}});
        let cases = [
            (json!({}), reachable(Some("1.108.7")), Some("1.108.7")),
            (json!({}), reachable(None), None),
            (json!({}), reachable(Some("")), None),
            // The image tag describes nothing this provider deployed.
            (tagged.clone(), reachable(None), None),
            (
                tagged,
                Some(ProbeResult::NotReachable {
                    cause: "down".into(),
                }),
                None,
            ),
        ];
        for (extra, probe, want) in cases {
            let status = desired_status(&attached(extra.clone()), probe.clone(), at(NOW));
            assert_eq!(status.version.as_deref(), want, "{extra} {probe:?}");
        }
    }

    #[test]
    fn readiness_and_ready_condition_follow_the_probe() {
        let instance = attached(json!({"workload": {"endpoint": "http://127.0.0.1:9"}}));
        let cases = [
            (
                reachable(None),
                true,
                "True",
                reason::PROXY_REACHABLE,
                "the proxy answers GET /health/liveliness at http://127.0.0.1:9",
            ),
            (
                Some(ProbeResult::NotReachable {
                    cause: "connection refused".into(),
                }),
                false,
                "False",
                reason::PROXY_NOT_REACHABLE,
                "the proxy at http://127.0.0.1:9 is not reachable: connection refused",
            ),
            (
                None,
                false,
                "False",
                reason::PROXY_NOT_REACHABLE,
                "the proxy at http://127.0.0.1:9 has not been probed yet",
            ),
        ];
        for (probe, ready, condition_status, want_reason, want_message) in cases {
            let status = desired_status(&instance, probe, at(NOW));
            assert_eq!(status.ready, ready);
            let condition = find_condition(&status.conditions, condition_type::READY).unwrap();
            assert_eq!(condition.status, condition_status);
            assert_eq!(condition.reason, want_reason);
            assert_eq!(condition.message.as_deref(), Some(want_message));
            assert_eq!(condition.observed_generation, Some(3));
            assert_eq!(condition.last_transition_time.as_deref(), Some(NOW));
        }
    }

    #[test]
    fn attached_status_has_no_replicas_no_pod_health_and_the_generation() {
        let mut instance = attached(json!({}));
        instance.status = Some(LiteLLMInstanceStatus {
            replicas: 2,
            ready_replicas: 2,
            conditions: vec![
                conditions::condition(condition_type::PODS_HEALTHY, true, "AllPodsHealthy", None),
                conditions::condition("Synced", true, "ReconcileSuccess", None),
            ],
            ..Default::default()
        });
        let status = desired_status(&instance, reachable(None), at(NOW));
        assert_eq!((status.replicas, status.ready_replicas), (0, 0));
        assert_eq!(status.observed_generation, Some(3));
        assert!(find_condition(&status.conditions, condition_type::PODS_HEALTHY).is_none());
        // Conditions written by someone else stay.
        assert!(find_condition(&status.conditions, "Synced").is_some());
    }

    #[test]
    fn workload_unmanaged_names_only_the_sections_set() {
        let cases = [
            (json!({}), None),
            (
                json!({"sso": {"x": 1}}),
                Some("spec.sso is ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
            (
                json!({"routerSettings": {}, "caching": {"type": "redis"}, "sso": {}}),
                Some("spec.sso, spec.caching and spec.routerSettings are ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
            (
                json!({"adminUI": {}, "licenseSecretRef": {"name": "l", "key": "k"}}),
                Some("spec.adminUI and spec.licenseSecretRef are ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra.clone()), reachable(None), at(NOW));
            let condition = find_condition(&status.conditions, condition_type::WORKLOAD_UNMANAGED);
            match want {
                None => assert!(condition.is_none(), "{extra}: {condition:?}"),
                Some(want) => {
                    let condition = condition.unwrap();
                    assert_eq!(condition.status, "True");
                    assert_eq!(condition.reason, reason::CONFIG_SETTINGS_IGNORED);
                    assert_eq!(condition.message.as_deref(), Some(want));
                }
            }
        }
    }

    #[test]
    fn removing_the_last_section_removes_the_condition() {
        let mut instance = attached(json!({"caching": {}}));
        instance.status = Some(desired_status(&instance, reachable(None), at(NOW)));
        instance.spec.config.caching = None;
        let status = desired_status(&instance, reachable(None), at(LATER));
        assert!(find_condition(&status.conditions, condition_type::WORKLOAD_UNMANAGED).is_none());
    }

    #[test]
    fn database_ready_says_a_configured_migration_was_ignored() {
        let ignored = "spec.database.migration is ignored while workload.managed is false: the \
                       externally managed proxy owns its schema, so no migration Job is created";
        let owned = "the database schema is owned by the externally managed proxy";
        let cases = [
            (json!({}), owned),
            (json!({"database": {}}), owned),
            (
                json!({"database": {"migration": {"enabled": false}}}),
                owned,
            ),
            (
                json!({"database": {"migration": {"enabled": true}}}),
                ignored,
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra.clone()), reachable(None), at(NOW));
            let condition =
                find_condition(&status.conditions, condition_type::DATABASE_READY).unwrap();
            assert_eq!(condition.status, "True", "{extra}");
            assert_eq!(condition.reason, reason::WORKLOAD_UNMANAGED, "{extra}");
            assert_eq!(condition.message.as_deref(), Some(want), "{extra}");
        }
    }

    #[test]
    fn equal_inputs_give_an_equal_status_so_no_patch_is_needed() {
        let mut instance = attached(json!({"sso": {}}));
        let first = desired_status(&instance, reachable(None), at(NOW));
        instance.status = Some(first.clone());
        assert_eq!(desired_status(&instance, reachable(None), at(LATER)), first);

        let down = Some(ProbeResult::NotReachable {
            cause: "503".into(),
        });
        let second = desired_status(&instance, down, at(LATER));
        let ready = find_condition(&second.conditions, condition_type::READY).unwrap();
        assert_eq!(ready.last_transition_time.as_deref(), Some(LATER));
        // Conditions whose status did not change keep their time.
        let database = find_condition(&second.conditions, condition_type::DATABASE_READY).unwrap();
        assert_eq!(database.last_transition_time.as_deref(), Some(NOW));
    }

    #[test]
    fn transition_times_are_whole_seconds() {
        let now: Timestamp = "2026-01-02T03:04:05.123456789Z".parse().unwrap();
        let status = desired_status(&attached(json!({})), reachable(None), now);
        let ready = find_condition(&status.conditions, condition_type::READY).unwrap();
        assert_eq!(ready.last_transition_time.as_deref(), Some(NOW));
    }

    #[test]
    fn not_ready_proxies_are_looked_at_sooner() {
        let options = InstanceOptions::default();
        let attached_instance = attached(json!({}));
        let ready = desired_status(&attached_instance, reachable(None), at(NOW));
        let not_ready = desired_status(&attached_instance, None, at(NOW));
        let starting = provisioned_status(&managed(json!({})), &running(0), at(NOW));
        assert_eq!(requeue_after(&ready, &options), options.ready_interval);
        assert_eq!(
            requeue_after(&not_ready, &options),
            options.not_ready_interval
        );
        assert_eq!(
            requeue_after(&starting, &options),
            options.not_ready_interval
        );
    }

    /// A provisioned instance with `extra` merged into its spec.
    fn managed(extra: Value) -> LiteLLMInstance {
        let mut spec = json!({"masterKey": {"autoGenerate": true}});
        spec.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        instance(spec)
    }

    /// A Deployment of one replica with `ready` ready ones and as many
    /// healthy pods, migration disabled.
    fn running(ready: i32) -> WorkloadObservation {
        WorkloadObservation {
            deployment: Some((1, ready)),
            pods: (0..ready)
                .map(|i| PodHealth {
                    name: format!("gw-{i}"),
                    healthy: true,
                })
                .collect(),
            database: DatabaseState::MigrationDisabled,
            ..WorkloadObservation::default()
        }
    }

    fn reason_of(status: &LiteLLMInstanceStatus, type_: &str) -> (String, String) {
        let condition = find_condition(&status.conditions, type_)
            .unwrap_or_else(|| panic!("no {type_} condition in {status:?}"));
        (condition.status.clone(), condition.reason.clone())
    }

    #[test]
    fn provisioned_endpoint_version_and_counts_come_from_the_spec_and_the_deployment() {
        let instance = managed(json!({
            "image": {"tag": "main-v1.108.7"},
            "service": {"port": 8443, "https": true},
            "workload": {"gatewayEndpoint": "http://gw.example/"},
        }));
        let status = provisioned_status(&instance, &running(1), at(NOW));
        assert_eq!(
            status.endpoint.as_deref(),
            Some("https://gw.team-a.svc:8443")
        );
        assert_eq!(
            status.gateway_endpoint.as_deref(),
            Some("http://gw.example")
        );
        assert_eq!(status.version.as_deref(), Some("main-v1.108.7"));
        assert_eq!((status.replicas, status.ready_replicas), (1, 1));
        assert_eq!(status.observed_generation, Some(3));

        let defaults = provisioned_status(&managed(json!({})), &running(0), at(NOW));
        assert_eq!(
            defaults.endpoint.as_deref(),
            Some("http://gw.team-a.svc:4000")
        );
        assert_eq!(defaults.version.as_deref(), Some(build::DEFAULT_IMAGE_TAG));
    }

    #[test]
    fn provisioned_ready_follows_the_ready_replicas() {
        let instance = managed(json!({}));
        let ready = provisioned_status(&instance, &running(1), at(NOW));
        assert!(ready.ready);
        assert_eq!(
            reason_of(&ready, condition_type::READY),
            ("True".into(), reason::ALL_RESOURCES_READY.into())
        );
        let starting = provisioned_status(&instance, &running(0), at(NOW));
        assert!(!starting.ready);
        assert_eq!(
            reason_of(&starting, condition_type::READY),
            ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
        );
        assert_eq!(
            message(&starting, condition_type::READY),
            "no replica of Deployment gw is ready (1 replicas)"
        );
        let invalid = WorkloadObservation {
            problems: vec!["spec.database.host is required with credentialsSecretRef".into()],
            ..WorkloadObservation::default()
        };
        let status = provisioned_status(&instance, &invalid, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::READY),
            ("False".into(), reason::INVALID_SPEC.into())
        );
        assert!(message(&status, condition_type::READY).contains("host is required"));
    }

    #[test]
    fn pods_healthy_names_the_unhealthy_pods() {
        let instance = managed(json!({}));
        let none = provisioned_status(&instance, &running(0), at(NOW));
        assert_eq!(
            reason_of(&none, condition_type::PODS_HEALTHY),
            ("False".into(), reason::NO_PODS.into())
        );
        let healthy = provisioned_status(&instance, &running(2), at(NOW));
        assert_eq!(
            reason_of(&healthy, condition_type::PODS_HEALTHY),
            ("True".into(), reason::ALL_PODS_HEALTHY.into())
        );
        let mut observed = running(2);
        observed.pods[1].healthy = false;
        let sick = provisioned_status(&instance, &observed, at(NOW));
        assert_eq!(
            reason_of(&sick, condition_type::PODS_HEALTHY),
            ("False".into(), reason::PODS_NOT_HEALTHY.into())
        );
        assert_eq!(
            message(&sick, condition_type::PODS_HEALTHY),
            "not running or not ready: gw-1"
        );
    }

    #[test]
    fn database_ready_follows_the_migration_job() {
        let instance = managed(json!({}));
        let job = build::names::migration_job(&instance);
        let cases = [
            (
                DatabaseState::NotConfigured,
                "False",
                reason::DATABASE_NOT_CONFIGURED,
            ),
            (
                DatabaseState::CredentialsUnavailable("Secret db does not exist".into()),
                "False",
                reason::CREDENTIALS_UNAVAILABLE,
            ),
            (
                DatabaseState::MigrationDisabled,
                "True",
                reason::MIGRATION_DISABLED,
            ),
            (
                DatabaseState::Migration(JobState::Running),
                "False",
                reason::MIGRATION_RUNNING,
            ),
            (
                DatabaseState::Migration(JobState::Complete),
                "True",
                reason::MIGRATION_COMPLETE,
            ),
            (
                DatabaseState::Migration(JobState::Failed),
                "False",
                reason::MIGRATION_FAILED,
            ),
            (
                DatabaseState::Migration(JobState::NotOwned),
                "False",
                reason::OBJECT_NOT_OWNED,
            ),
        ];
        for (database, want_status, want_reason) in cases {
            let observed = WorkloadObservation {
                database: database.clone(),
                ..running(1)
            };
            let status = provisioned_status(&instance, &observed, at(NOW));
            assert_eq!(
                reason_of(&status, condition_type::DATABASE_READY),
                (want_status.into(), want_reason.into()),
                "{database:?}"
            );
            if matches!(database, DatabaseState::Migration(JobState::Complete)) {
                assert_eq!(
                    message(&status, condition_type::DATABASE_READY),
                    format!("migration Job {job} completed")
                );
            }
        }
    }

    #[test]
    fn an_unserved_api_is_reported_without_touching_readiness_and_cleared() {
        let mut instance = managed(json!({"workload": {"replicas": 3}}));
        let unserved = "spec.workload.podDisruptionBudget: the API server does not serve \
                        policy/v1/poddisruptionbudgets, so Deployment gw has no \
                        PodDisruptionBudget";
        let observed = WorkloadObservation {
            unserved: vec![unserved.into()],
            ..running(1)
        };
        let status = provisioned_status(&instance, &observed, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::API_NOT_SERVED),
            ("True".into(), reason::API_NOT_SERVED.into())
        );
        assert_eq!(message(&status, condition_type::API_NOT_SERVED), unserved);
        assert!(status.ready, "the proxy runs without its budget");
        instance.status = Some(status);
        let cleared = provisioned_status(&instance, &running(1), at(LATER));
        assert!(find_condition(&cleared.conditions, condition_type::API_NOT_SERVED).is_none());
        // Attaching drops it too.
        instance.status = Some(provisioned_status(&instance, &observed, at(NOW)));
        instance.spec.workload = Some(Workload {
            managed: Some(false),
            ..Workload::default()
        });
        instance.spec.master_key = Some(crate::api::instance::MasterKey {
            secret_ref: Some(SecretKeySelector {
                name: "k".into(),
                key: "k".into(),
            }),
            auto_generate: None,
        });
        let attached = desired_status(&instance, None, at(LATER));
        assert!(find_condition(&attached.conditions, condition_type::API_NOT_SERVED).is_none());
    }

    #[test]
    fn conflicts_are_named_and_cleared() {
        let mut instance = managed(json!({}));
        let observed = WorkloadObservation {
            conflicts: vec!["Deployment gw".into(), "Service gw".into()],
            deployment: None,
            ..running(0)
        };
        let status = provisioned_status(&instance, &observed, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::WORKLOAD_CONFLICT),
            ("True".into(), reason::OBJECT_NOT_OWNED.into())
        );
        assert_eq!(
            message(&status, condition_type::WORKLOAD_CONFLICT),
            "Deployment gw and Service gw exist but are not owned by this instance, so they \
             were left untouched; delete or rename them to let the provider create its own"
        );
        assert!(message(&status, condition_type::READY).contains("not owned"));
        instance.status = Some(status);
        let cleared = provisioned_status(&instance, &running(1), at(LATER));
        assert!(find_condition(&cleared.conditions, condition_type::WORKLOAD_CONFLICT).is_none());
    }

    #[test]
    fn exposed_says_what_was_written_what_is_not_served_and_does_not_touch_ready() {
        use crate::provider::instance::exposure::ExposureObservation;
        let mut instance = managed(json!({}));
        let status = provisioned_status(&instance, &running(1), at(NOW));
        assert!(find_condition(&status.conditions, condition_type::EXPOSED).is_none());

        let not_served = WorkloadObservation {
            exposure: ExposureObservation {
                written: vec!["Ingress gw".into()],
                not_served: vec![(
                    "spec.workload.exposure.httpRoute".into(),
                    "HTTPRoute gw".into(),
                    "gateway.networking.k8s.io/v1 httproutes".into(),
                )],
                ..ExposureObservation::default()
            },
            ..running(1)
        };
        let status = provisioned_status(&instance, &not_served, at(NOW));
        assert!(status.ready, "exposure does not make the proxy unready");
        assert_eq!(
            reason_of(&status, condition_type::EXPOSED),
            ("False".into(), reason::API_NOT_SERVED.into())
        );
        assert_eq!(
            message(&status, condition_type::EXPOSED),
            "spec.workload.exposure.httpRoute: the cluster does not serve \
             gateway.networking.k8s.io/v1 httproutes, so HTTPRoute gw is not created (it is once \
             the API is installed); Ingress gw written"
        );

        let not_owned = WorkloadObservation {
            exposure: ExposureObservation {
                not_owned: vec!["HTTPRoute gw".into()],
                ..ExposureObservation::default()
            },
            conflicts: vec!["HTTPRoute gw".into()],
            ..running(1)
        };
        let status = provisioned_status(&instance, &not_owned, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::EXPOSED),
            ("False".into(), reason::OBJECT_NOT_OWNED.into())
        );
        assert!(message(&status, condition_type::EXPOSED).contains("see WorkloadConflict"));

        // Refused by the API server or a webhook: said, with its message,
        // and the proxy still ready.
        let refused = WorkloadObservation {
            exposure: ExposureObservation {
                written: vec!["HTTPRoute gw".into()],
                refused: vec![(
                    "spec.workload.exposure.ingress".into(),
                    "Ingress gw".into(),
                    "admission webhook \"validate.nginx.ingress.kubernetes.io\" denied the \
                     request: host \"llm.example.com\" and path \"/\" is already defined"
                        .into(),
                )],
                ..ExposureObservation::default()
            },
            ..running(1)
        };
        let status = provisioned_status(&instance, &refused, at(NOW));
        assert!(status.ready);
        assert_eq!(
            reason_of(&status, condition_type::EXPOSED),
            ("False".into(), reason::WRITE_REFUSED.into())
        );
        assert!(message(&status, condition_type::EXPOSED).starts_with(
            "spec.workload.exposure.ingress: the API server refused Ingress gw: admission webhook"
        ));

        let written = WorkloadObservation {
            exposure: ExposureObservation {
                written: vec!["Ingress gw".into(), "HTTPRoute gw".into()],
                ..ExposureObservation::default()
            },
            ..running(1)
        };
        let status = provisioned_status(&instance, &written, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::EXPOSED),
            ("True".into(), reason::EXPOSURE_WRITTEN.into())
        );
        assert_eq!(
            message(&status, condition_type::EXPOSED),
            "Ingress gw and HTTPRoute gw written"
        );

        // Dropped: the condition goes; attached: too.
        instance.status = Some(status.clone());
        let dropped = provisioned_status(&instance, &running(1), at(LATER));
        assert!(find_condition(&dropped.conditions, condition_type::EXPOSED).is_none());
        let mut attached_instance = attached(json!({}));
        attached_instance.status = Some(status);
        let attached_status = desired_status(&attached_instance, reachable(None), at(LATER));
        assert!(find_condition(&attached_status.conditions, condition_type::EXPOSED).is_none());
    }

    #[test]
    fn switching_modes_drops_the_other_modes_conditions() {
        let mut instance = managed(json!({"caching": {}}));
        let observed = WorkloadObservation {
            conflicts: vec!["Service gw".into()],
            ..running(1)
        };
        instance.status = Some(provisioned_status(&instance, &observed, at(NOW)));
        let mut attached_instance = attached(json!({"caching": {}}));
        attached_instance.status = instance.status.clone();
        let status = desired_status(&attached_instance, reachable(None), at(LATER));
        for gone in [
            condition_type::PODS_HEALTHY,
            condition_type::WORKLOAD_CONFLICT,
        ] {
            assert!(find_condition(&status.conditions, gone).is_none(), "{gone}");
        }
        attached_instance.status = Some(status);
        instance.status = attached_instance.status.clone();
        let back = provisioned_status(&instance, &running(1), at(LATER));
        assert!(find_condition(&back.conditions, condition_type::WORKLOAD_UNMANAGED).is_none());
    }

    #[test]
    fn provisioned_status_settles_for_equal_inputs() {
        let mut instance = managed(json!({}));
        let first = provisioned_status(&instance, &running(1), at(NOW));
        instance.status = Some(first.clone());
        assert_eq!(provisioned_status(&instance, &running(1), at(LATER)), first);
    }

    #[test]
    fn the_ca_secret_is_part_of_the_probe_target() {
        let instance =
            attached(json!({"tls": {"caSecretRef": {"name": "proxy-ca", "key": "ca.crt"}}}));
        let target = probe_target(&instance).unwrap();
        assert_eq!(
            target.ca_secret_ref,
            Some(SecretKeySelector {
                name: "proxy-ca".into(),
                key: "ca.crt".into()
            })
        );
    }

    fn keys(salt: KeyState, master: KeyState) -> Vec<KeyObservation> {
        vec![
            KeyObservation {
                key: GeneratedKey::MasterKey,
                state: master,
            },
            KeyObservation {
                key: GeneratedKey::SaltKey,
                state: salt,
            },
        ]
    }

    fn intact(value: &str) -> KeyState {
        KeyState::Intact {
            fingerprint: build::key_fingerprint(value.as_bytes()),
        }
    }

    /// A ready Deployment with the given keys.
    fn with_keys(salt: KeyState, master: KeyState) -> WorkloadObservation {
        WorkloadObservation {
            keys: keys(salt, master),
            ..running(1)
        }
    }

    #[test]
    fn keys_are_recorded_once_and_kept() {
        let mut instance = managed(json!({}));
        let first = provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), intact("sk-master")),
            at(NOW),
        );
        let record = first.generated_keys.clone().unwrap();
        assert_eq!(
            record.salt_key,
            Some(GeneratedKeyRecord {
                secret_name: "gw-salt-key".into(),
                recorded_at: Some(NOW.into()),
                fingerprint: Some(build::key_fingerprint(b"sk-salt")),
            })
        );
        // The master key may be rotated: only its use is recorded.
        assert_eq!(
            record.master_key,
            Some(GeneratedKeyRecord {
                secret_name: "gw-master-key".into(),
                recorded_at: Some(NOW.into()),
                fingerprint: None,
            })
        );
        let json = serde_json::to_string(&first).unwrap();
        assert!(
            !json.contains("sk-salt") && !json.contains("sk-master"),
            "{json}"
        );

        instance.status = Some(first.clone());
        let later = provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), intact("sk-rotated")),
            at(LATER),
        );
        assert_eq!(later, first, "recorded once; the status settles");
        let lost = provisioned_status(
            &instance,
            &with_keys(KeyState::Lost(KeyLoss::SecretNotFound), intact("sk-master")),
            at(LATER),
        );
        assert_eq!(
            lost.generated_keys.as_ref(),
            Some(&record),
            "a loss keeps the record"
        );
        assert_eq!(
            key_record(Some(&lost), GeneratedKey::SaltKey),
            record.salt_key.as_ref()
        );

        // Keys given by secretRef are not observed and not recorded.
        let none = provisioned_status(&managed(json!({})), &running(1), at(NOW));
        assert_eq!(none.generated_keys, None);
        assert_eq!(key_record(Some(&none), GeneratedKey::MasterKey), None);
    }

    #[test]
    fn a_lost_salt_key_makes_the_instance_not_ready_and_says_to_restore_it() {
        let mut instance = managed(json!({}));
        instance.status = Some(provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), intact("sk-master")),
            at(NOW),
        ));
        let cases = [
            (
                KeyLoss::SecretNotFound,
                reason::SECRET_NOT_FOUND,
                "Secret gw-salt-key, which held the salt key this proxy has run with, does not exist",
            ),
            (
                KeyLoss::KeyNotFound,
                reason::KEY_NOT_FOUND,
                "Secret gw-salt-key has no LITELLM_SALT_KEY, or an empty one",
            ),
            (
                KeyLoss::ValueChanged,
                reason::VALUE_CHANGED,
                "the LITELLM_SALT_KEY in Secret gw-salt-key is not the one this proxy has run with",
            ),
            (
                KeyLoss::NotMarked,
                reason::SECRET_NOT_MARKED,
                "Secret gw-salt-key exists without the annotation litellm.crossplane.io/generated-for=team-a/gw",
            ),
        ];
        for (loss, want_reason, want_start) in cases {
            // Replicas still run (with the key they read at start).
            let status = provisioned_status(
                &instance,
                &with_keys(KeyState::Lost(loss), intact("sk-master")),
                at(LATER),
            );
            assert!(!status.ready, "{loss:?}");
            assert_eq!(
                reason_of(&status, condition_type::SALT_KEY_MISSING),
                ("True".into(), want_reason.into()),
                "{loss:?}"
            );
            assert_eq!(
                reason_of(&status, condition_type::READY),
                ("False".into(), reason::SALT_KEY_MISSING.into())
            );
            let missing = message(&status, condition_type::SALT_KEY_MISSING);
            assert!(missing.starts_with(want_start), "{missing}");
            assert!(
                missing.contains("no new salt key is generated")
                    && missing.contains("Deployment gw is left unchanged")
                    && missing.contains("from a backup"),
                "{missing}"
            );
            assert_eq!(message(&status, condition_type::READY), missing);
            assert!(
                find_condition(&status.conditions, condition_type::MASTER_KEY_MISSING).is_none()
            );
        }
        let missing = key_loss_message(&instance, GeneratedKey::SaltKey, KeyLoss::SecretNotFound);
        assert!(
            missing.ends_with(
                "restore Secret gw-salt-key (key LITELLM_SALT_KEY, annotation \
                 litellm.crossplane.io/generated-for=team-a/gw) from a backup"
            ),
            "{missing}"
        );
        let changed = key_loss_message(&instance, GeneratedKey::SaltKey, KeyLoss::ValueChanged);
        assert!(
            changed.contains("remove status.generatedKeys.saltKey"),
            "{changed}"
        );

        // Restored: the condition goes, Ready comes back.
        instance.status = Some(provisioned_status(
            &instance,
            &with_keys(KeyState::Lost(KeyLoss::SecretNotFound), intact("sk-master")),
            at(LATER),
        ));
        let restored = provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), intact("sk-master")),
            at(LATER),
        );
        assert!(restored.ready);
        assert!(find_condition(&restored.conditions, condition_type::SALT_KEY_MISSING).is_none());
    }

    #[test]
    fn a_lost_master_key_is_reported_too_and_the_salt_key_comes_first() {
        let instance = managed(json!({}));
        let status = provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), KeyState::Lost(KeyLoss::SecretNotFound)),
            at(NOW),
        );
        assert!(!status.ready);
        assert_eq!(
            reason_of(&status, condition_type::MASTER_KEY_MISSING),
            ("True".into(), reason::SECRET_NOT_FOUND.into())
        );
        assert_eq!(
            reason_of(&status, condition_type::READY),
            ("False".into(), reason::MASTER_KEY_MISSING.into())
        );
        let missing = message(&status, condition_type::MASTER_KEY_MISSING);
        assert!(
            missing.contains("no new master key is generated")
                && missing.contains("to rotate the master key"),
            "{missing}"
        );

        let both = provisioned_status(
            &instance,
            &with_keys(
                KeyState::Lost(KeyLoss::KeyNotFound),
                KeyState::Lost(KeyLoss::SecretNotFound),
            ),
            at(NOW),
        );
        assert_eq!(
            reason_of(&both, condition_type::READY),
            ("False".into(), reason::SALT_KEY_MISSING.into())
        );
        let ready = message(&both, condition_type::READY);
        assert!(
            ready.contains("gw-salt-key") && ready.contains("gw-master-key"),
            "{ready}"
        );
    }

    #[test]
    fn a_foreign_key_secret_holds_the_deployment_back() {
        let instance = managed(json!({}));
        let observed = WorkloadObservation {
            conflicts: vec!["Secret gw-salt-key".into()],
            keys: keys(KeyState::NotOwned, intact("sk-master")),
            deployment: None,
            ..running(0)
        };
        assert!(holds_deployment(&observed.keys));
        assert!(!holds_deployment(&keys(intact("a"), intact("b"))));
        assert!(holds_deployment(&keys(
            intact("a"),
            KeyState::Lost(KeyLoss::KeyNotFound)
        )));
        let status = provisioned_status(&instance, &observed, at(NOW));
        assert_eq!(
            reason_of(&status, condition_type::READY),
            ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
        );
        assert_eq!(
            message(&status, condition_type::READY),
            "Deployment gw is not provisioned while Secret gw-salt-key is not this instance's \
             (see WorkloadConflict)"
        );
        assert!(find_condition(&status.conditions, condition_type::WORKLOAD_CONFLICT).is_some());
        // Never run with it: a conflict, not a loss, and nothing recorded
        // for the salt key.
        assert!(find_condition(&status.conditions, condition_type::SALT_KEY_MISSING).is_none());
        let record = status.generated_keys.unwrap();
        assert!(record.salt_key.is_none() && record.master_key.is_some());
    }

    #[test]
    fn attaching_keeps_the_key_records_and_drops_the_key_conditions() {
        let mut instance = managed(json!({}));
        instance.status = Some(provisioned_status(
            &instance,
            &with_keys(intact("sk-salt"), intact("sk-master")),
            at(NOW),
        ));
        let record = instance.status.as_ref().unwrap().generated_keys.clone();
        instance.status = Some(provisioned_status(
            &instance,
            &with_keys(
                KeyState::Lost(KeyLoss::SecretNotFound),
                KeyState::Lost(KeyLoss::SecretNotFound),
            ),
            at(NOW),
        ));
        let mut attached_instance = attached(json!({}));
        attached_instance.status = instance.status.clone();
        let status = desired_status(&attached_instance, reachable(None), at(LATER));
        assert_eq!(status.generated_keys, record);
        for gone in [
            condition_type::SALT_KEY_MISSING,
            condition_type::MASTER_KEY_MISSING,
        ] {
            assert!(find_condition(&status.conditions, gone).is_none(), "{gone}");
        }
    }
}
