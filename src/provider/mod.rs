//! The provider: a Kubernetes controller reconciling the LiteLLM kinds
//! against the admin API with Crossplane managed-resource semantics.
//!
//! Entities: [`reconciler`] is the one generic managed reconciler (finalizer,
//! references, instance, external name, status) over the contract in
//! [`managed`]; [`team`], [`key`], [`budget`], [`model`], [`credential`],
//! [`user`], [`mcp_server`] and [`organization`] are the per-kind `External` implementations
//! with their pure diffs; [`controllers`] runs them. [`leader`], [`health`]
//! and [`http`] serve the binary.

pub mod access;
pub mod budget;
pub mod cache;
pub mod changes;
pub mod cluster_id;
pub mod conditions;
pub mod connection;
pub mod controllers;
pub mod credential;
pub mod dependents;
pub mod diff;
pub mod echo;
pub mod events;
pub mod families;
pub mod health;
pub mod hosts;
pub mod http;
pub mod instance;
pub mod key;
pub mod kube_requests;
pub mod leader;
pub mod limits;
pub mod logging;
pub mod managed;
pub mod mcp_server;
pub mod member_defaults;
pub mod members;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod model_params;
pub mod organization;
pub mod ownership;
pub mod polls;
pub mod reconciler;
pub mod resolve;
pub mod rotation;
pub mod runtime;
pub mod scrub;
pub mod team;
pub mod timing;
pub mod tolerant;
pub mod user;
