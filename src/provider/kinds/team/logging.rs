//! A team's logging destinations (`forProvider.logging`): LiteLLM's team
//! callbacks, kept in the team's `metadata.logging` (see
//! [`crate::litellm::team_callbacks`]).
//!
//! They are a field of the team, not a kind of their own: `/team/update`
//! replaces the metadata whole, so the one writer of a team's metadata
//! writes its callbacks too. Every write of the team sends `logging`:
//! `forProvider.logging`'s entries when it is set (LiteLLM encrypts the
//! credentials at rest, as its callback route does), else the entries the
//! team has now, as LiteLLM holds them (so callbacks made in the UI
//! survive an update of another field).
//!
//! Drift: the entries in order, their names, types and variable names, and
//! each value LiteLLM keeps readable. A value LiteLLM keeps encrypted (a
//! fresh ciphertext each write) cannot be compared: the fingerprint of all
//! values of each entry last written is kept in
//! `status.atProvider.secretFingerprints`, so a changed Secret (or value)
//! is drift and is written again (see [`SecretValues`]).
//!
//! Refused from every namespace: an unknown integration or variable (LiteLLM
//! 1.108.7 would store the entry and ignore it), a second entry of one name
//! and type, a value `os.environ/...` (LiteLLM's own route refuses it, but
//! `/team/update` stores it, and the proxy would read its own environment).
//! Refused outside the LiteLLMInstance's namespace: a destination host
//! ([`host_variable`]) that is internal (see [`hosts`]) unless the instance
//! lists it in `spec.tenantMcpServerHosts`, `gcs_path_service_account` (a
//! file of the proxy's own host), and `litellm_disabled_callbacks` and
//! `turn_off_message_logging` (which switch off the platform's own logging
//! of the team's requests).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::api::team::{TeamCallbackObservation, TeamCallbackSpec, TeamParameters};
use crate::litellm::team_callbacks::{
    logging_of, TeamCallback, CALLBACK_NAMES, CALLBACK_SETTINGS, CALLBACK_VARIABLES, LOGGING,
};
use crate::litellm::Secret;
use crate::provider::kinds::hosts;
use crate::provider::kinds::upstream::params::names_environment;
use crate::provider::managed::diff::Diff;
use crate::provider::managed::mapped::Fingerprints;
use crate::provider::managed::resolve::{Reference, Resolved};

/// The field of the team's callbacks, of their Secret reference and of
/// their drift.
pub const FIELD: &str = "logging";

/// Variables a tenant may not set: a path on the proxy's own host, and
/// switches of the platform's own logging of the team's requests.
const TENANT_REFUSED: &[(&str, &str)] = crate::api::team::TENANT_REFUSED_CALLBACK_VARIABLES;

/// Whether the variable names where the callback sends (a host or URL).
pub fn host_variable(name: &str) -> bool {
    name.ends_with("_host")
        || name.ends_with("_url")
        || name.contains("endpoint")
        || name == "dd_site"
}

/// The entry's key in the Secret reference and the fingerprints.
fn entry_key(entry: &TeamCallbackSpec) -> String {
    format!("{}/{}", entry.callback_name, entry.callback_type.as_str())
}

fn secret_key(entry: &TeamCallbackSpec, variable: &str) -> String {
    format!("{}/{variable}", entry_key(entry))
}

/// The Secrets of the callbacks' `secretCallbackVars`, if any.
pub fn references(params: &TeamParameters) -> Option<Reference> {
    let entries: Vec<_> = params
        .logging
        .iter()
        .flatten()
        .flat_map(|entry| {
            entry
                .secret_callback_vars
                .iter()
                .flatten()
                .map(move |(var, selector)| (secret_key(entry, var), selector.clone()))
        })
        .collect();
    (!entries.is_empty()).then_some(Reference::Secrets {
        field: FIELD,
        entries,
    })
}

/// The entry's variables, with the Secrets' values resolved (a missing one
/// left out: resolution fails before anything is sent).
fn values(entry: &TeamCallbackSpec, refs: &Resolved) -> BTreeMap<String, Secret> {
    let secrets = refs.secret_set(FIELD);
    let plain = entry
        .callback_vars
        .iter()
        .flatten()
        .map(|(var, value)| (var.clone(), Secret::new(value.clone())));
    let secret = entry
        .secret_callback_vars
        .iter()
        .flatten()
        .filter_map(|(var, _)| {
            let value = secrets?.get(&secret_key(entry, var))?;
            Some((var.clone(), value.clone()))
        });
    plain.chain(secret).collect()
}

/// The entries `forProvider.logging` asks for, values resolved; `None`
/// when it is unset.
pub fn entries(params: &TeamParameters, refs: &Resolved) -> Option<Vec<TeamCallback>> {
    let logging = params.logging.as_ref()?;
    Some(
        logging
            .iter()
            .map(|entry| TeamCallback {
                callback_name: entry.callback_name.clone(),
                callback_type: entry.callback_type.as_str().to_owned(),
                callback_vars: values(entry, refs)
                    .into_iter()
                    .map(|(var, value)| (var, value.expose().to_owned()))
                    .collect(),
            })
            .collect(),
    )
}

/// `metadata` with the team's callbacks: `forProvider.logging`'s when set,
/// else those of `live` (the team's metadata now) as LiteLLM holds them,
/// with its deprecated `callback_settings`.
pub fn with_logging(
    mut metadata: Map<String, Value>,
    params: &TeamParameters,
    refs: &Resolved,
    live: Option<&Map<String, Value>>,
) -> Map<String, Value> {
    match entries(params, refs) {
        Some(entries) => {
            let entries = serde_json::to_value(entries).unwrap_or_default();
            metadata.insert(LOGGING.to_owned(), entries);
        }
        None => {
            for slot in [LOGGING, CALLBACK_SETTINGS] {
                if let Some(value) = live.and_then(|live| live.get(slot)) {
                    metadata.insert(slot.to_owned(), value.clone());
                }
            }
        }
    }
    metadata
}

/// Whether a write of the team needs the team's metadata now (to keep the
/// callbacks `forProvider.logging` leaves to LiteLLM).
pub fn keeps_live(params: &TeamParameters) -> bool {
    params.logging.is_none()
}

/// Why the callbacks must not be sent; names the field, never a value from
/// a Secret. `tenant`: the team is outside the LiteLLMInstance's namespace;
/// `allowed_hosts`: the internal hosts the instance lets tenants name.
pub fn refusal(
    params: &TeamParameters,
    refs: &Resolved,
    tenant: bool,
    allowed_hosts: &[String],
) -> Option<String> {
    let logging = params.logging.as_ref()?;
    let mut seen = Vec::new();
    for (i, entry) in logging.iter().enumerate() {
        let at = format!("forProvider.logging[{i}]");
        let name = entry.callback_name.as_str();
        if !CALLBACK_NAMES.contains(&name) {
            return Some(format!(
                "{at}.callbackName: {name:?} is not an integration LiteLLM 1.108.7 gives a \
                 team's own credentials (one of {})",
                CALLBACK_NAMES.join(", ")
            ));
        }
        let key = entry_key(entry);
        if seen.contains(&key) {
            return Some(format!(
                "{at}: a second callback {name} for {} (LiteLLM keeps one per name and type)",
                entry.callback_type.as_str()
            ));
        }
        seen.push(key);
        let secret_names = entry.secret_callback_vars.iter().flatten().map(|(v, _)| v);
        if let Some(var) = secret_names.into_iter().find(|v| {
            entry
                .callback_vars
                .as_ref()
                .is_some_and(|p| p.contains_key(*v))
        }) {
            return Some(format!(
                "{at}.secretCallbackVars.{var}: also in callbackVars; a variable is one or the other"
            ));
        }
        let plain = entry
            .callback_vars
            .iter()
            .flatten()
            .map(|(v, _)| (v, false));
        let secret = entry
            .secret_callback_vars
            .iter()
            .flatten()
            .map(|(v, _)| (v, true));
        let resolved = values(entry, refs);
        for (var, from_secret) in plain.chain(secret) {
            let field = match from_secret {
                true => format!("{at}.secretCallbackVars.{var}"),
                false => format!("{at}.callbackVars.{var}"),
            };
            if !CALLBACK_VARIABLES.contains(&var.as_str()) {
                return Some(format!(
                    "{field}: not a callback variable LiteLLM 1.108.7 accepts"
                ));
            }
            let value = resolved.get(var).map(Secret::expose).unwrap_or_default();
            if names_environment(value) {
                let whose = if from_secret {
                    "the Secret's value"
                } else {
                    "the value"
                };
                return Some(format!(
                    "{field}: {whose} has the form os.environ/..., which makes LiteLLM read an \
                     environment variable of the proxy; put the value itself in a Secret"
                ));
            }
            if !tenant {
                continue;
            }
            const WHERE: &str = "outside the LiteLLMInstance's namespace";
            if let Some((_, why)) = TENANT_REFUSED.iter().find(|(n, _)| n == var) {
                return Some(format!("{field}: refused {WHERE}: {why}"));
            }
            if host_variable(var) {
                if let Some(why) = host_refusal(value, allowed_hosts, from_secret) {
                    return Some(format!(
                        "{field}: {why}; refused {WHERE} unless the \
                         LiteLLMInstance lists the host in spec.tenantMcpServerHosts"
                    ));
                }
            }
        }
    }
    None
}

/// Why a destination is refused to a tenant: a host that is internal and
/// not allowed, or no host at all. Quotes the host unless it came from a
/// Secret.
fn host_refusal(value: &str, allowed_hosts: &[String], from_secret: bool) -> Option<String> {
    let text = value.trim();
    let url = match text.contains("://") {
        true => url::Url::parse(text),
        false => url::Url::parse(&format!("http://{text}")),
    };
    let Some(url) = url.ok().filter(|u| u.host().is_some()) else {
        return Some("not a URL or host name".to_owned());
    };
    let kind = hosts::internal(&url)?;
    if hosts::allowed(&url, allowed_hosts) {
        return None;
    }
    let host = hosts::allow_list_form(&url).unwrap_or_default();
    Some(match from_secret {
        true => format!("the host is {kind}, which the proxy would send the team's logs to"),
        false => {
            format!("the host {host:?} is {kind}, which the proxy would send the team's logs to")
        }
    })
}

/// Why `forProvider.metadata` may not hold an entry: the callbacks are
/// `forProvider.logging` (whose checks the metadata would pass by).
pub fn metadata_refusal(params: &TeamParameters) -> Option<String> {
    let names = params.metadata.iter().flat_map(|m| m.keys());
    names
        .into_iter()
        .find(|name| [LOGGING, CALLBACK_SETTINGS].contains(&name.as_str()))
        .map(|name| format!("forProvider.metadata.{name}: set by forProvider.logging"))
}

/// Leaves the callbacks out of metadata late-initialized from the team.
pub fn strip(metadata: &mut Option<crate::api::FreeForm>) {
    if let Some(map) = metadata {
        map.remove(LOGGING);
        map.remove(CALLBACK_SETTINGS);
        if map.is_empty() {
            *metadata = None;
        }
    }
}

/// Marks `logging` drifted when the team's callbacks are not those of
/// `forProvider.logging` (when set): another count, order, name, type or
/// set of variables, or a readable value that differs.
pub fn diff(
    diff: &mut Diff,
    params: &TeamParameters,
    refs: &Resolved,
    live: Option<&Map<String, Value>>,
) {
    let Some(want) = entries(params, refs) else {
        return;
    };
    let same = logging_of(live).is_some_and(|have| {
        have.len() == want.len()
            && want.iter().zip(&have).all(|(want, have)| {
                want.callback_name == have.callback_name
                    && want.callback_type == have.callback_type
                    && want.callback_vars.keys().eq(have.callback_vars.keys())
                    && want.callback_vars.iter().all(|(var, value)| {
                        have.encrypted(var) || have.callback_vars.get(var) == Some(value)
                    })
            })
    });
    if !same {
        diff.mark(FIELD);
    }
}

/// The fingerprint of all values of each callback, by
/// `<callbackName>/<callbackType>`.
pub fn fingerprints(params: &TeamParameters, refs: &Resolved) -> Fingerprints {
    params
        .logging
        .iter()
        .flatten()
        .map(|entry| {
            let values: BTreeMap<String, String> = values(entry, refs)
                .into_iter()
                .map(|(var, value)| (var, value.expose().to_owned()))
                .collect();
            let text = serde_json::to_string(&values).unwrap_or_default();
            let print = crate::provider::managed::scrub::fingerprint(
                "litellm-crossplane team callback values fingerprint v1",
                text.as_bytes(),
            );
            (entry_key(entry), print)
        })
        .collect()
}

/// The team's callbacks as `status.atProvider` shows them: never a value.
pub fn observed(live: Option<&Map<String, Value>>) -> Option<Vec<TeamCallbackObservation>> {
    let entries = logging_of(live)?;
    // Within the status schema's bounds, whatever the UI wrote.
    Some(
        entries
            .into_iter()
            .take(64)
            .map(|entry| TeamCallbackObservation {
                callback_name: entry.callback_name,
                callback_type: entry.callback_type,
                variables: entry.callback_vars.into_keys().take(64).collect(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::common::SecretKeySelector;
    use crate::api::team::CallbackType;

    fn langfuse() -> TeamCallbackSpec {
        TeamCallbackSpec {
            callback_name: "langfuse".into(),
            callback_type: CallbackType::Success,
            callback_vars: Some(BTreeMap::from([
                ("langfuse_host".into(), "https://lf.example.com".into()),
                ("langfuse_public_key".into(), "pk-1".into()),
            ])),
            secret_callback_vars: Some(BTreeMap::from([(
                "langfuse_secret_key".into(),
                SecretKeySelector {
                    name: "lf".into(),
                    key: "secret".into(),
                },
            )])),
        }
    }

    fn params(entries: Vec<TeamCallbackSpec>) -> TeamParameters {
        TeamParameters {
            logging: Some(entries),
            ..TeamParameters::default()
        }
    }

    fn refs(secret: &str) -> Resolved {
        Resolved::default().with_secret_set(
            FIELD,
            BTreeMap::from([(
                "langfuse/success/langfuse_secret_key".to_owned(),
                Secret::new(secret),
            )]),
        )
    }

    /// The team's metadata as LiteLLM holds it after a write of
    /// `langfuse()` (credentials encrypted).
    fn live(host: &str, public: &str) -> Map<String, Value> {
        json!({
            "env": "prod",
            "logging": [{
                "callback_name": "langfuse", "callback_type": "success",
                "callback_vars": {
                    "langfuse_host": host,
                    "langfuse_public_key": public,
                    "langfuse_secret_key": "litellm_enc::zzz"
                }
            }]
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn the_reference_names_each_secret_variable_by_entry() {
        let Some(Reference::Secrets { field, entries }) = references(&params(vec![langfuse()]))
        else {
            panic!("a Secrets reference");
        };
        assert_eq!(field, FIELD);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].0, "langfuse/success/langfuse_secret_key");
        assert!(references(&TeamParameters::default()).is_none());
    }

    #[test]
    fn entries_carry_resolved_values_and_metadata_keeps_what_is_not_managed() {
        let p = params(vec![langfuse()]);
        let written = with_logging(Map::new(), &p, &refs("sk-lf-1"), None);
        assert_eq!(
            written["logging"][0]["callback_vars"]["langfuse_secret_key"],
            "sk-lf-1"
        );
        assert_eq!(written["logging"][0]["callback_type"], "success");
        // Unset: the team's own entries (and the deprecated slot) are kept
        // as LiteLLM holds them.
        let mut held = live("https://lf.example.com", "litellm_enc::p");
        held.insert("callback_settings".into(), json!({"success_callback": []}));
        let kept = with_logging(
            Map::new(),
            &TeamParameters::default(),
            &Resolved::default(),
            Some(&held),
        );
        assert_eq!(kept["logging"], held["logging"]);
        assert_eq!(kept["callback_settings"], held["callback_settings"]);
        assert!(with_logging(
            Map::new(),
            &TeamParameters::default(),
            &Resolved::default(),
            None
        )
        .is_empty());
        // Set to none: the team's logging is emptied.
        let off = with_logging(
            Map::new(),
            &params(vec![]),
            &Resolved::default(),
            Some(&held),
        );
        assert_eq!(off["logging"], json!([]));
    }

    #[test]
    fn diff_table() {
        let p = params(vec![langfuse()]);
        let r = refs("sk-lf-1");
        let failure = TeamCallbackSpec {
            callback_type: CallbackType::Failure,
            ..langfuse()
        };
        let mut extra = live("https://lf.example.com", "litellm_enc::p");
        extra["logging"].as_array_mut().unwrap().push(json!({
            "callback_name": "langsmith", "callback_type": "success", "callback_vars": {}
        }));
        let mut fewer_vars = live("https://lf.example.com", "litellm_enc::p");
        fewer_vars["logging"][0]["callback_vars"]
            .as_object_mut()
            .unwrap()
            .remove("langfuse_host");
        type Case = (
            &'static str,
            TeamParameters,
            Option<Map<String, Value>>,
            bool,
        );
        let cases: Vec<Case> = vec![
            (
                "as written",
                p.clone(),
                Some(live("https://lf.example.com", "litellm_enc::p")),
                false,
            ),
            (
                "public key kept readable and equal",
                p.clone(),
                Some(live("https://lf.example.com", "pk-1")),
                false,
            ),
            (
                "host changed in the UI",
                p.clone(),
                Some(live("https://other.example.com", "litellm_enc::p")),
                true,
            ),
            (
                "readable value changed",
                p.clone(),
                Some(live("https://lf.example.com", "pk-2")),
                true,
            ),
            (
                "another type",
                params(vec![failure]),
                Some(live("https://lf.example.com", "litellm_enc::p")),
                true,
            ),
            ("a callback added in the UI", p.clone(), Some(extra), true),
            (
                "a variable removed in the UI",
                p.clone(),
                Some(fewer_vars),
                true,
            ),
            (
                "removed in the UI",
                p.clone(),
                Some(json!({"env": "prod"}).as_object().unwrap().clone()),
                true,
            ),
            (
                "disabled in the UI",
                p.clone(),
                Some(json!({"logging": []}).as_object().unwrap().clone()),
                true,
            ),
            (
                "none wanted, none there",
                params(vec![]),
                Some(json!({"logging": []}).as_object().unwrap().clone()),
                false,
            ),
            ("none wanted, slot absent", params(vec![]), None, true),
            (
                "unset: not compared",
                TeamParameters::default(),
                Some(live("https://x.example.com", "x")),
                false,
            ),
        ];
        for (name, params, live, drifts) in cases {
            let mut d = Diff::new();
            diff(&mut d, &params, &r, live.as_ref());
            assert_eq!(d.has(FIELD), drifts, "{name}");
        }
    }

    #[test]
    fn fingerprints_follow_every_value_and_never_show_one() {
        let p = params(vec![langfuse()]);
        let a = fingerprints(&p, &refs("sk-lf-1"));
        assert_eq!(a, fingerprints(&p, &refs("sk-lf-1")));
        assert_ne!(a, fingerprints(&p, &refs("sk-lf-2")), "a rotated Secret");
        let mut other_public = langfuse();
        other_public
            .callback_vars
            .as_mut()
            .unwrap()
            .insert("langfuse_public_key".into(), "pk-2".into());
        assert_ne!(
            a,
            fingerprints(&params(vec![other_public]), &refs("sk-lf-1"))
        );
        let print = &a["langfuse/success"];
        assert!(
            print.starts_with("sha256:") && !print.contains("sk-lf"),
            "{print}"
        );
        assert!(fingerprints(&TeamParameters::default(), &Resolved::default()).is_empty());
    }

    #[test]
    fn refusal_table() {
        let allowed = vec!["logs.platform.svc".to_owned()];
        let with = |f: &dyn Fn(&mut TeamCallbackSpec)| {
            let mut entry = langfuse();
            f(&mut entry);
            params(vec![entry])
        };
        let plain = |var: &str, value: &str| {
            let (var, value) = (var.to_owned(), value.to_owned());
            with(&move |e: &mut TeamCallbackSpec| {
                e.callback_vars
                    .as_mut()
                    .unwrap()
                    .insert(var.clone(), value.clone());
            })
        };
        // (case, params, secret value, tenant, the refusal's start or None)
        let cases: Vec<(&str, TeamParameters, &str, bool, Option<&str>)> = vec![
            ("a public destination", params(vec![langfuse()]), "sk", true, None),
            ("unset", TeamParameters::default(), "sk", true, None),
            ("an unknown integration", with(&|e| e.callback_name = "generic_api".into()), "sk", false,
             Some("forProvider.logging[0].callbackName: \"generic_api\" is not")),
            ("twice one name and type", params(vec![langfuse(), langfuse()]), "sk", false,
             Some("forProvider.logging[1]: a second callback langfuse for success")),
            ("an unknown variable", plain("langfuse_flavour", "x"), "sk", false,
             Some("forProvider.logging[0].callbackVars.langfuse_flavour: not a callback variable")),
            ("the environment, plain", plain("langfuse_public_key", "os.environ/LITELLM_MASTER_KEY"), "sk", false,
             Some("forProvider.logging[0].callbackVars.langfuse_public_key: the value has the form os.environ/")),
            ("the environment, from a Secret", params(vec![langfuse()]), " OS.ENVIRON/DATABASE_URL", false,
             Some("forProvider.logging[0].secretCallbackVars.langfuse_secret_key: the Secret's value has the form")),
            ("an internal host, tenant", plain("langfuse_host", "http://169.254.169.254/"), "sk", true,
             Some("forProvider.logging[0].callbackVars.langfuse_host: the host \"169.254.169.254\" is a link-local")),
            ("an internal host, platform", plain("langfuse_host", "http://169.254.169.254/"), "sk", false, None),
            ("a cluster name, tenant", plain("langsmith_base_url", "http://litellm.platform.svc:4000"), "sk", true,
             Some("forProvider.logging[0].callbackVars.langsmith_base_url: the host")),
            ("an allowed internal host", plain("langfuse_host", "http://logs.platform.svc/"), "sk", true, None),
            ("a bare agent host", plain("dd_agent_host", "localhost"), "sk", true,
             Some("forProvider.logging[0].callbackVars.dd_agent_host: the host \"localhost\"")),
            ("an endpoint", plain("signoz_ingestion_endpoint", "http://10.0.0.3:4318"), "sk", true,
             Some("forProvider.logging[0].callbackVars.signoz_ingestion_endpoint: the host")),
            ("a service-account path, tenant", plain("gcs_path_service_account", "/var/run/secrets/sa.json"), "sk", true,
             Some("forProvider.logging[0].callbackVars.gcs_path_service_account: refused outside")),
            ("a service-account path, platform", plain("gcs_path_service_account", "/etc/sa.json"), "sk", false, None),
            ("the platform's callbacks off", plain("litellm_disabled_callbacks", "prometheus"), "sk", true,
             Some("forProvider.logging[0].callbackVars.litellm_disabled_callbacks: refused outside")),
        ];
        for (name, params, secret, tenant, want) in cases {
            let got = refusal(&params, &refs(secret), tenant, &allowed);
            match want {
                None => assert_eq!(got, None, "{name}"),
                Some(start) => {
                    let got = got.unwrap_or_else(|| panic!("{name}: not refused"));
                    assert!(got.starts_with(start), "{name}: {got}");
                    assert!(
                        !got.contains("DATABASE_URL") && !got.contains("sk-"),
                        "{name}: {got}"
                    );
                }
            }
        }
        // A host from a Secret is refused without being quoted.
        let mut hidden = langfuse();
        let both = refusal(
            &params(vec![hidden.clone()]),
            &Resolved::default(),
            false,
            &[],
        );
        assert_eq!(both, None);
        hidden.secret_callback_vars = Some(BTreeMap::from([(
            "langfuse_host".into(),
            SecretKeySelector {
                name: "lf".into(),
                key: "host".into(),
            },
        )]));
        let r = Resolved::default().with_secret_set(
            FIELD,
            BTreeMap::from([(
                "langfuse/success/langfuse_host".to_owned(),
                Secret::new("http://10.1.2.3/"),
            )]),
        );
        let why = refusal(&params(vec![hidden.clone()]), &r, true, &[]).unwrap();
        assert!(
            why.starts_with(
                "forProvider.logging[0].secretCallbackVars.langfuse_host: also in callbackVars"
            ),
            "{why}"
        );
        hidden
            .callback_vars
            .as_mut()
            .unwrap()
            .remove("langfuse_host");
        let why = refusal(&params(vec![hidden]), &r, true, &[]).unwrap();
        assert!(
            why.starts_with(
                "forProvider.logging[0].secretCallbackVars.langfuse_host: the host is a private"
            ),
            "{why}"
        );
        assert!(!why.contains("10.1.2.3"), "{why}");
    }

    #[test]
    fn the_callbacks_are_not_free_form_metadata_and_status_shows_no_value() {
        let p = TeamParameters {
            metadata: Some([("logging".to_owned(), json!([]))].into()),
            ..TeamParameters::default()
        };
        assert_eq!(
            metadata_refusal(&p).as_deref(),
            Some("forProvider.metadata.logging: set by forProvider.logging")
        );
        let mut late = Some(live("https://lf.example.com", "pk").into_iter().collect());
        strip(&mut late);
        assert_eq!(late.map(|m| m.len()), Some(1), "only env is left");
        let seen = observed(Some(&live("https://lf.example.com", "pk-1"))).unwrap();
        assert_eq!(seen[0].callback_name, "langfuse");
        assert_eq!(
            seen[0].variables,
            [
                "langfuse_host",
                "langfuse_public_key",
                "langfuse_secret_key"
            ]
        );
        let text = serde_json::to_string(&seen).unwrap();
        assert!(
            !text.contains("pk-1") && !text.contains("litellm_enc"),
            "{text}"
        );
        assert_eq!(observed(None), None);
    }
}
