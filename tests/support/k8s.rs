//! The real Kubernetes API server harness (`tests/harness/k8s/`) for tests.
//!
//! Tests call [`client`] first: without `KUBECONFIG` they are skipped (with a
//! line on stderr) unless `LITELLM_CROSSPLANE_REQUIRE_HARNESS=1`, which CI
//! sets so a missing harness fails instead of passing silently.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::Client;
use litellm_crossplane::provider::instance::admission::PROVISION_LABEL;

/// Whether CI demands the harnesses instead of skipping.
pub fn harness_required() -> bool {
    std::env::var("LITELLM_CROSSPLANE_REQUIRE_HARNESS").as_deref() == Ok("1")
}

/// A client for the harness, or `None` (test skipped) when none is running.
pub async fn client() -> Option<Client> {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    if std::env::var_os("KUBECONFIG").is_none() {
        assert!(
            !harness_required(),
            "KUBECONFIG is not set: start tests/harness/k8s/up.sh"
        );
        eprintln!("skipped: KUBECONFIG not set (start tests/harness/k8s/up.sh)");
        return None;
    }
    Some(
        Client::try_default()
            .await
            .expect("a client from $KUBECONFIG"),
    )
}

/// Installs (server-side applies) every generated CRD and waits until the
/// API server serves them.
pub async fn install_crds(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply("litellm-crossplane-tests").force();
    for crd in litellm_crossplane::api::generate::managed_crds() {
        let name = crd.metadata.name.clone().expect("CRDs are named");
        crds.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .expect("CRD applies");
        wait_established(&crds, &name).await;
    }
    // Discovery of new CRDs lags their Established condition a little.
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Waits (up to 60 s) until the CRD `name` is `Established`; fails the test
/// if it never is (a test must not go on against a CRD not served).
pub async fn wait_established(crds: &Api<CustomResourceDefinition>, name: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let current = crds.get(name).await.expect("CRD readable");
        let conditions = current
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "CRD {name} not Established within 60 s: {conditions:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Creates a namespace with a unique name for one test, labelled so that
/// a `LiteLLMInstance` in it may provision a proxy (as a platform's
/// admins label the namespaces of their proxies).
pub async fn namespace(client: &Client, prefix: &str) -> String {
    let labels = [(PROVISION_LABEL.to_string(), "true".to_string())];
    namespace_labelled(client, prefix, labels.into_iter().collect()).await
}

/// Creates a namespace with a unique name and exactly these labels (none:
/// a tenant's namespace, where no proxy may be provisioned).
pub async fn namespace_labelled(
    client: &Client,
    prefix: &str,
    labels: std::collections::BTreeMap<String, String>,
) -> String {
    let name = format!("{prefix}-{}", unique_suffix());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(name.clone()),
            labels: Some(labels),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace created");
    name
}

/// A short random lowercase suffix for names and LiteLLM ids.
pub fn unique_suffix() -> String {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("OS randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
