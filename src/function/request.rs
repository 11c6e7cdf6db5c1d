//! What an XR asks for: its team, budget, keys, models, users, MCP servers
//! and customers, read from the field paths the input names. Parsing keeps
//! the path of every value, so a wrong type names the exact field
//! (`spec.keys[1].maxBudget`).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::api::common::{LocalRef, SecretKeySelector};
use crate::api::customer::ModelRegion;
use crate::api::mcp_server::{McpAuthType, McpTransport};
use crate::api::model::{AwsParams, AzureParams, VertexParams};
use crate::api::money::Money;
use crate::api::team::{CallbackType, MemberRole, MembersPolicy, TeamCallbackSpec};
use crate::api::user::UserRole;

use super::error::Problem;

/// A USD amount written as a string (`"25.50"`) or a number (`25.5`) in the
/// XR; XRD authors pick either.
#[derive(Clone, Debug, PartialEq)]
pub struct Amount(pub Money);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = match Value::deserialize(d)? {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "must be a decimal amount such as \"25.50\", got {other}"
                )))
            }
        };
        Money::parse(&text)
            .map(Amount)
            .map_err(serde::de::Error::custom)
    }
}

/// The fields of each part the function reads. Others (which the XRD may
/// declare for another step of the pipeline; the API server prunes the
/// undeclared ones) are left alone, each named in a warning, since a
/// misspelling would otherwise go unnoticed.
pub const TEAM_FIELDS: &[&str] = &[
    "alias",
    "models",
    "metadata",
    "blocked",
    "members",
    "membersPolicy",
    "objectPermission",
];
pub const BUDGET_FIELDS: &[&str] = &[
    "maxBudget",
    "softBudget",
    "duration",
    "tpmLimit",
    "rpmLimit",
    "maxParallelRequests",
];
pub const KEY_FIELDS: &[&str] = &[
    "name",
    "alias",
    "models",
    "maxBudget",
    "budgetDuration",
    "duration",
    "tpmLimit",
    "rpmLimit",
    "maxParallelRequests",
    "metadata",
    "user",
    "objectPermission",
];
pub const USER_FIELDS: &[&str] = &[
    "name",
    "email",
    "alias",
    "role",
    "models",
    "maxBudget",
    "budgetDuration",
    "tpmLimit",
    "rpmLimit",
    "maxParallelRequests",
    "metadata",
];
pub const MCP_SERVER_FIELDS: &[&str] = &[
    "name",
    "transport",
    "url",
    "serverName",
    "description",
    "authType",
    "authSecretRef",
    "allowedTools",
    "accessGroups",
    "mcpInfo",
];
pub const CUSTOMER_FIELDS: &[&str] = &[
    "name",
    "alias",
    "models",
    "allowedModelRegion",
    "defaultModel",
    "budget",
];
pub const ACCESS_GROUP_FIELDS: &[&str] = &["name", "description", "models"];
pub const LOGGING_FIELDS: &[&str] = &[
    "callbackName",
    "callbackType",
    "callbackVars",
    "secretCallbackVars",
];
pub const MODEL_FIELDS: &[&str] = &[
    "name",
    "model",
    "apiBase",
    "apiVersion",
    "apiKeySecretRef",
    "credentialRef",
    "tpm",
    "rpm",
    "aws",
    "vertex",
    "azure",
    "timeout",
    "streamTimeout",
    "maxRetries",
    "dropParams",
    "customLlmProvider",
    "tags",
    "accessGroups",
];

/// A warning for each field of the object at `path` (or of each object of
/// the list there, with `list`) that is not among `known`.
pub fn unknown_fields(root: &Value, path: &str, known: &[&str], list: bool) -> Vec<Problem> {
    // Paths are formatted only for a field that is reported (this runs on
    // every request, and nearly always finds nothing).
    let objects: Vec<(Option<usize>, &serde_json::Map<String, Value>)> = match lookup(root, path) {
        Some(Value::Object(object)) if !list => vec![(None, object)],
        Some(Value::Array(items)) if list => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Some((Some(i), item.as_object()?)))
            .collect(),
        _ => Vec::new(),
    };
    let mut problems = Vec::new();
    for (index, object) in objects {
        for field in object.keys().filter(|f| !known.contains(&f.as_str())) {
            let at = match index {
                Some(i) => format!("{path}[{i}].{field}"),
                None => format!("{path}.{field}"),
            };
            problems.push(Problem::new(
                at,
                format!(
                    "not a field this function reads (it reads {}); left alone",
                    known.join(", ")
                ),
            ));
        }
    }
    problems
}

/// The team part: `{alias, models, metadata, blocked, members,
/// membersPolicy, objectPermission}`.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TeamRequest {
    pub alias: Option<String>,
    pub models: Option<Vec<String>>,
    pub metadata: Option<BTreeMap<String, Value>>,
    pub blocked: Option<bool>,
    /// The team's members; unset leaves them to LiteLLM.
    pub members: Option<Vec<MemberRequest>>,
    /// As `LiteLLMTeam.forProvider.membersPolicy`.
    pub members_policy: Option<MembersPolicy>,
    pub object_permission: Option<PermissionRequest>,
}

/// One team member: a user of the XR (`user`, by its name, or `email`, by
/// its email), or a LiteLLM user id not rendered here (`userId`, where the
/// policy allows it). Exactly one of the three.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberRequest {
    pub user: Option<String>,
    pub email: Option<String>,
    pub user_id: Option<String>,
    /// `user` (default) or `admin`.
    pub role: Option<MemberRole>,
    /// The member's spend limit in the team, in USD.
    pub max_budget_in_team: Option<Amount>,
}

/// Whom a member names, once resolved: a user of the XR (its name) or a
/// LiteLLM user id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Member<'a> {
    User(&'a str),
    Id(&'a str),
}

/// What a team or key may use besides models: MCP servers by name (the
/// XR's own, `mcpServers[].name`, or existing `LiteLLMMCPServer`s of the
/// namespace the resources go to) and MCP access groups. Raw server ids
/// and vector stores are not the XR's to give.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionRequest {
    pub mcp_servers: Option<Vec<String>>,
    pub mcp_access_groups: Option<Vec<String>>,
}

/// One requested user (`LiteLLMUser`).
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct UserRequest {
    /// Unique within the XR; part of the resource name, and what members
    /// and keys name it by.
    pub name: String,
    pub email: Option<String>,
    pub alias: Option<String>,
    pub role: Option<UserRole>,
    pub models: Option<Vec<String>>,
    pub max_budget: Option<Amount>,
    pub budget_duration: Option<String>,
    pub tpm_limit: Option<u32>,
    pub rpm_limit: Option<u32>,
    pub max_parallel_requests: Option<u32>,
    pub metadata: Option<BTreeMap<String, Value>>,
}

/// One requested MCP server (`LiteLLMMCPServer`), reached over the network.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRequest {
    /// Unique within the XR; part of the resource name, and what
    /// `objectPermission.mcpServers` names it by.
    pub name: String,
    /// `http` (default) or `sse`; `stdio` is refused.
    pub transport: Option<McpTransport>,
    pub url: Option<String>,
    pub server_name: Option<String>,
    pub description: Option<String>,
    pub auth_type: Option<McpAuthType>,
    pub auth_secret_ref: Option<SecretKeySelector>,
    pub allowed_tools: Option<Vec<String>>,
    pub access_groups: Option<Vec<String>>,
    pub mcp_info: Option<BTreeMap<String, Value>>,
}

/// One requested customer (`LiteLLMCustomer`): an end user whose id an
/// application sends as `user`. The provider chooses the id.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CustomerRequest {
    /// Unique within the XR; part of the resource name.
    pub name: String,
    pub alias: Option<String>,
    /// Narrows the models the customer's requests may use (none: the
    /// key's).
    pub models: Option<Vec<String>>,
    /// `eu` or `us`.
    pub allowed_model_region: Option<ModelRegion>,
    pub default_model: Option<String>,
    /// Whether the customer's own spend is held to the XR's budget (the
    /// one `LiteLLMBudget` an XR renders), linked by `budgetRef`.
    pub budget: Option<bool>,
}

/// One requested access group (`LiteLLMAccessGroup`) of the XR's team: the
/// models it grants the team on top of the team's own.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AccessGroupRequest {
    /// Unique within the XR; part of the resource name (and through it of
    /// the group's name in LiteLLM).
    pub name: String,
    pub description: Option<String>,
    /// The models the group grants (`access_model_names`); required.
    pub models: Option<Vec<String>>,
}

/// One logging destination of the XR's team (a LiteLLM team callback), as
/// `LiteLLMTeam.forProvider.logging` takes it.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LoggingRequest {
    /// The integration: `langfuse`, `langsmith`, `datadog`, ...
    pub callback_name: String,
    /// `success`, `failure` or `success_and_failure` (default).
    pub callback_type: Option<CallbackType>,
    /// Variables in plain text (`langfuse_host`, `langsmith_project`, ...).
    pub callback_vars: Option<BTreeMap<String, String>>,
    /// Variables read from Secrets of the namespace the resources go to
    /// (the credentials), by variable name.
    pub secret_callback_vars: Option<BTreeMap<String, SecretKeySelector>>,
}

impl LoggingRequest {
    /// Which requests it logs: `callbackType`, else LiteLLM's default.
    pub fn callback_type(&self) -> CallbackType {
        self.callback_type.unwrap_or_default()
    }

    /// The entry of `LiteLLMTeam.forProvider.logging` it renders.
    pub fn spec(&self) -> TeamCallbackSpec {
        TeamCallbackSpec {
            callback_name: self.callback_name.clone(),
            callback_type: self.callback_type(),
            callback_vars: self.callback_vars.clone(),
            secret_callback_vars: self.secret_callback_vars.clone(),
        }
    }
}

/// The budget part.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BudgetRequest {
    pub max_budget: Option<Amount>,
    pub soft_budget: Option<Amount>,
    /// How often spend resets: `30d`, `1mo`.
    pub duration: Option<String>,
    pub tpm_limit: Option<u32>,
    pub rpm_limit: Option<u32>,
    pub max_parallel_requests: Option<u32>,
}

/// One requested key.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeyRequest {
    /// Unique within the XR; part of the resource and Secret names.
    pub name: String,
    pub alias: Option<String>,
    pub models: Option<Vec<String>>,
    pub max_budget: Option<Amount>,
    pub budget_duration: Option<String>,
    /// Lifetime of the key: `30d`.
    pub duration: Option<String>,
    pub tpm_limit: Option<u32>,
    pub rpm_limit: Option<u32>,
    pub max_parallel_requests: Option<u32>,
    pub metadata: Option<BTreeMap<String, Value>>,
    /// The XR's user (`users[].name`) the key belongs to.
    pub user: Option<String>,
    pub object_permission: Option<PermissionRequest>,
    /// Whether `max_budget` is the policy's default rather than the XR's
    /// (see `validate::review`). Never read from the XR.
    #[serde(skip)]
    pub max_budget_from_policy: bool,
}

impl KeyRequest {
    /// Whether the XR gives the key limits of its own. A key without them
    /// links the team budget; a `maxBudget` the policy filled in does not
    /// count, so such a key keeps the link (and the budget's reset cycle and
    /// rate limits), with its own `max_budget` taking precedence in LiteLLM.
    pub fn has_own_limits(&self) -> bool {
        (self.max_budget.is_some() && !self.max_budget_from_policy)
            || self.tpm_limit.is_some()
            || self.rpm_limit.is_some()
    }
}

/// One requested model deployment.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ModelRequest {
    /// Public model name.
    pub name: String,
    /// Upstream model, such as `openai/gpt-4o`.
    pub model: String,
    pub api_base: Option<String>,
    pub api_version: Option<String>,
    pub api_key_secret_ref: Option<SecretKeySelector>,
    /// A `LiteLLMCredential` of the namespace the resources go to, as
    /// `LiteLLMModel.forProvider.litellmParams.credentialRef`.
    pub credential_ref: Option<LocalRef>,
    pub tpm: Option<u32>,
    pub rpm: Option<u32>,
    /// As `LiteLLMModel.forProvider.litellmParams.aws`.
    pub aws: Option<AwsParams>,
    pub vertex: Option<VertexParams>,
    pub azure: Option<AzureParams>,
    pub timeout: Option<u32>,
    pub stream_timeout: Option<u32>,
    pub max_retries: Option<u32>,
    pub drop_params: Option<bool>,
    pub custom_llm_provider: Option<String>,
    pub tags: Option<Vec<String>>,
    /// Model access groups the deployment joins.
    pub access_groups: Option<Vec<String>>,
}

impl ModelRequest {
    /// The LiteLLM provider the model is called through: its
    /// `customLlmProvider`, else the part of `model` before the first `/`.
    pub fn provider(&self) -> &str {
        self.custom_llm_provider
            .as_deref()
            .unwrap_or_else(|| self.model.split('/').next().unwrap_or_default())
    }

    /// Every Secret reference of the model, with its field below the model.
    pub fn secret_refs(&self) -> Vec<(&'static str, &SecretKeySelector)> {
        let aws = self.aws.as_ref();
        let vertex = self.vertex.as_ref();
        let azure = self.azure.as_ref();
        [
            ("apiKeySecretRef", self.api_key_secret_ref.as_ref()),
            (
                "aws.accessKeyIdSecretRef",
                aws.and_then(|a| a.access_key_id_secret_ref.as_ref()),
            ),
            (
                "aws.secretAccessKeySecretRef",
                aws.and_then(|a| a.secret_access_key_secret_ref.as_ref()),
            ),
            (
                "aws.sessionTokenSecretRef",
                aws.and_then(|a| a.session_token_secret_ref.as_ref()),
            ),
            (
                "aws.webIdentityTokenSecretRef",
                aws.and_then(|a| a.web_identity_token_secret_ref.as_ref()),
            ),
            (
                "vertex.credentialsSecretRef",
                vertex.and_then(|v| v.credentials_secret_ref.as_ref()),
            ),
            (
                "azure.adTokenSecretRef",
                azure.and_then(|a| a.ad_token_secret_ref.as_ref()),
            ),
            (
                "azure.clientSecretSecretRef",
                azure.and_then(|a| a.client_secret_secret_ref.as_ref()),
            ),
        ]
        .into_iter()
        .filter_map(|(field, selector)| Some((field, selector?)))
        .collect()
    }
}

/// Everything the XR asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct XrRequest {
    pub team: TeamRequest,
    pub budget: Option<BudgetRequest>,
    pub keys: Vec<KeyRequest>,
    pub models: Vec<ModelRequest>,
    pub users: Vec<UserRequest>,
    pub mcp_servers: Vec<McpServerRequest>,
    pub customers: Vec<CustomerRequest>,
    /// The customers' budget: the limits each customer held to a budget
    /// has on its own.
    pub customer_budget: Option<BudgetRequest>,
    /// Guardrails of the team, by name, as the XR asks for them; the
    /// policy's required ones are added once checked
    /// ([`super::guardrails::review`]). `None`: left to LiteLLM.
    pub guardrails: Option<Vec<String>>,
    pub access_groups: Vec<AccessGroupRequest>,
    /// The team's logging destinations, in order
    /// ([`super::logging::check`]). `None`: left to LiteLLM; `[]`: the
    /// team's own logging off.
    pub logging: Option<Vec<LoggingRequest>>,
}

impl XrRequest {
    /// The team budget's `maxBudget`, if any.
    pub fn team_budget(&self) -> Option<Money> {
        self.budget
            .as_ref()
            .and_then(|b| b.max_budget.as_ref())
            .map(|a| a.0)
    }

    /// The member's user: by `user` (a name of `users`), by `email` (matched
    /// to a user's email, ignoring case), or its `userId`. `None` when it
    /// names none of them, or no user of the XR.
    pub fn resolve<'a>(&'a self, member: &'a MemberRequest) -> Option<Member<'a>> {
        match (&member.user, &member.email, &member.user_id) {
            (Some(name), None, None) => self
                .users
                .iter()
                .find(|u| &u.name == name)
                .map(|u| Member::User(&u.name)),
            (None, Some(email), None) => self
                .users
                .iter()
                .find(|u| {
                    u.email
                        .as_ref()
                        .is_some_and(|e| e.eq_ignore_ascii_case(email))
                })
                .map(|u| Member::User(&u.name)),
            (None, None, Some(id)) => Some(Member::Id(id)),
            _ => None,
        }
    }
}

/// Looks up a dot-separated path (`spec.team`) in `root`.
pub fn lookup<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .filter(|s| !s.is_empty())
        .try_fold(root, |v, segment| v.get(segment))
}

/// Reads the value at `path` as `T`; absent or null is `None`. A value of
/// the wrong shape is a problem naming the full path of the bad field.
pub fn read<T: serde::de::DeserializeOwned>(
    root: &Value,
    path: &str,
) -> Result<Option<T>, Problem> {
    match lookup(root, path) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_path_to_error::deserialize(value)
            .map(Some)
            .map_err(|e| {
                let inner = e.path().to_string();
                let field = if inner == "." {
                    path.to_string()
                } else {
                    join_path(path, &inner)
                };
                Problem::new(field, e.into_inner().to_string())
            }),
    }
}

/// `spec.keys` + `[1].maxBudget` -> `spec.keys[1].maxBudget`.
fn join_path(base: &str, inner: &str) -> String {
    if inner.starts_with('[') {
        format!("{base}{inner}")
    } else {
        format!("{base}.{inner}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wrong_type_names_the_full_path() {
        let xr = json!({"spec": {"keys": [{"name": "a"}, {"name": "b", "maxBudget": true}]}});
        let err = read::<Vec<KeyRequest>>(&xr, "spec.keys").unwrap_err();
        assert_eq!(err.field, "spec.keys[1].maxBudget");
        assert!(err.message.contains("decimal amount"), "{}", err.message);
    }

    #[test]
    fn an_unknown_field_is_left_alone_and_named() {
        let xr = json!({"spec": {"budget": {"maxBuget": "10", "maxBudget": "5"},
                                 "keys": [{"name": "a"}, {"name": "b", "owner": "x"}]}});
        let budget = read::<BudgetRequest>(&xr, "spec.budget").unwrap().unwrap();
        assert_eq!(budget.max_budget.unwrap().0.to_string(), "5");
        let warned = |path, known, list| {
            unknown_fields(&xr, path, known, list)
                .into_iter()
                .map(|p| p.field)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            warned("spec.budget", BUDGET_FIELDS, false),
            ["spec.budget.maxBuget"]
        );
        assert_eq!(
            warned("spec.keys", KEY_FIELDS, true),
            ["spec.keys[1].owner"]
        );
        assert!(warned("spec.team", TEAM_FIELDS, false).is_empty());
    }

    #[test]
    fn the_known_fields_are_the_fields_read() {
        let every = |fields: &[&str]| -> Value {
            Value::Object(
                fields
                    .iter()
                    .map(|f| (f.to_string(), Value::Null))
                    .collect(),
            )
        };
        // Each listed field deserializes (null is absent), and none is
        // warned about.
        for (fields, list) in [
            (TEAM_FIELDS, false),
            (BUDGET_FIELDS, false),
            (KEY_FIELDS, true),
            (MODEL_FIELDS, true),
            (USER_FIELDS, true),
            (MCP_SERVER_FIELDS, true),
            (CUSTOMER_FIELDS, true),
            (ACCESS_GROUP_FIELDS, true),
            (LOGGING_FIELDS, true),
        ] {
            let value = if list {
                json!([every(fields)])
            } else {
                every(fields)
            };
            let xr = json!({"spec": {"part": value}});
            assert!(unknown_fields(&xr, "spec.part", fields, list).is_empty());
        }
        let mut key = every(KEY_FIELDS);
        key["name"] = json!("a");
        assert!(serde_json::from_value::<KeyRequest>(key).is_ok());
        let mut model = every(MODEL_FIELDS);
        model["name"] = json!("a");
        model["model"] = json!("b");
        assert!(serde_json::from_value::<ModelRequest>(model).is_ok());
        let mut user = every(USER_FIELDS);
        user["name"] = json!("a");
        assert!(serde_json::from_value::<UserRequest>(user).is_ok());
        let mut server = every(MCP_SERVER_FIELDS);
        server["name"] = json!("a");
        assert!(serde_json::from_value::<McpServerRequest>(server).is_ok());
        let mut customer = every(CUSTOMER_FIELDS);
        customer["name"] = json!("a");
        assert!(serde_json::from_value::<CustomerRequest>(customer).is_ok());
        let mut group = every(ACCESS_GROUP_FIELDS);
        group["name"] = json!("a");
        assert!(serde_json::from_value::<AccessGroupRequest>(group).is_ok());
        let mut logging = every(LOGGING_FIELDS);
        logging["callbackName"] = json!("langfuse");
        assert!(serde_json::from_value::<LoggingRequest>(logging).is_ok());
        assert!(serde_json::from_value::<TeamRequest>(every(TEAM_FIELDS)).is_ok());
        assert!(serde_json::from_value::<BudgetRequest>(every(BUDGET_FIELDS)).is_ok());
    }

    #[test]
    fn amounts_may_be_numbers_or_strings() {
        let xr = json!({"spec": {"budget": {"maxBudget": 25.5, "softBudget": "20"}}});
        let b = read::<BudgetRequest>(&xr, "spec.budget").unwrap().unwrap();
        assert_eq!(b.max_budget.unwrap().0, Money::parse("25.50").unwrap());
        assert_eq!(b.soft_budget.unwrap().0.to_string(), "20");
    }

    #[test]
    fn an_xr_cannot_mark_its_own_key_budget_as_the_policys() {
        let xr = json!({"spec": {"keys": [{"name": "a", "maxBudgetFromPolicy": true}]}});
        let keys = read::<Vec<KeyRequest>>(&xr, "spec.keys").unwrap().unwrap();
        assert!(!keys[0].max_budget_from_policy);
        let warned = unknown_fields(&xr, "spec.keys", KEY_FIELDS, true);
        assert_eq!(warned[0].field, "spec.keys[0].maxBudgetFromPolicy");
    }

    #[test]
    fn absent_and_null_are_none() {
        let xr = json!({"spec": {"budget": null}});
        assert_eq!(read::<BudgetRequest>(&xr, "spec.budget").unwrap(), None);
        assert_eq!(
            read::<BudgetRequest>(&xr, "spec.nothing.here").unwrap(),
            None
        );
    }
}
