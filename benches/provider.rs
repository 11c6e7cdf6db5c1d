//! The provider's entity controllers against the real harnesses: N teams and
//! N keys (each key in its team) converged from an empty state, held at
//! steady state for two poll intervals, the provider restarted (a new
//! process, as a rollout or a new leader: how long until it is back at its
//! steady state), then deleted. The same LiteLLM calls
//! made directly with the client in the same run (at a concurrency that
//! saturates the proxy without queueing past the timeout) are the baseline
//! every figure is a ratio of: the machine is shared, so only same-run
//! ratios mean anything.
//!
//! `cargo bench --bench provider` with `KUBECONFIG` (`tests/harness/k8s/up.sh`)
//! and `LITELLM_URL`/`LITELLM_MASTER_KEY` (`tests/harness/litellm/up.sh`) set.
//! `BENCH_N` lists the sizes (default `200,1000`); `BENCH_POLL` overrides the
//! poll interval (a Go duration; default 100 ms per team+key pair, at least
//! 10 s); `BENCH_WAVE` is how many pairs are created, then deleted, at a
//! time (default 0: all at once).
//!
//! `BENCH_STANDIN_N` (default `10000`; empty for none) adds sizes served by
//! an in-process LiteLLM stand-in (`tests/support/litellm_standin.rs`, which
//! `tests/integration/litellm_standin.rs` checks against the real proxy): the
//! real one creates about 20 objects a second, too slow for 10,000 pairs in a
//! benchmark. Those sizes measure the provider's memory and CPU at scale
//! (poll `BENCH_STANDIN_POLL`, default 30 s); their ratios are against the
//! stand-in, not LiteLLM, and are printed as such.
//!
//! `BENCH_POLL_TICK` (ms) aligns the provider's polls to that tick instead
//! of its default (`timing::POLL_TICK`); `0` turns the alignment off, to
//! compare. `BENCH_SYNC` (a Go duration) is the provider's `--sync`: a
//! short one (three poll intervals) puts reconciliations in full into the
//! steady-state window, which the default (1 h: nine polls from a memo
//! between two) keeps out of it.

#[path = "../tests/support/k8s.rs"]
mod k8s;
#[path = "../tests/support/litellm_standin.rs"]
#[allow(dead_code)]
mod litellm_standin;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Secret as KubeSecret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use litellm_crossplane::api::key::KeyParameters;
use litellm_crossplane::api::team::TeamParameters;
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::litellm::{self, generate_key, token_of, ClientConfig, Secret};
use litellm_crossplane::provider::kinds::key;
use litellm_crossplane::provider::kinds::team;
use litellm_crossplane::provider::managed::contract::ManagedKind;
use litellm_crossplane::provider::managed::ownership::{default_id, Owner};
use litellm_crossplane::provider::managed::reconciler::{Context, DEFAULT_MAX_RECONCILE_RATE};
use litellm_crossplane::provider::managed::resolve::{Resolved, DEFAULT_LITELLM_TIMEOUT};
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::runtime::health::Health;
use litellm_crossplane::provider::runtime::http;
use litellm_crossplane::provider::runtime::threads;
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use litellm_crossplane::provider::watch::timing;
use prometheus_client::registry::Registry;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::task::JoinSet;

/// The provider binary's allocator, so the memory measured is what the
/// provider would hold; glibc's malloc with `BENCH_SYSTEM_ALLOCATOR=1`, for
/// heap profilers that hook malloc (heaptrack), whose figures are then not
/// the provider's.
#[global_allocator]
static ALLOCATOR: BenchAllocator = BenchAllocator;

struct BenchAllocator;

/// 0 until the first allocation decides; 1 mimalloc, 2 the system's.
static SYSTEM_ALLOCATOR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

impl BenchAllocator {
    fn system() -> bool {
        use std::sync::atomic::Ordering;
        match SYSTEM_ALLOCATOR.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                // Decided at the process's first allocation, before any
                // thread but the main one exists; getenv allocates nothing.
                // SAFETY: a NUL-terminated name; nothing sets the
                // environment concurrently this early.
                let set = unsafe { !libc::getenv(c"BENCH_SYSTEM_ALLOCATOR".as_ptr()).is_null() };
                SYSTEM_ALLOCATOR.store(if set { 2 } else { 1 }, Ordering::Relaxed);
                set
            }
        }
    }
}

// SAFETY: every call goes to one allocator for the process's whole life.
unsafe impl std::alloc::GlobalAlloc for BenchAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Self::system() {
            unsafe { std::alloc::System.alloc(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if Self::system() {
            unsafe { std::alloc::System.alloc_zeroed(layout) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if Self::system() {
            unsafe { std::alloc::System.dealloc(ptr, layout) }
        } else {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        if Self::system() {
            unsafe { std::alloc::System.realloc(ptr, layout, size) }
        } else {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, size) }
        }
    }
}

const CLUSTER: &str = "bench-cluster";
const INSTANCE: &str = "proxy";
const MASTER_KEY_SECRET: &str = "litellm-master-key";
/// Label numbering the wave a pair was created in, to delete it by wave.
const WAVE_LABEL: &str = "bench.litellm.crossplane.io/wave";
/// Past this the provider is reported as not converging, not waited for:
/// 15 minutes, or `BENCH_CONVERGE_TIMEOUT` (a Go duration) on a machine
/// busy with other work.
static CONVERGE_TIMEOUT: std::sync::LazyLock<Duration> = std::sync::LazyLock::new(|| {
    std::env::var("BENCH_CONVERGE_TIMEOUT")
        .ok()
        .map(|text| {
            timing::parse_go_duration(&text).expect("BENCH_CONVERGE_TIMEOUT: a Go duration")
        })
        .unwrap_or(Duration::from_secs(15 * 60))
});
/// Requests the baseline keeps in flight: as many as the provider may keep
/// in flight to one proxy by default (`--max-in-flight-per-instance`;
/// its adaptive limit may take fewer), so both sides are held to the same
/// cap. The proxy is one Python process; far more would only queue past
/// the timeout and leave it working on abandoned requests.
const BASELINE_CONCURRENCY: usize =
    litellm_crossplane::provider::managed::resolve::DEFAULT_MAX_IN_FLIGHT;
/// Team+key pairs the bench creates at a time.
const CREATE_CONCURRENCY: usize = 32;
/// Requeues are stretched by up to 10% of the poll interval.
const MAX_JITTER: f64 = 1.1;
/// Polls per object the steady-state window is long enough for; the
/// baseline reads every object as often.
const STEADY_POLLS: u32 = 2;

struct Harness {
    kube: kube::Client,
    url: String,
    master_key: String,
    litellm: litellm::Client,
    /// What serves the LiteLLM API, for the report.
    label: &'static str,
}

/// The stand-in's process id while one runs (0: none), whose CPU
/// [`Machine`] counts as LiteLLM's.
static STANDIN_PID: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Starts this binary again as the LiteLLM stand-in; returns the child and
/// its URL (its first line of output).
fn serve_standin(master_key: &str) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(std::env::current_exe().expect("bench binary"))
        .env(SERVE_STANDIN, master_key)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("stand-in process");
    STANDIN_PID.store(child.id(), std::sync::atomic::Ordering::Relaxed);
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the stand-in's URL");
    (child, line.trim().to_owned())
}

/// Set (to the master key) in the child that only serves the stand-in.
const SERVE_STANDIN: &str = "BENCH_SERVE_STANDIN_MASTER_KEY";

/// Set (to the namespace to watch) in the child that runs the provider.
const SERVE_PROVIDER: &str = "BENCH_SERVE_PROVIDER_NAMESPACE";
/// The provider child's poll interval, in milliseconds.
const SERVE_PROVIDER_POLL: &str = "BENCH_SERVE_PROVIDER_POLL_MS";

/// `BENCH_POLL_TICK`: what the provider's polls are aligned to, in ms
/// (`0`: not at all), instead of its default (`timing::POLL_TICK`).
fn poll_tick() -> Option<Duration> {
    let text = std::env::var("BENCH_POLL_TICK").ok()?;
    Some(Duration::from_millis(
        text.parse().expect("BENCH_POLL_TICK: milliseconds"),
    ))
}

/// The runtime `provider-litellm` runs on: `WORKER_THREADS`, else its
/// default (one thread).
fn provider_runtime() -> tokio::runtime::Runtime {
    let threads = threads::threads_from_env().expect("WORKER_THREADS");
    threads::build(threads).expect("tokio runtime")
}

/// The child that runs the provider: its entity controllers
/// (`controllers::run`, as `provider-litellm` runs them) over one
/// namespace, in a process of its own, so that its memory and CPU are the
/// provider's alone. It serves its metrics (`/metrics`, the registry the
/// bench reads) and the in-flight limits (`/limits`) on a local port, and
/// prints `URL RSS_KIB` (its RSS before the controllers start) as its first
/// line.
fn serve_provider(namespace: String) {
    let poll = Duration::from_millis(
        std::env::var(SERVE_PROVIDER_POLL)
            .expect("poll interval")
            .parse()
            .expect("poll interval in ms"),
    );
    // Logs as `provider-litellm` does (its default filter, text on stdout,
    // which the bench reads past and drops): their cost is the provider's.
    litellm_crossplane::provider::telemetry::logging::init(false, false);
    provider_runtime().block_on(async {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let bounds = litellm_crossplane::provider::watch::timing::PollBounds {
            min: poll.min(Duration::from_secs(1)),
            max: poll.max(Duration::from_secs(3600)),
        };
        let config = kube::Config::infer().await.expect("KUBECONFIG");
        let provider_kube = metrics.kube_client(config).expect("counted client");
        let mut ctx = Context::new(provider_kube, CLUSTER, metrics)
            .with_poll_interval(poll)
            .with_poll_bounds(bounds);
        if let Some(tick) = poll_tick() {
            ctx = ctx.with_poll_tick(tick);
        }
        if let Ok(text) = std::env::var("BENCH_SYNC") {
            let sync = timing::parse_go_duration(&text).expect("BENCH_SYNC: a Go duration");
            ctx = ctx.with_sync_period(sync);
        }
        let ctx = Arc::new(ctx);
        let limits = ctx.clone();
        let router = http::router(Arc::new(registry), Health::new()).route(
            "/limits",
            axum::routing::get(move || {
                let text: String = limits
                    .in_flight_limits()
                    .into_iter()
                    .map(|(endpoint, limits)| {
                        format!(
                            "in-flight limit to {endpoint}: {:.1} (lowest so far {:.1}, \
                             maximum {})\n",
                            limits.limit, limits.lowest, limits.max
                        )
                    })
                    .collect();
                async move { text }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a local port");
        let address = listener.local_addr().expect("its address");
        tokio::spawn(async move { axum::serve(listener, router).await });
        println!(
            "http://{address} {} {} {}",
            vm_kib(0, "VmRSS"),
            std::process::id(),
            vm_kib(0, "RssAnon")
        );
        controllers::run(ctx, Some(namespace)).await;
    });
}

/// The provider's process (see [`serve_provider`]), killed when dropped.
struct ProviderProcess {
    child: std::process::Child,
    url: String,
    http: reqwest::Client,
    /// Its RSS before its controllers started.
    rss_before_kib: u64,
    /// The anonymous part of that RSS (its heap and stacks, not the pages
    /// of the binary it runs from).
    anon_before_kib: u64,
    /// Its process id (not the child's when a wrapper runs it).
    pid: u32,
}

impl ProviderProcess {
    fn start(namespace: &str, poll: Duration) -> Self {
        use std::io::BufRead;
        let exe = std::env::current_exe().expect("bench binary");
        // `BENCH_PROVIDER_WRAPPER`: a command the provider's process runs
        // under (a profiler: `heaptrack -o /tmp/provider`); its figures are
        // then the profiled process's.
        let wrapper = std::env::var("BENCH_PROVIDER_WRAPPER").unwrap_or_default();
        let mut words = wrapper.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut command = std::process::Command::new(program);
                command.args(words).arg(&exe);
                command
            }
            None => std::process::Command::new(&exe),
        };
        let mut child = command
            .env(SERVE_PROVIDER, namespace)
            .env(SERVE_PROVIDER_POLL, poll.as_millis().to_string())
            .env_remove(SERVE_STANDIN)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("provider process");
        // A wrapper may print lines of its own first.
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        while !line.starts_with("http://") {
            line.clear();
            let read = stdout.read_line(&mut line).expect("the provider's URL");
            assert!(read > 0, "the provider ended before it served its metrics");
        }
        // The rest of its output (a wrapper's) is read and dropped.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let mut fields = line.split_whitespace();
        let (Some(url), Some(rss), Some(pid), Some(anon)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            panic!("the provider's first line is URL RSS PID RssAnon, not {line:?}");
        };
        ProviderProcess {
            url: url.to_owned(),
            rss_before_kib: rss.parse().expect("RSS in KiB"),
            anon_before_kib: anon.parse().expect("RssAnon in KiB"),
            pid: pid.parse().expect("a process id"),
            child,
            http: reqwest::Client::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.pid
    }

    async fn get(&self, path: &str) -> String {
        let url = format!("{}{path}", self.url);
        for attempt in 0.. {
            match self.http.get(&url).send().await {
                Ok(answer) => match answer.text().await {
                    Ok(text) => return text,
                    Err(err) if attempt < 5 => eprintln!("reading {url}: {err}; again"),
                    Err(err) => panic!("reading {url}: {err}"),
                },
                Err(err) if attempt < 5 => eprintln!("asking {url}: {err}; again"),
                Err(err) => panic!("asking {url}: {err}"),
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        unreachable!()
    }
}

impl ProviderProcess {
    /// SIGTERM first (the controllers shut down on it, as in a rollout, and
    /// a profiler wrapping the process writes its data), SIGKILL after
    /// 30 s. Once only.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        // SAFETY: signals a process this bench started.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGTERM) };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: as above.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ProviderProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

fn main() {
    // As `provider-litellm` does, in the provider's process and in this one
    // (the baseline's), so both count their pages alike.
    litellm_crossplane::provider::runtime::memory::keep_pages_small();
    if let Ok(namespace) = std::env::var(SERVE_PROVIDER) {
        serve_provider(namespace);
        return;
    }
    if let Ok(master_key) = std::env::var(SERVE_STANDIN) {
        let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
        runtime.block_on(async {
            let standin = litellm_standin::StandIn::start(&master_key).await;
            println!("{}", standin.url);
            // Until the bench kills it.
            std::future::pending::<()>().await;
        });
        return;
    }
    let (Some(_), Ok(url), Ok(master_key)) = (
        std::env::var_os("KUBECONFIG"),
        std::env::var("LITELLM_URL"),
        std::env::var("LITELLM_MASTER_KEY"),
    ) else {
        eprintln!(
            "the provider bench needs a Kubernetes API server and a LiteLLM proxy: set KUBECONFIG \
             (tests/harness/k8s/up.sh) and LITELLM_URL, LITELLM_MASTER_KEY (tests/harness/litellm/up.sh)"
        );
        std::process::exit(2);
    };
    let sizes: Vec<usize> = std::env::var("BENCH_N")
        .unwrap_or_else(|_| "200,1000".into())
        .split(',')
        .filter(|n| !n.trim().is_empty())
        .map(|n| n.trim().parse().expect("BENCH_N: comma-separated counts"))
        .collect();
    // Everything at once by default: the provider bounds its requests in
    // flight per proxy. Waves (each created once the previous one is
    // Ready) are what an earlier provider needed, which overloaded the
    // proxy without them (bench notes: git history of docs/provider-benchmark.md, finding 2).
    let wave: usize = std::env::var("BENCH_WAVE")
        .map(|text| text.parse().expect("BENCH_WAVE: a count of pairs"))
        .unwrap_or(0);
    let poll_override = std::env::var("BENCH_POLL").ok().map(|text| {
        timing::parse_go_duration(&text).expect("BENCH_POLL: a Go duration such as 30s")
    });
    let standin_sizes: Vec<usize> = std::env::var("BENCH_STANDIN_N")
        .unwrap_or_else(|_| "10000".into())
        .split(',')
        .filter(|n| !n.trim().is_empty())
        .map(|n| {
            n.trim()
                .parse()
                .expect("BENCH_STANDIN_N: comma-separated counts")
        })
        .collect();
    let standin_poll = std::env::var("BENCH_STANDIN_POLL")
        .ok()
        .map(|text| timing::parse_go_duration(&text).expect("BENCH_STANDIN_POLL: a Go duration"))
        .unwrap_or(Duration::from_secs(30));

    // The provider's runtime, so that the baseline's reads are counted on
    // the same kind of runtime as the provider's polls; a baseline on one
    // thread is also the cheaper one (bench notes: git history of docs/provider-benchmark.md,
    // 5 December 2026).
    let all_ok = provider_runtime().block_on(async {
        let kube = k8s::client().await.expect("KUBECONFIG is set");
        k8s::install_crds(&kube).await;
        let litellm = litellm::Client::new(ClientConfig {
            endpoint: url.clone(),
            master_key: Secret::new(master_key.clone()),
            ca_pem: None,
            // The provider's, so the baseline gives up as soon.
            timeout: DEFAULT_LITELLM_TIMEOUT,
        })
        .expect("LiteLLM client");
        let harness = Harness {
            kube,
            url,
            master_key,
            litellm,
            label: "the real LiteLLM proxy",
        };
        let mut all_ok = true;
        for n in standin_sizes {
            let (mut child, url) = serve_standin(&harness.master_key);
            let served = Harness {
                kube: harness.kube.clone(),
                url: url.clone(),
                master_key: harness.master_key.clone(),
                litellm: litellm::Client::new(ClientConfig {
                    endpoint: url,
                    master_key: Secret::new(harness.master_key.clone()),
                    ca_pem: None,
                    timeout: DEFAULT_LITELLM_TIMEOUT,
                })
                .expect("stand-in client"),
                label: "the LiteLLM stand-in (a child process)",
            };
            all_ok &= run(&served, n, n, standin_poll).await;
            let _ = child.kill();
            let _ = child.wait();
        }
        for n in sizes {
            // The proxy serves about 60 reads a second on this machine;
            // two reads per pair every 100 ms per pair keeps it a third
            // busy at steady state, so the window measures the provider,
            // not a saturated proxy.
            let poll = poll_override.unwrap_or_else(|| {
                Duration::from_secs(10).max(Duration::from_millis(100) * n as u32)
            });
            let wave = if wave == 0 { n } else { wave.min(n) };
            all_ok &= run(&harness, n, wave, poll).await;
        }
        all_ok
    });
    if !all_ok {
        std::process::exit(1);
    }
}

/// One size: baseline, provider, report. `false` when the provider did not
/// converge or its steady state broke the contract.
async fn run(harness: &Harness, n: usize, wave: usize, poll: Duration) -> bool {
    eprintln!("N={n}: baseline");
    wait_until_idle(&harness.litellm).await;
    let base = baseline(harness, n).await;
    eprintln!("N={n}: provider (waves of {wave} pairs, poll {poll:?})");
    wait_until_idle(&harness.litellm).await;
    let mut world = World::start(harness, poll).await;
    let rss_before_kib = world.provider.rss_before_kib;
    let convergence = world.converge(n, wave).await;
    let steady = match convergence.elapsed {
        Some(_) => Some(world.steady(n, poll).await),
        None => None,
    };
    // The provider's process: its peak since it started, and its heap
    // (anonymous memory) now, in the steady state, against before.
    let memory = Memory {
        rss_before_kib,
        peak_kib: vm_kib(world.provider.pid(), "VmHWM"),
        anon_before_kib: world.provider.anon_before_kib,
        anon_steady_kib: vm_kib(world.provider.pid(), "RssAnon"),
    };
    // Printed before the deletion, which an overloaded proxy can drag out.
    println!("\n(LiteLLM API served by {})", harness.label);
    print!(
        "after convergence and steady state, {}",
        world.provider.get("/limits").await
    );
    let ok = report(n, wave, poll, &base, &convergence, steady.as_ref(), memory);
    if convergence.elapsed.is_some() {
        eprintln!("N={n}: restarting the provider");
        let restart = world.restart(n, poll).await;
        report_restart(n, poll, &restart);
    }
    eprintln!("N={n}: deleting");
    let deletion = world.delete(n, wave).await;
    report_deletion(n, &base, &deletion);
    ok && convergence.elapsed.is_some()
}

/// The provider process's memory figures, in KiB.
struct Memory {
    rss_before_kib: u64,
    /// VmHWM: its peak RSS since it started.
    peak_kib: u64,
    anon_before_kib: u64,
    /// RssAnon at the end of the steady state.
    anon_steady_kib: u64,
}

/// Waits until the proxy answers a read promptly: requests an earlier phase
/// gave up on may still be queued in it.
async fn wait_until_idle(client: &litellm::Client) {
    let started = Instant::now();
    loop {
        let asked = Instant::now();
        let answered = client.team_info("bench-no-such-team").await.is_ok();
        if answered && asked.elapsed() < Duration::from_millis(500) {
            return;
        }
        assert!(
            started.elapsed() < *CONVERGE_TIMEOUT,
            "the proxy is still busy after {:?}",
            *CONVERGE_TIMEOUT
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

// ---------------------------------------------------------------- process

/// A `Vm*` line of /proc/<pid>/status (`pid` 0: this process), in KiB.
fn vm_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(proc_file(pid, "status")).expect("/proc/<pid>/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Resets VmHWM to the current RSS (Linux >= 4.0), so each phase reports
/// its own peak although they share a process.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5")
        .expect("resetting VmHWM via /proc/self/clear_refs");
}

/// `/proc/<pid>/<file>`; `pid` 0 is this process.
fn proc_file(pid: u32, file: &str) -> String {
    match pid {
        0 => format!("/proc/self/{file}"),
        pid => format!("/proc/{pid}/{file}"),
    }
}

/// User plus system CPU time of process `pid` (0: this one), exited
/// threads included.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(proc_file(pid, "stat")).expect("/proc/<pid>/stat");
    // The command name may hold spaces; the fields after it are fixed.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .expect("comm ends with ')'")
        .1
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 (counting from 1, comm is 2), in
    // USER_HZ ticks, which is 100 on every Linux ABI.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// The CPU time of every process on the machine at one moment, by part:
/// what a phase cost the provider, the Kubernetes API server and etcd, the
/// LiteLLM proxy (its Python process, the query engine, PostgreSQL), the
/// bench itself and anything else, and how busy the machine's cores were.
/// The shares of a phase are the difference of two snapshots (CPU of
/// processes that ended in between is not counted by part, only in
/// `busy`).
#[derive(Clone, Default)]
struct Machine {
    at: Option<Instant>,
    /// Busy time of all cores (`/proc/stat`).
    busy: Duration,
    by_part: BTreeMap<&'static str, Duration>,
}

/// The parts [`Machine`] counts, in the order they are printed.
const PARTS: [&str; 5] = ["provider", "Kubernetes", "LiteLLM", "bench", "other"];

impl Machine {
    /// Now; `provider` is the provider's process id (0: none runs).
    fn now(provider: u32) -> Self {
        let mut machine = Machine {
            at: Some(Instant::now()),
            ..Machine::default()
        };
        if let Ok(stat) = std::fs::read_to_string("/proc/stat") {
            let ticks: u64 = stat
                .lines()
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .skip(1)
                .enumerate()
                // user nice system idle iowait irq softirq steal: not idle
                // (3) or waiting for I/O (4).
                .filter(|(i, _)| *i < 8 && *i != 3 && *i != 4)
                .filter_map(|(_, ticks)| ticks.parse::<u64>().ok())
                .sum();
            machine.busy = Duration::from_millis(ticks * 10);
        }
        let me = std::process::id();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return machine;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // A process may end between the listing and the read.
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some((head, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let comm = head
                .split_once('(')
                .map(|(_, comm)| comm)
                .unwrap_or_default();
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let (Some(utime), Some(stime)) = (
                fields.get(11).and_then(|t| t.parse::<u64>().ok()),
                fields.get(12).and_then(|t| t.parse::<u64>().ok()),
            ) else {
                continue;
            };
            let part = if pid == provider {
                "provider"
            } else if pid == me {
                "bench"
            } else if comm.starts_with("k8s-harness")
                || comm == "etcd"
                // `litellm-crossplane-apiserver`, cut to 15 characters.
                || comm.starts_with("litellm-crosspl")
            {
                "Kubernetes"
            } else if comm == "postgres"
                || comm == "node"
                || pid == STANDIN_PID.load(std::sync::atomic::Ordering::Relaxed)
                || Self::litellm(pid, comm)
            {
                "LiteLLM"
            } else {
                "other"
            };
            *machine.by_part.entry(part).or_default() +=
                Duration::from_millis((utime + stime) * 10);
        }
        machine
    }

    /// Whether `pid` is the LiteLLM proxy's Python process.
    fn litellm(pid: u32, comm: &str) -> bool {
        (comm.starts_with("python") || comm == "litellm")
            && std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline.windows(7).any(|w| w == b"litellm"))
    }

    /// What the machine spent from `earlier` to `self`, one line.
    fn since(&self, earlier: &Machine) -> String {
        let wall = match (self.at, earlier.at) {
            (Some(now), Some(then)) => now.duration_since(then).as_secs_f64(),
            _ => 0.0,
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let busy = self.busy.saturating_sub(earlier.busy).as_secs_f64();
        let parts: Vec<String> = PARTS
            .iter()
            .map(|part| {
                let spent = self
                    .by_part
                    .get(part)
                    .copied()
                    .unwrap_or_default()
                    .saturating_sub(earlier.by_part.get(part).copied().unwrap_or_default())
                    .as_secs_f64();
                format!(
                    "{part} {spent:.1} s ({:.0}%)",
                    100.0 * spent / busy.max(1e-9)
                )
            })
            .collect();
        format!(
            "CPU over {wall:.1} s: {busy:.1} s busy of {:.0} core-seconds ({:.0}%): {}",
            cores * wall,
            100.0 * busy / (cores * wall).max(1e-9),
            parts.join(", ")
        )
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ---------------------------------------------------------------- metrics

/// Every series of the provider's registry (its `/metrics` text), keyed by
/// name and labels.
fn series(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        // Label values hold spaces ("GET /team/info"); the value never does.
        .filter_map(|line| line.rsplit_once(' '))
        .filter_map(|(name, value)| Some((name.to_owned(), value.parse().ok()?)))
        .collect()
}

/// A crossplane-runtime state gauge of `kind`.
fn gauge(series: &BTreeMap<String, f64>, metric: &str, kind: &str) -> usize {
    let kind = format!("Kind={kind}\"");
    series
        .iter()
        .filter(|(name, _)| name.starts_with(metric) && name.contains(&kind))
        .map(|(_, value)| *value as usize)
        .sum()
}

/// How many resources of `kind` are at least Ready and Synced, by the
/// state gauges (all of them are, once both count all).
fn converged(series: &BTreeMap<String, f64>, kind: &str) -> usize {
    gauge(series, "crossplane_managed_resource_ready{", kind).min(gauge(
        series,
        "crossplane_managed_resource_synced{",
        kind,
    ))
}

fn label<'a>(series: &'a str, name: &str) -> Option<&'a str> {
    let start = series.find(&format!("{name}=\""))? + name.len() + 2;
    series[start..].split('"').next()
}

/// What the provider did between two snapshots of its metrics.
#[derive(Default)]
struct Activity {
    /// LiteLLM requests by operation (`"GET /team/info"`), any status.
    calls: BTreeMap<String, u64>,
    reconciles: BTreeMap<String, u64>,
    /// Of those, polls that found nothing changed and so reconciled
    /// nothing (`provider_litellm_unchanged_polls_total`), by kind.
    unchanged: BTreeMap<String, u64>,
    /// Of those, polls that a page of a list route answered
    /// (`provider_litellm_page_polls_total`), by kind.
    paged: BTreeMap<String, u64>,
    /// Of the reconciliations, a new process's first polls that read
    /// nothing and left their object to the next sweep of pages
    /// (`provider_litellm_polls_left_to_pages_total`), by kind.
    left_to_pages: BTreeMap<String, u64>,
    /// Failed reconciliations by `kind/reason`.
    errors: BTreeMap<String, u64>,
    /// The provider's requests to the Kubernetes API server by
    /// `verb resource` (`provider_litellm_kube_requests_total`).
    kube: BTreeMap<String, u64>,
    /// Seconds LiteLLM requests took, summed over all of them.
    litellm_seconds: f64,
}

impl Activity {
    fn between(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> Self {
        let mut activity = Activity::default();
        for (name, value) in after {
            if name.starts_with("provider_litellm_request_duration_seconds_sum{") {
                activity.litellm_seconds += value - before.get(name).copied().unwrap_or(0.0);
                continue;
            }
            let grown = (value - before.get(name).copied().unwrap_or(0.0)).round() as u64;
            if grown == 0 {
                continue;
            }
            let (bucket, key) =
                if name.starts_with("provider_litellm_request_duration_seconds_count{") {
                    (
                        &mut activity.calls,
                        label(name, "operation").map(str::to_owned),
                    )
                } else if name.starts_with("provider_litellm_reconciles_total{") {
                    (
                        &mut activity.reconciles,
                        label(name, "kind").map(str::to_owned),
                    )
                } else if name.starts_with("provider_litellm_unchanged_polls_total{") {
                    (
                        &mut activity.unchanged,
                        label(name, "kind").map(str::to_owned),
                    )
                } else if name.starts_with("provider_litellm_page_polls_total{") {
                    (&mut activity.paged, label(name, "kind").map(str::to_owned))
                } else if name.starts_with("provider_litellm_polls_left_to_pages_total{") {
                    (
                        &mut activity.left_to_pages,
                        label(name, "kind").map(str::to_owned),
                    )
                } else if name.starts_with("provider_litellm_reconcile_errors_total{") {
                    let kind = label(name, "kind").unwrap_or_default();
                    let reason = label(name, "reason").unwrap_or_default();
                    (&mut activity.errors, Some(format!("{kind}/{reason}")))
                } else if name.starts_with("provider_litellm_kube_requests_total{") {
                    let verb = label(name, "verb").unwrap_or_default();
                    let resource = label(name, "resource").unwrap_or_default();
                    (&mut activity.kube, Some(format!("{verb} {resource}")))
                } else {
                    continue;
                };
            *bucket.entry(key.expect("labelled series")).or_default() += grown;
        }
        activity
    }

    fn calls(&self, operation: &str) -> u64 {
        self.calls.get(operation).copied().unwrap_or(0)
    }

    /// Every admin API write is a POST; reads are GETs.
    fn writes(&self) -> u64 {
        self.calls
            .iter()
            .filter(|(op, _)| !op.starts_with("GET "))
            .map(|(_, n)| n)
            .sum()
    }

    fn reconciles(&self, kind: &str) -> u64 {
        self.reconciles.get(kind).copied().unwrap_or(0)
    }

    fn per_object(&self, n: usize) -> String {
        per_object(&self.calls, n)
    }

    /// Kubernetes requests other than the start of a watch (a watch runs
    /// on; the API server ends it every few minutes and it starts again).
    fn kube_requests(&self) -> u64 {
        self.kube
            .iter()
            .filter(|(request, _)| !request.starts_with("watch "))
            .map(|(_, n)| n)
            .sum()
    }
}

fn per_object(counts: &BTreeMap<String, u64>, n: usize) -> String {
    counts
        .iter()
        .map(|(op, calls)| format!("{op} {:.2}", *calls as f64 / n as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------- baseline

struct Baseline {
    create: Duration,
    /// One read of every object, as one poll of all of them (mean of
    /// [`STEADY_POLLS`] rounds), and its CPU time.
    read: Duration,
    read_cpu: Duration,
    /// One poll of every object by pages of the list routes (mean of
    /// [`STEADY_POLLS`] rounds): its CPU time, and the pages it read.
    paged_cpu: Duration,
    pages: u64,
    delete: Duration,
    peak_kib: u64,
    failures: Vec<String>,
    /// What the machine's CPU did while the baseline created, and deleted
    /// ([`Machine::since`]).
    machine_create: String,
    machine_delete: String,
}

/// One team and its key, named and marked as the provider would.
#[derive(Clone)]
struct Pair {
    team: litellm::TeamRequest,
    key: Secret,
    key_request: litellm::KeyRequest,
}

impl Pair {
    fn new(namespace: &str, i: usize) -> Self {
        let owner = |name: &str| Owner {
            cluster: CLUSTER.into(),
            namespace: namespace.into(),
            name: name.into(),
            uid: String::new(),
        };
        let team_name = format!("team-{i:04}");
        let team_id = default_id(namespace, &team_name);
        let team_params = TeamParameters {
            team_alias: Some(format!("bench team {i}")),
            ..TeamParameters::default()
        };
        let key_params = KeyParameters {
            team_id: Some(team_id.clone()),
            ..KeyParameters::default()
        };
        Pair {
            team: team::request(
                &team_id,
                &team_params,
                &Resolved::default(),
                &owner(&team_name),
            ),
            key: generate_key(),
            key_request: key::request(
                &key_params,
                &Resolved::default(),
                &owner(&format!("key-{i:04}")),
            ),
        }
    }

    fn token(&self) -> String {
        token_of(&self.key)
    }
}

/// Runs `call` for every pair, [`BASELINE_CONCURRENCY`] at a time: the
/// elapsed time and the failures.
async fn all_pairs<F, Fut>(
    client: &litellm::Client,
    pairs: &[Pair],
    call: F,
) -> (Duration, Vec<String>)
where
    F: Fn(litellm::Client, Pair) -> Fut,
    Fut: std::future::Future<Output = Result<(), litellm::Error>> + Send + 'static,
{
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    let mut failures = Vec::new();
    let mut joined = |result: Option<Result<Result<(), litellm::Error>, _>>| {
        if let Some(Err(err)) = result.map(|task| task.expect("baseline task")) {
            failures.push(err.to_string());
        }
    };
    for pair in pairs {
        if tasks.len() >= BASELINE_CONCURRENCY {
            joined(tasks.join_next().await);
        }
        tasks.spawn(call(client.clone(), pair.clone()));
    }
    while !tasks.is_empty() {
        joined(tasks.join_next().await);
    }
    (started.elapsed(), failures)
}
/// The least LiteLLM work that makes, reads and deletes the same objects,
/// without Kubernetes, counted as the provider's calls are:
/// - create: 2 calls a pair (`/team/new`, then `/key/generate` with the
///   key's secret chosen beforehand, as the provider does); no look
///   before, as nothing exists yet;
/// - read: one `GET` of each object a poll, fingerprinted without parsing
///   ([`litellm::Client::probe`]): what the provider's memo poll does when
///   nothing changed on its own;
/// - read by pages: every page of `/v2/team/list` and `/key/list` a poll
///   (one call per 100 objects of each), each entry fingerprinted as
///   parsed and compared with the last poll's
///   ([`litellm::Client::listed_page`]): what the provider's sweeps do;
/// - delete: 1 call a pair: `/team/delete`, which on LiteLLM 1.108.7
///   deletes the team's keys with it.
async fn baseline(harness: &Harness, n: usize) -> Baseline {
    reset_peak();
    let namespace = format!("bench-baseline-{}", k8s::unique_suffix());
    let pairs: Vec<Pair> = (0..n).map(|i| Pair::new(&namespace, i)).collect();
    let client = &harness.litellm;

    let machine = Machine::now(0);
    let (create, mut failures) = all_pairs(client, &pairs, |client, pair| async move {
        client.team_new(&pair.team).await?;
        client
            .key_generate(Some(&pair.key), &pair.key_request)
            .await?;
        Ok(())
    })
    .await;
    let machine_create = Machine::now(0).since(&machine);

    // What each read is, from one parsed read of each object (as the
    // provider's first observation after its create), outside the timing.
    let reads: Vec<Arc<[litellm::Read; 2]>> = {
        let mut reads = Vec::with_capacity(n);
        for pair in &pairs {
            match (
                client.team_info_probed(&pair.team.team_id, false).await,
                client.key_info_probed(&pair.token()).await,
            ) {
                (Ok((_, team)), Ok((_, key))) => reads.push(Arc::new([team.read, key.read])),
                (Err(err), _) | (_, Err(err)) => failures.push(err.to_string()),
            }
        }
        reads
    };
    // As many reads as the provider's steady-state window makes, so the CPU
    // time spans enough 10 ms ticks to compare.
    let cpu = cpu_time(0);
    let mut read = Duration::ZERO;
    for _ in 0..STEADY_POLLS {
        let started = Instant::now();
        let mut tasks = JoinSet::new();
        for reads in &reads {
            if tasks.len() >= BASELINE_CONCURRENCY {
                if let Some(Ok(Err(err))) = tasks.join_next().await {
                    failures.push(format!("{err}"));
                }
            }
            let (client, reads) = (client.clone(), reads.clone());
            tasks.spawn(async move {
                client.probe(&reads[0]).await?;
                client.probe(&reads[1]).await?;
                Ok::<(), litellm::Error>(())
            });
        }
        while let Some(result) = tasks.join_next().await {
            if let Ok(Err(err)) = result {
                failures.push(format!("{err}"));
            }
        }
        read += started.elapsed() / STEADY_POLLS;
    }
    let read_cpu = (cpu_time(0) - cpu) / STEADY_POLLS;
    let (paged_cpu, pages) = baseline_by_pages(client, &mut failures).await;

    let machine = Machine::now(0);
    let (delete, delete_failures) = all_pairs(client, &pairs, |client, pair| async move {
        client.team_delete(&pair.team.team_id).await?;
        Ok(())
    })
    .await;
    failures.extend(delete_failures);
    let machine_delete = Machine::now(0).since(&machine);
    Baseline {
        create,
        read,
        read_cpu,
        paged_cpu,
        pages,
        delete,
        peak_kib: vm_kib(0, "VmHWM"),
        failures,
        machine_create,
        machine_delete,
    }
}

/// The ids of list entries by their texts' fingerprints.
#[derive(Default)]
struct Texts(HashMap<litellm::Fingerprint, String>);

impl litellm::pages::Wants for Texts {
    fn known(&self, text: litellm::Fingerprint) -> Option<&str> {
        self.0.get(&text).map(String::as_str)
    }

    fn wanted(&self, _: &str) -> bool {
        true
    }
}

/// [`STEADY_POLLS`] polls of every team and key on the proxy by pages of
/// their list routes, each entry compared with the one before (parsed only
/// where its text changed, as a sweep does), after one poll that parses
/// them all: the CPU time and the pages of one poll (means). Failures go to
/// `failures`.
async fn baseline_by_pages(
    client: &litellm::Client,
    failures: &mut Vec<String>,
) -> (Duration, u64) {
    let size = litellm::pages::MAX_PAGE_SIZE;
    // Per route, the ids of the entries' texts as the poll before saw them:
    // an entry of the same text is not parsed again, as in a sweep.
    let mut seen: HashMap<litellm::List, Texts> = HashMap::new();
    let mut changed = 0u64;
    let mut pages = 0u64;
    let mut cpu = cpu_time(0);
    for round in 0..=STEADY_POLLS {
        if round == 1 {
            // What a steady state polls from.
            cpu = cpu_time(0);
            pages = 0;
        }
        for list in [litellm::List::Teams, litellm::List::Keys] {
            let known = seen.remove(&list).unwrap_or_default();
            let mut now = Texts::default();
            let mut page = 1;
            loop {
                let listing = match client.listed_page_for(list, page, size, &known).await {
                    Ok(listing) => listing,
                    Err(err) => {
                        failures.push(err.to_string());
                        break;
                    }
                };
                pages += 1;
                let listed = listing.sent;
                for entry in listing.page.entries {
                    if round > 0 && !entry.known() {
                        changed += 1;
                    }
                    now.0.insert(entry.text, entry.id);
                }
                if listed < size as usize || u64::from(page) * u64::from(size) >= listing.page.total
                {
                    break;
                }
                page += 1;
            }
            seen.insert(list, now);
        }
    }
    let cpu = (cpu_time(0) - cpu) / STEADY_POLLS;
    if changed > 0 {
        failures.push(format!(
            "{changed} entries changed between the baseline's polls by pages"
        ));
    }
    (cpu, pages / u64::from(STEADY_POLLS))
}

// ---------------------------------------------------------------- provider

/// The provider at work on one namespace of the API server.
struct World {
    /// The provider, in a process of its own.
    provider: ProviderProcess,
    kube: kube::Client,
    namespace: String,
    teams: Api<LiteLLMTeam>,
    keys: Api<LiteLLMVirtualKey>,
    secrets: Api<KubeSecret>,
    instances: Api<LiteLLMInstance>,
}

struct Convergence {
    /// Until every object was Ready and Synced; `None` after
    /// [`CONVERGE_TIMEOUT`].
    elapsed: Option<Duration>,
    activity: Activity,
    /// CPU time of the provider's process meanwhile.
    cpu: Duration,
    /// What the machine's CPU did meanwhile ([`Machine::since`]).
    machine: String,
}

/// A provider stopped and another started over the same converged
/// objects: a rollout, or a new leader.
struct Restart {
    /// From the new process's start until every team and key was
    /// reconciled in full once (after which each polls from its memo);
    /// `None` after [`CONVERGE_TIMEOUT`].
    elapsed: Option<Duration>,
    /// The new process's, from its start.
    activity: Activity,
    cpu: Duration,
    /// The new process's peak RSS until then.
    peak_kib: u64,
    machine: String,
}

struct Steady {
    window: Duration,
    activity: Activity,
    cpu: Duration,
    /// Teams, keys and Secrets whose resourceVersion changed in the window.
    rewritten: usize,
    machine: String,
}

struct Deletion {
    elapsed: Duration,
    activity: Activity,
    /// CPU time of the provider's process meanwhile.
    cpu: Duration,
    machine: String,
    /// The provider's in-flight limits once all was deleted.
    limits: String,
}

fn manifest<K: DeserializeOwned>(
    kind: &str,
    name: &str,
    labels: &serde_json::Value,
    for_provider: serde_json::Value,
) -> K {
    serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "labels": labels},
        "spec": {"forProvider": for_provider, "instanceRef": {"name": INSTANCE}},
    }))
    .expect("valid manifest")
}

/// The master-key Secret and an attached (`managed: false`) instance marked
/// ready, as the instance controller would after probing the proxy; its
/// probes are not what is measured.
async fn attach_instance(harness: &Harness, namespace: &str) {
    let secret: KubeSecret = serde_json::from_value(json!({
        "metadata": {"name": MASTER_KEY_SECRET},
        "stringData": {"masterKey": harness.master_key},
    }))
    .expect("valid Secret");
    Api::<KubeSecret>::namespaced(harness.kube.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await
        .expect("master key Secret");
    let instances: Api<LiteLLMInstance> = Api::namespaced(harness.kube.clone(), namespace);
    let instance: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": INSTANCE},
        "spec": {
            "workload": {"managed": false, "endpoint": harness.url},
            "masterKey": {"secretRef": {"name": MASTER_KEY_SECRET, "key": "masterKey"}},
        },
    }))
    .expect("valid instance");
    instances
        .create(&PostParams::default(), &instance)
        .await
        .expect("instance");
    let status = json!({"status": {"ready": true, "endpoint": harness.url}});
    instances
        .patch_status(INSTANCE, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("instance status");
}

/// The objects of `api` matching the label `selector` (all for `""`).
async fn list<K: ManagedKind>(api: &Api<K>, selector: &str) -> Vec<K> {
    api.list(&ListParams::default().labels(selector))
        .await
        .expect("list")
        .items
}

/// Deletes the objects of `api` that `params` select. A busy API server
/// may drop the connection of a collection this large before it answers;
/// the deletion goes on, and asking again is harmless.
async fn delete_collection<K: ManagedKind>(
    api: &Api<K>,
    delete: &DeleteParams,
    params: &ListParams,
) {
    for attempt in 1.. {
        match api.delete_collection(delete, params).await {
            Ok(_) => return,
            Err(err) if attempt < 5 => {
                eprintln!("deleting {}: {err}; asking again", K::kind(&()));
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
            Err(err) => panic!("deleting {}: {err}", K::kind(&())),
        }
    }
}

/// `kind/name` → resourceVersion of every object of `api`: metadata only,
/// a page at a time, so the bench holds no copy of the objects beside the
/// provider's (its memory counts in the same VmHWM).
async fn versions<K>(api: &Api<K>, into: &mut BTreeMap<String, String>)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list_metadata(&params).await.expect("list");
        for object in page.items {
            let name = format!("{}/{}", K::kind(&()), object.name_any());
            into.insert(name, object.resource_version().unwrap_or_default());
        }
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return,
        }
    }
}

impl World {
    async fn start(harness: &Harness, poll: Duration) -> World {
        let kube = &harness.kube;
        let namespace = k8s::namespace(kube, "bench-provider").await;
        attach_instance(harness, &namespace).await;
        // The provider's own client (in its process), its requests counted
        // by verb and resource; the bench's creates, lists and deletes go
        // through another.
        World {
            provider: ProviderProcess::start(&namespace, poll),
            teams: Api::namespaced(kube.clone(), &namespace),
            keys: Api::namespaced(kube.clone(), &namespace),
            secrets: Api::namespaced(kube.clone(), &namespace),
            instances: Api::namespaced(kube.clone(), &namespace),
            namespace,
            kube: kube.clone(),
        }
    }

    /// Creates the pairs wave by wave, each once the previous one is Ready.
    async fn converge(&self, n: usize, wave: usize) -> Convergence {
        let start = self.series().await;
        let cpu = self.cpu_time();
        let machine = self.machine();
        let started = Instant::now();
        let mut progress = Instant::now();
        for first in (0..n).step_by(wave) {
            let end = (first + wave).min(n);
            let label = json!({WAVE_LABEL: (first / wave).to_string()});
            // Created as fast as the API server takes them (32 requests
            // in flight), so "at once" means at once for the provider too.
            // A finished task is joined before the next starts: a JoinSet
            // keeps each task's memory until it is joined, and this
            // process's peak memory is the provider's figure.
            let mut creates = JoinSet::new();
            for i in first..end {
                if creates.len() >= CREATE_CONCURRENCY {
                    if let Some(created) = creates.join_next().await {
                        created.expect("create task");
                    }
                }
                let team: LiteLLMTeam = manifest(
                    "LiteLLMTeam",
                    &format!("team-{i:04}"),
                    &label,
                    json!({"teamAlias": format!("bench team {i}")}),
                );
                let key: LiteLLMVirtualKey = manifest(
                    "LiteLLMVirtualKey",
                    &format!("key-{i:04}"),
                    &label,
                    json!({"teamRef": {"name": format!("team-{i:04}")}}),
                );
                let (teams, keys) = (self.teams.clone(), self.keys.clone());
                creates.spawn(async move {
                    teams
                        .create(&PostParams::default(), &team)
                        .await
                        .expect("team created");
                    keys.create(&PostParams::default(), &key)
                        .await
                        .expect("key created");
                });
            }
            while let Some(created) = creates.join_next().await {
                created.expect("create task");
            }
            loop {
                // From the provider's own state gauges (its caches), not a
                // list: listing 2N objects every second would put the
                // bench's memory into the provider's figure.
                let now = self.series().await;
                let ready_teams = converged(&now, "LiteLLMTeam");
                let ready_keys = converged(&now, "LiteLLMVirtualKey");
                if ready_teams == end && ready_keys == end {
                    break;
                }
                if started.elapsed() > *CONVERGE_TIMEOUT {
                    eprintln!("N={n}: not converged after {:?}", *CONVERGE_TIMEOUT);
                    return Convergence {
                        elapsed: None,
                        activity: Activity::between(&start, &self.series().await),
                        cpu: self.cpu_time() - cpu,
                        machine: self.machine().since(&machine),
                    };
                }
                if progress.elapsed() > Duration::from_secs(30) {
                    progress = Instant::now();
                    let so_far = Activity::between(&start, &self.series().await);
                    eprintln!(
                        "N={n}: {:.0} s: {ready_teams}/{end} teams and {ready_keys}/{end} keys \
                         ready; calls {:?}; errors {:?}",
                        started.elapsed().as_secs_f64(),
                        so_far.calls,
                        so_far.errors
                    );
                }
                // Listing 2N objects costs the API server; at 10,000 pairs
                // once a second is enough.
                tokio::time::sleep(
                    Duration::from_millis(500).max(Duration::from_micros(100 * n as u64)),
                )
                .await;
            }
        }
        Convergence {
            elapsed: Some(started.elapsed()),
            activity: Activity::between(&start, &self.series().await),
            cpu: self.cpu_time() - cpu,
            machine: self.machine().since(&machine),
        }
    }

    /// The machine's CPU by part now, the provider's process counted as
    /// the provider.
    fn machine(&self) -> Machine {
        Machine::now(self.provider.pid())
    }

    /// The provider's metrics now.
    async fn series(&self) -> BTreeMap<String, f64> {
        series(&self.provider.get("/metrics").await)
    }

    /// The provider's CPU time so far.
    fn cpu_time(&self) -> Duration {
        cpu_time(self.provider.pid())
    }

    /// `kind/name` → resourceVersion of every team, key and Secret.
    async fn versions(&self) -> BTreeMap<String, String> {
        let mut all = BTreeMap::new();
        versions(&self.teams, &mut all).await;
        versions(&self.keys, &mut all).await;
        versions(&self.secrets, &mut all).await;
        all
    }

    /// Stops the provider (SIGTERM, as a rollout does) and starts another,
    /// which knows nothing of the first: its caches list everything again,
    /// and each object's first reconciliation is one in full. Measured from
    /// the new process's start until every team and key had one.
    async fn restart(&mut self, n: usize, poll: Duration) -> Restart {
        self.provider.stop();
        let machine = self.machine();
        let started = Instant::now();
        self.provider = ProviderProcess::start(&self.namespace, poll);
        let nothing = BTreeMap::new();
        // Reconciliations in full: not a poll that found nothing changed,
        // nor a first poll left to a sweep of pages (whose object then
        // reconciles in full from the page).
        let full = |activity: &Activity, kind: &str| {
            let of = |counted: &BTreeMap<String, u64>| counted.get(kind).copied().unwrap_or(0);
            activity
                .reconciles(kind)
                .saturating_sub(of(&activity.unchanged) + of(&activity.left_to_pages))
        };
        let elapsed = loop {
            let activity = Activity::between(&nothing, &self.series().await);
            if full(&activity, "team") >= n as u64 && full(&activity, "key") >= n as u64 {
                break Some(started.elapsed());
            }
            if started.elapsed() > *CONVERGE_TIMEOUT {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        Restart {
            elapsed,
            activity: Activity::between(&nothing, &self.series().await),
            cpu: self.cpu_time(),
            peak_kib: vm_kib(self.provider.pid(), "VmHWM"),
            machine: self.machine().since(&machine),
        }
    }

    async fn steady(&self, n: usize, poll: Duration) -> Steady {
        // The last objects to converge still have the reconcile their own
        // status write triggers; one full (jittered) interval later every
        // object is on its plain poll cycle.
        let converged = self.series().await;
        tokio::time::sleep(poll.mul_f64(MAX_JITTER)).await;
        // While the proxy was busy creating, polls read each object on its
        // own; the first page that answers one after that parses its entry
        // once, and from then on knows its text. The steady state begins
        // once the pages have answered as many polls as there are objects
        // (two more intervals at most: a proxy without pages never does).
        let wait_for_pages = Instant::now();
        while wait_for_pages.elapsed() < poll * 2 {
            let paged: u64 = Activity::between(&converged, &self.series().await)
                .paged
                .values()
                .sum();
            if paged >= 2 * n as u64 {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        let window = poll.mul_f64(MAX_JITTER * f64::from(STEADY_POLLS));
        let versions_before = self.versions().await;
        eprintln!(
            "steady-state window of {:.0} s begins (provider pid {})",
            window.as_secs_f64(),
            self.provider.pid()
        );
        let before = self.series().await;
        let cpu = self.cpu_time();
        let machine = self.machine();
        tokio::time::sleep(window).await;
        let cpu = self.cpu_time() - cpu;
        let machine = self.machine().since(&machine);
        let after = self.series().await;
        let rewritten = self
            .versions()
            .await
            .iter()
            .filter(|(name, version)| versions_before.get(*name) != Some(*version))
            .count();
        Steady {
            window,
            activity: Activity::between(&before, &after),
            cpu,
            rewritten,
            machine,
        }
    }

    /// Deletes the pairs wave by wave and waits for the finalizers: they
    /// go only once LiteLLM confirmed each deletion, so empty lists mean the
    /// proxy holds none of this run's objects.
    async fn delete(self, n: usize, wave: usize) -> Deletion {
        let before = self.series().await;
        let cpu = self.cpu_time();
        let machine = self.machine();
        let started = Instant::now();
        let delete = DeleteParams::default();
        for index in 0..n.div_ceil(wave) {
            let selector = format!("{WAVE_LABEL}={index}");
            let in_wave = ListParams::default().labels(&selector);
            delete_collection(&self.keys, &delete, &in_wave).await;
            delete_collection(&self.teams, &delete, &in_wave).await;
            let gone = || async {
                if wave >= n {
                    // All at once: the provider's caches say it, without a
                    // list of every object.
                    let now = self.series().await;
                    gauge(&now, "crossplane_managed_resource_exists", "LiteLLMTeam") == 0
                        && gauge(
                            &now,
                            "crossplane_managed_resource_exists",
                            "LiteLLMVirtualKey",
                        ) == 0
                } else {
                    list(&self.keys, &selector).await.is_empty()
                        && list(&self.teams, &selector).await.is_empty()
                }
            };
            while !gone().await {
                assert!(
                    started.elapsed() < *CONVERGE_TIMEOUT,
                    "resources of namespace {} still present after {:?}",
                    self.namespace,
                    *CONVERGE_TIMEOUT
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
        let elapsed = started.elapsed();
        let activity = Activity::between(&before, &self.series().await);
        let cpu = self.cpu_time() - cpu;
        let machine = self.machine().since(&machine);
        let limits = self.provider.get("/limits").await;
        drop(self.provider);
        // The harness runs no garbage collector or namespace controller: what
        // the namespace still holds is deleted here, not left to them.
        self.secrets
            .delete_collection(&delete, &ListParams::default())
            .await
            .expect("Secrets deleted");
        self.instances
            .delete(INSTANCE, &delete)
            .await
            .expect("instance deleted");
        Api::<Namespace>::all(self.kube)
            .delete(&self.namespace, &delete)
            .await
            .expect("namespace deleted");
        Deletion {
            elapsed,
            activity,
            cpu,
            machine,
            limits,
        }
    }
}

// ---------------------------------------------------------------- report

fn ratio_row(what: &str, provider: f64, baseline: f64, unit: &str) {
    println!(
        "{what:<34}{provider:>10.2}{unit:<2}{baseline:>10.2}{unit:<2}{:>9.2}",
        provider / baseline
    );
}

/// Prints convergence and steady state; `false` if the steady state was
/// more than one read per object poll (a page of a list route standing for
/// the reads of the polls it answered) or anything else.
fn report(
    n: usize,
    wave: usize,
    poll: Duration,
    base: &Baseline,
    convergence: &Convergence,
    steady: Option<&Steady>,
    memory: Memory,
) -> bool {
    let Memory {
        rss_before_kib,
        peak_kib,
        anon_before_kib,
        anon_steady_kib,
    } = memory;
    let objects = 2 * n;
    println!(
        "\n== N={n}: {n} teams + {n} keys in waves of {wave} pairs, poll interval {poll:?}, \
         polls aligned to {:?} ==",
        poll_tick().unwrap_or(timing::POLL_TICK)
    );
    println!(
        "baseline: the least work, {BASELINE_CONCURRENCY} in flight: create 2 LiteLLM calls a pair \
         (/team/new, /key/generate), read 2 a pair and poll (GET, fingerprinted unparsed, as a \
         memo poll) or by pages ({} pages a poll of all: /v2/team/list and /key/list, 100 \
         entries a page, each parsed and fingerprinted where its text changed, as a sweep), \
         delete 1 a pair \
         (/team/delete takes the team's keys)",
        base.pages
    );
    println!(
        "{:<34}{:>12}{:>12}{:>9}",
        "", "provider", "baseline", "ratio"
    );
    match convergence.elapsed {
        Some(elapsed) => ratio_row(
            "empty -> all Ready/Synced",
            elapsed.as_secs_f64(),
            base.create.as_secs_f64(),
            " s",
        ),
        None => println!(
            "empty -> all Ready/Synced: NOT CONVERGED after {:?} (baseline {:.2} s)",
            *CONVERGE_TIMEOUT,
            base.create.as_secs_f64()
        ),
    }
    let cpu_per_read = base.read_cpu.as_secs_f64() / objects as f64;
    if let Some(steady) = steady {
        let polls = steady.activity.reconciles("team") + steady.activity.reconciles("key");
        let cpu_per_poll = steady.cpu.as_secs_f64() / polls.max(1) as f64;
        ratio_row(
            "CPU per object poll (read)",
            cpu_per_poll * 1e6,
            cpu_per_read * 1e6,
            "µs",
        );
        ratio_row(
            "CPU per object poll (by pages)",
            cpu_per_poll * 1e6,
            base.paged_cpu.as_secs_f64() / objects as f64 * 1e6,
            "µs",
        );
    }
    ratio_row("peak RSS (VmHWM)", mib(peak_kib), mib(base.peak_kib), "Mi");
    println!(
        "RSS before the controllers started: {:.1} MiB; one direct read of all {objects} objects \
         took {:.2} s",
        mib(rss_before_kib),
        base.read.as_secs_f64()
    );
    println!(
        "anonymous memory (RssAnon: heap and stacks, not the binary's pages) {:.1} MiB before the \
         controllers started, {:.1} MiB at the end of the steady state: {:.2} KiB a resource",
        mib(anon_before_kib),
        mib(anon_steady_kib),
        anon_steady_kib.saturating_sub(anon_before_kib) as f64 / objects as f64
    );
    println!(
        "LiteLLM calls per object while converging: {}",
        convergence.activity.per_object(n)
    );
    println!(
        "Kubernetes requests per object while converging (provider's client; watch starts \
         included): {}",
        per_object(&convergence.activity.kube, objects)
    );
    if let Some(elapsed) = convergence.elapsed {
        let wall = elapsed.as_secs_f64();
        let activity = &convergence.activity;
        let calls: u64 = activity.calls.values().sum();
        println!(
            "where the convergence time went: {wall:.1} s wall; LiteLLM {calls} requests, \
             {:.1} request-seconds (on average {:.1} in flight, {:.0} ms each); Kubernetes {} \
             requests from the provider; CPU of this process {:.1} s ({:.0}% of one core)",
            activity.litellm_seconds,
            activity.litellm_seconds / wall,
            1e3 * activity.litellm_seconds / calls.max(1) as f64,
            activity.kube.values().sum::<u64>(),
            convergence.cpu.as_secs_f64(),
            100.0 * convergence.cpu.as_secs_f64() / wall
        );
    }
    println!("  baseline's {}", base.machine_create);
    println!("  provider's {}", convergence.machine);
    println!(
        "reconcile errors while converging: {:?}",
        convergence.activity.errors
    );
    if !base.failures.is_empty() {
        println!(
            "baseline failures: {} (first: {})",
            base.failures.len(),
            base.failures[0]
        );
    }
    let Some(steady) = steady else {
        return false;
    };

    let activity = &steady.activity;
    let mut ok = true;
    println!("steady state over {:.1} s:", steady.window.as_secs_f64());
    println!("  {}", steady.machine);
    // A kind's reads: its own read, and its list route's pages, which
    // answer many polls at once.
    let kinds = [
        ("team", "GET /team/info", Some("GET /v2/team/list")),
        ("key", "GET /key/info", Some("GET /key/list")),
    ];
    for (kind, read, list) in kinds {
        let reconciles = activity.reconciles(kind);
        let reads = activity.calls(read);
        let pages = list.map_or(0, |list| activity.calls(list));
        let paged = activity.paged.get(kind).copied().unwrap_or(0);
        // A reconcile counted just before the window may read inside it
        // (its read waiting for a slot), and one at its end may read after
        // it: at most as many as run at once. Polls a page answered made
        // no read of their own.
        let slack = u64::from(DEFAULT_MAX_RECONCILE_RATE);
        let own = reconciles.saturating_sub(paged);
        // Reconciliations in full that a sweep handed its page's entry to
        // read nothing: at most one read per poll, then.
        let exact = reads <= own + slack && pages <= paged.max(slack);
        ok &= exact && reconciles >= n as u64;
        let unchanged = activity.unchanged.get(kind).copied().unwrap_or(0);
        println!(
            "  {kind}: {:.2} polls per object, LiteLLM reads per poll {:.3} ({reads} {read} + \
             {pages} pages / {reconciles} polls; {unchanged} of them found nothing changed and \
             reconciled nothing, {paged} of those answered by pages){}",
            reconciles as f64 / n as f64,
            (reads + pages) as f64 / reconciles.max(1) as f64,
            if exact {
                ""
            } else {
                "  <-- MORE THAN ONE READ PER POLL"
            }
        );
    }
    let other_reads: u64 = activity
        .calls
        .iter()
        .filter(|(op, _)| {
            op.starts_with("GET ")
                && !kinds
                    .iter()
                    .any(|(_, read, list)| op.as_str() == *read || Some(op.as_str()) == *list)
        })
        .map(|(_, n)| n)
        .sum();
    let writes = activity.writes();
    let polls = activity.reconciles("team") + activity.reconciles("key");
    let kube = activity.kube_requests();
    println!(
        "  Kubernetes requests per object poll: {:.3} ({kube} in {polls} polls; watch starts \
         apart: {:?}){}",
        kube as f64 / polls.max(1) as f64,
        activity.kube,
        if kube == 0 { "" } else { "  <-- NOT ZERO" }
    );
    ok &= writes == 0
        && other_reads == 0
        && kube == 0
        && activity.errors.is_empty()
        && steady.rewritten == 0;
    println!(
        "  LiteLLM writes {writes}, other reads {other_reads}, reconcile errors {:?}, \
         Kubernetes objects rewritten {}{}",
        activity.errors,
        steady.rewritten,
        if ok { "" } else { "  <-- CONTRACT BROKEN" }
    );
    ok
}

/// Prints how long a new provider took to be back at its steady state,
/// against the poll interval (issue 40, goal 3: within one).
fn report_restart(n: usize, poll: Duration, restart: &Restart) {
    let Some(elapsed) = restart.elapsed else {
        println!(
            "restart: not every object reconciled within {:?}",
            *CONVERGE_TIMEOUT
        );
        return;
    };
    println!(
        "restart -> every object reconciled  {:>8.2} s of a {:.0} s poll interval ({:.2} of it)",
        elapsed.as_secs_f64(),
        poll.as_secs_f64(),
        elapsed.as_secs_f64() / poll.as_secs_f64()
    );
    println!(
        "LiteLLM calls per object while restarting: {}; errors {:?}",
        restart.activity.per_object(n),
        restart.activity.errors
    );
    println!(
        "first polls left to a sweep of pages (no read of their own): {:?} of {n} a kind",
        restart.activity.left_to_pages
    );
    let count = |verb: &str| -> u64 {
        restart
            .activity
            .kube
            .iter()
            .filter(|(request, _)| request.starts_with(verb))
            .map(|(_, n)| n)
            .sum()
    };
    let all: u64 = restart.activity.kube.values().sum();
    println!(
        "Kubernetes requests of the new provider until then: {all} ({} lists and {} watch \
         starts, one of each per kind; {} others: {:.2} an object)",
        count("list "),
        count("watch "),
        all - count("list ") - count("watch "),
        (all - count("list ") - count("watch ")) as f64 / (2 * n) as f64
    );
    println!(
        "the new provider until then: CPU {:.1} s, peak RSS {:.1} MiB; {}",
        restart.cpu.as_secs_f64(),
        mib(restart.peak_kib),
        restart.machine
    );
}

fn report_deletion(n: usize, base: &Baseline, deletion: &Deletion) {
    ratio_row(
        "all deleted",
        deletion.elapsed.as_secs_f64(),
        base.delete.as_secs_f64(),
        " s",
    );
    println!(
        "LiteLLM calls per object while deleting: {}; errors {:?}",
        deletion.activity.per_object(n),
        deletion.activity.errors
    );
    // A team's deletion confirms with a list of its namespace's keys that
    // none joins it; those lists are shared (`Kube::list_live`), and this
    // line says how many were sent.
    println!(
        "Kubernetes requests per object while deleting (provider's client): {}",
        per_object(&deletion.activity.kube, 2 * n)
    );
    let wall = deletion.elapsed.as_secs_f64();
    let activity = &deletion.activity;
    let calls: u64 = activity.calls.values().sum();
    println!(
        "where the deletion time went: {wall:.1} s wall; LiteLLM {calls} requests, {:.1} \
         request-seconds (on average {:.1} in flight, {:.0} ms each; the baseline's took {:.0} \
         ms each at {BASELINE_CONCURRENCY} in flight); Kubernetes {} requests from the \
         provider; CPU of the provider {:.1} s ({:.0}% of one core)",
        activity.litellm_seconds,
        activity.litellm_seconds / wall,
        1e3 * activity.litellm_seconds / calls.max(1) as f64,
        1e3 * base.delete.as_secs_f64() * BASELINE_CONCURRENCY as f64 / (4 * n) as f64,
        activity.kube.values().sum::<u64>(),
        deletion.cpu.as_secs_f64(),
        100.0 * deletion.cpu.as_secs_f64() / wall
    );
    println!("  baseline's {}", base.machine_delete);
    println!("  provider's {}", deletion.machine);
    print!("after the deletion, {}", deletion.limits);
}
