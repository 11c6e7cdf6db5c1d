//! A team's logging destinations (`LiteLLMTeam.spec.forProvider.logging`,
//! docs/team-logging.md) against the real Kubernetes API server and the
//! real LiteLLM proxy: the contract of LiteLLM's team callback routes;
//! a team whose requests LiteLLM logs to a recording destination with the
//! credential from a Secret, corrected when changed in LiteLLM, written
//! again when the Secret rotates, kept through an update of another field
//! and removed when asked; and a tenant's callbacks that would read the
//! proxy's environment or send to its network, refused before anything is
//! sent.

use crate::support;

use kube::api::{Patch, PatchParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::LiteLLMTeam;
use litellm_crossplane::litellm::team_callbacks::{logging_of, TeamCallback, REDACTED};
use litellm_crossplane::litellm::{Error, TeamRequest};
use serde_json::{json, Value};
use support::k8s;
use support::provider::{
    assert_secrets_nowhere, at_provider, delete_and_wait, eventually, manifest, ready, refused,
    wait_for, world_guarded as start, write_secret, World,
};
use support::upstream::Upstream;

fn langsmith(base_url: &str, key: &str) -> TeamCallback {
    TeamCallback {
        callback_name: "langsmith".into(),
        callback_type: "success".into(),
        callback_vars: [
            ("langsmith_api_key".to_owned(), key.to_owned()),
            ("langsmith_base_url".to_owned(), base_url.to_owned()),
            ("langsmith_project".to_owned(), "p1".to_owned()),
        ]
        .into(),
    }
}

/// The status of `err`, for the contract's table.
fn status(err: &Error) -> u16 {
    match err {
        Error::Permanent { status, .. } => *status,
        Error::NotFound { .. } => 404,
        Error::Conflict { .. } => 409,
        other => panic!("unexpected error: {other}"),
    }
}

/// The team's callbacks as LiteLLM keeps them in its metadata.
async fn stored(world: &World, id: &str) -> Option<Vec<TeamCallback>> {
    logging_of(world.team_info(id).await?.metadata.as_ref())
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn contract_of_the_team_callback_routes() {
    let Some((world, _crds)) = start("ptc-contract").await else {
        return;
    };
    let litellm = &world.litellm;
    let id = format!("ptc-contract-{}", k8s::unique_suffix());
    let missing = format!("{id}-missing");
    let entry = langsmith("https://ls.example.com", "ls-secret-contract");

    // A missing team: 400 on add (not 404), 404 on read, delete and
    // disable.
    let err = litellm
        .team_callback_add(&missing, &entry)
        .await
        .unwrap_err();
    assert_eq!(status(&err), 400, "{err}");
    assert_eq!(litellm.team_callbacks(&missing).await.unwrap(), None);
    assert!(!litellm
        .team_callback_delete(&missing, "langsmith")
        .await
        .unwrap());
    assert!(!litellm.team_disable_logging(&missing).await.unwrap());

    litellm
        .team_new(&TeamRequest {
            team_id: id.clone(),
            metadata: Some(json!({"x": 1}).as_object().unwrap().clone()),
            ..TeamRequest::default()
        })
        .await
        .unwrap();
    litellm.team_callback_add(&id, &entry).await.unwrap();
    // One per name and type: the second is 400.
    let err = litellm.team_callback_add(&id, &entry).await.unwrap_err();
    assert_eq!(status(&err), 400, "{err}");
    // An unknown variable and a value naming the proxy's environment: 422.
    let mut unknown = entry.clone();
    unknown.callback_type = "failure".into();
    unknown.callback_vars.insert("nonsense".into(), "x".into());
    let err = litellm.team_callback_add(&id, &unknown).await.unwrap_err();
    assert_eq!(status(&err), 422, "{err}");
    let mut environment = entry.clone();
    environment.callback_type = "failure".into();
    environment.callback_vars.insert(
        "langsmith_api_key".into(),
        "os.environ/LITELLM_MASTER_KEY".into(),
    );
    let err = litellm
        .team_callback_add(&id, &environment)
        .await
        .unwrap_err();
    assert_eq!(status(&err), 422, "{err}");
    // An unknown integration name is stored: LiteLLM checks no name.
    let bogus = TeamCallback {
        callback_name: "no_such_integration".into(),
        callback_type: "success".into(),
        callback_vars: Default::default(),
    };
    litellm.team_callback_add(&id, &bogus).await.unwrap();

    // The read masks credentials and shows the rest; the metadata holds
    // them encrypted.
    let read = litellm.team_callbacks(&id).await.unwrap().unwrap();
    assert_eq!(read.success_callbacks, ["langsmith", "no_such_integration"]);
    assert_eq!(read.callback_vars["langsmith_api_key"], REDACTED);
    assert_eq!(
        read.callback_vars["langsmith_base_url"],
        "https://ls.example.com"
    );
    let held = stored(&world, &id).await.unwrap();
    assert!(held[0].encrypted("langsmith_api_key"));
    assert!(!held[0].encrypted("langsmith_base_url"));

    // Delete by name: 200, then 404.
    assert!(litellm
        .team_callback_delete(&id, "no_such_integration")
        .await
        .unwrap());
    assert!(!litellm
        .team_callback_delete(&id, "no_such_integration")
        .await
        .unwrap());

    // `/team/update` replaces the metadata: without `logging`, every
    // callback is gone.
    let update = |metadata: Value| TeamRequest {
        team_id: id.clone(),
        metadata: Some(metadata.as_object().unwrap().clone()),
        ..TeamRequest::default()
    };
    litellm.team_update(&update(json!({"x": 2}))).await.unwrap();
    assert_eq!(stored(&world, &id).await, None, "wiped by the update");
    // With `logging`, stored as given, the credential encrypted at rest
    // as the callback route does; and the route's checks skipped.
    litellm
        .team_update(&update(json!({"x": 3, "logging": [entry]})))
        .await
        .unwrap();
    let held = stored(&world, &id).await.unwrap();
    assert_eq!(held.len(), 1);
    assert!(held[0].encrypted("langsmith_api_key"));
    let read = litellm.team_callbacks(&id).await.unwrap().unwrap();
    assert_eq!(read.success_callbacks, ["langsmith"]);
    litellm
        .team_update(&update(json!({"logging": [environment]})))
        .await
        .unwrap();
    assert_eq!(
        stored(&world, &id).await.unwrap()[0].callback_type,
        "failure",
        "an os.environ/ value the route refuses is stored by /team/update"
    );

    // Disable: `logging` emptied.
    assert!(litellm.team_disable_logging(&id).await.unwrap());
    assert_eq!(stored(&world, &id).await, Some(vec![]));
    litellm.team_delete(&id).await.unwrap();
}

/// A key of the team for `model_name` (made with the master key).
async fn team_key(world: &World, team_id: &str, model_name: &str) -> String {
    let key = format!("sk-ptc-team-key-{}", k8s::unique_suffix());
    reqwest::Client::new()
        .post(format!("{}/key/generate", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"key": key, "team_id": team_id, "models": [model_name]}))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .expect("key generated");
    key
}

async fn chat(world: &World, key: &str, model_name: &str) {
    let status = reqwest::Client::new()
        .post(format!("{}/chat/completions", world.url))
        .bearer_auth(key)
        .json(&json!({"model": model_name, "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200, "the team's request is served");
}

/// Sends requests with `key` until the destination has received a batch
/// of runs with `api_key` (LiteLLM flushes its Langsmith queue every 5 s).
async fn logged_with(world: &World, destination: &Upstream, key: &str, model: &str, api_key: &str) {
    eventually(
        &format!("a batch logged with the key {api_key}"),
        || async {
            chat(world, key, model).await;
            destination
                .received()
                .iter()
                .any(|r| {
                    r.target.ends_with("/runs/batch") && r.header("x-api-key") == Some(api_key)
                })
                .then_some(())
        },
    )
    .await;
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_teams_logging_reaches_its_destination_and_follows_the_resource() {
    let Some((world, _crds)) = start("ptc-life").await else {
        return;
    };
    let ns = world.namespace.clone();
    let upstream = Upstream::start().await;
    let destination = Upstream::start().await;
    let model_name = format!("ptc-chat-{}", k8s::unique_suffix());
    support::provider::platform_model(&world, &upstream, "ptc-chat", &model_name).await;
    let first = format!("ls-key-one-{}", k8s::unique_suffix());
    let second = format!("ls-key-two-{}", k8s::unique_suffix());
    write_secret(&world.kube, &ns, "langsmith", json!({"apiKey": &first})).await;
    let logging = json!([{
        "callbackName": "langsmith",
        "callbackType": "success",
        "callbackVars": {"langsmith_base_url": destination.url(), "langsmith_project": "p1"},
        "secretCallbackVars": {"langsmith_api_key": {"name": "langsmith", "key": "apiKey"}},
    }]);
    let teams = world
        .create(&manifest::<LiteLLMTeam>(
            "LiteLLMTeam",
            "web",
            json!({}),
            json!({"forProvider": {"teamAlias": "Web", "models": [model_name],
                                   "logging": logging}}),
        ))
        .await;
    let team = ready(&teams, "web").await;
    let id = team.annotations()[EXTERNAL_NAME].clone();
    let observed = at_provider(&team);
    assert_eq!(observed["logging"][0]["callbackName"], "langsmith");
    assert_eq!(observed["logging"][0]["callbackType"], "success");
    assert_eq!(
        observed["logging"][0]["variables"],
        json!([
            "langsmith_api_key",
            "langsmith_base_url",
            "langsmith_project"
        ])
    );
    let print = observed["secretFingerprints"]["langsmith/success"].clone();
    assert!(print.as_str().unwrap().starts_with("sha256:"), "{observed}");
    let held = stored(&world, &id).await.unwrap();
    assert!(held[0].encrypted("langsmith_api_key"), "encrypted at rest");

    // The team's requests are logged at the destination, with the key from
    // the Secret.
    let key = team_key(&world, &id, &model_name).await;
    logged_with(&world, &destination, &key, &model_name, &first).await;

    // Removed in LiteLLM (its UI's delete): put back on the next poll.
    assert!(world
        .litellm
        .team_callback_delete(&id, "langsmith")
        .await
        .unwrap());
    eventually("the callback put back", || async {
        let held = stored(&world, &id).await?;
        (held.len() == 1 && held[0].callback_name == "langsmith").then_some(())
    })
    .await;
    // Another added in LiteLLM, and the destination changed there: the
    // team's callbacks are exactly the resource's again.
    let mut moved = langsmith("https://elsewhere.example.com", "ls-ui-key");
    moved.callback_type = "failure".into();
    world.litellm.team_callback_add(&id, &moved).await.unwrap();
    eventually("the UI's callback removed", || async {
        let held = stored(&world, &id).await?;
        (held.len() == 1 && held[0].callback_type == "success").then_some(())
    })
    .await;

    // The Secret rotates: written again, logged with the new key.
    write_secret(&world.kube, &ns, "langsmith", json!({"apiKey": &second})).await;
    let rotated = wait_for(&teams, "web", "the new fingerprint", |t| {
        let now = at_provider(t)["secretFingerprints"]["langsmith/success"].clone();
        now.is_string() && now != print
    })
    .await;
    assert_eq!(rotated.annotations()[EXTERNAL_NAME], id);
    logged_with(&world, &destination, &key, &model_name, &second).await;

    // An update of another field keeps the callbacks.
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"teamAlias": "Web 2"}}})),
        )
        .await
        .unwrap();
    eventually("the alias updated", || async {
        let info = world.team_info(&id).await?;
        (info.team_alias.as_deref() == Some("Web 2")).then_some(())
    })
    .await;
    let held = stored(&world, &id).await.unwrap();
    assert_eq!(held.len(), 1, "kept through the update");
    assert_eq!(
        held[0].callback_vars["langsmith_base_url"],
        destination.url()
    );

    // `logging: []`: the team's logging off.
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"logging": []}}})),
        )
        .await
        .unwrap();
    eventually("the callbacks removed", || async {
        (stored(&world, &id).await? == vec![]).then_some(())
    })
    .await;
    let off = wait_for(&teams, "web", "no callback in status", |t| {
        at_provider(t)["logging"] == json!([]) && at_provider(t)["secretFingerprints"].is_null()
    })
    .await;
    assert!(support::provider::is(&off, "Synced", "True"));

    // Unset: left to LiteLLM. A callback made in the UI survives an update
    // of another field.
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"logging": null}}})),
        )
        .await
        .unwrap();
    wait_for(&teams, "web", "logging unset", |t| {
        t.spec.for_provider.logging.is_none()
    })
    .await;
    world
        .litellm
        .team_callback_add(&id, &langsmith("https://ui.example.com", "ls-ui-key"))
        .await
        .unwrap();
    teams
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {"teamAlias": "Web 3"}}})),
        )
        .await
        .unwrap();
    eventually("the alias updated again", || async {
        let info = world.team_info(&id).await?;
        (info.team_alias.as_deref() == Some("Web 3")).then_some(())
    })
    .await;
    let held = stored(&world, &id).await.unwrap();
    assert_eq!(held.len(), 1, "the UI's callback kept");
    assert_eq!(
        held[0].callback_vars["langsmith_base_url"],
        "https://ui.example.com"
    );
    assert!(
        held[0].encrypted("langsmith_api_key"),
        "kept as LiteLLM held it"
    );
    let team = teams.get("web").await.unwrap();
    assert!(
        team.spec
            .for_provider
            .metadata
            .as_ref()
            .is_none_or(|m| !m.contains_key("logging")),
        "never late-initialized into metadata"
    );

    assert_secrets_nowhere::<LiteLLMTeam>(&world, &ns, &[&first, &second, "ls-ui-key"]).await;
    delete_and_wait(&teams, "web").await;
    assert_eq!(world.team_info(&id).await.map(|t| t.team_id), None);
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_logging_may_not_reach_the_proxys_environment_or_network() {
    let Some((world, _crds)) = start("ptc-tenant").await else {
        return;
    };
    let tenant = world.tenant("ptc-tenant-t").await;
    let tns = tenant.namespace.clone();
    write_secret(
        &world.kube,
        &tns,
        "lf",
        json!({"apiKey": "os.environ/LITELLM_MASTER_KEY"}),
    )
    .await;
    let lf = |vars: Value| json!([{"callbackName": "langfuse", "callbackType": "success", "callbackVars": vars}]);
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "environment",
            json!([{"callbackName": "langfuse", "callbackType": "success",
                    "callbackVars": {"langfuse_host": "https://lf.example.com"},
                    "secretCallbackVars": {"langfuse_secret_key": {"name": "lf", "key": "apiKey"}}}]),
            "forProvider.logging[0].secretCallbackVars.langfuse_secret_key: the Secret's value has the form os.environ/",
        ),
        (
            "environment-plain",
            lf(json!({"langfuse_public_key": "os.environ/LITELLM_MASTER_KEY"})),
            "forProvider.logging[0].callbackVars.langfuse_public_key: the value has the form os.environ/",
        ),
        (
            "metadata-service",
            lf(json!({"langfuse_host": "http://169.254.169.254/"})),
            "forProvider.logging[0].callbackVars.langfuse_host: the host \"169.254.169.254\" is a link-local",
        ),
        (
            "the-proxy",
            lf(json!({"langfuse_host": "http://127.0.0.1:4000"})),
            "forProvider.logging[0].callbackVars.langfuse_host: the host \"127.0.0.1\" is a loopback",
        ),
        (
            "cluster",
            lf(json!({"langfuse_host": "http://litellm.platform.svc.cluster.local"})),
            "forProvider.logging[0].callbackVars.langfuse_host: the host",
        ),
        (
            "service-account-file",
            json!([{"callbackName": "gcs_bucket",
                    "callbackVars": {"gcs_path_service_account": "/var/run/secrets/sa.json"}}]),
            "forProvider.logging[0].callbackVars.gcs_path_service_account: refused outside",
        ),
        (
            "platform-logs-off",
            lf(json!({"litellm_disabled_callbacks": "prometheus"})),
            "forProvider.logging[0].callbackVars.litellm_disabled_callbacks: refused outside",
        ),
        (
            "unknown",
            json!([{"callbackName": "generic_api"}]),
            "forProvider.logging[0].callbackName: \"generic_api\" is not",
        ),
        (
            "in-metadata",
            Value::Null,
            // Refused to tenants before: a setting of the team.
            "forProvider.metadata.logging: ",
        ),
    ];
    // The tenant's teams list their models (of their namespace), so the
    // callbacks are the only thing refused.
    let own = json!([format!("{tns}/own")]);
    for (name, logging, _) in &cases {
        let spec = match logging {
            Value::Null => json!({"forProvider": {"models": own, "metadata": {
                "logging": [{"callback_name": "langfuse", "callback_type": "success",
                             "callback_vars": {"langfuse_host": "http://169.254.169.254/"}}]}}}),
            logging => json!({"forProvider": {"models": own, "logging": logging}}),
        };
        world
            .create_for_tenant::<LiteLLMTeam>(&tenant, "LiteLLMTeam", name, spec)
            .await;
    }
    let teams = tenant.api::<LiteLLMTeam>(&world);
    for (name, _, expected) in &cases {
        let (_, message) = refused(&teams, name).await;
        assert!(
            message.starts_with(expected) || message.contains(expected),
            "{name}: {message}"
        );
        assert!(!message.contains(&world.namespace), "{name}: {message}");
        assert!(!message.contains("LITELLM_MASTER_KEY"), "{name}: {message}");
        assert_eq!(
            world
                .team_info(&format!("{tns}.{name}"))
                .await
                .map(|t| t.team_id),
            None,
            "{name}: nothing sent"
        );
    }
    // A public destination is the tenant's to choose.
    world
        .create_for_tenant::<LiteLLMTeam>(
            &tenant,
            "LiteLLMTeam",
            "public",
            json!({"forProvider": {"models": own,
                "logging": lf(json!({"langfuse_host": "https://cloud.langfuse.com"}))}}),
        )
        .await;
    ready(&teams, "public").await;
    let held = stored(&world, &format!("{tns}.public")).await.unwrap();
    assert_eq!(
        held[0].callback_vars["langfuse_host"],
        "https://cloud.langfuse.com"
    );
    assert_secrets_nowhere::<LiteLLMTeam>(&world, &tns, &["os.environ/LITELLM_MASTER_KEY"]).await;
    for (name, _, _) in &cases {
        delete_and_wait(&teams, name).await;
    }
    delete_and_wait(&teams, "public").await;
}
