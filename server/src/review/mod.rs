//! Reviews: the agent reads a scope of changes (the uncommitted ones, the
//! last run's, a branch against its base, a commit range, or files named)
//! with the read-only tools and reports findings through `report_finding`
//! ([`crate::protocol::Finding`]). This module turns a scope into the
//! review's prompt, for every front end (`tandem review`, the LSP's
//! `tandem.review`, ACP's `/review`); the host runs it as a review run
//! ([`crate::host::RunParts::review`]).
//!
//! - [`scope`]: which changes, from git or the last run's checkpoint, split
//!   by file and bounded: a file whose diff is too large, the files past
//!   the review's size, binary and generated files are skipped and said.
//! - [`prompt`]: the level's instructions, the project's own rules
//!   (`.tandem/REVIEW.md`, read confined to the workspace like the other
//!   instruction files), what was skipped, and the diffs.

pub mod prompt;
pub mod scope;

pub use prompt::{Level, ReviewPrompt};
pub use scope::{Collected, Scope, ScopeError, Skipped};

use std::path::Path;

use crate::checkpoint::Checkpoints;
use crate::workspace::Workspace;

/// A review asked for: what, and how hard.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReviewRequest {
    pub scope: Scope,
    pub level: Level,
}

/// The review's prompt for `request` in `workspace`; `Err` says why there
/// is nothing to review or the scope cannot be read.
pub fn prepare(workspace: &Workspace, checkpoints: Option<&Checkpoints>, request: &ReviewRequest) -> Result<ReviewPrompt, ScopeError> {
    let collected = scope::collect(workspace, checkpoints, &request.scope)?;
    Ok(prompt::build(workspace, request, collected))
}

/// `.tandem/REVIEW.md` under `root`.
pub fn rules_path(root: &Path) -> std::path::PathBuf {
    root.join(".tandem").join("REVIEW.md")
}
