//! `provider-litellm`: reconciles `LiteLLMInstance`s and the resources of
//! every kind of the registry (`litellm_crossplane::managed_kinds!`:
//! `LiteLLMTeam`, `LiteLLMVirtualKey`, ...) against the LiteLLM admin API,
//! with Crossplane managed-resource semantics.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use litellm_crossplane::provider::instance::{self, InstanceOptions};
use litellm_crossplane::provider::managed::reconciler::{self, Context};
use litellm_crossplane::provider::managed::resolve;
use litellm_crossplane::provider::runtime::cluster_id;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::runtime::health::Health;
use litellm_crossplane::provider::runtime::http;
use litellm_crossplane::provider::runtime::leader::{self, Leadership, LeaseSettings};
use litellm_crossplane::provider::runtime::memory;
use litellm_crossplane::provider::runtime::threads;
use litellm_crossplane::provider::telemetry::logging;
use litellm_crossplane::provider::telemetry::metrics::Metrics;
use litellm_crossplane::provider::watch::timing;
use prometheus_client::registry::Registry;

/// The provider's caches and every reconciliation allocate and free small
/// objects from many threads; glibc's per-thread arenas kept what they
/// freed, mimalloc returns it (bench notes: git history of docs/provider-benchmark.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Parser, Debug)]
#[command(
    name = "provider-litellm",
    version,
    about = "Crossplane provider for LiteLLM: reconciles LiteLLMInstances and the LiteLLM teams, \
             keys, budgets, models, users, organizations, credentials and MCP servers of the \
             cluster against the LiteLLM admin API"
)]
struct Args {
    /// Address of /healthz, /readyz and /metrics: `HOST:PORT`, or Go's
    /// `:PORT` for every interface.
    #[arg(long, env = "METRICS_ADDRESS", default_value = ":8080", value_parser = litellm_crossplane::listen::parse)]
    metrics_address: SocketAddr,
    /// Log the provider's debug lines too (`RUST_LOG`, where set, decides
    /// instead).
    #[arg(short = 'd', long)]
    debug: bool,
    /// Watch only this namespace (all namespaces when unset).
    #[arg(long, env = "WATCH_NAMESPACE")]
    namespace: Option<String>,
    /// Cluster id written into ownership markers in LiteLLM. When unset it
    /// is kept in the ConfigMap provider-litellm-cluster-id of the
    /// provider's namespace (POD_NAMESPACE, else the kubeconfig context's),
    /// created once.
    #[arg(long, env = "CLUSTER_ID")]
    cluster_id: Option<String>,
    /// Default poll interval of healthy resources (Go duration); the
    /// crossplane.io/poll-interval annotation overrides it per resource.
    #[arg(long, visible_alias = "poll", env = "POLL_INTERVAL", value_parser = parse_duration, default_value = "60s")]
    poll_interval: Duration,
    /// How far each poll is spread after its interval, in percent of it
    /// (0 to 99), so resources do not poll LiteLLM in lockstep.
    #[arg(long, env = "POLL_JITTER_PERCENTAGE", default_value_t = timing::DEFAULT_POLL_JITTER_PERCENTAGE, value_parser = clap::value_parser!(u8).range(0..100))]
    poll_jitter_percentage: u8,
    /// The longest a resource goes without a full reconciliation (Go
    /// duration): polls that find LiteLLM and Kubernetes as they were
    /// are answered by one read until then.
    #[arg(short = 's', long = "sync", env = "SYNC_INTERVAL", value_parser = parse_duration, default_value = "1h")]
    sync: Duration,
    /// Shortest poll interval any resource may ask for with
    /// crossplane.io/poll-interval; shorter ones are raised to it.
    #[arg(long, env = "MIN_POLL_INTERVAL", value_parser = parse_duration, default_value = "10s")]
    min_poll_interval: Duration,
    /// Longest poll interval; longer ones are lowered to it.
    #[arg(long, env = "MAX_POLL_INTERVAL", value_parser = parse_duration, default_value = "24h")]
    max_poll_interval: Duration,
    /// Elect a leader through a Lease so several replicas can run
    /// (`--leader-election`, `--leader-election=false`). Unset: on where
    /// POD_NAMESPACE is set (Crossplane sets it on a provider's
    /// Deployment), off otherwise.
    #[arg(
        short = 'l',
        long,
        env = "LEADER_ELECTION",
        num_args = 0..=1,
        default_missing_value = "true",
        action = clap::ArgAction::Set
    )]
    leader_election: Option<bool>,
    /// Namespace of the leader Lease; it must exist.
    #[arg(long, env = "POD_NAMESPACE")]
    lease_namespace: Option<String>,
    /// Name of the leader Lease.
    #[arg(long, env = "LEASE_NAME", default_value = leader::DEFAULT_LEASE_NAME)]
    lease_name: String,
    /// This replica's identity in the Lease; defaults to the hostname (the
    /// pod's name) and a random suffix, unique per process.
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// Reconciliations of one kind at once, as crossplane-runtime's
    /// providers use their --max-reconcile-rate.
    #[arg(long, env = "MAX_RECONCILE_RATE", default_value_t = reconciler::DEFAULT_MAX_RECONCILE_RATE)]
    max_reconcile_rate: u16,
    /// Admin requests in flight to one LiteLLM proxy at once, over all
    /// kinds; more wait for their turn (their timeout starts after).
    #[arg(long, env = "MAX_IN_FLIGHT_PER_INSTANCE", default_value_t = resolve::DEFAULT_MAX_IN_FLIGHT)]
    max_in_flight_per_instance: usize,
    /// Management policies (spec.managementPolicies) are always honoured:
    /// accepted as Crossplane's providers take it; `false` is refused.
    #[arg(
        long,
        env = "ENABLE_MANAGEMENT_POLICIES",
        num_args = 0..=1,
        default_missing_value = "true",
        default_value_t = true,
        action = clap::ArgAction::Set
    )]
    enable_management_policies: bool,
    /// Log lines as text or as JSON objects.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Threads the provider runs on: 1 runs everything on one (fewest
    /// wake-ups per poll); more run tokio's multi-threaded runtime with
    /// that many workers (src/provider/runtime/threads.rs).
    #[arg(long, env = threads::WORKER_THREADS_ENV, value_parser = threads::parse_threads, default_value_t = threads::DEFAULT_WORKER_THREADS)]
    worker_threads: usize,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    timing::parse_go_duration(text)
        .ok_or_else(|| format!("{text:?} is not a positive Go duration such as 30s or 5m"))
}

fn main() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let args = Args::parse();
    logging::init(matches!(args.log_format, LogFormat::Json), args.debug);
    // Before the caches fill (src/provider/runtime/memory.rs).
    if !memory::keep_pages_small() {
        tracing::info!(
            "transparent huge pages left as the kernel and MIMALLOC_ALLOW_THP have them"
        );
    }
    // Every failure ends the process with one line saying why.
    let result = match threads::build(args.worker_threads) {
        Ok(runtime) => runtime.block_on(run(args)),
        Err(err) => Err(format!("cannot start the async runtime: {err}").into()),
    };
    match result {
        Ok(()) => tracing::info!("shut down"),
        Err(err) => {
            tracing::error!("{err}");
            std::process::exit(1);
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if !args.enable_management_policies {
        return Err(
            "--enable-management-policies=false: management policies cannot be turned \
                    off; every resource's spec.managementPolicies is honoured (default [\"*\"]), \
                    as in Crossplane v2. Leave the flag out"
                .into(),
        );
    }
    // Settled before anything else, so a bad combination fails at once.
    let election =
        match leader::lease_namespace(args.leader_election, args.lease_namespace.as_deref())? {
            Some(namespace) => {
                let identity = match args.identity {
                    Some(identity) => identity,
                    None => format!("{}_{}", hostname()?, random_suffix()?),
                };
                let settings = LeaseSettings::new(namespace, args.lease_name, identity);
                settings.validate()?;
                Some(settings)
            }
            None => None,
        };

    let metrics = Metrics::default();
    // Every request to the API server is counted by verb and resource.
    let client = metrics.kube_client(kube::Config::infer().await?)?;
    // Stored in the provider's own namespace (the pod's; run from a
    // kubeconfig: the context's namespace) unless given.
    let own_namespace = std::env::var("POD_NAMESPACE")
        .ok()
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let cluster_id = cluster_id::resolve(&client, args.cluster_id, &own_namespace).await?;

    let leadership = Leadership::default();
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    leadership.register(&mut registry);
    let health = match election {
        Some(_) => Health::with_leadership(leadership.clone()),
        None => Health::new(),
    };
    let listener = tokio::net::TcpListener::bind(args.metrics_address).await?;
    tokio::spawn(http::serve(listener, Arc::new(registry), health.clone()));

    let instance_metrics = metrics.clone();
    let ctx = Arc::new(
        Context::new(client.clone(), cluster_id, metrics)
            .with_poll_interval(args.poll_interval)
            .with_poll_jitter(args.poll_jitter_percentage)
            .with_sync_period(args.sync)
            .with_poll_bounds(timing::PollBounds {
                min: args.min_poll_interval,
                max: args.max_poll_interval,
            })
            .with_max_reconcile_rate(args.max_reconcile_rate)
            .with_max_in_flight(args.max_in_flight_per_instance),
    );
    let instance_options = InstanceOptions {
        namespace: args.namespace.clone(),
        concurrency: args.max_reconcile_rate.max(1),
        ..InstanceOptions::default()
    };
    // The LiteLLMInstance controller runs beside the entity controllers,
    // under the same leadership. They are built only once this replica
    // leads, so a standby holds no watches.
    let work = {
        let client = client.clone();
        let namespace = args.namespace.clone();
        let health = health.clone();
        async move {
            let (entities, mut caches) = controllers::build(ctx, namespace);
            let (instances, instance_caches) =
                instance::build(client, instance_options, instance_metrics);
            caches.extend(instance_caches);
            let both = async {
                tokio::join!(entities, instances);
            };
            health.run(both, caches).await;
        }
    };
    match election {
        Some(settings) => {
            tracing::info!(
                identity = %settings.identity,
                namespace = %settings.namespace,
                lease = %settings.name,
                "leader election on"
            );
            tokio::select! {
                result = leader::run_as_leader(client, settings, &leadership, work) => result?,
                () = standby_signal(&leadership) => {
                    tracing::info!("stopped while standing by");
                }
            }
        }
        None => {
            leadership.set_leader(true);
            work.await;
            leadership.set_leader(false);
        }
    }
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C while this replica has not led yet. Once
/// it leads, its controllers shut down gracefully on the same signals and
/// the Lease is released after them, so a signal is theirs.
async fn standby_signal(leadership: &Leadership) {
    let Ok(mut terminate) =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    else {
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        if !leadership.has_led() {
            return;
        }
    }
}

fn hostname() -> Result<String, Box<dyn std::error::Error>> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .ok_or("cannot tell this replica's identity: set --identity or POD_NAME")?;
    Ok(name.trim().to_owned())
}

/// Tells this process from an earlier one of the same pod.
fn random_suffix() -> Result<String, Box<dyn std::error::Error>> {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).map_err(|err| format!("no randomness for the identity: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
