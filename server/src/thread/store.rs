//! Threads on disk: one JSON Lines file per thread under
//! `$XDG_DATA_HOME/tandem/threads/<workspace-hash>/<thread>.jsonl`
//! (without `XDG_DATA_HOME`, the platform's data folder; threads older
//! Tandems kept in `…/tandem/sessions` are moved there when the
//! workspace's store is opened).
//!
//! Append-only: each record is one line, written at the end of each turn
//! and flushed, so a crash loses at most the turn in flight. On load, a torn
//! last line (no newline, or not JSON) is skipped; a file from a newer
//! format, or with a broken line before the last, is reported and skipped,
//! never fatal. Nothing secret is written: records hold the thread,
//! never the environment or a key.
//!
//! Several processes may share a workspace's threads (two editor windows
//! each run their own `tandem lsp`): a run holds its thread's lock
//! ([`ThreadStore::lock_run`], an advisory lock on `<thread>.lock` that the
//! system lets go of when the process ends, however it ends), and a thread
//! kept in memory is read again from its file when another process wrote
//! to it since ([`ThreadStore::is_stale`]).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use super::history::{Thread, Record, Totals, FORMAT_VERSION};
use super::valid_thread_id;

/// Session files listed at most (the most recent).
const MAX_LISTED: usize = 500;

/// Session files larger than this are not loaded.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The append handle of a thread's session file.
pub struct ThreadFile {
    file: File,
    /// The file's length after this handle's last write (or when it was
    /// read): a longer file was written to by another process since.
    len: u64,
}

impl ThreadFile {
    fn new(file: File) -> std::io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(ThreadFile { file, len })
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn append(&mut self, records: &[Record]) -> std::io::Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut out = Vec::new();
        for record in records {
            serde_json::to_writer(&mut out, record).map_err(std::io::Error::other)?;
            out.push(b'\n');
        }
        self.file.write_all(&out)?;
        self.file.flush()?;
        self.file.sync_data()?;
        self.len = self.file.metadata()?.len();
        Ok(())
    }
}

/// A thread's run lock (see the module doc): while it is held, no other
/// process runs the thread. Released when dropped.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// Why a thread's run lock was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// Another process holds it (its pid, when it wrote one).
    Held { pid: Option<u32> },
    Io(String),
}

/// A thread as `tandem threads` and `tandem.threads` show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSummary {
    pub id: String,
    pub title: String,
    pub updated_ms: u64,
    pub totals: Totals,
}

/// Why a session file was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    NotFound(String),
    /// Written by a newer Tandem.
    NewerFormat { path: PathBuf, version: u32 },
    /// Not a session file, or a line before the last is not a record.
    Broken { path: PathBuf, reason: String },
    Io(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotFound(id) => write!(f, "no saved thread \"{id}\" in this workspace (see `tandem threads`)"),
            LoadError::NewerFormat { path, version } => write!(
                f,
                "{} was written by a newer Tandem (session format {version}; this one reads {FORMAT_VERSION}); skipped",
                path.display()
            ),
            LoadError::Broken { path, reason } => write!(f, "{} is not a readable session file ({reason}); skipped", path.display()),
            LoadError::Io(message) => f.write_str(message),
        }
    }
}

/// The saved threads of one workspace.
#[derive(Debug, Clone)]
pub struct ThreadStore {
    dir: PathBuf,
    workspace: PathBuf,
}

/// Tandem's folder in `$XDG_DATA_HOME`, else in the platform's data folder.
fn data_root() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(dirs::data_dir)?;
    Some(data.join("tandem"))
}

/// `$XDG_DATA_HOME/tandem/threads`, else the platform's data folder.
pub fn threads_root() -> Option<PathBuf> {
    Some(data_root()?.join(THREADS_FOLDER))
}

/// The folder threads are kept in, under Tandem's data folder.
const THREADS_FOLDER: &str = "threads";

/// Where earlier versions kept them (when `tandem threads` was `tandem
/// sessions`): a workspace's folder there is moved into [`THREADS_FOLDER`]
/// when its store is opened.
const LEGACY_FOLDER: &str = "sessions";

/// A stable name for a workspace folder: FNV-1a of its path, in hex.
/// (std's hasher may change between Rust releases; file names must not.)
pub fn workspace_hash(root: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in root.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

impl ThreadStore {
    /// The store for a workspace root under the user's data folder. The
    /// workspace's threads from the folder older Tandems used
    /// (`…/tandem/sessions`) are moved in first.
    pub fn for_workspace(root: &Path) -> Option<Self> {
        let data = data_root()?;
        let store = Self::at(&data.join(THREADS_FOLDER), root);
        store.adopt(&data.join(LEGACY_FOLDER).join(workspace_hash(root)));
        Some(store)
    }

    /// Move the threads (and checkpoints) kept in `legacy`, another
    /// folder of this workspace's, into this store; nothing is ever
    /// deleted. The whole folder is renamed when this store has none yet
    /// (one rename on one file system: a process of an older Tandem
    /// writing a thread there goes on writing the same file, and its run
    /// locks stay the same files). When both exist (an older Tandem made
    /// the old folder again), each entry this store lacks is moved, and
    /// what cannot be is left where it is, logged.
    fn adopt(&self, legacy: &Path) {
        if !legacy.is_dir() {
            return;
        }
        if let Some(parent) = self.dir.parent() {
            if let Err(err) = std::fs::create_dir_all(parent) {
                tracing::warn!(%err, dir = %parent.display(), "cannot make the threads folder; the saved threads stay in {}", legacy.display());
                return;
            }
        }
        match std::fs::rename(legacy, &self.dir) {
            Ok(()) => return,
            // Another process moved it first: nothing left to do.
            Err(_) if !legacy.exists() => return,
            Err(_) if self.dir.is_dir() => {}
            Err(err) => {
                tracing::warn!(%err, "cannot move the saved threads from {} to {}", legacy.display(), self.dir.display());
                return;
            }
        }
        let Ok(entries) = std::fs::read_dir(legacy) else { return };
        for entry in entries.flatten() {
            let to = self.dir.join(entry.file_name());
            if to.exists() {
                tracing::warn!(from = %entry.path().display(), to = %to.display(), "left in the old folder: the threads folder has an entry of that name");
                continue;
            }
            if let Err(err) = std::fs::rename(entry.path(), &to) {
                tracing::warn!(%err, from = %entry.path().display(), "cannot move a saved thread into {}", self.dir.display());
            }
        }
        // Gone only when empty: whatever was left stays readable there.
        let _ = std::fs::remove_dir(legacy);
    }

    /// The store for a workspace root under `threads_root`.
    pub fn at(threads_root: &Path, workspace: &Path) -> Self {
        ThreadStore { dir: threads_root.join(workspace_hash(workspace)), workspace: workspace.to_path_buf() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the checkpoints of this workspace's runs are kept: one folder
    /// per thread beside the threads, and the store they share.
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.dir.join("checkpoints")
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    fn lock_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.lock"))
    }

    /// Take the run lock of thread `id`, without waiting: a thread another
    /// process is running answers [`LockError::Held`].
    pub fn lock_run(&self, id: &str) -> Result<RunLock, LockError> {
        if !valid_thread_id(id) {
            return Err(LockError::Io(format!("\"{id}\" is not a valid thread id")));
        }
        let path = self.lock_path(id);
        let io = |e: std::io::Error| LockError::Io(format!("{}: {e}", path.display()));
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {
                // The holder's pid, for the message another process gives.
                let written = file.set_len(0).and_then(|()| file.write_all(std::process::id().to_string().as_bytes()));
                if let Err(err) = written {
                    tracing::debug!(%err, "cannot note this process in the thread's lock file");
                }
                Ok(RunLock { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let pid = std::io::Read::read_to_string(&mut file, &mut text).ok().and_then(|_| text.trim().parse().ok());
                Err(LockError::Held { pid })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// Has another process written to `thread`'s file since this one read
    /// or wrote it? (A file gone or shorter counts too: it is read again.)
    pub fn is_stale(&self, thread: &Thread) -> bool {
        match (thread.saved_len(), std::fs::metadata(self.path(&thread.id))) {
            (Some(len), Ok(meta)) => meta.len() != len,
            (Some(_), Err(_)) => true,
            (None, _) => false,
        }
    }

    /// Start saving a new thread: create its file and write what it holds.
    pub fn create(&self, thread: &mut Thread) -> std::io::Result<()> {
        if !valid_thread_id(&thread.id) {
            return Err(std::io::Error::other(format!("\"{}\" is not a valid thread id", thread.id)));
        }
        std::fs::create_dir_all(&self.dir)?;
        let file = OpenOptions::new().create_new(true).append(true).open(self.path(&thread.id))?;
        thread.attach(ThreadFile::new(file)?);
        thread.commit();
        Ok(())
    }

    /// Load a saved thread and keep appending to its file.
    pub fn load(&self, id: &str) -> Result<Thread, LoadError> {
        if !valid_thread_id(id) {
            return Err(LoadError::NotFound(id.to_string()));
        }
        let path = self.path(id);
        let (mut thread, torn_at) = read_file(&path, &self.workspace)?;
        let io = |e: std::io::Error| LoadError::Io(format!("{}: {e}", path.display()));
        if let Some(good_bytes) = torn_at {
            // Cut the torn line off, so the next record starts on a line of its own.
            OpenOptions::new().write(true).open(&path).and_then(|f| f.set_len(good_bytes)).map_err(io)?;
        }
        let file = OpenOptions::new().append(true).open(&path).map_err(io)?;
        thread.attach(ThreadFile::new(file).map_err(io)?);
        Ok(thread)
    }

    /// Every saved thread, most recent first, with the files that could
    /// not be read (each reported, none fatal).
    pub fn list(&self) -> (Vec<ThreadSummary>, Vec<LoadError>) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return (Vec::new(), Vec::new()) };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .map(|p| (std::fs::metadata(&p).and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH), p))
            .collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        files.truncate(MAX_LISTED);
        let mut threads = Vec::new();
        let mut problems = Vec::new();
        for (_, path) in files {
            match read_file(&path, &self.workspace) {
                Ok((c, _)) => threads.push(ThreadSummary { id: c.id.clone(), title: c.title.clone(), updated_ms: c.updated_ms, totals: c.totals }),
                Err(err) => problems.push(err),
            }
        }
        threads.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| b.id.cmp(&a.id)));
        (threads, problems)
    }

    /// A saved thread's past as run events (read only: a torn last line is
    /// skipped, not cut, as the thread may be running).
    pub fn transcript(&self, id: &str) -> Result<super::transcript::Transcript, LoadError> {
        if !valid_thread_id(id) {
            return Err(LoadError::NotFound(id.to_string()));
        }
        let (records, _) = read_records(&self.path(id))?;
        Ok(super::transcript::from_records(records))
    }

    /// The most recently active thread whose last review left findings,
    /// and those findings (read only, as [`Self::transcript`]).
    pub fn latest_findings(&self) -> Option<(String, Vec<crate::protocol::Finding>)> {
        self.list().0.into_iter().find_map(|summary| {
            let (thread, _) = read_file(&self.path(&summary.id), &self.workspace).ok()?;
            (!thread.findings.is_empty()).then_some((thread.id, thread.findings))
        })
    }

    /// The most recently active thread.
    pub fn latest(&self) -> Option<String> {
        self.list().0.into_iter().next().map(|t| t.id)
    }

    /// Delete a thread's file; false when there was none.
    pub fn forget(&self, id: &str) -> std::io::Result<bool> {
        if !valid_thread_id(id) {
            return Ok(false);
        }
        // The thread's checkpoints go with it (their blobs at the next
        // garbage collection of the checkpoint store).
        match std::fs::remove_dir_all(self.checkpoints_dir().join(id)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        // The lock file goes too (a run of it elsewhere was refused before).
        let _ = std::fs::remove_file(self.lock_path(id));
        match std::fs::remove_file(self.path(id)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Replay a session file. Returns the thread and, when the last line was
/// torn (and skipped), the length of the good part.
fn read_file(path: &Path, workspace: &Path) -> Result<(Thread, Option<u64>), LoadError> {
    let broken = |reason: String| LoadError::Broken { path: path.to_path_buf(), reason };
    let (records, torn_at) = read_records(path)?;
    let mut loaded: Option<Thread> = None;
    for record in records {
        match (&mut loaded, record) {
            // read_records checked the version.
            (None, Record::Meta { thread, created_ms, .. }) => {
                let mut c = Thread::new(thread, workspace.to_path_buf());
                c.created_ms = created_ms;
                c.updated_ms = created_ms;
                c.discard_pending();
                loaded = Some(c);
            }
            (None, _) => return Err(broken("it does not start with a meta record".into())),
            (Some(c), record) => c.apply(record),
        }
    }
    let thread = loaded.ok_or_else(|| broken("it is empty".into()))?;
    Ok((thread, torn_at))
}

/// The records of a thread file, checked to start with a meta record of a
/// format this build reads, and, when the last line was torn (and
/// skipped), the length of the good part.
fn read_records(path: &Path) -> Result<(Vec<Record>, Option<u64>), LoadError> {
    let broken = |reason: String| LoadError::Broken { path: path.to_path_buf(), reason };
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            LoadError::NotFound(path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
        }
        _ => LoadError::Io(format!("{}: {e}", path.display())),
    })?;
    if file.metadata().map(|m| m.len()).unwrap_or(0) > MAX_FILE_BYTES {
        return Err(broken(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    let mut reader = BufReader::new(file);
    let mut lines: Vec<(String, bool)> = Vec::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {
                let complete = line.ends_with('\n');
                lines.push((line, complete));
            }
            Err(e) => return Err(broken(e.to_string())),
        }
    }
    let mut records: Vec<Record> = Vec::new();
    let mut torn = false;
    let mut good_bytes: u64 = 0;
    let count = lines.len();
    for (i, (line, complete)) in lines.into_iter().enumerate() {
        let last = i + 1 == count;
        let line_bytes = line.len() as u64;
        if line.trim().is_empty() {
            good_bytes += line_bytes;
            continue;
        }
        let record = match serde_json::from_str::<Record>(&line) {
            Ok(record) if complete || !last => record,
            // A last line without its newline was cut mid-write, even if it parses.
            Ok(_) => {
                torn = true;
                break;
            }
            Err(_) if last => {
                torn = true;
                break;
            }
            Err(err) => return Err(broken(format!("line {}: {err}", i + 1))),
        };
        match (records.is_empty(), &record) {
            (true, Record::Meta { version, .. }) if *version > FORMAT_VERSION => {
                return Err(LoadError::NewerFormat { path: path.to_path_buf(), version: *version });
            }
            (true, Record::Meta { .. }) | (false, _) => records.push(record),
            (true, _) => return Err(broken("it does not start with a meta record".into())),
        }
        good_bytes += line_bytes;
    }
    if torn {
        tracing::warn!(path = %path.display(), "the session file's last line was cut off; skipped it");
    }
    Ok((records, torn.then_some(good_bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Message;
    use crate::model::{RunStatus, Usage};

    /// The folder of one workspace under `data/FOLDER`, with a thread saved in it.
    fn saved_in(data: &Path, folder: &str, workspace: &Path) -> (ThreadStore, String) {
        let store = ThreadStore::at(&data.join(folder), workspace);
        let mut thread = Thread::new(crate::thread::new_thread_id(), workspace.to_path_buf());
        store.create(&mut thread).unwrap();
        thread.push(Message::user_text(format!("kept in {folder}")));
        thread.commit();
        (store, thread.id)
    }

    #[test]
    fn threads_saved_in_the_old_sessions_folder_are_moved_in_and_load() {
        let data = tempfile::tempdir().unwrap();
        let workspace = data.path().join("w");
        let (old, id) = saved_in(data.path(), LEGACY_FOLDER, &workspace);
        let other = data.path().join(LEGACY_FOLDER).join("another-workspace");
        std::fs::create_dir_all(&other).unwrap();
        let store = ThreadStore::at(&data.path().join(THREADS_FOLDER), &workspace);
        store.adopt(old.dir());
        assert!(!old.dir().exists());
        assert_eq!(store.load(&id).unwrap().messages[0].text(), "kept in sessions");
        assert_eq!(store.latest().as_deref(), Some(id.as_str()));
        // Another workspace's folder is its own store's to move.
        assert!(other.is_dir());
    }

    #[test]
    fn an_old_folder_made_again_beside_the_new_one_is_merged_and_nothing_is_lost() {
        let data = tempfile::tempdir().unwrap();
        let workspace = data.path().join("w");
        let (new, kept) = saved_in(data.path(), THREADS_FOLDER, &workspace);
        let (old, moved) = saved_in(data.path(), LEGACY_FOLDER, &workspace);
        // A name both folders hold stays where it is, readable.
        std::fs::write(old.dir().join(format!("{kept}.jsonl")), "not moved").unwrap();
        new.adopt(old.dir());
        assert_eq!(new.load(&moved).unwrap().messages[0].text(), "kept in sessions");
        assert_eq!(new.load(&kept).unwrap().messages[0].text(), "kept in threads");
        assert_eq!(std::fs::read_to_string(old.dir().join(format!("{kept}.jsonl"))).unwrap(), "not moved");
        new.adopt(&data.path().join("nothing-here"));
    }

    fn store() -> (tempfile::TempDir, ThreadStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ThreadStore::at(dir.path(), Path::new("/work/app"));
        (dir, store)
    }

    fn saved_thread(store: &ThreadStore, id: &str) -> Thread {
        let mut c = Thread::new(id, PathBuf::from("/work/app"));
        store.create(&mut c).unwrap();
        c.set_title_from("fix   the\nbug");
        c.set_system("system prompt".into());
        c.push(Message::user_text("fix the bug"));
        c.end_turn(Usage::new(100, 10), Some(0.5));
        c.push(Message::user_text("and a test"));
        c.end_run(RunStatus::Completed, None, Usage::default(), None);
        c.commit();
        c
    }

    #[test]
    fn a_thread_round_trips_through_its_file() {
        let (_dir, store) = store();
        saved_thread(&store, "t1");
        let loaded = store.load("t1").unwrap();
        assert_eq!(loaded.title, "fix the bug");
        assert_eq!(loaded.system.as_deref(), Some("system prompt"));
        assert_eq!(loaded.messages.len(), 2);
        assert_eq!(loaded.totals, Totals { runs: 1, turns: 1, usage: Usage::new(100, 10), cost_usd: Some(0.5) });
        let (list, problems) = store.list();
        assert!(problems.is_empty());
        assert_eq!(list.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t1"]);
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_appending_goes_on() {
        let (_dir, store) = store();
        saved_thread(&store, "t1");
        let path = store.dir().join("t1.jsonl");
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"type":"message","message":{"role":"user","content":[{"type":"text","te"#).unwrap();
        drop(file);
        let mut loaded = store.load("t1").unwrap();
        assert_eq!(loaded.messages.len(), 2);
        loaded.push(Message::user_text("third"));
        loaded.commit();
        let reloaded = store.load("t1").unwrap();
        assert_eq!(reloaded.messages.last().unwrap().text(), "third");
        assert_eq!(reloaded.messages.len(), 3);
    }

    #[test]
    fn newer_and_broken_files_are_reported_and_skipped() {
        let (_dir, store) = store();
        saved_thread(&store, "good");
        std::fs::write(store.dir().join("newer.jsonl"), "{\"type\":\"meta\",\"version\":99,\"thread\":\"newer\",\"workspace\":\"/w\",\"created_ms\":1}\n").unwrap();
        std::fs::write(store.dir().join("broken.jsonl"), "not json\n{\"type\":\"run\"}\n").unwrap();
        let (list, problems) = store.list();
        assert_eq!(list.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["good"]);
        let mut messages: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        messages.sort();
        assert!(messages[0].contains("broken.jsonl is not a readable session file"), "{messages:?}");
        assert!(messages[1].contains("newer.jsonl was written by a newer Tandem (session format 99"), "{messages:?}");
        assert!(matches!(store.load("newer"), Err(LoadError::NewerFormat { version: 99, .. })));
    }

    #[test]
    fn thread_ids_cannot_name_other_files() {
        let (_dir, store) = store();
        assert!(matches!(store.load("../../etc/passwd"), Err(LoadError::NotFound(_))));
        assert!(!store.forget("../x").unwrap());
        assert!(valid_thread_id(&super::super::new_thread_id()));
    }

    #[test]
    fn workspace_hash_is_stable() {
        expect_test::expect!["c2ce89292ac1e897"].assert_eq(&workspace_hash(Path::new("/work/app")));
    }
}
