//! What the checks of a request (`validate`, `members`, `mcp`) share: the
//! findings they collect, the value rules of names and durations, and how
//! the rules of one item of a list run over the list. Pure.
//!
//! Each check is a list of small named rules, each checking one thing and
//! run in a fixed order, so that the problems come in that order.

use std::collections::BTreeSet;

use super::error::Problem;

/// What the checks found.
#[derive(Debug, Default, PartialEq)]
pub struct Findings {
    pub fatal: Vec<Problem>,
    pub warnings: Vec<Problem>,
    /// Policy defaults applied to fields the XR left out: the field and the
    /// value rendered in its place.
    pub defaults: Vec<Problem>,
}

/// A LiteLLM duration: a positive count of `s`, `m`, `h`, `d` or `mo`.
pub fn is_duration(text: &str) -> bool {
    let unit_at = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (count, unit) = text.split_at(unit_at);
    !count.is_empty()
        && !count.starts_with('0')
        && count.len() <= 6
        && matches!(unit, "s" | "m" | "h" | "d" | "mo")
}

/// A DNS label: what a key or model name must be to become part of an object name.
pub fn is_dns_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Why `value` is not a LiteLLM duration; `None` when it is one.
pub fn not_a_duration(value: &str) -> Option<String> {
    (!is_duration(value)).then(|| {
        format!(
            "{value:?} is not a duration: use a positive number followed by s, m, h, d or mo \
             (such as 30d)"
        )
    })
}

/// The rule of an item's name (a key's, user's or MCP server's, `what`):
/// a DNS label, as it is part of the item's object name, and the name of
/// none of the items before it (`seen`).
pub fn unique_label<'a>(
    name: &'a str,
    what: &str,
    at: &At,
    seen: &mut BTreeSet<&'a str>,
    findings: &mut Findings,
) {
    if !is_dns_label(name) {
        findings.fatal.push(Problem::new(
            at.field("name"),
            format!("{name:?} must be a DNS label (lowercase letters, digits and '-', at most 63)"),
        ));
    }
    if !seen.insert(name) {
        findings.fatal.push(Problem::new(
            at.field("name"),
            format!("duplicate {what} name {name:?}"),
        ));
    }
}

/// Why `count` `what` (`keys`, `users`) are more than the policy's `limit`
/// allows; `None` when they are not, or without a limit.
pub fn over_policy_limit(count: usize, limit: Option<u32>, what: &str) -> Option<String> {
    let limit = limit?;
    (count > limit as usize)
        .then(|| format!("{count} {what} requested, policy allows at most {limit}"))
}

/// The policy's switch for one list of the request: a Fatal at `path` when
/// the XR asks for `count` > 0 `what` and `allow` (the policy's
/// `input.policy.<field>`) is `false`; unset allows.
pub fn list_allowed(
    findings: &mut Findings,
    path: &str,
    count: usize,
    allow: Option<bool>,
    what: &str,
    field: &str,
) {
    if count > 0 && allow == Some(false) {
        findings.fatal.push(Problem::new(
            path.to_owned(),
            format!("policy does not allow XRs to add {what} (input.policy.{field})"),
        ));
    }
}

/// Where an item of a list of the request is: `spec.keys[1]`.
pub struct At {
    /// The item's index in its list.
    pub index: usize,
    /// The item's path: `spec.keys[1]`.
    pub path: String,
}

impl At {
    /// The item at `index` of the list at `list` (`spec.keys`).
    pub fn new(list: &str, index: usize) -> At {
        At {
            index,
            path: format!("{list}[{index}]"),
        }
    }

    /// The path of the item's field `name`: `spec.keys[1].name`.
    pub fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.path)
    }
}

/// Runs `rules` on each item of `items` (the list at `list`) in turn: every
/// rule on one item, in order, before the next item.
pub fn each<'a, C, T, R>(check: &mut C, list: &str, items: &'a [T], rules: &[R])
where
    R: Fn(&mut C, &At, &'a T),
{
    for (index, item) in items.iter().enumerate() {
        let at = At::new(list, index);
        for rule in rules {
            rule(check, &at, item);
        }
    }
}

/// For table tests of refusals: `None` when `findings` hold exactly one
/// `Fatal` problem, at `field` and saying `says`; else what they hold,
/// labelled `what`.
#[cfg(test)]
pub fn unless_one_fatal(
    what: &str,
    findings: &Findings,
    field: &str,
    says: &str,
) -> Option<String> {
    let fatal: Vec<(&str, &str)> = findings
        .fatal
        .iter()
        .map(|p| (p.field.as_str(), p.message.as_str()))
        .collect();
    match fatal[..] {
        [(f, message)] if f == field && message.contains(says) => None,
        _ => Some(format!("{what}: {fatal:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for good in ["30s", "5m", "12h", "30d", "1mo"] {
            assert!(is_duration(good), "{good}");
        }
        for bad in [
            "30x", "0d", "d", "30", "-1d", "1.5d", "30dd", "1000000d", "",
        ] {
            assert!(!is_duration(bad), "{bad}");
        }
    }
}
