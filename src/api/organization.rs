//! `LiteLLMOrganization`: a LiteLLM organization (`/organization/*`), which
//! teams join by `organizationRef`. LiteLLM serves organizations only with
//! an Enterprise licence.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, ManagedFields, ManagedStatus};
use super::limits::Limits;
use super::team::MembersPolicy;

/// A LiteLLM organization, reconciled against the admin API
/// (`/organization/*`), under the organization id
/// `crossplane.io/external-name` (`<namespace>.<name>` by default).
/// Enterprise-only: on a proxy without a licence it is `Synced=False`,
/// saying so.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMOrganization",
    namespaced,
    shortname = "lorg",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<OrganizationObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"ALIAS","type":"string","jsonPath":".status.atProvider.organizationAlias"}"#,
    printcolumn = r#"{"name":"TEAMS","type":"integer","jsonPath":".status.atProvider.teams"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMOrganizationSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM organization.
    pub for_provider: OrganizationParameters,
}

/// The desired state of a LiteLLM organization. Unset fields are left to
/// LiteLLM.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationParameters {
    /// Display name (`organization_alias`), not unique in LiteLLM. LiteLLM
    /// requires one: unset, the organization is created with its id as
    /// alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_ALIAS_LENGTH))]
    pub organization_alias: Option<String>,
    /// Models the organization's teams may be given: LiteLLM refuses a
    /// team of the organization a model outside this list. Outside the
    /// LiteLLMInstance's namespace the list is required, as for teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MODELS),
        inner(length(max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Spend and rate limits of the organization (its budget row in
    /// LiteLLM); a team of the organization may not be given more.
    #[serde(flatten)]
    pub limits: Limits,
    /// Free-form metadata. The provider adds its ownership marker beside it.
    /// LiteLLM merges it into what it has: an entry removed here stays in
    /// LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub metadata: Option<FreeForm>,
    /// Members of the organization
    /// (`/organization/member_add|member_update|member_delete`), each with
    /// its role. Unset: left to LiteLLM (and the UI). Set: the
    /// organization's members are exactly these (see `membersPolicy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_MEMBERS))]
    pub members: Option<Vec<OrganizationMemberSpec>>,
    /// `Exclusive` (default): a member LiteLLM has beyond `members` (added
    /// in the UI) is drift and is removed. `Additive`: the members listed
    /// are kept as given, others are left alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members_policy: Option<MembersPolicy>,
}

/// One member of an organization: a `LiteLLMUser` of the organization's
/// namespace, or (from the LiteLLMInstance's namespace only) a LiteLLM user
/// id.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(validation = Rule::new("has(self.userRef) != has(self.userId)").message(ORGANIZATION_MEMBER_USER))]
#[serde(rename_all = "camelCase")]
pub struct OrganizationMemberSpec {
    /// A `LiteLLMUser` of this namespace; its deletion waits until it is no
    /// longer a member here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ref: Option<super::common::LocalRef>,
    /// The id of an existing LiteLLM user not managed here (from the
    /// LiteLLMInstance's namespace only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_ID_LENGTH))]
    pub user_id: Option<String>,
    /// `internal_user` (default), `internal_user_viewer`, or `org_admin`
    /// (from the LiteLLMInstance's namespace only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<OrganizationRole>,
}

/// Message of the rule that a member names its user one way.
pub const ORGANIZATION_MEMBER_USER: &str =
    "a member names its user by userRef or by userId, exactly one";

/// A member's role in an organization (LiteLLM's `ROLES_WITHIN_ORG`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrganizationRole {
    /// May add and remove the organization's members, make its teams, and
    /// delete users whose memberships all lie in organizations it
    /// administers.
    OrgAdmin,
    #[default]
    InternalUser,
    InternalUserViewer,
}

impl OrganizationRole {
    pub fn as_str(self) -> &'static str {
        match self {
            OrganizationRole::OrgAdmin => "org_admin",
            OrganizationRole::InternalUser => "internal_user",
            OrganizationRole::InternalUserViewer => "internal_user_viewer",
        }
    }
}

/// A LiteLLM organization as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrganizationObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_alias: Option<String>,
    /// The id of the organization's budget row in LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// Spend so far in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    /// How many teams LiteLLM has in the organization (any, not only those
    /// managed here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_GENERATION))]
    pub teams: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The members' user ids, as LiteLLM lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MEMBERS),
        inner(length(max = bounds::MAX_ID_LENGTH))
    )]
    pub members: Option<Vec<String>>,
}
