//! `/healthz`, `/readyz` and Prometheus `/metrics` of the provider.

use std::sync::Arc;

use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::provider::runtime::health::Health;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

fn answer(ok: bool, text: &'static str) -> (StatusCode, &'static str) {
    if ok {
        (StatusCode::OK, text)
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, text)
    }
}

/// The routes, separate from binding so tests can call them directly.
/// `/healthz` fails (503) once the controllers have stopped; `/readyz`
/// answers 200 only once their caches have synced (or while this replica
/// stands by for the leader): see [`Health`].
pub fn router(registry: Arc<Registry>, health: Health) -> Router {
    let live = health.clone();
    Router::new()
        .route(
            "/healthz",
            get(move || {
                let ok = live.live();
                async move { answer(ok, if ok { "ok" } else { "controllers stopped" }) }
            }),
        )
        .route(
            "/readyz",
            get(move || {
                let (ok, text) = (health.ready(), health.describe());
                async move { answer(ok, text) }
            }),
        )
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
pub async fn serve(
    listener: TcpListener,
    registry: Arc<Registry>,
    health: Health,
) -> std::io::Result<()> {
    if let Ok(address) = listener.local_addr() {
        tracing::info!(%address, "serving health and metrics");
    }
    axum::serve(listener, router(registry, health)).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::runtime::health::Phase;
    use crate::provider::telemetry::metrics::Metrics;
    use crate::provider::watch::cache::Caches;

    #[tokio::test]
    async fn serves_health_and_metrics() {
        let metrics = Metrics::default();
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        metrics.reconciled("team");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let health = Health::new();
        let server = tokio::spawn(serve(listener, Arc::new(registry), health.clone()));
        let http = reqwest::Client::new();
        let status = |path: &'static str| {
            let http = http.clone();
            async move {
                http.get(format!("http://{address}{path}"))
                    .send()
                    .await
                    .unwrap()
                    .status()
            }
        };
        assert_eq!(status("/healthz").await, 200);
        assert_eq!(status("/readyz").await, 503, "before the controllers start");
        // Controllers without caches are synced as soon as they run.
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let work = tokio::spawn(health.run(
            async {
                let _ = stopped.await;
            },
            Caches::default(),
        ));
        while health.phase() != Phase::Synced {
            tokio::task::yield_now().await;
        }
        assert_eq!(status("/readyz").await, 200);
        assert_eq!(status("/healthz").await, 200);
        stop.send(()).unwrap();
        work.await.unwrap();
        assert_eq!(status("/healthz").await, 503, "after the controllers ended");
        assert_eq!(status("/readyz").await, 503);
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
