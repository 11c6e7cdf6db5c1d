//! The container image and the two Crossplane packages, checked without a
//! container runtime: the Dockerfile against Cargo.toml and the binaries' own
//! `--help`, every YAML file `crossplane xpkg build` reads into a package,
//! the runtime-config examples against the flags the binaries accept, and the
//! README's install commands against `package/build.sh`.
//! (`tests/integration/generated.rs` already checks that `crds/` and the
//! packages' CRD folders are what the Rust types generate.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// A package, the Dockerfile stage whose image it embeds, and its binary.
struct Package {
    root: &'static str,
    kind: &'static str,
    name: &'static str,
    stage: &'static str,
    exe: &'static str,
}

const PACKAGES: [Package; 2] = [
    Package {
        root: "package/provider",
        kind: "Provider",
        name: "provider-litellm",
        stage: "provider",
        exe: env!("CARGO_BIN_EXE_provider-litellm"),
    },
    Package {
        root: "package/function",
        kind: "Function",
        name: "function-litellm",
        stage: "function",
        exe: env!("CARGO_BIN_EXE_function-litellm"),
    },
];

/// What Crossplane's package runtime wires into every package Deployment
/// (internal/controller/pkg/runtime/runtime.go): the `metrics` port on
/// providers and functions, the `grpc` port on functions.
const CROSSPLANE_METRICS_PORT: u16 = 8080;
const CROSSPLANE_GRPC_PORT: u16 = 9443;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: impl AsRef<Path>) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// YAML files under `dir`, recursively: what `crossplane xpkg build` reads
/// from a package or examples root.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every document of every YAML file under `dir`, with the file it is in.
fn documents(dir: &Path) -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for path in yaml_files(dir) {
        let text = std::fs::read_to_string(&path).unwrap();
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
        out.extend(docs.into_iter().map(|d| (path.clone(), d)));
    }
    out
}

fn str_at<'a>(doc: &'a Value, pointer: &str) -> &'a str {
    doc.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {doc}"))
}

// ---------------------------------------------------------------- Dockerfile

struct Stage {
    image: String,
    name: Option<String>,
    instructions: Vec<(String, String)>,
}

impl Stage {
    fn all(&self, instruction: &str) -> Vec<&str> {
        self.instructions
            .iter()
            .filter(|(i, _)| i == instruction)
            .map(|(_, args)| args.as_str())
            .collect()
    }

    fn one(&self, instruction: &str) -> &str {
        match self.all(instruction)[..] {
            [args] => args,
            ref found => panic!(
                "stage {:?}: expected one {instruction}, found {found:?}",
                self.name
            ),
        }
    }
}

/// The Dockerfile's stages, global `ARG` defaults substituted into `FROM`.
fn dockerfile() -> Vec<Stage> {
    let text = read("Dockerfile");
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part.trim());
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    let mut args = BTreeMap::new();
    let mut stages: Vec<Stage> = Vec::new();
    for line in logical.iter().filter(|l| !l.is_empty()) {
        let (instruction, rest) = line.split_once(' ').unwrap_or((line, ""));
        let instruction = instruction.to_uppercase();
        let rest = rest.trim().to_string();
        match (instruction.as_str(), stages.last_mut()) {
            ("ARG", None) => {
                let (name, default) = rest.split_once('=').unwrap_or((&rest, ""));
                args.insert(name.to_string(), default.to_string());
            }
            ("FROM", _) => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let mut image = words[0].to_string();
                for (name, value) in &args {
                    image = image.replace(&format!("${{{name}}}"), value);
                }
                let name = match words[1..] {
                    [] => None,
                    [as_, name] if as_.eq_ignore_ascii_case("as") => Some(name.to_string()),
                    _ => panic!("unexpected FROM {rest}"),
                };
                stages.push(Stage {
                    image,
                    name,
                    instructions: Vec::new(),
                });
            }
            (_, Some(stage)) => stage.instructions.push((instruction, rest)),
            (_, None) => panic!("{instruction} before the first FROM"),
        }
    }
    stages
}

fn stage<'a>(stages: &'a [Stage], name: &str) -> &'a Stage {
    stages
        .iter()
        .find(|s| s.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("the Dockerfile has no stage {name}"))
}

/// `COPY [--flags] SRC... DEST`: the flags, the sources and the destination.
fn copy_parts(args: &str) -> (Vec<&str>, Vec<&str>, &str) {
    let words: Vec<&str> = args.split_whitespace().collect();
    let (flags, paths): (Vec<&str>, Vec<&str>) = words.iter().partition(|w| w.starts_with("--"));
    let (dest, sources) = paths.split_last().expect("COPY has a destination");
    (flags, sources.to_vec(), dest)
}

fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| {
        p.parse::<u64>()
            .unwrap_or_else(|_| panic!("{text:?} is not a version"))
    });
    let major = parts.next().unwrap();
    (major, parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// `[[bin]]` targets of Cargo.toml: name to path.
fn cargo_bins() -> BTreeMap<String, String> {
    let manifest = read("Cargo.toml");
    let mut bins = BTreeMap::new();
    let mut in_bin = false;
    let mut name = None;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
            name = None;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_string();
        match (in_bin, key.trim()) {
            (true, "name") => name = Some(value),
            (true, "path") => {
                bins.insert(name.clone().expect("name before path in [[bin]]"), value);
            }
            _ => {}
        }
    }
    bins
}

fn cargo_rust_version() -> (u64, u64, u64) {
    let manifest = read("Cargo.toml");
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("rust-version"))
        .expect("Cargo.toml has a rust-version");
    version(line.split_once('=').unwrap().1.trim().trim_matches('"'))
}

#[test]
fn dockerfile_builds_both_binaries_in_one_stage_pinned_to_the_runtime_glibc() {
    let stages = dockerfile();
    let build = &stages[0];
    let bins = cargo_bins();

    // rust:<pinned version>-bookworm, at least the crate's rust-version.
    let pinned = build
        .image
        .strip_prefix("rust:")
        .and_then(|t| t.strip_suffix("-bookworm"))
        .unwrap_or_else(|| panic!("builder {} is not rust:<version>-bookworm", build.image));
    assert_eq!(
        pinned.split('.').count(),
        3,
        "builder tag {pinned} is not a full version"
    );
    assert!(
        version(pinned) >= cargo_rust_version(),
        "builder {pinned} is older than Cargo.toml's rust-version"
    );

    let run = build
        .all("RUN")
        .into_iter()
        .find(|r| r.contains("cargo build"))
        .expect("the build stage runs cargo build");
    assert!(run.contains("cargo build --release --locked"), "{run}");
    let words: Vec<&str> = run.split_whitespace().collect();
    let built: BTreeSet<&str> = words
        .windows(2)
        .filter(|w| w[0] == "--bin")
        .map(|w| w[1])
        .collect();
    let shipped: BTreeSet<&str> = PACKAGES.iter().map(|p| p.name).collect();
    assert_eq!(built, shipped, "the binaries the build stage builds");
    for bin in built {
        let path = bins
            .get(bin)
            .unwrap_or_else(|| panic!("{bin} is not a [[bin]] of Cargo.toml"));
        assert_eq!(path, &format!("src/bin/{bin}.rs"));
        assert!(root().join(path).is_file(), "{path}");
        assert!(run.contains(&format!("target/release/{bin}")), "{run}");
    }

    // What the build stage copies exists and passes .dockerignore, whose
    // `*` excludes everything it does not name again with `!`.
    let ignore = read(".dockerignore");
    let ignore: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(ignore.first(), Some(&"*"), ".dockerignore starts from *");
    for copy in build.all("COPY") {
        let (flags, sources, _) = copy_parts(copy);
        assert!(flags.is_empty(), "the build stage copies from the context");
        for source in sources {
            let source = source.trim_end_matches('/');
            assert!(root().join(source).exists(), "COPY {source}");
            assert!(
                ignore.contains(&format!("!{source}").as_str()),
                ".dockerignore excludes {source}, which the build copies"
            );
        }
    }
}

#[test]
fn each_runtime_stage_is_distroless_non_root_and_execs_its_binary() {
    let stages = dockerfile();
    let build = stages[0].name.clone().expect("the build stage is named");
    for package in &PACKAGES {
        let stage = stage(&stages, package.stage);
        // Debian 12 like the bookworm builder, glibc, no shell.
        assert_eq!(stage.image, "gcr.io/distroless/cc-debian12:nonroot");
        assert!(
            stage.all("RUN").is_empty(),
            "{}: RUN needs a shell the runtime image does not have",
            package.stage
        );

        let user = stage.one("USER");
        let uid: u32 = user.split(':').next().unwrap().parse().unwrap_or_else(|_| {
            panic!("USER {user} is not numeric: runAsNonRoot cannot verify it")
        });
        assert_ne!(uid, 0, "{}: USER is root", package.stage);

        let (flags, sources, dest) = copy_parts(stage.one("COPY"));
        assert_eq!(flags, [format!("--from={build}")]);
        assert_eq!(sources, [format!("/out/{}", package.name)]);

        let entrypoint: Vec<String> = serde_json::from_str(stage.one("ENTRYPOINT"))
            .unwrap_or_else(|_| panic!("{}: ENTRYPOINT is not in exec form", package.stage));
        assert_eq!(
            entrypoint,
            [dest.to_string()],
            "{}: ENTRYPOINT is the copied binary alone, so that a DeploymentRuntimeConfig's args follow it",
            package.stage
        );
        assert!(stage.all("CMD").is_empty(), "{}: CMD", package.stage);
    }
}

// --------------------------------------------------------------- the binaries

/// One option of a binary's `--help`.
struct HelpOption {
    long: String,
    env: Option<String>,
    default: Option<String>,
}

fn help(exe: &str) -> Vec<HelpOption> {
    let output = Command::new(exe)
        .arg("--help")
        .env_remove("METRICS_ADDRESS")
        .output()
        .unwrap();
    assert!(output.status.success(), "{exe} --help");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with('-') {
            blocks.push(line.to_string());
        } else if let Some(block) = blocks.last_mut() {
            block.push(' ');
            block.push_str(line.trim());
        }
    }
    let bracket = |block: &str, key: &str| {
        let start = block.find(&format!("[{key}: "))? + key.len() + 3;
        let end = start + block[start..].find(']')?;
        Some(block[start..end].to_string())
    };
    blocks
        .iter()
        .filter_map(|block| {
            let long = block
                .split([' ', ','])
                .find(|w| w.starts_with("--"))?
                .to_string();
            Some(HelpOption {
                long,
                // `[env: NAME=]`, or `[env: NAME=value]` when it is set.
                env: bracket(block, "env").map(|e| e.split('=').next().unwrap().to_string()),
                default: bracket(block, "default"),
            })
        })
        .collect()
}

/// The ports a binary listens on by default: its `--*address` defaults.
fn default_ports(exe: &str) -> BTreeSet<u16> {
    help(exe)
        .iter()
        .filter(|o| o.long.ends_with("address"))
        .filter_map(|o| o.default.as_deref())
        .map(|address| {
            let port = address.rsplit_once(':').expect("host:port").1;
            port.parse().unwrap_or_else(|_| panic!("{address}"))
        })
        .collect()
}

#[test]
fn exposed_ports_are_the_default_listen_ports_crossplane_wires() {
    let stages = dockerfile();
    for package in &PACKAGES {
        let stage = stage(&stages, package.stage);
        let exposed: BTreeSet<u16> = stage
            .all("EXPOSE")
            .iter()
            .flat_map(|args| args.split_whitespace())
            .map(|p| p.trim_end_matches("/tcp").parse().unwrap())
            .collect();
        assert_eq!(exposed, default_ports(package.exe), "{}", package.stage);
        assert!(
            exposed.contains(&CROSSPLANE_METRICS_PORT),
            "{}",
            package.stage
        );
    }
    assert!(stage(&stages, "function").all("EXPOSE").iter().any(|e| e
        .split_whitespace()
        .any(|p| p == CROSSPLANE_GRPC_PORT.to_string())));
}

// ------------------------------------------------------------------ packages

fn meta(package: &Package) -> Value {
    serde_saphyr::from_str(&read(format!("{}/crossplane.yaml", package.root))).unwrap()
}

/// Every document `crossplane xpkg build` puts into a package (it reads the
/// package root recursively) is its one metadata document or a CRD.
fn package_crds(package: &Package) -> BTreeMap<String, Value> {
    let mut metas = Vec::new();
    let mut crds = BTreeMap::new();
    for (path, doc) in documents(&root().join(package.root)) {
        let api_version = str_at(&doc, "/apiVersion");
        if api_version.starts_with("meta.pkg.crossplane.io/") {
            metas.push(path);
            continue;
        }
        assert_eq!(
            (api_version, str_at(&doc, "/kind")),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            "{}",
            path.display()
        );
        let name = str_at(&doc, "/metadata/name").to_string();
        assert!(crds.insert(name, doc).is_none(), "{} twice", path.display());
    }
    assert_eq!(
        metas,
        [root().join(package.root).join("crossplane.yaml")],
        "one metadata document per package"
    );
    crds
}

#[test]
fn the_provider_package_holds_exactly_the_crds_of_crds_folder() {
    let mut expected = BTreeMap::new();
    for (path, doc) in documents(&root().join("crds")) {
        let name = str_at(&doc, "/metadata/name").to_string();
        assert!(expected.insert(name, doc).is_none(), "{}", path.display());
    }
    let packaged = package_crds(&PACKAGES[0]);
    assert_eq!(
        packaged.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    assert_eq!(packaged, expected);
    for crd in packaged.values() {
        // Why composition needs Crossplane v2 (see the constraints below).
        assert_eq!(str_at(crd, "/spec/group"), "litellm.m.crossplane.io");
        assert_eq!(str_at(crd, "/spec/scope"), "Namespaced");
    }

    let function = package_crds(&PACKAGES[1]);
    assert!(
        !function.is_empty(),
        "the function package has its input schema"
    );
    for crd in function.values() {
        assert_eq!(str_at(crd, "/spec/group"), "litellm.fn.crossplane.io");
    }
}

/// The lowest version a `>=vX.Y.Z-0` constraint admits.
fn minimum(constraint: &str) -> (u64, u64, u64) {
    let bare = constraint
        .strip_prefix(">=v")
        .and_then(|c| c.strip_suffix("-0"))
        .unwrap_or_else(|| panic!("{constraint:?} is not of the form >=vX.Y.Z-0"));
    version(bare)
}

/// The README's section "Install into a cluster", up to the next `## `.
pub(crate) fn install_section() -> String {
    let readme = read("README.md");
    let start = readme
        .find("\n## Install into a cluster\n")
        .expect("README has an install section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    rest[..end].to_string()
}

#[test]
fn crossplane_version_constraints_are_the_ones_the_readme_explains() {
    let section = install_section();
    for package in &PACKAGES {
        let meta = meta(package);
        let constraint = str_at(&meta, "/spec/crossplane/version");
        let (major, minor, _) = minimum(constraint);
        match package.kind {
            // Installed with an embedded runtime image and a
            // DeploymentRuntimeConfig: both Crossplane 1.14.
            "Provider" => assert!((major, minor) >= (1, 14), "{constraint}"),
            // It renders namespaced managed resources, which a 1.x XR cannot
            // track; and a meta.pkg.crossplane.io/v1 Function needs 1.17.
            "Function" => {
                assert!(major >= 2, "{constraint}");
                let capabilities = meta["spec"]["capabilities"].as_array();
                assert!(
                    capabilities.is_some_and(|c| c.contains(&Value::from("composition"))),
                    "the function declares the composition capability"
                );
            }
            other => panic!("{other}"),
        }
        let stated = format!("`{}`: `crossplane.version: \"{constraint}\"`", package.name);
        assert!(
            section.contains(&stated),
            "the README's install section states {stated}"
        );
    }
}

// ------------------------------------------------- install commands, examples

/// The `docker build` and `crossplane xpkg build` command lines of a text.
fn build_commands(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("docker build ") || l.starts_with("crossplane xpkg build "))
        .map(str::to_string)
        .collect()
}

/// The `--name=value` and `--name value` options of a command line.
fn options(command: &str) -> BTreeMap<String, String> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut out = BTreeMap::new();
    for (i, word) in words.iter().enumerate() {
        let Some(option) = word.strip_prefix("--") else {
            continue;
        };
        match option.split_once('=') {
            Some((name, value)) => out.insert(name.to_string(), value.to_string()),
            None => out.insert(
                option.to_string(),
                words.get(i + 1).unwrap_or(&"").to_string(),
            ),
        };
    }
    out
}

/// The `crossplane xpkg build` options of a package, from package/build.sh.
fn xpkg_build(package: &Package) -> BTreeMap<String, String> {
    build_commands(&read("package/build.sh"))
        .iter()
        .map(|c| options(c))
        .find(|o| o.get("package-root").map(String::as_str) == Some(package.root))
        .unwrap_or_else(|| panic!("package/build.sh does not build {}", package.root))
}

#[test]
fn readme_install_section_gives_the_build_script_commands() {
    let section = install_section();
    let script = build_commands(&read("package/build.sh"));
    assert_eq!(build_commands(&section), script);

    let stages = dockerfile();
    assert!(section.contains(&format!("`{}`", stages[0].image)));
    for package in &PACKAGES {
        let runtime = stage(&stages, package.stage);
        assert!(section.contains(&format!("`{}`", runtime.image)));

        let docker: Vec<BTreeMap<String, String>> = script
            .iter()
            .filter(|c| c.starts_with("docker build ") && c.ends_with(" ."))
            .map(|c| options(c))
            .filter(|o| o.get("target").map(String::as_str) == Some(package.stage))
            .collect();
        let [docker] = &docker[..] else {
            panic!("one docker build --target {} ... .", package.stage);
        };
        let xpkg = xpkg_build(package);
        assert_eq!(xpkg.get("embed-runtime-image"), docker.get("tag"));
        assert_eq!(
            xpkg.get("package-file"),
            Some(&format!("{}.xpkg", package.name))
        );
        let examples = &xpkg["examples-root"];
        assert!(root().join(examples).is_dir(), "{examples}");
        // The examples root holds the runtime configuration the install
        // applies (and, for the provider, a manifest of every kind).
        assert!(
            root().join(examples).join("runtime-config").is_dir(),
            "{examples}/runtime-config"
        );
        assert!(
            section.contains(&format!("kubectl apply -f {examples}/runtime-config/")),
            "the install section applies {examples}/runtime-config"
        );
    }
}

/// The provider package's examples show every kind: its examples root holds
/// `examples/provider/managed/`, which `examples_managed` applies.
#[test]
fn the_provider_packages_examples_show_every_kind() {
    let root_dir = root().join(&xpkg_build(&PACKAGES[0])["examples-root"]);
    let kinds: BTreeSet<String> = documents(&root_dir)
        .iter()
        .filter_map(|(_, d)| d["kind"].as_str().map(str::to_owned))
        .filter(|k| k.starts_with("LiteLLM"))
        .collect();
    assert_eq!(kinds, crate::support::provider::every_kind());
}

/// Crossplane's examples parser reads each `---` document of the examples
/// root into an object that must have a kind; a document of comments only
/// fails the package build.
#[test]
fn every_document_of_the_examples_roots_is_an_object() {
    for package in &PACKAGES {
        let dir = root().join(&xpkg_build(package)["examples-root"]);
        let files = yaml_files(&dir);
        assert!(!files.is_empty(), "{}", dir.display());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            for chunk in text.split("\n---\n") {
                if chunk.trim().is_empty() {
                    continue;
                }
                let doc: Value = serde_saphyr::from_str(chunk)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(
                    doc["apiVersion"].is_string() && doc["kind"].is_string(),
                    "{}: a document without apiVersion and kind:\n{chunk}",
                    path.display()
                );
            }
        }
    }
}

/// The `DeploymentRuntimeConfig` of a package's examples root and the
/// package object that refers to it.
fn runtime_config(package: &Package) -> (Value, Value) {
    let docs = documents(&root().join(&xpkg_build(package)["examples-root"]));
    let find = |api_version: &str, kind: &str| {
        let found: Vec<&Value> = docs
            .iter()
            .map(|(_, d)| d)
            .filter(|d| d["apiVersion"] == api_version && d["kind"] == kind)
            .collect();
        let [one] = found[..] else {
            panic!("{}: expected one {kind}", package.name);
        };
        one.clone()
    };
    (
        find("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig"),
        find("pkg.crossplane.io/v1", package.kind),
    )
}

#[test]
fn runtime_configs_pass_only_flags_and_env_the_binaries_accept() {
    let function_packages: BTreeSet<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path().join("functions.yaml"))
        .filter(|p| p.exists())
        .map(|p| {
            // Other functions an example pipeline calls (patch-and-transform)
            // are installed beside this one.
            let docs: Vec<Value> =
                serde_saphyr::from_str_multiple(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let ours: Vec<&Value> = docs
                .iter()
                .filter(|d| d.pointer("/metadata/name") == Some(&Value::from("function-litellm")))
                .collect();
            let [ours] = ours[..] else {
                panic!(
                    "{}: expected one Function named function-litellm",
                    p.display()
                );
            };
            str_at(ours, "/spec/package").to_string()
        })
        .collect();

    for package in &PACKAGES {
        let (config, installed) = runtime_config(package);
        let name = str_at(&config, "/metadata/name");
        assert_eq!(str_at(&installed, "/spec/runtimeConfigRef/name"), name);
        let reference = str_at(&installed, "/spec/package");
        let repository = reference.rsplit_once(':').expect("a tagged package").0;
        assert!(
            repository.ends_with(&format!("/{}", package.name)),
            "{reference}"
        );
        if package.kind == "Function" {
            assert_eq!(
                function_packages,
                BTreeSet::from([reference.to_string()]),
                "examples/*/functions.yaml install the same package"
            );
        }

        // Required by the DeploymentRuntimeConfig schema.
        let spec = &config["spec"]["deploymentTemplate"]["spec"];
        assert!(spec["selector"].is_object() && spec["template"].is_object());
        let containers = spec["template"]["spec"]["containers"].as_array().unwrap();
        let runtime: Vec<&Value> = containers
            .iter()
            .filter(|c| c["name"] == "package-runtime")
            .collect();
        let [runtime] = runtime[..] else {
            panic!("{name}: one container named package-runtime, the one Crossplane runs the package in");
        };

        // clap checks every value before it prints the help.
        let args: Vec<&str> = runtime["args"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        let mut flags: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let known = help(package.exe);
        for env in runtime["env"].as_array().into_iter().flatten() {
            let var = str_at(env, "/name");
            let option = known
                .iter()
                .find(|o| o.env.as_deref() == Some(var))
                .unwrap_or_else(|| panic!("{} reads no {var}", package.name));
            flags.push(format!("{}={}", option.long, str_at(env, "/value")));
        }
        let status = Command::new(package.exe)
            .args(&flags)
            .arg("--help")
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "{} rejects {flags:?}", package.name);
    }
}

/// (API group, resource, verb) of every rule.
fn grants(rules: &Value) -> BTreeSet<(String, String, String)> {
    let list = |rule: &Value, key: &str| -> Vec<String> {
        rule[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} in {rule}"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let mut out = BTreeSet::new();
    for rule in rules.as_array().unwrap() {
        for group in list(rule, "apiGroups") {
            for resource in list(rule, "resources") {
                for verb in list(rule, "verbs") {
                    out.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    out
}

#[test]
fn provider_rbac_is_bound_to_the_runtime_config_service_account() {
    let provider = &PACKAGES[0];
    let (config, _) = runtime_config(provider);
    let service_account = str_at(&config, "/spec/serviceAccountTemplate/metadata/name");

    let docs = documents(&root().join(&xpkg_build(provider)["examples-root"]));
    let of_kind = |kind: &str| -> Vec<Value> {
        docs.iter()
            .map(|(_, d)| d)
            .filter(|d| d["apiVersion"] == "rbac.authorization.k8s.io/v1" && d["kind"] == kind)
            .cloned()
            .collect()
    };
    let (roles, bindings) = (of_kind("ClusterRole"), of_kind("ClusterRoleBinding"));
    let ([role], [binding]) = (&roles[..], &bindings[..]) else {
        panic!("one ClusterRole and one ClusterRoleBinding");
    };
    assert_eq!(
        role["metadata"]["labels"]["rbac.crossplane.io/aggregate-to-allowed-provider-permissions"],
        "true"
    );
    assert_eq!(str_at(binding, "/roleRef/kind"), "ClusterRole");
    assert_eq!(
        str_at(binding, "/roleRef/name"),
        str_at(role, "/metadata/name")
    );
    let subjects = binding["subjects"].as_array().unwrap();
    assert_eq!(subjects.len(), 1);
    assert_eq!(str_at(&subjects[0], "/kind"), "ServiceAccount");
    assert_eq!(str_at(&subjects[0], "/name"), service_account);
    assert_eq!(str_at(&subjects[0], "/namespace"), "crossplane-system");

    // Crossplane 1.x grants a provider nothing while it requests anything the
    // ClusterRoles with that label do not allow, so whatever the package
    // requests, this role allows.
    if let Some(requests) = meta(provider).pointer("/spec/controller/permissionRequests") {
        let missing: Vec<_> = grants(requests)
            .difference(&grants(&role["rules"]))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "package/provider/crossplane.yaml requests what rbac.yaml does not allow: {missing:?}"
        );
    }
}
