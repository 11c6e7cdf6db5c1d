//! `LiteLLMUser` against `/user/*`.
//!
//! The user id is chosen before the create (the external name,
//! `<namespace>.<name>` by default) and the ownership marker goes into the
//! user's `metadata`, which LiteLLM replaces wholesale on update: every
//! write sends it. `/user/new` never generates a key here (see
//! [`litellm::Client::user_new`]).
//!
//! Tenancy: the admin roles (`proxy_admin`, `proxy_admin_viewer`) are the
//! platform's. A user outside the LiteLLMInstance's namespace may only be
//! an `internal_user` or `internal_user_viewer`, and is always sent with
//! its role (`internal_user` when unset), so neither a proxy default nor a
//! change in LiteLLM's UI can make it an admin for longer than a poll. Its
//! `models` follow the teams' rule ([`may_list_models`]).

use std::collections::BTreeMap;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::user::{LiteLLMUser, UserObservation, UserParameters, UserRole};
use crate::litellm::{self, Limited, UserInfo, UserRequest};

use crate::provider::kinds::limits;
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, money_string, user_metadata, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{may_list_models, metadata_with_marker, Owner};
use crate::provider::watch::joins::Joins;

const USER_ROLE: &str = "userRole";

/// The role sent and compared: the one set, else, outside the instance's
/// namespace (`platform` false), `internal_user`.
pub fn role(params: &UserParameters, platform: bool) -> Option<UserRole> {
    params
        .user_role
        .or((!platform).then_some(UserRole::InternalUser))
}

/// Why the user may not be written from `namespace` (a tenant's, unless it
/// is the instance's), naming the field.
pub fn tenant_refusal(
    params: &UserParameters,
    namespace: &str,
    instance_namespace: &str,
) -> Option<String> {
    if namespace == instance_namespace {
        return None;
    }
    if let Some(role) = params.user_role.filter(|r| r.is_admin()) {
        return Some(format!(
            "forProvider.{USER_ROLE}: {} is an admin role of the whole proxy; only users in the \
             LiteLLMInstance's namespace may have it (use internal_user or internal_user_viewer)",
            role.as_str()
        ));
    }
    may_list_models(
        params.models.as_deref(),
        false,
        namespace,
        instance_namespace,
    )
    .err()
}

/// What is sent on create and on every update: all fields the user set,
/// the role ([`role`]), and the metadata with the marker.
pub fn request(id: &str, params: &UserParameters, platform: bool, owner: &Owner) -> UserRequest {
    UserRequest {
        user_id: id.to_owned(),
        user_email: params.user_email.clone(),
        user_alias: params.user_alias.clone(),
        user_role: role(params, platform).map(|r| r.as_str().to_owned()),
        models: params.models.clone(),
        limits: limits::request(&params.limits),
        metadata: Some(metadata_with_marker(params.metadata.as_ref(), owner)),
    }
}

/// The fields of `params` the live user does not match.
pub fn diff(params: &UserParameters, live: &UserInfo, platform: bool, owner: &Owner) -> Diff {
    let mut diff = Diff::new();
    diff.field(
        "userEmail",
        params.user_email.as_deref(),
        live.user_email.as_deref(),
    );
    diff.field(
        "userAlias",
        params.user_alias.as_deref(),
        live.user_alias.as_deref(),
    );
    diff.field(
        USER_ROLE,
        role(params, platform).map(UserRole::as_str),
        live.user_role.as_deref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    limits::diff(&mut diff, &params.limits, live.limits());
    diff.metadata(
        "metadata",
        &metadata_with_marker(params.metadata.as_ref(), owner),
        live.metadata.as_ref(),
    );
    diff
}

/// `params` with unset fields filled from the live user, if any is filled.
/// A role LiteLLM reports that `userRole` cannot hold (set by other means)
/// is left out.
pub fn late_init(params: &UserParameters, live: &UserInfo) -> Option<UserParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let role = live
        .user_role
        .as_deref()
        .and_then(|r| serde_json::from_value::<UserRole>(r.into()).ok());
    let changed = [
        diff::late_init(&mut filled.user_email, live.user_email.clone()),
        diff::late_init(&mut filled.user_alias, live.user_alias.clone()),
        diff::late_init(&mut filled.user_role, role),
        diff::late_init(&mut filled.models, models),
        limits::late_init(&mut filled.limits, live.limits()),
        diff::late_init(&mut filled.metadata, user_metadata(live.metadata.as_ref())),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &UserInfo) -> UserObservation {
    UserObservation {
        user_id: Some(live.user_id.clone()),
        user_email: live.user_email.clone(),
        user_alias: live.user_alias.clone(),
        user_role: live.user_role.clone(),
        models: Some(live.models.clone()),
        spend: money_string(live.spend),
        max_budget: money_string(live.max_budget),
        budget_reset_at: live.budget_reset_at.clone(),
        created_at: live.created_at.clone(),
    }
}

/// `/user/*` for one reconciliation.
pub struct UserMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
}

impl UserMapping {
    /// Whether the user is the platform's (in the instance's namespace).
    fn platform(&self) -> bool {
        self.owner.namespace == self.instance_namespace
    }
}

impl ManagedKind for LiteLLMUser {
    type Parameters = UserParameters;
    type AtProvider = UserObservation;
    type External = Mapped<UserMapping>;
    const NOUN: &'static str = "user";
    /// Keys of its namespace that belong to it: LiteLLM would delete them
    /// with the user, under resources that still hold them.
    const JOINED_AS: Option<Joins> = Some(Joins::User);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &UserParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<UserObservation>> {
        self.status.as_ref()
    }
    fn connect(connection: Connection) -> Mapped<UserMapping> {
        Mapped(UserMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
        })
    }
}

/// An update (`/user/update` would create a missing user, with the marker
/// since every write sends it) is only sent after an observation found it.
impl Mapping<LiteLLMUser> for UserMapping {
    type Live = UserInfo;
    type Request = UserRequest;

    async fn read(&self, _: &LiteLLMUser, id: &str) -> Result<Option<UserInfo>, ExternalError> {
        Ok(self.client.user_info(id).await?)
    }
    fn owner(&self, _: &str, live: &UserInfo) -> Option<Owner> {
        Owner::from_metadata(live.metadata.as_ref())
    }
    fn drift(&self, mr: &LiteLLMUser, _: &str, live: &UserInfo) -> Diff {
        diff(&mr.spec.for_provider, live, self.platform(), &self.owner)
    }
    fn late_init(&self, params: &UserParameters, live: &UserInfo) -> Option<UserParameters> {
        late_init(params, live)
    }
    fn at_provider(&self, live: &UserInfo, _: Option<Fingerprints>) -> UserObservation {
        at_provider(live)
    }
    fn connection_details(&self, live: &UserInfo) -> BTreeMap<String, String> {
        BTreeMap::from([("userId".to_owned(), live.user_id.clone())])
    }

    /// Every write sends every field set, or is refused before it is sent.
    async fn request(
        &self,
        mr: &LiteLLMUser,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<UserRequest, ExternalError> {
        let params = &mr.spec.for_provider;
        if let Some(why) = tenant_refusal(params, &self.owner.namespace, &self.instance_namespace) {
            return Err(ExternalError::Invalid(why));
        }
        let request = request(id, params, self.platform(), &self.owner);
        Ok(match drift {
            None => request,
            Some(drift) => UserRequest {
                limits: limits::update_request(&params.limits, drift),
                ..request
            },
        })
    }
    async fn send_create(&self, request: &UserRequest) -> Result<Option<String>, ExternalError> {
        self.client.user_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &UserRequest) -> Result<(), ExternalError> {
        self.client.user_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.user_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;
    use crate::api::Limits;
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("alice")
    }

    fn marked(extra: &[(&str, Value)]) -> Option<Map<String, Value>> {
        me().marked(extra)
    }

    fn live() -> UserInfo {
        UserInfo {
            user_id: "ns.alice".into(),
            user_email: Some("alice@example.com".into()),
            user_alias: Some("Alice".into()),
            user_role: Some("internal_user".into()),
            models: vec!["gpt-4o".into(), "claude".into()],
            max_budget: Some(10.0),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            max_parallel_requests: Some(2),
            metadata: marked(&[("dept", Value::from("ml"))]),
            spend: Some(0.5),
            created_at: Some("2026-12-01T00:00:00Z".into()),
            ..UserInfo::default()
        }
    }

    fn all_set() -> UserParameters {
        UserParameters {
            user_email: Some("alice@example.com".into()),
            user_alias: Some("Alice".into()),
            user_role: Some(UserRole::InternalUser),
            models: Some(vec!["claude".into(), "gpt-4o".into()]),
            limits: Limits {
                max_budget: Some("10.00".into()),
                budget_duration: Some("30d".into()),
                tpm_limit: Some(1000),
                rpm_limit: Some(10),
                max_parallel_requests: Some(2),
            },
            metadata: Some([("dept".to_owned(), Value::from("ml"))].into()),
        }
    }

    #[test]
    fn diff_table() {
        let cases: Vec<(&str, UserParameters, UserInfo, bool, Vec<&str>)> = vec![
            (
                "nothing set on the platform's user: only the marker matters",
                UserParameters::default(),
                live(),
                true,
                vec![],
            ),
            ("equal in every set field", all_set(), live(), false, vec![]),
            (
                "every field drifted",
                UserParameters {
                    user_email: Some("bob@example.com".into()),
                    user_alias: Some("Bob".into()),
                    user_role: Some(UserRole::InternalUserViewer),
                    models: Some(vec!["gpt-4o".into()]),
                    limits: Limits {
                        max_budget: Some("10.01".into()),
                        budget_duration: Some("1d".into()),
                        tpm_limit: Some(1),
                        rpm_limit: Some(2),
                        max_parallel_requests: Some(3),
                    },
                    metadata: Some([("dept".to_owned(), Value::from("ops"))].into()),
                },
                live(),
                false,
                vec![
                    "userEmail",
                    "userAlias",
                    "userRole",
                    "models",
                    "maxBudget",
                    "budgetDuration",
                    "tpmLimit",
                    "rpmLimit",
                    "maxParallelRequests",
                    "metadata",
                ],
            ),
            (
                "a tenant's user made an admin in the UI is drift, its role unset",
                UserParameters {
                    models: Some(vec!["gpt-4o".into()]),
                    ..UserParameters::default()
                },
                UserInfo {
                    user_role: Some("proxy_admin".into()),
                    models: vec!["gpt-4o".into()],
                    ..live()
                },
                false,
                vec!["userRole"],
            ),
            (
                "the platform's user without a role takes LiteLLM's",
                UserParameters::default(),
                UserInfo {
                    user_role: Some("proxy_admin".into()),
                    ..live()
                },
                true,
                vec![],
            ),
            (
                "a missing marker is drift",
                UserParameters::default(),
                UserInfo {
                    metadata: None,
                    ..live()
                },
                true,
                vec!["metadata"],
            ),
        ];
        for (name, params, live, platform, want) in cases {
            assert_eq!(
                diff(&params, &live, platform, &me()).fields(),
                want.as_slice(),
                "{name}"
            );
        }
    }

    #[test]
    fn request_sends_set_fields_the_role_and_the_marker() {
        let params = UserParameters {
            user_email: Some("alice@example.com".into()),
            models: Some(vec!["gpt-4o".into()]),
            limits: Limits {
                max_budget: Some("2.50".into()),
                ..Limits::default()
            },
            metadata: Some([("dept".to_owned(), Value::from("ml"))].into()),
            ..UserParameters::default()
        };
        let tenant = serde_json::to_value(request("ns.alice", &params, false, &me())).unwrap();
        assert_eq!(tenant["user_id"], "ns.alice");
        assert_eq!(tenant["user_email"], "alice@example.com");
        assert_eq!(tenant["user_role"], "internal_user", "a tenant's default");
        assert_eq!(tenant["max_budget"], 2.5);
        assert_eq!(tenant["metadata"]["dept"], "ml");
        assert_eq!(tenant["metadata"][MARKER_KEY]["namespace"], "ns");
        assert!(tenant.get("user_alias").is_none() && tenant.get("tpm_limit").is_none());
        let platform = serde_json::to_value(request("ns.alice", &params, true, &me())).unwrap();
        assert!(platform.get("user_role").is_none(), "left to LiteLLM");
        let admin = UserParameters {
            user_role: Some(UserRole::ProxyAdminViewer),
            ..params
        };
        let platform = serde_json::to_value(request("ns.alice", &admin, true, &me())).unwrap();
        assert_eq!(platform["user_role"], "proxy_admin_viewer");
    }

    #[test]
    fn tenants_get_no_admin_role_and_no_model_of_others() {
        let models = Some(vec!["gpt-4o".into()]);
        let with = |role: Option<UserRole>, models: Option<Vec<String>>| UserParameters {
            user_role: role,
            models,
            ..UserParameters::default()
        };
        for role in [UserRole::ProxyAdmin, UserRole::ProxyAdminViewer] {
            let why = tenant_refusal(&with(Some(role), models.clone()), "tenant", "platform")
                .expect("refused");
            assert!(
                why.starts_with("forProvider.userRole: ") && why.contains(role.as_str()),
                "{why}"
            );
            assert_eq!(
                tenant_refusal(&with(Some(role), None), "platform", "platform"),
                None,
                "the platform's namespace may"
            );
        }
        for role in [
            None,
            Some(UserRole::InternalUser),
            Some(UserRole::InternalUserViewer),
        ] {
            assert_eq!(
                tenant_refusal(&with(role, models.clone()), "tenant", "platform"),
                None
            );
        }
        let cases = [
            None,
            Some(vec!["other/gpt-4o".to_owned()]),
            Some(vec!["*".to_owned()]),
            Some(vec!["all-proxy-models".to_owned()]),
        ];
        for models in cases {
            let why = tenant_refusal(&with(None, models.clone()), "tenant", "platform")
                .unwrap_or_else(|| panic!("{models:?} refused"));
            assert!(why.starts_with("forProvider.models: "), "{why}");
        }
        assert_eq!(
            tenant_refusal(
                &with(None, Some(vec!["tenant/mine".into()])),
                "tenant",
                "platform"
            ),
            None
        );
    }

    #[test]
    fn late_init_fills_unset_fields_but_no_role_it_cannot_hold() {
        let filled = late_init(&UserParameters::default(), &live()).unwrap();
        assert_eq!(filled.user_email.as_deref(), Some("alice@example.com"));
        assert_eq!(filled.user_role, Some(UserRole::InternalUser));
        assert_eq!(filled.limits.max_budget.as_deref(), Some("10"));
        assert_eq!(filled.models.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            filled.metadata.as_ref().map(|m| m.contains_key(MARKER_KEY)),
            Some(false)
        );
        assert_eq!(late_init(&filled, &live()), None);
        let other_role = UserInfo {
            user_id: "x".into(),
            user_role: Some("org_admin".into()),
            ..UserInfo::default()
        };
        assert_eq!(late_init(&UserParameters::default(), &other_role), None);
    }

    #[test]
    fn at_provider_reports_money_as_decimal_strings() {
        let observed = at_provider(&live());
        assert_eq!(observed.spend.as_deref(), Some("0.5"));
        assert_eq!(observed.max_budget.as_deref(), Some("10"));
        assert_eq!(observed.user_id.as_deref(), Some("ns.alice"));
        assert_eq!(observed.user_role.as_deref(), Some("internal_user"));
    }
}
