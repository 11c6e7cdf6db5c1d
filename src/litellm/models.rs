//! Models (deployments) stored in LiteLLM's database: `/model/new`,
//! `/v2/model/info`, `PATCH /model/{id}/update`, `/model/delete`. They need
//! `STORE_MODEL_IN_DB=True` on the proxy.
//!
//! Status codes here are the least regular of the admin API: a duplicate id
//! is answered 500 and deleting a missing model 400, both also used for other
//! failures. Those two cases are confirmed with a read before they are
//! reported as [`Error::Conflict`] or "already gone".

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use std::collections::BTreeMap;

use super::{Client, Error, Secret};

const MODEL_NEW: Endpoint = endpoint!(POST "/model/new");
const MODEL_INFO: Endpoint = endpoint!(GET "/v2/model/info");
const MODEL_UPDATE: Endpoint = endpoint!(PATCH "/model/{id}/update");
const MODEL_DELETE: Endpoint = endpoint!(POST "/model/delete");

/// Body of `/model/new` and `PATCH /model/{id}/update`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelRequest {
    /// The public name clients call (several deployments may share it).
    pub model_name: String,
    pub litellm_params: ModelParamsRequest,
    pub model_info: ModelMetaRequest,
}

/// `litellm_params` of a request; unset fields are not sent. An update
/// merges these into the stored ones, so an unset field keeps its value.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelParamsRequest {
    /// Provider and upstream model, e.g. `openai/gpt-4o`.
    pub model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_base: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpm: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<i64>,
    /// The `/credentials` entry whose values LiteLLM uses for the model
    /// (`litellm_credential_name`). Always sent: `null` detaches one the
    /// model had (LiteLLM clears this parameter on an explicit `null`, and
    /// keeps every other it is not sent).
    #[serde(rename = "litellm_credential_name")]
    pub credential_name: Option<String>,
    /// Credentials by their `litellm_params` name (`api_key`,
    /// `aws_secret_access_key`, `vertex_credentials`, ...): stored
    /// encrypted by LiteLLM, and never returned by a read (removed, or
    /// masked, see [`SECRET_PARAMS`]).
    #[serde(flatten)]
    pub secrets: SecretParams,
    /// Further `litellm_params` fields: provider settings (`aws_region_name`,
    /// `timeout`, `tags`, ...) and per-deployment pricing
    /// (`input_cost_per_token`, ...), which LiteLLM keeps here and not in
    /// `model_info`. Never a credential.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `litellm_params` that hold credentials, as LiteLLM 1.108.7 reads
/// them. `/v2/model/info` removes `api_key`, `aws_access_key_id`,
/// `aws_secret_access_key`, `vertex_credentials` and `client_secret`, and
/// masks the others (`aws_session_token` as `fact****ijkl`).
pub const SECRET_PARAMS: &[&str] = &[
    "api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "aws_web_identity_token",
    "vertex_credentials",
    "azure_ad_token",
    "client_secret",
];

/// Secret `litellm_params` of a request, by name, sent as their values.
/// `Debug` shows the names only.
#[derive(Clone, Default, PartialEq)]
pub struct SecretParams(pub BTreeMap<&'static str, Secret>);

impl Serialize for SecretParams {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, secret) in &self.0 {
            map.serialize_entry(name, secret.expose())?;
        }
        map.end()
    }
}

impl std::fmt::Debug for SecretParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// `model_info` of a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModelMetaRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub id: String,
    /// Further free-form `model_info` fields (must not repeat `id`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A model as `/v2/model/info` reports it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    pub model_name: String,
    pub litellm_params: ModelParams,
    pub model_info: ModelMeta,
}

/// `litellm_params` as reported, decrypted, without any api key.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelParams {
    pub model: Option<String>,
    pub api_base: Option<String>,
    pub api_version: Option<String>,
    pub rpm: Option<i64>,
    pub tpm: Option<i64>,
    /// The credential the model uses, by name (returned in clear).
    #[serde(rename = "litellm_credential_name")]
    pub credential_name: Option<String>,
    /// Every other field: per-deployment pricing as sent (integers come
    /// back as floats: `1` as `1.0`), LiteLLM's own defaults
    /// (`use_in_pass_through`, ...) and whatever else was stored.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `model_info` as reported.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ModelMeta {
    pub id: String,
    /// `false` for models from the proxy's config file, which the admin API
    /// cannot change or delete.
    pub db_model: Option<bool>,
    /// Every other field: the free-form ones stored with the model (returned
    /// as sent, nested values included) merged with LiteLLM's cost map for
    /// the model (about 190 fields, most `null`). Pricing fields such as
    /// `input_cost_per_token` are dropped when sent in `model_info` (1.108.7):
    /// these show the cost map's values, or the deployment's own price when
    /// one was sent in `litellm_params`.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct ModelNewResponse {
    model_id: String,
}

#[derive(Deserialize)]
struct ModelInfoResponse {
    data: Vec<ModelInfo>,
}

#[derive(Serialize)]
struct ModelDeleteRequest<'a> {
    id: &'a str,
}

impl Client {
    /// Creates a model with the caller's `model_info.id` and returns the id
    /// LiteLLM stored. The create response holds the params encrypted, so
    /// read the model back with [`Client::model_info`] to see them.
    pub async fn model_new(&self, model: &ModelRequest) -> Result<String, Error> {
        let reply = self.post(&MODEL_NEW, model).await?;
        // A duplicate id is answered 500 ("Failed to add model to db"), the
        // same as a real database fault: it is a conflict only if the model
        // is really there, and otherwise stays retryable.
        if reply.status == reqwest::StatusCode::INTERNAL_SERVER_ERROR
            && self.model_info(&model.model_info.id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        Ok(reply.json::<ModelNewResponse>()?.model_id)
    }

    /// `None` when no model has this id (LiteLLM answers `200` with no data).
    pub async fn model_info(&self, model_id: &str) -> Result<Option<ModelInfo>, Error> {
        let reply = self.get(&MODEL_INFO, &[("modelId", model_id)]).await?;
        let response: ModelInfoResponse = reply.json()?;
        Ok(response
            .data
            .into_iter()
            .find(|model| model.model_info.id == model_id)
            .map(|mut model| {
                // What LiteLLM shows of a credential is masked
                // (`fact****ijkl`), but still part of it: it goes no further.
                for name in SECRET_PARAMS {
                    model.litellm_params.extra.remove(*name);
                }
                model
            }))
    }

    /// Merges the request into the model `model_info.id`; [`Error::NotFound`]
    /// for a missing model.
    ///
    /// Uses `PATCH /model/{id}/update`: on 1.108.7 it and `POST /model/update`
    /// both merge `litellm_params`, but only the PATCH route answers a missing
    /// model with 404 (the POST one says 400).
    pub async fn model_update(&self, model: &ModelRequest) -> Result<(), Error> {
        let url = self.url(["model", &model.model_info.id, "update"], &[]);
        let reply = self.send(&MODEL_UPDATE, url, Some(model)).await?;
        reply.json::<IgnoredAny>().map(drop)
    }

    /// `false` when the model was already gone.
    pub async fn model_delete(&self, model_id: &str) -> Result<bool, Error> {
        let reply = self
            .post(&MODEL_DELETE, &ModelDeleteRequest { id: model_id })
            .await?;
        // A missing model is answered 400, like a malformed request: it
        // counts as gone only if a read confirms it.
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.model_info(model_id).await?.is_none()
        {
            return Ok(false);
        }
        reply.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_sends_the_api_key_but_never_debug_prints_it() {
        let model = ModelRequest {
            model_name: "gpt".into(),
            litellm_params: ModelParamsRequest {
                model: "openai/gpt-4o".into(),
                secrets: SecretParams(BTreeMap::from([(
                    "api_key",
                    Secret::new("sk-provider-secret"),
                )])),
                ..ModelParamsRequest::default()
            },
            model_info: ModelMetaRequest {
                id: "m1".into(),
                extra: Map::from_iter([("mode".to_owned(), Value::from("chat"))]),
            },
        };
        assert_eq!(
            serde_json::to_value(&model).unwrap(),
            serde_json::json!({
                "model_name": "gpt",
                "litellm_params": {"model": "openai/gpt-4o", "api_key": "sk-provider-secret", "litellm_credential_name": null},
                "model_info": {"id": "m1", "mode": "chat"}
            })
        );
        assert!(!format!("{model:?}").contains("sk-provider"));
    }
}
