//! `tandem undo [RUN_ID]` and `tandem redo [RUN_ID]`: take a run's changes
//! back (or put them back) from its checkpoint, in the current folder.
//! Without a run id: the most recent run not undone (redo: the one undone
//! last). Each file is `restored`, `unchanged` or a `conflict` (changed
//! since in the run's lines, deleted, not recorded): a conflict is left as
//! it is.
//!
//! Exit codes: 0 every file restored or unchanged, 1 a conflict, 2 nothing
//! to undo (or redo), the run still going, no such run.

use std::process::ExitCode;

use tandem::checkpoint::{restore, Checkpoints, Direction, FileStatus};
use tandem::host::ThreadStore;
use tandem::workspace::Workspace;

use super::terminal::{self, errln, outln};

pub async fn undo(workspace: Workspace, direction: Direction, run_id: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let store = ThreadStore::for_workspace(workspace.root())
        .ok_or_else(|| anyhow::anyhow!("cannot find the user's data folder (set XDG_DATA_HOME), so there are no checkpoints"))?;
    let checkpoints = Checkpoints::beside(&store, workspace.roots());
    // Runs of this process: none (another process's run is seen by its pid).
    let report = match restore(&checkpoints, direction, run_id.as_deref(), &workspace, None, &|_| false).await {
        Ok(report) => report,
        Err(err) => {
            errln!("tandem: {err}");
            return Ok(ExitCode::from(2));
        }
    };
    if json {
        let files: Vec<serde_json::Value> = report
            .files
            .iter()
            .map(|f| serde_json::json!({"path": f.path, "status": f.status.as_str(), "reason": f.reason}))
            .collect();
        terminal::out_json(&serde_json::json!({"runId": report.run_id, "files": files}));
    } else {
        for file in &report.files {
            let reason = file.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
            outln!("{:<9} {}{reason}", file.status.as_str(), workspace.display_path(&file.path));
        }
        let done = match direction {
            Direction::Undo => "undone",
            Direction::Redo => "redone",
        };
        outln!(
            "{} {done}: {} restored, {} unchanged, {} conflict(s)",
            report.run_id,
            report.count(FileStatus::Restored),
            report.count(FileStatus::Unchanged),
            report.count(FileStatus::Conflict)
        );
    }
    Ok(if report.count(FileStatus::Conflict) > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
