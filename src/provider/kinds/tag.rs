//! `LiteLLMTag` against `/tag/*` (see [`crate::litellm::tags`] for what
//! 1.108.7 does).
//!
//! **The platform's only.** A tag is a label any request may carry (request
//! metadata `tags`, the `x-litellm-tags` header, a key's or team's `tags`):
//! its budget is spent, and its limits applied, by every request that names
//! it, whoever sends it. A tenant's tag would be a budget and limits that
//! every other tenant's traffic could spend or trip, by naming it. So a
//! LiteLLMTag outside the LiteLLMInstance's namespace is refused
//! ([`TENANT_REFUSAL`], `Synced=False`) before anything is sent to LiteLLM,
//! reads included; its deletion lets go at once (nothing was ever made).
//!
//! **The name.** The tag's name in LiteLLM is what requests carry, so it
//! is the resource's own name (`metadata.name`) or the
//! `crossplane.io/external-name` annotation set before the first
//! reconciliation, not `<namespace>.<name>`: every LiteLLMTag lives in the
//! one namespace of the instance, where names are unique already. Chosen
//! before the create, it is what a lost create is found again by.
//!
//! **Ownership.** A tag has no metadata, and its name is the label itself,
//! so the marker goes into the one id a tag links: its budget row. The
//! provider creates that row itself, as `<cluster>/<namespace>/<name>:tag:<h>`
//! ([`marker_budget_id`]: the owner as [`ownership::owned_id`] writes it,
//! then `h`, 16 hex digits of the SHA-256 of the tag's name), before the
//! tag, and creates the tag linking it (`budget_id`); the limits are
//! written to that row. A tag whose budget row is another resource's marker
//! is refused (`may_manage`: "managed by another resource"), so two
//! LiteLLMTags never manage one tag. Kubernetes names hold no `:`, so the
//! id is never a LiteLLMBudget's.
//!
//! A tag without the marker (made in the UI, or its budget row changed
//! there) is adopted only deliberately: with the annotation [`ADOPT`]
//! (`"true"`), or read-only (`managementPolicies` without `Create`,
//! `Update` and `Delete`: an import changes nothing). Without either, the
//! resource is `Synced=False` saying so, and its deletion leaves the tag
//! alone. Other kinds adopt unmarked objects from the instance's namespace
//! silently; for tags every resource is in that namespace, so that rule
//! alone would let any new resource take over any tag of the proxy by
//! naming it. An adopted tag keeps its budget row, and so stays unmarked:
//! 1.108.7 cannot re-link a tag that has a budget row (`/tag/update` with
//! a `budget_id` answers 500, `BudgetNewRequest() got multiple values for
//! keyword argument 'budget_id'`), and deleting the row to free the link
//! could take it from keys or teams that share it. So the annotation stays
//! what lets the resource manage it, and of two resources of the namespace
//! that adopt the same tag and may write it, only the older one does
//! ([`ownership::first_adopter`]; the other is `Synced=False` naming it, both being
//! the platform's).
//!
//! **Drift** (description, models, limits, soft budget) is corrected each
//! poll by `/tag/update`, which clears `description` and `models` when left
//! out: both are sent every time, as `forProvider` has them or else as the
//! read found them. `budgetDuration` is sent only when it drifted (sending
//! it restarts the budget period).
//!
//! **Models.** `/tag/new` with `models` would append the tag to the
//! `litellm_params.tags` of every model named, writing into objects other
//! resources manage; the list is sent by a `/tag/update` after the create
//! instead, which records it on the tag only.
//!
//! **Deletion** deletes the tag, then its marker row, and is confirmed by
//! a read that finds no tag (a marker row left by an interrupted deletion
//! is deleted then). Keys' and teams' `tags` (Enterprise-only) and models'
//! `litellm_params.tags` name tags by their name; LiteLLM keeps those names
//! whatever becomes of the tag (a request naming a deleted tag is just not
//! limited by it), so the deletion does not wait for them.

use std::collections::BTreeMap;
use std::sync::Mutex;

use kube::{Resource, ResourceExt};
use sha2::{Digest, Sha256};

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::tag::{LiteLLMTag, TagObservation, TagParameters};
use crate::litellm::tags::{TagInfo, TagRequest};
use crate::litellm::{self, BudgetRequest, Limited, LiveLimits};

use crate::provider::kinds::limits;
use crate::provider::managed::contract::{Chosen, Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, money_f64, money_string, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping};
use crate::provider::managed::ownership::{self, adopts, writes, Owner};
use crate::provider::watch::cache::Kube;

/// The annotation that lets a LiteLLMTag adopt a tag the provider did not
/// make (value `"true"`).
pub use crate::provider::managed::ownership::ADOPT;

/// The refusal of a LiteLLMTag outside the instance's namespace.
pub const TENANT_REFUSAL: &str = "metadata.namespace: a LiteLLMTag (its forProvider, budget \
     and limits) is only accepted in the LiteLLMInstance's own namespace: a tag is a label any \
     request may carry (request metadata tags, the x-litellm-tags header), so its budget would \
     be spent, and its limits applied, by the traffic of every namespace that names it; tags \
     belong to the platform. Ask the platform team for the tag, and carry it on your requests";

/// The refusal of a tag the provider did not make, without [`ADOPT`].
pub const UNMARKED_REFUSAL: &str = "refusing to manage the LiteLLM tag named by \
     crossplane.io/external-name: it exists and was not created by this provider (made in \
     LiteLLM's UI, or its budget row was changed there); import it read-only \
     (managementPolicies: [Observe]), or set the annotation litellm.crossplane.io/adopt-existing: \
     \"true\" to take it over, or name another tag";

/// The longest tag name accepted.
pub const MAX_TAG_NAME_LENGTH: usize = 256;

/// Why `name` cannot be a tag's name, if it cannot: requests carry tags in
/// a comma-separated header, so a name with `,`, control characters or
/// surrounding blanks could not be named by them.
pub fn name_refusal(name: &str) -> Option<String> {
    let why = if name.is_empty() {
        "is empty"
    } else if name.chars().count() > MAX_TAG_NAME_LENGTH {
        "is longer than 256 characters"
    } else if name.contains(',') {
        "holds a ',' (the x-litellm-tags header separates tags with it)"
    } else if name.chars().any(char::is_control) {
        "holds a control character"
    } else if name.trim() != name {
        "begins or ends with blanks"
    } else {
        return None;
    };
    Some(format!(
        "metadata.annotations[crossplane.io/external-name]: the tag name {why}"
    ))
}

/// 16 hex digits of the SHA-256 of the tag's name.
fn name_hash(name: &str) -> String {
    Sha256::digest(name.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The id of the budget row that marks the tag `name` as `owner`'s.
pub fn marker_budget_id(owner: &Owner, name: &str) -> String {
    format!("{}:tag:{}", ownership::owned_id(owner), name_hash(name))
}

/// The owner the budget row `budget_id` marks the tag `name` for; `None`
/// for any other row (or none): the tag is unmarked.
pub fn owner_of_budget(budget_id: Option<&str>, name: &str) -> Option<Owner> {
    let (owner, hash) = budget_id?.rsplit_once(":tag:")?;
    if hash != name_hash(name) {
        return None;
    }
    ownership::owner_of_id(owner)
}

/// The live tag's limits (none without a budget row).
fn live_limits(live: &TagInfo) -> LiveLimits<'_> {
    live.litellm_budget_table
        .as_ref()
        .map(|b| b.limits())
        .unwrap_or_default()
}

fn live_soft_budget(live: &TagInfo) -> Option<f64> {
    live.litellm_budget_table.as_ref()?.soft_budget
}

/// The fields of `params` the live tag does not match.
pub fn diff(params: &TagParameters, live: &TagInfo) -> Diff {
    let mut diff = Diff::new();
    diff.field(
        "description",
        params.description.as_deref(),
        live.description.as_deref(),
    );
    diff.set("models", params.models.as_deref(), &live.models);
    limits::diff(&mut diff, &params.limits, live_limits(live));
    diff.money(
        "softBudget",
        params.soft_budget.as_deref(),
        live_soft_budget(live),
    );
    diff
}

/// `params` with unset fields filled from the live tag, if any is filled.
pub fn late_init(params: &TagParameters, live: &TagInfo) -> Option<TagParameters> {
    let mut filled = params.clone();
    let models = (!live.models.is_empty()).then(|| live.models.clone());
    let changed = [
        diff::late_init(&mut filled.description, live.description.clone()),
        diff::late_init(&mut filled.models, models),
        limits::late_init(&mut filled.limits, live_limits(live)),
        diff::late_init(
            &mut filled.soft_budget,
            money_string(live_soft_budget(live)),
        ),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(live: &TagInfo) -> TagObservation {
    TagObservation {
        name: Some(live.name.clone()),
        description: live.description.clone(),
        models: Some(live.models.clone()),
        budget_id: live.budget_id().map(str::to_owned),
        max_budget: money_string(live_limits(live).max_budget),
        budget_reset_at: live
            .litellm_budget_table
            .as_ref()
            .and_then(|b| b.budget_reset_at.clone()),
        created_at: live.created_at.clone(),
        updated_at: live.updated_at.clone(),
    }
}

/// What one write sends, in order: the marker budget row (created, or
/// updated when it is there already), the tag, then the tag's `models`
/// (after a create only).
#[derive(Debug, Clone, PartialEq)]
pub struct TagWrite {
    pub budget: Option<BudgetRequest>,
    pub tag: TagRequest,
    pub models: Option<TagRequest>,
}

/// The marker row with the limits of `params`.
fn marker_budget(id: String, params: &TagParameters) -> BudgetRequest {
    BudgetRequest {
        budget_id: id,
        limits: limits::request(&params.limits),
        soft_budget: params.soft_budget.as_deref().and_then(money_f64),
    }
}

/// The create: the marker row with the limits, the tag linking it
/// (without `models`, see the module documentation), then the models.
pub fn create(name: &str, params: &TagParameters, owner: &Owner) -> TagWrite {
    let marker = marker_budget_id(owner, name);
    let tag = TagRequest {
        name: name.to_owned(),
        description: params.description.clone(),
        budget_id: Some(marker.clone()),
        ..TagRequest::default()
    };
    let models = params
        .models
        .as_ref()
        .filter(|m| !m.is_empty())
        .map(|models| TagRequest {
            models: Some(models.clone()),
            ..tag.clone()
        });
    TagWrite {
        budget: Some(marker_budget(marker, params)),
        tag,
        models,
    }
}

/// The update of what drifted: `description` and `models` always (as
/// `forProvider` has them, else as `live` has them), the limits as
/// [`limits::update_request`] says (to the linked budget row).
pub fn update(
    name: &str,
    params: &TagParameters,
    live: Option<&TagInfo>,
    drift: &Diff,
) -> TagWrite {
    let description = params
        .description
        .clone()
        .or_else(|| live.and_then(|l| l.description.clone()));
    let models = params
        .models
        .clone()
        .or_else(|| live.map(|l| l.models.clone()));
    TagWrite {
        budget: None,
        tag: TagRequest {
            name: name.to_owned(),
            description,
            models: Some(models.unwrap_or_default()),
            limits: limits::update_request(&params.limits, drift),
            soft_budget: params.soft_budget.as_deref().and_then(money_f64),
            ..TagRequest::default()
        },
        models: None,
    }
}

/// `/tag/*` for one reconciliation.
pub struct TagMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    kube: Kube,
    /// The tag as this reconciliation read it, for the fields an update
    /// must send unchanged.
    live: Mutex<Option<TagInfo>>,
}

impl TagMapping {
    fn tenant(&self) -> bool {
        self.owner.namespace != self.instance_namespace
    }

    /// The older resource of the namespace that adopts the tag `name` too
    /// and may write it (see [`ownership::first_adopter`]), if there is one.
    async fn rival(&self, mr: &LiteLLMTag, name: &str) -> Result<Option<String>, ExternalError> {
        Ok(ownership::older_contender(&self.kube, mr, name, adopts).await?)
    }

    /// Deletes the marker row of the tag `name`; one already gone is
    /// success.
    async fn delete_marker(&self, name: &str) -> Result<(), ExternalError> {
        self.client
            .budget_delete(&marker_budget_id(&self.owner, name))
            .await?;
        Ok(())
    }

    /// Creates the marker row, or, when it is there already (a write whose
    /// answer was lost), writes the limits to it.
    async fn write_marker(&self, budget: &BudgetRequest) -> Result<(), ExternalError> {
        match self.client.budget_new(budget).await {
            Err(litellm::Error::Conflict { .. }) => {
                self.client.budget_update(budget).await?;
                Ok(())
            }
            other => Ok(other.map(drop)?),
        }
    }
}

impl ManagedKind for LiteLLMTag {
    type Parameters = TagParameters;
    type AtProvider = TagObservation;
    type External = Mapped<TagMapping>;
    const NOUN: &'static str = "tag";

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &TagParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<TagObservation>> {
        self.status.as_ref()
    }
    /// The tag's name is the resource's: see the module documentation.
    async fn choose_id(&self, _: &Connection) -> Result<Chosen, ExternalError> {
        Ok(self.name_any().into())
    }
    fn connect(connection: Connection) -> Mapped<TagMapping> {
        Mapped(TagMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            kube: connection.kube,
            live: Mutex::new(None),
        })
    }
}

impl Mapping<LiteLLMTag> for TagMapping {
    type Live = TagInfo;
    type Request = TagWrite;

    /// Refuses a tenant's tag and an unmarked tag not deliberately adopted
    /// (see the module documentation) before anything is sent; while the
    /// resource is being deleted, those read as absent, so it lets go
    /// without touching LiteLLM's tag.
    async fn read(&self, mr: &LiteLLMTag, id: &str) -> Result<Option<TagInfo>, ExternalError> {
        let deleting = mr.meta().deletion_timestamp.is_some();
        if self.tenant() {
            return match deleting {
                true => Ok(None),
                false => Err(ExternalError::Invalid(TENANT_REFUSAL.to_owned())),
            };
        }
        if let Some(why) = name_refusal(id) {
            return match deleting {
                true => Ok(None),
                false => Err(ExternalError::Invalid(why)),
            };
        }
        let live = self.client.tag_info(id).await?;
        let unmarked = live
            .as_ref()
            .is_some_and(|l| owner_of_budget(l.budget_id(), id).is_none());
        let writer = writes(&mr.managed().management_policies);
        let refusal = if !unmarked || !writer {
            None
        } else if !adopts(mr) {
            Some(UNMARKED_REFUSAL.to_owned())
        } else {
            self.rival(mr, id).await?.map(|first| {
                format!(
                    "refusing to manage the LiteLLM tag named by crossplane.io/external-name: \
                     the LiteLLMTag {first:?} of this namespace adopted it first"
                )
            })
        };
        if let Some(why) = refusal {
            if !deleting {
                return Err(ExternalError::Invalid(why));
            }
            // Not this resource's to delete: it lets go, leaving the tag
            // (and deleting only a marker row it may have left).
            self.delete_marker(id).await?;
            return Ok(None);
        }
        if deleting && live.is_none() {
            // Nothing of this resource's is left but, perhaps, the marker
            // row of an interrupted deletion or create.
            self.delete_marker(id).await?;
            return Ok(None);
        }
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = live.clone();
        Ok(live)
    }
    fn owner(&self, id: &str, live: &TagInfo) -> Option<Owner> {
        owner_of_budget(live.budget_id(), id)
    }
    fn drift(&self, mr: &LiteLLMTag, _: &str, live: &TagInfo) -> Diff {
        diff(&mr.spec.for_provider, live)
    }
    fn late_init(&self, params: &TagParameters, live: &TagInfo) -> Option<TagParameters> {
        late_init(params, live)
    }
    fn at_provider(&self, live: &TagInfo, _: Option<Fingerprints>) -> TagObservation {
        at_provider(live)
    }
    fn connection_details(&self, live: &TagInfo) -> BTreeMap<String, String> {
        BTreeMap::from([("tag".to_owned(), live.name.clone())])
    }

    async fn request(
        &self,
        mr: &LiteLLMTag,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<TagWrite, ExternalError> {
        if self.tenant() {
            return Err(ExternalError::Invalid(TENANT_REFUSAL.to_owned()));
        }
        if let Some(why) = name_refusal(id) {
            return Err(ExternalError::Invalid(why));
        }
        let params = &mr.spec.for_provider;
        Ok(match drift {
            None => create(id, params, &self.owner),
            Some(drift) => {
                let live = self.live.lock().unwrap_or_else(|p| p.into_inner()).clone();
                update(id, params, live.as_ref(), drift)
            }
        })
    }
    async fn send_create(&self, write: &TagWrite) -> Result<Option<String>, ExternalError> {
        if let Some(budget) = &write.budget {
            self.write_marker(budget).await?;
        }
        self.client.tag_new(&write.tag).await?;
        if let Some(models) = &write.models {
            self.client.tag_update(models).await?;
        }
        Ok(None)
    }
    async fn send_update(&self, write: &TagWrite) -> Result<(), ExternalError> {
        if let Some(budget) = &write.budget {
            self.write_marker(budget).await?;
        }
        self.client.tag_update(&write.tag).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.tag_delete(id).await?;
        self.delete_marker(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Limits;
    use crate::litellm::BudgetInfo;

    fn me() -> Owner {
        Owner::of_test("gold")
    }

    fn live(budget_id: &str) -> TagInfo {
        TagInfo {
            name: "gold".into(),
            description: Some("premium traffic".into()),
            models: vec!["gpt-4o".into()],
            litellm_budget_table: Some(BudgetInfo {
                budget_id: budget_id.into(),
                max_budget: Some(100.0),
                soft_budget: Some(80.0),
                budget_duration: Some("30d".into()),
                rpm_limit: Some(10),
                ..BudgetInfo::default()
            }),
            ..TagInfo::default()
        }
    }

    fn full() -> TagParameters {
        TagParameters {
            description: Some("premium traffic".into()),
            models: Some(vec!["gpt-4o".into()]),
            limits: Limits {
                max_budget: Some("100.00".into()),
                budget_duration: Some("30d".into()),
                rpm_limit: Some(10),
                ..Limits::default()
            },
            soft_budget: Some("80".into()),
        }
    }

    #[test]
    fn the_marker_row_names_the_owner_and_the_tag() {
        let id = marker_budget_id(&me(), "gold");
        assert!(id.starts_with("c/ns/gold:tag:"), "{id}");
        assert!(owner_of_budget(Some(&id), "gold")
            .unwrap()
            .same_resource(&me()));
        // Another tag's marker, any other row, or none: unmarked.
        assert_eq!(owner_of_budget(Some(&id), "silver"), None);
        for other in ["c/ns/gold", "3f1c-uuid", "", "c/ns/gold:tag:zz"] {
            assert_eq!(owner_of_budget(Some(other), "gold"), None, "{other}");
        }
        assert_eq!(owner_of_budget(None, "gold"), None);
        // Names with '/', ':' and the marker's own separator.
        for name in ["team/a", "x:tag:y", "ümlaut tag"] {
            let id = marker_budget_id(&me(), name);
            assert!(owner_of_budget(Some(&id), name)
                .unwrap()
                .same_resource(&me()));
        }
        // Never a LiteLLMBudget's id: Kubernetes names hold no ':'.
        let budget_owner = ownership::owner_of_id(&id).unwrap();
        assert!(!budget_owner.same_resource(&me()));
        assert!(budget_owner.name.contains(':'));
    }

    #[test]
    fn tag_names_requests_can_carry() {
        assert_eq!(name_refusal("gold"), None);
        assert_eq!(name_refusal("team a/gold:1"), None);
        for bad in ["", "a,b", " gold", "gold\n", "a\u{7}b", &"x".repeat(257)] {
            let why = name_refusal(bad).unwrap();
            assert!(
                why.starts_with("metadata.annotations[crossplane.io/external-name]: "),
                "{why}"
            );
        }
    }

    #[test]
    fn diff_table() {
        let marked = marker_budget_id(&me(), "gold");
        let cases: Vec<(TagParameters, Vec<&str>)> = vec![
            (TagParameters::default(), vec![]),
            (full(), vec![]),
            (
                TagParameters {
                    description: Some("other".into()),
                    models: Some(vec!["claude".into()]),
                    limits: Limits {
                        max_budget: Some("100.01".into()),
                        budget_duration: Some("1d".into()),
                        tpm_limit: Some(5),
                        rpm_limit: Some(11),
                        max_parallel_requests: Some(2),
                    },
                    soft_budget: Some("81".into()),
                },
                vec![
                    "description",
                    "models",
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
                diff(&params, &live(&marked)).fields(),
                want.as_slice(),
                "{params:?}"
            );
        }
        // A tag without a budget row has no limits.
        let bare = TagInfo {
            litellm_budget_table: None,
            ..live(&marked)
        };
        assert_eq!(
            diff(&full(), &bare).fields(),
            ["maxBudget", "budgetDuration", "rpmLimit", "softBudget"]
        );
    }

    #[test]
    fn create_links_the_marker_row_and_sends_models_after() {
        let write = create("gold", &full(), &me());
        let marker = marker_budget_id(&me(), "gold");
        let budget = serde_json::to_value(write.budget.as_ref().unwrap()).unwrap();
        assert_eq!(
            budget,
            serde_json::json!({"budget_id": marker, "max_budget": 100.0,
                               "budget_duration": "30d", "rpm_limit": 10, "soft_budget": 80.0})
        );
        let tag = serde_json::to_value(&write.tag).unwrap();
        assert_eq!(
            tag,
            serde_json::json!({"name": "gold", "description": "premium traffic",
                               "budget_id": marker}),
            "no models on /tag/new: LiteLLM would write the tag into those models"
        );
        let models = serde_json::to_value(write.models.as_ref().unwrap()).unwrap();
        assert_eq!(models["models"], serde_json::json!(["gpt-4o"]));
        assert_eq!(models["description"], "premium traffic");
        let bare = create("gold", &TagParameters::default(), &me());
        assert_eq!(bare.models, None);
        assert_eq!(
            serde_json::to_value(bare.budget.unwrap()).unwrap(),
            serde_json::json!({"budget_id": marker})
        );
    }

    #[test]
    fn an_update_sends_description_and_models_always_and_the_duration_only_when_it_drifted() {
        let marker = marker_budget_id(&me(), "gold");
        let live = live(&marker);
        let params = TagParameters {
            limits: Limits {
                max_budget: Some("5".into()),
                budget_duration: Some("30d".into()),
                ..Limits::default()
            },
            ..TagParameters::default()
        };
        let mut drift = Diff::new();
        drift.mark(limits::MAX_BUDGET);
        let write = update("gold", &params, Some(&live), &drift);
        assert_eq!(write.budget, None);
        let body = serde_json::to_value(&write.tag).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"name": "gold", "description": "premium traffic",
                               "models": ["gpt-4o"], "max_budget": 5.0}),
            "unset description and models kept as read"
        );
        drift.mark(limits::BUDGET_DURATION);
        let write = update("gold", &full(), Some(&live), &drift);
        assert_eq!(write.tag.limits.budget_duration.as_deref(), Some("30d"));
        // Nothing read (cannot happen after an observation): cleared lists
        // are sent as empty rather than left out.
        let write = update("gold", &params, None, &drift);
        assert_eq!(write.tag.models, Some(vec![]));
    }

    #[test]
    fn late_init_and_observation() {
        let marker = marker_budget_id(&me(), "gold");
        let filled = late_init(&TagParameters::default(), &live(&marker)).unwrap();
        assert_eq!(filled, full().with_budget("100"));
        assert_eq!(late_init(&filled, &live(&marker)), None);
        let observed = at_provider(&live(&marker));
        assert_eq!(observed.max_budget.as_deref(), Some("100"));
        assert_eq!(observed.budget_id.as_deref(), Some(marker.as_str()));
        assert_eq!(observed.name.as_deref(), Some("gold"));
    }

    impl TagParameters {
        fn with_budget(mut self, budget: &str) -> Self {
            self.limits.max_budget = Some(budget.into());
            self
        }
    }

    #[test]
    fn the_tenant_refusal_names_the_field_and_no_one() {
        assert!(TENANT_REFUSAL.starts_with("metadata.namespace: "));
        assert!(TENANT_REFUSAL.contains("LiteLLMInstance's own namespace"));
    }
}
