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

/// `docs/tenancy.md` shows the table of provider families and the refused
/// parameters as `src/provider/kinds/upstream/families.rs` has them. `UPDATE_EXPECTED=1`
/// rewrites the marked blocks.
#[test]
fn the_tenancy_docs_show_the_families_table() {
    use litellm_crossplane::provider::kinds::upstream::families;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tenancy.md");
    let text = std::fs::read_to_string(&path).expect("docs/tenancy.md");
    let mut updated = text.clone();
    for (name, block) in [
        ("families", families::markdown_table()),
        ("refused", families::refused_markdown()),
    ] {
        let begin = format!(
            "<!-- {name}:begin (generated from src/provider/kinds/upstream/families.rs) -->\n"
        );
        let end = format!("<!-- {name}:end -->");
        let start = updated.find(&begin).expect("the begin marker") + begin.len();
        let stop = start + updated[start..].find(&end).expect("the end marker");
        updated.replace_range(start..stop, &block);
    }
    if std::env::var_os("UPDATE_EXPECTED").is_some() {
        std::fs::write(&path, &updated).unwrap();
        return;
    }
    assert!(
        text == updated,
        "docs/tenancy.md differs from src/provider/kinds/upstream/families.rs; run \
         `UPDATE_EXPECTED=1 cargo test --test integration generated::`"
    );
}

/// Every kind's status as crossplane-runtime declares it: conditions a map
/// list keyed by `type` (one of each), `observedGeneration`, and the
/// reconcile-request token handled; the instance's conditions too, and
/// READY and SYNCED columns on every kind.
#[test]
fn every_status_is_shaped_as_crossplane_runtimes() {
    let crds = std::fs::read_dir("package/provider/crds").unwrap();
    let mut seen = 0;
    for entry in crds {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let crd: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let name = crd["metadata"]["name"].as_str().unwrap().to_owned();
        let version = &crd["spec"]["versions"][0];
        let status = &version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
        let conditions = &status["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map", "{name}");
        assert_eq!(
            conditions["x-kubernetes-list-map-keys"],
            serde_json::json!(["type"]),
            "{name}"
        );
        assert!(status["observedGeneration"].is_object(), "{name}");
        let columns: Vec<&str> = version["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert!(
            columns.starts_with(&["READY", "SYNCED"]),
            "{name}: {columns:?}"
        );
        if !name.starts_with("litellminstances.") {
            assert!(status["lastHandledReconcileAt"].is_object(), "{name}");
        }
        seen += 1;
    }
    assert_eq!(seen, litellm_crossplane::api::MANAGED_KINDS.len() + 1);
}
