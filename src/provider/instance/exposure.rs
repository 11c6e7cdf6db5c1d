//! Exposure of a provisioned proxy: an Ingress and/or a Gateway API
//! HTTPRoute per exposed component (`spec.workload.exposure`, per role
//! `spec.workload.<role>.exposure`), and the annotations of its Services
//! (`spec.service.annotations`).
//!
//! The pure part validates the spec and builds the objects; `apply`
//! writes them, but only where the cluster serves their API (discovered
//! through the group version's resource list, never assumed) and only
//! the ones the instance owns, as every other workload object. What is
//! not served is reported, not retried as an error. `prune` deletes the
//! owned ones no longer asked for (a list of an API that is not served
//! holds nothing); `apply::teardown` deletes them with the rest.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec, IngressTLS, ServiceBackendPort,
};
use kube::ResourceExt;

use crate::api::instance::{Exposure, LiteLLMInstance, Topology};

use super::build::{self, Component};
use super::Error;

pub use gateway::{HTTPRoute, HTTPRouteSpec};

/// The Gateway API's HTTPRoute, only the fields the provider writes (no
/// Rust type exists in k8s-openapi; this is not one of the package's CRDs).
mod gateway {
    use kube::CustomResource;
    use serde::{Deserialize, Serialize};

    /// `gateway.networking.k8s.io/v1` HTTPRoute.
    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[kube(
        group = "gateway.networking.k8s.io",
        version = "v1",
        kind = "HTTPRoute",
        plural = "httproutes",
        namespaced,
        schema = "disabled"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct HTTPRouteSpec {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub parent_refs: Vec<ParentReference>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub hostnames: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub rules: Vec<HTTPRouteRule>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[serde(rename_all = "camelCase")]
    pub struct ParentReference {
        pub name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub namespace: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub section_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub port: Option<i32>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[serde(rename_all = "camelCase")]
    pub struct HTTPRouteRule {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub matches: Vec<HTTPRouteMatch>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub backend_refs: Vec<HTTPBackendRef>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[serde(rename_all = "camelCase")]
    pub struct HTTPRouteMatch {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub path: Option<HTTPPathMatch>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[serde(rename_all = "camelCase")]
    pub struct HTTPPathMatch {
        #[serde(rename = "type")]
        pub type_: String,
        pub value: String,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
    #[serde(rename_all = "camelCase")]
    pub struct HTTPBackendRef {
        pub name: String,
        pub port: i32,
    }
}

/// An API an exposure is written through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Api {
    /// `networking.k8s.io/v1` `ingresses`.
    Ingress,
    /// `gateway.networking.k8s.io/v1` `httproutes`.
    HttpRoute,
}

impl Api {
    pub const ALL: [Api; 2] = [Api::Ingress, Api::HttpRoute];

    /// The group version discovery is asked about.
    pub fn group_version(self) -> &'static str {
        match self {
            Api::Ingress => "networking.k8s.io/v1",
            Api::HttpRoute => "gateway.networking.k8s.io/v1",
        }
    }

    /// The resource (plural) that must be listed in the group version.
    pub fn resource(self) -> &'static str {
        match self {
            Api::Ingress => "ingresses",
            Api::HttpRoute => "httproutes",
        }
    }

    /// The kind, as conflicts and conditions name it.
    pub fn kind(self) -> &'static str {
        match self {
            Api::Ingress => "Ingress",
            Api::HttpRoute => "HTTPRoute",
        }
    }

    /// The field of an exposure that asks for it.
    fn field(self) -> &'static str {
        match self {
            Api::Ingress => "ingress",
            Api::HttpRoute => "httpRoute",
        }
    }
}

/// The `spec.` path of `component`'s exposure.
pub fn exposure_path(component: Component) -> &'static str {
    match component {
        Component::Proxy => "spec.workload.exposure",
        Component::Gateway => "spec.workload.gateway.exposure",
        Component::Backend => "spec.workload.backend.exposure",
        Component::Ui => "spec.workload.ui.exposure",
    }
}

/// The exposure of `component` and the path of the field it comes from:
/// the single proxy's is `workload.exposure`; the gateway's its role's,
/// else `workload.exposure`; the backend's and the UI's their roles' only.
pub fn exposure(instance: &LiteLLMInstance, component: Component) -> Option<(&Exposure, &str)> {
    let workload = instance.spec.workload.as_ref()?;
    let role = match component {
        Component::Proxy => None,
        Component::Gateway => workload.gateway.as_ref(),
        Component::Backend => workload.backend.as_ref(),
        Component::Ui => workload.ui.as_ref(),
    };
    if let Some(exposure) = role.and_then(|r| r.exposure.as_ref()) {
        return Some((exposure, exposure_path(component)));
    }
    match component {
        Component::Proxy | Component::Gateway => workload
            .exposure
            .as_ref()
            .map(|e| (e, exposure_path(Component::Proxy))),
        _ => None,
    }
}

/// What the instance asks to expose: each component of its topology with
/// the APIs its exposure names, and the field path of each.
pub fn wanted(instance: &LiteLLMInstance) -> Vec<(Component, Api, String)> {
    let mut wanted = Vec::new();
    for component in build::components(instance) {
        let Some((exposure, path)) = exposure(instance, component) else {
            continue;
        };
        for api in Api::ALL {
            let asked = match api {
                Api::Ingress => exposure.ingress.is_some(),
                Api::HttpRoute => exposure.http_route.is_some(),
            };
            if asked {
                wanted.push((component, api, format!("{path}.{}", api.field())));
            }
        }
    }
    wanted
}

/// The names of the objects of `api` the instance asks for (whether or not
/// the API is served): what `prune` keeps.
pub fn wanted_names(instance: &LiteLLMInstance, api: Api) -> Vec<String> {
    wanted(instance)
        .into_iter()
        .filter(|(_, a, _)| *a == api)
        .map(|(component, _, _)| build::names::component(instance, component))
        .collect()
}

/// Annotation keys the provider keeps for itself.
const PROVIDER_ANNOTATION_PREFIX: &str = "litellm.crossplane.io/";

/// Why the exposure and the Service annotations cannot be used, each
/// naming its field.
pub fn validate(instance: &LiteLLMInstance) -> Vec<String> {
    let mut problems = Vec::new();
    let annotations =
        |problems: &mut Vec<String>, path: &str, map: &Option<BTreeMap<String, String>>| {
            for key in map.iter().flatten().map(|(k, _)| k) {
                if key.starts_with(PROVIDER_ANNOTATION_PREFIX) {
                    problems.push(format!(
                        "{path} {key:?}: litellm.crossplane.io/ annotations are the provider's"
                    ));
                } else if !valid_qualified_name(key) {
                    problems.push(format!(
                        "{path} {key:?} is not a valid annotation key (an optional DNS prefix \
                         and /, then up to 63 letters, digits, -, _ and .)"
                    ));
                }
            }
        };
    if let Some(service) = &instance.spec.service {
        annotations(
            &mut problems,
            "spec.service.annotations",
            &service.annotations,
        );
    }
    let Some(workload) = &instance.spec.workload else {
        return problems;
    };
    let split = build::topology(instance) == Topology::Split;
    let mut exposures = vec![("spec.workload.exposure", workload.exposure.as_ref())];
    for (field, role) in [
        ("gateway", &workload.gateway),
        ("backend", &workload.backend),
        ("ui", &workload.ui),
    ] {
        let Some(exposure) = role.as_ref().and_then(|r| r.exposure.as_ref()) else {
            continue;
        };
        if !split {
            problems.push(format!(
                "spec.workload.{field}.exposure needs spec.workload.topology: split; the single \
                 proxy is exposed by spec.workload.exposure"
            ));
        }
        exposures.push((
            match field {
                "gateway" => "spec.workload.gateway.exposure",
                "backend" => "spec.workload.backend.exposure",
                _ => "spec.workload.ui.exposure",
            },
            Some(exposure),
        ));
    }
    for (path, exposure) in exposures {
        let Some(exposure) = exposure else { continue };
        if exposure.ingress.is_none() && exposure.http_route.is_none() {
            problems.push(format!("{path} sets neither ingress nor httpRoute"));
        }
        if let Some(ingress) = &exposure.ingress {
            let path = format!("{path}.ingress");
            if !valid_host(&ingress.host) {
                problems.push(format!(
                    "{path}.host {:?} is not a DNS name (lowercase labels of letters, digits \
                     and -, optionally *. for every name directly below a domain; no IP \
                     address)",
                    ingress.host
                ));
            }
            if let Some(class) = &ingress.class_name {
                if !valid_subdomain(class) {
                    problems.push(format!(
                        "{path}.className {class:?} is not a valid object name"
                    ));
                }
            }
            if let Some(p) = &ingress.path {
                if !p.starts_with('/') || p.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    problems.push(format!(
                        "{path}.path {p:?} must start with / and hold no white space"
                    ));
                }
            }
            if let Some(tls) = &ingress.tls {
                if !valid_subdomain(&tls.secret_name) {
                    problems.push(format!(
                        "{path}.tls.secretName {:?} is not the name of a Secret of the \
                         instance's namespace",
                        tls.secret_name
                    ));
                }
            }
            annotations(
                &mut problems,
                &format!("{path}.annotations"),
                &ingress.annotations,
            );
        }
        if let Some(route) = &exposure.http_route {
            let path = format!("{path}.httpRoute");
            if route.parent_refs.is_empty() {
                problems.push(format!("{path}.parentRefs needs at least one Gateway"));
            }
            for (i, parent) in route.parent_refs.iter().enumerate() {
                if !valid_subdomain(&parent.name) {
                    problems.push(format!(
                        "{path}.parentRefs[{i}].name {:?} is not a valid object name",
                        parent.name
                    ));
                }
                if let Some(namespace) = &parent.namespace {
                    if !valid_label(namespace) {
                        problems.push(format!(
                            "{path}.parentRefs[{i}].namespace {namespace:?} is not a valid \
                             namespace name"
                        ));
                    }
                }
                if let Some(section) = &parent.section_name {
                    if !valid_subdomain(section) {
                        problems.push(format!(
                            "{path}.parentRefs[{i}].sectionName {section:?} is not a valid \
                             listener name"
                        ));
                    }
                }
                if let Some(port) = parent.port {
                    if !(1..=65535).contains(&port) {
                        problems.push(format!(
                            "{path}.parentRefs[{i}].port {port} is not a port (1 to 65535)"
                        ));
                    }
                }
            }
            for (i, host) in route.hostnames.iter().flatten().enumerate() {
                if !valid_host(host) {
                    problems.push(format!(
                        "{path}.hostnames[{i}] {host:?} is not a DNS name (lowercase labels of \
                         letters, digits and -, optionally *. for every name below a domain; \
                         no IP address)"
                    ));
                }
            }
            annotations(
                &mut problems,
                &format!("{path}.annotations"),
                &route.annotations,
            );
        }
    }
    problems
}

/// A DNS-1123 label: lowercase letters, digits and `-`, at most 63, not
/// starting or ending with `-`.
fn valid_label(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 63
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-')
}

/// A DNS-1123 subdomain: labels joined by `.`, at most 253.
fn valid_subdomain(value: &str) -> bool {
    !value.is_empty() && value.len() <= 253 && value.split('.').all(valid_label)
}

/// A host name as Ingress (`spec.rules[].host`) and HTTPRoute
/// (`spec.hostnames`) take it: a DNS subdomain, optionally prefixed by
/// `*.` (a wildcard for one label), never an IP address.
pub fn valid_host(host: &str) -> bool {
    let name = host.strip_prefix("*.").unwrap_or(host);
    valid_subdomain(name)
        && name.parse::<std::net::Ipv4Addr>().is_err()
        && !name
            .split('.')
            .all(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

/// A qualified name as annotation keys are: an optional DNS subdomain
/// prefix and `/`, then a name of up to 63 alphanumerics, `-`, `_` and
/// `.`, starting and ending alphanumeric.
fn valid_qualified_name(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    prefix.is_none_or(valid_subdomain)
        && !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric()
}

/// Annotations of every Service of the instance.
pub fn service_annotations(instance: &LiteLLMInstance) -> Option<BTreeMap<String, String>> {
    instance
        .spec
        .service
        .as_ref()?
        .annotations
        .clone()
        .filter(|a| !a.is_empty())
}

/// Metadata of an exposure object: named, labelled and owned as the
/// component's Service.
fn metadata(
    instance: &LiteLLMInstance,
    component: Component,
    annotations: &Option<BTreeMap<String, String>>,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
    let mut meta = build::component_service(instance, component).metadata;
    meta.annotations = annotations.clone().filter(|a| !a.is_empty());
    meta
}

/// The Ingress of `component`, when its exposure asks for one: one rule,
/// `host` and `path` (prefix, `/` by default) to the component's Service
/// and port; TLS for `host` with `tls.secretName`.
pub fn ingress(instance: &LiteLLMInstance, component: Component) -> Option<Ingress> {
    let (exposure, _) = exposure(instance, component)?;
    let spec = exposure.ingress.as_ref()?;
    let service = build::names::component(instance, component);
    Some(Ingress {
        metadata: metadata(instance, component, &spec.annotations),
        spec: Some(IngressSpec {
            ingress_class_name: spec.class_name.clone(),
            rules: Some(vec![IngressRule {
                host: Some(spec.host.clone()),
                http: Some(HTTPIngressRuleValue {
                    paths: vec![HTTPIngressPath {
                        path: Some(spec.path.clone().unwrap_or_else(|| "/".to_string())),
                        path_type: "Prefix".to_string(),
                        backend: IngressBackend {
                            service: Some(IngressServiceBackend {
                                name: service,
                                port: Some(ServiceBackendPort {
                                    number: Some(build::service_port(instance, component)),
                                    ..ServiceBackendPort::default()
                                }),
                            }),
                            ..IngressBackend::default()
                        },
                    }],
                }),
            }]),
            tls: spec.tls.as_ref().map(|tls| {
                vec![IngressTLS {
                    hosts: Some(vec![spec.host.clone()]),
                    secret_name: Some(tls.secret_name.clone()),
                }]
            }),
            ..IngressSpec::default()
        }),
        ..Ingress::default()
    })
}

/// The HTTPRoute of `component`, when its exposure asks for one: attached
/// to `parentRefs`, for `hostnames`, every path (prefix `/`) to the
/// component's Service and port.
pub fn http_route(instance: &LiteLLMInstance, component: Component) -> Option<HTTPRoute> {
    let (exposure, _) = exposure(instance, component)?;
    let spec = exposure.http_route.as_ref()?;
    let mut route = HTTPRoute::new(
        &build::names::component(instance, component),
        HTTPRouteSpec {
            parent_refs: spec
                .parent_refs
                .iter()
                .map(|p| gateway::ParentReference {
                    name: p.name.clone(),
                    namespace: p.namespace.clone(),
                    section_name: p.section_name.clone(),
                    port: p.port,
                })
                .collect(),
            hostnames: spec.hostnames.clone().unwrap_or_default(),
            rules: vec![gateway::HTTPRouteRule {
                matches: vec![gateway::HTTPRouteMatch {
                    path: Some(gateway::HTTPPathMatch {
                        type_: "PathPrefix".to_string(),
                        value: "/".to_string(),
                    }),
                }],
                backend_refs: vec![gateway::HTTPBackendRef {
                    name: build::names::component(instance, component),
                    port: build::service_port(instance, component),
                }],
            }],
        },
    );
    route.metadata = metadata(instance, component, &spec.annotations);
    Some(route)
}

/// What the apply step did with the exposure the instance asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposureObservation {
    /// Objects written (or found as asked), as `Kind name`.
    pub written: Vec<String>,
    /// Exposures not created because the cluster does not serve their API:
    /// `(field path, Kind name, group version/resource)`.
    pub not_served: Vec<(String, String, String)>,
    /// Same-named objects the instance does not own, as `Kind name` (also
    /// among the workload's conflicts).
    pub not_owned: Vec<String>,
    /// Objects the API server (or an admission webhook or policy) refused
    /// to write: `(field path, Kind name, its message)`.
    pub refused: Vec<(String, String, String)>,
}

impl ExposureObservation {
    /// Whether the instance asks for any exposure.
    pub fn is_asked(&self) -> bool {
        !(self.written.is_empty()
            && self.not_served.is_empty()
            && self.not_owned.is_empty()
            && self.refused.is_empty())
    }
}

/// Writes the Ingresses and HTTPRoutes the instance asks for, where their
/// API is served, through `applier` (owned ones only), and reports them.
pub(super) async fn apply(
    applier: &mut super::apply::Applier<'_>,
    instance: &LiteLLMInstance,
) -> Result<ExposureObservation, Error> {
    let mut observed = ExposureObservation::default();
    let wanted = wanted(instance);
    let mut served_apis = BTreeMap::new();
    for (component, api, path) in wanted {
        let name = build::names::component(instance, component);
        let served = match served_apis.get(&api) {
            Some(&served) => served,
            None => {
                let served =
                    super::apply::served(applier.client(), api.group_version(), api.resource())
                        .await?;
                served_apis.insert(api, served);
                served
            }
        };
        let kind_name = format!("{} {name}", api.kind());
        if !served {
            observed.not_served.push((
                path,
                kind_name,
                format!("{} {}", api.group_version(), api.resource()),
            ));
            continue;
        }
        let written = match api {
            Api::Ingress => applier
                .ensure(
                    &name,
                    super::apply::Policy::Reconcile,
                    |existing: Option<&Ingress>| {
                        let mut desired = ingress(instance, component).expect("asked for");
                        keep_defaulted_class(&mut desired, existing);
                        desired
                    },
                )
                .await
                .map(|written| written.is_some()),
            Api::HttpRoute => applier
                .ensure(&name, super::apply::Policy::Reconcile, |_| {
                    http_route(instance, component).expect("asked for")
                })
                .await
                .map(|written| written.is_some()),
        };
        match written {
            Ok(true) => observed.written.push(kind_name),
            Ok(false) => observed.not_owned.push(kind_name),
            // The API server, or an admission webhook or policy of the
            // cluster's (a host another Ingress holds, a host the platform
            // does not allow), refused the object: reported, and the rest
            // of the instance reconciled as usual.
            Err(Error::Workload {
                source: kube::Error::Api(status),
                ..
            }) if (400..500).contains(&status.code) && status.code != 409 => {
                observed.refused.push((path, kind_name, status.message))
            }
            Err(err) => return Err(err),
        }
    }
    Ok(observed)
}

/// Without `className`, the cluster's default IngressClass is filled in
/// when the Ingress is created (the `DefaultIngressClass` admission
/// plugin), and only then: a replace without it would take the class away
/// on every round. The class found is kept until `className` says
/// otherwise.
fn keep_defaulted_class(desired: &mut Ingress, existing: Option<&Ingress>) {
    let Some(spec) = desired.spec.as_mut() else {
        return;
    };
    if spec.ingress_class_name.is_none() {
        spec.ingress_class_name = existing
            .and_then(|e| e.spec.as_ref())
            .and_then(|s| s.ingress_class_name.clone());
    }
}

/// Deletes the owned Ingresses and HTTPRoutes no longer asked for (all of
/// them with `all`, at teardown), into `deleted`.
pub(super) async fn prune(
    client: &kube::Client,
    namespace: &str,
    instance: &LiteLLMInstance,
    all: bool,
    deleted: &mut Vec<String>,
) -> Result<(), Error> {
    let Some(uid) = instance.uid() else {
        return Ok(());
    };
    let keep = |api| match all {
        true => Vec::new(),
        false => wanted_names(instance, api),
    };
    let ingresses = keep(Api::Ingress);
    super::apply::DeleteScope::new(client, namespace, instance, &uid, &ingresses)
        .delete_owned::<Ingress>(deleted)
        .await?;
    let routes = keep(Api::HttpRoute);
    super::apply::DeleteScope::new(client, namespace, instance, &uid, &routes)
        .delete_owned::<HTTPRoute>(deleted)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn instance(spec: Value) -> LiteLLMInstance {
        serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": "gw", "namespace": "llm", "uid": "u-1"},
            "spec": spec,
        }))
        .unwrap()
    }

    fn ingress_json(instance: &LiteLLMInstance, component: Component) -> Value {
        serde_json::to_value(ingress(instance, component).expect("an Ingress")).unwrap()
    }

    fn route_json(instance: &LiteLLMInstance, component: Component) -> Value {
        serde_json::to_value(http_route(instance, component).expect("an HTTPRoute")).unwrap()
    }

    #[test]
    fn a_class_the_cluster_defaulted_is_kept_and_one_asked_for_wins() {
        let with_class = |class: Option<&str>| {
            let mut ingress = ingress(
                &instance(
                    json!({"workload": {"exposure": {"ingress": {"host": "llm.example.com"}}}}),
                ),
                Component::Proxy,
            )
            .unwrap();
            ingress.spec.as_mut().unwrap().ingress_class_name = class.map(str::to_string);
            ingress
        };
        let existing = with_class(Some("nginx"));
        let mut desired = with_class(None);
        keep_defaulted_class(&mut desired, Some(&existing));
        assert_eq!(desired, existing, "the defaulted class stays");
        let mut desired = with_class(Some("alb"));
        keep_defaulted_class(&mut desired, Some(&existing));
        assert_eq!(
            desired.spec.unwrap().ingress_class_name.as_deref(),
            Some("alb")
        );
        let mut desired = with_class(None);
        keep_defaulted_class(&mut desired, None);
        assert_eq!(desired.spec.unwrap().ingress_class_name, None);
    }

    #[test]
    fn nothing_is_exposed_unless_asked() {
        for spec in [
            json!({}),
            json!({"workload": {"replicas": 2}}),
            json!({"workload": {"topology": "split", "backend": {"replicas": 1}}}),
        ] {
            let i = instance(spec);
            assert!(wanted(&i).is_empty());
            for c in build::components(&i) {
                assert!(ingress(&i, c).is_none() && http_route(&i, c).is_none());
            }
            assert!(validate(&i).is_empty());
            assert_eq!(service_annotations(&i), None);
        }
    }

    #[test]
    fn the_single_proxys_ingress_sends_the_host_to_its_service() {
        let i = instance(json!({
            "service": {"port": 8080},
            "workload": {"exposure": {"ingress": {
                "className": "nginx", "host": "llm.example.com",
                "tls": {"secretName": "llm-tls"},
                "annotations": {"cert-manager.io/cluster-issuer": "letsencrypt"},
            }}},
        }));
        assert!(validate(&i).is_empty(), "{:?}", validate(&i));
        let got = ingress_json(&i, Component::Proxy);
        assert_eq!(got["apiVersion"], "networking.k8s.io/v1");
        assert_eq!(got["metadata"]["name"], "gw");
        assert_eq!(got["metadata"]["namespace"], "llm");
        assert_eq!(
            got["metadata"]["labels"],
            json!({
                "app.kubernetes.io/name": "litellm",
                "app.kubernetes.io/instance": "gw",
                "app.kubernetes.io/managed-by": crate::provider::watch::cache::MANAGED_BY,
            })
        );
        assert_eq!(got["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(got["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(
            got["metadata"]["annotations"],
            json!({"cert-manager.io/cluster-issuer": "letsencrypt"})
        );
        assert_eq!(
            got["spec"],
            json!({
                "ingressClassName": "nginx",
                "rules": [{"host": "llm.example.com", "http": {"paths": [{
                    "path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "gw", "port": {"number": 8080}}},
                }]}}],
                "tls": [{"hosts": ["llm.example.com"], "secretName": "llm-tls"}],
            })
        );
        assert_eq!(
            wanted(&i),
            vec![(
                Component::Proxy,
                Api::Ingress,
                "spec.workload.exposure.ingress".to_string()
            )]
        );
        assert_eq!(wanted_names(&i, Api::Ingress), ["gw"]);
        assert!(wanted_names(&i, Api::HttpRoute).is_empty());
    }

    #[test]
    fn the_http_route_attaches_to_the_gateways_and_sends_every_path_to_the_service() {
        let i = instance(json!({"workload": {"exposure": {"httpRoute": {
            "parentRefs": [
                {"name": "public", "namespace": "gateways", "sectionName": "https"},
                {"name": "internal", "port": 8443},
            ],
            "hostnames": ["llm.example.com", "*.llm.example.com"],
            "annotations": {"example.com/team": "platform"},
        }}}}));
        assert!(validate(&i).is_empty(), "{:?}", validate(&i));
        let got = route_json(&i, Component::Proxy);
        assert_eq!(got["apiVersion"], "gateway.networking.k8s.io/v1");
        assert_eq!(got["kind"], "HTTPRoute");
        assert_eq!(got["metadata"]["name"], "gw");
        assert_eq!(got["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(
            got["metadata"]["annotations"],
            json!({"example.com/team": "platform"})
        );
        assert_eq!(
            got["spec"],
            json!({
                "parentRefs": [
                    {"name": "public", "namespace": "gateways", "sectionName": "https"},
                    {"name": "internal", "port": 8443},
                ],
                "hostnames": ["llm.example.com", "*.llm.example.com"],
                "rules": [{
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": "gw", "port": 4000}],
                }],
            })
        );
        assert!(ingress(&i, Component::Proxy).is_none());
    }

    #[test]
    fn split_exposes_the_gateway_by_the_workloads_exposure_and_each_role_by_its_own() {
        let exposure = |host: &str| json!({"ingress": {"host": host}});
        let i = instance(json!({"workload": {
            "topology": "split",
            "exposure": exposure("llm.example.com"),
            "backend": {"exposure": exposure("admin.example.com")},
        }}));
        assert!(validate(&i).is_empty(), "{:?}", validate(&i));
        let gateway = ingress_json(&i, Component::Gateway);
        assert_eq!(gateway["metadata"]["name"], "gw-gateway");
        assert_eq!(
            gateway["metadata"]["labels"]["app.kubernetes.io/component"],
            "gateway"
        );
        let rule = &gateway["spec"]["rules"][0];
        assert_eq!(rule["host"], "llm.example.com");
        assert_eq!(
            rule["http"]["paths"][0]["backend"]["service"],
            json!({"name": "gw-gateway", "port": {"number": 4000}})
        );
        let backend = ingress_json(&i, Component::Backend);
        assert_eq!(backend["metadata"]["name"], "gw-backend");
        assert_eq!(
            backend["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"],
            json!({"name": "gw-backend", "port": {"number": 4001}})
        );
        assert!(ingress(&i, Component::Ui).is_none(), "the UI is not asked");
        assert_eq!(
            wanted(&i)
                .into_iter()
                .map(|(_, _, path)| path)
                .collect::<Vec<_>>(),
            [
                "spec.workload.exposure.ingress",
                "spec.workload.backend.exposure.ingress"
            ]
        );

        // The gateway's own replaces the workload's whole.
        let i = instance(json!({"workload": {
            "topology": "split",
            "exposure": exposure("llm.example.com"),
            "gateway": {"exposure": {"httpRoute": {"parentRefs": [{"name": "public"}]}}},
            "ui": {"exposure": {"ingress": {"host": "ui.example.com", "path": "/ui"}}},
        }}));
        assert!(validate(&i).is_empty(), "{:?}", validate(&i));
        assert!(ingress(&i, Component::Gateway).is_none());
        let route = route_json(&i, Component::Gateway);
        assert_eq!(
            route["spec"]["rules"][0]["backendRefs"],
            json!([{"name": "gw-gateway", "port": 4000}])
        );
        let ui = ingress_json(&i, Component::Ui);
        assert_eq!(ui["spec"]["rules"][0]["http"]["paths"][0]["path"], "/ui");
        assert_eq!(
            ui["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"],
            json!({"number": 3000})
        );
        assert_eq!(wanted_names(&i, Api::HttpRoute), ["gw-gateway"]);
        assert_eq!(wanted_names(&i, Api::Ingress), ["gw-ui"]);
    }

    #[test]
    fn refusals_name_their_field() {
        let cases = [
            (
                json!({"workload": {"gateway": {"exposure": {"ingress": {"host": "a.example.com"}}}}}),
                "spec.workload.gateway.exposure needs spec.workload.topology: split",
            ),
            (
                json!({"workload": {"exposure": {}}}),
                "spec.workload.exposure sets neither ingress nor httpRoute",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "10.0.0.1"}}}}),
                "spec.workload.exposure.ingress.host \"10.0.0.1\" is not a DNS name",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "LLM.example.com"}}}}),
                "spec.workload.exposure.ingress.host \"LLM.example.com\"",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "a.*.example.com"}}}}),
                "spec.workload.exposure.ingress.host \"a.*.example.com\"",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "a.example.com", "path": "api"}}}}),
                "spec.workload.exposure.ingress.path \"api\" must start with /",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "a.example.com", "tls": {"secretName": "other/tls"}}}}}),
                "spec.workload.exposure.ingress.tls.secretName \"other/tls\" is not the name of a Secret of the instance's namespace",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "a.example.com", "className": "Nginx"}}}}),
                "spec.workload.exposure.ingress.className \"Nginx\"",
            ),
            (
                json!({"workload": {"exposure": {"ingress": {"host": "a.example.com", "annotations": {"litellm.crossplane.io/x": "1"}}}}}),
                "spec.workload.exposure.ingress.annotations \"litellm.crossplane.io/x\": litellm.crossplane.io/ annotations are the provider's",
            ),
            (
                json!({"workload": {"exposure": {"httpRoute": {"parentRefs": []}}}}),
                "spec.workload.exposure.httpRoute.parentRefs needs at least one Gateway",
            ),
            (
                json!({"workload": {"exposure": {"httpRoute": {"parentRefs": [{"name": "gw", "namespace": "Gateways"}]}}}}),
                "spec.workload.exposure.httpRoute.parentRefs[0].namespace \"Gateways\"",
            ),
            (
                json!({"workload": {"exposure": {"httpRoute": {"parentRefs": [{"name": "gw"}], "hostnames": ["ok.example.com", "bad host"]}}}}),
                "spec.workload.exposure.httpRoute.hostnames[1] \"bad host\" is not a DNS name",
            ),
            (
                json!({"workload": {"topology": "split", "ui": {"exposure": {"httpRoute": {"parentRefs": [{"name": "gw", "port": 0}]}}}}}),
                "spec.workload.ui.exposure.httpRoute.parentRefs[0].port 0 is not a port",
            ),
            (
                json!({"service": {"annotations": {"litellm.crossplane.io/config-hash": "x"}}}),
                "spec.service.annotations \"litellm.crossplane.io/config-hash\": litellm.crossplane.io/ annotations are the provider's",
            ),
            (
                json!({"service": {"annotations": {"bad key!": "x"}}}),
                "spec.service.annotations \"bad key!\" is not a valid annotation key",
            ),
        ];
        for (spec, expected) in cases {
            let i = instance(spec.clone());
            let problems = validate(&i);
            assert!(
                problems.iter().any(|p| p.starts_with(expected)),
                "{spec}: {problems:?}"
            );
            // And the provisioning as a whole refuses it.
            assert!(
                build::validate(&i).iter().any(|p| p.starts_with(expected)),
                "{spec}"
            );
        }
    }

    #[test]
    fn hosts_are_dns_names_with_an_optional_wildcard_label() {
        for good in ["llm.example.com", "*.example.com", "a", "a-1.b2.c"] {
            assert!(valid_host(good), "{good}");
        }
        for bad in [
            "",
            "*",
            "*.",
            "-a.example.com",
            "a_b.example.com",
            "127.0.0.1",
            "1.2.3",
            "a..b",
            "a.example.com.",
            "exämple.com",
            "a.*.b",
            "**.a",
        ] {
            assert!(!valid_host(bad), "{bad}");
        }
        assert!(!valid_host(&format!("{}.com", "a".repeat(64))));
    }

    #[test]
    fn service_annotations_go_on_every_service_of_both_topologies() {
        let annotations = json!({"service.beta.kubernetes.io/aws-load-balancer-internal": "true"});
        let single = instance(json!({"service": {"annotations": annotations}}));
        assert!(validate(&single).is_empty());
        let service = build::component_service(&single, Component::Proxy);
        assert_eq!(
            serde_json::to_value(&service.metadata.annotations).unwrap(),
            annotations
        );
        let split = instance(json!({
            "service": {"annotations": annotations},
            "workload": {"topology": "split"},
        }));
        for c in Component::SPLIT {
            let service = build::component_service(&split, c);
            assert_eq!(
                serde_json::to_value(&service.metadata.annotations).unwrap(),
                annotations,
                "{c:?}"
            );
        }
        // An exposure object does not inherit them.
        let exposed = instance(json!({
            "service": {"annotations": annotations},
            "workload": {"exposure": {"ingress": {"host": "a.example.com"}}},
        }));
        assert!(ingress_json(&exposed, Component::Proxy)["metadata"]
            .get("annotations")
            .is_none());
        // None set: none written (not an empty map).
        let plain = instance(json!({"service": {"annotations": {}}}));
        assert_eq!(
            build::component_service(&plain, Component::Proxy)
                .metadata
                .annotations,
            None
        );
    }

    #[test]
    fn the_http_route_type_is_gateway_apis() {
        use kube::Resource;
        assert_eq!(HTTPRoute::api_version(&()), "gateway.networking.k8s.io/v1");
        assert_eq!(HTTPRoute::plural(&()), "httproutes");
        assert_eq!(HTTPRoute::kind(&()), "HTTPRoute");
    }

    #[test]
    fn the_observation_says_whether_anything_was_asked() {
        assert!(!ExposureObservation::default().is_asked());
        assert!(ExposureObservation {
            not_served: vec![("p".into(), "Ingress gw".into(), "x".into())],
            ..Default::default()
        }
        .is_asked());
    }
}
