//! The engine: the managed-resource contract every kind implements
//! ([`contract`]), the default of kinds that only map ([`mapped`]), and
//! the one generic reconciler that drives it ([`reconciler`]), as
//! crossplane-runtime's `managed` package does. Paused, waiting for a
//! reference and waiting for dependents are outcomes of a reconciliation,
//! not errors.
//!
//! It may use [`watch`](super::watch) (what the provider knows of the
//! cluster) and [`telemetry`](super::telemetry), never a kind, the
//! instance controller or the runtime.

pub mod connection;
pub mod contract;
pub mod dependents;
pub mod diff;
pub mod mapped;
pub mod ownership;
pub mod reconciler;
pub mod resolve;
pub mod scrub;

#[cfg(test)]
mod engine_tests;
#[cfg(test)]
pub mod fake_api;
