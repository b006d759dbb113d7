//! What the user approved, per workspace: project MCP servers and project
//! hooks (anything a cloned repository would run on the user's machine).
//! A fingerprint is the approved entry as compact JSON text with its keys
//! sorted ([`fingerprint_of`]), so the same entry always gives the same
//! fingerprint, in whatever order its file wrote the keys. Kept outside
//! the project, in `$XDG_DATA_HOME/tandem/consent.json`, so a project cannot
//! approve itself. Each approval remembers the fingerprint of what was
//! approved (the config entry as written): when the entry changes, it must
//! be approved again.
//!
//! ```json
//! {"workspaces": {"/abs/root": {"mcp": {"github": "{\"command\":\"…\"}"}}}}
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use crate::sync::MutexExt;

use serde::{Deserialize, Serialize};

/// The kind for a project's hooks (one entry, named [`PROJECT`]).
pub const HOOKS: &str = "hooks";
/// The one name a project's hooks are approved under.
pub const PROJECT: &str = "project";
/// The kind for project MCP servers (by server name).
pub const MCP: &str = "mcp";

/// The consent fingerprint of a config entry: compact JSON, object keys
/// sorted at every depth. (Not `Value::to_string`: with serde_json's
/// `preserve_order`, which the ACP crates turn on, that keeps the file's
/// key order.)
pub fn fingerprint_of(value: &serde_json::Value) -> String {
    fn sorted(value: &serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<(&String, &serde_json::Value)> = map.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
            }
            serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// The store is refused past this size (it only grows by user approvals).
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// Serialises read-modify-write of the file within this process.
static WRITE_LOCK: Mutex<()> = Mutex::new(());

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    workspaces: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
}

/// Which of a project's programs (MCP servers, language servers) the user
/// approved: those remembered in the store, and those the command line
/// names for this process (`--mcp-approve`/`--lsp-approve NAME|all`, which
/// are remembered too).
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    /// Where approvals are remembered (`None`: nothing is remembered).
    pub store: Option<ConsentStore>,
    pub command_line: Vec<String>,
}

impl Approvals {
    /// The user's store, plus the command line's approvals.
    pub fn from_command_line(names: Vec<String>) -> Self {
        Approvals { store: ConsentStore::for_user(), command_line: names }
    }

    /// Does the command line approve the program `name` (by name or `all`)?
    pub fn on_command_line(&self, name: &str) -> bool {
        self.command_line.iter().any(|n| n == "all" || n == name)
    }
}

/// Approvals, per workspace, per kind (`"mcp"`, `"hooks"`), per name.
#[derive(Debug, Clone)]
pub struct ConsentStore {
    path: PathBuf,
}

impl ConsentStore {
    /// The store in the user's data folder (`None` when there is none).
    pub fn for_user() -> Option<Self> {
        dirs::data_dir().map(|dir| ConsentStore { path: dir.join("tandem").join("consent.json") })
    }

    pub fn at(path: impl Into<PathBuf>) -> Self {
        ConsentStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when `name` of `kind` was approved for this workspace with this fingerprint.
    pub fn is_approved(&self, workspace: &Path, kind: &str, name: &str, fingerprint: &str) -> bool {
        let file = self.read();
        file.workspaces
            .get(&workspace_key(workspace))
            .and_then(|kinds| kinds.get(kind))
            .and_then(|names| names.get(name))
            .is_some_and(|approved| approved == fingerprint)
    }

    /// Remember an approval.
    pub fn approve(&self, workspace: &Path, kind: &str, name: &str, fingerprint: &str) -> std::io::Result<()> {
        let _guard = WRITE_LOCK.locked();
        let mut file = self.read();
        file.workspaces
            .entry(workspace_key(workspace))
            .or_default()
            .entry(kind.to_string())
            .or_default()
            .insert(name.to_string(), fingerprint.to_string());
        crate::json_file::write_store(&self.path, &file)
    }

    /// The file's content; a missing, oversized or broken file reads as no
    /// approvals (fail closed), with a log line.
    fn read(&self) -> StoreFile {
        crate::json_file::read_store(&self.path, MAX_STORE_BYTES, "consent store")
    }
}

fn workspace_key(workspace: &Path) -> String {
    workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf()).display().to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn approvals_are_per_workspace_kind_name_and_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConsentStore::at(dir.path().join("nested/consent.json"));
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        assert!(!store.is_approved(&a, "mcp", "gh", "v1"));
        let written: serde_json::Value = serde_json::from_str(r#"{"command":"x","args":["-y"],"env":{"B":"1","A":"2"}}"#).unwrap();
        assert_eq!(fingerprint_of(&written), r#"{"args":["-y"],"command":"x","env":{"A":"2","B":"1"}}"#, "keys sorted, as approvals were stored");
        store.approve(&a, "mcp", "gh", "v1").unwrap();
        assert!(store.is_approved(&a, "mcp", "gh", "v1"));
        assert!(!store.is_approved(&a, "mcp", "gh", "v2"), "a changed entry needs a new approval");
        assert!(!store.is_approved(&b, "mcp", "gh", "v1"), "another workspace");
        assert!(!store.is_approved(&a, "hooks", "gh", "v1"), "another kind");
        store.approve(&a, "hooks", "pre", "x").unwrap();
        assert!(store.is_approved(&a, "mcp", "gh", "v1") && store.is_approved(&a, "hooks", "pre", "x"));
        std::fs::write(store.path(), "{broken").unwrap();
        assert!(!store.is_approved(&a, "mcp", "gh", "v1"), "a broken store approves nothing");
    }
}
