//! The managed-resource contract: what each kind provides ([`ManagedKind`],
//! [`External`]) and the decisions of Crossplane's managed reconciler that
//! only need the external system ([`sync`], [`cleanup`], [`conditions`]).
//!
//! Everything Kubernetes-facing (finalizer, references, instance, status
//! writes) lives in [`crate::provider::managed::reconciler`]; keeping it out of here lets the
//! observe/create/update/delete order be tested with a fake [`External`].

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;

use kube::core::NamespaceResourceScope;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api::common::{
    policy_allows, Condition, ManagedFields, ManagedStatus, ManagementPolicy, EXTERNAL_NAME,
};
use crate::litellm;

use crate::api::conditions::{condition, reason, READY, SYNCED};
use crate::provider::managed::diff::Diff;
use crate::provider::managed::ownership::{self, Owner, Refusal};
use crate::provider::managed::resolve::{Reference, Resolved};

/// A failure talking to the external system (LiteLLM, or the Kubernetes
/// objects a kind keeps beside it, such as a key's Secret). Messages never
/// hold secrets: the LiteLLM client scrubs its errors, and the rest name
/// objects only.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error(transparent)]
    LiteLLM(#[from] litellm::Error),
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// The resource asks for something that cannot be done as it stands.
    #[error("{0}")]
    Invalid(String),
    /// What was read is older than what the provider wrote since (the
    /// watch cache lags behind the provider's own writes): acting on it
    /// could undo them. Like a write conflict, it requeues silently and the
    /// next reconciliation reads again.
    #[error("{0} changed since it was read")]
    Stale(String),
    /// The object is not usable until the failed step succeeds (a key whose
    /// Secret lost it, and whose replacement failed): `Ready` is `False`
    /// with `ready_message`, besides `Synced=False` with the cause.
    #[error("{ready_message}: {source}")]
    Unavailable {
        ready_message: String,
        #[source]
        source: Box<ExternalError>,
    },
}

impl ExternalError {
    /// [`ExternalError::Stale`]: `what` changed since it was read.
    pub fn stale(what: &str) -> Self {
        ExternalError::Stale(what.to_owned())
    }

    /// Whether waiting may fix it (short backoff) rather than a change of
    /// the resource (retry at the poll interval).
    pub fn is_retryable(&self) -> bool {
        match self {
            ExternalError::LiteLLM(err) => err.is_retryable(),
            ExternalError::Kube(_) | ExternalError::Stale(_) => true,
            ExternalError::Invalid(_) => false,
            ExternalError::Unavailable { source, .. } => source.is_retryable(),
        }
    }
}

/// The step of Crossplane's managed reconciler that failed, which names
/// the event reported on the resource: crossplane-runtime's
/// `pkg/reconciler/managed/reconciler.go` emits one warning reason per step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// Resolving `spec.forProvider` references (`ResolveReferences`).
    ResolveReferences,
    /// Reaching the LiteLLMInstance, this provider's ProviderConfig
    /// (`Connect`).
    Connect,
    /// Choosing and recording the external name (`Initialize`).
    Initialize,
    Observe,
    Create,
    /// `Update`, and a kind's upkeep of an existing object (a key's
    /// replacement or rotation).
    Update,
    Delete,
    /// Writing the connection Secret (`PublishConnection`).
    PublishConnection,
    /// Writing the managed resource itself: an external name LiteLLM
    /// chose, late initialization (`client.Update` of the resource).
    UpdateManaged,
}

impl Step {
    /// The event reason crossplane-runtime records when this step fails.
    pub const fn reason(self) -> &'static str {
        match self {
            Step::ResolveReferences => "CannotResolveResourceReferences",
            Step::Connect => "CannotConnectToProvider",
            Step::Initialize => "CannotInitializeManagedResource",
            Step::Observe => "CannotObserveExternalResource",
            Step::Create => "CannotCreateExternalResource",
            Step::Update => "CannotUpdateExternalResource",
            Step::Delete => "CannotDeleteExternalResource",
            Step::PublishConnection => "CannotPublishConnectionDetails",
            Step::UpdateManaged => "CannotUpdateManagedResource",
        }
    }
}

/// An error and the [`Step`] it stopped. Its text is the error's alone.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Failed<E> {
    pub step: Step,
    pub error: E,
}

impl<E> Failed<E> {
    /// Tags errors of `step`: `.map_err(Failed::at(Step::Observe))`.
    pub fn at<F: Into<E>>(step: Step) -> impl FnOnce(F) -> Self {
        move |error| Failed {
            step,
            error: error.into(),
        }
    }
}

/// What observing the LiteLLM object found.
#[derive(Debug, Clone)]
pub struct Observation<K: ManagedKind> {
    pub exists: bool,
    /// The ownership marker of the live object, if it carries one.
    pub owner: Option<Owner>,
    /// Fields of `forProvider` the live object does not match.
    pub drift: Diff,
    /// `forProvider` with unset optional fields filled from the live object,
    /// when that fills anything.
    pub late_init: Option<K::Parameters>,
    pub at_provider: Option<K::AtProvider>,
    /// Non-secret values for the connection Secret (besides `endpoint`).
    pub connection_details: BTreeMap<String, String>,
    /// The read this observation came from, where it was one read
    /// ([`litellm::Client::probe`]): a later poll that gets the same answer
    /// to it has nothing new to observe.
    pub probe: Option<litellm::Probe>,
}

impl<K: ManagedKind> Observation<K> {
    /// Nothing under this id.
    pub fn absent() -> Self {
        Self {
            probe: None,
            exists: false,
            owner: None,
            drift: Diff::new(),
            late_init: None,
            at_provider: None,
            connection_details: BTreeMap::new(),
        }
    }

    pub fn up_to_date(&self) -> bool {
        self.drift.is_empty()
    }
}

/// The LiteLLM side of one kind: Crossplane's `ExternalClient`. `id` is the
/// external name, chosen before `create` is ever called.
pub trait External<K: ManagedKind>: Send + Sync {
    /// One read of the object.
    fn observe(
        &self,
        mr: &K,
        id: &str,
    ) -> impl Future<Output = Result<Observation<K>, ExternalError>> + Send;
    /// Creates the object under `id` (or, where LiteLLM insists on choosing
    /// it, under the id the [`Creation`] names), with what LiteLLM's answer
    /// shows of the object where it answers with the object.
    fn create(
        &self,
        mr: &K,
        id: &str,
    ) -> impl Future<Output = Result<Created<K>, ExternalError>> + Send;
    /// Writes `forProvider` (and the ownership marker) to the object.
    /// `drift` is what observe found different: fields whose writing has
    /// side effects in LiteLLM (a `budget_duration` restarts the budget
    /// period) are sent only when they drifted.
    fn update(
        &self,
        mr: &K,
        id: &str,
        drift: &Diff,
    ) -> impl Future<Output = Result<(), ExternalError>> + Send;
    /// Deletes the object; an object already gone is success.
    fn delete(&self, id: &str) -> impl Future<Output = Result<(), ExternalError>> + Send;

    /// Kind-specific upkeep of an object that exists and is this
    /// resource's, after observe/update: a key replaces a secret that was
    /// lost from its Secret, or rotates. Kinds without any keep the default.
    fn maintain(
        &self,
        _mr: &K,
        _id: &str,
        _at_provider: Option<&K::AtProvider>,
    ) -> impl Future<Output = Result<Maintained<K>, ExternalError>> + Send {
        async { Ok(Maintained::default()) }
    }

    /// Whether a create under an id that is taken fails
    /// ([`litellm::Error::Conflict`]) rather than overwriting or duplicating
    /// the object there: a team's `/team/new` answers 400 and
    /// [`litellm::Client::team_new`] reports the conflict. Only such a kind
    /// may create first, without an observe, an object under an id chosen
    /// in this very reconciliation (see [`sync`]'s `fresh`): whatever is
    /// found under the id then is left as the observe path leaves it.
    /// Kinds whose create overwrites or leaves an existing object as it is
    /// (a key's `/key/generate`) keep the default: they create first only
    /// under an id drawn at random ([`Fresh::Drawn`]).
    fn create_refuses_existing(&self) -> bool {
        false
    }

    /// The probe of the read [`External::observe`] begins with, not yet
    /// made ([`litellm::Probe::unread`]), where a page of a list route can
    /// stand for it: a restarted provider leaves its first poll of an
    /// up-to-date object to a sweep of pages
    /// ([`polls`](crate::provider::watch::polls)) rather than read each
    /// object on its own. Kinds observed otherwise keep the default.
    fn listed(&self, _mr: &K, _id: &str) -> Option<litellm::Probe> {
        None
    }

    /// Deletes what the kind keeps beside the object itself (a key's
    /// retiring predecessor), before the object is deleted.
    fn delete_related(&self, _mr: &K) -> impl Future<Output = Result<(), ExternalError>> + Send {
        async { Ok(()) }
    }
}

/// An id [`ManagedKind::choose_id`] chose.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub id: String,
    /// The secret the id stands for, where this very call drew it at random
    /// (a key's new secret, the id its token): no object anywhere can be
    /// under the id ([`Fresh::Drawn`]), and the create gets the secret in
    /// [`Connection::drawn`] instead of reading it back.
    pub drawn: Option<litellm::Secret>,
}

impl From<String> for Chosen {
    /// An id derived from the resource (its name, its uid): someone may
    /// have made an object under it by hand.
    fn from(id: String) -> Self {
        Chosen { id, drawn: None }
    }
}

/// How new the id a reconciliation works under is (see [`sync`]). Never
/// persisted: a retry, a failure or a restart finds the id recorded
/// ([`Fresh::No`]) and observes first, so a create whose answer was lost is
/// found and never made twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fresh {
    /// Recorded before this reconciliation: the object may exist.
    No,
    /// Chosen and recorded by this reconciliation, from a version of the
    /// resource without one. Ids are recorded before any create, so
    /// nothing this provider made is under it; an object made by hand may
    /// be.
    Recorded,
    /// As [`Fresh::Recorded`], and drawn at random in this reconciliation
    /// ([`Chosen::drawn`]): nothing anywhere is under it.
    Drawn,
}

impl Fresh {
    /// How new the id [`ManagedKind::choose_id`] chose and the
    /// reconciliation recorded is.
    pub fn of(chosen: &Chosen) -> Self {
        match chosen.drawn {
            Some(_) => Fresh::Drawn,
            None => Fresh::Recorded,
        }
    }

    /// Whether a create may come before any observe: under a drawn id, or
    /// under a recorded one where the kind's create refuses a taken id.
    fn creates_first<K: ManagedKind, E: External<K>>(self, external: &E) -> bool {
        match self {
            Fresh::No => false,
            Fresh::Recorded => external.create_refuses_existing(),
            Fresh::Drawn => true,
        }
    }
}

/// What [`External::maintain`] did.
#[derive(Debug, Clone)]
pub struct Maintained<K> {
    /// The resource as the kind rewrote it (a new external name), to
    /// continue with.
    pub mr: Option<K>,
    /// Kind conditions to set.
    pub conditions: Vec<Condition>,
    /// Look again no later than this (a grace period ending).
    pub requeue_after: Option<std::time::Duration>,
    /// A Normal event to record (reason, note).
    pub event: Option<(&'static str, String)>,
}

impl<K> Default for Maintained<K> {
    fn default() -> Self {
        Self {
            mr: None,
            conditions: Vec::new(),
            requeue_after: None,
            event: None,
        }
    }
}

/// Everything an [`External`] needs, resolved by the reconciler.
pub struct Connection {
    pub litellm: litellm::Client,
    /// Ownership the provider established lately (see
    /// [`ownership::Verified`]).
    pub verified: std::sync::Arc<ownership::Verified>,
    pub owner: Owner,
    /// The namespace of the resource's LiteLLMInstance: the platform's.
    pub instance_namespace: String,
    /// Remembers every secret value the kind reads, for error text.
    pub scrubber: crate::provider::managed::scrub::Scrubber,
    /// Whether the resource's namespace may publish public model names (see
    /// `spec.publicModelNamespaces` of the instance).
    pub public_models: bool,
    /// The internal hosts the instance lets tenants' MCP servers name
    /// (`spec.tenantMcpServerHosts`).
    pub tenant_mcp_server_hosts: Vec<String>,
    pub refs: Resolved,
    /// Reads through the shared caches; writes through its client.
    pub kube: crate::provider::watch::cache::Kube,
    /// What consumers call (the instance's gateway, else its admin
    /// endpoint), for connection details.
    pub endpoint: String,
    /// The secret the id was drawn from in this very reconciliation
    /// ([`Chosen::drawn`]), handed to the create so it is not read back.
    pub drawn: Option<litellm::Secret>,
}

/// Makes the [`External`] of one reconciliation from its [`Connection`]:
/// crossplane-runtime's `ExternalConnecter`, which its reconciler's tests
/// replace with a fake, as the engine's tests do here.
pub trait Connecter<K: ManagedKind>: Send + Sync {
    type External: External<K>;
    fn connect(&self, connection: Connection) -> Self::External;
}

/// Every kind's own [`ManagedKind::connect`].
pub struct KindConnecter;

impl<K: ManagedKind> Connecter<K> for KindConnecter {
    type External = K::External;
    fn connect(&self, connection: Connection) -> K::External {
        K::connect(connection)
    }
}

/// A managed kind: its CRD type plus how it maps onto LiteLLM.
pub trait ManagedKind:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + crate::provider::watch::tolerant::Packable
    + crate::provider::watch::cache::Cached
    + Clone
    + Debug
    + DeserializeOwned
    + Serialize
    + Send
    + Sync
    + 'static
{
    /// `spec.forProvider`.
    type Parameters: Clone + Debug + PartialEq + Serialize + Send + Sync;
    /// `status.atProvider`.
    type AtProvider: Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync;
    type External: External<Self>;

    /// Lowercase noun for messages and metric labels (`"team"`).
    const NOUN: &'static str;

    fn managed(&self) -> &ManagedFields;
    fn for_provider(&self) -> &Self::Parameters;
    fn managed_status(&self) -> Option<&ManagedStatus<Self::AtProvider>>;

    /// References that must resolve before anything is created.
    fn references(&self) -> Vec<Reference> {
        Vec::new()
    }

    /// Whether the status holds the condition `type_` with status `True`.
    fn condition_is_true(&self, type_: &str) -> bool {
        self.managed_status()
            .is_some_and(|s| crate::api::conditions::is_true(&s.conditions, type_))
    }

    /// The kinds of object this kind's resources can join (what
    /// [`Self::joins`] may name): a resource of such a kind becoming Ready
    /// wakes those that wait for it.
    const JOINS: &'static [crate::provider::watch::joins::Joins] = &[];

    /// What this kind's resources are to those that join them, if anything
    /// joins them (a team, a budget, ...).
    const JOINED_AS: Option<crate::provider::watch::joins::Joins> = None;

    /// The teams and budgets this resource's LiteLLM object joins (see
    /// [`crate::provider::managed::dependents`]).
    fn joins(&self) -> Vec<crate::provider::watch::joins::Join> {
        Vec::new()
    }

    /// The fields of this kind's CRD (`selectableFields`) by which the API
    /// server finds the resources that join a `what` (see
    /// [`crate::provider::managed::dependents::joining`]); `None` where it has none for it.
    fn join_fields(
        _what: crate::provider::watch::joins::Joins,
    ) -> Option<crate::provider::watch::joins::JoinFields> {
        None
    }

    /// The resources whose LiteLLM objects join this one's (whose external
    /// name is `id`): its deletion waits for them. Those of every kind whose
    /// [`ManagedKind::JOINS`] lists this kind's [`ManagedKind::JOINED_AS`]
    /// ([`crate::provider::managed::dependents::joining_any`]).
    fn dependents(
        &self,
        kube: &crate::provider::watch::cache::Kube,
        id: &str,
    ) -> impl Future<Output = Result<crate::provider::managed::dependents::Dependents, kube::Error>> + Send
    {
        async move {
            match Self::JOINED_AS {
                Some(what) => {
                    crate::provider::managed::dependents::joining_any(kube, self, id, what).await
                }
                None => Ok(crate::provider::managed::dependents::Dependents::default()),
            }
        }
    }

    /// Whether every poll of this resource must reconcile in full: it has
    /// something due at a time of its own (a key's scheduled rotation),
    /// which a poll that finds LiteLLM and Kubernetes as they were would
    /// not see (see [`crate::provider::watch::polls`]).
    fn polls_in_full(&self) -> bool {
        false
    }

    /// The connection Secret, if the resource has one.
    fn connection_secret_name(&self) -> Option<String> {
        self.managed()
            .write_connection_secret_to_ref
            .as_ref()
            .map(|r| r.name.clone())
    }

    /// The id to record as external name before the first create. Kinds
    /// whose id must be stored elsewhere first (a key's secret) do it here.
    fn choose_id(
        &self,
        _connection: &Connection,
    ) -> impl Future<Output = Result<Chosen, ExternalError>> + Send {
        let id = crate::provider::managed::ownership::default_id(
            &self.namespace().unwrap_or_default(),
            &self.name_any(),
        );
        async move { Ok(Chosen::from(id)) }
    }

    fn connect(connection: Connection) -> Self::External;
}

/// What the caches' scans read of a managed resource (see
/// [`crate::provider::watch::tolerant::Packed`]).
pub fn facts<K: ManagedKind>(mr: &K) -> crate::provider::watch::tolerant::Facts {
    crate::provider::watch::tolerant::Facts {
        ready: mr.condition_is_true(crate::api::conditions::READY),
        synced: mr.condition_is_true(crate::api::conditions::SYNCED),
        reported: mr.managed_status().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == crate::api::conditions::SYNCED)
        }),
        external_name: mr
            .annotations()
            .get(crate::api::common::EXTERNAL_NAME)
            .map(|id| id.as_str().into()),
        instance_ref: Some(mr.managed().instance_ref.clone()),
        joins: mr.joins().into_boxed_slice(),
    }
}

/// Every managed kind is cached packed, its metadata as
/// [`crate::provider::watch::cache::strip_managed`] keeps it.
macro_rules! packable {
    ($($kind:ident => $field:ident),* $(,)?) => {$(
        impl crate::provider::watch::tolerant::Packable for crate::api::$kind {
            fn strip(meta: &mut kube::api::ObjectMeta) {
                crate::provider::watch::cache::strip_managed(meta)
            }
            fn facts(&self) -> crate::provider::watch::tolerant::Facts {
                facts(self)
            }
        }
    )*};
}
crate::managed_kinds!(packable);

/// What [`External::create`] did beyond creating the object under the id
/// it was given. Only keys set `id` and `condition`: a proxy that refuses
/// caller-chosen keys generates the key, and so its id (the token), itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Creation {
    /// The id the object really has, to record as external name instead.
    pub id: Option<String>,
    /// A kind-specific condition to set (and keep) on the resource.
    pub condition: Option<Condition>,
    /// Set by [`sync`], never by a kind: the create's answer showed the
    /// object as this resource's and as `forProvider` asks, so it is
    /// `Available` without a second read (see [`Created::answer`]).
    pub available: bool,
}

/// What [`External::create`] returns.
#[derive(Debug, Clone)]
pub struct Created<K: ManagedKind> {
    pub creation: Creation,
    /// The object as the create's own answer shows it, observed as
    /// [`External::observe`] would observe it; `None` where the answer does
    /// not hold the object (or holds too little of it to compare).
    ///
    /// crossplane-runtime observes a created object again (it requeues at
    /// once and waits for the provider's observe to report it available),
    /// because most cloud APIs create asynchronously. LiteLLM creates
    /// synchronously and answers with the row it wrote, so a read right
    /// after would return the same row: where that row matches
    /// `forProvider` the resource is `Available` from this answer, and one
    /// LiteLLM request per created object is saved. Where it does not (a
    /// team's members, added by calls after the create; a key's soft budget,
    /// which lives in a budget row the answer leaves out), the object is
    /// observed again at once, as crossplane-runtime does.
    pub answer: Option<Observation<K>>,
}

impl<K: ManagedKind> From<Creation> for Created<K> {
    fn from(creation: Creation) -> Self {
        Self {
            creation,
            answer: None,
        }
    }
}

/// What one [`sync`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Created(Creation),
    Updated(Diff),
    UpToDate,
    /// Drift the policies do not allow to correct.
    DriftReported(Diff),
    /// Missing, and the policies do not allow Create.
    Missing,
    /// Not this resource's to manage; left alone.
    Refused(Refusal),
}

/// The result of [`sync`]: the outcome and what to record in Kubernetes.
#[derive(Debug, Clone)]
pub struct Synced<K: ManagedKind> {
    pub outcome: Outcome,
    pub late_init: Option<K::Parameters>,
    pub at_provider: Option<K::AtProvider>,
    pub connection_details: BTreeMap<String, String>,
    /// The observation's [`Observation::probe`], where the object was found
    /// up to date and nothing was written.
    pub probe: Option<litellm::Probe>,
}

/// Crossplane's observe, then create or update as the policies allow. One
/// read in the steady state; a write only for a missing object or drift.
///
/// `fresh`: how new the id is ([`Fresh`]). Where the policies allow Create
/// and the id was drawn at random in this very reconciliation (a key's new
/// secret), or chosen and recorded in it for a kind whose create refuses a
/// taken id ([`External::create_refuses_existing`]), the object is created
/// without an observe first, and observed only when the create finds the id
/// taken. A retry, a failure or a restart finds the id recorded
/// ([`Fresh::No`]) and observes first, so a create whose answer was lost is
/// found and never made twice.
///
/// An object that is not this resource's (see [`ownership::may_manage`])
/// is refused under every policy, `Observe` included: an import would show
/// another tenant's spend, limits and settings, and late initialization
/// would copy them.
pub async fn sync<K: ManagedKind, E: External<K>>(
    mr: &K,
    id: &str,
    fresh: Fresh,
    owner: &Owner,
    instance_namespace: &str,
    external: &E,
) -> Result<Synced<K>, Failed<ExternalError>> {
    let policies = &mr.managed().management_policies;
    if fresh.creates_first(external) && policy_allows(policies, ManagementPolicy::Create) {
        match create(
            mr,
            id,
            owner,
            instance_namespace,
            external,
            None,
            BTreeMap::new(),
        )
        .await
        {
            Err(Failed {
                error: ExternalError::LiteLLM(litellm::Error::Conflict { .. }),
                ..
            }) => {} // Something is there after all: observed as any object.
            created => return created,
        }
    }
    // Taken apart, not copied: a poll moves what it observed into what it
    // reports.
    let Observation {
        exists,
        owner: live_owner,
        drift,
        late_init,
        at_provider,
        connection_details,
        probe,
    } = external
        .observe(mr, id)
        .await
        .map_err(Failed::at(Step::Observe))?;
    if !exists {
        if !policy_allows(policies, ManagementPolicy::Create) {
            return Ok(Synced {
                outcome: Outcome::Missing,
                late_init: None,
                at_provider,
                connection_details,
                probe: None,
            });
        }
        return create(
            mr,
            id,
            owner,
            instance_namespace,
            external,
            at_provider,
            connection_details,
        )
        .await;
    }
    let mut synced = Synced {
        outcome: Outcome::UpToDate,
        late_init: None,
        at_provider,
        connection_details,
        probe: None,
    };
    if let Err(refusal) = ownership::may_manage(live_owner.as_ref(), owner, instance_namespace) {
        synced.outcome = Outcome::Refused(refusal);
        synced.at_provider = None;
        synced.connection_details.clear();
        return Ok(synced);
    }
    if policy_allows(policies, ManagementPolicy::LateInitialize) {
        synced.late_init = late_init;
    }
    synced.outcome = if drift.is_empty() {
        synced.probe = probe;
        Outcome::UpToDate
    } else if policy_allows(policies, ManagementPolicy::Update) {
        Box::pin(external.update(mr, id, &drift))
            .await
            .map_err(Failed::at(Step::Update))?;
        Outcome::Updated(drift)
    } else {
        Outcome::DriftReported(drift)
    };
    Ok(synced)
}

/// [`sync`]'s create, after an observe that found nothing (what it
/// reported of the absent object is `at_provider` and
/// `connection_details`) or first, under a fresh id: the object is
/// `Available` at once where the create's answer shows it as this
/// resource's and as `forProvider` asks.
async fn create<K: ManagedKind, E: External<K>>(
    mr: &K,
    id: &str,
    owner: &Owner,
    instance_namespace: &str,
    external: &E,
    at_provider: Option<K::AtProvider>,
    connection_details: BTreeMap<String, String>,
) -> Result<Synced<K>, Failed<ExternalError>> {
    let policies = &mr.managed().management_policies;
    // Boxed, as the update: a poll's future need not hold room for a
    // write.
    let Created {
        mut creation,
        answer,
    } = Box::pin(external.create(mr, id))
        .await
        .map_err(Failed::at(Step::Create))?;
    let mut synced = Synced {
        outcome: Outcome::UpToDate,
        late_init: None,
        at_provider,
        connection_details,
        probe: None,
    };
    let available = answer.filter(|answer| {
        answer.exists
            && answer.drift.is_empty()
            && ownership::may_manage(answer.owner.as_ref(), owner, instance_namespace).is_ok()
    });
    if let Some(answer) = available {
        creation.available = true;
        synced.at_provider = answer.at_provider;
        synced.connection_details = answer.connection_details;
        if policy_allows(policies, ManagementPolicy::LateInitialize) {
            synced.late_init = answer.late_init;
        }
    }
    synced.outcome = Outcome::Created(creation);
    Ok(synced)
}

/// What [`cleanup`] did; every variant lets the finalizer go.
#[derive(Debug, Clone, PartialEq)]
pub enum Cleanup {
    /// Left in LiteLLM on purpose (policies, or nothing was ever created).
    Released(&'static str),
    /// Already gone.
    Gone,
    Deleted,
    /// Not this resource's: never deleted on its behalf.
    Refused(Refusal),
}

/// The id to delete, or why the resource is released without any call.
pub fn deletion_target<'a, K: ManagedKind>(
    mr: &K,
    id: Option<&'a str>,
) -> Result<&'a str, Cleanup> {
    if !policy_allows(&mr.managed().management_policies, ManagementPolicy::Delete) {
        return Err(Cleanup::Released(
            "the management policies do not include Delete",
        ));
    }
    // The id is recorded before any create, so without one nothing exists.
    id.ok_or(Cleanup::Released("no external name was ever recorded"))
}

/// Crossplane's delete: only with the Delete policy, only what this resource
/// owns, and only success (or a confirmed absence) lets go.
pub async fn cleanup<K: ManagedKind, E: External<K>>(
    mr: &K,
    id: Option<&str>,
    owner: &Owner,
    instance_namespace: &str,
    external: &E,
) -> Result<Cleanup, Failed<ExternalError>> {
    let id = match deletion_target(mr, id) {
        Ok(id) => id,
        Err(released) => return Ok(released),
    };
    let observation = external
        .observe(mr, id)
        .await
        .map_err(Failed::at(Step::Observe))?;
    if !observation.exists {
        return Ok(Cleanup::Gone);
    }
    if let Err(refusal) =
        ownership::may_manage(observation.owner.as_ref(), owner, instance_namespace)
    {
        return Ok(Cleanup::Refused(refusal));
    }
    external
        .delete_related(mr)
        .await
        .map_err(Failed::at(Step::Delete))?;
    external
        .delete(id)
        .await
        .map_err(Failed::at(Step::Delete))?;
    Ok(Cleanup::Deleted)
}

fn fields(diff: &Diff) -> String {
    diff.fields().join(", ")
}

/// The `Ready` and `Synced` conditions for an outcome.
pub fn conditions(noun: &str, id: &str, outcome: &Outcome) -> [Condition; 2] {
    let success =
        |message: Option<String>| condition(SYNCED, true, reason::RECONCILE_SUCCESS, message);
    let available = condition(READY, true, reason::AVAILABLE, None);
    match outcome {
        Outcome::Created(creation) if creation.available => [available, success(None)],
        Outcome::Created(_) => [
            condition(READY, false, reason::CREATING, Some(format!("created LiteLLM {noun} {id}"))),
            success(None),
        ],
        Outcome::Updated(diff) => [available, success(Some(format!("updated {}", fields(diff))))],
        Outcome::UpToDate => [available, success(None)],
        Outcome::DriftReported(diff) => [
            available,
            success(Some(format!(
                "LiteLLM {noun} {id} differs from forProvider in {}; not corrected because the \
                 management policies do not include Update",
                fields(diff)
            ))),
        ],
        Outcome::Missing => [
            condition(READY, false, reason::UNAVAILABLE, Some(format!("LiteLLM {noun} {id} does not exist"))),
            condition(
                SYNCED,
                false,
                reason::RECONCILE_ERROR,
                Some(format!(
                    "LiteLLM {noun} {id} does not exist and the management policies do not include Create"
                )),
            ),
        ],
        Outcome::Refused(refusal) => [
            condition(READY, false, reason::UNAVAILABLE, None),
            condition(
                SYNCED,
                false,
                reason::RECONCILE_ERROR,
                // The id is not repeated: for budgets it embeds the
                // owner's namespace.
                Some(format!(
                    "refusing to manage or import the LiteLLM {noun} named by \
                     {EXTERNAL_NAME}: {}",
                    refusal.explain()
                )),
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::api::common::InstanceRef;
    use crate::api::team::{LiteLLMTeam, LiteLLMTeamSpec, TeamObservation, TeamParameters};

    /// A scripted LiteLLM: what observe returns, what fails, and a log of
    /// every call.
    struct Fake {
        observation: Observation<LiteLLMTeam>,
        /// The one call that fails: "observe", "create", "update" or
        /// "delete".
        failing: Option<&'static str>,
        /// What a successful create reports.
        creation: Creation,
        /// What its answer shows of the object.
        answer: Option<Observation<LiteLLMTeam>>,
        /// The kind's create refuses a taken id
        /// ([`External::create_refuses_existing`]).
        refuses_existing: bool,
        /// The create finds the id taken and answers a conflict.
        taken: bool,
        calls: Mutex<Vec<String>>,
    }

    impl Fake {
        fn new(observation: Observation<LiteLLMTeam>) -> Self {
            Self {
                observation,
                failing: None,
                creation: Creation::default(),
                answer: None,
                refuses_existing: false,
                taken: false,
                calls: Mutex::new(Vec::new()),
            }
        }
        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
        fn log(&self, call: String) {
            self.calls.lock().unwrap().push(call);
        }
        fn outcome(&self, call: &'static str) -> Result<(), ExternalError> {
            if self.failing != Some(call) {
                return Ok(());
            }
            Err(ExternalError::LiteLLM(litellm::Error::Retryable {
                op: "POST /team/new",
                detail: "timed out".into(),
            }))
        }
    }

    impl External<LiteLLMTeam> for Fake {
        async fn observe(
            &self,
            _: &LiteLLMTeam,
            id: &str,
        ) -> Result<Observation<LiteLLMTeam>, ExternalError> {
            self.log(format!("observe {id}"));
            self.outcome("observe")?;
            Ok(self.observation.clone())
        }
        async fn create(
            &self,
            _: &LiteLLMTeam,
            id: &str,
        ) -> Result<Created<LiteLLMTeam>, ExternalError> {
            self.log(format!("create {id}"));
            self.outcome("create")?;
            if self.taken {
                return Err(ExternalError::LiteLLM(litellm::Error::Conflict {
                    op: "POST /team/new",
                    detail: "taken".into(),
                }));
            }
            Ok(Created {
                creation: self.creation.clone(),
                answer: self.answer.clone(),
            })
        }
        async fn update(&self, _: &LiteLLMTeam, id: &str, _: &Diff) -> Result<(), ExternalError> {
            self.log(format!("update {id}"));
            self.outcome("update")
        }
        async fn delete(&self, id: &str) -> Result<(), ExternalError> {
            self.log(format!("delete {id}"));
            self.outcome("delete")
        }
        fn create_refuses_existing(&self) -> bool {
            self.refuses_existing
        }
    }

    fn team(policies: &[ManagementPolicy]) -> LiteLLMTeam {
        let mut team = LiteLLMTeam::new(
            "web",
            LiteLLMTeamSpec {
                managed: ManagedFields {
                    instance_ref: InstanceRef {
                        name: "proxy".into(),
                        namespace: None,
                    },
                    management_policies: policies.to_vec(),
                    write_connection_secret_to_ref: None,
                },
                for_provider: TeamParameters::default(),
            },
        );
        team.metadata.namespace = Some("ns".into());
        team
    }

    fn me() -> Owner {
        Owner::of_test("web")
    }

    fn stranger() -> Owner {
        Owner {
            namespace: "other".into(),
            ..me()
        }
    }

    fn live(owner: Option<Owner>, drift: &[&'static str]) -> Observation<LiteLLMTeam> {
        let mut diff = Diff::new();
        for field in drift {
            diff.field(field, Some(&1), Some(&2));
        }
        Observation {
            probe: None,
            exists: true,
            owner,
            drift: diff,
            late_init: Some(TeamParameters {
                blocked: Some(false),
                ..TeamParameters::default()
            }),
            at_provider: Some(TeamObservation {
                team_id: Some("ns.web".into()),
                ..TeamObservation::default()
            }),
            connection_details: BTreeMap::new(),
        }
    }

    use ManagementPolicy::{All, Create, Delete, LateInitialize, Observe, Update};

    #[tokio::test]
    async fn sync_follows_crossplanes_order_for_every_policy_and_state() {
        struct Case {
            name: &'static str,
            policies: &'static [ManagementPolicy],
            observation: Observation<LiteLLMTeam>,
            calls: &'static [&'static str],
            outcome: Outcome,
            late_init: bool,
        }
        let drift = |fields: &[&'static str]| {
            let mut diff = Diff::new();
            for field in fields {
                diff.field(field, Some(&1), Some(&2));
            }
            diff
        };
        let cases = [
            Case {
                name: "missing is created",
                policies: &[All],
                observation: Observation::absent(),
                calls: &["observe ns.web", "create ns.web"],
                outcome: Outcome::Created(Creation::default()),
                late_init: false,
            },
            Case {
                name: "missing without Create is only reported",
                policies: &[Observe],
                observation: Observation::absent(),
                calls: &["observe ns.web"],
                outcome: Outcome::Missing,
                late_init: false,
            },
            Case {
                name: "steady state is one read",
                policies: &[All],
                observation: live(Some(me()), &[]),
                calls: &["observe ns.web"],
                outcome: Outcome::UpToDate,
                late_init: true,
            },
            Case {
                name: "drift is corrected",
                policies: &[All],
                observation: live(Some(me()), &["teamAlias"]),
                calls: &["observe ns.web", "update ns.web"],
                outcome: Outcome::Updated(drift(&["teamAlias"])),
                late_init: true,
            },
            Case {
                name: "drift without Update is reported",
                policies: &[Observe, Create, Delete],
                observation: live(Some(me()), &["maxBudget"]),
                calls: &["observe ns.web"],
                outcome: Outcome::DriftReported(drift(&["maxBudget"])),
                late_init: false,
            },
            Case {
                name: "late init only with LateInitialize",
                policies: &[Observe, LateInitialize],
                observation: live(None, &[]),
                calls: &["observe ns.web"],
                outcome: Outcome::UpToDate,
                late_init: true,
            },
            Case {
                name: "unmarked objects are adopted from the instance's namespace",
                policies: &[All],
                observation: live(None, &["metadata"]),
                calls: &["observe ns.web", "update ns.web"],
                outcome: Outcome::Updated(drift(&["metadata"])),
                late_init: true,
            },
            Case {
                name: "another owner's object is refused",
                policies: &[All],
                observation: live(Some(stranger()), &["metadata"]),
                calls: &["observe ns.web"],
                outcome: Outcome::Refused(Refusal::Foreign),
                late_init: false,
            },
            Case {
                name: "another owner's object is not even observed",
                policies: &[Observe],
                observation: live(Some(stranger()), &["metadata"]),
                calls: &["observe ns.web"],
                outcome: Outcome::Refused(Refusal::Foreign),
                late_init: false,
            },
            Case {
                name: "nor late-initialized from",
                policies: &[Observe, LateInitialize],
                observation: live(Some(stranger()), &[]),
                calls: &["observe ns.web"],
                outcome: Outcome::Refused(Refusal::Foreign),
                late_init: false,
            },
            Case {
                name: "update alone does not allow touching another owner's object",
                policies: &[Observe, Update],
                observation: live(Some(stranger()), &["metadata"]),
                calls: &["observe ns.web"],
                outcome: Outcome::Refused(Refusal::Foreign),
                late_init: false,
            },
        ];
        for case in cases {
            let fake = Fake::new(case.observation);
            let synced = sync(
                &team(case.policies),
                "ns.web",
                Fresh::No,
                &me(),
                "ns",
                &fake,
            )
            .await
            .unwrap();
            assert_eq!(fake.calls(), case.calls, "{}", case.name);
            assert_eq!(synced.outcome, case.outcome, "{}", case.name);
            assert_eq!(synced.late_init.is_some(), case.late_init, "{}", case.name);
            if matches!(synced.outcome, Outcome::Refused(_)) {
                assert!(synced.at_provider.is_none(), "{}", case.name);
            }
        }
    }

    /// The create's answer makes the object Available only where an observe
    /// of it would: this resource's, and no field of `forProvider` off.
    #[tokio::test]
    async fn a_create_whose_answer_shows_the_object_as_asked_is_available_at_once() {
        let absent_after_all = Observation {
            probe: None,
            at_provider: Some(TeamObservation::default()),
            ..Observation::absent()
        };
        let cases: [(
            &str,
            &[ManagementPolicy],
            &str,
            Option<Observation<LiteLLMTeam>>,
            bool,
            bool,
        ); 7] = [
            (
                "no answer: observed again",
                &[All],
                "ns",
                None,
                false,
                false,
            ),
            (
                "the answer as asked",
                &[All],
                "ns",
                Some(live(Some(me()), &[])),
                true,
                true,
            ),
            (
                "late init only with LateInitialize",
                &[Observe, Create, Delete],
                "ns",
                Some(live(Some(me()), &[])),
                true,
                false,
            ),
            (
                "an answer off in a field (members added after the create)",
                &[All],
                "ns",
                Some(live(Some(me()), &["members"])),
                false,
                false,
            ),
            (
                "another owner's marker",
                &[All],
                "ns",
                Some(live(Some(stranger()), &[])),
                false,
                false,
            ),
            (
                "unmarked, outside the instance's namespace",
                &[All],
                "other",
                Some(live(None, &[])),
                false,
                false,
            ),
            (
                "an answer of no object",
                &[All],
                "ns",
                Some(absent_after_all),
                false,
                false,
            ),
        ];
        for (name, policies, instance_namespace, answer, available, late_init) in cases {
            let mut fake = Fake::new(Observation::absent());
            fake.answer = answer;
            let synced = sync(
                &team(policies),
                "ns.web",
                Fresh::No,
                &me(),
                instance_namespace,
                &fake,
            )
            .await
            .unwrap();
            assert_eq!(fake.calls(), ["observe ns.web", "create ns.web"], "{name}");
            let Outcome::Created(creation) = &synced.outcome else {
                panic!("{name}: {:?}", synced.outcome);
            };
            assert_eq!(creation.available, available, "{name}");
            // What the answer showed is reported only when it counts.
            assert_eq!(synced.at_provider.is_some(), available, "{name}");
            assert_eq!(synced.late_init.is_some(), late_init, "{name}");
            let [ready, synced_condition] = conditions("team", "ns.web", &synced.outcome);
            let expected = match available {
                true => ("True", reason::AVAILABLE),
                false => ("False", reason::CREATING),
            };
            assert_eq!(
                (ready.status.as_str(), ready.reason.as_str()),
                expected,
                "{name}"
            );
            assert_eq!(synced_condition.status, "True", "{name}");
        }
    }

    /// Which ids are created before any observe: a drawn one always, a
    /// recorded one where the kind's create refuses a taken id, one
    /// recorded earlier never; and only where the policies allow Create. A
    /// create that finds the id taken after all falls through to the
    /// observe and its ownership rules.
    #[tokio::test]
    async fn only_a_fresh_id_is_created_before_any_observe() {
        let observe_create = &["observe ns.web", "create ns.web"][..];
        let create = &["create ns.web"][..];
        let create_observe = &["create ns.web", "observe ns.web"][..];
        let observe = &["observe ns.web"][..];
        // How new the id is, whether the kind's create refuses a taken id,
        // the policies, whether the id is taken, the calls made.
        type Case<'a> = (Fresh, bool, &'a [ManagementPolicy], bool, &'a [&'a str]);
        let cases: [Case; 10] = [
            (Fresh::No, true, &[All], false, observe_create),
            (Fresh::No, false, &[All], false, observe_create),
            (Fresh::Recorded, false, &[All], false, observe_create),
            (Fresh::Recorded, true, &[All], false, create),
            (Fresh::Recorded, true, &[All], true, create_observe),
            (Fresh::Drawn, false, &[All], false, create),
            (Fresh::Drawn, true, &[All], false, create),
            (Fresh::Drawn, false, &[All], true, create_observe),
            (Fresh::Drawn, false, &[Observe], false, observe),
            (Fresh::Recorded, true, &[Observe, Update], false, observe),
        ];
        for (fresh, refuses_existing, policies, taken, want) in cases {
            let case =
                format!("{fresh:?}, refuses {refuses_existing}, {policies:?}, taken {taken}");
            let mut fake = Fake::new(match taken {
                true => live(Some(stranger()), &[]),
                false => Observation::absent(),
            });
            fake.refuses_existing = refuses_existing;
            fake.taken = taken;
            let synced = sync(&team(policies), "ns.web", fresh, &me(), "ns", &fake)
                .await
                .unwrap();
            assert_eq!(fake.calls(), want, "{case}");
            let expected = match (taken, policies) {
                (true, _) => Outcome::Refused(Refusal::Foreign),
                (false, [All]) => Outcome::Created(Creation::default()),
                (false, _) => Outcome::Missing,
            };
            assert_eq!(synced.outcome, expected, "{case}");
        }
    }

    #[tokio::test]
    async fn unmarked_objects_are_refused_outside_the_instance_namespace() {
        for policies in [&[All][..], &[Observe], &[Observe, LateInitialize]] {
            let fake = Fake::new(live(None, &["metadata"]));
            let synced = sync(
                &team(policies),
                "ns.web",
                Fresh::No,
                &me(),
                "platform",
                &fake,
            )
            .await
            .unwrap();
            assert_eq!(synced.outcome, Outcome::Refused(Refusal::Unmarked));
            assert!(synced.at_provider.is_none() && synced.late_init.is_none());
            assert_eq!(fake.calls(), ["observe ns.web"]);
        }
        let fake = Fake::new(live(None, &[]));
        let result = cleanup(&team(&[All]), Some("ns.web"), &me(), "platform", &fake)
            .await
            .unwrap();
        assert_eq!(result, Cleanup::Refused(Refusal::Unmarked));
        assert_eq!(fake.calls(), ["observe ns.web"]);
    }

    #[tokio::test]
    async fn an_id_chosen_by_litellm_is_handed_over_with_its_condition() {
        let creation = Creation {
            id: Some("chosen-by-litellm".into()),
            condition: Some(condition(
                "KeyGeneratedByProxy",
                true,
                "CustomKeysDisabled",
                None,
            )),
            available: false,
        };
        let mut fake = Fake::new(Observation::absent());
        fake.creation = creation.clone();
        let synced = sync(&team(&[All]), "ns.web", Fresh::No, &me(), "ns", &fake)
            .await
            .unwrap();
        assert_eq!(fake.calls(), ["observe ns.web", "create ns.web"]);
        assert_eq!(synced.outcome, Outcome::Created(creation));
    }

    #[tokio::test]
    async fn a_failed_create_is_an_error_and_the_next_sync_finds_the_object() {
        let mut fake = Fake::new(Observation::absent());
        fake.failing = Some("create");
        let err = sync(&team(&[All]), "ns.web", Fresh::No, &me(), "ns", &fake)
            .await
            .unwrap_err();
        assert_eq!(err.step, Step::Create);
        assert!(err.error.is_retryable());
        // The response was lost but the team exists under the recorded id:
        // the retry reads it and creates nothing.
        let fake = Fake::new(live(Some(me()), &[]));
        let synced = sync(&team(&[All]), "ns.web", Fresh::No, &me(), "ns", &fake)
            .await
            .unwrap();
        assert_eq!(synced.outcome, Outcome::UpToDate);
        assert_eq!(fake.calls(), ["observe ns.web"]);
    }

    /// Each failure names the step it stopped, which names the event:
    /// crossplane-runtime's reasons.
    #[tokio::test]
    async fn failures_carry_the_step_that_failed() {
        let cases = [
            ("observe", Observation::absent(), Step::Observe),
            ("create", Observation::absent(), Step::Create),
            ("update", live(Some(me()), &["teamAlias"]), Step::Update),
        ];
        for (failing, observation, step) in cases {
            let mut fake = Fake::new(observation);
            fake.failing = Some(failing);
            let err = sync(&team(&[All]), "ns.web", Fresh::No, &me(), "ns", &fake)
                .await
                .unwrap_err();
            assert_eq!(err.step, step, "{failing}");
            assert_eq!(err.to_string(), err.error.to_string(), "{failing}");
        }
        for (failing, step) in [("observe", Step::Observe), ("delete", Step::Delete)] {
            let mut fake = Fake::new(live(Some(me()), &[]));
            fake.failing = Some(failing);
            let err = cleanup(&team(&[All]), Some("ns.web"), &me(), "ns", &fake)
                .await
                .unwrap_err();
            assert_eq!(err.step, step, "{failing}");
        }
        let reasons: Vec<&str> = [
            Step::ResolveReferences,
            Step::Observe,
            Step::Create,
            Step::Update,
            Step::Delete,
            Step::PublishConnection,
        ]
        .into_iter()
        .map(Step::reason)
        .collect();
        assert_eq!(
            reasons,
            [
                "CannotResolveResourceReferences",
                "CannotObserveExternalResource",
                "CannotCreateExternalResource",
                "CannotUpdateExternalResource",
                "CannotDeleteExternalResource",
                "CannotPublishConnectionDetails",
            ]
        );
    }

    #[tokio::test]
    async fn cleanup_deletes_only_what_it_owns_and_only_with_delete() {
        struct Case {
            name: &'static str,
            policies: &'static [ManagementPolicy],
            id: Option<&'static str>,
            observation: Observation<LiteLLMTeam>,
            calls: &'static [&'static str],
            result: Cleanup,
        }
        let cases = [
            Case {
                name: "owned object is deleted",
                policies: &[All],
                id: Some("ns.web"),
                observation: live(Some(me()), &[]),
                calls: &["observe ns.web", "delete ns.web"],
                result: Cleanup::Deleted,
            },
            Case {
                name: "unmarked adopted object is deleted",
                policies: &[Observe, Delete],
                id: Some("ns.web"),
                observation: live(None, &[]),
                calls: &["observe ns.web", "delete ns.web"],
                result: Cleanup::Deleted,
            },
            Case {
                name: "gone counts as deleted",
                policies: &[All],
                id: Some("ns.web"),
                observation: Observation::absent(),
                calls: &["observe ns.web"],
                result: Cleanup::Gone,
            },
            Case {
                name: "without Delete nothing is called",
                policies: &[Observe, Create, Update],
                id: Some("ns.web"),
                observation: live(Some(me()), &[]),
                calls: &[],
                result: Cleanup::Released("the management policies do not include Delete"),
            },
            Case {
                name: "no external name means nothing was created",
                policies: &[All],
                id: None,
                observation: live(Some(me()), &[]),
                calls: &[],
                result: Cleanup::Released("no external name was ever recorded"),
            },
            Case {
                name: "another owner's object is never deleted",
                policies: &[All],
                id: Some("ns.web"),
                observation: live(Some(stranger()), &[]),
                calls: &["observe ns.web"],
                result: Cleanup::Refused(Refusal::Foreign),
            },
        ];
        for case in cases {
            let fake = Fake::new(case.observation);
            let result = cleanup(&team(case.policies), case.id, &me(), "ns", &fake)
                .await
                .unwrap();
            assert_eq!(fake.calls(), case.calls, "{}", case.name);
            assert_eq!(result, case.result, "{}", case.name);
        }
    }

    #[test]
    fn conditions_name_the_cause() {
        let [ready, synced] = conditions("team", "ns.web", &Outcome::Created(Creation::default()));
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", reason::CREATING)
        );
        assert_eq!(synced.status, "True");
        let [ready, synced] = conditions("team", "ns.web", &Outcome::UpToDate);
        assert_eq!(
            (ready.reason.as_str(), synced.reason.as_str()),
            (reason::AVAILABLE, reason::RECONCILE_SUCCESS)
        );
        let mut diff = Diff::new();
        diff.field("teamAlias", Some("a"), Some("b"));
        let [_, synced] = conditions("team", "ns.web", &Outcome::DriftReported(diff));
        assert!(synced.message.unwrap().contains("teamAlias"));
        let [ready, synced] = conditions("team", "ns.web", &Outcome::Refused(Refusal::Foreign));
        assert_eq!(
            (ready.status.as_str(), synced.status.as_str()),
            ("False", "False")
        );
        let message = synced.message.unwrap();
        assert!(message.contains("another resource"), "{message}");
        assert!(
            !message.contains("other/") && !message.contains("cluster"),
            "names nobody: {message}"
        );
        let [_, synced] = conditions("team", "ns.web", &Outcome::Missing);
        assert!(synced.message.unwrap().contains("Create"));
    }
}
