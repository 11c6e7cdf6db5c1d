//! Nothing is lost (docs/tenancy.md): the generated master key and salt key
//! of a provisioned `LiteLLMInstance` are never regenerated behind the
//! user's back and outlive the instance. Against the real Kubernetes API
//! server harness; where a proxy must run, the test kubelet
//! (`tests/support/kubelet.rs`) runs the rendered Deployment with the real
//! LiteLLM proxy, and the tests play the garbage collector (deleting what an
//! owner reference ties to a deleted instance).
//!
//! The instance's status is read as plain JSON, and the conditions this
//! behaviour adds are named by their strings, so the file states the
//! contract without leaning on the types that implement it.

use crate::support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service, ServiceAccount};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::Resource;
use litellm_crossplane::api::instance::LiteLLMInstance;
use litellm_crossplane::provider::instance::{condition_type, reason};
use serde_json::{json, Value};
use support::instance::{condition, prepare, reason_of, secret_string, start, Running};
use support::kubelet::Kubelet;

const GENERATED_FOR: &str = "litellm.crossplane.io/generated-for";
const SALT_KEY_MISSING: &str = "SaltKeyMissing";
const MASTER_KEY_MISSING: &str = "MasterKeyMissing";

fn generated() -> Value {
    json!({"masterKey": {"autoGenerate": true}})
}

/// The instance exactly as the API server stores it.
async fn stored(run: &Running, name: &str) -> Value {
    let resource = ApiResource::erase::<LiteLLMInstance>(&());
    let api: Api<DynamicObject> =
        Api::namespaced_with(run.client.clone(), &run.namespace, &resource);
    serde_json::to_value(api.get(name).await.expect("instance readable")).unwrap()
}

/// Waits until the stored instance records the generated keys, up to 30 s,
/// and returns its status.
async fn recorded(run: &Running, name: &str) -> Value {
    for _ in 0..300 {
        let status = stored(run, name).await["status"].clone();
        let keys = &status["generatedKeys"];
        if keys["masterKey"].is_object() && keys["saltKey"]["fingerprint"].is_string() {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the keys were not recorded: {:#}",
        stored(run, name).await["status"]
    );
}

/// Waits (up to 7 minutes: a LiteLLM proxy start is CPU bound) until the
/// test kubelet runs a ready replica of the instance's Deployment.
async fn one_ready_replica(run: &Running, name: &str) {
    for _ in 0..840 {
        support::authz::assert_no_denials();
        let instance = run.instances().get(name).await.unwrap();
        if instance.status.as_ref().is_some_and(|s| s.ready) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the proxy of {name} never became ready");
}

/// The stored object as a restore from a backup recreates it: the same
/// metadata and data, without what the API server assigns.
fn backup_of(secret: &Secret) -> Secret {
    let mut backup = secret.clone();
    let meta = &mut backup.metadata;
    meta.resource_version = None;
    meta.uid = None;
    meta.creation_timestamp = None;
    meta.managed_fields = None;
    backup
}

fn pod_template(deployment: &Deployment) -> Value {
    serde_json::to_value(&deployment.spec.template).unwrap()
}

/// The key values never reach the instance (status, conditions, messages).
async fn assert_no_key_in_instance(run: &Running, name: &str, values: &[&str]) {
    let text = stored(run, name).await.to_string();
    for value in values {
        assert!(
            !text.contains(value),
            "a key value is in the instance: {text}"
        );
    }
}

/// Deletes an instance (its controller running: the instance's finalizer
/// waits for it) and then plays the garbage collector: every object whose
/// owner reference names the deleted instance's uid goes, everything else
/// stays. Returns what the deletion took, controller and collector
/// together, as `Kind/name`: the owned objects of before that are gone.
async fn delete_instance_and_collect_garbage(run: &Running, name: &str) -> Vec<String> {
    let uid = run
        .instances()
        .get(name)
        .await
        .unwrap()
        .metadata
        .uid
        .unwrap();
    let before = owned_objects(run, &uid).await;
    assert!(!before.is_empty(), "the instance owns its workload");
    run.instances()
        .delete(name, &DeleteParams::default())
        .await
        .expect("instance deleted");
    for _ in 0..200 {
        if run.instances().get_opt(name).await.unwrap().is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(run.instances().get_opt(name).await.unwrap().is_none());

    for (kind, object_name) in owned_objects(run, &uid).await {
        let params = DeleteParams::background();
        let deleted = match kind.as_str() {
            "Deployment" => run
                .api::<Deployment>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            "Service" => run
                .api::<Service>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            "ConfigMap" => run
                .api::<ConfigMap>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            "ServiceAccount" => run
                .api::<ServiceAccount>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            "Secret" => run
                .api::<Secret>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            "Job" => run
                .api::<Job>()
                .delete(&object_name, &params)
                .await
                .map(|_| ()),
            other => panic!("unexpected kind {other}"),
        };
        deleted.expect("dependent deleted");
    }
    let after = owned_objects(run, &uid).await;
    assert!(after.is_empty(), "{after:?}");
    before
        .into_iter()
        .map(|(kind, object_name)| format!("{kind}/{object_name}"))
        .collect()
}

/// The objects of the run's namespace with an owner reference to `uid`.
async fn owned_objects(run: &Running, uid: &str) -> Vec<(String, String)> {
    async fn collect<K>(run: &Running, uid: &str, found: &mut Vec<(String, String)>)
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
            + Clone
            + serde::de::DeserializeOwned
            + std::fmt::Debug,
    {
        let api = run.api::<K>();
        for object in api.list(&ListParams::default()).await.unwrap().items {
            let owned = object
                .meta()
                .owner_references
                .iter()
                .flatten()
                .any(|owner| owner.uid == uid);
            if owned {
                found.push((
                    K::kind(&()).into_owned(),
                    object.meta().name.clone().unwrap(),
                ));
            }
        }
    }
    let mut found = Vec::new();
    collect::<Deployment>(run, uid, &mut found).await;
    collect::<Service>(run, uid, &mut found).await;
    collect::<ConfigMap>(run, uid, &mut found).await;
    collect::<ServiceAccount>(run, uid, &mut found).await;
    collect::<Secret>(run, uid, &mut found).await;
    collect::<Job>(run, uid, &mut found).await;
    found
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_salt_key_lost_after_the_first_run_is_reported_never_regenerated_and_no_pod_rolls() {
    let Some(run) = start("loss-salt").await else {
        return;
    };
    let Some(_kubelet) = Kubelet::start(run.client.clone(), &run.namespace) else {
        return;
    };
    run.create("gw", generated()).await;
    run.wait_for_object::<Deployment>("gw").await;
    one_ready_replica(&run, "gw").await;
    // The status that says the instance has run (checked further down, so
    // the behaviour is what a regression trips over first).
    let ran = stored(&run, "gw").await["status"].clone();
    let salt = run.api::<Secret>().get("gw-salt-key").await.unwrap();
    let salt_value = secret_string(&salt, "LITELLM_SALT_KEY");
    let master = run.api::<Secret>().get("gw-master-key").await.unwrap();
    let master_value = secret_string(&master, "LITELLM_MASTER_KEY");
    let deployment = settled_deployment(&run, "gw").await;

    // Deleted by mistake.
    run.api::<Secret>()
        .delete("gw-salt-key", &DeleteParams::default())
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| condition(i, SALT_KEY_MISSING).is_some())
        .await;
    assert_eq!(
        reason_of(&instance, SALT_KEY_MISSING),
        ("True".into(), "SecretNotFound".into())
    );
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), SALT_KEY_MISSING.into())
    );
    assert!(!instance.status.as_ref().unwrap().ready);
    let ready = condition(&instance, condition_type::READY)
        .unwrap()
        .message
        .clone()
        .unwrap();
    assert!(
        ready.contains("Secret gw-salt-key")
            && ready.contains("restore")
            && ready.contains("from a backup"),
        "{ready}"
    );
    // Several more rounds: a late regeneration or Deployment write would show.
    run.reconciled_again(4).await;
    assert!(
        run.api::<Secret>()
            .get_opt("gw-salt-key")
            .await
            .unwrap()
            .is_none(),
        "a new salt key Secret was created"
    );
    let held = run.api::<Deployment>().get("gw").await.unwrap();
    assert_eq!(pod_template(&held), pod_template(&deployment));
    assert_eq!(
        held.metadata.resource_version, deployment.metadata.resource_version,
        "the Deployment was not written at all"
    );
    let fingerprint = &ran["generatedKeys"]["saltKey"]["fingerprint"];
    assert!(
        fingerprint
            .as_str()
            .is_some_and(|f| f.starts_with("sha256:")),
        "the first run was recorded: {ran:#}"
    );
    assert_eq!(
        &stored(&run, "gw").await["status"]["generatedKeys"]["saltKey"]["fingerprint"],
        fingerprint,
        "the record survives the loss"
    );
    assert_no_key_in_instance(&run, "gw", &[&salt_value, &master_value]).await;

    // Restored from a backup: the same key, ready again.
    run.api::<Secret>()
        .create(&PostParams::default(), &backup_of(&salt))
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| {
            condition(i, SALT_KEY_MISSING).is_none() && i.status.as_ref().is_some_and(|s| s.ready)
        })
        .await;
    assert!(condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none());
    // A restored Secret is a new object: the pods roll once onto it (its
    // version is part of the pod template's hash), possibly after the
    // instance reads ready again. The Deployment as it settles is the
    // baseline for "no roll" below.
    let restored = settled_deployment(&run, "gw").await;

    // A different value is not the key the stored credentials need.
    run.api::<Secret>()
        .patch(
            "gw-salt-key",
            &PatchParams::default(),
            &Patch::Merge(&json!({"stringData": {"LITELLM_SALT_KEY": "sk-some-other-salt"}})),
        )
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| condition(i, SALT_KEY_MISSING).is_some())
        .await;
    assert_eq!(
        reason_of(&instance, SALT_KEY_MISSING),
        ("True".into(), "ValueChanged".into())
    );
    // The key removed from the Secret.
    run.api::<Secret>()
        .patch(
            "gw-salt-key",
            &PatchParams::default(),
            &Patch::Merge(&json!({"data": {"LITELLM_SALT_KEY": null}})),
        )
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| {
            condition(i, SALT_KEY_MISSING).is_some_and(|c| c.reason == "KeyNotFound")
        })
        .await;
    assert!(!instance.status.as_ref().unwrap().ready);
    run.reconciled_again(3).await;
    let held = run.api::<Deployment>().get("gw").await.unwrap();
    assert_eq!(pod_template(&held), pod_template(&restored));
    assert_eq!(
        held.metadata.resource_version,
        restored.metadata.resource_version
    );
    let secret = run.api::<Secret>().get("gw-salt-key").await.unwrap();
    assert!(
        secret
            .data
            .as_ref()
            .is_none_or(|d| !d.contains_key("LITELLM_SALT_KEY")),
        "nothing was written into the Secret"
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_master_key_lost_after_the_first_run_is_reported_and_never_regenerated() {
    let Some(run) = start("loss-master").await else {
        return;
    };
    run.create("gw", generated()).await;
    run.wait_for_object::<Deployment>("gw").await;
    run.observed("gw").await;
    // The baseline is the Deployment once the provider is done with it.
    let deployment = settled_deployment(&run, "gw").await;

    run.api::<Secret>()
        .delete("gw-master-key", &DeleteParams::default())
        .await
        .unwrap();
    let instance = run
        .wait_for("gw", |i| condition(i, MASTER_KEY_MISSING).is_some())
        .await;
    assert_eq!(
        reason_of(&instance, MASTER_KEY_MISSING),
        ("True".into(), "SecretNotFound".into())
    );
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), MASTER_KEY_MISSING.into())
    );
    run.reconciled_again(3).await;
    assert!(
        run.api::<Secret>()
            .get_opt("gw-master-key")
            .await
            .unwrap()
            .is_none(),
        "a new master key Secret was created"
    );
    let held = run.api::<Deployment>().get("gw").await.unwrap();
    assert_eq!(
        held.metadata.resource_version,
        deployment.metadata.resource_version
    );
    let status = recorded(&run, "gw").await;
    assert!(
        status["generatedKeys"]["masterKey"]["fingerprint"].is_null(),
        "only the use of a master key is recorded: {status:#}"
    );

    // Rotating on purpose: a new value in a Secret marked for the instance.
    let rotated = "sk-rotated-on-purpose-0123456789abcdef0123456789";
    run.create_object::<Secret>(json!({
        "metadata": {
            "name": "gw-master-key",
            "annotations": {GENERATED_FOR: format!("{}/gw", run.namespace)},
        },
        "stringData": {"LITELLM_MASTER_KEY": rotated},
    }))
    .await;
    let instance = run
        .wait_for("gw", |i| condition(i, MASTER_KEY_MISSING).is_none())
        .await;
    assert!(condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none());
    let rolled = run.api::<Deployment>().get("gw").await.unwrap();
    assert_ne!(
        pod_template(&rolled),
        pod_template(&deployment),
        "the pods roll onto the rotated key"
    );
    let secret = run.api::<Secret>().get("gw-master-key").await.unwrap();
    assert_eq!(secret_string(&secret, "LITELLM_MASTER_KEY"), rotated);
    assert_no_key_in_instance(&run, "gw", &[rotated]).await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn an_instance_pruned_and_recreated_under_its_name_reuses_its_keys() {
    let Some(mut run) = start("loss-recreate").await else {
        return;
    };
    run.create("gw", generated()).await;
    run.wait_for_object::<Deployment>("gw").await;
    run.observed("gw").await;
    let status = stored(&run, "gw").await["status"].clone();
    let master = run.api::<Secret>().get("gw-master-key").await.unwrap();
    let salt = run.api::<Secret>().get("gw-salt-key").await.unwrap();

    // A GitOps prune, then the garbage collector.
    let deleted = delete_instance_and_collect_garbage(&run, "gw").await;
    for dependent in ["Deployment/gw", "Service/gw", "ConfigMap/gw"] {
        assert!(
            deleted.contains(&dependent.to_string()),
            "{dependent} in {deleted:?}"
        );
    }
    assert!(
        !deleted.iter().any(|d| d.ends_with("-key")),
        "the generated keys are nobody's dependents: {deleted:?}"
    );
    for name in ["gw-master-key", "gw-salt-key"] {
        assert!(
            run.api::<Secret>().get_opt(name).await.unwrap().is_some(),
            "{name} outlives the instance"
        );
    }

    // The same manifest applied again.
    run.resume();
    let created = run.create("gw", generated()).await;
    let new_uid = created.metadata.uid.clone().unwrap();
    let deployment = run.wait_for_object::<Deployment>("gw").await;
    assert_eq!(
        deployment.metadata.owner_references.as_ref().unwrap()[0].uid,
        new_uid
    );
    let instance = run.observed("gw").await;
    for absent in [
        condition_type::WORKLOAD_CONFLICT,
        SALT_KEY_MISSING,
        MASTER_KEY_MISSING,
    ] {
        assert!(
            condition(&instance, absent).is_none(),
            "{absent}: {:#?}",
            instance.status
        );
    }
    assert_eq!(
        reason_of(&instance, condition_type::READY),
        ("False".into(), reason::DEPLOYMENT_NOT_READY.into())
    );
    let master_after = run.api::<Secret>().get("gw-master-key").await.unwrap();
    let salt_after = run.api::<Secret>().get("gw-salt-key").await.unwrap();
    assert_eq!(master_after.data, master.data, "the same master key");
    assert_eq!(salt_after.data, salt.data, "the same salt key");
    assert_eq!(
        (
            master_after.metadata.resource_version,
            salt_after.metadata.resource_version
        ),
        (
            master.metadata.resource_version.clone(),
            salt.metadata.resource_version.clone()
        ),
        "the Secrets were not rewritten"
    );
    let again = recorded(&run, "gw").await;
    assert_eq!(
        again["generatedKeys"]["saltKey"]["fingerprint"],
        status["generatedKeys"]["saltKey"]["fingerprint"],
        "the same key, recorded again by the new instance"
    );
    assert_no_key_in_instance(
        &run,
        "gw",
        &[
            &secret_string(&master, "LITELLM_MASTER_KEY"),
            &secret_string(&salt, "LITELLM_SALT_KEY"),
        ],
    )
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_salt_key_secret_not_marked_for_the_instance_is_never_adopted_or_used() {
    let Some(run) = start("loss-foreign").await else {
        return;
    };
    // Unmarked, and marked for another instance.
    run.create_object::<Secret>(json!({
        "metadata": {"name": "gw-salt-key"},
        "stringData": {"LITELLM_SALT_KEY": "sk-foreign-salt"},
    }))
    .await;
    run.create_object::<Secret>(json!({
        "metadata": {
            "name": "other-salt-key",
            "annotations": {GENERATED_FOR: format!("{}/someone-else", run.namespace)},
        },
        "stringData": {"LITELLM_SALT_KEY": "sk-someone-elses-salt"},
    }))
    .await;
    let before = (
        serde_json::to_value(run.api::<Secret>().get("gw-salt-key").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Secret>().get("other-salt-key").await.unwrap()).unwrap(),
    );

    run.create("gw", generated()).await;
    run.create("other", generated()).await;
    for (name, secret) in [
        ("gw", "Secret gw-salt-key"),
        ("other", "Secret other-salt-key"),
    ] {
        let instance = run
            .wait_for(name, |i| {
                condition(i, condition_type::WORKLOAD_CONFLICT).is_some()
            })
            .await;
        assert_eq!(
            reason_of(&instance, condition_type::WORKLOAD_CONFLICT),
            ("True".into(), reason::OBJECT_NOT_OWNED.into())
        );
        let message = condition(&instance, condition_type::WORKLOAD_CONFLICT)
            .unwrap()
            .message
            .clone()
            .unwrap();
        assert!(message.contains(secret), "{message}");
        // Never run with it: a conflict, not a loss.
        assert!(condition(&instance, SALT_KEY_MISSING).is_none());
    }
    run.reconciled_again(3).await;
    let after = (
        serde_json::to_value(run.api::<Secret>().get("gw-salt-key").await.unwrap()).unwrap(),
        serde_json::to_value(run.api::<Secret>().get("other-salt-key").await.unwrap()).unwrap(),
    );
    assert_eq!(after, before, "left byte-identical");
    // Not used either: no proxy starts with someone else's salt key.
    assert!(run.names::<Deployment>().await.is_empty());
    for name in ["gw", "other"] {
        let status = stored(&run, name).await["status"].clone();
        assert!(status["generatedKeys"]["saltKey"].is_null(), "{status:#}");
        let ready = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .unwrap()
            .clone();
        assert_eq!(ready["status"], "False");
        assert!(
            ready["message"]
                .as_str()
                .unwrap()
                .contains("is not this instance's"),
            "{ready}"
        );
    }
    assert_no_key_in_instance(&run, "gw", &["sk-foreign-salt"]).await;

    // Moved aside: the instance generates its own.
    run.api::<Secret>()
        .delete("gw-salt-key", &DeleteParams::default())
        .await
        .unwrap();
    run.wait_for_object::<Deployment>("gw").await;
    let instance = run
        .wait_for("gw", |i| {
            condition(i, condition_type::WORKLOAD_CONFLICT).is_none()
        })
        .await;
    assert!(condition(&instance, SALT_KEY_MISSING).is_none());
    let own = run.api::<Secret>().get("gw-salt-key").await.unwrap();
    assert_ne!(secret_string(&own, "LITELLM_SALT_KEY"), "sk-foreign-salt");
    assert_eq!(
        own.metadata.annotations.unwrap()[GENERATED_FOR],
        format!("{}/gw", run.namespace)
    );
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn keys_generated_by_an_earlier_release_are_kept_and_outlive_the_instance_from_now_on() {
    let Some(mut run) = prepare("loss-upgrade").await else {
        return;
    };
    // What an earlier release left: the keys owned by the instance.
    let instance = run.create("gw", generated()).await;
    let owner = instance.controller_owner_ref(&()).unwrap();
    let labels = json!({
        "app.kubernetes.io/name": "litellm",
        "app.kubernetes.io/instance": "gw",
        "app.kubernetes.io/managed-by": "provider-litellm",
    });
    let master_value = "sk-legacy-master-0123456789abcdef0123456789abcdef";
    let salt_value = "sk-legacy-salt-0123456789abcdef0123456789abcdef";
    for (name, key, value) in [
        ("gw-master-key", "LITELLM_MASTER_KEY", master_value),
        ("gw-salt-key", "LITELLM_SALT_KEY", salt_value),
    ] {
        run.create_object::<Secret>(json!({
            "metadata": {"name": name, "labels": labels, "ownerReferences": [owner]},
            "stringData": {key: value},
        }))
        .await;
    }

    run.resume();
    run.wait_for_object::<Deployment>("gw").await;
    let instance = run.observed("gw").await;
    assert!(
        condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none(),
        "{:#?}",
        instance.status
    );
    for (name, key, value) in [
        ("gw-master-key", "LITELLM_MASTER_KEY", master_value),
        ("gw-salt-key", "LITELLM_SALT_KEY", salt_value),
    ] {
        let mut migrated = None;
        for _ in 0..100 {
            let secret = run.api::<Secret>().get(name).await.unwrap();
            if secret.metadata.owner_references.is_none() {
                migrated = Some(secret);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let secret = migrated.unwrap_or_else(|| panic!("{name} still has its owner reference"));
        assert_eq!(secret_string(&secret, key), value, "{name} keeps its key");
        assert_eq!(
            secret.metadata.annotations.as_ref().unwrap()[GENERATED_FOR],
            format!("{}/gw", run.namespace)
        );
    }
    recorded(&run, "gw").await;
    assert_no_key_in_instance(&run, "gw", &[master_value, salt_value]).await;

    // And so they survive a prune like any generated key now.
    let deleted = delete_instance_and_collect_garbage(&run, "gw").await;
    assert!(!deleted.iter().any(|d| d.ends_with("-key")), "{deleted:?}");
    run.resume();
    run.create("gw", generated()).await;
    run.wait_for_object::<Deployment>("gw").await;
    run.observed("gw").await;
    let salt = run.api::<Secret>().get("gw-salt-key").await.unwrap();
    assert_eq!(secret_string(&salt, "LITELLM_SALT_KEY"), salt_value);
    let instance = run.observed("gw").await;
    assert!(condition(&instance, condition_type::WORKLOAD_CONFLICT).is_none());
}

/// The Deployment `name` once its rollout is done (every replica of the
/// current pod template ready, as the test kubelet reports it, if one runs)
/// and it has not changed for three seconds.
async fn settled_deployment(run: &Running, name: &str) -> Deployment {
    let rolled_out = |d: &Deployment| {
        let Some(status) = d
            .status
            .as_ref()
            .filter(|s| s.observed_generation.is_some())
        else {
            return true; // no kubelet runs it
        };
        let wanted = d.spec.replicas.unwrap_or(1);
        status.observed_generation == d.metadata.generation
            && status.updated_replicas == Some(wanted)
            && status.ready_replicas == Some(wanted)
            && status.replicas == Some(wanted)
    };
    let mut last = run.api::<Deployment>().get(name).await.unwrap();
    for _ in 0..140 {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let now = run.api::<Deployment>().get(name).await.unwrap();
        if now.metadata.resource_version == last.metadata.resource_version && rolled_out(&now) {
            return now;
        }
        last = now;
    }
    panic!("Deployment {name} kept changing for 7 minutes");
}
