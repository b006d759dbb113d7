//! Finding the tools the real-client tests drive, and skipping a test when
//! one is missing. `.ci/tools` installs them into one cache on the machine,
//! outside the clone, so every clone and worktree shares it
//! (`$TANDEM_CI_TOOLS`, by default `~/.cache/tandem-ci-tools`); `.ci/run`
//! sets a `TANDEM_REQUIRE_*` variable per tool, under which a missing tool
//! fails the test instead of skipping it: CI must never pass by skipping.

use std::path::{Path, PathBuf};

/// The tools cache.
pub fn ci_tools() -> PathBuf {
    if let Some(dir) = std::env::var_os("TANDEM_CI_TOOLS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
    home.join(".cache/tandem-ci-tools")
}

/// A program's path, looked up in PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|dir| Path::new(dir).join(name)).find(|p| p.is_file())
}

/// Says that `test` is skipped because `missing` is, or fails it when
/// `require` (a `TANDEM_REQUIRE_*` variable) is set.
pub fn skip(test: &str, require: &str, missing: &str) {
    assert!(std::env::var_os(require).is_none(), "{require} is set but {missing} (bash .ci/run installs it)");
    skipped(format!("{test}: {missing} (bash .ci/run installs it)"));
}

/// What this test binary skipped, for the summary a harness prints at its
/// end (the line a test prints scrolls away among the others).
static SKIPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Say that `what` (a test, and why) is skipped, and keep it for the summary.
pub fn skipped(what: String) {
    eprintln!("SKIPPED {what}");
    SKIPPED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(what);
}

/// Everything skipped so far, in the order it was.
pub fn skipped_so_far() -> Vec<String> {
    SKIPPED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
}
