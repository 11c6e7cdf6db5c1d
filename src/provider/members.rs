//! A team's members (`forProvider.members`) against
//! `/team/member_add|member_update|member_delete`: who should be in the
//! team with which role and budget, what differs from what `/team/info`
//! lists, and the calls that make it so.
//!
//! LiteLLM adds the team's creator as an admin (`default_user_id` for the
//! master key): that member is LiteLLM's own and never drift. A member's
//! budget in the team lives in a budget row of its own (`team_memberships`),
//! compared only when the spec sets it.

use std::collections::BTreeMap;

use crate::api::common::LocalRef;
use crate::api::team::{MemberRole, MembersPolicy, TeamMemberSpec, TeamParameters};
use crate::litellm::{self, MemberRequest, TeamInfo};

use super::dependents::{join, Join, Joins};
use super::diff::{money_f64, Diff};
use super::managed::ExternalError;
use super::resolve::{Reference, Resolved};

/// The `forProvider` field of the members, for references and drift.
pub const MEMBERS: &str = "members";

/// The member LiteLLM adds to every team the master key creates.
pub const PROXY_ADMIN_USER: &str = "default_user_id";

/// One member as wanted: user id, role, budget in the team.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// Its place in `members`, for messages.
    pub index: usize,
    pub user_id: String,
    pub role: MemberRole,
    pub max_budget_in_team: Option<String>,
}

/// The `userRef`s of the members, in order, for resolution.
pub fn references(params: &TeamParameters) -> Vec<Reference> {
    let names: Vec<String> = refs_of(params).map(|r| r.name.clone()).collect();
    if names.is_empty() {
        return Vec::new();
    }
    vec![Reference::Users {
        field: MEMBERS,
        names,
    }]
}

fn refs_of(params: &TeamParameters) -> impl Iterator<Item = &LocalRef> {
    params
        .members
        .iter()
        .flatten()
        .filter_map(|m| m.user_ref.as_ref())
}

/// The users the team joins: a user's deletion waits for the teams that
/// list it (LiteLLM would drop it from them, and the next poll would add
/// it back, creating a user no resource owns).
pub fn joins(params: &TeamParameters) -> Vec<Join> {
    params
        .members
        .iter()
        .flatten()
        .filter_map(|m| join(Joins::User, m.user_ref.as_ref(), m.user_id.as_deref()))
        .collect()
}

/// The members wanted, their `userRef`s resolved; `None` when `members` is
/// unset (left to LiteLLM).
pub fn wanted(params: &TeamParameters, refs: &Resolved) -> Option<Vec<Wanted>> {
    let members = params.members.as_ref()?;
    let mut resolved = refs.ids(MEMBERS).unwrap_or_default().iter();
    Some(
        members
            .iter()
            .enumerate()
            .filter_map(|(index, m)| {
                let user_id = match (&m.user_ref, &m.user_id) {
                    (Some(_), _) => resolved.next()?.clone(),
                    (None, Some(id)) => id.clone(),
                    (None, None) => return None,
                };
                Some(Wanted {
                    index,
                    user_id,
                    role: m.role.unwrap_or_default(),
                    max_budget_in_team: m.max_budget_in_team.clone(),
                })
            })
            .collect(),
    )
}

/// What LiteLLM holds, by user id: role and budget in the team.
fn live(team: &TeamInfo) -> BTreeMap<&str, (&str, Option<f64>)> {
    let budgets: BTreeMap<&str, Option<f64>> = team
        .memberships
        .iter()
        .map(|m| {
            let budget = m.litellm_budget_table.as_ref().and_then(|b| b.max_budget);
            (m.user_id.as_str(), budget)
        })
        .collect();
    team.members_with_roles
        .iter()
        .filter_map(|m| {
            let id = m.user_id.as_deref()?;
            Some((id, (m.role.as_str(), budgets.get(id).copied().flatten())))
        })
        .collect()
}

/// The member calls that make the team's members `want`: adds, updates,
/// and (exclusive) removals of users LiteLLM holds beyond them.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    pub add: Vec<Wanted>,
    /// Members to change, and whether their role changes (else only the
    /// budget is sent).
    pub update: Vec<(Wanted, bool)>,
    pub remove: Vec<String>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.update.is_empty() && self.remove.is_empty()
    }
}

pub fn plan(params: &TeamParameters, refs: &Resolved, team: &TeamInfo) -> Plan {
    let Some(want) = wanted(params, refs) else {
        return Plan::default();
    };
    let have = live(team);
    let mut plan = Plan::default();
    for member in &want {
        match have.get(member.user_id.as_str()) {
            None => plan.add.push(member.clone()),
            Some((role, budget)) => {
                let budget_differs = member
                    .max_budget_in_team
                    .as_deref()
                    .is_some_and(|want| money_f64(want).is_none_or(|want| Some(want) != *budget));
                let role_differs = *role != member.role.as_str();
                if role_differs || budget_differs {
                    plan.update.push((member.clone(), role_differs));
                }
            }
        }
    }
    if params.members_policy.unwrap_or_default() == MembersPolicy::Exclusive {
        plan.remove = have
            .keys()
            .filter(|id| **id != PROXY_ADMIN_USER && !want.iter().any(|w| w.user_id == **id))
            .map(|id| (*id).to_owned())
            .collect();
    }
    plan
}

/// Marks `members` when the team's members differ from the spec.
pub fn diff(diff: &mut Diff, params: &TeamParameters, refs: &Resolved, team: &TeamInfo) {
    if !plan(params, refs, team).is_empty() {
        diff.mark(MEMBERS);
    }
}

/// Why the members may not be written from a tenant's namespace: there a
/// member is a `LiteLLMUser` of the namespace (`userRef`), never a raw id,
/// which could put any user of the proxy into the team.
pub fn tenant_refusal(members: Option<&[TeamMemberSpec]>) -> Option<String> {
    members?.iter().position(|m| m.user_id.is_some()).map(|i| {
        format!(
            "forProvider.members[{i}].userId: outside the LiteLLMInstance's namespace a \
                 member is a LiteLLMUser of this namespace, named by userRef"
        )
    })
}

/// Carries out `plan` on the team `team_id`. An admin role refused for want
/// of an Enterprise licence says so, naming the member.
pub async fn apply(
    client: &litellm::Client,
    team_id: &str,
    plan: &Plan,
) -> Result<(), ExternalError> {
    fn request<'a>(team_id: &'a str, m: &'a Wanted, role: bool) -> MemberRequest<'a> {
        MemberRequest {
            team_id,
            user_id: &m.user_id,
            role: role.then(|| m.role.as_str()),
            max_budget_in_team: m.max_budget_in_team.as_deref().and_then(money_f64),
        }
    }
    // Refused with 403 on add and 400 on update.
    let enterprise = |err: litellm::Error, m: &Wanted| match err {
        litellm::Error::Forbidden { .. } | litellm::Error::Permanent { status: 400, .. }
            if m.role == MemberRole::Admin =>
        {
            ExternalError::Invalid(format!(
                "forProvider.members[{}].role: the proxy refused to make {} a team admin (HTTP \
                 403): LiteLLM assigns team admins only with an Enterprise licence; use role \
                 user or license the proxy",
                m.index, m.user_id
            ))
        }
        err => err.into(),
    };
    for member in &plan.add {
        client
            .team_member_add(&request(team_id, member, true))
            .await
            .map_err(|e| enterprise(e, member))?;
    }
    for (member, role) in &plan.update {
        client
            .team_member_update(&request(team_id, member, *role))
            .await
            .map_err(|e| enterprise(e, member))?;
    }
    for user_id in &plan.remove {
        client.team_member_delete(team_id, user_id).await?;
    }
    Ok(())
}

/// The members' user ids, as LiteLLM lists them (LiteLLM's own admin left
/// out).
pub fn observed(team: &TeamInfo) -> Vec<String> {
    team.members_with_roles
        .iter()
        .filter_map(|m| m.user_id.clone())
        .filter(|id| id != PROXY_ADMIN_USER)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litellm::{Membership, MembershipBudget, TeamMember};

    fn params(members: serde_json::Value) -> TeamParameters {
        serde_json::from_value(serde_json::json!({ "members": members })).unwrap()
    }

    fn team(members: &[(&str, &str, Option<f64>)]) -> TeamInfo {
        let mut all = vec![(PROXY_ADMIN_USER, "admin", None)];
        all.extend_from_slice(members);
        TeamInfo {
            members_with_roles: all
                .iter()
                .map(|(id, role, _)| TeamMember {
                    user_id: Some((*id).into()),
                    user_email: None,
                    role: (*role).into(),
                })
                .collect(),
            memberships: all
                .iter()
                .map(|(id, _, budget)| Membership {
                    user_id: (*id).into(),
                    litellm_budget_table: budget.map(|b| MembershipBudget {
                        max_budget: Some(b),
                    }),
                })
                .collect(),
            ..TeamInfo::default()
        }
    }

    #[test]
    fn the_plan_adds_changes_and_removes_exactly_what_differs() {
        let refs = Resolved::default().with_ids(MEMBERS, vec!["ns.alice".into()]);
        let p = params(serde_json::json!([
            {"userRef": {"name": "alice"}, "maxBudgetInTeam": "5"},
            {"userId": "bob", "role": "user"},
        ]));
        assert_eq!(
            references(&p),
            [Reference::Users {
                field: MEMBERS,
                names: vec!["alice".into()]
            }]
        );
        let live = team(&[("ns.alice", "user", Some(5.0)), ("bob", "user", None)]);
        assert!(plan(&p, &refs, &live).is_empty());
        let live = team(&[("ns.alice", "user", Some(7.0)), ("ui-added", "user", None)]);
        let got = plan(&p, &refs, &live);
        assert_eq!(
            (
                got.add
                    .iter()
                    .map(|m| m.user_id.as_str())
                    .collect::<Vec<_>>(),
                got.update
                    .iter()
                    .map(|(m, role)| (m.user_id.as_str(), *role))
                    .collect::<Vec<_>>(),
                got.remove.clone()
            ),
            (
                vec!["bob"],
                vec![("ns.alice", false)],
                vec!["ui-added".to_owned()]
            )
        );
        let mut additive = p.clone();
        additive.members_policy = Some(MembersPolicy::Additive);
        assert!(plan(&additive, &refs, &live).remove.is_empty());
        assert!(
            plan(&TeamParameters::default(), &refs, &live).is_empty(),
            "unset: left alone"
        );
        assert_eq!(observed(&live), ["ns.alice", "ui-added"]);
    }

    #[test]
    fn tenants_name_members_by_reference_only() {
        let p = params(serde_json::json!([{"userRef": {"name": "a"}}, {"userId": "someone"}]));
        let why = tenant_refusal(p.members.as_deref()).unwrap();
        assert!(why.starts_with("forProvider.members[1].userId:"), "{why}");
        let p = params(serde_json::json!([{"userRef": {"name": "a"}}]));
        assert_eq!(tenant_refusal(p.members.as_deref()), None);
        assert_eq!(joins(&p).len(), 1);
    }
}
