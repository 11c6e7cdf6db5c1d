//! Writes `crds/` and the function's input schema from the Rust types.
//! `cargo run --bin crdgen` from the repository root; `--check` fails when a
//! checked-in file differs instead of writing. A file in a generated folder
//! that this program once wrote (it starts with its header) and the types
//! no longer produce (a renamed kind or API group) is stale too: `--check`
//! names it, a plain run removes it. Any other file there is left alone.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use litellm_crossplane::api::generate::HEADER;

#[derive(Parser, Debug)]
#[command(
    name = "crdgen",
    version,
    about = "Writes crds/, package/*/crds/ and the function's input schema from the Rust types \
             (run from the repository root)"
)]
struct Args {
    /// Change nothing; fail, naming them, when generated files differ from
    /// what the types produce.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let check = Args::parse().check;
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

/// YAML files in the generated folders that this program wrote and no
/// generated file names any more.
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
            let ours = std::fs::read_to_string(&path).is_ok_and(|text| text.starts_with(HEADER));
            if path.extension().is_some_and(|e| e == "yaml") && !generated.contains(&path) && ours {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
