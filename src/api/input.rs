//! The function's `Input` (`litellm.fn.crossplane.io/v1beta1`): how to find
//! or render the instance, where the XR keeps its request, and the policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::SecretKeySelector;
use super::instance::LiteLLMInstanceSpec;

/// API group of the function input.
pub const INPUT_GROUP: &str = "litellm.fn.crossplane.io";
/// `apiVersion` of the function input.
pub const INPUT_API_VERSION: &str = "litellm.fn.crossplane.io/v1beta1";
/// Kind of the function input.
pub const INPUT_KIND: &str = "Input";

/// Input of `function-litellm`, the `input` block of a pipeline step.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Input {
    /// `litellm.fn.crossplane.io/v1beta1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `Input`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Ignored; allowed so the input can be written as a Kubernetes object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::optional_free_form_schema")]
    pub metadata: Option<super::common::FreeForm>,
    /// The LiteLLMInstance the rendered entities reconcile against.
    pub instance: InstanceSource,
    /// Where the XR keeps its request.
    #[serde(default)]
    pub fields: FieldPaths,
    /// Namespace of the composed resources for a legacy cluster-scoped XR.
    /// Defaults to the claim's namespace. Ignored for namespaced (v2) XRs,
    /// whose composed resources always live in the XR's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What the platform allows.
    #[serde(default)]
    pub policy: Policy,
    /// Where each field the function reports goes in the XR's status, or
    /// `""` to leave it out: an XRD that does not declare one would make
    /// Crossplane refuse the whole status.
    #[serde(default)]
    pub status: StatusFields,
    /// Labels, annotations and management policies of the composed
    /// resources.
    #[serde(default)]
    pub composed: ComposedMeta,
    /// Compose a Crossplane `Usage` (`protection.crossplane.io/v1beta1`)
    /// of the rendered LiteLLMInstance by each entity rendered (team,
    /// budget, keys, models, users, MCP servers, customers), so that Crossplane deletes the instance only after they are gone
    /// from LiteLLM. Needs `attach` or `provision`; false by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usages: Option<bool>,
    /// How long Crossplane may cache the response: `30s`, `2m`, `1h`.
    /// `60s` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[1-9][0-9]*(s|m|h)$"))]
    pub ttl: Option<String>,
}

/// Exactly one way to find the instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstanceSource {
    /// Use an existing LiteLLMInstance. The function asks Crossplane for it
    /// to report its endpoint and readiness in the XR's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<InstanceReference>,
    /// Render a LiteLLMInstance that attaches to an existing proxy
    /// (`workload.managed: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<Attach>,
    /// Render a LiteLLMInstance whose proxy the provider provisions; the
    /// object is its spec, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provision: Option<LiteLLMInstanceSpec>,
}

/// An existing LiteLLMInstance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstanceReference {
    pub name: String,
    /// Defaults to the composed resources' namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// An existing proxy to attach to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attach {
    /// Admin API URL.
    #[schemars(regex(pattern = r"^https?://[^\s/?#]+"))]
    pub endpoint: String,
    /// URL for LLM traffic, when it differs from the admin API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^https?://[^\s/?#]+"))]
    pub gateway_endpoint: Option<String>,
    /// The master key of the existing proxy.
    pub master_key_secret_ref: SecretKeySelector,
}

/// Labels, annotations and management policies of the composed resources.
/// Applied in this order, a later one winning for the same key: the XR's
/// labels, `all`, the kind's section, `byName`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComposedMeta {
    /// Copy the XR's labels onto every composed resource (those under
    /// `crossplane.io/`, which Crossplane sets itself, excepted). True by
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xr_labels: Option<bool>,
    /// Every composed resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<ResourceMeta>,
    /// The rendered LiteLLMInstance (no management policies: it is not a
    /// managed resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<ResourceMeta>,
    /// The LiteLLMTeam.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<ResourceMeta>,
    /// The LiteLLMBudget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<ResourceMeta>,
    /// Every LiteLLMVirtualKey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<ResourceMeta>,
    /// Every LiteLLMModel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<ResourceMeta>,
    /// Every LiteLLMUser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<ResourceMeta>,
    /// Every LiteLLMMCPServer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<ResourceMeta>,
    /// Every LiteLLMCustomer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<ResourceMeta>,
    /// Every LiteLLMAccessGroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_groups: Option<ResourceMeta>,
    /// One composed resource, by composition-resource name (`team`,
    /// `budget`, `customer-budget`, `instance`, `key-<name>`,
    /// `model-<name as mapped>`, `user-<name>`, `mcp-<name>`,
    /// `customer-<name>`, `access-group-<name>`): the place for
    /// `crossplane.io/external-name`, which names one LiteLLM object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_name: Option<std::collections::BTreeMap<String, ResourceMeta>>,
}

/// What the input sets on a composed resource.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceMeta {
    /// Labels to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<std::collections::BTreeMap<String, String>>,
    /// Annotations to add, such as `crossplane.io/paused: "true"` or
    /// `crossplane.io/poll-interval: 5m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
    /// `spec.managementPolicies` of a team, budget, key, model, user, MCP
    /// server, customer or access group, such as `["Observe"]` to import an existing
    /// LiteLLM object untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub management_policies: Option<Vec<super::common::ManagementPolicy>>,
}

/// Paths (dot-separated, from the XR's root, under `status.`) of the
/// fields the function reports; each defaults to `status.<field>`, and
/// `""` leaves the field out.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusFields {
    /// The LiteLLM team id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// `[{name, secretName, ready}]`, one per key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<String>,
    /// The proxy's admin endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The proxy's gateway endpoint, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_endpoint: Option<String>,
    /// Whether the LiteLLMInstance is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_ready: Option<String>,
    /// Whether everything composed is ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<String>,
    /// `[{name, userId, ready}]`, one per user; only reported for an XR
    /// that asks for users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<String>,
    /// `[{name, serverId, serverName, ready}]`, one per MCP server; only
    /// reported for an XR that asks for MCP servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<String>,
    /// `[{name, customerId, ready}]`, one per customer; only reported for
    /// an XR that asks for customers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<String>,
    /// `[{name, accessGroupId, ready}]`, one per access group; only
    /// reported for an XR that asks for access groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_groups: Option<String>,
}

impl StatusFields {
    /// Each reported field: its name (as in the input and the default
    /// path) and where it goes, `None` when left out.
    pub fn paths(&self) -> [(&'static str, Option<String>); 10] {
        let path = |name: &str, set: &Option<String>| match set.as_deref() {
            None => Some(format!("status.{name}")),
            Some("") => None,
            Some(path) => Some(path.to_string()),
        };
        [
            ("teamId", path("teamId", &self.team_id)),
            ("keys", path("keys", &self.keys)),
            ("endpoint", path("endpoint", &self.endpoint)),
            (
                "gatewayEndpoint",
                path("gatewayEndpoint", &self.gateway_endpoint),
            ),
            ("instanceReady", path("instanceReady", &self.instance_ready)),
            ("ready", path("ready", &self.ready)),
            ("users", path("users", &self.users)),
            ("mcpServers", path("mcpServers", &self.mcp_servers)),
            ("customers", path("customers", &self.customers)),
            ("accessGroups", path("accessGroups", &self.access_groups)),
        ]
    }
}

/// Field paths (dot-separated, from the XR's root) of the request's parts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldPaths {
    /// The team: `{alias, models, metadata, blocked, members,
    /// membersPolicy, objectPermission}`. `spec.team`.
    #[serde(default = "FieldPaths::default_team")]
    pub team: String,
    /// The budget: `{maxBudget, softBudget, duration, tpmLimit, rpmLimit,
    /// maxParallelRequests}`. `spec.budget`.
    #[serde(default = "FieldPaths::default_budget")]
    pub budget: String,
    /// The keys: `[{name, alias, models, maxBudget, budgetDuration, duration,
    /// tpmLimit, rpmLimit, metadata, user, objectPermission}]`. `spec.keys`.
    #[serde(default = "FieldPaths::default_keys")]
    pub keys: String,
    /// The models: `[{name, model, apiBase, apiVersion, apiKeySecretRef, tpm,
    /// rpm}]`. `spec.models`.
    #[serde(default = "FieldPaths::default_models")]
    pub models: String,
    /// The users: `[{name, email, alias, role, models, maxBudget,
    /// budgetDuration, tpmLimit, rpmLimit, maxParallelRequests,
    /// metadata}]`. `spec.users`.
    #[serde(default = "FieldPaths::default_users")]
    pub users: String,
    /// The MCP servers: `[{name, transport, url, serverName, description,
    /// authType, authSecretRef, allowedTools, accessGroups, mcpInfo}]`.
    /// `spec.mcpServers`.
    #[serde(default = "FieldPaths::default_mcp_servers")]
    pub mcp_servers: String,
    /// The customers (end users): `[{name, alias, models,
    /// allowedModelRegion, defaultModel, budget}]`. `spec.customers`.
    #[serde(default = "FieldPaths::default_customers")]
    pub customers: String,
    /// The budget of customers (end users) held to one: `{maxBudget,
    /// softBudget, duration, tpmLimit, rpmLimit, maxParallelRequests}`, the
    /// limits each such customer has on its own. `spec.customerBudget`.
    #[serde(default = "FieldPaths::default_customer_budget")]
    pub customer_budget: String,
    /// The guardrails of the team: `[name]`, names of the platform's
    /// `LiteLLMGuardrail`s. `spec.guardrails`.
    #[serde(default = "FieldPaths::default_guardrails")]
    pub guardrails: String,
    /// The team's access groups: `[{name, description, models}]`.
    /// `spec.accessGroups`.
    #[serde(default = "FieldPaths::default_access_groups")]
    pub access_groups: String,
    /// The team's logging destinations (LiteLLM's team callbacks):
    /// `[{callbackName, callbackType, callbackVars, secretCallbackVars}]`,
    /// `secretCallbackVars` naming Secrets (`{name, key}`) of the namespace
    /// the resources go to. `spec.logging`.
    #[serde(default = "FieldPaths::default_logging")]
    pub logging: String,
}

impl FieldPaths {
    fn default_team() -> String {
        "spec.team".into()
    }
    fn default_budget() -> String {
        "spec.budget".into()
    }
    fn default_keys() -> String {
        "spec.keys".into()
    }
    fn default_models() -> String {
        "spec.models".into()
    }
    fn default_users() -> String {
        "spec.users".into()
    }
    fn default_mcp_servers() -> String {
        "spec.mcpServers".into()
    }
    fn default_customers() -> String {
        "spec.customers".into()
    }
    fn default_customer_budget() -> String {
        "spec.customerBudget".into()
    }
    fn default_guardrails() -> String {
        "spec.guardrails".into()
    }
    fn default_access_groups() -> String {
        "spec.accessGroups".into()
    }
    fn default_logging() -> String {
        "spec.logging".into()
    }
}

impl Default for FieldPaths {
    fn default() -> Self {
        FieldPaths {
            team: Self::default_team(),
            budget: Self::default_budget(),
            keys: Self::default_keys(),
            models: Self::default_models(),
            users: Self::default_users(),
            mcp_servers: Self::default_mcp_servers(),
            customers: Self::default_customers(),
            customer_budget: Self::default_customer_budget(),
            guardrails: Self::default_guardrails(),
            access_groups: Self::default_access_groups(),
            logging: Self::default_logging(),
        }
    }
}

/// The platform's policy. Unset means no limit, but for what an XR could
/// take from others: Secrets, credentials, MCP servers, access groups and
/// user ids of a namespace of the platform's need their list there, and
/// the proxy-wide admin user roles need `allowedUserRoles`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// Models a team, key or model entry may name. An entry ending in `*`
    /// admits every name with that prefix. A team without models (or with
    /// an empty list, which LiteLLM reads as every model) gets this list
    /// when every entry is an exact name; with a `*` entry it must list them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_models: Option<Vec<String>>,
    /// Ceiling of the team budget in USD; an XR without `maxBudget` in its
    /// budget (or without a budget) gets the ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub max_budget: Option<String>,
    /// Ceiling of each key's budget in USD; a key without `maxBudget` gets
    /// it, or the team budget when that is lower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub max_key_budget: Option<String>,
    /// Most keys one XR may request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_keys: Option<u32>,
    /// Whether the XR may render LiteLLMModel entries; true by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_models: Option<bool>,
    /// LiteLLM providers an XR's model may use: the part of its `model`
    /// before the first `/` (`openai`, `bedrock`, `vertex_ai`, `azure`), or
    /// its `customLlmProvider`. Unset: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 64)))]
    pub allowed_providers: Option<Vec<String>>,
    /// Secrets an XR's model may read its credentials from (and an MCP
    /// server's, and a logging destination's `secretCallbackVars`), by name
    /// (an entry ending in `*` admits every name with that prefix). Required
    /// for credentials when the composed resources go to a namespace of the
    /// platform's (`namespace` on a legacy XR): a claim could otherwise
    /// name any Secret there, the proxy's master key included, and have it
    /// sent to an upstream of its choosing. Unset in the tenant's own
    /// namespace: any of its Secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 253)))]
    pub allowed_secrets: Option<Vec<String>>,
    /// `LiteLLMCredential`s an XR's model may use (`credentialRef`), by
    /// name (an entry ending in `*` admits every name with that prefix).
    /// Required for a credential reference when the composed resources go
    /// to a namespace of the platform's, for the reason of
    /// `allowedSecrets`. Unset in the tenant's own namespace: any of its
    /// credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 253)))]
    pub allowed_credentials: Option<Vec<String>>,
    /// Most users (`LiteLLMUser`) one XR may request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_users: Option<u32>,
    /// Roles an XR's user may have (`internal_user`,
    /// `internal_user_viewer`, `proxy_admin`, `proxy_admin_viewer`). Unset:
    /// `internal_user` and `internal_user_viewer`; the admin roles
    /// administer (or see) the whole proxy, every tenant's teams and keys,
    /// so an XR gets one only when listed here, and never from a tenant's
    /// namespace (the provider refuses it outside the LiteLLMInstance's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4))]
    pub allowed_user_roles: Option<Vec<crate::api::user::UserRole>>,
    /// Most members the XR's team may have (`team.members`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_members: Option<u32>,
    /// Whether a team member may have role `admin` (who manages the
    /// team's members and keys in LiteLLM; only with an Enterprise
    /// licence); true by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_team_admins: Option<bool>,
    /// LiteLLM user ids (users not rendered by the XR) a team member may
    /// name by `userId`, by id (an entry ending in `*` admits every id with
    /// that prefix). Required for a `userId` when the composed resources go
    /// to a namespace of the platform's. Refused outright for a tenant's
    /// namespace on a shared instance, where the provider takes members
    /// only by `userRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 512)))]
    pub allowed_user_ids: Option<Vec<String>>,
    /// Whether the XR may render `LiteLLMMCPServer`s; true by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_mcp_servers: Option<bool>,
    /// Hosts an XR's MCP server URL may name: `mcp.example.com`, or
    /// `*.example.com` for every host below it. The proxy calls the URL from
    /// inside its own network, so an unlisted host could be any service
    /// the proxy reaches. Unset: any host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 253)))]
    pub allowed_mcp_hosts: Option<Vec<String>>,
    /// Existing `LiteLLMMCPServer`s (not rendered by the XR) a team's or
    /// key's `objectPermission.mcpServers` may name, by name (an entry
    /// ending in `*` admits every name with that prefix). Required for them
    /// when the composed resources go to a namespace of the platform's: a
    /// claim could otherwise reach any of the platform's servers, with
    /// their credentials. Unset in the tenant's own namespace: any of its
    /// servers. The XR's own servers need no entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 253)))]
    pub allowed_mcp_servers: Option<Vec<String>>,
    /// MCP access groups a team's or key's
    /// `objectPermission.mcpAccessGroups` may name (an entry ending in `*`
    /// admits every name with that prefix). Required for them when the
    /// composed resources go to a namespace of the platform's; in a
    /// tenant's namespace on a shared instance each must also start with
    /// the namespace and a `/` (the provider's rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 317)))]
    pub allowed_mcp_access_groups: Option<Vec<String>>,
    /// Whether the XR may render `LiteLLMCustomer`s (end users); true by
    /// default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_customers: Option<bool>,
    /// Most customers (`LiteLLMCustomer`) one XR may request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_customers: Option<u32>,
    /// Ceiling in USD of the customers' budget (`customerBudget`), which
    /// each customer held to it has on its own; a customer budget without
    /// `maxBudget` gets the ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub max_customer_budget: Option<String>,
    /// Guardrails (the platform's `LiteLLMGuardrail`s, by `guardrailName`)
    /// an XR's team may name in `guardrails` (an entry ending in `*` admits
    /// every name with that prefix). Unset or empty: none. A guardrail sees
    /// every request and answer of the teams that name it, and guardrails
    /// are the platform's alone, so only those listed here may be named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 253)))]
    pub allowed_guardrails: Option<Vec<String>>,
    /// Guardrails every XR's team has, whatever the XR asks for: added
    /// before the XR's own, and no XR can drop them. LiteLLM runs a team's
    /// guardrails on every request of its keys. Needs an Enterprise licence
    /// on the proxy (LiteLLM reserves team guardrails for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(min = 1, max = 253)))]
    pub required_guardrails: Option<Vec<String>>,
    /// Whether the XR may render `LiteLLMAccessGroup`s for its team; true
    /// by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_access_groups: Option<bool>,
    /// Most access groups (`LiteLLMAccessGroup`) one XR may request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_access_groups: Option<u32>,
    /// Whether the XR's team may have logging destinations of its own
    /// (`logging`: LiteLLM's team callbacks, which send a log of each of
    /// the team's requests, prompts and answers included, to the XR's
    /// destination with the XR's credentials); true by default. Even when
    /// false, `logging: []` (the team's own logging off) is rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_logging: Option<bool>,
    /// Integrations (`callbackName`: `langfuse`, `langsmith`, `datadog`,
    /// ...) an XR's logging destination may use (an entry ending in `*`
    /// admits every name with that prefix). Unset: any integration the
    /// provider accepts (those that take a team's own credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(max = 64)))]
    pub allowed_logging_callbacks: Option<Vec<String>>,
    /// Most logging destinations (`logging` entries) one XR's team may
    /// have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_logging_callbacks: Option<u32>,
}
