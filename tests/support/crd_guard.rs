//! Keeps this build's CRD fields in a shared API server while a test runs.
//!
//! Several working copies test against one API server, each installing its
//! own version of the CRDs ([`super::k8s::install_crds`], server-side apply
//! with force). An older version lacks this build's new fields, and the API
//! server prunes unknown fields on every write and read: a test of a new
//! field would see it vanish whenever another copy's test starts. The
//! guard puts the missing properties back, adding them to whatever schema
//! is installed (never removing or changing anything another version
//! added), so both versions' tests keep working.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};
use tokio::task::JoinHandle;

/// Checks this often while it lives.
const INTERVAL: Duration = Duration::from_millis(250);

/// Running until dropped.
pub struct CrdGuard(JoinHandle<()>);

impl Drop for CrdGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl CrdGuard {
    pub fn start(client: &kube::Client) -> Self {
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        Self(tokio::spawn(async move {
            loop {
                for wanted in litellm_crossplane::api::generate::managed_crds() {
                    // Best effort: a lost race is retried on the next round.
                    let _ = restore(&crds, &wanted).await;
                }
                tokio::time::sleep(INTERVAL).await;
            }
        }))
    }
}

/// Adds the properties of `wanted` that the installed CRD lacks.
async fn restore(
    crds: &Api<CustomResourceDefinition>,
    wanted: &CustomResourceDefinition,
) -> Result<(), kube::Error> {
    let name = wanted.metadata.name.clone().unwrap_or_default();
    let Some(live) = crds.get_opt(&name).await? else {
        return Ok(());
    };
    let mut spec = serde_json::to_value(&live.spec).unwrap_or_default();
    let wanted_spec = serde_json::to_value(&wanted.spec).unwrap_or_default();
    let mut changed = false;
    for version in spec["versions"].as_array_mut().into_iter().flatten() {
        let Some(want) = wanted_spec["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == version["name"])
        else {
            continue;
        };
        changed |= add_missing_properties(
            &mut version["schema"]["openAPIV3Schema"],
            &want["schema"]["openAPIV3Schema"],
        );
    }
    if !changed {
        return Ok(());
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": spec,
    });
    let params = PatchParams::apply("litellm-crossplane-tests").force();
    crds.patch(&name, &params, &Patch::Apply(&crd)).await?;
    Ok(())
}

/// Copies every property (at any depth, through `properties` and `items`)
/// that `wanted` has and `live` lacks; whether anything was copied.
fn add_missing_properties(live: &mut Value, wanted: &Value) -> bool {
    let mut changed = false;
    if let (Some(live_props), Some(wanted_props)) = (
        live.get_mut("properties").and_then(Value::as_object_mut),
        wanted.get("properties").and_then(Value::as_object),
    ) {
        for (key, schema) in wanted_props {
            match live_props.get_mut(key) {
                Some(existing) => changed |= add_missing_properties(existing, schema),
                None => {
                    live_props.insert(key.clone(), schema.clone());
                    changed = true;
                }
            }
        }
    }
    if let (Some(live_items), Some(wanted_items)) = (live.get_mut("items"), wanted.get("items")) {
        changed |= add_missing_properties(live_items, wanted_items);
    }
    changed
}
