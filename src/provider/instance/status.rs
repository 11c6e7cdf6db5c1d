//! The pure part: what to probe, and the status an instance should have
//! given what the probe found.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::api::common::{Condition, SecretKeySelector};
use crate::api::instance::{LiteLLMInstance, LiteLLMInstanceStatus, Workload, DEFAULT_PORT};
use crate::provider::conditions;

use super::InstanceOptions;

/// Condition types of a `LiteLLMInstance`.
pub mod condition_type {
    pub use crate::provider::conditions::READY;
    /// The database schema; for an attached proxy always owned by the proxy.
    pub const DATABASE_READY: &str = "DatabaseReady";
    /// Spec sections that do nothing because the workload is unmanaged.
    pub const WORKLOAD_UNMANAGED: &str = "WorkloadUnmanaged";
    /// Pods of a provisioned proxy. Never set here: an attached proxy's pods
    /// are not ours, and a clean report about pods we cannot see would lie.
    pub const PODS_HEALTHY: &str = "PodsHealthy";
}

/// Condition reasons of a `LiteLLMInstance`.
pub mod reason {
    /// `Ready=True`: `GET /health/liveliness` answered 200.
    pub const PROXY_REACHABLE: &str = "ProxyReachable";
    /// `Ready=False`: no 200 from `GET /health/liveliness`.
    pub const PROXY_NOT_REACHABLE: &str = "ProxyNotReachable";
    /// `Ready=False`: the instance asks to be provisioned, which this
    /// provider version does not do.
    pub const PROVISIONING_UNSUPPORTED: &str = "ProvisioningUnsupported";
    /// `DatabaseReady`: the attached proxy owns its schema.
    pub const WORKLOAD_UNMANAGED: &str = "WorkloadUnmanaged";
    /// `WorkloadUnmanaged`: config sections are set but inert.
    pub const CONFIG_SETTINGS_IGNORED: &str = "ConfigSettingsIgnored";
}

/// What the probe found at the endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeResult {
    /// `GET /health/liveliness` answered 200. `version` is `litellm_version`
    /// from `GET /health/readiness`, when the proxy discloses it.
    Reachable { version: Option<String> },
    /// No 200 from `GET /health/liveliness`; `cause` says why, free of
    /// secrets (the LiteLLM client scrubs what it quotes).
    NotReachable { cause: String },
}

/// Where and how to probe an attached proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    /// `status.endpoint`: the admin API base URL.
    pub endpoint: String,
    /// Extra CA to trust, from a Secret in the instance's namespace.
    pub ca_secret_ref: Option<SecretKeySelector>,
}

/// The admin API URL of `instance`: `spec.workload.endpoint` without trailing
/// `/`, else `http(s)://<name>.<namespace>.svc:<service.port or 4000>`.
pub fn endpoint(instance: &LiteLLMInstance) -> String {
    let spec = &instance.spec;
    if let Some(explicit) = spec.workload.as_ref().and_then(|w| w.endpoint.as_deref()) {
        return explicit.trim_end_matches('/').to_string();
    }
    let service = spec.service.as_ref();
    let scheme = if service.and_then(|s| s.https).unwrap_or(false) {
        "https"
    } else {
        "http"
    };
    let port = service.and_then(|s| s.port).unwrap_or(DEFAULT_PORT);
    let namespace = instance.namespace().unwrap_or_default();
    format!("{scheme}://{}.{namespace}.svc:{port}", instance.name_any())
}

/// What to probe, or `None` for an instance this controller must not touch
/// the network for (`managed` unset or true: nothing was provisioned, so
/// nothing answers on its behalf).
pub fn probe_target(instance: &LiteLLMInstance) -> Option<ProbeTarget> {
    if Workload::is_managed(instance.spec.workload.as_ref()) {
        return None;
    }
    Some(ProbeTarget {
        endpoint: endpoint(instance),
        ca_secret_ref: instance
            .spec
            .tls
            .as_ref()
            .and_then(|tls| tls.ca_secret_ref.clone()),
    })
}

/// The status `instance` should have, given the probe of its [`probe_target`]
/// (`None` when nothing was probed) at time `now`.
///
/// Conditions this controller does not own are kept; the ones it owns keep
/// their transition time while their status is unchanged, so equal inputs
/// give an equal status and the caller can skip the patch.
pub fn desired_status(
    instance: &LiteLLMInstance,
    probe: Option<ProbeResult>,
    now: Timestamp,
) -> LiteLLMInstanceStatus {
    // Whole-second RFC 3339, as metav1.Time serializes condition times, so
    // Kubernetes tooling parses them like any other condition's.
    let now = format!("{now:.0}");
    let generation = instance.metadata.generation;
    let mut conditions = instance
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    conditions::remove(&mut conditions, condition_type::PODS_HEALTHY);
    let set = |conditions: &mut Vec<Condition>,
               type_: &str,
               status: bool,
               reason: &str,
               message: String| {
        let mut condition = conditions::condition(type_, status, reason, Some(message));
        condition.observed_generation = generation;
        conditions::set(conditions, condition, &now);
    };

    let spec = &instance.spec;
    let mut status = LiteLLMInstanceStatus {
        observed_generation: generation,
        ..LiteLLMInstanceStatus::default()
    };

    if Workload::is_managed(spec.workload.as_ref()) {
        // Nothing was provisioned, so there is no endpoint to report: an
        // entity must not be sent to a Service that nobody created.
        set(
            &mut conditions,
            condition_type::READY,
            false,
            reason::PROVISIONING_UNSUPPORTED,
            "this provider version only attaches to existing proxies (spec.workload.managed: \
             false) and creates nothing; set workload.managed to false and point \
             workload.endpoint at a running LiteLLM proxy"
                .to_string(),
        );
        conditions::remove(&mut conditions, condition_type::DATABASE_READY);
        conditions::remove(&mut conditions, condition_type::WORKLOAD_UNMANAGED);
        status.conditions = conditions;
        return status;
    }

    let endpoint = endpoint(instance);
    status.gateway_endpoint = spec
        .workload
        .as_ref()
        .and_then(|w| w.gateway_endpoint.as_deref())
        .map(|url| url.trim_end_matches('/').to_string());

    match probe {
        Some(ProbeResult::Reachable { version }) => {
            status.ready = true;
            status.version = version.filter(|v| !v.is_empty());
            set(
                &mut conditions,
                condition_type::READY,
                true,
                reason::PROXY_REACHABLE,
                format!("the proxy answers GET /health/liveliness at {endpoint}"),
            );
        }
        Some(ProbeResult::NotReachable { cause }) => set(
            &mut conditions,
            condition_type::READY,
            false,
            reason::PROXY_NOT_REACHABLE,
            format!("the proxy at {endpoint} is not reachable: {cause}"),
        ),
        None => set(
            &mut conditions,
            condition_type::READY,
            false,
            reason::PROXY_NOT_REACHABLE,
            format!("the proxy at {endpoint} has not been probed yet"),
        ),
    }

    let migration_enabled = spec
        .database
        .as_ref()
        .and_then(|d| d.migration.as_ref())
        .and_then(|m| m.enabled)
        .unwrap_or(false);
    set(
        &mut conditions,
        condition_type::DATABASE_READY,
        true,
        reason::WORKLOAD_UNMANAGED,
        if migration_enabled {
            "spec.database.migration is ignored while workload.managed is false: the \
             externally managed proxy owns its schema, so no migration Job is created"
        } else {
            "the database schema is owned by the externally managed proxy"
        }
        .to_string(),
    );

    let ignored = spec.config.set_sections();
    if ignored.is_empty() {
        conditions::remove(&mut conditions, condition_type::WORKLOAD_UNMANAGED);
    } else {
        let verb = if ignored.len() == 1 { "is" } else { "are" };
        set(
            &mut conditions,
            condition_type::WORKLOAD_UNMANAGED,
            true,
            reason::CONFIG_SETTINGS_IGNORED,
            format!(
                "{} {verb} ignored while workload.managed is false; the proxy owns its own \
                 configuration",
                english_list(&ignored)
            ),
        );
    }

    status.endpoint = Some(endpoint);
    status.conditions = conditions;
    status
}

/// When to look again: soon while an attached proxy is not ready (it may be
/// starting), at the normal interval otherwise. A provisioning request is
/// only re-examined at the normal interval: only a spec change (which the
/// watch delivers at once) can change its outcome.
pub fn requeue_after(
    instance: &LiteLLMInstance,
    status: &LiteLLMInstanceStatus,
    options: &InstanceOptions,
) -> Duration {
    if status.ready || probe_target(instance).is_none() {
        options.ready_interval
    } else {
        options.not_ready_interval
    }
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;
    use crate::api::common::find_condition;

    const NOW: &str = "2026-01-02T03:04:05Z";
    const LATER: &str = "2026-01-02T03:09:05Z";

    fn at(time: &str) -> Timestamp {
        time.parse().unwrap()
    }

    fn instance(spec: Value) -> LiteLLMInstance {
        serde_json::from_value(json!({
            "apiVersion": "litellm.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": "gw", "namespace": "team-a", "generation": 3},
            "spec": spec,
        }))
        .unwrap()
    }

    /// An attached instance with `extra` merged into its spec.
    fn attached(extra: Value) -> LiteLLMInstance {
        let mut spec = json!({
            "workload": {"managed": false},
            "masterKey": {"secretRef": {"name": "litellm-master-key", "key": "LITELLM_MASTER_KEY"}},
        });
        for (field, value) in extra.as_object().unwrap() {
            match (spec.get_mut(field), value) {
                (Some(Value::Object(into)), Value::Object(from)) => into.extend(from.clone()),
                _ => {
                    spec[field] = value.clone();
                }
            }
        }
        instance(spec)
    }

    fn reachable(version: Option<&str>) -> Option<ProbeResult> {
        Some(ProbeResult::Reachable {
            version: version.map(str::to_string),
        })
    }

    fn message<'a>(status: &'a LiteLLMInstanceStatus, type_: &str) -> &'a str {
        find_condition(&status.conditions, type_)
            .and_then(|c| c.message.as_deref())
            .unwrap_or_else(|| panic!("no {type_} condition in {status:?}"))
    }

    #[test]
    fn endpoint_is_the_explicit_one_trimmed_or_the_service_formula() {
        let cases = [
            (json!({}), "http://gw.team-a.svc:4000"),
            (json!({"service": {"port": 80}}), "http://gw.team-a.svc:80"),
            (
                json!({"service": {"port": 8443, "https": true}}),
                "https://gw.team-a.svc:8443",
            ),
            (
                json!({"service": {"https": false}}),
                "http://gw.team-a.svc:4000",
            ),
            (
                json!({"workload": {"endpoint": "http://litellm.platform.svc:4000/"}}),
                "http://litellm.platform.svc:4000",
            ),
            (
                json!({"workload": {"endpoint": "https://proxy.example.com//"}}),
                "https://proxy.example.com",
            ),
            (
                json!({"workload": {"endpoint": "http://litellm-backend:4001/admin/"}, "service": {"port": 1}}),
                "http://litellm-backend:4001/admin",
            ),
        ];
        for (extra, want) in cases {
            let instance = attached(extra.clone());
            assert_eq!(endpoint(&instance), want, "{extra}");
            let status = desired_status(&instance, reachable(None), at(NOW));
            assert_eq!(status.endpoint.as_deref(), Some(want), "{extra}");
            assert_eq!(
                probe_target(&instance).map(|t| t.endpoint).as_deref(),
                Some(want)
            );
        }
    }

    #[test]
    fn gateway_endpoint_is_reported_trimmed_when_set() {
        let cases = [
            (json!({}), None),
            (
                json!({"workload": {"gatewayEndpoint": "http://litellm-gateway:4000/"}}),
                Some("http://litellm-gateway:4000"),
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra), reachable(None), at(NOW));
            assert_eq!(status.gateway_endpoint.as_deref(), want);
        }
    }

    #[test]
    fn version_is_reported_only_when_the_proxy_discloses_it() {
        let tagged = json!({"image": {"tag": "main-v1.50.0"}});
        let cases = [
            (json!({}), reachable(Some("1.108.7")), Some("1.108.7")),
            (json!({}), reachable(None), None),
            (json!({}), reachable(Some("")), None),
            // The image tag describes nothing this provider deployed.
            (tagged.clone(), reachable(None), None),
            (
                tagged,
                Some(ProbeResult::NotReachable {
                    cause: "down".into(),
                }),
                None,
            ),
        ];
        for (extra, probe, want) in cases {
            let status = desired_status(&attached(extra.clone()), probe.clone(), at(NOW));
            assert_eq!(status.version.as_deref(), want, "{extra} {probe:?}");
        }
    }

    #[test]
    fn readiness_and_ready_condition_follow_the_probe() {
        let instance = attached(json!({"workload": {"endpoint": "http://127.0.0.1:9"}}));
        let cases = [
            (
                reachable(None),
                true,
                "True",
                reason::PROXY_REACHABLE,
                "the proxy answers GET /health/liveliness at http://127.0.0.1:9",
            ),
            (
                Some(ProbeResult::NotReachable {
                    cause: "connection refused".into(),
                }),
                false,
                "False",
                reason::PROXY_NOT_REACHABLE,
                "the proxy at http://127.0.0.1:9 is not reachable: connection refused",
            ),
            (
                None,
                false,
                "False",
                reason::PROXY_NOT_REACHABLE,
                "the proxy at http://127.0.0.1:9 has not been probed yet",
            ),
        ];
        for (probe, ready, condition_status, want_reason, want_message) in cases {
            let status = desired_status(&instance, probe, at(NOW));
            assert_eq!(status.ready, ready);
            let condition = find_condition(&status.conditions, condition_type::READY).unwrap();
            assert_eq!(condition.status, condition_status);
            assert_eq!(condition.reason, want_reason);
            assert_eq!(condition.message.as_deref(), Some(want_message));
            assert_eq!(condition.observed_generation, Some(3));
            assert_eq!(condition.last_transition_time.as_deref(), Some(NOW));
        }
    }

    #[test]
    fn attached_status_has_no_replicas_no_pod_health_and_the_generation() {
        let mut instance = attached(json!({}));
        instance.status = Some(LiteLLMInstanceStatus {
            replicas: 2,
            ready_replicas: 2,
            conditions: vec![
                conditions::condition(condition_type::PODS_HEALTHY, true, "AllPodsHealthy", None),
                conditions::condition("Synced", true, "ReconcileSuccess", None),
            ],
            ..Default::default()
        });
        let status = desired_status(&instance, reachable(None), at(NOW));
        assert_eq!((status.replicas, status.ready_replicas), (0, 0));
        assert_eq!(status.observed_generation, Some(3));
        assert!(find_condition(&status.conditions, condition_type::PODS_HEALTHY).is_none());
        // Conditions written by someone else stay.
        assert!(find_condition(&status.conditions, "Synced").is_some());
    }

    #[test]
    fn workload_unmanaged_names_only_the_sections_set() {
        let cases = [
            (json!({}), None),
            (
                json!({"sso": {"x": 1}}),
                Some("spec.sso is ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
            (
                json!({"routerSettings": {}, "caching": {"type": "redis"}, "sso": {}}),
                Some("spec.sso, spec.caching and spec.routerSettings are ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
            (
                json!({"adminUI": {}, "licenseSecretRef": {"name": "l", "key": "k"}}),
                Some("spec.adminUI and spec.licenseSecretRef are ignored while workload.managed is false; the proxy owns its own configuration"),
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra.clone()), reachable(None), at(NOW));
            let condition = find_condition(&status.conditions, condition_type::WORKLOAD_UNMANAGED);
            match want {
                None => assert!(condition.is_none(), "{extra}: {condition:?}"),
                Some(want) => {
                    let condition = condition.unwrap();
                    assert_eq!(condition.status, "True");
                    assert_eq!(condition.reason, reason::CONFIG_SETTINGS_IGNORED);
                    assert_eq!(condition.message.as_deref(), Some(want));
                }
            }
        }
    }

    #[test]
    fn removing_the_last_section_removes_the_condition() {
        let mut instance = attached(json!({"caching": {}}));
        instance.status = Some(desired_status(&instance, reachable(None), at(NOW)));
        instance.spec.config.caching = None;
        let status = desired_status(&instance, reachable(None), at(LATER));
        assert!(find_condition(&status.conditions, condition_type::WORKLOAD_UNMANAGED).is_none());
    }

    #[test]
    fn database_ready_says_a_configured_migration_was_ignored() {
        let ignored = "spec.database.migration is ignored while workload.managed is false: the \
                       externally managed proxy owns its schema, so no migration Job is created";
        let owned = "the database schema is owned by the externally managed proxy";
        let cases = [
            (json!({}), owned),
            (json!({"database": {}}), owned),
            (
                json!({"database": {"migration": {"enabled": false}}}),
                owned,
            ),
            (
                json!({"database": {"migration": {"enabled": true}}}),
                ignored,
            ),
        ];
        for (extra, want) in cases {
            let status = desired_status(&attached(extra.clone()), reachable(None), at(NOW));
            let condition =
                find_condition(&status.conditions, condition_type::DATABASE_READY).unwrap();
            assert_eq!(condition.status, "True", "{extra}");
            assert_eq!(condition.reason, reason::WORKLOAD_UNMANAGED, "{extra}");
            assert_eq!(condition.message.as_deref(), Some(want), "{extra}");
        }
    }

    #[test]
    fn a_provisioning_request_is_reported_not_ready_and_never_probed() {
        let key = json!({"autoGenerate": true});
        for spec in [
            json!({"masterKey": key}),
            json!({"masterKey": key, "workload": {}}),
            json!({"masterKey": key, "workload": {"managed": true}, "caching": {},
                   "database": {"migration": {"enabled": true}}}),
        ] {
            let mut instance = instance(spec.clone());
            assert_eq!(probe_target(&instance), None, "{spec}");
            // Left over from a time the instance was attached.
            instance.status = Some(desired_status(
                &attached(json!({"caching": {}})),
                reachable(Some("1")),
                at(NOW),
            ));
            let status = desired_status(&instance, None, at(LATER));
            assert!(!status.ready, "{spec}");
            assert_eq!(status.endpoint, None);
            assert_eq!(status.version, None);
            assert_eq!(status.observed_generation, Some(3));
            let ready = find_condition(&status.conditions, condition_type::READY).unwrap();
            assert_eq!(ready.status, "False");
            assert_eq!(ready.reason, reason::PROVISIONING_UNSUPPORTED);
            assert_eq!(ready.last_transition_time.as_deref(), Some(LATER));
            assert!(
                message(&status, condition_type::READY)
                    .contains("only attaches to existing proxies (spec.workload.managed: false) and creates nothing"),
                "{status:?}"
            );
            for gone in [
                condition_type::DATABASE_READY,
                condition_type::WORKLOAD_UNMANAGED,
            ] {
                assert!(find_condition(&status.conditions, gone).is_none(), "{gone}");
            }
        }
    }

    #[test]
    fn equal_inputs_give_an_equal_status_so_no_patch_is_needed() {
        let mut instance = attached(json!({"sso": {}}));
        let first = desired_status(&instance, reachable(None), at(NOW));
        instance.status = Some(first.clone());
        assert_eq!(desired_status(&instance, reachable(None), at(LATER)), first);

        let down = Some(ProbeResult::NotReachable {
            cause: "503".into(),
        });
        let second = desired_status(&instance, down, at(LATER));
        let ready = find_condition(&second.conditions, condition_type::READY).unwrap();
        assert_eq!(ready.last_transition_time.as_deref(), Some(LATER));
        // Conditions whose status did not change keep their time.
        let database = find_condition(&second.conditions, condition_type::DATABASE_READY).unwrap();
        assert_eq!(database.last_transition_time.as_deref(), Some(NOW));
    }

    #[test]
    fn transition_times_are_whole_seconds() {
        let now: Timestamp = "2026-01-02T03:04:05.123456789Z".parse().unwrap();
        let status = desired_status(&attached(json!({})), reachable(None), now);
        let ready = find_condition(&status.conditions, condition_type::READY).unwrap();
        assert_eq!(ready.last_transition_time.as_deref(), Some(NOW));
    }

    #[test]
    fn not_ready_attached_proxies_are_looked_at_sooner() {
        let options = InstanceOptions::default();
        let attached_instance = attached(json!({}));
        let ready = desired_status(&attached_instance, reachable(None), at(NOW));
        let not_ready = desired_status(&attached_instance, None, at(NOW));
        let provisioning_instance = instance(json!({}));
        let provisioning = desired_status(&provisioning_instance, None, at(NOW));
        assert_eq!(
            requeue_after(&attached_instance, &ready, &options),
            options.ready_interval
        );
        assert_eq!(
            requeue_after(&attached_instance, &not_ready, &options),
            options.not_ready_interval
        );
        assert_eq!(
            requeue_after(&provisioning_instance, &provisioning, &options),
            options.ready_interval
        );
    }

    #[test]
    fn the_ca_secret_is_part_of_the_probe_target() {
        let instance =
            attached(json!({"tls": {"caSecretRef": {"name": "proxy-ca", "key": "ca.crt"}}}));
        let target = probe_target(&instance).unwrap();
        assert_eq!(
            target.ca_secret_ref,
            Some(SecretKeySelector {
                name: "proxy-ca".into(),
                key: "ca.crt".into()
            })
        );
    }
}
