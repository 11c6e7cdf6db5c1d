//! Users, team members and the users keys belong to: the XR's `users`
//! (each a `LiteLLMUser`), `team.members` (by one of those users, or a
//! LiteLLM user id where allowed) and `keys[].user`, checked against the
//! value rules, the provider's tenancy rules and the platform's policy.
//! Users without models get the team's (each default reported). Pure.

use std::collections::BTreeSet;

use crate::api::common::bounds::MAX_MEMBERS;
use crate::api::input::{FieldPaths, Policy};
use crate::api::user::UserRole;

use super::error::Problem;
use super::request::{Member, XrRequest};
use super::rules::{is_dns_label, is_duration, Findings};
use super::tenancy::{self, Tenancy, SHARED};

/// Longest email LiteLLM's users take (as `LiteLLMUser`).
const MAX_EMAIL: usize = 254;

/// LiteLLM's `models` entry that grants every model of the proxy.
const ALL_PROXY_MODELS: &str = "all-proxy-models";

/// The roles an XR's user may have without `policy.allowedUserRoles`.
pub const DEFAULT_USER_ROLES: [UserRole; 2] =
    [UserRole::InternalUser, UserRole::InternalUserViewer];

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
    check_users(request, paths, policy, tenancy, &mut findings);
    check_members(request, paths, policy, tenancy, &mut findings);
    for (i, key) in request.keys.iter().enumerate() {
        if let Some(user) = &key.user {
            if !request.users.iter().any(|u| &u.name == user) {
                findings.fatal.push(Problem::new(
                    format!("{}[{i}].user", paths.keys),
                    format!("{user:?} {}", no_such_user(request, &paths.users)),
                ));
            }
        }
    }
    findings
}

fn no_such_user(request: &XrRequest, users: &str) -> String {
    let names: Vec<&str> = request.users.iter().map(|u| u.name.as_str()).collect();
    if names.is_empty() {
        format!("names no user of {users}, which has none")
    } else {
        format!("names no user of {users} ({})", names.join(", "))
    }
}

fn check_users(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
    findings: &mut Findings,
) {
    if let Some(limit) = policy.max_users {
        if request.users.len() > limit as usize {
            findings.fatal.push(Problem::new(
                paths.users.clone(),
                format!(
                    "{} users requested, policy allows at most {limit}",
                    request.users.len()
                ),
            ));
        }
    }
    let roles: &[UserRole] = policy
        .allowed_user_roles
        .as_deref()
        .unwrap_or(&DEFAULT_USER_ROLES);
    let mut names = BTreeSet::new();
    let mut emails = BTreeSet::new();
    for (i, user) in request.users.iter().enumerate() {
        let field = |name: &str| format!("{}[{i}].{name}", paths.users);
        if !is_dns_label(&user.name) {
            findings.fatal.push(Problem::new(
                field("name"),
                format!(
                    "{:?} must be a DNS label (lowercase letters, digits and '-', at most 63)",
                    user.name
                ),
            ));
        }
        if !names.insert(user.name.as_str()) {
            findings.fatal.push(Problem::new(
                field("name"),
                format!("duplicate user name {:?}", user.name),
            ));
        }
        if let Some(email) = &user.email {
            if email.is_empty() || email.len() > MAX_EMAIL {
                findings.fatal.push(Problem::new(
                    field("email"),
                    format!("must have 1 to {MAX_EMAIL} characters"),
                ));
            } else if !emails.insert(email.to_ascii_lowercase()) {
                findings.fatal.push(Problem::new(
                    field("email"),
                    format!(
                        "duplicate email {email:?}: LiteLLM keeps emails unique, ignoring case"
                    ),
                ));
            }
        }
        if let Some(role) = user.role {
            if role.is_admin() && tenancy.shared_instance {
                findings.fatal.push(Problem::new(
                    field("role"),
                    format!(
                        "{} is an admin role of the whole proxy, refused {SHARED} (use \
                         internal_user or internal_user_viewer)",
                        role.as_str()
                    ),
                ));
            } else if !roles.contains(&role) {
                let allowed: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
                findings.fatal.push(Problem::new(
                    field("role"),
                    format!(
                        "role {} is not allowed by policy (allowed: {}); the admin roles need \
                         input.policy.allowedUserRoles",
                        role.as_str(),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        match &user.models {
            Some(models) if models.is_empty() => findings.fatal.push(Problem::new(
                field("models"),
                "must not be empty: LiteLLM cannot be told to clear a user's models",
            )),
            Some(models) => {
                for (j, model) in models.iter().enumerate() {
                    let at = format!("{}[{j}]", field("models"));
                    if let Some(allowed) = &policy.allowed_models {
                        if !tenancy::admits(allowed, model) {
                            findings.fatal.push(Problem::new(
                                at,
                                format!(
                                    "model {model:?} is not allowed by policy (allowed: {})",
                                    allowed.join(", ")
                                ),
                            ));
                            continue;
                        }
                    }
                    let own = format!("{}/", tenancy.namespace);
                    if tenancy.shared_instance
                        && !model.starts_with(&own)
                        && (model.contains('/') || model.contains('*') || model == ALL_PROXY_MODELS)
                    {
                        findings.fatal.push(Problem::new(
                            at,
                            format!(
                                "{model:?} may reach other namespaces' models, refused {SHARED}: \
                                 list public model names (without '/' or '*') and this \
                                 namespace's own ({own}<name>)"
                            ),
                        ));
                    }
                }
            }
            None if tenancy.shared_instance => findings.fatal.push(Problem::new(
                field("models"),
                format!(
                    "must list the user's models (or the team's must be set), as the provider \
                     requires {}: LiteLLM gives a user without models every model of the proxy",
                    "outside the LiteLLMInstance's namespace"
                ),
            )),
            None => {}
        }
        if let Some(d) = &user.budget_duration {
            if !is_duration(d) {
                findings.fatal.push(Problem::new(
                    field("budgetDuration"),
                    format!("{d:?} is not a duration: use a positive number followed by s, m, h, d or mo (such as 30d)"),
                ));
            }
        }
    }
}

fn check_members(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
    findings: &mut Findings,
) {
    let Some(members) = &request.team.members else {
        return;
    };
    let list = format!("{}.members", paths.team);
    if members.len() > MAX_MEMBERS as usize {
        findings.fatal.push(Problem::new(
            list.clone(),
            format!(
                "{} members requested; a LiteLLMTeam takes at most {MAX_MEMBERS}",
                members.len()
            ),
        ));
    }
    if let Some(limit) = policy.max_members {
        if members.len() > limit as usize {
            findings.fatal.push(Problem::new(
                list.clone(),
                format!(
                    "{} members requested, policy allows at most {limit}",
                    members.len()
                ),
            ));
        }
    }
    let team_budget = request
        .budget
        .as_ref()
        .and_then(|b| b.max_budget.as_ref())
        .map(|a| a.0);
    let mut seen = BTreeSet::new();
    for (j, member) in members.iter().enumerate() {
        let at = format!("{list}[{j}]");
        let field = |name: &str| format!("{at}.{name}");
        let given = [&member.user, &member.email, &member.user_id]
            .iter()
            .filter(|f| f.is_some())
            .count();
        if given != 1 {
            findings.fatal.push(Problem::new(
                at.clone(),
                "a member names its user by exactly one of user (a name of the XR's users), \
                 email (a user's email) and userId",
            ));
            continue;
        }
        let Some(resolved) = request.resolve(member) else {
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
            findings.fatal.push(Problem::new(
                field(name),
                format!("{what} {}{hint}", no_such_user(request, &paths.users)),
            ));
            continue;
        };
        if let Member::Id(id) = resolved {
            if tenancy.shared_instance {
                findings.fatal.push(Problem::new(
                    field("userId"),
                    format!(
                        "a member by user id is refused {SHARED}: add the user to {} and name \
                         it by user",
                        paths.users
                    ),
                ));
            } else if id.is_empty() {
                findings
                    .fatal
                    .push(Problem::new(field("userId"), "must not be empty"));
            } else if let Some(p) = tenancy::admitted(
                field("userId"),
                "LiteLLM user",
                id,
                "allowedUserIds",
                &policy.allowed_user_ids,
                tenancy,
            ) {
                findings.fatal.push(p);
            }
        }
        if !seen.insert(resolved.clone()) {
            findings.fatal.push(Problem::new(
                at.clone(),
                "names a user another member names already",
            ));
        }
        if member.role == Some(crate::api::team::MemberRole::Admin)
            && policy.allow_team_admins == Some(false)
        {
            findings.fatal.push(Problem::new(
                field("role"),
                "policy does not allow team admins (input.policy.allowTeamAdmins)",
            ));
        }
        if let (Some(budget), Some(team)) = (&member.max_budget_in_team, team_budget) {
            if budget.0 > team {
                findings.warnings.push(Problem::new(
                    field("maxBudgetInTeam"),
                    format!(
                        "{} is above the team budget {team}: the team limit applies first",
                        budget.0
                    ),
                ));
            }
        }
    }
}
