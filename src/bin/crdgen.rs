//! Writes `crds/` and the function's input schema from the Rust types.
//! `cargo run --bin crdgen` from the repository root; `--check` fails when a
//! checked-in file differs instead of writing.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let mut stale = Vec::new();
    for file in litellm_crossplane::api::generate::all_files() {
        let path = Path::new(&file.path);
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current == file.contents {
            continue;
        }
        if check {
            stale.push(file.path);
            continue;
        }
        if let Some(dir) = path.parent() {
            if let Err(e) = std::fs::create_dir_all(dir) {
                eprintln!("cannot create {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
        if let Err(e) = std::fs::write(path, &file.contents) {
            eprintln!("cannot write {}: {e}", file.path);
            return ExitCode::FAILURE;
        }
        println!("wrote {}", file.path);
    }
    if !stale.is_empty() {
        eprintln!(
            "stale generated files (run `cargo run --bin crdgen`): {}",
            stale.join(", ")
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
