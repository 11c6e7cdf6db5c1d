//! Every secret value read during one reconciliation, so that error text
//! bound for status, events and logs can be scrubbed of them by value: the
//! LiteLLM client already removes anything shaped like a key (`sk-...`),
//! but a provider api key, a database password or a proxy that echoes a
//! request body can carry secrets of any shape.

use std::sync::{Arc, Mutex};

use crate::litellm::Secret;

/// What replaces a secret value in text.
pub const REDACTED: &str = "<redacted>";

/// Values shorter than this are not scrubbed: replacing every `a` or `1`
/// would garble messages without protecting anything.
const MIN_LEN: usize = 4;

/// The secret values of one reconciliation. Clones share them.
#[derive(Clone, Default)]
pub struct Scrubber(Arc<Mutex<Vec<String>>>);

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scrubber(<redacted>)")
    }
}

impl Scrubber {
    /// Remembers `secret` to be scrubbed from text from now on.
    pub fn remember(&self, secret: &Secret) {
        let value = secret.expose().trim();
        if value.len() < MIN_LEN {
            return;
        }
        let mut values = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !values.iter().any(|v| v == value) {
            values.push(value.to_owned());
            // Longest first, so a value containing another goes whole.
            values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// `text` with every remembered value replaced by [`REDACTED`].
    pub fn scrub(&self, text: &str) -> String {
        let values = self.0.lock().unwrap_or_else(|p| p.into_inner());
        values.iter().fold(text.to_owned(), |text, value| {
            text.replace(value.as_str(), REDACTED)
        })
    }
}

/// Identifies a secret value without revealing it: `sha256:` and the first
/// 16 hex digits of SHA-256 over `domain`, a NUL and the value. The domain
/// keeps fingerprints of different uses apart (and apart from LiteLLM's
/// token, the plain SHA-256 of a key).
pub fn fingerprint(domain: &str, value: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(domain.as_bytes());
    digest.update(b"\0");
    digest.update(value);
    let hex: String = digest
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_values_are_scrubbed_wherever_they_appear() {
        let scrubber = Scrubber::default();
        scrubber.remember(&Secret::new("AKIAEXAMPLE-not-sk-shaped"));
        scrubber.remember(&Secret::new("AKIAEXAMPLE"));
        scrubber.remember(&Secret::new("ab"));
        let text =
            "400: {\"api_key\": \"AKIAEXAMPLE-not-sk-shaped\", \"x\": \"AKIAEXAMPLE\", \"ab\": 1}";
        let scrubbed = scrubber.scrub(text);
        assert!(!scrubbed.contains("AKIAEXAMPLE"), "{scrubbed}");
        assert!(
            scrubbed.contains("\"ab\""),
            "short values are left: {scrubbed}"
        );
        assert_eq!(scrubbed.matches(REDACTED).count(), 2);
        assert_eq!(format!("{scrubber:?}"), "Scrubber(<redacted>)");
    }

    #[test]
    fn fingerprints_are_short_domain_separated_and_stable() {
        let a = fingerprint("one", b"value");
        assert_eq!(a, fingerprint("one", b"value"));
        assert_ne!(a, fingerprint("two", b"value"));
        assert!(a.starts_with("sha256:") && a.len() == 7 + 16, "{a}");
        assert!(!a.contains("value"));
    }

    #[test]
    fn clones_share_what_they_remember() {
        let scrubber = Scrubber::default();
        scrubber.clone().remember(&Secret::new("password-1"));
        assert_eq!(scrubber.scrub("password-1"), REDACTED);
    }
}
