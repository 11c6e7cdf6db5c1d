//! `LiteLLMModel` against `/model/*` and `/v2/model/info`.
//!
//! Models have no `metadata`, so the ownership marker goes into `model_info`
//! next to the user's `modelInfo` fields; LiteLLM stores and returns both as
//! sent (an update merges `model_info`, so the marker survives it anyway).
//!
//! Public model names belong to the platform. LiteLLM routes every
//! deployment of one `model_name` as a group, so a tenant's deployment named
//! `gpt-4o` would take part of everybody's `gpt-4o` traffic. Only models of
//! the instance's namespace and of the namespaces its
//! `spec.publicModelNamespaces` grants publish `forProvider.modelName` as
//! is; any other model is published as `<namespace>/<modelName>` (LiteLLM
//! accepts `/` in names; a team or key reaches it only when its `models`
//! list names it, or lists no models at all). Team-only models
//! (`model_info.team_id`) would fit better but answer 403 on the
//! open-source proxy (enterprise licence), so they are not used. Such a
//! model must reach its upstream only with secrets of its own namespace
//! (see [`crate::provider::kinds::upstream::families`] and [`tenant_refusal`]): LiteLLM would fill
//! anything it leaves out from the proxy's own credentials.
//!
//! LiteLLM never returns a credential. The fingerprint of each Secret value
//! last written is kept in `status.atProvider.secretFingerprints`, so a
//! rotated Secret is drift and is written again (see
//! [`SecretValues`]). Which field holds which
//! parameter, and which are secrets, is in [`crate::provider::kinds::upstream::params`].

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::credential::{CredentialParameters, LiteLLMCredential};
use crate::api::model::{LiteLLMModel, ModelObservation, ModelParameters};
use crate::litellm::{
    self, ModelInfo, ModelMetaRequest, ModelParamsRequest, ModelRequest, SecretParams,
};

use crate::provider::kinds::upstream::families::{self, TENANT};
use crate::provider::kinds::upstream::params::{
    self as mp, json_names_environment, names_environment,
};
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping, SecretValues};
use crate::provider::managed::ownership::{metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// A `model_info` field LiteLLM computes itself (which pricing fields are
/// overridden) and drops when sent: neither sent nor compared.
const PRICING_OVERRIDES: &str = "pricing_overrides";

/// `model_info` fields whose names look like rates but which LiteLLM keeps
/// in `model_info` (provisioned-throughput billing).
const MODEL_INFO_COST_FIELDS: &[&str] = &["cost_per_ptu_per_hour"];

/// Whether LiteLLM keeps `key` as a per-deployment price in `litellm_params`
/// rather than in `model_info`. LiteLLM 1.108.7 drops such fields from
/// `model_info` on create and update (its `/v2/model/info` then shows the
/// cost map's value there) and stores them when they come in
/// `litellm_params`. They are its declared rates (every one has `cost` in
/// its name: `input_cost_per_token`, `cache_read_input_token_cost`,
/// `cost_per_second`, ...), `tiered_pricing`, the regional uplift
/// multipliers, and any `*_above_<N>[k]_tokens[_batches]` rate. The unit
/// tests check this rule against every field 1.108.7 declares.
pub fn is_pricing_key(key: &str) -> bool {
    let rate = key.contains("cost_per_") || key.ends_with("_cost") || key.contains("_cost_");
    (rate && !MODEL_INFO_COST_FIELDS.contains(&key))
        || key == "tiered_pricing"
        || (key.starts_with("regional_") && key.contains("_uplift_multiplier"))
        || is_above_threshold_rate(key)
}

/// `..._above_<digits>[k]_tokens[_batches]`.
fn is_above_threshold_rate(key: &str) -> bool {
    let key = key.strip_suffix("_batches").unwrap_or(key);
    let Some(key) = key.strip_suffix("_tokens") else {
        return false;
    };
    let Some((_, threshold)) = key.rsplit_once("_above_") else {
        return false;
    };
    let digits = threshold.strip_suffix('k').unwrap_or(threshold);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The user's `modelInfo` split by where LiteLLM keeps each field:
/// `(model_info, litellm_params pricing)`. `id` (ours) and
/// `pricing_overrides` (LiteLLM's) are in neither.
fn split_model_info(params: &ModelParameters) -> (Map<String, Value>, Map<String, Value>) {
    let mut info = Map::new();
    let mut pricing = Map::new();
    for (key, value) in params.model_info.iter().flatten() {
        if key == "id" || key == PRICING_OVERRIDES {
            continue;
        }
        let target = if is_pricing_key(key) {
            &mut pricing
        } else {
            &mut info
        };
        target.insert(key.clone(), value.clone());
    }
    (info, pricing)
}

/// The `model_info` fields besides `id` that the provider sends: the user's
/// non-pricing `modelInfo`, the access groups as published, and the
/// marker. A user `id` would clash with ours, so it is dropped.
fn model_info_fields(
    params: &ModelParameters,
    to: Published<'_>,
    owner: &Owner,
) -> Map<String, Value> {
    let (mut info, _) = split_model_info(params);
    if let Some(groups) = &params.access_groups {
        let groups: Vec<Value> = groups
            .iter()
            .map(|g| Value::String(public_model_name(&owner.namespace, g, to.public)))
            .collect();
        info.insert(ACCESS_GROUPS.to_owned(), Value::Array(groups));
    }
    metadata_with_marker(Some(&info.into_iter().collect()), owner)
}

/// `model_info` field of a deployment's access groups.
const ACCESS_GROUPS: &str = "access_groups";

/// How a model is served: under `name`, and whether its name and groups
/// are public (the platform's, not behind its namespace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published<'a> {
    pub name: &'a str,
    pub public: bool,
}

/// The name LiteLLM serves a model of `namespace` under: `model_name` when
/// the namespace may publish public names (`public`), else
/// `<namespace>/<model_name>`, which no other namespace can produce
/// (namespaces hold no `/`). A name already in the namespace is not
/// prefixed twice.
pub fn public_model_name(namespace: &str, model_name: &str, public: bool) -> String {
    let prefix = format!("{namespace}/");
    if public || model_name.starts_with(&prefix) {
        model_name.to_owned()
    } else {
        format!("{prefix}{model_name}")
    }
}

/// The `forProvider` field of a team model's team.
pub const TEAM_REF: &str = "teamRef";

/// Why the access groups may not be sent as they stand: set in
/// `modelInfo.access_groups`, they would bypass `accessGroups`, which puts
/// a tenant's (or a team model's) groups behind its namespace.
pub fn groups_refusal(params: &ModelParameters) -> Option<String> {
    params
        .model_info
        .as_ref()
        .is_some_and(|info| info.contains_key(ACCESS_GROUPS))
        .then(|| {
            format!(
                "modelInfo.{ACCESS_GROUPS}: set the model's access groups in accessGroups, which \
                 keeps a tenant's groups apart from the platform's"
            )
        })
}

/// Why a model from a namespace that may not publish public names (a
/// tenant's) must not be written, naming the field and never a value. Such
/// a model must reach its upstream only with secrets from its own
/// namespace: LiteLLM fills every credential a deployment leaves out from
/// the proxy (its environment, files and cloud identity), and sends it to
/// whatever upstream the model names. See [`crate::provider::kinds::upstream::families`] for which
/// credentials each family of providers needs and what is refused.
///
/// `credential` is the spec of the model's `LiteLLMCredential` (none
/// without `credentialRef`, or when it is gone: then the reference does not
/// resolve either), whose values fill the parameters the model leaves
/// unset.
pub fn tenant_refusal(
    params: &ModelParameters,
    refs: &Resolved,
    credential: Option<&CredentialParameters>,
) -> Option<String> {
    let environment = |field: &str| {
        format!(
            "{field}: a value of the form {}... makes LiteLLM read an environment variable of \
             the proxy, which a model {TENANT} may not do",
            mp::ENVIRONMENT_PREFIX
        )
    };
    let p = &params.litellm_params;
    if let Some(why) = mp::secret_refusal(p, refs) {
        return Some(why);
    }
    // The model's own secrets, as resolved: never a parameter of the
    // proxy's identity, never a value LiteLLM dereferences, never empty.
    let mut from_secrets = Vec::new();
    for s in mp::SECRET_PARAMS {
        if (s.selector)(p).is_none() {
            continue;
        }
        let value = refs.secret(s.field);
        if let Some(why) = families::refused_secret(s.name, value.map(|v| v.expose())) {
            return Some(format!("{}: {why}", s.field));
        }
        if value.is_some() {
            from_secrets.push(s.name);
        }
    }
    let texts = [
        ("litellmParams.model", Some(&p.model)),
        ("litellmParams.apiBase", p.api_base.as_ref()),
        ("litellmParams.apiVersion", p.api_version.as_ref()),
    ];
    for (field, value) in texts {
        if value.is_some_and(|v| names_environment(v)) {
            return Some(environment(field));
        }
        if let Some(why) = value.and_then(|v| families::refused_value("", v, false)) {
            return Some(format!("{field}: {why}"));
        }
    }
    let plain = mp::plain(p);
    for (name, value) in &plain {
        let field = match mp::plain_field(name) {
            mp::ADDITIONAL_PARAMS => format!("{}.{name}", mp::ADDITIONAL_PARAMS),
            field => field.to_owned(),
        };
        if json_names_environment(value) {
            return Some(environment(&field));
        }
        if let Some(why) = families::refused_setting(name, value) {
            return Some(format!("{field}: {why}"));
        }
    }
    let (info, pricing) = split_model_info(params);
    if let Some(key) = pricing
        .iter()
        .find_map(|(key, value)| json_names_environment(value).then_some(key))
    {
        return Some(environment(&format!("modelInfo.{key}")));
    }
    if info.contains_key("team_id") {
        return Some(format!(
            "modelInfo.team_id: a model {TENANT} cannot be made a team model; it is published \
             as <namespace>/<modelName> instead"
        ));
    }
    let plain_names: Vec<&str> = plain.keys().map(String::as_str).collect();
    families::family_refusal(params, &from_secrets, &plain_names, credential)
}

/// Create/update body: every set field, the credentials from their
/// Secrets, the pricing of `modelInfo` and the other plain parameters in
/// `litellm_params`, and the rest of `modelInfo` with the marker in
/// `model_info`. `model_name` is the name to serve (see
/// [`public_model_name`]).
pub fn request(
    id: &str,
    params: &ModelParameters,
    to: Published<'_>,
    refs: &Resolved,
    owner: &Owner,
) -> ModelRequest {
    let p = &params.litellm_params;
    let (_, mut extra) = split_model_info(params);
    extra.extend(mp::plain(p));
    ModelRequest {
        model_name: to.name.to_owned(),
        litellm_params: ModelParamsRequest {
            model: p.model.clone(),
            api_base: p.api_base.clone(),
            api_version: p.api_version.clone(),
            rpm: p.rpm,
            tpm: p.tpm,
            credential_name: refs.id(mp::CREDENTIAL_REF).map(str::to_owned),
            secrets: SecretParams(mp::secrets(p, refs)),
            extra,
        },
        model_info: ModelMetaRequest {
            id: id.to_owned(),
            extra: model_info_fields(params, to, owner),
        },
    }
}

/// Credentials are never returned by LiteLLM; their fingerprints are
/// compared in `observe`. The credential of `credentialRef` is compared by
/// the name it resolved to (`refs`), and one the model does not name is
/// drift. Plain parameters are compared by their
/// `litellm_params` name (numbers by value), each naming its field. `modelName` is compared with the name to serve. `modelInfo`
/// is compared key by key, marker included, each key where LiteLLM keeps
/// it: pricing in `litellm_params` (numerically), the rest in `model_info`,
/// where the cost map LiteLLM merges in is not drift.
pub fn diff(
    params: &ModelParameters,
    to: Published<'_>,
    refs: &Resolved,
    live: &ModelInfo,
    owner: &Owner,
) -> Diff {
    let p = &params.litellm_params;
    let l = &live.litellm_params;
    let mut diff = Diff::new();
    if refs.id(mp::CREDENTIAL_REF) != l.credential_name.as_deref() {
        diff.mark(mp::CREDENTIAL_REF);
    }
    diff.field("modelName", Some(to.name), Some(live.model_name.as_str()));
    diff.field("litellmParams.model", Some(&p.model), l.model.as_ref());
    diff.field(
        "litellmParams.apiBase",
        p.api_base.as_ref(),
        l.api_base.as_ref(),
    );
    diff.field(
        "litellmParams.apiVersion",
        p.api_version.as_ref(),
        l.api_version.as_ref(),
    );
    diff.field("litellmParams.tpm", p.tpm.as_ref(), l.tpm.as_ref());
    diff.field("litellmParams.rpm", p.rpm.as_ref(), l.rpm.as_ref());
    diff.metadata(
        "modelInfo",
        &model_info_fields(params, to, owner),
        Some(&live.model_info.extra),
    );
    let (_, pricing) = split_model_info(params);
    let priced = pricing.iter().all(|(key, want)| {
        l.extra
            .get(key)
            .is_some_and(|have| mp::same_json(want, have))
    });
    if !priced {
        diff.mark("modelInfo");
    }
    for (name, want) in mp::plain(p) {
        if !l
            .extra
            .get(&name)
            .is_some_and(|have| mp::same_json(&want, have))
        {
            diff.mark(mp::plain_field(&name));
        }
    }
    diff
}

/// `modelInfo` is not late-initialized: the live one is mostly LiteLLM's cost
/// map, which does not belong in the spec.
pub fn late_init(params: &ModelParameters, live: &ModelInfo) -> Option<ModelParameters> {
    let mut filled = params.clone();
    let p = &mut filled.litellm_params;
    let l = &live.litellm_params;
    let changed = [
        diff::late_init(&mut p.api_base, l.api_base.clone()),
        diff::late_init(&mut p.api_version, l.api_version.clone()),
        diff::late_init(&mut p.tpm, l.tpm),
        diff::late_init(&mut p.rpm, l.rpm),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(
    live: &ModelInfo,
    refs: &Resolved,
    secret_fingerprints: Option<BTreeMap<String, String>>,
) -> ModelObservation {
    let access_groups = live
        .model_info
        .extra
        .get(ACCESS_GROUPS)
        .and_then(Value::as_array)
        .map(|groups| {
            groups
                .iter()
                .filter_map(|g| g.as_str().map(str::to_owned))
                .collect()
        });
    ModelObservation {
        model_id: Some(live.model_info.id.clone()),
        model_name: Some(live.model_name.clone()),
        public_model_name: Some(live.model_name.clone()),
        model: live.litellm_params.model.clone(),
        api_base: live.litellm_params.api_base.clone(),
        created_at: None,
        team_id: refs.id(TEAM_REF).map(str::to_owned),
        credential_name: live.litellm_params.credential_name.clone(),
        access_groups,
        secret_fingerprints,
    }
}

/// `/model/*` for one reconciliation.
pub struct ModelMapping {
    client: litellm::Client,
    owner: Owner,
    refs: Resolved,
    /// Whether the model's namespace may publish public names.
    public: bool,
    kube: crate::provider::watch::cache::Kube,
}

impl ModelMapping {
    /// Whether `params` publishes public names: a model of the platform's
    /// namespaces that is no team's.
    fn public_names(&self, params: &ModelParameters) -> bool {
        self.public && params.team_ref.is_none()
    }

    fn model_name(&self, params: &ModelParameters) -> String {
        public_model_name(
            &self.owner.namespace,
            &params.model_name,
            self.public_names(params),
        )
    }

    /// The spec of the model's `LiteLLMCredential`, from the shared cache
    /// (none without `credentialRef`, or when it is gone: then the
    /// reference does not resolve either).
    async fn credential(
        &self,
        params: &ModelParameters,
    ) -> Result<Option<CredentialParameters>, ExternalError> {
        let Some(credential) = &params.litellm_params.credential_ref else {
            return Ok(None);
        };
        let cached = self
            .kube
            .get::<LiteLLMCredential>(&self.owner.namespace, &credential.name)
            .await?;
        Ok(cached.map(|c| c.spec.for_provider.clone()))
    }

    /// The create/update body for `params`, or why a tenant's model may not
    /// be written as it stands (before anything is sent).
    async fn body(
        &self,
        id: &str,
        params: &ModelParameters,
    ) -> Result<ModelRequest, ExternalError> {
        let credential = if self.public {
            None
        } else {
            self.credential(params).await?
        };
        // From any namespace: a Secret is for a credential, not for a
        // pointer into the proxy's environment (a model that should use the
        // proxy's credentials leaves the reference out); and nothing
        // secret goes in clear.
        let p = &params.litellm_params;
        let (_, priced) = split_model_info(params);
        let refusal = mp::secret_refusal(p, &self.refs)
            .or_else(|| mp::additional_refusal(p, &priced))
            .or_else(|| groups_refusal(params))
            .or_else(|| {
                (!self.public)
                    .then(|| tenant_refusal(params, &self.refs, credential.as_ref()))
                    .flatten()
            });
        if let Some(why) = refusal {
            return Err(ExternalError::Invalid(why));
        }
        let name = self.model_name(params);
        let to = Published {
            name: &name,
            public: self.public_names(params),
        };
        Ok(request(id, params, to, &self.refs, &self.owner))
    }
}

impl ManagedKind for LiteLLMModel {
    type Parameters = ModelParameters;
    type AtProvider = ModelObservation;
    type External = Mapped<ModelMapping>;
    const NOUN: &'static str = "model";
    const JOINS: &'static [Joins] = &[Joins::Credential];
    const JOINED_AS: Option<Joins> = Some(Joins::Model);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &ModelParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<ModelObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        let team = params.team_ref.iter().map(|r| Reference::Team {
            field: TEAM_REF,
            name: r.name.clone(),
        });
        team.chain(mp::references(&params.litellm_params)).collect()
    }
    /// The credential of `credentialRef`: its deletion waits for this
    /// model (LiteLLM would delete it under the model).
    fn joins(&self) -> Vec<Join> {
        let credential = self
            .spec
            .for_provider
            .litellm_params
            .credential_ref
            .as_ref();
        join(Joins::Credential, credential, None)
            .into_iter()
            .collect()
    }
    fn connect(connection: Connection) -> Mapped<ModelMapping> {
        Mapped(ModelMapping {
            client: connection.litellm,
            owner: connection.owner,
            refs: connection.refs,
            public: connection.public_models,
            kube: connection.kube,
        })
    }
}

/// Every write sends the whole deployment.
impl Mapping<LiteLLMModel> for ModelMapping {
    type Live = ModelInfo;
    type Request = ModelRequest;

    async fn read(&self, _: &LiteLLMModel, id: &str) -> Result<Option<ModelInfo>, ExternalError> {
        Ok(self.client.model_info(id).await?)
    }
    fn owner(&self, _: &str, live: &ModelInfo) -> Option<Owner> {
        Owner::from_metadata(Some(&live.model_info.extra))
    }
    fn drift(&self, mr: &LiteLLMModel, _: &str, live: &ModelInfo) -> Diff {
        let params = &mr.spec.for_provider;
        let name = self.model_name(params);
        let to = Published {
            name: &name,
            public: self.public_names(params),
        };
        diff(params, to, &self.refs, live, &self.owner)
    }
    fn late_init(&self, params: &ModelParameters, live: &ModelInfo) -> Option<ModelParameters> {
        late_init(params, live)
    }
    fn at_provider(
        &self,
        live: &ModelInfo,
        fingerprints: Option<Fingerprints>,
    ) -> ModelObservation {
        at_provider(live, &self.refs, fingerprints)
    }
    fn connection_details(&self, live: &ModelInfo) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("modelId".to_owned(), live.model_info.id.clone()),
            ("modelName".to_owned(), live.model_name.clone()),
        ])
    }

    /// A field whose Secret changed since it was written is drift of that
    /// field.
    fn secret_values(&self, mr: &LiteLLMModel) -> Option<SecretValues> {
        let current = mp::fingerprints(&mr.spec.for_provider.litellm_params, &self.refs);
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        let changed = mp::changed_secrets(&values);
        Some(values.drifting(true, &changed))
    }
    fn before_create(
        &self,
        mr: &LiteLLMModel,
        id: &str,
        fingerprints: Option<Fingerprints>,
    ) -> Option<ModelObservation> {
        Some(ModelObservation {
            model_id: Some(id.to_owned()),
            public_model_name: Some(self.model_name(&mr.spec.for_provider)),
            secret_fingerprints: fingerprints,
            ..ModelObservation::default()
        })
    }

    async fn request(
        &self,
        mr: &LiteLLMModel,
        id: &str,
        _: Option<&Diff>,
    ) -> Result<ModelRequest, ExternalError> {
        self.body(id, &mr.spec.for_provider).await
    }
    async fn send_create(&self, request: &ModelRequest) -> Result<Option<String>, ExternalError> {
        self.client.model_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &ModelRequest) -> Result<(), ExternalError> {
        self.client.model_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.model_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::{LocalRef, SecretKeySelector};
    use crate::api::model::{AwsParams, LiteLLMParams, VertexParams};
    use crate::litellm::Secret;
    use crate::litellm::{ModelMeta, ModelParams};
    use crate::provider::kinds::upstream::params::API_KEY_REF;
    use crate::provider::managed::ownership::MARKER_KEY;
    use serde_json::json;

    fn public(name: &str) -> Published<'_> {
        Published { name, public: true }
    }

    fn tenant(name: &str) -> Published<'_> {
        Published {
            name,
            public: false,
        }
    }

    fn me() -> Owner {
        Owner {
            cluster: "c".into(),
            namespace: "ns".into(),
            name: "m".into(),
            uid: "u".into(),
        }
    }

    fn params() -> ModelParameters {
        ModelParameters {
            model_name: "gpt".into(),
            litellm_params: LiteLLMParams {
                model: "openai/gpt-4o".into(),
                api_key_secret_ref: Some(SecretKeySelector {
                    name: "openai".into(),
                    key: "apiKey".into(),
                }),
                rpm: Some(10),
                ..LiteLLMParams::default()
            },
            model_info: Some(
                [
                    ("id".to_owned(), Value::from("forged")),
                    ("mode".to_owned(), Value::from("chat")),
                ]
                .into(),
            ),
            ..ModelParameters::default()
        }
    }

    fn live() -> ModelInfo {
        ModelInfo {
            model_name: "gpt".into(),
            litellm_params: ModelParams {
                model: Some("openai/gpt-4o".into()),
                api_base: Some("http://up".into()),
                rpm: Some(10),
                ..ModelParams::default()
            },
            model_info: ModelMeta {
                id: "ns.m".into(),
                db_model: Some(true),
                extra: serde_json::json!({
                    "mode": "chat",
                    MARKER_KEY: me().marker(),
                    // From LiteLLM's cost map, not from the user.
                    "max_tokens": 16384,
                    "input_cost_per_token": 2.5e-06,
                    "input_cost_per_token_flex": null,
                })
                .as_object()
                .unwrap()
                .clone(),
            },
        }
    }

    fn with_info(info: Value) -> ModelParameters {
        ModelParameters {
            model_info: Some(serde_json::from_value(info).unwrap()),
            ..params()
        }
    }

    #[test]
    fn diff_table() {
        assert!(diff(
            &params(),
            public("gpt"),
            &Resolved::default(),
            &live(),
            &me()
        )
        .is_empty());
        let mut changed = params();
        changed.model_name = "gpt-2".into();
        changed.litellm_params.model = "openai/gpt-5".into();
        changed.litellm_params.api_version = Some("v1".into());
        changed.litellm_params.rpm = Some(11);
        assert_eq!(
            diff(
                &changed,
                public("gpt-2"),
                &Resolved::default(),
                &live(),
                &me()
            )
            .fields(),
            [
                "modelName",
                "litellmParams.model",
                "litellmParams.apiVersion",
                "litellmParams.rpm"
            ]
        );
        // A tenant's model is compared with the name it is published under.
        assert_eq!(
            diff(
                &params(),
                tenant("ns/gpt"),
                &Resolved::default(),
                &live(),
                &me()
            )
            .fields(),
            ["modelName"]
        );
        // The credential by the name its reference resolved to; one the
        // model does not name is drift too (an update sends null).
        let named = Resolved::default().with_id(mp::CREDENTIAL_REF, "ns.openai");
        let mut using = live();
        using.litellm_params.credential_name = Some("ns.openai".into());
        assert!(diff(&params(), public("gpt"), &named, &using, &me()).is_empty());
        for (refs, live) in [(&named, live()), (&Resolved::default(), using.clone())] {
            assert_eq!(
                diff(&params(), public("gpt"), refs, &live, &me()).fields(),
                [mp::CREDENTIAL_REF]
            );
        }
        let sent = request("ns.m", &params(), public("gpt"), &named, &me());
        assert_eq!(
            sent.litellm_params.credential_name.as_deref(),
            Some("ns.openai")
        );
        let body = serde_json::to_value(request(
            "ns.m",
            &params(),
            public("gpt"),
            &Resolved::default(),
            &me(),
        ))
        .unwrap();
        assert_eq!(
            body["litellm_params"]["litellm_credential_name"],
            Value::Null
        );
    }

    #[test]
    fn public_names_belong_to_the_platform() {
        let cases = [
            ("platform or granted namespace", "gpt-4o", true, "gpt-4o"),
            ("granted, any name", "team-b/gpt-4o", true, "team-b/gpt-4o"),
            ("tenant", "gpt-4o", false, "team-a/gpt-4o"),
            (
                "tenant, already namespaced",
                "team-a/gpt-4o",
                false,
                "team-a/gpt-4o",
            ),
            (
                "tenant naming another tenant's space",
                "team-b/gpt-4o",
                false,
                "team-a/team-b/gpt-4o",
            ),
            (
                "tenant, a prefix that is not its namespace",
                "team-ab/x",
                false,
                "team-a/team-ab/x",
            ),
            ("tenant, a wildcard", "*", false, "team-a/*"),
        ];
        for (case, name, public, want) in cases {
            assert_eq!(public_model_name("team-a", name, public), want, "{case}");
        }
    }

    #[test]
    fn model_info_drifts_only_in_keys_the_user_set_and_the_marker() {
        let cases = [
            (
                "a cost-map value the user did not set",
                json!({"mode": "chat"}),
                false,
            ),
            (
                "the user's value of a cost-map field",
                json!({"max_tokens": 16384}),
                false,
            ),
            (
                "a user value changed in the UI",
                json!({"mode": "embedding"}),
                true,
            ),
            (
                "a user key missing live",
                json!({"base_model": "gpt-4o"}),
                true,
            ),
            ("a nested user value", json!({"tags": {"a": [1]}}), true),
        ];
        for (name, info, differs) in cases {
            let fields = diff(
                &with_info(info),
                public("gpt"),
                &Resolved::default(),
                &live(),
                &me(),
            );
            let want: &[&str] = if differs { &["modelInfo"] } else { &[] };
            assert_eq!(fields.fields(), want, "{name}");
        }
        let mut unmarked = live();
        unmarked.model_info.extra.remove(MARKER_KEY);
        assert_eq!(
            diff(
                &params(),
                public("gpt"),
                &Resolved::default(),
                &unmarked,
                &me()
            )
            .fields(),
            ["modelInfo"]
        );
    }

    /// The fields LiteLLM 1.108.7 declares, read from the running proxy:
    /// the pricing ones it drops from `model_info`, and the others.
    #[test]
    fn pricing_keys_are_those_litellm_keeps_in_litellm_params() {
        let fields: Value = serde_json::from_str(include_str!(
            "../../../tests/fixtures/litellm-1.108.7-model-fields.json"
        ))
        .unwrap();
        let names =
            |kind: &str| -> Vec<String> { serde_json::from_value(fields[kind].clone()).unwrap() };
        let (pricing, model_info) = (names("pricing"), names("model_info"));
        assert!(pricing.len() > 100 && model_info.len() > 50);
        for key in &pricing {
            assert!(is_pricing_key(key), "{key} is a price");
        }
        for key in &model_info {
            assert!(!is_pricing_key(key), "{key} stays in model_info");
        }
        // Undeclared rates of the threshold shape are dropped too; the
        // user's own keys are not prices.
        for (key, price) in [
            ("input_cost_per_token_above_64k_tokens", true),
            ("foo_above_32k_tokens_batches", true),
            ("foo_above_k_tokens", false),
            ("context_above_tokens", false),
            ("cost_center", false),
            ("team", false),
            ("mode", false),
        ] {
            assert_eq!(is_pricing_key(key), price, "{key}");
        }
    }

    #[test]
    fn pricing_is_sent_and_compared_in_litellm_params() {
        let info = json!({
            "mode": "chat",
            "input_cost_per_token": 0.000123,
            "output_cost_per_second": 1,
            "tiered_pricing": [{"range": [0, 1000], "input_cost_per_token": 0.1}],
            "pricing_overrides": ["input_cost_per_token"],
        });
        let priced = with_info(info);
        let body = serde_json::to_value(request(
            "ns.m",
            &priced,
            public("gpt"),
            &Resolved::default(),
            &me(),
        ))
        .unwrap();
        assert_eq!(body["litellm_params"]["input_cost_per_token"], 0.000123);
        assert_eq!(body["litellm_params"]["output_cost_per_second"], 1);
        assert_eq!(
            body["litellm_params"]["tiered_pricing"][0]["range"][1],
            1000
        );
        assert_eq!(body["model_info"]["mode"], "chat");
        for key in [
            "input_cost_per_token",
            "tiered_pricing",
            "pricing_overrides",
        ] {
            assert!(body["model_info"].get(key).is_none(), "{key}");
            assert!(
                key != "pricing_overrides" || body["litellm_params"].get(key).is_none(),
                "LiteLLM computes it"
            );
        }

        // Live as LiteLLM 1.108.7 reports it: prices in litellm_params
        // (integers as floats), model_info with the cost map's or our value
        // and its own pricing_overrides list.
        let mut stored = live();
        stored.litellm_params.extra = json!({
            "input_cost_per_token": 0.000123,
            "output_cost_per_second": 1.0,
            "tiered_pricing": [{"range": [0.0, 1000.0], "input_cost_per_token": 0.1}],
            "use_in_pass_through": false,
        })
        .as_object()
        .unwrap()
        .clone();
        stored.model_info.extra.insert(
            "pricing_overrides".into(),
            json!(["output_cost_per_second"]),
        );
        assert!(diff(&priced, public("gpt"), &Resolved::default(), &stored, &me()).is_empty());

        let mut repriced = stored.clone();
        repriced
            .litellm_params
            .extra
            .insert("input_cost_per_token".into(), json!(0.0002));
        assert_eq!(
            diff(
                &priced,
                public("gpt"),
                &Resolved::default(),
                &repriced,
                &me()
            )
            .fields(),
            ["modelInfo"]
        );
        let mut dropped = stored.clone();
        dropped.litellm_params.extra.remove("tiered_pricing");
        assert_eq!(
            diff(
                &priced,
                public("gpt"),
                &Resolved::default(),
                &dropped,
                &me()
            )
            .fields(),
            ["modelInfo"]
        );
        // Both kinds of modelInfo drift name the field once.
        let mut both = repriced.clone();
        both.model_info
            .extra
            .insert("mode".into(), json!("embedding"));
        assert_eq!(
            diff(&priced, public("gpt"), &Resolved::default(), &both, &me()).fields(),
            ["modelInfo"]
        );
    }

    /// A tenant's model of `model` with the given typed Secret references
    /// (field, value) and additional parameters.
    fn tenant_model(
        model: &str,
        secrets: &[(&str, &str)],
        extra: Value,
    ) -> (ModelParameters, Resolved) {
        let mut p = params();
        p.litellm_params.model = model.into();
        p.litellm_params.api_base = Some("http://127.0.0.1:9/tenant".into());
        p.litellm_params.api_key_secret_ref = None;
        let selector = || {
            Some(SecretKeySelector {
                name: "s".into(),
                key: "k".into(),
            })
        };
        let mut refs = Resolved::default();
        for (field, value) in secrets {
            let l = &mut p.litellm_params;
            let aws = || AwsParams::default();
            match *field {
                "apiKey" => l.api_key_secret_ref = selector(),
                "awsAccessKeyId" => {
                    l.aws.get_or_insert_with(aws).access_key_id_secret_ref = selector()
                }
                "awsSecretAccessKey" => {
                    l.aws.get_or_insert_with(aws).secret_access_key_secret_ref = selector()
                }
                "awsWebIdentityToken" => {
                    l.aws.get_or_insert_with(aws).web_identity_token_secret_ref = selector()
                }
                "vertexCredentials" => {
                    l.vertex
                        .get_or_insert_with(VertexParams::default)
                        .credentials_secret_ref = selector()
                }
                "azureAdToken" => {
                    l.azure
                        .get_or_insert_with(crate::api::model::AzureParams::default)
                        .ad_token_secret_ref = selector()
                }
                other => panic!("{other}"),
            }
            let field = mp::SECRET_PARAMS
                .iter()
                .find(|s| (s.selector)(l).is_some() && refs.secret(s.field).is_none())
                .unwrap()
                .field;
            refs = refs.with_secret(field, Secret::new(*value));
        }
        if let Value::Object(extra) = extra {
            if !extra.is_empty() {
                p.litellm_params.additional_params = Some(extra.into_iter().collect());
            }
        }
        (p, refs)
    }

    #[test]
    fn tenant_models_reach_upstreams_only_with_their_own_secrets() {
        let sa = r#"{"type": "service_account", "client_email": "t@x", "private_key": "k"}"#;
        let none = json!({});
        type Case<'a> = (
            &'a str,
            &'a str,
            Vec<(&'a str, &'a str)>,
            Value,
            Option<&'a str>,
        );
        let cases: Vec<Case> = vec![
            ("openai with its key", "openai/gpt-4o", vec![("apiKey", "sk-up")], none.clone(), None),
            (
                "openai with a secret an OpenAI call never reads (issue case 1)",
                "openai/gpt-4o",
                vec![("awsSecretAccessKey", "tenant-aws-secret")],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: a model of LiteLLM's openai family"),
            ),
            (
                "openai with no secret",
                "openai/gpt-4o",
                vec![],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: "),
            ),
            (
                "an empty key falls back",
                "openai/gpt-4o",
                vec![("apiKey", "  ")],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: the Secret's value is empty"),
            ),
            (
                "the proxy's environment as key",
                "openai/gpt-4o",
                vec![("apiKey", " OS.Environ/OPENAI_API_KEY")],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: "),
            ),
            (
                "a token of the proxy's identity as key",
                "openai/gpt-4o",
                vec![("apiKey", "oidc/env/OPENAI_API_KEY")],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: a value of the form oidc/"),
            ),
            (
                "bedrock with its key pair",
                "bedrock/anthropic.claude-3-5-sonnet",
                vec![("awsAccessKeyId", "AKIATENANT"), ("awsSecretAccessKey", "s")],
                none.clone(),
                None,
            ),
            (
                "bedrock with half a pair",
                "bedrock/anthropic.claude-3-5-sonnet",
                vec![("awsSecretAccessKey", "s")],
                none.clone(),
                Some("litellmParams.aws.accessKeyIdSecretRef: a model of LiteLLM's bedrock family"),
            ),
            (
                "bedrock with a profile of the proxy (issue case 3)",
                "bedrock/anthropic.claude-3-5-sonnet",
                vec![("awsAccessKeyId", "AKIATENANT"), ("awsSecretAccessKey", "s")],
                json!({"aws_profile_name": "platform", "aws_bedrock_runtime_endpoint": "http://127.0.0.1:9"}),
                Some("litellmParams.additionalParams.aws_profile_name: selects a profile"),
            ),
            (
                "bedrock with a web identity token",
                "bedrock/anthropic.claude-3-5-sonnet",
                vec![("awsWebIdentityToken", "eyJ.a.b")],
                none.clone(),
                Some("litellmParams.aws.webIdentityTokenSecretRef: "),
            ),
            (
                "vertex with a service account",
                "vertex_ai/gemini-1.5-pro",
                vec![("vertexCredentials", sa)],
                none.clone(),
                None,
            ),
            (
                "vertex with a file of the proxy's host (issue case 4)",
                "vertex_ai/gemini-1.5-pro",
                vec![("vertexCredentials", "/etc/platform/sa.json")],
                none.clone(),
                Some("litellmParams.vertex.credentialsSecretRef: must be a service account's"),
            ),
            (
                "vertex with an external account",
                "vertex_ai/gemini-1.5-pro",
                vec![("vertexCredentials", r#"{"type": "external_account"}"#)],
                none.clone(),
                Some("litellmParams.vertex.credentialsSecretRef: must be a JSON key of type"),
            ),
            (
                "vertex with only an api key (issue case 5)",
                "vertex_ai/gemini-1.5-pro",
                vec![("apiKey", "tenant-key")],
                none.clone(),
                Some("litellmParams.vertex.credentialsSecretRef: a model of LiteLLM's vertex_ai family"),
            ),
            (
                "azure with its key",
                "azure/gpt-4o-deployment",
                vec![("apiKey", "k")],
                none.clone(),
                None,
            ),
            (
                "azure with only a token (an OpenAI-routed name needs the key too)",
                "azure/gpt-4o-deployment",
                vec![("azureAdToken", "eyJ.a.b")],
                none.clone(),
                Some("litellmParams.apiKeySecretRef: a model of LiteLLM's azure family"),
            ),
            (
                "azure sign-in settings the proxy completes",
                "azure/gpt-4o-deployment",
                vec![("apiKey", "k")],
                json!({"azure_scope": "https://management.azure.com/.default"}),
                Some("litellmParams.additionalParams.azure_scope: "),
            ),
            (
                "azure through the Cloudflare path",
                "azure/gpt-4o-deployment",
                vec![("apiKey", "k")],
                json!({}),
                None,
            ),
            (
                "a model without a provider",
                "gpt-4o",
                vec![("apiKey", "k")],
                none.clone(),
                Some("litellmParams.model: a model outside"),
            ),
            (
                "a provider of the proxy's own sign-in",
                "github_copilot/gpt-4o",
                vec![("apiKey", "k")],
                none.clone(),
                Some("litellmParams.model: the LiteLLM provider \"github_copilot\""),
            ),
            (
                "a route through the proxy's LiteLLM proxy settings",
                "openai/gpt-4o",
                vec![("apiKey", "k")],
                json!({"use_litellm_proxy": true}),
                Some("litellmParams.additionalParams.use_litellm_proxy: "),
            ),
            (
                "a file of the proxy's host",
                "openai/gpt-4o",
                vec![("apiKey", "k")],
                json!({"ssl_verify": "/etc/ssl/platform.pem"}),
                Some("litellmParams.additionalParams.ssl_verify: "),
            ),
            (
                "nested identity tokens",
                "openai/gpt-4o",
                vec![("apiKey", "k")],
                json!({"extra_headers": {"X-Token": "oidc/google/https://x"}}),
                Some("litellmParams.additionalParams.extra_headers: a value of the form oidc/"),
            ),
            (
                "a plain setting in clear",
                "openai/gpt-4o",
                vec![("apiKey", "k")],
                json!({"organization": "org-1"}),
                None,
            ),
        ];
        for (case, model, secrets, extra, want) in cases {
            let (params, refs) = tenant_model(model, &secrets, extra);
            let got = tenant_refusal(&params, &refs, None);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    for (_, value) in &secrets {
                        assert!(
                            value.trim().len() < 2 || !message.contains(value.trim()),
                            "{case}: {message}"
                        );
                    }
                    for value in ["platform", "OPENAI_API_KEY\"", "management.azure"] {
                        assert!(!message.contains(value), "{case}: {message}");
                    }
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
        // The Cloudflare path of azure uses the proxy's credentials whatever
        // the model brings.
        let (mut cloudflare, refs) = tenant_model("azure/dep", &[("apiKey", "k")], json!({}));
        cloudflare.litellm_params.api_base =
            Some("https://evil.example/gateway.ai.cloudflare.com/v1".into());
        let why = tenant_refusal(&cloudflare, &refs, None).unwrap();
        assert!(why.starts_with("litellmParams.apiBase: "), "{why}");
    }

    #[test]
    fn a_tenants_credential_counts_only_with_what_it_holds_from_secrets() {
        let value = |name: &str| crate::api::credential::CredentialValue {
            name: name.into(),
            secret_key_ref: SecretKeySelector {
                name: "s".into(),
                key: "k".into(),
            },
        };
        let credential = |values: &[&str], plain: &[(&str, &str)]| CredentialParameters {
            values: values.iter().map(|n| value(n)).collect(),
            plain_values: plain
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..CredentialParameters::default()
        };
        let (mut params, refs) = tenant_model("openai/gpt-4o", &[], json!({}));
        params.litellm_params.credential_ref = Some(LocalRef {
            name: "mine".into(),
        });
        let refs = refs.with_id(mp::CREDENTIAL_REF, "ns.mine");
        assert_eq!(
            tenant_refusal(&params, &refs, Some(&credential(&["api_key"], &[]))),
            None
        );
        // Issue case 2: a credential whose only secret an OpenAI call
        // never reads, with the upstream as a plain value.
        let why = tenant_refusal(
            &params,
            &refs,
            Some(&credential(
                &["aws_secret_access_key"],
                &[("api_base", "http://127.0.0.1:9")],
            )),
        )
        .unwrap();
        assert!(
            why.starts_with("litellmParams.apiKeySecretRef: a model of LiteLLM's openai family"),
            "{why}"
        );
        // A secret given in plain does not count.
        let why = tenant_refusal(&params, &refs, Some(&credential(&[], &[("api_key", "k")])));
        assert!(why.is_some());
        // The credential's provider routes the model, as its values fill
        // what the model leaves unset.
        let mut bare = params.clone();
        bare.litellm_params.model = "claude-3-5-sonnet".into();
        assert_eq!(
            tenant_refusal(
                &bare,
                &refs,
                Some(&credential(
                    &["api_key"],
                    &[("custom_llm_provider", "anthropic")]
                ))
            ),
            None
        );
        // A prefix and a credential's provider that differ: both routes'
        // families must be satisfied.
        let why = tenant_refusal(
            &params,
            &refs,
            Some(&credential(
                &["aws_access_key_id", "aws_secret_access_key"],
                &[("custom_llm_provider", "bedrock")],
            )),
        )
        .unwrap();
        assert!(
            why.starts_with("litellmParams.apiKeySecretRef: a model of LiteLLM's openai family"),
            "{why}"
        );
        let why = tenant_refusal(
            &params,
            &refs,
            Some(&credential(
                &["api_key"],
                &[("aws_profile_name", "platform")],
            )),
        )
        .unwrap();
        assert!(
            why.starts_with("litellmParams.credentialRef: its LiteLLMCredential's plainValues.aws_profile_name: "),
            "{why}"
        );
        assert!(!why.contains("platform\""), "{why}");
        // A team model is no tenant's way around the rules.
        let (mut team, refs) = tenant_model("openai/gpt-4o", &[("apiKey", "k")], json!({}));
        team.model_info = Some([("team_id".to_owned(), json!("someone-elses"))].into());
        let why = tenant_refusal(&team, &refs, None).unwrap();
        assert!(why.starts_with("modelInfo.team_id: "), "{why}");
    }

    #[test]
    fn plain_params_are_sent_and_drift_by_field_secrets_only_sent() {
        let mut p = params();
        p.litellm_params.timeout = Some(30);
        p.litellm_params.tags = Some(vec!["gold".into()]);
        p.litellm_params.aws = Some(AwsParams {
            region_name: Some("us-east-1".into()),
            secret_access_key_secret_ref: Some(SecretKeySelector {
                name: "aws".into(),
                key: "secret".into(),
            }),
            ..AwsParams::default()
        });
        p.litellm_params.additional_params = Some([("num_retries".to_owned(), json!(2))].into());
        let refs = Resolved::default()
            .with_secret(API_KEY_REF, Secret::new("sk-upstream"))
            .with_secret(
                "litellmParams.aws.secretAccessKeySecretRef",
                Secret::new("aws-secret-value"),
            );
        let body = serde_json::to_value(request("ns.m", &p, public("gpt"), &refs, &me())).unwrap();
        let sent = &body["litellm_params"];
        assert_eq!(sent["timeout"], 30);
        assert_eq!(sent["aws_region_name"], "us-east-1");
        assert_eq!(sent["aws_secret_access_key"], "aws-secret-value");
        assert_eq!(sent["num_retries"], 2);
        assert_eq!(sent["tags"], json!(["gold"]));
        let debug = format!("{:?}", request("ns.m", &p, public("gpt"), &refs, &me()));
        assert!(
            !debug.contains("aws-secret-value") && !debug.contains("sk-upstream"),
            "{debug}"
        );

        // As LiteLLM answers: numbers as floats, no secrets.
        let mut live = live();
        for (k, v) in [
            ("timeout", json!(30.0)),
            ("aws_region_name", json!("us-east-1")),
            ("num_retries", json!(2)),
            ("tags", json!(["gold"])),
        ] {
            live.litellm_params.extra.insert(k.into(), v);
        }
        let same = diff(&p, public("gpt"), &Resolved::default(), &live, &me());
        assert!(same.is_empty(), "{same:?}");
        live.litellm_params
            .extra
            .insert("timeout".into(), json!(60.0));
        live.litellm_params
            .extra
            .insert("num_retries".into(), json!(3));
        live.litellm_params.extra.remove("aws_region_name");
        assert_eq!(
            diff(&p, public("gpt"), &Resolved::default(), &live, &me()).fields(),
            [
                "litellmParams.aws.regionName",
                "litellmParams.additionalParams",
                "litellmParams.timeout"
            ]
        );
    }

    #[test]
    fn access_groups_of_tenants_and_team_models_stay_behind_their_namespace() {
        let mut p = params();
        p.access_groups = Some(vec!["gold".into(), "ns/own".into()]);
        let groups = |to| {
            serde_json::to_value(request("ns.m", &p, to, &Resolved::default(), &me())).unwrap()
                ["model_info"]["access_groups"]
                .clone()
        };
        assert_eq!(groups(public("gpt")), json!(["gold", "ns/own"]));
        assert_eq!(groups(tenant("ns/gpt")), json!(["ns/gold", "ns/own"]));
        let mut live = live();
        live.model_info
            .extra
            .insert("access_groups".into(), json!(["ns/gold", "ns/own"]));
        assert_eq!(
            diff(&p, tenant("ns/gpt"), &Resolved::default(), &live, &me()).fields(),
            ["modelName"]
        );
        assert_eq!(
            diff(&p, public("gpt"), &Resolved::default(), &live, &me()).fields(),
            ["modelInfo"]
        );
        // Set directly, they would bypass all of that.
        assert_eq!(groups_refusal(&p), None);
        let direct = with_info(json!({"access_groups": ["gold"]}));
        assert!(groups_refusal(&direct).is_some_and(|why| why.starts_with(
            "modelInfo.access_groups: set the model's access groups in accessGroups"
        )));
    }

    #[test]
    fn the_owner_is_read_from_model_info() {
        assert_eq!(
            Owner::from_metadata(Some(&live().model_info.extra)),
            Some(me())
        );
        // A new uid of the same resource is refreshed by an update.
        let recreated = Owner {
            uid: "u2".into(),
            ..me()
        };
        assert_eq!(
            diff(
                &params(),
                public("gpt"),
                &Resolved::default(),
                &live(),
                &recreated
            )
            .fields(),
            ["modelInfo"]
        );
    }

    #[test]
    fn request_sends_the_key_model_info_and_marker_but_never_a_user_id() {
        let refs = Resolved::default().with_secret(API_KEY_REF, Secret::new("sk-upstream"));
        let body = serde_json::to_value(request("ns.m", &params(), tenant("ns/gpt"), &refs, &me()))
            .unwrap();
        assert_eq!(body["model_name"], "ns/gpt");
        assert_eq!(body["litellm_params"]["api_key"], "sk-upstream");
        assert_eq!(body["model_info"]["id"], "ns.m");
        assert_eq!(body["model_info"]["mode"], "chat");
        assert_eq!(body["model_info"][MARKER_KEY]["namespace"], "ns");
        let debug = format!(
            "{:?}",
            request("ns.m", &params(), public("gpt"), &refs, &me())
        );
        assert!(!debug.contains("sk-upstream"), "{debug}");
    }

    #[test]
    fn references_late_init_and_at_provider() {
        let model = LiteLLMModel::new(
            "m",
            crate::api::model::LiteLLMModelSpec {
                managed: ManagedFields::default(),
                for_provider: params(),
            },
        );
        assert!(matches!(
            &model.references()[..],
            [Reference::Secret {
                field: API_KEY_REF,
                ..
            }]
        ));
        let filled = late_init(&params(), &live()).unwrap();
        assert_eq!(filled.litellm_params.api_base.as_deref(), Some("http://up"));
        assert_eq!(late_init(&filled, &live()), None);
        let fingerprints = BTreeMap::from([(API_KEY_REF.to_owned(), "sha256:00".to_owned())]);
        let observed = at_provider(&live(), &Resolved::default(), Some(fingerprints.clone()));
        assert_eq!(observed.model_id.as_deref(), Some("ns.m"));
        assert_eq!(observed.public_model_name.as_deref(), Some("gpt"));
        assert_eq!(observed.secret_fingerprints, Some(fingerprints));
    }
}
