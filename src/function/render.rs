//! `function-litellm render`: the function run offline on files, like
//! `crossplane render`. It builds the `RunFunctionRequest` Crossplane would
//! send and runs the same code the gRPC service runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use function_sdk_rust::proto::v1::{Resource, Resources, RunFunctionRequest, Severity, State};
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
                    message: format!(
                        "every observed resource needs the annotation {COMPOSITION_RESOURCE_NAME}"
                    ),
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
        let items = read_documents(path)?
            .into_iter()
            .map(|doc| {
                Ok(Resource {
                    resource: Some(json_to_struct(&object(doc, path, "a required resource")?)),
                    ..Default::default()
                })
            })
            .collect::<Result<Vec<_>, RenderError>>()?;
        req.required_resources
            .insert(INSTANCE_REQUIREMENT.to_string(), Resources { items });
    }
    Ok(req)
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

/// Runs the function on the files and returns the output documents: the
/// XR with its desired status, the desired composed resources by name, and
/// a document per result. A fatal result is an error.
pub fn render(files: &RenderFiles) -> Result<Vec<Value>, RenderError> {
    let req = request(files)?;
    let rsp = grpc::run(&req);
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
    Ok(docs)
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
