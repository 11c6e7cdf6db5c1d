//! RunFunction over real gRPC, the function against both SDKs'
//! pass-throughs measured in the same run, plus the render (compose)
//! itself in-process.
//!
//! `cargo bench --bench function`. Each server is a process of its own, so
//! its CPU time is its own (`/proc/<pid>/stat`):
//!
//! - `function`: the `function-litellm` binary (`--insecure`), as it ships;
//! - `sdk-rust`: a tonic server with function-sdk-rust's generated service
//!   answering `response::to(req)` and nothing else;
//! - `sdk-rust-tuned`: the same pass-through configured as the function is:
//!   mimalloc as its allocator and the function's HTTP/2 flow-control
//!   windows (`server::CONNECTION_WINDOW`, `STREAM_WINDOW`), so that what
//!   is left of the ratio is the function's own work;
//! - `sdk-python`: crossplane-function-sdk-python's `runtime.serve` with a
//!   runner answering `response.to(req)` (`benches/function_sdk_python.py`),
//!   from a virtualenv the bench creates under `target/` (pip must reach
//!   PyPI once; `BENCH_PYTHON=0` leaves it out).
//!
//! The client sends the request encoded once and does not decode the
//! answers (a raw codec), so its work is the same whichever server answers.
//! Rounds of `BENCH_SECONDS` (default 5) at 1 and at 32 requests in
//! flight, the servers taking turns, three rounds each; the ratios are
//! medians of the three.
//!
//! `BENCH_RENDER_ONLY=1` stops after the in-process render (`BENCH_RENDER_N`
//! times, default 20,000), for instruction counts under callgrind.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes};
use function_sdk_rust::proto::v1::function_runner_service_server::{
    FunctionRunnerService, FunctionRunnerServiceServer,
};
use function_sdk_rust::proto::v1::{Resource, RunFunctionRequest, RunFunctionResponse, State};
use function_sdk_rust::resource::json_to_struct;
use function_sdk_rust::response;
use serde_json::{json, Value};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::transport::Channel;

fn object(v: Value) -> Resource {
    Resource {
        resource: Some(json_to_struct(v.as_object().expect("an object"))),
        ..Default::default()
    }
}

fn ready_status(extra: Value) -> Value {
    let mut status = json!({"conditions": [
        {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-30T00:00:00Z", "observedGeneration": 1},
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-30T00:00:00Z", "observedGeneration": 1}
    ]});
    if let (Some(s), Some(e)) = (status.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    status
}

/// `managedFields` as the API server keeps them: one entry per field of
/// `value` for the manager that applied it, in `fieldsV1` form.
fn fields_v1(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (format!("f:{k}"), fields_v1(v)))
                .collect(),
        ),
        _ => json!({}),
    }
}

/// An observed composed resource as Crossplane sends it: what the function
/// desired, plus the metadata the API server and Crossplane add
/// (managedFields of Crossplane's apply and of the provider's status
/// writes, the XR as controller owner, finalizers, labels, annotations)
/// and the provider's status.
fn as_observed(name: &str, mut resource: Value, xr: &Value) -> Value {
    let status = ready_status(json!({
        "atProvider": {"teamId": "team-bench.bench-team", "spend": "1.25",
                       "createdAt": "2026-11-30T00:00:00Z", "updatedAt": "2026-11-30T00:00:00Z"},
        "ready": true, "endpoint": "http://litellm.litellm.svc:4000"
    }));
    let applied = json!({"metadata": {"annotations": {"crossplane.io/composition-resource-name": {}},
                                      "labels": {"crossplane.io/composite": {}},
                                      "ownerReferences": {"k:{\"uid\":\"0c1d2e3f\"}": {}}},
                         "spec": resource["spec"]});
    let api_version = resource["apiVersion"].clone();
    let metadata = resource["metadata"].as_object_mut().expect("metadata");
    metadata.insert(
        "uid".into(),
        json!(format!("6b1f0c3e-2d4a-4f8e-9a7b-{name:0>12}")),
    );
    metadata.insert("resourceVersion".into(), json!("1234567"));
    metadata.insert("generation".into(), json!(2));
    metadata.insert("creationTimestamp".into(), json!("2026-11-30T00:00:00Z"));
    metadata.insert(
        "finalizers".into(),
        json!(["finalizer.managedresource.crossplane.io"]),
    );
    metadata.insert("labels".into(), json!({"crossplane.io/composite": "bench"}));
    metadata.insert(
        "annotations".into(),
        json!({"crossplane.io/composition-resource-name": name,
               "crossplane.io/external-name": format!("team-bench.bench-{name}")}),
    );
    metadata.insert(
        "ownerReferences".into(),
        json!([{"apiVersion": xr["apiVersion"], "kind": xr["kind"], "name": "bench",
                "uid": "0c1d2e3f", "controller": true, "blockOwnerDeletion": true}]),
    );
    metadata.insert(
        "managedFields".into(),
        json!([
            {"manager": "apiextensions.crossplane.io/composed/0c1d2e3f", "operation": "Apply",
             "apiVersion": api_version, "time": "2026-11-30T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&applied)},
            {"manager": "provider-litellm", "operation": "Update", "subresource": "status",
             "apiVersion": api_version, "time": "2026-11-30T00:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": fields_v1(&json!({"status": status}))},
            {"manager": "provider-litellm", "operation": "Update",
             "apiVersion": api_version, "time": "2026-11-30T00:00:00Z",
             "fieldsType": "FieldsV1",
             "fieldsV1": {"f:metadata": {"f:annotations": {"f:crossplane.io/external-name": {}},
                                         "f:finalizers": {".": {}, "v:\"finalizer.managedresource.crossplane.io\"": {}}}}}
        ]),
    );
    resource["status"] = status;
    resource
}

/// The realistic request: what Crossplane sends for a steady-state AITeam
/// (a team, a budget, 10 keys, 5 models, the attached instance, all
/// observed), after an earlier pipeline step that desired two resources
/// of its own, wrote part of the XR's status and put an environment in
/// the context.
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
                     "resourceVersion": "1234500", "creationTimestamp": "2026-11-30T00:00:00Z",
                     "labels": {"app": "bench", "crossplane.io/composite": "bench"},
                     "annotations": {"note": "benchmark"},
                     "finalizers": ["composite.apiextensions.crossplane.io"]},
        "spec": {"team": {"alias": "Bench", "models": ["gpt-4o", "gpt-4o-mini"]},
                 "budget": {"maxBudget": "250", "duration": "30d", "rpmLimit": 600},
                 "keys": keys, "models": models,
                 "crossplane": {"compositionRef": {"name": "aiteams"},
                                "compositionRevisionRef": {"name": "aiteams-1a2b3c4"},
                                "compositionUpdatePolicy": "Automatic"}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available",
                                   "lastTransitionTime": "2026-11-30T00:00:00Z"},
                                  {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
                                   "lastTransitionTime": "2026-11-30T00:00:00Z"}]}
    });
    let input = json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1", "kind": "Input",
        "instance": {"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                "masterKeySecretRef": {"name": "litellm-master-key", "key": "LITELLM_MASTER_KEY"}}},
        "policy": {"allowedModels": ["gpt-*", "model-*"], "maxBudget": "500", "maxKeys": 20}
    });
    let desired = litellm_crossplane::function::grpc::run(&RunFunctionRequest {
        observed: Some(State {
            composite: Some(object(xr.clone())),
            ..Default::default()
        }),
        input: Some(json_to_struct(input.as_object().unwrap())),
        ..Default::default()
    });
    let mut observed = State {
        composite: Some(object(xr.clone())),
        ..Default::default()
    };
    for (name, resource) in litellm_crossplane::function::grpc::desired_resources(&desired) {
        observed
            .resources
            .insert(name.clone(), object(as_observed(&name, resource, &xr)));
    }
    // An earlier step's desired state: two resources of its own and a
    // field of the XR's status.
    let mut earlier = State {
        composite: Some(object(
            json!({"apiVersion": xr["apiVersion"], "kind": xr["kind"],
                                      "status": {"costCenter": "cc-4711"}}),
        )),
        ..Default::default()
    };
    for name in ["network-policy", "quota"] {
        let rules: Vec<Value> = (0..8)
            .map(|i| {
                json!({"from": [{"namespaceSelector": {"matchLabels": {"team": format!("t{i}")}}}],
                            "ports": [{"port": 4000 + i, "protocol": "TCP"}]})
            })
            .collect();
        earlier.resources.insert(
            name.into(),
            object(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": {"name": format!("bench-{name}"), "namespace": "team-bench"},
                          "spec": {"podSelector": {}, "ingress": rules}}),
            ),
        );
    }
    let environment: serde_json::Map<String, Value> = (0..20)
        .map(|i| {
            (
                format!("setting-{i}"),
                json!(format!("value of setting {i} from an EnvironmentConfig")),
            )
        })
        .collect();
    let context = json!({"apiextensions.crossplane.io/environment":
                         {"apiVersion": "internal.crossplane.io/v1alpha1", "kind": "Environment",
                          "data": environment}});
    RunFunctionRequest {
        meta: Some(function_sdk_rust::proto::v1::RequestMeta {
            tag: "bench".into(),
            ..Default::default()
        }),
        observed: Some(observed),
        desired: Some(earlier),
        input: Some(json_to_struct(input.as_object().unwrap())),
        context: Some(json_to_struct(context.as_object().unwrap())),
        ..Default::default()
    }
}

/// Each process of this bench allocates with one allocator for its whole
/// life, chosen at its first allocation (before `main`, from the
/// environment, which reading with `getenv` allocates nothing): mimalloc
/// where `BENCH_MIMALLOC` is set (the tuned pass-through), else the
/// system's (the bench client, and the pass-through as the SDK ships).
struct ChosenAllocator;

static CHOSEN: AtomicU8 = AtomicU8::new(0);

fn mimalloc_chosen() -> bool {
    match CHOSEN.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            // SAFETY: a C string; libc's environment is set up before any
            // Rust code runs.
            let set = unsafe { !libc::getenv(c"BENCH_MIMALLOC".as_ptr()).is_null() };
            CHOSEN.store(if set { 2 } else { 1 }, Ordering::Relaxed);
            set
        }
    }
}

// SAFETY: every call goes to the one allocator the process chose, which
// never changes once chosen (every thread reads the same environment).
unsafe impl GlobalAlloc for ChosenAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mimalloc_chosen() {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        } else {
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mimalloc_chosen() {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        } else {
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mimalloc_chosen() {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        } else {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if mimalloc_chosen() {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, size) }
        } else {
            unsafe { System.realloc(ptr, layout, size) }
        }
    }
}

#[global_allocator]
static ALLOCATOR: ChosenAllocator = ChosenAllocator;

/// function-sdk-rust's pass-through: `response::to`, nothing else.
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

/// The server roles this binary plays when it starts itself again.
const ROLE: &str = "BENCH_FUNCTION_ROLE";

/// Serves `role` on 127.0.0.1:`port` until killed.
fn serve_role(role: &str, port: u16) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let mut builder = match role {
            "sdk-rust" => tonic::transport::Server::builder(),
            // As the function is configured.
            "sdk-rust-tuned" => tonic::transport::Server::builder()
                .initial_connection_window_size(
                    litellm_crossplane::function::server::CONNECTION_WINDOW,
                )
                .initial_stream_window_size(litellm_crossplane::function::server::STREAM_WINDOW),
            other => panic!("no role {other}"),
        };
        builder
            .add_service(
                FunctionRunnerServiceServer::new(PassThrough).max_decoding_message_size(64 << 20),
            )
            .serve_with_incoming(litellm_crossplane::function::server::incoming(listener))
            .await
            .unwrap();
    });
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process under test.
struct Server {
    name: &'static str,
    port: u16,
    child: Child,
}

impl Server {
    /// CPU seconds the process has used (user + system).
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("the server runs");
        // Fields after the command name, which ends at the last ')'.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
        ticks / *CLOCK_TICKS
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`).
static CLOCK_TICKS: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
});

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The function as it ships: the `function-litellm` binary, serving.
fn start_function() -> Server {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_function-litellm"))
        // Metrics on, as in a cluster (the Go SDK's default).
        .args(["--insecure", "--address", &format!("127.0.0.1:{port}")])
        .args(["--metrics-address", &format!("127.0.0.1:{}", free_port())])
        .stdin(Stdio::null())
        .spawn()
        .expect("function-litellm starts");
    Server {
        name: "function",
        port,
        child,
    }
}

/// function-sdk-rust's pass-through: this bench binary, started again in
/// `role` (`sdk-rust`, or `sdk-rust-tuned` with mimalloc).
fn start_sdk_rust(role: &'static str) -> Server {
    let port = free_port();
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env(ROLE, role)
        .env("BENCH_PORT", port.to_string())
        .env_remove("BENCH_MIMALLOC")
        .stdin(Stdio::null());
    if role == "sdk-rust-tuned" {
        command.env("BENCH_MIMALLOC", "1");
    }
    let child = command.spawn().expect("the bench starts itself");
    Server {
        name: role,
        port,
        child,
    }
}

/// A virtualenv with crossplane-function-sdk-python, made once under `target/`.
fn python_venv() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-venv-function-sdk-python");
    let python = venv.join("bin/python");
    let installed = || {
        Command::new(&python)
            .args(["-c", "import crossplane.function.runtime"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !installed() {
        let made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "--quiet",
                    "crossplane-function-sdk-python==0.15.1",
                ])
                .status()
                .is_ok_and(|s| s.success());
        if !made || !installed() {
            eprintln!(
                "cannot make the virtualenv {}: no sdk-python baseline",
                venv.display()
            );
            return None;
        }
    }
    Some(python)
}

fn start_python(python: &Path) -> Server {
    let port = free_port();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/function_sdk_python.py");
    let child = Command::new(python)
        .arg(script)
        .arg(format!("127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .spawn()
        .expect("python starts");
    Server {
        name: "sdk-python",
        port,
        child,
    }
}

/// Sends bytes encoded once and keeps the answer's bytes undecoded, so the
/// client's work does not depend on the server.
#[derive(Clone, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;
    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }
    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, tonic::Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

const RUN_FUNCTION: &str = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";

async fn connect(port: u16) -> Channel {
    let started = Instant::now();
    loop {
        match Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .unwrap()
            .connect()
            .await
        {
            Ok(channel) => return channel,
            Err(e) if started.elapsed() < Duration::from_secs(30) => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await
            }
            Err(e) => panic!("no server on {port}: {e}"),
        }
    }
}

struct Round {
    requests: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    cpu: f64,
    answer_bytes: usize,
}

impl Round {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
    fn cpu_per_request(&self) -> Duration {
        Duration::from_secs_f64(self.cpu / self.requests as f64)
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Drives `concurrency` clients for `seconds` against one server.
async fn round(server: &Server, req: &Bytes, concurrency: usize, seconds: f64) -> Round {
    let channel = connect(server.port).await;
    let cpu_before = server.cpu_seconds();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let mut grpc =
                tonic::client::Grpc::new(channel.clone()).max_decoding_message_size(64 << 20);
            let req = req.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut answer_bytes = 0;
                while Instant::now() < deadline {
                    let t = Instant::now();
                    grpc.ready().await.expect("ready");
                    let rsp = grpc
                        .unary(
                            tonic::Request::new(req.clone()),
                            RUN_FUNCTION.parse().unwrap(),
                            RawCodec,
                        )
                        .await
                        .expect("answered");
                    latencies.push(t.elapsed());
                    answer_bytes = rsp.get_ref().len();
                }
                (latencies, answer_bytes)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut answer_bytes = 0;
    for t in tasks {
        let (l, bytes) = t.await.unwrap();
        latencies.extend(l);
        answer_bytes = bytes;
    }
    let elapsed = started.elapsed();
    let cpu = server.cpu_seconds() - cpu_before;
    latencies.sort();
    Round {
        requests: latencies.len(),
        elapsed,
        latencies,
        cpu,
        answer_bytes,
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        serve_role(&role, env_or("BENCH_PORT", 0));
        return;
    }
    let seconds: f64 = env_or("BENCH_SECONDS", 5.0);
    let req = realistic_request();
    let encoded = Bytes::from(prost::Message::encode_to_vec(&req));
    println!(
        "request: {} bytes, {} observed composed resources, {} desired by an earlier step",
        encoded.len(),
        req.observed.as_ref().unwrap().resources.len(),
        req.desired.as_ref().unwrap().resources.len(),
    );

    // The render itself, in-process: compose plus the conversions around
    // it, on a request already decoded the way the server decodes it.
    let decoded =
        <litellm_crossplane::function::wire::Request as prost::Message>::decode(encoded.as_ref())
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

    let mut servers = vec![
        start_function(),
        start_sdk_rust("sdk-rust"),
        start_sdk_rust("sdk-rust-tuned"),
    ];
    if std::env::var("BENCH_PYTHON").as_deref() != Ok("0") {
        if let Some(python) = python_venv() {
            servers.push(start_python(&python));
        }
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        for server in &servers {
            let warm = round(server, &encoded, 4, 1.0).await;
            println!(
                "{}: pid {}, answers {} bytes",
                server.name,
                server.child.id(),
                warm.answer_bytes
            );
        }
        for concurrency in [1, 32] {
            println!("\n== {concurrency} request(s) in flight, {seconds} s rounds ==");
            // Per server: throughput and CPU per request of each round.
            let mut rps = vec![Vec::new(); servers.len()];
            let mut cpu = vec![Vec::new(); servers.len()];
            for i in 0..3 {
                let mut line = format!("round {i}:");
                for (s, server) in servers.iter().enumerate() {
                    let r = round(server, &encoded, concurrency, seconds).await;
                    line += &format!(
                        " | {} {:.0} req/s (p50 {:?}, p99 {:?}, CPU {:?}/req)",
                        server.name,
                        r.rps(),
                        percentile(&r.latencies, 0.5),
                        percentile(&r.latencies, 0.99),
                        r.cpu_per_request()
                    );
                    rps[s].push(r.rps());
                    cpu[s].push(r.cpu_per_request().as_secs_f64());
                }
                println!("{line}");
            }
            for (s, server) in servers.iter().enumerate().skip(1) {
                let throughput = median(rps[0].iter().zip(&rps[s]).map(|(f, b)| f / b).collect());
                let cost = median(cpu[s].iter().zip(&cpu[0]).map(|(b, f)| b / f).collect());
                // The target is against the SDKs as they ship; the tuned
                // pass-through shows what the function's own work costs.
                let target = if server.name == "sdk-rust-tuned" {
                    ""
                } else {
                    " (target >= 2x)"
                };
                println!(
                    "function / {}: throughput {throughput:.2}x, CPU per request {cost:.2}x less{target}, median of 3 rounds",
                    server.name
                );
            }
        }
    });
}
