//! Shared test support: the real harnesses.

pub mod k8s;
