//! Crossplane composition function and managed-resource provider for LiteLLM.
//!
//! Layers point down only: `api` (types, no I/O) <- `function` (pure compose,
//! gRPC and offline render on top). The LiteLLM client and the provider come
//! in later layers; the function never links the client.

pub mod api;
pub mod function;
pub mod listen;
pub mod litellm;
pub mod provider;
