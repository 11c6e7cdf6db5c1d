//! `compose`: the whole function as one pure step, from the XR, the input
//! and the observed resources to the desired resources, readiness, XR status
//! and results. The gRPC layer and `render` are thin shells around it.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::api::input::{Input, InstanceSource, INPUT_API_VERSION, INPUT_KIND};

use super::access_groups;
use super::build::{self, InstanceTarget, Target};
use super::conditions::{self, InstanceState, XrCondition};
use super::customers;
use super::error::Problem;
use super::guardrails;
use super::keep::Keep;
use super::logging;
use super::mcp;
use super::members;
use super::metadata;
use super::names;
use super::request::{lookup, read, XrRequest};
use super::rules::Findings;
use super::tenancy::Tenancy;
use super::usage;
use super::validate;

/// Default response TTL: Crossplane calls again after it.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

/// Label Crossplane puts on a legacy XR naming its claim's namespace.
const CLAIM_NAMESPACE_LABEL: &str = "crossplane.io/claim-namespace";

/// Connection-details key of a key's secret, in the provider's Secret.
pub const KEY_SECRET_FIELD: &str = "key";

/// What the function reads of an observed composed resource: its
/// `apiVersion` and status (nothing else, so the gRPC layer decodes nothing
/// else) and its connection details.
/// Borrowed from the request: nothing observed is copied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observed<'a> {
    /// `""` when absent. Only resources of [`crate::api::API_VERSION`] are
    /// read; anything else under a composition-resource name (an object of
    /// an older API group) counts as not observed.
    pub api_version: &'a str,
    /// `Value::Null` when the resource has no status yet.
    pub status: &'a Value,
    pub connection_details: &'a HashMap<String, Vec<u8>>,
}

impl Observed<'_> {
    /// Whether the object is of this project's API group and version.
    pub fn is_ours(&self) -> bool {
        self.api_version == crate::api::API_VERSION
    }
}

/// Read access to the observed state.
pub trait ObservedState {
    /// The observed composed resource under a composition-resource name.
    fn composed(&self, name: &str) -> Option<Observed<'_>>;
    /// `metadata.name` of each observed composed resource (of any kind),
    /// by composition-resource name. Crossplane keeps an observed
    /// resource's name for what is desired under its composition-resource
    /// name, so the function names and refers to it by that name.
    fn observed_names(&self) -> BTreeMap<String, String>;
    /// What Crossplane supplied for the referenced LiteLLMInstance.
    fn required_instance(&self) -> Supplied<'_>;
}

/// What Crossplane answered for a resource the function requires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Supplied<'a> {
    /// Nothing: the function has not asked yet (Crossplane fetches what it
    /// asks for and calls again), or this Crossplane cannot fetch it.
    NotYet,
    /// Crossplane looked and found nothing.
    NotFound,
    Found(Observed<'a>),
}

/// A desired composed resource and whether it is ready.
#[derive(Clone, Debug, PartialEq)]
pub struct Desired {
    pub resource: Value,
    /// What the function knows of its readiness: its observed `Ready`
    /// condition, True or False. `None` (not observed yet, or no verdict of
    /// the provider yet) leaves it to a later pipeline step such as
    /// function-auto-ready; Crossplane counts it as not ready.
    pub ready: Option<bool>,
}

impl Desired {
    /// Whether the function knows it is ready.
    pub fn is_ready(&self) -> bool {
        self.ready == Some(true)
    }
}

/// A resource the function asks Crossplane to fetch for the next call.
#[derive(Clone, Debug, PartialEq)]
pub struct Requirement {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// Name under which the function requires the referenced instance.
pub const INSTANCE_REQUIREMENT: &str = "litellm-instance";

/// A successful composition.
#[derive(Clone, Debug, PartialEq)]
pub struct Composition {
    /// Desired composed resources by composition-resource name.
    pub resources: BTreeMap<String, Desired>,
    /// Fields of the XR's desired status.
    pub xr_status: Map<String, Value>,
    /// XR connection details (legacy XRs only).
    pub connection_details: BTreeMap<String, Vec<u8>>,
    /// Odd but workable parts of the request.
    pub warnings: Vec<Problem>,
    /// Policy defaults applied to fields the XR left out, each naming the
    /// field and the value rendered.
    pub defaults: Vec<Problem>,
    /// Resources to fetch for the next call.
    pub requirements: Vec<Requirement>,
    /// Conditions for the XR and its claim.
    pub conditions: Vec<XrCondition>,
    /// What this composition changes: the composed resources it adds
    /// (desired, not observed yet), for `Normal` results.
    pub added: Vec<String>,
    pub ttl: Duration,
}

/// What the function answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Composed(Composition),
    /// The request cannot be composed; every problem found, each naming its field.
    Fatal(Vec<Problem>),
}

impl Outcome {
    /// The message of a fatal result: every problem, one per line.
    pub fn fatal_message(problems: &[Problem]) -> String {
        problems
            .iter()
            .map(Problem::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Parses the raw input, naming the input field of any problem.
fn parse_input(input: Option<&Value>) -> Result<(Input, InstanceTarget, Duration), Vec<Problem>> {
    let Some(raw) = input else {
        return Err(vec![Problem::new(
            "input",
            "is required: see package/function/input for its schema",
        )]);
    };
    let input: Input = serde_path_to_error::deserialize(raw).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            "input".to_string()
        } else {
            format!("input.{path}")
        };
        vec![Problem::new(field, e.into_inner().to_string())]
    })?;
    let mut problems = Vec::new();
    if input
        .api_version
        .as_deref()
        .is_some_and(|v| v != INPUT_API_VERSION)
    {
        problems.push(Problem::new(
            "input.apiVersion",
            format!("must be {INPUT_API_VERSION}"),
        ));
    }
    if input.kind.as_deref().is_some_and(|k| k != INPUT_KIND) {
        problems.push(Problem::new("input.kind", format!("must be {INPUT_KIND}")));
    }
    problems.extend(check_status_paths(&input));
    problems.extend(metadata::check(&input.composed));
    let target = InstanceTarget::from_source(&input.instance);
    if target.is_none() {
        problems.push(Problem::new(
            "input.instance",
            "set exactly one of reference, attach and provision",
        ));
    }
    let ttl = match input.ttl.as_deref().map(parse_ttl) {
        None => Some(DEFAULT_TTL),
        Some(Some(ttl)) => Some(ttl),
        Some(None) => {
            problems.push(Problem::new(
                "input.ttl",
                "must be a positive number of s, m or h, such as 60s",
            ));
            None
        }
    };
    match (target, ttl) {
        (Some(target), Some(ttl)) if problems.is_empty() => Ok((input, target, ttl)),
        _ => Err(problems),
    }
}

/// Every status path under `status.`, of non-empty segments, and no two
/// where one would overwrite the other.
fn check_status_paths(input: &Input) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut taken: Vec<(&str, String)> = Vec::new();
    for (name, path) in input.status.paths() {
        let Some(path) = path else { continue };
        let field = format!("input.status.{name}");
        let below = path.strip_prefix("status.").unwrap_or("");
        if below.is_empty() || below.split('.').any(str::is_empty) {
            problems.push(Problem::new(
                field,
                format!("{path:?} must be a path under status. such as status.{name}, or \"\" to leave the field out"),
            ));
            continue;
        }
        let overlaps = |a: &str, b: &str| {
            a == b || a.starts_with(&format!("{b}.")) || b.starts_with(&format!("{a}."))
        };
        if let Some((other, _)) = taken.iter().find(|(_, p)| overlaps(p, &path)) {
            problems.push(Problem::new(
                field,
                format!("{path:?} overlaps where input.status.{other} goes"),
            ));
            continue;
        }
        taken.push((name, path));
    }
    problems
}

/// The reported fields placed where `paths` puts them, as the XR's status
/// object (the part below `status`); fields left out are dropped.
fn place(
    fields: Map<String, Value>,
    paths: &[(&'static str, Option<String>)],
) -> Map<String, Value> {
    let mut status = Map::new();
    for (name, value) in fields {
        let Some(Some(path)) = paths.iter().find(|(n, _)| *n == name).map(|(_, p)| p) else {
            continue;
        };
        let segments: Vec<&str> = path.trim_start_matches("status.").split('.').collect();
        let (last, parents) = segments.split_last().expect("checked: not empty");
        let mut at = &mut status;
        for segment in parents {
            let next = at
                .entry(segment.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !next.is_object() {
                *next = Value::Object(Map::new());
            }
            at = next.as_object_mut().expect("made an object");
        }
        at.insert(last.to_string(), value);
    }
    status
}

fn parse_ttl(text: &str) -> Option<Duration> {
    let unit_at = text.find(|c: char| !c.is_ascii_digit())?;
    let count: u64 = text[..unit_at].parse().ok().filter(|c| *c > 0)?;
    let seconds = match &text[unit_at..] {
        "s" => count,
        "m" => count.checked_mul(60)?,
        "h" => count.checked_mul(3600)?,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

/// Whether a legacy XR was made for a claim (its labels or `claimRef` say
/// so): a tenant's request, like every namespaced XR.
fn claimed(xr: &Value) -> bool {
    let label = |name: &str| {
        xr.pointer(&format!("/metadata/labels/{}", name.replace('/', "~1")))
            .is_some()
    };
    label(CLAIM_NAMESPACE_LABEL)
        || label("crossplane.io/claim-name")
        || lookup(xr, "spec.claimRef").is_some()
}

/// Where the XR's composed resources go: the XR's own namespace for a
/// namespaced (v2) XR; for a legacy cluster XR the input's namespace, else
/// its claim's. `true` with it when that is the tenant's namespace (the
/// XR's or its claim's) rather than one the platform chose.
fn namespace_of(xr: &Value, input: &Input) -> Result<(String, bool), Problem> {
    let str_at = |path: &str| lookup(xr, path).and_then(Value::as_str).map(str::to_string);
    if let Some(ns) = str_at("metadata.namespace") {
        return Ok((ns, true));
    }
    if let Some(ns) = &input.namespace {
        return Ok((ns.clone(), false));
    }
    xr.pointer(&format!("/metadata/labels/{}", CLAIM_NAMESPACE_LABEL.replace('/', "~1")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| str_at("spec.claimRef.namespace"))
        .map(|ns| (ns, true))
        .ok_or_else(|| {
            Problem::new(
                "input.namespace",
                "is required for a cluster-scoped XR without a claim: composed LiteLLM resources are namespaced",
            )
        })
}

/// The Warning for an instance rendered into the tenant's namespace: its
/// master key (and, provisioned, its salt key and database credentials)
/// must then live there too, readable by whoever reads Secrets there.
fn tenant_exposure(source: &InstanceSource, namespace: &str) -> Option<Problem> {
    const SHARE: &str = "to keep them from tenants, reference a shared LiteLLMInstance in a \
                         namespace of the platform's whose spec.allowedNamespaces admits this one \
                         (input.instance.reference)";
    if let Some(attach) = &source.attach {
        let secret = &attach.master_key_secret_ref.name;
        return Some(Problem::new(
            "input.instance.attach",
            format!(
                "renders the LiteLLMInstance into the tenant's namespace {namespace}, so the \
                 proxy's master key must be there too (Secret {secret}): whoever can read Secrets \
                 in {namespace} can administer every team, key and model of that proxy, other \
                 tenants' included; {SHARE}"
            ),
        ));
    }
    source.provision.as_ref().map(|_| {
        Problem::new(
            "input.instance.provision",
            format!(
                "provisions the proxy in the tenant's namespace {namespace}, with its master key, \
                 salt key and database credentials in Secrets there: whoever can read Secrets in \
                 {namespace} can act as the proxy's admin, past this composition's policy \
                 (budgets, allowed models, key limits); {SHARE}"
            ),
        )
    })
}

/// Reads every part of the XR's request, collecting all problems.
fn parse_request(xr: &Value, input: &Input) -> Result<XrRequest, Vec<Problem>> {
    let paths = &input.fields;
    let mut problems = Vec::new();
    let request = XrRequest {
        team: collect(read(xr, &paths.team), &mut problems).unwrap_or_default(),
        budget: collect(read(xr, &paths.budget), &mut problems),
        keys: collect(read(xr, &paths.keys), &mut problems).unwrap_or_default(),
        models: collect(read(xr, &paths.models), &mut problems).unwrap_or_default(),
        users: collect(read(xr, &paths.users), &mut problems).unwrap_or_default(),
        mcp_servers: collect(read(xr, &paths.mcp_servers), &mut problems).unwrap_or_default(),
        customers: collect(read(xr, &paths.customers), &mut problems).unwrap_or_default(),
        customer_budget: collect(read(xr, &paths.customer_budget), &mut problems),
        guardrails: collect(read(xr, &paths.guardrails), &mut problems),
        access_groups: collect(read(xr, &paths.access_groups), &mut problems).unwrap_or_default(),
        logging: collect(read(xr, &paths.logging), &mut problems),
    };
    if problems.is_empty() {
        Ok(request)
    } else {
        Err(problems)
    }
}

/// Fields of the request's parts the function does not read: warnings.
fn unknown(xr: &Value, input: &Input) -> Vec<Problem> {
    use super::request::{
        unknown_fields, ACCESS_GROUP_FIELDS, BUDGET_FIELDS, CUSTOMER_FIELDS, KEY_FIELDS,
        LOGGING_FIELDS, MCP_SERVER_FIELDS, MODEL_FIELDS, TEAM_FIELDS, USER_FIELDS,
    };
    let paths = &input.fields;
    [
        unknown_fields(xr, &paths.team, TEAM_FIELDS, false),
        unknown_fields(xr, &paths.budget, BUDGET_FIELDS, false),
        unknown_fields(xr, &paths.keys, KEY_FIELDS, true),
        unknown_fields(xr, &paths.models, MODEL_FIELDS, true),
        unknown_fields(xr, &paths.users, USER_FIELDS, true),
        unknown_fields(xr, &paths.mcp_servers, MCP_SERVER_FIELDS, true),
        unknown_fields(xr, &paths.customers, CUSTOMER_FIELDS, true),
        unknown_fields(xr, &paths.customer_budget, BUDGET_FIELDS, false),
        unknown_fields(xr, &paths.access_groups, ACCESS_GROUP_FIELDS, true),
        unknown_fields(xr, &paths.logging, LOGGING_FIELDS, true),
    ]
    .concat()
}

/// The value of `result`, or `None` with its problem recorded.
fn collect<T>(result: Result<Option<T>, Problem>, problems: &mut Vec<Problem>) -> Option<T> {
    result.unwrap_or_else(|p| {
        problems.push(p);
        None
    })
}

/// What the function reads of an observed composed resource's status (and
/// of the referenced instance's): the `type` and `status` of each condition
/// ([`readiness`]), the team's `atProvider.teamId`, a user's
/// `atProvider.userId`, an MCP server's `atProvider.serverId` and
/// `serverName`, a customer's `atProvider.customerId`, an access group's
/// `atProvider.accessGroupId`, the instance's `ready`, `endpoint` and `gatewayEndpoint`
/// ([`report`]). The gRPC layer decodes nothing else of an observed status.
pub static OBSERVED_STATUS: Keep = Keep::Keys(&[
    (
        "conditions",
        &Keep::Keys(&[("type", &Keep::All), ("status", &Keep::All)]),
    ),
    (
        "atProvider",
        &Keep::Keys(&[
            ("teamId", &Keep::All),
            ("userId", &Keep::All),
            ("serverId", &Keep::All),
            ("serverName", &Keep::All),
            ("customerId", &Keep::All),
            ("accessGroupId", &Keep::All),
        ]),
    ),
    ("ready", &Keep::All),
    ("endpoint", &Keep::All),
    ("gatewayEndpoint", &Keep::All),
]);

/// What a status's `Ready` condition says: `Some(true)` for True,
/// `Some(false)` for False, `None` without a condition or for Unknown.
pub fn readiness(status: &Value) -> Option<bool> {
    let ready = status
        .get("conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))?;
    match ready.get("status").and_then(Value::as_str) {
        Some("True") => Some(true),
        Some("False") => Some(false),
        _ => None,
    }
}

/// Composes the desired state for `xr` under `input`.
pub fn compose(xr: &Value, input: Option<&Value>, observed: &dyn ObservedState) -> Outcome {
    match composition(xr, input, observed) {
        Ok(composition) => Outcome::Composed(composition),
        Err(problems) => Outcome::Fatal(problems),
    }
}

/// [`compose`], step by step: the input, the XR's name, the request and
/// where it goes ([`review`]), the tenancy rules ([`check_tenancy`]), the
/// target, the desired resources ([`desired`]) as observed ([`observe`]),
/// the instance ([`seen_instance`]), then the conditions and the XR's status.
/// The first step that finds problems ends it with them.
fn composition(
    xr: &Value,
    input: Option<&Value>,
    observed: &dyn ObservedState,
) -> Result<Composition, Vec<Problem>> {
    let (input, instance, ttl) = parse_input(input)?;
    let Some(xr_name) = lookup(xr, "metadata.name").and_then(Value::as_str) else {
        return Err(vec![Problem::new("metadata.name", "the XR has no name")]);
    };
    let mut reviewed = review(xr, &input)?;
    check_tenancy(&mut reviewed, &input, &instance)?;
    let Reviewed {
        request,
        namespace,
        mut findings,
        ..
    } = reviewed;
    let legacy = lookup(xr, "metadata.namespace").is_none();
    // A proxy provisioned for this XR alone serves no other tenant: its
    // public names hurt nobody.
    let own_proxy = input.instance.provision.is_some();
    let target = Target {
        xr_name: xr_name.to_string(),
        namespace,
        instance,
        observed_names: observed.observed_names(),
        team_models: (!legacy || claimed(xr)) && !own_proxy,
    };
    if let Some(problem) = target.unnameable() {
        return Err(vec![problem]);
    }

    let desired = desired(&target, &request, &input, xr, &mut findings.warnings);
    let (resources, observed_by_name, added) = observe(desired, observed);
    let (requirements, instance_status, instance_state) =
        seen_instance(&target, observed, &observed_by_name, &mut findings.warnings);
    let conditions = conditions::composed(
        instance_state,
        request.keys.iter().map(|key| {
            let desired = resources.get(&names::key(&key.name));
            (key.name.as_str(), desired.is_some_and(Desired::is_ready))
        }),
    );
    let (xr_status, connection_details) = report(
        &target,
        &request,
        &resources,
        &observed_by_name,
        instance_status,
        legacy,
    );
    let xr_status = place(xr_status, &input.status.paths());
    Ok(Composition {
        resources,
        xr_status,
        connection_details,
        warnings: findings.warnings,
        defaults: findings.defaults,
        requirements,
        conditions,
        added,
        ttl,
    })
}

/// The request as rendered and where it goes: what [`review`] makes of an
/// XR under its input.
struct Reviewed {
    /// The request, with the policy's defaults applied.
    request: XrRequest,
    /// Namespace of the composed resources.
    namespace: String,
    /// Whether that is the tenant's namespace (the XR's or its claim's)
    /// rather than one the platform chose.
    tenants: bool,
    /// Its warnings and the defaults applied (nothing fatal).
    findings: Findings,
}

/// Reads the XR's request and where its resources go, and checks the
/// request against the value rules and the policy (its defaults applied):
/// every problem of the three, or the request with its warnings.
fn review(xr: &Value, input: &Input) -> Result<Reviewed, Vec<Problem>> {
    let mut problems = Vec::new();
    let namespace = namespace_of(xr, input).map_err(|p| problems.push(p)).ok();
    let request = parse_request(xr, input)
        .map_err(|p| problems.extend(p))
        .ok();
    // The request as rendered: with the policy's defaults applied.
    let (request, mut findings) = match request {
        Some(r) => {
            let (r, findings) = validate::review(r, &input.fields, &input.policy);
            (Some(r), findings)
        }
        None => (None, Findings::default()),
    };
    problems.append(&mut findings.fatal);
    findings.warnings.extend(unknown(xr, input));
    let (Some((namespace, tenants)), Some(request), true) =
        (namespace, request, problems.is_empty())
    else {
        return Err(problems);
    };
    if tenants {
        findings
            .warnings
            .extend(tenant_exposure(&input.instance, &namespace));
    }
    Ok(Reviewed {
        request,
        namespace,
        tenants,
        findings,
    })
}

/// Checks the reviewed request against the provider's tenancy rules where
/// its resources go and the policy's lists: the Secrets and credentials its
/// models name, its users and members (the users' models filled in), its
/// MCP servers and object permissions, its customers, its guardrails (the
/// policy's required ones added), its access groups and its team's logging
/// destinations. Every problem, or
/// their warnings and defaults added to the request's.
fn check_tenancy(
    reviewed: &mut Reviewed,
    input: &Input,
    instance: &InstanceTarget,
) -> Result<(), Vec<Problem>> {
    let Reviewed {
        request,
        namespace,
        tenants,
        findings,
    } = reviewed;
    let mut secrets = validate::model_secrets(
        request,
        &input.fields,
        &input.policy,
        (!*tenants).then_some(namespace.as_str()),
    );
    let tenancy = Tenancy {
        namespace,
        shared_instance: matches!(instance, InstanceTarget::Existing { namespace: Some(ns), .. }
            if ns != namespace),
        platform_namespace: !*tenants,
    };
    let mut people = members::review(request, &input.fields, &input.policy, &tenancy);
    let mut servers = mcp::check(request, &input.fields, &input.policy, &tenancy);
    let mut customers = customers::check(request, &input.fields, &input.policy, &tenancy);
    let mut groups = access_groups::check(request, &input.fields, &input.policy, &tenancy);
    let mut guarded = guardrails::review(request, &input.fields, &input.policy);
    let mut logged = logging::check(request, &input.fields, &input.policy, &tenancy);
    secrets.append(&mut people.fatal);
    secrets.append(&mut servers.fatal);
    secrets.append(&mut customers.fatal);
    secrets.append(&mut guarded.fatal);
    secrets.append(&mut groups.fatal);
    secrets.append(&mut logged.fatal);
    if !secrets.is_empty() {
        return Err(secrets);
    }
    findings.warnings.append(&mut people.warnings);
    findings.warnings.append(&mut servers.warnings);
    findings.warnings.append(&mut customers.warnings);
    findings.warnings.append(&mut guarded.warnings);
    findings.warnings.append(&mut groups.warnings);
    findings.warnings.append(&mut logged.warnings);
    findings.defaults.append(&mut people.defaults);
    findings.defaults.append(&mut guarded.defaults);
    Ok(())
}

/// The desired composed resources, by composition-resource name: built,
/// with the XR's usages of its instance where the input asks for them, and
/// the input's metadata applied. What is odd about them joins `warnings`.
fn desired(
    target: &Target,
    request: &XrRequest,
    input: &Input,
    xr: &Value,
    warnings: &mut Vec<Problem>,
) -> BTreeMap<String, Value> {
    let mut desired = build::desired(target, request);
    if input.usages == Some(true) {
        let usages = usage::of_instance(target, &desired);
        if usages.is_empty() {
            warnings.push(Problem::new(
                "input.usages",
                "has no effect with input.instance.reference: the instance is not composed \
                 here, so its deletion is not this composition's to order",
            ));
        }
        desired.extend(usages);
    }
    warnings.extend(metadata::apply(&mut desired, xr, &input.composed));
    desired
}

/// The desired resources with what is observed of them: each with its
/// readiness, the observed ones by name, and what this composition adds
/// (each resource not observed yet).
fn observe<'o>(
    desired: BTreeMap<String, Value>,
    observed: &'o dyn ObservedState,
) -> (
    BTreeMap<String, Desired>,
    BTreeMap<String, Observed<'o>>,
    Vec<String>,
) {
    let mut resources = BTreeMap::new();
    let mut observed_by_name = BTreeMap::new();
    let mut added = Vec::new();
    for (name, resource) in desired {
        // Under an older API group the name holds another object: not
        // observed, as far as this one goes.
        let seen = observed
            .composed(&name)
            .filter(|o| o.api_version == resource["apiVersion"]);
        if seen.is_none() {
            added.push(format!(
                "adds {} {} ({name})",
                resource["kind"].as_str().unwrap_or_default(),
                resource["metadata"]["name"].as_str().unwrap_or_default()
            ));
        }
        let ready = seen.and_then(|o| readiness(o.status));
        resources.insert(name.clone(), Desired { resource, ready });
        if let Some(seen) = seen {
            observed_by_name.insert(name, seen);
        }
    }
    (resources, observed_by_name, added)
}

/// The instance the entities use, as the function sees it: what to ask
/// Crossplane for (a referenced instance), its status (the rendered one's
/// as observed, a referenced one's as Crossplane supplied it) and where it
/// stands. A referenced instance not supplied is a warning.
fn seen_instance<'t, 'o>(
    target: &'t Target,
    observed: &'o dyn ObservedState,
    observed_by_name: &BTreeMap<String, Observed<'o>>,
    warnings: &mut Vec<Problem>,
) -> (Vec<Requirement>, Option<&'o Value>, InstanceState<'t>) {
    let mut requirements = Vec::new();
    let mut instance_fetched = false;
    let instance_status = match &target.instance {
        InstanceTarget::Rendered(_) => observed_by_name.get(names::INSTANCE).map(|o| o.status),
        InstanceTarget::Existing { name, namespace } => {
            requirements.push(Requirement {
                api_version: crate::api::API_VERSION.to_string(),
                kind: "LiteLLMInstance".to_string(),
                name: name.clone(),
                namespace: namespace
                    .clone()
                    .unwrap_or_else(|| target.namespace.clone()),
            });
            match observed.required_instance() {
                Supplied::Found(o) if o.is_ours() => Some(o.status),
                // An object of another API under the name counts as none.
                Supplied::Found(_) | Supplied::NotFound => {
                    instance_fetched = true;
                    None
                }
                Supplied::NotYet => None,
            }
        }
    };

    let instance_state = match (&target.instance, instance_status) {
        (_, Some(status)) => InstanceState::Observed {
            ready: status.get("ready").and_then(Value::as_bool) == Some(true),
        },
        (InstanceTarget::Rendered(_), None) => InstanceState::Creating,
        (InstanceTarget::Existing { name, namespace }, None) => {
            let namespace = namespace.as_deref().unwrap_or(&target.namespace);
            let state = InstanceState::NotSupplied {
                namespace,
                name,
                fetched: instance_fetched,
            };
            warnings.push(Problem::new(
                "input.instance.reference",
                state.explain().expect("a missing instance explains itself"),
            ));
            state
        }
    };
    (requirements, instance_status, instance_state)
}

/// The XR's status and (legacy) connection details, from observed resources.
fn report(
    target: &Target,
    request: &XrRequest,
    resources: &BTreeMap<String, Desired>,
    observed: &BTreeMap<String, Observed<'_>>,
    instance: Option<&Value>,
    legacy: bool,
) -> (Map<String, Value>, BTreeMap<String, Vec<u8>>) {
    let mut status = Map::new();
    if let Some(team_id) = observed
        .get(names::TEAM)
        .and_then(|o| o.status.pointer("/atProvider/teamId"))
    {
        status.insert("teamId".into(), team_id.clone());
    }

    let keys: Vec<Value> = request
        .keys
        .iter()
        .map(|key| {
            let name = names::key(&key.name);
            json!({
                "name": key.name,
                "secretName": target.object_name(&name),
                "ready": resources.get(&name).is_some_and(Desired::is_ready),
            })
        })
        .collect();
    status.insert("keys".into(), Value::Array(keys));

    // Reported only for an XR that asks for them: an XRD written before
    // users, MCP servers, customers and access groups declares no such
    // status field, and Crossplane would refuse the whole status.
    if !request.users.is_empty() {
        let users = request.users.iter().map(|user| {
            let name = names::user(&user.name);
            entity_status(&user.name, &name, &["userId"], resources, observed)
        });
        status.insert("users".into(), users.collect());
    }
    if !request.mcp_servers.is_empty() {
        let servers = request.mcp_servers.iter().map(|server| {
            let name = names::mcp_server(&server.name);
            let fields = ["serverId", "serverName"];
            entity_status(&server.name, &name, &fields, resources, observed)
        });
        status.insert("mcpServers".into(), servers.collect());
    }
    if !request.customers.is_empty() {
        let customers = request.customers.iter().map(|customer| {
            let name = names::customer(&customer.name);
            entity_status(&customer.name, &name, &["customerId"], resources, observed)
        });
        status.insert("customers".into(), customers.collect());
    }
    if !request.access_groups.is_empty() {
        let groups = request.access_groups.iter().map(|group| {
            let name = names::access_group(&group.name);
            entity_status(&group.name, &name, &["accessGroupId"], resources, observed)
        });
        status.insert("accessGroups".into(), groups.collect());
    }

    let instance_ready = instance
        .and_then(|i| i.get("ready"))
        .and_then(Value::as_bool);
    let endpoint = instance
        .and_then(|i| i.get("endpoint"))
        .and_then(Value::as_str);
    let gateway = instance
        .and_then(|i| i.get("gatewayEndpoint"))
        .and_then(Value::as_str);
    if let Some(endpoint) = endpoint {
        status.insert("endpoint".into(), json!(endpoint));
    }
    if let Some(gateway) = gateway {
        status.insert("gatewayEndpoint".into(), json!(gateway));
    }
    status.insert(
        "instanceReady".into(),
        json!(instance_ready.unwrap_or(false)),
    );
    let all_ready = resources.values().all(Desired::is_ready) && instance_ready.unwrap_or(false);
    status.insert("ready".into(), json!(all_ready));

    let details = if legacy {
        // Consumers call the gateway when the proxy splits LLM traffic off.
        connection_details(request, observed, gateway.or(endpoint))
    } else {
        BTreeMap::new()
    };
    (status, details)
}

/// The status entry of a user, MCP server, customer or access group of the XR (`name`, composed as
/// `resource`): its name, the `atProvider` `fields` observed of it, and
/// whether it is ready.
fn entity_status(
    name: &str,
    resource: &str,
    fields: &[&str],
    resources: &BTreeMap<String, Desired>,
    observed: &BTreeMap<String, Observed<'_>>,
) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(name));
    for field in fields {
        let value = observed
            .get(resource)
            .and_then(|o| o.status.pointer(&format!("/atProvider/{field}")));
        if let Some(value) = value {
            entry.insert(field.to_string(), value.clone());
        }
    }
    entry.insert(
        "ready".into(),
        json!(resources.get(resource).is_some_and(Desired::is_ready)),
    );
    Value::Object(entry)
}

/// A legacy XR's connection details: the URL consumers call, and each
/// key's secret as its observed Secret holds it.
fn connection_details(
    request: &XrRequest,
    observed: &BTreeMap<String, Observed<'_>>,
    url: Option<&str>,
) -> BTreeMap<String, Vec<u8>> {
    let mut details = BTreeMap::new();
    if let Some(url) = url {
        details.insert("endpoint".to_string(), url.as_bytes().to_vec());
    }
    for key in &request.keys {
        let secret = observed
            .get(&names::key(&key.name))
            .and_then(|o| o.connection_details.get(KEY_SECRET_FIELD));
        if let Some(secret) = secret {
            details.insert(format!("key-{}", key.name), secret.clone());
        }
    }
    details
}
