//! The effectful part: the watch loop, reading the CA Secret, the probe and
//! the status patch.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::ResourceExt;
use serde_json::json;
use tokio_stream::StreamExt;

use crate::api::common::SecretKeySelector;
use crate::api::instance::LiteLLMInstance;
use crate::api::API_VERSION;

use super::{desired_status, probe, probe_target, requeue_after, Error, ProbeResult};

/// Field manager of the status patches.
pub const FIELD_MANAGER: &str = "provider-litellm-instance";

/// Settings of the `LiteLLMInstance` controller.
#[derive(Debug, Clone)]
pub struct InstanceOptions {
    /// Watch only this namespace; `None` watches all namespaces.
    pub namespace: Option<String>,
    /// Re-probe interval of a ready proxy (and of instances nothing can be
    /// done for until their spec changes).
    pub ready_interval: Duration,
    /// Re-probe interval while an attached proxy is not ready.
    pub not_ready_interval: Duration,
    /// Bound on connecting to the proxy and on each probe request.
    pub probe_timeout: Duration,
}

impl Default for InstanceOptions {
    fn default() -> Self {
        Self {
            namespace: None,
            ready_interval: Duration::from_secs(30),
            not_ready_interval: Duration::from_secs(10),
            probe_timeout: Duration::from_secs(5),
        }
    }
}

/// Shared by every reconciliation.
struct Context {
    client: kube::Client,
    options: InstanceOptions,
}

/// Runs the controller until SIGTERM or Ctrl-C (graceful shutdown: running
/// reconciliations finish). Needs RBAC for `litellminstances` (list, watch)
/// and `litellminstances/status` (patch), and `get` on Secrets for
/// `spec.tls.caSecretRef`; nothing else.
pub async fn run(client: kube::Client, options: InstanceOptions) {
    controller(client, options).await
}

/// [`run`] as a future, for a binary that joins it with other controllers.
pub fn controller(client: kube::Client, options: InstanceOptions) -> impl Future<Output = ()> {
    let api: Api<LiteLLMInstance> = match &options.namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    };
    let context = Arc::new(Context { client, options });
    async move {
        // Watch events caused by our own status patches trigger a
        // reconciliation too; it computes the same status and skips the
        // patch, so they settle after one round instead of looping.
        let results = Controller::new(api, watcher::Config::default())
            .shutdown_on_signal()
            .run(reconcile, error_policy, context);
        tokio::pin!(results);
        while let Some(result) = results.next().await {
            match result {
                Ok((object, _)) => tracing::debug!(instance = %object, "reconciled"),
                Err(err) => tracing::warn!(error = %err, "LiteLLMInstance reconciliation failed"),
            }
        }
    }
}

async fn reconcile(instance: Arc<LiteLLMInstance>, context: Arc<Context>) -> Result<Action, Error> {
    let name = instance.name_any();
    let namespace = instance
        .namespace()
        .ok_or_else(|| Error::MissingNamespace { name: name.clone() })?;
    let options = &context.options;

    let probed = match probe_target(&instance) {
        None => None,
        Some(target) => {
            let ca_pem = match &target.ca_secret_ref {
                None => Ok(None),
                Some(selector) => read_ca(&context.client, &namespace, selector)
                    .await
                    .map(Some),
            };
            Some(match ca_pem {
                Ok(ca_pem) => probe(&target.endpoint, ca_pem, options.probe_timeout).await,
                Err(err) if err.is_user_error() => ProbeResult::NotReachable {
                    cause: err.to_string(),
                },
                Err(err) => return Err(err),
            })
        }
    };

    let desired = desired_status(&instance, probed, Timestamp::now());
    if instance.status.as_ref() != Some(&desired) {
        let api: Api<LiteLLMInstance> = Api::namespaced(context.client.clone(), &namespace);
        let patch = json!({
            "apiVersion": API_VERSION,
            "kind": "LiteLLMInstance",
            "status": desired,
        });
        // Server-side apply: fields this controller set before and now
        // leaves out (a version no longer disclosed) are removed.
        api.patch_status(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&patch),
        )
        .await
        .map_err(|source| Error::PatchStatus {
            namespace: namespace.clone(),
            name: name.clone(),
            source,
        })?;
        tracing::info!(
            %namespace, %name, ready = desired.ready,
            endpoint = desired.endpoint.as_deref().unwrap_or(""),
            "LiteLLMInstance status updated"
        );
    }
    Ok(Action::requeue(requeue_after(&instance, &desired, options)))
}

fn error_policy(instance: Arc<LiteLLMInstance>, err: &Error, context: Arc<Context>) -> Action {
    tracing::warn!(instance = %instance.name_any(), error = %err, "LiteLLMInstance not reconciled");
    Action::requeue(context.options.not_ready_interval)
}

/// The PEM bundle of `spec.tls.caSecretRef`, from the instance's namespace.
async fn read_ca(
    client: &kube::Client,
    namespace: &str,
    selector: &SecretKeySelector,
) -> Result<Vec<u8>, Error> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = secrets
        .get_opt(&selector.name)
        .await
        .map_err(|source| Error::ReadCaSecret {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
            source,
        })?
        .ok_or_else(|| Error::CaSecretNotFound {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
        })?;
    secret
        .data
        .and_then(|mut data| data.remove(&selector.key))
        .map(|bytes| bytes.0)
        .ok_or_else(|| Error::CaKeyMissing {
            namespace: namespace.to_string(),
            name: selector.name.clone(),
            key: selector.key.clone(),
        })
}
