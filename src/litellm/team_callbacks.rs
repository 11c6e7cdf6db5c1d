//! A team's logging destinations ("team callbacks"): the entries of the
//! team's `metadata.logging`, and the routes of LiteLLM 1.108.7's
//! `team_callback_endpoints.py` (all open source):
//!
//! | route | answers |
//! |---|---|
//! | `POST /team/{id}/callback` | 200 (the team row); 400 for a missing team (no 404); 400 for a second entry of one name and type; 422 for a variable LiteLLM does not know or a value `os.environ/...`; an unknown callback *name* is stored (200) |
//! | `GET /team/{id}/callback` | 200 with the names by event and the variables of every entry merged into one map, credential-like ones (`*key*`, `*secret*`, ...) as `***REDACTED***`; 404 for a missing team |
//! | `DELETE /team/{id}/callback/{name}` | 200, every entry of the name (all types); 404 for a missing team or name |
//! | `POST /team/{id}/disable_logging` | 200, `logging` emptied (`[]`); 404 for a missing team |
//!
//! The entries live in the team's metadata, which `/team/update` replaces
//! whole: an update that sends metadata without `logging` removes every
//! callback. `/team/new` and `/team/update` store a `logging` entry of the
//! metadata as given, encrypting the credential-like variables at rest
//! (`litellm_enc::...`, a fresh ciphertext each write) exactly as the
//! callback route does, but skipping the route's checks (an unknown
//! variable or an `os.environ/...` value is stored, and the entry is then
//! ignored, or read, at request time). The provider writes the entries
//! through the team's own metadata, after checking them here
//! ([`CALLBACK_NAMES`], [`CALLBACK_VARIABLES`]); the callback routes are
//! kept for contract tests and operators.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::api::team::{CALLBACK_NAMES, CALLBACK_SETTINGS, CALLBACK_VARIABLES, LOGGING};

use super::client::{endpoint, Endpoint};
use super::{Client, Error};

const CALLBACK_ADD: Endpoint = endpoint!(POST "/team/{team_id}/callback");
const CALLBACK_GET: Endpoint = endpoint!(GET "/team/{team_id}/callback");
const CALLBACK_DELETE: Endpoint = endpoint!(DELETE "/team/{team_id}/callback/{callback_name}");
const DISABLE_LOGGING: Endpoint = endpoint!(POST "/team/{team_id}/disable_logging");

/// The prefix of a variable LiteLLM keeps encrypted.
pub const ENCRYPTED_PREFIX: &str = "litellm_enc::";
/// What `GET /team/{id}/callback` answers in place of a credential.
pub const REDACTED: &str = "***REDACTED***";

/// One entry of a team's `metadata.logging`, as written and as read (a
/// variable LiteLLM encrypts reads back as [`ENCRYPTED_PREFIX`]...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamCallback {
    pub callback_name: String,
    /// `success`, `failure` or `success_and_failure`.
    pub callback_type: String,
    #[serde(default)]
    pub callback_vars: BTreeMap<String, String>,
}

impl TeamCallback {
    /// Whether LiteLLM keeps `variable`'s stored value encrypted (so it
    /// cannot be compared with a value).
    pub fn encrypted(&self, variable: &str) -> bool {
        self.callback_vars
            .get(variable)
            .is_some_and(|v| v.starts_with(ENCRYPTED_PREFIX))
    }
}

/// The entries of `metadata.logging`: `None` when the team has no such
/// entry (or one of another shape, which LiteLLM ignores too); entries
/// that are not callbacks are left out.
pub fn logging_of(metadata: Option<&Map<String, Value>>) -> Option<Vec<TeamCallback>> {
    let entries = metadata?.get(LOGGING)?.as_array()?;
    Some(
        entries
            .iter()
            .filter_map(|entry| serde_json::from_value(entry.clone()).ok())
            .collect(),
    )
}

/// What `GET /team/{id}/callback` reports.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TeamCallbacks {
    pub success_callbacks: Vec<String>,
    pub failure_callbacks: Vec<String>,
    /// Every entry's variables in one map, credentials as [`REDACTED`].
    pub callback_vars: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct CallbacksResponse {
    data: TeamCallbacks,
}

impl Client {
    /// Adds one callback entry to the team (`POST /team/{id}/callback`).
    /// LiteLLM answers 400 for a missing team and for an entry of the same
    /// name and type, 422 for a refused variable (see the module table).
    pub async fn team_callback_add(
        &self,
        team_id: &str,
        entry: &TeamCallback,
    ) -> Result<(), Error> {
        let url = self.url(["team", team_id, "callback"], &[]);
        self.send(&CALLBACK_ADD, url, Some(entry))
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// The team's callbacks, credentials masked; `None` for a missing team.
    pub async fn team_callbacks(&self, team_id: &str) -> Result<Option<TeamCallbacks>, Error> {
        let url = self.url(["team", team_id, "callback"], &[]);
        let reply = self.send::<()>(&CALLBACK_GET, url, None).await?;
        Ok(reply.json_or_none::<CallbacksResponse>()?.map(|r| r.data))
    }

    /// Removes every entry named `callback_name`; `false` when the team or
    /// the name was not there (both 404).
    pub async fn team_callback_delete(
        &self,
        team_id: &str,
        callback_name: &str,
    ) -> Result<bool, Error> {
        let url = self.url(["team", team_id, "callback", callback_name], &[]);
        self.send::<()>(&CALLBACK_DELETE, url, None).await?.found()
    }

    /// Empties the team's `logging`; `false` for a missing team.
    pub async fn team_disable_logging(&self, team_id: &str) -> Result<bool, Error> {
        let url = self.url(["team", team_id, "disable_logging"], &[]);
        self.send::<()>(&DISABLE_LOGGING, url, None).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_the_entries_of_a_teams_metadata() {
        let metadata = json!({
            "x": 1,
            "logging": [
                {"callback_name": "langfuse", "callback_type": "success",
                 "callback_vars": {"langfuse_host": "https://lf.example.com",
                                   "langfuse_secret_key": "litellm_enc::abc"}},
                "not an entry",
                {"callback_name": "langsmith", "callback_type": "failure"}
            ]
        });
        let entries = logging_of(metadata.as_object()).unwrap();
        assert_eq!(entries.len(), 2);
        assert!(entries[0].encrypted("langfuse_secret_key"));
        assert!(!entries[0].encrypted("langfuse_host"));
        assert!(entries[1].callback_vars.is_empty());
        assert_eq!(logging_of(json!({"x": 1}).as_object()), None);
        assert_eq!(logging_of(None), None);
        assert_eq!(logging_of(json!({"logging": []}).as_object()), Some(vec![]));
    }

    #[test]
    fn the_lists_hold_no_duplicates() {
        for list in [CALLBACK_NAMES, CALLBACK_VARIABLES] {
            let mut sorted = list.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), list.len());
        }
    }
}
