//! The GitHub Actions workflows (`.github/workflows/`): actionlint accepts
//! them (`tests/fixtures/actionlint.sh`, which installs it on first use and
//! fails, never skips, when it cannot), CI runs `.ci/run`, and the release
//! pushes, for this repository's owner and version, exactly the names that
//! `examples/` and the README's install section install.

use crate::packages::install_section;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The GitHub owner this repository is published under: the namespace the
/// examples and the README install from (`ghcr.io/<owner>/...`).
const OWNER: &str = "litellm-crossplane";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: impl AsRef<Path>) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn workflow_files() -> Vec<PathBuf> {
    let dir = root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

fn workflow(name: &str) -> Value {
    serde_saphyr::from_str(&read(format!(".github/workflows/{name}")))
        .unwrap_or_else(|e| panic!("{name} does not parse: {e}"))
}

/// The release tag of this version: `v` and Cargo.toml's version.
fn release_tag() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

fn steps(job: &Value) -> &Vec<Value> {
    job["steps"].as_array().expect("a job with steps")
}

fn step<'a>(job: &'a Value, id: &str) -> &'a Value {
    steps(job)
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no step with id {id}"))
}

/// Replaces each `${{ expression }}` with its value in `context`; an
/// expression the context lacks fails the test.
fn expand_expressions(text: &str, context: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("}}")
            .unwrap_or_else(|| panic!("unclosed expression in {text}"))
            + start;
        let expression = rest[start + 3..end].trim();
        let value = context
            .get(expression)
            .unwrap_or_else(|| panic!("no value for ${{{{ {expression} }}}} in {text}"));
        out.push_str(value);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Replaces `$NAME` and `${NAME}` with their values in `env`; a variable
/// `env` lacks fails the test.
fn expand_variables(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let braced = text[i + 1..].starts_with('{');
        let start = i + 1 + usize::from(braced);
        let len = text[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len() - start);
        let name = &text[start..start + len];
        assert!(!name.is_empty(), "a bare $ in {text}");
        let value = env
            .get(name)
            .unwrap_or_else(|| panic!("no value for ${name} in {text}"));
        out.push_str(value);
        let skip = len + 2 * usize::from(braced);
        for _ in 0..skip {
            chars.next();
        }
    }
    out
}

/// The outputs of the release's `names` step, run with bash as the runner
/// runs it, for repository owner `owner`.
fn release_names(owner: &str) -> BTreeMap<String, String> {
    let release = workflow("release.yaml");
    let job = &release["jobs"]["names"];
    let names = step(job, "names");
    let context = BTreeMap::from([("github.repository_owner".to_string(), owner.to_string())]);
    let output = std::env::temp_dir().join(format!(
        "litellm-crossplane-release-names-{}-{owner}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&output);
    let mut command = Command::new("bash");
    command
        .arg("-e")
        .arg("-c")
        .arg(names["run"].as_str().expect("the names step runs a script"))
        .env("GITHUB_OUTPUT", &output);
    for (name, value) in names["env"].as_object().into_iter().flatten() {
        command.env(name, expand_expressions(value.as_str().unwrap(), &context));
    }
    let status = command.status().unwrap();
    assert!(status.success(), "the names step fails");
    let text = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_file(&output).unwrap();
    let step_outputs: BTreeMap<String, String> = text
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').expect("name=value");
            (k.to_string(), v.to_string())
        })
        .collect();

    // The job's outputs are the step's.
    let mut outputs = BTreeMap::new();
    for (name, value) in job["outputs"].as_object().expect("the names job's outputs") {
        let value = value.as_str().unwrap();
        let key = value
            .strip_prefix("${{ steps.names.outputs.")
            .and_then(|v| v.strip_suffix(" }}"))
            .unwrap_or_else(|| panic!("output {name} is {value}"));
        outputs.insert(name.clone(), step_outputs[key].clone());
    }
    assert_eq!(outputs.len(), step_outputs.len());
    outputs
}

/// The context the release's expressions are read in, for one platform.
fn release_context(arch: &str) -> BTreeMap<String, String> {
    let mut context = BTreeMap::from([
        ("github.repository_owner".to_string(), OWNER.to_string()),
        ("github.ref_name".to_string(), release_tag()),
        ("matrix.arch".to_string(), arch.to_string()),
    ]);
    for (name, value) in release_names(OWNER) {
        context.insert(format!("needs.names.outputs.{name}"), value);
    }
    context
}

/// Every image and package reference the release pushes with a tag, and the
/// repositories it pushes untagged (by digest).
fn release_pushes() -> (BTreeSet<String>, BTreeSet<String>) {
    let release = workflow("release.yaml");
    let mut tagged = BTreeSet::new();
    let mut by_digest = BTreeSet::new();

    let build = &release["jobs"]["build"];
    let arches: Vec<&str> = build["strategy"]["matrix"]["arch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for arch in arches {
        let context = release_context(arch);
        for step in steps(build) {
            let uses = step["uses"].as_str().unwrap_or_default();
            if !uses.starts_with("docker/build-push-action@") {
                continue;
            }
            let outputs = expand_expressions(step["with"]["outputs"].as_str().unwrap(), &context);
            let fields: BTreeMap<&str, &str> = outputs
                .split(',')
                .filter_map(|f| f.split_once('='))
                .collect();
            assert_ne!(step["with"]["push"], true, "{outputs}: pushes by tag");
            if fields.get("push") == Some(&"true") {
                assert_eq!(fields.get("push-by-digest"), Some(&"true"), "{outputs}");
                let name = fields["name"];
                // The image of each Dockerfile target is named after it.
                let target = step["with"]["target"].as_str().unwrap();
                assert!(
                    name.ends_with(&format!("/{target}-litellm-runtime")),
                    "target {target} pushed as {name}"
                );
                by_digest.insert(name.to_string());
            }
        }
    }

    // The publish job's commands, with its environment.
    let publish = &release["jobs"]["publish"];
    let context = release_context("");
    let mut job_env: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in publish["env"].as_object().unwrap() {
        job_env.insert(
            name.clone(),
            expand_expressions(value.as_str().unwrap(), &context),
        );
    }
    for step in steps(publish) {
        let Some(run) = step["run"].as_str() else {
            continue;
        };
        for line in run.lines().map(str::trim) {
            let pushed = if line.starts_with("docker buildx imagetools create ") {
                let words: Vec<&str> = line.split_whitespace().collect();
                let at = words.iter().position(|w| *w == "--tag").expect("--tag");
                words[at + 1]
            } else if line.starts_with("crossplane xpkg push ") {
                line.split_whitespace().last().unwrap()
            } else {
                continue;
            };
            tagged.insert(expand_variables(pushed.trim_matches('"'), &job_env));
        }
    }
    (tagged, by_digest)
}

/// Every `spec.package` of the Provider and Function objects under
/// `examples/` that installs this repository's packages.
fn example_packages() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut pending = vec![root().join("examples")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if !path.extension().is_some_and(|e| e == "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            for doc in docs {
                let name = doc["metadata"]["name"].as_str().unwrap_or_default();
                if doc["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("pkg.crossplane.io/")
                    && (doc["kind"] == "Provider" || doc["kind"] == "Function")
                    && (name == "provider-litellm" || name == "function-litellm")
                {
                    out.insert(doc["spec"]["package"].as_str().unwrap().to_string());
                }
            }
        }
    }
    out
}

#[test]
fn actionlint_accepts_the_workflows() {
    let files = workflow_files();
    assert!(files.len() >= 2, "{files:?}");
    let output = Command::new(root().join("tests/fixtures/actionlint.sh"))
        .args(&files)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn ci_runs_the_ci_script_on_pushes_and_pull_requests() {
    let ci = workflow("ci.yaml");
    assert!(ci["on"].get("push").is_some() && ci["on"].get("pull_request").is_some());
    let runs: Vec<&Value> = ci["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(steps)
        .filter(|s| s["run"].as_str().map(str::trim) == Some(".ci/run"))
        .collect();
    let [run] = runs[..] else {
        panic!("one step runs .ci/run");
    };
    // The repository alone: its harnesses are in it, and nothing points
    // the run at a folder beside it.
    assert!(run.get("working-directory").is_none(), "{run}");
    assert!(run.get("env").is_none(), "{run}");
    assert!(root().join("tests/harness/k8s/up.sh").is_file());
    assert!(root().join("tests/harness/litellm/up.sh").is_file());
    assert!(root().join(".ci/run").is_file());
}

#[test]
fn release_runs_on_version_tags_with_the_permissions_it_needs() {
    let release = workflow("release.yaml");
    assert_eq!(release["on"]["push"]["tags"], serde_json::json!(["v*"]));
    // Nothing by default; each job what it uses.
    assert_eq!(release["permissions"], serde_json::json!({}));
    let publish = &release["jobs"]["publish"]["permissions"];
    for (scope, access) in [
        ("contents", "write"),
        ("packages", "write"),
        ("id-token", "write"),
    ] {
        assert_eq!(publish[scope], access, "publish: {scope}");
    }
    assert_eq!(
        release["jobs"]["build"]["strategy"]["matrix"]["arch"],
        serde_json::json!(["amd64", "arm64"])
    );
    let text = read(".github/workflows/release.yaml");
    assert!(text.contains("cosign sign --yes"));
    assert!(text.contains("--embed-runtime-image-tarball="));
}

/// The registry names are lower case whatever the owner's spelling, and
/// tell packages from runtime images.
#[test]
fn release_names_are_the_owners_lower_cased() {
    let names = release_names(OWNER);
    assert_eq!(release_names("LiteLLM-Crossplane"), names);
    assert_eq!(
        names,
        BTreeMap::from(
            [
                ("provider-package", "provider-litellm"),
                ("function-package", "function-litellm"),
                ("provider-image", "provider-litellm-runtime"),
                ("function-image", "function-litellm-runtime"),
            ]
            .map(|(k, v)| (k.to_string(), format!("ghcr.io/{OWNER}/{v}")))
        )
    );
}

#[test]
fn release_pushes_the_packages_the_examples_and_readme_install() {
    let tag = release_tag();
    let names = release_names(OWNER);
    let (tagged, by_digest) = release_pushes();

    // Both runtime images by digest per platform, then tagged; both packages.
    let images: BTreeSet<String> = [&names["provider-image"], &names["function-image"]]
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(by_digest, images);
    let packages: BTreeSet<String> = [&names["provider-package"], &names["function-package"]]
        .into_iter()
        .map(|p| format!("{p}:{tag}"))
        .collect();
    let expected: BTreeSet<String> = images
        .iter()
        .map(|i| format!("{i}:{tag}"))
        .chain(packages.iter().cloned())
        .collect();
    assert_eq!(tagged, expected);

    // What examples/ installs is what the release pushes as packages.
    assert_eq!(example_packages(), packages);

    // The README names each, and pushes hand-built packages to the same.
    let section = install_section();
    for reference in &expected {
        assert!(
            section.contains(&format!("`{reference}`")),
            "the README's install section names {reference}"
        );
    }
    let readme_pushes: BTreeSet<String> = section
        .lines()
        .filter(|l| l.starts_with("crossplane xpkg push "))
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(readme_pushes, packages);
}

/// The release builds each package from the package and examples roots
/// package/build.sh uses, embedding the image of its Dockerfile target.
#[test]
fn release_builds_the_packages_as_the_build_script_does() {
    let options = |line: &str| -> BTreeMap<String, String> {
        line.split_whitespace()
            .filter_map(|w| w.strip_prefix("--"))
            .filter_map(|o| o.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string()))
            .collect()
    };
    let xpkg_builds = |text: &str| -> Vec<BTreeMap<String, String>> {
        text.lines()
            .map(str::trim)
            .filter(|l| l.starts_with("crossplane xpkg build "))
            .map(options)
            .collect()
    };
    let script = xpkg_builds(&read("package/build.sh"));
    let release = workflow("release.yaml");
    let build = &release["jobs"]["build"];
    let mut tarballs = BTreeMap::new();
    for step in steps(build) {
        if let Some(dest) = step["with"]["outputs"]
            .as_str()
            .and_then(|o| o.strip_prefix("type=docker,dest="))
        {
            tarballs.insert(
                dest.to_string(),
                step["with"]["target"].as_str().unwrap().to_string(),
            );
        }
    }
    let workflow_builds: Vec<BTreeMap<String, String>> = steps(build)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(xpkg_builds)
        .collect();
    assert_eq!(workflow_builds.len(), script.len());
    for built in &workflow_builds {
        let root_dir = &built["package-root"];
        let by_script = script
            .iter()
            .find(|s| &s["package-root"] == root_dir)
            .unwrap_or_else(|| panic!("package/build.sh does not build {root_dir}"));
        assert_eq!(built["examples-root"], by_script["examples-root"]);
        let target = &tarballs[&built["embed-runtime-image-tarball"]];
        assert_eq!(
            root_dir,
            &format!("package/{target}"),
            "the package embeds its own target's image"
        );
    }
}
