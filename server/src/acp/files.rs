//! The client's files as the workspace's editor: reads go through
//! `fs/read_text_file` (so the agent sees a buffer's unsaved text, where
//! the client returns it), writes through `fs/write_text_file`.
//!
//! ACP has no document versions, so this sink makes its own: a file's
//! version goes up whenever the text the client returns differs from the
//! last text seen. The read ledger keeps the version the agent read; the
//! workspace reads the file again through the client right before writing
//! and refuses the write when the version moved ("the user changed it
//! since you read it"), and [`ClientFiles::apply`] reads it once more just
//! before `fs/write_text_file`, so what is left is the client's own time
//! between answering that read and applying the write.
//!
//! Only regular files on disk within the size limit are asked for; others
//! (new files, huge ones) are the disk's, where the workspace's own checks
//! apply. The workspace calls [`Editor::document`] from synchronous code,
//! so the request is awaited with `block_in_place` on the multi-threaded
//! runtime (and not at all elsewhere: the disk is read instead).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::session::SessionCore;
use crate::sync::MutexExt;
use crate::workspace::{fingerprint, BufferEdit, DocumentSnapshot, EditOutcome, Editor, MAX_TEXT_FILE_BYTES};

pub struct ClientFiles {
    core: Arc<SessionCore>,
    /// Per file: the version given to the last text seen, and its fingerprint.
    seen: Mutex<HashMap<PathBuf, (i32, u64)>>,
    runtime: tokio::runtime::Handle,
    /// The client offers `fs/write_text_file`; without it the disk is
    /// written, and only when it holds what the client showed.
    writes: bool,
}

impl ClientFiles {
    pub fn new(core: Arc<SessionCore>, runtime: tokio::runtime::Handle, writes: bool) -> Self {
        ClientFiles { core, seen: Mutex::new(HashMap::new()), runtime, writes }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (i32, u64)>> {
        self.seen.locked()
    }

    /// The file goes through the client: a regular file on disk, not too large.
    pub fn handles(path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.len() <= MAX_TEXT_FILE_BYTES)
    }

    /// The version for this text of `path`: the same as last time when the
    /// text is the same, the next one when it changed.
    fn version_for(&self, path: &Path, text: &str) -> (i32, u64) {
        let print = fingerprint(text.as_bytes());
        let mut seen = self.seen();
        let entry = seen.entry(path.to_path_buf()).or_insert((0, print));
        if entry.1 != print || entry.0 == 0 {
            *entry = (entry.0 + 1, print);
        }
        *entry
    }

    /// Ask the client for the text, from synchronous code.
    fn read_blocking(&self, path: &Path) -> Option<String> {
        let read = self.core.link.read_text_file(&self.core.id, path);
        let text = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(read))
            }
            // A single-threaded runtime cannot wait here without stopping
            // the very task that would answer: read the disk instead.
            Ok(_) => return None,
            // A plain thread (a search walker): wait on the runtime.
            Err(_) => self.runtime.block_on(read),
        };
        match text {
            Ok(text) if text.len() as u64 <= MAX_TEXT_FILE_BYTES => Some(text),
            Ok(text) => {
                tracing::warn!(path = %path.display(), bytes = text.len(), "the client returned a file over the size limit; reading the disk");
                None
            }
            Err(err) => {
                tracing::info!(path = %path.display(), %err, "fs/read_text_file failed; reading the disk");
                None
            }
        }
    }
}

impl ClientFiles {
    /// A client that reads but does not write: the disk is written, only
    /// when it holds the text the client showed (else the client's buffer
    /// has unsaved changes the write would go around).
    fn write_disk(&self, edit: &BufferEdit, display: &str) -> EditOutcome {
        let expected = fingerprint(edit.old_text.as_bytes());
        match crate::workspace::atomic_write(&edit.path, edit.new_text.as_bytes(), Some(expected)) {
            Ok(()) => {
                let (version, _) = self.version_for(&edit.path, &edit.new_text);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                EditOutcome::Applied { version, saved: true }
            }
            Err(crate::workspace::DiskWriteError::Changed) => EditOutcome::Superseded(format!(
                "{display} has unsaved changes in the editor (its disk text differs from what the editor shows): ask the user to save it first"
            )),
            Err(err) => EditOutcome::NotApplied(format!("cannot write {display}: {err:?}")),
        }
    }
}

#[async_trait]
impl Editor for ClientFiles {
    fn document(&self, path: &Path) -> Option<DocumentSnapshot> {
        if !Self::handles(path) {
            return None;
        }
        let text = self.read_blocking(path)?;
        let (version, _) = self.version_for(path, &text);
        Some(DocumentSnapshot { text: Arc::from(text), version, dirty: false })
    }

    fn open_documents(&self) -> Vec<PathBuf> {
        // ACP does not say which files the client has open.
        Vec::new()
    }

    fn fingerprint(&self, path: &Path, version: i32) -> Option<u64> {
        self.seen().get(path).filter(|(v, _)| *v == version).map(|(_, print)| *print)
    }

    async fn apply(&self, edit: BufferEdit) -> EditOutcome {
        let display = self.core.display(&edit.path);
        if edit.review {
            if let Err(reason) = self.core.review_edit(&edit.path, &edit.old_text, &edit.new_text).await {
                return EditOutcome::Rejected(reason);
            }
        }
        // Once more, as close to the write as we can: the user may have
        // typed while the edit was reviewed.
        match self.core.link.read_text_file(&self.core.id, &edit.path).await {
            Ok(now) if *now != *edit.old_text => {
                let what = crate::workspace::describe_change(&edit.old_text, &now);
                self.version_for(&edit.path, &now);
                return EditOutcome::Superseded(format!("the user changed {display} since you read it: {what}"));
            }
            Ok(_) => {}
            Err(err) => return EditOutcome::NotApplied(format!("cannot read {display} through the client before writing: {err}")),
        }
        if !self.writes {
            return self.write_disk(&edit, &display);
        }
        match self.core.link.write_text_file(&self.core.id, &edit.path, &edit.new_text).await {
            Ok(()) => {
                let (version, _) = self.version_for(&edit.path, &edit.new_text);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                // Clients differ on saving (Zed saves, others may not); the
                // disk is theirs from here.
                EditOutcome::Applied { version, saved: true }
            }
            Err(err) => EditOutcome::NotApplied(format!("the client's fs/write_text_file failed: {err}")),
        }
    }

    fn known_text(&self, path: &Path, version: i32, _text: &Arc<str>, fingerprint: u64) {
        self.seen().insert(path.to_path_buf(), (version, fingerprint));
    }
}
