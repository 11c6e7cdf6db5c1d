//! The cluster id written into every ownership marker in LiteLLM (see
//! [`crate::provider::managed::ownership::Owner::cluster`]). It must never change for an
//! install: a new id makes every object the provider made look foreign.
//!
//! `--cluster-id` / `CLUSTER_ID` wins. Otherwise the id lives in the
//! ConfigMap [`CONFIG_MAP`] of the provider's own namespace (Crossplane's
//! provider role may read and create ConfigMaps; it may not read the
//! `kube-system` Namespace), created once and read on every start. When
//! the ConfigMap is created, an install of a release that took the uid of
//! the `kube-system` Namespace keeps that id if the provider may still read
//! it; else a new random id is drawn. Either way it is then stored, so it
//! stays the same across restarts, upgrades and permission changes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};

/// Name of the ConfigMap that keeps the cluster id.
pub const CONFIG_MAP: &str = "provider-litellm-cluster-id";
/// Its key.
pub const KEY: &str = "clusterId";

/// Why no cluster id could be established.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "reading ConfigMap {namespace}/{CONFIG_MAP} (the cluster id; pass --cluster-id to set \
         it): {source}"
    )]
    Read {
        namespace: String,
        #[source]
        source: kube::Error,
    },
    #[error(
        "creating ConfigMap {namespace}/{CONFIG_MAP} (the cluster id; pass --cluster-id to set \
         it): {source}"
    )]
    Create {
        namespace: String,
        #[source]
        source: kube::Error,
    },
    #[error(
        "ConfigMap {namespace}/{CONFIG_MAP} has no {KEY:?}: restore it with the id the \
         provider used before (every LiteLLM object it made carries it in its ownership \
         marker), or pass --cluster-id"
    )]
    Missing { namespace: String },
}

/// The cluster id: `configured` when given, else the one stored in
/// `namespace`, stored there first if there is none yet.
pub async fn resolve(
    client: &kube::Client,
    configured: Option<String>,
    namespace: &str,
) -> Result<String, Error> {
    if let Some(id) = configured.filter(|id| !id.is_empty()) {
        return Ok(id);
    }
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let read = |source| Error::Read {
        namespace: namespace.to_owned(),
        source,
    };
    if let Some(existing) = maps.get_opt(CONFIG_MAP).await.map_err(read)? {
        return stored(&existing, namespace);
    }
    let id = match legacy_id(client).await {
        Some(id) => id,
        None => {
            let id = random_id();
            // Loud: after a deleted ConfigMap every object this provider
            // made would now look foreign (refused, never deleted).
            tracing::warn!(
                %namespace, configmap = CONFIG_MAP, cluster_id = %id,
                "no cluster id was stored, so a new one was drawn; if this provider ran \
                 before, restore its earlier id (pass --cluster-id; every LiteLLM object it \
                 made carries it in its ownership marker)"
            );
            id
        }
    };
    let map = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(CONFIG_MAP.to_owned()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_owned(),
                "provider-litellm".to_owned(),
            )])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(KEY.to_owned(), id.clone())])),
        ..Default::default()
    };
    match maps.create(&PostParams::default(), &map).await {
        Ok(_) => {
            tracing::info!(%namespace, configmap = CONFIG_MAP, "cluster id stored");
            Ok(id)
        }
        // Another replica stored one first: that one counts.
        Err(kube::Error::Api(status)) if status.code == 409 => {
            let existing = maps.get(CONFIG_MAP).await.map_err(read)?;
            stored(&existing, namespace)
        }
        Err(source) => Err(Error::Create {
            namespace: namespace.to_owned(),
            source,
        }),
    }
}

fn stored(map: &ConfigMap, namespace: &str) -> Result<String, Error> {
    map.data
        .as_ref()
        .and_then(|data| data.get(KEY))
        .filter(|id| !id.trim().is_empty())
        .map(|id| id.trim().to_owned())
        .ok_or_else(|| Error::Missing {
            namespace: namespace.to_owned(),
        })
}

/// The id earlier releases used, when the provider may still read it.
async fn legacy_id(client: &kube::Client) -> Option<String> {
    match Api::<Namespace>::all(client.clone())
        .get("kube-system")
        .await
    {
        Ok(namespace) => namespace.metadata.uid,
        Err(err) => {
            tracing::debug!(error = %err, "the kube-system Namespace is not readable; drawing a new cluster id");
            None
        }
    }
}

/// A random RFC 4122 version 4 UUID.
fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random number generator is unavailable");
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_are_version_4_uuids_and_differ() {
        let a = random_id();
        let b = random_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"));
    }

    #[test]
    fn a_stored_id_is_read_and_an_empty_one_is_an_error_naming_the_way_out() {
        let map = |value: &str| ConfigMap {
            data: Some(BTreeMap::from([(KEY.to_owned(), value.to_owned())])),
            ..Default::default()
        };
        assert_eq!(stored(&map(" abc \n"), "ns").unwrap(), "abc");
        let err = stored(&map(""), "ns").unwrap_err().to_string();
        assert!(err.contains("--cluster-id") && err.contains("ns/provider-litellm-cluster-id"));
        assert!(stored(&ConfigMap::default(), "ns").is_err());
    }
}
