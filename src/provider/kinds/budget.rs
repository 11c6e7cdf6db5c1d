//! `LiteLLMBudget` against `/budget/*`.
//!
//! LiteLLM budgets have no metadata, so their ownership lives in their id:
//! the provider creates budgets as `<cluster>/<namespace>/<name>`
//! ([`ownership::owned_id`]), and any other id is an unmarked budget (made
//! in the UI or by another tool), which only resources in the instance's
//! namespace may adopt. The id is the budget's only handle, so it cannot be
//! forged into another owner's without naming that owner's budget, and
//! naming it is refused.

use std::collections::BTreeMap;

use crate::api::budget::{BudgetObservation, BudgetParameters, LiteLLMBudget};
use crate::api::common::{ManagedFields, ManagedStatus};
use crate::litellm::{self, BudgetInfo, BudgetRequest, Limited};

use crate::provider::kinds::limits;
use crate::provider::managed::contract::{Chosen, Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, money_f64, money_string, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{self, Owner};
use crate::provider::watch::joins::Joins;

pub fn request(id: &str, params: &BudgetParameters) -> BudgetRequest {
    BudgetRequest {
        budget_id: id.to_owned(),
        limits: limits::request(&params.limits),
        soft_budget: params.soft_budget.as_deref().and_then(money_f64),
    }
}

pub fn diff(params: &BudgetParameters, live: &BudgetInfo) -> Diff {
    let mut diff = Diff::new();
    limits::diff(&mut diff, &params.limits, live.limits());
    diff.money(
        "softBudget",
        params.soft_budget.as_deref(),
        live.soft_budget,
    );
    diff
}

pub fn late_init(params: &BudgetParameters, live: &BudgetInfo) -> Option<BudgetParameters> {
    let mut filled = params.clone();
    let changed = [
        limits::late_init(&mut filled.limits, live.limits()),
        diff::late_init(&mut filled.soft_budget, money_string(live.soft_budget)),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &BudgetInfo) -> BudgetObservation {
    BudgetObservation {
        budget_id: Some(live.budget_id.clone()),
        max_budget: money_string(live.max_budget),
        budget_reset_at: live.budget_reset_at.clone(),
        created_at: live.created_at.clone(),
    }
}

/// `/budget/*` for one reconciliation.
pub struct BudgetMapping {
    client: litellm::Client,
}

impl ManagedKind for LiteLLMBudget {
    type Parameters = BudgetParameters;
    type AtProvider = BudgetObservation;
    type External = Mapped<BudgetMapping>;
    const NOUN: &'static str = "budget";
    /// Keys and customers of its namespace that join it: LiteLLM would
    /// delete the keys with the budget, and unlink the customers (whose
    /// spend would then be unlimited), under resources that still hold
    /// them.
    const JOINED_AS: Option<Joins> = Some(Joins::Budget);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &BudgetParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<BudgetObservation>> {
        self.status.as_ref()
    }
    /// The owner goes into the id: see the module documentation.
    async fn choose_id(&self, connection: &Connection) -> Result<Chosen, ExternalError> {
        Ok(ownership::owned_id(&connection.owner).into())
    }

    fn connect(connection: Connection) -> Mapped<BudgetMapping> {
        Mapped(BudgetMapping {
            client: connection.litellm,
        })
    }
}

impl Mapping<LiteLLMBudget> for BudgetMapping {
    type Live = BudgetInfo;
    type Request = BudgetRequest;

    async fn read(&self, _: &LiteLLMBudget, id: &str) -> Result<Option<BudgetInfo>, ExternalError> {
        Ok(self.client.budget_info(id).await?)
    }
    fn owner(&self, id: &str, _: &BudgetInfo) -> Option<Owner> {
        ownership::owner_of_id(id)
    }
    fn drift(&self, mr: &LiteLLMBudget, _: &str, live: &BudgetInfo) -> Diff {
        diff(&mr.spec.for_provider, live)
    }
    fn late_init(&self, params: &BudgetParameters, live: &BudgetInfo) -> Option<BudgetParameters> {
        late_init(params, live)
    }
    fn at_provider(&self, live: &BudgetInfo, _: Option<Fingerprints>) -> BudgetObservation {
        at_provider(live)
    }
    fn connection_details(&self, live: &BudgetInfo) -> BTreeMap<String, String> {
        BTreeMap::from([("budgetId".to_owned(), live.budget_id.clone())])
    }

    async fn request(
        &self,
        mr: &LiteLLMBudget,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<BudgetRequest, ExternalError> {
        let params = &mr.spec.for_provider;
        Ok(match drift {
            None => request(id, params),
            Some(drift) => BudgetRequest {
                limits: limits::update_request(&params.limits, drift),
                ..request(id, params)
            },
        })
    }
    async fn send_create(&self, request: &BudgetRequest) -> Result<Option<String>, ExternalError> {
        self.client.budget_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &BudgetRequest) -> Result<(), ExternalError> {
        self.client.budget_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.budget_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Limits;

    fn live() -> BudgetInfo {
        BudgetInfo {
            budget_id: "ns.b".into(),
            max_budget: Some(100.0),
            soft_budget: Some(80.0),
            budget_duration: Some("30d".into()),
            rpm_limit: Some(10),
            ..BudgetInfo::default()
        }
    }

    #[test]
    fn diff_table() {
        let cases: Vec<(BudgetParameters, Vec<&str>)> = vec![
            (BudgetParameters::default(), vec![]),
            (
                BudgetParameters {
                    limits: Limits {
                        max_budget: Some("100.00".into()),
                        budget_duration: Some("30d".into()),
                        rpm_limit: Some(10),
                        ..Limits::default()
                    },
                    soft_budget: Some("80".into()),
                    ..BudgetParameters::default()
                },
                vec![],
            ),
            (
                BudgetParameters {
                    limits: Limits {
                        max_budget: Some("100.000001".into()),
                        budget_duration: Some("1d".into()),
                        tpm_limit: Some(5),
                        rpm_limit: Some(11),
                        max_parallel_requests: Some(2),
                        ..Limits::default()
                    },
                    soft_budget: Some("81".into()),
                },
                vec![
                    "maxBudget",
                    "budgetDuration",
                    "tpmLimit",
                    "rpmLimit",
                    "maxParallelRequests",
                    "softBudget",
                ],
            ),
        ];
        for (params, want) in cases {
            assert_eq!(
                diff(&params, &live()).fields(),
                want.as_slice(),
                "{params:?}"
            );
        }
    }

    #[test]
    fn request_and_late_init() {
        let params = BudgetParameters {
            limits: Limits {
                max_budget: Some("12.5".into()),
                ..Limits::default()
            },
            ..BudgetParameters::default()
        };
        let body = serde_json::to_value(request("ns.b", &params)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"budget_id": "ns.b", "max_budget": 12.5})
        );
        let filled = late_init(&params, &live()).unwrap();
        assert_eq!(filled.limits.max_budget.as_deref(), Some("12.5"));
        assert_eq!(filled.soft_budget.as_deref(), Some("80"));
        assert_eq!(late_init(&filled, &live()), None);
        assert_eq!(at_provider(&live()).max_budget.as_deref(), Some("100"));
    }
}
