//! `LiteLLMVirtualKey` against `/key/*`.
//!
//! The provider chooses the secret itself and writes it to the connection
//! Secret before LiteLLM ever sees it; the external name is its token (the
//! sha256), so a lost create response is found again by the next observe
//! and the secret can never be lost.

use std::collections::BTreeMap;

use kube::ResourceExt;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::key::{KeyObservation, KeyParameters, LiteLLMVirtualKey};
use crate::litellm::{self, generate_key, token_of, KeyInfo, KeyRequest, Secret};

use super::connection;
use super::diff::{self, money_f64, money_string, user_metadata, Diff};
use super::managed::{Connection, External, ExternalError, ManagedKind, Observation};
use super::ownership::{metadata_with_marker, Owner};
use super::resolve::{Reference, Resolved};

/// Data key of the secret in the connection Secret.
pub const SECRET_KEY: &str = "key";

const TEAM_REF: &str = "teamRef";
const BUDGET_REF: &str = "budgetRef";

/// The team id: the resolved `teamRef`, else `teamId`.
pub fn team_id<'a>(params: &'a KeyParameters, refs: &'a Resolved) -> Option<&'a str> {
    refs.id(TEAM_REF).or(params.team_id.as_deref())
}

/// The budget id: the resolved `budgetRef`, else `budgetId`.
pub fn budget_id<'a>(params: &'a KeyParameters, refs: &'a Resolved) -> Option<&'a str> {
    refs.id(BUDGET_REF).or(params.budget_id.as_deref())
}

/// Settings sent on create and on every update.
pub fn request(params: &KeyParameters, refs: &Resolved, owner: &Owner) -> KeyRequest {
    KeyRequest {
        key_alias: params.key_alias.clone(),
        team_id: team_id(params, refs).map(str::to_owned),
        budget_id: budget_id(params, refs).map(str::to_owned),
        models: params.models.clone(),
        max_budget: params.max_budget.as_deref().and_then(money_f64),
        soft_budget: None,
        budget_duration: params.budget_duration.clone(),
        duration: params.duration.clone(),
        tpm_limit: params.tpm_limit,
        rpm_limit: params.rpm_limit,
        max_parallel_requests: params.max_parallel_requests,
        blocked: params.blocked,
        metadata: Some(metadata_with_marker(params.metadata.as_ref(), owner)),
    }
}

/// `duration` is not compared: LiteLLM turns it into an absolute `expires`
/// at creation, so there is nothing to compare it with afterwards.
pub fn diff(params: &KeyParameters, refs: &Resolved, live: &KeyInfo, owner: &Owner) -> Diff {
    let mut diff = Diff::new();
    diff.field(
        "keyAlias",
        params.key_alias.as_ref(),
        live.key_alias.as_ref(),
    );
    diff.field("teamId", team_id(params, refs), live.team_id.as_deref());
    diff.field(
        "budgetId",
        budget_id(params, refs),
        live.budget_id.as_deref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    diff.money("maxBudget", params.max_budget.as_deref(), live.max_budget);
    diff.field(
        "budgetDuration",
        params.budget_duration.as_ref(),
        live.budget_duration.as_ref(),
    );
    diff.field(
        "tpmLimit",
        params.tpm_limit.as_ref(),
        live.tpm_limit.as_ref(),
    );
    diff.field(
        "rpmLimit",
        params.rpm_limit.as_ref(),
        live.rpm_limit.as_ref(),
    );
    diff.field(
        "maxParallelRequests",
        params.max_parallel_requests.as_ref(),
        live.max_parallel_requests.as_ref(),
    );
    diff.field("blocked", params.blocked.as_ref(), live.blocked.as_ref());
    diff.metadata(
        "metadata",
        &metadata_with_marker(params.metadata.as_ref(), owner),
        live.metadata.as_ref(),
    );
    diff
}

/// Team and budget ids are not late-initialized: with a `teamRef` or
/// `budgetRef` set, filling `teamId`/`budgetId` as well would state the
/// same thing twice.
pub fn late_init(params: &KeyParameters, live: &KeyInfo) -> Option<KeyParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let changed = [
        diff::late_init(&mut filled.key_alias, live.key_alias.clone()),
        diff::late_init(&mut filled.models, models),
        diff::late_init(&mut filled.max_budget, money_string(live.max_budget)),
        diff::late_init(&mut filled.budget_duration, live.budget_duration.clone()),
        diff::late_init(&mut filled.tpm_limit, live.tpm_limit),
        diff::late_init(&mut filled.rpm_limit, live.rpm_limit),
        diff::late_init(
            &mut filled.max_parallel_requests,
            live.max_parallel_requests,
        ),
        diff::late_init(&mut filled.blocked, live.blocked),
        diff::late_init(&mut filled.metadata, user_metadata(live.metadata.as_ref())),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &KeyInfo) -> KeyObservation {
    KeyObservation {
        token: Some(live.token.clone()),
        key_alias: live.key_alias.clone(),
        key_name: live.key_name.clone(),
        team_id: live.team_id.clone(),
        budget_id: live.budget_id.clone(),
        spend: money_string(live.spend),
        expires: live.expires.clone(),
        budget_reset_at: live.budget_reset_at.clone(),
        created_at: live.created_at.clone(),
    }
}

/// The connection Secret of a key: `writeConnectionSecretToRef`, else
/// `<name>-key`, so a generated secret always has a home.
pub fn secret_name(mr: &LiteLLMVirtualKey) -> String {
    mr.spec
        .managed
        .write_connection_secret_to_ref
        .as_ref()
        .map(|r| r.name.clone())
        .unwrap_or_else(|| format!("{}-key", mr.name_any()))
}

/// `/key/*` for one reconciliation.
pub struct KeyExternal {
    client: litellm::Client,
    kube: kube::Client,
    owner: Owner,
    refs: Resolved,
}

impl ManagedKind for LiteLLMVirtualKey {
    type Parameters = KeyParameters;
    type AtProvider = KeyObservation;
    type External = KeyExternal;
    const NOUN: &'static str = "key";

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &KeyParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<KeyObservation>> {
        self.status.as_ref()
    }

    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        let team = params.team_ref.as_ref().map(|r| Reference::Team {
            field: TEAM_REF,
            name: r.name.clone(),
        });
        let budget = params.budget_ref.as_ref().map(|r| Reference::Budget {
            field: BUDGET_REF,
            name: r.name.clone(),
        });
        team.into_iter().chain(budget).collect()
    }

    fn connection_secret_name(&self) -> Option<String> {
        Some(secret_name(self))
    }

    /// Reuses the secret already stored for this key (an earlier attempt
    /// whose id patch or create did not complete), else generates one and
    /// stores it first.
    async fn choose_id(&self, connection: &Connection) -> Result<String, ExternalError> {
        let name = secret_name(self);
        let stored = connection::read(&connection.kube, self, &name)
            .await?
            .and_then(|secret| connection::value(&secret, SECRET_KEY));
        let key = match stored {
            Some(key) => key,
            None => {
                let key = generate_key();
                let data = BTreeMap::from([
                    (SECRET_KEY.to_owned(), key.clone()),
                    (
                        "endpoint".to_owned(),
                        Secret::new(connection.endpoint.clone()),
                    ),
                ]);
                connection::publish(&connection.kube, self, &name, &data).await?;
                key
            }
        };
        Ok(token_of(&key))
    }

    fn connect(connection: Connection) -> KeyExternal {
        KeyExternal {
            client: connection.litellm,
            kube: connection.kube,
            owner: connection.owner,
            refs: connection.refs,
        }
    }
}

impl External<LiteLLMVirtualKey> for KeyExternal {
    async fn observe(
        &self,
        mr: &LiteLLMVirtualKey,
        id: &str,
    ) -> Result<Observation<LiteLLMVirtualKey>, ExternalError> {
        let Some(live) = self.client.key_info(id).await? else {
            return Ok(Observation::absent());
        };
        let params = &mr.spec.for_provider;
        Ok(Observation {
            exists: true,
            owner: Owner::from_metadata(live.metadata.as_ref()),
            drift: diff(params, &self.refs, &live, &self.owner),
            late_init: late_init(params, &live),
            at_provider: Some(at_provider(&live)),
            connection_details: BTreeMap::new(),
        })
    }

    /// Sends exactly the secret stored in the connection Secret, after
    /// checking it is the one the external name stands for.
    async fn create(&self, mr: &LiteLLMVirtualKey, id: &str) -> Result<(), ExternalError> {
        let name = secret_name(mr);
        let key = connection::read(&self.kube, mr, &name)
            .await?
            .and_then(|secret| connection::value(&secret, SECRET_KEY))
            .filter(|key| token_of(key) == id)
            .ok_or_else(|| {
                ExternalError::Invalid(format!(
                    "LiteLLM key {id} does not exist and Secret {name} does not hold its secret; \
                     remove the {} annotation to generate a new key",
                    crate::api::common::EXTERNAL_NAME
                ))
            })?;
        self.client
            .key_generate(
                Some(&key),
                &request(&mr.spec.for_provider, &self.refs, &self.owner),
            )
            .await?;
        Ok(())
    }

    async fn update(&self, mr: &LiteLLMVirtualKey, id: &str) -> Result<(), ExternalError> {
        self.client
            .key_update(id, &request(&mr.spec.for_provider, &self.refs, &self.owner))
            .await?;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.key_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::{ConnectionSecretRef, InstanceRef, LocalRef};
    use crate::api::key::LiteLLMVirtualKeySpec;

    fn me() -> Owner {
        Owner {
            cluster: "c".into(),
            namespace: "ns".into(),
            name: "k".into(),
            uid: "u".into(),
        }
    }

    fn live() -> KeyInfo {
        KeyInfo {
            token: "abc".into(),
            key_alias: Some("ci".into()),
            team_id: Some("ns.web".into()),
            models: vec!["gpt-4o".into()],
            max_budget: Some(10.0),
            metadata: Some(metadata_with_marker(None, &me())),
            ..KeyInfo::default()
        }
    }

    #[test]
    fn diff_uses_the_resolved_team_over_the_literal_id() {
        let by_ref = KeyParameters {
            team_ref: Some(LocalRef { name: "web".into() }),
            ..KeyParameters::default()
        };
        let resolved = Resolved::default().with_id(TEAM_REF, "ns.web");
        assert!(diff(&by_ref, &resolved, &live(), &me()).is_empty());
        let moved = Resolved::default().with_id(TEAM_REF, "ns.other");
        assert_eq!(diff(&by_ref, &moved, &live(), &me()).fields(), ["teamId"]);
        let literal = KeyParameters {
            team_id: Some("ns.web".into()),
            ..KeyParameters::default()
        };
        assert!(diff(&literal, &Resolved::default(), &live(), &me()).is_empty());
    }

    #[test]
    fn diff_table() {
        let cases: Vec<(KeyParameters, Vec<&str>)> = vec![
            (
                KeyParameters {
                    key_alias: Some("ci".into()),
                    models: Some(vec!["gpt-4o".into()]),
                    max_budget: Some("10.00".into()),
                    duration: Some("30d".into()),
                    ..KeyParameters::default()
                },
                vec![],
            ),
            (
                KeyParameters {
                    key_alias: Some("cd".into()),
                    budget_id: Some("b".into()),
                    max_budget: Some("11".into()),
                    blocked: Some(true),
                    metadata: Some([("env".to_owned(), serde_json::Value::from("x"))].into()),
                    ..KeyParameters::default()
                },
                vec!["keyAlias", "budgetId", "maxBudget", "blocked", "metadata"],
            ),
        ];
        for (params, want) in cases {
            assert_eq!(
                diff(&params, &Resolved::default(), &live(), &me()).fields(),
                want.as_slice()
            );
        }
    }

    #[test]
    fn request_carries_resolved_ids_and_the_marker() {
        let params = KeyParameters {
            key_alias: Some("ci".into()),
            team_ref: Some(LocalRef { name: "web".into() }),
            budget_id: Some("b1".into()),
            ..KeyParameters::default()
        };
        let refs = Resolved::default().with_id(TEAM_REF, "ns.web");
        let body = serde_json::to_value(request(&params, &refs, &me())).unwrap();
        assert_eq!(body["team_id"], "ns.web");
        assert_eq!(body["budget_id"], "b1");
        assert_eq!(body["metadata"]["crossplane_owner"]["name"], "k");
        assert!(
            body.get("key").is_none(),
            "the secret is sent by key_generate only"
        );
    }

    #[test]
    fn references_and_secret_name() {
        let mut key = LiteLLMVirtualKey::new(
            "ci",
            LiteLLMVirtualKeySpec {
                managed: ManagedFields {
                    instance_ref: InstanceRef::default(),
                    management_policies: vec![],
                    write_connection_secret_to_ref: None,
                },
                for_provider: KeyParameters {
                    team_ref: Some(LocalRef { name: "web".into() }),
                    budget_ref: Some(LocalRef { name: "b".into() }),
                    ..KeyParameters::default()
                },
            },
        );
        assert_eq!(
            key.references(),
            [
                Reference::Team {
                    field: TEAM_REF,
                    name: "web".into()
                },
                Reference::Budget {
                    field: BUDGET_REF,
                    name: "b".into()
                }
            ]
        );
        assert_eq!(secret_name(&key), "ci-key");
        key.spec.managed.write_connection_secret_to_ref = Some(ConnectionSecretRef {
            name: "mine".into(),
        });
        assert_eq!(key.connection_secret_name().as_deref(), Some("mine"));
    }

    #[test]
    fn late_init_and_at_provider() {
        let filled = late_init(&KeyParameters::default(), &live()).unwrap();
        assert_eq!(filled.key_alias.as_deref(), Some("ci"));
        assert_eq!(filled.team_id, None);
        assert_eq!(
            filled.metadata, None,
            "the marker alone is not user metadata"
        );
        let observed = at_provider(&live());
        assert_eq!(observed.token.as_deref(), Some("abc"));
        assert_eq!(observed.team_id.as_deref(), Some("ns.web"));
    }
}
