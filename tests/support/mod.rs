//! Shared test support: the real harnesses.

pub mod crd_guard;
pub mod fault_proxy;
pub mod harness;
pub mod instance;
pub mod k8s;
pub mod provider;
pub mod tcp_pause;
pub mod upstream;
