//! Tags, guardrails and per-model rate limits of teams and keys, and the
//! routes and model aliases of keys (`api::access`): what is sent, what is
//! drift, and what a tenant may not ask for. Written once for every kind
//! that has them.
//!
//! LiteLLM keeps the usage settings inside `metadata`
//! ([`litellm::METADATA_SETTINGS`]), so they are compared there, and a
//! user's `metadata` may not carry them itself: the typed field says it,
//! and the other settings LiteLLM reads from metadata (a
//! `temp_budget_increase` raises a key's budget, `logging` sends its
//! requests' logs elsewhere) are the platform's alone.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::access::{KeyAccess, KeyType, Usage};
use crate::api::FreeForm;
use crate::litellm::{self, KeyAccessRequest, KeyInfo, LiveUsage, UsageRequest};

use crate::provider::managed::contract::ExternalError;
use crate::provider::managed::diff::{money_f64, Diff};
use crate::provider::managed::ownership::may_list_models;

/// The typed field of each metadata setting that has one.
const TYPED: &[(&str, &str)] = &[
    ("tags", "tags"),
    ("guardrails", "guardrails"),
    ("model_rpm_limit", "modelRpmLimit"),
    ("model_tpm_limit", "modelTpmLimit"),
];

/// `forProvider` name of the per-model spend limits.
pub const MODEL_MAX_BUDGET: &str = "modelMaxBudget";

/// The typed field of each Enterprise setting, for [`usage_reserved`].
const RESERVED: &[(&str, &str)] = &[
    ("tags", "tags"),
    ("guardrails", "guardrails"),
    ("model_max_budget", MODEL_MAX_BUDGET),
];

/// The route groups a key outside the LiteLLMInstance's namespace may be
/// given: those LiteLLM itself lets a non-admin give
/// (`_NON_ADMIN_SAFE_ALLOWED_ROUTES_PRESETS` of 1.108.7). LiteLLM lets a key
/// call every route in its `allowed_routes`, admin routes included.
pub const TENANT_ROUTES: &[&str] = &["llm_api_routes", "info_routes"];

pub fn usage_request(usage: &Usage) -> UsageRequest {
    UsageRequest {
        tags: usage.tags.clone(),
        guardrails: usage.guardrails.clone(),
        model_rpm_limit: usage.model_rpm_limit.clone(),
        model_tpm_limit: usage.model_tpm_limit.clone(),
        model_max_budget: usage.model_max_budget.as_ref().map(|budgets| {
            budgets
                .iter()
                .filter_map(|(model, budget)| {
                    Some((
                        model.clone(),
                        litellm::ModelBudgetRequest {
                            budget_limit: money_f64(&budget.budget_limit)?,
                            time_period: budget.time_period.clone(),
                        },
                    ))
                })
                .collect()
        }),
    }
}

/// Marks each set usage field that LiteLLM does not hold as given: lists
/// as sets, limits by model name and value.
pub fn usage_diff(diff: &mut Diff, want: &Usage, live: LiveUsage<'_>) {
    let list = |name: &str| -> Vec<String> {
        live.get(name)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    diff.set("tags", want.tags.as_deref(), &list("tags"));
    diff.set(
        "guardrails",
        want.guardrails.as_deref(),
        &list("guardrails"),
    );
    let limits = [
        ("modelRpmLimit", "model_rpm_limit", &want.model_rpm_limit),
        ("modelTpmLimit", "model_tpm_limit", &want.model_tpm_limit),
    ];
    for (field, name, want) in limits {
        let Some(want) = want else { continue };
        let have = live.get(name).and_then(Value::as_object);
        let same = have.is_some_and(|have| {
            have.len() == want.len()
                && want
                    .iter()
                    .all(|(model, limit)| have.get(model).and_then(Value::as_i64) == Some(*limit))
        });
        if !same {
            diff.mark(field);
        }
    }
    if let Some(want) = &want.model_max_budget {
        let have = live.model_max_budget();
        let same = have.map_or(0, |h| h.len()) == want.len()
            && want.iter().all(|(model, budget)| {
                let have = have.and_then(|h| h.get(model));
                let limit = have
                    .and_then(|b| b.get("budget_limit"))
                    .and_then(Value::as_f64);
                let period = have
                    .and_then(|b| b.get("time_period"))
                    .and_then(Value::as_str);
                money_f64(&budget.budget_limit) == limit
                    && Some(budget.time_period.as_str()) == period
            });
        if !same {
            diff.mark(MODEL_MAX_BUDGET);
        }
    }
}

pub fn key_access_request(access: &KeyAccess) -> KeyAccessRequest {
    KeyAccessRequest {
        key_type: access.key_type.map(KeyType::as_str),
        allowed_routes: access.allowed_routes.clone(),
        aliases: access.model_aliases.clone(),
    }
}

/// Marks each set access field the live key does not match. A key type is
/// compared with the type LiteLLM recorded (it also replaced the routes).
pub fn key_access_diff(diff: &mut Diff, want: &KeyAccess, live: &KeyInfo) {
    let key_type = want.key_type.map(KeyType::as_str);
    diff.field("keyType", key_type, live.key_type.as_deref());
    diff.set(
        "allowedRoutes",
        want.allowed_routes.as_deref(),
        &live.allowed_routes,
    );
    diff.field(
        "modelAliases",
        want.model_aliases.as_ref(),
        Some(&live.aliases),
    );
}

/// Why the user's `metadata` may not be sent: an entry LiteLLM reads as a
/// setting, which has its typed field, or which (`tenant`: outside the
/// LiteLLMInstance's namespace) only the platform may set. Names the entry,
/// never its value.
pub fn metadata_refusal(metadata: Option<&FreeForm>, tenant: bool) -> Option<String> {
    let names = metadata.into_iter().flat_map(|m| m.keys());
    for name in names {
        if let Some((_, field)) = TYPED.iter().find(|(n, _)| n == name) {
            return Some(format!(
                "forProvider.metadata.{name}: set by forProvider.{field}"
            ));
        }
        if tenant && litellm::METADATA_SETTINGS.contains(&name.as_str()) {
            return Some(format!(
                "forProvider.metadata.{name}: LiteLLM reads this metadata entry as a setting \
                 of the team or key, which only resources in the LiteLLMInstance's namespace \
                 may set"
            ));
        }
    }
    None
}

/// Why a key's routes or aliases may not be sent from `namespace`
/// (docs/tenancy.md): outside the LiteLLMInstance's namespace no management key,
/// no route beyond [`TENANT_ROUTES`] (LiteLLM would let the key call it,
/// admin routes included), and no alias to a model its `models` could not
/// name.
pub fn key_access_refusal(
    access: &KeyAccess,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    if namespace == instance_namespace {
        return None;
    }
    if access.key_type == Some(KeyType::Management) {
        return Some(
            "forProvider.keyType: a management key may create and change users, teams and \
             keys; only resources in the LiteLLMInstance's namespace may have one"
                .to_owned(),
        );
    }
    if let Some(route) = access
        .allowed_routes
        .iter()
        .flatten()
        .find(|r| !TENANT_ROUTES.contains(&r.as_str()))
    {
        return Some(format!(
            "forProvider.allowedRoutes: {route:?}: LiteLLM lets a key call every route it lists, \
             admin routes included; outside the LiteLLMInstance's namespace list only {}",
            TENANT_ROUTES.join(" or ")
        ));
    }
    alias_refusal(access.model_aliases.as_ref(), namespace, instance_namespace)
}

/// Why model aliases of a team or key may not be sent from `namespace`:
/// outside the LiteLLMInstance's namespace each target follows the rules of
/// `models` (an alias would otherwise reach what `models` may not name).
pub fn alias_refusal(
    aliases: Option<&BTreeMap<String, String>>,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    if namespace == instance_namespace {
        return None;
    }
    for (alias, target) in aliases.into_iter().flatten() {
        let targets = [target.clone()];
        if may_list_models(Some(&targets), true, namespace, instance_namespace).is_err() {
            return Some(format!(
                "forProvider.modelAliases.{alias}: {target:?} may reach models of other \
                 namespaces; outside the LiteLLMInstance's namespace an alias names a public \
                 model name (without '/' or '*') or this namespace's own ({namespace}/<name>)"
            ));
        }
    }
    None
}

/// The Enterprise-only settings a usage request sends: (field, LiteLLM
/// name) pairs for [`enterprise`].
pub fn usage_reserved(usage: &UsageRequest) -> Vec<(&'static str, &'static str)> {
    usage
        .enterprise()
        .into_iter()
        .map(|name| {
            let field = RESERVED
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(name, |(_, field)| *field);
            (field, name)
        })
        .collect()
}

/// A write refused because it sent settings LiteLLM reserves for Enterprise
/// licences (`reserved`: the `forProvider` field and LiteLLM's name of
/// each), said in the resource's terms: not retried before the resource
/// changes (or the next poll). LiteLLM answers its licence check with 403,
/// and for some key settings (`model_max_budget`) with 500 and the same
/// words: a 500 counts only when the request sent a reserved setting and
/// the answer names the licence.
pub fn enterprise(err: ExternalError, reserved: &[(&str, &str)]) -> ExternalError {
    let gated = match &err {
        ExternalError::LiteLLM(litellm::Error::Forbidden { .. }) => true,
        ExternalError::LiteLLM(litellm::Error::Retryable { detail, .. }) => {
            detail.starts_with("HTTP 500") && detail.to_ascii_lowercase().contains("enterprise")
        }
        _ => false,
    };
    if !gated || reserved.is_empty() {
        return err;
    }
    let fields: Vec<String> = reserved
        .iter()
        .map(|(field, _)| format!("forProvider.{field}"))
        .collect();
    let names: Vec<&str> = reserved.iter().map(|(_, name)| *name).collect();
    let status = match err {
        ExternalError::LiteLLM(litellm::Error::Forbidden { .. }) => 403,
        _ => 500,
    };
    ExternalError::Invalid(format!(
        "{}: the proxy refused the write (HTTP {status}): LiteLLM accepts {} only with an \
         Enterprise licence; remove the field or license the proxy",
        fields.join(", "),
        names.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn access(value: Value) -> KeyAccess {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn usage_is_compared_where_litellm_keeps_it() {
        let want: Usage = serde_json::from_value(json!({
            "tags": ["b", "a"],
            "modelRpmLimit": {"gpt-4o": 5},
        }))
        .unwrap();
        let same = json!({"tags": ["a", "b"], "model_rpm_limit": {"gpt-4o": 5}, "other": 1});
        let mut diff = Diff::new();
        usage_diff(&mut diff, &want, LiveUsage::of(same.as_object()));
        assert!(diff.is_empty(), "{:?}", diff.fields());
        let changed = json!({"tags": ["a"], "model_rpm_limit": {"gpt-4o": 5, "gpt-5": 1}});
        let mut diff = Diff::new();
        usage_diff(&mut diff, &want, LiveUsage::of(changed.as_object()));
        assert_eq!(diff.fields(), ["tags", "modelRpmLimit"]);
        let mut diff = Diff::new();
        usage_diff(
            &mut diff,
            &Usage::default(),
            LiveUsage::of(changed.as_object()),
        );
        assert!(diff.is_empty(), "unset is left to LiteLLM");
    }

    #[test]
    fn a_key_type_is_compared_with_the_type_litellm_recorded() {
        let live = KeyInfo {
            key_type: Some("llm_api".into()),
            allowed_routes: vec!["llm_api_routes".into()],
            aliases: [("fast".to_owned(), "gpt-4o".to_owned())].into(),
            ..KeyInfo::default()
        };
        let mut diff = Diff::new();
        let want = access(json!({"keyType": "llm_api", "modelAliases": {"fast": "gpt-4o"}}));
        key_access_diff(&mut diff, &want, &live);
        assert!(diff.is_empty(), "{:?}", diff.fields());
        let mut diff = Diff::new();
        let want = access(json!({"allowedRoutes": ["info_routes"], "modelAliases": {}}));
        key_access_diff(&mut diff, &want, &live);
        assert_eq!(diff.fields(), ["allowedRoutes", "modelAliases"]);
        assert_eq!(
            serde_json::to_value(key_access_request(&access(json!({"keyType": "read_only"}))))
                .unwrap(),
            json!({"key_type": "read_only"})
        );
    }

    #[test]
    fn tenants_get_no_admin_routes_and_no_aliases_into_other_namespaces() {
        let cases = [
            (json!({"keyType": "llm_api"}), None),
            (json!({"keyType": "read_only"}), None),
            (
                json!({"keyType": "management"}),
                Some("forProvider.keyType:"),
            ),
            (
                json!({"allowedRoutes": ["llm_api_routes", "info_routes"]}),
                None,
            ),
            (
                json!({"allowedRoutes": ["/key/generate"]}),
                Some("forProvider.allowedRoutes:"),
            ),
            (
                json!({"allowedRoutes": ["management_routes"]}),
                Some("forProvider.allowedRoutes:"),
            ),
            (
                json!({"modelAliases": {"fast": "gpt-4o", "mine": "ns/m"}}),
                None,
            ),
            (
                json!({"modelAliases": {"theirs": "other/m"}}),
                Some("forProvider.modelAliases.theirs:"),
            ),
            (
                json!({"modelAliases": {"all": "*"}}),
                Some("forProvider.modelAliases.all:"),
            ),
        ];
        for (value, want) in cases {
            let got = key_access_refusal(&access(value.clone()), "ns", "litellm");
            match (want, &got) {
                (None, None) => {}
                (Some(prefix), Some(why)) => assert!(why.starts_with(prefix), "{value}: {why}"),
                _ => panic!("{value}: want {want:?}, got {got:?}"),
            }
            assert_eq!(
                key_access_refusal(&access(value), "litellm", "litellm"),
                None
            );
        }
    }

    #[test]
    fn metadata_settings_are_refused_by_name() {
        let meta = |value: Value| -> FreeForm { serde_json::from_value(value).unwrap() };
        let budget = meta(json!({"team": "ml", "temp_budget_increase": 1000}));
        let why = metadata_refusal(Some(&budget), true).unwrap();
        assert!(
            why.starts_with("forProvider.metadata.temp_budget_increase:"),
            "{why}"
        );
        assert!(!why.contains("1000"), "{why}");
        assert_eq!(metadata_refusal(Some(&budget), false), None);
        let typed = meta(json!({"model_rpm_limit": {"gpt-4o": 1}}));
        for tenant in [true, false] {
            assert_eq!(
                metadata_refusal(Some(&typed), tenant).as_deref(),
                Some("forProvider.metadata.model_rpm_limit: set by forProvider.modelRpmLimit")
            );
        }
        assert_eq!(
            metadata_refusal(Some(&meta(json!({"team": "ml"}))), true),
            None
        );
    }

    #[test]
    fn an_enterprise_refusal_names_the_fields() {
        let forbidden = || {
            ExternalError::LiteLLM(litellm::Error::Forbidden {
                op: "POST /key/generate",
                detail: "enterprise".into(),
            })
        };
        let usage = UsageRequest {
            tags: Some(vec!["a".into()]),
            ..UsageRequest::default()
        };
        let err = enterprise(forbidden(), &usage_reserved(&usage));
        assert!(!err.is_retryable());
        assert!(err.to_string().starts_with("forProvider.tags: "), "{err}");
        let err = enterprise(forbidden(), &usage_reserved(&UsageRequest::default()));
        assert!(matches!(err, ExternalError::LiteLLM(_)), "{err}");
        // LiteLLM's 500 for a key's model budgets counts when it names the
        // licence; any other 500 stays a temporary failure.
        let answered = |detail: &str| {
            ExternalError::LiteLLM(litellm::Error::Retryable {
                op: "POST /key/generate",
                detail: detail.into(),
            })
        };
        let reserved = [("modelMaxBudget", "model_max_budget")];
        let err = enterprise(
            answered("HTTP 500: You must have an enterprise license to set model_max_budget"),
            &reserved,
        );
        assert!(
            err.to_string().starts_with("forProvider.modelMaxBudget: ") && !err.is_retryable(),
            "{err}"
        );
        let err = enterprise(answered("HTTP 500: database is down"), &reserved);
        assert!(err.is_retryable(), "{err}");
    }
}
