//! The client's files as the workspace's editor: reads go through
//! `fs/read_text_file` (so the agent sees a buffer's unsaved text, where
//! the client returns it), writes through `fs/write_text_file`.
//!
//! Never behind the client's back:
//! - a client that offers `fs/write_text_file` gets every write, new files
//!   included ([`Editor::creates_files`]), reviewed here with the whole
//!   texts as the call's `diff` when the edit is to be reviewed;
//! - a failed or unanswered `fs/read_text_file` is an error the model
//!   reads ([`Editor::read_document`]), never a read of the disk in its
//!   place: the client may hold the file with unsaved text;
//! - a write the client does not answer is settled by reading the file
//!   again through the client (and looking at the disk): the text shows
//!   the edit, or it is reported as *unknown* with what is known, and the
//!   workspace makes the agent read the file again before its next edit;
//! - a shell command reads the disk, and ACP cannot ask the client to
//!   save: a file written through the client whose disk text is not what
//!   was written is named in the command's result
//!   ([`Editor::save_for_command`]).
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
//! Clients differ in what a read returns. avante.nvim joins a buffer's
//! lines with `\n` and so drops the final newline; a file whose disk text
//! ends in one is seen with it ([`with_final_newline`], `\r\n` for a CRLF
//! file), so an edit keeps it.
//!
//! Only regular files on disk within the size limit are asked for; others
//! (new files, huge ones) are the disk's for reading. The workspace calls
//! [`Editor::read_document`] from synchronous code, so the request is
//! awaited with `block_in_place` on the multi-threaded runtime.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use super::client::FileError;
use super::session::SessionCore;
use crate::sync::MutexExt;
use crate::workspace::{fingerprint, BufferEdit, DocumentSnapshot, EditOutcome, EditStatus, Editor, UnsavedBuffer, MAX_TEXT_FILE_BYTES};

pub struct ClientFiles {
    core: Arc<SessionCore>,
    /// Per file: the version given to the last text seen, and its fingerprint.
    seen: Mutex<HashMap<PathBuf, (i32, u64)>>,
    runtime: tokio::runtime::Handle,
    /// What the client offers: `fs/read_text_file` (without it, the disk
    /// is read) and `fs/write_text_file` (without it, the disk is written,
    /// and only when it holds what the client showed).
    reads: bool,
    writes: bool,
    /// How long each file request may take (`timeouts.requestMs`).
    timeout: Duration,
    /// The text each file was given through `fs/write_text_file`, until
    /// the disk is seen holding it: a client may keep a write in its buffer
    /// unsaved, and a shell command reads the disk.
    written: Mutex<HashMap<PathBuf, Arc<str>>>,
}

/// The client's text of `path` with the file's final newline: a client
/// that returns a buffer's lines without it (avante.nvim) would otherwise
/// make every edit drop it. The newline is the disk's (`\r\n` for a CRLF
/// file), and only added when the disk text ends with one.
pub fn with_final_newline(path: &Path, text: String) -> String {
    if text.is_empty() || text.ends_with('\n') {
        return text;
    }
    match disk_final_newline(path) {
        Some(newline) => text + newline,
        None => text,
    }
}

/// The newline the file on disk ends with, if it ends with one.
fn disk_final_newline(path: &Path) -> Option<&'static str> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let tail = len.min(2);
    file.seek(SeekFrom::Start(len - tail)).ok()?;
    let mut bytes = Vec::with_capacity(2);
    file.take(tail).read_to_end(&mut bytes).ok()?;
    match bytes.as_slice() {
        [b'\r', b'\n'] => Some("\r\n"),
        [.., b'\n'] => Some("\n"),
        _ => None,
    }
}

impl ClientFiles {
    pub fn new(core: Arc<SessionCore>, runtime: tokio::runtime::Handle, reads: bool, writes: bool, timeout: Duration) -> Self {
        ClientFiles { core, seen: Mutex::new(HashMap::new()), runtime, reads, writes, timeout, written: Mutex::new(HashMap::new()) }
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

    /// The file's text as the client shows it now (the disk's, for a client
    /// that does not offer reads), with its final newline kept.
    async fn client_text(&self, path: &Path) -> Result<String, FileError> {
        let text = if self.reads {
            self.core.link.read_text_file(&self.core.id, path, self.timeout).await?
        } else {
            let bytes = std::fs::read(path).map_err(|e| FileError::Failed(format!("cannot read it from the disk: {e}")))?;
            String::from_utf8(bytes).map_err(|_| FileError::Failed("it is not UTF-8 text".into()))?
        };
        if text.len() as u64 > MAX_TEXT_FILE_BYTES {
            return Err(FileError::Failed(format!("the client returned {} bytes, over the limit of {MAX_TEXT_FILE_BYTES}", text.len())));
        }
        Ok(with_final_newline(path, text))
    }

    /// [`ClientFiles::client_text`], from synchronous code.
    fn client_text_blocking(&self, path: &Path) -> Result<String, String> {
        let read = self.client_text(path);
        let text = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| handle.block_on(read))
            }
            // A single-threaded runtime cannot wait here without stopping
            // the very task that would answer; `tandem acp` runs on the
            // multi-threaded one, so this is a bug, said as such.
            Ok(_) => return Err("the client cannot be asked from here (a single-threaded runtime)".into()),
            // A plain thread (a search walker): wait on the runtime.
            Err(_) => self.runtime.block_on(read),
        };
        text.map_err(|err| {
            tracing::info!(path = %path.display(), %err, "reading through the client failed");
            err.to_string()
        })
    }

    /// A client that reads but does not write: the disk is written, only
    /// when it holds the text the client showed (else the client's buffer
    /// has unsaved changes the write would go around).
    fn write_disk(&self, edit: &BufferEdit, display: &str) -> EditOutcome {
        let expected = (!edit.old_text.is_empty() || edit.path.exists()).then(|| fingerprint(edit.old_text.as_bytes()));
        match crate::workspace::atomic_write(&edit.path, edit.new_text.as_bytes(), expected) {
            Ok(()) => {
                let (version, _) = self.version_for(&edit.path, &edit.new_text);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                EditOutcome::Applied { version, saved: true }
            }
            Err(crate::workspace::DiskWriteError::Changed) => EditOutcome::Superseded(format!(
                "{display} has unsaved changes in the editor (its disk text differs from what the editor shows): ask the user to save it first"
            )),
            Err(crate::workspace::DiskWriteError::Exists) => EditOutcome::Superseded(format!("{display} was created by someone else meanwhile")),
            Err(err) => EditOutcome::NotApplied(format!("cannot write {display}: {err:?}")),
        }
    }

    /// The client answered the write with an error: look again, since a
    /// client may fail after changing the buffer (its save failed). It
    /// shows the edit: applied, not saved; else not applied.
    async fn after_failed_write(&self, edit: &BufferEdit, err: String) -> EditOutcome {
        self.seen().remove(&edit.path);
        match self.client_text(&edit.path).await {
            Ok(now) if *now == *edit.new_text => {
                tracing::info!(path = %edit.path.display(), %err, "the client's write failed, but it shows the edit");
                let (version, _) = self.version_for(&edit.path, &now);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                EditOutcome::Applied { version, saved: false }
            }
            _ => EditOutcome::NotApplied(err),
        }
    }

    /// The client did not answer the write: look again. The client shows
    /// the new text: it landed. Otherwise nobody knows, and the message
    /// says what the client shows and what the disk holds (avante.nvim
    /// writes the disk, then fails to reload a modified buffer and never
    /// answers).
    async fn settle(&self, edit: &BufferEdit, display: &str, why: &str) -> EditOutcome {
        // Whatever comes next, the versions given so far say nothing.
        self.seen().remove(&edit.path);
        let on_disk = std::fs::read(&edit.path).ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        let disk = match on_disk.as_deref() {
            Some(text) if *text == *edit.new_text => "the file on disk holds the edit",
            Some(text) if *text == *edit.old_text => "the file on disk does not hold it",
            Some(_) => "the file on disk holds other text",
            None => "the file is not on disk",
        };
        match self.client_text(&edit.path).await {
            Ok(now) if *now == *edit.new_text => {
                let (version, _) = self.version_for(&edit.path, &now);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                tracing::info!(path = %edit.path.display(), "{why}, but the client shows the edit: applied");
                EditOutcome::Applied { version, saved: on_disk.as_deref() == Some(&*edit.new_text) }
            }
            Ok(now) if *now == *edit.old_text => EditOutcome::Unknown(format!(
                "{why}; read again, the client still shows {display} without the edit, and {disk} (the editor may still hold unsaved text of the user's, or apply the edit later)"
            )),
            Ok(_) => EditOutcome::Unknown(format!("{why}; read again, the client shows other text in {display}, and {disk}")),
            Err(err) => EditOutcome::Unknown(format!("{why}; reading {display} again through the client failed too ({err}), and {disk}")),
        }
    }

    /// [`Editor::apply`]: review, look again, write through the client.
    async fn apply_edit(&self, edit: BufferEdit) -> EditOutcome {
        let display = self.core.display(&edit.path);
        // A new file (the workspace checked it is not on disk).
        let creating = edit.old_text.is_empty() && !edit.path.exists();
        if edit.review {
            if let Err(reason) = self.core.review_edit(&edit.path, (!creating).then_some(&*edit.old_text), &edit.new_text).await {
                return EditOutcome::Rejected(reason);
            }
        }
        // Once more, as close to the write as we can: the user may have
        // typed while the edit was reviewed.
        if creating {
            if edit.path.exists() {
                return EditOutcome::Superseded(format!("{display} was created by someone else meanwhile"));
            }
        } else {
            match self.client_text(&edit.path).await {
                Ok(now) if *now != *edit.old_text => {
                    let what = crate::workspace::describe_change(&edit.old_text, &now);
                    self.version_for(&edit.path, &now);
                    return EditOutcome::Superseded(format!("the user changed {display} since you read it: {what}"));
                }
                Ok(_) => {}
                Err(err) => return EditOutcome::NotApplied(format!("cannot read {display} through the client before writing: {err}")),
            }
        }
        if !self.writes {
            return self.write_disk(&edit, &display);
        }
        let outcome = match self.core.link.write_text_file(&self.core.id, &edit.path, &edit.new_text, self.timeout).await {
            Ok(()) => {
                let (version, _) = self.version_for(&edit.path, &edit.new_text);
                self.core.record_written(&edit.path, &edit.old_text, &edit.new_text);
                // Clients differ on saving (Zed saves, others may not): a
                // command looks at the disk first (save_for_command).
                EditOutcome::Applied { version, saved: true }
            }
            Err(FileError::Failed(err)) => self.after_failed_write(&edit, err).await,
            Err(FileError::NoAnswer(why)) => self.settle(&edit, &display, &why).await,
        };
        if let EditOutcome::Applied { .. } = outcome {
            self.written.locked().insert(edit.path.clone(), Arc::clone(&edit.new_text));
        }
        outcome
    }
}

#[async_trait]
impl Editor for ClientFiles {
    fn take_review_comments(&self, path: &Path) -> Vec<crate::protocol::HunkComment> {
        self.core.take_comments(path)
    }

    fn document(&self, path: &Path) -> Option<DocumentSnapshot> {
        self.read_document(path).ok().flatten()
    }

    fn read_document(&self, path: &Path) -> Result<Option<DocumentSnapshot>, String> {
        if !Self::handles(path) {
            return Ok(None);
        }
        let text = self.client_text_blocking(path)?;
        let (version, _) = self.version_for(path, &text);
        Ok(Some(DocumentSnapshot { text: Arc::from(text), version, dirty: false }))
    }

    fn creates_files(&self) -> bool {
        self.writes
    }

    fn open_documents(&self) -> Vec<PathBuf> {
        // ACP does not say which files the client has open.
        Vec::new()
    }

    fn fingerprint(&self, path: &Path, version: i32) -> Option<u64> {
        self.seen().get(path).filter(|(v, _)| *v == version).map(|(_, print)| *print)
    }

    async fn apply(&self, edit: BufferEdit) -> EditOutcome {
        let path = edit.path.clone();
        let outcome = self.apply_edit(edit).await;
        let status = match &outcome {
            // A client that does not write: Tandem wrote the disk.
            EditOutcome::Applied { .. } if !self.writes => EditStatus::Written,
            EditOutcome::Applied { .. } => EditStatus::Applied,
            EditOutcome::Partial(_) => EditStatus::Partial,
            EditOutcome::Rejected(_) => EditStatus::Rejected,
            EditOutcome::NotApplied(_) => EditStatus::NotApplied,
            EditOutcome::Superseded(_) | EditOutcome::Changed(_) => EditStatus::Superseded,
            EditOutcome::Unknown(_) => EditStatus::Unknown,
        };
        self.core.record_outcome(&path, status);
        outcome
    }

    /// ACP cannot ask the client to save. The files written through it
    /// whose disk text is not what was written are named: the command
    /// will not see the agent's edit there.
    async fn save_for_command(&self, _run: Option<&str>) -> Vec<UnsavedBuffer> {
        let mut written = self.written.locked();
        written.retain(|path, text| std::fs::read(path).map_or(true, |disk| disk != text.as_bytes()));
        let mut unsaved: Vec<UnsavedBuffer> = written
            .keys()
            .map(|path| UnsavedBuffer {
                path: path.clone(),
                reason: "the agent's edit went to the ACP client, which has not saved it to the disk".into(),
            })
            .collect();
        unsaved.sort_by(|a, b| a.path.cmp(&b.path));
        unsaved
    }

    fn known_text(&self, path: &Path, version: i32, _text: &Arc<str>, fingerprint: u64) {
        self.seen().insert(path.to_path_buf(), (version, fingerprint));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_newline_is_the_disks() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            // (disk, what the client returns) → what the agent sees
            ("a\nb\n", "a\nb", "a\nb\n"),
            ("a\r\nb\r\n", "a\r\nb", "a\r\nb\r\n"),
            ("a\nb\n", "a\nb\n", "a\nb\n"),
            ("a\nb", "a\nb", "a\nb"),
            ("a\n", "", ""),
            ("", "typed", "typed"),
        ];
        for (disk, client, seen) in cases {
            let path = dir.path().join("f.txt");
            std::fs::write(&path, disk).unwrap();
            assert_eq!(with_final_newline(&path, client.to_string()), seen, "disk {disk:?}, client {client:?}");
        }
        assert_eq!(with_final_newline(&dir.path().join("missing"), "x".into()), "x");
    }
}
