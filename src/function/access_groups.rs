//! Access groups of the XR's team: the XR's `accessGroups`, each a
//! `LiteLLMAccessGroup` in the XR's namespace assigned to the rendered team
//! (`teamRefs`), checked against the value rules, the provider's tenancy
//! rules and the platform's policy. Pure.
//!
//! LiteLLM lets a team use its own models and those of its access groups,
//! so a group's models are as much the team's as its own `models`: each is
//! held to the rule of a team's (and a user's or customer's) models,
//! [`tenancy::model_refusal`]: among the policy's `allowedModels` and, on a
//! shared instance, no other namespace's.

use std::collections::BTreeSet;

use crate::api::common::bounds::{MAX_DESCRIPTION_LENGTH, MAX_MODELS};
use crate::api::input::{FieldPaths, Policy};

use super::error::Problem;
use super::request::{AccessGroupRequest, XrRequest};
use super::rules::{each, list_allowed, over_policy_limit, unique_label, At, Findings};
use super::tenancy::{self, Tenancy};

/// What the rules read, and what they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    tenancy: Tenancy<'a>,
    /// Names of the groups checked so far.
    names: BTreeSet<&'a str>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one group.
type GroupRule = for<'a> fn(&mut Check<'a>, &At, &'a AccessGroupRequest);

/// The rules, in the order they report.
const RULES: [Rule; 3] = [groups_allowed, group_count, groups];

/// The rules of one group, in the order they report.
const GROUP_RULES: [GroupRule; 3] = [group_name, group_description, group_models];

/// Checks the XR's access groups.
pub fn check(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Findings {
    let mut check = Check {
        request,
        paths,
        policy,
        tenancy: *tenancy,
        names: BTreeSet::new(),
        findings: Findings::default(),
    };
    for rule in RULES {
        rule(&mut check);
    }
    check.findings
}

/// XRs may add access groups unless the policy says otherwise.
fn groups_allowed(check: &mut Check<'_>) {
    list_allowed(
        &mut check.findings,
        &check.paths.access_groups,
        check.request.access_groups.len(),
        check.policy.allow_access_groups,
        "access groups",
        "allowAccessGroups",
    );
}

/// No more groups than the policy allows.
fn group_count(check: &mut Check<'_>) {
    let count = check.request.access_groups.len();
    if let Some(message) = over_policy_limit(count, check.policy.max_access_groups, "access groups")
    {
        let field = check.paths.access_groups.clone();
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every group, by the rules of one group ([`GROUP_RULES`]).
fn groups(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(
        check,
        &paths.access_groups,
        &request.access_groups,
        &GROUP_RULES,
    );
}

/// A group's name is a DNS label no group before it has: it is part of
/// its object's name, and through it of the group's name in LiteLLM.
fn group_name<'a>(check: &mut Check<'a>, at: &At, group: &'a AccessGroupRequest) {
    unique_label(
        &group.name,
        "access group",
        at,
        &mut check.names,
        &mut check.findings,
    );
}

/// A group's description has at most [`MAX_DESCRIPTION_LENGTH`]
/// characters, as a `LiteLLMAccessGroup` takes.
fn group_description<'a>(check: &mut Check<'a>, at: &At, group: &'a AccessGroupRequest) {
    if group
        .description
        .as_ref()
        .is_some_and(|d| d.chars().count() > MAX_DESCRIPTION_LENGTH as usize)
    {
        check.findings.fatal.push(Problem::new(
            at.field("description"),
            format!("must have at most {MAX_DESCRIPTION_LENGTH} characters"),
        ));
    }
}

/// A group lists the models it grants: at least one (a group of none
/// grants nothing, and the provider refuses one on a shared instance), at
/// most [`MAX_MODELS`], each named and following the rule of a team's
/// models.
fn group_models<'a>(check: &mut Check<'a>, at: &At, group: &'a AccessGroupRequest) {
    let field = at.field("models");
    let models = match group.models.as_deref() {
        None | Some([]) => {
            check.findings.fatal.push(Problem::new(
                field,
                "must list the models the group grants the team",
            ));
            return;
        }
        Some(models) if models.len() > MAX_MODELS as usize => {
            check.findings.fatal.push(Problem::new(
                field,
                format!(
                    "{} models; a LiteLLMAccessGroup takes at most {MAX_MODELS}",
                    models.len()
                ),
            ));
            return;
        }
        Some(models) => models,
    };
    for (j, model) in models.iter().enumerate() {
        let at = format!("{field}[{j}]");
        let problem = tenancy::model_named(&at, model)
            .or_else(|| tenancy::model_refusal(at, model, check.policy, &check.tenancy));
        check.findings.fatal.extend(problem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(name: &str, models: &[&str]) -> AccessGroupRequest {
        AccessGroupRequest {
            name: name.into(),
            models: Some(models.iter().map(|m| m.to_string()).collect()),
            ..Default::default()
        }
    }

    fn tenant() -> Tenancy<'static> {
        Tenancy {
            namespace: "team-ml",
            shared_instance: true,
            platform_namespace: false,
        }
    }

    fn with_groups(access_groups: Vec<AccessGroupRequest>) -> XrRequest {
        XrRequest {
            access_groups,
            ..Default::default()
        }
    }

    fn run(policy: &Policy, request: &XrRequest) -> Findings {
        check(request, &FieldPaths::default(), policy, &tenant())
    }

    #[test]
    fn good_groups_have_no_findings() {
        let request = with_groups(vec![
            AccessGroupRequest {
                description: Some("the research models".into()),
                ..group("research", &["gpt-4o", "team-ml/mine"])
            },
            group("cheap", &["gpt-4o-mini"]),
        ]);
        let policy = Policy {
            allowed_models: Some(vec!["gpt-4o*".into(), "team-ml/*".into()]),
            allow_access_groups: Some(true),
            max_access_groups: Some(2),
            ..Default::default()
        };
        assert_eq!(run(&policy, &request), Findings::default());
    }

    #[test]
    fn each_broken_rule_is_fatal_and_names_its_field() {
        let policy = Policy {
            allowed_models: Some(vec!["gpt-4o".into(), "gpt-4o-mini".into()]),
            ..Default::default()
        };
        let open = Policy::default();
        let one = |g: AccessGroupRequest| with_groups(vec![g]);
        let cases: Vec<(&str, Policy, XrRequest, &str, &str)> = vec![
            (
                "groups the policy does not allow",
                Policy {
                    allow_access_groups: Some(false),
                    ..Default::default()
                },
                one(group("a", &["gpt-4o"])),
                "spec.accessGroups",
                "input.policy.allowAccessGroups",
            ),
            (
                "more groups than the policy allows",
                Policy {
                    max_access_groups: Some(1),
                    ..Default::default()
                },
                with_groups(vec![group("a", &["m"]), group("b", &["m"])]),
                "spec.accessGroups",
                "2 access groups requested, policy allows at most 1",
            ),
            (
                "a name no DNS label",
                open.clone(),
                one(group("Research", &["m"])),
                "spec.accessGroups[0].name",
                "must be a DNS label",
            ),
            (
                "two groups of one name",
                open.clone(),
                with_groups(vec![group("a", &["m"]), group("a", &["m"])]),
                "spec.accessGroups[1].name",
                "duplicate access group name \"a\"",
            ),
            (
                "a description longer than a LiteLLMAccessGroup takes",
                open.clone(),
                one(AccessGroupRequest {
                    description: Some("d".repeat(MAX_DESCRIPTION_LENGTH as usize + 1)),
                    ..group("a", &["m"])
                }),
                "spec.accessGroups[0].description",
                "at most 4096 characters",
            ),
            (
                "no models",
                open.clone(),
                one(AccessGroupRequest {
                    models: None,
                    ..group("a", &[])
                }),
                "spec.accessGroups[0].models",
                "must list the models",
            ),
            (
                "an empty list of models",
                open.clone(),
                one(group("a", &[])),
                "spec.accessGroups[0].models",
                "must list the models",
            ),
            (
                "more models than a LiteLLMAccessGroup takes",
                open.clone(),
                one(AccessGroupRequest {
                    models: Some(vec!["m".into(); MAX_MODELS as usize + 1]),
                    ..group("a", &[])
                }),
                "spec.accessGroups[0].models",
                "takes at most 1024",
            ),
            (
                "a model the policy does not allow",
                policy.clone(),
                one(group("a", &["gpt-4o", "claude-3"])),
                "spec.accessGroups[0].models[1]",
                "model \"claude-3\" is not allowed by policy",
            ),
            (
                "a model of another namespace",
                open.clone(),
                one(group("a", &["team-x/m"])),
                "spec.accessGroups[0].models[0]",
                "may reach other namespaces' models",
            ),
            (
                "every model of the proxy",
                open.clone(),
                one(group("a", &["all-proxy-models"])),
                "spec.accessGroups[0].models[0]",
                "may reach other namespaces' models",
            ),
            (
                "an empty model",
                open.clone(),
                one(group("a", &[""])),
                "spec.accessGroups[0].models[0]",
                "must have 1 to",
            ),
        ];
        let mut wrong = Vec::new();
        for (what, policy, request, field, says) in cases {
            let findings = run(&policy, &request);
            wrong.extend(super::super::rules::unless_one_fatal(
                what, &findings, field, says,
            ));
            assert!(findings.warnings.is_empty() && findings.defaults.is_empty());
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn the_tenancy_rule_holds_only_on_a_shared_instance() {
        let request = with_groups(vec![group("a", &["team-x/m", "*"])]);
        let own = Tenancy {
            shared_instance: false,
            ..tenant()
        };
        let paths = FieldPaths::default();
        let policy = Policy::default();
        assert_eq!(check(&request, &paths, &policy, &own), Findings::default());
        let fields: Vec<String> = check(&request, &paths, &policy, &tenant())
            .fatal
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.accessGroups[0].models[0]",
                "spec.accessGroups[0].models[1]"
            ]
        );
    }

    #[test]
    fn problems_name_the_fields_where_the_input_puts_them() {
        let paths = FieldPaths {
            access_groups: "spec.parameters.groups".into(),
            ..Default::default()
        };
        let request = with_groups(vec![group("a", &[])]);
        let policy = Policy {
            max_access_groups: Some(0),
            ..Default::default()
        };
        let fields: Vec<String> = check(&request, &paths, &policy, &tenant())
            .fatal
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(
            fields,
            ["spec.parameters.groups", "spec.parameters.groups[0].models"]
        );
    }
}
