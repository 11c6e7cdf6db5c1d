//! Tags, guardrails, per-model rate limits (teams and keys) and routes and
//! model aliases (keys), as LiteLLM 1.108.7 takes and keeps them.
//!
//! LiteLLM keeps `tags`, `guardrails`, `model_rpm_limit` and
//! `model_tpm_limit` inside the object's `metadata`, not as fields of their
//! own: a create or update moves each one sent into `metadata`, and a read
//! returns them only there ([`METADATA_SETTINGS`]). `tags` and `guardrails`
//! (like `model_max_budget`) are refused with HTTP 403 without an
//! Enterprise licence. `key_type` replaces `allowed_routes` with its route
//! group (`llm_api` gives `["llm_api_routes"]`, `read_only`
//! `["info_routes"]`, `management` `["management_routes"]`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// The `metadata` entries LiteLLM reads as settings of a team or key
/// (`LiteLLM_ManagementEndpoint_MetadataFields` and `..._Premium` of
/// LiteLLM 1.108.7's `proxy/_types.py`): a create or update moves the
/// field of that name into `metadata`, and LiteLLM's checks read it from
/// there. A `temp_budget_increase` in metadata raises the key's budget,
/// `logging` sends its requests' logs elsewhere.
pub const METADATA_SETTINGS: &[&str] = &[
    "model_rpm_limit",
    "model_tpm_limit",
    "model_itpm_limit",
    "model_otpm_limit",
    "default_estimated_output_tokens",
    "default_estimated_output_tokens_per_model",
    "mcp_rpm_limit",
    "tag_rpm_limit",
    "rpm_limit_type",
    "tpm_limit_type",
    "enforced_params",
    "temp_budget_increase",
    "temp_budget_expiry",
    "allowed_vector_store_indexes",
    "enforced_batch_output_expires_after",
    "enforced_file_expires_after",
    "throttle_on_budget_exceeded",
    "enable_prompt_caching",
    "end_user_budget_id",
    "require_trace_id",
    "disable_global_guardrails",
    "guardrails",
    "policies",
    "tags",
    "team_member_key_duration",
    "prompts",
    "logging",
    "secret_manager_settings",
    "allowed_passthrough_routes",
    "denied_passthrough_routes",
];

/// The settings LiteLLM refuses (HTTP 403) without an Enterprise licence,
/// of those a [`UsageRequest`] sends.
pub const ENTERPRISE_SETTINGS: &[&str] = &["tags", "guardrails", "model_max_budget"];

/// Tags, guardrails and per-model rate limits of a team or key request;
/// each sent only when set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guardrails: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_rpm_limit: Option<BTreeMap<String, i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_tpm_limit: Option<BTreeMap<String, i64>>,
    /// A field of the team or key (not kept in `metadata`). Enterprise-only:
    /// 403 for a team, 500 naming the licence for a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_max_budget: Option<BTreeMap<String, ModelBudgetRequest>>,
}

/// One model's spend limit (LiteLLM's `GenericBudgetInfo`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelBudgetRequest {
    pub budget_limit: f64,
    pub time_period: String,
}

impl UsageRequest {
    /// The Enterprise-only settings this request sends, by LiteLLM name.
    pub fn enterprise(&self) -> Vec<&'static str> {
        let set = [
            self.tags.is_some(),
            self.guardrails.is_some(),
            self.model_max_budget.is_some(),
        ];
        ENTERPRISE_SETTINGS
            .iter()
            .zip(set)
            .filter_map(|(name, set)| set.then_some(*name))
            .collect()
    }
}

/// The usage settings of a live team or key, read from its `metadata`.
#[derive(Debug, Clone, Copy)]
pub struct LiveUsage<'a> {
    metadata: Option<&'a Map<String, Value>>,
    model_max_budget: Option<&'a Map<String, Value>>,
}

impl<'a> LiveUsage<'a> {
    pub fn of(metadata: Option<&'a Map<String, Value>>) -> Self {
        Self {
            metadata,
            model_max_budget: None,
        }
    }

    /// With the object's `model_max_budget`, which is not in `metadata`.
    pub fn with_model_max_budget(self, budgets: Option<&'a Map<String, Value>>) -> Self {
        Self {
            model_max_budget: budgets,
            ..self
        }
    }

    /// The per-model spend limits, empty when there are none.
    pub fn model_max_budget(&self) -> Option<&'a Map<String, Value>> {
        self.model_max_budget
    }

    /// The setting `name` as LiteLLM keeps it.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.metadata?.get(name).filter(|v| !v.is_null())
    }
}

/// Routes and aliases of a key request; each sent only when set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KeyAccessRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_routes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aliases: Option<BTreeMap<String, String>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_set_fields_are_sent_and_enterprise_ones_are_named() {
        assert_eq!(
            serde_json::to_value(UsageRequest::default()).unwrap(),
            json!({})
        );
        let usage = UsageRequest {
            guardrails: Some(vec!["pii".into()]),
            model_rpm_limit: Some([("gpt-4o".to_owned(), 5)].into()),
            ..UsageRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&usage).unwrap(),
            json!({"guardrails": ["pii"], "model_rpm_limit": {"gpt-4o": 5}})
        );
        assert_eq!(usage.enterprise(), ["guardrails"]);
        let live = json!({"model_rpm_limit": {"gpt-4o": 5}, "tags": null});
        let live = LiveUsage::of(live.as_object());
        assert_eq!(live.get("model_rpm_limit"), Some(&json!({"gpt-4o": 5})));
        assert_eq!(live.get("tags"), None);
    }
}
