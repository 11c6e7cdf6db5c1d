//! Requeues of managed resources, queued outside kube-runtime's scheduler.
//!
//! Every managed resource in the steady state waits for its next poll.
//! Returned as `Action::requeue`, that wait sits in kube-runtime's
//! scheduler as its request held twice (a `DelayQueue` entry and the map
//! that dedups it), each with an `ObjectRef` of four strings: about 860
//! bytes an object, 17 MB for 10,000 teams and 10,000 keys
//! (docs/provider-benchmark.md). Polls already fall due on ticks
//! ([`timing::on_tick`]), so a queue of ticks holds them here instead:
//! per object its `namespace/name`, once, shared by the tick's list and
//! the map from it to its tick (about 110 bytes). When a
//! tick comes, what fell due goes to its controller as a trigger
//! (`Controller::reconcile_on`), and from there through kube-runtime's
//! scheduler and runner like any other: one reconciliation per object at
//! once, at most `concurrency` per kind.
//!
//! As in kube-runtime's scheduler, an object has one requeue at most: a
//! new one replaces it, and a reconciliation that starts for any other
//! reason (a watch event, a wake-up) drops it ([`Polls::cancel`]), since
//! that reconciliation asks for its own. Requeues shorter than a tick (a
//! conflict, a cache that lags behind) stay with kube-runtime. Objects are
//! told apart by their whole `namespace/name`, never by a hash of it, so
//! no name can be chosen to cancel or replace another object's requeue.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use super::timing;

/// Hands a due object (`namespace`, `name`) to its controller; `false`
/// once the controller is gone.
type Fire = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// The requeue queues of the managed kinds, by kind.
#[derive(Default)]
pub struct Polls {
    kinds: RwLock<HashMap<&'static str, Arc<Queue>>>,
}

struct Queue {
    due: Mutex<Due>,
    fire: Fire,
}

#[derive(Default)]
struct Due {
    /// By tick (counted from [`timing::epoch`]): what falls due then.
    /// Entries whose object was requeued elsewhere or cancelled since are
    /// left here and skipped.
    ticks: BTreeMap<u64, Vec<Arc<str>>>,
    /// By `namespace/name` ([`super::metrics::object_key`]): the tick of
    /// the object's one live requeue.
    scheduled: HashMap<Arc<str>, u64>,
}

impl Polls {
    /// From now on requeues of `kind` are queued here and handed to `fire`
    /// when due; a queue registered before for `kind` (controllers that
    /// ran before leadership was lost) is dropped.
    pub fn register(
        &self,
        kind: &'static str,
        fire: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
    ) {
        let queue = Arc::new(Queue {
            due: Mutex::new(Due::default()),
            fire: Box::new(fire),
        });
        self.kinds
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kind, queue);
    }

    fn queue(&self, kind: &str) -> Option<Arc<Queue>> {
        self.kinds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(kind)
            .cloned()
    }

    /// Queues the object `key` (`namespace/name`) of `kind` to be
    /// reconciled `after` from now, on the first tick at or after that;
    /// `false` (and nothing queued) where `kind` has no queue, ticks are
    /// off, or `after` is shorter than a tick: the caller requeues with
    /// kube-runtime then.
    pub fn schedule(&self, kind: &str, key: &str, after: Duration, tick: Duration) -> bool {
        if tick.is_zero() || after < tick {
            return false;
        }
        let Some(queue) = self.queue(kind) else {
            return false;
        };
        let at = tick_at(timing::epoch().elapsed().saturating_add(after), tick);
        let key: Arc<str> = Arc::from(key);
        let mut due = queue.lock();
        due.scheduled.insert(key.clone(), at);
        due.ticks.entry(at).or_default().push(key);
        true
    }

    /// Drops the requeue of `key`, if any: a reconciliation of it starts.
    pub fn cancel(&self, kind: &str, key: &str) {
        if let Some(queue) = self.queue(kind) {
            queue.lock().scheduled.remove(key);
        }
    }

    /// Whether `key` has a requeue here.
    pub fn is_scheduled(&self, kind: &str, key: &str) -> bool {
        self.queue(kind)
            .is_some_and(|queue| queue.lock().scheduled.contains_key(key))
    }

    /// Hands every requeue due by `tick` to its controller.
    fn fire_due(&self, tick: u64) {
        let queues: Vec<Arc<Queue>> = self
            .kinds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for queue in queues {
            let due = queue.lock().take_due(tick);
            for key in due {
                let (namespace, name) = key.split_once('/').unwrap_or(("", &key));
                if !(queue.fire)(namespace, name) {
                    break;
                }
            }
        }
    }

    /// Fires the requeues as their ticks come, until dropped. `tick` as
    /// [`super::reconciler::Context::poll_tick`]; zero never fires
    /// (nothing is queued then).
    pub async fn run(&self, tick: Duration) {
        if tick.is_zero() {
            return std::future::pending().await;
        }
        let epoch = timing::epoch();
        let mut next = tick_at(epoch.elapsed(), tick);
        loop {
            let at = epoch + tick.saturating_mul(u32::try_from(next).unwrap_or(u32::MAX));
            tokio::time::sleep_until(at.into()).await;
            self.fire_due(next);
            // A late wake-up (a busy machine) fires every tick it passed.
            next = (next + 1).max(tick_at(epoch.elapsed(), tick));
        }
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Due> {
        self.due.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Due {
    /// The keys of the live requeues due by `tick`, taken off the queue.
    fn take_due(&mut self, tick: u64) -> Vec<Arc<str>> {
        let later = self.ticks.split_off(&(tick + 1));
        let due = std::mem::replace(&mut self.ticks, later);
        let mut keys = Vec::new();
        for (at, entries) in due {
            for key in entries {
                if self.scheduled.get(&key) == Some(&at) {
                    self.scheduled.remove(&key);
                    keys.push(key);
                }
            }
        }
        keys
    }
}

/// The first tick at or after `elapsed` since the epoch.
fn tick_at(elapsed: Duration, tick: Duration) -> u64 {
    let ticks = elapsed.as_nanos().div_ceil(tick.as_nanos().max(1));
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(500);

    fn fired() -> (
        Arc<Mutex<Vec<String>>>,
        impl Fn(&str, &str) -> bool + Send + Sync,
    ) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        (seen, move |namespace: &str, name: &str| {
            into.lock().unwrap().push(format!("{namespace}/{name}"));
            true
        })
    }

    fn now_tick() -> u64 {
        tick_at(timing::epoch().elapsed(), TICK)
    }

    #[test]
    fn a_requeue_fires_once_on_its_tick_and_the_last_one_counts() {
        let polls = Polls::default();
        let (seen, fire) = fired();
        polls.register("team", fire);
        let start = now_tick();
        assert!(polls.schedule("team", "ns/a", Duration::from_secs(10), TICK));
        assert!(polls.schedule("team", "ns/b", Duration::from_secs(10), TICK));
        // Requeued again, sooner: only the new one stands.
        assert!(polls.schedule("team", "ns/b", Duration::from_secs(2), TICK));
        assert!(polls.is_scheduled("team", "ns/a"));
        polls.fire_due(start + 3);
        assert!(seen.lock().unwrap().is_empty(), "nothing due yet");
        polls.fire_due(start + 6);
        assert_eq!(*seen.lock().unwrap(), ["ns/b"]);
        polls.fire_due(start + 25);
        assert_eq!(
            *seen.lock().unwrap(),
            ["ns/b", "ns/a"],
            "b's first requeue replaced"
        );
        polls.fire_due(start + 100);
        assert_eq!(seen.lock().unwrap().len(), 2, "each fired once");
        assert!(!polls.is_scheduled("team", "ns/a"));
        let due = polls.queue("team").unwrap();
        let due = due.lock();
        assert!(
            due.ticks.is_empty() && due.scheduled.is_empty(),
            "nothing left"
        );
    }

    #[test]
    fn a_reconciliation_that_starts_drops_the_requeue() {
        let polls = Polls::default();
        let (seen, fire) = fired();
        polls.register("key", fire);
        let start = now_tick();
        assert!(polls.schedule("key", "ns/k", Duration::from_secs(5), TICK));
        polls.cancel("key", "ns/k");
        assert!(!polls.is_scheduled("key", "ns/k"));
        polls.fire_due(start + 100);
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn short_requeues_and_kinds_without_a_queue_stay_with_kube_runtime() {
        let polls = Polls::default();
        let (seen, fire) = fired();
        polls.register("team", fire);
        assert!(!polls.schedule("team", "ns/a", Duration::from_millis(200), TICK));
        assert!(!polls.schedule("team", "ns/a", Duration::from_secs(5), Duration::ZERO));
        assert!(!polls.schedule("key", "ns/a", Duration::from_secs(5), TICK));
        polls.fire_due(now_tick() + 1_000);
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn kinds_fire_to_their_own_controllers() {
        let polls = Polls::default();
        let (teams, fire_teams) = fired();
        let (keys, fire_keys) = fired();
        polls.register("team", fire_teams);
        polls.register("key", fire_keys);
        let start = now_tick();
        assert!(polls.schedule("team", "ns/x", TICK, TICK));
        assert!(polls.schedule("key", "ns/x", TICK, TICK));
        polls.fire_due(start + 4);
        assert_eq!(*teams.lock().unwrap(), ["ns/x"]);
        assert_eq!(*keys.lock().unwrap(), ["ns/x"]);
    }

    #[tokio::test]
    async fn the_queue_fires_as_time_passes() {
        let tick = Duration::from_millis(20);
        let polls = Arc::new(Polls::default());
        let (seen, fire) = fired();
        polls.register("team", fire);
        let running = tokio::spawn({
            let polls = polls.clone();
            async move { polls.run(tick).await }
        });
        let asked = std::time::Instant::now();
        assert!(polls.schedule("team", "ns/a", Duration::from_millis(200), tick));
        // Fired once, not before it was due.
        let fired_after = loop {
            if !seen.lock().unwrap().is_empty() {
                break asked.elapsed();
            }
            assert!(asked.elapsed() < Duration::from_secs(10), "never fired");
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        assert!(fired_after >= Duration::from_millis(200), "{fired_after:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(*seen.lock().unwrap(), ["ns/a"]);
        running.abort();
    }
}
