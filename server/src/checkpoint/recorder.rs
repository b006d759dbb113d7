//! The recorder of one run: told by the workspace before and after each
//! change the run writes, and by the executor around each shell command,
//! it keeps the run's manifest up to date on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::manifest::{self, FileEntry, Manifest};
use super::tree::{self, Snapshot};
use super::Checkpoints;
use crate::sync::MutexExt;
use crate::workspace::{ChangeRecorder, CommandChange};

pub struct RunRecorder {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Checkpoints>,
    path: PathBuf,
    manifest: Mutex<Manifest>,
    /// The workspace before each command in flight (sub-agents may run
    /// commands at once; each after-look pairs with the oldest before-look).
    before_commands: Mutex<Vec<Snapshot>>,
    /// [`RunRecorder::finish`] ran: the manifest on disk is the store's
    /// now (an undo marks it), this recorder no longer writes it.
    finished: std::sync::atomic::AtomicBool,
}

impl RunRecorder {
    pub(super) fn new(store: Arc<Checkpoints>, path: PathBuf, manifest: Manifest) -> Self {
        let inner = Inner { store, path, manifest: Mutex::new(manifest), before_commands: Mutex::new(Vec::new()), finished: Default::default() };
        RunRecorder { inner: Arc::new(inner) }
    }

    /// The run's id as the front end named it.
    pub fn run_id(&self) -> String {
        self.inner.lock().run_id.clone()
    }

    /// The id of the checkpoint the run leaves (unique in the workspace:
    /// `tandem undo ID` takes it), `None` while it changed nothing.
    pub fn checkpoint_id(&self) -> Option<String> {
        let manifest = self.inner.lock();
        manifest.changed_files().next().is_some().then(|| manifest.id.clone())
    }

    /// The files the run changed so far.
    pub fn changed_files(&self) -> Vec<PathBuf> {
        self.inner.lock().changed_files().map(|entry| entry.path.clone()).collect()
    }

    /// The run ended: the checkpoint is complete. A run that changed nothing
    /// leaves no checkpoint (undo goes back to the last run that did).
    /// Only the first call counts: later changes are not recorded, and an
    /// undo's mark on the manifest is never overwritten.
    pub fn finish(&self) {
        let inner = &self.inner;
        {
            let mut manifest = inner.lock();
            if inner.finished.swap(true, std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            manifest.running_pid = None;
            manifest.files.retain(|entry| entry.not_kept.is_some() || entry.before != entry.after);
            if manifest.files.is_empty() {
                let _ = std::fs::remove_file(&inner.path);
            } else {
                inner.write(&manifest);
            }
        }
        inner.store.enforce_limits();
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, Manifest> {
        self.manifest.locked()
    }

    /// Save the manifest while the run is recorded (after [`RunRecorder::finish`]: nothing).
    fn save(&self, manifest: &Manifest) {
        if !self.finished.load(std::sync::atomic::Ordering::SeqCst) {
            self.write(manifest);
        }
    }

    fn write(&self, manifest: &Manifest) {
        if let Err(err) = manifest::save(&self.path, manifest) {
            tracing::warn!(%err, path = %self.path.display(), "cannot save the run's checkpoint");
        }
    }

    fn keep(&self, bytes: Option<&[u8]>) -> (Option<String>, Option<String>) {
        match bytes.map(|bytes| self.store.blobs.put(bytes)) {
            None => (None, None),
            Some(Ok(id)) => (Some(id), None),
            Some(Err(err)) => (None, Some(err.to_string())),
        }
    }

    fn before_command(&self) {
        let (snapshot, stats) = self.store.tree.snapshot(&self.store.roots, &self.store.blobs);
        tracing::debug!(files = stats.files, hashed = stats.hashed, "checkpoint: workspace before a command");
        self.before_commands.locked().push(snapshot);
    }

    /// Compare the workspace with its look before the command: what moved
    /// is the command's change (returned, in path order).
    fn after_command(&self) -> Vec<CommandChange> {
        let before = {
            let mut pending = self.before_commands.locked();
            if pending.is_empty() {
                return Vec::new();
            }
            pending.remove(0)
        };
        let now = tree::walk(&self.store.roots);
        let mut seen = std::collections::HashSet::with_capacity(now.len());
        let mut changed: Vec<(PathBuf, Option<tree::Stat>)> = Vec::new();
        for (path, stat) in now {
            if before.get(&path).is_none_or(|entry| entry.stat != stat) {
                changed.push((path.clone(), Some(stat)));
            }
            seen.insert(path);
        }
        changed.extend(before.keys().filter(|path| !seen.contains(*path)).map(|path| (path.clone(), None)));
        // The sandbox's empty placeholders for protected paths (held while
        // a background task runs, gone when it ends) are no change.
        changed.retain(|(path, _)| !crate::sandbox::is_placeholder(path));
        if changed.is_empty() {
            return Vec::new();
        }
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        let changes = changed.iter().map(|(path, stat)| CommandChange { path: path.clone(), deleted: stat.is_none() }).collect();
        let mut manifest = self.lock();
        for (path, stat) in changed {
            let after = stat.map(|stat| tree::keep(&path, stat, &self.store.blobs));
            if manifest.entry_mut(&path).is_none() {
                let (before_blob, not_kept) = match before.get(&path) {
                    None => (None, None),
                    Some(entry) => (entry.blob.clone(), entry.not_kept.clone()),
                };
                manifest.files.push(FileEntry { path: path.clone(), before: before_blob, after: None, not_kept });
            }
            if let Some(entry) = manifest.entry_mut(&path) {
                entry.after = after.as_ref().and_then(|a| a.blob.clone());
                if let Some(reason) = after.as_ref().and_then(|a| a.not_kept.clone()) {
                    entry.not_kept.get_or_insert(reason);
                }
            }
            self.store.tree.update(&path, after);
        }
        self.save(&manifest);
        drop(manifest);
        self.store.tree.save();
        changes
    }
}

#[async_trait::async_trait]
impl ChangeRecorder for RunRecorder {
    fn before_change(&self, path: &Path, current: &dyn Fn() -> Option<Vec<u8>>) {
        let inner = &self.inner;
        let mut manifest = inner.lock();
        if manifest.entry_mut(path).is_some() {
            return;
        }
        let bytes = current();
        let (before, not_kept) = inner.keep(bytes.as_deref());
        // Until the change lands, the run has left the file as it was.
        manifest.files.push(FileEntry { path: path.to_path_buf(), before: before.clone(), after: before, not_kept });
        inner.save(&manifest);
    }

    fn after_change(&self, path: &Path, content: &[u8]) {
        let inner = &self.inner;
        let (after, not_kept) = inner.keep(Some(content));
        let mut manifest = inner.lock();
        match manifest.entry_mut(path) {
            Some(entry) => {
                entry.after = after;
                if let Some(reason) = not_kept {
                    entry.not_kept.get_or_insert(reason);
                }
            }
            None => manifest.files.push(FileEntry {
                path: path.to_path_buf(),
                before: None,
                after,
                not_kept: Some("not recorded: its content before the change was not seen".into()),
            }),
        }
        inner.save(&manifest);
    }

    async fn before_command(&self) {
        let inner = Arc::clone(&self.inner);
        if let Err(err) = tokio::task::spawn_blocking(move || inner.before_command()).await {
            tracing::warn!(%err, "checkpoint: the look at the workspace before a command failed");
        }
    }

    async fn after_command(&self) -> Vec<CommandChange> {
        let inner = Arc::clone(&self.inner);
        match tokio::task::spawn_blocking(move || inner.after_command()).await {
            Ok(changes) => changes,
            Err(err) => {
                tracing::warn!(%err, "checkpoint: the look at the workspace after a command failed");
                Vec::new()
            }
        }
    }
}
