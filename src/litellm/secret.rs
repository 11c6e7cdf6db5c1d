//! Secrets that must never reach logs, events, status or error messages.

use std::fmt;

use serde::{Deserialize, Deserializer};
use sha2::{Digest, Sha256};

/// A master key, virtual key or provider api key.
///
/// `Debug` and `Display` print `<redacted>` so a secret can sit in any struct
/// that derives `Debug` without leaking. It is deliberately not `Serialize`:
/// request types opt in field by field with [`serialize_exposed`], so a secret
/// cannot end up in a status or event payload by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The plain value, for the few places that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self)
    }
}

/// `serialize_with` helper for optional secret fields of request bodies.
pub(super) fn serialize_exposed<S: serde::Serializer>(
    secret: &Option<Secret>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match secret {
        Some(secret) => serializer.serialize_str(secret.expose()),
        None => serializer.serialize_none(),
    }
}

/// A new virtual key: `sk-` and 48 hex digits (192 bits from the OS).
///
/// The provider chooses keys itself so it can store them before LiteLLM sees
/// them (a lost create response then cannot lose the secret).
///
/// # Panics
///
/// If the operating system has no randomness source; there is no safe
/// fallback for key material.
pub fn generate_key() -> Secret {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).expect("the OS random number generator is unavailable");
    Secret(format!("sk-{}", hex(&bytes)))
}

/// LiteLLM's `token` for a key: the lowercase sha256 hex of the key. It is
/// what LiteLLM stores and what every key endpoint accepts instead of the key.
pub fn token_of(key: &Secret) -> String {
    token_of_sha256(&Sha256::digest(key.expose().as_bytes()))
}

/// The token of a key whose SHA-256 is `sha256`.
pub fn token_of_sha256(sha256: &[u8]) -> String {
    hex(sha256)
}

/// The token for a value that is either a key (starts with `sk-`, LiteLLM's
/// own rule) or already a token. Hashing here keeps keys out of URLs and
/// request bodies, where proxies and access logs might record them.
pub(super) fn token_for(token_or_key: &str) -> String {
    if token_or_key.starts_with("sk-") {
        token_of(&Secret::new(token_or_key))
    } else {
        token_or_key.to_owned()
    }
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            // Writing to a String cannot fail.
            let _ = write!(out, "{b:02x}");
            out
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_are_redacted() {
        let secret = Secret::new("sk-very-secret");
        assert_eq!(format!("{secret:?}"), "<redacted>");
        assert_eq!(format!("{secret}"), "<redacted>");
        assert_eq!(format!("{:?}", Some(&secret)), "Some(<redacted>)");
        assert_eq!(secret.expose(), "sk-very-secret");
    }

    #[test]
    fn token_is_lowercase_sha256_hex() {
        // `echo -n sk-1234 | sha256sum`
        assert_eq!(
            token_of(&Secret::new("sk-1234")),
            "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b"
        );
    }

    #[test]
    fn generated_keys_have_the_litellm_shape_and_differ() {
        let a = generate_key();
        let b = generate_key();
        assert_ne!(a, b);
        let hex_part = a.expose().strip_prefix("sk-").expect("sk- prefix");
        assert_eq!(hex_part.len(), 48);
        assert!(hex_part
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    }

    #[test]
    fn token_for_hashes_keys_and_passes_tokens_through() {
        let key = Secret::new("sk-abcdefghijklmnop");
        assert_eq!(token_for(key.expose()), token_of(&key));
        let token = token_of(&key);
        assert_eq!(token_for(&token), token);
    }

    #[test]
    fn deserializes_from_a_plain_string() {
        let secret: Secret = serde_json::from_str("\"sk-x\"").unwrap();
        assert_eq!(secret.expose(), "sk-x");
    }
}
