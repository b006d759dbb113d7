//! The paths read-deny rules cover, for the sandbox to mask: a shell
//! command must not read what `read_file` may not.
//!
//! A rule's glob is made absolute as the rules read it
//! ([`Places`]), then a literal path is taken as it is and a glob is
//! matched against the files under its literal part (hidden files
//! included, at most [`MAX_ENTRIES`] entries per rule).

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

use super::rules::{Family, Pattern, Places, Rule};

/// Walking stops after this many entries per rule (a rule such as
/// `read_file(**/*.pem)` over a huge tree).
pub const MAX_ENTRIES: usize = 100_000;

/// The existing paths these deny rules cover for reads.
pub fn read_denied_paths(deny: &[Rule], places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for rule in deny.iter().filter(|r| r.family() == Family::Read) {
        let Some(Pattern::Path(pattern)) = &rule.pattern else { continue };
        let Some(glob) = places.absolute_glob(pattern) else { continue };
        expand(&glob, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn is_meta(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '{')
}

fn expand(glob: &str, out: &mut Vec<PathBuf>) {
    if !glob.contains(is_meta) {
        let path = PathBuf::from(glob.replace('\\', ""));
        if std::fs::symlink_metadata(&path).is_ok() {
            out.push(path);
        }
        return;
    }
    let Ok(matcher) = GlobBuilder::new(glob).literal_separator(true).build().map(|g| g.compile_matcher()) else { return };
    // The folder before the first component with a wildcard.
    let literal: PathBuf = Path::new(glob).components().take_while(|c| !c.as_os_str().to_string_lossy().contains(is_meta)).collect();
    let mut stack = vec![literal];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                tracing::warn!(glob, "stopped looking for paths a read-deny rule covers after {MAX_ENTRIES} entries");
                return;
            }
            let path = entry.path();
            if matcher.is_match(&path) {
                out.push(path.clone());
            }
            // Links are not followed: the walk stays in the tree.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn read_denies_become_the_existing_paths_they_cover() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for file in [".env", "sub/.env", "keys/a.pem", "keys/b.txt", "notes.txt"] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let places = Places { root: root.clone(), home: Some(root.join("home")) };
        let rules: Vec<Rule> = ["read_file(.env)", "read_file(./keys/*.pem)", "grep_search(./missing.txt)", "edit_file(notes.txt)", "run_shell(cat:*)"]
            .iter()
            .map(|r| Rule::parse(r).unwrap())
            .collect();
        let found: Vec<String> =
            read_denied_paths(&rules, &places).iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
        assert_eq!(found, [".env", "keys/a.pem", "sub/.env"]);
    }
}
