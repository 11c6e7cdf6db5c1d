//! The tests that show no secret reaches the provider's logs, one binary:
//! they read the lines `support::logs::capture` keeps, from a subscriber
//! it installs for the whole process at `debug` for every target. That
//! keeps them apart from `tests/integration/`, where the subscriber would
//! log, and keep in memory, every line of every other test as well (and
//! slow those that count time). Here it holds the lines of these modules'
//! tests only, and each test looks for secret values no other test writes.
//! One module runs with a filter: `tests/run.sh --test logged provider_mcp::`.

#[path = "../support/mod.rs"]
mod support;

mod provider_cloud_models;
mod provider_credentials;
mod provider_mcp;
mod provider_secret_objects;
