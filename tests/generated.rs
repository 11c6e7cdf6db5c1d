//! The checked-in `crds/` and `package/` schemas are what the Rust types
//! generate. Regenerate with `cargo run --bin crdgen`.

use std::path::Path;

#[test]
fn generated_files_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stale = Vec::new();
    for file in litellm_crossplane::api::generate::all_files() {
        let current = std::fs::read_to_string(root.join(&file.path)).unwrap_or_default();
        if current != file.contents {
            stale.push(file.path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files, run `cargo run --bin crdgen`: {stale:?}"
    );
}

#[test]
fn no_yaml_file_in_a_generated_folder_is_left_over() {
    // A renamed kind or API group leaves the old CRD file behind, where
    // `kubectl apply -f crds/` would install both.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let generated: Vec<String> = litellm_crossplane::api::generate::all_files()
        .into_iter()
        .map(|f| f.path)
        .collect();
    for folder in ["crds", "package/provider/crds", "package/function/input"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap().flatten() {
            let path = format!("{folder}/{}", entry.file_name().to_string_lossy());
            assert!(
                !path.ends_with(".yaml") || generated.contains(&path),
                "{path} is no longer generated, run `cargo run --bin crdgen`"
            );
        }
    }
}

#[test]
fn package_metadata_names_both_programs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, kind, name) in [
        (
            "package/function/crossplane.yaml",
            "Function",
            "function-litellm",
        ),
        (
            "package/provider/crossplane.yaml",
            "Provider",
            "provider-litellm",
        ),
    ] {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let meta: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(meta["apiVersion"], "meta.pkg.crossplane.io/v1", "{path}");
        assert_eq!(meta["kind"], kind, "{path}");
        assert_eq!(meta["metadata"]["name"], name, "{path}");
    }
}
