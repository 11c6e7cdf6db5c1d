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
use super::request::{PermissionRequest, XrRequest};
use super::rules::{is_dns_label, Findings};
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
    allowed.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        match entry.strip_prefix("*.") {
            Some(domain) => host
                .strip_suffix(domain)
                .is_some_and(|below| below.ends_with('.') && below.len() > 1),
            None => entry == host,
        }
    })
}

/// Checks the XR's MCP servers and the object permissions of its team and
/// keys.
pub fn check(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Findings {
    let mut findings = Findings::default();
    check_servers(request, paths, policy, tenancy, &mut findings);
    let team = request.team.object_permission.as_ref();
    if let Some(permission) = team {
        check_permission(
            request,
            permission,
            &format!("{}.objectPermission", paths.team),
            policy,
            tenancy,
            &mut findings,
        );
    }
    for (i, key) in request.keys.iter().enumerate() {
        let Some(permission) = &key.object_permission else {
            continue;
        };
        let at = format!("{}[{i}].objectPermission", paths.keys);
        check_permission(request, permission, &at, policy, tenancy, &mut findings);
        // LiteLLM refuses a team's key a server its team does not grant.
        let granted: Vec<&String> = team
            .and_then(|t| t.mcp_servers.as_ref())
            .into_iter()
            .flatten()
            .collect();
        for (j, server) in permission.mcp_servers.iter().flatten().enumerate() {
            if !granted.contains(&server) {
                findings.warnings.push(Problem::new(
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
    findings
}

fn check_servers(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
    findings: &mut Findings,
) {
    if !request.mcp_servers.is_empty() && policy.allow_mcp_servers == Some(false) {
        findings.fatal.push(Problem::new(
            paths.mcp_servers.clone(),
            "policy does not allow XRs to add MCP servers (input.policy.allowMcpServers)",
        ));
    }
    let mut names = BTreeSet::new();
    let mut server_names = BTreeSet::new();
    let prefix = tenancy::server_name_prefix(tenancy.namespace);
    for (i, server) in request.mcp_servers.iter().enumerate() {
        let field = |name: &str| format!("{}[{i}].{name}", paths.mcp_servers);
        if !is_dns_label(&server.name) {
            findings.fatal.push(Problem::new(
                field("name"),
                format!(
                    "{:?} must be a DNS label (lowercase letters, digits and '-', at most 63)",
                    server.name
                ),
            ));
        }
        if !names.insert(server.name.as_str()) {
            findings.fatal.push(Problem::new(
                field("name"),
                format!("duplicate MCP server name {:?}", server.name),
            ));
        }
        if server.transport == Some(McpTransport::Stdio) {
            findings.fatal.push(Problem::new(
                field("transport"),
                "stdio is not rendered from an XR: the proxy would run a command on its own \
                 host, with its own credentials; use http or sse",
            ));
        }
        match &server.url {
            None => findings.fatal.push(Problem::new(
                field("url"),
                "is required: the http(s) URL where the proxy reaches the server",
            )),
            Some(url) => match url_host(url) {
                None => findings.fatal.push(Problem::new(
                    field("url"),
                    format!("{url:?} must be an http:// or https:// URL with a host"),
                )),
                Some(_) if url.len() > MAX_URL => findings.fatal.push(Problem::new(
                    field("url"),
                    format!("must have at most {MAX_URL} characters"),
                )),
                Some(host) => {
                    if let Some(allowed) = &policy.allowed_mcp_hosts {
                        if !host_allowed(allowed, &host) {
                            findings.fatal.push(Problem::new(
                                field("url"),
                                format!(
                                    "host {host:?} is not allowed by policy (allowed: {}): the \
                                     proxy calls it from inside its own network",
                                    allowed.join(", ")
                                ),
                            ));
                        }
                    }
                }
            },
        }
        if let Some(name) = &server.server_name {
            let valid = !name.is_empty()
                && name.len() <= MAX_SERVER_NAME
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
            if !valid {
                findings.fatal.push(Problem::new(
                    field("serverName"),
                    format!(
                        "{name:?} must have 1 to {MAX_SERVER_NAME} letters, digits, '_' or '.' \
                         (LiteLLM prefixes the server's tools with it and a '-')"
                    ),
                ));
            } else if tenancy.shared_instance && !name.starts_with(&prefix) {
                findings.fatal.push(Problem::new(
                    field("serverName"),
                    format!(
                        "{name:?} must start with {prefix:?} {SHARED} (server names are unique \
                         in the proxy); leave it unset for the default"
                    ),
                ));
            } else if !server_names.insert(name.to_ascii_lowercase()) {
                findings.fatal.push(Problem::new(
                    field("serverName"),
                    format!(
                        "duplicate server name {name:?}: LiteLLM keeps them unique, ignoring case"
                    ),
                ));
            }
        }
        let authenticates = server.auth_type.is_some_and(|t| t != McpAuthType::None);
        match (&server.auth_secret_ref, authenticates) {
            (None, true) => findings.fatal.push(Problem::new(
                field("authSecretRef"),
                format!(
                    "is required with authType {}: the Secret key holding its value",
                    server
                        .auth_type
                        .map(McpAuthType::as_str)
                        .unwrap_or_default()
                ),
            )),
            (Some(_), false) => findings.fatal.push(Problem::new(
                field("authSecretRef"),
                "needs an authType other than none (api_key, bearer_token, basic, \
                 authorization or token)",
            )),
            (Some(secret), true) => {
                if let Some(p) = tenancy::admitted(
                    field("authSecretRef"),
                    "Secret",
                    &secret.name,
                    "allowedSecrets",
                    &policy.allowed_secrets,
                    tenancy,
                ) {
                    findings.fatal.push(p);
                }
            }
            (None, false) => {}
        }
        for (j, group) in server.access_groups.iter().flatten().enumerate() {
            let at = format!("{}[{j}]", field("accessGroups"));
            let own = tenancy::group_prefix(tenancy.namespace);
            if group.is_empty() {
                findings.fatal.push(Problem::new(at, "must not be empty"));
            } else if tenancy.shared_instance && !group.starts_with(&own) {
                findings.fatal.push(Problem::new(
                    at,
                    format!(
                        "{group:?} must start with {own:?} {SHARED}: a group of another name \
                         would offer this server to other namespaces' teams and keys"
                    ),
                ));
            }
        }
        for (j, tool) in server.allowed_tools.iter().flatten().enumerate() {
            if tool.is_empty() {
                findings.fatal.push(Problem::new(
                    format!("{}[{j}]", field("allowedTools")),
                    "must not be empty",
                ));
            }
        }
    }
}

fn check_permission(
    request: &XrRequest,
    permission: &PermissionRequest,
    at: &str,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
    findings: &mut Findings,
) {
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
