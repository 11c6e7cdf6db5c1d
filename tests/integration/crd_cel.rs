//! The CEL rules of the generated CRDs, evaluated with `kube-cel` against
//! good and bad objects. Every rule in every generated CRD must be shown
//! rejecting at least one object, so a new rule cannot go untested.

use std::collections::BTreeSet;

use litellm_crossplane::api::generate::managed_crds;
use serde_json::{json, Value};

fn schema_of(kind: &str) -> Value {
    let crd = managed_crds()
        .into_iter()
        .find(|c| c.spec.names.kind == kind)
        .unwrap_or_else(|| panic!("no CRD for {kind}"));
    serde_json::to_value(
        &crd.spec.versions[0]
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema,
    )
    .unwrap()
}

/// Every CEL rule in the generated CRDs.
fn all_rules() -> BTreeSet<String> {
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Array(rules)) = map.get("x-kubernetes-validations") {
                    for r in rules {
                        out.insert(r["rule"].as_str().unwrap().to_string());
                    }
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for crd in managed_crds() {
        walk(&serde_json::to_value(&crd).unwrap(), &mut out);
    }
    out
}

fn instance(spec: Value) -> Value {
    json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMInstance",
        "metadata": {"name": "litellm", "namespace": "default"},
        "spec": spec,
    })
}

const SECRET_REF: &str = "litellm-master-key";

fn good_instances() -> Vec<(&'static str, Value)> {
    vec![
        (
            "attached with an endpoint and a master key Secret",
            json!({"workload": {"managed": false, "endpoint": "http://litellm.platform.svc:4000"},
                   "masterKey": {"secretRef": {"name": SECRET_REF, "key": "LITELLM_MASTER_KEY"}}}),
        ),
        (
            "attached by the name formula, no endpoint",
            json!({"workload": {"managed": false}, "masterKey": {"secretRef": {"name": SECRET_REF, "key": "k"}}}),
        ),
        (
            "provisioned with a generated master key",
            json!({"masterKey": {"autoGenerate": true}}),
        ),
        (
            "PodDisruptionBudgets with one count each, or none",
            json!({"masterKey": {"autoGenerate": true},
                   "workload": {"topology": "split", "replicas": 3,
                                "podDisruptionBudget": {"minAvailable": "50%"},
                                "gateway": {"podDisruptionBudget": {"maxUnavailable": 1}},
                                "ui": {"podDisruptionBudget": {"enabled": false}}}}),
        ),
        (
            "explicitly managed with a master key Secret",
            json!({"workload": {"managed": true}, "masterKey": {"secretRef": {"name": SECRET_REF, "key": "k"}}}),
        ),
    ]
}

fn bad_instances() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "an endpoint on a managed-by-default instance",
            json!({"workload": {"endpoint": "http://x:4000"}, "masterKey": {"autoGenerate": true}}),
            "workload.endpoint is only allowed when workload.managed is false",
        ),
        (
            "an endpoint on an explicitly managed instance",
            json!({"workload": {"managed": true, "endpoint": "http://x:4000"},
                   "masterKey": {"secretRef": {"name": SECRET_REF, "key": "k"}}}),
            "workload.endpoint is only allowed when workload.managed is false",
        ),
        (
            "an attached instance with only autoGenerate",
            json!({"workload": {"managed": false}, "masterKey": {"autoGenerate": true}}),
            "masterKey.secretRef is required when workload.managed is false",
        ),
        (
            "no master key at all",
            json!({}),
            "masterKey needs secretRef, or autoGenerate: true for a provisioned proxy",
        ),
        (
            "a PodDisruptionBudget with both counts",
            json!({"masterKey": {"autoGenerate": true},
                   "workload": {"replicas": 3, "podDisruptionBudget": {"minAvailable": 1, "maxUnavailable": "50%"}}}),
            "set at most one of minAvailable and maxUnavailable",
        ),
        (
            "a role's PodDisruptionBudget with both counts",
            json!({"masterKey": {"autoGenerate": true},
                   "workload": {"topology": "split", "gateway": {"podDisruptionBudget": {"minAvailable": "50%", "maxUnavailable": 1}}}}),
            "set at most one of minAvailable and maxUnavailable",
        ),
    ]
}

#[test]
fn good_instances_pass_every_rule() {
    let schema = schema_of("LiteLLMInstance");
    for (what, spec) in good_instances() {
        let result = kube_cel::validate(&schema, &instance(spec), None);
        assert!(result.is_ok(), "{what}: {result:?}");
    }
}

#[test]
fn bad_instances_are_rejected_with_the_rules_message_and_every_rule_is_exercised() {
    let schema = schema_of("LiteLLMInstance");
    let mut exercised = BTreeSet::new();
    for (what, spec, message) in bad_instances() {
        let errors = kube_cel::validate(&schema, &instance(spec), None)
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{what}: {errors:?}");
        exercised.insert(matching[0].rule.clone());
    }
    exercised.extend(key_transition_rules_reject_changes());
    exercised.extend(team_rules_reject_a_parallel_request_limit());
    exercised.extend(key_rules_reject_a_type_and_routes_together());
    exercised.extend(key_rules_reject_a_soft_budget_beside_a_linked_budget());
    exercised.extend(credential_rules_reject_no_values_and_values_twice());
    exercised.extend(mcp_server_rules_reject_mixed_transports_and_lone_auth());
    exercised.extend(guardrail_rules_reject_the_api_key_as_a_secret_param());
    exercised.extend(organization_rules_reject_a_member_named_twice_or_not_at_all());
    assert_eq!(
        exercised,
        all_rules(),
        "a CEL rule of the generated CRDs has no rejecting test case"
    );
}

fn key(for_provider: Value) -> Value {
    json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMVirtualKey",
        "metadata": {"name": "ci", "namespace": "default"},
        "spec": {"instanceRef": {"name": "litellm"}, "forProvider": for_provider},
    })
}

/// A key gives its routes by `keyType` or by `allowedRoutes`, not both
/// (LiteLLM would replace the list with the type's group). Returns the rule
/// that rejected it.
fn key_rules_reject_a_type_and_routes_together() -> BTreeSet<String> {
    let schema = schema_of("LiteLLMVirtualKey");
    let message = litellm_crossplane::api::key::KEY_TYPE_OR_ROUTES;
    let both = json!({"keyType": "llm_api", "allowedRoutes": ["llm_api_routes"]});
    let errors = kube_cel::validate(&schema, &key(both), None)
        .err()
        .expect("a key with keyType and allowedRoutes is refused");
    let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
    assert_eq!(matching.len(), 1, "{errors:?}");
    for one in [
        json!({"keyType": "read_only", "modelAliases": {"fast": "gpt-4o"}}),
        json!({"allowedRoutes": ["/chat/completions"], "modelRpmLimit": {"gpt-4o": 5}}),
    ] {
        let result = kube_cel::validate(&schema, &key(one.clone()), None);
        assert!(result.is_ok(), "{one}: {result:?}");
    }
    BTreeSet::from([matching[0].rule.clone()])
}

/// A key's soft budget is its own: not beside `budgetRef` or `budgetId`
/// (LiteLLM would write it into the linked budget). Returns the rule that
/// rejected them.
fn key_rules_reject_a_soft_budget_beside_a_linked_budget() -> BTreeSet<String> {
    let schema = schema_of("LiteLLMVirtualKey");
    let message = litellm_crossplane::api::key::KEY_SOFT_BUDGET;
    let mut rules = BTreeSet::new();
    for both in [
        json!({"softBudget": "3", "budgetRef": {"name": "shared"}}),
        json!({"softBudget": "3", "budgetId": "b"}),
    ] {
        let errors = kube_cel::validate(&schema, &key(both.clone()), None)
            .err()
            .unwrap_or_else(|| panic!("{both} is refused"));
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{errors:?}");
        rules.insert(matching[0].rule.clone());
    }
    for one in [
        json!({"softBudget": "3", "maxBudget": "10"}),
        json!({"budgetRef": {"name": "shared"}}),
    ] {
        let result = kube_cel::validate(&schema, &key(one.clone()), None);
        assert!(result.is_ok(), "{one}: {result:?}");
    }
    rules
}

/// An organization's member names its user by `userRef` or `userId`,
/// exactly one. Returns the rule that rejected them.
fn organization_rules_reject_a_member_named_twice_or_not_at_all() -> BTreeSet<String> {
    let schema = schema_of("LiteLLMOrganization");
    let organization = |members: Value| {
        json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMOrganization",
            "metadata": {"name": "acme", "namespace": "default"},
            "spec": {"instanceRef": {"name": "litellm"}, "forProvider": {"members": members}},
        })
    };
    let message = litellm_crossplane::api::organization::ORGANIZATION_MEMBER_USER;
    let mut rules = BTreeSet::new();
    for member in [
        json!({"userRef": {"name": "a"}, "userId": "b"}),
        json!({"role": "org_admin"}),
    ] {
        let errors = kube_cel::validate(&schema, &organization(json!([member])), None)
            .err()
            .expect("a member naming its user twice or not at all is refused");
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{errors:?}");
        rules.insert(matching[0].rule.clone());
    }
    let fine = json!([
        {"userRef": {"name": "a"}, "role": "internal_user_viewer"},
        {"userId": "b", "role": "org_admin"},
    ]);
    let result = kube_cel::validate(&schema, &organization(fine), None);
    assert!(result.is_ok(), "{result:?}");
    rules
}

/// A team takes every shared limit but `maxParallelRequests`, which
/// LiteLLM drops for teams. Returns the rule that rejected it.
fn team_rules_reject_a_parallel_request_limit() -> BTreeSet<String> {
    let schema = schema_of("LiteLLMTeam");
    let team = |for_provider: Value| {
        json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMTeam",
            "metadata": {"name": "ml", "namespace": "default"},
            "spec": {"instanceRef": {"name": "litellm"}, "forProvider": for_provider},
        })
    };
    let message = litellm_crossplane::api::limits::TEAM_PARALLEL_REQUESTS;
    let errors = kube_cel::validate(&schema, &team(json!({"maxParallelRequests": 2})), None)
        .err()
        .expect("a team with maxParallelRequests is refused");
    let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
    assert_eq!(matching.len(), 1, "{errors:?}");
    let limits = json!({"maxBudget": "10", "budgetDuration": "30d", "tpmLimit": 1, "rpmLimit": 1});
    let result = kube_cel::validate(&schema, &team(limits), None);
    assert!(result.is_ok(), "{result:?}");
    let mut rules = BTreeSet::from([matching[0].rule.clone()]);
    // A member names its user one way, exactly.
    let message = litellm_crossplane::api::team::MEMBER_USER;
    for member in [
        json!({"userRef": {"name": "a"}, "userId": "b"}),
        json!({"userId": "b", "userEmail": "b@example.com"}),
        json!({"role": "user"}),
    ] {
        let errors = kube_cel::validate(&schema, &team(json!({"members": [member]})), None)
            .err()
            .expect("a member naming its user twice or not at all is refused");
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{errors:?}");
        rules.insert(matching[0].rule.clone());
    }
    let fine = json!({"members": [
        {"userRef": {"name": "a"}},
        {"userId": "b", "role": "admin"},
        {"userEmail": "c@example.com"},
    ]});
    let result = kube_cel::validate(&schema, &team(fine), None);
    assert!(result.is_ok(), "{result:?}");
    // A team names its organization one way at most.
    let message = litellm_crossplane::api::team::TEAM_ORGANIZATION;
    let both = json!({"organizationRef": {"name": "acme"}, "organizationId": "acme"});
    let errors = kube_cel::validate(&schema, &team(both), None)
        .err()
        .expect("a team naming its organization twice is refused");
    let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
    assert_eq!(matching.len(), 1, "{errors:?}");
    rules.insert(matching[0].rule.clone());
    for one in [
        json!({"organizationRef": {"name": "acme"}}),
        json!({"organizationId": "acme"}),
    ] {
        let result = kube_cel::validate(&schema, &team(one), None);
        assert!(result.is_ok(), "{result:?}");
    }
    // A logging variable is plain or from a Secret, not both.
    let message = litellm_crossplane::api::team::CALLBACK_VARIABLE_ONCE;
    let logging = |secret_var: &str| {
        json!({"logging": [{
            "callbackName": "langfuse",
            "callbackVars": {"langfuse_host": "https://cloud.langfuse.com",
                             "langfuse_public_key": "pk-lf-1"},
            "secretCallbackVars": {secret_var: {"name": "s", "key": "k"}},
        }]})
    };
    let errors = kube_cel::validate(&schema, &team(logging("langfuse_public_key")), None)
        .err()
        .expect("a variable both plain and from a Secret is refused");
    let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
    assert_eq!(matching.len(), 1, "{errors:?}");
    rules.insert(matching[0].rule.clone());
    let result = kube_cel::validate(&schema, &team(logging("langfuse_secret_key")), None);
    assert!(result.is_ok(), "{result:?}");
    rules
}

/// `forProvider.duration` stays as created: changing, adding and removing it
/// are refused; other changes pass. Returns the rules that rejected.
fn key_transition_rules_reject_changes() -> BTreeSet<String> {
    let schema = schema_of("LiteLLMVirtualKey");
    let message = litellm_crossplane::api::key::DURATION_IMMUTABLE;
    let mut exercised = BTreeSet::new();
    for (what, old, new) in [
        (
            "changed",
            json!({"duration": "30d"}),
            json!({"duration": "60d"}),
        ),
        ("added", json!({}), json!({"duration": "30d"})),
        ("removed", json!({"duration": "30d"}), json!({})),
    ] {
        let errors = kube_cel::validate(&schema, &key(new), Some(&key(old)))
            .err()
            .unwrap_or_else(|| panic!("duration {what}: accepted"));
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "duration {what}: {errors:?}");
        exercised.insert(matching[0].rule.clone());
    }
    for (what, old, new) in [
        (
            "other fields",
            json!({"duration": "30d", "maxBudget": "1"}),
            json!({"duration": "30d", "maxBudget": "2"}),
        ),
        ("never set", json!({}), json!({"keyAlias": "x"})),
    ] {
        let result = kube_cel::validate(&schema, &key(new), Some(&key(old)));
        assert!(result.is_ok(), "{what}: {result:?}");
    }
    assert!(kube_cel::validate(&schema, &key(json!({"duration": "30d"})), None).is_ok());
    exercised
}

/// A credential needs a value, and gives each name once (from a Secret or
/// plain). Returns the rules that rejected.
fn credential_rules_reject_no_values_and_values_twice() -> BTreeSet<String> {
    use litellm_crossplane::api::credential::{CREDENTIAL_NEEDS_VALUES, CREDENTIAL_VALUE_TWICE};
    let schema = schema_of("LiteLLMCredential");
    let credential = |for_provider: Value| {
        json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMCredential",
            "metadata": {"name": "openai", "namespace": "default"},
            "spec": {"instanceRef": {"name": "litellm"}, "forProvider": for_provider},
        })
    };
    let from_secret = json!([{"name": "api_key", "secretKeyRef": {"name": "s", "key": "k"}}]);
    let mut exercised = BTreeSet::new();
    for (what, for_provider, message) in [
        ("nothing", json!({}), CREDENTIAL_NEEDS_VALUES),
        (
            "empty lists",
            json!({"values": [], "plainValues": {}, "displayName": "x"}),
            CREDENTIAL_NEEDS_VALUES,
        ),
        (
            "a name twice",
            json!({"values": from_secret, "plainValues": {"api_key": "x"}}),
            CREDENTIAL_VALUE_TWICE,
        ),
    ] {
        let errors = kube_cel::validate(&schema, &credential(for_provider), None)
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{what}: {errors:?}");
        exercised.insert(matching[0].rule.clone());
    }
    for (what, for_provider) in [
        ("from a Secret", json!({"values": from_secret})),
        ("plain", json!({"plainValues": {"api_base": "http://x"}})),
        (
            "both, other names",
            json!({"values": from_secret, "plainValues": {"api_base": "http://x"}}),
        ),
    ] {
        let result = kube_cel::validate(&schema, &credential(for_provider), None);
        assert!(result.is_ok(), "{what}: {result:?}");
    }
    exercised
}

/// An MCP server over the network has a URL and no command, a stdio one a
/// command and no URL; an authentication type other than `none` comes with
/// its Secret, and only then. Returns the rules that rejected.
fn mcp_server_rules_reject_mixed_transports_and_lone_auth() -> BTreeSet<String> {
    use litellm_crossplane::api::mcp_server::{MCP_AUTH_SECRET, MCP_TRANSPORT_FIELDS};
    let schema = schema_of("LiteLLMMCPServer");
    let server = |for_provider: Value| {
        json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMMCPServer",
            "metadata": {"name": "github", "namespace": "default"},
            "spec": {"instanceRef": {"name": "litellm"}, "forProvider": for_provider},
        })
    };
    let secret = json!({"name": "s", "key": "k"});
    let mut exercised = BTreeSet::new();
    for (what, for_provider, message) in [
        (
            "http without a url",
            json!({"transport": "http"}),
            MCP_TRANSPORT_FIELDS,
        ),
        (
            "sse with a command",
            json!({"transport": "sse", "url": "https://h/", "command": "npx"}),
            MCP_TRANSPORT_FIELDS,
        ),
        (
            "http with args",
            json!({"transport": "http", "url": "https://h/", "args": ["x"]}),
            MCP_TRANSPORT_FIELDS,
        ),
        (
            "stdio without a command",
            json!({"transport": "stdio", "args": ["x"]}),
            MCP_TRANSPORT_FIELDS,
        ),
        (
            "stdio with a url",
            json!({"transport": "stdio", "command": "npx", "url": "https://h/"}),
            MCP_TRANSPORT_FIELDS,
        ),
        (
            "a token type without its Secret",
            json!({"transport": "http", "url": "https://h/", "authType": "bearer_token"}),
            MCP_AUTH_SECRET,
        ),
        (
            "a Secret without a type",
            json!({"transport": "http", "url": "https://h/", "authSecretRef": secret}),
            MCP_AUTH_SECRET,
        ),
        (
            "a Secret with none",
            json!({"transport": "http", "url": "https://h/", "authType": "none",
                   "authSecretRef": secret}),
            MCP_AUTH_SECRET,
        ),
    ] {
        let errors = kube_cel::validate(&schema, &server(for_provider), None)
            .err()
            .unwrap_or_else(|| panic!("{what}: accepted"));
        let matching: Vec<_> = errors.iter().filter(|e| e.message == message).collect();
        assert_eq!(matching.len(), 1, "{what}: {errors:?}");
        exercised.insert(matching[0].rule.clone());
    }
    for (what, for_provider) in [
        ("http", json!({"transport": "http", "url": "https://h/mcp"})),
        (
            "sse with a token",
            json!({"transport": "sse", "url": "http://h:8080/sse", "authType": "api_key",
                   "authSecretRef": secret}),
        ),
        (
            "no authentication",
            json!({"transport": "http", "url": "https://h/", "authType": "none"}),
        ),
        (
            "stdio",
            json!({"transport": "stdio", "command": "npx", "args": ["-y", "x"]}),
        ),
    ] {
        let result = kube_cel::validate(&schema, &server(for_provider), None);
        assert!(result.is_ok(), "{what}: {result:?}");
    }
    exercised
}

fn guardrail_rules_reject_the_api_key_as_a_secret_param() -> BTreeSet<String> {
    use litellm_crossplane::api::guardrail::GUARDRAIL_SECRET_API_KEY;
    let schema = schema_of("LiteLLMGuardrail");
    let guardrail = |secret_param: &str| {
        json!({
            "apiVersion": "litellm.m.crossplane.io/v1alpha1",
            "kind": "LiteLLMGuardrail",
            "metadata": {"name": "pii", "namespace": "default"},
            "spec": {"instanceRef": {"name": "litellm"}, "forProvider": {
                "guardrail": "presidio", "mode": "pre_call",
                "secretParams": [{"name": secret_param,
                                  "secretKeyRef": {"name": "s", "key": "k"}}],
            }},
        })
    };
    assert!(kube_cel::validate(&schema, &guardrail("client_secret"), None).is_ok());
    let errors = kube_cel::validate(&schema, &guardrail("api_key"), None)
        .expect_err("api_key as a secret param: accepted");
    let matching: Vec<_> = errors
        .iter()
        .filter(|e| e.message == GUARDRAIL_SECRET_API_KEY)
        .collect();
    assert_eq!(matching.len(), 1, "{errors:?}");
    BTreeSet::from([matching[0].rule.clone()])
}
