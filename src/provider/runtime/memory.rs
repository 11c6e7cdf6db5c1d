//! How the provider's process holds its memory: in small pages.
//!
//! mimalloc (the provider's allocator) asks the kernel for transparent
//! huge pages on the regions it reserves (`madvise(MADV_HUGEPAGE)`, its
//! default `allow_thp` on Linux), and where the node's THP setting is
//! `always` every large anonymous region gets them unasked. A huge page is
//! 2 MiB, resident as a whole from its first touched byte: a heap of many
//! small objects (the caches hold one or two per managed resource) spread
//! over partly used 2 MiB pages is resident far beyond what it holds.
//! Measured with the bench (bench notes: git history of docs/provider-benchmark.md, 4 December 2026,
//! night): at 3,000 teams and 3,000 keys the provider's anonymous memory in
//! the steady state was 54.1 MiB with 18.0 MiB of it in huge pages, and
//! 31.3 MiB with them off, with the same objects cached.
//!
//! So the provider turns THP off for its own process
//! (`prctl(PR_SET_THP_DISABLE)`, Linux 3.15 and later; the node's setting
//! is untouched), as mimalloc does itself where `MIMALLOC_ALLOW_THP=0` is
//! set. A deployment that wants huge pages anyway sets `MIMALLOC_ALLOW_THP`
//! to anything but `0`, and the provider leaves the kernel's and
//! mimalloc's choice alone.

/// Whether the pages of this process were kept small: `false` where
/// `MIMALLOC_ALLOW_THP` asks for huge pages, on other systems, or where
/// the kernel refused.
pub fn keep_pages_small() -> bool {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some_and(|v| v != "0") {
        return false;
    }
    disable_thp()
}

#[cfg(target_os = "linux")]
fn disable_thp() -> bool {
    // SAFETY: PR_SET_THP_DISABLE takes one integer argument and touches no
    // memory of the caller; the trailing arguments must be zero.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn disable_thp() -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The flag is per process and inherited: checked in a child, so that
    /// the test binary's other tests keep the machine's setting.
    #[test]
    fn the_process_asks_for_small_pages() {
        if std::env::var_os("MEMORY_TEST_CHILD").is_some() {
            // SAFETY: PR_GET_THP_DISABLE takes no argument.
            let before = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            let kept = keep_pages_small();
            let after = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            println!("THP disabled: before {before}, kept {kept}, after {after}");
            return;
        }
        // This test's name in the harness, without the crate's.
        let test_name = format!(
            "{}::the_process_asks_for_small_pages",
            module_path!().split_once("::").unwrap().1
        );
        let run = |allow: Option<&str>| {
            let mut command = std::process::Command::new(std::env::current_exe().unwrap());
            command
                .args(["--exact", &test_name, "--nocapture"])
                .env("MEMORY_TEST_CHILD", "1")
                .env_remove("MIMALLOC_ALLOW_THP");
            if let Some(allow) = allow {
                command.env("MIMALLOC_ALLOW_THP", allow);
            }
            String::from_utf8(command.output().unwrap().stdout).unwrap()
        };
        let off = run(None);
        assert!(off.contains("kept true, after 1"), "{off}");
        let explicit_off = run(Some("0"));
        assert!(
            explicit_off.contains("kept true, after 1"),
            "{explicit_off}"
        );
        // Huge pages asked for: the flag stays as the process found it.
        let wanted = run(Some("1"));
        assert!(
            wanted.contains("before 0, kept false, after 0")
                || wanted.contains("before 1, kept false, after 1"),
            "{wanted}"
        );
    }
}
