//! `compose` on good and bad requests, without I/O: every bad input is a
//! fatal outcome naming its field, and arbitrary input never panics.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use litellm_crossplane::function::{compose, Observed, ObservedState, Outcome, Supplied};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Observed statuses by composition-resource name, the instance status, and
/// the `apiVersion` every observed object has (this project's when `None`).
#[derive(Default)]
struct Fixed(BTreeMap<String, Value>, Option<Value>, Option<&'static str>);

impl Fixed {
    fn api_version(&self) -> &'static str {
        self.2.unwrap_or(litellm_crossplane::api::API_VERSION)
    }
}

static NO_DETAILS: std::sync::LazyLock<HashMap<String, Vec<u8>>> =
    std::sync::LazyLock::new(HashMap::new);

impl ObservedState for Fixed {
    // Observed names are the naming tests' (`Named`).
    fn observed_names(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
    fn composed(&self, name: &str) -> Option<Observed<'_>> {
        self.0.get(name).map(|status| Observed {
            api_version: self.api_version(),
            status,
            connection_details: &NO_DETAILS,
        })
    }
    fn required_instance(&self) -> Supplied<'_> {
        match &self.1 {
            // A null status stands for "Crossplane looked and found none".
            Some(Value::Null) => Supplied::NotFound,
            Some(status) => Supplied::Found(Observed {
                api_version: self.api_version(),
                status,
                connection_details: &NO_DETAILS,
            }),
            None => Supplied::NotYet,
        }
    }
}

fn input() -> Value {
    json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "instance": {"reference": {"name": "shared", "namespace": "litellm"}},
        "policy": {"allowedModels": ["gpt-4o", "gpt-4o-mini"], "maxBudget": "100", "maxKeys": 3}
    })
}

fn xr(spec: Value) -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "AITeam",
        "metadata": {"name": "ml", "namespace": "team-ml"},
        "spec": spec
    })
}

fn good_spec() -> Value {
    json!({"team": {"models": ["gpt-4o"]}, "budget": {"maxBudget": "50", "duration": "30d"},
           "keys": [{"name": "ci"}]})
}

fn fatal_fields(outcome: Outcome) -> Vec<String> {
    match outcome {
        Outcome::Fatal(problems) => problems.into_iter().map(|p| p.field).collect(),
        Outcome::Composed(c) => panic!("composed: {:?}", c.resources.keys().collect::<Vec<_>>()),
    }
}

#[test]
fn each_bad_input_is_fatal_and_names_its_field() {
    let cases: Vec<(&str, Value, Option<Value>, &str)> = vec![
        ("no input", xr(good_spec()), None, "input"),
        (
            "two instance sources",
            xr(good_spec()),
            Some(
                json!({"instance": {"reference": {"name": "a"}, "attach": {"endpoint": "http://x", "masterKeySecretRef": {"name": "s", "key": "k"}}}}),
            ),
            "input.instance",
        ),
        (
            "unknown input field",
            xr(good_spec()),
            Some(json!({"instance": {"reference": {"name": "a"}}, "polcy": {}})),
            "input.polcy",
        ),
        (
            "wrong input kind",
            xr(good_spec()),
            Some(json!({"kind": "Resources", "instance": {"reference": {"name": "a"}}})),
            "input.kind",
        ),
        (
            "bad ttl",
            xr(good_spec()),
            Some(json!({"instance": {"reference": {"name": "a"}}, "ttl": "soon"})),
            "input.ttl",
        ),
        (
            "keys not a list",
            xr(json!({"keys": {"name": "ci"}})),
            Some(input()),
            "spec.keys",
        ),
        (
            "a key without a name",
            xr(json!({"keys": [{"alias": "x"}]})),
            Some(input()),
            "spec.keys[0]",
        ),
        (
            "budget of the wrong type",
            xr(json!({"budget": {"maxBudget": [1]}})),
            Some(input()),
            "spec.budget.maxBudget",
        ),
        (
            "a 30x duration",
            xr(json!({"budget": {"maxBudget": "10", "duration": "30x"}})),
            Some(input()),
            "spec.budget.duration",
        ),
        (
            "duplicate key names",
            xr(
                json!({"budget": {"maxBudget": "10", "duration": "1d"}, "keys": [{"name": "a"}, {"name": "a"}]}),
            ),
            Some(input()),
            "spec.keys[1].name",
        ),
        (
            "over the budget ceiling",
            xr(json!({"budget": {"maxBudget": "100.01", "duration": "1d"}})),
            Some(input()),
            "spec.budget.maxBudget",
        ),
        (
            "a model not allowed",
            xr(json!({"budget": {"maxBudget": "1", "duration": "1d"}, "team": {"models": ["o1"]}})),
            Some(input()),
            "spec.team.models[0]",
        ),
    ];
    for (what, xr, input, field) in cases {
        let fields = fatal_fields(compose(&xr, input.as_ref(), &Fixed::default()));
        assert!(
            fields.iter().any(|f| f == field),
            "{what}: expected {field}, got {fields:?}"
        );
    }
}

/// Each composed resource Crossplane has not created yet is named once as
/// added (a `Normal` result); observed ones are not.
#[test]
fn resources_not_observed_yet_are_reported_as_added() {
    let (xr, input) = every_kind();
    let Outcome::Composed(first) = compose(&xr, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    assert_eq!(
        first.added,
        [
            "adds LiteLLMBudget ml.budget (budget)",
            "adds LiteLLMInstance ml-litellm (instance)",
            "adds LiteLLMVirtualKey ml.key-ci (key-ci)",
            "adds LiteLLMModel ml.model-gpt-4o (model-gpt-4o)",
            "adds LiteLLMTeam ml.team (team)",
        ]
    );
    let observed = Fixed(
        ["instance", "team", "budget", "key-ci"]
            .map(|n| (n.to_string(), json!({})))
            .into(),
        None,
        None,
    );
    let Outcome::Composed(later) = compose(&xr, Some(&input), &observed) else {
        panic!("fatal")
    };
    assert_eq!(
        later.added,
        ["adds LiteLLMModel ml.model-gpt-4o (model-gpt-4o)"]
    );
}

/// Each reported status field goes where the input says, or nowhere: an
/// XRD that declares other fields (or none) still composes.
#[test]
fn status_fields_go_where_the_input_says_or_nowhere() {
    let with_status = |status: Value| {
        let mut input = input();
        input["status"] = status;
        compose(&xr(good_spec()), Some(&input), &Fixed::default())
    };
    let Outcome::Composed(default) = with_status(json!({})) else {
        panic!("fatal")
    };
    let fields: Vec<&str> = default.xr_status.keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        ["instanceReady", "keys", "ready"],
        "nothing observed yet"
    );

    let Outcome::Composed(moved) = with_status(json!({
        "keys": "status.litellm.keys", "instanceReady": "status.litellm.proxyReady",
        "ready": "", "teamId": ""
    })) else {
        panic!("fatal")
    };
    assert_eq!(
        Value::Object(moved.xr_status.clone()),
        json!({"litellm": {"keys": default.xr_status["keys"], "proxyReady": false}})
    );

    for (status, field) in [
        (json!({"teamId": "spec.teamId"}), "input.status.teamId"),
        (json!({"ready": "status."}), "input.status.ready"),
        (json!({"ready": "status.keys"}), "input.status.ready"),
        (
            json!({"keys": "status.a", "ready": "status.a.b"}),
            "input.status.ready",
        ),
        (json!({"readyy": "status.x"}), "input.status"),
    ] {
        let fields = fatal_fields(with_status(status.clone()));
        assert!(
            fields.iter().any(|f| f.starts_with(field)),
            "{status}: {fields:?}"
        );
    }
}

/// Fields the function does not read (the XRD may declare them for another
/// step) are left alone with a warning naming each, not a Fatal.
#[test]
fn unknown_fields_of_the_request_are_warned_about_not_fatal() {
    let mut spec = good_spec();
    spec["team"]["costCenter"] = json!("cc-42");
    spec["keys"][0]["owner"] = json!("ci-bot");
    let supplied = Fixed(BTreeMap::new(), Some(json!({"ready": true})), None);
    let Outcome::Composed(composed) = compose(&xr(spec), Some(&input()), &supplied) else {
        panic!("an unknown field is not fatal")
    };
    let warned: Vec<&str> = composed.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(warned, ["spec.team.costCenter", "spec.keys[0].owner"]);
    assert!(composed.resources.contains_key("key-ci"));
    let team = &composed.resources["team"].resource["spec"]["forProvider"];
    assert!(team.get("costCenter").is_none(), "{team}");
}

/// A referenced instance Crossplane has not supplied is explained, in a
/// Warning naming the input field and in the InstanceReady condition: not
/// fetched yet (the first call), or fetched and not found.
#[test]
fn a_missing_referenced_instance_is_explained() {
    let explained = |observed: &Fixed| {
        let Outcome::Composed(c) = compose(&xr(good_spec()), Some(&input()), observed) else {
            panic!("fatal")
        };
        let warning = c
            .warnings
            .iter()
            .find(|p| p.field == "input.instance.reference")
            .map(|p| p.message.clone());
        let condition = c
            .conditions
            .iter()
            .find(|c| c.type_ == "InstanceReady")
            .map(|c| (c.status, c.reason, c.message.clone()))
            .unwrap();
        (warning, condition)
    };
    let (warning, (status, reason, message)) = explained(&Fixed::default());
    let warning = warning.expect("a warning before Crossplane supplied it");
    assert!(
        warning.contains("has not supplied LiteLLMInstance litellm/shared yet"),
        "{warning}"
    );
    assert!(warning.contains("Crossplane v2.0"), "{warning}");
    assert_eq!(
        (status, reason, message),
        (false, "InstanceNotFound", warning)
    );

    let (warning, (status, reason, message)) =
        explained(&Fixed(BTreeMap::new(), Some(Value::Null), None));
    let warning = warning.expect("a warning when Crossplane found none");
    assert!(
        warning.contains("found no LiteLLMInstance litellm/shared"),
        "{warning}"
    );
    assert_eq!(
        (status, reason, message),
        (false, "InstanceNotFound", warning)
    );

    // An object of another API group under the name is no instance either.
    let (warning, _) = explained(&Fixed(
        BTreeMap::new(),
        Some(json!({"ready": true})),
        Some("litellm.crossplane.io/v1alpha1"),
    ));
    assert!(warning.unwrap().contains("found no LiteLLMInstance"));

    let (warning, (status, reason, _)) =
        explained(&Fixed(BTreeMap::new(), Some(json!({"ready": true})), None));
    assert_eq!((warning, status, reason), (None, true, "Available"));
}

/// An instance rendered into the tenant's own namespace (a namespaced XR's,
/// or a legacy XR's claim's) needs the proxy's master key there: a Warning
/// says so and names the way out. A platform namespace in the input, or a
/// reference, does not.
#[test]
fn an_instance_rendered_into_the_tenants_namespace_is_warned_about() {
    let attach = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                   "masterKeySecretRef": {"name": "master", "key": "k"}}});
    let provision = json!({"provision": {"masterKey": {"autoGenerate": true}}});
    let legacy = |spec: Value| {
        let mut xr = xr(spec);
        let metadata = xr["metadata"].as_object_mut().unwrap();
        metadata.remove("namespace");
        metadata.insert(
            "labels".into(),
            json!({"crossplane.io/claim-namespace": "apps"}),
        );
        xr
    };
    let exposure = |xr: Value, instance: &Value, namespace: Option<&str>| {
        let mut input = input();
        input["instance"] = instance.clone();
        if let Some(ns) = namespace {
            input["namespace"] = json!(ns);
        }
        let Outcome::Composed(c) = compose(&xr, Some(&input), &Fixed::default()) else {
            panic!("fatal")
        };
        c.warnings
            .into_iter()
            .filter(|p| p.field.starts_with("input.instance"))
            .map(|p| (p.field, p.message))
            .collect::<Vec<_>>()
    };
    let warned = exposure(xr(good_spec()), &attach, None);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].0, "input.instance.attach");
    for part in [
        "tenant's namespace team-ml",
        "Secret master",
        "input.instance.reference",
        "allowedNamespaces",
    ] {
        assert!(warned[0].1.contains(part), "{part}: {}", warned[0].1);
    }
    let warned = exposure(legacy(good_spec()), &provision, None);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].0, "input.instance.provision");
    assert!(
        warned[0].1.contains("tenant's namespace apps"),
        "{}",
        warned[0].1
    );
    assert!(warned[0].1.contains("salt key"), "{}", warned[0].1);

    // The platform's own namespace for a legacy XR's resources: no tenant reads it.
    assert_eq!(exposure(legacy(good_spec()), &attach, Some("litellm")), []);
    assert_eq!(
        exposure(legacy(good_spec()), &provision, Some("litellm")),
        []
    );
}

/// With `usages`, each entity rendered against a rendered instance gets a
/// Crossplane Usage of that instance, so Crossplane deletes the instance
/// last; its readiness is the Usage's own Ready condition. With a
/// reference there is nothing to order: a Warning, and no Usage.
#[test]
fn usages_make_crossplane_delete_a_rendered_instance_last() {
    let mut input = input();
    input["instance"] = json!({"provision": {"masterKey": {"autoGenerate": true}}});
    input["usages"] = json!(true);
    let mut spec = good_spec();
    spec["models"] = json!([{"name": "gpt-4o", "model": "openai/gpt-4o",
                             "apiKeySecretRef": {"name": "openai", "key": "k"}}]);
    let mut observed = Fixed::default();
    observed.0.insert(
        "usage-team".into(),
        json!({"conditions": [{"type": "Ready", "status": "True"}]}),
    );
    // Observed under its own API group: the Usage's, not this project's.
    struct UsageObserved(Fixed);
    impl ObservedState for UsageObserved {
        fn observed_names(&self) -> BTreeMap<String, String> {
            BTreeMap::new()
        }
        fn composed(&self, name: &str) -> Option<Observed<'_>> {
            self.0 .0.get(name).map(|status| Observed {
                api_version: "protection.crossplane.io/v1beta1",
                status,
                connection_details: &NO_DETAILS,
            })
        }
        fn required_instance(&self) -> Supplied<'_> {
            Supplied::NotYet
        }
    }
    let Outcome::Composed(c) = compose(&xr(spec.clone()), Some(&input), &UsageObserved(observed))
    else {
        panic!("fatal")
    };
    let usages: BTreeMap<&str, &Value> = c
        .resources
        .iter()
        .filter(|(name, _)| name.starts_with("usage-"))
        .map(|(name, d)| (name.as_str(), &d.resource))
        .collect();
    assert_eq!(
        usages.keys().copied().collect::<Vec<_>>(),
        [
            "usage-budget",
            "usage-key-ci",
            "usage-model-gpt-4o",
            "usage-team"
        ]
    );
    for (name, usage) in &usages {
        let user = &c.resources[name.trim_start_matches("usage-")].resource;
        assert_eq!(usage["apiVersion"], "protection.crossplane.io/v1beta1");
        assert_eq!(usage["kind"], "Usage");
        assert_eq!(usage["metadata"]["namespace"], "team-ml");
        assert_eq!(usage["metadata"]["name"], format!("ml.{name}"));
        assert_eq!(
            usage["spec"]["of"],
            json!({"apiVersion": "litellm.m.crossplane.io/v1alpha1", "kind": "LiteLLMInstance",
                   "resourceRef": {"name": "ml-litellm"}})
        );
        assert_eq!(usage["spec"]["by"]["kind"], user["kind"]);
        assert_eq!(
            usage["spec"]["by"]["resourceRef"]["name"],
            user["metadata"]["name"]
        );
        assert_eq!(usage["spec"]["replayDeletion"], true);
    }
    assert_eq!(c.resources["usage-team"].ready, Some(true));
    assert_eq!(c.resources["usage-key-ci"].ready, None);
    assert!(!c.warnings.iter().any(|p| p.field == "input.usages"));

    let mut input = self::input();
    input["usages"] = json!(true);
    let Outcome::Composed(c) = compose(&xr(good_spec()), Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    assert!(!c.resources.keys().any(|n| n.starts_with("usage-")));
    assert!(
        c.warnings.iter().any(|p| p.field == "input.usages"),
        "{:?}",
        c.warnings
    );
}

/// The XR's labels and the input's `composed` sections reach the composed
/// resources, later sections winning: XR labels, `all`, the kind, `byName`.
/// Management policies go to managed kinds only.
#[test]
fn composed_resources_carry_the_xr_labels_and_the_inputs_metadata() {
    let mut input = input();
    input["instance"] = json!({"attach": {"endpoint": "http://litellm:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    input["composed"] = json!({
        "all": {"labels": {"env": "prod", "tier": "all"}, "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]},
        "team": {"labels": {"tier": "team"}},
        "keys": {"annotations": {"crossplane.io/poll-interval": "5m"}},
        "byName": {
            "key-ci": {"annotations": {"crossplane.io/external-name": "sk-adopted"},
                       "managementPolicies": ["Observe"], "labels": {"tier": "ci"}},
            "key-gone": {"labels": {"x": "y"}}
        }
    });
    let mut xr = xr(good_spec());
    xr["metadata"]["labels"] =
        json!({"team": "ml", "crossplane.io/claim-name": "ml", "tier": "xr"});
    let Outcome::Composed(c) = compose(&xr, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let meta = |name: &str| c.resources[name].resource["metadata"].clone();
    let policies = |name: &str| {
        c.resources[name].resource["spec"]
            .get("managementPolicies")
            .cloned()
    };
    assert_eq!(
        meta("team")["labels"],
        json!({"team": "ml", "env": "prod", "tier": "team"})
    );
    assert_eq!(
        meta("budget")["labels"],
        json!({"team": "ml", "env": "prod", "tier": "all"})
    );
    assert_eq!(
        meta("key-ci")["labels"],
        json!({"team": "ml", "env": "prod", "tier": "ci"})
    );
    assert_eq!(
        meta("key-ci")["annotations"],
        json!({"crossplane.io/poll-interval": "5m", "crossplane.io/external-name": "sk-adopted"})
    );
    assert!(meta("team").get("annotations").is_none());
    assert_eq!(policies("key-ci"), Some(json!(["Observe"])));
    assert_eq!(
        policies("team"),
        Some(json!(["Observe", "Create", "Update", "LateInitialize"]))
    );
    // The instance is no managed resource: labels, but no policies.
    assert_eq!(meta("instance")["labels"]["env"], "prod");
    assert_eq!(policies("instance"), None);
    assert!(
        c.warnings
            .iter()
            .any(|p| p.field == "input.composed.byName.key-gone"),
        "{:?}",
        c.warnings
    );

    input["composed"] = json!({"xrLabels": false});
    let Outcome::Composed(c) = compose(&xr, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    assert!(c
        .resources
        .values()
        .all(|d| d.resource["metadata"].get("labels").is_none()));
}

/// Metadata Crossplane sets itself, an external name for many objects,
/// policies on an unmanaged kind or an unsupported combination, and keys
/// or values Kubernetes refuses are each a Fatal naming the field.
#[test]
fn bad_composed_metadata_is_fatal_and_names_the_field() {
    for (composed, field) in [
        (
            json!({"all": {"labels": {"crossplane.io/composite": "x"}}}),
            "input.composed.all.labels[\"crossplane.io/composite\"]",
        ),
        (
            json!({"keys": {"annotations": {"crossplane.io/external-name": "sk-1"}}}),
            "input.composed.keys.annotations[\"crossplane.io/external-name\"]",
        ),
        (
            json!({"all": {"annotations": {"crossplane.io/composition-resource-name": "x"}}}),
            "input.composed.all.annotations[\"crossplane.io/composition-resource-name\"]",
        ),
        (
            json!({"instance": {"managementPolicies": ["Observe"]}}),
            "input.composed.instance.managementPolicies",
        ),
        (
            json!({"byName": {"usage-team": {"managementPolicies": ["*"]}}}),
            "input.composed.byName.usage-team.managementPolicies",
        ),
        (
            json!({"team": {"managementPolicies": ["Create"]}}),
            "input.composed.team.managementPolicies",
        ),
        (
            json!({"models": {"labels": {"bad key": "v"}}}),
            "input.composed.models.labels[\"bad key\"]",
        ),
        (
            json!({"budget": {"labels": {"ok": "not ok!"}}}),
            "input.composed.budget.labels[\"ok\"]",
        ),
        (
            json!({"team": {"managementPolicies": ["Sometimes"]}}),
            "input.composed.team.managementPolicies[0]",
        ),
    ] {
        let mut input = input();
        input["composed"] = composed.clone();
        let fields = fatal_fields(compose(&xr(good_spec()), Some(&input), &Fixed::default()));
        assert_eq!(fields, [field], "{composed}");
    }
}

/// Model names as LiteLLM writes them (`openai/gpt-4o`, `llama3:70b`) map
/// onto object names deterministically; two names that map alike are a
/// Fatal naming both fields, never two models fighting over one object.
#[test]
fn model_names_map_onto_object_names_and_never_collide() {
    let input = json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "instance": {"provision": {"masterKey": {"autoGenerate": true}}}
    });
    let models = |names: &[&str]| {
        xr(json!({
            "team": {"models": names},
            "models": names.iter().map(|n| json!({"name": n, "model": "openai/gpt-4o"})).collect::<Vec<_>>()
        }))
    };
    let Outcome::Composed(composed) = compose(
        &models(&["openai/gpt-4o", "llama3:70b", "Mistral.Large_2"]),
        Some(&input),
        &Fixed::default(),
    ) else {
        panic!("fatal")
    };
    let objects: BTreeMap<&str, (&str, &str)> = composed
        .resources
        .iter()
        .filter(|(name, _)| name.starts_with("model-"))
        .map(|(name, d)| {
            (
                name.as_str(),
                (
                    d.resource["metadata"]["name"].as_str().unwrap(),
                    d.resource["spec"]["forProvider"]["modelName"]
                        .as_str()
                        .unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        objects,
        BTreeMap::from([
            (
                "model-openai-gpt-4o",
                ("ml.model-openai-gpt-4o", "openai/gpt-4o")
            ),
            ("model-llama3-70b", ("ml.model-llama3-70b", "llama3:70b")),
            (
                "model-mistral-large-2",
                ("ml.model-mistral-large-2", "Mistral.Large_2")
            ),
        ])
    );

    for (names, message) in [
        (
            &["gpt-4o", "GPT_4o"][..],
            "\"GPT_4o\" and \"gpt-4o\" (spec.models[0].name) both name the object model-gpt-4o",
        ),
        (
            &["a/b", "a:b", "a//b"][..],
            "(spec.models[0].name) both name the object model-a-b",
        ),
        (&["gpt-4o", "gpt-4o"][..], "duplicate model name \"gpt-4o\""),
    ] {
        let Outcome::Fatal(problems) = compose(&models(names), Some(&input), &Fixed::default())
        else {
            panic!("{names:?}: not fatal")
        };
        let problem = problems
            .iter()
            .find(|p| p.field == "spec.models[1].name")
            .unwrap_or_else(|| panic!("{names:?}: {problems:?}"));
        assert!(
            problem.message.contains(message),
            "{names:?}: {}",
            problem.message
        );
    }
    for name in ["///", "", &"a".repeat(64)] {
        let fields = fatal_fields(compose(&models(&[name]), Some(&input), &Fixed::default()));
        assert!(
            fields.iter().any(|f| f == "spec.models[0].name"),
            "{name:?}: {fields:?}"
        );
    }
}

/// The composition of `spec` under `policy` (with a referenced instance).
fn compose_under(policy: Value, spec: Value) -> Outcome {
    let input = json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "instance": {"reference": {"name": "shared", "namespace": "litellm"}},
        "fields": {"team": "spec.parameters.team"},
        "policy": policy
    });
    let mut spec = spec;
    if let Some(team) = spec.as_object_mut().and_then(|s| s.remove("team")) {
        spec["parameters"] = json!({ "team": team });
    }
    compose(&xr(spec), Some(&input), &Fixed::default())
}

/// `spec.forProvider` of the composed resource `name`.
fn for_provider(outcome: &Outcome, name: &str) -> Value {
    match outcome {
        Outcome::Composed(c) => c.resources[name].resource["spec"]["forProvider"].clone(),
        Outcome::Fatal(problems) => panic!("fatal: {problems:?}"),
    }
}

/// `field: message` of every policy default applied.
fn defaults(outcome: &Outcome) -> Vec<String> {
    match outcome {
        Outcome::Composed(c) => c.defaults.iter().map(ToString::to_string).collect(),
        Outcome::Fatal(problems) => panic!("fatal: {problems:?}"),
    }
}

#[test]
fn policy_holds_when_fields_are_left_out() {
    let exact = json!({"allowedModels": ["gpt-4o", "gpt-4o-mini"]});
    let budgets = json!({"maxBudget": "100", "maxKeyBudget": "30"});
    // (case, policy, XR spec, resource, field of forProvider, value, default reported)
    let cases: Vec<(&str, Value, Value, &str, &str, Value, &str)> = vec![
        (
            "team without models, exact allowed list",
            exact.clone(),
            json!({"team": {"alias": "ml"}}),
            "team",
            "models",
            json!(["gpt-4o", "gpt-4o-mini"]),
            "spec.parameters.team.models: not set, which LiteLLM reads as every model on the proxy: the policy's allowed models apply: gpt-4o, gpt-4o-mini",
        ),
        (
            "team with an explicit empty list, exact allowed list",
            exact.clone(),
            json!({"team": {"models": []}}),
            "team",
            "models",
            json!(["gpt-4o", "gpt-4o-mini"]),
            "spec.parameters.team.models: empty, which LiteLLM reads as every model on the proxy: the policy's allowed models apply: gpt-4o, gpt-4o-mini",
        ),
        (
            "team without a budget: the ceiling on the team",
            budgets.clone(),
            json!({}),
            "team",
            "maxBudget",
            json!("100"),
            "spec.budget.maxBudget: not set: the policy ceiling 100 applies",
        ),
        (
            "team without a budget: the ceiling on the budget",
            budgets.clone(),
            json!({}),
            "budget",
            "maxBudget",
            json!("100"),
            "spec.budget.maxBudget: not set: the policy ceiling 100 applies",
        ),
        (
            "budget without maxBudget keeps its other limits",
            budgets.clone(),
            json!({"budget": {"duration": "30d", "rpmLimit": 60}}),
            "budget",
            "maxBudget",
            json!("100"),
            "spec.budget.maxBudget: not set: the policy ceiling 100 applies",
        ),
        (
            "key without maxBudget: the key ceiling",
            budgets.clone(),
            json!({"budget": {"maxBudget": "80", "duration": "30d"}, "keys": [{"name": "ci"}]}),
            "key-ci",
            "maxBudget",
            json!("30"),
            "spec.keys[0].maxBudget: not set: 30 applies (the policy ceiling per key)",
        ),
        (
            "key without maxBudget under a smaller team budget",
            budgets.clone(),
            json!({"budget": {"maxBudget": "20", "duration": "30d"}, "keys": [{"name": "ci"}]}),
            "key-ci",
            "maxBudget",
            json!("20"),
            "spec.keys[0].maxBudget: not set: 20 applies (the team budget, below the policy ceiling 30 per key)",
        ),
        (
            "key without maxBudget and without a team budget",
            json!({"maxKeyBudget": "30"}),
            json!({"keys": [{"name": "ci", "budgetDuration": "7d"}]}),
            "key-ci",
            "maxBudget",
            json!("30"),
            "spec.keys[0].maxBudget: not set: 30 applies (the policy ceiling per key)",
        ),
        (
            "a defaulted key still links the team budget",
            budgets.clone(),
            json!({"budget": {"maxBudget": "80", "duration": "30d"}, "keys": [{"name": "ci"}]}),
            "key-ci",
            "budgetRef",
            json!({"name": "ml.budget"}),
            "spec.keys[0].maxBudget: not set: 30 applies (the policy ceiling per key)",
        ),
    ];
    for (what, policy, spec, resource, field, value, reported) in cases {
        let outcome = compose_under(policy, spec);
        assert_eq!(
            for_provider(&outcome, resource)[field],
            value,
            "{what}: {resource}.{field}"
        );
        assert!(
            defaults(&outcome).iter().any(|d| d == reported),
            "{what}: no default {reported:?} in {:?}",
            defaults(&outcome)
        );
    }
}

#[test]
fn fields_given_are_kept_and_nothing_is_defaulted() {
    let policy = json!({"allowedModels": ["gpt-4o", "gpt-4o-mini"], "maxBudget": "100", "maxKeyBudget": "30"});
    let spec = json!({"team": {"models": ["gpt-4o"]},
                      "budget": {"maxBudget": "50", "duration": "30d"},
                      "keys": [{"name": "ci", "maxBudget": "5", "models": []}]});
    let outcome = compose_under(policy, spec);
    assert_eq!(for_provider(&outcome, "team")["models"], json!(["gpt-4o"]));
    assert_eq!(for_provider(&outcome, "team")["maxBudget"], "50");
    let key = for_provider(&outcome, "key-ci");
    assert_eq!(key["maxBudget"], "5");
    // A key's empty list means its team's models in LiteLLM: rendered as given.
    assert_eq!(key["models"], json!([]));
    assert_eq!(defaults(&outcome), Vec::<String>::new());

    // Without a policy, nothing is filled in.
    let outcome = compose_under(json!({}), json!({"keys": [{"name": "ci"}]}));
    assert!(for_provider(&outcome, "team").get("models").is_none());
    assert!(for_provider(&outcome, "team").get("maxBudget").is_none());
    assert!(for_provider(&outcome, "key-ci").get("maxBudget").is_none());
    assert_eq!(defaults(&outcome), Vec::<String>::new());
}

#[test]
fn a_team_without_models_under_a_wildcard_policy_is_fatal() {
    let policy = json!({"allowedModels": ["gpt-4o", "claude-*"]});
    for team in [json!({"alias": "ml"}), json!({"models": []})] {
        let outcome = compose_under(policy.clone(), json!({ "team": team }));
        let Outcome::Fatal(problems) = outcome else {
            panic!("composed a team without models under {policy}")
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "spec.parameters.team.models");
        assert!(
            problems[0].message.contains("must list the team's models")
                && problems[0].message.contains("\"claude-*\""),
            "{}",
            problems[0].message
        );
    }
    // Listed models that the wildcard admits compose.
    let outcome = compose_under(policy, json!({"team": {"models": ["claude-3-5"]}}));
    assert_eq!(
        for_provider(&outcome, "team")["models"],
        json!(["claude-3-5"])
    );
}

#[test]
fn a_cluster_scoped_xr_without_claim_or_namespace_is_fatal() {
    let mut xr = xr(good_spec());
    xr["metadata"].as_object_mut().unwrap().remove("namespace");
    assert_eq!(
        fatal_fields(compose(&xr, Some(&input()), &Fixed::default())),
        ["input.namespace"]
    );
}

#[test]
fn a_referenced_instance_is_required_and_reported_when_supplied() {
    let outcome = compose(&xr(good_spec()), Some(&input()), &Fixed::default());
    let Outcome::Composed(first) = outcome else {
        panic!("fatal")
    };
    assert_eq!(first.requirements.len(), 1);
    assert_eq!(first.requirements[0].name, "shared");
    assert_eq!(first.requirements[0].namespace, "litellm");
    assert!(!first.resources.contains_key("instance"));
    assert_eq!(first.xr_status["instanceReady"], false);

    let instance = json!({"ready": true, "endpoint": "http://admin:4001", "gatewayEndpoint": "http://gw:4000"});
    let mut observed = Fixed(BTreeMap::new(), Some(instance), None);
    for name in ["team", "budget", "key-ci"] {
        observed.0.insert(
            name.into(),
            json!({"conditions": [{"type": "Ready", "status": "True"}], "atProvider": {"teamId": "t-1"}}),
        );
    }
    let Outcome::Composed(second) = compose(&xr(good_spec()), Some(&input()), &observed) else {
        panic!("fatal")
    };
    assert!(second.resources.values().all(|d| d.ready == Some(true)));
    assert_eq!(second.xr_status["ready"], true);
    assert_eq!(second.xr_status["teamId"], "t-1");
    assert_eq!(second.xr_status["endpoint"], "http://admin:4001");
    assert_eq!(second.xr_status["gatewayEndpoint"], "http://gw:4000");
    assert_eq!(
        second.resources["key-ci"].resource["spec"]["instanceRef"],
        json!({"name": "shared", "namespace": "litellm"})
    );
}

/// A claim with every kind: a provisioned instance, team, budget, key, model.
fn every_kind() -> (Value, Value) {
    let input = json!({
        "apiVersion": "litellm.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "instance": {"provision": {"masterKey": {"autoGenerate": true}}}
    });
    let spec = json!({
        "team": {"models": ["gpt-4o"]},
        "budget": {"maxBudget": "50", "duration": "30d"},
        "keys": [{"name": "ci"}],
        "models": [{"name": "gpt-4o", "model": "openai/gpt-4o"}]
    });
    (xr(spec), input)
}

#[test]
fn every_rendered_kind_is_in_the_namespaced_managed_group() {
    let (xr, input) = every_kind();
    let Outcome::Composed(c) = compose(&xr, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let kinds: std::collections::BTreeSet<&str> = c
        .resources
        .values()
        .map(|d| {
            assert_eq!(
                d.resource["apiVersion"], "litellm.m.crossplane.io/v1alpha1",
                "{}",
                d.resource
            );
            d.resource["kind"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "LiteLLMBudget",
            "LiteLLMInstance",
            "LiteLLMModel",
            "LiteLLMTeam",
            "LiteLLMVirtualKey"
        ]
        .into()
    );
}

/// Readiness is reported where the function knows it (the provider's
/// `Ready` condition, True or False) and left unspecified otherwise, so a
/// later step such as function-auto-ready can decide it.
#[test]
fn readiness_is_left_unspecified_until_the_provider_has_a_verdict() {
    let condition = |status: &str| json!({"conditions": [{"type": "Ready", "status": status}]});
    let (xr, input) = every_kind();
    let observed = Fixed(
        BTreeMap::from([
            ("team".to_string(), condition("True")),
            ("budget".to_string(), condition("False")),
            ("key-ci".to_string(), condition("Unknown")),
            ("model-gpt-4o".to_string(), json!({})),
        ]),
        None,
        None,
    );
    let Outcome::Composed(composed) = compose(&xr, Some(&input), &observed) else {
        panic!("fatal")
    };
    let ready: BTreeMap<&str, Option<bool>> = composed
        .resources
        .iter()
        .map(|(name, d)| (name.as_str(), d.ready))
        .collect();
    assert_eq!(
        ready,
        BTreeMap::from([
            ("instance", None),
            ("team", Some(true)),
            ("budget", Some(false)),
            ("key-ci", None),
            ("model-gpt-4o", None),
        ])
    );
    assert_eq!(composed.xr_status["ready"], false);
    assert_eq!(composed.xr_status["keys"][0]["ready"], false);
}

#[test]
fn observed_objects_of_another_group_are_not_read() {
    let ready = json!({"conditions": [{"type": "Ready", "status": "True"}],
                       "atProvider": {"teamId": "t-1"}, "ready": true, "endpoint": "http://x:4000"});
    let (xr, input) = every_kind();
    let names = ["instance", "team", "budget", "key-ci", "model-gpt-4o"];
    let observed = |api_version| {
        let statuses = names.iter().map(|n| (n.to_string(), ready.clone()));
        Fixed(statuses.collect(), None, api_version)
    };
    let Outcome::Composed(ours) = compose(&xr, Some(&input), &observed(None)) else {
        panic!("fatal")
    };
    assert!(
        ours.resources.values().all(|d| d.ready == Some(true)),
        "{:?}",
        ours.resources.keys()
    );
    assert_eq!(ours.xr_status["teamId"], "t-1");

    // The group before the rename: nothing is taken from such objects.
    let Outcome::Composed(old) = compose(
        &xr,
        Some(&input),
        &observed(Some("litellm.crossplane.io/v1alpha1")),
    ) else {
        panic!("fatal")
    };
    assert!(old.resources.values().all(|d| d.ready.is_none()));
    assert!(old.xr_status.get("teamId").is_none_or(Value::is_null));
    assert_eq!(old.xr_status["ready"], false);

    // Nor from a referenced instance of another group.
    let instance = json!({"ready": true, "endpoint": "http://admin:4001"});
    let foreign = Fixed(
        BTreeMap::new(),
        Some(instance),
        Some("litellm.crossplane.io/v1alpha1"),
    );
    let Outcome::Composed(c) = compose(&self::xr(good_spec()), Some(&self::input()), &foreign)
    else {
        panic!("fatal")
    };
    assert_eq!(c.xr_status["instanceReady"], false);
}

#[test]
fn output_is_deterministic() {
    let a = compose(&xr(good_spec()), Some(&input()), &Fixed::default());
    let b = compose(&xr(good_spec()), Some(&input()), &Fixed::default());
    assert_eq!(a, b);
}

/// Any JSON value: the shapes a broken XR or input could take.
fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "[a-z0-9.\\-_*/ ]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("30x"),
            Just("30d"),
            Just("1mo"),
            Just("-1"),
            Just("25.50"),
            Just("ci")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop_oneof![
            Just("name".to_string()),
            Just("keys".to_string()),
            Just("team".to_string()),
            Just("budget".to_string()),
            Just("models".to_string()),
            Just("maxBudget".to_string()),
            Just("duration".to_string()),
            Just("instance".to_string()),
            Just("reference".to_string()),
            Just("attach".to_string()),
            Just("policy".to_string()),
            Just("spec".to_string()),
            Just("metadata".to_string()),
            Just("namespace".to_string()),
            Just("model".to_string()),
            "[a-z]{1,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_requests_never_panic(spec in arbitrary_json(), raw_input in arbitrary_json()) {
        let _ = compose(&xr(spec.clone()), Some(&raw_input), &Fixed::default());
        let _ = compose(&xr(spec), Some(&input()), &Fixed::default());
    }

    #[test]
    fn arbitrary_xrs_with_a_good_input_compose_or_name_a_field(spec in arbitrary_json()) {
        match compose(&xr(spec), Some(&input()), &Fixed::default()) {
            Outcome::Composed(c) => prop_assert!(c.resources.contains_key("team")),
            Outcome::Fatal(problems) => {
                prop_assert!(!problems.is_empty());
                for p in problems {
                    prop_assert!(!p.field.is_empty() && !p.message.is_empty());
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The gRPC handler itself, with arbitrary structs where Crossplane puts
    /// the XR, the input and the observed resources.
    #[test]
    fn the_handler_never_panics_on_arbitrary_structs(
        composite in arbitrary_json(), raw_input in arbitrary_json(), observed in arbitrary_json(),
    ) {
        use function_sdk_rust::proto::v1::{Resource, RunFunctionRequest, State};
        use function_sdk_rust::resource::json_to_struct;
        let as_struct = |v: &Value| v.as_object().map(json_to_struct);
        let resource = |v: &Value| Resource { resource: as_struct(v), ..Default::default() };
        let mut state = State { composite: Some(resource(&composite)), ..Default::default() };
        for name in ["team", "budget", "instance", "key-ci"] {
            state.resources.insert(name.into(), resource(&observed));
        }
        let req = RunFunctionRequest { observed: Some(state), input: as_struct(&raw_input), ..Default::default() };
        let rsp = litellm_crossplane::function::grpc::run(&req);
        prop_assert!(rsp.meta.is_some());
    }
}

/// Observed names as the API server holds them, beside `Fixed`'s statuses.
struct Named(Fixed, BTreeMap<String, String>);

impl ObservedState for Named {
    fn observed_names(&self) -> BTreeMap<String, String> {
        self.1.clone()
    }
    fn composed(&self, name: &str) -> Option<Observed<'_>> {
        self.0.composed(name)
    }
    fn required_instance(&self) -> Supplied<'_> {
        self.0.required_instance()
    }
}

/// The object names of two XRs' composed resources, by kind.
fn object_names(xr_name: &str, spec: Value) -> BTreeSet<(String, String)> {
    let mut xr = xr(spec);
    xr["metadata"]["name"] = json!(xr_name);
    let mut input = input();
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    let Outcome::Composed(c) = compose(&xr, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let mut names = BTreeSet::new();
    for d in c.resources.values() {
        let kind = d.resource["kind"].as_str().unwrap().to_string();
        let name = d.resource["metadata"]["name"].as_str().unwrap().to_string();
        if kind == "LiteLLMVirtualKey" {
            // A key's connection Secret shares a namespace with every
            // other Secret composed there.
            let secret = d.resource["spec"]["writeConnectionSecretToRef"]["name"]
                .as_str()
                .unwrap();
            names.insert(("Secret".to_string(), secret.to_string()));
        }
        names.insert((kind, name));
    }
    names
}

/// With `<xr>-<resource>`, XR `a`'s key `b-key-c` and XR `a-key-b`'s key
/// `c` were both `a-key-b-key-c`, and so were their connection Secrets:
/// with `<xr>.<resource>` no two XRs' resources of a kind share a name, nor
/// do two key Secrets.
#[test]
fn composed_names_of_different_xrs_never_collide() {
    let keys = |names: &[&str]| {
        json!({"team": {"models": ["gpt-4o"]},
               "keys": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()})
    };
    for (a, a_keys, b, b_keys) in [
        // Both `a-key-b-key-c` before: two keys and two Secrets of one name.
        ("a", &["b-key-c"][..], "a-key-b", &["c"][..]),
        ("a", &["team"][..], "a-key", &["x"][..]),
        ("a", &["budget"][..], "a-key", &["x"][..]),
        ("a", &["x-team"][..], "a-key-x", &["y"][..]),
        ("a.b", &["c"][..], "a", &["b-key-c"][..]),
        ("a", &["litellm"][..], "a-key", &["y"][..]),
    ] {
        let first = object_names(a, keys(a_keys));
        let second = object_names(b, keys(b_keys));
        let shared: Vec<_> = first.intersection(&second).collect();
        // Both attach to the same proxy: one instance each, named apart.
        assert!(
            shared.is_empty(),
            "{a} {a_keys:?} and {b} {b_keys:?} share {shared:?}"
        );
    }
    let names = object_names("ml", keys(&["ci"]));
    assert!(
        names.contains(&("LiteLLMTeam".into(), "ml.team".into())),
        "{names:?}"
    );
    assert!(
        names.contains(&("Secret".into(), "ml.key-ci".into())),
        "{names:?}"
    );
    assert!(
        names.contains(&("LiteLLMInstance".into(), "ml-litellm".into())),
        "{names:?}"
    );
}

/// Crossplane keeps an observed composed resource's name whatever the
/// function desires, so the function keeps it too, and every reference to
/// it (a key's team and budget, its connection Secret, the instance) uses
/// it: resources composed under the older `<xr>-<resource>` names stay
/// where they are, keys and Secrets included, while new ones get the new
/// names.
#[test]
fn observed_resources_keep_their_names_and_references_follow_them() {
    let mut input = input();
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    let mut spec = good_spec();
    spec["keys"] = json!([{"name": "ci"}, {"name": "new"}]);
    let observed = Named(
        Fixed::default(),
        BTreeMap::from([
            ("team".to_string(), "ml-team".to_string()),
            ("budget".to_string(), "ml-budget".to_string()),
            ("key-ci".to_string(), "ml-key-ci".to_string()),
            ("instance".to_string(), "ml-litellm".to_string()),
        ]),
    );
    let Outcome::Composed(c) = compose(&xr(spec), Some(&input), &observed) else {
        panic!("fatal")
    };
    let resource = |name: &str| &c.resources[name].resource;
    assert_eq!(resource("team")["metadata"]["name"], "ml-team");
    assert_eq!(resource("key-ci")["metadata"]["name"], "ml-key-ci");
    assert_eq!(
        resource("key-ci")["spec"]["writeConnectionSecretToRef"]["name"],
        "ml-key-ci"
    );
    assert_eq!(resource("key-new")["metadata"]["name"], "ml.key-new");
    assert_eq!(
        resource("key-new")["spec"]["writeConnectionSecretToRef"]["name"],
        "ml.key-new"
    );
    for key in ["key-ci", "key-new"] {
        let for_provider = &resource(key)["spec"]["forProvider"];
        assert_eq!(for_provider["teamRef"]["name"], "ml-team", "{key}");
        assert_eq!(for_provider["budgetRef"]["name"], "ml-budget", "{key}");
        assert_eq!(resource(key)["spec"]["instanceRef"]["name"], "ml-litellm");
    }
    let secrets: Vec<&Value> = c.xr_status["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| &k["secretName"])
        .collect();
    assert_eq!(secrets, [&json!("ml-key-ci"), &json!("ml.key-new")]);
}

/// A provisioned proxy's Service is named after the XR, and a Service name
/// has no `.`: such an XR is a Fatal naming its name, unless its instance
/// exists already under a name of its own.
#[test]
fn a_provisioned_instance_needs_an_xr_name_without_a_dot() {
    let mut input = input();
    input["instance"] = json!({"provision": {"masterKey": {"autoGenerate": true}}});
    let mut xr = xr(good_spec());
    xr["metadata"]["name"] = json!("ml.prod");
    assert_eq!(
        fatal_fields(compose(&xr, Some(&input), &Fixed::default())),
        ["metadata.name"]
    );
    let observed = Named(
        Fixed::default(),
        BTreeMap::from([("instance".to_string(), "ml-prod-litellm".to_string())]),
    );
    assert!(matches!(
        compose(&xr, Some(&input), &observed),
        Outcome::Composed(_)
    ));
    // Attached, there is no Service to name.
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    assert!(matches!(
        compose(&xr, Some(&input), &Fixed::default()),
        Outcome::Composed(_)
    ));
}

/// A model with every cloud credential and parameter, as an XR writes it.
fn cloud_model() -> Value {
    json!({"name": "claude", "model": "bedrock/anthropic.claude-3-5-sonnet",
           "aws": {"regionName": "eu-central-1",
                   "accessKeyIdSecretRef": {"name": "bedrock", "key": "id"},
                   "secretAccessKeySecretRef": {"name": "bedrock", "key": "secret"}},
           "timeout": 30, "maxRetries": 2, "dropParams": true, "tags": ["eu"],
           "accessGroups": ["gold"]})
}

fn model_spec(models: Value) -> Value {
    json!({"team": {"models": ["gpt-4o"]}, "models": models})
}

/// A tenant's models on a shared proxy are its team's: `teamRef`, served
/// as `<namespace>/<name>` (which the team's list gains), never under a
/// public name; their credentials and parameters render as the XR wrote
/// them.
#[test]
fn a_tenants_models_are_its_teams_with_their_credentials() {
    let mut input = input();
    input["policy"]["allowedModels"] = json!(["gpt-4o", "claude"]);
    let Outcome::Composed(c) = compose(
        &xr(model_spec(json!([cloud_model()]))),
        Some(&input),
        &Fixed::default(),
    ) else {
        panic!("fatal")
    };
    let model = &c.resources["model-claude"].resource["spec"]["forProvider"];
    assert_eq!(model["teamRef"], json!({"name": "ml.team"}));
    assert_eq!(model["accessGroups"], json!(["gold"]));
    let params = &model["litellmParams"];
    assert_eq!(params["aws"]["regionName"], "eu-central-1");
    assert_eq!(
        params["aws"]["secretAccessKeySecretRef"],
        json!({"name": "bedrock", "key": "secret"})
    );
    assert_eq!(
        (
            &params["timeout"],
            &params["maxRetries"],
            &params["dropParams"]
        ),
        (&json!(30), &json!(2), &json!(true))
    );
    assert_eq!(params["tags"], json!(["eu"]));
    let team = &c.resources["team"].resource["spec"]["forProvider"];
    assert_eq!(team["models"], json!(["gpt-4o", "team-ml/claude"]));
    // Every field of the model is one the function reads.
    assert!(
        !c.warnings
            .iter()
            .any(|w| w.field.starts_with("spec.models")),
        "{:?}",
        c.warnings
    );

    // A proxy provisioned for the XR alone shares no names: left public.
    input["instance"] = json!({"provision": {"masterKey": {"autoGenerate": true}}});
    let Outcome::Composed(own) = compose(
        &xr(model_spec(json!([cloud_model()]))),
        Some(&input),
        &Fixed::default(),
    ) else {
        panic!("fatal")
    };
    let model = &own.resources["model-claude"].resource["spec"]["forProvider"];
    assert!(model.get("teamRef").is_none(), "{model}");
    assert_eq!(
        own.resources["team"].resource["spec"]["forProvider"]["models"],
        json!(["gpt-4o"])
    );
}

/// Which providers and Secrets an XR's models may use is the platform's
/// policy; composed into a namespace of the platform's, naming a Secret
/// needs that list, since a claim could otherwise have any Secret there
/// (the proxy's master key) sent to an upstream of its choosing.
#[test]
fn providers_and_secrets_of_models_follow_the_policy() {
    let mut input = input();
    input["policy"]["allowedModels"] = json!(["gpt-4o", "claude"]);
    input["policy"]["allowedProviders"] = json!(["openai", "azure"]);
    let fields = fatal_fields(compose(
        &xr(model_spec(json!([cloud_model()]))),
        Some(&input),
        &Fixed::default(),
    ));
    assert_eq!(fields, ["spec.models[0].model"]);
    input["policy"]["allowedProviders"] = json!(["bedrock"]);
    input["policy"]["allowedSecrets"] = json!(["openai-*"]);
    let fields = fatal_fields(compose(
        &xr(model_spec(json!([cloud_model()]))),
        Some(&input),
        &Fixed::default(),
    ));
    assert_eq!(
        fields,
        [
            "spec.models[0].aws.accessKeyIdSecretRef",
            "spec.models[0].aws.secretAccessKeySecretRef"
        ]
    );
    input["policy"]["allowedSecrets"] = json!(["bedrock"]);
    assert!(matches!(
        compose(
            &xr(model_spec(json!([cloud_model()]))),
            Some(&input),
            &Fixed::default()
        ),
        Outcome::Composed(_)
    ));

    // A claim's XR composed into the platform's namespace.
    input["policy"]
        .as_object_mut()
        .unwrap()
        .remove("allowedSecrets");
    input["namespace"] = json!("litellm");
    let mut claimed = xr(model_spec(json!([cloud_model()])));
    let metadata = claimed["metadata"].as_object_mut().unwrap();
    metadata.remove("namespace");
    metadata.insert(
        "labels".into(),
        json!({"crossplane.io/claim-namespace": "apps"}),
    );
    let Outcome::Fatal(problems) = compose(&claimed, Some(&input), &Fixed::default()) else {
        panic!("composed")
    };
    assert_eq!(problems[0].field, "spec.models[0].aws.accessKeyIdSecretRef");
    assert!(
        problems[0]
            .to_string()
            .contains("set input.policy.allowedSecrets"),
        "{}",
        problems[0]
    );
    // Even there, a claim's models are its team's.
    input["policy"]["allowedSecrets"] = json!(["bedrock"]);
    let Outcome::Composed(c) = compose(&claimed, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let model = &c.resources["model-claude"].resource;
    assert_eq!(model["metadata"]["namespace"], "litellm");
    assert!(model["spec"]["forProvider"]["teamRef"].is_object());

    // A LiteLLMCredential by reference: there too only one the policy
    // names; in the tenant's own namespace, any of its own.
    input["policy"]["allowedProviders"] = json!(["bedrock", "openai"]);
    let by_credential = json!({"name": "gpt-4o", "model": "openai/gpt-4o",
                               "credentialRef": {"name": "openai-shared"}});
    let mut claimed = claimed.clone();
    claimed["spec"]["models"] = json!([by_credential]);
    let Outcome::Fatal(problems) = compose(&claimed, Some(&input), &Fixed::default()) else {
        panic!("composed")
    };
    assert_eq!(problems[0].field, "spec.models[0].credentialRef");
    assert!(
        problems[0]
            .to_string()
            .contains("set input.policy.allowedCredentials"),
        "{}",
        problems[0]
    );
    input["policy"]["allowedCredentials"] = json!(["team-*"]);
    let Outcome::Fatal(problems) = compose(&claimed, Some(&input), &Fixed::default()) else {
        panic!("composed")
    };
    assert!(
        problems[0]
            .to_string()
            .contains("LiteLLMCredential \"openai-shared\" is not allowed by policy"),
        "{}",
        problems[0]
    );
    input["policy"]["allowedCredentials"] = json!(["openai-*"]);
    let Outcome::Composed(c) = compose(&claimed, Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let params = &c.resources["model-gpt-4o"].resource["spec"]["forProvider"]["litellmParams"];
    assert_eq!(params["credentialRef"], json!({"name": "openai-shared"}));
    input["policy"]
        .as_object_mut()
        .unwrap()
        .remove("allowedCredentials");
    input.as_object_mut().unwrap().remove("namespace");
    let Outcome::Composed(c) = compose(
        &xr(model_spec(json!([by_credential]))),
        Some(&input),
        &Fixed::default(),
    ) else {
        panic!("fatal")
    };
    let params = &c.resources["model-gpt-4o"].resource["spec"]["forProvider"]["litellmParams"];
    assert_eq!(params["credentialRef"], json!({"name": "openai-shared"}));
}

// ------------------------------------------ users, members, MCP servers

/// A tenant's XR (team-ml) on the shared instance (litellm) with users,
/// members, a key owned by a user, an MCP server and object permissions.
fn people_spec() -> Value {
    json!({
        "team": {"models": ["gpt-4o"],
                 "members": [{"user": "alice", "role": "admin"},
                             {"email": "Bob@Example.com", "maxBudgetInTeam": "10"}],
                 "membersPolicy": "Additive",
                 "objectPermission": {"mcpServers": ["github"],
                                      "mcpAccessGroups": ["team-ml/tools"]}},
        "budget": {"maxBudget": "50", "duration": "30d"},
        "users": [{"name": "alice", "email": "alice@example.com", "alias": "Alice"},
                  {"name": "bob", "email": "bob@example.com", "role": "internal_user_viewer",
                   "models": ["gpt-4o-mini"], "maxBudget": "5", "budgetDuration": "7d",
                   "tpmLimit": 100, "rpmLimit": 10, "maxParallelRequests": 2,
                   "metadata": {"dept": "ml"}}],
        "mcpServers": [{"name": "github", "url": "https://mcp.example.com/mcp",
                        "transport": "sse", "serverName": "team_ml.github",
                        "description": "GitHub", "authType": "bearer_token",
                        "authSecretRef": {"name": "github-token", "key": "token"},
                        "allowedTools": ["get_issue"], "accessGroups": ["team-ml/tools"],
                        "mcpInfo": {"owner": "ml"}}],
        "keys": [{"name": "cli", "user": "alice",
                  "objectPermission": {"mcpServers": ["github"]}}]
    })
}

/// `compose` of `spec` (a tenant's XR on the shared instance) under the
/// test input with `policy` merged into its policy.
fn compose_people(policy: Value, spec: Value) -> Outcome {
    let mut input = input();
    for (k, v) in policy.as_object().unwrap() {
        input["policy"][k] = v.clone();
    }
    let supplied = Fixed(BTreeMap::new(), Some(json!({"ready": true})), None);
    compose(&xr(spec), Some(&input), &supplied)
}

/// `spec` with the JSON value at the pointer `at` replaced (or made; an
/// index one past a list's end appends).
fn with(mut spec: Value, at: &str, value: Value) -> Value {
    match spec.pointer_mut(at) {
        Some(slot) => *slot = value,
        None => {
            let (parent, last) = at.rsplit_once('/').unwrap();
            match spec.pointer_mut(parent).unwrap() {
                Value::Array(items) => {
                    assert_eq!(last.parse::<usize>().unwrap(), items.len(), "{at}");
                    items.push(value);
                }
                parent => parent[last] = value,
            }
        }
    }
    spec
}

fn without(mut spec: Value, at: &str) -> Value {
    let (parent, last) = at.rsplit_once('/').unwrap();
    spec.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove(last);
    spec
}

#[test]
fn users_members_keys_and_mcp_servers_render_as_the_providers_kinds() {
    let outcome = compose_people(json!({}), people_spec());
    let Outcome::Composed(c) = &outcome else {
        panic!("fatal: {outcome:?}")
    };
    let kinds: BTreeMap<&str, &str> = c
        .resources
        .iter()
        .map(|(name, d)| (name.as_str(), d.resource["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        BTreeMap::from([
            ("budget", "LiteLLMBudget"),
            ("key-cli", "LiteLLMVirtualKey"),
            ("mcp-github", "LiteLLMMCPServer"),
            ("team", "LiteLLMTeam"),
            ("user-alice", "LiteLLMUser"),
            ("user-bob", "LiteLLMUser"),
        ])
    );
    let shared = json!({"name": "shared", "namespace": "litellm"});
    for d in c.resources.values() {
        assert_eq!(d.resource["spec"]["instanceRef"], shared);
        assert_eq!(d.resource["metadata"]["namespace"], "team-ml");
    }
    // Alice has no models: the team's apply, and the default is reported.
    assert_eq!(
        for_provider(&outcome, "user-alice"),
        json!({"userEmail": "alice@example.com", "userAlias": "Alice", "models": ["gpt-4o"]})
    );
    assert_eq!(
        defaults(&outcome),
        ["spec.users[0].models: not set: the team's models apply: gpt-4o"]
    );
    assert_eq!(
        for_provider(&outcome, "user-bob"),
        json!({"userEmail": "bob@example.com", "userRole": "internal_user_viewer",
               "models": ["gpt-4o-mini"], "maxBudget": "5", "budgetDuration": "7d",
               "tpmLimit": 100, "rpmLimit": 10, "maxParallelRequests": 2,
               "metadata": {"dept": "ml"}})
    );
    let team = for_provider(&outcome, "team");
    // Bob is named by his email, in other letters.
    assert_eq!(
        team["members"],
        json!([{"userRef": {"name": "ml.user-alice"}, "role": "admin"},
               {"userRef": {"name": "ml.user-bob"}, "maxBudgetInTeam": "10"}])
    );
    assert_eq!(team["membersPolicy"], "Additive");
    assert_eq!(
        team["objectPermission"],
        json!({"mcpServerRefs": [{"name": "ml.mcp-github"}],
               "mcpAccessGroups": ["team-ml/tools"]})
    );
    let key = for_provider(&outcome, "key-cli");
    assert_eq!(key["userRef"], json!({"name": "ml.user-alice"}));
    assert_eq!(key["teamRef"], json!({"name": "ml.team"}));
    assert_eq!(
        key["objectPermission"],
        json!({"mcpServerRefs": [{"name": "ml.mcp-github"}]})
    );
    assert_eq!(
        for_provider(&outcome, "mcp-github"),
        json!({"transport": "sse", "url": "https://mcp.example.com/mcp",
               "serverName": "team_ml.github", "description": "GitHub",
               "authType": "bearer_token",
               "authSecretRef": {"name": "github-token", "key": "token"},
               "allowedTools": ["get_issue"], "accessGroups": ["team-ml/tools"],
               "mcpInfo": {"owner": "ml"}})
    );
    // Without a transport: http.
    let spec = without(people_spec(), "/mcpServers/0/transport");
    let outcome = compose_people(json!({}), spec);
    assert_eq!(for_provider(&outcome, "mcp-github")["transport"], "http");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn each_bad_user_member_or_mcp_server_is_fatal_and_names_its_field() {
    let spec = people_spec;
    let no_models = json!({"allowedModels": null});
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "a user name that is no DNS label",
            json!({}),
            with(spec(), "/users/1/name", json!("Bob")),
            "spec.users[1].name",
        ),
        (
            "two users of one name",
            json!({}),
            with(spec(), "/users/2", json!({"name": "alice"})),
            "spec.users[2].name",
        ),
        (
            "two users of one email, in other letters",
            json!({}),
            with(
                spec(),
                "/users/2",
                json!({"name": "carol", "email": "ALICE@example.com"}),
            ),
            "spec.users[2].email",
        ),
        (
            "an empty email",
            json!({}),
            with(spec(), "/users/0/email", json!("")),
            "spec.users[0].email",
        ),
        (
            "an unknown user role",
            json!({}),
            with(spec(), "/users/0/role", json!("org_admin")),
            "spec.users[0].role",
        ),
        (
            "an admin role on the shared instance, even when listed",
            json!({"allowedUserRoles": ["proxy_admin", "internal_user", "internal_user_viewer"]}),
            with(spec(), "/users/0/role", json!("proxy_admin")),
            "spec.users[0].role",
        ),
        (
            "a role the policy leaves out",
            json!({"allowedUserRoles": ["internal_user_viewer"]}),
            with(spec(), "/users/0/role", json!("internal_user")),
            "spec.users[0].role",
        ),
        (
            "more users than the policy allows",
            json!({"maxUsers": 1}),
            spec(),
            "spec.users",
        ),
        (
            "a user's model the policy does not allow",
            json!({}),
            with(spec(), "/users/1/models", json!(["claude-3"])),
            "spec.users[1].models[0]",
        ),
        (
            "a user's empty models",
            json!({}),
            with(spec(), "/users/1/models", json!([])),
            "spec.users[1].models",
        ),
        (
            "a user's model of another namespace",
            no_models.clone(),
            with(spec(), "/users/1/models", json!(["team-x/m"])),
            "spec.users[1].models[0]",
        ),
        (
            "a user's wildcard model",
            no_models.clone(),
            with(spec(), "/users/1/models", json!(["gpt-*"])),
            "spec.users[1].models[0]",
        ),
        (
            "a user without models, the team without either",
            no_models.clone(),
            without(spec(), "/team/models"),
            "spec.users[0].models",
        ),
        (
            "a user's bad budgetDuration",
            json!({}),
            with(spec(), "/users/1/budgetDuration", json!("7x")),
            "spec.users[1].budgetDuration",
        ),
        (
            "a member naming no user",
            json!({}),
            with(spec(), "/team/members/0/user", json!("carol")),
            "spec.team.members[0].user",
        ),
        (
            "a member by an email no user has",
            json!({}),
            with(spec(), "/team/members/1/email", json!("carol@example.com")),
            "spec.team.members[1].email",
        ),
        (
            "a member by user and email",
            json!({}),
            with(spec(), "/team/members/0/email", json!("alice@example.com")),
            "spec.team.members[0]",
        ),
        (
            "a member naming nobody",
            json!({}),
            with(spec(), "/team/members/0", json!({"role": "user"})),
            "spec.team.members[0]",
        ),
        (
            "a member by user id on the shared instance",
            json!({"allowedUserIds": ["*"]}),
            with(spec(), "/team/members/0", json!({"userId": "someone"})),
            "spec.team.members[0].userId",
        ),
        (
            "one user twice",
            json!({}),
            with(
                spec(),
                "/team/members/1",
                json!({"email": "alice@example.com"}),
            ),
            "spec.team.members[1]",
        ),
        (
            "more members than the policy allows",
            json!({"maxMembers": 1}),
            spec(),
            "spec.team.members",
        ),
        (
            "more members than a LiteLLMTeam takes",
            json!({}),
            {
                let names: Vec<String> = (0..257).map(|i| format!("u{i}")).collect();
                let spec = with(
                    spec(),
                    "/users",
                    json!(names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()),
                );
                let spec = with(
                    spec,
                    "/team/members",
                    json!(names.iter().map(|n| json!({"user": n})).collect::<Vec<_>>()),
                );
                with(spec, "/keys/0/user", json!("u0"))
            },
            "spec.team.members",
        ),
        (
            "more access groups in an objectPermission than it takes",
            json!({}),
            with(
                spec(),
                "/team/objectPermission/mcpAccessGroups",
                json!((0..257)
                    .map(|i| format!("team-ml/g{i}"))
                    .collect::<Vec<_>>()),
            ),
            "spec.team.objectPermission.mcpAccessGroups",
        ),
        (
            "a team admin the policy does not allow",
            json!({"allowTeamAdmins": false}),
            spec(),
            "spec.team.members[0].role",
        ),
        (
            "an unknown member role",
            json!({}),
            with(spec(), "/team/members/0/role", json!("owner")),
            "spec.team.members[0].role",
        ),
        (
            "a member field the function does not read",
            json!({}),
            with(spec(), "/team/members/0/nickname", json!("al")),
            "spec.team.members[0].nickname",
        ),
        (
            "a bad member budget",
            json!({}),
            with(spec(), "/team/members/1/maxBudgetInTeam", json!("lots")),
            "spec.team.members[1].maxBudgetInTeam",
        ),
        (
            "a key of no user",
            json!({}),
            with(spec(), "/keys/0/user", json!("carol")),
            "spec.keys[0].user",
        ),
        (
            "an MCP server name that is no DNS label",
            json!({}),
            with(spec(), "/mcpServers/0/name", json!("Git_Hub")),
            "spec.mcpServers[0].name",
        ),
        (
            "two MCP servers of one name",
            json!({}),
            with(
                spec(),
                "/mcpServers/1",
                json!({"name": "github", "url": "https://h/"}),
            ),
            "spec.mcpServers[1].name",
        ),
        (
            "a stdio MCP server",
            json!({}),
            with(spec(), "/mcpServers/0/transport", json!("stdio")),
            "spec.mcpServers[0].transport",
        ),
        (
            "an unknown transport",
            json!({}),
            with(spec(), "/mcpServers/0/transport", json!("websocket")),
            "spec.mcpServers[0].transport",
        ),
        (
            "an MCP server without a URL",
            json!({}),
            without(spec(), "/mcpServers/0/url"),
            "spec.mcpServers[0].url",
        ),
        (
            "an MCP server at a file URL",
            json!({}),
            with(spec(), "/mcpServers/0/url", json!("file:///etc/passwd")),
            "spec.mcpServers[0].url",
        ),
        (
            "an MCP host the policy does not allow",
            json!({"allowedMcpHosts": ["*.tools.example"]}),
            spec(),
            "spec.mcpServers[0].url",
        ),
        (
            "a server name with a '-'",
            json!({}),
            with(spec(), "/mcpServers/0/serverName", json!("team_ml.git-hub")),
            "spec.mcpServers[0].serverName",
        ),
        (
            "a server name outside the namespace's prefix",
            json!({}),
            with(spec(), "/mcpServers/0/serverName", json!("github")),
            "spec.mcpServers[0].serverName",
        ),
        (
            "an auth type without its Secret",
            json!({}),
            without(spec(), "/mcpServers/0/authSecretRef"),
            "spec.mcpServers[0].authSecretRef",
        ),
        (
            "a Secret without an auth type",
            json!({}),
            without(spec(), "/mcpServers/0/authType"),
            "spec.mcpServers[0].authSecretRef",
        ),
        (
            "a Secret the policy does not allow",
            json!({"allowedSecrets": ["openai-*"]}),
            spec(),
            "spec.mcpServers[0].authSecretRef",
        ),
        (
            "an unknown auth type",
            json!({}),
            with(spec(), "/mcpServers/0/authType", json!("oauth")),
            "spec.mcpServers[0].authType",
        ),
        (
            "a server's access group of another namespace",
            json!({}),
            with(spec(), "/mcpServers/0/accessGroups/0", json!("tools")),
            "spec.mcpServers[0].accessGroups[0]",
        ),
        (
            "MCP servers the policy does not allow",
            json!({"allowMcpServers": false}),
            spec(),
            "spec.mcpServers",
        ),
        (
            "an existing MCP server the policy does not allow",
            json!({"allowedMcpServers": ["platform-*"]}),
            with(
                spec(),
                "/team/objectPermission/mcpServers/0",
                json!("slack"),
            ),
            "spec.team.objectPermission.mcpServers[0]",
        ),
        (
            "a team's access group of another namespace",
            json!({}),
            with(
                spec(),
                "/team/objectPermission/mcpAccessGroups/0",
                json!("team-x/tools"),
            ),
            "spec.team.objectPermission.mcpAccessGroups[0]",
        ),
        (
            "an access group the policy does not allow",
            json!({"allowedMcpAccessGroups": ["team-ml/shared"]}),
            spec(),
            "spec.team.objectPermission.mcpAccessGroups[0]",
        ),
        (
            "a key's existing MCP server the policy does not allow",
            json!({"allowedMcpServers": []}),
            with(
                spec(),
                "/keys/0/objectPermission/mcpServers/0",
                json!("slack"),
            ),
            "spec.keys[0].objectPermission.mcpServers[0]",
        ),
        (
            "vector stores",
            json!({}),
            with(
                spec(),
                "/team/objectPermission/vectorStores",
                json!(["vs-1"]),
            ),
            "spec.team.objectPermission.vectorStores",
        ),
        (
            "raw MCP server ids",
            json!({}),
            with(
                spec(),
                "/keys/0/objectPermission/mcpServerIds",
                json!(["abc"]),
            ),
            "spec.keys[0].objectPermission.mcpServerIds",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, policy, spec, field) in cases {
        match compose_people(policy, spec) {
            Outcome::Fatal(problems) if problems.len() == 1 && problems[0].field == field => {}
            Outcome::Fatal(problems) => wrong.push(format!("{what}: {problems:?}")),
            Outcome::Composed(_) => wrong.push(format!("{what}: composed")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn user_and_mcp_messages_say_what_to_do() {
    let message = |policy: Value, spec: Value| match compose_people(policy, spec) {
        Outcome::Fatal(problems) => problems[0].to_string(),
        Outcome::Composed(_) => panic!("composed"),
    };
    let admin = message(
        json!({}),
        with(people_spec(), "/users/0/role", json!("proxy_admin")),
    );
    assert!(
        admin.contains("outside the LiteLLMInstance's namespace")
            && admin.contains("internal_user"),
        "{admin}"
    );
    let by_id = message(
        json!({}),
        with(people_spec(), "/team/members/0", json!({"userId": "u"})),
    );
    assert!(by_id.contains("add the user to spec.users"), "{by_id}");
    let server_name = message(
        json!({}),
        with(people_spec(), "/mcpServers/0/serverName", json!("github")),
    );
    assert!(server_name.contains("\"team_ml.\""), "{server_name}");
    let host = message(
        json!({"allowedMcpHosts": ["mcp.example.org"]}),
        people_spec(),
    );
    assert!(
        host.contains(
            "host \"mcp.example.com\" is not allowed by policy (allowed: mcp.example.org)"
        ),
        "{host}"
    );
    let secret = message(json!({"allowedSecrets": ["openai-*"]}), people_spec());
    assert!(
        secret.contains("Secret \"github-token\" is not allowed by policy"),
        "{secret}"
    );
    // A wrong value in the XR names the field and never echoes a Secret's
    // content: the function never sees one.
    assert!(!secret.contains("token\":"), "{secret}");
}

/// The XR composed into a namespace of the platform's (a claim's legacy
/// XR with `input.namespace`): there the provider applies no tenant rule,
/// so every reference to an existing object needs the policy's list, and
/// the admin user roles their listing.
#[test]
fn in_the_platforms_namespace_existing_objects_need_the_policys_lists() {
    let claimed = |spec: Value| {
        let mut xr = xr(spec);
        let metadata = xr["metadata"].as_object_mut().unwrap();
        metadata.remove("namespace");
        metadata.insert(
            "labels".into(),
            json!({"crossplane.io/claim-namespace": "apps"}),
        );
        xr
    };
    let run = |policy: Value, spec: Value| {
        let mut input = input();
        input["namespace"] = json!("litellm");
        for (k, v) in policy.as_object().unwrap() {
            input["policy"][k] = v.clone();
        }
        compose(&claimed(spec), Some(&input), &Fixed::default())
    };
    // The platform's namespace has no tenant prefix to keep.
    let spec = || {
        let spec = with(
            people_spec(),
            "/mcpServers/0/accessGroups",
            json!(["tools"]),
        );
        let spec = with(spec, "/mcpServers/0/serverName", json!("github"));
        let spec = with(
            spec,
            "/team/objectPermission/mcpAccessGroups",
            json!(["tools"]),
        );
        with(
            spec,
            "/team/members/2",
            json!({"userId": "platform-bot", "role": "user"}),
        )
    };
    let lists = json!({"allowedSecrets": ["github-*"], "allowedUserIds": ["platform-*"],
                       "allowedMcpAccessGroups": ["tools"], "allowedMcpServers": ["slack"]});
    let Outcome::Composed(c) = run(lists.clone(), spec()) else {
        panic!("fatal")
    };
    let team = &c.resources["team"].resource["spec"]["forProvider"];
    assert_eq!(
        team["members"][2],
        json!({"userId": "platform-bot", "role": "user"})
    );
    for (list, field, says) in [
        (
            "allowedSecrets",
            "spec.mcpServers[0].authSecretRef",
            "Secret",
        ),
        (
            "allowedUserIds",
            "spec.team.members[2].userId",
            "LiteLLM user",
        ),
        (
            "allowedMcpAccessGroups",
            "spec.team.objectPermission.mcpAccessGroups[0]",
            "MCP access group",
        ),
    ] {
        let mut policy = lists.clone();
        policy.as_object_mut().unwrap().remove(list);
        let Outcome::Fatal(problems) = run(policy, spec()) else {
            panic!("{list}: composed")
        };
        assert_eq!(problems.len(), 1, "{list}: {problems:?}");
        assert_eq!(problems[0].field, field);
        assert_eq!(
            problems[0].message,
            format!(
                "names a {says} in litellm, a namespace of the platform's: set \
                 input.policy.{list} to the {says}s XRs may use"
            )
        );
    }
    // An existing server: only by the list; the XR's own needs none.
    let existing = with(
        spec(),
        "/keys/0/objectPermission/mcpServers/0",
        json!("slack"),
    );
    assert!(matches!(
        run(lists.clone(), existing.clone()),
        Outcome::Composed(_)
    ));
    let mut policy = lists.clone();
    policy.as_object_mut().unwrap().remove("allowedMcpServers");
    assert_eq!(
        fatal_fields(run(policy, existing)),
        ["spec.keys[0].objectPermission.mcpServers[0]"]
    );
    // Admin roles: only when listed, and then rendered.
    let admin = with(spec(), "/users/0/role", json!("proxy_admin"));
    assert_eq!(
        fatal_fields(run(lists.clone(), admin.clone())),
        ["spec.users[0].role"]
    );
    let mut policy = lists.clone();
    policy["allowedUserRoles"] = json!(["proxy_admin", "internal_user", "internal_user_viewer"]);
    let Outcome::Composed(c) = run(policy, admin) else {
        panic!("fatal")
    };
    assert_eq!(
        c.resources["user-alice"].resource["spec"]["forProvider"]["userRole"],
        "proxy_admin"
    );
}

#[test]
fn odd_but_workable_members_and_permissions_warn() {
    let spec = with(
        people_spec(),
        "/team/members/1/maxBudgetInTeam",
        json!("80"),
    );
    let spec = with(spec, "/team/objectPermission/mcpServers", json!([]));
    let Outcome::Composed(c) = compose_people(json!({}), spec) else {
        panic!("fatal")
    };
    let warned: Vec<&str> = c.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        warned,
        [
            "spec.team.members[1].maxBudgetInTeam",
            "spec.keys[0].objectPermission.mcpServers[0]"
        ]
    );
    assert!(c.warnings[1].message.contains("its team does not grant"));
    // Fields of users and MCP servers the function does not read.
    let spec = with(people_spec(), "/users/0/password", json!("x"));
    let spec = with(spec, "/mcpServers/0/command", json!("npx"));
    let Outcome::Composed(c) = compose_people(json!({}), spec) else {
        panic!("fatal")
    };
    let warned: Vec<&str> = c.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        warned,
        ["spec.users[0].password", "spec.mcpServers[0].command"]
    );
}

#[test]
fn users_and_mcp_servers_report_readiness_and_status() {
    let ready =
        |id: Value| json!({"atProvider": id, "conditions": [{"type": "Ready", "status": "True"}]});
    let observed = Fixed(
        BTreeMap::from([
            (
                "user-alice".to_string(),
                ready(json!({"userId": "team-ml.ml.user-alice"})),
            ),
            (
                "user-bob".to_string(),
                json!({"conditions": [{"type": "Ready", "status": "False"}]}),
            ),
            (
                "mcp-github".to_string(),
                ready(
                    json!({"serverId": "team-ml.ml.mcp-github", "serverName": "team_ml.github",
                             "health": "healthy"}),
                ),
            ),
        ]),
        Some(json!({"ready": true})),
        None,
    );
    let mut input = input();
    input["policy"] = json!({});
    let Outcome::Composed(c) = compose(&xr(people_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    assert_eq!(c.resources["user-alice"].ready, Some(true));
    assert_eq!(c.resources["user-bob"].ready, Some(false));
    assert_eq!(c.resources["mcp-github"].ready, Some(true));
    assert_eq!(
        c.xr_status["users"],
        json!([{"name": "alice", "userId": "team-ml.ml.user-alice", "ready": true},
               {"name": "bob", "ready": false}])
    );
    assert_eq!(
        c.xr_status["mcpServers"],
        json!([{"name": "github", "serverId": "team-ml.ml.mcp-github",
                "serverName": "team_ml.github", "ready": true}])
    );
    assert_eq!(c.xr_status["ready"], false);
    // An XR without users or MCP servers reports neither (its XRD may not
    // declare them), and the fields go where the input says.
    let Outcome::Composed(c) = compose(&xr(good_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    assert!(c.xr_status.get("users").is_none() && c.xr_status.get("mcpServers").is_none());
    input["status"] = json!({"users": "status.litellm.users", "mcpServers": ""});
    let Outcome::Composed(c) = compose(&xr(people_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    assert_eq!(c.xr_status["litellm"]["users"][0]["name"], "alice");
    assert!(c.xr_status.get("mcpServers").is_none());
}

#[test]
fn references_to_users_and_mcp_servers_follow_observed_names() {
    let observed = Named(
        Fixed::default(),
        BTreeMap::from([
            ("user-alice".to_string(), "ml-alice".to_string()),
            ("mcp-github".to_string(), "ml-github".to_string()),
        ]),
    );
    let mut input = input();
    input["policy"] = json!({});
    let Outcome::Composed(c) = compose(&xr(people_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    let p = |name: &str| &c.resources[name].resource["spec"]["forProvider"];
    assert_eq!(
        c.resources["user-alice"].resource["metadata"]["name"],
        "ml-alice"
    );
    assert_eq!(p("team")["members"][0]["userRef"]["name"], "ml-alice");
    assert_eq!(p("team")["members"][1]["userRef"]["name"], "ml.user-bob");
    assert_eq!(p("key-cli")["userRef"]["name"], "ml-alice");
    assert_eq!(
        p("team")["objectPermission"]["mcpServerRefs"][0]["name"],
        "ml-github"
    );
    assert_eq!(
        p("key-cli")["objectPermission"]["mcpServerRefs"][0]["name"],
        "ml-github"
    );
}

#[test]
fn users_and_mcp_servers_take_the_inputs_metadata_and_usages() {
    let mut input = input();
    input["policy"] = json!({});
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    input["usages"] = json!(true);
    input["composed"] = json!({
        "users": {"labels": {"kind": "user"}, "managementPolicies": ["Observe"]},
        "mcpServers": {"annotations": {"crossplane.io/poll-interval": "5m"}},
        "byName": {"user-bob": {"annotations": {"crossplane.io/external-name": "bob-id"}}}
    });
    let Outcome::Composed(c) = compose(&xr(people_spec()), Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let r = |name: &str| &c.resources[name].resource;
    assert_eq!(r("user-alice")["metadata"]["labels"]["kind"], "user");
    assert_eq!(
        r("user-alice")["spec"]["managementPolicies"],
        json!(["Observe"])
    );
    assert_eq!(
        r("user-bob")["metadata"]["annotations"]["crossplane.io/external-name"],
        "bob-id"
    );
    assert_eq!(
        r("mcp-github")["metadata"]["annotations"]["crossplane.io/poll-interval"],
        "5m"
    );
    assert!(r("team")["metadata"].get("labels").is_none());
    // The attached instance is deleted after the users and the MCP server.
    for user in ["user-alice", "user-bob", "mcp-github"] {
        let usage = &r(&format!("usage-{user}"))["spec"]["by"];
        assert_eq!(usage["kind"], r(user)["kind"]);
        assert_eq!(usage["resourceRef"]["name"], r(user)["metadata"]["name"]);
    }
    // In the tenant's own namespace with its own (attached) instance the
    // provider applies no tenant rule, and neither does the function.
    let spec = with(people_spec(), "/mcpServers/0/serverName", json!("github"));
    let spec = with(spec, "/team/members/0", json!({"userId": "someone"}));
    let Outcome::Composed(c) = compose(&xr(spec), Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    assert_eq!(
        c.resources["team"].resource["spec"]["forProvider"]["members"][0],
        json!({"userId": "someone"})
    );
}

// ----------------------------------------------------------------- customers

/// A tenant's XR (team-ml) on the shared instance (litellm) whose
/// application serves end users: customers with and without models, a
/// region, a default model, the XR's budget.
fn customers_spec() -> Value {
    json!({
        "team": {"models": ["gpt-4o", "gpt-4o-mini"]},
        "budget": {"maxBudget": "50", "duration": "30d"},
        "keys": [{"name": "app"}],
        "customers": [
            {"name": "acme", "alias": "ACME", "models": ["gpt-4o-mini"],
             "allowedModelRegion": "eu", "budget": true},
            {"name": "globex", "allowedModelRegion": "us", "defaultModel": "gpt-4o",
             "budget": false},
            {"name": "initech"}
        ]
    })
}

#[test]
fn customers_render_as_the_providers_kind_under_the_providers_ids() {
    let outcome = compose_people(json!({}), customers_spec());
    let Outcome::Composed(c) = &outcome else {
        panic!("fatal: {outcome:?}")
    };
    let names: Vec<&str> = c
        .resources
        .iter()
        .filter(|(_, d)| d.resource["kind"] == "LiteLLMCustomer")
        .map(|(name, d)| {
            assert_eq!(d.resource["apiVersion"], "litellm.m.crossplane.io/v1alpha1");
            assert_eq!(d.resource["metadata"]["namespace"], "team-ml");
            assert_eq!(
                d.resource["spec"]["instanceRef"],
                json!({"name": "shared", "namespace": "litellm"})
            );
            // The provider chooses the id: no external name is set.
            assert!(d.resource["metadata"].get("annotations").is_none());
            name.as_str()
        })
        .collect();
    assert_eq!(
        names,
        ["customer-acme", "customer-globex", "customer-initech"]
    );
    assert_eq!(
        c.resources["customer-acme"].resource["metadata"]["name"],
        "ml.customer-acme"
    );
    assert_eq!(
        for_provider(&outcome, "customer-acme"),
        json!({"alias": "ACME", "models": ["gpt-4o-mini"], "allowedModelRegion": "eu",
               "budgetRef": {"name": "ml.budget"}})
    );
    assert_eq!(
        for_provider(&outcome, "customer-globex"),
        json!({"allowedModelRegion": "us", "defaultModel": "gpt-4o"})
    );
    // Without models a customer narrows nothing, and nothing is defaulted.
    assert_eq!(for_provider(&outcome, "customer-initech"), json!({}));
    assert!(defaults(&outcome).is_empty(), "{:?}", defaults(&outcome));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // The policy's ceiling renders the budget a customer may name.
    let spec = without(customers_spec(), "/budget");
    let outcome = compose_people(json!({}), spec);
    assert_eq!(
        for_provider(&outcome, "customer-acme")["budgetRef"],
        json!({"name": "ml.budget"})
    );
    assert_eq!(for_provider(&outcome, "budget")["maxBudget"], "100");
}

#[test]
fn each_bad_customer_is_fatal_and_names_its_field() {
    let spec = customers_spec;
    let no_models = json!({"allowedModels": null});
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "customers the policy does not allow",
            json!({"allowCustomers": false}),
            spec(),
            "spec.customers",
        ),
        (
            "more customers than the policy allows",
            json!({"maxCustomers": 2}),
            spec(),
            "spec.customers",
        ),
        (
            "a region other than eu and us",
            json!({}),
            with(spec(), "/customers/1/allowedModelRegion", json!("apac")),
            "spec.customers[1].allowedModelRegion",
        ),
        (
            "an empty name",
            json!({}),
            with(spec(), "/customers/2/name", json!("")),
            "spec.customers[2].name",
        ),
        (
            "a name longer than a DNS label",
            json!({}),
            with(spec(), "/customers/2/name", json!("c".repeat(64))),
            "spec.customers[2].name",
        ),
        (
            "a customer without a name",
            json!({}),
            with(spec(), "/customers/2", json!({"alias": "nameless"})),
            "spec.customers[2]",
        ),
        (
            "two customers of one name",
            json!({}),
            with(spec(), "/customers/3", json!({"name": "acme"})),
            "spec.customers[3].name",
        ),
        (
            "an alias longer than a LiteLLMCustomer takes",
            json!({}),
            with(spec(), "/customers/0/alias", json!("a".repeat(1025))),
            "spec.customers[0].alias",
        ),
        (
            "a model the policy does not allow",
            json!({}),
            with(spec(), "/customers/0/models/0", json!("claude-3")),
            "spec.customers[0].models[0]",
        ),
        (
            "a model of another namespace",
            no_models.clone(),
            with(spec(), "/customers/0/models/0", json!("team-x/m")),
            "spec.customers[0].models[0]",
        ),
        (
            "every model of the proxy",
            no_models.clone(),
            with(spec(), "/customers/0/models/0", json!("all-proxy-models")),
            "spec.customers[0].models[0]",
        ),
        (
            "a default model the policy does not allow",
            json!({}),
            with(spec(), "/customers/1/defaultModel", json!("claude-3")),
            "spec.customers[1].defaultModel",
        ),
        (
            "a wildcard default model",
            no_models.clone(),
            with(spec(), "/customers/1/defaultModel", json!("gpt-*")),
            "spec.customers[1].defaultModel",
        ),
        (
            "an empty default model",
            json!({}),
            with(spec(), "/customers/1/defaultModel", json!("")),
            "spec.customers[1].defaultModel",
        ),
        (
            "the XR's budget when it renders none",
            json!({"maxBudget": null}),
            without(spec(), "/budget"),
            "spec.customers[0].budget",
        ),
        (
            "a budget that is not a yes or no",
            json!({}),
            with(spec(), "/customers/0/budget", json!("gold")),
            "spec.customers[0].budget",
        ),
        (
            "models that are not a list",
            json!({}),
            with(spec(), "/customers/0/models", json!("gpt-4o")),
            "spec.customers[0].models",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, policy, spec, field) in cases {
        match compose_people(policy, spec) {
            Outcome::Fatal(problems) if problems.len() == 1 && problems[0].field == field => {}
            Outcome::Fatal(problems) => wrong.push(format!("{what}: {problems:?}")),
            Outcome::Composed(_) => wrong.push(format!("{what}: composed")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn customer_messages_say_what_to_do() {
    let message = |policy: Value, spec: Value| match compose_people(policy, spec) {
        Outcome::Fatal(problems) => problems[0].to_string(),
        Outcome::Composed(_) => panic!("composed"),
    };
    let denied = message(json!({"allowCustomers": false}), customers_spec());
    assert!(denied.contains("input.policy.allowCustomers"), "{denied}");
    let many = message(json!({"maxCustomers": 1}), customers_spec());
    assert!(
        many.contains("3 customers requested, policy allows at most 1"),
        "{many}"
    );
    let region = message(
        json!({}),
        with(
            customers_spec(),
            "/customers/0/allowedModelRegion",
            json!("EU"),
        ),
    );
    assert!(
        region.contains("`eu`") && region.contains("`us`"),
        "{region}"
    );
    let foreign = message(
        json!({"allowedModels": null}),
        with(customers_spec(), "/customers/0/models/0", json!("team-x/m")),
    );
    assert!(
        foreign.contains("outside the LiteLLMInstance's namespace")
            && foreign.contains("team-ml/<name>"),
        "{foreign}"
    );
    let budget = message(
        json!({"maxBudget": null}),
        without(customers_spec(), "/budget"),
    );
    assert!(budget.contains("or spec.budget"), "{budget}");
}

#[test]
fn unknown_fields_of_a_customer_are_warned_about_not_fatal() {
    let spec = with(customers_spec(), "/customers/0/blocked", json!(true));
    let spec = with(spec, "/customers/2/customerId", json!("app-user-42"));
    let Outcome::Composed(c) = compose_people(json!({}), spec) else {
        panic!("fatal")
    };
    let warned: Vec<&str> = c.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        warned,
        ["spec.customers[0].blocked", "spec.customers[2].customerId"]
    );
    assert!(c.warnings[0].message.contains("left alone"));
    // Neither is rendered: the provider chooses the id.
    assert!(c.resources["customer-acme"].resource["spec"]["forProvider"]
        .get("blocked")
        .is_none());
    assert_eq!(
        c.resources["customer-initech"].resource["spec"]["forProvider"],
        json!({})
    );
}

/// The provider's tenant rules hold only where it applies them: with the
/// instance in the XR's own namespace (attached) a customer may name any
/// model the policy allows.
#[test]
fn customers_on_the_xrs_own_instance_follow_only_the_policy() {
    let mut input = input();
    input["policy"] = json!({});
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    let spec = with(customers_spec(), "/customers/0/models/0", json!("team-x/m"));
    let spec = with(spec, "/customers/1/defaultModel", json!("all-proxy-models"));
    let Outcome::Composed(c) = compose(&xr(spec.clone()), Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    let p = &c.resources["customer-acme"].resource["spec"]["forProvider"];
    assert_eq!(p["models"], json!(["team-x/m"]));
    input["policy"] = json!({"allowedModels": ["gpt-4o", "gpt-4o-mini"]});
    assert_eq!(
        fatal_fields(compose(&xr(spec), Some(&input), &Fixed::default())),
        [
            "spec.customers[0].models[0]",
            "spec.customers[1].defaultModel"
        ]
    );
}

#[test]
fn customers_report_their_ids_and_readiness() {
    let ready = |status: &str, at: Value| json!({"atProvider": at, "conditions": [{"type": "Ready", "status": status}]});
    let id = "prod/team-ml/ml.customer-acme/0123456789abcdef01234567";
    let everything_else = ["team", "budget", "key-app", "customer-initech"]
        .map(|name| (name.to_string(), ready("True", json!({}))));
    let observed = |globex: &str| {
        let mut statuses = BTreeMap::from(everything_else.clone());
        statuses.insert(
            "customer-acme".to_string(),
            ready("True", json!({"customerId": id, "spend": "1.5"})),
        );
        statuses.insert("customer-globex".to_string(), ready(globex, json!({})));
        Fixed(statuses, Some(json!({"ready": true})), None)
    };
    let mut input = input();
    input["policy"] = json!({});
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &observed("False"))
    else {
        panic!("fatal")
    };
    assert_eq!(c.resources["customer-acme"].ready, Some(true));
    assert_eq!(c.resources["customer-globex"].ready, Some(false));
    assert_eq!(
        c.xr_status["customers"],
        json!([{"name": "acme", "customerId": id, "ready": true},
               {"name": "globex", "ready": false},
               {"name": "initech", "ready": true}])
    );
    // A customer not ready keeps the XR from being ready, as a user does.
    assert_eq!(c.xr_status["ready"], false);
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &observed("True"))
    else {
        panic!("fatal")
    };
    assert_eq!(c.xr_status["ready"], true);
    // An XR without customers reports none (its XRD may not declare the
    // field), and the field goes where the input says, or nowhere.
    let Outcome::Composed(c) = compose(&xr(good_spec()), Some(&input), &observed("True")) else {
        panic!("fatal")
    };
    assert!(c.xr_status.get("customers").is_none());
    input["status"] = json!({"customers": "status.litellm.endUsers"});
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &observed("True"))
    else {
        panic!("fatal")
    };
    assert_eq!(c.xr_status["litellm"]["endUsers"][0]["customerId"], id);
    assert!(c.xr_status.get("customers").is_none());
    input["status"] = json!({"customers": ""});
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &observed("True"))
    else {
        panic!("fatal")
    };
    assert!(c.xr_status.get("customers").is_none());
}

#[test]
fn customers_are_read_from_where_the_input_says() {
    let mut input = input();
    input["fields"] = json!({"customers": "spec.parameters.endUsers"});
    let spec = json!({"team": {"models": ["gpt-4o"]},
                      "parameters": {"endUsers": [{"name": "acme", "models": ["o1"]}]}});
    let Outcome::Fatal(problems) = compose(&xr(spec.clone()), Some(&input), &Fixed::default())
    else {
        panic!("composed")
    };
    assert_eq!(problems[0].field, "spec.parameters.endUsers[0].models[0]");
    let spec = with(spec, "/parameters/endUsers/0/models/0", json!("gpt-4o"));
    let Outcome::Composed(c) = compose(&xr(spec), Some(&input), &Fixed::default()) else {
        panic!("fatal")
    };
    assert_eq!(
        c.resources["customer-acme"].resource["spec"]["forProvider"]["models"],
        json!(["gpt-4o"])
    );
}

#[test]
fn a_customers_budget_follows_the_budgets_observed_name() {
    let observed = Named(
        Fixed::default(),
        BTreeMap::from([
            ("budget".to_string(), "ml-budget".to_string()),
            ("customer-acme".to_string(), "ml-acme".to_string()),
        ]),
    );
    let mut input = input();
    input["policy"] = json!({});
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    let acme = &c.resources["customer-acme"].resource;
    assert_eq!(acme["metadata"]["name"], "ml-acme");
    assert_eq!(
        acme["spec"]["forProvider"]["budgetRef"],
        json!({"name": "ml-budget"})
    );
    assert_eq!(
        c.resources["customer-globex"].resource["metadata"]["name"],
        "ml.customer-globex"
    );
}

#[test]
fn customers_take_the_inputs_metadata_and_usages() {
    let mut input = input();
    input["policy"] = json!({});
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    input["usages"] = json!(true);
    input["composed"] = json!({
        "customers": {"labels": {"kind": "customer"},
                      "managementPolicies": ["Observe", "Create", "Update", "LateInitialize"]},
        "byName": {"customer-globex": {"annotations": {"crossplane.io/paused": "true"}}}
    });
    let Outcome::Composed(c) = compose(&xr(customers_spec()), Some(&input), &Fixed::default())
    else {
        panic!("fatal")
    };
    let r = |name: &str| &c.resources[name].resource;
    for customer in ["customer-acme", "customer-globex", "customer-initech"] {
        assert_eq!(r(customer)["metadata"]["labels"]["kind"], "customer");
        assert_eq!(
            r(customer)["spec"]["managementPolicies"],
            json!(["Observe", "Create", "Update", "LateInitialize"])
        );
        // The attached instance is deleted after the customers.
        let usage = &r(&format!("usage-{customer}"))["spec"];
        assert_eq!(usage["by"]["kind"], "LiteLLMCustomer");
        assert_eq!(
            usage["by"]["resourceRef"]["name"],
            r(customer)["metadata"]["name"]
        );
        assert_eq!(usage["of"]["kind"], "LiteLLMInstance");
    }
    assert_eq!(
        r("customer-globex")["metadata"]["annotations"]["crossplane.io/paused"],
        "true"
    );
    assert!(r("team")["metadata"].get("labels").is_none());
    assert!(c
        .warnings
        .iter()
        .all(|w| w.field != "input.composed.byName.customer-globex"));
    // Management policies on a customer are checked like any other's.
    input["composed"] = json!({"customers": {"managementPolicies": ["Create"]}});
    assert_eq!(
        fatal_fields(compose(
            &xr(customers_spec()),
            Some(&input),
            &Fixed::default()
        )),
        ["input.composed.customers.managementPolicies"]
    );
}

// ------------------------------------ guardrails, access groups, customer budget

/// A tenant's XR (team-ml) on the shared instance (litellm) asking for the
/// platform's guardrails, two access groups, and customers held to a
/// customers' budget of their own.
fn team_objects_spec() -> Value {
    json!({
        "team": {"models": ["gpt-4o"]},
        "budget": {"maxBudget": "50", "duration": "30d"},
        "keys": [{"name": "app"}],
        "guardrails": ["pii-mask", "toxicity"],
        "accessGroups": [
            {"name": "frontier", "description": "bigger models", "models": ["gpt-4o-mini"]},
            {"name": "mine", "models": ["team-ml/tuned"]}
        ],
        "customerBudget": {"maxBudget": "5", "duration": "1d"},
        "customers": [{"name": "acme", "budget": true}, {"name": "globex"}]
    })
}

/// The policy of [`team_objects_spec`]: its guardrails listed, one required.
fn team_objects_policy() -> Value {
    json!({"allowedModels": ["gpt-4o", "gpt-4o-mini", "team-ml/*"],
           "allowedGuardrails": ["pii-*", "toxicity"],
           "requiredGuardrails": ["audit"]})
}

/// [`team_objects_policy`] with the fields of `extra` replaced.
fn objects_policy(extra: Value) -> Value {
    let mut p = team_objects_policy();
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

#[test]
fn guardrails_access_groups_and_the_customers_budget_render_as_the_providers_kinds() {
    let outcome = compose_people(team_objects_policy(), team_objects_spec());
    let Outcome::Composed(c) = &outcome else {
        panic!("fatal: {outcome:?}")
    };
    // The team's guardrails: the policy's required one first.
    assert_eq!(
        for_provider(&outcome, "team")["guardrails"],
        json!(["audit", "pii-mask", "toxicity"])
    );
    assert!(for_provider(&outcome, "key-app")
        .get("guardrails")
        .is_none());
    assert_eq!(
        defaults(&outcome),
        ["spec.guardrails: the policy's required guardrails apply: audit"]
    );
    // Each access group: the XR's namespace, the shared instance, the team
    // by reference, no name of its own (the provider's carries the owner).
    for (name, p) in [
        (
            "access-group-frontier",
            json!({"description": "bigger models", "models": ["gpt-4o-mini"],
                   "teamRefs": [{"name": "ml.team"}]}),
        ),
        (
            "access-group-mine",
            json!({"models": ["team-ml/tuned"], "teamRefs": [{"name": "ml.team"}]}),
        ),
    ] {
        let r = &c.resources[name].resource;
        assert_eq!(r["kind"], "LiteLLMAccessGroup");
        assert_eq!(r["apiVersion"], "litellm.m.crossplane.io/v1alpha1");
        assert_eq!(r["metadata"]["namespace"], "team-ml");
        assert_eq!(r["metadata"]["name"], format!("ml.{name}"));
        assert!(r["metadata"].get("annotations").is_none());
        assert_eq!(
            r["spec"]["instanceRef"],
            json!({"name": "shared", "namespace": "litellm"})
        );
        assert_eq!(r["spec"]["forProvider"], p, "{name}");
    }
    // The customers' budget, linked by the customer held to a budget.
    assert_eq!(
        c.resources["budget-customers"].resource["kind"],
        "LiteLLMBudget"
    );
    assert_eq!(
        for_provider(&outcome, "budget-customers"),
        json!({"maxBudget": "5", "budgetDuration": "1d"})
    );
    assert_eq!(
        for_provider(&outcome, "customer-acme")["budgetRef"],
        json!({"name": "ml.budget-customers"})
    );
    assert!(for_provider(&outcome, "customer-globex")
        .get("budgetRef")
        .is_none());
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    // Without guardrails of its own or required ones the team's are left
    // to LiteLLM; an empty list clears them.
    let spec = without(team_objects_spec(), "/guardrails");
    let unrequired = objects_policy(json!({"requiredGuardrails": null}));
    let outcome = compose_people(unrequired.clone(), spec.clone());
    assert!(for_provider(&outcome, "team").get("guardrails").is_none());
    let outcome = compose_people(unrequired, with(spec, "/guardrails", json!([])));
    assert_eq!(for_provider(&outcome, "team")["guardrails"], json!([]));
}

#[test]
fn a_customers_budget_defaults_to_the_policys_ceiling_and_otherwise_the_xrs_budget_stands() {
    // The ceiling renders a customers' budget for the customers held to one.
    let spec = without(team_objects_spec(), "/customerBudget");
    let outcome = compose_people(
        objects_policy(json!({"maxCustomerBudget": "2"})),
        spec.clone(),
    );
    assert_eq!(
        for_provider(&outcome, "budget-customers"),
        json!({"maxBudget": "2"})
    );
    assert_eq!(
        for_provider(&outcome, "customer-acme")["budgetRef"],
        json!({"name": "ml.budget-customers"})
    );
    assert!(defaults(&outcome).contains(
        &"spec.customerBudget.maxBudget: not set: the policy ceiling 2 per customer applies"
            .to_string()
    ));
    // Without either, the XR's budget stands in, as before.
    let outcome = compose_people(team_objects_policy(), spec);
    assert!(
        matches!(&outcome, Outcome::Composed(c) if !c.resources.contains_key("budget-customers"))
    );
    assert_eq!(
        for_provider(&outcome, "customer-acme")["budgetRef"],
        json!({"name": "ml.budget"})
    );
    // A customers' budget nobody links is a warning.
    let spec = with(team_objects_spec(), "/customers/0/budget", json!(false));
    let Outcome::Composed(c) = compose_people(team_objects_policy(), spec) else {
        panic!("fatal")
    };
    let warned: Vec<&str> = c.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(warned, ["spec.customerBudget"]);
}

#[test]
fn each_bad_guardrail_access_group_or_customers_budget_is_fatal_and_names_its_field() {
    let spec = team_objects_spec;
    let policy = team_objects_policy;
    let merged = objects_policy;
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "a guardrail the policy does not list",
            policy(),
            with(spec(), "/guardrails/1", json!("jailbreak")),
            "spec.guardrails[1]",
        ),
        (
            "guardrails without a policy list",
            merged(json!({"allowedGuardrails": null})),
            with(spec(), "/guardrails", json!(["pii-mask"])),
            "spec.guardrails[0]",
        ),
        (
            "a guardrail listed twice",
            policy(),
            with(spec(), "/guardrails/1", json!("pii-mask")),
            "spec.guardrails[1]",
        ),
        (
            "guardrails that are not a list",
            policy(),
            with(spec(), "/guardrails", json!("pii-mask")),
            "spec.guardrails",
        ),
        (
            "guardrails through the team's metadata",
            policy(),
            with(
                spec(),
                "/team/metadata",
                json!({"guardrails": ["jailbreak"]}),
            ),
            "spec.team.metadata.guardrails",
        ),
        (
            "access groups the policy does not allow",
            merged(json!({"allowAccessGroups": false})),
            spec(),
            "spec.accessGroups",
        ),
        (
            "more access groups than the policy allows",
            merged(json!({"maxAccessGroups": 1})),
            spec(),
            "spec.accessGroups",
        ),
        (
            "an access group's model the policy does not allow",
            policy(),
            with(spec(), "/accessGroups/0/models/0", json!("claude-3")),
            "spec.accessGroups[0].models[0]",
        ),
        (
            "an access group's model of another namespace",
            merged(json!({"allowedModels": null})),
            with(spec(), "/accessGroups/1/models/0", json!("team-x/m")),
            "spec.accessGroups[1].models[0]",
        ),
        (
            "an access group without models",
            policy(),
            without(spec(), "/accessGroups/1/models"),
            "spec.accessGroups[1].models",
        ),
        (
            "two access groups of one name",
            policy(),
            with(spec(), "/accessGroups/1/name", json!("frontier")),
            "spec.accessGroups[1].name",
        ),
        (
            "an access group without a name",
            policy(),
            with(spec(), "/accessGroups/1", json!({"models": ["gpt-4o"]})),
            "spec.accessGroups[1]",
        ),
        (
            "a customers' budget above the policy's ceiling",
            merged(json!({"maxCustomerBudget": "4"})),
            spec(),
            "spec.customerBudget.maxBudget",
        ),
        (
            "a customers' budget that never resets properly",
            policy(),
            with(spec(), "/customerBudget/duration", json!("daily")),
            "spec.customerBudget.duration",
        ),
        (
            "a broken ceiling per customer",
            merged(json!({"maxCustomerBudget": "lots"})),
            spec(),
            "input.policy.maxCustomerBudget",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, policy, spec, field) in cases {
        match compose_people(policy, spec) {
            Outcome::Fatal(problems) if problems.len() == 1 && problems[0].field == field => {}
            Outcome::Fatal(problems) => wrong.push(format!("{what}: {problems:?}")),
            Outcome::Composed(_) => wrong.push(format!("{what}: composed")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn access_groups_report_their_ids_and_readiness_and_take_the_inputs_metadata() {
    let ready = |status: &str, at: Value| json!({"atProvider": at, "conditions": [{"type": "Ready", "status": status}]});
    let mut statuses: BTreeMap<String, Value> = [
        "team",
        "budget",
        "budget-customers",
        "key-app",
        "customer-acme",
        "customer-globex",
    ]
    .map(|name| (name.to_string(), ready("True", json!({}))))
    .into();
    statuses.insert(
        "access-group-frontier".into(),
        ready(
            "True",
            json!({"accessGroupId": "f4b5", "assignedTeamIds": ["t"]}),
        ),
    );
    statuses.insert("access-group-mine".into(), ready("False", json!({})));
    let observed = Fixed(statuses, Some(json!({"ready": true})), None);
    let mut input = input();
    input["policy"] = team_objects_policy();
    let Outcome::Composed(c) = compose(&xr(team_objects_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    assert_eq!(
        c.xr_status["accessGroups"],
        json!([{"name": "frontier", "accessGroupId": "f4b5", "ready": true},
               {"name": "mine", "ready": false}])
    );
    assert_eq!(c.xr_status["ready"], false);
    // An XR without access groups reports none (its XRD may not declare
    // the field).
    let Outcome::Composed(c) = compose(&xr(good_spec()), Some(&input), &observed) else {
        panic!("fatal")
    };
    assert!(c.xr_status.get("accessGroups").is_none());

    // The input's metadata and usages reach the groups; the budget's
    // section stays the team budget's.
    input["instance"] = json!({"attach": {"endpoint": "http://litellm.litellm.svc:4000",
                                          "masterKeySecretRef": {"name": "m", "key": "k"}}});
    input["usages"] = json!(true);
    input["composed"] = json!({
        "accessGroups": {"labels": {"kind": "group"}, "managementPolicies": ["Observe"]},
        "budget": {"annotations": {"crossplane.io/external-name": "team-budget"}}
    });
    let Outcome::Composed(c) = compose(&xr(team_objects_spec()), Some(&input), &Fixed::default())
    else {
        panic!("fatal")
    };
    let r = |name: &str| &c.resources[name].resource;
    for group in ["access-group-frontier", "access-group-mine"] {
        assert_eq!(r(group)["metadata"]["labels"]["kind"], "group");
        assert_eq!(r(group)["spec"]["managementPolicies"], json!(["Observe"]));
        let usage = &r(&format!("usage-{group}"))["spec"];
        assert_eq!(usage["by"]["kind"], "LiteLLMAccessGroup");
        assert_eq!(usage["of"]["kind"], "LiteLLMInstance");
    }
    assert_eq!(
        r("budget")["metadata"]["annotations"]["crossplane.io/external-name"],
        "team-budget"
    );
    assert!(r("budget-customers")["metadata"]
        .get("annotations")
        .is_none());
}

// ------------------------------------ the team's logging destinations

/// [`team_objects_spec`] with two logging destinations: Langfuse for every
/// request, Langsmith for the failures, each with its credential from a
/// Secret of the XR's namespace.
fn logging_spec() -> Value {
    with(
        team_objects_spec(),
        "/logging",
        json!([
            {"callbackName": "langfuse",
             "callbackVars": {"langfuse_host": "https://cloud.langfuse.com",
                              "langfuse_public_key": "pk-lf-1"},
             "secretCallbackVars": {"langfuse_secret_key": {"name": "langfuse", "key": "secretKey"}}},
            {"callbackName": "langsmith", "callbackType": "failure",
             "callbackVars": {"langsmith_project": "ml"},
             "secretCallbackVars": {"langsmith_api_key": {"name": "langsmith", "key": "apiKey"}}}
        ]),
    )
}

#[test]
fn the_teams_logging_destinations_render_in_order_on_the_team() {
    let policy = objects_policy(json!({"allowLogging": true,
                                       "allowedLoggingCallbacks": ["langfuse", "langsmith"],
                                       "maxLoggingCallbacks": 2}));
    let outcome = compose_people(policy, logging_spec());
    let Outcome::Composed(c) = &outcome else {
        panic!("fatal: {outcome:?}")
    };
    // As LiteLLMTeam.forProvider.logging takes them: the type LiteLLM
    // would default to written out, the Secrets by name and key.
    assert_eq!(
        for_provider(&outcome, "team")["logging"],
        json!([
            {"callbackName": "langfuse", "callbackType": "success_and_failure",
             "callbackVars": {"langfuse_host": "https://cloud.langfuse.com",
                              "langfuse_public_key": "pk-lf-1"},
             "secretCallbackVars": {"langfuse_secret_key": {"name": "langfuse", "key": "secretKey"}}},
            {"callbackName": "langsmith", "callbackType": "failure",
             "callbackVars": {"langsmith_project": "ml"},
             "secretCallbackVars": {"langsmith_api_key": {"name": "langsmith", "key": "apiKey"}}}
        ])
    );
    // On the team only: no other composed resource carries them.
    for (name, r) in &c.resources {
        if name != "team" {
            assert!(
                r.resource["spec"]["forProvider"].get("logging").is_none(),
                "{name}"
            );
        }
    }
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);

    // Without logging the team's callbacks are left to LiteLLM (nothing is
    // rendered, and the provider keeps those LiteLLM holds); an empty list
    // turns the team's own logging off, even where the policy allows none.
    let outcome = compose_people(team_objects_policy(), team_objects_spec());
    assert!(for_provider(&outcome, "team").get("logging").is_none());
    let closed = objects_policy(json!({"allowLogging": false, "maxLoggingCallbacks": 0}));
    let spec = with(team_objects_spec(), "/logging", json!([]));
    assert_eq!(
        for_provider(&compose_people(closed, spec), "team")["logging"],
        json!([])
    );
    // A field the function does not read is a warning.
    let spec = with(logging_spec(), "/logging/0/enabled", json!(true));
    let Outcome::Composed(c) = compose_people(team_objects_policy(), spec) else {
        panic!("fatal")
    };
    let warned: Vec<&str> = c.warnings.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(warned, ["spec.logging[0].enabled"]);
}

#[test]
fn each_bad_logging_destination_is_fatal_and_names_its_field() {
    let spec = logging_spec;
    let policy = team_objects_policy;
    let merged = objects_policy;
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        (
            "logging the policy does not allow",
            merged(json!({"allowLogging": false})),
            spec(),
            "spec.logging",
        ),
        (
            "more destinations than the policy allows",
            merged(json!({"maxLoggingCallbacks": 1})),
            spec(),
            "spec.logging",
        ),
        (
            "an integration the policy does not list",
            merged(json!({"allowedLoggingCallbacks": ["langfuse"]})),
            spec(),
            "spec.logging[1].callbackName",
        ),
        (
            "an integration without a team's own credentials",
            policy(),
            with(spec(), "/logging/0/callbackName", json!("s3")),
            "spec.logging[0].callbackName",
        ),
        (
            "a plain value from the proxy's environment",
            policy(),
            with(
                spec(),
                "/logging/0/callbackVars/langfuse_public_key",
                json!("os.environ/LITELLM_MASTER_KEY"),
            ),
            "spec.logging[0].callbackVars.langfuse_public_key",
        ),
        (
            "a variable plain and from a Secret",
            policy(),
            with(
                spec(),
                "/logging/0/callbackVars/langfuse_secret_key",
                json!("sk-lf-1"),
            ),
            "spec.logging[0].secretCallbackVars.langfuse_secret_key",
        ),
        (
            "a second callback of one name and type",
            policy(),
            with(
                spec(),
                "/logging/1",
                json!({"callbackName": "langfuse", "callbackType": "success_and_failure"}),
            ),
            "spec.logging[1]",
        ),
        (
            "a variable LiteLLM does not accept",
            policy(),
            with(spec(), "/logging/1/callbackVars/api_base", json!("x")),
            "spec.logging[1].callbackVars.api_base",
        ),
        (
            "the platform's message logs switched off by a tenant",
            policy(),
            with(
                spec(),
                "/logging/1/callbackVars/turn_off_message_logging",
                json!("true"),
            ),
            "spec.logging[1].callbackVars.turn_off_message_logging",
        ),
        (
            "a Secret the policy does not list",
            merged(json!({"allowedSecrets": ["langfuse"]})),
            spec(),
            "spec.logging[1].secretCallbackVars.langsmith_api_key",
        ),
        (
            "a type LiteLLM does not know",
            policy(),
            with(spec(), "/logging/1/callbackType", json!("always")),
            "spec.logging[1].callbackType",
        ),
        (
            "callbacks through the team's metadata",
            policy(),
            with(spec(), "/team/metadata", json!({"logging": []})),
            "spec.team.metadata.logging",
        ),
        (
            "deprecated callbacks through the team's metadata",
            policy(),
            with(spec(), "/team/metadata", json!({"callback_settings": {}})),
            "spec.team.metadata.callback_settings",
        ),
        (
            "callbacks through a key's metadata",
            policy(),
            with(
                spec(),
                "/keys/0/metadata",
                json!({"logging": [{"callback_name": "langfuse"}]}),
            ),
            "spec.keys[0].metadata.logging",
        ),
    ];
    let mut wrong = Vec::new();
    for (what, policy, spec, field) in cases {
        match compose_people(policy, spec) {
            Outcome::Fatal(problems) if problems.len() == 1 && problems[0].field == field => {}
            Outcome::Fatal(problems) => wrong.push(format!("{what}: {problems:?}")),
            Outcome::Composed(_) => wrong.push(format!("{what}: composed")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
