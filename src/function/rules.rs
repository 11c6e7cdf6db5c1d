//! What the checks of a request (`validate`, `members`, `mcp`) share: the
//! findings they collect and the value rules of names and durations. Pure.

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
