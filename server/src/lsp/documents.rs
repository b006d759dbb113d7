//! Open documents: what the editor holds, as ropey buffers with their
//! versions, kept in sync by `didOpen`/`didChange`/`didSave`/`didClose`.
//!
//! Invariant 5: every notification is applied under a std `Mutex`, in the
//! handler body, before any `.await`. tower-lsp-server runs handlers
//! concurrently; a handler that awaited (an async lock, a log message)
//! before applying could let version 3 land before version 2.
//!
//! Besides the text, a document remembers whether it has unsaved user
//! changes (`dirty`: set by `didChange`, cleared by `didOpen`/`didSave`) and
//! its last few `(version, fingerprint)` states, so the applyEdit bridge can
//! tell whether its edit ever landed even when the user typed right after.
//! Waiters (the applyEdit verification) wake on every change through a
//! `watch` channel instead of sleeping.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ropey::Rope;
use tokio::sync::watch;
use tower_lsp_server::ls_types::{Range, TextDocumentContentChangeEvent, TextEdit, Uri};

use super::transport::SyncOrder;
use super::position::{byte_to_position, position_to_char, PositionEncoding};
use crate::completion::EditHistory;
use crate::sync::MutexExt;
use crate::workspace::{fingerprint, normalize_lexically, resolve_symlinks, DocumentSnapshot, Splice};

/// States remembered per document for the applyEdit verification.
const HISTORY_LEN: usize = 64;

#[derive(Debug)]
struct Document {
    uri: Uri,
    rope: Rope,
    version: i32,
    dirty: bool,
    history: VecDeque<(i32, u64)>,
    /// Pending checks of agent edits sent as splices (see [`Documents::expect`]).
    expectations: Vec<Pending>,
    /// The text of `rope` as one string, made by the first snapshot after a
    /// change and shared by the next ones (planning an edit and writing it
    /// both take one): a 10 MB document is copied once per version, not per
    /// snapshot. Cleared by every change.
    text: Option<Arc<str>>,
    /// The fingerprint of `text`, computed by the first read that needs it
    /// (or given with the text of an agent edit that landed): one hash per
    /// version. Cleared with `text`.
    fingerprint: Option<u64>,
    /// The user's recent edits, for next-edit suggestions.
    edits: EditHistory,
}

/// An open document as inline completions need it: its rope (a clone
/// costs nothing), its version and its recent edits.
#[derive(Debug, Clone)]
pub struct Current {
    pub path: PathBuf,
    pub rope: Rope,
    pub version: i32,
    pub edits: Vec<crate::completion::RecentEdit>,
}

/// What a document must hold once an edit sent as splices has landed: its
/// byte length, and each splice's new text at its place in the edited text.
/// Checking it costs O(edit), not O(document): no hash, no copy.
#[derive(Debug, Clone)]
pub struct Expectation {
    len: usize,
    pieces: Vec<(usize, String)>,
}

impl Expectation {
    /// After `splices` (in order, not overlapping) of a text of `old_len` bytes.
    pub fn after(old_len: usize, splices: &[Splice]) -> Self {
        let mut shift: isize = 0;
        let mut pieces = Vec::with_capacity(splices.len());
        for splice in splices {
            let at = splice.range.start.saturating_add_signed(shift);
            pieces.push((at, splice.text.clone()));
            shift += splice.text.len() as isize - splice.range.len() as isize;
        }
        Expectation { len: crate::workspace::len_after(old_len, splices), pieces }
    }

    fn holds(&self, rope: &Rope) -> bool {
        rope.len_bytes() == self.len
            && self.pieces.iter().all(|(at, text)| {
                at.checked_add(text.len())
                    .and_then(|end| rope.get_byte_slice(*at..end))
                    .is_some_and(|slice| slice == text.as_str())
            })
    }
}

#[derive(Debug)]
struct Pending {
    id: u64,
    after: i32,
    expectation: Expectation,
    /// The first version after `after` that held the expectation.
    held_at: Option<i32>,
}

/// While alive, changes to one document are checked against an
/// [`Expectation`]; dropping it stops the checks.
pub struct ExpectGuard<'a> {
    documents: &'a Documents,
    path: PathBuf,
    id: u64,
}

impl Drop for ExpectGuard<'_> {
    fn drop(&mut self) {
        if let Some(document) = self.documents.lock().get_mut(&self.path) {
            document.expectations.retain(|p| p.id != self.id);
        }
    }
}

/// An edit given as splices, turned into LSP edits against the open
/// document (see [`Documents::splice_edits`]).
#[derive(Debug)]
pub struct SpliceEdits {
    pub uri: Uri,
    pub dirty: bool,
    pub edits: Vec<TextEdit>,
}

impl Document {
    /// Record the current state for a pending verification. Hashing the
    /// whole text costs O(size), so it is done only while an edit of ours
    /// is being verified, not on every keystroke.
    fn remember(&mut self, verifying: bool) {
        if !verifying {
            self.history.clear();
            return;
        }
        let fp = fingerprint(self.rope.to_string().as_bytes());
        if self.history.len() == HISTORY_LEN {
            self.history.pop_front();
        }
        self.history.push_back((self.version, fp));
    }
}

/// While alive, document changes are fingerprinted for the verification of
/// an agent edit (see [`Documents::verifying`]).
pub struct VerifyGuard<'a>(&'a Documents);

impl Drop for VerifyGuard<'_> {
    fn drop(&mut self) {
        self.0.verifying.fetch_sub(1, Ordering::SeqCst);
    }
}

/// At most this long [`Documents::caught_up`] waits for the changes queued
/// behind an answer (they are applied within moments; the rest of the wait
/// for the edit goes on as before).
const CATCH_UP_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Every open document, by normalized file path.
#[derive(Debug)]
pub struct Documents {
    documents: Mutex<HashMap<PathBuf, Document>>,
    changed: watch::Sender<u64>,
    encoding: AtomicU8,
    verifying: AtomicUsize,
    next_expectation: AtomicU64,
    /// The path of each open document's URI, resolved once at `didOpen`:
    /// `didChange` runs per keystroke and must not resolve symlinks (a
    /// syscall per path component) every time.
    paths: Mutex<HashMap<String, PathBuf>>,
    /// The transport's count of document-sync notifications (none: every
    /// change is applied where it is read, as in unit tests).
    order: std::sync::OnceLock<Arc<SyncOrder>>,
    /// Document-sync notifications handled (applied or refused).
    synced: AtomicU64,
}

impl Default for Documents {
    fn default() -> Self {
        Documents {
            documents: Mutex::new(HashMap::new()),
            changed: watch::Sender::new(0),
            encoding: AtomicU8::new(encoding_to_u8(PositionEncoding::Utf16)),
            verifying: AtomicUsize::new(0),
            next_expectation: AtomicU64::new(0),
            paths: Mutex::new(HashMap::new()),
            order: std::sync::OnceLock::new(),
            synced: AtomicU64::new(0),
        }
    }
}

fn encoding_to_u8(encoding: PositionEncoding) -> u8 {
    match encoding {
        PositionEncoding::Utf8 => 8,
        PositionEncoding::Utf16 => 16,
        PositionEncoding::Utf32 => 32,
    }
}

/// The file path a document URI names, normalized the way workspace paths
/// are (`..` folded; symlinks resolved as far as the path exists). `None`
/// for non-file URIs (`untitled:`, `git:`): the agent cannot address them.
/// A file that does not exist yet (a new buffer) gets its folder resolved
/// too: on Windows that is what gives it the `\\?\C:\…` spelling of the
/// workspace's other paths, so an edit for it finds the open document.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    // A file on a share (`file://server/share/…`, as VS Code names it):
    // ls_types would make it `server:\share\…`; `url` gives the UNC path.
    #[cfg(windows)]
    let path = match url::Url::parse(uri.as_str()) {
        Ok(url) if url.host_str().is_some_and(|host| !host.is_empty()) => url.to_file_path().ok()?,
        _ => uri.to_file_path()?.into_owned(),
    };
    #[cfg(not(windows))]
    let path = uri.to_file_path()?.into_owned();
    if !path.is_absolute() {
        return None;
    }
    Some(path.canonicalize().unwrap_or_else(|_| resolve_symlinks(&normalize_lexically(&path))))
}

/// The `file:` URI of a path, as editors spell it (`file:///C:/…` for a
/// `\\?\C:\…` path on Windows; `file://server/share/…` for a file on a
/// share, where ls_types would write `file:////server/…`).
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let plain = crate::platform::plain_path(path);
    #[cfg(windows)]
    if plain.to_string_lossy().starts_with(r"\\") {
        let url = url::Url::from_file_path(&plain).ok()?;
        return serde_json::from_value(serde_json::Value::String(url.into())).ok();
    }
    Uri::from_file_path(plain)
}

impl Documents {
    pub fn set_encoding(&self, encoding: PositionEncoding) {
        self.encoding.store(encoding_to_u8(encoding), Ordering::Relaxed);
    }

    pub fn encoding(&self) -> PositionEncoding {
        match self.encoding.load(Ordering::Relaxed) {
            8 => PositionEncoding::Utf8,
            32 => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        }
    }

    /// The path of an open document's URI (resolved at `didOpen`), else resolved now.
    fn path_of(&self, uri: &Uri) -> Option<PathBuf> {
        let known = self.paths.locked().get(uri.as_str()).cloned();
        known.or_else(|| uri_to_path(uri))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, Document>> {
        self.documents.locked()
    }

    fn notify(&self) {
        self.changed.send_modify(|generation| *generation = generation.wrapping_add(1));
    }

    /// Count the document-sync notifications the transport passes on
    /// (see [`SyncOrder`]).
    pub fn follow(&self, order: Arc<SyncOrder>) {
        let _ = self.order.set(order);
    }

    /// One document-sync notification was handled, whatever its outcome.
    pub fn synced(&self) {
        self.synced.fetch_add(1, Ordering::SeqCst);
        self.notify();
    }

    /// Wait (until `deadline` at most) until every document-sync
    /// notification the transport has passed on so far is applied: call it
    /// after the client answered, to judge the buffer the client had when
    /// it answered, not an older one still queued behind the answer.
    pub async fn caught_up(&self, deadline: tokio::time::Instant) {
        let Some(order) = self.order.get() else { return };
        let target = order.read();
        let mut changes = self.subscribe();
        // Queued changes are applied within moments; a count that does not
        // catch up is one the server never handled (dropped by the
        // framework): taken as caught up, so no later edit waits for it.
        let deadline = deadline.min(tokio::time::Instant::now() + CATCH_UP_LIMIT);
        while self.synced.load(Ordering::SeqCst) < target {
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                tracing::warn!(target, synced = self.synced.load(Ordering::SeqCst), "the document changes read before the answer were not all applied in time");
                self.synced.fetch_max(target, Ordering::SeqCst);
                return;
            }
        }
    }

    /// A receiver that wakes after every document change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// `didOpen`. Opening an already open document replaces it.
    pub fn open(&self, uri: &Uri, text: &str, version: i32) -> Result<(), String> {
        let path = uri_to_path(uri).ok_or_else(|| format!("not a file URI: {}", uri.as_str()))?;
        // A buffer opened from disk has nothing unsaved; one opened with
        // other text (a restored session) does.
        let same_size = std::fs::metadata(&path).is_ok_and(|m| m.len() == text.len() as u64);
        let dirty = !same_size || std::fs::read(&path).map_or(true, |bytes| bytes != text.as_bytes());
        let mut document = Document {
            uri: uri.clone(),
            rope: Rope::from_str(text),
            version,
            dirty,
            history: VecDeque::new(),
            expectations: Vec::new(),
            text: None,
            fingerprint: None,
            edits: EditHistory::default(),
        };
        document.remember(self.is_verifying());
        self.paths.locked().insert(uri.as_str().to_string(), path.clone());
        self.lock().insert(path, document);
        self.notify();
        Ok(())
    }

    /// `didChange`: apply the content changes in sequence (each one's range
    /// refers to the text after the previous one). Returns warnings worth a
    /// log line (positions past the end, a version going backwards).
    pub fn change(&self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> Result<Vec<String>, String> {
        let path = self.path_of(uri).ok_or_else(|| format!("not a file URI: {}", uri.as_str()))?;
        let encoding = self.encoding();
        let mut warnings = Vec::new();
        {
            let mut documents = self.lock();
            let Some(document) = documents.get_mut(&path) else {
                return Err(format!("didChange for a document that is not open: {}", uri.as_str()));
            };
            if version <= document.version {
                warnings.push(format!(
                    "didChange for {} has version {version}, not newer than {}",
                    uri.as_str(),
                    document.version
                ));
            }
            for change in changes {
                match change.range {
                    None => document.rope = Rope::from_str(&change.text),
                    Some(range) => {
                        let start = position_to_char(&document.rope, range.start, encoding);
                        let end = position_to_char(&document.rope, range.end, encoding);
                        if start.line_past_end || end.line_past_end {
                            warnings.push(format!(
                                "didChange range {}:{}-{}:{} lies past the end of {} ({} lines); clamped",
                                range.start.line,
                                range.start.character,
                                range.end.line,
                                range.end.character,
                                uri.as_str(),
                                document.rope.len_lines()
                            ));
                        }
                        let (start, end) = (start.char_idx.min(end.char_idx), start.char_idx.max(end.char_idx));
                        let before = EditHistory::before(&document.rope, start, end);
                        document.rope.remove(start..end);
                        document.rope.insert(start, &change.text);
                        document.edits.record(before, &document.rope, start, change.text.chars().count(), version);
                    }
                }
            }
            document.version = version;
            document.dirty = true;
            document.text = None;
            document.fingerprint = None;
            document.remember(self.is_verifying());
            let Document { rope, expectations, .. } = document;
            for pending in expectations.iter_mut().filter(|p| p.held_at.is_none() && version > p.after) {
                if pending.expectation.holds(rope) {
                    pending.held_at = Some(version);
                }
            }
        }
        self.notify();
        Ok(warnings)
    }

    /// `didSave`: the buffer is on disk now. With `includeText`, the saved
    /// text is the truth.
    pub fn save(&self, uri: &Uri, text: Option<&str>) {
        let Some(path) = self.path_of(uri) else { return };
        {
            let mut documents = self.lock();
            let Some(document) = documents.get_mut(&path) else { return };
            if let Some(text) = text {
                document.rope = Rope::from_str(text);
                document.text = None;
                document.fingerprint = None;
            }
            document.dirty = false;
        }
        self.notify();
    }

    /// `didClose`: from now on the disk is the truth for this file.
    pub fn close(&self, uri: &Uri) {
        let known = self.paths.locked().remove(uri.as_str());
        let Some(path) = known.or_else(|| uri_to_path(uri)) else { return };
        self.lock().remove(&path);
        self.notify();
    }

    pub fn snapshot(&self, path: &Path) -> Option<DocumentSnapshot> {
        let mut documents = self.lock();
        let document = documents.get_mut(path)?;
        let text = document.text.get_or_insert_with(|| Arc::from(document.rope.to_string()));
        Some(DocumentSnapshot { text: Arc::clone(text), version: document.version, dirty: document.dirty })
    }

    /// The fingerprint of the document's text at `version` (`None` when it
    /// is at another version now), computed once per version.
    pub fn fingerprint(&self, path: &Path, version: i32) -> Option<u64> {
        let mut documents = self.lock();
        let document = documents.get_mut(path)?;
        if document.version != version {
            return None;
        }
        if let Some(fp) = document.fingerprint {
            return Some(fp);
        }
        let text = document.text.get_or_insert_with(|| Arc::from(document.rope.to_string()));
        let fp = fingerprint(text.as_bytes());
        document.fingerprint = Some(fp);
        Some(fp)
    }

    /// Keep `text` (with its fingerprint) as the snapshot of `version`,
    /// when the document is at `version` and holds exactly `text`: the text
    /// of an agent edit that landed, so the next read shares it instead of
    /// copying the rope and hashing it again. Comparing costs one pass
    /// over the document, without copying it.
    pub fn known_text(&self, path: &Path, version: i32, text: &Arc<str>, fp: u64) {
        let mut documents = self.lock();
        let Some(document) = documents.get_mut(path) else { return };
        if document.version != version || document.rope.len_bytes() != text.len() {
            return;
        }
        if let Some(cached) = &document.text {
            if document.fingerprint.is_none() && (Arc::ptr_eq(cached, text) || cached == text) {
                document.fingerprint = Some(fp);
            }
            return;
        }
        let mut at = 0;
        for chunk in document.rope.chunks() {
            if text.as_bytes().get(at..at + chunk.len()) != Some(chunk.as_bytes()) {
                return;
            }
            at += chunk.len();
        }
        document.text = Some(Arc::clone(text));
        document.fingerprint = Some(fp);
    }

    /// The document as inline completions need it.
    pub fn current(&self, uri: &Uri) -> Option<Current> {
        let path = self.path_of(uri)?;
        let documents = self.lock();
        let document = documents.get(&path)?;
        Some(Current { rope: document.rope.clone(), version: document.version, edits: document.edits.edits(), path })
    }

    /// The version of an open document (`None`: not open).
    pub fn version_of(&self, path: &Path) -> Option<i32> {
        self.lock().get(path).map(|d| d.version)
    }

    pub fn snapshot_uri(&self, uri: &Uri) -> Option<DocumentSnapshot> {
        self.snapshot(&self.path_of(uri)?)
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.lock().keys().cloned().collect()
    }

    /// The version and dirty flag of an open document, without copying its text.
    pub fn state(&self, path: &Path) -> Option<(i32, bool)> {
        self.lock().get(path).map(|d| (d.version, d.dirty))
    }

    fn is_verifying(&self) -> bool {
        self.verifying.load(Ordering::SeqCst) > 0
    }

    /// Start recording document states (for an edit about to be sent);
    /// recording stops when the guard is dropped.
    pub fn verifying(&self) -> VerifyGuard<'_> {
        self.verifying.fetch_add(1, Ordering::SeqCst);
        VerifyGuard(self)
    }

    /// The first version after `after` whose text had fingerprint `fp`
    /// (recorded while a [`VerifyGuard`] was alive).
    pub fn version_with(&self, path: &Path, after: i32, fp: u64) -> Option<i32> {
        let documents = self.lock();
        let document = documents.get(path)?;
        document.history.iter().find(|&&(version, f)| version > after && f == fp).map(|&(version, _)| version)
    }

    /// The URI of an open document, without copying its text.
    pub fn uri(&self, path: &Path) -> Option<Uri> {
        self.lock().get(path).map(|d| d.uri.clone())
    }

    /// `splices` of `old_text` as LSP edits against the open document, in
    /// O(edit): only when the document is at `version`, is as long as
    /// `old_text`, and holds `old_text`'s bytes under every splice. `None`
    /// otherwise (the caller falls back to the whole-text path, which says
    /// what changed).
    pub fn splice_edits(&self, path: &Path, version: i32, old_text: &str, splices: &[Splice]) -> Option<SpliceEdits> {
        let encoding = self.encoding();
        let documents = self.lock();
        let document = documents.get(path)?;
        if document.version != version || document.rope.len_bytes() != old_text.len() || splices.is_empty() {
            return None;
        }
        let mut edits = Vec::with_capacity(splices.len());
        let mut previous_end = 0;
        for splice in splices {
            let range = splice.range.clone();
            if range.start < previous_end || range.end < range.start {
                return None;
            }
            let expected = old_text.get(range.clone())?;
            if document.rope.get_byte_slice(range.clone())? != expected {
                return None;
            }
            edits.push(TextEdit {
                range: Range {
                    start: byte_to_position(&document.rope, range.start, encoding),
                    end: byte_to_position(&document.rope, range.end, encoding),
                },
                new_text: splice.text.clone(),
            });
            previous_end = range.end;
        }
        Some(SpliceEdits { uri: document.uri.clone(), dirty: document.dirty, edits })
    }

    /// Check every change to the document at `path` after version `after`
    /// against `expectation` until the guard is dropped.
    pub fn expect(&self, path: &Path, after: i32, expectation: Expectation) -> ExpectGuard<'_> {
        let id = self.next_expectation.fetch_add(1, Ordering::Relaxed);
        if let Some(document) = self.lock().get_mut(path) {
            document.expectations.push(Pending { id, after, expectation, held_at: None });
        }
        ExpectGuard { documents: self, path: path.to_path_buf(), id }
    }

    /// The first version after the guard's `after` that held its expectation.
    pub fn version_holding(&self, guard: &ExpectGuard<'_>) -> Option<i32> {
        let documents = self.lock();
        documents.get(&guard.path)?.expectations.iter().find(|p| p.id == guard.id)?.held_at
    }

    /// The text a range covers in an open document (for a selection).
    pub fn text_in_range(&self, uri: &Uri, range: Range) -> Option<String> {
        let path = uri_to_path(uri)?;
        let encoding = self.encoding();
        let documents = self.lock();
        let rope = &documents.get(&path)?.rope;
        let start = position_to_char(rope, range.start, encoding).char_idx;
        let end = position_to_char(rope, range.end, encoding).char_idx;
        Some(rope.slice(start.min(end)..end.max(start)).to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Position;

    fn change(range: Option<((u32, u32), (u32, u32))>, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: range.map(|((l1, c1), (l2, c2))| Range {
                start: Position { line: l1, character: c1 },
                end: Position { line: l2, character: c2 },
            }),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_changes_apply_in_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("a.txt");
        std::fs::write(&path, "héllo\r\nwörld\n").unwrap();
        let uri = path_to_uri(&path).unwrap();
        let documents = Documents::default();
        documents.open(&uri, "héllo\r\nwörld\n", 1).unwrap();
        assert!(!documents.snapshot(&path).unwrap().dirty);
        // The second change's range refers to the text after the first.
        let warnings = documents
            .change(&uri, 2, &[change(Some(((0, 0), (0, 1))), "J"), change(Some(((0, 1), (0, 2))), "e"), change(Some(((1, 5), (1, 99))), "!")])
            .unwrap();
        assert!(warnings.is_empty());
        let snapshot = documents.snapshot(&path).unwrap();
        assert_eq!(&*snapshot.text, "Jello\r\nwörld!\n");
        assert_eq!((snapshot.version, snapshot.dirty), (2, true));
        // Out of range: clamped, with a warning; unopened: an error.
        let warnings = documents.change(&uri, 3, &[change(Some(((9, 0), (9, 0))), "tail")]).unwrap();
        assert_eq!(warnings.len(), 1);
        assert_eq!(&*documents.snapshot(&path).unwrap().text, "Jello\r\nwörld!\ntail");
        let other = path_to_uri(&dir.path().canonicalize().unwrap().join("b.txt")).unwrap();
        assert!(documents.change(&other, 1, &[change(None, "x")]).is_err());
        documents.save(&uri, None);
        assert!(!documents.snapshot(&path).unwrap().dirty);
        documents.close(&uri);
        assert!(documents.snapshot(&path).is_none());
    }

    #[test]
    fn a_new_files_uri_names_the_path_the_workspace_gives_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        // A resolved path (`\\?\C:\…` on Windows) makes a URI editors send
        // (not `file://///%3F/…`), which names that path again.
        let uri = path_to_uri(&real.join("new.txt")).unwrap();
        assert!(!uri.as_str().contains("%3F") && !uri.as_str().starts_with("file:////"), "{}", uri.as_str());
        assert_eq!(uri_to_path(&uri), Some(real.join("new.txt")));
    }

    /// A file on a share: VS Code's `file://server/share/…` URI is the
    /// UNC path `\\server\share\…`, and that path's URI is the same URI
    /// (also from canonicalize's `\\?\UNC\…` spelling).
    #[cfg(windows)]
    #[test]
    fn a_unc_path_and_its_file_uri_map_to_each_other() {
        let uri: Uri = serde_json::from_value(serde_json::json!("file://server/share/dir/a.txt")).unwrap();
        let path = uri_to_path(&uri).unwrap();
        assert_eq!(crate::platform::plain_path(&path), Path::new(r"\\server\share\dir\a.txt"));
        assert_eq!(path_to_uri(Path::new(r"\\server\share\dir\a.txt")).unwrap().as_str(), "file://server/share/dir/a.txt");
        assert_eq!(path_to_uri(Path::new(r"\\?\UNC\server\share\dir\a.txt")).unwrap().as_str(), "file://server/share/dir/a.txt");
    }

    // Unix only: Wine's canonicalize does not follow a folder link.
    #[cfg(unix)]
    #[test]
    fn a_new_files_uri_names_it_in_its_folders_resolved_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        crate::platform::symlink(&real, dir.path().join("link")).unwrap();
        let uri = path_to_uri(&dir.path().join("link").join("new.txt")).unwrap();
        // As an existing file's would be: the same path the workspace gives it.
        assert_eq!(uri_to_path(&uri), Some(real.join("new.txt")));
    }

    #[test]
    fn a_known_text_is_kept_only_when_the_buffer_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("a.txt");
        let uri = path_to_uri(&path).unwrap();
        let documents = Documents::default();
        // Big enough for several rope chunks; the other text differs in its last byte.
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let other = format!("{}!", &text[..text.len() - 1]);
        documents.open(&uri, &text, 1).unwrap();
        documents.known_text(&path, 1, &Arc::from(other.as_str()), 7);
        documents.known_text(&path, 2, &Arc::from(text.as_str()), 7);
        assert_eq!(&*documents.snapshot(&path).unwrap().text, text);
        assert_eq!(documents.fingerprint(&path, 1), Some(fingerprint(text.as_bytes())));
        assert_eq!(documents.fingerprint(&path, 2), None, "not at version 2");

        documents.open(&uri, &text, 3).unwrap();
        let known: Arc<str> = Arc::from(text.as_str());
        documents.known_text(&path, 3, &known, 7);
        assert!(Arc::ptr_eq(&documents.snapshot(&path).unwrap().text, &known), "the known text is shared, not copied");
        assert_eq!(documents.fingerprint(&path, 3), Some(7), "its fingerprint is not computed again");
        documents.change(&uri, 4, &[change(Some(((0, 0), (0, 0))), "x")]).unwrap();
        assert_eq!(documents.fingerprint(&path, 4), Some(fingerprint(format!("x{text}").as_bytes())));
    }
}
