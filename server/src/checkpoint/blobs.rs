//! The content-addressed store of file contents: `blobs/ab/cdef…`, each
//! named by the SHA-256 of its bytes, written atomically, checked against
//! its name when read back. A blob is shared by every run (and thread)
//! whose checkpoint names it; the store's size is bounded ([`Limits`]).

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use crate::sync::MutexExt;

use sha2::{Digest, Sha256};

use super::Limits;

/// A blob's name: the SHA-256 of its content, in lower-case hex.
pub type BlobId = String;

/// Why a content was not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutError {
    TooLarge { bytes: u64, limit: u64 },
    Full { limit: u64 },
    Io(String),
}

impl std::fmt::Display for PutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PutError::TooLarge { bytes, limit } => write!(f, "not recorded: {bytes} bytes, over the checkpoint limit of {limit} bytes per file"),
            PutError::Full { limit } => write!(f, "not recorded: the checkpoint store is full ({limit} bytes)"),
            PutError::Io(message) => write!(f, "not recorded: {message}"),
        }
    }
}

/// Why a kept content cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetError {
    Missing(BlobId),
    Damaged(BlobId),
    Io(String),
}

impl std::fmt::Display for GetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GetError::Missing(id) => write!(f, "the checkpoint store has lost its copy ({id:.12} is missing)"),
            GetError::Damaged(id) => write!(f, "the checkpoint store's copy is damaged ({id:.12} does not match its content)"),
            GetError::Io(message) => write!(f, "cannot read the checkpoint store: {message}"),
        }
    }
}

pub fn blob_id(bytes: &[u8]) -> BlobId {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

pub struct BlobStore {
    dir: PathBuf,
    limits: Limits,
    /// Bytes held, counted once per process on first need.
    total: Mutex<Option<u64>>,
}

impl BlobStore {
    pub fn new(dir: PathBuf, limits: Limits) -> Self {
        BlobStore { dir, limits, total: Mutex::new(None) }
    }

    fn path(&self, id: &str) -> Option<PathBuf> {
        // Names come from manifests on disk: only what `blob_id` makes is a path.
        if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
            return None;
        }
        Some(self.dir.join(&id[..2]).join(&id[2..]))
    }

    /// Keep `bytes`; its id either way (already kept, or written now).
    pub fn put(&self, bytes: &[u8]) -> Result<BlobId, PutError> {
        let len = bytes.len() as u64;
        if len > self.limits.max_file_bytes {
            return Err(PutError::TooLarge { bytes: len, limit: self.limits.max_file_bytes });
        }
        let id = blob_id(bytes);
        let path = self.path(&id).ok_or_else(|| PutError::Io("bad blob name".into()))?;
        if path.is_file() {
            return Ok(id);
        }
        let mut total = self.total.locked();
        let held = match *total {
            Some(held) => held,
            None => self.measure(),
        };
        if held + len > self.limits.max_store_bytes {
            *total = Some(held);
            return Err(PutError::Full { limit: self.limits.max_store_bytes });
        }
        write_blob(&path, bytes).map_err(|e| PutError::Io(format!("{}: {e}", path.display())))?;
        *total = Some(held + len);
        Ok(id)
    }

    /// The content named `id`, checked against its name.
    pub fn get(&self, id: &str) -> Result<Vec<u8>, GetError> {
        let path = self.path(id).ok_or_else(|| GetError::Damaged(id.to_string()))?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(GetError::Missing(id.to_string())),
            Err(e) => return Err(GetError::Io(format!("{}: {e}", path.display()))),
        };
        if blob_id(&bytes) != id {
            return Err(GetError::Damaged(id.to_string()));
        }
        Ok(bytes)
    }

    /// Bytes held now.
    pub fn held(&self) -> u64 {
        let mut total = self.total.locked();
        let held = total.unwrap_or_else(|| self.measure());
        *total = Some(held);
        held
    }

    fn measure(&self) -> u64 {
        self.each_blob().map(|(_, _, len)| len).sum()
    }

    fn each_blob(&self) -> impl Iterator<Item = (String, PathBuf, u64)> {
        let fans = std::fs::read_dir(&self.dir).into_iter().flatten().flatten();
        fans.flat_map(|fan| {
            let prefix = fan.file_name().to_string_lossy().into_owned();
            std::fs::read_dir(fan.path()).into_iter().flatten().flatten().filter_map(move |entry| {
                // A temp file of a write in progress is not a blob yet.
                if entry.file_name().to_string_lossy().starts_with('.') {
                    return None;
                }
                let len = entry.metadata().ok().filter(|m| m.is_file())?.len();
                Some((format!("{prefix}{}", entry.file_name().to_string_lossy()), entry.path(), len))
            })
        })
    }

    /// Remove every blob not in `keep` (and stray temp files); returns the bytes freed.
    pub fn collect_garbage(&self, keep: &HashSet<BlobId>) -> u64 {
        let mut total = self.total.locked();
        let mut held = 0;
        let mut freed = 0;
        for (name, path, len) in self.each_blob() {
            if keep.contains(&name) {
                held += len;
            } else if std::fs::remove_file(&path).is_ok() {
                freed += len;
            } else {
                held += len;
            }
        }
        *total = Some(held);
        freed
    }
}

/// A blob goes through a temp file renamed into place, so a reader sees it
/// whole or not at all, but it is not synced: a blob lost or torn by a
/// crash is found by [`BlobStore::get`]'s check of the content against its
/// name (`Damaged`/`Missing`, reported, never restored), while a sync per
/// blob made the first look at a 50k-file tree take minutes (one `fsync`
/// per file). Manifests, which name the blobs, are synced
/// ([`write_atomically`]), as is the tree index when it is rewritten whole
/// (the lines a look appends to it are not: a lost one costs hashing one
/// file again).
fn write_blob(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(parent)?;
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Write through a temp file in the same folder, synced, then renamed over
/// `path`: a reader sees the old content or the whole new one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().ok_or_else(|| std::io::Error::other("no parent folder"))?;
    std::fs::create_dir_all(parent)?;
    let mut temp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

impl BlobStore {
    /// The largest content kept.
    pub fn max_file_bytes(&self) -> u64 {
        self.limits.max_file_bytes
    }
}
