//! A test kubelet: the part of a cluster the API server harness lacks. It
//! runs the pods of every Deployment and Job in one namespace as local
//! processes, writes Pod, Deployment and Job status from what the processes
//! do, and forwards each Service port to the ready pods it selects, the way
//! the ReplicaSet, Job and endpoints controllers, the kubelet and kube-proxy
//! do together on a real cluster.
//!
//! What it does with a pod template:
//!
//! - **Images** are mapped to local commands (see [`Images`]): LiteLLM's
//!   image, at a tag LiteLLM publishes for the installed version, runs the
//!   LiteLLM installation of `tests/harness/litellm` (`image.sh`), any other
//!   tag fails to pull, and LiteLLM's migration entrypoint applies LiteLLM's SQL migrations with
//!   `psql`, the harness's way (Prisma's schema engine is not available
//!   here). Any other image runs its `command` and `args` on the host as
//!   given (`python3 -m http.server`, say).
//! - **Environment** from `value`, `secretKeyRef`, `configMapKeyRef`,
//!   `fieldRef` (`metadata.name`, `metadata.namespace`) and `envFrom`, with
//!   `$(VAR)` expansion; a missing non-optional Secret or key holds the
//!   container in `CreateContainerConfigError`, as on a real node. Nothing of
//!   the test process's own environment is passed on (`PATH` aside).
//! - **Security**: `runAsNonRoot` is checked as the kubelet checks it
//!   (`runAsUser` 0, or none with LiteLLM's image, which runs as root, is
//!   `CreateContainerConfigError`); the process still runs as the test's
//!   own user, and capabilities, seccomp, privilege escalation and a
//!   read-only root file system are not enforced.
//! - **Volumes** from ConfigMaps and Secrets (and `emptyDir`) are written to
//!   a temporary directory at their `mountPath`; every absolute mount path
//!   named in `command`, `args` or an environment value is rewritten into
//!   that directory.
//! - **Ports**: each `containerPort` gets a free local port; an argument or
//!   environment value equal to the port number (or `--port=<n>`) is
//!   rewritten to it. Services get a stable local listener per port that
//!   forwards to a ready pod they select ([`Kubelet::url`]).
//! - **Probes**: startup, readiness and liveness probes (`httpGet`,
//!   `tcpSocket`) as a kubelet runs them, each after its
//!   `initialDelaySeconds` and every `periodSeconds`, with its thresholds.
//! - **Deployments** roll by their strategy, as the Deployment controller
//!   does: `Recreate` stops every old pod before a new one starts;
//!   `RollingUpdate` keeps at most `maxSurge` pods beyond `replicas` and at
//!   least `replicas - maxUnavailable` ready (defaults 25% and 25%). **Jobs** run one pod; `restartPolicy: OnFailure` restarts its
//!   container, `Never` starts a new pod, up to `backoffLimit` failures;
//!   exit code 0 completes the Job.
//! - Processes stop (SIGTERM to their process group, SIGKILL after the
//!   grace period, at most 10 s) when their pod goes: its Deployment or Job
//!   was deleted, scaled down or rolled. Dropping the kubelet stops all.
//!
//! Container output goes to `<dir>/pods/<pod>/<container>.log`; the
//! directory is kept when a test fails.

#![allow(dead_code)] // each test binary uses a different part of the support code

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Pod, PodSpec, PodTemplateSpec, Probe, Secret, Service,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

const FIELD_MANAGER: &str = "test-kubelet";
/// How often the kubelet looks at its objects and processes.
const TICK: Duration = Duration::from_millis(300);
/// At most this long between SIGTERM and SIGKILL.
const MAX_GRACE: Duration = Duration::from_secs(10);

/// Where the harness's LiteLLM installation is, and how images map onto it:
/// `tests/harness/litellm/image.sh` plays LiteLLM's image (its `litellm`
/// entrypoint, its Python, its migrations) from the harness's installation.
///
/// | image | command | runs |
/// |---|---|---|
/// | `…/litellm:<tag>` of the installed version ([`Images::pullable`]) | unset | the image's entrypoint, `image.sh litellm` with the container's `args` (the image's default `--port 4000` when unset); `--host 127.0.0.1` is added so pods listen on loopback only |
/// | `…/litellm:<tag>` of the installed version | `python litellm/proxy/prisma_migration.py` | the migration: every migration of `image.sh migrations-dir` not yet recorded in `_prisma_migrations`, in name order, applied with `psql` to `DATABASE_URL` and recorded there (what `prisma migrate deploy` does; the harness applies the same files). The URL is read as LiteLLM and Prisma read it: `schema=` becomes the search path (created if missing), `sslmode`/`sslrootcert` go to libpq, Prisma's pool parameters are dropped |
/// | `…/litellm:<any other tag>` | any | nothing: `ErrImagePull`, as a registry without the tag |
/// | anything else | given | `command` + `args` on the host, as given |
#[derive(Debug, Clone)]
pub struct Images {
    /// `tests/harness/litellm/image.sh`.
    pub image_sh: PathBuf,
    /// The harness's cache (`LITELLM_CROSSPLANE_CACHE`, else its default
    /// under this process's home), which pods, each with a home of its own,
    /// are given.
    pub cache: PathBuf,
    /// The LiteLLM version installed.
    pub version: String,
}

impl Images {
    /// The repository's LiteLLM harness as `tests/run.sh` installs it (its
    /// cache: `LITELLM_CROSSPLANE_CACHE`, else the harness's default), or
    /// `None` (skipped) when it is not installed.
    pub fn from_env() -> Option<Images> {
        let image_sh = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/harness/litellm/image.sh");
        let cache = std::env::var_os("LITELLM_CROSSPLANE_CACHE")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/litellm-crossplane"))
            })?;
        let output = std::process::Command::new(&image_sh)
            .env("LITELLM_CROSSPLANE_CACHE", &cache)
            .args([
                "python",
                "-c",
                "import importlib.metadata as m; print(m.version('litellm'))",
            ])
            .stdin(Stdio::null())
            .output();
        let version = match &output {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => String::new(),
        };
        if !version.is_empty() {
            return Some(Images {
                image_sh,
                cache,
                version,
            });
        }
        let why = match output {
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(err) => err.to_string(),
        };
        assert!(
            !super::k8s::harness_required(),
            "the test kubelet needs the LiteLLM harness installation ({}): {why}",
            image_sh.display()
        );
        eprintln!("skipped: no LiteLLM harness installation for the test kubelet");
        None
    }

    /// Whether the registry has `image` of LiteLLM: as a cluster pulls only
    /// tags that exist, the test kubelet runs only the tags LiteLLM
    /// publishes for the version installed (`v<V>`, `main-v<V>`, and their
    /// `-stable` and `-nightly` builds); any other tag, another version's
    /// or a moving one such as `main-stable`, cannot be pulled.
    fn pullable(&self, image: &str) -> Result<(), String> {
        let version = &self.version;
        let tag = match image.rsplit_once(':') {
            Some((_, tag)) if !tag.contains('/') => tag,
            _ => "latest",
        };
        let served = [
            format!("v{version}"),
            format!("main-v{version}"),
            format!("main-v{version}-stable"),
            format!("main-v{version}-nightly"),
            format!("v{version}-stable"),
        ];
        if served.iter().any(|t| t == tag) {
            Ok(())
        } else {
            Err(format!(
                "{image}: the test kubelet's registry has LiteLLM {version} only, as tags {}",
                served.join(", ")
            ))
        }
    }

    /// Whether `image` is LiteLLM's proxy image (any registry, any tag).
    fn is_litellm(image: &str) -> bool {
        let repository =
            image.rsplit_once(':').map_or(
                image,
                |(repo, tag)| {
                    if tag.contains('/') {
                        image
                    } else {
                        repo
                    }
                },
            );
        repository == "litellm" || repository.ends_with("/litellm")
    }
}

/// What a container runs as a local process.
#[derive(Debug, Clone)]
struct Program {
    program: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// A kubelet for one namespace; stops every process it started on drop.
pub struct Kubelet {
    shared: Arc<Shared>,
    task: Option<tokio::task::JoinHandle<()>>,
}

struct Shared {
    client: Client,
    namespace: String,
    dir: PathBuf,
    images: Images,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    pods: BTreeMap<String, PodRun>,
    /// `(service, port)` → its listener.
    services: BTreeMap<(String, i32), Forward>,
    /// Job uid → failures so far (`restartPolicy: Never` counts pods).
    job_failures: BTreeMap<String, i32>,
    /// The cluster network's proxies ([`Kubelet::cluster_network`]).
    network: Vec<tokio::task::JoinHandle<()>>,
}

struct Forward {
    local_port: u16,
    target: Arc<Mutex<Option<u16>>>,
    task: tokio::task::JoinHandle<()>,
    selector: BTreeMap<String, String>,
    target_port: IntOrString,
}

impl State {
    /// The newest ready pod `selector` matches, as `target_port`'s local port.
    fn endpoint(
        &self,
        selector: &BTreeMap<String, String>,
        target_port: &IntOrString,
    ) -> Option<u16> {
        let mut candidates: Vec<(Instant, u16)> = self
            .pods
            .values()
            .filter(|p| {
                !selector.is_empty()
                    && p.ready()
                    && selector.iter().all(|(k, v)| p.labels.get(k) == Some(v))
            })
            .filter_map(|p| p.local_port(target_port).map(|l| (p.created, l)))
            .collect();
        candidates.sort();
        candidates.last().map(|(_, l)| *l)
    }

    /// Points every Service at its current endpoints (a pod that stops
    /// leaves them before its processes get SIGTERM, as with EndpointSlices).
    fn retarget(&self) {
        for forward in self.services.values() {
            *forward.target.lock().unwrap() =
                self.endpoint(&forward.selector, &forward.target_port);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnerKind {
    Deployment,
    Job,
}

struct PodRun {
    name: String,
    owner_kind: OwnerKind,
    owner_name: String,
    owner_uid: String,
    template_hash: String,
    spec: PodSpec,
    labels: BTreeMap<String, String>,
    dir: PathBuf,
    /// Container port → local port, by port number and by name.
    ports: BTreeMap<i32, u16>,
    port_names: BTreeMap<String, i32>,
    init: Vec<ContainerRun>,
    containers: Vec<ContainerRun>,
    created: Instant,
    start_time: String,
    /// The API object exists.
    registered: bool,
    /// A Job's pod: its backoff limit, and its containers' failures.
    backoff_limit: Option<i32>,
    failures: i32,
    /// The last status written, to write only changes.
    written: Option<Value>,
    terminating: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Waiting { reason: String, message: String },
    Running { started_at: String },
    Terminated { exit_code: i32, finished_at: String },
}

struct ContainerRun {
    spec: Container,
    phase: Phase,
    child: Option<Child>,
    pgid: Option<i32>,
    restarts: i32,
    /// Earliest next start (crash-loop back-off).
    next_start: Option<Instant>,
    probes: Option<Arc<Mutex<ProbeState>>>,
    prober: Option<tokio::task::JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct ProbeState {
    started: bool,
    ready: bool,
    /// The liveness or startup probe failed past its threshold.
    kill: bool,
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        let mut groups = Vec::new();
        {
            let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
            for (_, forward) in std::mem::take(&mut state.services) {
                forward.task.abort();
            }
            for task in std::mem::take(&mut state.network) {
                task.abort();
            }
            for pod in state.pods.values_mut() {
                for container in pod.init.iter_mut().chain(pod.containers.iter_mut()) {
                    if let Some(prober) = container.prober.take() {
                        prober.abort();
                    }
                    if let Some(pgid) = container.pgid.take() {
                        groups.push(pgid);
                    }
                }
            }
        }
        stop_groups_blocking(&groups);
        if std::thread::panicking() {
            eprintln!(
                "test kubelet: pod logs kept in {}",
                self.shared.dir.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.shared.dir);
        }
    }
}

/// SIGTERM to every group, up to [`MAX_GRACE`] for them to go, then SIGKILL.
fn stop_groups_blocking(groups: &[i32]) {
    for pgid in groups {
        signal_group(*pgid, libc::SIGTERM);
    }
    let deadline = Instant::now() + MAX_GRACE;
    while Instant::now() < deadline && groups.iter().any(|g| group_alive(*g)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    for pgid in groups {
        if group_alive(*pgid) {
            signal_group(*pgid, libc::SIGKILL);
        }
    }
}

fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group this
    // kubelet created for the container (its leader's pid); no memory is
    // touched.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

fn now() -> String {
    format!("{:.0}", k8s_openapi::jiff::Timestamp::now())
}

fn short_hash(value: &impl serde::Serialize) -> String {
    let bytes = serde_json::to_vec(value).unwrap();
    Sha256::digest(&bytes)
        .iter()
        .take(5)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

impl Kubelet {
    /// Starts the kubelet for `namespace`, or `None` (test skipped) without
    /// the harness installation.
    pub fn start(client: Client, namespace: &str) -> Option<Kubelet> {
        let images = Images::from_env()?;
        let dir = std::env::temp_dir().join(format!("litellm-kubelet-{namespace}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("kubelet dir");
        let shared = Arc::new(Shared {
            client,
            namespace: namespace.to_string(),
            dir,
            images,
            state: Mutex::new(State::default()),
        });
        let looping = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                if let Err(err) = looping.sync().await {
                    eprintln!("test kubelet ({}): {err}", looping.namespace);
                }
                tokio::time::sleep(TICK).await;
            }
        });
        Some(Kubelet {
            shared,
            task: Some(task),
        })
    }

    /// The local URL of a Service endpoint `http(s)://<service>.<namespace>.svc:<port>`
    /// (cluster DNS, for the test), waiting up to 60 s for the Service.
    pub async fn url(&self, endpoint: &str) -> String {
        let parsed = url::Url::parse(endpoint).expect("an endpoint URL");
        let host = parsed.host_str().unwrap_or_default().to_string();
        let suffix = format!(".{}.svc", self.shared.namespace);
        let service = host
            .strip_suffix(&suffix)
            .unwrap_or_else(|| panic!("{endpoint} is not a Service of {}", self.shared.namespace))
            .to_string();
        let port = i32::from(parsed.port_or_known_default().unwrap_or(80));
        for _ in 0..600 {
            let local = {
                let state = self.shared.state.lock().unwrap();
                state
                    .services
                    .get(&(service.clone(), port))
                    .map(|f| f.local_port)
            };
            if let Some(local) = local {
                return format!(
                    "http://127.0.0.1:{local}{}",
                    parsed.path().trim_end_matches('/')
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("Service {service} port {port} never appeared");
    }

    /// The namespace's cluster network as an HTTP proxy (`HTTP_PROXY` of
    /// a process): a request for `http://<service>.<namespace>.svc[.cluster.local]:<port>/...`
    /// goes to a ready pod the Service selects, as cluster DNS and
    /// kube-proxy would take it; any other host is a 502 naming it (there
    /// is no such Service). Stops with the kubelet.
    pub async fn cluster_network(&self) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().unwrap();
        let shared = self.shared.clone();
        let forwarder = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let shared = shared.clone();
            let forwarder = forwarder.clone();
            async move { cluster_network_forward(&shared, &forwarder, request).await }
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        self.shared.state.lock().unwrap().network.push(task);
        format!("http://{address}")
    }

    /// The pods the kubelet runs, by name, with their labels and readiness.
    pub fn pods(&self) -> Vec<(String, BTreeMap<String, String>, bool)> {
        let state = self.shared.state.lock().unwrap();
        state
            .pods
            .values()
            .filter(|p| !p.terminating)
            .map(|p| (p.name.clone(), p.labels.clone(), p.ready()))
            .collect()
    }

    /// The directory a pod's files (volumes, logs) live in.
    pub fn pod_dir(&self, pod: &str) -> PathBuf {
        self.shared.dir.join("pods").join(pod)
    }
}

impl PodRun {
    fn ready(&self) -> bool {
        !self.terminating
            && self.init_done()
            && !self.containers.is_empty()
            && self.containers.iter().all(|c| c.ready())
    }

    fn init_done(&self) -> bool {
        self.init
            .iter()
            .all(|c| matches!(c.phase, Phase::Terminated { exit_code: 0, .. }))
    }

    fn local_port(&self, port: &IntOrString) -> Option<u16> {
        let number = match port {
            IntOrString::Int(n) => *n,
            IntOrString::String(name) => match name.parse::<i32>() {
                Ok(n) => n,
                Err(_) => *self.port_names.get(name)?,
            },
        };
        self.ports.get(&number).copied()
    }
}

impl ContainerRun {
    fn new(spec: Container) -> Self {
        ContainerRun {
            spec,
            phase: Phase::Waiting {
                reason: "ContainerCreating".into(),
                message: String::new(),
            },
            child: None,
            pgid: None,
            restarts: 0,
            next_start: None,
            probes: None,
            prober: None,
        }
    }

    fn ready(&self) -> bool {
        matches!(self.phase, Phase::Running { .. })
            && match &self.probes {
                None => true,
                Some(probes) => {
                    let probes = probes.lock().unwrap();
                    probes.ready
                }
            }
    }

    /// Stops the process (in the background) and its prober.
    fn stop(&mut self, grace: Duration) {
        if let Some(prober) = self.prober.take() {
            prober.abort();
        }
        self.probes = None;
        if let (Some(pgid), Some(mut child)) = (self.pgid.take(), self.child.take()) {
            tokio::spawn(async move {
                signal_group(pgid, libc::SIGTERM);
                if tokio::time::timeout(grace, child.wait()).await.is_err() {
                    signal_group(pgid, libc::SIGKILL);
                    let _ = child.wait().await;
                }
                // Whatever the leader left in its group.
                let deadline = Instant::now() + Duration::from_secs(2);
                while group_alive(pgid) && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                if group_alive(pgid) {
                    signal_group(pgid, libc::SIGKILL);
                }
            });
        }
    }
}

fn owner_of(meta: &kube::api::ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .as_ref()?
        .iter()
        .find(|o| o.controller == Some(true))
}

impl Shared {
    fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    async fn sync(self: &Arc<Self>) -> Result<(), kube::Error> {
        let deployments = self
            .api::<Deployment>()
            .list(&ListParams::default())
            .await?;
        let jobs = self.api::<Job>().list(&ListParams::default()).await?;
        let services = self.api::<Service>().list(&ListParams::default()).await?;

        let live_owners: BTreeSet<String> = deployments
            .items
            .iter()
            .filter_map(|d| d.uid())
            .chain(jobs.items.iter().filter_map(|j| j.uid()))
            .collect();

        // Pods whose owner is gone go with it.
        let orphans: Vec<String> = {
            let state = self.state.lock().unwrap();
            state
                .pods
                .values()
                .filter(|p| !live_owners.contains(&p.owner_uid))
                .map(|p| p.name.clone())
                .collect()
        };
        for pod in orphans {
            self.remove_pod(&pod).await;
        }

        for deployment in &deployments.items {
            self.sync_deployment(deployment).await?;
        }
        for job in &jobs.items {
            self.sync_job(job).await?;
        }
        self.run_pods().await;
        for deployment in &deployments.items {
            self.write_deployment_status(deployment).await?;
        }
        for job in &jobs.items {
            self.write_job_status(job).await?;
        }
        self.sync_services(&services.items).await;
        Ok(())
    }

    fn new_pod(
        &self,
        name: String,
        owner_kind: OwnerKind,
        owner_name: &str,
        owner_uid: &str,
        template_hash: String,
        template: &PodTemplateSpec,
    ) -> PodRun {
        let spec = template.spec.clone().unwrap_or_default();
        let mut labels = template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        if owner_kind == OwnerKind::Deployment {
            labels.insert("pod-template-hash".into(), template_hash.clone());
        }
        let mut ports = BTreeMap::new();
        let mut port_names = BTreeMap::new();
        for container in &spec.containers {
            for port in container.ports.iter().flatten() {
                ports.insert(port.container_port, free_port());
                if let Some(name) = &port.name {
                    port_names.insert(name.clone(), port.container_port);
                }
            }
        }
        let dir = self.dir.join("pods").join(&name);
        PodRun {
            name,
            owner_kind,
            owner_name: owner_name.to_string(),
            owner_uid: owner_uid.to_string(),
            template_hash,
            init: spec
                .init_containers
                .iter()
                .flatten()
                .cloned()
                .map(ContainerRun::new)
                .collect(),
            containers: spec
                .containers
                .iter()
                .cloned()
                .map(ContainerRun::new)
                .collect(),
            spec,
            labels,
            dir,
            ports,
            port_names,
            created: Instant::now(),
            start_time: now(),
            registered: false,
            backoff_limit: None,
            failures: 0,
            written: None,
            terminating: false,
        }
    }

    async fn register(&self, pod: &PodRun, owner: OwnerReference) {
        let object: Pod = serde_json::from_value(json!({
            "metadata": {
                "name": pod.name,
                "labels": pod.labels,
                "ownerReferences": [owner],
            },
            "spec": pod.spec,
        }))
        .unwrap();
        if let Err(err) = self
            .api::<Pod>()
            .create(&PostParams::default(), &object)
            .await
        {
            eprintln!("test kubelet: creating Pod {}: {err}", pod.name);
        }
    }

    async fn sync_deployment(&self, deployment: &Deployment) -> Result<(), kube::Error> {
        let spec = &deployment.spec;
        let name = deployment.name_any();
        let uid = deployment.uid().unwrap_or_default();
        let hash = short_hash(&spec.template);
        let replicas = spec.replicas.unwrap_or(1).max(0) as usize;
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: name.clone(),
            uid: uid.clone(),
            controller: Some(true),
            block_owner_deletion: None,
        };
        // As the Deployment controller rolls: Recreate stops every old pod
        // before a new one starts; RollingUpdate keeps at most maxSurge pods
        // beyond `replicas` and at least `replicas - maxUnavailable`
        // available (ready) while it replaces them.
        let strategy = spec.strategy.as_ref();
        let recreate = strategy.and_then(|s| s.type_.as_deref()) == Some("Recreate");
        let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
        let scaled = |value: Option<&IntOrString>, round_up: bool| -> usize {
            match value {
                None => {
                    (replicas * 25).div_ceil(100) * usize::from(round_up)
                        + (replicas * 25 / 100) * usize::from(!round_up)
                }
                Some(IntOrString::Int(n)) => (*n).max(0) as usize,
                Some(IntOrString::String(p)) => {
                    let percent: usize = p.trim_end_matches('%').parse().unwrap_or(25);
                    if round_up {
                        (replicas * percent).div_ceil(100)
                    } else {
                        replicas * percent / 100
                    }
                }
            }
        };
        let mut max_surge = scaled(rolling.and_then(|r| r.max_surge.as_ref()), true);
        let max_unavailable = scaled(rolling.and_then(|r| r.max_unavailable.as_ref()), false);
        if max_surge == 0 && max_unavailable == 0 {
            max_surge = 1; // the API server refuses both 0; as a safe reading
        }
        let (current, ready_new, old_ready, old_unready, old_terminating) = {
            let state = self.state.lock().unwrap();
            let all: Vec<&PodRun> = state.pods.values().filter(|p| p.owner_uid == uid).collect();
            let mine: Vec<&&PodRun> = all.iter().filter(|p| !p.terminating).collect();
            let current: Vec<String> = mine
                .iter()
                .filter(|p| p.template_hash == hash)
                .map(|p| p.name.clone())
                .collect();
            let ready_new = mine
                .iter()
                .filter(|p| p.template_hash == hash && p.ready())
                .count();
            let old = |ready: bool| -> Vec<String> {
                mine.iter()
                    .filter(|p| p.template_hash != hash && p.ready() == ready)
                    .map(|p| p.name.clone())
                    .collect()
            };
            let old_terminating = all.iter().any(|p| p.template_hash != hash && p.terminating);
            (current, ready_new, old(true), old(false), old_terminating)
        };
        let old_count = old_ready.len() + old_unready.len();
        // Scale up the current template, within the strategy.
        let wanted = replicas.saturating_sub(current.len());
        let to_start = if recreate {
            if old_count > 0 || old_terminating {
                0
            } else {
                wanted
            }
        } else {
            wanted.min((replicas + max_surge).saturating_sub(current.len() + old_count))
        };
        for _ in 0..to_start {
            let pod_name = format!("{name}-{hash}-{}", &super::k8s::unique_suffix()[..5]);
            let pod = self.new_pod(
                pod_name.clone(),
                OwnerKind::Deployment,
                &name,
                &uid,
                hash.clone(),
                &spec.template,
            );
            self.register(&pod, owner.clone()).await;
            let mut state = self.state.lock().unwrap();
            let mut pod = pod;
            pod.registered = true;
            state.pods.insert(pod_name, pod);
        }
        // Scale down: the newest go first.
        if current.len() > replicas {
            let mut newest: Vec<(Instant, String)> = {
                let state = self.state.lock().unwrap();
                current
                    .iter()
                    .filter_map(|n| state.pods.get(n).map(|p| (p.created, n.clone())))
                    .collect()
            };
            newest.sort();
            for (_, pod) in newest.into_iter().rev().take(current.len() - replicas) {
                self.remove_pod(&pod).await;
            }
        }
        // The old template's pods: all at once for Recreate; else the
        // unavailable ones, then the ready ones as far as availability
        // allows.
        if recreate {
            for pod in old_ready.iter().chain(&old_unready) {
                self.remove_pod(pod).await;
            }
        } else {
            for pod in &old_unready {
                self.remove_pod(pod).await;
            }
            let available = ready_new + old_ready.len();
            let removable = available.saturating_sub(replicas.saturating_sub(max_unavailable));
            for pod in old_ready.iter().take(removable) {
                self.remove_pod(pod).await;
            }
        }
        Ok(())
    }

    async fn sync_job(&self, job: &Job) -> Result<(), kube::Error> {
        let Some(spec) = job.spec.as_ref() else {
            return Ok(());
        };
        if job_finished(job) {
            return Ok(());
        }
        let name = job.name_any();
        let uid = job.uid().unwrap_or_default();
        let backoff_limit = spec.backoff_limit.unwrap_or(6);
        let restart_never = spec
            .template
            .spec
            .as_ref()
            .and_then(|s| s.restart_policy.as_deref())
            == Some("Never");
        // With `restartPolicy: Never` a failed pod is done: counted, gone,
        // and replaced below while the backoff limit allows.
        let failed_pods: Vec<(String, i32)> = {
            let state = self.state.lock().unwrap();
            state
                .pods
                .values()
                .filter(|p| p.owner_uid == uid && !p.terminating && restart_never)
                .filter(|p| {
                    p.containers
                        .iter()
                        .all(|c| matches!(c.phase, Phase::Terminated { .. }))
                        && p.failures > 0
                })
                .map(|p| (p.name.clone(), p.failures))
                .collect()
        };
        for (pod, failures) in failed_pods {
            *self
                .state
                .lock()
                .unwrap()
                .job_failures
                .entry(uid.clone())
                .or_default() += failures;
            self.remove_pod(&pod).await;
        }
        let (running, failures) = {
            let state = self.state.lock().unwrap();
            let running = state
                .pods
                .values()
                .any(|p| p.owner_uid == uid && !p.terminating);
            (running, state.job_failures.get(&uid).copied().unwrap_or(0))
        };
        if running || failures > backoff_limit {
            return Ok(());
        }
        let pod_name = format!("{name}-{}", &super::k8s::unique_suffix()[..5]);
        let mut pod = self.new_pod(
            pod_name.clone(),
            OwnerKind::Job,
            &name,
            &uid,
            short_hash(&spec.template),
            &spec.template,
        );
        pod.backoff_limit = Some(backoff_limit);
        pod.failures = 0;
        let owner = OwnerReference {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            name,
            uid,
            controller: Some(true),
            block_owner_deletion: None,
        };
        self.register(&pod, owner).await;
        pod.registered = true;
        self.state.lock().unwrap().pods.insert(pod_name, pod);
        Ok(())
    }

    /// Stops a pod's processes and deletes its API object.
    async fn remove_pod(&self, name: &str) {
        let grace = {
            let mut state = self.state.lock().unwrap();
            let Some(pod) = state.pods.get_mut(name) else {
                return;
            };
            if pod.terminating {
                return;
            }
            pod.terminating = true;
            let grace = pod
                .spec
                .termination_grace_period_seconds
                .map(|s| Duration::from_secs(s.max(0) as u64))
                .unwrap_or(Duration::from_secs(30))
                .min(MAX_GRACE);
            // Out of the Services first, then stopped.
            state.retarget();
            let pod = state.pods.get_mut(name).expect("still there");
            for container in pod.init.iter_mut().chain(pod.containers.iter_mut()) {
                container.stop(grace);
            }
            grace
        };
        let _ = grace;
        match self
            .api::<Pod>()
            .delete(name, &DeleteParams::default())
            .await
        {
            Ok(_) | Err(kube::Error::Api(_)) => {}
            Err(err) => eprintln!("test kubelet: deleting Pod {name}: {err}"),
        }
        self.state.lock().unwrap().pods.remove(name);
    }

    /// Starts, watches and restarts the containers of every pod, and writes
    /// the pods' status.
    async fn run_pods(self: &Arc<Self>) {
        let names: Vec<String> = self.state.lock().unwrap().pods.keys().cloned().collect();
        for name in names {
            // Resolve what a start needs (env, volumes) outside the lock.
            let needs_start = {
                let mut state = self.state.lock().unwrap();
                let Some(pod) = state.pods.get_mut(&name) else {
                    continue;
                };
                if pod.terminating {
                    continue;
                }
                self.reap(pod);
                next_to_start(pod)
            };
            if let Some((init, index)) = needs_start {
                self.start_container(&name, init, index).await;
            }
            self.write_pod_status(&name).await;
        }
    }

    /// Notes exited processes and liveness kills; applies restart policy.
    fn reap(&self, pod: &mut PodRun) {
        let policy = pod
            .spec
            .restart_policy
            .clone()
            .unwrap_or_else(|| "Always".into());
        let job = pod.owner_kind == OwnerKind::Job;
        let mut failed = 0;
        let pod_name = pod.name.clone();
        let backoff_limit = pod.backoff_limit;
        let failures_before = pod.failures;
        for (is_init, container) in pod
            .init
            .iter_mut()
            .map(|c| (true, c))
            .chain(pod.containers.iter_mut().map(|c| (false, c)))
        {
            let killed = container
                .probes
                .as_ref()
                .is_some_and(|p| p.lock().unwrap().kill);
            if killed {
                eprintln!(
                    "test kubelet: {pod_name}/{}: probe failed past its threshold, restarting",
                    container.spec.name
                );
                container.stop(MAX_GRACE);
                container.phase = Phase::Terminated {
                    exit_code: 137,
                    finished_at: now(),
                };
            }
            let exited = container
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                let code = status.code().unwrap_or(128 + 9);
                eprintln!(
                    "test kubelet: {pod_name}/{} exited with {code}",
                    container.spec.name
                );
                container.child = None;
                if let Some(prober) = container.prober.take() {
                    prober.abort();
                }
                container.probes = None;
                container.phase = Phase::Terminated {
                    exit_code: code,
                    finished_at: now(),
                };
            }
            if let Phase::Terminated { exit_code, .. } = container.phase {
                let restart = match policy.as_str() {
                    "Never" => false,
                    "OnFailure" => exit_code != 0,
                    _ => !(is_init && exit_code == 0),
                };
                if exit_code != 0 && job && (exited.is_some() || killed) {
                    failed += 1;
                }
                // A Job stops restarting past its backoff limit.
                let exhausted = backoff_limit.is_some_and(|limit| failures_before + failed > limit);
                if restart
                    && !exhausted
                    && container.next_start.is_none()
                    && container.child.is_none()
                {
                    container.restarts += 1;
                    let backoff = Duration::from_secs(1 << container.restarts.min(3) as u64);
                    container.next_start = Some(Instant::now() + backoff);
                }
            }
        }
        pod.failures += failed;
    }

    async fn start_container(self: &Arc<Self>, pod_name: &str, init: bool, index: usize) {
        let (container, pod_dir, ports, port_names, mounts_ok) = {
            let state = self.state.lock().unwrap();
            let Some(pod) = state.pods.get(pod_name) else {
                return;
            };
            let list = if init { &pod.init } else { &pod.containers };
            (
                list[index].spec.clone(),
                pod.dir.clone(),
                pod.ports.clone(),
                pod.port_names.clone(),
                pod.spec.clone(),
            )
        };
        let pod_spec = mounts_ok;
        let prepared = self
            .prepare(pod_name, &pod_spec, &container, &pod_dir, &ports)
            .await;
        let program = match prepared {
            Ok(program) => program,
            Err((reason, message)) => {
                let mut state = self.state.lock().unwrap();
                if let Some(pod) = state.pods.get_mut(pod_name) {
                    let list = if init {
                        &mut pod.init
                    } else {
                        &mut pod.containers
                    };
                    list[index].phase = Phase::Waiting { reason, message };
                    list[index].next_start = Some(Instant::now() + Duration::from_secs(1));
                }
                return;
            }
        };
        std::fs::create_dir_all(&pod_dir).expect("pod dir");
        let log_path = pod_dir.join(format!("{}.log", container.name));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("container log");
        let mut command = Command::new(&program.program);
        command
            .args(&program.args)
            .env_clear()
            .envs(program.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&pod_dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .process_group(0)
            .kill_on_drop(false);
        // SAFETY: only async-signal-safe prctl(2) between fork and exec: the
        // container dies with the test if the test process is killed.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let spawned = command.spawn();
        let mut state = self.state.lock().unwrap();
        let Some(pod) = state.pods.get_mut(pod_name) else {
            return;
        };
        let terminating = pod.terminating;
        let list = if init {
            &mut pod.init
        } else {
            &mut pod.containers
        };
        let run = &mut list[index];
        run.next_start = None;
        match spawned {
            Ok(child) => {
                let pid = child.id().map(|p| p as i32);
                eprintln!(
                    "test kubelet: started {pod_name}/{} (pid {}, log {})",
                    container.name,
                    pid.unwrap_or(0),
                    log_path.display()
                );
                run.child = Some(child);
                run.pgid = pid;
                run.phase = Phase::Running { started_at: now() };
                if terminating {
                    run.stop(Duration::from_secs(1));
                    return;
                }
                if !init {
                    let probes = Arc::new(Mutex::new(ProbeState::default()));
                    run.probes = Some(probes.clone());
                    run.prober = Some(tokio::spawn(probe_loop(
                        container.clone(),
                        ports.clone(),
                        port_names.clone(),
                        probes,
                    )));
                }
            }
            Err(err) => {
                run.phase = Phase::Waiting {
                    reason: "RunContainerError".into(),
                    message: format!("{}: {err}", program.program),
                };
                run.next_start = Some(Instant::now() + Duration::from_secs(2));
            }
        }
    }

    /// What the container runs, with its environment and volumes in place;
    /// or the reason it cannot start yet.
    async fn prepare(
        &self,
        pod_name: &str,
        pod: &PodSpec,
        container: &Container,
        pod_dir: &Path,
        ports: &BTreeMap<i32, u16>,
    ) -> Result<Program, (String, String)> {
        let config_error = |message: String| ("CreateContainerConfigError".to_string(), message);
        if let Some(message) = non_root_refusal(pod, container) {
            return Err(config_error(message));
        }
        let root = pod_dir.join("fs");
        // Volumes of this container's mounts.
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        for mount in container.volume_mounts.iter().flatten() {
            let volume = pod
                .volumes
                .iter()
                .flatten()
                .find(|v| v.name == mount.name)
                .ok_or_else(|| config_error(format!("no volume {}", mount.name)))?;
            let target = root.join(mount.mount_path.trim_start_matches('/'));
            let files: BTreeMap<String, Vec<u8>> = if let Some(source) = &volume.config_map {
                let map = self.api::<ConfigMap>().get_opt(&source.name).await;
                let map = match map {
                    Ok(Some(map)) => map,
                    _ if source.optional == Some(true) => ConfigMap::default(),
                    _ => {
                        return Err(config_error(format!(
                            "configmap {:?} not found",
                            source.name
                        )))
                    }
                };
                let mut data: BTreeMap<String, Vec<u8>> = map
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, v.into_bytes()))
                    .collect();
                for (k, v) in map.binary_data.unwrap_or_default() {
                    data.insert(k, v.0);
                }
                select_items(data, source.items.as_deref())
            } else if let Some(source) = &volume.secret {
                let name = source.secret_name.clone().unwrap_or_default();
                let secret = match self.api::<Secret>().get_opt(&name).await {
                    Ok(Some(secret)) => secret,
                    _ if source.optional == Some(true) => Secret::default(),
                    _ => return Err(config_error(format!("secret {name:?} not found"))),
                };
                let data = secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, v.0))
                    .collect();
                select_items(data, source.items.as_deref())
            } else if volume.empty_dir.is_some() {
                BTreeMap::new()
            } else {
                return Err(config_error(format!(
                    "volume {} is of a kind the test kubelet does not mount",
                    volume.name
                )));
            };
            std::fs::create_dir_all(&target).expect("mount dir");
            match &mount.sub_path {
                Some(sub) if !sub.is_empty() => {
                    let content = files.get(sub).cloned().unwrap_or_default();
                    let _ = std::fs::remove_dir(&target);
                    std::fs::write(&target, content).expect("subPath file");
                }
                _ => {
                    for (file, content) in files {
                        let path = target.join(&file);
                        if let Some(parent) = path.parent() {
                            std::fs::create_dir_all(parent).expect("volume dir");
                        }
                        std::fs::write(&path, content).expect("volume file");
                    }
                }
            }
            mounts.push((
                mount.mount_path.trim_end_matches('/').to_string(),
                target.clone(),
            ));
        }
        // Longest mount path first, so nested mounts win.
        mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));

        // Environment, in order, with $(VAR) expansion.
        let mut env: Vec<(String, String)> = Vec::new();
        for from in container.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            if let Some(source) = &from.secret_ref {
                match self.api::<Secret>().get_opt(&source.name).await {
                    Ok(Some(secret)) => {
                        for (k, v) in secret.data.unwrap_or_default() {
                            env.push((
                                format!("{prefix}{k}"),
                                String::from_utf8_lossy(&v.0).into(),
                            ));
                        }
                    }
                    _ if source.optional == Some(true) => {}
                    _ => return Err(config_error(format!("secret {:?} not found", source.name))),
                }
            }
            if let Some(source) = &from.config_map_ref {
                match self.api::<ConfigMap>().get_opt(&source.name).await {
                    Ok(Some(map)) => {
                        for (k, v) in map.data.unwrap_or_default() {
                            env.push((format!("{prefix}{k}"), v));
                        }
                    }
                    _ if source.optional == Some(true) => {}
                    _ => {
                        return Err(config_error(format!(
                            "configmap {:?} not found",
                            source.name
                        )))
                    }
                }
            }
        }
        for var in container.env.iter().flatten() {
            let value = if let Some(value) = &var.value {
                expand(value, &env)
            } else if let Some(source) = &var.value_from {
                if let Some(selector) = &source.secret_key_ref {
                    let secret = self
                        .api::<Secret>()
                        .get_opt(&selector.name)
                        .await
                        .ok()
                        .flatten();
                    match secret.and_then(|s| s.data?.remove(&selector.key)) {
                        Some(bytes) => String::from_utf8_lossy(&bytes.0).into_owned(),
                        None if selector.optional == Some(true) => continue,
                        None => {
                            return Err(config_error(format!(
                                "secret {:?} or its key {:?} not found (env {})",
                                selector.name, selector.key, var.name
                            )))
                        }
                    }
                } else if let Some(selector) = &source.config_map_key_ref {
                    let map = self
                        .api::<ConfigMap>()
                        .get_opt(&selector.name)
                        .await
                        .ok()
                        .flatten();
                    match map.and_then(|m| m.data?.remove(&selector.key)) {
                        Some(value) => value,
                        None if selector.optional == Some(true) => continue,
                        None => {
                            return Err(config_error(format!(
                                "configmap {:?} or its key {:?} not found (env {})",
                                selector.name, selector.key, var.name
                            )))
                        }
                    }
                } else if let Some(field) = &source.field_ref {
                    match field.field_path.as_str() {
                        "metadata.name" => pod_name.to_string(),
                        "metadata.namespace" => self.namespace.clone(),
                        "status.podIP" | "status.hostIP" => "127.0.0.1".to_string(),
                        other => {
                            return Err(config_error(format!(
                                "fieldRef {other} is not supported by the test kubelet"
                            )))
                        }
                    }
                } else {
                    return Err(config_error(format!(
                        "env {}: only secretKeyRef, configMapKeyRef and fieldRef are supported",
                        var.name
                    )));
                }
            } else {
                String::new()
            };
            env.retain(|(k, _)| *k != var.name);
            env.push((var.name.clone(), value));
        }

        let rewrite = |value: &str| -> String {
            let mut out = value.to_string();
            for (path, host) in &mounts {
                out = out.replace(path.as_str(), &host.to_string_lossy());
            }
            out
        };
        let port_arg = |value: &str| -> String {
            for (container_port, local) in ports {
                let p = container_port.to_string();
                if value == p {
                    return local.to_string();
                }
                if let Some(rest) = value.strip_suffix(&p) {
                    if rest.ends_with("--port=") || rest.ends_with("-p=") {
                        return format!("{rest}{local}");
                    }
                }
            }
            value.to_string()
        };
        let env: Vec<(String, String)> = env
            .into_iter()
            .map(|(k, v)| (k, port_arg(&rewrite(&v))))
            .collect();
        let command: Option<Vec<String>> = container.command.as_ref().map(|c| {
            c.iter()
                .map(|a| port_arg(&rewrite(&expand(a, &env))))
                .collect()
        });
        let args: Option<Vec<String>> = container.args.as_ref().map(|c| {
            c.iter()
                .map(|a| port_arg(&rewrite(&expand(a, &env))))
                .collect()
        });

        let home = pod_dir.join("home");
        std::fs::create_dir_all(&home).expect("pod home");
        let mut base = vec![
            (
                "PATH".to_string(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            ),
            ("HOME".to_string(), home.to_string_lossy().into_owned()),
            ("HOSTNAME".to_string(), pod_name.to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
        ];
        let image = container.image.clone().unwrap_or_default();
        if Images::is_litellm(&image) {
            self.images
                .pullable(&image)
                .map_err(|message| ("ErrImagePull".to_string(), message))?;
            base.push((
                "LITELLM_CROSSPLANE_CACHE".to_string(),
                self.images.cache.to_string_lossy().into_owned(),
            ));
            base.extend(env);
            let image_sh = self.images.image_sh.to_string_lossy().into_owned();
            match command.as_deref() {
                None => {
                    let mut args =
                        args.unwrap_or_else(|| vec!["--port".to_string(), port_arg("4000")]);
                    if !args
                        .iter()
                        .any(|a| a == "--host" || a.starts_with("--host="))
                    {
                        args.extend(["--host".to_string(), "127.0.0.1".to_string()]);
                    }
                    let mut all = vec![image_sh, "litellm".to_string()];
                    all.extend(args);
                    Ok(Program {
                        program: "bash".into(),
                        args: all,
                        env: base,
                    })
                }
                Some([python, script])
                    if (python == "python" || python == "python3")
                        && script.trim_start_matches("./").trim_start_matches("/app/")
                            == "litellm/proxy/prisma_migration.py" =>
                {
                    let url = base
                        .iter()
                        .rev()
                        .find(|(k, _)| k == "DATABASE_URL")
                        .map(|(_, v)| v.clone());
                    let Some(url) = url else {
                        // As the entrypoint fails without a database.
                        return Ok(Program {
                            program: "sh".into(),
                            args: vec![
                                "-c".into(),
                                "echo 'prisma_migration: DATABASE_URL is not set' >&2; exit 1"
                                    .into(),
                            ],
                            env: base,
                        });
                    };
                    let (libpq_url, schema) = match libpq_of(&url) {
                        Ok(pair) => pair,
                        Err(err) => {
                            return Ok(Program {
                                program: "sh".into(),
                                args: vec![
                                    "-c".into(),
                                    format!(
                                        "echo 'prisma_migration: DATABASE_URL: {err}' >&2; exit 1"
                                    ),
                                ],
                                env: base,
                            })
                        }
                    };
                    base.retain(|(k, _)| k != "KUBELET_PG_URL" && k != "KUBELET_PG_SCHEMA");
                    base.push(("KUBELET_PG_URL".into(), libpq_url));
                    base.push(("KUBELET_PG_SCHEMA".into(), schema.unwrap_or_default()));
                    Ok(Program {
                        program: "bash".into(),
                        args: vec!["-c".into(), MIGRATE.to_string(), image_sh],
                        env: base,
                    })
                }
                Some(other) => Err((
                    "ErrImageNotMapped".to_string(),
                    format!("the test kubelet has no mapping for {image} with command {other:?}"),
                )),
            }
        } else {
            base.extend(env);
            let mut all = command.unwrap_or_default();
            all.extend(args.unwrap_or_default());
            if all.is_empty() {
                return Err((
                    "ErrImageNotMapped".to_string(),
                    format!(
                        "{image} has no command and the test kubelet does not know its entrypoint"
                    ),
                ));
            }
            let program = all.remove(0);
            Ok(Program {
                program,
                args: all,
                env: base,
            })
        }
    }

    async fn write_pod_status(&self, name: &str) {
        let status = {
            let state = self.state.lock().unwrap();
            let Some(pod) = state.pods.get(name) else {
                return;
            };
            if pod.terminating || !pod.registered {
                return;
            }
            let status = pod_status(pod);
            if pod.written.as_ref() == Some(&status) {
                return;
            }
            status
        };
        let patch = json!({"apiVersion": "v1", "kind": "Pod", "status": status});
        match self
            .api::<Pod>()
            .patch_status(
                name,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await
        {
            Ok(_) => {
                let mut state = self.state.lock().unwrap();
                if let Some(pod) = state.pods.get_mut(name) {
                    pod.written = Some(status);
                }
            }
            Err(err) => eprintln!("test kubelet: Pod {name} status: {err}"),
        }
    }

    async fn write_deployment_status(&self, deployment: &Deployment) -> Result<(), kube::Error> {
        let spec = &deployment.spec;
        let uid = deployment.uid().unwrap_or_default();
        let hash = short_hash(&spec.template);
        let wanted = spec.replicas.unwrap_or(1);
        let (total, updated, ready) = {
            let state = self.state.lock().unwrap();
            let mine: Vec<&PodRun> = state
                .pods
                .values()
                .filter(|p| p.owner_uid == uid && !p.terminating)
                .collect();
            (
                mine.len() as i32,
                mine.iter().filter(|p| p.template_hash == hash).count() as i32,
                mine.iter().filter(|p| p.ready()).count() as i32,
            )
        };
        let available = ready >= wanted;
        let progressing = updated >= wanted && total == updated;
        let mut status = json!({
            "observedGeneration": deployment.metadata.generation,
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": if available { "True" } else { "False" },
                 "reason": if available { "MinimumReplicasAvailable" } else { "MinimumReplicasUnavailable" }},
                {"type": "Progressing", "status": "True",
                 "reason": if progressing { "NewReplicaSetAvailable" } else { "ReplicaSetUpdated" }},
            ],
        });
        if total - ready > 0 {
            status["unavailableReplicas"] = json!(total - ready);
        }
        let current = serde_json::to_value(&deployment.status).unwrap_or(Value::Null);
        if same_status(&current, &status) {
            return Ok(());
        }
        let patch = json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": status});
        self.api::<Deployment>()
            .patch_status(
                &deployment.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await?;
        Ok(())
    }

    async fn write_job_status(&self, job: &Job) -> Result<(), kube::Error> {
        if job_finished(job) {
            return Ok(());
        }
        let uid = job.uid().unwrap_or_default();
        let backoff_limit = job.spec.as_ref().and_then(|s| s.backoff_limit).unwrap_or(6);
        let (active, succeeded, failed, start) = {
            let state = self.state.lock().unwrap();
            let mut active = 0;
            let mut succeeded = 0;
            let mut failed = state.job_failures.get(&uid).copied().unwrap_or(0);
            let mut start = None;
            for pod in state
                .pods
                .values()
                .filter(|p| p.owner_uid == uid && !p.terminating)
            {
                start = Some(pod.start_time.clone());
                failed += pod.failures;
                if pod
                    .containers
                    .iter()
                    .all(|c| matches!(c.phase, Phase::Terminated { exit_code: 0, .. }))
                {
                    succeeded += 1;
                } else {
                    active += 1;
                }
            }
            (active, succeeded, failed, start)
        };
        let now = now();
        let start = job
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map(|t| format!("{:.0}", t.0))
            .or(start);
        let mut status = json!({"active": active, "failed": failed, "succeeded": succeeded});
        if let Some(start) = start {
            status["startTime"] = json!(start);
        }
        if succeeded > 0 {
            status["active"] = json!(0);
            status["completionTime"] = json!(now);
            status["conditions"] = json!([
                {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                {"type": "Complete", "status": "True", "lastTransitionTime": now},
            ]);
        } else if failed > backoff_limit {
            status["active"] = json!(0);
            status["conditions"] = json!([
                {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "lastTransitionTime": now},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "lastTransitionTime": now},
            ]);
        }
        let current = serde_json::to_value(&job.status).unwrap_or(Value::Null);
        if same_status(&current, &status) {
            return Ok(());
        }
        let patch = json!({"apiVersion": "batch/v1", "kind": "Job", "status": status});
        self.api::<Job>()
            .patch_status(
                &job.name_any(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&patch),
            )
            .await?;
        if succeeded > 0 || failed > backoff_limit {
            // Finished: the pod stays (as a completed pod does), its
            // processes are gone already.
            eprintln!(
                "test kubelet: Job {} {}",
                job.name_any(),
                if succeeded > 0 { "complete" } else { "failed" }
            );
        }
        Ok(())
    }

    /// A listener per Service port, forwarding to a ready pod it selects.
    async fn sync_services(&self, services: &[Service]) {
        let mut seen = BTreeSet::new();
        for service in services {
            let name = service.name_any();
            let Some(spec) = service.spec.as_ref() else {
                continue;
            };
            let selector = spec.selector.clone().unwrap_or_default();
            for port in spec.ports.iter().flatten() {
                let key = (name.clone(), port.port);
                seen.insert(key.clone());
                let target_port = port
                    .target_port
                    .clone()
                    .unwrap_or(IntOrString::Int(port.port));
                let (target, known) = {
                    let state = self.state.lock().unwrap();
                    let target = state.endpoint(&selector, &target_port);
                    let known = match state.services.get(&key) {
                        Some(forward) => {
                            *forward.target.lock().unwrap() = target;
                            true
                        }
                        None => false,
                    };
                    (target, known)
                };
                if known {
                    continue;
                }
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("listener");
                let local_port = listener.local_addr().unwrap().port();
                let shared_target = Arc::new(Mutex::new(target));
                let task = tokio::spawn(forward(listener, shared_target.clone()));
                self.state.lock().unwrap().services.insert(
                    key,
                    Forward {
                        local_port,
                        target: shared_target,
                        task,
                        selector: selector.clone(),
                        target_port: target_port.clone(),
                    },
                );
            }
        }
        let mut state = self.state.lock().unwrap();
        let gone: Vec<_> = state
            .services
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            if let Some(forward) = state.services.remove(&key) {
                forward.task.abort();
            }
        }
    }
}

/// The Prisma connection URL as libpq reads it, and its `schema=`.
fn libpq_of(url: &str) -> Result<(String, Option<String>), String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    let mut schema = None;
    let mut kept: Vec<(String, String)> = Vec::new();
    for (key, value) in parsed.query_pairs() {
        match key.as_ref() {
            "schema" => schema = Some(value.into_owned()),
            "sslmode" | "sslrootcert" | "connect_timeout" | "application_name" | "options" => {
                kept.push((key.into_owned(), value.into_owned()))
            }
            // Prisma's dialect for a CA file.
            "sslcert" => kept.push(("sslrootcert".into(), value.into_owned())),
            // Prisma's pool and TLS-acceptance parameters: not libpq's.
            _ => {}
        }
    }
    if kept.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(kept);
    }
    Ok((parsed.to_string(), schema))
}

/// The migration mapping (see [`Images`]): `$0` is `image.sh`, the URL and
/// schema come from the kubelet.
const MIGRATE: &str = r#"set -euo pipefail
export PGOPTIONS='-c client_min_messages=warning'
if [ -n "$KUBELET_PG_SCHEMA" ]; then
  psql -X -q -v ON_ERROR_STOP=1 -v schema="$KUBELET_PG_SCHEMA" "$KUBELET_PG_URL" <<'SQL'
CREATE SCHEMA IF NOT EXISTS :"schema";
SQL
  export PGOPTIONS="$PGOPTIONS -c search_path=$KUBELET_PG_SCHEMA"
fi
mig=$("$0" migrations-dir)
psql -X -q -v ON_ERROR_STOP=1 "$KUBELET_PG_URL" <<'SQL'
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" varchar(36) PRIMARY KEY, "checksum" varchar(64) NOT NULL, "finished_at" timestamptz,
  "migration_name" varchar(255) NOT NULL, "logs" text, "rolled_back_at" timestamptz,
  "started_at" timestamptz NOT NULL DEFAULT now(), "applied_steps_count" integer NOT NULL DEFAULT 0);
SQL
# One session for the whole run, under an advisory lock: each migration is
# checked and, if not yet recorded, applied and recorded in one
# transaction, so runners that overlap (a Job's retried pod, two images'
# Jobs) neither apply a migration twice nor leave one applied unrecorded.
script=$(mktemp)
{
  echo "SELECT pg_advisory_lock(7305462);"
  while IFS= read -r -d '' d; do
    f="$mig/$d/migration.sql"
    sum=$(sha256sum "$f" | cut -c1-64)
    printf "SELECT NOT EXISTS (SELECT 1 FROM \"_prisma_migrations\" WHERE migration_name = '%s' AND finished_at IS NOT NULL AND rolled_back_at IS NULL) AS todo \\gset\n" "$d"
    # CREATE INDEX CONCURRENTLY cannot run in a transaction (the lock
    # still keeps other runners out).
    tx=1; grep -qi 'INDEX CONCURRENTLY' "$f" && tx=0
    echo '\if :todo'
    [ $tx = 1 ] && echo 'BEGIN;'
    printf "\\\\i '%s'\n" "$f"
    printf "INSERT INTO \"_prisma_migrations\" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES (md5(random()::text || clock_timestamp()::text)::uuid::text, '%s', now(), '%s', 1);\n" "$sum" "$d"
    [ $tx = 1 ] && echo 'COMMIT;'
    printf '\\echo applied %s\n' "$d"
    echo '\endif'
  done < <(find "$mig" -mindepth 1 -maxdepth 1 -type d -printf '%f\0' | LC_ALL=C sort -z)
} > "$script"
out=$(psql -X -q -v ON_ERROR_STOP=1 -f "$script" "$KUBELET_PG_URL")
rm -f "$script"
n=$(printf '%s\n' "$out" | grep -c '^applied ' || true)
echo "prisma_migration (test kubelet): applied $n migrations"
"#;

/// The kubelet's `runAsNonRoot` check: a container that must run as non-root
/// but would run as root (its `runAsUser`, else the pod's, else the
/// image's user: root for LiteLLM's image, which sets no other user) is
/// refused with the kubelet's message. What runs is still this process's
/// user: the test kubelet checks the settings, it does not switch users.
fn non_root_refusal(pod: &PodSpec, container: &Container) -> Option<String> {
    let sc = container.security_context.as_ref();
    let pod_sc = pod.security_context.as_ref();
    let non_root = sc
        .and_then(|s| s.run_as_non_root)
        .or_else(|| pod_sc.and_then(|s| s.run_as_non_root))
        .unwrap_or(false);
    let user = sc
        .and_then(|s| s.run_as_user)
        .or_else(|| pod_sc.and_then(|s| s.run_as_user));
    let image_runs_as_root = container.image.as_deref().is_some_and(Images::is_litellm);
    match user {
        Some(0) if non_root => Some(
            "container's runAsUser breaks non-root policy (runAsNonRoot: true, runAsUser: 0)"
                .to_string(),
        ),
        None if non_root && image_runs_as_root => {
            Some("container has runAsNonRoot and image will run as root".to_string())
        }
        _ => None,
    }
}

fn select_items(
    data: BTreeMap<String, Vec<u8>>,
    items: Option<&[k8s_openapi::api::core::v1::KeyToPath]>,
) -> BTreeMap<String, Vec<u8>> {
    match items {
        None => data,
        Some(items) => items
            .iter()
            .filter_map(|item| Some((item.path.clone(), data.get(&item.key)?.clone())))
            .collect(),
    }
}

/// `$(VAR)` references to variables defined before, as Kubernetes expands
/// them; `$$(VAR)` escapes.
fn expand(value: &str, env: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(escaped) = tail.strip_prefix("$$") {
            out.push('$');
            rest = escaped;
        } else if let Some(open) = tail.strip_prefix("$(") {
            match open.find(')') {
                Some(close) => {
                    let name = &open[..close];
                    match env.iter().rev().find(|(k, _)| k == name) {
                        Some((_, v)) => out.push_str(v),
                        None => out.push_str(&tail[..close + 3]),
                    }
                    rest = &open[close + 1..];
                }
                None => {
                    out.push_str(tail);
                    rest = "";
                }
            }
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

fn job_finished(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
        })
}

/// Whether `current` already holds every field of `wanted` (timestamps of
/// conditions aside).
fn same_status(current: &Value, wanted: &Value) -> bool {
    fn strip(value: &Value) -> Value {
        let mut value = value.clone();
        if let Some(conditions) = value.get_mut("conditions").and_then(Value::as_array_mut) {
            for c in conditions {
                if let Some(c) = c.as_object_mut() {
                    c.remove("lastTransitionTime");
                    c.remove("lastUpdateTime");
                    c.remove("lastProbeTime");
                }
            }
        }
        if let Some(object) = value.as_object_mut() {
            object.remove("completionTime");
            object.retain(|_, v| !v.is_null());
        }
        value
    }
    strip(current) == strip(wanted)
}

/// The next container to start: init containers in order, then every main
/// container not running, once its back-off is over.
fn next_to_start(pod: &PodRun) -> Option<(bool, usize)> {
    let due = |c: &ContainerRun| {
        c.child.is_none()
            && c.next_start.is_none_or(|at| Instant::now() >= at)
            && match c.phase {
                Phase::Waiting { .. } => true,
                Phase::Running { .. } => false,
                Phase::Terminated { .. } => c.next_start.is_some(),
            }
    };
    for (index, container) in pod.init.iter().enumerate() {
        match container.phase {
            Phase::Terminated { exit_code: 0, .. } => continue,
            _ if due(container) => return Some((true, index)),
            _ => return None,
        }
    }
    pod.containers
        .iter()
        .position(due)
        .map(|index| (false, index))
}

fn container_status(container: &ContainerRun) -> Value {
    let state = match &container.phase {
        Phase::Waiting { reason, message } => {
            json!({"waiting": {"reason": reason, "message": message}})
        }
        Phase::Running { started_at } => json!({"running": {"startedAt": started_at}}),
        Phase::Terminated {
            exit_code,
            finished_at,
        } => json!({"terminated": {
            "exitCode": exit_code,
            "reason": if *exit_code == 0 { "Completed" } else { "Error" },
            "finishedAt": finished_at,
        }}),
    };
    json!({
        "name": container.spec.name,
        "image": container.spec.image,
        "imageID": "",
        "ready": container.ready(),
        "restartCount": container.restarts,
        "started": matches!(container.phase, Phase::Running { .. }),
        "state": state,
    })
}

fn pod_status(pod: &PodRun) -> Value {
    let all_terminated = pod
        .containers
        .iter()
        .all(|c| matches!(c.phase, Phase::Terminated { .. }) && c.next_start.is_none());
    let phase = if all_terminated && !pod.containers.is_empty() {
        if pod
            .containers
            .iter()
            .all(|c| matches!(c.phase, Phase::Terminated { exit_code: 0, .. }))
        {
            "Succeeded"
        } else {
            "Failed"
        }
    } else if pod.init_done()
        && pod
            .containers
            .iter()
            .any(|c| matches!(c.phase, Phase::Running { .. }))
    {
        "Running"
    } else {
        "Pending"
    };
    let ready = pod.ready();
    let flag = |b: bool| if b { "True" } else { "False" };
    json!({
        "phase": phase,
        "hostIP": "127.0.0.1",
        "podIP": "127.0.0.1",
        "startTime": pod.start_time,
        "conditions": [
            {"type": "PodScheduled", "status": "True"},
            {"type": "Initialized", "status": flag(pod.init_done())},
            {"type": "ContainersReady", "status": flag(ready)},
            {"type": "Ready", "status": flag(ready)},
        ],
        "initContainerStatuses": pod.init.iter().map(container_status).collect::<Vec<_>>(),
        "containerStatuses": pod.containers.iter().map(container_status).collect::<Vec<_>>(),
    })
}

/// Runs a container's probes until aborted.
async fn probe_loop(
    container: Container,
    ports: BTreeMap<i32, u16>,
    port_names: BTreeMap<String, i32>,
    state: Arc<Mutex<ProbeState>>,
) {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("probe client");
    let local = |port: &IntOrString| -> Option<u16> {
        let number = match port {
            IntOrString::Int(n) => *n,
            IntOrString::String(name) => match name.parse() {
                Ok(n) => n,
                Err(_) => *port_names.get(name)?,
            },
        };
        ports.get(&number).copied()
    };
    let check = |probe: Probe| {
        let http = http.clone();
        let target = probe
            .http_get
            .as_ref()
            .map(|h| (local(&h.port), h.path.clone().unwrap_or_else(|| "/".into())));
        let tcp = probe.tcp_socket.as_ref().map(|t| local(&t.port));
        let timeout = Duration::from_secs(probe.timeout_seconds.unwrap_or(1).clamp(1, 10) as u64);
        async move {
            if let Some((Some(port), path)) = target {
                return http
                    .get(format!("http://127.0.0.1:{port}{path}"))
                    .timeout(timeout)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().as_u16() >= 200 && r.status().as_u16() < 400);
            }
            if let Some(Some(port)) = tcp {
                return tokio::time::timeout(timeout, TcpStream::connect(("127.0.0.1", port)))
                    .await
                    .is_ok_and(|r| r.is_ok());
            }
            false
        }
    };
    let began = Instant::now();
    // Startup probe: until it succeeds, nothing else runs.
    if let Some(startup) = container.startup_probe.clone() {
        let period = Duration::from_secs(startup.period_seconds.unwrap_or(10).max(1) as u64);
        let threshold = startup.failure_threshold.unwrap_or(3).max(1);
        tokio::time::sleep(Duration::from_secs(
            startup.initial_delay_seconds.unwrap_or(0).max(0) as u64,
        ))
        .await;
        let mut failures = 0;
        loop {
            if check(startup.clone()).await {
                break;
            }
            failures += 1;
            if failures >= threshold {
                state.lock().unwrap().kill = true;
                return;
            }
            tokio::time::sleep(period).await;
        }
    }
    state.lock().unwrap().started = true;
    let readiness = container.readiness_probe.clone();
    let liveness = container.liveness_probe.clone();
    if readiness.is_none() {
        state.lock().unwrap().ready = true;
    }
    let live_delay = liveness
        .as_ref()
        .map(|l| Duration::from_secs(l.initial_delay_seconds.unwrap_or(0).max(0) as u64))
        .unwrap_or_default();
    let live_period = liveness
        .as_ref()
        .map(|l| Duration::from_secs(l.period_seconds.unwrap_or(10).max(1) as u64))
        .unwrap_or(Duration::from_secs(10));
    let live_threshold = liveness
        .as_ref()
        .and_then(|l| l.failure_threshold)
        .unwrap_or(3)
        .max(1);
    let mut live_failures = 0;
    let mut next_live = began + live_delay;
    // Readiness as a kubelet probes it: first after initialDelaySeconds,
    // then every periodSeconds.
    let seconds =
        |s: Option<i32>, default: i32| Duration::from_secs(s.unwrap_or(default).max(0) as u64);
    let ready_period = readiness
        .as_ref()
        .map(|r| seconds(r.period_seconds, 10).max(Duration::from_secs(1)))
        .unwrap_or(Duration::from_secs(10));
    let mut next_ready = began
        + readiness
            .as_ref()
            .map(|r| seconds(r.initial_delay_seconds, 0))
            .unwrap_or_default();
    let (mut successes, mut failures) = (0, 0);
    loop {
        if let Some(probe) = readiness.clone() {
            if Instant::now() >= next_ready {
                next_ready = Instant::now() + ready_period;
                let ok = check(probe.clone()).await;
                if ok {
                    successes += 1;
                    failures = 0;
                } else {
                    failures += 1;
                    successes = 0;
                }
                let mut s = state.lock().unwrap();
                if successes >= probe.success_threshold.unwrap_or(1).max(1) {
                    s.ready = true;
                }
                if failures >= probe.failure_threshold.unwrap_or(3).max(1) {
                    s.ready = false;
                }
            }
        }
        if let Some(probe) = liveness.clone() {
            if Instant::now() >= next_live {
                next_live = Instant::now() + live_period;
                if check(probe).await {
                    live_failures = 0;
                } else {
                    live_failures += 1;
                    if live_failures >= live_threshold {
                        state.lock().unwrap().kill = true;
                        return;
                    }
                }
            }
        }
        let next = match (readiness.is_some(), liveness.is_some()) {
            (true, true) => next_ready.min(next_live),
            (true, false) => next_ready,
            (false, true) => next_live,
            (false, false) => return,
        };
        tokio::time::sleep_until(next.into()).await;
    }
}

/// Forwards each connection to the current target; none when no pod is
/// ready (the connection is closed, as a Service without endpoints
/// refuses).
async fn forward(listener: TcpListener, target: Arc<Mutex<Option<u16>>>) {
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            return;
        };
        let port = *target.lock().unwrap();
        tokio::spawn(async move {
            let Some(port) = port else {
                let _ = inbound.shutdown().await;
                return;
            };
            match TcpStream::connect(("127.0.0.1", port)).await {
                Ok(mut outbound) => {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
                Err(_) => {
                    let _ = inbound.shutdown().await;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_recognised_by_repository() {
        assert!(Images::is_litellm("ghcr.io/berriai/litellm:main-stable"));
        assert!(Images::is_litellm("litellm"));
        assert!(!Images::is_litellm("python:3.11"));
        assert!(!Images::is_litellm("localhost:5000/other"));
    }

    #[test]
    fn only_the_installed_versions_tags_can_be_pulled() {
        let images = Images {
            image_sh: PathBuf::from("image.sh"),
            cache: PathBuf::from("cache"),
            version: "1.108.7".into(),
        };
        for tag in ["main-v1.108.7", "v1.108.7", "main-v1.108.7-stable"] {
            assert_eq!(
                images.pullable(&format!("ghcr.io/berriai/litellm:{tag}")),
                Ok(())
            );
        }
        for image in [
            "ghcr.io/berriai/litellm:main-v1.108.8",
            "ghcr.io/berriai/litellm:main-stable",
            "ghcr.io/berriai/litellm:main-v1.108.7-patch1",
            "ghcr.io/berriai/litellm",
        ] {
            let err = images.pullable(image).unwrap_err();
            assert!(err.contains("LiteLLM 1.108.7 only"), "{err}");
        }
    }
}

/// One request through the cluster network ([`Kubelet::cluster_network`]).
async fn cluster_network_forward(
    shared: &Shared,
    forwarder: &reqwest::Client,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let fail = |message: String| (axum::http::StatusCode::BAD_GATEWAY, message).into_response();
    let uri = request.uri().clone();
    let Some(host) = uri.host() else {
        return fail(format!("{uri}: not a proxy request (no host)"));
    };
    let suffix = format!(".{}.svc", shared.namespace);
    let service = host
        .strip_suffix(".cluster.local")
        .unwrap_or(host)
        .strip_suffix(&suffix);
    let port = i32::from(uri.port_u16().unwrap_or(80));
    let local = service.and_then(|service| {
        let state = shared.state.lock().unwrap();
        state
            .services
            .get(&(service.to_string(), port))
            .map(|f| f.local_port)
    });
    let Some(local) = local else {
        return fail(format!(
            "{host}:{port}: no such Service in the test cluster"
        ));
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 64 << 20).await else {
        return fail("request body unreadable".to_string());
    };
    let mut outgoing = forwarder.request(parts.method, format!("http://127.0.0.1:{local}{path}"));
    for (name, value) in &parts.headers {
        let hop = matches!(
            name.as_str(),
            "host"
                | "connection"
                | "proxy-connection"
                | "proxy-authorization"
                | "keep-alive"
                | "te"
                | "trailer"
                | "transfer-encoding"
                | "upgrade"
        );
        if !hop {
            outgoing = outgoing.header(name, value);
        }
    }
    let response = match outgoing.body(body).send().await {
        Ok(response) => response,
        // As a Service whose pod went away: the connection fails.
        Err(err) => return fail(format!("{host}:{port}: {err}")),
    };
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap_or_default();
    let mut out = axum::response::Response::new(axum::body::Body::from(bytes));
    *out.status_mut() = status;
    for (name, value) in &headers {
        if !matches!(
            name.as_str(),
            "connection" | "transfer-encoding" | "keep-alive"
        ) {
            out.headers_mut().insert(name, value.clone());
        }
    }
    out
}
