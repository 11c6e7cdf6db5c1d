//! Which namespaces may hold a provisioned proxy.
//!
//! A provisioned `LiteLLMInstance` makes the provider run pods: a
//! Deployment of the image the instance names, with its environment,
//! ServiceAccount annotations (cloud identity), scheduling and security
//! settings, a migration Job, Services and what exposes them. Those are
//! rights a tenant does not have: a tenant may create `LiteLLM*` resources
//! and Secrets in its own namespace and nothing else (SPEC section 8). Left
//! open, an instance in a tenant's namespace would run the tenant's image
//! with the provider's rights: privileged if it asks, tolerating the
//! control plane's taints, under a ServiceAccount annotated for the
//! platform's cloud role.
//!
//! So the provider provisions only in a namespace the cluster's admins
//! labelled [`PROVISION_LABEL`]`: "true"`. Tenants cannot label namespaces
//! (it needs `patch` on the Namespace, a cluster-scoped object). An
//! attached instance (`spec.workload.managed: false`) needs no label: the
//! provider runs nothing for it.
//!
//! Without the label nothing is written and nothing is deleted: a
//! namespace that loses its label (or a provider upgraded from a release
//! without this rule) keeps its running proxy, its generated keys and its
//! status records; the instance reports `Ready=False` and `Synced=False`
//! with reason [`super::reason::PROVISIONING_NOT_ALLOWED`] until the label
//! is set, and its deletion still removes what it owns.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::Api;

use super::Error;

/// The label on a Namespace that lets a `LiteLLMInstance` in it provision
/// a proxy (value `"true"`).
pub const PROVISION_LABEL: &str = "litellm.crossplane.io/provision";

/// Why a provisioned instance in `namespace` (with these labels, `None` for
/// a namespace that is gone) may not provision, or `None` when it may.
pub fn refusal(namespace: &str, labels: Option<&BTreeMap<String, String>>) -> Option<String> {
    let labelled = labels
        .and_then(|labels| labels.get(PROVISION_LABEL))
        .is_some_and(|value| value == "true");
    (!labelled).then(|| {
        format!(
            "namespace {namespace} is not labelled {PROVISION_LABEL}=true: a provisioned proxy \
             (spec.workload.managed unset or true) runs pods, so only a namespace the cluster's \
             admins labelled may hold one; nothing was written or deleted. Label the namespace \
             (kubectl label namespace {namespace} {PROVISION_LABEL}=true), or attach to a proxy \
             you run (spec.workload.managed: false)"
        )
    })
}

/// [`refusal`] for `namespace` as the API server has it.
pub async fn check(client: &kube::Client, namespace: &str) -> Result<Option<String>, Error> {
    let found = Api::<Namespace>::all(client.clone())
        .get_opt(namespace)
        .await
        .map_err(|source| {
            Error::Workload {
                kind: "Namespace".to_string(),
                name: namespace.to_string(),
                source,
            }
            .forbidden_as_such()
        })?;
    Ok(refusal(
        namespace,
        found.as_ref().and_then(|ns| ns.metadata.labels.as_ref()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_a_namespace_labelled_true_may_provision() {
        assert_eq!(
            refusal("platform", Some(&labels(&[(PROVISION_LABEL, "true")]))),
            None
        );
        for refused in [
            None,
            Some(labels(&[])),
            Some(labels(&[(PROVISION_LABEL, "false")])),
            Some(labels(&[(PROVISION_LABEL, "True")])),
            Some(labels(&[(PROVISION_LABEL, "")])),
            Some(labels(&[("litellm.crossplane.io/provisioned", "true")])),
        ] {
            let why = refusal("team-a", refused.as_ref()).expect("refused");
            assert!(why.contains("namespace team-a is not labelled"), "{why}");
            assert!(
                why.contains("litellm.crossplane.io/provision=true"),
                "{why}"
            );
            assert!(why.contains("spec.workload.managed"), "{why}");
        }
    }
}
