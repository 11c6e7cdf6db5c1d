//! A kind's reconciliations at once, shared out by namespace: the
//! resources of one namespace hold at most `--max-reconcile-rate` of them
//! (as crossplane-runtime's `MaxConcurrentReconciles`), and the kind's
//! controller runs half as many again ([`reserve`]) that only other
//! namespaces can take.
//!
//! A reconciliation holds its place for as long as its LiteLLM requests
//! take, each up to the request timeout. A tenant may point its
//! `LiteLLMInstance`s at servers of its own that answer slowly or never
//! (`docs/tenancy.md`); with one pool for every namespace, as
//! crossplane-runtime has, its resources could hold every place of a kind
//! and every other tenant's would wait behind them. Here they hold their
//! own namespace's share, and the other namespaces keep the reserve.
//!
//! A reconciliation that finds its namespace's share taken does nothing:
//! it ends at once, and its object waits here, by name, in the order it
//! came. When a place of that namespace frees, the next object waiting is
//! started again through the kind's trigger (`fire`). An object deleted
//! while it waited starts nothing (the trigger finds it gone from the
//! kind's cache, [`if_cached`]), and the next one waiting is started in its
//! place, so deletions strand no other object. The last place of a
//! namespace to free starts as many as the namespace may run, for an
//! object started that then never took its place (deleted between its
//! start and its reconciliation).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use kube::api::ObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::Resource;
use tokio::sync::mpsc::UnboundedSender;

/// The places only namespaces other than one that holds its whole share
/// can take: half the share, at least one.
pub fn reserve(per_namespace: u16) -> u16 {
    (per_namespace / 2).max(1)
}

/// Reconciliations of one kind its controller runs at once, where one
/// namespace may run `per_namespace` of them.
pub fn controller_concurrency(per_namespace: u16) -> u16 {
    let per_namespace = per_namespace.max(1);
    per_namespace.saturating_add(reserve(per_namespace))
}

/// Starts `(namespace, name)` again; `false` where nothing was started.
type Fire = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// `fire` for the objects `store` holds: one gone from the cache (deleted
/// while it waited) starts nothing, and `false` says so, so that the next
/// object waiting takes its turn.
pub fn if_cached<K>(
    store: Store<K>,
    fire: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
) -> impl Fn(&str, &str) -> bool + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    move |namespace, name| {
        store.get(&object_ref(namespace, name)).is_some() && fire(namespace, name)
    }
}

/// A controller's trigger as [`Places::register`] (and the poll queue)
/// fire it: `(namespace, name)` sent to `due`, which the controller
/// reconciles on; `false` once the controller is gone.
pub fn trigger<K>(
    due: UnboundedSender<ObjectRef<K>>,
) -> impl Fn(&str, &str) -> bool + Clone + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + 'static,
{
    move |namespace, name| due.send(object_ref(namespace, name)).is_ok()
}

/// The reference of `name` in `namespace` (`""`: a cluster-scoped object).
fn object_ref<K: Resource<DynamicType = ()>>(namespace: &str, name: &str) -> ObjectRef<K> {
    let object = ObjectRef::new(name);
    if namespace.is_empty() {
        object
    } else {
        object.within(namespace)
    }
}

/// Every kind's places, by kind; the controllers register their kinds.
#[derive(Default)]
pub struct Places {
    kinds: RwLock<HashMap<&'static str, Arc<Kind>>>,
}

struct Kind {
    per_namespace: usize,
    /// Starts the reconciliation of `(namespace, name)` again; `false` once
    /// the controller is gone.
    fire: Fire,
    namespaces: Mutex<HashMap<Arc<str>, Namespace>>,
}

#[derive(Default)]
struct Namespace {
    held: usize,
    /// Objects turned away, in order. An object admitted meanwhile (another
    /// trigger started it) is no longer in `queued` and is skipped.
    order: VecDeque<Arc<str>>,
    queued: HashSet<Arc<str>>,
}

impl Namespace {
    /// Up to `count` objects waiting, first come first.
    fn next(&mut self, count: usize) -> Vec<Arc<str>> {
        let mut next = Vec::new();
        while next.len() < count {
            let Some(name) = self.order.pop_front() else {
                break;
            };
            if self.queued.remove(&name) {
                next.push(name);
            }
        }
        if self.queued.is_empty() {
            self.order.clear();
        }
        next
    }
}

impl Kind {
    fn namespaces(&self) -> MutexGuard<'_, HashMap<Arc<str>, Namespace>> {
        self.namespaces.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Up to `count` objects waiting in `namespace`, taken off its queue;
    /// a namespace that neither holds nor waits is forgotten.
    fn next(&self, namespace: &str, count: usize) -> Vec<Arc<str>> {
        let mut namespaces = self.namespaces();
        let Some(entry) = namespaces.get_mut(namespace) else {
            return Vec::new();
        };
        let next = entry.next(count);
        if entry.held == 0 && entry.queued.is_empty() {
            namespaces.remove(namespace);
        }
        next
    }
}

/// A place taken: held for the whole reconciliation, freed on drop.
#[must_use = "the place is freed when this is dropped"]
pub struct Place {
    /// `None`: the kind shares no places (no controller registered it).
    kind: Option<Arc<Kind>>,
    namespace: Arc<str>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let Some(kind) = &self.kind else {
            return;
        };
        let mut wanted = {
            let mut namespaces = kind.namespaces();
            let Some(namespace) = namespaces.get_mut(&self.namespace) else {
                return;
            };
            namespace.held = namespace.held.saturating_sub(1);
            if namespace.held == 0 {
                kind.per_namespace
            } else {
                1
            }
        };
        // An object that starts nothing (gone since it was turned away) is
        // replaced by the next one waiting.
        while wanted > 0 {
            let next = kind.next(&self.namespace, wanted);
            if next.is_empty() {
                break;
            }
            for name in next {
                if (kind.fire)(&self.namespace, &name) {
                    wanted -= 1;
                }
            }
        }
    }
}

impl Places {
    /// Shares `kind`'s places, `per_namespace` to a namespace; `fire`
    /// starts a turned-away object's reconciliation again.
    pub fn register(
        &self,
        kind: &'static str,
        per_namespace: u16,
        fire: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
    ) {
        let shared = Arc::new(Kind {
            per_namespace: usize::from(per_namespace.max(1)),
            fire: Box::new(fire),
            namespaces: Mutex::default(),
        });
        self.kinds
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kind, shared);
    }

    /// A place for the reconciliation of `name` in `namespace`, or `None`
    /// if the namespace holds its whole share of `kind`'s: the object then
    /// waits to be started again. A kind no controller registered takes a
    /// place that limits nothing.
    pub fn enter(&self, kind: &'static str, namespace: &str, name: &str) -> Option<Place> {
        let namespace: Arc<str> = Arc::from(namespace);
        let Some(shared) = self
            .kinds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(kind)
            .cloned()
        else {
            return Some(Place {
                kind: None,
                namespace,
            });
        };
        {
            let mut namespaces = shared.namespaces();
            let entry = namespaces.entry(namespace.clone()).or_default();
            if entry.held >= shared.per_namespace {
                let name: Arc<str> = Arc::from(name);
                if entry.queued.insert(name.clone()) {
                    entry.order.push_back(name);
                }
                return None;
            }
            entry.held += 1;
            entry.queued.remove(name);
        }
        Some(Place {
            kind: Some(shared),
            namespace,
        })
    }

    /// [`Places::enter`] for the object of `meta`.
    pub fn enter_object(&self, kind: &'static str, meta: &ObjectMeta) -> Option<Place> {
        self.enter(
            kind,
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }

    /// Places of `kind` that `namespace` holds now.
    pub fn held(&self, kind: &'static str, namespace: &str) -> usize {
        self.count(kind, namespace, |entry| entry.held)
    }

    /// Objects of `kind` in `namespace` waiting for a place.
    pub fn waiting(&self, kind: &'static str, namespace: &str) -> usize {
        self.count(kind, namespace, |entry| entry.queued.len())
    }

    fn count(&self, kind: &'static str, namespace: &str, of: fn(&Namespace) -> usize) -> usize {
        let kinds = self.kinds.read().unwrap_or_else(|p| p.into_inner());
        kinds
            .get(kind)
            .map_or(0, |shared| shared.namespaces().get(namespace).map_or(0, of))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Places of one kind, 2 to a namespace, and what they started again.
    fn places() -> (Places, Arc<Mutex<Vec<String>>>) {
        places_where(|_| true)
    }

    /// [`places`], where the trigger starts only the names `exists`
    /// accepts (the others were deleted while they waited).
    fn places_where(
        exists: impl Fn(&str) -> bool + Send + Sync + 'static,
    ) -> (Places, Arc<Mutex<Vec<String>>>) {
        let fired = Arc::new(Mutex::new(Vec::new()));
        let places = Places::default();
        let record = fired.clone();
        places.register("team", 2, move |namespace, name| {
            record.lock().unwrap().push(format!("{namespace}/{name}"));
            exists(name)
        });
        (places, fired)
    }

    fn taken(fired: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *fired.lock().unwrap())
    }

    #[test]
    fn the_controller_runs_a_reserve_beyond_one_namespace_share() {
        assert_eq!(controller_concurrency(10), 15);
        assert_eq!(controller_concurrency(1), 2);
        assert_eq!(controller_concurrency(0), 2);
        assert_eq!(controller_concurrency(3), 4);
    }

    #[test]
    fn a_namespace_holds_its_share_and_another_still_enters() {
        let (places, fired) = places();
        let a1 = places.enter("team", "a", "1").expect("first place");
        let _a2 = places.enter("team", "a", "2").expect("second place");
        assert!(places.enter("team", "a", "3").is_none(), "a's share is 2");
        assert!(places.enter("team", "a", "4").is_none());
        // Another namespace is not held up by a's.
        let b1 = places.enter("team", "b", "1").expect("b enters");
        assert_eq!(places.held("team", "a"), 2);
        assert_eq!(places.held("team", "b"), 1);
        assert_eq!(places.waiting("team", "a"), 2);
        // b's place frees: nothing of a's starts on it.
        drop(b1);
        assert!(taken(&fired).is_empty());
        // One of a's frees: its first waiting object starts again, once.
        drop(a1);
        assert_eq!(taken(&fired), ["a/3"]);
        let _a3 = places.enter("team", "a", "3").expect("the freed place");
        assert_eq!(places.waiting("team", "a"), 1);
    }

    #[test]
    fn an_object_turned_away_twice_waits_once_and_one_started_elsewhere_is_skipped() {
        let (places, fired) = places();
        let a1 = places.enter("team", "a", "1").unwrap();
        let a2 = places.enter("team", "a", "2").unwrap();
        assert!(places.enter("team", "a", "3").is_none());
        assert!(places.enter("team", "a", "3").is_none());
        assert!(places.enter("team", "a", "4").is_none());
        assert!(places.enter("team", "a", "5").is_none());
        assert_eq!(places.waiting("team", "a"), 3);
        // 4's watch event starts it while a place is free: it no longer
        // waits, and the next freed place goes to 5.
        drop(a1);
        assert_eq!(taken(&fired), ["a/3"]);
        let _a4 = places.enter("team", "a", "4").expect("free place");
        drop(a2);
        assert_eq!(taken(&fired), ["a/5"]);
        assert_eq!(places.waiting("team", "a"), 0);
    }

    #[test]
    fn the_last_place_of_a_namespace_to_free_starts_a_whole_share() {
        let (places, fired) = places();
        let a1 = places.enter("team", "a", "1").unwrap();
        let a2 = places.enter("team", "a", "2").unwrap();
        for name in ["3", "4", "5"] {
            assert!(places.enter("team", "a", name).is_none());
        }
        drop(a1);
        assert_eq!(taken(&fired), ["a/3"]);
        // 3 was deleted before it started again: when a's last place
        // frees, two more start, not one.
        drop(a2);
        assert_eq!(taken(&fired), ["a/4", "a/5"]);
        assert_eq!(places.held("team", "a"), 0);
        assert_eq!(places.waiting("team", "a"), 0);
    }

    #[test]
    fn an_object_deleted_while_it_waited_gives_its_turn_to_the_next() {
        // 3, 4, 5 and 6 are deleted while they wait: the trigger finds them
        // gone and starts nothing.
        let (places, fired) = places_where(|name| !["3", "4", "5", "6"].contains(&name));
        let a1 = places.enter("team", "a", "1").unwrap();
        let _a2 = places.enter("team", "a", "2").unwrap();
        for name in ["3", "4", "5", "6", "7", "8"] {
            assert!(places.enter("team", "a", name).is_none());
        }
        // One place frees while the other is held: more than a share of
        // deleted objects in a row, and the place still goes to 7.
        drop(a1);
        assert_eq!(taken(&fired), ["a/3", "a/4", "a/5", "a/6", "a/7"]);
        assert_eq!(places.waiting("team", "a"), 1);
    }

    #[test]
    fn a_cached_trigger_starts_only_objects_the_cache_holds() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let (store, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        let object = ConfigMap {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("a".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(object));
        let started = Arc::new(Mutex::new(Vec::new()));
        let record = started.clone();
        let fire = if_cached(store, move |namespace, name| {
            record.lock().unwrap().push(format!("{namespace}/{name}"));
            true
        });
        assert!(fire("a", "web"));
        assert!(!fire("a", "gone"), "a deleted object starts nothing");
        assert!(!fire("b", "web"), "nor one of another namespace");
        assert_eq!(*started.lock().unwrap(), ["a/web"]);
    }

    #[test]
    fn a_kind_no_controller_registered_limits_nothing() {
        let places = Places::default();
        let held: Vec<Place> = (0..50)
            .map(|i| {
                places
                    .enter("team", "a", &i.to_string())
                    .expect("unlimited")
            })
            .collect();
        assert_eq!(held.len(), 50);
        assert_eq!(places.held("team", "a"), 0);
    }
}
