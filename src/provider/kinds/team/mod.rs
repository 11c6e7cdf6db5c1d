//! `LiteLLMTeam` against `/team/*`.

pub mod logging;
pub mod member_defaults;
pub mod members;

use std::collections::BTreeMap;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::team::{LiteLLMTeam, TeamObservation, TeamParameters};
use crate::litellm::{self, Limited, LiveLimits, LiveUsage, TeamInfo, TeamRequest};

use crate::api::common::{policy_allows, ManagementPolicy};
use crate::provider::kinds::access;
use crate::provider::kinds::limits;
use crate::provider::kinds::permissions::{
    permission_diff, permission_joins, permission_references, permission_refusal,
    permission_request,
};
use crate::provider::managed::contract::{
    Connection, Created, Creation, External, ExternalError, ManagedKind, Observation,
};
use crate::provider::managed::diff::{self, money_f64, money_string, user_metadata, Diff};
use crate::provider::managed::mapped::{Fingerprints, SecretValues};
use crate::provider::managed::ownership::{may_list_models, metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{Join, Joins};

/// The field of a team's organization reference.
pub const ORGANIZATION_REF: &str = "organizationRef";

/// The organization id the team is to be in: its `organizationRef`'s
/// (resolved) or its `organizationId`; `None` leaves it to LiteLLM.
pub fn organization<'a>(params: &'a TeamParameters, refs: &'a Resolved) -> Option<&'a str> {
    match &params.organization_ref {
        Some(_) => refs.id(ORGANIZATION_REF),
        None => params.organization_id.as_deref(),
    }
}

/// Why the team's organization may not be sent from a tenant's namespace:
/// a raw `organizationId` could name any organization of the proxy (and
/// put the team under another tenant's budget and deletion).
pub fn organization_refusal(params: &TeamParameters, tenant: bool) -> Option<String> {
    (tenant && params.organization_id.is_some()).then(|| {
        "forProvider.organizationId: outside the LiteLLMInstance's namespace a team names its \
         organization by organizationRef (a LiteLLMOrganization of this namespace), never by \
         raw id"
            .to_owned()
    })
}

/// What is sent on create and on every update: all fields the user set, and
/// the metadata with the marker (LiteLLM replaces metadata wholesale).
pub fn request(id: &str, params: &TeamParameters, refs: &Resolved, owner: &Owner) -> TeamRequest {
    TeamRequest {
        team_id: id.to_owned(),
        team_alias: params.team_alias.clone(),
        models: params.models.clone(),
        limits: limits::request(&params.limits),
        usage: access::usage_request(&params.usage),
        soft_budget: params.soft_budget.as_deref().and_then(money_f64),
        model_aliases: params.model_aliases.clone(),
        member_defaults: member_defaults::request(&params.member_defaults),
        blocked: params.blocked,
        metadata: Some(metadata_with_marker(params.metadata.as_ref(), owner)),
        object_permission: permission_request(params.object_permission.as_ref(), refs),
        organization_id: organization(params, refs).map(str::to_owned),
    }
}

/// The fields of `params` the live team does not match.
pub fn diff(params: &TeamParameters, refs: &Resolved, live: &TeamInfo, owner: &Owner) -> Diff {
    let mut diff = Diff::new();
    diff.field(
        "teamAlias",
        params.team_alias.as_ref(),
        live.team_alias.as_ref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    limits::diff(&mut diff, &params.limits, live.limits());
    diff.money(
        "softBudget",
        params.soft_budget.as_deref(),
        live.soft_budget,
    );
    // A team with no model table has no aliases.
    diff.field(
        "modelAliases",
        params.model_aliases.as_ref(),
        Some(live.model_aliases().unwrap_or(&BTreeMap::new())),
    );
    member_defaults::diff(&mut diff, &params.member_defaults, live);
    access::usage_diff(
        &mut diff,
        &params.usage,
        LiveUsage::of(live.metadata.as_ref()).with_model_max_budget(live.model_max_budget.as_ref()),
    );
    diff.field("blocked", params.blocked.as_ref(), live.blocked.as_ref());
    diff.metadata(
        "metadata",
        &metadata_with_marker(params.metadata.as_ref(), owner),
        live.metadata.as_ref(),
    );
    permission_diff(
        &mut diff,
        params.object_permission.as_ref(),
        refs,
        live.object_permission.as_ref(),
    );
    members::diff(&mut diff, params, refs, live);
    logging::diff(&mut diff, params, refs, live.metadata.as_ref());
    let field = match params.organization_ref {
        Some(_) => ORGANIZATION_REF,
        None => "organizationId",
    };
    diff.field(
        field,
        organization(params, refs),
        live.organization_id.as_deref(),
    );
    diff
}

/// `params` with unset fields filled from the live team, if any is filled.
pub fn late_init(params: &TeamParameters, live: &TeamInfo) -> Option<TeamParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let changed = [
        diff::late_init(&mut filled.team_alias, live.team_alias.clone()),
        diff::late_init(&mut filled.models, models),
        // LiteLLM keeps no parallel-request limit for a team: a value there
        // would only fail the CRD's rule.
        limits::late_init(
            &mut filled.limits,
            LiveLimits {
                max_parallel_requests: None,
                ..live.limits()
            },
        ),
        diff::late_init(&mut filled.soft_budget, money_string(live.soft_budget)),
        diff::late_init(
            &mut filled.model_aliases,
            live.model_aliases().filter(|a| !a.is_empty()).cloned(),
        ),
        member_defaults::late_init(&mut filled.member_defaults, live),
        diff::late_init(&mut filled.blocked, live.blocked),
        diff::late_init(&mut filled.metadata, {
            let mut metadata = user_metadata(live.metadata.as_ref());
            logging::strip(&mut metadata);
            metadata
        }),
    ];
    changed.contains(&true).then_some(filled)
}

/// What a write sends that LiteLLM reserves for Enterprise licences.
fn reserved(settings: &TeamRequest) -> Vec<(&'static str, &'static str)> {
    let mut reserved = access::usage_reserved(&settings.usage);
    reserved.extend(member_defaults::reserved(&settings.member_defaults));
    reserved
}

/// `status.atProvider` of the live team, with the fingerprints of its
/// callbacks' values to record (see [`logging`]).
pub fn at_provider(live: &TeamInfo, fingerprints: Option<Fingerprints>) -> TeamObservation {
    TeamObservation {
        team_id: Some(live.team_id.clone()),
        team_alias: live.team_alias.clone(),
        models: Some(live.models.clone()),
        spend: money_string(live.spend),
        max_budget: money_string(live.max_budget),
        budget_reset_at: live.budget_reset_at.clone(),
        team_member_budget_id: live
            .team_member_budget_table
            .as_ref()
            .and_then(|row| row.budget_id.clone()),
        blocked: live.blocked,
        created_at: live.created_at.clone(),
        members: Some(members::observed(live)),
        organization_id: live.organization_id.clone(),
        logging: logging::observed(live.metadata.as_ref()),
        secret_fingerprints: fingerprints,
    }
}

/// `/team/*` for one reconciliation.
pub struct TeamExternal {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
    /// The internal hosts the instance lets tenants name
    /// (`spec.tenantMcpServerHosts`), for callback destinations.
    allowed_hosts: Vec<String>,
}

impl TeamExternal {
    /// The team's `models` must not reach other namespaces' models (see
    /// [`may_list_models`]), nor its `objectPermission` other namespaces'
    /// MCP servers (see [`permission_refusal`]); checked before every
    /// write.
    fn check_models(&self, params: &TeamParameters) -> Result<(), ExternalError> {
        let tenant = self.owner.namespace != self.instance_namespace;
        if let Some(why) = access::metadata_refusal(params.metadata.as_ref(), tenant)
            .or_else(|| logging::metadata_refusal(params))
            .or_else(|| logging::refusal(params, &self.refs, tenant, &self.allowed_hosts))
        {
            return Err(ExternalError::Invalid(why));
        }
        let system = params.metadata.iter().flat_map(|m| m.keys());
        if let Some(name) = system
            .into_iter()
            .find(|name| litellm::SYSTEM_METADATA.contains(&name.as_str()))
        {
            // LiteLLM drops it from every write: it would be drift forever.
            return Err(ExternalError::Invalid(format!(
                "forProvider.metadata.{name}: LiteLLM writes this entry of a team's metadata \
                 itself and drops a caller's value"
            )));
        }
        may_list_models(
            params.models.as_deref(),
            false,
            &self.owner.namespace,
            &self.instance_namespace,
        )
        .map_err(ExternalError::Invalid)?;
        if let Some(why) = access::alias_refusal(
            params.model_aliases.as_ref(),
            &self.owner.namespace,
            &self.instance_namespace,
        ) {
            return Err(ExternalError::Invalid(why));
        }
        if tenant {
            if let Some(why) = members::tenant_refusal(params.members.as_deref()) {
                return Err(ExternalError::Invalid(why));
            }
        }
        if let Some(why) = organization_refusal(params, tenant) {
            return Err(ExternalError::Invalid(why));
        }
        match permission_refusal(
            params.object_permission.as_ref(),
            &self.owner.namespace,
            &self.instance_namespace,
        ) {
            Some(why) => Err(ExternalError::Invalid(why)),
            None => Ok(()),
        }
    }
}

impl TeamExternal {
    /// What [`External::observe`] reports of a live team.
    /// `written`: the team was just created with these very values.
    fn observation(
        &self,
        mr: &LiteLLMTeam,
        live: TeamInfo,
        written: bool,
    ) -> Observation<LiteLLMTeam> {
        let params = &mr.spec.for_provider;
        let mut drift = diff(params, &self.refs, &live, &self.owner);
        // The callbacks' values LiteLLM encrypts are compared by the
        // fingerprints of those last written (see `logging`).
        let current = logging::fingerprints(params, &self.refs);
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        if values.changed().next().is_some() {
            drift.mark(logging::FIELD);
        }
        let policies = &mr.spec.managed.management_policies;
        let writes =
            written || (!drift.is_empty() && policy_allows(policies, ManagementPolicy::Update));
        Observation {
            probe: None,
            exists: true,
            owner: Owner::from_metadata(live.metadata.as_ref()),
            drift,
            late_init: late_init(params, &live),
            at_provider: Some(at_provider(&live, values.to_record(writes))),
            connection_details: BTreeMap::from([("teamId".to_owned(), live.team_id)]),
        }
    }

    /// The metadata a write sends: the user's, the marker and the team's
    /// callbacks (those LiteLLM has now, read again, when `logging` is
    /// unset).
    async fn metadata(
        &self,
        params: &TeamParameters,
        id: &str,
        sent: Option<serde_json::Map<String, serde_json::Value>>,
        create: bool,
    ) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ExternalError> {
        let live = match !create && logging::keeps_live(params) {
            true => self.client.team_info(id).await?.and_then(|t| t.metadata),
            false => None,
        };
        Ok(sent.map(|m| logging::with_logging(m, params, &self.refs, live.as_ref())))
    }

    /// Makes the team's members those of `params` (nothing when `members`
    /// is unset), from the members LiteLLM holds now.
    async fn sync_members(&self, params: &TeamParameters, id: &str) -> Result<(), ExternalError> {
        if params.members.is_none() {
            return Ok(());
        }
        let Some(live) = self.client.team_info(id).await? else {
            return Ok(());
        };
        let plan = members::plan(params, &self.refs, &live);
        members::apply(&self.client, id, &plan).await
    }
}

impl ManagedKind for LiteLLMTeam {
    type Parameters = TeamParameters;
    type AtProvider = TeamObservation;
    type External = TeamExternal;
    const NOUN: &'static str = "team";
    const JOINS: &'static [Joins] = &[
        Joins::User,
        Joins::McpServer,
        Joins::VectorStore,
        Joins::Organization,
    ];
    /// Keys of its namespace that join it: LiteLLM would delete them with
    /// the team, under resources that still hold them.
    const JOINED_AS: Option<Joins> = Some(Joins::Team);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &TeamParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<TeamObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        let mut refs = permission_references(params.object_permission.as_ref());
        refs.extend(members::references(params));
        if let Some(organization) = &params.organization_ref {
            refs.push(Reference::Organization {
                field: ORGANIZATION_REF,
                name: organization.name.clone(),
            });
        }
        refs.extend(logging::references(params));
        refs
    }
    /// The MCP servers its `objectPermission` names, its members and its
    /// organization.
    fn joins(&self) -> Vec<Join> {
        let params = &self.spec.for_provider;
        let mut joins = permission_joins(params.object_permission.as_ref());
        joins.extend(members::joins(params));
        joins.extend(crate::provider::watch::joins::join(
            Joins::Organization,
            params.organization_ref.as_ref(),
            params.organization_id.as_deref(),
        ));
        joins
    }
    fn connect(connection: Connection) -> TeamExternal {
        TeamExternal {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
            allowed_hosts: connection.tenant_mcp_server_hosts,
        }
    }
}

impl External<LiteLLMTeam> for TeamExternal {
    async fn observe(
        &self,
        mr: &LiteLLMTeam,
        id: &str,
    ) -> Result<Observation<LiteLLMTeam>, ExternalError> {
        let budgets_in_team = members::budgets_in_team(&mr.spec.for_provider);
        let (live, probe) = self.client.team_info_probed(id, budgets_in_team).await?;
        let mut observation = match live {
            Some(live) => self.observation(mr, live, false),
            None => Observation::absent(),
        };
        observation.probe = Some(probe);
        Ok(observation)
    }

    /// Only a team read without its members' budgets is listed.
    fn listed(&self, mr: &LiteLLMTeam, id: &str) -> Option<crate::litellm::Probe> {
        (!members::budgets_in_team(&mr.spec.for_provider))
            .then(|| crate::litellm::Client::team_probe_unread(id))
    }

    async fn create(
        &self,
        mr: &LiteLLMTeam,
        id: &str,
    ) -> Result<Created<LiteLLMTeam>, ExternalError> {
        self.check_models(&mr.spec.for_provider)?;
        let params = &mr.spec.for_provider;
        let mut settings = request(id, params, &self.refs, &self.owner);
        settings.metadata = self.metadata(params, id, settings.metadata, true).await?;
        let created = self
            .client
            .team_new(&settings)
            .await
            .map_err(|err| access::enterprise(err.into(), &reserved(&settings)))?;
        self.sync_members(&mr.spec.for_provider, id).await?;
        // `/team/new` answers with the team row as written, before the
        // members added above and without the member budget row: a team
        // that asks for either differs from it and is read again.
        Ok(Created {
            creation: Creation::default(),
            answer: Some(self.observation(mr, created, true)),
        })
    }

    async fn update(&self, mr: &LiteLLMTeam, id: &str, drift: &Diff) -> Result<(), ExternalError> {
        self.check_models(&mr.spec.for_provider)?;
        let params = &mr.spec.for_provider;
        let mut settings = TeamRequest {
            limits: limits::update_request(&params.limits, drift),
            member_defaults: member_defaults::update_request(&params.member_defaults, drift),
            ..request(id, params, &self.refs, &self.owner)
        };
        settings.metadata = self.metadata(params, id, settings.metadata, false).await?;
        self.client
            .team_update(&settings)
            .await
            .map_err(|err| access::enterprise(err.into(), &reserved(&settings)))?;
        if drift.has(members::MEMBERS) {
            self.sync_members(params, id).await?;
        }
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.team_delete(id).await?;
        Ok(())
    }

    /// A `/team/new` under a taken `team_id` is answered 400, which
    /// [`litellm::Client::team_new`] reports as a conflict once it has read
    /// the team there: nothing is overwritten or made twice.
    fn create_refuses_existing(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;
    use crate::api::Limits;
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("web")
    }

    fn marked(extra: &[(&str, Value)]) -> Option<Map<String, Value>> {
        me().marked(extra)
    }

    fn live() -> TeamInfo {
        TeamInfo {
            team_id: "ns.web".into(),
            team_alias: Some("Web".into()),
            models: vec!["gpt-4o".into(), "claude".into()],
            max_budget: Some(25.5),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            blocked: Some(false),
            metadata: marked(&[("env", Value::from("prod"))]),
            spend: Some(0.25),
            created_at: Some("2025-01-01T00:00:00Z".into()),
            ..TeamInfo::default()
        }
    }

    #[test]
    fn diff_table() {
        let env: crate::api::FreeForm = [("env".to_owned(), Value::from("prod"))].into();
        let cases: Vec<(&str, TeamParameters, TeamInfo, Vec<&str>)> = vec![
            (
                "nothing set, only the marker matters",
                TeamParameters::default(),
                live(),
                vec![],
            ),
            (
                "equal in every set field",
                TeamParameters {
                    team_alias: Some("Web".into()),
                    models: Some(vec!["claude".into(), "gpt-4o".into()]),
                    limits: Limits {
                        max_budget: Some("25.50".into()),
                        budget_duration: Some("30d".into()),
                        tpm_limit: Some(1000),
                        ..Limits::default()
                    },
                    blocked: Some(false),
                    metadata: Some(env.clone()),
                    ..TeamParameters::default()
                },
                live(),
                vec![],
            ),
            (
                "every field drifted",
                TeamParameters {
                    team_alias: Some("Other".into()),
                    models: Some(vec!["gpt-4o".into()]),
                    limits: Limits {
                        max_budget: Some("25.51".into()),
                        budget_duration: Some("1d".into()),
                        tpm_limit: Some(1),
                        rpm_limit: Some(2),
                        ..Limits::default()
                    },
                    blocked: Some(true),
                    metadata: Some([("env".to_owned(), Value::from("dev"))].into()),
                    ..TeamParameters::default()
                },
                live(),
                vec![
                    "teamAlias",
                    "models",
                    "maxBudget",
                    "budgetDuration",
                    "tpmLimit",
                    "rpmLimit",
                    "blocked",
                    "metadata",
                ],
            ),
            (
                "a missing marker is drift",
                TeamParameters::default(),
                TeamInfo {
                    metadata: None,
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
    fn request_sends_set_fields_and_the_marker() {
        let params = TeamParameters {
            team_alias: Some("Web".into()),
            limits: Limits {
                max_budget: Some("25.50".into()),
                ..Limits::default()
            },
            metadata: Some([("env".to_owned(), Value::from("prod"))].into()),
            ..TeamParameters::default()
        };
        let body =
            serde_json::to_value(request("ns.web", &params, &Resolved::default(), &me())).unwrap();
        assert_eq!(body["team_id"], "ns.web");
        assert_eq!(body["max_budget"], 25.5);
        assert_eq!(body["metadata"]["env"], "prod");
        assert_eq!(body["metadata"][MARKER_KEY]["namespace"], "ns");
        assert!(body.get("models").is_none() && body.get("blocked").is_none());
    }

    #[test]
    fn the_organization_is_sent_compared_and_refused_to_tenants_by_raw_id() {
        let by_ref = TeamParameters {
            organization_ref: Some(crate::api::LocalRef {
                name: "acme".into(),
            }),
            ..TeamParameters::default()
        };
        let refs = Resolved::default().with_id(ORGANIZATION_REF, "ns.acme");
        let body = serde_json::to_value(request("ns.web", &by_ref, &refs, &me())).unwrap();
        assert_eq!(body["organization_id"], "ns.acme");
        let by_id = TeamParameters {
            organization_id: Some("raw-org".into()),
            ..TeamParameters::default()
        };
        let body =
            serde_json::to_value(request("ns.web", &by_id, &Resolved::default(), &me())).unwrap();
        assert_eq!(body["organization_id"], "raw-org");
        let body = serde_json::to_value(request(
            "ns.web",
            &TeamParameters::default(),
            &Resolved::default(),
            &me(),
        ))
        .unwrap();
        assert!(
            body.get("organization_id").is_none(),
            "unset: left to LiteLLM"
        );

        let unset = TeamParameters::default();
        let cases: Vec<(&str, &TeamParameters, Option<&str>, Vec<&str>)> = vec![
            (
                "in the referenced organization",
                &by_ref,
                Some("ns.acme"),
                vec![],
            ),
            (
                "in none, one referenced",
                &by_ref,
                None,
                vec![ORGANIZATION_REF],
            ),
            (
                "moved in the UI",
                &by_ref,
                Some("other"),
                vec![ORGANIZATION_REF],
            ),
            (
                "by raw id, elsewhere",
                &by_id,
                Some("other"),
                vec!["organizationId"],
            ),
            ("unset, in any", &unset, Some("other"), vec![]),
        ];
        for (name, params, live_org, want) in cases {
            let live = TeamInfo {
                organization_id: live_org.map(str::to_owned),
                ..live()
            };
            assert_eq!(
                diff(params, &refs, &live, &me()).fields(),
                want.as_slice(),
                "{name}"
            );
        }
        let why = organization_refusal(&by_id, true).expect("a tenant's raw id");
        assert!(why.starts_with("forProvider.organizationId: "), "{why}");
        assert_eq!(
            organization_refusal(&by_id, false),
            None,
            "the platform may"
        );
        assert_eq!(
            organization_refusal(&by_ref, true),
            None,
            "references are the way"
        );
        let observed = at_provider(
            &TeamInfo {
                organization_id: Some("ns.acme".into()),
                ..live()
            },
            None,
        );
        assert_eq!(observed.organization_id.as_deref(), Some("ns.acme"));
    }

    #[test]
    fn late_init_fills_unset_fields_and_reports_nothing_when_all_are_set() {
        let params = TeamParameters {
            team_alias: Some("Mine".into()),
            ..TeamParameters::default()
        };
        let filled = late_init(&params, &live()).unwrap();
        assert_eq!(filled.team_alias.as_deref(), Some("Mine"));
        assert_eq!(filled.limits.max_budget.as_deref(), Some("25.5"));
        assert_eq!(filled.models.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            filled.metadata.as_ref().map(|m| m.contains_key(MARKER_KEY)),
            Some(false)
        );
        assert_eq!(late_init(&filled, &live()), None);
        let bare = TeamInfo {
            team_id: "x".into(),
            ..TeamInfo::default()
        };
        assert_eq!(late_init(&TeamParameters::default(), &bare), None);
    }

    #[test]
    fn at_provider_reports_money_as_decimal_strings() {
        let observed = at_provider(&live(), None);
        assert_eq!(observed.spend.as_deref(), Some("0.25"));
        assert_eq!(observed.max_budget.as_deref(), Some("25.5"));
        assert_eq!(observed.team_id.as_deref(), Some("ns.web"));
    }
}
