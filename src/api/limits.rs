//! Spend and rate limits: the same fields, with the same meaning and
//! bounds, on every kind LiteLLM limits (teams, keys, budgets, and the
//! kinds to come), flattened into each kind's `forProvider`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::bounds;

/// Spend and rate limits of a LiteLLM object. Unset fields are left to
/// LiteLLM (or late-initialized from it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// Spend limit in USD, a decimal string such as `"25.50"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::money_schema")]
    pub max_budget: Option<String>,
    /// How often spend resets: `30s`, `12h`, `30d`, `1mo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::duration_schema")]
    pub budget_duration: Option<String>,
    /// Tokens per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_RATE_LIMIT))]
    pub tpm_limit: Option<i64>,
    /// Requests per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_RATE_LIMIT))]
    pub rpm_limit: Option<i64>,
    /// Requests in flight at once. Not on teams: LiteLLM keeps none for a
    /// team (set it on a LiteLLMBudget the team's keys link to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = bounds::MAX_PARALLEL_REQUESTS))]
    pub max_parallel_requests: Option<i64>,
}

/// Message of the rule that keeps `maxParallelRequests` off teams.
pub const TEAM_PARALLEL_REQUESTS: &str = "maxParallelRequests is not kept for a team by LiteLLM \
     (it accepts the field and drops it): set it on a LiteLLMBudget that the team's keys link to \
     (budgetRef), or on each key";
