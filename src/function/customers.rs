//! Customers (end users): the XR's `customers`, each a `LiteLLMCustomer`
//! whose id the provider chooses, checked against the value rules, the
//! provider's tenancy rules and the platform's policy. A customer's models
//! follow the rule of a user's ([`tenancy::model_refusal`]), and its
//! `budget` links the customers' budget (`customerBudget`, a
//! `LiteLLMBudget` of its own) or, without one, the XR's budget. LiteLLM
//! (1.108.7) tracks each customer's spend on its own, against the limits
//! of the budget it links (`check_end_user_budget` counts
//! `spend:end_user:<id>`): customers linking one budget share its tier,
//! not its spend. Pure.

use std::collections::BTreeSet;

use crate::api::common::bounds::{MAX_ALIAS_LENGTH, MAX_MODELS};
use crate::api::input::{FieldPaths, Policy};

use super::error::Problem;
use super::request::{CustomerRequest, XrRequest};
use super::rules::{each, list_allowed, over_policy_limit, unique_label, At, Findings};
use super::tenancy::{self, Tenancy};

/// What the rules of customers read, and what they have found so far.
struct Check<'a> {
    request: &'a XrRequest,
    paths: &'a FieldPaths,
    policy: &'a Policy,
    tenancy: Tenancy<'a>,
    /// Names of the customers checked so far.
    names: BTreeSet<&'a str>,
    findings: Findings,
}

/// A rule of the request as a whole.
type Rule = for<'a> fn(&mut Check<'a>);
/// A rule of one customer.
type CustomerRule = for<'a> fn(&mut Check<'a>, &At, &'a CustomerRequest);

/// The rules of customers, in the order they report.
const RULES: [Rule; 4] = [
    customers_allowed,
    customer_count,
    customers,
    customer_budget_linked,
];

/// The rules of one customer, in the order they report.
const CUSTOMER_RULES: [CustomerRule; 5] = [
    customer_name,
    customer_alias,
    customer_models,
    customer_default_model,
    customer_budget,
];

/// Checks the XR's customers. Run on a request whose policy defaults are
/// applied: the XR's budget may be the policy's.
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

/// XRs may add customers unless the policy says otherwise.
fn customers_allowed(check: &mut Check<'_>) {
    list_allowed(
        &mut check.findings,
        &check.paths.customers,
        check.request.customers.len(),
        check.policy.allow_customers,
        "customers",
        "allowCustomers",
    );
}

/// No more customers than the policy allows.
fn customer_count(check: &mut Check<'_>) {
    let count = check.request.customers.len();
    if let Some(message) = over_policy_limit(count, check.policy.max_customers, "customers") {
        let field = check.paths.customers.clone();
        check.findings.fatal.push(Problem::new(field, message));
    }
}

/// Every customer, by the rules of one customer ([`CUSTOMER_RULES`]).
fn customers(check: &mut Check<'_>) {
    let (request, paths) = (check.request, check.paths);
    each(check, &paths.customers, &request.customers, &CUSTOMER_RULES);
}

/// A customer's name is a DNS label no customer before it has: it is part
/// of its object's name (and, through it, of the id the provider chooses).
fn customer_name<'a>(check: &mut Check<'a>, at: &At, customer: &'a CustomerRequest) {
    unique_label(
        &customer.name,
        "customer",
        at,
        &mut check.names,
        &mut check.findings,
    );
}

/// A customer's alias has at most [`MAX_ALIAS_LENGTH`] characters, as a
/// `LiteLLMCustomer` takes.
fn customer_alias<'a>(check: &mut Check<'a>, at: &At, customer: &'a CustomerRequest) {
    if customer
        .alias
        .as_ref()
        .is_some_and(|a| a.chars().count() > MAX_ALIAS_LENGTH as usize)
    {
        check.findings.fatal.push(Problem::new(
            at.field("alias"),
            format!("must have at most {MAX_ALIAS_LENGTH} characters"),
        ));
    }
}

/// A customer's models, when it has any: at most [`MAX_MODELS`], each
/// named (at most [`MAX_MODEL_REF_LENGTH`] characters), among the policy's
/// allowed models and, on a shared instance, reaching no other namespace's
/// models: the rule of a user's models. Without models (or with `[]`) the
/// customer narrows nothing: its requests may use what their key allows.
fn customer_models<'a>(check: &mut Check<'a>, at: &At, customer: &'a CustomerRequest) {
    let Some(models) = &customer.models else {
        return;
    };
    if models.len() > MAX_MODELS as usize {
        check.findings.fatal.push(Problem::new(
            at.field("models"),
            format!(
                "{} models; a LiteLLMCustomer takes at most {MAX_MODELS}",
                models.len()
            ),
        ));
        return;
    }
    for (j, model) in models.iter().enumerate() {
        let at = format!("{}[{j}]", at.field("models"));
        let problem = tenancy::model_named(&at, model)
            .or_else(|| tenancy::model_refusal(at, model, check.policy, &check.tenancy));
        check.findings.fatal.extend(problem);
    }
}

/// A customer's default model is named, and follows the rule of its
/// models: LiteLLM sends the customer's requests there when no model of its
/// region is available.
fn customer_default_model<'a>(check: &mut Check<'a>, at: &At, customer: &'a CustomerRequest) {
    let Some(model) = &customer.default_model else {
        return;
    };
    let at = at.field("defaultModel");
    let problem = tenancy::model_named(&at, model)
        .or_else(|| tenancy::model_refusal(at, model, check.policy, &check.tenancy));
    check.findings.fatal.extend(problem);
}

/// A customer held to a budget needs one: the customers' budget
/// (`customerBudget`), else the XR's `budget`; the policy's ceilings stand
/// in for either.
fn customer_budget<'a>(check: &mut Check<'a>, at: &At, customer: &'a CustomerRequest) {
    let request = check.request;
    if customer.budget == Some(true)
        && request.customer_budget.is_none()
        && request.budget.is_none()
    {
        check.findings.fatal.push(Problem::new(
            at.field("budget"),
            format!(
                "the XR renders no budget to hold the customer to: set {} (or {}; a customer \
                 takes a budget only by reference, so it has no limits of its own)",
                check.paths.customer_budget, check.paths.budget
            ),
        ));
    }
}

/// The customers' budget is linked by a customer (a warning): else it is
/// rendered for nothing.
fn customer_budget_linked(check: &mut Check<'_>) {
    let request = check.request;
    if request.customer_budget.is_some()
        && !request.customers.iter().any(|c| c.budget == Some(true))
    {
        check.findings.warnings.push(Problem::new(
            check.paths.customer_budget.clone(),
            "no customer links it (budget: true): it limits nobody",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::customer::ModelRegion;
    use crate::function::request::BudgetRequest;

    fn customer(name: &str) -> CustomerRequest {
        CustomerRequest {
            name: name.into(),
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

    fn with_customers(customers: Vec<CustomerRequest>) -> XrRequest {
        XrRequest {
            budget: Some(BudgetRequest::default()),
            customers,
            ..Default::default()
        }
    }

    #[test]
    fn good_customers_have_no_findings() {
        let request = with_customers(vec![
            CustomerRequest {
                alias: Some("Alice".into()),
                models: Some(vec!["gpt-4o".into(), "team-ml/mine".into()]),
                allowed_model_region: Some(ModelRegion::Eu),
                default_model: Some("gpt-4o".into()),
                budget: Some(true),
                ..customer("alice")
            },
            // Without models, or with an empty list, a customer narrows
            // nothing: allowed on a shared instance too.
            CustomerRequest {
                models: Some(vec![]),
                ..customer("bob")
            },
            customer("carol"),
        ]);
        let policy = Policy {
            allowed_models: Some(vec!["gpt-4o".into(), "team-ml/*".into()]),
            max_customers: Some(3),
            allow_customers: Some(true),
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
        let one = |c: CustomerRequest| with_customers(vec![c]);
        let cases: Vec<(&str, Policy, XrRequest, &str, &str)> = vec![
            (
                "customers the policy does not allow",
                Policy {
                    allow_customers: Some(false),
                    ..Default::default()
                },
                one(customer("alice")),
                "spec.customers",
                "input.policy.allowCustomers",
            ),
            (
                "more customers than the policy allows",
                Policy {
                    max_customers: Some(1),
                    ..Default::default()
                },
                with_customers(vec![customer("a"), customer("b")]),
                "spec.customers",
                "2 customers requested, policy allows at most 1",
            ),
            (
                "an empty name",
                open.clone(),
                one(customer("")),
                "spec.customers[0].name",
                "must be a DNS label",
            ),
            (
                "a name too long for an object name",
                open.clone(),
                one(customer(&"a".repeat(64))),
                "spec.customers[0].name",
                "at most 63",
            ),
            (
                "a name no DNS label",
                open.clone(),
                one(customer("Alice")),
                "spec.customers[0].name",
                "must be a DNS label",
            ),
            (
                "two customers of one name",
                open.clone(),
                with_customers(vec![customer("a"), customer("a")]),
                "spec.customers[1].name",
                "duplicate customer name \"a\"",
            ),
            (
                "an alias longer than a LiteLLMCustomer takes",
                open.clone(),
                one(CustomerRequest {
                    alias: Some("x".repeat(MAX_ALIAS_LENGTH as usize + 1)),
                    ..customer("a")
                }),
                "spec.customers[0].alias",
                "at most 1024 characters",
            ),
            (
                "a model the policy does not allow",
                policy.clone(),
                one(CustomerRequest {
                    models: Some(vec!["gpt-4o".into(), "claude-3".into()]),
                    ..customer("a")
                }),
                "spec.customers[0].models[1]",
                "model \"claude-3\" is not allowed by policy",
            ),
            (
                "a model of another namespace",
                open.clone(),
                one(CustomerRequest {
                    models: Some(vec!["team-x/m".into()]),
                    ..customer("a")
                }),
                "spec.customers[0].models[0]",
                "may reach other namespaces' models",
            ),
            (
                "a wildcard model",
                open.clone(),
                one(CustomerRequest {
                    models: Some(vec!["gpt-*".into()]),
                    ..customer("a")
                }),
                "spec.customers[0].models[0]",
                "may reach other namespaces' models",
            ),
            (
                "an empty model",
                open.clone(),
                one(CustomerRequest {
                    models: Some(vec![String::new()]),
                    ..customer("a")
                }),
                "spec.customers[0].models[0]",
                "must have 1 to",
            ),
            (
                "more models than a LiteLLMCustomer takes",
                open.clone(),
                one(CustomerRequest {
                    models: Some(vec!["gpt-4o".into(); MAX_MODELS as usize + 1]),
                    ..customer("a")
                }),
                "spec.customers[0].models",
                "takes at most 1024",
            ),
            (
                "a default model the policy does not allow",
                policy.clone(),
                one(CustomerRequest {
                    default_model: Some("claude-3".into()),
                    ..customer("a")
                }),
                "spec.customers[0].defaultModel",
                "model \"claude-3\" is not allowed by policy",
            ),
            (
                "a default model of every namespace",
                open.clone(),
                one(CustomerRequest {
                    default_model: Some("all-proxy-models".into()),
                    ..customer("a")
                }),
                "spec.customers[0].defaultModel",
                "may reach other namespaces' models",
            ),
            (
                "an empty default model",
                open.clone(),
                one(CustomerRequest {
                    default_model: Some(String::new()),
                    ..customer("a")
                }),
                "spec.customers[0].defaultModel",
                "must have 1 to",
            ),
            (
                "the XR's budget when it renders none",
                open.clone(),
                XrRequest {
                    customers: vec![CustomerRequest {
                        budget: Some(true),
                        ..customer("a")
                    }],
                    ..Default::default()
                },
                "spec.customers[0].budget",
                "or spec.budget",
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
    fn a_customers_budget_stands_in_for_the_xrs_and_one_nobody_links_warns() {
        let customers_budget = |budget| XrRequest {
            customer_budget: Some(BudgetRequest::default()),
            customers: vec![CustomerRequest {
                budget,
                ..customer("a")
            }],
            ..Default::default()
        };
        // Held to the customers' budget, without the XR's.
        let findings = run(&Policy::default(), &customers_budget(Some(true)));
        assert_eq!(findings, Findings::default());
        let findings = run(&Policy::default(), &customers_budget(Some(false)));
        assert!(findings.fatal.is_empty(), "{:?}", findings.fatal);
        let warned: Vec<(&str, &str)> = findings
            .warnings
            .iter()
            .map(|p| (p.field.as_str(), p.message.as_str()))
            .collect();
        assert_eq!(
            warned,
            [(
                "spec.customerBudget",
                "no customer links it (budget: true): it limits nobody"
            )]
        );
    }

    #[test]
    fn the_tenancy_rule_holds_only_on_a_shared_instance() {
        let request = with_customers(vec![CustomerRequest {
            models: Some(vec!["team-x/m".into(), "*".into()]),
            default_model: Some("all-proxy-models".into()),
            ..customer("a")
        }]);
        let own = Tenancy {
            shared_instance: false,
            ..tenant()
        };
        let policy = Policy::default();
        let paths = FieldPaths::default();
        assert_eq!(check(&request, &paths, &policy, &own), Findings::default());
        let fields: Vec<String> = check(&request, &paths, &policy, &tenant())
            .fatal
            .into_iter()
            .map(|p| p.field)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.customers[0].models[0]",
                "spec.customers[0].models[1]",
                "spec.customers[0].defaultModel"
            ]
        );
    }

    #[test]
    fn problems_name_the_fields_where_the_input_puts_them() {
        let paths = FieldPaths {
            customers: "spec.parameters.endUsers".into(),
            budget: "spec.parameters.spend".into(),
            ..Default::default()
        };
        let request = XrRequest {
            customers: vec![CustomerRequest {
                budget: Some(true),
                ..customer("a")
            }],
            ..Default::default()
        };
        let policy = Policy {
            max_customers: Some(0),
            ..Default::default()
        };
        let findings = check(&request, &paths, &policy, &tenant());
        let fields: Vec<&str> = findings.fatal.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.parameters.endUsers",
                "spec.parameters.endUsers[0].budget"
            ]
        );
        assert!(findings.fatal[1]
            .message
            .contains("or spec.parameters.spend"));
    }
}
