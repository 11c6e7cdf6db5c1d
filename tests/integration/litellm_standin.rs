//! The LiteLLM stand-in of `support/litellm_standin.rs` answers the client
//! like the real proxy: one sequence of client calls runs against both and
//! every step must end the same (same `Ok`/`Err` class, same ids, alias,
//! team, metadata, models, budgets and limits; times and generated values
//! are compared only for being there). Then the provider's own request and
//! diff functions run against the stand-in alone, at the benchmark's scale.
//!
//! The real proxy is `tests/harness/litellm/` (`LITELLM_URL`,
//! `LITELLM_MASTER_KEY`); without it the comparison is skipped (or fails
//! with `LITELLM_CROSSPLANE_REQUIRE_HARNESS=1`) and the stand-in is checked
//! against the answers the real proxy gave when this was written.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use litellm_crossplane::api::key::KeyParameters;
use litellm_crossplane::api::team::TeamParameters;
use litellm_crossplane::api::FreeForm;
use litellm_crossplane::api::Limits;
use litellm_crossplane::litellm::LimitsRequest;
use litellm_crossplane::litellm::{
    self as litellm, generate_key, token_of, Client, Error, KeyGenerated, KeyInfo, KeyRequest,
    List, Secret, TeamInfo, TeamRequest, UsageRequest,
};
use litellm_crossplane::provider::kinds::key;
use litellm_crossplane::provider::kinds::team;
use litellm_crossplane::provider::managed::ownership::Owner;
use litellm_crossplane::provider::managed::resolve::Resolved;
use serde_json::{json, Map, Value};
use support::harness;
use support::litellm_standin::StandIn;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

const STANDIN_MASTER_KEY: &str = "sk-standin-master-0000";

fn client(endpoint: &str, master_key: &str) -> Client {
    harness::admin_client(endpoint, master_key, Duration::from_secs(30))
}

/// 12 random hex digits.
fn suffix() -> String {
    token_of(&generate_key())[..12].to_owned()
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// The class of an error, with its operation: what must agree.
fn class(err: &Error) -> String {
    let (op, class) = match err {
        Error::NotFound { op } => (op, "NotFound".to_owned()),
        Error::Conflict { op, .. } => (op, "Conflict".to_owned()),
        Error::Unauthorized { op, .. } => (op, "Unauthorized".to_owned()),
        Error::Forbidden { op, .. } => (op, "Forbidden".to_owned()),
        Error::Retryable { op, .. } => (op, "Retryable".to_owned()),
        Error::Throttled { op, .. } => (op, "Throttled".to_owned()),
        Error::Permanent { op, status, .. } => (op, format!("Permanent {status}")),
        Error::Decode { op, .. } => (op, "Decode".to_owned()),
        Error::ResponseTooLarge { op, .. } => (op, "ResponseTooLarge".to_owned()),
        Error::Config(_) => (&"", "Config".to_owned()),
    };
    format!("{op}: {class}")
}

fn outcome<T>(result: Result<T, Error>, ok: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(value) => json!({ "ok": ok(value) }),
        Err(err) => json!({ "err": class(&err) }),
    }
}

fn team_fields(team: &TeamInfo) -> Value {
    json!({
        "team_id": team.team_id,
        "team_alias": team.team_alias,
        "models": team.models,
        "max_budget": team.max_budget,
        "soft_budget": team.soft_budget,
        "budget_duration": team.budget_duration,
        "budget_reset_at": team.budget_reset_at.is_some(),
        "tpm_limit": team.tpm_limit,
        "rpm_limit": team.rpm_limit,
        "max_parallel_requests": team.max_parallel_requests,
        "blocked": team.blocked,
        "metadata": team.metadata,
        "spend": team.spend,
        "created_at": team.created_at.is_some(),
        "updated_at": team.updated_at.is_some(),
    })
}

fn key_fields(key: &KeyInfo) -> Value {
    json!({
        "token": key.token,
        "key_name": key.key_name,
        "key_alias": key.key_alias,
        "team_id": key.team_id,
        "budget_id": key.budget_id,
        "models": key.models,
        "max_budget": key.max_budget,
        "budget_duration": key.budget_duration,
        "budget_reset_at": key.budget_reset_at.is_some(),
        "tpm_limit": key.tpm_limit,
        "rpm_limit": key.rpm_limit,
        "max_parallel_requests": key.max_parallel_requests,
        "blocked": key.blocked,
        "metadata": key.metadata,
        "spend": key.spend,
        "expires": key.expires.is_some(),
        "created_at": key.created_at.is_some(),
        "updated_at": key.updated_at.is_some(),
    })
}

/// A key the caller chose: compared as it is.
fn chosen(generated: &KeyGenerated) -> Value {
    json!({
        "key": generated.key.expose(),
        "token": generated.token,
        "key_name": generated.key_name,
        "key_alias": generated.key_alias,
        "team_id": generated.team_id,
        "budget_id": generated.budget_id,
        "expires": generated.expires.is_some(),
        // What the provider takes a created key's state from.
        "info": key_fields(&generated.info),
        "created_at_as_key_info_writes_it": generated.info.created_at.as_deref()
            .map(|t| t.ends_with("+00:00")),
    })
}

/// A key the proxy generated: only its shape is compared.
fn drawn(generated: &KeyGenerated) -> Value {
    let key = generated.key.expose();
    json!({
        "key_shape": [key.starts_with("sk-"), key.len()],
        "token_is_its_sha256": generated.token == token_of(&generated.key),
        "key_name_ends_like_the_key": generated.key_name.as_deref()
            .is_some_and(|name| name.starts_with("sk-...") && key.ends_with(&name[6..])),
        "key_alias": generated.key_alias,
        "team_id": generated.team_id,
        "expires": generated.expires.is_some(),
    })
}

fn tokens(tokens: Vec<String>) -> Value {
    json!(tokens)
}

/// The steps of one run: what each call returned, normalized.
struct Steps(Vec<(String, Value)>);

impl Steps {
    fn record(&mut self, step: &str, value: Value) {
        self.0.push((step.to_owned(), value));
    }

    fn get(&self, step: &str) -> &Value {
        &self
            .0
            .iter()
            .find(|(name, _)| name == step)
            .unwrap_or_else(|| panic!("no step {step}"))
            .1
    }
}

/// The same client calls, in the same order, against the proxy at `url`.
/// `s` makes the ids unique to this run; `key1` is the caller-chosen key.
async fn scenario(url: &str, master_key: &str, s: &str, key1: &Secret) -> Steps {
    let litellm = client(url, master_key);
    let mut steps = Steps(Vec::new());
    let team_id = format!("sti-team-{s}");
    let team2 = format!("sti-team2-{s}");
    let alias1 = format!("sti-key-{s}");
    let alias2 = format!("sti-drawn-{s}");
    let token1 = token_of(key1);

    // ---- teams
    let team_request = TeamRequest {
        team_id: team_id.clone(),
        team_alias: Some("Stand-in team".into()),
        models: Some(vec!["m1".into(), "m2".into()]),
        limits: LimitsRequest {
            max_budget: Some(10.5),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(10),
            ..LimitsRequest::default()
        },
        blocked: Some(false),
        metadata: Some(map(
            json!({"owner": "test", "nested": {"list": [1, "two", null]}, "n": 1.25}),
        )),
        ..TeamRequest::default()
    };
    let r = litellm.team_new(&team_request).await;
    steps.record("team_new", outcome(r, |t| team_fields(&t)));
    let r = litellm.team_new(&team_request).await;
    steps.record("team_new duplicate", outcome(r, |t| team_fields(&t)));
    let r = litellm.team_info(&team_id).await;
    steps.record(
        "team_info",
        outcome(r, |t| json!(t.as_ref().map(team_fields))),
    );
    let r = litellm.team_info(&format!("sti-missing-{s}")).await;
    steps.record(
        "team_info missing",
        outcome(r, |t| json!(t.as_ref().map(team_fields))),
    );
    let update = TeamRequest {
        team_id: team_id.clone(),
        team_alias: Some("Renamed".into()),
        limits: LimitsRequest {
            max_budget: Some(20.0),
            ..LimitsRequest::default()
        },
        metadata: Some(map(json!({"other": true}))),
        ..TeamRequest::default()
    };
    let r = litellm.team_update(&update).await;
    steps.record("team_update", outcome(r, |t| team_fields(&t)));
    let r = litellm.team_info(&team_id).await;
    steps.record(
        "team_info after update",
        outcome(r, |t| json!(t.as_ref().map(team_fields))),
    );
    let r = litellm.team_page(Some(&team_id), 1, 10).await;
    steps.record(
        "team_page",
        outcome(r, |page| {
            let entries: Vec<Value> = page
                .entries
                .iter()
                .map(|entry| json!([team_fields(&entry.info), entry.complete()]))
                .collect();
            json!({"total": page.total, "entries": entries})
        }),
    );
    let missing_update = TeamRequest {
        team_id: format!("sti-missing-{s}"),
        limits: LimitsRequest {
            max_budget: Some(1.0),
            ..LimitsRequest::default()
        },
        ..TeamRequest::default()
    };
    let r = litellm.team_update(&missing_update).await;
    steps.record("team_update missing", outcome(r, |t| team_fields(&t)));
    let r = litellm
        .team_new(&TeamRequest {
            team_id: team2.clone(),
            ..TeamRequest::default()
        })
        .await;
    steps.record("team_new bare", outcome(r, |t| team_fields(&t)));

    // ---- a caller-chosen key in a team
    let key_request = KeyRequest {
        key_alias: Some(alias1.clone()),
        team_id: Some(team_id.clone()),
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
    let r = litellm.key_generate(Some(key1), &key_request).await;
    steps.record("key_generate", outcome(r, |k| chosen(&k)));
    let r = litellm
        .key_generate(Some(&generate_key()), &key_request)
        .await;
    steps.record("key_generate alias taken", outcome(r, |k| chosen(&k)));
    let again = KeyRequest {
        metadata: Some(map(json!({"version": 2}))),
        ..KeyRequest::default()
    };
    let r = litellm.key_generate(Some(key1), &again).await;
    steps.record("key_generate existing key", outcome(r, |k| chosen(&k)));
    let r = litellm.key_info(&token1).await;
    steps.record(
        "key_info",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.key_info(key1.expose()).await;
    steps.record(
        "key_info by key",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.key_info(&token_of(&generate_key())).await;
    steps.record(
        "key_info missing",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.key_list_by_alias(&alias1).await;
    steps.record("key_list_by_alias", outcome(r, tokens));
    let r = litellm.key_list_by_alias(&alias1[..alias1.len() - 1]).await;
    steps.record("key_list_by_alias prefix", outcome(r, tokens));
    let r = litellm
        .key_update(
            &token1,
            &KeyRequest {
                limits: LimitsRequest {
                    max_budget: Some(3.0),
                    ..LimitsRequest::default()
                },
                metadata: Some(map(json!({"other": true}))),
                ..KeyRequest::default()
            },
        )
        .await;
    steps.record("key_update", outcome(r, |k| key_fields(&k)));
    let r = litellm.key_info(&token1).await;
    steps.record(
        "key_info after update",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm
        .key_update(
            &token1,
            &KeyRequest {
                team_id: Some(format!("sti-missing-{s}")),
                ..KeyRequest::default()
            },
        )
        .await;
    steps.record("key_update missing team", outcome(r, |k| key_fields(&k)));
    let r = litellm
        .key_update(
            &token1,
            &KeyRequest {
                team_id: Some(team2.clone()),
                key_alias: Some(alias1.clone()),
                ..KeyRequest::default()
            },
        )
        .await;
    steps.record(
        "key_update team and own alias",
        outcome(r, |k| key_fields(&k)),
    );

    // ---- a key the proxy draws
    let drawn_request = KeyRequest {
        key_alias: Some(alias2.clone()),
        duration: Some("30d".into()),
        ..KeyRequest::default()
    };
    let r = litellm.key_generate(None, &drawn_request).await;
    let token2 = r.as_ref().ok().map(|k| k.token.clone());
    steps.record("key_generate drawn", outcome(r, |k| drawn(&k)));
    let token2 = token2.unwrap_or_default();
    let r = litellm.key_list_by_alias(&alias2).await;
    steps.record(
        "key_list_by_alias drawn",
        outcome(r, |t| json!(t == [token2.clone()])),
    );
    let r = litellm.key_info(&token2).await;
    steps.record(
        "key_info drawn",
        outcome(r, |k| {
            json!(k.map(|k| {
                let mut fields = key_fields(&k);
                fields["token"] = json!(k.token == token2);
                fields["key_name"] = json!(k.key_name.is_some());
                fields
            }))
        }),
    );
    let r = litellm
        .key_update(
            &token2,
            &KeyRequest {
                key_alias: Some(alias1.clone()),
                ..KeyRequest::default()
            },
        )
        .await;
    steps.record("key_update alias taken", outcome(r, |k| key_fields(&k)));

    // ---- invalid keys
    let r = litellm
        .key_generate(Some(&Secret::new("sk-tooshort1")), &KeyRequest::default())
        .await;
    steps.record("key_generate short key", outcome(r, |k| chosen(&k)));
    let r = litellm
        .key_generate(
            Some(&Secret::new(format!("xx-not-a-key-{s}"))),
            &KeyRequest::default(),
        )
        .await;
    steps.record("key_generate no sk- prefix", outcome(r, |k| chosen(&k)));

    // ---- the key as the caller
    let as_key = client(url, key1.expose());
    let r = as_key.key_info(&token1).await;
    steps.record(
        "as key: key_info own",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = as_key.team_info(&team2).await;
    steps.record(
        "as key: team_info own team",
        outcome(r, |t| json!(t.as_ref().map(|t| t.team_id.clone()))),
    );
    let r = as_key.team_info(&team_id).await;
    steps.record(
        "as key: team_info other team",
        outcome(r, |t| json!(t.as_ref().map(|t| t.team_id.clone()))),
    );
    let r = as_key
        .team_new(&TeamRequest {
            team_id: format!("sti-by-key-{s}"),
            ..TeamRequest::default()
        })
        .await;
    steps.record("as key: team_new", outcome(r, |t| team_fields(&t)));
    let r = as_key.key_list_by_alias(&alias1).await;
    steps.record("as key: key_list_by_alias", outcome(r, tokens));

    // ---- settings LiteLLM keeps in metadata; Enterprise-only ones refused
    let limited = format!("sti-limited-{s}");
    let usage = UsageRequest {
        model_rpm_limit: Some([("gpt-4o".to_owned(), 5)].into()),
        ..UsageRequest::default()
    };
    let r = litellm
        .team_new(&TeamRequest {
            team_id: limited.clone(),
            usage: usage.clone(),
            metadata: Some(Map::from_iter([("a".to_owned(), json!(1))])),
            ..TeamRequest::default()
        })
        .await;
    steps.record("team with per-model limits", outcome(r, |_| json!(null)));
    let r = litellm.team_info(&limited).await;
    steps.record(
        "its metadata",
        outcome(r, |t| json!(t.and_then(|t| t.metadata))),
    );
    let r = litellm.team_delete(&limited).await;
    steps.record("delete it", outcome(r, |b| json!(b)));
    for (what, usage) in [
        (
            "tags",
            UsageRequest {
                tags: Some(vec!["ml".into()]),
                ..UsageRequest::default()
            },
        ),
        (
            "guardrails",
            UsageRequest {
                guardrails: Some(vec!["pii".into()]),
                ..UsageRequest::default()
            },
        ),
    ] {
        let r = litellm
            .team_new(&TeamRequest {
                team_id: format!("sti-{what}-{s}"),
                usage: usage.clone(),
                ..TeamRequest::default()
            })
            .await;
        steps.record(&format!("team with {what}"), outcome(r, |_| json!(null)));
        let r = litellm
            .key_generate(
                None,
                &KeyRequest {
                    usage,
                    ..KeyRequest::default()
                },
            )
            .await;
        steps.record(&format!("key with {what}"), outcome(r, |_| json!(null)));
    }

    // ---- deletes
    let r = litellm.key_delete(&token2).await;
    steps.record("key_delete", outcome(r, |b| json!(b)));
    let r = litellm.key_delete(&token2).await;
    steps.record("key_delete again", outcome(r, |b| json!(b)));
    let r = litellm.key_info(&token2).await;
    steps.record(
        "key_info deleted",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.key_list_by_alias(&alias2).await;
    steps.record("key_list_by_alias deleted", outcome(r, tokens));
    let r = litellm.key_update(&token2, &KeyRequest::default()).await;
    steps.record("key_update deleted", outcome(r, |k| key_fields(&k)));
    let r = litellm.team_delete(&team2).await;
    steps.record("team_delete with a key", outcome(r, |b| json!(b)));
    let r = litellm.key_info(&token1).await;
    steps.record(
        "key_info of the deleted team",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.key_delete(&token1).await;
    steps.record("key_delete of the deleted team", outcome(r, |b| json!(b)));
    let r = as_key.key_info(&token1).await;
    steps.record(
        "as deleted key: key_info",
        outcome(r, |k| json!(k.as_ref().map(key_fields))),
    );
    let r = litellm.team_delete(&team_id).await;
    steps.record("team_delete", outcome(r, |b| json!(b)));
    let r = litellm.team_delete(&team_id).await;
    steps.record("team_delete again", outcome(r, |b| json!(b)));
    let r = litellm.team_info(&team_id).await;
    steps.record(
        "team_info deleted",
        outcome(r, |t| json!(t.as_ref().map(team_fields))),
    );

    // ---- credentials and health
    let wrong = client(url, "sk-wrong-master-key-0000");
    let r = wrong.team_info(&team_id).await;
    steps.record(
        "wrong master key: team_info",
        outcome(r, |t| json!(t.is_some())),
    );
    let r = wrong.key_generate(None, &KeyRequest::default()).await;
    steps.record("wrong master key: key_generate", outcome(r, |k| drawn(&k)));
    let r = wrong.liveliness().await;
    steps.record("wrong master key: liveliness", outcome(r, |b| json!(b)));
    // ---- organizations: Enterprise-only, 403 on the open-source proxy,
    // whatever the body; a team cannot join one that does not exist.
    let organization = litellm_crossplane::litellm::OrganizationRequest {
        organization_id: format!("sti-org-{s}"),
        organization_alias: Some("Stand-in org".into()),
        models: Some(vec!["m1".into()]),
        ..Default::default()
    };
    let r = litellm.organization_new(&organization).await;
    steps.record("organization_new", outcome(r, |o| json!(o.organization_id)));
    let r = litellm
        .organization_info(&organization.organization_id)
        .await;
    steps.record("organization_info", outcome(r, |o| json!(o.is_some())));
    let r = litellm.organization_update(&organization).await;
    steps.record(
        "organization_update",
        outcome(r, |o| json!(o.organization_id)),
    );
    let r = litellm
        .organization_delete(&organization.organization_id)
        .await;
    steps.record("organization_delete", outcome(r, |d| json!(d)));
    let org_id = &organization.organization_id;
    let r = litellm
        .organization_member_add(org_id, "sti-nobody", "internal_user")
        .await;
    steps.record("organization_member_add", outcome(r, |()| json!(null)));
    let r = litellm
        .organization_member_update(org_id, "sti-nobody", "org_admin")
        .await;
    steps.record("organization_member_update", outcome(r, |()| json!(null)));
    let r = litellm
        .organization_member_delete(org_id, "sti-nobody")
        .await;
    steps.record("organization_member_delete", outcome(r, |()| json!(null)));
    // ---- users, as organization members need them.
    let user = litellm_crossplane::litellm::UserRequest {
        user_id: format!("sti-user-{s}"),
        user_alias: Some("Stand-in user".into()),
        user_role: Some("internal_user_viewer".into()),
        models: Some(vec!["m1".into()]),
        limits: LimitsRequest {
            max_budget: Some(2.5),
            ..LimitsRequest::default()
        },
        metadata: Some(map(json!({"owner": "test"}))),
        ..Default::default()
    };
    let user_fields = |u: &litellm_crossplane::litellm::UserInfo| {
        json!([
            u.user_id,
            u.user_alias,
            u.user_role,
            u.user_email,
            u.models,
            u.max_budget,
            u.metadata,
            u.spend,
            u.created_at.is_some()
        ])
    };
    let r = litellm.user_new(&user).await;
    steps.record("user_new", outcome(r, |u| user_fields(&u)));
    let r = litellm.user_new(&user).await;
    steps.record("user_new duplicate", outcome(r, |u| user_fields(&u)));
    let r = litellm.user_info(&user.user_id).await;
    steps.record(
        "user_info",
        outcome(r, |u| json!(u.as_ref().map(user_fields))),
    );
    let bare = litellm_crossplane::litellm::UserRequest {
        user_id: format!("sti-user-bare-{s}"),
        ..Default::default()
    };
    let r = litellm.user_new(&bare).await;
    steps.record("user_new bare", outcome(r, |u| user_fields(&u)));
    for id in [&user.user_id, &bare.user_id] {
        let r = litellm.user_delete(id).await;
        steps.record(&format!("user_delete {id}"), outcome(r, |d| json!(d)));
    }
    let r = litellm.user_info(&user.user_id).await;
    steps.record("user_info deleted", outcome(r, |u| json!(u.is_some())));
    let r = litellm.user_delete(&user.user_id).await;
    steps.record("user_delete again", outcome(r, |d| json!(d)));
    let r = litellm
        .team_new(&TeamRequest {
            team_id: format!("sti-org-team-{s}"),
            organization_id: Some(organization.organization_id.clone()),
            ..TeamRequest::default()
        })
        .await;
    steps.record(
        "team_new in a missing organization",
        outcome(r, |t| team_fields(&t)),
    );
    let r = litellm.readiness().await;
    steps.record(
        "readiness",
        outcome(r, |r| json!([r.status, r.db, r.litellm_version])),
    );
    steps
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_stand_in_answers_the_client_like_the_real_proxy() {
    let Some((url, master_key)) = harness::litellm() else {
        return;
    };
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let s = suffix();
    let key1 = generate_key();
    let real = scenario(&url, &master_key, &s, &key1).await;
    let fake = scenario(&standin.url, STANDIN_MASTER_KEY, &s, &key1).await;

    let names = |steps: &Steps| steps.0.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&real), names(&fake));
    let differing: Vec<String> = real
        .0
        .iter()
        .zip(&fake.0)
        .filter(|((_, r), (_, f))| r != f)
        .map(|((step, r), (_, f))| format!("{step}:\n  real:     {r}\n  stand-in: {f}"))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} steps differ:\n{}",
        differing.len(),
        real.0.len(),
        differing.join("\n")
    );
    // Not vacuous: the run saw successes and each kind of refusal.
    let text = serde_json::to_string(&real.0).unwrap();
    for expected in [
        "POST /team/new: Conflict",
        "POST /key/generate: Conflict",
        "POST /team/update: NotFound",
        "POST /key/update: NotFound",
        "POST /key/update: Permanent 400",
        "POST /key/generate: Permanent 400",
        "GET /team/info: Unauthorized",
        "GET /team/info: Forbidden",
        "GET /key/list: Forbidden",
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    check_pinned(&fake, &s, &key1);
    // Everything the run created is gone from the stand-in too.
    assert_eq!((standin.len_teams(), standin.len_keys()), (0, 0));
}

/// The answers of the real proxy (1.108.7) the provider depends on most,
/// checked without the harness too.
fn check_pinned(steps: &Steps, s: &str, key1: &Secret) {
    let err = |step: &str| steps.get(step)["err"].as_str().unwrap_or("").to_owned();
    let ok = |step: &str| steps.get(step)["ok"].clone();
    assert_eq!(err("team_new duplicate"), "POST /team/new: Conflict");
    for (step, op) in [
        ("organization_new", "POST /organization/new"),
        ("organization_info", "GET /organization/info"),
        ("organization_update", "PATCH /organization/update"),
        ("organization_delete", "DELETE /organization/delete"),
        ("organization_member_add", "POST /organization/member_add"),
        (
            "organization_member_update",
            "PATCH /organization/member_update",
        ),
        (
            "organization_member_delete",
            "DELETE /organization/member_delete",
        ),
    ] {
        assert_eq!(err(step), format!("{op}: Forbidden"), "{step}");
    }
    assert_eq!(
        err("team_new in a missing organization"),
        "POST /team/new: Permanent 400"
    );
    assert_eq!(err("user_new duplicate"), "POST /user/new: Conflict");
    assert_eq!(ok("user_info")[2], json!("internal_user_viewer"));
    assert_eq!(ok("user_new bare")[2], Value::Null, "no role unless sent");
    assert_eq!(ok("user_info deleted"), json!(false));
    assert_eq!(ok("user_delete again"), json!(false));
    assert_eq!(ok("team_info missing"), Value::Null);
    assert_eq!(err("team_update missing"), "POST /team/update: NotFound");
    assert_eq!(
        err("key_generate alias taken"),
        "POST /key/generate: Conflict"
    );
    assert_eq!(ok("key_info missing"), Value::Null);
    assert_eq!(ok("key_info deleted"), Value::Null);
    assert_eq!(ok("key_delete again"), json!(false));
    assert_eq!(ok("team_delete again"), json!(false));
    assert_eq!(
        err("key_update missing team"),
        "POST /key/update: NotFound",
        "LiteLLM checks the team on /key/update (not on /key/generate)"
    );
    assert_eq!(
        err("key_update alias taken"),
        "POST /key/update: Permanent 400"
    );
    assert_eq!(
        err("wrong master key: team_info"),
        "GET /team/info: Unauthorized"
    );
    assert_eq!(ok("wrong master key: liveliness"), json!(true));

    let created = ok("team_new");
    assert_eq!(created["models"], json!(["m1", "m2"]));
    assert_eq!(created["max_budget"], json!(10.5));
    assert_eq!(created["spend"], json!(0.0));
    assert_eq!(created["budget_reset_at"], json!(true));
    let updated = ok("team_info after update");
    assert_eq!(updated["metadata"], json!({"other": true}), "replaced");
    assert_eq!(updated["tpm_limit"], json!(1000), "unsent fields stay");
    let bare = ok("team_new bare");
    assert_eq!(
        (&bare["metadata"], &bare["models"], &bare["blocked"]),
        (&json!({}), &json!([]), &json!(false))
    );

    let generated = ok("key_generate");
    assert_eq!(generated["token"], json!(token_of(key1)));
    assert_eq!(generated["key"], json!(key1.expose()));
    // The existing key is not changed by generating it again.
    assert_eq!(
        ok("key_info")["metadata"],
        json!({"owner": "test", "keep": 1})
    );
    assert_eq!(ok("key_info"), ok("key_info by key"));
    assert_eq!(ok("key_info")["blocked"], Value::Null);
    assert_eq!(ok("key_list_by_alias"), json!([token_of(key1)]));
    assert_eq!(ok("key_list_by_alias prefix"), json!([]));
    assert_eq!(ok("key_info after update")["max_budget"], json!(3.0));
    assert_eq!(ok("key_info after update")["tpm_limit"], json!(5));
    assert_eq!(ok("key_info drawn")["expires"], json!(true));
    assert_eq!(
        ok("as key: team_info own team"),
        json!(format!("sti-team2-{s}"))
    );
    assert_eq!(ok("key_info of the deleted team"), Value::Null);
    assert_eq!(ok("key_delete of the deleted team"), json!(false));
    assert_eq!(
        err("as deleted key: key_info"),
        "GET /key/info: Unauthorized"
    );
    assert_eq!(
        ok("readiness"),
        json!(["healthy", "connected", Value::Null])
    );
}

#[tokio::test]
async fn the_stand_in_alone_gives_the_real_proxys_answers() {
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let key1 = generate_key();
    let s = suffix();
    let steps = scenario(&standin.url, STANDIN_MASTER_KEY, &s, &key1).await;
    check_pinned(&steps, &s, &key1);
    let requests = standin.requests();
    let operations = support::litellm_standin::OPERATIONS;
    for op in operations.iter().filter(|op| **op != "other") {
        assert!(
            requests.get(*op).copied().unwrap_or(0) > 0,
            "{op}: {requests:?}"
        );
    }
    assert_eq!(requests.get("other"), None);
    assert_eq!(standin.requests_total(), requests.values().sum::<u64>());
}

fn owner(name: &str) -> Owner {
    Owner {
        cluster: "standin-cluster".into(),
        namespace: "bench".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

fn team_params(i: usize) -> TeamParameters {
    TeamParameters {
        team_alias: Some(format!("Team {i}")),
        models: Some(vec!["gpt-4o".into(), "claude".into()]),
        limits: Limits {
            max_budget: Some("25.50".into()),
            budget_duration: Some("30d".into()),
            tpm_limit: Some(1000),
            rpm_limit: Some(100),
            ..Limits::default()
        },
        blocked: Some(false),
        metadata: Some(FreeForm::from([("env".to_owned(), json!("bench"))])),
        ..TeamParameters::default()
    }
}

fn key_params(team_id: &str, i: usize) -> KeyParameters {
    KeyParameters {
        key_alias: Some(format!("bench.key-{i}")),
        team_id: Some(team_id.to_owned()),
        models: Some(vec!["gpt-4o".into()]),
        limits: Limits {
            max_budget: Some("2.00".into()),
            budget_duration: Some("1d".into()),
            tpm_limit: Some(50),
            rpm_limit: Some(5),
            max_parallel_requests: Some(2),
            ..Limits::default()
        },
        duration: Some("30d".into()),
        metadata: Some(FreeForm::from([("tier".to_owned(), json!(i % 3))])),
        ..KeyParameters::default()
    }
}

/// What the team controller's observe sees: the live team and its drift.
async fn observe_team(
    litellm: &Client,
    id: &str,
    params: &TeamParameters,
    owner: &Owner,
) -> Vec<&'static str> {
    let live = litellm.team_info(id).await.unwrap().expect("team exists");
    assert_eq!(
        Owner::from_metadata(live.metadata.as_ref()).as_ref(),
        Some(owner)
    );
    team::diff(params, &Resolved::default(), &live, owner)
        .fields()
        .to_vec()
}

async fn observe_key(
    litellm: &Client,
    token: &str,
    params: &KeyParameters,
    owner: &Owner,
) -> (Vec<&'static str>, KeyInfo) {
    let live = litellm.key_info(token).await.unwrap().expect("key exists");
    assert_eq!(
        Owner::from_metadata(live.metadata.as_ref()).as_ref(),
        Some(owner)
    );
    let drift = key::diff(params, &Resolved::default(), &live, owner)
        .fields()
        .to_vec();
    (drift, live)
}

/// The stand-in lists keys by pages sorted by token, as the provider's
/// polls by pages read them (`litellm::Client::listed_page`), each entry
/// fingerprinting as the key's own read does, as on the real proxy
/// (`litellm_pages`): the benchmark's polls by pages are answered as the
/// real proxy's would be.
#[tokio::test]
async fn the_stand_in_lists_keys_in_pages_that_fingerprint_as_their_reads() {
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let litellm = client(&standin.url, STANDIN_MASTER_KEY);
    let mut tokens = Vec::new();
    for i in 0..150 {
        let secret = generate_key();
        let settings = KeyRequest {
            key_alias: Some(format!("paged-{i}")),
            metadata: (i % 2 == 0).then(|| map(json!({"n": i}))),
            duration: (i % 3 == 0).then(|| "30d".to_owned()),
            ..KeyRequest::default()
        };
        litellm
            .key_generate(Some(&secret), &settings)
            .await
            .unwrap();
        tokens.push(token_of(&secret));
    }
    tokens.sort();
    let read = |token: String| {
        let litellm = &litellm;
        async move { litellm.key_info_probed(&token).await.unwrap().1 }
    };
    listed_as_read(&litellm, List::Keys, &tokens, read).await;
}

/// Teams as keys: `/v2/team/list` by pages sorted by id, each entry
/// fingerprinting as the team's own read (without the members' budgets).
#[tokio::test]
async fn the_stand_in_lists_teams_in_pages_that_fingerprint_as_their_reads() {
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let litellm = client(&standin.url, STANDIN_MASTER_KEY);
    let mut ids = Vec::new();
    for i in 0..150 {
        let team = TeamRequest {
            team_id: format!("paged-{i}"),
            team_alias: Some(format!("Paged {i}")),
            metadata: (i % 2 == 0).then(|| map(json!({"n": i}))),
            ..TeamRequest::default()
        };
        litellm.team_new(&team).await.unwrap();
        ids.push(team.team_id);
    }
    ids.sort();
    let read = |id: String| {
        let litellm = &litellm;
        async move { litellm.team_info_probed(&id, false).await.unwrap().1 }
    };
    listed_as_read(&litellm, List::Teams, &ids, read).await;
}

/// Reads the two pages of `list` (150 objects): every one of `ids` once,
/// in order, each entry's fingerprint that of its object's `read`.
async fn listed_as_read<F, Fut>(litellm: &litellm::Client, list: List, ids: &[String], read: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = litellm::Probe>,
{
    let mut listed = Vec::new();
    for page in 1..=2 {
        let answer = litellm.listed_page(list, page, 100).await.unwrap();
        assert_eq!(answer.page.total, 150);
        listed.extend(answer.page.entries);
    }
    assert_eq!(
        listed
            .iter()
            .map(|entry| entry.id.as_str())
            .collect::<Vec<_>>(),
        ids,
        "every object once, by id"
    );
    for entry in &listed {
        let probe = read(entry.id.clone()).await;
        assert!(entry.fingerprint.is_some());
        assert_eq!(
            entry.fingerprint,
            probe.listed.map(|l| l.fingerprint),
            "{}",
            entry.id
        );
    }
}

/// The provider's requests, as its controllers build them, create objects
/// the provider then sees as up to date: a steady-state poll writes nothing.
/// A changed parameter is drift until one update, and not after it.
#[tokio::test]
async fn a_provider_shaped_flow_converges_and_holds_still_on_the_stand_in() {
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let litellm = client(&standin.url, STANDIN_MASTER_KEY);
    let (team_owner, key_owner) = (owner("team-0"), owner("key-0"));
    let team_id = "bench.team-0";
    let mut tparams = team_params(0);
    let kparams = key_params(team_id, 0);

    litellm
        .team_new(&team::request(
            team_id,
            &tparams,
            &Resolved::default(),
            &team_owner,
        ))
        .await
        .unwrap();
    let secret = generate_key();
    let token = token_of(&secret);
    let generated = litellm
        .key_generate(
            Some(&secret),
            &key::request(&kparams, &Resolved::default(), &key_owner),
        )
        .await
        .unwrap();
    assert_eq!(generated.token, token);
    assert_eq!(
        litellm.key_list_by_alias("bench.key-0").await.unwrap(),
        std::slice::from_ref(&token)
    );

    let writes = standin.writes();
    let mut first_reset = None;
    for _ in 0..3 {
        assert_eq!(
            observe_team(&litellm, team_id, &tparams, &team_owner).await,
            Vec::<&str>::new()
        );
        let (drift, live) = observe_key(&litellm, &token, &kparams, &key_owner).await;
        assert_eq!(drift, Vec::<&str>::new());
        assert!(live.expires.is_some() && live.budget_reset_at.is_some());
        let reset = live.budget_reset_at.clone();
        assert_eq!(*first_reset.get_or_insert(reset.clone()), reset);
    }
    assert_eq!(standin.writes(), writes, "steady-state polls only read");

    // A changed budget is drift, fixed by one update that leaves the budget
    // period alone (budget_duration is not sent).
    tparams.limits.max_budget = Some("30".into());
    let drift = observe_team(&litellm, team_id, &tparams, &team_owner).await;
    assert_eq!(drift, ["maxBudget"]);
    let mut settings = team::request(team_id, &tparams, &Resolved::default(), &team_owner);
    settings.limits.budget_duration = None;
    litellm.team_update(&settings).await.unwrap();
    assert!(observe_team(&litellm, team_id, &tparams, &team_owner)
        .await
        .is_empty());
    let mut kparams = kparams;
    kparams.limits.rpm_limit = Some(6);
    let (drift, _) = observe_key(&litellm, &token, &kparams, &key_owner).await;
    assert_eq!(drift, ["rpmLimit"]);
    let settings = key::update_request(
        &kparams,
        &Resolved::default(),
        &key_owner,
        &litellm_crossplane::provider::managed::diff::Diff::new(),
    );
    assert_eq!(
        (
            settings.duration.as_ref(),
            settings.limits.budget_duration.as_ref()
        ),
        (None, None)
    );
    litellm.key_update(&token, &settings).await.unwrap();
    let (drift, live) = observe_key(&litellm, &token, &kparams, &key_owner).await;
    assert!(drift.is_empty(), "{drift:?}");
    assert_eq!(live.budget_reset_at, first_reset.flatten());

    // Deleting the team takes its key along, as in LiteLLM.
    assert_eq!((standin.len_teams(), standin.len_keys()), (1, 1));
    assert!(litellm.team_delete(team_id).await.unwrap());
    assert_eq!(litellm.key_info(&token).await.unwrap(), None);
    assert_eq!((standin.len_teams(), standin.len_keys()), (0, 0));
}

/// The benchmark's scale: 10,000 teams and 10,000 keys (2,000 of each in
/// a debug build, where client and server together manage about 1,000
/// requests/s on two cores) created, each observed once as up to date, then
/// deleted, with many requests in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_teams_and_keys_quickly() {
    const N: usize = if cfg!(debug_assertions) {
        2_000
    } else {
        10_000
    };
    const IN_FLIGHT: usize = 64;
    let standin = StandIn::start(STANDIN_MASTER_KEY).await;
    let litellm = client(&standin.url, STANDIN_MASTER_KEY);
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    let started = Instant::now();

    let mut tasks = JoinSet::new();
    for i in 0..N {
        let (litellm, permits) = (litellm.clone(), Arc::clone(&permits));
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            let id = format!("bench.team-{i}");
            let (tparams, kparams) = (team_params(i), key_params(&id, i));
            let (towner, kowner) = (owner(&format!("team-{i}")), owner(&format!("key-{i}")));
            litellm
                .team_new(&team::request(&id, &tparams, &Resolved::default(), &towner))
                .await
                .unwrap();
            let secret = generate_key();
            litellm
                .key_generate(
                    Some(&secret),
                    &key::request(&kparams, &Resolved::default(), &kowner),
                )
                .await
                .unwrap();
            (id, token_of(&secret))
        });
    }
    let mut created = Vec::with_capacity(N);
    while let Some(pair) = tasks.join_next().await {
        created.push(pair.unwrap());
    }
    let create_time = started.elapsed();
    assert_eq!((standin.len_teams(), standin.len_keys()), (N, N));
    let writes = standin.writes();

    let polled = Instant::now();
    for (i, (id, token)) in created.iter().cloned().enumerate() {
        let (litellm, permits) = (litellm.clone(), Arc::clone(&permits));
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            let index: usize = id["bench.team-".len()..].parse().unwrap();
            let tdrift = observe_team(
                &litellm,
                &id,
                &team_params(index),
                &owner(&format!("team-{index}")),
            )
            .await;
            let (kdrift, _) = observe_key(
                &litellm,
                &token,
                &key_params(&id, index),
                &owner(&format!("key-{index}")),
            )
            .await;
            assert!(
                tdrift.is_empty() && kdrift.is_empty(),
                "{i}: {tdrift:?} {kdrift:?}"
            );
            (id, token)
        });
    }
    while let Some(pair) = tasks.join_next().await {
        pair.unwrap();
    }
    let poll_time = polled.elapsed();
    assert_eq!(standin.writes(), writes, "the poll wrote nothing");

    for (id, _) in created {
        let (litellm, permits) = (litellm.clone(), Arc::clone(&permits));
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.unwrap();
            assert!(litellm.team_delete(&id).await.unwrap());
            (id, String::new())
        });
    }
    while let Some(pair) = tasks.join_next().await {
        pair.unwrap();
    }
    assert_eq!((standin.len_teams(), standin.len_keys()), (0, 0));
    let requests = standin.requests();
    assert_eq!(requests["POST /team/new"], N as u64);
    assert_eq!(requests["POST /key/generate"], N as u64);
    assert_eq!(requests["GET /team/info"], N as u64);
    assert_eq!(requests["GET /key/info"], N as u64);
    assert_eq!(requests["POST /team/delete"], N as u64);
    let total = started.elapsed();
    eprintln!(
        "stand-in: {} requests in {total:.1?} ({:.0}/s); creates {create_time:.1?}, poll {poll_time:.1?}",
        standin.requests_total(),
        standin.requests_total() as f64 / total.as_secs_f64()
    );
    // Far above the real proxy's ~65 requests/s, even in a debug build on
    // a shared machine.
    assert!(
        standin.requests_total() as f64 / total.as_secs_f64() > 500.0,
        "too slow for the benchmark"
    );
}

/// A licensed proxy (the stand-in's alone: the real one here has no
/// licence) keeps tags and guardrails of teams and keys, and a team's
/// member key duration, in their metadata, beside the user's, and their
/// per-model budgets as sent (the shapes of LiteLLM's `GenericBudgetInfo`);
/// the provider's requests then converge (no drift), and a changed tag is
/// drift until one update.
#[tokio::test]
async fn a_licensed_proxy_keeps_tags_and_guardrails_and_the_provider_converges() {
    let standin = StandIn::start_licensed(STANDIN_MASTER_KEY).await;
    let litellm = client(&standin.url, STANDIN_MASTER_KEY);
    let usage: litellm_crossplane::api::Usage = serde_json::from_value(json!({
        "tags": ["ml", "eu"],
        "guardrails": ["pii"],
        "modelTpmLimit": {"gpt-4o": 1000},
        "modelMaxBudget": {"gpt-4o": {"budgetLimit": "2.50", "timePeriod": "1d"}},
    }))
    .unwrap();
    let mut tparams = team_params(1);
    tparams.usage = usage.clone();
    tparams.member_defaults.team_member_key_duration = Some("7d".into());
    let towner = owner("licensed-team");
    let id = "licensed.team";
    litellm
        .team_new(&team::request(id, &tparams, &Resolved::default(), &towner))
        .await
        .unwrap();
    let live = litellm.team_info(id).await.unwrap().unwrap();
    let metadata = live.metadata.clone().unwrap();
    assert_eq!(metadata["tags"], json!(["ml", "eu"]));
    assert_eq!(metadata["guardrails"], json!(["pii"]));
    assert_eq!(metadata["team_member_key_duration"], "7d");
    assert_eq!(metadata["env"], "bench");
    assert_eq!(
        live.model_max_budget.as_ref().unwrap()["gpt-4o"],
        json!({"budget_limit": 2.5, "time_period": "1d"})
    );
    assert!(observe_team(&litellm, id, &tparams, &towner)
        .await
        .is_empty());
    tparams.member_defaults.team_member_key_duration = Some("30d".into());
    assert_eq!(
        observe_team(&litellm, id, &tparams, &towner).await,
        ["teamMemberKeyDuration"]
    );

    let mut kparams = key_params(id, 1);
    kparams.usage = usage;
    let kowner = owner("licensed-key");
    let secret = generate_key();
    litellm
        .key_generate(
            Some(&secret),
            &key::request(&kparams, &Resolved::default(), &kowner),
        )
        .await
        .unwrap();
    let token = token_of(&secret);
    let (drift, live) = observe_key(&litellm, &token, &kparams, &kowner).await;
    assert!(drift.is_empty(), "{drift:?}");
    assert_eq!(live.metadata.as_ref().unwrap()["tags"], json!(["ml", "eu"]));
    let mut cheaper = kparams.clone();
    if let Some(budgets) = cheaper.usage.model_max_budget.as_mut() {
        budgets.get_mut("gpt-4o").unwrap().budget_limit = "2.49".into();
    }
    let (drift, _) = observe_key(&litellm, &token, &cheaper, &kowner).await;
    assert_eq!(drift, ["modelMaxBudget"]);

    kparams.usage.tags = Some(vec!["ml".into()]);
    let (drift, _) = observe_key(&litellm, &token, &kparams, &kowner).await;
    assert_eq!(drift, ["tags"]);
    let update = key::update_request(
        &kparams,
        &Resolved::default(),
        &kowner,
        &litellm_crossplane::provider::managed::diff::Diff::new(),
    );
    litellm.key_update(&token, &update).await.unwrap();
    let (drift, live) = observe_key(&litellm, &token, &kparams, &kowner).await;
    assert!(drift.is_empty(), "{drift:?}");
    let metadata = live.metadata.unwrap();
    assert_eq!(metadata["guardrails"], json!(["pii"]), "kept by the update");
    assert_eq!(metadata["tier"], json!(1));
    assert!(litellm.team_delete(id).await.unwrap());
}
