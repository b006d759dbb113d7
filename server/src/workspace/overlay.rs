//! The overlay of open editor buffers on the disk, and the editor edit sink.
//!
//! The LSP module implements [`Editor`] over its ropey documents and
//! `workspace/applyEdit`; tests and headless mode use [`MemoryEditor`] or no
//! editor at all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use crate::sync::MutexExt;

use async_trait::async_trait;

/// A copy of an open document at one moment, as the editor holds it.
#[derive(Debug, Clone)]
pub struct DocumentSnapshot {
    pub text: Arc<str>,
    pub version: i32,
    /// The buffer holds changes that are not on disk.
    pub dirty: bool,
}

/// One replacement: the bytes `range` of the text a change was computed
/// from become `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub range: std::ops::Range<usize>,
    pub text: String,
}

/// The byte length of `old_len` bytes of text after `splices`.
pub fn len_after(old_len: usize, splices: &[Splice]) -> usize {
    splices.iter().fold(old_len, |len, s| len - s.range.len() + s.text.len())
}

/// `text` with `splices` (in order, not overlapping, on character
/// boundaries) made, written straight into the shared text an edit hands
/// on: one copy of a big document, where a `String` turned into an
/// `Arc<str>` is two (and two fresh allocations to fault in).
///
/// Panics, as slicing `text` does, when a splice is out of order or off a
/// character boundary.
pub fn spliced(text: &str, splices: &[Splice]) -> Arc<str> {
    let len = len_after(text.len(), splices);
    let mut bytes = Arc::<[u8]>::new_uninit_slice(len);
    let slots = Arc::get_mut(&mut bytes).expect("a new Arc is not shared");
    let mut filled = 0;
    let mut put = |piece: &str| {
        for (slot, byte) in slots[filled..filled + piece.len()].iter_mut().zip(piece.as_bytes()) {
            slot.write(*byte);
        }
        filled += piece.len();
    };
    let mut copied = 0;
    for splice in splices {
        put(&text[copied..splice.range.start]);
        put(&splice.text);
        copied = splice.range.end;
    }
    put(&text[copied..]);
    assert_eq!(filled, len, "the splices overlap or are out of order");
    // SAFETY: all `len` bytes were written just above.
    let bytes = unsafe { bytes.assume_init() };
    // SAFETY: the bytes are UTF-8: pieces of a `str` cut where slicing it
    // checked they fall on character boundaries, and whole `String`s; and
    // `str` has the layout of `[u8]`, as `Arc<str>::from(&str)` relies on.
    unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) }
}

/// A whole-text change to an open document, computed from the text at
/// `version`. The editor sink turns it into a minimal versioned edit.
/// The texts are shared with the snapshot and the tool's plan, not copied.
#[derive(Debug, Clone)]
pub struct BufferEdit {
    pub path: PathBuf,
    pub version: i32,
    pub old_text: Arc<str>,
    pub new_text: Arc<str>,
    /// The same change as replacements of byte ranges of `old_text`, in
    /// order and not overlapping, when the tool knows them (`edit_file`):
    /// the sink then sends them as they are, in O(edit), instead of diffing
    /// the whole text. `None` for a whole-text change (`write_file`).
    pub splices: Option<Vec<Splice>>,
    pub label: String,
    /// Send it for the user's review in the editor's own preview.
    pub review: bool,
    /// The run it is part of (see [`crate::workspace::Workspace::for_run`]).
    pub run: Option<Arc<str>>,
    /// The same edit as the one before it to this document, offered again
    /// rebased onto the text the user changed while it was reviewed (the
    /// editor answered [`EditOutcome::Changed`]): the same edit, not another.
    pub reoffer: bool,
    /// Told when an edit the editor answered [`EditOutcome::Unknown`] for
    /// is seen to have landed after all (a late `didChange`): what the
    /// edit did then, said as the call's changed effect.
    pub landed_late: Option<LateLanding>,
    /// Waits until the run's front end has passed on the run's events sent
    /// before this edit (the call's `tool_call` among them): the sink
    /// awaits it before the edit goes out, so the editor never sees an edit
    /// before the event of the call that made it. `None` outside a run, or
    /// for a front end that does not reach the events in order.
    pub turn: Option<EditTurn>,
}

/// See [`BufferEdit::turn`].
#[derive(Clone)]
pub struct EditTurn(pub Arc<dyn Fn() -> futures::future::BoxFuture<'static, ()> + Send + Sync>);

impl EditTurn {
    /// Wait for the edit's turn.
    pub async fn wait(&self) {
        (self.0)().await;
    }
}

impl std::fmt::Debug for EditTurn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EditTurn")
    }
}

/// See [`BufferEdit::landed_late`].
#[derive(Clone)]
pub struct LateLanding(pub Arc<dyn Fn(crate::protocol::FileEffect) + Send + Sync>);

impl std::fmt::Debug for LateLanding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LateLanding")
    }
}

/// What happened to an edit sent to the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOutcome {
    /// The buffer now holds the new text, at `version`; `saved` when it was
    /// also written to disk by the editor.
    Applied { version: i32, saved: bool },
    /// The user declined it.
    Rejected(String),
    /// The editor said no, or said yes without changing the buffer.
    NotApplied(String),
    /// The user edited the document first.
    Superseded(String),
    /// The editor did not apply it because the document changed after the
    /// edit was computed: while the user reviewed it (VS Code's "has changed
    /// in the meantime", the Neovim plugin's version check, eglot's version
    /// refusal) or in the moment before it was sent. The workspace rebases
    /// the edit onto the new text and offers it again, or refuses it
    /// ([`crate::workspace::Workspace::write`]).
    Changed(String),
    /// The editor applied some of the edit's hunks (the user declined the
    /// others in its review); the buffer holds that at `partial.version`.
    Partial(PartialEdit),
    /// Nobody can say whether it landed: the editor did not answer (an ACP
    /// client's `fs/write_text_file` that timed out), and what it shows
    /// since does not settle it. The string says what is known.
    Unknown(String),
}

/// Open editor buffers, and the way to change them.
#[async_trait]
pub trait Editor: Send + Sync {
    /// The open document at `path`, if any.
    fn document(&self, path: &Path) -> Option<DocumentSnapshot>;
    /// The same, or why the editor could not give the file's text: an
    /// editor that may hold a file without being able to show it now (an
    /// ACP client whose `fs/read_text_file` failed) says so, and the
    /// workspace then neither reads nor writes the disk in its place.
    fn read_document(&self, path: &Path) -> Result<Option<DocumentSnapshot>, String> {
        Ok(self.document(path))
    }
    /// Files this editor has no document for that do not exist yet are
    /// created through it too ([`Editor::apply`] with an empty old text):
    /// an ACP client that offers `fs/write_text_file`, which every write
    /// goes through.
    fn creates_files(&self) -> bool {
        false
    }
    /// Every open document's path.
    fn open_documents(&self) -> Vec<PathBuf>;
    /// Apply an edit to an open document; must not overwrite a newer version.
    async fn apply(&self, edit: BufferEdit) -> EditOutcome;
    /// The fingerprint of the open document's text at `version`, when the
    /// editor keeps one (computed at most once per version); `None`: the
    /// caller hashes the snapshot itself.
    fn fingerprint(&self, _path: &Path, _version: i32) -> Option<u64> {
        None
    }
    /// The caller knows the document's text at `version` (an edit it
    /// made landed there) and its fingerprint: an editor that caches
    /// snapshots may keep them instead of copying and hashing the
    /// document again. It must check that the buffer holds this text.
    fn known_text(&self, _path: &Path, _version: i32, _text: &Arc<str>, _fingerprint: u64) {}
    /// A command is about to run against the disk: save the buffers `run`
    /// changed that held no unsaved user changes before the run, and
    /// return the files whose editor text the command will not see.
    async fn save_for_command(&self, _run: Option<&str>) -> Vec<UnsavedBuffer> {
        Vec::new()
    }
    /// The run `run` is ending: an edit of it whose outcome was unknown and
    /// that the buffer shows now is told to its [`BufferEdit::landed_late`]
    /// at once; none of the run's is watched for after.
    fn settle_late(&self, _run: Option<&str>) {}
    /// The comments the user left on the hunks of the last edit of `path`
    /// in the editor's review (sent with its answer), taken: the edit's
    /// tool result carries them to the model.
    fn take_review_comments(&self, _path: &Path) -> Vec<crate::protocol::HunkComment> {
        Vec::new()
    }
}

/// A buffer the agent changed whose text is not on disk when a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsavedBuffer {
    pub path: PathBuf,
    /// Why it was not saved, for the model ("it held unsaved changes of
    /// the user's before the run").
    pub reason: String,
}

/// An in-memory editor for tests: documents are a map, `apply` checks the
/// version and bumps it.
#[derive(Debug, Default)]
pub struct MemoryEditor {
    documents: Mutex<HashMap<PathBuf, DocumentSnapshot>>,
}

impl MemoryEditor {
    pub fn open(&self, path: &Path, text: &str, version: i32) {
        self.lock().insert(path.to_path_buf(), DocumentSnapshot { text: Arc::from(text), version, dirty: false });
    }

    pub fn close(&self, path: &Path) {
        self.lock().remove(path);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, DocumentSnapshot>> {
        self.documents.locked()
    }
}

#[async_trait]
impl Editor for MemoryEditor {
    fn document(&self, path: &Path) -> Option<DocumentSnapshot> {
        self.lock().get(path).cloned()
    }

    fn open_documents(&self) -> Vec<PathBuf> {
        self.lock().keys().cloned().collect()
    }

    async fn apply(&self, edit: BufferEdit) -> EditOutcome {
        let mut documents = self.lock();
        let Some(doc) = documents.get_mut(&edit.path) else {
            return EditOutcome::NotApplied("the document is not open".to_string());
        };
        if doc.version != edit.version {
            return EditOutcome::Superseded(format!("version {} is now {}", edit.version, doc.version));
        }
        doc.version += 1;
        doc.text = edit.new_text;
        EditOutcome::Applied { version: doc.version, saved: false }
    }
}

/// One hunk of an edit as it stands in the buffer now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkInBuffer {
    /// Where it is in the buffer's current text: the new text of a landed
    /// hunk, the old text still there for a declined one.
    pub lines: crate::protocol::LineSpan,
    /// The text it replaced (landed) or would have replaced (declined).
    pub old: String,
    /// The text it put there (landed) or would have put there (declined).
    pub new: String,
}

/// An edit the editor applied only in part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialEdit {
    /// The buffer's version that holds it.
    pub version: i32,
    pub landed: Vec<HunkInBuffer>,
    pub declined: Vec<HunkInBuffer>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Written in place, the same text as spliced into a `String`.
        #[test]
        fn spliced_in_place_is_the_plain_splice(
            text in "[a-c\\né]{0,40}",
            cuts in proptest::collection::vec((0usize..48, 0usize..6, "[x-zé\\n]{0,5}"), 0..6),
        ) {
            let mut splices = Vec::new();
            let mut from = 0;
            for (gap, len, new) in cuts {
                let (start, end) = (from + gap, from + gap + len);
                if end > text.len() || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                    continue;
                }
                splices.push(Splice { range: start..end, text: new });
                from = end;
            }
            let mut plain = text.clone();
            for splice in splices.iter().rev() {
                plain.replace_range(splice.range.clone(), &splice.text);
            }
            prop_assert_eq!(&*spliced(&text, &splices), plain.as_str());
        }
    }
}
