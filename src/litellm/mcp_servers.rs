//! MCP servers: `POST /v1/mcp/server`, `GET /v1/mcp/server/{id}`,
//! `PUT /v1/mcp/server`, `DELETE /v1/mcp/server/{id}`.
//!
//! Measured on 1.108.7: `server_id` may be chosen by the caller (a
//! duplicate is answered 400 "already exists", as is a `server_name` or
//! `alias` another server has, compared case-insensitively); a missing
//! server is answered 404 by `GET`, `PUT` and `DELETE`. `GET` falls back
//! to a server whose *name* is the id asked for when no server has that
//! id, so [`Client::mcp_server_get`] checks the id of what it gets.
//! `credentials` are stored encrypted and never returned (`null` in every
//! answer). `mcp_info` is free-form and replaced wholesale by `PUT`; the
//! proxy adds `is_public` and `is_public_explicit` to it when it reads a
//! server back. `PUT` is a partial update (a field left out keeps its
//! value, one sent as `null` is cleared), so every update sends every
//! field. The proxy does not check the scheme of `url` (`file:///...` is
//! stored), and `GET` runs a health check against the server's URL.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{null_as_default, Client, Error, Secret};

const MCP_SERVER_NEW: Endpoint = endpoint!(POST "/v1/mcp/server");
const MCP_SERVER_GET: Endpoint = endpoint!(GET "/v1/mcp/server/{server_id}");
const MCP_SERVER_UPDATE: Endpoint = endpoint!(PUT "/v1/mcp/server");
const MCP_SERVER_DELETE: Endpoint = endpoint!(DELETE "/v1/mcp/server/{server_id}");

/// The keys `mcp_info` gains when the proxy reads a server back.
pub const MCP_INFO_ADDED: [&str; 2] = ["is_public", "is_public_explicit"];

/// Body of `POST` and `PUT /v1/mcp/server`: every field, `null` where
/// unset (so that `PUT` clears it). `credentials` are [`Secret`]s, which
/// `Debug` prints as `<redacted>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct McpServerRequest {
    /// Chosen by the caller, so a create whose response is lost is found.
    pub server_id: String,
    /// The prefix of the server's tools; unique (case-insensitive).
    pub server_name: Option<String>,
    pub description: Option<String>,
    /// `sse`, `http` or `stdio`.
    pub transport: String,
    pub url: Option<String>,
    /// `none`, `api_key`, `bearer_token`, `basic`, `authorization`,
    /// `token`, ...
    pub auth_type: Option<String>,
    /// `auth_value`, ... ; `None` clears them.
    #[serde(serialize_with = "exposed_credentials")]
    pub credentials: Option<BTreeMap<String, Secret>>,
    /// `None`: every tool of the server.
    pub allowed_tools: Option<Vec<String>>,
    pub mcp_access_groups: Vec<String>,
    /// Free-form; replaced wholesale.
    pub mcp_info: Map<String, Value>,
    /// `stdio` only: the command the proxy runs, and its arguments.
    pub command: Option<String>,
    pub args: Vec<String>,
    /// Whether every key may use the server, whatever its team or its own
    /// `object_permission` say. Always sent: `PUT` leaves a field it is
    /// not given as it was.
    pub allow_all_keys: bool,
}

fn exposed_credentials<S: Serializer>(
    credentials: &Option<BTreeMap<String, Secret>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match credentials {
        None => serializer.serialize_none(),
        Some(values) => {
            serializer.collect_map(values.iter().map(|(name, value)| (name, value.expose())))
        }
    }
}

/// An MCP server as `GET /v1/mcp/server/{id}` reports it (never its
/// credentials).
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct McpServer {
    pub server_id: String,
    pub server_name: Option<String>,
    pub alias: Option<String>,
    pub description: Option<String>,
    pub transport: Option<String>,
    pub url: Option<String>,
    pub auth_type: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub allowed_tools: Vec<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub mcp_access_groups: Vec<String>,
    pub mcp_info: Option<Map<String, Value>>,
    pub command: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    /// Whether every key may use the server (`allow_all_keys`).
    #[serde(deserialize_with = "null_as_default")]
    pub allow_all_keys: bool,
    /// `healthy`, `unhealthy`, `unknown`: the health check `GET` runs.
    pub status: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

impl McpServer {
    /// `mcp_info` without the keys the proxy adds when it reads it back.
    pub fn stored_info(&self) -> Option<Map<String, Value>> {
        let mut info = self.mcp_info.clone()?;
        for added in MCP_INFO_ADDED {
            info.remove(added);
        }
        Some(info)
    }
}

/// A URL may hold a user and password; `Debug` shows its scheme and host
/// only.
impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self
            .url
            .as_deref()
            .and_then(|u| reqwest::Url::parse(u).ok());
        let url = url.map(|u| format!("{}://{}", u.scheme(), u.host_str().unwrap_or_default()));
        f.debug_struct("McpServer")
            .field("server_id", &self.server_id)
            .field("server_name", &self.server_name)
            .field("transport", &self.transport)
            .field("url", &url)
            .field("auth_type", &self.auth_type)
            .field("allowed_tools", &self.allowed_tools)
            .field("mcp_access_groups", &self.mcp_access_groups)
            .field("allow_all_keys", &self.allow_all_keys)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// `object_permission` of a team or key (`LiteLLM_ObjectPermissionBase`):
/// the MCP servers (by id), MCP access groups and vector stores (by id) it
/// may use. Measured on 1.108.7: `/team/update` and `/key/update` merge it
/// field by field (a field left out keeps its value), so a request always
/// sends all three, `[]` to clear one; ids of servers that do not exist
/// are accepted and kept. Reads report it under `object_permission`, with
/// more fields (agents, models, ...) nobody here sets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObjectPermission {
    #[serde(deserialize_with = "null_as_default")]
    pub mcp_servers: Vec<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub mcp_access_groups: Vec<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub vector_stores: Vec<String>,
}

impl Client {
    /// Creates a server under the caller's id; [`Error::Conflict`] if that
    /// id is taken (a name or alias taken is a plain 400).
    pub async fn mcp_server_new(&self, server: &McpServerRequest) -> Result<(), Error> {
        let reply = self.post(&MCP_SERVER_NEW, server).await?;
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.mcp_server_get(&server.server_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json::<IgnoredAny>().map(drop)
    }

    /// `None` when no server has this id (a server that only has it as its
    /// name does not count).
    pub async fn mcp_server_get(&self, server_id: &str) -> Result<Option<McpServer>, Error> {
        let url = self.url(["v1", "mcp", "server", server_id], &[]);
        let server = self
            .send::<()>(&MCP_SERVER_GET, url, None)
            .await?
            .json_or_none::<McpServer>()?;
        Ok(server.filter(|s| s.server_id == server_id))
    }

    /// Writes every field of the request to the server it names;
    /// [`Error::NotFound`] for a missing server.
    pub async fn mcp_server_update(&self, server: &McpServerRequest) -> Result<(), Error> {
        let url = self.url(["v1", "mcp", "server"], &[]);
        let reply = self.send(&MCP_SERVER_UPDATE, url, Some(server)).await?;
        reply.json::<IgnoredAny>().map(drop)
    }

    /// `false` when the server was already gone.
    pub async fn mcp_server_delete(&self, server_id: &str) -> Result<bool, Error> {
        let url = self.url(["v1", "mcp", "server", server_id], &[]);
        self.send::<()>(&MCP_SERVER_DELETE, url, None)
            .await?
            .found()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_send_every_field_and_never_debug_print_a_credential() {
        let request = McpServerRequest {
            server_id: "ns.github".into(),
            transport: "http".into(),
            url: Some("https://mcp.example/mcp".into()),
            auth_type: Some("bearer_token".into()),
            credentials: Some(BTreeMap::from([(
                "auth_value".to_owned(),
                Secret::new("ghp-secret-1"),
            )])),
            ..McpServerRequest::default()
        };
        let body = serde_json::to_value(&request).unwrap();
        assert_eq!(body["credentials"], json!({"auth_value": "ghp-secret-1"}));
        // Unset fields go out as null, which PUT reads as "clear".
        assert_eq!(body["description"], Value::Null);
        assert_eq!(body["allowed_tools"], Value::Null);
        assert_eq!(body["mcp_access_groups"], json!([]));
        // Sent even when false: PUT keeps a field it is not given.
        assert_eq!(body["allow_all_keys"], json!(false));
        assert!(!format!("{request:?}").contains("ghp-secret"));
        let cleared = McpServerRequest {
            credentials: None,
            ..request
        };
        assert_eq!(
            serde_json::to_value(&cleared).unwrap()["credentials"],
            Value::Null
        );
    }

    #[test]
    fn a_server_read_back_hides_the_url_credentials_and_drops_the_added_info() {
        let server: McpServer = serde_json::from_value(json!({
            "server_id": "ns.github",
            "url": "https://user:hunter2@mcp.example/mcp",
            "allowed_tools": null,
            "mcp_info": {"crossplane_owner": {}, "is_public": false, "is_public_explicit": false},
            "credentials": null,
            "unknown": 1,
        }))
        .unwrap();
        let debug = format!("{server:?}");
        assert!(
            debug.contains("mcp.example") && !debug.contains("hunter2"),
            "{debug}"
        );
        assert!(server.allowed_tools.is_empty());
        let info = server.stored_info().unwrap();
        assert_eq!(info.keys().collect::<Vec<_>>(), ["crossplane_owner"]);
    }
}
