//! File-tree helpers for the tool tests: copy a fixture folder into a temp
//! workspace, snapshot a tree as path → bytes, and show how two trees differ.
//!
//! Included with `#[path = "common/files.rs"] mod files;` so it does not
//! clash with other helpers' `tests/common/mod.rs`.
#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

/// A tree as relative path (with `/`) → file bytes.
pub type Tree = BTreeMap<String, Vec<u8>>;

/// Copy every file under `from` into `to`, creating folders as needed.
pub fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in read_tree(from) {
        write_file(to, &rel, &bytes);
    }
}

/// Write `bytes` to `root/rel`, creating parent folders.
pub fn write_file(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

/// Every file under `root` (an absent folder is an empty tree). Tandem's
/// own temp files (`.tandem-*.tmp`) are included on purpose: a leftover one
/// is a bug.
pub fn read_tree(root: &Path) -> Tree {
    let mut tree = Tree::new();
    if root.is_dir() {
        collect(root, root, &mut tree);
    }
    tree
}

fn collect(root: &Path, dir: &Path, tree: &mut Tree) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, tree);
        } else {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            tree.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

/// Replace the folder `root` with exactly `tree`.
pub fn write_tree(root: &Path, tree: &Tree) {
    if root.exists() {
        std::fs::remove_dir_all(root).unwrap();
    }
    std::fs::create_dir_all(root).unwrap();
    for (rel, bytes) in tree {
        write_file(root, rel, bytes);
    }
}

/// A readable account of how `actual` differs from `expected`; empty when
/// they are equal. Text is shown with `{:?}` so `\r` is visible.
pub fn tree_diff(expected: &Tree, actual: &Tree) -> String {
    let mut out = String::new();
    for (rel, bytes) in expected {
        match actual.get(rel) {
            None => out.push_str(&format!("missing file {rel}\n")),
            Some(got) if got != bytes => out.push_str(&format!(
                "{rel} differs:\n  expected {:?}\n  actual   {:?}\n",
                String::from_utf8_lossy(bytes),
                String::from_utf8_lossy(got)
            )),
            Some(_) => {}
        }
    }
    for rel in actual.keys().filter(|rel| !expected.contains_key(*rel)) {
        out.push_str(&format!("unexpected file {rel}\n"));
    }
    out
}

/// Every file below `dir`, folders walked (an absent folder: none).
pub fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
