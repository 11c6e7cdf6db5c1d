//! `LiteLLMTag`: a LiteLLM tag (`/tag/*`), a label requests carry (request
//! metadata `tags`, the `x-litellm-tags` header) with a budget and rate
//! limits of its own. The platform's only: see `docs/tags.md`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, ManagedFields, ManagedStatus};
use super::limits::Limits;

/// A LiteLLM tag. Its name in LiteLLM is the `crossplane.io/external-name`
/// annotation, `metadata.name` when unset.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMTag",
    namespaced,
    shortname = "ltag",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<TagObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"MAX-BUDGET","type":"string","jsonPath":".spec.forProvider.maxBudget"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMTagSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM tag.
    pub for_provider: TagParameters,
}

/// The desired state of a LiteLLM tag.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagParameters {
    /// What the tag stands for (shown in LiteLLM's UI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_DESCRIPTION_LENGTH))]
    pub description: Option<String>,
    /// Models (model names or model ids) LiteLLM records for the tag. The
    /// list is kept on the tag only: LiteLLM enforces nothing by it, and
    /// the provider never lets LiteLLM write the tag into those models
    /// (route by tag with `litellmParams.tags` on a LiteLLMModel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MODELS),
        inner(length(min = 1, max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Spend and rate limits of every request that carries the tag (the
    /// tag's budget row in LiteLLM).
    #[serde(flatten)]
    pub limits: Limits,
    /// Soft limit in USD: alerting only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub soft_budget: Option<String>,
}

/// A LiteLLM tag as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagObservation {
    /// The tag's name in LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// The id of the tag's budget row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}
