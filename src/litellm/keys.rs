//! Virtual keys: `/key/generate`, `/key/info`, `/key/update`, `/key/delete`,
//! `/key/list`, `/key/regenerate`.
//!
//! Every operation takes a token or a key and sends only the token (the key
//! is hashed here, see [`token_of`](super::token_of)), so no key ever appears
//! in a URL or an access log.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint, Fingerprint, List, Listed, Probe, Read, Reply};
use super::secret::{serialize_exposed, token_for};
use super::{
    null_as_default, Client, Error, KeyAccessRequest, LimitsRequest, Secret, UsageRequest,
};

const KEY_GENERATE: Endpoint = endpoint!(POST "/key/generate");
static KEY_INFO: Endpoint = endpoint!(GET "/key/info");
const KEY_UPDATE: Endpoint = endpoint!(POST "/key/update");
const KEY_DELETE: Endpoint = endpoint!(POST "/key/delete");
const KEY_LIST: Endpoint = endpoint!(GET "/key/list");
// The same handler also serves `/key/{key}/regenerate`; this form keeps the
// key out of the URL.
const KEY_REGENERATE: Endpoint = endpoint!(POST "/key/regenerate");

/// Settings of a key, for `/key/generate` and `/key/update`. Unset fields are
/// not sent (unknown fields are ignored, enterprise-only ones can give 403).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KeyRequest {
    /// Unique across all live keys: a duplicate is [`Error::Conflict`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    /// The user the key belongs to. LiteLLM takes any id, that of a user
    /// that does not exist too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    #[serde(flatten)]
    pub limits: LimitsRequest,
    /// Kept in the budget row the key links to: a create makes one for the
    /// key (and links it, replacing any `budget_id` sent with it), an
    /// update writes it into the linked row, whichever that is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_budget: Option<f64>,
    #[serde(flatten)]
    pub usage: UsageRequest,
    #[serde(flatten)]
    pub access: KeyAccessRequest,
    /// Validity from now, e.g. `"30d"`; LiteLLM turns it into `expires`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    /// `/key/update` replaces the whole map, it does not merge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Merged field by field by LiteLLM; see [`ObjectPermission`](super::ObjectPermission).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_permission: Option<super::ObjectPermission>,
}

/// Options of [`Client::key_regenerate`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RegenerateRequest {
    /// The replacement key, chosen (and stored) by the caller first; LiteLLM
    /// generates one when unset.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_exposed"
    )]
    pub new_key: Option<Secret>,
    /// How long the old key keeps working, e.g. `"24h"`; unset revokes it at
    /// once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grace_period: Option<String>,
}

/// A key just created (or regenerated). `key` is the only time LiteLLM
/// returns the secret itself.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct KeyGenerated {
    pub key: Secret,
    /// sha256 of `key`; the id of the key from now on.
    pub token: String,
    #[serde(default)]
    pub key_name: Option<String>,
    #[serde(default)]
    pub key_alias: Option<String>,
    #[serde(default)]
    pub team_id: Option<String>,
    #[serde(default)]
    pub budget_id: Option<String>,
    #[serde(default)]
    pub expires: Option<String>,
    /// The key's settings as the answer holds them, read as `/key/info`'s
    /// are (`token` included; the secret never). LiteLLM answers a generate
    /// with the settings it wrote: those of the request, with LiteLLM's
    /// defaults for the rest, not the budget row a soft budget lives in.
    #[serde(skip)]
    pub info: KeyInfo,
}

/// A key as LiteLLM reports it. Never holds the secret. Serialized only to
/// fingerprint it ([`super::Listed`]).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct KeyInfo {
    pub token: String,
    /// LiteLLM's abbreviation of the key, e.g. `sk-...a181`.
    pub key_name: Option<String>,
    pub key_alias: Option<String>,
    pub team_id: Option<String>,
    pub budget_id: Option<String>,
    pub user_id: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub max_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub budget_reset_at: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
    pub blocked: Option<bool>,
    pub metadata: Option<Map<String, Value>>,
    /// `llm_api`, `management`, `read_only`, `default`, or none.
    pub key_type: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub allowed_routes: Vec<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub aliases: BTreeMap<String, String>,
    pub spend: Option<f64>,
    pub expires: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// `None` when the object never had one.
    pub object_permission: Option<super::ObjectPermission>,
    /// Spend limits by model name (`{"<model>": {"budget_limit": 1.0,
    /// "time_period": "1d"}}`); `{}` when none.
    pub model_max_budget: Option<Map<String, Value>>,
    /// The budget row the key links to (`budget_id`), as `/key/info`
    /// reports it: where a key's soft budget is.
    pub litellm_budget_table: Option<KeyBudget>,
}

/// The budget row of a key, as far as a key's own settings live there.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct KeyBudget {
    pub soft_budget: Option<f64>,
}

impl KeyInfo {
    /// Where the key is listed: `/key/list`, under its token, with the
    /// fingerprint its entry has while the key is as this.
    pub fn listed(&self) -> Option<Listed> {
        Some(Listed {
            list: List::Keys,
            fingerprint: Fingerprint::of_parsed(self)?,
            entry: None,
        })
    }

    /// The soft budget of the budget row the key links to.
    pub fn soft_budget(&self) -> Option<f64> {
        self.litellm_budget_table.as_ref()?.soft_budget
    }
}

/// `/key/generate` and `/key/update` take the key (or token) in the body next
/// to the settings.
#[derive(Serialize)]
struct WithKey<'a, T> {
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
    #[serde(flatten)]
    fields: &'a T,
}

#[derive(Deserialize)]
struct KeyInfoResponse {
    info: KeyInfoWithStatus,
}

#[derive(Deserialize)]
struct KeyInfoWithStatus {
    #[serde(flatten)]
    info: KeyInfo,
    /// LiteLLM 1.108 archives deleted keys and `/key/info` still answers them,
    /// with `"deleted"` here.
    #[serde(default)]
    status: Option<String>,
}

#[derive(Serialize)]
struct KeyDeleteRequest<'a> {
    keys: [&'a str; 1],
}

#[derive(Deserialize)]
struct KeyListResponse {
    keys: Vec<String>,
}

/// The key in an answer of `/key/info` for `token`.
fn key_info_of(reply: &Reply, token: String) -> Result<Option<KeyInfo>, Error> {
    let Some(response) = reply.json_or_none::<KeyInfoResponse>()? else {
        return Ok(None);
    };
    if response.info.status.as_deref() == Some("deleted") {
        return Ok(None);
    }
    // `info` does not repeat the token it was looked up by.
    Ok(Some(KeyInfo {
        token,
        ..response.info.info
    }))
}

impl Client {
    /// Creates a key. With `key` set, LiteLLM stores exactly that secret
    /// (it must start with `sk-`); otherwise it generates one.
    ///
    /// Generating a key that already exists is not an error in LiteLLM
    /// 1.108.7: it answers 200 for the existing key and changes nothing (the
    /// response echoes the request, not the stored settings). Read the key
    /// back with [`Client::key_info`] after a retried create. A retry that
    /// also sets `key_alias` gets [`Error::Conflict`] instead (the alias is
    /// taken, by this very key): look the key up by its token.
    pub async fn key_generate(
        &self,
        key: Option<&Secret>,
        settings: &KeyRequest,
    ) -> Result<KeyGenerated, Error> {
        let body = WithKey {
            key: key.map(Secret::expose),
            fields: settings,
        };
        let reply = self.post(&KEY_GENERATE, &body).await?;
        // A duplicate alias is answered 400, like any invalid field; it is a
        // conflict only if a live key really holds the alias.
        if reply.status == reqwest::StatusCode::BAD_REQUEST {
            if let Some(alias) = &settings.key_alias {
                if !self.key_list_by_alias(alias).await?.is_empty() {
                    return Err(reply.conflict());
                }
            }
        }
        let generated = reply.json::<KeyGenerated>()?;
        let mut info: KeyInfo = reply.json()?;
        // The same instants, written `…Z` here and `…+00:00` by `/key/info`:
        // given in `/key/info`'s form, so that a key reads the same from both.
        for time in [&mut info.created_at, &mut info.updated_at] {
            if let Some(zulu) = time.as_deref().and_then(|t| t.strip_suffix('Z')) {
                *time = Some(format!("{zulu}+00:00"));
            }
        }
        Ok(KeyGenerated { info, ..generated })
    }

    /// `None` when the key does not exist or was deleted.
    pub async fn key_info(&self, token_or_key: &str) -> Result<Option<KeyInfo>, Error> {
        let token = token_for(token_or_key);
        let reply = self.get(&KEY_INFO, &[("key", &token)]).await?;
        key_info_of(&reply, token)
    }

    /// [`Client::key_info`], and the [`Probe`] of its answer: a poll makes
    /// the read again with [`Client::probe`] to learn whether the key
    /// changed.
    pub async fn key_info_probed(
        &self,
        token_or_key: &str,
    ) -> Result<(Option<KeyInfo>, Probe), Error> {
        let token = token_for(token_or_key);
        let read = Read::new(&KEY_INFO, "key", &token);
        // A page's entry read a moment ago stands for the read
        // (`pages::Prefetched`); its probe is compared by what it parsed
        // to, as every listed object's is (`Client::reread`), and knows the
        // entry's text, which the next sweep then finds unparsed.
        if let Some((info, listed)) = self.prefetched().take_key(&token) {
            return Ok((Some(info), Probe::of_kept(read, listed)));
        }
        let reply = self.read(&read).await?;
        let info = key_info_of(&reply, token)?;
        let mut probe = reply.probe(read);
        probe.listed = info.as_ref().and_then(KeyInfo::listed);
        Ok((info, probe))
    }

    /// The probe of [`Client::key_info_probed`]'s read of a key before it is
    /// made ([`Probe::unread`]): a page of `/key/list` may stand for it.
    pub fn key_probe_unread(token_or_key: &str) -> Probe {
        let token = token_for(token_or_key);
        Probe::unread(Read::new(&KEY_INFO, "key", &token), List::Keys)
    }

    /// The key `probe` read, read again; `None` where it is gone.
    pub(super) async fn key_listed(&self, probe: &Probe) -> Result<Option<KeyInfo>, Error> {
        let reply = self.read(&probe.read).await?;
        key_info_of(&reply, probe.id().to_owned())
    }

    /// Sets the fields that are `Some`; [`Error::NotFound`] for a missing key.
    pub async fn key_update(
        &self,
        token_or_key: &str,
        settings: &KeyRequest,
    ) -> Result<KeyInfo, Error> {
        let token = token_for(token_or_key);
        let body = WithKey {
            key: Some(&token),
            fields: settings,
        };
        self.post(&KEY_UPDATE, &body).await?.json()
    }

    /// `false` when the key was already gone.
    pub async fn key_delete(&self, token_or_key: &str) -> Result<bool, Error> {
        let token = token_for(token_or_key);
        let body = KeyDeleteRequest { keys: [&token] };
        self.post(&KEY_DELETE, &body).await?.found()
    }

    /// Tokens of the live keys whose alias is exactly `alias` (at most one,
    /// aliases are unique); finds a LiteLLM-generated key again after a lost
    /// create response.
    pub async fn key_list_by_alias(&self, alias: &str) -> Result<Vec<String>, Error> {
        let reply = self.get(&KEY_LIST, &[("key_alias", alias)]).await?;
        Ok(reply.json::<KeyListResponse>()?.keys)
    }

    /// Replaces a key's secret, keeping its settings.
    ///
    /// Enterprise-only in LiteLLM: without a licence 1.108.7 refuses every
    /// virtual-key regeneration with HTTP 500 (a `ValueError` raised before
    /// the key is even looked up). Since that 500 is certain on such a proxy
    /// and would otherwise be retried forever, a 500 here is reported as
    /// [`Error::Forbidden`]; a genuine server fault on a licensed proxy is
    /// then retried at the caller's next poll instead of with backoff.
    pub async fn key_regenerate(
        &self,
        token_or_key: &str,
        options: &RegenerateRequest,
    ) -> Result<KeyGenerated, Error> {
        let token = token_for(token_or_key);
        let body = WithKey {
            key: Some(&token),
            fields: options,
        };
        let reply = self.post(&KEY_REGENERATE, &body).await?;
        if reply.status == reqwest::StatusCode::INTERNAL_SERVER_ERROR {
            return Err(Error::Forbidden {
                op: reply.op,
                detail: format!("enterprise-only feature, HTTP 500: {}", reply.detail()),
            });
        }
        reply.json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_body_holds_the_key_and_only_set_fields() {
        let key = Secret::new("sk-0123456789abcdef");
        let settings = KeyRequest {
            key_alias: Some("a".into()),
            limits: LimitsRequest {
                max_budget: Some(1.5),
                ..LimitsRequest::default()
            },
            ..KeyRequest::default()
        };
        let body = WithKey {
            key: Some(key.expose()),
            fields: &settings,
        };
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::json!({"key": "sk-0123456789abcdef", "key_alias": "a", "max_budget": 1.5})
        );
        let no_key = WithKey {
            key: None,
            fields: &KeyRequest::default(),
        };
        assert_eq!(
            serde_json::to_value(&no_key).unwrap(),
            serde_json::json!({})
        );
    }

    #[test]
    fn regenerate_body_exposes_only_the_new_key() {
        let options = RegenerateRequest {
            new_key: Some(Secret::new("sk-new-0123456789")),
            grace_period: None,
        };
        assert_eq!(
            serde_json::to_value(&options).unwrap(),
            serde_json::json!({"new_key": "sk-new-0123456789"})
        );
        assert!(!format!("{options:?}").contains("sk-new"));
    }

    #[test]
    fn reads_the_status_of_archived_keys() {
        let response: KeyInfoResponse = serde_json::from_value(serde_json::json!({
            "key": "abc",
            "info": {"key_alias": "a", "models": null, "status": "deleted", "spend": 0.0}
        }))
        .unwrap();
        assert_eq!(response.info.status.as_deref(), Some("deleted"));
        assert_eq!(response.info.info.key_alias.as_deref(), Some("a"));
        assert!(response.info.info.models.is_empty());
    }
}
