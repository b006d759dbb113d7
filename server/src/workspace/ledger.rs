//! The read ledger: for every file the agent has read in this thread, what
//! it saw — the editor buffer version (for open documents) and a content
//! fingerprint — plus the text itself, so a refusal can say what changed.
//!
//! The fingerprint, not the mtime, is the truth for files on disk: mtimes are
//! coarse on some filesystems and tools like `git checkout` preserve them.
//! The file watcher only marks entries `changed_on_disk` early.
//!
//! A thread's ledger outlives its process as [`SavedRead`]s (path and
//! fingerprint, never the text): restored, an entry has no version (the
//! editor's versions restart with each session) and no text, so only the
//! fingerprint says whether the file is still what the agent read.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use serde::{Deserialize, Serialize};

/// What the agent saw when it read a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadStamp {
    /// The editor document version, when the text came from an open buffer.
    pub version: Option<i32>,
    /// A hash of the text's bytes.
    pub fingerprint: u64,
}

/// A content fingerprint: a 64-bit hash of the bytes and their length.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.len().hash(&mut hasher);
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// What [`fingerprint`] gives for a fixed text: saved beside a thread's
/// reads, so a build whose hash differs (the standard library's may change
/// between Rust releases) drops them instead of comparing unlike numbers.
pub fn fingerprint_scheme() -> u64 {
    fingerprint(b"tandem read ledger")
}

#[derive(Debug, Clone)]
pub struct LedgerEntry {
    pub stamp: ReadStamp,
    /// The text the agent saw; `None` for an entry restored from a saved
    /// thread (only its fingerprint was kept).
    pub seen_text: Option<Arc<str>>,
    /// Set by the file watcher when the file on disk stopped matching `stamp`.
    pub changed_on_disk: bool,
    /// When it was recorded, in the ledger's own order: a later read or
    /// write of any file has a larger number.
    pub seq: u64,
}

/// One file of a saved thread's ledger: where, and the fingerprint of what
/// the agent saw there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRead {
    pub path: PathBuf,
    pub fingerprint: u64,
}

/// Path → what the agent last saw there. Concurrent: tools run in parallel
/// and the watcher thread writes to it.
#[derive(Debug, Default)]
pub struct ReadLedger {
    entries: DashMap<PathBuf, LedgerEntry>,
    /// The next entry's `seq`.
    next_seq: AtomicU64,
}

impl ReadLedger {
    pub fn record(&self, path: &Path, stamp: ReadStamp, seen_text: Arc<str>) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        self.entries.insert(path.to_path_buf(), LedgerEntry { stamp, seen_text: Some(seen_text), changed_on_disk: false, seq });
    }

    /// A restored entry (no text) was found to hold what the file holds
    /// now: keep `stamp` and `text` (the same content, now with its version
    /// and text) in its place in the order.
    pub fn confirm(&self, path: &Path, stamp: ReadStamp, text: Arc<str>) {
        if let Some(mut entry) = self.entries.get_mut(path) {
            if entry.seen_text.is_none() && entry.stamp.fingerprint == stamp.fingerprint {
                entry.stamp = stamp;
                entry.seen_text = Some(text);
            }
        }
    }

    pub fn get(&self, path: &Path) -> Option<LedgerEntry> {
        self.entries.get(path).map(|e| e.clone())
    }

    pub fn forget(&self, path: &Path) {
        self.entries.remove(path);
    }

    pub fn clear(&self) {
        self.entries.clear();
    }

    /// What a saved thread keeps of the ledger, oldest first.
    pub fn saved(&self) -> Vec<SavedRead> {
        let mut entries: Vec<(u64, SavedRead)> =
            self.entries.iter().map(|e| (e.seq, SavedRead { path: e.key().clone(), fingerprint: e.stamp.fingerprint })).collect();
        entries.sort_by_key(|(seq, _)| *seq);
        entries.into_iter().map(|(_, read)| read).collect()
    }

    /// The ledger of a saved thread, in its order: each entry has its
    /// fingerprint only (no version, no text).
    pub fn restored(reads: Vec<SavedRead>) -> ReadLedger {
        let ledger = ReadLedger::default();
        for read in reads {
            let seq = ledger.next_seq.fetch_add(1, Ordering::Relaxed);
            let stamp = ReadStamp { version: None, fingerprint: read.fingerprint };
            ledger.entries.insert(read.path, LedgerEntry { stamp, seen_text: None, changed_on_disk: false, seq });
        }
        ledger
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.entries.iter().map(|e| e.key().clone()).collect()
    }

    /// The `n` files read (or written) most recently, the latest first.
    pub fn most_recent(&self, n: usize) -> Vec<PathBuf> {
        let mut entries: Vec<(u64, PathBuf)> = self.entries.iter().map(|e| (e.seq, e.key().clone())).collect();
        entries.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
        entries.into_iter().take(n).map(|(_, path)| path).collect()
    }

    /// Called by the watcher with the file's current on-disk fingerprint
    /// (`None` when it was deleted). Marks a disk-stamped entry changed on disk when the
    /// content differs from what the agent saw; the agent's own writes record
    /// their fingerprint first, so they are not reported as foreign changes.
    pub fn observe_disk(&self, path: &Path, current: Option<u64>) -> bool {
        let Some(mut entry) = self.entries.get_mut(path) else { return false };
        if entry.stamp.version.is_some() {
            return false;
        }
        if current != Some(entry.stamp.fingerprint) {
            entry.changed_on_disk = true;
            return true;
        }
        false
    }
}

/// Compare a ledger entry with the file's current state. `None` means the
/// agent's view is current; `Some(what)` describes the change for the model.
pub fn change_since_read(entry: &LedgerEntry, current: &ReadStamp, current_text: &str) -> Option<String> {
    let changed = match (entry.stamp.version, current.version) {
        // Invariant 2: for an open document the version is the contract, even
        // when the text happens to be equal again. The text is compared too:
        // a document closed and opened again starts its versions again.
        (Some(seen), Some(now)) => seen != now || entry.stamp.fingerprint != current.fingerprint,
        _ => entry.stamp.fingerprint != current.fingerprint,
    };
    if changed {
        let mut what = match &entry.seen_text {
            Some(seen) => describe_change(seen, current_text),
            None => "its content is not what was read in an earlier run of this thread".to_string(),
        };
        if entry.changed_on_disk {
            what.push_str("; the file watcher saw it change on disk");
        }
        return Some(what);
    }
    None
}

/// A short description of which lines differ between two texts, for the
/// model: "lines 3-4 changed, 1 line added after line 9".
pub fn describe_change(old: &str, new: &str) -> String {
    use crate::diff::DiffOp;
    if old == new {
        return "the content is the same but the document version changed".to_string();
    }
    let diff = crate::diff::lines(old, new);
    let mut parts = Vec::new();
    for op in &diff.ops {
        let part = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, .. } => {
                format!("{} removed", line_span(old_index, old_len))
            }
            DiffOp::Insert { old_index, new_len, .. } => format!(
                "{} added after line {}",
                plural(new_len, "line"),
                old_index
            ),
            DiffOp::Replace { old_index, old_len, .. } => {
                format!("{} changed", line_span(old_index, old_len))
            }
        };
        parts.push(part);
    }
    let more = parts.len().saturating_sub(5);
    parts.truncate(5);
    let mut out = parts.join(", ");
    if more > 0 {
        out.push_str(&format!(" and {more} more changes"));
    }
    out
}

fn line_span(start: usize, len: usize) -> String {
    if len <= 1 {
        format!("line {}", start + 1)
    } else {
        format!("lines {}-{}", start + 1, start + len)
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_changed_lines() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nd\ne\n";
        expect_test::expect!["line 2 changed, 1 line added after line 4"].assert_eq(&describe_change(old, new));
    }

    #[test]
    fn most_recent_follows_the_order_of_reads_and_writes_not_of_names() {
        let ledger = ReadLedger::default();
        let stamp = ReadStamp { version: None, fingerprint: 0 };
        for name in ["c", "a", "d", "b"] {
            ledger.record(Path::new(name), stamp, Arc::from(""));
        }
        // Reading "c" again makes it the latest.
        ledger.record(Path::new("c"), stamp, Arc::from(""));
        let recent: Vec<String> = ledger.most_recent(3).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(recent, ["c", "b", "d"]);
    }

    #[test]
    fn version_mismatch_is_a_change_even_with_equal_text() {
        let entry = LedgerEntry {
            stamp: ReadStamp { version: Some(3), fingerprint: fingerprint(b"x") },
            seen_text: Some(Arc::from("x")),
            changed_on_disk: false,
            seq: 0,
        };
        let now = ReadStamp { version: Some(4), fingerprint: fingerprint(b"x") };
        assert!(change_since_read(&entry, &now, "x").is_some());
        let same = ReadStamp { version: Some(3), fingerprint: fingerprint(b"x") };
        assert!(change_since_read(&entry, &same, "x").is_none());
    }

    #[test]
    fn a_reopened_document_at_an_old_version_number_with_other_text_is_a_change() {
        let entry = LedgerEntry {
            stamp: ReadStamp { version: Some(3), fingerprint: fingerprint(b"x") },
            seen_text: Some(Arc::from("x")),
            changed_on_disk: false,
            seq: 0,
        };
        let reopened = ReadStamp { version: Some(3), fingerprint: fingerprint(b"y") };
        assert!(change_since_read(&entry, &reopened, "y").is_some());
    }

    #[test]
    fn a_saved_ledger_keeps_paths_fingerprints_and_order_and_is_judged_by_fingerprint() {
        let ledger = ReadLedger::default();
        ledger.record(Path::new("/w/b"), ReadStamp { version: Some(7), fingerprint: fingerprint(b"b") }, Arc::from("b"));
        ledger.record(Path::new("/w/a"), ReadStamp { version: None, fingerprint: fingerprint(b"a") }, Arc::from("a"));
        let saved = ledger.saved();
        assert_eq!(saved, [SavedRead { path: "/w/b".into(), fingerprint: fingerprint(b"b") }, SavedRead { path: "/w/a".into(), fingerprint: fingerprint(b"a") }]);

        let restored = ReadLedger::restored(saved);
        assert_eq!(restored.most_recent(2), [PathBuf::from("/w/a"), PathBuf::from("/w/b")]);
        let b = restored.get(Path::new("/w/b")).unwrap();
        assert_eq!((b.stamp.version, b.seen_text.is_none()), (None, true), "versions restart with the editor; no text is kept");
        // Open again in a new editor session, at whatever version: the text decides.
        assert!(change_since_read(&b, &ReadStamp { version: Some(1), fingerprint: fingerprint(b"b") }, "b").is_none());
        let what = change_since_read(&b, &ReadStamp { version: Some(1), fingerprint: fingerprint(b"B") }, "B").unwrap();
        expect_test::expect!["its content is not what was read in an earlier run of this thread"].assert_eq(&what);

        // Confirmed by a check, the entry has the text and version of now.
        restored.confirm(Path::new("/w/b"), ReadStamp { version: Some(1), fingerprint: fingerprint(b"b") }, Arc::from("b"));
        let b = restored.get(Path::new("/w/b")).unwrap();
        assert_eq!((b.stamp.version, b.seen_text.as_deref()), (Some(1), Some("b")));
    }
}
