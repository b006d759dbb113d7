//! `tandem ask --worktree` and `tandem runs` (the real binary, the scripted
//! model, a real git repository): the run works in a worktree outside the
//! folder, its change is merged back when it ends, `tandem undo` takes the
//! merge back, and the user's index, branches and history stay as they were.

#![allow(clippy::unwrap_used)]

use crate::common::script;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

struct Repo {
    _temp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    cache: PathBuf,
    script: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> Repo {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.email", "t@example.com"]);
    git(&root, &["config", "user.name", "t"]);
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "init"]);
    // Uncommitted: the run starts from it.
    std::fs::write(root.join("a.txt"), "one\ntwo\nthree\nfour uncommitted\n").unwrap();
    Repo { data: temp.path().join("data"), cache: temp.path().join("cache"), script: temp.path().join("script.json"), root, _temp: temp }
}

impl Repo {
    fn tandem(&self, args: &[&str]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).stdin(Stdio::null());
        for var in crate::common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command
            .env("XDG_DATA_HOME", &self.data)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &self.script);
        command.args(args).output().unwrap()
    }
    fn state(&self) -> (String, String, String, Vec<u8>) {
        (
            git(&self.root, &["status", "--porcelain"]),
            git(&self.root, &["branch", "-a", "-v"]),
            git(&self.root, &["log", "--all", "--oneline"]),
            std::fs::read(self.root.join(".git/index")).unwrap(),
        )
    }
}

fn text(output: &Output) -> (String, String) {
    (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn script_edit(r: &Repo) {
    let turns = json!({"turns": [
        script::turn(vec![script::read("a.txt")]),
        script::turn(vec![script::edit("a.txt", "two", "TWO")]),
        script::done(),
    ]});
    std::fs::write(&r.script, turns.to_string()).unwrap();
}

#[test]
fn ask_in_a_worktree_merges_back_and_undo_takes_the_merge_back() {
    let r = repo();
    script_edit(&r);
    let before = r.state();
    let output = r.tandem(&["ask", "--worktree", "--permission-mode", "bypassPermissions", "change a"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("tandem: running in worktree run-"), "{stderr}");
    assert!(stdout.contains("Worktree merge: 1 hunk(s) landed, 0 conflicted, 0 declined"), "{stdout}");
    assert!(stdout.contains("- a.txt:2 (1 line(s)): landed"), "{stdout}");
    assert_eq!(std::fs::read_to_string(r.root.join("a.txt")).unwrap(), "one\nTWO\nthree\nfour uncommitted\n");
    // Nothing of the user's repository but the working file changed.
    let after = r.state();
    assert_eq!((&after.1, &after.2, &after.3), (&before.1, &before.2, &before.3));
    assert_eq!(after.0, before.0);
    assert!(!git(&r.root, &["worktree", "list"]).contains("run-"), "the worktree is removed after the merge");
    let listed = r.tandem(&["runs"]);
    assert_eq!(text(&listed).0.trim(), "No worktree runs.");
    // One undo takes the merge back.
    let undo = r.tandem(&["undo"]);
    assert!(undo.status.success(), "{:?}", text(&undo));
    assert_eq!(std::fs::read_to_string(r.root.join("a.txt")).unwrap(), "one\ntwo\nthree\nfour uncommitted\n");
}

#[test]
fn a_kept_worktree_is_listed_and_discarded() {
    let r = repo();
    script_edit(&r);
    let output = r.tandem(&["ask", "--worktree", "--keep-worktree", "--permission-mode", "bypassPermissions", "change a"]);
    assert!(output.status.success(), "{:?}", text(&output));
    let listed = text(&r.tandem(&["runs", "list"])).0;
    let id = listed.split_whitespace().next().unwrap().to_string();
    assert!(id.starts_with("run-"), "{listed}");
    assert!(git(&r.root, &["worktree", "list"]).contains(&id));
    let discard = r.tandem(&["runs", "discard", &id]);
    assert!(discard.status.success(), "{:?}", text(&discard));
    assert_eq!(text(&r.tandem(&["runs"])).0.trim(), "No worktree runs.");
    assert!(!git(&r.root, &["worktree", "list"]).contains(&id));
    let unknown = r.tandem(&["runs", "discard", "run-nope"]);
    assert!(!unknown.status.success());
    assert!(text(&unknown).1.contains("no worktree run run-nope"), "{:?}", text(&unknown));
}

#[test]
fn ask_in_a_worktree_outside_git_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .current_dir(temp.path())
        .env("XDG_CACHE_HOME", temp.path().join("cache"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", temp.path().join("none.json"))
        .args(["ask", "--worktree", "hi"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(text(&output).1.contains("is not in a git repository: a run in a worktree needs git"), "{:?}", text(&output));
}
