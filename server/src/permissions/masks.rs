//! The paths deny rules cover on disk, for the sandbox: a shell command
//! must not read what `read_file` may not (read denies are masked), nor
//! change what `edit_file` may not (edit denies are bound read-only).
//!
//! A rule's glob is made absolute as the rules read it ([`Places`]), then
//! a literal path is taken as it is and a glob is matched against every
//! entry under its literal part, hidden files included, however many the
//! tree holds. Links to folders are followed as `grep -R`, `rg -L` and
//! `diff -r` follow them: a file reached through a link is matched by the
//! path through the link and masked where it really is (the sandbox binds
//! resolved paths). Each folder is visited once, wherever the links lead,
//! but the kernel's own trees (`/proc`, `/sys`, `/dev`, `/run`).
//!
//! The walk runs as each command starts, so a file created since the
//! last one (by an approved command, the user, a checkout) is covered too.
//! What the walk saw of each folder is kept with the folder's identity and
//! change time: a folder that has not changed since is not listed again,
//! so a command costs one `stat` per folder under the rule's literal part.
//! A folder that changed less than a second before it was listed is
//! listed again next time (a change in the same clock tick as the listing
//! would not move its change time).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use globset::GlobBuilder;

use super::rules::{Family, Pattern, Places, Rule};
use crate::sync::MutexExt;

/// The existing paths these deny rules cover for reads.
pub fn read_denied_paths(deny: &[Rule], places: &Places) -> Vec<PathBuf> {
    denied_paths(deny, Family::Read, places)
}

/// The paths these deny rules cover for edits: the existing ones, and a
/// literal path that does not exist yet (so it cannot be created).
pub fn edit_denied_paths(deny: &[Rule], places: &Places) -> Vec<PathBuf> {
    denied_paths(deny, Family::Edit, places)
}

fn denied_paths(deny: &[Rule], family: Family, places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for rule in deny.iter().filter(|r| r.family() == family) {
        let Some(Pattern::Path(pattern)) = &rule.pattern else { continue };
        let Some(glob) = places.absolute_glob(pattern) else { continue };
        expand(&glob, family == Family::Edit, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn is_meta(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '{')
}

/// The kernel's trees: endless or changing under the walk, and holding
/// nothing a rule about files means.
const NOT_WALKED: &[&str] = &["/proc", "/sys", "/dev", "/run"];

fn expand(glob: &str, keep_missing: bool, out: &mut Vec<PathBuf>) {
    if !glob.contains(is_meta) {
        let path = PathBuf::from(glob.replace('\\', ""));
        if keep_missing || std::fs::symlink_metadata(&path).is_ok() {
            out.push(path);
        }
        return;
    }
    let Ok(matcher) = GlobBuilder::new(glob).literal_separator(true).build().map(|g| g.compile_matcher()) else { return };
    // The folder before the first component with a wildcard.
    let literal: PathBuf = Path::new(glob).components().take_while(|c| !c.as_os_str().to_string_lossy().contains(is_meta)).collect();
    let mut cache = CACHE.get_or_init(Mutex::default).locked();
    // (the path as named, where it really is)
    let mut stack: Vec<(PathBuf, PathBuf)> = vec![(literal.clone(), literal.canonicalize().unwrap_or(literal))];
    let mut visited: HashSet<PathBuf> = HashSet::new();
    while let Some((named, real)) = stack.pop() {
        if !visited.insert(real.clone()) || NOT_WALKED.iter().any(|skip| real.starts_with(skip)) {
            continue;
        }
        for entry in cache.entries(&real) {
            let named_path = named.join(&entry.name);
            let real_path = real.join(&entry.name);
            if matcher.is_match(&named_path) {
                // The sandbox binds where it really is (a link: its target).
                out.push(if entry.kind == Kind::Link { real_path.canonicalize().unwrap_or(real_path.clone()) } else { real_path.clone() });
            }
            match entry.kind {
                Kind::Dir => stack.push((named_path, real_path)),
                Kind::Link => {
                    if let Ok(target) = real_path.canonicalize() {
                        if target.is_dir() {
                            stack.push((named_path, target));
                        }
                    }
                }
                Kind::Other => {}
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Link,
    Other,
}

#[derive(Debug, Clone)]
struct Entry {
    name: std::ffi::OsString,
    kind: Kind,
}

/// What one folder held when it was last listed.
struct Listing {
    /// Device, inode and change time (ns): another folder swapped in at the
    /// path, or an entry added, removed or renamed, changes it.
    identity: (u64, u64, i64, i64),
    /// Listed long enough after its last change to be trusted until it
    /// changes again.
    settled: bool,
    entries: Vec<Entry>,
}

/// Every folder the walks have listed, process-wide (runs come and go; the
/// folders stay).
static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();

#[derive(Default)]
struct Cache {
    listings: HashMap<PathBuf, Listing>,
}

/// A folder changed this recently when it was listed may change again
/// within the same clock tick of its change time.
const SETTLE: Duration = Duration::from_secs(1);

impl Cache {
    fn entries(&mut self, dir: &Path) -> Vec<Entry> {
        let Ok(meta) = std::fs::metadata(dir) else {
            self.listings.remove(dir);
            return Vec::new();
        };
        let identity = crate::platform::folder_identity(&meta);
        if let Some(listing) = self.listings.get(dir) {
            if listing.settled && listing.identity == identity {
                return listing.entries.clone();
            }
        }
        let Ok(read) = std::fs::read_dir(dir) else {
            self.listings.remove(dir);
            return Vec::new();
        };
        let entries: Vec<Entry> = read
            .flatten()
            .map(|entry| {
                let kind = match entry.file_type() {
                    Ok(t) if t.is_dir() => Kind::Dir,
                    Ok(t) if t.is_symlink() => Kind::Link,
                    _ => Kind::Other,
                };
                Entry { name: entry.file_name(), kind }
            })
            .collect();
        let changed = meta.modified().ok();
        let settled = changed.is_some_and(|changed| SystemTime::now().duration_since(changed).is_ok_and(|age| age > SETTLE));
        self.listings.insert(dir.to_path_buf(), Listing { identity, settled, entries: entries.clone() });
        entries
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
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
        let rules: Vec<Rule> = ["read_file(.env)", "read_file(./keys/*.pem)", "grep_search(./missing.txt)", "edit_file(notes.txt)", "Write(./missing.lock)", "run_shell(cat:*)"]
            .iter()
            .map(|r| Rule::parse(r).unwrap())
            .collect();
        let found: Vec<String> =
            read_denied_paths(&rules, &places).iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
        assert_eq!(found, [".env", "keys/a.pem", "sub/.env"]);
        let edits: Vec<String> = edit_denied_paths(&rules, &places).iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
        // A literal path that does not exist yet is kept: it must not be created.
        assert_eq!(edits, ["missing.lock", "notes.txt"]);
    }

    /// Past the old walk's 100,000 entries, across links to folders
    /// outside the tree, and for files created after the first walk.
    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn every_match_is_found_however_large_the_tree_and_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        let bulk = root.join("bulk");
        std::fs::create_dir_all(&bulk).unwrap();
        // 110 folders of 1,000 files, a key in each: a walk that stops
        // after 100,000 entries misses some of them, whatever its order.
        for folder in 0..110 {
            let path = bulk.join(format!("d{folder}"));
            std::fs::create_dir(&path).unwrap();
            for file in 0..999 {
                std::fs::File::create(path.join(format!("f{file}"))).unwrap();
            }
            std::fs::write(path.join("k.pem"), "k").unwrap();
        }
        std::fs::create_dir_all(root.join("zz/deep")).unwrap();
        std::fs::write(root.join("zz/deep/late.pem"), "k").unwrap();
        let outside = base.join("outside/keys");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("far.pem"), "k").unwrap();
        crate::platform::symlink(base.join("outside"), root.join("linked")).unwrap();
        crate::platform::symlink(&root, root.join("loop")).unwrap();
        let places = Places { root: root.clone(), home: None };
        let rules = [Rule::parse("read_file(*.pem)").unwrap()];
        let found = read_denied_paths(&rules, &places);
        let mut expected: Vec<PathBuf> = (0..110).map(|n| bulk.join(format!("d{n}/k.pem"))).collect();
        expected.extend([outside.join("far.pem"), root.join("zz/deep/late.pem")]);
        expected.sort();
        assert_eq!(found, expected);
        // A file made after the first walk, in a folder that changed.
        std::fs::write(bulk.join("d3/new.pem"), "k").unwrap();
        let found = read_denied_paths(&rules, &places);
        assert!(found.contains(&bulk.join("d3/new.pem")), "{found:?}");
    }
}
