//! `LiteLLMVirtualKey`: a LiteLLM virtual key (`/key/*`). The secret itself
//! only ever lives in the connection Secret.

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{FreeForm, LocalRef, ManagedFields, ManagedStatus};
use super::limits::Limits;

/// Message of the rule that keeps `forProvider.duration` as created.
pub const DURATION_IMMUTABLE: &str = "forProvider.duration cannot change after creation: LiteLLM \
     turned it into a fixed expiry (status.atProvider.expires); to get a key with a new lifetime, \
     delete and re-create this resource (its Secret gets the new key)";

/// Message of the rule that a key gives its routes one way.
pub const KEY_TYPE_OR_ROUTES: &str = "forProvider.keyType sets the key's allowed routes: give \
     keyType or allowedRoutes, not both";

/// Message of the rule that a key's soft budget is its own.
pub const KEY_SOFT_BUDGET: &str = "forProvider.softBudget: LiteLLM keeps a key's soft budget in \
     the budget the key links to, so with budgetRef or budgetId it would change that budget for \
     every key linked to it: set softBudget on the LiteLLMBudget instead";

/// The fields the API server selects keys by (`selectableFields`, each
/// declared by a `selectable` line below): the team, budget and user a key
/// joins, by reference and by id. A deletion asks for the keys that join
/// its team, budget or user with them instead of listing every key of the
/// namespace.
pub const TEAM_REF_FIELD: &str = "spec.forProvider.teamRef.name";
pub const TEAM_ID_FIELD: &str = "spec.forProvider.teamId";
pub const BUDGET_REF_FIELD: &str = "spec.forProvider.budgetRef.name";
pub const BUDGET_ID_FIELD: &str = "spec.forProvider.budgetId";
pub const USER_REF_FIELD: &str = "spec.forProvider.userRef.name";
pub const USER_ID_FIELD: &str = "spec.forProvider.userId";

/// A LiteLLM virtual key. Its secret is chosen by the provider and written to
/// `writeConnectionSecretToRef` (default `<name>-key`) before LiteLLM sees it.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMVirtualKey",
    namespaced,
    shortname = "lk",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<KeyObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"ALIAS","type":"string","jsonPath":".spec.forProvider.keyAlias"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    selectable = ".spec.forProvider.teamRef.name",
    selectable = ".spec.forProvider.teamId",
    selectable = ".spec.forProvider.budgetRef.name",
    selectable = ".spec.forProvider.budgetId",
    selectable = ".spec.forProvider.userRef.name",
    selectable = ".spec.forProvider.userId"
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMVirtualKeySpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM key.
    pub for_provider: KeyParameters,
}

/// The desired state of a LiteLLM virtual key.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(
    validation = Rule::new("(has(self.duration) ? self.duration : '') == (has(oldSelf.duration) ? oldSelf.duration : '')").message(DURATION_IMMUTABLE),
    validation = Rule::new("!has(self.keyType) || !has(self.allowedRoutes)").message(KEY_TYPE_OR_ROUTES),
    validation = Rule::new("!has(self.softBudget) || (!has(self.budgetRef) && !has(self.budgetId))").message(KEY_SOFT_BUDGET)
)]
#[serde(rename_all = "camelCase")]
pub struct KeyParameters {
    /// `key_alias`, unique across all keys of the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ALIAS_LENGTH))]
    pub key_alias: Option<String>,
    /// The LiteLLMTeam (same namespace) the key belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_ref: Option<LocalRef>,
    /// A LiteLLM team id, when the team is not managed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub team_id: Option<String>,
    /// The LiteLLMBudget (same namespace) whose limits apply to the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ref: Option<LocalRef>,
    /// A LiteLLM budget id, when the budget is not managed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub budget_id: Option<String>,
    /// The LiteLLMUser (same namespace) the key belongs to (`user_id`).
    /// LiteLLM deletes a user's keys with the user, so the user's deletion
    /// waits for this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ref: Option<LocalRef>,
    /// A LiteLLM user id, when the user is not managed here. Outside the
    /// LiteLLMInstance's namespace it must be a user of this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ID_LENGTH))]
    pub user_id: Option<String>,
    /// Models the key may use; empty means the team's models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_MODELS),
        inner(length(max = super::common::bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Spend and rate limits.
    #[serde(flatten)]
    pub limits: Limits,
    /// Spend in USD at which LiteLLM alerts (`soft_budget`); requests go
    /// on. LiteLLM keeps it in a budget of the key's own, so not beside
    /// `budgetRef` or `budgetId` (set it on the LiteLLMBudget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub soft_budget: Option<String>,
    /// Tags, guardrails and per-model rate limits.
    #[serde(flatten)]
    pub usage: super::access::Usage,
    /// Routes and model aliases.
    #[serde(flatten)]
    pub access: super::access::KeyAccess,
    /// Lifetime of the key from creation (`duration` in LiteLLM): `30d`, `12h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::duration_schema")]
    pub duration: Option<String>,
    /// Whether the key is blocked.
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
    /// Replace the key on a schedule. On demand, annotate the resource with
    /// `litellm.crossplane.io/rotate-requested-at: <RFC 3339 time>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<KeyRotation>,
}

/// When and how a key is replaced. A rotation writes a new secret to the
/// connection Secret first, creates a LiteLLM key with it (same alias, team,
/// limits, metadata), and deletes the old key after the grace period.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyRotation {
    /// Age of the current key at which it is replaced: `30d`, `12h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::interval_schema")]
    pub every: Option<String>,
    /// How long the old key keeps working after a rotation, so consumers
    /// can pick up the new one: `1h`, `1d`. Default: none (revoked at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::interval_schema")]
    pub grace_period: Option<String>,
}

/// A LiteLLM key as the admin API reports it. Holds the token (the sha256
/// of the secret, LiteLLM's id for it), never the secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_alias: Option<String>,
    /// LiteLLM's masked form of the key, such as `sk-...abcd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When the current key replaced an earlier one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_rotation_time: Option<String>,
    /// When `forProvider.rotation.every` replaces the current key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_rotation_time: Option<String>,
}
