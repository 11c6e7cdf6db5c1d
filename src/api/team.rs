//! `LiteLLMTeam`: a LiteLLM team.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{FreeForm, ManagedFields, ManagedStatus};
use super::limits::{Limits, TEAM_PARALLEL_REQUESTS};

/// A LiteLLM team, reconciled against the admin API (`/team/*`).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMTeam",
    namespaced,
    shortname = "lt",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<TeamObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"ALIAS","type":"string","jsonPath":".spec.forProvider.teamAlias"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMTeamSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM team.
    pub for_provider: TeamParameters,
}

/// The desired state of a LiteLLM team. Unset fields are left to LiteLLM.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(
    validation = Rule::new("!has(self.maxParallelRequests)").message(TEAM_PARALLEL_REQUESTS),
    validation = Rule::new("!has(self.organizationRef) || !has(self.organizationId)").message(TEAM_ORGANIZATION)
)]
#[serde(rename_all = "camelCase")]
pub struct TeamParameters {
    /// Display name (`team_alias`). Not unique in LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ALIAS_LENGTH))]
    pub team_alias: Option<String>,
    /// Models the team may use; empty means all models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_MODELS),
        inner(length(max = super::common::bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Spend and rate limits (`maxParallelRequests` excepted).
    #[serde(flatten)]
    pub limits: Limits,
    /// Spend in USD at which LiteLLM alerts (`soft_budget`); requests go on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub soft_budget: Option<String>,
    /// Model names the team's callers may send, each resolved to the model
    /// it names (`model_aliases`). Outside the LiteLLMInstance's namespace
    /// each target follows the rules of `models`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::access::model_aliases_schema")]
    pub model_aliases: Option<std::collections::BTreeMap<String, String>>,
    /// What each member gets by default: a budget and rate limits of their
    /// own in the team, and the lifetime of the keys they make.
    #[serde(flatten)]
    pub member_defaults: TeamMemberDefaults,
    /// Tags, guardrails and per-model rate limits.
    #[serde(flatten)]
    pub usage: super::access::Usage,
    /// Whether the team is blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    /// Free-form metadata. The provider adds its ownership marker beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub metadata: Option<FreeForm>,
    /// MCP servers, MCP access groups and vector stores it may use
    /// (`object_permission`); unset: left to LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_permission: Option<super::mcp_server::ObjectPermission>,
    /// Members of the team (`/team/member_add|member_update|member_delete`).
    /// Unset: left to LiteLLM (and the UI, or SSO). Set: the team's members
    /// are exactly these (see `membersPolicy`), each with its role and
    /// budget in the team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_MEMBERS))]
    pub members: Option<Vec<TeamMemberSpec>>,
    /// `Exclusive` (default): a member LiteLLM has beyond `members` (added
    /// in the UI) is drift and is removed. `Additive`: the members listed
    /// are kept as given, others are left alone (an SSO-managed team).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members_policy: Option<MembersPolicy>,
    /// The LiteLLMOrganization (same namespace) the team belongs to
    /// (`organization_id`; Enterprise-only in LiteLLM). The team waits for
    /// it to be Ready, and the organization's deletion waits for the team
    /// (LiteLLM deletes an organization's teams with it). Unset: left to
    /// LiteLLM. Moving a team to another organization is LiteLLM's
    /// `/team/update`, which checks the team's models and limits against
    /// the new organization's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_ref: Option<super::common::LocalRef>,
    /// A LiteLLM organization id, when the organization is not managed
    /// here. Only in the LiteLLMInstance's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub organization_id: Option<String>,
    /// Where LiteLLM logs the team's requests (its team callbacks, kept in
    /// the team's `metadata.logging`; see docs/team-logging.md). Unset:
    /// left to LiteLLM (and its UI), kept as they are by every write. Set:
    /// the team's callbacks are exactly these, in order; `[]` turns the
    /// team's own logging off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_TEAM_CALLBACKS))]
    pub logging: Option<Vec<TeamCallbackSpec>>,
}

/// At most this many callbacks per team.
pub const MAX_TEAM_CALLBACKS: u32 = 8;
/// At most this many variables per callback (plain and from Secrets each).
pub const MAX_CALLBACK_VARIABLES: u32 = 16;

/// Message of the rule that a callback variable is plain or from a Secret.
pub const CALLBACK_VARIABLE_ONCE: &str =
    "a callback variable is in callbackVars or in secretCallbackVars, not both";

// The metadata entries of a team's callbacks, and the lists the provider
// (and the composition function) hold `logging` to: pure constants, here
// so that the function need not link the LiteLLM client
// (`crate::litellm::team_callbacks` re-exports them).

/// The metadata entry of a team's callbacks (`AddTeamCallback` entries).
pub const LOGGING: &str = "logging";
/// The deprecated metadata entry of callbacks, read only when `logging` is
/// absent.
pub const CALLBACK_SETTINGS: &str = "callback_settings";
/// The integrations that read a team's own credentials from its callback
/// variables in 1.108.7 (`StandardCallbackDynamicParams` and the trusted
/// `dd_*`/`newrelic_*` channel of `litellm_logging.py`). Any other name is
/// stored by LiteLLM and either does nothing for the team or logs with the
/// proxy's own credentials to the proxy's own destination.
pub const CALLBACK_NAMES: &[&str] = &[
    "langfuse",
    "langfuse_otel",
    "langsmith",
    "gcs_bucket",
    "humanloop",
    "arize",
    "arize_phoenix",
    "posthog",
    "weave_otel",
    "datadog",
    "newrelic",
    "signoz",
];

/// The variables `AddTeamCallback` accepts in 1.108.7 (its 422 lists them).
pub const CALLBACK_VARIABLES: &[&str] = &[
    "langfuse_public_key",
    "langfuse_secret",
    "langfuse_secret_key",
    "langfuse_host",
    "langfuse_environment",
    "langfuse_span_scope",
    "langfuse_prompt_version",
    "gcs_bucket_name",
    "gcs_path_service_account",
    "langsmith_api_key",
    "langsmith_project",
    "langsmith_base_url",
    "langsmith_sampling_rate",
    "langsmith_tenant_id",
    "humanloop_api_key",
    "arize_api_key",
    "arize_space_key",
    "arize_space_id",
    "arize_success_sampling_rate",
    "arize_error_sampling_rate",
    "arize_otlp_protocol",
    "posthog_api_key",
    "posthog_api_url",
    "wandb_api_key",
    "weave_project_id",
    "dd_api_key",
    "dd_site",
    "dd_agent_host",
    "dd_agent_port",
    "newrelic_api_key",
    "newrelic_region",
    "signoz_ingestion_endpoint",
    "signoz_ingestion_key",
    "turn_off_message_logging",
    "litellm_disabled_callbacks",
    "capture_message_content",
    "excluded_services",
];

/// Variables a tenant's callback may not set (outside the
/// LiteLLMInstance's namespace), and why: a path on the proxy's own host,
/// and switches of the platform's own logging of the team's requests.
pub const TENANT_REFUSED_CALLBACK_VARIABLES: &[(&str, &str)] = &[
    (
        "gcs_path_service_account",
        "a file path on the proxy's own host, which the proxy would read as a service account",
    ),
    (
        "litellm_disabled_callbacks",
        "it switches off the platform's own callbacks for the team's requests",
    ),
    (
        "turn_off_message_logging",
        "it removes the messages from the platform's own logs of the team's requests",
    ),
];

/// One logging destination of a team (`AddTeamCallback` of LiteLLM).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(validation = Rule::new("!has(self.callbackVars) || !has(self.secretCallbackVars) || self.callbackVars.all(k, !(k in self.secretCallbackVars))").message(CALLBACK_VARIABLE_ONCE))]
#[serde(rename_all = "camelCase")]
pub struct TeamCallbackSpec {
    /// The integration (`callback_name`): one of LiteLLM 1.108.7's that
    /// take a team's own credentials (`langfuse`, `langfuse_otel`,
    /// `langsmith`, `gcs_bucket`, `humanloop`, `arize`, `arize_phoenix`,
    /// `posthog`, `weave_otel`, `datadog`, `newrelic`, `signoz`).
    #[schemars(length(min = 1, max = super::common::bounds::MAX_WORD_LENGTH))]
    pub callback_name: String,
    /// Which requests it logs (`callback_type`; default
    /// `success_and_failure`, as LiteLLM's).
    #[serde(default)]
    pub callback_type: CallbackType,
    /// Variables in plain text (`callback_vars`: `langfuse_host`,
    /// `langsmith_project`, ...). Never a credential: those go in
    /// `secretCallbackVars`. A value `os.environ/...` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "callback_vars_schema")]
    pub callback_vars: Option<std::collections::BTreeMap<String, String>>,
    /// Variables read from Secrets of the team's namespace
    /// (`langfuse_secret_key`, `langsmith_api_key`, ...), by variable name.
    /// Never shown in status; a changed Secret is written again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "secret_callback_vars_schema")]
    pub secret_callback_vars:
        Option<std::collections::BTreeMap<String, super::common::SecretKeySelector>>,
}

/// Schema of `callbackVars`: at most [`MAX_CALLBACK_VARIABLES`] strings of
/// at most `MAX_PLAIN_VALUE_LENGTH`.
fn callback_vars_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": MAX_CALLBACK_VARIABLES,
        "additionalProperties": {
            "type": "string",
            "maxLength": super::common::bounds::MAX_PLAIN_VALUE_LENGTH
        }
    })
}

/// Schema of `secretCallbackVars`: at most [`MAX_CALLBACK_VARIABLES`]
/// Secret keys.
fn secret_callback_vars_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let bound = super::common::bounds::MAX_NAME_LENGTH;
    schemars::json_schema!({
        "type": "object",
        "maxProperties": MAX_CALLBACK_VARIABLES,
        "additionalProperties": {
            "type": "object",
            "required": ["name", "key"],
            "properties": {
                "name": {"type": "string", "maxLength": bound, "description": "Name of the Secret."},
                "key": {"type": "string", "maxLength": bound, "description": "Key within the Secret."}
            }
        }
    })
}

/// Which requests a callback logs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallbackType {
    Success,
    Failure,
    #[default]
    SuccessAndFailure,
}

impl CallbackType {
    pub fn as_str(self) -> &'static str {
        match self {
            CallbackType::Success => "success",
            CallbackType::Failure => "failure",
            CallbackType::SuccessAndFailure => "success_and_failure",
        }
    }
}

/// A team callback as LiteLLM holds it: never a value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamCallbackObservation {
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub callback_name: String,
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub callback_type: String,
    /// The names of its variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64), inner(length(max = super::common::bounds::MAX_ID_LENGTH)))]
    pub variables: Vec<String>,
}

/// The limits LiteLLM gives each member of a team (one budget row the
/// team's memberships share, `team_member_budget_table`), and the lifetime
/// of the keys members create. Unset: left to LiteLLM.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamMemberDefaults {
    /// Each member's spend limit in the team, in USD (`team_member_budget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub team_member_budget: Option<String>,
    /// How often each member's spend resets (`team_member_budget_duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::duration_schema")]
    pub team_member_budget_duration: Option<String>,
    /// Requests per minute of each member (`team_member_rpm_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub team_member_rpm_limit: Option<i64>,
    /// Tokens per minute of each member (`team_member_tpm_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub team_member_tpm_limit: Option<i64>,
    /// Lifetime of the keys members create in the team
    /// (`team_member_key_duration`): `30d`, `12h`. LiteLLM reserves it for
    /// Enterprise licences: an open-source proxy refuses it (`Synced=False`,
    /// reason naming the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::duration_schema")]
    pub team_member_key_duration: Option<String>,
}

/// Message of the rule that a team names its organization one way.
pub const TEAM_ORGANIZATION: &str =
    "a team names its organization by organizationRef or by organizationId, not both";

/// One member of a team: a `LiteLLMUser` of the team's namespace, or (from
/// the LiteLLMInstance's namespace only) a LiteLLM user id or email.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(validation = Rule::new("(has(self.userRef) ? 1 : 0) + (has(self.userId) ? 1 : 0) + (has(self.userEmail) ? 1 : 0) == 1").message(MEMBER_USER))]
#[serde(rename_all = "camelCase")]
pub struct TeamMemberSpec {
    /// A `LiteLLMUser` of this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ref: Option<super::common::LocalRef>,
    /// A LiteLLM user id, when the user is not managed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub user_id: Option<String>,
    /// The email of a LiteLLM user, when the user is not managed here
    /// (from the LiteLLMInstance's namespace only). LiteLLM creates a user
    /// with this email if it has none, and keeps it when the member goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = super::common::bounds::MAX_EMAIL_LENGTH))]
    pub user_email: Option<String>,
    /// `user` (default) or `admin`. LiteLLM makes team admins only with an
    /// Enterprise licence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<MemberRole>,
    /// The member's spend limit in this team, in USD (`max_budget_in_team`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub max_budget_in_team: Option<String>,
}

/// Message of the rule that a member names its user one way.
pub const MEMBER_USER: &str =
    "a member names its user by userRef, userId or userEmail, exactly one";

/// A member's role in a team.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberRole {
    #[default]
    User,
    Admin,
}

impl MemberRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberRole::User => "user",
            MemberRole::Admin => "admin",
        }
    }
}

/// Whether `members` is the whole list.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum MembersPolicy {
    #[default]
    Exclusive,
    Additive,
}

/// A LiteLLM team as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_alias: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// Spend so far in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_reset_at: Option<String>,
    /// The budget row LiteLLM keeps for the members' defaults
    /// (`team_member_budget_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_member_budget_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The members' user ids, as LiteLLM lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_MEMBERS), inner(length(max = super::common::bounds::MAX_ID_LENGTH)))]
    pub members: Option<Vec<String>>,
    /// The organization LiteLLM has the team in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<String>,
    /// The team's callbacks (`metadata.logging`): names, types and the
    /// names of their variables, never a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub logging: Option<Vec<TeamCallbackObservation>>,
    /// Fingerprint of the variables of each callback last written, by
    /// `<callbackName>/<callbackType>` (`sha256:` and 16 hex digits of a
    /// domain-separated SHA-256 over all its values; never a value).
    /// LiteLLM encrypts credentials at rest and never returns them, so this
    /// is how a changed Secret (or value) is noticed and written again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<std::collections::BTreeMap<String, String>>,
}
