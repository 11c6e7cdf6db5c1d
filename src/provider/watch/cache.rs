//! Shared watch caches: what a reconciliation reads of Kubernetes besides
//! its own object (its `LiteLLMInstance`, the master-key Secret, referenced
//! teams, budgets, credentials and MCP servers, namespace labels for admission, its
//! connection Secret), so the steady state reads nothing from the API
//! server.
//!
//! controller-runtime (and with it every crossplane-runtime provider) reads
//! through informer caches the same way. One watch per kind feeds each
//! cache; every cache strips `managedFields` (often most of an object's
//! size) before it stores an object.
//!
//! One rule keeps a cache that lags behind from doing harm: a cached read
//! may only conclude that nothing needs doing. Whatever would lead to a
//! write (a connection Secret that looks missing or different, a key that
//! looks lost) is read again from the API server first, so staleness costs
//! a read, never a wrong write.
//!
//! Secrets are the exception to "cache the kind": the provider needs few of
//! a cluster's Secrets, and should not hold every tenant's credentials in
//! memory. The Secret watch keeps only the connection Secrets the provider
//! wrote (its `managed-by` label) and the Secrets a reconciliation asked
//! for (a master key, a CA, a referenced credential): the first ask is a
//! read from the API server and registers interest; from then on the watch
//! keeps that Secret current, its deletion included. Of a connection Secret
//! nobody asked for it keeps only a [`Digest`].
//!
//! The managed resources themselves are cached packed
//! ([`crate::provider::watch::tolerant::Packed`]): their JSON beside the few facts that the
//! scans over a whole kind read.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher, Event};
use kube::runtime::WatchStreamExt;
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::UnboundedSender;
use tokio_stream::StreamExt;

use crate::provider::watch::echo::Echoes;

use crate::api::instance::LiteLLMInstance;
use crate::api::key::LiteLLMVirtualKey;

use crate::provider::watch::tolerant::{Facts, Tolerant};

/// The label on every object the provider makes (connection Secrets, a
/// provisioned proxy's objects), so its watches select only these.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const MANAGED_BY: &str = "provider-litellm";

/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What a cache keeps of an object's metadata: everything but
/// `managedFields` and `kubectl apply`'s copy of the object, which nothing
/// here reads.
pub fn strip(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// What a cache keeps of a managed resource's metadata: [`strip`], and
/// neither its labels nor its owner references (a composite's, under
/// Crossplane), which no reconciliation reads. A map holding a single
/// label costs a 544-byte node; for 20,000 resources that is 11 MB.
pub fn strip_managed(meta: &mut ObjectMeta) {
    strip(meta);
    meta.labels = None;
    meta.owner_references = None;
}

/// A resourceVersion as a number, to order a read against watch events.
/// The API server's are etcd revisions; anything else counts as newest.
pub fn version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(u64::MAX)
}

/// The scope the controllers watch: every namespace, or one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Namespace(String),
}

impl Scope {
    pub fn of(namespace: Option<&str>) -> Self {
        namespace.map_or(Scope::All, |ns| Scope::Namespace(ns.to_owned()))
    }

    fn covers(&self, namespace: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Namespace(ns) => ns == namespace,
        }
    }

    pub fn api<K>(&self, client: &kube::Client) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        match self {
            Scope::All => Api::all(client.clone()),
            Scope::Namespace(ns) => Api::namespaced(client.clone(), ns),
        }
    }
}

/// A reflector's store and whether it has listed everything once.
///
/// Readiness is its own flag, set by the reflector's stream when it passes
/// the first `InitDone` (the store has applied it by then), not
/// `Store::wait_until_ready`: kube-runtime's `DelayedInit` behind that
/// keeps a single waker, so of two tasks waiting (a controller's runner,
/// which waits for its store before it starts, and `/readyz`) or of a wait
/// and a check with another waker, only the last to poll is woken. The
/// other waits until something else wakes its task, which in an idle
/// namespace is never: a controller that does not start, or a provider
/// that never says it is ready.
#[derive(Clone)]
pub struct Reflected<K: reflector::Lookup + Clone + 'static>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    pub store: Store<K>,
    pub synced: Synced,
}

impl<K: reflector::Lookup + Clone + 'static> Reflected<K>
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    /// A store no watch fills (reads go to the API server).
    pub fn unsynced(store: Store<K>) -> Self {
        Self {
            store,
            synced: Synced::default(),
        }
    }
}

/// Set once a reflector has listed everything; any number of tasks may
/// wait for it (see [`Reflected`]).
#[derive(Clone, Debug)]
pub struct Synced(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Synced {
    fn default() -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl Synced {
    pub fn is_synced(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns once synced.
    pub async fn wait(&self) {
        let mut synced = self.0.subscribe();
        // The sender lives as long as `self`: this cannot fail.
        let _ = synced.wait_for(|synced| *synced).await;
    }

    pub(crate) fn set(&self) {
        self.0
            .send_if_modified(|synced| !std::mem::replace(synced, true));
    }

    /// Passes a reflector's events on, setting this at the first
    /// `InitDone`.
    fn on_init_done<K, E>(
        &self,
    ) -> impl FnMut(Result<watcher::Event<K>, E>) -> Result<watcher::Event<K>, E> {
        let synced = self.clone();
        move |event| {
            if matches!(event, Ok(watcher::Event::InitDone)) {
                synced.set();
            }
            event
        }
    }
}

/// Declares [`Stores`] and each kind's [`Cached`] from the registry.
macro_rules! stores {
    ($($kind:ident => $field:ident),* $(,)?) => {
        /// The watch caches of the kinds, each filled by its one watch: the
        /// instances' and one for each kind of the registry
        /// ([`managed_kinds!`](crate::managed_kinds)), which reconciliations
        /// read instead of the API server (a key its team, a deletion the
        /// resources that join its object).
        pub struct Stores {
            pub instances: Reflected<Tolerant<LiteLLMInstance>>,
            $(pub $field: Reflected<Tolerant<crate::api::$kind>>,)*
        }

        impl Stores {
            /// Whether each cache has listed everything, one flag a kind.
            pub fn synced(&self) -> Vec<&Synced> {
                vec![&self.instances.synced, $(&self.$field.synced),*]
            }

            /// The instances' store, and each kind's from `kinds` (a
            /// watch's, or one filled by hand in tests).
            pub fn build(
                instances: Reflected<Tolerant<LiteLLMInstance>>,
                mut kinds: impl Reflector,
            ) -> Self {
                Self {
                    instances,
                    $($field: kinds.reflected::<crate::api::$kind>(),)*
                }
            }
        }

        $(impl Cached for crate::api::$kind {
            fn store(cache: &Cache) -> &Reflected<Tolerant<Self>> {
                &cache.stores.$field
            }
        })*
    };
}
crate::managed_kinds!(stores);

/// What gives each kind's store to [`Stores::build`].
pub trait Reflector {
    fn reflected<K: Cached + Clone>(&mut self) -> Reflected<Tolerant<K>>;
}

/// The caches of one set of controllers. Each is read only once its watch
/// has listed everything; before that (the first moments after a start),
/// reads go to the API server.
pub struct Cache {
    scope: Scope,
    stores: Stores,
    /// Only with [`Scope::All`]: the labels `spec.allowedNamespaces`
    /// selects on. A provider watching one namespace reads them when asked.
    namespaces: Option<Reflected<PartialObjectMeta<Namespace>>>,
    /// Whether the Namespace watch has been needed yet (see
    /// [`crate::provider::watch::wanted`]).
    namespaces_wanted: crate::provider::watch::wanted::Wanted,
    secrets: Secrets,
    lists: SharedLists,
}

/// One live list of a kind in a namespace: when it was sent, and what it
/// found.
type Listed = Option<(std::time::Instant, Arc<dyn std::any::Any + Send + Sync>)>;

/// Live lists shared by the reconciliations that need one at the same
/// time ([`Kube::list_live`]), by kind and namespace. A deletion that the
/// cache shows nobody waiting for confirms it with a list from the API
/// server; when a thousand teams go at once, each of them listing every key
/// of the namespace would cost the API server a thousand lists of a
/// thousand keys and the provider the memory of `concurrency` of them at
/// once.
#[derive(Default)]
struct SharedLists {
    slots: Mutex<HashMap<(&'static str, String), Arc<tokio::sync::Mutex<Listed>>>>,
}

impl SharedLists {
    fn slots(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(&'static str, String), Arc<tokio::sync::Mutex<Listed>>>>
    {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What a list of kind `K` in `namespace` sent after `asked` found:
    /// the list of another reconciliation if one was sent after `asked`
    /// (it holds whatever existed when this one asked), else a list of its
    /// own. While one list is under way, those who ask wait for it and the
    /// first of them sends the next, which all the others share: at most
    /// two lists of a kind and namespace are sent for any number of
    /// reconciliations asking at once. A result is kept only while someone
    /// waits for the slot.
    async fn list<K: Cached + Send + Sync>(
        &self,
        client: &kube::Client,
        namespace: &str,
    ) -> Result<Arc<Vec<Tolerant<K>>>, kube::Error> {
        let asked = std::time::Instant::now();
        let key = (std::any::type_name::<K>(), namespace.to_owned());
        let slot = self.slots().entry(key.clone()).or_default().clone();
        let slot = Leaving {
            lists: self,
            key,
            slot,
        };
        let mut listed = slot.slot.lock().await;
        let shared = listed
            .as_ref()
            .filter(|(sent, _)| *sent >= asked)
            .and_then(|(_, list)| list.clone().downcast::<Vec<Tolerant<K>>>().ok());
        if let Some(list) = shared {
            return Ok(list);
        }
        let sent = std::time::Instant::now();
        let list = list_now::<K>(client, namespace).await?;
        *listed = Some((sent, list.clone()));
        Ok(list)
    }
}

/// Every object of kind `K` in `namespace`, read from the API server now.
async fn list_now<K: Cached + Send + Sync>(
    client: &kube::Client,
    namespace: &str,
) -> Result<Arc<Vec<Tolerant<K>>>, kube::Error> {
    Ok(Arc::new(
        list_matching::<K>(client, namespace, &kube::api::ListParams::default()).await?,
    ))
}

/// The objects of kind `K` in `namespace` that `params` select, read from
/// the API server now.
async fn list_matching<K: Cached + Send + Sync>(
    client: &kube::Client,
    namespace: &str,
    params: &kube::api::ListParams,
) -> Result<Vec<Tolerant<K>>, kube::Error> {
    let api: Api<Tolerant<K>> = Api::namespaced(client.clone(), namespace);
    Ok(api.list(params).await?.items)
}

/// A reconciliation's hold on a slot of [`SharedLists`]: the last one to
/// let go (done, or dropped midway) drops the slot and the list it holds;
/// whoever asks later lists again (it must: it asked after that list).
struct Leaving<'a> {
    lists: &'a SharedLists,
    key: (&'static str, String),
    slot: Arc<tokio::sync::Mutex<Listed>>,
}

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        let mut slots = self.lists.slots();
        // The map's reference and this one: nobody else holds or waits.
        if Arc::strong_count(&self.slot) == 2 {
            slots.remove(&self.key);
        }
    }
}

/// `value` as the value of a field selector: backslash, `,` and `=`
/// escaped with a backslash, as the API server's `fields.EscapeValue` does, so an
/// id holding them selects itself and nothing else.
fn escape_field_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

impl Cache {
    pub fn new(
        scope: Scope,
        stores: Stores,
        namespaces: Option<Reflected<PartialObjectMeta<Namespace>>>,
        secrets: Secrets,
    ) -> Self {
        Self {
            scope,
            stores,
            namespaces,
            namespaces_wanted: Default::default(),
            secrets,
            lists: SharedLists::default(),
        }
    }

    /// Turned on by the first read of a namespace's labels: the Namespace
    /// watch starts then.
    pub fn namespaces_wanted(&self) -> &crate::provider::watch::wanted::Wanted {
        &self.namespaces_wanted
    }

    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }
}

/// The kinds a reconciliation reads besides its own, each from its cache.
pub trait Cached:
    'static
    + Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + crate::provider::watch::tolerant::Packable
    + std::fmt::Debug
{
    fn store(cache: &Cache) -> &Reflected<Tolerant<Self>>;
}

/// Instances are few and every reconciliation reads its own: they are
/// cached as parsed.
impl crate::provider::watch::tolerant::Packable for LiteLLMInstance {
    const PACKED: bool = false;

    fn strip(meta: &mut ObjectMeta) {
        strip(meta)
    }

    fn facts(&self) -> crate::provider::watch::tolerant::Facts {
        crate::provider::watch::tolerant::Facts {
            ready: self.status.as_ref().is_some_and(|status| status.ready),
            ..Default::default()
        }
    }
}

impl Cached for LiteLLMInstance {
    fn store(cache: &Cache) -> &Reflected<Tolerant<Self>> {
        &cache.stores.instances
    }
}

/// How a reconciliation reads Kubernetes: through a [`Cache`] where one
/// covers the namespace and has listed everything, else from the API
/// server. Writes always go through [`Kube::client`].
#[derive(Clone)]
pub struct Kube {
    client: kube::Client,
    cache: Option<Arc<Cache>>,
}

impl Kube {
    /// Every read from the API server.
    pub fn live(client: kube::Client) -> Self {
        Self {
            client,
            cache: None,
        }
    }

    pub fn cached(client: kube::Client, cache: Arc<Cache>) -> Self {
        Self {
            client,
            cache: Some(cache),
        }
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    fn covering(&self, namespace: &str) -> Option<&Cache> {
        self.cache
            .as_deref()
            .filter(|cache| cache.scope.covers(namespace))
    }

    async fn object<K: Cached>(
        &self,
        reflected: Option<&Reflected<Tolerant<K>>>,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<K>>, kube::Error> {
        if let Some(store) = reflected
            .filter(|reflected| reflected.synced.is_synced())
            .map(|reflected| &reflected.store)
        {
            let key = ObjectRef::<Tolerant<K>>::new(name).within(namespace);
            // Unreadable, it is reported on itself; to everyone else it
            // is not there.
            return Ok(store.get(&key).and_then(|object| object.read().ok()));
        }
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        Ok(api.get_opt(name).await?.map(Arc::new))
    }

    /// Whether a reconciliation of the resource `name` of kind `K` in
    /// `namespace`, given it at resourceVersion `version`, with its
    /// instance in `instance_namespace`, read everything it read of
    /// Kubernetes from synced caches, whose changes [`crate::provider::watch::changes`]
    /// counts, and was given the resource as its cache holds it now: what
    /// a poll needs to skip its reconciliation while nothing is counted
    /// (see [`crate::provider::watch::polls`]). Not so where a namespace is outside the
    /// caches' scope (read live: no change to it would be counted), a
    /// cache has not listed yet, or the resource changed after it was
    /// handed to the reconciliation.
    pub fn reads_counted<K: Cached>(
        &self,
        namespace: &str,
        name: &str,
        version: Option<&str>,
        instance_namespace: &str,
    ) -> bool {
        let (Some(cache), Some(_)) = (self.covering(namespace), self.covering(instance_namespace))
        else {
            return false;
        };
        let synced = cache.stores.synced().iter().all(|synced| synced.is_synced())
            && cache.secrets.synced()
            // Admission across namespaces reads the resource's namespace.
            && (namespace == instance_namespace
                || cache
                    .namespaces
                    .as_ref()
                    .is_some_and(|namespaces| namespaces.synced.is_synced()));
        let key = ObjectRef::<Tolerant<K>>::new(name).within(namespace);
        synced
            && K::store(cache)
                .store
                .get(&key)
                .is_some_and(|held| held.meta().resource_version.as_deref() == version)
    }

    /// What `read` makes of the [`Facts`] of the object `namespace/name`
    /// of kind `K` (`None` when the cache has no readable such object),
    /// from the cache; `None` where no synced cache covers the namespace.
    /// For reads that need only those facts, such as whether a referenced
    /// resource is Ready and its id: nothing is parsed.
    pub fn cached_facts<K: Cached, T>(
        &self,
        namespace: &str,
        name: &str,
        read: impl FnOnce(Option<&Facts>) -> T,
    ) -> Option<T> {
        let reflected = self
            .covering(namespace)
            .map(K::store)
            .filter(|reflected| reflected.synced.is_synced())?;
        let key = ObjectRef::<Tolerant<K>>::new(name).within(namespace);
        let object = reflected.store.get(&key);
        Some(read(object.as_deref().and_then(Tolerant::facts)))
    }

    /// Every object of kind `K` in `namespace` as the cache has it, or
    /// `None` where no synced cache covers the namespace. A list the cache
    /// gives can only tell that something is there: whether an object just
    /// created is there too only the API server can.
    pub fn cached_in<K: Cached>(&self, namespace: &str) -> Option<Vec<Arc<Tolerant<K>>>> {
        let store = self
            .covering(namespace)
            .map(K::store)
            .filter(|reflected| reflected.synced.is_synced())?;
        Some(
            store
                .store
                .state()
                .into_iter()
                .filter(|object| object.meta().namespace.as_deref() == Some(namespace))
                .collect(),
        )
    }

    /// Every object of kind `K` in `namespace` from the API server, read
    /// after this call began: with a cache, the list is shared with the
    /// reconciliations asking for the same at the same time (see
    /// [`SharedLists::list`]).
    pub async fn list_live<K: Cached + Send + Sync>(
        &self,
        namespace: &str,
    ) -> Result<Arc<Vec<Tolerant<K>>>, kube::Error> {
        match self.cache.as_deref() {
            Some(cache) => cache.lists.list::<K>(&self.client, namespace).await,
            None => list_now::<K>(&self.client, namespace).await,
        }
    }

    /// The objects of kind `K` in `namespace` whose field `field` (one of
    /// the kind's `selectableFields`) is `value`, from the API server now:
    /// the API server filters them (from its watch cache), so the answer
    /// holds only those, where [`Kube::list_live`] holds every object of
    /// the namespace. Fails with 400 where the API server cannot select
    /// on the field (before Kubernetes 1.31, or a CRD without it).
    pub async fn list_live_where<K: Cached + Send + Sync>(
        &self,
        namespace: &str,
        field: &str,
        value: &str,
    ) -> Result<Vec<Tolerant<K>>, kube::Error> {
        let selector = format!("{field}={}", escape_field_value(value));
        list_matching::<K>(
            &self.client,
            namespace,
            &kube::api::ListParams::default().fields(&selector),
        )
        .await
    }

    /// A `LiteLLMInstance`, team, budget or credential.
    pub async fn get<K: Cached>(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<K>>, kube::Error> {
        let store = self.covering(namespace).map(K::store);
        self.object(store, namespace, name).await
    }

    /// The labels of `namespace` (empty when it does not exist).
    pub async fn namespace_labels(
        &self,
        namespace: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, kube::Error> {
        if let Some(cache) = self.cache.as_deref() {
            cache.namespaces_wanted.want();
        }
        let store = self
            .cache
            .as_deref()
            .and_then(|cache| cache.namespaces.as_ref())
            .filter(|reflected| reflected.synced.is_synced());
        if let Some(Reflected { store, .. }) = store {
            let key = ObjectRef::<PartialObjectMeta<Namespace>>::new(namespace);
            return Ok(store
                .get(&key)
                .map(|ns| ns.labels().clone())
                .unwrap_or_default());
        }
        Ok(Api::<Namespace>::all(self.client.clone())
            .get_opt(namespace)
            .await?
            .map(|ns| ns.labels().clone())
            .unwrap_or_default())
    }

    /// A Secret the resource references: from the cache once the provider
    /// has asked for it (the first ask reads it and registers interest).
    pub async fn secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Secret>>, kube::Error> {
        let secrets = self
            .covering(namespace)
            .map(|cache| &cache.secrets)
            .filter(|secrets| secrets.synced());
        if let Some(known) = secrets.and_then(|s| s.known(namespace, name)) {
            return Ok(known);
        }
        let live = self.read_secret(namespace, name).await?;
        if let Some(secrets) = secrets {
            secrets.learned(namespace, name, live.clone());
        }
        Ok(live)
    }

    /// A connection Secret the provider wrote (by its label), as the watch
    /// last saw it: `None` when there is no cache to ask or it has not
    /// listed yet; `Some(None)` when no such Secret carries the label. Only
    /// for deciding that nothing needs writing (see the module's rule).
    pub fn cached_connection_secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<Option<Arc<Digest>>> {
        let secrets = self
            .covering(namespace)
            .map(|cache| &cache.secrets)
            .filter(|secrets| secrets.synced())?;
        Some(secrets.owned(namespace, name))
    }

    /// The provider is about to write the Secret `namespace/name`, at
    /// version `before` (0: the write creates it), and the reconciliation
    /// that writes goes on with what it wrote: the watch event of that write
    /// wakes no key (see [`crate::provider::watch::echo`]). Any other change of the Secret
    /// (someone else's edit, its deletion) wakes its key as before.
    pub fn expect_secret_echo(&self, namespace: &str, name: &str, before: u64) {
        if let Some(cache) = &self.cache {
            cache.secrets.expect_echo(namespace, name, before);
        }
    }

    /// The write [`Self::expect_secret_echo`] announced answered `written`
    /// (`None`: it failed).
    pub fn settle_secret_echo(&self, namespace: &str, name: &str, written: Option<&ObjectMeta>) {
        if let Some(cache) = &self.cache {
            cache
                .secrets
                .settle_echo(namespace, name, written.map(version));
        }
    }

    /// A Secret as the API server has it now.
    pub async fn read_secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Secret>>, kube::Error> {
        let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
        Ok(api.get_opt(name).await?.map(|mut secret| {
            strip(&mut secret.metadata);
            Arc::new(secret)
        }))
    }
}

/// One cached Secret, or the knowledge that it does not exist.
struct Entry {
    kept: Kept,
    /// Of the Secret, or of its deletion: an older read does not replace it.
    version: u64,
    /// A reconciliation asked for it; else it is kept for its label only.
    wanted: bool,
    /// It carries the provider's label (a connection Secret it wrote).
    own: bool,
}

/// What an [`Entry`] holds of its Secret.
enum Kept {
    /// It does not exist (as of the entry's version).
    Gone,
    /// A Secret a reconciliation asked for, as [`compact`] keeps it.
    Whole(Arc<Secret>),
    /// A connection Secret only its label brought into the cache.
    Digest(Arc<Digest>),
}

impl Kept {
    /// `secret` as an entry keeps it: whole if it is `wanted`.
    fn of(secret: Secret, wanted: bool) -> Self {
        if wanted {
            Kept::Whole(Arc::new(compact(secret)))
        } else {
            Kept::Digest(Arc::new(Digest::of(&secret)))
        }
    }

    /// The names of the keys that own it.
    fn keys(&self) -> Vec<String> {
        match self {
            Kept::Gone => Vec::new(),
            Kept::Whole(secret) => key_owners(secret),
            Kept::Digest(digest) => digest.keys.iter().map(|k| k.to_string()).collect(),
        }
    }
}

/// What the Secret cache keeps of a connection Secret that no
/// reconciliation asked for: whose it is, and the SHA-256 of each of its
/// values. That is all a poll reads of it: whether the Secret still holds
/// what its resource would write ([`Digest::holds`]), and for a key, the
/// token of the key it holds (LiteLLM's id of a key is the SHA-256 of it);
/// whatever would lead to a write reads the Secret from the API server. A
/// fifth of the memory of its data and owners, and the provider keeps no
/// tenant's key in memory between polls.
#[derive(Debug)]
pub struct Digest {
    /// The uids of its owners.
    owners: Box<[Box<str>]>,
    /// The names of the `LiteLLMVirtualKey`s among them, whom a change of
    /// it wakes.
    keys: Box<[Box<str>]>,
    /// Each of its keys, with the SHA-256 of its value, sorted by key.
    values: Box<[(Box<str>, [u8; 32])]>,
}

fn sha256(value: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(value).into()
}

/// The names of the `LiteLLMVirtualKey`s that own `secret`.
fn key_owners(secret: &Secret) -> Vec<String> {
    secret
        .owner_references()
        .iter()
        .filter(|owner| {
            owner.kind == LiteLLMVirtualKey::kind(&())
                && owner.api_version == LiteLLMVirtualKey::api_version(&())
        })
        .map(|owner| owner.name.clone())
        .collect()
}

impl Digest {
    pub fn of(secret: &Secret) -> Self {
        // A BTreeMap: sorted by key already.
        let values = secret
            .data
            .iter()
            .flatten()
            .map(|(key, value)| (key.as_str().into(), sha256(&value.0)))
            .collect();
        Self {
            owners: secret
                .owner_references()
                .iter()
                .map(|owner| owner.uid.as_str().into())
                .collect(),
            keys: key_owners(secret).into_iter().map(Into::into).collect(),
            values,
        }
    }

    /// Whether an owner of the Secret has `uid`.
    pub fn owned_by(&self, uid: &str) -> bool {
        self.owners.iter().any(|owner| &**owner == uid)
    }

    /// The SHA-256 of the value of `key`, if the Secret has that key.
    pub fn sha256(&self, key: &str) -> Option<&[u8; 32]> {
        self.values
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &self.values[i].1)
    }

    /// Whether the Secret holds `value` under `key`.
    pub fn holds(&self, key: &str, value: &[u8]) -> bool {
        self.sha256(key) == Some(&sha256(value))
    }
}

/// What the Secret cache keeps of a Secret a reconciliation asked for:
/// what reconciliations read of it (its data and owners) and its name. Its
/// labels, annotations and the rest of its metadata are not kept: whether
/// it is the provider's own and its version are noted beside it
/// ([`Entry`]).
fn compact(secret: Secret) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: secret.metadata.name,
            namespace: secret.metadata.namespace,
            owner_references: secret.metadata.owner_references,
            ..ObjectMeta::default()
        },
        data: secret.data,
        ..Secret::default()
    }
}

/// The Secret cache (see the module): the provider's own connection Secrets
/// and the Secrets asked for, kept current by one watch.
#[derive(Clone, Default)]
pub struct Secrets {
    inner: Arc<SecretsInner>,
}

#[derive(Default)]
struct SecretsInner {
    entries: RwLock<HashMap<(String, String), Entry>>,
    /// Set once the first list is complete.
    synced: std::sync::atomic::AtomicBool,
    /// Keys whose connection Secret changed or went, to reconcile them.
    wake: Mutex<Option<UnboundedSender<ObjectRef<Tolerant<LiteLLMVirtualKey>>>>>,
    /// The keys seen during a relist, to find what went meanwhile.
    relisted: Mutex<HashSet<(String, String)>>,
    /// Events of the provider's own writes (see [`Kube::expect_secret_echo`]).
    echoes: Echoes<(String, String)>,
}

fn is_own(secret: &Secret) -> bool {
    secret
        .labels()
        .get(MANAGED_BY_LABEL)
        .is_some_and(|v| v == MANAGED_BY)
}

fn key_of(secret: &Secret) -> (String, String) {
    (secret.namespace().unwrap_or_default(), secret.name_any())
}

impl Secrets {
    /// Sends the keys owning a connection Secret that changed or went to
    /// `wake`.
    pub fn wake_keys(&self, wake: UnboundedSender<ObjectRef<Tolerant<LiteLLMVirtualKey>>>) {
        *self.inner.wake.lock().unwrap_or_else(|p| p.into_inner()) = Some(wake);
    }

    fn synced(&self) -> bool {
        self.inner.synced.load(std::sync::atomic::Ordering::Acquire)
    }

    fn entries(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<(String, String), Entry>> {
        self.inner
            .entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// What is known of a wanted Secret: `None` when nobody asked yet.
    fn known(&self, namespace: &str, name: &str) -> Option<Option<Arc<Secret>>> {
        let entries = self.inner.entries.read().unwrap_or_else(|p| p.into_inner());
        let entry = entries.get(&(namespace.to_owned(), name.to_owned()))?;
        match &entry.kept {
            _ if !entry.wanted => None,
            Kept::Whole(secret) => Some(Some(secret.clone())),
            Kept::Gone => Some(None),
            // Wanted after the watch kept only this: not known yet.
            Kept::Digest(_) => None,
        }
    }

    /// The digest of a connection Secret the provider wrote.
    fn owned(&self, namespace: &str, name: &str) -> Option<Arc<Digest>> {
        let entries = self.inner.entries.read().unwrap_or_else(|p| p.into_inner());
        let entry = entries
            .get(&(namespace.to_owned(), name.to_owned()))
            .filter(|entry| entry.own)?;
        match &entry.kept {
            Kept::Gone => None,
            Kept::Whole(secret) => Some(Arc::new(Digest::of(secret))),
            Kept::Digest(digest) => Some(digest.clone()),
        }
    }

    /// Registers interest in a Secret just read from the API server; a
    /// newer state the watch delivered meanwhile wins.
    fn learned(&self, namespace: &str, name: &str, secret: Option<Arc<Secret>>) {
        let version = secret.as_ref().map_or(0, |s| version(&s.metadata));
        let own = secret.as_deref().is_some_and(is_own);
        let mut entries = self.entries();
        let entry = entries
            .entry((namespace.to_owned(), name.to_owned()))
            .or_insert(Entry {
                kept: Kept::Gone,
                version: 0,
                wanted: true,
                own: false,
            });
        entry.wanted = true;
        if version >= entry.version {
            entry.kept = secret.map_or(Kept::Gone, |s| Kept::of(Secret::clone(&s), true));
            entry.version = version;
            entry.own = own;
        }
        // Else the watch brought a newer state meanwhile; had it kept only
        // its digest (it was not wanted then), the next ask reads again.
    }

    /// See [`Kube::expect_secret_echo`].
    fn expect_echo(&self, namespace: &str, name: &str, before: u64) {
        let id = (namespace.to_owned(), name.to_owned());
        self.inner.echoes.expect(id, before);
    }

    /// See [`Kube::settle_secret_echo`].
    fn settle_echo(&self, namespace: &str, name: &str, written: Option<u64>) {
        let id = (namespace.to_owned(), name.to_owned());
        self.inner.echoes.settle(&id, written);
    }

    /// Wakes the keys `keys` of `namespace` (they read their Secret again).
    fn wake(&self, namespace: &str, keys: Vec<String>) {
        let wake = self.inner.wake.lock().unwrap_or_else(|p| p.into_inner());
        let Some(wake) = wake.as_ref() else {
            return;
        };
        for key in keys {
            let _ = wake.send(ObjectRef::new(&key).within(namespace));
        }
    }

    /// A Secret as the watch delivers it: kept if it is the provider's own
    /// or wanted, and its key woken if it is a changed connection Secret.
    fn applied(&self, secret: Secret) {
        let key = key_of(&secret);
        let own = is_own(&secret);
        let version = version(&secret.metadata);
        let keys = key_owners(&secret);
        let echo = self.inner.echoes.is_echo(&key, version);
        let changed = {
            let mut entries = self.entries();
            match entries.get_mut(&key) {
                Some(entry) => {
                    if version < entry.version {
                        return;
                    }
                    let changed = entry.version != version;
                    if !own && !entry.wanted {
                        entries.remove(&key);
                    } else {
                        entry.kept = Kept::of(secret, entry.wanted);
                        entry.version = version;
                        entry.own = own;
                    }
                    changed
                }
                None if own => {
                    entries.insert(
                        key.clone(),
                        Entry {
                            kept: Kept::of(secret, false),
                            version,
                            wanted: false,
                            own,
                        },
                    );
                    true
                }
                None => false,
            }
        };
        if own && changed && !echo {
            self.wake(&key.0, keys);
        }
    }

    /// The Secret `key` is gone (at `version`, where a watch event says
    /// so, `event` being what it says; else as of the version last known),
    /// waking its keys if it was the provider's own.
    fn deleted(&self, key: (String, String), version: Option<u64>, event: Option<&Secret>) {
        self.inner.echoes.forget(&key);
        let (own, keys) = {
            let mut entries = self.entries();
            let Some(entry) = entries.get_mut(&key) else {
                return;
            };
            let own = entry.own;
            let keys = match event {
                Some(secret) => key_owners(secret),
                None => entry.kept.keys(),
            };
            if entry.wanted {
                entry.kept = Kept::Gone;
                entry.version = version.unwrap_or(entry.version);
                entry.own = false;
            } else {
                entries.remove(&key);
            }
            (own, keys)
        };
        if own || event.is_some_and(is_own) {
            self.wake(&key.0, keys);
        }
    }

    /// One event of the Secret watch.
    fn apply(&self, event: Event<Secret>) {
        // Counted once the cache holds it (see [`crate::provider::watch::changes`]): what
        // the event changes, before it is taken apart.
        let changes = crate::provider::watch::changes::changes();
        let relisting = self.inner.synced.load(std::sync::atomic::Ordering::Acquire);
        let changed = changes.of(&event, relisting);
        self.take(event);
        changes.count(changed);
    }

    fn take(&self, event: Event<Secret>) {
        match event {
            Event::Apply(secret) => self.applied(secret),
            Event::Delete(secret) => self.deleted(
                key_of(&secret),
                Some(version(&secret.metadata)),
                Some(&secret),
            ),
            Event::Init => self
                .inner
                .relisted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear(),
            Event::InitApply(secret) => {
                self.inner
                    .relisted
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key_of(&secret));
                self.applied(secret);
            }
            Event::InitDone => {
                let seen = std::mem::take(
                    &mut *self
                        .inner
                        .relisted
                        .lock()
                        .unwrap_or_else(|p| p.into_inner()),
                );
                // What the list no longer has went while the watch was
                // down: gone, as if its deletion had been seen.
                let gone: Vec<(String, String)> = self
                    .inner
                    .entries
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .filter(|(key, entry)| {
                        !seen.contains(*key) && !matches!(entry.kept, Kept::Gone)
                    })
                    .map(|(key, _)| key.clone())
                    .collect();
                for key in gone {
                    self.deleted(key, None, None);
                }
                self.inner
                    .synced
                    .store(true, std::sync::atomic::Ordering::Release);
            }
        }
    }

    /// Runs the Secret watch of `scope` until the stream ends.
    pub async fn watch(self, client: kube::Client, scope: Scope) {
        let api: Api<Secret> = scope.api(&client);
        let events = watcher(api, watcher::Config::default()).default_backoff();
        tokio::pin!(events);
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => self.apply(event),
                Err(err) => tracing::warn!(error = %err, "watching Secrets failed; retrying"),
            }
        }
    }
}

/// A reflector over `K` in `scope`, each object's metadata stripped by
/// `strip` ([`strip`], or [`strip_managed`] for the managed kinds): its
/// store, and the stream that fills it (to be polled by whoever needs its
/// events, or by [`drain`]).
pub fn reflect<K>(
    api: Api<K>,
    strip: fn(&mut ObjectMeta),
) -> (
    Reflected<K>,
    impl tokio_stream::Stream<Item = Result<K, watcher::Error>> + Send + 'static,
)
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store();
    let synced = Synced::default();
    let events = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(move |object: &mut K| strip(object.meta_mut()))
        .reflect(writer)
        .map({
            let mut listed = false;
            move |event| {
                if let Ok(event) = &event {
                    crate::provider::watch::changes::changes().record(event, listed);
                    listed |= matches!(event, Event::InitDone);
                }
                event
            }
        })
        .map(synced.on_init_done());
    let stream = Applied::new(events, store.clone());
    (Reflected { store, synced }, stream)
}

/// The objects a watch applied, as kube-runtime's `applied_objects` gives
/// them, except on a relist (the watch restarted: its connection dropped,
/// or the API server ended it): an object the relist brings that the store
/// does not hold as it is (created or changed while the watch was down)
/// comes once the relist is done. kube-runtime's store takes a relist's
/// objects only then, all at once, and a controller woken for an object
/// its store lacks drops the wake-up (`ObjectNotFound`); the controller's
/// event filter ([`crate::provider::runtime::controllers`]) has seen the object's state by
/// then and lets no later event of the same state through, so a resource
/// created during a watch restart would wait for its next change
/// (measured: two of 1,000 keys created at once never reconciled). The
/// first list is passed on as it comes: kube-runtime holds a controller's
/// work until its store is ready.
struct Applied<S, K: Resource<DynamicType = ()> + Clone + 'static> {
    events: std::pin::Pin<Box<S>>,
    store: Store<K>,
    listed: bool,
    /// What the relist under way brought that the store does not hold.
    held: Vec<K>,
    /// What a finished relist held, being handed on.
    releasing: std::vec::IntoIter<K>,
}

impl<S, K> Applied<S, K>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    fn new(events: S, store: Store<K>) -> Self {
        Self {
            events: Box::pin(events),
            store,
            listed: false,
            held: Vec::new(),
            releasing: Vec::new().into_iter(),
        }
    }

    /// Whether the store holds `object` at its resourceVersion.
    fn stored(&self, object: &K) -> bool {
        self.store
            .get(&ObjectRef::from_obj(object))
            .is_some_and(|held| held.resource_version() == object.resource_version())
    }
}

// Nothing in it is pinned in place: the watch is boxed, the objects are
// moved in and out by value.
impl<S, K: Resource<DynamicType = ()> + Clone + 'static> Unpin for Applied<S, K> {}

impl<S, K> tokio_stream::Stream for Applied<S, K>
where
    S: tokio_stream::Stream<Item = Result<Event<K>, watcher::Error>>,
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    type Item = Result<K, watcher::Error>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            if let Some(object) = this.releasing.next() {
                return Poll::Ready(Some(Ok(object)));
            }
            let event = match this.events.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(err))) => return Poll::Ready(Some(Err(err))),
                Poll::Ready(Some(Ok(event))) => event,
            };
            match event {
                Event::Apply(object) => return Poll::Ready(Some(Ok(object))),
                Event::InitApply(object) if !this.listed || this.stored(&object) => {
                    return Poll::Ready(Some(Ok(object)));
                }
                Event::InitApply(object) => this.held.push(object),
                // A relist that started over brings everything again.
                Event::Init => this.held.clear(),
                Event::InitDone => {
                    this.listed = true;
                    this.releasing = std::mem::take(&mut this.held).into_iter();
                }
                Event::Delete(_) => {}
            }
        }
    }
}

/// The Namespace reflector (metadata only: the labels
/// `spec.allowedNamespaces` selects on), over the whole cluster.
pub fn namespaces(
    client: &kube::Client,
) -> (
    Reflected<PartialObjectMeta<Namespace>>,
    impl tokio_stream::Stream<Item = Result<PartialObjectMeta<Namespace>, watcher::Error>>
        + Send
        + 'static,
) {
    reflect(
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        strip,
    )
}

/// Polls a reflector's stream for its store's sake, logging watch errors.
pub async fn drain<K>(
    stream: impl tokio_stream::Stream<Item = Result<K, watcher::Error>>,
    what: &str,
) {
    tokio::pin!(stream);
    while let Some(item) = stream.next().await {
        if let Err(err) = item {
            tracing::warn!(error = %err, watch = what, "watch failed; retrying");
        }
    }
}

/// The reflector caches of a set of controllers, to wait for their sync.
#[derive(Default)]
pub struct Caches {
    synced: Vec<Synced>,
}

impl fmt::Debug for Caches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caches")
            .field("count", &self.synced.len())
            .finish()
    }
}

impl Caches {
    /// Adds a controller's cache, by its [`Synced`] flag. Not by its
    /// `Store::wait_until_ready`, which the controller's runner waits on
    /// too, and which wakes only one of them (see [`Reflected`]).
    ///
    pub fn add(&mut self, synced: Synced) {
        self.synced.push(synced);
    }

    /// Adds every cache of `other`.
    pub fn extend(&mut self, other: Caches) {
        self.synced.extend(other.synced);
    }

    pub fn len(&self) -> usize {
        self.synced.len()
    }

    pub fn is_empty(&self) -> bool {
        self.synced.is_empty()
    }

    /// Returns once every cache has synced. It waits as long as one has
    /// not: a controller that ends first ends the work the health server
    /// races this against.
    pub async fn synced(self) {
        for synced in &self.synced {
            synced.wait().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::LiteLLMTeam;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use k8s_openapi::ByteString;

    fn config_map(name: &str, rv: u64) -> k8s_openapi::api::core::v1::ConfigMap {
        k8s_openapi::api::core::v1::ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.to_string()),
                ..ObjectMeta::default()
            },
            ..Default::default()
        }
    }

    /// A relist (the watch restarted) wakes the controller for an object
    /// the store lacks, or holds at another version, only once the relist
    /// is done and the store has it: kube-runtime drops a wake-up for an
    /// object its store does not hold, and nothing would wake it again.
    #[tokio::test]
    async fn a_relist_wakes_for_new_and_changed_objects_once_the_store_has_them() {
        use k8s_openapi::api::core::v1::ConfigMap;
        use tokio_stream::Stream;
        let (store, writer) = reflector::store::<ConfigMap>();
        let (events, watched) = tokio::sync::mpsc::unbounded_channel();
        let applied = Applied::new(
            tokio_stream::wrappers::UnboundedReceiverStream::new(watched).reflect(writer),
            store.clone(),
        );
        tokio::pin!(applied);
        let send = |event: Event<ConfigMap>| events.send(Ok::<_, watcher::Error>(event)).unwrap();
        // What a wake-up names, and whether the store held it as it was
        // then.
        let next = |applied: &mut std::pin::Pin<&mut Applied<_, ConfigMap>>| {
            let woken = applied
                .as_mut()
                .poll_next(&mut std::task::Context::from_waker(std::task::Waker::noop()));
            match woken {
                std::task::Poll::Ready(Some(Ok(object))) => {
                    let held = store
                        .get(&ObjectRef::from_obj(&object))
                        .is_some_and(|held| held.resource_version() == object.resource_version());
                    Some((object.name_any(), held))
                }
                std::task::Poll::Pending => None,
                other => panic!("{other:?}"),
            }
        };

        // The first list comes as it is (kube-runtime holds the work until
        // the store is ready).
        send(Event::Init);
        send(Event::InitApply(config_map("a", 1)));
        assert_eq!(next(&mut applied), Some(("a".into(), false)));
        send(Event::InitApply(config_map("b", 1)));
        send(Event::InitDone);
        assert_eq!(next(&mut applied), Some(("b".into(), false)));
        assert_eq!(next(&mut applied), None);
        send(Event::Apply(config_map("a", 2)));
        assert_eq!(next(&mut applied), Some(("a".into(), true)));

        // A relist: `b` as stored comes at once, `a` changed, `c` new and
        // `d` (gone again before the relist ended) are held.
        send(Event::Init);
        send(Event::InitApply(config_map("a", 3)));
        send(Event::InitApply(config_map("b", 1)));
        send(Event::InitApply(config_map("d", 4)));
        assert_eq!(next(&mut applied), Some(("b".into(), true)));
        assert_eq!(next(&mut applied), None);
        // The relist starts over: what it held is dropped, and comes again.
        send(Event::Init);
        send(Event::InitApply(config_map("a", 3)));
        send(Event::InitApply(config_map("b", 1)));
        send(Event::InitApply(config_map("c", 5)));
        assert_eq!(next(&mut applied), Some(("b".into(), true)));
        assert_eq!(next(&mut applied), None, "a and c wait for the store");
        send(Event::InitDone);
        assert_eq!(next(&mut applied), Some(("a".into(), true)));
        assert_eq!(next(&mut applied), Some(("c".into(), true)));
        assert_eq!(next(&mut applied), None);
        assert!(store.get(&ObjectRef::new("d").within("ns")).is_none());
        // After the relist, events come as they are.
        send(Event::Apply(config_map("c", 6)));
        assert_eq!(next(&mut applied), Some(("c".into(), true)));
    }

    /// A controller's runner waits for its store with
    /// `Store::wait_until_ready`; whoever else waits for the same cache
    /// (`/readyz`) must be woken too, and must not keep the runner from
    /// being woken. With a second `wait_until_ready` one of the two was
    /// never woken (kube-runtime's `DelayedInit` keeps one waker).
    #[tokio::test]
    async fn a_runner_and_readiness_both_wake_when_the_list_is_done() {
        let (store, writer) = reflector::store::<Tolerant<LiteLLMTeam>>();
        let synced = Synced::default();
        let (events, listed) = tokio::sync::mpsc::unbounded_channel();
        let stream = tokio_stream::wrappers::UnboundedReceiverStream::new(listed)
            .reflect(writer)
            .map(synced.on_init_done());
        let runner = {
            let store = store.clone();
            tokio::spawn(async move { store.wait_until_ready().await.is_ok() })
        };
        let ready = {
            let synced = synced.clone();
            tokio::spawn(async move { synced.wait().await })
        };
        let watch = tokio::spawn(drain(stream.applied_objects(), "test"));
        // Both wait before the list is done.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!synced.is_synced());
        events.send(Ok::<_, watcher::Error>(Event::Init)).unwrap();
        events.send(Ok(Event::InitDone)).unwrap();
        let woken = tokio::time::timeout(std::time::Duration::from_secs(5), async {
            (runner.await.unwrap(), ready.await.unwrap())
        })
        .await
        .expect("both the runner and readiness are woken");
        assert_eq!(woken, (true, ()));
        assert!(synced.is_synced());
        drop(events);
        watch.await.unwrap();
    }

    fn secret(name: &str, rv: u64, own: bool, value: &str) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                resource_version: Some(rv.to_string()),
                labels: own.then(|| [(MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned())].into()),
                owner_references: own.then(|| {
                    vec![OwnerReference {
                        api_version: LiteLLMVirtualKey::api_version(&()).into_owned(),
                        kind: LiteLLMVirtualKey::kind(&()).into_owned(),
                        name: format!("{name}-key"),
                        uid: "u".into(),
                        ..OwnerReference::default()
                    }]
                }),
                managed_fields: Some(vec![Default::default()]),
                ..ObjectMeta::default()
            },
            data: Some([("k".to_owned(), ByteString(value.as_bytes().to_vec()))].into()),
            ..Secret::default()
        }
    }

    fn value(secret: &Option<Arc<Secret>>) -> Option<String> {
        secret
            .as_ref()
            .map(|s| String::from_utf8_lossy(&s.data.as_ref().unwrap()["k"].0).into_owned())
    }

    /// The provider's own write of a connection Secret wakes no key (the
    /// reconciliation that wrote goes on with it); anyone else's change of
    /// it, before or after, does.
    #[test]
    fn the_providers_own_write_of_a_secret_wakes_nobody_and_others_do() {
        let secrets = Secrets::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        secrets.wake_keys(tx);
        secrets.apply(Event::Init);
        secrets.apply(Event::InitDone);
        // Created by the provider; its event comes before the answer.
        secrets.expect_echo("ns", "conn", 0);
        secrets.apply(Event::Apply(secret("conn", 5, true, "a")));
        secrets.settle_echo("ns", "conn", Some(5));
        assert!(rx.try_recv().is_err(), "the create's own event");
        // A tenant's edit wakes the key.
        secrets.apply(Event::Apply(secret("conn", 6, true, "tampered")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        // Patched by the provider, the answer first, a tenant's edit
        // between: the edit wakes, the patch's own event does not.
        secrets.expect_echo("ns", "conn", 6);
        secrets.settle_echo("ns", "conn", Some(8));
        secrets.apply(Event::Apply(secret("conn", 7, true, "edit")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        secrets.apply(Event::Apply(secret("conn", 8, true, "b")));
        assert!(rx.try_recv().is_err(), "the patch's own event");
        assert!(secrets.owned("ns", "conn").unwrap().holds("k", b"b"));
        // A failed write expects nothing; a deletion always wakes.
        secrets.expect_echo("ns", "conn", 8);
        secrets.settle_echo("ns", "conn", None);
        secrets.apply(Event::Apply(secret("conn", 9, true, "c")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        secrets.expect_echo("ns", "conn", 9);
        secrets.apply(Event::Delete(secret("conn", 10, true, "c")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
    }

    #[test]
    fn keeps_own_and_wanted_secrets_only_and_wakes_their_keys() {
        let secrets = Secrets::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        secrets.wake_keys(tx);
        secrets.apply(Event::Init);
        secrets.apply(Event::InitApply(secret("conn", 5, true, "a")));
        secrets.apply(Event::InitApply(secret("foreign", 6, false, "x")));
        secrets.apply(Event::InitDone);
        assert!(secrets.synced());
        // A Secret nobody asked for is not held, and not known.
        assert!(secrets.known("ns", "foreign").is_none());
        let own = secrets.owned("ns", "conn").expect("own Secret cached");
        assert!(own.holds("k", b"a") && own.owned_by("u"));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        // Asking registers interest; the watch then keeps it current.
        secrets.learned(
            "ns",
            "foreign",
            Some(Arc::new(secret("foreign", 6, false, "x"))),
        );
        secrets.apply(Event::Apply(secret("foreign", 9, false, "y")));
        assert_eq!(
            value(&secrets.known("ns", "foreign").unwrap()).as_deref(),
            Some("y")
        );
        // An older read loses against a newer watch event.
        secrets.learned(
            "ns",
            "foreign",
            Some(Arc::new(secret("foreign", 7, false, "old"))),
        );
        assert_eq!(
            value(&secrets.known("ns", "foreign").unwrap()).as_deref(),
            Some("y")
        );
        // Its deletion is known too, and a read from before it does not undo it.
        secrets.apply(Event::Delete(secret("foreign", 10, false, "y")));
        assert!(matches!(secrets.known("ns", "foreign"), Some(None)));
        secrets.learned(
            "ns",
            "foreign",
            Some(Arc::new(secret("foreign", 9, false, "y"))),
        );
        assert!(secrets.known("ns", "foreign").unwrap().is_none());
        // An unchanged own Secret wakes nobody; a changed or deleted one does.
        secrets.apply(Event::Apply(secret("conn", 5, true, "a")));
        assert!(rx.try_recv().is_err());
        secrets.apply(Event::Apply(secret("conn", 11, true, "b")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        secrets.apply(Event::Delete(secret("conn", 12, true, "b")));
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        assert!(secrets.owned("ns", "conn").is_none());
    }

    #[test]
    fn an_own_secret_nobody_asked_for_is_kept_as_a_digest_of_its_values() {
        let secrets = Secrets::default();
        secrets.apply(Event::Init);
        let mut full = secret("conn", 5, true, "sk-a");
        full.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
        secrets.apply(Event::InitApply(full));
        secrets.apply(Event::InitDone);
        let digest = secrets.owned("ns", "conn").expect("own Secret cached");
        assert!(digest.holds("k", b"sk-a"));
        assert!(!digest.holds("k", b"sk-b") && !digest.holds("other", b"sk-a"));
        assert_eq!(
            digest
                .sha256("k")
                .map(|h| crate::litellm::token_of_sha256(h)),
            Some(crate::litellm::token_of(&crate::litellm::Secret::new(
                "sk-a"
            )))
        );
        assert!(digest.sha256("absent").is_none());
        assert!(digest.owned_by("u") && !digest.owned_by("someone else"));
        assert_eq!(&*digest.keys, [Box::<str>::from("conn-key")]);
        // Nothing of the value is kept.
        let text = format!("{digest:?}");
        assert!(!text.contains("sk-a"), "{text}");
        // Not wanted, so a reconciliation asking for it reads it.
        assert!(secrets.known("ns", "conn").is_none());
    }

    #[test]
    fn a_secret_asked_for_is_kept_whole_its_data_and_owners_only() {
        let secrets = Secrets::default();
        secrets.apply(Event::Init);
        secrets.apply(Event::InitApply(secret("conn", 5, true, "a")));
        secrets.apply(Event::InitDone);
        let mut full = secret("conn", 6, true, "b");
        full.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
        secrets.learned("ns", "conn", Some(Arc::new(full)));
        let kept = secrets.known("ns", "conn").unwrap();
        assert_eq!(value(&kept).as_deref(), Some("b"));
        let kept = kept.unwrap();
        assert_eq!(kept.owner_references()[0].name, "conn-key");
        assert!(kept.metadata.labels.is_none() && kept.metadata.annotations.is_none());
        assert!(kept.metadata.uid.is_none() && kept.metadata.resource_version.is_none());
        // Still the provider's own: its digest answers the key's poll.
        assert!(secrets.owned("ns", "conn").unwrap().holds("k", b"b"));
        // Wanted, the watch keeps it whole from now on.
        secrets.apply(Event::Apply(secret("conn", 7, true, "c")));
        assert_eq!(
            value(&secrets.known("ns", "conn").unwrap()).as_deref(),
            Some("c")
        );
    }

    #[test]
    fn a_read_older_than_a_digest_leaves_the_secret_unknown_until_read_again() {
        let secrets = Secrets::default();
        secrets.apply(Event::Init);
        secrets.apply(Event::InitDone);
        secrets.apply(Event::Apply(secret("conn", 9, true, "new")));
        // A read that began before the watch event came.
        secrets.learned("ns", "conn", Some(Arc::new(secret("conn", 8, true, "old"))));
        assert!(secrets.known("ns", "conn").is_none(), "not the older value");
        secrets.learned("ns", "conn", Some(Arc::new(secret("conn", 9, true, "new"))));
        assert_eq!(
            value(&secrets.known("ns", "conn").unwrap()).as_deref(),
            Some("new")
        );
    }

    #[test]
    fn a_relist_forgets_what_went_while_the_watch_was_down() {
        let secrets = Secrets::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        secrets.wake_keys(tx);
        secrets.apply(Event::Init);
        secrets.apply(Event::InitApply(secret("conn", 5, true, "a")));
        secrets.apply(Event::InitDone);
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        secrets.learned(
            "ns",
            "master",
            Some(Arc::new(secret("master", 3, false, "m"))),
        );
        secrets.apply(Event::Init);
        secrets.apply(Event::InitDone);
        assert!(secrets.owned("ns", "conn").is_none());
        // Its key is told, though the cached copy carries no label.
        assert_eq!(rx.try_recv().unwrap().name, "conn-key");
        assert!(secrets.known("ns", "master").unwrap().is_none());
        // What is read after the missed deletion counts again.
        secrets.learned(
            "ns",
            "master",
            Some(Arc::new(secret("master", 4, false, "n"))),
        );
        assert_eq!(
            value(&secrets.known("ns", "master").unwrap()).as_deref(),
            Some("n")
        );
    }

    #[test]
    fn a_managed_resource_is_cached_without_labels_and_owners() {
        let mut meta = ObjectMeta {
            labels: Some([("crossplane.io/composite".to_owned(), "xr".to_owned())].into()),
            owner_references: Some(vec![OwnerReference::default()]),
            annotations: Some([(LAST_APPLIED.to_owned(), "{}".to_owned())].into()),
            finalizers: Some(vec!["f".to_owned()]),
            ..ObjectMeta::default()
        };
        strip_managed(&mut meta);
        assert!(meta.labels.is_none() && meta.owner_references.is_none());
        assert_eq!(meta.annotations, Some(Default::default()));
        assert_eq!(meta.finalizers, Some(vec!["f".to_owned()]));
    }

    #[test]
    fn strip_drops_managed_fields_and_the_applied_copy() {
        let mut meta = ObjectMeta {
            managed_fields: Some(vec![Default::default()]),
            annotations: Some(
                [
                    (LAST_APPLIED.to_owned(), "{}".to_owned()),
                    ("keep".to_owned(), "1".to_owned()),
                ]
                .into(),
            ),
            ..ObjectMeta::default()
        };
        strip(&mut meta);
        assert!(meta.managed_fields.is_none());
        assert_eq!(
            meta.annotations.unwrap().keys().collect::<Vec<_>>(),
            ["keep"]
        );
    }

    /// A poll may skip its reconciliation only where everything the
    /// reconciliation read came from synced caches that count changes,
    /// and it was given the resource as its cache holds it now.
    #[tokio::test]
    async fn reads_are_counted_only_from_synced_caches_covering_both_namespaces() {
        fn synced<K: reflector::Lookup + Clone + 'static>(store: Store<K>) -> Reflected<K>
        where
            K::DynamicType: Eq + std::hash::Hash + Clone,
        {
            let reflected = Reflected::unsynced(store);
            reflected.synced.set();
            reflected
        }
        let (teams, mut writer) = reflector::store::<Tolerant<LiteLLMTeam>>();
        let team: LiteLLMTeam = serde_json::from_value(serde_json::json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMTeam",
            "metadata": {"name": "t", "namespace": "tenant", "resourceVersion": "5"},
            "spec": {"forProvider": {}, "instanceRef": {"name": "proxy"}},
        }))
        .unwrap();
        writer.apply_watcher_event(&Event::Apply(Tolerant::new(team)));
        /// Every kind's store empty and synced.
        struct Empty;
        impl Reflector for Empty {
            fn reflected<K: Cached + Clone>(&mut self) -> Reflected<Tolerant<K>> {
                synced(reflector::store().0)
            }
        }
        let stores = |teams: Reflected<Tolerant<LiteLLMTeam>>| Stores {
            teams,
            ..Stores::build(synced(reflector::store().0), Empty)
        };
        let secrets = || {
            let secrets = Secrets::default();
            secrets.apply(Event::Init);
            secrets.apply(Event::InitDone);
            secrets
        };
        let client = || {
            let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
            kube::Client::try_from(config).unwrap()
        };
        let kube = |scope, teams, namespaces, secrets| {
            Kube::cached(
                client(),
                Arc::new(Cache::new(scope, stores(teams), namespaces, secrets)),
            )
        };
        let counted = |kube: &Kube, version: &str, instance_namespace: &str| {
            kube.reads_counted::<LiteLLMTeam>("tenant", "t", Some(version), instance_namespace)
        };

        let one = kube(
            Scope::Namespace("tenant".into()),
            synced(teams.clone()),
            None,
            secrets(),
        );
        assert!(counted(&one, "5", "tenant"));
        assert!(!counted(&one, "4", "tenant"), "the resource changed since");
        assert!(
            !counted(&one, "5", "platform"),
            "an instance outside the scope is read live"
        );
        assert!(!Kube::live(client()).reads_counted::<LiteLLMTeam>(
            "tenant",
            "t",
            Some("5"),
            "tenant"
        ));
        let listing = kube(
            Scope::Namespace("tenant".into()),
            Reflected::unsynced(teams.clone()),
            None,
            secrets(),
        );
        assert!(!counted(&listing, "5", "tenant"), "a cache still listing");
        let no_secrets = kube(
            Scope::Namespace("tenant".into()),
            synced(teams.clone()),
            None,
            Secrets::default(),
        );
        assert!(
            !counted(&no_secrets, "5", "tenant"),
            "Secrets still listing"
        );
        let all = kube(Scope::All, synced(teams.clone()), None, secrets());
        assert!(counted(&all, "5", "tenant"));
        assert!(
            !counted(&all, "5", "platform"),
            "admission reads the namespace's labels, live without their cache"
        );
        let labelled = kube(
            Scope::All,
            synced(teams),
            Some(synced(reflector::store().0)),
            secrets(),
        );
        assert!(counted(&labelled, "5", "platform"));
    }
}
