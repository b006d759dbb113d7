//! `tandem ask --worktree` and `tandem runs`: a run in its own git worktree
//! of this folder's repository, merged back when it ends (one checkpoint, so
//! `tandem undo` takes the merge back), and the worktrees left behind
//! listed, merged or discarded.

use std::process::ExitCode;

use tandem::checkpoint::Checkpoints;
use tandem::host::ThreadStore;
use tandem::workspace::Workspace;
use tandem::worktree::{self, Worktree};

use super::terminal::{errln, outln};

fn worktrees_dir(workspace: &Workspace) -> anyhow::Result<std::path::PathBuf> {
    let state = tandem::workspace::state_dir(workspace.root()).ok_or_else(|| anyhow::anyhow!("cannot find the user's cache folder (set XDG_CACHE_HOME)"))?;
    Ok(worktree::worktrees_dir(&state))
}

/// Run `options` in a new worktree, then merge it into `workspace`; the
/// worktree is removed afterwards unless `keep`.
pub async fn ask(options: super::ask::AskOptions, workspace: Workspace, keep: bool) -> anyhow::Result<ExitCode> {
    let dir = worktrees_dir(&workspace)?;
    let id = format!("run-{}-{}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0), std::process::id());
    let root = workspace.root().to_path_buf();
    let made = tokio::task::spawn_blocking({
        let (dir, id) = (dir.clone(), id.clone());
        move || Worktree::create(&root, &dir, &id, &[])
    })
    .await??;
    errln!("tandem: running in worktree {} ({})", id, made.path().display());
    let run = Workspace::new(made.path())?;
    let code = super::ask::ask(options, run).await?;
    let merged = merge(&made, &workspace).await;
    finish(&made, keep);
    merged?;
    Ok(code)
}

/// Merge `wt` into `workspace` as one checkpointed run, printing the report.
async fn merge(wt: &Worktree, workspace: &Workspace) -> anyhow::Result<bool> {
    let label = format!("worktree {}", wt.record.id);
    let recorder = ThreadStore::for_workspace(workspace.root()).map(|store| Checkpoints::beside(&store, workspace.roots()).record(&label, &label));
    let view = match &recorder {
        Some(r) => workspace.with_recorder(Checkpoints::recorder_for(r)),
        None => workspace.fork_view(),
    };
    let report = wt.merge_into(&view, &label).await;
    if let Some(r) = &recorder {
        r.finish();
    }
    let report = report?;
    outln!("{}", report.text().trim_end());
    Ok(report.hunks.iter().all(|h| h.outcome == worktree::Outcome::Landed))
}

fn finish(wt: &Worktree, keep: bool) {
    if keep {
        errln!("tandem: worktree kept at {}", wt.path().display());
    } else if let Err(e) = wt.remove() {
        errln!("tandem: could not remove the worktree: {e}");
    }
}

/// What `tandem runs` does.
pub enum RunsCommand {
    List,
    Merge { id: String, keep: bool },
    Discard { id: String },
}

pub async fn runs(workspace: Workspace, command: RunsCommand) -> anyhow::Result<ExitCode> {
    let dir = worktrees_dir(&workspace)?;
    let found = worktree::leftovers(&dir);
    let pick = |id: &str| found.iter().find(|w| w.record.id == id).cloned().ok_or_else(|| anyhow::anyhow!("no worktree run {id} (see `tandem runs`)"));
    match command {
        RunsCommand::List => {
            if found.is_empty() {
                outln!("No worktree runs.");
            }
            for w in &found {
                outln!("{}  {}", w.record.id, w.path().display());
            }
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Merge { id, keep } => {
            let wt = pick(&id)?;
            let clean = merge(&wt, &workspace).await?;
            finish(&wt, keep);
            Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        RunsCommand::Discard { id } => {
            let wt = pick(&id)?;
            wt.remove()?;
            outln!("Discarded {id}.");
            Ok(ExitCode::SUCCESS)
        }
    }
}

