//! Crossplane `Usage`s that order deletion: the rendered LiteLLMInstance is
//! used by every entity that reconciles against it, so Crossplane's usage
//! webhook refuses to delete the instance (and with it, for a provisioned
//! one, the proxy and its master key) until the team, budget, keys and
//! models are gone from LiteLLM. Pure: built from the desired resources.
//!
//! Only `protection.crossplane.io/v1beta1` (Crossplane v2): the Usage of
//! `apiextensions.crossplane.io/v1beta1` (1.x, deprecated in v2) is
//! cluster-scoped and its `of`/`by` references carry no namespace, so it
//! cannot name these namespaced resources.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::build::Target;
use super::names;

/// `apiVersion` of the Usages composed.
pub const USAGE_API_VERSION: &str = "protection.crossplane.io/v1beta1";

/// Prefix of the Usages' composition-resource names.
pub const PREFIX: &str = "usage-";

/// Composition-resource name of the Usage of the instance by the resource
/// composed as `user`.
pub fn name(user: &str) -> String {
    format!("{PREFIX}{user}")
}

/// A Usage of the rendered instance by each other desired resource, by
/// composition-resource name. Empty when no instance is rendered.
pub fn of_instance(target: &Target, desired: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    let Some(instance) = desired.get(names::INSTANCE) else {
        return BTreeMap::new();
    };
    let reference = |object: &Value| {
        json!({
            "apiVersion": object["apiVersion"],
            "kind": object["kind"],
            "resourceRef": {"name": object["metadata"]["name"]},
        })
    };
    desired
        .iter()
        .filter(|(user, _)| user.as_str() != names::INSTANCE)
        .map(|(user, object)| {
            let composed = name(user);
            let usage = json!({
                "apiVersion": USAGE_API_VERSION,
                "kind": "Usage",
                "metadata": {
                    "name": target.object_name(&composed),
                    "namespace": target.namespace,
                },
                "spec": {
                    "of": reference(instance),
                    "by": reference(object),
                    // Once the Usage goes, the blocked deletion of the
                    // instance is replayed at once, not at Crossplane's
                    // next backoff.
                    "replayDeletion": true,
                },
            });
            (composed, usage)
        })
        .collect()
}
