//! `/healthz`, `/readyz` and Prometheus `/metrics` of the provider.

use std::sync::Arc;

use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The routes, separate from binding so tests can call them directly.
pub fn router(registry: Arc<Registry>) -> Router {
    Router::new()
        // The process answering is all liveness means; readiness adds
        // nothing a follower replica could fail, so both say ok.
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(move || {
                let registry = registry.clone();
                async move {
                    let mut text = String::new();
                    match prometheus_client::encoding::text::encode(&mut text, &registry) {
                        Ok(()) => {
                            (StatusCode::OK, [(CONTENT_TYPE, OPENMETRICS)], text).into_response()
                        }
                        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                    }
                }
            }),
        )
}

/// Serves [`router`] on `listener` until the process ends.
pub async fn serve(listener: TcpListener, registry: Arc<Registry>) -> std::io::Result<()> {
    if let Ok(address) = listener.local_addr() {
        tracing::info!(%address, "serving health and metrics");
    }
    axum::serve(listener, router(registry)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::metrics::Metrics;

    #[tokio::test]
    async fn serves_health_and_metrics() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.reconciled("team");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(serve(listener, Arc::new(registry)));
        let http = reqwest::Client::new();
        for path in ["/healthz", "/readyz"] {
            let reply = http
                .get(format!("http://{address}{path}"))
                .send()
                .await
                .unwrap();
            assert_eq!(reply.status(), 200, "{path}");
        }
        let reply = http
            .get(format!("http://{address}/metrics"))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.headers()[CONTENT_TYPE], OPENMETRICS);
        let text = reply.text().await.unwrap();
        assert!(
            text.contains("provider_litellm_reconciles_total{kind=\"team\"} 1"),
            "{text}"
        );
        server.abort();
    }
}
