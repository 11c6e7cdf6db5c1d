//! Credentials: `POST /credentials`, `GET /credentials/by_name/{name}`,
//! `PATCH /credentials/{name}`, `DELETE /credentials/{name}`.
//!
//! LiteLLM keeps the values encrypted in its database and never returns
//! them: a read masks every value whose name [`masked_when_read`] says
//! (`sk****90`) and shows the others as stored. `credential_info` is kept
//! in plain text.
//!
//! Measured on 1.108.7: a duplicate name is answered 409, a missing
//! credential 404 on every route (there is no `GET /credentials/{name}`:
//! 405). `PATCH` merges `credential_values` (a `null` value is dropped,
//! `credential_values_to_delete` removes names) but replaces
//! `credential_info` in the database (only the proxy's memory merges it,
//! until its next reload), and leaves it as it was when it is `{}`: so
//! every update sends the whole `credential_info`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{Client, Error, Secret};

const CREDENTIAL_NEW: Endpoint = endpoint!(POST "/credentials");
const CREDENTIAL_GET: Endpoint = endpoint!(GET "/credentials/by_name/{name}");
const CREDENTIAL_UPDATE: Endpoint = endpoint!(PATCH "/credentials/{name}");
const CREDENTIAL_DELETE: Endpoint = endpoint!(DELETE "/credentials/{name}");

/// The words LiteLLM 1.108.7 looks for (in the lowercased name) to mask a
/// value when it reads a credential back (`get_masked_values`).
const MASKED_NAME_PARTS: [&str; 7] = [
    "authorization",
    "token",
    "key",
    "secret",
    "credentials",
    "password",
    "passwd",
];

/// Whether LiteLLM masks the value of a credential named `name` when it
/// reads the credential back. The others it returns as stored.
pub fn masked_when_read(name: &str) -> bool {
    let name = name.to_lowercase();
    MASKED_NAME_PARTS.iter().any(|part| name.contains(part))
}

/// Body of `POST /credentials` and `PATCH /credentials/{name}`. Its values
/// are [`Secret`]s, which `Debug` prints as `<redacted>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CredentialRequest {
    /// Chosen by the caller, so a create whose response is lost can be
    /// found; `PATCH` accepts it when it is the name in the path.
    pub credential_name: String,
    /// Every value, secret or not; a `PATCH` merges them into the stored
    /// ones.
    #[serde(serialize_with = "exposed_values")]
    pub credential_values: BTreeMap<String, Secret>,
    /// Required by both routes (`{}` leaves the stored one on `PATCH`).
    pub credential_info: Map<String, Value>,
    /// Names to remove (`PATCH` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub credential_values_to_delete: Vec<String>,
    /// Unset: left as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

fn exposed_values<S: Serializer>(
    values: &BTreeMap<String, Secret>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(values.iter().map(|(name, value)| (name, value.expose())))
}

/// A credential as `GET /credentials/by_name/{name}` reports it.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Credential {
    pub credential_name: String,
    pub display_name: Option<String>,
    pub credential_info: Option<Map<String, Value>>,
    /// Masked where [`masked_when_read`] says, else as stored: a value
    /// from a Secret whose name LiteLLM does not mask is here in plain
    /// text, so `Debug` shows only the names.
    pub credential_values: Map<String, Value>,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("credential_name", &self.credential_name)
            .field("display_name", &self.display_name)
            .field("credential_info", &self.credential_info)
            .field(
                "credential_values",
                &self.credential_values.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Client {
    /// Creates a credential under the caller's name; [`Error::Conflict`] if
    /// that name is taken.
    pub async fn credential_new(&self, credential: &CredentialRequest) -> Result<(), Error> {
        let reply = self.post(&CREDENTIAL_NEW, credential).await?;
        if reply.status == reqwest::StatusCode::CONFLICT {
            return Err(reply.conflict());
        }
        reply.json::<IgnoredAny>().map(drop)
    }

    /// `None` when no credential has this name.
    pub async fn credential_get(&self, name: &str) -> Result<Option<Credential>, Error> {
        let url = self.url(["credentials", "by_name", name], &[]);
        self.send::<()>(&CREDENTIAL_GET, url, None)
            .await?
            .json_or_none()
    }

    /// Merges the values into the credential named in the request, removes
    /// `credential_values_to_delete`, and replaces `credential_info`;
    /// [`Error::NotFound`] for a missing credential.
    pub async fn credential_update(&self, credential: &CredentialRequest) -> Result<(), Error> {
        let url = self.url(["credentials", &credential.credential_name], &[]);
        let reply = self.send(&CREDENTIAL_UPDATE, url, Some(credential)).await?;
        reply.json::<IgnoredAny>().map(drop)
    }

    /// `false` when the credential was already gone.
    pub async fn credential_delete(&self, name: &str) -> Result<bool, Error> {
        let url = self.url(["credentials", name], &[]);
        self.send::<()>(&CREDENTIAL_DELETE, url, None)
            .await?
            .found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_send_every_value_but_never_debug_print_one() {
        let request = CredentialRequest {
            credential_name: "ns.openai".into(),
            credential_values: BTreeMap::from([
                ("api_key".to_owned(), Secret::new("sk-upstream-secret")),
                ("api_base".to_owned(), Secret::new("http://up")),
            ]),
            credential_info: Map::from_iter([("k".to_owned(), Value::from("v"))]),
            ..CredentialRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            serde_json::json!({
                "credential_name": "ns.openai",
                "credential_values": {"api_base": "http://up", "api_key": "sk-upstream-secret"},
                "credential_info": {"k": "v"},
            })
        );
        let debug = format!("{request:?}");
        assert!(
            !debug.contains("sk-upstream") && !debug.contains("http://up"),
            "{debug}"
        );
        let update = CredentialRequest {
            credential_values_to_delete: vec!["old".into()],
            display_name: Some("OpenAI".into()),
            ..request
        };
        let body = serde_json::to_value(&update).unwrap();
        assert_eq!(
            body["credential_values_to_delete"],
            serde_json::json!(["old"])
        );
        assert_eq!(body["display_name"], "OpenAI");
    }

    #[test]
    fn a_credential_read_back_debug_prints_names_only() {
        let credential: Credential = serde_json::from_value(serde_json::json!({
            "credential_name": "c",
            "credential_values": {"api_base": "http://user:pass@up"},
            "source": "db",
        }))
        .unwrap();
        let debug = format!("{credential:?}");
        assert!(
            debug.contains("api_base") && !debug.contains("pass@"),
            "{debug}"
        );
    }

    #[test]
    fn the_masked_names_are_litellms() {
        for masked in [
            "api_key",
            "AWS_SECRET_ACCESS_KEY",
            "aws_access_key_id",
            "aws_session_token",
            "vertex_credentials",
            "db_password",
            "passwd",
            "x_authorization",
        ] {
            assert!(masked_when_read(masked), "{masked}");
        }
        for plain in [
            "api_base",
            "api_version",
            "aws_region_name",
            "vertex_project",
        ] {
            assert!(!masked_when_read(plain), "{plain}");
        }
    }
}
