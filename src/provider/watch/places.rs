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
//! started again through the kind's trigger (`fire`); the last place of a
//! namespace to free starts as many as the namespace may run, so one
//! object deleted while it waited does not strand the others.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use kube::api::ObjectMeta;
use kube::runtime::reflector::ObjectRef;
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

type Fire = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// A controller's trigger as [`Places::register`] (and the poll queue)
/// fire it: `(namespace, name)` sent to `due`, which the controller
/// reconciles on; `false` once the controller is gone.
pub fn trigger<K>(
    due: UnboundedSender<ObjectRef<K>>,
) -> impl Fn(&str, &str) -> bool + Clone + Send + Sync + 'static
where
    K: Resource<DynamicType = ()> + 'static,
{
    move |namespace, name| {
        let object = ObjectRef::new(name);
        let object = if namespace.is_empty() {
            object
        } else {
            object.within(namespace)
        };
        due.send(object).is_ok()
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
        let next = {
            let mut namespaces = kind.namespaces();
            let Some(namespace) = namespaces.get_mut(&self.namespace) else {
                return;
            };
            namespace.held = namespace.held.saturating_sub(1);
            let count = if namespace.held == 0 {
                kind.per_namespace
            } else {
                1
            };
            let next = namespace.next(count);
            if namespace.held == 0 && namespace.queued.is_empty() {
                namespaces.remove(&self.namespace);
            }
            next
        };
        for name in next {
            (kind.fire)(&self.namespace, &name);
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
        let fired = Arc::new(Mutex::new(Vec::new()));
        let places = Places::default();
        let record = fired.clone();
        places.register("team", 2, move |namespace, name| {
            record.lock().unwrap().push(format!("{namespace}/{name}"));
            true
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
