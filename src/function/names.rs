//! Composition-resource names: the keys of the desired-resources map,
//! which build, validation, metadata, usages and the XR's status agree on.

pub const INSTANCE: &str = "instance";
pub const BUDGET: &str = "budget";
pub const TEAM: &str = "team";
/// The budget of the customers held to one (`spec.customerBudget`). No
/// item's name maps onto it: `customer-<name>` has a `-` after `customer`.
pub const CUSTOMER_BUDGET: &str = "budget-customers";

pub fn key(name: &str) -> String {
    format!("key-{name}")
}

pub fn user(name: &str) -> String {
    format!("user-{name}")
}

pub fn mcp_server(name: &str) -> String {
    format!("mcp-{name}")
}

pub fn customer(name: &str) -> String {
    format!("customer-{name}")
}

pub fn access_group(name: &str) -> String {
    format!("access-group-{name}")
}

/// `model-<name>` with the model name mapped onto a DNS label: ASCII
/// letters lowercased, every run of anything else (`/`, `:`, `.`, `_`,
/// `-`, …) one `-`, none at either end. `openai/gpt-4o` becomes
/// `model-openai-gpt-4o`, `llama3:70b` `model-llama3-70b`. Names that
/// map alike (`gpt-4o`, `GPT_4o`) are refused by validation.
pub fn model(name: &str) -> String {
    format!("model-{}", model_label(name))
}

/// The DNS-label part of [`model`].
pub fn model_label(name: &str) -> String {
    let mut label = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            label.push(c.to_ascii_lowercase());
        } else if !label.is_empty() && !label.ends_with('-') {
            label.push('-');
        }
    }
    if label.ends_with('-') {
        label.pop();
    }
    label
}
