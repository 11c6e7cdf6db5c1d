//! `LiteLLMCustomer`: a LiteLLM customer (end user, `/customer/*`): the id
//! an application sends as `user` in its requests, with the budget its
//! spend is held to, the models it may use and whether it is blocked.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{bounds, LocalRef, ManagedFields, ManagedStatus};

/// The fields the API server selects customers by (`selectableFields`):
/// the budget a customer joins, by reference and by id. A budget's
/// deletion asks for the customers that still use it with them.
pub const BUDGET_REF_FIELD: &str = "spec.forProvider.budgetRef.name";
pub const BUDGET_ID_FIELD: &str = "spec.forProvider.budgetId";

/// A LiteLLM customer (end user), reconciled against the admin API
/// (`/customer/*`) under the customer id `crossplane.io/external-name`.
/// The provider chooses that id (see [`CustomerParameters`]); applications
/// read it from `status.atProvider.customerId` or the connection Secret's
/// `customerId` and send it as `user`.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "litellm.m.crossplane.io",
    version = "v1alpha1",
    kind = "LiteLLMCustomer",
    namespaced,
    shortname = "lcust",
    category = "crossplane",
    category = "managed",
    category = "litellm",
    status = "ManagedStatus<CustomerObservation>",
    printcolumn = r#"{"name":"READY","type":"string","jsonPath":".status.conditions[?(@.type=='Ready')].status"}"#,
    printcolumn = r#"{"name":"SYNCED","type":"string","jsonPath":".status.conditions[?(@.type=='Synced')].status"}"#,
    printcolumn = r#"{"name":"EXTERNAL-NAME","type":"string","jsonPath":".metadata.annotations.crossplane\\.io/external-name"}"#,
    printcolumn = r#"{"name":"BLOCKED","type":"boolean","jsonPath":".status.atProvider.blocked"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    selectable = ".spec.forProvider.budgetRef.name",
    selectable = ".spec.forProvider.budgetId"
)]
#[serde(rename_all = "camelCase")]
pub struct LiteLLMCustomerSpec {
    #[serde(flatten)]
    pub managed: ManagedFields,
    /// The desired LiteLLM customer.
    pub for_provider: CustomerParameters,
}

/// The desired state of a LiteLLM customer. Unset fields are left to
/// LiteLLM (which cannot be told to clear `alias`, `budgetId` or
/// `defaultModel` once set).
///
/// The customer id: in the LiteLLMInstance's namespace, the external name
/// if one is set, else `<cluster>/<namespace>/<name>/<suffix>`; in any
/// other namespace always the latter, where the suffix is derived from the
/// resource's uid, which only readers of the namespace know. Any request
/// can name any customer in its `user` field, so an id another tenant could
/// guess would let it spend this customer's budget (and get it blocked);
/// a tenant can neither choose the id of a customer another tenant's
/// applications send nor guess one of this provider's.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerParameters {
    /// A human-friendly name (`alias`). Not unique in LiteLLM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ALIAS_LENGTH))]
    pub alias: Option<String>,
    /// `blocked`. LiteLLM 1.108.7 keeps it, and refuses the customer's
    /// requests for it only with its Enterprise blocked-user hook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    /// The LiteLLMBudget (same namespace) whose limits apply to this
    /// customer's spend (each customer's own spend against the budget's
    /// limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ref: Option<LocalRef>,
    /// A LiteLLM budget id, when the budget is not managed here (only in
    /// the LiteLLMInstance's namespace, or a budget of this namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = bounds::MAX_ID_LENGTH))]
    pub budget_id: Option<String>,
    /// Models the customer's requests may use (narrows what the key
    /// allows; an empty list sets no restriction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(max = bounds::MAX_MODELS),
        inner(length(max = bounds::MAX_MODEL_REF_LENGTH))
    )]
    pub models: Option<Vec<String>>,
    /// Requests of this customer only go to deployments in this region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_model_region: Option<ModelRegion>,
    /// The model requests go to when none is in the allowed region; it must
    /// exist on the proxy when the customer is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = bounds::MAX_MODEL_REF_LENGTH))]
    pub default_model: Option<String>,
}

/// `allowed_model_region`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelRegion {
    Eu,
    Us,
}

impl ModelRegion {
    /// LiteLLM's name of the region.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelRegion::Eu => "eu",
            ModelRegion::Us => "us",
        }
    }
}

/// A LiteLLM customer as the admin API reports it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerObservation {
    /// The id applications send as `user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    /// The linked budget's limit in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<String>,
    /// Spend so far in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_model_region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}
