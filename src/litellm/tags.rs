//! Tags: `/tag/new`, `/tag/info`, `/tag/update`, `/tag/delete`,
//! `/tag/list` (`tag_management_endpoints.py`; open source on 1.108.7).
//!
//! A tag is named by the caller (`name`, unique); it has no metadata and
//! no id of its own. Its limits live in a budget row it links
//! (`budget_id`, answered as `litellm_budget_table`): `/tag/new` creates
//! one from the limits in the body, or links the row `budget_id` names
//! (and then ignores the limits in the body); `/tag/update` writes the
//! limits sent (only those) to the linked row, or creates and links one
//! if the tag has none.
//!
//! What 1.108.7 answers, measured (`tests/integration/provider_tags.rs`,
//! its `contract` tests):
//!
//! * Every route wraps its own errors in HTTP 500: a taken name on
//!   `/tag/new` is `500 {"detail": "400: Tag X already exists"}`, a
//!   missing tag on `/tag/info` (`"404: Tags not found: [...]"`),
//!   `/tag/update` and `/tag/delete` (`"404: Tag X not found"`) is a 500
//!   too. The status does not tell a missing or taken tag from a proxy
//!   that failed, and the body is not parsed here: after a failed call the
//!   operations below read the state back (`/tag/list`, or `/tag/info`)
//!   and decide on what is there. A missing tag is `None` / `false` /
//!   [`Error::NotFound`], a taken name [`Error::Conflict`]; anything else
//!   is the 500 as it came (retryable).
//! * `/tag/list` lists the stored tags (with `model_info` and their
//!   budget row) and, after them, the "dynamic" tags requests carried that
//!   have no row (only `name`, `description`, `models: null` and the
//!   dates): only the stored ones are tags here.
//! * `/tag/update` replaces `description` and `models` with what is sent:
//!   a field left out is cleared (`null`, `[]`). Send both every time.
//! * `/tag/new` with `models` also appends the tag to the
//!   `litellm_params.tags` of every model it names (by id or model name),
//!   a write into other objects; `/tag/update` does not. `model_info`
//!   (model id to model name) is computed by LiteLLM from `models`; a
//!   value sent is ignored.
//! * `/tag/delete` deletes the tag row only: its budget row stays.
//!   Deleting a budget row a tag links (`/budget/delete`) unlinks it from
//!   the tag (the tag remains, without limits).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::client::{endpoint, Endpoint, Reply};
use super::{null_as_default, BudgetInfo, Client, Error, LimitsRequest};

const TAG_NEW: Endpoint = endpoint!(POST "/tag/new");
const TAG_INFO: Endpoint = endpoint!(POST "/tag/info");
const TAG_UPDATE: Endpoint = endpoint!(POST "/tag/update");
const TAG_DELETE: Endpoint = endpoint!(POST "/tag/delete");
const TAG_LIST: Endpoint = endpoint!(GET "/tag/list");

/// Body of `/tag/new` and `/tag/update`; unset fields are not sent (which
/// `/tag/update` reads as clearing `description` and `models`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TagRequest {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// The budget row to link (it must exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    /// Written to the linked budget row (on `/tag/new` only when no
    /// `budget_id` is sent).
    #[serde(flatten)]
    pub limits: LimitsRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_budget: Option<f64>,
}

/// A stored tag as LiteLLM reports it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TagInfo {
    pub name: String,
    pub description: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    /// Model id to model name, computed by LiteLLM.
    pub model_info: Option<Value>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub created_by: Option<String>,
    /// The linked budget row, if any.
    pub litellm_budget_table: Option<BudgetInfo>,
}

impl TagInfo {
    /// The id of the linked budget row.
    pub fn budget_id(&self) -> Option<&str> {
        self.litellm_budget_table
            .as_ref()
            .map(|b| b.budget_id.as_str())
            .filter(|id| !id.is_empty())
    }
}

#[derive(Serialize)]
struct TagInfoRequest<'a> {
    names: [&'a str; 1],
}

#[derive(Serialize)]
struct TagDeleteRequest<'a> {
    name: &'a str,
}

/// Whether an entry of `/tag/list` is a stored tag: dynamic ones (names
/// requests carried, with no row) have no `model_info` key.
fn stored(entry: &Value) -> bool {
    entry.get("model_info").is_some()
}

impl Client {
    /// Creates a tag; [`Error::Conflict`] if the name is taken (read back
    /// after LiteLLM's 500).
    pub async fn tag_new(&self, tag: &TagRequest) -> Result<(), Error> {
        let reply = self.post(&TAG_NEW, tag).await?;
        if reply.status.is_success() {
            return Ok(());
        }
        if self.tag_info(&tag.name).await?.is_some() {
            return Err(reply.conflict());
        }
        Err(reply.error())
    }

    /// `None` when no tag has this name (read back from `/tag/list` after
    /// LiteLLM's 500; a tag listed then is read once more, since it may
    /// have been created between the reads).
    pub async fn tag_info(&self, name: &str) -> Result<Option<TagInfo>, Error> {
        if let Ok(found) = self.tag_info_once(name).await? {
            return Ok(found);
        }
        if !self.tag_listed(name).await? {
            return Ok(None);
        }
        // Listed after all: the tag may have been created between the two
        // reads (the 500 was the "not found" of a moment before), so a
        // second read answers, and its failure is the error.
        match self.tag_info_once(name).await? {
            Ok(found) => Ok(found),
            Err(again) => Err(again.error()),
        }
    }

    /// One `/tag/info` read: the tag (or `None` when the answer lacks it),
    /// or the failed reply.
    async fn tag_info_once(&self, name: &str) -> Result<Result<Option<TagInfo>, Reply>, Error> {
        let reply = self
            .post(&TAG_INFO, &TagInfoRequest { names: [name] })
            .await?;
        if !reply.status.is_success() {
            return Ok(Err(reply));
        }
        let mut tags: BTreeMap<String, TagInfo> = reply.json()?;
        Ok(Ok(tags.remove(name)))
    }

    /// Every stored tag (not the dynamic ones).
    pub async fn tag_list(&self) -> Result<Vec<TagInfo>, Error> {
        let entries: Vec<Value> = self.get(&TAG_LIST, &[]).await?.json()?;
        entries
            .into_iter()
            .filter(stored)
            .map(|entry| {
                serde_json::from_value(entry).map_err(|err| Error::decode(TAG_LIST.name, &err))
            })
            .collect()
    }

    /// Whether `/tag/list` holds a stored tag of this name.
    async fn tag_listed(&self, name: &str) -> Result<bool, Error> {
        let entries: Vec<Value> = self.get(&TAG_LIST, &[]).await?.json()?;
        Ok(entries
            .iter()
            .any(|e| stored(e) && e.get("name").and_then(Value::as_str) == Some(name)))
    }

    /// Writes `description` and `models` as sent (see the module
    /// documentation) and the limits sent; [`Error::NotFound`] for a
    /// missing tag (read back after LiteLLM's 500).
    pub async fn tag_update(&self, tag: &TagRequest) -> Result<(), Error> {
        let reply = self.post(&TAG_UPDATE, tag).await?;
        if reply.status.is_success() {
            return Ok(());
        }
        if self.tag_info(&tag.name).await?.is_none() {
            return Err(Error::NotFound { op: reply.op });
        }
        Err(reply.error())
    }

    /// `false` when the tag was already gone (read back after LiteLLM's
    /// 500). Its budget row is left (see the module documentation).
    pub async fn tag_delete(&self, name: &str) -> Result<bool, Error> {
        let reply = self.post(&TAG_DELETE, &TagDeleteRequest { name }).await?;
        if reply.status.is_success() {
            return Ok(true);
        }
        if self.tag_info(name).await?.is_none() {
            return Ok(false);
        }
        Err(reply.error())
    }
}
