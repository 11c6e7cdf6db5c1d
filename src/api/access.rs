//! What a team or key may use beyond its models and limits, written once
//! for both (and the kinds to come) and flattened into their `forProvider`:
//! tags, guardrails and per-model rate limits ([`Usage`]), and for keys the
//! routes they may call and the model aliases they resolve ([`KeyAccess`]).
//!
//! Every field is sent only when set, and unset means "left to LiteLLM".

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::bounds;

/// Tags, guardrails and per-model rate limits of a team or key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tags for spend tracking and tag-based routing (`tags`). LiteLLM
    /// reserves them for Enterprise licences: an open-source proxy refuses
    /// them (`Synced=False`, reason naming the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TAGS),
        inner(length(max = bounds::MAX_WORD_LENGTH))
    )]
    pub tags: Option<Vec<String>>,
    /// Guardrails applied to every request (`guardrails`), by the names of
    /// the proxy's configured guardrails. Enterprise-only, like `tags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TAGS),
        inner(length(max = bounds::MAX_WORD_LENGTH))
    )]
    pub guardrails: Option<Vec<String>>,
    /// Requests per minute by model name (`model_rpm_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "per_model_limit_schema")]
    pub model_rpm_limit: Option<BTreeMap<String, i64>>,
    /// Tokens per minute by model name (`model_tpm_limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "per_model_limit_schema")]
    pub model_tpm_limit: Option<BTreeMap<String, i64>>,
    /// A spend limit per model name (`model_max_budget`). Enterprise-only,
    /// like `tags`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_METADATA_PROPERTIES))]
    pub model_max_budget: Option<BTreeMap<String, ModelBudget>>,
}

/// The spend limit of one model.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelBudget {
    /// Spend limit in USD, a decimal string such as `"25.50"`.
    #[schemars(schema_with = "super::common::money_schema")]
    pub budget_limit: String,
    /// How often the model's spend resets: `1d`, `30d`.
    #[schemars(schema_with = "super::common::duration_schema")]
    pub time_period: String,
}

/// What kind of routes a key may call (`key_type`). LiteLLM turns it into
/// `allowed_routes`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyType {
    /// LLM API routes only (`llm_api_routes`).
    LlmApi,
    /// Read-only info routes only (`info_routes`).
    ReadOnly,
    /// Management routes (`management_routes`): creating and changing
    /// users, teams and keys. Only from the LiteLLMInstance's namespace.
    Management,
    /// LiteLLM's default routes for the key's role.
    Default,
}

impl KeyType {
    /// The name LiteLLM gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyType::LlmApi => "llm_api",
            KeyType::ReadOnly => "read_only",
            KeyType::Management => "management",
            KeyType::Default => "default",
        }
    }
}

/// Routes and model aliases of a key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyAccess {
    /// What kind of routes the key may call; sets `allowed_routes`, so not
    /// together with `allowedRoutes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_type: Option<KeyType>,
    /// Routes the key may call (`allowed_routes`): paths such as
    /// `/chat/completions`, or LiteLLM's route groups (`llm_api_routes`,
    /// `info_routes`, ...). LiteLLM lets a key call every route listed here,
    /// admin routes included, so outside the LiteLLMInstance's namespace
    /// only `llm_api_routes` and `info_routes` are accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_TAGS),
        inner(length(max = bounds::MAX_URL_LENGTH))
    )]
    pub allowed_routes: Option<Vec<String>>,
    /// Model names the key's callers may send, each resolved to the model
    /// it names (`aliases`). Outside the LiteLLMInstance's namespace each
    /// target follows the rules of `models`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "model_aliases_schema")]
    pub model_aliases: Option<BTreeMap<String, String>>,
}

/// Schema of a per-model limit: at most [`bounds::MAX_MODELS`] model names,
/// each limit within the bounds of every rate limit.
fn per_model_limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": bounds::MAX_METADATA_PROPERTIES,
        "additionalProperties": {
            "type": "integer",
            "format": "int64",
            "minimum": 0,
            "maximum": bounds::MAX_RATE_LIMIT
        }
    })
}

/// Schema of model aliases: alias to model name, bounded like model names.
pub(super) fn model_aliases_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "nullable": true,
        "maxProperties": bounds::MAX_METADATA_PROPERTIES,
        "additionalProperties": {
            "type": "string",
            "maxLength": bounds::MAX_MODEL_REF_LENGTH
        }
    })
}
