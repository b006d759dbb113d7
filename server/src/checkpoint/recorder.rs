//! The recorder of one run: told by the workspace before and after each
//! change the run writes, and by the executor around each shell command,
//! it keeps the run's manifest up to date on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::edits::EditChain;
use super::manifest::{self, FileEntry, Manifest};
use super::tree::{LookId, TreeChange};
use super::Checkpoints;
use crate::sync::MutexExt;
use crate::workspace::{fingerprint_scheme, ChangeRecorder, CommandChange, SplicedEdit};

pub struct RunRecorder {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Checkpoints>,
    path: PathBuf,
    manifest: Mutex<Manifest>,
    /// The look opened before each command in flight (sub-agents may run
    /// commands at once; each after-look pairs with the oldest before-look).
    before_commands: Mutex<Vec<LookId>>,
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
            manifest.keep_changed();
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
        let (look, stats) = self.store.tree.begin(&self.store.blobs);
        tracing::debug!(full = ?stats.full, folders = stats.folders, files = stats.files, hashed = stats.hashed, "checkpoint: the workspace before a command");
        self.before_commands.locked().push(look);
    }

    /// Compare the workspace with its look before the command: what moved
    /// is the command's change (returned, in path order).
    fn after_command(&self) -> Vec<CommandChange> {
        let look = {
            let mut pending = self.before_commands.locked();
            if pending.is_empty() {
                return Vec::new();
            }
            pending.remove(0)
        };
        let (mut changed, stats) = self.store.tree.end(look, &self.store.blobs);
        tracing::debug!(full = ?stats.full, folders = stats.folders, files = stats.files, hashed = stats.hashed, changed = changed.len(), "checkpoint: the workspace after a command");
        // The sandbox's empty placeholders for protected paths (held while
        // a background task runs, gone when it ends) are no change.
        changed.retain(|change| !crate::sandbox::is_placeholder(&change.path));
        if changed.is_empty() {
            return Vec::new();
        }
        let changes = changed.iter().map(|change| CommandChange { path: change.path.clone(), deleted: change.after.is_none() }).collect();
        let mut manifest = self.lock();
        // The command's result is kept whole: edits kept so far no longer
        // say what the run left in a file it changed (even when it put
        // back the very content they were made on).
        if !manifest.edits.is_empty() {
            manifest.edits.retain(|chain| !changed.iter().any(|change| change.path == chain.path));
        }
        // By path: a command may change thousands of files.
        let mut known: std::collections::HashMap<PathBuf, usize> =
            manifest.files.iter().enumerate().map(|(at, entry)| (entry.path.clone(), at)).collect();
        for TreeChange { path, before, after } in changed {
            let at = *known.entry(path.clone()).or_insert_with(|| {
                let (before_blob, not_kept) = match before {
                    None => (None, None),
                    Some(entry) => (entry.blob, entry.not_kept),
                };
                manifest.files.push(FileEntry { path, before: before_blob, after: None, not_kept });
                manifest.files.len() - 1
            });
            if let Some(entry) = manifest.files.get_mut(at) {
                entry.after = after.as_ref().and_then(|a| a.blob.clone());
                if let Some(reason) = after.and_then(|a| a.not_kept) {
                    entry.not_kept.get_or_insert(reason);
                }
            }
        }
        self.save(&manifest);
        changes
    }
}

impl Drop for Inner {
    /// A command whose end was never seen (its call was dropped): its look
    /// is closed, so the index stops keeping what it needed.
    fn drop(&mut self) {
        let looks = std::mem::take(&mut *self.before_commands.locked());
        for look in looks {
            self.store.tree.abandon(look);
        }
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
        // The content is kept whole now: edits kept so far no longer say
        // what the run left.
        manifest.edits.retain(|chain| chain.path != path);
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

    /// Kept as the edit, O(edit), when the file's first change in the run
    /// is this edit or the edits before it were kept so and left the text
    /// this one was made on; else as any change (a copy of the text after).
    /// The text before the run is kept once, at the first change.
    fn buffer_edit(&self, edit: &SplicedEdit<'_>) {
        let inner = &self.inner;
        let Some(step) = EditChain::step(edit.before, edit.splices) else {
            self.before_change(edit.path, &|| Some(edit.before.as_bytes().to_vec()));
            return self.after_change(edit.path, edit.after.as_bytes());
        };
        let mut manifest = inner.lock();
        let after = match manifest.entry_mut(edit.path) {
            Some(entry) => entry.after.clone(),
            None => {
                let (before, not_kept) = inner.keep(Some(edit.before.as_bytes()));
                manifest.files.push(FileEntry { path: edit.path.to_path_buf(), before: before.clone(), after: before.clone(), not_kept });
                manifest.edits.retain(|chain| chain.path != edit.path);
                manifest.edits.push(EditChain {
                    path: edit.path.to_path_buf(),
                    base: before,
                    scheme: fingerprint_scheme(),
                    before: edit.before_fingerprint,
                    after: edit.before_fingerprint,
                    steps: Vec::new(),
                });
                manifest.version = manifest::FORMAT_VERSION;
                manifest.entry_mut(edit.path).and_then(|entry| entry.after.clone())
            }
        };
        let chain = manifest
            .edits
            .iter_mut()
            .find(|chain| chain.path == edit.path && chain.base == after && chain.comparable() && chain.after == edit.before_fingerprint);
        match chain {
            Some(chain) => {
                chain.steps.push(step);
                chain.after = edit.after_fingerprint;
                inner.save(&manifest);
            }
            None => {
                // The edits so far do not lead to this one's text (the user
                // typed between them, or the file changed otherwise).
                drop(manifest);
                self.after_change(edit.path, edit.after.as_bytes());
            }
        }
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
