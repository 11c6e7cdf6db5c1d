//! The integration tests, one binary: each module was a test binary of its
//! own (`tests/<module>.rs`), compiling `tests/support/` and linking the
//! crate and its dependencies again. One module runs with a filter:
//! `tests/run.sh --test integration provider_access::`. Tests that need the
//! harnesses are `#[ignore]`d (a plain `cargo test` reports them ignored);
//! `tests/run.sh` runs them with `--include-ignored`.
//!
//! Two binaries stay apart, for what a process has only once:
//! - `tests/logged/`: its tests read what the provider logs, from a
//!   subscriber installed for the whole process at `debug` for every target
//!   (`support::logs`); here it would log, and keep in memory, every line
//!   of every other test as well.
//! - `tests/cache_memory.rs`: its global allocator counts every allocation
//!   of the process.
//!
//! The tests run in parallel as they did within each file: libtest's
//! threads take them in name order, so mostly beside tests of their own
//! module. Besides the harnesses (each test in namespaces of its own, as
//! before), the modules share in the process:
//! - the authorizing proxies' denials ([`support::authz`]), which every
//!   wait checks: a denial fails the waiting tests of every module, not only
//!   of its own. A passing run has none.
//! - the provider's change counts (`provider::watch::changes`): a watch
//!   that lists again, or an object of no namespace, counts as a change in
//!   every namespace, as it did from another test of the same file before;
//!   it costs a poll a full reconciliation instead of its memo, never an
//!   outcome.
//! - the CRDs, which every module installs as this build has them, as each
//!   test did before (a `support::crd_guard` only adds fields they lack).

#[path = "../support/mod.rs"]
mod support;

mod compose;
mod crd_cel;
mod crds_apiserver;
mod examples;
mod examples_managed;
mod function_grpc;
mod generated;
mod litellm_client;
mod litellm_pages;
mod litellm_standin;
mod monitoring;
mod packages;
mod provider_access;
mod provider_access_groups;
mod provider_bounds;
mod provider_chain;
mod provider_create_first;
mod provider_customers;
mod provider_deletion;
mod provider_entities;
mod provider_fallbacks;
mod provider_faults;
mod provider_guardrails;
mod provider_instance;
mod provider_instance_disruption;
mod provider_instance_exposure;
mod provider_instance_monitoring;
mod provider_instance_pods;
mod provider_leader;
mod provider_loss;
mod provider_models;
mod provider_observability;
mod provider_organizations;
mod provider_pages;
mod provider_proxies;
mod provider_rbac;
mod provider_repoint;
mod provider_rotation;
mod provider_tags;
mod provider_team_callbacks;
mod provider_tenancy;
mod provider_updates;
mod provider_upstream_credentials;
mod provider_users;
mod provider_vector_stores;
mod test_kubelet;
mod workflows;
