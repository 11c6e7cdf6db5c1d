//! `LiteLLMGuardrail` against `/guardrails`.
//!
//! LiteLLM chooses a guardrail's id (a UUID) and ignores one in the create
//! body, so the id is the external name once created: until then the
//! external name is the one chosen before the create
//! (`<namespace>.<name>`, never a UUID, so no guardrail has it as id), and
//! the create hands LiteLLM's id over ([`Creation::id`]). What is chosen
//! before the create is the guardrail's name (`guardrailName`, unique in
//! the proxy): a create whose answer was lost left a guardrail of that name
//! with this resource's marker, which the next create finds by name and
//! takes (writing it whole) instead of creating a second one.
//!
//! LiteLLM keeps no `metadata` for a guardrail: the ownership marker goes
//! into its free-form `guardrail_info`, which it stores as given and `PUT`
//! replaces whole, so every write sends it.
//!
//! Every field is the guardrail's whole setting (`PUT` replaces
//! `litellm_params` whole), nothing is late-initialized. LiteLLM stores
//! every parameter of the integration with its default, so what
//! `forProvider.params` leaves out cannot be compared: the names written
//! are recorded (`status.atProvider.paramsWritten`), and a name removed is
//! drift, written again. Secret parameters are masked when read: the
//! fingerprints of those last written are recorded
//! (`status.atProvider.secretFingerprints`, see [`SecretValues`]).
//!
//! Refused from every namespace, before anything is sent: a value of the
//! form `os.environ/...` (LiteLLM reads the proxy's environment for it), a
//! secret-looking name in `params` (at any depth), a parameter the typed
//! fields set, a secret parameter LiteLLM would show in clear. Refused
//! outside the LiteLLMInstance's namespace: every guardrail (see
//! [`tenant_refusal`]).

use std::collections::{BTreeMap, BTreeSet};

use kube::Resource;
use serde_json::{Map, Value};

use crate::api::common::{policy_allows, ManagedFields, ManagedStatus, ManagementPolicy};
use crate::api::guardrail::{GuardrailObservation, GuardrailParameters, LiteLLMGuardrail};
use crate::litellm::{self, masked_when_read, Guardrail, GuardrailRequest, Secret};

use crate::provider::kinds::upstream::params::{
    is_secret_name, json_names_environment, names_environment, same_json,
};
use crate::provider::managed::contract::{
    Connection, Created, External, ExternalError, ManagedKind, Observation,
};
use crate::provider::managed::diff::Diff;
use crate::provider::managed::mapped::{
    values_fingerprints, Fingerprints, Mapped, Mapping, SecretValues,
};
use crate::provider::managed::ownership::{default_id, may_manage, metadata_with_marker, Owner};
use crate::provider::managed::resolve::{Reference, Resolved};

/// `forProvider.apiKeySecretRef`.
const API_KEY_REF: &str = "apiKeySecretRef";
/// `forProvider.secretParams`.
const SECRET_PARAMS: &str = "secretParams";
/// `forProvider.params`.
const PARAMS: &str = "params";
/// LiteLLM's name of the API key.
const API_KEY: &str = "api_key";
/// `litellm_params` the typed fields set.
const TYPED: [(&str, &str); 5] = [
    ("guardrail", "forProvider.guardrail"),
    ("mode", "forProvider.mode"),
    ("default_on", "forProvider.defaultOn"),
    ("api_base", "forProvider.apiBase"),
    (API_KEY, "forProvider.apiKeySecretRef"),
];

/// The guardrail's name: `guardrailName`, else `<namespace>.<name>` of the
/// resource.
pub fn guardrail_name(params: &GuardrailParameters, owner: &Owner) -> String {
    params
        .guardrail_name
        .clone()
        .unwrap_or_else(|| default_id(&owner.namespace, &owner.name))
}

/// Why a guardrail of `namespace` must not be written (or read): outside
/// the LiteLLMInstance's namespace, none. Names no other namespace.
pub fn tenant_refusal(namespace: &str, instance_namespace: &str) -> Option<String> {
    (namespace != instance_namespace).then(|| {
        "LiteLLMGuardrail: refused outside the LiteLLMInstance's namespace: a guardrail sees the \
         requests and answers of every key and team that names it (with defaultOn, of every \
         request of the proxy) and sends them to its apiBase from the proxy's network, so only \
         the platform may define guardrails; name the platform's guardrails in your keys and \
         teams instead"
            .to_owned()
    })
}

/// Whether LiteLLM treats a parameter of this name as a secret: it masks
/// its value when read, or its secret filters know it.
fn secret_looking(name: &str) -> bool {
    masked_when_read(name) || is_secret_name(name)
}

/// The first secret-looking name among the object keys of `value`, at any
/// depth (`extra_headers: {x-api-key: ...}`).
fn secret_name_within(value: &Value) -> Option<&str> {
    match value {
        Value::Object(map) => map.iter().find_map(|(key, inner)| {
            if secret_looking(key) {
                Some(key.as_str())
            } else {
                secret_name_within(inner)
            }
        }),
        Value::Array(items) => items.iter().find_map(secret_name_within),
        _ => None,
    }
}

/// The `forProvider` field of the secret parameter `name`.
fn secret_field(name: &str) -> String {
    if name == API_KEY {
        format!("forProvider.{API_KEY_REF}")
    } else {
        format!("forProvider.{SECRET_PARAMS}[{name}]")
    }
}

/// Why the guardrail must not be written, from any namespace; names the
/// field, never a value.
pub fn refusal(params: &GuardrailParameters, secrets: &BTreeMap<String, Secret>) -> Option<String> {
    let environment = "a value of the form os.environ/... makes LiteLLM read an environment \
                       variable of the proxy";
    if let Some(base) = &params.api_base {
        let web = url::Url::parse(base).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
        });
        if !web {
            return Some(
                "forProvider.apiBase: only http:// and https:// URLs with a host are accepted"
                    .to_owned(),
            );
        }
    }
    if let Some(name) = secrets
        .iter()
        .find_map(|(name, value)| names_environment(value.expose()).then_some(name))
    {
        return Some(format!(
            "{}: the Secret's value has the form os.environ/..., which makes LiteLLM read an \
             environment variable of the proxy; a Secret must hold the value itself",
            secret_field(name)
        ));
    }
    let plain = params.params.as_ref();
    for entry in params.secret_params.iter().flatten() {
        let at = secret_field(&entry.name);
        if let Some((_, field)) = TYPED.iter().find(|(n, _)| *n == entry.name) {
            return Some(format!("{at}: set by {field} instead"));
        }
        if !masked_when_read(&entry.name) {
            return Some(format!(
                "{at}: LiteLLM shows a parameter of this name in clear when it reads the \
                 guardrail back, so it is no secret parameter: give it in forProvider.{PARAMS}"
            ));
        }
        if plain.is_some_and(|p| p.contains_key(&entry.name)) {
            return Some(format!("{at}: given in forProvider.{PARAMS} too"));
        }
    }
    for (name, value) in plain.into_iter().flatten() {
        let at = format!("forProvider.{PARAMS}.{name}");
        if let Some((_, field)) = TYPED.iter().find(|(n, _)| n == name) {
            return Some(format!("{at}: set by {field} instead"));
        }
        if secret_looking(name) {
            return Some(format!(
                "{at}: LiteLLM treats a parameter of this name as a secret (and masks it when \
                 read), and params are stored and shown in clear; give it in \
                 forProvider.{SECRET_PARAMS}, from a Secret"
            ));
        }
        if let Some(inner) = secret_name_within(value) {
            return Some(format!(
                "{at}: holds {inner:?}, a name LiteLLM treats as a secret, and params are stored \
                 and shown in clear; give secrets in forProvider.{SECRET_PARAMS}, from a Secret"
            ));
        }
        if json_names_environment(value) {
            return Some(format!("{at}: {environment}"));
        }
    }
    None
}

/// The names `forProvider.params` sets, sorted.
pub fn param_names(params: &GuardrailParameters) -> Vec<String> {
    params
        .params
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect()
}

/// `litellm_params` without the secret ones: the typed fields and `params`.
pub fn plain_params(params: &GuardrailParameters) -> Map<String, Value> {
    let mut out: Map<String, Value> = params
        .params
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.insert("guardrail".into(), Value::from(params.guardrail.clone()));
    out.insert("mode".into(), Value::from(params.mode.as_str()));
    out.insert(
        "default_on".into(),
        Value::from(params.default_on.unwrap_or(false)),
    );
    if let Some(base) = &params.api_base {
        out.insert("api_base".into(), Value::from(base.clone()));
    }
    out
}

/// Create and update body: the name, every parameter, the secret ones and
/// `guardrailInfo` with the marker. `id`: the guardrail to `PUT` to.
pub fn request(
    id: Option<&str>,
    params: &GuardrailParameters,
    secrets: &BTreeMap<String, Secret>,
    owner: &Owner,
) -> GuardrailRequest {
    GuardrailRequest {
        guardrail_id: id.map(str::to_owned),
        guardrail_name: guardrail_name(params, owner),
        litellm_params: plain_params(params),
        secret_params: secrets.clone(),
        guardrail_info: metadata_with_marker(params.guardrail_info.as_ref(), owner),
    }
}

/// The fields of `params` the live guardrail does not match; secret
/// parameters are compared by fingerprint, and removed `params` by the
/// names last written, in `observe`.
pub fn diff(params: &GuardrailParameters, live: &Guardrail, owner: &Owner) -> Diff {
    let mut diff = Diff::new();
    let mut exactly = |name: &'static str, same: bool| {
        if !same {
            diff.mark(name);
        }
    };
    exactly(
        "guardrailName",
        live.guardrail_name == guardrail_name(params, owner),
    );
    exactly(
        "guardrail",
        live.integration() == Some(params.guardrail.as_str()),
    );
    exactly("mode", live.mode() == Some(params.mode.as_str()));
    exactly(
        "defaultOn",
        live.default_on() == params.default_on.unwrap_or(false),
    );
    exactly("apiBase", live.api_base() == params.api_base.as_deref());
    let same_params =
        params.params.iter().flatten().all(|(name, want)| {
            same_json(want, live.litellm_params.get(name).unwrap_or(&Value::Null))
        });
    exactly(PARAMS, same_params);
    diff.metadata(
        "guardrailInfo",
        &metadata_with_marker(params.guardrail_info.as_ref(), owner),
        live.guardrail_info.as_ref(),
    );
    diff
}

pub fn at_provider(
    live: &Guardrail,
    secret_fingerprints: Option<Fingerprints>,
) -> GuardrailObservation {
    GuardrailObservation {
        guardrail_id: Some(live.guardrail_id.clone()),
        guardrail_name: Some(live.guardrail_name.clone()),
        guardrail: live.integration().map(str::to_owned),
        mode: live.mode().map(str::to_owned),
        default_on: Some(live.default_on()),
        created_at: live.created_at.clone(),
        updated_at: live.updated_at.clone(),
        params_written: None,
        secret_fingerprints,
    }
}

/// The `forProvider` fields of the secret parameters whose values differ
/// from those last written (changed, added or no longer sent).
pub fn drifted_secret_fields(values: &SecretValues) -> Vec<&'static str> {
    if !values.differ() {
        return Vec::new();
    }
    let removed = values
        .recorded
        .iter()
        .flatten()
        .map(|(name, _)| name.as_str())
        .filter(|name| !values.current.contains_key(*name));
    let touched: BTreeSet<&'static str> = values
        .changed()
        .chain(removed)
        .map(|name| match name == API_KEY {
            true => API_KEY_REF,
            false => SECRET_PARAMS,
        })
        .collect();
    if touched.is_empty() {
        // Differ, yet nothing named: the recorded set itself changed shape.
        return vec![SECRET_PARAMS];
    }
    touched.into_iter().collect()
}

/// The names of `params` last written, as `status.atProvider` recorded
/// them (`[]` when none).
fn recorded_params(mr: &LiteLLMGuardrail) -> Option<Vec<String>> {
    mr.status
        .as_ref()
        .and_then(|s| s.at_provider.as_ref())
        .map(|at| at.params_written.clone().unwrap_or_default())
}

/// `/guardrails` for one reconciliation.
pub struct GuardrailMapping {
    client: litellm::Client,
    owner: Owner,
    instance_namespace: String,
    refs: Resolved,
}

impl GuardrailMapping {
    /// The secret parameters resolved from their Secrets, by LiteLLM's
    /// name.
    fn secrets(&self) -> BTreeMap<String, Secret> {
        let mut secrets = self
            .refs
            .secret_set(SECRET_PARAMS)
            .cloned()
            .unwrap_or_default();
        if let Some(key) = self.refs.secret(API_KEY_REF) {
            secrets.insert(API_KEY.to_owned(), key.clone());
        }
        secrets
    }

    fn tenant_refusal(&self) -> Option<String> {
        tenant_refusal(&self.owner.namespace, &self.instance_namespace)
    }

    /// The create/update body, or why the guardrail may not be written
    /// (before anything is sent).
    fn body(
        &self,
        id: Option<&str>,
        params: &GuardrailParameters,
    ) -> Result<GuardrailRequest, ExternalError> {
        let secrets = self.secrets();
        if let Some(why) = self.tenant_refusal().or_else(|| refusal(params, &secrets)) {
            return Err(ExternalError::Invalid(why));
        }
        Ok(request(id, params, &secrets, &self.owner))
    }
}

/// [`Mapped`], with the names of `params` last written recorded, and
/// tenants refused before any request.
pub struct GuardrailExternal(Mapped<GuardrailMapping>);

impl External<LiteLLMGuardrail> for GuardrailExternal {
    async fn observe(
        &self,
        mr: &LiteLLMGuardrail,
        id: &str,
    ) -> Result<Observation<LiteLLMGuardrail>, ExternalError> {
        let mapping = &self.0 .0;
        if let Some(why) = mapping.tenant_refusal() {
            // Nothing of a tenant's was ever written: its deletion lets go
            // without a request (and never touches what its external name
            // may name).
            if mr.meta().deletion_timestamp.is_some() {
                return Ok(Observation::absent());
            }
            return Err(ExternalError::Invalid(why));
        }
        let mut observation = self.0.observe(mr, id).await?;
        if !observation.exists {
            return Ok(observation);
        }
        let desired = param_names(&mr.spec.for_provider);
        let recorded = recorded_params(mr);
        if recorded.as_ref().is_some_and(|r| *r != desired) {
            observation.drift.mark(PARAMS);
        }
        let writes = !observation.drift.is_empty()
            && policy_allows(&mr.managed().management_policies, ManagementPolicy::Update);
        if let Some(at) = observation.at_provider.as_mut() {
            let names = if writes { Some(desired) } else { recorded };
            at.params_written = names.filter(|n| !n.is_empty());
        }
        Ok(observation)
    }

    async fn create(
        &self,
        mr: &LiteLLMGuardrail,
        id: &str,
    ) -> Result<Created<LiteLLMGuardrail>, ExternalError> {
        self.0.create(mr, id).await
    }

    async fn update(
        &self,
        mr: &LiteLLMGuardrail,
        id: &str,
        drift: &Diff,
    ) -> Result<(), ExternalError> {
        self.0.update(mr, id, drift).await
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        External::<LiteLLMGuardrail>::delete(&self.0, id).await
    }
}

impl ManagedKind for LiteLLMGuardrail {
    type Parameters = GuardrailParameters;
    type AtProvider = GuardrailObservation;
    type External = GuardrailExternal;
    const NOUN: &'static str = "guardrail";

    fn managed(&self) -> &ManagedFields {
        &self.spec.managed
    }
    fn for_provider(&self) -> &GuardrailParameters {
        &self.spec.for_provider
    }
    fn managed_status(&self) -> Option<&ManagedStatus<GuardrailObservation>> {
        self.status.as_ref()
    }
    fn references(&self) -> Vec<Reference> {
        let params = &self.spec.for_provider;
        let api_key = params
            .api_key_secret_ref
            .iter()
            .map(|selector| Reference::Secret {
                field: API_KEY_REF,
                selector: selector.clone(),
            });
        let others = params
            .secret_params
            .iter()
            .filter(|list| !list.is_empty())
            .map(|list| Reference::Secrets {
                field: SECRET_PARAMS,
                entries: list
                    .iter()
                    .map(|p| (p.name.clone(), p.secret_key_ref.clone()))
                    .collect(),
            });
        api_key.chain(others).collect()
    }
    fn connect(connection: Connection) -> GuardrailExternal {
        GuardrailExternal(Mapped(GuardrailMapping {
            client: connection.litellm,
            owner: connection.owner,
            instance_namespace: connection.instance_namespace,
            refs: connection.refs,
        }))
    }
}

/// Every write sends the name, every parameter, the secret ones and the
/// whole `guardrail_info`.
impl Mapping<LiteLLMGuardrail> for GuardrailMapping {
    type Live = Guardrail;
    type Request = GuardrailRequest;

    async fn read(
        &self,
        _: &LiteLLMGuardrail,
        id: &str,
    ) -> Result<Option<Guardrail>, ExternalError> {
        Ok(self.client.guardrail_get(id).await?)
    }
    fn owner(&self, _: &str, live: &Guardrail) -> Option<Owner> {
        Owner::from_metadata(live.guardrail_info.as_ref())
    }
    fn drift(&self, mr: &LiteLLMGuardrail, _: &str, live: &Guardrail) -> Diff {
        diff(&mr.spec.for_provider, live, &self.owner)
    }
    fn at_provider(
        &self,
        live: &Guardrail,
        fingerprints: Option<Fingerprints>,
    ) -> GuardrailObservation {
        at_provider(live, fingerprints)
    }

    /// A secret parameter changed, added or removed since it was written is
    /// drift of its field.
    fn secret_values(&self, mr: &LiteLLMGuardrail) -> Option<SecretValues> {
        let current = values_fingerprints(&self.secrets());
        let values = SecretValues::recorded_in(mr, current, |at| at.secret_fingerprints.as_ref());
        let fields = drifted_secret_fields(&values);
        Some(values.drifting(!fields.is_empty(), &fields))
    }
    fn before_create(
        &self,
        mr: &LiteLLMGuardrail,
        _: &str,
        fingerprints: Option<Fingerprints>,
    ) -> Option<GuardrailObservation> {
        let names = param_names(&mr.spec.for_provider);
        Some(GuardrailObservation {
            params_written: (!names.is_empty()).then_some(names),
            secret_fingerprints: fingerprints,
            ..GuardrailObservation::default()
        })
    }

    async fn request(
        &self,
        mr: &LiteLLMGuardrail,
        id: &str,
        _: Option<&Diff>,
    ) -> Result<GuardrailRequest, ExternalError> {
        self.body(Some(id), &mr.spec.for_provider)
    }
    async fn send_create(
        &self,
        request: &GuardrailRequest,
    ) -> Result<Option<String>, ExternalError> {
        Ok(Some(self.client.guardrail_new(request).await?))
    }
    /// A guardrail of this name in the database is taken when it is this
    /// resource's (a create whose answer was lost) or unmarked in the
    /// platform's namespace; one of the config file, or another owner's,
    /// is refused.
    async fn found_by_name(
        &self,
        _: &LiteLLMGuardrail,
        request: &GuardrailRequest,
    ) -> Result<Option<String>, ExternalError> {
        let Some(found) = self
            .client
            .guardrail_by_name(&request.guardrail_name)
            .await?
        else {
            return Ok(None);
        };
        if !found.in_database() {
            return Err(ExternalError::Invalid(
                "forProvider.guardrailName: the proxy's config file defines a guardrail of this \
                 name, which the admin API cannot change; choose another name"
                    .to_owned(),
            ));
        }
        let marker = Owner::from_metadata(found.guardrail_info.as_ref());
        if let Err(refusal) = may_manage(marker.as_ref(), &self.owner, &self.instance_namespace) {
            return Err(ExternalError::Invalid(format!(
                "forProvider.guardrailName: LiteLLM has a guardrail of this name, and {}; choose \
                 another name",
                refusal.explain()
            )));
        }
        Ok(Some(found.guardrail_id))
    }
    async fn send_update(&self, request: &GuardrailRequest) -> Result<(), ExternalError> {
        self.client.guardrail_update(request).await?;
        Ok(())
    }
    async fn send_delete(&self, id: &str) -> Result<(), ExternalError> {
        self.client.guardrail_delete(id).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::guardrail::{GuardrailMode, GuardrailSecretParam, LiteLLMGuardrailSpec};
    use crate::provider::managed::ownership::MARKER_KEY;

    fn me() -> Owner {
        Owner::of_test("pii")
    }

    fn selector(name: &str) -> SecretKeySelector {
        SecretKeySelector {
            name: name.into(),
            key: "v".into(),
        }
    }

    fn params() -> GuardrailParameters {
        GuardrailParameters {
            guardrail_name: Some("pii-mask".into()),
            guardrail: "presidio".into(),
            mode: GuardrailMode::PreCall,
            default_on: None,
            api_base: Some("http://presidio.platform.svc:3000".into()),
            api_key_secret_ref: Some(selector("presidio")),
            secret_params: None,
            params: Some(
                [
                    ("presidio_language".to_owned(), json!("de")),
                    ("timeout".to_owned(), json!(7)),
                ]
                .into(),
            ),
            guardrail_info: Some([("description".to_owned(), json!("PII"))].into()),
        }
    }

    fn secrets(key: &str) -> BTreeMap<String, Secret> {
        BTreeMap::from([(API_KEY.to_owned(), Secret::new(key))])
    }

    /// As LiteLLM 1.108.7 reads back the guardrail `request` wrote: every
    /// parameter with its default, the key masked, numbers as floats.
    fn live() -> Guardrail {
        serde_json::from_value(json!({
            "guardrail_id": "3654d232-6255-4d49-9fe0-b340fcc245c3",
            "guardrail_name": "pii-mask",
            "litellm_params": {
                "guardrail": "presidio", "mode": "pre_call", "default_on": false,
                "api_base": "http://presidio.platform.svc:3000", "api_key": "sk****56",
                "presidio_language": "de", "timeout": 7.0,
                "unreachable_fallback": "fail_closed", "blocked_words": null,
            },
            "guardrail_info": metadata_with_marker(params().guardrail_info.as_ref(), &me()),
            "guardrail_definition_location": "db",
        }))
        .unwrap()
    }

    #[test]
    fn the_request_sends_the_name_every_parameter_the_secrets_and_the_marker() {
        let request = request(Some("g-1"), &params(), &secrets("sk-presidio-1"), &me());
        assert_eq!(request.guardrail_id.as_deref(), Some("g-1"));
        let body = serde_json::to_value(&request).unwrap()["guardrail"].clone();
        assert_eq!(body["guardrail_name"], "pii-mask");
        let p = &body["litellm_params"];
        assert_eq!(p["guardrail"], "presidio");
        assert_eq!(p["mode"], "pre_call");
        assert_eq!(p["default_on"], false, "always sent: PUT replaces it");
        assert_eq!(p["api_key"], "sk-presidio-1");
        assert_eq!(p["presidio_language"], "de");
        assert_eq!(body["guardrail_info"]["description"], "PII");
        assert_eq!(body["guardrail_info"][MARKER_KEY]["name"], "pii");
        // The default name carries the resource's namespace.
        let unnamed = GuardrailParameters {
            guardrail_name: None,
            api_base: None,
            ..params()
        };
        let body = serde_json::to_value(request_of(&unnamed)).unwrap();
        assert_eq!(body["guardrail"]["guardrail_name"], "ns.pii");
        assert!(body["guardrail"]["litellm_params"]
            .get("api_base")
            .is_none());
    }

    fn request_of(params: &GuardrailParameters) -> GuardrailRequest {
        request(None, params, &BTreeMap::new(), &me())
    }

    #[test]
    fn diff_table() {
        assert!(diff(&params(), &live(), &me()).is_empty(), "as created");
        type Change = Box<dyn Fn(&mut Guardrail)>;
        let param = |name: &'static str, value: Value| -> Change {
            Box::new(move |l: &mut Guardrail| {
                l.litellm_params.insert(name.into(), value.clone());
            })
        };
        let cases: Vec<(&str, Change, &[&str])> = vec![
            (
                "renamed in the UI",
                Box::new(|l| l.guardrail_name = "other".into()),
                &["guardrailName"],
            ),
            (
                "another integration",
                param("guardrail", json!("lakera_v2")),
                &["guardrail"],
            ),
            ("another mode", param("mode", json!("post_call")), &["mode"]),
            (
                "modes by tag",
                param("mode", json!({"tags": {}})),
                &["mode"],
            ),
            (
                "switched on for every request",
                param("default_on", json!(true)),
                &["defaultOn"],
            ),
            (
                "another service",
                param("api_base", json!("https://evil.example")),
                &["apiBase"],
            ),
            (
                "a parameter changed",
                param("presidio_language", json!("en")),
                &["params"],
            ),
            (
                "a parameter dropped",
                Box::new(|l| drop(l.litellm_params.remove("timeout"))),
                &["params"],
            ),
            (
                "a parameter nobody set",
                param("blocked_words", json!(["x"])),
                &[],
            ),
            (
                "the masked key is no drift",
                param("api_key", json!("xx****yy")),
                &[],
            ),
            (
                "the marker lost",
                Box::new(|l| drop(l.guardrail_info.as_mut().unwrap().remove(MARKER_KEY))),
                &["guardrailInfo"],
            ),
            (
                "an info key added in the UI",
                Box::new(|l| {
                    drop(
                        l.guardrail_info
                            .as_mut()
                            .unwrap()
                            .insert("x".into(), json!(1)),
                    )
                }),
                &[],
            ),
        ];
        for (case, change, want) in cases {
            let mut changed = live();
            change(&mut changed);
            assert_eq!(diff(&params(), &changed, &me()).fields(), want, "{case}");
        }
        let no_base = GuardrailParameters {
            api_base: None,
            ..params()
        };
        assert_eq!(diff(&no_base, &live(), &me()).fields(), ["apiBase"]);
    }

    #[test]
    fn secrets_environments_and_secret_looking_params_are_refused_naming_the_field() {
        let with_params = |entries: Value| GuardrailParameters {
            params: Some(serde_json::from_value(entries).unwrap()),
            ..params()
        };
        let with_secret = |name: &str| GuardrailParameters {
            secret_params: Some(vec![GuardrailSecretParam {
                name: name.into(),
                secret_key_ref: selector("s"),
            }]),
            ..params()
        };
        type Case<'a> = (
            &'a str,
            GuardrailParameters,
            BTreeMap<String, Secret>,
            Option<&'a str>,
        );
        let cases: Vec<Case> = vec![
            ("fine", params(), secrets("sk-1"), None),
            (
                "the key from the proxy's environment",
                params(),
                secrets(" OS.ENVIRON/PRESIDIO_KEY"),
                Some("forProvider.apiKeySecretRef: "),
            ),
            (
                "another secret from the proxy's environment",
                with_secret("client_secret"),
                BTreeMap::from([("client_secret".to_owned(), Secret::new("os.environ/X"))]),
                Some("forProvider.secretParams[client_secret]: "),
            ),
            (
                "a plain value from the proxy's environment",
                with_params(json!({"presidio_analyzer_api_base": "os.environ/PRESIDIO_URL"})),
                secrets("k"),
                Some("forProvider.params.presidio_analyzer_api_base: "),
            ),
            (
                "a secret in the clear",
                with_params(json!({"aws_secret_access_key": "AKIA..."})),
                secrets("k"),
                Some("forProvider.params.aws_secret_access_key: "),
            ),
            (
                "a name LiteLLM masks",
                with_params(json!({"keyword_redaction_tag": "[x]"})),
                secrets("k"),
                Some("forProvider.params.keyword_redaction_tag: "),
            ),
            (
                "a secret deep inside",
                with_params(json!({"extra_headers": {"X-Api-Key": "k"}})),
                secrets("k"),
                Some("forProvider.params.extra_headers: holds \"X-Api-Key\""),
            ),
            (
                "a typed field",
                with_params(json!({"default_on": true})),
                secrets("k"),
                Some("forProvider.params.default_on: set by forProvider.defaultOn"),
            ),
            (
                "the key as a plain parameter",
                with_params(json!({"api_key": "sk-clear"})),
                secrets("k"),
                Some("forProvider.params.api_key: set by forProvider.apiKeySecretRef"),
            ),
            (
                "a secret parameter LiteLLM shows in clear",
                with_secret("region"),
                secrets("k"),
                Some("forProvider.secretParams[region]: "),
            ),
            (
                "a secret parameter given twice",
                GuardrailParameters {
                    params: Some([("auth_token".to_owned(), json!(1))].into()),
                    ..with_secret("auth_token")
                },
                secrets("k"),
                Some("forProvider.secretParams[auth_token]: given in forProvider.params too"),
            ),
            (
                "a file as the service",
                GuardrailParameters {
                    api_base: Some("file:///etc/passwd".into()),
                    ..params()
                },
                secrets("k"),
                Some("forProvider.apiBase: "),
            ),
        ];
        for (case, params, secrets, want) in cases {
            let got = refusal(&params, &secrets);
            match (want, got) {
                (None, None) => {}
                (Some(prefix), Some(message)) => {
                    assert!(message.starts_with(prefix), "{case}: {message}");
                    for value in ["PRESIDIO_KEY", "AKIA", "sk-clear", "PRESIDIO_URL", "passwd"] {
                        assert!(!message.contains(value), "{case}: {message}");
                    }
                }
                (want, got) => panic!("{case}: want {want:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn only_the_instances_namespace_may_have_guardrails() {
        assert_eq!(tenant_refusal("platform", "platform"), None);
        let why = tenant_refusal("team-a", "platform").unwrap();
        assert!(
            why.contains("outside the LiteLLMInstance's namespace"),
            "{why}"
        );
        assert!(
            !why.contains("platform\"") && !why.contains("team-a"),
            "{why}"
        );
    }

    #[test]
    fn secret_drift_names_the_field_of_each_value() {
        let map = |pairs: &[(&str, &str)]| -> Fingerprints {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let cases = [
            (
                "steady",
                map(&[(API_KEY, "a")]),
                map(&[(API_KEY, "a")]),
                vec![],
            ),
            (
                "rotated key",
                map(&[(API_KEY, "a")]),
                map(&[(API_KEY, "b")]),
                vec![API_KEY_REF],
            ),
            (
                "a secret parameter added",
                map(&[(API_KEY, "a")]),
                map(&[(API_KEY, "a"), ("client_secret", "c")]),
                vec![SECRET_PARAMS],
            ),
            (
                "the key removed",
                map(&[(API_KEY, "a")]),
                map(&[]),
                vec![API_KEY_REF],
            ),
        ];
        for (case, recorded, current, want) in cases {
            let values = SecretValues::new(current, Some(recorded));
            assert_eq!(drifted_secret_fields(&values), want, "{case}");
        }
    }

    #[test]
    fn references_and_at_provider() {
        let guardrail = LiteLLMGuardrail::new(
            "pii",
            LiteLLMGuardrailSpec {
                managed: ManagedFields::default(),
                for_provider: GuardrailParameters {
                    secret_params: Some(vec![GuardrailSecretParam {
                        name: "client_secret".into(),
                        secret_key_ref: selector("azure"),
                    }]),
                    ..params()
                },
            },
        );
        let references = guardrail.references();
        assert_eq!(
            references[0],
            Reference::Secret {
                field: API_KEY_REF,
                selector: selector("presidio")
            }
        );
        let Reference::Secrets { field, entries } = &references[1] else {
            panic!("{references:?}");
        };
        assert_eq!(
            (*field, entries[0].0.as_str()),
            (SECRET_PARAMS, "client_secret")
        );
        let recorded = values_fingerprints(&secrets("sk-presidio-1"));
        let observed = at_provider(&live(), Some(recorded.clone()));
        assert_eq!(observed.secret_fingerprints, Some(recorded));
        assert_eq!(observed.guardrail.as_deref(), Some("presidio"));
        assert_eq!(observed.default_on, Some(false));
        let text = serde_json::to_string(&observed).unwrap();
        for hidden in ["sk-presidio", "sk****", "presidio.platform.svc"] {
            assert!(!text.contains(hidden), "{text}");
        }
        assert_eq!(param_names(&params()), ["presidio_language", "timeout"]);
    }
}
