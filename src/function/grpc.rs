//! The gRPC layer: translates a request into a call of the pure `compose`
//! and its outcome into a response. It decides nothing itself.
//!
//! It works on the partially decoded messages of [`super::wire`]: the
//! desired state and context of earlier steps pass through as bytes, and of
//! observed composed resources only the status is decoded.

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use function_sdk_rust::proto::v1::{
    self, resource_selector, Capability, Ready, ResourceSelector, RunFunctionRequest,
    RunFunctionResponse, Severity, Status as ConditionStatus, Target,
};
use function_sdk_rust::resource::struct_to_json;
use prost::Message;
use serde_json::{Map, Value};

use super::compose::{
    compose, Composition, Observed, ObservedState, Outcome, Supplied, DEFAULT_TTL,
    INSTANCE_REQUIREMENT,
};
use super::conditions::{self, XrCondition};
use super::metrics::Metrics;
use super::wire;

impl ObservedState for wire::Request {
    fn composed(&self, name: &str) -> Option<Observed<'_>> {
        static NO_STATUS: Value = Value::Null;
        let resource = self.observed.as_ref()?.resources.get(name)?;
        let object = resource.resource.as_ref();
        Some(Observed {
            api_version: object.and_then(|r| r.api_version.as_deref()).unwrap_or(""),
            status: object.and_then(|r| r.status.as_ref()).unwrap_or(&NO_STATUS),
            connection_details: &resource.connection_details,
        })
    }

    fn observed_names(&self) -> BTreeMap<String, String> {
        let Some(observed) = &self.observed else {
            return BTreeMap::new();
        };
        observed
            .resources
            .iter()
            .filter_map(|(composed, resource)| {
                let name = resource.resource.as_ref()?.name.as_ref()?;
                Some((composed.clone(), name.clone()))
            })
            .collect()
    }

    fn required_instance(&self) -> Supplied<'_> {
        static NO_STATUS: Value = Value::Null;
        static NO_DETAILS: std::sync::LazyLock<std::collections::HashMap<String, Vec<u8>>> =
            std::sync::LazyLock::new(Default::default);
        // Under the name asked for, in the field it was asked in; Crossplane
        // answers a lookup that found nothing with an empty entry.
        let Some(resources) = self
            .required_resources
            .get(INSTANCE_REQUIREMENT)
            .or_else(|| self.extra_resources.get(INSTANCE_REQUIREMENT))
        else {
            return Supplied::NotYet;
        };
        let Some(object) = resources.items.first().and_then(|i| i.resource.as_ref()) else {
            return Supplied::NotFound;
        };
        let object = &object.0;
        Supplied::Found(Observed {
            api_version: object
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or(""),
            status: object.get("status").unwrap_or(&NO_STATUS),
            connection_details: &NO_DETAILS,
        })
    }
}

/// The field of `Requirements` this Crossplane reads. Crossplane v2.2 and
/// later list what they support in `meta.capabilities`; v2.0 and v2.1
/// (the oldest this package installs on) list nothing and read both
/// fields, namespace included. The deprecated `extra_resources` (all that
/// 1.15 to 1.20 read, by name and without a namespace) is asked for only
/// where the request shows nothing more: capabilities without
/// `CAPABILITY_REQUIRED_RESOURCES`, or an answer in `extra_resources` alone
/// (an older `crossplane render --extra-resources`). Asking in both forms
/// would make Crossplane fetch the instance twice per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RequirementField {
    Resources,
    ExtraResources,
}

impl RequirementField {
    fn of(req: &wire::Request) -> Self {
        let capabilities = req
            .meta
            .as_ref()
            .map(|m| m.capabilities.as_slice())
            .unwrap_or_default();
        if capabilities.contains(&(Capability::Capabilities as i32)) {
            return match capabilities.contains(&(Capability::RequiredResources as i32)) {
                true => RequirementField::Resources,
                false => RequirementField::ExtraResources,
            };
        }
        if req.required_resources.is_empty() && !req.extra_resources.is_empty() {
            return RequirementField::ExtraResources;
        }
        RequirementField::Resources
    }
}

fn result(severity: Severity, message: String, reason: &str) -> v1::Result {
    v1::Result {
        severity: severity as i32,
        message,
        reason: Some(reason.to_string()),
        // Target the XR, as the SDKs do by default.
        target: Some(Target::Composite as i32),
    }
}

/// A condition for the XR and its claim.
fn condition(c: XrCondition) -> v1::Condition {
    v1::Condition {
        r#type: c.type_.to_string(),
        status: match c.status {
            true => ConditionStatus::ConditionTrue,
            false => ConditionStatus::ConditionFalse,
        } as i32,
        reason: c.reason.to_string(),
        message: Some(c.message),
        target: Some(Target::CompositeAndClaim as i32),
    }
}

/// Answers one request. Never fails: every domain problem is a `Fatal`
/// result in the response.
pub fn respond(mut req: wire::Request) -> wire::Response {
    // The XR and the input are moved out, not copied: compose reads them
    // as JSON, and the rest of the request only for observed statuses.
    let xr = req
        .observed
        .as_mut()
        .and_then(|o| o.composite.take())
        .and_then(|c| c.resource)
        .map(|object| Value::Object(object.0));
    let input = req.input.take().map(|input| Value::Object(input.0));
    let field = RequirementField::of(&req);
    let outcome = match xr {
        None => Outcome::Fatal(vec![super::Problem::new(
            "observed.composite",
            "missing from the request",
        )]),
        Some(xr) => compose(&xr, input.as_ref(), &req),
    };
    let ttl = match &outcome {
        Outcome::Composed(c) => c.ttl,
        Outcome::Fatal(_) => DEFAULT_TTL,
    };
    let mut rsp = wire::Response {
        meta: Some(v1::ResponseMeta {
            tag: req.meta.map(|m| m.tag).unwrap_or_default(),
            ttl: Some(pbjson_types::Duration {
                seconds: ttl.as_secs() as i64,
                nanos: ttl.subsec_nanos() as i32,
            }),
        }),
        // Everything earlier steps desired, and their context, go on as they came.
        desired: req.desired,
        context: req.context,
        ..Default::default()
    };
    match outcome {
        Outcome::Fatal(problems) => {
            let message = Outcome::fatal_message(&problems);
            rsp.results
                .push(result(Severity::Fatal, message.clone(), "InvalidRequest"));
            // Crossplane (1.17 on) applies conditions even with a Fatal
            // result; the claim's owner reads this one.
            rsp.conditions.push(condition(conditions::invalid(message)));
        }
        Outcome::Composed(c) => apply(&mut rsp, c, field),
    }
    rsp
}

/// Writes a composition into the response.
fn apply(rsp: &mut wire::Response, c: Composition, field: RequirementField) {
    let desired = rsp.desired.get_or_insert_default();
    // This function owns its composition-resource names: what an earlier
    // step desired under one of them is replaced.
    let ours: BTreeSet<&str> = c.resources.keys().map(String::as_str).collect();
    desired
        .resources
        .retain(|entry| wire::entry_name(entry).is_none_or(|name| !ours.contains(name.as_str())));
    for (name, d) in c.resources {
        let Value::Object(object) = d.resource else {
            continue;
        };
        let ready = match d.ready {
            Some(true) => Ready::True,
            Some(false) => Ready::False,
            None => Ready::Unspecified,
        };
        desired
            .resources
            .push(wire::resource_entry(name, &object, ready));
    }
    rsp.conditions
        .extend(c.conditions.into_iter().map(condition));
    let composite = desired.composite.get_or_insert_default();
    merge_status(composite, c.xr_status);
    composite.connection_details.extend(c.connection_details);
    for default in &c.defaults {
        rsp.results.push(result(
            Severity::Warning,
            default.to_string(),
            "PolicyDefault",
        ));
    }
    for added in c.added {
        rsp.results
            .push(result(Severity::Normal, added, "ComposedResourceAdded"));
    }
    for warning in &c.warnings {
        rsp.results.push(result(
            Severity::Warning,
            warning.to_string(),
            "UnusualRequest",
        ));
    }
    for requirement in c.requirements {
        let selector = ResourceSelector {
            api_version: requirement.api_version,
            kind: requirement.kind,
            r#match: Some(resource_selector::Match::MatchName(requirement.name)),
            namespace: Some(requirement.namespace),
        };
        let requirements = rsp.requirements.get_or_insert_default();
        match field {
            RequirementField::Resources => &mut requirements.resources,
            RequirementField::ExtraResources => &mut requirements.extra_resources,
        }
        .insert(INSTANCE_REQUIREMENT.into(), selector);
    }
}

/// Merges `fields` into the desired XR status, keeping what earlier pipeline
/// steps put there (objects are merged field by field).
fn merge_status(composite: &mut wire::JsonResource, fields: Map<String, Value>) {
    let object = &mut composite.resource.get_or_insert_default().0;
    match object.get_mut("status") {
        Some(Value::Object(existing)) => merge(existing, fields),
        _ => {
            object.insert("status".into(), Value::Object(fields));
        }
    }
}

fn merge(into: &mut Map<String, Value>, fields: Map<String, Value>) {
    for (name, value) in fields {
        match (into.get_mut(&name), value) {
            (Some(Value::Object(existing)), Value::Object(value)) => merge(existing, value),
            (_, value) => {
                into.insert(name, value);
            }
        }
    }
}

/// Runs the function on an SDK-typed request: the same code the gRPC
/// service runs, reached through the wire encoding (used by `render`).
pub fn run(req: &RunFunctionRequest) -> RunFunctionResponse {
    let fatal = |message: String| RunFunctionResponse {
        results: vec![result(Severity::Fatal, message, "InternalError")],
        ..Default::default()
    };
    // Decoding what was just encoded fails only on a bug; say so rather than panic.
    let req = match wire::Request::decode(req.encode_to_vec().as_slice()) {
        Ok(req) => req,
        Err(e) => return fatal(format!("cannot re-read the request: {e}")),
    };
    match RunFunctionResponse::decode(respond(req).encode_to_vec().as_slice()) {
        Ok(rsp) => rsp,
        Err(e) => fatal(format!("cannot re-read the response: {e}")),
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

/// The `RunFunction` method as a gRPC service, with the partial-decoding
/// codec. It answers under whatever service name routes to it: the server
/// mounts it as v1 and, through a path rewrite, as v1beta1.
#[derive(Clone)]
pub struct RunFunctionService {
    metrics: Arc<Metrics>,
    max_decoding_message_size: Option<usize>,
}

impl RunFunctionService {
    pub fn new(metrics: Arc<Metrics>, max_decoding_message_size: Option<usize>) -> Self {
        RunFunctionService {
            metrics,
            max_decoding_message_size,
        }
    }
}

/// Path of the v1 method.
pub const RUN_FUNCTION_PATH: &str = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";

/// One unary call of `RunFunction`.
struct Unary(Arc<Metrics>);

impl tonic::server::UnaryService<wire::Request> for Unary {
    type Response = wire::Response;
    type Future = std::future::Ready<Result<tonic::Response<wire::Response>, tonic::Status>>;

    fn call(&mut self, request: tonic::Request<wire::Request>) -> Self::Future {
        let started = Instant::now();
        let rsp = respond(request.into_inner());
        self.0.observe(&rsp.results, started.elapsed());
        std::future::ready(Ok(tonic::Response::new(rsp)))
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = Result<T, Infallible>> + Send>>;

impl<B> tower_service::Service<http::Request<B>> for RunFunctionService
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() != RUN_FUNCTION_PATH {
            return Box::pin(async {
                Ok(tonic::Status::unimplemented("no such method").into_http())
            });
        }
        let mut grpc = tonic::server::Grpc::new(wire::Codec)
            .apply_max_message_size_config(self.max_decoding_message_size, None);
        let unary = Unary(self.metrics.clone());
        Box::pin(async move { Ok(grpc.unary(unary, req).await) })
    }
}

impl tonic::server::NamedService for RunFunctionService {
    const NAME: &'static str = v1::function_runner_service_server::SERVICE_NAME;
}
