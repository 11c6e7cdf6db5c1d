//! Fallbacks: `POST /fallback`, `GET /fallback/{model}`,
//! `DELETE /fallback/{model}` (`fallback_management_endpoints.py`; open
//! source on 1.108.7), and `GET /router/settings`
//! (`router_settings_endpoints.py`), which this client reads them by.
//!
//! A fallback rule is one entry `{model: [fallback models]}` of one of the
//! router's three lists (`router_settings.fallbacks`,
//! `context_window_fallbacks`, `content_policy_fallbacks`, chosen by
//! `fallback_type`: `general`, `context_window`, `content_policy`). It has
//! no id, no metadata and no owner: it is named by its model and its type.
//!
//! Every route is the admin's: any other key gets 401, `/router/settings`
//! included.
//!
//! What 1.108.7 answers, measured (`tests/integration/provider_fallbacks.rs`,
//! its `contract` tests):
//!
//! * `POST /fallback` creates or replaces the rule (200 both times; the
//!   `message` says which). 404 when `model` is not a model name of the
//!   router, 400 when a fallback model is not one, when the model is its own
//!   fallback, when the database is not enabled, or when the config file
//!   sets that list (`router_settings.<list>`: `_reject_config_owned_rules`;
//!   every rule of the list then belongs to the file). 422 for an empty or
//!   duplicated `fallback_models`.
//! * The write is a read-modify-write of the whole `router_settings` row
//!   of `LiteLLM_Config`, without a lock: two writes at once (any two rules,
//!   any types) can lose one. It is persisted there
//!   (`_persist_router_settings`) and applied to the router in memory; the
//!   proxy applies that row again at start and on every model sync, so a
//!   rule written by the route survives a restart (and a row written by
//!   another replica reaches this one within a sync).
//! * `GET /fallback/{model}` is not a read of the rule: it answers what the
//!   router would fall back to (`get_fallback_model_group`), which for a
//!   model without a rule of its own is the rule of a provider-prefixed or
//!   stripped name, or the catch-all `*`. The rule is read from
//!   `GET /router/settings` instead (`current_values.<list>`, the entry
//!   keyed by the model exactly), which also tells who sets each list
//!   (`source.<list>`: `config` for the config file, `db`, `default`).
//! * `DELETE /fallback/{model}` removes every entry of the list that holds
//!   the model as a key; 404 when there is none. Both `{model}` routes take
//!   the model as one path segment: a model name with `/` (percent-encoded
//!   or not) does not reach them (404 from the router, `"Not Found"`), so
//!   the rule of such a model can be written but never deleted through the
//!   route; [`Client::fallback_delete`] refuses it before sending.
//! * An unknown `fallback_type` is 422.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::client::{endpoint, Endpoint};
use super::{Client, Error};

const FALLBACK_CREATE: Endpoint = endpoint!(POST "/fallback");
const FALLBACK_DELETE: Endpoint = endpoint!(DELETE "/fallback/{model}");
const ROUTER_SETTINGS: Endpoint = endpoint!(GET "/router/settings");

/// The three kinds of rule (`fallback_type`), each a list of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackType {
    /// For any error of the model (after its retries).
    General,
    /// For a context window exceeded.
    ContextWindow,
    /// For a content policy violation.
    ContentPolicy,
}

impl FallbackType {
    pub const ALL: [FallbackType; 3] = [
        FallbackType::General,
        FallbackType::ContextWindow,
        FallbackType::ContentPolicy,
    ];

    /// LiteLLM's name of the type (`fallback_type`).
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackType::General => "general",
            FallbackType::ContextWindow => "context_window",
            FallbackType::ContentPolicy => "content_policy",
        }
    }

    /// The type LiteLLM calls `name`.
    pub fn parse(name: &str) -> Option<FallbackType> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// The `router_settings` list of the type's rules.
    pub fn list(self) -> &'static str {
        match self {
            FallbackType::General => "fallbacks",
            FallbackType::ContextWindow => "context_window_fallbacks",
            FallbackType::ContentPolicy => "content_policy_fallbacks",
        }
    }
}

/// Body of `POST /fallback`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FallbackRequest {
    pub model: String,
    pub fallback_models: Vec<String>,
    pub fallback_type: FallbackType,
}

/// The answer of `POST /fallback`: the rule as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FallbackWritten {
    pub model: String,
    pub fallback_models: Vec<String>,
    pub fallback_type: FallbackType,
}

/// One rule as the router holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackRule {
    pub model: String,
    pub fallback_type: FallbackType,
    pub fallback_models: Vec<String>,
}

/// The router's rules of one type, and who sets their list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FallbackList {
    /// The entries as stored (`{model: [...]}`, a few legacy strings).
    pub entries: Vec<Value>,
    /// `source.<list>` of `/router/settings`: `config`, `db`, `default`,
    /// `unset`, `env`.
    pub source: Option<String>,
}

impl FallbackList {
    /// Whether the config file sets the list: LiteLLM refuses every write
    /// to it through the route.
    pub fn config_owned(&self) -> bool {
        self.source.as_deref() == Some("config")
    }

    /// The rule of `model`: the first entry that holds it as a key (as
    /// `DELETE` and `POST` find it).
    pub fn rule(&self, model: &str, fallback_type: FallbackType) -> Option<FallbackRule> {
        self.entries.iter().find_map(|entry| {
            let models = entry.as_object()?.get(model)?;
            let fallback_models = models
                .as_array()?
                .iter()
                .filter_map(|m| m.as_str().map(str::to_owned))
                .collect();
            Some(FallbackRule {
                model: model.to_owned(),
                fallback_type,
                fallback_models,
            })
        })
    }
}

/// The lists of `/router/settings`'s answer.
fn fallback_list(settings: &Map<String, Value>, fallback_type: FallbackType) -> FallbackList {
    let list = fallback_type.list();
    let entries = settings
        .get("current_values")
        .and_then(|v| v.get(list))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let source = settings
        .get("source")
        .and_then(|v| v.get(list))
        .and_then(Value::as_str)
        .map(str::to_owned);
    FallbackList { entries, source }
}

impl Client {
    /// The router's rules of `fallback_type` (`GET /router/settings`).
    pub async fn fallback_list(&self, fallback_type: FallbackType) -> Result<FallbackList, Error> {
        let settings: Map<String, Value> = self.get(&ROUTER_SETTINGS, &[]).await?.json()?;
        Ok(fallback_list(&settings, fallback_type))
    }

    /// The rule of `model` of `fallback_type`, exactly (never the catch-all
    /// `GET /fallback/{model}` would answer with).
    pub async fn fallback_get(
        &self,
        model: &str,
        fallback_type: FallbackType,
    ) -> Result<Option<FallbackRule>, Error> {
        Ok(self
            .fallback_list(fallback_type)
            .await?
            .rule(model, fallback_type))
    }

    /// Creates or replaces the rule. [`Error::NotFound`] when the model is
    /// not one of the router's; [`Error::Permanent`] (400) for a fallback
    /// model the router does not have, the model itself, or a list the
    /// config file sets.
    pub async fn fallback_set(&self, rule: &FallbackRequest) -> Result<FallbackWritten, Error> {
        self.post(&FALLBACK_CREATE, rule).await?.json()
    }

    /// `false` when there was no rule. A model name with `/` is refused
    /// before anything is sent ([`Error::Config`]): the route cannot take
    /// it (see the module documentation).
    pub async fn fallback_delete(
        &self,
        model: &str,
        fallback_type: FallbackType,
    ) -> Result<bool, Error> {
        if model.contains('/') || model.is_empty() {
            return Err(Error::Config(format!(
                "{}: LiteLLM 1.108.7 cannot delete the fallbacks of a model whose name is empty \
                 or holds '/'",
                FALLBACK_DELETE.name
            )));
        }
        let url = self.url(
            ["fallback", model],
            &[("fallback_type", fallback_type.as_str())],
        );
        self.send::<()>(&FALLBACK_DELETE, url, None).await?.found()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_and_their_lists() {
        for t in FallbackType::ALL {
            assert_eq!(FallbackType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
        }
        assert_eq!(FallbackType::parse("contextWindow"), None);
        assert_eq!(
            FallbackType::ContextWindow.list(),
            "context_window_fallbacks"
        );
    }

    #[test]
    fn the_rule_is_the_entry_keyed_by_the_model_exactly() {
        let settings = json!({
            "current_values": {"fallbacks": [
                "legacy-string",
                {"*": ["catch-all"]},
                {"gpt": ["a", "b"]},
                {"gpt": ["shadowed"]},
                {"x": ["y"], "gpt-4": ["z"]},
            ]},
            "source": {"fallbacks": "db", "content_policy_fallbacks": "config"},
        });
        let settings = settings.as_object().unwrap();
        let general = fallback_list(settings, FallbackType::General);
        assert!(!general.config_owned());
        let rule = general.rule("gpt", FallbackType::General).unwrap();
        assert_eq!(rule.fallback_models, ["a", "b"], "the first entry");
        assert_eq!(
            general
                .rule("gpt-4", FallbackType::General)
                .unwrap()
                .fallback_models,
            ["z"],
            "any key of an entry, as DELETE finds it"
        );
        assert_eq!(
            general.rule("openai/gpt", FallbackType::General),
            None,
            "never the catch-all nor a prefixed name"
        );
        let policy = fallback_list(settings, FallbackType::ContentPolicy);
        assert!(policy.config_owned());
        assert!(policy.entries.is_empty());
        assert_eq!(policy.rule("gpt", FallbackType::ContentPolicy), None);
    }
}
