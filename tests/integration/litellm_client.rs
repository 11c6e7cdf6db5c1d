//! Contract tests of the LiteLLM admin API client against the real proxy of
//! `tests/harness/litellm/` (LiteLLM 1.108.7 + PostgreSQL).
//!
//! Tests run in parallel against one shared proxy: each uses its own random
//! ids and cleans up after itself, none relies on another's data.

use crate::support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use litellm_crossplane::litellm::{
    generate_key, masked_when_read, token_of, BudgetRequest, Client, CredentialRequest, Error,
    KeyRequest, McpServerRequest, ModelMetaRequest, ModelParamsRequest, ModelRequest,
    ObjectPermission, RegenerateRequest, Secret, TeamRequest, UserRequest, MAX_RESPONSE_BODY,
};
use litellm_crossplane::litellm::{LimitsRequest, SecretParams, SECRET_PARAMS};
use serde_json::{json, Map, Value};
use support::harness;

/// A client for the harness proxy, or return from the test when there is none.
macro_rules! client_or_skip {
    () => {
        match harness::litellm() {
            Some((url, master_key)) => client(&url, &master_key),
            None => return,
        }
    };
}

fn client(endpoint: &str, master_key: &str) -> Client {
    harness::admin_client(endpoint, master_key, Duration::from_secs(30))
}

/// `prefix-<12 random hex digits>`.
fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", &token_of(&generate_key())[..12])
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn team_lifecycle() {
    let litellm = client_or_skip!();
    let team_id = unique("ct-team");
    let request = TeamRequest {
        team_id: team_id.clone(),
        team_alias: Some("Contract team".into()),
        models: Some(vec!["m1".into(), "m2".into()]),
        limits: LimitsRequest {
            max_budget: Some(10.5),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            ..LimitsRequest::default()
        },
        metadata: Some(map(json!({"owner": "test", "keep": 1}))),
        ..TeamRequest::default()
    };

    let created = litellm.team_new(&request).await.expect("team_new");
    assert_eq!(created.team_id, team_id);
    assert_eq!(created.max_budget, Some(10.5));
    assert_eq!(created.spend, Some(0.0));

    let duplicate = litellm.team_new(&request).await.unwrap_err();
    assert!(
        matches!(
            duplicate,
            Error::Conflict {
                op: "POST /team/new",
                ..
            }
        ),
        "{duplicate}"
    );

    let info = litellm.team_info(&team_id).await.unwrap().expect("team");
    assert_eq!(info.team_alias.as_deref(), Some("Contract team"));
    assert_eq!(info.models, ["m1", "m2"]);
    assert_eq!(info.budget_duration.as_deref(), Some("30d"));
    assert!(info.budget_reset_at.is_some());
    assert_eq!((info.tpm_limit, info.rpm_limit), (Some(1000), Some(10)));
    assert_eq!(info.blocked, Some(false));
    assert!(info.created_at.is_some());

    // /team/update replaces metadata wholesale and leaves unsent fields.
    let update = TeamRequest {
        team_id: team_id.clone(),
        limits: LimitsRequest {
            max_budget: Some(20.0),
            ..LimitsRequest::default()
        },
        metadata: Some(map(json!({"other": true}))),
        ..TeamRequest::default()
    };
    let updated = litellm.team_update(&update).await.expect("team_update");
    assert_eq!(updated.max_budget, Some(20.0));
    let info = litellm.team_info(&team_id).await.unwrap().expect("team");
    assert_eq!(info.metadata, Some(map(json!({"other": true}))));
    assert_eq!(info.max_budget, Some(20.0));
    assert_eq!(info.tpm_limit, Some(1000));

    assert!(litellm.team_delete(&team_id).await.unwrap());
    assert!(!litellm.team_delete(&team_id).await.unwrap());
    assert_eq!(litellm.team_info(&team_id).await.unwrap(), None);

    let missing = litellm.team_update(&update).await.unwrap_err();
    assert!(
        matches!(
            missing,
            Error::NotFound {
                op: "POST /team/update"
            }
        ),
        "{missing}"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn team_delete_removes_its_keys() {
    let litellm = client_or_skip!();
    let team_id = unique("ct-team-keys");
    litellm
        .team_new(&TeamRequest {
            team_id: team_id.clone(),
            ..TeamRequest::default()
        })
        .await
        .unwrap();
    let key = generate_key();
    let generated = litellm
        .key_generate(
            Some(&key),
            &KeyRequest {
                team_id: Some(team_id.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let info = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(info.team_id.as_deref(), Some(team_id.as_str()));

    assert!(litellm.team_delete(&team_id).await.unwrap());
    assert_eq!(litellm.key_info(&generated.token).await.unwrap(), None);
    assert!(!litellm.key_delete(&generated.token).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn key_lifecycle() {
    let litellm = client_or_skip!();
    let (url, _) = harness::litellm().unwrap();
    let alias = unique("ct-key");
    let key = generate_key();
    let request = KeyRequest {
        key_alias: Some(alias.clone()),
        models: Some(vec!["m1".into()]),
        limits: LimitsRequest {
            max_budget: Some(1.5),
            budget_duration: Some("1d".into()),
            tpm_limit: Some(5),
            rpm_limit: Some(3),
            max_parallel_requests: Some(2),
            ..LimitsRequest::default()
        },
        metadata: Some(map(json!({"owner": "test", "keep": 1}))),
        ..KeyRequest::default()
    };

    let generated = litellm.key_generate(Some(&key), &request).await.unwrap();
    assert_eq!(generated.key, key, "LiteLLM stores the caller's key");
    assert_eq!(
        generated.token,
        token_of(&key),
        "token is sha256 of the key"
    );
    assert_eq!(generated.key_alias.as_deref(), Some(alias.as_str()));
    assert!(!format!("{generated:?}").contains(key.expose()));

    let duplicate = litellm
        .key_generate(Some(&generate_key()), &request)
        .await
        .unwrap_err();
    assert!(
        matches!(
            duplicate,
            Error::Conflict {
                op: "POST /key/generate",
                ..
            }
        ),
        "{duplicate}"
    );

    let info = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(info.token, generated.token);
    assert_eq!(info.key_alias.as_deref(), Some(alias.as_str()));
    assert_eq!(info.models, ["m1"]);
    assert_eq!(info.max_budget, Some(1.5));
    assert_eq!(info.budget_duration.as_deref(), Some("1d"));
    assert!(info.budget_reset_at.is_some());
    assert_eq!(
        (info.tpm_limit, info.rpm_limit, info.max_parallel_requests),
        (Some(5), Some(3), Some(2))
    );
    assert_eq!(info.spend, Some(0.0));
    assert_eq!(info.expires, None);
    let abbreviated = info.key_name.as_deref().unwrap();
    assert!(abbreviated.starts_with("sk-...") && key.expose().ends_with(&abbreviated[6..]));
    // Looking up by the key itself gives the same key (hashed client-side).
    assert_eq!(litellm.key_info(key.expose()).await.unwrap(), Some(info));

    // /key/update replaces metadata wholesale and leaves unsent fields.
    let updated = litellm
        .key_update(
            &generated.token,
            &KeyRequest {
                limits: LimitsRequest {
                    max_budget: Some(3.0),
                    ..LimitsRequest::default()
                },
                metadata: Some(map(json!({"other": true}))),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.token, generated.token);
    let info = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(info.max_budget, Some(3.0));
    assert_eq!(info.metadata, Some(map(json!({"other": true}))));
    assert_eq!(info.tpm_limit, Some(5));

    assert_eq!(
        litellm.key_list_by_alias(&alias).await.unwrap(),
        [generated.token.as_str()]
    );
    // Exact match only.
    assert_eq!(
        litellm
            .key_list_by_alias(&alias[..alias.len() - 1])
            .await
            .unwrap(),
        Vec::<String>::new()
    );

    // The key authenticates against the proxy (a key may read itself).
    let as_key = client(&url, key.expose());
    let own = as_key.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(own.key_alias.as_deref(), Some(alias.as_str()));

    assert!(litellm.key_delete(&generated.token).await.unwrap());
    assert!(!litellm.key_delete(&generated.token).await.unwrap());
    // 1.108 archives deleted keys and /key/info still answers them, with
    // status "deleted": the client reports them as absent.
    assert_eq!(litellm.key_info(&generated.token).await.unwrap(), None);
    assert!(litellm.key_list_by_alias(&alias).await.unwrap().is_empty());
    let refused = as_key.key_info(&generated.token).await.unwrap_err();
    assert!(matches!(refused, Error::Unauthorized { .. }), "{refused}");
    assert!(!refused.to_string().contains(key.expose()));

    let missing = litellm
        .key_update(&generated.token, &KeyRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(missing, Error::NotFound { .. }), "{missing}");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn generating_an_existing_key_again_changes_nothing() {
    let litellm = client_or_skip!();
    let key = generate_key();
    let first = litellm
        .key_generate(
            Some(&key),
            &KeyRequest {
                metadata: Some(map(json!({"version": 1}))),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();

    // LiteLLM upserts with an empty update: 200, same token, nothing stored.
    let again = litellm
        .key_generate(
            Some(&key),
            &KeyRequest {
                metadata: Some(map(json!({"version": 2}))),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(again.token, first.token);
    let info = litellm.key_info(&first.token).await.unwrap().unwrap();
    assert_eq!(info.metadata, Some(map(json!({"version": 1}))));

    assert!(litellm.key_delete(&first.token).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn litellm_generated_key_is_found_by_alias() {
    let litellm = client_or_skip!();
    let alias = unique("ct-generated");
    let generated = litellm
        .key_generate(
            None,
            &KeyRequest {
                key_alias: Some(alias.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(generated.key.expose().starts_with("sk-"));
    assert_eq!(generated.token, token_of(&generated.key));
    assert_eq!(
        litellm.key_list_by_alias(&alias).await.unwrap(),
        [generated.token.as_str()]
    );
    assert!(litellm.key_delete(generated.key.expose()).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn invalid_key_is_rejected_without_quoting_it() {
    let litellm = client_or_skip!();
    // Under LiteLLM's 16-character minimum.
    let short = Secret::new("sk-tooshort1");
    let err = litellm
        .key_generate(Some(&short), &KeyRequest::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Permanent {
                op: "POST /key/generate",
                status: 400,
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.is_retryable());
    assert!(!err.to_string().contains("sk-tooshort1"), "{err}");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn key_regenerate_is_enterprise_only() {
    let litellm = client_or_skip!();
    let key = generate_key();
    let generated = litellm
        .key_generate(Some(&key), &KeyRequest::default())
        .await
        .unwrap();
    let new_key = generate_key();
    let err = litellm
        .key_regenerate(
            &generated.token,
            &RegenerateRequest {
                new_key: Some(new_key.clone()),
                grace_period: Some("1h".into()),
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Forbidden {
                op: "POST /key/regenerate",
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.is_retryable());
    let text = err.to_string();
    assert!(!text.contains(key.expose()) && !text.contains(new_key.expose()));
    // Nothing changed: the old key is still there.
    assert!(litellm.key_info(&generated.token).await.unwrap().is_some());
    assert!(litellm.key_delete(&generated.token).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn budget_lifecycle() {
    let litellm = client_or_skip!();
    let budget_id = unique("ct-budget");
    let request = BudgetRequest {
        budget_id: budget_id.clone(),
        limits: LimitsRequest {
            max_budget: Some(12.25),
            budget_duration: Some("7d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(100),
            max_parallel_requests: Some(4),
            ..LimitsRequest::default()
        },
        soft_budget: Some(10.0),
    };

    let created = litellm.budget_new(&request).await.unwrap();
    assert_eq!(created.budget_id, budget_id);
    assert_eq!(created.max_budget, Some(12.25));

    let duplicate = litellm.budget_new(&request).await.unwrap_err();
    assert!(
        matches!(
            duplicate,
            Error::Conflict {
                op: "POST /budget/new",
                ..
            }
        ),
        "{duplicate}"
    );

    let info = litellm.budget_info(&budget_id).await.unwrap().unwrap();
    assert_eq!(info.soft_budget, Some(10.0));
    assert_eq!(info.budget_duration.as_deref(), Some("7d"));
    assert!(info.budget_reset_at.is_some());
    assert_eq!(
        (info.tpm_limit, info.rpm_limit, info.max_parallel_requests),
        (Some(1000), Some(100), Some(4))
    );

    let update = BudgetRequest {
        budget_id: budget_id.clone(),
        limits: LimitsRequest {
            max_budget: Some(15.0),
            ..LimitsRequest::default()
        },
        ..BudgetRequest::default()
    };
    let updated = litellm.budget_update(&update).await.unwrap();
    assert_eq!(updated.max_budget, Some(15.0));
    assert_eq!(updated.soft_budget, Some(10.0));

    assert!(litellm.budget_delete(&budget_id).await.unwrap());
    // Missing budgets: 200 null (delete, update) and 200 [] (info).
    assert!(!litellm.budget_delete(&budget_id).await.unwrap());
    assert_eq!(litellm.budget_info(&budget_id).await.unwrap(), None);
    let missing = litellm.budget_update(&update).await.unwrap_err();
    assert!(
        matches!(
            missing,
            Error::NotFound {
                op: "POST /budget/update"
            }
        ),
        "{missing}"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn model_lifecycle() {
    let litellm = client_or_skip!();
    let (url, master_key) = harness::litellm().unwrap();
    let model_id = unique("ct-model");
    let provider_key = Secret::new(format!("sk-provider-{}", unique("secret")));
    // A closed loopback port: LiteLLM stores the model and never calls it.
    let request = ModelRequest {
        model_name: unique("ct-model-name"),
        litellm_params: ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            api_base: Some("http://127.0.0.1:9".into()),
            secrets: SecretParams(BTreeMap::from([("api_key", provider_key.clone())])),
            rpm: Some(5),
            tpm: Some(50),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: model_id.clone(),
            extra: map(json!({
                "mode": "chat",
                "crossplane_owner": {"cluster": "c", "namespace": "ns", "name": "m", "uid": "u"},
                "tags": {"nested": [1, "two"]},
                "input_cost_per_token": 0.5,
            })),
        },
    };

    assert_eq!(litellm.model_new(&request).await.unwrap(), model_id);

    // Duplicate ids are answered 500; the client confirms and says Conflict.
    let duplicate = litellm.model_new(&request).await.unwrap_err();
    assert!(
        matches!(
            duplicate,
            Error::Conflict {
                op: "POST /model/new",
                ..
            }
        ),
        "{duplicate}"
    );

    let info = litellm.model_info(&model_id).await.unwrap().unwrap();
    assert_eq!(info.model_name, request.model_name);
    assert_eq!(info.model_info.id, model_id);
    assert_eq!(info.model_info.db_model, Some(true));
    assert_eq!(info.litellm_params.model.as_deref(), Some("openai/gpt-4o"));
    assert_eq!(
        info.litellm_params.api_base.as_deref(),
        Some("http://127.0.0.1:9")
    );
    assert_eq!(
        (info.litellm_params.rpm, info.litellm_params.tpm),
        (Some(5), Some(50))
    );
    // Free-form model_info comes back as sent, merged with the cost map...
    let extra = &info.model_info.extra;
    for field in ["mode", "crossplane_owner", "tags"] {
        assert_eq!(extra[field], request.model_info.extra[field], "{field}");
    }
    assert!(extra.contains_key("max_input_tokens"), "cost map merged in");
    // ...except pricing fields, which LiteLLM drops from model_info: the cost
    // map's value shows instead.
    assert_ne!(extra["input_cost_per_token"], json!(0.5));

    // The api key is never returned, not even encrypted.
    let raw = reqwest::Client::new()
        .get(format!("{url}/v2/model/info?modelId={model_id}"))
        .bearer_auth(&master_key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(raw.contains(&model_id) && !raw.contains(provider_key.expose()));
    assert!(!raw.contains("\"api_key\""), "{raw}");

    // Update merges litellm_params: api_key and tpm stay as they were.
    let update = ModelRequest {
        model_name: format!("{}-renamed", request.model_name),
        litellm_params: ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            api_base: Some("http://127.0.0.1:10".into()),
            api_version: Some("2024-06-01".into()),
            rpm: Some(6),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: model_id.clone(),
            extra: map(json!({"mode": "completion"})),
        },
    };
    litellm.model_update(&update).await.unwrap();
    let info = litellm.model_info(&model_id).await.unwrap().unwrap();
    assert_eq!(info.model_name, update.model_name);
    // model_info is merged too: unsent fields keep their values.
    assert_eq!(info.model_info.extra["mode"], "completion");
    assert_eq!(
        info.model_info.extra["crossplane_owner"],
        request.model_info.extra["crossplane_owner"]
    );
    assert_eq!(
        info.litellm_params.api_base.as_deref(),
        Some("http://127.0.0.1:10")
    );
    assert_eq!(
        info.litellm_params.api_version.as_deref(),
        Some("2024-06-01")
    );
    assert_eq!(
        (info.litellm_params.rpm, info.litellm_params.tpm),
        (Some(6), Some(50))
    );

    assert!(litellm.model_delete(&model_id).await.unwrap());
    // A missing model is answered 400; confirmed absent, so "already gone".
    assert!(!litellm.model_delete(&model_id).await.unwrap());
    assert_eq!(litellm.model_info(&model_id).await.unwrap(), None);

    let missing = litellm.model_update(&update).await.unwrap_err();
    assert!(
        matches!(
            missing,
            Error::NotFound {
                op: "PATCH /model/{id}/update"
            }
        ),
        "{missing}"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn health_probes() {
    let litellm = client_or_skip!();
    assert!(litellm.liveliness().await.unwrap());
    let readiness = litellm.readiness().await.unwrap();
    assert_eq!(readiness.status, "healthy");
    assert_eq!(readiness.db.as_deref(), Some("connected"));
    // The harness does not set allow_public_health_readiness_details.
    assert_eq!(readiness.litellm_version, None);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn health_probes_need_no_master_key() {
    let Some((url, _)) = harness::litellm() else {
        return;
    };
    let anonymous = Client::public(&url, None, Duration::from_secs(30)).unwrap();
    assert!(anonymous.liveliness().await.unwrap());
    assert_eq!(anonymous.readiness().await.unwrap().status, "healthy");
    let refused = anonymous.team_info("any").await.unwrap_err();
    assert!(matches!(refused, Error::Config(_)), "{refused}");
    // A wrong key is not sent to the public routes either.
    let wrong = client(&url, "sk-wrong-master-key-0000");
    assert!(wrong.liveliness().await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn wrong_master_key_is_unauthorized_and_never_quoted() {
    let Some((url, _)) = harness::litellm() else {
        return;
    };
    let wrong = client(&url, "sk-wrong-master-key-0000");
    let err = wrong.team_info("any").await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Unauthorized {
                op: "GET /team/info",
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.is_retryable());
    let text = format!("{err} {err:?}");
    assert!(!text.contains("sk-wrong-master-key-0000"), "{text}");
    assert!(!format!("{wrong:?}").contains("sk-wrong-master-key-0000"));
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn key_lookalikes_in_response_bodies_are_scrubbed() {
    let litellm = client_or_skip!();
    // LiteLLM quotes a duplicate team id in its 400 body; one shaped like a
    // key must not come back in the error.
    let team_id = unique("sk-lookalike");
    let request = TeamRequest {
        team_id: team_id.clone(),
        ..TeamRequest::default()
    };
    litellm.team_new(&request).await.unwrap();
    let err = litellm.team_new(&request).await.unwrap_err();
    assert!(matches!(err, Error::Conflict { .. }), "{err}");
    let text = err.to_string();
    assert!(
        !text.contains(&team_id) && text.contains("<redacted>"),
        "{text}"
    );
    assert!(litellm.team_delete(&team_id).await.unwrap());
}

#[tokio::test]
async fn unreachable_proxy_is_retryable_and_never_quotes_the_key() {
    // Port 9 (discard) on loopback is closed: the connection is refused.
    let unreachable = client("http://127.0.0.1:9", "sk-unreachable-master-0000");
    for err in [
        unreachable.liveliness().await.unwrap_err(),
        unreachable
            .key_info(generate_key().expose())
            .await
            .unwrap_err(),
    ] {
        assert!(err.is_retryable(), "{err}");
        let text = format!("{err} {err:?}");
        assert!(!text.contains("sk-"), "{text}");
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn observer_sees_every_request() {
    let Some((url, master_key)) = harness::litellm() else {
        return;
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let litellm = client(&url, &master_key).with_observer(Arc::new(move |op, status, elapsed| {
        record.lock().unwrap().push((op, status, elapsed));
    }));
    assert_eq!(litellm.team_info(&unique("ct-none")).await.unwrap(), None);
    assert!(litellm.liveliness().await.unwrap());

    let seen = seen.lock().unwrap();
    let calls: Vec<_> = seen.iter().map(|(op, status, _)| (*op, *status)).collect();
    assert_eq!(
        calls,
        [("GET /team/info", 404), ("GET /health/liveliness", 200)]
    );
    assert!(seen.iter().all(|(_, _, elapsed)| *elapsed > Duration::ZERO));
}

// The response body limit. The real proxy never answers more than a few
// kilobytes, so over-long and endless bodies come from a fake proxy here;
// a large answer under the limit comes from the real one too.

/// How [`FakeProxy`] answers every request.
#[derive(Clone)]
enum Answer {
    /// This body, with its `content-length`.
    Sized(Arc<Vec<u8>>),
    /// This body, chunked: no length is announced.
    Chunked(Arc<Vec<u8>>),
    /// A `content-length` of this many bytes, then filler until the client
    /// goes away.
    Announced(u64),
    /// A chunked body that never ends.
    Endless,
}

/// A loopback HTTP/1.1 server that answers every request with one
/// [`Answer`] and reports, per connection, how many body bytes it managed
/// to write before the body ended or the client went away.
struct FakeProxy {
    url: String,
    written: tokio::sync::mpsc::UnboundedReceiver<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeProxy {
    async fn start(answer: Answer) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (report, written) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (answer, report) = (answer.clone(), report.clone());
                tokio::spawn(async move {
                    let _ = report.send(serve_fake(stream, answer).await);
                });
            }
        });
        Self { url, written, task }
    }

    /// The body bytes written on the next connection that ended, or a
    /// failure when none ends within `within` (the client kept it open).
    async fn next_connection_ended(&mut self, within: Duration) -> u64 {
        tokio::time::timeout(within, self.written.recv())
            .await
            .expect("the client closed the connection")
            .expect("the fake proxy runs")
    }

    fn client(&self) -> Client {
        client(&self.url, "sk-fake-master-0000")
    }
}

/// Reads one request (head, and a body by `content-length`), answers it and
/// returns how many body bytes were written.
async fn serve_fake(stream: tokio::net::TcpStream, answer: Answer) -> u64 {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return 0;
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut request_body = vec![0; length];
    if reader.read_exact(&mut request_body).await.is_err() {
        return 0;
    }
    let mut stream = reader.into_inner();
    let head = |framing: String| {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{framing}\r\nconnection: close\r\n\r\n"
        )
    };
    let filler = vec![b'x'; 64 * 1024];
    let mut written = 0u64;
    match answer {
        Answer::Sized(body) => {
            let head = head(format!("content-length: {}", body.len()));
            if stream.write_all(head.as_bytes()).await.is_ok()
                && stream.write_all(&body).await.is_ok()
            {
                written = body.len() as u64;
            }
        }
        Answer::Chunked(body) => {
            if stream
                .write_all(head("transfer-encoding: chunked".into()).as_bytes())
                .await
                .is_err()
            {
                return 0;
            }
            for chunk in body.chunks(filler.len()) {
                let size = format!("{:x}\r\n", chunk.len());
                if stream.write_all(size.as_bytes()).await.is_err()
                    || stream.write_all(chunk).await.is_err()
                    || stream.write_all(b"\r\n").await.is_err()
                {
                    return written;
                }
                written += chunk.len() as u64;
            }
            let _ = stream.write_all(b"0\r\n\r\n").await;
        }
        Answer::Announced(length) => {
            let head = head(format!("content-length: {length}"));
            if stream.write_all(head.as_bytes()).await.is_err() {
                return 0;
            }
            while written < length {
                let n = filler.len().min((length - written) as usize);
                if stream.write_all(&filler[..n]).await.is_err() {
                    break;
                }
                written += n as u64;
            }
        }
        Answer::Endless => {
            if stream
                .write_all(head("transfer-encoding: chunked".into()).as_bytes())
                .await
                .is_err()
            {
                return 0;
            }
            let size = format!("{:x}\r\n", filler.len());
            loop {
                if stream.write_all(size.as_bytes()).await.is_err()
                    || stream.write_all(&filler).await.is_err()
                    || stream.write_all(b"\r\n").await.is_err()
                {
                    break;
                }
                written += filler.len() as u64;
            }
        }
    }
    let _ = stream.shutdown().await;
    written
}

/// A `/team/info` answer of exactly `size` bytes (padded in its metadata).
fn team_info_body(size: usize) -> Vec<u8> {
    let frame = |pad: &str| {
        json!({"team_id": "t", "team_info": {"team_id": "t", "metadata": {"pad": pad}}})
            .to_string()
            .into_bytes()
    };
    let overhead = frame("").len();
    let body = frame(&"p".repeat(size - overhead));
    assert_eq!(body.len(), size);
    body
}

fn assert_too_large(err: &Error, op: &str) {
    assert!(
        matches!(err, Error::ResponseTooLarge { op: o, limit } if *o == op && *limit == MAX_RESPONSE_BODY),
        "{err:?}"
    );
    assert!(!err.is_retryable(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(op) && text.contains(&format!("{MAX_RESPONSE_BODY} bytes")),
        "{text}"
    );
    // Nothing of the body: neither its padding nor its JSON.
    assert!(
        !text.contains("xxx") && !text.contains("ppp") && !text.contains("team_info"),
        "{text}"
    );
}

#[tokio::test]
async fn an_endless_body_is_cut_at_the_limit_and_not_retried() {
    let mut fake = FakeProxy::start(Answer::Endless).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let litellm = fake.client().with_observer(Arc::new(move |op, status, _| {
        record.lock().unwrap().push((op, status));
    }));
    let started = std::time::Instant::now();
    let err = litellm.team_info("t").await.unwrap_err();
    // Cut at the limit, not ended by the 30 s request timeout.
    assert!(started.elapsed() < Duration::from_secs(10), "{err}");
    assert_too_large(&err, "GET /team/info");
    assert_eq!(*seen.lock().unwrap(), [("GET /team/info", 200)]);
    // The client hung up: the server's writes failed soon after the limit
    // (what it wrote beyond is what the loopback socket buffers took).
    let written = fake.next_connection_ended(Duration::from_secs(10)).await;
    assert!(
        written >= MAX_RESPONSE_BODY as u64 && written < 64 * MAX_RESPONSE_BODY as u64,
        "{written} bytes written"
    );
}

#[tokio::test]
async fn a_length_announced_over_the_limit_is_refused_before_the_body_is_read() {
    let announced = MAX_RESPONSE_BODY as u64 + 1;
    let mut fake = FakeProxy::start(Answer::Announced(announced)).await;
    let request = TeamRequest {
        team_id: "t".into(),
        ..TeamRequest::default()
    };
    let err = fake.client().team_new(&request).await.unwrap_err();
    assert_too_large(&err, "POST /team/new");
    fake.next_connection_ended(Duration::from_secs(10)).await;

    // A huge announced length, as a misbehaving proxy might send.
    let mut fake = FakeProxy::start(Answer::Announced(u64::MAX / 2)).await;
    let err = fake.client().team_info("t").await.unwrap_err();
    assert_too_large(&err, "GET /team/info");
    let written = fake.next_connection_ended(Duration::from_secs(10)).await;
    assert!(written < 64 * MAX_RESPONSE_BODY as u64, "{written}");
}

#[tokio::test]
async fn a_body_of_exactly_the_limit_is_read_whole_and_one_byte_more_is_refused() {
    let at_limit = Arc::new(team_info_body(MAX_RESPONSE_BODY));
    let over = Arc::new(team_info_body(MAX_RESPONSE_BODY + 1));
    for answer in [Answer::Sized(at_limit.clone()), Answer::Chunked(at_limit)] {
        let fake = FakeProxy::start(answer).await;
        let team = fake.client().team_info("t").await.unwrap().expect("team");
        let pad = &team.metadata.expect("metadata")["pad"];
        assert!(pad
            .as_str()
            .is_some_and(|p| p.len() > MAX_RESPONSE_BODY - 100));
    }
    for answer in [Answer::Sized(over.clone()), Answer::Chunked(over)] {
        let fake = FakeProxy::start(answer).await;
        let Err(err) = fake.client().team_info("t").await else {
            panic!("a body one byte over the limit was read");
        };
        assert_too_large(&err, "GET /team/info");
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_large_answer_under_the_limit_from_the_real_proxy_is_read_whole() {
    let litellm = client_or_skip!();
    let team_id = unique("ct-large");
    // About 900 KiB of metadata, which /team/info answers in full.
    let pad = "large-".repeat(150_000);
    let request = TeamRequest {
        team_id: team_id.clone(),
        metadata: Some(map(json!({"pad": pad}))),
        ..TeamRequest::default()
    };
    litellm.team_new(&request).await.expect("team_new");
    let info = litellm.team_info(&team_id).await.unwrap().expect("team");
    assert_eq!(info.metadata, Some(map(json!({"pad": pad}))));
    assert!(litellm.team_delete(&team_id).await.unwrap());
}

/// The largest values the CRDs admit reach LiteLLM and come back unchanged:
/// no float on the way turns them into a neighbour.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn values_at_the_crd_maxima_reach_litellm_unchanged() {
    use litellm_crossplane::api::common::bounds::{MAX_PARALLEL_REQUESTS, MAX_RATE_LIMIT};
    let litellm = client_or_skip!();
    // 2^53 - 1 is odd, so a round trip through a float that loses its last
    // bit would show.
    assert_eq!(MAX_RATE_LIMIT % 2, 1);

    let team_id = unique("ct-max-team");
    let team = TeamRequest {
        team_id: team_id.clone(),
        limits: LimitsRequest {
            tpm_limit: Some(MAX_RATE_LIMIT),
            rpm_limit: Some(MAX_RATE_LIMIT),
            ..LimitsRequest::default()
        },
        ..TeamRequest::default()
    };
    litellm.team_new(&team).await.expect("team_new");
    let info = litellm.team_info(&team_id).await.unwrap().expect("team");
    assert_eq!(
        (info.tpm_limit, info.rpm_limit),
        (Some(MAX_RATE_LIMIT), Some(MAX_RATE_LIMIT))
    );
    assert!(litellm.team_delete(&team_id).await.unwrap());

    let budget_id = unique("ct-max-budget");
    let budget = BudgetRequest {
        budget_id: budget_id.clone(),
        limits: LimitsRequest {
            tpm_limit: Some(MAX_RATE_LIMIT),
            rpm_limit: Some(MAX_RATE_LIMIT),
            max_parallel_requests: Some(MAX_PARALLEL_REQUESTS),
            ..LimitsRequest::default()
        },
        ..BudgetRequest::default()
    };
    litellm.budget_new(&budget).await.expect("budget_new");
    let info = litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .expect("budget");
    assert_eq!(
        (info.tpm_limit, info.rpm_limit, info.max_parallel_requests),
        (
            Some(MAX_RATE_LIMIT),
            Some(MAX_RATE_LIMIT),
            Some(MAX_PARALLEL_REQUESTS)
        )
    );
    assert!(litellm.budget_delete(&budget_id).await.unwrap());

    let key = generate_key();
    let settings = KeyRequest {
        key_alias: Some(unique("ct-max-key")),
        limits: LimitsRequest {
            tpm_limit: Some(MAX_RATE_LIMIT),
            rpm_limit: Some(MAX_RATE_LIMIT),
            max_parallel_requests: Some(MAX_PARALLEL_REQUESTS),
            ..LimitsRequest::default()
        },
        ..KeyRequest::default()
    };
    litellm
        .key_generate(Some(&key), &settings)
        .await
        .expect("key_generate");
    let info = litellm.key_info(key.expose()).await.unwrap().expect("key");
    assert_eq!(
        (info.tpm_limit, info.rpm_limit, info.max_parallel_requests),
        (
            Some(MAX_RATE_LIMIT),
            Some(MAX_RATE_LIMIT),
            Some(MAX_PARALLEL_REQUESTS)
        )
    );
    assert!(litellm.key_delete(key.expose()).await.unwrap());

    let model_id = unique("ct-max-model");
    let model = ModelRequest {
        model_name: unique("ct-max-model-name"),
        litellm_params: ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            api_base: Some("http://127.0.0.1:9".into()),
            tpm: Some(MAX_RATE_LIMIT),
            rpm: Some(MAX_RATE_LIMIT),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: model_id.clone(),
            extra: Map::new(),
        },
    };
    litellm.model_new(&model).await.expect("model_new");
    let info = litellm.model_info(&model_id).await.unwrap().expect("model");
    assert_eq!(
        (info.litellm_params.tpm, info.litellm_params.rpm),
        (Some(MAX_RATE_LIMIT), Some(MAX_RATE_LIMIT))
    );
    assert!(litellm.model_delete(&model_id).await.unwrap());
}

/// One past `maxParallelRequests`' bound is what LiteLLM cannot store: it
/// answers HTTP 500, which the client would take for a passing fault and
/// retry forever. The CRD bound keeps such a value from ever being sent.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn one_past_the_parallel_requests_bound_is_a_server_error_in_litellm() {
    use litellm_crossplane::api::common::bounds::MAX_PARALLEL_REQUESTS;
    let litellm = client_or_skip!();
    let budget_id = unique("ct-over-budget");
    let budget = BudgetRequest {
        budget_id: budget_id.clone(),
        limits: LimitsRequest {
            max_parallel_requests: Some(MAX_PARALLEL_REQUESTS + 1),
            ..LimitsRequest::default()
        },
        ..BudgetRequest::default()
    };
    let err = litellm.budget_new(&budget).await.unwrap_err();
    assert!(err.is_retryable(), "{err}");
    // The proxy closes the connection after the 500: ask on a new one.
    let litellm = client_or_skip!();
    assert_eq!(litellm.budget_info(&budget_id).await.unwrap(), None);
}

/// Every credential a model can carry is accepted and never comes back in
/// clear, and every plain parameter comes back as sent (numbers as floats):
/// what the provider's diff of models relies on (LiteLLM 1.108.7).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn model_credentials_never_come_back_and_plain_params_do() {
    let litellm = client_or_skip!();
    let (url, master_key) = harness::litellm().unwrap();
    let model_id = unique("ct-cred-model");
    let secret = |name: &str| Secret::new(format!("{name}-{}", unique("value")));
    let secrets: BTreeMap<&'static str, Secret> = SECRET_PARAMS
        .iter()
        .map(|name| (*name, secret(name)))
        .collect();
    let plain = map(json!({
        "aws_region_name": "us-east-1",
        "aws_role_name": "arn:aws:iam::123456789012:role/ct",
        "aws_session_name": "ct-session",
        "vertex_project": "ct-project",
        "vertex_location": "us-central1",
        "tenant_id": "ct-tenant",
        "client_id": "ct-client",
        "timeout": 30,
        "stream_timeout": 60,
        "max_retries": 3,
        "drop_params": true,
        "custom_llm_provider": "bedrock",
        "tags": ["ct-a", "ct-b"],
        "input_cost_per_token": 0.0000025,
        "output_cost_per_token": 0.00001,
        "num_retries": 2,
    }));
    let request = ModelRequest {
        model_name: unique("ct-cred-model-name"),
        litellm_params: ModelParamsRequest {
            model: "bedrock/anthropic.claude-3-5-sonnet".into(),
            secrets: SecretParams(secrets.clone()),
            extra: plain.clone(),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: model_id.clone(),
            extra: Map::new(),
        },
    };
    assert_eq!(litellm.model_new(&request).await.unwrap(), model_id);
    let info = litellm.model_info(&model_id).await.unwrap().unwrap();
    for (name, want) in &plain {
        let have = &info.litellm_params.extra[name];
        let same = match (want.as_f64(), have.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => want == have,
        };
        assert!(same, "{name}: sent {want}, read {have}");
    }
    // No secret value, whole or in part, in what any read returns.
    let raw = reqwest::Client::new()
        .get(format!("{url}/v2/model/info?modelId={model_id}"))
        .bearer_auth(&master_key)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(raw.contains(&model_id));
    for (name, value) in &secrets {
        let suffix = value.expose().rsplit('-').next().unwrap();
        assert!(!raw.contains(suffix), "{name} shows in {raw}");
    }
    // Some are removed, the rest masked (`aws_session_token` as
    // `aws_****1234`): the client passes on nothing of either.
    assert!(
        raw.contains("\"aws_session_token\""),
        "masked, not removed: {raw}"
    );
    for name in SECRET_PARAMS {
        assert_eq!(info.litellm_params.extra.get(*name), None, "{name}");
    }
    assert!(litellm.model_delete(&model_id).await.unwrap());
}

/// A credential with `values` (all of them secret to the client) and
/// `info`.
fn credential(name: &str, values: &[(&str, &str)], info: Value) -> CredentialRequest {
    CredentialRequest {
        credential_name: name.to_owned(),
        credential_values: values
            .iter()
            .map(|(k, v)| ((*k).to_owned(), Secret::new(*v)))
            .collect(),
        credential_info: map(info),
        ..CredentialRequest::default()
    }
}

/// A row of LiteLLM's credentials table, as JSON text (`credential_info`,
/// `credential_values`), read with `psql` from the harness's database.
fn stored_credential(name: &str, column: &str) -> String {
    psql(&format!(
        "select {column} from \"LiteLLM_CredentialsTable\" where credential_name = '{name}'"
    ))
}

/// The answer of one `psql` query against the harness's database.
fn psql(query: &str) -> String {
    let url = std::env::var("LITELLM_DATABASE_URL")
        .expect("the LiteLLM harness exports LITELLM_DATABASE_URL");
    let out = std::process::Command::new("psql")
        .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", &url, "-c", query])
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// [`stored_credential`] of a JSON column, parsed.
fn stored_json(name: &str, column: &str) -> Value {
    let text = stored_credential(name, column);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{column} of {name}: {e}: {text:?}"))
}

/// Status and body of a raw admin request.
async fn raw(method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, String) {
    let (url, master_key) = harness::litellm().unwrap();
    let mut request = reqwest::Client::new()
        .request(method, format!("{url}{path}"))
        .bearer_auth(master_key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn credential_lifecycle() {
    let litellm = client_or_skip!();
    let name = unique("ct-cred");
    let api_key = format!("sk-{}-k7", unique("upstream"));
    let owner = json!({"cluster": "c", "namespace": "ns", "name": "cred", "uid": "u"});
    let request = credential(
        &name,
        &[("api_key", &api_key), ("api_base", "http://127.0.0.1:9/v1")],
        json!({"crossplane_owner": owner, "description": "first"}),
    );
    assert!(litellm.credential_get(&name).await.unwrap().is_none());
    litellm.credential_new(&request).await.expect("created");
    let duplicate = litellm.credential_new(&request).await.unwrap_err();
    assert!(
        matches!(
            duplicate,
            Error::Conflict {
                op: "POST /credentials",
                ..
            }
        ),
        "{duplicate}"
    );

    // Masked: the first and last two characters; api_base as stored.
    let stored = litellm.credential_get(&name).await.unwrap().expect("found");
    assert_eq!(stored.credential_name, name);
    assert_eq!(stored.display_name, None);
    assert_eq!(
        stored.credential_info,
        Some(request.credential_info.clone())
    );
    assert_eq!(stored.credential_values["api_key"], json!("sk****k7"));
    assert_eq!(
        stored.credential_values["api_base"],
        "http://127.0.0.1:9/v1"
    );
    // The list masks them too; there is no GET of one by its bare name.
    let (status, listed) = raw(reqwest::Method::GET, "/credentials", None).await;
    assert_eq!(status, 200);
    assert!(listed.contains(&name) && !listed.contains(&api_key));
    let (status, _) = raw(reqwest::Method::GET, &format!("/credentials/{name}"), None).await;
    assert_eq!(status, 405);
    // Encrypted at rest; credential_info in plain text.
    assert!(!stored_credential(&name, "credential_values").contains(&api_key));
    assert!(stored_credential(&name, "credential_info").contains("\"first\""));

    // PATCH merges values, removes those to delete, and replaces
    // credential_info in the database (the proxy's memory merges it until
    // its next periodic reload from the database, so what a read shows of
    // the old credential_info depends on the moment).
    let rotated = format!("sk-{}-r2", unique("upstream"));
    let update = CredentialRequest {
        credential_values_to_delete: vec!["api_base".into()],
        display_name: Some("Contract".into()),
        ..credential(
            &name,
            &[("api_key", &rotated), ("aws_region_name", "eu-west-1")],
            json!({"crossplane_owner": owner}),
        )
    };
    litellm.credential_update(&update).await.expect("updated");
    let stored = litellm.credential_get(&name).await.unwrap().unwrap();
    assert_eq!(stored.display_name.as_deref(), Some("Contract"));
    assert_eq!(
        stored.credential_values,
        map(json!({"api_key": "sk****r2", "aws_region_name": "eu-west-1"}))
    );
    assert_eq!(
        stored.credential_info.as_ref().unwrap()["crossplane_owner"],
        owner
    );
    let in_db = stored_json(&name, "credential_info");
    assert_eq!(
        in_db,
        json!({"crossplane_owner": owner}),
        "replaced in the database"
    );
    // `{}` leaves credential_info; an unset display name stays.
    litellm
        .credential_update(&credential(&name, &[], json!({})))
        .await
        .unwrap();
    let in_db = stored_json(&name, "credential_info");
    assert_eq!(in_db, json!({"crossplane_owner": owner}));
    let stored = litellm.credential_get(&name).await.unwrap().unwrap();
    assert_eq!(stored.display_name.as_deref(), Some("Contract"));
    assert_eq!(stored.credential_values.len(), 2);
    // The name in the body must be the path's.
    let (status, _) = raw(
        reqwest::Method::PATCH,
        &format!("/credentials/{name}"),
        Some(json!({"credential_name": "another", "credential_info": {}})),
    )
    .await;
    assert_eq!(status, 400);

    assert!(litellm.credential_delete(&name).await.unwrap());
    assert!(!litellm.credential_delete(&name).await.unwrap());
    assert!(litellm.credential_get(&name).await.unwrap().is_none());
    let missing = litellm.credential_update(&update).await.unwrap_err();
    assert!(
        matches!(
            missing,
            Error::NotFound {
                op: "PATCH /credentials/{name}"
            }
        ),
        "{missing}"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_credential_needs_values_and_credential_info() {
    let litellm = client_or_skip!();
    let name = unique("ct-cred-bad");
    let empty = litellm
        .credential_new(&credential(&name, &[], json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(empty, Error::Permanent { status: 422, .. }),
        "{empty}"
    );
    let (status, _) = raw(
        reqwest::Method::POST,
        "/credentials",
        Some(json!({"credential_name": name, "credential_values": {"api_base": "http://x"}})),
    )
    .await;
    assert_eq!(status, 422);
    assert!(litellm.credential_get(&name).await.unwrap().is_none());
}

/// Which values LiteLLM masks when it reads a credential back:
/// [`masked_when_read`] says the same for every name.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn credential_values_are_masked_by_their_names() {
    let litellm = client_or_skip!();
    let name = unique("ct-cred-mask");
    let names = [
        "api_key",
        "API_KEY",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "db_password",
        "passwd",
        "x_authorization",
        "keystone",
        "api_base",
        "api_version",
        "aws_region_name",
        "vertex_project",
        "organization",
    ];
    let value = "value-long-enough-to-mask";
    let values: Vec<(&str, &str)> = names.iter().map(|n| (*n, value)).collect();
    litellm
        .credential_new(&credential(&name, &values, json!({})))
        .await
        .unwrap();
    let stored = litellm.credential_get(&name).await.unwrap().unwrap();
    litellm.credential_delete(&name).await.unwrap();
    for key in names {
        let masked = stored.credential_values[key] != value;
        assert_eq!(masked, masked_when_read(key), "{key}");
    }
}

/// LiteLLM deletes a credential that models use, and `/model/new` takes a
/// credential name that does not exist; only a model update checks it.
/// An update that sends the name `null` detaches the credential (the one
/// parameter besides pricing that `null` clears), and a create may send
/// `null`.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn credentials_in_use_are_deleted_without_a_check() {
    let litellm = client_or_skip!();
    let name = unique("ct-cred-used");
    litellm
        .credential_new(&credential(
            &name,
            &[("api_key", "sk-in-use-0000")],
            json!({}),
        ))
        .await
        .unwrap();
    let model = |id: &str, credential: &str| ModelRequest {
        model_name: unique("ct-cred-model"),
        litellm_params: ModelParamsRequest {
            model: "openai/gpt-4o".into(),
            api_base: Some("http://127.0.0.1:9".into()),
            credential_name: Some(credential.to_owned()),
            ..ModelParamsRequest::default()
        },
        model_info: ModelMetaRequest {
            id: id.to_owned(),
            extra: Map::new(),
        },
    };
    let (user, orphan) = (unique("ct-cred-user"), unique("ct-cred-orphan"));
    litellm.model_new(&model(&user, &name)).await.unwrap();
    let read = litellm.model_info(&user).await.unwrap().unwrap();
    assert_eq!(
        read.litellm_params.credential_name.as_deref(),
        Some(name.as_str()),
        "the credential's name is read back in clear"
    );
    assert!(!read
        .litellm_params
        .extra
        .contains_key("litellm_credential_name"));
    assert!(litellm.credential_delete(&name).await.unwrap());
    litellm
        .model_new(&model(&orphan, &unique("ct-no-such-credential")))
        .await
        .expect("/model/new takes any credential name");
    let update = litellm
        .model_update(&model(&orphan, &unique("ct-no-such-credential")))
        .await
        .unwrap_err();
    assert!(
        matches!(update, Error::Permanent { status: 400, .. }),
        "{update}"
    );
    let detached = ModelRequest {
        litellm_params: ModelParamsRequest {
            credential_name: None,
            ..model(&user, "").litellm_params
        },
        ..model(&user, "")
    };
    litellm.model_update(&detached).await.unwrap();
    let read = litellm.model_info(&user).await.unwrap().unwrap();
    assert_eq!(read.litellm_params.credential_name, None, "null detaches");
    let fresh = unique("ct-cred-none");
    litellm
        .model_new(&ModelRequest {
            model_info: ModelMetaRequest {
                id: fresh.clone(),
                extra: Map::new(),
            },
            ..detached.clone()
        })
        .await
        .expect("a create may send no credential as null");
    for id in [user, orphan, fresh] {
        litellm.model_delete(&id).await.unwrap();
    }
}

/// Status and body of `POST /key/generate` (a key with all models and a
/// budget of 1,000) called with the virtual key `key`.
async fn generate_with(key: &str) -> (u16, Value) {
    let (url, _) = harness::litellm().unwrap();
    let response = reqwest::Client::new()
        .post(format!("{url}/key/generate"))
        .bearer_auth(key)
        .json(&json!({"max_budget": 1000}))
        .send()
        .await
        .expect("request sent");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// What 1.108.7 does with a key's and team's usage and access settings:
/// `tags` and `guardrails` are refused with 403 without a licence; the
/// per-model limits are kept in `metadata` (and an update that sends its
/// own metadata keeps them); `key_type` replaces `allowed_routes` with its
/// group; aliases come back as sent; and `allowed_routes` lets a
/// non-admin key call an admin route (a key allowed `/key/generate` makes
/// keys of any budget), which is why tenants may not set any but the safe
/// groups.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn usage_and_access_settings_as_litellm_keeps_them() {
    use litellm_crossplane::litellm::{KeyAccessRequest, UsageRequest};
    let litellm = client_or_skip!();
    for usage in [
        UsageRequest {
            tags: Some(vec!["ml".into()]),
            ..UsageRequest::default()
        },
        UsageRequest {
            guardrails: Some(vec!["pii".into()]),
            ..UsageRequest::default()
        },
    ] {
        let key = KeyRequest {
            key_alias: Some(unique("ct-ent")),
            usage: usage.clone(),
            ..KeyRequest::default()
        };
        let err = litellm.key_generate(None, &key).await.unwrap_err();
        assert!(matches!(err, Error::Forbidden { .. }), "{err}");
        let team = TeamRequest {
            team_id: unique("ct-ent-team"),
            usage,
            ..TeamRequest::default()
        };
        let err = litellm.team_new(&team).await.unwrap_err();
        assert!(matches!(err, Error::Forbidden { .. }), "{err}");
        assert!(litellm.team_info(&team.team_id).await.unwrap().is_none());
    }

    let limited = UsageRequest {
        model_rpm_limit: Some([("gpt-4o".to_owned(), 5)].into()),
        model_tpm_limit: Some([("gpt-4o".to_owned(), 500)].into()),
        ..UsageRequest::default()
    };
    let team = TeamRequest {
        team_id: unique("ct-usage-team"),
        usage: limited.clone(),
        metadata: Some(map(json!({"a": 1}))),
        ..TeamRequest::default()
    };
    litellm.team_new(&team).await.unwrap();
    let live = litellm.team_info(&team.team_id).await.unwrap().unwrap();
    let metadata = live.metadata.unwrap();
    assert_eq!(metadata["model_rpm_limit"], json!({"gpt-4o": 5}));
    assert_eq!(metadata["model_tpm_limit"], json!({"gpt-4o": 500}));
    assert_eq!(metadata["a"], 1);
    litellm.team_delete(&team.team_id).await.unwrap();

    let generated = litellm
        .key_generate(
            None,
            &KeyRequest {
                usage: limited.clone(),
                access: KeyAccessRequest {
                    key_type: Some("llm_api"),
                    allowed_routes: Some(vec!["/key/generate".into()]),
                    aliases: Some([("fast".to_owned(), "gpt-4o".to_owned())].into()),
                },
                metadata: Some(map(json!({"a": 1}))),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let live = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(live.key_type.as_deref(), Some("llm_api"));
    assert_eq!(live.allowed_routes, ["llm_api_routes"], "key_type wins");
    assert_eq!(live.aliases["fast"], "gpt-4o");
    assert_eq!(
        live.metadata.as_ref().unwrap()["model_rpm_limit"],
        json!({"gpt-4o": 5})
    );
    // An update with metadata of its own and the limits keeps both.
    let update = KeyRequest {
        usage: limited,
        metadata: Some(map(json!({"a": 2}))),
        ..KeyRequest::default()
    };
    litellm.key_update(&generated.token, &update).await.unwrap();
    let live = litellm.key_info(&generated.token).await.unwrap().unwrap();
    let metadata = live.metadata.unwrap();
    assert_eq!(metadata["a"], 2);
    assert_eq!(metadata["model_tpm_limit"], json!({"gpt-4o": 500}));
    let (status, _) = generate_with(generated.key.expose()).await;
    assert_eq!(status, 403, "an LLM key may not make keys");

    // allowed_routes grants an admin route to a key of no admin.
    let admin_route = litellm
        .key_generate(
            None,
            &KeyRequest {
                access: KeyAccessRequest {
                    allowed_routes: Some(vec!["/key/generate".into()]),
                    ..KeyAccessRequest::default()
                },
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let (status, minted) = generate_with(admin_route.key.expose()).await;
    assert_eq!(status, 200, "{minted}");
    assert_eq!(minted["max_budget"], 1000.0);
    let minted = minted["token"].as_str().unwrap().to_owned();
    for token in [generated.token, admin_route.token, minted] {
        litellm.key_delete(&token).await.unwrap();
    }
}

/// The keys LiteLLM holds for a user, by token (`/user/info` lists them).
async fn user_keys(user_id: &str) -> Vec<String> {
    let (status, body) = raw(
        reqwest::Method::GET,
        &format!("/user/info?user_id={user_id}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let info: Value = serde_json::from_str(&body).unwrap();
    info["keys"]
        .as_array()
        .expect("keys listed")
        .iter()
        .map(|k| k["token"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn user_lifecycle() {
    let litellm = client_or_skip!();
    let user_id = unique("ct-user");
    let email = format!("{user_id}@example.com");
    let request = UserRequest {
        user_id: user_id.clone(),
        user_email: Some(email.clone()),
        user_alias: Some("Contract user".into()),
        user_role: Some("internal_user".into()),
        models: Some(vec!["m1".into(), "m2".into()]),
        limits: LimitsRequest {
            max_budget: Some(5.5),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            max_parallel_requests: Some(3),
        },
        metadata: Some(map(json!({"owner": "test", "keep": 1}))),
    };

    let created = litellm.user_new(&request).await.expect("user_new");
    assert_eq!(created.user_id, user_id);
    // No key is made with the user (LiteLLM's default would make one).
    assert_eq!(user_keys(&user_id).await, Vec::<String>::new());

    let info = litellm.user_info(&user_id).await.unwrap().expect("user");
    assert_eq!(info.user_email.as_deref(), Some(email.as_str()));
    assert_eq!(info.user_alias.as_deref(), Some("Contract user"));
    assert_eq!(info.user_role.as_deref(), Some("internal_user"));
    assert_eq!(info.models, ["m1", "m2"]);
    assert_eq!(info.max_budget, Some(5.5));
    assert_eq!(info.budget_duration.as_deref(), Some("30d"));
    assert!(info.budget_reset_at.is_some());
    assert_eq!(
        (info.tpm_limit, info.rpm_limit, info.max_parallel_requests),
        (Some(1000), Some(10), Some(3)),
        "a user keeps a parallel-request limit, unlike a team"
    );
    assert_eq!(
        info.metadata,
        Some(map(json!({"owner": "test", "keep": 1})))
    );
    assert_eq!(info.spend, Some(0.0));

    // The same id again: a conflict.
    let duplicate = litellm.user_new(&request).await.unwrap_err();
    assert!(matches!(duplicate, Error::Conflict { .. }), "{duplicate}");
    // Another id with the same email, in other letters: 409 as well, but
    // no conflict on this id.
    let other = unique("ct-user");
    let taken = litellm
        .user_new(&UserRequest {
            user_id: other.clone(),
            user_email: Some(email.to_uppercase()),
            ..UserRequest::default()
        })
        .await
        .unwrap_err();
    assert!(
        matches!(taken, Error::Permanent { status: 409, .. }),
        "{taken}"
    );
    assert_eq!(litellm.user_info(&other).await.unwrap(), None);

    // Update: metadata replaced whole, an empty models list ignored, the
    // role changed.
    let updated = litellm
        .user_update(&UserRequest {
            user_id: user_id.clone(),
            user_role: Some("internal_user_viewer".into()),
            models: Some(vec![]),
            metadata: Some(map(json!({"owner": "test"}))),
            limits: LimitsRequest {
                tpm_limit: Some(7),
                ..LimitsRequest::default()
            },
            ..UserRequest::default()
        })
        .await
        .expect("user_update");
    assert_eq!(updated.user_role.as_deref(), Some("internal_user_viewer"));
    let info = litellm.user_info(&user_id).await.unwrap().unwrap();
    assert_eq!(info.metadata, Some(map(json!({"owner": "test"}))));
    assert_eq!(info.models, ["m1", "m2"], "an empty list changes nothing");
    assert_eq!(info.tpm_limit, Some(7));
    assert_eq!(info.rpm_limit, Some(10), "unsent fields are kept");
    assert_eq!(info.user_email.as_deref(), Some(email.as_str()));

    // Roles beyond the four, and `blocked`, are refused.
    let (status, body) = raw(
        reqwest::Method::POST,
        "/user/update",
        Some(json!({"user_id": user_id, "user_role": "org_admin"})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = raw(
        reqwest::Method::POST,
        "/user/update",
        Some(json!({"user_id": user_id, "blocked": true})),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    assert!(litellm.user_delete(&user_id).await.unwrap());
    assert_eq!(litellm.user_info(&user_id).await.unwrap(), None);
    assert!(!litellm.user_delete(&user_id).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn user_new_by_default_makes_a_key_which_the_client_never_asks_for() {
    let litellm = client_or_skip!();
    let user_id = unique("ct-user-autokey");
    let (status, body) = raw(
        reqwest::Method::POST,
        "/user/new",
        Some(json!({"user_id": user_id})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert!(
        answer["key"].as_str().is_some_and(|k| k.starts_with("sk-")),
        "LiteLLM's default generates a key"
    );
    assert_eq!(user_keys(&user_id).await.len(), 1);
    assert_eq!(
        litellm
            .user_info(&user_id)
            .await
            .unwrap()
            .unwrap()
            .user_role,
        None,
        "no role unless one is sent"
    );
    assert!(litellm.user_delete(&user_id).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn user_update_creates_a_missing_user() {
    let litellm = client_or_skip!();
    let user_id = unique("ct-user-upsert");
    litellm
        .user_update(&UserRequest {
            user_id: user_id.clone(),
            user_alias: Some("made by an update".into()),
            ..UserRequest::default()
        })
        .await
        .expect("an update of a missing user succeeds");
    let info = litellm.user_info(&user_id).await.unwrap();
    assert_eq!(
        info.and_then(|i| i.user_alias).as_deref(),
        Some("made by an update"),
        "LiteLLM upserts: the provider updates only users it observed"
    );
    assert!(litellm.user_delete(&user_id).await.unwrap());
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn user_delete_removes_its_keys_and_keys_take_any_user_id() {
    let litellm = client_or_skip!();
    let user_id = unique("ct-user-keys");
    litellm
        .user_new(&UserRequest {
            user_id: user_id.clone(),
            ..UserRequest::default()
        })
        .await
        .unwrap();
    let generated = litellm
        .key_generate(
            Some(&generate_key()),
            &KeyRequest {
                user_id: Some(user_id.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let info = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(info.user_id.as_deref(), Some(user_id.as_str()));
    assert_eq!(user_keys(&user_id).await, [generated.token.clone()]);

    assert!(litellm.user_delete(&user_id).await.unwrap());
    assert_eq!(litellm.key_info(&generated.token).await.unwrap(), None);

    // A key for a user that does not exist is made all the same, and no
    // user with it: so the provider checks a raw userId itself.
    let ghost = unique("ct-user-ghost");
    let orphan = litellm
        .key_generate(
            Some(&generate_key()),
            &KeyRequest {
                user_id: Some(ghost.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .expect("LiteLLM takes any user id");
    assert_eq!(litellm.user_info(&ghost).await.unwrap(), None);
    assert!(litellm.key_delete(&orphan.token).await.unwrap());
}

/// The server name of [`mcp_server`]: LiteLLM refuses a `-` in one (it
/// separates the server's name from its tools' names).
fn mcp_name(id: &str) -> String {
    id.replace('-', "_")
}

/// An MCP server over streamable HTTP with a bearer token and two tools.
fn mcp_server(id: &str, token: &str) -> McpServerRequest {
    McpServerRequest {
        server_id: id.to_owned(),
        server_name: Some(mcp_name(id)),
        description: Some("contract".into()),
        transport: "http".into(),
        url: Some("http://127.0.0.1:9/mcp".into()),
        auth_type: Some("bearer_token".into()),
        credentials: Some(BTreeMap::from([(
            "auth_value".to_owned(),
            Secret::new(token),
        )])),
        allowed_tools: Some(vec!["search".into(), "read".into()]),
        mcp_access_groups: vec!["ns/group".into()],
        mcp_info: map(json!({"crossplane_owner": {"namespace": "ns"}, "k": 1})),
        command: None,
        args: Vec::new(),
        allow_all_keys: false,
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn mcp_server_lifecycle() {
    let litellm = client_or_skip!();
    let id = unique("ct-mcp");
    let token = format!("tok-{}", unique("mcp-secret"));
    let request = mcp_server(&id, &token);
    assert!(litellm.mcp_server_get(&id).await.unwrap().is_none());
    let dashed = McpServerRequest {
        server_name: Some(id.clone()),
        ..request.clone()
    };
    let err = litellm.mcp_server_new(&dashed).await.unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 400, .. }), "{err}");
    assert!(err.to_string().contains("cannot contain '-'"), "{err}");
    litellm.mcp_server_new(&request).await.expect("created");
    let duplicate = litellm.mcp_server_new(&request).await.unwrap_err();
    assert!(matches!(duplicate, Error::Conflict { .. }), "{duplicate}");
    // A name (or alias) another server has is a plain 400, compared
    // case-insensitively.
    let other = unique("ct-mcp");
    let taken = McpServerRequest {
        server_name: Some(mcp_name(&id).to_uppercase()),
        ..mcp_server(&other, &token)
    };
    let err = litellm.mcp_server_new(&taken).await.unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 400, .. }), "{err}");

    let read = litellm.mcp_server_get(&id).await.unwrap().expect("found");
    assert_eq!(read.server_id, id);
    assert_eq!(read.server_name, Some(mcp_name(&id)));
    assert_eq!(read.alias, Some(mcp_name(&id)), "alias = name");
    assert_eq!(read.transport.as_deref(), Some("http"));
    assert_eq!(read.auth_type.as_deref(), Some("bearer_token"));
    assert_eq!(read.allowed_tools, ["search", "read"]);
    assert_eq!(read.mcp_access_groups, ["ns/group"]);
    // The proxy adds two keys to mcp_info when it reads it back.
    let info = read.mcp_info.clone().unwrap();
    assert_eq!(info["is_public"], json!(false));
    assert_eq!(read.stored_info(), Some(request.mcp_info.clone()));
    // Credentials never come back, and are encrypted at rest.
    let (status, body) = raw(reqwest::Method::GET, &format!("/v1/mcp/server/{id}"), None).await;
    assert_eq!(status, 200);
    assert!(!body.contains(&token), "{body}");
    let row = psql(&format!(
        "select credentials from \"LiteLLM_MCPServerTable\" where server_id = '{id}'"
    ));
    assert!(!row.is_empty() && !row.contains(&token), "{row}");
    // GET falls back to a server whose name is the id asked for; the client
    // does not take it for a server of that id.
    let named = unique("ct-mcp");
    let by_name = mcp_name(&unique("ct-mcp-name"));
    litellm
        .mcp_server_new(&McpServerRequest {
            server_name: Some(by_name.clone()),
            ..mcp_server(&named, &token)
        })
        .await
        .unwrap();
    let (status, body) = raw(
        reqwest::Method::GET,
        &format!("/v1/mcp/server/{by_name}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(&named));
    assert!(litellm.mcp_server_get(&by_name).await.unwrap().is_none());

    // PUT replaces mcp_info, clears what is sent as null, and takes new
    // credentials; a rotated token is not readable either.
    let rotated = format!("tok-{}", unique("mcp-rotated"));
    let update = McpServerRequest {
        description: None,
        allowed_tools: None,
        mcp_access_groups: Vec::new(),
        mcp_info: map(json!({"crossplane_owner": {"namespace": "ns"}})),
        url: Some("https://mcp.example/v2".into()),
        ..mcp_server(&id, &rotated)
    };
    litellm.mcp_server_update(&update).await.unwrap();
    let read = litellm.mcp_server_get(&id).await.unwrap().unwrap();
    assert_eq!(read.description, None);
    assert!(!read.allow_all_keys);
    assert!(read.allowed_tools.is_empty() && read.mcp_access_groups.is_empty());
    assert_eq!(read.url.as_deref(), Some("https://mcp.example/v2"));
    assert_eq!(read.stored_info(), Some(update.mcp_info.clone()));
    let row = psql(&format!(
        "select credentials from \"LiteLLM_MCPServerTable\" where server_id = '{id}'"
    ));
    assert!(!row.contains(&rotated) && !row.contains(&token), "{row}");
    // allow_all_keys opens the server to every key; it is read back, and
    // an update that sends false closes it again (a PUT that left it out
    // would keep it).
    let opened = McpServerRequest {
        allow_all_keys: true,
        ..update.clone()
    };
    litellm.mcp_server_update(&opened).await.unwrap();
    assert!(
        litellm
            .mcp_server_get(&id)
            .await
            .unwrap()
            .unwrap()
            .allow_all_keys
    );
    let (status, body) = raw(
        reqwest::Method::PUT,
        "/v1/mcp/server",
        Some(json!({"server_id": id, "description": "partial"})),
    )
    .await;
    assert!((200..300).contains(&status), "{status}: {body}");
    let partial = litellm.mcp_server_get(&id).await.unwrap().unwrap();
    assert_eq!(partial.description.as_deref(), Some("partial"));
    assert!(
        partial.allow_all_keys,
        "a PUT without allow_all_keys keeps it"
    );
    litellm.mcp_server_update(&update).await.unwrap();
    assert!(
        !litellm
            .mcp_server_get(&id)
            .await
            .unwrap()
            .unwrap()
            .allow_all_keys
    );
    // Without auth: credentials null clears them.
    let bare = McpServerRequest {
        auth_type: None,
        credentials: None,
        ..update.clone()
    };
    litellm.mcp_server_update(&bare).await.unwrap();
    let read = litellm.mcp_server_get(&id).await.unwrap().unwrap();
    assert_eq!(read.auth_type, None);
    let missing = McpServerRequest {
        server_id: unique("ct-mcp-missing"),
        server_name: None,
        ..bare.clone()
    };
    let err = litellm.mcp_server_update(&missing).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");

    assert!(litellm.mcp_server_delete(&id).await.unwrap());
    assert!(!litellm.mcp_server_delete(&id).await.unwrap(), "gone");
    assert!(litellm.mcp_server_get(&id).await.unwrap().is_none());
    assert!(litellm.mcp_server_delete(&named).await.unwrap());
}

/// What 1.108.7 takes that a provider must refuse itself, and what it
/// refuses: it stores any URL scheme, and this proxy has stdio disabled.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn mcp_servers_take_any_url_scheme_and_stdio_is_off() {
    let litellm = client_or_skip!();
    let id = unique("ct-mcp-file");
    let file = McpServerRequest {
        url: Some("file:///etc/passwd".into()),
        auth_type: None,
        credentials: None,
        ..mcp_server(&id, "")
    };
    litellm
        .mcp_server_new(&file)
        .await
        .expect("LiteLLM does not check the scheme");
    assert!(litellm.mcp_server_delete(&id).await.unwrap());
    let stdio = McpServerRequest {
        transport: "stdio".into(),
        url: None,
        command: Some("npx".into()),
        args: vec!["-y".into(), "some-mcp".into()],
        auth_type: None,
        credentials: None,
        ..mcp_server(&unique("ct-mcp-stdio"), "")
    };
    let err = litellm.mcp_server_new(&stdio).await.unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 422, .. }), "{err}");
    assert!(err.to_string().contains("stdio"), "{err}");
    let no_url = McpServerRequest { url: None, ..file };
    let err = litellm.mcp_server_new(&no_url).await.unwrap_err();
    assert!(matches!(err, Error::Permanent { status: 422, .. }), "{err}");
}

/// `object_permission` on teams and keys: stored, read back, merged field
/// by field on update (all three sent, `[]` clears), unknown server ids
/// taken as they are.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn object_permissions_of_teams_and_keys_merge_by_field() {
    let litellm = client_or_skip!();
    let permission = |servers: &[&str], groups: &[&str], stores: &[&str]| ObjectPermission {
        mcp_servers: servers.iter().map(|s| s.to_string()).collect(),
        mcp_access_groups: groups.iter().map(|s| s.to_string()).collect(),
        vector_stores: stores.iter().map(|s| s.to_string()).collect(),
    };
    let team_id = unique("ct-team-op");
    let first = permission(&["no-such-server"], &["ns/g"], &["vs-1"]);
    let team = TeamRequest {
        team_id: team_id.clone(),
        object_permission: Some(first.clone()),
        ..TeamRequest::default()
    };
    litellm.team_new(&team).await.unwrap();
    let read = litellm.team_info(&team_id).await.unwrap().unwrap();
    assert_eq!(read.object_permission, Some(first.clone()));
    // Only one field: the others keep their values.
    let (status, body) = raw(
        reqwest::Method::POST,
        "/team/update",
        Some(json!({"team_id": team_id, "object_permission": {"mcp_servers": []}})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let read = litellm.team_info(&team_id).await.unwrap().unwrap();
    assert_eq!(
        read.object_permission,
        Some(permission(&[], &["ns/g"], &["vs-1"]))
    );
    let cleared = TeamRequest {
        object_permission: Some(ObjectPermission::default()),
        ..team.clone()
    };
    litellm.team_update(&cleared).await.unwrap();
    let read = litellm.team_info(&team_id).await.unwrap().unwrap();
    assert_eq!(read.object_permission, Some(ObjectPermission::default()));
    let plain = unique("ct-team-op");
    litellm
        .team_new(&TeamRequest {
            team_id: plain.clone(),
            ..TeamRequest::default()
        })
        .await
        .unwrap();
    let read = litellm.team_info(&plain).await.unwrap().unwrap();
    assert_eq!(read.object_permission, None, "none until one is set");

    // A key (of no team, by the master key) keeps only servers that exist
    // (by id or name, kept as given): LiteLLM drops those it does not know,
    // which a team does not.
    let server = unique("ct-mcp-op");
    litellm
        .mcp_server_new(&mcp_server(&server, "t"))
        .await
        .unwrap();
    let key = generate_key();
    let settings = KeyRequest {
        object_permission: Some(permission(
            &["no-such-server", &mcp_name(&server)],
            &["ns/g"],
            &["vs-1"],
        )),
        ..KeyRequest::default()
    };
    let generated = litellm.key_generate(Some(&key), &settings).await.unwrap();
    let read = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(
        read.object_permission,
        Some(permission(&[&mcp_name(&server)], &["ns/g"], &["vs-1"]))
    );
    let changed = permission(&[], &[], &["vs-2"]);
    litellm
        .key_update(
            &generated.token,
            &KeyRequest {
                object_permission: Some(changed.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let read = litellm.key_info(&generated.token).await.unwrap().unwrap();
    assert_eq!(read.object_permission, Some(changed));
    // A key of a team may name only servers the team grants: 403.
    let in_team = KeyRequest {
        team_id: Some(plain.clone()),
        object_permission: Some(permission(&[&server], &[], &[])),
        ..KeyRequest::default()
    };
    let err = litellm
        .key_generate(Some(&generate_key()), &in_team)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Forbidden { .. }), "{err}");
    assert!(litellm.mcp_server_delete(&server).await.unwrap());
    litellm.key_delete(&generated.token).await.unwrap();
    for id in [team_id, plain] {
        litellm.team_delete(&id).await.unwrap();
    }
}

/// A team's member defaults, soft budget and model aliases, and a key's
/// soft budget and per-model budgets, as 1.108.7 takes and keeps them: the
/// member defaults go into one budget row of the team's
/// (`team_member_budget_table`, its id under `team_member_budget_id` in the
/// metadata, kept by an update that sends metadata without it);
/// `team_member_key_duration` and a team's `model_max_budget` are refused
/// with 403, a key's `model_max_budget` with 500 naming the licence; a
/// key's soft budget is a budget row LiteLLM makes for the key, replacing a
/// `budget_id` sent beside it, and an update writes it into whatever row
/// the key links to: a shared budget too.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn member_defaults_soft_budgets_and_model_budgets_as_litellm_keeps_them() {
    use litellm_crossplane::litellm::{MemberDefaultsRequest, ModelBudgetRequest, UsageRequest};
    let litellm = client_or_skip!();
    let team = TeamRequest {
        team_id: unique("ct-defaults"),
        soft_budget: Some(1.5),
        model_aliases: Some([("fast".to_owned(), "gpt-4o".to_owned())].into()),
        member_defaults: MemberDefaultsRequest {
            team_member_budget: Some(5.0),
            team_member_rpm_limit: Some(7),
            team_member_tpm_limit: Some(70),
            team_member_budget_duration: Some("30d".into()),
            ..MemberDefaultsRequest::default()
        },
        metadata: Some(map(json!({"a": 1}))),
        ..TeamRequest::default()
    };
    litellm.team_new(&team).await.unwrap();
    let live = litellm.team_info(&team.team_id).await.unwrap().unwrap();
    assert_eq!(live.soft_budget, Some(1.5));
    assert_eq!(live.model_aliases().unwrap()["fast"], "gpt-4o");
    let row = live.team_member_budget_table.clone().unwrap();
    assert_eq!(
        (
            row.max_budget,
            row.rpm_limit,
            row.tpm_limit,
            row.budget_duration.as_deref()
        ),
        (Some(5.0), Some(7), Some(70), Some("30d"))
    );
    let row_id = row.budget_id.unwrap();
    assert_eq!(
        live.metadata.as_ref().unwrap()["team_member_budget_id"],
        row_id.as_str()
    );
    // An update sending metadata without LiteLLM's entry keeps it, and the
    // same row takes the new values; aliases are replaced.
    let update = TeamRequest {
        team_id: team.team_id.clone(),
        model_aliases: Some([("slow".to_owned(), "gpt-4o-mini".to_owned())].into()),
        member_defaults: MemberDefaultsRequest {
            team_member_budget: Some(9.0),
            ..MemberDefaultsRequest::default()
        },
        metadata: Some(map(json!({"a": 2}))),
        ..TeamRequest::default()
    };
    litellm.team_update(&update).await.unwrap();
    let live = litellm.team_info(&team.team_id).await.unwrap().unwrap();
    let row = live.team_member_budget_table.clone().unwrap();
    assert_eq!(row.budget_id.as_deref(), Some(row_id.as_str()));
    assert_eq!((row.max_budget, row.rpm_limit), (Some(9.0), Some(7)));
    let metadata = live.metadata.clone().unwrap();
    assert_eq!(
        (
            metadata["a"].clone(),
            metadata["team_member_budget_id"].clone()
        ),
        (json!(2), json!(row_id))
    );
    let aliases = live.model_aliases().unwrap();
    assert_eq!(
        (aliases.len(), aliases["slow"].clone()),
        (1, "gpt-4o-mini".to_owned())
    );

    // Enterprise: the member key duration and a team's model budgets.
    let budgets = UsageRequest {
        model_max_budget: Some(
            [(
                "gpt-4o".to_owned(),
                ModelBudgetRequest {
                    budget_limit: 1.0,
                    time_period: "1d".into(),
                },
            )]
            .into(),
        ),
        ..UsageRequest::default()
    };
    let reserved = [
        TeamRequest {
            member_defaults: MemberDefaultsRequest {
                team_member_key_duration: Some("1d".into()),
                ..MemberDefaultsRequest::default()
            },
            ..update.clone()
        },
        TeamRequest {
            usage: budgets.clone(),
            ..update.clone()
        },
    ];
    for refused in reserved {
        let err = litellm.team_update(&refused).await.unwrap_err();
        assert!(matches!(err, Error::Forbidden { .. }), "{err}");
    }
    litellm.team_delete(&team.team_id).await.unwrap();

    let err = litellm
        .key_generate(
            None,
            &KeyRequest {
                usage: budgets,
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Retryable { detail, .. }
            if detail.starts_with("HTTP 500") && detail.to_ascii_lowercase().contains("enterprise")),
        "{err}"
    );

    // A key's soft budget: a row of its own, replacing a budget sent beside
    // it; an update writes into the linked row, whichever it is.
    let shared = BudgetRequest {
        budget_id: unique("ct-shared"),
        soft_budget: Some(50.0),
        ..BudgetRequest::default()
    };
    litellm.budget_new(&shared).await.unwrap();
    let own = litellm
        .key_generate(
            None,
            &KeyRequest {
                soft_budget: Some(3.0),
                budget_id: Some(shared.budget_id.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let live = litellm.key_info(&own.token).await.unwrap().unwrap();
    assert_eq!(live.soft_budget(), Some(3.0));
    assert_ne!(
        live.budget_id.as_deref(),
        Some(shared.budget_id.as_str()),
        "replaced"
    );
    let linked = litellm
        .key_generate(
            None,
            &KeyRequest {
                budget_id: Some(shared.budget_id.clone()),
                ..KeyRequest::default()
            },
        )
        .await
        .unwrap();
    let soft = KeyRequest {
        soft_budget: Some(4.0),
        ..KeyRequest::default()
    };
    litellm.key_update(&linked.token, &soft).await.unwrap();
    let shared_now = litellm
        .budget_info(&shared.budget_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        shared_now.soft_budget,
        Some(4.0),
        "the shared budget changed"
    );
    for token in [&own.token, &linked.token] {
        litellm.key_delete(token).await.unwrap();
    }
    litellm.budget_delete(&shared.budget_id).await.unwrap();
}

/// Organizations are Enterprise-only: on the open-source 1.108.7 proxy every
/// `/organization/*` route answers 403 before it reads the body (a body of
/// the wrong types is 403 too; only malformed JSON, parsed first, is 422),
/// so nothing of what is sent is kept or even checked: which fields a
/// licensed proxy ignores cannot be measured here (see
/// `litellm::organizations` for what LiteLLM's own types say). Teams take
/// `organization_id` without a licence, and refuse one no organization has:
/// `/team/new` 400, `/team/update` 404, an empty one unsets it (200);
/// `/key/generate` answers such an id 500 (retryable, so keys are not given
/// an organization here).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn organizations_are_refused_without_a_licence_and_teams_need_an_existing_one() {
    use litellm_crossplane::litellm::OrganizationRequest;
    let litellm = client_or_skip!();
    let id = unique("ct-org");
    let organization = OrganizationRequest {
        organization_id: id.clone(),
        organization_alias: Some("Acme".into()),
        models: Some(vec!["gpt-4o".into()]),
        limits: LimitsRequest {
            max_budget: Some(100.0),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(5000),
            rpm_limit: Some(50),
            max_parallel_requests: Some(4),
        },
        metadata: Some(map(json!({"dept": "ml"}))),
    };
    let licence = |err: &Error| {
        matches!(err, Error::Forbidden { detail, .. }
                 if detail.contains("only available for LiteLLM Enterprise"))
    };
    let err = litellm.organization_new(&organization).await.unwrap_err();
    assert!(licence(&err), "{err}");
    let err = litellm.organization_info(&id).await.unwrap_err();
    assert!(licence(&err), "{err}");
    let err = litellm
        .organization_update(&organization)
        .await
        .unwrap_err();
    assert!(licence(&err), "{err}");
    let err = litellm.organization_delete(&id).await.unwrap_err();
    assert!(licence(&err), "{err}");

    // Refused before the body is validated.
    let (url, master_key) = harness::litellm().unwrap();
    let http = reqwest::Client::new();
    let status = |body: &'static str| {
        let request = http
            .post(format!("{url}/organization/new"))
            .bearer_auth(&master_key)
            .header("content-type", "application/json")
            .body(body);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(r#"{"models": 5, "max_budget": "x"}"#).await, 403);
    assert_eq!(status("{}").await, 403, "no organization_alias");
    assert_eq!(status("not json").await, 422);
    let unauthenticated = http
        .get(format!("{url}/organization/info?organization_id={id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        unauthenticated.status().as_u16(),
        401,
        "authentication first"
    );

    let team = TeamRequest {
        team_id: unique("ct-org-team"),
        organization_id: Some(id.clone()),
        ..TeamRequest::default()
    };
    let err = litellm.team_new(&team).await.unwrap_err();
    assert!(
        matches!(&err, Error::Permanent { status: 400, detail, .. }
                 if detail.contains("Organization not found")),
        "{err}"
    );
    assert!(litellm.team_info(&team.team_id).await.unwrap().is_none());
    let plain = TeamRequest {
        organization_id: None,
        ..team.clone()
    };
    litellm.team_new(&plain).await.unwrap();
    let err = litellm.team_update(&team).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    let unset = TeamRequest {
        organization_id: Some(String::new()),
        ..plain.clone()
    };
    litellm.team_update(&unset).await.unwrap();
    let live = litellm.team_info(&team.team_id).await.unwrap().unwrap();
    assert_eq!(live.organization_id, None);
    litellm.team_delete(&team.team_id).await.unwrap();

    let reply = http
        .post(format!("{url}/key/generate"))
        .bearer_auth(&master_key)
        .json(&json!({"key_alias": unique("ct-org-key"), "organization_id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 500, "a key's unknown organization");
    let body = reply.text().await.unwrap();
    assert!(body.contains("Organization doesn't exist in db"), "{body}");
}
