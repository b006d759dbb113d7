//! Checkpoints: what every run changed, so the run can be undone and redone,
//! after a restart too.
//!
//! A run's checkpoint names, for each file the run changed, its content
//! before the run's first change and the content the run left. Changes are
//! seen in two places: every write passes [`Workspace::write`] (buffer
//! edits and files written to disk), which tells the run's
//! [`ChangeRecorder`]; and before and after each shell command the executor
//! lets the recorder look at the workspace ([`tree`]: the paths the file
//! watcher named since the last look, their stat data compared with it,
//! only what moved read and hashed; the whole tree when the watcher lost
//! events or there is none), so a file a command wrote, made or deleted is
//! in the checkpoint too. The look happens in Tandem's process, outside any
//! sandbox the command runs in.
//!
//! An edit of an open document given as splices (`edit_file`'s) is kept as
//! the edit ([`edits`]): the text it replaced and what replaced it, with
//! the fingerprints of the text before and after. The document's content
//! before the run is still kept once, at its first change, for an undo
//! after the text changed since; no copy is made after each edit.
//!
//! Where: beside the thread, in Tandem's own store, never the user's git:
//! `<sessions>/<workspace-hash>/checkpoints/` holds `blobs/` (contents by
//! SHA-256, shared by all runs), `tree-index.jsonl` (the last look), and
//! one folder per thread with one manifest per run. Forgetting a thread
//! removes its folder ([`crate::thread::ThreadStore::forget`]); its blobs
//! go at the next garbage collection.
//!
//! Bounds ([`Limits`]): a file over 16 MiB is not kept (the undo reports
//! it); a thread keeps its 100 most recent checkpoints; the blobs hold at
//! most 1 GiB, and past that the oldest checkpoints (of any thread) are
//! dropped, then the last look, and a content that still does not fit is
//! reported as not kept. Undo and redo are in [`restore`].
//!
//! Architecture Invariant: nothing here writes into the workspace except
//! [`restore`], which writes each file whole and atomically (open
//! documents through the editor, as any edit).

pub mod blobs;
pub mod edits;
pub mod manifest;
mod recorder;
pub mod restore;
pub mod tree;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use recorder::RunRecorder;
pub use restore::{restore, restore_reviewed, Direction, FileReport, FileStatus, RestoreReport, RestoreReview};

use blobs::BlobStore;
use manifest::Manifest;
use tree::TreeIndex;

use crate::thread::ThreadStore;
use crate::workspace::ChangeRecorder;

/// How much the checkpoints may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A file larger than this is not kept.
    pub max_file_bytes: u64,
    /// All blobs together.
    pub max_store_bytes: u64,
    /// Checkpoints one thread keeps (the oldest go first).
    pub max_runs_per_thread: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_file_bytes: 16 * 1024 * 1024, max_store_bytes: 1024 * 1024 * 1024, max_runs_per_thread: 100 }
    }
}

/// Why an undo or redo did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointError {
    /// Nothing to undo (or redo); the string says so for the user.
    Nothing(String),
    /// The run is still going.
    Running(String),
    /// No such run, or one in the wrong state (already undone, not undone).
    Invalid(String),
    /// The checkpoint cannot be read.
    Damaged(String),
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointError::Nothing(m) | CheckpointError::Running(m) | CheckpointError::Invalid(m) | CheckpointError::Damaged(m) => {
                f.write_str(m)
            }
        }
    }
}

/// One file a past run changed, as text ([`Checkpoints::run_texts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunText {
    pub path: PathBuf,
    /// Its content before the run (`None`: the run created it).
    pub before: Option<String>,
    /// What the run left (`None`: the run deleted it).
    pub after: Option<String>,
}

/// The checkpoints of one workspace, shared by its runs in this process.
pub struct Checkpoints {
    dir: PathBuf,
    blobs: BlobStore,
    tree: TreeIndex,
    limits: Limits,
}

/// Distinguishes checkpoints a process starts in one millisecond.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// This process among those that ever recorded checkpoints: its pid and
/// the time it first recorded one (a pid alone is reused).
pub fn this_process() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| format!("{}-{}", std::process::id(), now_ms()))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

impl Checkpoints {
    /// The checkpoints kept beside the threads of `threads`, for a
    /// workspace over `roots`.
    pub fn beside(threads: &ThreadStore, roots: &[PathBuf]) -> Arc<Self> {
        Arc::new(Self::at(threads.checkpoints_dir(), roots.to_vec(), Limits::default()))
    }

    pub fn at(dir: PathBuf, roots: Vec<PathBuf>, limits: Limits) -> Self {
        Checkpoints {
            blobs: BlobStore::new(dir.join("blobs"), limits),
            tree: TreeIndex::new(dir.join("tree-index.jsonl"), roots),
            dir,
            limits,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The looks at the workspace around shell commands so far: how many
    /// walked the whole tree and why, and the file watcher's state.
    pub fn looks(&self) -> tree::LookCounts {
        self.tree.counts()
    }

    fn thread_dir(&self, thread_id: &str) -> PathBuf {
        self.dir.join(thread_id)
    }

    /// Start recording a run of `thread_id` that the front end calls `run_id`.
    pub fn record(self: &Arc<Self>, thread_id: &str, run_id: &str) -> Arc<RunRecorder> {
        let started_ms = now_ms();
        // Padded, so ids sort by time also within a millisecond.
        let id = format!("{started_ms:013}-{}-{:06}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = self.thread_dir(thread_id).join(format!("{id}.json"));
        let manifest = Manifest {
            version: manifest::PLAIN_VERSION,
            id,
            run_id: run_id.to_string(),
            thread_id: thread_id.to_string(),
            started_ms,
            recorded_by: Some(this_process().to_string()),
            running_pid: Some(std::process::id()),
            undone_ms: None,
            told_undone: false,
            files: Vec::new(),
            edits: Vec::new(),
        };
        Arc::new(RunRecorder::new(Arc::clone(self), path, manifest))
    }

    /// The recorder as the workspace takes it.
    pub fn recorder_for(recorder: &Arc<RunRecorder>) -> Arc<dyn ChangeRecorder> {
        Arc::clone(recorder) as Arc<dyn ChangeRecorder>
    }

    /// Every checkpoint of the workspace, oldest first, with the path of its
    /// file; and the problems met (a damaged manifest is reported, not fatal).
    pub fn list(&self) -> (Vec<(PathBuf, Manifest)>, Vec<String>) {
        let mut found = Vec::new();
        let mut problems = Vec::new();
        let threads = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
        for thread in threads.filter(|t| t.file_type().is_ok_and(|t| t.is_dir()) && t.file_name() != "blobs") {
            for entry in std::fs::read_dir(thread.path()).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                match manifest::load(&path) {
                    Ok(manifest) => found.push((path, manifest)),
                    Err(manifest::LoadError::Damaged(m)) | Err(manifest::LoadError::Io(m)) => problems.push(m),
                }
            }
        }
        found.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        (found, problems)
    }

    /// The checkpoint an undo (or redo) of `run_id` works on; without a
    /// run id, the most recent run not undone (for a redo: the one undone
    /// last). `is_active` tells whether a run of this process is still going.
    pub fn pick(&self, direction: Direction, run_id: Option<&str>, is_active: &dyn Fn(&str) -> bool) -> Result<(PathBuf, Manifest), CheckpointError> {
        let (all, problems) = self.list();
        let running = |m: &Manifest| match m.running_pid {
            None => false,
            Some(pid) if pid == std::process::id() => is_active(&m.run_id),
            Some(pid) => process_alive(pid),
        };
        let verb = direction.verb();
        let chosen = match run_id {
            // An editor's run ids (`run-3`) start again with each server,
            // and two windows on one workspace each run one: of the runs
            // so named, this process's when it has one (another window's
            // `run-3` is not ours), and of those the newest one the command
            // applies to (not undone for an undo, undone for a redo), else
            // the newest.
            Some(id) => {
                let mut named: Vec<(PathBuf, Manifest)> = all.into_iter().rev().filter(|(_, m)| m.run_id == id || m.id == id).collect();
                let ours = |m: &Manifest| m.recorded_by.as_deref() == Some(this_process());
                if named.iter().any(|(_, m)| ours(m)) {
                    named.retain(|(_, m)| ours(m));
                }
                let applies = |m: &Manifest| m.undone_ms.is_some() == (direction == Direction::Redo);
                let first = named.iter().position(|(_, m)| applies(m)).unwrap_or(0);
                named.into_iter().nth(first)
            }
            .ok_or_else(|| {
                let damaged = if problems.is_empty() { String::new() } else { format!(" ({})", problems.join("; ")) };
                CheckpointError::Invalid(format!("no checkpoint of run {id} in this workspace: it changed no files, or its thread was forgotten{damaged}"))
            })?,
            None => {
                let candidate = match direction {
                    Direction::Undo => all.into_iter().rev().find(|(_, m)| m.undone_ms.is_none()),
                    // Undone in the same millisecond: undo walks back, so
                    // the older run was undone after the newer one.
                    Direction::Redo => all
                        .into_iter()
                        .filter(|(_, m)| m.undone_ms.is_some())
                        .max_by(|(_, a), (_, b)| a.undone_ms.cmp(&b.undone_ms).then_with(|| b.id.cmp(&a.id))),
                };
                candidate.ok_or_else(|| {
                    let mut message = match direction {
                        Direction::Undo => "nothing to undo: no run in this workspace has changed a file since its checkpoints began".to_string(),
                        Direction::Redo => "nothing to redo: no run in this workspace has been undone".to_string(),
                    };
                    if !problems.is_empty() {
                        message.push_str(&format!(" ({})", problems.join("; ")));
                    }
                    CheckpointError::Nothing(message)
                })?
            }
        };
        let (_, manifest) = &chosen;
        if running(manifest) {
            return Err(CheckpointError::Running(format!(
                "run {} is still going: cancel it or let it end before you {verb} it",
                manifest.run_id
            )));
        }
        match (direction, manifest.undone_ms) {
            (Direction::Undo, Some(_)) => Err(CheckpointError::Invalid(format!("run {} is already undone (redo puts it back)", manifest.run_id))),
            (Direction::Redo, None) => Err(CheckpointError::Invalid(format!("run {} is not undone: there is nothing to redo", manifest.run_id))),
            _ => Ok(chosen),
        }
    }

    /// Note that the checkpoint at `path` was undone (or redone).
    pub fn mark(&self, path: &Path, manifest: &mut Manifest, direction: Direction) {
        manifest.undone_ms = match direction {
            Direction::Undo => Some(now_ms()),
            Direction::Redo => None,
        };
        if let Err(err) = manifest::save(path, manifest) {
            tracing::warn!(%err, "cannot save the checkpoint's state");
        }
    }

    /// What the model of `thread_id` was not told yet of its runs undone
    /// or redone (from any front end, by any process), for the thread's
    /// next request: one line per run naming its files (`display` words a
    /// path), and what to do. Each run is then recorded as told, so it is
    /// said once. `None` when there is nothing new.
    pub fn restores_untold(&self, thread_id: &str, display: &dyn Fn(&Path) -> String) -> Option<String> {
        let mut lines = Vec::new();
        // The thread's own folder only: a run start reads no other thread's.
        let mut found: Vec<(PathBuf, Manifest)> = std::fs::read_dir(self.thread_dir(thread_id))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "json"))
            .filter_map(|path| manifest::load(&path).ok().map(|manifest| (path, manifest)))
            .filter(|(_, manifest)| manifest.thread_id == thread_id)
            .collect();
        found.sort_by(|a, b| a.1.id.cmp(&b.1.id));
        for (path, mut manifest) in found {
            // A run still going cannot be undone: its state is its own.
            let undone = manifest.undone_ms.is_some();
            if manifest.told_undone == undone {
                continue;
            }
            let files: Vec<String> = manifest.changed_files().map(|entry| display(&entry.path)).collect();
            let files = if files.is_empty() { "no file".to_string() } else { files.join(", ") };
            lines.push(if undone {
                format!("- The user undid an earlier run of yours ({}): its changes to {files} were taken back, wholly or in part.", manifest.run_id)
            } else {
                format!("- The user redid an earlier run of yours ({}) they had undone: its changes to {files} are back.", manifest.run_id)
            });
            manifest.told_undone = undone;
            if let Err(err) = manifest::save(&path, &manifest) {
                tracing::warn!(%err, "cannot save the checkpoint's state");
            }
        }
        (!lines.is_empty()).then(|| {
            format!(
                "[Tandem: since your last turn in this conversation:\n{}\nWhat you said or did about those changes may no longer hold: read those files again before you rely on them or edit them.]",
                lines.join("\n")
            )
        })
    }

    /// Mark a thread's past (its transcript's events) with what became of
    /// each run's checkpoint since: an `edits` event naming a checkpoint is
    /// said `undone` when the run is undone now (from any front end or
    /// process: a resumed thread shows it, a view offers Redo), and loses
    /// its `checkpoint` when that is gone (the store's limits removed it),
    /// since an Undo of it could not work.
    pub fn mark_transcript(&self, events: &mut std::collections::VecDeque<serde_json::Value>) {
        if !events.iter().any(|e| e.get("checkpoint").is_some()) {
            return;
        }
        let (all, _) = self.list();
        for event in events.iter_mut().filter(|e| e["type"] == "edits") {
            let Some(id) = event.get("checkpoint").and_then(serde_json::Value::as_str).map(String::from) else { continue };
            match all.iter().find(|(_, manifest)| manifest.id == id) {
                Some((_, manifest)) => event["undone"] = serde_json::Value::Bool(manifest.undone_ms.is_some()),
                None => {
                    if let Some(fields) = event.as_object_mut() {
                        fields.remove("checkpoint");
                    }
                }
            }
        }
    }

    /// What the run of checkpoint `id` changed, file by file, as text: the
    /// content before its first change and what it left (`None`: no file),
    /// for a view that shows a past run's changes again (ACP's
    /// `session/load`). A file not kept, not text, or whose kept edits no
    /// longer apply to its copy is left out; an unknown id has none.
    pub fn run_texts(&self, id: &str) -> Vec<RunText> {
        let (all, _) = self.list();
        let Some((_, manifest)) = all.into_iter().find(|(_, manifest)| manifest.id == id) else { return Vec::new() };
        let text = |blob: &Option<String>| -> Result<Option<String>, ()> {
            match blob {
                None => Ok(None),
                Some(blob) => self.blobs.get(blob).ok().and_then(|bytes| String::from_utf8(bytes).ok()).map(Some).ok_or(()),
            }
        };
        let mut texts = Vec::new();
        for entry in manifest.changed_files().filter(|entry| entry.not_kept.is_none()) {
            let Ok(before) = text(&entry.before) else { continue };
            let after = match manifest.live_edits(entry) {
                Some(chain) => match before.as_deref().and_then(|before| chain.redo(before)) {
                    Some(after) => Some(after),
                    None => continue,
                },
                None => match text(&entry.after) {
                    Ok(after) => after,
                    Err(()) => continue,
                },
            };
            if before != after {
                texts.push(RunText { path: entry.path.clone(), before, after });
            }
        }
        texts
    }

    /// Keep the store within its [`Limits`]: each thread's oldest
    /// checkpoints past the count, then, while the blobs hold too much, the
    /// oldest checkpoints of any thread and at last the tree index.
    pub fn enforce_limits(&self) {
        let (all, _) = self.list();
        let mut per_thread: std::collections::HashMap<String, usize> = Default::default();
        let mut kept = Vec::new();
        for (path, manifest) in all.into_iter().rev() {
            let count = per_thread.entry(manifest.thread_id.clone()).or_default();
            *count += 1;
            if *count > self.limits.max_runs_per_thread && manifest.running_pid.is_none() {
                let _ = std::fs::remove_file(&path);
            } else {
                kept.push((path, manifest));
            }
        }
        if self.blobs.held() <= self.limits.max_store_bytes * 9 / 10 {
            return;
        }
        kept.reverse();
        loop {
            self.collect_garbage_of(&kept);
            if self.blobs.held() <= self.limits.max_store_bytes * 9 / 10 {
                return;
            }
            match kept.iter().position(|(_, m)| m.running_pid.is_none()) {
                Some(oldest) => {
                    let (path, manifest) = kept.remove(oldest);
                    tracing::info!(run = %manifest.run_id, "checkpoint store over its limit: dropping the oldest checkpoint");
                    let _ = std::fs::remove_file(path);
                }
                None => {
                    self.tree.clear();
                    self.collect_garbage_of(&kept);
                    return;
                }
            }
        }
    }

    /// Remove the blobs no checkpoint and not the tree index names (a
    /// forgotten thread's). Returns the bytes freed.
    pub fn collect_garbage(&self) -> u64 {
        let (all, _) = self.list();
        self.collect_garbage_of(&all)
    }

    fn collect_garbage_of(&self, manifests: &[(PathBuf, Manifest)]) -> u64 {
        let mut keep: std::collections::HashSet<String> = self.tree.blobs().into_iter().collect();
        for (_, manifest) in manifests {
            keep.extend(manifest.blobs().cloned());
        }
        self.blobs.collect_garbage(&keep)
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // Signal 0 checks the process exists; EPERM: it does, someone else's.
    // SAFETY: kill with signal 0 sends nothing.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    false
}

#[cfg(test)]
mod tests;
