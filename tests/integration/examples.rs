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
        let rendered =
            to_yaml(&render(&files(&dir)).unwrap_or_else(|e| panic!("{}: {e}", dir.display())));
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
        .unwrap();
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
