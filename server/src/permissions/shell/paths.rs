//! Where a path a command names really lands: resolved as the kernel does
//! (a symlink is followed before the `..` after it, a dangling link is
//! followed to where it would create its target), then placed inside the
//! workspace, in one of its protected folders, or outside.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed per path before giving up (as the kernel's ELOOP).
const MAX_LINKS: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Workspace,
    /// Inside the workspace, in a folder whose files run code or grant
    /// permissions: what it is, for the prompt.
    Protected(&'static str),
    Outside,
}

/// `path` (as a command names it, relative to `cwd`) resolved like the
/// kernel: each existing component's symlink followed in turn, so
/// `link/../x` is the parent of the link's target; `~` is not expanded
/// here (a word with a tilde is not static).
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, Path::new(path));
    // A path from `/` is not under the command's folder on any system: on
    // Windows, where it has no drive, Git Bash takes `/` for its own
    // install folder (`/etc/hosts`) or a drive (`/c/Users`), never the
    // workspace; kept rooted at `/`, it is outside.
    let rooted = Path::new(path).is_absolute() || path.starts_with('/');
    let mut out = if rooted { PathBuf::from("/") } else { cwd.to_path_buf() };
    let mut links = 0;
    // `pending` holds the components still to walk, last first.
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        if part == "." {
            continue;
        }
        let next = out.join(&part);
        match std::fs::read_link(&next) {
            Ok(target) if links < MAX_LINKS => {
                links += 1;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&mut pending, &target);
            }
            _ => out = next,
        }
    }
    out
}

/// Push `path`'s components onto `pending` so that the first is popped first.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir => Some(OsString::from(".")),
            Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(parts.into_iter().rev());
}

/// Where a resolved path is, given the canonical workspace roots: a
/// protected path is one [`crate::permissions::protected`] names.
pub fn place_of(resolved: &Path, roots: &[PathBuf]) -> Place {
    if !roots.iter().any(|root| resolved.starts_with(root)) {
        return Place::Outside;
    }
    match crate::permissions::protected::protected(resolved, roots) {
        Some(found) => Place::Protected(found.what),
        None => Place::Workspace,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `/etc/hosts` is outside the workspace on every system; on Windows
    /// it was joined to the command's folder (`./etc\hosts`), since it has
    /// no drive, and a write to Git Bash's own `/etc` passed for one in the
    /// workspace.
    #[test]
    fn a_path_from_the_root_is_outside_the_workspace_on_every_system() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let roots = [root.clone()];
        for rooted in ["/etc/hosts", "/c/Users/me/x", "/"] {
            assert_eq!(place_of(&resolve(&root, rooted), &roots), Place::Outside, "{rooted}");
        }
        assert_eq!(place_of(&resolve(&root, "etc/hosts"), &roots), Place::Workspace);
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke) and links resolved as Linux resolves relative ones.
    #[cfg(unix)]
    #[test]
    fn paths_resolve_as_the_kernel_resolves_them() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        crate::platform::symlink(outside.join("deep"), root.join("link")).unwrap();
        crate::platform::symlink(outside.join("missing"), root.join("dangling")).unwrap();
        crate::platform::symlink("a/b", root.join("rel")).unwrap();
        let roots = [root.clone()];
        let place = |p: &str| place_of(&resolve(&root, p), &roots);
        assert_eq!(place("a/b/../x"), Place::Workspace);
        assert_eq!(place("rel/../x"), Place::Workspace, "rel/.. is a/");
        assert_eq!(resolve(&root, "rel/../x"), root.join("a/x"));
        assert_eq!(place("link/x"), Place::Outside);
        assert_eq!(place("link/../x"), Place::Outside, "the link is followed before ..");
        assert_eq!(resolve(&root, "link/../x"), outside.join("x"));
        assert_eq!(place("dangling"), Place::Outside, "writing a dangling link creates its target");
        assert_eq!(place("../ws/x"), Place::Workspace);
        assert_eq!(place("../x"), Place::Outside);
        assert_eq!(place("/etc/passwd"), Place::Outside);
        assert!(matches!(place(".git/config"), Place::Protected(what) if what.starts_with("git's hooks and config")));
        assert!(matches!(place("a/../.tandem/settings.json"), Place::Protected(what) if what.starts_with("Tandem's settings")));
        crate::platform::symlink(root.join("loop"), root.join("loop")).unwrap();
        assert_eq!(place("loop/x"), Place::Workspace, "a link loop ends, it does not hang");
    }
}
