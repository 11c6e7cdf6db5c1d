//! Users, team members and the users keys belong to: the XR's `users`
//! (each a `LiteLLMUser`), `team.members` (by one of those users, or a
//! LiteLLM user id where allowed) and `keys[].user`, checked against the
//! value rules, the provider's tenancy rules and the platform's policy.
//! Users without models get the team's (each default reported). Pure.

use std::collections::BTreeSet;

use crate::api::common::bounds::MAX_MEMBERS;
use crate::api::input::{FieldPaths, Policy};
use crate::api::team::MemberRole;
use crate::api::user::UserRole;

use super::error::Problem;
use super::request::{Member, MemberRequest, UserRequest, XrRequest};
use super::rules::{each, not_a_duration, over_policy_limit, unique_label, At, Findings};
use super::tenancy::{self, Tenancy, SHARED};

/// Longest email LiteLLM's users take (as `LiteLLMUser`).
const MAX_EMAIL: usize = 254;

/// The roles an XR's user may have without `policy.allowedUserRoles`.
pub const DEFAULT_USER_ROLES: [UserRole; 2] =
    [UserRole::InternalUser, UserRole::InternalUserViewer];

/// What the rules of users, members and key owners read, and what they
/// have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    tenancy: Tenancy<'a>,
    /// Names of the users checked so far.
    user_names: BTreeSet<&'a str>,
    /// Emails of the users checked so far, lowercased.
    user_emails: BTreeSet<String>,
    /// Whom the members checked so far name.
    named: BTreeSet<Member<'a>>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one user.
type UserRule = for<'a> fn(&mut Check<'a>, &At, &'a UserRequest);
/// A rule of one member that names a user.
type MemberRule = for<'a> fn(&mut Check<'a>, &At, &Resolved<'a>);

/// A member that names a user ([`resolved`]), and whom it names.
struct Resolved<'a> {
    /// The member as the XR asks for it.
    request: &'a MemberRequest,
    whom: Member<'a>,
}

/// The rules of users, members and key owners, in the order they report.
const RULES: [Rule; 6] = [
    user_count,
    users,
    member_count,
    member_count_allowed,
    members,
    key_owners,
];

/// The rules of one user, in the order they report.
const USER_RULES: [UserRule; 6] = [
    user_name,
    user_email,
    user_role,
    user_models_listed,
    user_models_allowed,
    user_budget_duration,
];

/// The rules of one member that names a user ([`resolved`]), in the
/// order they report.
const MEMBER_RULES: [MemberRule; 4] = [
    member_by_id,
    member_unique,
    member_admin_allowed,
    member_budget_under_team,
];

/// Fills in the users' models (the team's, when the user has none) and
/// checks users, members and key owners.
pub fn review(
    request: &mut XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Findings {
    let mut findings = Findings::default();
    if let Some(team_models) = request.team.models.clone().filter(|m| !m.is_empty()) {
        for (i, user) in request.users.iter_mut().enumerate() {
            if user.models.is_none() {
                findings.defaults.push(Problem::new(
                    format!("{}[{i}].models", paths.users),
                    format!(
                        "not set: the team's models apply: {}",
                        team_models.join(", ")
                    ),
                ));
                user.models = Some(team_models.clone());
            }
        }
    }
    let mut check = Check {
        request,
        paths,
        policy,
        tenancy: *tenancy,
        user_names: BTreeSet::new(),
        user_emails: BTreeSet::new(),
        named: BTreeSet::new(),
        findings,
    };
    for rule in RULES {
        rule(&mut check);
    }
    check.findings
}

/// Why a name matches no user of the XR's `users` (their path), naming the
/// users there are.
fn no_such_user(request: &XrRequest, users: &str) -> String {
    let names: Vec<&str> = request.users.iter().map(|u| u.name.as_str()).collect();
    if names.is_empty() {
        format!("names no user of {users}, which has none")
    } else {
        format!("names no user of {users} ({})", names.join(", "))
    }
}

/// No more users than the policy allows.
fn user_count(check: &mut Check<'_>) {
    let count = check.request.users.len();
    if let Some(message) = over_policy_limit(count, check.policy.max_users, "users") {
        let field = check.paths.users.clone();
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every user, by the rules of one user ([`USER_RULES`]).
fn users(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(check, &paths.users, &request.users, &USER_RULES);
}

/// A user's name is a DNS label no user before it has: it is part of its
/// object's name, and what members and keys name it by.
fn user_name<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    unique_label(
        &user.name,
        "user",
        at,
        &mut check.user_names,
        &mut check.findings,
    );
}

/// A user's email has 1 to [`MAX_EMAIL`] characters, and no user before it
/// has the same one, ignoring case: LiteLLM keeps emails unique.
fn user_email<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    let Some(email) = &user.email else {
        return;
    };
    if email.is_empty() || email.len() > MAX_EMAIL {
        check.findings.fatal.push(Problem::new(
            at.field("email"),
            format!("must have 1 to {MAX_EMAIL} characters"),
        ));
    } else if !check.user_emails.insert(email.to_ascii_lowercase()) {
        check.findings.fatal.push(Problem::new(
            at.field("email"),
            format!("duplicate email {email:?}: LiteLLM keeps emails unique, ignoring case"),
        ));
    }
}

/// A user's role is not an admin role of the whole proxy on a shared
/// instance, and is among the policy's allowed roles
/// ([`DEFAULT_USER_ROLES`] without a list).
fn user_role<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    let Some(role) = user.role else {
        return;
    };
    let roles: &[UserRole] = check
        .policy
        .allowed_user_roles
        .as_deref()
        .unwrap_or(&DEFAULT_USER_ROLES);
    if role.is_admin() && check.tenancy.shared_instance {
        check.findings.fatal.push(Problem::new(
            at.field("role"),
            format!(
                "{} is an admin role of the whole proxy, refused {SHARED} (use \
                 internal_user or internal_user_viewer)",
                role.as_str()
            ),
        ));
    } else if !roles.contains(&role) {
        let allowed: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
        check.findings.fatal.push(Problem::new(
            at.field("role"),
            format!(
                "role {} is not allowed by policy (allowed: {}); the admin roles need \
                 input.policy.allowedUserRoles",
                role.as_str(),
                allowed.join(", ")
            ),
        ));
    }
}

/// A user's models are not an empty list (LiteLLM cannot be told to clear
/// them), and on a shared instance they are set: without models LiteLLM
/// gives the user every model of the proxy.
fn user_models_listed<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    match &user.models {
        Some(models) if models.is_empty() => check.findings.fatal.push(Problem::new(
            at.field("models"),
            "must not be empty: LiteLLM cannot be told to clear a user's models",
        )),
        None if check.tenancy.shared_instance => check.findings.fatal.push(Problem::new(
            at.field("models"),
            format!(
                "must list the user's models (or the team's must be set), as the provider \
                 requires {}: LiteLLM gives a user without models every model of the proxy",
                "outside the LiteLLMInstance's namespace"
            ),
        )),
        Some(_) | None => {}
    }
}

/// Each of a user's models is among the policy's allowed models and, on a
/// shared instance, reaches no other namespace's models.
fn user_models_allowed<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    let Some(models) = &user.models else {
        return;
    };
    for (j, model) in models.iter().enumerate() {
        let at = format!("{}[{j}]", at.field("models"));
        let refusal = tenancy::model_refusal(at, model, check.policy, &check.tenancy);
        check.findings.fatal.extend(refusal);
    }
}

/// A user's `budgetDuration` is a duration.
fn user_budget_duration<'a>(check: &mut Check<'a>, at: &At, user: &'a UserRequest) {
    if let Some(message) = user.budget_duration.as_deref().and_then(not_a_duration) {
        let field = at.field("budgetDuration");
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// The path of the team's members.
fn members_list(paths: &FieldPaths) -> String {
    format!("{}.members", paths.team)
}

/// No more members than a `LiteLLMTeam` takes ([`MAX_MEMBERS`]).
fn member_count(check: &mut Check<'_>) {
    let Some(members) = &check.request.team.members else {
        return;
    };
    if members.len() > MAX_MEMBERS as usize {
        check.findings.fatal.push(Problem::new(
            members_list(check.paths),
            format!(
                "{} members requested; a LiteLLMTeam takes at most {MAX_MEMBERS}",
                members.len()
            ),
        ));
    }
}

/// No more members than the policy allows.
fn member_count_allowed(check: &mut Check<'_>) {
    let Some(members) = &check.request.team.members else {
        return;
    };
    if let Some(message) = over_policy_limit(members.len(), check.policy.max_members, "members") {
        let field = members_list(check.paths);
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every member of the team that names a user ([`resolved`]), by the
/// rules of one member ([`MEMBER_RULES`]).
fn members(check: &mut Check<'_>) {
    let request = check.request;
    let Some(members) = &request.team.members else {
        return;
    };
    let list = members_list(check.paths);
    for (index, member) in members.iter().enumerate() {
        let at = At::new(&list, index);
        let Some(member) = resolved(check, &at, member) else {
            continue;
        };
        for rule in MEMBER_RULES {
            rule(check, &at, &member);
        }
    }
}

/// Whom a member names: exactly one of `user` (a name of the XR's users),
/// `email` (a user's email) and `userId`, and by the first two a user of
/// the XR. `None`, with the problem recorded, when it names none; the
/// member's other rules are then moot.
fn resolved<'a>(check: &mut Check<'a>, at: &At, member: &'a MemberRequest) -> Option<Resolved<'a>> {
    let given = [&member.user, &member.email, &member.user_id]
        .iter()
        .filter(|f| f.is_some())
        .count();
    if given != 1 {
        check.findings.fatal.push(Problem::new(
            at.path.clone(),
            "a member names its user by exactly one of user (a name of the XR's users), \
             email (a user's email) and userId",
        ));
        return None;
    }
    let Some(whom) = check.request.resolve(member) else {
        let (name, what) = match (&member.user, &member.email) {
            (Some(user), _) => ("user", format!("{user:?}")),
            (_, email) => (
                "email",
                format!("{:?}", email.as_deref().unwrap_or_default()),
            ),
        };
        let hint = if name == "email" {
            "; a member by email is one of the XR's users: add it there with this email"
        } else {
            ""
        };
        check.findings.fatal.push(Problem::new(
            at.field(name),
            format!(
                "{what} {}{hint}",
                no_such_user(check.request, &check.paths.users)
            ),
        ));
        return None;
    };
    Some(Resolved {
        request: member,
        whom,
    })
}

/// A member by LiteLLM user id: not on a shared instance, not empty, and
/// under `policy.allowedUserIds`.
fn member_by_id<'a>(check: &mut Check<'a>, at: &At, member: &Resolved<'a>) {
    let Member::Id(id) = member.whom else {
        return;
    };
    if check.tenancy.shared_instance {
        check.findings.fatal.push(Problem::new(
            at.field("userId"),
            format!(
                "a member by user id is refused {SHARED}: add the user to {} and name \
                 it by user",
                check.paths.users
            ),
        ));
    } else if id.is_empty() {
        check
            .findings
            .fatal
            .push(Problem::new(at.field("userId"), "must not be empty"));
    } else if let Some(p) = tenancy::admitted(
        at.field("userId"),
        "LiteLLM user",
        id,
        "allowedUserIds",
        &check.policy.allowed_user_ids,
        &check.tenancy,
    ) {
        check.findings.fatal.push(p);
    }
}

/// No two members name the same user.
fn member_unique<'a>(check: &mut Check<'a>, at: &At, member: &Resolved<'a>) {
    if !check.named.insert(member.whom.clone()) {
        check.findings.fatal.push(Problem::new(
            at.path.clone(),
            "names a user another member names already",
        ));
    }
}

/// A member is a team admin only where the policy allows team admins.
fn member_admin_allowed<'a>(check: &mut Check<'a>, at: &At, member: &Resolved<'a>) {
    if member.request.role == Some(MemberRole::Admin)
        && check.policy.allow_team_admins == Some(false)
    {
        check.findings.fatal.push(Problem::new(
            at.field("role"),
            "policy does not allow team admins (input.policy.allowTeamAdmins)",
        ));
    }
}

/// A member's budget in the team above the team budget is cut by the
/// team's (a warning).
fn member_budget_under_team<'a>(check: &mut Check<'a>, at: &At, member: &Resolved<'a>) {
    let team = check.request.team_budget();
    if let (Some(budget), Some(team)) = (&member.request.max_budget_in_team, team) {
        if budget.0 > team {
            check.findings.warnings.push(Problem::new(
                at.field("maxBudgetInTeam"),
                format!(
                    "{} is above the team budget {team}: the team limit applies first",
                    budget.0
                ),
            ));
        }
    }
}

/// A key's user is one of the XR's users.
fn key_owners(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    for (i, key) in request.keys.iter().enumerate() {
        if let Some(user) = &key.user {
            if !request.users.iter().any(|u| &u.name == user) {
                check.findings.fatal.push(Problem::new(
                    format!("{}[{i}].user", paths.keys),
                    format!("{user:?} {}", no_such_user(request, &paths.users)),
                ));
            }
        }
    }
}
