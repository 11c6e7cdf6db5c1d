//! The gRPC layer: translates a `RunFunctionRequest` into a call of the pure
//! `compose` and its outcome into a `RunFunctionResponse`. It decides
//! nothing itself.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use function_sdk_rust::proto::v1::function_runner_service_server::FunctionRunnerService;
use function_sdk_rust::proto::v1::{
    Ready, ResourceSelector, RunFunctionRequest, RunFunctionResponse,
};
use function_sdk_rust::request::get_required_resource;
use function_sdk_rust::resource::{
    add_connection_detail, json_to_struct, pb_to_json, set_ready, struct_to_json,
};
use function_sdk_rust::response;
use serde_json::{Map, Value};
use tonic::{Request, Response, Status};

use super::compose::{compose, Observed, ObservedState, Outcome, INSTANCE_REQUIREMENT};
use super::metrics::Metrics;

/// The observed state of a request, converted on demand.
struct RequestState<'a>(&'a RunFunctionRequest);

impl ObservedState for RequestState<'_> {
    fn composed(&self, name: &str) -> Option<Observed> {
        let resource = self.0.observed.as_ref()?.resources.get(name)?;
        Some(Observed {
            resource: resource
                .resource
                .as_ref()
                .map(struct_to_json)
                .unwrap_or_default(),
            connection_details: resource
                .connection_details
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    fn required_instance(&self) -> Option<Value> {
        // Crossplane 1.14-1.16 answer the deprecated extra resources; later
        // versions the required resources.
        get_required_resource(self.0, INSTANCE_REQUIREMENT).or_else(|| {
            self.0
                .extra_resources
                .get(INSTANCE_REQUIREMENT)?
                .items
                .first()?
                .resource
                .as_ref()
                .map(struct_to_json)
        })
    }
}

/// Runs the function on one request. Never fails: every domain problem is a
/// `Fatal` result in the response.
pub fn run(req: &RunFunctionRequest) -> RunFunctionResponse {
    let xr = req
        .observed
        .as_ref()
        .and_then(|o| o.composite.as_ref())
        .and_then(|c| c.resource.as_ref())
        .map(struct_to_json);
    let Some(xr) = xr else {
        let mut rsp = response::to(req, super::compose::DEFAULT_TTL);
        response::fatal(
            &mut rsp,
            "observed composite resource: missing from the request",
        );
        return rsp;
    };
    let input = req.input.as_ref().map(struct_to_json);
    match compose(&xr, input.as_ref(), &RequestState(req)) {
        Outcome::Fatal(problems) => {
            let mut rsp = response::to(req, super::compose::DEFAULT_TTL);
            response::fatal(&mut rsp, Outcome::fatal_message(&problems)).reason =
                Some("InvalidRequest".into());
            rsp
        }
        Outcome::Composed(c) => {
            let mut rsp = response::to(req, c.ttl);
            for (name, desired) in &c.resources {
                let target = response::desired_composed(&mut rsp, name.clone());
                if let Value::Object(map) = &desired.resource {
                    target.resource = Some(json_to_struct(map));
                }
                set_ready(
                    target,
                    if desired.ready {
                        Ready::True
                    } else {
                        Ready::False
                    },
                );
            }
            let composite = response::desired_composite(&mut rsp);
            merge_status(composite, c.xr_status);
            for (key, value) in c.connection_details {
                add_connection_detail(composite, key, value);
            }
            for warning in &c.warnings {
                response::warning(&mut rsp, warning.to_string()).reason =
                    Some("UnusualRequest".into());
            }
            for requirement in c.requirements {
                let selector = ResourceSelector {
                    api_version: requirement.api_version,
                    kind: requirement.kind,
                    r#match: Some(
                        function_sdk_rust::proto::v1::resource_selector::Match::MatchName(
                            requirement.name,
                        ),
                    ),
                    namespace: Some(requirement.namespace),
                };
                let requirements = rsp.requirements.get_or_insert_default();
                requirements
                    .extra_resources
                    .insert(INSTANCE_REQUIREMENT.into(), selector.clone());
                requirements
                    .resources
                    .insert(INSTANCE_REQUIREMENT.into(), selector);
            }
            rsp
        }
    }
}

/// Merges `fields` into the desired XR status, keeping what earlier pipeline
/// steps put there.
fn merge_status(
    composite: &mut function_sdk_rust::proto::v1::Resource,
    fields: Map<String, Value>,
) {
    let object = composite.resource.get_or_insert_default();
    let mut status = match object.fields.get("status").map(pb_to_json) {
        Some(Value::Object(existing)) => existing,
        _ => Map::new(),
    };
    status.extend(fields);
    object.fields.insert(
        "status".into(),
        function_sdk_rust::resource::json_to_pb(&Value::Object(status)),
    );
}

/// The function as a gRPC service.
#[derive(Clone, Default)]
pub struct LiteLLMFunction {
    metrics: Arc<Metrics>,
}

impl LiteLLMFunction {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        LiteLLMFunction { metrics }
    }
}

#[tonic::async_trait]
impl FunctionRunnerService for LiteLLMFunction {
    async fn run_function(
        &self,
        request: Request<RunFunctionRequest>,
    ) -> Result<Response<RunFunctionResponse>, Status> {
        let started = Instant::now();
        let req = request.into_inner();
        let rsp = run(&req);
        self.metrics.observe(&rsp, started.elapsed());
        let tag = req
            .meta
            .as_ref()
            .map(|m| m.tag.as_str())
            .unwrap_or_default();
        tracing::debug!(tag, results = rsp.results.len(), "ran function");
        Ok(Response::new(rsp))
    }
}

/// The desired composed resources of a response, sorted by name, for
/// printing and comparing.
pub fn desired_resources(rsp: &RunFunctionResponse) -> BTreeMap<String, Value> {
    rsp.desired
        .as_ref()
        .map(|d| {
            d.resources
                .iter()
                .map(|(k, r)| {
                    (
                        k.clone(),
                        r.resource.as_ref().map(struct_to_json).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
