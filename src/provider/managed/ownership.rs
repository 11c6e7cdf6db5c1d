//! Who owns a LiteLLM object: default ids and the ownership marker the
//! provider writes into LiteLLM `metadata`.
//!
//! LiteLLM has no notion of an owner, and team/budget/model ids are global
//! to the proxy. Two tenants sharing a proxy must not be able to take over
//! each other's objects, so every object the provider creates carries a
//! marker naming the managed resource, and adoption of an object marked for
//! someone else is refused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

#[cfg(test)]
impl Owner {
    /// The owner of the kinds' unit tests: `name` in namespace `ns` of
    /// cluster `c`, uid `u`.
    pub fn of_test(name: &str) -> Owner {
        Owner {
            cluster: "c".into(),
            namespace: "ns".into(),
            name: name.into(),
            uid: "u".into(),
        }
    }

    /// Metadata as the kinds' unit tests find it in LiteLLM: this owner's
    /// marker and the `extra` entries.
    pub fn marked(
        &self,
        extra: &[(&str, serde_json::Value)],
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        let mut metadata = metadata_with_marker(None, self);
        for (k, v) in extra {
            metadata.insert((*k).to_owned(), v.clone());
        }
        Some(metadata)
    }
}

/// Why a resource may not act on a LiteLLM object. Neither variant names
/// the other owner: a refusal must not tell a tenant who else uses the
/// proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The object is marked for another managed resource (another
    /// namespace, another name, or another cluster).
    Foreign,
    /// The object carries no marker (made in the UI or by another tool) and
    /// the resource is not in its instance's namespace, the only place
    /// from which unmarked objects may be adopted.
    Unmarked,
}

impl Refusal {
    /// Why, for conditions and events.
    pub fn explain(&self) -> &'static str {
        match self {
            Refusal::Foreign => "it is managed by another resource",
            Refusal::Unmarked => {
                "it was not created by this provider, and only resources in the \
                 LiteLLMInstance's own namespace may adopt such objects"
            }
        }
    }
}

/// Whether `me` may manage (observe, import, update or delete) an object
/// whose marker is `marker`, under every management policy alike: only
/// its own objects, and unmarked ones only from the instance's namespace
/// (which belongs to the platform, not to a tenant).
pub fn may_manage(
    marker: Option<&Owner>,
    me: &Owner,
    instance_namespace: &str,
) -> Result<(), Refusal> {
    match marker {
        Some(marker) if marker.same_resource(me) => Ok(()),
        Some(_) => Err(Refusal::Foreign),
        None if me.namespace == instance_namespace => Ok(()),
        None => Err(Refusal::Unmarked),
    }
}

/// Whether a resource of `namespace` in `cluster` may point one of its
/// objects at an object marked `marker` (a key joining a team or budget):
/// only objects of its own namespace and cluster; unmarked ones only from
/// the instance's namespace.
pub fn may_use(
    marker: Option<&Owner>,
    cluster: &str,
    namespace: &str,
    instance_namespace: &str,
) -> Result<(), Refusal> {
    match marker {
        Some(marker) if marker.cluster == cluster && marker.namespace == namespace => Ok(()),
        Some(_) => Err(Refusal::Foreign),
        None if namespace == instance_namespace => Ok(()),
        None => Err(Refusal::Unmarked),
    }
}

/// LiteLLM's `models` value that grants every model of the proxy.
const ALL_PROXY_MODELS: &str = "all-proxy-models";

/// Which models a team or key of `namespace` may be given. In the
/// instance's namespace (the platform's): any. Elsewhere the `models` list
/// may name public models (names without `/`) and the namespace's own
/// models (`<namespace>/<name>`, see [`crate::provider::kinds::model::public_model_name`]),
/// nothing that reaches another namespace's: not another `<namespace>/`
/// name, not a wildcard (LiteLLM matches `*` against every model name),
/// not `all-proxy-models`, and not an empty list, which LiteLLM reads as
/// every model of the proxy, unless `inherits` (a key in a team: LiteLLM
/// then applies the team's list, which this same rule bounds). `Err` names
/// the field and the entry the user wrote, never another tenant.
pub fn may_list_models(
    models: Option<&[String]>,
    inherits: bool,
    namespace: &str,
    instance_namespace: &str,
) -> Result<(), String> {
    if namespace == instance_namespace {
        return Ok(());
    }
    let own = format!("{namespace}/");
    let models = models.unwrap_or_default();
    if models.is_empty() && !inherits {
        return Err(format!(
            "forProvider.models: a team, key or user outside the LiteLLMInstance's namespace must list \
             its models: LiteLLM gives one without models every model of the proxy, other \
             namespaces' models included"
        ));
    }
    for entry in models {
        if entry.starts_with(&own) {
            continue;
        }
        if entry.contains('/') || entry.contains('*') || entry == ALL_PROXY_MODELS {
            return Err(format!(
                "forProvider.models: {entry:?} may reach models of other namespaces; outside the \
                 LiteLLMInstance's namespace list public model names (without '/' or '*') and \
                 this namespace's own models ({own}<name>)"
            ));
        }
    }
    Ok(())
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

/// The id of an object whose owner must live in the id itself, because the
/// LiteLLM object has no free-form field to carry a marker (budgets):
/// `<cluster>/<namespace>/<name>`. Namespaces and names never contain `/`,
/// so [`owner_of_id`] reads it back from the right, whatever the cluster
/// id holds.
pub fn owned_id(owner: &Owner) -> String {
    format!("{}/{}/{}", owner.cluster, owner.namespace, owner.name)
}

/// The owner named by an id of [`owned_id`]'s shape; `None` for any other
/// id (an object made in the UI or by another tool), which counts as
/// unmarked.
pub fn owner_of_id(id: &str) -> Option<Owner> {
    let mut parts = id.rsplitn(3, '/');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let namespace = parts.next().filter(|n| !n.is_empty())?;
    let cluster = parts.next().filter(|c| !c.is_empty())?;
    Some(Owner {
        cluster: cluster.to_owned(),
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        uid: String::new(),
    })
}

/// The annotation that lets a resource take over an object the provider
/// did not make, where nothing in LiteLLM can say who made it (a tag's
/// name, a fallback rule): value `"true"`. Without it such an object is
/// only imported read-only (see [`writes`]), never taken over silently.
pub const ADOPT: &str = "litellm.crossplane.io/adopt-existing";

/// Whether `mr` carries [`ADOPT`] as `"true"`.
pub fn adopts<K: kube::Resource>(mr: &K) -> bool {
    mr.meta()
        .annotations
        .as_ref()
        .and_then(|a| a.get(ADOPT))
        .map(String::as_str)
        == Some("true")
}

/// Whether the policies let the provider write or delete the object: an
/// import (`Observe`, `LateInitialize`) changes nothing.
pub fn writes(policies: &[crate::api::common::ManagementPolicy]) -> bool {
    use crate::api::common::{policy_allows, ManagementPolicy};
    [
        ManagementPolicy::Create,
        ManagementPolicy::Update,
        ManagementPolicy::Delete,
    ]
    .into_iter()
    .any(|p| policy_allows(policies, p))
}

/// A resource that contends for an object no marker can name, as
/// [`first_adopter`] compares them: its name and
/// `metadata.creationTimestamp` (seconds since the epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct Adopter {
    pub name: String,
    pub created: Option<i64>,
}

impl Adopter {
    pub fn of<K: kube::Resource>(mr: &K) -> Adopter {
        Adopter {
            name: mr.meta().name.clone().unwrap_or_default(),
            created: mr
                .meta()
                .creation_timestamp
                .as_ref()
                .map(|c| c.0.as_second()),
        }
    }
}

/// Of the resources of one namespace that contend for the same object
/// (adopt it, or hold it) and may write it, the one that does: the oldest
/// (by creation time, then name; no time sorts last). `None` when it is
/// `me`; else the other's name.
pub fn first_adopter(me: &Adopter, others: &[Adopter]) -> Option<String> {
    let key = |a: &Adopter| (a.created.unwrap_or(i64::MAX), a.name.clone());
    let first = others
        .iter()
        .filter(|o| o.name != me.name)
        .min_by_key(|o| key(o))?;
    (key(first) < key(me)).then(|| first.name.clone())
}

/// The older resource of `mr`'s kind and namespace, not being deleted,
/// whose external name is `external_name` and that `contends` for it
/// (see [`first_adopter`]), if there is one: from the watch cache, else
/// a list of the namespace.
pub async fn older_contender<K: crate::provider::managed::contract::ManagedKind>(
    kube: &crate::provider::watch::cache::Kube,
    mr: &K,
    external_name: &str,
    contends: impl Fn(&K) -> bool,
) -> Result<Option<String>, kube::Error> {
    use kube::ResourceExt;
    let namespace = mr.namespace().unwrap_or_default();
    let all: Vec<std::sync::Arc<K>> = match kube.cached_in::<K>(&namespace) {
        Some(cached) => cached.iter().filter_map(|o| o.read().ok()).collect(),
        None => kube
            .list_live::<K>(&namespace)
            .await?
            .iter()
            .filter_map(|o| o.read().ok())
            .collect(),
    };
    let others: Vec<Adopter> = all
        .iter()
        .filter(|o| {
            o.meta().deletion_timestamp.is_none()
                && writes(&o.managed().management_policies)
                && o.annotations()
                    .get(crate::api::common::EXTERNAL_NAME)
                    .map(String::as_str)
                    == Some(external_name)
                && contends(o)
        })
        .map(|o| Adopter::of(&**o))
        .collect();
    Ok(first_adopter(&Adopter::of(mr), &others))
}

/// The length of a [`private_id`]'s suffix, in hex digits (96 bits).
const PRIVATE_SUFFIX_LENGTH: usize = 24;

/// The id of an object that anyone who knows its id can use against its
/// owner, so that the id must carry its owner and also be unguessable (a
/// customer: any request can name any customer id in its `user` field and
/// spend that customer's budget): [`owned_id`] and a suffix derived from
/// the resource's uid, which only readers of its namespace know. Derived,
/// not drawn, so a lost external name is found again. `None` without a uid.
pub fn private_id(owner: &Owner) -> Option<String> {
    use sha2::{Digest, Sha256};
    if owner.uid.is_empty() {
        return None;
    }
    let digest = Sha256::digest(format!("litellm-crossplane/private-id/{}", owner.uid));
    let mut suffix = crate::litellm::token_of_sha256(&digest);
    suffix.truncate(PRIVATE_SUFFIX_LENGTH);
    Some(format!("{}/{suffix}", owned_id(owner)))
}

/// The owner named by an id of [`private_id`]'s shape (any suffix of its
/// length: an object adopted again after its resource was deleted and
/// made anew has the old one); `None` for any other id, which counts as
/// unmarked.
pub fn owner_of_private_id(id: &str) -> Option<Owner> {
    let (owned, suffix) = id.rsplit_once('/')?;
    let hex = suffix.len() == PRIVATE_SUFFIX_LENGTH
        && suffix
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    hex.then(|| owner_of_id(owned)).flatten()
}

/// The default LiteLLM id of a resource: `<namespace>.<name>`. Namespace
/// names are DNS labels and cannot contain `.`, so ids of two namespaces
/// can never collide.
pub fn default_id(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}")
}

/// How long an ownership the provider established itself stands in for a
/// read of the object's marker (see [`Verified`]).
pub const VERIFIED_FOR: Duration = Duration::from_secs(60);

/// Objects whose ownership the provider itself established lately, per
/// proxy: it created them with a resource's marker, or its observation
/// found them that resource's (`managed::sync` got past
/// [`may_manage`]). A key joining such a team (just made by the team
/// controller, typically) is checked against this instead of reading the
/// team's marker again. Nothing a tenant writes reaches it: it lives in the
/// provider's memory only, and status or annotations, which a tenant can
/// edit, play no part. An entry stands for [`VERIFIED_FOR`]; an object
/// found absent, refused or deleted is forgotten at once.
#[derive(Default)]
pub struct Verified(Mutex<VerifiedMap>);

#[derive(Default)]
struct VerifiedMap {
    by_object: HashMap<(String, &'static str, String), (Owner, Instant)>,
    pruned: Option<Instant>,
}

impl Verified {
    fn lock(&self) -> std::sync::MutexGuard<'_, VerifiedMap> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The LiteLLM `kind` object `id` at `endpoint` is `owner`'s resource's.
    /// Only teams and users are kept: they are what keys join by a marker
    /// (budgets carry their owner in their id, and nothing joins a key or a
    /// model), and a poll of every other kind would only fill memory.
    pub fn establish(&self, endpoint: &str, kind: &'static str, id: &str, owner: &Owner) {
        use crate::provider::managed::contract::ManagedKind;
        if kind != <crate::api::LiteLLMTeam as ManagedKind>::NOUN
            && kind != <crate::api::LiteLLMUser as ManagedKind>::NOUN
        {
            return;
        }
        let now = Instant::now();
        let mut map = self.lock();
        // Dropped once a period, so objects the provider no longer looks at
        // cost nothing.
        if map
            .pruned
            .is_none_or(|at| now.duration_since(at) > VERIFIED_FOR)
        {
            map.by_object
                .retain(|_, (_, at)| now.duration_since(*at) <= VERIFIED_FOR);
            map.pruned = Some(now);
        }
        map.by_object.insert(
            (endpoint.to_owned(), kind, id.to_owned()),
            (owner.clone(), now),
        );
    }

    /// Whatever was established of the object no longer stands.
    pub fn forget(&self, endpoint: &str, kind: &'static str, id: &str) {
        self.lock()
            .by_object
            .remove(&(endpoint.to_owned(), kind, id.to_owned()));
    }

    /// The owner established for the object within [`VERIFIED_FOR`].
    pub fn owner(&self, endpoint: &str, kind: &'static str, id: &str) -> Option<Owner> {
        let map = self.lock();
        let (owner, at) = map
            .by_object
            .get(&(endpoint.to_owned(), kind, id.to_owned()))?;
        (at.elapsed() <= VERIFIED_FOR).then(|| owner.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_adopter_writes() {
        let at = |name: &str, t: Option<i64>| Adopter {
            name: name.into(),
            created: t,
        };
        let me = at("b", Some(100));
        assert_eq!(first_adopter(&me, &[]), None);
        assert_eq!(
            first_adopter(&me, std::slice::from_ref(&me)),
            None,
            "itself"
        );
        assert_eq!(first_adopter(&me, &[at("c", Some(101))]), None, "younger");
        assert_eq!(
            first_adopter(&me, &[at("z", Some(99))]),
            Some("z".into()),
            "older"
        );
        assert_eq!(
            first_adopter(&me, &[at("a", Some(100))]),
            Some("a".into()),
            "the same second: by name"
        );
        assert_eq!(
            first_adopter(&me, &[at("a", None)]),
            None,
            "no time sorts last"
        );
        assert_eq!(
            first_adopter(&at("b", None), &[at("c", None)]),
            None,
            "neither: by name"
        );
    }

    #[test]
    fn only_read_only_policies_import_without_writing() {
        use crate::api::common::ManagementPolicy::*;
        assert!(!writes(&[Observe]));
        assert!(!writes(&[Observe, LateInitialize]));
        for policies in [
            &[All][..],
            &[Observe, Update],
            &[Observe, Delete],
            &[Observe, Create],
        ] {
            assert!(writes(policies), "{policies:?}");
        }
    }

    #[test]
    fn outside_the_platform_namespace_models_are_public_names_or_the_namespaces_own() {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let check = |names: &[&str], inherits: bool, namespace: &str| {
            may_list_models(Some(&list(names)), inherits, namespace, "platform")
        };
        // The platform's namespace: anything, empty included.
        assert!(check(&[], false, "platform").is_ok());
        assert!(check(&["team-b/gpt", "*"], false, "platform").is_ok());
        // A tenant: public names and its own.
        assert!(check(&["gpt-4o", "team-a/mine", "team-a/x/y"], false, "team-a").is_ok());
        assert!(
            check(&[], true, "team-a").is_ok(),
            "a key inherits its team's list"
        );
        assert!(may_list_models(None, true, "team-a", "platform").is_ok());
        for refused in [
            &[][..],
            &["team-b/gpt"],
            &["gpt-4o", "team-ab/x"],
            &["*"],
            &["gpt-*"],
            &["all-proxy-models"],
        ] {
            let err = check(refused, false, "team-a").unwrap_err();
            assert!(err.starts_with("forProvider.models: "), "{err}");
        }
        assert!(may_list_models(None, false, "team-a", "platform").is_err());
        let err = check(&["team-b/gpt"], true, "team-a").unwrap_err();
        assert!(
            err.contains("\"team-b/gpt\"") && err.contains("team-a/<name>"),
            "{err}"
        );
    }

    #[test]
    fn only_own_objects_and_unmarked_ones_from_the_instance_namespace_are_managed() {
        let me = owner("tenant", "t", "u1");
        let platform = owner("platform", "t", "u1");
        assert_eq!(may_manage(Some(&me), &me, "platform"), Ok(()));
        assert_eq!(
            may_manage(Some(&owner("tenant", "t", "u2")), &me, "platform"),
            Ok(()),
            "a re-created resource of the same name"
        );
        for other in [owner("other", "t", "u1"), owner("tenant", "x", "u1")] {
            assert_eq!(
                may_manage(Some(&other), &me, "platform"),
                Err(Refusal::Foreign)
            );
        }
        let elsewhere = Owner {
            cluster: "c2".into(),
            ..me.clone()
        };
        assert_eq!(
            may_manage(Some(&elsewhere), &me, "platform"),
            Err(Refusal::Foreign)
        );
        assert_eq!(may_manage(None, &me, "platform"), Err(Refusal::Unmarked));
        assert_eq!(may_manage(None, &platform, "platform"), Ok(()));
    }

    #[test]
    fn objects_are_used_only_within_their_namespace_and_cluster() {
        let team = owner("tenant", "web", "u1");
        assert_eq!(may_use(Some(&team), "c1", "tenant", "platform"), Ok(()));
        assert_eq!(
            may_use(Some(&team), "c1", "other", "platform"),
            Err(Refusal::Foreign)
        );
        assert_eq!(
            may_use(Some(&team), "c2", "tenant", "platform"),
            Err(Refusal::Foreign)
        );
        assert_eq!(
            may_use(None, "c1", "tenant", "platform"),
            Err(Refusal::Unmarked)
        );
        assert_eq!(may_use(None, "c1", "platform", "platform"), Ok(()));
    }

    #[test]
    fn owned_ids_name_their_owner() {
        let me = owner("ns", "b.1", "u1");
        let id = owned_id(&me);
        assert_eq!(id, "c1/ns/b.1");
        assert!(owner_of_id(&id).unwrap().same_resource(&me));
        let odd_cluster = Owner {
            cluster: "a/b".into(),
            ..me.clone()
        };
        assert!(owner_of_id(&owned_id(&odd_cluster))
            .unwrap()
            .same_resource(&odd_cluster));
        for unmarked in ["premium", "ns.b", "ns/b", "/ns/b", "c//b", "c/ns/"] {
            assert_eq!(owner_of_id(unmarked), None, "{unmarked}");
        }
    }

    #[test]
    fn private_ids_name_their_owner_and_cannot_be_derived_without_the_uid() {
        let me = owner("ns", "alice", "2f1c7a4e-0000-4000-8000-000000000001");
        let id = private_id(&me).unwrap();
        assert!(id.starts_with("c1/ns/alice/"), "{id}");
        assert_eq!(id.len(), "c1/ns/alice/".len() + PRIVATE_SUFFIX_LENGTH);
        assert_eq!(private_id(&me), Some(id.clone()), "derived, not drawn");
        assert!(owner_of_private_id(&id).unwrap().same_resource(&me));
        let other_uid = owner("ns", "alice", "2f1c7a4e-0000-4000-8000-000000000002");
        assert_ne!(private_id(&other_uid), Some(id.clone()));
        assert_eq!(private_id(&owner("ns", "alice", "")), None);
        // An owned id without the suffix, a short or non-hex suffix, and
        // plain ids are unmarked.
        for unmarked in [
            "c1/ns/alice".to_owned(),
            "c1/ns/alice/0123".to_owned(),
            format!("c1/ns/alice/{}", "G".repeat(PRIVATE_SUFFIX_LENGTH)),
            format!("ns/alice/{}", "0".repeat(PRIVATE_SUFFIX_LENGTH)),
            "alice".to_owned(),
        ] {
            assert_eq!(owner_of_private_id(&unmarked), None, "{unmarked}");
        }
    }

    #[test]
    fn refusals_name_nobody() {
        for refusal in [Refusal::Foreign, Refusal::Unmarked] {
            assert!(!refusal.explain().contains('/'));
        }
    }

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

    #[test]
    fn an_established_owner_stands_per_proxy_and_object_until_forgotten() {
        let owner = Owner {
            cluster: "c".into(),
            namespace: "a".into(),
            name: "web".into(),
            uid: "u".into(),
        };
        let verified = Verified::default();
        assert_eq!(verified.owner("http://p", "team", "a.web"), None);
        verified.establish("http://p", "team", "a.web", &owner);
        assert_eq!(
            verified.owner("http://p", "team", "a.web"),
            Some(owner.clone())
        );
        assert_eq!(
            verified.owner("http://q", "team", "a.web"),
            None,
            "another proxy"
        );
        assert_eq!(
            verified.owner("http://p", "budget", "a.web"),
            None,
            "another kind"
        );
        assert_eq!(
            verified.owner("http://p", "team", "a.other"),
            None,
            "another id"
        );
        verified.forget("http://p", "team", "a.web");
        assert_eq!(verified.owner("http://p", "team", "a.web"), None);
        // Nothing joins a key: it is not kept.
        verified.establish("http://p", "key", "a.web", &owner);
        assert_eq!(verified.owner("http://p", "key", "a.web"), None);
        // Keys join users.
        verified.establish("http://p", "user", "a.alice", &owner);
        assert_eq!(
            verified.owner("http://p", "user", "a.alice"),
            Some(owner.clone())
        );
    }
}
