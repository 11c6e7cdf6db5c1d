//! A platform namespace of its own (with an instance on the real proxy)
//! whose controllers' metrics a test can read: the world's controllers
//! keep theirs to themselves.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use litellm_crossplane::api::LiteLLMModel;
use litellm_crossplane::provider::runtime::controllers;
use litellm_crossplane::provider::telemetry::metrics::Metrics;

use super::k8s;
use super::provider::{context, create_instance, requests_by_operation, World};

pub struct Metered {
    pub namespace: String,
    registry: prometheus_client::registry::Registry,
    controllers: tokio::task::JoinHandle<()>,
}

impl Drop for Metered {
    fn drop(&mut self) {
        self.controllers.abort();
    }
}

impl Metered {
    pub async fn start(world: &World, prefix: &str) -> Self {
        let namespace = k8s::namespace(&world.kube, prefix).await;
        create_instance(&world.kube, &namespace, &world.url, &world.master_key, true).await;
        let metrics = Metrics::default();
        let mut registry = prometheus_client::registry::Registry::default();
        metrics.register(&mut registry);
        let ctx = Arc::new(context(&world.provider_client(), metrics));
        let controllers = tokio::spawn(controllers::run(ctx, Some(namespace.clone())));
        Self {
            namespace,
            registry,
            controllers,
        }
    }

    pub fn models(&self, world: &World) -> Api<LiteLLMModel> {
        Api::namespaced(world.kube.clone(), &self.namespace)
    }

    /// LiteLLM requests so far, by operation.
    pub fn requests(&self) -> BTreeMap<String, u64> {
        requests_by_operation(&self.registry)
    }

    /// Model writes (creates and updates) so far.
    pub fn writes(&self) -> u64 {
        let requests = self.requests();
        ["POST /model/new", "PATCH /model/{id}/update"]
            .iter()
            .map(|op| requests.get(*op).copied().unwrap_or(0))
            .sum()
    }

    pub fn reads(&self) -> u64 {
        self.requests()
            .get("GET /v2/model/info")
            .copied()
            .unwrap_or(0)
    }

    /// Asserts that the provider polls for `window` without writing.
    pub async fn assert_quiet(&self, window: Duration, what: &str) {
        let (writes, reads) = (self.writes(), self.reads());
        tokio::time::sleep(window).await;
        assert_eq!(
            self.writes(),
            writes,
            "no write in the steady state: {what}"
        );
        assert!(self.reads() > reads, "the model is still polled: {what}");
    }
}
