//! Watch events of the provider's own writes ("echoes") that need no
//! reconciliation: the reconciliation that wrote goes on with what it wrote
//! and requeues itself, so the event would only read LiteLLM once more,
//! which crossplane-runtime's reconciler does not do either. Used for the
//! managed resources ([`super::reconciler::Written`]) and the connection
//! Secrets ([`super::cache::Kube::expect_secret_echo`]).
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

    #[test]
    fn only_the_written_version_is_an_echo_and_any_event_settles_it() {
        let echoes = Echoes::default();
        // The event before the answer.
        echoes.expect("a", 5);
        assert!(!echoes.is_echo(&"a", 5), "the version before the write");
        assert!(echoes.is_echo(&"a", 6));
        echoes.settle(&"a", Some(6));
        assert!(!echoes.is_echo(&"a", 7), "someone else's write after");
        // The answer before the event.
        echoes.expect("a", 7);
        echoes.settle(&"a", Some(9));
        assert!(!echoes.is_echo(&"a", 8), "an older event is no echo");
        assert!(echoes.is_echo(&"a", 9));
        // A later event than the write's: the echo was missed.
        echoes.expect("a", 9);
        echoes.settle(&"a", Some(10));
        assert!(!echoes.is_echo(&"a", 11));
        assert!(!echoes.is_echo(&"a", 10), "settled by the later event");
        // A failed write expects nothing.
        echoes.expect("a", 12);
        echoes.settle(&"a", None);
        assert!(!echoes.is_echo(&"a", 13));
        // A deleted object neither.
        echoes.expect("b", 0);
        echoes.forget(&"b");
        assert!(!echoes.is_echo(&"b", 1));
    }
}
