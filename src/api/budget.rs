//! `LiteLLMBudget`: a reusable LiteLLM budget (`/budget/*`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{ManagedFields, ManagedStatus};
use super::limits::Limits;

/// A LiteLLM budget that keys (and customers) can be linked to.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMBudget",
    namespaced,
    shortname = "lb",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<BudgetObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"MAX-BUDGET","type":"string","jsonPath":".spec.forProvider.maxBudget"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMBudgetSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM budget.
    pub for_provider: BudgetParameters,
}

/// The desired state of a LiteLLM budget.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetParameters {
    /// Spend and rate limits.
    #[serde(flatten)]
    pub limits: Limits,
    /// Soft limit in USD: alerting only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub soft_budget: Option<String>,
}

/// A LiteLLM budget as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}
