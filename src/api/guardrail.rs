//! `LiteLLMGuardrail`: a guardrail the proxy runs on the requests and
//! answers of the keys and teams that name it, or of every request
//! (`defaultOn`) (`/guardrails`).

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, ManagedFields, ManagedStatus, SecretKeySelector};

/// The pattern of `guardrailName`: keys and teams name the guardrail by it
/// (their `guardrails` lists), so no blanks and no `/`.
pub const GUARDRAIL_NAME_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$";

/// The pattern of `guardrail` (LiteLLM's integration, such as `presidio`,
/// `lakera_v2`, `azure/prompt_shield`).
pub const GUARDRAIL_TYPE_PATTERN: &str = r"^[a-z0-9][a-z0-9_/-]*$";

/// The pattern of `apiBase`: `http://` or `https://` and a host.
pub const GUARDRAIL_API_BASE_PATTERN: &str = r"^https?://[^\s/?#]+";

/// The pattern of the name of a secret parameter (`secretParams[].name`).
pub const GUARDRAIL_PARAM_NAME_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9_]*$";

/// Message of the rule that `api_key` comes from `apiKeySecretRef` only.
pub const GUARDRAIL_SECRET_API_KEY: &str =
    "forProvider.secretParams: api_key is set by forProvider.apiKeySecretRef";

/// Secret parameters of one guardrail (`secretParams`): with `api_key`,
/// within the fingerprints a status records.
pub const MAX_SECRET_PARAMS: u32 = 16;

/// A guardrail registered with LiteLLM (stored in its database), which the
/// proxy applies to the requests of the keys and teams whose `guardrails`
/// name it, or to every request of the proxy with `defaultOn`.
///
/// LiteLLM chooses the guardrail's id (a UUID): it is the external name
/// once created. The name (`guardrailName`, unique in the proxy, what keys
/// and teams name) is chosen before the create, so a create whose answer
/// is lost is found by it and never made twice. The ownership marker lives
/// in the free-form `guardrail_info`, beside `forProvider.guardrailInfo`.
///
/// Only in the LiteLLMInstance's namespace: a guardrail sees the traffic of
/// every key and team that names it (with `defaultOn`, of every request of
/// the proxy) and sends it to its `apiBase` from the proxy's network, so a
/// guardrail elsewhere (a tenant's) is refused and nothing is sent.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMGuardrail",
    plural = "litellmguardrails",
    namespaced,
    shortname = "lgr",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<GuardrailObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"GUARDRAIL","type":"string","jsonPath":".spec.forProvider.guardrail"}"#,
    printcolumn = r#"{"name":"MODE","type":"string","jsonPath":".spec.forProvider.mode"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMGuardrailSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM guardrail.
    pub for_provider: GuardrailParameters,
}

/// When the proxy runs the guardrail (`litellm_params.mode`): the event
/// hooks LiteLLM 1.108.7 knows. Each integration supports some of them;
/// LiteLLM refuses the others when the guardrail is written (HTTP 400 or
/// 422, reported in `Synced`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GuardrailMode {
    /// On the request, before the model is called.
    #[default]
    PreCall,
    /// On the request, while the model is called (in parallel).
    DuringCall,
    /// On the model's answer.
    PostCall,
    /// Only on what is logged.
    LoggingOnly,
    /// Before an MCP tool call.
    PreMcpCall,
    /// During an MCP tool call.
    DuringMcpCall,
    /// After an MCP tool call.
    PostMcpCall,
    /// On the transcription of realtime audio input.
    RealtimeInputTranscription,
}

impl GuardrailMode {
    /// LiteLLM's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardrailMode::PreCall => "pre_call",
            GuardrailMode::DuringCall => "during_call",
            GuardrailMode::PostCall => "post_call",
            GuardrailMode::LoggingOnly => "logging_only",
            GuardrailMode::PreMcpCall => "pre_mcp_call",
            GuardrailMode::DuringMcpCall => "during_mcp_call",
            GuardrailMode::PostMcpCall => "post_mcp_call",
            GuardrailMode::RealtimeInputTranscription => "realtime_input_transcription",
        }
    }
}

/// The desired state of a guardrail. Every field is the guardrail's whole
/// setting: LiteLLM's `PUT` replaces `litellm_params` and `guardrail_info`
/// whole, so what `forProvider` leaves unset is LiteLLM's default after the
/// next write.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(
    validation = Rule::new("!has(self.secretParams) || self.secretParams.all(p, p.name != 'api_key')").message(GUARDRAIL_SECRET_API_KEY)
)]
#[serde(rename_all = "camelCase")]
pub struct GuardrailParameters {
    /// The guardrail's name in the proxy (unique there): what keys and
    /// teams list in their `guardrails`. Default: `<namespace>.<name>` of
    /// this resource. Changing it renames the guardrail in LiteLLM (keys
    /// and teams naming the old name then name nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = bounds::MAX_NAME_LENGTH),
        regex(pattern = GUARDRAIL_NAME_PATTERN)
    )]
    pub guardrail_name: Option<String>,
    /// LiteLLM's integration (`litellm_params.guardrail`): `presidio`,
    /// `lakera_v2`, `bedrock`, `generic_guardrail_api`,
    /// `litellm_content_filter`, `hide-secrets`, ... (see
    /// docs/guardrails.md for which need what).
    #[schemars(
        length(min = 1, max = bounds::MAX_WORD_LENGTH),
        regex(pattern = GUARDRAIL_TYPE_PATTERN)
    )]
    pub guardrail: String,
    /// When the proxy runs it.
    pub mode: GuardrailMode,
    /// Whether the proxy runs it on every request, whatever the key or team
    /// asks (`default_on`). Unset: `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_on: Option<bool>,
    /// Where the integration's service is (`api_base`): `http://` or
    /// `https://`. The proxy calls it from its own network with the traffic
    /// it guards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_URL_LENGTH),
        regex(pattern = GUARDRAIL_API_BASE_PATTERN)
    )]
    pub api_base: Option<String>,
    /// The Secret key (same namespace) holding the integration's API key
    /// (`api_key`). LiteLLM never returns it whole: the provider records its
    /// fingerprint (`status.atProvider.secretFingerprints`), and a changed
    /// Secret is written again. A value of the form `os.environ/...` is
    /// refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_secret_ref: Option<SecretKeySelector>,
    /// Other secret parameters of the integration, each from a Secret key
    /// (same namespace), by LiteLLM's name: `aws_secret_access_key`,
    /// `client_secret`, `auth_token`, ... Only names LiteLLM masks when it
    /// reads a guardrail back (holding `key`, `token`, `secret`,
    /// `credentials`, `password`, `passwd` or `authorization`); tracked by
    /// fingerprint like `apiKeySecretRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = MAX_SECRET_PARAMS),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub secret_params: Option<Vec<GuardrailSecretParam>>,
    /// The integration's other, plain parameters (`litellm_params`), sent
    /// as given and compared key by key: `presidio_analyzer_api_base`,
    /// `unreachable_fallback`, `blocked_words`, `timeout`, ... Never a
    /// secret: a name LiteLLM treats as one (anywhere in the value, too) is
    /// refused, as are `os.environ/...` values and the parameters the typed
    /// fields set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub params: Option<FreeForm>,
    /// Free-form `guardrail_info` (LiteLLM's UI shows its `description`).
    /// Stored in plain text, so never a secret; the provider keeps its
    /// ownership marker beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub guardrail_info: Option<FreeForm>,
}

/// A secret parameter of a guardrail, read from a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardrailSecretParam {
    /// LiteLLM's name of the parameter (`aws_secret_access_key`, ...).
    #[schemars(
        length(min = 1, max = bounds::MAX_LABEL_LENGTH),
        regex(pattern = GUARDRAIL_PARAM_NAME_PATTERN)
    )]
    pub name: String,
    /// The Secret key holding it (same namespace).
    pub secret_key_ref: SecretKeySelector,
}

/// A guardrail as the admin API reports it: never a secret parameter, nor
/// its `apiBase` (which may hold credentials) or plain parameters.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardrailObservation {
    /// LiteLLM's id of the guardrail (the external name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ID_LENGTH))]
    pub guardrail_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub guardrail_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub guardrail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_on: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub updated_at: Option<String>,
    /// The names of `forProvider.params` last written: LiteLLM stores every
    /// parameter of the integration with its default, so a name removed
    /// from `params` is found by this list (and written again, which puts
    /// LiteLLM's default back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_METADATA_PROPERTIES),
        inner(length(max = bounds::MAX_NAME_LENGTH))
    )]
    pub params_written: Option<Vec<String>>,
    /// Fingerprint of each value from a Secret last written to LiteLLM, by
    /// LiteLLM's name (`api_key`, ...): `sha256:` and 16 hex digits of a
    /// domain-separated SHA-256, never the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<BTreeMap<String, String>>,
}
