//! The threads the provider runs on.
//!
//! The provider waits far more than it computes: a poll is a cache lookup,
//! one LiteLLM read and a comparison, and the proxy and the API server
//! take longer to answer than the provider takes to ask. On tokio's
//! multi-threaded runtime every answer that arrives while the workers
//! sleep wakes one of them, which wakes another to share work there is
//! none of, and both go back to sleep: at a poll every few dozen
//! milliseconds those wake-ups cost more than the poll itself. Measured
//! with the bench (bench notes: git history of docs/provider-benchmark.md, 5 December 2026): CPU per
//! poll against the real proxy 0.53 ms on two workers, 0.35 ms on one.
//!
//! So one thread runs everything by default (tokio's current-thread
//! runtime: the controllers, the watches, the poll queue, the HTTP
//! server); `--worker-threads` / `WORKER_THREADS` above 1 runs the
//! multi-threaded runtime with that many workers, for a provider whose
//! reconciliations outpace one core. At 10,000 teams and 10,000 keys
//! converging against a fast proxy the provider used a quarter of one
//! core, the API server most of the rest.

/// Threads of the default runtime.
pub const DEFAULT_WORKER_THREADS: usize = 1;

/// Where `WORKER_THREADS` is read from by whoever builds the runtime
/// without a command line (the bench's provider process).
pub const WORKER_THREADS_ENV: &str = "WORKER_THREADS";

/// The runtime for `threads` threads: one runs everything on the thread
/// that calls `block_on`; more run that many workers beside it.
pub fn build(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}

/// `WORKER_THREADS` as a count of threads: unset gives the default.
pub fn threads_from_env() -> Result<usize, String> {
    match std::env::var(WORKER_THREADS_ENV) {
        Ok(text) => parse_threads(&text),
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_WORKER_THREADS),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("{WORKER_THREADS_ENV} is not a count of threads"))
        }
    }
}

/// A count of threads, at least 1.
pub fn parse_threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(threads) if threads >= 1 => Ok(threads),
        _ => Err(format!("{text:?} is not a count of threads (1 or more)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_runs_everything_on_the_caller() {
        let runtime = build(1).unwrap();
        let caller = std::thread::current().id();
        let ran_on =
            runtime.block_on(async { tokio::spawn(async { std::thread::current().id() }).await });
        assert_eq!(
            ran_on.unwrap(),
            caller,
            "a spawned task runs on the one thread"
        );
        assert_eq!(
            runtime.handle().runtime_flavor(),
            tokio::runtime::RuntimeFlavor::CurrentThread
        );
    }

    #[test]
    fn more_threads_run_that_many_workers() {
        let runtime = build(3).unwrap();
        assert_eq!(
            runtime.handle().runtime_flavor(),
            tokio::runtime::RuntimeFlavor::MultiThread
        );
        assert_eq!(runtime.metrics().num_workers(), 3);
        // Timers and sockets are on in both.
        runtime.block_on(async {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        });
    }

    #[test]
    fn a_count_is_one_or_more_and_the_error_names_what_was_given() {
        assert_eq!(parse_threads("1"), Ok(1));
        assert_eq!(parse_threads(" 4 "), Ok(4));
        for bad in ["0", "-1", "two", ""] {
            let err = parse_threads(bad).unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }
}
