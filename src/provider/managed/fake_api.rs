//! An in-memory Kubernetes API for the engine's tests: a `kube::Client`
//! over a service that keeps objects as JSON and answers GET, LIST, POST,
//! merge PATCH (of an object and of its `status` subresource) and DELETE
//! the way the API server does in what the reconciler relies on:
//! resourceVersion preconditions (409 on a stale one), a generation that
//! moves with the spec only, finalizers that hold a deletion, and an object
//! gone once its last finalizer is. Field and label selectors are ignored
//! (a list answers every object of the collection; the engine filters
//! what it reads again). It records every request, for tests that show
//! what did not happen.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{json, Value};

/// The API's state; clones share it.
#[derive(Clone, Default)]
pub struct FakeApi(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    /// Objects by their path without query (`/apis/g/v/namespaces/ns/plural/name`).
    objects: BTreeMap<String, Value>,
    revision: u64,
    uids: u64,
    /// `METHOD path` of every request, in order.
    requests: Vec<String>,
}

/// The path of a namespaced object of a group (`""` for the core group).
pub fn path(api_version: &str, plural: &str, namespace: &str, name: &str) -> String {
    let root = match api_version.contains('/') {
        true => format!("/apis/{api_version}"),
        false => format!("/api/{api_version}"),
    };
    format!("{root}/namespaces/{namespace}/{plural}/{name}")
}

impl FakeApi {
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `object` at `path` as the API server would create it (uid,
    /// resourceVersion, generation, creationTimestamp).
    pub fn put(&self, path: &str, mut object: Value) {
        let mut state = self.state();
        state.revision += 1;
        state.uids += 1;
        let meta = object["metadata"].as_object_mut().expect("metadata");
        meta.entry("uid")
            .or_insert_with(|| json!(format!("uid-{}", state.uids)));
        meta.insert("resourceVersion".into(), json!(state.revision.to_string()));
        meta.insert("generation".into(), json!(1));
        meta.entry("creationTimestamp")
            .or_insert_with(|| json!("2026-12-06T00:00:00Z"));
        state.objects.insert(path.to_owned(), object);
    }

    pub fn get(&self, path: &str) -> Option<Value> {
        self.state().objects.get(path).cloned()
    }

    /// `kubectl delete`: gone at once without finalizers, else marked.
    pub fn delete(&self, path: &str) {
        let mut state = self.state();
        state.revision += 1;
        let revision = state.revision;
        delete(&mut state.objects, path, revision);
    }

    /// Every request so far, as `METHOD path`.
    pub fn requests(&self) -> Vec<String> {
        self.state().requests.clone()
    }

    /// The events recorded on objects named `name`, as `type reason`.
    pub fn events(&self, name: &str) -> Vec<String> {
        self.state()
            .objects
            .iter()
            .filter(|(path, _)| path.contains("/events/"))
            .filter(|(_, event)| event["involvedObject"]["name"] == name)
            .map(|(_, e)| {
                format!(
                    "{} {}",
                    e["type"].as_str().unwrap_or(""),
                    e["reason"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    fn answer(&self, method: &Method, path: &str, query: &str, body: &[u8]) -> (StatusCode, Value) {
        let mut state = self.state();
        state.requests.push(format!("{method} {path}"));
        let (object_path, status) = match path.strip_suffix("/status") {
            Some(object) => (object.to_owned(), true),
            None => (path.to_owned(), false),
        };
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        match *method {
            Method::GET => match state.objects.get(&object_path) {
                Some(object) => (StatusCode::OK, object.clone()),
                None if is_collection(&object_path) => (StatusCode::OK, list(&state, &object_path)),
                None => not_found(&object_path),
            },
            Method::POST => {
                let name = body["metadata"]["name"]
                    .as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("generated-{}", state.requests.len()));
                let at = format!("{object_path}/{name}");
                drop(state);
                self.put(&at, body);
                (StatusCode::CREATED, self.get(&at).unwrap_or_default())
            }
            Method::PATCH => {
                let _ = query;
                patch(&mut state, &object_path, status, body)
            }
            Method::DELETE => {
                state.revision += 1;
                let revision = state.revision;
                delete(&mut state.objects, &object_path, revision);
                (
                    StatusCode::OK,
                    json!({"kind": "Status", "status": "Success"}),
                )
            }
            _ => (StatusCode::METHOD_NOT_ALLOWED, json!({})),
        }
    }
}

/// Whether `path` names a collection (`.../plural`) rather than an object.
fn is_collection(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let after_version = match segments.first() {
        Some(&"apis") => &segments[3.min(segments.len())..],
        _ => &segments[2.min(segments.len())..],
    };
    match after_version {
        ["namespaces", _, _plural] => true,
        ["namespaces", _] => false,
        [_plural] => true,
        _ => false,
    }
}

fn list(state: &State, collection: &str) -> Value {
    let items: Vec<&Value> = state
        .objects
        .iter()
        .filter(|(path, _)| {
            path.strip_prefix(collection)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|name| !name.contains('/'))
        })
        .map(|(_, object)| object)
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": state.revision.to_string()},
        "items": items,
    })
}

fn not_found(path: &str) -> (StatusCode, Value) {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{path} not found"),
    )
}

fn status(code: StatusCode, reason: &str, message: &str) -> (StatusCode, Value) {
    (
        code,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "reason": reason, "message": message, "code": code.as_u16(),
        }),
    )
}

/// A JSON merge patch (RFC 7386) of the object's spec and metadata, or of
/// its status only.
fn patch(state: &mut State, path: &str, status_only: bool, patch: Value) -> (StatusCode, Value) {
    let Some(current) = state.objects.get(path).cloned() else {
        return not_found(path);
    };
    let precondition = patch["metadata"]["resourceVersion"].as_str();
    if precondition.is_some_and(|rv| Some(rv) != current["metadata"]["resourceVersion"].as_str()) {
        return status(
            StatusCode::CONFLICT,
            "Conflict",
            "the object has been modified",
        );
    }
    let mut next = current.clone();
    if status_only {
        if let Some(status) = patch.get("status") {
            merge(&mut next["status"], status.clone());
        }
    } else {
        let mut patch = patch;
        if let Some(map) = patch.as_object_mut() {
            map.remove("status");
        }
        merge(&mut next, patch);
        if next["spec"] != current["spec"] {
            let generation = current["metadata"]["generation"].as_i64().unwrap_or(1);
            next["metadata"]["generation"] = json!(generation + 1);
        }
    }
    state.revision += 1;
    next["metadata"]["resourceVersion"] = json!(state.revision.to_string());
    let deleting = next["metadata"]["deletionTimestamp"].is_string();
    let finalizers = next["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if deleting && !finalizers {
        state.objects.remove(path);
    } else {
        state.objects.insert(path.to_owned(), next.clone());
    }
    (StatusCode::OK, next)
}

fn merge(target: &mut Value, patch: Value) {
    match patch {
        Value::Object(patch) => {
            if !target.is_object() {
                *target = json!({});
            }
            let map = target.as_object_mut().expect("an object");
            for (key, value) in patch {
                if value.is_null() {
                    map.remove(&key);
                } else {
                    merge(map.entry(key).or_insert(Value::Null), value);
                }
            }
        }
        patch => *target = patch,
    }
}

fn delete(objects: &mut BTreeMap<String, Value>, path: &str, revision: u64) {
    let Some(object) = objects.get_mut(path) else {
        return;
    };
    let finalizers = object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    if !finalizers {
        objects.remove(path);
        return;
    }
    object["metadata"]["deletionTimestamp"] = json!("2026-12-06T00:00:01Z");
    object["metadata"]["resourceVersion"] = json!(revision.to_string());
}

impl tower_service::Service<Request<Body>> for FakeApi {
    type Response = Response<Body>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let api = self.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let body = body.collect_bytes().await.unwrap_or_default();
            let (code, answer) = api.answer(
                &parts.method,
                parts.uri.path(),
                parts.uri.query().unwrap_or_default(),
                &body,
            );
            let response = Response::builder()
                .status(code)
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&answer).unwrap_or_default()))
                .expect("a response");
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collections_and_objects_are_told_apart() {
        assert!(is_collection("/apis/g/v1/namespaces/ns/teams"));
        assert!(!is_collection("/apis/g/v1/namespaces/ns/teams/web"));
        assert!(is_collection("/api/v1/namespaces/ns/secrets"));
        assert!(!is_collection("/api/v1/namespaces/ns"));
        assert!(is_collection("/apis/g/v1/teams"));
    }

    #[test]
    fn a_merge_patch_with_a_stale_version_conflicts_and_finalizers_hold_a_deletion() {
        let api = FakeApi::default();
        let at = path("g/v1", "teams", "ns", "web");
        api.put(
            &at,
            json!({"metadata": {"name": "web", "finalizers": ["f"]}, "spec": {"a": 1}}),
        );
        let rv = api.get(&at).unwrap()["metadata"]["resourceVersion"].clone();
        let mut state = api.state();
        let (code, _) = patch(
            &mut state,
            &at,
            false,
            json!({"metadata": {"resourceVersion": "0"}}),
        );
        assert_eq!(code, StatusCode::CONFLICT);
        let (code, patched) = patch(
            &mut state,
            &at,
            false,
            json!({"metadata": {"resourceVersion": rv}, "spec": {"a": 2}, "status": {"x": 1}}),
        );
        assert_eq!(code, StatusCode::OK);
        assert_eq!(patched["metadata"]["generation"], 2);
        assert_eq!(
            patched["status"],
            Value::Null,
            "status only through /status"
        );
        drop(state);
        api.delete(&at);
        assert!(api.get(&at).unwrap()["metadata"]["deletionTimestamp"].is_string());
        let mut state = api.state();
        patch(
            &mut state,
            &at,
            false,
            json!({"metadata": {"finalizers": []}}),
        );
        assert!(
            !state.objects.contains_key(&at),
            "gone with its last finalizer"
        );
    }
}
