//! The monitoring that ships: `monitoring/` (a Grafana dashboard per binary
//! and Prometheus alert rules) and its copies in the packages' examples.
//!
//! - Every file parses, every alert has `for`, a severity, a summary and a
//!   description, every panel queries the `datasource` variable.
//! - Every PromQL expression (panel targets, the `label_values` of template
//!   variables, alert rules) parses with a real PromQL parser
//!   (`promql-parser`), and every metric it names is one the binary it
//!   watches exports: scraped from the running binary's `/metrics`, not
//!   taken from a list. The function runs alone; the provider needs the
//!   harnesses (the API server and a LiteLLM proxy) and is scraped after it
//!   reconciled an instance at the real proxy and a team through drift and
//!   deletion.
//! - `examples/*/runtime-config/monitoring/monitoring.yaml` (a
//!   PrometheusRule and a Grafana dashboard ConfigMap per package) are
//!   generated from `monitoring/`; `UPDATE_EXPECTED=1 cargo test --test
//!   integration monitoring::` rewrites them.

use crate::support;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use function_sdk_rust::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use function_sdk_rust::proto::v1::{RunFunctionRequest, Severity};
use kube::api::{Api, Patch, PatchParams, PostParams};
use litellm_crossplane::api::LiteLLMTeam;
use promql_parser::label::MatchOp;
use promql_parser::parser::{self, Expr};
use serde_json::{json, Value};
use support::binary::{binary, Binary};
use support::{harness, k8s};
use tokio::time::Instant;

/// The two binaries: the name of their dashboard, alert group and examples.
const BINARIES: [&str; 2] = ["provider-litellm", "function-litellm"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: impl AsRef<Path>) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn dashboard_path(binary: &str) -> PathBuf {
    PathBuf::from(format!("monitoring/{binary}.dashboard.json"))
}

fn dashboard(binary: &str) -> Value {
    let path = dashboard_path(binary);
    serde_json::from_str(&read(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn alerts() -> Value {
    serde_saphyr::from_str(&read("monitoring/alerts.yaml"))
        .unwrap_or_else(|e| panic!("monitoring/alerts.yaml: {e}"))
}

/// The alert group named after `binary`.
fn alert_group(binary: &str) -> Value {
    let alerts = alerts();
    let groups: Vec<&Value> = alerts["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| g["name"] == binary)
        .collect();
    let [group] = groups[..] else {
        panic!("monitoring/alerts.yaml: expected one group named {binary}");
    };
    group.clone()
}

/// Every panel of a dashboard, the panels of rows included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    let mut pending: Vec<&Value> = dashboard["panels"].as_array().unwrap().iter().collect();
    while let Some(panel) = pending.pop() {
        if let Some(nested) = panel["panels"].as_array() {
            pending.extend(nested);
        }
        out.push(panel);
    }
    out
}

/// One PromQL expression and where it is.
struct Query {
    place: String,
    expr: String,
}

/// Grafana's interval variables, which are not PromQL, as a duration.
fn promql(grafana: &str) -> String {
    ["$__rate_interval", "$__interval", "$__range"]
        .iter()
        .fold(grafana.to_string(), |expr, variable| {
            expr.replace(variable, "5m")
        })
}

/// Every PromQL expression of `binary`'s dashboard and alert group.
fn queries(binary: &str) -> Vec<Query> {
    let mut out = Vec::new();
    let board = dashboard(binary);
    for panel in panels(&board) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            out.push(Query {
                place: format!("{binary} dashboard, panel {:?}", panel["title"]),
                expr: promql(target["expr"].as_str().expect("a target's expr")),
            });
        }
    }
    for variable in board["templating"]["list"].as_array().unwrap() {
        if variable["type"] != "query" {
            continue;
        }
        let query = variable["query"]["query"].as_str().expect("a query");
        // `label_values(<series selector>, <label>)`: the selector is PromQL.
        let selector = query
            .strip_prefix("label_values(")
            .and_then(|rest| rest.rsplit_once(','))
            .map(|(selector, _)| selector)
            .unwrap_or_else(|| panic!("{binary}: not label_values(selector, label): {query}"));
        out.push(Query {
            place: format!("{binary} dashboard, variable {:?}", variable["name"]),
            expr: selector.to_string(),
        });
    }
    for rule in alert_group(binary)["rules"].as_array().unwrap() {
        out.push(Query {
            place: format!("alert {:?}", rule["alert"]),
            expr: rule["expr"].as_str().expect("an alert's expr").to_string(),
        });
    }
    assert!(!out.is_empty());
    out
}

/// A metric name a query names: by name, or by a `__name__` matcher.
#[derive(Debug)]
enum Named {
    Exactly(String),
    Matching(promql_parser::label::Matcher),
}

fn metric_names(expr: &Expr, out: &mut Vec<Named>) {
    match expr {
        Expr::Aggregate(e) => {
            metric_names(&e.expr, out);
            if let Some(param) = &e.param {
                metric_names(param, out);
            }
        }
        Expr::Unary(e) => metric_names(&e.expr, out),
        Expr::Binary(e) => {
            metric_names(&e.lhs, out);
            metric_names(&e.rhs, out);
        }
        Expr::Paren(e) => metric_names(&e.expr, out),
        Expr::Subquery(e) => metric_names(&e.expr, out),
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) => {}
        Expr::VectorSelector(vs) => selector_names(vs, out),
        Expr::MatrixSelector(ms) => selector_names(&ms.vs, out),
        Expr::Call(call) => {
            for arg in &call.args.args {
                metric_names(arg, out);
            }
        }
        Expr::Extension(_) => panic!("no extension expressions"),
    }
}

fn selector_names(vs: &promql_parser::parser::VectorSelector, out: &mut Vec<Named>) {
    let matchers = vs
        .matchers
        .matchers
        .iter()
        .chain(vs.matchers.or_matchers.iter().flatten());
    let mut named = vs.name.is_some();
    if let Some(name) = &vs.name {
        out.push(Named::Exactly(name.clone()));
    }
    for matcher in matchers.filter(|m| m.name == "__name__") {
        match &matcher.op {
            MatchOp::Equal => out.push(Named::Exactly(matcher.value.clone())),
            MatchOp::Re(_) => out.push(Named::Matching(matcher.clone())),
            MatchOp::NotEqual | MatchOp::NotRe(_) => continue,
        }
        named = true;
    }
    assert!(named, "a selector that names no metric: {vs}");
}

/// Parses every query of `binary`, and returns the metric names each one
/// names, by query.
fn parsed(binary: &str) -> Vec<(String, String, Vec<Named>)> {
    queries(binary)
        .into_iter()
        .map(|query| {
            let expr = parser::parse(&query.expr).unwrap_or_else(|e| {
                panic!(
                    "{}: PromQL does not parse: {e}\n{}",
                    query.place, query.expr
                )
            });
            let mut names = Vec::new();
            metric_names(&expr, &mut names);
            assert!(
                !names.is_empty(),
                "{}: names no metric: {}",
                query.place,
                query.expr
            );
            (query.place, query.expr, names)
        })
        .collect()
}

/// The series names a scrape exposes: the sample lines' names, and for each
/// family its `# TYPE` line declares (present even before the family has a
/// sample) the names its samples take: `_total` of a counter, `_bucket`,
/// `_sum` and `_count` of a histogram, the name of a gauge.
fn exported(scrape: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in scrape.lines() {
        if let Some(declared) = line.strip_prefix("# TYPE ") {
            let mut parts = declared.split_whitespace();
            let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
                panic!("a TYPE line without a name and a type: {line}");
            };
            let suffixes: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                "summary" => &["", "_sum", "_count"],
                _ => &[""],
            };
            names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
        } else if !line.starts_with('#') && !line.is_empty() {
            let end = line.find(['{', ' ']).unwrap_or(line.len());
            names.insert(line[..end].to_string());
        }
    }
    names
}

/// Asserts that every metric `binary`'s dashboard and alerts name is in
/// `scrape`.
fn assert_exported(binary: &str, scrape: &str) {
    let exported = exported(scrape);
    assert!(!exported.is_empty(), "{binary}: an empty scrape:\n{scrape}");
    let mut missing = Vec::new();
    for (place, expr, names) in parsed(binary) {
        for named in names {
            let found = match &named {
                Named::Exactly(name) => exported.contains(name),
                Named::Matching(matcher) => exported.iter().any(|n| matcher.is_match(n)),
            };
            if !found {
                missing.push(format!("{place}: {named:?} in {expr}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{binary} does not export what its monitoring names:\n{}\n\nit exports:\n{}",
        missing.join("\n"),
        exported.into_iter().collect::<Vec<_>>().join("\n")
    );
}

// ------------------------------------------------------------ files, no harness

#[test]
fn every_file_parses_and_every_alert_is_complete() {
    for binary in BINARIES {
        let board = dashboard(binary);
        assert_eq!(board["uid"], binary);
        assert_eq!(board["title"], binary);
        let schema = board["schemaVersion"].as_u64().expect("schemaVersion");
        assert!(
            (36..=41).contains(&schema),
            "{binary}: schemaVersion {schema}"
        );
        let variables = board["templating"]["list"].as_array().unwrap();
        assert!(
            variables.iter().any(|v| v["name"] == "datasource"
                && v["type"] == "datasource"
                && v["query"] == "prometheus"),
            "{binary}: a datasource variable of Prometheus data sources"
        );
        let panels = panels(&board);
        let mut ids = BTreeSet::new();
        let mut targets = 0;
        for panel in &panels {
            assert!(
                ids.insert(panel["id"].as_u64().expect("an id")),
                "unique ids"
            );
            assert!(panel["title"].as_str().is_some_and(|t| !t.is_empty()));
            assert!(panel["gridPos"].is_object(), "{}", panel["title"]);
            if panel["type"] == "row" {
                continue;
            }
            assert!(
                panel["description"].as_str().is_some_and(|t| !t.is_empty()),
                "{binary}: panel {} says what it shows",
                panel["title"]
            );
            assert_eq!(
                panel["datasource"]["uid"], "${datasource}",
                "{}",
                panel["title"]
            );
            let panel_targets = panel["targets"].as_array().expect("targets");
            assert!(!panel_targets.is_empty(), "{}", panel["title"]);
            for target in panel_targets {
                assert_eq!(target["datasource"]["uid"], "${datasource}");
                assert!(target["expr"].as_str().is_some_and(|e| !e.is_empty()));
                targets += 1;
            }
        }
        assert!(targets > 0);
    }

    let alerts = alerts();
    let groups = alerts["groups"].as_array().expect("groups");
    let names: BTreeSet<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
    assert_eq!(names, BTreeSet::from(BINARIES), "one group per binary");
    let mut seen = BTreeSet::new();
    for group in groups {
        let rules = group["rules"].as_array().expect("rules");
        assert!(!rules.is_empty());
        for rule in rules {
            let alert = rule["alert"].as_str().expect("every rule is an alert");
            assert!(seen.insert(alert), "{alert}: unique");
            assert!(
                rule["expr"].as_str().is_some_and(|e| !e.is_empty()),
                "{alert}"
            );
            let r#for = rule["for"]
                .as_str()
                .unwrap_or_else(|| panic!("{alert}: for"));
            assert!(
                promql_parser::util::parse_duration(r#for).is_ok(),
                "{alert}: for {for:?}"
            );
            assert!(
                ["critical", "warning", "info"]
                    .contains(&rule["labels"]["severity"].as_str().unwrap_or("")),
                "{alert}: labels.severity is critical, warning or info"
            );
            for annotation in ["summary", "description"] {
                assert!(
                    rule["annotations"][annotation]
                        .as_str()
                        .is_some_and(|t| !t.is_empty()),
                    "{alert}: annotations.{annotation}"
                );
            }
            let readme = read("monitoring/README.md");
            assert!(
                readme.contains(&format!("`{alert}`")),
                "monitoring/README.md explains {alert}"
            );
        }
    }
}

#[test]
fn every_expression_parses_and_names_a_metric() {
    for binary in BINARIES {
        let parsed = parsed(binary);
        assert!(parsed.len() > 3, "{binary}");
    }
}

// ------------------------------------------------------------------ examples

/// A package's examples file: the alert group of its binary as a
/// PrometheusRule and its dashboard in a ConfigMap the Grafana sidecar
/// loads, both taken verbatim from `monitoring/`.
fn example_path(binary: &str) -> PathBuf {
    let package = binary.split('-').next().unwrap();
    PathBuf::from(format!(
        "examples/{package}/runtime-config/monitoring/monitoring.yaml"
    ))
}

/// The lines of `monitoring/alerts.yaml` that hold the group `binary`.
fn group_text(binary: &str) -> String {
    let text = read("monitoring/alerts.yaml");
    let start = format!("  - name: {binary}");
    let mut lines = text.lines().skip_while(|l| *l != start);
    let first = lines.next().unwrap_or_else(|| panic!("{start}"));
    let mut out = vec![first];
    out.extend(lines.take_while(|l| !l.starts_with("  - name: ")));
    out.join("\n") + "\n"
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn generated_example(binary: &str) -> String {
    format!(
        "# Generated from monitoring/ by tests/integration/monitoring.rs: do not edit;\n\
         # `UPDATE_EXPECTED=1 cargo test --test integration monitoring::` rewrites it.\n\
         # {binary}'s Prometheus alert rules (a prometheus-operator PrometheusRule) and\n\
         # its Grafana dashboard (a ConfigMap the Grafana sidecar of kube-prometheus-stack\n\
         # loads). Both need the monitoring stack's CRDs and namespaces: apply them\n\
         # with `kubectl apply -n <monitoring namespace> -f` this file; monitoring/README.md\n\
         # says what each alert means.\n\
         apiVersion: monitoring.coreos.com/v1\n\
         kind: PrometheusRule\n\
         metadata:\n\
         \x20 name: {binary}\n\
         \x20 labels:\n\
         \x20   # kube-prometheus-stack selects rules by its Helm release name.\n\
         \x20   release: kube-prometheus-stack\n\
         spec:\n\
         \x20 groups:\n\
         {groups}\
         ---\n\
         apiVersion: v1\n\
         kind: ConfigMap\n\
         metadata:\n\
         \x20 name: {binary}-dashboard\n\
         \x20 labels:\n\
         \x20   grafana_dashboard: \"1\"\n\
         data:\n\
         \x20 {binary}.json: |\n\
         {json}",
        groups = indent(&group_text(binary), 2),
        json = indent(&read(dashboard_path(binary)), 4),
    )
}

#[test]
fn the_examples_carry_the_monitoring_files() {
    for binary in BINARIES {
        let path = example_path(binary);
        let expected = generated_example(binary);
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            let full = root().join(&path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, &expected).unwrap();
        }
        let actual = read(&path);
        assert!(
            actual == expected,
            "{} is not what monitoring/ generates: run \
             `UPDATE_EXPECTED=1 cargo test --test integration monitoring::`",
            path.display()
        );

        // And the copies mean the same as the files.
        let docs: Vec<Value> = serde_saphyr::from_multiple(&actual)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let [rule, config_map] = &docs[..] else {
            panic!("{}: a PrometheusRule and a ConfigMap", path.display());
        };
        assert_eq!(rule["kind"], "PrometheusRule");
        assert_eq!(rule["spec"]["groups"], json!([alert_group(binary)]));
        assert_eq!(config_map["kind"], "ConfigMap");
        assert_eq!(config_map["metadata"]["labels"]["grafana_dashboard"], "1");
        let embedded: Value = serde_json::from_str(
            config_map["data"][format!("{binary}.json")]
                .as_str()
                .expect("the dashboard's JSON"),
        )
        .unwrap();
        assert_eq!(embedded, dashboard(binary));
    }
}

// ------------------------------------------------------------ running binaries

/// A free local port (closed again at once: the binary binds it next).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn scrape(address: SocketAddr) -> Option<String> {
    let response = reqwest::get(format!("http://{address}/metrics"))
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.text().await.ok()
}

/// The function without TLS, with its metrics on a free port, scraped
/// after it answered one RunFunction call (an empty request: a Fatal
/// result), so that the outcome and gRPC series have samples.
#[tokio::test]
async fn the_function_exports_every_metric_its_monitoring_names() {
    let metrics: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let grpc: SocketAddr = ([127, 0, 0, 1], free_port()).into();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_function-litellm"))
        .args([
            "--insecure",
            "--address",
            &grpc.to_string(),
            "--metrics-address",
            &metrics.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("function-litellm starts");
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if scrape(metrics).await.is_some() {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("function-litellm exited: {status}");
        }
        assert!(Instant::now() < until, "no /metrics on {metrics}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut client = FunctionRunnerServiceClient::connect(format!("http://{grpc}"))
        .await
        .expect("the gRPC server answers");
    let answer = client
        .run_function(RunFunctionRequest::default())
        .await
        .expect("answered")
        .into_inner();
    assert!(
        answer
            .results
            .iter()
            .any(|r| r.severity == Severity::Fatal as i32),
        "{answer:?}"
    );
    let scraped = scrape(metrics).await.expect("/metrics answers");
    for sampled in [
        "function_litellm_runs_total{outcome=\"fatal\"} 1",
        "grpc_server_handling_seconds_count{",
    ] {
        assert!(scraped.contains(sampled), "{sampled}:\n{scraped}");
    }
    assert_exported("function-litellm", &scraped);
    child.kill().await.unwrap();
}

/// Asks for a full reconciliation of the team, as `crossplane beta trace`
/// or a user does: a new `crossplane.io/reconcile-requested-at` token.
async fn request_reconcile(teams: &Api<LiteLLMTeam>, token: &str) {
    let patch =
        json!({"metadata": {"annotations": {"crossplane.io/reconcile-requested-at": token}}});
    teams
        .patch("team", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("annotation written");
}

/// Scrapes the provider (up to 60 s) until `needle` is in its `/metrics`.
async fn until_scraped(provider: &Binary, address: SocketAddr, needle: &str) -> String {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let scraped = scrape(address).await.expect("/metrics answers");
        if scraped.contains(needle) {
            return scraped;
        }
        assert!(
            Instant::now() < until,
            "no {needle} within 60 s:\n{scraped}\n{:#?}",
            provider.output()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The provider, run as the README runs it, after it attached an instance
/// at the real proxy, made a team there, found it up to date, corrected
/// drift made in LiteLLM and deleted the team: a family of
/// prometheus-client has its `# TYPE` line only once it has a sample, so
/// each series the monitoring names is made to have one. (Of the
/// provider's series the monitoring leaves out
/// `provider_litellm_unchanged_polls_total`: this test drives the
/// reconciliations by requests, not polls.)
#[tokio::test]
#[ignore = "needs the test harnesses: tests/run.sh"]
async fn the_provider_exports_every_metric_its_monitoring_names() {
    let Some(client) = k8s::client().await else {
        return;
    };
    let Some((url, master_key)) = harness::litellm() else {
        return;
    };
    k8s::install_crds(&client).await;
    let namespace = k8s::namespace(&client, "monitoring").await;
    let mut provider = binary(
        &[
            "--metrics-address",
            "127.0.0.1:0",
            "--namespace",
            &namespace,
        ],
        &[],
    );
    let address = provider.address().await;

    support::binary::master_key_secret(&client, &namespace, &master_key).await;
    support::binary::attached_instance(&client, &namespace, &url).await;
    let team_name = format!("monitoring-{}", k8s::unique_suffix());
    let team: LiteLLMTeam = serde_json::from_value(json!({
        "apiVersion": "litellm.m.crossplane.io/v1alpha1",
        "kind": "LiteLLMTeam",
        "metadata": {"name": "team"},
        "spec": {
            "instanceRef": {"name": "proxy"},
            "forProvider": {"teamAlias": team_name},
        },
    }))
    .unwrap();
    let teams = Api::<LiteLLMTeam>::namespaced(client.clone(), &namespace);
    teams
        .create(&PostParams::default(), &team)
        .await
        .expect("team created");

    // Until the team is Ready: its first readiness is observed, LiteLLM
    // answered requests, the controllers counted reconciliations.
    let until = Instant::now() + Duration::from_secs(90);
    loop {
        let team = teams.get("team").await.expect("team readable");
        let ready = serde_json::to_value(&team).unwrap()["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if ready {
            break;
        }
        assert!(
            Instant::now() < until,
            "the team never became Ready: {:#?}\n{:#?}",
            serde_json::to_value(&team).unwrap()["status"],
            provider.output()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let team_id = serde_json::to_value(teams.get("team").await.unwrap()).unwrap()["status"]
        ["atProvider"]["teamId"]
        .as_str()
        .expect("the team's id")
        .to_string();

    // A reconciliation requested (crossplane.io/reconcile-requested-at)
    // finds the team up to date; drift made behind the provider's back is
    // corrected at the next one.
    request_reconcile(&teams, "first").await;
    until_scraped(
        &provider,
        address,
        "provider_litellm_request_duration_seconds_count{operation=\"GET /team/info\",status=\"200\"}",
    )
    .await;
    let drift = reqwest::Client::new()
        .post(format!("{url}/team/update"))
        .bearer_auth(&master_key)
        .json(&json!({"team_id": team_id, "team_alias": "changed behind its back"}))
        .send()
        .await
        .expect("LiteLLM answers");
    assert!(drift.status().is_success(), "{:?}", drift.text().await);
    request_reconcile(&teams, "second").await;
    until_scraped(
        &provider,
        address,
        "crossplane_managed_resource_drift_seconds_count{",
    )
    .await;

    // Deleted, with its LiteLLM team.
    teams
        .delete("team", &Default::default())
        .await
        .expect("team deleted");
    let scraped = until_scraped(
        &provider,
        address,
        "crossplane_managed_resource_deletion_seconds_count{",
    )
    .await;
    for sampled in [
        "crossplane_managed_resource_exists{",
        "crossplane_managed_resource_first_time_to_readiness_seconds_count{",
        "controller_runtime_reconcile_total{",
        "provider_litellm_request_duration_seconds_count{",
    ] {
        assert!(scraped.contains(sampled), "{sampled}:\n{scraped}");
    }
    assert_exported("provider-litellm", &scraped);
    provider.child.kill().await.unwrap();
}
