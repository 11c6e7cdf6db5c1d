//! Shared test support: the real harnesses, and the parts they lack (an
//! authorizing proxy for Crossplane's RBAC). A module of each test binary
//! that needs it (`tests/integration/`, `tests/logged/`), by `#[path]`.

pub mod authz;
pub mod binary;
pub mod cluster;
pub mod crd_guard;
pub mod fault_proxy;
pub mod harness;
pub mod instance;
pub mod k8s;
pub mod kubelet;
pub mod litellm_standin;
pub mod logs;
pub mod metered;
pub mod provider;
pub mod tcp_pause;
pub mod upstream;
