//! Where the composed resources stand with the provider's tenancy rules
//! and the platform's allow-lists: the shared checks of users, members,
//! customers, MCP servers and object permissions. Pure.

use crate::api::common::bounds::MAX_MODEL_REF_LENGTH;
use crate::api::input::Policy;

use super::error::Problem;

/// Where the composed resources go, as the checks need it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tenancy<'a> {
    /// Namespace of the composed resources.
    pub namespace: &'a str,
    /// Whether the provider holds them to a tenant's rules: the
    /// LiteLLMInstance they reconcile against is in another namespace
    /// (a shared instance referenced from the tenant's namespace).
    pub shared_instance: bool,
    /// Whether they go to a namespace of the platform's (`input.namespace`
    /// of a legacy XR): there a reference to an existing object needs the
    /// policy's list, since a claim could otherwise name any of the
    /// platform's.
    pub platform_namespace: bool,
}

/// Where the provider refuses what a check refuses.
pub const SHARED: &str = "outside the LiteLLMInstance's namespace, where the provider refuses it";

/// LiteLLM's `models` entry that grants every model of the proxy.
const ALL_PROXY_MODELS: &str = "all-proxy-models";

/// Whether `allowed` admits `name`: an exact entry, or a `prefix*` one.
pub fn admits(allowed: &[String], name: &str) -> bool {
    allowed.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => entry == name,
    })
}

/// The problem, if any, of naming the existing `kind` `name` at `field`
/// under the policy list `list` (`input.policy.<list>`, `allowed`): not
/// admitted by the list, or no list while the resources go to a namespace
/// of the platform's.
pub fn admitted(
    field: String,
    kind: &str,
    name: &str,
    list: &str,
    allowed: &Option<Vec<String>>,
    tenancy: &Tenancy<'_>,
) -> Option<Problem> {
    match allowed {
        Some(allowed) if !admits(allowed, name) => Some(Problem::new(
            field,
            format!(
                "{kind} {name:?} is not allowed by policy (allowed: {})",
                allowed.join(", ")
            ),
        )),
        None if tenancy.platform_namespace => Some(Problem::new(
            field,
            format!(
                "names a {kind} in {}, a namespace of the platform's: set input.policy.{list} \
                 to the {kind}s XRs may use",
                tenancy.namespace
            ),
        )),
        _ => None,
    }
}

/// The problem, if any, of a model a user or customer names at `field`
/// (one of its `models`, or a customer's `defaultModel`): not among the
/// policy's allowed models or, on a shared instance, one that may reach
/// other namespaces' models (another namespace's `<namespace>/<name>`, a
/// `*`, `all-proxy-models`), which the provider refuses.
pub fn model_refusal(
    field: String,
    model: &str,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Option<Problem> {
    if let Some(allowed) = &policy.allowed_models {
        if !admits(allowed, model) {
            return Some(Problem::new(
                field,
                format!(
                    "model {model:?} is not allowed by policy (allowed: {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    let own = format!("{}/", tenancy.namespace);
    let reaches_others = !model.starts_with(&own)
        && (model.contains('/') || model.contains('*') || model == ALL_PROXY_MODELS);
    (tenancy.shared_instance && reaches_others).then(|| {
        Problem::new(
            field,
            format!(
                "{model:?} may reach other namespaces' models, refused {SHARED}: list public \
                 model names (without '/' or '*') and this namespace's own ({own}<name>)"
            ),
        )
    })
}

/// The problem of a model name a `LiteLLMCustomer` or `LiteLLMAccessGroup`
/// would not take: empty, or longer than [`MAX_MODEL_REF_LENGTH`].
pub fn model_named(at: &str, model: &str) -> Option<Problem> {
    (model.is_empty() || model.chars().count() > MAX_MODEL_REF_LENGTH as usize).then(|| {
        Problem::new(
            at,
            format!("must have 1 to {MAX_MODEL_REF_LENGTH} characters"),
        )
    })
}

/// The prefix of a tenant's MCP server names, as the provider wants it:
/// the namespace with `-` written `_`, and a `.`.
pub fn server_name_prefix(namespace: &str) -> String {
    format!("{}.", namespace.replace('-', "_"))
}

/// The prefix of a tenant's MCP access groups: its namespace and a `/`.
pub fn group_prefix(namespace: &str) -> String {
    format!("{namespace}/")
}

/// An access group named at `field`: in a tenant's namespace on a shared
/// instance only one of the namespace's prefix, and under
/// `allowedMcpAccessGroups`.
pub fn access_group(
    field: String,
    group: &str,
    policy: &Policy,
    tenancy: &Tenancy<'_>,
) -> Option<Problem> {
    let own = group_prefix(tenancy.namespace);
    if group.is_empty() {
        return Some(Problem::new(field, "must not be empty"));
    }
    if tenancy.shared_instance && !group.starts_with(&own) {
        return Some(Problem::new(
            field,
            format!(
                "{group:?} must start with {own:?} {SHARED}: a group of another name may hold \
                 other namespaces' MCP servers"
            ),
        ));
    }
    admitted(
        field,
        "MCP access group",
        group,
        "allowedMcpAccessGroups",
        &policy.allowed_mcp_access_groups,
        tenancy,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenancy(shared_instance: bool, platform_namespace: bool) -> Tenancy<'static> {
        Tenancy {
            namespace: "team-ml",
            shared_instance,
            platform_namespace,
        }
    }

    #[test]
    fn lists_admit_exact_names_and_prefixes() {
        let allowed = vec!["github".to_string(), "team-*".to_string()];
        assert!(admits(&allowed, "github"));
        assert!(admits(&allowed, "team-a"));
        assert!(!admits(&allowed, "github2"));
        assert!(!admits(&[], "github"));
    }

    #[test]
    fn the_platforms_namespace_needs_a_list() {
        let none = None;
        let at = || "spec.f".to_string();
        assert!(admitted(at(), "K", "x", "allowedK", &none, &tenancy(false, false)).is_none());
        let p = admitted(at(), "K", "x", "allowedK", &none, &tenancy(false, true)).unwrap();
        assert!(p.message.contains("set input.policy.allowedK"), "{p}");
        let list = Some(vec!["y".to_string()]);
        let p = admitted(at(), "K", "x", "allowedK", &list, &tenancy(false, false)).unwrap();
        assert_eq!(p.message, "K \"x\" is not allowed by policy (allowed: y)");
    }

    #[test]
    fn models_follow_the_policy_and_on_a_shared_instance_stay_in_the_namespace() {
        let policy = Policy {
            allowed_models: Some(vec!["gpt-*".into(), "team-ml/*".into(), "team-x/m".into()]),
            ..Default::default()
        };
        let refusal = |model: &str, shared| {
            model_refusal("spec.f".into(), model, &policy, &tenancy(shared, false))
                .map(|p| p.message)
        };
        assert_eq!(refusal("gpt-4o", true), None);
        assert_eq!(refusal("team-ml/mine", true), None);
        assert_eq!(refusal("team-x/m", false), None);
        let foreign = refusal("team-x/m", true).unwrap();
        assert!(foreign.contains("other namespaces' models"), "{foreign}");
        assert!(refusal("gpt-*", true).is_some());
        let unlisted = refusal("claude-3", false).unwrap();
        assert!(unlisted.starts_with("model \"claude-3\" is not allowed by policy"));
        let open = Policy::default();
        let field = || "spec.f".to_string();
        assert!(model_refusal(field(), ALL_PROXY_MODELS, &open, &tenancy(true, false)).is_some());
        assert!(model_refusal(field(), ALL_PROXY_MODELS, &open, &tenancy(false, false)).is_none());
    }

    #[test]
    fn a_tenants_groups_carry_its_namespace() {
        let policy = Policy::default();
        let at = || "spec.g".to_string();
        assert!(access_group(at(), "team-ml/tools", &policy, &tenancy(true, false)).is_none());
        assert!(access_group(at(), "tools", &policy, &tenancy(false, false)).is_none());
        let p = access_group(at(), "tools", &policy, &tenancy(true, false)).unwrap();
        assert!(p.message.contains("\"team-ml/\""), "{p}");
    }
}
