//! Vector stores: `POST /vector_store/new`, `/vector_store/info`,
//! `/vector_store/update`, `/vector_store/delete`, and
//! `GET /vector_store/list`.
//!
//! Measured on 1.108.7 (open source, no licence; every route is the proxy
//! admin's, none Enterprise-only): the caller chooses `vector_store_id`
//! (required with `custom_llm_provider`); a taken id is answered 400
//! "already exists", so [`Client::vector_store_new`] reads the id back to
//! tell a duplicate from a refusal. `info`, `update` and `delete` answer
//! 404 for a missing vector store. `update` takes only
//! `custom_llm_provider`, `vector_store_name`, `vector_store_description`
//! and `vector_store_metadata` (its request model has no other field):
//! `litellm_params` and `litellm_credential_name` sent to it are ignored,
//! so they are set by a create only. A field sent replaces the stored one
//! (`vector_store_metadata` whole, `null` clears), a field left out is
//! kept. LiteLLM stores `litellm_params` after its router's model of them
//! (adding defaults such as `use_in_pass_through: false`) and every answer
//! shows a parameter whose name looks secret (`api_key`, `aws_*`,
//! `vertex_credentials`, `*connection*`, ...) as `REDACTED_BY_LITELM`, at
//! any depth. `vector_store_metadata` is stored as given.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

use super::client::{endpoint, Endpoint};
use super::{Client, Error};

const VECTOR_STORE_NEW: Endpoint = endpoint!(POST "/vector_store/new");
const VECTOR_STORE_INFO: Endpoint = endpoint!(POST "/vector_store/info");
const VECTOR_STORE_UPDATE: Endpoint = endpoint!(POST "/vector_store/update");
const VECTOR_STORE_DELETE: Endpoint = endpoint!(POST "/vector_store/delete");
const VECTOR_STORE_LIST: Endpoint = endpoint!(GET "/vector_store/list");

/// What LiteLLM shows in place of a secret parameter.
pub const REDACTED: &str = "REDACTED_BY_LITELM";

/// Body of `/vector_store/new` (every field) and `/vector_store/update`
/// (see [`VectorStoreRequest::for_update`]). `litellm_params` holds the
/// Secret values in clear: `Debug` never prints it.
#[derive(Clone, Default, PartialEq, Serialize)]
pub struct VectorStoreRequest {
    pub vector_store_id: String,
    pub custom_llm_provider: String,
    pub vector_store_name: Option<String>,
    pub vector_store_description: Option<String>,
    pub vector_store_metadata: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub litellm_params: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub litellm_credential_name: Option<String>,
    /// Not sent: whether an update must delete and create the vector store
    /// again (its `litellm_params` or credential changed, which LiteLLM's
    /// update ignores).
    #[serde(skip)]
    pub recreate: bool,
}

impl VectorStoreRequest {
    /// What `/vector_store/update` takes: the fields it writes, every one
    /// sent (a `null` clears).
    fn for_update(&self) -> Value {
        serde_json::json!({
            "vector_store_id": self.vector_store_id,
            "custom_llm_provider": self.custom_llm_provider,
            "vector_store_name": self.vector_store_name,
            "vector_store_description": self.vector_store_description,
            "vector_store_metadata": self.vector_store_metadata,
        })
    }
}

impl fmt::Debug for VectorStoreRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VectorStoreRequest")
            .field("vector_store_id", &self.vector_store_id)
            .field("custom_llm_provider", &self.custom_llm_provider)
            .field("litellm_credential_name", &self.litellm_credential_name)
            .field("recreate", &self.recreate)
            .finish_non_exhaustive()
    }
}

/// A vector store as `/vector_store/info` reports it: secret parameters
/// redacted.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VectorStore {
    pub vector_store_id: String,
    pub custom_llm_provider: String,
    pub vector_store_name: Option<String>,
    pub vector_store_description: Option<String>,
    pub vector_store_metadata: Option<Map<String, Value>>,
    pub litellm_params: Option<Map<String, Value>>,
    pub litellm_credential_name: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// Defined in the proxy's config file (not writable here).
    pub is_config: Option<bool>,
}

/// `litellm_params` may hold a URL with credentials: `Debug` shows the id,
/// provider and credential name only.
impl fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VectorStore")
            .field("vector_store_id", &self.vector_store_id)
            .field("custom_llm_provider", &self.custom_llm_provider)
            .field("litellm_credential_name", &self.litellm_credential_name)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Info {
    vector_store: VectorStore,
}

#[derive(Deserialize)]
struct Listed {
    #[serde(default)]
    data: Vec<VectorStore>,
}

#[derive(Serialize)]
struct ById<'a> {
    vector_store_id: &'a str,
}

impl Client {
    /// Creates the vector store under its chosen id; [`Error::Conflict`]
    /// when the id is taken.
    pub async fn vector_store_new(&self, request: &VectorStoreRequest) -> Result<(), Error> {
        let reply = self.post(&VECTOR_STORE_NEW, request).await?;
        if !reply.status.is_success()
            && self
                .vector_store_info(&request.vector_store_id)
                .await?
                .is_some()
        {
            return Err(reply.conflict());
        }
        reply.json::<serde::de::IgnoredAny>().map(drop)
    }

    /// `None` when no vector store has this id.
    pub async fn vector_store_info(&self, id: &str) -> Result<Option<VectorStore>, Error> {
        let reply = self
            .post(
                &VECTOR_STORE_INFO,
                &ById {
                    vector_store_id: id,
                },
            )
            .await?;
        let info = reply.json_or_none::<Info>()?;
        Ok(info
            .map(|i| i.vector_store)
            .filter(|v| v.vector_store_id == id))
    }

    /// Writes the name, description, metadata and provider
    /// (`litellm_params` and the credential are not written by LiteLLM's
    /// update); [`Error::NotFound`] for a missing vector store.
    pub async fn vector_store_update(&self, request: &VectorStoreRequest) -> Result<(), Error> {
        let reply = self
            .post(&VECTOR_STORE_UPDATE, &request.for_update())
            .await?;
        reply.json::<serde::de::IgnoredAny>().map(drop)
    }

    /// `false` when the vector store was already gone.
    pub async fn vector_store_delete(&self, id: &str) -> Result<bool, Error> {
        self.post(
            &VECTOR_STORE_DELETE,
            &ById {
                vector_store_id: id,
            },
        )
        .await?
        .found()
    }

    /// The first page (up to 100) of the proxy's vector stores, database
    /// and config file.
    pub async fn vector_store_list(&self) -> Result<Vec<VectorStore>, Error> {
        let reply = self
            .get(&VECTOR_STORE_LIST, &[("page_size", "100")])
            .await?;
        reply.json::<Listed>().map(|l| l.data)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn updates_send_only_what_litellm_writes_and_debug_shows_no_parameter() {
        let request = VectorStoreRequest {
            vector_store_id: "ns.docs".into(),
            custom_llm_provider: "openai".into(),
            vector_store_name: Some("docs".into()),
            vector_store_description: None,
            vector_store_metadata: Map::new(),
            litellm_params: Some(json!({"api_key": "sk-vs-1"}).as_object().unwrap().clone()),
            litellm_credential_name: Some("ns.openai".into()),
            recreate: false,
        };
        let created = serde_json::to_value(&request).unwrap();
        assert_eq!(created["litellm_params"]["api_key"], "sk-vs-1");
        assert_eq!(created["litellm_credential_name"], "ns.openai");
        assert!(created.get("recreate").is_none());
        assert_eq!(
            request.for_update(),
            json!({"vector_store_id": "ns.docs", "custom_llm_provider": "openai",
                   "vector_store_name": "docs", "vector_store_description": null,
                   "vector_store_metadata": {}})
        );
        assert!(!format!("{request:?}").contains("sk-vs"));
        let live: VectorStore = serde_json::from_value(json!({
            "vector_store_id": "ns.docs", "custom_llm_provider": "openai",
            "litellm_params": {"api_key": REDACTED, "api_base": "https://u:hunter2@x"},
            "unknown": 1,
        }))
        .unwrap();
        assert!(!format!("{live:?}").contains("hunter2"));
    }
}
