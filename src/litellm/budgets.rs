//! Budgets: `/budget/new`, `/budget/info`, `/budget/update`, `/budget/delete`.
//!
//! These routes do not answer a missing budget with 404: `/budget/info` gives
//! `200 []`, `/budget/update` and `/budget/delete` give `200 null`. The
//! operations below turn that back into the usual `None` / `false` /
//! [`Error::NotFound`].

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::client::{endpoint, Endpoint};
use super::{Client, Error, LimitsRequest};

const BUDGET_NEW: Endpoint = endpoint!(POST "/budget/new");
const BUDGET_INFO: Endpoint = endpoint!(POST "/budget/info");
const BUDGET_UPDATE: Endpoint = endpoint!(POST "/budget/update");
const BUDGET_DELETE: Endpoint = endpoint!(POST "/budget/delete");

/// Body of `/budget/new` and `/budget/update`; unset fields are not sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BudgetRequest {
    /// Chosen by the caller so a create whose response is lost can be found.
    pub budget_id: String,
    #[serde(flatten)]
    pub limits: LimitsRequest,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_budget: Option<f64>,
}

/// A budget as LiteLLM reports it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BudgetInfo {
    pub budget_id: String,
    pub max_budget: Option<f64>,
    pub soft_budget: Option<f64>,
    pub budget_duration: Option<String>,
    pub budget_reset_at: Option<String>,
    pub tpm_limit: Option<i64>,
    pub rpm_limit: Option<i64>,
    pub max_parallel_requests: Option<i64>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

#[derive(Serialize)]
struct BudgetInfoRequest<'a> {
    budgets: [&'a str; 1],
}

#[derive(Serialize)]
struct BudgetDeleteRequest<'a> {
    id: &'a str,
}

impl Client {
    /// Creates a budget with the caller's `budget_id`; [`Error::Conflict`] if
    /// that id is taken.
    pub async fn budget_new(&self, budget: &BudgetRequest) -> Result<BudgetInfo, Error> {
        let reply = self.post(&BUDGET_NEW, budget).await?;
        // A duplicate budget_id is answered 400, like any invalid field; it
        // is a conflict only if the budget is really there.
        if reply.status == reqwest::StatusCode::BAD_REQUEST
            && self.budget_info(&budget.budget_id).await?.is_some()
        {
            return Err(reply.conflict());
        }
        reply.json()
    }

    /// `None` when no budget has this id.
    pub async fn budget_info(&self, budget_id: &str) -> Result<Option<BudgetInfo>, Error> {
        let body = BudgetInfoRequest {
            budgets: [budget_id],
        };
        let budgets: Vec<BudgetInfo> = self.post(&BUDGET_INFO, &body).await?.json()?;
        Ok(budgets.into_iter().find(|b| b.budget_id == budget_id))
    }

    /// Sets the fields that are `Some`; [`Error::NotFound`] for a missing
    /// budget.
    pub async fn budget_update(&self, budget: &BudgetRequest) -> Result<BudgetInfo, Error> {
        let reply = self.post(&BUDGET_UPDATE, budget).await?;
        reply
            .json::<Option<BudgetInfo>>()?
            .ok_or(Error::NotFound { op: reply.op })
    }

    /// `false` when the budget was already gone.
    pub async fn budget_delete(&self, budget_id: &str) -> Result<bool, Error> {
        let body = BudgetDeleteRequest { id: budget_id };
        let reply = self.post(&BUDGET_DELETE, &body).await?;
        // 404 is not what 1.108.7 answers, but it means gone all the same.
        Ok(reply
            .json_or_none::<Option<IgnoredAny>>()?
            .flatten()
            .is_some())
    }
}
