//! The `LiteLLMInstance` controller.
//!
//! A provisioned instance (`spec.workload.managed` unset or true) gets its
//! proxy from the provider: [`build`] turns the spec into the workload
//! objects (generated master and salt key Secrets, the database URL Secret,
//! ConfigMap, ServiceAccount, Deployment, Service, migration Job; the
//! Ingresses and HTTPRoutes of an exposure in [`exposure`]) without
//! I/O, [`provision`] writes the ones the instance owns and observes them,
//! and [`provisioned_status`] reports the result. A same-named object the
//! instance does not own is never written, only reported. The generated
//! master and salt keys outlive the instance and are never regenerated once
//! it has run with them (see the `apply` module and `status.generatedKeys`).
//!
//! An attached proxy (`managed: false`) belongs to someone else (a Helm
//! chart, a GitOps pipeline, plain manifests), so it is only observed: the
//! controller probes the proxy's public health endpoints and writes the
//! instance's status. It never creates, reads-to-modify or adopts a
//! Deployment, Service, ConfigMap, Secret or Job, whatever their names (also
//! not the ones it created while the instance was provisioned), and it never
//! reads the master key (the probes are unauthenticated). The only other
//! object it reads is the optional CA Secret of `spec.tls.caSecretRef`.
//!
//! A proxy is provisioned only in a namespace the cluster's admins labelled
//! for it ([`admission`]): it runs pods, which tenants may not.
//!
//! The work is split into pure steps ([`build`], [`probe_target`],
//! [`desired_status`], [`provisioned_status`], [`requeue_after`]) and the
//! effectful ones ([`provision`], [`probe`], reading the CA Secret, patching
//! the status) that [`run`] drives.

pub mod admission;
mod apply;
pub mod build;
mod controller;
pub mod database;
pub mod exposure;
pub mod monitor;
mod probe;
mod status;

pub use apply::{provision, teardown};
pub use controller::{
    build, controller, controller_name, controller_with_metrics, run, InstanceOptions,
    FIELD_MANAGER,
};
pub use probe::probe;
pub use status::{
    condition_type, desired_status, endpoint, holds_deployment, key_loss_message, key_record,
    probe_target, provisioned_status, reason, recorded_keys, requeue_after, DatabaseState,
    JobState, KeyObservation, KeyState, PodHealth, ProbeResult, ProbeTarget, WorkloadObservation,
};

/// Why a reconciliation of a `LiteLLMInstance` failed. Problems the user can
/// fix in the object (an unreachable proxy, a missing CA Secret) are reported
/// in its status instead; these are the failures worth a retry with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Namespaced kinds always carry a namespace; this guards the invariant
    /// instead of panicking on a malformed watch event.
    #[error("LiteLLMInstance {name} has no namespace")]
    MissingNamespace { name: String },

    /// `spec.tls.caSecretRef` names a Secret that does not exist.
    #[error("CA Secret {namespace}/{name} of spec.tls.caSecretRef was not found")]
    CaSecretNotFound { namespace: String, name: String },

    /// The CA Secret exists but lacks the key.
    #[error("CA Secret {namespace}/{name} has no key {key:?} (spec.tls.caSecretRef)")]
    CaKeyMissing {
        namespace: String,
        name: String,
        key: String,
    },

    /// The API server did not answer the read of the CA Secret.
    #[error("reading CA Secret {namespace}/{name}: {source}")]
    ReadCaSecret {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },

    /// The instance has no uid yet, so no owner reference can name it.
    #[error("LiteLLMInstance {name} has no uid")]
    MissingUid { name: String },

    /// The provider may not read or write a workload object: Crossplane
    /// v2 grants a provider only its own kinds, Secrets, ConfigMaps, Events
    /// and Leases.
    #[error(
        "provisioning {kind} {name}: the provider may not read or write {kind}s; a provisioned \
         proxy needs the permissions of examples/provider/runtime-config/rbac.yaml (bind them \
         to the provider's ServiceAccount), or attach to a proxy you run \
         (spec.workload.managed: false)"
    )]
    WorkloadForbidden { kind: String, name: String },

    /// Reading or writing a workload object failed.
    #[error("provisioning {kind} {name}: {source}")]
    Workload {
        kind: String,
        name: String,
        #[source]
        source: kube::Error,
    },

    /// Deletion waits for the managed resources that use the instance
    /// (the text counts them by kind); looked at again every
    /// [`crate::provider::managed::dependents::RECHECK`].
    #[error("{0}")]
    InUse(String),

    /// Listing the managed resources that reference the instance failed.
    #[error("listing the managed resources that use the instance: {0}")]
    ListDependents(#[source] kube::Error),

    /// Adding or removing the instance's finalizer failed.
    #[error("finalizer of LiteLLMInstance: {0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),

    /// The status patch was refused or did not arrive.
    #[error("patching the status of LiteLLMInstance {namespace}/{name}: {source}")]
    PatchStatus {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// `self`, where it is a workload read or write the API server
    /// forbade, as [`Error::WorkloadForbidden`].
    pub fn forbidden_as_such(self) -> Self {
        match self {
            Error::Workload {
                kind,
                name,
                source: kube::Error::Api(status),
            } if status.code == 403 => Error::WorkloadForbidden { kind, name },
            other => other,
        }
    }

    /// Whether only a change of permissions or of the spec can help: looked
    /// at again at the ready interval, not retried sooner.
    pub fn needs_permission(&self) -> bool {
        matches!(self, Error::WorkloadForbidden { .. })
    }

    /// Whether the object itself is at fault (reported in status as a reason
    /// the proxy cannot be probed), rather than the API server.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            Error::CaSecretNotFound { .. } | Error::CaKeyMissing { .. }
        )
    }
}
