//! `LiteLLMAccessGroup` against `/v1/access_group`.
//!
//! LiteLLM chooses a group's id (a UUID) and ignores one in the create
//! body, so the id is the external name once created: until then the
//! external name is the one chosen before the create (`<namespace>.<name>`,
//! never a UUID, so no group has it as id), and the create hands LiteLLM's
//! id over ([`Mapping::send_create`]).
//!
//! LiteLLM keeps no metadata of a group: the owner lives in its name,
//! [`ownership::owned_id`] of the resource (`<cluster>/<namespace>/<name>`),
//! which is unique in the proxy and chosen before the create. A create
//! whose answer was lost left a group of that name, which the next create
//! finds by name and takes (writing it whole) instead of creating a second
//! one; a group of another name counts as unmarked (made in the UI). The
//! name is no setting of its own: LiteLLM's requests name groups by id, so
//! nothing is lost by fixing it, and no resource can take another's name.
//!
//! Every write sends the name, the description, the models, the MCP
//! servers and the teams, each whole (`PUT` replaces each field sent and
//! keeps the others); agents, skills, keys and MCP tool permissions are
//! not managed (never sent: empty on create, kept by `PUT`). Assigning a
//! team writes the group into the team's own `access_group_ids`, which a
//! `LiteLLMTeam`'s `/team/update` never sends, so the two never undo each
//! other.
//!
//! Tenancy (see [`refusal`]): a tenant may own groups, since a group
//! grants only what its owner could grant its teams directly: models by
//! the teams' rule ([`ownership::may_list_models`]), MCP servers and teams
//! by reference to this namespace's resources (raw ids only in the
//! LiteLLMInstance's namespace).

use crate::api::access_group::{AccessGroupObservation, AccessGroupParameters, LiteLLMAccessGroup};
use crate::api::common::{ManagedFields, ManagedStatus};
use crate::litellm;
use crate::litellm::access_groups::{AccessGroup, AccessGroupRequest};
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{same_set, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{may_list_models, owned_id, owner_of_id, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// `forProvider.mcpServerRefs`.
pub const MCP_SERVER_REFS: &str = "mcpServerRefs";
/// `forProvider.teamRefs`.
pub const TEAM_REFS: &str = "teamRefs";

/// Why the group of `namespace` must not be written: outside the
/// LiteLLMInstance's namespace, models that could reach other namespaces'
/// (or none), and raw MCP server or team ids (which could be another
/// namespace's). Names the field, never another tenant.
pub fn refusal(
    params: &AccessGroupParameters,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    if namespace == instance_namespace {
        return None;
    }
    const WHERE: &str = "outside the LiteLLMInstance's namespace";
    if let Err(why) = may_list_models(
        params.models.as_deref(),
        false,
        namespace,
        instance_namespace,
    ) {
        return Some(why);
    }
    if params
        .mcp_server_ids
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        return Some(format!(
            "forProvider.mcpServerIds: raw MCP server ids are refused {WHERE}, since they could \
             name another namespace's server; name this namespace's LiteLLMMCPServers in \
             mcpServerRefs"
        ));
    }
    if params.team_ids.as_ref().is_some_and(|s| !s.is_empty()) {
        return Some(format!(
            "forProvider.teamIds: raw team ids are refused {WHERE}, since they could name \
             another namespace's team (and give it this group's models); name this namespace's \
             LiteLLMTeams in teamRefs"
        ));
    }
    None
}

/// The resolved references then the raw ids of a list.
fn with_raw(refs: &Resolved, field: &str, raw: Option<&Vec<String>>) -> Vec<String> {
    let mut ids = refs.ids(field).unwrap_or_default().to_vec();
    ids.extend(raw.into_iter().flatten().cloned());
    ids
}

/// Create and update body: the owner's name, and every field whole.
pub fn request(
    id: Option<&str>,
    params: &AccessGroupParameters,
    refs: &Resolved,
    owner: &Owner,
) -> AccessGroupRequest {
    AccessGroupRequest {
        access_group_id: id.map(str::to_owned),
        access_group_name: owned_id(owner),
        description: params.description.clone(),
        access_model_names: params.models.clone().unwrap_or_default(),
        access_mcp_server_ids: with_raw(refs, MCP_SERVER_REFS, params.mcp_server_ids.as_ref()),
        assigned_team_ids: with_raw(refs, TEAM_REFS, params.team_ids.as_ref()),
    }
}

/// The fields of `params` the live group does not match (lists as sets).
pub fn diff(
    params: &AccessGroupParameters,
    refs: &Resolved,
    live: &AccessGroup,
    owner: &Owner,
) -> Diff {
    let want = request(None, params, refs, owner);
    let mut diff = Diff::new();
    let mut exactly = |name: &'static str, same: bool| {
        if !same {
            diff.mark(name);
        }
    };
    exactly(
        "accessGroupName",
        live.access_group_name == want.access_group_name,
    );
    exactly(
        "description",
        live.description.as_deref().unwrap_or_default()
            == want.description.as_deref().unwrap_or_default(),
    );
    exactly(
        "models",
        same_set(Some(&want.access_model_names), &live.access_model_names),
    );
    exactly(
        "mcpServers",
        same_set(
            Some(&want.access_mcp_server_ids),
            &live.access_mcp_server_ids,
        ),
    );
    exactly(
        "teams",
        same_set(Some(&want.assigned_team_ids), &live.assigned_team_ids),
    );
    diff
}

pub fn at_provider(live: &AccessGroup) -> AccessGroupObservation {
    AccessGroupObservation {
        access_group_id: Some(live.access_group_id.clone()),
        access_group_name: Some(live.access_group_name.clone()),
        assigned_team_ids: Some(live.assigned_team_ids.clone()),
        created_at: live.created_at.clone(),
        updated_at: live.updated_at.clone(),
    }
}

/// `/v1/access_group` for one reconciliation.
pub struct AccessGroupMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
}

impl AccessGroupMapping {
    /// The create/update body, or why the group may not be written (before
    /// anything is sent).
    fn body(
        &self,
        id: Option<&str>,
        params: &AccessGroupParameters,
    ) -> Result<AccessGroupRequest, ExternalError> {
        if let Some(why) = refusal(params, &self.owner.namespace, &self.instance_namespace) {
            return Err(ExternalError::Invalid(why));
        }
        Ok(request(id, params, &self.refs, &self.owner))
    }
}

impl ManagedKind for LiteLLMAccessGroup {
    type Parameters = AccessGroupParameters;
    type AtProvider = AccessGroupObservation;
    type External = Mapped<AccessGroupMapping>;
    const NOUN: &'static str = "access group";
    /// The MCP servers it names wait for it: LiteLLM would keep their ids
    /// in the group, under resources that still name them.
    const JOINS: &'static [Joins] = &[Joins::McpServer];

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &AccessGroupParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<AccessGroupObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        let names = |refs: &Option<Vec<crate::api::common::LocalRef>>| -> Vec<String> {
            refs.iter().flatten().map(|r| r.name.clone()).collect()
        };
        let mut refs = Vec::new();
        let servers = names(&params.mcp_server_refs);
        if !servers.is_empty() {
            refs.push(Reference::McpServers {
                field: MCP_SERVER_REFS,
                names: servers,
            });
        }
        let teams = names(&params.team_refs);
        if !teams.is_empty() {
            refs.push(Reference::Teams {
                field: TEAM_REFS,
                names: teams,
            });
        }
        refs
    }
    fn joins(&self) -> Vec<Join> {
        joins(&self.spec.for_provider)
    }
    fn connect(connection: Connection) -> Mapped<AccessGroupMapping> {
        Mapped(AccessGroupMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
        })
    }
}

/// The MCP servers a group joins, by reference and by raw id.
pub fn joins(params: &AccessGroupParameters) -> Vec<Join> {
    let by_ref = params
        .mcp_server_refs
        .iter()
        .flatten()
        .filter_map(|r| join(Joins::McpServer, Some(r), None));
    let by_id = params
        .mcp_server_ids
        .iter()
        .flatten()
        .filter_map(|id| join(Joins::McpServer, None, Some(id)));
    by_ref.chain(by_id).collect()
}

impl Mapping<LiteLLMAccessGroup> for AccessGroupMapping {
    type Live = AccessGroup;
    type Request = AccessGroupRequest;

    async fn read(
        &self,
        _: &LiteLLMAccessGroup,
        id: &str,
    ) -> Result<Option<AccessGroup>, ExternalError> {
        Ok(self.client.access_group_get(id).await?)
    }
    /// The owner its name carries ([`owned_id`]); any other name counts as
    /// unmarked.
    fn owner(&self, _: &str, live: &AccessGroup) -> Option<Owner> {
        owner_of_id(&live.access_group_name)
    }
    fn drift(&self, mr: &LiteLLMAccessGroup, _: &str, live: &AccessGroup) -> Diff {
        diff(&mr.spec.for_provider, &self.refs, live, &self.owner)
    }
    fn at_provider(&self, live: &AccessGroup, _: Option<Fingerprints>) -> AccessGroupObservation {
        at_provider(live)
    }
    async fn request(
        &self,
        mr: &LiteLLMAccessGroup,
        id: &str,
        _: Option<&Diff>,
    ) -> Result<AccessGroupRequest, ExternalError> {
        self.body(Some(id), &mr.spec.for_provider)
    }
    async fn send_create(
        &self,
        request: &AccessGroupRequest,
    ) -> Result<Option<String>, ExternalError> {
        Ok(Some(self.client.access_group_new(request).await?))
    }
    /// The name is this resource's ([`owned_id`]): a create whose answer
    /// was lost, or the group of an earlier resource of the same name.
    async fn found_by_name(
        &self,
        _: &LiteLLMAccessGroup,
        request: &AccessGroupRequest,
    ) -> Result<Option<String>, ExternalError> {
        let found = self
            .client
            .access_group_by_name(&request.access_group_name)
            .await?;
        Ok(found.map(|group| group.access_group_id))
    }
    async fn send_update(&self, request: &AccessGroupRequest) -> Result<(), ExternalError> {
        self.client.access_group_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.access_group_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::LocalRef;

    fn me() -> Owner {
        Owner::of_test("ag")
    }

    fn local(name: &str) -> LocalRef {
        LocalRef { name: name.into() }
    }

    fn params() -> AccessGroupParameters {
        AccessGroupParameters {
            description: Some("research".into()),
            models: Some(vec!["gpt-4o".into(), "ns/local".into()]),
            mcp_server_refs: Some(vec![local("docs")]),
            mcp_server_ids: None,
            team_refs: Some(vec![local("web")]),
            team_ids: None,
        }
    }

    fn refs() -> Resolved {
        Resolved::default()
            .with_ids(MCP_SERVER_REFS, vec!["srv-1".into()])
            .with_ids(TEAM_REFS, vec!["team-1".into()])
    }

    fn live() -> AccessGroup {
        AccessGroup {
            access_group_id: "g-1".into(),
            access_group_name: owned_id(&me()),
            description: Some("research".into()),
            access_model_names: vec!["ns/local".into(), "gpt-4o".into()],
            access_mcp_server_ids: vec!["srv-1".into()],
            assigned_team_ids: vec!["team-1".into()],
            ..AccessGroup::default()
        }
    }

    #[test]
    fn the_request_names_the_owner_and_sends_every_list_whole() {
        let request = request(Some("g-1"), &params(), &refs(), &me());
        assert_eq!(request.access_group_id.as_deref(), Some("g-1"));
        assert_eq!(request.access_group_name, owned_id(&me()));
        assert!(owner_of_id(&request.access_group_name)
            .unwrap()
            .same_resource(&me()));
        assert_eq!(request.access_mcp_server_ids, ["srv-1"]);
        assert_eq!(request.assigned_team_ids, ["team-1"]);
        let raw = AccessGroupParameters {
            team_ids: Some(vec!["t-raw".into()]),
            mcp_server_ids: Some(vec!["m-raw".into()]),
            ..params()
        };
        let request = super::request(None, &raw, &refs(), &me());
        assert_eq!(request.assigned_team_ids, ["team-1", "t-raw"]);
        assert_eq!(request.access_mcp_server_ids, ["srv-1", "m-raw"]);
        let empty = super::request(
            None,
            &AccessGroupParameters::default(),
            &Resolved::default(),
            &me(),
        );
        assert!(empty.access_model_names.is_empty() && empty.assigned_team_ids.is_empty());
    }

    #[test]
    fn diff_table() {
        assert!(
            diff(&params(), &refs(), &live(), &me()).is_empty(),
            "as created"
        );
        type Change = fn(&mut AccessGroup);
        let cases: [(&str, Change, &[&str]); 6] = [
            (
                "renamed in the UI",
                |l| l.access_group_name = "premium".into(),
                &["accessGroupName"],
            ),
            (
                "description edited",
                |l| l.description = None,
                &["description"],
            ),
            (
                "a model added",
                |l| l.access_model_names.push("ns/other".into()),
                &["models"],
            ),
            (
                "a server removed",
                |l| l.access_mcp_server_ids.clear(),
                &["mcpServers"],
            ),
            (
                "a team attached itself",
                |l| l.assigned_team_ids.push("team-2".into()),
                &["teams"],
            ),
            ("order only", |l| l.access_model_names.reverse(), &[]),
        ];
        for (what, change, fields) in cases {
            let mut live = live();
            change(&mut live);
            let diff = diff(&params(), &refs(), &live, &me());
            let marked: Vec<&str> = diff.fields().to_vec();
            assert_eq!(marked, fields, "{what}");
        }
    }

    #[test]
    fn a_tenant_owns_groups_of_its_own_models_servers_and_teams_only() {
        assert_eq!(refusal(&params(), "ns", "ns"), None);
        assert_eq!(refusal(&params(), "ns", "platform"), None);
        let raw_ids = AccessGroupParameters {
            team_ids: Some(vec!["x".into()]),
            mcp_server_ids: Some(vec!["srv".into()]),
            models: Some(vec!["other/any".into()]),
            ..params()
        };
        assert_eq!(refusal(&raw_ids, "platform", "platform"), None);
        let cases = [
            (
                AccessGroupParameters {
                    models: None,
                    ..params()
                },
                "forProvider.models",
            ),
            (
                AccessGroupParameters {
                    models: Some(vec!["t2/theirs".into()]),
                    ..params()
                },
                "forProvider.models",
            ),
            (
                AccessGroupParameters {
                    models: Some(vec!["*".into()]),
                    ..params()
                },
                "forProvider.models",
            ),
            (
                AccessGroupParameters {
                    mcp_server_ids: Some(vec!["srv".into()]),
                    ..params()
                },
                "forProvider.mcpServerIds",
            ),
            (
                AccessGroupParameters {
                    team_ids: Some(vec!["t2.web".into()]),
                    ..params()
                },
                "forProvider.teamIds",
            ),
        ];
        for (params, field) in cases {
            let why = refusal(&params, "ns", "platform").expect(field);
            assert!(why.starts_with(field), "{why}");
        }
    }

    #[test]
    fn servers_by_reference_and_by_id_are_joined() {
        let params = AccessGroupParameters {
            mcp_server_ids: Some(vec!["srv-raw".into()]),
            ..params()
        };
        let joins = joins(&params);
        assert_eq!(joins.len(), 2);
        assert!(joins[0].names(Joins::McpServer, "docs", "srv-1"));
        assert!(joins[1].names(Joins::McpServer, "other", "srv-raw"));
    }
}
