//! A run's checkpoint on disk: one JSON file per run,
//! `checkpoints/<thread>/<checkpoint id>.json`, naming for every file the
//! run changed the blob it held before and the blob the run left (or, for
//! the run's edits to an open document, the edits themselves:
//! [`EditChain`]). Rewritten atomically after each change, so a crash keeps
//! what was recorded up to it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::blobs::{write_atomically, BlobId};
use super::edits::EditChain;

/// The newest format this build reads. Version 2 added `edits`; a manifest
/// without them is written as [`PLAIN_VERSION`], which older builds read.
pub const FORMAT_VERSION: u32 = 2;

/// The format of a manifest without `edits`.
pub const PLAIN_VERSION: u32 = 1;

/// What one file held around the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    pub path: PathBuf,
    /// Its content before the run's first change; `None`: it did not exist.
    pub before: Option<BlobId>,
    /// What the run left; `None`: the run deleted it.
    pub after: Option<BlobId>,
    /// Why a content could not be kept (too large, store full): the undo
    /// reports the file instead of restoring it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub version: u32,
    /// Unique in the workspace, sortable by time: the file's name.
    pub id: String,
    /// The front end's run id (`run-3` in the editor; the terminal's own).
    pub run_id: String,
    pub thread_id: String,
    pub started_ms: u64,
    /// The process that recorded it ([`super::this_process`]): an editor's
    /// run ids start again with each server, and two editor windows on one
    /// workspace each run a server, so a run id names this process's run
    /// first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_by: Option<String>,
    /// The process recording it while the run goes on; `None` once it ended.
    #[serde(default)]
    pub running_pid: Option<u32>,
    /// When it was last undone; `None`: its changes are in place.
    #[serde(default)]
    pub undone_ms: Option<u64>,
    /// The model of its thread was last told that it is undone (`false`:
    /// it knows the run's changes as in place, as it made them); an undo or
    /// redo it was not told of yet is said in its thread's next request
    /// ([`super::Checkpoints::restores_untold`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub told_undone: bool,
    pub files: Vec<FileEntry>,
    /// The run's edits to open documents, per file, where they are kept as
    /// edits: the file's entry names the content before (as `before` and
    /// `after` alike) and its chain the edits made on it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<EditChain>,
}

impl Manifest {
    pub fn entry_mut(&mut self, path: &Path) -> Option<&mut FileEntry> {
        self.files.iter_mut().find(|entry| entry.path == path)
    }

    /// The blobs it names.
    pub fn blobs(&self) -> impl Iterator<Item = &BlobId> {
        self.files.iter().flat_map(|entry| entry.before.iter().chain(entry.after.iter()))
    }

    /// Its changes: files whose content the run really changed, or could not keep.
    pub fn changed_files(&self) -> impl Iterator<Item = &FileEntry> {
        self.files.iter().filter(|entry| changed(entry, &self.edits))
    }

    /// The edits that say what the run left in `entry`'s file, when they
    /// still do: made by this build, and no change recorded otherwise since
    /// (which moves the entry's `after`).
    pub fn live_edits(&self, entry: &FileEntry) -> Option<&EditChain> {
        live_edits(entry, &self.edits)
    }

    /// Keep only the changed files, and the edits still live for them.
    pub fn keep_changed(&mut self) {
        let Manifest { files, edits, .. } = self;
        files.retain(|entry| changed(entry, edits));
        let live: Vec<EditChain> = files.iter().filter_map(|entry| live_edits(entry, edits).cloned()).collect();
        *edits = live;
        // Older builds read a manifest without edits.
        self.version = if self.edits.is_empty() { PLAIN_VERSION } else { FORMAT_VERSION };
    }
}

fn live_edits<'a>(entry: &FileEntry, edits: &'a [EditChain]) -> Option<&'a EditChain> {
    edits.iter().find(|chain| chain.path == entry.path && chain.base == entry.after && chain.comparable())
}

fn changed(entry: &FileEntry, edits: &[EditChain]) -> bool {
    entry.not_kept.is_some() || entry.before != entry.after || live_edits(entry, edits).is_some_and(|chain| chain.before != chain.after)
}

pub fn save(path: &Path, manifest: &Manifest) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(manifest).map_err(std::io::Error::other)?;
    write_atomically(path, &bytes)
}

/// Why a manifest could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    Io(String),
    Damaged(String),
}

pub fn load(path: &Path) -> Result<Manifest, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| LoadError::Io(format!("{}: {e}", path.display())))?;
    let manifest: Manifest =
        serde_json::from_slice(&bytes).map_err(|e| LoadError::Damaged(format!("{} is not a readable checkpoint ({e})", path.display())))?;
    if manifest.version > FORMAT_VERSION {
        return Err(LoadError::Damaged(format!(
            "{} was written by a newer Tandem (checkpoint format {}; this one reads {FORMAT_VERSION})",
            path.display(),
            manifest.version
        )));
    }
    Ok(manifest)
}
