//! `function-litellm render`: the function run offline on files, like
//! `crossplane render`. It builds the `RunFunctionRequest` Crossplane would
//! send and runs the same code the gRPC service runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use function_sdk_rust::proto::v1::{
    resource_selector, Resource, ResourceSelector, Resources, RunFunctionRequest,
    RunFunctionResponse, Severity, State,
};
use function_sdk_rust::resource::{json_to_struct, struct_to_json};
use serde_json::{json, Map, Value};

use crate::api::input::INPUT_API_VERSION;

use super::compose::INSTANCE_REQUIREMENT;
use super::grpc;

/// Annotation naming a composed resource's composition-resource name.
pub const COMPOSITION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// Why a render could not run.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not YAML: {message}")]
    Yaml { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Content { path: PathBuf, message: String },
    #[error("the function returned a fatal result: {0}")]
    Fatal(String),
}

/// The files of one render.
#[derive(Clone, Debug, Default)]
pub struct RenderFiles {
    /// The XR (or a claim's XR), YAML.
    pub xr: PathBuf,
    /// A Composition whose pipeline calls this function, or the `Input` itself.
    pub composition: PathBuf,
    /// Observed composed resources, YAML documents annotated with
    /// `crossplane.io/composition-resource-name`.
    pub observed: Option<PathBuf>,
    /// Resources Crossplane would fetch for the function: the referenced
    /// LiteLLMInstance.
    pub required: Option<PathBuf>,
}

fn read_documents(path: &Path) -> Result<Vec<Value>, RenderError> {
    let text = std::fs::read_to_string(path).map_err(|source| RenderError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| RenderError::Yaml {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

fn object(value: Value, path: &Path, what: &str) -> Result<Map<String, Value>, RenderError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(RenderError::Content {
            path: path.to_path_buf(),
            message: format!("{what} must be a YAML mapping"),
        }),
    }
}

/// Finds this function's input: the file itself when it is an `Input`, else
/// the input of the Composition's pipeline step that carries one.
fn find_input(doc: &Value, path: &Path) -> Result<Value, RenderError> {
    if doc.get("apiVersion").and_then(Value::as_str) == Some(INPUT_API_VERSION) {
        return Ok(doc.clone());
    }
    let steps = doc.pointer("/spec/pipeline").and_then(Value::as_array).ok_or_else(|| RenderError::Content {
        path: path.to_path_buf(),
        message: "neither a litellm.fn.crossplane.io/v1beta1 Input nor a Composition with spec.pipeline".into(),
    })?;
    steps
        .iter()
        .filter_map(|s| s.get("input"))
        .find(|i| i.get("apiVersion").and_then(Value::as_str) == Some(INPUT_API_VERSION))
        .cloned()
        .ok_or_else(|| RenderError::Content {
            path: path.to_path_buf(),
            message: format!("no pipeline step has an input of apiVersion {INPUT_API_VERSION}"),
        })
}

/// Builds the request Crossplane would send for these files.
pub fn request(files: &RenderFiles) -> Result<RunFunctionRequest, RenderError> {
    let xr = read_documents(&files.xr)?
        .into_iter()
        .next()
        .ok_or_else(|| RenderError::Content {
            path: files.xr.clone(),
            message: "holds no document".into(),
        })?;
    let xr = object(xr, &files.xr, "the XR")?;
    let xr_kind = xr.get("kind").and_then(Value::as_str).unwrap_or("");
    let xr_api_version = xr.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if matches!(
        xr_kind,
        "Composition" | "CompositeResourceDefinition" | "Function"
    ) || xr_api_version == INPUT_API_VERSION
        || xr_api_version.starts_with(&format!("{}/", crate::api::GROUP))
    {
        return Err(RenderError::Content {
            path: files.xr.clone(),
            message: format!(
                "is a {} {xr_kind}, not an XR: the first argument is the composite resource \
                 (or a claim's XR), the second the Composition",
                if xr_api_version.is_empty() {
                    "document without apiVersion,"
                } else {
                    xr_api_version
                }
            ),
        });
    }
    let composition = read_documents(&files.composition)?
        .into_iter()
        .next()
        .ok_or_else(|| RenderError::Content {
            path: files.composition.clone(),
            message: "holds no document".into(),
        })?;
    let input = object(
        find_input(&composition, &files.composition)?,
        &files.composition,
        "the input",
    )?;

    let mut observed = State {
        composite: Some(Resource {
            resource: Some(json_to_struct(&xr)),
            ..Default::default()
        }),
        ..Default::default()
    };
    if let Some(path) = &files.observed {
        for doc in read_documents(path)? {
            let name = doc
                .pointer(&format!(
                    "/metadata/annotations/{}",
                    COMPOSITION_RESOURCE_NAME.replace('/', "~1")
                ))
                .and_then(Value::as_str)
                .ok_or_else(|| RenderError::Content {
                    path: path.clone(),
                    message: observed_without_name(&doc),
                })?
                .to_string();
            let connection_details = observed_connection_details(&doc);
            observed.resources.insert(
                name,
                Resource {
                    resource: Some(json_to_struct(&object(doc, path, "an observed resource")?)),
                    connection_details,
                    ..Default::default()
                },
            );
        }
    }
    let mut req = RunFunctionRequest {
        observed: Some(observed),
        input: Some(json_to_struct(&input)),
        ..Default::default()
    };
    if let Some(path) = &files.required {
        let items = required_documents(path)?
            .into_iter()
            .map(|doc| Resource {
                resource: Some(json_to_struct(&doc)),
                ..Default::default()
            })
            .collect();
        req.required_resources
            .insert(INSTANCE_REQUIREMENT.to_string(), Resources { items });
    }
    Ok(req)
}

fn required_documents(path: &Path) -> Result<Vec<Map<String, Value>>, RenderError> {
    read_documents(path)?
        .into_iter()
        .map(|doc| object(doc, path, "a required resource"))
        .collect()
}

/// Which kind of object a document is, for messages: `Kind namespace/name`.
fn describe(doc: &Map<String, Value>) -> String {
    let kind = doc
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("object without kind");
    let name = doc
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("<no name>");
    match doc
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
    {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The selector the function asked for the instance under, if it did.
fn instance_selector(rsp: &RunFunctionResponse) -> Option<&ResourceSelector> {
    let requirements = rsp.requirements.as_ref()?;
    requirements
        .resources
        .get(INSTANCE_REQUIREMENT)
        .or_else(|| requirements.extra_resources.get(INSTANCE_REQUIREMENT))
}

/// Whether `doc` is what `selector` asks for, as Crossplane matches it.
fn selected(selector: &ResourceSelector, doc: &Map<String, Value>) -> bool {
    let field = |name: &str| doc.get(name).and_then(Value::as_str).unwrap_or("");
    let metadata = |name: &str| {
        doc.get("metadata")
            .and_then(|m| m.get(name))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let name_matches = match &selector.r#match {
        Some(resource_selector::Match::MatchName(name)) => metadata("name") == name,
        Some(resource_selector::Match::MatchLabels(labels)) => {
            labels.labels.iter().all(|(k, v)| {
                doc.get("metadata")
                    .and_then(|m| m.get("labels"))
                    .and_then(|l| l.get(k))
                    .and_then(Value::as_str)
                    == Some(v.as_str())
            })
        }
        None => false,
    };
    field("apiVersion") == selector.api_version
        && field("kind") == selector.kind
        && selector
            .namespace
            .as_deref()
            .is_none_or(|namespace| metadata("namespace") == namespace)
        && name_matches
}

/// What the selector names, for messages.
fn describe_selector(selector: &ResourceSelector) -> String {
    let name = match &selector.r#match {
        Some(resource_selector::Match::MatchName(name)) => name.clone(),
        Some(resource_selector::Match::MatchLabels(labels)) => format!(
            "labelled {}",
            labels
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        ),
        None => "<any>".to_string(),
    };
    match &selector.namespace {
        Some(namespace) => format!("{} {namespace}/{name}", selector.kind),
        None => format!("{} {name}", selector.kind),
    }
}

/// Why a required document was not supplied, naming it and what the XR
/// references.
fn unselected_warning(doc: &Map<String, Value>, selector: &ResourceSelector) -> String {
    let what = describe(doc);
    let annotated = doc
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(COMPOSITION_RESOURCE_NAME))
        .is_some();
    if annotated {
        format!(
            "--required-resources holds {what}, a composed resource (it carries \
             {COMPOSITION_RESOURCE_NAME}): it belongs in --observed-resources; the XR references \
             the {}, which was not supplied",
            describe_selector(selector)
        )
    } else {
        format!(
            "--required-resources holds {what}, but the XR references the {}: Crossplane would \
             not supply {what}, so it was left out",
            describe_selector(selector)
        )
    }
}

/// Why an observed document is refused: it names no composed resource.
fn observed_without_name(doc: &Value) -> String {
    let what = doc
        .as_object()
        .map(describe)
        .unwrap_or_else(|| "a document that is not a mapping".to_string());
    format!(
        "{what} has no annotation {COMPOSITION_RESOURCE_NAME}: --observed-resources takes the \
         composed resources as Crossplane observed them, each annotated with its name in the \
         composition (a referenced LiteLLMInstance goes to --required-resources)"
    )
}

/// Observed connection details are not part of an object; `render` takes
/// them from a `render.crossplane.io/connection-details` annotation holding
/// a JSON object of strings, as a stand-in for the connection Secret.
fn observed_connection_details(doc: &Value) -> std::collections::HashMap<String, Vec<u8>> {
    doc.pointer("/metadata/annotations/render.crossplane.io~1connection-details")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str::<BTreeMap<String, String>>(s).ok())
        .map(|m| m.into_iter().map(|(k, v)| (k, v.into_bytes())).collect())
        .unwrap_or_default()
}

/// What a render produced: the output documents, and what `render` noticed
/// about the files it was given (not results of the function).
#[derive(Debug, Default)]
pub struct Rendered {
    pub documents: Vec<Value>,
    pub warnings: Vec<String>,
}

/// How often the function is called again with what it asked for, as
/// `crossplane render` does, before the requirements must have settled.
const MAX_REQUIREMENT_ROUNDS: usize = 5;

/// Runs the function on the files and returns the output documents: the
/// XR with its desired status, the desired composed resources by name, and
/// a document per result. A fatal result is an error.
///
/// As Crossplane does, the function is called first without required
/// resources; of the `--required-resources` documents it is then given only
/// those its requirement selects, and called again until it asks for
/// nothing new. A document it did not select is a warning naming it and
/// what the XR references.
pub fn render(files: &RenderFiles) -> Result<Rendered, RenderError> {
    let mut warnings = Vec::new();
    let mut req = request(&RenderFiles {
        required: None,
        ..files.clone()
    })?;
    let supplied = match &files.required {
        Some(path) => required_documents(path)?,
        None => Vec::new(),
    };
    let mut rsp = grpc::run(&req);
    if files.required.is_some() {
        let mut rounds = 0;
        let mut asked: Option<ResourceSelector> = None;
        while let Some(selector) = instance_selector(&rsp).cloned() {
            if asked.as_ref() == Some(&selector) || rounds == MAX_REQUIREMENT_ROUNDS {
                break;
            }
            rounds += 1;
            let (chosen, left): (Vec<_>, Vec<_>) =
                supplied.iter().partition(|doc| selected(&selector, doc));
            warnings = left
                .iter()
                .map(|doc| unselected_warning(doc, &selector))
                .collect();
            let items = chosen
                .into_iter()
                .map(|doc| Resource {
                    resource: Some(json_to_struct(doc)),
                    ..Default::default()
                })
                .collect();
            req.required_resources
                .insert(INSTANCE_REQUIREMENT.to_string(), Resources { items });
            rsp = grpc::run(&req);
            asked = Some(selector);
        }
        if asked.is_none() {
            warnings.extend(supplied.iter().map(|doc| {
                format!(
                    "--required-resources holds {}, but the function asked for no resource (the \
                     XR's instance is composed, not referenced): it was left out",
                    describe(doc)
                )
            }));
        }
    }
    if let Some(fatal) = rsp
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
    {
        return Err(RenderError::Fatal(fatal.message.clone()));
    }
    let xr = req
        .observed
        .as_ref()
        .and_then(|o| o.composite.as_ref())
        .and_then(|c| c.resource.as_ref())
        .map(struct_to_json)
        .unwrap_or_default();
    let desired_xr = rsp
        .desired
        .as_ref()
        .and_then(|d| d.composite.as_ref())
        .and_then(|c| c.resource.as_ref())
        .map(struct_to_json)
        .unwrap_or_default();
    let mut docs = vec![json!({
        "apiVersion": xr.get("apiVersion"),
        "kind": xr.get("kind"),
        "metadata": {"name": xr.pointer("/metadata/name"), "namespace": xr.pointer("/metadata/namespace")},
        "status": desired_xr.get("status"),
    })];
    strip_nulls(&mut docs[0]);
    let connection: BTreeMap<&str, usize> = rsp
        .desired
        .as_ref()
        .and_then(|d| d.composite.as_ref())
        .map(|c| {
            c.connection_details
                .iter()
                .map(|(k, v)| (k.as_str(), v.len()))
                .collect()
        })
        .unwrap_or_default();
    if !connection.is_empty() {
        // Names and sizes only: values may be keys.
        docs[0]["connectionDetails"] = json!(connection
            .iter()
            .map(|(k, len)| (k.to_string(), json!(format!("<{len} bytes>"))))
            .collect::<Map<_, _>>());
    }
    for (name, mut resource) in grpc::desired_resources(&rsp) {
        // As the function reports it: "unspecified" leaves it to a later
        // step (function-auto-ready), and Crossplane counts it not ready.
        use function_sdk_rust::proto::v1::Ready;
        let ready = match rsp
            .desired
            .as_ref()
            .and_then(|d| d.resources.get(&name))
            .and_then(|r| Ready::try_from(r.ready).ok())
        {
            Some(Ready::True) => "true",
            Some(Ready::False) => "false",
            _ => "unspecified",
        };
        let annotations = &mut resource["metadata"]["annotations"];
        if annotations.is_null() {
            *annotations = json!({});
        }
        annotations[COMPOSITION_RESOURCE_NAME] = json!(name);
        annotations["render.crossplane.io/ready"] = json!(ready);
        docs.push(resource);
    }
    for result in &rsp.results {
        let severity = Severity::try_from(result.severity)
            .map(|s| s.as_str_name().trim_start_matches("SEVERITY_").to_string())
            .unwrap_or_default();
        docs.push(json!({
            "apiVersion": "render.crossplane.io/v1beta1",
            "kind": "Result",
            "severity": severity,
            "reason": result.reason,
            "message": result.message,
        }));
    }
    Ok(Rendered {
        documents: docs,
        warnings,
    })
}

fn strip_nulls(value: &mut Value) {
    if let Value::Object(map) = value {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(strip_nulls);
    }
}

/// The documents as one YAML stream.
pub fn to_yaml(docs: &[Value]) -> String {
    docs.iter()
        .map(|d| {
            format!(
                "---\n{}",
                serde_saphyr::to_string(d).expect("JSON values serialize to YAML")
            )
        })
        .collect()
}
