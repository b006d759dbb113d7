//! Undo and redo of a run: every file its checkpoint names goes back to
//! what it held before the run (undo) or to what the run left (redo).
//!
//! Per file, the content now is compared with what the run left (for a
//! redo: what it held before):
//!
//! - kept as edits (an open document's, [`super::edits`]) and holding what
//!   they left: the edits taken back (for a redo: made again) on it;
//! - already the target: `unchanged`;
//! - as the run left it: written back whole;
//! - changed since, in other lines: merged (the user's lines stay, the
//!   run's are taken back), three-way by lines;
//! - changed since, in the same lines, deleted or renamed, or its content
//!   was not kept: `conflict`, and the file is left exactly as it is.
//!
//! Writes are all or nothing per file: a closed file is written atomically
//! after checking its content is still what was compared; an open document
//! changes only through the editor's `workspace/applyEdit` (through
//! [`Workspace::write`], versioned), after the same permission decision as
//! any edit. The editor refusing it leaves the document as it was. Its
//! review applies the whole restore unless the user decides hunk by hunk;
//! a restore taken in part holds whole lines either way (each hunk is
//! whole lines or within one line), and the report says which lines were
//! kept, in words for the user. (A
//! closed file is not opened for a review: the undo is the user's own
//! command, and a file to remove or bring back has no buffer to review in.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::edits::EditChain;
use super::manifest::{FileEntry, Manifest};
use super::{CheckpointError, Checkpoints};
use crate::tools::executor::{PermissionDecision, PermissionGate, PermissionRequest};
use crate::tools::ToolKind;
use crate::workspace::{atomic_write, fingerprint, merge3, merge3_keeping_ours, DiskWriteError, FileChange, Workspace, WriteError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Undo,
    Redo,
}

impl Direction {
    pub fn verb(self) -> &'static str {
        match self {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
        }
    }

    /// The verb in the past tense ("undid 1 of its 2 changes").
    pub fn done(self) -> &'static str {
        match self {
            Direction::Undo => "undid",
            Direction::Redo => "redid",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Restored,
    Unchanged,
    Conflict,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Restored => "restored",
            FileStatus::Unchanged => "unchanged",
            FileStatus::Conflict => "conflict",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    pub path: PathBuf,
    pub status: FileStatus,
    /// Why a file is a conflict, or how it was restored (merged).
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    pub run_id: String,
    /// The checkpoint's own id (unique in the workspace).
    pub checkpoint: String,
    pub direction: Direction,
    pub files: Vec<FileReport>,
}

impl RestoreReport {
    pub fn count(&self, status: FileStatus) -> usize {
        self.files.iter().filter(|f| f.status == status).count()
    }
}

/// How much of a file's restore the editor's review may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RestoreReview {
    /// All or nothing per file (the default, as other agents' rewind and
    /// restore are): an open document's restoring edit reaches the editor
    /// as one change from its first changed line to its last, which the
    /// review takes or declines whole.
    #[default]
    WholeFile,
    /// Hunk by hunk, as the user explicitly asked: the editor's review
    /// offers each hunk (whole lines, or a change within one line), and a
    /// file restored in part says which lines were kept.
    PerHunk,
}

/// Undo (or redo) the run `run_id` (default: see [`Checkpoints::pick`]) in
/// `workspace`. `policy` reviews each restoring edit as it would any edit
/// (`None`: the user asked for it from a terminal, nothing to review),
/// each file whole.
pub async fn restore(
    store: &Checkpoints,
    direction: Direction,
    run_id: Option<&str>,
    workspace: &Workspace,
    policy: Option<&dyn PermissionGate>,
    is_active: &(dyn Fn(&str) -> bool + Sync),
) -> Result<RestoreReport, CheckpointError> {
    restore_reviewed(store, (direction, RestoreReview::WholeFile), run_id, workspace, policy, is_active).await
}

/// [`restore`], the review of open documents taking each file whole or
/// hunk by hunk (`review`).
pub async fn restore_reviewed(
    store: &Checkpoints,
    (direction, review): (Direction, RestoreReview),
    run_id: Option<&str>,
    workspace: &Workspace,
    policy: Option<&dyn PermissionGate>,
    is_active: &(dyn Fn(&str) -> bool + Sync),
) -> Result<RestoreReport, CheckpointError> {
    let (path, mut manifest) = store.pick(direction, run_id, is_active)?;
    let workspace = workspace.fork_view();
    let mut files = Vec::new();
    for entry in manifest.changed_files() {
        let report = restore_file(store, &manifest, (entry, review), direction, &workspace, policy).await;
        files.push(report);
    }
    // A run none of whose files could be restored stays as it was: the
    // next undo takes it again (a declined review, the user's own text in
    // the way), not the run before it.
    if files.iter().any(|f| f.status != FileStatus::Conflict) {
        store.mark(&path, &mut manifest, direction);
    }
    Ok(RestoreReport { run_id: manifest.run_id.clone(), checkpoint: manifest.id.clone(), direction, files })
}

/// What a file holds now: its open document's text, else the disk's bytes.
enum Current {
    Document { text: Arc<str>, stamp: crate::workspace::ReadStamp },
    Disk(Option<Vec<u8>>),
}

impl Current {
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Current::Document { text, .. } => Some(text.as_bytes()),
            Current::Disk(bytes) => bytes.as_deref(),
        }
    }
}

fn conflict(path: &Path, reason: impl Into<String>) -> FileReport {
    FileReport { path: path.to_path_buf(), status: FileStatus::Conflict, reason: Some(reason.into()) }
}

async fn restore_file(
    store: &Checkpoints,
    manifest: &Manifest,
    (entry, whole): (&FileEntry, RestoreReview),
    direction: Direction,
    workspace: &Workspace,
    policy: Option<&dyn PermissionGate>,
) -> FileReport {
    let path = entry.path.as_path();
    let current = match workspace.buffer(path) {
        Some(_) => match workspace.read(path) {
            Ok(file) => Current::Document { text: file.text, stamp: file.stamp },
            Err(err) => return conflict(path, err.message(&workspace.display_path(path))),
        },
        None => match std::fs::read(path) {
            Ok(bytes) => Current::Disk(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Current::Disk(None),
            Err(e) => return conflict(path, format!("cannot read it: {e}")),
        },
    };
    let edits = manifest.live_edits(entry);
    // Kept as edits, and the file holds what they left (for a redo: what
    // they were made on): taken back (or made again) on it, no copy read.
    let by_edits = edits.and_then(|edits| {
        let now = std::str::from_utf8(current.bytes()?).ok()?;
        match direction {
            Direction::Undo => edits.undo(now),
            Direction::Redo => edits.redo(now),
        }
    });
    let (new, merged) = match by_edits {
        Some(text) => (Some(text.into_bytes()), None),
        None => match from_copies(store, entry, edits, direction, &current, whole) {
            Ok(Some(found)) => found,
            Ok(None) => return FileReport { path: path.to_path_buf(), status: FileStatus::Unchanged, reason: None },
            Err(reason) => return conflict(path, reason),
        },
    };
    let label = format!("{} {}", direction.verb(), manifest.run_id);
    let written = match (&current, new) {
        (Current::Document { .. }, None) => Err("open in the editor: Tandem does not delete an open document; close it and try again".to_string()),
        (Current::Document { stamp, .. }, Some(new)) => match String::from_utf8(new) {
            Err(_) => Err("its recorded content is binary and cannot go into the open document".into()),
            Ok(new) => {
                // An open document's restore is reviewed as any edit to it;
                // a closed file's is the user's own command, written as asked.
                let review = match review(policy, workspace, path, current.bytes(), Some(new.as_bytes()), manifest, direction).await {
                    Ok(review) => review,
                    Err(reason) => return conflict(path, reason),
                };
                let splices = (whole == RestoreReview::WholeFile).then(|| one_change(&current, &new)).flatten();
                let change = FileChange { path: path.to_path_buf(), new_text: Arc::from(new), base: Some(*stamp), label, review, splices };
                match workspace.write(change).await {
                    Ok(_) => Ok(None),
                    // The user took some of its hunks in the editor's
                    // review: each is whole lines or within one line, so
                    // the file holds whole lines either way. Said in words
                    // for the user, not the model's.
                    Err(WriteError::PartlyApplied(_, partial)) => Ok(Some(partial.restore_words(direction.done()))),
                    Err(e) => Err(e.message()),
                }
            }
        },
        (Current::Disk(now), Some(new)) => {
            atomic_write(path, &new, now.as_deref().map(fingerprint)).map(|()| None).map_err(|e| disk_error(&e))
        }
        (Current::Disk(now), None) => remove_checked(path, now.as_deref()).map(|()| None),
    };
    match written {
        Ok(partly) => FileReport {
            path: path.to_path_buf(),
            status: FileStatus::Restored,
            reason: partly.or(merged),
        },
        Err(reason) => conflict(path, reason),
    }
}

/// The restore of an open document as one change, from the first line its
/// hunks change to the last (`None`: fewer than two hunks, nothing to
/// join): the editor's review then takes or declines the file whole.
fn one_change(current: &Current, new: &str) -> Option<Vec<crate::workspace::Splice>> {
    let now = std::str::from_utf8(current.bytes()?).ok()?;
    let hunks = crate::workspace::replacements(now, new);
    let (first, last) = (hunks.first()?, hunks.last()?);
    if hunks.len() < 2 {
        return None;
    }
    let kept_tail = now.len() - last.range.end;
    let text = new.get(first.range.start..new.len().checked_sub(kept_tail)?)?;
    Some(vec![crate::workspace::Splice { range: first.range.start..last.range.end, text: text.to_string() }])
}

/// The content a file gets back (`None`: the file is removed) and, when
/// it was merged with changes made since, words saying so.
type Restored = (Option<Vec<u8>>, Option<String>);

/// What the file gets back from the kept copies: the target content (and
/// whether it was merged with changes made since), `None` when it holds it
/// already, `Err` why it is left as it is. A file kept as edits has one
/// copy, from before the run; what the run left is the edits made on it.
fn from_copies(
    store: &Checkpoints,
    entry: &FileEntry,
    edits: Option<&EditChain>,
    direction: Direction,
    current: &Current,
    whole: RestoreReview,
) -> Result<Option<Restored>, String> {
    if let Some(reason) = &entry.not_kept {
        return Err(reason.clone());
    }
    let load = |id: &Option<String>| -> Result<Option<Vec<u8>>, String> {
        id.as_deref().map(|id| store.blobs.get(id).map_err(|e| e.to_string())).transpose()
    };
    let before = load(&entry.before)?;
    let after = match edits {
        None => load(&entry.after)?,
        Some(edits) => {
            let made = before.as_deref().and_then(|b| std::str::from_utf8(b).ok()).and_then(|b| edits.redo(b));
            let Some(made) = made else {
                return Err("the checkpoint's edits do not apply to its copy of the file; left as it is".into());
            };
            Some(made.into_bytes())
        }
    };
    let (target, left) = match direction {
        Direction::Undo => (before, after),
        Direction::Redo => (after, before),
    };
    if current.bytes() == target.as_deref() {
        return Ok(None);
    }
    if current.bytes() == left.as_deref() {
        return Ok(Some((target, None)));
    }
    match (current.bytes(), &left, &target) {
        (None, Some(_), _) => Err("deleted or renamed since the run; left as it is".into()),
        (Some(now), Some(left), Some(target)) => {
            let texts = (std::str::from_utf8(now), std::str::from_utf8(left), std::str::from_utf8(target));
            let (Ok(now), Ok(left), Ok(target)) = texts else {
                return Err("changed since the run (a binary file); left as it is".into());
            };
            match merge3(left, now, target) {
                Some(merged) => Ok(Some((Some(merged.into_bytes()), Some("merged with changes made since the run".to_string())))),
                // Asked hunk by hunk: the run's changes the user has not
                // touched since go back, the ones they have are kept.
                None if whole != RestoreReview::WholeFile => {
                    let (merged, taken, kept) = merge3_keeping_ours(left, now, target);
                    if taken == 0 {
                        return Err("changed since the run in the lines the run changed; your text is left as it is".into());
                    }
                    let verb = direction.done();
                    let words = format!("{verb} {taken} of its {} changes; kept {kept} where you changed the lines since", taken + kept);
                    Ok(Some((Some(merged.into_bytes()), Some(words))))
                }
                None => Err("changed since the run in the lines the run changed; your text is left as it is".into()),
            }
        }
        _ => Err("changed since the run; left as it is".into()),
    }
}

fn disk_error(err: &DiskWriteError) -> String {
    match err {
        DiskWriteError::Changed | DiskWriteError::Exists => "changed while it was being restored; left as it is".into(),
        DiskWriteError::Io(e) => format!("cannot write it: {e}"),
    }
}

/// Remove a file the run made, if it still holds what was compared.
fn remove_checked(path: &Path, expected: Option<&[u8]>) -> Result<(), String> {
    let now = std::fs::read(path).ok();
    if now.as_deref() != expected {
        return Err("changed while it was being restored; left as it is".into());
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove it: {e}")),
    }
}

/// The permission decision on a restoring edit, as on any edit: `Ok(true)`
/// to review it in the editor's own preview, `Ok(false)` to apply it,
/// `Err` when it is declined.
async fn review(
    policy: Option<&dyn PermissionGate>,
    workspace: &Workspace,
    path: &Path,
    now: Option<&[u8]>,
    new: Option<&[u8]>,
    manifest: &Manifest,
    direction: Direction,
) -> Result<bool, String> {
    let Some(policy) = policy else { return Ok(false) };
    let text = |bytes: Option<&[u8]>| bytes.map(String::from_utf8_lossy).unwrap_or_default().into_owned();
    let (old, new_text) = (text(now), text(new));
    let preview = crate::diff::unified(&old, &new_text, 3);
    let request = PermissionRequest {
        tool: format!("tandem.{}", direction.verb()),
        kind: ToolKind::Edit { path: path.to_path_buf() },
        read_only: false,
        summary: workspace.display_path(path),
        preview: Some(preview),
        input: serde_json::json!({"runId": manifest.run_id, "path": path}),
        accept_edits: false,
        run: None,
        grants: Arc::default(),
        // Hooks are about the agent's tool calls; an undo is the user's.
        hook: crate::tools::PreHook::None,
        questions: None,
    };
    match policy.decide(&request).await {
        PermissionDecision::Allow | PermissionDecision::Approved | PermissionDecision::ApprovedWithNetwork | PermissionDecision::Contained => Ok(false),
        // A restore is all or nothing (the terminal offers no hunks for it).
        PermissionDecision::Commented { keep: None, .. } => Ok(false),
        PermissionDecision::ApprovedHunks(_) | PermissionDecision::Commented { keep: Some(_), .. } => Err("only part of the restoring edit was chosen; left as it is".into()),
        PermissionDecision::ReviewInEditor => Ok(true),
        PermissionDecision::Deny(reason) | PermissionDecision::Declined(reason) => Err(format!("the restoring edit was declined ({reason}); left as it is")),
    }
}
