//! `LiteLLMMCPServer` and `objectPermission` end to end, against the real
//! Kubernetes API server and the real LiteLLM proxy (docs/tenancy.md,
//! docs/mcp-servers.md): a server whose token comes from a Secret reaches LiteLLM with the
//! ownership marker in `mcp_info`, a rotated token is written again, drift
//! made in LiteLLM is corrected, a team naming the server by
//! `mcpServerRefs` gets its id, the server's deletion waits for that team,
//! imports follow the ownership rules, tenants are refused what would
//! reach beyond their namespace, and the token never shows in status,
//! events or the provider's logs.

use crate::support;

use kube::api::{Api, DeleteParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMMCPServer, LiteLLMTeam};
use litellm_crossplane::litellm::{McpServer, McpServerRequest};
use serde_json::{json, Map, Value};
use support::crd_guard::CrdGuard;
use support::k8s;
use support::logs::{logged_world, Logs};
use support::provider::{
    condition, eventually, is, manifest, wait_for, wait_gone, world, write_secret, World, CLUSTER,
};

/// `forProvider` of a streamable-HTTP server with a bearer token from the
/// Secret `secret`.
fn github(secret: &str) -> Value {
    json!({"forProvider": {
        "transport": "http",
        "url": "http://127.0.0.1:9/mcp",
        "description": "GitHub e2e",
        "authType": "bearer_token",
        "authSecretRef": {"name": secret, "key": "token"},
        "allowedTools": ["search", "read"],
        "mcpInfo": {"docs": "https://docs.example"},
    }})
}

async fn live(world: &World, id: &str) -> Option<McpServer> {
    world.litellm.mcp_server_get(id).await.expect("server read")
}

fn fingerprint(server: &LiteLLMMCPServer) -> Option<String> {
    serde_json::to_value(&server.status).unwrap()["atProvider"]["secretFingerprints"]["auth_value"]
        .as_str()
        .map(str::to_owned)
}

async fn ready<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> K {
    wait_for(api, name, "Ready and Synced", |o| {
        is(o, "Ready", "True") && is(o, "Synced", "True")
    })
    .await
}

async fn refused<K: litellm_crossplane::provider::managed::contract::ManagedKind>(
    api: &Api<K>,
    name: &str,
) -> String {
    let object = wait_for(api, name, "Synced=False", |o| is(o, "Synced", "False")).await;
    condition(&object, "Synced").unwrap().message.unwrap()
}

/// No value of `secrets` is in a status of `namespace`'s servers, in its
/// events, or in what the provider logged.
async fn assert_nowhere(world: &World, logs: &Logs, namespace: &str, secrets: &[&str]) {
    let servers: Api<LiteLLMMCPServer> = Api::namespaced(world.kube.clone(), namespace);
    let statuses: Vec<Value> = servers
        .list(&Default::default())
        .await
        .unwrap()
        .iter()
        .map(|s| serde_json::to_value(&s.status).unwrap())
        .collect();
    let statuses = serde_json::to_string(&statuses).unwrap();
    let events =
        serde_json::to_string(&support::provider::events(&world.kube, namespace).await).unwrap();
    let logs = logs.text();
    assert!(
        logs.contains("litellm admin request"),
        "the logs are captured"
    );
    for secret in secrets {
        assert!(!statuses.contains(secret), "a secret in status: {statuses}");
        assert!(!events.contains(secret), "a secret in an event: {events}");
        assert!(!logs.contains(secret), "a secret in the logs");
    }
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_server_from_a_secret_is_created_rotated_corrected_used_by_a_team_and_deleted_after_it() {
    let Some((world, logs, _crds)) = logged_world("pmcp-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let first = format!("ghp-{}-first", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "github", json!({"token": first})).await;
    let servers = world
        .create(&manifest::<LiteLLMMCPServer>(
            "LiteLLMMCPServer",
            "github",
            json!({}),
            github("github"),
        ))
        .await;
    let created = ready(&servers, "github").await;
    let id = created.annotations()[EXTERNAL_NAME].clone();
    assert_eq!(id, format!("{ns}.github"));
    let stored = live(&world, &id).await.expect("created in LiteLLM");
    assert_eq!(stored.server_name, Some(id.replace('-', "_")));
    assert_eq!(stored.auth_type.as_deref(), Some("bearer_token"));
    assert_eq!(stored.allowed_tools, ["search", "read"]);
    let info = stored.stored_info().unwrap();
    assert_eq!(
        info["crossplane_owner"],
        json!({"cluster": CLUSTER, "namespace": ns, "name": "github",
               "uid": created.metadata.uid.clone().unwrap()})
    );
    assert_eq!(info["docs"], "https://docs.example");
    let first_fingerprint = fingerprint(&created).expect("a fingerprint");

    // A new token in the Secret is written at the next poll.
    let second = format!("ghp-{}-second", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "github", json!({"token": second})).await;
    wait_for(&servers, "github", "the new fingerprint", |s| {
        fingerprint(s).is_some_and(|f| f != first_fingerprint) && is(s, "Synced", "True")
    })
    .await;

    // Drift made in LiteLLM (another URL, every tool, no marker) is
    // corrected.
    let drift = McpServerRequest {
        server_id: id.clone(),
        server_name: stored.server_name.clone(),
        transport: "http".into(),
        url: Some("https://elsewhere.example/mcp".into()),
        mcp_info: Map::new(),
        // Opened to every key, as LiteLLM's UI can: drift, and closed again.
        allow_all_keys: true,
        ..McpServerRequest::default()
    };
    world.litellm.mcp_server_update(&drift).await.unwrap();
    eventually("the drift corrected", || async {
        let server = live(&world, &id).await?;
        let fixed = server.url.as_deref() == Some("http://127.0.0.1:9/mcp")
            && !server.allow_all_keys
            && server.allowed_tools.len() == 2
            && server.auth_type.as_deref() == Some("bearer_token")
            && server.stored_info()?.contains_key("crossplane_owner");
        fixed.then_some(())
    })
    .await;

    // A team naming the server by reference gets its id in LiteLLM.
    let teams = world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"objectPermission": {
                "mcpServerRefs": [{"name": "github"}],
                "mcpAccessGroups": ["dev"],
            }}}),
        ))
        .await;
    let team = ready(&teams, "web").await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let permission = world
        .team_info(&team_id)
        .await
        .unwrap()
        .object_permission
        .expect("an object permission");
    assert_eq!(permission.mcp_servers, [id.clone()]);
    assert_eq!(permission.mcp_access_groups, ["dev"]);
    // Removed in the UI: put back.
    world
        .litellm
        .team_update(&litellm_crossplane::litellm::TeamRequest {
            team_id: team_id.clone(),
            object_permission: Some(Default::default()),
            ..Default::default()
        })
        .await
        .unwrap();
    eventually("the team's servers put back", || async {
        let info = world.team_info(&team_id).await?;
        (info.object_permission?.mcp_servers == [id.clone()]).then_some(())
    })
    .await;

    // The server's deletion waits for the team that names it.
    servers
        .delete("github", &DeleteParams::default())
        .await
        .unwrap();
    let waiting = wait_for(&servers, "github", "waiting for the team", |s| {
        condition(s, "Ready")
            .and_then(|c| c.message)
            .is_some_and(|m| m.contains("waiting for") && m.contains("LiteLLMTeam web"))
    })
    .await;
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(live(&world, &id).await.is_some(), "still in LiteLLM");
    teams.delete("web", &DeleteParams::default()).await.unwrap();
    wait_gone(&teams, "web").await;
    wait_gone(&servers, "github").await;
    assert!(live(&world, &id).await.is_none(), "deleted from LiteLLM");
    assert_nowhere(&world, &logs, &ns, &[&first, &second]).await;
}

/// A server made in LiteLLM (unmarked) is imported with `Observe` from the
/// platform's namespace and left as it is; a tenant may import neither it
/// nor the platform's own servers, nor run a command, reach past its
/// names and groups, or name a server by raw id.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn imports_follow_ownership_and_tenants_stay_in_their_namespace() {
    let Some((world, logs, _crds)) = logged_world("pmcp-tenancy").await else {
        return;
    };
    let ns = world.namespace.clone();
    let outside = format!("ext.{}", k8s::unique_suffix());
    let made = McpServerRequest {
        server_id: outside.clone(),
        server_name: Some(outside.replace('-', "_")),
        transport: "sse".into(),
        url: Some("http://127.0.0.1:9/sse".into()),
        ..McpServerRequest::default()
    };
    world.litellm.mcp_server_new(&made).await.unwrap();
    let observe = |id: &str| json!({"crossplane.io/external-name": id});
    let spec = json!({"managementPolicies": ["Observe"], "forProvider": {
        "transport": "http", "url": "http://127.0.0.1:9/other",
    }});
    let platform = world
        .create(&manifest::<LiteLLMMCPServer>(
            "LiteLLMMCPServer",
            "imported",
            observe(&outside),
            spec.clone(),
        ))
        .await;
    let imported = wait_for(&platform, "imported", "observed", |s| {
        is(s, "Ready", "True")
    })
    .await;
    let status = serde_json::to_value(&imported.status).unwrap();
    assert_eq!(status["atProvider"]["transport"], "sse");
    assert_eq!(
        live(&world, &outside).await.unwrap().url.as_deref(),
        Some("http://127.0.0.1:9/sse"),
        "Observe changes nothing"
    );
    let (synced, message) = {
        let s = condition(&imported, "Synced").unwrap();
        (s.status, s.message.unwrap_or_default())
    };
    assert_eq!(synced, "True", "drift is reported, not an error: {message}");
    assert!(
        message.contains("url") && message.contains("transport"),
        "{message}"
    );

    // A server the platform manages, marked as its own.
    let owned = world
        .create(&manifest::<LiteLLMMCPServer>(
            "LiteLLMMCPServer",
            "mine",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "http://127.0.0.1:9/mine"}}),
        ))
        .await;
    ready(&owned, "mine").await;

    let tenant = world.tenant("pmcp-tenant").await;
    let tns = tenant.namespace.clone();
    let servers = tenant.api::<LiteLLMMCPServer>(&world);
    let create = |name: &str, annotations: Value, spec: Value| {
        world.tenant_manifest::<LiteLLMMCPServer>("LiteLLMMCPServer", name, annotations, spec)
    };
    let cases = [
        (
            "unmarked",
            observe(&outside),
            spec.clone(),
            "not created by this provider",
        ),
        (
            "platforms",
            observe(&format!("{ns}.mine")),
            spec.clone(),
            "managed by another resource",
        ),
        (
            "stdio",
            json!({}),
            json!({"forProvider": {"transport": "stdio", "command": "npx", "args": ["-y", "x"]}}),
            "forProvider.transport: stdio is refused",
        ),
        (
            "squatter",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "https://mcp.example.com/",
                                   "serverName": "github"}}),
            "forProvider.serverName",
        ),
        (
            "grouped",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "https://mcp.example.com/",
                                   "accessGroups": ["engineering"]}}),
            "forProvider.accessGroups",
        ),
        (
            "open-to-all",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "https://mcp.example.com/",
                                   "allowAllKeys": true}}),
            "forProvider.allowAllKeys: refused outside the LiteLLMInstance's namespace",
        ),
        (
            "metadata",
            json!({}),
            json!({"forProvider": {"transport": "http",
                                   "url": "http://169.254.169.254/latest/meta-data/"}}),
            "forProvider.url: the host \"169.254.169.254\" is a link-local address",
        ),
        (
            "the-proxy",
            json!({}),
            json!({"forProvider": {"transport": "http", "url": "http://2130706433:4000/mcp"}}),
            "forProvider.url: the host \"127.0.0.1\" is a loopback address",
        ),
        (
            "in-cluster",
            json!({}),
            json!({"forProvider": {"transport": "http",
                                   "url": "http://postgres.platform.svc.cluster.local:5432/"}}),
            "spec.tenantMcpServerHosts",
        ),
    ];
    for (name, annotations, spec, _) in &cases {
        servers
            .create(
                &PostParams::default(),
                &create(name, annotations.clone(), spec.clone()),
            )
            .await
            .unwrap();
    }
    for (name, _, _, want) in &cases {
        let message = refused(&servers, name).await;
        assert!(message.contains(want), "{name}: {message}");
        assert!(
            !message.contains(&ns),
            "{name} names no other namespace: {message}"
        );
    }
    // Nothing was created for the refusals, and the platform's servers are
    // untouched.
    for name in [
        "stdio",
        "open-to-all",
        "metadata",
        "the-proxy",
        "in-cluster",
    ] {
        assert!(
            live(&world, &format!("{tns}.{name}")).await.is_none(),
            "{name}"
        );
    }
    assert!(live(&world, &outside).await.is_some());
    let mine = live(&world, &format!("{ns}.mine")).await.unwrap();
    assert_eq!(mine.url.as_deref(), Some("http://127.0.0.1:9/mine"));

    // A file URL never reaches the provider: the API server refuses it.
    let file = create(
        "file",
        json!({}),
        json!({"forProvider": {"transport": "http", "url": "file:///etc/passwd"}}),
    );
    let err = servers
        .create(&PostParams::default(), &file)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("spec.forProvider.url"), "{err}");

    // A tenant's team may not name a server by raw id, nor a vector store.
    let teams = tenant.api::<LiteLLMTeam>(&world);
    for (name, permission, want) in [
        (
            "raw",
            json!({"mcpServers": [format!("{ns}.mine")]}),
            "forProvider.objectPermission.mcpServers",
        ),
        (
            "stores",
            json!({"vectorStores": ["vs-1"]}),
            "forProvider.objectPermission.vectorStores",
        ),
    ] {
        let team = world.tenant_manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            name,
            json!({}),
            json!({"forProvider": {"models": ["gpt-4o"], "objectPermission": permission}}),
        );
        teams.create(&PostParams::default(), &team).await.unwrap();
        let message = refused(&teams, name).await;
        assert!(message.contains(want), "{name}: {message}");
        assert!(world.team_info(&format!("{tns}.{name}")).await.is_none());
    }
    // A tenant's own server, by reference, is fine; its URL is on this
    // machine, which the instance allows tenants to name.
    support::provider::patch_instance_spec(
        &world.kube,
        &world.namespace,
        json!({"tenantMcpServerHosts": ["127.0.0.1"]}),
    )
    .await;
    servers
        .create(
            &PostParams::default(),
            &create(
                "own",
                json!({}),
                json!({"forProvider": {"transport": "http", "url": "http://127.0.0.1:9/own",
                                       "accessGroups": [format!("{tns}/dev")]}}),
            ),
        )
        .await
        .unwrap();
    ready(&servers, "own").await;
    let team = world.tenant_manifest::<LiteLLMTeam>(
        "LiteLLMTeam",
        "own",
        json!({}),
        json!({"forProvider": {"models": ["gpt-4o"], "objectPermission": {
            "mcpServerRefs": [{"name": "own"}], "mcpAccessGroups": [format!("{tns}/dev")]}}}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    ready(&teams, "own").await;
    let permission = world
        .team_info(&format!("{tns}.own"))
        .await
        .unwrap()
        .object_permission
        .unwrap();
    assert_eq!(permission.mcp_servers, [format!("{tns}.own")]);

    for name in ["raw", "stores", "own"] {
        teams.delete(name, &DeleteParams::default()).await.unwrap();
        wait_gone(&teams, name).await;
    }
    for (name, ..) in &cases {
        servers
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        wait_gone(&servers, name).await;
    }
    servers
        .delete("own", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&servers, "own").await;
    assert!(live(&world, &format!("{tns}.own")).await.is_none());
    owned
        .delete("mine", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&owned, "mine").await;
    // Observe never deletes: the imported server stays in LiteLLM.
    platform
        .delete("imported", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&platform, "imported").await;
    assert!(live(&world, &outside).await.is_some());
    assert!(world.litellm.mcp_server_delete(&outside).await.unwrap());
    assert_nowhere(&world, &logs, &tns, &[]).await;
}

/// `examples/members-mcp-v2` as a tenant gets it: the function renders the
/// XR, the API server takes every rendered object, and the provider
/// reconciles it against the real proxy: both users exist under their
/// ids, the team lists them as members (bob with his budget in the team),
/// alice's key belongs to her, and the team and that key may use the MCP
/// server, whose token came from the tenant's Secret.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_members_and_mcp_example_renders_and_reconciles() {
    use litellm_crossplane::api::{LiteLLMUser, LiteLLMVirtualKey};
    use litellm_crossplane::function::render::{render, RenderFiles};

    let Some(world) = world("pmcp-example").await else {
        return;
    };
    let _crds = CrdGuard::start(&world.kube);
    let tenant = world.tenant("pmcp-example-tenant").await;
    let ns = tenant.namespace.clone();
    support::provider::patch_instance_spec(
        &world.kube,
        &world.namespace,
        json!({"tenantMcpServerHosts": ["127.0.0.1"]}),
    )
    .await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/members-mcp-v2");
    // The example's XR in the tenant's namespace; emails are unique across
    // the shared proxy, so each run has its own.
    let xr = std::fs::read_to_string(dir.join("xr.yaml"))
        .unwrap()
        .replace("namespace: team-data", &format!("namespace: {ns}"))
        .replace("@example.com", &format!("@{ns}.example"));
    let xr_file = std::env::temp_dir().join(format!("{ns}-xr.yaml"));
    std::fs::write(&xr_file, xr).unwrap();
    let docs = render(&RenderFiles {
        xr: xr_file.clone(),
        composition: dir.join("composition.yaml"),
        observed: None,
        required: Some(dir.join("required.yaml")),
    })
    .expect("the example renders")
    .documents;
    let _ = std::fs::remove_file(&xr_file);
    write_secret(
        &world.kube,
        &ns,
        "github-mcp-token",
        json!({"token": "e2e-example-mcp-token"}),
    )
    .await;
    let mut names: Vec<(String, String)> = Vec::new();
    for mut doc in docs {
        let Some(kind) = doc["kind"].as_str().map(str::to_owned) else {
            continue;
        };
        if !kind.starts_with("LiteLLM") {
            continue;
        }
        assert_eq!(doc["metadata"]["namespace"], json!(ns));
        doc["metadata"]["annotations"]["crossplane.io/poll-interval"] = json!("2s");
        doc["spec"]["instanceRef"] =
            json!({"name": support::provider::INSTANCE, "namespace": world.namespace});
        if kind == "LiteLLMMCPServer" {
            // The harness has no network: a closed local port stands in
            // for the example's GitHub endpoint (which the instance allows
            // tenants to name, below).
            doc["spec"]["forProvider"]["url"] = json!("http://127.0.0.1:9/mcp");
        }
        let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
        let plural = format!("{}s", kind.to_lowercase());
        let resource = kube::core::ApiResource {
            group: "litellm.m.crossplane.io".into(),
            version: "v1alpha1".into(),
            api_version: "litellm.m.crossplane.io/v1alpha1".into(),
            kind: kind.clone(),
            plural,
        };
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &ns, &resource);
        let object: kube::api::DynamicObject = serde_json::from_value(doc).unwrap();
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("{kind} {name}: {e}"));
        names.push((kind, name));
    }
    let kinds: std::collections::BTreeSet<&str> = names.iter().map(|(k, _)| k.as_str()).collect();
    assert!(
        kinds.contains("LiteLLMUser") && kinds.contains("LiteLLMMCPServer"),
        "{kinds:?}"
    );

    let users = tenant.api::<LiteLLMUser>(&world);
    let mut user_ids = Vec::new();
    for user in ["data-eng.user-alice", "data-eng.user-bob"] {
        let user = ready(&users, user).await;
        let id = user.annotations()[EXTERNAL_NAME].clone();
        let live = world
            .litellm
            .user_info(&id)
            .await
            .unwrap()
            .expect("the user");
        assert!(live
            .user_email
            .as_deref()
            .unwrap()
            .ends_with(&format!("@{ns}.example")));
        user_ids.push(id);
    }
    let servers = tenant.api::<LiteLLMMCPServer>(&world);
    let server = ready(&servers, "data-eng.mcp-github").await;
    let server_id = server.annotations()[EXTERNAL_NAME].clone();
    assert!(live(&world, &server_id).await.is_some());
    let teams = tenant.api::<LiteLLMTeam>(&world);
    let team = ready(&teams, "data-eng.team").await;
    let team_id = team.annotations()[EXTERNAL_NAME].clone();
    let live_team = eventually("the team's members and MCP server", || async {
        let team = world.team_info(&team_id).await?;
        let members: Vec<String> = team
            .members_with_roles
            .iter()
            .filter_map(|m| m.user_id.clone())
            .collect();
        let granted = team
            .object_permission
            .as_ref()
            .is_some_and(|p| p.mcp_servers == [server_id.clone()]);
        (user_ids.iter().all(|id| members.contains(id)) && granted).then_some(team)
    })
    .await;
    let bob = live_team
        .memberships
        .iter()
        .find(|m| m.user_id == user_ids[1])
        .expect("bob's membership");
    assert_eq!(
        bob.litellm_budget_table.as_ref().and_then(|b| b.max_budget),
        Some(40.0)
    );
    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    let key = ready(&keys, "data-eng.key-alice-cli").await;
    let at_provider = serde_json::to_value(&key.status).unwrap()["atProvider"].clone();
    assert_eq!(at_provider["userId"], json!(user_ids[0]));
    assert_eq!(at_provider["teamId"], json!(team_id));
    let token = at_provider["token"].as_str().unwrap().to_owned();
    let live_key = world
        .litellm
        .key_info(&token)
        .await
        .unwrap()
        .expect("the key");
    assert_eq!(
        live_key.object_permission.map(|p| p.mcp_servers),
        Some(vec![server_id.clone()])
    );
    ready(&keys, "data-eng.key-pipeline").await;

    // Deleting in any order: the provider holds each deletion until what
    // depends on it is gone.
    for (kind, name) in &names {
        let resource = kube::core::ApiResource {
            group: "litellm.m.crossplane.io".into(),
            version: "v1alpha1".into(),
            api_version: "litellm.m.crossplane.io/v1alpha1".into(),
            kind: kind.clone(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &ns, &resource);
        api.delete(name, &DeleteParams::default()).await.unwrap();
    }
    for (kind, name) in &names {
        let resource = kube::core::ApiResource {
            group: "litellm.m.crossplane.io".into(),
            version: "v1alpha1".into(),
            api_version: "litellm.m.crossplane.io/v1alpha1".into(),
            kind: kind.clone(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(world.kube.clone(), &ns, &resource);
        eventually(&format!("{name} to be gone"), || async {
            api.get_opt(name).await.unwrap().is_none().then_some(())
        })
        .await;
    }
    assert!(live(&world, &server_id).await.is_none());
}
