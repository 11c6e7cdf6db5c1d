//! Where the real LiteLLM proxy of `tests/harness/litellm/` is, for tests that
//! talk to it.

#![allow(dead_code)] // each test binary uses a different part of the support code

/// `(LITELLM_URL, LITELLM_MASTER_KEY)` from the environment (as printed by
/// `up.sh`), or `None` after a note on stderr so the calling test can return
/// early. With `LITELLM_CROSSPLANE_REQUIRE_HARNESS=1` (CI) a missing harness
/// fails the test instead of skipping it.
pub fn litellm() -> Option<(String, String)> {
    let Ok(url) = std::env::var("LITELLM_URL") else {
        if std::env::var("LITELLM_CROSSPLANE_REQUIRE_HARNESS").as_deref() == Ok("1") {
            panic!(
                "LITELLM_URL is not set but LITELLM_CROSSPLANE_REQUIRE_HARNESS=1: start the \
                 harness with `eval \"$(tests/harness/litellm/up.sh)\"` before running the tests"
            );
        }
        eprintln!("skipped: LITELLM_URL not set (start tests/harness/litellm/up.sh)");
        return None;
    };
    let master_key = std::env::var("LITELLM_MASTER_KEY")
        .expect("LITELLM_URL is set, so LITELLM_MASTER_KEY must be set too");
    Some((url, master_key))
}

/// An admin client of the proxy at `endpoint`, signed in with `master_key`,
/// each request given up after `timeout`.
pub fn admin_client(
    endpoint: &str,
    master_key: &str,
    timeout: std::time::Duration,
) -> litellm_crossplane::litellm::Client {
    use litellm_crossplane::litellm::{Client, ClientConfig, Secret};
    Client::new(ClientConfig {
        endpoint: endpoint.to_owned(),
        master_key: Secret::new(master_key),
        ca_pem: None,
        timeout,
    })
    .expect("LiteLLM admin client")
}
