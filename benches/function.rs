//! RunFunction over real gRPC against a pass-through baseline measured in
//! the same run, plus the render (compose) itself in-process.
//!
//! `cargo bench --bench function` (set BENCH_SECONDS, default 5 per round).
//! `BENCH_RENDER_ONLY=1` stops after the in-process render (`BENCH_RENDER_N`
//! times, default 20,000), for instruction counts under callgrind.
//! The request is realistic: one team, a budget, 10 keys, 5 models, and
//! observed state for every composed resource.

use std::time::{Duration, Instant};

use function_sdk_rust::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use function_sdk_rust::proto::v1::function_runner_service_server::{
    FunctionRunnerService, FunctionRunnerServiceServer,
};
use function_sdk_rust::proto::v1::{Resource, RunFunctionRequest, RunFunctionResponse, State};
use function_sdk_rust::resource::json_to_struct;
use function_sdk_rust::response;
use serde_json::{json, Value};
use tonic::transport::Channel;

/// Requests in flight during the gRPC rounds.
const CONCURRENCY: usize = 8;

fn object(v: Value) -> Resource {
    Resource {
        resource: Some(json_to_struct(v.as_object().expect("an object"))),
        ..Default::default()
    }
}

fn ready_status(extra: Value) -> Value {
    let mut status = json!({"conditions": [
        {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-30T00:00:00Z"},
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-30T00:00:00Z"}
    ]});
    if let (Some(s), Some(e)) = (status.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    status
}

/// The realistic request: what Crossplane sends for a steady-state AITeam.
fn realistic_request() -> RunFunctionRequest {
    let keys: Vec<Value> = (0..10)
        .map(|i| json!({"name": format!("key-{i}"), "models": ["gpt-4o-mini"], "maxBudget": "10", "budgetDuration": "7d"}))
        .collect();
    let models: Vec<Value> = (0..5)
        .map(|i| json!({"name": format!("model-{i}"), "model": format!("openai/gpt-4o-{i}"),
                        "apiBase": "https://api.openai.example", "apiKeySecretRef": {"name": "openai", "key": "KEY"}}))
        .collect();
    let xr = json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "AITeam",
        "metadata": {"name": "bench", "namespace": "team-bench", "uid": "0c1d2e3f", "generation": 3,
                     "labels": {"app": "bench"}, "annotations": {"note": "benchmark"}},
        "spec": {"team": {"alias": "Bench", "models": ["gpt-4o", "gpt-4o-mini"]},
                 "budget": {"maxBudget": "250", "duration": "30d", "rpmLimit": 600},
                 "keys": keys, "models": models,
                 "crossplane": {"compositionRef": {"name": "aiteams"}}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]}
    });
    let input = json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1", "kind": "Input",
        "instance": {"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                "masterKeySecretRef": {"name": "litellm-master-key", "key": "LITELLM_MASTER_KEY"}}},
        "policy": {"allowedModels": ["gpt-*", "model-*"], "maxBudget": "500", "maxKeys": 20}
    });
    // Observed composed resources as the API server returns them: what this
    // function desired plus metadata and status.
    let desired = litellm_crossplane::function::grpc::run(&RunFunctionRequest {
        observed: Some(State {
            composite: Some(object(xr.clone())),
            ..Default::default()
        }),
        input: Some(json_to_struct(input.as_object().unwrap())),
        ..Default::default()
    });
    let mut observed = State {
        composite: Some(object(xr)),
        ..Default::default()
    };
    for (name, mut resource) in litellm_crossplane::function::grpc::desired_resources(&desired) {
        resource["metadata"]["uid"] = json!(format!("uid-{name}"));
        resource["metadata"]["resourceVersion"] = json!("12345");
        resource["metadata"]["generation"] = json!(1);
        resource["metadata"]["creationTimestamp"] = json!("2026-11-30T00:00:00Z");
        resource["status"] = ready_status(
            json!({"atProvider": {"teamId": "team-bench.bench-team", "spend": "1.25"},
                                                 "ready": true, "endpoint": "http://litellm.litellm.svc:4000"}),
        );
        observed.resources.insert(name, object(resource));
    }
    RunFunctionRequest {
        meta: Some(function_sdk_rust::proto::v1::RequestMeta {
            tag: "bench".into(),
            ..Default::default()
        }),
        observed: Some(observed),
        desired: Some(State::default()),
        input: Some(json_to_struct(input.as_object().unwrap())),
        ..Default::default()
    }
}

/// The baseline: the same kind of tonic server answering `response::to`.
struct PassThrough;

#[tonic::async_trait]
impl FunctionRunnerService for PassThrough {
    async fn run_function(
        &self,
        request: tonic::Request<RunFunctionRequest>,
    ) -> Result<tonic::Response<RunFunctionResponse>, tonic::Status> {
        Ok(tonic::Response::new(response::to(
            request.get_ref(),
            response::DEFAULT_TTL,
        )))
    }
}

async fn start_baseline() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(FunctionRunnerServiceServer::new(PassThrough))
            .serve_with_incoming(litellm_crossplane::function::server::incoming(listener)),
    );
    port
}

async fn start_function() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let args = function_sdk_rust::Args {
        debug: false,
        address: "127.0.0.1:0".into(),
        tls_certs_dir: None,
        insecure: true,
        max_recv_message_size: None,
        metrics_address: String::new(),
    };
    tokio::spawn(async move {
        litellm_crossplane::function::server::serve_on(&args, listener, std::future::pending())
            .await
            .expect("function serves")
    });
    port
}

struct Round {
    requests: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Round {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Drives `CONCURRENCY` clients for `seconds` against one port.
async fn round(port: u16, req: &RunFunctionRequest, seconds: f64) -> Round {
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let mut client = FunctionRunnerServiceClient::new(channel.clone())
                .max_decoding_message_size(64 << 20);
            let req = req.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    client.run_function(req.clone()).await.expect("answered");
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Round {
        requests: latencies.len(),
        elapsed,
        latencies,
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let seconds: f64 = env_or("BENCH_SECONDS", 5.0);
    let req = realistic_request();
    let size = prost::Message::encoded_len(&req);
    println!(
        "request: {size} bytes, {} observed composed resources",
        req.observed.as_ref().unwrap().resources.len()
    );

    // The render itself, in-process: compose plus the conversions around
    // it, on a request already decoded the way the server decodes it.
    let decoded = <litellm_crossplane::function::wire::Request as prost::Message>::decode(
        prost::Message::encode_to_vec(&req).as_slice(),
    )
    .unwrap();
    let mut renders: Vec<Duration> = (0..env_or("BENCH_RENDER_N", 20_000))
        .map(|_| {
            let input = decoded.clone();
            let t = Instant::now();
            std::hint::black_box(litellm_crossplane::function::grpc::respond(
                std::hint::black_box(input),
            ));
            t.elapsed()
        })
        .collect();
    renders.sort();
    println!(
        "render in-process: p50 {:?}  p99 {:?}  (target p99 < 200µs)",
        percentile(&renders, 0.5),
        percentile(&renders, 0.99)
    );

    if std::env::var_os("BENCH_RENDER_ONLY").is_some() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let baseline_port = start_baseline().await;
        let function_port = start_function().await;
        // Warm up both, then alternate rounds so machine noise hits both alike.
        round(baseline_port, &req, 0.5).await;
        round(function_port, &req, 0.5).await;
        let mut ratios = Vec::new();
        for i in 0..3 {
            let base = round(baseline_port, &req, seconds).await;
            let func = round(function_port, &req, seconds).await;
            let ratio = func.rps() / base.rps();
            ratios.push(ratio);
            println!(
                "round {i}: baseline {:.0} req/s (p50 {:?}, p99 {:?}) | function {:.0} req/s (p50 {:?}, p99 {:?}) | ratio {:.2}",
                base.rps(), percentile(&base.latencies, 0.5), percentile(&base.latencies, 0.99),
                func.rps(), percentile(&func.latencies, 0.5), percentile(&func.latencies, 0.99),
                ratio
            );
        }
        ratios.sort_by(f64::total_cmp);
        println!("function/baseline throughput, median of 3 rounds: {:.2} (target >= 0.80)", ratios[1]);
    });
}
