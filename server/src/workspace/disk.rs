//! The disk sink: atomic writes (a temp file in the same folder, then a
//! rename), keeping the file's mode bits, and only when the file still holds
//! what the agent read.
//!
//! A process killed between creating the temp file and the rename leaves
//! the target untouched (never torn) but the temp file behind. Each temp
//! file's path is first recorded in a journal of this process
//! ([`WriteJournal`], one file per pid in the workspace's state folder),
//! so the next start (or the end of a run) removes exactly the debris of
//! processes that are gone, and nothing a live Tandem is still writing.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::ledger::fingerprint;

#[derive(Debug)]
pub enum DiskWriteError {
    /// The file's content no longer matches the expected fingerprint (or it
    /// was deleted).
    Changed,
    /// A file appeared where the agent expected none.
    Exists,
    Io(std::io::Error),
}

/// Temp files are named `.tandem-<pid>-<random>.tmp`.
const TEMP_PREFIX: &str = ".tandem-";
const TEMP_SUFFIX: &str = ".tmp";

fn is_temp_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(TEMP_PREFIX) && n.ends_with(TEMP_SUFFIX))
}

/// The temp files this process may leave behind if it is killed mid-write.
#[derive(Debug)]
pub struct WriteJournal {
    /// `<state>/pending-writes`: one file per pid, one temp path per line.
    dir: PathBuf,
    in_flight: AtomicUsize,
}

impl WriteJournal {
    pub fn new(dir: PathBuf) -> Self {
        WriteJournal { dir, in_flight: AtomicUsize::new(0) }
    }

    fn own_file(&self) -> PathBuf {
        self.dir.join(std::process::id().to_string())
    }

    fn record(&self, temp: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut journal = crate::platform::private_file(std::fs::OpenOptions::new().create(true).append(true)).open(self.own_file())?;
        let mut line = temp.as_os_str().as_encoded_bytes().to_vec();
        line.push(b'\n');
        journal.write_all(&line)
    }

    /// Remove the temp files of interrupted writes: those recorded by
    /// processes that are gone, and this process's own when no write is in
    /// flight (the end of a run). Returns how many files were removed.
    pub fn clean(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return 0 };
        let own = std::process::id();
        let mut removed = 0;
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            let mine = pid == own;
            if mine && self.in_flight.load(Ordering::SeqCst) > 0 {
                continue;
            }
            if !mine && crate::platform::process_exists(pid) {
                continue;
            }
            let journal = entry.path();
            let Ok(listed) = std::fs::read(&journal) else { continue };
            for line in listed.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                // SAFETY of the conversion: the bytes were written by
                // `record` from an OsStr on this platform.
                let path = PathBuf::from(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(line) });
                if is_temp_name(&path) && std::fs::remove_file(&path).is_ok() {
                    tracing::info!(path = %path.display(), "removed the temp file of an interrupted write");
                    removed += 1;
                }
            }
            let _ = std::fs::remove_file(&journal);
        }
        removed
    }
}

/// Removes the temp file unless the write went through.
struct TempFile<'a> {
    path: PathBuf,
    journal: Option<&'a WriteJournal>,
    done: bool,
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
        if let Some(journal) = self.journal {
            if journal.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
                // Nothing in flight: every recorded temp file is gone.
                let _ = std::fs::remove_file(journal.own_file());
            }
        }
    }
}

/// Write `bytes` to `path` atomically. `expected` is the fingerprint the file
/// must still have (`None`: the file must not exist). Parent folders are
/// created as needed.
pub fn atomic_write(path: &Path, bytes: &[u8], expected: Option<u64>) -> Result<(), DiskWriteError> {
    atomic_write_journaled(path, bytes, expected, None)
}

/// [`atomic_write`], recording the temp file in `journal` first so that a
/// kill -9 before the rename leaves debris the next start can find.
pub fn atomic_write_journaled(path: &Path, bytes: &[u8], expected: Option<u64>, journal: Option<&WriteJournal>) -> Result<(), DiskWriteError> {
    // Write through a symlink to the file it names: renaming the temp file
    // over the link itself would replace the link with a plain file.
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let check = || -> Result<Option<std::fs::Permissions>, DiskWriteError> {
        match (std::fs::read(path), expected) {
            (Ok(current), Some(fp)) if fingerprint(&current) == fp => {
                Ok(std::fs::metadata(path).ok().map(|m| m.permissions()))
            }
            (Ok(_), Some(_)) => Err(DiskWriteError::Changed),
            (Ok(_), None) => Err(DiskWriteError::Exists),
            (Err(e), None) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            (Err(e), Some(_)) if e.kind() == std::io::ErrorKind::NotFound => Err(DiskWriteError::Changed),
            (Err(e), _) => Err(DiskWriteError::Io(e)),
        }
    };
    let permissions = check()?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(DiskWriteError::Io)?;
    let temp_path = dir.join(format!("{TEMP_PREFIX}{}-{:016x}{TEMP_SUFFIX}", std::process::id(), rand::random::<u64>()));
    if let Some(journal) = journal {
        journal.in_flight.fetch_add(1, Ordering::SeqCst);
    }
    let mut temp = TempFile { path: temp_path, journal, done: false };
    if let Some(journal) = journal {
        if let Err(err) = journal.record(&temp.path) {
            tracing::warn!(%err, "cannot record a temp file in the write journal");
        }
    }
    let mut file = crate::platform::private_file(std::fs::OpenOptions::new().write(true).create_new(true)).open(&temp.path).map_err(DiskWriteError::Io)?;
    file.write_all(bytes).map_err(DiskWriteError::Io)?;
    file.sync_all().map_err(DiskWriteError::Io)?;
    drop(file);
    if let Some(permissions) = permissions {
        std::fs::set_permissions(&temp.path, permissions).map_err(DiskWriteError::Io)?;
    } else {
        // A new file gets the usual mode (0666 less the umask), not the
        // temp file's private 0600.
        crate::platform::set_mode(&temp.path, 0o666 & !current_umask()).map_err(DiskWriteError::Io)?;
    }
    // Check again right before the rename to keep the window for a lost
    // concurrent write as small as the filesystem allows.
    check()?;
    // On Windows an editor or an indexer holding the file open (without
    // FILE_SHARE_DELETE) makes the rename fail until it lets go: tried
    // again, the file checked again each time (the holder may have
    // written it), and at last reported with the file as it was. The
    // waits block this thread, as the write itself does, a few seconds
    // at most and only on such a failure.
    let mut waits = RENAME_RETRY_WAITS_MS.iter();
    loop {
        match std::fs::rename(&temp.path, path) {
            Ok(()) => break,
            Err(err) if crate::platform::file_held_open(&err) => match waits.next() {
                Some(wait) => {
                    std::thread::sleep(std::time::Duration::from_millis(*wait));
                    check()?;
                }
                None => return Err(DiskWriteError::Io(held_open(err))),
            },
            Err(err) => return Err(DiskWriteError::Io(err)),
        }
    }
    temp.done = true;
    Ok(())
}

/// The waits, in milliseconds, between tries of a rename another program
/// keeps failing by holding the file open: about 4 s in all, long enough
/// for an indexer's or a virus scanner's look, short of a hang.
const RENAME_RETRY_WAITS_MS: [u64; 8] = [25, 50, 100, 200, 400, 800, 1000, 1000];

/// The error of a rename that another program kept failing: what to do,
/// and that the file is unchanged.
fn held_open(err: std::io::Error) -> std::io::Error {
    let tries = RENAME_RETRY_WAITS_MS.len() + 1;
    let seconds = RENAME_RETRY_WAITS_MS.iter().sum::<u64>() as f64 / 1000.0;
    std::io::Error::new(
        err.kind(),
        format!("another program holds it open ({err}); tried {tries} times over {seconds:.1} s. The file is unchanged: close it in that program (an editor, a viewer, an indexer) and try again"),
    )
}

/// The process's umask, from `/proc/self/status` (changing the umask to
/// read it would race with other threads creating files); 022 elsewhere.
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_when_content_changed_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sh");
        std::fs::write(&path, "one").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let seen = fingerprint(b"one");
        std::fs::write(&path, "two").unwrap();
        assert!(matches!(atomic_write(&path, b"three", Some(seen)), Err(DiskWriteError::Changed)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        atomic_write(&path, b"three", Some(fingerprint(b"two"))).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "three");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        }
        assert!(matches!(atomic_write(&path, b"x", None), Err(DiskWriteError::Exists)));
        atomic_write(&dir.path().join("new/deep/file.txt"), b"x", None).unwrap();
        #[cfg(unix)]
        {
            std::fs::write(dir.path().join("real.txt"), "real").unwrap();
            crate::platform::symlink("real.txt", dir.path().join("link.txt")).unwrap();
            atomic_write(&dir.path().join("link.txt"), b"via link", Some(fingerprint(b"real"))).unwrap();
            assert!(std::fs::symlink_metadata(dir.path().join("link.txt")).unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read_to_string(dir.path().join("real.txt")).unwrap(), "via link");
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
        assert!(leftovers.is_empty());
    }

    /// A path longer than Windows' old 260-character limit (MAX_PATH) is
    /// resolved inside the workspace, created (with its folders), read and
    /// edited, as a short one (on Windows std gives such a path the `\\?\`
    /// spelling the long-path APIs take; the test runs under Wine).
    #[test]
    fn a_path_longer_than_260_characters_is_written_read_and_edited() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let folder = ["a-folder-name-of-forty-characters-long-x"; 6].join("/");
        let relative = format!("{folder}/and-a-file-with-a-long-name-too.txt");
        let path = crate::workspace::paths::resolve_confined(std::slice::from_ref(&root), &[], &relative).unwrap();
        assert!(crate::platform::plain_path(&path).to_string_lossy().len() > 260, "{}", path.display());
        atomic_write(&path, b"first\r\n", None).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first\r\n");
        atomic_write(&path, b"edited\r\n", Some(fingerprint(b"first\r\n"))).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"edited\r\n");
        assert_eq!(temp_files(path.parent().unwrap()), Vec::<String>::new());
    }

    /// A file another program holds open without FILE_SHARE_DELETE (as
    /// some editors and indexers do): the rename is tried again until the
    /// hold ends, and the write goes through whole.
    #[cfg(windows)]
    #[test]
    fn a_file_held_open_for_a_moment_is_replaced_once_it_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.txt");
        std::fs::write(&path, "before").unwrap();
        let held = hold_without_delete_sharing(&path);
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(400));
            drop(held);
        });
        atomic_write(&path, b"after", Some(fingerprint(b"before"))).unwrap();
        releaser.join().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "after");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    }

    /// Held open for longer than the tries: a clear error, the file as it
    /// was (never torn), no temp file left.
    #[cfg(windows)]
    #[test]
    fn a_file_held_open_throughout_is_reported_and_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.txt");
        std::fs::write(&path, "before").unwrap();
        let held = hold_without_delete_sharing(&path);
        let started = std::time::Instant::now();
        let err = match atomic_write(&path, b"after", Some(fingerprint(b"before"))) {
            Err(DiskWriteError::Io(err)) => err.to_string(),
            other => panic!("{other:?}"),
        };
        assert!(started.elapsed() >= std::time::Duration::from_secs(3), "gave up after {:?}", started.elapsed());
        assert!(err.starts_with("another program holds it open (") && err.ends_with("The file is unchanged: close it in that program (an editor, a viewer, an indexer) and try again"), "{err}");
        drop(held);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "before");
        assert_eq!(temp_files(dir.path()), Vec::<String>::new());
    }

    /// `path` opened as an editor that forbids deleting or renaming it
    /// while it is open: read and write shared, delete not.
    #[cfg(windows)]
    fn hold_without_delete_sharing(path: &Path) -> std::fs::File {
        use std::os::windows::fs::OpenOptionsExt as _;
        // FILE_SHARE_READ | FILE_SHARE_WRITE, no FILE_SHARE_DELETE.
        std::fs::OpenOptions::new().read(true).write(true).share_mode(0x1 | 0x2).open(path).unwrap()
    }

    fn temp_files(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.ends_with(".tmp")).collect()
    }

    // Unix only: the live writer is this process's parent, whose pid std
    // gives on Unix alone.
    #[cfg(unix)]
    #[test]
    fn debris_of_a_dead_writer_is_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let journal = WriteJournal::new(dir.path().join("journal"));
        std::fs::create_dir_all(dir.path().join("journal")).unwrap();
        let debris = dir.path().join(".tandem-4194999-00000000deadbeef.tmp");
        let user_file = dir.path().join("notes.txt");
        std::fs::write(&debris, "half a file").unwrap();
        std::fs::write(&user_file, "keep me").unwrap();
        // Past pid_max: no such process. The journal lists a temp file and,
        // as if corrupted, a user file, which must survive.
        let listing = format!("{}\n{}\n", debris.display(), user_file.display());
        std::fs::write(dir.path().join("journal/4194999"), listing).unwrap();
        // A live writer's (our own parent's) debris is left alone.
        let live = dir.path().join(".tandem-live-0000000000000001.tmp");
        std::fs::write(&live, "being written").unwrap();
        let parent = std::os::unix::process::parent_id();
        std::fs::write(dir.path().join(format!("journal/{parent}")), format!("{}\n", live.display())).unwrap();

        assert_eq!(journal.clean(), 1);
        assert!(!debris.exists());
        assert_eq!(std::fs::read_to_string(&user_file).unwrap(), "keep me");
        assert!(live.exists());
        assert!(!dir.path().join("journal/4194999").exists());
    }

    // Unix only: Windows files have no mode.
    #[cfg(unix)]
    #[test]
    fn a_finished_write_clears_its_journal_and_gives_a_new_file_the_usual_mode() {
        let dir = tempfile::tempdir().unwrap();
        let journal = WriteJournal::new(dir.path().join("journal"));
        atomic_write_journaled(&dir.path().join("a.txt"), b"text", None, Some(&journal)).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap(), "text");
        // Nothing in flight: the journal file of this process is gone.
        assert!(!journal.own_file().exists());
        // A new file gets the usual mode, not the temp file's 0600.
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path().join("a.txt")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !current_umask());
    }
}
