//! Watch events of the provider's own writes ("echoes") that need no
//! reconciliation: the reconciliation that wrote goes on with what it wrote
//! and requeues itself, so the event would only read LiteLLM once more,
//! which crossplane-runtime's reconciler does not do either. Used for the
//! managed resources ([`crate::provider::watch::written::Written`]) and the connection
//! Secrets ([`crate::provider::watch::cache::Kube::expect_secret_echo`]).
//!
//! Only the event of the write itself is taken for its echo: announced
//! before the write (its event may arrive before its answer), pinned to the
//! written version once the answer is in, and forgotten at the next event of
//! the object whatever it is, so a later change by anyone else wakes as
//! before. After a missed echo (a relist brings only the latest version)
//! nothing is taken for it any more.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

/// The version of an expected echo.
#[derive(Clone, Copy)]
enum Echo {
    /// The next event after this version (the object's version before the
    /// write; 0 for an object the write creates).
    After(u64),
    /// This version (the write's answer).
    Exactly(u64),
}

/// Expected echoes by object. Bounded: past `LIMIT` expectations (events
/// lost for many objects at once) all are dropped, which only wakes their
/// objects once more.
pub struct Echoes<Id> {
    expected: Mutex<HashMap<Id, Echo>>,
}

impl<Id> Default for Echoes<Id> {
    fn default() -> Self {
        Self {
            expected: Mutex::new(HashMap::new()),
        }
    }
}

const LIMIT: usize = 1 << 16;

impl<Id: Hash + Eq> Echoes<Id> {
    fn lock(&self) -> MutexGuard<'_, HashMap<Id, Echo>> {
        self.expected.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The provider is about to write `id`, now at version `before`.
    pub fn expect(&self, id: Id, before: u64) {
        let mut expected = self.lock();
        if expected.len() >= LIMIT {
            expected.clear();
        }
        expected.insert(id, Echo::After(before));
    }

    /// The write [`Self::expect`] announced answered `written`, its version
    /// (`None`: it failed, and no echo comes).
    pub fn settle(&self, id: &Id, written: Option<u64>) {
        let mut expected = self.lock();
        match written {
            // Unless the event came first and took it already.
            Some(version) => {
                if let Some(echo) = expected.get_mut(id) {
                    *echo = Echo::Exactly(version);
                }
            }
            None => {
                expected.remove(id);
            }
        }
    }

    /// Whether the event of `id` at version `seen` is an echo; any event
    /// at or past the expectation settles it.
    pub fn is_echo(&self, id: &Id, seen: u64) -> bool {
        let mut expected = self.lock();
        let echo = match expected.get(id).copied() {
            Some(Echo::After(before)) if seen > before => true,
            Some(Echo::Exactly(version)) if seen >= version => seen == version,
            _ => return false,
        };
        expected.remove(id);
        echo
    }

    /// `id` is gone: nothing of it is expected any more.
    pub fn forget(&self, id: &Id) {
        self.lock().remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The order of events and answers is the test of `Written` in
    // `reconciler`, which keeps its echoes here; what only this type does:

    #[test]
    fn a_deleted_object_expects_nothing() {
        let echoes = Echoes::default();
        echoes.expect("b", 0);
        echoes.forget(&"b");
        assert!(!echoes.is_echo(&"b", 1));
    }

    #[test]
    fn past_the_bound_expectations_are_dropped_not_kept() {
        let echoes = Echoes::default();
        for n in 0..LIMIT {
            echoes.expect(n, 0);
        }
        echoes.expect(LIMIT, 0);
        assert!(
            !echoes.is_echo(&0, 1),
            "dropped: the object wakes once more"
        );
        assert!(echoes.is_echo(&LIMIT, 1));
        assert_eq!(echoes.lock().len(), 0);
    }
}
