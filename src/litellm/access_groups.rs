//! Access groups: `POST /v1/access_group`, `GET /v1/access_group` (to find
//! one by name), `GET`, `PUT` and `DELETE /v1/access_group/{id}`.
//!
//! Measured on 1.108.7 (open source, no licence; every route is the proxy
//! admin's, none Enterprise-only): the create answers 201 with the
//! `access_group_id` LiteLLM chose (a UUID; one in the body is ignored);
//! `access_group_name` is unique: a duplicate is answered 409 by `POST`
//! and `PUT`. A missing group is answered 404 by `GET`, `PUT` and
//! `DELETE`; `DELETE` answers 204. `PUT` merges by field: each field sent
//! replaces that field whole, a field left out is kept, so every write
//! sends every list it manages. An unknown team in `assigned_team_ids` is
//! answered 400 ("Unknown team ids") by `POST` and `PUT`. Assigning teams
//! also writes the teams' own `access_group_ids` (and `PUT` removes the
//! group from the teams no longer listed); a `/team/update` that leaves
//! `access_group_ids` out keeps it, one that sends it (the provider's teams
//! never do) moves the team in or out of groups, and a read of the group
//! reports the teams that carry it. No `metadata`: the group has no place
//! for an ownership marker but its name.

use serde::{Deserialize, Serialize};

use super::client::{endpoint, Endpoint};
use super::{Client, Error};

const ACCESS_GROUP_NEW: Endpoint = endpoint!(POST "/v1/access_group");
const ACCESS_GROUP_LIST: Endpoint = endpoint!(GET "/v1/access_group");
const ACCESS_GROUP_GET: Endpoint = endpoint!(GET "/v1/access_group/{access_group_id}");
const ACCESS_GROUP_UPDATE: Endpoint = endpoint!(PUT "/v1/access_group/{access_group_id}");
const ACCESS_GROUP_DELETE: Endpoint = endpoint!(DELETE "/v1/access_group/{access_group_id}");

/// Body of `POST /v1/access_group` and `PUT /v1/access_group/{id}`: the
/// name, the description and every list the provider manages, each whole
/// (`PUT` replaces each field sent). Agents, skills, keys and MCP tool
/// permissions are never sent: kept as they are by `PUT`, empty on create.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AccessGroupRequest {
    /// The group to `PUT` to; never sent.
    #[serde(skip)]
    pub access_group_id: Option<String>,
    pub access_group_name: String,
    /// `None` is sent as `null`, which clears it.
    pub description: Option<String>,
    pub access_model_names: Vec<String>,
    pub access_mcp_server_ids: Vec<String>,
    pub assigned_team_ids: Vec<String>,
}

/// A group as `GET /v1/access_group/{id}` and the list report it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AccessGroup {
    pub access_group_id: String,
    pub access_group_name: String,
    pub description: Option<String>,
    #[serde(deserialize_with = "super::null_as_default")]
    pub access_model_names: Vec<String>,
    #[serde(deserialize_with = "super::null_as_default")]
    pub access_mcp_server_ids: Vec<String>,
    #[serde(deserialize_with = "super::null_as_default")]
    pub access_agent_ids: Vec<String>,
    #[serde(deserialize_with = "super::null_as_default")]
    pub access_skill_names: Vec<String>,
    /// The teams attached: those listed and those carrying the group.
    #[serde(deserialize_with = "super::null_as_default")]
    pub assigned_team_ids: Vec<String>,
    #[serde(deserialize_with = "super::null_as_default")]
    pub assigned_key_ids: Vec<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

#[derive(Deserialize)]
struct Created {
    access_group_id: String,
}

impl Client {
    /// Creates the group and returns the id LiteLLM gave it;
    /// [`Error::Conflict`] when its name is taken.
    pub async fn access_group_new(&self, group: &AccessGroupRequest) -> Result<String, Error> {
        let reply = self.post(&ACCESS_GROUP_NEW, group).await?;
        if reply.status.as_u16() == 409 {
            return Err(reply.conflict());
        }
        reply.json::<Created>().map(|c| c.access_group_id)
    }

    /// `None` when no group has this id.
    pub async fn access_group_get(&self, id: &str) -> Result<Option<AccessGroup>, Error> {
        let url = self.url(["v1", "access_group", id], &[]);
        let group = self
            .send::<()>(&ACCESS_GROUP_GET, url, None)
            .await?
            .json_or_none::<AccessGroup>()?;
        Ok(group.filter(|g| g.access_group_id == id))
    }

    /// Every group of the proxy.
    pub async fn access_group_list(&self) -> Result<Vec<AccessGroup>, Error> {
        self.get(&ACCESS_GROUP_LIST, &[]).await?.json()
    }

    /// The group named `name`, if any (names are unique).
    pub async fn access_group_by_name(&self, name: &str) -> Result<Option<AccessGroup>, Error> {
        Ok(self
            .access_group_list()
            .await?
            .into_iter()
            .find(|g| g.access_group_name == name))
    }

    /// Writes every field of `request` to the group
    /// `request.access_group_id`; [`Error::NotFound`] for a missing one,
    /// [`Error::Conflict`] when another group has the name.
    pub async fn access_group_update(&self, request: &AccessGroupRequest) -> Result<(), Error> {
        let id = request.access_group_id.as_deref().unwrap_or_default();
        let url = self.url(["v1", "access_group", id], &[]);
        let reply = self.send(&ACCESS_GROUP_UPDATE, url, Some(request)).await?;
        if reply.status.as_u16() == 409 {
            return Err(reply.conflict());
        }
        reply.json::<serde::de::IgnoredAny>().map(drop)
    }

    /// `false` when the group was already gone.
    pub async fn access_group_delete(&self, id: &str) -> Result<bool, Error> {
        let url = self.url(["v1", "access_group", id], &[]);
        self.send::<()>(&ACCESS_GROUP_DELETE, url, None)
            .await?
            .found()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_request_sends_every_managed_list_and_never_the_id() {
        let request = AccessGroupRequest {
            access_group_id: Some("g-1".into()),
            access_group_name: "c/ns/ag".into(),
            description: None,
            access_model_names: vec!["ns/gpt".into()],
            access_mcp_server_ids: vec![],
            assigned_team_ids: vec!["t-1".into()],
        };
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({"access_group_name": "c/ns/ag", "description": null,
                   "access_model_names": ["ns/gpt"], "access_mcp_server_ids": [],
                   "assigned_team_ids": ["t-1"]})
        );
    }

    #[test]
    fn a_group_read_back_takes_null_lists_as_empty() {
        let group: AccessGroup = serde_json::from_value(json!({
            "access_group_id": "g-1", "access_group_name": "c/ns/ag",
            "access_model_names": null, "access_mcp_server_ids": ["m"],
            "assigned_team_ids": ["t"], "mcp_tool_permissions": null, "unknown": 1,
        }))
        .unwrap();
        assert!(group.access_model_names.is_empty());
        assert_eq!(group.access_mcp_server_ids, ["m"]);
        assert_eq!(group.assigned_team_ids, ["t"]);
    }
}
