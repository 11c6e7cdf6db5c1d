//! Counts the provider's requests to the Kubernetes API server by verb and
//! resource (`provider_litellm_kube_requests_total`), as controller-runtime
//! counts its client's (`rest_client_requests_total`): the figure that
//! shows the steady state reads nothing (every read comes from a watch
//! cache) and what a reconciliation costs the API server otherwise.

use std::task::{Context, Poll};

use http::{Method, Request, Uri};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// One series: a Kubernetes verb and the resource, with its subresource
/// (`litellmteams/status`). Neither ever holds a name or a namespace.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KubeRequestLabel {
    pub verb: &'static str,
    pub resource: String,
}

/// The verb and resource of a request, from its method and path:
/// `/api/v1/namespaces/{ns}/secrets/{name}`,
/// `/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}/{subresource}`,
/// and the cluster-scoped forms.
pub fn classify(method: &Method, uri: &Uri) -> KubeRequestLabel {
    let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    // What follows `api/v1` or `apis/{group}/{version}`.
    let rest: &[&str] = match segments.first() {
        Some(&"api") => segments.get(2..).unwrap_or_default(),
        Some(&"apis") => segments.get(3..).unwrap_or_default(),
        _ => &[],
    };
    let rest = match rest {
        ["namespaces", _, plural, tail @ ..] => (*plural, tail),
        [plural, tail @ ..] => (*plural, tail),
        [] => ("", &[][..]),
    };
    let (plural, tail) = rest;
    let named = !tail.is_empty();
    let resource = match tail.get(1) {
        Some(sub) => format!("{plural}/{sub}"),
        None if plural.is_empty() => "other".to_owned(),
        None => plural.to_owned(),
    };
    let watch = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
    let verb = match *method {
        Method::GET if watch => "watch",
        Method::GET if named => "get",
        Method::GET => "list",
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE if named => "delete",
        Method::DELETE => "deletecollection",
        _ => "other",
    };
    KubeRequestLabel { verb, resource }
}

/// A tower layer that counts each request into `family`.
#[derive(Clone)]
pub struct CountRequests {
    pub family: Family<KubeRequestLabel, Counter>,
}

impl<S> tower_layer::Layer<S> for CountRequests {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            family: self.family.clone(),
        }
    }
}

/// The service [`CountRequests`] wraps around a client's stack.
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    family: Family<KubeRequestLabel, Counter>,
}

impl<S, B> tower_service::Service<Request<B>> for Counted<S>
where
    S: tower_service::Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        self.family
            .get_or_create(&classify(request.method(), request.uri()))
            .inc();
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_named_by_verb_and_resource_only() {
        let cases = [
            (
                "GET",
                "/api/v1/namespaces/ns/secrets/master",
                "get",
                "secrets",
            ),
            (
                "GET",
                "/api/v1/secrets?watch=true&resourceVersion=5",
                "watch",
                "secrets",
            ),
            ("GET", "/api/v1/namespaces/ns/secrets", "list", "secrets"),
            ("GET", "/api/v1/namespaces/team-a", "get", "namespaces"),
            ("GET", "/api/v1/namespaces?watch=1", "watch", "namespaces"),
            (
                "PATCH",
                "/apis/litellm.m.crossplane.io/v1alpha1/namespaces/ns/litellmteams/web/status",
                "patch",
                "litellmteams/status",
            ),
            (
                "POST",
                "/apis/events.k8s.io/v1/namespaces/ns/events",
                "create",
                "events",
            ),
            (
                "PUT",
                "/apis/coordination.k8s.io/v1/namespaces/ns/leases/provider",
                "update",
                "leases",
            ),
            (
                "DELETE",
                "/apis/apps/v1/namespaces/ns/deployments/p",
                "delete",
                "deployments",
            ),
            ("GET", "/version", "list", "other"),
        ];
        for (method, uri, verb, resource) in cases {
            let label = classify(&method.parse().unwrap(), &uri.parse().unwrap());
            assert_eq!(
                label,
                KubeRequestLabel {
                    verb,
                    resource: resource.into()
                },
                "{method} {uri}"
            );
        }
    }
}
