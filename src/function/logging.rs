//! Logging destinations of the XR's team: the XR's `logging`, LiteLLM's
//! team callbacks (an integration such as Langfuse or Datadog, to which
//! the proxy sends a log of each request of the team's keys, with the
//! team's own credentials), rendered in order on the `LiteLLMTeam`'s
//! `forProvider.logging`, checked against the value rules, the provider's
//! rules (docs/team-logging.md) and the platform's policy. Pure.
//!
//! What the provider refuses is refused here first, naming the XR's field:
//! an integration that does not take a team's own credentials, a variable
//! LiteLLM does not accept, a value `os.environ/...` (the proxy would read
//! its own environment, its master key included, and send it to the
//! destination), a variable both plain and from a Secret, a second
//! callback of one name and type, and, on a shared instance, the variables
//! a tenant may not set. A destination's host is left to the provider: an
//! internal host is refused to a tenant unless the LiteLLMInstance lists
//! it, which the function does not see. A value read from a Secret is not
//! seen here either; the provider checks it.
//!
//! Without `logging` the team's callbacks are left to LiteLLM (the provider
//! keeps those it holds); `logging: []` renders an empty list, which turns
//! the team's own logging off.

use std::collections::BTreeSet;

use crate::api::common::bounds::MAX_PLAIN_VALUE_LENGTH;
use crate::api::input::{FieldPaths, Policy};
use crate::api::team::{
    CALLBACK_NAMES, CALLBACK_SETTINGS, CALLBACK_VARIABLES, LOGGING, MAX_CALLBACK_VARIABLES,
    MAX_TEAM_CALLBACKS, TENANT_REFUSED_CALLBACK_VARIABLES,
};

use super::error::Problem;
use super::request::{LoggingRequest, XrRequest};
use super::rules::{each, list_allowed, over_policy_limit, At, Findings};
use super::tenancy::{self, Tenancy, SHARED};

/// The prefix of a value LiteLLM reads from the proxy's environment.
const ENVIRONMENT_PREFIX: &str = "os.environ/";

/// What the rules read, and what they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    tenancy: Tenancy<'a>,
    /// `(callbackName, callbackType)` of the callbacks checked so far.
    seen: BTreeSet<(&'a str, &'static str)>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one logging destination.
type EntryRule = for<'a> fn(&mut Check<'a>, &At, &'a LoggingRequest);

/// The rules, in the order they report.
const RULES: [Rule; 4] = [logging_allowed, count, entries, metadata];

/// The rules of one destination, in the order they report.
const ENTRY_RULES: [EntryRule; 4] = [
    callback_name,
    callback_unique,
    plain_variables,
    secret_variables,
];

/// Checks the XR's logging destinations, and that no metadata of its team
/// or keys sets callbacks past them.
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
        seen: BTreeSet::new(),
        findings: Findings::default(),
    };
    for rule in RULES {
        rule(&mut check);
    }
    check.findings
}

/// Whether `value` has the form `os.environ/...` (ignoring case and
/// leading blanks, as LiteLLM reads it).
fn names_environment(value: &str) -> bool {
    value
        .trim_start()
        .get(..ENVIRONMENT_PREFIX.len())
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(ENVIRONMENT_PREFIX))
}

/// The destinations asked for (none for an absent `logging`).
fn asked(request: &XrRequest) -> &[LoggingRequest] {
    request.logging.as_deref().unwrap_or_default()
}

/// XRs may add logging destinations unless the policy says otherwise;
/// `logging: []` (the team's own logging off) is always allowed.
fn logging_allowed(check: &mut Check<'_>) {
    list_allowed(
        &mut check.findings,
        &check.paths.logging,
        asked(check.request).len(),
        check.policy.allow_logging,
        "logging destinations",
        "allowLogging",
    );
}

/// No more destinations than the policy allows, nor than a `LiteLLMTeam`
/// takes ([`MAX_TEAM_CALLBACKS`]).
fn count(check: &mut Check<'_>) {
    let count = asked(check.request).len();
    let limit = check.policy.max_logging_callbacks;
    let message = over_policy_limit(count, limit, "logging destinations").or_else(|| {
        (count > MAX_TEAM_CALLBACKS as usize).then(|| {
            format!(
                "{count} logging destinations; a LiteLLMTeam takes at most {MAX_TEAM_CALLBACKS}"
            )
        })
    });
    if let Some(message) = message {
        let field = check.paths.logging.clone();
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every destination, by the rules of one ([`ENTRY_RULES`]).
fn entries(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(check, &paths.logging, asked(request), &ENTRY_RULES);
}

/// A destination's integration is one that takes a team's own credentials
/// ([`CALLBACK_NAMES`]; any other LiteLLM would store and either ignore or
/// serve with the proxy's own credentials, to the proxy's own
/// destination), and one `allowedLoggingCallbacks` admits when set.
fn callback_name<'a>(check: &mut Check<'a>, at: &At, entry: &'a LoggingRequest) {
    let field = at.field("callbackName");
    let name = entry.callback_name.as_str();
    if !CALLBACK_NAMES.contains(&name) {
        check.findings.fatal.push(Problem::new(
            field,
            format!(
                "{name:?} is not an integration LiteLLM 1.108.7 gives a team's own credentials \
                 (one of {})",
                CALLBACK_NAMES.join(", ")
            ),
        ));
        return;
    }
    let problem = match check.policy.allowed_logging_callbacks.as_deref() {
        Some([]) => Some(format!(
            "logging integration {name:?}: the policy allows none \
             (input.policy.allowedLoggingCallbacks is empty)"
        )),
        Some(allowed) if !tenancy::admits(allowed, name) => Some(format!(
            "logging integration {name:?} is not allowed by policy (allowed: {})",
            allowed.join(", ")
        )),
        _ => None,
    };
    if let Some(message) = problem {
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// No two destinations of one integration and type: LiteLLM keeps one.
fn callback_unique<'a>(check: &mut Check<'a>, at: &At, entry: &'a LoggingRequest) {
    let kind = entry.callback_type().as_str();
    if !check.seen.insert((entry.callback_name.as_str(), kind)) {
        check.findings.fatal.push(Problem::new(
            at.path.clone(),
            format!(
                "a second callback {:?} for {kind} (LiteLLM keeps one per name and type)",
                entry.callback_name
            ),
        ));
    }
}

/// The problem of a variable `var` at `field` whatever its value: one
/// LiteLLM does not accept, or on a shared instance one a tenant may not
/// set.
fn variable_refusal(check: &Check<'_>, field: &str, var: &str) -> Option<Problem> {
    if !CALLBACK_VARIABLES.contains(&var) {
        return Some(Problem::new(
            field,
            "not a callback variable LiteLLM 1.108.7 accepts",
        ));
    }
    let refused = TENANT_REFUSED_CALLBACK_VARIABLES
        .iter()
        .find(|(name, _)| *name == var)
        .filter(|_| check.tenancy.shared_instance);
    refused.map(|(_, why)| Problem::new(field, format!("refused {SHARED}: {why}")))
}

/// At most [`MAX_CALLBACK_VARIABLES`] variables in `count`, at `field`.
fn too_many(field: String, count: usize) -> Option<Problem> {
    (count > MAX_CALLBACK_VARIABLES as usize).then(|| {
        Problem::new(
            field,
            format!("{count} variables; a LiteLLMTeam's callback takes at most {MAX_CALLBACK_VARIABLES}"),
        )
    })
}

/// Each plain variable is one LiteLLM accepts (and a tenant may set), its
/// value no `os.environ/...` and of at most [`MAX_PLAIN_VALUE_LENGTH`]
/// characters.
fn plain_variables<'a>(check: &mut Check<'a>, at: &At, entry: &'a LoggingRequest) {
    let Some(vars) = &entry.callback_vars else {
        return;
    };
    if let Some(problem) = too_many(at.field("callbackVars"), vars.len()) {
        check.findings.fatal.push(problem);
        return;
    }
    let mut problems = Vec::new();
    for (var, value) in vars {
        let field = format!("{}.{var}", at.field("callbackVars"));
        let problem = variable_refusal(check, &field, var).or_else(|| {
            if names_environment(value) {
                Some(Problem::new(
                    field,
                    "the value has the form os.environ/..., which makes LiteLLM read an \
                     environment variable of the proxy (its master key, its database URL) and \
                     send it to the destination; put the value itself in a Secret \
                     (secretCallbackVars)",
                ))
            } else if value.chars().count() > MAX_PLAIN_VALUE_LENGTH as usize {
                Some(Problem::new(
                    field,
                    format!("must have at most {MAX_PLAIN_VALUE_LENGTH} characters"),
                ))
            } else {
                None
            }
        });
        problems.extend(problem);
    }
    check.findings.fatal.append(&mut problems);
}

/// Each variable from a Secret is not plain too, is one LiteLLM accepts
/// (and a tenant may set), and names a Secret and key the policy allows
/// (`allowedSecrets`).
fn secret_variables<'a>(check: &mut Check<'a>, at: &At, entry: &'a LoggingRequest) {
    let Some(vars) = &entry.secret_callback_vars else {
        return;
    };
    if let Some(problem) = too_many(at.field("secretCallbackVars"), vars.len()) {
        check.findings.fatal.push(problem);
        return;
    }
    let mut problems = Vec::new();
    let plain = entry.callback_vars.as_ref();
    for (var, selector) in vars {
        let field = format!("{}.{var}", at.field("secretCallbackVars"));
        if plain.is_some_and(|p| p.contains_key(var)) {
            problems.push(Problem::new(
                field,
                "also in callbackVars: a variable is plain or from a Secret, not both",
            ));
            continue;
        }
        let problem = variable_refusal(check, &field, var).or_else(|| {
            if selector.name.is_empty() || selector.key.is_empty() {
                return Some(Problem::new(field, "must name a Secret and a key of it"));
            }
            tenancy::admitted(
                field,
                "Secret",
                &selector.name,
                "allowedSecrets",
                &check.policy.allowed_secrets,
                &check.tenancy,
            )
        });
        problems.extend(problem);
    }
    check.findings.fatal.append(&mut problems);
}

/// Neither the team's `metadata` (`logging`, and the deprecated
/// `callback_settings`) nor a key's (`logging`, LiteLLM's callbacks of one
/// key) sets callbacks past these rules and the policy.
fn metadata(check: &mut Check<'_>) {
    let team = check
        .request
        .team
        .metadata
        .iter()
        .map(|m| (format!("{}.metadata", check.paths.team), m, "team"));
    let keys = check.request.keys.iter().enumerate().filter_map(|(i, k)| {
        let m = k.metadata.as_ref()?;
        Some((format!("{}[{i}].metadata", check.paths.keys), m, "key"))
    });
    for (at, metadata, whose) in team.chain(keys) {
        let entries: &[&str] = match whose {
            "team" => &[LOGGING, CALLBACK_SETTINGS],
            _ => &[LOGGING],
        };
        for entry in entries {
            if metadata.contains_key(*entry) {
                check.findings.fatal.push(Problem::new(
                    format!("{at}.{entry}"),
                    format!(
                        "LiteLLM reads this entry as the {whose}'s logging destinations, past \
                         the provider's checks: the team's are {} (bounded by \
                         input.policy.allowLogging, allowedLoggingCallbacks and \
                         maxLoggingCallbacks)",
                        check.paths.logging
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::team::CallbackType;
    use crate::function::request::{KeyRequest, TeamRequest};
    use serde_json::json;

    fn plain(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn secrets(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, SecretKeySelector>> {
        Some(
            pairs
                .iter()
                .map(|(var, name)| {
                    let selector = SecretKeySelector {
                        name: name.to_string(),
                        key: "k".into(),
                    };
                    (var.to_string(), selector)
                })
                .collect(),
        )
    }

    /// A Langfuse destination: its host and public key plain, its secret
    /// key from the Secret `langfuse`.
    fn langfuse() -> LoggingRequest {
        LoggingRequest {
            callback_name: "langfuse".into(),
            callback_type: None,
            callback_vars: plain(&[
                ("langfuse_host", "https://cloud.langfuse.com"),
                ("langfuse_public_key", "pk-lf-1"),
            ]),
            secret_callback_vars: secrets(&[("langfuse_secret_key", "langfuse")]),
        }
    }

    fn named(name: &str) -> LoggingRequest {
        LoggingRequest {
            callback_name: name.into(),
            ..Default::default()
        }
    }

    fn logging(entries: Vec<LoggingRequest>) -> XrRequest {
        XrRequest {
            logging: Some(entries),
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

    fn run(policy: &Policy, request: &XrRequest) -> Findings {
        check(request, &FieldPaths::default(), policy, &tenant())
    }

    #[test]
    fn good_destinations_have_no_findings_and_render_in_order() {
        let request = logging(vec![
            langfuse(),
            LoggingRequest {
                callback_type: Some(CallbackType::Failure),
                ..named("langfuse")
            },
            LoggingRequest {
                callback_vars: plain(&[("dd_site", "datadoghq.eu")]),
                secret_callback_vars: secrets(&[("dd_api_key", "datadog")]),
                ..named("datadog")
            },
        ]);
        let policy = Policy {
            allow_logging: Some(true),
            allowed_logging_callbacks: Some(vec!["langfuse*".into(), "datadog".into()]),
            max_logging_callbacks: Some(3),
            allowed_secrets: Some(vec!["langfuse".into(), "datadog".into()]),
            ..Default::default()
        };
        assert_eq!(run(&policy, &request), Findings::default());
        let rendered: Vec<_> = request.logging.iter().flatten().map(|e| e.spec()).collect();
        assert_eq!(
            serde_json::to_value(rendered).unwrap(),
            json!([
                {"callbackName": "langfuse", "callbackType": "success_and_failure",
                 "callbackVars": {"langfuse_host": "https://cloud.langfuse.com",
                                  "langfuse_public_key": "pk-lf-1"},
                 "secretCallbackVars": {"langfuse_secret_key": {"name": "langfuse", "key": "k"}}},
                {"callbackName": "langfuse", "callbackType": "failure"},
                {"callbackName": "datadog", "callbackType": "success_and_failure",
                 "callbackVars": {"dd_site": "datadoghq.eu"},
                 "secretCallbackVars": {"dd_api_key": {"name": "datadog", "key": "k"}}}
            ])
        );
    }

    #[test]
    fn absent_logging_and_an_empty_list_pass_even_where_logging_is_not_allowed() {
        let closed = Policy {
            allow_logging: Some(false),
            max_logging_callbacks: Some(0),
            allowed_logging_callbacks: Some(vec![]),
            ..Default::default()
        };
        assert_eq!(run(&closed, &XrRequest::default()), Findings::default());
        assert_eq!(run(&closed, &logging(vec![])), Findings::default());
    }

    #[test]
    fn each_broken_rule_is_fatal_and_names_its_field() {
        let open = Policy::default();
        let one = |e: LoggingRequest| logging(vec![e]);
        let with_plain = |pairs: &[(&str, &str)]| {
            one(LoggingRequest {
                callback_vars: plain(pairs),
                ..named("langsmith")
            })
        };
        let with_secret = |var: &str| {
            one(LoggingRequest {
                secret_callback_vars: secrets(&[(var, "s")]),
                ..named("gcs_bucket")
            })
        };
        let with_metadata = |team: bool, entry: &str| {
            let metadata = Some(
                [(entry.to_string(), json!([]))]
                    .into_iter()
                    .collect::<BTreeMap<_, _>>(),
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
        let many = |n: usize, var: &str| -> Vec<(String, String)> {
            (0..n).map(|i| (format!("{var}{i}"), "v".into())).collect()
        };
        let cases: Vec<(&str, Policy, XrRequest, &str, &str)> = vec![
            (
                "logging the policy does not allow",
                Policy {
                    allow_logging: Some(false),
                    ..Default::default()
                },
                one(langfuse()),
                "spec.logging",
                "input.policy.allowLogging",
            ),
            (
                "more destinations than the policy allows",
                Policy {
                    max_logging_callbacks: Some(1),
                    ..Default::default()
                },
                logging(vec![named("langfuse"), named("langsmith")]),
                "spec.logging",
                "2 logging destinations requested, policy allows at most 1",
            ),
            (
                "more destinations than a team takes",
                open.clone(),
                logging(CALLBACK_NAMES[..9].iter().map(|n| named(n)).collect()),
                "spec.logging",
                "9 logging destinations; a LiteLLMTeam takes at most 8",
            ),
            (
                "an integration without a team's own credentials",
                open.clone(),
                one(named("s3")),
                "spec.logging[0].callbackName",
                "\"s3\" is not an integration LiteLLM 1.108.7 gives a team's own credentials",
            ),
            (
                "an integration the policy does not list",
                Policy {
                    allowed_logging_callbacks: Some(vec!["langfuse*".into()]),
                    ..Default::default()
                },
                one(named("datadog")),
                "spec.logging[0].callbackName",
                "logging integration \"datadog\" is not allowed by policy (allowed: langfuse*)",
            ),
            (
                "an integration under an empty policy list",
                Policy {
                    allowed_logging_callbacks: Some(vec![]),
                    ..Default::default()
                },
                one(named("langfuse")),
                "spec.logging[0].callbackName",
                "allowedLoggingCallbacks is empty",
            ),
            (
                "a second callback of one name and type",
                open.clone(),
                logging(vec![
                    LoggingRequest {
                        callback_type: Some(CallbackType::SuccessAndFailure),
                        ..named("langfuse")
                    },
                    named("langfuse"),
                ]),
                "spec.logging[1]",
                "a second callback \"langfuse\" for success_and_failure",
            ),
            (
                "a variable LiteLLM does not accept",
                open.clone(),
                with_plain(&[("langsmith_project", "p"), ("api_base", "x")]),
                "spec.logging[0].callbackVars.api_base",
                "not a callback variable LiteLLM 1.108.7 accepts",
            ),
            (
                "a plain value from the proxy's environment",
                open.clone(),
                with_plain(&[("langsmith_api_key", " OS.ENVIRON/LITELLM_MASTER_KEY")]),
                "spec.logging[0].callbackVars.langsmith_api_key",
                "the value has the form os.environ/",
            ),
            (
                "a plain value longer than a team takes",
                open.clone(),
                with_plain(&[("langsmith_project", "p".repeat(2049).as_str())]),
                "spec.logging[0].callbackVars.langsmith_project",
                "must have at most 2048 characters",
            ),
            (
                "more plain variables than a callback takes",
                open.clone(),
                one(LoggingRequest {
                    callback_vars: Some(many(17, "langsmith_project").into_iter().collect()),
                    ..named("langsmith")
                }),
                "spec.logging[0].callbackVars",
                "17 variables; a LiteLLMTeam's callback takes at most 16",
            ),
            (
                "a variable plain and from a Secret",
                open.clone(),
                one(LoggingRequest {
                    callback_vars: plain(&[("langfuse_secret_key", "sk")]),
                    secret_callback_vars: secrets(&[("langfuse_secret_key", "langfuse")]),
                    ..named("langfuse")
                }),
                "spec.logging[0].secretCallbackVars.langfuse_secret_key",
                "also in callbackVars",
            ),
            (
                "a Secret variable LiteLLM does not accept",
                open.clone(),
                with_secret("gcs_credentials"),
                "spec.logging[0].secretCallbackVars.gcs_credentials",
                "not a callback variable",
            ),
            (
                "a file of the proxy's host from a tenant",
                open.clone(),
                with_secret("gcs_path_service_account"),
                "spec.logging[0].secretCallbackVars.gcs_path_service_account",
                "refused outside the LiteLLMInstance's namespace, where the provider refuses \
                 it: a file path on the proxy's own host",
            ),
            (
                "the platform's callbacks switched off by a tenant",
                open.clone(),
                with_plain(&[("litellm_disabled_callbacks", "[\"datadog\"]")]),
                "spec.logging[0].callbackVars.litellm_disabled_callbacks",
                "switches off the platform's own callbacks",
            ),
            (
                "the platform's message logs switched off by a tenant",
                open.clone(),
                with_plain(&[("turn_off_message_logging", "true")]),
                "spec.logging[0].callbackVars.turn_off_message_logging",
                "removes the messages",
            ),
            (
                "a Secret the policy does not list",
                Policy {
                    allowed_secrets: Some(vec!["langfuse".into()]),
                    ..Default::default()
                },
                with_secret("gcs_bucket_name"),
                "spec.logging[0].secretCallbackVars.gcs_bucket_name",
                "Secret \"s\" is not allowed by policy (allowed: langfuse)",
            ),
            (
                "a Secret without a key",
                open.clone(),
                one(LoggingRequest {
                    secret_callback_vars: Some(
                        [(
                            "langfuse_secret_key".to_string(),
                            SecretKeySelector {
                                name: "langfuse".into(),
                                key: String::new(),
                            },
                        )]
                        .into(),
                    ),
                    ..named("langfuse")
                }),
                "spec.logging[0].secretCallbackVars.langfuse_secret_key",
                "must name a Secret and a key",
            ),
            (
                "callbacks in the team's metadata",
                open.clone(),
                with_metadata(true, "logging"),
                "spec.team.metadata.logging",
                "the team's logging destinations, past the provider's checks: the team's are \
                 spec.logging",
            ),
            (
                "deprecated callbacks in the team's metadata",
                open.clone(),
                with_metadata(true, "callback_settings"),
                "spec.team.metadata.callback_settings",
                "input.policy.allowLogging",
            ),
            (
                "callbacks in a key's metadata",
                open.clone(),
                with_metadata(false, "logging"),
                "spec.keys[0].metadata.logging",
                "the key's logging destinations",
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
    fn the_tenants_rules_hold_only_on_a_shared_instance_and_secrets_need_a_list_on_the_platforms() {
        let request = logging(vec![LoggingRequest {
            callback_vars: plain(&[("turn_off_message_logging", "true")]),
            secret_callback_vars: secrets(&[("gcs_path_service_account", "sa")]),
            ..named("gcs_bucket")
        }]);
        let paths = FieldPaths::default();
        let policy = Policy::default();
        let own = Tenancy {
            shared_instance: false,
            ..tenant()
        };
        assert_eq!(check(&request, &paths, &policy, &own), Findings::default());
        let fields = |tenancy: &Tenancy<'_>| -> Vec<String> {
            check(&request, &paths, &policy, tenancy)
                .fatal
                .into_iter()
                .map(|p| p.field)
                .collect()
        };
        assert_eq!(
            fields(&tenant()),
            [
                "spec.logging[0].callbackVars.turn_off_message_logging",
                "spec.logging[0].secretCallbackVars.gcs_path_service_account"
            ]
        );
        // In a namespace of the platform's, a Secret needs allowedSecrets.
        let platform = Tenancy {
            platform_namespace: true,
            ..own
        };
        assert_eq!(
            fields(&platform),
            ["spec.logging[0].secretCallbackVars.gcs_path_service_account"]
        );
    }

    #[test]
    fn problems_name_the_fields_where_the_input_puts_them() {
        let paths = FieldPaths {
            logging: "spec.parameters.observability".into(),
            ..Default::default()
        };
        let request = logging(vec![named("s3")]);
        let policy = Policy {
            max_logging_callbacks: Some(0),
            ..Default::default()
        };
        let fields: Vec<String> = check(&request, &paths, &policy, &tenant())
            .fatal
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.parameters.observability",
                "spec.parameters.observability[0].callbackName"
            ]
        );
    }
}
