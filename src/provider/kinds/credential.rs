//! `LiteLLMCredential` against `/credentials`.
//!
//! The ownership marker goes into `credential_info`, which LiteLLM keeps in
//! plain text beside the user's `credentialInfo` (so neither holds a
//! secret); an update replaces it in LiteLLM's database, so every write
//! sends it whole.
//!
//! LiteLLM never returns a value it masks, and the provider compares none
//! it reads from a Secret: the fingerprint of each value last written is
//! kept in `status.atProvider.secretFingerprints` (see [`values_fingerprints`],
//! recorded as a model's are, by [`SecretValues`]), so a changed
//! Secret is drift and is written again. Plain values are compared with
//! what LiteLLM stores, which is why a name LiteLLM masks may not be one. A resource's values are the whole
//! set: a value LiteLLM holds under another name is drift, and is removed.
//!
//! The status a reconciliation starts from is never older than the
//! provider's last write of it (the reconciler waits for its cache to catch
//! up), so the fingerprint recorded after a write is the one compared next.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::common::{ManagedFields, ManagedStatus};
use crate::api::credential::{CredentialObservation, CredentialParameters, LiteLLMCredential};
use crate::api::LiteLLMModel;
use crate::litellm::{self, masked_when_read, Credential, CredentialRequest, Secret};

use crate::provider::kinds::upstream::families;
use crate::provider::kinds::upstream::params::names_environment;
use crate::provider::managed::contract::{Connection, ExternalError, ManagedKind};
use crate::provider::managed::diff::{self, user_metadata, Diff};
use crate::provider::managed::mapped::{
    values_fingerprints, Fingerprints, Mapped, Mapping, SecretValues,
};
use crate::provider::managed::ownership::{metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};
use crate::provider::watch::cache::Kube;
use crate::provider::watch::joins::Joins;

/// `forProvider.values`: the field of the Secret references and of their
/// drift.
const VALUES: &str = "values";
const PLAIN_VALUES: &str = "plainValues";

/// Why the values must not be written, from any namespace; names the field,
/// never a value. `os.environ/...` makes LiteLLM read that variable of the
/// proxy, and a plain value under a name LiteLLM masks could never be
/// compared (nor should it be readable in the resource).
pub fn refusal(
    params: &CredentialParameters,
    secrets: &BTreeMap<String, Secret>,
) -> Option<String> {
    let environment = "makes LiteLLM read an environment variable of the proxy";
    if let Some(name) = secrets
        .iter()
        .find_map(|(name, value)| names_environment(value.expose()).then_some(name))
    {
        return Some(format!(
            "forProvider.values[{name}]: the Secret's value has the form os.environ/..., which \
             {environment}; a Secret must hold the value itself"
        ));
    }
    for (name, value) in &params.plain_values {
        if masked_when_read(name) {
            return Some(format!(
                "forProvider.plainValues.{name}: LiteLLM masks the value of this name when it \
                 reads it back, so it is a secret: give it in forProvider.values, from a Secret"
            ));
        }
        if names_environment(value) {
            return Some(format!(
                "forProvider.plainValues.{name}: a value of the form os.environ/... {environment}"
            ));
        }
    }
    None
}

/// Why a credential outside the platform's namespaces (a tenant's) must
/// not be written, naming the field and never a value: a value or setting
/// that selects the proxy's own identity or files, or that LiteLLM would
/// dereference into them (see [`crate::provider::kinds::upstream::families`]), or an empty Secret
/// (LiteLLM would fall back on the proxy's own). Whether the credential
/// holds what its models' families need is asked of each model that uses
/// it (see [`CredentialMapping::users_refusal`]).
pub fn tenant_refusal(
    params: &CredentialParameters,
    secrets: &BTreeMap<String, Secret>,
) -> Option<String> {
    for (name, value) in secrets {
        if let Some(why) = families::refused_secret(name, Some(value.expose())) {
            return Some(format!("{VALUES}[{name}]: {why}"));
        }
    }
    for (name, value) in &params.plain_values {
        if let Some(why) = families::refused_setting(name, &Value::String(value.clone())) {
            return Some(format!("{PLAIN_VALUES}.{name}: {why}"));
        }
    }
    None
}

/// Create and update body: every value (from the Secrets and plain), the
/// user's `credentialInfo` with the marker, and the display name if set.
pub fn request(
    id: &str,
    params: &CredentialParameters,
    secrets: &BTreeMap<String, Secret>,
    owner: &Owner,
) -> CredentialRequest {
    let plain = params
        .plain_values
        .iter()
        .map(|(name, value)| (name.clone(), Secret::new(value.clone())));
    CredentialRequest {
        credential_name: id.to_owned(),
        credential_values: secrets.clone().into_iter().chain(plain).collect(),
        credential_info: metadata_with_marker(params.credential_info.as_ref(), owner),
        credential_values_to_delete: Vec::new(),
        display_name: params.display_name.clone(),
    }
}

/// Whether `name` is one of the values `params` gives.
fn wanted(params: &CredentialParameters, name: &str) -> bool {
    params.values.iter().any(|v| v.name == name) || params.plain_values.contains_key(name)
}

/// The names LiteLLM holds that `params` does not give: removed by an
/// update.
pub fn unwanted(params: &CredentialParameters, live: &Credential) -> Vec<String> {
    live.credential_values
        .keys()
        .filter(|name| !wanted(params, name))
        .cloned()
        .collect()
}

/// The fields of `params` the live credential does not match, the values
/// from Secrets only by their names (their fingerprint is compared in
/// `observe`). LiteLLM trims the display name it stores.
pub fn diff(params: &CredentialParameters, live: &Credential, owner: &Owner) -> Diff {
    let values = &live.credential_values;
    let mut diff = Diff::new();
    let missing = params.values.iter().any(|v| !values.contains_key(&v.name));
    if missing || !unwanted(params, live).is_empty() {
        diff.mark(VALUES);
    }
    let plain_differs = params
        .plain_values
        .iter()
        .any(|(name, want)| values.get(name).and_then(Value::as_str) != Some(want.as_str()));
    if plain_differs {
        diff.mark(PLAIN_VALUES);
    }
    diff.field(
        "displayName",
        params.display_name.as_deref().map(str::trim),
        live.display_name.as_deref(),
    );
    diff.metadata(
        "credentialInfo",
        &metadata_with_marker(params.credential_info.as_ref(), owner),
        live.credential_info.as_ref(),
    );
    diff
}

/// `params` with the display name and `credentialInfo` filled from the live
/// credential where unset; never values.
pub fn late_init(params: &CredentialParameters, live: &Credential) -> Option<CredentialParameters> {
    let mut filled = params.clone();
    let changed = [
        diff::late_init(&mut filled.display_name, live.display_name.clone()),
        diff::late_init(
            &mut filled.credential_info,
            user_metadata(live.credential_info.as_ref()),
        ),
    ];
    changed.contains(&true).then_some(filled)
}

pub fn at_provider(
    live: &Credential,
    secret_fingerprints: Option<BTreeMap<String, String>>,
) -> CredentialObservation {
    CredentialObservation {
        credential_name: Some(live.credential_name.clone()),
        display_name: live.display_name.clone(),
        value_names: Some(live.credential_values.keys().cloned().collect()),
        secret_fingerprints,
    }
}

/// `/credentials` for one reconciliation.
pub struct CredentialMapping {
    client: litellm::Client,
    owner: Owner,
    refs: Resolved,
    /// Whether the credential's namespace is one of the platform's (see
    /// `spec.publicModelNamespaces` of the instance).
    public: bool,
    kube: Kube,
}

impl CredentialMapping {
    /// The values resolved from the Secrets.
    fn secrets(&self) -> BTreeMap<String, Secret> {
        self.refs.secret_set(VALUES).cloned().unwrap_or_default()
    }

    /// The create/update body, or why the values may not be written (before
    /// anything is sent).
    async fn body(
        &self,
        id: &str,
        params: &CredentialParameters,
    ) -> Result<CredentialRequest, ExternalError> {
        let secrets = self.secrets();
        let refused = refusal(params, &secrets).or_else(|| {
            (!self.public)
                .then(|| tenant_refusal(params, &secrets))
                .flatten()
        });
        if let Some(why) = refused {
            return Err(ExternalError::Invalid(why));
        }
        if !self.public {
            if let Some(why) = self.users_refusal(params).await? {
                return Err(ExternalError::Invalid(why));
            }
        }
        Ok(request(id, params, &secrets, &self.owner))
    }

    /// Why a tenant's credential may not be written as it stands: a model
    /// of its namespace that uses it (`credentialRef`) would then lack what
    /// its family needs, and LiteLLM would fill the gap from the proxy's
    /// own credentials. Read from the API server, so a model just created
    /// counts; the model's own Secret references count as given (its own
    /// reconciliation checks their values).
    async fn users_refusal(
        &self,
        params: &CredentialParameters,
    ) -> Result<Option<String>, ExternalError> {
        let name = self.owner.name.as_str();
        let models = self
            .kube
            .list_live::<LiteLLMModel>(&self.owner.namespace)
            .await?;
        for model in models.iter() {
            let Ok(model) = model.read() else { continue };
            let p = &model.spec.for_provider;
            let uses = p
                .litellm_params
                .credential_ref
                .as_ref()
                .is_some_and(|r| r.name == name);
            if !uses {
                continue;
            }
            if let Some(why) =
                crate::provider::kinds::upstream::families::family_refusal_as_written(p, params)
            {
                return Ok(Some(format!(
                    "{VALUES}: the LiteLLMModel {} uses this credential, and would then break \
                     the tenancy rules: {why}",
                    kube::ResourceExt::name_any(&*model)
                )));
            }
        }
        Ok(None)
    }
}

impl ManagedKind for LiteLLMCredential {
    type Parameters = CredentialParameters;
    type AtProvider = CredentialObservation;
    type External = Mapped<CredentialMapping>;
    const NOUN: &'static str = "credential";
    /// Models of its namespace that use it: LiteLLM would delete it under
    /// them, and they would fail.
    const JOINED_AS: Option<Joins> = Some(Joins::Credential);

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &CredentialParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<CredentialObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let values = &self.spec.for_provider.values;
        if values.is_empty() {
            return Vec::new();
        }
        let entries = values
            .iter()
            .map(|v| (v.name.clone(), v.secret_key_ref.clone()))
            .collect();
        vec![Reference::Secrets {
            field: VALUES,
            entries,
        }]
    }
    fn connect(connection: Connection) -> Mapped<CredentialMapping> {
        Mapped(CredentialMapping {
            client: connection.litellm,
            owner: connection.owner,
            refs: connection.refs,
            public: connection.public_models,
            kube: connection.kube,
        })
    }
}

/// Every write sends every value and the whole `credential_info`.
impl Mapping<LiteLLMCredential> for CredentialMapping {
    type Live = Credential;
    type Request = CredentialRequest;

    async fn read(
        &self,
        _: &LiteLLMCredential,
        id: &str,
    ) -> Result<Option<Credential>, ExternalError> {
        Ok(self.client.credential_get(id).await?)
    }
    fn owner(&self, _: &str, live: &Credential) -> Option<Owner> {
        Owner::from_metadata(live.credential_info.as_ref())
    }
    fn drift(&self, mr: &LiteLLMCredential, _: &str, live: &Credential) -> Diff {
        diff(&mr.spec.for_provider, live, &self.owner)
    }
    fn late_init(
        &self,
        params: &CredentialParameters,
        live: &Credential,
    ) -> Option<CredentialParameters> {
        late_init(params, live)
    }
    fn at_provider(
        &self,
        live: &Credential,
        fingerprints: Option<Fingerprints>,
    ) -> CredentialObservation {
        at_provider(live, fingerprints)
    }
    fn connection_details(&self, live: &Credential) -> BTreeMap<String, String> {
        BTreeMap::from([("credentialName".to_owned(), live.credential_name.clone())])
    }

    /// A value whose Secret changed since it was written is drift of
    /// `values`.
    fn secret_values(&self, mr: &LiteLLMCredential) -> Option<SecretValues> {
        let current = values_fingerprints(&self.secrets());
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        let changed = values.changed().next().is_some();
        Some(values.drifting(changed, &[VALUES]))
    }
    fn before_create(
        &self,
        _: &LiteLLMCredential,
        id: &str,
        fingerprints: Option<Fingerprints>,
    ) -> Option<CredentialObservation> {
        Some(CredentialObservation {
            credential_name: Some(id.to_owned()),
            secret_fingerprints: fingerprints,
            ..CredentialObservation::default()
        })
    }

    /// An update also removes the values LiteLLM holds beyond them (read
    /// again, so nothing another writer added meanwhile survives unseen).
    async fn request(
        &self,
        mr: &LiteLLMCredential,
        id: &str,
        drift: Option<&Diff>,
    ) -> Result<CredentialRequest, ExternalError> {
        let params = &mr.spec.for_provider;
        let mut request = self.body(id, params).await?;
        if drift.is_some() {
            if let Some(live) = self.client.credential_get(id).await? {
                request.credential_values_to_delete = unwanted(params, &live);
            }
        }
        Ok(request)
    }
    async fn send_create(
        &self,
        request: &CredentialRequest,
    ) -> Result<Option<String>, ExternalError> {
        self.client.credential_new(request).await?;
        Ok(None)
    }
    async fn send_update(&self, request: &CredentialRequest) -> Result<(), ExternalError> {
        self.client.credential_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.credential_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::credential::CredentialValue;
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("openai")
    }

    fn params() -> CredentialParameters {
        CredentialParameters {
            values: vec![CredentialValue {
                name: "api_key".into(),
                secret_key_ref: SecretKeySelector {
                    name: "openai".into(),
                    key: "apiKey".into(),
                },
            }],
            plain_values: BTreeMap::from([("api_base".to_owned(), "http://up/v1".to_owned())]),
            display_name: Some("OpenAI".into()),
            credential_info: Some([("custom_llm_provider".to_owned(), json!("openai"))].into()),
        }
    }

    fn secrets(key: &str) -> BTreeMap<String, Secret> {
        BTreeMap::from([("api_key".to_owned(), Secret::new(key))])
    }

    /// As LiteLLM 1.108.7 reports the credential `request` created.
    fn live() -> Credential {
        let mut info = metadata_with_marker(params().credential_info.as_ref(), &me());
        info.insert("left_in_memory".into(), json!(1));
        Credential {
            credential_name: "ns.openai".into(),
            display_name: Some("OpenAI".into()),
            credential_info: Some(info),
            credential_values: json!({"api_key": "sk****90", "api_base": "http://up/v1"})
                .as_object()
                .unwrap()
                .clone(),
        }
    }

    #[test]
    fn the_request_sends_every_value_the_info_and_the_marker() {
        let body =
            serde_json::to_value(request("ns.openai", &params(), &secrets("sk-1"), &me())).unwrap();
        assert_eq!(
            body["credential_values"],
            json!({"api_key": "sk-1", "api_base": "http://up/v1"})
        );
        assert_eq!(body["credential_info"]["custom_llm_provider"], "openai");
        assert_eq!(body["credential_info"][MARKER_KEY]["namespace"], "ns");
        assert_eq!(body["display_name"], "OpenAI");
        assert!(body.get("credential_values_to_delete").is_none());
    }

    #[test]
    fn diff_table() {
        assert!(diff(&params(), &live(), &me()).is_empty(), "as created");
        type Change = Box<dyn Fn(&mut Credential)>;
        let stored = |name: &'static str, value: Value| -> Change {
            Box::new(move |l| drop(l.credential_values.insert(name.into(), value.clone())))
        };
        let cases: [(&str, Change, &[&str]); 7] = [
            (
                "a Secret value missing",
                Box::new(|l| drop(l.credential_values.remove("api_key"))),
                &["values"],
            ),
            (
                "a value nobody asked for",
                stored("extra", json!("x")),
                &["values"],
            ),
            (
                "a plain value changed in the UI",
                stored("api_base", json!("http://x")),
                &["plainValues"],
            ),
            (
                "a plain value that is no string",
                stored("api_base", json!(1)),
                &["plainValues"],
            ),
            (
                "the display name",
                Box::new(|l| l.display_name = None),
                &["displayName"],
            ),
            (
                "the marker lost",
                Box::new(|l| drop(l.credential_info.as_mut().unwrap().remove(MARKER_KEY))),
                &["credentialInfo"],
            ),
            (
                "a masked Secret value is never compared",
                stored("api_key", json!("xx****yy")),
                &[],
            ),
        ];
        for (case, change, want) in cases {
            let mut changed = live();
            change(&mut changed);
            assert_eq!(diff(&params(), &changed, &me()).fields(), want, "{case}");
        }
        let untrimmed = CredentialParameters {
            display_name: Some("  OpenAI ".into()),
            ..params()
        };
        assert!(diff(&untrimmed, &live(), &me()).is_empty(), "LiteLLM trims");
    }

    #[test]
    fn an_update_removes_exactly_the_values_nobody_gives() {
        let mut stored = live();
        stored
            .credential_values
            .insert("aws_region_name".into(), json!("eu"));
        assert_eq!(unwanted(&params(), &stored), ["aws_region_name"]);
        assert!(unwanted(&params(), &live()).is_empty());
    }

    #[test]
    fn fingerprints_identify_each_value_without_revealing_it() {
        let a = values_fingerprints(&secrets("sk-upstream-1"));
        assert_eq!(a, values_fingerprints(&secrets("sk-upstream-1")));
        assert_ne!(a, values_fingerprints(&secrets("sk-upstream-2")));
        let fingerprint = &a["api_key"];
        assert!(
            fingerprint.starts_with("sha256:") && fingerprint.len() == 7 + 16,
            "{fingerprint}"
        );
        assert!(!fingerprint.contains("upstream"));
        assert!(values_fingerprints(&BTreeMap::new()).is_empty());
        // Not a model's fingerprint of the same value.
        assert_ne!(
            *fingerprint,
            crate::provider::kinds::upstream::params::fingerprint(&Secret::new("sk-upstream-1"))
        );
    }

    #[test]
    fn values_that_read_the_proxys_environment_or_plain_secrets_are_refused() {
        let plain = |name: &str, value: &str| CredentialParameters {
            plain_values: BTreeMap::from([(name.to_owned(), value.to_owned())]),
            ..params()
        };
        let cases = [
            ("own values", params(), secrets("sk-up"), None),
            (
                "the proxy's environment in a Secret",
                params(),
                secrets(" OS.environ/OPENAI_API_KEY"),
                Some("forProvider.values[api_key]: "),
            ),
            (
                "the proxy's environment as plain value",
                plain("api_base", "os.environ/INTERNAL_URL"),
                secrets("sk-up"),
                Some("forProvider.plainValues.api_base: "),
            ),
            (
                "a secret as plain value",
                plain("aws_secret_access_key", "AKIAPLAIN"),
                secrets("sk-up"),
                Some("forProvider.plainValues.aws_secret_access_key: "),
            ),
        ];
        for (case, params, secrets, want) in cases {
            let got = refusal(&params, &secrets);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    for value in ["OPENAI_API_KEY", "INTERNAL_URL", "AKIAPLAIN", "sk-up"] {
                        assert!(!message.contains(value), "{case}: {message}");
                    }
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn a_tenants_credential_lends_no_identity_and_reads_nothing_of_the_proxy() {
        let value = |name: &str| CredentialValue {
            name: name.into(),
            secret_key_ref: SecretKeySelector {
                name: "s".into(),
                key: "k".into(),
            },
        };
        let with = |values: &[(&str, &str)], plain: &[(&str, &str)]| {
            let params = CredentialParameters {
                values: values.iter().map(|(n, _)| value(n)).collect(),
                plain_values: plain
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.to_string()))
                    .collect(),
                ..CredentialParameters::default()
            };
            let secrets: BTreeMap<String, Secret> = values
                .iter()
                .map(|(n, v)| (n.to_string(), Secret::new(*v)))
                .collect();
            (params, secrets)
        };
        let service_account = r#"{"type": "service_account", "private_key": "k"}"#;
        let cases = [
            ("an api key", with(&[("api_key", "sk-up")], &[]), None),
            (
                "settings only (its models say what they need)",
                with(&[], &[("api_base", "http://up")]),
                None,
            ),
            (
                "a service account's key",
                with(&[("vertex_credentials", service_account)], &[]),
                None,
            ),
            (
                "an empty key",
                with(&[("api_key", " ")], &[]),
                Some("values[api_key]: "),
            ),
            (
                "a token of the proxy's identity",
                with(&[("api_key", "oidc/env/OPENAI_API_KEY")], &[]),
                Some("values[api_key]: "),
            ),
            (
                "a service account file of the proxy's host",
                with(&[("vertex_credentials", "/var/secrets/sa.json")], &[]),
                Some("values[vertex_credentials]: "),
            ),
            (
                "a profile of the proxy",
                with(
                    &[("aws_access_key_id", "AKIA1")],
                    &[("aws_profile_name", "platform")],
                ),
                Some("plainValues.aws_profile_name: "),
            ),
            (
                "a role",
                with(
                    &[
                        ("aws_access_key_id", "AKIA1"),
                        ("aws_secret_access_key", "s"),
                    ],
                    &[("aws_role_name", "arn:aws:iam::1:role/r")],
                ),
                Some("plainValues.aws_role_name: "),
            ),
            (
                "a web identity (a pointer to the proxy's token)",
                with(
                    &[("aws_web_identity_token", "oidc/file//var/run/secrets/t")],
                    &[],
                ),
                Some("values[aws_web_identity_token]: "),
            ),
            (
                "Azure sign-in settings the proxy's environment completes",
                with(&[("api_key", "k")], &[("tenant_id", "t")]),
                Some("plainValues.tenant_id: "),
            ),
            (
                "a plain value from the proxy's identity",
                with(
                    &[("api_key", "k")],
                    &[("api_base", "oidc/google/https://x")],
                ),
                Some("plainValues.api_base: "),
            ),
        ];
        for (case, (params, secrets), want) in cases {
            let got = tenant_refusal(&params, &secrets);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    for value in ["arn:aws", "OPENAI_API_KEY", "/var/", "platform", "AKIA1"] {
                        assert!(!message.contains(value), "{case}: {message}");
                    }
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn references_late_init_and_at_provider() {
        let credential = LiteLLMCredential::new(
            "openai",
            crate::api::credential::LiteLLMCredentialSpec {
                managed: ManagedFields::default(),
                for_provider: params(),
            },
        );
        let [Reference::Secrets { field, entries }] = &credential.references()[..] else {
            panic!("{:?}", credential.references());
        };
        assert_eq!(*field, VALUES);
        assert_eq!(entries[0].0, "api_key");
        assert_eq!(entries[0].1.name, "openai");
        let bare = CredentialParameters {
            display_name: None,
            credential_info: None,
            ..params()
        };
        let filled = late_init(&bare, &live()).unwrap();
        assert_eq!(filled.display_name.as_deref(), Some("OpenAI"));
        let info = filled.credential_info.as_ref().unwrap();
        assert!(info.contains_key("custom_llm_provider") && !info.contains_key(MARKER_KEY));
        assert_eq!(
            filled.values, bare.values,
            "values are never late-initialized"
        );
        assert_eq!(late_init(&filled, &live()), None);
        let recorded = BTreeMap::from([("api_key".to_owned(), "sha256:00".to_owned())]);
        let observed = at_provider(&live(), Some(recorded.clone()));
        assert_eq!(observed.secret_fingerprints, Some(recorded));
        assert_eq!(observed.credential_name.as_deref(), Some("ns.openai"));
        assert_eq!(
            observed.value_names,
            Some(vec!["api_base".to_owned(), "api_key".to_owned()])
        );
        let text = serde_json::to_string(&observed).unwrap();
        assert!(
            !text.contains("sk****") && !text.contains("http://up"),
            "{text}"
        );
    }
}
