//! `LiteLLMCustomer` end to end, against the real Kubernetes API server and
//! the real LiteLLM proxy (docs/customers.md): a customer is created under
//! the private id the provider derives from the resource, linked to its
//! namespace's budget by reference, held to it by the proxy (a blocked
//! customer's request is refused, an unblocked one's served), corrected
//! when changed in LiteLLM, found again when its external name is lost,
//! deleted before the budget it links to, and imported only by the
//! ownership rules. A tenant can neither choose a customer id (another
//! application's customer), nor take another tenant's customer, nor link
//! to another namespace's budget or models.

use crate::support;

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::ResourceExt;
use litellm_crossplane::api::common::EXTERNAL_NAME;
use litellm_crossplane::api::{LiteLLMBudget, LiteLLMCustomer};
use litellm_crossplane::litellm::{CustomerInfo, CustomerRequest};
use serde_json::{json, Value};
use support::k8s;
use support::provider::{
    at_provider, delete_and_wait as delete, eventually, is, manifest, ready, refused, wait_for,
    wait_gone, world_guarded as start, World, CLUSTER,
};
use support::upstream::Upstream;

async fn live(world: &World, id: &str) -> Option<CustomerInfo> {
    world
        .litellm
        .customer_info(id)
        .await
        .expect("customer read")
}

/// A chat completion with `key` on behalf of the customer `user`: the
/// HTTP status. (The master key skips the customer's checks.)
async fn chat_for(world: &World, key: &str, model_name: &str, user: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", world.url))
        .bearer_auth(key)
        .json(&json!({"model": model_name, "user": user,
                      "messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("chat completion sent")
        .status()
        .as_u16()
}

/// A virtual key of the proxy's own for `model_name` (made with the
/// master key, outside the provider): an application's.
async fn application_key(world: &World, model_name: &str) -> String {
    let key = format!("sk-cust-app-{}", k8s::unique_suffix());
    reqwest::Client::new()
        .post(format!("{}/key/generate", world.url))
        .bearer_auth(&world.master_key)
        .json(&json!({"key": key, "models": [model_name]}))
        .send()
        .await
        .expect("key generated")
        .error_for_status()
        .expect("key accepted");
    key
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_tenants_customer_lives_by_its_private_id_and_its_budget() {
    let Some((world, _crds)) = start("pcu-life").await else {
        return;
    };
    let upstream = Upstream::start().await;
    let model_name = format!("cust-chat-{}", k8s::unique_suffix());
    support::provider::platform_model(&world, &upstream, "cust-chat", &model_name).await;
    let tenant = world.tenant("pcu-life-t").await;
    let tns = tenant.namespace.clone();
    world
        .create_for_tenant::<LiteLLMBudget>(
            &tenant,
            "LiteLLMBudget",
            "free",
            json!({"forProvider": {"maxBudget": "3"}}),
        )
        .await;
    world
        .create_for_tenant::<LiteLLMCustomer>(
            &tenant,
            "LiteLLMCustomer",
            "alice",
            json!({"forProvider": {
                "alias": "Alice",
                "blocked": true,
                "budgetRef": {"name": "free"},
                "models": [format!("{tns}/own")],
                "allowedModelRegion": "eu",
            }}),
        )
        .await;
    let customers = tenant.api::<LiteLLMCustomer>(&world);
    let budgets = tenant.api::<LiteLLMBudget>(&world);
    let alice = ready(&customers, "alice").await;
    let id = alice.annotations()[EXTERNAL_NAME].clone();
    let prefix = format!("{CLUSTER}/{tns}/alice/");
    assert!(
        id.starts_with(&prefix) && id.len() == prefix.len() + 24,
        "the private id, chosen before the create: {id}"
    );
    let budget_id = ready(&budgets, "free").await.annotations()[EXTERNAL_NAME].clone();
    let observed = at_provider(&alice);
    assert_eq!(observed["customerId"], id.as_str());
    assert_eq!(observed["budgetId"], budget_id.as_str());
    assert_eq!(observed["maxBudget"], "3");
    assert_eq!(observed["blocked"], true);

    let got = live(&world, &id).await.expect("in LiteLLM");
    assert_eq!(got.alias.as_deref(), Some("Alice"));
    assert!(got.blocked);
    assert_eq!(got.budget_id.as_deref(), Some(budget_id.as_str()));
    assert_eq!(got.allowed_model_region.as_deref(), Some("eu"));

    // The proxy holds an application's requests for the customer to its
    // models: one it may not use, refused; once allowed, served. (LiteLLM
    // stores `blocked`, and enforces it only with its Enterprise hook.)
    let app_key = application_key(&world, &model_name).await;
    let refused_status = chat_for(&world, &app_key, &model_name, &id).await;
    assert!(
        (400..500).contains(&refused_status),
        "a model the customer may not use is refused: {refused_status}"
    );
    assert_eq!(
        chat_for(&world, &app_key, &model_name, "someone-else").await,
        200,
        "for anyone else, the key's model is served"
    );
    customers
        .patch(
            "alice",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"forProvider": {
                "blocked": false, "allowedModelRegion": null, "models": [model_name]}}})),
        )
        .await
        .unwrap();
    eventually("updated in LiteLLM", || async {
        let got = live(&world, &id).await?;
        (!got.blocked && got.models == [model_name.clone()]).then_some(())
    })
    .await;
    eventually("the customer's request served", || async {
        (chat_for(&world, &app_key, &model_name, &id).await == 200).then_some(())
    })
    .await;

    // Drift made in LiteLLM's UI: corrected on the next poll.
    world
        .litellm
        .customer_update(&CustomerRequest {
            user_id: id.clone(),
            alias: Some("Mallory".into()),
            blocked: Some(true),
            models: Some(vec![]),
            ..CustomerRequest::default()
        })
        .await
        .unwrap();
    eventually("the drift corrected", || async {
        let got = live(&world, &id).await?;
        (got.alias.as_deref() == Some("Alice")
            && !got.blocked
            && got.models == [model_name.clone()])
        .then_some(())
    })
    .await;

    // A lost external name: the same id is derived again, nothing new made.
    customers
        .patch(
            "alice",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {EXTERNAL_NAME: null}}})),
        )
        .await
        .unwrap();
    let again = wait_for(&customers, "alice", "the external name back", |c| {
        c.annotations().get(EXTERNAL_NAME).is_some()
    })
    .await;
    assert_eq!(again.annotations()[EXTERNAL_NAME], id);
    tenant.reconciled_again("customer", 2).await;
    assert!(is(&customers.get("alice").await.unwrap(), "Ready", "True"));

    // The budget waits for the customer that links to it: LiteLLM would
    // unlink the customer, whose spend would be unlimited.
    budgets
        .delete("free", &DeleteParams::default())
        .await
        .unwrap();
    tenant.reconciled_again("budget", 2).await;
    assert!(budgets.get_opt("free").await.unwrap().is_some());
    assert_eq!(
        live(&world, &id).await.unwrap().budget_id.as_deref(),
        Some(budget_id.as_str()),
        "still linked while the customer is there"
    );
    delete(&customers, "alice").await;
    assert!(live(&world, &id).await.is_none(), "deleted in LiteLLM");
    wait_gone(&budgets, "free").await;
    assert!(world
        .litellm
        .budget_info(&budget_id)
        .await
        .unwrap()
        .is_none());
    world.litellm.key_delete(&app_key).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_platform_names_its_applications_customers_and_imports_them() {
    let Some((world, _crds)) = start("pcu-platform").await else {
        return;
    };
    let customers = world.api::<LiteLLMCustomer>();
    let app_user = format!("app-user-{}", k8s::unique_suffix());
    let made = format!("made-in-ui-{}", k8s::unique_suffix());
    world
        .litellm
        .customer_new(&CustomerRequest {
            user_id: made.clone(),
            alias: Some("from the UI".into()),
            ..CustomerRequest::default()
        })
        .await
        .unwrap();

    // The id an application already sends, chosen by the platform.
    world
        .create(&manifest::<LiteLLMCustomer>(
            "LiteLLMCustomer",
            "app-user",
            json!({EXTERNAL_NAME: app_user}),
            json!({"forProvider": {"alias": "App"}}),
        ))
        .await;
    ready(&customers, "app-user").await;
    assert_eq!(
        live(&world, &app_user).await.unwrap().alias.as_deref(),
        Some("App")
    );

    // Observe-only: imported without a write, reported as it is.
    world
        .create(&manifest::<LiteLLMCustomer>(
            "LiteLLMCustomer",
            "imported",
            json!({EXTERNAL_NAME: made}),
            json!({"managementPolicies": ["Observe"], "forProvider": {"alias": "ignored"}}),
        ))
        .await;
    let imported = wait_for(&customers, "imported", "imported", |c| {
        is(c, "Ready", "True")
    })
    .await;
    assert_eq!(at_provider(&imported)["alias"], "from the UI");
    world.reconciled_again("customer", 2).await;
    assert_eq!(
        live(&world, &made).await.unwrap().alias.as_deref(),
        Some("from the UI"),
        "Observe writes nothing"
    );

    // Deleting the Observe-only resource leaves the customer; the managed
    // one takes its customer with it.
    delete(&customers, "imported").await;
    assert!(live(&world, &made).await.is_some());
    delete(&customers, "app-user").await;
    assert!(live(&world, &app_user).await.is_none());
    world.litellm.customer_delete(&made).await.unwrap();
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn a_hostile_tenant_chooses_no_customer_id_and_takes_nothing() {
    let Some((world, _crds)) = start("pcu-hostile").await else {
        return;
    };
    let victim = world.tenant("pcu-victim").await;
    let attacker = world.tenant("pcu-attacker").await;
    // Another application's customer (made by the platform's app), and a
    // customer of the victim tenant, with its budget.
    let app_user = format!("app-user-{}", k8s::unique_suffix());
    world
        .litellm
        .customer_new(&CustomerRequest {
            user_id: app_user.clone(),
            ..CustomerRequest::default()
        })
        .await
        .unwrap();
    world
        .create_for_tenant::<LiteLLMBudget>(
            &victim,
            "LiteLLMBudget",
            "paid",
            json!({"forProvider": {"maxBudget": "100"}}),
        )
        .await;
    world
        .create_for_tenant::<LiteLLMCustomer>(
            &victim,
            "LiteLLMCustomer",
            "carol",
            json!({"forProvider": {"alias": "Carol"}}),
        )
        .await;
    let victims = victim.api::<LiteLLMCustomer>(&world);
    let carol = ready(&victims, "carol").await;
    let carol_id = carol.annotations()[EXTERNAL_NAME].clone();
    let paid = ready(&victim.api::<LiteLLMBudget>(&world), "paid")
        .await
        .annotations()[EXTERNAL_NAME]
        .clone();

    let attackers = attacker.api::<LiteLLMCustomer>(&world);
    let absent = format!("someone-{}", k8s::unique_suffix());
    let attack = |name: &str, annotations: Value, spec: Value| {
        let object: LiteLLMCustomer =
            world.tenant_manifest("LiteLLMCustomer", name, annotations, spec);
        let attackers = attackers.clone();
        async move {
            attackers
                .create(&PostParams::default(), &object)
                .await
                .unwrap();
        }
    };
    // A customer id of its choosing that no one has yet: refused before the
    // create, so the id stays free for the application that sends it.
    attack(
        "squat",
        json!({EXTERNAL_NAME: absent}),
        json!({"forProvider": {"blocked": true}}),
    )
    .await;
    let (_, message) = refused(&attackers, "squat").await;
    assert!(
        message.contains("metadata.annotations[crossplane.io/external-name]"),
        "{message}"
    );
    assert!(live(&world, &absent).await.is_none(), "nothing created");

    // The platform application's customer and the victim's: under every
    // policy, refused without naming anyone, and untouched.
    for (name, id, policies) in [
        ("app-peek", &app_user, json!(["Observe"])),
        ("app-take", &app_user, json!(["*"])),
        ("carol-peek", &carol_id, json!(["Observe"])),
        ("carol-take", &carol_id, json!(["*"])),
    ] {
        attack(
            name,
            json!({EXTERNAL_NAME: id}),
            json!({"managementPolicies": policies, "forProvider": {"blocked": true}}),
        )
        .await;
        let (object, message) = refused(&attackers, name).await;
        assert!(
            !message.contains(&victim.namespace) && !message.contains("carol"),
            "{message}"
        );
        assert!(object.status.unwrap().at_provider.is_none(), "{name}");
    }
    // Another namespace's budget and models.
    attack(
        "their-budget",
        json!({}),
        json!({"forProvider": {"budgetId": paid}}),
    )
    .await;
    let (_, message) = refused(&attackers, "their-budget").await;
    assert!(message.starts_with("forProvider.budgetId: "), "{message}");
    attack(
        "their-model",
        json!({}),
        json!({"forProvider": {"defaultModel": format!("{}/gpt", victim.namespace)}}),
    )
    .await;
    let (refused_model, message) = refused(&attackers, "their-model").await;
    assert!(
        message.starts_with("forProvider.defaultModel: "),
        "{message}"
    );
    if let Some(id) = refused_model.annotations().get(EXTERNAL_NAME) {
        assert!(live(&world, id).await.is_none(), "nothing created");
    }

    attacker.reconciled_again("customer", 2).await;
    let app = live(&world, &app_user).await.unwrap();
    assert!(!app.blocked, "the application's customer untouched");
    let carol_now = live(&world, &carol_id).await.unwrap();
    assert!(!carol_now.blocked, "the victim's customer untouched");
    assert_eq!(carol_now.alias.as_deref(), Some("Carol"));

    for name in [
        "squat",
        "app-peek",
        "app-take",
        "carol-peek",
        "carol-take",
        "their-budget",
        "their-model",
    ] {
        delete(&attackers, name).await;
    }
    assert!(
        live(&world, &app_user).await.is_some(),
        "not deleted by them"
    );
    assert!(
        live(&world, &carol_id).await.is_some(),
        "not deleted by them"
    );
    delete(&victims, "carol").await;
    delete(&victim.api::<LiteLLMBudget>(&world), "paid").await;
    world.litellm.customer_delete(&app_user).await.unwrap();
}

/// Every `/customer/*` route of the client against the real proxy, with
/// what 1.108.7 does that the kind relies on (src/litellm/customers.rs).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn contract_of_every_customer_route() {
    let Some((world, _crds)) = start("pcu-contract").await else {
        return;
    };
    let client = &world.litellm;
    let id = format!("pcu-contract/{}", k8s::unique_suffix());
    assert!(live(&world, &id).await.is_none(), "missing: None (404)");
    assert!(
        matches!(
            client
                .customer_update(&CustomerRequest {
                    user_id: id.clone(),
                    alias: Some("x".into()),
                    ..CustomerRequest::default()
                })
                .await,
            Err(litellm_crossplane::litellm::Error::NotFound { .. })
        ),
        "an update of a missing customer creates nothing"
    );
    assert!(live(&world, &id).await.is_none());
    assert!(!client.customer_delete(&id).await.unwrap(), "missing: gone");

    // Created under the chosen id; a second create is a conflict.
    let budget = format!("pcu-contract-budget-{}", k8s::unique_suffix());
    client
        .budget_new(&litellm_crossplane::litellm::BudgetRequest {
            budget_id: budget.clone(),
            limits: litellm_crossplane::litellm::LimitsRequest {
                max_budget: Some(2.0),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap();
    let created = client
        .customer_new(&CustomerRequest {
            user_id: id.clone(),
            alias: Some("First".into()),
            blocked: Some(true),
            budget_id: Some(budget.clone()),
            models: Some(vec!["m1".into()]),
            allowed_model_region: Some("eu".into()),
            ..CustomerRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(created.user_id, id);
    assert!(matches!(
        client
            .customer_new(&CustomerRequest {
                user_id: id.clone(),
                ..CustomerRequest::default()
            })
            .await,
        Err(litellm_crossplane::litellm::Error::Conflict { .. })
    ));
    let got = live(&world, &id).await.expect("created");
    assert!(got.blocked);
    assert_eq!(got.budget_id.as_deref(), Some(budget.as_str()));
    assert_eq!(got.litellm_budget_table.unwrap().max_budget, Some(2.0));

    // An update writes only what it is sent: `null` leaves a field, `[]`
    // clears the models, `blocked` is written when sent.
    client
        .customer_update(&CustomerRequest {
            user_id: id.clone(),
            models: Some(vec![]),
            blocked: Some(false),
            ..CustomerRequest::default()
        })
        .await
        .unwrap();
    let got = live(&world, &id).await.unwrap();
    assert_eq!(got.alias.as_deref(), Some("First"), "left as it was");
    assert_eq!(got.allowed_model_region.as_deref(), Some("eu"));
    assert!(got.models.is_empty(), "[] clears the list");
    assert!(!got.blocked);

    // A default model the proxy does not serve is refused on create.
    let other = format!("{id}-2");
    assert!(client
        .customer_new(&CustomerRequest {
            user_id: other.clone(),
            default_model: Some(format!("no-such-model-{}", k8s::unique_suffix())),
            ..CustomerRequest::default()
        })
        .await
        .is_err());
    assert!(live(&world, &other).await.is_none());

    // Deleting the budget unlinks the customer: why a LiteLLMBudget waits.
    assert!(client.budget_delete(&budget).await.unwrap());
    assert_eq!(live(&world, &id).await.unwrap().budget_id, None);

    assert!(client.customer_delete(&id).await.unwrap());
    assert!(live(&world, &id).await.is_none());
}
