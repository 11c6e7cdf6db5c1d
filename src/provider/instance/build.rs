//! The pure part of provisioning: validate the spec, then build every
//! workload object of a provisioned proxy from it. No I/O; the apply step
//! decides which of these objects may be written.
//!
//! Every object carries the labels `app.kubernetes.io/{name,instance,
//! managed-by}`. Every object but the generated key Secrets carries a
//! controller owner reference to the instance (that reference, not the name,
//! is what makes an object the provider's), so it goes with the instance.
//! The generated master-key and salt-key Secrets carry none: they must
//! outlive the instance (a new salt key makes every credential stored in
//! LiteLLM's database unreadable), and an instance re-created under the same
//! name finds them by the [`GENERATED_FOR_ANNOTATION`] instead.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMap, ConfigMapEnvSource, ConfigMapKeySelector, ConfigMapVolumeSource,
    Container, ContainerPort, EnvFromSource, EnvVar, EnvVarSource, HTTPGetAction, KeyToPath,
    LocalObjectReference, PodSecurityContext, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, SeccompProfile, Secret, SecretEnvSource,
    SecretKeySelector as KubeKeySelector, SecretVolumeSource, SecurityContext, Service,
    ServiceAccount, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::ByteString;
use kube::{Resource, ResourceExt};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::api::common::SecretKeySelector;
use crate::api::instance::{
    Autoscaling, LiteLLMInstance, PodDisruptionBudget as DisruptionBudget, PodSettings, Role,
    Topology, DEFAULT_PORT,
};

use super::database::{valid_database_name, valid_host, valid_schema};

/// Image repository when `spec.image.repository` is unset.
pub const DEFAULT_IMAGE_REPOSITORY: &str = "ghcr.io/berriai/litellm";
/// The LiteLLM release the provider is tested against (the harnesses run
/// it; what the kinds send and compare was checked on it).
pub const TESTED_LITELLM_VERSION: &str = "1.108.7";
/// Image tag when `spec.image.tag` is unset, the immutable tag of
/// [`TESTED_LITELLM_VERSION`] (never a moving tag such as `main-stable`,
/// which a pod restart could move to a LiteLLM nobody tested here); also
/// `status.version` then, until the proxy discloses its own.
pub const DEFAULT_IMAGE_TAG: &str = "main-v1.108.7";
/// Key of the generated master key in `<name>-master-key`; the same key the
/// entity controllers read.
use crate::api::instance::MASTER_KEY_KEY;
/// `app.kubernetes.io/managed-by` of every workload object.
use crate::provider::watch::cache::MANAGED_BY;
/// Key of the generated salt key in `<name>-salt-key`.
pub const SALT_KEY_KEY: &str = "LITELLM_SALT_KEY";
/// Key of the built URL in `<name>-database-url`.
pub const DATABASE_URL_KEY: &str = "DATABASE_URL";
/// Key of the proxy config in the ConfigMap.
pub const CONFIG_KEY: &str = "config.yaml";
/// Pod-template annotation: hash of the proxy config, so a config change
/// rolls the pods (the proxy reads its config only at start).
pub const CONFIG_HASH_ANNOTATION: &str = "litellm.crossplane.io/config-hash";
/// Pod-template annotation: hash of the referenced Secrets' versions, so a
/// rotated key or password rolls the pods (env from Secrets is read at start).
pub const SECRETS_HASH_ANNOTATION: &str = "litellm.crossplane.io/secrets-hash";
/// Annotation of the generated key Secrets: `<namespace>/<name>` of the
/// instance they were generated for. It marks them as the provider's in
/// place of an owner reference, which would let the garbage collector
/// delete them with the instance.
pub const GENERATED_FOR_ANNOTATION: &str = "litellm.crossplane.io/generated-for";

const CONFIG_DIR: &str = "/etc/litellm";
/// Where the database CA of `spec.database.caSecretRef` is mounted.
pub const DATABASE_CA_DIR: &str = "/etc/litellm-database-ca";
/// The CA file in [`DATABASE_CA_DIR`], named by the URL's `sslrootcert`.
pub const DATABASE_CA_FILE: &str = "ca.crt";
pub(super) const CONTAINER_PORT_NAME: &str = "http";
const COMPONENT_MIGRATION: &str = "migration";
/// libpq's `sslmode` values.
pub const SSL_MODES: [&str; 6] = [
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// One Deployment (with its Service) of a provisioned proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Component {
    /// `topology: single`: the whole proxy, `<name>`.
    Proxy,
    /// `topology: split`: LLM traffic, `<name>-gateway`, :4000.
    Gateway,
    /// `topology: split`: the admin API, `<name>-backend`, :4001.
    Backend,
    /// `topology: split`: the dashboard, `<name>-ui`, :3000.
    Ui,
}

impl Component {
    /// The roles of LiteLLM's component chart.
    pub const SPLIT: [Component; 3] = [Component::Gateway, Component::Backend, Component::Ui];

    /// `app.kubernetes.io/component` of its objects and pods.
    pub fn label(self) -> &'static str {
        match self {
            Component::Proxy => "proxy",
            Component::Gateway => "gateway",
            Component::Backend => "backend",
            Component::Ui => "ui",
        }
    }

    /// The port its container listens on: the chart's per role.
    pub fn container_port(self) -> i32 {
        match self {
            Component::Proxy | Component::Gateway => DEFAULT_PORT,
            Component::Backend => 4001,
            Component::Ui => 3000,
        }
    }

    /// Whether the instance needs a ready replica of it to be ready: the
    /// admin API and LLM traffic do, the dashboard does not.
    pub fn required(self) -> bool {
        self != Component::Ui
    }

    fn role(self, instance: &LiteLLMInstance) -> Option<&Role> {
        let workload = instance.spec.workload.as_ref()?;
        match self {
            Component::Proxy => None,
            Component::Gateway => workload.gateway.as_ref(),
            Component::Backend => workload.backend.as_ref(),
            Component::Ui => workload.ui.as_ref(),
        }
    }
}

/// `spec.workload.topology`, `single` by default.
pub fn topology(instance: &LiteLLMInstance) -> Topology {
    instance
        .spec
        .workload
        .as_ref()
        .and_then(|w| w.topology)
        .unwrap_or_default()
}

/// The Deployments (and Services) of the topology.
pub fn components(instance: &LiteLLMInstance) -> Vec<Component> {
    match topology(instance) {
        Topology::Single => vec![Component::Proxy],
        Topology::Split => Component::SPLIT.to_vec(),
    }
}

/// Replicas of `component`: its role's, else `workload.replicas`, else 1;
/// with autoscaling the autoscaler's minimum (it owns the count from then).
pub fn replicas(instance: &LiteLLMInstance, component: Component) -> i32 {
    if let Some(autoscaling) = autoscaling(instance, component) {
        return autoscaling.min_replicas.unwrap_or(1);
    }
    let workload = instance.spec.workload.as_ref();
    component
        .role(instance)
        .and_then(|r| r.replicas)
        .or_else(|| workload.and_then(|w| w.replicas))
        .unwrap_or(1)
}

/// Container resources of `component`: its role's, else `workload.resources`.
pub fn resources(instance: &LiteLLMInstance, component: Component) -> Option<ResourceRequirements> {
    component
        .role(instance)
        .and_then(|r| r.resources.clone())
        .or_else(|| instance.spec.workload.as_ref()?.resources.clone())
}

/// The autoscaling asked for `component`, if any.
pub fn autoscaling(instance: &LiteLLMInstance, component: Component) -> Option<&Autoscaling> {
    match component {
        Component::Proxy => instance.spec.workload.as_ref()?.autoscaling.as_ref(),
        _ => component.role(instance)?.autoscaling.as_ref(),
    }
}

/// Environment variables the provider sets (or that would move what it
/// sets: the config LiteLLM reads): refused in `env`. In `envFrom` they
/// cannot override, since a container's `env` wins over its `envFrom`.
pub const RESERVED_ENV: [&str; 12] = [
    "LITELLM_MASTER_KEY",
    "LITELLM_SALT_KEY",
    "DATABASE_URL",
    "DATABASE_SCHEMA",
    "DISABLE_SCHEMA_UPDATE",
    "REDIS_HOST",
    "REDIS_PORT",
    "REDIS_PASSWORD",
    "LITELLM_LICENSE",
    "CONFIG_FILE_PATH",
    "LITELLM_CONFIG_BUCKET_NAME",
    "LITELLM_CONFIG_BUCKET_OBJECT_KEY",
];

/// The pod settings of `component`: each field of its role when set, else
/// the workload's (the single proxy and the migration Job: the
/// workload's).
pub fn pod_settings(instance: &LiteLLMInstance, component: Component) -> PodSettings {
    let workload = instance
        .spec
        .workload
        .as_ref()
        .map(|w| w.pod.clone())
        .unwrap_or_default();
    let Some(role) = component.role(instance).map(|r| &r.pod) else {
        return workload;
    };
    fn pick<T: Clone>(role: &Option<T>, workload: Option<T>) -> Option<T> {
        role.clone().or(workload)
    }
    PodSettings {
        env: pick(&role.env, workload.env),
        env_from: pick(&role.env_from, workload.env_from),
        pod_annotations: pick(&role.pod_annotations, workload.pod_annotations),
        pod_labels: pick(&role.pod_labels, workload.pod_labels),
        node_selector: pick(&role.node_selector, workload.node_selector),
        tolerations: pick(&role.tolerations, workload.tolerations),
        affinity: pick(&role.affinity, workload.affinity),
        topology_spread_constraints: pick(
            &role.topology_spread_constraints,
            workload.topology_spread_constraints,
        ),
        priority_class_name: pick(&role.priority_class_name, workload.priority_class_name),
        security_context: pick(&role.security_context, workload.security_context),
        pod_security_context: pick(&role.pod_security_context, workload.pod_security_context),
    }
}

/// Why the pod settings at `path` (`spec.workload`, `spec.workload.
/// gateway`, ...) cannot be used, each naming its field.
fn pod_settings_problems(path: &str, pod: &PodSettings) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, var) in pod.env.iter().flatten().enumerate() {
        let field = format!("{path}.env[{i}]");
        if RESERVED_ENV.contains(&var.name.as_str()) {
            problems.push(format!(
                "{field}.name {:?} is set by the provider (from spec.masterKey, spec.saltKey, \
                 spec.database, spec.redis, spec.licenseSecretRef or the rendered config); \
                 set it there instead",
                var.name
            ));
        }
        if !valid_env_name(&var.name) {
            problems.push(format!(
                "{field}.name {:?} is not an environment variable name (letters, digits, _, \
                 -, .; not starting with a digit)",
                var.name
            ));
        }
        match (&var.value, &var.value_from) {
            (Some(_), Some(_)) => problems.push(format!("{field} has both value and valueFrom")),
            (_, Some(from)) => match (&from.secret_key_ref, &from.config_map_key_ref) {
                (Some(_), None) | (None, Some(_)) => {}
                _ => problems.push(format!(
                    "{field}.valueFrom needs exactly one of secretKeyRef and configMapKeyRef"
                )),
            },
            _ => {}
        }
    }
    let mut names: Vec<&str> = pod.env.iter().flatten().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    for pair in names.windows(2).filter(|p| p[0] == p[1]) {
        problems.push(format!("{path}.env names {:?} twice", pair[0]));
    }
    for (i, from) in pod.env_from.iter().flatten().enumerate() {
        if from.secret_ref.is_some() == from.config_map_ref.is_some() {
            problems.push(format!(
                "{path}.envFrom[{i}] needs exactly one of secretRef and configMapRef"
            ));
        }
        if let Some(prefix) = from.prefix.as_deref().filter(|p| !valid_env_name(p)) {
            problems.push(format!(
                "{path}.envFrom[{i}].prefix {prefix:?} cannot start an environment variable name"
            ));
        }
    }
    for key in pod.pod_labels.iter().flat_map(|l| l.keys()) {
        if key.starts_with("app.kubernetes.io/") {
            problems.push(format!(
                "{path}.podLabels {key:?}: app.kubernetes.io/ labels are the provider's (its \
                 Deployments select the pods by them)"
            ));
        }
    }
    for key in pod.pod_annotations.iter().flat_map(|a| a.keys()) {
        if key.starts_with("litellm.crossplane.io/") {
            problems.push(format!(
                "{path}.podAnnotations {key:?}: litellm.crossplane.io/ annotations are the \
                 provider's (they roll the pods on config and Secret changes)"
            ));
        }
    }
    problems
}

/// An environment variable name Kubernetes takes (a C identifier, with `-`
/// and `.` besides).
fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The default container `securityContext`: no privilege escalation, no
/// capabilities, the runtime's seccomp profile. Not `runAsNonRoot`:
/// LiteLLM's image (`ghcr.io/berriai/litellm`) runs as root and keeps its
/// Prisma engines under root's home, so a non-root user needs LiteLLM's
/// `litellm-non_root` image and a `securityContext` naming the user. Not
/// `readOnlyRootFilesystem`: LiteLLM writes its Prisma schema and
/// migrations into its installation at start.
pub fn default_security_context() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            ..Capabilities::default()
        }),
        seccomp_profile: Some(runtime_default_seccomp()),
        ..SecurityContext::default()
    }
}

/// The default pod `securityContext`: the runtime's seccomp profile.
pub fn default_pod_security_context() -> PodSecurityContext {
    PodSecurityContext {
        seccomp_profile: Some(runtime_default_seccomp()),
        ..PodSecurityContext::default()
    }
}

fn runtime_default_seccomp() -> SeccompProfile {
    SeccompProfile {
        type_: "RuntimeDefault".to_string(),
        ..SeccompProfile::default()
    }
}

/// `env` of the pod settings as the container's (Secrets and ConfigMaps by
/// reference only).
fn user_env(pod: &PodSettings) -> Vec<EnvVar> {
    pod.env
        .iter()
        .flatten()
        .map(|var| EnvVar {
            name: var.name.clone(),
            value: var.value.clone(),
            value_from: var.value_from.as_ref().map(|from| EnvVarSource {
                secret_key_ref: from.secret_key_ref.as_ref().map(|r| KubeKeySelector {
                    name: r.name.clone(),
                    key: r.key.clone(),
                    optional: r.optional,
                }),
                config_map_key_ref: from.config_map_key_ref.as_ref().map(|r| {
                    ConfigMapKeySelector {
                        name: r.name.clone(),
                        key: r.key.clone(),
                        optional: r.optional,
                    }
                }),
                ..EnvVarSource::default()
            }),
        })
        .collect()
}

/// `envFrom` of the pod settings as the container's.
fn user_env_from(pod: &PodSettings) -> Option<Vec<EnvFromSource>> {
    let from = pod.env_from.as_ref()?;
    Some(
        from.iter()
            .map(|f| EnvFromSource {
                prefix: f.prefix.clone(),
                secret_ref: f.secret_ref.as_ref().map(|r| SecretEnvSource {
                    name: r.name.clone(),
                    optional: r.optional,
                }),
                config_map_ref: f.config_map_ref.as_ref().map(|r| ConfigMapEnvSource {
                    name: r.name.clone(),
                    optional: r.optional,
                }),
            })
            .collect(),
    )
}

/// The Secrets (`secret == true`) or ConfigMaps the pod settings of
/// `component` read, through `env` and `envFrom`.
fn pod_settings_refs(
    instance: &LiteLLMInstance,
    component: Component,
    secret: bool,
) -> Vec<String> {
    let pod = pod_settings(instance, component);
    let mut names = Vec::new();
    for var in pod.env.iter().flatten() {
        if let Some(from) = &var.value_from {
            let r = if secret {
                &from.secret_key_ref
            } else {
                &from.config_map_key_ref
            };
            names.extend(r.as_ref().map(|r| r.name.clone()));
        }
    }
    for from in pod.env_from.iter().flatten() {
        let r = if secret {
            &from.secret_ref
        } else {
            &from.config_map_ref
        };
        names.extend(r.as_ref().map(|r| r.name.clone()));
    }
    names
}

/// Every ConfigMap the pods' environment reads (`env`, `envFrom` of every
/// component), sorted and deduplicated: their versions feed
/// [`SECRETS_HASH_ANNOTATION`] as `configmap/<name>`.
pub fn referenced_config_maps(instance: &LiteLLMInstance) -> Vec<String> {
    let mut names: Vec<String> = components(instance)
        .into_iter()
        .flat_map(|c| pod_settings_refs(instance, c, false))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The Service port of `component`: `spec.service.port` (4000) for the
/// single proxy, the chart's port for a role.
pub fn service_port(instance: &LiteLLMInstance, component: Component) -> i32 {
    match component {
        Component::Proxy => port(instance),
        other => other.container_port(),
    }
}

/// Where the proxy's database URL comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseSource {
    /// `spec.database.urlSecretRef`: a complete URL the user keeps.
    UrlSecret(SecretKeySelector),
    /// Discrete values and a username/password Secret; the provider builds
    /// the URL into `<name>-database-url`.
    Discrete {
        host: String,
        port: i32,
        name: String,
        credentials: String,
        username_key: String,
        password_key: String,
    },
}

/// The database of `instance`, `None` when none is configured, or the
/// reasons the spec cannot be provisioned.
pub fn database_source(instance: &LiteLLMInstance) -> Result<Option<DatabaseSource>, Vec<String>> {
    let Some(database) = instance.spec.database.as_ref() else {
        return Ok(None);
    };
    let discrete = database.host.is_some() || database.credentials_secret_ref.is_some();
    match (&database.url_secret_ref, discrete) {
        (Some(_), true) => Err(vec![
            "spec.database.urlSecretRef excludes host and credentialsSecretRef; set one or the other"
                .to_string(),
        ]),
        (Some(url), false) => Ok(Some(DatabaseSource::UrlSecret(url.clone()))),
        (None, false) => Ok(None),
        (None, true) => {
            let mut problems = Vec::new();
            match database.host.as_deref() {
                None => problems.push("spec.database.host is required with credentialsSecretRef".to_string()),
                Some(host) if !valid_host(host) => problems.push(format!(
                    "spec.database.host {host:?} is not a host name or IP address"
                )),
                Some(_) => {}
            }
            if database.credentials_secret_ref.is_none() {
                problems.push("spec.database.credentialsSecretRef is required with host".to_string());
            }
            if let Some(name) = database.name.as_deref().filter(|n| !valid_database_name(n)) {
                problems.push(format!(
                    "spec.database.name {name:?} cannot be a URL path segment (\".\" and \"..\" are not database names a URL can carry)"
                ));
            }
            match (database.host.clone(), database.credentials_secret_ref.as_ref()) {
                (Some(host), Some(credentials)) if problems.is_empty() => {
                    Ok(Some(DatabaseSource::Discrete {
                        host,
                        port: database.port.unwrap_or(5432),
                        name: database.name.clone().unwrap_or_else(|| "litellm".to_string()),
                        credentials: credentials.name.clone(),
                        username_key: credentials
                            .username_key
                            .clone()
                            .unwrap_or_else(|| "username".to_string()),
                        password_key: credentials
                            .password_key
                            .clone()
                            .unwrap_or_else(|| "password".to_string()),
                    }))
                }
                _ => Err(problems),
            }
        }
    }
}

/// Why the spec cannot be provisioned; empty when it can.
pub fn validate(instance: &LiteLLMInstance) -> Vec<String> {
    let mut problems = database_source(instance).err().unwrap_or_default();
    problems.extend(super::monitor::problems(instance));
    if let Some(redis) = &instance.spec.redis {
        if !valid_host(&redis.host) {
            problems.push(format!(
                "spec.redis.host {:?} is not a host name or IP address",
                redis.host
            ));
        }
    }
    if migration_enabled(instance) && !matches!(database_source(instance), Ok(Some(_))) {
        problems
            .push("spec.database.migration needs a database (host or urlSecretRef)".to_string());
    }
    if let Some(workload) = &instance.spec.workload {
        let split = topology(instance) == Topology::Split;
        for (field, set) in [
            ("gateway", workload.gateway.is_some()),
            ("backend", workload.backend.is_some()),
            ("ui", workload.ui.is_some()),
        ] {
            if set && !split {
                problems.push(format!(
                    "spec.workload.{field} needs spec.workload.topology: split"
                ));
            }
        }
        if split && workload.autoscaling.is_some() {
            problems.push(
                "spec.workload.autoscaling is for topology single; give each role its own \
                 (spec.workload.gateway.autoscaling, ...)"
                    .to_string(),
            );
        }
        problems.extend(pod_settings_problems("spec.workload", &workload.pod));
        for (field, role) in [
            ("gateway", &workload.gateway),
            ("backend", &workload.backend),
            ("ui", &workload.ui),
        ] {
            if let Some(role) = role {
                problems.extend(pod_settings_problems(
                    &format!("spec.workload.{field}"),
                    &role.pod,
                ));
            }
        }
        for (i, secret) in workload.image_pull_secrets.iter().flatten().enumerate() {
            if secret.name.is_empty() {
                problems.push(format!("spec.workload.imagePullSecrets[{i}].name is empty"));
            }
        }
        for key in workload
            .service_account
            .iter()
            .flat_map(|sa| sa.annotations.iter().flatten())
            .map(|(k, _)| k)
            .filter(|k| k.starts_with("litellm.crossplane.io/"))
        {
            problems.push(format!(
                "spec.workload.serviceAccount.annotations {key:?}: litellm.crossplane.io/ \
                 annotations are the provider's"
            ));
        }
        problems.extend(disruption_budget_problems(instance));
        for component in components(instance) {
            if let Some(a) = autoscaling(instance, component) {
                if a.min_replicas.unwrap_or(1) > a.max_replicas {
                    problems.push(format!(
                        "autoscaling of {}: minReplicas {} exceeds maxReplicas {}",
                        names::component(instance, component),
                        a.min_replicas.unwrap_or(1),
                        a.max_replicas
                    ));
                }
            }
        }
    }
    if let Some(database) = &instance.spec.database {
        if database.url_secret_ref.is_some() {
            for (field, set) in [
                ("schema", database.schema.is_some()),
                ("sslMode", database.ssl_mode.is_some()),
                ("caSecretRef", database.ca_secret_ref.is_some()),
            ] {
                if set {
                    problems.push(format!(
                        "spec.database.{field} is for discrete values; with urlSecretRef put it \
                         into the URL"
                    ));
                }
            }
        }
        if let Some(mode) = database.ssl_mode.as_deref() {
            if !SSL_MODES.contains(&mode) {
                problems.push(format!(
                    "spec.database.sslMode {mode:?} is not one of {}",
                    SSL_MODES.join(", ")
                ));
            }
        }
        if let Some(schema) = database.schema.as_deref() {
            if !valid_schema(schema) {
                problems.push(format!(
                    "spec.database.schema {schema:?} is not a plain PostgreSQL identifier \
                     (letters, digits, _; not starting with a digit)"
                ));
            }
        }
    }
    problems.extend(super::exposure::validate(instance));
    problems
}

/// The query parameters of the built URL: `schema`, `sslmode` and the
/// mounted CA as `sslrootcert` (LiteLLM hands libpq's TLS parameters on to
/// Prisma in Prisma's terms).
pub fn database_params(instance: &LiteLLMInstance) -> Vec<(&'static str, String)> {
    let Some(database) = instance.spec.database.as_ref() else {
        return Vec::new();
    };
    let mut params = Vec::new();
    if let Some(schema) = &database.schema {
        params.push(("schema", schema.clone()));
    }
    let mode = database.ssl_mode.clone().or_else(|| {
        database
            .ca_secret_ref
            .as_ref()
            .map(|_| "verify-full".to_string())
    });
    if let Some(mode) = mode {
        params.push(("sslmode", mode));
    }
    if database.ca_secret_ref.is_some() {
        params.push((
            "sslrootcert",
            format!("{DATABASE_CA_DIR}/{DATABASE_CA_FILE}"),
        ));
    }
    params
}

/// `spec.database.caSecretRef`, when the URL is built from discrete values.
fn database_ca(instance: &LiteLLMInstance) -> Option<&SecretKeySelector> {
    match database_source(instance) {
        Ok(Some(DatabaseSource::Discrete { .. })) => {
            instance.spec.database.as_ref()?.ca_secret_ref.as_ref()
        }
        _ => None,
    }
}

/// Whether `spec.database.migration.enabled` is true.
pub fn migration_enabled(instance: &LiteLLMInstance) -> bool {
    instance
        .spec
        .database
        .as_ref()
        .and_then(|d| d.migration.as_ref())
        .and_then(|m| m.enabled)
        .unwrap_or(false)
}

/// Labels of every workload object.
pub fn labels(instance: &LiteLLMInstance) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "litellm".to_string()),
        (
            "app.kubernetes.io/instance".to_string(),
            instance.name_any(),
        ),
        (
            "app.kubernetes.io/managed-by".to_string(),
            MANAGED_BY.to_string(),
        ),
    ])
}

/// Labels selecting the single proxy's pods (and nothing else, in
/// particular not the migration Job's pods).
pub fn proxy_selector(instance: &LiteLLMInstance) -> BTreeMap<String, String> {
    selector(instance, Component::Proxy)
}

/// Labels selecting the pods of `component`.
pub fn selector(instance: &LiteLLMInstance, component: Component) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "litellm".to_string()),
        (
            "app.kubernetes.io/instance".to_string(),
            instance.name_any(),
        ),
        (
            "app.kubernetes.io/component".to_string(),
            component.label().to_string(),
        ),
    ])
}

/// A label selector string for the pods of every component of either
/// topology (never the migration Job's), for listing pods.
pub fn proxy_selector_string(instance: &LiteLLMInstance) -> String {
    format!(
        "app.kubernetes.io/name=litellm,app.kubernetes.io/instance={},app.kubernetes.io/component in (proxy,gateway,backend,ui)",
        instance.name_any()
    )
}

/// Names of the workload objects.
pub mod names {
    use super::*;

    /// Deployment, Service, ConfigMap and ServiceAccount share the
    /// instance's name, so the endpoint formula names the Service.
    pub fn workload(instance: &LiteLLMInstance) -> String {
        instance.name_any()
    }
    /// The Deployment, Service (and autoscaler) of `component`: `<name>`
    /// for the single proxy, `<name>-gateway`, `<name>-backend`,
    /// `<name>-ui` for the roles, as the component chart names them.
    pub fn component(instance: &LiteLLMInstance, component: Component) -> String {
        match component {
            Component::Proxy => instance.name_any(),
            role => format!("{}-{}", instance.name_any(), role.label()),
        }
    }
    pub fn master_key(instance: &LiteLLMInstance) -> String {
        instance.generated_master_key_secret()
    }
    pub fn salt_key(instance: &LiteLLMInstance) -> String {
        format!("{}-salt-key", instance.name_any())
    }
    pub fn database_url(instance: &LiteLLMInstance) -> String {
        format!("{}-database-url", instance.name_any())
    }
    /// One Job per image: a new image may bring new migrations, and a Job's
    /// pod template cannot be changed once created.
    pub fn migration_job(instance: &LiteLLMInstance) -> String {
        format!(
            "{}-migrate-{}",
            instance.name_any(),
            &hash(&image(instance))[..8]
        )
    }
}

/// Whether the provider generates the master key (no `secretRef` given).
pub fn generates_master_key(instance: &LiteLLMInstance) -> bool {
    instance
        .spec
        .master_key
        .as_ref()
        .is_none_or(|m| m.secret_ref.is_none())
}

/// The Secret key of `LITELLM_SALT_KEY`: an existing one from `spec.saltKey.
/// secretRef`, preserved as is, else the generated `<name>-salt-key`.
pub fn salt_key_ref(instance: &LiteLLMInstance) -> SecretKeySelector {
    instance
        .spec
        .salt_key
        .as_ref()
        .and_then(|s| s.secret_ref.clone())
        .unwrap_or_else(|| SecretKeySelector {
            name: names::salt_key(instance),
            key: SALT_KEY_KEY.to_string(),
        })
}

/// Whether the provider generates the salt key (no `secretRef` given).
pub fn generates_salt_key(instance: &LiteLLMInstance) -> bool {
    instance
        .spec
        .salt_key
        .as_ref()
        .is_none_or(|s| s.secret_ref.is_none())
}

/// The Secret key the proxy's `DATABASE_URL` is read from, if any.
pub fn database_url_ref(instance: &LiteLLMInstance) -> Option<SecretKeySelector> {
    match database_source(instance) {
        Ok(Some(DatabaseSource::UrlSecret(selector))) => Some(selector),
        Ok(Some(DatabaseSource::Discrete { .. })) => Some(SecretKeySelector {
            name: names::database_url(instance),
            key: DATABASE_URL_KEY.to_string(),
        }),
        _ => None,
    }
}

/// Every Secret the proxy's environment reads (the provider's variables,
/// the database CA, `env` and `envFrom` of every component), sorted and
/// deduplicated: their versions feed [`SECRETS_HASH_ANNOTATION`] (one hash
/// for every component: a change rolls them all).
pub fn referenced_secrets(instance: &LiteLLMInstance) -> Vec<String> {
    let mut secrets: Vec<String> = proxy_env(instance)
        .iter()
        .filter_map(|env| env.value_from.as_ref()?.secret_key_ref.as_ref())
        .map(|selector| selector.name.clone())
        .collect();
    secrets.extend(database_ca(instance).map(|ca| ca.name.clone()));
    for component in components(instance) {
        secrets.extend(pod_settings_refs(instance, component, true));
    }
    secrets.sort();
    secrets.dedup();
    secrets
}

/// `spec.image` as an image reference.
pub fn image(instance: &LiteLLMInstance) -> String {
    let image = instance.spec.image.as_ref();
    format!(
        "{}:{}",
        image
            .and_then(|i| i.repository.as_deref())
            .unwrap_or(DEFAULT_IMAGE_REPOSITORY),
        version(instance)
    )
}

/// `status.version` of a provisioned proxy: the image tag it runs.
pub fn version(instance: &LiteLLMInstance) -> String {
    instance
        .spec
        .image
        .as_ref()
        .and_then(|i| i.tag.clone())
        .unwrap_or_else(|| DEFAULT_IMAGE_TAG.to_string())
}

fn port(instance: &LiteLLMInstance) -> i32 {
    instance
        .spec
        .service
        .as_ref()
        .and_then(|s| s.port)
        .unwrap_or(DEFAULT_PORT)
}

/// Metadata of an object that goes with the instance: owned by it.
fn metadata(instance: &LiteLLMInstance, name: String, component: Option<&str>) -> ObjectMeta {
    let mut labels = labels(instance);
    if let Some(component) = component {
        labels.insert(
            "app.kubernetes.io/component".to_string(),
            component.to_string(),
        );
    }
    ObjectMeta {
        name: Some(name),
        namespace: instance.namespace(),
        labels: Some(labels),
        owner_references: instance.controller_owner_ref(&()).map(|owner| vec![owner]),
        ..ObjectMeta::default()
    }
}

/// Lowercase sha256 hex of `value`.
fn hash(value: &str) -> String {
    Sha256::digest(value.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A Secret holding one generated key (`<name>-master-key`,
/// `<name>-salt-key`). Created once and never rewritten: a new master key
/// locks out every client, a new salt key makes stored credentials
/// unreadable. No owner reference, so it outlives the instance; the
/// [`GENERATED_FOR_ANNOTATION`] names the instance instead.
pub fn generated_key_secret(
    instance: &LiteLLMInstance,
    selector: &SecretKeySelector,
    value: &crate::litellm::Secret,
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(selector.name.clone()),
            namespace: instance.namespace(),
            labels: Some(labels(instance)),
            annotations: Some(BTreeMap::from([(
                GENERATED_FOR_ANNOTATION.to_string(),
                generated_for(instance),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            selector.key.clone(),
            ByteString(value.expose().as_bytes().to_vec()),
        )])),
        type_: Some("Opaque".to_string()),
        ..Secret::default()
    }
}

/// The [`GENERATED_FOR_ANNOTATION`] value of `instance`'s key Secrets.
pub fn generated_for(instance: &LiteLLMInstance) -> String {
    format!(
        "{}/{}",
        instance.namespace().unwrap_or_default(),
        instance.name_any()
    )
}

/// One of the keys the provider generates for a provisioned proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedKey {
    /// `<name>-master-key`, key `LITELLM_MASTER_KEY`.
    MasterKey,
    /// `<name>-salt-key`, key `LITELLM_SALT_KEY`.
    SaltKey,
}

impl GeneratedKey {
    pub const ALL: [GeneratedKey; 2] = [GeneratedKey::MasterKey, GeneratedKey::SaltKey];

    /// Whether the provider generates this key for `instance` (no
    /// `secretRef` given for it).
    pub fn is_generated(self, instance: &LiteLLMInstance) -> bool {
        match self {
            GeneratedKey::MasterKey => generates_master_key(instance),
            GeneratedKey::SaltKey => generates_salt_key(instance),
        }
    }

    /// The generated Secret's name.
    pub fn secret_name(self, instance: &LiteLLMInstance) -> String {
        match self {
            GeneratedKey::MasterKey => names::master_key(instance),
            GeneratedKey::SaltKey => names::salt_key(instance),
        }
    }

    /// The key within the generated Secret.
    pub fn data_key(self) -> &'static str {
        match self {
            GeneratedKey::MasterKey => MASTER_KEY_KEY,
            GeneratedKey::SaltKey => SALT_KEY_KEY,
        }
    }

    /// The selector of the generated Secret's key.
    pub fn selector(self, instance: &LiteLLMInstance) -> SecretKeySelector {
        SecretKeySelector {
            name: self.secret_name(instance),
            key: self.data_key().to_string(),
        }
    }

    /// Whether a changed value is refused. The salt key's is: LiteLLM
    /// encrypts stored credentials with it. The master key's is not: a
    /// changed value is a rotation (the pods roll and take the new one, the
    /// entity controllers read it from the same Secret).
    pub fn value_is_pinned(self) -> bool {
        self == GeneratedKey::SaltKey
    }

    /// `master key`, `salt key`.
    pub fn label(self) -> &'static str {
        match self {
            GeneratedKey::MasterKey => "master key",
            GeneratedKey::SaltKey => "salt key",
        }
    }
}

/// How a Secret bearing a generated key's name relates to the instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Carries the [`GENERATED_FOR_ANNOTATION`] naming this instance.
    /// `legacy_owner` when it also (or only) carries the controller owner
    /// reference to this instance that releases before the annotation set.
    Generated { legacy_owner: bool },
    /// Neither: someone else's Secret, never adopted by its name.
    Foreign,
}

/// The [`Marker`] of `meta` for `instance`. An annotation naming another
/// instance is foreign, even when this instance's owner reference is there
/// too.
pub fn marker(instance: &LiteLLMInstance, meta: &ObjectMeta) -> Marker {
    let annotation = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(GENERATED_FOR_ANNOTATION));
    let legacy_owner = instance.uid().is_some_and(|uid| {
        meta.owner_references
            .iter()
            .flatten()
            .any(|owner| owner.uid == uid)
    });
    match annotation {
        Some(value) if *value == generated_for(instance) => Marker::Generated { legacy_owner },
        Some(_) => Marker::Foreign,
        None if legacy_owner => Marker::Generated { legacy_owner },
        None => Marker::Foreign,
    }
}

/// Identifies a key value without revealing it: `sha256:` and the first 16
/// hex digits of SHA-256 over a domain prefix and the value (so it is not
/// LiteLLM's token of the same string).
pub fn key_fingerprint(value: &[u8]) -> String {
    crate::provider::managed::scrub::fingerprint(
        "litellm-crossplane generated key fingerprint v1",
        value,
    )
}

/// Why a generated key the instance has run with is not usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLoss {
    /// The Secret does not exist.
    SecretNotFound,
    /// The Secret lacks the key, or its value is empty.
    KeyNotFound,
    /// The value differs from the recorded fingerprint (salt key only).
    ValueChanged,
    /// A Secret of that name exists without the marker: not taken for the
    /// lost one, whatever it holds.
    NotMarked,
}

/// What to do about one generated key, given what the API server holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlan {
    /// The instance has not run with this key and no Secret of the name
    /// exists: draw a key and create the Secret.
    Generate,
    /// This instance's Secret, usable as is.
    Keep { fingerprint: String },
    /// This instance's Secret from a release that marked it with an owner
    /// reference: usable; `patch` (a JSON merge patch, [`marker_migration`])
    /// gives its metadata the annotation and takes the owner reference out,
    /// so it outlives the instance from now on.
    Migrate { fingerprint: String, patch: Value },
    /// Someone else's Secret, and the instance has not run with this key:
    /// left alone and reported as a conflict.
    NotOwned,
    /// The instance has run with this key and it is not usable: nothing is
    /// generated or written, the loss is reported.
    Lost(KeyLoss),
}

/// The [`KeyPlan`] for `key` of `instance`, given the Secret of its name
/// (`None` when absent), whether the instance has run with the key, and the
/// fingerprint recorded for it (compared only when [`GeneratedKey::
/// value_is_pinned`]).
///
/// A marked Secret without a usable value is lost even when nothing
/// recorded a run: the marker itself says an instance of this name
/// generated and used it, so drawing a new value into its place would be
/// the silent regeneration this exists to prevent.
pub fn plan_generated_key(
    instance: &LiteLLMInstance,
    key: GeneratedKey,
    existing: Option<&Secret>,
    has_run: bool,
    recorded_fingerprint: Option<&str>,
) -> KeyPlan {
    let Some(secret) = existing else {
        return if has_run {
            KeyPlan::Lost(KeyLoss::SecretNotFound)
        } else {
            KeyPlan::Generate
        };
    };
    let legacy_owner = match marker(instance, &secret.metadata) {
        Marker::Foreign if has_run => return KeyPlan::Lost(KeyLoss::NotMarked),
        Marker::Foreign => return KeyPlan::NotOwned,
        Marker::Generated { legacy_owner } => legacy_owner,
    };
    let value = secret
        .data
        .as_ref()
        .and_then(|data| data.get(key.data_key()))
        .map(|bytes| bytes.0.as_slice())
        .filter(|bytes| !bytes.is_empty());
    let Some(value) = value else {
        return KeyPlan::Lost(KeyLoss::KeyNotFound);
    };
    let fingerprint = key_fingerprint(value);
    match recorded_fingerprint {
        Some(recorded) if key.value_is_pinned() && recorded != fingerprint => {
            KeyPlan::Lost(KeyLoss::ValueChanged)
        }
        _ if legacy_owner => KeyPlan::Migrate {
            fingerprint,
            patch: marker_migration(instance, secret),
        },
        _ => KeyPlan::Keep { fingerprint },
    }
}

/// The JSON merge patch that turns a generated Secret marked by an owner
/// reference into one marked by the annotation: the annotation in, this
/// instance's owner reference out (others stay), nothing else touched. The
/// Secret's resourceVersion makes it fail instead of overwriting a change
/// made since it was read.
pub fn marker_migration(instance: &LiteLLMInstance, secret: &Secret) -> Value {
    let uid = instance.uid();
    let owners: Vec<_> = secret
        .metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|owner| Some(&owner.uid) != uid.as_ref())
        .collect();
    json!({"metadata": {
        "resourceVersion": secret.metadata.resource_version,
        "annotations": {GENERATED_FOR_ANNOTATION: generated_for(instance)},
        "ownerReferences": if owners.is_empty() { Value::Null } else { json!(owners) },
    }})
}

/// Whether the proxy container of `deployment` reads an environment
/// variable from the Secret `secret`: a Deployment that did has run with
/// the key in it.
pub fn deployment_reads_secret(deployment: &Deployment, secret: &str) -> bool {
    deployment
        .spec
        .template
        .spec
        .as_ref()
        .into_iter()
        .flat_map(|pod| pod.containers.iter())
        .flat_map(|container| container.env.iter().flatten())
        .filter_map(|env| env.value_from.as_ref()?.secret_key_ref.as_ref())
        .any(|selector| selector.name == secret)
}

/// `<name>-database-url`: the URL built from the discrete values, kept in a
/// Secret because it embeds the password.
pub fn database_url_secret(instance: &LiteLLMInstance, url: &crate::litellm::Secret) -> Secret {
    Secret {
        metadata: metadata(instance, names::database_url(instance), None),
        data: Some(BTreeMap::from([(
            DATABASE_URL_KEY.to_string(),
            ByteString(url.expose().as_bytes().to_vec()),
        )])),
        type_: Some("Opaque".to_string()),
        ..Secret::default()
    }
}

/// Merges `from`'s keys into `into` (an object); keys already there win, so
/// what the provider must set cannot be overridden by a section.
fn merge_absent(into: &mut Map<String, Value>, from: &crate::api::common::FreeForm) {
    for (key, value) in from {
        into.entry(key.clone()).or_insert_with(|| value.clone());
    }
}

/// The proxy config (`config.yaml`). It names Secrets only through
/// `os.environ/...` references, never by value.
///
/// Where the sections go: `litellmSettings`, `routerSettings` and
/// `generalSettings` are LiteLLM's own blocks; `caching` becomes
/// `litellm_settings.cache_params` (with `cache: true`); `callbacks` holds
/// `litellm_settings` callback keys; `jwtAuth` becomes `general_settings.
/// litellm_jwtauth` (with `enable_jwt_auth: true`); the other feature
/// sections (`sso`, `scim`, `oauth2Auth`, `rbac`, `security`, `logging`,
/// `adminUI`, `secretManager`, `passThroughEndpoints`) hold
/// `general_settings` keys (`pass_through_endpoints: [...]`, ...) and are
/// merged into it. Models come from `LiteLLMModel` resources through the admin API,
/// hence `store_model_in_db` and an empty `model_list`.
pub fn proxy_config(instance: &LiteLLMInstance) -> Value {
    let config = &instance.spec.config;
    let mut general = Map::new();
    general.insert("master_key".into(), json!("os.environ/LITELLM_MASTER_KEY"));
    if database_url_ref(instance).is_some() {
        general.insert("store_model_in_db".into(), json!(true));
    }
    if let Some(jwt) = &config.jwt_auth {
        general.insert("enable_jwt_auth".into(), json!(true));
        general.insert("litellm_jwtauth".into(), json!(jwt));
    }
    for section in [
        &config.general_settings,
        &config.sso,
        &config.scim,
        &config.oauth2_auth,
        &config.rbac,
        &config.security,
        &config.logging,
        &config.admin_ui,
        &config.secret_manager,
        &config.pass_through_endpoints,
    ]
    .into_iter()
    .flatten()
    {
        merge_absent(&mut general, section);
    }

    let mut litellm = Map::new();
    if let Some(caching) = &config.caching {
        let mut params: Map<String, Value> = caching.clone().into_iter().collect();
        // With spec.redis, a Redis cache (the default type then) reads the
        // same discrete values and password as the router.
        let redis_cache = params.get("type").is_none_or(|t| t == "redis");
        if instance.spec.redis.is_some() && redis_cache {
            params.entry("type").or_insert(json!("redis"));
            params
                .entry("host")
                .or_insert(json!("os.environ/REDIS_HOST"));
            params
                .entry("port")
                .or_insert(json!("os.environ/REDIS_PORT"));
            if redis_password_ref(instance).is_some() {
                params
                    .entry("password")
                    .or_insert(json!("os.environ/REDIS_PASSWORD"));
            }
        }
        litellm.insert("cache".into(), json!(true));
        litellm.insert("cache_params".into(), Value::Object(params));
    }
    for section in [&config.litellm_settings, &config.callbacks]
        .into_iter()
        .flatten()
    {
        merge_absent(&mut litellm, section);
    }

    let mut router = Map::new();
    if instance.spec.redis.is_some() {
        router.insert("redis_host".into(), json!("os.environ/REDIS_HOST"));
        router.insert("redis_port".into(), json!("os.environ/REDIS_PORT"));
        if redis_password_ref(instance).is_some() {
            router.insert("redis_password".into(), json!("os.environ/REDIS_PASSWORD"));
        }
    }
    if let Some(settings) = &config.router_settings {
        // The user's router settings win over the Redis defaults.
        for (key, value) in settings {
            router.insert(key.clone(), value.clone());
        }
    }

    let mut root = Map::new();
    root.insert("model_list".into(), json!([]));
    root.insert("general_settings".into(), Value::Object(general));
    if !litellm.is_empty() {
        root.insert("litellm_settings".into(), Value::Object(litellm));
    }
    if !router.is_empty() {
        root.insert("router_settings".into(), Value::Object(router));
    }
    Value::Object(root)
}

fn redis_password_ref(instance: &LiteLLMInstance) -> Option<&SecretKeySelector> {
    instance.spec.redis.as_ref()?.password_secret_ref.as_ref()
}

/// The ConfigMap with `config.yaml`.
pub fn config_map(instance: &LiteLLMInstance) -> ConfigMap {
    let yaml =
        serde_saphyr::to_string(&proxy_config(instance)).expect("JSON values serialize to YAML");
    ConfigMap {
        metadata: metadata(instance, names::workload(instance), None),
        data: Some(BTreeMap::from([(CONFIG_KEY.to_string(), yaml)])),
        ..ConfigMap::default()
    }
}

/// The proxy pods' ServiceAccount, so they do not run as `default`.
pub fn service_account(instance: &LiteLLMInstance) -> ServiceAccount {
    let mut metadata = metadata(instance, names::workload(instance), None);
    metadata.annotations = instance
        .spec
        .workload
        .as_ref()
        .and_then(|w| w.service_account.as_ref())
        .and_then(|sa| sa.annotations.clone())
        .filter(|a| !a.is_empty());
    ServiceAccount {
        metadata,
        ..ServiceAccount::default()
    }
}

/// `spec.workload.imagePullSecrets` as the pods take them.
fn image_pull_secrets(instance: &LiteLLMInstance) -> Option<Vec<LocalObjectReference>> {
    let secrets = instance
        .spec
        .workload
        .as_ref()?
        .image_pull_secrets
        .as_ref()?;
    Some(
        secrets
            .iter()
            .map(|s| LocalObjectReference {
                name: s.name.clone(),
            })
            .collect(),
    )
}

/// The pod template of `component` (or of the migration Job, with the
/// workload's settings), given the provider's labels, annotations and spec:
/// the pod settings added where the provider sets nothing (the provider's
/// labels and annotations win; validation refuses the user's of the same
/// names), the security contexts defaulted.
fn with_pod_settings(
    instance: &LiteLLMInstance,
    pod: &PodSettings,
    mut labels: BTreeMap<String, String>,
    mut annotations: BTreeMap<String, String>,
    spec: PodSpec,
) -> PodTemplateSpec {
    for (key, value) in pod.pod_labels.iter().flatten() {
        labels.entry(key.clone()).or_insert_with(|| value.clone());
    }
    for (key, value) in pod.pod_annotations.iter().flatten() {
        annotations
            .entry(key.clone())
            .or_insert_with(|| value.clone());
    }
    let mut containers = spec.containers;
    for container in &mut containers {
        container.security_context = Some(
            pod.security_context
                .clone()
                .unwrap_or_else(default_security_context),
        );
    }
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers,
            image_pull_secrets: image_pull_secrets(instance),
            node_selector: pod.node_selector.clone(),
            tolerations: pod.tolerations.clone(),
            affinity: pod.affinity.clone(),
            topology_spread_constraints: pod.topology_spread_constraints.clone(),
            priority_class_name: pod.priority_class_name.clone(),
            security_context: Some(
                pod.pod_security_context
                    .clone()
                    .unwrap_or_else(default_pod_security_context),
            ),
            ..spec
        }),
    }
}

fn value(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.into()),
        ..EnvVar::default()
    }
}

fn from_secret(name: &str, selector: &SecretKeySelector) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(KubeKeySelector {
                name: selector.name.clone(),
                key: selector.key.clone(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// The proxy container's environment. Secrets only as `secretKeyRef`.
fn proxy_env(instance: &LiteLLMInstance) -> Vec<EnvVar> {
    let mut env = vec![
        from_secret("LITELLM_MASTER_KEY", &instance.master_key_ref()),
        from_secret("LITELLM_SALT_KEY", &salt_key_ref(instance)),
    ];
    if let Some(url) = database_url_ref(instance) {
        env.push(from_secret("DATABASE_URL", &url));
    }
    env.extend(database_schema_env(instance));
    if migration_enabled(instance) {
        // The migration Job owns the schema; replicas racing to migrate it
        // on start is what the Job exists to avoid.
        env.push(value("DISABLE_SCHEMA_UPDATE", "true"));
    }
    if let Some(redis) = &instance.spec.redis {
        env.push(value("REDIS_HOST", redis.host.clone()));
        env.push(value("REDIS_PORT", redis.port.unwrap_or(6379).to_string()));
        if let Some(password) = &redis.password_secret_ref {
            env.push(from_secret("REDIS_PASSWORD", password));
        }
    }
    if let Some(license) = &instance.spec.config.license_secret_ref {
        env.push(from_secret("LITELLM_LICENSE", license));
    }
    env
}

fn http_probe(path: &str, period_seconds: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.to_string()),
            port: IntOrString::String(CONTAINER_PORT_NAME.to_string()),
            ..HTTPGetAction::default()
        }),
        initial_delay_seconds: Some(10),
        period_seconds: Some(period_seconds),
        timeout_seconds: Some(5),
        failure_threshold: Some(6),
        ..Probe::default()
    }
}

fn container(instance: &LiteLLMInstance, name: &str, env: Vec<EnvVar>) -> Container {
    Container {
        name: name.to_string(),
        image: Some(image(instance)),
        image_pull_policy: instance
            .spec
            .image
            .as_ref()
            .and_then(|i| i.pull_policy.clone()),
        env: Some(env),
        ..Container::default()
    }
}

/// The single proxy's Deployment. `secrets_hash` is the hash of the
/// referenced Secrets' versions (see [`SECRETS_HASH_ANNOTATION`]).
pub fn deployment(instance: &LiteLLMInstance, secrets_hash: &str) -> Deployment {
    component_deployment(instance, Component::Proxy, secrets_hash)
}

/// The volume and mount of the database CA, if any.
fn database_ca_volume(instance: &LiteLLMInstance) -> Option<(Volume, VolumeMount)> {
    let ca = database_ca(instance)?;
    Some((
        Volume {
            name: "database-ca".to_string(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(ca.name.clone()),
                items: Some(vec![KeyToPath {
                    key: ca.key.clone(),
                    path: DATABASE_CA_FILE.to_string(),
                    ..KeyToPath::default()
                }]),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        },
        VolumeMount {
            name: "database-ca".to_string(),
            mount_path: DATABASE_CA_DIR.to_string(),
            read_only: Some(true),
            ..VolumeMount::default()
        },
    ))
}

/// The Deployment of `component`: the proxy on the component's port with
/// the shared config. Every component runs `spec.image`.
pub fn component_deployment(
    instance: &LiteLLMInstance,
    component: Component,
    secrets_hash: &str,
) -> Deployment {
    let config_yaml = config_map(instance)
        .data
        .and_then(|mut d| d.remove(CONFIG_KEY))
        .unwrap_or_default();
    let pod = pod_settings(instance, component);
    let mut env = proxy_env(instance);
    env.extend(user_env(&pod));
    let mut pod_labels = labels(instance);
    pod_labels.extend(selector(instance, component));
    let annotations = BTreeMap::from([
        (CONFIG_HASH_ANNOTATION.to_string(), hash(&config_yaml)),
        (
            SECRETS_HASH_ANNOTATION.to_string(),
            secrets_hash.to_string(),
        ),
    ]);
    let container_port = component.container_port();
    let mut volumes = vec![Volume {
        name: "config".to_string(),
        config_map: Some(ConfigMapVolumeSource {
            name: names::workload(instance),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }];
    let mut mounts = vec![VolumeMount {
        name: "config".to_string(),
        mount_path: CONFIG_DIR.to_string(),
        read_only: Some(true),
        ..VolumeMount::default()
    }];
    if let Some((volume, mount)) = database_ca_volume(instance) {
        volumes.push(volume);
        mounts.push(mount);
    }
    let proxy = Container {
        args: Some(vec![
            "--config".to_string(),
            format!("{CONFIG_DIR}/{CONFIG_KEY}"),
            "--port".to_string(),
            container_port.to_string(),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some(CONTAINER_PORT_NAME.to_string()),
            container_port,
            protocol: Some("TCP".to_string()),
            ..ContainerPort::default()
        }]),
        // Start-up imports LiteLLM and its generated Prisma client, CPU
        // bound for half a minute or more: the liveness probe waits for it
        // (up to 5 minutes) instead of restarting a slow start.
        startup_probe: Some(Probe {
            period_seconds: Some(5),
            initial_delay_seconds: Some(0),
            failure_threshold: Some(60),
            ..http_probe("/health/liveliness", 5)
        }),
        liveness_probe: Some(http_probe("/health/liveliness", 15)),
        readiness_probe: Some(http_probe("/health/readiness", 10)),
        resources: resources(instance, component),
        volume_mounts: Some(mounts),
        env_from: user_env_from(&pod),
        ..container(instance, "litellm", env)
    };
    let mut metadata = metadata(
        instance,
        names::component(instance, component),
        Some(component.label()),
    );
    metadata.labels.get_or_insert_with(BTreeMap::new);
    Deployment {
        metadata,
        spec: DeploymentSpec {
            replicas: Some(replicas(instance, component)),
            selector: LabelSelector {
                match_labels: Some(selector(instance, component)),
                ..LabelSelector::default()
            },
            template: with_pod_settings(
                instance,
                &pod,
                pod_labels,
                annotations,
                PodSpec {
                    service_account_name: Some(names::workload(instance)),
                    containers: vec![proxy],
                    volumes: Some(volumes),
                    ..PodSpec::default()
                },
            ),
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// The single proxy's Service; its port is the one of the endpoint formula.
pub fn service(instance: &LiteLLMInstance) -> Service {
    component_service(instance, Component::Proxy)
}

/// The Service of `component`, selecting its pods only.
pub fn component_service(instance: &LiteLLMInstance, component: Component) -> Service {
    let component_label = match component {
        Component::Proxy => None,
        role => Some(role.label()),
    };
    Service {
        metadata: ObjectMeta {
            annotations: super::exposure::service_annotations(instance),
            ..metadata(
                instance,
                names::component(instance, component),
                component_label,
            )
        },
        spec: Some(ServiceSpec {
            type_: instance.spec.service.as_ref().and_then(|s| s.type_.clone()),
            selector: Some(selector(instance, component)),
            ports: Some(vec![ServicePort {
                name: Some(CONTAINER_PORT_NAME.to_string()),
                port: service_port(instance, component),
                target_port: Some(IntOrString::String(CONTAINER_PORT_NAME.to_string())),
                protocol: Some("TCP".to_string()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// The `autoscaling/v2` HorizontalPodAutoscaler of `component`, when asked
/// for: CPU and/or memory utilization of its Deployment (CPU at 80% when
/// no target is given).
pub fn autoscaler(
    instance: &LiteLLMInstance,
    component: Component,
) -> Option<HorizontalPodAutoscaler> {
    let autoscaling = autoscaling(instance, component)?;
    let resource = |name: &str, percent: i32| MetricSpec {
        type_: "Resource".to_string(),
        resource: Some(ResourceMetricSource {
            name: name.to_string(),
            target: MetricTarget {
                type_: "Utilization".to_string(),
                average_utilization: Some(percent),
                ..MetricTarget::default()
            },
        }),
        ..MetricSpec::default()
    };
    let mut metrics = Vec::new();
    let cpu = autoscaling.target_cpu_utilization_percentage;
    let memory = autoscaling.target_memory_utilization_percentage;
    if let Some(cpu) = cpu.or(memory.is_none().then_some(80)) {
        metrics.push(resource("cpu", cpu));
    }
    if let Some(memory) = memory {
        metrics.push(resource("memory", memory));
    }
    let name = names::component(instance, component);
    Some(HorizontalPodAutoscaler {
        metadata: metadata(instance, name.clone(), Some(component.label())),
        spec: HorizontalPodAutoscalerSpec {
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some("apps/v1".to_string()),
                kind: "Deployment".to_string(),
                name,
            },
            min_replicas: Some(autoscaling.min_replicas.unwrap_or(1)),
            max_replicas: autoscaling.max_replicas,
            metrics: Some(metrics),
            ..HorizontalPodAutoscalerSpec::default()
        },
        ..HorizontalPodAutoscaler::default()
    })
}

/// The group version and resource of PodDisruptionBudgets.
pub const PDB_GROUP_VERSION: &str = "policy/v1";
/// See [`PDB_GROUP_VERSION`].
pub const PDB_RESOURCE: &str = "poddisruptionbudgets";

/// The PodDisruptionBudget settings of `component` and the field they come
/// from: its role's when set, else `spec.workload.podDisruptionBudget`
/// (`None` when neither is set: the defaults).
pub fn disruption_budget_settings(
    instance: &LiteLLMInstance,
    component: Component,
) -> (Option<&DisruptionBudget>, String) {
    if let Some(own) = component
        .role(instance)
        .and_then(|r| r.pod_disruption_budget.as_ref())
    {
        return (
            Some(own),
            format!("spec.workload.{}.podDisruptionBudget", component.label()),
        );
    }
    (
        instance
            .spec
            .workload
            .as_ref()
            .and_then(|w| w.pod_disruption_budget.as_ref()),
        "spec.workload.podDisruptionBudget".to_string(),
    )
}

/// Whether `component` gets a PodDisruptionBudget: enabled (the default)
/// and more than one replica (with autoscaling: `minReplicas` above 1).
pub fn wants_disruption_budget(instance: &LiteLLMInstance, component: Component) -> bool {
    let (settings, _) = disruption_budget_settings(instance, component);
    settings.and_then(|s| s.enabled).unwrap_or(true) && replicas(instance, component) > 1
}

/// A percentage `"N%"` with N from 0 to 100.
fn percent(value: &str) -> Option<u32> {
    let digits = value.strip_suffix('%')?;
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| *n <= 100)
}

/// Why a count of a PodDisruptionBudget at `field` is not usable.
fn count_problem(field: &str, value: &IntOrString) -> Option<String> {
    match value {
        IntOrString::Int(n) if *n < 0 => Some(format!("{field} {n} is negative")),
        IntOrString::Int(_) => None,
        IntOrString::String(s) if percent(s).is_none() => Some(format!(
            "{field} {s:?} is neither a number nor a percentage from \"0%\" to \"100%\""
        )),
        IntOrString::String(_) => None,
    }
}

/// Why the PodDisruptionBudget settings cannot be used, each naming its
/// field: both counts set, a count that does not parse, a count that lets
/// no pod be evicted (`maxUnavailable` 0 or `"0%"`, `minAvailable`
/// `"100%"`), or an integer `minAvailable` not below the replicas of a
/// Deployment it applies to (no drain could ever evict one of its pods).
fn disruption_budget_problems(instance: &LiteLLMInstance) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(workload) = instance.spec.workload.as_ref() else {
        return problems;
    };
    let sources = [
        (
            "spec.workload.podDisruptionBudget".to_string(),
            workload.pod_disruption_budget.as_ref(),
        ),
        (
            "spec.workload.gateway.podDisruptionBudget".to_string(),
            workload
                .gateway
                .as_ref()
                .and_then(|r| r.pod_disruption_budget.as_ref()),
        ),
        (
            "spec.workload.backend.podDisruptionBudget".to_string(),
            workload
                .backend
                .as_ref()
                .and_then(|r| r.pod_disruption_budget.as_ref()),
        ),
        (
            "spec.workload.ui.podDisruptionBudget".to_string(),
            workload
                .ui
                .as_ref()
                .and_then(|r| r.pod_disruption_budget.as_ref()),
        ),
    ];
    for (path, settings) in sources {
        let Some(settings) = settings else { continue };
        // Whatever the replicas: no pod may ever be evicted.
        let blocking = match (&settings.min_available, &settings.max_unavailable) {
            (Some(IntOrString::String(min)), _) if min == "100%" => {
                Some(format!("{path}.minAvailable \"100%\""))
            }
            (_, Some(IntOrString::Int(0))) => Some(format!("{path}.maxUnavailable 0")),
            (_, Some(IntOrString::String(max))) if max == "0%" => {
                Some(format!("{path}.maxUnavailable \"0%\""))
            }
            _ => None,
        };
        if let Some(field) = blocking {
            problems.push(format!(
                "{field} lets no pod be evicted: no node could ever be drained of its pods; \
                 allow at least one (maxUnavailable: 1, the default)"
            ));
        }
        if settings.min_available.is_some() && settings.max_unavailable.is_some() {
            problems.push(format!(
                "{path} sets both minAvailable and maxUnavailable; set at most one"
            ));
        }
        for (name, value) in [
            ("minAvailable", &settings.min_available),
            ("maxUnavailable", &settings.max_unavailable),
        ] {
            if let Some(value) = value {
                problems.extend(count_problem(&format!("{path}.{name}"), value));
            }
        }
    }
    for component in components(instance) {
        if !wants_disruption_budget(instance, component) {
            continue;
        }
        let (settings, path) = disruption_budget_settings(instance, component);
        let replicas = replicas(instance, component);
        // Kubernetes rounds a percentage of minAvailable up.
        let min = match settings.and_then(|s| s.min_available.as_ref()) {
            Some(IntOrString::Int(min)) => Some((min.to_string(), i64::from(*min))),
            // Refused above whatever the replicas.
            Some(IntOrString::String(percent)) if percent == "100%" => None,
            Some(IntOrString::String(percent)) => percent
                .strip_suffix('%')
                .and_then(|p| p.parse::<i64>().ok())
                .map(|p| {
                    let pods = (p * i64::from(replicas) + 99) / 100;
                    (format!("{percent:?} ({pods} pods, rounded up)"), pods)
                }),
            None => None,
        };
        if let Some((min, pods)) = min {
            if pods >= i64::from(replicas) {
                let counted = match autoscaling(instance, component) {
                    Some(_) => "minReplicas",
                    None => "replicas",
                };
                problems.push(format!(
                    "{path}.minAvailable {min} is not below the {replicas} {counted} of \
                     Deployment {}: no node could ever be drained of its pods; lower it or \
                     set maxUnavailable instead",
                    names::component(instance, component)
                ));
            }
        }
    }
    problems
}

/// The `policy/v1` PodDisruptionBudget of `component`, when it gets one
/// ([`wants_disruption_budget`]): named as its Deployment, selecting
/// exactly its pods, `maxUnavailable: 1` unless a count is given.
pub fn disruption_budget(
    instance: &LiteLLMInstance,
    component: Component,
) -> Option<PodDisruptionBudget> {
    if !wants_disruption_budget(instance, component) {
        return None;
    }
    let (settings, _) = disruption_budget_settings(instance, component);
    let min_available = settings.and_then(|s| s.min_available.clone());
    let max_unavailable = settings
        .and_then(|s| s.max_unavailable.clone())
        .or_else(|| min_available.is_none().then_some(IntOrString::Int(1)));
    Some(PodDisruptionBudget {
        metadata: metadata(
            instance,
            names::component(instance, component),
            Some(component.label()),
        ),
        spec: Some(PodDisruptionBudgetSpec {
            selector: Some(LabelSelector {
                match_labels: Some(selector(instance, component)),
                ..LabelSelector::default()
            }),
            min_available,
            max_unavailable,
            // A proxy whose pods are all failing anyway never holds up a
            // drain: unhealthy pods may always be evicted (GA in 1.31).
            unhealthy_pod_eviction_policy: Some("AlwaysAllow".to_string()),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    })
}

/// `DATABASE_SCHEMA` for a schema other than `public`: the URL's
/// `schema=` places Prisma's queries, and LiteLLM's own raw queries (its
/// spend views) read the schema from this variable, as the chart sets it.
fn database_schema_env(instance: &LiteLLMInstance) -> Option<EnvVar> {
    match database_source(instance) {
        Ok(Some(DatabaseSource::Discrete { .. })) => {
            let schema = instance.spec.database.as_ref()?.schema.as_ref()?;
            Some(value("DATABASE_SCHEMA", schema.clone()))
        }
        _ => None,
    }
}

/// The Prisma migration Job (`spec.database.migration.enabled`), the way
/// LiteLLM's chart runs it: the image's `prisma_migration.py`.
pub fn migration_job(instance: &LiteLLMInstance) -> Job {
    let mut env = vec![value("DISABLE_SCHEMA_UPDATE", "false")];
    if let Some(url) = database_url_ref(instance) {
        env.push(from_secret("DATABASE_URL", &url));
    }
    env.extend(database_schema_env(instance));
    let ca = database_ca_volume(instance);
    let migrate = Container {
        command: Some(vec![
            "python".to_string(),
            "litellm/proxy/prisma_migration.py".to_string(),
        ]),
        volume_mounts: ca.as_ref().map(|(_, mount)| vec![mount.clone()]),
        ..container(instance, "migrate", env)
    };
    let mut pod_labels = labels(instance);
    pod_labels.insert(
        "app.kubernetes.io/component".to_string(),
        COMPONENT_MIGRATION.to_string(),
    );
    Job {
        metadata: metadata(
            instance,
            names::migration_job(instance),
            Some(COMPONENT_MIGRATION),
        ),
        spec: Some(JobSpec {
            backoff_limit: Some(4),
            // The workload's pod settings but its environment: the Job
            // runs where and as the proxy does, and reads only the database.
            template: with_pod_settings(
                instance,
                &pod_settings(instance, Component::Proxy),
                pod_labels,
                BTreeMap::new(),
                PodSpec {
                    service_account_name: Some(names::workload(instance)),
                    restart_policy: Some("OnFailure".to_string()),
                    containers: vec![migrate],
                    volumes: ca.map(|(volume, _)| vec![volume]),
                    ..PodSpec::default()
                },
            ),
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

/// The [`SECRETS_HASH_ANNOTATION`] value for the referenced Secrets'
/// `(name, resourceVersion)` pairs (`None` for a Secret that does not exist
/// yet, so its creation rolls the pods too). Versions, not contents: the
/// hash must not be a function of secret material.
pub fn secrets_hash(versions: &[(String, Option<String>)]) -> String {
    let mut lines: Vec<String> = versions
        .iter()
        .map(|(name, version)| format!("{name}={}", version.as_deref().unwrap_or("-")))
        .collect();
    lines.sort();
    hash(&lines.join("\n"))[..16].to_string()
}

#[cfg(test)]
mod tests {
    use kube::core::ObjectMeta as Meta;

    use super::*;

    fn instance(spec: Value) -> LiteLLMInstance {
        let mut instance: LiteLLMInstance = serde_json::from_value(json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMInstance",
            "metadata": {"name": "gw", "namespace": "team-a", "uid": "uid-1"},
            "spec": spec,
        }))
        .unwrap();
        instance.metadata.generation = Some(1);
        instance
    }

    fn full() -> LiteLLMInstance {
        instance(json!({
            "masterKey": {"autoGenerate": true},
            "image": {"tag": "main-v1.108.7", "pullPolicy": "IfNotPresent"},
            "workload": {"replicas": 3, "resources": {"limits": {"memory": "4Gi"}}},
            "service": {"port": 8080, "type": "NodePort"},
            "database": {
                "host": "postgres.internal", "port": 6543, "name": "llm",
                "credentialsSecretRef": {"name": "litellm-db"},
                "migration": {"enabled": true},
            },
            "redis": {"host": "redis.internal", "passwordSecretRef": {"name": "litellm-secrets", "key": "REDIS_PASSWORD"}},
            "saltKey": {"secretRef": {"name": "litellm-secrets", "key": "LITELLM_SALT_KEY"}},
            "licenseSecretRef": {"name": "license", "key": "key"},
            "caching": {"type": "redis"},
            "routerSettings": {"routing_strategy": "simple-shuffle"},
            "litellmSettings": {"drop_params": true},
            "generalSettings": {"master_key": "sk-literal", "alerting": ["slack"]},
            "jwtAuth": {"admin_jwt_scope": "litellm-admin"},
            "sso": {"ui_access_mode": "admin_only"},
            "callbacks": {"success_callback": ["langfuse"]},
            "passThroughEndpoints": {"pass_through_endpoints": [{"path": "/v1/x"}]},
        }))
    }

    fn meta_of(object: &impl Resource) -> &Meta {
        object.meta()
    }

    fn env<'a>(deployment: &'a Deployment, name: &str) -> Option<&'a EnvVar> {
        deployment.spec.template.spec.as_ref()?.containers[0]
            .env
            .as_ref()?
            .iter()
            .find(|e| e.name == name)
    }

    fn secret_ref(env: Option<&EnvVar>) -> (String, String) {
        let selector = env
            .and_then(|e| e.value_from.as_ref())
            .and_then(|v| v.secret_key_ref.as_ref())
            .expect("a secretKeyRef");
        (selector.name.clone(), selector.key.clone())
    }

    #[test]
    fn every_object_but_the_generated_keys_is_owned_and_labelled() {
        let instance = full();
        let key = crate::litellm::Secret::new("sk-test");
        let metas = [
            meta_of(&database_url_secret(&instance, &key)).clone(),
            meta_of(&config_map(&instance)).clone(),
            meta_of(&service_account(&instance)).clone(),
            meta_of(&deployment(&instance, "h")).clone(),
            meta_of(&service(&instance)).clone(),
            meta_of(&migration_job(&instance)).clone(),
        ];
        for meta in metas {
            let owners = meta.owner_references.as_ref().unwrap();
            assert_eq!(owners.len(), 1, "{meta:?}");
            assert_eq!(owners[0].uid, "uid-1");
            assert_eq!(owners[0].kind, "LiteLLMInstance");
            assert_eq!(owners[0].controller, Some(true));
            assert_eq!(meta.namespace.as_deref(), Some("team-a"));
            let labels = meta.labels.as_ref().unwrap();
            for (key, value) in [
                ("app.kubernetes.io/name", "litellm"),
                ("app.kubernetes.io/instance", "gw"),
                ("app.kubernetes.io/managed-by", "provider-litellm"),
            ] {
                assert_eq!(labels.get(key).map(String::as_str), Some(value), "{meta:?}");
            }
        }
    }

    #[test]
    fn the_deployment_runs_the_image_with_probes_resources_and_replicas() {
        let instance = full();
        let deployment = deployment(&instance, "abc");
        let spec = &deployment.spec;
        assert_eq!(spec.replicas, Some(3));
        let pod = spec.template.spec.as_ref().unwrap();
        assert_eq!(pod.service_account_name.as_deref(), Some("gw"));
        let container = &pod.containers[0];
        assert_eq!(
            container.image.as_deref(),
            Some("ghcr.io/berriai/litellm:main-v1.108.7")
        );
        assert_eq!(container.image_pull_policy.as_deref(), Some("IfNotPresent"));
        let probe_path = |probe: &Option<Probe>| {
            probe
                .as_ref()
                .unwrap()
                .http_get
                .as_ref()
                .unwrap()
                .path
                .clone()
                .unwrap()
        };
        assert_eq!(probe_path(&container.liveness_probe), "/health/liveliness");
        assert_eq!(probe_path(&container.readiness_probe), "/health/readiness");
        let limits = container
            .resources
            .as_ref()
            .unwrap()
            .limits
            .as_ref()
            .unwrap();
        assert_eq!(limits["memory"].0, "4Gi");
        // The selector matches the template and not the migration pods.
        let selector = spec.selector.match_labels.as_ref().unwrap();
        let template_labels = spec
            .template
            .metadata
            .as_ref()
            .unwrap()
            .labels
            .as_ref()
            .unwrap();
        assert!(selector
            .iter()
            .all(|(k, v)| template_labels.get(k) == Some(v)));
        let job = migration_job(&instance);
        let job_labels = job.spec.unwrap().template.metadata.unwrap().labels.unwrap();
        assert!(!selector.iter().all(|(k, v)| job_labels.get(k) == Some(v)));

        let defaults = instance_default_image();
        assert_eq!(defaults.0, "ghcr.io/berriai/litellm:main-v1.108.7");
        assert!(DEFAULT_IMAGE_TAG.ends_with(TESTED_LITELLM_VERSION));
        assert_eq!(defaults.1, Some(1));
    }

    fn instance_default_image() -> (String, Option<i32>) {
        let deployment = deployment(&instance(json!({"masterKey": {"autoGenerate": true}})), "h");
        let spec = deployment.spec;
        (
            spec.template.spec.unwrap().containers[0]
                .image
                .clone()
                .unwrap(),
            spec.replicas,
        )
    }

    #[test]
    fn secrets_reach_the_proxy_only_as_secret_references() {
        let provisioned = full();
        let built = deployment(&provisioned, "abc");
        assert_eq!(
            secret_ref(env(&built, "LITELLM_MASTER_KEY")),
            ("gw-master-key".into(), "LITELLM_MASTER_KEY".into())
        );
        // An existing salt key is preserved: referenced, never generated.
        assert_eq!(
            secret_ref(env(&built, "LITELLM_SALT_KEY")),
            ("litellm-secrets".into(), "LITELLM_SALT_KEY".into())
        );
        assert!(!generates_salt_key(&provisioned));
        assert_eq!(
            secret_ref(env(&built, "DATABASE_URL")),
            ("gw-database-url".into(), "DATABASE_URL".into())
        );
        assert_eq!(
            secret_ref(env(&built, "REDIS_PASSWORD")),
            ("litellm-secrets".into(), "REDIS_PASSWORD".into())
        );
        assert_eq!(
            secret_ref(env(&built, "LITELLM_LICENSE")),
            ("license".into(), "key".into())
        );
        assert_eq!(
            env(&built, "REDIS_HOST").and_then(|e| e.value.as_deref()),
            Some("redis.internal")
        );
        assert_eq!(
            env(&built, "DISABLE_SCHEMA_UPDATE").and_then(|e| e.value.as_deref()),
            Some("true")
        );
        assert_eq!(
            referenced_secrets(&provisioned),
            [
                "gw-database-url",
                "gw-master-key",
                "license",
                "litellm-secrets"
            ]
        );

        let url_secret = instance(json!({
            "masterKey": {"secretRef": {"name": "mk", "key": "k"}},
            "database": {"urlSecretRef": {"name": "db-url", "key": "url"}},
        }));
        let built = deployment(&url_secret, "abc");
        assert_eq!(
            secret_ref(env(&built, "DATABASE_URL")),
            ("db-url".into(), "url".into())
        );
        assert_eq!(
            secret_ref(env(&built, "LITELLM_MASTER_KEY")),
            ("mk".into(), "k".into())
        );
        assert!(!generates_master_key(&url_secret));
        assert!(env(&built, "DISABLE_SCHEMA_UPDATE").is_none());
    }

    #[test]
    fn the_config_renders_every_section_and_no_secret() {
        let instance = full();
        let config = proxy_config(&instance);
        assert_eq!(config["model_list"], json!([]));
        let general = &config["general_settings"];
        // The provider's master key reference wins over a literal in a section.
        assert_eq!(general["master_key"], "os.environ/LITELLM_MASTER_KEY");
        assert_eq!(general["store_model_in_db"], true);
        assert_eq!(general["alerting"], json!(["slack"]));
        assert_eq!(general["enable_jwt_auth"], true);
        assert_eq!(
            general["litellm_jwtauth"]["admin_jwt_scope"],
            "litellm-admin"
        );
        assert_eq!(general["ui_access_mode"], "admin_only");
        assert_eq!(
            general["pass_through_endpoints"],
            json!([{"path": "/v1/x"}])
        );
        let litellm = &config["litellm_settings"];
        assert_eq!(litellm["cache"], true);
        assert_eq!(
            litellm["cache_params"],
            json!({"type": "redis", "host": "os.environ/REDIS_HOST",
                   "port": "os.environ/REDIS_PORT", "password": "os.environ/REDIS_PASSWORD"})
        );
        assert_eq!(litellm["drop_params"], true);
        assert_eq!(litellm["success_callback"], json!(["langfuse"]));
        let router = &config["router_settings"];
        assert_eq!(router["routing_strategy"], "simple-shuffle");
        assert_eq!(router["redis_host"], "os.environ/REDIS_HOST");
        assert_eq!(router["redis_password"], "os.environ/REDIS_PASSWORD");

        let yaml = &config_map(&instance).data.unwrap()[CONFIG_KEY];
        let parsed: Value = serde_saphyr::from_str(yaml).unwrap();
        assert_eq!(parsed, config);
        assert!(!yaml.contains("sk-literal"), "{yaml}");
    }

    #[test]
    fn config_and_secret_changes_change_the_pod_template() {
        let instance = full();
        let annotations = |d: Deployment| d.spec.template.metadata.unwrap().annotations.unwrap();
        let before = annotations(deployment(&instance, "h1"));
        let mut changed = instance.clone();
        changed.spec.config.caching = None;
        let after = annotations(deployment(&changed, "h1"));
        assert_ne!(
            before[CONFIG_HASH_ANNOTATION],
            after[CONFIG_HASH_ANNOTATION]
        );
        assert_eq!(
            annotations(deployment(&instance, "h1")),
            before,
            "deterministic"
        );
        assert_eq!(
            annotations(deployment(&instance, "h2"))[SECRETS_HASH_ANNOTATION],
            "h2"
        );

        let a = secrets_hash(&[("a".into(), Some("1".into())), ("b".into(), None)]);
        let b = secrets_hash(&[("b".into(), None), ("a".into(), Some("1".into()))]);
        let c = secrets_hash(&[("a".into(), Some("2".into())), ("b".into(), None)]);
        let d = secrets_hash(&[
            ("a".into(), Some("1".into())),
            ("b".into(), Some("1".into())),
        ]);
        assert_eq!(a, b, "order does not matter");
        assert_ne!(a, c);
        assert_ne!(a, d, "a Secret appearing rolls the pods");
    }

    #[test]
    fn the_split_topology_renders_the_charts_roles() {
        let instance = instance(json!({
            "masterKey": {"autoGenerate": true},
            "service": {"port": 8080, "https": true},
            "workload": {
                "topology": "split",
                "replicas": 2,
                "resources": {"requests": {"memory": "1Gi"}},
                "gateway": {"replicas": 4, "resources": {"requests": {"cpu": "2"}},
                            "autoscaling": {"minReplicas": 3, "maxReplicas": 10, "targetMemoryUtilizationPercentage": 70}},
                "ui": {"autoscaling": {"maxReplicas": 2}},
            },
        }));
        assert!(validate(&instance).is_empty(), "{:?}", validate(&instance));
        assert_eq!(components(&instance), Component::SPLIT.to_vec());
        let cases = [
            (Component::Gateway, "gw-gateway", 4000, 3, "cpu"),
            (Component::Backend, "gw-backend", 4001, 2, "memory"),
            (Component::Ui, "gw-ui", 3000, 1, "memory"),
        ];
        for (component, name, port, replicas, resource) in cases {
            let deployment = component_deployment(&instance, component, "h");
            assert_eq!(deployment.metadata.name.as_deref(), Some(name));
            assert_eq!(deployment.spec.replicas, Some(replicas), "{name}");
            let selector = deployment.spec.selector.match_labels.clone().unwrap();
            assert_eq!(selector["app.kubernetes.io/component"], component.label());
            let pod = deployment.spec.template.spec.unwrap();
            let container = &pod.containers[0];
            assert_eq!(container.ports.as_ref().unwrap()[0].container_port, port);
            let args = container.args.clone().unwrap();
            assert_eq!(args[args.len() - 1], port.to_string(), "{name}");
            assert!(container
                .resources
                .as_ref()
                .unwrap()
                .requests
                .as_ref()
                .unwrap()
                .contains_key(resource));
            let service = component_service(&instance, component);
            assert_eq!(service.metadata.name.as_deref(), Some(name));
            let spec = service.spec.unwrap();
            assert_eq!(
                spec.ports.unwrap()[0].port,
                port,
                "the chart's port, not service.port"
            );
            assert_eq!(spec.selector.unwrap(), selector);
        }
        // An autoscaler per role that asks for one; none for the backend.
        let gateway = autoscaler(&instance, Component::Gateway).unwrap();
        assert_eq!(gateway.metadata.name.as_deref(), Some("gw-gateway"));
        let spec = &gateway.spec;
        assert_eq!(spec.scale_target_ref.name, "gw-gateway");
        assert_eq!(spec.scale_target_ref.kind, "Deployment");
        assert_eq!((spec.min_replicas, spec.max_replicas), (Some(3), 10));
        let metrics = spec.metrics.clone().unwrap();
        assert_eq!(metrics.len(), 1);
        let memory = metrics[0].resource.as_ref().unwrap();
        assert_eq!(
            (memory.name.as_str(), memory.target.average_utilization),
            ("memory", Some(70))
        );
        assert!(autoscaler(&instance, Component::Backend).is_none());
        let ui = autoscaler(&instance, Component::Ui).unwrap();
        let cpu = ui.spec.metrics.unwrap()[0].resource.clone().unwrap();
        assert_eq!(
            (cpu.name.as_str(), cpu.target.average_utilization),
            ("cpu", Some(80))
        );
        assert_eq!(ui.metadata.owner_references.unwrap()[0].uid, "uid-1");
        // The single topology keeps its names and its own autoscaler.
        let single = instance_with_autoscaling();
        assert_eq!(components(&single), vec![Component::Proxy]);
        assert_eq!(
            autoscaler(&single, Component::Proxy)
                .unwrap()
                .metadata
                .name
                .as_deref(),
            Some("gw")
        );
        assert_eq!(deployment(&single, "h").spec.replicas, Some(2));
    }

    fn instance_with_autoscaling() -> LiteLLMInstance {
        instance(json!({
            "masterKey": {"autoGenerate": true},
            "workload": {"replicas": 5, "autoscaling": {"minReplicas": 2, "maxReplicas": 4}},
        }))
    }

    #[test]
    fn topology_and_autoscaling_mistakes_are_reported() {
        let cases = [
            (
                json!({"workload": {"gateway": {"replicas": 1}}}),
                "spec.workload.gateway needs spec.workload.topology: split",
            ),
            (
                json!({"workload": {"topology": "split", "autoscaling": {"maxReplicas": 2}}}),
                "spec.workload.autoscaling is for topology single",
            ),
            (
                json!({"workload": {"autoscaling": {"minReplicas": 3, "maxReplicas": 2}}}),
                "autoscaling of gw: minReplicas 3 exceeds maxReplicas 2",
            ),
            (
                json!({"database": {"urlSecretRef": {"name": "u", "key": "k"}, "schema": "x"}}),
                "spec.database.schema is for discrete values",
            ),
            (
                json!({"database": {"host": "pg", "credentialsSecretRef": {"name": "c"}, "sslMode": "strict"}}),
                "spec.database.sslMode \"strict\" is not one of",
            ),
            (
                json!({"database": {"host": "pg", "credentialsSecretRef": {"name": "c"}, "schema": "a;b"}}),
                "spec.database.schema \"a;b\" is not a plain PostgreSQL identifier",
            ),
        ];
        for (spec, want) in cases {
            let problems = validate(&instance(spec.clone()));
            assert!(
                problems.iter().any(|p| p.starts_with(want)),
                "{spec}: {problems:?}"
            );
        }
    }

    #[test]
    fn the_database_schema_tls_and_ca_reach_url_env_and_volumes() {
        let instance = instance(json!({
            "masterKey": {"autoGenerate": true},
            "database": {
                "host": "pg", "credentialsSecretRef": {"name": "litellm-db"},
                "schema": "tenant_a", "caSecretRef": {"name": "pg-ca", "key": "root.pem"},
                "migration": {"enabled": true},
            },
        }));
        assert!(validate(&instance).is_empty(), "{:?}", validate(&instance));
        assert_eq!(
            database_params(&instance),
            vec![
                ("schema", "tenant_a".to_string()),
                ("sslmode", "verify-full".to_string()),
                ("sslrootcert", "/etc/litellm-database-ca/ca.crt".to_string()),
            ]
        );
        let built = deployment(&instance, "h");
        assert_eq!(
            env(&built, "DATABASE_SCHEMA").and_then(|e| e.value.as_deref()),
            Some("tenant_a")
        );
        let pod = built.spec.template.spec.as_ref().unwrap();
        let volume = pod
            .volumes
            .as_ref()
            .unwrap()
            .iter()
            .find(|v| v.name == "database-ca")
            .unwrap();
        let secret = volume.secret.as_ref().unwrap();
        assert_eq!(secret.secret_name.as_deref(), Some("pg-ca"));
        assert_eq!(secret.items.as_ref().unwrap()[0].key, "root.pem");
        assert_eq!(secret.items.as_ref().unwrap()[0].path, "ca.crt");
        assert!(pod.containers[0]
            .volume_mounts
            .as_ref()
            .unwrap()
            .iter()
            .any(|m| m.mount_path == "/etc/litellm-database-ca"));
        // A rotated CA rolls the pods like a rotated password.
        assert!(referenced_secrets(&instance).contains(&"pg-ca".to_string()));
        let job = migration_job(&instance);
        let job_pod = job.spec.unwrap().template.spec.unwrap();
        assert_eq!(job_pod.volumes.unwrap()[0].name, "database-ca");
        assert!(job_pod.containers[0]
            .env
            .as_ref()
            .unwrap()
            .iter()
            .any(|e| e.name == "DATABASE_SCHEMA"));
        // Without the options, nothing extra.
        let plain = full();
        assert!(database_params(&plain).is_empty());
        assert!(env(&deployment(&plain, "h"), "DATABASE_SCHEMA").is_none());
    }

    #[test]
    fn a_redis_cache_reads_the_discrete_redis_values() {
        let config = proxy_config(&full());
        let params = &config["litellm_settings"]["cache_params"];
        assert_eq!(params["type"], "redis");
        assert_eq!(params["host"], "os.environ/REDIS_HOST");
        assert_eq!(params["port"], "os.environ/REDIS_PORT");
        assert_eq!(params["password"], "os.environ/REDIS_PASSWORD");
        // Another cache type keeps to itself.
        let local = instance(json!({
            "masterKey": {"autoGenerate": true},
            "redis": {"host": "redis"},
            "caching": {"type": "local"},
        }));
        let config = proxy_config(&local);
        assert!(config["litellm_settings"]["cache_params"]
            .get("host")
            .is_none());
    }

    #[test]
    fn a_new_image_gets_a_new_migration_job() {
        let instance = full();
        let job = migration_job(&instance);
        let name = job.metadata.name.clone().unwrap();
        assert!(name.starts_with("gw-migrate-"), "{name}");
        let container = &job
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0];
        assert_eq!(
            container.command.as_deref(),
            Some(
                &[
                    "python".to_string(),
                    "litellm/proxy/prisma_migration.py".to_string()
                ][..]
            )
        );
        let mut upgraded = instance.clone();
        upgraded.spec.image.as_mut().unwrap().tag = Some("main-v1.109.0".into());
        assert_ne!(names::migration_job(&upgraded), name);
    }

    #[test]
    fn the_service_exposes_the_configured_port() {
        let service = service(&full());
        let spec = service.spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("NodePort"));
        assert_eq!(spec.ports.unwrap()[0].port, 8080);
        assert_eq!(spec.selector.unwrap(), proxy_selector(&full()));
    }

    #[test]
    fn the_database_is_discrete_values_or_a_url_secret() {
        let cases = [
            (json!({}), Ok(None)),
            (
                json!({"database": {"migration": {"enabled": false}}}),
                Ok(None),
            ),
            (
                json!({"database": {"host": "pg", "credentialsSecretRef": {"name": "c", "usernameKey": "u"}}}),
                Ok(Some(DatabaseSource::Discrete {
                    host: "pg".into(),
                    port: 5432,
                    name: "litellm".into(),
                    credentials: "c".into(),
                    username_key: "u".into(),
                    password_key: "password".into(),
                })),
            ),
            (
                json!({"database": {"urlSecretRef": {"name": "u", "key": "k"}}}),
                Ok(Some(DatabaseSource::UrlSecret(SecretKeySelector {
                    name: "u".into(),
                    key: "k".into(),
                }))),
            ),
            (
                json!({"database": {"host": "pg", "urlSecretRef": {"name": "u", "key": "k"}}}),
                Err(1),
            ),
            (json!({"database": {"host": "pg"}}), Err(1)),
            (
                json!({"database": {"host": "a@b", "credentialsSecretRef": {"name": "c"}}}),
                Err(1),
            ),
            (
                json!({"database": {"credentialsSecretRef": {"name": "c"}}}),
                Err(1),
            ),
        ];
        for (spec, want) in cases {
            let got = database_source(&instance(spec.clone())).map_err(|problems| problems.len());
            assert_eq!(got, want, "{spec}");
        }
        assert_eq!(
            validate(&instance(
                json!({"database": {"migration": {"enabled": true}}})
            )),
            ["spec.database.migration needs a database (host or urlSecretRef)"]
        );
        assert_eq!(
            validate(&instance(json!({"redis": {"host": "r/x"}}))),
            ["spec.redis.host \"r/x\" is not a host name or IP address"]
        );
        assert!(validate(&full()).is_empty());
    }

    fn generated(key: GeneratedKey, value: &str) -> Secret {
        let instance = full();
        generated_key_secret(
            &instance,
            &key.selector(&instance),
            &crate::litellm::Secret::new(value),
        )
    }

    #[test]
    fn generated_key_secrets_outlive_the_instance_and_name_it() {
        let instance = full();
        for key in GeneratedKey::ALL {
            let secret = generated(key, "sk-generated");
            let meta = &secret.metadata;
            assert_eq!(
                meta.name.as_deref(),
                Some(key.secret_name(&instance).as_str())
            );
            assert_eq!(meta.namespace.as_deref(), Some("team-a"));
            assert!(
                meta.owner_references.is_none(),
                "a garbage collector would delete it with the instance: {meta:?}"
            );
            assert_eq!(
                meta.annotations.as_ref().unwrap()[GENERATED_FOR_ANNOTATION],
                "team-a/gw"
            );
            assert_eq!(meta.labels.as_ref(), Some(&labels(&instance)));
            assert_eq!(
                secret.data.as_ref().unwrap()[key.data_key()].0,
                b"sk-generated"
            );
            assert_eq!(
                marker(&instance, meta),
                Marker::Generated {
                    legacy_owner: false
                }
            );
        }
        assert_eq!(
            GeneratedKey::MasterKey.selector(&instance),
            SecretKeySelector {
                name: "gw-master-key".into(),
                key: "LITELLM_MASTER_KEY".into()
            }
        );
        assert_eq!(GeneratedKey::SaltKey.secret_name(&instance), "gw-salt-key");
        assert_eq!(GeneratedKey::SaltKey.data_key(), "LITELLM_SALT_KEY");
    }

    #[test]
    fn only_the_annotation_or_this_instances_owner_reference_marks_a_secret() {
        let instance = full();
        let owner = instance.controller_owner_ref(&()).unwrap();
        let mut stranger = owner.clone();
        stranger.uid = "uid-of-an-earlier-instance".into();
        let meta = |annotation: Option<&str>, owners: Vec<_>| ObjectMeta {
            annotations: annotation.map(|value| {
                BTreeMap::from([(GENERATED_FOR_ANNOTATION.to_string(), value.to_string())])
            }),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..ObjectMeta::default()
        };
        let cases = [
            (meta(None, vec![]), Marker::Foreign),
            (
                meta(Some("team-a/gw"), vec![]),
                Marker::Generated {
                    legacy_owner: false,
                },
            ),
            // Releases before the annotation: the owner reference marks it.
            (
                meta(None, vec![owner.clone()]),
                Marker::Generated { legacy_owner: true },
            ),
            (
                meta(Some("team-a/gw"), vec![owner.clone()]),
                Marker::Generated { legacy_owner: true },
            ),
            // Another instance's, or another namespace's same-named one.
            (meta(Some("team-a/other"), vec![]), Marker::Foreign),
            (meta(Some("team-b/gw"), vec![]), Marker::Foreign),
            (meta(Some("gw"), vec![]), Marker::Foreign),
            (
                meta(Some("team-a/other"), vec![owner.clone()]),
                Marker::Foreign,
            ),
            (meta(None, vec![stranger]), Marker::Foreign),
        ];
        for (meta, want) in cases {
            assert_eq!(marker(&instance, &meta), want, "{meta:?}");
        }
    }

    #[test]
    fn fingerprints_identify_a_value_without_revealing_it() {
        let a = key_fingerprint(b"sk-0123456789abcdef0123456789abcdef0123456789abcdef");
        assert_eq!(
            a,
            key_fingerprint(b"sk-0123456789abcdef0123456789abcdef0123456789abcdef")
        );
        assert_ne!(
            a,
            key_fingerprint(b"sk-0123456789abcdef0123456789abcdef0123456789abcdee")
        );
        assert!(
            a.starts_with("sha256:") && a.len() == "sha256:".len() + 16,
            "{a}"
        );
        assert!(a["sha256:".len()..].chars().all(|c| c.is_ascii_hexdigit()));
        assert!(!a.contains("0123456789abcdef"));
        // Not a prefix of LiteLLM's token (sha256 of the key) either.
        let token = crate::litellm::token_of(&crate::litellm::Secret::new(
            "sk-0123456789abcdef0123456789abcdef0123456789abcdef",
        ));
        assert!(!token.starts_with(&a["sha256:".len()..]));
    }

    #[test]
    fn a_key_the_instance_has_run_with_is_never_generated_again() {
        use KeyLoss::*;
        let instance = full();
        let salt = GeneratedKey::SaltKey;
        let master = GeneratedKey::MasterKey;
        let ours = generated(salt, "sk-salt");
        let salt_print = key_fingerprint(b"sk-salt");
        let mut legacy = ours.clone();
        legacy.metadata.annotations = None;
        legacy.metadata.owner_references = Some(vec![instance.controller_owner_ref(&()).unwrap()]);
        let mut foreign = ours.clone();
        foreign.metadata.annotations = None;
        let mut no_key = ours.clone();
        no_key.data = Some(BTreeMap::new());
        let mut empty = ours.clone();
        empty.data = Some(BTreeMap::from([(
            SALT_KEY_KEY.to_string(),
            ByteString(vec![]),
        )]));
        let changed = generated(salt, "sk-other");
        let master_secret = generated(master, "sk-master");
        let mut master_rotated = master_secret.clone();
        master_rotated.data = Some(BTreeMap::from([(
            MASTER_KEY_KEY.to_string(),
            ByteString(b"sk-rotated".to_vec()),
        )]));

        let keep = |value: &[u8]| KeyPlan::Keep {
            fingerprint: key_fingerprint(value),
        };
        // (case, key, the Secret of its name, has run, recorded fingerprint, plan)
        type Case<'a> = (
            &'a str,
            GeneratedKey,
            Option<&'a Secret>,
            bool,
            Option<&'a str>,
            KeyPlan,
        );
        let cases: Vec<Case> = vec![
            ("first run", salt, None, false, None, KeyPlan::Generate),
            (
                "first run, master",
                master,
                None,
                false,
                None,
                KeyPlan::Generate,
            ),
            (
                "found again after a re-create",
                salt,
                Some(&ours),
                false,
                None,
                keep(b"sk-salt"),
            ),
            (
                "steady state",
                salt,
                Some(&ours),
                true,
                Some(&salt_print),
                keep(b"sk-salt"),
            ),
            (
                "legacy owner reference",
                salt,
                Some(&legacy),
                true,
                Some(&salt_print),
                KeyPlan::Migrate {
                    fingerprint: salt_print.clone(),
                    patch: marker_migration(&instance, &legacy),
                },
            ),
            (
                "foreign, never run",
                salt,
                Some(&foreign),
                false,
                None,
                KeyPlan::NotOwned,
            ),
            // Also when it holds the very value: never adopted by name.
            (
                "foreign, after a run",
                salt,
                Some(&foreign),
                true,
                Some(&salt_print),
                KeyPlan::Lost(NotMarked),
            ),
            (
                "deleted after a run",
                salt,
                None,
                true,
                Some(&salt_print),
                KeyPlan::Lost(SecretNotFound),
            ),
            (
                "deleted after a run, master",
                master,
                None,
                true,
                None,
                KeyPlan::Lost(SecretNotFound),
            ),
            (
                "key removed",
                salt,
                Some(&no_key),
                true,
                Some(&salt_print),
                KeyPlan::Lost(KeyNotFound),
            ),
            (
                "key emptied",
                salt,
                Some(&empty),
                true,
                Some(&salt_print),
                KeyPlan::Lost(KeyNotFound),
            ),
            // The marker says some instance of this name used it.
            (
                "marked but empty, nothing recorded",
                salt,
                Some(&no_key),
                false,
                None,
                KeyPlan::Lost(KeyNotFound),
            ),
            (
                "salt value changed",
                salt,
                Some(&changed),
                true,
                Some(&salt_print),
                KeyPlan::Lost(ValueChanged),
            ),
            // A master key is rotated by changing its value.
            (
                "master value changed",
                master,
                Some(&master_rotated),
                true,
                Some("sha256:0000000000000000"),
                keep(b"sk-rotated"),
            ),
        ];
        for (case, key, existing, has_run, recorded, want) in cases {
            assert_eq!(
                plan_generated_key(&instance, key, existing, has_run, recorded),
                want,
                "{case}"
            );
        }
    }

    #[test]
    fn the_deployment_reads_the_secrets_it_was_built_with() {
        let generated_salt = instance(json!({"masterKey": {"autoGenerate": true}}));
        let built = deployment(&generated_salt, "h");
        assert!(deployment_reads_secret(&built, "gw-master-key"));
        assert!(deployment_reads_secret(&built, "gw-salt-key"));
        assert!(!deployment_reads_secret(&built, "gw-database-url"));
        // With an existing salt key, the generated one was never read.
        let built = deployment(&full(), "h");
        assert!(!deployment_reads_secret(&built, "gw-salt-key"));
        assert!(deployment_reads_secret(&built, "litellm-secrets"));
        assert!(!deployment_reads_secret(
            &Deployment::default(),
            "gw-master-key"
        ));
    }

    #[test]
    fn the_migration_swaps_the_owner_reference_for_the_annotation_and_nothing_else() {
        let instance = full();
        let ours = instance.controller_owner_ref(&()).unwrap();
        let mut other = ours.clone();
        other.uid = "uid-of-someone-else".into();
        other.controller = Some(false);
        let mut legacy = generated(GeneratedKey::SaltKey, "sk-salt");
        legacy.metadata.annotations = None;
        legacy.metadata.resource_version = Some("42".into());
        legacy.metadata.owner_references = Some(vec![ours.clone()]);
        assert_eq!(
            marker_migration(&instance, &legacy),
            json!({"metadata": {
                "resourceVersion": "42",
                "annotations": {GENERATED_FOR_ANNOTATION: "team-a/gw"},
                "ownerReferences": null,
            }})
        );
        legacy.metadata.owner_references = Some(vec![other.clone(), ours]);
        let patch = marker_migration(&instance, &legacy);
        assert_eq!(patch["metadata"]["ownerReferences"], json!([other]));
        assert!(patch.get("data").is_none() && patch.get("stringData").is_none());
    }
    fn pod_spec(deployment: &Deployment) -> Value {
        serde_json::to_value(deployment.spec.template.spec.as_ref().unwrap()).unwrap()
    }

    #[test]
    fn pod_settings_land_on_the_pods_and_a_role_replaces_a_field_whole() {
        let instance = instance(json!({
            "masterKey": {"autoGenerate": true},
            "database": {"host": "pg", "credentialsSecretRef": {"name": "db"}, "migration": {"enabled": true}},
            "workload": {
                "topology": "split",
                "env": [
                    {"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "provider-keys", "key": "openai"}}},
                    {"name": "LANGFUSE_HOST", "valueFrom": {"configMapKeyRef": {"name": "callbacks", "key": "host", "optional": true}}},
                    {"name": "PLAIN", "value": "p"},
                ],
                "envFrom": [{"secretRef": {"name": "more-keys"}}, {"configMapRef": {"name": "settings"}, "prefix": "X_"}],
                "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r"}},
                "imagePullSecrets": [{"name": "mirror"}],
                "podAnnotations": {"a.example/x": "1"},
                "podLabels": {"tier": "llm"},
                "nodeSelector": {"pool": "cpu"},
                "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                "priorityClassName": "high",
                "gateway": {
                    "env": [{"name": "GATEWAY_ONLY", "value": "g"}],
                    "nodeSelector": {"pool": "gpu"},
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 1000},
                },
            },
        }));
        assert!(validate(&instance).is_empty(), "{:?}", validate(&instance));
        let sa = service_account(&instance);
        assert_eq!(
            sa.metadata.annotations.unwrap()["eks.amazonaws.com/role-arn"],
            "arn:aws:iam::1:role/r"
        );
        // (component, env names of the user's, nodeSelector pool, runAsNonRoot)
        let cases = [
            (
                Component::Backend,
                vec!["OPENAI_API_KEY", "LANGFUSE_HOST", "PLAIN"],
                "cpu",
                Value::Null,
            ),
            (
                Component::Ui,
                vec!["OPENAI_API_KEY", "LANGFUSE_HOST", "PLAIN"],
                "cpu",
                Value::Null,
            ),
            (Component::Gateway, vec!["GATEWAY_ONLY"], "gpu", json!(true)),
        ];
        for (component, user_env, pool, non_root) in cases {
            let deployment = component_deployment(&instance, component, "h");
            let pod = pod_spec(&deployment);
            let container = &pod["containers"][0];
            let names: Vec<&str> = container["env"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["name"].as_str().unwrap())
                .collect();
            // The provider's variables first, then the user's.
            assert_eq!(names[0], "LITELLM_MASTER_KEY");
            assert_eq!(
                &names[names.len() - user_env.len()..],
                user_env.as_slice(),
                "{component:?}"
            );
            assert_eq!(pod["nodeSelector"]["pool"], pool, "{component:?}");
            assert_eq!(
                container["securityContext"]["runAsNonRoot"], non_root,
                "{component:?}"
            );
            assert_eq!(
                container["securityContext"]["allowPrivilegeEscalation"],
                json!(non_root.is_null().then_some(false)),
                "{component:?}"
            );
            assert_eq!(pod["imagePullSecrets"], json!([{"name": "mirror"}]));
            assert_eq!(pod["tolerations"][0]["key"], "dedicated");
            assert_eq!(pod["priorityClassName"], "high");
            assert_eq!(
                pod["securityContext"]["seccompProfile"]["type"],
                "RuntimeDefault"
            );
            let meta = deployment.spec.template.metadata.as_ref().unwrap();
            assert_eq!(meta.labels.as_ref().unwrap()["tier"], "llm");
            assert_eq!(
                meta.labels.as_ref().unwrap()["app.kubernetes.io/component"],
                component.label()
            );
            assert_eq!(meta.annotations.as_ref().unwrap()["a.example/x"], "1");
            assert!(meta
                .annotations
                .as_ref()
                .unwrap()
                .contains_key(SECRETS_HASH_ANNOTATION));
        }
        let backend = pod_spec(&component_deployment(&instance, Component::Backend, "h"));
        assert_eq!(
            backend["containers"][0]["envFrom"],
            json!([{"secretRef": {"name": "more-keys"}}, {"configMapRef": {"name": "settings"}, "prefix": "X_"}])
        );
        assert_eq!(
            backend["containers"][0]["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "LANGFUSE_HOST")
                .unwrap()["valueFrom"],
            json!({"configMapKeyRef": {"name": "callbacks", "key": "host", "optional": true}})
        );
        // Every referenced Secret and ConfigMap feeds the fingerprint.
        let secrets = referenced_secrets(&instance);
        for name in ["provider-keys", "more-keys", "gw-database-url"] {
            assert!(secrets.contains(&name.to_string()), "{secrets:?}");
        }
        assert_eq!(
            referenced_config_maps(&instance),
            vec!["callbacks", "settings"]
        );
        // The migration Job: the workload's scheduling and pull Secrets, not
        // its environment.
        let job = serde_json::to_value(
            migration_job(&instance)
                .spec
                .unwrap()
                .template
                .spec
                .unwrap(),
        )
        .unwrap();
        assert_eq!(job["imagePullSecrets"], json!([{"name": "mirror"}]));
        assert_eq!(job["nodeSelector"]["pool"], "cpu");
        assert!(job["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["name"] != "PLAIN"));
        assert!(job["containers"][0].get("envFrom").is_none());
    }

    #[test]
    fn the_default_security_context_is_restrictive_and_unset_settings_add_nothing() {
        let deployment = deployment(&instance(json!({"masterKey": {"autoGenerate": true}})), "h");
        let pod = pod_spec(&deployment);
        assert_eq!(
            pod["containers"][0]["securityContext"],
            json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}})
        );
        assert_eq!(
            pod["securityContext"],
            json!({"seccompProfile": {"type": "RuntimeDefault"}})
        );
        for field in [
            "imagePullSecrets",
            "nodeSelector",
            "tolerations",
            "affinity",
            "topologySpreadConstraints",
            "priorityClassName",
        ] {
            assert!(pod.get(field).is_none(), "{field}");
        }
        assert!(pod["containers"][0].get("envFrom").is_none());
        assert!(service_account(&instance(json!({})))
            .metadata
            .annotations
            .is_none());
    }

    #[test]
    fn pod_settings_mistakes_are_named_by_field() {
        let cases = [
            (
                json!({"env": [{"name": "LITELLM_MASTER_KEY", "value": "x"}]}),
                "spec.workload.env[0].name \"LITELLM_MASTER_KEY\" is set by the provider",
            ),
            (
                json!({"env": [{"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}),
                "spec.workload.env[0].name \"DATABASE_URL\"",
            ),
            (
                json!({"env": [{"name": "CONFIG_FILE_PATH", "value": "/x"}]}),
                "\"CONFIG_FILE_PATH\" is set by the provider",
            ),
            (
                json!({"env": [{"name": "A", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}),
                "spec.workload.env[0] has both value and valueFrom",
            ),
            (
                json!({"env": [{"name": "A", "valueFrom": {}}]}),
                "spec.workload.env[0].valueFrom needs exactly one",
            ),
            (
                json!({"env": [{"name": "1A", "value": "x"}]}),
                "spec.workload.env[0].name \"1A\" is not an environment variable name",
            ),
            (
                json!({"env": [{"name": "A", "value": "x"}, {"name": "A", "value": "y"}]}),
                "spec.workload.env names \"A\" twice",
            ),
            (
                json!({"envFrom": [{}]}),
                "spec.workload.envFrom[0] needs exactly one of secretRef and configMapRef",
            ),
            (
                json!({"envFrom": [{"secretRef": {"name": "a"}, "configMapRef": {"name": "b"}}]}),
                "spec.workload.envFrom[0] needs exactly one",
            ),
            (
                json!({"podLabels": {"app.kubernetes.io/component": "x"}}),
                "spec.workload.podLabels \"app.kubernetes.io/component\"",
            ),
            (
                json!({"podAnnotations": {"litellm.crossplane.io/config-hash": "x"}}),
                "spec.workload.podAnnotations \"litellm.crossplane.io/config-hash\"",
            ),
            (
                json!({"serviceAccount": {"annotations": {"litellm.crossplane.io/generated-for": "x"}}}),
                "spec.workload.serviceAccount.annotations",
            ),
            (
                json!({"topology": "split", "backend": {"env": [{"name": "REDIS_HOST", "value": "x"}]}}),
                "spec.workload.backend.env[0].name \"REDIS_HOST\"",
            ),
            (
                json!({"topology": "split", "ui": {"podLabels": {"app.kubernetes.io/name": "x"}}}),
                "spec.workload.ui.podLabels",
            ),
        ];
        for (workload, expected) in cases {
            let problems = validate(&instance(
                json!({"masterKey": {"autoGenerate": true}, "workload": workload}),
            ));
            assert!(
                problems.iter().any(|p| p.contains(expected)),
                "{workload}: {problems:?} lacks {expected:?}"
            );
        }
    }

    /// The budget of `component` as JSON (`null` when it gets none).
    fn budget_of(spec: Value, component: Component) -> Value {
        serde_json::to_value(disruption_budget(&instance(spec), component)).unwrap()
    }

    #[test]
    fn a_disruption_budget_exists_with_more_than_one_replica_unless_disabled() {
        let single = |workload: Value| {
            budget_of(
                json!({"masterKey": {"autoGenerate": true}, "workload": workload}),
                Component::Proxy,
            )
        };
        // One replica (the default, or autoscaling from 1): none.
        assert_eq!(single(json!({})), Value::Null);
        assert_eq!(single(json!({"replicas": 1})), Value::Null);
        assert_eq!(
            single(json!({"replicas": 5, "autoscaling": {"maxReplicas": 4}})),
            Value::Null,
            "autoscaling without minReplicas counts as 1"
        );
        assert_eq!(
            single(json!({"replicas": 3, "podDisruptionBudget": {"enabled": false}})),
            Value::Null
        );
        // Three replicas: maxUnavailable 1 by default, selecting exactly
        // the Deployment's pods, owned and labelled as every object.
        let budget = single(json!({"replicas": 3}));
        assert_eq!(budget["metadata"]["name"], "gw");
        assert_eq!(budget["metadata"]["namespace"], "team-a");
        assert_eq!(budget["metadata"]["ownerReferences"][0]["uid"], "uid-1");
        assert_eq!(budget["metadata"]["ownerReferences"][0]["controller"], true);
        for (key, value) in labels(&instance(json!({}))) {
            assert_eq!(budget["metadata"]["labels"][&key], value.as_str());
        }
        assert_eq!(
            budget["spec"],
            json!({
                "maxUnavailable": 1,
                "selector": {"matchLabels": {
                    "app.kubernetes.io/name": "litellm",
                    "app.kubernetes.io/instance": "gw",
                    "app.kubernetes.io/component": "proxy",
                }},
                "unhealthyPodEvictionPolicy": "AlwaysAllow",
            })
        );
        let deployment = component_deployment(
            &instance(json!({"workload": {"replicas": 3}})),
            Component::Proxy,
            "",
        );
        assert_eq!(
            serde_json::to_value(&deployment.spec.selector).unwrap(),
            budget["spec"]["selector"]
        );
        // Autoscaling's minimum decides.
        assert_eq!(
            single(json!({"autoscaling": {"minReplicas": 2, "maxReplicas": 4}}))["spec"]
                ["maxUnavailable"],
            1
        );
        // The counts given, as given.
        assert_eq!(
            single(json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": 2}}))["spec"],
            json!({
                "minAvailable": 2,
                "selector": budget["spec"]["selector"],
                "unhealthyPodEvictionPolicy": "AlwaysAllow",
            })
        );
        assert_eq!(
            single(json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": "50%"}}))
                ["spec"]["maxUnavailable"],
            "50%"
        );
        assert_eq!(
            single(
                json!({"replicas": 3, "podDisruptionBudget": {"enabled": true, "minAvailable": "50%"}})
            )["spec"]["minAvailable"],
            "50%"
        );
    }

    #[test]
    fn split_roles_get_their_own_budgets_a_role_replacing_the_workloads_whole() {
        let spec = json!({
            "masterKey": {"autoGenerate": true},
            "workload": {
                "topology": "split",
                "replicas": 3,
                "podDisruptionBudget": {"minAvailable": "50%"},
                "gateway": {"podDisruptionBudget": {"maxUnavailable": 2}},
                "backend": {"autoscaling": {"minReplicas": 2, "maxReplicas": 6}},
                "ui": {"replicas": 1},
            },
        });
        let gateway = budget_of(spec.clone(), Component::Gateway);
        assert_eq!(gateway["metadata"]["name"], "gw-gateway");
        assert_eq!(
            gateway["spec"],
            json!({"maxUnavailable": 2, "selector": {"matchLabels": {
                "app.kubernetes.io/name": "litellm",
                "app.kubernetes.io/instance": "gw",
                "app.kubernetes.io/component": "gateway",
            }}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
            "the role's budget replaces the workload's whole (no minAvailable from it)"
        );
        let backend = budget_of(spec.clone(), Component::Backend);
        assert_eq!(backend["metadata"]["name"], "gw-backend");
        assert_eq!(backend["spec"]["minAvailable"], "50%");
        assert_eq!(
            backend["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"],
            "backend"
        );
        assert_eq!(budget_of(spec.clone(), Component::Ui), Value::Null);
        let mut disabled = spec;
        disabled["workload"]["backend"]["podDisruptionBudget"] = json!({"enabled": false});
        assert_eq!(budget_of(disabled, Component::Backend), Value::Null);
        assert!(validate(&instance(json!({
            "masterKey": {"autoGenerate": true},
            "workload": {"topology": "split", "replicas": 3,
                         "gateway": {"podDisruptionBudget": {"minAvailable": 2}}},
        })))
        .is_empty());
    }

    #[test]
    fn disruption_budget_mistakes_are_refused_naming_the_field() {
        for (workload, expected) in [
            (
                json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": 1, "maxUnavailable": 1}}),
                "spec.workload.podDisruptionBudget sets both minAvailable and maxUnavailable",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": "half"}}),
                "spec.workload.podDisruptionBudget.maxUnavailable \"half\" is neither a number nor a percentage",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": "150%"}}),
                "spec.workload.podDisruptionBudget.minAvailable \"150%\" is neither",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": "50"}}),
                "spec.workload.podDisruptionBudget.minAvailable \"50\" is neither",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": -1}}),
                "spec.workload.podDisruptionBudget.maxUnavailable -1 is negative",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": 3}}),
                "spec.workload.podDisruptionBudget.minAvailable 3 is not below the 3 replicas of \
                 Deployment gw: no node could ever be drained",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": "90%"}}),
                "spec.workload.podDisruptionBudget.minAvailable \"90%\" (3 pods, rounded up) is \
                 not below the 3 replicas of Deployment gw",
            ),
            (
                json!({"replicas": 2, "podDisruptionBudget": {"minAvailable": "51%"}}),
                "spec.workload.podDisruptionBudget.minAvailable \"51%\" (2 pods, rounded up) is \
                 not below the 2 replicas",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": 0}}),
                "spec.workload.podDisruptionBudget.maxUnavailable 0 lets no pod be evicted",
            ),
            (
                json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": "0%"}}),
                "spec.workload.podDisruptionBudget.maxUnavailable \"0%\" lets no pod be evicted",
            ),
            (
                json!({"topology": "split", "gateway": {"podDisruptionBudget": {"minAvailable": "100%"}}}),
                "spec.workload.gateway.podDisruptionBudget.minAvailable \"100%\" lets no pod be \
                 evicted",
            ),
            (
                json!({"autoscaling": {"minReplicas": 2, "maxReplicas": 5},
                       "podDisruptionBudget": {"minAvailable": 2}}),
                "spec.workload.podDisruptionBudget.minAvailable 2 is not below the 2 minReplicas \
                 of Deployment gw",
            ),
            (
                json!({"topology": "split", "replicas": 2,
                       "backend": {"podDisruptionBudget": {"minAvailable": 4}}}),
                "spec.workload.backend.podDisruptionBudget.minAvailable 4 is not below the 2 \
                 replicas of Deployment gw-backend",
            ),
            (
                json!({"topology": "split", "replicas": 2, "podDisruptionBudget": {"minAvailable": 2}}),
                "spec.workload.podDisruptionBudget.minAvailable 2 is not below the 2 replicas of \
                 Deployment gw-gateway",
            ),
            (
                json!({"topology": "split", "ui": {"podDisruptionBudget": {"maxUnavailable": "1.5%"}}}),
                "spec.workload.ui.podDisruptionBudget.maxUnavailable \"1.5%\" is neither",
            ),
        ] {
            let problems = validate(&instance(json!({
                "masterKey": {"autoGenerate": true},
                "workload": workload,
            })));
            assert!(
                problems.iter().any(|p| p.contains(expected)),
                "{workload}: {problems:?}"
            );
        }
        // An integer minAvailable is only held against the replicas of a
        // Deployment that gets a budget: none with one replica or disabled.
        for workload in [
            json!({"podDisruptionBudget": {"minAvailable": 1}}),
            json!({"replicas": 3, "podDisruptionBudget": {"enabled": false, "minAvailable": 3}}),
            json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": 2}}),
            json!({"replicas": 3, "podDisruptionBudget": {"maxUnavailable": "100%"}}),
            json!({"replicas": 3, "podDisruptionBudget": {"minAvailable": "0%"}}),
        ] {
            let problems = validate(&instance(json!({
                "masterKey": {"autoGenerate": true},
                "workload": workload,
            })));
            assert!(problems.is_empty(), "{workload}: {problems:?}");
        }
    }
}
