//! The provider's logs, set up in one place: `provider-litellm` and the
//! benchmark's provider process log the same way, so the benchmark
//! measures what runs in a cluster.

use tracing_subscriber::EnvFilter;

/// The filter when `RUST_LOG` is not set: `info`, with kube-runtime's own
/// `info` spans off. kube-runtime opens an `info` span per reconciliation
/// ("reconciling object", its reference and reason formatted into the
/// span each time): with it on, a poll that finds nothing to do costs a
/// formatted span more than it needs. The provider's own lines name the
/// kind, namespace and name of the resource they are about, and
/// kube-runtime's warnings and errors still show.
pub const DEFAULT_FILTER: &str = "info,kube_runtime=warn";

/// Installs the global subscriber: text or JSON lines on stdout, filtered
/// by `RUST_LOG` or [`DEFAULT_FILTER`].
pub fn init(json: bool) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_filter_parses_and_keeps_info_but_kube_runtime_spans() {
        let filter = EnvFilter::try_new(DEFAULT_FILTER).expect("a valid filter");
        let text = filter.to_string();
        assert!(text.contains("kube_runtime=warn"), "{text}");
        assert!(text.contains("info"), "{text}");
    }
}
