//! The provider under exactly the permissions a Crossplane cluster gives
//! it: Crossplane's provider system role plus the package's
//! `permissionRequests`, enforced by the authorizing proxy of
//! `tests/support/authz.rs` (every world of the provider tests runs its
//! controllers through one). Here: the proxy itself, the rules' sources,
//! that every requested permission is used, and a start-up that needs no
//! forbidden read (the cluster id).

use crate::support;

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use litellm_crossplane::api::{LiteLLMInstance, LiteLLMTeam, LiteLLMVirtualKey};
use litellm_crossplane::provider::runtime::cluster_id;
use serde_json::{json, Value};
use support::authz::{
    allowed, attributes, crossplane_system_rules, permission_requests, provider_rules, AuthzProxy,
};
use support::k8s;
use support::provider::{eventually, manifest, wait_for, wait_gone, world_with, Setup};

#[test]
fn requests_map_to_rbac_attributes() {
    let a = attributes("GET", "/api/v1/namespaces/ns/secrets/s", "").unwrap();
    assert_eq!(
        (a.verb.as_str(), a.group.as_str(), a.resource.as_str()),
        ("get", "", "secrets")
    );
    assert_eq!(
        (a.namespace.as_deref(), a.name.as_deref()),
        (Some("ns"), Some("s"))
    );
    let a = attributes(
        "GET",
        "/apis/apps/v1/deployments",
        "labelSelector=x&watch=true",
    )
    .unwrap();
    assert_eq!((a.verb.as_str(), a.group.as_str()), ("watch", "apps"));
    let a = attributes("GET", "/apis/apps/v1/namespaces/n/deployments", "limit=500").unwrap();
    assert_eq!(
        (a.verb.as_str(), a.namespace.as_deref()),
        ("list", Some("n"))
    );
    let a = attributes("PATCH", "/apis/g/v1/namespaces/n/things/t/status", "").unwrap();
    assert_eq!(
        (a.verb.as_str(), a.subresource.as_deref()),
        ("patch", Some("status"))
    );
    let a = attributes("GET", "/api/v1/namespaces/kube-system", "").unwrap();
    assert_eq!(
        (
            a.resource.as_str(),
            a.name.as_deref(),
            a.namespace.as_deref()
        ),
        ("namespaces", Some("kube-system"), None)
    );
    let a = attributes("DELETE", "/api/v1/namespaces/n/services", "").unwrap();
    assert_eq!(a.verb, "deletecollection");
    assert!(attributes("GET", "/apis", "").is_none());
    assert!(attributes("GET", "/version", "").is_none());
}

#[test]
fn the_rules_are_crossplanes_role_and_the_packages_requests_and_nothing_else() {
    let rules = provider_rules();
    let may = |method: &str, path: &str| allowed(&rules, &attributes(method, path, "").unwrap());
    // Crossplane's role: own kinds without delete, status, Secrets, Leases.
    assert!(may(
        "PATCH",
        "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/n/litellmteams/t"
    ));
    assert!(may(
        "PATCH",
        "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/n/litellmteams/t/status"
    ));
    assert!(!may(
        "DELETE",
        "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/n/litellmteams/t"
    ));
    assert!(may("DELETE", "/api/v1/namespaces/n/secrets/s"));
    assert!(may(
        "PUT",
        "/apis/coordination.k8s.io/v1/namespaces/n/leases/l"
    ));
    // Events are core ones, which Crossplane's role grants.
    assert!(may("POST", "/api/v1/namespaces/n/events"));
    assert!(!may("POST", "/apis/events.k8s.io/v1/namespaces/n/events"));
    // Requested: a provisioned workload, namespace labels.
    assert!(may("POST", "/apis/apps/v1/namespaces/n/deployments"));
    assert!(may("GET", "/api/v1/namespaces/n"));
    assert!(may("GET", "/api/v1/namespaces"));
    let watch = attributes("GET", "/api/v1/namespaces", "watch=true").unwrap();
    assert_eq!(watch.verb, "watch");
    assert!(allowed(&rules, &watch));
    // Never: CRDs, RBAC, nodes, changes to namespaces.
    assert!(!may("GET", "/api/v1/nodes"));
    assert!(!may("PATCH", "/api/v1/namespaces/n"));
    assert!(!may(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    ));
    assert!(!may(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    ));
    assert!(!may("PATCH", "/apis/apps/v1/namespaces/n/deployments/d"));
}

/// Crossplane's role, as rendered, names exactly the CRDs the registry
/// generates (those of the package: `tests/integration/generated.rs`), each
/// with its status.
#[test]
fn the_crossplane_role_names_exactly_the_packages_crds() {
    let mut expected = BTreeSet::new();
    for crd in litellm_crossplane::api::generate::managed_crds() {
        expected.insert(format!("{}/status", crd.spec.names.plural));
        expected.insert(crd.spec.names.plural);
    }
    let rules = crossplane_system_rules();
    let own = &rules[0];
    assert_eq!(own.api_groups, [litellm_crossplane::api::GROUP]);
    assert_eq!(
        own.resources.iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
    assert_eq!(
        own.verbs,
        ["get", "list", "watch", "update", "patch", "create"]
    );
    assert_eq!(
        expected.len(),
        2 * (litellm_crossplane::api::MANAGED_KINDS.len() + 1),
        "every kind of the registry and the instance"
    );
}

/// For Crossplane v2, which dropped `permissionRequests`, the ClusterRole
/// the README has admins apply grants the same rules.
#[test]
fn the_shipped_cluster_role_grants_exactly_the_permission_requests() {
    let text = std::fs::read_to_string("examples/provider/runtime-config/rbac.yaml").unwrap();
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let role = documents
        .iter()
        .find(|d| {
            d["kind"] == "ClusterRole" && d["metadata"]["name"] == "provider-litellm:permissions"
        })
        .expect("the ClusterRole");
    let rules: Vec<support::authz::Rule> = serde_json::from_value(role["rules"].clone()).unwrap();
    assert_eq!(rules, permission_requests());
    assert_eq!(
        role["metadata"]["labels"]["rbac.crossplane.io/aggregate-to-allowed-provider-permissions"],
        "true"
    );
    let binding = documents
        .iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .expect("the ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], "provider-litellm:permissions");
    assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
}

#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_proxy_denies_what_the_rules_do_not_grant_with_a_403() {
    let Some(kube) = k8s::client().await else {
        return;
    };
    let proxy = AuthzProxy::start(kube, provider_rules(), true).await;
    let client = proxy.client();
    let roles: Api<ClusterRole> = Api::all(client.clone());
    match roles.list(&Default::default()).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403),
        other => panic!("listing cluster roles must be forbidden: {other:?}"),
    }
    let namespaces: Api<Namespace> = Api::all(client.clone());
    assert!(namespaces.get("default").await.is_ok(), "get is requested");
    assert_eq!(proxy.denied().len(), 1, "{:?}", proxy.denied());
    assert!(
        proxy.denied()[0].contains("list rbac.authorization.k8s.io/clusterroles"),
        "{:?}",
        proxy.denied()
    );
}

/// Every permission the package requests is used by a run of the provider
/// that does everything it does (declares no more than it uses), and the
/// run needs nothing else (no denial).
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn every_requested_permission_is_used_and_nothing_else_is_needed() {
    let setup = Setup {
        instance_controller: true,
        ..Setup::default()
    };
    let Some(world) = world_with("rbac-all", setup).await else {
        return;
    };
    // A tenant of another namespace, admitted by label only: the instance
    // reads its labels.
    let tenant = world.tenant("rbac-all-tenant").await;
    let namespaces: Api<Namespace> = Api::all(world.kube.clone());
    let label = json!({"metadata": {"labels": {"rbac-all": "tenant"}}});
    namespaces
        .patch(
            &tenant.namespace,
            &PatchParams::default(),
            &Patch::Merge(&label),
        )
        .await
        .unwrap();
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let by_label = json!({"spec": {"allowedNamespaces": {
        "names": [], "selector": {"matchLabels": {"rbac-all": "tenant"}},
    }}});
    instances
        .patch("proxy", &PatchParams::default(), &Patch::Merge(&by_label))
        .await
        .unwrap();
    let team: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "web",
        json!({}),
        json!({"forProvider": {"teamAlias": "web", "models": ["gpt-4o"]}}),
    );
    let tenant_teams = tenant.api::<LiteLLMTeam>(&world);
    tenant_teams
        .create(&PostParams::default(), &team)
        .await
        .unwrap();
    wait_for(&tenant_teams, "web", "the tenant's team Ready", |t| {
        support::provider::is(t, "Ready", "True")
    })
    .await;

    // The same failure over and over: the event is recorded, then patched.
    let keys = world
        .create(&manifest::<LiteLLMVirtualKey>(
            "LiteLLMVirtualKey",
            "waiting",
            json!({}),
            json!({"forProvider": {"teamRef": {"name": "missing"}}}),
        ))
        .await;

    // A provisioned proxy: its workload written, observed, changed, and
    // deleted after its dependents.
    let secrets: Api<Secret> = Api::namespaced(world.kube.clone(), &world.namespace);
    secrets
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({
                "metadata": {"name": "litellm-db"},
                "stringData": {"username": "llm", "password": "pw"},
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    let gw: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "gw"},
        "spec": {
            "masterKey": {"autoGenerate": true},
            "database": {
                "host": "postgres.internal", "port": 5432, "name": "litellm",
                "credentialsSecretRef": {"name": "litellm-db"},
                "migration": {"enabled": true},
            },
        },
    }))
    .unwrap();
    instances.create(&PostParams::default(), &gw).await.unwrap();
    // Its Deployment waits for the migration Job, which no kubelet runs
    // here: a second instance without a migration has its Deployment
    // written, changed and deleted.
    let jobs: Api<k8s_openapi::api::batch::v1::Job> =
        Api::namespaced(world.kube.clone(), &world.namespace);
    eventually("the migration Job", || async {
        jobs.list(&Default::default())
            .await
            .unwrap()
            .items
            .first()
            .cloned()
    })
    .await;
    let web: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "web"},
        "spec": {
            "masterKey": {"autoGenerate": true},
            // Written where the API server serves the APIs.
            "workload": {"exposure": {
                "ingress": {"host": "web.example.com"},
                "httpRoute": {"parentRefs": [{"name": "public"}]},
            }},
        },
    }))
    .unwrap();
    instances
        .create(&PostParams::default(), &web)
        .await
        .unwrap();
    let deployments: Api<Deployment> = Api::namespaced(world.kube.clone(), &world.namespace);
    eventually("the proxy's Deployment", || async {
        deployments.get_opt("web").await.unwrap()
    })
    .await;
    let scale = json!({"spec": {"workload": {"replicas": 2}}});
    instances
        .patch("web", &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .unwrap();
    eventually("the Deployment updated", || async {
        let d = deployments.get("web").await.unwrap();
        (d.spec.replicas == Some(2)).then_some(())
    })
    .await;
    // Two replicas: a PodDisruptionBudget (where the API server serves
    // policy/v1), written, changed and deleted with the instance.
    let pdb_served = match world.kube.list_api_group_resources("policy/v1").await {
        Ok(list) => list
            .resources
            .iter()
            .any(|r| r.name == "poddisruptionbudgets"),
        Err(_) => false,
    };
    if pdb_served {
        let budgets: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> =
            Api::namespaced(world.kube.clone(), &world.namespace);
        eventually("the proxy's PodDisruptionBudget", || async {
            budgets.get_opt("web").await.unwrap()
        })
        .await;
        let loosen =
            json!({"spec": {"workload": {"podDisruptionBudget": {"maxUnavailable": "50%"}}}});
        instances
            .patch("web", &PatchParams::default(), &Patch::Merge(&loosen))
            .await
            .unwrap();
        eventually("the PodDisruptionBudget updated", || async {
            let b = budgets.get("web").await.unwrap();
            (serde_json::to_value(b.spec).unwrap()["maxUnavailable"] == "50%").then_some(())
        })
        .await;
    }
    for name in ["gw", "web"] {
        instances
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        eventually("the provisioned instance gone", || async {
            instances
                .get_opt(name)
                .await
                .unwrap()
                .is_none()
                .then_some(())
        })
        .await;
    }
    assert!(deployments.get_opt("web").await.unwrap().is_none());
    if pdb_served {
        let budgets: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> =
            Api::namespaced(world.kube.clone(), &world.namespace);
        assert!(budgets.get_opt("web").await.unwrap().is_none());
    }
    assert!(jobs
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .is_empty());

    // The repeated event of the waiting key has been patched by now.
    eventually("the repeated event patched", || async {
        world
            .authz
            .used()
            .contains(&("patch".into(), String::new(), "events".into()))
            .then_some(())
    })
    .await;
    keys.delete("waiting", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&keys, "waiting").await;
    tenant_teams
        .delete("web", &DeleteParams::default())
        .await
        .unwrap();
    wait_gone(&tenant_teams, "web").await;

    // A provider over all namespaces keeps the namespaces' labels in a
    // watch cache (the world's controllers watch one namespace, which
    // reads them when asked): the same reflector, through the proxy.
    let (labels, stream) =
        litellm_crossplane::provider::watch::cache::namespaces(&world.provider_client());
    let watching = tokio::spawn(litellm_crossplane::provider::watch::cache::drain(
        stream,
        "Namespaces",
    ));
    tokio::time::timeout(std::time::Duration::from_secs(30), labels.synced.wait())
        .await
        .expect("the namespace cache fills");
    assert!(
        labels
            .store
            .state()
            .iter()
            .any(|ns| ns.metadata.name.as_deref() == Some(world.namespace.as_str())),
        "the cache holds the world's namespace"
    );
    eventually("the namespace watch", || async {
        world
            .authz
            .used()
            .contains(&("watch".into(), String::new(), "namespaces".into()))
            .then_some(())
    })
    .await;
    watching.abort();

    let used = world.authz.used();
    // The API server harness serves no autoscaling/v2 (see
    // tests/harness/k8s/README.md), so no HorizontalPodAutoscaler can exist to
    // be read, created, updated or deleted there: of those permissions only
    // `list` (the provider's clean-up of autoscalers no longer asked for,
    // every round) is used. The rendered autoscalers are unit-tested
    // (provider::instance::build).
    //
    // Likewise Ingress where the API server does not serve
    // networking.k8s.io/v1 (the harness's is optional), and HTTPRoute,
    // whose CRD only provider_instance_exposure's test installs, for a
    // while (CRDs are cluster-wide, so whether it is there while this test
    // runs is chance): of those only `list` (the clean-up of exposures no
    // longer asked for) is sure to be used. Their writes are tested there.
    let ingress_served = match world
        .kube
        .list_api_group_resources("networking.k8s.io/v1")
        .await
    {
        Ok(list) => list.resources.iter().any(|r| r.name == "ingresses"),
        Err(_) => false,
    };
    // ServiceMonitors likewise: the world's instances ask for none, and the
    // Prometheus Operator's CRD comes and goes with
    // provider_instance_monitoring, which uses every other verb through
    // this same authorizing proxy (and checks that it did). Nor, on a
    // harness built before it served policy/v1, can a PodDisruptionBudget
    // exist: then only its `list` is used too.
    let unserved = |(verb, group, _): &(String, String, String)| {
        verb != "list"
            && (group == "autoscaling"
                || group == "monitoring.coreos.com"
                || (group == "policy" && !pdb_served)
                || group == "gateway.networking.k8s.io"
                || (group == "networking.k8s.io" && !ingress_served))
    };
    let unused: Vec<_> = permission_requests()
        .iter()
        .flat_map(|rule| rule.triples())
        .filter(|triple| !used.contains(triple) && !unserved(triple))
        .collect();
    assert!(
        unused.is_empty(),
        "requested but never used: {unused:?}\nused: {used:?}"
    );
    support::authz::assert_no_denials();
}

/// The cluster id needs no forbidden read: it lives in a ConfigMap of the
/// provider's namespace, created once, the same on every start; an install
/// that may still read `kube-system` keeps the id earlier releases took.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_cluster_id_is_kept_in_a_config_map_the_provider_may_create() {
    let Some(kube) = k8s::client().await else {
        return;
    };
    k8s::install_crds(&kube).await;
    let namespace = k8s::namespace(&kube, "rbac-cluster-id").await;
    // Quiet: the one denial expected is the attempt to read kube-system.
    let proxy = AuthzProxy::start(kube.clone(), provider_rules(), true).await;
    let provider = proxy.client();
    let first = cluster_id::resolve(&provider, None, &namespace)
        .await
        .unwrap();
    assert_eq!(first.len(), 36, "{first}");
    let again = cluster_id::resolve(&provider, None, &namespace)
        .await
        .unwrap();
    assert_eq!(again, first, "the same id on every start");
    let maps: Api<ConfigMap> = Api::namespaced(kube.clone(), &namespace);
    let stored = maps.get(cluster_id::CONFIG_MAP).await.unwrap();
    assert_eq!(stored.data.unwrap()[cluster_id::KEY], first);
    assert!(
        proxy
            .denied()
            .iter()
            .all(|d| d.contains("get core/namespaces")),
        "{:?}",
        proxy.denied()
    );
    // A flag wins and stores nothing.
    let flagged = cluster_id::resolve(&provider, Some("given".into()), "elsewhere")
        .await
        .unwrap();
    assert_eq!(flagged, "given");

    // An earlier install, which could read kube-system, keeps that id.
    let legacy_namespace = k8s::namespace(&kube, "rbac-cluster-id-legacy").await;
    let kube_system = Api::<Namespace>::all(kube.clone())
        .get("kube-system")
        .await
        .unwrap()
        .metadata
        .uid
        .unwrap();
    let legacy = cluster_id::resolve(&kube, None, &legacy_namespace)
        .await
        .unwrap();
    assert_eq!(legacy, kube_system);
}

/// Crossplane v2 renders a provider's role from its CRDs alone (its own
/// kinds; Secrets, ConfigMaps, core Events and Leases) and ignores
/// `permissionRequests`. Under exactly that role, attaching, a tenant
/// admitted by name, its team and key with their connection Secret, and
/// events need nothing more: no request is denied, and no Namespace,
/// Deployment or Job is even listed. A provisioned instance, which needs
/// more, says which grant it lacks.
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn under_crossplane_v2s_role_alone_everything_but_provisioning_works() {
    let setup = Setup {
        instance_controller: true,
        rules: Some(crossplane_system_rules()),
        ..Setup::default()
    };
    let Some(world) = world_with("rbac-v2", setup).await else {
        return;
    };
    let tenant = world.tenant("rbac-v2-tenant").await;
    let teams = tenant.api::<LiteLLMTeam>(&world);
    let team: LiteLLMTeam = world.tenant_manifest(
        "LiteLLMTeam",
        "web",
        json!({}),
        json!({"forProvider": {
            "teamAlias": format!("v2-{}", k8s::unique_suffix()),
            "models": ["gpt-4o"],
        }}),
    );
    teams.create(&PostParams::default(), &team).await.unwrap();
    let keys = tenant.api::<LiteLLMVirtualKey>(&world);
    let key: LiteLLMVirtualKey = world.tenant_manifest(
        "LiteLLMVirtualKey",
        "ci",
        json!({}),
        json!({
            "forProvider": {"teamRef": {"name": "web"}, "models": ["gpt-4o"]},
            "writeConnectionSecretToRef": {"name": "ci-key"},
        }),
    );
    keys.create(&PostParams::default(), &key).await.unwrap();
    wait_for(&teams, "web", "the tenant's team Ready", |t| {
        support::provider::is(t, "Ready", "True")
    })
    .await;
    wait_for(&keys, "ci", "the tenant's key Ready", |k| {
        support::provider::is(k, "Ready", "True")
    })
    .await;
    let secrets: Api<Secret> = Api::namespaced(world.kube.clone(), &tenant.namespace);
    let written = secrets.get("ci-key").await.unwrap();
    assert_eq!(
        written.type_.as_deref(),
        Some("connection.crossplane.io/v1alpha1")
    );
    eventually("the team's CreatedExternalResource event", || async {
        support::provider::events(&world.kube, &tenant.namespace)
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("CreatedExternalResource"))
    })
    .await;
    let instances: Api<LiteLLMInstance> = Api::namespaced(world.kube.clone(), &world.namespace);
    eventually("the attached instance Synced", || async {
        let proxy = instances.get("proxy").await.unwrap();
        let conditions = proxy.status?.conditions;
        conditions
            .iter()
            .any(|c| c.type_ == "Synced" && c.status == "True")
            .then_some(())
    })
    .await;
    assert!(
        world.authz.denied().is_empty(),
        "denied under Crossplane v2's role: {:?}",
        world.authz.denied()
    );
    let used = world.authz.used();
    assert!(
        !used
            .iter()
            .any(|(_, group, resource)| resource == "namespaces"
                || group == "apps"
                || group == "batch"
                || group == "events.k8s.io"),
        "nothing but what the role grants is even tried: {used:?}"
    );

    // A provisioned instance: the provider may not write its workload, and
    // says which grant it needs.
    let gw: LiteLLMInstance = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "gw"},
        "spec": {"masterKey": {"autoGenerate": true}},
    }))
    .unwrap();
    instances.create(&PostParams::default(), &gw).await.unwrap();
    let message = eventually("the provisioned instance's Synced=False", || async {
        let gw = instances.get("gw").await.unwrap();
        gw.status?
            .conditions
            .into_iter()
            .find(|c| c.type_ == "Synced" && c.status == "False")?
            .message
    })
    .await;
    assert!(
        message.contains("examples/provider/runtime-config/rbac.yaml")
            && message.contains("may not read or write"),
        "{message}"
    );
    let denied = world.authz.denied();
    assert!(!denied.is_empty());
    // The namespace too: provisioning first reads its label
    // (litellm.crossplane.io/provision).
    let workload = [
        "apps/",
        "batch/",
        "services",
        "serviceaccounts",
        "configmaps",
        "get core/namespaces",
    ];
    assert!(
        denied
            .iter()
            .all(|d| workload.iter().any(|w| d.contains(w))),
        "only the workload is denied: {denied:?}"
    );
    // Let it go: the workload it never had is not torn down under this role.
    let release = json!({"metadata": {"finalizers": null}});
    instances
        .delete("gw", &DeleteParams::default())
        .await
        .unwrap();
    // (It may be gone already.)
    let _ = instances
        .patch("gw", &PatchParams::default(), &Patch::Merge(&release))
        .await;
}

/// A rule restricted by `resourceNames` grants only those names, as RBAC
/// does: a get, update, patch or delete of one, a list or watch selecting
/// one by `metadata.name`; never a create or a list of everything.
#[test]
fn resource_names_restrict_a_rule_to_those_names() {
    let rules: Vec<support::authz::Rule> = serde_json::from_value(json!([{
        "apiGroups": [""],
        "resources": ["configmaps"],
        "verbs": ["get", "list", "watch", "update", "create"],
        "resourceNames": ["provider-litellm-cluster-id"],
    }]))
    .unwrap();
    let may = |method: &str, path: &str, query: &str| {
        allowed(&rules, &attributes(method, path, query).unwrap())
    };
    let named = "/api/v1/namespaces/n/configmaps/provider-litellm-cluster-id";
    assert!(may("GET", named, ""));
    assert!(may("PUT", named, ""));
    assert!(!may("GET", "/api/v1/namespaces/n/configmaps/other", ""));
    assert!(!may("PUT", "/api/v1/namespaces/n/configmaps/other", ""));
    assert!(
        !may("GET", "/api/v1/namespaces/n/configmaps", ""),
        "a list of all"
    );
    assert!(may(
        "GET",
        "/api/v1/namespaces/n/configmaps",
        "fieldSelector=metadata.name%3Dprovider-litellm-cluster-id&watch=true"
    ));
    assert!(!may(
        "GET",
        "/api/v1/namespaces/n/configmaps",
        "fieldSelector=metadata.name%3Dother"
    ));
    assert!(
        !may("POST", "/api/v1/namespaces/n/configmaps", ""),
        "no name to grant"
    );
}
