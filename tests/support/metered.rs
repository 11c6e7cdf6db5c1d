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

    /// Waits until the provider has polled the model `polls` more times.
    pub async fn polled(&self, polls: u64) {
        let reads = self.reads();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while self.reads() < reads + polls {
            super::authz::assert_no_denials();
            assert!(
                std::time::Instant::now() < deadline,
                "{} of {polls} polls in 60 s",
                self.reads() - reads
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Asserts that the provider polls the model `polls` more times (each
    /// poll is one read, counted as it is made) without writing; the first
    /// poll counted may have begun before, so a write of its would show.
    pub async fn assert_quiet(&self, polls: u64, what: &str) {
        let writes = self.writes();
        self.polled(polls).await;
        assert_eq!(
            self.writes(),
            writes,
            "no write in the steady state: {what}"
        );
    }
}
