//! The engine's table tests without an API server, as crossplane-runtime's
//! reconciler tests are: [`reconciler::reconcile_with`] runs whole against
//! an in-memory Kubernetes API ([`FakeApi`]) and a scripted LiteLLM
//! ([`Script`], made by [`FakeConnecter`] in place of the kind's own
//! `External`). Every management-policy set against every external state,
//! a create whose answer was lost, failures of each step, deletion with
//! and without dependents, paused, a reference waited for, a stale cached
//! copy and a lost write race. Each case takes milliseconds.

use std::sync::{Arc, Mutex};

use kube::runtime::controller::Action;
use kube::Resource;
use serde_json::{json, Value};

use crate::api::common::{policy_allows, ManagementPolicy, SUPPORTED_MANAGEMENT_POLICIES};
use crate::api::{LiteLLMInstance, LiteLLMTeam, LiteLLMVirtualKey};
use crate::litellm;
use crate::provider::managed::contract::{
    Connecter, Connection, Created, Creation, External, ExternalError, ManagedKind, Observation,
};
use crate::provider::managed::diff::Diff;
use crate::provider::managed::fake_api::{path, FakeApi};
use crate::provider::managed::ownership::Owner;
use crate::provider::managed::reconciler::{self, Context, Error, FINALIZER};
use crate::provider::telemetry::metrics::Metrics;

use ManagementPolicy::{All, Create, Observe, Update};

const NS: &str = "ns";

/// Who the LiteLLM object belongs to, by its marker.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Marked {
    /// This resource's.
    Ours,
    /// Another resource's.
    Theirs,
}

/// The scripted LiteLLM object, what fails, and every call made.
#[derive(Default)]
struct Script {
    /// `None`: no object under the id.
    object: Option<Marked>,
    /// Fields of `forProvider` the object does not match.
    drift: Vec<&'static str>,
    /// The one call that fails: "observe", "create", "update" or "delete".
    failing: Option<&'static str>,
    /// The create succeeds in LiteLLM but its answer is lost.
    loses_create_answer: bool,
    /// The kind's create refuses a taken id (a conflict), so a fresh id is
    /// created first ([`External::create_refuses_existing`]).
    creates_first: bool,
    /// A page of a list route can stand for the kind's observe
    /// ([`External::listed`]).
    listed: bool,
    calls: Vec<String>,
}

type Shared = Arc<Mutex<Script>>;

struct FakeConnecter(Shared);

impl<K: ManagedKind> Connecter<K> for FakeConnecter {
    type External = FakeExternal;
    fn connect(&self, connection: Connection) -> FakeExternal {
        FakeExternal {
            script: self.0.clone(),
            owner: connection.owner,
        }
    }
}

struct FakeExternal {
    script: Shared,
    /// The owner the reconciler connected for.
    owner: Owner,
}

impl FakeExternal {
    fn call(
        &self,
        call: &'static str,
        id: &str,
    ) -> Result<std::sync::MutexGuard<'_, Script>, ExternalError> {
        let mut script = self.script.lock().unwrap();
        script.calls.push(format!("{call} {id}"));
        if script.failing == Some(call) {
            return Err(ExternalError::LiteLLM(litellm::Error::Retryable {
                op: "POST /fake",
                detail: "HTTP 503".into(),
            }));
        }
        Ok(script)
    }
}

impl<K: ManagedKind> External<K> for FakeExternal {
    async fn observe(&self, _: &K, id: &str) -> Result<Observation<K>, ExternalError> {
        let script = self.call("observe", id)?;
        let Some(marked) = script.object else {
            return Ok(Observation::absent());
        };
        let mut drift = Diff::new();
        for field in &script.drift {
            drift.mark(field);
        }
        let mut observation = Observation::absent();
        observation.exists = true;
        observation.drift = drift;
        observation.owner = Some(match marked {
            Marked::Ours => self.owner.clone(),
            Marked::Theirs => Owner {
                name: "somebody-else".into(),
                uid: "another-uid".into(),
                ..self.owner.clone()
            },
        });
        Ok(observation)
    }

    async fn create(&self, _: &K, id: &str) -> Result<Created<K>, ExternalError> {
        let mut script = self.call("create", id)?;
        if script.creates_first && script.object.is_some() {
            return Err(ExternalError::LiteLLM(litellm::Error::Conflict {
                op: "POST /fake",
                detail: "the id is taken".into(),
            }));
        }
        script.object = Some(Marked::Ours);
        script.drift.clear();
        if script.loses_create_answer {
            script.loses_create_answer = false;
            return Err(ExternalError::LiteLLM(litellm::Error::Retryable {
                op: "POST /fake",
                detail: "timed out".into(),
            }));
        }
        Ok(Creation::default().into())
    }

    async fn update(&self, _: &K, id: &str, _: &Diff) -> Result<(), ExternalError> {
        self.call("update", id)?.drift.clear();
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), ExternalError> {
        self.call("delete", id)?.object = None;
        Ok(())
    }

    fn create_refuses_existing(&self) -> bool {
        self.script.lock().unwrap().creates_first
    }

    fn listed(&self, _: &K, id: &str) -> Option<litellm::Probe> {
        let listed = self.script.lock().unwrap().listed;
        listed.then(|| litellm::Client::team_probe_unread(id))
    }
}

/// The API with an attached, Ready LiteLLMInstance `proxy` and its master
/// key in [`NS`], and the provider's context over it.
fn world() -> (FakeApi, Arc<Context>) {
    let api = FakeApi::default();
    api.put(
        &at::<LiteLLMInstance>("proxy"),
        json!({
            "apiVersion": LiteLLMInstance::api_version(&()), "kind": "LiteLLMInstance",
            "metadata": {"name": "proxy", "namespace": NS},
            "spec": {
                "workload": {"managed": false, "endpoint": "http://127.0.0.1:9"},
                "masterKey": {"secretRef": {"name": "master", "key": "key"}},
            },
            "status": {"ready": true, "endpoint": "http://127.0.0.1:9"},
        }),
    );
    api.put(
        &path("v1", "secrets", NS, "master"),
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "master", "namespace": NS},
            "data": {"key": "c2stZmFrZS1tYXN0ZXI="},
        }),
    );
    let ctx = Arc::new(Context::new(api.client(), "c", Metrics::default()));
    (api, ctx)
}

fn at<K: Resource<DynamicType = ()>>(name: &str) -> String {
    path(&K::api_version(&()), &K::plural(&()), NS, name)
}

fn team(api: &FakeApi, name: &str, policies: &[ManagementPolicy], annotations: Value) {
    api.put(
        &at::<LiteLLMTeam>(name),
        json!({
            "apiVersion": LiteLLMTeam::api_version(&()), "kind": "LiteLLMTeam",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations},
            "spec": {
                "instanceRef": {"name": "proxy"},
                "managementPolicies": policies,
                "forProvider": {},
            },
        }),
    );
}

fn read<K: Resource<DynamicType = ()> + serde::de::DeserializeOwned>(
    api: &FakeApi,
    name: &str,
) -> Option<K> {
    api.get(&at::<K>(name))
        .map(|object| serde_json::from_value(object).unwrap())
}

/// One reconciliation of the resource as the API holds it now.
async fn reconcile<K: ManagedKind>(
    api: &FakeApi,
    ctx: &Arc<Context>,
    script: &Shared,
    name: &str,
) -> Result<Action, Error> {
    let mr: K = read(api, name).expect("the resource");
    reconcile_copy(ctx, script, mr).await
}

/// One reconciliation of `mr` as given (a copy the API may have moved
/// past).
async fn reconcile_copy<K: ManagedKind>(
    ctx: &Arc<Context>,
    script: &Shared,
    mr: K,
) -> Result<Action, Error> {
    reconciler::reconcile_with(Arc::new(mr), ctx.clone(), &FakeConnecter(script.clone())).await
}

/// `type status reason` of the resource's `Ready` and `Synced`.
fn conditions(api: &FakeApi, name: &str) -> [String; 2] {
    let team = api.get(&at::<LiteLLMTeam>(name)).expect("the team");
    ["Ready", "Synced"].map(|type_| {
        let found = team["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == type_);
        match found {
            Some(c) => format!(
                "{type_}={} {}",
                c["status"].as_str().unwrap(),
                c["reason"].as_str().unwrap()
            ),
            None => format!("{type_} unset"),
        }
    })
}

fn script(object: Option<Marked>, drift: &[&'static str]) -> Shared {
    Arc::new(Mutex::new(Script {
        object,
        drift: drift.to_vec(),
        ..Script::default()
    }))
}

fn calls(script: &Shared) -> Vec<String> {
    script.lock().unwrap().calls.clone()
}

/// The id the engine chooses for team `web` of [`NS`].
const ID: &str = "ns.web";

/// (state, object, drift, calls, Ready, Synced).
type StateCase = (
    &'static str,
    Option<Marked>,
    &'static [&'static str],
    Vec<String>,
    &'static str,
    &'static str,
);

/// Every policy set against every external state, for a kind whose create
/// may go first under an id chosen in the same reconciliation
/// (`creates_first`) and for one that observes first: a created-first
/// object is observed only when the create finds the id taken, and then
/// ends as an observed one (refused when another resource's); without
/// Create nothing is ever created.
#[tokio::test]
async fn every_policy_set_against_every_external_state() {
    for (policies, creates_first) in SUPPORTED_MANAGEMENT_POLICIES
        .iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| [(p, false), (p, true)])
    {
        let allows = |p| policy_allows(policies, p);
        let mut cases: Vec<StateCase> = vec![];
        let first = creates_first && allows(Create);
        // What is called before the object is known to be there.
        let observe = match first {
            true => vec![format!("create {ID}"), format!("observe {ID}")],
            false => vec![format!("observe {ID}")],
        };
        cases.push(match allows(Create) {
            true => (
                "absent",
                None,
                &[],
                match first {
                    true => vec![format!("create {ID}")],
                    false => vec![format!("observe {ID}"), format!("create {ID}")],
                },
                "Ready=False Creating",
                "Synced=True ReconcileSuccess",
            ),
            false => (
                "absent",
                None,
                &[],
                observe.clone(),
                "Ready=False Unavailable",
                "Synced=False ReconcileError",
            ),
        });
        cases.push((
            "ours, as asked",
            Some(Marked::Ours),
            &[],
            observe.clone(),
            "Ready=True Available",
            "Synced=True ReconcileSuccess",
        ));
        cases.push(match allows(Update) {
            true => (
                "ours, drifted",
                Some(Marked::Ours),
                &["teamAlias"],
                [observe.clone(), vec![format!("update {ID}")]].concat(),
                "Ready=True Available",
                "Synced=True ReconcileSuccess",
            ),
            // Reported, not corrected.
            false => (
                "ours, drifted",
                Some(Marked::Ours),
                &["teamAlias"],
                observe.clone(),
                "Ready=True Available",
                "Synced=True ReconcileSuccess",
            ),
        });
        cases.push((
            "another resource's",
            Some(Marked::Theirs),
            &["teamAlias"],
            observe.clone(),
            "Ready=False Unavailable",
            "Synced=False ReconcileError",
        ));
        for (state, object, drift, want_calls, ready, synced) in cases {
            let (api, ctx) = world();
            team(&api, "web", policies, json!({}));
            let script = script(object, drift);
            script.lock().unwrap().creates_first = creates_first;
            let result = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web").await;
            let case = format!("{policies:?}, creates first: {creates_first}, {state}");
            assert!(result.is_ok(), "{case}: {result:?}");
            assert_eq!(calls(&script), want_calls, "{case}");
            if object == Some(Marked::Theirs) {
                assert_eq!(
                    script.lock().unwrap().object,
                    Some(Marked::Theirs),
                    "{case}: another resource's object is left as it was"
                );
            }
            assert_eq!(conditions(&api, "web"), [ready, synced], "{case}");
            let web: LiteLLMTeam = read(&api, "web").unwrap();
            assert_eq!(
                web.metadata.finalizers,
                Some(vec![FINALIZER.to_owned()]),
                "{case}"
            );
            assert_eq!(
                web.metadata
                    .annotations
                    .unwrap_or_default()
                    .get("crossplane.io/external-name")
                    .map(String::as_str),
                Some(ID),
                "{case}: the id is recorded before anything is created"
            );
        }
    }
}

#[tokio::test]
async fn a_create_whose_answer_was_lost_is_found_and_not_made_twice() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(None, &[]);
    script.lock().unwrap().loses_create_answer = true;
    let failed = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web").await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(conditions(&api, "web")[1], "Synced=False ReconcileError");
    assert!(api
        .events("web")
        .contains(&"Warning CannotCreateExternalResource".to_owned()));
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(
        calls(&script),
        [
            format!("observe {ID}"),
            format!("create {ID}"),
            format!("observe {ID}")
        ],
        "the second reconciliation finds what the first made under the recorded id"
    );
    assert_eq!(
        conditions(&api, "web"),
        ["Ready=True Available", "Synced=True ReconcileSuccess"]
    );
}

/// A fresh id is created first; the retry after a lost answer finds the id
/// recorded, so it observes first, finds what the first create made and
/// makes nothing twice.
#[tokio::test]
async fn a_create_first_whose_answer_was_lost_is_found_and_not_made_twice() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(None, &[]);
    script.lock().unwrap().creates_first = true;
    script.lock().unwrap().loses_create_answer = true;
    let failed = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web").await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(calls(&script), [format!("create {ID}")]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(
        calls(&script),
        [format!("create {ID}"), format!("observe {ID}")],
        "the retry observes the recorded id first"
    );
    assert_eq!(
        conditions(&api, "web"),
        ["Ready=True Available", "Synced=True ReconcileSuccess"]
    );
}

/// Only an id chosen in the same reconciliation is fresh: a resource whose
/// external name is already recorded (a later reconciliation, an import)
/// observes first, even for a kind that could create first.
#[tokio::test]
async fn a_recorded_id_is_observed_first() {
    for (object, want_calls) in [
        (None, vec![format!("observe {ID}"), format!("create {ID}")]),
        (Some(Marked::Ours), vec![format!("observe {ID}")]),
        (Some(Marked::Theirs), vec![format!("observe {ID}")]),
    ] {
        let (api, ctx) = world();
        team(
            &api,
            "web",
            &[All],
            json!({"crossplane.io/external-name": ID}),
        );
        let script = script(object, &[]);
        script.lock().unwrap().creates_first = true;
        reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
            .await
            .unwrap();
        assert_eq!(calls(&script), want_calls, "{object:?}");
    }
}

#[tokio::test]
async fn a_failing_step_is_an_error_with_its_event_and_the_cause_in_synced() {
    for (failing, object, drift, event) in [
        (
            "observe",
            Some(Marked::Ours),
            &[][..],
            "CannotObserveExternalResource",
        ),
        ("create", None, &[][..], "CannotCreateExternalResource"),
        (
            "update",
            Some(Marked::Ours),
            &["teamAlias"][..],
            "CannotUpdateExternalResource",
        ),
    ] {
        let (api, ctx) = world();
        team(&api, "web", &[All], json!({}));
        let script = script(object, drift);
        script.lock().unwrap().failing = Some(failing);
        let result = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web").await;
        let err = result.expect_err(failing);
        assert!(err.to_string().contains("HTTP 503"), "{failing}: {err}");
        assert_eq!(
            conditions(&api, "web")[1],
            "Synced=False ReconcileError",
            "{failing}"
        );
        assert_eq!(api.events("web"), [format!("Warning {event}")], "{failing}");
    }
}

#[tokio::test]
async fn paused_resources_are_reported_and_left_alone() {
    for (how, policies, annotations) in [
        (
            "annotation",
            &[All][..],
            json!({"crossplane.io/paused": "true"}),
        ),
        ("empty policies", &[][..], json!({})),
    ] {
        let (api, ctx) = world();
        team(&api, "web", policies, annotations);
        let script = script(None, &[]);
        let action = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web").await;
        assert_eq!(
            action.unwrap(),
            Action::await_change(),
            "{how}: woken by a change only"
        );
        assert!(calls(&script).is_empty(), "{how}");
        assert_eq!(
            conditions(&api, "web"),
            ["Ready unset", "Synced=False ReconcilePaused"],
            "{how}"
        );
        assert_eq!(api.events("web"), ["Normal ReconciliationPaused"], "{how}");
        let web: LiteLLMTeam = read(&api, "web").unwrap();
        assert_eq!(
            web.metadata.finalizers, None,
            "{how}: nothing done, nothing to undo"
        );
    }
}

#[tokio::test]
async fn deletion_deletes_or_releases_then_lets_go() {
    for (policies, want_calls, event) in [
        (
            &[All][..],
            vec![format!("observe {ID}"), format!("delete {ID}")],
            "Normal DeletedExternalResource",
        ),
        (
            &[Observe, Create, Update][..],
            vec![],
            "Normal ReleasedExternalResource",
        ),
    ] {
        let (api, ctx) = world();
        team(&api, "web", policies, json!({}));
        let script = script(None, &[]);
        reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
            .await
            .unwrap();
        script.lock().unwrap().calls.clear();
        api.delete(&at::<LiteLLMTeam>("web"));
        let action = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
            .await
            .unwrap();
        assert_eq!(action, Action::await_change());
        assert_eq!(calls(&script), want_calls, "{policies:?}");
        assert!(
            read::<LiteLLMTeam>(&api, "web").is_none(),
            "{policies:?}: the finalizer released"
        );
        assert!(
            api.events("web").contains(&event.to_owned()),
            "{policies:?}: {:?}",
            api.events("web")
        );
    }
}

#[tokio::test]
async fn a_failed_delete_keeps_the_finalizer_and_is_an_error() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(None, &[]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    script.lock().unwrap().failing = Some("delete");
    api.delete(&at::<LiteLLMTeam>("web"));
    let err = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .expect_err("delete fails");
    assert!(err.to_string().contains("HTTP 503"), "{err}");
    assert!(
        read::<LiteLLMTeam>(&api, "web").is_some(),
        "held by its finalizer"
    );
    assert_eq!(
        conditions(&api, "web"),
        ["Ready=False Deleting", "Synced=False ReconcileError"]
    );
    assert!(api
        .events("web")
        .contains(&"Warning CannotDeleteExternalResource".to_owned()));
    // The next try deletes, and lets go.
    script.lock().unwrap().failing = None;
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert!(read::<LiteLLMTeam>(&api, "web").is_none());
}

#[tokio::test]
async fn deletion_waits_for_dependents_and_while_paused_keeping_the_finalizer() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(None, &[]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    api.put(
        &at::<LiteLLMVirtualKey>("ci"),
        json!({
            "apiVersion": LiteLLMVirtualKey::api_version(&()), "kind": "LiteLLMVirtualKey",
            "metadata": {"name": "ci", "namespace": NS},
            "spec": {"instanceRef": {"name": "proxy"}, "forProvider": {"teamRef": {"name": "web"}}},
        }),
    );
    script.lock().unwrap().calls.clear();
    api.delete(&at::<LiteLLMTeam>("web"));
    // Not an error: the order of deletion at work.
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert!(calls(&script).is_empty(), "nothing deleted in LiteLLM");
    let web: LiteLLMTeam = read(&api, "web").expect("held by its finalizer");
    assert_eq!(web.metadata.finalizers, Some(vec![FINALIZER.to_owned()]));
    let ready = &api.get(&at::<LiteLLMTeam>("web")).unwrap()["status"]["conditions"][0];
    assert_eq!(ready["reason"], "Deleting");
    assert!(ready["message"].as_str().unwrap().contains("ci"), "{ready}");

    // Paused meanwhile: still held, and reported.
    api.delete(&at::<LiteLLMVirtualKey>("ci"));
    let mut paused = api.get(&at::<LiteLLMTeam>("web")).unwrap();
    paused["metadata"]["annotations"]["crossplane.io/paused"] = json!("true");
    api.put(&at::<LiteLLMTeam>("web"), paused);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert!(calls(&script).is_empty());
    assert_eq!(conditions(&api, "web")[1], "Synced=False ReconcilePaused");
    assert!(
        read::<LiteLLMTeam>(&api, "web").is_some(),
        "a paused resource is not deleted"
    );
}

#[tokio::test]
async fn a_reference_not_there_yet_is_waited_for_not_failed() {
    let (api, ctx) = world();
    api.put(
        &at::<LiteLLMVirtualKey>("ci"),
        json!({
            "apiVersion": LiteLLMVirtualKey::api_version(&()), "kind": "LiteLLMVirtualKey",
            "metadata": {"name": "ci", "namespace": NS},
            "spec": {"instanceRef": {"name": "proxy"}, "forProvider": {"teamRef": {"name": "later"}}},
        }),
    );
    let script = script(None, &[]);
    let action = reconcile::<LiteLLMVirtualKey>(&api, &ctx, &script, "ci").await;
    assert!(action.is_ok(), "an outcome, not an error: {action:?}");
    assert!(calls(&script).is_empty(), "nothing looked up or created");
    assert_eq!(
        api.events("ci"),
        ["Warning CannotResolveResourceReferences"]
    );
    let key = api.get(&at::<LiteLLMVirtualKey>("ci")).unwrap();
    let synced = &key["status"]["conditions"][0];
    assert_eq!(
        (synced["type"].as_str(), synced["reason"].as_str()),
        (Some("Synced"), Some("ReconcileError"))
    );
    assert!(
        synced["message"].as_str().unwrap().contains("later"),
        "{synced}"
    );
    assert_eq!(
        key["metadata"]["finalizers"],
        Value::Null,
        "no finalizer before anything is done"
    );
}

#[tokio::test]
async fn a_cached_copy_older_than_the_providers_own_write_is_not_acted_on() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let stale: LiteLLMTeam = read(&api, "web").unwrap();
    let script = script(None, &[]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    let made = calls(&script).len();
    let requests = api.requests().len();
    let action = reconcile_copy(&ctx, &script, stale).await.unwrap();
    assert_eq!(
        action,
        Action::requeue(std::time::Duration::from_millis(100))
    );
    assert_eq!(calls(&script).len(), made, "no call to LiteLLM");
    assert_eq!(
        api.requests().len(),
        requests,
        "no read or write of Kubernetes"
    );
}

#[tokio::test]
async fn a_write_race_lost_requeues_silently() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let before: LiteLLMTeam = read(&api, "web").unwrap();
    // Someone else writes the resource after the copy was read.
    let mut changed = api.get(&at::<LiteLLMTeam>("web")).unwrap();
    changed["metadata"]["labels"] = json!({"team": "web"});
    api.put(&at::<LiteLLMTeam>("web"), changed);
    let script = script(None, &[]);
    let action = reconcile_copy(&ctx, &script, before).await.unwrap();
    assert_eq!(
        action,
        Action::requeue(std::time::Duration::from_millis(200))
    );
    assert!(
        calls(&script).is_empty(),
        "nothing created before the id is recorded"
    );
    assert!(api.events("web").is_empty(), "a conflict is no event");
    assert_eq!(conditions(&api, "web"), ["Ready unset", "Synced unset"]);
}

#[tokio::test]
async fn deletion_waits_until_the_providers_finalizer_is_the_last() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(None, &[]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    let mut held = api.get(&at::<LiteLLMTeam>("web")).unwrap();
    held["metadata"]["finalizers"] = json!(["example.org/backup", FINALIZER]);
    api.put(&at::<LiteLLMTeam>("web"), held);
    script.lock().unwrap().calls.clear();
    api.delete(&at::<LiteLLMTeam>("web"));
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert!(calls(&script).is_empty(), "the LiteLLM object stays");
    let web = api.get(&at::<LiteLLMTeam>("web")).expect("held");
    let ready = &web["status"]["conditions"][0];
    assert_eq!(ready["reason"], "Deleting");
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .contains("example.org/backup"),
        "{ready}"
    );
    // The other controller lets go: now the object is deleted.
    let mut released = web;
    released["metadata"]["finalizers"] = json!([FINALIZER]);
    api.put(&at::<LiteLLMTeam>("web"), released);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(
        calls(&script),
        [format!("observe {ID}"), format!("delete {ID}")]
    );
    assert!(read::<LiteLLMTeam>(&api, "web").is_none());
}

#[tokio::test]
async fn a_reconcile_request_is_handled_once_and_reported_with_the_generation() {
    let (api, ctx) = world();
    let token = json!({"crossplane.io/reconcile-requested-at": "2026-12-06T08:00:00Z"});
    team(&api, "web", &[All], token);
    let script = script(Some(Marked::Ours), &[]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    let status = api.get(&at::<LiteLLMTeam>("web")).unwrap()["status"].clone();
    assert_eq!(status["lastHandledReconcileAt"], "2026-12-06T08:00:00Z");
    assert_eq!(status["observedGeneration"], 1);
    assert_eq!(api.events("web"), ["Normal ReconcileRequestHandled"]);
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(api.events("web").len(), 1, "a token is handled once");
    assert_eq!(calls(&script).len(), 2, "each reconciliation observed");
}

/// A new process (a restart, a new leader) has no memo of any object: its
/// first poll of an up-to-date object whose observe a page of a list route
/// can stand for reads nothing, and is left to the poll queue's next sweep
/// of pages, also when a watch brings it again meanwhile. A reconciliation
/// brought while a requeue of a read made waits observes as always, and so
/// does every first reconciliation of a kind observed otherwise.
#[tokio::test]
async fn a_new_process_leaves_its_first_poll_of_a_listed_object_to_the_pages() {
    let (api, ctx) = world();
    team(&api, "web", &[All], json!({}));
    let script = script(Some(Marked::Ours), &[]);
    script.lock().unwrap().listed = true;
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(calls(&script), [format!("observe {ID}")]);
    let restarted = || {
        let ctx = Arc::new(Context::new(api.client(), "c", Metrics::default()));
        ctx.polls.register(
            "team",
            |_: &str, _: &str| true,
            |_: &str, _: &_, _, _, _| {},
        );
        ctx
    };

    let ctx = restarted();
    let first = reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(first, Action::await_change(), "requeued in the poll queue");
    assert_eq!(calls(&script).len(), 1, "no read of its own");
    assert!(ctx.polls.is_scheduled("team", "ns/web"));
    assert!(
        !ctx.polls.has_memo("team", "ns/web"),
        "its queued poll is a first poll, no memo of a read"
    );
    // A watch brings it while its first poll waits (the caches fill):
    // it goes on waiting, still without a read.
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(calls(&script).len(), 1);
    assert!(ctx.polls.is_scheduled("team", "ns/web"));
    // Brought while a requeue of a read made waits, it observes.
    ctx.polls.cancel("team", "ns/web");
    assert!(ctx
        .polls
        .schedule("team", "ns/web", ctx.poll_tick, ctx.poll_tick));
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(calls(&script).len(), 2);

    script.lock().unwrap().listed = false;
    let ctx = restarted();
    reconcile::<LiteLLMTeam>(&api, &ctx, &script, "web")
        .await
        .unwrap();
    assert_eq!(calls(&script).len(), 3, "not listed: observed at once");
}
