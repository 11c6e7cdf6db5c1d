//! A model's `litellm_params` field by field: which `forProvider` field
//! holds which LiteLLM parameter, which of them are secrets (read from
//! Secrets, sent, never returned, tracked by fingerprint), and what may not
//! go in clear. The model kind (`crate::provider::kinds::model`) builds its requests, diffs
//! and refusals from these tables, so a parameter is added in one place.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::common::SecretKeySelector;
use crate::api::model::LiteLLMParams;
use crate::litellm::Secret;

use crate::provider::managed::mapped::SecretValues;
use crate::provider::managed::resolve::{Reference, Resolved};

/// A secret parameter: the `forProvider` field of its Secret reference and
/// its `litellm_params` name.
pub struct SecretParam {
    pub field: &'static str,
    pub name: &'static str,
    pub selector: fn(&LiteLLMParams) -> Option<&SecretKeySelector>,
}

/// Every secret parameter a model can set. LiteLLM 1.108.7 never returns
/// them: `/v2/model/info` removes `api_key`, `aws_access_key_id`,
/// `aws_secret_access_key`, `vertex_credentials` and `client_secret`, and
/// masks the others.
pub const SECRET_PARAMS: &[SecretParam] = &[
    SecretParam {
        field: "litellmParams.apiKeySecretRef",
        name: "api_key",
        selector: |p| p.api_key_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.aws.accessKeyIdSecretRef",
        name: "aws_access_key_id",
        selector: |p| p.aws.as_ref()?.access_key_id_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.aws.secretAccessKeySecretRef",
        name: "aws_secret_access_key",
        selector: |p| p.aws.as_ref()?.secret_access_key_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.aws.sessionTokenSecretRef",
        name: "aws_session_token",
        selector: |p| p.aws.as_ref()?.session_token_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.aws.webIdentityTokenSecretRef",
        name: "aws_web_identity_token",
        selector: |p| p.aws.as_ref()?.web_identity_token_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.vertex.credentialsSecretRef",
        name: "vertex_credentials",
        selector: |p| p.vertex.as_ref()?.credentials_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.azure.adTokenSecretRef",
        name: "azure_ad_token",
        selector: |p| p.azure.as_ref()?.ad_token_secret_ref.as_ref(),
    },
    SecretParam {
        field: "litellmParams.azure.clientSecretSecretRef",
        name: "client_secret",
        selector: |p| p.azure.as_ref()?.client_secret_secret_ref.as_ref(),
    },
];

/// The `forProvider` field of the api key's Secret reference.
pub const API_KEY_REF: &str = "litellmParams.apiKeySecretRef";

/// A plain (non-secret) parameter beyond `model`, `api_base`,
/// `api_version`, `tpm` and `rpm`: its `forProvider` field, its
/// `litellm_params` name and its value as sent.
pub struct PlainParam {
    pub field: &'static str,
    pub name: &'static str,
    pub value: fn(&LiteLLMParams) -> Option<Value>,
}

fn text(value: Option<&String>) -> Option<Value> {
    value.cloned().map(Value::String)
}

fn price(value: Option<&String>) -> Option<Value> {
    // The CRD's pattern admits only decimals that parse; LiteLLM keeps
    // prices as floats, and the same float comes back.
    let value = value?;
    let number = value.parse::<f64>().ok()?;
    serde_json::Number::from_f64(number).map(Value::Number)
}

pub const PLAIN_PARAMS: &[PlainParam] = &[
    PlainParam {
        field: "litellmParams.aws.regionName",
        name: "aws_region_name",
        value: |p| text(p.aws.as_ref()?.region_name.as_ref()),
    },
    PlainParam {
        field: "litellmParams.aws.roleName",
        name: "aws_role_name",
        value: |p| text(p.aws.as_ref()?.role_name.as_ref()),
    },
    PlainParam {
        field: "litellmParams.aws.sessionName",
        name: "aws_session_name",
        value: |p| text(p.aws.as_ref()?.session_name.as_ref()),
    },
    PlainParam {
        field: "litellmParams.vertex.project",
        name: "vertex_project",
        value: |p| text(p.vertex.as_ref()?.project.as_ref()),
    },
    PlainParam {
        field: "litellmParams.vertex.location",
        name: "vertex_location",
        value: |p| text(p.vertex.as_ref()?.location.as_ref()),
    },
    PlainParam {
        field: "litellmParams.azure.tenantId",
        name: "tenant_id",
        value: |p| text(p.azure.as_ref()?.tenant_id.as_ref()),
    },
    PlainParam {
        field: "litellmParams.azure.clientId",
        name: "client_id",
        value: |p| text(p.azure.as_ref()?.client_id.as_ref()),
    },
    PlainParam {
        field: "litellmParams.timeout",
        name: "timeout",
        value: |p| p.timeout.map(Value::from),
    },
    PlainParam {
        field: "litellmParams.streamTimeout",
        name: "stream_timeout",
        value: |p| p.stream_timeout.map(Value::from),
    },
    PlainParam {
        field: "litellmParams.maxRetries",
        name: "max_retries",
        value: |p| p.max_retries.map(Value::from),
    },
    PlainParam {
        field: "litellmParams.dropParams",
        name: "drop_params",
        value: |p| p.drop_params.map(Value::from),
    },
    PlainParam {
        field: "litellmParams.customLlmProvider",
        name: "custom_llm_provider",
        value: |p| text(p.custom_llm_provider.as_ref()),
    },
    PlainParam {
        field: "litellmParams.tags",
        name: "tags",
        value: |p| p.tags.clone().map(Value::from),
    },
    PlainParam {
        field: "litellmParams.inputCostPerToken",
        name: "input_cost_per_token",
        value: |p| price(p.input_cost_per_token.as_ref()),
    },
    PlainParam {
        field: "litellmParams.outputCostPerToken",
        name: "output_cost_per_token",
        value: |p| price(p.output_cost_per_token.as_ref()),
    },
];

/// `litellm_params` the typed fields own besides [`PLAIN_PARAMS`] and
/// [`SECRET_PARAMS`], which `additionalParams` may therefore not set.
const TYPED_PARAMS: &[&str] = &["model", "api_base", "api_version", "tpm", "rpm"];

/// A model's credential set, which `credentialRef` (not a raw name) sets.
const CREDENTIAL_NAME: &str = "litellm_credential_name";

pub const ADDITIONAL_PARAMS: &str = "litellmParams.additionalParams";

/// The prefix by which LiteLLM reads a `litellm_params` value from the
/// proxy's environment (`os.environ/OPENAI_API_KEY`): measured on 1.108.7,
/// an `api_key` of `os.environ/LITELLM_MASTER_KEY` sends the proxy's master
/// key upstream.
pub const ENVIRONMENT_PREFIX: &str = "os.environ/";

/// Parts of a parameter name by which LiteLLM 1.108.7 masks its value as a
/// secret (`SensitiveDataMasker`: the name split at `_` and `-`), unless a
/// part is `cost`. A name with one of them is a secret and has no place
/// in `additionalParams`.
const SECRET_NAME_PARTS: &[&str] = &[
    "password",
    "secret",
    "key",
    "token",
    "auth",
    "authorization",
    "cookie",
    "credential",
    "credentials",
    "access",
    "private",
    "certificate",
    "fingerprint",
    "tenancy",
];

/// Whether LiteLLM treats a parameter of this name as a secret.
pub fn is_secret_name(name: &str) -> bool {
    let parts: Vec<String> = name
        .split(['_', '-'])
        .map(|p| p.to_ascii_lowercase())
        .collect();
    !parts.iter().any(|p| p == "cost")
        && parts
            .iter()
            .any(|p| SECRET_NAME_PARTS.contains(&p.as_str()))
}

/// The `forProvider` field of the model's `LiteLLMCredential`.
pub const CREDENTIAL_REF: &str = "litellmParams.credentialRef";

/// The references of `params` for resolution: its credential's name and
/// its Secrets.
pub fn references(params: &LiteLLMParams) -> Vec<Reference> {
    let credential = params.credential_ref.iter().map(|r| Reference::Credential {
        field: CREDENTIAL_REF,
        name: r.name.clone(),
    });
    let secrets = SECRET_PARAMS.iter().filter_map(|s| {
        (s.selector)(params).map(|selector| Reference::Secret {
            field: s.field,
            selector: selector.clone(),
        })
    });
    credential.chain(secrets).collect()
}

/// The resolved secret parameters of `params`, by `litellm_params` name.
pub fn secrets(params: &LiteLLMParams, refs: &Resolved) -> BTreeMap<&'static str, Secret> {
    SECRET_PARAMS
        .iter()
        .filter(|s| (s.selector)(params).is_some())
        .filter_map(|s| Some((s.name, refs.secret(s.field)?.clone())))
        .collect()
}

/// The plain parameters `params` sets (typed fields and
/// `additionalParams`), by `litellm_params` name.
pub fn plain(params: &LiteLLMParams) -> Map<String, Value> {
    let mut out: Map<String, Value> = params
        .additional_params
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for param in PLAIN_PARAMS {
        if let Some(value) = (param.value)(params) {
            out.insert(param.name.to_owned(), value);
        }
    }
    out
}

/// The `forProvider` field that sets the plain parameter `name`.
pub fn plain_field(name: &str) -> &'static str {
    PLAIN_PARAMS
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.field)
        .unwrap_or(ADDITIONAL_PARAMS)
}

/// Why `additionalParams` may not be sent as it stands, naming the entry
/// (never a value): a secret-looking name, a parameter a typed field owns,
/// or one set twice (also as a price of `modelInfo`, see `priced`).
pub fn additional_refusal(params: &LiteLLMParams, priced: &Map<String, Value>) -> Option<String> {
    for name in params.additional_params.iter().flat_map(|m| m.keys()) {
        let at = format!("{ADDITIONAL_PARAMS}.{name}");
        if name == CREDENTIAL_NAME {
            return Some(format!(
                "{at}: a model's credentials are named by credentialRef, not by a raw name"
            ));
        }
        if is_secret_name(name) || SECRET_PARAMS.iter().any(|s| s.name == name) {
            return Some(format!(
                "{at}: LiteLLM treats a parameter of this name as a secret, and additionalParams \
                 are stored and shown in clear; set credentials through the Secret references \
                 (apiKeySecretRef, aws, vertex, azure) or a LiteLLMCredential"
            ));
        }
        if let Some(param) = PLAIN_PARAMS.iter().find(|p| p.name == name) {
            return Some(format!("{at}: set by {} instead", param.field));
        }
        if TYPED_PARAMS.contains(&name.as_str()) {
            return Some(format!(
                "{at}: set by the typed field of litellmParams instead"
            ));
        }
        if priced.contains_key(name) {
            return Some(format!("{at}: set as modelInfo.{name} already"));
        }
    }
    PLAIN_PARAMS
        .iter()
        .filter(|p| p.name.ends_with("_cost_per_token"))
        .find(|p| (p.value)(params).is_some() && priced.contains_key(p.name))
        .map(|p| format!("{}: set as modelInfo.{} already", p.field, p.name))
}

/// Whether `value` makes LiteLLM read the proxy's environment. LiteLLM
/// checks the exact prefix; leading blanks and case are forgiven here, to
/// refuse rather than guess.
pub fn names_environment(value: &str) -> bool {
    value
        .trim_start()
        .get(..ENVIRONMENT_PREFIX.len())
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case(ENVIRONMENT_PREFIX))
}

pub fn json_names_environment(value: &Value) -> bool {
    match value {
        Value::String(text) => names_environment(text),
        Value::Array(items) => items.iter().any(json_names_environment),
        Value::Object(map) => map.values().any(json_names_environment),
        _ => false,
    }
}

/// Why a resolved secret must not be sent, from any namespace: a value
/// `os.environ/...` makes LiteLLM read that variable of the proxy. Names
/// the field, never the value.
pub fn secret_refusal(params: &LiteLLMParams, refs: &Resolved) -> Option<String> {
    SECRET_PARAMS
        .iter()
        .filter(|s| (s.selector)(params).is_some())
        .find(|s| {
            refs.secret(s.field)
                .is_some_and(|v| names_environment(v.expose()))
        })
        .map(|s| {
            format!(
                "{}: the Secret's value has the form {ENVIRONMENT_PREFIX}..., which makes LiteLLM \
                 read an environment variable of the proxy; a Secret must hold the credential \
                 itself (leave the reference out to use the proxy's own credentials)",
                s.field
            )
        })
}

/// Fingerprints of the resolved secrets of `params`, by field.
pub fn fingerprints(params: &LiteLLMParams, refs: &Resolved) -> BTreeMap<String, String> {
    SECRET_PARAMS
        .iter()
        .filter(|s| (s.selector)(params).is_some())
        .filter_map(|s| Some((s.field.to_owned(), fingerprint(refs.secret(s.field)?))))
        .collect()
}

/// Identifies a secret value without revealing it: `sha256:` and the first
/// 16 hex digits of SHA-256 over a domain prefix and the value. The domain
/// is the one api keys had alone before, so their fingerprints stay.
pub fn fingerprint(secret: &Secret) -> String {
    crate::provider::managed::scrub::fingerprint(
        "litellm-crossplane model api key fingerprint v1",
        secret.expose().as_bytes(),
    )
}

/// The secret fields whose Secret value differs from the one last written.
pub fn changed_secrets(values: &SecretValues) -> Vec<&'static str> {
    let changed: Vec<&str> = values.changed().collect();
    SECRET_PARAMS
        .iter()
        .filter(|s| changed.contains(&s.field))
        .map(|s| s.field)
        .collect()
}

/// JSON equality with numbers compared by value: LiteLLM returns the
/// price `1` as `1.0` and a timeout of `30` as `30.0`.
pub fn same_json(want: &Value, have: &Value) -> bool {
    match (want, have) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| same_json(a, b)))
        }
        _ => want == have,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::model::{AwsParams, AzureParams, VertexParams};

    fn selector(name: &str) -> Option<SecretKeySelector> {
        Some(SecretKeySelector {
            name: name.into(),
            key: "v".into(),
        })
    }

    fn every_secret() -> LiteLLMParams {
        LiteLLMParams {
            model: "bedrock/anthropic.claude-3".into(),
            api_key_secret_ref: selector("a"),
            aws: Some(AwsParams {
                region_name: Some("us-east-1".into()),
                access_key_id_secret_ref: selector("b"),
                secret_access_key_secret_ref: selector("c"),
                session_token_secret_ref: selector("d"),
                role_name: Some("arn:aws:iam::1:role/r".into()),
                session_name: Some("s".into()),
                web_identity_token_secret_ref: selector("e"),
            }),
            vertex: Some(VertexParams {
                project: Some("p".into()),
                location: Some("l".into()),
                credentials_secret_ref: selector("f"),
            }),
            azure: Some(AzureParams {
                ad_token_secret_ref: selector("g"),
                tenant_id: Some("t".into()),
                client_id: Some("c".into()),
                client_secret_secret_ref: selector("h"),
            }),
            ..LiteLLMParams::default()
        }
    }

    #[test]
    fn every_secret_field_is_referenced_resolved_and_fingerprinted() {
        let params = every_secret();
        let references = references(&params);
        assert_eq!(references.len(), SECRET_PARAMS.len());
        let mut refs = Resolved::default();
        for (i, s) in SECRET_PARAMS.iter().enumerate() {
            refs = refs.with_secret(s.field, Secret::new(format!("value-{i}")));
        }
        let sent = secrets(&params, &refs);
        assert_eq!(
            sent.keys().copied().collect::<Vec<_>>(),
            [
                "api_key",
                "aws_access_key_id",
                "aws_secret_access_key",
                "aws_session_token",
                "aws_web_identity_token",
                "azure_ad_token",
                "client_secret",
                "vertex_credentials"
            ]
        );
        // Every secret name is also one LiteLLM itself treats as a secret.
        for s in SECRET_PARAMS {
            assert!(is_secret_name(s.name), "{}", s.name);
        }
        let fingerprints = fingerprints(&params, &refs);
        assert_eq!(fingerprints.len(), SECRET_PARAMS.len());
        assert!(fingerprints.values().all(|f| !f.contains("value")));
    }

    #[test]
    fn plain_params_are_sent_under_litellms_names() {
        let mut params = every_secret();
        params.timeout = Some(30);
        params.drop_params = Some(true);
        params.tags = Some(vec!["gold".into()]);
        params.input_cost_per_token = Some("0.0000025".into());
        params.additional_params = Some([("num_retries".to_owned(), Value::from(2))].into());
        let plain = plain(&params);
        assert_eq!(plain["aws_region_name"], "us-east-1");
        assert_eq!(plain["aws_role_name"], "arn:aws:iam::1:role/r");
        assert_eq!(plain["vertex_project"], "p");
        assert_eq!(plain["tenant_id"], "t");
        assert_eq!(plain["timeout"], 30);
        assert_eq!(plain["drop_params"], true);
        assert_eq!(plain["tags"], serde_json::json!(["gold"]));
        assert_eq!(plain["input_cost_per_token"].as_f64(), Some(2.5e-6));
        assert_eq!(plain["num_retries"], 2);
        assert!(plain.keys().all(|k| !is_secret_name(k)), "{plain:?}");
        assert_eq!(plain_field("timeout"), "litellmParams.timeout");
        assert_eq!(plain_field("num_retries"), ADDITIONAL_PARAMS);
    }

    #[test]
    fn litellms_secret_names_are_recognized() {
        for name in [
            "api_key",
            "aws_session_token",
            "azure_ad_token",
            "my-private-cert",
            "db_password",
            "Authorization",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "timeout",
            "max_tokens",
            "input_cost_per_token",
            "cache_read_input_token_cost",
            "region_name",
            "organization",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn additional_params_refuse_secrets_typed_fields_and_doubles() {
        let with = |name: &str| LiteLLMParams {
            additional_params: Some([(name.to_owned(), Value::from("x"))].into()),
            ..LiteLLMParams::default()
        };
        let none = Map::new();
        for (name, says) in [
            ("my_api_key", "as a secret"),
            ("vertex_credentials", "as a secret"),
            ("litellm_credential_name", "credentialRef"),
            ("timeout", "litellmParams.timeout"),
            ("api_base", "typed field"),
        ] {
            let why = additional_refusal(&with(name), &none).unwrap_or_default();
            assert!(
                why.starts_with(&format!("{ADDITIONAL_PARAMS}.{name}:")),
                "{why}"
            );
            assert!(why.contains(says), "{name}: {why}");
            assert!(!why.contains("\"x\""), "{why}");
        }
        assert_eq!(additional_refusal(&with("num_retries"), &none), None);
        let priced: Map<String, Value> = [("input_cost_per_token".to_owned(), Value::from(1))]
            .into_iter()
            .collect();
        assert!(additional_refusal(&with("input_cost_per_token"), &priced).is_some());
        let typed = LiteLLMParams {
            input_cost_per_token: Some("1".into()),
            ..LiteLLMParams::default()
        };
        assert_eq!(
            additional_refusal(&typed, &priced).as_deref(),
            Some("litellmParams.inputCostPerToken: set as modelInfo.input_cost_per_token already")
        );
    }

    #[test]
    fn environment_secrets_are_named_never_shown() {
        let params = every_secret();
        let refs = Resolved::default()
            .with_secret(API_KEY_REF, Secret::new("sk-fine"))
            .with_secret(
                "litellmParams.aws.sessionTokenSecretRef",
                Secret::new(" OS.ENVIRON/AWS_SESSION_TOKEN"),
            );
        let why = secret_refusal(&params, &refs).unwrap();
        assert!(
            why.starts_with("litellmParams.aws.sessionTokenSecretRef:"),
            "{why}"
        );
        assert!(
            !why.contains("AWS_SESSION_TOKEN") && !why.contains("sk-fine"),
            "{why}"
        );
        let credential = LiteLLMParams {
            credential_ref: Some(crate::api::common::LocalRef { name: "c".into() }),
            ..LiteLLMParams::default()
        };
        assert_eq!(
            references(&credential),
            [Reference::Credential {
                field: CREDENTIAL_REF,
                name: "c".into()
            }]
        );
    }

    #[test]
    fn changed_secrets_by_field() {
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let (key, token) = (API_KEY_REF, "litellmParams.aws.sessionTokenSecretRef");
        let stored = map(&[(key, "a"), (token, "t")]);
        let changed = |recorded: Option<&BTreeMap<String, String>>, current| {
            changed_secrets(&SecretValues::new(current, recorded.cloned()))
        };
        assert_eq!(
            changed(Some(&stored), map(&[(key, "a"), (token, "t")])),
            Vec::<&str>::new()
        );
        assert_eq!(
            changed(Some(&stored), map(&[(key, "b"), (token, "t")])),
            [key]
        );
        assert_eq!(changed(None, map(&[(token, "t")])), [token]);
    }

    #[test]
    fn fingerprints_identify_a_value_without_revealing_it() {
        let a = fingerprint(&Secret::new("sk-upstream-1"));
        assert_eq!(a, fingerprint(&Secret::new("sk-upstream-1")));
        assert_ne!(a, fingerprint(&Secret::new("sk-upstream-2")));
        assert!(a.starts_with("sha256:") && a.len() == 7 + 16, "{a}");
        assert!(!a.contains("upstream"));
    }
}
