//! Who owns a LiteLLM object: default ids and the ownership marker the
//! provider writes into LiteLLM `metadata`.
//!
//! LiteLLM has no notion of an owner, and team/budget/model ids are global
//! to the proxy. Two tenants sharing a proxy must not be able to take over
//! each other's objects, so every object the provider creates carries a
//! marker naming the managed resource, and adoption of an object marked for
//! someone else is refused.

use serde_json::{Map, Value};

/// Key of the marker in LiteLLM `metadata` (and `model_info`).
pub const MARKER_KEY: &str = "crossplane_owner";

/// The managed resource that owns a LiteLLM object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Identifies the Kubernetes cluster, so two clusters attached to one
    /// proxy cannot adopt each other's objects.
    pub cluster: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl Owner {
    /// The marker as stored in LiteLLM.
    pub fn marker(&self) -> Value {
        serde_json::json!({
            "cluster": self.cluster,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
        })
    }

    /// Reads the marker out of LiteLLM `metadata`; `None` when the object
    /// carries none (created outside the provider) or a malformed one.
    pub fn from_metadata(metadata: Option<&Map<String, Value>>) -> Option<Owner> {
        let marker = metadata?.get(MARKER_KEY)?.as_object()?;
        let field = |name: &str| marker.get(name).and_then(Value::as_str).map(str::to_owned);
        Some(Owner {
            cluster: field("cluster")?,
            namespace: field("namespace")?,
            name: field("name")?,
            uid: field("uid").unwrap_or_default(),
        })
    }

    /// Whether `self` (read from LiteLLM) names the same managed resource as
    /// `other`. The uid is deliberately not compared: a resource deleted with
    /// a policy that orphans its object and created again under the same
    /// name is the same owner, as Crossplane's external-name adoption treats
    /// it; the uid is recorded for humans and refreshed on the next update.
    pub fn same_resource(&self, other: &Owner) -> bool {
        self.cluster == other.cluster
            && self.namespace == other.namespace
            && self.name == other.name
    }

    /// `namespace/name in cluster <id>`, for messages.
    pub fn describe(&self) -> String {
        format!(
            "{}/{} in cluster {}",
            self.namespace, self.name, self.cluster
        )
    }
}

/// What to send as LiteLLM `metadata`: the user's metadata plus the marker.
/// LiteLLM replaces `metadata` wholesale on update, so the marker must go out
/// with every write or it would be lost.
pub fn metadata_with_marker(
    user: Option<&crate::api::FreeForm>,
    owner: &Owner,
) -> Map<String, Value> {
    let mut metadata: Map<String, Value> = user
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    metadata.insert(MARKER_KEY.to_owned(), owner.marker());
    metadata
}

/// The default LiteLLM id of a resource: `<namespace>.<name>`. Namespace
/// names are DNS labels and cannot contain `.`, so ids of two namespaces
/// can never collide.
pub fn default_id(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(ns: &str, name: &str, uid: &str) -> Owner {
        Owner {
            cluster: "c1".into(),
            namespace: ns.into(),
            name: name.into(),
            uid: uid.into(),
        }
    }

    #[test]
    fn default_ids_of_different_namespaces_never_collide() {
        // "a.b" + "c" vs "a" + "b.c" would collide, but a namespace cannot hold a dot.
        assert_eq!(default_id("team-a", "web"), "team-a.web");
        assert_ne!(default_id("a", "b-c"), default_id("a-b", "c"));
    }

    #[test]
    fn marker_round_trips_through_metadata() {
        let me = owner("ns", "t", "u1");
        let user: crate::api::FreeForm = [("env".to_owned(), Value::from("prod"))].into();
        let metadata = metadata_with_marker(Some(&user), &me);
        assert_eq!(metadata["env"], "prod");
        assert_eq!(Owner::from_metadata(Some(&metadata)), Some(me));
    }

    #[test]
    fn marker_overrides_a_user_key_of_the_same_name() {
        let me = owner("ns", "t", "u1");
        let user: crate::api::FreeForm = [(MARKER_KEY.to_owned(), Value::from("forged"))].into();
        let metadata = metadata_with_marker(Some(&user), &me);
        assert_eq!(Owner::from_metadata(Some(&metadata)), Some(me));
    }

    #[test]
    fn missing_or_malformed_markers_read_as_none() {
        assert_eq!(Owner::from_metadata(None), None);
        let mut metadata = Map::new();
        assert_eq!(Owner::from_metadata(Some(&metadata)), None);
        metadata.insert(MARKER_KEY.into(), Value::from("x"));
        assert_eq!(Owner::from_metadata(Some(&metadata)), None);
        metadata.insert(MARKER_KEY.into(), serde_json::json!({"cluster": "c"}));
        assert_eq!(Owner::from_metadata(Some(&metadata)), None);
    }

    #[test]
    fn same_resource_ignores_the_uid_but_not_namespace_name_or_cluster() {
        let me = owner("ns", "t", "u1");
        assert!(owner("ns", "t", "u2").same_resource(&me));
        assert!(!owner("other", "t", "u1").same_resource(&me));
        assert!(!owner("ns", "x", "u1").same_resource(&me));
        let elsewhere = Owner {
            cluster: "c2".into(),
            ..me.clone()
        };
        assert!(!elsewhere.same_resource(&me));
    }
}
