//! Workspace trust: whether the user trusts the files that came with a
//! folder — its own settings ([`PROJECT_FILES`]) and the `model` of its
//! agent files ([`AGENT_DIRS`]) — to change how Tandem runs there. Until then the settings loader and the MCP loader take from
//! such a file only what tightens (deny and ask rules, a stricter mode, a
//! stricter sandbox); what would loosen anything or start a program (a
//! higher mode, allow rules, `env`, the provider, model, base URL, hooks,
//! MCP and language servers) is left out and the user is told.
//!
//! Trust is given once (`tandem trust`, the editor's "Trust Workspace")
//! and remembered outside the folder, in `$XDG_DATA_HOME/tandem/trust.json`
//! (a folder cannot trust itself), per folder and per *content* of each of
//! its files: a file whose bytes differ from those trusted — or a new one —
//! is not trusted until the user trusts the folder again. What Tandem
//! itself writes for the user ("Always allow, saved" in
//! `.tandem/settings.local.json`) keeps the trust the file had
//! ([`TrustStore::keep_written`]). `--trust` trusts for one process only,
//! without remembering ([`assume_for_this_process`]).
//!
//! ```json
//! {"folders": {"/abs/root": {"trustedAt": "2026-12-01T20:00:00Z",
//!   "files": {".tandem/settings.json": "<sha-256 of its bytes>"}}}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::sync::MutexExt;

/// The settings files of a folder that can change how Tandem runs in it,
/// relative to its root (`.claude/settings*.json` are not read by Tandem
/// at all); [`project_files`] adds the agent files.
pub const PROJECT_FILES: &[&str] = &[".tandem/settings.json", ".tandem/settings.local.json", ".mcp.json"];

/// The folders whose `*.md` files are project agents: their `model`
/// field is the only thing in them that trust decides.
pub const AGENT_DIRS: &[&str] = &[".tandem/agents", ".claude/agents"];

/// Agent files looked at per folder at most (as many as the agent loader
/// reads).
const MAX_AGENT_FILES: usize = 100;

/// Every file of `root` whose trust matters, relative to it: the
/// [`PROJECT_FILES`] (present or not), then its [`agent_files`].
pub fn project_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = PROJECT_FILES.iter().map(|f| f.to_string()).collect();
    files.extend(agent_files(root));
    files
}

/// The agent files present in `root`'s [`AGENT_DIRS`], relative to it,
/// sorted (at most [`MAX_AGENT_FILES`] per folder).
pub fn agent_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for dir in AGENT_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        let mut agents: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .filter_map(|e| e.file_name().to_str().filter(|n| n.ends_with(".md")).map(|n| format!("{dir}/{n}")))
            .collect();
        agents.sort();
        agents.truncate(MAX_AGENT_FILES);
        files.extend(agents);
    }
    files
}

/// A project file is read at most this large to be trusted (the loaders
/// read none larger: settings are at most this, agent files less).
pub const MAX_FILE_BYTES: u64 = crate::json_file::MAX_BYTES;

/// A project file of `root` (relative to it) as the loaders read it
/// ([`crate::confined_file`]): a regular file inside `root`, bounded;
/// `Ok(None)` when there is none.
pub fn read_project_file(root: &Path, relative: &str) -> Result<Option<Vec<u8>>, crate::confined_file::Refusal> {
    crate::confined_file::read(&root.join(relative), Some(&[root.to_path_buf()]), MAX_FILE_BYTES)
}

/// What [`TrustStore::trust_files`] trusted, and what it did not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trusted {
    /// The files trusted, relative to the folder.
    pub files: Vec<String>,
    /// The files not read (so not trusted), with why: `(relative, reason)`.
    pub skipped: Vec<(String, String)>,
}

/// How to trust a folder, for every message that says something was left out.
pub const HOW_TO_TRUST: &str = "if you trust this folder's files, run `tandem trust` in it (in VS Code: \"Tandem: Trust Workspace\"; in Neovim: :TandemTrust; for one run, as in CI: --trust)";

/// The store is refused past this size (it only grows by the user's trust).
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// Serialises read-modify-write of the store within this process.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// `--trust`: every folder this process opens is trusted, for this process.
static ASSUMED: AtomicBool = AtomicBool::new(false);

/// Trust every folder this process opens, without remembering it (`--trust`).
pub fn assume_for_this_process() {
    ASSUMED.store(true, Ordering::SeqCst);
}

/// The fingerprint of a file's content: its SHA-256, in hex (a repository
/// chooses the bytes, so a hash that resists collisions).
pub fn fingerprint(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What the user trusted in one folder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustRecord {
    /// When (UTC, RFC 3339), for `tandem trust --list`.
    #[serde(default)]
    pub trusted_at: String,
    /// Each project file trusted, by its path relative to the root, with
    /// the fingerprint of the content trusted.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    folders: BTreeMap<String, TrustRecord>,
}

/// How one project file stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileTrust {
    Trusted,
    /// Never trusted (the folder never was, or the file is new).
    NotTrusted,
    /// Trusted once with other content: it changed since.
    Changed,
}

/// The trust of one folder, as the loaders check it: a file is trusted when
/// its bytes are the ones trusted.
#[derive(Debug, Clone)]
pub struct Trust {
    record: Option<TrustRecord>,
    everything: bool,
}

impl Trust {
    /// Every file trusted (`--trust`; tests of what a trusted file does).
    pub fn everything() -> Self {
        Trust { record: None, everything: true }
    }

    /// No file trusted (no data folder to remember trust in).
    pub fn nothing() -> Self {
        Trust { record: None, everything: false }
    }

    /// The folder `root` as the user's store (and `--trust`) say.
    pub fn of(root: &Path) -> Self {
        TrustSource::User.trust(root)
    }

    /// How the file `relative` (one of [`PROJECT_FILES`]) with these bytes stands.
    pub fn file(&self, relative: &str, bytes: &[u8]) -> FileTrust {
        if self.everything {
            return FileTrust::Trusted;
        }
        match self.record.as_ref().and_then(|record| record.files.get(relative)) {
            Some(trusted) if *trusted == fingerprint(bytes) => FileTrust::Trusted,
            Some(_) => FileTrust::Changed,
            None => FileTrust::NotTrusted,
        }
    }

    pub fn trusts(&self, relative: &str, bytes: &[u8]) -> bool {
        self.file(relative, bytes) == FileTrust::Trusted
    }

    /// The folder was trusted once (`tandem trust`), whatever changed since.
    pub fn was_trusted(&self) -> bool {
        self.everything || self.record.is_some()
    }
}

/// Where a loader takes trust from.
#[derive(Debug, Clone)]
pub enum TrustSource {
    /// The user's store (`None` in it when there is no data folder), and `--trust`.
    User,
    /// A store at this path (tests), and `--trust`.
    At(PathBuf),
    /// Every file trusted.
    Everything,
}

impl TrustSource {
    /// The trust of `root` now (the store is read each time: the user may
    /// have trusted the folder since).
    pub fn trust(&self, root: &Path) -> Trust {
        if ASSUMED.load(Ordering::SeqCst) || matches!(self, TrustSource::Everything) {
            return Trust::everything();
        }
        let store = match self {
            TrustSource::User => TrustStore::for_user(),
            TrustSource::At(path) => Some(TrustStore::at(path)),
            TrustSource::Everything => None,
        };
        match store {
            Some(store) => Trust { record: store.record(root), everything: false },
            None => Trust::nothing(),
        }
    }

    /// The store trust is kept in, when there is one.
    pub fn store(&self) -> Option<TrustStore> {
        match self {
            TrustSource::User => TrustStore::for_user(),
            TrustSource::At(path) => Some(TrustStore::at(path)),
            TrustSource::Everything => None,
        }
    }
}

/// The folders the user trusted, kept in the user's data folder.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store in the user's data folder (`None` when there is none).
    pub fn for_user() -> Option<Self> {
        dirs::data_dir().map(|dir| TrustStore { path: dir.join("tandem").join("trust.json") })
    }

    pub fn at(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the user trusted in `root` (`None`: never trusted).
    pub fn record(&self, root: &Path) -> Option<TrustRecord> {
        self.read().folders.remove(&folder_key(root))
    }

    /// Every folder trusted, by its path.
    pub fn list(&self) -> BTreeMap<String, TrustRecord> {
        self.read().folders
    }

    /// Trust `root`'s project files as they are now; the files trusted
    /// (relative paths; missing ones are not recorded, so a file added
    /// later needs trust of its own).
    pub fn trust(&self, root: &Path) -> std::io::Result<Vec<String>> {
        self.trust_files(root).map(|trusted| trusted.files)
    }

    /// [`TrustStore::trust`], saying also which files were not read and
    /// why (they stay untrusted): each is read as the loaders read it
    /// ([`read_project_file`]), so a FIFO or a link to `/dev/zero` is
    /// skipped instead of hanging or filling the memory.
    pub fn trust_files(&self, root: &Path) -> std::io::Result<Trusted> {
        let mut files = BTreeMap::new();
        let mut skipped = Vec::new();
        for relative in project_files(root) {
            match read_project_file(root, &relative) {
                Ok(Some(bytes)) => {
                    files.insert(relative, fingerprint(&bytes));
                }
                Ok(None) => {}
                Err(refusal) => skipped.push((relative, refusal.to_string())),
            }
        }
        let trusted: Vec<String> = files.keys().cloned().collect();
        self.update(|folders| {
            folders.insert(folder_key(root), TrustRecord { trusted_at: now(), files });
        })?;
        Ok(Trusted { files: trusted, skipped })
    }

    /// Forget `root`; whether it was trusted.
    pub fn revoke(&self, root: &Path) -> std::io::Result<bool> {
        let mut was = false;
        self.update(|folders| was = folders.remove(&folder_key(root)).is_some())?;
        Ok(was)
    }

    /// Tandem wrote `after` to the project file `relative` for the user
    /// (the rules of "Always allow, saved"), over `before` (`None`: there
    /// was no file). The new content is trusted when the old one was (or
    /// there was none: every byte is then Tandem's), so the user's own
    /// answer does not cost them the folder's trust; an untrusted file
    /// stays untrusted.
    pub fn keep_written(&self, root: &Path, relative: &str, before: Option<&[u8]>, after: &[u8]) -> std::io::Result<()> {
        let key = folder_key(root);
        self.update(|folders| {
            let trusted_before = match (before, folders.get(&key)) {
                (None, _) => true,
                (Some(bytes), Some(record)) => record.files.get(relative).is_some_and(|f| *f == fingerprint(bytes)),
                (Some(_), None) => false,
            };
            if trusted_before {
                let record = folders.entry(key.clone()).or_default();
                record.files.insert(relative.to_string(), fingerprint(after));
            }
        })
    }

    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, TrustRecord>)) -> std::io::Result<()> {
        let _guard = WRITE_LOCK.locked();
        let mut file = self.read();
        change(&mut file.folders);
        crate::json_file::write_store(&self.path, &file)
    }

    /// The store's content; a missing, oversized or broken store trusts
    /// nothing (fail closed), with a log line.
    fn read(&self) -> StoreFile {
        crate::json_file::read_store(&self.path, MAX_STORE_BYTES, "trust store")
    }
}

fn folder_key(root: &Path) -> String {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf()).display().to_string()
}

fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_folder_and_per_content_and_lapses_when_a_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("data/trust.json"));
        let source = TrustSource::At(store.path().to_path_buf());
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for root in [&a, &b] {
            std::fs::create_dir_all(root.join(".tandem")).unwrap();
            std::fs::write(root.join(".tandem/settings.json"), "{\"model\": \"m\"}").unwrap();
        }
        let settings = |root: &Path| std::fs::read(root.join(".tandem/settings.json")).unwrap();
        assert_eq!(source.trust(&a).file(".tandem/settings.json", &settings(&a)), FileTrust::NotTrusted);
        assert_eq!(store.trust(&a).unwrap(), vec![".tandem/settings.json".to_string()]);
        assert!(source.trust(&a).trusts(".tandem/settings.json", &settings(&a)));
        assert!(!source.trust(&b).trusts(".tandem/settings.json", &settings(&b)), "another folder");
        // A file added after the folder was trusted is not trusted.
        assert_eq!(source.trust(&a).file(".mcp.json", b"{}"), FileTrust::NotTrusted);
        std::fs::write(a.join(".tandem/settings.json"), "{\"model\": \"other\"}").unwrap();
        assert_eq!(source.trust(&a).file(".tandem/settings.json", &settings(&a)), FileTrust::Changed);
        assert!(store.revoke(&a).unwrap());
        assert!(!source.trust(&a).was_trusted());
        std::fs::write(store.path(), "{broken").unwrap();
        assert!(!source.trust(&a).was_trusted(), "a broken store trusts nothing");
    }

    /// Issue 49: `tandem trust` read the folder's files unguarded, so a
    /// FIFO `.mcp.json` hung it and a settings link to `/dev/zero` filled
    /// the memory. Each is skipped, said, and left untrusted.
    #[cfg(unix)]
    #[test]
    fn trusting_reads_files_as_the_loaders_do_and_says_what_it_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("data/trust.json"));
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(root.join(".tandem/agents")).unwrap();
        std::fs::write(root.join(".tandem/settings.json"), "{}").unwrap();
        let fifo = std::ffi::CString::new(root.join(".mcp.json").display().to_string()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        crate::platform::symlink("/dev/zero", root.join(".tandem/settings.local.json")).unwrap();
        std::fs::write(dir.path().join("outside.md"), "---\nmodel: opus\n---\nTheirs.").unwrap();
        crate::platform::symlink(dir.path().join("outside.md"), root.join(".tandem/agents/out.md")).unwrap();
        let trusted = store.trust_files(&root).unwrap();
        assert_eq!(trusted.files, [".tandem/settings.json"]);
        let skipped: Vec<String> = trusted.skipped.iter().map(|(file, why)| format!("{file}: {}", why.split(',').next().unwrap())).collect();
        expect_test::expect![[r#"
            [
                ".tandem/settings.local.json: it is a symlink to /dev/zero",
                ".mcp.json: it is not a regular file (a FIFO)",
                ".tandem/agents/out.md: it is a symlink to BASE/outside.md",
            ]
        "#]]
        .assert_debug_eq(&skipped.iter().map(|s| s.replace(&dir.path().canonicalize().unwrap().display().to_string(), "BASE")).collect::<Vec<_>>());
    }

    #[test]
    fn what_tandem_writes_for_the_user_keeps_the_trust_the_file_had() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::at(dir.path().join("trust.json"));
        let source = TrustSource::At(store.path().to_path_buf());
        let root = dir.path().join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let local = ".tandem/settings.local.json";
        // No file before: every byte is Tandem's.
        store.keep_written(&root, local, None, b"{\"permissions\": {\"allow\": [\"x\"]}}").unwrap();
        assert!(source.trust(&root).trusts(local, b"{\"permissions\": {\"allow\": [\"x\"]}}"));
        // Trusted before: trusted after.
        store.keep_written(&root, local, Some(b"{\"permissions\": {\"allow\": [\"x\"]}}"), b"{\"y\": 1}").unwrap();
        assert!(source.trust(&root).trusts(local, b"{\"y\": 1}"));
        // A file that came with the folder, untrusted, stays untrusted.
        store.keep_written(&root, local, Some(b"{\"permissionMode\": \"bypassPermissions\"}"), b"{\"z\": 1}").unwrap();
        assert!(!source.trust(&root).trusts(local, b"{\"z\": 1}"));
    }
}
