//! Git plumbing for worktree runs: every command runs with the user's hooks
//! off (`core.hooksPath=/dev/null`), without optional locks (a `git status`
//! must not refresh the user's index), and, where a tree of the working
//! files is taken, with an index of Tandem's own (`GIT_INDEX_FILE`), so the
//! user's index, branches and history are never written.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git command in `dir`, hooks off, no optional locks, no prompts.
pub(crate) fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    cmd
}

/// Run `cmd`, its stdout on success, a message naming `what` otherwise.
pub(crate) fn output(mut cmd: Command, what: &str) -> anyhow::Result<Vec<u8>> {
    let out = cmd.output().map_err(|e| anyhow::anyhow!("{what}: could not run git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        anyhow::bail!("{what}: {}", err.trim());
    }
    Ok(out.stdout)
}

/// The top folder of the repository `dir` is in, or why there is none.
pub(crate) fn toplevel(dir: &Path) -> anyhow::Result<PathBuf> {
    let mut cmd = git(dir);
    cmd.args(["rev-parse", "--show-toplevel"]);
    let out = output(cmd, "not a git repository")
        .map_err(|_| anyhow::anyhow!("{} is not in a git repository: a run in a worktree needs git (run without --worktree instead)", dir.display()))?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

/// One path `git status` reports as differing from `HEAD` (modified,
/// added, deleted, untracked, either side of a rename).
pub(crate) fn dirty_paths(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut cmd = git(root);
    cmd.args(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"]);
    let out = output(cmd, "git status")?;
    let mut paths = Vec::new();
    for entry in out.split(|b| *b == 0).filter(|e| e.len() > 3) {
        paths.push(String::from_utf8_lossy(&entry[3..]).into_owned());
    }
    Ok(paths)
}

/// The tree of the working files of the worktree at `dir` as they are now
/// (untracked files included, ignored ones not), written with a copy of the
/// worktree's own index so nothing of the user's is touched. The copy keeps
/// the checkout's stat data: only files that changed are hashed.
pub(crate) fn snapshot_tree(dir: &Path, scratch: &Path) -> anyhow::Result<String> {
    let mut cmd = git(dir);
    cmd.args(["rev-parse", "--path-format=absolute", "--git-path", "index"]);
    let index = PathBuf::from(String::from_utf8_lossy(&output(cmd, "git rev-parse")?).trim());
    // Kept between the start's snapshot and the end's: its stat data was
    // written after the checkout settled, so the end hashes only what the
    // run changed (the checkout's own index is racy: every file was
    // written in the same second as it, and git hashes them all again).
    let temp = scratch.join("snapshot.index");
    if !temp.exists() && index.exists() {
        std::fs::copy(&index, &temp).map_err(|e| anyhow::anyhow!("copying the worktree's index: {e}"))?;
    }
    let mut add = git(dir);
    add.env("GIT_INDEX_FILE", &temp).args(["add", "-A", "--", "."]);
    output(add, "git add (worktree snapshot)")?;
    let mut write = git(dir);
    write.env("GIT_INDEX_FILE", &temp).arg("write-tree");
    Ok(String::from_utf8_lossy(&output(write, "git write-tree")?).trim().to_string())
}

/// What changed between two trees: (status letter, old path, new path).
pub(crate) fn diff_trees(dir: &Path, from: &str, to: &str) -> anyhow::Result<Vec<(char, String, String)>> {
    let mut cmd = git(dir);
    cmd.args(["diff-tree", "-r", "-z", "-M", "--name-status", "--no-commit-id", from, to]);
    let out = output(cmd, "git diff-tree")?;
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty()).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut changes = Vec::new();
    while let Some(status) = fields.next() {
        let letter = status.chars().next().unwrap_or('M');
        let Some(first) = fields.next() else { break };
        if letter == 'R' || letter == 'C' {
            let Some(second) = fields.next() else { break };
            changes.push((letter, first, second));
        } else {
            changes.push((letter, first.clone(), first));
        }
    }
    Ok(changes)
}

/// A file's bytes in a tree, `None` when the tree has no such file.
pub(crate) fn blob(dir: &Path, tree: &str, path: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let mut cmd = git(dir);
    cmd.args(["cat-file", "blob", &format!("{tree}:{path}")]);
    let out = cmd.output().map_err(|e| anyhow::anyhow!("git cat-file: {e}"))?;
    Ok(out.status.success().then_some(out.stdout))
}
