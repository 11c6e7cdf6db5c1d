//! The API: CRD types for the managed kinds and the function's `Input`.
//!
//! Plain data, no I/O. `crds/` and `package/input/` are generated from these
//! types by `crdgen` (see `crate::api::generate`), and a test fails when the
//! checked-in files are stale.

pub mod access;
pub mod access_group;
pub mod budget;
pub mod common;
pub mod conditions;
pub mod credential;
pub mod customer;
pub mod fallback;
pub mod generate;
pub mod guardrail;
pub mod input;
pub mod instance;
pub mod key;
pub mod limits;
pub mod mcp_server;
pub mod model;
pub mod money;
pub mod organization;
pub mod tag;
pub mod team;
pub mod user;
pub mod vector_store;

pub use access::{KeyAccess, KeyType, Usage};
pub use access_group::{AccessGroupParameters, LiteLLMAccessGroup, LiteLLMAccessGroupSpec};
pub use budget::{BudgetParameters, LiteLLMBudget, LiteLLMBudgetSpec};
pub use common::*;
pub use credential::{CredentialParameters, LiteLLMCredential, LiteLLMCredentialSpec};
pub use customer::{CustomerParameters, LiteLLMCustomer, LiteLLMCustomerSpec};
pub use fallback::{FallbackParameters, LiteLLMFallback, LiteLLMFallbackSpec};
pub use guardrail::{GuardrailParameters, LiteLLMGuardrail, LiteLLMGuardrailSpec};
pub use input::Input;
pub use instance::{LiteLLMInstance, LiteLLMInstanceSpec};
pub use key::{KeyParameters, LiteLLMVirtualKey, LiteLLMVirtualKeySpec};
pub use limits::Limits;
pub use mcp_server::{
    LiteLLMMCPServer, LiteLLMMCPServerSpec, McpServerParameters, ObjectPermission,
};
pub use model::{LiteLLMModel, LiteLLMModelSpec, ModelParameters};
pub use organization::{LiteLLMOrganization, LiteLLMOrganizationSpec, OrganizationParameters};
pub use tag::{LiteLLMTag, LiteLLMTagSpec, TagParameters};
pub use team::{LiteLLMTeam, LiteLLMTeamSpec, TeamParameters};
pub use user::{LiteLLMUser, LiteLLMUserSpec, UserParameters, UserRole};
pub use vector_store::{LiteLLMVectorStore, LiteLLMVectorStoreSpec, VectorStoreParameters};

/// API group of the managed kinds.
pub const GROUP: &str = "litellm.m.crossplane.io";
/// API version of the managed kinds.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` of the managed kinds.
pub const API_VERSION: &str = "litellm.m.crossplane.io/v1alpha1";

/// The registry: every managed kind the provider reconciles, each with the
/// name of its watch cache. It is the one list that drives the provider's
/// caches and controllers (and who wakes whom, from each kind's
/// `ManagedKind::JOINED_AS` and `ManagedKind::JOINS`), the instance's
/// dependents, the generated CRDs and the tests' counts: a new kind is its
/// api, client and kind modules and one line here (see docs/development.md).
///
/// `managed_kinds!(then)` expands `then! { LiteLLMTeam => teams, ... }`,
/// with `then` a macro in scope at the call.
#[doc(hidden)]
#[macro_export]
macro_rules! managed_kinds {
    ($then:ident) => {
        $then! {
            LiteLLMTeam => teams,
            LiteLLMVirtualKey => keys,
            LiteLLMBudget => budgets,
            LiteLLMModel => models,
            LiteLLMCredential => credentials,
            LiteLLMUser => users,
            LiteLLMMCPServer => mcp_servers,
            LiteLLMOrganization => organizations,
            LiteLLMCustomer => customers,
            LiteLLMTag => tags,
            LiteLLMGuardrail => guardrails,
            LiteLLMAccessGroup => access_groups,
            LiteLLMVectorStore => vector_stores,
            LiteLLMFallback => fallbacks,
        }
    };
}

macro_rules! kind_names {
    ($($kind:ident => $field:ident),* $(,)?) => {
        /// The `kind` of every managed kind of the registry
        /// ([`managed_kinds!`](crate::managed_kinds)), in its order.
        pub const MANAGED_KINDS: &[&str] = &[$(stringify!($kind)),*];
    };
}
managed_kinds!(kind_names);
