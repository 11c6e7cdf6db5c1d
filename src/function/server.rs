//! Serving the function: `apiextensions.fn.proto.v1` and the identical
//! legacy `v1beta1` service (Crossplane 1.14-1.16) on one port, with mTLS,
//! the gRPC health service, reflection and Prometheus metrics: the
//! function's own and the `grpc_server_*` series of function-sdk-go (see
//! [`super::grpc_metrics`]), at `--metrics-address` (`:8080`, the Go SDK's
//! default).
//!
//! The SDK's own server only registers the v1 service, so this assembles the
//! same parts (its CLI `Args`, generated service, descriptor set, TLS rules)
//! around both services.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::task::{Context, Poll};

use function_sdk_rust::proto::v1::function_runner_service_server::SERVICE_NAME;
use function_sdk_rust::Args;
use prometheus_client::registry::Registry;
use tonic::server::NamedService;
use tonic::transport::{Certificate, Identity, Server, ServerTlsConfig};
use tonic_health::ServingStatus;

use super::grpc::RunFunctionService;
use super::grpc_metrics::GrpcMetrics;
use super::metrics::Metrics;

/// Name of the legacy service, identical to v1 on the wire.
pub const V1BETA1_SERVICE_NAME: &str = "apiextensions.fn.proto.v1beta1.FunctionRunnerService";

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{flag}: {problem}")]
    Address { flag: &'static str, problem: String },
    #[error("no credentials were provided: supply --tls-certs-dir (or TLS_SERVER_CERTS_DIR), or use --insecure")]
    MissingTlsCertsDir,
    #[error("cannot read TLS file {path}: {source}")]
    ReadCertificate {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("metrics endpoint {address}: {source}")]
    Metrics {
        address: String,
        source: std::io::Error,
    },
}

/// Serves the v1 service under the v1beta1 name by rewriting the request
/// path: the messages are identical on the wire.
#[derive(Clone)]
struct V1beta1<S>(S);

impl<S> NamedService for V1beta1<S> {
    const NAME: &'static str = V1BETA1_SERVICE_NAME;
}

impl<S, B> tower_service::Service<http::Request<B>> for V1beta1<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        let path = req
            .uri()
            .path()
            .replacen(V1BETA1_SERVICE_NAME, SERVICE_NAME, 1);
        let mut parts = req.uri().clone().into_parts();
        parts.path_and_query = path.parse().ok();
        if let Ok(uri) = http::Uri::from_parts(parts) {
            *req.uri_mut() = uri;
        }
        self.0.call(req)
    }
}

/// mTLS: the function's certificate, and Crossplane's CA to verify clients.
fn tls_config(dir: &Path) -> Result<ServerTlsConfig, ServeError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| ServeError::ReadCertificate { path, source })
    };
    Ok(ServerTlsConfig::new()
        .identity(Identity::from_pem(read("tls.crt")?, read("tls.key")?))
        .client_ca_root(Certificate::from_pem(read("ca.crt")?))
        .client_auth_optional(false))
}

/// `flag`'s listen address, `:8080` (Go style) or `0.0.0.0:8080`.
fn listen_address(flag: &'static str, address: &str) -> Result<SocketAddr, ServeError> {
    crate::listen::parse(address).map_err(|problem| ServeError::Address { flag, problem })
}

/// Serves /metrics from `registry` on `address`.
async fn serve_metrics(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
) -> std::io::Result<()> {
    use axum::http::header::CONTENT_TYPE;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let registry = registry.clone();
            async move {
                let mut body = String::new();
                match prometheus_client::encoding::text::encode(&mut body, &registry) {
                    Ok(()) => (
                        axum::http::StatusCode::OK,
                        [(
                            CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        body,
                    ),
                    Err(_) => (
                        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                        [(CONTENT_TYPE, "text/plain")],
                        "cannot encode metrics".to_string(),
                    ),
                }
            }
        }),
    );
    axum::serve(listener, app).await
}

/// Serves until `shutdown` completes.
pub async fn serve(args: &Args, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
    let address = listen_address("--address", &args.address)?;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Metrics {
            address: args.address.clone(),
            source,
        })?;
    serve_on(args, listener, shutdown).await
}

/// HTTP/2 receive window of a connection (all requests in flight on it).
pub const CONNECTION_WINDOW: u32 = 8 << 20;
/// HTTP/2 receive window of one request.
pub const STREAM_WINDOW: u32 = 1 << 20;

/// Serves on an already bound listener (tests bind port 0).
pub async fn serve_on(
    args: &Args,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    // Flow-control windows that hold a whole request: with HTTP/2's
    // default 64 KiB for the connection, requests of tens of KiB in flight
    // together wait on each other's WINDOW_UPDATE round trips.
    let mut builder = Server::builder()
        .initial_connection_window_size(CONNECTION_WINDOW)
        .initial_stream_window_size(STREAM_WINDOW);
    if !args.insecure {
        let dir = args
            .tls_certs_dir
            .as_deref()
            .ok_or(ServeError::MissingTlsCertsDir)?;
        builder = builder.tls_config(tls_config(dir)?)?;
    }

    let metrics = Arc::new(Metrics::default());
    // The series function-sdk-go serves, besides the function's own.
    let grpc = GrpcMetrics::default();
    if !args.metrics_address.is_empty() {
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        grpc.register(&mut registry);
        let address = listen_address("--metrics-address", &args.metrics_address)?;
        let metrics_listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| ServeError::Metrics {
                address: args.metrics_address.clone(),
                source,
            })?;
        let registry = Arc::new(registry);
        tokio::spawn(async move {
            if let Err(e) = serve_metrics(metrics_listener, registry).await {
                tracing::error!(error = %e, "metrics endpoint stopped");
            }
        });
    }

    let v1 = RunFunctionService::new(metrics, args.max_recv_message_size);
    let (health_reporter, health) = tonic_health::server::health_reporter();
    for service in ["", SERVICE_NAME, V1BETA1_SERVICE_NAME] {
        health_reporter
            .set_service_status(service, ServingStatus::Serving)
            .await;
    }
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(function_sdk_rust::proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;

    tracing::info!(address = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(), insecure = args.insecure, "serving FunctionRunnerService v1 and v1beta1");
    builder
        .add_service(grpc.count(v1.clone()))
        .add_service(grpc.count(V1beta1(v1)))
        .add_service(grpc.count(health))
        .add_service(reflection)
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await?;
    Ok(())
}

/// Adapts a bound listener into the stream of connections tonic takes.
/// Nagle's algorithm is off on every connection, as tonic's own `serve`
/// does: with it on, a response larger than one segment waits for the
/// client's delayed ACK (about 40 ms) on every call.
pub fn incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = Result<tokio::net::TcpStream, std::io::Error>> {
    use tokio_stream::StreamExt;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|connection| {
        let connection = connection?;
        connection.set_nodelay(true)?;
        Ok(connection)
    })
}
