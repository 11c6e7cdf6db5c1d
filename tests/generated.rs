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
    assert!(stale.is_empty(), "stale generated files, run `cargo run --bin crdgen`: {stale:?}");
}
