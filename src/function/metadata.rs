//! Labels, annotations and management policies of the composed resources:
//! the XR's labels, then the input's `composed` sections (`all`, the kind's,
//! `byName`), a later one winning for the same key. Pure.
//!
//! Crossplane sets some metadata of every composed resource itself, after
//! the pipeline (`crossplane.io/composite` and the claim labels, the
//! `crossplane.io/composition-resource-name` annotation): the input may not
//! set those, since Crossplane would overwrite them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::common::supported_management_policies;
use crate::api::input::{ComposedMeta, ResourceMeta};

use super::error::Problem;
use super::names;

/// Labels Crossplane sets on every composed resource.
const CROSSPLANE_LABELS: [&str; 3] = [
    "crossplane.io/composite",
    "crossplane.io/claim-name",
    "crossplane.io/claim-namespace",
];
/// Annotation Crossplane sets on every composed resource.
const COMPOSITION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";
/// Annotation naming the one external object a managed resource stands for.
const EXTERNAL_NAME: &str = "crossplane.io/external-name";
/// Prefix of the XR labels not copied: Crossplane's own.
const CROSSPLANE_PREFIX: &str = "crossplane.io/";

/// Which composed resources a section of the input applies to.
#[derive(Clone, Copy, PartialEq)]
enum Scope {
    /// Several resources (`all`, a kind).
    Many,
    /// The LiteLLMInstance, or a Usage: no management policies.
    Unmanaged,
    /// One managed resource (`byName`).
    One,
}

/// Each section of `meta` with its field path and scope.
fn sections(meta: &ComposedMeta) -> Vec<(String, &ResourceMeta, Scope)> {
    let kinds = [
        ("all", &meta.all, Scope::Many),
        ("instance", &meta.instance, Scope::Unmanaged),
        ("team", &meta.team, Scope::One),
        ("budget", &meta.budget, Scope::One),
        ("keys", &meta.keys, Scope::Many),
        ("models", &meta.models, Scope::Many),
        ("users", &meta.users, Scope::Many),
        ("mcpServers", &meta.mcp_servers, Scope::Many),
        ("customers", &meta.customers, Scope::Many),
        ("accessGroups", &meta.access_groups, Scope::Many),
    ];
    let by_name = meta.by_name.iter().flatten().map(|(name, section)| {
        let scope = if name == names::INSTANCE || name.starts_with(super::usage::PREFIX) {
            Scope::Unmanaged
        } else {
            Scope::One
        };
        (format!("byName.{name}"), Some(section), scope)
    });
    kinds
        .into_iter()
        .map(|(field, section, scope)| (field.to_string(), section.as_ref(), scope))
        .chain(by_name)
        .filter_map(|(field, section, scope)| {
            section.map(|s| (format!("input.composed.{field}"), s, scope))
        })
        .collect()
}

/// Every problem of the input's `composed` sections, each naming its field.
pub fn check(meta: &ComposedMeta) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (field, section, scope) in sections(meta) {
        for (key, value) in section.labels.iter().flatten() {
            let field = format!("{field}.labels[{key:?}]");
            if CROSSPLANE_LABELS.contains(&key.as_str()) {
                problems.push(Problem::new(
                    field,
                    "Crossplane sets this label on every composed resource itself",
                ));
            } else if !is_qualified_name(key) {
                problems.push(Problem::new(field, QUALIFIED_NAME_RULE));
            } else if !is_label_value(value) {
                problems.push(Problem::new(
                    field,
                    format!("{value:?} is not a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
                ));
            }
        }
        for key in section.annotations.iter().flatten().map(|(k, _)| k) {
            let field = format!("{field}.annotations[{key:?}]");
            if key == COMPOSITION_RESOURCE_NAME {
                problems.push(Problem::new(
                    field,
                    "Crossplane sets this annotation on every composed resource itself",
                ));
            } else if !is_qualified_name(key) {
                problems.push(Problem::new(field, QUALIFIED_NAME_RULE));
            } else if key == EXTERNAL_NAME && scope != Scope::One {
                problems.push(Problem::new(
                    field,
                    "names one LiteLLM object: set it for one resource, under input.composed.byName.<composition-resource name>",
                ));
            }
        }
        if let Some(policies) = &section.management_policies {
            let field = format!("{field}.managementPolicies");
            if scope == Scope::Unmanaged {
                problems.push(Problem::new(
                    field,
                    "only teams, budgets, keys, models, users, MCP servers, customers and access groups are managed resources with management policies",
                ));
            } else if !supported_management_policies(policies) {
                problems.push(Problem::new(
                    field,
                    "is not a combination Crossplane supports: [\"*\"], [\"Observe\"], [] (paused), or Observe with any of Create, Update, Delete, LateInitialize",
                ));
            }
        }
    }
    problems
}

const QUALIFIED_NAME_RULE: &str = "is not a valid key: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

/// A label or annotation key: `[prefix/]name`.
fn is_qualified_name(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_dns_subdomain(prefix) && is_label_name(name),
        None => is_label_name(key),
    }
}

fn is_label_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_label_name(value)
}

fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= 253
        && text.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Applies the XR's labels and the input's sections to the desired
/// resources (checked by [`check`]). Returns a warning for each `byName`
/// entry that names no resource this composition renders.
pub fn apply(
    desired: &mut BTreeMap<String, Value>,
    xr: &Value,
    meta: &ComposedMeta,
) -> Vec<Problem> {
    let xr_labels: Map<String, Value> = match meta.xr_labels {
        Some(false) => Map::new(),
        _ => xr
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter(|(k, _)| !k.starts_with(CROSSPLANE_PREFIX))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    };
    for (name, object) in desired.iter_mut() {
        let kind_section = match object["kind"].as_str() {
            Some("LiteLLMInstance") => &meta.instance,
            Some("LiteLLMTeam") => &meta.team,
            // The team's budget: the customers' one is another object
            // (`byName.budget-customers` reaches it).
            Some("LiteLLMBudget") if name == names::BUDGET => &meta.budget,
            Some("LiteLLMVirtualKey") => &meta.keys,
            Some("LiteLLMModel") => &meta.models,
            Some("LiteLLMUser") => &meta.users,
            Some("LiteLLMMCPServer") => &meta.mcp_servers,
            Some("LiteLLMCustomer") => &meta.customers,
            Some("LiteLLMAccessGroup") => &meta.access_groups,
            _ => &None,
        };
        let own = meta.by_name.as_ref().and_then(|by| by.get(name));
        let layers = [meta.all.as_ref(), kind_section.as_ref(), own];
        let mut labels = xr_labels.clone();
        let mut annotations = Map::new();
        let mut policies = None;
        for layer in layers.into_iter().flatten() {
            extend(&mut labels, &layer.labels);
            extend(&mut annotations, &layer.annotations);
            policies = layer.management_policies.as_ref().or(policies);
        }
        let metadata = object["metadata"]
            .as_object_mut()
            .expect("built with metadata");
        if !labels.is_empty() {
            metadata.insert("labels".into(), Value::Object(labels));
        }
        if !annotations.is_empty() {
            metadata.insert("annotations".into(), Value::Object(annotations));
        }
        let is_managed = matches!(
            object["kind"].as_str(),
            Some(
                "LiteLLMTeam"
                    | "LiteLLMBudget"
                    | "LiteLLMVirtualKey"
                    | "LiteLLMModel"
                    | "LiteLLMUser"
                    | "LiteLLMMCPServer"
                    | "LiteLLMCustomer"
                    | "LiteLLMAccessGroup"
            )
        );
        if let (Some(policies), true) = (policies, is_managed) {
            object["spec"]["managementPolicies"] =
                serde_json::to_value(policies).expect("policies serialize");
        }
    }
    meta.by_name
        .iter()
        .flatten()
        .filter(|(name, _)| !desired.contains_key(*name))
        .map(|(name, _)| {
            Problem::new(
                format!("input.composed.byName.{name}"),
                "names no resource this XR composes: left unused",
            )
        })
        .collect()
}

fn extend(into: &mut Map<String, Value>, from: &Option<BTreeMap<String, String>>) {
    for (k, v) in from.iter().flatten() {
        into.insert(k.clone(), Value::String(v.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_follow_kubernetes_syntax() {
        for good in ["team", "platform.example.org/cost-center", "a.b_c-d", "x/Y"] {
            assert!(is_qualified_name(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "Example.org/a",
            "a/b/c",
            "/a",
            "a/",
            &"x".repeat(64),
        ] {
            assert!(!is_qualified_name(bad), "{bad}");
        }
        assert!(is_label_value(""));
        assert!(!is_label_value("a b"));
    }
}
