//! What the provider tells its operators: Prometheus series
//! ([`metrics`], [`kube_requests`]), Kubernetes events ([`events`]) and
//! logs ([`logging`]).
//!
//! It may use [`watch`](super::watch); never the engine, a kind or the
//! runtime.

pub mod events;
pub mod kube_requests;
pub mod logging;
pub mod metrics;
