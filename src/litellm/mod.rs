//! LiteLLM admin API client: wire types, error classes, HTTP.
//!
//! Knows nothing of Kubernetes. Facts about the admin API that the code
//! relies on were measured against LiteLLM 1.108.7 and are checked by
//! `tests/integration/litellm_client.rs` against a real proxy.

mod access;
pub mod access_groups;
mod budgets;
mod client;
mod credentials;
mod customers;
mod error;
pub mod fallbacks;
mod guardrails;
mod health;
mod keys;
mod limits;
mod mcp_servers;
mod models;
mod organizations;
mod pacing;
pub mod pages;
mod secret;
pub mod tags;
pub mod team_callbacks;
mod teams;
mod users;
pub mod vector_stores;

use serde::{Deserialize, Deserializer};

pub use access::{
    KeyAccessRequest, LiveUsage, ModelBudgetRequest, UsageRequest, ENTERPRISE_SETTINGS,
    METADATA_SETTINGS,
};
pub use budgets::{BudgetInfo, BudgetRequest};
pub use client::{
    parse_retry_after, Client, ClientConfig, Fingerprint, List, Listed, Observer, Probe, Read,
    Reread, MAX_RESPONSE_BODY, MAX_RETRY_AFTER,
};
pub use credentials::{masked_when_read, Credential, CredentialRequest};
pub use customers::{CustomerBudget, CustomerInfo, CustomerRequest};
pub use error::Error;
pub use guardrails::{Guardrail, GuardrailRequest};
pub use health::Readiness;
pub use keys::{KeyBudget, KeyGenerated, KeyInfo, KeyRequest, RegenerateRequest};
pub use limits::{Limited, LimitsRequest, LiveLimits};
pub use mcp_servers::{McpServer, McpServerRequest, ObjectPermission, MCP_INFO_ADDED};
pub use models::{
    ModelInfo, ModelMeta, ModelMetaRequest, ModelParams, ModelParamsRequest, ModelRequest,
    SecretParams, SECRET_PARAMS,
};
pub use organizations::{
    OrganizationBudget, OrganizationInfo, OrganizationMember, OrganizationRequest, OrganizationTeam,
};
pub use pacing::{Limits, Pacing};
pub use secret::{generate_key, token_of, token_of_sha256, Secret};
pub use teams::{
    MemberDefaults, MemberDefaultsRequest, MemberRequest, Membership, MembershipBudget, TeamInfo,
    TeamMember, TeamModelTable, TeamRequest, SYSTEM_METADATA,
};
pub use users::{UserInfo, UserRequest};

/// LiteLLM sends `null` for some empty lists; read it as empty.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}
