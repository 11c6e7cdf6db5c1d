//! The provider's Prometheus series: reconciliations, errors by reason, and
//! the latency of LiteLLM admin requests (fed by the client's observer hook).

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::litellm::Observer;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabel {
    kind: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabel {
    /// `"POST /team/new"`: never an id or a secret.
    operation: &'static str,
    /// HTTP status, `0` when no response arrived.
    status: u16,
}

fn request_histogram() -> Histogram {
    // 1 ms .. ~16 s
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Counters and histograms of the entity controllers. Cloning shares them.
#[derive(Clone)]
pub struct Metrics {
    reconciles: Family<KindLabel, Counter>,
    errors: Family<ErrorLabel, Counter>,
    requests: Family<RequestLabel, Histogram, fn() -> Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            reconciles: Family::default(),
            errors: Family::default(),
            requests: Family::new_with_constructor(request_histogram),
        }
    }
}

impl Metrics {
    /// Registers the series in `registry`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "provider_litellm_reconciles",
            "Reconciliations of managed resources by kind",
            self.reconciles.clone(),
        );
        registry.register(
            "provider_litellm_reconcile_errors",
            "Failed reconciliations by kind and reason",
            self.errors.clone(),
        );
        registry.register(
            "provider_litellm_request_duration_seconds",
            "Latency of LiteLLM admin API requests by operation and HTTP status",
            self.requests.clone(),
        );
    }

    pub fn reconciled(&self, kind: &'static str) {
        self.reconciles.get_or_create(&KindLabel { kind }).inc();
    }

    pub fn failed(&self, kind: &'static str, reason: &'static str) {
        self.errors
            .get_or_create(&ErrorLabel { kind, reason })
            .inc();
    }

    /// The hook handed to every LiteLLM client.
    pub fn observer(&self) -> Observer {
        let requests = self.requests.clone();
        Arc::new(
            move |operation: &'static str, status: u16, elapsed: Duration| {
                requests
                    .get_or_create(&RequestLabel { operation, status })
                    .observe(elapsed.as_secs_f64());
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_exported_with_their_labels() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.reconciled("team");
        metrics.failed("key", "litellm");
        (metrics.observer())("GET /team/info", 200, Duration::from_millis(3));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("provider_litellm_reconciles_total{kind=\"team\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "provider_litellm_reconcile_errors_total{kind=\"key\",reason=\"litellm\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("provider_litellm_request_duration_seconds_count{operation=\"GET /team/info\",status=\"200\"} 1"),
            "{text}"
        );
    }
}
