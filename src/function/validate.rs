//! Checks an XR's request against value rules and the platform's policy.
//! Fatal problems stop the render; warnings describe odd but workable
//! requests. Pure: no I/O.

use std::collections::{BTreeMap, BTreeSet};

use crate::api::input::{FieldPaths, Policy};
use crate::api::money::Money;

use super::error::Problem;
use super::names;
use super::request::{Amount, BudgetRequest, KeyRequest, ModelRequest, XrRequest};
use super::rules::{
    each, is_dns_label, not_a_duration, over_policy_limit, unique_label, At, Findings,
};

/// Whether `policy` admits `model` (exact, or a `prefix*` entry).
fn model_allowed(allowed: &[String], model: &str) -> bool {
    allowed.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => model.starts_with(prefix),
        None => entry == model,
    })
}

/// Parses a policy amount; a broken one is a problem of the input itself.
fn policy_amount(value: &Option<String>, field: &str, findings: &mut Findings) -> Option<Money> {
    let text = value.as_ref()?;
    match Money::parse(text) {
        Ok(m) => Some(m),
        Err(e) => {
            findings.fatal.push(Problem::new(field, e.to_string()));
            None
        }
    }
}

/// The request as it will be rendered, and what was found on the way: the
/// policy's defaults fill in what the XR leaves out (each one reported),
/// then the value rules and the policy are checked on the result.
pub fn review(
    mut request: XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
) -> (XrRequest, Findings) {
    let mut findings = Findings::default();
    apply_policy_defaults(&mut request, paths, policy, &mut findings);
    let checked = check(&request, paths, policy);
    findings.fatal.extend(checked.fatal);
    findings.warnings.extend(checked.warnings);
    (request, findings)
}

/// A request being filled in with the policy's defaults, and where each
/// value filled in is reported.
struct Filling<'a> {
    request: &'a mut XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    findings: &'a mut Findings,
}

/// A policy default: fills in one part of the request the XR leaves out,
/// reporting each value it fills in.
type PolicyDefault = fn(&mut Filling<'_>);

/// The policy's defaults, in the order they apply: a key's default reads
/// the team budget the one before it may have filled in.
const POLICY_DEFAULTS: [PolicyDefault; 4] =
    [team_models, team_budget, key_budgets, customer_budget];

/// Fills in what the XR leaves out where the policy limits it, so that
/// absence never means "every model" or "unlimited": LiteLLM gives a team
/// without `models` (or with an empty list) every model on the proxy, and an
/// entity without `max_budget` no spend limit. Each default applied is
/// reported with the field and the value; where a default would be a guess
/// (a wildcard in the allowed models), the field is required instead.
///
/// Keys need no model default: a key without `models`, or with an empty
/// list, may use its team's models, and every key rendered here belongs to
/// the XR's team, whose models are defaulted. An explicit empty list is
/// rendered as given (it is enforced, where an absent list is left alone).
///
/// A broken policy amount applies no default; `check` reports it.
fn apply_policy_defaults(
    request: &mut XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    findings: &mut Findings,
) {
    let mut filling = Filling {
        request,
        paths,
        policy,
        findings,
    };
    for apply in POLICY_DEFAULTS {
        apply(&mut filling);
    }
}

/// A policy amount, where it parses (`check` reports one that does not).
fn ceiling(value: &Option<String>) -> Option<Money> {
    value.as_deref().and_then(|v| Money::parse(v).ok())
}

/// Default: a team without models gets the policy's allowed models, when
/// they are an exact list; else the team's models are required.
fn team_models(fill: &mut Filling<'_>) {
    let Some(allowed) = &fill.policy.allowed_models else {
        return;
    };
    let models = &fill.request.team.models;
    if models.as_ref().is_some_and(|m| !m.is_empty()) {
        return;
    }
    let field = format!("{}.models", fill.paths.team);
    let left_out = if models.is_some() {
        "empty, which LiteLLM reads as every model on the proxy"
    } else {
        "not set, which LiteLLM reads as every model on the proxy"
    };
    if allowed.is_empty() {
        fill.findings.fatal.push(Problem::new(
            field,
            format!(
                "{left_out}, and policy.allowedModels is empty: no team can be rendered under it"
            ),
        ));
    } else if let Some(wildcard) = allowed.iter().find(|entry| entry.ends_with('*')) {
        fill.findings.fatal.push(Problem::new(
            field,
            format!(
                "must list the team's models: {left_out}, and the policy admits the wildcard {wildcard:?}, so its allowed models cannot stand in for them"
            ),
        ));
    } else {
        let mut defaulted: Vec<String> = Vec::with_capacity(allowed.len());
        for model in allowed {
            if !defaulted.contains(model) {
                defaulted.push(model.clone());
            }
        }
        fill.findings.defaults.push(Problem::new(
            field,
            format!(
                "{left_out}: the policy's allowed models apply: {}",
                defaulted.join(", ")
            ),
        ));
        fill.request.team.models = Some(defaulted);
    }
}

/// Default: a team budget without `maxBudget` gets the policy's ceiling.
fn team_budget(fill: &mut Filling<'_>) {
    let Some(ceiling) = ceiling(&fill.policy.max_budget) else {
        return;
    };
    let budget = fill.request.budget.get_or_insert_with(Default::default);
    if budget.max_budget.is_none() {
        budget.max_budget = Some(Amount(ceiling));
        fill.findings.defaults.push(Problem::new(
            format!("{}.maxBudget", fill.paths.budget),
            format!("not set: the policy ceiling {ceiling} applies"),
        ));
    }
}

/// Default: a key without `maxBudget` gets the policy's ceiling per key,
/// or the team budget where that is smaller.
fn key_budgets(fill: &mut Filling<'_>) {
    let Some(ceiling) = ceiling(&fill.policy.max_key_budget) else {
        return;
    };
    let team = fill.request.team_budget();
    let team_resets = fill
        .request
        .budget
        .as_ref()
        .is_some_and(|b| b.duration.is_some());
    // The smaller of the key ceiling and the team budget. A key without
    // limits of its own links the team budget, and LiteLLM (1.108.7)
    // fills a key's unset max_budget from the budget it links: before
    // this default such a key was limited by the team budget alone. The
    // smaller value keeps that limit and caps it at the ceiling, so what
    // is rendered is what binds the key; a team budget above the ceiling
    // would otherwise hand the key more than the policy allows. The
    // team's own limit still applies on top in LiteLLM.
    let (value, source) = match team {
        Some(team) if team < ceiling => (
            team,
            format!("the team budget, below the policy ceiling {ceiling} per key"),
        ),
        _ => (ceiling, "the policy ceiling per key".to_string()),
    };
    for (i, key) in fill.request.keys.iter_mut().enumerate() {
        if key.max_budget.is_some() {
            continue;
        }
        key.max_budget = Some(Amount(value));
        key.max_budget_from_policy = true;
        // A key's spend resets with its own budgetDuration, or with the
        // budget it links (LiteLLM's reset job resets the keys a budget
        // gates); keys without limits of their own link the team budget.
        let resets = key.budget_duration.is_some()
            || (fill.request.budget.is_some() && !key.has_own_limits() && team_resets);
        let never = if resets {
            ""
        } else {
            "; without budgetDuration the key's spend never resets"
        };
        fill.findings.defaults.push(Problem::new(
            format!("{}[{i}].maxBudget", fill.paths.keys),
            format!("not set: {value} applies ({source}){never}"),
        ));
    }
}

/// Default: the customers' budget without `maxBudget` gets the policy's
/// ceiling, and customers held to a budget get one of the ceiling when the
/// XR renders none (they would otherwise link the team's budget, which
/// the ceiling would not bound).
fn customer_budget(fill: &mut Filling<'_>) {
    let Some(ceiling) = ceiling(&fill.policy.max_customer_budget) else {
        return;
    };
    let held = fill
        .request
        .customers
        .iter()
        .any(|c| c.budget == Some(true));
    let budget = match &mut fill.request.customer_budget {
        Some(budget) => budget,
        None if held => fill.request.customer_budget.insert(Default::default()),
        None => return,
    };
    if budget.max_budget.is_none() {
        budget.max_budget = Some(Amount(ceiling));
        fill.findings.defaults.push(Problem::new(
            format!("{}.maxBudget", fill.paths.customer_budget),
            format!("not set: the policy ceiling {ceiling} per customer applies"),
        ));
    }
}

/// What the rules of [`check`] read, and what they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    /// `policy.maxBudget`, where it parses.
    max_budget: Option<Money>,
    /// `policy.maxKeyBudget`, where it parses.
    max_key_budget: Option<Money>,
    /// `policy.maxCustomerBudget`, where it parses.
    max_customer_budget: Option<Money>,
    /// The team budget's `maxBudget` (the policy's ceiling by now, where
    /// the XR sets none).
    team_budget: Option<Money>,
    /// Names of the keys checked so far.
    key_names: BTreeSet<&'a str>,
    /// Aliases of the keys checked so far.
    key_aliases: BTreeSet<&'a str>,
    /// Object name part -> the index and name of the first model with it.
    model_labels: BTreeMap<String, (usize, &'a str)>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one key.
type KeyRule = for<'a> fn(&mut Check<'a>, &At, &'a KeyRequest);
/// A rule of one model.
type ModelRule = for<'a> fn(&mut Check<'a>, &At, &'a ModelRequest);

/// The rules of [`check`], in the order they report.
const RULES: [Rule; 10] = [
    team_models_allowed,
    budget_duration,
    soft_budget_under_max,
    team_budget_under_ceiling,
    customer_budget_duration,
    customer_budget_under_ceiling,
    key_count,
    keys,
    models_allowed_at_all,
    models,
];

/// The rules of one key, in the order they report.
const KEY_RULES: [KeyRule; 7] = [
    key_name,
    key_alias_unique,
    key_durations,
    key_models_allowed,
    key_models_of_the_team,
    key_budget_under_ceiling,
    key_budget_under_team,
];

/// The rules of one model, in the order they report.
const MODEL_RULES: [ModelRule; 5] = [
    model_name,
    model_upstream_set,
    model_name_allowed,
    model_api_base,
    model_provider_allowed,
];

/// Checks `request` against the value rules and `policy`. Run on a request
/// whose policy defaults are applied (`review`).
fn check(request: &XrRequest, paths: &FieldPaths, policy: &Policy) -> Findings {
    let mut findings = Findings::default();
    let max_budget = policy_amount(&policy.max_budget, "input.policy.maxBudget", &mut findings);
    let max_key_budget = policy_amount(
        &policy.max_key_budget,
        "input.policy.maxKeyBudget",
        &mut findings,
    );
    let max_customer_budget = policy_amount(
        &policy.max_customer_budget,
        "input.policy.maxCustomerBudget",
        &mut findings,
    );
    let mut check = Check {
        request,
        paths,
        policy,
        max_budget,
        max_key_budget,
        max_customer_budget,
        team_budget: request.team_budget(),
        key_names: BTreeSet::new(),
        key_aliases: BTreeSet::new(),
        model_labels: BTreeMap::new(),
        findings,
    };
    for rule in RULES {
        rule(&mut check);
    }
    check.findings
}

/// Each of `models` (at `field`) is among the policy's allowed models.
fn models_allowed(
    policy: &Policy,
    models: &Option<Vec<String>>,
    field: &str,
    findings: &mut Findings,
) {
    let (Some(allowed), Some(models)) = (&policy.allowed_models, models) else {
        return;
    };
    for (i, model) in models.iter().enumerate() {
        if !model_allowed(allowed, model) {
            findings.fatal.push(Problem::new(
                format!("{field}[{i}]"),
                format!(
                    "model {model:?} is not allowed by policy (allowed: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
}

/// The team's models are among the policy's allowed models.
fn team_models_allowed(check: &mut Check<'_>) {
    let field = format!("{}.models", check.paths.team);
    models_allowed(
        check.policy,
        &check.request.team.models,
        &field,
        &mut check.findings,
    );
}

/// The budget's duration is a duration; a budget without one never resets
/// (a warning).
fn budget_duration(check: &mut Check<'_>) {
    let (budget, path) = (&check.request.budget, &check.paths.budget);
    duration_of(budget.as_ref(), path, &mut check.findings);
}

/// The customers' budget's duration, by the rule of [`budget_duration`].
fn customer_budget_duration(check: &mut Check<'_>) {
    let (budget, path) = (&check.request.customer_budget, &check.paths.customer_budget);
    duration_of(budget.as_ref(), path, &mut check.findings);
}

/// The duration of `budget` (at `path`) is a duration; one without it never
/// resets (a warning).
fn duration_of(budget: Option<&BudgetRequest>, path: &str, findings: &mut Findings) {
    let Some(budget) = budget else {
        return;
    };
    let field = format!("{path}.duration");
    if let Some(d) = &budget.duration {
        if let Some(message) = not_a_duration(d) {
            findings.fatal.push(Problem::new(field, message));
        }
    } else if budget.max_budget.is_some() {
        findings
            .warnings
            .push(Problem::new(field, "not set: the budget never resets"));
    }
}

/// The customers' budget is within the policy's ceiling per customer.
fn customer_budget_under_ceiling(check: &mut Check<'_>) {
    let max = check
        .request
        .customer_budget
        .as_ref()
        .and_then(|b| b.max_budget.as_ref());
    if let (Some(ceiling), Some(max)) = (check.max_customer_budget, max) {
        if max.0 > ceiling {
            check.findings.fatal.push(Problem::new(
                format!("{}.maxBudget", check.paths.customer_budget),
                format!(
                    "{} exceeds the policy ceiling {ceiling} per customer",
                    max.0
                ),
            ));
        }
    }
}

/// A soft budget above the budget's maximum never warns (a warning).
fn soft_budget_under_max(check: &mut Check<'_>) {
    let soft = check
        .request
        .budget
        .as_ref()
        .and_then(|b| b.soft_budget.as_ref());
    if let (Some(soft), Some(max)) = (soft, check.team_budget) {
        if soft.0 > max {
            check.findings.warnings.push(Problem::new(
                format!("{}.softBudget", check.paths.budget),
                format!(
                    "{} is above maxBudget {max}: the soft limit never warns",
                    soft.0
                ),
            ));
        }
    }
}

/// The team budget is within the policy's ceiling. Without a budget of
/// its own the team has the ceiling by now.
fn team_budget_under_ceiling(check: &mut Check<'_>) {
    if let (Some(ceiling), Some(b)) = (check.max_budget, check.team_budget) {
        if b > ceiling {
            check.findings.fatal.push(Problem::new(
                format!("{}.maxBudget", check.paths.budget),
                format!("{b} exceeds the policy ceiling {ceiling}"),
            ));
        }
    }
}

/// No more keys than the policy allows.
fn key_count(check: &mut Check<'_>) {
    let count = check.request.keys.len();
    if let Some(message) = over_policy_limit(count, check.policy.max_keys, "keys") {
        let field = check.paths.keys.clone();
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every key, by the rules of one key ([`KEY_RULES`]).
fn keys(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(check, &paths.keys, &request.keys, &KEY_RULES);
}

/// A key's name is a DNS label no key before it has: it is part of its
/// object's and Secret's names.
fn key_name<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    unique_label(
        &key.name,
        "key",
        at,
        &mut check.key_names,
        &mut check.findings,
    );
}

/// No two keys share an alias: LiteLLM's key aliases are unique.
fn key_alias_unique<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    let Some(alias) = &key.alias else {
        return;
    };
    if !check.key_aliases.insert(alias.as_str()) {
        check.findings.fatal.push(Problem::new(
            at.field("alias"),
            format!("duplicate key alias {alias:?}: LiteLLM key aliases are unique"),
        ));
    }
}

/// A key's `budgetDuration` and `duration` are durations.
fn key_durations<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    for (name, value) in [
        ("budgetDuration", &key.budget_duration),
        ("duration", &key.duration),
    ] {
        if let Some(message) = value.as_deref().and_then(not_a_duration) {
            check
                .findings
                .fatal
                .push(Problem::new(at.field(name), message));
        }
    }
}

/// A key's models are among the policy's allowed models.
fn key_models_allowed<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    let field = at.field("models");
    models_allowed(check.policy, &key.models, &field, &mut check.findings);
}

/// A key's models are among its team's, or LiteLLM refuses them for the
/// key (a warning).
fn key_models_of_the_team<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    let (Some(team_models), Some(models)) = (&check.request.team.models, &key.models) else {
        return;
    };
    for (j, model) in models.iter().enumerate() {
        if !team_models.contains(model) {
            check.findings.warnings.push(Problem::new(
                format!("{}[{j}]", at.field("models")),
                format!("model {model:?} is not among the team's models: LiteLLM will refuse it for this key"),
            ));
        }
    }
}

/// A key's budget is within the policy's ceiling per key.
fn key_budget_under_ceiling<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    if let (Some(budget), Some(ceiling)) = (&key.max_budget, check.max_key_budget) {
        if budget.0 > ceiling {
            check.findings.fatal.push(Problem::new(
                at.field("maxBudget"),
                format!("{} exceeds the policy ceiling {ceiling} per key", budget.0),
            ));
        }
    }
}

/// A key's budget above the team budget is cut by the team's (a warning).
fn key_budget_under_team<'a>(check: &mut Check<'a>, at: &At, key: &'a KeyRequest) {
    if let (Some(budget), Some(team)) = (&key.max_budget, check.team_budget) {
        if budget.0 > team {
            check.findings.warnings.push(Problem::new(
                at.field("maxBudget"),
                format!(
                    "{} is above the team budget {team}: the team limit applies first",
                    budget.0
                ),
            ));
        }
    }
}

/// XRs may add models unless the policy says otherwise.
fn models_allowed_at_all(check: &mut Check<'_>) {
    if !check.request.models.is_empty() && check.policy.allow_models == Some(false) {
        check.findings.fatal.push(Problem::new(
            check.paths.models.clone(),
            "policy does not allow XRs to add models",
        ));
    }
}

/// Every model, by the rules of one model ([`MODEL_RULES`]).
fn models(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(check, &paths.models, &request.models, &MODEL_RULES);
}

/// A model's name maps onto a DNS label ([`names::model_label`]) that no
/// model before it maps onto: the label names its object.
fn model_name<'a>(check: &mut Check<'a>, at: &At, model: &'a ModelRequest) {
    let label = names::model_label(&model.name);
    if model.name.chars().any(char::is_control) || !is_dns_label(&label) {
        check.findings.fatal.push(Problem::new(
            at.field("name"),
            format!(
                "{:?} must have letters or digits, and at most 63 once every run of other \
                 characters is one '-' (it names the LiteLLMModel object)",
                model.name
            ),
        ));
    } else if let Some((first, first_name)) = check.model_labels.get(&label) {
        let message = if *first_name == model.name {
            format!("duplicate model name {:?}", model.name)
        } else {
            format!(
                "{:?} and {first_name:?} ({}[{first}].name) both name the object \
                 model-{label}; rename one",
                model.name, check.paths.models
            )
        };
        check
            .findings
            .fatal
            .push(Problem::new(at.field("name"), message));
    } else {
        check.model_labels.insert(label, (at.index, &model.name));
    }
}

/// A model names its upstream model.
fn model_upstream_set<'a>(check: &mut Check<'a>, at: &At, model: &'a ModelRequest) {
    if model.model.is_empty() {
        check
            .findings
            .fatal
            .push(Problem::new(at.field("model"), "must not be empty"));
    }
}

/// A model's public name is among the policy's allowed models.
fn model_name_allowed<'a>(check: &mut Check<'a>, at: &At, model: &'a ModelRequest) {
    let Some(allowed) = &check.policy.allowed_models else {
        return;
    };
    if !model_allowed(allowed, &model.name) {
        check.findings.fatal.push(Problem::new(
            at.field("name"),
            format!(
                "model {:?} is not allowed by policy (allowed: {})",
                model.name,
                allowed.join(", ")
            ),
        ));
    }
}

/// A model's `apiBase` is an http(s) URL.
fn model_api_base<'a>(check: &mut Check<'a>, at: &At, model: &'a ModelRequest) {
    let Some(base) = &model.api_base else {
        return;
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        check.findings.fatal.push(Problem::new(
            at.field("apiBase"),
            format!("{base:?} must be an http(s) URL"),
        ));
    }
}

/// A model's provider is among the policy's allowed providers.
fn model_provider_allowed<'a>(check: &mut Check<'a>, at: &At, model: &'a ModelRequest) {
    let (Some(providers), false) = (&check.policy.allowed_providers, model.model.is_empty()) else {
        return;
    };
    let provider = model.provider();
    if !providers.iter().any(|p| p == provider) {
        let field = match model.custom_llm_provider {
            Some(_) => "customLlmProvider",
            None => "model",
        };
        check.findings.fatal.push(Problem::new(
            at.field(field),
            format!(
                "provider {provider:?} is not allowed by policy (allowed: {})",
                providers.join(", ")
            ),
        ));
    }
}

/// The Secrets the XR's models read credentials from, against
/// `policy.allowedSecrets`, and the `LiteLLMCredential`s they use, against
/// `policy.allowedCredentials`. Composed into a namespace of the platform's
/// (`platform_namespace`), a reference needs its list: a claim could
/// otherwise name any Secret or credential of the platform's, and have it
/// sent to an upstream of its choosing.
pub fn model_secrets(
    request: &XrRequest,
    paths: &FieldPaths,
    policy: &Policy,
    platform_namespace: Option<&str>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, model) in request.models.iter().enumerate() {
        let secrets = model.secret_refs().into_iter().map(|(field, selector)| {
            let list = ("Secret", "allowedSecrets", &policy.allowed_secrets);
            (field, selector.name.as_str(), list)
        });
        let credential = model.credential_ref.iter().map(|r| {
            let list = (
                "LiteLLMCredential",
                "allowedCredentials",
                &policy.allowed_credentials,
            );
            ("credentialRef", r.name.as_str(), list)
        });
        for (field, name, (kind, list, allowed)) in secrets.chain(credential) {
            let at = format!("{}[{i}].{field}", paths.models);
            match (allowed, platform_namespace) {
                (Some(allowed), _) if !model_allowed(allowed, name) => {
                    problems.push(Problem::new(
                        at,
                        format!(
                            "{kind} {name:?} is not allowed by policy (allowed: {})",
                            allowed.join(", ")
                        ),
                    ));
                }
                (None, Some(namespace)) => problems.push(Problem::new(
                    at,
                    format!(
                        "names a {kind} in {namespace}, a namespace of the platform's: set \
                         input.policy.{list} to the {kind}s XRs may use"
                    ),
                )),
                _ => {}
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::request::{Amount, BudgetRequest, KeyRequest, ModelRequest, TeamRequest};

    fn amount(s: &str) -> Option<Amount> {
        Some(Amount(Money::parse(s).unwrap()))
    }

    fn key(name: &str) -> KeyRequest {
        KeyRequest {
            name: name.into(),
            ..Default::default()
        }
    }

    fn fields(f: &Findings) -> Vec<&str> {
        f.fatal.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn a_clean_request_has_no_findings() {
        let request = XrRequest {
            team: TeamRequest {
                models: Some(vec!["gpt-4o".into()]),
                ..Default::default()
            },
            budget: Some(BudgetRequest {
                max_budget: amount("100"),
                duration: Some("30d".into()),
                ..Default::default()
            }),
            keys: vec![key("ci"), key("dev")],
            ..Default::default()
        };
        let policy = Policy {
            allowed_models: Some(vec!["gpt-*".into()]),
            max_budget: Some("500".into()),
            max_keys: Some(2),
            ..Default::default()
        };
        assert_eq!(
            check(&request, &FieldPaths::default(), &policy),
            Findings::default()
        );
    }

    #[test]
    fn each_broken_rule_names_its_field() {
        let request = XrRequest {
            team: TeamRequest {
                models: Some(vec!["claude-3".into()]),
                ..Default::default()
            },
            budget: Some(BudgetRequest {
                max_budget: amount("900"),
                duration: Some("30x".into()),
                ..Default::default()
            }),
            keys: vec![
                KeyRequest {
                    max_budget: amount("60"),
                    ..key("ci")
                },
                key("ci"),
                key("Bad_Name"),
            ],
            models: vec![ModelRequest {
                name: "m".into(),
                model: String::new(),
                api_base: Some("ftp://x".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let policy = Policy {
            allowed_models: Some(vec!["gpt-4o".into(), "m".into()]),
            max_budget: Some("500".into()),
            max_key_budget: Some("50".into()),
            max_keys: Some(2),
            allow_models: None,
            allowed_providers: Some(vec!["openai".into()]),
            ..Default::default()
        };
        let findings = check(&request, &FieldPaths::default(), &policy);
        assert_eq!(
            fields(&findings),
            vec![
                "spec.team.models[0]",
                "spec.budget.duration",
                "spec.budget.maxBudget",
                "spec.keys",
                "spec.keys[0].maxBudget",
                "spec.keys[1].name",
                "spec.keys[2].name",
                "spec.models[0].model",
                "spec.models[0].apiBase",
            ]
        );
        assert!(findings.fatal[2].message.contains("ceiling 500"));
    }

    #[test]
    fn odd_but_workable_requests_warn() {
        let request = XrRequest {
            team: TeamRequest {
                models: Some(vec!["gpt-4o".into()]),
                ..Default::default()
            },
            budget: Some(BudgetRequest {
                max_budget: amount("10"),
                ..Default::default()
            }),
            keys: vec![KeyRequest {
                max_budget: amount("20"),
                models: Some(vec!["gpt-4o-mini".into()]),
                ..key("ci")
            }],
            ..Default::default()
        };
        let findings = check(&request, &FieldPaths::default(), &Policy::default());
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        let warned: Vec<&str> = findings.warnings.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            warned,
            vec![
                "spec.budget.duration",
                "spec.keys[0].models[0]",
                "spec.keys[0].maxBudget"
            ]
        );
    }

    fn defaulted(f: &Findings) -> Vec<&str> {
        f.defaults.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn a_team_without_models_gets_an_exact_allowed_list() {
        let policy = Policy {
            allowed_models: Some(vec!["gpt-4o".into(), "o1".into(), "gpt-4o".into()]),
            ..Default::default()
        };
        for models in [None, Some(vec![])] {
            let request = XrRequest {
                team: TeamRequest {
                    models,
                    ..Default::default()
                },
                ..Default::default()
            };
            let (rendered, findings) = review(request, &FieldPaths::default(), &policy);
            assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
            assert_eq!(
                rendered.team.models,
                Some(vec!["gpt-4o".to_string(), "o1".to_string()])
            );
            assert_eq!(defaulted(&findings), vec!["spec.team.models"]);
            assert!(findings.defaults[0].message.ends_with("apply: gpt-4o, o1"));
        }
    }

    #[test]
    fn a_team_without_models_under_a_wildcard_or_empty_policy_is_fatal() {
        let paths = FieldPaths {
            team: "spec.parameters.team".into(),
            ..Default::default()
        };
        for (allowed, says) in [
            (
                vec!["gpt-4o".to_string(), "claude-*".to_string()],
                "\"claude-*\"",
            ),
            (vec![], "policy.allowedModels is empty"),
        ] {
            for models in [None, Some(vec![])] {
                let request = XrRequest {
                    team: TeamRequest {
                        models,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                let policy = Policy {
                    allowed_models: Some(allowed.clone()),
                    ..Default::default()
                };
                let (rendered, findings) = review(request.clone(), &paths, &policy);
                assert_eq!(fields(&findings), vec!["spec.parameters.team.models"]);
                assert!(
                    findings.fatal[0].message.contains(says),
                    "{:?}",
                    findings.fatal
                );
                assert_eq!(rendered.team.models, request.team.models);
            }
        }
    }

    #[test]
    fn a_team_without_a_budget_gets_the_ceiling() {
        let policy = Policy {
            max_budget: Some("500".into()),
            ..Default::default()
        };
        let (rendered, findings) = review(XrRequest::default(), &FieldPaths::default(), &policy);
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        assert_eq!(rendered.budget.unwrap().max_budget, amount("500"));
        assert_eq!(defaulted(&findings), vec!["spec.budget.maxBudget"]);
        assert!(findings.defaults[0].message.contains("ceiling 500"));
        // The rendered budget never resets: the usual warning says so.
        let warned: Vec<&str> = findings.warnings.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(warned, vec!["spec.budget.duration"]);

        let request = XrRequest {
            budget: Some(BudgetRequest {
                duration: Some("30d".into()),
                tpm_limit: Some(1000),
                ..Default::default()
            }),
            ..Default::default()
        };
        let (rendered, findings) = review(request, &FieldPaths::default(), &policy);
        let budget = rendered.budget.unwrap();
        assert_eq!(budget.max_budget, amount("500"));
        assert_eq!(budget.tpm_limit, Some(1000));
        assert_eq!(defaulted(&findings), vec!["spec.budget.maxBudget"]);
        assert!(findings.warnings.is_empty(), "{:?}", findings.warnings);
    }

    #[test]
    fn a_key_without_a_budget_gets_the_ceiling_or_the_smaller_team_budget() {
        let policy = Policy {
            max_key_budget: Some("50".into()),
            ..Default::default()
        };
        let request = |team: &str| XrRequest {
            budget: Some(BudgetRequest {
                max_budget: amount(team),
                duration: Some("30d".into()),
                ..Default::default()
            }),
            keys: vec![
                key("open"),
                KeyRequest {
                    max_budget: amount("5"),
                    ..key("own")
                },
                KeyRequest {
                    tpm_limit: Some(10),
                    ..key("rated")
                },
            ],
            ..Default::default()
        };
        let (rendered, findings) = review(request("200"), &FieldPaths::default(), &policy);
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        let budgets: Vec<_> = rendered.keys.iter().map(|k| k.max_budget.clone()).collect();
        assert_eq!(budgets, vec![amount("50"), amount("5"), amount("50")]);
        assert!(rendered.keys[0].max_budget_from_policy && !rendered.keys[0].has_own_limits());
        assert!(!rendered.keys[1].max_budget_from_policy && rendered.keys[1].has_own_limits());
        assert_eq!(
            defaulted(&findings),
            vec!["spec.keys[0].maxBudget", "spec.keys[2].maxBudget"]
        );
        assert!(findings.defaults[0]
            .message
            .ends_with("50 applies (the policy ceiling per key)"));
        assert!(findings.defaults[1].message.contains("never resets"));
        assert!(findings.warnings.is_empty(), "{:?}", findings.warnings);

        let (rendered, findings) = review(request("20"), &FieldPaths::default(), &policy);
        assert_eq!(rendered.keys[0].max_budget, amount("20"));
        assert!(findings.defaults[0].message.contains("the team budget"));
    }

    #[test]
    fn a_broken_policy_amount_applies_no_default() {
        let policy = Policy {
            max_budget: Some("lots".into()),
            max_key_budget: Some("-1".into()),
            ..Default::default()
        };
        let request = XrRequest {
            keys: vec![key("ci")],
            ..Default::default()
        };
        let (rendered, findings) = review(request.clone(), &FieldPaths::default(), &policy);
        assert_eq!(rendered, request);
        assert_eq!(
            fields(&findings),
            vec!["input.policy.maxBudget", "input.policy.maxKeyBudget"]
        );
    }

    #[test]
    fn a_customers_budget_gets_the_ceiling_per_customer_and_is_held_to_it() {
        use crate::function::request::CustomerRequest;
        let policy = Policy {
            max_customer_budget: Some("5".into()),
            ..Default::default()
        };
        let held = |budget| XrRequest {
            customers: vec![CustomerRequest {
                name: "acme".into(),
                budget,
                ..Default::default()
            }],
            ..Default::default()
        };
        // Customers held to a budget get one of the ceiling.
        let (rendered, findings) = review(held(Some(true)), &FieldPaths::default(), &policy);
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        assert_eq!(rendered.customer_budget.unwrap().max_budget, amount("5"));
        assert_eq!(defaulted(&findings), vec!["spec.customerBudget.maxBudget"]);
        assert!(findings.defaults[0]
            .message
            .contains("ceiling 5 per customer"));
        // No customer held to one: none is rendered.
        let (rendered, findings) = review(held(None), &FieldPaths::default(), &policy);
        assert_eq!(rendered.customer_budget, None);
        assert!(findings.defaults.is_empty());
        // One of the XR's keeps its limits, and is held to the ceiling.
        let own = |max: &str| XrRequest {
            customer_budget: Some(BudgetRequest {
                max_budget: amount(max),
                duration: Some("1d".into()),
                ..Default::default()
            }),
            ..held(Some(true))
        };
        let (rendered, findings) = review(own("2"), &FieldPaths::default(), &policy);
        assert_eq!(findings, Findings::default());
        assert_eq!(rendered.customer_budget.unwrap().max_budget, amount("2"));
        let (_, findings) = review(own("9"), &FieldPaths::default(), &policy);
        assert_eq!(fields(&findings), vec!["spec.customerBudget.maxBudget"]);
        assert_eq!(
            findings.fatal[0].message,
            "9 exceeds the policy ceiling 5 per customer"
        );
        // Its duration follows the rule of the team budget's.
        let mut bad = own("2");
        bad.customer_budget.as_mut().unwrap().duration = Some("daily".into());
        let (_, findings) = review(bad, &FieldPaths::default(), &Policy::default());
        assert_eq!(fields(&findings), vec!["spec.customerBudget.duration"]);
        let mut never = own("2");
        never.customer_budget.as_mut().unwrap().duration = None;
        let (_, findings) = review(never, &FieldPaths::default(), &Policy::default());
        let warned: Vec<&str> = findings.warnings.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(warned, vec!["spec.customerBudget.duration"]);
    }

    #[test]
    fn a_broken_policy_is_fatal_and_names_the_input_field() {
        let policy = Policy {
            max_budget: Some("lots".into()),
            ..Default::default()
        };
        let findings = check(&XrRequest::default(), &FieldPaths::default(), &policy);
        assert_eq!(fields(&findings), vec!["input.policy.maxBudget"]);
    }
}
