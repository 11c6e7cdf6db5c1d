//! `LiteLLMMCPServer`: an MCP server the proxy connects to and offers to
//! teams and keys (`/v1/mcp/server`).

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, LocalRef, ManagedFields, ManagedStatus, SecretKeySelector};

/// Whether one entry of an allow-list of MCP server hosts (the instance's
/// `spec.tenantMcpServerHosts`, the function's policy) admits `host`, a
/// lowercase name without trailing dot: the name itself, ignoring case, or,
/// for `*.domain`, every name below the domain (not the domain itself). The
/// provider and the function read entries by this one rule.
pub fn host_entry_admits(entry: &str, host: &str) -> bool {
    match entry.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain.to_ascii_lowercase().as_str())
            .is_some_and(|below| below.ends_with('.') && below.len() > 1),
        None => entry.eq_ignore_ascii_case(host),
    }
}

/// Message of the rule that a server reached over the network has a URL,
/// and only a `stdio` server a command.
pub const MCP_TRANSPORT_FIELDS: &str =
    "forProvider: transport sse and http need url (and take no command or args); transport \
     stdio needs command (and takes no url)";

/// Message of the rule that an authentication type other than `none`
/// comes with its Secret, and only then.
pub const MCP_AUTH_SECRET: &str =
    "forProvider.authSecretRef is required with an authType other than none, and only then";

/// The pattern of `url`: `http://` or `https://` and a host.
pub const MCP_URL_PATTERN: &str = r"^https?://[^\s/?#]+";

/// The pattern of `serverName`: LiteLLM prefixes the server's tools with
/// it and a `-`, so it holds none.
pub const MCP_SERVER_NAME_PATTERN: &str = r"^[A-Za-z0-9_.]+$";

/// An MCP server registered with LiteLLM, which the proxy calls on behalf
/// of the teams and keys whose `objectPermission` names it.
///
/// Its id (`server_id`) is the external name, `<namespace>.<name>` by
/// default, chosen before the create. LiteLLM keeps no `metadata` for an
/// MCP server: the ownership marker lives in its free-form `mcp_info`
/// (stored as given, replaced whole by every update, so every write sends
/// it), beside `forProvider.mcpInfo`.
///
/// Outside the LiteLLMInstance's namespace (a tenant's): `transport: stdio`
/// is refused (the proxy would run a command on its own host), the
/// `serverName` must start with the namespace (`-` written `_`) and a
/// `.`, and every access group with the namespace and a `/`, so a tenant
/// can neither take a name the platform wants nor put its server into
/// someone else's group.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMMCPServer",
    plural = "litellmmcpservers",
    namespaced,
    shortname = "lmcp",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<McpServerObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"TRANSPORT","type":"string","jsonPath":".spec.forProvider.transport"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMMCPServerSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM MCP server.
    pub for_provider: McpServerParameters,
}

/// How the proxy talks to the server.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// Streamable HTTP.
    #[default]
    Http,
    /// Server-sent events (the older MCP transport).
    Sse,
    /// A command the proxy runs on its own host: only from the
    /// LiteLLMInstance's namespace.
    Stdio,
}

impl McpTransport {
    /// LiteLLM's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Http => "http",
            McpTransport::Sse => "sse",
            McpTransport::Stdio => "stdio",
        }
    }
}

/// How the proxy authenticates to the server, with the value of
/// `authSecretRef`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpAuthType {
    None,
    /// The value in an `X-API-Key` header.
    ApiKey,
    /// `Authorization: Bearer <value>`.
    BearerToken,
    /// `Authorization: Basic <value>` (`user:password`, base64).
    Basic,
    /// The value as the whole `Authorization` header.
    Authorization,
    /// `Authorization: token <value>`.
    Token,
}

impl McpAuthType {
    /// LiteLLM's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            McpAuthType::None => "none",
            McpAuthType::ApiKey => "api_key",
            McpAuthType::BearerToken => "bearer_token",
            McpAuthType::Basic => "basic",
            McpAuthType::Authorization => "authorization",
            McpAuthType::Token => "token",
        }
    }
}

/// The desired state of an MCP server. Every field is the server's whole
/// setting: one left unset is cleared in LiteLLM.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(
    validation = Rule::new("self.transport == 'stdio' ? (has(self.command) && !has(self.url)) : (has(self.url) && !has(self.command) && !has(self.args))").message(MCP_TRANSPORT_FIELDS),
    validation = Rule::new("has(self.authSecretRef) == (has(self.authType) && self.authType != 'none')").message(MCP_AUTH_SECRET)
)]
#[serde(rename_all = "camelCase")]
pub struct McpServerParameters {
    /// `http` (streamable HTTP), `sse`, or `stdio` (only in the
    /// LiteLLMInstance's namespace).
    pub transport: McpTransport,
    /// Where the proxy reaches the server: `http://` or `https://` only.
    /// The proxy calls it from inside its own network (see the README on
    /// what that exposes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_URL_LENGTH), regex(pattern = MCP_URL_PATTERN))]
    pub url: Option<String>,
    /// The prefix of the server's tools as clients see them
    /// (`<serverName>-<tool>`), unique in the proxy. Default: the external
    /// name with `-` written `_`. Outside the LiteLLMInstance's namespace it
    /// must start with the namespace (`-` written `_`) and a `.`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = bounds::MAX_ALIAS_LENGTH),
        regex(pattern = MCP_SERVER_NAME_PATTERN)
    )]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_DESCRIPTION_LENGTH))]
    pub description: Option<String>,
    /// How the proxy authenticates to the server; unset or `none`: it does
    /// not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_type: Option<McpAuthType>,
    /// The Secret key (same namespace) holding the value of `authType`.
    /// LiteLLM never returns it: the provider records its fingerprint
    /// (`status.atProvider.secretFingerprints`), and a changed Secret is
    /// written again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_secret_ref: Option<SecretKeySelector>,
    /// The tools the proxy offers; unset: every tool of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TOOLS),
        inner(length(min = 1, max = bounds::MAX_NAME_LENGTH))
    )]
    pub allowed_tools: Option<Vec<String>>,
    /// MCP access groups the server is in (`mcp_access_groups`): a team or
    /// key naming a group in its `objectPermission` may use every server of
    /// it. Outside the LiteLLMInstance's namespace each starts with the
    /// namespace and a `/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TAGS),
        inner(length(min = 1, max = bounds::MAX_ACCESS_GROUP_LENGTH))
    )]
    pub access_groups: Option<Vec<String>>,
    /// Whether every virtual key of the proxy may use the server, whatever
    /// its team's or its own `objectPermission` say (`allow_all_keys`).
    /// Only in the LiteLLMInstance's namespace: a tenant's server is
    /// reached only through the permissions that name it. Unset: `false`,
    /// and a server switched to all keys (in LiteLLM's UI, say) is drift
    /// that is put back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_all_keys: Option<bool>,
    /// `stdio` only: the command the proxy runs (LiteLLM allows a few:
    /// `npx`, `uvx`, `python`, `node`, `docker`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_NAME_LENGTH))]
    pub command: Option<String>,
    /// `stdio` only: its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TAGS),
        inner(length(max = bounds::MAX_URL_LENGTH))
    )]
    pub args: Option<Vec<String>>,
    /// Free-form `mcp_info` (LiteLLM's UI shows some of it). Stored in plain
    /// text, so never a secret; the provider keeps its ownership marker
    /// beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub mcp_info: Option<FreeForm>,
}

/// An MCP server as the admin API reports it: never a credential, nor its
/// URL (which may hold one).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_type: Option<String>,
    /// What the proxy's health check of the server (run by each read)
    /// said: `healthy`, `unhealthy` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Fingerprint of the value of `authSecretRef` last written to LiteLLM
    /// (`sha256:` and 16 hex digits of a domain-separated SHA-256; never
    /// the value), under `auth_value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<std::collections::BTreeMap<String, String>>,
}

/// What a team or key may use besides models (LiteLLM's
/// `object_permission`): MCP servers, MCP access groups and vector stores.
/// Each list is the whole set: one left unset is empty in LiteLLM.
///
/// Outside the LiteLLMInstance's namespace (a tenant's) MCP servers are
/// named only by reference (`mcpServerRefs`, servers of the same
/// namespace), access groups only with the namespace and a `/`, and
/// vector stores not at all (LiteLLM keeps no owner of a vector store, so
/// nothing tells whose one is).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectPermission {
    /// LiteLLMMCPServers of this namespace, by name; each resolves to its
    /// server id once Ready. A server's deletion waits for the teams and
    /// keys that name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_OBJECT_PERMISSIONS))]
    pub mcp_server_refs: Option<Vec<LocalRef>>,
    /// Raw LiteLLM MCP server ids, for servers not managed here: only in
    /// the LiteLLMInstance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_OBJECT_PERMISSIONS),
        inner(length(min = 1, max = bounds::MAX_ID_LENGTH))
    )]
    pub mcp_servers: Option<Vec<String>>,
    /// MCP access groups: every server of each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_OBJECT_PERMISSIONS),
        inner(length(min = 1, max = bounds::MAX_ACCESS_GROUP_LENGTH))
    )]
    pub mcp_access_groups: Option<Vec<String>>,
    /// LiteLLMVectorStores of this namespace, by name; each resolves to its
    /// vector store id once Ready. A vector store's deletion waits for the
    /// teams and keys that name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_OBJECT_PERMISSIONS))]
    pub vector_store_refs: Option<Vec<LocalRef>>,
    /// Raw vector store ids, for vector stores not managed here: only in
    /// the LiteLLMInstance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_OBJECT_PERMISSIONS),
        inner(length(min = 1, max = bounds::MAX_ID_LENGTH))
    )]
    pub vector_stores: Option<Vec<String>>,
}
