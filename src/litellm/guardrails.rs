//! Guardrails: `POST /guardrails`, `GET /guardrails/{id}/info`,
//! `PUT /guardrails/{id}`, `DELETE /guardrails/{id}`, and
//! `GET /v2/guardrails/list` to find one by name.
//!
//! Measured on 1.108.7 (open source, no licence; every route is the proxy
//! admin's, none Enterprise-only): LiteLLM chooses `guardrail_id` (a UUID;
//! one in the create body is ignored) and answers the create with it;
//! `guardrail_name` is unique (a duplicate is answered 500 "Unique
//! constraint failed", by `POST`, `PUT` and `PATCH` alike, so
//! [`Client::guardrail_new`] and [`Client::guardrail_update`] read the name
//! back to tell a duplicate from a failure). A missing guardrail is
//! answered 404 by `GET`, `PUT`, `PATCH` and `DELETE`. `PUT` replaces the
//! name, `litellm_params` and `guardrail_info` whole (a parameter left out
//! is back to LiteLLM's default, `api_key` cleared); `PATCH` merges
//! `litellm_params` and ignores a top-level `default_on`, so it is not
//! used. LiteLLM stores every parameter of `litellm_params` with its
//! default (over two hundred), encrypts the secret ones, and masks them
//! when it reads a guardrail back (`sk****56`: the first and last two
//! characters; `get_masked_values`, for every name holding `key`, `token`,
//! `secret`, ...). The create's answer echoes the request, `api_key` in
//! clear: only its id is read. `guardrail_info` is stored as given. A
//! configuration the integration refuses is answered 400 by `POST` and 422
//! by `PUT` (which then puts the old one back). `/guardrails/list` lists
//! only the config file's guardrails, `/v2/guardrails/list` those of the
//! database and of the config file.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{Client, Error, Secret};

const GUARDRAIL_NEW: Endpoint = endpoint!(POST "/guardrails");
const GUARDRAIL_GET: Endpoint = endpoint!(GET "/guardrails/{guardrail_id}/info");
const GUARDRAIL_UPDATE: Endpoint = endpoint!(PUT "/guardrails/{guardrail_id}");
const GUARDRAIL_DELETE: Endpoint = endpoint!(DELETE "/guardrails/{guardrail_id}");
const GUARDRAIL_LIST: Endpoint = endpoint!(GET "/v2/guardrails/list");

/// Where a guardrail read from the database comes from
/// (`guardrail_definition_location`); the config file's are `"config"`.
pub const DEFINED_IN_DATABASE: &str = "db";

/// Body of `POST /guardrails` and `PUT /guardrails/{id}` (under
/// `guardrail`): the name, every parameter (plain and secret) and the
/// whole `guardrail_info`. Secret parameters are [`Secret`]s, which `Debug`
/// prints as `<redacted>`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardrailRequest {
    /// The id to `PUT` to; never sent (LiteLLM ignores it on create).
    pub guardrail_id: Option<String>,
    /// Unique in the proxy; keys and teams name the guardrail by it.
    pub guardrail_name: String,
    /// `guardrail`, `mode`, `default_on`, `api_base` and the plain
    /// parameters.
    pub litellm_params: Map<String, Value>,
    /// `api_key`, ...: merged into `litellm_params` on the wire.
    pub secret_params: BTreeMap<String, Secret>,
    /// Free-form; replaced whole by every write.
    pub guardrail_info: Map<String, Value>,
}

impl Serialize for GuardrailRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            guardrail_name: &'a str,
            litellm_params: Map<String, Value>,
            guardrail_info: &'a Map<String, Value>,
        }
        #[derive(Serialize)]
        struct Body<'a> {
            guardrail: Wire<'a>,
        }
        let mut params = self.litellm_params.clone();
        for (name, value) in &self.secret_params {
            params.insert(name.clone(), Value::String(value.expose().to_owned()));
        }
        Body {
            guardrail: Wire {
                guardrail_name: &self.guardrail_name,
                litellm_params: params,
                guardrail_info: &self.guardrail_info,
            },
        }
        .serialize(serializer)
    }
}

/// A guardrail as `GET /guardrails/{id}/info` and `/v2/guardrails/list`
/// report it: secret parameters masked.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Guardrail {
    pub guardrail_id: String,
    pub guardrail_name: String,
    pub litellm_params: Map<String, Value>,
    pub guardrail_info: Option<Map<String, Value>>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// `db` (see [`DEFINED_IN_DATABASE`]) or `config`.
    pub guardrail_definition_location: Option<String>,
}

impl Guardrail {
    /// `litellm_params.guardrail`: the integration.
    pub fn integration(&self) -> Option<&str> {
        self.litellm_params.get("guardrail").and_then(Value::as_str)
    }

    /// `litellm_params.mode`, where it is one mode (it may be a list, or
    /// modes by tag).
    pub fn mode(&self) -> Option<&str> {
        self.litellm_params.get("mode").and_then(Value::as_str)
    }

    /// `litellm_params.default_on` (`false` when unset).
    pub fn default_on(&self) -> bool {
        self.litellm_params
            .get("default_on")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `litellm_params.api_base`.
    pub fn api_base(&self) -> Option<&str> {
        self.litellm_params.get("api_base").and_then(Value::as_str)
    }

    /// Whether it lives in the database (the config file's cannot be
    /// written through the admin API).
    pub fn in_database(&self) -> bool {
        self.guardrail_definition_location
            .as_deref()
            .is_none_or(|l| l == DEFINED_IN_DATABASE)
    }
}

/// `litellm_params` hold masked secrets and may hold a URL with
/// credentials: `Debug` shows the name, id and integration only.
impl fmt::Debug for Guardrail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guardrail")
            .field("guardrail_id", &self.guardrail_id)
            .field("guardrail_name", &self.guardrail_name)
            .field("guardrail", &self.integration())
            .field("mode", &self.mode())
            .field("default_on", &self.default_on())
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Created {
    guardrail_id: String,
}

#[derive(Deserialize)]
struct Listed {
    #[serde(default)]
    guardrails: Vec<Guardrail>,
}

impl Client {
    /// Creates the guardrail and returns the id LiteLLM gave it;
    /// [`Error::Conflict`] when its name is taken.
    pub async fn guardrail_new(&self, guardrail: &GuardrailRequest) -> Result<String, Error> {
        let reply = self.post(&GUARDRAIL_NEW, guardrail).await?;
        if reply.status.is_server_error()
            && self
                .guardrail_by_name(&guardrail.guardrail_name)
                .await?
                .is_some()
        {
            return Err(reply.conflict());
        }
        // The answer echoes every parameter, secrets in clear: only the id
        // is read.
        reply.json::<Created>().map(|c| c.guardrail_id)
    }

    /// `None` when no guardrail has this id.
    pub async fn guardrail_get(&self, guardrail_id: &str) -> Result<Option<Guardrail>, Error> {
        let url = self.url(["guardrails", guardrail_id, "info"], &[]);
        let guardrail = self
            .send::<()>(&GUARDRAIL_GET, url, None)
            .await?
            .json_or_none::<Guardrail>()?;
        Ok(guardrail.filter(|g| g.guardrail_id == guardrail_id))
    }

    /// Every guardrail of the proxy (database and config file).
    pub async fn guardrail_list(&self) -> Result<Vec<Guardrail>, Error> {
        let reply = self.get(&GUARDRAIL_LIST, &[]).await?;
        reply.json::<Listed>().map(|l| l.guardrails)
    }

    /// The guardrail named `name`, if any (names are unique in the
    /// database; one of the config file may share it).
    pub async fn guardrail_by_name(&self, name: &str) -> Result<Option<Guardrail>, Error> {
        let mut found: Vec<Guardrail> = self
            .guardrail_list()
            .await?
            .into_iter()
            .filter(|g| g.guardrail_name == name)
            .collect();
        // The database's first: only it can be written.
        found.sort_by_key(|g| !g.in_database());
        Ok(found.into_iter().next())
    }

    /// Replaces the guardrail `request.guardrail_id` whole;
    /// [`Error::NotFound`] for a missing one, [`Error::Conflict`] when
    /// another guardrail has the name.
    pub async fn guardrail_update(&self, request: &GuardrailRequest) -> Result<(), Error> {
        let id = request.guardrail_id.as_deref().unwrap_or_default();
        let url = self.url(["guardrails", id], &[]);
        let reply = self.send(&GUARDRAIL_UPDATE, url, Some(request)).await?;
        if reply.status.is_server_error()
            && self
                .guardrail_by_name(&request.guardrail_name)
                .await?
                .is_some_and(|g| g.guardrail_id != id)
        {
            return Err(reply.conflict());
        }
        reply.json::<serde::de::IgnoredAny>().map(drop)
    }

    /// `false` when the guardrail was already gone.
    pub async fn guardrail_delete(&self, guardrail_id: &str) -> Result<bool, Error> {
        let url = self.url(["guardrails", guardrail_id], &[]);
        self.send::<()>(&GUARDRAIL_DELETE, url, None).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_merge_the_secrets_into_the_params_and_never_debug_print_them() {
        let request = GuardrailRequest {
            guardrail_id: Some("3654d232".into()),
            guardrail_name: "pii".into(),
            litellm_params: json!({"guardrail": "presidio", "mode": "pre_call"})
                .as_object()
                .unwrap()
                .clone(),
            secret_params: BTreeMap::from([("api_key".to_owned(), Secret::new("sk-guard-1"))]),
            guardrail_info: Map::new(),
        };
        let body = serde_json::to_value(&request).unwrap();
        assert_eq!(
            body,
            json!({"guardrail": {
                "guardrail_name": "pii",
                "litellm_params": {"guardrail": "presidio", "mode": "pre_call",
                                   "api_key": "sk-guard-1"},
                "guardrail_info": {},
            }})
        );
        assert!(!format!("{request:?}").contains("sk-guard"));
    }

    #[test]
    fn a_guardrail_read_back_shows_no_parameter_in_debug() {
        let guardrail: Guardrail = serde_json::from_value(json!({
            "guardrail_id": "g-1",
            "guardrail_name": "pii",
            "litellm_params": {"guardrail": "presidio", "mode": "pre_call",
                               "api_key": "sk****56", "default_on": true,
                               "api_base": "https://user:hunter2@presidio.example"},
            "guardrail_info": null,
            "guardrail_definition_location": "db",
            "unknown": 1,
        }))
        .unwrap();
        let debug = format!("{guardrail:?}");
        assert!(
            !debug.contains("sk**") && !debug.contains("hunter2"),
            "{debug}"
        );
        assert_eq!(guardrail.integration(), Some("presidio"));
        assert_eq!(guardrail.mode(), Some("pre_call"));
        assert!(guardrail.default_on() && guardrail.in_database());
        let config = Guardrail {
            guardrail_definition_location: Some("config".into()),
            ..guardrail
        };
        assert!(!config.in_database());
    }
}
