//! `LiteLLMFallback` end to end, against the real Kubernetes API server and
//! the real LiteLLM 1.108.7 proxy (open source: `/fallback` and
//! `/router/settings` need no licence), and the client's contract with
//! those routes (the `contract` tests: what LiteLLM answers, keeps and
//! refuses, see `src/litellm/fallbacks.rs`).
//!
//! A rule is written under `<model>:<type>`, recorded as the resource's,
//! drift made in LiteLLM is corrected, a spec change reaches it, the
//! external name re-points the resource at another rule, `forProvider` that
//! disagrees with the external name is refused naming the field, and
//! deletion removes the rule (confirmed) and a new resource of the same
//! name makes it again. A rule made in the UI is imported read-only,
//! refused to a resource that does not adopt it deliberately, and never
//! taken over by a second resource. A tenant's rule is refused before any
//! request reaches the proxy (counted). A LiteLLMModel named by `modelRef`
//! is deleted only after the rule. And the rule does what it says: a
//! request for a failing model is served by its fallback only while the
//! LiteLLMFallback exists.
//!
//! The router's fallbacks are one row that LiteLLM rewrites whole on every
//! write, without a lock: the tests of this module take turns ([`SERIAL`])
//! so that a rule one of them writes directly is not lost to another's.

use crate::support;

use kube::api::{Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMFallback, LiteLLMModel};
use litellm_crossplane::litellm::fallbacks::{FallbackRequest, FallbackRule, FallbackType};
use litellm_crossplane::litellm::{self, Error};
use litellm_crossplane::provider::kinds::fallback::{TENANT_REFUSAL, UNMARKED_REFUSAL};
use litellm_crossplane::provider::managed::ownership::ADOPT;
use serde_json::{json, Value};
use support::k8s;
use support::provider::{
    at_provider, condition, delete_and_wait as delete, eventually, is, manifest, platform_model,
    ready, reconciles, refused, requests_by_operation, wait_for, world_guarded as start, World,
};
use support::upstream::Upstream;

/// One test of this module at a time (see the module documentation).
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A model name no other test uses (model names are global to the proxy).
fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", k8s::unique_suffix())
}

fn fallback(name: &str, annotations: Value, spec: Value) -> LiteLLMFallback {
    manifest("LiteLLMFallback", name, annotations, spec)
}

async fn live(client: &litellm::Client, model: &str, kind: FallbackType) -> Option<Vec<String>> {
    client
        .fallback_get(model, kind)
        .await
        .expect("fallbacks read")
        .map(|rule| rule.fallback_models)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A rule written outside the provider (LiteLLM's UI), read back.
async fn made_in_the_ui(client: &litellm::Client, model: &str, kind: FallbackType, to: &[&str]) {
    client
        .fallback_set(&FallbackRequest {
            model: model.into(),
            fallback_models: names(to),
            fallback_type: kind,
        })
        .await
        .expect("rule made in the UI");
    assert_eq!(live(client, model, kind).await, Some(names(to)));
}

/// Removes a rule, whatever made it.
async fn clean_up(client: &litellm::Client, model: &str, kind: FallbackType) {
    client.fallback_delete(model, kind).await.expect("deleted");
}

/// Platform models `names` (each its own LiteLLMModel of the same name),
/// served by `upstream`; returns their model names.
async fn models(world: &World, upstream: &Upstream, names: &[&str]) -> Vec<String> {
    let mut model_names = Vec::new();
    for name in names {
        let model_name = unique(name);
        platform_model(world, upstream, name, &model_name).await;
        model_names.push(model_name);
    }
    model_names
}

/// Writes of the router's fallbacks the world's provider sent.
fn writes(world: &World) -> u64 {
    let requests = world.litellm_requests();
    ["POST /fallback", "DELETE /fallback/{model}"]
        .iter()
        .map(|op| requests.get(*op).copied().unwrap_or(0))
        .sum()
}

mod contract {
    use super::*;

    /// Every route of fallback management as 1.108.7 answers it, through
    /// the client.
    #[tokio::test]
    #[ignore = "needs the test harnesses: tests/run.sh"]
    async fn every_route_of_fallback_management() {
        let _turn = SERIAL.lock().await;
        let Some((world, _crds)) = start("pfbc-routes").await else {
            return;
        };
        let client = &world.litellm;
        let upstream = Upstream::start().await;
        let m = models(&world, &upstream, &["fbc-a", "fbc-b", "fbc-c"]).await;
        let (a, b, c) = (m[0].as_str(), m[1].as_str(), m[2].as_str());
        let general = FallbackType::General;
        let rule = |model: &str, to: &[&str], kind| FallbackRequest {
            model: model.into(),
            fallback_models: names(to),
            fallback_type: kind,
        };

        // Missing: no rule read, DELETE 404 read as already gone.
        assert_eq!(live(client, a, general).await, None);
        assert!(!client.fallback_delete(a, general).await.unwrap());

        // Refused: a model the router does not have (404), a fallback it
        // does not have, the model itself (400), an empty or repeated list
        // (422). Nothing is written.
        let unknown = unique("no-such-model");
        assert!(matches!(
            client.fallback_set(&rule(&unknown, &[b], general)).await,
            Err(Error::NotFound { .. })
        ));
        for (body, status) in [
            (rule(a, &[&unknown], general), 400),
            (rule(a, &[b, a], general), 400),
            (rule(a, &[b, b], general), 422),
            (rule(a, &[], general), 422),
        ] {
            let got = client.fallback_set(&body).await;
            assert!(
                matches!(got, Err(Error::Permanent { status: s, .. }) if s == status),
                "{body:?}: {got:?}"
            );
        }
        assert_eq!(live(client, a, general).await, None);

        // Created, then replaced (200 both times): one rule, read exactly
        // from /router/settings, whose list the database holds.
        let written = client.fallback_set(&rule(a, &[b], general)).await.unwrap();
        assert_eq!(written.fallback_models, [b]);
        assert_eq!(written.fallback_type, general);
        client
            .fallback_set(&rule(a, &[c, b], general))
            .await
            .unwrap();
        let list = client.fallback_list(general).await.unwrap();
        assert_eq!(
            list.entries.iter().filter(|e| e.get(a).is_some()).count(),
            1,
            "replaced, not added"
        );
        assert_eq!(list.source.as_deref(), Some("db"));
        assert!(!list.config_owned());
        assert_eq!(
            client.fallback_get(a, general).await.unwrap(),
            Some(FallbackRule {
                model: a.into(),
                fallback_type: general,
                fallback_models: names(&[c, b]),
            })
        );

        // Each type is a list of its own.
        client
            .fallback_set(&rule(a, &[c], FallbackType::ContextWindow))
            .await
            .unwrap();
        assert_eq!(
            live(client, a, FallbackType::ContextWindow).await,
            Some(names(&[c]))
        );
        assert_eq!(live(client, a, FallbackType::ContentPolicy).await, None);
        assert_eq!(live(client, a, general).await, Some(names(&[c, b])));

        // Deleted by model and type: the other type stays.
        assert!(client.fallback_delete(a, general).await.unwrap());
        assert_eq!(live(client, a, general).await, None);
        assert!(!client.fallback_delete(a, general).await.unwrap());
        assert_eq!(
            live(client, a, FallbackType::ContextWindow).await,
            Some(names(&[c]))
        );
        assert!(client
            .fallback_delete(a, FallbackType::ContextWindow)
            .await
            .unwrap());

        // A model name with '/' cannot reach DELETE /fallback/{model}
        // (404 from the router, whatever the rule): the client refuses it
        // before sending (Error::Config is never an answer of the proxy).
        assert!(matches!(
            client.fallback_delete("team-a/x", general).await,
            Err(Error::Config(_))
        ));
        let raw = reqwest::Client::new()
            .delete(format!("{}/fallback/team-a%2Fx", world.url))
            .bearer_auth(&world.master_key)
            .send()
            .await
            .unwrap();
        assert_eq!(raw.status(), 404);
        assert_eq!(
            raw.json::<Value>().await.unwrap(),
            json!({"detail": "Not Found"}),
            "the router's 404: no route, not a missing rule"
        );
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_fallback_is_created_corrected_updated_renamed_and_deleted() {
    let _turn = SERIAL.lock().await;
    let Some((world, _crds)) = start("pfb-life").await else {
        return;
    };
    let client = &world.litellm;
    let upstream = Upstream::start().await;
    let m = models(&world, &upstream, &["fb-a", "fb-b", "fb-c"]).await;
    let (a, b, c) = (m[0].as_str(), m[1].as_str(), m[2].as_str());
    let general = FallbackType::General;
    let name = "primary";
    let fallbacks = world
        .create(&fallback(
            name,
            json!({}),
            json!({"forProvider": {"model": a, "fallbacks": [b]}}),
        ))
        .await;
    let object = ready(&fallbacks, name).await;
    let id = format!("{a}:general");
    assert_eq!(
        object.annotations()[EXTERNAL_NAME],
        id,
        "<model>:<type>, chosen before the write"
    );
    let observed = at_provider(&object);
    assert_eq!(observed["model"], a);
    assert_eq!(observed["fallbackType"], "general");
    assert_eq!(observed["fallbacks"], json!([b]));
    assert_eq!(observed["ownedRule"], id.as_str(), "recorded as its own");
    assert_eq!(live(client, a, general).await, Some(names(&[b])));

    // The steady state: reads only.
    let before = writes(&world);
    world.reconciled_again("fallback", 3).await;
    assert_eq!(writes(&world), before, "no write in the steady state");

    // Drift made in LiteLLM's UI: corrected within a poll.
    made_in_the_ui(client, a, general, &[c]).await;
    eventually("the drift corrected", || async {
        (live(client, a, general).await? == names(&[b])).then_some(())
    })
    .await;

    // A change of the spec reaches LiteLLM, in order.
    fallbacks
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"fallbacks": [c, b]}}})),
        )
        .await
        .unwrap();
    eventually("the update", || async {
        (live(client, a, general).await? == names(&[c, b])).then_some(())
    })
    .await;

    // forProvider that does not agree with the external name: refused,
    // naming the field, nothing written.
    fallbacks
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"type": "contextWindow"}}})),
        )
        .await
        .unwrap();
    let message = refused(&fallbacks, name).await.1;
    assert!(message.starts_with("forProvider.type: "), "{message}");
    assert!(
        message.contains(&format!("{a}:context_window")),
        "{message}"
    );
    assert_eq!(live(client, a, FallbackType::ContextWindow).await, None);

    // Re-pointed with the external name: the context window rule is
    // written; the general one is left in LiteLLM.
    let renamed = format!("{a}:context_window");
    fallbacks
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {EXTERNAL_NAME: renamed}}})),
        )
        .await
        .unwrap();
    let object = wait_for(&fallbacks, name, "the renamed rule", |o| {
        is(o, "Ready", "True")
            && is(o, "Synced", "True")
            && at_provider(o)["ownedRule"] == renamed.as_str()
    })
    .await;
    assert_eq!(at_provider(&object)["fallbackType"], "context_window");
    assert_eq!(
        live(client, a, FallbackType::ContextWindow).await,
        Some(names(&[c, b]))
    );
    assert_eq!(
        live(client, a, general).await,
        Some(names(&[c, b])),
        "the former rule is left"
    );
    clean_up(client, a, general).await;

    // Deletion removes the rule, confirmed; a new resource of the same
    // name writes it again.
    delete(&fallbacks, name).await;
    assert_eq!(live(client, a, FallbackType::ContextWindow).await, None);
    world
        .create(&fallback(
            name,
            json!({}),
            json!({"forProvider": {"model": a, "type": "contentPolicy", "fallbacks": [b]}}),
        ))
        .await;
    let object = ready(&fallbacks, name).await;
    assert_eq!(
        object.annotations()[EXTERNAL_NAME],
        format!("{a}:content_policy")
    );
    assert_eq!(
        live(client, a, FallbackType::ContentPolicy).await,
        Some(names(&[b]))
    );
    // Deleted in the UI: written again within a poll.
    clean_up(client, a, FallbackType::ContentPolicy).await;
    eventually("the rule written again", || async {
        live(client, a, FallbackType::ContentPolicy).await.map(drop)
    })
    .await;
    delete(&fallbacks, name).await;
    assert_eq!(live(client, a, FallbackType::ContentPolicy).await, None);

    // Bad input, named: a model the proxy does not have, a fallback that
    // is the model itself.
    let unknown = unique("no-such-model");
    world
        .create(&fallback(
            "unknown",
            json!({}),
            json!({"forProvider": {"model": unknown, "fallbacks": [b]}}),
        ))
        .await;
    let message = refused(&fallbacks, "unknown").await.1;
    assert!(message.starts_with("forProvider.model: "), "{message}");
    assert!(message.contains("no model named"), "{message}");
    world
        .create(&fallback(
            "itself",
            json!({}),
            json!({"forProvider": {"model": a, "fallbacks": [b, a]}}),
        ))
        .await;
    let message = refused(&fallbacks, "itself").await.1;
    assert!(message.starts_with("forProvider.fallbacks: "), "{message}");
    assert_eq!(live(client, a, general).await, None, "nothing written");
    delete(&fallbacks, "unknown").await;
    delete(&fallbacks, "itself").await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_rule_made_in_the_ui_is_imported_adopted_only_deliberately_and_never_taken_over() {
    let _turn = SERIAL.lock().await;
    let Some((world, _crds)) = start("pfb-ui").await else {
        return;
    };
    let client = &world.litellm;
    let upstream = Upstream::start().await;
    let m = models(&world, &upstream, &["fbu-a", "fbu-b", "fbu-c"]).await;
    let (a, b, c) = (m[0].as_str(), m[1].as_str(), m[2].as_str());
    let general = FallbackType::General;
    let id = format!("{a}:general");
    made_in_the_ui(client, a, general, &[b]).await;
    let fallbacks = world.api::<LiteLLMFallback>();

    // Observe: imported as it is (the fallbacks late-initialized), not
    // recorded as the resource's, nothing written.
    world
        .create(&fallback(
            "observer",
            json!({}),
            json!({"managementPolicies": ["Observe", "LateInitialize"],
                   "forProvider": {"model": a}}),
        ))
        .await;
    let observer = ready(&fallbacks, "observer").await;
    assert_eq!(observer.annotations()[EXTERNAL_NAME], id);
    assert_eq!(at_provider(&observer)["fallbacks"], json!([b]));
    assert_eq!(at_provider(&observer)["ownedRule"], Value::Null);
    assert_eq!(observer.spec.for_provider.fallbacks, Some(names(&[b])));

    // Full management without the annotation: refused, nothing written,
    // and its deletion leaves the rule.
    world
        .create(&fallback(
            "careless",
            json!({}),
            json!({"forProvider": {"model": a, "fallbacks": [c]}}),
        ))
        .await;
    assert_eq!(refused(&fallbacks, "careless").await.1, UNMARKED_REFUSAL);
    let before = writes(&world);
    world.reconciled_again("fallback", 4).await;
    assert_eq!(writes(&world), before, "nothing written");
    assert_eq!(live(client, a, general).await, Some(names(&[b])));
    delete(&fallbacks, "careless").await;
    assert_eq!(
        live(client, a, general).await,
        Some(names(&[b])),
        "not deleted"
    );

    // Adopted deliberately: written, recorded as its own.
    world
        .create(&fallback(
            "adopter",
            json!({ADOPT: "true"}),
            json!({"forProvider": {"model": a, "fallbacks": [c]}}),
        ))
        .await;
    let adopter = ready(&fallbacks, "adopter").await;
    assert_eq!(at_provider(&adopter)["ownedRule"], id.as_str());
    assert_eq!(live(client, a, general).await, Some(names(&[c])));

    // A second resource cannot take it over, with the annotation or
    // without.
    world
        .create(&fallback(
            "second",
            json!({ADOPT: "true"}),
            json!({"forProvider": {"model": a, "fallbacks": [b]}}),
        ))
        .await;
    let message = refused(&fallbacks, "second").await.1;
    assert!(
        message.contains("\"adopter\" of this namespace holds it"),
        "{message}"
    );
    world
        .create(&fallback(
            "third",
            json!({}),
            json!({"forProvider": {"model": a, "fallbacks": [b]}}),
        ))
        .await;
    assert_eq!(refused(&fallbacks, "third").await.1, UNMARKED_REFUSAL);
    world.reconciled_again("fallback", 6).await;
    assert_eq!(
        live(client, a, general).await,
        Some(names(&[c])),
        "not taken over"
    );
    delete(&fallbacks, "second").await;
    delete(&fallbacks, "third").await;
    assert_eq!(
        live(client, a, general).await,
        Some(names(&[c])),
        "not deleted by them"
    );

    // The importer lets go without deleting (no Delete policy); the
    // adopter deletes the rule.
    delete(&fallbacks, "observer").await;
    assert!(live(client, a, general).await.is_some());
    delete(&fallbacks, "adopter").await;
    assert_eq!(live(client, a, general).await, None);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_fallback_is_refused_and_nothing_reaches_the_proxy() {
    let _turn = SERIAL.lock().await;
    let Some((world, _crds)) = start("pfb-tenant").await else {
        return;
    };
    let client = &world.litellm;
    let upstream = Upstream::start().await;
    let m = models(&world, &upstream, &["fbt-a", "fbt-b"]).await;
    let (a, b) = (m[0].as_str(), m[1].as_str());
    let general = FallbackType::General;

    // The platform's own rule, which the tenant names next.
    let platform = world
        .create(&fallback(
            "platform",
            json!({}),
            json!({"forProvider": {"model": a, "fallbacks": [b]}}),
        ))
        .await;
    ready(&platform, "platform").await;

    let (tenant, registry) = world.tenant_counted("pfb-tenant-t").await;
    let fallbacks = tenant.api::<LiteLLMFallback>(&world);
    let mine: LiteLLMFallback = world.tenant_manifest(
        "LiteLLMFallback",
        "mine",
        json!({}),
        json!({"forProvider": {"model": b, "fallbacks": [a]}}),
    );
    fallbacks.create(&Default::default(), &mine).await.unwrap();
    let hostile: LiteLLMFallback = world.tenant_manifest(
        "LiteLLMFallback",
        "hostile",
        json!({EXTERNAL_NAME: format!("{a}:general"), ADOPT: "true"}),
        json!({"managementPolicies": ["Observe"], "forProvider": {"model": a}}),
    );
    fallbacks
        .create(&Default::default(), &hostile)
        .await
        .unwrap();
    for name in ["mine", "hostile"] {
        let message = refused(&fallbacks, name).await.1;
        assert_eq!(message, TENANT_REFUSAL);
        assert!(!message.contains(&world.namespace), "names no one");
        let object = fallbacks.get(name).await.unwrap();
        assert!(
            object.status.unwrap().at_provider.is_none(),
            "nothing imported"
        );
    }
    // Reconciled again and again: not one LiteLLM request.
    let reconciled = reconciles(&registry, "fallback");
    eventually("more reconciliations of the tenant's fallbacks", || async {
        (reconciles(&registry, "fallback") >= reconciled + 4).then_some(())
    })
    .await;
    let requests = requests_by_operation(&registry);
    assert!(requests.is_empty(), "no LiteLLM request: {requests:?}");
    assert_eq!(live(client, b, general).await, None, "nothing at the proxy");
    assert_eq!(
        live(client, a, general).await,
        Some(names(&[b])),
        "untouched"
    );

    // Deleted at once: nothing to delete.
    delete(&fallbacks, "mine").await;
    delete(&fallbacks, "hostile").await;
    assert!(requests_by_operation(&registry).is_empty());
    assert_eq!(live(client, a, general).await, Some(names(&[b])));
    delete(&platform, "platform").await;
    assert_eq!(live(client, a, general).await, None);
}

/// The rule does what it says, and a model it is for is deleted after it:
/// a request for a model whose upstream is down is served by the fallback
/// only while the LiteLLMFallback exists.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_failing_model_is_served_by_its_fallback_only_while_the_rule_exists() {
    let _turn = SERIAL.lock().await;
    let Some((world, _crds)) = start("pfb-serve").await else {
        return;
    };
    let client = &world.litellm;
    let upstream = Upstream::start().await;
    let backup = models(&world, &upstream, &["fbs-backup"]).await.remove(0);
    // An upstream that is gone: its port closed once the model is Ready.
    let dead = Upstream::start().await;
    let failing = models(&world, &dead, &["fbs-failing"]).await.remove(0);
    drop(dead);

    let chat = || async {
        reqwest::Client::new()
            .post(format!("{}/chat/completions", world.url))
            .bearer_auth(&world.master_key)
            .json(&json!({"model": failing,
                          "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .expect("the proxy answers")
            .status()
            .as_u16()
    };
    let served = || upstream.seen().len();
    let before = served();
    assert!(chat().await >= 400, "no fallback: the failing model fails");
    assert_eq!(served(), before, "nothing reached the fallback's upstream");

    let fallbacks = world
        .create(&fallback(
            "failover",
            json!({}),
            json!({"forProvider": {"modelRef": {"name": "fbs-failing"},
                                   "fallbacks": [backup]}}),
        ))
        .await;
    let object = ready(&fallbacks, "failover").await;
    assert_eq!(
        object.annotations()[EXTERNAL_NAME],
        format!("{failing}:general"),
        "the public name of modelRef"
    );
    assert_eq!(chat().await, 200, "served by the fallback");
    assert!(served() > before, "by the fallback's upstream");

    // The model the rule is for waits for the rule.
    let models_api = world.api::<LiteLLMModel>();
    models_api
        .delete("fbs-failing", &Default::default())
        .await
        .unwrap();
    let waiting = wait_for(
        &models_api,
        "fbs-failing",
        "waiting for the fallback",
        |o| {
            condition(o, "Ready")
                .and_then(|c| c.message)
                .is_some_and(|m| m.contains("failover"))
        },
    )
    .await;
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(live(client, &failing, FallbackType::General)
        .await
        .is_some());

    // Gone with its resource: the failing model fails again, then goes.
    delete(&fallbacks, "failover").await;
    assert_eq!(live(client, &failing, FallbackType::General).await, None);
    let after = served();
    assert!(chat().await >= 400, "no fallback any more");
    assert_eq!(served(), after);
    support::provider::wait_gone(&models_api, "fbs-failing").await;
}
