//! When a virtual key is replaced, and why: the pure decisions behind key
//! rotation and the recovery of a key lost from its Secret. The effects
//! (Secret, LiteLLM, annotations) are in [`crate::provider::kinds::key`].
//!
//! A rotation is journaled so that a crash or a lost response at any step
//! leaves exactly one current key in the Secret and no key that nobody
//! tracks:
//!
//! 1. the new secret goes into the connection Secret as `pendingKey`
//!    (`key` still holds the current one);
//! 2. a LiteLLM key is created with it (same alias, team, limits,
//!    metadata; the old key's alias is moved aside first, since aliases are
//!    unique);
//! 3. the resource records the new token as external name, the old one as
//!    `retiring-token` with `retire-after`, and `last-rotation-time`;
//! 4. the Secret's `key` becomes the new secret and `pendingKey` goes, in
//!    one write;
//! 5. after the grace period (at once for a lost key) the old key is
//!    deleted and the annotations removed.
//!
//! A `pendingKey` found on the next reconciliation resumes at step 2 or 4,
//! depending on whether step 3 happened.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// Annotation asking for a rotation: an RFC 3339 time. The key is replaced
/// once if it is older than that time.
pub const ROTATE_REQUESTED_AT: &str = "litellm.crossplane.io/rotate-requested-at";
/// Annotation: token of the key a rotation replaced, deleted after
/// [`RETIRE_AFTER`].
pub const RETIRING_TOKEN: &str = "litellm.crossplane.io/retiring-token";
/// Annotation: when the key of [`RETIRING_TOKEN`] is deleted.
pub const RETIRE_AFTER: &str = "litellm.crossplane.io/retire-after";
/// Annotation: when the current key replaced its predecessor.
pub const LAST_ROTATION: &str = "litellm.crossplane.io/last-rotation-time";
/// Data key of a rotation's new secret in the connection Secret, until it
/// becomes `key`.
pub const PENDING_KEY: &str = "pendingKey";
/// Data key beside [`PENDING_KEY`]: why the rotation started (not a
/// secret), so that a resumed rotation keeps its reason and grace period.
pub const PENDING_REASON: &str = "pendingReason";
/// Condition type set when the key was replaced.
pub const KEY_REPLACED: &str = "KeyReplaced";

/// Why the key is replaced now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Why {
    /// A rotation was interrupted (a `pendingKey` is in the Secret).
    Interrupted,
    /// The Secret no longer holds the current key: how it was lost.
    Lost(String),
    /// The rotate-requested-at annotation is newer than the key.
    Requested,
    /// The key reached `forProvider.rotation.every`.
    Scheduled,
}

impl Why {
    /// What [`PENDING_REASON`] records.
    pub fn journal(&self) -> String {
        match self {
            Why::Lost(how) => format!("{}: {how}", self.reason()),
            other => other.reason().to_owned(),
        }
    }

    /// The reason a journal names; [`Why::Interrupted`] when it names none.
    pub fn from_journal(text: &str) -> Why {
        let (reason, detail) = text.split_once(": ").unwrap_or((text, ""));
        match reason {
            "SecretLost" => Why::Lost(detail.to_owned()),
            "RotationRequested" => Why::Requested,
            "Rotated" => Why::Scheduled,
            _ => Why::Interrupted,
        }
    }

    /// Condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Why::Interrupted => "RotationResumed",
            Why::Lost(_) => "SecretLost",
            Why::Requested => "RotationRequested",
            Why::Scheduled => "Rotated",
        }
    }
}

/// What is known when deciding.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    /// The external name: the token of the current key.
    pub id: &'a str,
    /// Name of the connection Secret, for messages.
    pub secret_name: &'a str,
    /// Whether the connection Secret exists.
    pub secret_exists: bool,
    /// Token of the Secret's `key`, if it has one.
    pub stored_token: Option<String>,
    /// Whether the Secret has a `pendingKey`.
    pub pending: bool,
    /// The rotate-requested-at annotation, as written.
    pub requested_at: Option<&'a str>,
    /// When the current key came to be: see [`key_born`].
    pub born: Option<Timestamp>,
    /// `forProvider.rotation.every`, in seconds.
    pub every: Option<u64>,
    pub now: Timestamp,
}

/// Whether and why to replace the key; an unreadable annotation is an
/// error naming it.
pub fn decide(facts: &Facts) -> Result<Option<Why>, String> {
    if facts.pending {
        return Ok(Some(Why::Interrupted));
    }
    if facts.stored_token.as_deref() != Some(facts.id) {
        let how = if !facts.secret_exists {
            format!("connection Secret {} does not exist", facts.secret_name)
        } else if facts.stored_token.is_none() {
            format!("connection Secret {} has no key", facts.secret_name)
        } else {
            format!(
                "connection Secret {} holds a key other than the current one",
                facts.secret_name
            )
        };
        return Ok(Some(Why::Lost(how)));
    }
    if let Some(text) = facts.requested_at {
        let requested = parse_time(text).ok_or_else(|| {
            format!("annotation {ROTATE_REQUESTED_AT}: {text:?} is not an RFC 3339 time")
        })?;
        // Only a request made after the key was born replaces it, so the
        // annotation can stay in place after its rotation.
        if facts.born.is_none_or(|born| requested > born) && requested <= facts.now {
            return Ok(Some(Why::Requested));
        }
    }
    if let Some(next) = next_rotation(facts.born, facts.every) {
        if next <= facts.now {
            return Ok(Some(Why::Scheduled));
        }
    }
    Ok(None)
}

/// When the current key came to be: its last rotation, else its creation
/// in LiteLLM, whichever is later.
pub fn key_born(last_rotation: Option<&str>, created_at: Option<&str>) -> Option<Timestamp> {
    let last = last_rotation.and_then(parse_time);
    let created = created_at.and_then(parse_time);
    last.max(created).or(last).or(created)
}

/// When a key born at `born` is due under `every` seconds.
pub fn next_rotation(born: Option<Timestamp>, every: Option<u64>) -> Option<Timestamp> {
    let every = SignedDuration::from_secs(i64::try_from(every?).ok()?);
    born?.checked_add(every).ok()
}

/// `now` plus `seconds`, saturating at the largest time jiff holds.
pub fn after(now: Timestamp, seconds: u64) -> Timestamp {
    i64::try_from(seconds)
        .ok()
        .and_then(|s| now.checked_add(SignedDuration::from_secs(s)).ok())
        .unwrap_or(Timestamp::MAX)
}

/// Parses an RFC 3339 time; LiteLLM's times may come without an offset
/// (they are UTC then).
pub fn parse_time(text: &str) -> Option<Timestamp> {
    text.parse::<Timestamp>()
        .ok()
        .or_else(|| format!("{text}Z").parse::<Timestamp>().ok())
}

/// A time as written into annotations and status: RFC 3339, whole seconds.
pub fn format_time(time: Timestamp) -> String {
    format!("{time:.0}")
}

/// The alias the retiring key takes during its grace period, so that the
/// new key can have the alias (LiteLLM aliases are unique).
pub fn retired_alias(alias: &str, token: &str) -> String {
    let short: String = token.chars().take(8).collect();
    format!("{alias}.retired-{short}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn facts() -> Facts<'static> {
        Facts {
            id: "t1",
            secret_name: "ci-key",
            secret_exists: true,
            stored_token: Some("t1".into()),
            pending: false,
            requested_at: None,
            born: Some(at("2026-11-01T00:00:00Z")),
            every: None,
            now: at("2026-11-30T00:00:00Z"),
        }
    }

    #[test]
    fn a_healthy_key_is_kept() {
        assert_eq!(decide(&facts()), Ok(None));
    }

    #[test]
    fn every_way_of_losing_the_key_is_named() {
        let gone = Facts {
            secret_exists: false,
            stored_token: None,
            ..facts()
        };
        let stripped = Facts {
            stored_token: None,
            ..facts()
        };
        let other = Facts {
            stored_token: Some("t9".into()),
            ..facts()
        };
        for (case, needle) in [
            (gone, "does not exist"),
            (stripped, "has no key"),
            (other, "other than the current one"),
        ] {
            match decide(&case) {
                Ok(Some(Why::Lost(how))) => assert!(how.contains(needle), "{how}"),
                other => panic!("{needle}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_interrupted_rotation_comes_first() {
        let interrupted = Facts {
            pending: true,
            stored_token: None,
            ..facts()
        };
        assert_eq!(decide(&interrupted), Ok(Some(Why::Interrupted)));
    }

    #[test]
    fn requests_newer_than_the_key_rotate_once() {
        let newer = Facts {
            requested_at: Some("2026-11-15T00:00:00Z"),
            ..facts()
        };
        assert_eq!(decide(&newer), Ok(Some(Why::Requested)));
        let older = Facts {
            requested_at: Some("2026-10-15T00:00:00Z"),
            ..facts()
        };
        assert_eq!(decide(&older), Ok(None));
        let future = Facts {
            requested_at: Some("2027-01-01T00:00:00Z"),
            ..facts()
        };
        assert_eq!(decide(&future), Ok(None), "not before its time");
        let garbage = Facts {
            requested_at: Some("yesterday"),
            ..facts()
        };
        assert!(decide(&garbage).unwrap_err().contains(ROTATE_REQUESTED_AT));
    }

    #[test]
    fn schedules_count_from_the_keys_birth() {
        let due = Facts {
            every: Some(20 * 86400),
            ..facts()
        };
        assert_eq!(decide(&due), Ok(Some(Why::Scheduled)));
        let not_yet = Facts {
            every: Some(30 * 86400),
            ..facts()
        };
        assert_eq!(decide(&not_yet), Ok(None));
        assert_eq!(
            next_rotation(Some(at("2026-11-01T00:00:00Z")), Some(86400)),
            Some(at("2026-11-02T00:00:00Z"))
        );
        assert_eq!(next_rotation(None, Some(1)), None);
        assert_eq!(next_rotation(Some(Timestamp::MAX), Some(86400)), None);
    }

    #[test]
    fn birth_is_the_later_of_rotation_and_creation() {
        assert_eq!(
            key_born(
                Some("2026-11-20T00:00:00Z"),
                Some("2026-11-01T10:00:00.123000")
            ),
            Some(at("2026-11-20T00:00:00Z"))
        );
        assert_eq!(
            key_born(None, Some("2026-11-01T10:00:00.5")),
            Some(at("2026-11-01T10:00:00.5Z"))
        );
        assert_eq!(
            key_born(None, Some("2026-11-01T10:00:00+00:00")),
            Some(at("2026-11-01T10:00:00Z"))
        );
        assert_eq!(key_born(Some("nonsense"), None), None);
    }

    #[test]
    fn reasons_survive_the_journal() {
        for why in [
            Why::Lost("connection Secret x does not exist".into()),
            Why::Requested,
            Why::Scheduled,
            Why::Interrupted,
        ] {
            assert_eq!(Why::from_journal(&why.journal()), why);
        }
        assert_eq!(Why::from_journal("garbage"), Why::Interrupted);
    }

    #[test]
    fn times_and_aliases() {
        assert_eq!(
            after(at("2026-11-01T00:00:00Z"), 3600),
            at("2026-11-01T01:00:00Z")
        );
        assert_eq!(after(at("2026-11-01T00:00:00Z"), u64::MAX), Timestamp::MAX);
        assert_eq!(
            format_time(at("2026-11-01T00:00:00.7Z")),
            "2026-11-01T00:00:00Z"
        );
        assert_eq!(
            retired_alias("ci", "abcdef0123456789"),
            "ci.retired-abcdef01"
        );
    }
}
