//! The one way Tandem reads a file for itself that a folder may have
//! brought (settings, `.mcp.json`, instructions, skills, agents, what
//! `tandem trust` fingerprints), so that a cloned repository can neither
//! hang it nor make it read something else:
//!
//! - Only a regular file is read. It is opened without blocking and
//!   checked on the open descriptor, so a FIFO (which would wait for a
//!   writer forever) or a device (`/dev/zero`, which never ends) is
//!   refused, also when swapped in between a look and the read.
//! - At most `max_bytes`: a larger file is refused, and the read itself
//!   stops there (a file that grows while it is read is refused too).
//! - A file that must stay inside folders (a project's own files: inside
//!   the workspace) is read only when it resolves inside one of them after
//!   following every symlink, the file's own and its folders'. On Linux the
//!   open descriptor's path is checked as well, so a folder swapped for a
//!   link between the check and the open is refused.
//!
//! The user's own files (`~/.tandem`, `~/.claude`) are read without a
//! folder to stay in: where they link to is the user's choice.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a file was not read.
#[derive(Debug)]
pub enum Refusal {
    /// After following symlinks the file is `target`, outside every folder
    /// it must stay in (`folder`: the first of them, to name).
    Outside { target: PathBuf, folder: PathBuf },
    /// A symlink to nothing.
    Dangling,
    /// Not a regular file: what it is, in words (`a FIFO`, `a device`).
    NotRegular(&'static str),
    /// Larger than the limit.
    TooLarge { bytes: u64, max: u64 },
    /// It grew past the limit while it was read.
    Grew { max: u64 },
    Io(std::io::Error),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Outside { target, folder } => write!(f, "it is a symlink to {}, outside {}", target.display(), folder.display()),
            Refusal::Dangling => f.write_str("it is a symlink to nothing"),
            Refusal::NotRegular(kind) => write!(f, "it is not a regular file ({kind})"),
            Refusal::TooLarge { bytes, max } => write!(f, "it is {bytes} bytes; the limit is {max}"),
            Refusal::Grew { max } => write!(f, "it grew past {max} bytes while it was read"),
            Refusal::Io(err) => write!(f, "cannot read it: {err}"),
        }
    }
}

/// The file's bytes: `Ok(None)` when there is no such file. `inside`: the
/// folders (canonical or not) the file must resolve into; `None` for the
/// user's own files.
pub fn read(path: &Path, inside: Option<&[PathBuf]>, max_bytes: u64) -> Result<Option<Vec<u8>>, Refusal> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Refusal::Io(err)),
    };
    // Open the resolved file, so the folders checked are the ones read.
    let target = match inside {
        Some(folders) => resolve_inside(path, link.file_type().is_symlink(), folders)?,
        None => path.to_path_buf(),
    };
    let file = open_without_blocking(&target).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => Refusal::Dangling,
        _ => Refusal::Io(err),
    })?;
    if inside.is_some() {
        opened_is(&file, &target)?;
    }
    let metadata = file.metadata().map_err(Refusal::Io)?;
    if !metadata.is_file() {
        return Err(Refusal::NotRegular(kind_of(&metadata)));
    }
    if metadata.len() > max_bytes {
        return Err(Refusal::TooLarge { bytes: metadata.len(), max: max_bytes });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(Refusal::Io)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Refusal::Grew { max: max_bytes });
    }
    Ok(Some(bytes))
}

/// What `path` is on disk, and whether it may be read (a regular file, at
/// most `max_bytes`, inside `inside`), without reading it: for a file
/// whose text comes from elsewhere (an editor's buffer, an ACP client)
/// but that is the disk's file. `Ok(false)`: there is no such file.
pub fn check(path: &Path, inside: Option<&[PathBuf]>, max_bytes: u64) -> Result<bool, Refusal> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(Refusal::Io(err)),
    };
    let target = match inside {
        Some(folders) => resolve_inside(path, link.file_type().is_symlink(), folders)?,
        None => path.to_path_buf(),
    };
    let metadata = std::fs::metadata(&target).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => Refusal::Dangling,
        _ => Refusal::Io(err),
    })?;
    if !metadata.is_file() {
        return Err(Refusal::NotRegular(kind_of(&metadata)));
    }
    if metadata.len() > max_bytes {
        return Err(Refusal::TooLarge { bytes: metadata.len(), max: max_bytes });
    }
    Ok(true)
}

/// `path` with every symlink followed, when that is inside one of
/// `folders`.
fn resolve_inside(path: &Path, is_link: bool, folders: &[PathBuf]) -> Result<PathBuf, Refusal> {
    let target = path.canonicalize().map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound if is_link => Refusal::Dangling,
        _ => Refusal::Io(err),
    })?;
    let canonical: Vec<PathBuf> = folders.iter().map(|f| f.canonicalize().unwrap_or_else(|_| f.clone())).collect();
    if canonical.iter().any(|folder| target.starts_with(folder)) {
        return Ok(target);
    }
    let folder = canonical.into_iter().next().unwrap_or_default();
    Err(Refusal::Outside { target, folder })
}

/// On Linux the kernel names the file an open descriptor is: a folder on
/// the way swapped for a link after [`resolve_inside`] looked shows here.
/// Without that name (another system, a bare chroot without /proc) the
/// check before the open stands.
fn opened_is(file: &std::fs::File, target: &Path) -> Result<(), Refusal> {
    match crate::platform::opened_path(file) {
        Some(opened) if opened != target => Err(Refusal::Outside { target: opened, folder: target.to_path_buf() }),
        _ => Ok(()),
    }
}

/// The file type, in words, for the refusal.
fn kind_of(metadata: &std::fs::Metadata) -> &'static str {
    crate::platform::special_file_kind(metadata).unwrap_or(if metadata.is_dir() { "a folder" } else { "not a file" })
}

fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    crate::platform::open_without_blocking(path)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_inside_its_folders_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (workspace, outside) = (base.join("ws"), base.join("outside"));
        std::fs::create_dir_all(workspace.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret"), "SECRET").unwrap();
        std::fs::write(workspace.join("docs/AGENTS.md"), "ours").unwrap();
        let folders = [workspace.clone()];
        let inside = Some(&folders[..]);
        let read = |name: &str| match read(&workspace.join(name), inside, 16) {
            Ok(bytes) => format!("{name}: {:?}", bytes.map(|b| String::from_utf8(b).unwrap())),
            Err(refusal) => format!("{name}: {}", refusal.to_string().replace(&base.display().to_string(), "BASE")),
        };
        let link = |target: &Path, name: &str| crate::platform::symlink(target, workspace.join(name)).unwrap();
        link(&outside.join("secret"), "CLAUDE.md");
        link(&workspace.join("docs/AGENTS.md"), "AGENTS.md");
        link(&outside, "linked-folder");
        link(Path::new("/dev/zero"), "zero.md");
        link(&base.join("nothing"), "dangling.md");
        std::fs::write(workspace.join("big.md"), "x".repeat(17)).unwrap();
        let fifo = std::ffi::CString::new(workspace.join("fifo.md").display().to_string()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let names = ["AGENTS.md", "CLAUDE.md", "linked-folder/secret", "zero.md", "dangling.md", "big.md", "fifo.md", "docs", "missing.md"];
        let out: String = names.iter().map(|n| read(n) + "\n").collect();
        expect_test::expect![[r#"
            AGENTS.md: Some("ours")
            CLAUDE.md: it is a symlink to BASE/outside/secret, outside BASE/ws
            linked-folder/secret: it is a symlink to BASE/outside/secret, outside BASE/ws
            zero.md: it is a symlink to /dev/zero, outside BASE/ws
            dangling.md: it is a symlink to nothing
            big.md: it is 17 bytes; the limit is 16
            fifo.md: it is not a regular file (a FIFO)
            docs: it is not a regular file (a folder)
            missing.md: None
        "#]]
        .assert_eq(&out);
        // The user's own file may link anywhere, but is still only a
        // bounded regular file.
        assert_eq!(super::read(&workspace.join("CLAUDE.md"), None, 16).unwrap().unwrap(), b"SECRET");
        assert_eq!(super::read(&workspace.join("zero.md"), None, 16).unwrap_err().to_string(), "it is not a regular file (a device)");
        // `check` says the same without reading.
        assert!(check(&workspace.join("AGENTS.md"), inside, 16).unwrap());
        assert!(!check(&workspace.join("missing.md"), inside, 16).unwrap());
        assert!(matches!(check(&workspace.join("CLAUDE.md"), inside, 16), Err(Refusal::Outside { .. })));
        assert!(matches!(check(&workspace.join("fifo.md"), None, 16), Err(Refusal::NotRegular("a FIFO"))));
    }
}
