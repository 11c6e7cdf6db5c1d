//! `LiteLLMFallback` against `/fallback` and `/router/settings` (see
//! [`crate::litellm::fallbacks`] for what 1.108.7 does).
//!
//! **The platform's only.** A rule is router-wide: every request for its
//! model, from every key, team and namespace, falls back by it. A tenant's
//! rule would send other tenants' traffic to models it chose (and spend
//! their budgets there), or take the fallbacks the platform set from them.
//! So a LiteLLMFallback outside the LiteLLMInstance's namespace is refused
//! ([`TENANT_REFUSAL`], `Synced=False`) before anything is sent to LiteLLM,
//! reads included; its deletion lets go at once (nothing was ever made).
//!
//! **The name.** A rule is named by its model and its type; the external
//! name is `<model>:<type>` with LiteLLM's type name (`gpt-4o:general`,
//! [`external_name`]), chosen from `forProvider` before the first write
//! (the type holds no `:`, so the name splits at its last `:` whatever the
//! model name holds). `POST /fallback` creates or replaces, so a create
//! whose answer was lost never makes a second rule. `forProvider.model` (or
//! the public name of `modelRef`) and `forProvider.type` must agree with
//! the external name; a resource re-pointed at another rule changes both
//! (the rule it leaves stays in LiteLLM, as every kind leaves the object of
//! a former external name).
//!
//! **Ownership.** LiteLLM keeps nothing beside a rule but its fallback
//! models: no metadata for a marker, no id to carry an owner. So the
//! provider remembers which rule a resource wrote in the resource's status
//! (`status.atProvider.ownedRule`): the rule it created (recorded from the
//! create's answer), or one it took over with the annotation
//! [`ownership::ADOPT`]. A rule found without it, made in LiteLLM's UI or
//! by another tool, is imported only read-only (`managementPolicies`
//! without `Create`, `Update`, `Delete`), or taken over with the
//! annotation; otherwise the resource is `Synced=False`
//! ([`UNMARKED_REFUSAL`]) and its deletion leaves the rule alone. Of two
//! resources of the namespace that hold or adopt the same rule and may
//! write it, only the older one does ([`ownership::older_contender`]).
//! Status is the platform's own here: no tenant can write a LiteLLMFallback
//! (or its status) in the instance's namespace. A status lost (a restore
//! without it, a create whose answer was lost) fails closed: the rule is
//! refused as unmarked until the annotation adopts it again.
//!
//! **Config file.** A list the proxy's config file sets
//! (`router_settings.fallbacks` ...) belongs to the file: LiteLLM refuses
//! every write to it (400). A resource that would write one is refused
//! before the write, naming `forProvider.type` ([`config_refusal`]); an
//! import reads it; a deletion lets go of it.
//!
//! **Drift** (the fallback models, in order) is corrected each poll by
//! `POST /fallback`. Writes are serialized within the provider
//! ([`WRITES`]): LiteLLM rewrites the whole `router_settings` row on every
//! write without a lock, and two at once can lose one. A write lost to
//! someone else's concurrent write is drift, written again next poll.
//!
//! **Deletion** is `DELETE /fallback/{model}`, confirmed by reading the
//! list again. A LiteLLMModel named by `modelRef` waits for this
//! resource's deletion ([`Joins::Model`]); nothing waits for a rule
//! (requests name models, never rules).

use std::collections::BTreeMap;
use std::sync::Mutex;

use kube::{Resource, ResourceExt};

use crate::api::common::{ManagedFields, ManagedStatus, EXTERNAL_NAME};
use crate::api::fallback::{
    FallbackKind, FallbackObservation, FallbackParameters, LiteLLMFallback,
};
use crate::api::LiteLLMModel;
use crate::litellm::fallbacks::{FallbackRequest, FallbackRule, FallbackType};
use crate::litellm::{self, Client};
use crate::provider::managed::contract::{
    Chosen, Connection, Created, Creation, External, ExternalError, ManagedKind, Observation,
};
use crate::provider::managed::diff::{self, Diff};
use crate::provider::managed::ownership::{self, adopts, writes, Owner};
use crate::provider::watch::cache::Kube;
use crate::provider::watch::joins::{join, Join, Joins};

/// The refusal of a LiteLLMFallback outside the instance's namespace.
pub const TENANT_REFUSAL: &str = "metadata.namespace: a LiteLLMFallback is only accepted in \
     the LiteLLMInstance's own namespace: a fallback rule is router-wide, so every request for \
     its model, from every namespace, would fall back to the models it names; fallbacks belong \
     to the platform. Ask the platform team for the fallback";

/// The refusal of a rule the provider did not write, without the
/// annotation [`ownership::ADOPT`].
pub const UNMARKED_REFUSAL: &str = "refusing to manage the LiteLLM fallback rule named by \
     crossplane.io/external-name: it exists and was not written by this resource (made in \
     LiteLLM's UI, or by another tool); import it read-only (managementPolicies: [Observe]), \
     or set the annotation litellm.crossplane.io/adopt-existing: \"true\" to take it over";

/// `forProvider.fallbacks`.
const FALLBACKS: &str = "fallbacks";
/// `forProvider.modelRef`.
const MODEL_REF: &str = "modelRef";

/// Every write to the router's fallbacks by this provider, one at a time
/// (see the module documentation).
static WRITES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// LiteLLM's type of `kind`.
pub fn fallback_type(kind: FallbackKind) -> FallbackType {
    match kind {
        FallbackKind::General => FallbackType::General,
        FallbackKind::ContextWindow => FallbackType::ContextWindow,
        FallbackKind::ContentPolicy => FallbackType::ContentPolicy,
    }
}

/// The external name of the rule of `model` of type `kind`.
pub fn external_name(model: &str, kind: FallbackType) -> String {
    format!("{model}:{}", kind.as_str())
}

/// The model and type an external name names; `Err` names the annotation.
pub fn parse_external_name(id: &str) -> Result<(String, FallbackType), String> {
    let parsed = id
        .rsplit_once(':')
        .and_then(|(model, kind)| Some((model.to_owned(), FallbackType::parse(kind)?)));
    match parsed {
        Some((model, kind)) if !model.is_empty() => Ok((model, kind)),
        _ => Err(format!(
            "metadata.annotations[{EXTERNAL_NAME}]: {id:?} does not name a fallback rule: \
             write <model>:<type>, with type general, context_window or content_policy"
        )),
    }
}

/// Why `model` cannot have a rule managed here: `field` names where it
/// came from.
pub fn model_refusal(field: &str, model: &str) -> Option<String> {
    let why = if model.trim().is_empty() {
        "is empty"
    } else if model.contains('/') {
        "holds '/': LiteLLM 1.108.7 takes the model of DELETE /fallback/{model} as one path \
         segment, so the rule of such a model could be written but never deleted"
    } else if model.trim() != model || model.chars().any(char::is_control) {
        "begins or ends with blanks, or holds a control character"
    } else {
        return None;
    };
    Some(format!("{field}: the model name {model:?} {why}"))
}

/// Why `forProvider` cannot be written as it stands (the model being
/// `model`, from `model_field`); `write` when the policies would write it.
pub fn params_refusal(
    params: &FallbackParameters,
    model_field: &str,
    model: &str,
    write: bool,
) -> Option<String> {
    if params.model.is_some() == params.model_ref.is_some() {
        return Some(
            "forProvider.model, forProvider.modelRef: set exactly one of them (the model whose \
             requests fall back)"
                .to_owned(),
        );
    }
    if let Some(why) = model_refusal(model_field, model) {
        return Some(why);
    }
    let Some(fallbacks) = &params.fallbacks else {
        return write.then(|| {
            "forProvider.fallbacks: required to write the rule (only an import, \
             managementPolicies: [Observe], may leave it out)"
                .to_owned()
        });
    };
    if fallbacks.is_empty() {
        return Some("forProvider.fallbacks: name at least one model".to_owned());
    }
    if fallbacks.iter().any(|f| f == model) {
        return Some(format!(
            "forProvider.fallbacks: {model:?} cannot be its own fallback"
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = fallbacks.iter().find(|f| !seen.insert(f.as_str())) {
        return Some(format!("forProvider.fallbacks: {twice:?} is named twice"));
    }
    None
}

/// Why the external name `id` (naming the rule of `named`) is not the rule
/// `forProvider` asks for (`model` of type `kind`).
pub fn mismatch(
    id: &str,
    named: &(String, FallbackType),
    model_field: &str,
    model: &str,
    kind: FallbackType,
) -> Option<String> {
    let field = if named.0 != model {
        model_field
    } else if named.1 != kind {
        "forProvider.type"
    } else {
        return None;
    };
    Some(format!(
        "{field}: this resource's rule is {id:?} (crossplane.io/external-name), not {:?}; to \
         move the resource to another rule, set the annotation to {:?} too (the former rule \
         is left in LiteLLM), or make a new resource",
        external_name(model, kind),
        external_name(model, kind),
    ))
}

/// Why the rules of `kind` cannot be written: the config file sets them.
pub fn config_refusal(kind: FallbackType) -> String {
    format!(
        "forProvider.type: the proxy's config file sets router_settings.{} (every {} fallback \
         rule of the proxy), and LiteLLM refuses to change it through its API; import the rule \
         read-only (managementPolicies: [Observe]), or move the list out of the config file",
        kind.list(),
        kind.as_str(),
    )
}

/// The fallback models of `params` the live rule does not have (in order).
pub fn diff(params: &FallbackParameters, live: &[String]) -> Diff {
    let mut diff = Diff::new();
    diff.field(FALLBACKS, params.fallbacks.as_deref(), Some(live));
    diff
}

/// `params` with the fallback models filled from the live rule, if unset.
pub fn late_init(params: &FallbackParameters, live: &[String]) -> Option<FallbackParameters> {
    let mut filled = params.clone();
    diff::late_init(&mut filled.fallbacks, Some(live.to_vec())).then_some(filled)
}

/// The body of the create or update.
pub fn request(model: &str, kind: FallbackType, params: &FallbackParameters) -> FallbackRequest {
    FallbackRequest {
        model: model.to_owned(),
        fallback_models: params.fallbacks.clone().unwrap_or_default(),
        fallback_type: kind,
    }
}

pub fn at_provider(rule: &FallbackRule, owned: Option<&str>) -> FallbackObservation {
    FallbackObservation {
        model: Some(rule.model.clone()),
        fallback_type: Some(rule.fallback_type.as_str().to_owned()),
        fallbacks: Some(rule.fallback_models.clone()),
        owned_rule: owned.map(str::to_owned),
    }
}

/// The rule the status says this resource holds.
fn owned_rule(mr: &LiteLLMFallback) -> Option<&str> {
    mr.status
        .as_ref()?
        .at_provider
        .as_ref()?
        .owned_rule
        .as_deref()
}

/// The rule of `forProvider` and the field its model came from.
struct Desired {
    model: String,
    field: &'static str,
    kind: FallbackType,
}

/// `/fallback` for one reconciliation.
pub struct FallbackExternal {
    client: Client,
    owner: Owner,
    instance_namespace: String,
    kube: Kube,
    /// Whether the config file sets the list, as this reconciliation read
    /// it.
    config_owned: Mutex<bool>,
}

impl FallbackExternal {
    fn tenant(&self) -> bool {
        self.owner.namespace != self.instance_namespace
    }

    /// The model and type `forProvider` asks for (`modelRef`: the public
    /// name of the LiteLLMModel, once Ready).
    async fn desired(&self, mr: &LiteLLMFallback) -> Result<Desired, ExternalError> {
        let params = &mr.spec.for_provider;
        let kind = fallback_type(params.fallback_type);
        if let Some(model) = &params.model {
            return Ok(Desired {
                model: model.clone(),
                field: "forProvider.model",
                kind,
            });
        }
        let Some(reference) = &params.model_ref else {
            return Ok(Desired {
                model: String::new(),
                field: "forProvider.model",
                kind,
            });
        };
        let namespace = mr.namespace().unwrap_or_default();
        let model = self
            .kube
            .get::<LiteLLMModel>(&namespace, &reference.name)
            .await?;
        let public = model.as_deref().and_then(|m| {
            m.condition_is_true(crate::api::conditions::READY)
                .then(|| {
                    m.status
                        .as_ref()?
                        .at_provider
                        .as_ref()?
                        .public_model_name
                        .clone()
                })
                .flatten()
        });
        let Some(model) = public else {
            return Err(ExternalError::Invalid(format!(
                "forProvider.{MODEL_REF}: the LiteLLMModel {:?} of this namespace is missing or \
                 not Ready yet",
                reference.name
            )));
        };
        Ok(Desired {
            model,
            field: "forProvider.modelRef",
            kind,
        })
    }

    /// The older resource that holds or adopts the rule `id` too, if any.
    async fn rival(&self, mr: &LiteLLMFallback, id: &str) -> Result<Option<String>, ExternalError> {
        Ok(ownership::older_contender(&self.kube, mr, id, |other| {
            adopts(other) || owned_rule(other) == Some(id)
        })
        .await?)
    }

    fn set_config_owned(&self, owned: bool) {
        *self.config_owned.lock().unwrap_or_else(|p| p.into_inner()) = owned;
    }

    fn config_owned(&self) -> bool {
        *self.config_owned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the rule `forProvider` asks for under `id`.
    async fn write(&self, mr: &LiteLLMFallback, id: &str) -> Result<FallbackRule, ExternalError> {
        if self.tenant() {
            return Err(ExternalError::Invalid(TENANT_REFUSAL.to_owned()));
        }
        let (model, kind) = parse_external_name(id).map_err(ExternalError::Invalid)?;
        if self.config_owned() {
            return Err(ExternalError::Invalid(config_refusal(kind)));
        }
        let desired = self.desired(mr).await?;
        let params = &mr.spec.for_provider;
        if let Some(why) = params_refusal(params, desired.field, &desired.model, true) {
            return Err(ExternalError::Invalid(why));
        }
        let body = request(&model, kind, params);
        let _one_at_a_time = WRITES.lock().await;
        let written = match self.client.fallback_set(&body).await {
            Err(litellm::Error::NotFound { .. }) => {
                return Err(ExternalError::Invalid(format!(
                    "{}: the proxy has no model named {model:?} (POST /fallback answered 404)",
                    desired.field
                )))
            }
            other => other?,
        };
        Ok(FallbackRule {
            model: written.model,
            fallback_type: written.fallback_type,
            fallback_models: written.fallback_models,
        })
    }
}

impl External<LiteLLMFallback> for FallbackExternal {
    /// Refuses a tenant's rule, a rule not this resource's, and
    /// `forProvider` that does not agree with the external name, before
    /// anything is sent; while the resource is being deleted those read
    /// as absent, so it lets go without touching LiteLLM's rule.
    async fn observe(
        &self,
        mr: &LiteLLMFallback,
        id: &str,
    ) -> Result<Observation<LiteLLMFallback>, ExternalError> {
        let deleting = mr.meta().deletion_timestamp.is_some();
        let refuse = |why: String| match deleting {
            true => Ok(Observation::absent()),
            false => Err(ExternalError::Invalid(why)),
        };
        if self.tenant() {
            return refuse(TENANT_REFUSAL.to_owned());
        }
        let named = match parse_external_name(id) {
            Ok(named) => named,
            Err(why) => return refuse(why),
        };
        let policies = &mr.managed().management_policies;
        let writer = writes(policies);
        if !deleting {
            let desired = self.desired(mr).await?;
            let params = &mr.spec.for_provider;
            let why = params_refusal(params, desired.field, &desired.model, writer)
                .or_else(|| mismatch(id, &named, desired.field, &desired.model, desired.kind));
            if let Some(why) = why {
                return Err(ExternalError::Invalid(why));
            }
        }
        let (model, kind) = &named;
        if let Some(why) = model_refusal(&format!("metadata.annotations[{EXTERNAL_NAME}]"), model) {
            return refuse(why);
        }
        let list = self.client.fallback_list(*kind).await?;
        self.set_config_owned(list.config_owned());
        if deleting && list.config_owned() {
            // The file's rules are not this resource's to delete.
            return Ok(Observation::absent());
        }
        let Some(rule) = list.rule(model, *kind) else {
            return Ok(Observation::absent());
        };
        let refusal = if !writer {
            None
        } else if list.config_owned() {
            Some(config_refusal(*kind))
        } else if owned_rule(mr) != Some(id) && !adopts(mr) {
            Some(UNMARKED_REFUSAL.to_owned())
        } else {
            self.rival(mr, id).await?.map(|first| {
                format!(
                    "refusing to manage the LiteLLM fallback rule named by \
                     crossplane.io/external-name: the LiteLLMFallback {first:?} of this \
                     namespace holds it"
                )
            })
        };
        if let Some(why) = refusal {
            return refuse(why);
        }
        let params = &mr.spec.for_provider;
        Ok(Observation {
            probe: None,
            exists: true,
            owner: writer.then(|| self.owner.clone()),
            drift: diff(params, &rule.fallback_models),
            late_init: late_init(params, &rule.fallback_models),
            at_provider: Some(at_provider(&rule, writer.then_some(id))),
            connection_details: BTreeMap::new(),
        })
    }

    /// The answer of `POST /fallback` is the rule as written: recorded as
    /// this resource's (`ownedRule`) from it.
    async fn create(
        &self,
        mr: &LiteLLMFallback,
        id: &str,
    ) -> Result<Created<LiteLLMFallback>, ExternalError> {
        let written = self.write(mr, id).await?;
        let params = &mr.spec.for_provider;
        Ok(Created {
            creation: Creation::default(),
            answer: Some(Observation {
                probe: None,
                exists: true,
                owner: Some(self.owner.clone()),
                drift: diff(params, &written.fallback_models),
                late_init: None,
                at_provider: Some(at_provider(&written, Some(id))),
                connection_details: BTreeMap::new(),
            }),
        })
    }

    async fn update(&self, mr: &LiteLLMFallback, id: &str, _: &Diff) -> Result<(), ExternalError> {
        self.write(mr, id).await.map(drop)
    }

    /// Deletes the rule, then reads the list again: a rule put back by a
    /// concurrent write is deleted again on the next attempt.
    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        let (model, kind) = parse_external_name(id).map_err(ExternalError::Invalid)?;
        let _one_at_a_time = WRITES.lock().await;
        self.client.fallback_delete(&model, kind).await?;
        if self.client.fallback_get(&model, kind).await?.is_some() {
            return Err(ExternalError::LiteLLM(litellm::Error::Retryable {
                op: "DELETE /fallback/{model}",
                detail: "the rule is still there after its deletion (a concurrent write to \
                         router_settings put it back); deleting it again"
                    .to_owned(),
            }));
        }
        Ok(())
    }
}

impl ManagedKind for LiteLLMFallback {
    type Parameters = FallbackParameters;
    type AtProvider = FallbackObservation;
    type External = FallbackExternal;
    const NOUN: &'static str = "fallback";
    const JOINS: &'static [Joins] = &[Joins::Model];

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &FallbackParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<FallbackObservation>> {
        self.status.as_ref()
    }
    /// The LiteLLMModel of `modelRef`: its deletion waits for this rule.
    fn joins(&self) -> Vec<Join> {
        join(
            Joins::Model,
            self.spec.for_provider.model_ref.as_ref(),
            None,
        )
        .into_iter()
        .collect()
    }
    /// `<model>:<type>` of `forProvider` (see the module documentation); a
    /// tenant's resource, refused before any request, names its own.
    async fn choose_id(&self, connection: &Connection) -> Result<Chosen, ExternalError> {
        let params = &self.spec.for_provider;
        let kind = fallback_type(params.fallback_type);
        if connection.owner.namespace != connection.instance_namespace {
            return Ok(self.name_any().into());
        }
        let external = FallbackExternal {
            client: connection.litellm.clone(),
            owner: connection.owner.clone(),
            instance_namespace: connection.instance_namespace.clone(),
            kube: connection.kube.clone(),
            config_owned: Mutex::new(false),
        };
        let desired = external.desired(self).await?;
        if let Some(why) = params_refusal(params, desired.field, &desired.model, false) {
            return Err(ExternalError::Invalid(why));
        }
        Ok(external_name(&desired.model, kind).into())
    }
    fn connect(connection: Connection) -> FallbackExternal {
        FallbackExternal {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            kube: connection.kube,
            config_owned: Mutex::new(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::LocalRef;

    fn params(model: Option<&str>, fallbacks: Option<&[&str]>) -> FallbackParameters {
        FallbackParameters {
            model: model.map(str::to_owned),
            model_ref: None,
            fallback_type: FallbackKind::General,
            fallbacks: fallbacks.map(|f| f.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn the_external_name_is_the_model_and_the_type() {
        for (model, kind) in [
            ("gpt-4o", FallbackType::General),
            ("llama3:8b", FallbackType::ContextWindow),
            ("x:general", FallbackType::ContentPolicy),
        ] {
            let id = external_name(model, kind);
            assert_eq!(parse_external_name(&id), Ok((model.to_owned(), kind)));
        }
        assert_eq!(
            external_name("gpt-4o", FallbackType::General),
            "gpt-4o:general"
        );
        for bad in ["gpt-4o", "gpt-4o:contextWindow", ":general", "", "gpt:"] {
            let why = parse_external_name(bad).unwrap_err();
            assert!(
                why.starts_with("metadata.annotations[crossplane.io/external-name]: "),
                "{why}"
            );
        }
    }

    #[test]
    fn model_names_the_routes_can_delete() {
        assert_eq!(model_refusal("forProvider.model", "gpt-4o"), None);
        assert_eq!(model_refusal("forProvider.model", "llama3:8b"), None);
        for bad in ["", " ", "openai/gpt-4o", "team-a/mine", " gpt", "a\nb"] {
            let why = model_refusal("forProvider.model", bad).unwrap();
            assert!(why.starts_with("forProvider.model: "), "{why}");
        }
    }

    #[test]
    fn params_table() {
        let ok = params(Some("a"), Some(&["b", "c"]));
        let both = FallbackParameters {
            model_ref: Some(LocalRef { name: "m".into() }),
            ..ok.clone()
        };
        // (case, params, write, refusal starts with)
        let cases: Vec<(&str, FallbackParameters, bool, Option<&str>)> = vec![
            ("valid", ok.clone(), true, None),
            (
                "neither model nor ref",
                params(None, Some(&["b"])),
                true,
                Some("forProvider.model, forProvider.modelRef: "),
            ),
            (
                "both",
                both,
                true,
                Some("forProvider.model, forProvider.modelRef: "),
            ),
            (
                "no fallbacks, writing",
                params(Some("a"), None),
                true,
                Some("forProvider.fallbacks: required"),
            ),
            (
                "no fallbacks, importing",
                params(Some("a"), None),
                false,
                None,
            ),
            (
                "empty",
                params(Some("a"), Some(&[])),
                true,
                Some("forProvider.fallbacks: name"),
            ),
            (
                "itself",
                params(Some("a"), Some(&["b", "a"])),
                true,
                Some("forProvider.fallbacks: \"a\" cannot"),
            ),
            (
                "twice",
                params(Some("a"), Some(&["b", "c", "b"])),
                true,
                Some("forProvider.fallbacks: \"b\" is named twice"),
            ),
            (
                "a slash",
                params(Some("x/a"), Some(&["b"])),
                true,
                Some("forProvider.model: the model name"),
            ),
        ];
        for (case, p, write, want) in cases {
            let model = p.model.clone().unwrap_or_default();
            let got = params_refusal(&p, "forProvider.model", &model, write);
            match want {
                None => assert_eq!(got, None, "{case}"),
                Some(prefix) => {
                    let got = got.unwrap_or_else(|| panic!("{case}: not refused"));
                    assert!(got.starts_with(prefix), "{case}: {got}");
                }
            }
        }
    }

    #[test]
    fn forprovider_must_agree_with_the_external_name() {
        let id = "a:general";
        let named = parse_external_name(id).unwrap();
        assert_eq!(
            mismatch(id, &named, "forProvider.model", "a", FallbackType::General),
            None
        );
        let why = mismatch(id, &named, "forProvider.model", "b", FallbackType::General).unwrap();
        assert!(why.starts_with("forProvider.model: "), "{why}");
        assert!(why.contains("\"b:general\""), "{why}");
        let why = mismatch(
            id,
            &named,
            "forProvider.modelRef",
            "b",
            FallbackType::General,
        )
        .unwrap();
        assert!(why.starts_with("forProvider.modelRef: "), "{why}");
        let why = mismatch(
            id,
            &named,
            "forProvider.model",
            "a",
            FallbackType::ContentPolicy,
        )
        .unwrap();
        assert!(why.starts_with("forProvider.type: "), "{why}");
        assert!(why.contains("\"a:content_policy\""), "{why}");
    }

    #[test]
    fn the_config_file_refusal_names_the_type_and_the_list() {
        for kind in FallbackType::ALL {
            let why = config_refusal(kind);
            assert!(why.starts_with("forProvider.type: "), "{why}");
            assert!(
                why.contains(&format!("router_settings.{}", kind.list())),
                "{why}"
            );
        }
    }

    #[test]
    fn drift_is_the_fallback_models_in_order() {
        let live = ["b".to_owned(), "c".to_owned()];
        let cases = [
            (Some(&["b", "c"][..]), vec![]),
            (Some(&["c", "b"][..]), vec![FALLBACKS]),
            (Some(&["b"][..]), vec![FALLBACKS]),
            (Some(&["b", "c", "d"][..]), vec![FALLBACKS]),
            (None, vec![]),
        ];
        for (want, drift) in cases {
            assert_eq!(
                diff(&params(Some("a"), want), &live).fields(),
                drift.as_slice(),
                "{want:?}"
            );
        }
        let filled = late_init(&params(Some("a"), None), &live).unwrap();
        assert_eq!(filled.fallbacks.as_deref(), Some(&live[..]));
        assert_eq!(late_init(&filled, &live), None);
    }

    #[test]
    fn the_request_and_the_observation() {
        let body = request(
            "a",
            FallbackType::ContextWindow,
            &params(Some("a"), Some(&["b"])),
        );
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::json!({"model": "a", "fallback_models": ["b"],
                               "fallback_type": "context_window"})
        );
        let rule = FallbackRule {
            model: "a".into(),
            fallback_type: FallbackType::ContextWindow,
            fallback_models: vec!["b".into()],
        };
        let observed = at_provider(&rule, Some("a:context_window"));
        assert_eq!(observed.fallback_type.as_deref(), Some("context_window"));
        assert_eq!(observed.owned_rule.as_deref(), Some("a:context_window"));
        assert_eq!(at_provider(&rule, None).owned_rule, None);
        for kind in [
            FallbackKind::General,
            FallbackKind::ContextWindow,
            FallbackKind::ContentPolicy,
        ] {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(
                fallback_type(kind).as_str(),
                match json.as_str().unwrap() {
                    "general" => "general",
                    "contextWindow" => "context_window",
                    "contentPolicy" => "content_policy",
                    other => panic!("{other}"),
                }
            );
        }
    }

    #[test]
    fn the_tenant_refusal_names_the_field_and_no_one() {
        assert!(TENANT_REFUSAL.starts_with("metadata.namespace: "));
        assert!(TENANT_REFUSAL.contains("LiteLLMInstance's own namespace"));
    }
}
