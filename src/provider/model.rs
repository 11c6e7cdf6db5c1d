//! `LiteLLMModel` against `/model/*` and `/v2/model/info`.
//!
//! Models have no `metadata`, so the ownership marker goes into `model_info`
//! next to the user's `modelInfo` fields; LiteLLM stores and returns both as
//! sent (an update merges `model_info`, so the marker survives it anyway).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::model::{LiteLLMModel, ModelObservation, ModelParameters};
use crate::litellm::{self, ModelInfo, ModelMetaRequest, ModelParamsRequest, ModelRequest};

use super::diff::{self, Diff};
use super::managed::{Connection, Creation, External, ExternalError, ManagedKind, Observation};
use super::ownership::{metadata_with_marker, Owner};
use super::resolve::{Reference, Resolved};

const API_KEY_REF: &str = "litellmParams.apiKeySecretRef";

/// The `model_info` fields besides `id` that the provider sends: the user's
/// `modelInfo` and the marker. A user `id` would clash with ours, so it is
/// dropped.
fn model_info_fields(params: &ModelParameters, owner: &Owner) -> Map<String, Value> {
    let mut fields = metadata_with_marker(params.model_info.as_ref(), owner);
    fields.remove("id");
    fields
}

/// Create/update body: every set field, the api key from its Secret, and
/// `model_info` with the marker.
pub fn request(id: &str, params: &ModelParameters, refs: &Resolved, owner: &Owner) -> ModelRequest {
    let p = &params.litellm_params;
    ModelRequest {
        model_name: params.model_name.clone(),
        litellm_params: ModelParamsRequest {
            model: p.model.clone(),
            api_base: p.api_base.clone(),
            api_version: p.api_version.clone(),
            api_key: refs.secret(API_KEY_REF).cloned(),
            rpm: p.rpm,
            tpm: p.tpm,
        },
        model_info: ModelMetaRequest {
            id: id.to_owned(),
            extra: model_info_fields(params, owner),
        },
    }
}

/// The api key is never returned by LiteLLM, so it cannot drift visibly.
/// `modelInfo` is compared key by key, marker included: the cost map LiteLLM
/// merges into the live `model_info` is not drift. LiteLLM 1.108.7 does not
/// store pricing fields (`input_cost_per_token`, ...) sent in `model_info`,
/// so one set in `modelInfo` is reported as drift on every poll: it never
/// takes effect there.
pub fn diff(params: &ModelParameters, live: &ModelInfo, owner: &Owner) -> Diff {
    let p = &params.litellm_params;
    let l = &live.litellm_params;
    let mut diff = Diff::new();
    diff.field(
        "modelName",
        Some(&params.model_name),
        Some(&live.model_name),
    );
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
        &model_info_fields(params, owner),
        Some(&live.model_info.extra),
    );
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

pub fn at_provider(live: &ModelInfo) -> ModelObservation {
    ModelObservation {
        model_id: Some(live.model_info.id.clone()),
        model_name: Some(live.model_name.clone()),
        model: live.litellm_params.model.clone(),
        api_base: live.litellm_params.api_base.clone(),
        created_at: None,
    }
}

/// `/model/*` for one reconciliation.
pub struct ModelExternal {
    client: litellm::Client,
    owner: Owner,
    refs: Resolved,
}

impl ManagedKind for LiteLLMModel {
    type Parameters = ModelParameters;
    type AtProvider = ModelObservation;
    type External = ModelExternal;
    const NOUN: &'static str = "model";

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
        self.spec
            .for_provider
            .litellm_params
            .api_key_secret_ref
            .iter()
            .map(|selector| Reference::Secret {
                field: API_KEY_REF,
                selector: selector.clone(),
            })
            .collect()
    }
    fn connect(connection: Connection) -> ModelExternal {
        ModelExternal {
            client: connection.litellm,
            owner: connection.owner,
            refs: connection.refs,
        }
    }
}

impl External<LiteLLMModel> for ModelExternal {
    async fn observe(
        &self,
        mr: &LiteLLMModel,
        id: &str,
    ) -> Result<Observation<LiteLLMModel>, ExternalError> {
        let Some(live) = self.client.model_info(id).await? else {
            return Ok(Observation::absent());
        };
        let params = &mr.spec.for_provider;
        Ok(Observation {
            exists: true,
            owner: Owner::from_metadata(Some(&live.model_info.extra)),
            drift: diff(params, &live, &self.owner),
            late_init: late_init(params, &live),
            at_provider: Some(at_provider(&live)),
            connection_details: BTreeMap::from([
                ("modelId".to_owned(), live.model_info.id),
                ("modelName".to_owned(), live.model_name),
            ]),
        })
    }

    async fn create(&self, mr: &LiteLLMModel, id: &str) -> Result<Creation, ExternalError> {
        self.client
            .model_new(&request(id, &mr.spec.for_provider, &self.refs, &self.owner))
            .await?;
        Ok(Creation::default())
    }

    async fn update(&self, mr: &LiteLLMModel, id: &str, _: &Diff) -> Result<(), ExternalError> {
        self.client
            .model_update(&request(id, &mr.spec.for_provider, &self.refs, &self.owner))
            .await?;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.model_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::model::LiteLLMParams;
    use crate::litellm::{ModelMeta, ModelParams, Secret};
    use crate::provider::ownership::MARKER_KEY;
    use serde_json::json;

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
                    "input_cost_per_token_flex": null,
                })
                .as_object()
                .unwrap()
                .clone(),
            },
        }
    }

    #[test]
    fn diff_table() {
        assert!(diff(&params(), &live(), &me()).is_empty());
        let mut changed = params();
        changed.model_name = "gpt-2".into();
        changed.litellm_params.model = "openai/gpt-5".into();
        changed.litellm_params.api_version = Some("v1".into());
        changed.litellm_params.rpm = Some(11);
        assert_eq!(
            diff(&changed, &live(), &me()).fields(),
            [
                "modelName",
                "litellmParams.model",
                "litellmParams.apiVersion",
                "litellmParams.rpm"
            ]
        );
    }

    #[test]
    fn model_info_drifts_only_in_keys_the_user_set_and_the_marker() {
        let with_info = |info: Value| ModelParameters {
            model_info: Some(serde_json::from_value(info).unwrap()),
            ..params()
        };
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
            let fields = diff(&with_info(info), &live(), &me());
            let want: &[&str] = if differs { &["modelInfo"] } else { &[] };
            assert_eq!(fields.fields(), want, "{name}");
        }
        let mut unmarked = live();
        unmarked.model_info.extra.remove(MARKER_KEY);
        assert_eq!(diff(&params(), &unmarked, &me()).fields(), ["modelInfo"]);
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
        assert_eq!(diff(&params(), &live(), &recreated).fields(), ["modelInfo"]);
    }

    #[test]
    fn request_sends_the_key_model_info_and_marker_but_never_a_user_id() {
        let refs = Resolved::default().with_secret(API_KEY_REF, Secret::new("sk-upstream"));
        let body = serde_json::to_value(request("ns.m", &params(), &refs, &me())).unwrap();
        assert_eq!(body["litellm_params"]["api_key"], "sk-upstream");
        assert_eq!(body["model_info"]["id"], "ns.m");
        assert_eq!(body["model_info"]["mode"], "chat");
        assert_eq!(body["model_info"][MARKER_KEY]["namespace"], "ns");
        let debug = format!("{:?}", request("ns.m", &params(), &refs, &me()));
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
        assert_eq!(at_provider(&live()).model_id.as_deref(), Some("ns.m"));
    }
}
