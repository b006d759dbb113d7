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

impl ReviewRequest {
    /// A review as typed after a `/review` command (ACP's slash command):
    /// the CLI's words, `--level quick|thorough` (or `quick`, `thorough`),
    /// `--last-run`, `--branch BASE`, `--range A..B`, or files; nothing:
    /// the uncommitted changes at the quick level.
    pub fn parse(text: &str) -> Result<ReviewRequest, String> {
        let mut request = ReviewRequest::default();
        let mut files = Vec::new();
        let mut words = text.split_whitespace();
        let mut scopes = 0;
        while let Some(word) = words.next() {
            match word {
                "quick" | "thorough" => request.level = Level::parse(word).unwrap_or_default(),
                "--level" => {
                    let level = words.next().unwrap_or_default();
                    request.level = Level::parse(level).ok_or_else(|| format!("--level \"{level}\": say quick or thorough"))?;
                }
                "--last-run" => {
                    request.scope = Scope::LastRun;
                    scopes += 1;
                }
                "--branch" | "--range" => {
                    let value = words.next().ok_or_else(|| format!("{word} needs a value"))?.to_string();
                    request.scope = if word == "--branch" { Scope::Branch(value) } else { Scope::Range(value) };
                    scopes += 1;
                }
                flag if flag.starts_with("--") => return Err(format!("{flag}: /review takes --level, --last-run, --branch BASE, --range A..B, or files")),
                file => files.push(file.to_string()),
            }
        }
        if !files.is_empty() {
            request.scope = Scope::Files(files);
            scopes += 1;
        }
        if scopes > 1 {
            return Err("give one scope: --last-run, --branch, --range, or files".to_string());
        }
        Ok(request)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn review_words_are_parsed_as_the_cli_takes_them() {
        assert_eq!(ReviewRequest::parse(""), Ok(ReviewRequest::default()));
        assert_eq!(ReviewRequest::parse("thorough --last-run"), Ok(ReviewRequest { scope: Scope::LastRun, level: Level::Thorough }));
        assert_eq!(ReviewRequest::parse("--branch main --level quick"), Ok(ReviewRequest { scope: Scope::Branch("main".into()), level: Level::Quick }));
        assert_eq!(ReviewRequest::parse("a.rs b.rs").map(|r| r.scope), Ok(Scope::Files(vec!["a.rs".into(), "b.rs".into()])));
        assert!(ReviewRequest::parse("--range").is_err());
        assert!(ReviewRequest::parse("--fix").is_err());
        assert!(ReviewRequest::parse("--last-run a.rs").is_err());
        assert!(ReviewRequest::parse("--level deep").is_err());
    }
}
