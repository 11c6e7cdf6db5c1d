//! `LiteLLMInstance`: a LiteLLM proxy, either provisioned by the provider
//! (`spec.workload.managed` unset or true) or an existing proxy the provider
//! only attaches to (`managed: false`) and never touches.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, PodSecurityContext, ResourceRequirements, SecurityContext, Toleration,
    TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::common::{Condition, FreeForm, SecretKeySelector};

/// Pattern of `workload.endpoint` and `workload.gatewayEndpoint`: an http(s)
/// URL with a host, since the value becomes an outbound request URL.
pub const ENDPOINT_PATTERN: &str = r"^https?://[^\s/?#]+";
/// Default port of the proxy.
pub const DEFAULT_PORT: i32 = 4000;

/// A LiteLLM proxy the entity kinds reconcile against.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMInstance",
    namespaced,
    shortname = "li",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "LiteLLMInstanceStatus",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"ENDPOINT","type":"string","jsonPath":".status.endpoint"}"#,
    printcolumn = r#"{"name":"VERSION","type":"string","jsonPath":".status.version"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[x_kube(
    validation = Rule::new("!has(self.workload) || !has(self.workload.endpoint) || (has(self.workload.managed) && !self.workload.managed)").message("workload.endpoint is only allowed when workload.managed is false"),
    validation = Rule::new("!has(self.workload) || !has(self.workload.managed) || self.workload.managed || (has(self.masterKey) && has(self.masterKey.secretRef))").message("masterKey.secretRef is required when workload.managed is false"),
    validation = Rule::new("has(self.masterKey) && (has(self.masterKey.secretRef) || (has(self.masterKey.autoGenerate) && self.masterKey.autoGenerate))").message("masterKey needs secretRef, or autoGenerate: true for a provisioned proxy")
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMInstanceSpec {
    /// Who runs the proxy and where it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// The proxy's master key (admin API bearer token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_key: Option<MasterKey>,
    /// `LITELLM_SALT_KEY`, which encrypts provider credentials stored in the
    /// database. Keep it when moving a proxy: a new one makes them unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt_key: Option<SaltKey>,
    /// Container image of a provisioned proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// Service of a provisioned proxy (and the port of the endpoint formula).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceSpec>,
    /// PostgreSQL of a provisioned proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<Database>,
    /// Redis of a provisioned proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis: Option<Redis>,
    /// TLS to the proxy's admin API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<Tls>,
    /// Namespaces whose entities may reference this instance, besides its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_namespaces: Option<AllowedNamespaces>,
    /// Namespaces whose `LiteLLMModel`s may publish public model names, by
    /// name or label selector (shaped like `allowedNamespaces`; the
    /// instance's own namespace always may). Public names belong to the
    /// platform: a model from any other namespace is published as
    /// `<namespace>/<modelName>` and must reach its upstream only with
    /// credentials from Secrets of its own namespace (see the tenancy rules
    /// in docs). A granted
    /// namespace must also be admitted by `allowedNamespaces`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_model_namespaces: Option<AllowedNamespaces>,
    /// Hosts that `LiteLLMMCPServer`s outside the instance's namespace (a
    /// tenant's) may name in `forProvider.url` although they are internal:
    /// a literal loopback, link-local (such as the cloud metadata address
    /// 169.254.169.254), private-range or other non-public IP address, or a
    /// cluster-internal name (`localhost`, a single label, `*.svc`,
    /// `*.cluster.local`, `*.internal`, `*.local`). Such a URL is refused
    /// to tenants unless its host is listed here: a name (compared without
    /// case), `*.<domain>` for every name below the domain, or an address
    /// (IPv6 without brackets; any spelling of it matches). The
    /// proxy reaches whatever its network reaches, so names that resolve
    /// to internal addresses need an egress policy as well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_NAMESPACES),
        inner(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))
    )]
    pub tenant_mcp_server_hosts: Option<Vec<String>>,
    /// Proxy-config sections. Rendered into the config of a provisioned
    /// proxy; inert (and reported so) for an attached one.
    #[serde(flatten)]
    pub config: ConfigSections,
}

/// The config-level sections of the proxy. Each is passed through verbatim
/// into the proxy config of a provisioned proxy.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSections {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub sso: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub scim: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub jwt_auth: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub oauth2_auth: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub rbac: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub security: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub logging: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "adminUI")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub admin_ui: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub caching: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub router_settings: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub callbacks: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub pass_through_endpoints: Option<FreeForm>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub secret_manager: Option<FreeForm>,
    /// Secret key holding the LiteLLM enterprise license.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_secret_ref: Option<SecretKeySelector>,
    /// `litellm_settings` of the proxy config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub litellm_settings: Option<FreeForm>,
    /// `general_settings` of the proxy config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::config_section_schema")]
    pub general_settings: Option<FreeForm>,
}

impl ConfigSections {
    /// The `spec.` paths of the sections this object sets, in declaration
    /// order: what goes inert when the workload is unmanaged.
    pub fn set_sections(&self) -> Vec<&'static str> {
        let sections: [(&'static str, bool); 16] = [
            ("spec.sso", self.sso.is_some()),
            ("spec.scim", self.scim.is_some()),
            ("spec.jwtAuth", self.jwt_auth.is_some()),
            ("spec.oauth2Auth", self.oauth2_auth.is_some()),
            ("spec.rbac", self.rbac.is_some()),
            ("spec.security", self.security.is_some()),
            ("spec.logging", self.logging.is_some()),
            ("spec.adminUI", self.admin_ui.is_some()),
            ("spec.caching", self.caching.is_some()),
            ("spec.routerSettings", self.router_settings.is_some()),
            ("spec.callbacks", self.callbacks.is_some()),
            (
                "spec.passThroughEndpoints",
                self.pass_through_endpoints.is_some(),
            ),
            ("spec.secretManager", self.secret_manager.is_some()),
            ("spec.licenseSecretRef", self.license_secret_ref.is_some()),
            ("spec.litellmSettings", self.litellm_settings.is_some()),
            ("spec.generalSettings", self.general_settings.is_some()),
        ];
        sections
            .into_iter()
            .filter(|(_, set)| *set)
            .map(|(path, _)| path)
            .collect()
    }
}

/// Who runs the proxy.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Workload {
    /// Whether the provider provisions the proxy. Unset means true. With
    /// `false` the provider attaches to an existing proxy and never creates,
    /// modifies or adopts any workload object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed: Option<bool>,
    /// Admin API URL of an attached proxy (only with `managed: false`).
    /// Defaults to `http://<name>.<namespace>.svc:<service.port>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^https?://[^\s/?#]+"), length(max = super::common::bounds::MAX_URL_LENGTH))]
    pub endpoint: Option<String>,
    /// URL consumers should call for LLM traffic, when it differs from the
    /// admin endpoint (LiteLLM's component chart: gateway :4000, backend :4001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^https?://[^\s/?#]+"), length(max = super::common::bounds::MAX_URL_LENGTH))]
    pub gateway_endpoint: Option<String>,
    /// Replicas of a provisioned proxy (with `topology: split`, the default
    /// of every role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_REPLICAS))]
    pub replicas: Option<i32>,
    /// Container resources of a provisioned proxy (with `topology: split`,
    /// the default of every role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// How a provisioned proxy is laid out: `single` (default), one
    /// Deployment and Service `<name>`; or `split`, LiteLLM's component
    /// chart: `<name>-gateway` (LLM traffic, :4000), `<name>-backend` (admin
    /// API, :4001) and `<name>-ui` (dashboard, :3000), each a Deployment and
    /// a Service of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<Topology>,
    /// A HorizontalPodAutoscaler for the single Deployment
    /// (`topology: single`); it then owns the replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
    /// The gateway role (`topology: split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<Role>,
    /// The backend role (`topology: split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<Role>,
    /// The UI role (`topology: split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<Role>,
    /// An Ingress and/or a Gateway API HTTPRoute for the LLM traffic
    /// entry: the proxy (`topology: single`) or the gateway (`split`; a
    /// `workload.gateway.exposure` replaces this one). Opt-in: absent, nothing
    /// is exposed. Created only where the cluster serves the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<Exposure>,
    /// The proxy pods' ServiceAccount `<name>` (always the instance's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ServiceAccountSettings>,
    /// Secrets (in the instance's namespace) to pull the image with, for
    /// the proxy's pods and the migration Job (the chart's
    /// `imagePullSecrets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_POD_LIST_ITEMS))]
    pub image_pull_secrets: Option<Vec<LocalObjectName>>,
    /// The PodDisruptionBudget of each Deployment with more than one
    /// replica (the chart's `pdb`); on by default with `maxUnavailable: 1`.
    /// With `topology: split`, every role's default: a role's own replaces
    /// this one whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// A Prometheus Operator `ServiceMonitor` `<name>` scraping the
    /// proxy's `/metrics` (the chart's `serviceMonitor`): the single proxy,
    /// or the gateway and backend of the split topology. Created only where
    /// the cluster serves `monitoring.coreos.com/v1` ServiceMonitors
    /// (condition `APINotServed` otherwise). LiteLLM serves `/metrics` once
    /// `prometheus` is among `litellmSettings.callbacks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_monitor: Option<ServiceMonitorSettings>,
    /// Environment, pod metadata, scheduling and security of the proxy's
    /// pods (with `topology: split`, the default of every role: a role's
    /// field, when set, replaces this one whole).
    #[serde(flatten)]
    pub pod: PodSettings,
}

/// The proxy's `ServiceMonitor`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceMonitorSettings {
    /// Whether to create it; unset means true (the section asks for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Scrape interval (`30s`, `1m`); unset, the Prometheus' own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::interval_schema")]
    pub interval: Option<String>,
    /// Scrape timeout, at most the interval; unset, the Prometheus' own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::interval_schema")]
    pub scrape_timeout: Option<String>,
    /// More labels of the ServiceMonitor, for the Prometheus'
    /// `serviceMonitorSelector` (such as `release: kube-prometheus-stack`);
    /// the instance's own labels win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "labels_schema")]
    pub labels: Option<BTreeMap<String, String>>,
}

/// Most entries of `env`.
pub const MAX_ENV: u32 = 128;
/// Most entries of the other lists of [`PodSettings`] and of
/// `imagePullSecrets`.
pub const MAX_POD_LIST_ITEMS: u32 = 32;
/// Most entries of a label or annotation map of [`PodSettings`].
pub const MAX_POD_MAP_ENTRIES: u32 = 64;
/// Longest plain `env` value and annotation value.
pub const MAX_ENV_VALUE_LENGTH: u32 = 4096;

/// A name of an object in the instance's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LocalObjectName {
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
}

/// The ServiceAccount of the proxy's pods.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountSettings {
    /// Annotations of the ServiceAccount (the chart's
    /// `serviceAccount.annotations`): cloud identity such as
    /// `eks.amazonaws.com/role-arn` (IRSA), `iam.gke.io/gcp-service-account`
    /// (GKE Workload Identity) or `azure.workload.identity/client-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "annotations_schema")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Settings of the proxy's pods: environment, metadata, scheduling and
/// security. Each is given to the workload (every role's default) or to a
/// role of the split topology.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PodSettings {
    /// Environment variables of the proxy container (the chart's
    /// `extraEnv`): a plain `value`, or `valueFrom` a key of a Secret or
    /// ConfigMap of the instance's namespace, read by the pods (never copied
    /// into the Deployment or the status). A change to a referenced Secret
    /// or ConfigMap rolls the pods. Names the provider sets (the master and
    /// salt keys, `DATABASE_URL`, Redis, the license, the config path) are
    /// refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_ENV))]
    pub env: Option<Vec<EnvVar>>,
    /// Every key of a Secret or ConfigMap of the instance's namespace as
    /// environment variables (the chart's `envSecrets`). A variable the
    /// provider sets (or `env` names) wins over the same name here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_POD_LIST_ITEMS))]
    pub env_from: Option<Vec<EnvFromSource>>,
    /// Annotations of the pods (the chart's `podAnnotations`); the
    /// provider's own (`litellm.crossplane.io/...`) are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "annotations_schema")]
    pub pod_annotations: Option<BTreeMap<String, String>>,
    /// Labels of the pods (the chart's `podLabels`); the provider's own
    /// (`app.kubernetes.io/name`, `instance`, `component`, `managed-by`)
    /// are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "labels_schema")]
    pub pod_labels: Option<BTreeMap<String, String>>,
    /// The pods' `nodeSelector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "labels_schema")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// The pods' `tolerations`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bounded_list::<Toleration>")]
    pub tolerations: Option<Vec<Toleration>>,
    /// The pods' `affinity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "terse::<Affinity>")]
    pub affinity: Option<Affinity>,
    /// The pods' `topologySpreadConstraints`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "bounded_list::<TopologySpreadConstraint>")]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// The pods' `priorityClassName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub priority_class_name: Option<String>,
    /// The proxy container's `securityContext`, replacing the default
    /// whole (`allowPrivilegeEscalation: false`, `capabilities: {drop:
    /// [ALL]}`, `seccompProfile: {type: RuntimeDefault}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "terse::<SecurityContext>")]
    pub security_context: Option<SecurityContext>,
    /// The pods' `securityContext` (the chart's `podSecurityContext`),
    /// replacing the default whole (`seccompProfile: {type:
    /// RuntimeDefault}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "terse::<PodSecurityContext>")]
    pub pod_security_context: Option<PodSecurityContext>,
}

/// One environment variable: `value` or `valueFrom`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_ENV_VALUE_LENGTH))]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvVarSource>,
}

/// Where an environment variable's value comes from: one key of a Secret
/// or a ConfigMap of the instance's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeyRef>,
}

/// A key of a Secret or ConfigMap of the instance's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeyRef {
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub key: String,
    /// Start the pods although the object or key is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// Every key of a Secret or ConfigMap of the instance's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EnvFromSource {
    /// Prepended to every key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_LABEL_LENGTH))]
    pub prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<ObjectRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<ObjectRef>,
}

/// A Secret or ConfigMap of the instance's namespace.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// Start the pods although the object is missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// The schema of a Kubernetes type without its descriptions (Kubernetes
/// documents them; with them, the workload and its three roles would take
/// the CRD past what `kubectl apply` can annotate), and with bounds on
/// every string ([`MAX_ENV_VALUE_LENGTH`]), list ([`MAX_POD_LIST_ITEMS`])
/// and integer (0 to what its format holds) that has none.
fn terse<T: schemars::JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    fn strip(value: &mut serde_json::Value) {
        use serde_json::json;
        match value {
            serde_json::Value::Object(map) => {
                if map.get("description").is_some_and(|d| d.is_string()) {
                    map.remove("description");
                }
                // Bounds where Kubernetes' schema has none (see
                // `common::bounds`): no string, list or integer the Rust
                // type could not hold or that could grow without end.
                match map.get("type").and_then(|t| t.as_str()) {
                    Some("string") if !map.contains_key("enum") => {
                        map.entry("maxLength")
                            .or_insert(json!(MAX_ENV_VALUE_LENGTH));
                    }
                    Some("array") => {
                        map.entry("maxItems").or_insert(json!(MAX_POD_LIST_ITEMS));
                    }
                    Some("integer") => {
                        let max = match map.get("format").and_then(|f| f.as_str()) {
                            Some("int32") => i64::from(i32::MAX),
                            _ => (1 << 53) - 1,
                        };
                        map.entry("minimum").or_insert(json!(0));
                        map.entry("maximum").or_insert(json!(max));
                    }
                    _ => {}
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = T::json_schema(generator).to_value();
    strip(&mut value);
    if let Some(map) = value.as_object_mut() {
        map.insert("nullable".to_string(), serde_json::Value::Bool(true));
    }
    schemars::Schema::try_from(value).expect("a schema object")
}

/// A list of at most [`MAX_POD_LIST_ITEMS`] Kubernetes objects of type `T`
/// (see [`terse`]).
fn bounded_list<T: schemars::JsonSchema>(
    generator: &mut schemars::SchemaGenerator,
) -> schemars::Schema {
    let mut items = terse::<T>(generator).to_value();
    if let Some(map) = items.as_object_mut() {
        map.remove("nullable");
    }
    schemars::json_schema!({
        "type": "array",
        "nullable": true,
        "maxItems": MAX_POD_LIST_ITEMS,
        "items": items
    })
}

/// Schema of an annotation map: qualified names (a prefix up to 253, `/`,
/// a name up to 63) and values up to [`MAX_ENV_VALUE_LENGTH`].
fn annotations_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": MAX_POD_MAP_ENTRIES,
        "additionalProperties": {"type": "string", "maxLength": MAX_ENV_VALUE_LENGTH}
    })
}

/// Schema of a label map (and `nodeSelector`): label values are at most 63
/// characters.
fn labels_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": MAX_POD_MAP_ENTRIES,
        "additionalProperties": {"type": "string", "maxLength": super::common::bounds::MAX_LABEL_LENGTH}
    })
}

/// The layout of a provisioned proxy.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// One Deployment and Service `<name>`.
    #[default]
    Single,
    /// Gateway, backend and UI, as LiteLLM's component chart.
    Split,
}

/// One role of the split topology.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Role {
    /// Replicas of this role; `workload.replicas` (else 1) by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_REPLICAS))]
    pub replicas: Option<i32>,
    /// Container resources; `workload.resources` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// A HorizontalPodAutoscaler for this role's Deployment; it then owns
    /// the replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
    /// This role's PodDisruptionBudget; `workload.podDisruptionBudget` by
    /// default (replaced whole when set here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// An Ingress and/or HTTPRoute for this role's Service (the gateway's
    /// replaces `workload.exposure`; the backend and UI are exposed only
    /// by their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exposure: Option<Exposure>,
    /// This role's pod settings; each field set here replaces the
    /// workload's whole.
    #[serde(flatten)]
    pub pod: PodSettings,
}

/// Message of the rule that a PodDisruptionBudget sets at most one of
/// `minAvailable` and `maxUnavailable`.
pub const PDB_ONE_OF: &str = "set at most one of minAvailable and maxUnavailable";

/// A `policy/v1` PodDisruptionBudget of a Deployment's pods: how many of
/// them a voluntary disruption (a node drain) may take down at once. It
/// exists only while the Deployment has more than one replica (with
/// autoscaling: while `minReplicas` is above 1), since with one replica
/// any budget either blocks every drain or allows nothing.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!has(self.minAvailable) || !has(self.maxUnavailable)").message(PDB_ONE_OF))]
pub struct PodDisruptionBudget {
    /// `false` creates none (and deletes the provider's). True by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Pods that must stay available: a number (below the replicas, or no
    /// drain could ever proceed) or a percentage such as `"50%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "int_or_percent_schema")]
    pub min_available: Option<IntOrString>,
    /// Pods that may be unavailable at once: a number or a percentage such
    /// as `"25%"`. `1` when neither this nor `minAvailable` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "int_or_percent_schema")]
    pub max_unavailable: Option<IntOrString>,
}

/// Pattern of a percentage of a PodDisruptionBudget: 0% to 100%.
pub const PERCENT_PATTERN: &str = r"^(100|[1-9]?[0-9])%$";

/// Schema of a PodDisruptionBudget's count: an integer from 0 to
/// [`super::common::bounds::MAX_REPLICAS`], or a percentage of at most 100%
/// (the bounds apply by type: `minimum`/`maximum` to integers,
/// `maxLength`/`pattern` to strings).
fn int_or_percent_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "x-kubernetes-int-or-string": true,
        "nullable": true,
        "minimum": 0,
        "maximum": super::common::bounds::MAX_REPLICAS,
        "maxLength": 4,
        "pattern": PERCENT_PATTERN
    })
}

/// An `autoscaling/v2` HorizontalPodAutoscaler on CPU and/or memory.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Autoscaling {
    /// 1 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::common::bounds::MAX_REPLICAS))]
    pub min_replicas: Option<i32>,
    #[schemars(range(min = 1, max = super::common::bounds::MAX_REPLICAS))]
    pub max_replicas: i32,
    /// Average CPU utilization (percent of requests) to keep; 80 when
    /// neither target is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub target_cpu_utilization_percentage: Option<i32>,
    /// Average memory utilization (percent of requests) to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub target_memory_utilization_percentage: Option<i32>,
}

impl Workload {
    /// Whether the workload is provisioned by the provider (unset means true).
    pub fn is_managed(workload: Option<&Workload>) -> bool {
        workload.and_then(|w| w.managed).unwrap_or(true)
    }
}

/// The master key.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MasterKey {
    /// Secret key holding the master key. Required for an attached proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
    /// Generate a master key into `<name>-master-key` (provisioned proxy only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_generate: Option<bool>,
}

/// The salt key.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SaltKey {
    /// Secret key holding an existing `LITELLM_SALT_KEY`, preserved as is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretKeySelector>,
}

/// Container image.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Repository; `ghcr.io/berriai/litellm` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_IMAGE_REPOSITORY_LENGTH))]
    pub repository: Option<String>,
    /// Tag; also reported as `status.version` of a provisioned proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_IMAGE_TAG_LENGTH))]
    pub tag: Option<String>,
    /// `Always`, `IfNotPresent` or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub pull_policy: Option<String>,
}

/// Service settings.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// Port of the proxy's Service; 4000 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// Service type; `ClusterIP` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "type")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub type_: Option<String>,
    /// Use `https` in the endpoint formula.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https: Option<bool>,
    /// Annotations of every Service of the instance (the chart's
    /// `service.annotations`): load balancer settings and the like. The
    /// provider's own (`litellm.crossplane.io/...`) are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "annotations_schema")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// Most `parentRefs` and `hostnames` of an HTTPRoute exposure.
pub const MAX_EXPOSURE_REFS: u32 = 8;

/// How a component is reached from outside the cluster: an Ingress, a
/// Gateway API HTTPRoute, or both. Each object is named as the
/// component's Deployment and Service, and sends to that Service's port.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Exposure {
    /// A `networking.k8s.io/v1` Ingress (the chart's `ingress.*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<IngressExposure>,
    /// A `gateway.networking.k8s.io/v1` HTTPRoute (the chart's
    /// `httpRoute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_route: Option<HttpRouteExposure>,
}

/// An Ingress with one rule: `host`, `path` (prefix) to the component's
/// Service.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IngressExposure {
    /// `spec.ingressClassName`; the cluster's default class when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub class_name: Option<String>,
    /// The host name (a DNS name; `*.<domain>` for every name directly
    /// below the domain, as Ingress allows).
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub host: String,
    /// Path prefix; `/` by default (`pathType: Prefix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = super::common::bounds::MAX_URL_LENGTH))]
    pub path: Option<String>,
    /// TLS for `host` with a certificate Secret of the instance's
    /// namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<IngressTls>,
    /// Annotations of the Ingress (the chart's `ingress.annotations`:
    /// the ingress controller's settings, cert-manager's issuer, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "annotations_schema")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// The TLS certificate of an Ingress.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IngressTls {
    /// A `kubernetes.io/tls` Secret of the instance's namespace (by name;
    /// an ingress controller or cert-manager reads or writes it).
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub secret_name: String,
}

/// An HTTPRoute attached to Gateways, sending every request (path prefix
/// `/`) to the component's Service.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteExposure {
    /// The Gateways (or their listeners) the route attaches to.
    #[schemars(length(min = 1, max = MAX_EXPOSURE_REFS))]
    pub parent_refs: Vec<ParentRef>,
    /// Host names the route answers for (DNS names, `*.<domain>`
    /// allowed); every host of the listener when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = MAX_EXPOSURE_REFS),
        inner(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))
    )]
    pub hostnames: Option<Vec<String>>,
    /// Annotations of the HTTPRoute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "annotations_schema")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// A Gateway the route attaches to.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ParentRef {
    /// The Gateway's name.
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// The Gateway's namespace; the instance's by default. A Gateway
    /// elsewhere must allow routes from the instance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = super::common::bounds::MAX_LABEL_LENGTH))]
    pub namespace: Option<String>,
    /// One listener of the Gateway, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = super::common::bounds::MAX_NAME_LENGTH))]
    pub section_name: Option<String>,
    /// The listeners of the Gateway on this port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

/// PostgreSQL, as LiteLLM's component chart takes it: discrete values plus a
/// username/password Secret, or a Secret holding the whole URL.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Database {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// Database name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_LABEL_LENGTH))]
    pub name: Option<String>,
    /// Secret with the username and password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<CredentialsSecretRef>,
    /// Secret key holding a complete `DATABASE_URL` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_secret_ref: Option<SecretKeySelector>,
    /// PostgreSQL schema of LiteLLM's tables (the chart's
    /// `DATABASE_SCHEMA`); `public` by default. With discrete values only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_LABEL_LENGTH))]
    pub schema: Option<String>,
    /// libpq `sslmode`: `disable`, `allow`, `prefer`, `require`,
    /// `verify-ca` or `verify-full` (`verify-full` by default with
    /// `caSecretRef`). With discrete values only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub ssl_mode: Option<String>,
    /// Secret key holding the PEM CA bundle the database's certificate is
    /// checked against; mounted into the pods and named in the URL
    /// (`sslrootcert`). With discrete values only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_secret_ref: Option<SecretKeySelector>,
    /// The Prisma migration Job (provisioned proxy only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<Migration>,
}

/// A Secret with a username and a password.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsSecretRef {
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// Key of the username; `username` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub username_key: Option<String>,
    /// Key of the password; `password` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub password_key: Option<String>,
}

/// The database migration Job.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Migration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// Redis.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Redis {
    #[schemars(length(max = super::common::bounds::MAX_NAME_LENGTH))]
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_ref: Option<SecretKeySelector>,
}

/// TLS to the admin API.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tls {
    /// Secret key holding a PEM CA bundle to trust, for a private CA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_secret_ref: Option<SecretKeySelector>,
}

/// Which other namespaces may reference the instance.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AllowedNamespaces {
    /// Namespaces admitted by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_NAMESPACES),
        inner(length(max = super::common::bounds::MAX_LABEL_LENGTH))
    )]
    pub names: Option<Vec<String>>,
    /// Namespaces admitted by label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// Observed state of the instance.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMInstanceStatus {
    /// Whether the proxy can take admin calls.
    #[serde(default)]
    pub ready: bool,
    /// Where the provider sends admin calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// What consumers should call for LLM traffic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_endpoint: Option<String>,
    /// The proxy's version; empty when unknown, never a guess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_STATUS_REPLICAS))]
    pub replicas: i32,
    #[serde(default)]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_STATUS_REPLICAS))]
    pub ready_replicas: i32,
    /// One of each type (a map keyed by `type`, as crossplane-runtime
    /// declares conditions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_GENERATION))]
    pub observed_generation: Option<i64>,
    /// The keys the provider generated for a provisioned proxy, recorded the
    /// first time each was generated (or found, marked as generated for this
    /// instance) and kept from then on, also while `workload.managed` is
    /// false. A record means "this instance has run with that key": a
    /// missing `<name>-salt-key` or `<name>-master-key` Secret is then
    /// reported (`SaltKeyMissing`, `MasterKeyMissing`) and never replaced by
    /// a new key, and the Deployment is left unchanged (no pod roll) until
    /// the Secret is restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_keys: Option<GeneratedKeys>,
}

/// Records of the generated master key and salt key (see
/// `status.generatedKeys`). Never a key value.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GeneratedKeys {
    /// `<name>-master-key`. Its value may be changed on purpose (a
    /// rotation: the pods roll), so only its existence is guarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_key: Option<GeneratedKeyRecord>,
    /// `<name>-salt-key`, with the fingerprint of the value the proxy has
    /// run with: a different value would make every credential stored in
    /// the database unreadable, so it is reported, not used. To accept a
    /// new value on purpose, remove this record (`kubectl patch
    /// litellminstance <name> --subresource=status --type=json -p
    /// '[{"op":"remove","path":"/status/generatedKeys/saltKey"}]'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salt_key: Option<GeneratedKeyRecord>,
}

/// One generated key the instance has run with.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GeneratedKeyRecord {
    /// The Secret holding the key, in the instance's namespace.
    #[schemars(length(max = 253))]
    pub secret_name: String,
    /// When the key was first recorded (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub recorded_at: Option<String>,
    /// Salt key only: `sha256:` and the first 16 hex digits of a
    /// domain-separated SHA-256 of the value. It identifies the value
    /// without revealing it (the generated key has 192 random bits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub fingerprint: Option<String>,
}

/// The Secret key of a generated master key.
pub const MASTER_KEY_KEY: &str = "LITELLM_MASTER_KEY";

impl LiteLLMInstance {
    /// The Secret the provider generates the master key into when no
    /// `spec.masterKey.secretRef` is given: `<name>-master-key`.
    pub fn generated_master_key_secret(&self) -> String {
        format!(
            "{}-master-key",
            self.metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// The Secret key the proxy's master key is read from: `spec.masterKey.
    /// secretRef`, else the generated `<name>-master-key`.
    pub fn master_key_ref(&self) -> SecretKeySelector {
        self.spec
            .master_key
            .as_ref()
            .and_then(|m| m.secret_ref.clone())
            .unwrap_or_else(|| SecretKeySelector {
                name: self.generated_master_key_secret(),
                key: MASTER_KEY_KEY.to_string(),
            })
    }
}
