//! Connection Secrets: where a resource publishes what consumers need
//! (`endpoint`, and for keys the secret `key`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Secret as KubeSecret;
use k8s_openapi::ByteString;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::ResourceExt;

use crate::litellm::Secret;

use crate::provider::managed::contract::{ExternalError, ManagedKind};
use crate::provider::watch::cache::{self, Digest, Kube, MANAGED_BY, MANAGED_BY_LABEL};

/// The type of the connection Secrets the provider creates, as
/// crossplane-runtime's (`resource.SecretTypeConnection`). A Secret's type
/// cannot change: one the provider created `Opaque` before keeps it (it is
/// never deleted to be made again, which could lose a key it holds).
pub const CONNECTION_SECRET_TYPE: &str = "connection.crossplane.io/v1alpha1";

/// Whether `secret` is controlled by `mr` (ownerReference with its uid).
fn owned_by<K: ManagedKind>(secret: &KubeSecret, mr: &K) -> bool {
    let uid = mr.meta().uid.as_deref();
    secret
        .owner_references()
        .iter()
        .any(|o| Some(o.uid.as_str()) == uid)
}

fn missing_or_different(
    existing: &KubeSecret,
    data: &BTreeMap<String, Secret>,
) -> BTreeMap<String, ByteString> {
    let current = existing.data.clone().unwrap_or_default();
    data.iter()
        .filter(|(key, value)| {
            current.get(*key).map(|v| v.0.as_slice()) != Some(value.expose().as_bytes())
        })
        .map(|(key, value)| (key.clone(), ByteString(value.expose().as_bytes().to_vec())))
        .collect()
}

/// Reads `name` from the API server if it belongs to `mr`. A Secret of
/// that name that is not `mr`'s is an error: it may hold someone else's
/// data, and overwriting or trusting it could leak or lose a key.
pub async fn read<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    name: &str,
) -> Result<Option<Arc<KubeSecret>>, ExternalError> {
    let namespace = mr.namespace().unwrap_or_default();
    match kube.read_secret(&namespace, name).await? {
        Some(secret) if !owned_by(&secret, mr) => Err(ExternalError::Invalid(format!(
            "connection Secret {name} exists and is not owned by {kind} {resource}: name \
             another Secret in spec.writeConnectionSecretToRef, or hand this one over by \
             deleting it (the provider writes it anew) or by adding an ownerReference to \
             {kind} {resource} (uid {uid})",
            kind = K::kind(&()),
            resource = mr.name_any(),
            uid = mr.meta().uid.as_deref().unwrap_or_default(),
        ))),
        other => Ok(other),
    }
}

/// `mr`'s connection Secret `name` as the shared cache last saw it, when
/// the cache has it and it is `mr`'s; else `None` (then only [`read`]
/// tells). Only for concluding that nothing needs writing: see
/// [`crate::provider::watch::cache`].
pub fn cached<K: ManagedKind>(kube: &Kube, mr: &K, name: &str) -> Option<Arc<Digest>> {
    let namespace = mr.namespace().unwrap_or_default();
    let uid = mr.meta().uid.as_deref()?;
    kube.cached_connection_secret(&namespace, name)
        .flatten()
        .filter(|digest| digest.owned_by(uid))
}

/// Whether the Secret `digest` is of holds every value of `data`.
fn holds_all(digest: &Digest, data: &BTreeMap<String, Secret>) -> bool {
    data.iter()
        .all(|(key, value)| digest.holds(key, value.expose().as_bytes()))
}

/// The value of `key` in a Secret.
pub fn value(secret: &KubeSecret, key: &str) -> Option<Secret> {
    let bytes = secret.data.as_ref()?.get(key)?;
    Some(Secret::new(String::from_utf8_lossy(&bytes.0)))
}

/// Writes `data` into the connection Secret `name` (owned by `mr`, so it is
/// garbage collected with it). Keys not in `data` are kept, and nothing is
/// written when every value is already there: the steady state reads the
/// Secret from the shared cache and writes nothing; anything else reads it
/// from the API server first.
pub async fn publish<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    name: &str,
    data: &BTreeMap<String, Secret>,
) -> Result<(), ExternalError> {
    if cached(kube, mr, name).is_some_and(|digest| holds_all(&digest, data)) {
        return Ok(());
    }
    let existing = read(kube, mr, name).await?;
    publish_over(kube, mr, name, data, existing).await
}

/// [`publish`] over `existing`, the Secret `name` as [`read`] returned it
/// a moment ago in the same reconciliation (`None`: there is none, and
/// the write creates it), for a caller that has just read it: no second
/// read. The write is conditional all the same (a create fails on a Secret
/// made since, a patch names the data only).
pub async fn publish_over<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    name: &str,
    data: &BTreeMap<String, Secret>,
    existing: Option<Arc<KubeSecret>>,
) -> Result<(), ExternalError> {
    let namespace = mr.namespace().unwrap_or_default();
    let api: Api<KubeSecret> = Api::namespaced(kube.client().clone(), &namespace);
    match existing {
        None => {
            let owner = mr.controller_owner_ref(&()).ok_or_else(|| {
                ExternalError::Invalid(format!("{} {} has no uid yet", K::kind(&()), mr.name_any()))
            })?;
            let secret = KubeSecret {
                metadata: ObjectMeta {
                    name: Some(name.to_owned()),
                    labels: Some([(MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned())].into()),
                    owner_references: Some(vec![owner]),
                    ..ObjectMeta::default()
                },
                data: Some(missing_or_different(&KubeSecret::default(), data)),
                type_: Some(CONNECTION_SECRET_TYPE.into()),
                ..KubeSecret::default()
            };
            kube.expect_secret_echo(&namespace, name, 0);
            let created = api.create(&PostParams::default(), &secret).await;
            kube.settle_secret_echo(&namespace, name, created.as_ref().ok().map(|s| &s.metadata));
            created?;
        }
        Some(existing) => {
            let changed = missing_or_different(&existing, data);
            if !changed.is_empty() {
                let patch = serde_json::json!({ "data": changed });
                patch_own(kube, &api, &namespace, &existing.metadata, name, &patch).await?;
            }
        }
    }
    Ok(())
}

/// A merge patch of the provider's own Secret `before` describes, whose
/// event is an echo.
async fn patch_own(
    kube: &Kube,
    api: &Api<KubeSecret>,
    namespace: &str,
    before: &ObjectMeta,
    name: &str,
    patch: &serde_json::Value,
) -> Result<(), kube::Error> {
    kube.expect_secret_echo(namespace, name, cache::version(before));
    let patched = api
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await;
    kube.settle_secret_echo(namespace, name, patched.as_ref().ok().map(|s| &s.metadata));
    patched.map(drop)
}

/// Sets `key` to `value` and removes the keys `remove` in one write (a
/// merge patch with `null`), so the Secret never holds neither value.
pub async fn replace_value<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    name: &str,
    key: &str,
    value: &Secret,
    remove: &[&str],
) -> Result<(), ExternalError> {
    let namespace = mr.namespace().unwrap_or_default();
    let api: Api<KubeSecret> = Api::namespaced(kube.client().clone(), &namespace);
    // Ownership is checked as for every write.
    let Some(existing) = read(kube, mr, name).await? else {
        return Err(ExternalError::Invalid(format!(
            "connection Secret {name} disappeared during a key rotation"
        )));
    };
    let mut data = serde_json::Map::new();
    for gone in remove {
        data.insert((*gone).to_owned(), serde_json::Value::Null);
    }
    data.insert(
        key.to_owned(),
        serde_json::to_value(ByteString(value.expose().as_bytes().to_vec()))
            .map_err(|e| ExternalError::Invalid(e.to_string()))?,
    );
    let patch = serde_json::json!({ "data": data });
    patch_own(kube, &api, &namespace, &existing.metadata, name, &patch).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_missing_or_changed_values_are_written() {
        let existing = KubeSecret {
            data: Some(
                [
                    ("endpoint".to_owned(), ByteString(b"http://a".to_vec())),
                    ("key".to_owned(), ByteString(b"sk-1".to_vec())),
                ]
                .into(),
            ),
            ..KubeSecret::default()
        };
        let same: BTreeMap<String, Secret> =
            [("endpoint".to_owned(), Secret::new("http://a"))].into();
        assert!(missing_or_different(&existing, &same).is_empty());
        let moved: BTreeMap<String, Secret> = [
            ("endpoint".to_owned(), Secret::new("http://b")),
            ("teamId".to_owned(), Secret::new("ns.t")),
        ]
        .into();
        let changed = missing_or_different(&existing, &moved);
        assert_eq!(changed.keys().collect::<Vec<_>>(), ["endpoint", "teamId"]);
        assert_eq!(value(&existing, "key").unwrap().expose(), "sk-1");
        assert!(value(&existing, "nope").is_none());
    }
}
