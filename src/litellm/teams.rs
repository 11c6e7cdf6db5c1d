//! Teams: `/team/new`, `/team/info`, `/team/update`, `/team/delete`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint, Fingerprint, List, Listed, Probe, Read, Reply};
use super::{null_as_default, Client, Error, LimitsRequest, UsageRequest};

const TEAM_NEW: Endpoint = endpoint!(POST "/team/new");
static TEAM_INFO: Endpoint = endpoint!(GET "/team/info");
const TEAM_UPDATE: Endpoint = endpoint!(POST "/team/update");
const TEAM_DELETE: Endpoint = endpoint!(POST "/team/delete");
const MEMBER_ADD: Endpoint = endpoint!(POST "/team/member_add");
const MEMBER_UPDATE: Endpoint = endpoint!(POST "/team/member_update");
const MEMBER_DELETE: Endpoint = endpoint!(POST "/team/member_delete");

/// The metadata key under which LiteLLM keeps the id of a team's member
/// defaults' budget row.
const MEMBER_BUDGET_ID: &str = "team_member_budget_id";

/// Body of `/team/new` and `/team/update`. Unset fields are not sent: LiteLLM
/// ignores unknown fields silently and answers 403 for some enterprise-only
/// ones, so only what the caller chose goes on the wire.
///
/// There is no `max_parallel_requests`: LiteLLM 1.108.7 accepts it on both
/// routes and drops it (the team keeps `null`), so sending it would only
/// create a difference that can never be reconciled.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TeamRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub team_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// `max_parallel_requests` left unset (see above).
    #[serde(flatten)]
    pub limits: LimitsRequest,
    #[serde(flatten)]
    pub usage: UsageRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_budget: Option<f64>,
    /// Kept in the team's `litellm_model_table`; an update replaces them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_aliases: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub member_defaults: MemberDefaultsRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    /// `/team/update` replaces the whole map, it does not merge (but keeps
    /// LiteLLM's own entries, [`SYSTEM_METADATA`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Merged field by field by LiteLLM; see [`ObjectPermission`](super::ObjectPermission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_permission: Option<super::ObjectPermission>,
    /// The organization the team belongs to (must exist; `/team/update`
    /// moves the team, checking it against the new organization).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<String>,
}

/// The `metadata` entries LiteLLM writes itself and keeps across updates
/// (`TeamMemberBudgetHandler.SYSTEM_MANAGED_METADATA_KEYS` of 1.108.7): the
/// id of the members' budget row. A caller's value is dropped.
pub const SYSTEM_METADATA: &[&str] = &[MEMBER_BUDGET_ID];

/// What each member of a team gets (`team_member_*` of `/team/new` and
/// `/team/update`). LiteLLM keeps the budget and rate limits in one budget
/// row (`team_member_budget_table`, its id in the team's metadata), created
/// by the first request that sends one of them; `team_member_key_duration`
/// is an Enterprise setting kept in the team's metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemberDefaultsRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_member_budget: Option<f64>,
    /// Like `budget_duration`, sending it restarts the members' budget
    /// period.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_member_budget_duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_member_rpm_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_member_tpm_limit: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_member_key_duration: Option<String>,
}

/// The members' budget row of a team (`team_member_budget_table`; only
/// `/team/info` reports it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemberDefaults {
    pub budget_id: Option<String>,
    pub max_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub rpm_limit: Option<i64>,
    pub tpm_limit: Option<i64>,
}

/// The team's model aliases (`litellm_model_table`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamModelTable {
    #[serde(deserialize_with = "null_as_default")]
    pub model_aliases: BTreeMap<String, String>,
}

/// A team as LiteLLM reports it (the fields a provider compares or reports).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamInfo {
    pub team_id: String,
    pub team_alias: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub max_budget: Option<f64>,
    pub soft_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub budget_reset_at: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
    pub blocked: Option<bool>,
    pub metadata: Option<Map<String, Value>>,
    /// Members and their roles (LiteLLM adds the creator, `default_user_id`
    /// for the master key, as an admin).
    #[serde(deserialize_with = "null_as_default")]
    pub members_with_roles: Vec<TeamMember>,
    /// Members' budgets in the team: only `/team/info` reports them.
    #[serde(skip)]
    pub memberships: Vec<Membership>,
    pub spend: Option<f64>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// `None` when the object never had one.
    pub object_permission: Option<super::ObjectPermission>,
    /// Spend limits by model name (`{"<model>": {"budget_limit": 1.0,
    /// "time_period": "1d"}}`); `{}` when none.
    pub model_max_budget: Option<Map<String, Value>>,
    /// `None` before any alias was set.
    pub litellm_model_table: Option<TeamModelTable>,
    /// Only `/team/info` reports it; `None` before any member default was
    /// set.
    pub team_member_budget_table: Option<MemberDefaults>,
    pub organization_id: Option<String>,
}

impl TeamInfo {
    /// Where the team is listed: `/v2/team/list`, under its id, with the
    /// fingerprint its entry has while the team is as this; `None` where
    /// the entry cannot say all this does (an object permission or member
    /// defaults, which only `/team/info` reports). The members' budgets
    /// ([`TeamInfo::memberships`]) are never in the entry nor in the
    /// fingerprint: a reader who compares them reads the team on its own.
    pub fn listed(&self) -> Option<Listed> {
        let only_info = self.object_permission.is_some()
            || self.team_member_budget_table.is_some()
            || self.names_member_defaults();
        if only_info {
            return None;
        }
        Some(Listed {
            list: List::Teams,
            fingerprint: Fingerprint::of_parsed(self)?,
            entry: None,
        })
    }

    /// Whether the metadata names a member defaults' budget row, as a list
    /// entry shows member defaults it does not carry.
    pub(super) fn names_member_defaults(&self) -> bool {
        self.metadata
            .as_ref()
            .is_some_and(|m| m.contains_key(MEMBER_BUDGET_ID))
    }

    /// The model aliases; `None` before any was set.
    pub fn model_aliases(&self) -> Option<&BTreeMap<String, String>> {
        self.litellm_model_table.as_ref().map(|t| &t.model_aliases)
    }
}

#[derive(Deserialize)]
struct TeamInfoResponse {
    team_info: TeamInfo,
    #[serde(default, deserialize_with = "null_as_default")]
    team_memberships: Vec<Membership>,
}

/// A member of a team as `/team/info` lists it (`members_with_roles`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamMember {
    pub user_id: Option<String>,
    pub user_email: Option<String>,
    /// `admin` or `user`.
    pub role: String,
}

/// A member's budget in a team (`team_memberships` of `/team/info`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Membership {
    pub user_id: String,
    pub litellm_budget_table: Option<MembershipBudget>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MembershipBudget {
    pub max_budget: Option<f64>,
}

/// One member to add or change: the user, its role and its budget in the
/// team (`max_budget_in_team`, a budget row of its own in LiteLLM).
#[derive(Debug, Clone, PartialEq)]
pub struct MemberRequest<'a> {
    pub team_id: &'a str,
    /// On an add, the user by id or (`None`) by `user_email`; updates and
    /// removals name the user by id.
    pub user_id: Option<&'a str>,
    /// On an add without `user_id`: LiteLLM finds the user by email, or
    /// creates one with it.
    pub user_email: Option<&'a str>,
    /// `user` or `admin`; on an update `None` keeps the role (1.108.7
    /// without a licence refuses every update that names a role, with 400
    /// "Assigning team admins is a premium feature").
    pub role: Option<&'a str>,
    pub max_budget_in_team: Option<f64>,
}

#[derive(Serialize)]
struct MemberAddBody<'a> {
    team_id: &'a str,
    member: [MemberBody<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    max_budget_in_team: Option<f64>,
}

#[derive(Serialize)]
struct MemberBody<'a> {
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_email: Option<&'a str>,
}

#[derive(Serialize)]
struct MemberUpdateBody<'a> {
    team_id: &'a str,
    user_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_budget_in_team: Option<f64>,
}

#[derive(Serialize)]
struct MemberDeleteBody<'a> {
    team_id: &'a str,
    user_id: &'a str,
}

#[derive(Deserialize)]
struct TeamUpdateResponse {
    data: TeamInfo,
}

#[derive(Serialize)]
struct TeamDeleteRequest<'a> {
    team_ids: [&'a str; 1],
}

/// The team in an answer of `/team/info`.
fn team_info_of(reply: &Reply) -> Result<Option<TeamInfo>, Error> {
    Ok(reply
        .json_or_none::<TeamInfoResponse>()?
        .map(|response| TeamInfo {
            memberships: response.team_memberships,
            ..response.team_info
        }))
}

impl Client {
    /// Creates a team with the caller's `team_id`; [`Error::Conflict`] if
    /// that id is taken.
    pub async fn team_new(&self, team: &TeamRequest) -> Result<TeamInfo, Error> {
        let reply = self.post(&TEAM_NEW, team).await?;
        // A duplicate team_id is answered 400, like any invalid field; it is
        // a conflict only if the team is really there.
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.team_info(&team.team_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no team has this id.
    pub async fn team_info(&self, team_id: &str) -> Result<Option<TeamInfo>, Error> {
        let reply = self.get(&TEAM_INFO, &[("team_id", team_id)]).await?;
        team_info_of(&reply)
    }

    /// [`Client::team_info`], and the [`Probe`] of its answer: a poll makes
    /// the read again with [`Client::reread`] to learn whether the team
    /// changed. With `budgets_in_team`, the members' budgets
    /// ([`TeamInfo::memberships`]) are read and the probe compares them
    /// too; without, the probe says where the team is listed, where it is,
    /// and a page's entry may stand for the read (`pages::Prefetched`).
    pub async fn team_info_probed(
        &self,
        team_id: &str,
        budgets_in_team: bool,
    ) -> Result<(Option<TeamInfo>, Probe), Error> {
        let read = Read::new(&TEAM_INFO, "team_id", team_id);
        if !budgets_in_team {
            // As a key's (`Client::key_info_probed`).
            if let Some((info, listed)) = self.prefetched().take_team(team_id) {
                return Ok((Some(info), Probe::of_kept(read, listed)));
            }
        }
        let reply = self.read(&read).await?;
        let info = team_info_of(&reply)?;
        let mut probe = reply.probe(read);
        if !budgets_in_team {
            probe.listed = info.as_ref().and_then(TeamInfo::listed);
        }
        Ok((info, probe))
    }

    /// The probe of [`Client::team_info_probed`]'s read of a team without
    /// its members' budgets, before it is made ([`Probe::unread`]): a page
    /// of `/v2/team/list` may stand for it.
    pub fn team_probe_unread(team_id: &str) -> Probe {
        Probe::unread(Read::new(&TEAM_INFO, "team_id", team_id), List::Teams)
    }

    /// The team `probe` read, read again; `None` where it is gone.
    pub(super) async fn team_listed(&self, probe: &Probe) -> Result<Option<TeamInfo>, Error> {
        let reply = self.read(&probe.read).await?;
        team_info_of(&reply)
    }

    /// Adds a user to a team. LiteLLM 1.108.7 refuses the `admin` role
    /// without an Enterprise licence ([`Error::Forbidden`]) and creates a
    /// user that does not exist.
    pub async fn team_member_add(&self, member: &MemberRequest<'_>) -> Result<(), Error> {
        let body = MemberAddBody {
            team_id: member.team_id,
            member: [MemberBody {
                role: member.role.unwrap_or("user"),
                user_id: member.user_id,
                user_email: member.user_email.filter(|_| member.user_id.is_none()),
            }],
            max_budget_in_team: member.max_budget_in_team,
        };
        self.post(&MEMBER_ADD, &body)
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// Changes a member's role and budget in the team; the member is named
    /// by `user_id` (an empty id without it).
    pub async fn team_member_update(&self, member: &MemberRequest<'_>) -> Result<(), Error> {
        let body = MemberUpdateBody {
            team_id: member.team_id,
            user_id: member.user_id.unwrap_or_default(),
            role: member.role,
            max_budget_in_team: member.max_budget_in_team,
        };
        self.post(&MEMBER_UPDATE, &body)
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// Removes a member from the team (the user stays).
    pub async fn team_member_delete(&self, team_id: &str, user_id: &str) -> Result<(), Error> {
        let body = MemberDeleteBody { team_id, user_id };
        self.post(&MEMBER_DELETE, &body)
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// Sets the fields that are `Some`; [`Error::NotFound`] for a missing team.
    pub async fn team_update(&self, team: &TeamRequest) -> Result<TeamInfo, Error> {
        let reply = self.post(&TEAM_UPDATE, team).await?;
        Ok(reply.json::<TeamUpdateResponse>()?.data)
    }

    /// Deletes the team and, with it, every key of the team. `false` when the
    /// team was already gone.
    pub async fn team_delete(&self, team_id: &str) -> Result<bool, Error> {
        let body = TeamDeleteRequest {
            team_ids: [team_id],
        };
        self.post(&TEAM_DELETE, &body).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_only_the_fields_that_are_set() {
        let team = TeamRequest {
            team_id: "t1".into(),
            limits: LimitsRequest {
                max_budget: Some(12.5),
                ..LimitsRequest::default()
            },
            ..TeamRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&team).unwrap(),
            serde_json::json!({"team_id": "t1", "max_budget": 12.5})
        );
    }

    #[test]
    fn reads_team_info_tolerantly() {
        let info: TeamInfoResponse = serde_json::from_value(serde_json::json!({
            "team_id": "t1",
            "team_info": {"team_id": "t1", "models": ["m"], "metadata": null,
                          "spend": 0.0, "unknown": {"nested": true}},
            "keys": []
        }))
        .unwrap();
        assert_eq!(info.team_info.team_id, "t1");
        assert_eq!(info.team_info.models, ["m"]);
        assert_eq!(info.team_info.metadata, None);
        assert_eq!(info.team_info.spend, Some(0.0));
    }
}
