//! The workspace as the checkpoints last looked at it: every file that is
//! not ignored (`.gitignore`, `.ignore`; hidden files included, `.git`
//! left out), with its stat data and the blob of its content.
//!
//! A shell command may change any file, so before it runs each file must
//! be kept, and after it ends what moved is the command's change. Hashing
//! a 50,000-file tree around every command would cost seconds, and even a
//! walk that only reads stat data costs a fifth of a second; instead the
//! index remembers each file's size, modification time, change time and
//! inode with its blob (as git's index does), and the file watcher
//! ([`super::watch`]) names the paths that may have moved since the last
//! look. A look reads only those: a file's stat data (hashed again only
//! when it moved), the folder it is in (to apply the ignore rules as the
//! walk would), and a new or renamed folder whole. The whole tree is
//! walked at the first look, when events were lost (the watcher's queue
//! overflowed), when a root or its ignore rules changed, and at every
//! look when there is no watcher (not Linux, or no inotify instance or
//! watch left): a look never misses a change for want of an event.
//!
//! A command's look is [`TreeIndex::begin`] before it and
//! [`TreeIndex::end`] after it: while it is open, each entry the index
//! changes keeps its value from before, so the end compares only what
//! moved. Looks of commands run at once (sub-agents) each keep their own.
//!
//! The index is saved beside the checkpoints (`tree-index.jsonl`, one line
//! per file; a look appends the lines of what moved and the file is
//! rewritten when it holds twice as many lines as files), so a restart
//! hashes again only what moved while Tandem was not running.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Write as _;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::blobs::{BlobId, BlobStore};
use super::watch::{Pending, TreeWatch};
use crate::sync::{IntoValue, MutexExt};

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

/// One file of the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeEntry {
    pub stat: Stat,
    /// Its content's blob; `None` when it could not be kept (`not_kept` says why).
    pub blob: Option<BlobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept: Option<String>,
}

/// A file that moved while a look was open: its entry before and after
/// (`None`: it did not exist, or does not any more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    pub path: PathBuf,
    pub before: Option<TreeEntry>,
    pub after: Option<TreeEntry>,
}

/// A look begun before a command, to end after it.
#[derive(Debug, PartialEq, Eq)]
pub struct LookId(u64);

/// What one look read, for the log, the tests and the benchmark.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LookStats {
    /// Why the whole tree was walked; `None` when only what the watcher
    /// named was looked at.
    pub full: Option<String>,
    /// Folders listed or walked.
    pub folders: usize,
    /// Files whose stat data was read.
    pub files: usize,
    /// Files read and hashed (new, or their stat data moved).
    pub hashed: usize,
}

/// The looks taken so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LookCounts {
    pub looks: usize,
    /// Of those, the ones that walked the whole tree, and why the last did.
    pub full: usize,
    pub last_full: Option<String>,
    /// Folders listed or walked, and files whose stat data was read, by
    /// all the looks.
    pub folders: usize,
    pub files: usize,
    /// Folders the watcher watches.
    pub watched: usize,
    /// Why there is no watcher (every look walks the tree).
    pub no_watcher: Option<String>,
}

/// The stat data and blobs of the last look, kept in `path`.
pub struct TreeIndex {
    path: PathBuf,
    roots: Vec<PathBuf>,
    state: Mutex<State>,
}

enum Watch {
    NotStarted,
    Running(TreeWatch),
    Unavailable(String),
}

struct State {
    /// `entries` holds what `tree-index.jsonl` held (read at the first need).
    loaded: bool,
    entries: BTreeMap<PathBuf, TreeEntry>,
    /// The folders the last look listed (not ignored), each watched.
    folders: BTreeSet<PathBuf>,
    watch: Watch,
    /// Why the next look walks the whole tree; `None` when the watcher has
    /// named every path that moved since the last look.
    stale: Option<String>,
    /// Each open look's entries as they were when it began, for the
    /// entries changed since (`None`: no such file).
    looks: BTreeMap<u64, HashMap<PathBuf, Option<TreeEntry>>>,
    next_look: u64,
    /// Entries changed since the index was last saved (`None`: removed).
    journal: Vec<(PathBuf, Option<TreeEntry>)>,
    /// Lines in `tree-index.jsonl` (this process's count).
    lines_on_disk: usize,
    counts: LookCounts,
}

/// What a look reads.
enum Plan {
    /// The whole tree, and why.
    Full(String),
    /// For each listed folder, the entries of it to look at.
    Paths(BTreeMap<PathBuf, BTreeSet<PathBuf>>),
}

impl TreeIndex {
    pub fn new(path: PathBuf, roots: Vec<PathBuf>) -> Self {
        let state = State {
            loaded: false,
            entries: BTreeMap::new(),
            folders: BTreeSet::new(),
            watch: Watch::NotStarted,
            stale: Some("the first look since Tandem started".into()),
            looks: BTreeMap::new(),
            next_look: 0,
            journal: Vec::new(),
            lines_on_disk: 0,
            counts: LookCounts::default(),
        };
        TreeIndex { path, roots, state: Mutex::new(state) }
    }

    /// The file watcher, when there is one.
    #[cfg(test)]
    pub(super) fn watcher(&self) -> Option<TreeWatch> {
        self.state.locked().watch()
    }

    /// Each file the index holds, with its stat data.
    #[cfg(test)]
    pub(super) fn files(&self) -> BTreeMap<PathBuf, Stat> {
        self.state.locked().entries.iter().map(|(path, entry)| (path.clone(), entry.stat)).collect()
    }

    /// Bring the index up to date and open a look (before a command).
    pub fn begin(&self, blobs: &BlobStore) -> (LookId, LookStats) {
        let mut state = self.state.locked();
        let stats = self.refresh(&mut state, blobs);
        let id = state.next_look;
        state.next_look += 1;
        state.looks.insert(id, HashMap::new());
        (LookId(id), stats)
    }

    /// Bring the index up to date and close `look` (after its command):
    /// every file that moved since it began, in path order.
    pub fn end(&self, look: LookId, blobs: &BlobStore) -> (Vec<TreeChange>, LookStats) {
        let mut state = self.state.locked();
        let stats = self.refresh(&mut state, blobs);
        let before = state.looks.remove(&look.0).unwrap_or_default();
        let mut changes: Vec<TreeChange> = before
            .into_iter()
            .filter_map(|(path, before)| {
                let after = state.entries.get(&path).cloned();
                let moved = before.as_ref().map(|e| e.stat) != after.as_ref().map(|e| e.stat);
                moved.then_some(TreeChange { path, before, after })
            })
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        (changes, stats)
    }

    /// Close `look` without comparing (its command's recorder is gone).
    pub fn abandon(&self, look: LookId) {
        self.state.locked().looks.remove(&look.0);
    }

    /// Bring the index up to date (a look no command waits on).
    pub fn look(&self, blobs: &BlobStore) -> LookStats {
        let mut state = self.state.locked();
        self.refresh(&mut state, blobs)
    }

    /// The looks taken so far, and the watcher's state.
    pub fn counts(&self) -> LookCounts {
        let state = self.state.locked();
        let mut counts = state.counts.clone();
        match &state.watch {
            Watch::Running(watch) => counts.watched = watch.watched(),
            Watch::Unavailable(why) => counts.no_watcher = Some(why.clone()),
            Watch::NotStarted => {}
        }
        counts
    }

    /// The blobs the index and its open looks hold (kept by the garbage
    /// collector: the next look and the open commands rely on them).
    pub fn blobs(&self) -> Vec<BlobId> {
        let mut state = self.state.locked();
        state.load(&self.path);
        let mut blobs: Vec<BlobId> = state.entries.values().filter_map(|e| e.blob.clone()).collect();
        for before in state.looks.values() {
            blobs.extend(before.values().flatten().filter_map(|e| e.blob.clone()));
        }
        blobs
    }

    /// Drop the index (when the store is full, its blobs go first). Open
    /// looks keep what they need; the next look hashes every file again.
    pub fn clear(&self) {
        let mut state = self.state.locked();
        let State { entries, looks, .. } = &mut *state;
        for before in looks.values_mut() {
            for (path, entry) in entries.iter() {
                before.entry(path.clone()).or_insert_with(|| Some(entry.clone()));
            }
        }
        state.entries.clear();
        state.loaded = true;
        state.journal.clear();
        state.lines_on_disk = 0;
        state.stale = Some("the checkpoint store was over its limit and dropped the index".into());
        let _ = std::fs::remove_file(&self.path);
    }

    fn refresh(&self, state: &mut State, blobs: &BlobStore) -> LookStats {
        state.load(&self.path);
        state.start_watching();
        let plan = match &state.watch {
            Watch::Running(watch) => {
                // Taken in any case: a full look covers what was named.
                let pending = watch.take();
                match (state.stale.take(), pending) {
                    (Some(why), _) | (None, Pending::Lost(why)) => Plan::Full(why),
                    (None, Pending::Paths(paths)) => self.plan(state, paths),
                }
            }
            Watch::Unavailable(why) => Plan::Full(format!("no file watcher ({why})")),
            Watch::NotStarted => Plan::Full("no file watcher".into()),
        };
        let mut stats = LookStats::default();
        match plan {
            Plan::Full(why) => {
                tracing::debug!(reason = %why, "checkpoint: a full look at the workspace (every folder walked)");
                state.walk(&self.roots, true, blobs, &mut stats);
                state.counts.full += 1;
                state.counts.last_full = Some(why.clone());
                stats.full = Some(why);
            }
            Plan::Paths(wanted) => state.look_at(wanted, blobs, &mut stats),
        }
        state.counts.looks += 1;
        state.counts.folders += stats.folders;
        state.counts.files += stats.files;
        state.persist(&self.path);
        stats
    }

    /// What the watcher named, as entries of listed folders to look at.
    fn plan(&self, state: &State, paths: HashSet<PathBuf>) -> Plan {
        let mut wanted: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for named in paths {
            let Some(root) = self.roots.iter().find(|root| named.starts_with(root)) else { continue };
            let mut path = named.as_path();
            // A folder whose ignore rules changed is walked again, as a
            // whole walk would have applied them.
            if path != root && path.file_name().is_some_and(|name| name == ".gitignore" || name == ".ignore") {
                path = path.parent().unwrap_or(path);
            }
            if self.roots.iter().any(|root| root == path) {
                return Plan::Full(format!("{} changed (a workspace root, or its ignore rules)", path.display()));
            }
            // The nearest folder above it that the last look listed, and
            // its entry on the way (a folder new since, or `path` itself).
            let mut child = path;
            while let Some(parent) = child.parent() {
                if state.folders.contains(parent) {
                    wanted.entry(parent.to_path_buf()).or_default().insert(child.to_path_buf());
                    break;
                }
                if parent == root.as_path() {
                    break;
                }
                child = parent;
            }
        }
        Plan::Paths(wanted)
    }
}

impl State {
    fn load(&mut self, path: &Path) {
        if !self.loaded {
            (self.entries, self.lines_on_disk) = load(path);
            self.loaded = true;
        }
    }

    fn start_watching(&mut self) {
        if let Watch::NotStarted = self.watch {
            self.watch = match TreeWatch::start() {
                Ok(watch) => Watch::Running(watch),
                Err(why) => {
                    tracing::debug!(reason = %why, "checkpoint: no file watcher; every look before and after a command walks the whole tree");
                    Watch::Unavailable(why)
                }
            };
        }
    }

    fn watch(&self) -> Option<TreeWatch> {
        match &self.watch {
            Watch::Running(watch) => Some(watch.clone()),
            _ => None,
        }
    }

    fn give_up_watching(&mut self, why: String) {
        tracing::info!(reason = %why, "checkpoint: the file watcher cannot cover the workspace; every look before and after a command walks the whole tree");
        self.watch = Watch::Unavailable(why);
    }

    /// `path` now holds `entry`; open looks keep what it held.
    fn set(&mut self, path: &Path, entry: Option<TreeEntry>) {
        let old = match &entry {
            Some(entry) => self.entries.insert(path.to_path_buf(), entry.clone()),
            None => self.entries.remove(path),
        };
        if old == entry {
            return;
        }
        for before in self.looks.values_mut() {
            before.entry(path.to_path_buf()).or_insert_with(|| old.clone());
        }
        self.journal.push((path.to_path_buf(), entry));
    }

    /// The files found with their stat data now: each read and kept again
    /// when it moved (on a few threads: a command may change thousands).
    fn update_files(&mut self, found: Vec<(PathBuf, Stat)>, blobs: &BlobStore, stats: &mut LookStats) {
        let moved: Vec<(PathBuf, Stat)> =
            found.into_iter().filter(|(path, stat)| !self.entries.get(path).is_some_and(|old| old.stat == *stat && old.blob.is_some())).collect();
        stats.hashed += moved.len();
        for (path, entry) in keep_all(moved, blobs) {
            self.set(&path, Some(entry));
        }
    }

    /// `path` and everything under it are gone (or ignored, or a folder
    /// that is a file now).
    fn forget(&mut self, path: &Path) {
        let files: Vec<PathBuf> = under(&self.entries, path).cloned().collect();
        for file in files {
            self.set(&file, None);
        }
        let folders: Vec<PathBuf> = under_set(&self.folders, path).cloned().collect();
        let watch = self.watch();
        for folder in folders {
            self.folders.remove(&folder);
            if let Some(watch) = &watch {
                watch.remove(&folder);
            }
        }
    }

    /// Look at the named entries of listed folders: a file's stat data, a
    /// folder (new, or itself changed) walked whole, what is gone forgotten.
    fn look_at(&mut self, wanted: BTreeMap<PathBuf, BTreeSet<PathBuf>>, blobs: &BlobStore, stats: &mut LookStats) {
        if wanted.is_empty() {
            return;
        }
        let parents: Vec<PathBuf> = wanted.keys().cloned().collect();
        let listed = list(&parents, &wanted);
        stats.folders += parents.len();
        let (mut files, mut folders, mut gone) = (Vec::new(), Vec::new(), Vec::new());
        for path in wanted.into_values().flatten() {
            match listed.get(&path) {
                Some(Listed::File(stat)) => files.push((path, *stat)),
                Some(Listed::Folder) => folders.push(path),
                None => gone.push(path),
            }
        }
        // Walk only the outermost of nested folders (sorted, a folder's
        // descendants follow it).
        folders.sort();
        let mut outermost: Vec<PathBuf> = Vec::new();
        for folder in folders {
            if outermost.last().is_none_or(|last| !folder.starts_with(last)) {
                outermost.push(folder);
            }
        }
        let walked: BTreeSet<PathBuf> = outermost.iter().cloned().collect();
        let in_walked = |path: &Path| walked.range::<Path, _>((Bound::Unbounded, Bound::Included(path))).next_back().is_some_and(|top| path.starts_with(top));
        for path in gone {
            self.forget(&path);
        }
        let mut found = Vec::with_capacity(files.len());
        for (path, stat) in files {
            if in_walked(&path) {
                continue;
            }
            if self.folders.contains(&path) {
                self.forget(&path);
            }
            found.push((path, stat));
        }
        stats.files += found.len();
        self.update_files(found, blobs, stats);
        if !outermost.is_empty() {
            for folder in &outermost {
                if self.entries.contains_key(folder) {
                    self.set(folder, None);
                }
            }
            self.walk(&outermost, false, blobs, stats);
        }
    }

    /// Walk `tops` whole (with `full`, the roots: anything not found is
    /// gone), watching each folder before it is listed.
    fn walk(&mut self, tops: &[PathBuf], full: bool, blobs: &BlobStore, stats: &mut LookStats) {
        let watch = self.watch();
        let mut failure = None;
        if let Some(watch) = &watch {
            for top in tops {
                // A watch does not follow a link, and the walk would.
                let linked = std::fs::symlink_metadata(top).is_ok_and(|meta| meta.file_type().is_symlink());
                let added = if linked { Err(format!("{} is a symbolic link", top.display())) } else { watch.add(top) };
                if let Err(why) = added {
                    failure.get_or_insert(why);
                }
            }
        }
        let walked = walk_watching(tops, watch.clone());
        failure = failure.or(walked.watch_failure);
        stats.folders += walked.folders.len();
        stats.files += walked.files.len();

        let found: HashSet<&Path> = walked.files.iter().map(|(path, _)| path.as_path()).collect();
        let gone: Vec<PathBuf> = if full {
            self.entries.keys().filter(|path| !found.contains(path.as_path())).cloned().collect()
        } else {
            tops.iter().flat_map(|top| under(&self.entries, top)).filter(|path| !found.contains(path.as_path())).cloned().collect()
        };
        for path in gone {
            self.set(&path, None);
        }
        let found_folders: HashSet<&Path> = walked.folders.iter().map(PathBuf::as_path).collect();
        let gone_folders: Vec<PathBuf> = if full {
            self.folders.iter().filter(|folder| !found_folders.contains(folder.as_path())).cloned().collect()
        } else {
            tops.iter().flat_map(|top| under_set(&self.folders, top)).filter(|folder| !found_folders.contains(folder.as_path())).cloned().collect()
        };
        for folder in gone_folders {
            self.folders.remove(&folder);
            if let Some(watch) = &watch {
                watch.remove(&folder);
            }
        }
        drop(found);
        self.folders.extend(walked.folders);
        self.update_files(walked.files, blobs, stats);
        if let (Some(why), Some(_)) = (failure, &watch) {
            self.give_up_watching(why);
        }
    }

    /// Save what changed: append its lines, or rewrite the file when it
    /// holds twice as many lines as files. Not synced: the index only
    /// spares hashing a file again, and a torn line is skipped when read.
    fn persist(&mut self, path: &Path) {
        if self.journal.is_empty() {
            return;
        }
        let journal = std::mem::take(&mut self.journal);
        let result = if self.lines_on_disk + journal.len() > 2 * self.entries.len() + 1000 {
            save(path, &self.entries).map(|()| self.entries.len())
        } else {
            append(path, &journal).map(|()| self.lines_on_disk + journal.len())
        };
        match result {
            Ok(lines) => self.lines_on_disk = lines,
            Err(err) => tracing::warn!(%err, "cannot save the checkpoint index; the next start hashes the files that moved again"),
        }
    }
}

/// The entries at and under `path` (a sorted map keeps them together).
fn under<'a, V>(map: &'a BTreeMap<PathBuf, V>, path: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
    map.range::<Path, _>((Bound::Included(path), Bound::Unbounded)).map(|(key, _)| key).take_while(move |key| key.starts_with(path))
}

fn under_set<'a>(set: &'a BTreeSet<PathBuf>, path: &'a Path) -> impl Iterator<Item = &'a PathBuf> + 'a {
    set.range::<Path, _>((Bound::Included(path), Bound::Unbounded)).take_while(move |key| key.starts_with(path))
}

/// Read `path` and keep its content.
pub fn keep(path: &Path, stat: Stat, blobs: &BlobStore) -> TreeEntry {
    let limit = blobs.max_file_bytes();
    if stat.len > limit {
        let not_kept = super::blobs::PutError::TooLarge { bytes: stat.len, limit }.to_string();
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

/// [`keep`] each file, on as many threads as there are cores (at most 4;
/// one for a handful of files): reading and hashing thousands of files is
/// most of what a look after a big command costs.
fn keep_all(files: Vec<(PathBuf, Stat)>, blobs: &BlobStore) -> Vec<(PathBuf, TreeEntry)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(4).min(files.len() / 64).max(1);
    if threads == 1 {
        let mut kept = Vec::with_capacity(files.len());
        for (path, stat) in files {
            let entry = keep(&path, stat, blobs);
            kept.push((path, entry));
        }
        return kept;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let kept = Mutex::new(Vec::with_capacity(files.len()));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut mine = Vec::new();
                while let Some((path, stat)) = files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    mine.push((path.clone(), keep(path, *stat, blobs)));
                }
                kept.locked().extend(mine);
            });
        }
    });
    kept.into_value()
}

/// The walker every look uses, so each applies the same rules.
fn walker(tops: &[PathBuf]) -> Option<ignore::WalkBuilder> {
    let (first, rest) = tops.split_first()?;
    let mut builder = ignore::WalkBuilder::new(first);
    for top in rest {
        builder.add(top);
    }
    builder.hidden(false).require_git(false).follow_links(false).threads(2);
    Some(builder)
}

/// Every regular file under `roots` that is not ignored, with its stat data.
pub fn walk(roots: &[PathBuf]) -> Vec<(PathBuf, Stat)> {
    walk_watching(roots, None).files
}

#[derive(Default)]
struct Walked {
    files: Vec<(PathBuf, Stat)>,
    folders: Vec<PathBuf>,
    /// Why a folder could not be watched (the watcher is incomplete).
    watch_failure: Option<String>,
}

/// Walk `tops` (folders, not ignored): every file and folder not ignored.
/// With a watch, each folder found is watched before it is listed.
fn walk_watching(tops: &[PathBuf], watch: Option<TreeWatch>) -> Walked {
    let Some(mut builder) = walker(tops) else { return Walked::default() };
    let failure: Arc<Mutex<Option<String>>> = Arc::default();
    let failed = Arc::clone(&failure);
    // Called for each entry the ignore rules keep, before a folder is
    // read: the place to watch it.
    builder.filter_entry(move |entry| {
        if entry.file_name() == ".git" {
            return false;
        }
        if let Some(watch) = &watch {
            if entry.file_type().is_some_and(|t| t.is_dir()) {
                if let Err(why) = watch.add(entry.path()) {
                    failed.locked().get_or_insert(why);
                }
            }
        }
        true
    });
    let found = Mutex::new((Vec::new(), Vec::new()));
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            if let Ok(entry) = entry {
                match entry.file_type() {
                    Some(t) if t.is_file() => {
                        if let Ok(meta) = entry.metadata() {
                            found.locked().0.push((entry.into_path(), Stat::of(&meta)));
                        }
                    }
                    Some(t) if t.is_dir() => found.locked().1.push(entry.into_path()),
                    _ => {}
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (files, folders) = found.into_value();
    let watch_failure = failure.locked().take();
    Walked { files, folders, watch_failure }
}

/// What a listing found at a path.
enum Listed {
    File(Stat),
    Folder,
}

/// List `parents` one level deep, as the walk would (ignore rules
/// applied), and read the stat data of the `wanted` entries only.
fn list(parents: &[PathBuf], wanted: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> HashMap<PathBuf, Listed> {
    let Some(mut builder) = walker(parents) else { return HashMap::new() };
    builder.max_depth(Some(1)).filter_entry(|entry| entry.file_name() != ".git");
    let found = Mutex::new(HashMap::new());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            let path = entry.path();
            if entry.depth() != 1 || !path.parent().and_then(|parent| wanted.get(parent)).is_some_and(|names| names.contains(path)) {
                return ignore::WalkState::Continue;
            }
            let listed = match entry.file_type() {
                Some(t) if t.is_file() => entry.metadata().ok().map(|meta| Listed::File(Stat::of(&meta))),
                Some(t) if t.is_dir() => Some(Listed::Folder),
                _ => None,
            };
            if let Some(listed) = listed {
                found.locked().insert(entry.into_path(), listed);
            }
            ignore::WalkState::Continue
        })
    });
    found.into_value()
}

/// One line per file: `[path, entry]`, or `[path, null]` for a file gone
/// since an earlier line; a damaged line loses one file's entry, not the
/// index. Returns the entries and the number of lines.
fn load(path: &Path) -> (BTreeMap<PathBuf, TreeEntry>, usize) {
    let Ok(text) = std::fs::read_to_string(path) else { return (BTreeMap::new(), 0) };
    let mut entries = BTreeMap::new();
    let mut lines = 0;
    for line in text.lines() {
        lines += 1;
        match serde_json::from_str::<(PathBuf, Option<TreeEntry>)>(line) {
            Ok((file, Some(entry))) => {
                entries.insert(file, entry);
            }
            Ok((file, None)) => {
                entries.remove(&file);
            }
            Err(_) => {}
        }
    }
    (entries, lines)
}

fn lines<'a>(entries: impl Iterator<Item = (&'a PathBuf, Option<&'a TreeEntry>)>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for entry in entries {
        serde_json::to_writer(&mut out, &entry).map_err(std::io::Error::other)?;
        out.push(b'\n');
    }
    Ok(out)
}

fn save(path: &Path, entries: &BTreeMap<PathBuf, TreeEntry>) -> std::io::Result<()> {
    let out = lines(entries.iter().map(|(path, entry)| (path, Some(entry))))?;
    super::blobs::write_atomically(path, &out)
}

fn append(path: &Path, journal: &[(PathBuf, Option<TreeEntry>)]) -> std::io::Result<()> {
    let out = lines(journal.iter().map(|(path, entry)| (path, entry.as_ref())))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(&out)
}
