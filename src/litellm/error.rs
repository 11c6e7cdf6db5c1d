//! The error classes of the client, decided by HTTP status.
//!
//! LiteLLM's error bodies vary (`{"error":{...}}`, `{"detail":...}`, Python
//! dicts rendered as strings) and their wording changes between releases, so
//! the class comes from the status code alone. The few places where a status
//! means something else for one operation (duplicates answered with 400 or
//! 500, an enterprise gate answered with 500) are handled by that operation,
//! which confirms the meaning with a read where it can.

use reqwest::StatusCode;

/// How much of a response body an error quotes.
const MAX_DETAIL_CHARS: usize = 300;

/// What replaces anything that looks like a key in quoted bodies.
const REDACTED: &str = "<redacted>";

/// Every error names the operation that failed (`"POST /team/new"`). Details
/// quote at most ~300 characters of the response body with anything that looks
/// like a key (`sk-...`) removed; request bodies are never quoted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 404: the object does not exist.
    #[error("{op}: not found")]
    NotFound { op: &'static str },

    /// The object already exists (duplicate id or alias).
    #[error("{op}: already exists: {detail}")]
    Conflict { op: &'static str, detail: String },

    /// 401: the master key was refused.
    #[error("{op}: unauthorized, the master key was refused: {detail}")]
    Unauthorized { op: &'static str, detail: String },

    /// 403, including features LiteLLM reserves for enterprise licences.
    #[error("{op}: forbidden: {detail}")]
    Forbidden { op: &'static str, detail: String },

    /// 5xx, 408, 429, timeouts and connection failures: try again later.
    #[error("{op}: temporary failure: {detail}")]
    Retryable { op: &'static str, detail: String },

    /// 429 or 503 with `Retry-After` (`asked`): no request to the proxy
    /// before `retry_after` from now. Requests of the same proxy meanwhile
    /// fail the same way without being sent (see
    /// [`Pacing`](super::Pacing)).
    #[error("{op}: temporary failure: {detail}; the proxy asks to retry after {}s", asked.as_secs())]
    Throttled {
        op: &'static str,
        detail: String,
        asked: std::time::Duration,
        retry_after: std::time::Duration,
    },

    /// Any other 4xx (or an unexpected 1xx/3xx): retrying the same request
    /// will not help.
    #[error("{op}: rejected with HTTP {status}: {detail}")]
    Permanent {
        op: &'static str,
        status: u16,
        detail: String,
    },

    /// A success status with a body of an unexpected shape.
    #[error("{op}: unexpected response: {detail}")]
    Decode { op: &'static str, detail: String },

    /// The response body is longer than the client reads
    /// ([`MAX_RESPONSE_BODY`](super::MAX_RESPONSE_BODY)); reading stopped at
    /// the limit and nothing of it is quoted.
    ///
    /// Not retryable: the length of an answer is a property of what the
    /// proxy (or something between) answers to this request, not of a
    /// passing moment, and retrying at once would fetch up to the limit again
    /// each time; the caller tries again at its next poll.
    #[error("{op}: response body larger than the limit of {limit} bytes, not read further")]
    ResponseTooLarge { op: &'static str, limit: usize },

    /// The client could not be built from its configuration.
    #[error("invalid LiteLLM client configuration: {0}")]
    Config(String),
}

impl Error {
    /// Whether the same request may succeed later without any change.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Retryable { .. } | Error::Throttled { .. })
    }

    /// How long the proxy asked the caller to wait, if it did.
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::Throttled { retry_after, .. } => Some(*retry_after),
            _ => None,
        }
    }

    /// The generic class of a non-success response.
    pub(super) fn from_status(op: &'static str, status: StatusCode, body: &[u8]) -> Self {
        let detail = body_detail(body);
        match status.as_u16() {
            401 => Error::Unauthorized { op, detail },
            403 => Error::Forbidden { op, detail },
            404 => Error::NotFound { op },
            408 | 429 | 500..=599 => Error::Retryable {
                op,
                detail: format!("HTTP {}: {detail}", status.as_u16()),
            },
            status => Error::Permanent { op, status, detail },
        }
    }

    /// A request that got no (complete) response. Only the error chain is
    /// quoted, without the URL: key lookups carry a token in the query.
    pub(super) fn transport(op: &'static str, err: reqwest::Error) -> Self {
        let kind = if err.is_timeout() {
            "timed out"
        } else if err.is_connect() {
            "connection failed"
        } else {
            "request failed"
        };
        let err = err.without_url();
        let mut detail = kind.to_owned();
        let mut source: Option<&dyn std::error::Error> = std::error::Error::source(&err);
        while let Some(cause) = source {
            detail.push_str(": ");
            detail.push_str(&cause.to_string());
            source = cause.source();
        }
        Error::Retryable {
            op,
            detail: truncate(&scrub(&detail)),
        }
    }

    pub(super) fn decode(op: &'static str, err: &serde_json::Error) -> Self {
        // serde quotes offending values, which could be a key.
        Error::Decode {
            op,
            detail: truncate(&scrub(&err.to_string())),
        }
    }
}

/// A short, key-free excerpt of a response body for humans.
pub(super) fn body_detail(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        "(empty body)".to_owned()
    } else {
        truncate(&scrub(&collapsed))
    }
}

/// Replaces everything that looks like a LiteLLM key (`sk-` at a word start,
/// up to the next delimiter) with `<redacted>`. Broader than `sk-[A-Za-z0-9_-]+`
/// on purpose: a master key may contain other characters, and over-redacting
/// an error message costs nothing.
pub(super) fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("sk-") {
        let at_word_start = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        out.push_str(&rest[..at]);
        let tail = &rest[at + 3..];
        let end = tail.find(is_delimiter).unwrap_or(tail.len());
        if at_word_start && end > 0 {
            out.push_str(REDACTED);
        } else {
            out.push_str(&rest[at..at + 3 + end]);
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || "\"'`,;{}[]()<>\\".contains(c)
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_DETAIL_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(status: u16) -> Error {
        Error::from_status(
            "GET /x",
            StatusCode::from_u16(status).unwrap(),
            b"{\"error\":\"boom\"}",
        )
    }

    #[test]
    fn classifies_by_status() {
        assert!(matches!(class(401), Error::Unauthorized { .. }));
        assert!(matches!(class(403), Error::Forbidden { .. }));
        assert!(matches!(class(404), Error::NotFound { .. }));
        assert!(matches!(class(400), Error::Permanent { status: 400, .. }));
        assert!(matches!(class(422), Error::Permanent { status: 422, .. }));
        assert!(matches!(class(302), Error::Permanent { status: 302, .. }));
        for status in [408, 429, 500, 502, 503, 504] {
            assert!(class(status).is_retryable(), "{status}");
        }
        assert!(!class(400).is_retryable());
        assert!(!class(404).is_retryable());
    }

    #[test]
    fn errors_name_the_operation() {
        let err = Error::from_status("POST /team/new", StatusCode::BAD_REQUEST, b"bad");
        assert_eq!(
            err.to_string(),
            "POST /team/new: rejected with HTTP 400: bad"
        );
        assert_eq!(class(404).to_string(), "GET /x: not found");
        assert_eq!(
            class(503).to_string(),
            "GET /x: temporary failure: HTTP 503: {\"error\":\"boom\"}"
        );
    }

    #[test]
    fn scrubs_anything_that_looks_like_a_key() {
        assert_eq!(
            scrub("Invalid key sk-abc_DEF-123 and 'sk-test-master-0000'."),
            "Invalid key <redacted> and '<redacted>'."
        );
        assert_eq!(
            scrub("{\"key\":\"sk-a.b/c+d=\"}"),
            "{\"key\":\"<redacted>\"}"
        );
        assert_eq!(scrub("sk-x"), "<redacted>");
        // Not keys: inside a word, or a bare prefix.
        assert_eq!(
            scrub("risk-based disk-full sk- end"),
            "risk-based disk-full sk- end"
        );
        assert_eq!(scrub("ünïcödé sk-ü"), "ünïcödé <redacted>");
    }

    #[test]
    fn body_details_are_short_and_key_free() {
        let body = format!(
            "{{\"error\": \"sk-{}\" , \n \"more\": \"{}\"}}",
            "a".repeat(50),
            "x".repeat(1000)
        );
        let detail = body_detail(body.as_bytes());
        assert!(!detail.contains("sk-a"));
        assert!(detail.starts_with("{\"error\": \"<redacted>\" , \"more\""));
        assert_eq!(detail.chars().count(), MAX_DETAIL_CHARS + 3);
        assert_eq!(body_detail(b""), "(empty body)");
        assert_eq!(body_detail(&[0xff, b'o', b'k']), "\u{fffd}ok");
    }

    #[test]
    fn an_over_long_body_names_the_operation_and_the_limit_and_is_not_retried() {
        let err = Error::ResponseTooLarge {
            op: "GET /team/info",
            limit: 1024 * 1024,
        };
        assert_eq!(
            err.to_string(),
            "GET /team/info: response body larger than the limit of 1048576 bytes, not read further"
        );
        assert!(!err.is_retryable());
    }

    #[test]
    fn decode_errors_are_scrubbed() {
        let err = serde_json::from_str::<u32>("\"sk-0123456789abcdef\"").unwrap_err();
        let text = Error::decode("GET /key/info", &err).to_string();
        assert!(text.starts_with("GET /key/info: unexpected response: "));
        assert!(!text.contains("sk-0123"), "{text}");
    }
}
