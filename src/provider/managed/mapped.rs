//! Kinds that only map: a LiteLLM object read by its id, compared field by
//! field with `forProvider`, and written with one request. Such a kind
//! implements [`Mapping`] (how to read, compare and write its object) and
//! takes [`Mapped`] as its [`External`]; the order of a read, what an
//! [`Observation`] holds and the bookkeeping of the Secret values it sends
//! ([`SecretValues`]) are written here once.
//!
//! Where LiteLLM chooses an object's id and the object has a unique name
//! chosen before the create (guardrails, access groups), the external name
//! is that name until the create answers the id ([`Mapping::send_create`]);
//! a create whose answer was lost left an object of that name, which the
//! next create finds ([`Mapping::found_by_name`]) and writes whole instead
//! of making a second one.
//!
//! A kind whose object is more than one request (a team's members, a key's
//! Secret and rotation) implements [`External`] itself.

use std::collections::BTreeMap;
use std::future::Future;

use crate::api::common::{policy_allows, ManagementPolicy};
use crate::provider::managed::contract::{
    Created, Creation, External, ExternalError, ManagedKind, Observation,
};
use crate::provider::managed::diff::Diff;
use crate::provider::managed::ownership::Owner;

/// Fingerprints of Secret values, by name (a field, or a value's name).
pub type Fingerprints = BTreeMap<String, String>;

/// How one kind's object maps onto LiteLLM. Only `read`, `owner`, `drift`,
/// `at_provider`, `request` and the three sends are required.
pub trait Mapping<K: ManagedKind>: Send + Sync {
    /// The object as LiteLLM reports it.
    type Live: Send + Sync;
    /// A create or update body.
    type Request: Send + Sync;

    /// One read of the object under `id`; `None` when there is none.
    fn read(
        &self,
        mr: &K,
        id: &str,
    ) -> impl Future<Output = Result<Option<Self::Live>, ExternalError>> + Send;

    /// The ownership marker the live object carries, if any.
    fn owner(&self, id: &str, live: &Self::Live) -> Option<Owner>;

    /// The fields of `forProvider` the live object does not match (Secret
    /// values aside: see [`Mapping::secret_values`]).
    fn drift(&self, mr: &K, id: &str, live: &Self::Live) -> Diff;

    /// `forProvider` with unset fields filled from the live object, when
    /// that fills anything.
    fn late_init(&self, _params: &K::Parameters, _live: &Self::Live) -> Option<K::Parameters> {
        None
    }

    /// `status.atProvider` of the live object, with the fingerprints to
    /// record (kinds with [`Mapping::secret_values`] only).
    fn at_provider(&self, live: &Self::Live, fingerprints: Option<Fingerprints>) -> K::AtProvider;

    /// Non-secret values for the connection Secret (besides `endpoint`).
    fn connection_details(&self, _live: &Self::Live) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    /// The create body (`drift` is `None`) or the update body for what
    /// observe found different, or why it may not be sent (before anything
    /// is).
    fn request(
        &self,
        mr: &K,
        id: &str,
        drift: Option<&Diff>,
    ) -> impl Future<Output = Result<Self::Request, ExternalError>> + Send;

    /// Creates the object: `Some` with the id LiteLLM chose for it, to
    /// record as external name; `None` where the external name is the id.
    fn send_create(
        &self,
        request: &Self::Request,
    ) -> impl Future<Output = Result<Option<String>, ExternalError>> + Send;
    fn send_update(
        &self,
        request: &Self::Request,
    ) -> impl Future<Output = Result<(), ExternalError>> + Send;
    /// Deletes the object; one already gone is success.
    fn send_delete(&self, id: &str) -> impl Future<Output = Result<(), ExternalError>> + Send;

    /// Kinds whose id LiteLLM chooses, before a create: the id of the
    /// object that already has the create's name (names unique in the
    /// proxy, chosen before the create), which the create writes whole
    /// instead of making a second one. That is a create whose answer was
    /// lost, or an object this resource may take; any other is refused
    /// here, naming the field. `None`: there is none, or the id is the
    /// external name (the default), where a lost create is found by it.
    fn found_by_name(
        &self,
        _mr: &K,
        _request: &Self::Request,
    ) -> impl Future<Output = Result<Option<String>, ExternalError>> + Send {
        async { Ok(None) }
    }

    /// The Secret values the object is written with, which LiteLLM never
    /// reports back: `None` for kinds that send none.
    fn secret_values(&self, _mr: &K) -> Option<SecretValues> {
        None
    }

    /// `status.atProvider` before the object exists, recording what the
    /// create will send (kinds with [`Mapping::secret_values`] only).
    fn before_create(
        &self,
        _mr: &K,
        _id: &str,
        _fingerprints: Option<Fingerprints>,
    ) -> Option<K::AtProvider> {
        None
    }
}

/// A [`Mapping`] as the kind's [`External`].
pub struct Mapped<M>(pub M);

impl<K: ManagedKind, M: Mapping<K>> External<K> for Mapped<M> {
    async fn observe(&self, mr: &K, id: &str) -> Result<Observation<K>, ExternalError> {
        let mapping = &self.0;
        let policies = &mr.managed().management_policies;
        let secrets = mapping.secret_values(mr);
        let Some(live) = mapping.read(mr, id).await? else {
            let mut absent = Observation::absent();
            if let Some(values) = &secrets {
                if policy_allows(policies, ManagementPolicy::Create) {
                    // Recorded only once the create succeeded.
                    absent.at_provider = mapping.before_create(mr, id, values.to_record(true));
                }
            }
            return Ok(absent);
        };
        let mut drift = mapping.drift(mr, id, &live);
        let fingerprints = secrets.and_then(|values| {
            for field in &values.drifted {
                drift.mark(field);
            }
            let writes = !drift.is_empty() && policy_allows(policies, ManagementPolicy::Update);
            values.to_record(writes)
        });
        Ok(Observation {
            probe: None,
            exists: true,
            owner: mapping.owner(id, &live),
            late_init: mapping.late_init(mr.for_provider(), &live),
            at_provider: Some(mapping.at_provider(&live, fingerprints)),
            connection_details: mapping.connection_details(&live),
            drift,
        })
    }

    async fn create(&self, mr: &K, id: &str) -> Result<Created<K>, ExternalError> {
        let mapping = &self.0;
        let request = mapping.request(mr, id, None).await?;
        let id = match mapping.found_by_name(mr, &request).await? {
            Some(found) => {
                let whole = mapping.request(mr, &found, None).await?;
                mapping.send_update(&whole).await?;
                Some(found)
            }
            None => mapping.send_create(&request).await?,
        };
        Ok(Creation {
            id,
            ..Creation::default()
        }
        .into())
    }

    /// Only after an observation found the object: several of LiteLLM's
    /// update routes create a missing object, or answer 500 for it.
    async fn update(&self, mr: &K, id: &str, drift: &Diff) -> Result<(), ExternalError> {
        let request = self.0.request(mr, id, Some(drift)).await?;
        self.0.send_update(&request).await
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        self.0.send_delete(id).await
    }
}

/// The Secret values one object is written with, by their fingerprints:
/// LiteLLM never returns a value it masks, so the fingerprints of the
/// values last written are kept in `status.atProvider.secretFingerprints`
/// and a changed Secret is drift, written again.
///
/// The status a reconciliation starts from is never older than the
/// provider's last write of it (the reconciler waits for its cache to
/// catch up), so the fingerprints recorded after a write are those compared
/// next.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecretValues {
    /// Of the Secrets as resolved now.
    pub current: Fingerprints,
    /// As `status.atProvider` recorded them.
    pub recorded: Option<Fingerprints>,
    /// The fields of `forProvider` to report drifted for them.
    pub drifted: Vec<&'static str>,
}

impl SecretValues {
    pub fn new(current: Fingerprints, recorded: Option<Fingerprints>) -> Self {
        Self {
            current,
            recorded,
            drifted: Vec::new(),
        }
    }

    /// `current`, against the fingerprints `recorded` reads from the
    /// status of `mr`.
    pub fn recorded_in<K: ManagedKind>(
        mr: &K,
        current: Fingerprints,
        recorded: impl Fn(&K::AtProvider) -> Option<&Fingerprints>,
    ) -> Self {
        let recorded = mr
            .managed_status()
            .and_then(|s| s.at_provider.as_ref())
            .and_then(recorded)
            .cloned();
        Self::new(current, recorded)
    }

    /// The names in `current` whose fingerprint differs from the one
    /// recorded (a Secret value changed, or was never written).
    pub fn changed(&self) -> impl Iterator<Item = &str> {
        self.current
            .iter()
            .filter(|(name, now)| self.recorded.as_ref().and_then(|m| m.get(*name)) != Some(*now))
            .map(|(name, _)| name.as_str())
    }

    /// Whether the values differ from those recorded in any way: changed,
    /// new, or no longer sent.
    pub fn differ(&self) -> bool {
        self.recorded
            .as_ref()
            .map_or(!self.current.is_empty(), |r| *r != self.current)
    }

    /// `self` with `fields` reported drifted when `drifts`.
    pub fn drifting(mut self, drifts: bool, fields: &[&'static str]) -> Self {
        if drifts {
            self.drifted.extend_from_slice(fields);
        }
        self
    }

    /// The fingerprints observe reports for `status.atProvider`, which the
    /// reconciler records only when the reconciliation succeeds: `current`
    /// when this reconciliation writes the object (`writes`: a create, or
    /// an update of drift, each sending those very values), else the
    /// recorded ones of names still sent. So a failed or lost write records
    /// nothing (the next poll sees the same difference and writes again),
    /// and drift that the policies do not let the provider correct keeps
    /// being reported. No Secret referenced: `None`.
    pub fn to_record(&self, writes: bool) -> Option<Fingerprints> {
        if self.current.is_empty() {
            return None;
        }
        if writes {
            return Some(self.current.clone());
        }
        let kept: Fingerprints = self
            .recorded
            .iter()
            .flatten()
            .filter(|(name, _)| self.current.contains_key(*name))
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect();
        (!kept.is_empty()).then_some(kept)
    }
}

/// Identifies each value from a Secret without revealing it, by its name:
/// `sha256:` and the first 16 hex digits of SHA-256 over a domain prefix
/// and the value.
pub fn values_fingerprints(secrets: &BTreeMap<String, crate::litellm::Secret>) -> Fingerprints {
    secrets
        .iter()
        .map(|(name, value)| {
            let domain = "litellm-crossplane credential value fingerprint v1";
            let fingerprint =
                crate::provider::managed::scrub::fingerprint(domain, value.expose().as_bytes());
            (name.clone(), fingerprint)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> Fingerprints {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn recorded_changed_and_differing_fingerprints() {
        let (key, token) = ("apiKey", "sessionToken");
        // (case, recorded, current, writes, to record, changed, differ)
        let cases = [
            (
                "steady state",
                Some(map(&[(key, "a")])),
                map(&[(key, "a")]),
                false,
                Some(map(&[(key, "a")])),
                vec![],
                false,
            ),
            (
                "rotated and written",
                Some(map(&[(key, "a")])),
                map(&[(key, "b")]),
                true,
                Some(map(&[(key, "b")])),
                vec![key],
                true,
            ),
            (
                "rotated, no Update policy",
                Some(map(&[(key, "a")])),
                map(&[(key, "b")]),
                false,
                Some(map(&[(key, "a")])),
                vec![key],
                true,
            ),
            (
                "first write",
                None,
                map(&[(key, "b")]),
                true,
                Some(map(&[(key, "b")])),
                vec![key],
                true,
            ),
            (
                "imported, never written",
                None,
                map(&[(key, "b")]),
                false,
                None,
                vec![key],
                true,
            ),
            (
                "no Secret referenced any more",
                Some(map(&[(key, "a")])),
                map(&[]),
                true,
                None,
                vec![],
                true,
            ),
            (
                "nothing referenced, nothing recorded",
                None,
                map(&[]),
                true,
                None,
                vec![],
                false,
            ),
            (
                "a reference removed",
                Some(map(&[(key, "a"), (token, "t")])),
                map(&[(key, "a")]),
                false,
                Some(map(&[(key, "a")])),
                vec![],
                true,
            ),
        ];
        for (case, recorded, current, writes, want, changed, differ) in cases {
            let values = SecretValues::new(current, recorded);
            assert_eq!(values.to_record(writes), want, "{case}");
            assert_eq!(values.changed().collect::<Vec<_>>(), changed, "{case}");
            assert_eq!(values.differ(), differ, "{case}");
        }
    }

    /// A mapping that records its sends, with a chosen id and an object
    /// already of the create's name (or not).
    struct Recording {
        chosen: Option<&'static str>,
        found: Option<&'static str>,
        sent: std::sync::Mutex<Vec<String>>,
    }

    impl Mapping<crate::api::budget::LiteLLMBudget> for Recording {
        type Live = ();
        type Request = String;

        async fn read(
            &self,
            _: &crate::api::budget::LiteLLMBudget,
            _: &str,
        ) -> Result<Option<()>, ExternalError> {
            Ok(None)
        }
        fn owner(&self, _: &str, _: &()) -> Option<Owner> {
            None
        }
        fn drift(&self, _: &crate::api::budget::LiteLLMBudget, _: &str, _: &()) -> Diff {
            Diff::new()
        }
        fn at_provider(
            &self,
            _: &(),
            _: Option<Fingerprints>,
        ) -> crate::api::budget::BudgetObservation {
            Default::default()
        }
        async fn request(
            &self,
            _: &crate::api::budget::LiteLLMBudget,
            id: &str,
            _: Option<&Diff>,
        ) -> Result<String, ExternalError> {
            Ok(id.to_owned())
        }
        async fn send_create(&self, request: &String) -> Result<Option<String>, ExternalError> {
            self.sent.lock().unwrap().push(format!("create {request}"));
            Ok(self.chosen.map(str::to_owned))
        }
        async fn send_update(&self, request: &String) -> Result<(), ExternalError> {
            self.sent.lock().unwrap().push(format!("update {request}"));
            Ok(())
        }
        async fn send_delete(&self, _: &str) -> Result<(), ExternalError> {
            Ok(())
        }
        async fn found_by_name(
            &self,
            _: &crate::api::budget::LiteLLMBudget,
            _: &String,
        ) -> Result<Option<String>, ExternalError> {
            Ok(self.found.map(str::to_owned))
        }
    }

    #[tokio::test]
    async fn a_create_records_the_id_litellm_chose_or_writes_the_object_its_lost_answer_left() {
        let mr: crate::api::budget::LiteLLMBudget = serde_json::from_value(serde_json::json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMBudget",
            "metadata": {"name": "b", "namespace": "ns"},
            "spec": {"instanceRef": {"name": "proxy"}, "forProvider": {}},
        }))
        .unwrap();
        // (case, id LiteLLM chooses, object found by name, sends, external name to record)
        let cases = [
            (
                "the id is the external name",
                None,
                None,
                vec!["create name"],
                None,
            ),
            (
                "LiteLLM chooses the id",
                Some("uuid-1"),
                None,
                vec!["create name"],
                Some("uuid-1"),
            ),
            (
                "a lost create's object, written whole under its id",
                Some("uuid-2"),
                Some("uuid-1"),
                vec!["update uuid-1"],
                Some("uuid-1"),
            ),
        ];
        for (case, chosen, found, sends, id) in cases {
            let mapped = Mapped(Recording {
                chosen,
                found,
                sent: Default::default(),
            });
            let created = mapped.create(&mr, "name").await.expect(case);
            assert_eq!(*mapped.0.sent.lock().unwrap(), sends, "{case}");
            assert_eq!(created.creation.id.as_deref(), id, "{case}");
        }
    }

    #[test]
    fn values_fingerprints_identify_a_value_by_name_without_revealing_it() {
        let secrets =
            |v: &str| BTreeMap::from([("api_key".to_owned(), crate::litellm::Secret::new(v))]);
        let a = values_fingerprints(&secrets("sk-upstream-1"));
        assert_eq!(a, values_fingerprints(&secrets("sk-upstream-1")));
        assert_ne!(a, values_fingerprints(&secrets("sk-upstream-2")));
        let print = &a["api_key"];
        assert!(
            print.starts_with("sha256:") && !print.contains("upstream"),
            "{print}"
        );
        assert!(values_fingerprints(&BTreeMap::new()).is_empty());
    }
}
