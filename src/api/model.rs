//! `LiteLLMModel`: a model deployment stored in the proxy's database
//! (`/model/*`; the proxy needs `STORE_MODEL_IN_DB=True`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{FreeForm, LocalRef, ManagedFields, ManagedStatus, SecretKeySelector};

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
    /// The LiteLLMTeam (same namespace) whose model this is. It is then
    /// never published under a public name, in any namespace: LiteLLM
    /// serves it as `<namespace>/<modelName>`, which only the namespace's
    /// own teams and keys may list (the team's `models` must name it). The
    /// model waits for the team. (LiteLLM's own team-only models,
    /// `model_info.team_id`, need an enterprise licence and are not used.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_ref: Option<LocalRef>,
    /// Model access groups the deployment belongs to
    /// (`model_info.access_groups`): a team or key whose `models` names a
    /// group reaches every model of it. Outside the platform's namespaces,
    /// and for team models, a group is `<namespace>/<group>` (a name that
    /// starts with it is kept), so a tenant's model never joins a
    /// platform's group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_TAGS),
        inner(length(max = super::common::bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub access_groups: Option<Vec<String>>,
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

/// `litellm_params` of a model deployment. Every secret comes from a
/// Secret (a `...SecretRef`), is sent to LiteLLM (which stores it
/// encrypted and never returns it) and never reaches status, events or
/// logs; a changed Secret value is noticed by its fingerprint in
/// `status.atProvider.secretFingerprints` and sent again.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMParams {
    /// Upstream model, such as `openai/gpt-4o`, `bedrock/anthropic.claude-3-5-sonnet`,
    /// `vertex_ai/gemini-1.5-pro`, `azure/<deployment>`.
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
    /// Secret key holding the upstream API key. Outside the platform's
    /// namespaces (see `modelName`) a model must bring, from Secrets of its
    /// namespace (here or in its `credentialRef`), the credentials that
    /// pre-empt every fallback of its LiteLLM provider family (`api_key`
    /// for most; `aws` keys for Bedrock and SageMaker, a service account
    /// for Vertex AI; see docs/tenancy.md): without them LiteLLM would call
    /// the upstream with the proxy's own credentials. A value
    /// `os.environ/...` (LiteLLM would read the proxy's environment) is
    /// refused from every namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_secret_ref: Option<SecretKeySelector>,
    /// A `LiteLLMCredential` of this namespace whose values LiteLLM uses
    /// for this model (`litellm_credential_name`): the credential's values
    /// fill the parameters the model leaves unset. The model waits until
    /// the credential is Ready, and the credential is deleted only after
    /// the models that use it. Removing the reference detaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_ref: Option<LocalRef>,
    /// AWS (Bedrock, SageMaker) credentials and settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws: Option<AwsParams>,
    /// Google Vertex AI settings and service-account credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertex: Option<VertexParams>,
    /// Azure OpenAI / Azure AI Entra ID (AD) credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<AzureParams>,
    /// Tokens per minute for this deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub tpm: Option<i64>,
    /// Requests per minute for this deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RATE_LIMIT))]
    pub rpm: Option<i64>,
    /// Seconds a call to the upstream may take (`timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::common::bounds::MAX_TIMEOUT_SECONDS))]
    pub timeout: Option<i64>,
    /// Seconds a streaming call may take (`stream_timeout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::common::bounds::MAX_TIMEOUT_SECONDS))]
    pub stream_timeout: Option<i64>,
    /// Retries of a failed upstream call (`max_retries`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::common::bounds::MAX_RETRIES))]
    pub max_retries: Option<i64>,
    /// Drop request parameters the upstream does not support instead of
    /// failing (`drop_params`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_params: Option<bool>,
    /// The LiteLLM provider, when `model` does not start with it
    /// (`custom_llm_provider`: `openai`, `bedrock`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub custom_llm_provider: Option<String>,
    /// Tags for tag-based routing (`tags`; with `modelInfo.enable_tag_filtering`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = super::common::bounds::MAX_TAGS),
        inner(length(max = super::common::bounds::MAX_WORD_LENGTH))
    )]
    pub tags: Option<Vec<String>>,
    /// USD per input token, a decimal string such as `"0.0000025"`
    /// (`input_cost_per_token`), compared numerically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::price_schema")]
    pub input_cost_per_token: Option<String>,
    /// USD per output token (`output_cost_per_token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::price_schema")]
    pub output_cost_per_token: Option<String>,
    /// Further `litellm_params` the fields above do not cover (options
    /// added to LiteLLM after this CRD), sent as given and compared key by
    /// key. Never a secret: a name LiteLLM itself treats as one (with a
    /// `key`, `secret`, `token`, `password`, `credential`, `auth` ...
    /// part) is refused, as are the fields above under their LiteLLM names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub additional_params: Option<FreeForm>,
}

/// AWS credentials and settings of a model (Bedrock, SageMaker).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AwsParams {
    /// `aws_region_name`, such as `us-east-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub region_name: Option<String>,
    /// `aws_access_key_id`, from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_key_id_secret_ref: Option<SecretKeySelector>,
    /// `aws_secret_access_key`, from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_access_key_secret_ref: Option<SecretKeySelector>,
    /// `aws_session_token`, from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_token_secret_ref: Option<SecretKeySelector>,
    /// A role to assume (`aws_role_name`, an ARN). Refused outside the
    /// platform's namespaces: LiteLLM assumes it with the proxy's own AWS
    /// identity when the proxy runs as that role or the model brings no
    /// keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_ALIAS_LENGTH))]
    pub role_name: Option<String>,
    /// `aws_session_name` of the assumed role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub session_name: Option<String>,
    /// `aws_web_identity_token` (OIDC) for the role, from a Secret. Refused
    /// outside the platform's namespaces: LiteLLM reads it as a pointer to
    /// a token of the proxy (`oidc/...`, a secret manager's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web_identity_token_secret_ref: Option<SecretKeySelector>,
}

/// Google Vertex AI settings of a model.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VertexParams {
    /// `vertex_project`, the GCP project id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub project: Option<String>,
    /// `vertex_location`, such as `us-central1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub location: Option<String>,
    /// `vertex_credentials`: a service account's JSON key, from a Secret.
    /// Outside the platform's namespaces it must be the key itself (type
    /// `service_account` or `authorized_user`): LiteLLM reads any other
    /// string as a file of the proxy's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret_ref: Option<SecretKeySelector>,
}

/// Azure Entra ID (AD) credentials of a model; the API version is
/// `apiVersion`, an api key `apiKeySecretRef`. Outside the platform's
/// namespaces only `adTokenSecretRef` (beside the api key a tenant's Azure
/// model needs): LiteLLM completes the Entra ID settings from the proxy's
/// environment, and a token from them replaces the model's own key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AzureParams {
    /// `azure_ad_token`, from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ad_token_secret_ref: Option<SecretKeySelector>,
    /// `tenant_id` of the app registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub tenant_id: Option<String>,
    /// `client_id` of the app registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = super::common::bounds::MAX_WORD_LENGTH))]
    pub client_id: Option<String>,
    /// `client_secret` of the app registration, from a Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_secret_ref: Option<SecretKeySelector>,
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
    /// The LiteLLM team of `teamRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The LiteLLM credential the model uses (of `credentialRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_name: Option<String>,
    /// The model access groups as LiteLLM serves them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_groups: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Fingerprint of each Secret value last written to LiteLLM, by the
    /// `forProvider` field that references it (`sha256:` and 16 hex digits
    /// of a domain-separated SHA-256; never the value). LiteLLM never
    /// returns these values, so this is how a changed Secret is noticed: a
    /// different value is drift and is sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<std::collections::BTreeMap<String, String>>,
}
