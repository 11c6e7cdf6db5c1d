//! `LiteLLMCustomer` against `/customer/*`.
//!
//! A customer (end user) is an id that requests name in their `user` field:
//! LiteLLM then holds the request to that customer's budget, models, region
//! and `blocked` flag, and adds its spend to the customer, whichever key
//! sent it. LiteLLM keeps no metadata on customers, so the owner lives in
//! the id, and since any key can name any customer, the id is also one no
//! other tenant can guess ([`ownership::private_id`]:
//! `<cluster>/<namespace>/<name>/<suffix of the uid>`).
//!
//! * The id is chosen before the create (the external name), so a create
//!   whose answer was lost is found by the next observation; it is derived
//!   from the resource, so a lost external name finds the same customer.
//! * Drift (alias, blocked, budget, models, region, default model) is
//!   corrected each poll by `/customer/update`, only sent for a customer an
//!   observation found (it answers 404 otherwise).
//! * Deletion is confirmed by an observation that finds nothing. Nothing in
//!   LiteLLM uses a customer; the budget it links to waits for it.
//! * Imports follow [`ownership::may_manage`] on the owner the id names:
//!   another resource's customer never, one of another id shape (made in
//!   the UI, or whose id an application chose) only from the
//!   LiteLLMInstance's namespace.
//!
//! Tenancy (a namespace other than the instance's): the id is always the
//! resource's own private id (an external name of another shape is
//! refused before anything is sent, so a tenant can neither create the
//! customer another tenant's application sends, to block or reroute its
//! requests, nor name one it could spend), the budget is its namespace's
//! (`budgetRef`, or a `budgetId` of a LiteLLMBudget of its namespace), and
//! `models` and `defaultModel` follow the teams' rule
//! ([`may_list_models`]).

use std::collections::BTreeMap;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::customer::{
    CustomerObservation, CustomerParameters, LiteLLMCustomer, BUDGET_ID_FIELD, BUDGET_REF_FIELD,
};
use crate::litellm::{self, CustomerInfo, CustomerRequest};

use crate::provider::managed::contract::{Chosen, Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, money_string, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{
    self, may_list_models, may_use, owner_of_id, owner_of_private_id, Owner,
};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, JoinFields, Joins};

const BUDGET_REF: &str = "budgetRef";
const EXTERNAL_NAME: &str = "metadata.annotations[crossplane.io/external-name]";

/// The budget id: the resolved `budgetRef`, else `budgetId`.
pub fn budget_id<'a>(params: &'a CustomerParameters, refs: &'a Resolved) -> Option<&'a str> {
    refs.id(BUDGET_REF).or(params.budget_id.as_deref())
}

/// Why the customer may not be written from the namespace of `owner` (a
/// tenant's, unless it is `instance_namespace`) under `id`, naming the
/// field. Never names another tenant.
pub fn tenant_refusal(
    params: &CustomerParameters,
    refs: &Resolved,
    id: &str,
    owner: &Owner,
    instance_namespace: &str,
) -> Option<String> {
    let namespace = &owner.namespace;
    if *namespace == instance_namespace {
        return None;
    }
    if !owner_of_private_id(id).is_some_and(|named| named.same_resource(owner)) {
        return Some(format!(
            "{EXTERNAL_NAME}: outside the LiteLLMInstance's namespace a customer's id is the one \
             the provider chooses (remove the annotation): any request can name any customer id, \
             so a chosen one could be another application's customer or one others can spend"
        ));
    }
    if let Some(budget) = budget_id(params, refs) {
        if let Err(refusal) = may_use(
            owner_of_id(budget).as_ref(),
            &owner.cluster,
            namespace,
            instance_namespace,
        ) {
            return Some(format!(
                "forProvider.budgetId: refusing to link the customer to LiteLLM budget {budget}: {}",
                refusal.explain()
            ));
        }
    }
    may_list_models(
        params.models.as_deref(),
        true,
        namespace,
        instance_namespace,
    )
    .err()
    .or_else(|| {
        let default = params.default_model.clone()?;
        may_list_models(Some(&[default]), true, namespace, instance_namespace)
            .err()
            .map(|why| why.replacen("forProvider.models", "forProvider.defaultModel", 1))
    })
}

/// The create body, and every update's: each field set (an update writes
/// only what it is sent).
pub fn request(id: &str, params: &CustomerParameters, refs: &Resolved) -> CustomerRequest {
    CustomerRequest {
        user_id: id.to_owned(),
        alias: params.alias.clone(),
        blocked: params.blocked,
        budget_id: budget_id(params, refs).map(str::to_owned),
        models: params.models.clone(),
        allowed_model_region: params.allowed_model_region.map(|r| r.as_str().to_owned()),
        default_model: params.default_model.clone(),
    }
}

/// The fields of `params` the live customer does not match.
pub fn diff(params: &CustomerParameters, refs: &Resolved, live: &CustomerInfo) -> Diff {
    let mut diff = Diff::new();
    diff.field("alias", params.alias.as_deref(), live.alias.as_deref());
    diff.field("blocked", params.blocked.as_ref(), Some(&live.blocked));
    diff.field(
        "budgetId",
        budget_id(params, refs),
        live.budget_id.as_deref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    diff.field(
        "allowedModelRegion",
        params.allowed_model_region.map(|r| r.as_str()),
        live.allowed_model_region.as_deref(),
    );
    diff.field(
        "defaultModel",
        params.default_model.as_deref(),
        live.default_model.as_deref(),
    );
    diff
}

/// `params` with unset fields filled from the live customer, if any is
/// filled. The budget id is not (with a `budgetRef` it would say the same
/// thing twice), nor a region `allowedModelRegion` cannot hold.
pub fn late_init(params: &CustomerParameters, live: &CustomerInfo) -> Option<CustomerParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let region = live
        .allowed_model_region
        .as_deref()
        .and_then(|r| serde_json::from_value(r.into()).ok());
    let changed = [
        diff::late_init(&mut filled.alias, live.alias.clone()),
        diff::late_init(&mut filled.blocked, Some(live.blocked)),
        diff::late_init(&mut filled.models, models),
        diff::late_init(&mut filled.allowed_model_region, region),
        diff::late_init(&mut filled.default_model, live.default_model.clone()),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &CustomerInfo) -> CustomerObservation {
    CustomerObservation {
        customer_id: Some(live.user_id.clone()),
        alias: live.alias.clone(),
        blocked: Some(live.blocked),
        budget_id: live.budget_id.clone(),
        max_budget: live
            .litellm_budget_table
            .as_ref()
            .and_then(|b| money_string(b.max_budget)),
        spend: money_string(live.spend),
        models: Some(live.models.clone()),
        allowed_model_region: live.allowed_model_region.clone(),
        default_model: live.default_model.clone(),
    }
}

/// `/customer/*` for one reconciliation.
pub struct CustomerMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
}

impl ManagedKind for LiteLLMCustomer {
    type Parameters = CustomerParameters;
    type AtProvider = CustomerObservation;
    type External = Mapped<CustomerMapping>;
    const NOUN: &'static str = "customer";
    const JOINS: &'static [Joins] = &[Joins::Budget];

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &CustomerParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<CustomerObservation>> {
        self.status.as_ref()
    }

    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        params
            .budget_ref
            .iter()
            .map(|r| Reference::Budget {
                field: BUDGET_REF,
                name: r.name.clone(),
            })
            .collect()
    }

    fn join_fields(what: Joins) -> Option<JoinFields> {
        (what == Joins::Budget).then_some(JoinFields {
            reference: BUDGET_REF_FIELD,
            id: BUDGET_ID_FIELD,
        })
    }

    fn joins(&self) -> Vec<Join> {
        let params = &self.spec.for_provider;
        join(
            Joins::Budget,
            params.budget_ref.as_ref(),
            params.budget_id.as_deref(),
        )
        .into_iter()
        .collect()
    }

    /// The resource's private id: see the module documentation.
    async fn choose_id(&self, connection: &Connection) -> Result<Chosen, ExternalError> {
        let id = ownership::private_id(&connection.owner).ok_or_else(|| {
            ExternalError::Invalid(
                "metadata.uid: the customer's id is derived from the resource's uid, which the \
                 API server did not report"
                    .to_owned(),
            )
        })?;
        Ok(id.into())
    }

    fn connect(connection: Connection) -> Mapped<CustomerMapping> {
        Mapped(CustomerMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
        })
    }
}

impl Mapping<LiteLLMCustomer> for CustomerMapping {
    type Live = CustomerInfo;
    type Request = CustomerRequest;

    async fn read(
        &self,
        _: &LiteLLMCustomer,
        id: &str,
    ) -> Result<Option<CustomerInfo>, ExternalError> {
        Ok(self.client.customer_info(id).await?)
    }
    fn owner(&self, id: &str, _: &CustomerInfo) -> Option<Owner> {
        owner_of_private_id(id)
    }
    fn drift(&self, mr: &LiteLLMCustomer, _: &str, live: &CustomerInfo) -> Diff {
        diff(&mr.spec.for_provider, &self.refs, live)
    }
    fn late_init(
        &self,
        params: &CustomerParameters,
        live: &CustomerInfo,
    ) -> Option<CustomerParameters> {
        late_init(params, live)
    }
    fn at_provider(&self, live: &CustomerInfo, _: Option<Fingerprints>) -> CustomerObservation {
        at_provider(live)
    }
    fn connection_details(&self, live: &CustomerInfo) -> BTreeMap<String, String> {
        BTreeMap::from([("customerId".to_owned(), live.user_id.clone())])
    }

    /// Every write sends every field set, or is refused before it is sent.
    async fn request(
        &self,
        mr: &LiteLLMCustomer,
        id: &str,
        _drift: Option<&Diff>,
    ) -> Result<CustomerRequest, ExternalError> {
        let params = &mr.spec.for_provider;
        if let Some(why) = tenant_refusal(
            params,
            &self.refs,
            id,
            &self.owner,
            &self.instance_namespace,
        ) {
            return Err(ExternalError::Invalid(why));
        }
        Ok(request(id, params, &self.refs))
    }
    async fn send_create(
        &self,
        request: &CustomerRequest,
    ) -> Result<Option<String>, ExternalError> {
        self.client.customer_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &CustomerRequest) -> Result<(), ExternalError> {
        self.client.customer_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.customer_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::LocalRef;
    use crate::api::customer::ModelRegion;

    fn me() -> Owner {
        Owner {
            cluster: "c".into(),
            namespace: "team-a".into(),
            name: "alice".into(),
            uid: "5d0c2a1e-7b4f-4c1a-9e3d-2f6a8b9c0d1e".into(),
        }
    }

    fn my_id() -> String {
        ownership::private_id(&me()).unwrap()
    }

    fn live() -> CustomerInfo {
        CustomerInfo {
            user_id: my_id(),
            alias: Some("Alice".into()),
            blocked: false,
            budget_id: Some("c/team-a/free".into()),
            litellm_budget_table: Some(litellm::CustomerBudget {
                max_budget: Some(5.0),
            }),
            models: vec!["gpt-4o".into(), "team-a/mine".into()],
            allowed_model_region: Some("eu".into()),
            default_model: Some("gpt-4o".into()),
            spend: Some(0.25),
        }
    }

    fn all_set() -> CustomerParameters {
        CustomerParameters {
            alias: Some("Alice".into()),
            blocked: Some(false),
            budget_ref: None,
            budget_id: Some("c/team-a/free".into()),
            models: Some(vec!["team-a/mine".into(), "gpt-4o".into()]),
            allowed_model_region: Some(ModelRegion::Eu),
            default_model: Some("gpt-4o".into()),
        }
    }

    #[test]
    fn diff_table() {
        let refs = Resolved::default();
        let cases: Vec<(&str, CustomerParameters, Resolved, Vec<&str>)> = vec![
            (
                "nothing set",
                CustomerParameters::default(),
                refs.clone(),
                vec![],
            ),
            ("equal in every set field", all_set(), refs.clone(), vec![]),
            (
                "every field drifted",
                CustomerParameters {
                    alias: Some("Bob".into()),
                    blocked: Some(true),
                    budget_ref: None,
                    budget_id: Some("c/team-a/paid".into()),
                    models: Some(vec![]),
                    allowed_model_region: Some(ModelRegion::Us),
                    default_model: Some("claude".into()),
                },
                refs.clone(),
                vec![
                    "alias",
                    "blocked",
                    "budgetId",
                    "models",
                    "allowedModelRegion",
                    "defaultModel",
                ],
            ),
            (
                "the resolved budgetRef is compared, not budgetId",
                CustomerParameters {
                    budget_ref: Some(LocalRef {
                        name: "paid".into(),
                    }),
                    budget_id: Some("c/team-a/free".into()),
                    ..CustomerParameters::default()
                },
                Resolved::default().with_id(BUDGET_REF, "c/team-a/paid"),
                vec!["budgetId"],
            ),
        ];
        for (what, params, refs, want) in cases {
            assert_eq!(
                diff(&params, &refs, &live()).fields(),
                want.as_slice(),
                "{what}"
            );
        }
    }

    #[test]
    fn requests_send_what_is_set_and_late_init_fills_the_rest_once() {
        let refs = Resolved::default().with_id(BUDGET_REF, "c/team-a/free");
        let params = CustomerParameters {
            blocked: Some(true),
            budget_ref: Some(LocalRef {
                name: "free".into(),
            }),
            ..CustomerParameters::default()
        };
        assert_eq!(
            serde_json::to_value(request("id-1", &params, &refs)).unwrap(),
            serde_json::json!({"user_id": "id-1", "blocked": true, "budget_id": "c/team-a/free"})
        );
        let filled = late_init(&params, &live()).unwrap();
        assert_eq!(filled.blocked, Some(true), "a set field is kept");
        assert_eq!(filled.alias.as_deref(), Some("Alice"));
        assert_eq!(filled.allowed_model_region, Some(ModelRegion::Eu));
        assert_eq!(filled.budget_id, None, "the budget is the reference's");
        assert_eq!(late_init(&filled, &live()), None);
        let seen = at_provider(&live());
        assert_eq!(seen.customer_id, Some(my_id()));
        assert_eq!(seen.max_budget.as_deref(), Some("5"));
        assert_eq!(seen.spend.as_deref(), Some("0.25"));
    }

    #[test]
    fn tenants_keep_the_private_id_their_budgets_and_their_models() {
        let me = me();
        let refs = Resolved::default();
        let refused = |params: &CustomerParameters, id: &str| {
            tenant_refusal(params, &refs, id, &me, "platform")
        };
        let fine = CustomerParameters {
            budget_id: Some("c/team-a/free".into()),
            models: Some(vec!["gpt-4o".into(), "team-a/mine".into()]),
            default_model: Some("team-a/mine".into()),
            ..CustomerParameters::default()
        };
        assert_eq!(refused(&fine, &my_id()), None);
        assert_eq!(refused(&CustomerParameters::default(), &my_id()), None);
        // Any other id: another application's customer, a guessable one,
        // another resource's.
        let other = Owner {
            name: "bob".into(),
            ..me.clone()
        };
        for id in [
            "alice".to_owned(),
            "c/team-a/alice".to_owned(),
            ownership::private_id(&other).unwrap(),
        ] {
            let why = refused(&CustomerParameters::default(), &id).expect(&id);
            assert!(why.starts_with(EXTERNAL_NAME), "{why}");
        }
        let cases: Vec<(CustomerParameters, &str)> = vec![
            (
                CustomerParameters {
                    budget_id: Some("c/team-b/free".into()),
                    ..CustomerParameters::default()
                },
                "forProvider.budgetId",
            ),
            (
                CustomerParameters {
                    budget_id: Some("free_tier".into()),
                    ..CustomerParameters::default()
                },
                "forProvider.budgetId",
            ),
            (
                CustomerParameters {
                    models: Some(vec!["team-b/theirs".into()]),
                    ..CustomerParameters::default()
                },
                "forProvider.models",
            ),
            (
                CustomerParameters {
                    default_model: Some("team-b/theirs".into()),
                    ..CustomerParameters::default()
                },
                "forProvider.defaultModel",
            ),
        ];
        for (params, field) in cases {
            let why = refused(&params, &my_id()).expect(field);
            assert!(why.starts_with(field), "{why}");
            assert!(!why.contains("team-b/free") || field == "forProvider.budgetId");
        }
        // The platform's namespace chooses any id and any budget.
        let platform = Owner {
            namespace: "platform".into(),
            ..me.clone()
        };
        let anything = CustomerParameters {
            budget_id: Some("free_tier".into()),
            models: Some(vec!["team-b/theirs".into()]),
            ..CustomerParameters::default()
        };
        assert_eq!(
            tenant_refusal(&anything, &refs, "alice", &platform, "platform"),
            None
        );
    }
}
