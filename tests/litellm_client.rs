//! Contract tests of the LiteLLM admin API client against the real proxy of
//! `../shared/litellm/` (LiteLLM 1.108.7 + PostgreSQL).
//!
//! Tests run in parallel against one shared proxy: each uses its own random
//! ids and cleans up after itself, none relies on another's data.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use litellm_crossplane::litellm::{
    generate_key, token_of, BudgetRequest, Client, ClientConfig, Error, KeyRequest,
    ModelMetaRequest, ModelParamsRequest, ModelRequest, RegenerateRequest, Secret, TeamRequest,
};
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
    Client::new(ClientConfig {
        endpoint: endpoint.to_owned(),
        master_key: Secret::new(master_key),
        ca_pem: None,
        timeout: Duration::from_secs(30),
    })
    .expect("client")
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
async fn team_lifecycle() {
    let litellm = client_or_skip!();
    let team_id = unique("ct-team");
    let request = TeamRequest {
        team_id: team_id.clone(),
        team_alias: Some("Contract team".into()),
        models: Some(vec!["m1".into(), "m2".into()]),
        max_budget: Some(10.5),
        budget_duration: Some("30d".into()),
        tpm_limit: Some(1000),
        rpm_limit: Some(10),
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
        max_budget: Some(20.0),
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
async fn key_lifecycle() {
    let litellm = client_or_skip!();
    let (url, _) = harness::litellm().unwrap();
    let alias = unique("ct-key");
    let key = generate_key();
    let request = KeyRequest {
        key_alias: Some(alias.clone()),
        models: Some(vec!["m1".into()]),
        max_budget: Some(1.5),
        budget_duration: Some("1d".into()),
        tpm_limit: Some(5),
        rpm_limit: Some(3),
        max_parallel_requests: Some(2),
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
                max_budget: Some(3.0),
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
async fn budget_lifecycle() {
    let litellm = client_or_skip!();
    let budget_id = unique("ct-budget");
    let request = BudgetRequest {
        budget_id: budget_id.clone(),
        max_budget: Some(12.25),
        soft_budget: Some(10.0),
        budget_duration: Some("7d".into()),
        tpm_limit: Some(1000),
        rpm_limit: Some(100),
        max_parallel_requests: Some(4),
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
        max_budget: Some(15.0),
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
            api_key: Some(provider_key.clone()),
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
