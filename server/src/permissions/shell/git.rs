//! What git prints from its object database: a file's old versions live
//! in `.git/objects`, where no mask of the file reaches them. `git show`,
//! `git log -p`, `git grep`, `git cat-file`, `git blame`, `git diff`
//! between commits and their kin print them. With a read-deny rule, such a
//! command is asked (refused where nobody can be asked) unless it names
//! the files it prints, each an existing file the rule does not cover.

use std::path::{Path, PathBuf};

use super::SimpleCommand;

/// Git's options before the command that take a value.
const VALUE_OPTIONS: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"];

/// Commands that always print file contents from the objects.
const ALWAYS: &[&str] = &[
    "show", "cat-file", "grep", "blame", "annotate", "archive", "format-patch", "fast-export", "bundle", "range-diff", "diff",
    "diff-tree", "diff-index", "diff-files", "difftool", "request-pull", "send-email", "stash", "checkout-index", "unpack-file",
];

/// Commands that print contents with one of [`PATCH_FLAGS`].
const WITH_PATCH: &[&str] = &["log", "whatchanged", "reflog", "shortlog", "rev-list"];

const PATCH_FLAGS: &[&str] = &["-p", "-u", "--patch", "--patch-with-stat", "--patch-with-raw", "--cc", "-c", "-m", "--full-diff"];
const PATCH_PREFIXES: &[&str] = &["-U", "--unified", "-L", "--word-diff", "--color-words", "--remerge-diff", "--diff-merges"];

/// A command that may print file contents from git's objects: how it is
/// shown, and the paths it names (after `--`, and `REV:PATH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRead {
    pub shown: String,
    pub paths: Vec<String>,
}

/// `Some` when `command` is git printing file contents from its objects.
pub fn object_read(command: &SimpleCommand) -> Option<ObjectRead> {
    let words = &command.words;
    if words.first().map(|w| super::base_name(w)) != Some("git") {
        return None;
    }
    let mut index = 1;
    while index < words.len() && words[index].starts_with('-') {
        let word = &words[index];
        index += 1;
        if VALUE_OPTIONS.contains(&word.as_str()) {
            index += 1;
        }
    }
    let sub = words.get(index)?.as_str();
    let args = &words[index + 1..];
    let prints = ALWAYS.contains(&sub)
        || (WITH_PATCH.contains(&sub)
            && args.iter().any(|a| PATCH_FLAGS.contains(&a.as_str()) || PATCH_PREFIXES.iter().any(|p| a.starts_with(p))));
    // `git stash list` lists; `git stash show` prints a diff.
    let prints = prints && !(sub == "stash" && args.first().is_some_and(|a| a != "show"));
    if !prints {
        return None;
    }
    let mut paths: Vec<String> = Vec::new();
    if let Some(dashes) = args.iter().position(|a| a == "--") {
        paths.extend(args[dashes + 1..].iter().cloned());
    }
    for arg in args.iter().filter(|a| !a.starts_with('-')) {
        if let Some((_, path)) = arg.split_once(':') {
            paths.push(path.to_string());
        }
    }
    Some(ObjectRead { shown: words.join(" "), paths })
}

/// The paths an object read names, resolved from the repository root
/// (`REV:PATH` is relative to it; `./` would be the command's folder).
pub fn resolved_paths(read: &ObjectRead, root: &Path) -> Vec<PathBuf> {
    read.paths.iter().map(|p| root.join(p.trim_start_matches("./"))).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn what_prints_file_contents_from_the_objects() {
        let lines: Vec<String> = [
            "git show HEAD", "git show HEAD:secret.txt", "git log -p", "git log --oneline", "git log -U3 -- src/a.rs", "git grep TOKEN",
            "git cat-file -p HEAD:x", "git -C . --no-pager log --patch", "git stash list", "git stash show -p", "git status",
            "git diff HEAD~3 -- a b", "git blame notes.txt", "git branch -a",
        ]
        .iter()
        .map(|line| {
            let command = SimpleCommand { words: line.split(' ').map(String::from).collect(), dynamic_name: false, problem: None };
            format!("{line} => {:?}", object_read(&command).map(|r| r.paths))
        })
        .collect();
        expect_test::expect![[r#"
            git show HEAD => Some([])
            git show HEAD:secret.txt => Some(["secret.txt"])
            git log -p => Some([])
            git log --oneline => None
            git log -U3 -- src/a.rs => Some(["src/a.rs"])
            git grep TOKEN => Some([])
            git cat-file -p HEAD:x => Some(["x"])
            git -C . --no-pager log --patch => Some([])
            git stash list => None
            git stash show -p => Some([])
            git status => None
            git diff HEAD~3 -- a b => Some(["a", "b"])
            git blame notes.txt => Some([])
            git branch -a => None"#]].assert_eq(&lines.join("\n"));
    }
}
