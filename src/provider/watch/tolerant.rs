//! One object that cannot be read must not stop a kind for everyone.
//!
//! kube-rs parses a list or watch response as a whole: one item it cannot
//! deserialize fails the list, and with it the watch of every object of
//! the kind in every namespace. The API server stores objects that serde
//! cannot read back: a free-form map (`metadata`, `litellmSettings`) nested
//! deeper than serde_json's limit of 128 levels passes every schema and CEL
//! rule (neither can bound depth), and its `managedFields` are as deep.
//!
//! [`Tolerant`] wraps a kind for lists and watches: each item is taken as
//! raw JSON (serde_json skips raw values without a depth limit), then parsed
//! on its own, with the full depth budget. An item that still fails becomes
//! [`Tolerant::Unreadable`], carrying only its identity (name, namespace,
//! uid, versions, deletion state, read without the rest), so the
//! controllers can report it on the object itself and go on with the
//! others.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::Resource;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::api::common::{Condition, InstanceRef};
use crate::api::conditions::condition;
use crate::provider::watch::joins::Join;

/// An object as read from a list or watch: the kind, packed as the caches
/// keep it ([`Packed`]), or what could be read of an object that could not.
pub enum Tolerant<K> {
    Ok(Packed<K>),
    Unreadable(Box<Unreadable>),
}

/// A readable object as the caches hold it. The caches keep one per object
/// for as long as the object exists (20,000 of them for 10,000 teams and
/// keys), and a reconciliation reads its own object and the few it
/// references, while the scans over a whole kind (who waits for a team
/// that became Ready, who still uses one being deleted, the state gauges)
/// read a few facts of each. So an object is kept as the JSON of what a
/// cache keeps of it ([`Packable::strip`]) beside its identity (what
/// kube-runtime's store and scheduler key it by) and those facts, and
/// parsed again when a reconciliation reads it ([`Tolerant::read`]): the
/// kinds' structs are mostly empty options and their fields some thirty
/// allocations, where the JSON is one. The JSON is kept compressed
/// ([`Body::Packed`]): an object's text is mostly the names and values every
/// object of the provider's has, which LZ4 finds in [`DICTIONARY`]. A Ready
/// team and key take 746 and 867 bytes in all, where they took 1,446 and
/// 1,716 with their JSON as text (`tests/cache_memory.rs`).
#[derive(Clone)]
pub struct Packed<K> {
    /// Name, namespace, uid, resourceVersion, generation and deletion
    /// timestamp; the rest of the metadata is in the body.
    identity: ObjectMeta,
    body: Body<K>,
    facts: Facts,
    /// A hash of what a change must touch to reconcile it (see
    /// [`Tolerant::desired_state`]).
    desired_state: u64,
}

#[derive(Clone)]
enum Body<K> {
    /// The object without the fields of `identity`, as JSON, compressed
    /// ([`compress`]).
    Packed(Box<[u8]>),
    /// Kinds the caches hold few of and read on every poll (instances), and
    /// anything serde_json cannot write back: kept as parsed.
    Whole(Arc<K>),
}

/// What the scans over a whole kind read of each object, taken from it once
/// when it is cached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// `Ready` is `True`.
    pub ready: bool,
    /// `Synced` is `True`.
    pub synced: bool,
    /// `Synced` is set, `True` or not: a reconciliation of it has ended.
    pub reported: bool,
    /// Its `crossplane.io/external-name`.
    pub external_name: Option<Box<str>>,
    /// `spec.instanceRef`.
    pub instance_ref: Option<InstanceRef>,
    /// What its LiteLLM object joins ([`crate::provider::managed::contract::ManagedKind::joins`]).
    pub joins: Box<[Join]>,
}

impl Facts {
    /// Its id, once it is Ready: what a resource that references it joins.
    pub fn ready_id(&self) -> Option<String> {
        self.ready
            .then(|| self.external_name.as_deref().map(str::to_owned))
            .flatten()
    }
}

/// A kind the caches hold (see [`Packed`]).
pub trait Packable:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Send + Sync + 'static
{
    /// Whether the caches keep it as JSON; `false` for kinds they hold few
    /// of and read on every poll.
    const PACKED: bool = true;

    /// What a cache keeps of its metadata.
    fn strip(meta: &mut ObjectMeta);

    /// The facts the scans read.
    fn facts(&self) -> Facts;
}

/// The hash [`Tolerant::desired_state`] gives, of `meta` as the cache keeps
/// it.
fn desired_state(meta: &ObjectMeta) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.finalizers.hash(&mut hasher);
    meta.deletion_timestamp
        .as_ref()
        .map(|t| t.0.as_second())
        .hash(&mut hasher);
    hasher.finish()
}

impl<K: Packable> Packed<K> {
    /// `object` as a cache keeps it.
    pub fn new(mut object: K) -> Self {
        K::strip(object.meta_mut());
        let facts = object.facts();
        let desired_state = desired_state(object.meta());
        if !K::PACKED {
            return Self {
                identity: identity(object.meta()),
                body: Body::Whole(Arc::new(object)),
                facts,
                desired_state,
            };
        }
        let meta = object.meta_mut();
        let identity = ObjectMeta {
            name: meta.name.take(),
            namespace: meta.namespace.take(),
            uid: meta.uid.take(),
            resource_version: meta.resource_version.take(),
            generation: meta.generation.take(),
            deletion_timestamp: meta.deletion_timestamp.take(),
            ..ObjectMeta::default()
        };
        match serde_json::to_string(&object) {
            Ok(json) => Self {
                identity,
                body: Body::Packed(compress(&without_type::<K>(json))),
                facts,
                desired_state,
            },
            Err(_) => {
                restore(object.meta_mut(), &identity);
                Self {
                    identity,
                    body: Body::Whole(Arc::new(object)),
                    facts,
                    desired_state,
                }
            }
        }
    }

    /// The object, parsed again from its body.
    pub fn read(&self) -> Result<Arc<K>, serde_json::Error> {
        match &self.body {
            Body::Whole(object) => Ok(object.clone()),
            Body::Packed(bytes) => {
                let mut object: K = serde_json::from_slice(&decompress(bytes)?)?;
                restore(object.meta_mut(), &self.identity);
                Ok(Arc::new(object))
            }
        }
    }

    pub fn facts(&self) -> &Facts {
        &self.facts
    }
}

/// What LZ4 looks up the repeated text of a cached object's JSON in: an
/// object of the provider's as it serializes, with the names and values
/// most objects of most kinds share (metadata the API server and the
/// provider write, the spec's managed fields, the conditions, common
/// observed fields). Only a compression dictionary: any text gives the
/// object back as it was; text closer to the objects compresses them more.
/// It must not change while a process runs (it does not: it is a constant),
/// and nothing compressed with it outlives the process.
const DICTIONARY: &[u8] = br#"{"metadata":{"annotations":{"crossplane.io/composition-resource-name":"","crossplane.io/external-create-pending":"2026-12-03T09:00:00Z","crossplane.io/external-create-succeeded":"2026-12-03T09:00:00Z","crossplane.io/external-name":"","crossplane.io/paused":"true"},"creationTimestamp":"2026-12-03T09:00:00Z","finalizers":["finalizer.managedresource.crossplane.io"]},"spec":{"instanceRef":{"name":"","namespace":""},"managementPolicies":["*"],"forProvider":{"teamRef":{"name":""},"teamId":"","budgetRef":{"name":""},"budgetId":"","userRef":{"name":""},"userId":"","organizationRef":{"name":""},"organizationId":"","keyAlias":"","teamAlias":"","description":"","models":[],"maxBudget":"","softBudget":"","budgetDuration":"30d","tpmLimit":1000,"rpmLimit":100,"maxParallelRequests":10,"blocked":false,"members":[],"membersPolicy":"","tags":[],"guardrails":[],"metadata":{}},"writeConnectionSecretToRef":{"name":"","namespace":""}},"status":{"conditions":[{"type":"Ready","status":"True","reason":"Available","lastTransitionTime":"2026-12-03T09:00:00Z","observedGeneration":1},{"type":"Synced","status":"True","reason":"ReconcileSuccess","lastTransitionTime":"2026-12-03T09:00:00Z","observedGeneration":1}],"observedGeneration":1,"atProvider":{"token":"","keyName":"sk-...","keyAlias":"","teamId":"","teamAlias":"","userId":"","budgetId":"","organizationId":"","models":[],"maxBudget":"","spend":"0.0","expires":"","budgetResetAt":"","secretFingerprints":{},"createdAt":"2026-12-03T09:00:00Z","updatedAt":"2026-12-03T09:00:00Z"}}}"#;

/// `text` compressed with LZ4 against [`DICTIONARY`], its length first.
fn compress(text: &str) -> Box<[u8]> {
    lz4_flex::block::compress_prepend_size_with_dict(text.as_bytes(), DICTIONARY).into_boxed_slice()
}

/// The text [`compress`] took.
fn decompress(bytes: &[u8]) -> Result<Vec<u8>, serde_json::Error> {
    lz4_flex::block::decompress_size_prepended_with_dict(bytes, DICTIONARY)
        .map_err(serde_json::Error::custom)
}

/// `json` without the `apiVersion` and `kind` it starts with: the same for
/// every object of the kind (some 70 bytes), and not read back (a kind's
/// struct takes them from its type, and serde passes over them). Cut in
/// place: the text is only compressed, never kept.
fn without_type<K: Resource<DynamicType = ()>>(mut json: String) -> String {
    let prefix = format!(
        "{{\"apiVersion\":{},\"kind\":{},",
        serde_json::Value::from(K::api_version(&()).as_ref()),
        serde_json::Value::from(K::kind(&()).as_ref()),
    );
    if json.starts_with(prefix.as_str()) {
        json.replace_range(..prefix.len(), "{");
    }
    json
}

/// The fields of `meta` that [`Packed`] keeps as its identity.
fn identity(meta: &ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        generation: meta.generation,
        deletion_timestamp: meta.deletion_timestamp.clone(),
        ..ObjectMeta::default()
    }
}

fn restore(meta: &mut ObjectMeta, identity: &ObjectMeta) {
    meta.name.clone_from(&identity.name);
    meta.namespace.clone_from(&identity.namespace);
    meta.uid.clone_from(&identity.uid);
    meta.resource_version.clone_from(&identity.resource_version);
    meta.generation = identity.generation;
    meta.deletion_timestamp
        .clone_from(&identity.deletion_timestamp);
}

impl<K> fmt::Debug for Packed<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packed")
            .field("identity", &self.identity)
            .field("facts", &self.facts)
            .finish_non_exhaustive()
    }
}

impl<K: Packable> Tolerant<K> {
    /// A readable object, as a cache keeps it.
    pub fn new(object: K) -> Self {
        Tolerant::Ok(Packed::new(object))
    }

    /// The object, or why it cannot be read. A body that does not parse
    /// back (the provider's own copy of an object that parsed; a bug were
    /// it to happen) is reported like an object that did not parse.
    pub fn read(&self) -> Result<Arc<K>, std::borrow::Cow<'_, Unreadable>> {
        match self {
            Tolerant::Ok(packed) => packed.read().map_err(|error| {
                std::borrow::Cow::Owned(Unreadable {
                    metadata: packed.identity.clone(),
                    instance_ref: packed.facts.instance_ref.clone(),
                    error: format!("its cached copy does not parse back: {error}"),
                })
            }),
            Tolerant::Unreadable(unreadable) => Err(std::borrow::Cow::Borrowed(unreadable)),
        }
    }

    /// The facts of a readable object.
    pub fn facts(&self) -> Option<&Facts> {
        match self {
            Tolerant::Ok(packed) => Some(&packed.facts),
            Tolerant::Unreadable(_) => None,
        }
    }

    /// `spec.instanceRef`, of an unreadable object too when that much
    /// could be read.
    pub fn instance_ref(&self) -> Option<&InstanceRef> {
        match self {
            Tolerant::Ok(packed) => packed.facts.instance_ref.as_ref(),
            Tolerant::Unreadable(unreadable) => unreadable.instance_ref.as_ref(),
        }
    }

    /// A hash of what a change must touch to reconcile the object: its
    /// spec (`generation`), annotations, finalizers or deletion.
    pub fn desired_state(&self) -> u64 {
        match self {
            Tolerant::Ok(packed) => packed.desired_state,
            Tolerant::Unreadable(unreadable) => desired_state(&unreadable.metadata),
        }
    }
}

/// The identity of an object that does not deserialize, and why.
#[derive(Clone, Debug)]
pub struct Unreadable {
    pub metadata: ObjectMeta,
    /// `spec.instanceRef`, when it could be read: whose deletion it holds up.
    pub instance_ref: Option<InstanceRef>,
    /// serde's message (a position and a cause; never a value).
    pub error: String,
}

impl Unreadable {
    /// What to tell the user, on the object itself.
    pub fn message(&self) -> String {
        format!(
            "the provider cannot read this object ({}); nothing is created, changed or deleted \
             for it until it is changed so that it can be read (free-form maps such as \
             metadata must nest well under 128 levels)",
            self.error
        )
    }

    /// The conditions `(type, reason)` that report it: `False`, with
    /// [`Unreadable::message`], dated `since` (its first report, so that a
    /// report written again changes nothing).
    pub fn conditions(&self, of: &[(&str, &str)], since: &str) -> Vec<Condition> {
        of.iter()
            .map(|(type_, reason)| {
                let mut c = condition(type_, false, reason, Some(self.message()));
                c.last_transition_time = Some(since.to_owned());
                c.observed_generation = self.metadata.generation;
                c
            })
            .collect()
    }
}

impl<K: Clone> Clone for Tolerant<K> {
    fn clone(&self) -> Self {
        match self {
            Tolerant::Ok(object) => Tolerant::Ok(object.clone()),
            Tolerant::Unreadable(unreadable) => Tolerant::Unreadable(unreadable.clone()),
        }
    }
}

impl<K> fmt::Debug for Tolerant<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerant::Ok(object) => object.fmt(f),
            Tolerant::Unreadable(unreadable) => unreadable.fmt(f),
        }
    }
}

/// What is read of an object that does not deserialize: its identity.
/// Every other field (`managedFields` included) is skipped, which serde_json
/// does without a depth limit.
#[derive(Deserialize)]
struct Identity {
    metadata: IdentityMeta,
    #[serde(default)]
    spec: Option<IdentitySpec>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct IdentityMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdentitySpec {
    instance_ref: Option<InstanceRef>,
}

impl<'de, K: Packable> Deserialize<'de> for Tolerant<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Ok(parse(raw.get()).map_err(D::Error::custom)?)
    }
}

/// One object from its JSON text: the kind, or its identity and why not.
/// Fails only when not even the identity can be read.
pub fn parse<K: Packable>(text: &str) -> Result<Tolerant<K>, serde_json::Error> {
    match serde_json::from_str::<K>(text) {
        Ok(object) => Ok(Tolerant::new(object)),
        Err(error) => {
            let identity: Identity = serde_json::from_str(text)?;
            let meta = identity.metadata;
            Ok(Tolerant::Unreadable(Box::new(Unreadable {
                metadata: ObjectMeta {
                    name: meta.name,
                    namespace: meta.namespace,
                    uid: meta.uid,
                    resource_version: meta.resource_version,
                    generation: meta.generation,
                    deletion_timestamp: meta.deletion_timestamp,
                    finalizers: meta.finalizers,
                    ..ObjectMeta::default()
                },
                instance_ref: identity.spec.and_then(|spec| spec.instance_ref),
                error: error.to_string(),
            })))
        }
    }
}

/// When each unreadable object (by uid) was first reported: the report is
/// written with that time, so writing it again changes nothing on the API
/// server, which then sends no watch event that would bring it back.
#[derive(Default)]
pub struct Reports(Mutex<HashMap<String, String>>);

impl Reports {
    /// When `unreadable` was first reported (now, for a new one) and
    /// whether it is new.
    pub fn since(&self, unreadable: &Unreadable) -> (String, bool) {
        let uid = unreadable.metadata.uid.as_deref().unwrap_or_default();
        let mut reports = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match reports.get(uid) {
            Some(since) => (since.clone(), false),
            None => {
                let now = format!("{:.0}", Timestamp::now());
                reports.insert(uid.to_owned(), now.clone());
                (now, true)
            }
        }
    }

    /// `uid` can be read again.
    pub fn forget(&self, uid: &str) {
        let mut reports = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !reports.is_empty() {
            reports.remove(uid);
        }
    }
}

/// Writes `status` (a merge patch of the status subresource) on the
/// unreadable object, through the tolerant type so the answer (the same
/// unreadable object) is read like the list was.
pub async fn write_status<K>(
    api: &Api<Tolerant<K>>,
    unreadable: &Unreadable,
    status: serde_json::Value,
) -> Result<(), kube::Error>
where
    K: Packable,
{
    let name = unreadable.metadata.name.clone().unwrap_or_default();
    let patch = serde_json::json!({ "status": status });
    api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

impl<K: Resource<DynamicType = ()> + Clone> Resource for Tolerant<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> std::borrow::Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> std::borrow::Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> std::borrow::Cow<'_, str> {
        K::version(dt)
    }
    fn plural(dt: &()) -> std::borrow::Cow<'_, str> {
        K::plural(dt)
    }
    /// Of a readable object, its identity only (see [`Packed`]).
    fn meta(&self) -> &ObjectMeta {
        match self {
            Tolerant::Ok(packed) => &packed.identity,
            Tolerant::Unreadable(unreadable) => &unreadable.metadata,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Tolerant::Ok(packed) => &mut packed.identity,
            Tolerant::Unreadable(unreadable) => &mut unreadable.metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{LiteLLMTeam, LiteLLMVirtualKey};
    use kube::ResourceExt;

    /// `{"a":{"a":...{"a":1}}}`, `depth` objects deep.
    fn nested(depth: usize) -> String {
        format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
    }

    fn team(metadata: &str) -> String {
        format!(
            r#"{{"apiVersion":"litellm.m.crossplane.io/v1alpha1","kind":"LiteLLMTeam",
            "metadata":{{"name":"deep","namespace":"t","uid":"u1","resourceVersion":"7",
              "finalizers":["f"],"managedFields":[{{"fieldsV1":{metadata}}}]}},
            "spec":{{"instanceRef":{{"name":"proxy"}},"forProvider":{{"metadata":{metadata}}}}}}}"#
        )
    }

    /// What the caches keep of `object` (see [`Packed`]), as JSON.
    fn kept<K: Packable>(mut object: K) -> serde_json::Value {
        K::strip(object.meta_mut());
        serde_json::to_value(object).unwrap()
    }

    /// Packs `value` as `K` and reads it back.
    fn round_trip<K: Packable>(value: &serde_json::Value) -> (Tolerant<K>, K) {
        let object: K = serde_json::from_value(value.clone()).unwrap();
        let packed = Tolerant::new(object.clone());
        let read = packed.read().map_err(|e| e.error.clone()).unwrap();
        assert_eq!(
            serde_json::to_value(&*read).unwrap(),
            kept(object.clone()),
            "{value}"
        );
        (packed, object)
    }

    #[test]
    fn every_example_object_reads_back_as_the_cache_kept_it() {
        use crate::api::*;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut kinds = std::collections::BTreeSet::new();
        for dir in std::fs::read_dir(root).unwrap() {
            let dir = dir.unwrap().path();
            for file in ["expected.yaml", "observed.yaml", "required.yaml"] {
                let Ok(text) = std::fs::read_to_string(dir.join(file)) else {
                    continue;
                };
                let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text).unwrap();
                for mut doc in docs {
                    let Some(kind) = doc["kind"].as_str().map(str::to_owned) else {
                        continue;
                    };
                    if !doc["apiVersion"]
                        .as_str()
                        .is_some_and(|v| v.starts_with("litellm.m.crossplane.io/"))
                        || doc.get("spec").is_none()
                    {
                        // Observed states of a render hold only a status.
                        continue;
                    }
                    // What the API server adds, and what a cache drops.
                    let meta = &mut doc["metadata"];
                    meta["namespace"] = "team-a".into();
                    meta["uid"] = "0b6c2a6e-3f0f-4d3e-9d59-3c1b0f1f6a11".into();
                    meta["resourceVersion"] = "4711".into();
                    meta["generation"] = 3.into();
                    meta["creationTimestamp"] = "2026-12-03T09:00:00Z".into();
                    meta["finalizers"] =
                        serde_json::json!(["finalizer.managedresource.crossplane.io"]);
                    meta["labels"] = serde_json::json!({"team": "a"});
                    meta["managedFields"] =
                        serde_json::json!([{"manager": "kubectl", "operation": "Apply"}]);
                    meta["annotations"]["crossplane.io/external-name"] = "team-a.web".into();
                    kinds.insert(kind.clone());
                    macro_rules! round_trip_every_kind {
                        ($($kind:ident => $field:ident),* $(,)?) => {
                            match kind.as_str() {
                                $(stringify!($kind) => drop(round_trip::<crate::api::$kind>(&doc)),)*
                                "LiteLLMInstance" => drop(round_trip::<LiteLLMInstance>(&doc)),
                                other => panic!(
                                    "an example renders {other}, which this test does not know"
                                ),
                            }
                        };
                    }
                    crate::managed_kinds!(round_trip_every_kind);
                }
            }
        }
        for kind in ["LiteLLMTeam", "LiteLLMVirtualKey", "LiteLLMInstance"] {
            assert!(
                kinds.contains(kind),
                "no example renders a {kind}: {kinds:?}"
            );
        }
    }

    fn key(status: serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
            "metadata": {
                "name": "ci", "namespace": "team-a", "uid": "u-1", "resourceVersion": "12",
                "generation": 2, "finalizers": ["f"], "labels": {"l": "v"},
                "annotations": {"crossplane.io/external-name": "sk-hash",
                                "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "o"}],
                "managedFields": [{"manager": "m"}]
            },
            "spec": {"instanceRef": {"name": "proxy", "namespace": "litellm"},
                     "forProvider": {"teamRef": {"name": "web"}, "budgetId": "b-1"},
                     "writeConnectionSecretToRef": {"name": "ci-key"}},
            "status": status
        })
    }

    #[test]
    fn a_packed_object_keeps_its_identity_and_the_facts_scans_read() {
        let status = serde_json::json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available"},
            {"type": "Synced", "status": "False", "reason": "ReconcileError"}
        ]});
        let (packed, _) = round_trip::<LiteLLMVirtualKey>(&key(status));
        let meta = packed.meta();
        assert_eq!(meta.name.as_deref(), Some("ci"));
        assert_eq!(meta.namespace.as_deref(), Some("team-a"));
        assert_eq!(meta.uid.as_deref(), Some("u-1"));
        assert_eq!(meta.resource_version.as_deref(), Some("12"));
        assert_eq!(meta.generation, Some(2));
        assert_eq!(meta.annotations, None, "in the body, not the identity");
        let facts = packed.facts().unwrap();
        assert!(facts.ready && !facts.synced);
        assert_eq!(facts.external_name.as_deref(), Some("sk-hash"));
        assert_eq!(packed.instance_ref().unwrap().name, "proxy");
        let joins: Vec<_> = facts.joins.iter().map(|j| j.what).collect();
        assert!(
            joins.contains(&crate::provider::watch::joins::Joins::Team),
            "{joins:?}"
        );
        let read = packed.read().unwrap();
        assert_eq!(read.meta().finalizers, Some(vec!["f".to_owned()]));
        assert_eq!(read.meta().labels, None);
        assert_eq!(read.meta().owner_references, None);
        assert_eq!(read.meta().managed_fields, None);
        assert_eq!(
            read.annotations().keys().collect::<Vec<_>>(),
            ["crossplane.io/external-name"]
        );
    }

    #[test]
    fn what_a_change_must_touch_moves_the_desired_state_and_a_status_write_does_not() {
        let at = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut value = key(serde_json::json!({}));
            edit(&mut value);
            let object: LiteLLMVirtualKey = serde_json::from_value(value).unwrap();
            Tolerant::new(object).desired_state()
        };
        let base = at(&|_| ());
        assert_eq!(
            base,
            at(&|v| v["status"] = serde_json::json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available"}]}))
        );
        assert_eq!(
            base,
            at(&|v| v["metadata"]["resourceVersion"] = "13".into())
        );
        assert_eq!(base, at(&|v| v["metadata"]["labels"]["other"] = "x".into()));
        assert_ne!(base, at(&|v| v["metadata"]["generation"] = 3.into()));
        assert_ne!(
            base,
            at(&|v| v["metadata"]["annotations"]["a"] = "b".into())
        );
        assert_ne!(
            base,
            at(&|v| v["metadata"]["finalizers"] = serde_json::json!([]))
        );
        assert_ne!(
            base,
            at(&|v| v["metadata"]["deletionTimestamp"] = "2026-12-03T09:00:00Z".into())
        );
    }

    /// The compressed body of a key the cache keeps as JSON.
    fn packed_body<K>(packed: &Tolerant<K>) -> &[u8] {
        let Tolerant::Ok(Packed {
            body: Body::Packed(bytes),
            ..
        }) = packed
        else {
            panic!("a key is kept as JSON");
        };
        bytes
    }

    #[test]
    fn a_packed_key_is_smaller_than_the_struct_it_reads_back_as() {
        let status = serde_json::json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available",
             "lastTransitionTime": "2026-12-03T09:00:00Z", "observedGeneration": 2},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
             "lastTransitionTime": "2026-12-03T09:00:00Z", "observedGeneration": 2}
        ]});
        let (packed, _) = round_trip::<LiteLLMVirtualKey>(&key(status));
        let bytes = packed_body(&packed);
        let json = String::from_utf8(decompress(bytes).unwrap()).unwrap();
        assert!(
            json.starts_with("{\"metadata\":") && !json.contains("apiVersion"),
            "the type is not kept: {json}"
        );
        // The struct alone, before what its fields hold on the heap.
        assert!(
            json.len() + std::mem::size_of::<Tolerant<LiteLLMVirtualKey>>()
                < std::mem::size_of::<LiteLLMVirtualKey>(),
            "{} bytes of JSON",
            json.len()
        );
        // Compressed to well under half: what the text shares with every
        // object is found in the dictionary.
        assert!(
            bytes.len() * 3 < json.len(),
            "{} bytes compressed of {}: {json}",
            bytes.len(),
            json.len()
        );
    }

    #[test]
    fn text_the_dictionary_does_not_know_reads_back_as_it_was() {
        // Non-ASCII, escapes, and a free-form map far longer than the
        // dictionary and than LZ4's 64 KiB window.
        let mut value = key(serde_json::json!({}));
        let long: serde_json::Map<String, serde_json::Value> = (0..4000)
            .map(|i| {
                (
                    format!("k{i}-ünïcødé-\"q\"\n"),
                    format!("värde {i} ✓").into(),
                )
            })
            .collect();
        value["spec"]["forProvider"]["metadata"] = long.into();
        value["spec"]["forProvider"]["keyAlias"] = "日本語のキー".into();
        let (packed, _) = round_trip::<LiteLLMVirtualKey>(&value);
        let bytes = packed_body(&packed);
        let text = decompress(bytes).unwrap();
        assert!(text.len() > 64 * 1024, "{} bytes of JSON", text.len());
    }

    #[test]
    fn an_object_too_deep_for_serde_keeps_its_identity_and_says_why() {
        let parsed: Tolerant<LiteLLMTeam> = parse(&team(&nested(300))).unwrap();
        let Tolerant::Unreadable(unreadable) = parsed else {
            panic!("unreadable")
        };
        assert_eq!(unreadable.metadata.name.as_deref(), Some("deep"));
        assert_eq!(unreadable.metadata.namespace.as_deref(), Some("t"));
        assert_eq!(unreadable.metadata.uid.as_deref(), Some("u1"));
        assert_eq!(unreadable.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(unreadable.metadata.finalizers, Some(vec!["f".to_string()]));
        assert_eq!(unreadable.instance_ref.unwrap().name, "proxy");
        assert!(
            unreadable.error.contains("recursion limit"),
            "{}",
            unreadable.error
        );
    }

    #[test]
    fn one_unreadable_item_does_not_fail_a_list() {
        let list = format!(
            r#"{{"apiVersion":"v1","kind":"List","metadata":{{"resourceVersion":"9"}},
            "items":[{},{}]}}"#,
            team(&nested(300)),
            team(&nested(2)).replace(r#""name":"deep""#, r#""name":"fine""#)
        );
        // What kube-rs does with a list response.
        let plain = serde_json::from_str::<kube::core::ObjectList<LiteLLMTeam>>(&list);
        assert!(plain.is_err(), "kube-rs alone fails the whole list");
        let list: kube::core::ObjectList<Tolerant<LiteLLMTeam>> =
            serde_json::from_str(&list).unwrap();
        assert!(matches!(&list.items[0], Tolerant::Unreadable(_)));
        assert!(
            matches!(&list.items[1], t @ Tolerant::Ok(_) if t.read().unwrap().metadata.name.as_deref() == Some("fine"))
        );
    }

    #[test]
    fn a_watch_event_of_an_unreadable_object_arrives() {
        let line = format!(r#"{{"type":"ADDED","object":{}}}"#, team(&nested(300)));
        let plain = serde_json::from_str::<kube::core::WatchEvent<LiteLLMTeam>>(&line);
        assert!(plain.is_err());
        let event: kube::core::WatchEvent<Tolerant<LiteLLMTeam>> =
            serde_json::from_str(&line).unwrap();
        assert!(matches!(
            event,
            kube::core::WatchEvent::Added(Tolerant::Unreadable(_))
        ));
    }
}
