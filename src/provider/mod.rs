//! The provider: a Kubernetes controller reconciling the LiteLLM kinds
//! against the admin API with Crossplane managed-resource semantics.

pub mod conditions;
