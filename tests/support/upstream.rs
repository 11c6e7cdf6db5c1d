//! A stand-in for an upstream LLM provider (OpenAI's chat completions
//! API) that the real LiteLLM proxy calls, so tests can see which
//! deployment LiteLLM routed a request to and which api key it sent: the
//! admin API never returns a stored key, but the upstream receives it.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::sync::{Arc, Mutex};

use axum::http::{header, HeaderMap};
use axum::routing::post;
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The running upstream; it stops when dropped.
pub struct Upstream {
    url: String,
    /// The `Authorization` header of every request, in arrival order.
    seen: Arc<Mutex<Vec<String>>>,
    task: JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A minimal, valid chat completion.
const COMPLETION: &str = r#"{"id":"chatcmpl-test","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;

impl Upstream {
    /// Listens on a free loopback port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("upstream binds a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let app = Router::new().route(
            "/chat/completions",
            post(move |headers: HeaderMap| {
                let record = record.clone();
                async move {
                    let auth = headers
                        .get(header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    record.lock().unwrap_or_else(|p| p.into_inner()).push(auth);
                    ([(header::CONTENT_TYPE, "application/json")], COMPLETION)
                }
            }),
        );
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, seen, task }
    }

    /// The `apiBase` to give a model.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The `Authorization` headers received so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
