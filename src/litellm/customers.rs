//! Customers (end users): `/customer/new`, `/customer/info`,
//! `/customer/update`, `/customer/delete`. Open source on 1.108.7.
//!
//! Measured on 1.108.7: `/customer/new` takes the caller's `user_id` and
//! answers 400 for a taken one; it answers 422 for a `default_model` the
//! proxy does not serve and, like `/customer/update`, 500 (a foreign-key
//! failure) for a `budget_id` no budget has. `metadata` is accepted and not
//! kept (customers have no such column). `/customer/info?end_user_id=`
//! answers 404 for a missing customer. `/customer/update` writes only the
//! fields sent: `null` leaves a field as it is (so `alias`, `budget_id` and
//! `default_model` cannot be cleared), `blocked` and `models` are written
//! when sent (`[]` clears the list), and a missing customer is 404.
//! `/customer/delete {"user_ids": [..]}` answers 404 when none of them
//! exists. Every route answers 401 to a key that is not the proxy admin's.
//! The proxy holds a request naming a customer (`user`) to the customer's
//! `models` and budget; `blocked` is kept, and enforced only by the
//! Enterprise blocked-user hook. The master key skips the customer's checks.
//! Deleting a budget a customer links to unlinks it (`budget_id` becomes
//! `null`): the customer's spend is then unlimited.

use serde::{Deserialize, Serialize};

use super::client::{endpoint, Endpoint};
use super::{null_as_default, Client, Error};

const CUSTOMER_NEW: Endpoint = endpoint!(POST "/customer/new");
const CUSTOMER_INFO: Endpoint = endpoint!(GET "/customer/info");
const CUSTOMER_UPDATE: Endpoint = endpoint!(POST "/customer/update");
const CUSTOMER_DELETE: Endpoint = endpoint!(POST "/customer/delete");

/// Body of `/customer/new` and `/customer/update`. Unset fields are not
/// sent (an update leaves them as they are).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CustomerRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub user_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_id: Option<String>,
    /// `[]` clears the list on update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
    /// `eu` or `us`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_model_region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
}

/// The budget a customer links to, as `/customer/info` embeds it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CustomerBudget {
    pub max_budget: Option<f64>,
}

/// A customer as LiteLLM reports it (the fields a provider compares or
/// reports).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CustomerInfo {
    pub user_id: String,
    pub alias: Option<String>,
    pub blocked: bool,
    pub budget_id: Option<String>,
    pub litellm_budget_table: Option<CustomerBudget>,
    #[serde(deserialize_with = "null_as_default")]
    pub models: Vec<String>,
    pub allowed_model_region: Option<String>,
    pub default_model: Option<String>,
    pub spend: Option<f64>,
}

#[derive(Serialize)]
struct CustomerDeleteRequest<'a> {
    user_ids: [&'a str; 1],
}

impl Client {
    /// Creates a customer with the caller's `user_id`; [`Error::Conflict`]
    /// if that id is taken.
    pub async fn customer_new(&self, customer: &CustomerRequest) -> Result<CustomerInfo, Error> {
        let reply = self.post(&CUSTOMER_NEW, customer).await?;
        // A taken id is answered 400, like any invalid field; it is a
        // conflict only if the customer is really there.
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.customer_info(&customer.user_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no customer has this id.
    pub async fn customer_info(&self, user_id: &str) -> Result<Option<CustomerInfo>, Error> {
        let reply = self
            .get(&CUSTOMER_INFO, &[("end_user_id", user_id)])
            .await?;
        reply.json_or_none()
    }

    /// Writes the fields that are `Some`; [`Error::NotFound`] for a missing
    /// customer.
    pub async fn customer_update(&self, customer: &CustomerRequest) -> Result<CustomerInfo, Error> {
        let reply = self.post(&CUSTOMER_UPDATE, customer).await?;
        reply
            .json_or_none()?
            .ok_or(Error::NotFound { op: reply.op })
    }

    /// `false` when the customer was already gone.
    pub async fn customer_delete(&self, user_id: &str) -> Result<bool, Error> {
        let body = CustomerDeleteRequest {
            user_ids: [user_id],
        };
        self.post(&CUSTOMER_DELETE, &body).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_set_fields_are_sent() {
        let customer = CustomerRequest {
            user_id: "c/ns/alice/0123".into(),
            blocked: Some(false),
            models: Some(vec![]),
            ..CustomerRequest::default()
        };
        assert_eq!(
            serde_json::to_value(&customer).unwrap(),
            serde_json::json!({"user_id": "c/ns/alice/0123", "blocked": false, "models": []})
        );
    }

    #[test]
    fn reads_customer_info_tolerantly() {
        let info: CustomerInfo = serde_json::from_value(serde_json::json!({
            "user_id": "alice", "blocked": true, "alias": null, "spend": 0.0,
            "allowed_model_region": "eu", "default_model": null, "models": null,
            "budget_id": "b", "litellm_budget_table": {"budget_id": "b", "max_budget": 5.0,
            "unknown": 1}, "object_permission_id": null, "object_permission": null
        }))
        .unwrap();
        assert_eq!(info.user_id, "alice");
        assert!(info.blocked);
        assert!(info.models.is_empty());
        assert_eq!(info.litellm_budget_table.unwrap().max_budget, Some(5.0));
    }
}
