//! `LiteLLMFallback`: one fallback rule of the LiteLLM router (`/fallback`):
//! the models a request for `model` is sent to, in order, when `model`
//! fails (for any error, a context window exceeded, or a content policy
//! violation). Router-wide, so the platform's only: see `docs/fallbacks.md`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, LocalRef, ManagedFields, ManagedStatus};

/// A LiteLLM fallback rule, named in LiteLLM by its model and its type: the
/// `crossplane.io/external-name` annotation is `<model>:<type>`
/// (`gpt-4o:general`), chosen from `forProvider` before the rule is
/// written.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMFallback",
    namespaced,
    shortname = "lfb",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<FallbackObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"TYPE","type":"string","jsonPath":".spec.forProvider.type"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMFallbackSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired fallback rule.
    pub for_provider: FallbackParameters,
}

/// The desired fallback rule: set exactly one of `model` and `modelRef`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FallbackParameters {
    /// The model name (`model_name`) whose requests fall back. It must be a
    /// model of the proxy, and hold no `/` (LiteLLM 1.108.7 cannot delete
    /// the rule of such a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_MODEL_REF_LENGTH))]
    pub model: Option<String>,
    /// The LiteLLMModel (same namespace) whose requests fall back: its
    /// public model name. The model's deletion waits for this resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ref: Option<LocalRef>,
    /// Which failures fall back: `general` (any error, after the model's
    /// retries; the default), `contextWindow` (the request exceeds the
    /// model's context window), `contentPolicy` (the upstream refused it
    /// for its content policy). Each type is a rule of its own.
    #[serde(default, rename = "type")]
    pub fallback_type: FallbackKind,
    /// The model names tried instead, in order. Each must be a model of the
    /// proxy, none twice, not `model` itself. Required to write the rule;
    /// an import (`managementPolicies: [Observe]`) may leave it out, and it
    /// is filled from the rule found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = bounds::MAX_MODELS),
        inner(length(min = 1, max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub fallbacks: Option<Vec<String>>,
}

/// Which failures a rule covers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FallbackKind {
    /// Any error of the model (`fallbacks`).
    #[default]
    General,
    /// A context window exceeded (`context_window_fallbacks`).
    ContextWindow,
    /// A content policy violation (`content_policy_fallbacks`).
    ContentPolicy,
}

/// A fallback rule as the router holds it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FallbackObservation {
    /// The model whose requests fall back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_MODEL_REF_LENGTH))]
    pub model: Option<String>,
    /// LiteLLM's name of the type (`general`, `context_window`,
    /// `content_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub fallback_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MODELS),
        inner(length(max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub fallbacks: Option<Vec<String>>,
    /// The rule (external name) this resource wrote first, or took over
    /// with `litellm.crossplane.io/adopt-existing`: LiteLLM keeps no owner
    /// for a rule, so this is where the provider remembers that the rule is
    /// this resource's to update and delete. A rule without it is one made
    /// elsewhere (the UI), which the resource only imports or adopts
    /// deliberately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ID_LENGTH))]
    pub owned_rule: Option<String>,
}
