//! The HTTP probe of an attached proxy: its two public health endpoints.

use std::time::Duration;

use crate::litellm::Client;

use super::ProbeResult;

/// Probes the proxy at `endpoint`: ready when `GET /health/liveliness`
/// answers 200; then the version from `GET /health/readiness`, which LiteLLM
/// discloses only with `allow_public_health_readiness_details: true`.
///
/// Both endpoints are public, so no master key is read or sent. `ca_pem` is
/// an extra trusted CA bundle (PEM) for a proxy behind a private CA;
/// `timeout` bounds connecting and each request.
pub async fn probe(endpoint: &str, ca_pem: Option<Vec<u8>>, timeout: Duration) -> ProbeResult {
    let client = match Client::public(endpoint, ca_pem.as_deref(), timeout) {
        Ok(client) => client,
        Err(err) => {
            return ProbeResult::NotReachable {
                cause: err.to_string(),
            }
        }
    };
    match client.liveliness().await {
        Ok(true) => {}
        Ok(false) => {
            return ProbeResult::NotReachable {
                cause: "GET /health/liveliness answered HTTP 503 (the proxy is draining)"
                    .to_string(),
            }
        }
        Err(err) => {
            return ProbeResult::NotReachable {
                cause: err.to_string(),
            }
        }
    }
    // A live proxy whose readiness payload cannot be read is still live; the
    // version is then unknown, which is what an absent version says.
    let version = match client.readiness().await {
        Ok(readiness) => readiness.litellm_version,
        Err(err) => {
            tracing::debug!(endpoint, error = %err, "no version from /health/readiness");
            None
        }
    };
    ProbeResult::Reachable { version }
}

#[cfg(test)]
mod tests {
    //! Against a local HTTP responder: the harness proxy cannot be
    //! reconfigured to disclose its version or to drain, so those answers
    //! are canned here (`tests/integration/provider_instance.rs` covers the real proxy).

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// Serves canned `(status line, JSON body)` answers for the two health
    /// paths on a fresh local port and returns its base URL.
    async fn responder(
        liveliness: (&'static str, &'static str),
        readiness: (&'static str, &'static str),
    ) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buffer[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&request);
                    let (status, body) = if head.starts_with("GET /health/liveliness ") {
                        liveliness
                    } else if head.starts_with("GET /health/readiness ") {
                        readiness
                    } else {
                        ("404 Not Found", r#"{"detail":"Not Found"}"#)
                    };
                    let response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        });
        url
    }

    const ALIVE: (&str, &str) = ("200 OK", r#""I'm alive!""#);
    const TIMEOUT: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn a_disclosed_version_is_read_from_readiness() {
        let url = responder(
            ALIVE,
            ("200 OK", r#"{"status":"healthy","db":"connected","cache":null,"litellm_version":"1.108.7","success_callbacks":[]}"#),
        )
        .await;
        let version = Some("1.108.7".to_string());
        assert_eq!(
            probe(&url, None, TIMEOUT).await,
            ProbeResult::Reachable { version }
        );
    }

    #[tokio::test]
    async fn the_default_readiness_payload_gives_no_version() {
        let url = responder(
            ALIVE,
            ("200 OK", r#"{"status":"healthy","db":"connected"}"#),
        )
        .await;
        assert_eq!(
            probe(&url, None, TIMEOUT).await,
            ProbeResult::Reachable { version: None }
        );
    }

    #[tokio::test]
    async fn a_live_proxy_with_unreadable_readiness_is_ready_without_version() {
        for readiness in [
            ("500 Internal Server Error", "oops"),
            ("200 OK", "not json"),
        ] {
            let url = responder(ALIVE, readiness).await;
            assert_eq!(
                probe(&url, None, TIMEOUT).await,
                ProbeResult::Reachable { version: None }
            );
        }
    }

    #[tokio::test]
    async fn a_draining_proxy_is_not_ready() {
        let url = responder(
            ("503 Service Unavailable", r#"{"detail":"shutting down"}"#),
            ("503 Service Unavailable", r#"{"status":"shutting_down"}"#),
        )
        .await;
        let ProbeResult::NotReachable { cause } = probe(&url, None, TIMEOUT).await else {
            panic!("a draining proxy must not be ready")
        };
        assert!(cause.contains("503"), "{cause}");
    }

    #[tokio::test]
    async fn other_answers_are_not_ready_and_named() {
        let url = responder(("404 Not Found", r#"{"detail":"Not Found"}"#), ALIVE).await;
        let ProbeResult::NotReachable { cause } = probe(&url, None, TIMEOUT).await else {
            panic!("404 is not alive")
        };
        assert!(
            cause.starts_with("GET /health/liveliness: not found"),
            "{cause}"
        );
    }

    #[tokio::test]
    async fn a_closed_port_is_not_ready() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let ProbeResult::NotReachable { cause } = probe(&url, None, TIMEOUT).await else {
            panic!("nothing listens")
        };
        assert!(
            cause.starts_with("GET /health/liveliness: temporary failure: connection failed"),
            "{cause}"
        );
    }

    #[tokio::test]
    async fn an_unusable_ca_bundle_is_reported_without_a_request() {
        let ProbeResult::NotReachable { cause } = probe(
            "https://127.0.0.1:9",
            Some(b"not a certificate".to_vec()),
            TIMEOUT,
        )
        .await
        else {
            panic!("a bad CA bundle cannot probe")
        };
        assert!(cause.contains("CA bundle"), "{cause}");
    }
}
