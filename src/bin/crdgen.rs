//! Writes `crds/` and the function's input schema from the Rust types.
//! `cargo run --bin crdgen` from the repository root; `--check` fails when a
//! checked-in file differs instead of writing. A YAML file in a generated
//! folder that the types no longer produce (a renamed kind or API group) is
//! stale too: `--check` names it, a plain run removes it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let files = litellm_crossplane::api::generate::all_files();
    let mut stale = Vec::new();
    for file in &files {
        let path = Path::new(&file.path);
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current == file.contents {
            continue;
        }
        if check {
            stale.push(file.path.clone());
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
    for leftover in leftovers(&files) {
        let shown = leftover.display().to_string();
        if check {
            stale.push(format!("{shown} (no longer generated)"));
            continue;
        }
        if let Err(e) = std::fs::remove_file(&leftover) {
            eprintln!("cannot remove {shown}: {e}");
            return ExitCode::FAILURE;
        }
        println!("removed {shown}");
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

/// YAML files in the generated folders that no generated file names.
fn leftovers(files: &[litellm_crossplane::api::generate::GeneratedFile]) -> Vec<PathBuf> {
    let generated: BTreeSet<PathBuf> = files.iter().map(|f| PathBuf::from(&f.path)).collect();
    let folders: BTreeSet<PathBuf> = generated
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let mut found = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = folder.join(entry.file_name());
            if path.extension().is_some_and(|e| e == "yaml") && !generated.contains(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
