//! An authorizing proxy between the provider and the real API server, which
//! has no RBAC: it authenticates nothing, maps each request to (verb, API
//! group, resource, subresource, namespace) as the API server's RBAC
//! authorizer does, and lets it through only when a rule grants it. The
//! rules are exactly what a provider of this package gets in a Crossplane
//! cluster: the ClusterRole Crossplane's RBAC manager binds to it (rendered
//! from the package's CRDs, see [`crossplane_system_rules`]) plus the `spec.controller.permissionRequests` of
//! `package/provider/crossplane.yaml`. Both are bound cluster-wide, so the
//! namespace only goes into messages.
//!
//! A denied request gets 403, as from the API server, and is recorded: the
//! support code's waits fail the test at once with the denials
//! ([`assert_no_denials`]), so a missing permission cannot hide behind a
//! retry. Each proxy also records which granted (verb, group, resource)
//! each request used, so a test can show that every requested permission
//! is used.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use axum::body::Body as AxumBody;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde::Deserialize;
use serde_json::Value;

/// Every request any proxy of this process denied, as text. The process is
/// a test binary: in `tests/integration/` a denial fails the waits of every
/// module's tests, not only of its own (a passing run has none).
static DENIALS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Fails the test if any provider request was denied so far.
pub fn assert_no_denials() {
    let denials = DENIALS.lock().unwrap_or_else(|p| p.into_inner());
    assert!(
        denials.is_empty(),
        "the provider made requests its Crossplane permissions do not allow:\n{}",
        denials.join("\n")
    );
}

/// One RBAC rule.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub verbs: Vec<String>,
    /// As in RBAC: when set, the rule grants only requests for these
    /// names (a get, update, patch or delete of one, a list or watch
    /// selecting one by `metadata.name`); never a create or an unnamed list.
    #[serde(default)]
    pub resource_names: Vec<String>,
}

impl Rule {
    fn grants(&self, attributes: &Attributes) -> bool {
        let any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
        let resource = match &attributes.subresource {
            Some(sub) => format!("{}/{sub}", attributes.resource),
            None => attributes.resource.clone(),
        };
        let resource_ok = self.resources.iter().any(|r| {
            r == "*"
                || *r == resource
                || attributes
                    .subresource
                    .as_ref()
                    .is_some_and(|sub| *r == format!("*/{sub}"))
        });
        let name_ok = self.resource_names.is_empty()
            || attributes
                .name
                .as_ref()
                .is_some_and(|name| self.resource_names.contains(name));
        any(&self.api_groups, &attributes.group)
            && resource_ok
            && any(&self.verbs, &attributes.verb)
            && name_ok
    }

    /// The (verb, group, resource) triples this rule names, wildcards as is.
    pub fn triples(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for group in &self.api_groups {
            for resource in &self.resources {
                for verb in &self.verbs {
                    out.push((verb.clone(), group.clone(), resource.clone()));
                }
            }
        }
        out
    }
}

/// A request as the RBAC authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attributes {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

/// What a request is, or `None` for a non-resource URL (discovery,
/// `/version`), which every authenticated client may read in Kubernetes
/// (`system:discovery`, `system:public-info-viewer`).
pub fn attributes(method: &str, path: &str, query: &str) -> Option<Attributes> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => (String::new(), rest),
        ["apis", group, _version, rest @ ..] => ((*group).to_owned(), rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => {
            (Some((*namespace).to_owned()), rest)
        }
        other => (None, other),
    };
    let (resource, name, subresource) = match rest {
        [resource] => ((*resource).to_owned(), None, None),
        [resource, name] => ((*resource).to_owned(), Some((*name).to_owned()), None),
        [resource, name, sub, ..] => (
            (*resource).to_owned(),
            Some((*name).to_owned()),
            Some((*sub).to_owned()),
        ),
        _ => return None,
    };
    let watch = query
        .split('&')
        .any(|pair| pair == "watch=true" || pair == "watch=1" || pair == "watch");
    let verb = match (method, name.is_some()) {
        ("GET" | "HEAD", _) if watch => "watch",
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return None,
    };
    // A list or watch of one object by name is authorized with its name,
    // as the API server's RBAC authorizer does.
    let name = name.or_else(|| {
        query.split('&').find_map(|pair| {
            let selector = pair.strip_prefix("fieldSelector=")?;
            let selector = url::form_urlencoded::parse(format!("s={selector}").as_bytes())
                .next()?
                .1
                .into_owned();
            let only = selector.strip_prefix("metadata.name=")?;
            (!only.contains(',')).then(|| only.to_owned())
        })
    });
    Some(Attributes {
        verb: verb.to_owned(),
        group,
        resource,
        subresource,
        namespace,
        name,
    })
}

fn parse_yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

fn rules_of(value: &Value, pointer: &str) -> Vec<Rule> {
    serde_json::from_value(
        value
            .pointer(pointer)
            .cloned()
            .unwrap_or(Value::Array(vec![])),
    )
    .expect("RBAC rules")
}

/// The rules of Crossplane's provider system role, rendered as Crossplane's
/// RBAC manager renders them for this package: first a rule for the
/// package's own CRDs (`package/provider/crds/`) and their `/status`, with
/// its verbs for a provider's system role, then the rules it adds to every
/// provider (kept in `tests/fixtures/crossplane-provider-system-role.yaml`,
/// which names its source).
pub fn crossplane_system_rules() -> Vec<Rule> {
    let mut groups = BTreeSet::new();
    let mut resources = BTreeSet::new();
    let crds = concat!(env!("CARGO_MANIFEST_DIR"), "/package/provider/crds");
    for entry in std::fs::read_dir(crds).expect("package/provider/crds") {
        let text = std::fs::read_to_string(entry.expect("a CRD file").path()).expect("a CRD");
        let crd = parse_yaml(&text);
        let plural = crd["spec"]["names"]["plural"].as_str().expect("a plural");
        groups.insert(crd["spec"]["group"].as_str().expect("a group").to_owned());
        resources.insert(format!("{plural}/status"));
        resources.insert(plural.to_owned());
    }
    let own = Rule {
        api_groups: groups.into_iter().collect(),
        resources: resources.into_iter().collect(),
        verbs: ["get", "list", "watch", "update", "patch", "create"]
            .map(String::from)
            .to_vec(),
        resource_names: Vec::new(),
    };
    let text = include_str!("../fixtures/crossplane-provider-system-role.yaml");
    let mut rules = vec![own];
    rules.extend(rules_of(&parse_yaml(text), "/rules"));
    rules
}

/// The `spec.controller.permissionRequests` of the provider package.
pub fn permission_requests() -> Vec<Rule> {
    let text = include_str!("../../package/provider/crossplane.yaml");
    rules_of(&parse_yaml(text), "/spec/controller/permissionRequests")
}

/// What a provider of this package may do in a Crossplane cluster.
pub fn provider_rules() -> Vec<Rule> {
    let mut rules = crossplane_system_rules();
    rules.extend(permission_requests());
    rules
}

/// Whether `rules` grant `attributes`.
pub fn allowed(rules: &[Rule], attributes: &Attributes) -> bool {
    rules.iter().any(|rule| rule.grants(attributes))
}

#[derive(Clone)]
struct Shared {
    upstream: kube::Client,
    rules: Arc<Vec<Rule>>,
    /// Granted requests, as (verb, group, resource[/subresource]).
    used: Arc<Mutex<BTreeSet<(String, String, String)>>>,
    /// This proxy's denials (also recorded in [`DENIALS`] unless `quiet`).
    denied: Arc<Mutex<Vec<String>>>,
    quiet: bool,
    /// Path prefixes answered 404, as by an API server that does not serve
    /// them (see [`AuthzProxy::hide`]).
    hidden: Arc<Mutex<Vec<String>>>,
}

/// A running proxy; it stops when dropped.
pub struct AuthzProxy {
    url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AuthzProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl AuthzProxy {
    /// Starts a proxy granting `rules` in front of the API server that
    /// `upstream` talks to. With `quiet`, denials are kept to this proxy
    /// (for tests of the proxy itself) instead of failing every wait.
    pub async fn start(upstream: kube::Client, rules: Vec<Rule>, quiet: bool) -> Self {
        let shared = Shared {
            upstream,
            rules: Arc::new(rules),
            used: Arc::default(),
            denied: Arc::default(),
            quiet,
            hidden: Arc::default(),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the authorizing proxy");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new().fallback(forward).with_state(shared.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, shared, task }
    }

    /// A proxy with the provider's Crossplane permissions in front of the
    /// harness' API server.
    pub async fn for_provider(upstream: kube::Client) -> Self {
        Self::start(upstream, provider_rules(), false).await
    }

    /// A client that goes through the proxy (and so has only its rules).
    pub fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config()).expect("a client of the proxy")
    }

    /// The configuration of [`AuthzProxy::client`], for a client built
    /// otherwise (with the provider's request counting).
    pub fn config(&self) -> kube::Config {
        kube::Config::new(self.url.parse().expect("proxy URL"))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// From now on, answers every request under `group_version` (`policy/v1`)
    /// with 404 as an API server that does not serve it does (discovery
    /// included), after authorizing it as usual.
    pub fn hide(&self, group_version: &str) {
        self.shared
            .hidden
            .lock()
            .unwrap()
            .push(format!("/apis/{group_version}"));
    }

    /// The (verb, group, resource) of every granted request so far.
    pub fn used(&self) -> BTreeSet<(String, String, String)> {
        self.shared.used.lock().unwrap().clone()
    }

    /// This proxy's denials so far.
    pub fn denied(&self) -> Vec<String> {
        self.shared.denied.lock().unwrap().clone()
    }
}

async fn forward(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or_default().to_owned();
    if let Some(attributes) = attributes(parts.method.as_str(), &path, &query) {
        if !allowed(&shared.rules, &attributes) {
            let text = format!(
                "denied: {} {}/{}{} in namespace {:?} ({} {path})",
                attributes.verb,
                if attributes.group.is_empty() {
                    "core"
                } else {
                    &attributes.group
                },
                attributes.resource,
                attributes
                    .subresource
                    .as_ref()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default(),
                attributes.namespace.as_deref().unwrap_or(""),
                parts.method,
            );
            eprintln!("authorizing proxy: {text}");
            shared.denied.lock().unwrap().push(text.clone());
            if !shared.quiet {
                DENIALS.lock().unwrap_or_else(|p| p.into_inner()).push(text);
            }
            let status = serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "Forbidden", "code": 403,
                "message": format!("forbidden by the test's Crossplane provider role: {} {}", attributes.verb, attributes.resource),
            });
            return (
                StatusCode::FORBIDDEN,
                [("content-type", "application/json")],
                status.to_string(),
            )
                .into_response();
        }
        let resource = match &attributes.subresource {
            Some(sub) => format!("{}/{sub}", attributes.resource),
            None => attributes.resource.clone(),
        };
        shared
            .used
            .lock()
            .unwrap()
            .insert((attributes.verb, attributes.group, resource));
    }
    let hidden = shared
        .hidden
        .lock()
        .unwrap()
        .iter()
        .any(|prefix| path == *prefix || path.starts_with(&format!("{prefix}/")));
    if hidden {
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "reason": "NotFound", "details": {}, "code": 404,
            "message": "the server could not find the requested resource",
        });
        return (
            StatusCode::NOT_FOUND,
            [("content-type", "application/json")],
            status.to_string(),
        )
            .into_response();
    }
    let bytes = match axum::body::to_bytes(body, 16 << 20).await {
        Ok(bytes) => bytes,
        Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or(path);
    let mut upstream = http::Request::builder()
        .method(parts.method.clone())
        .uri(path_and_query);
    for (name, value) in &parts.headers {
        // The upstream client authenticates itself and sets the host.
        if name != http::header::HOST && name != http::header::AUTHORIZATION {
            upstream = upstream.header(name, value);
        }
    }
    let upstream = upstream
        .body(kube::client::Body::from(bytes.to_vec()))
        .expect("a forwarded request");
    match shared.upstream.send(upstream).await {
        Ok(response) => {
            let (parts, body) = response.into_parts();
            Response::from_parts(parts, AxumBody::new(body))
        }
        Err(err) => (StatusCode::BAD_GATEWAY, err.to_string()).into_response(),
    }
}
