//! How the clients of one proxy share it: a limit on the requests in flight
//! that adapts to how fast the proxy answers, and a pause while the proxy's
//! last `Retry-After` runs.
//!
//! The limit follows additive increase, multiplicative decrease (TCP's rule,
//! and that of most adaptive concurrency limiters): every prompt answer
//! raises it by `1/limit` (about one per round of requests) up to the
//! configured maximum; an answer slower than the `slow` threshold, a
//! timeout, a failed connection or a 429/503 cuts it to 70% (at most once
//! per `slow`, so one burst of slow answers is one cut), down to 1. A proxy
//! that slows down under load so gets fewer requests at once before any of
//! them runs into the client's timeout, and a recovered one gets its
//! maximum back within a few hundred requests.
//!
//! Two requests in a row that got no answer at all (each timed out, or its
//! connection failed) set the limit to 1, as TCP's retransmission timeout
//! sets its window to one segment, and until the proxy answers again no
//! request waits for a slot: with none free it fails at once. (One such
//! request alone is a cut to 70%, so that one reset connection of a busy
//! proxy does not fail every request queued for it.) A proxy that accepts
//! connections and never answers so holds one request at a time, and the
//! reconciliations of the provider's other proxies are not held up queueing
//! behind it (they share the provider's per-kind limit on reconciliations
//! at once).
//!
//! Background requests (polls of objects that are up to date) take a slot
//! only while no other request waits for one: a burst of new objects goes
//! first, the polls of the objects already done wait.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::Error;

/// Requests in a row without an answer after which a proxy is taken to
/// have stopped answering (see the module).
const SILENT_AFTER: u32 = 2;

/// Shared by every client of one proxy; see the module.
#[derive(Debug)]
pub struct Pacing {
    state: Mutex<State>,
    /// Wakes requests waiting for a slot.
    freed: Notify,
    max: usize,
    slow: Duration,
    pause: Mutex<Option<Pause>>,
}

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    /// The last cut: the next waits `slow`.
    cut: Option<Instant>,
    /// The lowest the limit has been.
    lowest: f64,
    /// Requests that are not background ones and wait for a slot.
    urgent_waiting: usize,
    /// When the last one that is not a background one got its slot.
    last_urgent: Option<Instant>,
    /// The requests in a row, up to the last to end, that got no answer.
    unanswered: u32,
}

#[derive(Debug)]
struct Pause {
    until: Instant,
    /// What the proxy asked for, and said, for the error text.
    asked: Duration,
    detail: String,
}

/// A slot for one request; freed when dropped.
pub struct Permit {
    pacing: Arc<Pacing>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.pacing.state().in_flight -= 1;
        self.pacing.freed.notify_waiters();
    }
}

/// An urgent request counted as waiting, uncounted however it ends
/// (given a slot, or dropped with its reconciliation).
struct Waiting<'a> {
    pacing: &'a Pacing,
    counted: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.counted {
            self.pacing.state().urgent_waiting -= 1;
            // Background requests may go now.
            self.pacing.freed.notify_waiters();
        }
    }
}

/// What the limit is and has been, for metrics and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub limit: f64,
    pub lowest: f64,
    pub max: usize,
}

impl Pacing {
    /// At most `max_in_flight` (at least 1) requests at once; answers slower
    /// than `slow` lower the limit.
    pub fn new(max_in_flight: usize, slow: Duration) -> Arc<Self> {
        let max = max_in_flight.max(1);
        Arc::new(Self {
            state: Mutex::new(State {
                limit: max as f64,
                in_flight: 0,
                cut: None,
                lowest: max as f64,
                urgent_waiting: 0,
                last_urgent: None,
                unanswered: 0,
            }),
            freed: Notify::new(),
            max,
            slow,
            pause: Mutex::new(None),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn limits(&self) -> Limits {
        let state = self.state();
        Limits {
            limit: state.limit,
            lowest: state.lowest,
            max: self.max,
        }
    }

    /// Waits for a slot under the current limit (before the request's
    /// timeout starts); a `background` request also waits while any other
    /// does. While the proxy has not answered since a request got no answer,
    /// nothing waits: with no slot free, request `op` fails at once.
    pub async fn acquire(
        self: &Arc<Self>,
        background: bool,
        op: &'static str,
    ) -> Result<Permit, Error> {
        let mut waiting = Waiting {
            pacing: self,
            counted: false,
        };
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the check, so a slot freed in between wakes
            // this request.
            freed.as_mut().enable();
            {
                let mut state = self.state();
                let free = (state.in_flight as f64) < state.limit.floor().max(1.0);
                let others_first = background && state.urgent_waiting > 0;
                if free && !others_first {
                    state.in_flight += 1;
                    if !background {
                        state.last_urgent = Some(Instant::now());
                    }
                    if waiting.counted {
                        state.urgent_waiting -= 1;
                        waiting.counted = false;
                    }
                    return Ok(Permit {
                        pacing: self.clone(),
                    });
                }
                if state.unanswered >= SILENT_AFTER {
                    return Err(Error::Retryable {
                        op,
                        detail: format!(
                            "not sent: the proxy did not answer its last request, and {} \
                             request(s) to it still wait for an answer",
                            state.in_flight
                        ),
                    });
                }
                if !background && !waiting.counted {
                    state.urgent_waiting += 1;
                    waiting.counted = true;
                }
            }
            freed.await;
        }
    }

    /// Whether requests other than background ones wait, or one started
    /// within `within`: the proxy is busy making or changing objects.
    pub fn busy(&self, within: Duration) -> bool {
        let state = self.state();
        state.urgent_waiting > 0 || state.last_urgent.is_some_and(|at| at.elapsed() < within)
    }

    /// A request got no answer (a timeout, a failed connection): a cut, and
    /// from the second in a row the limit drops to 1 and nothing waits for
    /// a slot until an answer comes.
    pub fn unanswered(&self) {
        let mut state = self.state();
        state.unanswered = state.unanswered.saturating_add(1);
        if state.unanswered < SILENT_AFTER {
            self.cut(&mut state);
            return;
        }
        state.limit = 1.0;
        state.lowest = 1.0;
        state.cut = Some(Instant::now());
        drop(state);
        // Whoever waits now fails at once instead.
        self.freed.notify_waiters();
    }

    /// How an answered request went: `elapsed` from sending to the whole
    /// answer, and whether it asked to slow down (or could not be read).
    pub fn answered(&self, elapsed: Duration, congested: bool) {
        let mut state = self.state();
        state.unanswered = 0;
        if congested || elapsed > self.slow {
            self.cut(&mut state);
        } else if elapsed <= self.slow / 2 {
            state.limit = (state.limit + 1.0 / state.limit).min(self.max as f64);
        }
    }

    /// The limit to 70%, at most once per `slow`, down to 1.
    fn cut(&self, state: &mut State) {
        let now = Instant::now();
        if state
            .cut
            .is_none_or(|cut| now.duration_since(cut) >= self.slow)
        {
            state.limit = (state.limit * 0.7).max(1.0);
            state.lowest = state.lowest.min(state.limit);
            state.cut = Some(now);
        }
    }

    fn pause(&self) -> MutexGuard<'_, Option<Pause>> {
        self.pause.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The error for a request that must not go out yet.
    pub(super) fn paused(&self, op: &'static str) -> Option<Error> {
        let pause = self.pause();
        let pause = pause.as_ref()?;
        let remaining = pause.until.checked_duration_since(Instant::now())?;
        Some(Error::Throttled {
            op,
            detail: pause.detail.clone(),
            asked: pause.asked,
            retry_after: remaining,
        })
    }

    pub(super) fn throttled(&self, asked: Duration, detail: &str) {
        let until = Instant::now() + asked;
        let mut pause = self.pause();
        if pause.as_ref().is_none_or(|p| p.until < until) {
            *pause = Some(Pause {
                until,
                asked,
                detail: detail.to_owned(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slow_answers_cut_the_limit_and_prompt_ones_restore_it() {
        let slow = Duration::from_millis(50);
        let pacing = Pacing::new(10, slow);
        assert_eq!(pacing.limits().limit, 10.0);
        pacing.answered(Duration::from_millis(80), false);
        assert_eq!(pacing.limits().limit, 7.0);
        // A burst of slow answers is one cut.
        pacing.answered(Duration::from_millis(80), false);
        assert_eq!(pacing.limits().limit, 7.0);
        tokio::time::sleep(slow).await;
        pacing.answered(Duration::from_millis(1), true);
        assert!((pacing.limits().limit - 4.9).abs() < 1e-9);
        // Answers between slow/2 and slow change nothing.
        pacing.answered(Duration::from_millis(30), false);
        assert!((pacing.limits().limit - 4.9).abs() < 1e-9);
        for _ in 0..200 {
            pacing.answered(Duration::from_millis(1), false);
        }
        let limits = pacing.limits();
        assert_eq!(limits.limit, 10.0);
        assert!((limits.lowest - 4.9).abs() < 1e-9);
    }

    #[tokio::test]
    async fn background_requests_give_way_while_others_wait() {
        let pacing = Pacing::new(1, Duration::from_secs(1));
        let first = pacing.acquire(false, "test").await.unwrap();
        let urgent = tokio::spawn({
            let pacing = pacing.clone();
            async move { pacing.acquire(false, "test").await.unwrap() }
        });
        let background = tokio::spawn({
            let pacing = pacing.clone();
            async move { pacing.acquire(true, "test").await.unwrap() }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(first);
        // The slot goes to the urgent request, however the two were woken.
        let urgent = tokio::time::timeout(Duration::from_secs(1), urgent)
            .await
            .expect("the urgent request gets the slot")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!background.is_finished(), "the background one still waits");
        drop(urgent);
        tokio::time::timeout(Duration::from_secs(1), background)
            .await
            .expect("then the background one")
            .unwrap();
        // A waiting urgent request that gives up lets background ones go.
        let held = pacing.acquire(false, "test").await.unwrap();
        let gave_up =
            tokio::time::timeout(Duration::from_millis(50), pacing.acquire(false, "test")).await;
        assert!(gave_up.is_err());
        assert_eq!(pacing.state().urgent_waiting, 0);
        drop(held);
        tokio::time::timeout(Duration::from_secs(1), pacing.acquire(true, "test"))
            .await
            .expect("nothing urgent waits")
            .expect("a slot");
    }

    #[tokio::test]
    async fn no_more_requests_in_flight_than_the_limit() {
        let pacing = Pacing::new(3, Duration::from_millis(10));
        let held: Vec<Permit> = vec![
            pacing.acquire(false, "test").await.unwrap(),
            pacing.acquire(false, "test").await.unwrap(),
            pacing.acquire(false, "test").await.unwrap(),
        ];
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), pacing.acquire(false, "test")).await;
        assert!(waiting.is_err(), "a fourth waits");
        // A cut below what is in flight lets nothing new out until enough
        // requests finish.
        pacing.answered(Duration::from_secs(1), false);
        assert_eq!(pacing.limits().limit.floor(), 2.0);
        let mut held = held;
        held.pop();
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), pacing.acquire(false, "test")).await;
        assert!(waiting.is_err(), "still two in flight under a limit of 2");
        held.pop();
        let next =
            tokio::time::timeout(Duration::from_secs(1), pacing.acquire(false, "test")).await;
        assert!(
            next.is_ok(),
            "a slot freed under the limit wakes the waiter"
        );
    }

    #[tokio::test]
    async fn a_proxy_that_did_not_answer_gets_one_request_and_no_queue_until_it_answers() {
        let pacing = Pacing::new(10, Duration::from_secs(1));
        let held: Vec<Permit> = vec![
            pacing.acquire(false, "test").await.unwrap(),
            pacing.acquire(false, "test").await.unwrap(),
        ];
        let waiting = tokio::spawn({
            let pacing = pacing.clone();
            async move {
                // Waits: the limit is not reached yet, so it gets a slot.
                pacing.acquire(false, "test").await.map(drop)
            }
        });
        waiting.await.unwrap().unwrap();
        // One request times out: a cut, and requests still wait their turn.
        pacing.unanswered();
        assert_eq!(pacing.limits().limit, 7.0);
        let waits = tokio::time::timeout(Duration::from_millis(50), pacing.acquire(false, "test"));
        assert!(waits.await.unwrap().is_ok(), "a slot under the limit of 7");
        // A second in a row: the limit is 1, and with others still out,
        // nothing is free and nothing waits.
        pacing.unanswered();
        assert_eq!(pacing.limits().limit, 1.0);
        let refused = tokio::time::timeout(
            Duration::from_millis(50),
            pacing.acquire(false, "POST /team/new"),
        )
        .await
        .expect("fails at once instead of waiting");
        let Err(Error::Retryable { op, detail }) = refused else {
            panic!("a retryable error")
        };
        assert_eq!(op, "POST /team/new");
        assert!(detail.contains("did not answer"), "{detail}");
        let background =
            tokio::time::timeout(Duration::from_millis(50), pacing.acquire(true, "test"))
                .await
                .expect("background requests do not wait either");
        assert!(background.is_err());
        // Once nothing is in flight, one request goes: the next probe.
        drop(held);
        let probe = pacing.acquire(false, "test").await.expect("a slot");
        assert!(pacing.acquire(false, "test").await.is_err(), "only one");
        // A waiter queued before the proxy went silent is told at once.
        drop(probe);
        pacing.answered(Duration::from_millis(1), false);
        assert_eq!(pacing.limits().limit, 2.0);
        let first = [
            pacing.acquire(false, "test").await.unwrap(),
            pacing.acquire(false, "test").await.unwrap(),
        ];
        let queued = tokio::spawn({
            let pacing = pacing.clone();
            async move { pacing.acquire(false, "test").await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!queued.is_finished(), "an answering proxy's requests wait");
        pacing.unanswered();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!queued.is_finished(), "one unanswered request: still waits");
        pacing.unanswered();
        let told = tokio::time::timeout(Duration::from_secs(1), queued)
            .await
            .expect("woken when the proxy is known silent")
            .unwrap();
        assert!(told.is_err());
        drop(first);
        // An answer ends it: requests wait for slots again, and the limit
        // grows back.
        pacing.answered(Duration::from_millis(1), false);
        let one = pacing.acquire(false, "test").await.unwrap();
        let two = pacing.acquire(false, "test").await.unwrap();
        let waits = tokio::spawn({
            let pacing = pacing.clone();
            async move { pacing.acquire(false, "test").await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waits.is_finished(), "a third waits for a slot");
        drop((one, two));
        tokio::time::timeout(Duration::from_secs(1), waits)
            .await
            .expect("and gets it")
            .unwrap()
            .unwrap();
    }
}
