//! The function's own Prometheus series, served beside the gRPC server.

use std::time::Duration;

use function_sdk_rust::proto::v1::{Result as FnResult, Severity};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    /// `composed`, or `fatal` when the request could not be composed.
    outcome: &'static str,
}

/// Counters and latency of `RunFunction`.
pub struct Metrics {
    runs: Family<OutcomeLabel, Counter>,
    duration: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            runs: Family::default(),
            // 10 µs .. ~1.3 s
            duration: Histogram::new(exponential_buckets(0.000_01, 4.0, 10)),
        }
    }
}

impl Metrics {
    /// Registers the series in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "function_litellm_runs",
            "RunFunction calls by outcome",
            self.runs.clone(),
        );
        registry.register(
            "function_litellm_run_duration_seconds",
            "Time spent composing one RunFunction request",
            self.duration.clone(),
        );
    }

    /// Records one answered request.
    pub fn observe(&self, results: &[FnResult], elapsed: Duration) {
        let fatal = results.iter().any(|r| r.severity == Severity::Fatal as i32);
        let outcome = if fatal { "fatal" } else { "composed" };
        self.runs.get_or_create(&OutcomeLabel { outcome }).inc();
        self.duration.observe(elapsed.as_secs_f64());
    }
}
