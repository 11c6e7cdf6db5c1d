//! `LiteLLMModel`: a model deployment stored in the proxy's database
//! (`/model/*`; the proxy needs `STORE_MODEL_IN_DB=True`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{FreeForm, ManagedFields, ManagedStatus, SecretKeySelector};

/// A model deployment of the LiteLLM router.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMModel",
    namespaced,
    shortname = "lm",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<ModelObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"MODEL","type":"string","jsonPath":".spec.forProvider.modelName"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMModelSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired model deployment.
    pub for_provider: ModelParameters,
}

/// The desired state of a model deployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelParameters {
    /// The public model name clients ask for (`model_name`). Public names
    /// belong to the platform: a model outside the instance's namespace and
    /// the namespaces its `spec.publicModelNamespaces` grants is published
    /// as `<namespace>/<modelName>` (a name that already starts with
    /// `<namespace>/` is kept); `status.atProvider.publicModelName` says
    /// which name LiteLLM serves.
    #[schemars(length(min = 1, max = super::common::bounds::MAX_MODEL_NAME_LENGTH))]
    pub model_name: String,
    /// How the router calls the upstream model.
    pub litellm_params: LiteLLMParams,
    /// Extra `model_info` fields (mode, base model, ...), passed through.
    /// Per-deployment pricing (`input_cost_per_token`,
    /// `output_cost_per_token`, `cache_read_input_token_cost`, `*_above_<N>k_tokens`
    /// rates, `tiered_pricing`, ...) is sent in `litellm_params`, where
    /// LiteLLM keeps it; `pricing_overrides` is computed by LiteLLM and
    /// ignored here. A model outside the platform's namespaces may not set
    /// `team_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::model_info_schema")]
    pub model_info: Option<FreeForm>,
}

/// `litellm_params` of a model deployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMParams {
    /// Upstream model, such as `openai/gpt-4o`.
    #[schemars(length(min = 1, max = super::common::bounds::MAX_UPSTREAM_MODEL_LENGTH))]
    pub model: String,
    /// Upstream base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_URL_LENGTH))]
    pub api_base: Option<String>,
    /// Upstream API version (Azure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub api_version: Option<String>,
    /// Secret key holding the upstream API key. Read by the provider and sent
    /// to LiteLLM; never copied into status (only a fingerprint, so a changed
    /// value is sent again). Required outside the platform's namespaces
    /// (see `modelName`): without it LiteLLM would call the upstream with the
    /// proxy's own credentials. A value `os.environ/...` (LiteLLM would read
    /// the proxy's environment) is refused there too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_secret_ref: Option<SecretKeySelector>,
    /// Tokens per minute for this deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub tpm: Option<i64>,
    /// Requests per minute for this deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub rpm: Option<i64>,
}

/// A model deployment as the admin API reports it (never the api key).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// The name LiteLLM serves the model under: what clients, and the
    /// `models` lists of teams and keys, must name. `forProvider.modelName`
    /// in the platform's namespaces, else `<namespace>/<modelName>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_model_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Fingerprint of the `apiKeySecretRef` value last written to LiteLLM
    /// (`sha256:` and 16 hex digits of a domain-separated SHA-256; never
    /// the value). LiteLLM never returns the key, so this is how a changed
    /// Secret is noticed: a different value is drift and is sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub api_key_fingerprint: Option<String>,
}
