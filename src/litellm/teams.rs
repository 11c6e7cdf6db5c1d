//! Teams: `/team/new`, `/team/info`, `/team/update`, `/team/delete`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{null_as_default, Client, Error, LimitsRequest, UsageRequest};

const TEAM_NEW: Endpoint = endpoint!(POST "/team/new");
const TEAM_INFO: Endpoint = endpoint!(GET "/team/info");
const TEAM_UPDATE: Endpoint = endpoint!(POST "/team/update");
const TEAM_DELETE: Endpoint = endpoint!(POST "/team/delete");

/// Body of `/team/new` and `/team/update`. Unset fields are not sent: LiteLLM
/// ignores unknown fields silently and answers 403 for some enterprise-only
/// ones, so only what the caller chose goes on the wire.
///
/// There is no `max_parallel_requests`: LiteLLM 1.108.7 accepts it on both
/// routes and drops it (the team keeps `null`), so sending it would only
/// create a difference that can never be reconciled.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TeamRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub team_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// `max_parallel_requests` left unset (see above).
    #[serde(flatten)]
    pub limits: LimitsRequest,
    #[serde(flatten)]
    pub usage: UsageRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    /// `/team/update` replaces the whole map, it does not merge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Merged field by field by LiteLLM; see [`ObjectPermission`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_permission: Option<super::ObjectPermission>,
}

/// A team as LiteLLM reports it (the fields a provider compares or reports).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TeamInfo {
    pub team_id: String,
    pub team_alias: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub max_budget: Option<f64>,
    pub soft_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub budget_reset_at: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
    pub blocked: Option<bool>,
    pub metadata: Option<Map<String, Value>>,
    pub spend: Option<f64>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    /// `None` when the object never had one.
    pub object_permission: Option<super::ObjectPermission>,
}

#[derive(Deserialize)]
struct TeamInfoResponse {
    team_info: TeamInfo,
}

#[derive(Deserialize)]
struct TeamUpdateResponse {
    data: TeamInfo,
}

#[derive(Serialize)]
struct TeamDeleteRequest<'a> {
    team_ids: [&'a str; 1],
}

impl Client {
    /// Creates a team with the caller's `team_id`; [`Error::Conflict`] if
    /// that id is taken.
    pub async fn team_new(&self, team: &TeamRequest) -> Result<TeamInfo, Error> {
        let reply = self.post(&TEAM_NEW, team).await?;
        // A duplicate team_id is answered 400, like any invalid field; it is
        // a conflict only if the team is really there.
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.team_info(&team.team_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no team has this id.
    pub async fn team_info(&self, team_id: &str) -> Result<Option<TeamInfo>, Error> {
        let reply = self.get(&TEAM_INFO, &[("team_id", team_id)]).await?;
        Ok(reply
            .json_or_none::<TeamInfoResponse>()?
            .map(|response| response.team_info))
    }

    /// Sets the fields that are `Some`; [`Error::NotFound`] for a missing team.
    pub async fn team_update(&self, team: &TeamRequest) -> Result<TeamInfo, Error> {
        let reply = self.post(&TEAM_UPDATE, team).await?;
        Ok(reply.json::<TeamUpdateResponse>()?.data)
    }

    /// Deletes the team and, with it, every key of the team. `false` when the
    /// team was already gone.
    pub async fn team_delete(&self, team_id: &str) -> Result<bool, Error> {
        let body = TeamDeleteRequest {
            team_ids: [team_id],
        };
        self.post(&TEAM_DELETE, &body).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_only_the_fields_that_are_set() {
        let team = TeamRequest {
            team_id: "t1".into(),
            limits: LimitsRequest {
                max_budget: Some(12.5),
                ..LimitsRequest::default()
            },
            ..TeamRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&team).unwrap(),
            serde_json::json!({"team_id": "t1", "max_budget": 12.5})
        );
    }

    #[test]
    fn reads_team_info_tolerantly() {
        let info: TeamInfoResponse = serde_json::from_value(serde_json::json!({
            "team_id": "t1",
            "team_info": {"team_id": "t1", "models": ["m"], "metadata": null,
                          "spend": 0.0, "unknown": {"nested": true}},
            "keys": []
        }))
        .unwrap();
        assert_eq!(info.team_info.team_id, "t1");
        assert_eq!(info.team_info.models, ["m"]);
        assert_eq!(info.team_info.metadata, None);
        assert_eq!(info.team_info.spend, Some(0.0));
    }
}
