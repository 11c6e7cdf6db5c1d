//! `LiteLLMOrganization` against `/organization/*` (Enterprise-only in
//! LiteLLM; see [`litellm::OrganizationRequest`] for what 1.108.7 does).
//!
//! The same guarantees as the other kinds, on the generic driver:
//!
//! * The organization id is chosen before the create (the external name,
//!   `<namespace>.<name>` by default), so a create whose answer was lost is
//!   found by the next observation instead of being made twice.
//! * The ownership marker goes into the organization's `metadata`, sent
//!   with every write. `/organization/update` merges metadata, so the
//!   comparison (like every kind's) asks only that the entries of
//!   `forProvider.metadata` and the marker are there.
//! * Drift (alias, models, limits, metadata, marker) is corrected each poll
//!   by `/organization/update`, which is only sent for an organization an
//!   observation found.
//! * Deletion waits for the teams of the namespace that belong to the
//!   organization (`organizationRef`/`organizationId`): LiteLLM deletes an
//!   organization's teams, and their keys, with it. Then it is confirmed by
//!   an observation that finds nothing.
//! * Observe-only (`managementPolicies: [Observe]`) imports, and adoption,
//!   follow [`crate::provider::managed::ownership::may_manage`]: unmarked organizations only
//!   from the LiteLLMInstance's namespace, another resource's never.
//!
//! Without a licence every `/organization/*` route answers 403, whatever
//! the body: that is [`ExternalError::Invalid`] naming the kind and the
//! licence (`Synced=False`, retried at the poll interval, never in a fast
//! loop), and a team referencing the organization waits for it to be Ready.
//! A resource being deleted whose organization was never observed
//! (`status.atProvider.organizationId` unset) is let go on that 403: a proxy
//! that refuses every organization call never created it.
//!
//! Members (`forProvider.members`, [`members`]) are a field of the
//! organization, as a team's are of the team: one writer per
//! organization. Their drift (a member added, removed or given another role
//! in the UI) is corrected with the rest; the member calls are sent only
//! when the members differ, after the organization's own update.
//!
//! Tenancy: a tenant (a namespace other than the instance's) may have
//! organizations of its own: an organization grants nothing by itself
//! (LiteLLM gives an organization's teams nothing beyond what the teams
//! themselves are given); it bounds its teams' models and limits. Its
//! `models` follow the teams' rule ([`may_list_models`]), so a tenant's
//! organization cannot name another namespace's models; its teams join it
//! only by `organizationRef` (same namespace), never by raw id; its members
//! are `LiteLLMUser`s of its namespace by `userRef`, never raw ids, and
//! never `org_admin` ([`members::refusal`] says why).

pub mod members;

use std::collections::BTreeMap;

use kube::Resource;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::organization::{
    LiteLLMOrganization, OrganizationObservation, OrganizationParameters,
};
use crate::litellm::{self, Limited, OrganizationInfo, OrganizationRequest};

use crate::provider::kinds::access;
use crate::provider::kinds::limits;
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, money_string, user_metadata, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{may_list_models, metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{Join, Joins};

/// The refusal of a proxy without an Enterprise licence, in the resource's
/// terms.
pub const UNLICENSED: &str = "LiteLLMOrganization: the proxy refused /organization/* (HTTP 403): \
     LiteLLM serves organizations only with an Enterprise licence; license the proxy \
     (LiteLLMInstance spec.licenseSecretRef) or delete this resource";

/// A 403 from `/organization/*` as [`UNLICENSED`]; other errors as they are.
pub fn enterprise(err: litellm::Error) -> ExternalError {
    match err {
        litellm::Error::Forbidden { .. } => ExternalError::Invalid(UNLICENSED.to_owned()),
        err => err.into(),
    }
}

/// Why the organization may not be written from `namespace` (a tenant's,
/// unless it is the instance's), naming the field.
pub fn tenant_refusal(
    params: &OrganizationParameters,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    if namespace == instance_namespace {
        return None;
    }
    if let Some(why) = access::metadata_refusal(params.metadata.as_ref(), true) {
        return Some(why);
    }
    may_list_models(
        params.models.as_deref(),
        false,
        namespace,
        instance_namespace,
    )
    .err()
}

/// What is sent on create: every field set, the alias (the id when unset:
/// LiteLLM requires one), and the metadata with the marker.
pub fn request(id: &str, params: &OrganizationParameters, owner: &Owner) -> OrganizationRequest {
    OrganizationRequest {
        organization_id: id.to_owned(),
        organization_alias: Some(
            params
                .organization_alias
                .clone()
                .unwrap_or_else(|| id.to_owned()),
        ),
        models: params.models.clone(),
        limits: limits::request(&params.limits),
        metadata: Some(metadata_with_marker(params.metadata.as_ref(), owner)),
    }
}

/// What is sent on update: the fields set (an unset alias is left as it
/// is), limits as [`limits::update_request`] says, and the marker.
pub fn update_request(
    id: &str,
    params: &OrganizationParameters,
    owner: &Owner,
    drift: &Diff,
) -> OrganizationRequest {
    OrganizationRequest {
        organization_alias: params.organization_alias.clone(),
        limits: limits::update_request(&params.limits, drift),
        ..request(id, params, owner)
    }
}

/// The fields of `params` the live organization does not match, its
/// members included.
pub fn diff(
    params: &OrganizationParameters,
    refs: &Resolved,
    live: &OrganizationInfo,
    owner: &Owner,
) -> Diff {
    let mut diff = Diff::new();
    diff.field(
        "organizationAlias",
        params.organization_alias.as_deref(),
        live.organization_alias.as_deref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    limits::diff(&mut diff, &params.limits, live.limits());
    diff.metadata(
        "metadata",
        &metadata_with_marker(params.metadata.as_ref(), owner),
        live.metadata.as_ref(),
    );
    members::diff(&mut diff, params, refs, live);
    diff
}

/// `params` with unset fields filled from the live organization, if any is
/// filled.
pub fn late_init(
    params: &OrganizationParameters,
    live: &OrganizationInfo,
) -> Option<OrganizationParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let changed = [
        diff::late_init(
            &mut filled.organization_alias,
            live.organization_alias.clone(),
        ),
        diff::late_init(&mut filled.models, models),
        limits::late_init(&mut filled.limits, live.limits()),
        diff::late_init(&mut filled.metadata, user_metadata(live.metadata.as_ref())),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &OrganizationInfo) -> OrganizationObservation {
    OrganizationObservation {
        organization_id: Some(live.organization_id.clone()),
        organization_alias: live.organization_alias.clone(),
        budget_id: live.budget_id.clone(),
        models: Some(live.models.clone()),
        spend: money_string(live.spend),
        max_budget: money_string(live.limits().max_budget),
        teams: Some(live.teams.len() as i64),
        created_at: live.created_at.clone(),
        members: Some(members::observed(live)),
    }
}

/// Whether the resource's organization was ever observed in LiteLLM.
fn ever_observed(mr: &LiteLLMOrganization) -> bool {
    mr.status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref())
        .is_some_and(|at| at.organization_id.is_some())
}

/// `/organization/*` for one reconciliation.
pub struct OrganizationMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
}

/// One write of an organization: its own request (`None` on an update
/// where only the members differ), then its members.
#[derive(Debug, PartialEq)]
pub struct OrganizationWrite {
    pub organization_id: String,
    pub organization: Option<OrganizationRequest>,
    /// The members to make it have (`None`: left as they are).
    pub members: Option<(Vec<members::Wanted>, crate::api::team::MembersPolicy)>,
}

/// The create (`drift` is `None`) or the update of what observe found
/// different: the organization's request unless only the members differ,
/// and the members when they are set and (on an update) differ.
pub fn write(
    id: &str,
    params: &OrganizationParameters,
    refs: &Resolved,
    owner: &Owner,
    drift: Option<&Diff>,
) -> OrganizationWrite {
    let organization = match drift {
        None => Some(request(id, params, owner)),
        // Only the members differ: the organization is left as it is.
        Some(drift) if drift.fields() == [members::MEMBERS] => None,
        Some(drift) => Some(update_request(id, params, owner, drift)),
    };
    let members = drift
        .is_none_or(|d| d.has(members::MEMBERS))
        .then(|| members::wanted(params, refs))
        .flatten()
        .map(|want| (want, params.members_policy.unwrap_or_default()));
    OrganizationWrite {
        organization_id: id.to_owned(),
        organization,
        members,
    }
}

impl OrganizationMapping {
    /// Makes the organization's members the wanted ones, from the members
    /// LiteLLM lists now.
    async fn sync_members(&self, write: &OrganizationWrite) -> Result<(), ExternalError> {
        let Some((want, policy)) = &write.members else {
            return Ok(());
        };
        let id = &write.organization_id;
        let Some(live) = self
            .client
            .organization_info(id)
            .await
            .map_err(enterprise)?
        else {
            return Ok(());
        };
        let plan = members::plan(Some(want), *policy, &live);
        members::apply(&self.client, id, &plan, enterprise).await
    }
}

impl ManagedKind for LiteLLMOrganization {
    type Parameters = OrganizationParameters;
    type AtProvider = OrganizationObservation;
    type External = Mapped<OrganizationMapping>;
    const NOUN: &'static str = "organization";
    /// Teams of its namespace that belong to it: LiteLLM would delete them
    /// (and their keys) with the organization, under resources that still
    /// hold them.
    const JOINED_AS: Option<Joins> = Some(Joins::Organization);
    /// Its members' users: see [`members`].
    const JOINS: &'static [Joins] = &[Joins::User];

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &OrganizationParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<OrganizationObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        members::references(&self.spec.for_provider)
    }
    fn joins(&self) -> Vec<Join> {
        members::joins(&self.spec.for_provider)
    }
    fn connect(connection: Connection) -> Mapped<OrganizationMapping> {
        Mapped(OrganizationMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
        })
    }
}

/// Every call's 403 is [`UNLICENSED`]; an update (LiteLLM answers 500 for
/// a missing organization) is only sent after an observation found it.
impl Mapping<LiteLLMOrganization> for OrganizationMapping {
    type Live = OrganizationInfo;
    type Request = OrganizationWrite;

    async fn read(
        &self,
        mr: &LiteLLMOrganization,
        id: &str,
    ) -> Result<Option<OrganizationInfo>, ExternalError> {
        match self.client.organization_info(id).await {
            Ok(live) => Ok(live),
            // Deleting what an unlicensed proxy never let exist.
            Err(litellm::Error::Forbidden { .. })
                if mr.meta().deletion_timestamp.is_some() && !ever_observed(mr) =>
            {
                Ok(None)
            }
            Err(err) => Err(enterprise(err)),
        }
    }
    fn owner(&self, _: &str, live: &OrganizationInfo) -> Option<Owner> {
        Owner::from_metadata(live.metadata.as_ref())
    }
    fn drift(&self, mr: &LiteLLMOrganization, _: &str, live: &OrganizationInfo) -> Diff {
        diff(&mr.spec.for_provider, &self.refs, live, &self.owner)
    }
    fn late_init(
        &self,
        params: &OrganizationParameters,
        live: &OrganizationInfo,
    ) -> Option<OrganizationParameters> {
        late_init(params, live)
    }
    fn at_provider(
        &self,
        live: &OrganizationInfo,
        _: Option<Fingerprints>,
    ) -> OrganizationObservation {
        at_provider(live)
    }
    fn connection_details(&self, live: &OrganizationInfo) -> BTreeMap<String, String> {
        BTreeMap::from([("organizationId".to_owned(), live.organization_id.clone())])
    }

    async fn request(
        &self,
        mr: &LiteLLMOrganization,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<OrganizationWrite, ExternalError> {
        let params = &mr.spec.for_provider;
        if let Some(why) = tenant_refusal(params, &self.owner.namespace, &self.instance_namespace) {
            return Err(ExternalError::Invalid(why));
        }
        let tenant = self.owner.namespace != self.instance_namespace;
        if let Some(why) = members::refusal(params, &self.refs, tenant) {
            return Err(ExternalError::Invalid(why));
        }
        Ok(write(id, params, &self.refs, &self.owner, drift))
    }
    async fn send_create(
        &self,
        write: &OrganizationWrite,
    ) -> Result<Option<String>, ExternalError> {
        if let Some(request) = &write.organization {
            self.client
                .organization_new(request)
                .await
                .map_err(enterprise)?;
        }
        self.sync_members(write).await?;
        Ok(None)
    }
    async fn send_update(&self, write: &OrganizationWrite) -> Result<(), ExternalError> {
        if let Some(request) = &write.organization {
            self.client
                .organization_update(request)
                .await
                .map_err(enterprise)?;
        }
        self.sync_members(write).await
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client
            .organization_delete(id)
            .await
            .map_err(enterprise)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;
    use crate::api::Limits;
    use crate::litellm::{OrganizationBudget, OrganizationTeam};
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("acme")
    }

    fn marked(extra: &[(&str, Value)]) -> Option<Map<String, Value>> {
        me().marked(extra)
    }

    fn live() -> OrganizationInfo {
        OrganizationInfo {
            organization_id: "ns.acme".into(),
            organization_alias: Some("Acme".into()),
            budget_id: Some("b-1".into()),
            models: vec!["gpt-4o".into(), "claude".into()],
            metadata: marked(&[("dept", Value::from("ml"))]),
            spend: Some(1.5),
            litellm_budget_table: Some(OrganizationBudget {
                budget_id: Some("b-1".into()),
                max_budget: Some(100.0),
                budget_duration: Some("30d".into()),
                tpm_limit: Some(5000),
                rpm_limit: Some(50),
                max_parallel_requests: Some(8),
                ..OrganizationBudget::default()
            }),
            teams: vec![OrganizationTeam {
                team_id: "ns.web".into(),
            }],
            created_at: Some("2026-12-02T00:00:00Z".into()),
            ..OrganizationInfo::default()
        }
    }

    fn all_set() -> OrganizationParameters {
        OrganizationParameters {
            organization_alias: Some("Acme".into()),
            models: Some(vec!["claude".into(), "gpt-4o".into()]),
            limits: Limits {
                max_budget: Some("100.00".into()),
                budget_duration: Some("30d".into()),
                tpm_limit: Some(5000),
                rpm_limit: Some(50),
                max_parallel_requests: Some(8),
            },
            metadata: Some([("dept".to_owned(), Value::from("ml"))].into()),
            ..OrganizationParameters::default()
        }
    }

    #[test]
    fn diff_table() {
        let cases: Vec<(&str, OrganizationParameters, OrganizationInfo, Vec<&str>)> = vec![
            (
                "nothing set: only the marker matters",
                OrganizationParameters::default(),
                live(),
                vec![],
            ),
            ("equal in every set field", all_set(), live(), vec![]),
            (
                "every field drifted",
                OrganizationParameters {
                    organization_alias: Some("Other".into()),
                    models: Some(vec!["gpt-4o".into()]),
                    limits: Limits {
                        max_budget: Some("100.01".into()),
                        budget_duration: Some("1d".into()),
                        tpm_limit: Some(1),
                        rpm_limit: Some(2),
                        max_parallel_requests: Some(3),
                    },
                    metadata: Some([("dept".to_owned(), Value::from("ops"))].into()),
                    members: Some(vec![]),
                    members_policy: None,
                },
                OrganizationInfo {
                    members: vec![crate::litellm::OrganizationMember {
                        user_id: "ui-added".into(),
                        ..Default::default()
                    }],
                    ..live()
                },
                vec![
                    "organizationAlias",
                    "models",
                    "maxBudget",
                    "budgetDuration",
                    "tpmLimit",
                    "rpmLimit",
                    "maxParallelRequests",
                    "metadata",
                    "members",
                ],
            ),
            (
                "limits set and the budget row gone",
                all_set(),
                OrganizationInfo {
                    litellm_budget_table: None,
                    ..live()
                },
                vec![
                    "maxBudget",
                    "budgetDuration",
                    "tpmLimit",
                    "rpmLimit",
                    "maxParallelRequests",
                ],
            ),
            (
                "an entry LiteLLM kept beyond forProvider.metadata is no drift (it merges)",
                all_set(),
                OrganizationInfo {
                    metadata: marked(&[("dept", Value::from("ml")), ("old", Value::from(1))]),
                    ..live()
                },
                vec![],
            ),
            (
                "a missing marker is drift",
                OrganizationParameters::default(),
                OrganizationInfo {
                    metadata: Some(Map::new()),
                    ..live()
                },
                vec!["metadata"],
            ),
            (
                "another resource's marker is drift",
                OrganizationParameters::default(),
                OrganizationInfo {
                    metadata: Some(metadata_with_marker(None, &Owner::of_test("other"))),
                    ..live()
                },
                vec!["metadata"],
            ),
        ];
        for (name, params, live, want) in cases {
            assert_eq!(
                diff(&params, &Resolved::default(), &live, &me()).fields(),
                want.as_slice(),
                "{name}"
            );
        }
    }

    #[test]
    fn request_sends_set_fields_an_alias_and_the_marker() {
        let params = OrganizationParameters {
            models: Some(vec!["gpt-4o".into()]),
            limits: Limits {
                max_budget: Some("2.50".into()),
                budget_duration: Some("30d".into()),
                ..Limits::default()
            },
            metadata: Some([("dept".to_owned(), Value::from("ml"))].into()),
            ..OrganizationParameters::default()
        };
        let body = serde_json::to_value(request("ns.acme", &params, &me())).unwrap();
        assert_eq!(body["organization_id"], "ns.acme");
        assert_eq!(
            body["organization_alias"], "ns.acme",
            "LiteLLM requires one"
        );
        assert_eq!(body["models"], serde_json::json!(["gpt-4o"]));
        assert_eq!(body["max_budget"], 2.5);
        assert_eq!(body["budget_duration"], "30d");
        assert_eq!(body["metadata"]["dept"], "ml");
        assert_eq!(body["metadata"][MARKER_KEY]["namespace"], "ns");
        assert!(body.get("tpm_limit").is_none());

        let mut drift = Diff::new();
        drift.mark("maxBudget");
        let update =
            serde_json::to_value(update_request("ns.acme", &params, &me(), &drift)).unwrap();
        assert!(update.get("organization_alias").is_none(), "left as it is");
        assert!(
            update.get("budget_duration").is_none(),
            "a duration is sent only when it drifted (it restarts the period)"
        );
        assert_eq!(update["max_budget"], 2.5);
        assert_eq!(update["metadata"][MARKER_KEY]["name"], "acme");
        let named = OrganizationParameters {
            organization_alias: Some("Acme".into()),
            ..params
        };
        let update =
            serde_json::to_value(update_request("ns.acme", &named, &me(), &drift)).unwrap();
        assert_eq!(update["organization_alias"], "Acme");
    }

    #[test]
    fn tenants_list_their_own_models_and_no_settings_in_metadata() {
        let with = |models: Option<Vec<String>>| OrganizationParameters {
            models,
            ..OrganizationParameters::default()
        };
        for models in [
            None,
            Some(vec![]),
            Some(vec!["other/gpt-4o".to_owned()]),
            Some(vec!["*".to_owned()]),
            Some(vec!["all-proxy-models".to_owned()]),
        ] {
            let why = tenant_refusal(&with(models.clone()), "tenant", "platform")
                .unwrap_or_else(|| panic!("{models:?} refused"));
            assert!(why.starts_with("forProvider.models: "), "{why}");
            assert_eq!(
                tenant_refusal(&with(models), "platform", "platform"),
                None,
                "the platform's namespace may"
            );
        }
        for models in [vec!["tenant/mine".to_owned()], vec!["gpt-4o".to_owned()]] {
            assert_eq!(
                tenant_refusal(&with(Some(models)), "tenant", "platform"),
                None
            );
        }
        let logging = OrganizationParameters {
            models: Some(vec!["gpt-4o".into()]),
            metadata: Some([("logging".to_owned(), Value::from("x"))].into()),
            ..OrganizationParameters::default()
        };
        let why = tenant_refusal(&logging, "tenant", "platform").expect("refused");
        assert!(why.starts_with("forProvider.metadata.logging"), "{why}");
    }

    #[test]
    fn late_init_fills_unset_fields_and_then_nothing() {
        let filled = late_init(&OrganizationParameters::default(), &live()).unwrap();
        assert_eq!(filled.organization_alias.as_deref(), Some("Acme"));
        assert_eq!(filled.limits.max_budget.as_deref(), Some("100"));
        assert_eq!(filled.limits.tpm_limit, Some(5000));
        assert_eq!(filled.models.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            filled.metadata.as_ref().map(|m| m.contains_key(MARKER_KEY)),
            Some(false)
        );
        assert_eq!(late_init(&filled, &live()), None);
        let bare = OrganizationInfo {
            organization_id: "x".into(),
            ..OrganizationInfo::default()
        };
        assert_eq!(late_init(&OrganizationParameters::default(), &bare), None);
    }

    #[test]
    fn at_provider_reports_money_the_budget_row_and_the_teams() {
        let observed = at_provider(&live());
        assert_eq!(observed.organization_id.as_deref(), Some("ns.acme"));
        assert_eq!(observed.spend.as_deref(), Some("1.5"));
        assert_eq!(observed.max_budget.as_deref(), Some("100"));
        assert_eq!(observed.budget_id.as_deref(), Some("b-1"));
        assert_eq!(observed.teams, Some(1));
    }

    #[test]
    fn a_403_is_the_licence_refusal_other_errors_stay() {
        let forbidden = litellm::Error::Forbidden {
            op: "GET /organization/info",
            detail: "Organizations are only available for LiteLLM Enterprise users".into(),
        };
        match enterprise(forbidden) {
            ExternalError::Invalid(why) => {
                assert!(why.starts_with("LiteLLMOrganization: "), "{why}");
                assert!(why.contains("Enterprise licence"), "{why}");
                assert!(!ExternalError::Invalid(why).is_retryable());
            }
            other => panic!("{other:?}"),
        }
        let missing = enterprise(litellm::Error::NotFound {
            op: "DELETE /organization/delete",
        });
        assert!(matches!(missing, ExternalError::LiteLLM(_)), "{missing:?}");
    }

    #[test]
    fn a_write_sends_the_organization_unless_only_its_members_differ() {
        let params = OrganizationParameters {
            members: Some(
                serde_json::from_value(serde_json::json!([{"userRef": {"name": "alice"}}]))
                    .unwrap(),
            ),
            ..all_set()
        };
        let refs = Resolved::default().with_ids(members::MEMBERS, vec!["ns.alice".into()]);
        let created = write("ns.acme", &params, &refs, &me(), None);
        assert!(created.organization.is_some());
        let (want, _) = created.members.expect("the members of a create");
        assert_eq!(want[0].user_id, "ns.alice");

        let mut only_members = Diff::new();
        only_members.mark(members::MEMBERS);
        let update = write("ns.acme", &params, &refs, &me(), Some(&only_members));
        assert_eq!(update.organization, None, "nothing but the members sent");
        assert!(update.members.is_some());

        let mut alias = Diff::new();
        alias.mark("organizationAlias");
        let update = write("ns.acme", &params, &refs, &me(), Some(&alias));
        assert!(update.organization.is_some());
        assert_eq!(update.members, None, "members not drifted: no member call");

        let unset = write("ns.acme", &all_set(), &refs, &me(), None);
        assert_eq!(unset.members, None, "members unset: left to LiteLLM");
    }
}
