//! The function over real gRPC on a local socket: insecure, mTLS with
//! certificates generated here, a client without a certificate refused, and
//! the legacy v1beta1 service answering exactly like v1.

use std::path::Path;
use std::time::Duration;

use function_sdk_rust::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use function_sdk_rust::proto::v1::{
    RunFunctionRequest, RunFunctionResponse, Severity, Status as ConditionStatus, Target,
};
use function_sdk_rust::resource::json_to_struct;
use litellm_crossplane::function::grpc::desired_resources;
use litellm_crossplane::function::render::{request, RenderFiles};
use litellm_crossplane::function::server::{serve_on, V1BETA1_SERVICE_NAME};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};

fn example_request() -> RunFunctionRequest {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/attach-existing-v2");
    let mut req = request(&RenderFiles {
        xr: dir.join("xr.yaml"),
        composition: dir.join("composition.yaml"),
        observed: Some(dir.join("observed.yaml")),
        required: Some(dir.join("required.yaml")),
    })
    .expect("the example loads");
    req.meta = Some(function_sdk_rust::proto::v1::RequestMeta {
        tag: "example-tag".into(),
        ..Default::default()
    });
    req
}

fn args(insecure: bool, tls_dir: Option<&Path>) -> function_sdk_rust::Args {
    function_sdk_rust::Args {
        debug: false,
        address: "127.0.0.1:0".into(),
        tls_certs_dir: tls_dir.map(Path::to_path_buf),
        insecure,
        max_recv_message_size: None,
        metrics_address: String::new(),
    }
}

/// Starts the server on a free port; it stops when the returned sender drops.
async fn start(args: function_sdk_rust::Args) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        serve_on(&args, listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    (port, stop)
}

/// An example folder (`examples/<folder>`) sent over gRPC to a server of
/// its own, insecure, whose answer holds no Fatal result.
struct ExampleRun {
    req: RunFunctionRequest,
    rsp: RunFunctionResponse,
    client: FunctionRunnerServiceClient<Channel>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl ExampleRun {
    async fn start(folder: &str) -> Self {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(folder);
        let req = request(&RenderFiles {
            xr: dir.join("xr.yaml"),
            composition: dir.join("composition.yaml"),
            observed: Some(dir.join("observed.yaml")),
            required: Some(dir.join("required.yaml")),
        })
        .expect("the example loads");
        let (port, _stop) = start(args(true, None)).await;
        let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
            .await
            .unwrap();
        let rsp = client
            .run_function(req.clone())
            .await
            .expect("answered")
            .into_inner();
        assert!(
            rsp.results
                .iter()
                .all(|r| r.severity != Severity::Fatal as i32),
            "{:?}",
            rsp.results
        );
        Self {
            req,
            rsp,
            client,
            _stop,
        }
    }

    /// The readiness of each desired resource, by name.
    fn readiness(&self) -> Vec<(&str, i32)> {
        let desired = self.rsp.desired.as_ref().unwrap();
        desired
            .resources
            .iter()
            .map(|(name, r)| (name.as_str(), r.ready))
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect()
    }

    /// The desired composite resource, as JSON.
    fn composite(&self) -> serde_json::Value {
        let desired = self.rsp.desired.as_ref().unwrap();
        function_sdk_rust::resource::struct_to_json(
            desired
                .composite
                .as_ref()
                .unwrap()
                .resource
                .as_ref()
                .unwrap(),
        )
    }

    /// The message of the Fatal result for the example's request with
    /// `policy.<field>` set to `value`.
    async fn fatal_under_policy(&mut self, field: &str, value: serde_json::Value) -> String {
        let mut bad = self.req.clone();
        let mut input = function_sdk_rust::resource::struct_to_json(bad.input.as_ref().unwrap());
        input["policy"][field] = value;
        bad.input = Some(json_to_struct(input.as_object().unwrap()));
        let rsp = self
            .client
            .run_function(bad)
            .await
            .expect("answered")
            .into_inner();
        rsp.results
            .iter()
            .find(|r| r.severity == Severity::Fatal as i32)
            .expect("a fatal result")
            .message
            .clone()
    }
}

async fn call_v1beta1(
    channel: Channel,
    req: RunFunctionRequest,
) -> Result<RunFunctionResponse, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let path = format!("/{V1BETA1_SERVICE_NAME}/RunFunction")
        .parse()
        .unwrap();
    grpc.unary(
        tonic::Request::new(req),
        path,
        tonic_prost::ProstCodec::default(),
    )
    .await
    .map(|r| r.into_inner())
}

fn assert_composes_the_example(rsp: &RunFunctionResponse) {
    assert_eq!(rsp.meta.as_ref().unwrap().tag, "example-tag");
    assert!(
        rsp.results
            .iter()
            .all(|r| r.severity != Severity::Fatal as i32),
        "{:?}",
        rsp.results
    );
    let names: Vec<String> = desired_resources(rsp).into_keys().collect();
    assert_eq!(names, ["budget", "key-ci", "key-notebooks", "team"]);
}

#[tokio::test]
async fn insecure_v1_and_v1beta1_answer_identically() {
    let (port, _stop) = start(args(true, None)).await;
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let req = example_request();
    let v1 = FunctionRunnerServiceClient::new(channel.clone())
        .run_function(req.clone())
        .await
        .unwrap()
        .into_inner();
    assert_composes_the_example(&v1);
    let v1beta1 = call_v1beta1(channel.clone(), req).await.unwrap();
    assert_eq!(v1, v1beta1);

    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    for service in [
        "",
        "apiextensions.fn.proto.v1.FunctionRunnerService",
        V1BETA1_SERVICE_NAME,
    ] {
        let status = health
            .check(tonic_health::pb::HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(
            status,
            tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        );
    }
}

#[tokio::test]
async fn a_domain_problem_is_a_fatal_result_not_a_grpc_error() {
    let (port, _stop) = start(args(true, None)).await;
    let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let mut req = example_request();
    let bad = serde_json::json!({"apiVersion": "litellm.fn.crossplane.io/v1beta1", "kind": "Input",
                                 "instance": {"reference": {"name": "x"}}, "policy": {"maxKeys": 1}});
    req.input = Some(json_to_struct(bad.as_object().unwrap()));
    let rsp = client
        .run_function(req)
        .await
        .expect("answered")
        .into_inner();
    let fatal = rsp
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .expect("a fatal result");
    assert!(
        fatal
            .message
            .contains("spec.keys: 2 keys requested, policy allows at most 1"),
        "{}",
        fatal.message
    );
    // The claim's owner reads the same in a condition (a Fatal result
    // reaches the XR's events only).
    let [condition] = &rsp.conditions[..] else {
        panic!("{:?}", rsp.conditions)
    };
    assert_eq!(
        (
            condition.r#type.as_str(),
            condition.status,
            condition.reason.as_str(),
            condition.target
        ),
        (
            "RequestValid",
            ConditionStatus::ConditionFalse as i32,
            "InvalidRequest",
            Some(Target::CompositeAndClaim as i32)
        )
    );
    assert!(
        condition
            .message
            .as_deref()
            .is_some_and(|m| m.contains("spec.keys: 2 keys requested, policy allows at most 1")),
        "{condition:?}"
    );
}

/// The XR and its claim get conditions `kubectl wait` can use: the
/// request's validity, the instance's readiness and the keys'.
#[tokio::test]
async fn the_xr_and_claim_get_request_instance_and_keys_conditions() {
    let (port, _stop) = start(args(true, None)).await;
    let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let rsp = client
        .run_function(example_request())
        .await
        .expect("answered")
        .into_inner();
    let conditions: Vec<(&str, i32, &str, &str, Option<i32>)> = rsp
        .conditions
        .iter()
        .map(|c| {
            (
                c.r#type.as_str(),
                c.status,
                c.reason.as_str(),
                c.message.as_deref().unwrap_or(""),
                c.target,
            )
        })
        .collect();
    let (t, f, claim) = (
        ConditionStatus::ConditionTrue as i32,
        ConditionStatus::ConditionFalse as i32,
        Some(Target::CompositeAndClaim as i32),
    );
    // The example observes the instance ready, key ci ready and key
    // notebooks still being created.
    assert_eq!(
        conditions,
        [
            (
                "RequestValid",
                t,
                "Valid",
                "the request passes validation and policy",
                claim
            ),
            (
                "InstanceReady",
                t,
                "Available",
                "the LiteLLMInstance answers",
                claim
            ),
            (
                "KeysReady",
                f,
                "Creating",
                "1 of 2 keys ready; waiting for notebooks",
                claim
            ),
        ]
    );
}

#[tokio::test]
async fn policy_defaults_reach_the_wire_as_warning_results() {
    use function_sdk_rust::resource::struct_to_json;
    let (port, _stop) = start(args(true, None)).await;
    let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let warned = |rsp: &RunFunctionResponse, message: &str| {
        rsp.results.iter().any(|r| {
            r.severity == Severity::Warning as i32
                && r.reason.as_deref() == Some("PolicyDefault")
                && r.message == message
        })
    };

    // The example as shipped: its `notebooks` key sets no maxBudget under
    // `maxKeyBudget: "100"`, below the team budget of 250.
    let rsp = client
        .run_function(example_request())
        .await
        .unwrap()
        .into_inner();
    let key = &desired_resources(&rsp)["key-notebooks"]["spec"]["forProvider"];
    assert_eq!(key["maxBudget"], "100");
    assert_eq!(key["budgetRef"]["name"], "ml-research.budget");
    assert!(
        warned(
            &rsp,
            "spec.keys[1].maxBudget: not set: 100 applies (the policy ceiling per key)"
        ),
        "{:?}",
        rsp.results
    );

    // The same XR with the team's models left out, under an allowed list
    // without wildcards.
    let mut req = example_request();
    let composite = req.observed.as_mut().unwrap().composite.as_mut().unwrap();
    let mut xr = struct_to_json(composite.resource.as_ref().unwrap());
    xr["spec"]["team"].as_object_mut().unwrap().remove("models");
    composite.resource = Some(json_to_struct(xr.as_object().unwrap()));
    let mut input = struct_to_json(req.input.as_ref().unwrap());
    input["policy"]["allowedModels"] = serde_json::json!(["gpt-4o", "gpt-4o-mini"]);
    req.input = Some(json_to_struct(input.as_object().unwrap()));
    let rsp = client.run_function(req).await.unwrap().into_inner();
    assert_eq!(
        desired_resources(&rsp)["team"]["spec"]["forProvider"]["models"],
        serde_json::json!(["gpt-4o", "gpt-4o-mini"])
    );
    assert!(
        warned(
            &rsp,
            "spec.team.models: not set, which LiteLLM reads as every model on the proxy: the policy's allowed models apply: gpt-4o, gpt-4o-mini"
        ),
        "{:?}",
        rsp.results
    );
}

/// A CA, a server certificate for localhost, and a client certificate.
struct Pki {
    ca: String,
    server: (String, String),
    client: (String, String),
}

fn pki() -> Pki {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf = |names: Vec<String>| {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &issuer)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    };
    Pki {
        ca: ca_cert.pem(),
        server: leaf(vec!["localhost".into(), "127.0.0.1".into()]),
        client: leaf(vec!["crossplane".into()]),
    }
}

#[tokio::test]
async fn mtls_serves_a_client_with_a_certificate_and_refuses_one_without() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let pki = pki();
    let dir = std::env::temp_dir().join(format!("function-litellm-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tls.crt"), &pki.server.0).unwrap();
    std::fs::write(dir.join("tls.key"), &pki.server.1).unwrap();
    std::fs::write(dir.join("ca.crt"), &pki.ca).unwrap();
    let (port, _stop) = start(args(false, Some(&dir))).await;
    let endpoint = || {
        Channel::from_shared(format!("https://localhost:{port}"))
            .unwrap()
            .connect_timeout(Duration::from_secs(5))
    };

    let with_cert = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&pki.ca))
        .identity(Identity::from_pem(&pki.client.0, &pki.client.1))
        .domain_name("localhost");
    let channel = endpoint()
        .tls_config(with_cert)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let req = example_request();
    let v1 = FunctionRunnerServiceClient::new(channel.clone())
        .run_function(req.clone())
        .await
        .unwrap()
        .into_inner();
    assert_composes_the_example(&v1);
    assert_eq!(call_v1beta1(channel, req.clone()).await.unwrap(), v1);

    let without_cert = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(&pki.ca))
        .domain_name("localhost");
    let result: Result<RunFunctionResponse, String> = async {
        let channel = endpoint()
            .tls_config(without_cert)
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| e.to_string())?;
        FunctionRunnerServiceClient::new(channel)
            .run_function(req)
            .await
            .map(|r| r.into_inner())
            .map_err(|s| s.to_string())
    }
    .await;
    assert!(result.is_err(), "a client without a certificate was served");
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn earlier_steps_desired_state_and_context_pass_through() {
    use function_sdk_rust::proto::v1::{Resource, State};
    let (port, _stop) = start(args(true, None)).await;
    let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let object = |v: serde_json::Value| Resource {
        resource: Some(json_to_struct(v.as_object().unwrap())),
        ..Default::default()
    };
    let bucket = object(
        serde_json::json!({"apiVersion": "s3.example.org/v1", "kind": "Bucket", "spec": {"n": 1.5}}),
    );
    let mut desired = State {
        composite: Some(object(
            serde_json::json!({"status": {"fromEarlierStep": true}}),
        )),
        ..Default::default()
    };
    desired.resources.insert("bucket".into(), bucket.clone());
    desired
        .resources
        .insert("team".into(), object(serde_json::json!({"kind": "Stale"})));
    let mut req = example_request();
    req.desired = Some(desired);
    req.context = Some(json_to_struct(
        serde_json::json!({"apiextensions.crossplane.io/environment": {"region": "eu"}})
            .as_object()
            .unwrap(),
    ));
    let rsp = client.run_function(req.clone()).await.unwrap().into_inner();
    assert_eq!(rsp.context, req.context);
    let resources = &rsp.desired.as_ref().unwrap().resources;
    assert_eq!(
        resources["bucket"], bucket,
        "an earlier step's resource is passed through as it came"
    );
    assert_eq!(
        desired_resources(&rsp)["team"]["kind"],
        "LiteLLMTeam",
        "this function's name is its own"
    );
    let status = function_sdk_rust::resource::struct_to_json(
        rsp.desired
            .unwrap()
            .composite
            .unwrap()
            .resource
            .as_ref()
            .unwrap(),
    )["status"]
        .clone();
    assert_eq!(status["fromEarlierStep"], true);
    assert_eq!(status["teamId"], "team-ml.ml-research.team");
}

/// The referenced instance is asked for once, in the field of
/// `Requirements` this Crossplane reads: `resources` (with the namespace)
/// unless the request shows a Crossplane that reads only the deprecated
/// `extra_resources`. An answer that found nothing is a Warning naming the
/// input field.
#[tokio::test]
async fn the_instance_is_required_in_the_one_field_this_crossplane_reads() {
    use function_sdk_rust::proto::v1::{Capability, Resources};
    let (port, _stop) = start(args(true, None)).await;
    let mut client = FunctionRunnerServiceClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    let first_call = || {
        let mut req = example_request();
        req.required_resources.clear();
        req
    };
    let with_capabilities = |capabilities: &[Capability]| {
        let mut req = first_call();
        req.meta.as_mut().unwrap().capabilities = capabilities.iter().map(|c| *c as i32).collect();
        req
    };
    let asked = |rsp: &RunFunctionResponse| {
        let requirements = rsp.requirements.clone().unwrap_or_default();
        #[allow(deprecated)]
        let extra = requirements.extra_resources;
        let fields = |map: &std::collections::HashMap<String, _>| {
            let mut names: Vec<String> = map.keys().cloned().collect();
            names.sort();
            names
        };
        for selector in requirements.resources.values().chain(extra.values()) {
            assert_eq!(selector.namespace.as_deref(), Some("litellm"));
            assert_eq!(selector.kind, "LiteLLMInstance");
        }
        (fields(&requirements.resources), fields(&extra))
    };
    let one = vec!["litellm-instance".to_string()];
    let none: Vec<String> = Vec::new();
    let cases = [
        (
            "v2.0/v2.1: no capabilities",
            first_call(),
            (one.clone(), none.clone()),
        ),
        (
            "v2.2 on: capabilities with required resources",
            with_capabilities(&[
                Capability::Capabilities,
                Capability::RequiredResources,
                Capability::Conditions,
            ]),
            (one.clone(), none.clone()),
        ),
        (
            "capabilities without required resources",
            with_capabilities(&[Capability::Capabilities, Capability::Conditions]),
            (none.clone(), one.clone()),
        ),
        (
            "an answer in extra_resources alone",
            {
                let mut req = example_request();
                let answer = req.required_resources.drain().collect();
                #[allow(deprecated)]
                {
                    req.extra_resources = answer;
                }
                req
            },
            (none.clone(), one.clone()),
        ),
    ];
    for (case, req, expected) in cases {
        let rsp = client.run_function(req).await.unwrap().into_inner();
        assert_eq!(asked(&rsp), expected, "{case}");
    }

    // The answer read from the deprecated field reaches the XR's status.
    let mut req = example_request();
    let answer = req.required_resources.drain().collect();
    #[allow(deprecated)]
    {
        req.extra_resources = answer;
    }
    let rsp = client.run_function(req).await.unwrap().into_inner();
    let status = function_sdk_rust::resource::struct_to_json(
        rsp.desired
            .unwrap()
            .composite
            .unwrap()
            .resource
            .as_ref()
            .unwrap(),
    );
    assert_eq!(
        status["status"]["endpoint"],
        "http://litellm.litellm.svc:4000"
    );

    // Crossplane answers a lookup that found nothing with an empty entry.
    let mut req = example_request();
    req.required_resources
        .insert("litellm-instance".into(), Resources::default());
    let rsp = client.run_function(req).await.unwrap().into_inner();
    let warning = rsp
        .results
        .iter()
        .find(|r| {
            r.severity == Severity::Warning as i32
                && r.message.starts_with("input.instance.reference")
        })
        .unwrap_or_else(|| panic!("{:?}", rsp.results));
    assert!(
        warning
            .message
            .contains("found no LiteLLMInstance litellm/shared"),
        "{}",
        warning.message
    );
}

/// The people-and-tools example over gRPC: users, the team with its
/// members, a user's key and an MCP server, each with the readiness the
/// provider reported and the XR's status naming the users' and the
/// server's ids (decoded from the observed status, nothing else of it);
/// a policy violation in one of the new fields is a Fatal result naming
/// it.
#[tokio::test]
async fn users_members_and_mcp_servers_compose_over_grpc() {
    use function_sdk_rust::proto::v1::Ready;
    let mut run = ExampleRun::start("members-mcp-v2").await;
    let (t, f) = (Ready::True as i32, Ready::False as i32);
    assert_eq!(
        run.readiness(),
        [
            ("budget", t),
            ("key-alice-cli", t),
            ("key-pipeline", f),
            ("mcp-github", t),
            ("team", t),
            ("user-alice", t),
            ("user-bob", t),
        ]
    );
    let resources = desired_resources(&run.rsp);
    assert_eq!(resources["user-alice"]["kind"], "LiteLLMUser");
    assert_eq!(resources["mcp-github"]["kind"], "LiteLLMMCPServer");
    assert_eq!(
        resources["key-alice-cli"]["spec"]["forProvider"]["userRef"]["name"],
        "data-eng.user-alice"
    );
    let xr = run.composite();
    assert_eq!(
        xr["status"]["users"][1],
        serde_json::json!({"name": "bob", "userId": "team-data.data-eng.user-bob", "ready": true})
    );
    assert_eq!(
        xr["status"]["mcpServers"][0],
        serde_json::json!({"name": "github", "serverId": "team-data.data-eng.mcp-github",
                           "serverName": "team_data.data_eng.mcp_github", "ready": true})
    );

    // A host outside the policy's list.
    let fatal = run
        .fatal_under_policy("allowedMcpHosts", serde_json::json!(["*.mcp.example.org"]))
        .await;
    assert!(
        fatal.starts_with(
            "spec.mcpServers[0].url: host \"api.githubcopilot.com\" is not allowed by policy"
        ),
        "{fatal}"
    );
}

/// The customers example over gRPC: each customer with the readiness the
/// provider reported, the XR's status naming the id the provider chose for
/// the one observed (decoded from the observed status, nothing else of
/// it), and a policy bound on customers a Fatal result naming the XR's
/// field.
#[tokio::test]
async fn customers_compose_over_grpc() {
    use function_sdk_rust::proto::v1::Ready;
    let mut run = ExampleRun::start("customers-v2").await;
    let (t, f, u) = (
        Ready::True as i32,
        Ready::False as i32,
        Ready::Unspecified as i32,
    );
    assert_eq!(
        run.readiness(),
        [
            ("budget", t),
            ("budget-customers", t),
            ("customer-acme", t),
            ("customer-globex", f),
            ("customer-internal", u),
            ("key-app", t),
            ("team", t),
        ]
    );
    let resources = desired_resources(&run.rsp);
    assert_eq!(resources["customer-acme"]["kind"], "LiteLLMCustomer");
    // Held to the customers' budget, a LiteLLMBudget of its own.
    assert_eq!(
        resources["customer-acme"]["spec"]["forProvider"]["budgetRef"]["name"],
        "helpdesk.budget-customers"
    );
    assert_eq!(resources["budget-customers"]["kind"], "LiteLLMBudget");
    assert_eq!(
        resources["budget-customers"]["spec"]["forProvider"]["maxBudget"],
        "20"
    );
    assert_eq!(
        run.composite()["status"]["customers"],
        serde_json::json!([
            {"name": "acme",
             "customerId": "prod/team-support/helpdesk.customer-acme/3f9a1c7e5b2d8046a1e9c3b7",
             "ready": true},
            {"name": "globex", "ready": false},
            {"name": "internal", "ready": false}
        ])
    );

    // More customers than the policy allows.
    assert_eq!(
        run.fatal_under_policy("maxCustomers", serde_json::json!(2))
            .await,
        "spec.customers: 3 customers requested, policy allows at most 2"
    );
    // A customers' budget above the policy's ceiling per customer.
    assert_eq!(
        run.fatal_under_policy("maxCustomerBudget", serde_json::json!("10"))
            .await,
        "spec.customerBudget.maxBudget: 20 exceeds the policy ceiling 10 per customer"
    );
}

/// The guardrails and access groups example over gRPC: the team's
/// guardrails with the policy's required one first, each access group a
/// LiteLLMAccessGroup assigned to the team, the XR's status naming the id
/// LiteLLM chose for the group observed, and a guardrail or a group's model
/// outside the policy a Fatal result naming the XR's field.
#[tokio::test]
async fn guardrails_and_access_groups_compose_over_grpc() {
    use function_sdk_rust::proto::v1::Ready;
    let mut run = ExampleRun::start("guardrails-access-groups-v2").await;
    let (t, u) = (Ready::True as i32, Ready::Unspecified as i32);
    assert_eq!(
        run.readiness(),
        [
            ("access-group-batch", u),
            ("access-group-frontier", t),
            ("budget", t),
            ("key-notebook", t),
            ("team", t),
        ]
    );
    let resources = desired_resources(&run.rsp);
    assert_eq!(
        resources["team"]["spec"]["forProvider"]["guardrails"],
        serde_json::json!(["prompt-injection", "pii-mask", "toxicity-strict"])
    );
    // The keys carry none: LiteLLM runs the team's on their requests.
    assert!(resources["key-notebook"]["spec"]["forProvider"]
        .get("guardrails")
        .is_none());
    // The team's logging destination, its credential by Secret reference.
    assert_eq!(
        resources["team"]["spec"]["forProvider"]["logging"],
        serde_json::json!([{
            "callbackName": "langfuse", "callbackType": "success_and_failure",
            "callbackVars": {"langfuse_host": "https://cloud.langfuse.com",
                             "langfuse_public_key": "pk-lf-research"},
            "secretCallbackVars": {"langfuse_secret_key":
                                   {"name": "langfuse-research", "key": "secretKey"}}
        }])
    );
    let frontier = &resources["access-group-frontier"];
    assert_eq!(frontier["kind"], "LiteLLMAccessGroup");
    assert_eq!(frontier["metadata"]["namespace"], "team-ml");
    assert_eq!(
        frontier["spec"]["forProvider"],
        serde_json::json!({"description": "the larger models, for experiments",
                           "models": ["gpt-4o", "o3-mini"],
                           "teamRefs": [{"name": "research.team"}]})
    );
    assert_eq!(
        run.composite()["status"]["accessGroups"],
        serde_json::json!([
            {"name": "frontier", "accessGroupId": "9b2f61d4-3c8e-4f0a-a5d7-1e6c2b9f8a30",
             "ready": true},
            {"name": "batch", "ready": false}
        ])
    );
    // The policy's required guardrail is reported as a default applied.
    assert!(
        run.rsp
            .results
            .iter()
            .any(|r| r.severity == Severity::Warning as i32
                && r.message
                    == "spec.guardrails: the policy's required guardrails apply: prompt-injection"),
        "{:?}",
        run.rsp.results
    );

    // A guardrail the policy does not list.
    assert_eq!(
        run.fatal_under_policy("allowedGuardrails", serde_json::json!(["pii-mask"]))
            .await,
        "spec.guardrails[1]: guardrail \"toxicity-strict\" is not allowed by policy (allowed: \
         pii-mask)"
    );
    // No list: an XR may name none of the platform's guardrails.
    let none = run
        .fatal_under_policy("allowedGuardrails", serde_json::Value::Null)
        .await;
    assert!(
        none.starts_with(
            "spec.guardrails[0]: guardrail \"pii-mask\": the policy allows no guardrails"
        ),
        "{none}"
    );
    // A group's model outside the models the team may have.
    assert_eq!(
        run.fatal_under_policy(
            "allowedModels",
            serde_json::json!(["gpt-4o-mini", "gpt-4o"])
        )
        .await,
        "spec.accessGroups[0].models[1]: model \"o3-mini\" is not allowed by policy (allowed: \
         gpt-4o-mini, gpt-4o)"
    );
    // More groups than the policy allows.
    assert_eq!(
        run.fatal_under_policy("maxAccessGroups", serde_json::json!(1))
            .await,
        "spec.accessGroups: 2 access groups requested, policy allows at most 1"
    );
}
