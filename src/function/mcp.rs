//! MCP servers and object permissions: the XR's `mcpServers` (each a
//! `LiteLLMMCPServer` reached over http or sse, its credential from a
//! Secret under `allowedSecrets`) and the `objectPermission` of its team
//! and keys (MCP servers by name, the XR's own or existing ones under
//! `allowedMcpServers`, and MCP access groups), checked against the value
//! rules, the provider's tenancy rules and the platform's policy. Pure.

use std::collections::BTreeSet;

use crate::api::common::bounds::MAX_OBJECT_PERMISSIONS;
use crate::api::input::{FieldPaths, Policy};
use crate::api::mcp_server::{McpAuthType, McpTransport};

use super::error::Problem;
use super::request::{McpServerRequest, PermissionRequest, XrRequest};
use super::rules::{each, list_allowed, unique_label, At, Findings};
use super::tenancy::{self, Tenancy, SHARED};

/// Longest URL the provider's CRD takes.
const MAX_URL: usize = 2048;
/// Longest server name the provider's CRD takes.
const MAX_SERVER_NAME: usize = 1024;

/// The host of an `http://` or `https://` URL, lowercased; `None` for any
/// other URL or one without a host.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.chars().any(char::is_whitespace) {
        return None;
    }
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Whether `allowed` admits `host`: an exact entry (ignoring case), or a
/// `*.domain` entry for every host below the domain.
pub fn host_allowed(allowed: &[String], host: &str) -> bool {
    allowed
        .iter()
        .any(|entry| crate::api::mcp_server::host_entry_admits(entry, host))
}

/// What the rules of MCP servers and object permissions read, and what
/// they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    tenancy: Tenancy<'a>,
    /// Names of the MCP servers checked so far.
    names: BTreeSet<&'a str>,
    /// `serverName`s of the MCP servers checked so far, lowercased.
    server_names: BTreeSet<String>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one MCP server.
type ServerRule = for<'a> fn(&mut Check<'a>, &At, &'a McpServerRequest);

/// The rules of MCP servers and object permissions, in the order they
/// report.
const RULES: [Rule; 4] = [servers_allowed, servers, team_permission, key_permissions];

/// The rules of one MCP server, in the order they report.
const SERVER_RULES: [ServerRule; 7] = [
    server_name,
    server_transport,
    server_url,
    server_litellm_name,
    server_auth,
    server_access_groups,
    server_tools,
];

/// Checks the XR's MCP servers and the object permissions of its team and
/// keys.
pub fn check(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Findings {
    let mut check = Check {
        request,
        paths,
        policy,
        tenancy: *tenancy,
        names: BTreeSet::new(),
        server_names: BTreeSet::new(),
        findings: Findings::default(),
    };
    for rule in RULES {
        rule(&mut check);
    }
    check.findings
}

/// XRs may add MCP servers unless the policy says otherwise.
fn servers_allowed(check: &mut Check<'_>) {
    list_allowed(
        &mut check.findings,
        &check.paths.mcp_servers,
        check.request.mcp_servers.len(),
        check.policy.allow_mcp_servers,
        "MCP servers",
        "allowMcpServers",
    );
}

/// Every MCP server, by the rules of one server ([`SERVER_RULES`]).
fn servers(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(
        check,
        &paths.mcp_servers,
        &request.mcp_servers,
        &SERVER_RULES,
    );
}

/// An MCP server's name is a DNS label no server before it has: it is part
/// of its object's name, and what object permissions name it by.
fn server_name<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    unique_label(
        &server.name,
        "MCP server",
        at,
        &mut check.names,
        &mut check.findings,
    );
}

/// An MCP server is not reached over stdio: the proxy would run a command
/// on its own host.
fn server_transport<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    if server.transport == Some(McpTransport::Stdio) {
        check.findings.fatal.push(Problem::new(
            at.field("transport"),
            "stdio is not rendered from an XR: the proxy would run a command on its own \
             host, with its own credentials; use http or sse",
        ));
    }
}

/// An MCP server has an http(s) URL with a host, of at most [`MAX_URL`]
/// characters, on a host the policy allows.
fn server_url<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    let problem = match &server.url {
        None => Some(Problem::new(
            at.field("url"),
            "is required: the http(s) URL where the proxy reaches the server",
        )),
        Some(url) => match url_host(url) {
            None => Some(Problem::new(
                at.field("url"),
                format!("{url:?} must be an http:// or https:// URL with a host"),
            )),
            Some(_) if url.len() > MAX_URL => Some(Problem::new(
                at.field("url"),
                format!("must have at most {MAX_URL} characters"),
            )),
            Some(host) => match &check.policy.allowed_mcp_hosts {
                Some(allowed) if !host_allowed(allowed, &host) => Some(Problem::new(
                    at.field("url"),
                    format!(
                        "host {host:?} is not allowed by policy (allowed: {}): the \
                         proxy calls it from inside its own network",
                        allowed.join(", ")
                    ),
                )),
                _ => None,
            },
        },
    };
    check.findings.fatal.extend(problem);
}

/// An MCP server's `serverName` (LiteLLM's name of it) has 1 to
/// [`MAX_SERVER_NAME`] letters, digits, '_' or '.', starts with the
/// namespace's prefix on a shared instance, and no server before it has
/// the same one, ignoring case.
fn server_litellm_name<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    let Some(name) = &server.server_name else {
        return;
    };
    let prefix = tenancy::server_name_prefix(check.tenancy.namespace);
    let valid = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    if !valid {
        check.findings.fatal.push(Problem::new(
            at.field("serverName"),
            format!(
                "{name:?} must have 1 to {MAX_SERVER_NAME} letters, digits, '_' or '.' \
                 (LiteLLM prefixes the server's tools with it and a '-')"
            ),
        ));
    } else if check.tenancy.shared_instance && !name.starts_with(&prefix) {
        check.findings.fatal.push(Problem::new(
            at.field("serverName"),
            format!(
                "{name:?} must start with {prefix:?} {SHARED} (server names are unique \
                 in the proxy); leave it unset for the default"
            ),
        ));
    } else if !check.server_names.insert(name.to_ascii_lowercase()) {
        check.findings.fatal.push(Problem::new(
            at.field("serverName"),
            format!("duplicate server name {name:?}: LiteLLM keeps them unique, ignoring case"),
        ));
    }
}

/// An MCP server that authenticates has its credential in a Secret the
/// policy allows, and one with a credential authenticates.
fn server_auth<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    let authenticates = server.auth_type.is_some_and(|t| t != McpAuthType::None);
    let problem = match (&server.auth_secret_ref, authenticates) {
        (None, true) => Some(Problem::new(
            at.field("authSecretRef"),
            format!(
                "is required with authType {}: the Secret key holding its value",
                server
                    .auth_type
                    .map(McpAuthType::as_str)
                    .unwrap_or_default()
            ),
        )),
        (Some(_), false) => Some(Problem::new(
            at.field("authSecretRef"),
            "needs an authType other than none (api_key, bearer_token, basic, \
             authorization or token)",
        )),
        (Some(secret), true) => tenancy::admitted(
            at.field("authSecretRef"),
            "Secret",
            &secret.name,
            "allowedSecrets",
            &check.policy.allowed_secrets,
            &check.tenancy,
        ),
        (None, false) => None,
    };
    check.findings.fatal.extend(problem);
}

/// An MCP server's access groups are not empty and, on a shared instance,
/// start with the namespace's prefix.
fn server_access_groups<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    for (j, group) in server.access_groups.iter().flatten().enumerate() {
        let at = format!("{}[{j}]", at.field("accessGroups"));
        let own = tenancy::group_prefix(check.tenancy.namespace);
        if group.is_empty() {
            check
                .findings
                .fatal
                .push(Problem::new(at, "must not be empty"));
        } else if check.tenancy.shared_instance && !group.starts_with(&own) {
            check.findings.fatal.push(Problem::new(
                at,
                format!(
                    "{group:?} must start with {own:?} {SHARED}: a group of another name \
                     would offer this server to other namespaces' teams and keys"
                ),
            ));
        }
    }
}

/// An MCP server's allowed tools are not empty.
fn server_tools<'a>(check: &mut Check<'a>, at: &At, server: &'a McpServerRequest) {
    for (j, tool) in server.allowed_tools.iter().flatten().enumerate() {
        if tool.is_empty() {
            check.findings.fatal.push(Problem::new(
                format!("{}[{j}]", at.field("allowedTools")),
                "must not be empty",
            ));
        }
    }
}

/// The team's object permission.
fn team_permission(check: &mut Check<'_>) {
    if let Some(permission) = &check.request.team.object_permission {
        let at = format!("{}.objectPermission", check.paths.team);
        check_permission(check, permission, &at);
    }
}

/// Each key's object permission, and a warning for each MCP server in it
/// that the team's does not grant.
fn key_permissions(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    let team = request.team.object_permission.as_ref();
    for (i, key) in request.keys.iter().enumerate() {
        let Some(permission) = &key.object_permission else {
            continue;
        };
        let at = format!("{}[{i}].objectPermission", paths.keys);
        check_permission(check, permission, &at);
        // LiteLLM refuses a team's key a server its team does not grant.
        let granted: Vec<&String> = team
            .and_then(|t| t.mcp_servers.as_ref())
            .into_iter()
            .flatten()
            .collect();
        for (j, server) in permission.mcp_servers.iter().flatten().enumerate() {
            if !granted.contains(&server) {
                check.findings.warnings.push(Problem::new(
                    format!("{at}.mcpServers[{j}]"),
                    format!(
                        "MCP server {server:?} is not in the team's objectPermission.mcpServers: \
                         LiteLLM refuses a team's key a server its team does not grant, unless \
                         one of the team's access groups holds it"
                    ),
                ));
            }
        }
    }
}

/// An object permission (at `at`): at most [`MAX_OBJECT_PERMISSIONS`]
/// entries a list, MCP servers of the XR's or existing ones the policy
/// allows, and access groups [`tenancy::access_group`] admits.
fn check_permission(check: &mut Check<'_>, permission: &PermissionRequest, at: &str) {
    let (request, policy, tenancy) = (check.request, check.policy, &check.tenancy);
    let findings = &mut check.findings;
    for (name, list) in [
        ("mcpServers", &permission.mcp_servers),
        ("mcpAccessGroups", &permission.mcp_access_groups),
    ] {
        let count = list.as_ref().map_or(0, Vec::len);
        if count > MAX_OBJECT_PERMISSIONS as usize {
            findings.fatal.push(Problem::new(
                format!("{at}.{name}"),
                format!("{count} entries; objectPermission takes at most {MAX_OBJECT_PERMISSIONS}"),
            ));
        }
    }
    for (j, server) in permission.mcp_servers.iter().flatten().enumerate() {
        let field = format!("{at}.mcpServers[{j}]");
        if request.mcp_servers.iter().any(|s| &s.name == server) {
            continue;
        }
        if server.is_empty() || server.len() > 253 {
            findings.fatal.push(Problem::new(
                field,
                "must name one of the XR's MCP servers or an existing LiteLLMMCPServer",
            ));
            continue;
        }
        if let Some(p) = tenancy::admitted(
            field,
            "LiteLLMMCPServer",
            server,
            "allowedMcpServers",
            &policy.allowed_mcp_servers,
            tenancy,
        ) {
            findings.fatal.push(p);
        }
    }
    for (j, group) in permission.mcp_access_groups.iter().flatten().enumerate() {
        let field = format!("{at}.mcpAccessGroups[{j}]");
        if let Some(p) = tenancy::access_group(field, group, policy, tenancy) {
            findings.fatal.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_web_urls() {
        for (url, host) in [
            ("https://mcp.example.com/mcp", Some("mcp.example.com")),
            ("http://User:pw@Svc.NS:8080/x?y", Some("svc.ns")),
            ("http://[::1]:9000/", Some("::1")),
            ("https://h", Some("h")),
            ("file:///etc/passwd", None),
            ("https:///path", None),
            ("ftp://h/", None),
            ("https://a b/", None),
        ] {
            assert_eq!(url_host(url).as_deref(), host, "{url}");
        }
    }

    #[test]
    fn host_entries_are_exact_or_below_a_domain() {
        let allowed = vec!["mcp.example.com".to_string(), "*.tools.example".to_string()];
        assert!(host_allowed(&allowed, "mcp.example.com"));
        assert!(host_allowed(&allowed, "a.tools.example"));
        assert!(host_allowed(&allowed, "b.a.tools.example"));
        assert!(!host_allowed(&allowed, "tools.example"));
        assert!(!host_allowed(&allowed, "eviltools.example"));
        assert!(!host_allowed(&allowed, "example.com"));
    }
}
