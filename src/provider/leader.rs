//! Leader election over a `coordination.k8s.io/v1` Lease, so several
//! replicas can run and only one reconciles.
//!
//! Every write is a replace with the Lease's `resourceVersion`, so two
//! replicas racing for an expired Lease cannot both win: the loser gets a
//! 409 and keeps waiting.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ObjectMeta, PostParams};

/// Where the Lease lives and how it is held.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica (the pod name in a cluster).
    pub identity: String,
    /// How long a holder that stopped renewing keeps the Lease.
    pub duration: Duration,
    /// How often the holder renews; well below `duration`.
    pub renew_every: Duration,
}

/// What this replica may do with the Lease as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Free or expired: take it.
    Acquire,
    /// Ours: renew it.
    Renew,
    /// Held by someone else until it expires.
    Wait,
}

/// Pure decision from the Lease's spec.
pub fn decide(spec: Option<&LeaseSpec>, me: &str, now: Timestamp) -> Decision {
    let Some(spec) = spec else {
        return Decision::Acquire;
    };
    match spec.holder_identity.as_deref() {
        None | Some("") => Decision::Acquire,
        Some(holder) if holder == me => Decision::Renew,
        Some(_) => {
            let seconds = i64::from(spec.lease_duration_seconds.unwrap_or(0));
            let expired = spec
                .renew_time
                .as_ref()
                .is_none_or(|renewed| renewed.0 + SignedDuration::from_secs(seconds) < now);
            if expired {
                Decision::Acquire
            } else {
                Decision::Wait
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("lost the leader lease {namespace}/{name}")]
    Lost { namespace: String, name: String },
    #[error("leader lease: {0}")]
    Kube(#[from] kube::Error),
}

fn is_conflict(err: &kube::Error) -> bool {
    matches!(err, kube::Error::Api(status) if status.code == 409)
}

fn spec(
    settings: &LeaseSettings,
    now: Timestamp,
    acquired: Timestamp,
    transitions: i32,
) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(settings.identity.clone()),
        lease_duration_seconds: Some(
            i32::try_from(settings.duration.as_secs()).unwrap_or(i32::MAX),
        ),
        acquire_time: Some(MicroTime(acquired)),
        renew_time: Some(MicroTime(now)),
        lease_transitions: Some(transitions),
        ..LeaseSpec::default()
    }
}

/// One attempt to acquire or renew; `true` when this replica holds the
/// Lease afterwards.
pub async fn try_acquire(api: &Api<Lease>, settings: &LeaseSettings) -> Result<bool, kube::Error> {
    let now = Timestamp::now();
    let Some(mut lease) = api.get_opt(&settings.name).await? else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(settings.name.clone()),
                namespace: Some(settings.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(spec(settings, now, now, 0)),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(err) if is_conflict(&err) => Ok(false),
            Err(err) => Err(err),
        };
    };
    let current = lease.spec.clone().unwrap_or_default();
    let transitions = current.lease_transitions.unwrap_or(0);
    lease.spec = Some(match decide(Some(&current), &settings.identity, now) {
        Decision::Wait => return Ok(false),
        Decision::Renew => spec(
            settings,
            now,
            current.acquire_time.map_or(now, |t| t.0),
            transitions,
        ),
        Decision::Acquire => spec(settings, now, now, transitions + 1),
    });
    match api
        .replace(&settings.name, &PostParams::default(), &lease)
        .await
    {
        Ok(_) => Ok(true),
        Err(err) if is_conflict(&err) => Ok(false),
        Err(err) => Err(err),
    }
}

/// Clears the holder so another replica takes over at once instead of
/// waiting for expiry.
async fn release(api: &Api<Lease>, settings: &LeaseSettings) -> Result<(), kube::Error> {
    if let Some(mut lease) = api.get_opt(&settings.name).await? {
        if let Some(spec) = lease
            .spec
            .as_mut()
            .filter(|s| s.holder_identity.as_deref() == Some(&settings.identity))
        {
            spec.holder_identity = None;
            api.replace(&settings.name, &PostParams::default(), &lease)
                .await?;
        }
    }
    Ok(())
}

/// Waits until this replica holds the Lease, then runs `work` while renewing
/// it. Returns when `work` ends (and releases the Lease), or with
/// [`Error::Lost`] when renewal failed for a whole lease duration: the
/// caller must then stop, since another replica may be reconciling.
pub async fn run_as_leader<F: Future<Output = ()>>(
    client: kube::Client,
    settings: LeaseSettings,
    work: F,
) -> Result<(), Error> {
    let api: Api<Lease> = Api::namespaced(client, &settings.namespace);
    loop {
        match try_acquire(&api, &settings).await {
            Ok(true) => break,
            Ok(false) => {}
            Err(err) => tracing::warn!(error = %err, "acquiring the leader lease failed"),
        }
        tokio::time::sleep(settings.renew_every).await;
    }
    tracing::info!(identity = %settings.identity, lease = %settings.name, "became leader");
    let renew = async {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(settings.renew_every).await;
            match try_acquire(&api, &settings).await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => break,
                Err(err) => tracing::warn!(error = %err, "renewing the leader lease failed"),
            }
            if last_renewal.elapsed() >= settings.duration {
                break;
            }
        }
        Error::Lost {
            namespace: settings.namespace.clone(),
            name: settings.name.clone(),
        }
    };
    tokio::select! {
        () = work => {
            release(&api, &settings).await?;
            Ok(())
        }
        lost = renew => Err(lost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held_by(holder: &str, renewed: Timestamp) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(renewed)),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn decisions() {
        let now = Timestamp::now();
        let fresh = now - SignedDuration::from_secs(5);
        let stale = now - SignedDuration::from_secs(16);
        assert_eq!(decide(None, "me", now), Decision::Acquire);
        assert_eq!(
            decide(Some(&LeaseSpec::default()), "me", now),
            Decision::Acquire
        );
        assert_eq!(
            decide(Some(&held_by("me", stale)), "me", now),
            Decision::Renew
        );
        assert_eq!(
            decide(Some(&held_by("other", fresh)), "me", now),
            Decision::Wait
        );
        assert_eq!(
            decide(Some(&held_by("other", stale)), "me", now),
            Decision::Acquire
        );
        let never_renewed = LeaseSpec {
            renew_time: None,
            ..held_by("other", now)
        };
        assert_eq!(decide(Some(&never_renewed), "me", now), Decision::Acquire);
    }
}
