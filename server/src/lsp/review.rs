//! `tandem.review`: the review of a scope (the CLI's scopes: the
//! uncommitted changes, the last run's, a branch against its base, a
//! commit range, or files) as a run of `tandem.ask`'s with the read-only
//! tools and `report_finding`; its findings become diagnostics
//! (`findings.rs`) as they are reported.
//!
//! Arguments: `{"scope"?: "uncommitted" | "lastRun" | "branch" | "range" |
//! "files", "base"?, "range"?, "files"?: [path or file URI], "level"?:
//! "quick" | "thorough", "threadId"?, "wait"?}`. The answer is
//! `tandem.ask`'s, with `skipped` (`[{"path", "reason"}]`) and, when it
//! waited, the run's `findings`; with nothing to review, no run starts and
//! the answer is `{"nothingToReview": sentence}`.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::documents::uri_to_path;
use crate::review::{Level, ReviewPrompt, ReviewRequest, Scope, ScopeError};
use crate::workspace::Workspace;

pub const REVIEW_COMMAND: &str = "tandem.review";

/// The argument object of `tandem.review`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewArgs {
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub range: Option<String>,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub level: Option<String>,
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default = "wait_by_default")]
    pub wait: bool,
}

fn wait_by_default() -> bool {
    true
}

impl ReviewArgs {
    /// The review asked for; `Err` says which argument is wrong.
    pub fn request(&self, workspace: &Workspace) -> Result<ReviewRequest, String> {
        let level = match self.level.as_deref() {
            None => Level::default(),
            Some(level) => Level::parse(level).ok_or_else(|| format!("tandem.review: level \"{level}\" is not quick or thorough"))?,
        };
        let scope = match self.scope.as_deref() {
            None if !self.files.is_empty() => Scope::Files(self.file_names(workspace)?),
            None | Some("uncommitted") => Scope::Uncommitted,
            Some("lastRun") => Scope::LastRun,
            Some("branch") => Scope::Branch(self.base.clone().ok_or("tandem.review: scope \"branch\" needs \"base\"")?),
            Some("range") => Scope::Range(self.range.clone().ok_or("tandem.review: scope \"range\" needs \"range\" (A..B)")?),
            Some("files") if !self.files.is_empty() => Scope::Files(self.file_names(workspace)?),
            Some("files") => return Err("tandem.review: scope \"files\" needs \"files\"".to_string()),
            Some(other) => return Err(format!("tandem.review: scope \"{other}\" is not uncommitted, lastRun, branch, range or files")),
        };
        Ok(ReviewRequest { scope, level })
    }

    /// The files named, as paths of the workspace (a `file:` URI made one).
    fn file_names(&self, workspace: &Workspace) -> Result<Vec<String>, String> {
        self.files
            .iter()
            .map(|name| match name.parse::<tower_lsp_server::ls_types::Uri>() {
                Ok(uri) if uri.scheme().as_str().eq_ignore_ascii_case("file") => {
                    uri_to_path(&uri).map(|path| workspace.display_path(&path)).ok_or_else(|| format!("tandem.review: {name} is no file"))
                }
                _ => Ok(name.clone()),
            })
            .collect()
    }
}

/// The review's prompt, off the async workers (git runs); `Ok(Err(answer))`:
/// nothing to review, and the answer that says so.
pub async fn prepare(workspace: Arc<Workspace>, checkpoints: Option<Arc<crate::checkpoint::Checkpoints>>, request: ReviewRequest) -> Result<Result<ReviewPrompt, Value>, String> {
    let prepared = tokio::task::spawn_blocking(move || crate::review::prepare(&workspace, checkpoints.as_deref(), &request))
        .await
        .map_err(|err| format!("tandem.review: {err}"))?;
    match prepared {
        Ok(prompt) => Ok(Ok(prompt)),
        Err(ScopeError::NothingToReview(why)) => Ok(Err(json!({"nothingToReview": why}))),
        Err(ScopeError::Unavailable(why)) => Err(format!("tandem.review: {why}")),
    }
}

/// What the answer says was skipped.
pub fn skipped(prompt: &ReviewPrompt) -> Value {
    json!(prompt.skipped.iter().map(|s| json!({"path": s.path, "reason": s.reason})).collect::<Vec<_>>())
}
