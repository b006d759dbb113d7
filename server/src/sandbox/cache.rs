//! What the sandbox finds on disk for one command and may reuse for the
//! next: a folder's listing, what git says of its config files. Each is
//! kept with the [`Stamp`]s of what it was read from, and reused only
//! while every one of them is unchanged — a look at a few inodes instead
//! of a folder walk or a `git` process per command.
//!
//! A stamp is the entry's device, inode, size and change and modification
//! times. A file system keeps those times to a clock tick (a few
//! milliseconds on Linux), so a change made in the same tick as the read
//! could leave them as they were: what was read from an entry changed
//! less than [`SETTLE`] before the read began is used once and read
//! again next time (git's "racily clean" index entries, the same idea).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use crate::sync::MutexExt;

/// How long after its last change an entry's stamp is trusted to show
/// the next one: well above a file system's clock tick.
pub const SETTLE: Duration = Duration::from_millis(100);

/// Folder listings kept at most; past it they are all dropped.
const MAX_LISTINGS: usize = 20_000;

/// What a file or folder looked like (links followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stamp {
    Missing,
    Seen { dev: u64, ino: u64, size: u64, mtime: (i64, i64), ctime: (i64, i64) },
    /// This system's metadata cannot tell (no inode numbers): never reused.
    Unknown,
}

impl Stamp {
    pub fn of(path: &Path) -> Stamp {
        match std::fs::metadata(path) {
            Ok(meta) => Stamp::from_metadata(&meta),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Stamp::Missing,
            // A folder on the way that is a file, no permission: what git
            // or a walk could not read either, but nothing to count on.
            Err(_) => Stamp::Unknown,
        }
    }

    #[cfg(unix)]
    fn from_metadata(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp::Seen {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    fn from_metadata(_meta: &std::fs::Metadata) -> Stamp {
        Stamp::Unknown
    }

    /// What a folder is, not what it holds: its device and inode (its
    /// times change with every entry added or removed in it, which a
    /// `.git` folder sees at each `git` command). A file's full stamp.
    pub fn of_entry(path: &Path) -> Stamp {
        match Stamp::of(path) {
            Stamp::Seen { dev, ino, .. } if std::fs::metadata(path).is_ok_and(|meta| meta.is_dir()) => {
                Stamp::Seen { dev, ino, size: 0, mtime: (0, 0), ctime: (0, 0) }
            }
            other => other,
        }
    }

    /// Last changed before `before` (a missing entry has no change to
    /// miss).
    pub fn settled(&self, before: SystemTime) -> bool {
        let Ok(since_epoch) = before.duration_since(SystemTime::UNIX_EPOCH) else { return false };
        let limit = (since_epoch.as_secs() as i64, since_epoch.subsec_nanos() as i64);
        match self {
            Stamp::Missing => true,
            Stamp::Seen { mtime, ctime, .. } => *mtime < limit && *ctime < limit,
            Stamp::Unknown => false,
        }
    }
}

/// Stamps of everything something was read from, taken when the read
/// began.
#[derive(Debug, Clone)]
pub struct Stamps {
    /// Each path, its stamp, and whether it was added as an entry
    /// ([`Stamps::add_entry`]).
    entries: Vec<(PathBuf, Stamp, bool)>,
    /// Every entry settled before the read began: the stamps will show a
    /// change made after it.
    settled: bool,
}

impl Stamps {
    /// Start recording: `began` is when the read began (taken before any
    /// stamp or read).
    pub fn new() -> (Stamps, SystemTime) {
        (Stamps { entries: Vec::new(), settled: true }, SystemTime::now())
    }

    /// Record `path` as it is now, read at or after `began`.
    pub fn add(&mut self, path: &Path, began: SystemTime) {
        if self.entries.iter().any(|(known, _, _)| known == path) {
            return;
        }
        let stamp = Stamp::of(path);
        self.settled &= stamp.settled(began.checked_sub(SETTLE).unwrap_or(SystemTime::UNIX_EPOCH));
        self.entries.push((path.to_path_buf(), stamp, false));
    }

    /// Record `path` as [`Stamp::of_entry`] sees it: a folder by what it
    /// is (it may come and go, or be swapped), not by what it holds.
    pub fn add_entry(&mut self, path: &Path, began: SystemTime) {
        if self.entries.iter().any(|(known, _, _)| known == path) {
            return;
        }
        let stamp = Stamp::of_entry(path);
        self.settled &= stamp.settled(began.checked_sub(SETTLE).unwrap_or(SystemTime::UNIX_EPOCH));
        self.entries.push((path.to_path_buf(), stamp, true));
    }

    /// What was read from them may be used again: all settled, none
    /// changed since.
    pub fn still_hold(&self) -> bool {
        self.settled
            && self.entries.iter().all(|(path, stamp, entry)| if *entry { Stamp::of_entry(path) == *stamp } else { Stamp::of(path) == *stamp })
    }
}

/// One folder's entries the walks look for: its `.git` entry, if any, and
/// its subfolders (not links to folders), in the order the folder lists
/// them.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    pub dot_git: bool,
    pub folders: Vec<OsString>,
}

struct Kept {
    stamp: Stamp,
    settled: bool,
    listing: Arc<Listing>,
}

/// `dir`'s [`Listing`], read again only when the folder changed since the
/// last read (`None`: it cannot be read). A folder's own times change
/// when an entry is added, removed or renamed in it, which is all a
/// listing holds.
pub fn listing(dir: &Path) -> Option<Arc<Listing>> {
    static KEPT: OnceLock<Mutex<HashMap<PathBuf, Kept>>> = OnceLock::new();
    let kept = KEPT.get_or_init(Mutex::default);
    let began = SystemTime::now();
    let stamp = Stamp::of(dir);
    if let Some(known) = kept.locked().get(dir) {
        if known.settled && known.stamp == stamp && stamp != Stamp::Missing {
            return Some(Arc::clone(&known.listing));
        }
    }
    let mut listing = Listing::default();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        if name == ".git" {
            listing.dot_git = true;
        } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            listing.folders.push(name);
        }
    }
    let listing = Arc::new(listing);
    let settled = stamp.settled(began.checked_sub(SETTLE).unwrap_or(SystemTime::UNIX_EPOCH));
    let mut kept = kept.locked();
    if kept.len() >= MAX_LISTINGS {
        kept.clear();
    }
    kept.insert(dir.to_path_buf(), Kept { stamp, settled, listing: Arc::clone(&listing) });
    Some(listing)
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_reused_until_the_folder_changes_and_a_fresh_one_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        // Just changed: its ctime is now, so it is read every time.
        let first = listing(&root).unwrap();
        let second = listing(&root).unwrap();
        assert!(!Arc::ptr_eq(&first, &second), "a folder changed within SETTLE is read again");
        // A change time cannot be set back: wait it out.
        std::thread::sleep(SETTLE * 2);
        let third = listing(&root).unwrap();
        let fourth = listing(&root).unwrap();
        assert!(Arc::ptr_eq(&third, &fourth), "a settled folder's listing is reused");
        assert_eq!(fourth.folders, vec![OsString::from("a")]);
        assert!(!fourth.dot_git);
        // An entry added is seen at once.
        std::fs::create_dir(root.join(".git")).unwrap();
        let fifth = listing(&root).unwrap();
        assert!(fifth.dot_git, "{fifth:?}");
    }

    #[test]
    fn stamps_hold_until_a_file_changes_appears_or_goes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        let missing = dir.path().join("included");
        std::fs::write(&file, "[core]\n").unwrap();
        std::thread::sleep(SETTLE * 2);
        let (mut stamps, began) = Stamps::new();
        stamps.add(&file, began);
        stamps.add(&missing, began);
        assert!(stamps.still_hold());
        std::fs::write(&missing, "x").unwrap();
        assert!(!stamps.still_hold(), "a file that appeared");
        std::fs::remove_file(&missing).unwrap();
        assert!(stamps.still_hold());
        // Same size, rewritten in place: the change time moves.
        std::fs::write(&file, "[user]\n").unwrap();
        assert!(!stamps.still_hold(), "a file rewritten");
        // A folder added as an entry: what it holds may change.
        let folder = dir.path().join("dot-git");
        std::fs::create_dir(&folder).unwrap();
        std::thread::sleep(SETTLE * 2);
        let (mut entries, began) = Stamps::new();
        entries.add_entry(&folder, began);
        std::fs::write(folder.join("index.lock"), "").unwrap();
        assert!(entries.still_hold(), "a file added in a folder held as an entry");
        std::fs::remove_dir_all(&folder).unwrap();
        std::fs::write(&folder, "gitdir: elsewhere\n").unwrap();
        assert!(!entries.still_hold(), "the folder became a file");
        // Read while fresh: not trusted, whatever it shows later.
        std::fs::write(&file, "[core]\n").unwrap();
        let (mut fresh, began) = Stamps::new();
        fresh.add(&file, began);
        assert!(!fresh.still_hold());
    }
}
