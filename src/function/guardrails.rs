//! Guardrails of the XR's team: the XR's `guardrails`, names of the
//! platform's `LiteLLMGuardrail`s, bounded by the policy's
//! `allowedGuardrails`, with the policy's `requiredGuardrails` always
//! added. Rendered on the `LiteLLMTeam` only: LiteLLM runs a team's
//! guardrails on every request of every key of the team (on top of the
//! key's own, `add_guardrails_from_key_or_team_metadata` of 1.108.7), so
//! the keys need not repeat them, and a key cannot drop them. Pure.
//!
//! Guardrails are the platform's alone (a tenant's `LiteLLMGuardrail` is
//! refused by the provider: it would see other tenants' traffic), so an XR
//! names only what the platform lists: no list, none. LiteLLM reserves team
//! guardrails for Enterprise licences: on an open-source proxy a team with
//! guardrails is `Synced=False`, the reason naming the licence.

use std::collections::BTreeSet;

use crate::api::common::bounds::{MAX_TAGS, MAX_WORD_LENGTH};
use crate::api::input::{FieldPaths, Policy};

use super::error::Problem;
use super::request::XrRequest;
use super::rules::Findings;
use super::tenancy;

/// Metadata entries through which LiteLLM would run (or skip) guardrails
/// the policy does not bound: `guardrails` itself, the guardrail
/// `policies` that attach more, and `disable_global_guardrails`, which
/// turns off the proxy's default-on ones for the team or key.
pub const GUARDRAIL_METADATA: [&str; 3] = ["guardrails", "policies", "disable_global_guardrails"];

/// What the rules read, and what they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    findings: Findings,
}

/// A rule of the guardrails.
type Rule = for<'a> fn(&mut Check<'a>);

/// The rules, in the order they report.
const RULES: [Rule; 4] = [required_named, guardrails_allowed, count, metadata];

/// Checks the XR's guardrails against the value rules and the policy, then
/// adds the policy's required ones to the request (before the XR's own,
/// each once), reporting those the XR did not list as a default.
///
/// A request without `guardrails` and a policy without required ones
/// leaves the team's guardrails to LiteLLM (the provider sends nothing);
/// `guardrails: []` renders an empty list, which removes the team's.
pub fn review(request: &mut XrRequest, paths: &FieldPaths, policy: &Policy) -> Findings {
    let mut check = Check {
        request,
        paths,
        policy,
        findings: Findings::default(),
    };
    for rule in RULES {
        rule(&mut check);
    }
    let mut findings = check.findings;
    if findings.fatal.is_empty() {
        add_required(request, paths, policy, &mut findings);
    }
    findings
}

/// The policy's required guardrails, each once.
fn required(policy: &Policy) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    policy
        .required_guardrails
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|name| seen.insert(*name))
        .collect()
}

/// The guardrails rendered: the required ones, then the XR's own not among
/// them.
fn add_required(
    request: &mut XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    findings: &mut Findings,
) {
    let required = required(policy);
    if required.is_empty() {
        return;
    }
    let own = request.guardrails.take().unwrap_or_default();
    let added: Vec<&str> = required
        .iter()
        .copied()
        .filter(|name| !own.iter().any(|g| g == name))
        .collect();
    if !added.is_empty() {
        findings.defaults.push(Problem::new(
            paths.guardrails.clone(),
            format!(
                "the policy's required guardrails apply: {}",
                added.join(", ")
            ),
        ));
    }
    let mut rendered: Vec<String> = required.iter().map(|g| g.to_string()).collect();
    rendered.extend(own.into_iter().filter(|g| !required.contains(&g.as_str())));
    request.guardrails = Some(rendered);
}

/// The name rule of a `LiteLLMTeam`'s guardrails: 1 to
/// [`MAX_WORD_LENGTH`] characters.
fn named(name: &str) -> bool {
    !name.is_empty() && name.chars().count() <= MAX_WORD_LENGTH as usize
}

/// Each required guardrail of the policy is a name a team takes: a broken
/// one is the input's problem, named there.
fn required_named(check: &mut Check<'_>) {
    for (i, name) in check
        .policy
        .required_guardrails
        .iter()
        .flatten()
        .enumerate()
    {
        if !named(name) {
            check.findings.fatal.push(Problem::new(
                format!("input.policy.requiredGuardrails[{i}]"),
                format!("must have 1 to {MAX_WORD_LENGTH} characters, as a team's guardrails"),
            ));
        }
    }
}

/// Each of the XR's guardrails is named, listed once, and admitted: a
/// required one, or one `allowedGuardrails` lists. Without that list (or
/// with an empty one) an XR may name none.
fn guardrails_allowed(check: &mut Check<'_>) {
    let Some(guardrails) = &check.request.guardrails else {
        return;
    };
    let required = required(check.policy);
    let mut seen = BTreeSet::new();
    for (i, name) in guardrails.iter().enumerate() {
        let field = format!("{}[{i}]", check.paths.guardrails);
        if !named(name) {
            check.findings.fatal.push(Problem::new(
                field,
                format!("must have 1 to {MAX_WORD_LENGTH} characters"),
            ));
            continue;
        }
        if !seen.insert(name.as_str()) {
            check.findings.fatal.push(Problem::new(
                field,
                format!("guardrail {name:?} is listed twice"),
            ));
            continue;
        }
        if required.contains(&name.as_str()) {
            continue;
        }
        let problem = match check.policy.allowed_guardrails.as_deref() {
            None | Some([]) => Some(Problem::new(
                field,
                format!(
                    "guardrail {name:?}: the policy allows no guardrails (guardrails are the \
                     platform's: input.policy.allowedGuardrails lists those an XR may name)"
                ),
            )),
            Some(allowed) if !tenancy::admits(allowed, name) => Some(Problem::new(
                field,
                format!(
                    "guardrail {name:?} is not allowed by policy (allowed: {})",
                    allowed.join(", ")
                ),
            )),
            Some(_) => None,
        };
        check.findings.fatal.extend(problem);
    }
}

/// No more guardrails, the required ones with the XR's, than a
/// `LiteLLMTeam` takes ([`MAX_TAGS`]).
fn count(check: &mut Check<'_>) {
    let required = required(check.policy);
    let own = check.request.guardrails.iter().flatten();
    let extra = own.filter(|g| !required.contains(&g.as_str())).count();
    let total = required.len() + extra;
    if total > MAX_TAGS as usize {
        check.findings.fatal.push(Problem::new(
            check.paths.guardrails.clone(),
            format!(
                "{total} guardrails with the policy's required ones; a LiteLLMTeam takes at \
                 most {MAX_TAGS}"
            ),
        ));
    }
}

/// Neither the team's nor a key's `metadata` sets guardrails past the
/// policy ([`GUARDRAIL_METADATA`]).
fn metadata(check: &mut Check<'_>) {
    let team = check
        .request
        .team
        .metadata
        .iter()
        .map(|m| (format!("{}.metadata", check.paths.team), m));
    let keys = check.request.keys.iter().enumerate().filter_map(|(i, k)| {
        let m = k.metadata.as_ref()?;
        Some((format!("{}[{i}].metadata", check.paths.keys), m))
    });
    for (at, metadata) in team.chain(keys) {
        for entry in GUARDRAIL_METADATA {
            if metadata.contains_key(entry) {
                check.findings.fatal.push(Problem::new(
                    format!("{at}.{entry}"),
                    format!(
                        "LiteLLM reads this entry as the guardrails to run: the team's \
                         guardrails are {} (bounded by input.policy.allowedGuardrails)",
                        check.paths.guardrails
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::request::{KeyRequest, TeamRequest};
    use serde_json::json;

    fn asking(guardrails: &[&str]) -> XrRequest {
        XrRequest {
            guardrails: Some(guardrails.iter().map(|g| g.to_string()).collect()),
            ..Default::default()
        }
    }

    fn strings(names: &[&str]) -> Option<Vec<String>> {
        Some(names.iter().map(|g| g.to_string()).collect())
    }

    fn policy(allowed: Option<&[&str]>, required: Option<&[&str]>) -> Policy {
        Policy {
            allowed_guardrails: allowed.and_then(strings),
            required_guardrails: required.and_then(strings),
            ..Default::default()
        }
    }

    fn run(policy: &Policy, mut request: XrRequest) -> (XrRequest, Findings) {
        let findings = review(&mut request, &FieldPaths::default(), policy);
        (request, findings)
    }

    #[test]
    fn allowed_guardrails_render_after_the_required_ones() {
        let policy = policy(Some(&["pii-*", "toxicity"]), Some(&["audit", "audit"]));
        let (rendered, findings) = run(&policy, asking(&["pii-mask", "toxicity"]));
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        assert_eq!(
            rendered.guardrails,
            strings(&["audit", "pii-mask", "toxicity"])
        );
        assert_eq!(findings.defaults.len(), 1);
        assert_eq!(findings.defaults[0].field, "spec.guardrails");
        assert!(findings.defaults[0].message.ends_with("apply: audit"));

        // A required one the XR lists too is rendered once, first.
        let (rendered, findings) = run(&policy, asking(&["toxicity", "audit"]));
        assert_eq!(rendered.guardrails, strings(&["audit", "toxicity"]));
        assert!(findings.defaults.is_empty(), "{:?}", findings.defaults);

        // Without a list of its own the team has the required ones.
        let (rendered, findings) = run(&policy, XrRequest::default());
        assert_eq!(rendered.guardrails, strings(&["audit"]));
        assert_eq!(findings.defaults.len(), 1);
    }

    #[test]
    fn without_required_ones_absence_leaves_the_team_alone_and_empty_clears_it() {
        let open = policy(Some(&["toxicity"]), None);
        let (rendered, findings) = run(&open, XrRequest::default());
        assert_eq!(rendered.guardrails, None);
        assert_eq!(findings, Findings::default());
        let (rendered, findings) = run(&open, asking(&[]));
        assert_eq!(rendered.guardrails, Some(vec![]));
        assert_eq!(findings, Findings::default());
    }

    #[test]
    fn each_broken_rule_is_fatal_and_names_its_field() {
        let allowing = policy(Some(&["pii-mask", "toxicity"]), Some(&["audit"]));
        let with_metadata = |team: bool, entry: &str| {
            let metadata = Some(
                [(entry.to_string(), json!(["x"]))]
                    .into_iter()
                    .collect::<std::collections::BTreeMap<_, _>>(),
            );
            XrRequest {
                team: TeamRequest {
                    metadata: metadata.clone().filter(|_| team),
                    ..Default::default()
                },
                keys: vec![KeyRequest {
                    name: "ci".into(),
                    metadata: metadata.filter(|_| !team),
                    ..Default::default()
                }],
                ..Default::default()
            }
        };
        let cases: Vec<(&str, Policy, XrRequest, &str, &str)> = vec![
            (
                "a guardrail without a policy list",
                Policy::default(),
                asking(&["pii-mask"]),
                "spec.guardrails[0]",
                "the policy allows no guardrails",
            ),
            (
                "a guardrail under an empty policy list",
                policy(Some(&[]), None),
                asking(&["pii-mask"]),
                "spec.guardrails[0]",
                "input.policy.allowedGuardrails",
            ),
            (
                "a guardrail the policy does not list",
                allowing.clone(),
                asking(&["toxicity", "jailbreak"]),
                "spec.guardrails[1]",
                "guardrail \"jailbreak\" is not allowed by policy (allowed: pii-mask, toxicity)",
            ),
            (
                "an empty name",
                allowing.clone(),
                asking(&[""]),
                "spec.guardrails[0]",
                "must have 1 to 64 characters",
            ),
            (
                "a name longer than a team takes",
                allowing.clone(),
                asking(&[&"g".repeat(65)]),
                "spec.guardrails[0]",
                "must have 1 to 64 characters",
            ),
            (
                "a guardrail listed twice",
                allowing.clone(),
                asking(&["toxicity", "toxicity"]),
                "spec.guardrails[1]",
                "listed twice",
            ),
            (
                "more guardrails than a team takes",
                policy(Some(&["g*"]), Some(&["audit"])),
                XrRequest {
                    guardrails: Some((0..64).map(|i| format!("g{i}")).collect()),
                    ..Default::default()
                },
                "spec.guardrails",
                "65 guardrails with the policy's required ones",
            ),
            (
                "a required guardrail no team takes",
                policy(None, Some(&["audit", ""])),
                XrRequest::default(),
                "input.policy.requiredGuardrails[1]",
                "must have 1 to 64",
            ),
            (
                "guardrails in the team's metadata",
                allowing.clone(),
                with_metadata(true, "guardrails"),
                "spec.team.metadata.guardrails",
                "spec.guardrails",
            ),
            (
                "guardrail policies in a key's metadata",
                allowing.clone(),
                with_metadata(false, "policies"),
                "spec.keys[0].metadata.policies",
                "input.policy.allowedGuardrails",
            ),
            (
                "the proxy's guardrails turned off in a key's metadata",
                allowing.clone(),
                with_metadata(false, "disable_global_guardrails"),
                "spec.keys[0].metadata.disable_global_guardrails",
                "guardrails to run",
            ),
        ];
        let mut wrong = Vec::new();
        for (what, policy, request, field, says) in cases {
            let before = request.clone();
            let (after, findings) = run(&policy, request);
            wrong.extend(super::super::rules::unless_one_fatal(
                what, &findings, field, says,
            ));
            // Nothing is added to a request refused.
            assert_eq!(after, before, "{what}");
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn problems_name_the_fields_where_the_input_puts_them() {
        let paths = FieldPaths {
            guardrails: "spec.parameters.safety".into(),
            ..Default::default()
        };
        let mut request = asking(&["jailbreak"]);
        let findings = review(&mut request, &paths, &policy(Some(&["pii"]), None));
        assert_eq!(findings.fatal[0].field, "spec.parameters.safety[0]");
    }
}
