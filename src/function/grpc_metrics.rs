//! The gRPC server series function-sdk-go serves: its `Serve` installs
//! go-grpc-middleware's prometheus `ServerMetrics` as a unary interceptor
//! and calls `InitializeMetrics` on the server. Same names and labels
//! (`grpc_type`, `grpc_service`, `grpc_method`, and `grpc_code` on
//! `grpc_server_handled_total`), so dashboards and alerts made for Go
//! functions work unchanged:
//!
//! * `grpc_server_started_total` and `grpc_server_msg_received_total`
//!   when a unary call reaches the service;
//! * `grpc_server_handled_total` and `grpc_server_msg_sent_total` when its
//!   status is known (as the Go interceptor, which reports the sent message
//!   whatever the handler returned, `msg_sent` counts errors too);
//! * `grpc_server_handling_seconds`, the histogram (default Prometheus
//!   buckets) the Go SDK registers only when a function opts in with
//!   `WithServerHandlingTimeHistogram`; served here always.
//!
//! Like the Go interceptor, which is unary only, streaming methods (health
//! `Watch`, reflection) are present at zero but never counted; every method
//! the server carries starts at zero, as `InitializeMetrics` makes it.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tonic::server::NamedService;

/// Labels in alphabetical order, as client_golang writes them.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabels {
    grpc_method: &'static str,
    grpc_service: &'static str,
    grpc_type: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HandledLabels {
    grpc_code: &'static str,
    grpc_method: &'static str,
    grpc_service: &'static str,
    grpc_type: &'static str,
}

/// The names Go's `codes.Code.String()` gives the status codes, by value.
const CODES: [&str; 17] = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
];

const UNKNOWN: u32 = 2;
const CANCELED: u32 = 1;

/// The name of status code `code`; an out-of-range code is `Unknown`, as
/// gRPC treats it.
pub fn code_name(code: u32) -> &'static str {
    CODES
        .get(code as usize)
        .copied()
        .unwrap_or(CODES[UNKNOWN as usize])
}

/// Every method the function's server carries: service, method, and
/// go-grpc-middleware's `grpc_type`.
pub const METHODS: [(&str, &str, &str); 5] = [
    (
        "apiextensions.fn.proto.v1.FunctionRunnerService",
        "RunFunction",
        "unary",
    ),
    (
        "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
        "RunFunction",
        "unary",
    ),
    ("grpc.health.v1.Health", "Check", "unary"),
    ("grpc.health.v1.Health", "Watch", "server_stream"),
    (
        "grpc.reflection.v1.ServerReflection",
        "ServerReflectionInfo",
        "bidi_stream",
    ),
];

/// The unary method a request path names, if the server carries it.
fn unary_method(path: &str) -> Option<MethodLabels> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    METHODS
        .iter()
        .find(|(s, m, kind)| *s == service && *m == method && *kind == "unary")
        .map(|(service, method, kind)| MethodLabels {
            grpc_method: method,
            grpc_service: service,
            grpc_type: kind,
        })
}

/// `prometheus.DefBuckets`, go-grpc-middleware's default.
const DEFAULT_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn handling_histogram() -> Histogram {
    Histogram::new(DEFAULT_BUCKETS)
}

/// The series. Cloning shares them.
#[derive(Clone)]
pub struct GrpcMetrics {
    started: Family<MethodLabels, Counter>,
    handled: Family<HandledLabels, Counter>,
    received: Family<MethodLabels, Counter>,
    sent: Family<MethodLabels, Counter>,
    handling: Family<MethodLabels, Histogram, fn() -> Histogram>,
}

impl Default for GrpcMetrics {
    fn default() -> Self {
        let metrics = GrpcMetrics {
            started: Family::default(),
            handled: Family::default(),
            received: Family::default(),
            sent: Family::default(),
            handling: Family::new_with_constructor(handling_histogram),
        };
        metrics.initialize();
        metrics
    }
}

impl GrpcMetrics {
    /// Registers the series in `registry`. The help texts are
    /// go-grpc-middleware's; the registry appends their final period and
    /// the counters' `_total`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "grpc_server_started",
            "Total number of RPCs started on the server",
            self.started.clone(),
        );
        registry.register(
            "grpc_server_handled",
            "Total number of RPCs completed on the server, regardless of success or failure",
            self.handled.clone(),
        );
        registry.register(
            "grpc_server_msg_received",
            "Total number of RPC stream messages received on the server",
            self.received.clone(),
        );
        registry.register(
            "grpc_server_msg_sent",
            "Total number of gRPC stream messages sent by the server",
            self.sent.clone(),
        );
        registry.register(
            "grpc_server_handling_seconds",
            "Histogram of response latency (seconds) of gRPC that had been application-level \
             handled by the server",
            self.handling.clone(),
        );
    }

    /// `InitializeMetrics`: every method at zero, `handled` for every code.
    fn initialize(&self) {
        for (service, method, kind) in METHODS {
            let labels = MethodLabels {
                grpc_method: method,
                grpc_service: service,
                grpc_type: kind,
            };
            let _ = self.started.get_or_create(&labels);
            let _ = self.received.get_or_create(&labels);
            let _ = self.sent.get_or_create(&labels);
            for code in CODES {
                let _ = self.handled.get_or_create(&HandledLabels {
                    grpc_code: code,
                    grpc_method: method,
                    grpc_service: service,
                    grpc_type: kind,
                });
            }
        }
    }

    /// A unary call to `path` begins, if the path names one.
    fn start(&self, path: &str) -> Option<Call> {
        let labels = unary_method(path)?;
        self.started.get_or_create(&labels).inc();
        self.received.get_or_create(&labels).inc();
        Some(Call {
            metrics: self.clone(),
            labels,
            started: Instant::now(),
            done: false,
        })
    }

    /// Wraps `service` so its unary calls are counted.
    pub fn count<S>(&self, service: S) -> Counted<S> {
        Counted {
            inner: service,
            metrics: self.clone(),
        }
    }
}

/// One unary call, counted as handled exactly once: with the status it
/// ended with, or `Canceled` when dropped before any (the client went away,
/// which the Go interceptor sees as a canceled context).
struct Call {
    metrics: GrpcMetrics,
    labels: MethodLabels,
    started: Instant,
    done: bool,
}

impl Call {
    fn finish(&mut self, code: u32) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let labels = &self.labels;
        self.metrics
            .handled
            .get_or_create(&HandledLabels {
                grpc_code: code_name(code),
                grpc_method: labels.grpc_method,
                grpc_service: labels.grpc_service,
                grpc_type: labels.grpc_type,
            })
            .inc();
        self.metrics.sent.get_or_create(labels).inc();
        self.metrics
            .handling
            .get_or_create(labels)
            .observe(self.started.elapsed().as_secs_f64());
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.finish(CANCELED);
    }
}

/// The numeric `grpc-status` of a header or trailer map.
fn grpc_status(map: &http::HeaderMap) -> Option<u32> {
    map.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// A service whose unary calls are counted; see [`GrpcMetrics::count`].
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    metrics: GrpcMetrics,
}

impl<S: NamedService> NamedService for Counted<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> tower_service::Service<http::Request<B>> for Counted<S>
where
    S: tower_service::Service<
        http::Request<B>,
        Response = http::Response<tonic::body::Body>,
        Error = Infallible,
    >,
    S::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let call = self.metrics.start(req.uri().path());
        let response = self.inner.call(req);
        Box::pin(async move {
            let response = response.await?;
            let mut call = call;
            // A trailers-only response (an error before any message)
            // carries its status in the headers.
            if let Some(code) = grpc_status(response.headers()) {
                if let Some(mut ended) = call.take() {
                    ended.finish(code);
                }
            }
            let (parts, body) = response.into_parts();
            Ok(http::Response::from_parts(
                parts,
                tonic::body::Body::new(CountedBody { inner: body, call }),
            ))
        })
    }
}

/// The response body, carrying the call until its trailers say how it
/// ended.
struct CountedBody {
    inner: tonic::body::Body,
    call: Option<Call>,
}

impl http_body::Body for CountedBody {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let frame = std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx));
        let code = match &frame {
            Some(Ok(frame)) => frame
                .trailers_ref()
                .map(|trailers| grpc_status(trailers).unwrap_or(UNKNOWN)),
            // A broken body, or one that ends without a status.
            Some(Err(_)) | None => Some(UNKNOWN),
        };
        if let Some(code) = code {
            if let Some(mut call) = this.call.take() {
                call.finish(code);
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(metrics: &GrpcMetrics) -> String {
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        text
    }

    const RUN: &str = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";

    #[test]
    fn every_method_starts_at_zero() {
        let text = text(&GrpcMetrics::default());
        for line in [
            "grpc_server_started_total{grpc_method=\"RunFunction\",grpc_service=\"apiextensions.fn.proto.v1beta1.FunctionRunnerService\",grpc_type=\"unary\"} 0",
            "grpc_server_handled_total{grpc_code=\"Unauthenticated\",grpc_method=\"Check\",grpc_service=\"grpc.health.v1.Health\",grpc_type=\"unary\"} 0",
            "grpc_server_msg_sent_total{grpc_method=\"ServerReflectionInfo\",grpc_service=\"grpc.reflection.v1.ServerReflection\",grpc_type=\"bidi_stream\"} 0",
            "grpc_server_msg_received_total{grpc_method=\"Watch\",grpc_service=\"grpc.health.v1.Health\",grpc_type=\"server_stream\"} 0",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
        assert_eq!(
            text.matches("grpc_server_handled_total{").count(),
            METHODS.len() * CODES.len()
        );
    }

    #[test]
    fn only_unary_methods_the_server_carries_are_counted() {
        assert!(unary_method(RUN).is_some());
        assert!(unary_method("/grpc.health.v1.Health/Check").is_some());
        assert!(unary_method("/grpc.health.v1.Health/Watch").is_none());
        assert!(
            unary_method("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo").is_none()
        );
        assert!(unary_method("/other.Service/RunFunction").is_none());
        assert!(unary_method("no-slash").is_none());
    }

    #[test]
    fn a_call_is_handled_once_with_its_code_or_canceled() {
        let metrics = GrpcMetrics::default();
        let mut call = metrics.start(RUN).unwrap();
        call.finish(3);
        call.finish(0);
        drop(call);
        drop(metrics.start(RUN).unwrap());
        let text = text(&metrics);
        let labels = "grpc_method=\"RunFunction\",grpc_service=\"apiextensions.fn.proto.v1.FunctionRunnerService\",grpc_type=\"unary\"";
        for line in [
            format!("grpc_server_started_total{{{labels}}} 2"),
            format!("grpc_server_msg_received_total{{{labels}}} 2"),
            format!("grpc_server_msg_sent_total{{{labels}}} 2"),
            format!("grpc_server_handled_total{{grpc_code=\"InvalidArgument\",{labels}}} 1"),
            format!("grpc_server_handled_total{{grpc_code=\"Canceled\",{labels}}} 1"),
            format!("grpc_server_handled_total{{grpc_code=\"OK\",{labels}}} 0"),
            format!("grpc_server_handling_seconds_count{{{labels}}} 2"),
        ] {
            assert!(text.contains(&line), "{line} in {text}");
        }
        assert_eq!(code_name(16), "Unauthenticated");
        assert_eq!(code_name(99), "Unknown");
    }
}
