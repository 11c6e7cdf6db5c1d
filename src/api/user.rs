//! `LiteLLMUser`: a LiteLLM internal user (`/user/*`), whom keys can belong
//! to (`userRef` on a `LiteLLMVirtualKey`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, ManagedFields, ManagedStatus};
use super::limits::Limits;

/// A LiteLLM user, reconciled against the admin API (`/user/*`), under the
/// user id `crossplane.io/external-name` (`<namespace>.<name>` by default).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMUser",
    namespaced,
    shortname = "lu",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<UserObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"EMAIL","type":"string","jsonPath":".spec.forProvider.userEmail"}"#,
    printcolumn = r#"{"name":"ROLE","type":"string","jsonPath":".status.atProvider.userRole"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMUserSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM user.
    pub for_provider: UserParameters,
}

/// The desired state of a LiteLLM user. Unset fields are left to LiteLLM
/// (`userRole` excepted outside the instance's namespace: see there).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserParameters {
    /// `user_email`. LiteLLM keeps emails unique (ignoring case) across
    /// all users of the proxy: one another user has is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_EMAIL_LENGTH))]
    pub user_email: Option<String>,
    /// Display name (`user_alias`). Not unique in LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ALIAS_LENGTH))]
    pub user_alias: Option<String>,
    /// `user_role`. Outside the LiteLLMInstance's namespace only
    /// `internal_user` and `internal_user_viewer` are allowed, and unset
    /// means `internal_user` (the admin roles are the platform's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_role: Option<UserRole>,
    /// Models the user may use (LiteLLM applies them to the user's keys
    /// outside a team). Outside the LiteLLMInstance's namespace the list is
    /// required, as for teams. LiteLLM cannot be told to clear a user's
    /// list (it ignores an empty one on update), so it has at least one
    /// entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = bounds::MAX_MODELS),
        inner(length(max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Spend and rate limits of the user, over all its keys.
    #[serde(flatten)]
    pub limits: Limits,
    /// Free-form metadata. The provider adds its ownership marker beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub metadata: Option<FreeForm>,
}

/// `user_role`, one of the roles LiteLLM 1.108.7 gives through `/user/new`
/// and `/user/update`. Outside the LiteLLMInstance's namespace only
/// `internal_user` and `internal_user_viewer` are allowed, and unset means
/// `internal_user` (the admin roles are the platform's).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UserRole {
    /// Admin over the whole proxy: every key, team, user and setting.
    ProxyAdmin,
    /// Sees every key and all spend.
    #[serde(rename = "proxy_admin_viewer")]
    ProxyAdminViewer,
    /// Creates and deletes keys of its own, sees its own spend.
    InternalUser,
    /// Sees its own keys and spend.
    InternalUserViewer,
}

impl UserRole {
    /// LiteLLM's name of the role.
    pub fn as_str(self) -> &'static str {
        match self {
            UserRole::ProxyAdmin => "proxy_admin",
            UserRole::ProxyAdminViewer => "proxy_admin_viewer",
            UserRole::InternalUser => "internal_user",
            UserRole::InternalUserViewer => "internal_user_viewer",
        }
    }

    /// Whether the role administers (or sees) more than the user's own.
    pub fn is_admin(self) -> bool {
        matches!(self, UserRole::ProxyAdmin | UserRole::ProxyAdminViewer)
    }
}

/// A LiteLLM user as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_alias: Option<String>,
    /// As LiteLLM reports it (any role, those of other tools included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// Spend so far in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}
