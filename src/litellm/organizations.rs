//! Organizations: `/organization/new`, `/organization/info`,
//! `/organization/update`, `/organization/delete`.
//!
//! Enterprise-only. On the open-source 1.108.7 proxy every route of
//! `organization_endpoints.py` sits behind `_enterprise_license_required`
//! and answers 403 (`{"detail": {"error": "Organizations are only available
//! for LiteLLM Enterprise users. ..."}}`), before the body is read: nothing
//! is validated, nothing stored ([`Error::Forbidden`] here). What follows is
//! LiteLLM's own source of that version (`NewOrganizationRequest`,
//! `LiteLLM_OrganizationTableUpdate`, `LiteLLM_OrganizationTableWithMembers`,
//! `DeleteOrganizationRequest` of `proxy/_types.py`), since no licensed
//! proxy is available to measure:
//!
//! * `/organization/new` takes a caller-chosen `organization_id` and
//!   requires `organization_alias`. Without a `budget_id` it creates a
//!   budget row from the limits in the body (`max_budget`, `tpm_limit`,
//!   `rpm_limit`, `max_parallel_requests`, `budget_duration`, ...), which
//!   the organization keeps (`budget_id`, `litellm_budget_table`); a taken
//!   id fails on the table's primary key (an error, not a 409).
//! * `/organization/info?organization_id=` (GET) answers 404 for a missing
//!   organization, the limits under `litellm_budget_table`, the teams under
//!   `teams`.
//! * `/organization/update` is a `PATCH`. It *merges* `metadata` into the
//!   stored map (an entry is never removed), writes the limits sent (only
//!   those sent) to the organization's budget row, and raises (HTTP 500) for
//!   a missing organization.
//! * `/organization/delete` is a `DELETE` with a body
//!   (`{"organization_ids": [..]}`); it deletes the organization's teams,
//!   memberships and keys with it, and answers 404 for a missing one.
//!
//! Members: `/organization/member_add` (POST), `/organization/member_update`
//! (PATCH: a POST is answered 405) and `/organization/member_delete`
//! (DELETE with a body), Enterprise-only like the rest (403 before the body
//! is read on 1.108.7 without a licence, measured). From the source
//! (`organization_endpoints.py` of 1.108.7):
//!
//! * `member_add` takes `{"organization_id", "member": {"user_id" |
//!   "user_email", "role"}}`, `role` one of `org_admin`, `internal_user`,
//!   `internal_user_viewer` (`OrgMember`, 422 for another); a user that
//!   does not exist is *created* (`add_member_to_organization`), so the
//!   provider only adds users it knows; a missing organization is 404; a
//!   user already a member fails on the membership's primary key (500);
//!   `max_budget_in_organization` is accepted and ignored.
//! * `member_update` takes `{"organization_id", "user_id", "role"}`; a
//!   missing organization is 400, a user who is not a member 404.
//! * `member_delete` takes `{"organization_id", "user_id"}`; a user who is
//!   not a member is a Prisma "record not found" (500): the provider only
//!   removes members `/organization/info` listed.
//! * `/organization/info` lists the memberships under `members`
//!   (`LiteLLM_OrganizationMembershipTable`: `user_id`, `user_role`,
//!   `user_email` from the joined user). `/user/delete` deletes the user's
//!   organization memberships with it (`bulk_user_deletion.py`).
//!
//! `/team/new` and `/team/update` take `organization_id` on the open-source
//! proxy too: an id with no organization is answered 400 ("Organization not
//! found for organization_id=...") by `/team/new`, 404 by `/team/update`;
//! with a licence, a team's `models`, `max_budget`, `tpm_limit` and
//! `rpm_limit` must lie within its organization's (400 naming the field).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{null_as_default, Client, Error, LimitsRequest};

const ORGANIZATION_NEW: Endpoint = endpoint!(POST "/organization/new");
const ORGANIZATION_INFO: Endpoint = endpoint!(GET "/organization/info");
const ORGANIZATION_UPDATE: Endpoint = endpoint!(PATCH "/organization/update");
const ORGANIZATION_DELETE: Endpoint = endpoint!(DELETE "/organization/delete");
const MEMBER_ADD: Endpoint = endpoint!(POST "/organization/member_add");
const MEMBER_UPDATE: Endpoint = endpoint!(PATCH "/organization/member_update");
const MEMBER_DELETE: Endpoint = endpoint!(DELETE "/organization/member_delete");

/// Body of `/organization/new` and `/organization/update`. Unset fields are
/// not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OrganizationRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub organization_id: String,
    /// Required by `/organization/new`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization_alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// Kept in the organization's budget row.
    #[serde(flatten)]
    pub limits: LimitsRequest,
    /// `/organization/update` merges it into the stored map.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// The budget row of an organization, as `/organization/info` nests it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OrganizationBudget {
    pub budget_id: Option<String>,
    pub max_budget: Option<f64>,
    pub soft_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
}

/// A team of an organization, as `/organization/info` lists it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OrganizationTeam {
    pub team_id: String,
}

/// A member of an organization, as `/organization/info` lists it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OrganizationMember {
    pub user_id: String,
    /// `org_admin`, `internal_user` or `internal_user_viewer` (`None` for
    /// a membership written without one).
    pub user_role: Option<String>,
    pub user_email: Option<String>,
}

#[derive(Serialize)]
struct MemberAddBody<'a> {
    organization_id: &'a str,
    member: MemberBody<'a>,
}

#[derive(Serialize)]
struct MemberBody<'a> {
    user_id: &'a str,
    role: &'a str,
}

#[derive(Serialize)]
struct MemberUpdateBody<'a> {
    organization_id: &'a str,
    user_id: &'a str,
    role: &'a str,
}

#[derive(Serialize)]
struct MemberDeleteBody<'a> {
    organization_id: &'a str,
    user_id: &'a str,
}

/// An organization as LiteLLM reports it (the fields a provider compares or
/// reports).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct OrganizationInfo {
    pub organization_id: String,
    pub organization_alias: Option<String>,
    pub budget_id: Option<String>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub metadata: Option<Map<String, Value>>,
    pub spend: Option<f64>,
    /// The limits (`None` for an organization whose budget row is gone).
    pub litellm_budget_table: Option<OrganizationBudget>,
    #[serde(deserialize_with = "null_as_default")]
    pub teams: Vec<OrganizationTeam>,
    #[serde(deserialize_with = "null_as_default")]
    pub members: Vec<OrganizationMember>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

impl super::Limited for OrganizationInfo {
    fn limits(&self) -> super::LiveLimits<'_> {
        let budget = self.litellm_budget_table.as_ref();
        super::LiveLimits {
            max_budget: budget.and_then(|b| b.max_budget),
            budget_duration: budget.and_then(|b| b.budget_duration.as_deref()),
            tpm_limit: budget.and_then(|b| b.tpm_limit),
            rpm_limit: budget.and_then(|b| b.rpm_limit),
            max_parallel_requests: budget.and_then(|b| b.max_parallel_requests),
        }
    }
}

#[derive(Serialize)]
struct OrganizationDeleteRequest<'a> {
    organization_ids: [&'a str; 1],
}

impl Client {
    /// Creates an organization with the caller's `organization_id`;
    /// [`Error::Conflict`] if that id is taken.
    pub async fn organization_new(
        &self,
        organization: &OrganizationRequest,
    ) -> Result<OrganizationInfo, Error> {
        let reply = self.post(&ORGANIZATION_NEW, organization).await?;
        if !reply.status.is_success()
            && reply.status != reqwest::StatusCode::FORBIDDEN
            && self
                .organization_info(&organization.organization_id)
                .await?
                .is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no organization has this id.
    pub async fn organization_info(
        &self,
        organization_id: &str,
    ) -> Result<Option<OrganizationInfo>, Error> {
        let reply = self
            .get(&ORGANIZATION_INFO, &[("organization_id", organization_id)])
            .await?;
        reply.json_or_none()
    }

    /// Sets the fields that are `Some` (merging `metadata`). Only for an
    /// organization known to exist.
    pub async fn organization_update(
        &self,
        organization: &OrganizationRequest,
    ) -> Result<OrganizationInfo, Error> {
        let url = self.url(ORGANIZATION_UPDATE.path.split('/'), &[]);
        let reply = self
            .send(&ORGANIZATION_UPDATE, url, Some(organization))
            .await?;
        reply.json()
    }

    /// Deletes the organization and, with it, its teams and their keys.
    /// `false` when it was already gone.
    pub async fn organization_delete(&self, organization_id: &str) -> Result<bool, Error> {
        let body = OrganizationDeleteRequest {
            organization_ids: [organization_id],
        };
        let url = self.url(ORGANIZATION_DELETE.path.split('/'), &[]);
        self.send(&ORGANIZATION_DELETE, url, Some(&body))
            .await?
            .found()
    }
}

impl Client {
    /// Adds the user `user_id` (which must exist: LiteLLM would create a
    /// missing one) to the organization with `role`.
    pub async fn organization_member_add(
        &self,
        organization_id: &str,
        user_id: &str,
        role: &str,
    ) -> Result<(), Error> {
        let body = MemberAddBody {
            organization_id,
            member: MemberBody { user_id, role },
        };
        self.post(&MEMBER_ADD, &body)
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// Changes a member's role in the organization.
    pub async fn organization_member_update(
        &self,
        organization_id: &str,
        user_id: &str,
        role: &str,
    ) -> Result<(), Error> {
        let body = MemberUpdateBody {
            organization_id,
            user_id,
            role,
        };
        let url = self.url(MEMBER_UPDATE.path.split('/'), &[]);
        self.send(&MEMBER_UPDATE, url, Some(&body))
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }

    /// Removes a member from the organization (the user stays). Only for a
    /// member `/organization/info` listed: LiteLLM answers 500 for another.
    pub async fn organization_member_delete(
        &self,
        organization_id: &str,
        user_id: &str,
    ) -> Result<(), Error> {
        let body = MemberDeleteBody {
            organization_id,
            user_id,
        };
        let url = self.url(MEMBER_DELETE.path.split('/'), &[]);
        self.send(&MEMBER_DELETE, url, Some(&body))
            .await?
            .json::<serde::de::IgnoredAny>()
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litellm::Limited;

    #[test]
    fn only_set_fields_are_sent_with_the_limits_flat() {
        let organization = OrganizationRequest {
            organization_id: "ns.acme".into(),
            organization_alias: Some("Acme".into()),
            limits: LimitsRequest {
                max_budget: Some(100.0),
                tpm_limit: Some(5000),
                ..LimitsRequest::default()
            },
            ..OrganizationRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&organization).unwrap(),
            serde_json::json!({"organization_id": "ns.acme", "organization_alias": "Acme",
                               "max_budget": 100.0, "tpm_limit": 5000})
        );
    }

    #[test]
    fn member_bodies_are_litellms_shapes() {
        let add = MemberAddBody {
            organization_id: "ns.acme",
            member: MemberBody {
                user_id: "ns.alice",
                role: "org_admin",
            },
        };
        assert_eq!(
            serde_json::to_value(&add).unwrap(),
            serde_json::json!({"organization_id": "ns.acme",
                               "member": {"user_id": "ns.alice", "role": "org_admin"}})
        );
        let update = MemberUpdateBody {
            organization_id: "ns.acme",
            user_id: "ns.alice",
            role: "internal_user",
        };
        assert_eq!(
            serde_json::to_value(&update).unwrap(),
            serde_json::json!({"organization_id": "ns.acme", "user_id": "ns.alice",
                               "role": "internal_user"})
        );
        let delete = MemberDeleteBody {
            organization_id: "ns.acme",
            user_id: "ns.alice",
        };
        assert_eq!(
            serde_json::to_value(&delete).unwrap(),
            serde_json::json!({"organization_id": "ns.acme", "user_id": "ns.alice"})
        );
        assert_eq!(MEMBER_UPDATE.method, reqwest::Method::PATCH);
        assert_eq!(MEMBER_DELETE.method, reqwest::Method::DELETE);
    }

    #[test]
    fn reads_the_limits_from_the_budget_row_tolerantly() {
        let info: OrganizationInfo = serde_json::from_value(serde_json::json!({
            "organization_id": "ns.acme",
            "organization_alias": "Acme",
            "budget_id": "b-1",
            "models": null,
            "metadata": {"a": 1},
            "spend": 0.0,
            "litellm_budget_table": {"budget_id": "b-1", "max_budget": 100.0,
                                     "tpm_limit": 5000, "budget_duration": "30d",
                                     "model_max_budget": null},
            "members": [{"user_id": "ns.alice", "organization_id": "ns.acme",
                         "user_role": "org_admin", "spend": 0.0, "budget_id": null,
                         "user": {"user_id": "ns.alice", "user_email": "a@example.com"},
                         "user_email": "a@example.com"}],
            "teams": [{"team_id": "ns.web", "team_alias": null}],
            "created_at": "2026-12-02T00:00:00Z",
            "updated_at": "2026-12-02T00:00:00Z",
            "unknown": {"nested": true}
        }))
        .unwrap();
        assert!(info.models.is_empty());
        assert_eq!(info.limits().max_budget, Some(100.0));
        assert_eq!(info.limits().budget_duration, Some("30d"));
        assert_eq!(info.limits().rpm_limit, None);
        assert_eq!(info.teams[0].team_id, "ns.web");
        assert_eq!(
            info.members,
            [OrganizationMember {
                user_id: "ns.alice".into(),
                user_role: Some("org_admin".into()),
                user_email: Some("a@example.com".into()),
            }]
        );
        let bare: OrganizationInfo =
            serde_json::from_value(serde_json::json!({"organization_id": "x",
                                                      "litellm_budget_table": null}))
            .unwrap();
        assert_eq!(bare.limits(), crate::litellm::LiveLimits::default());
        assert!(bare.members.is_empty());
    }
}
