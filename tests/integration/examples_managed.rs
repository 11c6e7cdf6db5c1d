//! `examples/provider/managed/`: a minimal manifest for every kind, as a reader
//! copies it. Each is taken by the API server (the instances, whose
//! endpoint and database are the reader's, by a server-side dry run), and
//! the objects a tenant applies are reconciled by the provider against the
//! real proxy: Ready, or for the organization (LiteLLM Enterprise) the
//! licence named in `Synced=False`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use serde_json::{json, Value};

use crate::support;
use support::crd_guard::CrdGuard;
use support::provider::{world, INSTANCE};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/provider/managed")
}

/// Every document of every file, with its file name.
fn documents() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("examples/provider/managed exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            docs.into_iter()
                .filter(|d| !d.is_null())
                .map(move |d| (file.clone(), d))
        })
        .collect()
}

#[test]
fn there_is_an_example_of_every_kind() {
    let kinds: BTreeSet<String> = documents()
        .iter()
        .filter_map(|(_, d)| d["kind"].as_str().map(str::to_owned))
        .filter(|k| k.starts_with("LiteLLM"))
        .collect();
    assert_eq!(kinds, support::provider::every_kind());
}

fn resource(kind: &str) -> ApiResource {
    if kind == "Secret" {
        return ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
    }
    ApiResource {
        group: litellm_crossplane::api::GROUP.into(),
        version: litellm_crossplane::api::VERSION.into(),
        api_version: litellm_crossplane::api::API_VERSION.into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    }
}

fn condition<'a>(object: &'a DynamicObject, type_: &str) -> Option<&'a Value> {
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn every_managed_example_is_taken_and_reconciled() {
    let Some(world) = world("ex-managed").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("ex-managed-tenant").await;
    // The instances' files go, as the reader's namespace `litellm` has
    // them, to a namespace of their own (the world's holds its instance).
    let platform = support::k8s::namespace(&world.kube, "ex-managed-platform").await;
    let mut reconciled = Vec::new();
    for (file, mut doc) in documents() {
        let kind = doc["kind"].as_str().unwrap().to_owned();
        let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
        // The reader's namespaces are the test's own; so are addresses that
        // must be unique across the proxy.
        let namespace = match doc["metadata"]["namespace"].as_str() {
            Some("litellm") if file.starts_with("instance-") => platform.clone(),
            Some("litellm") => world.namespace.clone(),
            Some("team-ml") => tenant.namespace.clone(),
            other => panic!("{file}: {kind} {name} in namespace {other:?}"),
        };
        let text = serde_json::to_string(&doc)
            .unwrap()
            .replace("team-ml/", &format!("{}/", tenant.namespace))
            .replace("@example.com", &format!("@{}.example", tenant.namespace))
            // The platform's model names (fallback.yaml) are the proxy's.
            .replace("chat-", &format!("chat-{}-", tenant.namespace));
        doc = serde_json::from_str(&text).unwrap();
        doc["metadata"]["namespace"] = json!(namespace);
        let api: Api<DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &namespace, &resource(&kind));
        let object: DynamicObject = serde_json::from_value(doc.clone()).unwrap();
        if file.starts_with("instance-") {
            // The reader's proxy, master key and database: taken, not
            // reconciled (no instance controller runs here).
            api.create(&PostParams::default(), &object)
                .await
                .unwrap_or_else(|e| panic!("{file}: {kind} {name}: {e}"));
            continue;
        }
        if kind.starts_with("LiteLLM") {
            doc["spec"]["instanceRef"] = json!({"name": INSTANCE, "namespace": world.namespace});
            doc["metadata"]["annotations"] = json!({"crossplane.io/poll-interval": "2s"});
            if kind == "LiteLLMTag" {
                // A tag's name is the proxy's, not the namespace's.
                doc["metadata"]["annotations"]["crossplane.io/external-name"] =
                    json!(format!("{name}-{}", support::k8s::unique_suffix()));
            }
            let object: DynamicObject = serde_json::from_value(doc).unwrap();
            api.create(&PostParams::default(), &object)
                .await
                .unwrap_or_else(|e| panic!("{file}: {kind} {name}: {e}"));
            reconciled.push((file, kind, name, namespace));
        } else {
            api.patch(
                &name,
                &PatchParams::apply("litellm-crossplane-tests").force(),
                &Patch::Apply(&object),
            )
            .await
            .unwrap_or_else(|e| panic!("{file}: {kind} {name}: {e}"));
        }
    }
    // Every managed kind is reconciled (the instances are only taken).
    let mut kinds: BTreeSet<String> = reconciled.iter().map(|(_, k, _, _)| k.clone()).collect();
    kinds.insert("LiteLLMInstance".into());
    assert_eq!(kinds, support::provider::every_kind(), "{reconciled:?}");
    for (file, kind, name, namespace) in reconciled {
        let api: Api<DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &namespace, &resource(&kind));
        let what = format!("{file}: {kind} {name}");
        support::provider::eventually(&what, || async {
            let object = api.get(&name).await.ok()?;
            let ready = condition(&object, "Ready");
            let synced = condition(&object, "Synced");
            if kind == "LiteLLMOrganization" {
                // The open-source proxy serves no organizations.
                let message = synced?["message"].as_str()?;
                return (synced?["status"] == "False" && message.contains("Enterprise licence"))
                    .then_some(());
            }
            (ready?["status"] == "True" && synced?["status"] == "True").then_some(())
        })
        .await;
    }
    // The key's Secret holds a key that works on the proxy.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> =
        Api::namespaced(world.kube.clone(), &tenant.namespace);
    let secret = secrets.get("ci-key").await.expect("the key's Secret");
    let data = secret.data.expect("data");
    let key = String::from_utf8(data["key"].0.clone()).unwrap();
    let status = support::provider::key_accepted_at(&world.url, &key).await;
    assert!(
        status.is_success(),
        "the example key authenticates: {status}"
    );
}
