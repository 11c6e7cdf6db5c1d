//! What must be known before anything is created: references to other
//! resources, the `LiteLLMInstance` and its master key.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::core::{Selector, SelectorExt};
use sha2::{Digest, Sha256};

use crate::api::budget::LiteLLMBudget;
use crate::api::common::{InstanceRef, SecretKeySelector};
use crate::api::credential::LiteLLMCredential;
use crate::api::instance::{AllowedNamespaces, LiteLLMInstance, LiteLLMInstanceStatus};
use crate::api::mcp_server::LiteLLMMCPServer;
use crate::api::organization::LiteLLMOrganization;
use crate::api::team::LiteLLMTeam;
use crate::api::user::LiteLLMUser;
use crate::api::vector_store::LiteLLMVectorStore;
use crate::litellm::{self, ClientConfig, Observer, Pacing, Secret};

use crate::provider::managed::contract::ManagedKind;
use crate::provider::watch::cache::{Cached, Kube};

/// Default bound on connecting to LiteLLM and on each admin request.
pub const DEFAULT_LITELLM_TIMEOUT: Duration = Duration::from_secs(10);

/// A reference in `forProvider`, named by its field for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A `LiteLLMTeam` in the same namespace; resolves to its team id.
    Team { field: &'static str, name: String },
    /// A `LiteLLMBudget` in the same namespace; resolves to its budget id.
    Budget { field: &'static str, name: String },
    /// A key of a Secret in the same namespace; resolves to its value.
    Secret {
        field: &'static str,
        selector: SecretKeySelector,
    },
    /// Keys of Secrets in the same namespace, each under an entry name (a
    /// credential's values); resolves to their values, by entry.
    Secrets {
        field: &'static str,
        entries: Vec<(String, SecretKeySelector)>,
    },
    /// A `LiteLLMCredential` in the same namespace; resolves to its
    /// credential name.
    Credential { field: &'static str, name: String },
    /// A `LiteLLMUser` in the same namespace; resolves to its user id.
    User { field: &'static str, name: String },
    /// `LiteLLMMCPServer`s in the same namespace; resolves to their server
    /// ids, in order.
    McpServers {
        field: &'static str,
        names: Vec<String>,
    },
    /// `LiteLLMVectorStore`s in the same namespace; resolves to their
    /// vector store ids, in order.
    VectorStores {
        field: &'static str,
        names: Vec<String>,
    },
    /// A `LiteLLMOrganization` in the same namespace; resolves to its
    /// organization id.
    Organization { field: &'static str, name: String },
    /// `LiteLLMUser`s in the same namespace; resolves to their user ids, in
    /// order (a team's members).
    Users {
        field: &'static str,
        names: Vec<String>,
    },
    /// `LiteLLMTeam`s in the same namespace; resolves to their team ids,
    /// in order (an access group's teams).
    Teams {
        field: &'static str,
        names: Vec<String>,
    },
}

/// Resolved references, by field name.
#[derive(Debug, Default, Clone)]
pub struct Resolved {
    ids: BTreeMap<&'static str, String>,
    id_lists: BTreeMap<&'static str, Vec<String>>,
    secrets: BTreeMap<&'static str, Secret>,
    secret_sets: BTreeMap<&'static str, BTreeMap<String, Secret>>,
}

impl Resolved {
    pub fn id(&self, field: &str) -> Option<&str> {
        self.ids.get(field).map(String::as_str)
    }

    /// The ids of a list reference ([`Reference::McpServers`]); `None` when
    /// the resource has none.
    pub fn ids(&self, field: &str) -> Option<&[String]> {
        self.id_lists.get(field).map(Vec::as_slice)
    }

    pub fn with_ids(mut self, field: &'static str, ids: Vec<String>) -> Self {
        self.id_lists.insert(field, ids);
        self
    }

    pub fn secret(&self, field: &str) -> Option<&Secret> {
        self.secrets.get(field)
    }

    /// The values of the [`Reference::Secrets`] of `field`, by entry;
    /// `None` when the resource has no such reference.
    pub fn secret_set(&self, field: &str) -> Option<&BTreeMap<String, Secret>> {
        self.secret_sets.get(field)
    }

    /// Every resolved secret value, for scrubbing.
    pub fn secret_values(&self) -> impl Iterator<Item = &Secret> {
        self.secrets
            .values()
            .chain(self.secret_sets.values().flat_map(BTreeMap::values))
    }

    pub fn with_id(mut self, field: &'static str, id: impl Into<String>) -> Self {
        self.ids.insert(field, id.into());
        self
    }

    pub fn with_secret(mut self, field: &'static str, secret: Secret) -> Self {
        self.secrets.insert(field, secret);
        self
    }

    pub fn with_secret_set(
        mut self,
        field: &'static str,
        secrets: BTreeMap<String, Secret>,
    ) -> Self {
        self.secret_sets.insert(field, secrets);
        self
    }
}

/// Why something could not be resolved. Every message names the object.
#[derive(Debug, thiserror::Error)]
pub enum Unresolved {
    #[error("{field}: {kind} {namespace}/{name} not found")]
    RefMissing {
        field: &'static str,
        kind: String,
        namespace: String,
        name: String,
    },
    #[error("{field}: {kind} {namespace}/{name} is not ready yet")]
    RefNotReady {
        field: &'static str,
        kind: String,
        namespace: String,
        name: String,
        /// No reconciliation of it has ended yet (it has no `Synced`
        /// condition): it is being made.
        first: bool,
    },
    #[error("{field}: Secret {namespace}/{name} not found")]
    SecretMissing {
        field: &'static str,
        namespace: String,
        name: String,
    },
    #[error("{field}: Secret {namespace}/{name} has no key {key:?}")]
    SecretKeyMissing {
        field: &'static str,
        namespace: String,
        name: String,
        key: String,
    },
    /// The instance does not exist (any more).
    #[error("LiteLLMInstance {namespace}/{name} not found")]
    InstanceMissing { namespace: String, name: String },
    #[error(
        "LiteLLMInstance {namespace}/{name} does not admit resources of namespace {requester} \
         (spec.allowedNamespaces)"
    )]
    NotAdmitted {
        namespace: String,
        name: String,
        requester: String,
    },
    #[error("LiteLLMInstance {namespace}/{name} is not ready")]
    InstanceNotReady { namespace: String, name: String },
    /// The instance is being deleted: it waits for its dependents to be
    /// deleted, and nothing new is made or changed in its proxy meanwhile.
    #[error(
        "LiteLLMInstance {namespace}/{name} is being deleted: nothing is created or changed in \
         its proxy any more, and its deletion waits for this resource to be deleted"
    )]
    InstanceDeleting { namespace: String, name: String },
    #[error("LiteLLMInstance {namespace}/{name}: {problem}")]
    InstanceInvalid {
        namespace: String,
        name: String,
        problem: String,
    },
    /// A label selector of the instance needs the requester's Namespace,
    /// which the provider may not read.
    #[error(
        "LiteLLMInstance {namespace}/{name}: {field} selects namespaces by label, and the \
         provider may not read Namespace {requester} to match it: grant get on namespaces \
         (examples/provider/runtime-config/rbac.yaml does), or admit the namespace by name \
         in spec.allowedNamespaces.names"
    )]
    LabelsForbidden {
        namespace: String,
        name: String,
        field: &'static str,
        requester: String,
    },
    #[error("kubernetes API: {0}")]
    Kube(#[from] kube::Error),
}

/// A LiteLLMInstance ready for admin calls.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The instance's namespace: the platform's, from which unmarked
    /// LiteLLM objects may be adopted (see [`crate::provider::managed::ownership::may_manage`]).
    pub namespace: String,
    /// Where admin calls go: `status.endpoint`.
    pub endpoint: String,
    /// The master key, for scrubbing error text; the client holds it too.
    pub master_key: Secret,
    /// What consumers call, published as `endpoint` in connection Secrets:
    /// `status.gatewayEndpoint` when the proxy splits LLM traffic off (the
    /// component chart's gateway), else the admin endpoint.
    pub consumer_endpoint: String,
    pub client: litellm::Client,
    /// Whether the resource's namespace may publish public model names: the
    /// instance's own, or one `spec.publicModelNamespaces` grants.
    pub public_models: bool,
    /// The internal hosts tenants' MCP servers may name
    /// (`spec.tenantMcpServerHosts`).
    pub tenant_mcp_server_hosts: Vec<String>,
}

/// `(admin, consumer)` endpoints of an instance whose status says it is
/// ready; see [`Instance`].
fn endpoints(status: Option<&LiteLLMInstanceStatus>) -> Option<(String, String)> {
    let status = status.filter(|s| s.ready)?;
    let admin = status.endpoint.clone()?;
    let consumer = status
        .gateway_endpoint
        .clone()
        .unwrap_or_else(|| admin.clone());
    Some((admin, consumer))
}

/// LiteLLM clients by endpoint, master key and CA, so connections are
/// pooled across reconciliations. The key is a hash: no secret is kept
/// beyond what the clients themselves hold.
pub struct ClientCache {
    observer: Observer,
    /// Of every client built here; see [`ClientConfig::timeout`].
    timeout: Duration,
    clients: Mutex<HashMap<[u8; 32], litellm::Client>>,
    /// How requests to one proxy (by admin endpoint) are paced, shared by
    /// every client of it and every controller.
    pacing: Mutex<HashMap<String, Arc<Pacing>>>,
    max_in_flight: usize,
}

/// Default bound on the admin requests in flight to one proxy.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 10;

impl ClientCache {
    pub fn new(observer: Observer, timeout: Duration) -> Self {
        Self::with_in_flight(observer, timeout, DEFAULT_MAX_IN_FLIGHT)
    }

    /// At most `max_in_flight` (at least 1) admin requests at once per proxy.
    pub fn with_in_flight(observer: Observer, timeout: Duration, max_in_flight: usize) -> Self {
        Self {
            observer,
            timeout,
            clients: Mutex::new(HashMap::new()),
            pacing: Mutex::new(HashMap::new()),
            max_in_flight: max_in_flight.max(1),
        }
    }

    fn pacing(&self, endpoint: &str) -> Arc<Pacing> {
        let mut pacing = self
            .pacing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        pacing
            .entry(endpoint.to_owned())
            // Answers slower than a quarter of the timeout lower the
            // limit, well before requests start to run out of time.
            .or_insert_with(|| Pacing::new(self.max_in_flight, self.timeout / 4))
            .clone()
    }

    /// The in-flight limit of every proxy so far, by admin endpoint.
    pub fn limits(&self) -> Vec<(String, litellm::Limits)> {
        let pacing = self
            .pacing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        pacing
            .iter()
            .map(|(endpoint, pacing)| (endpoint.clone(), pacing.limits()))
            .collect()
    }

    fn get(
        &self,
        endpoint: &str,
        master_key: Secret,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<litellm::Client, litellm::Error> {
        let mut hasher = Sha256::new();
        for part in [
            endpoint.as_bytes(),
            master_key.expose().as_bytes(),
            ca_pem.as_deref().unwrap_or_default(),
        ] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let fingerprint: [u8; 32] = hasher.finalize().into();
        let mut clients = self
            .clients
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(client) = clients.get(&fingerprint) {
            return Ok(client.clone());
        }
        let client = litellm::Client::new(ClientConfig {
            endpoint: endpoint.to_owned(),
            master_key,
            ca_pem,
            timeout: self.timeout,
        })?
        .with_observer(self.observer.clone())
        .with_pacing(self.pacing(endpoint));
        // Rotated keys and moved endpoints leave stale entries; a small
        // bound keeps them from piling up.
        if clients.len() >= 64 {
            clients.clear();
        }
        clients.insert(fingerprint, client.clone());
        Ok(client)
    }
}

/// Whether an instance in `instance_namespace` admits resources of
/// `namespace` (whose labels are `labels`). Its own namespace always; any
/// other only by name or label selector of `spec.allowedNamespaces`. An
/// empty selector selects every namespace, as in Kubernetes.
pub fn admits(
    allowed: Option<&AllowedNamespaces>,
    instance_namespace: &str,
    namespace: &str,
    labels: &BTreeMap<String, String>,
) -> bool {
    if namespace == instance_namespace {
        return true;
    }
    let Some(allowed) = allowed else {
        return false;
    };
    let by_name = allowed.names.iter().flatten().any(|name| name == namespace);
    let by_label = allowed
        .selector
        .clone()
        .and_then(|selector| Selector::try_from(selector).ok())
        .is_some_and(|selector| selector.matches(labels));
    by_name || by_label
}

/// The labels of `namespace` where a selector of `instance` needs them to
/// admit it (one that names it does not): Crossplane v2's provider role
/// reads no Namespace, so a platform that admits tenants by name needs no
/// more.
async fn selected_labels(
    kube: &Kube,
    instance: &LiteLLMInstance,
    namespace: &str,
) -> Result<BTreeMap<String, String>, Unresolved> {
    let selects = |allowed: Option<&AllowedNamespaces>| {
        allowed.is_some_and(|a| {
            a.selector.is_some() && !a.names.iter().flatten().any(|name| name == namespace)
        })
    };
    let field = if selects(instance.spec.allowed_namespaces.as_ref()) {
        "spec.allowedNamespaces.selector"
    } else if selects(instance.spec.public_model_namespaces.as_ref()) {
        "spec.publicModelNamespaces.selector"
    } else {
        return Ok(BTreeMap::new());
    };
    match kube.namespace_labels(namespace).await {
        Ok(labels) => Ok(labels),
        Err(kube::Error::Api(status)) if status.code == 403 => Err(Unresolved::LabelsForbidden {
            namespace: kube::ResourceExt::namespace(instance).unwrap_or_default(),
            name: kube::ResourceExt::name_any(instance),
            field,
            requester: namespace.to_owned(),
        }),
        Err(err) => Err(err.into()),
    }
}

/// The id of a referenced managed resource, once it is Ready.
pub fn entity_id<K: ManagedKind>(referenced: &K) -> Option<String> {
    crate::provider::managed::contract::facts(referenced).ready_id()
}

/// Resolves every reference, or names the first one that does not resolve.
pub async fn references(
    kube: &Kube,
    namespace: &str,
    refs: &[Reference],
) -> Result<Resolved, Unresolved> {
    let mut resolved = Resolved::default();
    for reference in refs {
        resolved = match reference {
            Reference::Team { field, name } => {
                let id = entity::<LiteLLMTeam>(kube, namespace, field, name).await?;
                resolved.with_id(field, id)
            }
            Reference::Budget { field, name } => {
                let id = entity::<LiteLLMBudget>(kube, namespace, field, name).await?;
                resolved.with_id(field, id)
            }
            Reference::Credential { field, name } => {
                let id = entity::<LiteLLMCredential>(kube, namespace, field, name).await?;
                resolved.with_id(field, id)
            }
            Reference::User { field, name } => {
                let id = entity::<LiteLLMUser>(kube, namespace, field, name).await?;
                resolved.with_id(field, id)
            }
            Reference::Organization { field, name } => {
                let id = entity::<LiteLLMOrganization>(kube, namespace, field, name).await?;
                resolved.with_id(field, id)
            }
            Reference::McpServers { field, names } => {
                let mut ids = Vec::with_capacity(names.len());
                for name in names {
                    ids.push(entity::<LiteLLMMCPServer>(kube, namespace, field, name).await?);
                }
                resolved.with_ids(field, ids)
            }
            Reference::VectorStores { field, names } => {
                let mut ids = Vec::with_capacity(names.len());
                for name in names {
                    ids.push(entity::<LiteLLMVectorStore>(kube, namespace, field, name).await?);
                }
                resolved.with_ids(field, ids)
            }
            Reference::Users { field, names } => {
                let mut ids = Vec::with_capacity(names.len());
                for name in names {
                    ids.push(entity::<LiteLLMUser>(kube, namespace, field, name).await?);
                }
                resolved.with_ids(field, ids)
            }
            Reference::Teams { field, names } => {
                let mut ids = Vec::with_capacity(names.len());
                for name in names {
                    ids.push(entity::<LiteLLMTeam>(kube, namespace, field, name).await?);
                }
                resolved.with_ids(field, ids)
            }
            Reference::Secret { field, selector } => {
                let secret = secret_value(kube, namespace, selector, field).await?;
                resolved.with_secret(field, secret)
            }
            Reference::Secrets { field, entries } => {
                let mut secrets = BTreeMap::new();
                for (entry, selector) in entries {
                    let secret = secret_value(kube, namespace, selector, field).await?;
                    secrets.insert(entry.clone(), secret);
                }
                resolved.with_secret_set(field, secrets)
            }
        };
    }
    Ok(resolved)
}

/// The id of the referenced resource `namespace/name` of kind `K`, or why
/// there is none.
async fn entity<K: ManagedKind + Cached>(
    kube: &Kube,
    namespace: &str,
    field: &'static str,
    name: &str,
) -> Result<String, Unresolved> {
    // Every poll of a key resolves its team: from the cache's facts of
    // it, without parsing the team.
    let cached = kube.cached_facts::<K, _>(namespace, name, |facts| {
        facts.map(|facts| (facts.ready_id(), !facts.reported))
    });
    let found = match cached {
        Some(found) => found,
        None => kube.get::<K>(namespace, name).await?.map(|referenced| {
            let facts = crate::provider::managed::contract::facts(&*referenced);
            (facts.ready_id(), !facts.reported)
        }),
    };
    let kind = K::kind(&()).into_owned();
    let Some((id, first)) = found else {
        return Err(Unresolved::RefMissing {
            field,
            kind,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        });
    };
    id.ok_or_else(|| Unresolved::RefNotReady {
        field,
        kind,
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        first,
    })
}

/// The value of a Secret key, without a trailing newline (files and
/// `kubectl create secret --from-file` often add one).
pub async fn secret_value(
    kube: &Kube,
    namespace: &str,
    selector: &SecretKeySelector,
    field: &'static str,
) -> Result<Secret, Unresolved> {
    let Some(secret) = kube.secret(namespace, &selector.name).await? else {
        return Err(Unresolved::SecretMissing {
            field,
            namespace: namespace.to_owned(),
            name: selector.name.clone(),
        });
    };
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(&selector.key))
        .map(|bytes| {
            let value = String::from_utf8_lossy(&bytes.0);
            Secret::new(value.trim_end_matches(['\n', '\r']))
        })
        .ok_or_else(|| Unresolved::SecretKeyMissing {
            field,
            namespace: namespace.to_owned(),
            name: selector.name.clone(),
            key: selector.key.clone(),
        })
}

/// What the instance is resolved for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Observe, create, update: refused once the instance is being deleted.
    Manage,
    /// Delete the resource's LiteLLM object: allowed while the instance is
    /// being deleted (its deletion waits for exactly that).
    Delete,
}

/// Resolves `spec.instanceRef` of a resource in `namespace`: admitted,
/// ready, with an endpoint and a master key (read in the instance's own
/// namespace, so it never leaves it).
pub async fn instance(
    kube: &Kube,
    cache: &ClientCache,
    namespace: &str,
    reference: &InstanceRef,
    purpose: Purpose,
) -> Result<Instance, Unresolved> {
    let instance_namespace = reference.namespace.as_deref().unwrap_or(namespace);
    let name = reference.name.as_str();
    let Some(instance) = kube
        .get::<LiteLLMInstance>(instance_namespace, name)
        .await?
    else {
        return Err(Unresolved::InstanceMissing {
            namespace: instance_namespace.to_owned(),
            name: name.to_owned(),
        });
    };
    let mut public_models = instance_namespace == namespace;
    if instance_namespace != namespace {
        let labels = selected_labels(kube, &instance, namespace).await?;
        if !admits(
            instance.spec.allowed_namespaces.as_ref(),
            instance_namespace,
            namespace,
            &labels,
        ) {
            return Err(Unresolved::NotAdmitted {
                namespace: instance_namespace.to_owned(),
                name: name.to_owned(),
                requester: namespace.to_owned(),
            });
        }
        public_models = admits(
            instance.spec.public_model_namespaces.as_ref(),
            instance_namespace,
            namespace,
            &labels,
        );
    }
    if purpose == Purpose::Manage && instance.metadata.deletion_timestamp.is_some() {
        return Err(Unresolved::InstanceDeleting {
            namespace: instance_namespace.to_owned(),
            name: name.to_owned(),
        });
    }
    let invalid = |problem: &str| Unresolved::InstanceInvalid {
        namespace: instance_namespace.to_owned(),
        name: name.to_owned(),
        problem: problem.to_owned(),
    };
    let Some((endpoint, consumer_endpoint)) = endpoints(instance.status.as_ref()) else {
        return Err(Unresolved::InstanceNotReady {
            namespace: instance_namespace.to_owned(),
            name: name.to_owned(),
        });
    };
    // `spec.masterKey.secretRef`, or the Secret a provisioned instance
    // generates (`masterKey.autoGenerate`).
    let key_ref = instance.master_key_ref();
    let master_key = secret_value(kube, instance_namespace, &key_ref, "spec.masterKey").await?;
    let ca_pem = match instance
        .spec
        .tls
        .as_ref()
        .and_then(|t| t.ca_secret_ref.as_ref())
    {
        Some(ca_ref) => Some(
            secret_value(kube, instance_namespace, ca_ref, "spec.tls.caSecretRef")
                .await?
                .expose()
                .as_bytes()
                .to_vec(),
        ),
        None => None,
    };
    let client = cache
        .get(&endpoint, master_key.clone(), ca_pem)
        .map_err(|err| invalid(&err.to_string()))?;
    Ok(Instance {
        namespace: instance_namespace.to_owned(),
        master_key,
        endpoint,
        consumer_endpoint,
        client,
        public_models,
        tenant_mcp_server_hosts: instance
            .spec
            .tenant_mcp_server_hosts
            .clone()
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

    use super::*;
    use crate::api::common::{Condition, ManagedFields, ManagedStatus, EXTERNAL_NAME};
    use crate::api::conditions::READY;
    use crate::api::team::{LiteLLMTeamSpec, TeamParameters};
    use kube::ResourceExt;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn admission_by_own_namespace_names_and_selector() {
        let by_name = AllowedNamespaces {
            names: Some(vec!["team-a".into()]),
            selector: None,
        };
        let by_label = AllowedNamespaces {
            names: None,
            selector: Some(LabelSelector {
                match_labels: Some(labels(&[("litellm", "allowed")])),
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "NotIn".into(),
                    values: Some(vec!["blocked".into()]),
                }]),
            }),
        };
        let cases: [(
            Option<&AllowedNamespaces>,
            &str,
            BTreeMap<String, String>,
            bool,
        ); 7] = [
            (None, "infra", labels(&[]), true),
            (None, "team-a", labels(&[]), false),
            (Some(&by_name), "team-a", labels(&[]), true),
            (Some(&by_name), "team-b", labels(&[]), false),
            (
                Some(&by_label),
                "team-b",
                labels(&[("litellm", "allowed")]),
                true,
            ),
            (
                Some(&by_label),
                "team-b",
                labels(&[("litellm", "allowed"), ("tier", "blocked")]),
                false,
            ),
            (
                Some(&by_label),
                "team-b",
                labels(&[("litellm", "no")]),
                false,
            ),
        ];
        for (allowed, namespace, labels, want) in cases {
            assert_eq!(
                admits(allowed, "infra", namespace, &labels),
                want,
                "{namespace} {labels:?}"
            );
        }
    }

    fn team(external_name: Option<&str>, ready: Option<&str>) -> LiteLLMTeam {
        let mut team = LiteLLMTeam::new(
            "t",
            LiteLLMTeamSpec {
                managed: ManagedFields::default(),
                for_provider: TeamParameters::default(),
            },
        );
        if let Some(id) = external_name {
            team.annotations_mut()
                .insert(EXTERNAL_NAME.into(), id.into());
        }
        team.status = ready.map(|status| ManagedStatus {
            conditions: vec![Condition {
                type_: READY.into(),
                status: status.into(),
                reason: "Available".into(),
                ..Condition::default()
            }],
            at_provider: None,
            observed_generation: None,
            last_handled_reconcile_at: None,
        });
        team
    }

    #[test]
    fn references_resolve_only_to_ready_resources_with_an_id() {
        assert_eq!(
            entity_id(&team(Some("ns.t"), Some("True"))).as_deref(),
            Some("ns.t")
        );
        assert_eq!(entity_id(&team(Some("ns.t"), Some("False"))), None);
        assert_eq!(entity_id(&team(Some("ns.t"), None)), None);
        assert_eq!(entity_id(&team(None, Some("True"))), None);
    }

    #[test]
    fn messages_name_the_reference_and_the_instance() {
        let missing = Unresolved::RefMissing {
            field: "teamRef",
            kind: "LiteLLMTeam".into(),
            namespace: "ns".into(),
            name: "web".into(),
        };
        assert_eq!(missing.to_string(), "teamRef: LiteLLMTeam ns/web not found");
        let refused = Unresolved::NotAdmitted {
            namespace: "infra".into(),
            name: "proxy".into(),
            requester: "team-a".into(),
        };
        let text = refused.to_string();
        assert!(
            text.contains("infra/proxy") && text.contains("team-a"),
            "{text}"
        );
    }

    #[test]
    fn consumers_get_the_gateway_when_the_proxy_has_one() {
        let status =
            |ready: bool, endpoint: Option<&str>, gateway: Option<&str>| LiteLLMInstanceStatus {
                ready,
                endpoint: endpoint.map(str::to_owned),
                gateway_endpoint: gateway.map(str::to_owned),
                ..LiteLLMInstanceStatus::default()
            };
        let backend = "http://litellm-backend:4001";
        let gateway = "http://litellm-gateway:4000";
        let cases = [
            (
                "split topology",
                Some(status(true, Some(backend), Some(gateway))),
                Some((backend, gateway)),
            ),
            (
                "one endpoint for everything",
                Some(status(true, Some(backend), None)),
                Some((backend, backend)),
            ),
            (
                "not ready",
                Some(status(false, Some(backend), Some(gateway))),
                None,
            ),
            (
                "no admin endpoint",
                Some(status(true, None, Some(gateway))),
                None,
            ),
            ("no status", None, None),
        ];
        for (name, status, want) in cases {
            let want = want.map(|(admin, consumer)| (admin.to_owned(), consumer.to_owned()));
            assert_eq!(endpoints(status.as_ref()), want, "{name}");
        }
    }

    #[test]
    fn client_cache_reuses_clients_for_the_same_settings() {
        let cache = ClientCache::new(std::sync::Arc::new(|_, _, _| {}), DEFAULT_LITELLM_TIMEOUT);
        cache
            .get("http://a:4000", Secret::new("sk-1"), None)
            .unwrap();
        cache
            .get("http://a:4000", Secret::new("sk-1"), None)
            .unwrap();
        cache
            .get("http://a:4000", Secret::new("sk-2"), None)
            .unwrap();
        assert_eq!(cache.clients.lock().unwrap().len(), 2);
        assert!(cache.get("not a url", Secret::new("sk-1"), None).is_err());
    }
}
