//! Leader election over a `coordination.k8s.io/v1` Lease, so several
//! replicas can run and only one reconciles.
//!
//! The rules (those of client-go's `tools/leaderelection`):
//!
//! - A Lease held by another replica is judged by when *this process* last
//!   saw its spec change, on the local monotonic clock, plus the
//!   `leaseDurationSeconds` it states. Its `renewTime` is never compared
//!   with the local wall clock, so clock skew between replicas (or between
//!   a replica and the API server) cannot make a live Lease look expired.
//! - The leader renews every `retry_period`; every attempt, and the hung
//!   calls in it, is bounded by the renew deadline: `renew_deadline` after
//!   the *start* of the last renewal that succeeded. When the deadline
//!   passes, the work is dropped at once, before any other replica can
//!   judge the Lease expired (that takes `lease_duration` after it saw that
//!   renewal, which it cannot have seen before the request was sent).
//! - Every write is a replace with the Lease's `resourceVersion`, so two
//!   replicas racing for an expired Lease cannot both win: the loser gets a
//!   409 and keeps waiting.
//!
//! A Lease namespace that does not exist and a Lease the API server forbids
//! are errors at once, never retried: waiting cannot fix them.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ObjectMeta, PostParams};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// Name of the Lease unless `--lease-name` says otherwise. The same for
/// every revision of the package, so an upgrade's new Deployment waits for
/// the old one.
pub const DEFAULT_LEASE_NAME: &str = "provider-litellm";

/// Where the Lease lives and how it is held.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica; unique per process (a restarted process is a new
    /// candidate).
    pub identity: String,
    /// How long other replicas wait, after they last saw the Lease change,
    /// before taking it. Whole seconds (the Lease stores seconds).
    pub lease_duration: Duration,
    /// How long after the start of its last successful renewal the leader
    /// stops working if it cannot renew; shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// Time between attempts, of the leader to renew and of the others to
    /// look.
    pub retry_period: Duration,
}

impl LeaseSettings {
    /// client-go's defaults: a 15 s lease, a 10 s renew deadline, 2 s
    /// between attempts.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }

    /// The checks client-go makes, naming the setting at fault.
    pub fn validate(&self) -> Result<(), Error> {
        let fail = |message: String| Err(Error::Settings(message));
        if self.namespace.is_empty() {
            return fail(
                "the Lease namespace is empty: set POD_NAMESPACE or --lease-namespace".into(),
            );
        }
        if self.name.is_empty() {
            return fail("the Lease name (--lease-name / LEASE_NAME) is empty".into());
        }
        if self.identity.is_empty() {
            return fail("this replica's identity (--identity / POD_NAME) is empty".into());
        }
        let lease = self.lease_duration;
        if lease < Duration::from_secs(1) || lease.subsec_nanos() != 0 {
            return fail(format!(
                "the lease duration ({lease:?}) must be a whole number of seconds, at least 1"
            ));
        }
        if self.renew_deadline >= lease {
            return fail(format!(
                "the renew deadline ({:?}) must be shorter than the lease duration ({lease:?})",
                self.renew_deadline
            ));
        }
        if self.retry_period.is_zero() || self.renew_deadline <= self.retry_period.mul_f64(1.2) {
            return fail(format!(
                "the retry period ({:?}) must be positive and the renew deadline ({:?}) longer \
                 than 1.2 times it",
                self.retry_period, self.renew_deadline
            ));
        }
        Ok(())
    }

    fn lease_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }
}

/// The namespace of the Lease when this replica elects, `None` when it does
/// not: from `--leader-election` / `LEADER_ELECTION` (`None` when neither
/// is given) and `--lease-namespace` / `POD_NAMESPACE`.
///
/// Unset, leader election is off as in Crossplane's provider template,
/// except where `POD_NAMESPACE` is set: Crossplane's package manager sets
/// it (from the pod's own namespace) on every provider Deployment, and
/// there a package upgrade briefly runs the old and the new revision's
/// Deployments side by side, so the provider elects.
pub fn lease_namespace(
    leader_election: Option<bool>,
    namespace: Option<&str>,
) -> Result<Option<String>, Error> {
    let namespace = namespace.map(str::trim).filter(|n| !n.is_empty());
    match (leader_election, namespace) {
        (Some(false), _) | (None, None) => Ok(None),
        (_, Some(namespace)) => Ok(Some(namespace.to_owned())),
        (Some(true), None) => Err(Error::Settings(
            "--leader-election needs the namespace of its Lease: set POD_NAMESPACE (Crossplane \
             sets it on the provider's Deployment) or --lease-namespace"
                .into(),
        )),
    }
}

/// Whether this replica leads, for `/metrics` (`provider_litellm_leader`)
/// and `/readyz`. Cloning shares it.
#[derive(Clone, Debug, Default)]
pub struct Leadership {
    leader: Gauge,
    standing_by: Arc<AtomicBool>,
    has_led: Arc<AtomicBool>,
}

impl Leadership {
    /// Registers `provider_litellm_leader` in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "provider_litellm_leader",
            "1 while this replica leads and reconciles (holds the leader Lease, or runs without \
             leader election), 0 otherwise",
            self.leader.clone(),
        );
    }

    /// Whether this replica leads now.
    pub fn is_leader(&self) -> bool {
        self.leader.get() == 1
    }

    /// Marks this replica as leading or not; [`run_as_leader`] does this
    /// itself, a binary without leader election marks itself leading.
    pub fn set_leader(&self, leading: bool) {
        if leading {
            self.has_led.store(true, Ordering::SeqCst);
            self.standing_by.store(false, Ordering::Relaxed);
        }
        self.leader.set(i64::from(leading));
    }

    /// Whether this replica has led at any time (it may be shutting down
    /// now, releasing the Lease).
    pub fn has_led(&self) -> bool {
        self.has_led.load(Ordering::SeqCst)
    }

    /// Whether this replica has read the Lease and found a live leader
    /// other than itself: a standby ready to take over.
    pub fn is_standing_by(&self) -> bool {
        self.standing_by.load(Ordering::Relaxed)
    }

    pub(crate) fn set_standing_by(&self, standing_by: bool) {
        self.standing_by.store(standing_by, Ordering::Relaxed);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("leader election: {0}")]
    Settings(String),
    #[error(
        "leader election: the namespace {namespace:?} of the Lease {name:?} does not exist; \
         create it, point POD_NAMESPACE or --lease-namespace at an existing one, or run without \
         --leader-election"
    )]
    NamespaceMissing { namespace: String, name: String },
    #[error(
        "leader election: the API server forbids the Lease {namespace}/{name} to this replica \
         (it needs get, create and update on leases.coordination.k8s.io in {namespace:?}): \
         {message}"
    )]
    Forbidden {
        namespace: String,
        name: String,
        message: String,
    },
    #[error("leader election: lost the Lease {namespace}/{name} ({why}); stopped reconciling")]
    Lost {
        namespace: String,
        name: String,
        why: String,
    },
}

/// What this replica may do with a Lease as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// Free, released or expired: take it.
    Take,
    /// Ours: renew it.
    Renew,
    /// Held by `holder` until `until` (this process's monotonic clock)
    /// unless it changes before.
    Wait { holder: String, until: Instant },
}

/// Judges a Lease whose spec this process last saw change at
/// `observed_at`. A held Lease expires `leaseDurationSeconds` after that
/// moment, whatever its `renewTime` says.
pub fn judge(spec: Option<&LeaseSpec>, me: &str, observed_at: Instant, now: Instant) -> Judgement {
    let Some(spec) = spec else {
        return Judgement::Take;
    };
    match spec.holder_identity.as_deref() {
        None | Some("") => Judgement::Take,
        Some(holder) if holder == me => Judgement::Renew,
        Some(holder) => {
            let seconds = u64::try_from(spec.lease_duration_seconds.unwrap_or(0)).unwrap_or(0);
            let until = observed_at + Duration::from_secs(seconds);
            if now < until {
                Judgement::Wait {
                    holder: holder.to_owned(),
                    until,
                }
            } else {
                Judgement::Take
            }
        }
    }
}

/// How one attempt went.
enum Attempt {
    /// This replica holds the Lease; `since` is when the attempt that wrote
    /// it started (no other replica can have seen the write earlier).
    Held { since: Instant },
    /// Another replica holds it, until `until` unless it renews.
    Other { holder: String, until: Instant },
    /// Another replica wrote between our read and our write: look again.
    Raced,
}

fn status(err: &kube::Error) -> Option<&kube::core::Status> {
    match err {
        kube::Error::Api(status) => Some(status.as_ref()),
        _ => None,
    }
}

fn is_conflict(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.code == 409)
}

fn is_not_found(err: &kube::Error) -> bool {
    status(err).is_some_and(|s| s.code == 404)
}

fn holder(lease: &Lease) -> Option<&str> {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
}

struct Elector {
    api: Api<Lease>,
    settings: LeaseSettings,
    /// The Lease as last read or written; its `resourceVersion` lets the
    /// leader renew in one request.
    lease: Option<Lease>,
    /// When this process last saw the Lease's spec change.
    observed_at: Instant,
    /// The last error logged, so a repeated one is not logged again.
    last_error: Option<String>,
}

impl Elector {
    fn new(client: kube::Client, settings: LeaseSettings) -> Self {
        Self {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            lease: None,
            observed_at: Instant::now(),
            last_error: None,
        }
    }

    /// The spec that says this replica holds the Lease from now on
    /// (`current`: the Lease as it stands, `None` when creating it).
    fn held(&self, current: Option<&LeaseSpec>) -> LeaseSpec {
        let now = MicroTime(Timestamp::now());
        let creating = current.is_none();
        let current = current.cloned().unwrap_or_default();
        let ours =
            creating || current.holder_identity.as_deref() == Some(self.settings.identity.as_str());
        let transitions = current.lease_transitions.unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(self.settings.identity.clone()),
            lease_duration_seconds: Some(self.settings.lease_seconds()),
            acquire_time: if ours {
                current.acquire_time.clone().or(Some(now.clone()))
            } else {
                Some(now.clone())
            },
            renew_time: Some(now),
            lease_transitions: Some(if ours { transitions } else { transitions + 1 }),
            ..current
        }
    }

    /// A Lease as read: restarts the expiry clock when its spec changed.
    fn observe(&mut self, lease: Lease, at: Instant) {
        if self.lease.as_ref().map(|l| &l.spec) != Some(&lease.spec) {
            self.observed_at = at;
        }
        self.lease = Some(lease);
    }

    /// A Lease this replica wrote: held from the start of the attempt.
    fn wrote(&mut self, lease: Lease, since: Instant) -> Attempt {
        self.observed_at = since;
        self.lease = Some(lease);
        Attempt::Held { since }
    }

    /// One attempt to take or renew the Lease.
    async fn attempt(&mut self, leading: bool) -> Result<Attempt, kube::Error> {
        let since = Instant::now();
        let name = self.settings.name.clone();
        let params = PostParams::default();
        // The leader renews the Lease it last wrote in one request; if
        // anything else wrote it meanwhile, it reads it first.
        if let Some(mut lease) = self
            .lease
            .clone()
            .filter(|l| leading && holder(l) == Some(self.settings.identity.as_str()))
        {
            lease.spec = Some(self.held(lease.spec.as_ref()));
            match self.api.replace(&name, &params, &lease).await {
                Ok(written) => return Ok(self.wrote(written, since)),
                Err(err) if is_conflict(&err) || is_not_found(&err) => {}
                Err(err) => return Err(err),
            }
        }
        let Some(lease) = self.api.get_opt(&name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(name),
                    namespace: Some(self.settings.namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.held(None)),
            };
            return match self.api.create(&params, &lease).await {
                Ok(written) => Ok(self.wrote(written, since)),
                Err(err) if is_conflict(&err) => Ok(Attempt::Raced),
                Err(err) => Err(err),
            };
        };
        let now = Instant::now();
        self.observe(lease.clone(), now);
        let judgement = judge(
            lease.spec.as_ref(),
            &self.settings.identity,
            self.observed_at,
            now,
        );
        if let Judgement::Wait { holder, until } = judgement {
            return Ok(Attempt::Other { holder, until });
        }
        let mut lease = lease;
        lease.spec = Some(self.held(lease.spec.as_ref()));
        match self.api.replace(&name, &params, &lease).await {
            Ok(written) => Ok(self.wrote(written, since)),
            Err(err) if is_conflict(&err) => Ok(Attempt::Raced),
            Err(err) => Err(err),
        }
    }

    /// An error no retry can fix: the namespace is missing or the API
    /// server forbids the Lease.
    fn fatal(&self, err: &kube::Error) -> Option<Error> {
        let status = status(err)?;
        let namespace = self.settings.namespace.clone();
        let name = self.settings.name.clone();
        if status.code == 403 {
            return Some(Error::Forbidden {
                namespace,
                name,
                message: status.message.clone(),
            });
        }
        let namespace_missing = status.code == 404
            && status
                .details
                .as_ref()
                .is_some_and(|d| d.kind == "namespaces");
        namespace_missing.then_some(Error::NamespaceMissing { namespace, name })
    }

    /// Logs a retryable failure once per distinct message.
    fn failed(&mut self, what: &str, error: String) {
        if self.last_error.as_deref() == Some(error.as_str()) {
            tracing::debug!(%error, "{what}");
        } else {
            tracing::warn!(%error, lease = %self.settings.name, namespace = %self.settings.namespace, "{what}");
            self.last_error = Some(error);
        }
    }

    /// Waits until this replica holds the Lease; returns when the write
    /// that took it was started.
    async fn acquire(&mut self, leadership: &Leadership) -> Result<Instant, Error> {
        let retry = self.settings.retry_period;
        let mut leader_seen: Option<String> = None;
        loop {
            let started = Instant::now();
            // A hung call must not keep a candidate waiting forever.
            let attempt = tokio::time::timeout(self.settings.renew_deadline, self.attempt(false));
            let next = match attempt.await {
                Ok(Ok(Attempt::Held { since })) => return Ok(since),
                Ok(Ok(Attempt::Other { holder, until })) => {
                    self.last_error = None;
                    leadership.set_standing_by(true);
                    if leader_seen.as_deref() != Some(holder.as_str()) {
                        tracing::info!(%holder, lease = %self.settings.name, "standing by: another replica leads");
                        leader_seen = Some(holder);
                    }
                    // Look again at the retry period, or as soon as it can
                    // have expired.
                    (started + retry).min(until)
                }
                Ok(Ok(Attempt::Raced)) => started + retry,
                Ok(Err(err)) => {
                    if let Some(fatal) = self.fatal(&err) {
                        return Err(fatal);
                    }
                    self.failed("reading or taking the leader Lease failed", err.to_string());
                    started + retry
                }
                Err(_) => {
                    let error = format!("no answer within {:?}", self.settings.renew_deadline);
                    self.failed("reading or taking the leader Lease failed", error);
                    started + retry
                }
            };
            tokio::time::sleep_until(next).await;
        }
    }

    /// Renews the Lease taken at `since` until it cannot; returns why.
    async fn keep(&mut self, since: Instant) -> Error {
        let renew_deadline = self.settings.renew_deadline;
        let mut deadline = since + renew_deadline;
        let mut next = since + self.settings.retry_period;
        let why = loop {
            tokio::time::sleep_until(next.min(deadline)).await;
            let started = Instant::now();
            if started >= deadline {
                break format!(
                    "not renewed within the renew deadline of {renew_deadline:?}: {}",
                    self.last_error.as_deref().unwrap_or("no answer")
                );
            }
            match tokio::time::timeout_at(deadline, self.attempt(true)).await {
                Err(_) => {
                    break format!("renewing it took past the renew deadline of {renew_deadline:?}")
                }
                Ok(Ok(Attempt::Held { since })) => {
                    deadline = since + renew_deadline;
                    next = since + self.settings.retry_period;
                    self.last_error = None;
                }
                Ok(Ok(Attempt::Other { holder, .. })) => break format!("{holder} holds it"),
                Ok(Ok(Attempt::Raced)) => next = started + self.settings.retry_period,
                Ok(Err(err)) => {
                    match self.fatal(&err) {
                        Some(Error::NamespaceMissing { namespace, .. }) => {
                            break format!("its namespace {namespace:?} no longer exists")
                        }
                        Some(Error::Forbidden { message, .. }) => {
                            break format!("the API server forbids it: {message}")
                        }
                        _ => {}
                    }
                    self.failed("renewing the leader Lease failed", err.to_string());
                    next = started + self.settings.retry_period;
                }
            }
        };
        Error::Lost {
            namespace: self.settings.namespace.clone(),
            name: self.settings.name.clone(),
            why,
        }
    }

    /// Gives the Lease up after the work ended, so another replica takes
    /// over at its next look instead of after expiry.
    async fn release(&mut self) -> Result<(), kube::Error> {
        for _ in 0..2 {
            let Some(mut lease) = self.lease.clone() else {
                return Ok(());
            };
            if holder(&lease) != Some(self.settings.identity.as_str()) {
                return Ok(());
            }
            if let Some(spec) = lease.spec.as_mut() {
                spec.holder_identity = None;
                spec.lease_duration_seconds = Some(1);
                spec.renew_time = Some(MicroTime(Timestamp::now()));
            }
            match self
                .api
                .replace(&self.settings.name, &PostParams::default(), &lease)
                .await
            {
                Ok(written) => {
                    self.lease = Some(written);
                    return Ok(());
                }
                // A renewal dropped in flight may have landed: read again.
                Err(err) if is_conflict(&err) => {
                    self.lease = self.api.get_opt(&self.settings.name).await?;
                }
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

/// Waits until this replica holds the Lease, then runs `work` while renewing
/// it.
///
/// Returns `Ok` when `work` ends (after releasing the Lease). Returns an
/// error at once, without waiting, when the settings are invalid, the
/// Lease's namespace does not exist or the API server forbids the Lease;
/// and [`Error::Lost`] when the Lease could not be renewed within the renew
/// deadline (or another replica holds it): `work` has been dropped by then,
/// before the Lease can expire for any other replica, and the caller should
/// exit (a Deployment restarts it as a new candidate).
pub async fn run_as_leader<F: Future<Output = ()>>(
    client: kube::Client,
    settings: LeaseSettings,
    leadership: &Leadership,
    work: F,
) -> Result<(), Error> {
    settings.validate()?;
    let mut elector = Elector::new(client, settings);
    let since = elector.acquire(leadership).await?;
    leadership.set_leader(true);
    tracing::info!(identity = %elector.settings.identity, lease = %elector.settings.name, "became leader");
    let lost = {
        let keep = elector.keep(since);
        tokio::select! {
            () = work => None,
            lost = keep => Some(lost),
        }
        // `work` is dropped here when the Lease was lost.
    };
    leadership.set_leader(false);
    if let Some(lost) = lost {
        return Err(lost);
    }
    let deadline = elector.settings.renew_deadline;
    match tokio::time::timeout(deadline, elector.release()).await {
        Ok(Ok(())) => tracing::info!(lease = %elector.settings.name, "released the leader Lease"),
        Ok(Err(err)) => {
            tracing::warn!(error = %err, "releasing the leader Lease failed; it expires instead")
        }
        Err(_) => tracing::warn!("releasing the leader Lease took too long; it expires instead"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_by(holder: &str, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(seconds),
            // Far in the past and far in the future: neither matters.
            renew_time: Some(MicroTime(Timestamp::UNIX_EPOCH)),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn judged_by_when_seen_to_change_not_by_renew_time() {
        let seen = Instant::now();
        let later = |s| seen + Duration::from_secs(s);
        assert_eq!(judge(None, "me", seen, seen), Judgement::Take);
        assert_eq!(
            judge(Some(&LeaseSpec::default()), "me", seen, seen),
            Judgement::Take
        );
        let released = LeaseSpec {
            holder_identity: Some(String::new()),
            ..held_by("x", 15)
        };
        assert_eq!(judge(Some(&released), "me", seen, seen), Judgement::Take);
        // Ours is renewed however old.
        assert_eq!(
            judge(Some(&held_by("me", 15)), "me", seen, later(100)),
            Judgement::Renew
        );
        // A renewTime of 1970 does not make another's Lease expired: only
        // 15 s without a change seen here does.
        let other = held_by("other", 15);
        assert_eq!(
            judge(Some(&other), "me", seen, later(14)),
            Judgement::Wait {
                holder: "other".into(),
                until: later(15)
            }
        );
        assert_eq!(judge(Some(&other), "me", seen, later(15)), Judgement::Take);
        // Nor does a renewTime in the future keep it alive.
        let future = LeaseSpec {
            renew_time: Some(MicroTime(
                Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_hours(24),
            )),
            ..held_by("other", 15)
        };
        assert_eq!(judge(Some(&future), "me", seen, later(16)), Judgement::Take);
        let no_duration = LeaseSpec {
            lease_duration_seconds: None,
            ..held_by("other", 15)
        };
        assert_eq!(judge(Some(&no_duration), "me", seen, seen), Judgement::Take);
    }

    #[test]
    fn settings_are_checked_naming_the_setting() {
        let ok = LeaseSettings::new("ns", "lease", "me");
        ok.validate().unwrap();
        let message = |s: LeaseSettings| s.validate().unwrap_err().to_string();
        let text = message(LeaseSettings {
            renew_deadline: Duration::from_secs(15),
            ..ok.clone()
        });
        assert!(
            text.contains("renew deadline (15s) must be shorter than the lease duration"),
            "{text}"
        );
        let text = message(LeaseSettings {
            lease_duration: Duration::from_millis(2500),
            ..ok.clone()
        });
        assert!(text.contains("whole number of seconds"), "{text}");
        let text = message(LeaseSettings {
            retry_period: Duration::from_secs(9),
            ..ok.clone()
        });
        assert!(text.contains("retry period (9s)"), "{text}");
        let text = message(LeaseSettings {
            namespace: String::new(),
            ..ok
        });
        assert!(
            text.contains("POD_NAMESPACE or --lease-namespace"),
            "{text}"
        );
    }

    #[test]
    fn elects_where_crossplane_runs_it_and_not_from_a_kubeconfig() {
        // As the README's walkthrough runs it: no flag, no POD_NAMESPACE.
        assert_eq!(lease_namespace(None, None).unwrap(), None);
        // As Crossplane's package manager runs it: POD_NAMESPACE only.
        assert_eq!(
            lease_namespace(None, Some("crossplane-system")).unwrap(),
            Some("crossplane-system".into())
        );
        assert_eq!(
            lease_namespace(Some(false), Some("crossplane-system")).unwrap(),
            None
        );
        assert_eq!(
            lease_namespace(Some(true), Some("ops")).unwrap(),
            Some("ops".into())
        );
        let text = lease_namespace(Some(true), Some(" "))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("--leader-election needs the namespace"),
            "{text}"
        );
        assert!(lease_namespace(Some(true), None).is_err());
    }

    /// The harness has no RBAC, so the API server's answer to a replica
    /// without rights on leases is played by a stand-in: the Status a real
    /// API server sends for an RBAC denial.
    #[tokio::test]
    async fn a_forbidden_lease_fails_at_once() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let denial = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "leases.coordination.k8s.io \"provider-litellm\" is forbidden: User \"system:serviceaccount:crossplane-system:provider-litellm\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"crossplane-system\"",
            "reason": "Forbidden",
            "details": {"name": "provider-litellm", "group": "coordination.k8s.io", "kind": "leases"},
            "code": 403,
        });
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = requests.clone();
        let router = axum::Router::new().fallback(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            let denial = denial.to_string();
            async move {
                (
                    axum::http::StatusCode::FORBIDDEN,
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    denial,
                )
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move { axum::serve(listener, router).await });
        let config = kube::Config::new(url.parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        let leadership = Leadership::default();
        let started = std::time::Instant::now();
        let error = run_as_leader(
            client,
            LeaseSettings::new("crossplane-system", "provider-litellm", "me"),
            &leadership,
            async { panic!("no work without the Lease") },
        )
        .await
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "no retries");
        assert_eq!(requests.load(Ordering::SeqCst), 1, "one request, no retry");
        let text = error.to_string();
        assert!(matches!(error, Error::Forbidden { .. }), "{text}");
        assert!(
            text.contains("forbids the Lease crossplane-system/provider-litellm")
                && text.contains("get, create and update on leases.coordination.k8s.io")
                && text.contains("cannot get resource"),
            "{text}"
        );
        assert!(!leadership.is_leader() && !leadership.is_standing_by());
        server.abort();
    }

    #[test]
    fn leadership_gauge() {
        let leadership = Leadership::default();
        let mut registry = Registry::default();
        leadership.register(&mut registry);
        let encode = |registry: &Registry| {
            let mut text = String::new();
            prometheus_client::encoding::text::encode(&mut text, registry).unwrap();
            text
        };
        assert!(encode(&registry).contains("provider_litellm_leader 0"));
        leadership.set_leader(true);
        assert!(leadership.is_leader());
        assert!(encode(&registry).contains("provider_litellm_leader 1"));
    }
}
