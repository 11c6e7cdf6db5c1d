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

use crate::provider::managed::contract::ExternalError;
use crate::provider::managed::diff::{money_f64, Diff};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// The `forProvider` field of the members, for references and drift.
pub const MEMBERS: &str = "members";

/// The member LiteLLM adds to every team the master key creates.
pub const PROXY_ADMIN_USER: &str = "default_user_id";

/// Who a wanted member is: a user id (of a `userRef`, or given), or the
/// email of a user LiteLLM finds or creates.
#[derive(Debug, Clone, PartialEq)]
pub enum Who {
    Id(String),
    Email(String),
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Id(id) => f.write_str(id),
            Who::Email(email) => f.write_str(email),
        }
    }
}

/// One member as wanted: the user, role, budget in the team.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// Its place in `members`, for messages.
    pub index: usize,
    pub user: Who,
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

/// Whether a member's budget in the team is set: only then are the
/// members' budgets compared, and only then must the team's reads carry
/// them (`/team/info`; no page of `/v2/team/list` lists them).
pub fn budgets_in_team(params: &TeamParameters) -> bool {
    params
        .members
        .iter()
        .flatten()
        .any(|m| m.max_budget_in_team.is_some())
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
                let user = match (&m.user_ref, &m.user_id, &m.user_email) {
                    (Some(_), _, _) => Who::Id(resolved.next()?.clone()),
                    (None, Some(id), _) => Who::Id(id.clone()),
                    (None, None, Some(email)) => Who::Email(email.clone()),
                    (None, None, None) => return None,
                };
                Some(Wanted {
                    index,
                    user,
                    role: m.role.unwrap_or_default(),
                    max_budget_in_team: m.max_budget_in_team.clone(),
                })
            })
            .collect(),
    )
}

/// One member as LiteLLM holds it: role and budget in the team, email.
struct Held<'a> {
    role: &'a str,
    budget: Option<f64>,
    email: Option<&'a str>,
}

/// What LiteLLM holds, by user id.
fn live(team: &TeamInfo) -> BTreeMap<&str, Held<'_>> {
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
            let held = Held {
                role: m.role.as_str(),
                budget: budgets.get(id).copied().flatten(),
                email: m.user_email.as_deref(),
            };
            Some((id, held))
        })
        .collect()
}

/// The user id LiteLLM holds `who` under, if it is a member (emails
/// compared ignoring case, as LiteLLM keeps them unique).
fn held_as<'a>(who: &Who, have: &BTreeMap<&'a str, Held<'a>>) -> Option<&'a str> {
    match who {
        Who::Id(id) => have.get_key_value(id.as_str()).map(|(id, _)| *id),
        Who::Email(email) => have
            .iter()
            .find(|(_, held)| held.email.is_some_and(|e| e.eq_ignore_ascii_case(email)))
            .map(|(id, _)| *id),
    }
}

/// The member calls that make the team's members `want`: adds, updates,
/// and (exclusive) removals of users LiteLLM holds beyond them.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    pub add: Vec<Wanted>,
    /// Members to change, the user id LiteLLM holds them under, and
    /// whether their role changes (else only the budget is sent).
    pub update: Vec<(Wanted, String, bool)>,
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
    let mut kept: Vec<&str> = Vec::new();
    for member in &want {
        let Some(id) = held_as(&member.user, &have) else {
            plan.add.push(member.clone());
            continue;
        };
        kept.push(id);
        let held = &have[id];
        let budget_differs = member
            .max_budget_in_team
            .as_deref()
            .is_some_and(|want| money_f64(want).is_none_or(|want| Some(want) != held.budget));
        let role_differs = held.role != member.role.as_str();
        if role_differs || budget_differs {
            plan.update
                .push((member.clone(), id.to_owned(), role_differs));
        }
    }
    if params.members_policy.unwrap_or_default() == MembersPolicy::Exclusive {
        plan.remove = have
            .keys()
            .filter(|id| **id != PROXY_ADMIN_USER && !kept.contains(*id))
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
    members?.iter().enumerate().find_map(|(i, m)| {
        let field = match (&m.user_id, &m.user_email) {
            (Some(_), _) => "userId",
            (None, Some(_)) => "userEmail",
            (None, None) => return None,
        };
        Some(format!(
            "forProvider.members[{i}].{field}: outside the LiteLLMInstance's namespace a \
             member is a LiteLLMUser of this namespace, named by userRef"
        ))
    })
}

/// Carries out `plan` on the team `team_id`. An admin role refused for want
/// of an Enterprise licence says so, naming the member.
pub async fn apply(
    client: &litellm::Client,
    team_id: &str,
    plan: &Plan,
) -> Result<(), ExternalError> {
    fn request<'a>(
        team_id: &'a str,
        m: &'a Wanted,
        held_as: Option<&'a str>,
        role: bool,
    ) -> MemberRequest<'a> {
        let (user_id, user_email) = match (&m.user, held_as) {
            (_, Some(id)) => (Some(id), None),
            (Who::Id(id), None) => (Some(id.as_str()), None),
            (Who::Email(email), None) => (None, Some(email.as_str())),
        };
        MemberRequest {
            team_id,
            user_id,
            user_email,
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
                m.index, m.user
            ))
        }
        err => err.into(),
    };
    for member in &plan.add {
        client
            .team_member_add(&request(team_id, member, None, true))
            .await
            .map_err(|e| enterprise(e, member))?;
    }
    for (member, id, role) in &plan.update {
        client
            .team_member_update(&request(team_id, member, Some(id), *role))
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
                    .map(|m| m.user.to_string())
                    .collect::<Vec<_>>(),
                got.update
                    .iter()
                    .map(|(m, id, role)| (m.user.to_string(), id.as_str(), *role))
                    .collect::<Vec<_>>(),
                got.remove.clone()
            ),
            (
                vec!["bob".to_owned()],
                vec![("ns.alice".to_owned(), "ns.alice", false)],
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
    fn a_member_by_email_is_found_by_its_email_and_changed_by_its_id() {
        let p = params(serde_json::json!([
            {"userEmail": "Carol@Example.com", "maxBudgetInTeam": "3"},
        ]));
        let mut live = team(&[("c-1", "user", Some(2.0)), ("other", "user", None)]);
        live.members_with_roles[1].user_email = Some("carol@example.com".into());
        let got = plan(&p, &Resolved::default(), &live);
        assert!(got.add.is_empty(), "already a member: {got:?}");
        assert_eq!(got.update.len(), 1);
        assert_eq!(got.update[0].1, "c-1");
        assert_eq!(got.remove, ["other"]);
        let got = plan(&p, &Resolved::default(), &team(&[]));
        assert_eq!(got.add[0].user, Who::Email("Carol@Example.com".into()));
    }

    #[test]
    fn tenants_name_members_by_reference_only() {
        let p = params(serde_json::json!([{"userRef": {"name": "a"}}, {"userId": "someone"}]));
        let why = tenant_refusal(p.members.as_deref()).unwrap();
        assert!(why.starts_with("forProvider.members[1].userId:"), "{why}");
        let p = params(serde_json::json!([{"userEmail": "x@example.com"}]));
        let why = tenant_refusal(p.members.as_deref()).unwrap();
        assert!(
            why.starts_with("forProvider.members[0].userEmail:"),
            "{why}"
        );
        let p = params(serde_json::json!([{"userRef": {"name": "a"}}]));
        assert_eq!(tenant_refusal(p.members.as_deref()), None);
        assert_eq!(joins(&p).len(), 1);
    }
}
