//! The workspace as it stood before a shell command: every file that is not
//! ignored (`.gitignore`, `.ignore`; hidden files included, `.git` left
//! out), with its stat data and the blob of its content.
//!
//! A command may change any file, so before it runs each file must be kept.
//! Hashing a 50,000-file tree before every command would cost seconds;
//! instead the index remembers each file's size, modification time, change
//! time and inode with its blob (as git's index does), and a snapshot reads
//! and hashes only the files whose stat data moved since the last one. The
//! index is saved beside the checkpoints, so this holds across runs and
//! restarts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use crate::sync::{IntoValue, MutexExt};

use serde::{Deserialize, Serialize};

use super::blobs::{BlobId, BlobStore};

/// What a file's stat says: if none of it moved, neither did the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub len: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub inode: u64,
}

impl Stat {
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            Stat {
                len: meta.len(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
                inode: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128);
            Stat { len: meta.len(), mtime_ns, ctime_ns: 0, inode: 0 }
        }
    }
}

/// One file of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEntry {
    pub stat: Stat,
    /// Its content's blob; `None` when it could not be kept (`not_kept` says why).
    pub blob: Option<BlobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept: Option<String>,
}

pub type Snapshot = HashMap<PathBuf, TreeEntry>;

/// The stat data and blobs of the last snapshot, kept in `path`.
pub struct TreeIndex {
    path: PathBuf,
    entries: Mutex<Option<Snapshot>>,
}

/// Figures of one snapshot, for the log and the benchmark.
#[derive(Debug, Default, Clone, Copy)]
pub struct SnapshotStats {
    pub files: usize,
    pub hashed: usize,
}

impl TreeIndex {
    pub fn new(path: PathBuf) -> Self {
        TreeIndex { path, entries: Mutex::new(None) }
    }

    /// The blobs the index holds (kept by the garbage collector: the next
    /// snapshot relies on them).
    pub fn blobs(&self) -> Vec<BlobId> {
        let mut guard = self.entries.locked();
        let entries = guard.get_or_insert_with(|| load(&self.path));
        entries.values().filter_map(|e| e.blob.clone()).collect()
    }

    /// Drop the index (when the store is full, its blobs go first).
    pub fn clear(&self) {
        *self.entries.locked() = Some(Snapshot::new());
        let _ = std::fs::remove_file(&self.path);
    }

    /// Walk `roots` and bring the index up to date: files whose stat data
    /// moved are read and kept. Returns the snapshot.
    pub fn snapshot(&self, roots: &[PathBuf], blobs: &BlobStore) -> (Snapshot, SnapshotStats) {
        let mut guard = self.entries.locked();
        let previous = guard.take().unwrap_or_else(|| load(&self.path));
        let mut stats = SnapshotStats::default();
        let mut next = Snapshot::with_capacity(previous.len());
        for (path, stat) in walk(roots) {
            stats.files += 1;
            let entry = match previous.get(&path) {
                Some(old) if old.stat == stat && old.blob.is_some() => old.clone(),
                _ => {
                    stats.hashed += 1;
                    keep(&path, stat, blobs)
                }
            };
            next.insert(path, entry);
        }
        if next != previous {
            if let Err(err) = save(&self.path, &next) {
                tracing::warn!(%err, "cannot save the checkpoint index; the next snapshot hashes every file again");
            }
        }
        *guard = Some(next.clone());
        (next, stats)
    }

    /// Record that `path` now holds `entry` (a command changed it).
    pub fn update(&self, path: &Path, entry: Option<TreeEntry>) {
        let mut guard = self.entries.locked();
        let entries = guard.get_or_insert_with(|| load(&self.path));
        match entry {
            Some(entry) => entries.insert(path.to_path_buf(), entry),
            None => entries.remove(path),
        };
    }

    /// Save what [`update`](Self::update) changed.
    pub fn save(&self) {
        let guard = self.entries.locked();
        if let Some(entries) = guard.as_ref() {
            if let Err(err) = save(&self.path, entries) {
                tracing::warn!(%err, "cannot save the checkpoint index");
            }
        }
    }
}

/// Read `path` and keep its content.
pub fn keep(path: &Path, stat: Stat, blobs: &BlobStore) -> TreeEntry {
    if stat.len > blobs_limit(blobs) {
        let not_kept = super::blobs::PutError::TooLarge { bytes: stat.len, limit: blobs_limit(blobs) }.to_string();
        return TreeEntry { stat, blob: None, not_kept: Some(not_kept) };
    }
    match std::fs::read(path) {
        Ok(bytes) => match blobs.put(&bytes) {
            Ok(id) => TreeEntry { stat, blob: Some(id), not_kept: None },
            Err(err) => TreeEntry { stat, blob: None, not_kept: Some(err.to_string()) },
        },
        Err(err) => TreeEntry { stat, blob: None, not_kept: Some(format!("not recorded: cannot read it ({err})")) },
    }
}

fn blobs_limit(blobs: &BlobStore) -> u64 {
    blobs.max_file_bytes()
}

/// Every regular file under `roots` that is not ignored, with its stat data.
pub fn walk(roots: &[PathBuf]) -> Vec<(PathBuf, Stat)> {
    let Some((first, rest)) = roots.split_first() else { return Vec::new() };
    let mut builder = ignore::WalkBuilder::new(first);
    for root in rest {
        builder.add(root);
    }
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .threads(2)
        .filter_entry(|entry| entry.file_name() != ".git");
    let found = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            if let Ok(entry) = entry {
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    if let Ok(meta) = entry.metadata() {
                        found.locked().push((entry.into_path(), Stat::of(&meta)));
                    }
                }
            }
            ignore::WalkState::Continue
        })
    });
    found.into_value()
}

/// One line per file: `[path, entry]`, so a damaged line loses one file's
/// entry, not the index.
fn load(path: &Path) -> Snapshot {
    let Ok(text) = std::fs::read_to_string(path) else { return Snapshot::new() };
    text.lines().filter_map(|line| serde_json::from_str::<(PathBuf, TreeEntry)>(line).ok()).collect()
}

fn save(path: &Path, entries: &Snapshot) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(entries.len() * 160);
    for entry in entries {
        serde_json::to_writer(&mut out, &entry).map_err(std::io::Error::other)?;
        out.push(b'\n');
    }
    super::blobs::write_atomically(path, &out)
}
