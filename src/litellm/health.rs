//! The public health probes. They take no credentials, so the master key is
//! not sent.

use reqwest::StatusCode;
use serde::Deserialize;

use super::client::{endpoint, Endpoint};
use super::{Client, Error};

const LIVELINESS: Endpoint = endpoint!(GET "/health/liveliness" public);
const READINESS: Endpoint = endpoint!(GET "/health/readiness" public);

/// What `/health/readiness` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Readiness {
    /// `"healthy"`, or `"shutting_down"` while the proxy drains.
    pub status: String,
    /// `"connected"`, `"disconnected"`, `"stalled"` or `"Not connected"` (no
    /// database configured); absent while shutting down.
    pub db: Option<String>,
    /// Only when the proxy sets `allow_public_health_readiness_details`.
    pub litellm_version: Option<String>,
}

impl Client {
    /// `true` when the proxy is alive, `false` while it drains (503).
    pub async fn liveliness(&self) -> Result<bool, Error> {
        let reply = self.get(&LIVELINESS, &[]).await?;
        match reply.status {
            StatusCode::OK => Ok(true),
            StatusCode::SERVICE_UNAVAILABLE => Ok(false),
            _ => Err(reply.error()),
        }
    }

    /// The proxy answers 503 with the same body when the database is
    /// unreachable or it is shutting down; both are reported, not errors.
    pub async fn readiness(&self) -> Result<Readiness, Error> {
        let reply = self.get(&READINESS, &[]).await?;
        match reply.status {
            StatusCode::OK | StatusCode::SERVICE_UNAVAILABLE => reply.decode(),
            _ => Err(reply.error()),
        }
    }
}
