//! `LiteLLMVectorStore` against `/vector_store/*`.
//!
//! The id is chosen before the create (the external name,
//! `<namespace>.<name>` by default), so a create whose answer was lost is
//! found by the next observation under that id. LiteLLM keeps
//! `vector_store_metadata` as given and its update replaces it whole: the
//! ownership marker goes there, and every write sends it.
//!
//! LiteLLM's update writes the provider, name, description and metadata
//! only; it ignores `litellm_params` and `litellm_credential_name`. A
//! change of `forProvider.litellmParams` (its credential, a parameter, or
//! the value of a Secret it reads) therefore deletes the vector store and
//! creates it again under the same id ([`VectorStoreRequest::recreate`]);
//! a recreate interrupted after the delete is a vector store found absent,
//! which the next reconciliation creates.
//!
//! `litellmParams` are a model's `litellm_params` that reach a provider
//! (the model's fields, under the same names): the vector store is read
//! through the model's [`LiteLLMParams`] ([`as_model`]) so that the
//! secrets, their fingerprints, the plain parameters and every tenancy
//! rule are those of [`crate::provider::kinds::upstream`] and
//! [`crate::provider::kinds::model::tenant_refusal`]. LiteLLM redacts
//! every secret-looking parameter when it reads a vector store back
//! (`REDACTED_BY_LITELM`); the fingerprints of the values last written are
//! kept in `status.atProvider.secretFingerprints`.
//!
//! Teams and keys name a vector store in `objectPermission`
//! (`vectorStoreRefs`, resolved to its id, or its raw id): its deletion
//! waits for them ([`Joins::VectorStore`]).
//!
//! Refused from every namespace, before anything is sent: a Secret whose
//! value is `os.environ/...`, a secret-looking name in `additionalParams`.
//! Outside the LiteLLMInstance's namespace, a vector store follows the
//! rules of a tenant's model for its provider family (see
//! [`tenant_refusal`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::credential::{CredentialParameters, LiteLLMCredential};
use crate::api::model::{LiteLLMParams, ModelParameters};
use crate::api::vector_store::{LiteLLMVectorStore, VectorStoreObservation, VectorStoreParameters};
use crate::litellm::vector_stores::{VectorStore, VectorStoreRequest};
use crate::litellm::{self};

use crate::provider::kinds::model;
use crate::provider::kinds::upstream::families::TENANT;
use crate::provider::kinds::upstream::params as mp;
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, Diff};
use crate::provider::managed::mapped::{Fingerprints, Mapped, Mapping, SecretValues};
use crate::provider::managed::ownership::{metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::joins::{join, Join, Joins};

/// `litellm_params` name of the provider, which a vector store sets at the
/// top level (`forProvider.customLlmProvider`), never in `litellm_params`.
const CUSTOM_LLM_PROVIDER: &str = "custom_llm_provider";

/// The vector store's `litellmParams` as a model's (no `model`: the
/// provider names the family), for the shared parameter tables and rules.
pub fn as_model(params: &VectorStoreParameters) -> ModelParameters {
    let p = params.litellm_params.clone().unwrap_or_default();
    ModelParameters {
        litellm_params: LiteLLMParams {
            api_base: p.api_base,
            api_version: p.api_version,
            api_key_secret_ref: p.api_key_secret_ref,
            credential_ref: p.credential_ref,
            aws: p.aws,
            vertex: p.vertex,
            azure: p.azure,
            additional_params: p.additional_params,
            custom_llm_provider: Some(params.custom_llm_provider.clone()),
            ..LiteLLMParams::default()
        },
        ..ModelParameters::default()
    }
}

/// The plain `litellm_params` the vector store sends (the provider is sent
/// at the top level).
fn plain(p: &LiteLLMParams) -> Map<String, Value> {
    let mut plain = mp::plain(p);
    plain.remove(CUSTOM_LLM_PROVIDER);
    plain
}

/// Why a vector store outside the LiteLLMInstance's namespace must not be
/// written, naming the field and never a value: the proxy calls the
/// vector store's provider with its `litellm_params` and falls back on its
/// own credentials (module settings, environment, cloud identity) for
/// whatever they leave out, as for a model. So it follows a tenant's
/// model's rules: the credentials that pre-empt every fallback of its
/// provider family from its own Secrets or its own `LiteLLMCredential`, a
/// family whose fallbacks are not known refused, no `os.environ/`, no
/// parameter or value that selects the proxy's identity or files.
pub fn tenant_refusal(
    params: &VectorStoreParameters,
    refs: &Resolved,
    credential: Option<&CredentialParameters>,
) -> Option<String> {
    model::tenant_refusal(&as_model(params), refs, credential).map(|why| {
        // The model's words, for a vector store: its provider is a field
        // of its own, and only the instance's namespace is the platform's.
        let why = why
            .replace("litellmParams.customLlmProvider", "customLlmProvider")
            .replace(TENANT, "outside the LiteLLMInstance's namespace")
            .replace("a model ", "a vector store ");
        format!("LiteLLMVectorStore outside the LiteLLMInstance's namespace: {why}")
    })
}

/// Why the vector store must not be written, from any namespace.
pub fn refusal(params: &VectorStoreParameters, refs: &Resolved) -> Option<String> {
    let m = as_model(params);
    let p = &m.litellm_params;
    mp::secret_refusal(p, refs).or_else(|| mp::additional_refusal(p, &Map::new()))
}

/// Create and update body: every field, the secrets from their Secrets,
/// the credential by the name its reference resolved to, and the metadata
/// with the marker. `recreate`: see [`VectorStoreRequest::recreate`].
pub fn request(
    id: &str,
    params: &VectorStoreParameters,
    refs: &Resolved,
    owner: &Owner,
    recreate: bool,
) -> VectorStoreRequest {
    let m = as_model(params);
    let p = &m.litellm_params;
    let mut litellm_params = plain(p);
    if let Some(base) = &p.api_base {
        litellm_params.insert("api_base".into(), Value::from(base.clone()));
    }
    if let Some(version) = &p.api_version {
        litellm_params.insert("api_version".into(), Value::from(version.clone()));
    }
    for (name, secret) in mp::secrets(p, refs) {
        litellm_params.insert(name.into(), Value::from(secret.expose().to_owned()));
    }
    VectorStoreRequest {
        vector_store_id: id.to_owned(),
        custom_llm_provider: params.custom_llm_provider.clone(),
        vector_store_name: params.vector_store_name.clone(),
        vector_store_description: params.vector_store_description.clone(),
        vector_store_metadata: metadata_with_marker(params.vector_store_metadata.as_ref(), owner),
        litellm_params: Some(litellm_params),
        litellm_credential_name: refs.id(mp::CREDENTIAL_REF).map(str::to_owned),
        recreate,
    }
}

/// Whether correcting `drift` needs a recreate: a field of
/// `litellmParams`, which LiteLLM's update does not write.
pub fn needs_recreate(drift: &Diff) -> bool {
    drift
        .fields()
        .iter()
        .any(|f| f.starts_with("litellmParams"))
}

/// The fields of `params` the live vector store does not match; secrets
/// are compared by fingerprint, in `observe`. The credential is compared
/// by the name its reference resolved to (one the vector store does not
/// name is drift), plain parameters by their `litellm_params` name.
pub fn diff(
    params: &VectorStoreParameters,
    refs: &Resolved,
    live: &VectorStore,
    owner: &Owner,
) -> Diff {
    let m = as_model(params);
    let p = &m.litellm_params;
    let empty = Map::new();
    let l = live.litellm_params.as_ref().unwrap_or(&empty);
    let text = |name: &str| l.get(name).and_then(Value::as_str).map(str::to_owned);
    let mut diff = Diff::new();
    diff.field(
        "customLlmProvider",
        Some(&params.custom_llm_provider),
        Some(&live.custom_llm_provider),
    );
    diff.field(
        "vectorStoreName",
        params.vector_store_name.as_ref(),
        live.vector_store_name.as_ref(),
    );
    diff.field(
        "vectorStoreDescription",
        params.vector_store_description.as_ref(),
        live.vector_store_description.as_ref(),
    );
    diff.metadata(
        "vectorStoreMetadata",
        &metadata_with_marker(params.vector_store_metadata.as_ref(), owner),
        live.vector_store_metadata.as_ref(),
    );
    if refs.id(mp::CREDENTIAL_REF) != live.litellm_credential_name.as_deref() {
        diff.mark(mp::CREDENTIAL_REF);
    }
    if p.api_base != text("api_base") {
        diff.mark("litellmParams.apiBase");
    }
    if p.api_version != text("api_version") {
        diff.mark("litellmParams.apiVersion");
    }
    for (name, want) in plain(p) {
        if !l.get(&name).is_some_and(|have| mp::same_json(&want, have)) {
            diff.mark(mp::plain_field(&name));
        }
    }
    diff
}

/// The name and description, when the spec leaves them out.
pub fn late_init(
    params: &VectorStoreParameters,
    live: &VectorStore,
) -> Option<VectorStoreParameters> {
    let mut filled = params.clone();
    let changed = [
        diff::late_init(
            &mut filled.vector_store_name,
            live.vector_store_name.clone(),
        ),
        diff::late_init(
            &mut filled.vector_store_description,
            live.vector_store_description.clone(),
        ),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(
    live: &VectorStore,
    fingerprints: Option<Fingerprints>,
) -> VectorStoreObservation {
    VectorStoreObservation {
        vector_store_id: Some(live.vector_store_id.clone()),
        vector_store_name: live.vector_store_name.clone(),
        custom_llm_provider: Some(live.custom_llm_provider.clone()),
        credential_name: live.litellm_credential_name.clone(),
        created_at: live.created_at.clone(),
        updated_at: live.updated_at.clone(),
        secret_fingerprints: fingerprints,
    }
}

/// `/vector_store/*` for one reconciliation.
pub struct VectorStoreMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
    kube: crate::provider::watch::cache::Kube,
}

impl VectorStoreMapping {
    fn tenant(&self) -> bool {
        self.owner.namespace != self.instance_namespace
    }

    /// The spec of the vector store's `LiteLLMCredential`, from the shared
    /// cache (none without `credentialRef`, or when it is gone).
    async fn credential(
        &self,
        params: &VectorStoreParameters,
    ) -> Result<Option<CredentialParameters>, ExternalError> {
        let Some(credential) = params
            .litellm_params
            .as_ref()
            .and_then(|p| p.credential_ref.as_ref())
        else {
            return Ok(None);
        };
        let cached = self
            .kube
            .get::<LiteLLMCredential>(&self.owner.namespace, &credential.name)
            .await?;
        Ok(cached.map(|c| c.spec.for_provider.clone()))
    }

    /// The create/update body, or why it may not be written (before
    /// anything is sent).
    async fn body(
        &self,
        id: &str,
        params: &VectorStoreParameters,
        recreate: bool,
    ) -> Result<VectorStoreRequest, ExternalError> {
        let mut why = refusal(params, &self.refs);
        if why.is_none() && self.tenant() {
            let credential = self.credential(params).await?;
            why = tenant_refusal(params, &self.refs, credential.as_ref());
        }
        if let Some(why) = why {
            return Err(ExternalError::Invalid(why));
        }
        Ok(request(id, params, &self.refs, &self.owner, recreate))
    }
}

impl ManagedKind for LiteLLMVectorStore {
    type Parameters = VectorStoreParameters;
    type AtProvider = VectorStoreObservation;
    type External = Mapped<VectorStoreMapping>;
    const NOUN: &'static str = "vector store";
    const JOINS: &'static [Joins] = &[Joins::Credential];
    /// Teams and keys whose `objectPermission` names it: its deletion
    /// waits for them.
    const JOINED_AS: Option<Joins> = Some(Joins::VectorStore);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &VectorStoreParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<VectorStoreObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        mp::references(&as_model(&self.spec.for_provider).litellm_params)
    }
    /// The credential of `credentialRef`: its deletion waits for this
    /// vector store (LiteLLM would call the provider without it).
    fn joins(&self) -> Vec<Join> {
        let credential = self
            .spec
            .for_provider
            .litellm_params
            .as_ref()
            .and_then(|p| p.credential_ref.as_ref());
        join(Joins::Credential, credential, None)
            .into_iter()
            .collect()
    }
    fn connect(connection: Connection) -> Mapped<VectorStoreMapping> {
        Mapped(VectorStoreMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
            kube: connection.kube,
        })
    }
}

impl Mapping<LiteLLMVectorStore> for VectorStoreMapping {
    type Live = VectorStore;
    type Request = VectorStoreRequest;

    async fn read(
        &self,
        _: &LiteLLMVectorStore,
        id: &str,
    ) -> Result<Option<VectorStore>, ExternalError> {
        Ok(self.client.vector_store_info(id).await?)
    }
    fn owner(&self, _: &str, live: &VectorStore) -> Option<Owner> {
        Owner::from_metadata(live.vector_store_metadata.as_ref())
    }
    fn drift(&self, mr: &LiteLLMVectorStore, _: &str, live: &VectorStore) -> Diff {
        diff(&mr.spec.for_provider, &self.refs, live, &self.owner)
    }
    fn late_init(
        &self,
        params: &VectorStoreParameters,
        live: &VectorStore,
    ) -> Option<VectorStoreParameters> {
        late_init(params, live)
    }
    fn at_provider(
        &self,
        live: &VectorStore,
        fingerprints: Option<Fingerprints>,
    ) -> VectorStoreObservation {
        at_provider(live, fingerprints)
    }
    fn connection_details(&self, live: &VectorStore) -> BTreeMap<String, String> {
        BTreeMap::from([("vectorStoreId".to_owned(), live.vector_store_id.clone())])
    }
    /// A field whose Secret changed since it was written is drift of that
    /// field (and so a recreate).
    fn secret_values(&self, mr: &LiteLLMVectorStore) -> Option<SecretValues> {
        let m = as_model(&mr.spec.for_provider);
        let current = mp::fingerprints(&m.litellm_params, &self.refs);
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        let changed = mp::changed_secrets(&values);
        Some(values.drifting(true, &changed))
    }
    fn before_create(
        &self,
        _: &LiteLLMVectorStore,
        id: &str,
        fingerprints: Option<Fingerprints>,
    ) -> Option<VectorStoreObservation> {
        Some(VectorStoreObservation {
            vector_store_id: Some(id.to_owned()),
            secret_fingerprints: fingerprints,
            ..VectorStoreObservation::default()
        })
    }

    async fn request(
        &self,
        mr: &LiteLLMVectorStore,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<VectorStoreRequest, ExternalError> {
        let recreate = drift.is_some_and(needs_recreate);
        self.body(id, &mr.spec.for_provider, recreate).await
    }
    async fn send_create(
        &self,
        request: &VectorStoreRequest,
    ) -> Result<Option<String>, ExternalError> {
        self.client.vector_store_new(request).await?;
        Ok(None)
    }
    /// A recreate deletes (a vector store already gone is fine) and
    /// creates under the same id.
    async fn send_update(&self, request: &VectorStoreRequest) -> Result<(), ExternalError> {
        if request.recreate {
            self.client
                .vector_store_delete(&request.vector_store_id)
                .await?;
            self.client.vector_store_new(request).await?;
        } else {
            self.client.vector_store_update(request).await?;
        }
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.vector_store_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::common::{LocalRef, SecretKeySelector};
    use crate::api::vector_store::VectorStoreLiteLLMParams;
    use crate::litellm::vector_stores::REDACTED;
    use crate::litellm::Secret;
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner {
            cluster: "c".into(),
            namespace: "ns".into(),
            name: "docs".into(),
            uid: "u".into(),
        }
    }

    fn key() -> Option<SecretKeySelector> {
        Some(SecretKeySelector {
            name: "openai".into(),
            key: "apiKey".into(),
        })
    }

    fn params() -> VectorStoreParameters {
        VectorStoreParameters {
            custom_llm_provider: "openai".into(),
            vector_store_name: Some("docs".into()),
            vector_store_description: None,
            vector_store_metadata: Some([("team".to_owned(), Value::from("a"))].into()),
            litellm_params: Some(VectorStoreLiteLLMParams {
                api_base: Some("https://api.openai.example/v1".into()),
                api_key_secret_ref: key(),
                additional_params: Some(
                    [(
                        "litellm_embedding_model".to_owned(),
                        json!("text-embedding-3-small"),
                    )]
                    .into(),
                ),
                ..VectorStoreLiteLLMParams::default()
            }),
        }
    }

    fn refs() -> Resolved {
        Resolved::default().with_secret(mp::API_KEY_REF, Secret::new("sk-vs-1"))
    }

    fn live() -> VectorStore {
        VectorStore {
            vector_store_id: "ns.docs".into(),
            custom_llm_provider: "openai".into(),
            vector_store_name: Some("docs".into()),
            vector_store_metadata: Some(
                json!({"team": "a", MARKER_KEY: me().marker()})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            // As LiteLLM stores and shows them: numbers as floats, its
            // defaults added, the key redacted.
            litellm_params: Some(
                json!({"api_base": "https://api.openai.example/v1", "litellm_embedding_model": "text-embedding-3-small",
                       "api_key": REDACTED, "use_in_pass_through": false})
                .as_object()
                .unwrap()
                .clone(),
            ),
            ..VectorStore::default()
        }
    }

    #[test]
    fn the_request_sends_secrets_in_litellm_params_and_the_marker_in_metadata() {
        let named = refs().with_id(mp::CREDENTIAL_REF, "ns.openai");
        let body =
            serde_json::to_value(request("ns.docs", &params(), &named, &me(), false)).unwrap();
        assert_eq!(body["vector_store_id"], "ns.docs");
        assert_eq!(body["custom_llm_provider"], "openai");
        assert_eq!(body["litellm_params"]["api_key"], "sk-vs-1");
        assert_eq!(
            body["litellm_params"]["litellm_embedding_model"],
            "text-embedding-3-small"
        );
        assert!(body["litellm_params"].get(CUSTOM_LLM_PROVIDER).is_none());
        assert_eq!(body["litellm_credential_name"], "ns.openai");
        assert_eq!(body["vector_store_metadata"]["team"], "a");
        assert_eq!(
            Owner::from_metadata(body["vector_store_metadata"].as_object()),
            Some(me())
        );
    }

    #[test]
    fn diff_table_and_which_drift_needs_a_recreate() {
        assert!(diff(&params(), &refs(), &live(), &me()).is_empty());
        type Case = (
            &'static str,
            fn(&mut VectorStore),
            &'static [&'static str],
            bool,
        );
        let cases: [Case; 7] = [
            (
                "renamed in the UI",
                |l| l.vector_store_name = Some("x".into()),
                &["vectorStoreName"],
                false,
            ),
            (
                "provider changed",
                |l| l.custom_llm_provider = "bedrock".into(),
                &["customLlmProvider"],
                false,
            ),
            (
                "marker lost",
                |l| drop(l.vector_store_metadata.as_mut().unwrap().remove(MARKER_KEY)),
                &["vectorStoreMetadata"],
                false,
            ),
            (
                "metadata value changed",
                |l| {
                    drop(
                        l.vector_store_metadata
                            .as_mut()
                            .unwrap()
                            .insert("team".into(), json!("b")),
                    )
                },
                &["vectorStoreMetadata"],
                false,
            ),
            (
                "a credential it does not name",
                |l| l.litellm_credential_name = Some("other".into()),
                &[mp::CREDENTIAL_REF],
                true,
            ),
            (
                "api base changed",
                |l| {
                    drop(
                        l.litellm_params
                            .as_mut()
                            .unwrap()
                            .insert("api_base".into(), json!("https://x")),
                    )
                },
                &["litellmParams.apiBase"],
                true,
            ),
            (
                "a parameter removed",
                |l| {
                    drop(
                        l.litellm_params
                            .as_mut()
                            .unwrap()
                            .remove("litellm_embedding_model"),
                    )
                },
                &[mp::ADDITIONAL_PARAMS],
                true,
            ),
        ];
        for (case, change, fields, recreate) in cases {
            let mut l = live();
            change(&mut l);
            let d = diff(&params(), &refs(), &l, &me());
            assert_eq!(d.fields(), fields, "{case}");
            assert_eq!(needs_recreate(&d), recreate, "{case}");
        }
        // Unset name and description are late-initialized, not drift.
        let mut open = params();
        open.vector_store_name = None;
        let mut l = live();
        l.vector_store_description = Some("d".into());
        assert!(diff(&open, &refs(), &l, &me()).is_empty());
        let filled = late_init(&open, &l).unwrap();
        assert_eq!(filled.vector_store_name.as_deref(), Some("docs"));
        assert_eq!(filled.vector_store_description.as_deref(), Some("d"));
    }

    #[test]
    fn a_tenants_vector_store_follows_a_tenants_model_rules() {
        let credential = CredentialParameters {
            values: vec![crate::api::credential::CredentialValue {
                name: "api_key".into(),
                secret_key_ref: SecretKeySelector {
                    name: "s".into(),
                    key: "k".into(),
                },
            }],
            ..CredentialParameters::default()
        };
        let keyless = || {
            let mut p = params();
            p.litellm_params.as_mut().unwrap().api_key_secret_ref = None;
            p
        };
        let with_credential = || {
            let mut p = keyless();
            p.litellm_params.as_mut().unwrap().credential_ref = Some(LocalRef {
                name: "openai".into(),
            });
            p
        };
        assert_eq!(tenant_refusal(&params(), &refs(), None), None);
        assert_eq!(
            tenant_refusal(&with_credential(), &Resolved::default(), Some(&credential)),
            None
        );
        let unknown = || {
            let mut p = params();
            p.custom_llm_provider = "pg_vector".into();
            p
        };
        let environment = || {
            let mut p = params();
            p.litellm_params.as_mut().unwrap().additional_params =
                Some([("api_base".to_owned(), json!("os.environ/X"))].into());
            p
        };
        let environment_key = Resolved::default()
            .with_secret(mp::API_KEY_REF, Secret::new("os.environ/OPENAI_API_KEY"));
        let cases = [
            (
                "no key of its own",
                keyless(),
                refs(),
                None,
                "litellmParams.apiKeySecretRef",
            ),
            (
                "no key of its own",
                keyless(),
                refs(),
                None,
                "openai family",
            ),
            (
                "a family whose fallbacks are unknown",
                unknown(),
                refs(),
                None,
                "customLlmProvider",
            ),
            (
                "os.environ in a parameter",
                environment(),
                refs(),
                None,
                "additionalParams.api_base",
            ),
            (
                "os.environ in its Secret",
                params(),
                environment_key.clone(),
                None,
                "os.environ",
            ),
        ];
        for (case, p, refs, credential, names) in cases {
            let why = tenant_refusal(&p, &refs, credential).unwrap_or_default();
            assert!(why.contains(names), "{case}: {why}");
            assert!(
                !why.contains("sk-vs-1") && !why.contains("os.environ/OPENAI"),
                "{case}: {why}"
            );
            assert!(!why.contains("a model "), "{case}: {why}");
        }
        // From every namespace: an os.environ/ Secret, a secret in clear.
        assert!(refusal(&params(), &environment_key)
            .is_some_and(|w| w.contains("litellmParams.apiKeySecretRef")));
        let mut clear = params();
        clear.litellm_params.as_mut().unwrap().additional_params =
            Some([("api_key".to_owned(), json!("sk-x"))].into());
        assert!(refusal(&clear, &refs()).is_some_and(|w| w.contains("additionalParams.api_key")));
        assert_eq!(refusal(&params(), &refs()), None);
    }
}
