//! `LiteLLMMCPServer` against `/v1/mcp/server`.
//!
//! The server id is the external name (`<namespace>.<name>`), chosen
//! before the create. LiteLLM keeps no `metadata` for a server; the
//! ownership marker goes into its free-form `mcp_info`, which LiteLLM
//! stores as given and replaces whole on update (so every write sends it),
//! and to which a read adds `is_public` and `is_public_explicit` (left out
//! of every comparison, see [`McpServer::stored_info`]).
//!
//! Every field is the server's whole setting: what `forProvider` leaves
//! unset is cleared in LiteLLM, and nothing is late-initialized. The
//! authentication value never comes back from LiteLLM: the fingerprint of
//! the one last written is kept in `status.atProvider.secretFingerprints`
//! (see [`SecretValues`]), so a changed, added or removed Secret is drift
//! and is written again.
//!
//! Refused from every namespace: a URL that is not `http(s)://` (LiteLLM
//! stores `file:///...` as readily), and an authentication value of the
//! form `os.environ/...`. Refused outside the LiteLLMInstance's namespace:
//! `stdio` (the proxy would run a command on its own host), a URL whose
//! host is internal (loopback, link-local such as the cloud metadata
//! service, private-range, cluster-internal names; see [`crate::provider::kinds::hosts`])
//! unless the instance's `spec.tenantMcpServerHosts` allows it, a server
//! name outside the namespace's prefix, access groups outside it, and
//! `allowAllKeys` (which would offer the server to every key of the proxy).
//! `allow_all_keys` is always written, so a server switched to all keys
//! behind the provider's back is drift and is put back.

use std::collections::BTreeMap;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::mcp_server::{
    LiteLLMMCPServer, McpServerObservation, McpServerParameters, McpTransport,
};
use crate::litellm::{self, McpServer, McpServerRequest, Secret};

use crate::provider::kinds::permissions::group_prefix;
use crate::provider::kinds::upstream::params::names_environment;
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{same_set, Diff};
use crate::provider::managed::mapped::{
    values_fingerprints, Fingerprints, Mapped, Mapping, SecretValues,
};
use crate::provider::managed::ownership::{metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::Joins;

/// `forProvider.authSecretRef`: the field of the Secret reference and of
/// its drift.
const AUTH_SECRET_REF: &str = "authSecretRef";
/// The name LiteLLM gives the value (`credentials.auth_value`).
const AUTH_VALUE: &str = "auth_value";

/// The server name (the prefix of its tools): `serverName`, else the id
/// with `-` written `_` (LiteLLM refuses a `-` there, and Kubernetes names
/// hold no `_`, so no two ids give one name).
pub fn server_name(params: &McpServerParameters, id: &str) -> String {
    params
        .server_name
        .clone()
        .unwrap_or_else(|| id.replace('-', "_"))
}

/// The prefix of a tenant's server names: its namespace with `-` written
/// `_`, and a `.`.
pub fn name_prefix(namespace: &str) -> String {
    format!("{}.", namespace.replace('-', "_"))
}

/// Whether `url` is an `http://` or `https://` URL with a host.
fn is_web_url(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

/// Why the server must not be written, from any namespace; names the
/// field, never a value.
pub fn refusal(params: &McpServerParameters, secrets: &BTreeMap<String, Secret>) -> Option<String> {
    if let Some(url) = &params.url {
        if !is_web_url(url) {
            return Some(
                "forProvider.url: only http:// and https:// URLs with a host are accepted (the \
                 proxy would open any other scheme LiteLLM knows)"
                    .to_owned(),
            );
        }
    }
    if secrets.values().any(|v| names_environment(v.expose())) {
        return Some(format!(
            "forProvider.{AUTH_SECRET_REF}: the Secret's value has the form os.environ/..., which \
             makes LiteLLM read an environment variable of the proxy; a Secret must hold the \
             value itself"
        ));
    }
    None
}

/// Why a server of `namespace`, outside the LiteLLMInstance's (a
/// tenant's), must not be written: names the field and what the tenant
/// wrote, never another tenant.
/// `allowed_hosts` are the internal hosts the instance lets tenants name
/// (`spec.tenantMcpServerHosts`).
pub fn tenant_refusal(
    params: &McpServerParameters,
    namespace: &str,
    allowed_hosts: &[String],
) -> Option<String> {
    const WHERE: &str = "outside the LiteLLMInstance's namespace";
    if params.transport == McpTransport::Stdio {
        return Some(format!(
            "forProvider.transport: stdio is refused {WHERE}: the proxy would run the command on \
             its own host, with its own credentials; use http or sse"
        ));
    }
    if params.allow_all_keys == Some(true) {
        return Some(format!(
            "forProvider.allowAllKeys: refused {WHERE}: it would offer the server to every key \
             of the proxy; grant it through the objectPermission of the teams and keys that use it"
        ));
    }
    if let Some(url) = params.url.as_deref().and_then(|u| url::Url::parse(u).ok()) {
        if let Some(kind) = crate::provider::kinds::hosts::internal(&url) {
            if !crate::provider::kinds::hosts::allowed(&url, allowed_hosts) {
                let host = crate::provider::kinds::hosts::allow_list_form(&url).unwrap_or_default();
                return Some(format!(
                    "forProvider.url: the host {host:?} is {kind}, which the proxy would call from \
                     inside its own network; refused {WHERE} unless the LiteLLMInstance lists it \
                     in spec.tenantMcpServerHosts"
                ));
            }
        }
    }
    let prefix = name_prefix(namespace);
    if let Some(name) = params.server_name.as_deref() {
        if !name.starts_with(&prefix) {
            return Some(format!(
                "forProvider.serverName: {name:?} must start with {prefix:?} {WHERE} (server \
                 names are unique in the proxy, and clients see them as their tools' prefix)"
            ));
        }
    }
    let own = group_prefix(namespace);
    for group in params.access_groups.iter().flatten() {
        if !group.starts_with(&own) {
            return Some(format!(
                "forProvider.accessGroups: {group:?} must start with {own:?} {WHERE}: a group \
                 of another name would offer this server to other namespaces' teams and keys"
            ));
        }
    }
    None
}

/// Create and update body: every field (unset ones `null`, which an
/// update clears), the authentication value, and `mcpInfo` with the
/// marker.
pub fn request(
    id: &str,
    params: &McpServerParameters,
    secrets: &BTreeMap<String, Secret>,
    owner: &Owner,
) -> McpServerRequest {
    McpServerRequest {
        server_id: id.to_owned(),
        server_name: Some(server_name(params, id)),
        description: params.description.clone(),
        transport: params.transport.as_str().to_owned(),
        url: params.url.clone(),
        auth_type: params.auth_type.map(|a| a.as_str().to_owned()),
        credentials: (!secrets.is_empty()).then(|| secrets.clone()),
        allowed_tools: params.allowed_tools.clone(),
        mcp_access_groups: params.access_groups.clone().unwrap_or_default(),
        mcp_info: metadata_with_marker(params.mcp_info.as_ref(), owner),
        command: params.command.clone(),
        args: params.args.clone().unwrap_or_default(),
        allow_all_keys: params.allow_all_keys.unwrap_or(false),
    }
}

/// The fields of `params` the live server does not match, unset ones
/// included (they must be unset in LiteLLM too); the authentication value
/// is compared by its fingerprint in `observe`.
pub fn diff(params: &McpServerParameters, id: &str, live: &McpServer, owner: &Owner) -> Diff {
    let mut diff = Diff::new();
    let mut exactly = |name: &'static str, same: bool| {
        if !same {
            diff.mark(name);
        }
    };
    exactly(
        "serverName",
        live.server_name.as_deref() == Some(server_name(params, id).as_str()),
    );
    exactly("description", params.description == live.description);
    exactly(
        "transport",
        live.transport.as_deref() == Some(params.transport.as_str()),
    );
    exactly("url", params.url == live.url);
    exactly(
        "authType",
        params.auth_type.map(|a| a.as_str()) == live.auth_type.as_deref(),
    );
    exactly(
        "allowedTools",
        same_set(params.allowed_tools.as_deref(), &live.allowed_tools),
    );
    exactly(
        "accessGroups",
        same_set(params.access_groups.as_deref(), &live.mcp_access_groups),
    );
    exactly(
        "allowAllKeys",
        params.allow_all_keys.unwrap_or(false) == live.allow_all_keys,
    );
    exactly("command", params.command == live.command);
    exactly(
        "args",
        params.args.as_deref().unwrap_or_default() == live.args.as_slice(),
    );
    diff.metadata(
        "mcpInfo",
        &metadata_with_marker(params.mcp_info.as_ref(), owner),
        live.stored_info().as_ref(),
    );
    diff
}

pub fn at_provider(
    live: &McpServer,
    secret_fingerprints: Option<BTreeMap<String, String>>,
) -> McpServerObservation {
    McpServerObservation {
        server_id: Some(live.server_id.clone()),
        server_name: live.server_name.clone(),
        transport: live.transport.clone(),
        auth_type: live.auth_type.clone(),
        health: live.status.clone(),
        created_at: live.created_at.clone(),
        secret_fingerprints,
    }
}

/// `/v1/mcp/server` for one reconciliation.
pub struct McpServerMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    /// `spec.tenantMcpServerHosts` of the instance.
    tenant_hosts: Vec<String>,
    refs: Resolved,
}

impl McpServerMapping {
    /// The authentication value resolved from its Secret, by LiteLLM's
    /// name.
    fn secrets(&self) -> BTreeMap<String, Secret> {
        self.refs
            .secret_set(AUTH_SECRET_REF)
            .cloned()
            .unwrap_or_default()
    }

    /// The create/update body, or why the server may not be written (before
    /// anything is sent).
    fn body(
        &self,
        id: &str,
        params: &McpServerParameters,
    ) -> Result<McpServerRequest, ExternalError> {
        let secrets = self.secrets();
        let tenant = self.owner.namespace != self.instance_namespace;
        let refused = refusal(params, &secrets).or_else(|| {
            tenant
                .then(|| tenant_refusal(params, &self.owner.namespace, &self.tenant_hosts))
                .flatten()
        });
        if let Some(why) = refused {
            return Err(ExternalError::Invalid(why));
        }
        Ok(request(id, params, &secrets, &self.owner))
    }
}

impl ManagedKind for LiteLLMMCPServer {
    type Parameters = McpServerParameters;
    type AtProvider = McpServerObservation;
    type External = Mapped<McpServerMapping>;
    const NOUN: &'static str = "MCP server";
    /// Teams and keys of its namespace whose `objectPermission` names it:
    /// LiteLLM would delete it under them without a word.
    const JOINED_AS: Option<Joins> = Some(Joins::McpServer);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &McpServerParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<McpServerObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let Some(selector) = &self.spec.for_provider.auth_secret_ref else {
            return Vec::new();
        };
        vec![Reference::Secrets {
            field: AUTH_SECRET_REF,
            entries: vec![(AUTH_VALUE.to_owned(), selector.clone())],
        }]
    }
    fn connect(connection: Connection) -> Mapped<McpServerMapping> {
        Mapped(McpServerMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            tenant_hosts: connection.tenant_mcp_server_hosts,
            refs: connection.refs,
        })
    }
}

/// Every write sends every field, the authentication value and the whole
/// `mcp_info`.
impl Mapping<LiteLLMMCPServer> for McpServerMapping {
    type Live = McpServer;
    type Request = McpServerRequest;

    async fn read(
        &self,
        _: &LiteLLMMCPServer,
        id: &str,
    ) -> Result<Option<McpServer>, ExternalError> {
        Ok(self.client.mcp_server_get(id).await?)
    }
    fn owner(&self, _: &str, live: &McpServer) -> Option<Owner> {
        Owner::from_metadata(live.stored_info().as_ref())
    }
    fn drift(&self, mr: &LiteLLMMCPServer, id: &str, live: &McpServer) -> Diff {
        diff(&mr.spec.for_provider, id, live, &self.owner)
    }
    fn at_provider(
        &self,
        live: &McpServer,
        fingerprints: Option<Fingerprints>,
    ) -> McpServerObservation {
        at_provider(live, fingerprints)
    }

    /// An authentication value changed, added or removed since it was
    /// written is drift of `authSecretRef`.
    fn secret_values(&self, mr: &LiteLLMMCPServer) -> Option<SecretValues> {
        let current = values_fingerprints(&self.secrets());
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        let differ = values.differ();
        Some(values.drifting(differ, &[AUTH_SECRET_REF]))
    }
    fn before_create(
        &self,
        _: &LiteLLMMCPServer,
        id: &str,
        fingerprints: Option<Fingerprints>,
    ) -> Option<McpServerObservation> {
        Some(McpServerObservation {
            server_id: Some(id.to_owned()),
            secret_fingerprints: fingerprints,
            ..McpServerObservation::default()
        })
    }

    async fn request(
        &self,
        mr: &LiteLLMMCPServer,
        id: &str,
        _: Option<&Diff>,
    ) -> Result<McpServerRequest, ExternalError> {
        self.body(id, &mr.spec.for_provider)
    }
    async fn send_create(
        &self,
        request: &McpServerRequest,
    ) -> Result<Option<String>, ExternalError> {
        self.client.mcp_server_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &McpServerRequest) -> Result<(), ExternalError> {
        self.client.mcp_server_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.mcp_server_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::mcp_server::McpAuthType;
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("github")
    }

    fn params() -> McpServerParameters {
        McpServerParameters {
            transport: McpTransport::Http,
            url: Some("https://mcp.example/mcp".into()),
            server_name: None,
            description: Some("GitHub".into()),
            auth_type: Some(McpAuthType::BearerToken),
            auth_secret_ref: Some(SecretKeySelector {
                name: "github".into(),
                key: "token".into(),
            }),
            allowed_tools: Some(vec!["search".into(), "read".into()]),
            access_groups: Some(vec!["ns/dev".into()]),
            allow_all_keys: None,
            command: None,
            args: None,
            mcp_info: Some([("docs".to_owned(), json!("https://docs"))].into()),
        }
    }

    fn secrets(token: &str) -> BTreeMap<String, Secret> {
        BTreeMap::from([(AUTH_VALUE.to_owned(), Secret::new(token))])
    }

    /// As LiteLLM 1.108.7 reports the server `request` created.
    fn live() -> McpServer {
        let mut info = metadata_with_marker(params().mcp_info.as_ref(), &me());
        info.insert("is_public".into(), json!(false));
        info.insert("is_public_explicit".into(), json!(false));
        McpServer {
            server_id: "ns.github".into(),
            server_name: Some("ns.github".into()),
            alias: Some("ns.github".into()),
            description: Some("GitHub".into()),
            transport: Some("http".into()),
            url: Some("https://mcp.example/mcp".into()),
            auth_type: Some("bearer_token".into()),
            allowed_tools: vec!["read".into(), "search".into()],
            mcp_access_groups: vec!["ns/dev".into()],
            mcp_info: Some(info),
            status: Some("unhealthy".into()),
            ..McpServer::default()
        }
    }

    #[test]
    fn the_request_sends_every_field_the_value_and_the_marker() {
        let body = serde_json::to_value(request("ns.github", &params(), &secrets("ghp-1"), &me()))
            .unwrap();
        assert_eq!(body["server_id"], "ns.github");
        assert_eq!(body["server_name"], "ns.github");
        assert_eq!(body["transport"], "http");
        assert_eq!(body["auth_type"], "bearer_token");
        assert_eq!(body["credentials"], json!({"auth_value": "ghp-1"}));
        assert_eq!(body["mcp_access_groups"], json!(["ns/dev"]));
        assert_eq!(body["mcp_info"]["docs"], "https://docs");
        assert_eq!(body["mcp_info"][MARKER_KEY]["namespace"], "ns");
        assert_eq!(body["command"], Value::Null);
        let bare = McpServerParameters {
            auth_type: None,
            auth_secret_ref: None,
            allowed_tools: None,
            access_groups: None,
            description: None,
            ..params()
        };
        let body =
            serde_json::to_value(request("ns.my-mcp", &bare, &BTreeMap::new(), &me())).unwrap();
        assert_eq!(body["server_name"], "ns.my_mcp", "no '-' in a server name");
        for cleared in ["credentials", "auth_type", "allowed_tools", "description"] {
            assert_eq!(body[cleared], Value::Null, "{cleared}");
        }
        assert_eq!(body["mcp_access_groups"], json!([]));
    }

    #[test]
    fn diff_table() {
        assert!(
            diff(&params(), "ns.github", &live(), &me()).is_empty(),
            "as created"
        );
        type Change = Box<dyn Fn(&mut McpServer)>;
        let cases: Vec<(&str, Change, &[&str])> = vec![
            (
                "the name changed in the UI",
                Box::new(|l| l.server_name = Some("other".into())),
                &["serverName"],
            ),
            (
                "a description added to a server without one",
                Box::new(|l| l.description = Some("x".into())),
                &["description"],
            ),
            (
                "the transport",
                Box::new(|l| l.transport = Some("sse".into())),
                &["transport"],
            ),
            (
                "the url",
                Box::new(|l| l.url = Some("https://evil.example/mcp".into())),
                &["url"],
            ),
            (
                "authentication removed",
                Box::new(|l| l.auth_type = None),
                &["authType"],
            ),
            (
                "a tool added",
                Box::new(|l| l.allowed_tools.push("delete".into())),
                &["allowedTools"],
            ),
            (
                "the tools in another order",
                Box::new(|l| l.allowed_tools.reverse()),
                &[],
            ),
            (
                "an access group added",
                Box::new(|l| l.mcp_access_groups.push("other/ops".into())),
                &["accessGroups"],
            ),
            (
                "opened to every key (in LiteLLM's UI, say)",
                Box::new(|l| l.allow_all_keys = true),
                &["allowAllKeys"],
            ),
            (
                "a command added",
                Box::new(|l| l.command = Some("npx".into())),
                &["command"],
            ),
            (
                "the marker lost",
                Box::new(|l| drop(l.mcp_info.as_mut().unwrap().remove(MARKER_KEY))),
                &["mcpInfo"],
            ),
            (
                "the keys LiteLLM adds are no drift",
                Box::new(|l| drop(l.mcp_info.as_mut().unwrap().remove("is_public"))),
                &[],
            ),
        ];
        for (case, change, want) in cases {
            let mut changed = live();
            change(&mut changed);
            assert_eq!(
                diff(&params(), "ns.github", &changed, &me()).fields(),
                want,
                "{case}"
            );
        }
        // Unset lists must be empty in LiteLLM, not merely left alone.
        let all_tools = McpServerParameters {
            allowed_tools: None,
            ..params()
        };
        assert_eq!(
            diff(&all_tools, "ns.github", &live(), &me()).fields(),
            ["allowedTools"]
        );
        let mut unrestricted = live();
        unrestricted.allowed_tools.clear();
        assert!(diff(&all_tools, "ns.github", &unrestricted, &me()).is_empty());
    }

    #[test]
    fn urls_other_than_http_and_values_from_the_proxys_environment_are_refused() {
        let with_url = |url: &str| McpServerParameters {
            url: Some(url.into()),
            ..params()
        };
        let cases = [
            (
                "https",
                with_url("https://mcp.example/mcp"),
                secrets("t"),
                None,
            ),
            (
                "http with a port",
                with_url("http://10.0.0.1:8080/"),
                secrets("t"),
                None,
            ),
            (
                "a file",
                with_url("file:///etc/passwd"),
                secrets("t"),
                Some("forProvider.url: "),
            ),
            (
                "no host",
                with_url("http://"),
                secrets("t"),
                Some("forProvider.url: "),
            ),
            (
                "gopher",
                with_url("gopher://h/"),
                secrets("t"),
                Some("forProvider.url: "),
            ),
            (
                "the proxy's environment",
                params(),
                secrets("os.environ/GITHUB_TOKEN"),
                Some("forProvider.authSecretRef: "),
            ),
        ];
        for (case, params, secrets, want) in cases {
            let got = refusal(&params, &secrets);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    assert!(
                        !message.contains("GITHUB_TOKEN") && !message.contains("passwd"),
                        "{case}: {message}"
                    );
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn a_tenant_runs_no_command_and_stays_in_its_names_and_groups() {
        let ns = "team-a";
        let ok = McpServerParameters {
            server_name: Some("team_a.github".into()),
            access_groups: Some(vec!["team-a/dev".into()]),
            ..params()
        };
        let cases = [
            ("its own names", ok.clone(), None),
            (
                "the default name",
                McpServerParameters {
                    server_name: None,
                    ..ok.clone()
                },
                None,
            ),
            (
                "stdio",
                McpServerParameters {
                    transport: McpTransport::Stdio,
                    url: None,
                    command: Some("npx".into()),
                    args: Some(vec!["x".into()]),
                    ..ok.clone()
                },
                Some("forProvider.transport: "),
            ),
            (
                "a name the platform wants",
                McpServerParameters {
                    server_name: Some("github".into()),
                    ..ok.clone()
                },
                Some("forProvider.serverName: "),
            ),
            (
                "another namespace's prefix",
                McpServerParameters {
                    server_name: Some("team_b.github".into()),
                    ..ok.clone()
                },
                Some("forProvider.serverName: "),
            ),
            (
                "someone else's group",
                McpServerParameters {
                    access_groups: Some(vec!["team-a/dev".into(), "engineering".into()]),
                    ..ok.clone()
                },
                Some("forProvider.accessGroups: "),
            ),
            (
                "a group that only looks alike",
                McpServerParameters {
                    access_groups: Some(vec!["team-ab/dev".into()]),
                    ..ok.clone()
                },
                Some("forProvider.accessGroups: "),
            ),
            (
                "open to every key",
                McpServerParameters {
                    allow_all_keys: Some(true),
                    ..ok.clone()
                },
                Some("forProvider.allowAllKeys: "),
            ),
            (
                "explicitly closed to other keys",
                McpServerParameters {
                    allow_all_keys: Some(false),
                    ..ok.clone()
                },
                None,
            ),
            (
                "the cloud metadata service",
                McpServerParameters {
                    url: Some("http://169.254.169.254/latest/meta-data/".into()),
                    ..ok.clone()
                },
                Some("forProvider.url: the host \"169.254.169.254\" is a link-local"),
            ),
            (
                "the proxy itself, spelt as a number",
                McpServerParameters {
                    url: Some("http://2130706433:4000/mcp".into()),
                    ..ok.clone()
                },
                Some("forProvider.url: the host \"127.0.0.1\" is a loopback"),
            ),
            (
                "a cluster service",
                McpServerParameters {
                    url: Some("http://postgres.platform.svc:5432/".into()),
                    ..ok.clone()
                },
                Some("forProvider.url: "),
            ),
            (
                "a service by its short name",
                McpServerParameters {
                    url: Some("http://litellm:4000/".into()),
                    ..ok.clone()
                },
                Some("forProvider.url: "),
            ),
            (
                "an internal host the instance allows",
                McpServerParameters {
                    url: Some("http://tools.mcp.svc:8080/mcp".into()),
                    ..ok.clone()
                },
                None,
            ),
        ];
        let allowed = ["tools.mcp.svc".to_owned()];
        for (case, params, want) in cases {
            let got = tenant_refusal(&params, ns, &allowed);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}")
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
        // The default name of a tenant's server carries its prefix.
        assert!(server_name(&params(), "team-a.github").starts_with(&name_prefix(ns)));
    }

    #[test]
    fn references_and_at_provider() {
        let server = LiteLLMMCPServer::new(
            "github",
            crate::api::mcp_server::LiteLLMMCPServerSpec {
                managed: ManagedFields::default(),
                for_provider: params(),
            },
        );
        let [Reference::Secrets { field, entries }] = &server.references()[..] else {
            panic!("{:?}", server.references());
        };
        assert_eq!(*field, AUTH_SECRET_REF);
        assert_eq!(entries[0].0, AUTH_VALUE);
        let bare = LiteLLMMCPServer::new(
            "open",
            crate::api::mcp_server::LiteLLMMCPServerSpec {
                managed: ManagedFields::default(),
                for_provider: McpServerParameters {
                    auth_type: None,
                    auth_secret_ref: None,
                    ..params()
                },
            },
        );
        assert!(bare.references().is_empty());
        let recorded = values_fingerprints(&secrets("ghp-1"));
        let observed = at_provider(&live(), Some(recorded.clone()));
        assert_eq!(observed.secret_fingerprints, Some(recorded));
        assert_eq!(observed.health.as_deref(), Some("unhealthy"));
        let text = serde_json::to_string(&observed).unwrap();
        assert!(
            !text.contains("ghp-1") && !text.contains("mcp.example"),
            "{text}"
        );
    }
}
