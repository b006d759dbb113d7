//! The store's faults and the restore's rules, against real files in a
//! temp folder (and an in-memory editor for open documents).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::tools::executor::{PermissionDecision, PermissionGate, PermissionRequest};
use crate::workspace::{Editor, MemoryEditor, Workspace};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    store: Arc<Checkpoints>,
}

fn fixture_with(limits: Limits) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let store = Arc::new(Checkpoints::at(dir.path().join("checkpoints"), vec![root.clone()], limits));
    Fixture { _dir: dir, root, store }
}

fn fixture() -> Fixture {
    fixture_with(Limits::default())
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    fn write(&self, name: &str, bytes: &[u8]) {
        std::fs::write(self.path(name), bytes).unwrap();
    }
    fn read(&self, name: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(name)).ok()
    }
    fn workspace(&self) -> Workspace {
        Workspace::new(&self.root).unwrap()
    }

    /// A run that changes `name` from what it holds to `after` through the
    /// workspace (as edit_file and write_file do).
    async fn run_writing(&self, run_id: &str, changes: &[(&str, &[u8])]) -> Arc<RunRecorder> {
        let recorder = self.store.record("thread-1", run_id);
        for (name, after) in changes {
            let path = self.path(name);
            recorder.before_change(&path, &|| std::fs::read(&path).ok());
            std::fs::write(&path, after).unwrap();
            recorder.after_change(&path, after);
        }
        recorder.finish();
        recorder
    }

    async fn undo(&self, run_id: Option<&str>) -> Result<RestoreReport, CheckpointError> {
        restore(&self.store, Direction::Undo, run_id, &self.workspace(), None, &|_| false).await
    }

    async fn redo(&self, run_id: Option<&str>) -> Result<RestoreReport, CheckpointError> {
        restore(&self.store, Direction::Redo, run_id, &self.workspace(), None, &|_| false).await
    }
}

fn statuses(report: &RestoreReport) -> Vec<(String, &'static str)> {
    report
        .files
        .iter()
        .map(|f| (f.path.file_name().unwrap().to_string_lossy().into_owned(), f.status.as_str()))
        .collect()
}

#[tokio::test]
async fn undo_restores_and_redo_puts_back_then_each_says_when_there_is_nothing_left() {
    let f = fixture();
    f.write("a.txt", b"one\ntwo\n");
    f.run_writing("run-1", &[("a.txt", b"one\nTWO\n"), ("new.txt", b"made\n")]).await;
    let report = f.undo(None).await.unwrap();
    assert_eq!(report.run_id, "run-1");
    assert_eq!(statuses(&report), [("a.txt".into(), "restored"), ("new.txt".into(), "restored")]);
    assert_eq!(f.read("a.txt").unwrap(), b"one\ntwo\n");
    assert_eq!(f.read("new.txt"), None, "a file the run made is removed");
    let nothing = f.undo(None).await.unwrap_err();
    assert!(matches!(&nothing, CheckpointError::Nothing(m) if m.contains("nothing to undo")), "{nothing:?}");
    let again = f.undo(Some("run-1")).await.unwrap_err();
    assert!(matches!(&again, CheckpointError::Invalid(m) if m.contains("already undone")), "{again:?}");

    let report = f.redo(None).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "restored"), ("new.txt".into(), "restored")]);
    assert_eq!(f.read("a.txt").unwrap(), b"one\nTWO\n");
    assert_eq!(f.read("new.txt").unwrap(), b"made\n");
    assert!(matches!(f.redo(None).await, Err(CheckpointError::Nothing(_))));
}

#[tokio::test]
async fn with_nothing_recorded_the_message_says_so_and_a_run_that_changed_nothing_leaves_no_checkpoint() {
    let f = fixture();
    let err = f.undo(None).await.unwrap_err();
    assert_eq!(err.to_string(), "nothing to undo: no run in this workspace has changed a file since its checkpoints began");
    f.write("a.txt", b"same\n");
    f.run_writing("run-1", &[("a.txt", b"same\n")]).await;
    assert!(matches!(f.undo(None).await, Err(CheckpointError::Nothing(_))));
    let unknown = f.undo(Some("run-9")).await.unwrap_err();
    assert!(unknown.to_string().starts_with("no checkpoint of run run-9 in this workspace"), "{unknown}");
}

#[tokio::test]
async fn undo_walks_back_run_by_run() {
    let f = fixture();
    f.write("a.txt", b"v0\n");
    f.run_writing("run-1", &[("a.txt", b"v1\n")]).await;
    f.run_writing("run-2", &[("a.txt", b"v2\n")]).await;
    assert_eq!(f.undo(None).await.unwrap().run_id, "run-2");
    assert_eq!(f.read("a.txt").unwrap(), b"v1\n");
    assert_eq!(f.undo(None).await.unwrap().run_id, "run-1");
    assert_eq!(f.read("a.txt").unwrap(), b"v0\n");
    // Redo takes the one undone last first.
    assert_eq!(f.redo(None).await.unwrap().run_id, "run-1");
    assert_eq!(f.read("a.txt").unwrap(), b"v1\n");
}

// Unix only: the other live process is this one's parent, whose pid std
// gives on Unix alone.
#[cfg(unix)]
#[tokio::test]
async fn a_run_still_going_is_refused() {
    let f = fixture();
    f.write("a.txt", b"v0\n");
    let recorder = f.store.record("thread-1", "run-1");
    let path = f.path("a.txt");
    recorder.before_change(&path, &|| std::fs::read(&path).ok());
    f.write("a.txt", b"v1\n");
    recorder.after_change(&path, b"v1\n");
    // This process's run: the front end says it is active.
    let err = restore(&f.store, Direction::Undo, None, &f.workspace(), None, &|id| id == "run-1").await.unwrap_err();
    assert!(matches!(&err, CheckpointError::Running(m) if m.contains("run-1 is still going")), "{err:?}");
    assert_eq!(f.read("a.txt").unwrap(), b"v1\n");
    // Another live process's run (its pid alive): refused too.
    let (manifest_path, mut manifest) = f.store.list().0.pop().unwrap();
    manifest.running_pid = Some(std::os::unix::process::parent_id());
    manifest::save(&manifest_path, &manifest).unwrap();
    assert!(matches!(f.undo(None).await, Err(CheckpointError::Running(_))));
    // Once it ended, it can be undone.
    recorder.finish();
    assert_eq!(statuses(&f.undo(None).await.unwrap()), [("a.txt".into(), "restored")]);
}

/// Two editor windows on one workspace each run a server, and each
/// server's first run is `run-1`: an undo of `run-1` takes back this
/// process's run, also when another's of that name is newer; a process
/// with no run of that name (a restarted server) gets the newest.
#[tokio::test]
async fn a_run_id_names_this_process_s_run_before_another_process_s_run_of_that_name() {
    let f = fixture();
    f.write("a.txt", b"a0\n");
    f.write("b.txt", b"b0\n");
    f.run_writing("run-1", &[("a.txt", b"a1\n")]).await;
    f.run_writing("run-1", &[("b.txt", b"b1\n")]).await;
    let (all, _) = f.store.list();
    let (path, mut theirs) = all.into_iter().find(|(_, m)| m.files.iter().any(|e| e.path.ends_with("b.txt"))).unwrap();
    theirs.recorded_by = Some("1-1".into());
    manifest::save(&path, &theirs).unwrap();

    let report = f.undo(Some("run-1")).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "restored")]);
    assert_eq!((f.read("a.txt").unwrap(), f.read("b.txt").unwrap()), (b"a0\n".to_vec(), b"b1\n".to_vec()));
    // Ours is undone; the other process's is not ours to redo.
    let redo = f.redo(Some("run-1")).await.unwrap();
    assert_eq!(statuses(&redo), [("a.txt".into(), "restored")]);

    // Both another process's: the newest of the name.
    let (all, _) = f.store.list();
    for (path, mut manifest) in all {
        manifest.recorded_by = Some("2-2".into());
        manifest::save(&path, &manifest).unwrap();
    }
    assert_eq!(statuses(&f.undo(Some("run-1")).await.unwrap()), [("b.txt".into(), "restored")]);
}

#[tokio::test]
async fn a_change_since_the_run_in_other_lines_is_kept_and_in_the_same_lines_is_a_conflict() {
    let f = fixture();
    f.write("a.txt", b"1\n2\n3\n4\n5\n");
    f.write("b.txt", b"x\ny\n");
    f.run_writing("run-1", &[("a.txt", b"1\nTWO\n3\n4\n5\n"), ("b.txt", b"x\nY\n")]).await;
    // The user typed a line elsewhere in a.txt, and changed the run's line in b.txt.
    f.write("a.txt", b"1\nTWO\n3\n4\n5\nmine\n");
    f.write("b.txt", b"x\nYours\n");
    let report = f.undo(None).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "restored"), ("b.txt".into(), "conflict")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("merged with changes made since the run"));
    assert_eq!(f.read("a.txt").unwrap(), b"1\n2\n3\n4\n5\nmine\n");
    assert_eq!(f.read("b.txt").unwrap(), b"x\nYours\n", "the user's text stays");
    assert!(report.files[1].reason.as_deref().unwrap().contains("in the lines the run changed"));
}

#[tokio::test]
async fn files_deleted_or_renamed_since_are_conflicts_and_nothing_is_recreated() {
    let f = fixture();
    f.write("a.txt", b"old\n");
    f.write("b.txt", b"old b\n");
    f.run_writing("run-1", &[("a.txt", b"new\n"), ("b.txt", b"new b\n")]).await;
    std::fs::remove_file(f.path("a.txt")).unwrap();
    std::fs::rename(f.path("b.txt"), f.path("c.txt")).unwrap();
    let report = f.undo(None).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "conflict"), ("b.txt".into(), "conflict")]);
    assert!(report.files[0].reason.as_deref().unwrap().contains("deleted or renamed"));
    assert_eq!(f.read("a.txt"), None);
    assert_eq!(f.read("b.txt"), None);
    assert_eq!(f.read("c.txt").unwrap(), b"new b\n");
}

#[tokio::test]
async fn a_binary_file_and_a_10_mb_file_come_back_byte_for_byte() {
    let f = fixture();
    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    let big: Vec<u8> = b"0123456789abcdef\n".iter().copied().cycle().take(10 * 1024 * 1024).collect();
    f.write("image.bin", &binary);
    f.write("big.txt", &big);
    let mut big_after = big.clone();
    big_after[5_000_000] = b'#';
    f.run_writing("run-1", &[("image.bin", b"\0\x01changed"), ("big.txt", &big_after)]).await;
    let report = f.undo(None).await.unwrap();
    assert_eq!(statuses(&report), [("image.bin".into(), "restored"), ("big.txt".into(), "restored")]);
    assert_eq!(f.read("image.bin").unwrap(), binary);
    assert!(f.read("big.txt").unwrap() == big);
}

#[tokio::test]
async fn a_file_over_the_size_limit_is_reported_not_kept_and_left_alone() {
    let f = fixture_with(Limits { max_file_bytes: 1000, ..Limits::default() });
    f.write("big.txt", &[b'a'; 2000]);
    f.run_writing("run-1", &[("big.txt", b"small now\n")]).await;
    let report = f.undo(None).await.unwrap();
    assert_eq!(statuses(&report), [("big.txt".into(), "conflict")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("not recorded: 2000 bytes, over the checkpoint limit of 1000 bytes per file"));
    assert_eq!(f.read("big.txt").unwrap(), b"small now\n");
}

#[tokio::test]
async fn a_full_store_drops_the_oldest_checkpoints_then_reports_what_it_cannot_keep() {
    let f = fixture_with(Limits { max_store_bytes: 3000, ..Limits::default() });
    f.write("a.txt", &[b'a'; 1000]);
    f.run_writing("run-1", &[("a.txt", &[b'b'; 1000])]).await;
    f.write("c.txt", &[b'c'; 1000]);
    // Over the limit: run-1 is dropped to make room for run-2.
    f.run_writing("run-2", &[("c.txt", &[b'd'; 1000])]).await;
    let runs: Vec<String> = f.store.list().0.into_iter().map(|(_, m)| m.run_id).collect();
    assert_eq!(runs, ["run-2"]);
    assert!(f.store.blobs.held() <= 3000);
    // A content that does not fit even then is reported, never half kept.
    f.write("e.txt", &[b'e'; 2500]);
    f.run_writing("run-3", &[("e.txt", b"short\n")]).await;
    let report = f.undo(Some("run-3")).await.unwrap();
    assert_eq!(statuses(&report), [("e.txt".into(), "conflict")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("not recorded: the checkpoint store is full (3000 bytes)"));
    assert_eq!(f.read("e.txt").unwrap(), b"short\n");
}

#[tokio::test]
async fn a_damaged_or_missing_blob_is_a_conflict_and_the_file_is_untouched() {
    let f = fixture();
    f.write("a.txt", b"before a\n");
    f.write("b.txt", b"before b\n");
    f.run_writing("run-1", &[("a.txt", b"after a\n"), ("b.txt", b"after b\n")]).await;
    let blob = |text: &[u8]| {
        let id = blobs::blob_id(text);
        f.store.dir().join("blobs").join(&id[..2]).join(&id[2..])
    };
    std::fs::write(blob(b"before a\n"), b"tampered").unwrap();
    std::fs::remove_file(blob(b"before b\n")).unwrap();
    let report = f.undo(None).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "conflict"), ("b.txt".into(), "conflict")]);
    assert!(report.files[0].reason.as_deref().unwrap().contains("damaged"), "{:?}", report.files[0]);
    assert!(report.files[1].reason.as_deref().unwrap().contains("missing"), "{:?}", report.files[1]);
    assert_eq!(f.read("a.txt").unwrap(), b"after a\n");
    assert_eq!(f.read("b.txt").unwrap(), b"after b\n");
}

#[tokio::test]
async fn a_corrupt_manifest_is_reported_and_the_others_still_work() {
    let f = fixture();
    f.write("a.txt", b"v0\n");
    f.run_writing("run-1", &[("a.txt", b"v1\n")]).await;
    let broken = f.store.dir().join("thread-1").join("9999999999999-1-1.json");
    std::fs::write(&broken, b"{\"version\": 1, \"id\": ").unwrap();
    let (found, problems) = f.store.list();
    assert_eq!(found.len(), 1);
    assert_eq!(problems.len(), 1);
    assert!(problems[0].contains("is not a readable checkpoint"), "{problems:?}");
    assert_eq!(f.undo(None).await.unwrap().run_id, "run-1");
    let err = f.undo(Some("run-7")).await.unwrap_err();
    assert!(err.to_string().contains("is not a readable checkpoint"), "{err}");
}

#[tokio::test]
async fn a_shell_command_s_changes_are_recorded_and_only_changed_files_are_hashed_again() {
    let f = fixture();
    for i in 0..50 {
        f.write(&format!("f{i}.txt"), format!("file {i}\n").as_bytes());
    }
    std::fs::write(f.root.join(".gitignore"), "ignored/\n").unwrap();
    std::fs::create_dir_all(f.root.join("ignored")).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    recorder.before_command().await;
    f.write("f3.txt", b"changed by the command\n");
    f.write("made.txt", b"x\n");
    std::fs::remove_file(f.path("f7.txt")).unwrap();
    std::fs::write(f.root.join("ignored/build.o"), b"ignored").unwrap();
    recorder.after_command().await;
    recorder.finish();
    let mut changed = recorder.changed_files();
    changed.sort();
    assert_eq!(changed, [f.path("f3.txt"), f.path("f7.txt"), f.path("made.txt")]);
    // The next look reads only what moved since the last one.
    let stats = f.store.tree.look(&f.store.blobs);
    assert_eq!(stats.hashed, 0);
    f.write("f9.txt", b"touched\n");
    let stats = f.store.tree.look(&f.store.blobs);
    assert_eq!(stats.hashed, 1);

    let report = f.undo(None).await.unwrap();
    assert_eq!(report.count(FileStatus::Restored), 3, "{report:?}");
    assert_eq!(f.read("f3.txt").unwrap(), b"file 3\n");
    assert_eq!(f.read("f7.txt").unwrap(), b"file 7\n");
    assert_eq!(f.read("made.txt"), None);
    assert_eq!(f.read("f9.txt").unwrap(), b"touched\n", "not the run's change");
}

impl Fixture {
    /// `folders` folders of `files` files each: `dN/fM.txt` holding `file dN/fM`.
    fn tree(&self, folders: usize, files: usize) {
        for d in 0..folders {
            std::fs::create_dir_all(self.path(&format!("d{d}"))).unwrap();
            for i in 0..files {
                self.write(&format!("d{d}/f{i}.txt"), format!("file d{d}/f{i}\n").as_bytes());
            }
        }
    }
}

/// What the looks read between two counts: (full looks, folders, files).
fn read_between(before: &tree::LookCounts, after: &tree::LookCounts) -> (usize, usize, usize) {
    (after.full - before.full, after.folders - before.folders, after.files - before.files)
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_command_s_changes_are_read_from_the_watcher_s_events_without_walking_the_tree() {
    let f = fixture();
    f.tree(10, 20);
    std::fs::write(f.root.join(".gitignore"), "ignored/\n*.log\n").unwrap();
    std::fs::create_dir_all(f.root.join("ignored")).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    // The first look walks the tree and watches its folders (not the ignored one).
    recorder.before_command().await;
    recorder.after_command().await;
    let counts = f.store.looks();
    assert_eq!((counts.full, counts.watched, counts.no_watcher.as_deref()), (1, 11, None), "{counts:?}");

    // A command changes a file, makes one deep in new folders, deletes
    // one and writes two the ignore rules leave out.
    recorder.before_command().await;
    f.write("d3/f5.txt", b"changed by the command\n");
    std::fs::create_dir_all(f.path("new/deep")).unwrap();
    f.write("new/deep/x.txt", b"new\n");
    std::fs::remove_file(f.path("d7/f0.txt")).unwrap();
    f.write("ignored/build.o", b"ignored\n");
    f.write("d2/trace.log", b"ignored\n");
    let changes = recorder.after_command().await;
    let after = f.store.looks();
    let paths: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(paths, [f.path("d3/f5.txt"), f.path("d7/f0.txt"), f.path("new/deep/x.txt")]);
    // No walk of the tree's 201 files: the look after the command listed
    // the folders holding what changed (d2, d3, d7 and the root) and
    // walked the two new ones, and read the stat data of the two files.
    assert_eq!(read_between(&counts, &after), (0, 6, 2), "{after:?}");
    assert_eq!(after.watched, 13);

    // A renamed folder: its files are gone under the old name and new
    // under the new one, and its watch follows it.
    recorder.before_command().await;
    std::fs::rename(f.path("d9"), f.path("d9-renamed")).unwrap();
    let changes = recorder.after_command().await;
    assert_eq!(changes.len(), 40, "{changes:?}");
    assert_eq!(changes.iter().filter(|c| c.deleted).count(), 20);
    let counts = f.store.looks();
    recorder.before_command().await;
    f.write("d9-renamed/f3.txt", b"changed in the renamed folder\n");
    let changes = recorder.after_command().await;
    let paths: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(paths, [f.path("d9-renamed/f3.txt")]);
    assert_eq!(read_between(&counts, &f.store.looks()), (0, 1, 1));

    // Ignore rules changed in a folder: it is walked again (the root
    // listed, d4 listed and walked), as the whole walk would have applied
    // them (its new .tmp file is left out).
    let counts = f.store.looks();
    recorder.before_command().await;
    f.write("d4/.gitignore", b"*.tmp\n");
    f.write("d4/x.tmp", b"scratch\n");
    let changes = recorder.after_command().await;
    let paths: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(paths, [f.path("d4/.gitignore")]);
    assert_eq!(read_between(&counts, &f.store.looks()), (0, 3, 21));
    recorder.finish();

    let report = f.undo(None).await.unwrap();
    assert_eq!(report.count(FileStatus::Restored), 44, "{report:?}");
    assert_eq!(f.read("d3/f5.txt").unwrap(), b"file d3/f5\n");
    assert_eq!(f.read("d7/f0.txt").unwrap(), b"file d7/f0\n");
    assert_eq!(f.read("new/deep/x.txt"), None);
    assert_eq!(f.read("d9/f3.txt").unwrap(), b"file d9/f3\n");
    assert_eq!(f.read("d9-renamed/f3.txt"), None);
    assert_eq!(f.read("d4/.gitignore"), None);
}

#[test]
fn a_new_process_s_first_look_hashes_only_what_moved_since_the_index_was_saved() {
    let f = fixture();
    f.tree(3, 10);
    assert_eq!(f.store.tree.look(&f.store.blobs).hashed, 30);
    std::fs::remove_file(f.path("d0/f0.txt")).unwrap();
    f.write("d1/f1.txt", b"changed\n");
    assert_eq!(f.store.tree.look(&f.store.blobs).hashed, 1);
    // Saved as 30 lines, then the two that moved appended (one removal).
    let index = std::fs::read_to_string(f.store.dir().join("tree-index.jsonl")).unwrap();
    assert_eq!(index.lines().count(), 32);
    assert_eq!(index.lines().filter(|line| line.ends_with(",null]")).count(), 1, "{index}");
    // Changed while no Tandem ran: the next process walks the tree and
    // hashes that one file only.
    f.write("d2/f2.txt", b"changed meanwhile\n");
    let again = Checkpoints::at(f.store.dir().to_path_buf(), vec![f.root.clone()], Limits::default());
    let stats = again.tree.look(&again.blobs);
    assert!(stats.full.is_some());
    assert_eq!((stats.files, stats.hashed), (29, 1));
}

/// The index after a look fed by the watcher, against a walk of the tree.
fn assert_index_is_the_tree(f: &Fixture, step: &str) {
    let walked: std::collections::BTreeMap<PathBuf, tree::Stat> = tree::walk(std::slice::from_ref(&f.root)).into_iter().collect();
    let index = f.store.tree.files();
    let missing: Vec<&PathBuf> = walked.keys().filter(|path| !index.contains_key(*path)).collect();
    let extra: Vec<&PathBuf> = index.keys().filter(|path| !walked.contains_key(*path)).collect();
    let stale: Vec<&PathBuf> = walked.iter().filter(|(path, stat)| index.get(*path).is_some_and(|s| s != *stat)).map(|(path, _)| path).collect();
    assert!(missing.is_empty() && extra.is_empty() && stale.is_empty(), "{step}: missing {missing:?}, extra {extra:?}, stale {stale:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn after_renames_moves_in_and_out_and_files_turned_folders_the_watched_index_is_what_a_walk_finds() {
    let f = fixture();
    f.tree(8, 5);
    let outside = f._dir.path().join("outside");
    std::fs::create_dir_all(outside.join("brought/inner")).unwrap();
    std::fs::write(outside.join("brought/a.txt"), b"a\n").unwrap();
    std::fs::write(outside.join("brought/inner/b.txt"), b"b\n").unwrap();
    f.write("d6/.gitignore", b"sub/\n");
    std::fs::create_dir_all(f.path("d6/sub")).unwrap();
    f.write("d6/sub/hidden.txt", b"ignored until the rule goes\n");
    f.store.tree.look(&f.store.blobs);
    assert_index_is_the_tree(&f, "the first look");
    let first = f.store.looks();
    assert_eq!(first.full, 1, "{first:?}");

    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step> = vec![
        (
            "files renamed in their folder and into another",
            Box::new(|| {
                std::fs::rename(f.path("d0/f1.txt"), f.path("d0/g1.txt")).unwrap();
                std::fs::rename(f.path("d1/f1.txt"), f.path("d2/from-d1.txt")).unwrap();
            }),
        ),
        (
            "a folder moved out of the workspace, then written to there",
            Box::new(|| {
                std::fs::rename(f.path("d3"), outside.join("d3")).unwrap();
                std::fs::write(outside.join("d3/f0.txt"), b"changed outside\n").unwrap();
                std::fs::write(outside.join("d3/new.txt"), b"made outside\n").unwrap();
            }),
        ),
        (
            "a folder with a subfolder moved in, then a file in it changed",
            Box::new(|| {
                std::fs::rename(outside.join("brought"), f.path("d2/brought")).unwrap();
                f.write("d2/brought/inner/b.txt", b"changed once in\n");
            }),
        ),
        (
            "a file turned into a folder, a folder into a file",
            Box::new(|| {
                std::fs::remove_file(f.path("d4/f0.txt")).unwrap();
                std::fs::create_dir(f.path("d4/f0.txt")).unwrap();
                f.write("d4/f0.txt/in.txt", b"in\n");
                std::fs::remove_dir_all(f.path("d5")).unwrap();
                f.write("d5", b"a file now\n");
            }),
        ),
        (
            "a folder made, filled and removed, and a link made",
            Box::new(|| {
                std::fs::create_dir_all(f.path("d7/tmp/deep")).unwrap();
                f.write("d7/tmp/deep/x", b"x\n");
                std::fs::remove_dir_all(f.path("d7/tmp")).unwrap();
                crate::platform::symlink(f.path("d7/f1.txt"), f.path("d7/link.txt")).unwrap();
            }),
        ),
        (
            "a folder's ignore rule removed",
            Box::new(|| {
                std::fs::remove_file(f.path("d6/.gitignore")).unwrap();
            }),
        ),
        (
            "a file under the new folder changed and the moved-out folder brought back",
            Box::new(|| {
                f.write("d6/sub/hidden.txt", b"seen now\n");
                std::fs::rename(outside.join("d3"), f.path("d3")).unwrap();
            }),
        ),
    ];
    for (step, change) in steps {
        change();
        let stats = f.store.tree.look(&f.store.blobs);
        assert_eq!(stats.full, None, "{step}");
        assert_index_is_the_tree(&f, step);
    }
    let index = f.store.tree.files();
    assert!(index.contains_key(&f.path("d6/sub/hidden.txt")) && index.contains_key(&f.path("d3/new.txt")));
    assert!(!index.contains_key(&f.path("d7/link.txt")) && index.contains_key(&f.path("d5")));
    assert_eq!(f.store.looks().full, 1);
}

/// Everything logged (at debug and above) on this thread while `run` runs.
fn logged<T>(run: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Logs {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.locked().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    use crate::sync::MutexExt as _;
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber =
        tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).with_ansi(false).with_writer(move || writer.clone()).finish();
    let value = tracing::subscriber::with_default(subscriber, run);
    let text = String::from_utf8_lossy(&logs.0.locked()).into_owned();
    (value, text)
}

#[cfg(target_os = "linux")]
#[test]
fn an_overflowing_watcher_queue_makes_the_look_walk_the_whole_tree_and_says_so_in_the_log() {
    let f = fixture();
    f.tree(2, 5);
    std::fs::create_dir_all(f.path("flood")).unwrap();
    let (first, _) = f.store.tree.begin(&f.store.blobs);
    f.store.tree.end(first, &f.store.blobs);
    let watch = f.store.tree.watcher().expect("a file watcher");
    watch.pause_draining(true);
    let (look, stats) = f.store.tree.begin(&f.store.blobs);
    assert_eq!(stats.full, None);
    // More events than the kernel queues (each new file: created, closed
    // after writing), while nothing reads them.
    let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events").unwrap().trim().parse().unwrap();
    let made = if queued <= 1 << 17 {
        queued / 2 + 100
    } else {
        // A machine that queues more than it is sensible to make here: the
        // kernel's overflow event is fed as it would arrive.
        watch.inject(inotify::EventMask::Q_OVERFLOW);
        100
    };
    for i in 0..made {
        std::fs::File::create(f.path(&format!("flood/{i}"))).unwrap();
    }
    f.write("d1/f2.txt", b"changed while the queue was full\n");
    let ((changes, stats), log) = logged(|| f.store.tree.end(look, &f.store.blobs));
    watch.pause_draining(false);
    let why = stats.full.unwrap_or_default();
    assert!(why.contains("overflowed"), "{why}");
    assert!(log.contains("a full look at the workspace") && log.contains("overflowed"), "{log}");
    // Nothing was missed: every new file and the changed one.
    assert_eq!(changes.len(), made + 1);
    assert!(changes.iter().any(|c| c.path == f.path("d1/f2.txt") && c.before.is_some() && c.after.is_some()));
    // Then the watcher is trusted again.
    f.write("d0/f0.txt", b"changed\n");
    let stats = f.store.tree.look(&f.store.blobs);
    assert_eq!((stats.full, stats.files), (None, 1));
}

// Unix only: 4,000 files take minutes under Wine; the walk it tests is the same code on every system.
#[cfg(unix)]
#[tokio::test]
async fn a_command_that_changes_2000_of_4000_files_names_them_all_and_its_undo_restores_them() {
    let f = fixture();
    f.tree(40, 100);
    // The first look (the whole tree, hashed) is not the command's.
    f.store.tree.look(&f.store.blobs);
    let recorder = f.store.record("thread-1", "run-1");
    recorder.before_command().await;
    let mut expected = Vec::new();
    for d in 0..40 {
        for i in (1..99).step_by(2) {
            let name = format!("d{d}/f{i}.txt");
            let mut content = f.read(&name).unwrap();
            content.extend_from_slice(b"appended by the command\n");
            f.write(&name, &content);
            expected.push(f.path(&name));
        }
        f.write(&format!("d{d}/made.txt"), b"new\n");
        expected.push(f.path(&format!("d{d}/made.txt")));
    }
    let changes = recorder.after_command().await;
    recorder.finish();
    expected.sort();
    assert_eq!(expected.len(), 2000);
    let named: Vec<PathBuf> = changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(named, expected);
    let mut changed = recorder.changed_files();
    changed.sort();
    assert_eq!(changed, expected);

    let report = f.undo(None).await.unwrap();
    assert_eq!(report.count(FileStatus::Restored), 2000);
    for d in 0..40 {
        for i in 0..100 {
            assert_eq!(f.read(&format!("d{d}/f{i}.txt")).unwrap(), format!("file d{d}/f{i}\n").into_bytes());
        }
        assert_eq!(f.read(&format!("d{d}/made.txt")), None);
    }
}

/// An editor that refuses every edit, as a user rejecting the review does.
#[derive(Default)]
struct RefusingEditor(MemoryEditor);

#[async_trait::async_trait]
impl Editor for RefusingEditor {
    fn document(&self, path: &Path) -> Option<crate::workspace::DocumentSnapshot> {
        self.0.document(path)
    }
    fn open_documents(&self) -> Vec<PathBuf> {
        self.0.open_documents()
    }
    async fn apply(&self, _edit: crate::workspace::BufferEdit) -> crate::workspace::EditOutcome {
        crate::workspace::EditOutcome::Rejected("the user chose Reject".into())
    }
}

#[tokio::test]
async fn an_open_document_is_restored_through_the_editor_keeping_the_user_s_line() {
    let f = fixture();
    let editor = Arc::new(MemoryEditor::default());
    let path = f.path("open.txt");
    f.write("open.txt", b"a\nb\nc\n");
    editor.open(&path, "a\nb\nc\n", 1);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    let run_view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    let file = run_view.read(&path).unwrap();
    run_view.record_read(&file);
    let change = crate::workspace::FileChange {
        path: path.clone(),
        new_text: "a\nB\nc\n".into(),
        base: Some(file.stamp),
        label: "edit".into(),
        review: false,
        splices: None,
    };
    run_view.write(change).await.unwrap();
    recorder.finish();
    // The user types a line at the end of the buffer (unsaved).
    editor.open(&path, "a\nB\nc\nmine\n", 5);
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nb\nc\nmine\n");
    assert_eq!(f.read("open.txt").unwrap(), b"a\nb\nc\n", "the disk is not written for an open document");
}

/// Edits `path`, open in `workspace`'s editor, with splices of the text
/// each edit reads, as edit_file does: each a byte range and its new text.
async fn edit_with_splices(workspace: &Workspace, path: &Path, edits: &[(std::ops::Range<usize>, &str)]) {
    for (range, text) in edits {
        let file = workspace.read(path).unwrap();
        workspace.record_read(&file);
        let splices = vec![crate::workspace::Splice { range: range.clone(), text: (*text).into() }];
        let change = crate::workspace::FileChange {
            path: path.to_path_buf(),
            new_text: crate::workspace::spliced(&file.text, &splices),
            base: Some(file.stamp),
            label: "edit".into(),
            review: false,
            splices: Some(splices),
        };
        workspace.write(change).await.unwrap();
    }
}

/// A run that edits the open document `open.txt` twice with splices, as
/// edit_file does: "a\nb\nc\n" becomes "a\nB\nc\n", then "a\nB\nC!\n".
async fn run_editing_open_document(f: &Fixture) -> (Arc<MemoryEditor>, Workspace, PathBuf) {
    let editor = Arc::new(MemoryEditor::default());
    let path = f.path("open.txt");
    f.write("open.txt", b"a\nb\nc\n");
    editor.open(&path, "a\nb\nc\n", 1);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    let run_view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    edit_with_splices(&run_view, &path, &[(2..3, "B"), (4..5, "C!")]).await;
    recorder.finish();
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nB\nC!\n");
    let (all, _) = f.store.list();
    assert!(all.iter().all(|(_, manifest)| manifest.edits.len() == 1), "kept as edits: {all:?}");
    (editor, workspace, path)
}

/// The checkpoint of an open document's edits keeps the edits, not a copy
/// of the document after each (only the content before the run is
/// copied, once); the undo takes them back on the text the run left,
/// byte for byte, without the copy (removed here), and the redo makes
/// them again.
#[tokio::test]
async fn an_open_document_s_edits_are_kept_as_edits_and_undone_and_redone_exactly_from_them() {
    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    let (all, _) = f.store.list();
    let [(_, manifest)] = all.as_slice() else { panic!("one checkpoint: {all:?}") };
    assert_eq!(manifest.edits[0].steps.len(), 2, "{manifest:?}");
    assert_eq!(manifest.version, manifest::FORMAT_VERSION);
    assert_eq!(f.store.blobs.held(), "a\nb\nc\n".len() as u64, "one copy: the text before the run");
    assert_eq!(manifest.changed_files().count(), 1);

    std::fs::remove_dir_all(f.store.dir().join("blobs")).unwrap();
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(report.files[0].reason, None);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nb\nc\n");
    let report = restore(&f.store, Direction::Redo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nB\nC!\n");
}

/// What a past run changed, as text, for a replay (ACP's `session/load`):
/// a file written whole from its copies, a created file from nothing, an
/// open document's kept edits made again on its copy from before the
/// run; a binary file and an unknown checkpoint give nothing.
#[tokio::test]
async fn a_run_s_changes_are_given_back_as_text_from_copies_or_kept_edits() {
    let f = fixture();
    f.write("a.txt", b"one\n");
    f.write("bin", &[0xff, 0xfe]);
    f.run_writing("run-1", &[("a.txt", b"ONE\n"), ("new.txt", b"new\n"), ("bin", &[0xff, 0x00])]).await;
    let (all, _) = f.store.list();
    let id = all[0].1.id.clone();
    let texts = f.store.run_texts(&id);
    let shown: Vec<(String, Option<&str>, Option<&str>)> =
        texts.iter().map(|t| (t.path.file_name().unwrap().to_string_lossy().into_owned(), t.before.as_deref(), t.after.as_deref())).collect();
    assert_eq!(shown, [("a.txt".into(), Some("one\n"), Some("ONE\n")), ("new.txt".into(), None, Some("new\n"))]);
    assert_eq!(f.store.run_texts("no-such-checkpoint"), []);

    let f = fixture();
    let _ = run_editing_open_document(&f).await;
    let (all, _) = f.store.list();
    let texts = f.store.run_texts(&all[0].1.id);
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!((texts[0].before.as_deref(), texts[0].after.as_deref()), (Some("a\nb\nc\n"), Some("a\nB\nC!\n")));
}

/// The document changed since the run: the edits do not apply to it, and
/// the undo takes the copies as for any file (the run's text rebuilt from
/// the copy before it and the edits): the user's line kept, the run's
/// lines taken back; the user's typing in the run's line, a conflict.
#[tokio::test]
async fn an_open_document_changed_since_its_kept_edits_is_merged_from_the_copy() {
    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    editor.open(&path, "mine\na\nB\nC!\n", 7);
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("merged with changes made since the run"));
    assert_eq!(&*editor.document(&path).unwrap().text, "mine\na\nb\nc\n");

    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    editor.open(&path, "a\nB, mine\nC!\n", 7);
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "conflict")]);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nB, mine\nC!\n");
}

/// The user typed between two of the run's edits: the second is not made
/// on the text the first left, so the file is kept as copies from then on
/// (no edits), and the undo restores what was before the run's first
/// change, as for any file the run left so.
#[tokio::test]
async fn edits_not_made_on_the_text_the_last_one_left_are_kept_as_copies() {
    let f = fixture();
    let editor = Arc::new(MemoryEditor::default());
    let path = f.path("open.txt");
    editor.open(&path, "a\nb\nc\n", 1);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    let run_view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    for (range, text, typed) in [(2..3, "B", Some("a\nB\nc\nmine\n")), (0..1, "A", None)] {
        let file = run_view.read(&path).unwrap();
        run_view.record_read(&file);
        let splices = vec![crate::workspace::Splice { range, text: text.into() }];
        let change = crate::workspace::FileChange {
            path: path.clone(),
            new_text: crate::workspace::spliced(&file.text, &splices),
            base: Some(file.stamp),
            label: "edit".into(),
            review: false,
            splices: Some(splices),
        };
        run_view.write(change).await.unwrap();
        if let Some(typed) = typed {
            editor.open(&path, typed, 5);
        }
    }
    recorder.finish();
    let (all, _) = f.store.list();
    assert!(all[0].1.edits.is_empty(), "{:?}", all[0].1);
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nb\nc\n");
}

/// An unsaved buffer with CRLF line ends, edited twice by a run (an edit
/// across a line end, then one at the end of the text the first left):
/// kept as edits on one copy of the buffer, and the undo and the redo give
/// the buffer back byte for byte, line ends included; the disk (another
/// text, the buffer is unsaved) is never written.
#[tokio::test]
async fn an_unsaved_crlf_buffer_edited_twice_comes_back_byte_for_byte_and_the_disk_is_left_alone() {
    let f = fixture();
    let editor = Arc::new(MemoryEditor::default());
    let path = f.path("crlf.txt");
    f.write("crlf.txt", b"on disk\r\n");
    let buffer = "one\r\ntwo\r\nthree\r\n";
    editor.open(&path, buffer, 3);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    let run_view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    // "e\r\ntw" becomes "O\r\n\r\nTW"; then a line is added at the end.
    edit_with_splices(&run_view, &path, &[(2..7, "O\r\n\r\nTW"), (19..19, "four\r\n")]).await;
    recorder.finish();
    let after = "onO\r\n\r\nTWo\r\nthree\r\nfour\r\n";
    assert_eq!(&*editor.document(&path).unwrap().text, after);
    let (all, _) = f.store.list();
    let [(_, manifest)] = all.as_slice() else { panic!("one checkpoint: {all:?}") };
    assert_eq!(manifest.edits.len(), 1, "{manifest:?}");
    assert_eq!(manifest.edits[0].steps.len(), 2, "{manifest:?}");
    assert_eq!(f.store.blobs.held(), buffer.len() as u64, "one copy: the buffer before the run");

    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("crlf.txt".into(), "restored")]);
    assert_eq!(&*editor.document(&path).unwrap().text, buffer);
    let report = restore(&f.store, Direction::Redo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("crlf.txt".into(), "restored")]);
    assert_eq!(&*editor.document(&path).unwrap().text, after);
    assert_eq!(f.read("crlf.txt").unwrap(), b"on disk\r\n");
}

/// The run's edits were saved and the document closed; later the file
/// changed on disk. Holding what the run left, it is undone from the edits
/// alone (the copies removed here); changed in other lines, merged from
/// the copy; changed in the run's lines, a conflict, left as it is.
#[tokio::test]
async fn an_edited_document_closed_then_changed_on_disk_is_undone_from_its_edits_or_merged() {
    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    f.write("open.txt", b"a\nB\nC!\n");
    editor.close(&path);
    std::fs::remove_dir_all(f.store.dir().join("blobs")).unwrap();
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(report.files[0].reason, None);
    assert_eq!(f.read("open.txt").unwrap(), b"a\nb\nc\n");

    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    editor.close(&path);
    f.write("open.txt", b"mine\na\nB\nC!\n");
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "restored")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("merged with changes made since the run"));
    assert_eq!(f.read("open.txt").unwrap(), b"mine\na\nb\nc\n");

    let f = fixture();
    let (editor, workspace, path) = run_editing_open_document(&f).await;
    editor.close(&path);
    f.write("open.txt", b"a\nB\nC!?\n");
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "conflict")]);
    assert_eq!(f.read("open.txt").unwrap(), b"a\nB\nC!?\n");
}

/// A shell command that changes a file the run edited as a buffer ends its
/// kept edits: the command's result is what the run left. Here the run
/// saved its edits, then a command put the file back as it was before the
/// run: the run leaves no change, so no checkpoint.
#[tokio::test]
async fn a_command_that_changes_a_file_after_its_buffer_edits_ends_the_kept_edits() {
    let f = fixture();
    let editor = Arc::new(MemoryEditor::default());
    let path = f.path("open.txt");
    f.write("open.txt", b"a\nb\nc\n");
    editor.open(&path, "a\nb\nc\n", 1);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let recorder = f.store.record("thread-1", "run-1");
    let run_view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    edit_with_splices(&run_view, &path, &[(2..3, "B")]).await;
    assert_eq!(recorder.changed_files(), std::slice::from_ref(&path));
    f.write("open.txt", b"a\nB\nc\n");
    recorder.before_command().await;
    f.write("open.txt", b"a\nb\nc\n");
    recorder.after_command().await;
    editor.open(&path, "a\nb\nc\n", 4);
    assert_eq!(recorder.changed_files(), Vec::<PathBuf>::new());
    recorder.finish();
    let (all, _) = f.store.list();
    assert!(all.is_empty(), "{all:?}");
}

#[tokio::test]
async fn the_editor_refusing_the_restoring_edit_leaves_the_document_as_it_was() {
    let f = fixture();
    let editor = Arc::new(RefusingEditor::default());
    let path = f.path("open.txt");
    f.write("open.txt", b"a\nb\n");
    f.run_writing("run-1", &[("open.txt", b"a\nB\n")]).await;
    editor.0.open(&path, "a\nB\n", 3);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("open.txt".into(), "conflict")]);
    assert!(report.files[0].reason.as_deref().unwrap().contains("rejected"), "{:?}", report.files[0]);
    assert_eq!(&*editor.document(&path).unwrap().text, "a\nB\n");
}

/// An editor whose user takes only the first hunk of each edit in its
/// review, as the Neovim plugin's `a` then `r` does: the buffer gets that
/// hunk, and the answer says which landed.
#[derive(Default)]
struct FirstHunkEditor(MemoryEditor);

#[async_trait::async_trait]
impl Editor for FirstHunkEditor {
    fn document(&self, path: &Path) -> Option<crate::workspace::DocumentSnapshot> {
        self.0.document(path)
    }
    fn open_documents(&self) -> Vec<PathBuf> {
        self.0.open_documents()
    }
    async fn apply(&self, edit: crate::workspace::BufferEdit) -> crate::workspace::EditOutcome {
        let hunks = crate::workspace::replacements(&edit.old_text, &edit.new_text);
        let landed: Vec<bool> = (0..hunks.len()).map(|i| i == 0).collect();
        let text = crate::workspace::spliced(&edit.old_text, &hunks[..1]);
        let version = edit.version + 1;
        self.0.open(&edit.path, &text, version);
        crate::workspace::EditOutcome::Partial(crate::workspace::place_hunks(&edit.old_text, &hunks, &landed, &text, version))
    }
}

/// Issue 53: an undo the user took in part in the editor's review (a run
/// that changed lines 1 and 4; the first hunk taken, the second declined)
/// leaves whole lines, is reported restored in words for the user (which
/// lines were kept), and not in the model's.
#[tokio::test]
async fn a_restore_taken_in_part_in_the_review_is_said_in_words_for_the_user() {
    let f = fixture();
    f.write("a.txt", b"a\nb\nc\nd\n");
    f.run_writing("run-1", &[("a.txt", b"A\nb\nc\nD\n")]).await;
    let editor = Arc::new(FirstHunkEditor::default());
    editor.0.open(&f.path("a.txt"), "A\nb\nc\nD\n", 3);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let report = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "restored")]);
    assert_eq!(report.files[0].reason.as_deref(), Some("undid 1 of its 2 changes; kept line 4 as it was (declined in the review)"));
    assert_eq!(&*editor.document(&f.path("a.txt")).unwrap().text, "a\nb\nc\nD\n");
}

/// A policy that declines every edit.
struct Declines;

#[async_trait::async_trait]
impl PermissionGate for Declines {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        assert!(matches!(request.kind, crate::tools::ToolKind::Edit { .. }));
        assert!(request.preview.as_deref().unwrap().contains("-B\n+b"), "{:?}", request.preview);
        PermissionDecision::Declined("the user chose Reject".into())
    }
}

/// An open document's restoring edit is reviewed like any edit: declined,
/// it changes nothing. A closed file's is the user's own command: written
/// without asking (`Declines` would refuse it).
#[tokio::test]
async fn a_restoring_edit_to_an_open_document_is_reviewed_and_a_declined_one_changes_nothing() {
    let f = fixture();
    f.write("a.txt", b"a\nb\n");
    f.write("closed.txt", b"a\nb\n");
    f.run_writing("run-1", &[("a.txt", b"a\nB\n"), ("closed.txt", b"a\nB\n")]).await;
    let editor = Arc::new(MemoryEditor::default());
    editor.open(&f.path("a.txt"), "a\nB\n", 3);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let report = restore(&f.store, Direction::Undo, None, &workspace, Some(&Declines), &|_| false).await.unwrap();
    assert_eq!(statuses(&report), [("a.txt".into(), "conflict"), ("closed.txt".into(), "restored")]);
    assert!(report.files[0].reason.as_deref().unwrap().contains("declined"));
    assert_eq!(&*editor.document(&f.path("a.txt")).unwrap().text, "a\nB\n");
    assert_eq!(f.read("closed.txt").unwrap(), b"a\nb\n");
}

/// An undo none of whose files could be restored (the one restoring edit
/// declined) leaves the run as it was: the next undo takes the same run,
/// and, answered, restores it.
#[tokio::test]
async fn an_undo_that_restored_nothing_leaves_the_run_to_undo_again() {
    let f = fixture();
    f.write("a.txt", b"a\nb\n");
    f.run_writing("run-1", &[("a.txt", b"a\nB\n")]).await;
    let editor = Arc::new(MemoryEditor::default());
    editor.open(&f.path("a.txt"), "a\nB\n", 3);
    let workspace = Workspace::with_roots(vec![f.root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let declined = restore(&f.store, Direction::Undo, None, &workspace, Some(&Declines), &|_| false).await.unwrap();
    assert_eq!(statuses(&declined), [("a.txt".into(), "conflict")]);
    let again = restore(&f.store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!((again.run_id.as_str(), statuses(&again)), ("run-1", vec![("a.txt".into(), "restored")]));
    assert_eq!(&*editor.document(&f.path("a.txt")).unwrap().text, "a\nb\n");
}

#[tokio::test]
async fn forgetting_the_thread_removes_its_checkpoints_and_garbage_collection_its_blobs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let threads = crate::thread::ThreadStore::at(&dir.path().join("threads"), &root);
    let mut thread = crate::thread::Thread::new(crate::thread::new_thread_id(), root.clone());
    threads.create(&mut thread).unwrap();
    let store = Checkpoints::beside(&threads, std::slice::from_ref(&root));
    std::fs::write(root.join("a.txt"), b"before\n").unwrap();
    let recorder = store.record(&thread.id, "run-1");
    let path = root.join("a.txt");
    recorder.before_change(&path, &|| std::fs::read(&path).ok());
    recorder.after_change(&path, b"after\n");
    recorder.finish();
    assert_eq!(store.list().0.len(), 1);
    assert!(store.blobs.held() > 0);
    assert!(threads.forget(&thread.id).unwrap());
    assert!(store.list().0.is_empty());
    assert_eq!(store.collect_garbage(), 13);
    assert_eq!(store.blobs.held(), 0);
}
