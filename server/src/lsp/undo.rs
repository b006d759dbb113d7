//! `tandem.undo` / `tandem.redo` `[{"runId"?: string, "perHunk"?: bool}]`: take a run's
//! changes back (or put them back) from its checkpoint, answering
//! `{"runId", "checkpoint", "files": [{"uri", "status", "reason"?}]}` (the
//! run id as its front end named it, the checkpoint's own id) with each file
//! `restored`, `unchanged` or `conflict`.
//!
//! Without a `runId`: the workspace's last run not undone (redo: the run
//! undone last). The restore itself is [`crate::checkpoint::restore`]:
//! an open document changes only through a versioned `workspace/applyEdit`,
//! reviewed by the session's permission policy as any edit (in `default`
//! mode the editor's own preview, or an "apply edit?" prompt), each file
//! whole (one change from its first changed line to its last) unless
//! `perHunk` asks for the review hunk by hunk; a file that
//! is not open is written whole and atomically on disk. A file the user
//! changed since in the run's lines, one deleted or renamed, one whose
//! content was not kept, or a restoring edit the editor refused or the
//! user declined is a `conflict`, left exactly as it is, with the reason.
//!
//! One undo or redo at a time per session: a second waits for the first.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use super::documents::path_to_uri;
use super::runs::RunEnv;
use crate::checkpoint::{restore_reviewed, CheckpointError, Direction, RestoreReport, RestoreReview};
use crate::tools::PermissionGate;

pub const UNDO_COMMAND: &str = "tandem.undo";
pub const REDO_COMMAND: &str = "tandem.redo";

/// The argument object of `tandem.undo` and `tandem.redo` (may be left out).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoArgs {
    #[serde(default)]
    pub run_id: Option<String>,
    /// The editor's review offers each hunk of a file's restore, not the
    /// file whole.
    #[serde(default)]
    pub per_hunk: bool,
}

/// Undo (or redo) a run in the session's workspace. `policy` reviews each
/// restoring edit to an open document; `lock` keeps undos one at a time.
pub async fn run(
    env: &RunEnv,
    policy: &dyn PermissionGate,
    lock: &tokio::sync::Mutex<()>,
    direction: Direction,
    args: UndoArgs,
) -> Result<Value, CheckpointError> {
    let Some(checkpoints) = env.host.checkpoints() else {
        return Err(CheckpointError::Nothing(format!(
            "nothing to {}: runs record no checkpoints without a data folder (set XDG_DATA_HOME or HOME)",
            direction.verb()
        )));
    };
    let _one_at_a_time = lock.lock().await;
    // The restoring edits carry their own tag, so the editor's notes of
    // them are not mistaken for any run's (and are dropped after).
    let tag = format!("tandem.{}", direction.verb());
    let workspace = env.workspace.for_run(&tag);
    let runs = Arc::clone(&env.runs);
    let is_active = move |run_id: &str| runs.active_ids().iter().any(|id| id == run_id);
    let review = if args.per_hunk { RestoreReview::PerHunk } else { RestoreReview::WholeFile };
    let report = restore_reviewed(checkpoints, (direction, review), args.run_id.as_deref(), &workspace, Some(policy), &is_active).await;
    workspace.settle_late_edits();
    report.map(|report| answer(&report))
}

/// `{"runId", "checkpoint", "files": [{"uri", "status", "reason"?}]}`.
pub fn answer(report: &RestoreReport) -> Value {
    let files: Vec<Value> = report
        .files
        .iter()
        .map(|file| {
            let uri = path_to_uri(&file.path).map(|uri| uri.as_str().to_string()).unwrap_or_else(|| file.path.display().to_string());
            let mut entry = json!({"uri": uri, "status": file.status.as_str()});
            if let Some(reason) = &file.reason {
                entry["reason"] = json!(reason);
            }
            entry
        })
        .collect();
    json!({"runId": report.run_id, "checkpoint": report.checkpoint, "files": files})
}
