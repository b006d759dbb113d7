//! Worktree runs against a real git repository in a temporary folder: the
//! start state, the merge's hunks, and the user's repository left as it was.
#![allow(clippy::unwrap_used)]

use super::*;
use std::process::Command;

fn sh(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with two committed files, a hook that would leave a mark,
/// one uncommitted change and one untracked file.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sh(root, &["init", "-q", "-b", "main"]);
    sh(root, &["config", "user.email", "t@example.com"]);
    sh(root, &["config", "user.name", "t"]);
    std::fs::write(root.join("a.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n").unwrap();
    std::fs::write(root.join("b.txt"), "b1\nb2\n").unwrap();
    std::fs::write(root.join("gone.txt"), "old\n").unwrap();
    sh(root, &["add", "."]);
    sh(root, &["commit", "-q", "-m", "init"]);
    let hook = root.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}/HOOK_RAN\n", root.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(root.join("b.txt"), "b1\nb2 uncommitted\n").unwrap();
    std::fs::write(root.join("new.txt"), "untracked\n").unwrap();
    dir
}

/// What must never change in the user's repository.
fn git_state(root: &Path) -> (String, String, String, Vec<u8>) {
    (
        sh(root, &["status", "--porcelain"]),
        sh(root, &["branch", "-a", "-v"]),
        sh(root, &["log", "--all", "--oneline"]),
        std::fs::read(root.join(".git/index")).unwrap(),
    )
}

#[tokio::test]
async fn start_state_has_uncommitted_and_unsaved_text() {
    let repo = repo();
    let root = repo.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let before = git_state(&root);
    let buffers = vec![(root.join("a.txt"), "1\n2\n3\n4 unsaved\n5\n6\n7\n8\n".to_string())];
    let wt = Worktree::create(&root, state.path(), "r1", &buffers).unwrap();
    let p = wt.path();
    assert!(!p.starts_with(&root));
    assert_eq!(std::fs::read_to_string(p.join("a.txt")).unwrap(), "1\n2\n3\n4 unsaved\n5\n6\n7\n8\n");
    assert_eq!(std::fs::read_to_string(p.join("b.txt")).unwrap(), "b1\nb2 uncommitted\n");
    assert_eq!(std::fs::read_to_string(p.join("new.txt")).unwrap(), "untracked\n");
    assert!(!root.join("HOOK_RAN").exists(), "the user's post-checkout hook ran");
    assert_eq!(git_state(&root), before);
    // Found again from its record, as after a crash.
    let found = leftovers(state.path());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].record, wt.record);
    wt.remove().unwrap();
    assert!(!wt.path().exists());
    assert!(leftovers(state.path()).is_empty());
    assert!(!sh(&root, &["worktree", "list"]).contains("r1"));
    assert_eq!(git_state(&root), before);
}

#[tokio::test]
async fn merge_lands_far_hunks_and_keeps_the_users_lines() {
    let repo = repo();
    let root = repo.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let wt = Worktree::create(&root, state.path(), "r2", &[]).unwrap();
    let p = wt.path().to_path_buf();
    // The run: two hunks in a.txt, a new file, a deletion, a rename.
    std::fs::write(p.join("a.txt"), "1 run\n2\n3\n4\n5\n6\n7\n8 run\n").unwrap();
    std::fs::write(p.join("c.txt"), "created\n").unwrap();
    std::fs::remove_file(p.join("gone.txt")).unwrap();
    std::fs::rename(p.join("b.txt"), p.join("b2.txt")).unwrap();
    // The user meanwhile: the first line of a.txt.
    std::fs::write(root.join("a.txt"), "1 user\n2\n3\n4\n5\n6\n7\n8\n").unwrap();
    let before = git_state(&root);
    let ws = Workspace::new(&root).unwrap();
    let report = wt.merge_into(&ws, "worktree r2").await.unwrap();
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "1 user\n2\n3\n4\n5\n6\n7\n8 run\n");
    assert_eq!(std::fs::read_to_string(root.join("c.txt")).unwrap(), "created\n");
    assert!(!root.join("gone.txt").exists());
    assert_eq!(std::fs::read_to_string(root.join("b2.txt")).unwrap(), "b1\nb2 uncommitted\n");
    assert!(!root.join("b.txt").exists());
    let a: Vec<_> = report.hunks.iter().filter(|h| h.path == "a.txt").collect();
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].outcome, Outcome::Conflict { yours: "1 user\n".into(), run: "1 run\n".into() });
    assert_eq!((a[1].line, &a[1].outcome), (8, &Outcome::Landed));
    let text = report.text();
    assert!(text.starts_with("Worktree merge: 4 hunk(s) landed, 1 conflicted, 0 declined\n"), "{text}");
    assert!(text.contains("- a.txt:1 (1 line(s)): CONFLICT"), "{text}");
    // The merge wrote the working files only: the index and history as they were.
    let after = git_state(&root);
    assert_eq!((after.1, after.2, after.3), (before.1, before.2, before.3));
    wt.remove().unwrap();
}

#[test]
fn outside_git_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let err = Worktree::create(dir.path(), state.path(), "r3", &[]).unwrap_err().to_string();
    assert!(err.contains("not in a git repository"), "{err}");
    assert!(std::fs::read_dir(state.path()).unwrap().next().is_none());
}

#[test]
fn bad_ids_are_refused() {
    let repo = repo();
    let state = tempfile::tempdir().unwrap();
    assert!(Worktree::create(repo.path(), state.path(), "../x", &[]).is_err());
}

#[tokio::test]
async fn open_buffers_merge_around_typing_and_one_undo_restores() {
    use crate::checkpoint::{restore, Checkpoints, Direction, Limits};
    use crate::workspace::{Editor, MemoryEditor};
    use std::sync::Arc;
    let repo = repo();
    let root = repo.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let a = root.join("a.txt");
    let editor = Arc::new(MemoryEditor::default());
    // Unsaved text in the buffer when the run starts.
    editor.open(&a, "1\n2\n3\n4\n5\n6\n7\n8 unsaved\n", 3);
    let wt = Worktree::create(&root, state.path(), "r4", &[(a.clone(), "1\n2\n3\n4\n5\n6\n7\n8 unsaved\n".into())]).unwrap();
    assert_eq!(std::fs::read_to_string(wt.path().join("a.txt")).unwrap(), "1\n2\n3\n4\n5\n6\n7\n8 unsaved\n");
    std::fs::write(wt.path().join("a.txt"), "1\n2 run\n3\n4\n5 run\n6\n7\n8 unsaved\n").unwrap();
    // The user types during the run: line 5 and a new first line.
    let typed = "0 typed\n1\n2\n3\n4\n5 typed\n6\n7\n8 unsaved\n";
    editor.open(&a, typed, 9);
    let workspace = Workspace::with_roots(vec![root.clone()], Some(editor.clone() as Arc<dyn Editor>)).unwrap();
    let store = Arc::new(Checkpoints::at(state.path().join("checkpoints"), vec![root.clone()], Limits::default()));
    let recorder = store.record("worktree-r4", "worktree-r4");
    let view = workspace.with_recorder(Checkpoints::recorder_for(&recorder));
    let report = wt.merge_into(&view, "worktree r4").await.unwrap();
    recorder.finish();
    let merged = "0 typed\n1\n2 run\n3\n4\n5 typed\n6\n7\n8 unsaved\n";
    assert_eq!(&*editor.document(&a).unwrap().text, merged, "every keystroke kept, the far hunk landed");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "1\n2\n3\n4\n5\n6\n7\n8\n", "an open document is merged in the buffer, not on disk");
    let outcomes: Vec<_> = report.hunks.iter().map(|h| (h.line, h.outcome.clone())).collect();
    assert_eq!(outcomes, vec![(2, Outcome::Landed), (5, Outcome::Conflict { yours: "5 typed\n".into(), run: "5 run\n".into() })]);
    let undone = restore(&store, Direction::Undo, None, &workspace, None, &|_| false).await.unwrap();
    assert_eq!(undone.files.len(), 1);
    assert_eq!(&*editor.document(&a).unwrap().text, typed, "one undo takes the merge back");
    wt.remove().unwrap();
}
