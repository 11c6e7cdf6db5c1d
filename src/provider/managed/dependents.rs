//! Deletion order: an object is deleted only after the resources that use
//! it. A `LiteLLMInstance` waits for every managed resource that references
//! it (they need its proxy to delete their LiteLLM objects), a team, budget
//! or user for the keys that join it (LiteLLM deletes a team's keys with the
//! team, and a user's with the user, which would take keys from resources
//! that still hold them), a
//! credential for the models that use it (LiteLLM deletes a credential in
//! use without a word, and the model then fails), an MCP server for the
//! teams and keys whose `objectPermission` names it (LiteLLM deletes it
//! under them without a word), an organization for the teams that belong
//! to it (LiteLLM deletes an organization's teams, and their keys, with
//! it).
//!
//! Only resources that can act on the object count: those in namespaces the
//! instance admits, and for teams, budgets and credentials those in their
//! own namespace (a key may only join a team or budget of its own
//! namespace, a model only use a credential of its own). A tenant cannot
//! hold up another's deletion by pointing at its objects.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::ResourceExt;

use crate::api::instance::LiteLLMInstance;

use crate::provider::managed::contract::ManagedKind;
use crate::provider::managed::resolve::admits;
use crate::provider::watch::cache::{Cached, Kube};
use crate::provider::watch::joins::{JoinFields, Joins};
use crate::provider::watch::tolerant::Tolerant;

/// How often a deletion that waits for its dependents looks again.
pub const RECHECK: std::time::Duration = std::time::Duration::from_secs(3);

/// The resources a deletion waits for, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependents {
    /// `namespace/name` of each dependent, by kind.
    by_kind: BTreeMap<String, Vec<(String, String)>>,
}

/// How many dependents a message names one by one.
const NAMED: usize = 10;

impl Dependents {
    pub fn is_empty(&self) -> bool {
        self.by_kind.values().all(Vec::is_empty)
    }

    pub fn len(&self) -> usize {
        self.by_kind.values().map(Vec::len).sum()
    }

    /// Adds every dependent of `other` (a server's deletion waits for teams
    /// and keys alike).
    pub fn extend(&mut self, other: Dependents) {
        for (kind, items) in other.by_kind {
            self.by_kind.entry(kind).or_default().extend(items);
        }
    }

    fn add(&mut self, kind: impl Into<String>, namespace: String, name: String) {
        self.by_kind
            .entry(kind.into())
            .or_default()
            .push((namespace, name));
    }

    /// Counts by kind, then (up to ten) the names of the dependents in
    /// `visible`, the namespace of the object whose status shows the text:
    /// resources of other namespaces are counted, never named.
    pub fn describe(&self, visible: &str) -> String {
        let counts: Vec<String> = self
            .by_kind
            .iter()
            .filter(|(_, items)| !items.is_empty())
            .map(|(kind, items)| format!("{} {kind}", items.len()))
            .collect();
        let mut named: Vec<String> = self
            .by_kind
            .iter()
            .flat_map(|(kind, items)| {
                items
                    .iter()
                    .filter(|(namespace, _)| namespace == visible)
                    .map(move |(_, name)| format!("{kind} {name}"))
            })
            .collect();
        named.sort();
        let elsewhere = self.len() - named.len();
        let mut text = format!(
            "waiting for {} managed resource{} that use{} it to be deleted first: {}",
            self.len(),
            if self.len() == 1 { "" } else { "s" },
            if self.len() == 1 { "s" } else { "" },
            counts.join(", ")
        );
        if !named.is_empty() {
            let more = named.len().saturating_sub(NAMED);
            named.truncate(NAMED);
            text.push_str(&format!(" ({}", named.join(", ")));
            if more > 0 {
                text.push_str(&format!(" and {more} more"));
            }
            if elsewhere > 0 {
                text.push_str(&format!("; {elsewhere} in other namespaces"));
            }
            text.push(')');
        } else if elsewhere > 0 {
            text.push_str(" (in other namespaces)");
        }
        text
    }
}

/// The resources of every kind of the registry whose
/// [`ManagedKind::JOINS`] lists `what`, in the namespace of `mr` (whose
/// external name is `id`), that join it as `what`: what the deletion of an
/// object of a kind [`ManagedKind::JOINED_AS`] `what` waits for. A new kind
/// that joins budgets (say) is waited for by declaring it in its `JOINS`,
/// without a line in the budget's kind.
pub async fn joining_any<K: ManagedKind>(
    kube: &Kube,
    mr: &K,
    id: &str,
    what: Joins,
) -> Result<Dependents, kube::Error> {
    let mut found = Dependents::default();
    macro_rules! each_kind {
        ($($kind:ident => $field:ident),* $(,)?) => {
            $(
                if <crate::api::$kind as ManagedKind>::JOINS.contains(&what) {
                    found.extend(joining::<crate::api::$kind, K>(kube, mr, id, what).await?);
                }
            )*
        };
    }
    crate::managed_kinds!(each_kind);
    Ok(found)
}

/// The resources of kind `U` in the namespace of `mr` (whose external name
/// is `id`) that join it as `what`.
///
/// From the watch cache while it still shows some (the deletion waits,
/// which a cache a moment behind cannot make wrong, and a team waiting for
/// a thousand keys does not list them all from the API server every few
/// seconds); that none are left, which lets the deletion go on, is
/// confirmed by the API server, since a resource created a moment ago may
/// not be in the cache yet. Where `U`'s CRD can select on the join's
/// fields ([`ManagedKind::join_fields`]), the API server is asked for the
/// resources that name this one only (two small lists: by reference and
/// by id); otherwise, or where the API server cannot select on them, for
/// every `U` of the namespace, shared with whoever asks at the same time.
pub async fn joining<U, K>(
    kube: &Kube,
    mr: &K,
    id: &str,
    what: Joins,
) -> Result<Dependents, kube::Error>
where
    U: ManagedKind + Cached,
    K: ManagedKind,
{
    let namespace = mr.namespace().unwrap_or_default();
    let name = mr.name_any();
    let find = |users: &mut dyn Iterator<Item = &Tolerant<U>>| {
        let mut dependents = Dependents::default();
        for user in users {
            // An unreadable key says nothing about what it joins; it
            // reports itself, and nothing is done in LiteLLM for it.
            let Some(facts) = user.facts() else { continue };
            if facts.joins.iter().any(|join| join.names(what, &name, id)) {
                dependents.add(U::kind(&()), namespace.clone(), user.name_any());
            }
        }
        dependents
    };
    if let Some(cached) = kube.cached_in::<U>(&namespace) {
        let dependents = find(&mut cached.iter().map(|user| &**user));
        if !dependents.is_empty() {
            return Ok(dependents);
        }
    }
    if let Some(fields) = U::join_fields(what) {
        match named_by::<U>(kube, &namespace, fields, &name, id).await {
            Ok(users) => return Ok(find(&mut users.iter())),
            // An API server before selectable fields (Kubernetes 1.31), or
            // a CRD installed without them: the list of the namespace does.
            Err(kube::Error::Api(status)) if status.code == 400 => {
                tracing::debug!(kind = %U::kind(&()), %status, "cannot select by field; listing the namespace");
            }
            Err(err) => return Err(err),
        }
    }
    // Shared with the other deletions confirming the same at once: a
    // thousand teams going together cost two lists of the namespace's keys
    // at a time, not one each.
    let users = kube.list_live::<U>(&namespace).await?;
    Ok(find(&mut users.iter()))
}

/// The resources of kind `U` in `namespace` whose `fields` name `name` or
/// `id`, from the API server: each once, though one naming both is in
/// both lists.
async fn named_by<U: ManagedKind + Cached>(
    kube: &Kube,
    namespace: &str,
    fields: JoinFields,
    name: &str,
    id: &str,
) -> Result<Vec<Tolerant<U>>, kube::Error> {
    let mut users = kube
        .list_live_where::<U>(namespace, fields.reference, name)
        .await?;
    if !id.is_empty() {
        let by_id = kube.list_live_where::<U>(namespace, fields.id, id).await?;
        let named: std::collections::BTreeSet<String> =
            users.iter().map(|user| user.name_any()).collect();
        users.extend(
            by_id
                .into_iter()
                .filter(|user| !named.contains(&user.name_any())),
        );
    }
    Ok(users)
}

/// The managed resources of every kind that reference `instance` and may
/// use it (its own namespace and those its `spec.allowedNamespaces`
/// admits), over all namespaces or only `scope`.
pub async fn of_instance(
    client: &kube::Client,
    instance: &LiteLLMInstance,
    scope: Option<&str>,
) -> Result<Dependents, kube::Error> {
    let mut found = Vec::new();
    macro_rules! every_kind {
        ($($kind:ident => $field:ident),* $(,)?) => {
            $(referencing::<crate::api::$kind>(client, instance, scope, &mut found).await?;)*
        };
    }
    crate::managed_kinds!(every_kind);
    let home = instance.namespace().unwrap_or_default();
    let mut labels: BTreeMap<String, Option<BTreeMap<String, String>>> = BTreeMap::new();
    let mut dependents = Dependents::default();
    for (kind, namespace, name) in found {
        if namespace != home {
            if !labels.contains_key(&namespace) {
                let ns = Api::<Namespace>::all(client.clone())
                    .get_opt(&namespace)
                    .await?
                    .map(|ns| ns.labels().clone());
                labels.insert(namespace.clone(), ns);
            }
            let admitted = labels[&namespace].as_ref().is_some_and(|labels| {
                admits(
                    instance.spec.allowed_namespaces.as_ref(),
                    &home,
                    &namespace,
                    labels,
                )
            });
            if !admitted {
                continue;
            }
        }
        dependents.add(kind, namespace, name);
    }
    Ok(dependents)
}

async fn referencing<K: ManagedKind>(
    client: &kube::Client,
    instance: &LiteLLMInstance,
    scope: Option<&str>,
    found: &mut Vec<(String, String, String)>,
) -> Result<(), kube::Error> {
    let home = instance.namespace().unwrap_or_default();
    let target = instance.name_any();
    let api: Api<Tolerant<K>> = match scope {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    };
    for mr in api.list(&ListParams::default()).await? {
        let namespace = mr.namespace().unwrap_or_default();
        // An unreadable resource counts by the reference that could be read.
        let Some(reference) = mr.instance_ref() else {
            continue;
        };
        let instance_namespace = reference.namespace.as_deref().unwrap_or(&namespace);
        if instance_namespace == home && reference.name == target {
            found.push((K::kind(&()).into_owned(), namespace, mr.name_any()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_counts_by_kind_and_names_only_the_visible_namespace() {
        let mut dependents = Dependents::default();
        assert!(dependents.is_empty());
        dependents.add("LiteLLMVirtualKey", "platform".into(), "k1".into());
        dependents.add("LiteLLMVirtualKey", "tenant-a".into(), "secret-name".into());
        dependents.add("LiteLLMTeam", "platform".into(), "web".into());
        let text = dependents.describe("platform");
        assert_eq!(
            text,
            "waiting for 3 managed resources that use it to be deleted first: 1 LiteLLMTeam, \
             2 LiteLLMVirtualKey (LiteLLMTeam web, LiteLLMVirtualKey k1; 1 in other namespaces)"
        );
        assert!(!text.contains("tenant-a") && !text.contains("secret-name"));
        let text = dependents.describe("elsewhere");
        assert!(text.ends_with("(in other namespaces)"), "{text}");
        assert!(!text.contains("k1"));
    }

    #[test]
    fn one_dependent_is_named_in_the_singular_and_many_are_capped() {
        let mut one = Dependents::default();
        one.add("LiteLLMVirtualKey", "ns".into(), "k".into());
        assert_eq!(
            one.describe("ns"),
            "waiting for 1 managed resource that uses it to be deleted first: \
             1 LiteLLMVirtualKey (LiteLLMVirtualKey k)"
        );
        let mut many = Dependents::default();
        for i in 0..15 {
            many.add("LiteLLMVirtualKey", "ns".into(), format!("k{i:02}"));
        }
        let text = many.describe("ns");
        assert!(text.contains("k09 and 5 more)"), "{text}");
        assert!(!text.contains("k10"), "{text}");
    }
}
