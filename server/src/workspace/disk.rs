//! The disk sink: atomic writes (a temp file in the same folder, then a
//! rename), keeping the file's mode bits, and only when the file still holds
//! what the agent read.

use std::io::Write as _;
use std::path::Path;

use super::ledger::fingerprint;

#[derive(Debug)]
pub enum DiskWriteError {
    /// The file's content no longer matches the expected fingerprint (or it
    /// was deleted).
    Changed,
    /// A file appeared where the agent expected none.
    Exists,
    Io(std::io::Error),
}

/// Write `bytes` to `path` atomically. `expected` is the fingerprint the file
/// must still have (`None`: the file must not exist). Parent folders are
/// created as needed.
pub fn atomic_write(path: &Path, bytes: &[u8], expected: Option<u64>) -> Result<(), DiskWriteError> {
    // Write through a symlink to the file it names: renaming the temp file
    // over the link itself would replace the link with a plain file.
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let check = || -> Result<Option<std::fs::Permissions>, DiskWriteError> {
        match (std::fs::read(path), expected) {
            (Ok(current), Some(fp)) if fingerprint(&current) == fp => {
                Ok(std::fs::metadata(path).ok().map(|m| m.permissions()))
            }
            (Ok(_), Some(_)) => Err(DiskWriteError::Changed),
            (Ok(_), None) => Err(DiskWriteError::Exists),
            (Err(e), None) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            (Err(e), Some(_)) if e.kind() == std::io::ErrorKind::NotFound => Err(DiskWriteError::Changed),
            (Err(e), _) => Err(DiskWriteError::Io(e)),
        }
    };
    let permissions = check()?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(DiskWriteError::Io)?;
    let mut temp = tempfile::Builder::new()
        .prefix(".tandem-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(DiskWriteError::Io)?;
    temp.write_all(bytes).map_err(DiskWriteError::Io)?;
    temp.as_file().sync_all().map_err(DiskWriteError::Io)?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(temp.path(), permissions).map_err(DiskWriteError::Io)?;
    }
    // Check again right before the rename to keep the window for a lost
    // concurrent write as small as the filesystem allows.
    check()?;
    temp.persist(path).map_err(|e| DiskWriteError::Io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_when_content_changed_and_keeps_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sh");
        std::fs::write(&path, "one").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let seen = fingerprint(b"one");
        std::fs::write(&path, "two").unwrap();
        assert!(matches!(atomic_write(&path, b"three", Some(seen)), Err(DiskWriteError::Changed)));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        atomic_write(&path, b"three", Some(fingerprint(b"two"))).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "three");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        }
        assert!(matches!(atomic_write(&path, b"x", None), Err(DiskWriteError::Exists)));
        atomic_write(&dir.path().join("new/deep/file.txt"), b"x", None).unwrap();
        #[cfg(unix)]
        {
            std::fs::write(dir.path().join("real.txt"), "real").unwrap();
            std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
            atomic_write(&dir.path().join("link.txt"), b"via link", Some(fingerprint(b"real"))).unwrap();
            assert!(std::fs::symlink_metadata(dir.path().join("link.txt")).unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read_to_string(dir.path().join("real.txt")).unwrap(), "via link");
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
        assert!(leftovers.is_empty());
    }
}
