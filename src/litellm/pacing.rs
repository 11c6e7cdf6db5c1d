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

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::Error;

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
    /// timeout starts).
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before the check, so a slot freed in between wakes
            // this request.
            freed.as_mut().enable();
            {
                let mut state = self.state();
                if (state.in_flight as f64) < state.limit.floor().max(1.0) {
                    state.in_flight += 1;
                    return Permit {
                        pacing: self.clone(),
                    };
                }
            }
            freed.await;
        }
    }

    /// How a request went: `elapsed` from sending to the whole answer, and
    /// whether the proxy did not answer or asked to slow down.
    pub fn answered(&self, elapsed: Duration, congested: bool) {
        let mut state = self.state();
        if congested || elapsed > self.slow {
            let now = Instant::now();
            if state
                .cut
                .is_none_or(|cut| now.duration_since(cut) >= self.slow)
            {
                state.limit = (state.limit * 0.7).max(1.0);
                state.lowest = state.lowest.min(state.limit);
                state.cut = Some(now);
            }
        } else if elapsed <= self.slow / 2 {
            state.limit = (state.limit + 1.0 / state.limit).min(self.max as f64);
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
    async fn no_more_requests_in_flight_than_the_limit() {
        let pacing = Pacing::new(3, Duration::from_millis(10));
        let held: Vec<Permit> = vec![
            pacing.acquire().await,
            pacing.acquire().await,
            pacing.acquire().await,
        ];
        let waiting = tokio::time::timeout(Duration::from_millis(50), pacing.acquire()).await;
        assert!(waiting.is_err(), "a fourth waits");
        // A cut below what is in flight lets nothing new out until enough
        // requests finish.
        pacing.answered(Duration::from_secs(1), false);
        assert_eq!(pacing.limits().limit.floor(), 2.0);
        let mut held = held;
        held.pop();
        let waiting = tokio::time::timeout(Duration::from_millis(50), pacing.acquire()).await;
        assert!(waiting.is_err(), "still two in flight under a limit of 2");
        held.pop();
        let next = tokio::time::timeout(Duration::from_secs(1), pacing.acquire()).await;
        assert!(
            next.is_ok(),
            "a slot freed under the limit wakes the waiter"
        );
    }
}
