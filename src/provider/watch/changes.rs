//! What changed where in the watched objects since a moment: the ground on
//! which a poll may skip its reconciliation ([`crate::provider::watch::polls`]).
//!
//! A reconciliation reads Kubernetes only through the shared caches
//! ([`crate::provider::watch::cache`]), and of a resource's own namespace (its references,
//! its connection Secret, the namespace's labels) and of its instance's
//! (the `LiteLLMInstance`, the master-key Secret) only. So when no watched
//! object in either namespace has changed since a reconciliation began,
//! another one would read of Kubernetes exactly what it read. Every watch
//! event is counted here once its cache holds it: by namespace (a
//! `Namespace` object counts for the namespace it is), and for every
//! namespace at once where a cache may have changed without saying where
//! (a watch that listed everything again drops what is gone without an
//! event for it; an object of no namespace).
//!
//! This is coarse on purpose: any change in a namespace counts for every
//! resource in it, the provider's own writes included, so what it can miss
//! is nothing, and what it costs is a full reconciliation now and then.
//! Namespaces are told apart by a keyed hash of their names (this
//! process's random keys): a collision, which no name can be chosen to
//! cause, would only count one namespace's change for the other too.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use kube::runtime::watcher::Event;
use kube::Resource;

/// The namespaces [`Changes`] tells apart at most (16 bytes each); past
/// them it forgets them all, which counts as a change everywhere.
const MAX_NAMESPACES: usize = 65_536;

/// The counts of one process: every cache feeds the same one.
pub fn changes() -> &'static Changes {
    static CHANGES: OnceLock<Changes> = OnceLock::new();
    CHANGES.get_or_init(Changes::default)
}

#[derive(Default)]
pub struct Changes {
    /// Counts every change: the moment of the latest.
    now: AtomicU64,
    /// The moment of the latest change that counts for every namespace.
    everywhere: AtomicU64,
    /// By namespace (hashed, [`Changes::scope`]): the moment of its latest
    /// change.
    namespaces: Mutex<super::prehashed::Map<u64, u64>>,
    keys: std::hash::RandomState,
}

/// What one watch event changed ([`Changes::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changed {
    Nothing,
    /// The namespace of this hash.
    Namespace(u64),
    /// Any namespace.
    Everywhere,
}

/// The namespaces a reconciliation read, hashed: its resource's and its
/// instance's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope([u64; 2]);

impl Changes {
    /// The moment now: a reconciliation takes it before it reads anything.
    pub fn now(&self) -> u64 {
        self.now.load(Ordering::Acquire)
    }

    /// The namespaces `namespace` and `instance_namespace`.
    pub fn scope(&self, namespace: &str, instance_namespace: &str) -> Scope {
        Scope([
            self.keys.hash_one(namespace),
            self.keys.hash_one(instance_namespace),
        ])
    }

    /// Whether nothing in `scope` changed after the moment `since`.
    pub fn unchanged(&self, scope: Scope, since: u64) -> bool {
        // Under the lock every count is written under: a map cleared past
        // its bound has its `everywhere` set by then.
        let namespaces = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        if self.everywhere.load(Ordering::Acquire) > since {
            return false;
        }
        scope
            .0
            .iter()
            .all(|namespace| namespaces.get(namespace).is_none_or(|at| *at <= since))
    }

    /// Counts a watch event of `K`, once its cache holds what it says;
    /// `relisting`: the watch listed everything before (see
    /// [`Changes::of`]).
    pub fn record<K: Resource<DynamicType = ()>>(&self, event: &Event<K>, relisting: bool) {
        self.count(self.of(event, relisting));
    }

    /// What a watch event of `K` changes; counted with [`Changes::count`]
    /// once its cache holds it (where the event is consumed on the way).
    /// `relisting`: the watch has listed everything before, so the end of
    /// this list may drop objects from its cache.
    pub fn of<K: Resource<DynamicType = ()>>(&self, event: &Event<K>, relisting: bool) -> Changed {
        let object = match event {
            Event::Apply(object) | Event::Delete(object) | Event::InitApply(object) => object,
            // A list that begins changes nothing yet.
            Event::Init => return Changed::Nothing,
            // The cache swaps in what the list brought and drops what it
            // did not, without an event for it; the first list of a watch
            // drops nothing, and counted what it brought as it came.
            Event::InitDone if relisting => return Changed::Everywhere,
            Event::InitDone => return Changed::Nothing,
        };
        let meta = object.meta();
        let namespace = match (&meta.namespace, K::kind(&()) == "Namespace") {
            (Some(namespace), _) => namespace,
            (None, true) => match &meta.name {
                Some(name) => name,
                None => return Changed::Everywhere,
            },
            (None, false) => return Changed::Everywhere,
        };
        Changed::Namespace(self.keys.hash_one(namespace))
    }

    pub fn count(&self, changed: Changed) {
        let mut namespaces = self.namespaces.lock().unwrap_or_else(|p| p.into_inner());
        // Counted under the lock, so a reader never sees a moment whose
        // change is not recorded yet.
        match changed {
            Changed::Nothing => {}
            Changed::Namespace(hash) => {
                let at = self.tick();
                // Namespaces come and go: past the bound, the map starts
                // over, and what it forgets counts as changed.
                if namespaces.len() >= MAX_NAMESPACES && !namespaces.contains_key(&hash) {
                    namespaces.clear();
                    self.everywhere.store(at, Ordering::Release);
                }
                namespaces.insert(hash, at);
            }
            Changed::Everywhere => {
                let at = self.tick();
                self.everywhere.store(at, Ordering::Release);
            }
        }
    }

    fn tick(&self) -> u64 {
        self.now.fetch_add(1, Ordering::AcqRel) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::ObjectMeta;

    fn config_map(namespace: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("c".into()),
                namespace: Some(namespace.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn namespace(name: &str) -> Namespace {
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
    }

    #[test]
    fn a_change_counts_for_its_namespace_only() {
        let changes = Changes::default();
        let scope = changes.scope("tenant", "platform");
        let since = changes.now();
        assert!(changes.unchanged(scope, since));
        changes.record(&Event::Apply(config_map("other")), false);
        changes.record(&Event::<ConfigMap>::Init, true);
        assert!(changes.unchanged(scope, since), "another namespace");
        changes.record(&Event::Delete(config_map("tenant")), false);
        assert!(!changes.unchanged(scope, since), "the resource's own");
        let since = changes.now();
        assert!(changes.unchanged(scope, since));
        changes.record(&Event::InitApply(config_map("platform")), true);
        assert!(!changes.unchanged(scope, since), "the instance's");
        let since = changes.now();
        changes.record(&Event::Apply(namespace("tenant")), false);
        assert!(!changes.unchanged(scope, since), "the Namespace itself");
        let since = changes.now();
        changes.record(&Event::<ConfigMap>::InitDone, false);
        assert!(
            changes.unchanged(scope, since),
            "the first list dropped nothing"
        );
        changes.record(&Event::<ConfigMap>::InitDone, true);
        assert!(
            !changes.unchanged(scope, since),
            "a list again may have dropped anything"
        );
        let since = changes.now();
        changes.record(&Event::Apply(ConfigMap::default()), false);
        assert!(!changes.unchanged(scope, since), "no namespace: any");
        assert!(changes.unchanged(scope, changes.now()));
    }

    /// Past its bound the map forgets every namespace, which counts as a
    /// change everywhere; then it counts as before.
    #[test]
    fn the_namespaces_are_forgotten_past_the_bound_as_a_change_everywhere() {
        let changes = Changes::default();
        let scope = changes.scope("tenant", "platform");
        changes.record(&Event::Apply(config_map("tenant")), false);
        let since = changes.now();
        for namespace in 0..MAX_NAMESPACES as u64 - 1 {
            changes.count(Changed::Namespace(namespace));
        }
        assert!(changes.unchanged(scope, since), "at the bound");
        changes.count(Changed::Namespace(u64::MAX));
        assert!(!changes.unchanged(scope, since), "past it");
        let since = changes.now();
        assert!(changes.unchanged(scope, since));
        changes.record(&Event::Apply(config_map("platform")), false);
        assert!(!changes.unchanged(scope, since));
    }
}
