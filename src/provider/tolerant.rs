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
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::api::common::{Condition, InstanceRef};
use crate::provider::conditions::condition;

/// An object as read from a list or watch: the kind, or what could be read
/// of an object that could not. Two words: the caches hold one per object
/// (each in an `Arc` of its own), and an unreadable one is rare.
pub enum Tolerant<K> {
    Ok(Arc<K>),
    Unreadable(Box<Unreadable>),
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

impl<K> Clone for Tolerant<K> {
    fn clone(&self) -> Self {
        match self {
            Tolerant::Ok(object) => Tolerant::Ok(object.clone()),
            Tolerant::Unreadable(unreadable) => Tolerant::Unreadable(unreadable.clone()),
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for Tolerant<K> {
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

impl<'de, K: DeserializeOwned> Deserialize<'de> for Tolerant<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Ok(parse(raw.get()).map_err(D::Error::custom)?)
    }
}

/// One object from its JSON text: the kind, or its identity and why not.
/// Fails only when not even the identity can be read.
pub fn parse<K: DeserializeOwned>(text: &str) -> Result<Tolerant<K>, serde_json::Error> {
    match serde_json::from_str::<K>(text) {
        Ok(object) => Ok(Tolerant::Ok(Arc::new(object))),
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
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + fmt::Debug,
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
    fn meta(&self) -> &ObjectMeta {
        match self {
            Tolerant::Ok(object) => object.meta(),
            Tolerant::Unreadable(unreadable) => &unreadable.metadata,
        }
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Tolerant::Ok(object) => Arc::make_mut(object).meta_mut(),
            Tolerant::Unreadable(unreadable) => &mut unreadable.metadata,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LiteLLMTeam;

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

    #[test]
    fn a_cached_object_costs_two_words_beside_the_object() {
        assert_eq!(
            std::mem::size_of::<Tolerant<LiteLLMTeam>>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn a_readable_object_is_the_kind() {
        let parsed: Tolerant<LiteLLMTeam> = parse(&team(&nested(3))).unwrap();
        let Tolerant::Ok(team) = parsed else {
            panic!("readable")
        };
        assert_eq!(team.metadata.name.as_deref(), Some("deep"));
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
            matches!(&list.items[1], Tolerant::Ok(t) if t.metadata.name.as_deref() == Some("fine"))
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
