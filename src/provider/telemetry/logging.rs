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

/// The filter of `--debug` when `RUST_LOG` is not set: the provider's own
/// debug lines (what crossplane-runtime providers log with `--debug`),
/// the libraries' at `info`.
pub const DEBUG_FILTER: &str =
    "info,kube_runtime=warn,litellm_crossplane=debug,provider_litellm=debug";

/// Installs the global subscriber: text or JSON lines on stdout, filtered
/// by `RUST_LOG`, else [`DEBUG_FILTER`] with `debug`, else
/// [`DEFAULT_FILTER`].
pub fn init(json: bool, debug: bool) {
    let default = if debug { DEBUG_FILTER } else { DEFAULT_FILTER };
    // An empty `RUST_LOG` counts as unset.
    let filter = std::env::var(EnvFilter::DEFAULT_ENV)
        .ok()
        .filter(|text| !text.trim().is_empty())
        .and_then(|text| EnvFilter::try_new(text).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    // Colour only on a terminal: piped or collected logs stay plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi);
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
        EnvFilter::try_new(DEBUG_FILTER).expect("a valid debug filter");
        let filter = EnvFilter::try_new(DEFAULT_FILTER).expect("a valid filter");
        let text = filter.to_string();
        assert!(text.contains("kube_runtime=warn"), "{text}");
        assert!(text.contains("info"), "{text}");
    }
}
