//! The provider: a Kubernetes controller reconciling the LiteLLM kinds
//! against the admin API with Crossplane managed-resource semantics.
//!
//! Its parts, each of which imports only the ones listed after it:
//!
//! - [`runtime`]: the process. It builds a controller for every kind,
//!   elects a leader, serves health and metrics and holds the process's
//!   memory and threads.
//! - [`kinds`]: one module per kind (`LiteLLMTeam`, `LiteLLMVirtualKey`,
//!   ...), each an [`External`](managed::contract::External) and the pure
//!   mapping between its `forProvider` and LiteLLM's object, and the
//!   pieces every kind shares (limits, access, hosts).
//! - [`instance`]: the `LiteLLMInstance` controller, which provisions a
//!   proxy or attaches to an existing one.
//! - [`managed`]: the engine: the managed-resource contract and the one
//!   generic reconciler that drives every kind through Crossplane's steps
//!   (references, ownership, dependents, diff, connection details).
//! - [`telemetry`]: metrics, Kubernetes events and logs.
//! - [`watch`]: what the provider knows of the cluster between
//!   reconciliations: caches, tolerant lists, change counts, memo polls and
//!   the echoes of its own writes.

pub mod instance;
pub mod kinds;
pub mod managed;
pub mod runtime;
pub mod telemetry;
pub mod watch;
