//! `LiteLLMCredential`: a named set of provider credentials that LiteLLM
//! keeps encrypted in its database (`/credentials`), for models to use by
//! name (`litellm_params.litellm_credential_name`).

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, FreeForm, ManagedFields, ManagedStatus, SecretKeySelector};

/// Message of the rule that a credential holds at least one value.
pub const CREDENTIAL_NEEDS_VALUES: &str =
    "forProvider needs at least one value, in values or in plainValues (LiteLLM refuses a \
     credential without values)";

/// Message of the rule that no value is given twice.
pub const CREDENTIAL_VALUE_TWICE: &str =
    "a value name is given both in forProvider.values and in forProvider.plainValues";

/// A LiteLLM credential: values from Secrets (and plain settings), stored
/// encrypted by LiteLLM and named by `crossplane.io/external-name`
/// (`<namespace>.<name>` by default), which models reference.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMCredential",
    namespaced,
    shortname = "lc",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<CredentialObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMCredentialSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM credential.
    pub for_provider: CredentialParameters,
}

/// The desired state of a LiteLLM credential. The values are the
/// credential's whole set: a value LiteLLM holds under any other name is
/// removed.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[x_kube(
    validation = Rule::new("(has(self.values) && size(self.values) > 0) || (has(self.plainValues) && size(self.plainValues) > 0)").message(CREDENTIAL_NEEDS_VALUES),
    validation = Rule::new("!has(self.values) || !has(self.plainValues) || self.values.all(v, !(v.name in self.plainValues))").message(CREDENTIAL_VALUE_TWICE)
)]
#[serde(rename_all = "camelCase")]
pub struct CredentialParameters {
    /// Values read from Secrets of this namespace, by the name LiteLLM
    /// gives them (`api_key`, `aws_secret_access_key`,
    /// `vertex_credentials`, ...). LiteLLM never returns them: the provider
    /// records a fingerprint of each it wrote (`status.atProvider`), and a
    /// changed Secret value is written again. A value of the form
    /// `os.environ/...` (LiteLLM would read the proxy's environment) is
    /// refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        length(max = bounds::MAX_CREDENTIAL_VALUES),
        extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"])
    )]
    pub values: Vec<CredentialValue>,
    /// Settings that are no secret (`api_base`, `api_version`,
    /// `aws_region_name`, ...), by name; readable by anyone who can read
    /// this resource, and compared with what LiteLLM stores. Names LiteLLM
    /// masks when it reads a credential back (any containing `key`,
    /// `token`, `secret`, `credentials`, `password`, `passwd` or
    /// `authorization`) belong in `values`, and are refused here, as is a
    /// value of the form `os.environ/...`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "plain_values_schema")]
    pub plain_values: BTreeMap<String, String>,
    /// How the credential is labelled in LiteLLM's UI (`display_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_DISPLAY_NAME_LENGTH))]
    pub display_name: Option<String>,
    /// Free-form `credential_info` (such as `custom_llm_provider`, which
    /// LiteLLM's UI shows). Stored in plain text, so never a secret; the
    /// provider keeps its ownership marker beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::metadata_schema")]
    pub credential_info: Option<FreeForm>,
}

/// One value of a credential, read from a Secret.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialValue {
    /// The name LiteLLM gives the value (`api_key`, ...).
    #[schemars(length(min = 1, max = bounds::MAX_NAME_LENGTH))]
    pub name: String,
    /// The Secret key holding it (same namespace).
    pub secret_key_ref: SecretKeySelector,
}

/// Schema of `plainValues`: at most [`bounds::MAX_CREDENTIAL_VALUES`]
/// strings of at most [`bounds::MAX_PLAIN_VALUE_LENGTH`].
fn plain_values_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": bounds::MAX_CREDENTIAL_VALUES,
        "additionalProperties": {"type": "string", "maxLength": bounds::MAX_PLAIN_VALUE_LENGTH}
    })
}

/// A LiteLLM credential as the admin API reports it: never a value.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialObservation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The names of the values LiteLLM holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_names: Option<Vec<String>>,
    /// Fingerprint of each value from a Secret last written to LiteLLM,
    /// by its name (`sha256:` and 16 hex digits of a domain-separated
    /// SHA-256; never the value). LiteLLM never returns these values, so
    /// this is how a changed Secret is noticed: a different value is drift
    /// and is sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::common::fingerprints_schema")]
    pub secret_fingerprints: Option<BTreeMap<String, String>>,
}
