//! Builds the desired composed resources from a validated request. Pure:
//! the same request always gives the same resources, under the same
//! composition-resource names.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::api::input::{Attach, InstanceSource};
use crate::api::instance::LiteLLMInstanceSpec;
use crate::api::Limits;
use crate::api::API_VERSION;

use super::names;
use super::request::{Amount, BudgetRequest, Member, PermissionRequest, XrRequest};

/// Where the composed resources go and what they point at.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// The XR's name: the prefix of every composed object's name.
    pub xr_name: String,
    /// Namespace of the composed resources.
    pub namespace: String,
    /// The instance the entities reconcile against.
    pub instance: InstanceTarget,
    /// `metadata.name` of the observed composed resources, by
    /// composition-resource name ([`Target::object_name`]).
    pub observed_names: BTreeMap<String, String>,
    /// Whether the XR's models are its team's (`teamRef`): never
    /// published under a public name, whatever namespace they go to. So
    /// for a tenant's XR (namespaced, or a claim's) on a proxy others may
    /// share (referenced or attached; a proxy provisioned for the XR is
    /// its own).
    pub team_models: bool,
}

/// The instance the entities point at.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceTarget {
    /// An existing LiteLLMInstance.
    Existing {
        name: String,
        namespace: Option<String>,
    },
    /// A LiteLLMInstance this function renders, with its spec.
    Rendered(Box<LiteLLMInstanceSpec>),
}

impl InstanceTarget {
    /// The target for an input's instance source, which must hold exactly
    /// one of `reference`, `attach` and `provision` (checked by the caller).
    pub fn from_source(source: &InstanceSource) -> Option<InstanceTarget> {
        match (&source.reference, &source.attach, &source.provision) {
            (Some(r), None, None) => Some(InstanceTarget::Existing {
                name: r.name.clone(),
                namespace: r.namespace.clone(),
            }),
            (None, Some(a), None) => Some(InstanceTarget::Rendered(Box::new(attached_spec(a)))),
            (None, None, Some(spec)) => Some(InstanceTarget::Rendered(Box::new(spec.clone()))),
            _ => None,
        }
    }
}

/// The spec of an instance that attaches to an existing proxy.
fn attached_spec(attach: &Attach) -> LiteLLMInstanceSpec {
    use crate::api::instance::{MasterKey, Workload};
    LiteLLMInstanceSpec {
        workload: Some(Workload {
            managed: Some(false),
            endpoint: Some(attach.endpoint.clone()),
            gateway_endpoint: attach.gateway_endpoint.clone(),
            ..Default::default()
        }),
        master_key: Some(MasterKey {
            secret_ref: Some(attach.master_key_secret_ref.clone()),
            auto_generate: None,
        }),
        ..Default::default()
    }
}

impl Target {
    /// `metadata.name` of the object composed as `resource` (a
    /// composition-resource name), which is also the name of a key's
    /// connection Secret:
    ///
    /// - an observed resource keeps the name it has (Crossplane keeps it
    ///   whatever the function says; references to it must use it);
    /// - a new one is `<xr>.<resource>` (`ml.team`, `ml.key-ci`,
    ///   `ml.model-gpt-4o`): composition-resource names have no `.`, so
    ///   the name splits at its last `.` into the XR's name and the
    ///   resource, and no two XRs' resources can share a name (with `-`,
    ///   XR `a`'s key `team` and XR `a-key`'s team were both `a-key-team`);
    /// - the instance is `<xr>-litellm`: a provisioned proxy's Service
    ///   takes its name, and a Service name is a DNS label (no `.`). No
    ///   other resource can take it: instances are the only kind named
    ///   without a `.`, and with `provision` the XR's name has none
    ///   ([`Target::unnameable`]), so neither have the instance's
    ///   generated Secrets (`<xr>-litellm-master-key`, ...) while every
    ///   key's connection Secret does.
    ///
    /// Objects composed before this scheme (`<xr>-<resource>`) keep their
    /// names, being observed.
    pub fn object_name(&self, resource: &str) -> String {
        if let Some(name) = self.observed_names.get(resource) {
            return name.clone();
        }
        match resource {
            names::INSTANCE => format!("{}-litellm", self.xr_name),
            resource => format!("{}.{resource}", self.xr_name),
        }
    }

    /// A Fatal problem when a composed object could not be named: a
    /// provisioned instance of an XR whose name has a `.` (its Service
    /// would be refused), unless the instance exists already.
    pub fn unnameable(&self) -> Option<super::error::Problem> {
        let provisioned = matches!(&self.instance, InstanceTarget::Rendered(spec)
            if spec.workload.as_ref().and_then(|w| w.managed) != Some(false));
        (provisioned
            && self.xr_name.contains('.')
            && !self.observed_names.contains_key(names::INSTANCE))
        .then(|| {
            super::error::Problem::new(
                "metadata.name",
                format!(
                    "{:?} has a '.': with input.instance.provision the proxy's Service is named \
                     after the XR, and a Service name cannot have one",
                    self.xr_name
                ),
            )
        })
    }

    /// A key alias unique across the proxy: LiteLLM refuses a duplicate
    /// `key_alias`, and XRs of the same name may live in several namespaces.
    pub fn default_key_alias(&self, key: &str) -> String {
        format!("{}/{}/{key}", self.namespace, self.xr_name)
    }

    fn instance_ref(&self) -> Value {
        match &self.instance {
            InstanceTarget::Existing { name, namespace } => {
                let mut r = json!({ "name": name });
                if let Some(ns) = namespace {
                    r["namespace"] = json!(ns);
                }
                r
            }
            InstanceTarget::Rendered(_) => json!({ "name": self.object_name(names::INSTANCE) }),
        }
    }

    // Built from owned values: `json!` would serialize (deep-copy) every
    // nested value it is handed, and this runs for every composed resource.
    fn object(&self, kind: &str, resource: &str, spec: Value) -> Value {
        let metadata = Map::from_iter([
            (
                "name".to_string(),
                Value::String(self.object_name(resource)),
            ),
            (
                "namespace".to_string(),
                Value::String(self.namespace.clone()),
            ),
        ]);
        Value::Object(Map::from_iter([
            (
                "apiVersion".to_string(),
                Value::String(API_VERSION.to_string()),
            ),
            ("kind".to_string(), Value::String(kind.to_string())),
            ("metadata".to_string(), Value::Object(metadata)),
            ("spec".to_string(), spec),
        ]))
    }

    fn entity(&self, kind: &str, resource: &str, for_provider: Map<String, Value>) -> Value {
        let spec = Map::from_iter([
            ("instanceRef".to_string(), self.instance_ref()),
            ("forProvider".to_string(), Value::Object(for_provider)),
        ]);
        self.object(kind, resource, Value::Object(spec))
    }

    /// Adds the entity of `kind` composed as `resource` to `out`.
    fn add(
        &self,
        out: &mut BTreeMap<String, Value>,
        kind: &str,
        resource: String,
        for_provider: Map<String, Value>,
    ) {
        let object = self.entity(kind, &resource, for_provider);
        out.insert(resource, object);
    }
}

/// Inserts `value` under `key` when it is present.
fn put<T: serde::Serialize>(map: &mut Map<String, Value>, key: &str, value: &Option<T>) {
    if let Some(v) = value {
        map.insert(
            key.to_string(),
            serde_json::to_value(v).expect("plain data serializes"),
        );
    }
}

fn put_amount(map: &mut Map<String, Value>, key: &str, value: &Option<Amount>) {
    put(map, key, &value.as_ref().map(|a| a.0.to_string()));
}

/// A `forProvider`'s limit fields, as the shared [`Limits`] names them.
fn limits(
    max_budget: &Option<Amount>,
    budget_duration: &Option<String>,
    tpm_limit: Option<u32>,
    rpm_limit: Option<u32>,
    max_parallel_requests: Option<u32>,
) -> Map<String, Value> {
    let limits = Limits {
        max_budget: max_budget.as_ref().map(|a| a.0.to_string()),
        budget_duration: budget_duration.clone(),
        tpm_limit: tpm_limit.map(i64::from),
        rpm_limit: rpm_limit.map(i64::from),
        max_parallel_requests: max_parallel_requests.map(i64::from),
    };
    // A struct of plain fields always serializes to an object.
    match serde_json::to_value(limits) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// A builder of one kind of composed resource: adds the request's
/// resources of that kind to the desired ones.
type Builder = fn(&Target, &XrRequest, &mut BTreeMap<String, Value>);

/// The builders of the composed resources, one a kind.
const BUILDERS: [Builder; 10] = [
    instance,
    budget,
    customer_budget,
    team,
    keys,
    models,
    users,
    mcp_servers,
    customers,
    access_groups,
];

/// The desired composed resources, by composition-resource name.
pub fn desired(target: &Target, request: &XrRequest) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for build in BUILDERS {
        build(target, request, &mut out);
    }
    out
}

/// The LiteLLMInstance this function renders, if it renders one.
fn instance(target: &Target, _: &XrRequest, out: &mut BTreeMap<String, Value>) {
    if let InstanceTarget::Rendered(spec) = &target.instance {
        let spec = serde_json::to_value(spec.as_ref()).expect("the instance spec serializes");
        out.insert(
            names::INSTANCE.to_string(),
            target.object("LiteLLMInstance", names::INSTANCE, spec),
        );
    }
}

/// The budget: its limits, which [`team`] repeats on the team.
fn budget(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    if let Some(budget) = &request.budget {
        add_budget(target, budget, names::BUDGET, out);
    }
}

/// The customers' budget ([`names::CUSTOMER_BUDGET`]), which the customers
/// held to a budget link ([`customers`]): LiteLLM holds each customer's own
/// spend to the limits of the budget it links.
fn customer_budget(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    if let Some(budget) = &request.customer_budget {
        add_budget(target, budget, names::CUSTOMER_BUDGET, out);
    }
}

/// A `LiteLLMBudget` of `budget`'s limits, composed as `resource`.
fn add_budget(
    target: &Target,
    budget: &BudgetRequest,
    resource: &str,
    out: &mut BTreeMap<String, Value>,
) {
    let mut limits = limits(
        &budget.max_budget,
        &budget.duration,
        budget.tpm_limit,
        budget.rpm_limit,
        budget.max_parallel_requests,
    );
    put_amount(&mut limits, "softBudget", &budget.soft_budget);
    target.add(out, "LiteLLMBudget", resource.to_string(), limits);
}

/// The team, with the budget's limits: LiteLLM enforces a team's own
/// max_budget, while a budget object only applies to what links it.
fn team(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    let mut team = Map::new();
    team.insert(
        "teamAlias".into(),
        json!(request
            .team
            .alias
            .clone()
            .unwrap_or_else(|| target.xr_name.clone())),
    );
    put(&mut team, "models", &request.team.models);
    put(&mut team, "blocked", &request.team.blocked);
    put(&mut team, "metadata", &request.team.metadata);
    if let Some(members) = &request.team.members {
        team.insert("members".into(), team_members(target, request, members));
    }
    put(&mut team, "membersPolicy", &request.team.members_policy);
    // The XR's guardrails with the policy's required ones: LiteLLM runs a
    // team's guardrails on every request of its keys.
    put(&mut team, "guardrails", &request.guardrails);
    // The team's logging destinations, in order; absent, the provider
    // keeps those LiteLLM holds.
    if let Some(logging) = &request.logging {
        let entries: Vec<_> = logging.iter().map(|entry| entry.spec()).collect();
        put(&mut team, "logging", &Some(entries));
    }
    if let Some(permission) = &request.team.object_permission {
        team.insert(
            "objectPermission".into(),
            object_permission(target, request, permission),
        );
    }
    if let Some(budget) = &request.budget {
        // LiteLLM drops a team's max_parallel_requests; it lives on the budget.
        team.extend(limits(
            &budget.max_budget,
            &budget.duration,
            budget.tpm_limit,
            budget.rpm_limit,
            None,
        ));
    }
    // A tenant's models are its team's: LiteLLM serves them as
    // `<namespace>/<name>`, which the team's own list must name.
    if let (true, Some(Value::Array(models))) = (target.team_models, team.get_mut("models")) {
        for model in &request.models {
            let name = format!("{}/{}", target.namespace, model.name);
            if !models.iter().any(|m| m.as_str() == Some(name.as_str())) {
                models.push(Value::String(name));
            }
        }
    }
    target.add(out, "LiteLLMTeam", names::TEAM.to_string(), team);
}

/// Each key, writing its connection Secret.
fn keys(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    for key in &request.keys {
        let mut p = Map::new();
        p.insert(
            "keyAlias".into(),
            json!(key
                .alias
                .clone()
                .unwrap_or_else(|| target.default_key_alias(&key.name))),
        );
        p.insert(
            "teamRef".into(),
            json!({ "name": target.object_name(names::TEAM) }),
        );
        // A key without limits of its own inherits the team budget's.
        if request.budget.is_some() && !key.has_own_limits() {
            p.insert(
                "budgetRef".into(),
                json!({ "name": target.object_name(names::BUDGET) }),
            );
        }
        if let Some(user) = &key.user {
            p.insert(
                "userRef".into(),
                json!({ "name": target.object_name(&names::user(user)) }),
            );
        }
        if let Some(permission) = &key.object_permission {
            p.insert(
                "objectPermission".into(),
                object_permission(target, request, permission),
            );
        }
        put(&mut p, "models", &key.models);
        p.extend(limits(
            &key.max_budget,
            &key.budget_duration,
            key.tpm_limit,
            key.rpm_limit,
            key.max_parallel_requests,
        ));
        put(&mut p, "duration", &key.duration);
        put(&mut p, "metadata", &key.metadata);
        let resource_name = names::key(&key.name);
        let mut object = target.entity("LiteLLMVirtualKey", &resource_name, p);
        object["spec"]["writeConnectionSecretToRef"] =
            json!({ "name": target.object_name(&resource_name) });
        out.insert(resource_name, object);
    }
}

/// Each model deployment; a tenant's is its team's ([`Target::team_models`]).
fn models(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    for model in &request.models {
        let mut params = Map::new();
        params.insert("model".into(), json!(model.model));
        put(&mut params, "apiBase", &model.api_base);
        put(&mut params, "apiVersion", &model.api_version);
        put(&mut params, "apiKeySecretRef", &model.api_key_secret_ref);
        put(&mut params, "credentialRef", &model.credential_ref);
        put(&mut params, "aws", &model.aws);
        put(&mut params, "vertex", &model.vertex);
        put(&mut params, "azure", &model.azure);
        put(&mut params, "tpm", &model.tpm);
        put(&mut params, "rpm", &model.rpm);
        put(&mut params, "timeout", &model.timeout);
        put(&mut params, "streamTimeout", &model.stream_timeout);
        put(&mut params, "maxRetries", &model.max_retries);
        put(&mut params, "dropParams", &model.drop_params);
        put(&mut params, "customLlmProvider", &model.custom_llm_provider);
        put(&mut params, "tags", &model.tags);
        let mut p = Map::new();
        p.insert("modelName".into(), json!(model.name));
        p.insert("litellmParams".into(), Value::Object(params));
        put(&mut p, "accessGroups", &model.access_groups);
        if target.team_models {
            p.insert(
                "teamRef".into(),
                json!({ "name": target.object_name(names::TEAM) }),
            );
        }
        target.add(out, "LiteLLMModel", names::model(&model.name), p);
    }
}

/// Each user.
fn users(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    for user in &request.users {
        let mut p = Map::new();
        put(&mut p, "userEmail", &user.email);
        put(&mut p, "userAlias", &user.alias);
        put(&mut p, "userRole", &user.role);
        put(&mut p, "models", &user.models);
        p.extend(limits(
            &user.max_budget,
            &user.budget_duration,
            user.tpm_limit,
            user.rpm_limit,
            user.max_parallel_requests,
        ));
        put(&mut p, "metadata", &user.metadata);
        target.add(out, "LiteLLMUser", names::user(&user.name), p);
    }
}

/// Each MCP server.
fn mcp_servers(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    for server in &request.mcp_servers {
        let mut p = Map::new();
        p.insert(
            "transport".into(),
            json!(server.transport.unwrap_or_default().as_str()),
        );
        put(&mut p, "url", &server.url);
        put(&mut p, "serverName", &server.server_name);
        put(&mut p, "description", &server.description);
        put(&mut p, "authType", &server.auth_type);
        put(&mut p, "authSecretRef", &server.auth_secret_ref);
        put(&mut p, "allowedTools", &server.allowed_tools);
        put(&mut p, "accessGroups", &server.access_groups);
        put(&mut p, "mcpInfo", &server.mcp_info);
        target.add(out, "LiteLLMMCPServer", names::mcp_server(&server.name), p);
    }
}

/// Each customer, under the id the provider chooses (no external name is
/// set: outside the instance's namespace the provider takes no other). A
/// customer held to a budget links by `budgetRef`, under the name its
/// object has, the customers' budget, or without one the XR's budget.
fn customers(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    let budget = match (&request.customer_budget, &request.budget) {
        (Some(_), _) => Some(names::CUSTOMER_BUDGET),
        (None, Some(_)) => Some(names::BUDGET),
        (None, None) => None,
    };
    for customer in &request.customers {
        let mut p = Map::new();
        put(&mut p, "alias", &customer.alias);
        put(&mut p, "models", &customer.models);
        put(&mut p, "allowedModelRegion", &customer.allowed_model_region);
        put(&mut p, "defaultModel", &customer.default_model);
        if let (Some(true), Some(budget)) = (customer.budget, budget) {
            p.insert(
                "budgetRef".into(),
                json!({ "name": target.object_name(budget) }),
            );
        }
        target.add(out, "LiteLLMCustomer", names::customer(&customer.name), p);
    }
}

/// Each access group, assigned to the XR's team by `teamRefs` (the name
/// its object has). Its name in LiteLLM is the provider's
/// (`<cluster>/<namespace>/<object name>`, the ownership marker), so none
/// is rendered.
fn access_groups(target: &Target, request: &XrRequest, out: &mut BTreeMap<String, Value>) {
    for group in &request.access_groups {
        let mut p = Map::new();
        put(&mut p, "description", &group.description);
        put(&mut p, "models", &group.models);
        p.insert(
            "teamRefs".into(),
            json!([{ "name": target.object_name(names::TEAM) }]),
        );
        let resource = names::access_group(&group.name);
        target.add(out, "LiteLLMAccessGroup", resource, p);
    }
}

/// `forProvider.members` of the team: a user of the XR by `userRef` (the
/// name its LiteLLMUser has), else the LiteLLM user id; the role and the
/// budget in the team as given. Members that resolve to nothing were
/// refused by validation.
fn team_members(
    target: &Target,
    request: &XrRequest,
    members: &[super::request::MemberRequest],
) -> Value {
    let rendered = members
        .iter()
        .filter_map(|member| {
            let mut m = Map::new();
            match request.resolve(member)? {
                Member::User(name) => m.insert(
                    "userRef".into(),
                    json!({ "name": target.object_name(&names::user(name)) }),
                ),
                Member::Id(id) => m.insert("userId".into(), json!(id)),
            };
            put(&mut m, "role", &member.role);
            put_amount(&mut m, "maxBudgetInTeam", &member.max_budget_in_team);
            Some(Value::Object(m))
        })
        .collect();
    Value::Array(rendered)
}

/// `forProvider.objectPermission` of a team or key: MCP servers by
/// reference (the XR's own under the names their objects have, existing
/// ones by name) and the access groups. Each list is whole in LiteLLM, so
/// a list left out is rendered empty by the provider.
fn object_permission(
    target: &Target,
    request: &XrRequest,
    permission: &PermissionRequest,
) -> Value {
    let mut p = Map::new();
    if let Some(servers) = &permission.mcp_servers {
        let refs: Vec<Value> = servers
            .iter()
            .map(|server| {
                let name = if request.mcp_servers.iter().any(|s| &s.name == server) {
                    target.object_name(&names::mcp_server(server))
                } else {
                    server.clone()
                };
                json!({ "name": name })
            })
            .collect();
        p.insert("mcpServerRefs".into(), Value::Array(refs));
    }
    put(&mut p, "mcpAccessGroups", &permission.mcp_access_groups);
    Value::Object(p)
}
