//! What `/healthz` and `/readyz` say: the controllers are alive until their
//! future ends (or is dropped); they are ready once every controller's
//! reflector cache has synced.
//!
//! With leader election, a replica standing by (it read the Lease and found
//! another replica leading) runs no controllers and so has no cache to
//! sync; it is ready, since it can take over. Were it not, a rolling update
//! of a Deployment with leader election could never finish: the new pod
//! cannot lead until the old one is gone, and the old one goes only when
//! the new one is ready. Whether a replica leads is
//! `provider_litellm_leader` on `/metrics`.

use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::provider::runtime::leader::Leadership;
use crate::provider::watch::cache::Caches;
#[cfg(test)]
use crate::provider::watch::cache::Synced;

/// Where the controllers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not started (a candidate waiting for the Lease, or not yet there).
    Starting,
    /// Running; some cache has not synced yet.
    Syncing,
    /// Running with every cache synced.
    Synced,
    /// Ended or dropped: this process reconciles no more.
    Stopped,
}

impl Phase {
    fn from_u8(value: u8) -> Self {
        match value {
            0 => Self::Starting,
            1 => Self::Syncing,
            2 => Self::Synced,
            _ => Self::Stopped,
        }
    }
}

/// The provider's liveness and readiness. Cloning shares it.
#[derive(Clone, Debug)]
pub struct Health {
    phase: Arc<AtomicU8>,
    leadership: Option<Leadership>,
}

impl Default for Health {
    fn default() -> Self {
        Self::new()
    }
}

impl Health {
    /// Without leader election: ready only once the caches synced.
    pub fn new() -> Self {
        Self {
            phase: Arc::new(AtomicU8::new(Phase::Starting as u8)),
            leadership: None,
        }
    }

    /// With leader election: a replica standing by is ready too.
    pub fn with_leadership(leadership: Leadership) -> Self {
        Self {
            leadership: Some(leadership),
            ..Self::new()
        }
    }

    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::SeqCst))
    }

    /// `/healthz`: false once the controllers have stopped.
    pub fn live(&self) -> bool {
        self.phase() != Phase::Stopped
    }

    /// `/readyz`: the caches have synced, or (with leader election) this
    /// replica stands by.
    pub fn ready(&self) -> bool {
        match self.phase() {
            Phase::Synced => true,
            Phase::Starting => self.leadership.as_ref().is_some_and(|l| l.is_standing_by()),
            Phase::Syncing | Phase::Stopped => false,
        }
    }

    /// Why `/readyz` says what it says.
    pub fn describe(&self) -> &'static str {
        match self.phase() {
            Phase::Synced => "ok: caches synced",
            Phase::Starting if self.ready() => "ok: standing by, another replica leads",
            Phase::Starting => "not ready: controllers not started",
            Phase::Syncing => "not ready: caches not synced",
            Phase::Stopped => "controllers stopped",
        }
    }

    /// Runs the controllers' future `work`, tracking `caches`: the phase is
    /// [`Phase::Syncing`] until every cache is ready, then
    /// [`Phase::Synced`], and [`Phase::Stopped`] once `work` ends or this
    /// future is dropped (leadership lost).
    pub fn run<W: Future<Output = ()>>(&self, work: W, caches: Caches) -> impl Future<Output = ()> {
        let health = self.clone();
        async move {
            let _stopped = StopOnDrop(health.clone());
            health.phase.store(Phase::Syncing as u8, Ordering::SeqCst);
            let synced = async {
                caches.synced().await;
                let _ = health.phase.compare_exchange(
                    Phase::Syncing as u8,
                    Phase::Synced as u8,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                std::future::pending::<()>().await
            };
            tokio::select! {
                () = work => {}
                () = synced => {}
            }
        }
    }
}

struct StopOnDrop(Health);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.phase.store(Phase::Stopped as u8, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn phases() {
        let health = Health::new();
        assert!(health.live() && !health.ready());
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let synced = Synced::default();
        let mut caches = Caches::default();
        caches.add(synced.clone());
        let task = tokio::spawn(health.run(
            async {
                let _ = released.await;
            },
            caches,
        ));
        while health.phase() != Phase::Syncing {
            tokio::task::yield_now().await;
        }
        assert!(health.live() && !health.ready());
        assert_eq!(health.describe(), "not ready: caches not synced");
        synced.set();
        while health.phase() != Phase::Synced {
            tokio::task::yield_now().await;
        }
        assert!(health.live() && health.ready());
        release.send(()).unwrap();
        task.await.unwrap();
        assert_eq!(health.phase(), Phase::Stopped);
        assert!(!health.live() && !health.ready());
    }

    #[tokio::test]
    async fn dropped_work_is_stopped_and_a_standby_is_ready() {
        let leadership = Leadership::default();
        let health = Health::with_leadership(leadership.clone());
        assert!(!health.ready(), "a candidate that has not read the Lease");
        leadership.set_standing_by(true);
        assert!(health.ready() && health.live());
        leadership.set_leader(true);
        let task = tokio::spawn(health.run(std::future::pending(), Caches::default()));
        while health.phase() != Phase::Synced {
            tokio::task::yield_now().await;
        }
        task.abort();
        let _ = task.await;
        assert_eq!(health.phase(), Phase::Stopped);
        assert!(!health.live());
    }
}
