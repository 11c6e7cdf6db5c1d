//! `provider-litellm`: reconciles LiteLLMInstance, LiteLLMTeam,
//! LiteLLMVirtualKey, LiteLLMBudget and LiteLLMModel resources against the
//! LiteLLM admin API, with Crossplane managed-resource semantics.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use litellm_crossplane::provider::instance::{self, InstanceOptions};
use litellm_crossplane::provider::leader::{self, LeaseSettings};
use litellm_crossplane::provider::metrics::Metrics;
use litellm_crossplane::provider::reconciler::{self, Context};
use litellm_crossplane::provider::{cluster_id, controllers, http, resolve, timing};
use prometheus_client::registry::Registry;
use tracing_subscriber::EnvFilter;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address of /healthz, /readyz and /metrics.
    #[arg(long, env = "METRICS_ADDRESS", default_value = "0.0.0.0:8080")]
    metrics_address: SocketAddr,
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
    #[arg(long, env = "POLL_INTERVAL", value_parser = parse_duration, default_value = "60s")]
    poll_interval: Duration,
    /// Shortest poll interval any resource may ask for with
    /// crossplane.io/poll-interval; shorter ones are raised to it.
    #[arg(long, env = "MIN_POLL_INTERVAL", value_parser = parse_duration, default_value = "10s")]
    min_poll_interval: Duration,
    /// Longest poll interval; longer ones are lowered to it.
    #[arg(long, env = "MAX_POLL_INTERVAL", value_parser = parse_duration, default_value = "24h")]
    max_poll_interval: Duration,
    /// Elect a leader through a Lease so several replicas can run.
    #[arg(long, env = "LEADER_ELECTION", default_value_t = true, action = clap::ArgAction::Set)]
    leader_election: bool,
    /// Namespace of the leader Lease (the pod's namespace in a cluster).
    #[arg(long, env = "POD_NAMESPACE", default_value = "crossplane-system")]
    lease_namespace: String,
    #[arg(long, env = "LEASE_NAME", default_value = "provider-litellm")]
    lease_name: String,
    /// This replica's identity in the Lease; defaults to the hostname.
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
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    timing::parse_go_duration(text)
        .ok_or_else(|| format!("{text:?} is not a positive Go duration such as 30s or 5m"))
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let args = Args::parse();
    init_logging(args.log_format);

    let client = kube::Client::try_default().await?;
    // Stored in the provider's own namespace (the pod's; run from a
    // kubeconfig: the context's namespace) unless given.
    let own_namespace = std::env::var("POD_NAMESPACE")
        .ok()
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let cluster_id = cluster_id::resolve(&client, args.cluster_id, &own_namespace).await?;

    let metrics = Metrics::default();
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    let listener = tokio::net::TcpListener::bind(args.metrics_address).await?;
    tokio::spawn(http::serve(listener, Arc::new(registry)));

    let instance_metrics = metrics.clone();
    let ctx = Arc::new(
        Context::new(client.clone(), cluster_id, metrics)
            .with_poll_interval(args.poll_interval)
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
    // under the same leadership.
    let work = {
        let client = client.clone();
        let namespace = args.namespace.clone();
        async move {
            tokio::join!(
                controllers::run(ctx, namespace),
                instance::controller_with_metrics(client, instance_options, instance_metrics),
            );
        }
    };
    if args.leader_election {
        let identity = match args.identity {
            Some(identity) => identity,
            None => hostname()?,
        };
        let settings = LeaseSettings {
            namespace: args.lease_namespace,
            name: args.lease_name,
            identity,
            duration: Duration::from_secs(15),
            renew_every: Duration::from_secs(5),
        };
        leader::run_as_leader(client, settings, work).await?;
    } else {
        work.await;
    }
    tracing::info!("shut down");
    Ok(())
}

fn hostname() -> Result<String, Box<dyn std::error::Error>> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .ok_or("cannot tell this replica's identity: set --identity or POD_NAME")?;
    Ok(name.trim().to_owned())
}
