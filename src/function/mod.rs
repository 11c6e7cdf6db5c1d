//! The composition function: a pure `compose`, with the gRPC service and
//! the offline `render` as thin layers on top.

pub mod access_groups;
pub mod build;
pub mod compose;
pub mod conditions;
pub mod customers;
pub mod error;
pub mod grpc;
pub mod grpc_metrics;
pub mod guardrails;
pub mod keep;
pub mod logging;
pub mod mcp;
pub mod members;
pub mod metadata;
pub mod metrics;
pub mod names;
pub mod render;
pub mod request;
pub mod rules;
pub mod server;
pub mod structpb;
pub mod tenancy;
pub mod usage;
pub mod validate;
pub mod wire;

pub use compose::{compose, Composition, Desired, Observed, ObservedState, Outcome, Supplied};
pub use error::Problem;
