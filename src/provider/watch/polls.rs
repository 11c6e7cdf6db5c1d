//! Requeues of managed resources, queued outside kube-runtime's scheduler,
//! and polls that find nothing changed without a reconciliation.
//!
//! Every managed resource in the steady state waits for its next poll.
//! Returned as `Action::requeue`, that wait sits in kube-runtime's
//! scheduler as its request held twice (a `DelayQueue` entry and the map
//! that dedups it), each with an `ObjectRef` of four strings: about 860
//! bytes an object, 17 MB for 10,000 teams and 10,000 keys
//! (bench notes: git history of docs/provider-benchmark.md). Polls already fall due on ticks
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
//!
//! **Unchanged polls.** A poll is a reconciliation like any other: it
//! reads the resource's references, instance and Secrets from the caches,
//! reads the object from LiteLLM, compares, builds the conditions and
//! finds, nearly always, that there is nothing to do. Where the last
//! reconciliation of a resource was such a poll (the object up to date,
//! nothing written, nothing due at a time of its own, such as a key's
//! rotation, everything it read of Kubernetes from synced caches whose
//! changes are counted, and the resource as its cache holds it:
//! [`crate::provider::watch::cache::Kube::reads_counted`]), it leaves a [`Memo`] with its
//! requeue: the LiteLLM read it observed through, the fingerprint of the
//! answer, and the moment it began ([`changes`]). When the requeue falls due and nothing in the
//! resource's namespace or its instance's has changed since that moment,
//! the poll makes the one read again and compares fingerprints: the same
//! answer, byte for byte, to the same read, with the same Kubernetes
//! objects, is what the reconciliation saw, so it would conclude the same
//! again, and the resource is requeued with the memo. Any other answer (a
//! change in LiteLLM, an error, a missing object), a change in either
//! namespace, or a proxy busy with other work, and the poll goes to the
//! controller as above, where the reconciliation reads and decides as
//! always. Such a poll writes nothing anywhere, so it needs no lock
//! against a reconciliation of the same resource: at worst, one that
//! started meanwhile requeues it again.
//!
//! **A new process's first polls** read nothing on their own where a page
//! of a list route can stand for the read: they wait for one sweep of
//! pages together (see [`Sweep`]), so a restart costs each proxy's pages,
//! not a read an object.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::litellm::{self, Reread};

use crate::provider::watch::changes::{self, Changes, Scope};
use crate::provider::watch::prehashed;
use crate::provider::watch::timing;

/// Hands a due object (`namespace`, `name`) to its controller; `false`
/// once the controller is gone.
type Fire = Box<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// Records a poll that found nothing changed (the object's
/// `namespace/name`, its memo, the requeue, how long the poll took, and
/// whether a page of a list route answered it), as a reconciliation would
/// have been recorded.
type Polled = Box<dyn Fn(&str, &Memo, Duration, Duration, bool) + Send + Sync>;

/// What a poll needs to learn without a reconciliation that nothing
/// changed since the last one (see the module's documentation).
pub struct Memo {
    /// The LiteLLM read the reconciliation observed through, and the
    /// fingerprint of its answer.
    pub probe: litellm::Probe,
    /// The proxy's client, for background requests.
    pub client: litellm::Client,
    /// The namespaces the reconciliation read.
    pub scope: Scope,
    /// The moment it began ([`changes::Changes::now`]).
    pub since: u64,
    /// The resource's poll interval.
    pub interval: Duration,
    /// The resource's uid as the metrics know it
    /// ([`crate::provider::telemetry::metrics::Metrics::object_id`]).
    pub metrics_id: u64,
    /// How many more polls it may answer; then the resource reconciles in
    /// full all the same.
    pub left: u8,
    /// The spread of its polls, in percent of the interval
    /// ([`timing::jittered`]).
    pub jitter: u8,
}

/// How many polls one memo answers for a resource polled every `interval`
/// that must reconcile in full at least every `sync` (`--sync`): at most
/// [`MEMO_POLLS`], and none where the sync period is no longer than the
/// interval.
pub fn memo_polls(interval: Duration, sync: Duration) -> u8 {
    let polls = sync.as_secs_f64() / interval.as_secs_f64().max(f64::EPSILON);
    let answered = (polls.floor() as u64).saturating_sub(1);
    answered.min(u64::from(MEMO_POLLS)) as u8
}

/// The polls in a row one reconciliation's memo answers at most
/// ([`Memo::left`]): whatever the tracking of changes could not see (a
/// status someone edited in the instant between the controller's read
/// and the reconciliation's start) stands at most this many polls.
pub const MEMO_POLLS: u8 = 9;

/// The requeue queues of the managed kinds, by kind.
pub struct Polls {
    kinds: RwLock<HashMap<&'static str, Arc<Queue>>>,
    /// What the memos are checked against: the process's watch events.
    changes: &'static Changes,
}

impl Default for Polls {
    fn default() -> Self {
        Self::with_changes(changes::changes())
    }
}

struct Queue {
    due: Mutex<Due>,
    fire: Fire,
    polled: Polled,
    changes: &'static Changes,
    /// The sweeps of list routes, by proxy and route (see [`Sweep`]).
    sweeps: Mutex<Vec<Sweep>>,
}

#[derive(Default)]
struct Due {
    /// By tick (counted from [`timing::epoch`]): what falls due then.
    /// Entries whose object was requeued elsewhere or cancelled since are
    /// left here and skipped.
    ticks: BTreeMap<u64, Vec<Arc<str>>>,
    /// By `namespace/name` ([`crate::provider::telemetry::metrics::object_key`]): the object's
    /// one live requeue.
    scheduled: HashMap<Arc<str>, Scheduled>,
    /// Objects whose memo found a different answer, by `namespace/name`
    /// (see [`Changing`]); dropped when a memo finds the same again.
    changing: HashMap<Arc<str>, Changing>,
    /// When the last memo of a read not made yet was queued (see
    /// [`Sweep`]'s first polls).
    unread_queued: Option<Instant>,
}

/// An object whose LiteLLM answers change from poll to poll (a key in
/// use, whose spend and last use LiteLLM updates) costs a poll from a
/// memo two reads: the memo's, then the reconciliation's. After `misses`
/// such polls in a row its next `2^misses - 1` polls (at most 63) take no
/// memo and read once; then a memo is tried again. An object that changed
/// once pays one poll without a memo.
#[derive(Clone, Copy, Debug, Default)]
struct Changing {
    misses: u8,
    /// Polls still to go without a memo.
    skip: u8,
}

/// What [`Changing::misses`] stops at.
const MAX_MISSES: u8 = 6;

struct Scheduled {
    /// The tick it falls due on; [`FIRED`] once handed to the controller.
    at: u64,
    memo: Option<Box<Memo>>,
}

/// [`Scheduled::at`] of an object this queue handed to its controller and
/// whose reconciliation has not begun: no tick holds it, so it never falls
/// due, and the reconciliation that begins learns it came from here
/// ([`Brought::Fired`]). An object deleted meanwhile (its reconciliation
/// turned away) leaves this entry until its key is queued again.
const FIRED: u64 = u64::MAX;

/// What brought a reconciliation that begins ([`Polls::cancel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Brought {
    /// This queue, when a requeue fell due, or a poll or sweep found the
    /// object changed or its memo spent.
    Fired,
    /// Something else (a watch event), while a requeue waited here.
    Requeued,
    /// Something else, with no requeue here but a first poll: a new
    /// process's first reconciliation of the object, one a watch brought
    /// while its first poll waited (the caches of a new process fill:
    /// each watch's first list brings the objects it maps to once more),
    /// or a requeue kube-runtime held (a conflict, a cache behind).
    Elsewhere,
}

/// What fell due: the object's `namespace/name`, and its memo.
type Fallen = (Arc<str>, Option<Box<Memo>>);

impl Polls {
    /// Queues whose memos count `changes` (the process's own watch events
    /// by default; a test's own).
    pub fn with_changes(changes: &'static Changes) -> Self {
        Self {
            kinds: RwLock::default(),
            changes,
        }
    }

    /// What a memo's moment and scope are taken from.
    pub fn changes(&self) -> &'static Changes {
        self.changes
    }

    /// From now on requeues of `kind` are queued here and handed to `fire`
    /// when due, and polls that find nothing changed are recorded with
    /// `polled`; a queue registered before for `kind` (controllers that
    /// ran before leadership was lost) is dropped, memos and all.
    pub fn register(
        &self,
        kind: &'static str,
        fire: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
        polled: impl Fn(&str, &Memo, Duration, Duration, bool) + Send + Sync + 'static,
    ) {
        let queue = Arc::new(Queue {
            due: Mutex::new(Due::default()),
            fire: Box::new(fire),
            polled: Box::new(polled),
            changes: self.changes,
            sweeps: Mutex::default(),
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
        self.schedule_with(kind, key, after, tick, None)
    }

    /// [`Polls::schedule`], the poll to begin with `memo` (see the
    /// module's documentation).
    pub fn schedule_with(
        &self,
        kind: &str,
        key: &str,
        after: Duration,
        tick: Duration,
        memo: Option<Memo>,
    ) -> bool {
        if tick.is_zero() || after < tick {
            return false;
        }
        let Some(queue) = self.queue(kind) else {
            return false;
        };
        let at = tick_at(timing::epoch().elapsed().saturating_add(after), tick);
        let mut due = queue.lock();
        let memo = memo.filter(|_| due.memo_allowed(key));
        if memo.as_ref().is_some_and(|memo| memo.probe.is_unread()) {
            due.unread_queued = Some(Instant::now());
        }
        due.put(Arc::from(key), at, memo.map(Box::new));
        true
    }

    /// Drops the requeue of `key`, if any: a reconciliation of it starts.
    /// What brought it, as far as this queue knows.
    pub fn cancel(&self, kind: &str, key: &str) -> Brought {
        let Some(queue) = self.queue(kind) else {
            return Brought::Elsewhere;
        };
        let removed = queue.lock().scheduled.remove(key);
        match removed {
            Some(Scheduled { at: FIRED, .. }) => Brought::Fired,
            // Its first poll still waits for a sweep: no read has been made
            // for it yet in this process.
            Some(Scheduled {
                memo: Some(memo), ..
            }) if memo.probe.is_unread() => Brought::Elsewhere,
            Some(_) => Brought::Requeued,
            None => Brought::Elsewhere,
        }
    }

    /// Whether `key` has a requeue here.
    pub fn is_scheduled(&self, kind: &str, key: &str) -> bool {
        self.queue(kind).is_some_and(|queue| {
            queue
                .lock()
                .scheduled
                .get(key)
                .is_some_and(|s| s.at != FIRED)
        })
    }

    /// Whether `key`'s requeue holds a memo of a read made (not a first
    /// poll's, [`litellm::Probe::unread`]).
    pub fn has_memo(&self, kind: &str, key: &str) -> bool {
        self.queue(kind).is_some_and(|queue| {
            queue
                .lock()
                .scheduled
                .get(key)
                .and_then(|s| s.memo.as_deref())
                .is_some_and(|memo| !memo.probe.is_unread())
        })
    }

    /// Hands every requeue due by `tick` (ticks of `every`) to its
    /// controller, or polls it here, in `polling`, where its memo may
    /// answer.
    fn fire_due(&self, tick: u64, every: Duration, polling: &mut JoinSet<()>) {
        let queues: Vec<Arc<Queue>> = self
            .kinds
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for queue in queues {
            let due = queue.lock().take_due(tick);
            // Memos of listed objects, by proxy and route: a sweep of
            // pages may answer them together.
            let mut listed: Vec<(litellm::Client, litellm::List, Vec<Answerable>)> = Vec::new();
            for (key, memo) in due {
                let list = memo.as_ref().and_then(|m| m.probe.listed).map(|l| l.list);
                match (memo, list) {
                    // A listed object's memo, even spent or no longer
                    // holding: a sweep's page stands for the read of the
                    // reconciliation it then needs.
                    (Some(memo), Some(list)) if !memo.client.busy(BUSY_WINDOW) => {
                        match listed
                            .iter_mut()
                            .find(|(client, l, _)| *l == list && client.same_proxy(&memo.client))
                        {
                            Some((_, _, memos)) => memos.push((key, memo)),
                            None => listed.push((memo.client.clone(), list, vec![(key, memo)])),
                        }
                    }
                    (Some(memo), _)
                        if memo.left > 0
                            && queue.holds(&memo)
                            && !memo.client.busy(BUSY_WINDOW) =>
                    {
                        polling.spawn(poll(queue.clone(), key, memo, every));
                    }
                    _ => {
                        if !queue.reconcile(&key) {
                            break;
                        }
                    }
                }
            }
            for (client, list, due) in listed {
                match queue.start_sweep(&client, list, due, tick, every) {
                    Swept::Begun(memos) => {
                        polling.spawn(sweep(queue.clone(), client, list, memos, every));
                    }
                    Swept::Alone(due) => {
                        for (key, memo) in due {
                            if memo.left > 0 && queue.holds(&memo) {
                                polling.spawn(poll(queue.clone(), key, memo, every));
                            } else {
                                queue.reconcile(&key);
                            }
                        }
                    }
                    Swept::Later { wait, alone } => {
                        let mut pending = queue.lock();
                        for (key, memo) in wait {
                            pending.put(key, tick + 1, Some(memo));
                        }
                        drop(pending);
                        // First polls too few for a sweep of their own:
                        // each reads on its own now, as a poll without a
                        // memo does.
                        for (key, _) in alone {
                            queue.reconcile(&key);
                        }
                    }
                }
            }
        }
    }

    /// Fires the requeues as their ticks come, until dropped. `tick` as
    /// [`crate::provider::managed::reconciler::Context::poll_tick`]; zero never fires
    /// (nothing is queued then).
    pub async fn run(&self, tick: Duration) {
        if tick.is_zero() {
            return std::future::pending().await;
        }
        let epoch = timing::epoch();
        let mut next = tick_at(epoch.elapsed(), tick);
        // The polls under way: they end with this queue (leadership lost,
        // shutdown) rather than go on reading for a provider that stopped.
        let mut polling = JoinSet::new();
        loop {
            let at = epoch + tick.saturating_mul(u32::try_from(next).unwrap_or(u32::MAX));
            tokio::time::sleep_until(at.into()).await;
            while polling.try_join_next().is_some() {}
            self.fire_due(next, tick, &mut polling);
            // A late wake-up (a busy machine) fires every tick it passed.
            next = (next + 1).max(tick_at(epoch.elapsed(), tick));
        }
    }
}

/// A proxy that served requests other than background ones within this
/// long is busy: its polls go to the controller, which puts them off.
/// A poll is put off while its proxy has made or changed an object within
/// this long.
pub(crate) const BUSY_WINDOW: Duration = Duration::from_secs(1);

/// The poll of `key` by its memo: the read again, and either a requeue
/// with the memo or the controller.
async fn poll(queue: Arc<Queue>, key: Arc<str>, memo: Box<Memo>, tick: Duration) {
    let started = Instant::now();
    // `None`: no answer to compare (an error).
    let reread = memo.client.reread(&memo.probe).await.ok();
    if reread == Some(Reread::Same) && queue.holds(&memo) {
        answered(&queue, key, memo, tick, started.elapsed(), false);
        return;
    }
    match reread {
        // The reconciliation observes the answer this read kept: a changed
        // answer costs no second read, and the memos go on.
        Some(Reread::Changed { kept: true }) => {
            queue.lock().changing.remove(&key);
        }
        Some(Reread::Changed { kept: false }) => queue.lock().missed(&key),
        Some(Reread::Same) | None => {}
    }
    queue.reconcile(&key);
}

/// A due memo that passed the checks a poll makes first: the object's
/// `namespace/name`, and its memo.
type Answerable = (Arc<str>, Box<Memo>);

/// The state of one proxy's list route for one kind's polls: when its
/// last sweep began, whether one is under way, and how many objects the
/// route listed then.
///
/// **Sweeps.** Where the due memos of listed objects (keys: `/key/list`;
/// teams: `/v2/team/list`) of one proxy, with those falling due within
/// half their interval, are at least as many as the route's pages, one
/// sweep reads the pages
/// ([`litellm::pages::MAX_PAGE_SIZE`] objects each) and answers them all:
/// an entry parsed to what the memo's read parsed to is the same answer
/// ([`litellm::Listed`]); another goes to the controller, as a different
/// answer to a read does. An object missing from the pages (gone, or
/// skipped because an object on an earlier page was deleted meanwhile:
/// the routes page by offset) or whose page failed goes to the
/// controller, where the reconciliation reads it on its own, and only
/// that read's answer says it is gone. A sweep begins at most once in
/// half the shortest interval of the memos it answers, so each object is
/// polled between half its interval and its interval after the last poll,
/// and a proxy's route is read at most twice a poll interval however
/// many of its objects there are: N/50 reads for N objects at 100 a page.
/// Memos that fall due while a sweep is under way, or too soon after one
/// began, wait for the next ([`Swept::Later`]). Fewer memos than pages are
/// polled one by one, as before.
///
/// **First polls.** A new process (a restart, a new leader) has no memo of
/// any object. Its first reconciliation of an up-to-date key or team (one
/// whose read a page can stand for, [`litellm::Probe::unread`]) reads
/// nothing: it queues a spent memo of the read not made, due at the next
/// tick, and ends. A reconciliation a watch brings while its first poll
/// waits (each watch's first list, as the caches fill) queues it again
/// rather than read. Such first polls wait for one another while more are
/// being queued (one was within the last tick), at most
/// [`FIRST_POLLS_GATHER`]; then one sweep takes them all, as it takes spent
/// memos: each object goes to the controller with its page's entry standing
/// for its read, and reconciles in full ([`Brought::Fired`] tells it the
/// queue brought it). A restart so reads each proxy's pages once a kind,
/// not each object. First polls as many as the route's pages begin a sweep
/// even within half an interval of the last; fewer, then, read on their own
/// at once rather than wait for the next.
struct Sweep {
    client: litellm::Client,
    list: litellm::List,
    began: Option<Instant>,
    running: bool,
    /// How many objects the route listed in the last sweep.
    total: Option<u64>,
    /// Since when first polls have waited for others being queued.
    gathering: Option<Instant>,
}

/// What becomes of due memos of listed objects ([`Queue::start_sweep`]).
enum Swept {
    /// A sweep begins for these, the due ones and those taken early.
    Begun(Vec<Answerable>),
    /// Fewer than the route's pages: each polls by its own read.
    Alone(Vec<Answerable>),
    /// A sweep is under way or began less than half an interval ago: they
    /// (`wait`) wait a tick for the next, which begins as soon as that
    /// allows. They fell due after the last sweep began and after it could
    /// take them, as polls requeued for less than half an interval do, and
    /// as those do that a sweep longer than half an interval (a large
    /// proxy's, slow) keeps waiting: as late as that sweep is long. First
    /// polls fewer than the route's pages do not wait for the next sweep
    /// (`alone`: each reads on its own), and first polls still being queued
    /// wait for the others (see [`Sweep`]).
    Later {
        wait: Vec<Answerable>,
        alone: Vec<Answerable>,
    },
}

/// How long first polls of a kind (memos of reads not made yet) wait at
/// most for the others still being queued, before a sweep begins for
/// those queued (see [`Sweep`]); a quarter of their shortest interval
/// where that is shorter.
const FIRST_POLLS_GATHER: Duration = Duration::from_secs(5);

/// Sweeps not begun for this long are forgotten (their proxy's instance
/// is likely gone); one begun again starts afresh.
const SWEEP_FORGOTTEN: Duration = Duration::from_secs(3600);

impl Queue {
    /// Begins a sweep of `list` on `client`'s proxy for `due`, with every
    /// memo of the same proxy and route falling due within half their
    /// interval (see [`Sweep`]).
    fn start_sweep(
        &self,
        client: &litellm::Client,
        list: litellm::List,
        due: Vec<Answerable>,
        tick: u64,
        every: Duration,
    ) -> Swept {
        let Some(shortest) = due.iter().map(|(_, memo)| memo.interval).min() else {
            return Swept::Alone(due);
        };
        let early = shortest / 2;
        let mut sweeps = self.sweeps.lock().unwrap_or_else(|p| p.into_inner());
        sweeps.retain(|s| s.running || s.began.is_some_and(|b| b.elapsed() < SWEEP_FORGOTTEN));
        let index = match sweeps
            .iter()
            .position(|s| s.list == list && s.client.same_proxy(client))
        {
            Some(index) => index,
            None => {
                sweeps.push(Sweep {
                    client: client.clone(),
                    list,
                    began: None,
                    running: false,
                    total: None,
                    gathering: None,
                });
                sweeps.len() - 1
            }
        };
        let state = &mut sweeps[index];
        let later = |wait| Swept::Later {
            wait,
            alone: Vec::new(),
        };
        if state.running {
            return later(due);
        }
        let first = due
            .iter()
            .filter(|(_, memo)| memo.probe.is_unread())
            .count();
        let mut pending = self.lock();
        if first > 0 {
            // First polls still being queued (a new process's first
            // reconciliations): one sweep for them all, once they are.
            let gathering = pending
                .unread_queued
                .is_some_and(|queued| queued.elapsed() < every);
            let since = *state.gathering.get_or_insert_with(Instant::now);
            if gathering && since.elapsed() < FIRST_POLLS_GATHER.min(early / 2) {
                return later(due);
            }
            state.gathering = None;
        }
        let pages = state
            .total
            .map_or(1, |total| {
                total.div_ceil(u64::from(litellm::pages::MAX_PAGE_SIZE))
            })
            .max(1);
        if state.began.is_some_and(|b| b.elapsed() < early) && (first as u64) < pages {
            let (alone, wait) = due
                .into_iter()
                .partition(|(_, memo)| memo.probe.is_unread());
            return Swept::Later { wait, alone };
        }
        let until = tick.saturating_add(ticks_in(early, every));
        let same = |memo: &Memo| {
            memo.probe.listed.is_some_and(|l| l.list == list) && memo.client.same_proxy(client)
        };
        if (due.len() as u64).saturating_add(pending.count_due(until, &same)) < pages {
            return Swept::Alone(due);
        }
        let mut memos = due;
        memos.extend(pending.take_due_if(until, &same));
        state.running = true;
        state.began = Some(Instant::now());
        Swept::Begun(memos)
    }

    /// The sweep of `list` on `client`'s proxy is over, the route having
    /// listed `total` objects (`None`: no page answered).
    fn sweep_done(&self, client: &litellm::Client, list: litellm::List, total: Option<u64>) {
        let mut sweeps = self.sweeps.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(state) = sweeps
            .iter_mut()
            .find(|s| s.list == list && s.client.same_proxy(client))
        {
            state.running = false;
            state.total = total.or(state.total);
        }
    }
}

/// A sweep of `list`'s pages on `client`'s proxy that answers `memos` (see
/// [`Sweep`]); it stops at the page that answered the last of them.
async fn sweep(
    queue: Arc<Queue>,
    client: litellm::Client,
    list: litellm::List,
    memos: Vec<Answerable>,
    tick: Duration,
) {
    let mut wanted: HashMap<Box<str>, Answerable> = HashMap::with_capacity(memos.len());
    for (key, memo) in memos {
        // Two objects under one id (one of them is refused it when it
        // reconciles): the second reads on its own rather than lose its
        // poll.
        if let Some((twin, _)) = wanted.insert(Box::from(memo.probe.id()), (key, memo)) {
            queue.reconcile(&twin);
        }
    }
    // The text of the entry that stood for each memo that may answer: an
    // entry of the same text is the same object as it was, not parsed.
    let texts: prehashed::Map<litellm::Fingerprint, Box<str>> = wanted
        .iter()
        .filter(|(_, (_, memo))| memo.left > 0 && queue.holds(memo))
        .filter_map(|(id, (_, memo))| Some((memo.probe.listed_entry()?, id.clone())))
        .collect();
    let size = litellm::pages::MAX_PAGE_SIZE;
    let mut total = None;
    let mut page = 1u32;
    while !wanted.is_empty() {
        let started = Instant::now();
        // Entries of objects not due are left out, and entries whose text is
        // the one last found to stand for a usable memo are not parsed.
        let wants = SweepWants {
            wanted: &wanted,
            texts: &texts,
        };
        let (answer, asked, listed) = match client.listed_page_for(list, page, size, &wants).await {
            Ok(listing) => (listing.page, listing.asked, listing.sent),
            // A page too large to read (objects with much metadata) leaves
            // its objects to their own reads; the next page is read all
            // the same, as only as many pages are read as the total says.
            Err(litellm::Error::ResponseTooLarge { .. })
                if total.is_some_and(|total| u64::from(page) * u64::from(size) < total) =>
            {
                page += 1;
                continue;
            }
            Err(_) => break,
        };
        total = Some(answer.total);
        let took = started.elapsed() / u32::try_from(listed.max(1)).unwrap_or(u32::MAX);
        for entry in answer.entries {
            let Some((key, mut memo)) = wanted.remove(entry.id.as_str()) else {
                continue;
            };
            let same = entry.known()
                || entry.fingerprint.is_some()
                    && entry.fingerprint == memo.probe.listed.map(|l| l.fingerprint);
            if same && memo.left > 0 && queue.holds(&memo) {
                memo.probe.found_listed_as(entry.text);
                answered(&queue, key, memo, tick, took, true);
            } else {
                // A changed answer, a spent memo, a change in Kubernetes:
                // the reconciliation observes what the page said.
                if client.prefetch(entry, asked) {
                    // The page stands for its read: a changed answer costs
                    // nothing more, so an object whose answers keep
                    // changing (a key in use) keeps its memos and is
                    // polled by pages.
                    queue.lock().changing.remove(&key);
                } else if !same && !memo.probe.is_unread() {
                    // It reads on its own: an object whose answers keep
                    // changing pays that read less often (see [`Changing`]).
                    queue.lock().missed(&key);
                }
                queue.reconcile(&key);
            }
        }
        if listed < size as usize || u64::from(page) * u64::from(size) >= answer.total {
            break;
        }
        page += 1;
    }
    // Not in the pages, or their page failed: each reads on its own.
    for (key, _) in wanted.into_values() {
        queue.reconcile(&key);
    }
    queue.sweep_done(&client, list, total);
}

/// What a sweep wants of a page ([`litellm::pages::Wants`]): the entries
/// of the due objects, parsed unless their text is that of the entry that
/// last stood for their memo.
struct SweepWants<'a> {
    wanted: &'a HashMap<Box<str>, Answerable>,
    texts: &'a prehashed::Map<litellm::Fingerprint, Box<str>>,
}

impl litellm::pages::Wants for SweepWants<'_> {
    fn known(&self, text: litellm::Fingerprint) -> Option<&str> {
        self.texts.get(&text).map(|id| &**id)
    }

    fn wanted(&self, id: &str) -> bool {
        self.wanted.contains_key(id)
    }
}

/// How many ticks of `every` fit in `span`.
fn ticks_in(span: Duration, every: Duration) -> u64 {
    u64::try_from(span.as_nanos() / every.as_nanos().max(1)).unwrap_or(u64::MAX)
}

/// A poll found `key`'s object as its memo left it (by its own read, or by
/// a page: `by_page`): recorded as a reconciliation, and requeued with the
/// memo, one poll less.
fn answered(
    queue: &Queue,
    key: Arc<str>,
    mut memo: Box<Memo>,
    tick: Duration,
    took: Duration,
    by_page: bool,
) {
    let after = timing::on_tick(
        timing::jittered(memo.interval, memo.jitter, timing::random_fraction()),
        tick,
    );
    memo.left -= 1;
    (queue.polled)(&key, &memo, after, took, by_page);
    let at = tick_at(timing::epoch().elapsed().saturating_add(after), tick);
    let mut due = queue.lock();
    due.changing.remove(&key);
    // A reconciliation that began meanwhile and is done has asked for its
    // own requeue, which stands.
    if !due.scheduled.contains_key(&key) {
        due.put(key, at, Some(memo));
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Due> {
        self.due.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether no watched object in `memo`'s scope changed since it was
    /// made.
    fn holds(&self, memo: &Memo) -> bool {
        self.changes.unchanged(memo.scope, memo.since)
    }

    /// Hands `key` (`namespace/name`) to the controller; `false` once the
    /// controller is gone.
    fn reconcile(&self, key: &Arc<str>) -> bool {
        self.lock().scheduled.insert(
            key.clone(),
            Scheduled {
                at: FIRED,
                memo: None,
            },
        );
        let (namespace, name) = key.split_once('/').unwrap_or(("", key));
        (self.fire)(namespace, name)
    }
}

impl Due {
    /// Whether `key`'s next requeue may take a memo (see [`Changing`]).
    fn memo_allowed(&mut self, key: &str) -> bool {
        match self.changing.get_mut(key) {
            Some(changing) if changing.skip > 0 => {
                changing.skip -= 1;
                false
            }
            _ => true,
        }
    }

    /// `key`'s memo found a different answer.
    fn missed(&mut self, key: &Arc<str>) {
        // Objects gone since leave their entries; they go once there are
        // many more entries than objects (an object reconciling then
        // loses its count, which costs it a read at most).
        if self.changing.len() >= 2 * (self.scheduled.len() + 64) {
            let scheduled = &self.scheduled;
            self.changing.retain(|key, _| scheduled.contains_key(key));
        }
        let changing = self.changing.entry(key.clone()).or_default();
        changing.misses = (changing.misses + 1).min(MAX_MISSES);
        changing.skip = (1u8 << changing.misses) - 1;
    }

    /// The requeue of `key` on the tick `at`, replacing any other.
    fn put(&mut self, key: Arc<str>, at: u64, memo: Option<Box<Memo>>) {
        self.ticks.entry(at).or_default().push(key.clone());
        self.scheduled.insert(key, Scheduled { at, memo });
    }

    /// How many live requeues due by `tick` hold a memo that `matches`.
    fn count_due(&self, tick: u64, matches: &impl Fn(&Memo) -> bool) -> u64 {
        let mut count = 0;
        for (at, entries) in self.ticks.range(..=tick) {
            for key in entries {
                if self
                    .scheduled
                    .get(key)
                    .is_some_and(|s| s.at == *at && s.memo.as_deref().is_some_and(matches))
                {
                    count += 1;
                }
            }
        }
        count
    }

    /// The live requeues due by `tick` that hold a memo that `matches`,
    /// taken off the queue (their entries in `ticks` are skipped from now
    /// on, as those of any requeue replaced).
    fn take_due_if(&mut self, tick: u64, matches: &impl Fn(&Memo) -> bool) -> Vec<Answerable> {
        let mut taken = Vec::new();
        for (at, entries) in self.ticks.range(..=tick) {
            for key in entries {
                let live = self
                    .scheduled
                    .get(key)
                    .is_some_and(|s| s.at == *at && s.memo.as_deref().is_some_and(matches));
                if live {
                    if let Some(memo) = self.scheduled.remove(key).and_then(|s| s.memo) {
                        taken.push((key.clone(), memo));
                    }
                }
            }
        }
        taken
    }

    /// The live requeues due by `tick`, taken off the queue.
    fn take_due(&mut self, tick: u64) -> Vec<Fallen> {
        let later = self.ticks.split_off(&(tick + 1));
        let due = std::mem::replace(&mut self.ticks, later);
        let mut fallen = Vec::new();
        for (at, entries) in due {
            for key in entries {
                if self.scheduled.get(&key).is_some_and(|s| s.at == at) {
                    let memo = self.scheduled.remove(&key).and_then(|s| s.memo);
                    fallen.push((key, memo));
                }
            }
        }
        fallen
    }
}

/// The first tick at or after `elapsed` since the epoch.
fn tick_at(elapsed: Duration, tick: Duration) -> u64 {
    let ticks = elapsed.as_nanos().div_ceil(tick.as_nanos().max(1));
    u64::try_from(ticks).unwrap_or(u64::MAX)
}

/// The longest a poll is put off while its proxy is busy.
pub const MAX_PUT_OFF: Duration = Duration::from_secs(300);

/// Since when each resource's poll (by uid) has been put off while its
/// proxy was busy making or changing other objects.
#[derive(Default)]
pub struct PutOff(Mutex<HashMap<String, Instant>>);

impl PutOff {
    /// Whether to put off the poll of `uid` once more: its proxy is `busy`,
    /// and its poll has not been put off for `at_most` already. A proxy no
    /// longer busy ends the count.
    pub fn put_off(&self, uid: &str, busy: bool, at_most: Duration) -> bool {
        let mut since = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !busy {
            if !since.is_empty() {
                since.remove(uid);
            }
            return false;
        }
        let first = *since.entry(uid.to_owned()).or_insert_with(Instant::now);
        first.elapsed() < at_most
    }
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
        polls.register("team", fire, |_, _, _, _, _| {});
        let start = now_tick();
        assert!(polls.schedule("team", "ns/a", Duration::from_secs(10), TICK));
        assert!(polls.schedule("team", "ns/b", Duration::from_secs(10), TICK));
        // Requeued again, sooner: only the new one stands.
        assert!(polls.schedule("team", "ns/b", Duration::from_secs(2), TICK));
        assert!(polls.is_scheduled("team", "ns/a"));
        polls.fire_due(start + 3, TICK, &mut JoinSet::new());
        assert!(seen.lock().unwrap().is_empty(), "nothing due yet");
        polls.fire_due(start + 6, TICK, &mut JoinSet::new());
        assert_eq!(*seen.lock().unwrap(), ["ns/b"]);
        polls.fire_due(start + 25, TICK, &mut JoinSet::new());
        assert_eq!(
            *seen.lock().unwrap(),
            ["ns/b", "ns/a"],
            "b's first requeue replaced"
        );
        polls.fire_due(start + 100, TICK, &mut JoinSet::new());
        assert_eq!(seen.lock().unwrap().len(), 2, "each fired once");
        assert!(!polls.is_scheduled("team", "ns/a"));
        // Each reconciliation, as it begins, learns the queue brought it.
        assert_eq!(polls.cancel("team", "ns/a"), Brought::Fired);
        assert_eq!(polls.cancel("team", "ns/b"), Brought::Fired);
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
        polls.register("key", fire, |_, _, _, _, _| {});
        let start = now_tick();
        assert!(polls.schedule("key", "ns/k", Duration::from_secs(5), TICK));
        polls.cancel("key", "ns/k");
        assert!(!polls.is_scheduled("key", "ns/k"));
        polls.fire_due(start + 100, TICK, &mut JoinSet::new());
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn short_requeues_and_kinds_without_a_queue_stay_with_kube_runtime() {
        let polls = Polls::default();
        let (seen, fire) = fired();
        polls.register("team", fire, |_, _, _, _, _| {});
        assert!(!polls.schedule("team", "ns/a", Duration::from_millis(200), TICK));
        assert!(!polls.schedule("team", "ns/a", Duration::from_secs(5), Duration::ZERO));
        assert!(!polls.schedule("key", "ns/a", Duration::from_secs(5), TICK));
        polls.fire_due(now_tick() + 1_000, TICK, &mut JoinSet::new());
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn kinds_fire_to_their_own_controllers() {
        let polls = Polls::default();
        let (teams, fire_teams) = fired();
        let (keys, fire_keys) = fired();
        polls.register("team", fire_teams, |_, _, _, _, _| {});
        polls.register("key", fire_keys, |_, _, _, _, _| {});
        let start = now_tick();
        assert!(polls.schedule("team", "ns/x", TICK, TICK));
        assert!(polls.schedule("key", "ns/x", TICK, TICK));
        polls.fire_due(start + 4, TICK, &mut JoinSet::new());
        assert_eq!(*teams.lock().unwrap(), ["ns/x"]);
        assert_eq!(*keys.lock().unwrap(), ["ns/x"]);
    }

    #[tokio::test]
    async fn the_queue_fires_as_time_passes() {
        let tick = Duration::from_millis(20);
        let polls = Arc::new(Polls::default());
        let (seen, fire) = fired();
        polls.register("team", fire, |_, _, _, _, _| {});
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

    /// What a [`Answering`] proxy answers a request for a path and query
    /// with, where it answers it differently from the rest.
    type Route = Box<dyn Fn(&str) -> Option<(u16, String)> + Send + Sync>;

    /// A proxy that answers every request with the status and body it is
    /// set to (or its route's answer), and counts them and keeps their
    /// paths and queries.
    struct Answering {
        url: String,
        requests: Arc<std::sync::atomic::AtomicUsize>,
        answer: Arc<Mutex<(u16, String)>>,
        route: Arc<Mutex<Option<Route>>>,
        targets: Arc<Mutex<Vec<String>>>,
    }

    impl Answering {
        async fn start(status: u16, body: &str) -> Self {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let answer = Arc::new(Mutex::new((status, body.to_owned())));
            let route: Arc<Mutex<Option<Route>>> = Arc::default();
            let targets: Arc<Mutex<Vec<String>>> = Arc::default();
            let (counted, answers) = (requests.clone(), answer.clone());
            let (routed, seen) = (route.clone(), targets.clone());
            tokio::spawn(async move {
                loop {
                    let (mut socket, _) = listener.accept().await.unwrap();
                    let (counted, answers) = (counted.clone(), answers.clone());
                    let (routed, seen) = (routed.clone(), seen.clone());
                    tokio::spawn(async move {
                        let mut read = Vec::new();
                        let mut buffer = [0u8; 4096];
                        loop {
                            let Ok(n) = socket.read(&mut buffer).await else {
                                return;
                            };
                            if n == 0 {
                                return;
                            }
                            read.extend_from_slice(&buffer[..n]);
                            // Requests without a body: one per blank line.
                            while let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
                                let head = String::from_utf8_lossy(&read[..end]).into_owned();
                                read.drain(..end + 4);
                                let target = head.split(' ').nth(1).unwrap_or_default().to_owned();
                                let routed =
                                    routed.lock().unwrap().as_ref().and_then(|r| r(&target));
                                seen.lock().unwrap().push(target);
                                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                let (status, body) =
                                    routed.unwrap_or_else(|| answers.lock().unwrap().clone());
                                let response = format!(
                                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n\
                                     content-length: {}\r\n\r\n{body}",
                                    body.len()
                                );
                                if socket.write_all(response.as_bytes()).await.is_err() {
                                    return;
                                }
                            }
                        }
                    });
                }
            });
            Self {
                url,
                requests,
                answer,
                route,
                targets,
            }
        }

        fn requests(&self) -> usize {
            self.requests.load(std::sync::atomic::Ordering::SeqCst)
        }

        /// How many requests went to a path that starts with `path`.
        fn requests_to(&self, path: &str) -> usize {
            let targets = self.targets.lock().unwrap();
            targets.iter().filter(|t| t.starts_with(path)).count()
        }

        fn client(&self) -> crate::litellm::Client {
            crate::litellm::Client::new(crate::litellm::ClientConfig {
                endpoint: self.url.clone(),
                master_key: crate::litellm::Secret::new(String::from("sk-test")),
                ca_pem: None,
                timeout: Duration::from_secs(5),
            })
            .unwrap()
            .background()
        }
    }

    async fn until(what: &str, check: impl Fn() -> bool) {
        let started = std::time::Instant::now();
        while !check() {
            assert!(started.elapsed() < Duration::from_secs(10), "{what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// A due poll with a memo makes the one read again: the same answer
    /// with nothing changed in its namespaces requeues it with the memo
    /// (recorded as a reconciliation), for [`MEMO_POLLS`] polls at most;
    /// a different answer, or a change in either namespace (then without a
    /// read), goes to the controller.
    #[tokio::test]
    async fn a_poll_answered_as_before_needs_no_reconciliation() {
        let proxy = Answering::start(404, r#"{"detail":"no team"}"#).await;
        let client = proxy.client();
        let changes: &'static Changes = Box::leak(Box::default());
        let polls = Polls::with_changes(changes);
        let (reconciled, fire) = fired();
        let polled = Arc::new(Mutex::new(Vec::new()));
        polls.register("team", fire, {
            let polled = polled.clone();
            move |key: &str, memo: &Memo, after, _took, _by_page| {
                polled
                    .lock()
                    .unwrap()
                    .push((key.to_owned(), memo.left, after))
            }
        });
        let scope = changes.scope("tenant", "platform");
        let memo = |probe: crate::litellm::Probe, left| Memo {
            probe,
            client: client.clone(),
            scope,
            since: changes.now(),
            interval: Duration::from_secs(10),
            metrics_id: 7,
            left,
            jitter: timing::DEFAULT_POLL_JITTER_PERCENTAGE,
        };
        let (found, probe) = client.team_info_probed("t", true).await.unwrap();
        assert!(found.is_none());
        let polling = Mutex::new(JoinSet::new());
        let due = || polls.fire_due(now_tick() + 1_000, TICK, &mut polling.lock().unwrap());

        // As before: requeued with the memo, one read each time, until the
        // memo has answered its polls.
        assert!(polls.schedule_with("team", "tenant/t", TICK, TICK, Some(memo(probe.clone(), 2))));
        due();
        until("the first poll", || polled.lock().unwrap().len() == 1).await;
        assert!(polls.has_memo("team", "tenant/t"));
        due();
        until("the second poll", || polled.lock().unwrap().len() == 2).await;
        {
            let polled = polled.lock().unwrap();
            assert_eq!(polled[0].0, "tenant/t");
            assert_eq!([polled[0].1, polled[1].1], [1, 0]);
            assert!(polled
                .iter()
                .all(|(_, _, after)| *after >= Duration::from_secs(10)
                    && *after < Duration::from_secs(12)));
        }
        assert_eq!(proxy.requests(), 3);
        assert!(reconciled.lock().unwrap().is_empty());
        due();
        assert_eq!(
            *reconciled.lock().unwrap(),
            ["tenant/t"],
            "the memo is spent"
        );
        assert_eq!(proxy.requests(), 3, "and not read for");

        // Another answer: to the controller, without a memo.
        assert!(polls.schedule_with("team", "tenant/t", TICK, TICK, Some(memo(probe.clone(), 5))));
        *proxy.answer.lock().unwrap() = (404, r#"{"detail":"no team either"}"#.into());
        due();
        until("the changed answer", || {
            reconciled.lock().unwrap().len() == 2
        })
        .await;
        assert_eq!(proxy.requests(), 4);
        assert!(!polls.is_scheduled("team", "tenant/t"));
        // An answer that changed: the next requeue takes no memo (it
        // would cost a second read if it changed again), the one after
        // does.
        assert!(polls.schedule_with("team", "tenant/t", TICK, TICK, Some(memo(probe.clone(), 5))));
        assert!(polls.is_scheduled("team", "tenant/t") && !polls.has_memo("team", "tenant/t"));
        assert!(polls.schedule_with("team", "tenant/t", TICK, TICK, Some(memo(probe.clone(), 5))));
        assert!(polls.has_memo("team", "tenant/t"));
        polls.cancel("team", "tenant/t");

        // A change in the instance's namespace, then in the resource's: to
        // the controller, without a read.
        *proxy.answer.lock().unwrap() = (404, r#"{"detail":"no team"}"#.into());
        for namespace in ["platform", "tenant"] {
            assert!(polls.schedule_with(
                "team",
                "tenant/t",
                TICK,
                TICK,
                Some(memo(probe.clone(), 5))
            ));
            let secret = k8s_openapi::api::core::v1::Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some("s".into()),
                    namespace: Some(namespace.into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            changes.record(&kube::runtime::watcher::Event::Apply(secret), false);
            due();
        }
        assert_eq!(reconciled.lock().unwrap().len(), 4);
        assert_eq!(proxy.requests(), 4);

        // A change elsewhere leaves the memo standing.
        assert!(polls.schedule_with("team", "tenant/t", TICK, TICK, Some(memo(probe, 5))));
        let elsewhere = k8s_openapi::api::core::v1::ConfigMap {
            metadata: kube::api::ObjectMeta {
                name: Some("c".into()),
                namespace: Some("elsewhere".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        changes.record(&kube::runtime::watcher::Event::Apply(elsewhere), false);
        due();
        until("the poll", || polled.lock().unwrap().len() == 3).await;
        assert_eq!(reconciled.lock().unwrap().len(), 4);
        assert_eq!(proxy.requests(), 5);
    }

    /// The poll queue of a listed kind (`key`, `team`) on an [`Answering`]
    /// proxy: what it handed to the controller, and what it polled
    /// (`namespace/name`, and whether by a page).
    struct ListedQueue {
        kind: &'static str,
        client: crate::litellm::Client,
        changes: &'static Changes,
        polls: Polls,
        reconciled: Arc<Mutex<Vec<String>>>,
        polled: Arc<Mutex<Vec<(String, bool)>>>,
        /// The answered polls whose memo went on knowing its list entry's
        /// text ([`litellm::Probe::listed_entry`]).
        remembered: Arc<Mutex<Vec<String>>>,
    }

    impl ListedQueue {
        fn on(proxy: &Answering, kind: &'static str) -> Self {
            let changes: &'static Changes = Box::leak(Box::default());
            let polls = Polls::with_changes(changes);
            let (reconciled, fire) = fired();
            let polled = Arc::new(Mutex::new(Vec::new()));
            let remembered = Arc::new(Mutex::new(Vec::new()));
            polls.register(kind, fire, {
                let (polled, remembered) = (polled.clone(), remembered.clone());
                move |key: &str, memo: &Memo, _after, _took, by_page| {
                    polled.lock().unwrap().push((key.to_owned(), by_page));
                    if memo.probe.listed_entry().is_some() {
                        remembered.lock().unwrap().push(key.to_owned());
                    }
                }
            });
            Self {
                kind,
                client: proxy.client(),
                changes,
                polls,
                reconciled,
                polled,
                remembered,
            }
        }

        /// The probe of key `t{n}`, read now.
        async fn probe(&self, n: u64) -> crate::litellm::Probe {
            let (found, probe) = self.client.key_info_probed(&format!("t{n}")).await.unwrap();
            assert!(found.is_some() && probe.listed.is_some());
            probe
        }

        /// The memo of key `n` by `probe`, polled every 4 s, with `left`
        /// polls to answer.
        fn memo(&self, probe: crate::litellm::Probe, n: u64, left: u8) -> Memo {
            Memo {
                probe,
                client: self.client.clone(),
                scope: self.changes.scope("tenant", "platform"),
                since: self.changes.now(),
                interval: Duration::from_secs(4),
                metrics_id: n,
                left,
                jitter: 0,
            }
        }

        /// The probe of team `t{n}`, read now without the members' budgets.
        async fn team_probe(&self, n: u64) -> crate::litellm::Probe {
            let (found, probe) = self
                .client
                .team_info_probed(&format!("t{n}"), false)
                .await
                .unwrap();
            assert!(found.is_some());
            probe
        }

        /// Queues `tenant/k{n}` with `memo`, `after` from now.
        fn schedule(&self, n: u64, memo: Memo, after: Duration) {
            let key = format!("tenant/k{n}");
            assert!(self
                .polls
                .schedule_with(self.kind, &key, after, TICK, Some(memo)));
        }

        /// Reads each of `keys` and queues its memo, due at the next tick.
        async fn schedule_read(&self, keys: &[u64], left: u8) {
            for &n in keys {
                let memo = self.memo(self.probe(n).await, n, left);
                self.schedule(n, memo, TICK);
            }
        }
    }

    /// Whether no sweep of `kind`'s is under way.
    fn no_sweep_running(polls: &Polls, kind: &str) -> bool {
        let queue = polls.queue(kind).unwrap();
        let sweeps = queue.sweeps.lock().unwrap();
        sweeps.iter().all(|s| !s.running)
    }

    /// Moves back the start of `kind`'s sweeps by `by`, as if they had
    /// begun that much earlier.
    fn age_sweeps(polls: &Polls, kind: &str, by: Duration) {
        let queue = polls.queue(kind).unwrap();
        for sweep in queue.sweeps.lock().unwrap().iter_mut() {
            sweep.began = sweep.began.map(|b| b - by);
        }
    }

    /// The keys a `/key/list` page lists (by number, each with its
    /// `max_budget`), and the total it says the route lists.
    type Listing = Arc<Mutex<(Vec<(usize, f64)>, u64)>>;

    /// A proxy that serves keys by `listing` ([`key_routes`]), and the
    /// poll queue of keys on it.
    async fn key_queue(listing: (Vec<(usize, f64)>, u64)) -> (Answering, Listing, ListedQueue) {
        let proxy = Answering::start(500, r#"{"detail":"unexpected"}"#).await;
        let listed: Listing = Arc::new(Mutex::new(listing));
        *proxy.route.lock().unwrap() = Some(key_routes(listed.clone()));
        let queue = ListedQueue::on(&proxy, "key");
        (proxy, listed, queue)
    }

    /// Keys `t0`..: their `/key/info` answers (the budget `listed` gives a
    /// listed key, 1.0 otherwise), and a `/key/list` page of those in
    /// `listed`.
    fn key_routes(listed: Listing) -> Route {
        Box::new(move |target: &str| {
            if let Some(token) = target.strip_prefix("/key/info?key=") {
                let budget = listed
                    .lock()
                    .unwrap()
                    .0
                    .iter()
                    .find(|(n, _)| format!("t{n}") == token)
                    .map_or(1.0, |(_, budget)| *budget);
                let body = serde_json::json!({"key": token, "info": {"max_budget": budget}});
                return Some((200, body.to_string()));
            }
            target.starts_with("/key/list?").then(|| {
                let (keys, total) = &*listed.lock().unwrap();
                let keys: Vec<_> = keys
                    .iter()
                    .map(|(n, budget)| serde_json::json!({"token": format!("t{n}"), "max_budget": budget}))
                    .collect();
                let body = serde_json::json!({"keys": keys, "total_count": total});
                (200, body.to_string())
            })
        })
    }

    /// A page is parsed only where its caller needs it: entries of ids not
    /// wanted are left out, and an entry whose text is the one its caller
    /// knows is left unparsed (it is as it was); a sweep so remembers the
    /// text of the entry that answered a memo, with the memo.
    #[tokio::test]
    async fn a_page_parses_only_wanted_entries_whose_text_changed() {
        use crate::litellm::{pages::ListedEntry, Fingerprint, List};
        let (_proxy, listed, queue) = key_queue(((0..3).map(|n| (n, 1.0)).collect(), 3)).await;
        let client = &queue.client;
        /// Wants `ids`, and knows `texts`.
        struct Asking<'a>(&'a [&'a str], HashMap<Fingerprint, String>);
        impl crate::litellm::pages::Wants for Asking<'_> {
            fn known(&self, text: Fingerprint) -> Option<&str> {
                self.1.get(&text).map(String::as_str)
            }
            fn wanted(&self, id: &str) -> bool {
                self.0.contains(&id)
            }
        }
        let first = client
            .listed_page_for(List::Keys, 1, 100, &Asking(&["t0", "t1"], HashMap::new()))
            .await
            .unwrap();
        assert_eq!((first.sent, first.page.total), (3, 3));
        let ids: Vec<&str> = first.page.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["t0", "t1"], "t2 is not wanted");
        assert!(first
            .page
            .entries
            .iter()
            .all(|e| !e.known() && e.fingerprint.is_some()));
        let texts: HashMap<Fingerprint, String> = first
            .page
            .entries
            .iter()
            .map(|e| (e.text, e.id.clone()))
            .collect();

        listed.lock().unwrap().0[1].1 = 9.0;
        let second = client
            .listed_page_for(
                List::Keys,
                1,
                100,
                &Asking(&["t0", "t1", "t2"], texts.clone()),
            )
            .await
            .unwrap();
        let text_of = |id: &str| *texts.iter().find(|(_, known)| *known == id).unwrap().0;
        let entry =
            |id: &str| -> &ListedEntry { second.page.entries.iter().find(|e| e.id == id).unwrap() };
        assert!(entry("t0").known(), "the same text: not parsed");
        assert_eq!(entry("t0").fingerprint, None);
        assert!(
            !client.prefetch(entry("t0").clone(), second.asked),
            "nothing to stand for a read"
        );
        assert!(!entry("t1").known(), "its text changed: parsed");
        assert_eq!(entry("t0").text, text_of("t0"));
        assert_ne!(entry("t1").text, text_of("t1"));
        assert_ne!(entry("t1").fingerprint, first.page.entries[1].fingerprint);
        assert!(!entry("t2").known() && entry("t2").fingerprint.is_some());

        // A sweep's answered memos go on with the text of their entries.
        queue.schedule_read(&[0, 1, 2], 5).await;
        let mut polling = JoinSet::new();
        queue.polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the sweep", || queue.polled.lock().unwrap().len() == 3).await;
        assert!(queue
            .polled
            .lock()
            .unwrap()
            .iter()
            .all(|(_, by_page)| *by_page));
        let mut remembered = queue.remembered.lock().unwrap().clone();
        remembered.sort();
        assert_eq!(remembered, ["tenant/k0", "tenant/k1", "tenant/k2"]);
    }

    /// The due memos of listed keys of one proxy, with those falling due
    /// within half their interval, are answered by one page of `/key/list`
    /// where they are at least as many as its pages: an entry as the memo's
    /// read found it requeues with the memo; one that changed, or a key
    /// missing from the pages, goes to the controller (the missing one
    /// reads on its own there). Fewer memos than pages, or a sweep begun
    /// less than half an interval ago, and each polls by its own read.
    #[tokio::test]
    async fn listed_memos_are_answered_by_a_sweep_of_pages() {
        let (proxy, listed, queue) = key_queue(((0..4).map(|n| (n, 1.0)).collect(), 4)).await;
        let ListedQueue {
            client,
            polls,
            reconciled,
            polled,
            ..
        } = &queue;
        let interval = Duration::from_secs(4);
        let mut probes = Vec::new();
        for n in 0..4 {
            probes.push(queue.probe(n).await);
        }
        let memo = |n: usize| queue.memo(probes[n].clone(), n as u64, 5);
        let polling = Mutex::new(JoinSet::new());
        let infos = || proxy.requests_to("/key/info");
        let pages = || proxy.requests_to("/key/list");
        assert_eq!(infos(), 4);

        // Two due, one due within half the interval, one later: the first
        // three in one page, the last left for its tick.
        let t0 = now_tick();
        for (n, after) in [(0, TICK), (1, TICK), (2, 3 * TICK), (3, 10 * TICK)] {
            assert!(polls.schedule_with(
                "key",
                &format!("tenant/k{n}"),
                after,
                TICK,
                Some(memo(n))
            ));
        }
        polls.fire_due(t0 + 2, TICK, &mut polling.lock().unwrap());
        until("the sweep", || polled.lock().unwrap().len() == 3).await;
        let mut answered = polled.lock().unwrap().clone();
        answered.sort();
        assert_eq!(
            answered,
            [0, 1, 2].map(|n| (format!("tenant/k{n}"), true)),
            "answered by the page"
        );
        assert_eq!((infos(), pages()), (4, 1), "one read for three polls");
        assert!((0..3).all(|n| polls.has_memo("key", &format!("tenant/k{n}"))));
        assert!(polls.has_memo("key", "tenant/k3"), "not due yet: not taken");
        assert!(reconciled.lock().unwrap().is_empty());

        // A sweep begun less than half an interval ago: the due memo waits
        // for the next, a tick at a time, without a read.
        assert!(polls.schedule_with("key", "tenant/k0", TICK, TICK, Some(memo(0))));
        let t1 = now_tick() + 1;
        polls.fire_due(t1, TICK, &mut polling.lock().unwrap());
        assert!(polls.has_memo("key", "tenant/k0"), "waits with its memo");
        polls.fire_due(t1 + 1, TICK, &mut polling.lock().unwrap());
        assert!(polls.has_memo("key", "tenant/k0"));
        assert_eq!(polled.lock().unwrap().len(), 3);
        assert_eq!((infos(), pages()), (4, 1));

        // Half an interval on: k1 changed in LiteLLM and k2 is missing
        // from the pages; both go to the controller, k1 with its entry, the
        // rest are answered.
        age_sweeps(polls, "key", interval);
        *listed.lock().unwrap() = (vec![(0, 1.0), (1, 9.0), (3, 1.0)], 3);
        for n in 0..4 {
            assert!(polls.schedule_with("key", &format!("tenant/k{n}"), TICK, TICK, Some(memo(n))));
        }
        polls.fire_due(now_tick() + 1, TICK, &mut polling.lock().unwrap());
        until("the second sweep", || reconciled.lock().unwrap().len() == 2).await;
        until("its answers", || polled.lock().unwrap().len() == 5).await;
        assert_eq!(*reconciled.lock().unwrap(), ["tenant/k1", "tenant/k2"]);
        assert_eq!((infos(), pages()), (4, 2));
        // The reconciliation k1 went to observes the page's entry instead
        // of a read of its own, once.
        let (found, _) = client.key_info_probed("t1").await.unwrap();
        assert_eq!(found.unwrap().max_budget, Some(9.0));
        assert_eq!(infos(), 4, "the page stood for the read");
        client.key_info_probed("t1").await.unwrap();
        assert_eq!(infos(), 5, "for one read");
        // A changed answer the page stood for cost no read: the key keeps
        // its memos (a key in use, whose spend changes, is polled by pages).
        assert!(polls.schedule_with("key", "tenant/k1", TICK, TICK, Some(memo(1))));
        assert!(
            polls.has_memo("key", "tenant/k1"),
            "a changed answer from a page keeps the memos"
        );
        polls.cancel("key", "tenant/k1");

        // The route lists 1,000 keys (10 pages): two memos poll on their own.
        age_sweeps(polls, "key", interval);
        *listed.lock().unwrap() = (vec![(0, 1.0)], 1000);
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling.lock().unwrap());
        until("the third sweep", || polled.lock().unwrap().len() == 6).await;
        until("the third sweep's end", || no_sweep_running(polls, "key")).await;
        assert_eq!((infos(), pages()), (5, 3));
        age_sweeps(polls, "key", interval);
        for n in [0, 3] {
            polls.cancel("key", &format!("tenant/k{n}"));
            assert!(polls.schedule_with("key", &format!("tenant/k{n}"), TICK, TICK, Some(memo(n))));
        }
        polls.fire_due(now_tick() + 1, TICK, &mut polling.lock().unwrap());
        until("two polls of their own", || {
            polled.lock().unwrap().len() == 8
        })
        .await;
        assert_eq!((infos(), pages()), (7, 3), "fewer memos than pages");
    }

    /// A spent memo (it answered its polls) of a listed key is swept all
    /// the same, and the reconciliation in full it goes to observes the
    /// page's entry instead of a read, unless a write through the proxy's
    /// client began since the page was asked.
    #[tokio::test]
    async fn a_spent_memo_reconciles_from_its_page_unless_a_write_came_between() {
        let (proxy, _listed, queue) = key_queue((vec![(0, 1.0), (1, 1.0)], 2)).await;
        let ListedQueue {
            client,
            polls,
            reconciled,
            ..
        } = &queue;
        queue.schedule_read(&[0, 1], 0).await;
        let mut polling = JoinSet::new();
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("both reconciled", || reconciled.lock().unwrap().len() == 2).await;
        assert_eq!(proxy.requests_to("/key/list"), 1);
        assert_eq!(proxy.requests_to("/key/info"), 2, "the memos' reads");

        let (found, probe) = client.key_info_probed("t0").await.unwrap();
        assert!(found.is_some());
        assert_eq!(
            proxy.requests_to("/key/info"),
            2,
            "the page stood for the read"
        );
        // Its probe knows the text of the entry it came from, so the next
        // sweep finds the same entry without parsing it.
        let page = client
            .listed_page(litellm::List::Keys, 1, litellm::pages::MAX_PAGE_SIZE)
            .await
            .unwrap();
        let t0 = page.page.entries.iter().find(|e| e.id == "t0").unwrap();
        assert_eq!(probe.listed_entry(), Some(t0.text));
        // A write, even one that fails: the other entry stands for nothing.
        let write = client
            .key_update("t1", &crate::litellm::KeyRequest::default())
            .await;
        assert!(write.is_err());
        client.key_info_probed("t1").await.unwrap();
        assert_eq!(proxy.requests_to("/key/info"), 3, "read after a write");
    }

    /// Moves back the moment the last first poll of `kind` was queued by
    /// `by`, as if no other had been queued since.
    fn age_first_polls(polls: &Polls, kind: &str, by: Duration) {
        let queue = polls.queue(kind).unwrap();
        let mut due = queue.lock();
        due.unread_queued = due.unread_queued.map(|at| at - by);
    }

    /// A new process's first polls (memos of reads not made yet, as the
    /// reconciler queues them for up-to-date keys and teams): they wait
    /// while others are still being queued, then one sweep of pages hands
    /// them all to the controller, each with its page's entry standing for
    /// its read; no key is read on its own. The reconciliation each then
    /// begins learns the queue brought it (so it reconciles in full, not
    /// into another first poll). Two objects under one id both go to the
    /// controller. First polls that come after a sweep began, fewer than
    /// the route's pages, read on their own at once rather than wait.
    #[tokio::test]
    async fn first_polls_wait_for_each_other_and_are_answered_by_one_sweep() {
        let (proxy, listed, queue) = key_queue(((0..6).map(|n| (n, 1.0)).collect(), 6)).await;
        let (client, polls) = (&queue.client, &queue.polls);
        let (reconciled, polled) = (&queue.reconciled, &queue.polled);
        let first = |n: u64, id: u64| {
            let probe = crate::litellm::Client::key_probe_unread(&format!("t{id}"));
            assert!(probe.is_unread() && probe.listed.is_some());
            queue.memo(probe, n, 0)
        };
        let mut polling = JoinSet::new();
        for n in 0..3 {
            queue.schedule(n, first(n, n), TICK);
        }
        assert!(
            !polls.has_memo("key", "tenant/k0"),
            "a first poll is no memo of a read"
        );
        // Others still being queued: the first ones wait, reading nothing.
        polls.fire_due(now_tick() + 2, TICK, &mut polling);
        assert!((0..3).all(|n| polls.is_scheduled("key", &format!("tenant/k{n}"))));
        assert_eq!(proxy.requests(), 0);
        for n in 3..6 {
            queue.schedule(n, first(n, n), TICK);
        }
        // k6 claims t5 too.
        queue.schedule(6, first(6, 5), TICK);
        age_first_polls(polls, "key", TICK);
        polls.fire_due(now_tick() + 4, TICK, &mut polling);
        until("every first poll handed over", || {
            reconciled.lock().unwrap().len() == 7
        })
        .await;
        let mut handed = reconciled.lock().unwrap().clone();
        handed.sort();
        assert_eq!(
            handed,
            (0..7).map(|n| format!("tenant/k{n}")).collect::<Vec<_>>()
        );
        assert_eq!(
            (
                proxy.requests_to("/key/list"),
                proxy.requests_to("/key/info")
            ),
            (1, 0),
            "one page, no reads"
        );
        assert!(
            polled.lock().unwrap().is_empty(),
            "none counted as an unchanged poll"
        );
        // Each reconciliation begins brought by the queue, and observes the
        // page's entry: no read of its own.
        for n in 0..5 {
            assert_eq!(polls.cancel("key", &format!("tenant/k{n}")), Brought::Fired);
            assert!(client
                .key_info_probed(&format!("t{n}"))
                .await
                .unwrap()
                .0
                .is_some());
        }
        assert_eq!(
            proxy.requests_to("/key/info"),
            0,
            "the page stood for five reads"
        );
        assert_eq!(polls.cancel("key", "tenant/k9"), Brought::Elsewhere);
        queue.schedule(9, queue.memo(queue.probe(9).await, 9, 5), 10 * TICK);
        assert_eq!(polls.cancel("key", "tenant/k9"), Brought::Requeued);
        // A watch brings it while its first poll waits: still no read made.
        queue.schedule(9, first(9, 9), TICK);
        assert_eq!(polls.cancel("key", "tenant/k9"), Brought::Elsewhere);

        // A sweep finds the route lists 1,000 keys (10 pages); a first poll
        // that comes just after it began reads on its own at once.
        *listed.lock().unwrap() = ((0..6).map(|n| (n, 1.0)).collect(), 1000);
        age_sweeps(polls, "key", Duration::from_secs(60));
        queue.schedule(1, first(1, 1), TICK);
        queue.schedule(2, first(2, 2), TICK);
        age_first_polls(polls, "key", TICK);
        polls.fire_due(now_tick() + 6, TICK, &mut polling);
        until("the sweep's end", || {
            reconciled.lock().unwrap().len() == 9 && no_sweep_running(polls, "key")
        })
        .await;
        let pages = proxy.requests_to("/key/list");
        queue.schedule(3, first(3, 3), TICK);
        age_first_polls(polls, "key", TICK);
        polls.fire_due(now_tick() + 8, TICK, &mut polling);
        assert_eq!(reconciled.lock().unwrap().len(), 10, "handed over at once");
        assert_eq!(proxy.requests_to("/key/list"), pages, "no sweep for it");
        assert!(!polls.is_scheduled("key", "tenant/k3"));
    }

    /// A page too large to read (1 MiB: keys with much metadata) leaves
    /// the keys it would list to their own reads, and the sweep reads on:
    /// no tenant's key can make every poll of the proxy fall back to reads.
    #[tokio::test]
    async fn a_page_too_large_leaves_its_keys_to_their_own_reads() {
        let proxy = Answering::start(500, r#"{"detail":"unexpected"}"#).await;
        *proxy.route.lock().unwrap() = Some(Box::new(|target: &str| {
            if let Some(token) = target.strip_prefix("/key/info?key=") {
                let body = serde_json::json!({"key": token, "info": {"max_budget": 1.0}});
                return Some((200, body.to_string()));
            }
            let page = target.strip_prefix("/key/list?")?;
            let page: usize = page
                .split('&')
                .find_map(|pair| pair.strip_prefix("page="))?
                .parse()
                .ok()?;
            let keys: Vec<_> = (100 * (page - 1)..(100 * page).min(250))
                .map(|n| {
                    let mut key = serde_json::json!({"token": format!("t{n}"), "max_budget": 1.0});
                    if page == 2 {
                        key["metadata"] = serde_json::json!({"padding": "x".repeat(20_000)});
                    }
                    key
                })
                .collect();
            Some((
                200,
                serde_json::json!({"keys": keys, "total_count": 250}).to_string(),
            ))
        }));
        let queue = ListedQueue::on(&proxy, "key");
        let ListedQueue {
            polls,
            reconciled,
            polled,
            ..
        } = &queue;
        queue.schedule_read(&[5, 150, 240], 5).await;
        let mut polling = JoinSet::new();
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the sweep", || {
            polled.lock().unwrap().len() == 2 && reconciled.lock().unwrap().len() == 1
        })
        .await;
        let mut answered = polled.lock().unwrap().clone();
        answered.sort();
        assert_eq!(
            answered,
            [
                ("tenant/k240".to_owned(), true),
                ("tenant/k5".to_owned(), true)
            ]
        );
        assert_eq!(*reconciled.lock().unwrap(), ["tenant/k150"]);
        assert_eq!(proxy.requests_to("/key/list"), 3, "every page asked once");
    }

    /// A listed key polled on its own (fewer due than the route's pages)
    /// whose answer changed goes to the controller with that answer kept:
    /// its reconciliation reads nothing, and its next requeue takes a memo
    /// again (a key in use costs one read a poll, not two).
    #[tokio::test]
    async fn a_changed_answer_of_a_poll_on_its_own_stands_for_the_reconciliations_read() {
        let (proxy, listed, queue) = key_queue((vec![(0, 1.0)], 1000)).await;
        let ListedQueue {
            client,
            polls,
            reconciled,
            polled,
            ..
        } = &queue;
        let probe = queue.probe(0).await;
        // The first sweep learns that the route lists ten pages.
        queue.schedule(0, queue.memo(probe.clone(), 0, 5), TICK);
        let mut polling = JoinSet::new();
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the sweep", || polled.lock().unwrap().len() == 1).await;
        age_sweeps(polls, "key", Duration::from_secs(4));
        polls.cancel("key", "tenant/k0");

        queue.schedule(0, queue.memo(probe.clone(), 0, 5), TICK);
        listed.lock().unwrap().0[0].1 = 2.0;
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the poll", || reconciled.lock().unwrap().len() == 1).await;
        assert_eq!(proxy.requests_to("/key/list"), 1, "ten pages for one key");
        assert_eq!(
            proxy.requests_to("/key/info"),
            2,
            "the probe's read and the poll's"
        );
        let (found, _) = client.key_info_probed("t0").await.unwrap();
        assert_eq!(found.unwrap().max_budget, Some(2.0));
        assert_eq!(
            proxy.requests_to("/key/info"),
            2,
            "the poll's answer stood for the read"
        );
        queue.schedule(0, queue.memo(probe, 0, 5), TICK);
        assert!(polls.has_memo("key", "tenant/k0"), "no memo skipped");
    }

    /// Teams are swept by pages of `/v2/team/list` as keys are by
    /// `/key/list`, where the entry says all `/team/info` would: a team
    /// with an object permission or member defaults is never listed, nor
    /// one whose reader compares the members' budgets (only `/team/info`
    /// has them), and an entry that gained an object permission since the
    /// read goes to the controller, which reads the team on its own.
    #[tokio::test]
    async fn teams_are_swept_by_pages_where_an_entry_says_all_a_read_would() {
        let proxy = Answering::start(500, r#"{"detail":"unexpected"}"#).await;
        // Team `t{n}`'s budget, and the id of its object permission.
        type Teams = Arc<Mutex<Vec<(usize, f64, Option<&'static str>)>>>;
        let teams: Teams = Arc::new(Mutex::new(vec![
            (0, 1.0, None),
            (1, 1.0, None),
            (2, 1.0, None),
        ]));
        let table = teams.clone();
        *proxy.route.lock().unwrap() = Some(Box::new(move |target: &str| {
            let teams = table.lock().unwrap();
            let row = |n: usize, budget: f64| serde_json::json!({"team_id": format!("t{n}"), "max_budget": budget, "metadata": {}});
            if let Some(id) = target.strip_prefix("/team/info?team_id=") {
                let &(n, budget, permission) =
                    teams.iter().find(|(n, ..)| format!("t{n}") == id)?;
                let mut info = row(n, budget);
                if permission.is_some() {
                    info["object_permission"] = serde_json::json!({"mcp_servers": ["m"]});
                }
                let body = serde_json::json!({"team_info": info, "team_memberships": []});
                return Some((200, body.to_string()));
            }
            target.starts_with("/v2/team/list?").then(|| {
                let listed: Vec<_> = teams
                    .iter()
                    .map(|&(n, budget, permission)| {
                        let mut entry = row(n, budget);
                        entry["object_permission_id"] = serde_json::json!(permission);
                        entry
                    })
                    .collect();
                let body = serde_json::json!({"teams": listed, "total": teams.len()});
                (200, body.to_string())
            })
        }));
        let queue = ListedQueue::on(&proxy, "team");
        let ListedQueue {
            client,
            polls,
            reconciled,
            polled,
            ..
        } = &queue;
        let infos = || proxy.requests_to("/team/info");
        let pages = || proxy.requests_to("/v2/team/list");

        // Who is listed: not a team whose reader wants the members'
        // budgets, nor one with an object permission.
        let (_, probe) = client.team_info_probed("t2", true).await.unwrap();
        assert!(probe.listed.is_none(), "the members' budgets are read");
        teams.lock().unwrap()[2].2 = Some("op");
        let (_, probe) = client.team_info_probed("t2", false).await.unwrap();
        assert!(probe.listed.is_none(), "an object permission is read");
        for n in [0, 1] {
            let probe = queue.team_probe(n).await;
            assert_eq!(
                probe.listed.map(|l| l.list),
                Some(crate::litellm::List::Teams)
            );
            queue.schedule(n, queue.memo(probe, n, 5), TICK);
        }
        assert_eq!(infos(), 4);

        // Team t0 is as read; t1 gained an object permission in LiteLLM.
        teams.lock().unwrap()[1].2 = Some("op");
        let mut polling = JoinSet::new();
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the sweep", || {
            polled.lock().unwrap().len() == 1 && reconciled.lock().unwrap().len() == 1
        })
        .await;
        assert_eq!(*polled.lock().unwrap(), [("tenant/k0".to_owned(), true)]);
        assert_eq!(*reconciled.lock().unwrap(), ["tenant/k1"]);
        assert_eq!((infos(), pages()), (4, 1), "one page for two polls");
        // The entry could not stand for the read: the reconciliation reads.
        let (found, probe) = client.team_info_probed("t1", false).await.unwrap();
        assert!(found.unwrap().object_permission.is_some());
        assert!(probe.listed.is_none());
        assert_eq!(infos(), 5);

        // t0's budget changed: the entry stands for its reconciliation's
        // read (without the members' budgets), which reads nothing.
        teams.lock().unwrap()[0].1 = 7.0;
        age_sweeps(polls, "team", Duration::from_secs(4));
        polls.cancel("team", "tenant/k0");
        queue.schedule(0, queue.memo(queue.team_probe(0).await, 0, 5), TICK);
        teams.lock().unwrap()[0].1 = 8.0;
        polls.fire_due(now_tick() + 1_000, TICK, &mut polling);
        until("the second sweep", || reconciled.lock().unwrap().len() == 2).await;
        assert_eq!((infos(), pages()), (6, 2));
        let (found, _) = client.team_info_probed("t0", false).await.unwrap();
        assert_eq!(found.unwrap().max_budget, Some(8.0));
        assert_eq!(infos(), 6, "the page stood for the read");
    }

    #[test]
    fn a_poll_is_put_off_while_busy_and_at_most_so_long() {
        let put_off = PutOff::default();
        assert!(!put_off.put_off("a", false, Duration::from_secs(60)));
        assert!(put_off.put_off("a", true, Duration::from_secs(60)));
        assert!(put_off.put_off("a", true, Duration::from_secs(60)));
        assert!(
            !put_off.put_off("a", true, Duration::ZERO),
            "put off long enough"
        );
        // Not busy any more: the count starts again.
        assert!(!put_off.put_off("a", false, Duration::from_secs(60)));
        assert!(put_off.put_off("a", true, Duration::from_millis(500)));
    }

    #[test]
    fn a_memo_answers_polls_only_within_the_sync_period() {
        let minute = Duration::from_secs(60);
        assert_eq!(memo_polls(minute, Duration::from_secs(3600)), MEMO_POLLS);
        assert_eq!(memo_polls(minute, Duration::from_secs(300)), 4);
        assert_eq!(memo_polls(minute, Duration::from_secs(119)), 0);
        assert_eq!(memo_polls(minute, Duration::from_secs(30)), 0);
    }
}
