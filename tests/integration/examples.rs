//! Every example under `examples/` renders to its expected output, through
//! the same code `function-litellm render` runs.
//! `UPDATE_EXPECTED=1 cargo test --test integration examples::` rewrites the
//! expected files.

use std::path::{Path, PathBuf};

use litellm_crossplane::function::render::{render, to_yaml, RenderFiles};

fn example_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"))
            .expect("examples/ exists")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.join("xr.yaml").exists())
            .collect();
    dirs.sort();
    dirs
}

fn files(dir: &Path) -> RenderFiles {
    let optional = |name: &str| Some(dir.join(name)).filter(|p| p.exists());
    RenderFiles {
        xr: dir.join("xr.yaml"),
        composition: dir.join("composition.yaml"),
        observed: optional("observed.yaml"),
        required: optional("required.yaml"),
    }
}

#[test]
fn every_example_renders_to_its_expected_output() {
    let dirs = example_dirs();
    assert!(
        dirs.len() >= 2,
        "expected at least two examples, found {dirs:?}"
    );
    for dir in dirs {
        let rendered = render(&files(&dir)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(
            rendered.warnings,
            Vec::<String>::new(),
            "{}: its files are what Crossplane would supply",
            dir.display()
        );
        let rendered = to_yaml(&rendered.documents);
        let expected_path = dir.join("expected.yaml");
        if std::env::var_os("UPDATE_EXPECTED").is_some() {
            std::fs::write(&expected_path, &rendered).expect("write expected output");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        assert_eq!(rendered, expected, "{} renders differently", dir.display());
    }
}

#[test]
fn every_example_has_the_crossplane_files() {
    for dir in example_dirs() {
        for name in [
            "xrd.yaml",
            "composition.yaml",
            "functions.yaml",
            "functions-dev.yaml",
            "expected.yaml",
        ] {
            assert!(dir.join(name).exists(), "{} lacks {name}", dir.display());
        }
        let dev = std::fs::read_to_string(dir.join("functions-dev.yaml")).unwrap();
        assert!(
            dev.contains("render.crossplane.io/runtime: Development"),
            "{}",
            dir.display()
        );
    }
}

/// Without observed state the function has no verdict on any composed
/// resource: readiness is left unspecified (a later step may decide it;
/// Crossplane counts it not ready), and the XR is not ready.
#[test]
fn rendering_without_observed_state_reports_nothing_ready() {
    for dir in example_dirs() {
        let docs = render(&RenderFiles {
            observed: None,
            required: None,
            ..files(&dir)
        })
        .unwrap()
        .documents;
        assert_eq!(docs[0]["status"]["ready"], false, "{}", dir.display());
        for doc in &docs[1..] {
            if doc["kind"] == "Result" {
                continue;
            }
            assert_eq!(
                doc["metadata"]["annotations"]["render.crossplane.io/ready"],
                "unspecified",
                "{}: {}",
                dir.display(),
                doc["metadata"]["name"]
            );
        }
    }
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "render-{}-{}-{name}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::write(&path, text).unwrap();
    path
}

/// A required resource that is not the instance the XR references is left
/// out, as Crossplane would never supply it, and named in a warning with
/// what the XR references.
#[test]
fn a_required_instance_of_another_name_is_a_warning_and_not_used() {
    let dir = example("attach-existing-v2");
    let required = std::fs::read_to_string(dir.join("required.yaml")).unwrap();
    assert!(required.contains("  name: shared\n"), "{required}");
    let other = temp_file(
        "required.yaml",
        &required.replacen("  name: shared\n", "  name: somebody-else\n", 1),
    );
    let rendered = render(&RenderFiles {
        required: Some(other.clone()),
        ..files(&dir)
    })
    .unwrap();
    let _ = std::fs::remove_file(&other);
    assert_eq!(rendered.warnings.len(), 1, "{:?}", rendered.warnings);
    let warning = &rendered.warnings[0];
    assert!(
        warning.contains("LiteLLMInstance litellm/somebody-else")
            && warning.contains("references the LiteLLMInstance litellm/shared"),
        "{warning}"
    );
    let xr = &rendered.documents[0];
    assert_eq!(xr["status"]["instanceReady"], false, "{xr}");
    assert!(xr["status"].get("endpoint").is_none(), "{xr}");
}

/// The observed file passed where the required instance goes: each
/// composed resource is named as belonging to --observed-resources.
#[test]
fn observed_resources_given_as_required_say_where_they_belong() {
    let dir = example("attach-existing-v2");
    let rendered = render(&RenderFiles {
        required: Some(dir.join("observed.yaml")),
        ..files(&dir)
    })
    .unwrap();
    assert!(!rendered.warnings.is_empty());
    for warning in &rendered.warnings {
        assert!(
            warning.contains("it belongs in --observed-resources")
                && warning.contains("LiteLLMInstance litellm/shared"),
            "{warning}"
        );
    }
    assert_eq!(rendered.documents[0]["status"]["instanceReady"], false);
}

/// A file of the wrong kind for its argument says so.
#[test]
fn files_of_the_wrong_kind_are_named() {
    let dir = example("attach-existing-v2");
    let err = render(&RenderFiles {
        xr: dir.join("composition.yaml"),
        ..files(&dir)
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("Composition, not an XR") && err.contains("composition.yaml"),
        "{err}"
    );
    let err = render(&RenderFiles {
        xr: dir.join("required.yaml"),
        ..files(&dir)
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("LiteLLMInstance, not an XR"), "{err}");
    let err = render(&RenderFiles {
        observed: Some(dir.join("required.yaml")),
        ..files(&dir)
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("LiteLLMInstance litellm/shared has no annotation")
            && err.contains("goes to --required-resources"),
        "{err}"
    );
}

/// Required resources for an XR whose instance is composed, not
/// referenced, are not asked for: a warning, not silence.
#[test]
fn required_resources_nobody_asked_for_are_a_warning() {
    let dir = example("provision-v1-claim");
    let rendered = render(&RenderFiles {
        required: Some(example("attach-existing-v2").join("required.yaml")),
        ..files(&dir)
    })
    .unwrap();
    assert_eq!(rendered.warnings.len(), 1, "{:?}", rendered.warnings);
    assert!(
        rendered.warnings[0].contains("asked for no resource"),
        "{:?}",
        rendered.warnings
    );
}

/// `examples/README.md` gives one command per function example folder; run
/// as written (from the repository's root, with the built binary), each
/// prints the folder's `expected.yaml` byte for byte and warns of nothing.
#[test]
fn the_command_given_for_each_folder_prints_its_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("examples/README.md")).unwrap();
    let prefix = "cargo run --quiet --bin function-litellm -- ";
    let commands: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    let mut folders = Vec::new();
    for command in &commands {
        let args: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(args[0], "render", "{command}");
        let folder = Path::new(args[1]).parent().unwrap().to_path_buf();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_function-litellm"))
            .args(&args)
            .current_dir(root)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{command}: {stderr}");
        assert_eq!(stderr, "", "{command} warns");
        let expected = std::fs::read_to_string(root.join(&folder).join("expected.yaml")).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{command}"
        );
        for arg in &args[1..] {
            if !arg.starts_with("--") {
                assert!(
                    Path::new(arg).starts_with(&folder),
                    "{command}: {arg} is of another folder"
                );
            }
        }
        folders.push(root.join(folder));
    }
    folders.sort();
    assert_eq!(folders, example_dirs(), "one command per example folder");
}
