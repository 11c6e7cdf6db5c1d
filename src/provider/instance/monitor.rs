//! The proxy's Prometheus Operator `ServiceMonitor`
//! (`spec.workload.serviceMonitor`): what it is built from, without I/O,
//! and whether the cluster serves its API.
//!
//! One ServiceMonitor `<name>` per instance selects the instance's
//! Services that run the proxy (the single proxy; the split topology's
//! gateway and backend, not the UI) and scrapes `/metrics` on their `http`
//! port, where LiteLLM serves Prometheus metrics once `prometheus` is among
//! its callbacks. The Prometheus Operator's CRDs are optional in a cluster:
//! the API is discovered before anything is written (never assumed), and an
//! instance asking for a ServiceMonitor where none can exist says so in its
//! `APINotServed` condition instead of failing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kube::{CustomResource, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::common::interval_seconds;
use crate::api::instance::{LiteLLMInstance, ServiceMonitorSettings, Workload};

use super::build::{self, names, CONTAINER_PORT_NAME};

/// The group, version and resource a ServiceMonitor needs served.
pub const API: (&str, &str) = ("monitoring.coreos.com/v1", "servicemonitors");

/// What the cluster must serve for `spec.workload.serviceMonitor`, as the
/// `APINotServed` condition names it.
pub const NOT_SERVED: &str = "spec.workload.serviceMonitor needs monitoring.coreos.com/v1 \
     ServiceMonitors, which this cluster does not serve (install the Prometheus Operator's \
     CRDs); none was created";

/// The part of the Prometheus Operator's `ServiceMonitor` the provider
/// writes (a replace makes it the whole object).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "monitoring.coreos.com",
    version = "v1",
    kind = "ServiceMonitor",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct ServiceMonitorSpec {
    pub selector: LabelSelector,
    pub endpoints: Vec<Endpoint>,
}

/// One scraped port of the selected Services.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub port: String,
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_timeout: Option<String>,
}

/// The settings, when a ServiceMonitor is asked for (the section present
/// and not `enabled: false`).
pub fn asked(instance: &LiteLLMInstance) -> Option<&ServiceMonitorSettings> {
    let settings = instance
        .spec
        .workload
        .as_ref()
        .filter(|_| Workload::is_managed(instance.spec.workload.as_ref()))?
        .service_monitor
        .as_ref()?;
    settings.enabled.unwrap_or(true).then_some(settings)
}

/// What is wrong with `spec.workload.serviceMonitor`, naming the field.
pub fn problems(instance: &LiteLLMInstance) -> Vec<String> {
    let Some(settings) = asked(instance) else {
        return Vec::new();
    };
    let seconds = |value: &Option<String>| value.as_deref().map(interval_seconds);
    match (
        seconds(&settings.interval),
        seconds(&settings.scrape_timeout),
    ) {
        (Some(Some(interval)), Some(Some(timeout))) if timeout > interval => vec![format!(
            "spec.workload.serviceMonitor.scrapeTimeout {:?} is longer than its interval {:?}",
            settings.scrape_timeout.as_deref().unwrap_or_default(),
            settings.interval.as_deref().unwrap_or_default()
        )],
        _ => Vec::new(),
    }
}

/// The ServiceMonitor `instance` asks for, or `None`.
pub fn service_monitor(instance: &LiteLLMInstance) -> Option<ServiceMonitor> {
    let settings = asked(instance)?;
    let own = build::labels(instance);
    let mut labels = settings.labels.clone().unwrap_or_default();
    labels.extend(own.clone());
    let https = instance
        .spec
        .service
        .as_ref()
        .and_then(|s| s.https)
        .unwrap_or(false);
    let mut monitor = ServiceMonitor::new(
        &names::workload(instance),
        ServiceMonitorSpec {
            selector: LabelSelector {
                match_labels: Some(own),
                // The single proxy's Service has no component label, the
                // split's have theirs: every one of the instance's but the
                // UI's.
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "app.kubernetes.io/component".to_string(),
                    operator: "NotIn".to_string(),
                    values: Some(vec![build::Component::Ui.label().to_string()]),
                }]),
            },
            endpoints: vec![Endpoint {
                port: CONTAINER_PORT_NAME.to_string(),
                path: "/metrics".to_string(),
                scheme: https.then(|| "https".to_string()),
                interval: settings.interval.clone(),
                scrape_timeout: settings.scrape_timeout.clone(),
            }],
        },
    );
    let metadata = monitor.meta_mut();
    metadata.namespace = kube::ResourceExt::namespace(instance);
    metadata.labels = Some(labels);
    metadata.owner_references = instance.controller_owner_ref(&()).map(|owner| vec![owner]);
    Some(monitor)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn instance(spec: Value) -> LiteLLMInstance {
        let mut instance: LiteLLMInstance = serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": "gw", "namespace": "platform", "uid": "u-1"},
            "spec": spec,
        }))
        .unwrap();
        instance.metadata.uid = Some("u-1".into());
        instance
    }

    #[test]
    fn asked_only_by_the_section_of_a_provisioned_instance() {
        for (spec, wanted) in [
            (json!({}), false),
            (json!({"workload": {}}), false),
            (json!({"workload": {"serviceMonitor": {}}}), true),
            (
                json!({"workload": {"serviceMonitor": {"enabled": false}}}),
                false,
            ),
            (
                json!({"workload": {"managed": false, "endpoint": "http://x:4000", "serviceMonitor": {}}}),
                false,
            ),
        ] {
            assert_eq!(
                service_monitor(&instance(spec.clone())).is_some(),
                wanted,
                "{spec}"
            );
        }
    }

    #[test]
    fn selects_the_instances_proxy_services_and_scrapes_metrics() {
        let monitor = service_monitor(&instance(json!({"workload": {"serviceMonitor": {
            "interval": "30s", "scrapeTimeout": "10s",
            "labels": {"release": "kube-prometheus-stack", "app.kubernetes.io/instance": "other"},
        }}})))
        .unwrap();
        let value = serde_json::to_value(&monitor).unwrap();
        assert_eq!(value["apiVersion"], "monitoring.coreos.com/v1");
        assert_eq!(value["kind"], "ServiceMonitor");
        assert_eq!(value["metadata"]["name"], "gw");
        assert_eq!(value["metadata"]["namespace"], "platform");
        assert_eq!(
            value["metadata"]["labels"]["release"],
            "kube-prometheus-stack"
        );
        assert_eq!(
            value["metadata"]["labels"]["app.kubernetes.io/instance"], "gw",
            "the instance's own labels win (prune and teardown find it by them)"
        );
        assert_eq!(value["metadata"]["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(value["metadata"]["ownerReferences"][0]["controller"], true);
        assert_eq!(
            value["spec"],
            json!({
                "selector": {
                    "matchLabels": {
                        "app.kubernetes.io/name": "litellm",
                        "app.kubernetes.io/instance": "gw",
                        "app.kubernetes.io/managed-by": crate::provider::watch::cache::MANAGED_BY,
                    },
                    "matchExpressions": [
                        {"key": "app.kubernetes.io/component", "operator": "NotIn", "values": ["ui"]}
                    ],
                },
                "endpoints": [
                    {"port": "http", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s"}
                ],
            })
        );
        let https = service_monitor(&instance(json!({
            "service": {"https": true},
            "workload": {"serviceMonitor": {}},
        })))
        .unwrap();
        assert_eq!(https.spec.endpoints[0].scheme.as_deref(), Some("https"));
    }

    #[test]
    fn a_timeout_longer_than_the_interval_is_refused_naming_the_field() {
        let refused = problems(&instance(json!({"workload": {"serviceMonitor": {
            "interval": "30s", "scrapeTimeout": "1m",
        }}})));
        assert_eq!(
            refused,
            ["spec.workload.serviceMonitor.scrapeTimeout \"1m\" is longer than its interval \"30s\""]
        );
        for fine in [
            json!({"interval": "1m", "scrapeTimeout": "1m"}),
            json!({"scrapeTimeout": "1m"}),
            json!({"interval": "30s"}),
            json!({"enabled": false, "interval": "30s", "scrapeTimeout": "1m"}),
        ] {
            let spec = json!({"workload": {"serviceMonitor": fine}});
            assert!(problems(&instance(spec.clone())).is_empty(), "{spec}");
        }
    }
}
