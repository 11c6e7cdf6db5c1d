//! `LiteLLMVectorStore`: a vector store the proxy registers and searches
//! through its provider (`/vector_store/*`). See `docs/vector-stores.md`.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, LocalRef, ManagedFields, ManagedStatus, SecretKeySelector};
use super::model::{AwsParams, AzureParams, VertexParams};

/// A vector store of the proxy. Its id in LiteLLM is the
/// `crossplane.io/external-name` annotation, `<namespace>.<name>` when
/// unset.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMVectorStore",
    namespaced,
    shortname = "lvs",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<VectorStoreObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"PROVIDER","type":"string","jsonPath":".spec.forProvider.customLlmProvider"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMVectorStoreSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired vector store.
    pub for_provider: VectorStoreParameters,
}

/// The desired state of a vector store.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VectorStoreParameters {
    /// The LiteLLM provider of the vector store (`custom_llm_provider`:
    /// `openai`, `bedrock`, `vertex_ai`, `azure`, ...). Outside the
    /// LiteLLMInstance's namespace it must be a provider family whose
    /// credentials are known (docs/tenancy.md).
    #[schemars(length(min = 1, max = bounds::MAX_WORD_LENGTH))]
    pub custom_llm_provider: String,
    /// Display name (`vector_store_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub vector_store_name: Option<String>,
    /// Description (`vector_store_description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_DESCRIPTION_LENGTH))]
    pub vector_store_description: Option<String>,
    /// Free-form `vector_store_metadata`, stored in plain text (never a
    /// secret); the provider keeps its ownership marker beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub vector_store_metadata: Option<FreeForm>,
    /// How the proxy calls the vector store's provider. LiteLLM's update
    /// route ignores `litellm_params` and `litellm_credential_name`: a
    /// change here (or of a Secret it reads) deletes the vector store and
    /// creates it again under the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub litellm_params: Option<VectorStoreLiteLLMParams>,
}

/// `litellm_params` of a vector store: the parameters of a model's
/// `litellmParams` that reach a provider, with the same rules (every
/// secret from a Secret of the namespace, never in status, events or
/// logs; a changed value noticed by its fingerprint).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VectorStoreLiteLLMParams {
    /// The provider's base URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_URL_LENGTH))]
    pub api_base: Option<String>,
    /// The provider's API version (Azure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub api_version: Option<String>,
    /// Secret key holding the provider's API key (`api_key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_secret_ref: Option<SecretKeySelector>,
    /// A `LiteLLMCredential` of this namespace whose values LiteLLM uses
    /// for this vector store (`litellm_credential_name`). The vector store
    /// waits until it is Ready; the credential is deleted only after the
    /// vector stores that use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_ref: Option<LocalRef>,
    /// AWS (Bedrock knowledge bases) credentials and settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws: Option<AwsParams>,
    /// Google Vertex AI settings and service-account credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertex: Option<VertexParams>,
    /// Azure Entra ID (AD) credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<AzureParams>,
    /// Further `litellm_params`, sent as given and compared key by key.
    /// Never a secret: a name LiteLLM treats as one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub additional_params: Option<FreeForm>,
}

/// A vector store as the admin API reports it (never a parameter of
/// `litellm_params`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VectorStoreObservation {
    /// The vector store's id (the external name): what keys' and teams'
    /// `objectPermission.vectorStores` name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ID_LENGTH))]
    pub vector_store_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub vector_store_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub custom_llm_provider: Option<String>,
    /// The LiteLLM credential it uses (of `credentialRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_NAME_LENGTH))]
    pub credential_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_WORD_LENGTH))]
    pub updated_at: Option<String>,
    /// Fingerprint of each Secret value last written to LiteLLM, by the
    /// `forProvider` field that references it (`sha256:` and 16 hex digits
    /// of a domain-separated SHA-256; never the value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<BTreeMap<String, String>>,
}
