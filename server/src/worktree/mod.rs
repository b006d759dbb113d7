//! Runs in their own git worktree, merged back into the user's text.
//!
//! [`Worktree::create`] makes a detached worktree of the user's `HEAD`
//! outside the workspace (under Tandem's per-workspace state folder), puts
//! into it the user's uncommitted changes and the unsaved buffer texts the
//! editor holds, and records that start state as a git tree (written with
//! an index of Tandem's own: no commit, no branch, the user's index and
//! hooks untouched). A run then works there as in any workspace.
//! [`Worktree::merge_into`] brings what the run changed since its start
//! into the user's workspace as it is now: each file three-way merged
//! ([`merge::merge3`]) against the open buffer or the disk, written through
//! the workspace's own write path (the editor's review and version check
//! for an open document, the disk check for a closed file); hunks where the
//! user changed the same lines are conflicts, reported with both sides and
//! never applied. [`Worktree::remove`] deletes the worktree afterwards;
//! [`leftovers`] finds worktrees a crashed Tandem left behind.
//!
//! A workspace that is not in a git repository is refused with a clear
//! message (no copy-based fallback).

mod git;
pub mod merge;

use crate::workspace::{FileChange, ReadError, Workspace, WriteError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What is kept beside a worktree, so a worktree outlives a crash and is
/// found again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    pub id: String,
    /// The user's repository top folder.
    pub repo: PathBuf,
    /// The worktree's folder.
    pub path: PathBuf,
    /// The tree of the start state (HEAD + uncommitted + unsaved).
    pub start_tree: String,
    /// Seconds since the epoch when it was made.
    pub created: u64,
}

/// One worktree run's worktree.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub record: Record,
    /// The folder holding the worktree and its record.
    home: PathBuf,
}

/// An unsaved buffer the editor holds: its path (absolute, in the
/// workspace) and its text.
pub type Buffer = (PathBuf, String);

/// The worktrees folder under a workspace's state folder.
pub fn worktrees_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("worktrees")
}

/// What became of one hunk, for the reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Landed,
    Conflict { yours: String, run: String },
    /// The user declined it in the review.
    Declined,
    /// Not applied for another reason (the message says why).
    NotApplied(String),
}

/// One hunk of the merge in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkReport {
    /// The path relative to the repository.
    pub path: String,
    /// 1-based first line in the start text, and how many lines it replaced.
    pub line: usize,
    pub lines: usize,
    pub outcome: Outcome,
}

/// The merge's report: every hunk of every file the run changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub hunks: Vec<HunkReport>,
}

impl Report {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.hunks.iter().filter(|h| f(&h.outcome)).count()
    }

    /// The report as the model and the user read it.
    pub fn text(&self) -> String {
        let landed = self.count(|o| *o == Outcome::Landed);
        let conflicts = self.count(|o| matches!(o, Outcome::Conflict { .. }));
        let declined = self.count(|o| *o == Outcome::Declined);
        let other = self.hunks.len() - landed - conflicts - declined;
        let mut out = format!("Worktree merge: {landed} hunk(s) landed, {conflicts} conflicted, {declined} declined");
        if other > 0 {
            out.push_str(&format!(", {other} not applied"));
        }
        out.push('\n');
        for h in &self.hunks {
            let what = match &h.outcome {
                Outcome::Landed => "landed".to_string(),
                Outcome::Declined => "declined".to_string(),
                Outcome::NotApplied(why) => format!("not applied: {why}"),
                Outcome::Conflict { yours, run } => format!("CONFLICT (not applied)\n  yours:\n{}  run:\n{}", indent(yours), indent(run)),
            };
            out.push_str(&format!("- {}:{} ({} line(s)): {what}\n", h.path, h.line, h.lines));
        }
        out
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A file's text as UTF-8, or why it is not merged as text.
fn as_text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|_| "binary file: not merged".to_string())
}

impl Worktree {
    /// Make a worktree of `workspace_root`'s repository under `dir` (see
    /// [`worktrees_dir`]): `HEAD`, then the user's uncommitted files, then
    /// `buffers` (the editor's unsaved texts) over them.
    pub fn create(workspace_root: &Path, dir: &Path, id: &str, buffers: &[Buffer]) -> anyhow::Result<Worktree> {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            anyhow::bail!("worktree id {id:?}: only letters, digits, '-' and '_'");
        }
        let repo = git::toplevel(workspace_root)?;
        let home = dir.join(id);
        if home.exists() {
            anyhow::bail!("worktree {id} already exists at {}", home.display());
        }
        std::fs::create_dir_all(&home).map_err(|e| anyhow::anyhow!("creating {}: {e}", home.display()))?;
        let path = home.join("tree");
        let made = Self::fill(&repo, &home, &path, buffers);
        let start_tree = match made {
            Ok(tree) => tree,
            Err(e) => {
                // Leave nothing half made behind.
                let _ = remove_worktree(&repo, &path);
                let _ = std::fs::remove_dir_all(&home);
                return Err(e);
            }
        };
        let record = Record { id: id.to_string(), repo, path, start_tree, created: now_secs() };
        let json = serde_json::to_vec_pretty(&record)?;
        std::fs::write(home.join("record.json"), json).map_err(|e| anyhow::anyhow!("writing the worktree's record: {e}"))?;
        Ok(Worktree { record, home })
    }

    fn fill(repo: &Path, home: &Path, path: &Path, buffers: &[Buffer]) -> anyhow::Result<String> {
        let mut add = git::git(repo);
        add.args(["worktree", "add", "--detach", "--quiet"]).arg(path).arg("HEAD");
        git::output(add, "git worktree add")?;
        for rel in git::dirty_paths(repo)? {
            let (from, to) = (repo.join(&rel), path.join(&rel));
            match std::fs::symlink_metadata(&from) {
                Ok(meta) if meta.is_file() => {
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::copy(&from, &to).map_err(|e| anyhow::anyhow!("copying {rel}: {e}"))?;
                }
                // Symlinks and other kinds are left as HEAD has them.
                Ok(_) => {}
                Err(_) => {
                    let _ = std::fs::remove_file(&to);
                }
            }
        }
        for (file, text) in buffers {
            let Ok(rel) = file.strip_prefix(repo) else { continue };
            let to = path.join(rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&to, text).map_err(|e| anyhow::anyhow!("writing the buffer of {}: {e}", rel.display()))?;
        }
        git::snapshot_tree(path, home)
    }

    /// Open a worktree from its record (one left by another process).
    pub fn open(home: &Path) -> anyhow::Result<Worktree> {
        let bytes = std::fs::read(home.join("record.json")).map_err(|e| anyhow::anyhow!("reading {}: {e}", home.display()))?;
        let record: Record = serde_json::from_slice(&bytes)?;
        Ok(Worktree { record, home: home.to_path_buf() })
    }

    /// The worktree's folder: the run's workspace root.
    pub fn path(&self) -> &Path {
        &self.record.path
    }

    /// Merge what the run changed into `workspace` (the user's, whose root
    /// is in this worktree's repository) as one edit per file, through the
    /// workspace's write path (pass a workspace with the run's checkpoint
    /// recorder, so one undo takes the merge back).
    pub async fn merge_into(&self, workspace: &Workspace, label: &str) -> anyhow::Result<Report> {
        let repo = self.record.repo.clone();
        let path = self.record.path.clone();
        let home = self.home.clone();
        let start = self.record.start_tree.clone();
        let (end, changed) = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let end = git::snapshot_tree(&path, &home)?;
            let changed = git::diff_trees(&path, &start, &end)?;
            Ok((end, changed))
        })
        .await??;
        let mut report = Report::default();
        for (letter, old, new) in changed {
            let base = git::blob(&repo, &self.record.start_tree, &old)?;
            let run = if letter == 'D' { None } else { git::blob(&repo, &end, &new)? };
            self.merge_file(workspace, &old, &new, base, run, label, &mut report).await;
        }
        Ok(report)
    }

    #[allow(clippy::too_many_arguments)]
    async fn merge_file(&self, ws: &Workspace, old: &str, new: &str, base: Option<Vec<u8>>, run: Option<Vec<u8>>, label: &str, report: &mut Report) {
        let repo = &self.record.repo;
        let not = |why: String| HunkReport { path: new.to_string(), line: 1, lines: 0, outcome: Outcome::NotApplied(why) };
        let base = match base.map(as_text).transpose() {
            Ok(b) => b,
            Err(why) => return report.hunks.push(not(why)),
        };
        let run = match run.map(as_text).transpose() {
            Ok(r) => r,
            Err(why) => return report.hunks.push(not(why)),
        };
        let old_abs = repo.join(old);
        let new_abs = repo.join(new);
        // The user's text now, where the run started from (`old`).
        let yours = match ws.read(&old_abs) {
            Ok(f) => Some(f),
            Err(ReadError::NotFound) => None,
            Err(e) => return report.hunks.push(not(format!("{old}: {e:?}"))),
        };
        match (base.as_deref(), run.as_deref(), yours) {
            // Deleted by the run: deleted when the user left it as it was.
            (Some(base), None, Some(y)) => {
                let outcome = if &*y.text != base {
                    Outcome::Conflict { yours: y.text.to_string(), run: "(deleted by the run)\n".into() }
                } else if y.is_buffer() {
                    Outcome::NotApplied("deleted by the run, but open in the editor: left as it is".into())
                } else {
                    match std::fs::remove_file(&old_abs) {
                        Ok(()) => Outcome::Landed,
                        Err(e) => Outcome::NotApplied(format!("deleting: {e}")),
                    }
                };
                report.hunks.push(HunkReport { path: old.to_string(), line: 1, lines: base.lines().count(), outcome });
            }
            (_, None, None) | (None, None, Some(_)) => {}
            // Added by the run (or renamed to `new`).
            (base, Some(run), yours) if old != new || base.is_none() => {
                let target = ws.read(&new_abs).ok();
                if let Some(t) = &target {
                    if &*t.text != run {
                        report.hunks.push(HunkReport { path: new.to_string(), line: 1, lines: 0, outcome: Outcome::Conflict { yours: t.text.to_string(), run: run.to_string() } });
                    }
                    return;
                }
                let change = FileChange { path: new_abs.clone(), new_text: run.into(), base: None, label: label.to_string(), review: true, splices: None };
                let outcome = write_outcome(ws.write(change).await);
                report.hunks.push(HunkReport { path: new.to_string(), line: 1, lines: 0, outcome: outcome.clone() });
                // The old name of a rename goes when the user left it as it was.
                if let (Some(base), Some(y), Outcome::Landed) = (base, yours, outcome) {
                    if &*y.text == base && !y.is_buffer() {
                        let _ = std::fs::remove_file(&old_abs);
                    } else {
                        report.hunks.push(HunkReport { path: old.to_string(), line: 1, lines: 0, outcome: Outcome::NotApplied(format!("renamed to {new} by the run; the old file was changed or is open, so it stays")) });
                    }
                }
            }
            (Some(base), Some(run), None) => {
                report.hunks.push(HunkReport { path: old.to_string(), line: 1, lines: 0, outcome: Outcome::Conflict { yours: "(deleted or renamed since the run started)\n".into(), run: diff::unified(base, run, 1) } });
            }
            (Some(base), Some(run), Some(y)) => {
                let merged = merge::merge3(base, &y.text, run);
                let any_landed = merged.hunks.iter().any(|h| h.status == merge::HunkStatus::Landed);
                let written = if any_landed {
                    let change = FileChange { path: old_abs.clone(), new_text: merged.text.clone().into(), base: Some(y.stamp), label: label.to_string(), review: true, splices: None };
                    Some(write_outcome(ws.write(change).await))
                } else {
                    None
                };
                for h in merged.hunks {
                    let outcome = match h.status {
                        merge::HunkStatus::Conflict { yours, run } => Outcome::Conflict { yours, run },
                        merge::HunkStatus::Landed => written.clone().unwrap_or(Outcome::Landed),
                    };
                    report.hunks.push(HunkReport { path: old.to_string(), line: h.start_lines.start + 1, lines: h.start_lines.len(), outcome });
                }
            }
            (None, Some(_), _) => {}
        }
    }

    /// Remove the worktree and its record (after a merge or a discard).
    pub fn remove(&self) -> anyhow::Result<()> {
        remove_worktree(&self.record.repo, &self.record.path)?;
        std::fs::remove_dir_all(&self.home).map_err(|e| anyhow::anyhow!("removing {}: {e}", self.home.display()))?;
        Ok(())
    }
}

use crate::diff;

fn write_outcome(result: Result<crate::workspace::WriteOutcome, WriteError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Landed,
        Err(WriteError::Rejected(_)) => Outcome::Declined,
        Err(e) => Outcome::NotApplied(e.message()),
    }
}

fn remove_worktree(repo: &Path, path: &Path) -> anyhow::Result<()> {
    let mut cmd = git::git(repo);
    cmd.args(["worktree", "remove", "--force"]).arg(path);
    if let Err(e) = git::output(cmd, "git worktree remove") {
        if path.exists() {
            return Err(e);
        }
    }
    let mut prune = git::git(repo);
    prune.args(["worktree", "prune"]);
    let _ = git::output(prune, "git worktree prune");
    Ok(())
}

/// The worktrees under `dir` (one's own and those a crash left behind).
pub fn leftovers(dir: &Path) -> Vec<Worktree> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<Worktree> = entries.flatten().filter_map(|e| Worktree::open(&e.path()).ok()).collect();
    found.sort_by(|a, b| a.record.id.cmp(&b.record.id));
    found
}

// Unix only: they run git, which the Wine prefix of the Windows unit tests
// does not have.
#[cfg(all(test, unix))]
mod tests;
