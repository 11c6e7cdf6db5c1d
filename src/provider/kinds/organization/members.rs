//! An organization's members (`forProvider.members`) against
//! `/organization/member_add|member_update|member_delete`: who should be in
//! the organization with which role, what differs from the `members` that
//! `/organization/info` lists, and the calls that make it so.
//!
//! The organization is the one writer of its memberships: the members are
//! a field of the `LiteLLMOrganization` (as a team's are of the team), so
//! no two resources can undo each other's list. LiteLLM's `member_add`
//! *creates* a user it does not know, so only users known to exist are
//! added: a `userRef` is resolved only once its `LiteLLMUser` is Ready, and
//! a raw `userId` is read first ([`apply`]). The organization joins its
//! users ([`joins`]): LiteLLM's `/user/delete` drops the user's
//! memberships, and the next poll would add the member back, creating a
//! user no resource owns; so a `LiteLLMUser`'s deletion waits for the
//! organizations that list it.

use std::collections::BTreeMap;

use crate::api::organization::{OrganizationParameters, OrganizationRole};
use crate::api::team::MembersPolicy;
use crate::litellm::{self, OrganizationInfo};

use crate::provider::managed::contract::ExternalError;
use crate::provider::managed::diff::Diff;
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// The `forProvider` field of the members, for references and drift.
pub const MEMBERS: &str = "members";

/// One member as wanted: the user id (of a `userRef`, or given) and role.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// Its place in `members`, for messages.
    pub index: usize,
    pub user_id: String,
    pub role: OrganizationRole,
    /// Named by `userId` (not known to exist: read before it is added).
    pub raw: bool,
}

/// The `userRef`s of the members, in order, for resolution.
pub fn references(params: &OrganizationParameters) -> Vec<Reference> {
    let names: Vec<String> = params
        .members
        .iter()
        .flatten()
        .filter_map(|m| m.user_ref.as_ref().map(|r| r.name.clone()))
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    vec![Reference::Users {
        field: MEMBERS,
        names,
    }]
}

/// The users the organization joins (see the module's header).
pub fn joins(params: &OrganizationParameters) -> Vec<Join> {
    params
        .members
        .iter()
        .flatten()
        .filter_map(|m| join(Joins::User, m.user_ref.as_ref(), m.user_id.as_deref()))
        .collect()
}

/// The members wanted, their `userRef`s resolved; `None` when `members` is
/// unset (left to LiteLLM).
pub fn wanted(params: &OrganizationParameters, refs: &Resolved) -> Option<Vec<Wanted>> {
    let members = params.members.as_ref()?;
    let mut resolved = refs.ids(MEMBERS).unwrap_or_default().iter();
    Some(
        members
            .iter()
            .enumerate()
            .filter_map(|(index, m)| {
                let (user_id, raw) = match (&m.user_ref, &m.user_id) {
                    (Some(_), _) => (resolved.next()?.clone(), false),
                    (None, Some(id)) => (id.clone(), true),
                    (None, None) => return None,
                };
                Some(Wanted {
                    index,
                    user_id,
                    role: m.role.unwrap_or_default(),
                    raw,
                })
            })
            .collect(),
    )
}

/// The member calls that make the organization's members the wanted ones:
/// adds, role changes, and (`Exclusive`) removals of the others.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    pub add: Vec<Wanted>,
    pub update: Vec<Wanted>,
    pub remove: Vec<String>,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.update.is_empty() && self.remove.is_empty()
    }
}

/// The pure member diff: `want` (`None`: members unset, nothing to do)
/// against the members LiteLLM lists.
pub fn plan(want: Option<&[Wanted]>, policy: MembersPolicy, live: &OrganizationInfo) -> Plan {
    let Some(want) = want else {
        return Plan::default();
    };
    let have: BTreeMap<&str, Option<&str>> = live
        .members
        .iter()
        .map(|m| (m.user_id.as_str(), m.user_role.as_deref()))
        .collect();
    let mut plan = Plan::default();
    for member in want {
        match have.get(member.user_id.as_str()) {
            None => plan.add.push(member.clone()),
            Some(role) if *role != Some(member.role.as_str()) => plan.update.push(member.clone()),
            Some(_) => {}
        }
    }
    if policy == MembersPolicy::Exclusive {
        plan.remove = have
            .keys()
            .filter(|id| !want.iter().any(|m| m.user_id == **id))
            .map(|id| (*id).to_owned())
            .collect();
    }
    plan
}

/// Marks `members` when the organization's members differ from the spec.
pub fn diff(
    diff: &mut Diff,
    params: &OrganizationParameters,
    refs: &Resolved,
    live: &OrganizationInfo,
) {
    let want = wanted(params, refs);
    let policy = params.members_policy.unwrap_or_default();
    if !plan(want.as_deref(), policy, live).is_empty() {
        diff.mark(MEMBERS);
    }
}

/// Why the members may not be written, before anything is sent: a user
/// named twice (in every namespace); from a tenant's namespace, a raw
/// `userId` (it could name any user of the proxy, another tenant's among
/// them) or the `org_admin` role (an org admin can add any user of the
/// proxy to the organization by id, and then delete every user whose
/// memberships all lie in organizations it administers: another tenant's
/// user, with its keys).
pub fn refusal(params: &OrganizationParameters, refs: &Resolved, tenant: bool) -> Option<String> {
    let members = params.members.as_deref()?;
    if tenant {
        for (i, m) in members.iter().enumerate() {
            if m.user_id.is_some() {
                return Some(format!(
                    "forProvider.members[{i}].userId: outside the LiteLLMInstance's namespace a \
                     member is a LiteLLMUser of this namespace, named by userRef"
                ));
            }
            if m.role == Some(OrganizationRole::OrgAdmin) {
                return Some(format!(
                    "forProvider.members[{i}].role: org_admin may add any user of the proxy to \
                     the organization and delete users of it; only organizations in the \
                     LiteLLMInstance's namespace may have org admins (use internal_user or \
                     internal_user_viewer)"
                ));
            }
        }
    }
    let want = wanted(params, refs)?;
    want.iter().enumerate().find_map(|(n, m)| {
        want[..n]
            .iter()
            .find(|o| o.user_id == m.user_id)
            .map(|first| {
                format!(
                    "forProvider.members[{}]: names the user of members[{}] again",
                    m.index, first.index
                )
            })
    })
}

/// Carries out `plan` on the organization `organization_id`. A raw
/// `userId` LiteLLM does not know is refused (LiteLLM would create it);
/// a 403 is `enterprise`'s.
pub async fn apply(
    client: &litellm::Client,
    organization_id: &str,
    plan: &Plan,
    enterprise: impl Fn(litellm::Error) -> ExternalError,
) -> Result<(), ExternalError> {
    for member in &plan.add {
        if member.raw && client.user_info(&member.user_id).await?.is_none() {
            return Err(ExternalError::Invalid(format!(
                "forProvider.members[{}].userId: LiteLLM has no user {} (its member_add would \
                 create one that nothing manages); create the user first",
                member.index, member.user_id
            )));
        }
        client
            .organization_member_add(organization_id, &member.user_id, member.role.as_str())
            .await
            .map_err(&enterprise)?;
    }
    for member in &plan.update {
        client
            .organization_member_update(organization_id, &member.user_id, member.role.as_str())
            .await
            .map_err(&enterprise)?;
    }
    for user_id in &plan.remove {
        client
            .organization_member_delete(organization_id, user_id)
            .await
            .map_err(&enterprise)?;
    }
    Ok(())
}

/// The members' user ids, as LiteLLM lists them.
pub fn observed(live: &OrganizationInfo) -> Vec<String> {
    live.members.iter().map(|m| m.user_id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litellm::OrganizationMember;

    fn params(members: serde_json::Value) -> OrganizationParameters {
        serde_json::from_value(serde_json::json!({ "members": members })).unwrap()
    }

    fn org(members: &[(&str, Option<&str>)]) -> OrganizationInfo {
        OrganizationInfo {
            members: members
                .iter()
                .map(|(id, role)| OrganizationMember {
                    user_id: (*id).into(),
                    user_role: role.map(str::to_owned),
                    user_email: None,
                })
                .collect(),
            ..OrganizationInfo::default()
        }
    }

    fn refs() -> Resolved {
        Resolved::default().with_ids(MEMBERS, vec!["ns.alice".into(), "ns.carol".into()])
    }

    /// The spec of every case: alice (by reference, org_admin), bob (by id,
    /// the default role), carol (by reference, viewer).
    fn spec() -> OrganizationParameters {
        params(serde_json::json!([
            {"userRef": {"name": "alice"}, "role": "org_admin"},
            {"userId": "bob"},
            {"userRef": {"name": "carol"}, "role": "internal_user_viewer"},
        ]))
    }

    type Case = (
        &'static str,
        Vec<(&'static str, Option<&'static str>)>,
        MembersPolicy,
        (Vec<&'static str>, Vec<&'static str>, Vec<&'static str>),
    );

    #[test]
    fn the_member_diff_adds_changes_and_removes_exactly_what_differs() {
        let all = vec![
            ("ns.alice", Some("org_admin")),
            ("bob", Some("internal_user")),
            ("ns.carol", Some("internal_user_viewer")),
        ];
        let with = |extra: &[(&'static str, Option<&'static str>)]| {
            let mut members = all.clone();
            members.extend_from_slice(extra);
            members
        };
        let none = (vec![], vec![], vec![]);
        let cases: Vec<Case> = vec![
            (
                "in step",
                all.clone(),
                MembersPolicy::Exclusive,
                none.clone(),
            ),
            (
                "an empty organization: every member added",
                vec![],
                MembersPolicy::Exclusive,
                (vec!["ns.alice", "bob", "ns.carol"], vec![], vec![]),
            ),
            (
                "one removed in the UI: added back",
                vec![all[0], all[2]],
                MembersPolicy::Exclusive,
                (vec!["bob"], vec![], vec![]),
            ),
            (
                "a role changed in the UI: changed back",
                vec![all[0], ("bob", Some("org_admin")), all[2]],
                MembersPolicy::Exclusive,
                (vec![], vec!["bob"], vec![]),
            ),
            (
                "a membership without a role: given one",
                vec![all[0], ("bob", None), all[2]],
                MembersPolicy::Exclusive,
                (vec![], vec!["bob"], vec![]),
            ),
            (
                "one added in the UI: removed",
                with(&[("ui-added", Some("internal_user"))]),
                MembersPolicy::Exclusive,
                (vec![], vec![], vec!["ui-added"]),
            ),
            (
                "one added in the UI, Additive: left alone",
                with(&[("ui-added", Some("internal_user"))]),
                MembersPolicy::Additive,
                none.clone(),
            ),
            (
                "everything at once",
                vec![("ns.alice", Some("internal_user")), ("mallory", None)],
                MembersPolicy::Exclusive,
                (vec!["bob", "ns.carol"], vec!["ns.alice"], vec!["mallory"]),
            ),
        ];
        let want = wanted(&spec(), &refs()).unwrap();
        for (name, live, policy, (add, update, remove)) in cases {
            let got = plan(Some(&want), policy, &org(&live));
            let ids = |m: &[Wanted]| m.iter().map(|m| m.user_id.clone()).collect::<Vec<_>>();
            assert_eq!(ids(&got.add), add, "{name}: add");
            assert_eq!(ids(&got.update), update, "{name}: update");
            assert_eq!(got.remove, remove, "{name}: remove");
            let mut drift = Diff::new();
            let mut params = spec();
            params.members_policy = Some(policy);
            diff(&mut drift, &params, &refs(), &org(&live));
            assert_eq!(drift.has(MEMBERS), !got.is_empty(), "{name}: drift");
        }
        assert!(
            plan(None, MembersPolicy::Exclusive, &org(&all)).is_empty(),
            "members unset: left to LiteLLM"
        );
        let emptied = wanted(&params(serde_json::json!([])), &refs()).unwrap();
        assert_eq!(
            plan(Some(&emptied), MembersPolicy::Exclusive, &org(&all)).remove,
            ["bob", "ns.alice", "ns.carol"],
            "an empty list removes everyone"
        );
    }

    #[test]
    fn members_resolve_in_order_with_their_roles_and_join_their_users() {
        let want = wanted(&spec(), &refs()).unwrap();
        let got: Vec<_> = want
            .iter()
            .map(|m| (m.index, m.user_id.as_str(), m.role.as_str(), m.raw))
            .collect();
        assert_eq!(
            got,
            [
                (0, "ns.alice", "org_admin", false),
                (1, "bob", "internal_user", true),
                (2, "ns.carol", "internal_user_viewer", false),
            ]
        );
        assert_eq!(
            references(&spec()),
            [Reference::Users {
                field: MEMBERS,
                names: vec!["alice".into(), "carol".into()]
            }]
        );
        let joins = joins(&spec());
        assert_eq!(joins.len(), 3);
        assert!(joins[0].names(Joins::User, "alice", "-"));
        assert!(joins[1].names(Joins::User, "-", "bob"));
        assert!(references(&OrganizationParameters::default()).is_empty());
    }

    #[test]
    fn refusals_name_the_member_and_field() {
        let cases: Vec<(&str, serde_json::Value, bool, Option<&str>)> = vec![
            (
                "the platform's raw ids and org admins",
                serde_json::json!([{"userId": "bob", "role": "org_admin"}]),
                false,
                None,
            ),
            (
                "a tenant's raw id",
                serde_json::json!([{"userRef": {"name": "alice"}}, {"userId": "bob"}]),
                true,
                Some("forProvider.members[1].userId: "),
            ),
            (
                "a tenant's org admin",
                serde_json::json!([{"userRef": {"name": "alice"}, "role": "org_admin"}]),
                true,
                Some("forProvider.members[0].role: "),
            ),
            (
                "a tenant's users by reference",
                serde_json::json!([{"userRef": {"name": "alice"}, "role": "internal_user_viewer"}]),
                true,
                None,
            ),
            (
                "a user named twice",
                serde_json::json!([{"userRef": {"name": "alice"}}, {"userId": "ns.alice"}]),
                false,
                Some("forProvider.members[1]: names the user of members[0] again"),
            ),
        ];
        for (name, members, tenant, want) in cases {
            let got = refusal(&params(members), &refs(), tenant);
            match want {
                None => assert_eq!(got, None, "{name}"),
                Some(prefix) => {
                    let got = got.unwrap_or_default();
                    assert!(got.starts_with(prefix), "{name}: {got}");
                }
            }
        }
        assert_eq!(
            refusal(&OrganizationParameters::default(), &refs(), true),
            None
        );
    }
}
