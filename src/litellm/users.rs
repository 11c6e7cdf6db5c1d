//! Users: `/user/new`, `/user/info`, `/user/update`, `/user/delete`.
//!
//! Measured on 1.108.7: `/user/new` takes a caller-chosen `user_id`, and
//! answers 409 for a taken id and for an email another user has (compared
//! ignoring case); by default it also generates a key for the new user,
//! which [`Client::user_new`] never lets it do (`auto_create_key: false`).
//! `/user/info` answers 404 for a missing user. `/user/update` replaces
//! `metadata` wholesale, ignores an empty `models` list (a user's list can
//! be changed, never cleared), answers 400 for `blocked` (users have no such
//! column), and creates a user that does not exist (an upsert: it is never
//! sent for a user that is not known to exist). `/user/delete` deletes the
//! user's keys with it, and answers 404 for a missing user.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{null_as_default, Client, Error, LimitsRequest};

const USER_NEW: Endpoint = endpoint!(POST "/user/new");
const USER_INFO: Endpoint = endpoint!(GET "/user/info");
const USER_UPDATE: Endpoint = endpoint!(POST "/user/update");
const USER_DELETE: Endpoint = endpoint!(POST "/user/delete");

/// Body of `/user/new` and `/user/update`. Unset fields are not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UserRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub user_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_alias: Option<String>,
    /// `proxy_admin`, `proxy_admin_viewer`, `internal_user` or
    /// `internal_user_viewer` (any other is answered 422).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_role: Option<String>,
    /// An empty list is ignored by `/user/update`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    #[serde(flatten)]
    pub limits: LimitsRequest,
    /// `/user/update` replaces the whole map, it does not merge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// `/user/new` with the user's settings, never generating a key: a key
/// made there would be tracked by nobody.
#[derive(Serialize)]
struct NewUser<'a> {
    #[serde(flatten)]
    user: &'a UserRequest,
    auto_create_key: bool,
}

/// A user as LiteLLM reports it (the fields a provider compares or reports).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct UserInfo {
    pub user_id: String,
    pub user_email: Option<String>,
    pub user_alias: Option<String>,
    pub user_role: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub max_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub budget_reset_at: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
    pub metadata: Option<Map<String, Value>>,
    pub spend: Option<f64>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

#[derive(Deserialize)]
struct UserInfoResponse {
    user_info: UserInfo,
}

#[derive(Deserialize)]
struct UserUpdateResponse {
    data: UserInfo,
}

#[derive(Serialize)]
struct UserDeleteRequest<'a> {
    user_ids: [&'a str; 1],
}

impl Client {
    /// Creates a user with the caller's `user_id` and no key;
    /// [`Error::Conflict`] if that id is taken. An email another user has
    /// is answered 409 as well, and is a [`Error::Permanent`] here.
    pub async fn user_new(&self, user: &UserRequest) -> Result<UserInfo, Error> {
        let body = NewUser {
            user,
            auto_create_key: false,
        };
        let reply = self.post(&USER_NEW, &body).await?;
        if reply.status == reqwest::StatusCode::CONFLICT
            && self.user_info(&user.user_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no user has this id.
    pub async fn user_info(&self, user_id: &str) -> Result<Option<UserInfo>, Error> {
        let reply = self.get(&USER_INFO, &[("user_id", user_id)]).await?;
        Ok(reply
            .json_or_none::<UserInfoResponse>()?
            .map(|response| response.user_info))
    }

    /// Sets the fields that are `Some`. Beware: LiteLLM creates a user that
    /// does not exist.
    pub async fn user_update(&self, user: &UserRequest) -> Result<UserInfo, Error> {
        let reply = self.post(&USER_UPDATE, user).await?;
        Ok(reply.json::<UserUpdateResponse>()?.data)
    }

    /// Deletes the user and, with it, every key of the user. `false` when
    /// the user was already gone.
    pub async fn user_delete(&self, user_id: &str) -> Result<bool, Error> {
        let body = UserDeleteRequest {
            user_ids: [user_id],
        };
        self.post(&USER_DELETE, &body).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_user_never_gets_a_key_and_only_set_fields_are_sent() {
        let user = UserRequest {
            user_id: "ns.alice".into(),
            user_role: Some("internal_user".into()),
            limits: LimitsRequest {
                max_budget: Some(2.5),
                ..LimitsRequest::default()
            },
            ..UserRequest::default()
        };
        let body = NewUser {
            user: &user,
            auto_create_key: false,
        };
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::json!({"user_id": "ns.alice", "user_role": "internal_user",
                               "max_budget": 2.5, "auto_create_key": false})
        );
        assert_eq!(
            serde_json::to_value(&user).unwrap(),
            serde_json::json!({"user_id": "ns.alice", "user_role": "internal_user",
                               "max_budget": 2.5})
        );
    }

    #[test]
    fn reads_user_info_tolerantly() {
        let info: UserInfoResponse = serde_json::from_value(serde_json::json!({
            "user_id": "ns.alice",
            "user_info": {"user_id": "ns.alice", "models": null, "metadata": {},
                          "user_role": null, "spend": 0.0, "teams": [],
                          "organization_memberships": [], "unknown": {"nested": true}},
            "keys": [],
            "teams": []
        }))
        .unwrap();
        assert_eq!(info.user_info.user_id, "ns.alice");
        assert!(info.user_info.models.is_empty());
        assert_eq!(info.user_info.user_role, None);
        assert_eq!(info.user_info.spend, Some(0.0));
    }
}
