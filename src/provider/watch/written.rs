//! What the provider last wrote to each managed resource, for the
//! reconciler to ask before it acts on a cached copy ([`Written::behind`])
//! and for the controllers to ask of a watch event ([`Written::is_echo`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::provider::watch::echo::Echoes;

/// The resourceVersion of each resource (by uid) after the provider's own
/// last write to it, until the watch cache has caught up: a reconciliation
/// that starts from an older cached copy would act on what the provider has
/// already changed (and its writes, made with that version as a
/// precondition, would only conflict). controller-runtime controllers keep
/// such "expectations" for the same reason.
///
/// Beside them, the revisions whose watch events need no reconciliation
/// ("echoes"): an external name recorded, or a spec late-initialized, is
/// acted on by the reconciliation that wrote it (its status carries the new
/// generation), so the event of that write would only poll LiteLLM again,
/// which crossplane-runtime's reconciler does not do either.
#[derive(Default)]
pub struct Written {
    last: Mutex<HashMap<String, (u64, std::time::Instant)>>,
    echoes: Echoes<String>,
}

/// A resourceVersion as a number (the API server's are etcd revisions).
fn revision(meta: &kube::api::ObjectMeta) -> Option<u64> {
    meta.resource_version.as_deref()?.parse().ok()
}

/// After this long, a cache that has not caught up is trusted anyway (the
/// object may have gone): nothing waits forever on an expectation.
const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(30);

impl Written {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u64, std::time::Instant)>> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The provider wrote the resource; `meta` is what the API server
    /// answered.
    pub fn wrote(&self, meta: &kube::api::ObjectMeta) {
        let (Some(uid), Some(revision)) = (meta.uid.as_ref(), revision(meta)) else {
            return;
        };
        let mut written = self.lock();
        let entry = written
            .entry(uid.clone())
            .or_insert((revision, std::time::Instant::now()));
        if revision >= entry.0 {
            *entry = (revision, std::time::Instant::now());
        }
    }

    /// The provider is about to write the resource, which is at `meta`'s
    /// revision, with that revision as precondition; the reconciliation
    /// goes on to act on what it writes, so the write's watch event wakes
    /// no reconciliation. The precondition makes that event the next one of
    /// the object. Should the write fail, [`Self::settle_echo`] forgets it
    /// (an event of someone else's write taken for it meanwhile is harmless:
    /// that write made this one conflict, and a conflict requeues).
    pub fn expect_echo(&self, meta: &kube::api::ObjectMeta) {
        if let (Some(uid), Some(revision)) = (meta.uid.as_ref(), revision(meta)) {
            self.echoes.expect(uid.clone(), revision);
        }
    }

    /// The write [`Self::expect_echo`] announced answered `written`: its
    /// revision (`None`: it failed, and no echo comes).
    pub fn settle_echo(&self, uid: Option<&String>, written: Option<&kube::api::ObjectMeta>) {
        if let Some(uid) = uid {
            self.echoes.settle(uid, written.and_then(revision));
        }
    }

    /// Whether `meta`, from a watch event, is an echo (see [`Echoes`]).
    pub fn is_echo(&self, meta: &kube::api::ObjectMeta) -> bool {
        match (meta.uid.as_ref(), revision(meta)) {
            (Some(uid), Some(seen)) => self.echoes.is_echo(uid, seen),
            _ => false,
        }
    }

    /// Whether `meta` (from the cache) is older than the provider's own
    /// last write.
    pub fn behind(&self, meta: &kube::api::ObjectMeta) -> bool {
        let Some(uid) = meta.uid.as_ref() else {
            return false;
        };
        let mut written = self.lock();
        let Some((expected, at)) = written.get(uid).copied() else {
            return false;
        };
        let caught_up = revision(meta).is_none_or(|seen| seen >= expected);
        if caught_up || at.elapsed() > EXPECTATION_TIMEOUT {
            written.remove(uid);
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_copy_older_than_the_providers_own_write_is_behind() {
        let meta = |uid: &str, rv: &str| kube::api::ObjectMeta {
            uid: Some(uid.into()),
            resource_version: Some(rv.into()),
            ..Default::default()
        };
        let written = Written::default();
        assert!(!written.behind(&meta("a", "5")), "nothing written yet");
        written.wrote(&meta("a", "7"));
        assert!(written.behind(&meta("a", "5")));
        assert!(!written.behind(&meta("b", "5")), "another object");
        // An older answer does not lower the expectation.
        written.wrote(&meta("a", "6"));
        assert!(written.behind(&meta("a", "6")));
        // Caught up: forgotten, so a later older copy (a relist) is taken.
        assert!(!written.behind(&meta("a", "7")));
        assert!(!written.behind(&meta("a", "5")));
        // Versions that are no numbers are never behind.
        written.wrote(&meta("c", "9"));
        assert!(!written.behind(&meta("c", "x")));
    }

    #[test]
    fn the_next_event_after_an_announced_write_is_its_echo_and_only_once() {
        let meta = |uid: &str, rv: &str| kube::api::ObjectMeta {
            uid: Some(uid.into()),
            resource_version: Some(rv.into()),
            ..Default::default()
        };
        let uid = Some("a".to_owned());
        let written = Written::default();
        assert!(!written.is_echo(&meta("a", "7")), "nothing announced");
        // The event comes before the write's answer.
        written.expect_echo(&meta("a", "5"));
        assert!(
            !written.is_echo(&meta("a", "5")),
            "an event before the write"
        );
        assert!(!written.is_echo(&meta("b", "7")), "another object");
        assert!(written.is_echo(&meta("a", "7")));
        written.settle_echo(uid.as_ref(), Some(&meta("a", "7")));
        assert!(!written.is_echo(&meta("a", "7")), "an echo is heard once");
        // The answer comes first: then only that revision is the echo.
        written.expect_echo(&meta("a", "7"));
        written.settle_echo(uid.as_ref(), Some(&meta("a", "9")));
        assert!(!written.is_echo(&meta("a", "8")), "an older revision");
        assert!(written.is_echo(&meta("a", "9")));
        // A missed echo (a relist) is settled by the next event, which is
        // not one.
        written.expect_echo(&meta("a", "9"));
        written.settle_echo(uid.as_ref(), Some(&meta("a", "10")));
        assert!(!written.is_echo(&meta("a", "12")));
        assert!(!written.is_echo(&meta("a", "10")));
        // A failed write has no echo.
        written.expect_echo(&meta("a", "12"));
        written.settle_echo(uid.as_ref(), None);
        assert!(!written.is_echo(&meta("a", "13")));
    }
}
