//! Shared test support: the real harnesses.

pub mod harness;
pub mod k8s;
