//! A stand-in for an upstream LLM provider that the real LiteLLM proxy
//! calls, so tests can see which deployment LiteLLM routed a request to
//! and which credential it sent: the admin API never returns a stored key,
//! but the upstream receives it.
//!
//! It records every request on any path (method, path and query, headers)
//! and answers in the shape the caller most likely expects: an OpenAI chat
//! completion by default, a Google OAuth token at `/token` (so a tenant's
//! service account can point its `token_uri` here and Vertex AI can be
//! followed to the call it authorizes), and an Anthropic message at
//! `/v1/messages`.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::header;
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One request the upstream received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// Everything a credential could travel in: the target and every
    /// header value, one per line.
    pub fn text(&self) -> String {
        let mut text = format!("{} {}\n", self.method, self.target);
        for (name, value) in &self.headers {
            text.push_str(&format!("{name}: {value}\n"));
        }
        text
    }
}

/// The running upstream; it stops when dropped.
pub struct Upstream {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A minimal, valid chat completion.
const COMPLETION: &str = r#"{"id":"chatcmpl-test","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;

/// A minimal Anthropic message.
const MESSAGE: &str = r#"{"id":"msg_test","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;

/// The access token the upstream hands out at `/token`.
pub const GOOGLE_TOKEN: &str = "ya29.tenant-token-from-its-own-service-account";

impl Upstream {
    /// Listens on a free loopback port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("upstream binds a loopback port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let received = Arc::new(Mutex::new(Vec::new()));
        let record = received.clone();
        let app = Router::new().fallback(move |request: Request| {
            let record = record.clone();
            async move {
                let headers = request
                    .headers()
                    .iter()
                    .map(|(name, value)| {
                        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                        (name.as_str().to_ascii_lowercase(), value)
                    })
                    .collect();
                let target = request
                    .uri()
                    .path_and_query()
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default();
                let body = if target.starts_with("/token") {
                    format!(
                        r#"{{"access_token":"{GOOGLE_TOKEN}","expires_in":3600,"token_type":"Bearer"}}"#
                    )
                } else if target.contains("/v1/messages") {
                    MESSAGE.to_owned()
                } else {
                    COMPLETION.to_owned()
                };
                record
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Received {
                        method: request.method().to_string(),
                        target,
                        headers,
                    });
                ([(header::CONTENT_TYPE, "application/json")], body)
            }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url,
            received,
            task,
        }
    }

    /// The `apiBase` to give a model.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request received so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The `Authorization` headers of the chat completions received so far.
    pub fn seen(&self) -> Vec<String> {
        self.received()
            .into_iter()
            .filter(|r| r.target.contains("/chat/completions"))
            .map(|r| r.header("authorization").unwrap_or_default().to_owned())
            .collect()
    }
}
