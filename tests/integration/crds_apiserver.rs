//! The generated CRDs installed into the real API server harness: the
//! server itself accepts every object the examples render and every
//! manifest of the README and `docs/`, and rejects bad objects with the
//! rule's message.

use crate::support;

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};
use support::k8s;

fn api_for(client: &kube::Client, namespace: &str, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("litellm.m.crossplane.io", "v1alpha1", kind);
    let plural = format!("{}s", kind.to_lowercase());
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

async fn create(client: &kube::Client, namespace: &str, mut object: Value) -> Result<(), String> {
    object["metadata"]["namespace"] = json!(namespace);
    let kind = object["kind"].as_str().unwrap().to_string();
    let object: DynamicObject = serde_json::from_value(object).unwrap();
    api_for(client, namespace, &kind)
        .create(&PostParams::default(), &object)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The LiteLLM objects of each example's expected output, and of the
/// instances an example references (its `required.yaml`, what the platform
/// applies itself), by example.
fn example_objects() -> Vec<Vec<Value>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        let mut objects = Vec::new();
        for path in [dir.join("expected.yaml"), dir.join("required.yaml")] {
            if !path.exists() {
                continue;
            }
            let docs: Vec<Value> =
                serde_saphyr::from_multiple(&std::fs::read_to_string(&path).unwrap()).unwrap();
            objects.extend(docs.into_iter().filter(|d| {
                d["apiVersion"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("litellm.m.crossplane.io/"))
            }));
        }
        if !objects.is_empty() {
            out.push(objects);
        }
    }
    out
}

/// The Markdown files whose manifests are applied: `README.md` and every
/// page of `docs/`, in name order.
fn documentation_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    std::iter::once(root.join("README.md"))
        .chain(pages)
        .collect()
}

/// The LiteLLM objects of a Markdown file's YAML blocks, as written (blocks
/// inside list items are dedented first).
fn markdown_objects(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(indent) = line.find("```yaml") else {
            continue;
        };
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| l.trim() != "```")
            .map(|l| l.get(indent..).unwrap_or(""))
            .collect();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&block.join("\n")).unwrap_or_else(|e| {
            panic!(
                "{}: YAML block does not parse: {e}\n{}",
                path.display(),
                block.join("\n")
            )
        });
        out.extend(docs.into_iter().filter(|d| {
            d["apiVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with("litellm.m.crossplane.io/"))
        }));
    }
    out
}

/// The LiteLLM objects of the YAML blocks of the README and of `docs/`,
/// each with the file it comes from.
fn documentation_objects() -> Vec<(String, Value)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    documentation_files()
        .into_iter()
        .flat_map(|path| {
            let file = path.strip_prefix(root).unwrap().display().to_string();
            markdown_objects(&path)
                .into_iter()
                .map(move |object| (file.clone(), object))
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_documented_manifests_apply_as_written() {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let ns = k8s::namespace(&client, "readme").await;
    let objects = documentation_objects();
    assert!(
        objects
            .iter()
            .filter(|(file, _)| file == "README.md")
            .count()
            >= 3,
        "the README shows the LiteLLM kinds"
    );
    // Every kind's page shows it: each kind has a manifest somewhere.
    let kinds: std::collections::BTreeSet<&str> = objects
        .iter()
        .filter_map(|(_, o)| o["kind"].as_str())
        .collect();
    for kind in litellm_crossplane::api::MANAGED_KINDS
        .iter()
        .copied()
        .chain(["LiteLLMInstance"])
    {
        assert!(kinds.contains(kind), "no manifest of {kind} in the docs");
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, (file, mut object)) in objects.into_iter().enumerate() {
        // The documents' namespaces are the reader's; the test has its own.
        // Pages may show the same kind and name twice.
        let name = object["metadata"]["name"].clone();
        if !seen.insert((object["kind"].clone().to_string(), name.to_string())) {
            object["metadata"]["name"] = json!(format!("{}-{i}", name.as_str().unwrap()));
        }
        create(&client, &ns, object)
            .await
            .unwrap_or_else(|e| panic!("{file}: manifest {name} rejected: {e}"));
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_api_server_accepts_the_examples_and_rejects_bad_objects() {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let ns = k8s::namespace(&client, "crds").await;

    let examples = example_objects();
    assert!(
        examples.iter().map(Vec::len).sum::<usize>() >= 10,
        "examples render the LiteLLM kinds"
    );
    let kinds: std::collections::BTreeSet<&str> = examples
        .iter()
        .flatten()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    for kind in [
        "LiteLLMInstance",
        "LiteLLMTeam",
        "LiteLLMBudget",
        "LiteLLMVirtualKey",
        "LiteLLMModel",
        "LiteLLMUser",
        "LiteLLMMCPServer",
    ] {
        assert!(
            kinds.contains(kind),
            "no example renders a {kind}: {kinds:?}"
        );
    }
    // Each example in a namespace of its own: they share object names.
    for objects in examples {
        let example_ns = k8s::namespace(&client, "example").await;
        for object in objects {
            let name = object["metadata"]["name"].clone();
            create(&client, &example_ns, object)
                .await
                .unwrap_or_else(|e| panic!("{name} rejected: {e}"));
        }
    }

    let instance = |name: &str, spec: Value| {
        json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMInstance",
               "metadata": {"name": name}, "spec": spec})
    };
    let secret_ref = json!({"secretRef": {"name": "m", "key": "k"}});
    let credential = |name: &str, for_provider: Value| {
        json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMCredential",
               "metadata": {"name": name},
               "spec": {"instanceRef": {"name": "x"}, "forProvider": for_provider}})
    };
    let mcp_server = |name: &str, for_provider: Value| {
        json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMMCPServer",
               "metadata": {"name": name},
               "spec": {"instanceRef": {"name": "x"}, "forProvider": for_provider}})
    };
    let bad: Vec<(&str, Value, &str)> = vec![
        (
            "an MCP server at a file URL",
            mcp_server(
                "file-url",
                json!({"transport": "http", "url": "file:///etc/passwd"}),
            ),
            "spec.forProvider.url",
        ),
        (
            "an MCP server with an unknown transport",
            mcp_server(
                "websocket",
                json!({"transport": "websocket", "url": "https://h/"}),
            ),
            "spec.forProvider.transport",
        ),
        (
            "an MCP server name with a '-'",
            mcp_server(
                "dashed",
                json!({"transport": "http", "url": "https://h/", "serverName": "my-mcp"}),
            ),
            "spec.forProvider.serverName",
        ),
        (
            "a stdio MCP server with a URL",
            mcp_server(
                "stdio-url",
                json!({"transport": "stdio", "command": "npx", "url": "https://h/"}),
            ),
            litellm_crossplane::api::mcp_server::MCP_TRANSPORT_FIELDS,
        ),
        (
            "an MCP server token type without its Secret",
            mcp_server(
                "lone-auth",
                json!({"transport": "http", "url": "https://h/", "authType": "bearer_token"}),
            ),
            litellm_crossplane::api::mcp_server::MCP_AUTH_SECRET,
        ),
        (
            "endpoint while managed by default",
            instance(
                "bad-endpoint",
                json!({"workload": {"endpoint": "http://x:4000"}, "masterKey": {"autoGenerate": true}}),
            ),
            "workload.endpoint is only allowed when workload.managed is false",
        ),
        (
            "unmanaged without a master key Secret",
            instance(
                "bad-master-key",
                json!({"workload": {"managed": false}, "masterKey": {"autoGenerate": true}}),
            ),
            "masterKey.secretRef is required when workload.managed is false",
        ),
        (
            "no master key",
            instance("no-master-key", json!({})),
            "masterKey needs secretRef, or autoGenerate: true for a provisioned proxy",
        ),
        (
            "an endpoint that is not http(s)",
            instance(
                "bad-scheme",
                json!({"workload": {"managed": false, "endpoint": "ftp://x"}, "masterKey": secret_ref}),
            ),
            "spec.workload.endpoint",
        ),
        (
            "money that is not a decimal",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam", "metadata": {"name": "bad-money"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"maxBudget": "12x"}}}),
            "spec.forProvider.maxBudget",
        ),
        (
            "a 30x duration",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey", "metadata": {"name": "bad-duration"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"budgetDuration": "30x"}}}),
            "spec.forProvider.budgetDuration",
        ),
        (
            "a team with a parallel-request limit, which LiteLLM drops for teams",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam", "metadata": {"name": "bad-parallel"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"maxParallelRequests": 2}}}),
            litellm_crossplane::api::limits::TEAM_PARALLEL_REQUESTS,
        ),
        (
            "an unknown management policy",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMBudget", "metadata": {"name": "bad-policy"},
                   "spec": {"instanceRef": {"name": "x"}, "managementPolicies": ["Everything"], "forProvider": {}}}),
            "spec.managementPolicies[0]",
        ),
        (
            "a credential without values",
            credential("no-values", json!({"displayName": "x"})),
            litellm_crossplane::api::credential::CREDENTIAL_NEEDS_VALUES,
        ),
        (
            "a credential value given twice",
            credential(
                "twice",
                json!({"values": [{"name": "api_key", "secretKeyRef": {"name": "s", "key": "k"}}],
                       "plainValues": {"api_key": "x"}}),
            ),
            litellm_crossplane::api::credential::CREDENTIAL_VALUE_TWICE,
        ),
        (
            "a credential value from two Secrets",
            credential(
                "duplicate",
                json!({"values": [{"name": "api_key", "secretKeyRef": {"name": "s", "key": "k"}},
                                  {"name": "api_key", "secretKeyRef": {"name": "t", "key": "k"}}]}),
            ),
            "spec.forProvider.values[1]: Duplicate value",
        ),
        (
            "a user role LiteLLM does not give",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMUser", "metadata": {"name": "bad-role"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"userRole": "org_admin"}}}),
            "spec.forProvider.userRole",
        ),
        (
            "a team naming its organization by reference and by id",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMTeam", "metadata": {"name": "two-orgs"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {
                       "organizationRef": {"name": "acme"}, "organizationId": "acme"}}}),
            litellm_crossplane::api::team::TEAM_ORGANIZATION,
        ),
        (
            "an organization with an empty alias (LiteLLM requires one)",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMOrganization", "metadata": {"name": "no-alias"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"organizationAlias": ""}}}),
            "spec.forProvider.organizationAlias",
        ),
        (
            "a user with an empty models list, which LiteLLM ignores on update",
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMUser", "metadata": {"name": "no-models"},
                   "spec": {"instanceRef": {"name": "x"}, "forProvider": {"models": []}}}),
            "spec.forProvider.models",
        ),
    ];
    for (what, object, message) in bad {
        let err = create(&client, &ns, object)
            .await
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(err.contains(message), "{what}: {err}");
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_api_server_keeps_a_keys_duration_as_created() {
    let Some(client) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&client).await;
    let ns = k8s::namespace(&client, "crds-immutable").await;
    let key = json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMVirtualKey",
                     "metadata": {"name": "ci"},
                     "spec": {"instanceRef": {"name": "x"}, "forProvider": {"duration": "30d", "maxBudget": "1"}}});
    create(&client, &ns, key).await.unwrap();
    let keys = api_for(&client, &ns, "LiteLLMVirtualKey");
    let patch = |for_provider: Value| {
        let keys = keys.clone();
        async move {
            keys.patch(
                "ci",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&json!({"spec": {"forProvider": for_provider}})),
            )
            .await
        }
    };
    for change in [json!({"duration": "60d"}), json!({"duration": null})] {
        let err = patch(change.clone()).await.unwrap_err().to_string();
        assert!(
            err.contains(litellm_crossplane::api::key::DURATION_IMMUTABLE),
            "{change}: {err}"
        );
    }
    patch(json!({"maxBudget": "2"}))
        .await
        .expect("other fields still change");
}
