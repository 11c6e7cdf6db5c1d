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

/// `interval` stretched by `fraction` of up to +10% (`fraction` in `[0, 1)`),
/// so resources created together do not poll LiteLLM in lockstep.
pub fn jittered(interval: Duration, fraction: f64) -> Duration {
    interval.mul_f64(1.0 + 0.1 * fraction.clamp(0.0, 1.0))
}

/// A random fraction in `[0, 1)` for [`jittered`].
pub fn random_fraction() -> f64 {
    let mut bytes = [0u8; 4];
    // Jitter is not security relevant: without OS randomness, no jitter.
    if getrandom::fill(&mut bytes).is_err() {
        return 0.0;
    }
    f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0)
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
                let _ = jittered(bounded, 0.999);
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
        assert_eq!(jittered(base, 0.0), base);
        assert!(jittered(base, 0.999) < Duration::from_secs(66));
        for _ in 0..100 {
            let fraction = random_fraction();
            assert!((0.0..1.0).contains(&fraction));
        }
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
