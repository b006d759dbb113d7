//! Path resolution and confinement. Paths from the model resolve against the
//! primary workspace root (never the process's working directory), `..` is
//! folded, symlinks are resolved, and the result must lie inside a root.

use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    Empty,
    /// A file name this system would not keep as written (Windows' device
    /// names, trailing dots and spaces): the reason.
    BadName(String),
    Outside { requested: String, resolved: PathBuf },
}

impl PathError {
    pub fn message(&self) -> String {
        match self {
            PathError::Empty => "Error: the path is empty. Give a path relative to the workspace root.".to_string(),
            PathError::BadName(reason) => format!("Error: {reason}; choose another name."),
            PathError::Outside { requested, resolved } => format!(
                "Error: {requested} resolves to {}, which is outside the workspace. Only files inside the workspace can be accessed.",
                resolved.display()
            ),
        }
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A path as the model and the user should see it: relative to the primary
/// root when inside it, else absolute. Only the primary root gives relative
/// paths: relative paths the model sends back resolve against it, so a path
/// relative to another root would name the wrong file.
pub fn display_relative(primary_root: &Path, path: &Path) -> String {
    match path.strip_prefix(primary_root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => path.display().to_string(),
    }
}

/// Fold `.` and `..` without touching the filesystem. `..` at the root stays
/// at the root, as the OS does.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Resolve symlinks in the longest existing prefix of `path`, then append the
/// part that does not exist yet (a file about to be created).
pub fn resolve_symlinks(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return normalize_lexically(&out);
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Resolve `user_path` and check it lies inside one of `roots` (or of
/// `extra`, folders allowed for reading). Roots must be canonical.
pub fn resolve_confined(roots: &[PathBuf], extra: &[PathBuf], user_path: &str) -> Result<PathBuf, PathError> {
    let trimmed = user_path.trim();
    if trimmed.is_empty() {
        return Err(PathError::Empty);
    }
    let expanded = match trimmed.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().map(|h| h.join(rest)).unwrap_or_else(|| PathBuf::from(trimmed)),
        None => PathBuf::from(trimmed),
    };
    let joined = if expanded.is_absolute() { expanded } else { roots[0].join(expanded) };
    let lexical = normalize_lexically(&joined);
    // Before anything is resolved: a `\\?\` path (what Windows'
    // canonicalize returns) would make `NUL` or `a.` a real file.
    if let Some(reason) = crate::platform::path_name_problem(&lexical) {
        return Err(PathError::BadName(reason));
    }
    let real = resolve_symlinks(&lexical);
    if roots.iter().chain(extra).any(|root| real.starts_with(root)) {
        // Keep the lexical path when it is itself inside a root: it is what
        // the user knows the file as (a symlink inside the workspace that
        // points inside it stays readable under its own name).
        if roots.iter().chain(extra).any(|root| lexical.starts_with(root)) {
            return Ok(lexical);
        }
        return Ok(real);
    }
    Err(PathError::Outside { requested: user_path.to_string(), resolved: real })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_dots() {
        assert_eq!(normalize_lexically(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(normalize_lexically(Path::new("/../a")), PathBuf::from("/a"));
    }

    #[test]
    fn confinement() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let roots = vec![root.clone()];
        assert_eq!(resolve_confined(&roots, &[], "sub/new.txt").unwrap(), root.join("sub/new.txt"));
        assert_eq!(resolve_confined(&roots, &[], "sub/../x").unwrap(), root.join("x"));
        assert!(matches!(resolve_confined(&roots, &[], "../etc/passwd"), Err(PathError::Outside { .. })));
        assert!(matches!(resolve_confined(&roots, &[], "/etc/passwd"), Err(PathError::Outside { .. })));
        assert!(matches!(resolve_confined(&roots, &[], ""), Err(PathError::Empty)));
        #[cfg(unix)]
        {
            crate::platform::symlink("/etc", root.join("escape")).unwrap();
            assert!(matches!(resolve_confined(&roots, &[], "escape/passwd"), Err(PathError::Outside { .. })));
            assert!(matches!(resolve_confined(&roots, &[], "escape/newfile"), Err(PathError::Outside { .. })));
        }
    }

    /// On Windows, a symbolic link and a junction (`mklink /J`, which needs
    /// no privilege) inside the workspace that lead out of it are refused,
    /// for a file there and a file to be made there (`canonicalize`
    /// follows both). Wine 8 makes neither (a folder link's creation
    /// succeeds with no link, `mklink /J` fails): there each is skipped
    /// with a line on stderr, and the test holds only on Windows.
    #[cfg(windows)]
    #[test]
    fn windows_links_and_junctions_out_of_the_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        let root = dir.path().canonicalize().unwrap();
        let roots = vec![root.clone()];
        // (A folder link needs Developer Mode or an administrator.)
        let linked = crate::platform::symlink(outside.path(), crate::platform::plain_path(&root.join("link")));
        // A junction where the system makes one: Wine's `mklink /J` cannot
        // ("Failed to open" the new folder).
        let made = std::process::Command::new("cmd").arg("/c").arg("mklink").arg("/J").arg(crate::platform::plain_path(&root.join("junction")).as_os_str()).arg(outside.path()).output().unwrap();
        let mut names = Vec::new();
        if root.join("link").join("secret.txt").exists() {
            names.push("link");
        } else {
            eprintln!("no folder link made, not tried: {linked:?}, then {:?}", std::fs::symlink_metadata(root.join("link")));
        }
        if root.join("junction").join("secret.txt").exists() {
            names.push("junction");
        } else {
            eprintln!("no junction made, not tried: {made:?}");
        }
        for name in names {
            for file in ["secret.txt", "new.txt"] {
                let asked = format!("{name}\\{file}");
                let link = root.join(name);
                let seen = (std::fs::symlink_metadata(&link).map(|m| (m.file_type().is_symlink(), m.file_type().is_dir())), std::fs::read_link(&link), std::fs::read_to_string(root.join(name).join("secret.txt")));
                assert!(matches!(resolve_confined(&roots, &[], &asked), Err(PathError::Outside { .. })), "{asked}: {:?}; the link: {seen:?}", resolve_confined(&roots, &[], &asked));
            }
        }
    }

    /// Windows' file systems ignore case: a path spelled in another case
    /// (the drive letter, the folders, the name) names the same file, which
    /// is inside the workspace; `A.TXT` is the `a.txt` there, not a second
    /// file.
    #[cfg(windows)]
    #[test]
    fn windows_paths_in_another_case_are_the_same_file_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("Sub")).unwrap();
        std::fs::write(root.join("Sub").join("a.txt"), "lower").unwrap();
        let roots = vec![root.clone()];
        let plain = crate::platform::plain_path(&root).to_string_lossy().into_owned();
        for spelling in [format!("{}\\SUB\\A.TXT", plain.to_lowercase()), format!("{}\\sub\\A.txt", plain.to_uppercase()), "sub/A.TXT".to_string()] {
            let resolved = resolve_confined(&roots, &[], &spelling).unwrap_or_else(|e| panic!("{spelling}: {e}"));
            assert_eq!(std::fs::read_to_string(&resolved).unwrap(), "lower", "{spelling}");
        }
        std::fs::write(root.join("Sub").join("A.TXT"), "upper").unwrap();
        let names: Vec<String> = std::fs::read_dir(root.join("Sub")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["a.txt"], "a second file was made");
        assert_eq!(std::fs::read_to_string(root.join("sub").join("a.txt")).unwrap(), "upper");
    }
}
