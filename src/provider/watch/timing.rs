//! When to look again: the poll interval of `crossplane.io/poll-interval`,
//! its jitter, and the backoff after failures.

use std::time::Duration;

/// Parses a Go duration (`time.ParseDuration`): a sequence of decimal
/// numbers with units `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`, such as `30s`,
/// `1m30s`, `1.5h`. Negative and zero durations are refused: a poll
/// interval of zero would spin. So is anything a `Duration` cannot hold
/// (`99999999999999999999h`): any text gives an answer, never a panic.
pub fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(number_len);
        if number.is_empty() || number == "." {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += value * seconds;
        rest = tail;
    }
    if total <= 0.0 {
        return None;
    }
    Duration::try_from_secs_f64(total)
        .ok()
        .filter(|d| !d.is_zero())
}

/// Bounds on every poll interval, whatever an annotation asks for: the
/// minimum keeps one resource from polling the proxy in a loop, the maximum
/// keeps drift correction (and the timer arithmetic) within reason.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollBounds {
    pub min: Duration,
    pub max: Duration,
}

impl Default for PollBounds {
    fn default() -> Self {
        Self {
            min: Duration::from_secs(10),
            max: Duration::from_secs(24 * 3600),
        }
    }
}

impl PollBounds {
    /// `interval` clamped into the bounds (a maximum below the minimum
    /// counts as the minimum).
    pub fn clamp(&self, interval: Duration) -> Duration {
        interval.min(self.max).max(self.min)
    }
}

/// The spread of polls by default, in percent of their interval, as
/// crossplane-runtime providers' `--poll-jitter-percentage`.
pub const DEFAULT_POLL_JITTER_PERCENTAGE: u8 = 10;

/// `interval` stretched by `fraction` (in `[0, 1)`) of up to `percentage`
/// percent (at most 99), so resources created together do not poll LiteLLM
/// in lockstep. crossplane-runtime spreads a poll both ways; here it never
/// comes before its interval.
pub fn jittered(interval: Duration, percentage: u8, fraction: f64) -> Duration {
    let spread = f64::from(percentage.min(99)) / 100.0;
    interval.mul_f64(1.0 + spread * fraction.clamp(0.0, 1.0))
}

/// How finely polls are spread by default: every poll falls due on a
/// multiple of this since the process started ([`on_tick`]).
pub const POLL_TICK: Duration = Duration::from_millis(500);

/// `after` rounded up so that `elapsed + after` (time counted from some
/// epoch) is a multiple of `tick`: at most one `tick` later than asked,
/// never earlier.
pub fn align(elapsed: Duration, after: Duration, tick: Duration) -> Duration {
    let tick_nanos = tick.as_nanos();
    if tick_nanos == 0 {
        return after;
    }
    let due = elapsed.saturating_add(after).as_nanos();
    let aligned = due.div_ceil(tick_nanos).saturating_mul(tick_nanos);
    let extra = u64::try_from(aligned - due).unwrap_or(u64::MAX);
    after.saturating_add(Duration::from_nanos(extra))
}

/// A poll's delay `after`, aligned to `tick` ([`align`], counted from the
/// process's first call; [`POLL_TICK`] by default). Polls of many objects
/// fall due together, a batch per tick instead of one at a time: one timer
/// expiry and one wake-up of the controller serve all of them, where polls
/// spread to the microsecond woke a worker thread each. With 3,000 teams
/// and 3,000 keys polled every 30 s the provider's CPU per poll went from
/// 0.61 ms to 0.17 ms with a 100 ms tick and 0.12 ms with 500 ms
/// (bench notes: git history of docs/provider-benchmark.md). The jitter still spreads resources
/// created together over the ticks of its 10%, and a burst of polls queues
/// for the proxy's in-flight limit like any other.
pub fn on_tick(after: Duration, tick: Duration) -> Duration {
    align(epoch().elapsed(), after, tick)
}

/// What [`on_tick`] counts ticks from: the process's first call.
pub fn epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// A random fraction in `[0, 1)` for [`jittered`].
pub fn random_fraction() -> f64 {
    // Jitter is not security relevant: a generator per thread, seeded from
    // the OS once, instead of a system call every poll (without OS
    // randomness the seed is the clock).
    thread_local! {
        static STATE: std::cell::Cell<u64> = std::cell::Cell::new(seed());
    }
    let bits = STATE.with(|state| {
        // SplitMix64.
        let next = state.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        state.set(next);
        let mut z = next;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    });
    // The top 53 bits: every value below 1, evenly spaced.
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_ok() {
        return u64::from_le_bytes(bytes);
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// Delay before retry number `attempt` (1-based) after a failure: 1 s
/// doubling, never beyond `cap` (the poll interval, so a short interval set
/// by the user also bounds how long a failure waits).
pub fn backoff(attempt: u32, cap: Duration) -> Duration {
    let exponent = attempt.saturating_sub(1).min(16);
    Duration::from_secs(1u64 << exponent).min(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        let cases = [
            ("30s", Some(30.0)),
            ("5m", Some(300.0)),
            ("1h30m", Some(5400.0)),
            ("1.5s", Some(1.5)),
            ("500ms", Some(0.5)),
            ("2h0m0s", Some(7200.0)),
            ("", None),
            ("10", None),
            ("s", None),
            ("-5s", None),
            ("0s", None),
            ("5d", None),
            ("1m x", None),
            ("99999999999999999999h", None),
            ("1e400s", None),
            ("0.0000000001ns", None),
            ("18446744073709551616s", None),
            ("..5s", None),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse_go_duration(text).map(|d| d.as_secs_f64()),
                want,
                "{text:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn no_text_panics(text in ".{0,40}", digits in "[0-9]{1,40}(\\.[0-9]{0,20})?(ns|us|ms|s|m|h)") {
            let _ = parse_go_duration(&text);
            if let Some(parsed) = parse_go_duration(&digits) {
                let bounded = PollBounds::default().clamp(parsed);
                let _ = jittered(bounded, 99, 0.999);
            }
        }
    }

    #[test]
    fn poll_intervals_are_bounded() {
        let bounds = PollBounds::default();
        assert_eq!(
            bounds.clamp(Duration::from_millis(1)),
            Duration::from_secs(10)
        );
        assert_eq!(
            bounds.clamp(Duration::from_secs(60)),
            Duration::from_secs(60)
        );
        assert_eq!(bounds.clamp(Duration::MAX), Duration::from_secs(86400));
    }

    #[test]
    fn jitter_stays_within_ten_percent_above() {
        let base = Duration::from_secs(60);
        assert_eq!(jittered(base, 10, 0.0), base);
        assert!(jittered(base, 10, 0.999) < Duration::from_secs(66));
        assert!(jittered(base, 50, 0.999) > Duration::from_secs(89));
        assert_eq!(jittered(base, 0, 0.999), base);
        for _ in 0..100 {
            let fraction = random_fraction();
            assert!((0.0..1.0).contains(&fraction));
        }
    }

    #[test]
    fn the_jitter_spreads_over_the_whole_range() {
        let fractions: Vec<f64> = (0..1000).map(|_| random_fraction()).collect();
        let mut tenths = [0u32; 10];
        for fraction in &fractions {
            tenths[(fraction * 10.0) as usize] += 1;
        }
        // 100 expected in each tenth; 40 is over six deviations below.
        assert!(tenths.iter().all(|&n| n > 40), "{tenths:?}");
        // Another thread draws its own sequence.
        let other: Vec<f64> = std::thread::spawn(|| (0..1000).map(|_| random_fraction()).collect())
            .join()
            .unwrap();
        assert_ne!(fractions, other);
    }

    #[test]
    fn polls_fall_due_on_ticks_at_most_one_tick_late() {
        let tick = Duration::from_millis(100);
        let ms = Duration::from_millis;
        // 1.234 s past the epoch, asked for 30 s: due at 31.3 s.
        assert_eq!(align(ms(1234), ms(30_000), tick), ms(30_066));
        // Already on a tick: unchanged.
        assert_eq!(align(ms(1200), ms(30_000), tick), ms(30_000));
        assert_eq!(align(ms(0), ms(0), tick), ms(0));
        assert_eq!(align(ms(5), ms(0), tick), ms(95));
        assert_eq!(align(ms(5), ms(7), Duration::ZERO), ms(7));
        // No overflow, whatever the clock says.
        assert!(align(Duration::MAX, ms(7), tick) < ms(7) + tick);
        for (elapsed, after) in [(17u64, 9_999u64), (123_456, 1), (99, 99), (1, 86_400_000)] {
            let aligned = align(ms(elapsed), ms(after), tick);
            assert!(
                aligned >= ms(after) && aligned < ms(after) + tick,
                "{elapsed} {after}"
            );
            assert_eq!((ms(elapsed) + aligned).as_nanos() % tick.as_nanos(), 0);
        }
        // Two polls asked for moments apart share their tick.
        assert_eq!(
            ms(1234) + align(ms(1234), ms(30_000), tick),
            ms(1281) + align(ms(1281), ms(30_000), tick)
        );
        assert!(on_tick(ms(10), tick) >= ms(10));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let cap = Duration::from_secs(60);
        let delays: Vec<u64> = (1..=8).map(|n| backoff(n, cap).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(
            backoff(u32::MAX, Duration::from_secs(2)),
            Duration::from_secs(2)
        );
    }
}
