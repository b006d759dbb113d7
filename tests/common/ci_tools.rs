//! Where `.ci/tools` installs the tools the real-client tests drive: one
//! cache on the machine, outside the clone, so every clone and worktree
//! shares it (`$TANDEM_CI_TOOLS`, by default `~/.cache/tandem-ci-tools`).

use std::path::PathBuf;

pub fn ci_tools() -> PathBuf {
    if let Some(dir) = std::env::var_os("TANDEM_CI_TOOLS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
    home.join(".cache/tandem-ci-tools")
}
