//! The kinds: one module per LiteLLM object, each an
//! [`External`](super::managed::contract::External) with the pure mapping
//! between its `forProvider` and LiteLLM's object (request, diff, late
//! initialization, observation, connection details), and the pieces every
//! kind shares, written once: [`limits`], [`access`], [`hosts`].
//!
//! A kind may use the engine ([`managed`](super::managed)), watching and
//! the shared pieces here; never another kind's module.

pub mod access;
pub mod access_group;
pub mod budget;
pub mod credential;
pub mod customer;
pub mod fallback;
pub mod guardrail;
pub mod hosts;
pub mod key;
pub mod limits;
pub mod mcp_server;
pub mod model;
pub mod organization;
pub mod permissions;
pub mod tag;
pub mod team;
pub mod upstream;
pub mod user;
pub mod vector_store;
